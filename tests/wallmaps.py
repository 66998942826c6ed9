"""Random small maps with walls, for the property tests that compare search engines
(tests/test_walls.py, tests/test_api_context.py)."""

from __future__ import annotations

import random

import numpy as np

from engine.grid import Grid
from engine.mapmodel import MapModel, Terrain, Wall


def random_walled_model(
    kind: str, rnd: random.Random, terrains: tuple[Terrain, ...], picks: list[int]
) -> MapModel:
    """A 7 x 6 map of ``kind`` (``square-alt``, ``square-equal``, ``square-none``, ``hex``
    or ``staggered``): each cell's terrain index drawn from ``picks``, one to five
    random three-point walls anywhere on it, and corners pass or block."""
    w, h = 7, 6
    if kind.startswith("square"):
        rule = {"alt": "alternate", "equal": "equal", "none": "none"}[kind.split("-")[1]]
        grid = Grid("orthogonal", w, h, 32, 32, diagonals=rule)
    elif kind == "hex":
        grid = Grid("hexagonal", w, h, 28, 32, "y", "odd", 16)
    else:
        grid = Grid("staggered", w, h, 64, 32, "y", "odd", diagonals="equal")
    pw, ph = grid.pixel_size()
    walls = tuple(
        Wall(i + 1, "wall", tuple((rnd.uniform(0, pw), rnd.uniform(0, ph)) for _ in range(3)))
        for i in range(rnd.randint(1, 5))
    )
    ids = np.array([[rnd.choice(picks) for _ in range(w)] for _ in range(h)], dtype=np.int32)
    return MapModel(
        grid=grid,
        terrain_ids=ids,
        terrains=terrains,
        walls=walls,
        corners=rnd.choice(["pass", "block"]),
    )
