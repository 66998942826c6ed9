"""The quarry's safe region and the moves that shrink it (the pursuer and quarry policies
beyond what an exact solution covers).

The *safe region* of a quarry is the set of cells it reaches before any pursuer does:
``quarry_turns < threat`` cell by cell, where ``threat`` is the least of the pursuers'
turns. Pursuers that shrink it every turn close on the quarry whatever its speed lets it
reach, without any of them idling while another stands in the way; a quarry makes only for
an exit it reaches by a way inside it. Both are pure functions of turn arrays (one value per
cell index, +inf where a token cannot go), so a choice is replayable from the fields alone.
"""

from __future__ import annotations

import heapq
import math
from collections.abc import Callable, Sequence

import numpy as np

from engine import kernel

#: A choice's slack in turns: a cell reached "within a turn" at 1 + float rounding.
EPS = 1e-9


def safe_mask(quarry: np.ndarray, threat: np.ndarray) -> np.ndarray:
    """The safe region as a mask: cells the quarry reaches before every pursuer."""
    with np.errstate(invalid="ignore"):
        return quarry < threat


def frontier_choice(
    mine: np.ndarray, others: np.ndarray, quarry: np.ndarray, exits: np.ndarray
) -> int | None:
    """The cell a pursuer makes for to shrink the quarry's safe region: of the region the
    quarry keeps against every pursuer (``others``: the other pursuers' least turns,
    ``mine``: the mover's own), its safe exits if it has any (where it must come out),
    else all of it, the cell the mover comes nearest to claiming (the least of its turns
    there less the quarry's: the frontier it can claim soonest), then the one the quarry
    reaches soonest, then the lowest index. None where the quarry keeps no cell but
    where it stands (the pursuers close on it).

    One array each, no field from any other cell: a choice costs no more than the
    fields the turn already holds."""
    threat = np.minimum(mine, others)
    region = safe_mask(quarry, threat) & (quarry > 0)
    if len(exits) and region[exits].any():
        cells = exits[region[exits]]
    else:
        cells = np.flatnonzero(region)
    return frontier_among(cells, mine[cells], quarry)


def frontier_among(cells: np.ndarray, mine: np.ndarray, quarry: np.ndarray) -> int | None:
    """:func:`frontier_choice` of the cell indexes ``cells`` it would weigh (``mine``: the
    mover's turns on them, one a cell): the one the mover comes nearest to claiming, then
    the one the quarry reaches soonest, then the lowest index; None where there are none.
    A caller that has the region against ``others`` already and the mover's turns no less
    than ``others`` on its ``cells`` (the mover's own turns among them) has
    frontier_choice's cells: the least of the two is ``others`` there, and a cell off them
    that the mover's turns take from the region is no cell weighed
    (tests/test_policies_region.py)."""
    if not len(cells):
        return None
    late = mine - quarry[cells]
    order = np.lexsort((cells, quarry[cells], late))
    return int(cells[order[0]])


def reached_safely(
    indptr: np.ndarray, indices: np.ndarray, n: int, start: int, region: np.ndarray
) -> np.ndarray:
    """The cells of ``region`` (a mask over the ``n`` cells) the quarry reaches from cell
    ``start`` without leaving it, over a movement graph's edges (CSR ``indptr`` and
    ``indices`` over its nodes, node ``k`` on cell ``k % n``): a cell it reaches first
    only by a way through cells a pursuer reaches first is no refuge, nor an exit behind
    them a safe one."""
    states = (len(indptr) - 1) // n
    starts = np.arange(states, dtype=np.int64) * n + start
    if kernel.available():
        out = np.zeros(n, dtype=bool)
        kernel.reach_within(
            np.ascontiguousarray(indptr),
            np.ascontiguousarray(indices),
            starts,
            np.ascontiguousarray(region, dtype=bool),
            out,
        )
        return out
    return reached_safely_plain(indptr, indices, n, starts, region)


def reached_safely_plain(
    indptr: np.ndarray, indices: np.ndarray, n: int, starts: np.ndarray, region: np.ndarray
) -> np.ndarray:
    """:func:`reached_safely`'s twin without the compiled kernel (its breadth-first search
    in Python, node by node): the same cells."""
    seen = np.zeros(len(indptr) - 1, dtype=bool)
    out = np.zeros(n, dtype=bool)
    todo = starts.tolist()
    for node in todo:
        seen[node] = True
        out[node % n] = True
    while todo:
        nxt = []
        for node in todo:
            for m in indices[indptr[node] : indptr[node + 1]].tolist():
                if not seen[m] and region[m % n]:
                    seen[m] = True
                    out[m % n] = True
                    nxt.append(m)
        todo = nxt
    return out


def held_region(
    indptr: Sequence[int],
    indices: Sequence[int],
    data: Sequence[float],
    n: int,
    start: int,
    deadline: Sequence[float] | np.ndarray,
    denominator: int,
    cap: int | None = None,
) -> int:
    """How many cells the quarry holds from node ``start`` of a movement graph (CSR
    ``indptr``, ``indices`` and ``data`` in ticks over its nodes, node ``k`` on cell
    ``k % n``, ``denominator`` ticks a turn): the cells it reaches, by a way each of whose
    nodes it reaches sooner than that cell's ``deadline`` (turns, one a cell; +inf where no
    pursuer comes), each timed along such a way.

    A Dijkstra that never settles nor passes a node at or past its cell's deadline: it
    stops at the region's frontier, so it costs the region's edges, not the map's (no field
    is made or kept); with ``cap``, also once it holds ``cap`` cells (a region that large
    counts as ``cap``: on a big open map the search stays a few hundred cells). The plain
    way (every field over the whole graph, cut down to the nodes reached in time until
    nothing more is cut) gives the same cells, or ``cap`` of them
    (tests/test_policies_region.py).

    Given arrays, it runs in the compiled kernel where it is built (engine/_kernel.c
    ``held_region``); :func:`held_region_plain` is its twin, the same count
    (tests/test_reach_within.py)."""
    if (
        kernel.available()
        and isinstance(indptr, np.ndarray)
        and isinstance(indices, np.ndarray)
        and isinstance(deadline, np.ndarray)
    ):
        return kernel.held_region(
            indptr,
            indices,
            np.ascontiguousarray(data, dtype=np.float64),
            start,
            np.ascontiguousarray(deadline, dtype=np.float64),
            float(denominator),
            cap or 0,
        )
    return held_region_plain(indptr, indices, data, n, start, deadline, denominator, cap)


def held_region_plain(
    indptr: Sequence[int],
    indices: Sequence[int],
    data: Sequence[float],
    n: int,
    start: int,
    deadline: Sequence[float] | np.ndarray,
    denominator: int,
    cap: int | None = None,
) -> int:
    """:func:`held_region` in Python (a heap of node times, a node's edges read as lists):
    the twin where the kernel is not built, or is handed lists."""
    if not 0.0 < deadline[start % n]:
        return 0
    row = _rows(indptr, indices, data)
    late = deadline.item if isinstance(deadline, np.ndarray) else deadline.__getitem__
    best: dict[int, float] = {start: 0.0}
    heap = [(0.0, start)]
    done: set[int] = set()
    cells: set[int] = set()
    pop, push = heapq.heappop, heapq.heappush
    while heap:
        d, v = pop(heap)
        if v in done:
            continue
        done.add(v)
        cells.add(v % n)
        if cap is not None and len(cells) >= cap:
            return cap
        for w, step in zip(*row(v), strict=True):
            nd = d + step
            if w in done or not nd < best.get(w, math.inf):
                continue
            if nd / denominator < late(w % n):
                best[w] = nd
                push(heap, (nd, w))
    return len(cells)


def _rows(
    indptr: Sequence[int], indices: Sequence[int], data: Sequence[float]
) -> Callable[[int], tuple[list[int], list[float]]]:
    """:func:`held_region`'s reader of a node's edges (heads and ticks) as lists: from
    lists, slices; from arrays (a graph too big to keep as lists), each row sliced at once,
    not an element at a time through numpy."""
    if isinstance(indptr, np.ndarray):
        ip, ix, dt = indptr, np.asarray(indices), np.asarray(data)

        def from_arrays(v: int) -> tuple[list[int], list[float]]:
            a, b = int(ip[v]), int(ip[v + 1])
            return ix[a:b].tolist(), dt[a:b].tolist()

        return from_arrays

    def from_lists(v: int) -> tuple[list[int], list[float]]:
        a, b = indptr[v], indptr[v + 1]
        return list(indices[a:b]), list(data[a:b])

    return from_lists
