"""`tacgrid run`, `sweep` and `report`: seeded batches, sweeps over varied values, and their
summaries."""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Callable
from typing import Any, cast

from engine.cli.common import (
    FLAGS,
    _check_writable,
    _Parser,
    _positive,
    _print_json,
    _scenario,
    _seed,
    parse_sets,
    say,
    tell,
)
from engine.errors import Stopped, Wording, stop_signal


def _add_run(sub: argparse._SubParsersAction[_Parser]) -> None:
    s = sub.add_parser("run", help="headless batch of seeded runs of a scenario")
    s.add_argument("scenario", type=_scenario, help="a scenario .yaml or a shipped scenario's name")
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

    def note(text: Wording) -> None:
        if not args.quiet:
            tell(text.naming(FLAGS))

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
        tell(stop.wording.naming(FLAGS) or "stopped")
        return 128 + stop.signum
    finally:
        if line is not None:
            line.close()
    _say_missing_analysis(args, note)  # once the batch is in, not before an error
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
        say(format_summary(summary))
    return 0


def _say_missing_analysis(args: argparse.Namespace, note: Callable[[Wording], None]) -> None:
    """A batch runs on the base install; the files that need the analysis extra (the
    Parquet table, the turns chart) are left out where it is missing, said in one line."""
    from engine.batch import tables_available
    from engine.errors import EXTRAS
    from engine.report.charts import charts_available

    files = [] if tables_available() else ["runs.parquet"]
    if not args.no_plots and not charts_available():
        files.append("turns.png")
    if files:
        verb = "it needs" if len(files) == 1 else "they need"
        note(
            Wording.plain(
                f"{' and '.join(files)} not written: {verb} the analysis extra "
                f"({EXTRAS['analysis']}): pip install 'tacgrid[analysis]'"
            )
        )


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
        say(format_run(result, args.run_seed))
    return 0


def _add_sweep(sub: argparse._SubParsersAction[_Parser]) -> None:
    s = sub.add_parser("sweep", help="a batch per point of a grid of varied scenario values")
    s.add_argument("scenario", type=_scenario, help="a scenario .yaml or a shipped scenario's name")
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
    s.add_argument(
        "--seeds",
        choices=("common", "per-point"),
        default=None,
        help="common (default): every point replays the same run seeds; per-point: its own",
    )
    s.add_argument(
        "--until-ci",
        type=_width,
        default=None,
        metavar="W",
        help="run each point until its capture rate's 95%% interval is at most W wide "
        "(0.05 = 5 points); --runs is then the first step",
    )
    s.add_argument(
        "--max-runs",
        type=_positive,
        default=None,
        metavar="N",
        help="with --until-ci: at most N runs a point (default 10000)",
    )
    s.set_defaults(func=cmd_sweep)


def _width(text: str) -> float:
    """``--until-ci``'s width: a number between 0 and 1."""
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not 0 < value < 1:
        raise argparse.ArgumentTypeError(
            f"'{text[:40]}': expected a width between 0 and 1 (0.05: five percentage points)"
        )
    return value


def cmd_sweep(args: argparse.Namespace) -> int:
    """A batch per point of the grid of ``--vary`` values (engine.sweep)."""
    from engine.batch import BatchStopped, need_tables
    from engine.report.charts import need_charts
    from engine.report.tables import format_report
    from engine.sweep import run_sweep

    # Its tables and charts are what a sweep is for: the extra is asked for before any run.
    need_tables("sweep")
    if not args.no_charts:
        need_charts("sweep")

    def note(text: Wording) -> None:
        if not args.quiet:
            tell(text.naming(FLAGS))

    def point_done(i: int, n: int, point: dict[str, Any], summary: dict[str, Any]) -> None:
        if not args.quiet and (args.progress or sys.stderr.isatty()):
            what = ", ".join(f"{k}={v}" for k, v in point["params"].items())
            rates = "  ".join(f"{k} {100 * v:.1f}%" for k, v in summary["rates"].items())
            tell(f"point {i + 1}/{n} ({what}): {rates} ({summary['runs']} runs)", "")

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
            seeds=args.seeds,
            until_ci=args.until_ci,
            max_runs=args.max_runs,
        )
    except BatchStopped as stop:
        text = stop.wording.naming(FLAGS) or "stopped"
        tell(f"{text}; the sweep's finished points stay (sweep --resume)")
        return 128 + stop.signum
    files = [os.path.join(args.out, n) for n in ("runs.parquet", "points.parquet", "summary.json")]
    if not args.no_charts:
        from engine.report.charts import write_sweep_charts

        files += write_sweep_charts(args.out, doc)
    if args.json:
        _print_json({**doc, "files": files})
    else:
        say(format_report(doc))
        for f in files:
            say(f"  {f}")
    return 0


def _add_report(sub: argparse._SubParsersAction[_Parser]) -> None:
    s = sub.add_parser("report", help="the summary of a batch or sweep folder as a table")
    s.add_argument("dir", help="a batch's or a sweep's --out folder")
    s.add_argument("--charts", action="store_true", help="also write its charts (PNG and SVG)")
    s.add_argument("--json", action="store_true", help="print one JSON document")
    s.add_argument(
        "--against",
        choices=("first", "previous"),
        default="first",
        help="a sweep's paired differences: each point against the first point (default) "
        "or the point one value before it",
    )
    s.set_defaults(func=cmd_report)


def cmd_report(args: argparse.Namespace) -> int:
    """The summary of a batch or sweep folder as a table (``--charts``: and its charts)."""
    from engine.report.tables import format_report, load_results

    doc = load_results(args.dir, against=args.against)
    files: list[str] = []
    if args.charts:
        from engine.report import charts

        charts.need_charts("report --charts")

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
        say(format_report(doc))
        for f in files:
            say(f"  {f}")
    return 0
