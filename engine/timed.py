"""Time-dependent movement: a cell's time depends on the turn it is crossed in.

When the rules limit how fast a pace changes (D6: two speed levels a round, so a stopped token
runs its first round at cruising at most), the first turns of a move go at other paces
(:meth:`RuleSystem.round_paces`) before the chosen pace holds. A :class:`Timeline` prices an
edge by its departure time: the part of the cell crossed in turn ``k`` goes at turn ``k``'s
pace, the rest at the next turn's, split exactly (Fractions of the main graph's ticks).

Waiting never helps (a later start never arrives earlier: the FIFO property), so Dijkstra on
departure times is exact (:func:`timed_search`). Only the first ``len(round_paces)`` turns
differ; on a big graph the search hands the frontier at the end of those turns to scipy's
compiled Dijkstra on the pace's own graph (a super-source joined to each frontier node by its
exact label), so long paths keep the compiled speed.
"""

from __future__ import annotations

import heapq
import math
import weakref
from fractions import Fraction

import numpy as np

from engine.movement import MovementGraph

Ticks = int | float | Fraction

#: Graphs with more nodes than this finish a timed search with scipy's compiled Dijkstra.
COMPILED_ABOVE = 20_000


def _norm(x: Ticks) -> Ticks:
    return x.numerator if isinstance(x, Fraction) and x.denominator == 1 else x


class Timeline:
    """The graphs of a token's first turns (``rounds[k]`` for turn ``k + 1``) and the pace's
    own graph after them; every time in the main graph's ticks (Fractions where a cell is
    split between turns)."""

    def __init__(self, graph: MovementGraph, rounds: list[MovementGraph]) -> None:
        self.graph = graph
        self.rounds = rounds
        self.paces = [g.pace for g in rounds]
        self.turn = graph.denominator  # ticks of one turn
        self.end = len(rounds) * self.turn  # from here on the pace's own graph applies
        self._scale = [Fraction(graph.denominator, g.denominator) for g in rounds]
        # Per turn k, per node u: its out-edges at turn k's pace, priced in the main graph's
        # ticks (a search asks each of u's edges in turn: one neighbour listing, not one each).
        self._edges: list[dict[int, dict[int, Ticks]]] = [{} for _ in rounds]

    def pace_at(self, ticks: Ticks) -> str:
        """The pace of the turn that ``ticks`` falls in (a boundary starts the next turn)."""
        k = math.floor(ticks / self.turn)
        return self.paces[k] if k < len(self.rounds) else self.graph.pace

    def _cost(self, k: int, u: int, v: int, static: Ticks) -> Ticks | None:
        """Ticks of the whole edge u -> v at turn ``k``'s pace (None: not at that pace)."""
        if k >= len(self.rounds):
            return static
        edges = self._edges[k].get(u)
        if edges is None:
            scale = self._scale[k]
            edges = {}
            for w, t in self.rounds[k].neighbours(u):
                # The first listing of w wins, as a scan of the listing finds it first.
                edges.setdefault(w, t * scale if isinstance(t, int) else t * float(scale))
            self._edges[k][u] = edges
        return edges.get(v)

    def arrive(self, start: Ticks, u: int, v: int, static: Ticks) -> Ticks | None:
        """When the edge u -> v (``static`` ticks at the pace) ends if it starts at ``start``."""
        if start >= self.end:
            return start + static
        left: Fraction = Fraction(1)  # share of the edge still to cross
        now = start
        while True:
            k = math.floor(now / self.turn)
            cost = self._cost(k, u, v, static)
            if cost is None:
                return None
            if k >= len(self.rounds) or cost == 0:
                return _norm(now + left * cost)
            boundary = (k + 1) * self.turn
            need = left * cost
            if now + need <= boundary:
                return _norm(now + need)
            left -= Fraction(boundary - now) / Fraction(cost)
            now = boundary


_CACHE: weakref.WeakKeyDictionary[MovementGraph, tuple[object, Timeline | None]] = (
    weakref.WeakKeyDictionary()
)


def timeline(graph: MovementGraph) -> Timeline | None:
    """The graph's timeline when the token's first turns go at other paces, else None
    (kept per graph while its signature holds)."""
    token = graph.search.tokens[graph.search.start]
    if not graph.system.round_paces(token, graph.pace):
        return None
    sig = graph.signature()
    hit = _CACHE.get(graph)
    if hit is not None and hit[0] == sig:
        return hit[1]
    tl = _timeline(graph)
    _CACHE[graph] = (sig, tl)
    return tl


def _timeline(graph: MovementGraph) -> Timeline | None:
    token = graph.search.tokens[graph.search.start]
    paces = graph.system.round_paces(token, graph.pace)
    if not paces:
        return None
    rounds = [MovementGraph(graph.model, graph.system, graph.token, p) for p in paces]
    if any(g.n_states != graph.n_states for g in rounds):
        return None  # layers differ by pace: not modelled, the pace holds from the start
    return Timeline(graph, rounds)


def timed_search(
    graph: MovementGraph,
    tl: Timeline,
    src: int,
    *,
    limit: Ticks | None = None,
    goal: int | None = None,
) -> tuple[dict[int, Ticks], dict[int, int]]:
    """Dijkstra on departure times from node ``src``: (labels in the main graph's ticks,
    predecessors). ``goal`` is a cell index (stop when settled); ``limit`` drops labels
    beyond it."""
    n = graph.n
    dist: dict[int, Ticks] = {src: 0}
    prev: dict[int, int] = {}
    done: set[int] = set()
    heap: list[tuple[Ticks, int]] = [(0, src)]
    handover = graph.n * graph.n_states > COMPILED_ABOVE
    while heap:
        d, u = heapq.heappop(heap)
        if u in done:
            continue
        if handover and d >= tl.end:
            heapq.heappush(heap, (d, u))
            break
        done.add(u)
        if goal is not None and u % n == goal:
            return {k: v for k, v in dist.items() if k in done}, prev
        for v, t in graph.neighbours(u):
            nd = tl.arrive(d, u, v, t)
            if nd is None or (limit is not None and nd > limit):
                continue
            old = dist.get(v)
            if old is None or nd < old:
                dist[v] = nd
                prev[v] = u
                heapq.heappush(heap, (nd, v))
    else:
        return dist, prev
    return _compiled_rest(graph, dist, done, prev, limit)


def _compiled_rest(
    graph: MovementGraph,
    dist: dict[int, Ticks],
    done: set[int],
    prev: dict[int, int],
    limit: Ticks | None,
) -> tuple[dict[int, Ticks], dict[int, int]]:
    """Finish on the pace's own graph with scipy: a super-source ``N`` joined to every
    frontier node by its exact label (scaled to whole numbers)."""
    from scipy.sparse import csr_matrix
    from scipy.sparse.csgraph import dijkstra as sp_dijkstra

    frontier = {k: v for k, v in dist.items() if k not in done}
    scale = math.lcm(*(Fraction(v).denominator for v in frontier.values())) if frontier else 1
    csr = graph.csr()
    size = csr.shape[0]
    nodes = np.fromiter(frontier, dtype=np.int64, count=len(frontier))
    labels = np.array([float(Fraction(v) * scale) for v in frontier.values()])
    indptr = np.concatenate([csr.indptr, [csr.indptr[-1] + len(nodes)]])
    aug = csr_matrix(
        (
            np.concatenate([csr.data * scale, labels]),
            np.concatenate([csr.indices, nodes]),
            indptr,
        ),
        shape=(size + 1, size + 1),
    )
    lim = np.inf if limit is None else float(Fraction(limit) * scale)
    far, pred = sp_dijkstra(aug, directed=True, indices=size, return_predecessors=True, limit=lim)
    out = {k: v for k, v in dist.items() if k in done}
    reached = np.nonzero(np.isfinite(far[:size]))[0]
    for node, d in zip(reached.tolist(), far[reached].tolist(), strict=True):
        if node in out:
            continue
        out[node] = _norm(Fraction(round(d), scale)) if not graph.euclid else d / scale
        p = int(pred[node])
        if p != size:
            prev[node] = p
    return out, prev
