"""The command line (CONTRACT.md): `tacgrid COMMAND ...`.

Over 800 lines: one argparse sub-parser and one short dispatch function per command (sixteen
commands); every report's formatting lives in engine/report.

Every command that reports takes ``--json`` and then prints exactly one JSON document on
stdout. A user error is one line on stderr and exit status 2 (``--debug`` adds the
traceback); "no path" style answers exit 1.

This module parses arguments, hands them to the engine and to :mod:`engine.report` (which
builds every JSON document and text), prints, and maps errors to exit statuses. Each
command imports what it needs when it runs, so quick commands start quickly.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Sequence
from fractions import Fraction
from pathlib import Path
from typing import Any, NoReturn, cast

from engine.errors import ArgumentError, Stopped, TacgridError, did_you_mean, stop_signal
from engine.report import to_json
from engine.report.maptext import GLYPHS, TURN_MARKS, draw_cells

#: ``GLYPHS``, ``TURN_MARKS`` and ``draw_cells`` live in engine.report.maptext; still
#: importable from here.
__all__ = ["GLYPHS", "TURN_MARKS", "build_parser", "draw_cells", "main"]

#: The repository root (maps/, scenarios/, assets/ live beside engine/).
ROOT = Path(__file__).resolve().parent.parent
DEFAULT_MAP = ROOT / "maps" / "encounter.tmx"
DEFAULT_SCENARIO = ROOT / "scenarios" / "chase.yaml"
#: Longest error line printed (messages quote at most ~80 characters of user input).
MAX_MESSAGE = 1000


class _Parser(argparse.ArgumentParser):
    """argparse that raises instead of printing usage, so errors stay one line."""

    def error(self, message: str) -> NoReturn:
        raise ArgumentError(f"{self.prog}: {message} (see '{self.prog} --help')")


def _print_json(doc: Any) -> None:
    sys.stdout.write(to_json(doc))


# --------------------------------------------------------------------------- info


def cmd_info(args: argparse.Namespace) -> int:
    from engine.report.mapinfo import format_info, info_report
    from engine.tiled.world import is_world

    if is_world(args.map):  # a bare WORLD.world: its maps (WORLD.world#NAME loads one)
        return _world_info(args)
    rep = info_report(args.map)
    if args.json:
        _print_json(rep)
    else:
        print(format_info(rep))
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
    print(f"{args.map}: Tiled world, {len(maps)} maps (load one as {args.map}#NAME)")
    for m in maps:
        print(f"  {m.name:<24} at {m.x},{m.y} px  {os.path.relpath(m.file)}")
    return 0


# --------------------------------------------------------------------------- systems


def parse_sets(pairs: list[str] | None) -> dict[str, str]:
    """``--set key=value`` (repeatable) -> dict."""
    out: dict[str, str] = {}
    for pair in pairs or []:
        if "=" not in pair:
            raise ArgumentError(f"--set {pair}: expected key=value, e.g. --set wild_one=none")
        k, v = pair.split("=", 1)
        out[k.strip()] = v.strip()
    return out


def make_system(name: str, sets: list[str] | None) -> Any:
    from engine import systems

    return systems.create(name, parse_sets(sets))


def cmd_systems(args: argparse.Namespace) -> int:
    from engine.report.systems import format_systems, systems_report

    rep = systems_report()
    if args.json:
        _print_json(rep)
    else:
        print(format_systems(rep))
    return 0


def cmd_stats(args: argparse.Namespace) -> int:
    from engine.report.systems import format_stats, stats_report

    system = make_system(args.system, args.set)
    token = system.token(args.token or "")
    rep = stats_report(system, token, args.distance, terrain=args.terrain)
    if args.json:
        _print_json(rep)
    else:
        print(format_stats(rep))
    return 0


# --------------------------------------------------------------------------- path and reach


def _load_for_search(args: argparse.Namespace) -> tuple[Any, Any, Any]:
    from engine.tiled import load_map

    model = load_map(args.map)
    name = args.system or model.system
    if not name:
        raise ArgumentError(
            f"{args.map}: the map names no rule system; give --system (see `tacgrid systems`)"
        )
    system = make_system(name, args.set)
    token = system.token(args.token or "")
    return model, system, token


def cmd_path(args: argparse.Namespace) -> int:
    from engine.report.movement import format_path, no_path_report, path_report
    from engine.search import NoPath, parse_cell

    model, system, token = _load_for_search(args)
    start, goal = parse_cell(args.start, "--from"), parse_cell(args.goal, "--to")
    seen = _sized(args, model, system, token, args.pace, start)
    try:
        rep = path_report(seen, system, token, start, goal, args.pace, args.prefer, args.safe_below)
    except NoPath as exc:
        if args.json:
            _print_json(no_path_report(system, str(exc)))
        else:
            print(f"no path: {exc}")
        return 1
    if args.json:
        _print_json(rep)
    else:
        print(format_path(rep, model, system, start, goal))
    return 0


def _sized(
    args: argparse.Namespace, model: Any, system: Any, token: Any, pace: Any, start: Any
) -> Any:
    """``--size K``: the map as a K-cell token's anchors see it (engine.occupancy)."""
    if args.size == 1:
        return model
    from engine.occupancy import check_start, sized_model

    check_start(model.grid, start, args.size)
    return sized_model(model, system, token, pace, args.size)


def cmd_reach(args: argparse.Namespace) -> int:
    from engine.report.movement import format_reach, reach_report
    from engine.search import parse_cell

    model, system, token = _load_for_search(args)
    start = parse_cell(args.start, "--from")
    pace = args.pace or system.fastest_pace
    seen = _sized(args, model, system, token, pace, start)
    rep = reach_report(seen, system, token, start, args.turns, pace)
    if args.json:
        _print_json(rep)
    else:
        print(format_reach(rep, model, system, start, args.turns, pace))
    return 0


# --------------------------------------------------------------------------- fly


def cmd_fly(args: argparse.Namespace) -> int:
    from engine.report.flight import fly_report, format_fly, no_plan_report
    from engine.search import NoPath, parse_cell

    model, system, token = _load_for_search(args)
    start, goal = parse_cell(args.start, "--from"), parse_cell(args.goal, "--to")
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
            print(f"no flight plan: {exc}")
        return 1
    if args.json:
        _print_json(rep)
    else:
        print(format_fly(rep, model))
    return 0


# --------------------------------------------------------------------------- run and replay


def cmd_run(args: argparse.Namespace) -> int:
    from engine.batch import run_batch
    from engine.report.batch import format_summary

    overrides = parse_sets(args.set)
    if args.run_seed is not None:
        return _run_one(args, overrides)
    _check_batch_files(args)
    from engine.batch import BatchStopped
    from engine.report.batch import ProgressLine

    line = None
    if not args.quiet and (args.progress or (sys.stderr.isatty() and not args.json)):
        line = ProgressLine(sys.stderr, sys.stderr.isatty())

    def note(text: str) -> None:
        if not args.quiet:
            sys.stderr.write(f"tacgrid: {text}\n")

    try:
        summary = run_batch(
            args.scenario,
            runs=args.runs,
            seed=args.seed,
            workers=args.workers,
            scheduler=args.scheduler,
            out_dir=args.out,
            resume=args.resume,
            force=args.force,
            overrides=overrides,
            progress=line,
            note=note,
        )
    except BatchStopped as stop:
        if line is not None:
            line.close()
        sys.stderr.write(f"tacgrid: {stop.message or 'stopped'}\n")
        return 128 + stop.signum
    finally:
        if line is not None:
            line.close()
    if not args.no_plots:
        try:
            summary = _add_plots(args, summary)
        except KeyboardInterrupt as exc:
            # The batch is whole; a plot written half-way is removed (engine.safeio), and
            # summary.json is the batch's own until the plots are listed in it.
            signum, name = stop_signal(exc)
            raise Stopped(
                signum,
                f"stopped by {name} while the plots were written: all "
                f"{summary['runs']} runs and the summary are in {args.out}; run the same "
                "command with --resume to write the plots (no run is played again)",
            ) from None
    if args.json:
        _print_json(summary)
    else:
        print(format_summary(summary))
    return 0


def _add_plots(args: argparse.Namespace, summary: dict[str, Any]) -> dict[str, Any]:
    """PNG plots beside summary.json, listed in it (rewritten atomically)."""
    from engine.batch import RunsFile
    from engine.scenario import load_scenario

    # Read again on each pass, never held whole: a batch of a million runs stays small.
    results = cast(list[dict[str, Any]], RunsFile(os.path.join(args.out, "runs.jsonl")))
    scenario = load_scenario(args.scenario, overrides=parse_sets(args.set))
    from engine.viewer.plots import write_plots

    summary = {
        **summary,
        "plots": write_plots(results, scenario.model.path, args.out, scenario.name),
    }
    from engine.safeio import write_text

    path = os.path.join(args.out, "summary.json")
    write_text(path, json.dumps(summary, indent=2, sort_keys=True) + "\n", "--out")
    return summary


#: The files a batch writes into its --out folder.
BATCH_FILES = (
    ".lock",
    "batch.json",
    "runs.jsonl",
    "summary.json",
    "runs.parquet",
    "turns.png",
    "outcomes_map.png",
)


def _check_batch_files(args: argparse.Namespace) -> None:
    """Before any run: none of the batch's files in --out may be a device, FIFO, folder or
    link (a batch must not end in a refusal after its runs, nor remove such a thing)."""
    from engine.safeio import check_target

    if os.path.isdir(args.out):
        for name in BATCH_FILES:
            if os.path.lexists(target := os.path.join(args.out, name)):
                check_target(target, "--out")


def _run_one(args: argparse.Namespace, overrides: dict[str, str]) -> int:
    """One run with its own run seed (as listed in runs.jsonl), with its event log."""
    from engine.report.batch import format_run, run_one_report

    _check_writable(args.log, "--log")
    result = run_one_report(
        args.scenario,
        overrides,
        args.run_seed,
        args.log,
        batch_seed=args.seed,
        batch_runs=args.runs,
        out_dir=args.out,
    )
    if args.json:
        _print_json(result)
    else:
        print(format_run(result, args.run_seed))
    return 0


# --------------------------------------------------------------------------- sweep and report


def cmd_sweep(args: argparse.Namespace) -> int:
    """A batch per point of the grid of ``--vary`` values (engine.sweep)."""
    from engine.batch import BatchStopped
    from engine.report.tables import format_report
    from engine.sweep import run_sweep

    def note(text: str) -> None:
        if not args.quiet:
            sys.stderr.write(f"tacgrid: {text}\n")

    def point_done(i: int, n: int, point: dict[str, Any], summary: dict[str, Any]) -> None:
        if not args.quiet and (args.progress or sys.stderr.isatty()):
            what = ", ".join(f"{k}={v}" for k, v in point["params"].items())
            rates = "  ".join(f"{k} {100 * v:.1f}%" for k, v in summary["rates"].items())
            sys.stderr.write(f"point {i + 1}/{n} ({what}): {rates}\n")

    try:
        doc = run_sweep(
            args.scenario,
            vary=args.vary,
            runs=args.runs,
            seed=args.seed,
            workers=args.workers,
            scheduler=args.scheduler,
            out_dir=args.out,
            resume=args.resume,
            force=args.force,
            point_done=point_done,
            note=note,
        )
    except BatchStopped as stop:
        text = stop.message or "stopped"
        sys.stderr.write(f"tacgrid: {text}; the sweep's finished points stay (sweep --resume)\n")
        return 128 + stop.signum
    files = [os.path.join(args.out, n) for n in ("runs.parquet", "points.parquet", "summary.json")]
    if not args.no_charts:
        from engine.report.charts import write_sweep_charts

        files += write_sweep_charts(args.out, doc)
    if args.json:
        _print_json({**doc, "files": files})
    else:
        print(format_report(doc))
        for f in files:
            print(f"  {f}")
    return 0


def cmd_report(args: argparse.Namespace) -> int:
    """The summary of a batch or sweep folder as a table (``--charts``: and its charts)."""
    from engine.report.tables import format_report, load_results

    doc = load_results(args.dir)
    files: list[str] = []
    if args.charts:
        from engine.report import charts

        if doc["kind"] == "sweep":
            files = charts.write_sweep_charts(args.dir, doc)
        else:
            from engine.batch import RunsFile

            runs = RunsFile(os.path.join(args.dir, "runs.jsonl"))
            files = charts.write_batch_charts(
                args.dir, runs, os.path.basename(doc["summary"]["scenario"])
            )
    if args.json:
        _print_json({**doc, "files": files} if files else doc)
    else:
        print(format_report(doc))
        for f in files:
            print(f"  {f}")
    return 0


def read_event_log(path: str, *, viewer: bool = False) -> list[dict[str, Any]]:
    """An event log, checked so that replaying it cannot fail half-way (see
    :func:`engine.report.replay.read_event_log`)."""
    from engine.report.replay import read_event_log as read

    return read(path, viewer=viewer)


def cmd_replay(args: argparse.Namespace) -> int:
    from engine.report.replay import check_log_sources, format_replay, replay_report

    window = not args.text and not args.json
    events = read_event_log(args.log, viewer=window)
    if window:
        _check_writable(args.screenshot, "--screenshot", ".png")
    scenario, warnings = check_log_sources(events, args.log, force=args.force, need_scenario=window)
    for line in warnings:
        sys.stderr.write(f"tacgrid: {line}\n")
    if window:
        from engine.viewer.app import replay as view_replay

        return int(
            view_replay(args.log, frames=args.frames, screenshot=args.screenshot, scenario=scenario)
        )
    if args.json:
        _print_json(replay_report(events))
    else:
        print(format_replay(events))
    return 0


# --------------------------------------------------------------------------- viewer


def _check_writable(path: str | None, what: str, suffix: str | None = None) -> None:
    """Before any work starts, refuse an output file tacgrid must not write: a missing
    folder, a device, FIFO, socket, folder or link (:func:`engine.safeio.check_target`)."""
    from engine.safeio import check_target

    if path is not None:
        check_target(path, what, suffix=suffix)


def cmd_view(args: argparse.Namespace) -> int:
    from engine.viewer.app import view

    if (args.frames is None) != (args.screenshot is None) and args.screenshot is not None:
        raise ArgumentError("--screenshot needs --frames N (draw N frames, save, exit)")
    _check_writable(args.screenshot, "--screenshot", ".png")
    source = args.source or str(DEFAULT_SCENARIO)
    return view(
        source,
        system=args.system,
        sets=parse_sets(args.set),
        token=args.token,
        frames=args.frames,
        screenshot=args.screenshot,
        safe_below=args.safe_below,
    )


def cmd_render(args: argparse.Namespace) -> int:
    _check_writable(args.out, "--out")  # a device, FIFO, folder or link: before drawing
    if not str(args.out).lower().endswith(".png"):
        # pygame would pick TGA or BMP from the name; CONTRACT.md promises a PNG.
        raise ArgumentError(f"--out {args.out}: renders are PNG images; give a name ending in .png")
    if str(args.source).lower().endswith((".yaml", ".yml")):
        from engine.viewer.app import render_scenario

        w, h = render_scenario(
            args.source, args.out, system=args.system, scale=args.scale, walls=args.walls
        )
    else:
        # A bare map needs only the renderer, not the window's imports (sim, search, flight).
        from engine.viewer.render import render_to_file

        w, h = render_to_file(args.source, args.out, scale=args.scale, walls=args.walls)
    if args.json:
        _print_json({"out": args.out, "width": w, "height": h})
    else:
        print(f"{args.out}: {w} x {h} px")
    return 0


# --------------------------------------------------------------------------- odds and roll


def cmd_odds(args: argparse.Namespace) -> int:
    from engine.report.dice import format_odds, odds_report

    rep = odds_report(args.system, " ".join(args.check))
    if args.json:
        _print_json(rep)
    else:
        print(format_odds(rep))
    return 0


def cmd_roll(args: argparse.Namespace) -> int:
    from engine.report.dice import format_roll, roll_report

    # No --seed: draw one, and report it, so the roll can still be reproduced.
    seed = args.seed if args.seed is not None else int.from_bytes(os.urandom(4), "little")
    rep = roll_report(args.system, " ".join(args.check), seed)
    if args.json:
        _print_json(rep)
    else:
        print(format_roll(rep))
    return 0


def _seed(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = -1
    if value < 0:
        raise argparse.ArgumentTypeError(f"'{text}': expected a whole number >= 0, e.g. --seed 42")
    return value


# --------------------------------------------------------------------------- parser


COMMAND_NAMES: list[str] = []


def build_parser() -> _Parser:
    p = _Parser(prog="tacgrid", description="Tactical grid movement simulator")
    p.add_argument("--debug", action="store_true", help="show tracebacks for errors")
    sub = p.add_subparsers(dest="command", parser_class=_Parser)

    s = sub.add_parser("info", help="what a map is")
    s.add_argument("map", help="a Tiled map: .tmx, .tmj, or WORLD.world#NAME")
    s.add_argument("--json", action="store_true", help="print one JSON document")
    s.set_defaults(func=cmd_info)

    s = sub.add_parser("systems", help="rule systems, their stats and settings")
    s.add_argument("--json", action="store_true", help="print one JSON document")
    s.set_defaults(func=cmd_systems)

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
    s = sub.add_parser("path", help="best path between two cells")
    s.add_argument("map", help="a Tiled map: .tmx, .tmj, or WORLD.world#NAME")
    _system_args(s, required=False)
    s.add_argument("--from", dest="start", required=True, metavar="C,R", help="start cell")
    s.add_argument("--to", dest="goal", required=True, metavar="C,R", help="goal cell")
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
    s.set_defaults(func=cmd_path)

    s = sub.add_parser("reach", help="cells reachable from a cell")
    s.add_argument("map", help="a Tiled map: .tmx, .tmj, or WORLD.world#NAME")
    _system_args(s, required=False)
    s.add_argument("--from", dest="start", required=True, metavar="C,R", help="start cell")
    s.add_argument("--turns", type=_positive, default=1, help="turns of movement (default 1)")
    s.add_argument("--pace", default=None, help="pace (default: the system's fastest)")
    s.add_argument("--size", type=_size, default=1, help="token size in cells across (default 1)")
    s.set_defaults(func=cmd_reach)

    s = sub.add_parser("run", help="headless batch of seeded runs of a scenario")
    s.add_argument("scenario", help="a scenario .yaml")
    s.add_argument("--runs", type=_positive, default=None, help="runs (default: the scenario's)")
    s.add_argument("--seed", type=_seed, default=None, help="batch seed (default: the scenario's)")
    s.add_argument(
        "--workers",
        type=_positive,
        default=1,
        help="processes playing runs: this one and K-1 forked workers",
    )
    s.add_argument(
        "--scheduler", default=None, metavar="ADDR", help="Dask scheduler, tcp://HOST:PORT"
    )
    s.add_argument("--out", default="runs", help="output folder (default ./runs)")
    s.add_argument(
        "--resume",
        action="store_true",
        help="complete the batch in --out (with a larger --runs: extend it)",
    )
    s.add_argument(
        "--force", action="store_true", help="replace the batch in --out (once the new one runs)"
    )
    s.add_argument(
        "--progress", action="store_true", help="progress line on stderr even when not a terminal"
    )
    s.add_argument("--quiet", action="store_true", help="no progress line, no notes on stderr")
    s.add_argument("--run-seed", type=_seed, default=None, help="play one run with this run seed")
    s.add_argument("--log", default=None, help="with --run-seed: write the event log here")
    s.add_argument("--no-plots", action="store_true", help="skip the PNG plots")
    s.add_argument("--set", action="append", metavar="KEY=VALUE", help="change a rule setting")
    s.add_argument("--json", action="store_true", help="print one JSON document")
    s.set_defaults(func=cmd_run)

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

    s = sub.add_parser("view", help="the GM viewer (a map or a scenario)")
    s.add_argument(
        "source",
        nargs="?",
        default=None,
        help="a Tiled map (.tmx, .tmj, WORLD.world#NAME), a scenario .yaml, or a saved "
        "session (.tacgrid: Ctrl+S in the window)",
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

    s = sub.add_parser("render", help="draw a map or scenario to a PNG without a window")
    s.add_argument("source", help="a Tiled map (.tmx, .tmj, WORLD.world#NAME) or a scenario .yaml")
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

    s = sub.add_parser("fly", help="flight plan: fewest turns to a cell (or a landing)")
    s.add_argument("map", help="a Tiled map: .tmx, .tmj, or WORLD.world#NAME")
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

    s = sub.add_parser("odds", help="exact chances of a check")
    s.add_argument("--system", required=True, help="rule system (see `tacgrid systems`)")
    s.add_argument("check", nargs="+", help="e.g. athletics=2 dc=6 bonus=1")
    s.add_argument("--json", action="store_true", help="print one JSON document")
    s.set_defaults(func=cmd_odds)

    s = sub.add_parser("roll", help="one seeded roll of a check")
    s.add_argument("--system", required=True, help="rule system (see `tacgrid systems`)")
    s.add_argument("check", nargs="+", help="e.g. dice=3D+1 dn=13")
    s.add_argument("--seed", type=_seed, default=None, help="seed (default: drawn and reported)")
    s.add_argument("--json", action="store_true", help="print one JSON document")
    s.set_defaults(func=cmd_roll)
    s = sub.add_parser("sweep", help="a batch per point of a grid of varied scenario values")
    s.add_argument("scenario", help="a scenario .yaml")
    s.add_argument(
        "--vary",
        action="append",
        metavar="NAME=V1,V2,...",
        help="a parameter and its values: TOKEN.stats.STAT, settings.NAME, TOKEN.pace, "
        "goals.capture, turns or terrain.NAME.PROP (repeatable; default: the scenario's "
        "sweep: block)",
    )
    s.add_argument("--runs", type=_positive, default=None, help="runs per point")
    s.add_argument("--seed", type=_seed, default=None, help="sweep seed (default: the scenario's)")
    s.add_argument(
        "--workers",
        type=_positive,
        default=1,
        help="processes playing runs: this one and K-1 forked workers",
    )
    s.add_argument(
        "--scheduler", default=None, metavar="ADDR", help="Dask scheduler, tcp://HOST:PORT"
    )
    s.add_argument("--out", default="sweep", help="output folder (default ./sweep)")
    s.add_argument("--resume", action="store_true", help="complete or extend the sweep in --out")
    s.add_argument("--force", action="store_true", help="replace the sweep in --out")
    s.add_argument("--progress", action="store_true", help="a line per point on stderr")
    s.add_argument("--quiet", action="store_true", help="nothing on stderr but errors")
    s.add_argument("--no-charts", action="store_true", help="skip the PNG/SVG charts")
    s.add_argument("--json", action="store_true", help="print one JSON document")
    s.set_defaults(func=cmd_sweep)

    s = sub.add_parser("report", help="the summary of a batch or sweep folder as a table")
    s.add_argument("dir", help="a batch's or a sweep's --out folder")
    s.add_argument("--charts", action="store_true", help="also write its charts (PNG and SVG)")
    s.add_argument("--json", action="store_true", help="print one JSON document")
    s.set_defaults(func=cmd_report)
    COMMAND_NAMES[:] = list(sub.choices)
    return p


def _distance(text: str) -> Fraction:
    from engine.exact import exact
    from engine.sources import clip

    try:
        value = exact(text)  # bounded: `1e999999999` is refused, not computed
    except (ValueError, ZeroDivisionError):
        value = Fraction(0)
    if value <= 0:
        raise argparse.ArgumentTypeError(f"'{clip(text)}': expected metres > 0, e.g. 10000")
    return value


def _whole(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = -1
    if value < 0:
        raise argparse.ArgumentTypeError(f"'{text}': expected a whole number >= 0")
    return value


def _positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"'{text}': expected a whole number >= 1")
    return value


def _size(text: str) -> int:
    from engine.footprint import MAX_SIZE

    value = _positive(text)
    if value > MAX_SIZE:
        raise argparse.ArgumentTypeError(f"'{text}': expected a whole number from 1 to {MAX_SIZE}")
    return value


def _probability(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not 0 <= value <= 1:
        raise argparse.ArgumentTypeError(f"'{text}': expected a probability from 0 to 1, e.g. 0.5")
    return value


def _system_args(s: argparse.ArgumentParser, token: bool = True, required: bool = True) -> None:
    s.add_argument(
        "--system",
        required=required,
        default=None,
        help="rule system (see `tacgrid systems`)" + ("" if required else "; default: the map's"),
    )
    if token:
        s.add_argument("--token", default="", help="key=value,key=value or a YAML/JSON file")
    s.add_argument("--set", action="append", metavar="KEY=VALUE", help="change a rule setting")
    s.add_argument("--json", action="store_true", help="print one JSON document")


def _raise_stopped(signum: int, frame: Any) -> None:
    raise Stopped(signum)


def _sigterm_stops() -> Any:
    """While a command runs in the main thread: SIGTERM raises :class:`Stopped` (a
    KeyboardInterrupt), where its default would end the process at once. The command then
    unwinds as on Ctrl-C: a file being written is removed, not left as a temporary file
    (engine.safeio), a batch keeps its runs (engine.batch installs its own handlers for its
    runs and puts these back after). Returns the handler to put back, or None where another
    handler than the default was set (a program that calls ``main`` keeps its own)."""
    import signal
    import threading

    if threading.current_thread() is not threading.main_thread():
        return None
    if signal.getsignal(signal.SIGTERM) is not signal.SIG_DFL:
        return None
    return signal.signal(signal.SIGTERM, _raise_stopped)


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of `tacgrid` and `python main.py`."""
    old = _sigterm_stops()
    try:
        return _main(argv)
    finally:
        if old is not None:
            import signal

            signal.signal(signal.SIGTERM, old)


def _main(argv: Sequence[str] | None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    debug = "--debug" in argv
    # No command does linear algebra, and OpenBLAS starting its thread pool when numpy is
    # first imported costs every command about 60 ms on the 2-core machine (a user's own
    # setting wins). numpy is not imported yet: engine.lazy defers it to first use.
    if "numpy" not in sys.modules:
        os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    try:
        parser = build_parser()
        if not argv or argv == ["--debug"]:
            # The main job: the GM viewer on the shipped default scenario.
            argv = [*argv, "view"]
        known = set(COMMAND_NAMES)
        first = next((a for a in argv if not a.startswith("-")), None)
        if first is not None and first not in known:
            raise ArgumentError(
                f"tacgrid: unknown command '{first}'{did_you_mean(first, sorted(known))}; "
                f"commands: {', '.join(sorted(known))}"
            )
        args = parser.parse_args(argv)
        if not getattr(args, "func", None):
            parser.print_help()
            return 0
        return int(args.func(args))
    except TacgridError as exc:
        if debug:
            import traceback  # only here: quick commands start without it

            traceback.print_exc()
        msg = str(exc)
        # The message quotes what the user gave, which may hold line breaks: keep one line.
        msg = msg.replace("\r", "\\r").replace("\n", "\\n")
        if len(msg) > MAX_MESSAGE:  # readers quote at most ~80 characters; a last guard
            msg = msg[: MAX_MESSAGE - 3] + "..."
        sys.stderr.write(f"tacgrid: {msg}\n" if not msg.startswith("tacgrid") else f"{msg}\n")
        return 2
    except (RecursionError, MemoryError) as exc:
        # Readers cap sizes and nesting before this can happen; a last guard, one line.
        if debug:
            import traceback

            traceback.print_exc()
        sys.stderr.write(f"tacgrid: input too large or nested too deeply ({type(exc).__name__})\n")
        return 2
    except KeyboardInterrupt as exc:
        # Ctrl-C, or SIGTERM (Stopped): a command with more to say caught it already.
        import signal

        signum, name = stop_signal(exc)
        if isinstance(exc, Stopped) and exc.message:
            sys.stderr.write(f"tacgrid: {exc.message}\n")
        elif signum == signal.SIGINT:
            sys.stderr.write("tacgrid: interrupted\n")
        else:
            sys.stderr.write(f"tacgrid: stopped by {name}\n")
        return 128 + signum
    except BrokenPipeError:
        return 0


if __name__ == "__main__":
    sys.exit(main())
