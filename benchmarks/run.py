"""Run every benchmark in this folder, write the results to benchmarks/RESULTS.md, and exit
non-zero if any target is missed.

Each benchmark prints its time as a ratio to a reference measured in the same run (the
machines are noisy: absolute times mean little). RESULTS.md is generated: it names the date,
the machine and, per benchmark, the reference its ratios are measured against, then gives
each benchmark's own printout.

Run: python benchmarks/run.py [NAME ...] [--results PATH]
(NAME: ``bench_dice`` or ``dice``; a subset writes RESULTS.md only when --results is given,
so a partial run never replaces the full table.)
"""

from __future__ import annotations

import argparse
import datetime
import os
import platform
import subprocess
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "RESULTS.md"


@dataclass(frozen=True)
class Bench:
    """One benchmark script: what it measures, against what, and its targets."""

    script: str
    measures: str
    reference: str
    target: str


#: Every bench_*.py of this folder (tests/test_bench_results.py holds the list complete, so
#: a new benchmark has to say what its ratios are measured against).
BENCHES: tuple[Bench, ...] = (
    Bench(
        "bench_chase.py",
        "square chase (D6) runs per second on 1 worker; CPU of an 8000-run batch on 2 local "
        "workers",
        "the same chase with a networkx shortest path every turn; the same batch on 1 worker, "
        "back to back",
        ">= 15x and >= 1500 runs per CPU second; <= 1.05x CPU",
    ),
    Bench(
        "bench_cluster.py",
        "a 40-point x 1500-run sweep and a 60000-run batch of the square chase on a quiet "
        "2-worker Dask cluster (scheduler and workers as processes); their peak memory",
        "the same sweep and batch on 1 local worker, back to back",
        "<= 1.10x CPU and <= 0.60x wall each",
    ),
    Bench(
        "bench_dice.py",
        "1e6 d12-with-bonus rolls; 1e5 D6 wild-die rolls",
        "a `random.randint` loop of the same count",
        "<= 3x",
    ),
    Bench(
        "bench_drag.py",
        "a live drag: `Context.reach` of a 30-cell mover on 256^2 from a new start each time "
        "(typed and as the dict); a route through two waypoints re-priced per mouse move",
        "python-tcod's dijkstra2d on the window the move can reach, from the same starts",
        "<= 5x a reach; <= 20x a route",
    ),
    Bench(
        "bench_flight.py",
        "flight plan across a 64x64 hex map, standstill to landing; the same landing on "
        "heading 270",
        "the same search without its heuristic on 24x24 (16x16 for the turn-round)",
        "<= 1 s; <= 0.5 s",
    ),
    Bench(
        "bench_flight_chase.py",
        "flier chase batch, 64x64 hex, one Mythmaster flier hunting two runners, 1 worker",
        "the same chase with the flier on the ground graph",
        ">= 150 runs per CPU second",
    ),
    Bench(
        "bench_load.py",
        "load a 512x512 map into the model (csv and base64-zlib)",
        "pytmx's own parse of the same file",
        "<= 1.5x",
    ),
    Bench(
        "bench_render.py",
        "whole `tacgrid render` of a 403x403 square and a 512x512 hex map at scales 1, "
        "0.25, 0.125; peak memory at scale 1/16 on 1024x1024; 8 zlib layers of 2048x2048 "
        "at 1/8 and 300 objects of 800-point polygons",
        "whole `tmxrasterizer -s S` (Debian's `tiled`) on the same map",
        "<= 1.5x; <= 200 MB",
    ),
    Bench(
        "bench_search.py",
        "whole `tacgrid path` corner to corner, 256^2 to 2048^2 (equal, alternate, hex) and "
        "its peak memory; `api.Context.path` and `.reach`; a hover lookup; the long path: "
        "whole `path --json` on a 1024^2 serpentine maze, its CPU and peak memory",
        "the whole benchmarks/ref_path.py (ElementTree parse, python-tcod's Pathfinder); "
        "tcod's in-process Pathfinder and dijkstra2d",
        "<= 1.0x time, <= 2x memory; <= 2 ms a path, <= 0.5 ms a reach, <= 0.1 ms a hover; "
        "long path <= 1x CPU, <= 1x memory",
    ),
    Bench(
        "bench_solve.py",
        "`solve` of a one-on-one chase on the 40x30 maps/encounter.tmx: CPU and peak memory "
        "in a fresh process; its rounds alone; a 12x10 chase solved whole",
        "the same rounds by dense BLAS matrix products; a plain-Python minimax of the 12x10 chase",
        "<= 20 s CPU, <= 1 GB; <= 1x; the same answer",
    ),
    Bench(
        "bench_startup.py",
        "whole `tacgrid systems`, `systems --json`, `info maps/encounter.tmx`",
        "`python -c pass` in the same rounds",
        "<= 0.15 s",
    ),
    Bench(
        "bench_sweep.py",
        "CPU of a 12-point sweep of the square chase, 1 worker",
        "the same runs as 12 separate batches",
        "<= 1.05x",
    ),
    Bench(
        "bench_viewer.py",
        "viewer frame on a 100x100 hex map with reach overlay and hover path; panning a "
        "403x403 map at zoom 1, 0.5, 0.13; the viewer's peak memory",
        "a frame that only blits the map chunks in view",
        "<= 8 ms a frame; <= 400 MB",
    ),
)


@dataclass(frozen=True)
class Result:
    """What one benchmark did: met its targets or not, how long it ran, what it printed."""

    bench: Bench
    met: bool
    seconds: float
    output: str


def pace() -> float:
    """CPU milliseconds of ``sum(range(10**6))``, the best of 5: how fast this machine was
    while the benchmarks ran (the development machines drift by 2x within minutes)."""
    times = []
    for _ in range(5):
        t = time.process_time()
        sum(range(10**6))
        times.append(time.process_time() - t)
    return min(times) * 1000


def machine() -> str:
    """The machine in one line: CPU model, cores, OS, Python (its version and executable:
    two builds of one version, say a distribution's, optimised with profile guidance, and
    one compiled without, run the same code at different speeds) and the measured pace."""
    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return (
        f"{cpu}, {os.cpu_count()} CPUs; {platform.system()} {platform.release()}; "
        f"Python {platform.python_version()} ({os.path.realpath(sys.executable)}); "
        f"pace `sum(range(10**6))` {pace():.1f} ms"
    )


def revision(root: Path) -> str:
    """The checkout's commit (with "+ changes" where the tree differs from it)."""
    try:
        head = subprocess.run(
            ["git", "-C", str(root), "rev-parse", "--short", "HEAD"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "-C", str(root), "status", "--porcelain", "--untracked-files=no"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"
    return head + (" + changes" if dirty else "")


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def results_markdown(
    results: Sequence[Result], when: datetime.datetime, host: str, rev: str
) -> str:
    """RESULTS.md's text: a header saying it is generated (date, machine, commit), a table of
    every benchmark with its reference, target and verdict, then each one's printout."""
    ran = {r.bench.script for r in results}
    subset = "" if ran == {b.script for b in BENCHES} else " (a subset of the benchmarks)"
    lines = [
        "# Benchmark results",
        "",
        f"Generated by `python benchmarks/run.py`{subset}: do not edit, run it again.",
        "",
        f"- date: {when.strftime('%Y-%m-%d %H:%M %Z').strip()}",
        f"- machine: {host}",
        f"- commit: {rev}",
        "",
        "Every figure is a ratio to the reference named in its row, measured in the same run "
        "on the same machine: ratios hold from machine to machine, absolute times do not.",
        "",
        "| benchmark | measures | reference (ratio against) | target | result |",
        "|---|---|---|---|---|",
    ]
    for r in results:
        b = r.bench
        verdict = "met" if r.met else "**missed**"
        lines.append(
            f"| `{b.script}` | {_cell(b.measures)} | {_cell(b.reference)} | {_cell(b.target)} "
            f"| {verdict} ({r.seconds:.0f} s) |"
        )
    for r in results:
        lines += ["", f"## {r.bench.script}", "", "```", r.output.rstrip("\n"), "```"]
    return "\n".join(lines) + "\n"


def run_bench(bench: Bench) -> Result:
    """Run one benchmark script, echoing its output as it comes."""
    print(f"== {bench.script}", flush=True)
    start = time.perf_counter()
    proc = subprocess.Popen(
        [sys.executable, str(HERE / bench.script)],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    assert proc.stdout is not None
    out = []
    for line in proc.stdout:
        sys.stdout.write(line)
        sys.stdout.flush()
        out.append(line)
    code = proc.wait()
    return Result(bench, code == 0, time.perf_counter() - start, "".join(out))


def select(names: Sequence[str]) -> list[Bench]:
    """The benchmarks named (``bench_dice``, ``bench_dice.py`` or ``dice``), all if none."""
    if not names:
        return list(BENCHES)
    by_name = {b.script.removeprefix("bench_").removesuffix(".py"): b for b in BENCHES}
    chosen = []
    for name in names:
        key = Path(name).name.removeprefix("bench_").removesuffix(".py")
        if key not in by_name:
            raise SystemExit(f"run.py: no benchmark {name!r}; one of {', '.join(sorted(by_name))}")
        chosen.append(by_name[key])
    return chosen


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("names", nargs="*", help="benchmarks to run (default: all)")
    parser.add_argument("--results", type=Path, default=None, help="where to write the table")
    args = parser.parse_args(argv)
    benches = select(args.names)
    out = args.results if args.results is not None else (None if args.names else RESULTS)

    sys.path.insert(0, str(HERE))
    from timing import run_compiled

    run_compiled(HERE.parent)
    results = [run_bench(b) for b in benches]
    if out is not None:
        when = datetime.datetime.now(datetime.UTC)
        text = results_markdown(results, when, machine(), revision(HERE.parent))
        out.write_text(text, encoding="utf-8")
        print(f"results written to {out}")
    failed = [r.bench.script for r in results if not r.met]
    if failed:
        print(f"targets missed: {', '.join(failed)}")
        return 1
    print("all targets met")
    return 0


if __name__ == "__main__":
    sys.exit(main())
