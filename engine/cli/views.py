"""`tacgrid replay`, `view` and `render`: the window and the PNG renders."""

from __future__ import annotations

import argparse
from typing import Any

from engine.cli.common import (
    _check_writable,
    _Parser,
    _positive,
    _print_json,
    _probability,
    _source,
    parse_sets,
    say,
    tell,
)
from engine.errors import ArgumentError


def read_event_log(path: str, *, viewer: bool = False) -> list[dict[str, Any]]:
    """An event log, checked so that replaying it cannot fail half-way
    (:func:`engine.eventlog.read_log`)."""
    from engine.eventlog import read_log

    return read_log(path, viewer=viewer)


def _note(text: str) -> None:
    """A note of the map's drawing (a picture left out): one escaped line on stderr."""
    tell(text, "tacgrid: note: ")


def _add_replay(sub: argparse._SubParsersAction[_Parser]) -> None:
    s = sub.add_parser("replay", help="step through a recorded run")
    s.add_argument("log", help="an event log (tacgrid run SCENARIO --run-seed N --log FILE)")
    s.add_argument("--text", action="store_true", help="print it turn by turn instead of a window")
    s.add_argument("--json", action="store_true", help="print one JSON document")
    s.add_argument("--frames", type=_positive, default=None, help="draw N frames and exit")
    s.add_argument("--screenshot", default=None, help="with --frames: save the window here")
    s.add_argument(
        "--force",
        action="store_true",
        help="replay even if the scenario or map changed since the log was written",
    )
    s.set_defaults(func=cmd_replay)


def cmd_replay(args: argparse.Namespace) -> int:
    from engine.eventlog import check_log_sources
    from engine.report.replay import format_replay, replay_report

    window = not args.text and not args.json
    events = read_event_log(args.log, viewer=window)
    if window:
        _check_writable(args.screenshot, "--screenshot", ".png")
    scenario, warnings = check_log_sources(events, args.log, force=args.force, need_scenario=window)
    for line in warnings:
        tell(line)
    if window:
        from engine.viewer.replay import replay as view_replay

        return int(
            view_replay(args.log, frames=args.frames, screenshot=args.screenshot, scenario=scenario)
        )
    if scenario is not None:  # tokens off its map: one line, as the window says it
        from engine.eventlog import check_log_cells, log_map_size

        check_log_cells(events, args.log, log_map_size(scenario))
    if args.json:
        _print_json(replay_report(events))
    else:
        say(format_replay(events))
    return 0


def _add_view(sub: argparse._SubParsersAction[_Parser]) -> None:
    s = sub.add_parser("view", help="the GM viewer (a map or a scenario)")
    s.add_argument(
        "source",
        nargs="?",
        default=None,
        type=_source,
        help="a Tiled map (.tmx, .tmj, WORLD.world#NAME), a scenario .yaml, a saved "
        "session (.tacgrid: Ctrl+S in the window), or a shipped scenario's or map's name "
        "(default: the shipped chase scenario)",
    )
    s.add_argument("--system", default=None, help="rule system for a bare map")
    s.add_argument("--token", default="", help="a bare map's tokens' stats (key=value,...)")
    s.add_argument("--set", action="append", metavar="KEY=VALUE", help="change a rule setting")
    s.add_argument("--frames", type=_positive, default=None, help="draw N frames and exit")
    s.add_argument("--screenshot", default=None, help="with --frames: save the window here")
    s.add_argument(
        "--safe-below",
        type=_probability,
        default=None,
        metavar="P",
        help="hover and clicks take the safest path where the quickest's p(no failure) < P",
    )
    s.set_defaults(func=cmd_view)


def cmd_view(args: argparse.Namespace) -> int:
    from engine.viewer.launch import view

    if (args.frames is None) != (args.screenshot is None) and args.screenshot is not None:
        raise ArgumentError("--screenshot needs --frames N (draw N frames, save, exit)")
    _check_writable(args.screenshot, "--screenshot", ".png")
    if args.source is None:
        from engine.data import default_scenario

        source = str(default_scenario())
    else:
        source = args.source
    return view(
        source,
        system=args.system,
        sets=parse_sets(args.set),
        token=args.token,
        frames=args.frames,
        screenshot=args.screenshot,
        safe_below=args.safe_below,
        note=_note,
    )


def _add_render(sub: argparse._SubParsersAction[_Parser]) -> None:
    s = sub.add_parser("render", help="draw a map or scenario to a PNG without a window")
    s.add_argument(
        "source",
        type=_source,
        help="a Tiled map (.tmx, .tmj, WORLD.world#NAME), a scenario .yaml, or a shipped "
        "scenario's or map's name",
    )
    s.add_argument("--out", required=True, help="the PNG to write")
    s.add_argument("--system", default=None, help="rule system for a bare map")
    s.add_argument("--scale", type=float, default=1.0, help="scale factor (default 1)")
    s.add_argument(
        "--no-walls",
        dest="walls",
        action="store_false",
        help="leave a Universal VTT file's walls and doors out (its picture as exported)",
    )
    s.add_argument("--json", action="store_true", help="print one JSON document")
    s.set_defaults(func=cmd_render)


def cmd_render(args: argparse.Namespace) -> int:
    _check_writable(args.out, "--out")  # a device, FIFO, folder or link: before drawing
    if not str(args.out).lower().endswith(".png"):
        # pygame would pick TGA or BMP from the name; CONTRACT.md promises a PNG.
        raise ArgumentError(f"--out {args.out}: renders are PNG images; give a name ending in .png")
    if str(args.source).lower().endswith((".yaml", ".yml")):
        from engine.viewer.launch import render_scenario

        w, h = render_scenario(
            args.source,
            args.out,
            system=args.system,
            scale=args.scale,
            walls=args.walls,
            note=_note,
        )
    else:
        # A bare map needs only the renderer, not the window's imports (sim, search, flight).
        from engine.viewer.render import render_to_file

        w, h = render_to_file(args.source, args.out, scale=args.scale, walls=args.walls, note=_note)
    if args.json:
        _print_json({"out": args.out, "width": w, "height": h})
    else:
        say(f"{args.out}: {w} x {h} px")
    return 0


def _add_export(sub: argparse._SubParsersAction[_Parser]) -> None:
    s = sub.add_parser(
        "export", help="write a map with its rules (painted, --set) as a Tiled map (.tmx)"
    )
    s.add_argument(
        "source",
        help="a saved session (.tacgrid: the map with its brush strokes) or a Tiled map "
        "(.tmx, .tmj, WORLD.world#NAME, .dd2vtt)",
    )
    s.add_argument("--out", required=True, help="the .tmx to write (its tileset picture beside)")
    s.add_argument(
        "--set",
        action="append",
        metavar="KEY=VALUE",
        help="a map's edits: terrain.NAME.PROP, region.NAME.PROP, map.collision",
    )
    s.add_argument("--json", action="store_true", help="print one JSON document")
    s.set_defaults(func=cmd_export)


def cmd_export(args: argparse.Namespace) -> int:
    from engine.tiled.export import export_tmx
    from engine.viewer import session as sessions

    out = str(args.out)
    if not out.lower().endswith(".tmx"):
        raise ArgumentError(f"--out {out}: the export is a Tiled map; give a name ending in .tmx")
    _check_writable(out, "--out")
    if sessions.is_session_path(args.source):
        if args.set:
            raise ArgumentError(
                f"--set: {args.source} is a session, whose map is painted already; give --set "
                "with a map"
            )
        data, scenario = sessions.load_session(args.source)
        try:
            sessions.replay_paint(scenario, data.get("paint"))
        except (KeyError, TypeError, ValueError) as exc:
            raise ArgumentError(f"{args.source}: a damaged session ({exc})") from None
        model = scenario.model
    else:
        from engine.cli.common import _map, load_bare_map

        try:
            source = _map(args.source)
        except argparse.ArgumentTypeError as exc:
            raise ArgumentError(f"export: {exc}") from None
        model, settings = load_bare_map(source, args.set)
        if settings:
            raise ArgumentError(
                f"--set {next(iter(settings))}: an export writes the map, not a rule "
                "system's settings; give terrain.NAME.PROP, region.NAME.PROP or map.collision"
            )
    tmx, picture = export_tmx(model, out)
    if args.json:
        _print_json({"out": tmx, "tileset": picture, "terrains": len(model.terrains)})
    else:
        say(f"{tmx}: {model.width} x {model.height} cells, tileset picture {picture}")
    return 0
