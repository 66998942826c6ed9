"""The command line (CONTRACT.md): `tacgrid COMMAND ...`.

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
import traceback
from collections.abc import Sequence
from fractions import Fraction
from pathlib import Path
from typing import Any, NoReturn

from engine.errors import ArgumentError, TacgridError, did_you_mean
from engine.report import to_json
from engine.report.maptext import GLYPHS, TURN_MARKS, draw_cells

#: ``GLYPHS``, ``TURN_MARKS`` and ``draw_cells`` live in engine.report.maptext; still
#: importable from here.
__all__ = ["GLYPHS", "TURN_MARKS", "build_parser", "draw_cells", "main"]

#: The repository root (maps/, scenarios/, assets/ live beside engine/).
ROOT = Path(__file__).resolve().parent.parent
DEFAULT_MAP = ROOT / "maps" / "encounter.tmx"
DEFAULT_SCENARIO = ROOT / "scenarios" / "chase.yaml"


class _Parser(argparse.ArgumentParser):
    """argparse that raises instead of printing usage, so errors stay one line."""

    def error(self, message: str) -> NoReturn:
        raise ArgumentError(f"{self.prog}: {message} (see '{self.prog} --help')")


def _print_json(doc: Any) -> None:
    sys.stdout.write(to_json(doc))


# --------------------------------------------------------------------------- info


def cmd_info(args: argparse.Namespace) -> int:
    from engine.report.mapinfo import format_info, info_report

    rep = info_report(args.map)
    if args.json:
        _print_json(rep)
    else:
        print(format_info(rep))
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
    rep = stats_report(system, token, args.distance)
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
    try:
        rep = path_report(model, system, token, start, goal, args.pace, args.prefer)
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


def cmd_reach(args: argparse.Namespace) -> int:
    from engine.report.movement import format_reach, reach_report
    from engine.search import parse_cell

    model, system, token = _load_for_search(args)
    start = parse_cell(args.start, "--from")
    pace = args.pace or system.fastest_pace
    rep = reach_report(model, system, token, start, args.turns, pace)
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
    progress = None
    bar = None
    if sys.stderr.isatty() and not args.json:
        from rich.progress import Progress

        bar = Progress(transient=True)
        bar.start()
        task = bar.add_task("runs", total=None)

        def progress(done: int, total: int) -> None:
            bar.update(task, completed=done, total=total)

    try:
        summary = run_batch(
            args.scenario,
            runs=args.runs,
            seed=args.seed,
            workers=args.workers,
            scheduler=args.scheduler,
            out_dir=args.out,
            resume=args.resume,
            overrides=overrides,
            progress=progress,
        )
    finally:
        if bar is not None:
            bar.stop()
    if not args.no_plots:
        summary = _add_plots(args, summary)
    if args.json:
        _print_json(summary)
    else:
        print(format_summary(summary))
    return 0


def _add_plots(args: argparse.Namespace, summary: dict[str, Any]) -> dict[str, Any]:
    """PNG plots beside summary.json, listed in it (rewritten atomically)."""
    from engine.batch import read_runs
    from engine.scenario import load_scenario

    results = read_runs(os.path.join(args.out, "runs.jsonl"))
    scenario = load_scenario(args.scenario, overrides=parse_sets(args.set))
    from engine.viewer.plots import write_plots

    summary = {
        **summary,
        "plots": write_plots(results, scenario.model.path, args.out, scenario.name),
    }
    path = os.path.join(args.out, "summary.json")
    with open(path + ".tmp", "w", encoding="utf-8") as fh:
        fh.write(json.dumps(summary, indent=2, sort_keys=True) + "\n")
    os.replace(path + ".tmp", path)
    return summary


def _run_one(args: argparse.Namespace, overrides: dict[str, str]) -> int:
    """One run with its own run seed (as listed in runs.jsonl), with its event log."""
    from engine.report.batch import format_run, run_one_report

    _check_writable(args.log, "--log")
    result = run_one_report(args.scenario, overrides, args.run_seed, args.log)
    if args.json:
        _print_json(result)
    else:
        print(format_run(result, args.run_seed))
    return 0


def read_event_log(path: str, *, viewer: bool = False) -> list[dict[str, Any]]:
    """An event log, checked so that replaying it cannot fail half-way (see
    :func:`engine.report.replay.read_event_log`)."""
    from engine.report.replay import read_event_log as read

    return read(path, viewer=viewer)


def cmd_replay(args: argparse.Namespace) -> int:
    from engine.report.replay import format_replay, replay_report

    window = not args.text and not args.json
    events = read_event_log(args.log, viewer=window)
    if window:
        _check_writable(args.screenshot, "--screenshot")
        from engine.viewer.app import replay as view_replay

        return int(view_replay(args.log, frames=args.frames, screenshot=args.screenshot))
    doc = replay_report(events)
    if args.json:
        _print_json(doc)
    else:
        print(format_replay(doc))
    return 0


# --------------------------------------------------------------------------- viewer


def _check_writable(path: str | None, what: str) -> None:
    """Refuse an output file whose folder is missing before any work starts."""
    if path is None:
        return
    folder = os.path.dirname(os.path.abspath(path))
    if os.path.isdir(path):
        raise ArgumentError(f"{what} {path}: is a folder; give a file name")
    if not os.path.isdir(folder):
        raise ArgumentError(f"{what} {path}: the folder {folder} does not exist; create it first")


def cmd_view(args: argparse.Namespace) -> int:
    from engine.viewer.app import view

    if (args.frames is None) != (args.screenshot is None) and args.screenshot is not None:
        raise ArgumentError("--screenshot needs --frames N (draw N frames, save, exit)")
    _check_writable(args.screenshot, "--screenshot")
    source = args.source or str(DEFAULT_SCENARIO)
    return view(
        source,
        system=args.system,
        sets=parse_sets(args.set),
        token=args.token,
        frames=args.frames,
        screenshot=args.screenshot,
    )


def cmd_render(args: argparse.Namespace) -> int:
    from engine.viewer.app import render_scenario

    w, h = render_scenario(args.source, args.out, system=args.system, scale=args.scale)
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
    s.add_argument("map", help="a Tiled .tmx file")
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
    s.set_defaults(func=cmd_stats)
    s = sub.add_parser("path", help="best path between two cells")
    s.add_argument("map", help="a Tiled .tmx file")
    _system_args(s, required=False)
    s.add_argument("--from", dest="start", required=True, metavar="C,R", help="start cell")
    s.add_argument("--to", dest="goal", required=True, metavar="C,R", help="goal cell")
    s.add_argument("--pace", default=None, help="the system's pace (default: its default)")
    s.add_argument("--prefer", default="fast", choices=("fast", "safe"), help="quickest or safest")
    s.set_defaults(func=cmd_path)

    s = sub.add_parser("reach", help="cells reachable from a cell")
    s.add_argument("map", help="a Tiled .tmx file")
    _system_args(s, required=False)
    s.add_argument("--from", dest="start", required=True, metavar="C,R", help="start cell")
    s.add_argument("--turns", type=_positive, default=1, help="turns of movement (default 1)")
    s.add_argument("--pace", default=None, help="pace (default: the system's fastest)")
    s.set_defaults(func=cmd_reach)

    s = sub.add_parser("run", help="headless batch of seeded runs of a scenario")
    s.add_argument("scenario", help="a scenario .yaml")
    s.add_argument("--runs", type=_positive, default=None, help="runs (default: the scenario's)")
    s.add_argument("--seed", type=_seed, default=None, help="batch seed (default: the scenario's)")
    s.add_argument("--workers", type=_positive, default=1, help="local worker processes")
    s.add_argument(
        "--scheduler", default=None, metavar="ADDR", help="Dask scheduler, tcp://HOST:PORT"
    )
    s.add_argument("--out", default="runs", help="output folder (default ./runs)")
    s.add_argument("--resume", action="store_true", help="complete an interrupted batch in --out")
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
    s.set_defaults(func=cmd_replay)

    s = sub.add_parser("view", help="the GM viewer (a map or a scenario)")
    s.add_argument("source", nargs="?", default=None, help="a .tmx map or a scenario .yaml")
    s.add_argument("--system", default=None, help="rule system for a bare map")
    s.add_argument("--token", default="", help="a bare map's tokens' stats (key=value,...)")
    s.add_argument("--set", action="append", metavar="KEY=VALUE", help="change a rule setting")
    s.add_argument("--frames", type=_positive, default=None, help="draw N frames and exit")
    s.add_argument("--screenshot", default=None, help="with --frames: save the window here")
    s.set_defaults(func=cmd_view)

    s = sub.add_parser("render", help="draw a map or scenario to a PNG without a window")
    s.add_argument("source", help="a .tmx map or a scenario .yaml")
    s.add_argument("--out", required=True, help="the PNG to write")
    s.add_argument("--system", default=None, help="rule system for a bare map")
    s.add_argument("--scale", type=float, default=1.0, help="scale factor (default 1)")
    s.add_argument("--json", action="store_true", help="print one JSON document")
    s.set_defaults(func=cmd_render)

    s = sub.add_parser("fly", help="flight plan: fewest turns to a cell (or a landing)")
    s.add_argument("map", help="a Tiled .tmx file")
    _system_args(s, required=False)
    s.add_argument("--from", dest="start", required=True, metavar="C,R", help="start cell")
    s.add_argument("--heading", type=_whole, default=0, help="degrees clockwise from up")
    s.add_argument("--speed", type=_whole, default=0, help="cells a turn (0: on the ground)")
    s.add_argument("--to", dest="goal", required=True, metavar="C,R", help="goal cell")
    s.add_argument("--land", action="store_true", help="end the move there and land safely")
    s.add_argument("--end-heading", type=_whole, default=None, help="arrive with this heading")
    s.add_argument("--altitude", type=_whole, default=0, help="start altitude in m (Speedpoints)")
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
    COMMAND_NAMES[:] = list(sub.choices)
    return p


def _distance(text: str) -> Fraction:
    try:
        value = Fraction(text)
    except (ValueError, ZeroDivisionError):
        value = Fraction(0)
    if value <= 0:
        raise argparse.ArgumentTypeError(f"'{text}': expected metres > 0, e.g. 10000")
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


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of `tacgrid` and `python main.py`."""
    argv = list(sys.argv[1:] if argv is None else argv)
    debug = "--debug" in argv
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
            traceback.print_exc()
        msg = str(exc)
        # The message quotes what the user gave, which may hold line breaks: keep one line.
        msg = msg.replace("\r", "\\r").replace("\n", "\\n")
        sys.stderr.write(f"tacgrid: {msg}\n" if not msg.startswith("tacgrid") else f"{msg}\n")
        return 2
    except KeyboardInterrupt:
        sys.stderr.write("tacgrid: interrupted\n")
        return 130
    except BrokenPipeError:
        return 0


if __name__ == "__main__":
    sys.exit(main())
