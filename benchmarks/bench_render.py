"""Drawing a 100x100 hex map with the shipped tileset, as a ratio to one blit of the result.

The reference is what a viewer frame pays once the static map is cached: blitting the whole
map surface onto a same-sized one. ``render_map`` runs when the map (or a layer) changes.
Run: python benchmarks/bench_render.py   (no target yet; the viewer's frame budget comes later)
"""

from __future__ import annotations

import os
import random
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("SDL_VIDEODRIVER", "dummy")
os.environ.setdefault("SDL_AUDIODRIVER", "dummy")
os.environ.setdefault("PYGAME_HIDE_SUPPORT_PROMPT", "1")

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import pygame  # noqa: E402
from timing import best  # noqa: E402

from engine.viewer.render import load_for_render, render_map  # noqa: E402

TILESET = ROOT / "assets" / "terrain_hex_pointy.tsx"
SIZE = 100


def hex_map(path: Path, size: int, seed: int = 7) -> Path:
    """A size x size pointy hex map painted with the 14 tiles of the shipped hex tileset."""
    rng = random.Random(seed)
    rows = [",".join(str(rng.randint(1, 14)) for _ in range(size)) for _ in range(size)]
    path.write_text(
        '<?xml version="1.0" encoding="UTF-8"?>\n'
        '<map version="1.8" tiledversion="1.8.2" orientation="hexagonal" '
        f'renderorder="right-down" width="{size}" height="{size}" tilewidth="32" '
        'tileheight="36" infinite="0" hexsidelength="18" staggeraxis="y" staggerindex="odd">\n'
        f' <tileset firstgid="1" source="{TILESET.as_posix()}"/>\n'
        f' <layer id="1" name="terrain" width="{size}" height="{size}">\n'
        '  <data encoding="csv">\n' + ",\n".join(rows) + "\n</data>\n </layer>\n</map>\n",
        encoding="utf-8",
    )
    return path


def main() -> int:
    with tempfile.TemporaryDirectory() as tmp:
        model, tmx = load_for_render(hex_map(Path(tmp) / "hex100.tmx", SIZE))
    t = time.perf_counter()
    surface = render_map(model, tmx)  # builds the tile table and the stamp cache
    cold = time.perf_counter() - t
    warm_min, warm_med = best(lambda: render_map(model, tmx), 7)
    target = pygame.Surface(surface.get_size(), pygame.SRCALPHA, 32)
    blit_min, blit_med = best(lambda: target.blit(surface, (0, 0)), 50)
    w, h = surface.get_size()
    print(
        f"render {SIZE}x{SIZE} hex ({w}x{h} px, {SIZE * SIZE} tiles): "
        f"warm {warm_min * 1000:.1f} ms (median {warm_med * 1000:.1f}), "
        f"first call {cold * 1000:.1f} ms"
    )
    print(
        f"blit of the cached {w}x{h} surface: {blit_min * 1000:.2f} ms "
        f"(median {blit_med * 1000:.2f}) -> render/blit {warm_min / blit_min:.1f}x"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
