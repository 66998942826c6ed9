"""A* over the graph's framed step tables (:func:`frontier_search`): paths on big maps,
searched to the goal with an admissible heuristic, in C (engine/_kernel.c through
:mod:`engine.kernel`, built at install where a compiler is found) or else with the frontier
relaxed in numpy (no whole-map graph is built, and scipy is not even imported). The C loop
also runs reach searches (:func:`_kernel_tree`), keeping its arrays between queries.
"""

from __future__ import annotations

import heapq
from array import array
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, cast

import numpy as np

from engine import kernel
from engine.grid import Cell
from engine.kernel import NO_GUIDE, AStarArgs, AStarTables, Estimate, Guide
from engine.movement import MovementGraph
from engine.search.cellpath import CellPath
from engine.search.tree import SearchTree, node_cells
from engine.timed import timeline


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
        return self.node_array(node).tolist()

    def node_array(self, node: int) -> np.ndarray:
        """:meth:`nodes_to` as an integer array (:func:`chain_nodes`)."""
        return chain_nodes(self.graph, self.pred, node)

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


def chain_plain(pred: np.ndarray, node: int) -> np.ndarray:
    """The predecessor chain from ``node`` (``pred``, -1 at the start), start first, as
    int64: the walk a node at a time through a memoryview into a typed array."""
    chain = array("q")
    add = chain.append
    back = pred.data
    cur = node
    while cur >= 0:
        add(cur)
        cur = back[cur]
    return np.frombuffer(chain, dtype=np.int64)[::-1]


def chain_nodes(graph: MovementGraph, pred: np.ndarray, node: int) -> np.ndarray:
    """The graph nodes from the start to graph node ``node`` along the framed
    predecessors ``pred`` (a search's), as an integer array (int32 where the graph's nodes
    fit it): walked by engine/_kernel.c's ``pred_chain`` (counted, then written start
    first into an array of its length) or by :func:`chain_plain`, then read back as graph
    nodes in place (a maze's path has millions of nodes)."""
    tab = graph.step_tables()
    w, n = graph.grid.width, graph.n
    cur = tab.frame(node, w, n)
    small = tab.pn * graph.n_states < 2**31 and n * graph.n_states < 2**31
    kind: Any = np.int32 if small else np.int64
    layer: np.ndarray
    if kernel.available():
        layer = np.empty(kernel.pred_chain(pred, cur), dtype=kind)
        kernel.pred_chain(pred, cur, layer)
    else:
        layer = chain_plain(pred, cur).astype(kind)
    cell = np.empty_like(layer)
    np.divmod(layer, tab.pn, out=(layer, cell))
    r = np.empty_like(cell)
    np.divmod(cell, tab.pw, out=(r, cell))
    cell -= tab.pad
    r -= tab.pad
    r *= w
    cell += r
    del r
    layer *= n
    layer += cell
    return layer


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

    Where engine/_kernel.c is built and on (:func:`engine.kernel.available`) and the distances fit 32 bits, the
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
        kernel.available()
        and dtype == np.int32
        and tab.ticks.dtype == np.int32
        and (tab.adds is None or tab.adds.dtype == np.int32)
        and size < 2**31 - 1
    )


#: The open-grid estimate's kind in C, by the map's diagonal rule (a square or staggered map).
_ESTIMATES = {"none": Estimate.MANHATTAN, "alternate": Estimate.ALTERNATE}


def _guide(graph: MovementGraph, goal: Cell | None) -> Guide:
    """:func:`_heuristic`'s estimate as engine/_kernel.c works it out."""
    tab = graph.step_tables()
    g = graph.grid
    if goal is None or tab.least <= 0:
        return NO_GUIDE
    axis_y, even = g.stagger_axis == "y", g.stagger_index == "even"
    stag = g.orientation == "staggered"
    if g.kind == "hex":
        u, v = _cube(goal[0], goal[1], axis_y, even)
        return Guide(Estimate.HEX, False, axis_y, even, tab.least, u, v)
    u, v = _axes(goal[0], goal[1], stag, axis_y, even)
    kind = _ESTIMATES.get(g.diagonals, Estimate.CHEBYSHEV)
    return Guide(kind, stag, axis_y, even, tab.least, u, v)


def _kernel_tables(graph: MovementGraph) -> AStarTables:
    """The graph's step tables, in-place edges and jumps as engine/_kernel.c reads them
    (cached on its step tables)."""
    tab = graph.step_tables()
    cached = tab.derived.get("kernel")
    if cached is not None:
        return cast("AStarTables", cached)
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
    has_in_place, g = bool(len(ia)), graph.grid
    out = AStarTables(
        delta=np.ascontiguousarray(tab.delta, dtype=i64),
        diag=np.ascontiguousarray(tab.diag, dtype=np.uint8),
        ticks=tab.ticks,
        adds=tab.adds,
        blocked=tab.blocked,
        in_place_from=ia if has_in_place else None,
        in_place_to=ib if has_in_place else None,
        in_place_ticks=it if has_in_place else None,
        jump_sources=np.array(srcs, dtype=i64) if srcs else None,
        jump_starts=starts if srcs else None,
        jump_targets=np.array(dsts, dtype=i64) if srcs else None,
        jump_ticks=np.array(jts, dtype=i64) if srcs else None,
        pn=tab.pn,
        pw=tab.pw,
        pad=tab.pad,
        n_par=graph.n_par,
        n_sys=graph.n_sys,
        n_states=graph.n_states,
        square=g.kind == "square",
        axis_y=g.stagger_axis == "y",
        parity_state=bool(graph.parity_state),
        width=g.width,
        nodes=graph.n,
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
    """:func:`frontier_search` compiled (:func:`engine.kernel.astar`): A* from framed node
    ``src`` to ``goal`` (or Dijkstra up to ``limit``), writing ``dist`` and ``pred`` (int32,
    one a framed node, as the numpy loop does). ``terms``: landmark terms
    (:meth:`Landmarks.terms`) to estimate with instead of the open-grid distance.
    ``settled`` (int32): filled with the framed nodes expanded, in the order expanded, as
    far as it holds them. Returns the framed goal node reached (-1: none) and how many
    nodes were expanded."""
    tab = graph.step_tables()
    gcell = -1 if goal is None else (goal[1] + tab.pad) * tab.pw + goal[0] + tab.pad
    args = AStarArgs(
        tables=_kernel_tables(graph),
        dist=dist,
        pred=pred,
        src=src,
        goal_cell=gcell,
        limit=-1 if limit is None else int(limit),
        guide=NO_GUIDE if terms else _guide(graph, goal),
        terms=terms or (),
        far=_FAR // 2,
        settled=settled,
    )
    return kernel.astar(args)


def frontier_path(graph: MovementGraph, start: Cell, goal: Cell) -> CellPath | None:
    """Best path by :func:`frontier_search` (A* to the goal): the same total as
    :func:`dijkstra` and :func:`compiled_path`."""
    found = frontier_search(graph, start, goal)
    if found.end is None:
        return None
    pred, end = found.pred, found.end
    del found  # its distances are a whole map's, and not needed for the walk
    nodes = chain_nodes(graph, pred, end)
    del pred
    return node_cells(graph, nodes)


#: "Cannot get there" in landmark fields (above any real total on such a graph).
_FAR = 2**62


#: A graph whose search arrays hold at most this many nodes keeps them between the
#: searches of :func:`_kernel_tree` (8 bytes a node); a larger one searches in Python.
KEPT_SEARCH_NODES = 1 << 21


def _kernel_tree(graph: MovementGraph, start: Cell, limit: float) -> SearchTree | None:
    """:func:`dijkstra` up to ``limit`` ticks (a reach), run on engine/_kernel.c: the same
    distances (exact integer ticks, tested), the predecessors of an equally short way where
    ways tie (:func:`kernel_reach`). None where the kernel cannot run it."""
    got = kernel_reach(graph, start, limit)
    if got is None:
        return None
    return SearchTree.of_arrays(graph, start, *got, limit)


def kernel_reach(
    graph: MovementGraph, start: Cell, limit: float
) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
    """The nodes :func:`dijkstra` reaches up to ``limit`` ticks, their ticks and the node
    before each (-1: the start), as arrays, searched by engine/_kernel.c. The search only
    touches what is within ``limit`` of the start (the mover's window, not the map): its
    distance and predecessor arrays are kept on the graph's step tables and only the
    nodes it settled are read and put back. None where the kernel cannot run it (not
    available, fractional ticks or limit, a big graph)."""
    if not kernel.available() or not supports_frontier(graph) or limit != int(limit) or limit < 0:
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

    has = back >= 0
    before = np.full(len(back), -1, dtype=np.int64)
    before[has] = unframe(back[has])
    return unframe(nodes), ticks, before
