"""A scaled layer's tile copies keyed a column and a row of pixels at a time
(engine/viewer/render.py ``_lattice_phase_keys``) are the keys worked out tile by tile
(``_phase_keys``): the same keys and whole-pixel corners, at any scale and number of
phases, wherever the tiles lie; and it declines (None) what it cannot tabulate."""

from __future__ import annotations

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
    _View,
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
