"""Thin walls, doors and windows between cells, and the ``corners`` rule (MAP-FORMAT.md).

A wall is a polyline in map pixels (:class:`~engine.mapmodel.Wall`); a closed door is a
wall, an open one is not; a window stops movement as a wall does. What a wall stops is a
*step*: the move from one cell to a neighbour, drawn as the segment between the two cells'
centres. The line a GM draws need not be snapped to the grid: a wall drawn along a grid
line, or a little off it, still lies between the centres on either side of it.

* **A step to a cell that shares a side** (square, isometric and staggered sides, every hex
  step) is blocked when a wall meets its segment. A wall that runs along the segment (through
  the centres of a row) does not stop moving along it; a cell centre that lies exactly on a
  wall counts as lying on the wall's left (a consistent tie-break, so such a wall still
  parts the cells on its two sides).
* **A diagonal step** (square grids, staggered corner neighbours) passes through the one
  corner P the two cells share. It is blocked when a wall *crosses* it (through P from one
  side of the step to the other, or anywhere else between the centres), or when walls close
  *both* ways round P (a wall on ``a -> b`` or ``b -> d``, and one on ``a -> c`` or
  ``c -> d``, where b and c are the two cells beside the step). A wall that only *ends* at P
  is passed, as a token passes the end of a wall.
* ``corners = block`` (a map property) also refuses a diagonal when *either* way round P is
  closed: a wall on any of those four side steps, or a ``blocked`` cell as b or c. So no
  diagonal slips between two blocked cells or round the end of a wall.

The result is a per-cell bit mask over the grid's neighbour slots (``Grid.offsets``: slot k
set = the step in that direction is blocked), in both directions of every step. Large
tokens (:func:`anchor_blocks`) see a step of their anchor as blocked when any cell of their
footprint takes a blocked step, and an anchor whose footprint straddles a wall is refused.

>>> from engine.grid import Grid
>>> from engine.mapmodel import MapModel, Terrain, Wall
>>> g = Grid("orthogonal", 3, 1, 10, 10, diagonals="none")
>>> m = MapModel.uniform(g, Terrain(), walls=(Wall(1, "wall", ((10.0, 0.0), (10.0, 10.0))),))
>>> bits = step_blocks(m)
>>> blocked_step(g, bits, (0, 0), (1, 0)), blocked_step(g, bits, (1, 0), (2, 0))
(True, False)
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import replace
from functools import lru_cache

from engine.errors import MapError
from engine.footprint import covering, dilate, footprint
from engine.grid import Cell, Grid
from engine.lazy import numpy as np
from engine.mapmodel import MapModel, Wall

#: Most sample points along every wall of one map together (each a half-cell piece of a
#: wall): bounds the work a hostile map can ask for. Each sample is some fifty candidate
#: steps tested (the cells around it, each way out of them): 400 000 samples, 200 000 cells
#: of wall, are about 8 s of CPU; a battle map's walls are a few thousand.
MAX_WALL_SAMPLES = 400_000
#: (segment, cell) pairs whose candidate steps are tested at once (about 100 MB of arrays).
WALL_BLOCK_PAIRS = 1 << 16

Segment = tuple[float, float, float, float]


# --------------------------------------------------------------------------- public


def step_blocks(model: MapModel) -> np.ndarray | None:
    """Blocked neighbour slots per cell (``(height * width,)`` uint16 bit masks) for this
    map's walls, doors and ``corners`` rule; None when nothing is blocked (no walls, corners
    pass). A derived model (a large token's anchors, tokens in the way) carries its own."""
    if model.step_blocks is not None:
        return model.step_blocks if model.step_blocks.any() else None
    walls = tuple(w for w in model.walls if w.blocks)
    block_corners = model.corners == "block"
    if not walls and not block_corners:
        return None
    bits = _wall_bits(model.grid, walls).copy()
    if block_corners:
        blocked = np.asarray([t.move == "blocked" for t in model.terrains], dtype=bool)[
            model.terrain_ids
        ].ravel()
        bits |= _corner_bits(model.grid, walls, blocked.tobytes())
    if not bits.any():
        return None
    return bits


def no_blocks(grid: Grid) -> np.ndarray:
    """A mask that blocks nothing, for a derived model whose walls are none (so that its
    own walls are not derived again at the wrong size)."""
    return np.zeros(grid.width * grid.height, dtype=np.uint16)


def blocked_step(grid: Grid, bits: np.ndarray | None, a: Cell, b: Cell) -> bool:
    """Whether the step from cell ``a`` to its neighbour ``b`` is blocked in ``bits``."""
    if bits is None:
        return False
    slot = slot_of(grid, a, b)
    return slot is not None and bool(int(bits[grid.index(a)]) >> slot & 1)


def slot_of(grid: Grid, a: Cell, b: Cell) -> int | None:
    """The neighbour slot (index into ``grid.offsets``) of the step ``a -> b``, if any."""
    for k, (dc, dr, _) in enumerate(grid.offsets(grid.parity(a))):
        if (a[0] + dc, a[1] + dr) == b:
            return k
    return None


def anchor_blocks(model: MapModel, size: int) -> tuple[np.ndarray | None, list[Cell]]:
    """A size-``size`` token's view of ``model``'s walls: the blocked slots of its anchors
    (a step is blocked when any footprint cell's step in that direction is) and the anchors
    whose footprint straddles a wall (refused: a token cannot stand across a wall)."""
    base = step_blocks(model)
    if base is None or size <= 1:
        return base, []
    grid = model.grid
    h, w = grid.height, grid.width
    k0 = max(len(grid.offsets(0)), len(grid.offsets(1)))
    out = np.zeros(h * w, dtype=np.uint16)
    grid_bits = base.reshape(h, w)
    for slot in range(k0):
        plane = ((grid_bits >> slot) & 1).astype(np.int64)
        if not plane.any():
            continue
        grown = dilate(grid, plane, size, off_map=0)
        out |= (grown.ravel().astype(np.uint16) << slot).astype(np.uint16)
    straddle: set[Cell] = set()
    walls_only = _wall_bits(grid, tuple(x for x in model.walls if x.blocks))
    for idx in np.nonzero(walls_only)[0].tolist():
        f = grid.cell_of_index(idx)
        for k, (dc, dr, _) in enumerate(grid.offsets(grid.parity(f))):
            if not int(walls_only[idx]) >> k & 1:
                continue
            g = (f[0] + dc, f[1] + dr)
            for a in covering(grid, f, size):
                if grid.in_bounds(a) and g in footprint(grid, a, size):
                    straddle.add(a)
    return out, sorted(straddle, key=lambda c: (c[1], c[0]))


def check_walls(path: str, grid: Grid, walls: Sequence[Wall]) -> None:
    """Refuse, in one line naming ``path``, walls too long to read in bounded time."""
    if not walls:
        return
    segs, _, _ = _segment_arrays(tuple(walls))
    if not len(segs):
        return
    _, clipped = _clip_arrays(grid, segs)
    step = max(1.0, float(min(grid.tile_width, grid.tile_height))) / 2
    x0, y0, x1, y1 = clipped.T
    total = float(np.sum(np.hypot(x1 - x0, y1 - y0) / step + 1))
    if total > MAX_WALL_SAMPLES:
        raise MapError(
            f"{path}: its walls run {total / 2:.0f} cells in all, more than "
            f"{MAX_WALL_SAMPLES // 2} cells; draw fewer or shorter walls"
        )


def with_doors(model: MapModel, states: dict[int, bool]) -> MapModel:
    """A copy of ``model`` with its doors ``states`` (door id -> open) set; the model itself
    when nothing changes. Raises MapError for an id that is not a door of the map."""
    by_id = {w.id: w for w in model.walls}
    for wall_id in states:
        w = by_id.get(wall_id)
        if w is None or w.kind != "door":
            known = ", ".join(str(x.id) for x in doors_of(model)) or "none"
            raise MapError(f"door {wall_id}: no such door on this map (its doors: {known})")
    walls = tuple(
        replace(w, open=states[w.id]) if w.id in states and states[w.id] != w.open else w
        for w in model.walls
    )
    if walls == model.walls:
        return model
    return replace(model, walls=walls, step_blocks=None)


def doors_of(model: MapModel) -> list[Wall]:
    """The map's doors, in file order."""
    return [w for w in model.walls if w.kind == "door"]


def door_at(model: MapModel, x: float, y: float, within: float) -> Wall | None:
    """The door whose line passes nearest the pixel ``(x, y)``, within ``within`` pixels."""
    best: tuple[float, Wall] | None = None
    for wall in doors_of(model):
        for x0, y0, x1, y1 in wall_segments(wall):
            d = _point_segment_distance(x, y, x0, y0, x1, y1)
            if d <= within and (best is None or d < best[0]):
                best = (d, wall)
    return None if best is None else best[1]


# --------------------------------------------------------------------------- geometry


def wall_segments(wall: Wall) -> list[Segment]:
    """The straight pieces of a wall, in order (zero-length ones left out)."""
    pts = wall.points
    return [
        (x0, y0, x1, y1)
        for (x0, y0), (x1, y1) in zip(pts, pts[1:], strict=False)
        if (x0, y0) != (x1, y1)
    ]


def _point_segment_distance(
    px: float, py: float, x0: float, y0: float, x1: float, y1: float
) -> float:
    dx, dy = x1 - x0, y1 - y0
    length2 = dx * dx + dy * dy
    t = 0.0 if length2 == 0 else max(0.0, min(1.0, ((px - x0) * dx + (py - y0) * dy) / length2))
    return math.hypot(px - (x0 + t * dx), py - (y0 + t * dy))


def _sign(values: np.ndarray, tol: np.ndarray) -> np.ndarray:
    """-1, 0 or +1 per value, 0 within ``tol`` of zero."""
    return np.where(np.abs(values) <= tol, 0, np.sign(values)).astype(np.int8)


def _orient(
    ax: np.ndarray, ay: np.ndarray, bx: np.ndarray, by: np.ndarray, cx: np.ndarray, cy: np.ndarray
) -> np.ndarray:
    """Twice the signed area of (a, b, c): > 0 when c lies left of a -> b (y down: clockwise)."""
    return (bx - ax) * (cy - ay) - (by - ay) * (cx - ax)


def _segment_arrays(walls: tuple[Wall, ...]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Every wall's pieces as rows ``(x0, y0, x1, y1)``, with the previous and next piece
    of the same line (-1: none; a closed outline wraps round)."""
    rows: list[Segment] = []
    prev: list[int] = []
    nxt: list[int] = []
    for wall in walls:
        pieces = wall_segments(wall)
        closed = len(wall.points) > 2 and wall.points[0] == wall.points[-1]
        first, count = len(rows), len(pieces)
        for i, piece in enumerate(pieces):
            rows.append(piece)
            prev.append(first + i - 1 if i > 0 else (first + count - 1 if closed else -1))
            nxt.append(first + i + 1 if i < count - 1 else (first if closed else -1))
    segs = np.array(rows, dtype=np.float64).reshape(-1, 4)
    return segs, np.array(prev, dtype=np.int64), np.array(nxt, dtype=np.int64)


def _clip_arrays(grid: Grid, segs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Segments clipped to the map's pixel rectangle grown by two tiles (Liang-Barsky), so
    a wall running far off the map costs nothing beyond its edge: (kept, kept rows clipped)."""
    pw, ph = grid.pixel_size()
    m = 2.0 * max(grid.tile_width, grid.tile_height)
    x0, y0, x1, y1 = segs.T
    dx, dy = x1 - x0, y1 - y0
    t0 = np.zeros(len(segs))
    t1 = np.ones(len(segs))
    ok = np.ones(len(segs), dtype=bool)
    with np.errstate(divide="ignore", invalid="ignore"):
        for p, q in ((-dx, x0 + m), (dx, pw + m - x0), (-dy, y0 + m), (dy, ph + m - y0)):
            zero = p == 0
            ok &= ~(zero & (q < 0))
            r = q / np.where(zero, 1.0, p)
            t0 = np.where(~zero & (p < 0), np.maximum(t0, r), t0)
            t1 = np.where(~zero & (p > 0), np.minimum(t1, r), t1)
    ok &= t0 <= t1
    clipped = np.stack([x0 + t0 * dx, y0 + t0 * dy, x0 + t1 * dx, y0 + t1 * dy], axis=1)
    return ok, clipped[ok]


def _square_kind(grid: Grid) -> bool:
    return grid.orientation in ("orthogonal", "isometric")


def _cells_at(grid: Grid, x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Tiled's ``screenToTileCoords`` for many pixels (columns, rows; may be off the map)."""
    if grid.orientation == "orthogonal":
        return (np.floor(x / grid.tile_width).astype(np.int64),
                np.floor(y / grid.tile_height).astype(np.int64))  # fmt: skip
    if grid.orientation == "isometric":
        tx = (x - grid.height * grid.tile_width // 2) / grid.tile_width
        ty = y / grid.tile_height
        return np.floor(ty + tx).astype(np.int64), np.floor(ty - tx).astype(np.int64)
    got = [grid.cell_at(float(a), float(b)) for a, b in zip(x.tolist(), y.tolist(), strict=True)]
    cols = np.array([c for c, _ in got], dtype=np.int64)
    rows = np.array([r for _, r in got], dtype=np.int64)
    return cols, rows


def _centres(grid: Grid, idx: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Cell centres in map pixels for cell indices (as ``Grid.cell_center``)."""
    w = grid.width
    c, r = idx % w, idx // w
    if grid.orientation == "orthogonal":
        return (c + 0.5) * grid.tile_width, (r + 0.5) * grid.tile_height
    if grid.orientation == "isometric":
        tw, th = grid.tile_width, grid.tile_height
        return (c - r) * tw / 2 + grid.height * tw // 2, (c + r + 1) * th / 2
    uniq, back = np.unique(idx, return_inverse=True)
    pts = [grid.cell_center(grid.cell_of_index(int(i))) for i in uniq.tolist()]
    xs = np.array([p[0] for p in pts], dtype=np.float64)
    ys = np.array([p[1] for p in pts], dtype=np.float64)
    return xs[back], ys[back]


def _tables(grid: Grid) -> tuple[list[list[tuple[int, int, bool]]], list[list[int]]]:
    """Per stagger parity: the neighbour offsets, and for each slot the slot of the way back
    (from the neighbour, whose parity may differ)."""
    tables = [list(grid.offsets(0)), list(grid.offsets(1))]
    back: list[list[int]] = []
    for par in (0, 1):
        row = []
        for dc, dr, _ in tables[par]:
            step = dr if (grid.kind != "square" and grid.stagger_axis == "y") else dc
            other = par ^ (step & 1) if grid.kind != "square" else 0
            row.append(next(k for k, (a, b, _) in enumerate(tables[other]) if (a, b) == (-dc, -dr)))
        back.append(row)
    return tables, back


def _parity(grid: Grid, idx: np.ndarray) -> np.ndarray:
    if grid.kind == "square":
        return np.zeros(len(idx), dtype=np.int64)
    w = grid.width
    return ((idx // w) if grid.stagger_axis == "y" else (idx % w)) & 1


def _ring(grid: Grid) -> list[list[tuple[int, int]]]:
    """Per parity: a cell and every cell touching it (sides and corners)."""
    if grid.kind == "square":
        return [[(dc, dr) for dr in (-1, 0, 1) for dc in (-1, 0, 1)]] * 2
    full = replace(grid, diagonals="equal") if grid.kind == "staggered" else grid
    return [[(0, 0)] + [(dc, dr) for dc, dr, _ in full.offsets(par)] for par in (0, 1)]


def _near_pairs(grid: Grid, segs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(segment, cell index) for every cell a segment passes through or beside: sample
    points half a tile apart, their cells and every cell touching those."""
    w, h = grid.width, grid.height
    ok, clipped = _clip_arrays(grid, segs)
    seg_ids = np.nonzero(ok)[0]
    if not len(seg_ids):
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    step = max(1.0, float(min(grid.tile_width, grid.tile_height))) / 2
    x0, y0, x1, y1 = clipped.T
    n = np.maximum(1, np.ceil(np.hypot(x1 - x0, y1 - y0) / step)).astype(np.int64)
    counts = n + 1
    owner = np.repeat(np.arange(len(seg_ids)), counts)
    starts = np.cumsum(counts) - counts
    t = (np.arange(int(counts.sum())) - starts[owner]) / n[owner]
    px = x0[owner] + t * (x1 - x0)[owner]
    py = y0[owner] + t * (y1 - y0)[owner]
    cols, rows = _cells_at(grid, px, py)
    sid = seg_ids[owner]
    par = ((rows if grid.stagger_axis == "y" else cols) & 1) if grid.kind != "square" else 0
    out_s: list[np.ndarray] = []
    out_c: list[np.ndarray] = []
    rings = _ring(grid)
    for p in (0, 1) if grid.kind != "square" else (0,):
        sel = (par == p) if grid.kind != "square" else slice(None)
        for dc, dr in rings[p]:
            c, r = cols[sel] + dc, rows[sel] + dr
            inside = (c >= 0) & (c < w) & (r >= 0) & (r < h)
            out_s.append(sid[sel][inside])
            out_c.append((r * w + c)[inside])
    keys = np.unique(np.concatenate(out_s) * (w * h) + np.concatenate(out_c))
    return keys // (w * h), keys % (w * h)


# A few maps (and door states) at once: a 4096^2 map's mask is 32 MB.
@lru_cache(maxsize=8)
def _wall_bits(grid: Grid, walls: tuple[Wall, ...]) -> np.ndarray:
    """Slots blocked by ``walls`` alone (both directions of every blocked step): the rules
    of the module docstring, for every (segment, step) pair near a wall, a block at a time."""
    n = grid.width * grid.height
    bits = np.zeros(n, dtype=np.uint16)
    segs, prev, nxt = _segment_arrays(walls)
    if not len(segs):
        bits.flags.writeable = False
        return bits
    seg_of, cell_of = _near_pairs(grid, segs)
    tables, back = _tables(grid)
    diag_bits = np.zeros(n, dtype=np.uint16)
    corners: list[np.ndarray] = []
    # A block of (segment, cell) pairs at a time: each pair makes up to eight candidate
    # steps of some twenty arrays, so a long wall's pairs at once took gigabytes.
    for lo in range(0, len(seg_of), WALL_BLOCK_PAIRS):
        a, k, b, blocked, diag = _blocked_steps(
            grid,
            segs,
            prev,
            nxt,
            seg_of[lo : lo + WALL_BLOCK_PAIRS],
            cell_of[lo : lo + WALL_BLOCK_PAIRS],
            tables,
        )
        side = blocked & ~diag
        _set_bits(grid, bits, a[side], k[side], b[side], back)
        # Diagonals: crossed, or walls both ways round their corner (side steps only).
        crossed = blocked & diag
        _set_bits(grid, diag_bits, a[crossed], k[crossed], b[crossed], back)
        corners.append(np.unique(a[diag]))
    diag_bits |= _both_ways_closed(grid, bits, np.unique(np.concatenate(corners)), tables)
    bits |= diag_bits
    bits.flags.writeable = False
    return bits


def _blocked_steps(
    grid: Grid,
    segs: np.ndarray,
    prev: np.ndarray,
    nxt: np.ndarray,
    seg_of: np.ndarray,
    cell_of: np.ndarray,
    tables: list[list[tuple[int, int, bool]]],
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """For (segment, cell) pairs: every step (cell ``a``, slot ``k``, neighbour ``b``) on
    the map, whether the segment blocks it, and whether it is a diagonal."""
    w, h = grid.width, grid.height
    # Every (segment, cell a, slot k) with the neighbour b on the map.
    cand_s: list[np.ndarray] = []
    cand_a: list[np.ndarray] = []
    cand_k: list[np.ndarray] = []
    cand_b: list[np.ndarray] = []
    cand_d: list[np.ndarray] = []
    par = _parity(grid, cell_of)
    for p in (0, 1) if grid.kind != "square" else (0,):
        sel = par == p
        sa, ca = seg_of[sel], cell_of[sel]
        c, r = ca % w, ca // w
        for slot, (dc, dr, is_diag) in enumerate(tables[p]):
            nc, nr = c + dc, r + dr
            inside = (nc >= 0) & (nc < w) & (nr >= 0) & (nr < h)
            cand_s.append(sa[inside])
            cand_a.append(ca[inside])
            cand_k.append(np.full(int(inside.sum()), slot, dtype=np.int64))
            cand_b.append((nr * w + nc)[inside])
            cand_d.append(np.full(int(inside.sum()), is_diag, dtype=bool))
    sid = np.concatenate(cand_s)
    a = np.concatenate(cand_a)
    k = np.concatenate(cand_k)
    b = np.concatenate(cand_b)
    diag = np.concatenate(cand_d)
    px, py = _centres(grid, a)
    qx, qy = _centres(grid, b)
    x0, y0, x1, y1 = segs[sid].T
    eps = 1e-7 * max(grid.tile_width, grid.tile_height)
    tol_s = eps * np.hypot(qx - px, qy - py)
    tol_w = eps * np.hypot(x1 - x0, y1 - y0)
    s1 = _sign(_orient(px, py, qx, qy, x0, y0), tol_s)
    s2 = _sign(_orient(px, py, qx, qy, x1, y1), tol_s)
    # A centre exactly on the wall counts as on its left (0 -> +1).
    s3 = _sign(_orient(x0, y0, x1, y1, px, py), tol_w)
    s4 = _sign(_orient(x0, y0, x1, y1, qx, qy), tol_w)
    s3 = np.where(s3 == 0, 1, s3)
    s4 = np.where(s4 == 0, 1, s4)
    meets = ~((s1 == 0) & (s2 == 0)) & (s1 * s2 <= 0) & (s3 * s4 < 0)
    proper = meets & (s1 * s2 < 0)
    blocked = meets & (~diag | proper)
    # A diagonal meeting a wall's end point: blocked where the line goes on through it.
    at_end = meets & diag & ~proper
    for here, other, link, far_col in ((s2, s1, nxt, 2), (s1, s2, prev, 0)):
        pick = at_end & (here == 0) & (link[sid] >= 0)
        if pick.any():
            far = segs[link[sid[pick]]]
            s_far = _sign(
                _orient(
                    px[pick], py[pick], qx[pick], qy[pick], far[:, far_col], far[:, far_col + 1]
                ),
                tol_s[pick],
            )
            hit = np.zeros(len(sid), dtype=bool)
            hit[np.nonzero(pick)[0]] = (s_far != 0) & (s_far == -other[pick])
            blocked |= hit
    return a, k, b, blocked, diag


def _set_bits(
    grid: Grid, bits: np.ndarray, a: np.ndarray, k: np.ndarray, b: np.ndarray, back: list[list[int]]
) -> None:
    """Set slot ``k`` of each cell ``a`` and the slot back from ``b`` (both directions)."""
    if not len(a):
        return
    np.bitwise_or.at(bits, a, (1 << k).astype(np.uint16))
    back_tab = np.array(back, dtype=np.int64)
    kb = back_tab[_parity(grid, a), k]
    np.bitwise_or.at(bits, b, (1 << kb).astype(np.uint16))


def _side_walled(grid: Grid, side_bits: np.ndarray) -> dict[tuple[int, int], np.ndarray]:
    """Square kinds: per side offset, which cells have that side step walled ((h, w) bool)."""
    h, w = grid.height, grid.width
    plane = side_bits.reshape(h, w)
    return {
        (dc, dr): ((plane >> k) & 1).astype(bool)
        for k, (dc, dr, diag) in enumerate(grid.offsets(0))
        if not diag
    }


def _shift(arr: np.ndarray, dc: int, dr: int, fill: bool) -> np.ndarray:
    """``out[r, c] = arr[r + dr, c + dc]`` (``fill`` off the map)."""
    h, w = arr.shape
    out = np.full_like(arr, fill)
    rs = slice(max(0, -dr), min(h, h - dr))
    cs = slice(max(0, -dc), min(w, w - dc))
    out[rs, cs] = arr[max(0, dr) : min(h, h + dr), max(0, dc) : min(w, w + dc)]
    return out


def _diagonal_ways(
    grid: Grid, side_bits: np.ndarray, dc: int, dr: int
) -> tuple[np.ndarray, np.ndarray]:
    """Square kinds, diagonal (dc, dr) from every cell: is the way round through (c+dc, r)
    walled, and the way through (c, r+dr)? ((h, w) bool each)."""
    walled = _side_walled(grid, side_bits)
    across, down = walled[(dc, 0)], walled[(0, dr)]
    # a -> x1 = (c + dc, r), then x1 -> d by (0, dr); a -> x2 = (c, r + dr), then (dc, 0).
    way1 = across | _shift(down, dc, 0, False)
    way2 = down | _shift(across, 0, dr, False)
    return way1, way2


def _both_ways_closed(
    grid: Grid, side_bits: np.ndarray, cells: np.ndarray, tables: list[list[tuple[int, int, bool]]]
) -> np.ndarray:
    """Diagonal slots whose corner is walled both ways round (module docstring)."""
    n = grid.width * grid.height
    out = np.zeros(n, dtype=np.uint16)
    if not side_bits.any():
        return out
    if _square_kind(grid):
        for k, (dc, dr, diag) in enumerate(tables[0]):
            if not diag:
                continue
            way1, way2 = _diagonal_ways(grid, side_bits, dc, dr)
            closed = (way1 & way2).ravel()
            out |= (closed.astype(np.uint16) << k).astype(np.uint16)
        return out
    for idx in cells.tolist():
        cell = grid.cell_of_index(idx)
        for k, (dc, dr, diag) in enumerate(grid.offsets(grid.parity(cell))):
            d = (cell[0] + dc, cell[1] + dr)
            if not diag or not grid.in_bounds(d):
                continue
            ways = [
                blocked_step(grid, side_bits, cell, x) or blocked_step(grid, side_bits, x, d)
                for x in _beside(grid, cell, d)
            ]
            if len(ways) == 2 and all(ways):
                out[idx] |= np.uint16(1 << k)
    return out


def _side_neighbours(grid: Grid, cell: Cell) -> list[Cell]:
    c, r = cell
    return [
        (c + dc, r + dr)
        for dc, dr, diag in grid.offsets(grid.parity(cell))
        if not diag and grid.in_bounds((c + dc, r + dr))
    ]


def _beside(grid: Grid, a: Cell, d: Cell) -> list[Cell]:
    """The cells beside a diagonal step: those that share a side with both ends."""
    theirs = set(_side_neighbours(grid, d))
    return [x for x in _side_neighbours(grid, a) if x in theirs]


@lru_cache(maxsize=4)
def _corner_bits(grid: Grid, walls: tuple[Wall, ...], blocked_bytes: bytes) -> np.ndarray:  # noqa: C901
    """``corners = block``: diagonals with either way round closed (a blocked cell beside
    the step, or a wall on one of the four side steps round its corner)."""
    n = grid.width * grid.height
    h, w = grid.height, grid.width
    bits = np.zeros(n, dtype=np.uint16)
    tables = [grid.offsets(0), grid.offsets(1)]
    if not any(diag for table in tables for *_, diag in table):
        return bits
    blocked = np.frombuffer(blocked_bytes, dtype=bool)
    all_walls = _wall_bits(grid, walls)
    side_mask = np.uint16(sum(1 << k for k, (*_, d) in enumerate(tables[0]) if not d))
    side_walls = all_walls & side_mask if _square_kind(grid) else all_walls
    if _square_kind(grid):
        plane = blocked.reshape(h, w)
        for k, (dc, dr, diag) in enumerate(tables[0]):
            if not diag:
                continue
            way1, way2 = _diagonal_ways(grid, side_walls, dc, dr)
            x1 = _shift(plane, dc, 0, True)
            x2 = _shift(plane, 0, dr, True)
            refuse = (way1 | way2 | x1 | x2).ravel()
            bits |= (refuse.astype(np.uint16) << k).astype(np.uint16)
        return bits
    # Staggered maps: the cells beside a diagonal by their shared sides.
    seeds = set(np.nonzero(blocked)[0].tolist()) | set(np.nonzero(side_walls)[0].tolist())
    todo: set[int] = set()
    for idx in seeds:
        cell = grid.cell_of_index(idx)
        todo.add(idx)
        todo.update(grid.index(nb) for nb in grid.neighbours(cell))
    for idx in sorted(todo):
        a = grid.cell_of_index(idx)
        for k, (dc, dr, diag) in enumerate(grid.offsets(grid.parity(a))):
            d = (a[0] + dc, a[1] + dr)
            if not diag or not grid.in_bounds(d):
                continue
            beside = _beside(grid, a, d)
            refuse = len(beside) < 2
            for x in beside:
                if (
                    blocked[grid.index(x)]
                    or blocked_step(grid, side_walls, a, x)
                    or blocked_step(grid, side_walls, x, d)
                ):
                    refuse = True
            if refuse:
                bits[idx] |= np.uint16(1 << k)
    return bits
