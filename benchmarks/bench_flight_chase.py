"""A flier chase batch (issue 18): one Mythmaster griffon flying with momentum (RULES.md 6,
engine.sim.flight) hunts two runners on a 64x64 pointy-top hex map strewn with walls.
Target: >= 150 runs/s on one worker.

Printed beside it, measured in the same run: the same scenario with the griffon on the ground
graph (flyer false: it runs like the others), as a ratio of the rates. Rates are judged per
CPU second of the process (the machines are shared: a wall-clock rate moves with whatever
else runs; it is printed beside). The map asks no checks, so every run draws no dice and
plays the same turns: after the first runs, the field cache and the fliers' pilot cache
answer nearly every question (what a batch of a deterministic scenario should cost).

Run: python benchmarks/bench_flight_chase.py   (exit status 1 if the target is missed)
"""

from __future__ import annotations

import random
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

import tmxtext  # noqa: E402

from engine.batch import run_chunk, run_seeds  # noqa: E402

TARGET = 150.0
RUNS = 400
N = 64

SCENARIO = """name: Flier chase 64x64
map: m.tmx
system: mythmaster
turns: 20
goals: {capture: 0}
tokens:
  - {id: runner1, side: quarry, policy: quarry, cell: [30, 28], pace: sprint,
     stats: {adaptability: 14}}
  - {id: runner2, side: quarry, policy: quarry, cell: [36, 36], pace: sprint,
     stats: {adaptability: 13}}
  - {id: griffon, side: pursuer, policy: pursuer, cell: [4, 4], pace: sprint,
     stats: {adaptability: 9, flyer: FLYER}FLIGHT}
"""


def drawing(n: int, seed: int = 18) -> list[str]:
    """Open ground with wall clusters (about 4% of the cells), the start cells clear."""
    rng = random.Random(seed)
    rows = [["."] * n for _ in range(n)]
    for _ in range(n * n // 120):
        c, r = rng.randrange(n), rng.randrange(n)
        for dc in range(rng.randint(1, 3)):
            for dr in range(rng.randint(1, 2)):
                if c + dc < n and r + dr < n:
                    rows[r + dr][c + dc] = "#"
    for c, r in ((30, 28), (36, 36), (4, 4)):
        rows[r][c] = "."
    return ["".join(row) for row in rows]


def rate(path: str) -> tuple[float, float, dict[str, int]]:
    """Runs per CPU second and per wall second of one worker, and the outcomes."""
    seeds = run_seeds(18, RUNS)
    items = list(enumerate(seeds))
    run_chunk(path, (), items[:20])  # warm: load, graphs, flight rules, first fields
    t, c = time.perf_counter(), time.process_time()
    out = run_chunk(path, (), items)
    wall, cpu = time.perf_counter() - t, time.process_time() - c
    tally: dict[str, int] = {}
    for r in out:
        tally[r["outcome"]] = tally.get(r["outcome"], 0) + 1
    return len(out) / cpu, len(out) / wall, tally


def main() -> int:
    with tempfile.TemporaryDirectory() as tmp:
        d = Path(tmp)
        tmxtext.write(d / "m.tmx", drawing(N), orientation="hexagonal", hexside=16)
        flying = d / "flying.yaml"
        flying.write_text(
            SCENARIO.replace("FLYER", "true").replace("FLIGHT", ", flight: {heading: 120}")
        )
        ground = d / "ground.yaml"
        ground.write_text(SCENARIO.replace("FLYER", "false").replace("FLIGHT", ""))
        fly_rate, fly_wall, fly_tally = rate(str(flying))
        ground_rate, ground_wall, ground_tally = rate(str(ground))
    ok = fly_rate >= TARGET
    print(
        f"flier chase 64x64 hex, 1 worker, {RUNS} runs after 20: {fly_rate:.0f} runs per CPU "
        f"second ({fly_wall:.0f} per wall second) {fly_tally} (target >= {TARGET:g}) "
        f"{'ok' if ok else 'MISSED'}"
    )
    print(
        f"   same chase with the griffon on the ground graph: {ground_rate:.0f} runs per CPU "
        f"second {ground_tally}; flying costs {ground_rate / fly_rate:.2f}x the time "
        f"(ratio flying/ground {fly_rate / ground_rate:.2f})"
    )
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
