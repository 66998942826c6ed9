"""Which cells a token of a given size covers (issue 23, "tokens larger than one cell").

A token's ``cell`` is its anchor. On a square grid a size-``k`` token covers the ``k x k``
block whose top-left cell is the anchor (as a token image of ``k`` tiles sits in Tiled and in
virtual tabletops); on a staggered (isometric) map the same block in the map's own diamond
axes. On a hex grid a size-``k`` token covers every hex within ``k - 1`` steps of the anchor
(1, 7, 19 ... hexes), so it stays centred on its anchor whatever the stagger.

:func:`covering` is the other way round (the anchors whose footprint holds a cell: what a
token standing there takes away from a mover of that size), and :func:`dilate` does the
same for a whole per-cell array at once (the worst value under every anchor's footprint).

>>> from engine.grid import Grid
>>> footprint(Grid("orthogonal", 5, 5, 32, 32), (1, 1), 2)
[(1, 1), (2, 1), (1, 2), (2, 2)]
>>> len(footprint(Grid("hexagonal", 9, 9, 28, 32, hex_side=16), (4, 4), 2))
7
>>> covering(Grid("orthogonal", 5, 5, 32, 32), (1, 1), 2)
[(1, 1), (0, 1), (1, 0), (0, 0)]
"""

from __future__ import annotations

from engine.grid import Cell, Grid
from engine.lazy import numpy as np

#: The largest token size accepted (a 10x10 dragon-sized token).
MAX_SIZE = 10

# Staggered (diamond) maps: the headings of one step along the map's own axes u and v.
_U, _V, _U_BACK, _V_BACK = 135, 225, 315, 45


def footprint(grid: Grid, cell: Cell, size: int = 1) -> list[Cell]:
    """The cells a size-``size`` token anchored at ``cell`` covers, in row-major order on
    square grids and ring order on hex grids. Cells off the map are included (the caller
    decides whether a footprint that leaves the map is allowed)."""
    if size <= 1:
        return [cell]
    c, r = cell
    if grid.kind == "square":
        return [(c + dc, r + dr) for dr in range(size) for dc in range(size)]
    if grid.kind == "staggered":
        return _axis_block(grid, cell, size, _U, _V)
    return _hex_within(grid, cell, size - 1)


def covering(grid: Grid, cell: Cell, size: int = 1) -> list[Cell]:
    """The anchors at which a size-``size`` token would cover ``cell`` (off-map ones
    included): the footprint turned round (a hex footprint is its own turn)."""
    if size <= 1:
        return [cell]
    c, r = cell
    if grid.kind == "square":
        return [(c - dc, r - dr) for dr in range(size) for dc in range(size)]
    if grid.kind == "staggered":
        return _axis_block(grid, cell, size, _U_BACK, _V_BACK)
    return _hex_within(grid, cell, size - 1)


def fits(grid: Grid, cell: Cell, size: int = 1) -> bool:
    """Whether every cell of the footprint is on the map."""
    return all(grid.in_bounds(x) for x in footprint(grid, cell, size))


def _axis_block(grid: Grid, cell: Cell, size: int, along_u: int, along_v: int) -> list[Cell]:
    out: list[Cell] = []
    row = cell
    for _ in range(size):
        x = row
        for _ in range(size):
            out.append(x)
            x = grid.step_heading(x, along_u)
        row = grid.step_heading(row, along_v)
    return out


def _hex_within(grid: Grid, center: Cell, radius: int) -> list[Cell]:
    q0, r0, s0 = grid.to_cube(center)
    out: list[Cell] = []
    for dq in range(-radius, radius + 1):
        for dr in range(max(-radius, -dq - radius), min(radius, -dq + radius) + 1):
            out.append(grid.from_cube(q0 + dq, r0 + dr, s0 - dq - dr))
    return out


# --------------------------------------------------------------------------- whole maps


def dilate(grid: Grid, values: np.ndarray, size: int, off_map: int) -> np.ndarray:
    """For every anchor, the largest of ``values`` ((height, width) ints) under a size-``size``
    footprint there, ``off_map`` where the footprint leaves the map.

    Square and staggered: ``size - 1`` one-step maxima along each of the two axes (a ``k x k``
    block is a run of ``k`` along u of runs of ``k`` along v); hex: ``size - 1`` maxima over
    the cell and its six neighbours (the ball of radius ``k - 1``). A few numpy passes
    whatever the map's size.

    >>> g = Grid("orthogonal", 3, 2, 32, 32)
    >>> dilate(g, np.array([[0, 1, 0], [0, 0, 5]]), 2, 9).tolist()
    [[1, 5, 9], [9, 9, 9]]
    """
    out = np.asarray(values, dtype=np.int64)
    if size <= 1:
        return out.copy()
    if grid.kind == "square":
        for _ in range(size - 1):
            out = np.maximum(out, _shift_square(out, 1, 0, off_map))
        for _ in range(size - 1):
            out = np.maximum(out, _shift_square(out, 0, 1, off_map))
        return out
    headings: tuple[tuple[int, ...], ...]
    if grid.kind == "staggered":
        headings = ((_U,), (_V,))
    else:
        headings = (tuple(grid.face_headings()),)
    for group in headings:
        for _ in range(size - 1):
            nxt = out.copy()
            for h in group:
                nxt = np.maximum(nxt, _shift_heading(grid, out, h, off_map))
            out = nxt
    return out


def _shift_square(arr: np.ndarray, dc: int, dr: int, fill: int) -> np.ndarray:
    """``out[r, c] = arr[r + dr, c + dc]`` (``fill`` off the map)."""
    h, w = arr.shape
    out = np.full_like(arr, fill)
    out[: h - dr, : w - dc] = arr[dr:, dc:]
    return out


def _shift_heading(grid: Grid, arr: np.ndarray, heading: int, fill: int) -> np.ndarray:
    """``out[cell] = arr[the neighbour of cell at heading]`` on staggered and hex grids, whose
    offset depends on the row's (or column's) parity: one slice per parity."""
    h, w = arr.shape
    padded = np.full((h + 4, w + 4), fill, dtype=arr.dtype)
    padded[2 : h + 2, 2 : w + 2] = arr
    out = np.empty_like(arr)
    axis_y = grid.stagger_axis == "y"
    for parity in (0, 1):
        rep: Cell = (0, parity) if axis_y else (parity, 0)
        nc, nr = grid.step_heading(rep, heading)
        dc, dr = nc - rep[0], nr - rep[1]
        shifted = padded[2 + dr : 2 + dr + h, 2 + dc : 2 + dc + w]
        sel = (
            (slice(parity, None, 2), slice(None))
            if axis_y
            else (slice(None), slice(parity, None, 2))
        )
        out[sel] = shifted[sel]
    return out
