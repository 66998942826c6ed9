"""A sweep's cost over the same runs as separate batches (issue 22 target: <= 5% more).

The sweep is 12 points (the square chase, pursuer1's move 7..12 x wild_one complication or
none) of RUNS runs each, with its Parquet tables and summary; the reference is the same 12
batches (same overrides, same seeds) run one after the other with run_batch. Both on one
worker, each timed best of REPEAT, alternating, with the per-process scenario cache cleared
before each (neither inherits the other's warm fields).

Run: python benchmarks/bench_sweep.py [RUNS]   (default 100 runs a point, to fit a busy
two-core machine; the issue's figure is 500: python benchmarks/bench_sweep.py 500)
"""

from __future__ import annotations

import shutil
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
REPEAT = 2


def main() -> int:
    runs = int(sys.argv[1]) if len(sys.argv) > 1 else 100
    spec = sweep_spec(SCENARIO, VARY, runs, None)
    assert len(spec["points"]) == 12
    tmp = Path(tempfile.mkdtemp(prefix="bench_sweep_"))
    try:

        def sweep() -> float:
            shutil.rmtree(tmp / "sweep", ignore_errors=True)
            work.WORKER_CACHE.clear()
            t = time.perf_counter()
            run_sweep(SCENARIO, vary=VARY, runs=runs, out_dir=str(tmp / "sweep"))
            return time.perf_counter() - t

        def batches() -> float:
            shutil.rmtree(tmp / "batches", ignore_errors=True)
            work.WORKER_CACHE.clear()
            t = time.perf_counter()
            for i, p in enumerate(spec["points"]):
                runner.run_batch(
                    SCENARIO,
                    runs=runs,
                    seed=p["seed"],
                    out_dir=str(tmp / "batches" / str(i)),
                    overrides=dict(p["params"]),
                )
            return time.perf_counter() - t

        s_times, b_times = [], []
        for _ in range(REPEAT):
            b_times.append(batches())
            s_times.append(sweep())
        # Same runs: each point's runs.jsonl equals its separate batch's.
        for i, p in enumerate(spec["points"]):
            a = (tmp / "sweep" / "points" / p["point"] / "runs.jsonl").read_bytes()
            b = (tmp / "batches" / str(i) / "runs.jsonl").read_bytes()
            assert a == b, f"point {i} differs from its batch"
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    s, b = min(s_times), min(b_times)
    ratio = s / b
    print(
        f"sweep of 12 points x {runs} runs: {s:.2f} s; 12 separate batches: {b:.2f} s; "
        f"ratio {ratio:.3f} (target <= {TARGET})"
    )
    return 0 if ratio <= TARGET else 1


if __name__ == "__main__":
    sys.exit(main())
