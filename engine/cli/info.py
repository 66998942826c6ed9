"""`tacgrid info`: what a map (or a Tiled world) is."""

from __future__ import annotations

import argparse
import os

from engine.cli.common import _map, _Parser, _print_json, load_bare_map, say
from engine.errors import ArgumentError


def _add_info(sub: argparse._SubParsersAction[_Parser]) -> None:
    s = sub.add_parser("info", help="what a map is")
    s.add_argument(
        "map", type=_map, help="a Tiled map (.tmx, .tmj, WORLD.world#NAME) or a shipped map's name"
    )
    s.add_argument(
        "--set",
        action="append",
        metavar="KEY=VALUE",
        help="edit the map as read: terrain.NAME.PROP, region.NAME.PROP, map.collision",
    )
    s.add_argument("--json", action="store_true", help="print one JSON document")
    s.set_defaults(func=cmd_info)


def cmd_info(args: argparse.Namespace) -> int:
    from engine.report.mapinfo import format_info, info_report
    from engine.tiled.world import is_world

    if is_world(args.map):  # a bare WORLD.world: its maps (WORLD.world#NAME loads one)
        return _world_info(args)
    model, settings = load_bare_map(args.map, args.set)
    if settings:
        raise ArgumentError(
            f"--set {next(iter(settings))}: info reads the map, not a rule system's settings; "
            "give terrain.NAME.PROP, region.NAME.PROP or map.collision"
        )
    rep = info_report(args.map, model)
    if args.json:
        _print_json(rep)
    else:
        say(format_info(rep))
    return 0


def _world_info(args: argparse.Namespace) -> int:
    """`tacgrid info WORLD.world`: the world's maps, each by the name that picks it."""
    from engine.tiled import read_world

    maps = read_world(args.map)
    rep = {
        "path": args.map,
        "world": True,
        "maps": [
            {
                "name": m.name,
                "file": m.file,
                "x": m.x,
                "y": m.y,
                "width": m.width,
                "height": m.height,
            }
            for m in maps
        ],
    }
    if args.json:
        _print_json(rep)
        return 0
    say(f"{args.map}: Tiled world, {len(maps)} maps (load one as {args.map}#NAME)")
    for m in maps:
        say(f"  {m.name:<24} at {m.x},{m.y} px  {os.path.relpath(m.file)}")
    return 0
