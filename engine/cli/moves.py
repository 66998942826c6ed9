"""`tacgrid path`, `reach` and `fly`: a token's movement on a map."""

from __future__ import annotations

import argparse
from typing import Any

from engine.cli.common import (
    _map,
    _Parser,
    _positive,
    _print_json,
    _probability,
    _size,
    _system_args,
    _whole,
    load_bare_map,
    say,
)
from engine.errors import ArgumentError


def _load_for_search(args: argparse.Namespace) -> tuple[Any, Any, Any]:
    from engine import systems

    model, settings = load_bare_map(args.map, args.set)
    name = args.system or model.system
    if not name:
        raise ArgumentError(
            f"{args.map}: the map names no rule system; give --system (see `tacgrid systems`)"
        )
    system = systems.create(name, settings)
    token = system.token(args.token or "")
    return model, system, token


def _add_path(sub: argparse._SubParsersAction[_Parser]) -> None:
    s = sub.add_parser("path", help="best path between two cells")
    s.add_argument(
        "map", type=_map, help="a Tiled map (.tmx, .tmj, WORLD.world#NAME) or a shipped map's name"
    )
    _system_args(s, required=False)
    s.add_argument("--from", dest="start", required=True, metavar="C,R", help="start cell")
    s.add_argument("--to", dest="goal", required=True, metavar="C,R", help="goal cell")
    s.add_argument(
        "--via",
        action="append",
        default=[],
        metavar="C,R",
        help="a cell to pass through on the way (repeatable, in order): one plan through them",
    )
    s.add_argument("--pace", default=None, help="the system's pace (default: its default)")
    s.add_argument("--prefer", default="fast", choices=("fast", "safe"), help="quickest or safest")
    s.add_argument(
        "--safe-below",
        type=_probability,
        default=None,
        metavar="P",
        help="the quickest path unless its p(no failure) is below P, then the safest",
    )
    s.add_argument("--size", type=_size, default=1, help="token size in cells across (default 1)")
    _act_arg(s)
    _engine_arg(s)
    s.set_defaults(func=cmd_path)


def _act_arg(s: argparse.ArgumentParser) -> None:
    s.add_argument(
        "--act",
        dest="acts",
        action="append",
        default=[],
        metavar="NAME",
        help="an action the token also takes each turn (repeatable; `tacgrid systems` lists "
        "each system's acts): the move is priced with what it costs",
    )


def _engine_arg(s: argparse.ArgumentParser) -> None:
    s.add_argument(
        "--engine",
        default="compiled",
        choices=("compiled", "networkx"),
        help="tacgrid's own search (default) or networkx's Dijkstra on the same graph",
    )


def _query(args: argparse.Namespace, model: Any, system: Any, token: Any) -> Any:
    """The query front (engine.query) for the command's token, ``--size`` and engine."""
    from engine.query import Query

    return Query(
        model, system, token, pace=args.pace, size=args.size, engine=args.engine, acts=args.acts
    )


def cmd_path(args: argparse.Namespace) -> int:
    from engine.report.movement import format_path, no_path_report, path_json
    from engine.search import NoPath, parse_cell

    model, system, token = _load_for_search(args)
    start, goal = parse_cell(args.start, "start"), parse_cell(args.goal, "goal")
    via = [parse_cell(v, "via") for v in args.via]
    query = _query(args, model, system, token)
    try:
        rep = query.path(start, goal, prefer=args.prefer, safe_below=args.safe_below, via=via)
    except NoPath as exc:
        if args.json:
            _print_json(no_path_report(system, str(exc)))
        else:
            say(f"no path: {exc}")
        return 1
    del query  # its movement graphs (a maze's hundreds of MB) are not needed to print
    if args.json:
        _print_json(path_json(rep, streamed=True))
    else:
        say(format_path(rep, model, system, start, goal))
    return 0


def _add_reach(sub: argparse._SubParsersAction[_Parser]) -> None:
    s = sub.add_parser("reach", help="cells reachable from a cell")
    s.add_argument(
        "map", type=_map, help="a Tiled map (.tmx, .tmj, WORLD.world#NAME) or a shipped map's name"
    )
    _system_args(s, required=False)
    s.add_argument("--from", dest="start", required=True, metavar="C,R", help="start cell")
    s.add_argument("--turns", type=_positive, default=1, help="turns of movement (default 1)")
    s.add_argument(
        "--pace",
        default=None,
        help="pace (default: the system's default, as `path`); a faster one bands the slower",
    )
    s.add_argument("--size", type=_size, default=1, help="token size in cells across (default 1)")
    _act_arg(s)
    _engine_arg(s)
    s.set_defaults(func=cmd_reach)


def cmd_reach(args: argparse.Namespace) -> int:
    from engine.report.movement import format_reach, reach_json
    from engine.search import parse_cell

    model, system, token = _load_for_search(args)
    start = parse_cell(args.start, "start")
    rep = _query(args, model, system, token).reach(start, turns=args.turns, pace=args.pace)
    if args.json:
        _print_json(reach_json(rep))
    else:
        say(format_reach(rep, model, system, start, args.turns, rep.pace))
    return 0


def _add_fly(sub: argparse._SubParsersAction[_Parser]) -> None:
    s = sub.add_parser("fly", help="flight plan: fewest turns to a cell (or a landing)")
    s.add_argument(
        "map", type=_map, help="a Tiled map (.tmx, .tmj, WORLD.world#NAME) or a shipped map's name"
    )
    _system_args(s, required=False)
    s.add_argument("--from", dest="start", required=True, metavar="C,R", help="start cell")
    s.add_argument("--heading", type=_whole, default=0, help="degrees clockwise from up")
    s.add_argument("--speed", type=_whole, default=0, help="cells a turn (0: on the ground)")
    s.add_argument("--to", dest="goal", required=True, metavar="C,R", help="goal cell")
    s.add_argument("--land", action="store_true", help="end the move there and land safely")
    s.add_argument("--end-heading", type=_whole, default=None, help="arrive with this heading")
    s.add_argument("--altitude", type=_whole, default=0, help="start altitude in m (Speedpoints)")
    s.add_argument(
        "--ground-pace",
        default=None,
        metavar="PACE",
        help="on the ground after a turn at this pace: take off at its rate (Mythmaster)",
    )
    s.set_defaults(func=cmd_fly)


def cmd_fly(args: argparse.Namespace) -> int:
    from engine.report.flight import fly_report, format_fly, no_plan_report
    from engine.search import NoPath, parse_cell

    model, system, token = _load_for_search(args)
    start, goal = parse_cell(args.start, "start"), parse_cell(args.goal, "goal")
    try:
        rep = fly_report(
            model,
            system,
            token,
            start,
            args.heading,
            args.speed,
            goal,
            args.land,
            altitude=args.altitude,
            goal_heading=args.end_heading,
            ground_pace=args.ground_pace,
        )
    except NoPath as exc:
        if args.json:
            _print_json(no_plan_report(system, str(exc)))
        else:
            say(f"no flight plan: {exc}")
        return 1
    if args.json:
        _print_json(rep)
    else:
        say(format_fly(rep, model))
    return 0
