"""Movement search benchmarks (issue 20), each against python-tcod measured in the same run.

Needs the ``bench`` extra (``pip install -e '.[bench]'``: python-tcod).

* the whole ``tacgrid path`` command (a subprocess: start-up, imports, parse, search, JSON)
  corner to corner on square maps 256^2 .. 2048^2 with ``diagonals=equal`` and
  ``alternate``, and on a 512^2 hex map, against the whole ref_path.py script (ElementTree
  parse of the same file, tcod cost array, ``tcod.path.Pathfinder`` to the goal): time
  **<= 1.0x**, peak memory (the child's ``ru_maxrss``) **<= 2x**; the two path costs must be
  equal;
* the Python API's query context (:class:`engine.api.Context`): ``path`` between 1000
  seeded random pairs on one 256^2 map **<= 2 ms** a query, beside tcod's in-process
  ``Pathfinder`` on the same cost array; ``reach`` for 30 movement points on 512^2 **<= 0.5
  ms**, beside tcod's ``dijkstra2d`` on the window the move can reach;
* a hover lookup on a cached search tree: <= 0.1 ms;
* the long path: the whole ``tacgrid path --json`` on a serpentine maze (``--maze N``,
  default 1024: a path through every other row, N^2 / 2 steps, every step and turn
  written, the cells, steps and plan each a block of text at a time) against the whole
  ref_path.py on it: CPU (user + system of the child) **<= 1x**, peak memory **<= 1x**;
  the same cost.

Maps are generated deterministically into benchmarks/data/ (benchmarks/mapgen.py).

Run: python benchmarks/bench_search.py [--sizes 256,512] [--no-commands] [--no-api]
[--main OTHER/main.py] (exit status 1 if a target is missed)
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import time
from fractions import Fraction
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "benchmarks")]

import mapgen  # noqa: E402
from timing import best, run_compiled  # noqa: E402

try:
    import numpy as np
    import tcod.path
except ImportError:  # pragma: no cover - the bench extra is missing
    raise SystemExit("bench_search needs python-tcod: pip install -e '.[bench]'") from None

#: Ticks per cell of the benchmark token (generic, speed 30 ft on 5-ft cells: 6 cells a
#: turn), so a path's exact turns times this is tcod's integer cost.
CELLS_PER_TURN = 6


#: The children run as installed Python runs: bytecode cached (some shells here set
#: PYTHONDONTWRITEBYTECODE, which makes every start compile the whole engine anew).
ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


def run_timed(argv: list[str]) -> tuple[float, int, str]:
    """Wall time, peak RSS (KB) and stdout of a child process."""
    t = time.perf_counter()
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=ENV)
    out = proc.stdout.read() if proc.stdout else b""
    _, status, usage = os.wait4(proc.pid, 0)
    elapsed = time.perf_counter() - t
    if status != 0:
        raise SystemExit(f"{argv} failed with status {status}")
    return elapsed, usage.ru_maxrss, out.decode()


class Report:
    def __init__(self) -> None:
        self.ok = True
        self.rows: list[tuple[str, str, str]] = []

    def __call__(self, label: str, passed: bool, text: str) -> None:
        self.ok &= passed
        print(f"{label:<46} {text} {'ok' if passed else 'MISSED'}", flush=True)


def commands(report: Report, sizes: list[int], repeat: int, main_py: str) -> None:
    cells: list[tuple[str, int, float, float, int, int]] = []
    cases = [(n, rule) for n in sizes for rule in ("equal", "alternate")]
    if 512 in sizes:
        cases.append((512, "hex"))
    for n, rule in cases:
        path = mapgen.map_file(n, rule, "hexagonal" if rule == "hex" else "orthogonal")
        goal = f"{n - 1},{n - 1}"
        ours = [sys.executable, main_py, "path", str(path), "--system", "generic"]
        ours += ["--from", "0,0", "--to", goal, "--json"]
        ref = [sys.executable, str(ROOT / "benchmarks" / "ref_path.py"), str(path), "0,0", goal]
        run_timed(ours)  # warm: bytecode, the file in the page cache
        run_timed(ref)
        runs = [(run_timed(ours), run_timed(ref)) for _ in range(repeat)]
        t_ours = min(r[0][0] for r in runs)
        t_ref = min(r[1][0] for r in runs)
        m_ours = max(r[0][1] for r in runs)
        m_ref = max(r[1][1] for r in runs)
        got = Fraction(json.loads(runs[0][0][2])["turns_exact"]) * CELLS_PER_TURN
        want = json.loads(runs[0][1][2])["cost"]
        label = f"path command {n}^2 {rule}"
        if got != want:
            report(label, False, f"cost {got} != tcod's {want}")
            continue
        ratio, mem = t_ours / t_ref, m_ours / m_ref
        report(
            label,
            ratio <= 1.0 and mem <= 2.0,
            f"{t_ours:.2f} s vs tcod {t_ref:.2f} s -> {ratio:.2f}x (<= 1.0x); "
            f"{m_ours / 1024:.0f} MB vs {m_ref / 1024:.0f} MB -> {mem:.2f}x (<= 2x)",
        )
        cells.append((rule, n, t_ours, t_ref, m_ours, m_ref))
    print("\nper cell (time and peak memory divided by the map's cells):")
    print("| map | tacgrid | tcod script | ns a cell | tcod | peak MB (bytes a cell) | tcod |")
    print("|---|---|---|---|---|---|---|")
    for rule, n, t_o, t_r, m_o, m_r in cells:
        print(
            f"| {n}^2 {rule} | {t_o:.2f} s | {t_r:.2f} s | {t_o / n / n * 1e9:.0f} | "
            f"{t_r / n / n * 1e9:.0f} | {m_o / 1024:.0f} ({m_o * 1024 / n / n:.0f}) | "
            f"{m_r / 1024:.0f} ({m_r * 1024 / n / n:.0f}) |"
        )
    print()


def _open_cells(model) -> list[tuple[int, int]]:  # type: ignore[no-untyped-def]
    walk = np.array([t.move != "blocked" for t in model.terrains])[model.terrain_ids]
    rows, cols = np.nonzero(walk)
    return list(zip(cols.tolist(), rows.tolist(), strict=True))


def api_rows(report: Report, queries: int) -> None:
    from engine import api

    # --- repeated paths on 256^2
    model = api.load_map(mapgen.map_file(256, "equal"))
    rules = api.system("generic")
    token = rules.token("speed=30")
    rng = random.Random(20)
    open_cells = _open_cells(model)
    pairs = [(rng.choice(open_cells), rng.choice(open_cells)) for _ in range(queries)]
    t = time.perf_counter()
    ctx = api.Context(model, rules, token)
    ctx.path(*pairs[0])  # the first query builds the graph and the landmarks
    t_ctx = time.perf_counter() - t
    t = time.perf_counter()
    answers = [ctx.path(a, b) for a, b in pairs]
    per = (time.perf_counter() - t) / queries
    graph = ctx.graph()
    cost = np.where(graph.enter_ticks < 0, 0, graph.enter_ticks).reshape(256, 256)
    cost = cost.astype(np.int32)
    simple = tcod.path.SimpleGraph(cost=cost, cardinal=1, diagonal=1)
    t = time.perf_counter()
    totals = []
    for a, b in pairs:
        pf = tcod.path.Pathfinder(simple)
        pf.add_root((a[1], a[0]))
        pf.path_to((b[1], b[0]))
        totals.append(int(pf.distance[b[1], b[0]]))
    per_tcod = (time.perf_counter() - t) / queries
    same = all(
        Fraction(r["turns_exact"]) * CELLS_PER_TURN == c
        for r, c in zip(answers, totals, strict=True)
    )
    report(
        f"api Context.path, {queries} queries on 256^2",
        per <= 2e-3 and same,
        f"{per * 1e3:.2f} ms a query vs tcod Pathfinder {per_tcod * 1e3:.2f} ms -> "
        f"{per / per_tcod:.2f}x (<= 2 ms; totals {'equal' if same else 'DIFFER'}; the "
        f"context's first query, graph and landmarks, {t_ctx:.2f} s)",
    )

    # --- reach for 30 movement points on 512^2
    big = api.load_map(mapgen.map_file(512, "equal"))
    ctx = api.Context(big, rules, token)
    start = (256, 256)
    ctx.reach(start, pace="walk")  # warm
    t_reach = best(lambda: ctx.reach(start, pace="walk"), 300)[1]
    rep = ctx.reach(start, pace="walk")
    wg = ctx.graph("walk")
    costb = np.where(wg.enter_ticks < 0, 0, wg.enter_ticks).reshape(512, 512).astype(np.int32)
    r = CELLS_PER_TURN + 1

    def window() -> np.ndarray:
        win = costb[start[1] - r : start[1] + r + 1, start[0] - r : start[0] + r + 1]
        dist = np.full(win.shape, np.iinfo(np.int32).max, dtype=np.int32)
        dist[r, r] = 0
        tcod.path.dijkstra2d(dist, win, 1, 1, out=dist)
        return dist

    t_win = best(window, 300)[1]
    n_tcod = int((window() <= CELLS_PER_TURN).sum())
    report(
        "api Context.reach, 30 movement points, 512^2",
        t_reach <= 5e-4 and n_tcod == len(rep["cells"]),
        f"{t_reach * 1e3:.3f} ms vs tcod dijkstra2d window {t_win * 1e3:.3f} ms -> "
        f"{t_reach / t_win:.1f}x (<= 0.5 ms; {len(rep['cells'])} cells, tcod {n_tcod})",
    )
    tree = rep["tree"]
    far = max(tree.cells(), key=lambda c: tree.ticks(c) or 0)
    t_hover = best(lambda: tree.path_to(far), 2000)[0]
    report(
        "hover lookup on the cached tree",
        t_hover <= 1e-4,
        f"{t_hover * 1e6:.1f} us vs reach {t_reach * 1e6:.0f} us (<= 100 us)",
    )


def maze_file(n: int) -> Path:
    """A serpentine ``n`` x ``n`` maze (tests/tmxtext.py's): open rows joined at
    alternate ends, so the path from 0,0 to the far end passes every row (n^2 / 2 steps)."""
    path = mapgen.DATA / f"bench-maze-{n}.tmx"
    if not path.exists():
        sys.path.insert(0, str(ROOT / "tests"))
        from tmxtext import maze  # noqa: PLC0415

        mapgen.DATA.mkdir(parents=True, exist_ok=True)
        maze(n, path.with_suffix(".part"))
        path.with_suffix(".part").replace(path)
    return path


def run_cpu(argv: list[str]) -> tuple[float, int, bytes]:
    """CPU seconds (user + system), peak RSS (KB) and the first 64 KB of stdout of a child
    whose output goes to a file, read back only for its head (a maze path's JSON is 100s
    of MB)."""
    import tempfile  # noqa: PLC0415

    with tempfile.TemporaryFile() as sink:
        proc = subprocess.Popen(argv, stdout=sink, stderr=subprocess.DEVNULL, env=ENV)
        _, status, usage = os.wait4(proc.pid, 0)
        if status != 0:
            raise SystemExit(f"{argv} failed with status {status}")
        sink.seek(0)
        head = sink.read(1 << 16)
        size = sink.seek(0, 2)
        if b'"turns_exact"' not in head and size > 1 << 16:
            # tacgrid's document: cells first, then the figures; find turns_exact.
            sink.seek(0)
            for line in sink:
                if line.lstrip().startswith(b'"turns_exact"'):
                    head = line
                    break
    return usage.ru_utime + usage.ru_stime, usage.ru_maxrss, head


def long_path(report: Report, n: int, main_py: str) -> None:
    """The whole ``tacgrid path --json`` on the ``n``^2 serpentine maze (a path of n^2 / 2
    steps: every cell, step and turn written) against ref_path.py on the same maze: CPU
    and peak memory, the same cost."""
    path = maze_file(n)
    goal = f"{n - 1},{n - 2}"
    ours = [sys.executable, main_py, "path", str(path), "--system", "generic"]
    ours += ["--token", "speed=30", "--from", "0,0", "--to", goal, "--json"]
    ref = [sys.executable, str(ROOT / "benchmarks" / "ref_path.py"), str(path), "0,0", goal]
    run_cpu(ref)  # warm: bytecode, the file in the page cache
    c_ours, m_ours, head = run_cpu(ours)
    c_ref, m_ref, _ = run_cpu(ref)
    ref_out = run_timed(ref)[2]
    turns = next(ln for ln in head.decode().splitlines() if '"turns_exact"' in ln)
    got = Fraction(turns.split(":", 1)[1].strip().strip(",").strip('"')) * CELLS_PER_TURN
    want = json.loads(ref_out)["cost"]
    label = f"long path {n}^2 maze (CPU, peak)"
    if got != want:
        report(label, False, f"cost {got} != tcod's {want}")
        return
    ratio, mem = c_ours / c_ref, m_ours / m_ref
    report(
        label,
        ratio <= 1.0 and mem <= 1.0,
        f"{c_ours:.2f} s CPU vs tcod {c_ref:.2f} s -> {ratio:.2f}x (<= 1x); "
        f"{m_ours / 1024:.0f} MB vs {m_ref / 1024:.0f} MB -> {mem:.2f}x (<= 1x)",
    )


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", default="256,512,1024,2048")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--queries", type=int, default=1000)
    ap.add_argument("--no-commands", action="store_true")
    ap.add_argument("--no-api", action="store_true")
    ap.add_argument("--maze", type=int, default=1024, help="the long path's maze side (0: none)")
    ap.add_argument(
        "--main", default=str(ROOT / "main.py"), help="the main.py of another checkout to time"
    )
    args = ap.parse_args()
    run_compiled(Path(args.main).resolve().parent)
    report = Report()
    if not args.no_commands:
        commands(report, [int(s) for s in args.sizes.split(",")], args.repeat, args.main)
    if args.maze:
        long_path(report, args.maze, args.main)
    if not args.no_api:
        api_rows(report, args.queries)
    return 0 if report.ok else 1


if __name__ == "__main__":
    sys.exit(main())
