"""The pure-Python Dijkstra: touches only what it reaches (reach queries, paths on small
maps, with an early exit at the goal).
"""

from __future__ import annotations

import heapq
import math
from typing import Any

from engine.grid import Cell
from engine.movement import MovementGraph
from engine.search.tree import SearchTree


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
