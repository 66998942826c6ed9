"""Viewer frame time on a 100x100 hex map with the reach overlay and a hover path, under
SDL's dummy driver (issue 12 target: median <= 8 ms), beside a frame that only blits the
cached map.

Run: python benchmarks/bench_viewer.py   (exit status 1 if the target is missed)
"""

from __future__ import annotations

import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("SDL_VIDEODRIVER", "dummy")
os.environ.setdefault("SDL_AUDIODRIVER", "dummy")
os.environ.setdefault("PYGAME_HIDE_SUPPORT_PROMPT", "1")
ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "benchmarks")]

import pygame  # noqa: E402
from bench_render import hex_map  # noqa: E402

from engine.viewer.app import Viewer, map_scenario  # noqa: E402

TARGET_MS = 8.0


def main() -> int:
    with tempfile.TemporaryDirectory() as tmp:
        path = hex_map(Path(tmp) / "hex100.tmx", 100)
        scenario = map_scenario(str(path), "generic", {})
        viewer = Viewer(scenario, size=(1280, 800))
        tid = viewer.sim.order[0]
        viewer.select(tid)
        start = viewer.sim.tokens[tid].state.cell
        # Centre the view on the token at zoom 1, then hover a cell two turns away.
        viewer.camera.zoom = 1.0
        cx, cy = viewer.model.grid.cell_center(start)
        viewer.camera.x, viewer.camera.y = cx - 475, cy - 400
        rep = viewer.reach_of(tid)
        far = max(
            (tuple(c["cell"]) for c in rep["cells"]),
            key=lambda c: viewer.model.grid.steps(start, c),
        )
        viewer.hover = far
        for _ in range(5):
            viewer.draw()
        assert viewer.hover_path() is not None and viewer._overlay is not None

        frames = []
        for _ in range(120):
            t = time.perf_counter()
            viewer.draw()
            pygame.display.flip()
            frames.append(time.perf_counter() - t)
        base, _ = viewer._scaled_layers()
        blits = []
        area = pygame.Rect(0, 0, *viewer.view_size)
        for _ in range(120):
            t = time.perf_counter()
            viewer.screen.blit(base, (0, 0), area)
            pygame.display.flip()
            blits.append(time.perf_counter() - t)
        pygame.quit()
    med = statistics.median(frames) * 1000
    ref = statistics.median(blits) * 1000
    ok = med <= TARGET_MS
    print(
        f"viewer frame, 100x100 hex, reach overlay + hover path: median {med:.2f} ms vs map blit "
        f"{ref:.2f} ms -> {med / ref:.1f}x (target <= {TARGET_MS:g} ms) {'ok' if ok else 'MISSED'}"
    )
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
