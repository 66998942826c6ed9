"""A* with landmarks (ALT: :class:`Landmarks`, :func:`guided_path`), for a query context that
asks many paths of one graph (``engine.api.Context``): the C loop of :mod:`.frontier` with
the landmarks' estimate, or a Python one.
"""

from __future__ import annotations

import heapq
from collections.abc import Sequence
from typing import Any

import numpy as np

from engine.grid import Cell
from engine.movement import MovementGraph
from engine.search.frontier import (
    _FAR,
    Frontier,
    _frontier_dtype,
    kernel_fits,
    kernel_search,
    supports_frontier,
)
from engine.search.tree import _cells, node_cells

#: Graphs with more nodes than this get no landmarks (their fields, 32 distances a node,
#: would take too much memory: about 130 MB at this size, a 512x512 map without the parity
#: layer): a query context then searches with :func:`frontier_search`.
LANDMARK_NODES = 300_000


class Landmarks:
    """Exact distances from and to a few landmark cells, for repeated A* on one graph.

    For any nodes v and a goal t, ``d(L, t) - d(L, v)`` and ``d(v, L) - d(t, L)`` never
    exceed ``d(v, t)`` (the triangle inequality), so their largest over the landmarks is an
    admissible, consistent heuristic (ALT: A*, landmarks, triangle inequality) that follows
    the map's real costs, walls included, not just the open-grid distance. Built once per
    graph (two of scipy's multi-source Dijkstras), then every query expands little more
    than its own corridor. The landmarks are spread round the map's edge.
    """

    def __init__(self, graph: MovementGraph, count: int = 16) -> None:
        from array import array

        from scipy.sparse.csgraph import dijkstra as sp_dijkstra

        self.graph = graph
        g = graph.grid
        w, h = g.width, g.height
        ring = (
            [(c, 0) for c in range(w)]
            + [(w - 1, r) for r in range(1, h)]
            + [(c, h - 1) for c in range(w - 2, -1, -1)]
            + [(0, r) for r in range(h - 2, 0, -1)]
        )
        ticks = graph.enter_ticks
        picks: list[int] = []
        for k in range(count):
            c, r = ring[k * len(ring) // count]
            node = self._near_open(graph, ticks, c, r)
            if node is not None and node not in picks:
                picks.append(node)
        self.nodes = picks
        csr = graph.csr()
        size = graph.n * graph.n_states

        def fields(matrix: Any, sign: int) -> list[Any]:
            if not picks:
                return []
            dist = sp_dijkstra(matrix, directed=True, indices=picks)
            out = []
            for row in np.atleast_2d(dist):
                ints = np.full(size, sign * _FAR, dtype=np.int64)
                ok = np.isfinite(row)
                ints[ok] = sign * np.rint(row[ok]).astype(np.int64)
                out.append(array("q", ints.tobytes()))
            return out

        #: ``ahead[k][v]`` = -d(landmark k, v) (negated: what the estimate adds);
        #: ``back[k][v]`` = d(v, landmark k).
        self.ahead = fields(csr, -1)
        self.back = fields(csr.T.tocsr(), 1)
        #: Per cell, the in-bounds neighbour cells of its straight and diagonal slots (the
        #: A* loop reads these instead of working out offsets and bounds each time).
        self.straight: list[tuple[int, ...]] = []
        self.diagonal: list[tuple[int, ...]] = []
        self._neighbour_tables()

    def _neighbour_tables(self) -> None:
        g = self.graph.grid
        w, h = g.width, g.height
        cols = np.tile(np.arange(w), h)
        rows = np.repeat(np.arange(h), w)
        par = np.zeros(w * h, dtype=np.int64)
        if g.kind != "square":
            par = (rows if g.stagger_axis == "y" else cols) & 1
        tables = [g.offsets(0), g.offsets(1)]
        found: dict[bool, list[np.ndarray]] = {False: [], True: []}
        for k in range(len(tables[0])):
            targets = []
            for p in (0, 1):
                dc, dr, _ = tables[p][k]
                nc, nr = cols + dc, rows + dr
                ok = (nc >= 0) & (nc < w) & (nr >= 0) & (nr < h)
                targets.append(np.where(ok, nr * w + nc, -1))
            # A slot is diagonal in both parity tables or in neither (square, staggered).
            found[bool(tables[0][k][2])].append(np.where(par == 0, targets[0], targets[1]))
        for diag, out in ((False, "straight"), (True, "diagonal")):
            if found[diag]:
                table = np.stack(found[diag], axis=1).tolist()
                setattr(self, out, [tuple(j for j in row if j >= 0) for row in table])
            else:
                setattr(self, out, [()] * (w * h))

    @staticmethod
    def _near_open(graph: MovementGraph, ticks: np.ndarray, c: int, r: int) -> int | None:
        """The enterable cell nearest (c, r) within a few rings, as a start node."""
        g = graph.grid
        for radius in range(8):
            for dc in range(-radius, radius + 1):
                for dr in range(-radius, radius + 1):
                    if max(abs(dc), abs(dr)) != radius:
                        continue
                    cell = (c + dc, r + dr)
                    if g.in_bounds(cell) and ticks[g.index(cell)] >= 0:
                        return graph.node(cell)
        return None

    def terms(self, start: int, goal: Cell, active: int = 8) -> list[tuple[Any, int]]:
        """The ``active`` landmark terms that bound ``start`` -> ``goal`` best, each
        ``(field, offset)``: that term's estimate of node v is ``field[v] + offset``."""
        g = self.graph
        ends = [g.node(goal, p, s) for s in range(g.n_sys) for p in range(g.n_par)]
        found: list[tuple[int, Any, int]] = []
        for ahead in self.ahead:  # d(L, t) - d(L, v), t the nearest goal node
            to_goal = -max(ahead[e] for e in ends)
            if to_goal < _FAR and ahead[start] > -_FAR:
                found.append((to_goal + ahead[start], ahead, to_goal))
        for back in self.back:  # d(v, L) - d(t, L), t the dearest goal node
            from_goal = max(back[e] for e in ends)
            if from_goal < _FAR and back[start] < _FAR:
                found.append((back[start] - from_goal, back, -from_goal))
        found.sort(key=lambda x: -x[0])
        return [(values, off) for _, values, off in found[:active]]


def guided_path(
    graph: MovementGraph, guide: Landmarks, start: Cell, goal: Cell, active: int = 8
) -> Sequence[Cell] | None:
    """Best path by A* with the landmarks' heuristic (pure Python, touching only what it
    expands): :func:`dijkstra`'s total, for queries many times over on one graph."""
    g = graph.grid
    n = graph.n
    n_par = graph.n_par
    parity_state = graph.parity_state
    src = graph.node(start)
    goal_idx = g.index(goal)
    terms = guide.terms(src, goal, active)
    if supports_frontier(graph):
        tab = graph.step_tables()
        size = tab.pn * graph.n_states
        if kernel_fits(tab, _frontier_dtype(graph, size), size):
            kdist = np.full(size, np.iinfo(np.int32).max, dtype=np.int32)
            kpred = np.full(size, -1, dtype=np.int32)
            at = tab.frame(src, g.width, n)
            end_node, _ = kernel_search(graph, kdist, kpred, at, goal, None, terms)
            if end_node < 0:
                return None
            reached = tab.unframe(end_node, g.width, n)
            # The nodes read as cells in numpy (:func:`node_cells`, held equal to the
            # plain walk by tests/test_path_columns.py), not a node at a time.
            return node_cells(graph, Frontier(graph, kdist, kpred, reached).node_array(reached))
    lists = graph._state_lists
    straight, diagonal = guide.straight, guide.diagonal
    special = {a for a, _ in graph.cut} | set(graph.blocked_slots)
    generic = graph.has_add or bool(graph.in_place) or bool(graph.jump_out)
    if len(terms) >= 4:
        (f0, o0), (f1, o1), (f2, o2), (f3, o3) = terms[:4]
        rest = terms[4:]

        def estimate(v: int) -> int:
            e = max(0, f0[v] + o0, f1[v] + o1, f2[v] + o2, f3[v] + o3)
            for field, off in rest:
                x = field[v] + off
                if x > e:
                    e = x
            return e
    else:

        def estimate(v: int) -> int:
            e = 0
            for field, off in terms:
                x = field[v] + off
                if x > e:
                    e = x
            return e

    # One int a heap entry: the estimate f, then the deeper node first (ties broken
    # towards the goal), then the node: ((f << dbits) - g) << nbits | node.
    size = n * graph.n_states
    nbits = size.bit_length()
    # No tentative distance exceeds a simple path's: every node once, at the dearest edge.
    dearest = 2 * max(1, int(graph.state_ticks.max(initial=1)))
    if graph.state_add is not None:
        dearest += int(graph.state_add.max(initial=0))
    dearest = max([dearest, *(t for _, _, t in graph.in_place)])
    dearest = max([dearest, *(int(j.ticks) for j in graph.jumps)])
    dbits = (dearest * (size + 1)).bit_length() + 1
    mask = (1 << nbits) - 1
    far = _FAR // 2
    dist: dict[int, int] = {src: 0}
    prev: dict[int, int] = {}
    est: dict[int, int] = {src: estimate(src)}
    heap: list[int] = [(est[src] << dbits) << nbits | src]
    pop, push = heapq.heappop, heapq.heappush
    done: set[int] = set()
    end = None
    while heap:
        node = pop(heap) & mask
        if node in done:
            continue
        done.add(node)
        layer, idx = divmod(node, n)
        if idx == goal_idx:
            end = node
            break
        d = dist[node]
        if generic or idx in special:
            for nxt, step in graph.neighbours(node):
                nd = d + int(step)  # whole ticks: euclid graphs get no landmarks
                old = dist.get(nxt)
                if old is None or nd < old:
                    dist[nxt] = nd
                    prev[nxt] = node
                    e = est.get(nxt)
                    if e is None:
                        e = est[nxt] = estimate(nxt)
                    if e < far:
                        push(heap, (((nd + e) << dbits) - nd) << nbits | nxt)
            continue
        s, p = divmod(layer, n_par)
        ticks = lists[s]
        off = layer * n
        for j in straight[idx]:
            t = ticks[j]
            if t < 0:
                continue
            nxt = off + j
            nd = d + t
            old = dist.get(nxt)
            if old is None or nd < old:
                dist[nxt] = nd
                prev[nxt] = node
                e = est.get(nxt)
                if e is None:
                    e = est[nxt] = estimate(nxt)
                if e < far:
                    push(heap, (((nd + e) << dbits) - nd) << nbits | nxt)
        if parity_state:
            off = (s * n_par + 1 - p) * n
        for j in diagonal[idx]:
            t = ticks[j]
            if t < 0:
                continue
            nxt = off + j
            nd = d + (t * 2 if parity_state and p else t)
            old = dist.get(nxt)
            if old is None or nd < old:
                dist[nxt] = nd
                prev[nxt] = node
                e = est.get(nxt)
                if e is None:
                    e = est[nxt] = estimate(nxt)
                if e < far:
                    push(heap, (((nd + e) << dbits) - nd) << nbits | nxt)
    if end is None:
        return None
    nodes = [end]
    while nodes[-1] in prev:
        nodes.append(prev[nodes[-1]])
    return _cells(graph, nodes[::-1])
