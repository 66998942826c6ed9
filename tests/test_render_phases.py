"""Where a layer's tiles land, worked on whole arrays (engine/viewer/render.py): a scaled
layer's tile copies keyed a column and a row of pixels at a time
(engine/viewer/render.py ``_lattice_phase_keys``) are the keys worked out tile by tile
(``_phase_keys``): the same keys and whole-pixel corners, at any scale and number of
phases, wherever the tiles lie; and it declines (None) what it cannot tabulate. The cells'
origins and the stamps' corners, worked in place, are the plain per-cell formulas."""

from __future__ import annotations

import math
import random

import numpy as np
import pygame
import pytest

from engine.grid import Grid
from engine.viewer.render import (
    PHASES,
    Stamp,
    _lattice_phase_keys,
    _phase_keys,
    _stamp_corners,
    _View,
    cell_origins,
)


def view(scale: float, phases: int) -> _View:
    grid = Grid("orthogonal", 64, 64, 32, 32)
    v = _View(grid, scale, pygame.Rect(0, 0, 100, 100), None, None)  # type: ignore[arg-type]
    v.phases = phases
    return v


def stamps(sizes: list[tuple[int, int]]) -> list[Stamp]:
    return [Stamp(pygame.Surface(size, pygame.SRCALPHA, 32), 0, 0) for size in sizes]


SCALES = [0.125, 0.1, 0.25, 1 / 3, 0.3, 0.5, 0.7, 0.0625, 1.5, 2.5, 0.37]


@pytest.mark.parametrize("scale", SCALES)
@pytest.mark.parametrize("phases", [PHASES, 4, 1])
def test_keys_by_column_and_row_are_the_keys_tile_by_tile(scale: float, phases: int) -> None:
    rng = random.Random(f"{scale}-{phases}")
    for _ in range(6):
        w, h = rng.choice([(32, 32), (33, 17), (32, 36), (7, 5), (64, 48)])
        ready = stamps([(w, h)] * rng.randint(1, 6))
        n = rng.randint(1, 3000)
        idx = np.array([rng.randrange(len(ready)) for _ in range(n)], dtype=np.int64)
        # Tiles on a lattice (a map's cells), off it (offsets, odd places) and negative.
        if rng.random() < 0.5:
            cols = np.array([rng.randrange(200) for _ in range(n)], dtype=np.int64)
            rows = np.array([rng.randrange(200) for _ in range(n)], dtype=np.int64)
            px, py = cols * w + rng.randint(-40, 40), rows * h + rng.randint(-40, 40)
        else:
            px = np.array([rng.randint(-500, 9000) for _ in range(n)], dtype=np.int64)
            py = np.array([rng.randint(-500, 9000) for _ in range(n)], dtype=np.int64)
        v = view(scale, phases)
        got = _lattice_phase_keys(v, ready, idx, px, py)
        assert got is not None
        want = _phase_keys(v, ready, idx, px * scale, py * scale)
        for a, b in zip(got, want, strict=True):
            assert a.dtype == b.dtype
            assert np.array_equal(a, b)


def test_stamps_of_other_sizes_or_spread_out_tiles_are_left_to_the_plain_way() -> None:
    v = view(0.125, PHASES)
    idx = np.array([0, 1, 0], dtype=np.int64)
    px = np.array([0, 32, 64], dtype=np.int64)
    assert _lattice_phase_keys(v, stamps([(32, 32), (32, 33)]), idx, px, px) is None
    # A stamp of another size that no tile uses does not matter.
    ready = stamps([(32, 32), (32, 32), (8, 8)])
    assert _lattice_phase_keys(v, ready, idx, px, px) is not None
    far = np.array([0, 10**7, 5], dtype=np.int64)
    assert _lattice_phase_keys(v, ready, idx, far, px) is None


GRIDS = [
    Grid("orthogonal", 9, 7, 32, 32),
    Grid("isometric", 9, 7, 64, 32),
    Grid("isometric", 9, 7, 33, 17),
    Grid("hexagonal", 9, 7, 32, 36, stagger_axis="y", stagger_index="odd", hex_side=18),
    Grid("hexagonal", 9, 7, 36, 32, stagger_axis="x", stagger_index="even", hex_side=18),
    Grid("staggered", 9, 7, 64, 32, stagger_axis="y", stagger_index="even"),
]


@pytest.mark.parametrize("grid", GRIDS, ids=lambda g: g.orientation)
def test_cell_origins_of_many_cells_are_each_cells_origin(grid: Grid) -> None:
    rng = random.Random(3)
    for dtype in (np.int64, np.int32, np.intp):
        cols = np.array([rng.randrange(-3, 500) for _ in range(400)], dtype=dtype)
        rows = np.array([rng.randrange(-3, 500) for _ in range(400)], dtype=dtype)
        xs, ys = cell_origins(grid, cols, rows)
        assert xs.dtype == ys.dtype == np.int64
        want = [grid.cell_origin((c, r)) for c, r in zip(cols.tolist(), rows.tolist(), strict=True)]
        assert list(zip(xs.tolist(), ys.tolist(), strict=True)) == want
        assert cols.dtype == dtype and rows.dtype == dtype  # the caller's arrays untouched


def test_stamp_corners_are_the_plain_sums() -> None:
    rng = random.Random(4)
    for same in (True, False):
        ready = [
            Stamp(
                pygame.Surface((4, 4)),
                3 if same else rng.randint(-9, 9),
                -2 if same else rng.randint(-9, 9),
            )
            for _ in range(5)
        ]
        idx = np.array([rng.randrange(5) for _ in range(300)], dtype=np.int64)
        xs = np.array([rng.randint(-99, 9999) for _ in range(300)], dtype=np.int64)
        ys2 = np.array([rng.randint(-99, 9999) for _ in range(300)], dtype=np.int64)
        offset = (rng.uniform(-20, 20), rng.uniform(-20, 20))
        dx = np.array([st.dx for st in ready])[idx]
        dy = np.array([st.dy for st in ready])[idx]
        want_x = xs + math.floor(offset[0] + 0.5) + dx
        want_y = ((ys2 + 1) >> 1) + math.floor(offset[1] + 0.5) + dy
        px, py = _stamp_corners(xs.copy(), ys2.copy(), offset, ready, idx)
        assert np.array_equal(px, want_x) and np.array_equal(py, want_y)
        assert px.dtype == py.dtype == np.int64
