"""Where a quarry with no safe exit flees (:func:`flee_choice`): the cell of this turn from
which it holds the largest region (:func:`held_cell`), or a refuge further off; pure
functions of the turn arrays and the quarry's profile, kept by the field cache
(:meth:`engine.sim.cache.FieldCache.flee_cell`)."""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any, NamedTuple

import numpy as np

from engine import kernel
from engine.grid import Cell, Grid
from engine.movement import MovementGraph
from engine.policies.region import held_region
from engine.sim.fields import Profile


def flee_choice(
    g: MovementGraph,
    cell: Cell,
    mine: np.ndarray,
    threat: np.ndarray,
    taken: frozenset[Cell],
    crossing: tuple[Cell, Fraction] | None = None,
    prof: Profile | None = None,
    centres: np.ndarray | None = None,
) -> Cell | None:
    """Where a quarry with no safe exit flees (the quarry policy; None: it stays), from
    ``mine`` (turns from it to every cell, its field's expected time: a climb priced at
    its expected whole turns), ``threat`` (the nearest pursuer's turns) and the cells
    ``taken`` by other tokens (never chosen).

    Of the cells it reaches this turn (``mine`` <= 1) it takes, given its profile ``prof``
    (the graph ``mine`` was made on), the one from which it holds the largest region
    (:func:`held_cell`: the cells it gets to a whole turn before the pursuers), then the
    one farthest from the pursuers (the most threat), then the least time, then the
    lowest index; without ``prof``, the one farthest from the pursuers.

    The margin of a cell is ``threat - mine``: how many turns it would hold there before
    the first pursuer could come. A cell further off is taken instead where its margin is
    larger than that of every cell of this turn (the largest margin, then the least time,
    then the lowest index): a cliff the pursuers cannot climb, a lake they swim slowly.
    Given ``prof``, only a refuge of the terrain (:func:`_slow_to_enter`: a cell no way
    enters in less than a turn), or a cell from which it holds, once there (the pursuers
    having moved as long as it took), no smaller a region than from this turn's choice:
    the far corner of a dead end is no refuge. A crossing under way (``crossing``: the cell and the share
    done) is priced by what is left of it, ``(1 - progress)`` of its time, so the quarry
    goes on with the climb it started rather than another as good. One greedy look at the
    fields, not a plan: the way there is not weighed, only where it ends. ``centres``:
    :func:`cell_centres` of the grid, where the caller keeps them (else worked out for the
    cells weighed: the same numbers)."""
    scan = flee_scan(g.grid, mine, threat, taken, crossing)
    best: int | None = None
    held = 0
    if scan.near and prof is not None:
        best, held = held_cell(prof, cell, scan, mine, threat, centres)
    elif scan.near:
        best = scan.farthest
    beyond = scan.beyond
    if beyond >= 0 and (
        prof is None
        or best is None
        or _slow_to_enter(prof, beyond)
        or _held_from(prof, beyond, threat, scan.cost) >= held
    ):
        best = beyond
    if best is None:
        return None
    got = g.grid.cell_of_index(best)
    return None if got == cell else got


#: How many of the cells a quarry reaches this turn :func:`held_cell` weighs by the region
#: each holds: one search each, bounded by its region, so a flight costs a few of those and
#: never a field per cell.
FLEE_CANDIDATES = 4

#: The most cells :func:`held_cell` counts of a region (:func:`held_region`'s ``cap``): a
#: region that large holds the quarry for turns to come, so larger ones are alike (the
#: tie goes to the cell farthest from the pursuers), and a flight costs a few searches of
#: at most that many cells, whatever the map's size.
HELD_CAP = 256

#: Cells up to which a deadline is handed to :func:`held_region` as a list (read per node,
#: a list is several times quicker; beyond, the array is read as it is).
LIST_CELLS = 1 << 16


def _slow_to_enter(prof: Profile, i: int) -> bool:
    """Whether every edge into cell index ``i`` (any of its nodes) on ``prof``'s graph
    takes more than a turn: a crossing over turns (a climb, a slow swim), not a cell that
    is only far."""
    g = prof.graph
    rev = prof.rev
    least = math.inf
    for s in range(g.n_states):
        v = i + s * g.n
        row = rev.data[rev.indptr[v] : rev.indptr[v + 1]]
        if len(row):
            least = min(least, float(row.min()))
    return least > g.denominator


def _held_from(
    prof: Profile, i: int, threat: np.ndarray, after: float = 0.0, late: Any = None
) -> int:
    """The cells the quarry holds from cell index ``i`` (:func:`held_region`) reached
    ``after`` turns from now: each cell's deadline is the pursuers' ``threat`` less a
    turn (having ended its move there, it lets every pursuer move once before it moves
    again) less ``after`` (``late``: those deadlines, made already)."""
    g = prof.graph
    if late is None:
        late = _deadlines(g.n, threat, after)
    lists = None if isinstance(late, np.ndarray) else prof.lists()
    indptr, indices, data = lists if lists is not None else (prof.indptr, prof.indices, prof.data)
    start = g.node(g.grid.cell_of_index(i))
    return held_region(indptr, indices, data, g.n, start, late, g.denominator, HELD_CAP)


def _deadlines(n: int, threat: np.ndarray, after: float) -> Any:
    """:func:`_held_from`'s deadlines: ``threat - 1 - after``; as a list on a map of up to
    :data:`LIST_CELLS` cells where the search runs in Python (no kernel), whose reads of a
    list are several times quicker."""
    late = threat - (1.0 + after)
    return late.tolist() if n <= LIST_CELLS and not kernel.available() else late


def cell_centres(grid: Grid) -> np.ndarray:
    """Every cell's centre (:meth:`Grid.cell_center`) by cell index, as float64 rows
    ``(x, y)``: :func:`held_cell` reads the directions of the cells it weighs from them."""
    n = grid.width * grid.height
    flat = [v for i in range(n) for v in grid.cell_center(grid.cell_of_index(i))]
    return np.array(flat, dtype=np.float64).reshape(n, 2)


def held_cell(
    prof: Profile,
    cell: Cell,
    scan: FleeScan,
    mine: np.ndarray,
    threat: np.ndarray,
    centres: np.ndarray | None = None,
) -> tuple[int, int]:
    """Of the cells the quarry on ``cell`` reaches this turn on ``prof`` (``scan``, of at
    least one such cell: :func:`flee_scan`), the one from which it holds the most cells
    (:func:`_held_from`), ties to the most ``threat``, the least ``mine``, the lowest
    index; and how many it holds.

    It holds a cell where it gets there a whole turn before the pursuers, so a cell a
    pursuer reaches in its next move holds nothing: the quarry never steps into a
    pursuer's reach for the room behind it.

    Only a few cells are weighed, each by a search bounded by the region it holds: in
    each direction from ``cell`` (the grid's face headings, by the angle between the
    cells' centres), the cell farthest along it (the most ``mine``, then the most
    ``threat``, then the lowest index) of those no pursuer reaches in its next move, and
    ``cell`` itself; of those, the :data:`FLEE_CANDIDATES` farthest from the pursuers
    (:func:`sector_picks`). So a room beyond the pursuers' way is weighed against the
    dead end away from them. Where every cell is within a pursuer's next move, none holds
    anything: the one farthest from them. ``centres``: :func:`cell_centres` of the grid,
    where the caller keeps them (else the centres of the cells weighed are worked out
    here: the same numbers)."""
    g = prof.graph
    grid = g.grid
    safe = scan.safe
    if not len(safe):
        return scan.farthest, 0
    sectors = len(grid.face_headings())
    ox, oy = grid.cell_center(cell)
    here = grid.index(cell)
    if centres is None:
        xy = np.array(
            [grid.cell_center(grid.cell_of_index(i)) for i in safe.tolist()], dtype=np.float64
        ).reshape(-1, 2)
    else:
        xy = centres[safe]
    turn = np.arctan2(xy[:, 1] - oy, xy[:, 0] - ox) / (2 * np.pi) + 0.5 / sectors
    sector = np.floor(turn * sectors).astype(np.int64) % sectors
    sector[safe == here] = sectors  # staying is a direction of its own
    late = _deadlines(g.n, threat, 0.0)
    best: tuple[int, float, float, int] | None = None
    for i in sector_picks(safe, sector, mine, threat, sectors + 1):
        weighed = (_held_from(prof, i, threat, late=late), float(threat[i]), -float(mine[i]), -i)
        if best is None or weighed > best:
            best = weighed
    assert best is not None
    return -best[3], best[0]


#: Whether :func:`flee_scan` and :func:`sector_picks` ask the kernel (engine/_kernel.c
#: ``flee_scan``, ``flee_picks``; off: numpy, the plain way).
ON = True


class FleeScan(NamedTuple):
    """What :func:`flee_choice` reads of the turn arrays before any search
    (:func:`flee_scan`)."""

    #: How many cells the quarry reaches this turn (``mine`` <= 1), those taken left out.
    near: int
    #: Of them, the indexes of those no pursuer reaches in its next move (``threat`` > 1),
    #: in index order.
    safe: np.ndarray
    #: Of them all, the index of the one of most ``threat``, then least ``mine``, then
    #: lowest index (-1: none).
    farthest: int
    #: :func:`_beyond_margin`'s cell (-1: none) and its time.
    beyond: int
    cost: float


def flee_scan(
    grid: Grid,
    mine: np.ndarray,
    threat: np.ndarray,
    taken: frozenset[Cell],
    crossing: tuple[Cell, Fraction] | None,
) -> FleeScan:
    """:class:`FleeScan` of ``mine`` and ``threat`` (one a cell of ``grid``), ``taken``
    and the ``crossing`` under way as :func:`flee_choice` has them: one pass in the kernel
    where it is built and :data:`ON` (the same double comparisons and differences as
    numpy's, tests/test_goalfast.py), else :func:`flee_scan_plain`."""
    if not (ON and kernel.available() and _doubles(mine) and _doubles(threat)):
        return flee_scan_plain(grid, mine, threat, taken, crossing)
    cross, cross_cost = -1, 0.0
    if crossing is not None:
        toward, progress = crossing
        i = grid.index(toward)
        if np.isfinite(mine[i]):
            cross, cross_cost = i, float(mine[i] * float(1 - progress))
    index = grid.index
    out = np.empty(len(mine), dtype=np.int64)
    near, count, farthest, beyond, cost = kernel.flee_scan(
        mine, threat, np.array([index(c) for c in taken], dtype=np.int64), cross, cross_cost, out
    )
    return FleeScan(near, out[:count], farthest, beyond, cost)


def _doubles(a: np.ndarray) -> bool:
    return a.dtype == np.float64 and a.flags.c_contiguous


def flee_scan_plain(
    grid: Grid,
    mine: np.ndarray,
    threat: np.ndarray,
    taken: frozenset[Cell],
    crossing: tuple[Cell, Fraction] | None,
) -> FleeScan:
    """:func:`flee_scan`'s twin in numpy, the plain way."""
    ok = mine <= 1 + 1e-12
    if taken:
        ok[[grid.index(c) for c in taken]] = False
    near = np.flatnonzero(ok)
    safe = near[threat[near] > 1 + 1e-9]
    farthest = -1
    if len(near):
        farthest = int(near[np.lexsort((near, mine[near], -threat[near]))[0]])
    beyond = _beyond_margin(grid, mine, threat, taken, crossing, near)
    if beyond is None:
        return FleeScan(len(near), safe, farthest, -1, 0.0)
    return FleeScan(len(near), safe, farthest, beyond[0], beyond[1])


def sector_picks(
    safe: np.ndarray, sector: np.ndarray, mine: np.ndarray, threat: np.ndarray, sectors: int
) -> list[int]:
    """:func:`held_cell`'s cells to weigh: of the cell indexes ``safe`` (int64), in each
    direction (``sector``, one a cell of ``safe``, from 0 to ``sectors - 1``) the one of
    most ``mine``, then most ``threat``, then lowest index; of those, the
    :data:`FLEE_CANDIDATES` of most ``threat`` (then least ``mine``, lowest index), in that
    order. In the kernel where it is built and :data:`ON`, else
    :func:`sector_picks_plain`."""
    if not (ON and kernel.available() and _doubles(mine) and _doubles(threat)):
        return sector_picks_plain(safe, sector, mine, threat)
    out = np.empty(FLEE_CANDIDATES, dtype=np.int64)
    count = kernel.flee_picks(
        np.ascontiguousarray(safe, dtype=np.int64),
        np.ascontiguousarray(sector, dtype=np.int64),
        mine,
        threat,
        sectors,
        FLEE_CANDIDATES,
        out,
    )
    return out[:count].tolist()


def sector_picks_plain(
    safe: np.ndarray, sector: np.ndarray, mine: np.ndarray, threat: np.ndarray
) -> list[int]:
    """:func:`sector_picks`'s twin in numpy, the plain way."""
    # The best of each direction: sorted by (direction, -mine, -threat, index), the first.
    order = np.lexsort((safe, -threat[safe], -mine[safe], sector))
    s_sorted = sector[order]
    first = order[np.r_[True, s_sorted[1:] != s_sorted[:-1]]]
    picks = safe[first]
    # The farthest from the pursuers first (then the least time, the lowest index).
    return picks[np.lexsort((picks, mine[picks], -threat[picks]))][:FLEE_CANDIDATES].tolist()


def _beyond_margin(
    grid: Grid,
    mine: np.ndarray,
    threat: np.ndarray,
    taken: frozenset[Cell],
    crossing: tuple[Cell, Fraction] | None,
    near: np.ndarray,
) -> tuple[int, float] | None:
    """:func:`flee_choice`'s cell beyond this turn: the index of the cell of the largest
    margin where that beats every cell reached this turn, and its time (a crossing under
    way priced by what is left of it); None where none does."""
    cost = mine
    if crossing is not None:
        toward, progress = crossing
        i = grid.index(toward)
        if np.isfinite(mine[i]):
            cost = mine.copy()
            cost[i] = mine[i] * float(1 - progress)
    reach = np.isfinite(cost) & (mine > 1 + 1e-12)
    if taken:
        reach[[grid.index(c) for c in taken]] = False
    cand = np.flatnonzero(reach)
    if not len(cand):
        return None
    with np.errstate(invalid="ignore"):
        margin = threat[cand] - cost[cand]
    top = margin.max()
    if len(near) and not top > (threat[near] - mine[near]).max():
        return None
    cand = cand[margin == top]
    if len(cand) > 1:
        t = cost[cand]
        cand = cand[t == t.min()]
    return int(cand[0]), float(cost[cand[0]])
