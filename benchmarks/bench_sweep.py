"""A sweep's cost over the same runs as separate batches (issue 22 target: <= 5% more).

The sweep is 12 points (the square chase, pursuer1's move 7..12 x wild_one complication or
none) of RUNS runs each, with its Parquet tables and summary; the reference is the same 12
batches (same overrides, same seeds) run one after the other with run_batch. Both on one
worker, with the per-process scenario cache cleared before each (neither inherits the other's
warm fields). Judged on this process's CPU time (the machines are shared and noisy: a
wall-clock time moves with whatever else runs), as the median of ``ROUNDS`` rounds' ratios,
each round both sides back to back, in turn one first and then the other, after one round
not counted (the process's first loads of the engine's modules and the map's files).

Run: python benchmarks/bench_sweep.py [RUNS]   (default 100 runs a point, to fit a busy
two-core machine; the issue's figure is 500: python benchmarks/bench_sweep.py 500)
"""

from __future__ import annotations

import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from engine.batch import runner, work  # noqa: E402
from engine.sweep import run_sweep, sweep_spec  # noqa: E402

SCENARIO = str(ROOT / "scenarios" / "chase.yaml")
VARY = ["pursuer1.stats.move=7,8,9,10,11,12", "settings.wild_one=complication,none"]
TARGET = 1.05
ROUNDS = 6


def main() -> int:
    runs = int(sys.argv[1]) if len(sys.argv) > 1 else 100
    spec = sweep_spec(SCENARIO, VARY, runs, None)
    assert len(spec["points"]) == 12
    tmp = Path(tempfile.mkdtemp(prefix="bench_sweep_"))
    try:

        def sweep() -> tuple[float, float]:
            shutil.rmtree(tmp / "sweep", ignore_errors=True)
            work.WORKER_CACHE.clear()
            t, c = time.perf_counter(), time.process_time()
            run_sweep(SCENARIO, vary=VARY, runs=runs, out_dir=str(tmp / "sweep"))
            return time.process_time() - c, time.perf_counter() - t

        def batches() -> tuple[float, float]:
            shutil.rmtree(tmp / "batches", ignore_errors=True)
            work.WORKER_CACHE.clear()
            t, c = time.perf_counter(), time.process_time()
            for i, p in enumerate(spec["points"]):
                runner.run_batch(
                    SCENARIO,
                    runs=runs,
                    seed=p["seed"],
                    out_dir=str(tmp / "batches" / str(i)),
                    overrides=dict(p["params"]),
                )
            return time.process_time() - c, time.perf_counter() - t

        batches(), sweep()  # not counted: the process's first loads
        rounds = []
        for r in range(ROUNDS):
            if r % 2:
                s_round = sweep()
                b_round = batches()
            else:
                b_round = batches()
                s_round = sweep()
            rounds.append((s_round, b_round))
        # Same runs: each point's runs.jsonl equals its separate batch's.
        for i, p in enumerate(spec["points"]):
            a = (tmp / "sweep" / "points" / p["point"] / "runs.jsonl").read_bytes()
            b = (tmp / "batches" / str(i) / "runs.jsonl").read_bytes()
            assert a == b, f"point {i} differs from its batch"
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    ratios = [sc / bc for (sc, _), (bc, _) in rounds]
    ratio = statistics.median(ratios)
    s_cpu = statistics.median(sc for (sc, _), _ in rounds)
    b_cpu = statistics.median(bc for _, (bc, _) in rounds)
    s_wall = statistics.median(sw for (_, sw), _ in rounds)
    b_wall = statistics.median(bw for _, (_, bw) in rounds)
    print(
        f"sweep of 12 points x {runs} runs: {s_cpu:.2f} CPU-s ({s_wall:.2f} s wall); "
        f"12 separate batches: {b_cpu:.2f} CPU-s ({b_wall:.2f} s wall); CPU ratio, median of "
        f"{ROUNDS} rounds {ratio:.3f} (rounds {min(ratios):.3f}-{max(ratios):.3f}) "
        f"(target <= {TARGET})"
    )
    return 0 if ratio <= TARGET else 1


if __name__ == "__main__":
    sys.exit(main())
