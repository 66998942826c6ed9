"""A live drag in the viewer (issue 40), against python-tcod measured in the same run:

* ``Context.reach`` for a 30-cell mover (generic, speed 150 on 5-ft cells, one turn at walk)
  on a 256^2 map, from a new start cell each time (no search of that start kept), beside
  tcod's ``dijkstra2d`` on the window the move can reach from the same starts: **<= 5x**
  (the issue's 0.5 ms beside tcod's ~0.1 ms), the cells equal; asked typed
  (``Context.query.reach``: what the viewer's live drag asks) and as the contract's dict
  (``Context.reach``: a dict and a list per cell, which Python's cyclic garbage collector
  then walks as the answers are kept);
* a route through two waypoints re-priced as the mouse moves one cell at a time
  (``Context.path(..., via=...)``, legs of about 10 cells): **<= 20x** tcod's window
  (the issue's 2 ms beside it).

Run: python benchmarks/bench_drag.py [--starts N] (exit status 1 if a target is missed)
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "benchmarks")]

import mapgen  # noqa: E402

try:
    import numpy as np
    import tcod.path
except ImportError:  # pragma: no cover - the bench extra is missing
    raise SystemExit("bench_drag needs python-tcod: pip install -e '.[bench]'") from None

SIZE = 256
CELLS = 30  # speed 150 ft on 5-ft cells: 30 cells a turn at walk


def _timed(fn, *args) -> tuple[float, object]:  # type: ignore[no-untyped-def]
    t = time.perf_counter()
    got = fn(*args)
    return time.perf_counter() - t, got


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--starts", type=int, default=300)
    args = ap.parse_args()
    from engine import api
    from engine.search import NoPath

    model = api.load_map(mapgen.map_file(SIZE, "equal"))
    rules = api.system("generic")
    ctx = api.Context(model, rules, rules.token("speed=150"))
    graph = ctx.graph("walk")
    den = graph.denominator
    cost = np.where(graph.enter_ticks < 0, 0, graph.enter_ticks).reshape(SIZE, SIZE)
    cost = cost.astype(np.int32)
    far = np.iinfo(np.int32).max
    walkable = np.flatnonzero(cost.ravel() > 0)
    rng = random.Random(40)
    starts = [(int(i % SIZE), int(i // SIZE)) for i in rng.sample(walkable.tolist(), args.starts)]
    ctx.reach(starts[-1], pace="walk")  # the graph's arrays are made once per graph

    # The window's reach in cells, worked out once (not per start: the reference times
    # tcod's search on the window, not a scan of the whole map).
    r = den // int(cost[cost > 0].min()) + 1

    def window(start: tuple[int, int]) -> int:
        c0, r0 = max(0, start[0] - r), max(0, start[1] - r)
        win = cost[r0 : start[1] + r + 1, c0 : start[0] + r + 1]
        dist = np.full(win.shape, far, dtype=np.int32)
        dist[start[1] - r0, start[0] - c0] = 0
        tcod.path.dijkstra2d(dist, win, 1, 1, out=dist)
        return int((dist <= den).sum())

    ok_reach = True
    med_ref = 0.0
    for label, ask in (
        ("Context.query.reach (typed), 30-cell mover", lambda s: ctx.query.reach(s, pace="walk")),
        ("Context.reach (dict), 30-cell mover", lambda s: ctx.reach(s, pace="walk")),
    ):
        ours, ref, same = [], [], True
        rep = None
        for start in starts:
            t_ref, n_ref = _timed(window, start)
            del rep  # the last answer is kept until the next is made, as a caller keeps it
            t_ours, rep = _timed(ask, start)
            ours.append(t_ours)
            ref.append(t_ref)
            cells = rep.cells if hasattr(rep, "cells") else rep["cells"]  # type: ignore[index]
            same &= n_ref == len(cells)
        med, worst, med_ref = statistics.median(ours), max(ours), statistics.median(ref)
        ok = med / med_ref <= 5 and same
        ok_reach &= ok
        print(
            f"{label:<46} median {med * 1e3:.3f} ms (slowest {worst * 1e3:.2f} ms) on 256^2, "
            f"cold, vs tcod dijkstra2d window {med_ref * 1e3:.3f} ms -> {med / med_ref:.1f}x "
            f"(<= 5x; {len(starts)} starts, cells {'equal' if same else 'DIFFER'}) "
            f"{'ok' if ok else 'MISSED'}",
            flush=True,
        )

    # A drag: start, two waypoints dropped, the mouse moving on one cell at a time.
    drags = []
    for start in starts[:40]:
        pts = [start]
        for _ in range(2):
            c, r = pts[-1]
            pts.append((min(SIZE - 1, c + 7), min(SIZE - 1, r + 5 - 10 * (len(pts) % 2))))
        mouse = [(min(SIZE - 1, pts[-1][0] + k), pts[-1][1]) for k in range(1, 9)]
        drags.append((pts, mouse))
    times = []
    for pts, mouse in drags:
        for m in mouse:
            if cost[m[1], m[0]] == 0 or any(cost[p[1], p[0]] == 0 for p in pts):
                continue
            try:
                t, _ = _timed(lambda a, b, v: ctx.path(a, b, via=v), pts[0], m, pts[1:])
            except NoPath:
                continue
            times.append(t)
    med_route = statistics.median(times)
    ok_route = med_route / med_ref <= 20
    print(
        f"{'route re-priced per mouse move, 2 waypoints':<46} median {med_route * 1e3:.3f} ms "
        f"vs tcod dijkstra2d window {med_ref * 1e3:.3f} ms -> {med_route / med_ref:.1f}x "
        f"(<= 20x; {len(times)} moves) {'ok' if ok_route else 'MISSED'}",
        flush=True,
    )
    return 0 if ok_reach and ok_route else 1


if __name__ == "__main__":
    sys.exit(main())
