"""Which cells a token of a given size covers (issue 23, "tokens larger than one cell").

A token's ``cell`` is its anchor. On a square grid a size-``k`` token covers the ``k x k``
block whose top-left cell is the anchor (as a token image of ``k`` tiles sits in Tiled and in
virtual tabletops). On a hex grid a size-``k`` token covers every hex within ``k - 1`` steps of
the anchor (1, 7, 19 ... hexes), so it stays centred on its anchor whatever the stagger.

>>> from engine.grid import Grid
>>> footprint(Grid("orthogonal", 5, 5, 32, 32), (1, 1), 2)
[(1, 1), (2, 1), (1, 2), (2, 2)]
>>> len(footprint(Grid("hexagonal", 9, 9, 28, 32, hex_side=16), (4, 4), 2))
7
"""

from __future__ import annotations

from engine.grid import Cell, Grid

#: The largest token size accepted (a 10x10 dragon-sized token).
MAX_SIZE = 10


def footprint(grid: Grid, cell: Cell, size: int = 1) -> list[Cell]:
    """The cells a size-``size`` token anchored at ``cell`` covers, in row-major order on
    square grids and ring order on hex grids. Cells off the map are included (the caller
    decides whether a footprint that leaves the map is allowed)."""
    if size <= 1:
        return [cell]
    c, r = cell
    if grid.kind == "square":
        return [(c + dc, r + dr) for dr in range(size) for dc in range(size)]
    return _hex_within(grid, cell, size - 1)


def _hex_within(grid: Grid, center: Cell, radius: int) -> list[Cell]:
    q0, r0, s0 = grid.to_cube(center)
    out: list[Cell] = []
    for dq in range(-radius, radius + 1):
        for dr in range(max(-radius, -dq - radius), min(radius, -dq + radius) + 1):
            out.append(grid.from_cube(q0 + dq, r0 + dr, s0 - dq - dr))
    return out
