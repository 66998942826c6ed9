"""The least turns from many tokens to every cell, kept up to date as they move
(:class:`ThreatMap`; :meth:`engine.sim.cache.FieldCache.least_turns`)."""

from __future__ import annotations

from typing import Any

import numpy as np

from engine import kernel
from engine.grid import Cell
from engine.sim.fields import INF, Profile
from engine.sim.toward import toward_bound

#: An unreached node's steps in a threat map.
_UNREACHED = np.iinfo(np.int64).max


def kept_map_fits(prof: Profile, nodes: int) -> bool:
    """Whether ``prof``'s tokens' least turns may be kept by a :class:`ThreatMap`: the
    kernel runs it, the graph has more than ``nodes`` nodes (a smaller graph's fields from
    each token's cell are kept whole and serve every run of a batch), and its ticks are
    whole numbers (its distances exact integers, whatever order their sums are made in)."""
    g = prof.graph
    return (
        g.n * g.n_states > nodes
        and kernel.available()
        and prof._kernel_of("csr")[3] is not None
        and prof._kernel_of("rev")[3] is not None
    )


class ThreatMap:
    """The least turns from a set of tokens, all on one profile, to every cell: what
    ``prof.turns_from(cell)`` of each, taken cell by cell at their least, gives, bit for
    bit (one Dijkstra from all their nodes gives each node's least integer steps; a cell's
    least over its nodes times the step over the denominator is each token's turns at
    their least, as division is monotone). Kept as the tokens move: a move clears the
    nodes the token reached first and reaches them again from around, and spreads from
    its new node (engine/_kernel.c ``threat_move``), so a move costs the cells it changes,
    not a field. Only where :func:`kept_map_fits`."""

    def __init__(self, prof: Profile) -> None:
        g = prof.graph
        fwd, rev = prof._kernel_of("csr"), prof._kernel_of("rev")
        self._graph = (fwd[0], fwd[1], fwd[3])
        self._rev = (rev[0], rev[1], rev[3])
        self._step = float(fwd[4])
        self._den = float(g.denominator)
        size = g.n * g.n_states
        self._kept = (
            np.full(size, _UNREACHED, dtype=np.int64),
            np.full(size, -1, dtype=np.int32),
            np.full(g.n, INF),
        )
        self._node = g.node
        #: Each token's slot in ``_sources`` (the node it stands on, -1: none).
        self._slots: dict[str, int] = {}
        self._sources = np.zeros(0, dtype=np.int64)
        self.nbytes = sum(a.nbytes for a in self._kept)

    def least(self, cells: dict[str, Cell]) -> np.ndarray:
        """The least turns from the tokens on ``cells`` (by token id) to every cell (inf
        where none reaches): the kept array, changed by the next call (copy to keep it)."""
        nodes = {tid: self._node(c) for tid, c in cells.items()}
        slots, sources = self._slots, self._sources
        moved = [t for t, v in nodes.items() if t not in slots or sources[slots[t]] != v]
        gone = [t for t, s in slots.items() if t not in nodes and sources[s] >= 0]
        if len(moved) + len(gone) > max(1, len(nodes) // 2):
            self._make(nodes)
            return self._kept[2]
        for tid in gone:
            self._move(slots[tid], -1)
        for tid in moved:
            if tid not in slots:
                slots[tid] = len(self._sources)
                self._sources = np.append(self._sources, np.int64(-1))
            self._move(slots[tid], nodes[tid])
        return self._kept[2]

    def _move(self, slot: int, node: int) -> None:
        old = int(self._sources[slot])
        self._sources[slot] = node
        kernel.threat_move(
            self._graph, self._rev, self._sources, self._kept, self._step, self._den, slot, old
        )

    def _make(self, nodes: dict[str, int]) -> None:
        """Every token's map made at once (a new run's start, or most of them moved)."""
        self._slots = {tid: k for k, tid in enumerate(nodes)}
        self._sources = np.array(list(nodes.values()), dtype=np.int64)
        steps, owner, turns = self._kept
        steps.fill(_UNREACHED)
        owner.fill(-1)
        turns.fill(INF)
        kernel.threat_move(
            self._graph, self._rev, self._sources, self._kept, self._step, self._den, -1, -1
        )


class ThreatMaps:
    """A field cache's :class:`ThreatMap` per profile, and the least turns they gave, by
    the tokens' profiles and cells (:meth:`FieldCache.least_turns`)."""

    #: Least-turn arrays kept, the newest (the oldest dropped beyond this, its bytes given
    #: back): a key names where every token stands, so an array is asked again within a
    #: turn or two or never, and a round of many tokens would otherwise keep one a move,
    #: past the field cache's budget, and so drop every field at once (FieldCache.trim).
    KEPT = 16

    #: Least turns of tokens whose maps are not kept (a small graph's, from their fields,
    #: :meth:`FieldCache.threat`) kept by the same key (all go beyond this), where
    #: :attr:`PLAIN` is on: the quarry asks them twice a turn (its exit, then where it
    #: flees) and the first pursuer after it once more (where the quarry makes for), the
    #: pursuers unmoved. They are the arrays the field cache keeps (its bytes count them);
    #: off: asked of it anew.
    PLAIN_KEPT = 64
    PLAIN = True

    def __init__(self) -> None:
        self._maps: dict[Profile, ThreatMap] = {}
        self._least: dict[tuple[Any, ...], np.ndarray] = {}
        self._plain: dict[tuple[Any, ...], np.ndarray] = {}

    def least(
        self, fields: Any, tokens: list[tuple[str, Profile, Cell]], n: int | None
    ) -> np.ndarray:
        """:meth:`FieldCache.least_turns` of ``fields`` (its ``THREAT_NODES``, its
        ``threat`` for the tokens whose graph is small, its ``weight``)."""
        key = (frozenset((p, c) for _, p, c in tokens), n)
        got = self._least.get(key, self._plain.get(key))
        if got is not None:
            return got
        groups: dict[Profile, dict[str, Cell]] = {}
        plain = []
        for tid, prof, cell in tokens:
            if prof in self._maps or kept_map_fits(prof, fields.THREAT_NODES):
                groups.setdefault(prof, {})[tid] = cell
            else:
                plain.append(prof.turns_from(cell))
        if not groups:
            return self._keep_plain(key, fields.threat(plain, n))
        parts = []
        for prof, cells in groups.items():
            kept = self._maps.get(prof)
            if kept is None:
                kept = self._maps[prof] = ThreatMap(prof)
                fields.weight.used += kept.nbytes
            parts.append(kept.least(cells))
        if plain:
            parts.append(fields.threat(plain, n))
        # The least made into a new array (the kept maps change with the next move).
        got = parts[0].copy() if len(parts) == 1 else np.minimum(parts[0], parts[1])
        for t in parts[2:]:
            np.minimum(got, t, out=got)
        got.setflags(write=False)
        fields.weight.used += got.nbytes
        while len(self._least) >= self.KEPT:
            fields.weight.used -= self._least.pop(next(iter(self._least))).nbytes
        self._least[key] = got
        return got

    def _keep_plain(self, key: tuple[Any, ...], got: np.ndarray) -> np.ndarray:
        """``got`` (:meth:`FieldCache.threat`'s) kept by ``key`` where :attr:`PLAIN` is on."""
        if self.PLAIN:
            if len(self._plain) >= self.PLAIN_KEPT:
                self._plain.clear()  # (asked again within a turn or never: no order kept)
            self._plain[key] = got
        return got

    def forget(self) -> int:
        """Drop the least turns kept by tokens' cells (:meth:`FieldCache.trim`), and give
        the bytes of what stays: the maps themselves, one per profile, each the same as
        made again from nothing (a map is exact after every move), so a trim costs no
        map made again from every token."""
        self._least.clear()
        self._plain.clear()
        return sum(m.nbytes for m in self._maps.values())


def least_plain(times: list[Any], n: int) -> np.ndarray:
    """The elementwise least of ``times`` (+inf where there are none): the plain way a
    :class:`ThreatMap` is held equal to."""
    out = np.full(n, INF)
    for t in times:
        np.minimum(out, t, out=out)
    return out


def _kept_turns(prof: Profile, cell: Cell) -> np.ndarray | None:
    """``prof.turns_from(cell)`` where it is kept (made already), else None."""
    got = prof._turns_from.get(cell)
    shared = prof.shared
    if got is None and shared is not None:
        got = shared.turns.get((prof.scale, prof.graph.denominator, cell))
    return got


def _whole(prof: Profile, nodes: int) -> bool:
    """Whether ``prof``'s graph has more than ``nodes`` nodes and whole-number ticks (its
    distances exact integers, made in any order: forward or backward, bounded or whole)."""
    g = prof.graph
    return g.n * g.n_states > nodes and prof._kernel_of("csr")[3] is not None


def turns_to(prof: Profile, src: Cell, dst: Cell, nodes: int) -> float:
    """``prof.turns_from(src)`` at ``dst``, bit for bit: on a graph of more than ``nodes``
    nodes with whole-number ticks where those turns are not kept, from the field to
    ``dst`` at ``src``'s node (the least ticks from it to any of ``dst``'s nodes, as the
    turns from ``src`` take them; one field to a cell serves every token's turns to it)."""
    g = prof.graph
    kept = _kept_turns(prof, src)
    if kept is None and not _whole(prof, nodes):
        kept = prof.turns_from(src)
    if kept is not None:
        return float(kept[g.grid.index(dst)])
    return float(prof.field_to((dst,)).dist[g.node(src)]) / g.denominator


def claim_turns(
    prof: Profile, src: Cell, cells: np.ndarray, less: np.ndarray, nodes: int
) -> np.ndarray:
    """``prof.turns_from(src)`` on the cell indexes ``cells`` where those turns less
    ``less`` (one a cell) may be least: every cell whose turns less its ``less`` could be
    the least of them, or tie it, gets its exact turns (bit for bit), the others and every
    cell not in ``cells`` inf. On a graph of more than ``nodes`` nodes with whole-number
    ticks where those turns are not kept, settled only until that least is proven (an A*
    toward the cells, engine/_kernel.c ``claim_reach``: a cell not settled may have no
    fewer turns than the open keys allow); else the whole turns, exact everywhere."""
    if not _claim_bounded(prof, src, nodes):
        return prof.turns_from(src)
    out = np.full(prof.graph.n, INF)
    out[cells] = claim_turns_on(prof, src, cells, less, nodes)
    out.setflags(write=False)
    return out


def _claim_bounded(prof: Profile, src: Cell, nodes: int) -> bool:
    """Whether :func:`claim_turns` from ``src`` settles only until its least is proven."""
    return _kept_turns(prof, src) is None and _whole(prof, nodes) and kernel.available()


def claim_turns_on(
    prof: Profile, src: Cell, cells: np.ndarray, less: np.ndarray, nodes: int
) -> np.ndarray:
    """:func:`claim_turns` on the cell indexes ``cells`` alone (one a cell, in their
    order): no array of the whole map made."""
    g = prof.graph
    if not _claim_bounded(prof, src, nodes):
        return prof.turns_from(src)[cells]
    indptr, indices, _, steps, step = prof._kernel_of("csr")
    kappa, span = toward_bound(prof, "csr")
    cells = np.ascontiguousarray(cells, dtype=np.int64)
    got = np.empty(len(cells))
    # A landmark's distances bound the search too where every cell's nodes reach it.
    guide, goff = None, 0
    mark = prof.landmark
    if mark is not None and len(cells):
        reach = mark.dist.reshape(g.n_states, g.n)[:, cells]
        if np.isfinite(reach).all():
            guide, goff = mark.dist, int(reach.max() // step)
    kernel.claim_reach(
        (indptr, indices, steps),
        span,
        g.node(src),
        cells,
        np.ascontiguousarray(less, dtype=np.float64),
        g.grid.width,
        g.n,
        kappa,
        step,
        float(g.denominator),
        got,
        guide,
        goff,
    )
    return got
