"""Issue 39, fliers in the chase (the flypilot lane): a ground quarry weighs a flying pursuer
by where it can end a move (its flight reach), not by its walking pace; the flying pursuer
that goes for the quarry plans two turns ahead (where the quarry must come out); a flying
quarry's exit is one it reaches safely all along its way."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import tmxtext

from engine.batch import run_seeds
from engine.flight.model import FlightState
from engine.grid import Grid
from engine.policies import Aim
from engine.policies.builtin import Pursuer, surest_exit
from engine.scenario import load_scenario
from engine.sim import FieldCache, Simulation
from engine.sim.flight import _best_move, _escapes
from engine.sim.flymoves import _moves, caught_next, reach_turns
from engine.sim.view import SimView, least_turns, threat_turns

ROOT = Path(__file__).resolve().parent.parent
FALCON = "{running: 2, airspeed: 5, acrobatics: 6, agility: 3, toughness: 4, stamina: 12}"

FIELD = f"""map: m.tmx
system: speedpoints
seed: 3
turns: 12
goals: {{capture: 0, capture_altitude: 0}}
tokens:
  - {{id: runner, side: quarry, policy: quarry, cell: [20, 8], stats: {{running: 3}}}}
  - {{id: dog, side: pursuer, policy: pursuer, target: runner, cell: [2, 2], stats: {{running: 3}}}}
  - {{id: falcon, side: pursuer, policy: pursuer, target: runner, cell: [22, 14],
      stats: {FALCON}, flight: {{heading: 90, speed: 5, altitude: 0}}}}
"""


def _field(tmp_path: Path) -> Simulation:
    rows = ["." * 30 for _ in range(16)]
    tmxtext.write(tmp_path / "m.tmx", rows, objects=tmxtext.exit_objects([(29, 8)]))
    (tmp_path / "s.yaml").write_text(FIELD, encoding="utf-8")
    return Simulation(load_scenario(tmp_path / "s.yaml"), 1, record=True)


def test_a_ground_quarry_weighs_a_flier_by_where_it_can_end_a_move(tmp_path: Path) -> None:
    """The pursuers' turns a walking quarry weighs are, cell by cell, the least of the
    walkers' fields and each flier's reach (1 where it ends a move this turn), not the
    flier's walking field; and by them the exit the runner reaches first on the falcon's
    walking pace is no safe exit."""
    sim = _field(tmp_path)
    falcon = sim.tokens["falcon"]
    rules = sim.flight_rules(falcon)
    assert rules is not None and falcon.state.flight is not None
    reach = reach_turns(rules, falcon.state.flight, sim.scenario.capture_altitude)
    walkers = least_turns(sim, ("dog",))
    got = threat_turns(sim)
    assert np.array_equal(got, np.minimum(walkers, reach))
    assert threat_turns(sim) is got  # the same arrays: the same object (kept choices found)
    by_walking = least_turns(sim, ("dog", "falcon"))
    assert not np.array_equal(got, by_walking)
    view = SimView(sim, "runner", sim.tokens["runner"])
    mine = view.times_from("runner")
    exit_ = view.grid.index((29, 8))
    assert mine[exit_] < by_walking[exit_]  # on the falcon's walking pace: safe
    assert view.quarry_goal("runner") is None  # by its flight: no exit is safe
    assert sim.fields.safest_exit(mine, by_walking) == (29, 8)


def test_a_flying_quarrys_exit_is_reached_safely_all_along() -> None:
    """An exit the quarry reaches before every pursuer, but only through a cell a pursuer
    reaches first, is no way out once the quarry's cell is given (as a walking quarry's);
    an exit with a safe way is taken."""
    grid = Grid("orthogonal", 5, 2, 32, 32)
    view = SimpleNamespace(grid=grid, exits=frozenset({(4, 0)}))
    mine = np.array([0.0, 1.0, 2.0, 3.0, 4.0, 1.0, 1.0, 2.0, 3.0, 4.0])
    threat = np.array([9.0, 9.0, 1.0, 9.0, 9.0, 1.0, 1.0, 1.0, 1.0, 9.0])
    assert surest_exit(view, mine, threat) == (4, 0)  # type: ignore[arg-type]
    assert surest_exit(view, mine, threat, (0, 0)) is None  # type: ignore[arg-type]
    opened = threat.copy()
    opened[7] = 9.0  # a way round the pursuers' cell: (1,0) -> (2,1) -> (3,0)
    assert surest_exit(view, mine, opened, (0, 0)) == (4, 0)  # type: ignore[arg-type]


def _griffon() -> tuple[object, FlightState, Grid]:
    sc = load_scenario(ROOT / "scenarios" / "griffon.yaml")
    system = sc.system
    rules = system.flight(system.token("adaptability=9,physical=20,flyer=true"), sc.model)
    assert rules is not None
    return rules, rules.start_state((14, 12), 240, 8), sc.model.grid


def test_the_pilot_corners_the_quarry_two_turns_ahead() -> None:
    """Where one of this turn's moves leaves the flier able to end its next move on every
    cell the quarry gets to in a turn, the pilot takes such a move, though the bound alone
    would take another; the plain pilot (no cells of the quarry's) does not."""
    rules, state, grid = _griffon()
    moves = list(_moves(rules, state, exact=False, target=None))
    plain_aim_checked = 0
    for m in moves[::5]:
        after = FlightState(m.cell, m.heading, m.speed, m.altitude, False, m.face)
        caught = caught_next(rules, after, 0, 0)
        here = [i for i in np.flatnonzero(caught).tolist()]
        # The quarry: on one cell this move's next turn reaches, able to get to two more.
        cells = here[:3]
        corner = np.full(grid.width * grid.height, np.inf)
        corner[cells] = [0.0, 1.0, 1.0][: len(cells)]
        catch = grid.cell_of_index(cells[0])
        if reach_turns(rules, state, 0)[cells[0]] <= 1:
            continue  # caught this turn: no plan needed
        aim = Aim(catch, catch, 0, corner=corner)
        got = _best_move(rules, state, aim, grid, 0)
        chosen = next(x for x in _moves(rules, state, exact=False, target=catch) if x.choice == got)
        left, stays = _escapes(rules, chosen, np.array(cells), cells[0], 0, 0)
        assert left == 0 and stays, (m.cell, catch)
        plain = _best_move(rules, state, Aim(catch, catch, 0), grid, 0)
        plain_aim_checked += plain != got
    assert plain_aim_checked > 0


class Plain(Pursuer):
    """The flying pursuer without the two-turn plan (the bound's order alone)."""

    name = "plain_flier_pilot"

    def aim(self, view, spec, token, state):  # type: ignore[no-untyped-def]
        got = super().aim(view, spec, token, state)
        if got is not None:
            got.corner = None
        return got


def _outcomes(policy: str, runs: int = 40) -> Counter[tuple[str, int]]:
    sc = load_scenario(ROOT / "scenarios" / "griffon.yaml", overrides={"griffon.policy": policy})
    fields = FieldCache(sc)
    got: Counter[tuple[str, int]] = Counter()
    for run, seed in enumerate(run_seeds(sc.seed, runs)):
        sim = Simulation(sc, seed, fields=fields, run=run, record=False)
        got[(sim.run().outcome, sim.turn)] += 1
    return got


def test_the_two_turn_plan_catches_the_swimmer_more_often_and_sooner() -> None:
    """The shipped griffon on the swimmer in the lake: planning two turns ahead it catches
    in more of the same 40 runs, and no later, than steering by the bound alone."""
    planned = _outcomes("pursuer")
    plain = _outcomes("plain_flier_pilot")
    caught = sum(k for (o, _), k in planned.items() if o == "capture")
    caught_plain = sum(k for (o, _), k in plain.items() if o == "capture")
    assert caught > caught_plain, (planned, plain)
    first = min(t for (o, t) in planned if o == "capture")
    assert all(t >= first for (o, t) in plain if o == "capture"), (planned, plain)


def test_the_kept_lookups_equal_the_plain_way() -> None:
    """Over 12 runs of the shipped griffon and flier chases, turn by turn: the threat a
    ground quarry weighs (kept by the pursuers' tokens) equals the least of the walkers'
    fields and each flier's reach worked out afresh; a flier's rules (kept by its stats
    mapping) are the ones kept by its stats' values; the pilot's digest of the quarry's
    cells (kept by its turns array) is that of the cells worked out afresh."""
    from hashlib import blake2b

    from engine.sim.flight import _BY_STATS, rules_for
    from engine.sim.flyreach import corner_digest as _corner_digest

    checked = 0
    for name in ("griffon", "flier"):
        sc = load_scenario(ROOT / "scenarios" / f"{name}.yaml")
        fields = FieldCache(sc)
        for run, seed in enumerate(run_seeds(sc.seed, 8)):
            sim = Simulation(sc, seed, fields=fields, run=run, record=False)
            while sim.outcome is None and sim.turn <= 8:
                tokens = sim.tokens
                fliers = [p for p in sim.pursuers if tokens[p].state.flight is not None]
                walkers = tuple(p for p in sim.pursuers if p not in fliers)
                plain = least_turns(sim, walkers)
                for p in fliers:
                    tok = tokens[p]
                    key = tuple(sorted((k, str(v)) for k, v in tok.stats.items()))
                    rules = rules_for(fields.flight, sc.system, sc.model, tok)
                    assert rules is fields.flight[key]
                    assert _BY_STATS in fields.flight
                    assert tok.state.flight is not None
                    reach = reach_turns(rules, tok.state.flight, sc.capture_altitude)
                    plain = np.minimum(plain, reach)
                    for q in sim.quarries:
                        turns = sim.profile_now(q).turns_from(tokens[q].state.cell)
                        cells = np.flatnonzero(turns <= 1.0 + 1e-9).astype(np.int64)
                        want = blake2b(cells.tobytes(), digest_size=16).digest()
                        assert _corner_digest(rules, turns) == want
                assert np.array_equal(threat_turns(sim), plain)
                checked += 1
                sim.play_turn()
    assert checked > 40
