"""Viewer frame time and memory, under SDL's dummy driver.

* issue 12: a 100x100 hex map with the reach overlay and a hover path, median frame <= 8 ms
  (beside a frame that only blits the map chunks in view);
* issue 20: a 403x403 map (maps/chase.tmx's terrain repeated), panned 8 px a frame for 600
  frames at zooms 1, 0.5 and 0.13: median frame <= 8 ms (95th percentile and worst frame
  reported: a frame that meets a chunk not drawn yet draws it), and the whole viewer process
  peaks at <= 400 MB resident (its own process, started by a small launcher).

Run: python benchmarks/bench_viewer.py   (exit status 1 if a target is missed)
"""

from __future__ import annotations

import os
import resource
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
from bench_render import chase_map, hex_map, run  # noqa: E402

from engine.viewer.app import Viewer, map_scenario  # noqa: E402
from engine.viewer.render import MapChunks  # noqa: E402

TARGET_MS = 8.0
MEMORY_MB = 400
PAN_ZOOMS = (1.0, 0.5, 0.13)


def hex_overlay() -> bool:
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
        rep = viewer.reach_of(tid).answer
        far = max(
            (cell for cell, _, _ in rep.cells),
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
        z, (ox, oy), chunks = viewer._visible_chunks()
        c = MapChunks.CHUNK
        blits = []
        for _ in range(120):
            t = time.perf_counter()
            for i, j in chunks:
                viewer.screen.blit(viewer.map_surface.chunk(z, i, j), (i * c - ox, j * c - oy))
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
    return ok


def pan(path: str) -> int:
    """In its own process: open the map, pan at each zoom, print the frame times."""
    t = time.perf_counter()
    viewer = Viewer(map_scenario(path, "generic", {}), size=(1280, 800))
    viewer.draw()
    opened = time.perf_counter() - t
    ok = True
    for zoom in PAN_ZOOMS:
        viewer.camera.zoom = zoom
        viewer.camera.x = viewer.camera.y = 100.0
        for _ in range(3):
            viewer.draw()
        frames = []
        for _ in range(600):
            t = time.perf_counter()
            viewer.camera.x += 8 / zoom
            viewer.camera.y += 3 / zoom
            viewer.draw()
            pygame.display.flip()
            frames.append(time.perf_counter() - t)
        frames.sort()
        med = statistics.median(frames) * 1000
        hit = med <= TARGET_MS
        ok &= hit
        print(
            f"  zoom {zoom:g}: median {med:.2f} ms, 95th percentile "
            f"{frames[int(0.95 * len(frames))] * 1000:.2f} ms, worst {frames[-1] * 1000:.1f} ms "
            f"(target median <= {TARGET_MS:g} ms) {'ok' if hit else 'MISSED'}; chunk cache "
            f"{viewer.map_surface.cache.bytes / 2**20:.0f} MB"
        )
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"  opened and first frame in {opened:.2f} s; peak resident {rss:.0f} MB (in-process)")
    pygame.quit()
    return 0 if ok else 1


def main() -> int:
    if len(sys.argv) == 3 and sys.argv[1] == "--pan":
        return pan(sys.argv[2])
    ok = hex_overlay()
    with tempfile.TemporaryDirectory() as tmp:
        path = chase_map(Path(tmp) / "chase403.tmx", 403)
        print("viewer on a 403x403 map, panning:")
        sys.stdout.flush()
        try:
            _, rss = run([sys.executable, __file__, "--pan", str(path)], show=True)
            status = 0
        except SystemExit as exc:
            print(exc)
            rss, status = float("nan"), 1
    hit = rss <= MEMORY_MB
    print(
        f"  viewer process peak resident {rss:.0f} MB (target <= {MEMORY_MB} MB) "
        f"{'ok' if hit else 'MISSED'}"
    )
    return 0 if ok and hit and status == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
