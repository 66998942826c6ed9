"""Movement search benchmarks (issue 9 targets), each against a reference in the same run.

* the whole `tacgrid path` command corner to corner on 256x256 and 512x512 maps, as a
  ratio to ref_path.py (pytmx parse + scipy Dijkstra on a plain grid graph): <= 1.5x;
* peak memory of that `path` command on 512x512: <= 300 MB;
* reach for 30 movement points (generic, speed 30, one turn) on 512x512, in-process:
  <= 1 ms, printed beside scipy's limited Dijkstra on the same graph;
* a hover lookup on the cached search tree: <= 0.1 ms.

Run: python benchmarks/bench_search.py   (exit status 1 if a target is missed)
"""

from __future__ import annotations

import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

import tmxtext  # noqa: E402
from timing import best  # noqa: E402

from engine import systems  # noqa: E402
from engine.movement import MovementGraph  # noqa: E402
from engine.search import dijkstra  # noqa: E402
from engine.tiled import load_map  # noqa: E402


def drawing(n: int, seed: int = 7) -> list[str]:
    rng = random.Random(seed)
    rows = ["".join(rng.choice(".......,,#~_") for _ in range(n)) for _ in range(n)]
    rows[0] = "." + rows[0][1:]
    rows[-1] = rows[-1][:-1] + "."
    return rows


def run_timed(argv: list[str]) -> tuple[float, int]:
    """Wall time and peak RSS (KB) of a child process."""
    t = time.perf_counter()
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, usage = os.wait4(proc.pid, 0)
    elapsed = time.perf_counter() - t
    if status != 0:
        raise SystemExit(f"{argv} failed with status {status}")
    return elapsed, usage.ru_maxrss


def best_of(fn, repeat: int) -> float:
    return best(fn, repeat)[0]


def main() -> int:
    ok = True

    def report(label: str, passed: bool, text: str) -> None:
        nonlocal ok
        ok &= passed
        print(f"{label:<44} {text} {'ok' if passed else 'MISSED'}")

    with tempfile.TemporaryDirectory() as tmp:
        for n in (256, 512):
            path = Path(tmp) / f"m{n}.tmx"
            tmxtext.write(path, drawing(n))
            ours = [
                sys.executable,
                str(ROOT / "main.py"),
                "path",
                str(path),
                "--system",
                "generic",
                "--from",
                "0,0",
                "--to",
                f"{n - 1},{n - 1}",
                "--json",
            ]
            ref = [sys.executable, str(ROOT / "benchmarks" / "ref_path.py"), str(path)]
            runs = [(run_timed(ours), run_timed(ref)) for _ in range(3)]
            t_ours = min(r[0][0] for r in runs)
            t_ref = min(r[1][0] for r in runs)
            ratio = t_ours / t_ref
            report(
                f"path command {n}x{n}",
                ratio <= 1.5,
                f"{t_ours:.2f} s vs ref {t_ref:.2f} s -> {ratio:.2f}x (target <= 1.5x)",
            )
            if n == 512:
                peak = max(r[0][1] for r in runs) / 1024
                report(
                    "path command 512x512 peak memory",
                    peak <= 300,
                    f"{peak:.0f} MB (target <= 300 MB)",
                )

        model = load_map(Path(tmp) / "m512.tmx")
    gen = systems.create("generic")
    graph = MovementGraph(model, gen, gen.token("speed=30"), "walk")
    start = (256, 256)
    t_reach = best_of(lambda: dijkstra(graph, start, limit=graph.denominator), 200)
    from scipy.sparse.csgraph import dijkstra as sp_dijkstra

    csr = graph.csr()
    node = graph.node(start)
    t_scipy = best_of(lambda: sp_dijkstra(csr, indices=node, limit=graph.denominator), 50)
    report(
        "reach 30 movement points, 512x512",
        t_reach <= 1e-3,
        f"{t_reach * 1e3:.3f} ms vs scipy limited Dijkstra {t_scipy * 1e3:.3f} ms -> "
        f"{t_reach / t_scipy:.2f}x (target <= 1 ms)",
    )
    tree = dijkstra(graph, start, limit=graph.denominator)
    far = max(tree.cells(), key=lambda c: tree.ticks(c) or 0)
    t_hover = best_of(lambda: tree.path_to(far), 2000)
    report(
        "hover lookup on the cached tree",
        t_hover <= 1e-4,
        f"{t_hover * 1e6:.1f} us vs reach {t_reach * 1e6:.0f} us -> "
        f"{t_hover / t_reach:.3f}x (target <= 100 us)",
    )
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
