"""`tacgrid solve`: the exact value of a one-on-one chase under perfect play (engine.solve)."""

from __future__ import annotations

import argparse

from engine.cli.common import _Parser, _positive, _print_json, _scenario, parse_sets, say


def _add_solve(sub: argparse._SubParsersAction[_Parser]) -> None:
    s = sub.add_parser(
        "solve", help="the outcome and round of a one-on-one chase played perfectly by both"
    )
    s.add_argument("scenario", type=_scenario, help="a scenario .yaml or a shipped scenario's name")
    s.add_argument(
        "--max-states",
        type=_positive,
        default=None,
        help="refuse a game of more states (pursuer cells x quarry cells x turns; "
        "default 100,000,000)",
    )
    s.add_argument("--set", action="append", metavar="KEY=VALUE", help="change a rule setting")
    s.add_argument("--json", action="store_true", help="print one JSON document")
    s.set_defaults(func=cmd_solve)


def cmd_solve(args: argparse.Namespace) -> int:
    from engine.scenario import load_scenario
    from engine.sim import Simulation
    from engine.sim.view import solve_run

    scenario = load_scenario(args.scenario, overrides=parse_sets(args.set))
    run = Simulation(scenario, seed=scenario.seed, record=False)
    solution = solve_run(run, args.max_states)
    doc = solution.to_dict()
    if args.json:
        _print_json(doc)
        return 0
    game = solution.game
    outcome, turns = doc["outcome"], doc["turns"]
    if doc["dice"]:
        p = doc["p"]
        say(
            f"{scenario.name}: with dice, played perfectly by both: P(capture) "
            f"{p['capture']:.6g}, P(escape) {p['escape']:.6g}, P(timeout) {p['timeout']:.6g}; "
            f"the run ends in round {turns:.6g} on average"
        )
        say(
            f"  {doc['states']:,} states solved ({int(game.stand_p.sum())} pursuer cells x "
            f"{int(game.stand_q.sum())} quarry cells x {game.turns} turns), the checks' "
            "exact odds, values in float64"
        )
        return 0
    how = {
        "capture": f"{game.pursuer.tid} catches {game.quarry.tid} in round {turns}",
        "escape": f"{game.quarry.tid} escapes in round {turns}",
        "timeout": f"neither side can force its goal within {turns} rounds",
    }[outcome]
    say(f"{scenario.name}: {outcome} under perfect play: {how}")
    say(
        f"  {doc['states']:,} states solved ({int(game.stand_p.sum())} pursuer cells x "
        f"{int(game.stand_q.sum())} quarry cells x {game.turns} turns), no dice, exact"
    )
    return 0
