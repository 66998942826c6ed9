"""scipy's compiled Dijkstra on the graph's CSR arrays: whole-map distance fields, and paths
under the ``euclid`` rule (float weights).
"""

from __future__ import annotations

import numpy as np

from engine.grid import Cell
from engine.movement import MovementGraph
from engine.search.tree import SearchTree, _cells


def compiled_field(graph: MovementGraph, start: Cell, limit: float | None = None) -> SearchTree:
    """scipy's compiled Dijkstra over the whole map: same totals as :func:`dijkstra`."""
    from scipy.sparse.csgraph import dijkstra as sp_dijkstra

    csr = graph.csr()
    src = graph.node(start)
    dist, pred = sp_dijkstra(
        csr,
        directed=True,
        indices=src,
        return_predecessors=True,
        limit=np.inf if limit is None else limit,
    )
    reached = np.nonzero(np.isfinite(dist))[0]
    d = dist[reached]
    if not graph.euclid:
        d = np.rint(d)
    dmap = dict(zip(reached.tolist(), d.tolist(), strict=True))
    if not graph.euclid:
        dmap = {k: int(v) for k, v in dmap.items()}
    pr = pred[reached]
    has = pr >= 0
    prev = dict(zip(reached[has].tolist(), pr[has].tolist(), strict=True))
    return SearchTree(graph, start, dmap, prev, limit)


def compiled_path(graph: MovementGraph, start: Cell, goal: Cell) -> list[Cell] | None:
    """Best path by scipy's Dijkstra, read straight off its predecessor array."""
    from scipy.sparse.csgraph import dijkstra as sp_dijkstra

    dist, pred = sp_dijkstra(
        graph.csr(), directed=True, indices=graph.node(start), return_predecessors=True
    )
    ends = [graph.grid.index(goal) + k * graph.n for k in range(graph.n_states)]
    end = min(ends, key=lambda e: dist[e])
    if not np.isfinite(dist[end]):
        return None
    out = []
    node = int(end)
    while node >= 0:
        out.append(node)
        node = int(pred[node])
    return _cells(graph, out[::-1])
