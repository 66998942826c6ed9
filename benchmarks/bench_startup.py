"""Start-up time of the quick commands (issue 20), beside the bare interpreter in the same run.

"Import what a command needs, when it needs it": ``tacgrid systems`` and ``tacgrid info MAP``
answer in **<= 0.15 s** (the best of the runs, wall clock, a subprocess each: interpreter
start, imports, the work, the output). ``python -c pass`` is timed in the same rounds as the
reference (the machines are noisy): each row gives its ratio to it and the time over it,
which is what the engine itself costs. ``--help`` is listed for information only (no target).

The runs are interleaved (a round runs the reference and every command once, after one
warm-up round), so a busy moment slows them all alike.

Run: python benchmarks/bench_startup.py [--repeat N] [--main OTHER/main.py]
(exit status 1 if a target is missed)
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

from timing import run_compiled

ROOT = Path(__file__).resolve().parent.parent

#: The issue's target for the best start of each targeted command, in seconds.
TARGET = 0.15

#: The children run as installed Python runs: bytecode cached (some shells here set
#: PYTHONDONTWRITEBYTECODE, which makes every start compile the whole engine anew).
ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}

#: (label, arguments after main.py, judged against TARGET).
COMMANDS: tuple[tuple[str, tuple[str, ...], bool], ...] = (
    ("systems", ("systems",), True),
    ("systems --json", ("systems", "--json"), True),
    ("info maps/encounter.tmx", ("info", str(ROOT / "maps" / "encounter.tmx")), True),
    ("--help", ("--help",), False),
)


def run_timed(argv: list[str]) -> float:
    """Wall time of a child process (its output read and dropped); a failure stops the run."""
    t = time.perf_counter()
    proc = subprocess.run(argv, capture_output=True, env=ENV, check=False)
    elapsed = time.perf_counter() - t
    if proc.returncode != 0:
        err = proc.stderr.decode(errors="replace").strip().splitlines()[-1:]
        raise SystemExit(f"{argv} failed with status {proc.returncode}: {' '.join(err)}")
    return elapsed


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=15, help="timed rounds (after one warm-up)")
    ap.add_argument(
        "--main", default=str(ROOT / "main.py"), help="the main.py of another checkout to time"
    )
    args = ap.parse_args()
    run_compiled(Path(args.main).resolve().parent)
    ref_argv = [sys.executable, "-c", "pass"]
    argvs = [[sys.executable, args.main, *cmd] for _, cmd, _ in COMMANDS]
    times: list[list[float]] = [[] for _ in range(len(argvs) + 1)]
    for round_ in range(args.repeat + 1):
        for i, argv in enumerate([ref_argv, *argvs]):
            t = run_timed(argv)
            if round_:  # round 0 warms the bytecode caches and the page cache
                times[i].append(t)
    ref_best, ref_med = min(times[0]), statistics.median(times[0])
    print(
        f"{'python -c pass':<26} best {ref_best * 1000:6.1f} ms  median {ref_med * 1000:6.1f} ms"
        f"  (reference, {args.repeat} runs each)"
    )
    ok = True
    for (label, _, judged), ts in zip(COMMANDS, times[1:], strict=True):
        t_best, t_med = min(ts), statistics.median(ts)
        line = (
            f"{label:<26} best {t_best * 1000:6.1f} ms  median {t_med * 1000:6.1f} ms  "
            f"{t_best / ref_best:4.2f}x the bare interpreter, "
            f"+{(t_best - ref_best) * 1000:5.1f} ms"
        )
        if judged:
            passed = t_best <= TARGET
            ok &= passed
            line += f"  (target <= {TARGET:.2f} s) {'ok' if passed else 'MISSED'}"
        print(line, flush=True)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
