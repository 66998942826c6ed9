"""Movement queries on a :class:`~engine.movement.MovementGraph`: paths, reach, plans, risk.

Over 800 lines: the Python and compiled searches, path evaluation and the turn plan read one
node layout; path evaluation (checks per move, climbs and jumps as units) is the next module
to split off when it grows.

The engines give identical integer totals:

* a pure-Python Dijkstra (:func:`dijkstra`) that touches only what it reaches: reach
  queries and paths on small maps, with an early exit at the goal;
* an A* over the graph's framed step tables (:func:`frontier_search`): paths on big maps,
  searched to the goal with an admissible heuristic, in C (engine/_kernel.c, built at
  install where a compiler is found) or else with the frontier relaxed in numpy (no
  whole-map graph is built, and scipy is not even imported);
* A* with landmarks (:class:`Landmarks`, :func:`guided_path`), for a query context that
  asks many paths of one graph (``engine.api.Context``): the same C loop with the
  landmarks' estimate, or a Python one;
* scipy's compiled Dijkstra on the graph's CSR arrays (:func:`compiled_field`): distance
  fields, and paths under the ``euclid`` rule (float weights).

A :class:`SearchTree` keeps the distances and predecessors of one search, so hovering over
a cell in the viewer is a walk up the predecessor chain, never a new search.
"""

from __future__ import annotations

import bisect
import heapq
import math
from collections.abc import Iterable
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any, cast

import numpy as np

from engine.errors import ArgumentError, TacgridError
from engine.grid import Cell
from engine.kernel import KERNEL  # None: not built (tests set it to None: the numpy loop)
from engine.movement import MovementGraph
from engine.systems.base import CellCheck, ClimbOdds, exact, jsonable
from engine.timed import Timeline, timed_search, timeline

#: Graphs with more nodes than this use scipy's compiled Dijkstra for map-wide paths.
COMPILED_ABOVE = 20_000


class NoPath(TacgridError):
    """There is no path; the message says why (exit status 1, not a user error)."""


@dataclass
class SearchTree:
    """Distances (ticks) and predecessors from one start; the viewer's hover cache."""

    graph: MovementGraph
    start: Cell
    dist: dict[int, float]
    prev: dict[int, int]
    limit: float | None = None
    _best: dict[Cell, int] = field(default_factory=dict)
    #: Cells whose figure is re-priced exactly (a climb in whole successes on the way:
    #: :func:`_reprice_climbs`), in turns; they override the search's mean-rate labels.
    exact: dict[Cell, Fraction] = field(default_factory=dict)

    def __post_init__(self) -> None:
        w = self.graph.grid.width
        if self.graph.n_states == 1:  # a node is its cell
            self._best = {(i % w, i // w): i for i in self.dist}
            return
        n = self.graph.n
        best: dict[int, int] = {}
        for node, d in self.dist.items():
            idx = node % n
            cur = best.get(idx)
            if cur is None or d < self.dist[cur]:
                best[idx] = node
        self._best = {(i % w, i // w): node for i, node in best.items()}

    def cells(self) -> list[Cell]:
        return list(self._best)

    def ticks(self, cell: Cell) -> float | None:
        node = self._best.get(cell)
        if node is not None and cell in self.exact:
            return cast("float", self.exact[cell] * self.graph.denominator)
        return None if node is None else self.dist[node]

    def turns(self, cell: Cell) -> Fraction | None:
        t = self.ticks(cell)
        return None if t is None else self.graph.turns(t)

    def path_to(self, cell: Cell) -> list[Cell]:
        """The best path to ``cell`` from the cached tree ([] if not reached)."""
        node = self._best.get(cell)
        if node is None:
            return []
        return _cells(self.graph, self.nodes_to(node))

    def nodes_to(self, node: int) -> list[int]:
        """The searched nodes from the start to ``node`` (state changes in place included)."""
        out = []
        prev = self.prev
        cur: int | None = node
        while cur is not None:
            out.append(cur)
            cur = prev.get(cur)
        out.reverse()
        return out

    def best_node(self, cell: Cell) -> int | None:
        return self._best.get(cell)


def _cells(graph: MovementGraph, nodes: list[int]) -> list[Cell]:
    """Cells of a node path; a state change in place (standing up) stays in its cell, a
    jump lists the cells it passes over (the take-off cell of a run-up, the gap)."""
    out: list[Cell] = []
    jump_at = graph.jump_at
    for k, node in enumerate(nodes):
        if jump_at and k:
            jump = jump_at.get((nodes[k - 1], node))
            if jump is not None:
                out.extend(graph.grid.cell_of_index(part[0]) for part in jump.parts[:-1])
        cell = graph.cell_of(node)
        if not out or out[-1] != cell:
            out.append(cell)
    return out


def dijkstra(
    graph: MovementGraph,
    start: Cell,
    *,
    limit: float | None = None,
    goal: Cell | None = None,
) -> SearchTree:
    """Pure-Python Dijkstra from ``start`` (parity 0, the system's start state), up to
    ``limit`` ticks or to ``goal``."""
    g = graph.grid
    w, h, n = g.width, g.height, graph.n
    n_par = graph.n_par
    parity_state, euclid = graph.parity_state, graph.euclid
    # Per layer (system state x parity): its cells' ticks, its node offset, the offset a
    # diagonal leads to and that step's factor, and its in-place edges (offset, ticks).
    info = []
    for layer in range(graph.n_states):
        s, p = divmod(layer, n_par)
        flip = (s * n_par + (1 - p)) * n if parity_state else layer * n
        ip = tuple(((b * n_par + p) * n, t) for a, b, t in graph.in_place if a == s)
        info.append((graph._state_lists[s], layer * n, flip, 2 if (parity_state and p) else 1, ip))
    root2 = math.sqrt(2)
    tables = []
    inner = []  # the same steps as index offsets, for cells away from the map's edge
    for par in (0, 1):
        tables.append(tuple((dc, dr, diag) for dc, dr, diag in g.offsets(par)))
        inner.append(tuple((dr * w + dc, diag) for dc, dr, diag in g.offsets(par)))
    reach_out = max(max(abs(dc), abs(dr)) for t in tables for dc, dr, _ in t)
    c_lo, c_hi, r_lo, r_hi = reach_out, w - reach_out, reach_out, h - reach_out
    axis_y = g.stagger_axis == "y"
    square = g.kind == "square"
    jump_out = graph.jump_out
    lim = math.inf if limit is None else limit
    # Cells whose steps are not the plain table's (leaps, walls, additive costs) take the
    # graph's own edge list.
    cut_from = {a for a, _ in graph.cut} | set(graph.blocked_slots)
    generic = graph.has_add
    src = graph.node(start)
    dist: dict[int, float] = {src: 0}
    prev: dict[int, int] = {}
    heap: list[tuple[float, int]] = [(0, src)]
    done: set[int] = set()
    goal_idx = None if goal is None else g.index(goal)
    pop, push = heapq.heappop, heapq.heappush
    while heap:
        d, node = pop(heap)
        if node in done:
            continue
        done.add(node)
        layer, idx = divmod(node, n)
        if idx == goal_idx:
            break
        if generic or (cut_from and idx in cut_from):
            # A cell with leaps out of it or walls round it: the graph's own edge list.
            for nxt, t in graph.neighbours(node):
                nd = d + t
                if limit is not None and nd > limit:
                    continue
                old = dist.get(nxt)
                if old is None or nd < old:
                    dist[nxt] = nd
                    prev[nxt] = node
                    push(heap, (nd, nxt))
            continue
        ticks, off, flip, mult, ip = info[layer]
        r, c = divmod(idx, w)
        tp = 0 if square else ((r if axis_y else c) & 1)
        if c_lo <= c < c_hi and r_lo <= r < r_hi and not euclid:
            # Away from the edge: no bounds to check (the common case, by far).
            for delta, diag in inner[tp]:
                j = idx + delta
                t = ticks[j]
                if t < 0:
                    continue
                if diag and parity_state:
                    nd = d + t * mult
                    nxt = flip + j
                else:
                    nd = d + t
                    nxt = off + j
                if nd > lim:
                    continue
                old = dist.get(nxt)
                if old is None or nd < old:
                    dist[nxt] = nd
                    prev[nxt] = node
                    push(heap, (nd, nxt))
            table: tuple[Any, ...] = ()
        else:
            table = tables[tp]
        for dc, dr, diag in table:
            nc = c + dc
            nr = r + dr
            if nc < 0 or nr < 0 or nc >= w or nr >= h:
                continue
            j = nr * w + nc
            t = ticks[j]
            if t < 0:
                continue
            if diag:
                if parity_state:
                    nd = d + t * mult
                    nxt = flip + j
                elif euclid:
                    nd = d + t * root2
                    nxt = off + j
                else:
                    nd = d + t
                    nxt = off + j
            else:
                nd = d + t
                nxt = off + j
            if limit is not None and nd > limit:
                continue
            old = dist.get(nxt)
            if old is None or nd < old:
                dist[nxt] = nd
                prev[nxt] = node
                push(heap, (nd, nxt))
        if ip:
            for to, t in ip:
                nd = d + t
                nxt = to + idx
                if limit is not None and nd > limit:
                    continue
                old = dist.get(nxt)
                if old is None or nd < old:
                    dist[nxt] = nd
                    prev[nxt] = node
                    push(heap, (nd, nxt))
        if jump_out and node in jump_out:
            for jump in jump_out[node]:
                nd = d + jump.ticks
                nxt = jump.dst
                if limit is not None and nd > limit:
                    continue
                old = dist.get(nxt)
                if old is None or nd < old:
                    dist[nxt] = nd
                    prev[nxt] = node
                    push(heap, (nd, nxt))
    if goal is not None:
        # Only settled distances are final: drop tentative ones beyond the goal.
        dist = {k: v for k, v in dist.items() if k in done}
    return SearchTree(graph, start, dist, prev, limit)


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


# --------------------------------------------------------------------------- vectorised A*


def supports_frontier(graph: MovementGraph) -> bool:
    """Whether :func:`frontier_search` can search this graph: integer ticks (not the
    ``euclid`` rule) and no time-dependent pace (:mod:`engine.timed`)."""
    return not graph.euclid and timeline(graph) is None


def _cube(c: Any, r: Any, axis_y: bool, even: bool) -> tuple[Any, Any]:
    """A hex cell's cube axes (q, r) from its offset coordinates (ints or int arrays)."""
    if axis_y:
        half = (r + (r & 1)) >> 1 if even else (r - (r & 1)) >> 1
        return c - half, r
    half = (c + (c & 1)) >> 1 if even else (c - (c & 1)) >> 1
    return c, r - half


def _axes(c: Any, r: Any, stag: bool, axis_y: bool, even: bool) -> tuple[Any, Any]:
    """A square or staggered cell's axes, along which the open-grid distance is counted."""
    if not stag:
        return c, r
    if axis_y:
        x, y = 2 * c + (-(r & 1) if even else (r & 1)), r
    else:
        x, y = c, 2 * r + (-(c & 1) if even else (c & 1))
    return (x + y) >> 1, (y - x) >> 1


def _heuristic(graph: MovementGraph, goal: Cell | None) -> Any:
    """An admissible, consistent A* heuristic in ticks, ``h(framed cells, layers)`` (None:
    no goal, Dijkstra).

    The fewest cells of distance from a node's cell to ``goal`` on an open grid under the
    map's rule (the 5-10-5 count from the node's diagonal parity), times the fewest ticks a
    move pays per cell (:attr:`StepTables.least`): no edge costs less than that, and each
    changes the count by at most its own length, so the estimate never overshoots and is
    consistent."""
    tab = graph.step_tables()
    least, pw, pad = tab.least, tab.pw, tab.pad
    if goal is None or least <= 0:
        return None
    g = graph.grid
    n_par = graph.n_par
    gc, gr = goal
    hexgrid = g.kind == "hex"
    axis_y, even = g.stagger_axis == "y", g.stagger_index == "even"
    stag = g.orientation == "staggered"
    rule = g.diagonals

    def cube(c: Any, r: Any) -> tuple[Any, Any]:
        return _cube(c, r, axis_y, even)

    def axes(c: Any, r: Any) -> tuple[Any, Any]:
        return _axes(c, r, stag, axis_y, even)

    if hexgrid:
        gq, grr = cube(gc, gr)

        def h_hex(cell: np.ndarray, layer: np.ndarray | None) -> np.ndarray:
            r, c = np.divmod(cell, pw)
            q, rr = cube(c - pad, r - pad)
            dq, dr = q - gq, rr - grr
            return np.maximum(np.maximum(np.abs(dq), np.abs(dr)), np.abs(dq + dr)) * least

        return h_hex
    gu, gv = axes(gc, gr)

    def h_square(cell: np.ndarray, layer: np.ndarray | None) -> np.ndarray:
        r, c = np.divmod(cell, pw)
        u, v = axes(c - pad, r - pad)
        du, dv = np.abs(u - gu), np.abs(v - gv)
        if rule == "none":
            return (du + dv) * least
        hi = np.maximum(du, dv)
        if rule == "alternate" and layer is not None:
            lo = np.minimum(du, dv)
            return (hi + ((lo + layer % n_par) >> 1)) * least
        if rule == "alternate":
            return (hi + (np.minimum(du, dv) >> 1)) * least
        return hi * least

    return h_square


@dataclass
class Frontier:
    """What :func:`frontier_search` found, on :class:`~engine.movement.StepTables`' framed
    nodes: distances in ticks (final for what the answer needs), predecessors, and the goal
    node reached (a graph node; None: not reached)."""

    graph: MovementGraph
    dist: np.ndarray
    pred: np.ndarray
    end: int | None

    def nodes_to(self, node: int) -> list[int]:
        """The graph nodes from the start to graph node ``node``."""
        g = self.graph
        tab = g.step_tables()
        w, n = g.grid.width, g.n
        cur = tab.frame(node, w, n)
        chain = []
        pred = self.pred.tolist() if self.pred.size <= 1 << 16 else self.pred
        while cur >= 0:
            chain.append(cur)
            cur = int(pred[cur])
        framed = np.array(chain[::-1], dtype=np.int64)
        layer, cell = np.divmod(framed, tab.pn)
        r, c = np.divmod(cell, tab.pw)
        return (layer * n + (r - tab.pad) * w + c - tab.pad).tolist()

    def field(self) -> np.ndarray:
        """Distances per graph node (:data:`UNREACHED` where not reached)."""
        g = self.graph
        tab = g.step_tables()
        h, w, pad = g.grid.height, g.grid.width, tab.pad
        framed = self.dist.reshape(g.n_states, h + 2 * pad, w + 2 * pad)
        framed = framed[:, pad : pad + h, pad : pad + w]
        out = framed.astype(np.int64).ravel()
        out[framed.ravel() == np.iinfo(self.dist.dtype).max] = UNREACHED
        return out


#: "Not reached" in :meth:`Frontier.field`.
UNREACHED = np.iinfo(np.int64).max


def _frontier_dtype(graph: MovementGraph, size: int) -> Any:
    """int32 distances while no path can sum past one (every node once, the dearest edge),
    else int64."""
    tab = graph.step_tables()
    dearest = tab.derived.get("dearest")
    if dearest is None:  # once per graph: a context asks this on every query
        dearest = 2 * int(tab.ticks.max(initial=0))
        if tab.adds is not None:
            dearest += int(tab.adds.max(initial=0))
        dearest = max([dearest, *(t for _, _, t in graph.in_place)])
        dearest = max([dearest, *(int(j.ticks) for j in graph.jumps)])
        tab.derived["dearest"] = dearest
    return np.int32 if (dearest + 1) * size < 2**31 - 1 else np.int64


def frontier_search(
    graph: MovementGraph,
    start: Cell,
    goal: Cell | None = None,
    *,
    limit: int | None = None,
) -> Frontier:
    """A* to ``goal`` (or Dijkstra up to ``limit`` ticks) with the frontier expanded in numpy.

    Each round takes the open nodes whose estimates ``f = g + h`` share the least bucket
    (a few :attr:`StepTables.least` wide) and relaxes all their out-edges in
    one vectorised pass over :meth:`MovementGraph.step_tables` (walls, doors, corners,
    ``cost_add``, state layers, in-place edges and jumps included), so the Python loop runs
    about once per step of the path's depth, not once per node. A node reached cheaper
    later is simply expanded again (label correcting), and the search stops once no open
    estimate is below the goal's distance, so the total is exact: integer ticks, the same
    as :func:`dijkstra`'s. Nothing of the whole map is built beyond one distance and one
    predecessor array.

    Where engine/_kernel.c is built (:data:`KERNEL`) and the distances fit 32 bits, the
    same search runs there instead, one node at a time off a binary heap (tested equal on
    every kind of graph, ``tests/test_api_context.py``).
    """
    if not supports_frontier(graph):
        raise ValueError("frontier_search needs integer ticks and a static pace")
    tab = graph.step_tables()
    g = graph.grid
    w, n = g.width, graph.n
    pw, pn = tab.pw, tab.pn
    n_par, n_sys, n_states = graph.n_par, graph.n_sys, graph.n_states
    parity_state = graph.parity_state
    size = pn * n_states
    dtype = _frontier_dtype(graph, size)
    far = np.iinfo(dtype).max
    dist = np.full(size, far, dtype=dtype)
    pred = np.full(size, -1, dtype=np.int32 if size < 2**31 else np.int64)
    src = tab.frame(graph.node(start), w, n)
    pad = tab.pad
    if kernel_fits(tab, dtype, size):
        end_node, _ = kernel_search(graph, dist, pred, src, goal, limit)
        end = None if end_node < 0 else tab.unframe(end_node, w, n)
        return Frontier(graph, dist, pred, end)
    dist[src] = 0
    goal_nodes = None
    if goal is not None:
        gcell = (goal[1] + pad) * pw + goal[0] + pad
        goal_nodes = np.arange(n_states, dtype=np.int64) * pn + gcell
    h = _heuristic(graph, goal)
    # Open entries are kept in buckets of estimates ``width`` wide: a round takes the least
    # bucket whole, a third of the rounds of taking one value at a time, for a few nodes
    # expanded twice (measured best: 3 steps wide, 2 under 5-10-5, whose parity layers
    # make more nodes to expand again).
    width = (2 if parity_state else 3) * tab.least + 1
    goal_list = [] if goal_nodes is None else goal_nodes.tolist()
    square = g.kind == "square"
    axis_y = g.stagger_axis == "y"
    k_slots = tab.delta.shape[1]
    d0, dg0 = tab.delta[0], tab.diag[0]
    slots = np.arange(k_slots, dtype=np.uint16)
    ticks, adds, blocked = tab.ticks, tab.adds, tab.blocked
    in_place = graph.in_place
    jump_src, jumps = tab.jump_src, tab.jumps
    layered = n_states > 1
    one = np.array([src], dtype=np.int64)
    f0 = 0
    if h is not None:
        f0 = int(h(one % pn, one // pn if layered else None)[0])
    buckets: dict[int, list[tuple[np.ndarray, np.ndarray]]] = {
        f0 // width: [(one, np.zeros(1, dtype=dtype))]
    }
    keys = [f0 // width]
    pop, push = heapq.heappop, heapq.heappush
    while keys:
        top = keys[0]
        if goal_list and min(int(dist[x]) for x in goal_list) <= top * width:
            break  # no open estimate is below the goal's distance: it is final
        parts = buckets.pop(pop(keys))
        if len(parts) == 1:
            v, d = parts[0]
        else:
            v = np.concatenate([p[0] for p in parts])
            d = np.concatenate([p[1] for p in parts])
        live = dist[v] == d  # an entry is stale once its node was reached cheaper
        v, d = v[live], d[live]
        if not v.size:
            continue
        if layered:
            layer = v // pn
            cell = v - layer * pn
        else:
            layer, cell = None, v
        if square:
            nb = cell[:, None] + d0
        else:
            tp = ((cell // pw - pad) if axis_y else (cell % pw - pad)) & 1
            nb = cell[:, None] + tab.delta[tp]
        if n_sys > 1:
            assert layer is not None
            at = nb + ((layer // n_par) * pn)[:, None]
        else:
            at = nb
        t = ticks[at]
        ok = t >= 0
        if blocked is not None:
            ok &= ((blocked[cell][:, None] >> slots) & 1) == 0
        if parity_state:
            assert layer is not None
            p = layer % n_par
            dg = dg0 if square else tab.diag[tp]
            t = np.where(dg & (p == 1)[:, None], t * 2, t)
            nv = np.where(dg, (layer + 1 - 2 * p)[:, None], layer[:, None]) * pn + nb
        elif layered:
            assert layer is not None
            nv = nb + (layer * pn)[:, None]
        else:
            nv = nb
        if adds is not None:
            t = t + adds[at]
        nd = d[:, None] + t
        ok &= nd < dist[nv]
        if limit is not None:
            ok &= nd <= limit
        sel = np.flatnonzero(ok)
        nv, nd, nu = nv.ravel()[sel], nd.ravel()[sel], v[sel // k_slots]
        if in_place or jump_src.size:
            extra_v, extra_d, extra_u = [nv], [nd], [nu]
            for a, b, stand in in_place:
                assert layer is not None
                pick = np.flatnonzero(layer // n_par == a)
                if pick.size:
                    p = layer[pick] % n_par
                    extra_v.append((b * n_par + p) * pn + cell[pick])
                    extra_d.append(d[pick] + stand)
                    extra_u.append(v[pick])
            if jump_src.size:
                for k in np.flatnonzero(np.isin(v, jump_src)).tolist():
                    u = int(v[k])
                    for dst, jt in jumps[u]:
                        extra_v.append(np.array([dst], dtype=np.int64))
                        extra_d.append(np.array([int(d[k]) + jt], dtype=dtype))
                        extra_u.append(np.array([u], dtype=np.int64))
            nv, nd, nu = (np.concatenate(x) for x in (extra_v, extra_d, extra_u))
            better = nd < dist[nv]
            if limit is not None:
                better &= nd <= limit
            nv, nd, nu = nv[better], nd[better], nu[better]
        if not nv.size:
            continue
        # The least candidate of each node wins (one of them where several tie).
        np.minimum.at(dist, nv, nd)
        win = nd == dist[nv]
        pred[nv[win]] = nu[win]
        win &= pred[nv] == nu
        nv, nd = nv[win], nd[win]
        if h is None:
            fs = nd // width
        elif layered:
            lay = nv // pn
            fs = (nd + h(nv - lay * pn, lay)) // width
        else:
            fs = (nd + h(nv, None)) // width
        lo, hi = int(fs.min()), int(fs.max())
        if lo == hi:
            groups: Iterable[tuple[int, tuple[np.ndarray, np.ndarray]]] = [(lo, (nv, nd))]
        elif hi - lo <= 8:
            groups = []
            for key in range(lo, hi + 1):
                mask = fs == key
                if mask.any():
                    groups.append((key, (nv[mask], nd[mask])))
        else:
            order = np.argsort(fs, kind="stable")
            fs, nv, nd = fs[order], nv[order], nd[order]
            cut = np.flatnonzero(fs[1:] != fs[:-1]) + 1
            groups = [
                (int(f[0]), (x, y))
                for f, x, y in zip(
                    np.split(fs, cut), np.split(nv, cut), np.split(nd, cut), strict=True
                )
            ]
        for key, entry in groups:
            bucket = buckets.get(key)
            if bucket is None:
                buckets[key] = [entry]
                push(keys, key)
            else:
                bucket.append(entry)
    end = None
    if goal_nodes is not None:
        at_goal = dist[goal_nodes]
        k = int(np.argmin(at_goal))
        if at_goal[k] != far:
            end = tab.unframe(int(goal_nodes[k]), w, n)
    return Frontier(graph, dist, pred, end)


def kernel_fits(tab: Any, dtype: Any, size: int) -> bool:
    """Whether the compiled search can run these tables: it keeps ticks and distances in
    32 bits (``dtype``: what :func:`frontier_search` chose for the distances)."""
    return (
        KERNEL is not None
        and dtype == np.int32
        and tab.ticks.dtype == np.int32
        and (tab.adds is None or tab.adds.dtype == np.int32)
        and size < 2**31 - 1
    )


def _guide_args(
    graph: MovementGraph, goal: Cell | None
) -> tuple[int, int, int, int, int, int, int]:
    """:func:`_heuristic`'s estimate as engine/_kernel.c computes it: (kind, staggered,
    stagger axis y, stagger index even, least ticks a cell, the goal's two axes)."""
    tab = graph.step_tables()
    g = graph.grid
    if goal is None or tab.least <= 0:
        return (0, 0, 0, 0, 0, 0, 0)
    axis_y, even = g.stagger_axis == "y", g.stagger_index == "even"
    stag = g.orientation == "staggered"
    if g.kind == "hex":
        u, v = _cube(goal[0], goal[1], axis_y, even)
        return (4, 0, int(axis_y), int(even), tab.least, u, v)
    u, v = _axes(goal[0], goal[1], stag, axis_y, even)
    kind = {"none": 1, "alternate": 3}.get(g.diagonals, 2)
    return (kind, int(stag), int(axis_y), int(even), tab.least, u, v)


def _kernel_tables(graph: MovementGraph) -> tuple[Any, ...]:
    """The in-place edges and jumps of a graph as engine/_kernel.c reads them (cached on
    its step tables)."""
    tab = graph.step_tables()
    cached = tab.derived.get("kernel")
    if cached is not None:
        return cast("tuple[Any, ...]", cached)
    i64 = np.int64
    ia = np.array([a for a, _, _ in graph.in_place], dtype=i64)
    ib = np.array([b for _, b, _ in graph.in_place], dtype=i64)
    it = np.array([t for _, _, t in graph.in_place], dtype=i64)
    srcs = sorted(tab.jumps)
    starts = np.zeros(len(srcs) + 1, dtype=i64)
    dsts: list[int] = []
    jts: list[int] = []
    for k, u in enumerate(srcs):
        for dst, jt in tab.jumps[u]:
            dsts.append(dst)
            jts.append(jt)
        starts[k + 1] = len(dsts)
    delta = np.ascontiguousarray(tab.delta, dtype=i64)
    diag = np.ascontiguousarray(tab.diag, dtype=np.uint8)
    out = (
        delta,
        diag,
        (ia, ib, it) if len(ia) else (None, None, None),
        (np.array(srcs, dtype=i64), starts, np.array(dsts, dtype=i64), np.array(jts, dtype=i64))
        if srcs
        else (None, None, None, None),
    )
    tab.derived["kernel"] = out
    return out


def kernel_search(
    graph: MovementGraph,
    dist: np.ndarray,
    pred: np.ndarray,
    src: int,
    goal: Cell | None,
    limit: int | None,
    terms: list[tuple[Any, int]] | None = None,
    settled: np.ndarray | None = None,
) -> tuple[int, int]:
    """:func:`frontier_search` compiled: A* from framed node ``src`` to ``goal`` (or
    Dijkstra up to ``limit``), writing ``dist`` and ``pred`` (int32, one a framed node, as
    the numpy loop does). ``terms``: landmark terms (:meth:`Landmarks.terms`) to estimate
    with instead of the open-grid distance. ``settled`` (int32): filled with the framed
    nodes expanded, in the order expanded, as far as it holds them. Returns the framed goal
    node reached (-1: none) and how many nodes were expanded."""
    tab = graph.step_tables()
    g = graph.grid
    delta, diag, (ia, ib, it), (js, jst, jd, jt) = _kernel_tables(graph)
    gcell = -1 if goal is None else (goal[1] + tab.pad) * tab.pw + goal[0] + tab.pad
    end, expanded = KERNEL.search(
        delta,
        diag,
        tab.ticks,
        tab.adds,
        tab.blocked,
        dist,
        pred,
        ia,
        ib,
        it,
        js,
        jst,
        jd,
        jt,
        tab.pn,
        tab.pw,
        tab.pad,
        graph.n_par,
        graph.n_sys,
        graph.n_states,
        delta.shape[1],
        int(g.kind == "square"),
        int(g.stagger_axis == "y"),
        int(graph.parity_state),
        src,
        gcell,
        -1 if limit is None else int(limit),
        *(_guide_args(graph, goal) if not terms else (0,) * 7),
        g.width,
        graph.n,
        _FAR // 2,
        terms or (),
        settled,
    )
    return int(end), int(expanded)


def frontier_path(graph: MovementGraph, start: Cell, goal: Cell) -> list[Cell] | None:
    """Best path by :func:`frontier_search` (A* to the goal): the same total as
    :func:`dijkstra` and :func:`compiled_path`."""
    found = frontier_search(graph, start, goal)
    if found.end is None:
        return None
    return _cells(graph, found.nodes_to(found.end))


# --------------------------------------------------------------------------- landmarks (ALT)

#: Graphs with more nodes than this get no landmarks (their fields, 32 distances a node,
#: would take too much memory: about 130 MB at this size, a 512x512 map without the parity
#: layer): a query context then searches with :func:`frontier_search`.
LANDMARK_NODES = 300_000
#: "Cannot get there" in landmark fields (above any real total on such a graph).
_FAR = 2**62


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
) -> list[Cell] | None:
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
            return _cells(graph, Frontier(graph, kdist, kpred, reached).nodes_to(reached))
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


# --------------------------------------------------------------------------- reports


def check_cell(graph: MovementGraph, cell: Cell, what: str) -> None:
    g = graph.grid
    if not g.in_bounds(cell):
        raise ArgumentError(
            f"{what} {cell[0]},{cell[1]}: outside the map ({g.width} x {g.height} cells; "
            f"cells are col,row from 0,0 to {g.width - 1},{g.height - 1})"
        )


def parse_cell(text: str, what: str) -> Cell:
    """``"c,r"`` -> (c, r); bad text is one clear line."""
    parts = text.replace(" ", "").split(",")
    try:
        if len(parts) != 2:
            raise ValueError
        return (int(parts[0]), int(parts[1]))
    except ValueError:
        raise ArgumentError(f"{what} '{text}': expected a cell as col,row such as 3,4") from None


def _fmt_time(t: Fraction) -> float:
    return float(t)


def evaluate_path(graph: MovementGraph, cells: list[Cell]) -> dict[str, Any]:
    """Step-by-step times, checks and the turn plan of a path (exact).

    The path is walked on the graph's nodes (:meth:`MovementGraph.node_path`), so the
    system's search state (standing up once, the diagonal parity) is charged as the search
    charged it. A check is asked on entering the first cell of a run of the same mode and
    difficulty, and again whenever a new move starts on the run, as the system counts
    moves (:meth:`RuleSystem.check_period`: a Move action, a turn, or once per climb).
    """
    g = graph.grid
    den = graph.denominator
    walked = graph.walk(cells)
    if walked is None:
        raise NoPath("the given path takes a step this token cannot take")
    nodes, edge_ticks = walked
    steps: list[dict[str, Any]] = [
        {
            "cell": list(cells[0]),
            "mode": graph.model.terrain_at(cells[0]).move,
            "turns": 0.0,
            "time": 0.0,
            "check": None,
        }
    ]
    total: float = 0
    distance_cells: float = 0
    p_ok = Fraction(1)
    prev_key = int(graph.run_key[g.index(cells[0])])
    prev_move: int | None = 0
    pending: float = 0  # ticks spent in place (standing up) before the next step
    changes: list[str] = []
    names = graph.search.names
    tl = timeline(graph)
    spans: list[tuple[Any, Any, int, int]] = []  # each step's (start, end, terrain, state)
    asked: list[tuple[int, CellCheck]] = []  # (step, check) of each check asked
    # Integer ticks (neither euclid nor a timed pace): turns by integer division, which is
    # what the Fractions give, without making one per figure (a long path has thousands).
    whole = tl is None and not graph.euclid
    per_layer = graph.n * graph.n_par

    def turn_of(x: Any) -> int:
        if whole and type(x) is int:
            return -(-x // den)
        return math.ceil(graph.turns(x))

    def move_of(x: Any, period: Fraction) -> int:
        if whole and type(x) is int:
            return -(-(x * period.denominator) // (den * period.numerator))
        return math.ceil(graph.turns(x) / period)

    def as_turns(x: Any) -> float:
        if whole and type(x) is int:
            return x / den
        return float(graph.turns(x))

    # Each node's terrain and run key, read in one pass (not a numpy scalar a step).
    at_nodes = np.array(nodes, dtype=np.int64) % graph.n
    node_tid = graph.model.terrain_ids.ravel()[at_nodes].tolist()
    key_of = dict(zip(at_nodes.tolist(), graph.run_key[at_nodes].tolist(), strict=True))
    diagonal = [{(dc, dr): bool(d) for dc, dr, d in g.offsets(par)} for par in (0, 1)]
    w, n = g.width, graph.n
    for i, (u, v, t) in enumerate(zip(nodes[:-1], nodes[1:], edge_ticks, strict=True)):
        jump = graph.jump_at.get((u, v)) if graph.jump_at else None
        if jump is None:
            ua, va = u % n, v % n
            a, b = (ua % w, ua // w), (va % w, va // w)
            if tl is not None:
                # The pace of the turn each part of the step is crossed in (engine.timed).
                end = tl.arrive(total, u, v, t)
                if end is None:
                    raise NoPath("the given path takes a step this token cannot take yet")
                t = end - total
            if a == b:
                total += t
                pending += t
                changes.append(names[graph.state_of(v)])
                continue
            diag = diagonal[g.parity(a)].get((b[0] - a[0], b[1] - a[1]), False)
            length = graph.step_length(diag, graph.parity_of(u))
            parts = [(va, node_tid[i + 1], t, length)]
        else:
            # A jump: one edge, listed cell by cell (the run-up step, the gap, the landing).
            parts = list(jump.parts)
        state = v // per_layer
        for k, (idx, tid, t, length) in enumerate(parts):
            spans.append((total, total + t, tid, state))
            total += t
            distance_cells += length
            b = g.cell_of_index(idx)
            cost = graph.state_costs[state][tid]
            turn = turn_of(total) if total else 0
            period = graph.check_period[tid]
            move = None if period is None else (move_of(total, period) if total else 0)
            key = key_of[idx] if idx in key_of else int(graph.run_key[idx])
            check = None
            over_gap = jump is not None and jump.kind == "gap" and jump.gap_at < k < len(parts) - 1
            if jump is not None and (k == jump.gap_at or over_gap):
                if k == jump.gap_at and jump.check is not None:
                    check = jump.check.to_dict()
                    p_ok *= jump.check.p_success
                    asked.append((len(steps), jump.check))
            elif cost.check is not None and (key != prev_key or move != prev_move):
                check = cost.check.to_dict()
                p_ok *= cost.check.p_success
                asked.append((len(steps), cost.check))
            prev_key, prev_move = key, move
            step: dict[str, Any] = {
                "cell": list(b),
                "mode": cost.terrain.move,
                "terrain": cost.terrain.name,
                "turns": as_turns(total),
                "time": as_turns(t + pending),
                "turn": turn,
                "check": check,
            }
            if jump is not None and k == jump.gap_at:
                step["jump"] = {
                    ("width" if jump.kind == "gap" else "rise"): jsonable(jump.width),
                    "run_up": jump.run_up,
                    "to": list(g.cell_of_index(parts[-1][0])),
                }
            if changes:
                step["first"] = changes  # state changes in place before the step (standing up)
            pending, changes = 0, []
            steps.append(step)
    turns = graph.turns(total)
    per_turn = _turn_checks(graph, tl, steps, spans)
    if per_turn is not None:
        p_ok = per_turn
    odds = _price_climbs(graph, steps, spans, asked, turns, None if per_turn is None else p_ok)
    turns, p_ok = odds.turns, odds.p_no_failure
    if odds.extra:
        total = float(turns * den)
    plan = turn_plan(steps, turns)
    return {
        "cells": [list(c) for c in cells],
        "distance": jsonable(graph.cell_size * exact_cells(distance_cells)),
        "distance_cells": jsonable(exact_cells(distance_cells)),
        "unit": graph.unit,
        "turns": float(turns),
        "turns_exact": jsonable(turns),
        "steps": steps,
        "p_no_failure": float(p_ok),
        "p_no_failure_exact": jsonable(p_ok),
        "p_within_turns": float(odds.p_within),
        "p_within_turns_exact": jsonable(odds.p_within),
        "on_failure": odds.on_failure,
        "plan": plan,
        "_ticks": total,
        "_den": den,
    }


def _turn_checks(
    graph: MovementGraph,
    tl: Timeline | None,
    steps: list[dict[str, Any]],
    spans: list[tuple[Any, Any, int, int]],
) -> Fraction | None:
    """Checks asked per turn (:meth:`RuleSystem.turn_checks`, D6's one roll a round at the
    hardest cell crossed): each turn's checks over the cells its move crosses (a cell split
    between two turns counts in both), each put on the first step of that turn that enters a
    cell asking it, else on the turn's first step; the path's p(no failure), or None when
    the system checks per run of terrain."""
    system, token = graph.system, graph.search.tokens[graph.search.main]
    if system.turn_checks(token, [], graph.pace) is None:
        return None
    den = graph.denominator
    by_turn: dict[int, list[int]] = {}
    for i, (t0, t1, _, _) in enumerate(spans):
        first = math.floor(t0 / den)
        last = max(first, math.ceil(t1 / den) - 1)
        for k in range(first, last + 1):
            by_turn.setdefault(k, []).append(i)
    for step in steps:
        step["check"] = None
    p_ok = Fraction(1)
    terrains = graph.model.terrains
    for k, idxs in sorted(by_turn.items()):
        rg = tl.rounds[k] if tl is not None and k < len(tl.rounds) else graph
        asked = system.turn_checks(token, [terrains[spans[i][2]] for i in idxs], rg.pace) or []
        for check in asked:
            p_ok *= check.p_success
            at = next(
                (
                    i
                    for i in idxs
                    if (c := rg.state_costs[spans[i][3]][spans[i][2]].check) is not None
                    and (c.what, c.target) == (check.what, check.target)
                ),
                idxs[0],
            )
            step = steps[at + 1]
            if step["check"] is None:
                step["check"] = check.to_dict()
            else:
                step.setdefault("checks", [step["check"]]).append(check.to_dict())
    return p_ok


@dataclass(frozen=True)
class PathOdds:
    """A path's expected time and odds once its climbs are priced as units."""

    turns: Fraction  # the expected time (exact), climbs in whole successes with slips
    p_no_failure: Fraction  # no check fails in a way that is not only a delay (no fall)
    p_within: Fraction  # through, without such a failure, within ceil(turns) turns
    on_failure: list[str]  # what the path's failures do, distinct, in step order
    extra: bool  # whether climbs changed the time


#: Longest time (turns) whose chance to be through is worked out exactly; beyond, in floats.
EXACT_WITHIN_TURNS = 200


def _climb_chain(odds: ClimbOdds, n: int) -> tuple[list[Fraction], list[Fraction]]:
    """Per success i < n of one climb: the expected turns from i banked to i + 1, and the
    chance to get there before a fall (RULES.md 2: a failure is no progress; a natural 2
    slips one success back, with ``slip``, then a failed re-roll above the foot is a fall).
    Both are first passages, so a climb's time is their sum and its safety their product."""
    p, q = odds.p, odds.q
    times: list[Fraction] = []
    safe: list[Fraction] = []
    for i in range(n):
        if i == 0 or not odds.slip:
            times.append(1 / p)
        else:
            times.append((1 + q * times[i - 1]) / p)
        if i == 0:
            safe.append(Fraction(1))
        else:
            back = safe[i - 1] if odds.slip else Fraction(1)
            safe.append(p / (p + q - q * p * back))
    return times, safe


def _climb_pmf(odds: ClimbOdds, n: int, horizon: int, exact_: bool) -> list[Any]:
    """P(the climb of ``n`` successes is done, without a fall, at turn t), t = 0..horizon."""
    one: Any = Fraction(1) if exact_ else 1.0
    p: Any = odds.p if exact_ else float(odds.p)
    q: Any = odds.q if exact_ else float(odds.q)
    stay = one - p - q
    state = [one] + [0 * one] * max(0, n - 1)
    out = [one if n == 0 else 0 * one]
    for _ in range(horizon):
        new = [0 * one] * n
        done = 0 * one
        for k, m in enumerate(state):
            if not m:
                continue
            if k + 1 >= n:
                done += m * p
            else:
                new[k + 1] += m * p
            new[k] += m * stay
            if k == 0:
                new[0] += m * q  # at the foot a slip loses nothing and cannot fall
            else:
                new[k - 1 if odds.slip else k] += m * q * p  # the re-roll holds; else a fall
        state = new
        out.append(done)
    return out


def _price_climbs(
    graph: MovementGraph,
    steps: list[dict[str, Any]],
    spans: list[tuple[Any, Any, int, int]],
    asked: list[tuple[int, CellCheck]],
    turns: Fraction,
    p_fixed: Fraction | None,
) -> PathOdds:
    """Price each run of climb cells as one climb (:meth:`RuleSystem.climb_odds`): cell j of
    a run needs ceil(height climbed / per success) whole successes banked, its time the
    expected turns of the successes it adds (slips included); the run's chance of no fall
    replaces its per-turn rolls. Failures that only delay do not count in ``p_no_failure``.
    ``p_fixed``: the system's own per-turn odds (D6), kept as they are."""
    system = graph.system
    terrains = graph.model.terrains
    runs: list[tuple[ClimbOdds, list[int]]] = []  # each climb: its odds, its step indices
    last_key: Any = None
    for i, (_, _, tid, state) in enumerate(spans, start=1):
        terrain = terrains[tid]
        odds = system.climb_odds(graph.search.tokens[state], terrain, graph.pace)
        key = None if odds is None else (terrain.move, terrain.difficulty, state)
        if odds is not None and key == last_key and runs and runs[-1][1][-1] == i - 1:
            runs[-1][1].append(i)
        elif odds is not None:
            runs.append((odds, [i]))
        last_key = key
    climbing = {i for _, idxs in runs for i in idxs}
    effects: list[str] = []
    p_ok = Fraction(1)
    for i, asked_check in asked:
        if i not in climbing and system.on_failure(asked_check) != "delay":
            p_ok *= asked_check.p_success
    for i, step in enumerate(steps):
        if step.get("check") is not None and i not in climbing:
            found = next((c for j, c in asked if j == i), None)
            step["on_failure"] = system.on_failure(found) if found is not None else "stop"
    delta: dict[int, Fraction] = {}  # step -> expected time added by whole successes, slips
    expected = Fraction(0)
    chains: list[tuple[ClimbOdds, int, Fraction]] = []
    anchor = Fraction(0)  # when the last whole-turn climb ended (search time): a boundary
    for odds, idxs in runs:
        length = Fraction(0)
        heights = []
        for i in idxs:
            terrain = terrains[spans[i - 1][2]]
            cells = Fraction(1)
            if terrain.height is not None:
                cells = max(cells, exact(terrain.height) / graph.cell_size)
            length += cells * graph._cell_in_system_unit
            heights.append(math.ceil(length / odds.per_success))
        n = heights[-1]
        times, safe = _climb_chain(odds, n)
        p_run = math.prod(safe, start=Fraction(1))
        chains.append((odds, n, p_run))
        p_ok *= p_run
        done = 0
        for i, need in zip(idxs, heights, strict=True):
            t_new = sum(times[done:need], Fraction(0))
            done = need
            delta[i] = t_new - (graph.turns(spans[i - 1][1]) - graph.turns(spans[i - 1][0]))
            expected += t_new
            if i != idxs[0]:
                steps[i]["check"] = None
        if odds.whole_turns:
            # Each roll takes a whole turn: the climb starts at the turn boundary after what
            # the path did since the last such climb ended (on a boundary) or since its start.
            since = graph.turns(spans[idxs[0] - 1][0]) - anchor
            delta[idxs[0]] += math.ceil(since) - since
            anchor = graph.turns(spans[idxs[-1] - 1][1])
        first = steps[idxs[0]]
        first_check = next((c for j, c in asked if j == idxs[0]), None)
        if first["check"] is None and first_check is not None:
            first["check"] = first_check.to_dict()
        if first["check"] is not None:
            first["on_failure"] = "delay"
        first["climb"] = {
            "successes": n,
            "per_success": jsonable(odds.per_success),
            "p_success": float(odds.p),
            "p_slip": float(odds.q),
            "expected_turns": float(sum(times, Fraction(0))),
            "p_no_fall": float(p_run),
            "p_no_fall_exact": jsonable(p_run),
        }
    shift = Fraction(0)
    if delta:
        # Re-time every step from the first climb on: its time, cumulative turns, turn.
        for i in range(1, len(steps)):
            if i in delta:
                shift += delta[i]
                steps[i]["time"] = float(Fraction(steps[i]["time"]) + delta[i])
            now = graph.turns(spans[i - 1][1]) + shift
            steps[i]["turns"] = float(now)
            steps[i]["turn"] = math.ceil(now) if now else 0
    total = turns + shift
    for step in steps:
        if step.get("check") is not None and step.get("on_failure") not in (None, *effects):
            effects.append(step["on_failure"])
    if p_fixed is not None:
        p_ok = p_fixed
    # The chance to be through within the turns shown: the climbs' whole turns against what
    # the rest of the path leaves of ceil(total) turns.
    horizon = math.ceil(total) if total else 0
    climbs_safe = math.prod((c[2] for c in chains), start=Fraction(1))
    others = p_ok / climbs_safe if climbs_safe else Fraction(0)
    if chains:
        budget = math.floor(horizon - (total - expected))
        exact_ = budget <= EXACT_WITHIN_TURNS
        dist: list[Any] = [Fraction(1) if exact_ else 1.0]
        for odds, n, _ in chains:
            pmf = _climb_pmf(odds, n, budget, exact_)
            new = [0 * dist[0]] * (budget + 1)
            for a, pa in enumerate(dist):
                if pa:
                    for b in range(budget + 1 - a):
                        new[a + b] += pa * pmf[b]
            dist = new
        within = sum(dist, 0 * dist[0])
        p_within = others * (within if exact_ else Fraction(within).limit_denominator(10**12))
    else:
        p_within = p_ok
    return PathOdds(total, p_ok, p_within, effects, bool(runs))


def exact_cells(x: float) -> Fraction:
    if isinstance(x, int) or float(x).is_integer():
        return Fraction(int(x))
    return Fraction(round(x * 10**9), 10**9)


#: Longest plan that lists every turn; a longer one lists only the turns that enter cells.
MAX_PLAN_TURNS = 1000


def turn_plan(steps: list[dict[str, Any]], total: Fraction) -> list[dict[str, Any]]:
    """Where the token stands at the end of each turn, and what that turn spent.

    Every turn is listed up to :data:`MAX_PLAN_TURNS` turns; a longer move (a very slow
    token) lists the turns in which it enters a cell and the last one, so the plan stays
    as long as the path, not as long as the wait.
    """
    eps = 1e-12
    n_turns = math.ceil(total) if total else 0
    done = [s["turns"] for s in steps]  # non-decreasing
    if n_turns <= MAX_PLAN_TURNS:
        wanted: Iterable[int] = range(1, n_turns + 1)
    else:
        ks = {n_turns}
        for t in done[1:]:
            ks.update(k for k in (math.ceil(t - eps), math.ceil(t)) if 1 <= k <= n_turns)
        wanted = sorted(ks)
    plan: list[dict[str, Any]] = []
    for k in wanted:
        # steps[1:] entered in turn k: k - 1 < turns <= k (+eps); the last done: <= k (+eps).
        lo = max(1, bisect.bisect_right(done, k - 1))
        hi = bisect.bisect_right(done, k + eps)
        entered = steps[lo:hi]
        if n_turns > MAX_PLAN_TURNS and not entered and k != n_turns:
            continue
        # Every turn before the last is spent whole (total > n_turns - 1 >= k).
        spent = 1.0 if k < n_turns else float(min(Fraction(1), total - (k - 1)))
        plan.append(
            {
                "turn": k,
                "end": steps[hi - 1]["cell"],
                "cells": [s["cell"] for s in entered],
                "spent": spent,
            }
        )
    return plan


def find_path(
    graph: MovementGraph,
    start: Cell,
    goal: Cell,
    *,
    prefer: str = "fast",
    guide: Landmarks | None = None,
) -> dict[str, Any]:
    """The best path (CONTRACT.md ``path``); raises :class:`NoPath` with the reason.

    ``guide``: landmarks of this graph (:class:`Landmarks`), for a query context that asks
    many paths on one graph (A* with their heuristic; the same total)."""
    check_cell(graph, start, "--from")
    check_cell(graph, goal, "--to")
    if prefer not in ("fast", "safe"):
        raise ArgumentError(f"--prefer {prefer}: expected fast or safe")
    goal_cost = graph.costs[int(graph.model.terrain_ids[goal[1], goal[0]])]
    if start != goal and goal_cost.time is None:
        raise NoPath(f"goal {goal[0]},{goal[1]} cannot be entered: {goal_cost.reason}")
    fast = _fast_cells(graph, start, goal, guide)
    if fast is None:
        raise NoPath(_unreachable_reason(graph, start, goal))
    candidates = [evaluate_path(graph, fast)]
    if any(c.check is not None for c in graph.costs):
        for weight in (None, 1.0, 4.0, 16.0):
            cells = _risk_weighted(graph, start, goal, weight)
            if cells and cells != fast:
                candidates.append(evaluate_path(graph, cells))
    pareto = _pareto(candidates)
    if prefer == "fast":
        best = min(candidates, key=lambda c: (c["_ticks"], -c["p_no_failure"]))
    else:
        best = max(candidates, key=lambda c: (c["p_no_failure"], -c["_ticks"]))
    out = {k: v for k, v in best.items() if not k.startswith("_")}
    out = {"system": graph.system.name, "pace": graph.pace, "prefer": prefer, **out}
    if len(pareto) > 1:
        out["pareto"] = [
            {"turns": c["turns"], "p_no_failure": c["p_no_failure"], "cells": c["cells"]}
            for c in pareto
        ]
    return out


def search_tree(
    graph: MovementGraph, start: Cell, *, limit: float | None = None, goal: Cell | None = None
) -> SearchTree:
    """The search from ``start`` as the token's turns go: time-dependent
    (:mod:`engine.timed`) when its first turns run at other paces, else :func:`dijkstra`."""
    tl = timeline(graph)
    if tl is None:
        if goal is None and limit is not None:
            tree = _kernel_tree(graph, start, limit)
            if tree is not None:
                return tree
        return dijkstra(graph, start, limit=limit, goal=goal)
    idx = None if goal is None else graph.grid.index(goal)
    dist, prev = timed_search(graph, tl, graph.node(start), limit=limit, goal=idx)
    # Labels are exact ticks: Fractions where a cell is split between turns (they compare
    # and convert to turns like the floats of the static searches).
    return SearchTree(graph, start, cast("dict[int, float]", dist), prev, limit)


#: A graph whose search arrays hold at most this many nodes keeps them between the
#: searches of :func:`_kernel_tree` (8 bytes a node); a larger one searches in Python.
KEPT_SEARCH_NODES = 1 << 21


def _kernel_tree(graph: MovementGraph, start: Cell, limit: float) -> SearchTree | None:
    """:func:`dijkstra` up to ``limit`` ticks (a reach), run on engine/_kernel.c: the same
    distances (exact integer ticks, tested), the predecessors of an equally short way where
    ways tie. Its distance and predecessor arrays are kept on the graph's step tables and
    only the nodes the search settled are read and put back, so a query costs what it
    reaches, not the map (api.Context.reach of 30 movement points on 512^2: 0.46 -> 0.25
    ms, the search about 20 us of it). None
    where the kernel cannot run it (no kernel, fractional ticks or limit, a big graph)."""
    if KERNEL is None or not supports_frontier(graph) or limit != int(limit) or limit < 0:
        return None
    tab = graph.step_tables()
    size = tab.pn * graph.n_states
    if size > KEPT_SEARCH_NODES or not kernel_fits(tab, _frontier_dtype(graph, size), size):
        return None
    far = np.iinfo(np.int32).max
    # Taken off the tables while in use: a search in another thread makes its own.
    kept = tab.derived.pop("reach", None)
    if kept is None:
        kept = (
            np.full(size, far, dtype=np.int32),
            np.full(size, -1, dtype=np.int32),
            np.empty(min(size, 4096), dtype=np.int32),
        )
    dist, pred, settled = kept
    g = graph.grid
    w, n = g.width, graph.n
    try:
        _, count = kernel_search(
            graph, dist, pred, tab.frame(graph.node(start), w, n), None, int(limit), None, settled
        )
        if count <= len(settled):
            nodes = settled[:count].astype(np.int64)
        else:  # more than the buffer held: read off the arrays, and a bigger buffer next time
            nodes = np.flatnonzero(dist != far)
            kept = (dist, pred, np.empty(min(size, 2 * count), dtype=np.int32))
        ticks = dist[nodes]
        back = pred[nodes].astype(np.int64)
        dist[nodes] = far
        pred[nodes] = -1
    except BaseException:
        kept = None  # a search cut short may leave the arrays dirty: made anew next time
        raise
    finally:
        if kept is not None:
            tab.derived["reach"] = kept

    def unframe(framed: np.ndarray) -> np.ndarray:
        layer, cell = np.divmod(framed, tab.pn)
        r, c = np.divmod(cell, tab.pw)
        return layer * n + (r - tab.pad) * w + (c - tab.pad)

    ids = unframe(nodes)
    has = back >= 0
    tree_dist = dict(zip(ids.tolist(), ticks.tolist(), strict=True))
    tree_prev = dict(zip(ids[has].tolist(), unframe(back[has]).tolist(), strict=True))
    return SearchTree(graph, start, cast("dict[int, float]", tree_dist), tree_prev, limit)


def _fast_cells(
    graph: MovementGraph, start: Cell, goal: Cell, guide: Landmarks | None = None
) -> list[Cell] | None:
    if timeline(graph) is not None:
        return search_tree(graph, start, goal=goal).path_to(goal) or None
    if guide is not None and guide.graph is graph and not graph.euclid:
        return guided_path(graph, guide, start, goal)
    if graph.n * graph.n_states > COMPILED_ABOVE:
        if supports_frontier(graph):
            return frontier_path(graph, start, goal)
        return compiled_path(graph, start, goal)
    return dijkstra(graph, start, goal=goal).path_to(goal) or None


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


def _check_risks(graph: MovementGraph) -> list[list[float]]:
    """-log(p) of what entering each terrain risks, per search state: its check's failure,
    except where a failure only delays; a climb priced in whole successes
    (:meth:`RuleSystem.climb_odds`) risks its fall instead (the cell's successes' chain)."""
    system = graph.system
    out: list[list[float]] = []
    for s, costs in enumerate(graph.state_costs):
        token = graph.search.tokens[s]
        row: list[float] = []
        for c in costs:
            p = Fraction(1)
            odds = system.climb_odds(token, c.terrain, graph.pace)
            if odds is not None:
                cells = Fraction(1)
                if c.terrain.height is not None:
                    cells = max(cells, exact(c.terrain.height) / graph.cell_size)
                n = math.ceil(cells * graph._cell_in_system_unit / odds.per_success)
                p = math.prod(_climb_chain(odds, n)[1], start=Fraction(1))
            elif c.check is not None and system.on_failure(c.check) != "delay":
                p = c.check.p_success
            row.append(math.inf if p == 0 else -math.log(float(p)))
        out.append(row)
    return out


def _risk_weighted(
    graph: MovementGraph, start: Cell, goal: Cell, weight: float | None
) -> list[Cell] | None:
    """Dijkstra on (risk, ticks): ``weight`` None = safest first; else ticks + w*D*risk.

    Risk is -log(p) of each check charged as the system counts checks, as
    :func:`evaluate_path` asks them: on entering a run of the same mode and difficulty, and
    again in each new move on the run (:meth:`RuleSystem.check_period`: a Move action, a
    turn, or once per run); where the system rolls once a turn at the hardest cell
    (:meth:`RuleSystem.turn_checks`, D6's round), a turn's risk is its hardest check's, charged
    as the turn's cells raise it. A climb in whole successes risks its fall, cell by cell.
    The time of the step ending at a node (its label) places the step in its move or turn;
    the search is a heuristic for candidates, each then evaluated exactly.
    """
    g = graph.grid
    n = graph.n
    den = graph.denominator
    risks = _check_risks(graph)
    system = graph.system
    per_turn = system.turn_checks(graph.search.tokens[graph.search.main], [], graph.pace)
    tid = graph.model.terrain_ids.ravel()
    src = graph.node(start)
    goal_idx = g.index(goal)

    def move_of(ticks: float, k: int) -> int | None:
        """The move a step ending at ``ticks`` falls in on terrain ``k`` (None: one per run)."""
        if per_turn is not None:
            return math.ceil(Fraction(ticks) / den) if ticks else 0
        period = graph.check_period[k]
        if period is None:
            return None
        return math.ceil(Fraction(ticks) / (den * period)) if ticks else 0

    best: dict[int, tuple[float, float]] = {src: (0.0, 0.0)}
    # Per settled label: its run key, its move, and (per-turn rolls) the turn's risk so far.
    aux: dict[int, tuple[int, int | None, float]] = {src: (int(graph.run_key[src % n]), 0, 0.0)}
    prev: dict[int, int] = {}
    heap: list[tuple[float, float, int]] = [(0.0, 0.0, src)]
    done: set[int] = set()
    found = None
    while heap:
        a, b, node = heapq.heappop(heap)
        if node in done:
            continue
        done.add(node)
        if node % n == goal_idx:
            found = node
            break
        key_u, move_u, turn_risk = aux[node]
        for nxt, t in graph.neighbours(node):
            j = nxt % n
            if j == node % n:
                risk, new_aux = 0.0, (key_u, move_u, turn_risk)  # a state change in place
            else:
                k = int(tid[j])
                here = risks[graph.state_of(nxt)][k]
                key_v, move_v = int(graph.run_key[j]), move_of(b + t, k)
                risk, seen = 0.0, turn_risk
                if per_turn is not None:
                    seen = 0.0 if move_v != move_u else turn_risk
                    risk = max(0.0, here - seen)
                    seen = max(seen, here)
                elif key_v != key_u or move_v != move_u:
                    risk = here
                new_aux = (key_v, move_v, seen)
            jump = graph.jump_at.get((node, nxt)) if graph.jump_at else None
            if jump is not None and jump.check is not None:
                p = jump.check.p_success
                risk += math.inf if p == 0 else -math.log(float(p))
            if weight is None:
                cand = (a + risk, b + t)
            else:
                cand = (a + t + weight * den * risk, b + t)
            old = best.get(nxt)
            if old is None or cand < old:
                best[nxt] = cand
                prev[nxt] = node
                aux[nxt] = new_aux
                heapq.heappush(heap, (cand[0], cand[1], nxt))
    if found is None:
        return None
    out = [found]
    while found in prev:
        found = prev[found]
        out.append(found)
    return _cells(graph, out[::-1])


def _pareto(cands: list[dict[str, Any]]) -> list[dict[str, Any]]:
    uniq: dict[tuple[float, float], dict[str, Any]] = {}
    for c in cands:
        uniq.setdefault((c["_ticks"], c["p_no_failure"]), c)
    pts = list(uniq.values())
    keep = []
    for c in pts:
        dominated = any(
            (o["_ticks"] <= c["_ticks"] and o["p_no_failure"] >= c["p_no_failure"])
            and (o["_ticks"] < c["_ticks"] or o["p_no_failure"] > c["p_no_failure"])
            for o in pts
        )
        if not dominated:
            keep.append(c)
    return sorted(keep, key=lambda c: c["_ticks"])


def _unreachable_reason(graph: MovementGraph, start: Cell, goal: Cell) -> str:
    if graph.n * graph.n_states > COMPILED_ABOVE and supports_frontier(graph):
        field = frontier_search(graph, start).field().reshape(graph.n_states, graph.n)
        reached = int(np.count_nonzero((field != UNREACHED).any(axis=0)))
    elif graph.n * graph.n_states > COMPILED_ABOVE:
        reached = len(compiled_field(graph, start).cells())
    else:
        reached = len(dijkstra(graph, start).cells())
    return (
        f"no route from {start[0]},{start[1]} to {goal[0]},{goal[1]}: the goal is cut off "
        f"for this token ({reached} cells reachable from the start)"
    )


# --------------------------------------------------------------------------- reach


def _reprice_climbs(graph: MovementGraph, tree: SearchTree, turns: int) -> None:
    """Give the cells whose searched path crosses a climb priced in whole successes
    (:meth:`RuleSystem.climb_odds`) the exact figure of that path (:func:`evaluate_path`),
    and drop those it puts beyond ``turns``.

    The search orders by each cell's mean-rate time: a Dijkstra weight must belong to one
    edge, while a climb's exact expected time belongs to the whole run (the successes
    banked before a cell, the slip chain, the turn boundary it starts at). The exact
    figure is never below the mean one, so no cell the exact figures reach is missed;
    the path to a cell is the search's (the fastest by mean rates)."""
    system = graph.system
    terrains = graph.model.terrains
    climbs = [
        k
        for k, t in enumerate(terrains)
        if any(system.climb_odds(tok, t, graph.pace) is not None for tok in graph.search.tokens)
    ]
    if not climbs:
        return
    is_climb = np.isin(graph.model.terrain_ids.ravel(), climbs)
    crosses: dict[int, bool] = {}
    for cell in list(tree.cells()):
        node = tree.best_node(cell)
        assert node is not None
        chain: list[int] = []
        cur: int | None = node
        while cur is not None and cur not in crosses:
            chain.append(cur)
            cur = tree.prev.get(cur)
        for nd in reversed(chain):
            back = tree.prev.get(nd)
            crosses[nd] = back is not None and (crosses[back] or bool(is_climb[nd % graph.n]))
        if not crosses[node]:
            continue
        t = Fraction(evaluate_path(graph, _cells(graph, tree.nodes_to(node)))["turns_exact"])
        if t > turns:
            del tree._best[cell]
        else:
            tree.exact[cell] = t


def reach(
    graphs: dict[str, MovementGraph],
    pace: str,
    start: Cell,
    turns: int = 1,
) -> dict[str, Any]:
    """Every cell reachable within ``turns`` at ``pace``, with its speed band.

    ``graphs`` holds one graph per pace of the system (slowest first). Within the first
    turn a cell's band is the slowest pace that reaches it in one turn; beyond it, the
    band is the turn it is reached in (``turn2``, ``turn3``, ...).
    """
    main = graphs[pace]
    check_cell(main, start, "--from")
    if turns < 1:
        raise ArgumentError(f"--turns {turns}: expected a whole number >= 1")
    tree = search_tree(main, start, limit=turns * main.denominator)
    static = timeline(main) is None
    # The main search already holds what a one-turn search at its pace would find.
    one_turn = [c for c, node in tree._best.items() if tree.dist[node] <= main.denominator]
    _reprice_climbs(main, tree, turns)
    first_turn: dict[Cell, str] = {}
    for name, g in graphs.items():
        if g is main and static:
            for cell in one_turn:
                first_turn.setdefault(cell, name)
        else:
            sub = search_tree(g, start, limit=g.denominator)
            for cell in sub.cells():
                first_turn.setdefault(cell, name)
        if g is main:
            # A band is asked only of cells the main pace reaches within one turn (the
            # exact figure of a climb is never below its search's): no faster pace, later
            # in the list, can be the slowest that reaches one of them.
            break
    cells: list[dict[str, Any]] = []
    den = main.denominator
    if tree.exact:
        order = sorted((tree.ticks(c), c[1], c[0]) for c in tree.cells())
    else:
        dist = tree.dist
        order = sorted((dist[node], c[1], c[0]) for c, node in tree._best.items())
    band_of = first_turn.get
    add = cells.append
    for ticks, r, c in order:
        if type(ticks) is int:  # whole ticks: the Fraction's figures by integer division
            band = (band_of((c, r)) or pace) if ticks <= den else f"turn{-(-ticks // den)}"
            add({"cell": [c, r], "turns": ticks / den, "band": band})
            continue
        t = tree.turns((c, r))
        assert t is not None
        band = (band_of((c, r)) or pace) if t <= 1 else f"turn{math.ceil(t)}"
        add({"cell": [c, r], "turns": float(t), "band": band})
    return {
        "system": main.system.name,
        "pace": pace,
        "from": list(start),
        "turns": turns,
        "bands": list(graphs),
        "cells": cells,
        "tree": tree,
    }
