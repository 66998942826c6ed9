"""`tacgrid systems`, `stats`, `odds` and `roll`: the rule systems, a token's figures, and
checks (no map)."""

from __future__ import annotations

import argparse
import os

from engine.cli.common import (
    _distance,
    _Parser,
    _print_json,
    _seed,
    _system_args,
    make_system,
    say,
)


def _add_systems(sub: argparse._SubParsersAction[_Parser]) -> None:
    s = sub.add_parser("systems", help="rule systems, their stats and settings")
    s.add_argument("--json", action="store_true", help="print one JSON document")
    s.set_defaults(func=cmd_systems)


def cmd_systems(args: argparse.Namespace) -> int:
    from engine.report.systems import format_systems, systems_report

    rep = systems_report()
    if args.json:
        _print_json(rep)
    else:
        say(format_systems(rep))
    return 0


def _add_stats(sub: argparse._SubParsersAction[_Parser]) -> None:
    s = sub.add_parser("stats", help="a token's derived movement figures")
    _system_args(s)
    s.add_argument(
        "--distance",
        type=_distance,
        default=None,
        metavar="METRES",
        help="long-distance plan over this distance (systems with long-distance rules)",
    )
    s.add_argument(
        "--terrain",
        default=None,
        metavar="DIFFICULTY",
        help="with --distance: the ground's difficulty; its movement check is rolled on the "
        "stamina schedule (D6 long marches: every 3 hours, 2 forced)",
    )
    s.set_defaults(func=cmd_stats)


def cmd_stats(args: argparse.Namespace) -> int:
    from engine.report.systems import format_stats, stats_report

    system = make_system(args.system, args.set)
    token = system.token(args.token or "")
    rep = stats_report(system, token, args.distance, terrain=args.terrain)
    if args.json:
        _print_json(rep)
    else:
        say(format_stats(rep))
    return 0


def _add_odds(sub: argparse._SubParsersAction[_Parser]) -> None:
    s = sub.add_parser("odds", help="exact chances of a check")
    s.add_argument("--system", required=True, help="rule system (see `tacgrid systems`)")
    s.add_argument("check", nargs="+", help="e.g. athletics=2 dc=6 bonus=1")
    s.add_argument("--json", action="store_true", help="print one JSON document")
    s.set_defaults(func=cmd_odds)


def cmd_odds(args: argparse.Namespace) -> int:
    from engine.report.dice import format_odds, odds_report

    rep = odds_report(args.system, " ".join(args.check))
    if args.json:
        _print_json(rep)
    else:
        say(format_odds(rep))
    return 0


def _add_roll(sub: argparse._SubParsersAction[_Parser]) -> None:
    s = sub.add_parser("roll", help="one seeded roll of a check")
    s.add_argument("--system", required=True, help="rule system (see `tacgrid systems`)")
    s.add_argument("check", nargs="+", help="e.g. dice=3D+1 dn=13")
    s.add_argument("--seed", type=_seed, default=None, help="seed (default: drawn and reported)")
    s.add_argument("--json", action="store_true", help="print one JSON document")
    s.set_defaults(func=cmd_roll)


def cmd_roll(args: argparse.Namespace) -> int:
    from engine.report.dice import format_roll, roll_report

    # No --seed: draw one, and report it, so the roll can still be reproduced.
    seed = args.seed if args.seed is not None else int.from_bytes(os.urandom(4), "little")
    rep = roll_report(args.system, " ".join(args.check), seed)
    if args.json:
        _print_json(rep)
    else:
        say(format_roll(rep))
    return 0
