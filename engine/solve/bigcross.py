"""Which turns :mod:`.crossing` walks: a proven reduction of the aims a position's turn is
walked toward (issue 39: a 40x30 map's crossings took every position's turn toward every
cell, cells squared).

The loop's turn from a cell aimed at ``dst`` walks down the field toward ``dst`` (each step
the out-edge that goes furthest down it: a shortest way, :func:`engine.sim.fields.plan_turn`)
until the next edge does not fit the turn. It ends anywhere but on a cell of the game's
one-turn reach only where that next edge takes more than a whole turn (a *slow edge*,
:class:`engine.sim.fields.Walk`'s ``after``): the rest of the turn goes into it. The way to
the slow edge's source ``a`` is a shortest one, so it takes ``d(src, a)`` (the field's
steps telescope), at most a turn; and the way goes on by the slow edge ``a -> b``, so
``d(src, a) + w(a, b) + d(b, dst) == d(src, dst)``. Every aim that fails this for every
slow edge (with a tolerance that only lets more in) ends on a cell of the reach, which the
game's move row holds already (aimed at itself): it is not walked (:meth:`Reducer.cell_aims`).

A crossing under way at ``a`` toward ``b`` goes on only where the field's first step from
``a`` is the slow edge toward ``b`` (a slow edge 0 turns away: one of ``a``'s aims kept);
any other aim turns away and walks as the token standing on ``a`` does
(:meth:`engine.sim.walking.Walker.walk_down` drops the crossing first), so its row is
``a``'s cells and the turns of ``a``'s kept aims.

The quarry's turn with the pursuer's cell ``p`` in its way walks the field with ``p`` taken
away where its way meets ``p``: the same argument on the graph less ``p``
(:meth:`Reducer.blocked_aims`; the distances from a slow edge's head without ``p`` are at
least those with it, so the test keeps every aim it must).

:func:`side_moves` and :func:`blocked_moves` give the rows :mod:`.crossing` gives walking
every aim (``tests/test_solve_bigcross.py`` holds them equal on random maps with
crossings), with the turns walked counted against its limit. Where a cell's standing token
is on another profile than the game's (a turn ending there is refused), every aim is walked
the plain way (:meth:`Reducer.applies`)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

import numpy as np
from scipy.sparse.csgraph import dijkstra

from engine import kernel

if TYPE_CHECKING:
    from engine.solve.game import Game

#: The slack (in ticks, relative) the distance tests allow: float sums of whole ticks are
#: exact, and a looser test walks more aims, never fewer.
REL_TOL = 1e-9
ABS_TOL = 1e-6


class StandingProfiles(Protocol):
    """Whether a token of ``side`` standing on cell index ``cell`` (in that cell's mode) is
    on the profile the game was made for (:meth:`engine.sim.dryturn.DryTurns.stands_on_base`)."""

    def stands_on_base(self, side: str, cell: int) -> bool: ...


class Positions(Protocol):
    """The crossing positions (:class:`engine.solve.crossing.Crossings`): position ``n + i``
    stands on cell index ``stand[i]``."""

    @property
    def n(self) -> int: ...

    @property
    def stand(self) -> list[int]: ...


class Walks(Protocol):
    """The turns of one lift (:class:`engine.solve.crossing._Walks`): ``end`` walks one
    (counted), ``entered`` and ``ends`` those walked with nobody in the way."""

    @property
    def game(self) -> Game: ...

    @property
    def out(self) -> Positions: ...

    @property
    def entered(self) -> dict[tuple[str, int, int], frozenset[int]]: ...

    @property
    def ends(self) -> dict[tuple[str, int, int], int]: ...

    def end(self, side: str, src: int, dst: int, blocker: int | None) -> int: ...


def _within(lhs: np.ndarray, rhs: np.ndarray) -> np.ndarray:
    """``lhs <= rhs`` up to the tolerance, finite both."""
    return np.isfinite(lhs) & np.isfinite(rhs) & (lhs <= rhs + REL_TOL * np.abs(rhs) + ABS_TOL)


class Reducer:
    """The aims worth walking for one side's token on its graph (see the module)."""

    def __init__(self, game: Game, side: str) -> None:
        mover = game.pursuer if side == "pursuer" else game.quarry
        g = mover.graph
        self.n = n = g.n
        self.states = g.n_states
        self.den = float(g.denominator)
        csr = g.csr()
        self.csr = csr
        size = csr.shape[0]
        self.start = g.search.start * g.n_par * n  # a cell's node where a turn starts
        rows = np.repeat(np.arange(size), np.diff(csr.indptr))
        slow = np.flatnonzero(csr.data > self.den + 1e-9)
        self.sa, self.sb = rows[slow], csr.indices[slow].astype(np.int64)
        self.sw = csr.data[slow].astype(np.float64)
        heads = np.unique(self.sb)
        self.head_row = {int(h): i for i, h in enumerate(heads.tolist())}
        # From each slow edge's head to every cell (the least over the cell's states).
        self.from_head = self._to_cells(dijkstra(csr, indices=heads)) if len(heads) else None
        # The cells within a turn of a slow edge's source (others walk to a reach cell).
        near = np.zeros(n, dtype=bool)
        if len(slow):
            back = dijkstra(
                csr.T.tocsr(), indices=np.unique(self.sa), min_only=True, limit=self.den + 1e-6
            )
            near = np.isfinite(back[self.start : self.start + n])
        self.near = near
        self._rows: dict[int, np.ndarray] = {}
        self._indptr = csr.indptr.astype(np.int64)
        self._indices = csr.indices.astype(np.int32)
        self._into = csr.indices % n  # each edge's head cell
        self._data = csr.data.astype(np.float64)
        whole = self._data == np.round(self._data)
        self._steps: np.ndarray | None = None
        if whole.all() and self._data.sum() < 2**31:  # the kernel's bucket queue
            self._steps = self._data.astype(np.int32)

    def _to_cells(self, dist: np.ndarray) -> np.ndarray:
        return dist.reshape(len(dist), self.states, self.n).min(axis=1)

    def _from(self, cell: int) -> np.ndarray:
        """Distances from ``cell``'s start node to every node (kept)."""
        got = self._rows.get(cell)
        if got is None:
            got = self._rows[cell] = dijkstra(self.csr, indices=[self.start + cell])[0]
        return got

    def applies(self, stands: np.ndarray, profiles: StandingProfiles, side: str) -> bool:
        """Whether every cell ``stands`` (a mask) may be stood on in the game's profile."""
        return all(profiles.stands_on_base(side, c) for c in np.flatnonzero(stands).tolist())

    def _aims_by(self, dist: np.ndarray, edges: np.ndarray, to: np.ndarray) -> np.ndarray:
        """The cells ``dst`` with ``dist[a] + w + d(b, dst) <= to[dst]`` for a slow edge of
        ``edges`` (indices into the slow edges)."""
        if not len(edges):
            return np.zeros(self.n, dtype=bool)
        assert self.from_head is not None
        heads = self.from_head[[self.head_row[int(b)] for b in self.sb[edges].tolist()]]
        ways = (dist[self.sa[edges]] + self.sw[edges])[:, None] + heads
        return np.asarray(_within(ways, to[None, :]).any(axis=0), dtype=bool)

    def _turn_edges(self, dist: np.ndarray) -> np.ndarray:
        """The slow edges whose source is within a turn by ``dist``."""
        da = dist[self.sa]
        return np.flatnonzero(np.isfinite(da) & (da <= self.den + REL_TOL * self.den + ABS_TOL))

    def cell_aims(self, cell: int) -> np.ndarray:
        """The aims from ``cell`` whose turn may end off the reach's cells (a mask)."""
        if not self.near[cell]:
            return np.zeros(self.n, dtype=bool)
        dist = self._from(cell)
        return self._aims_by(dist, self._turn_edges(dist), self._to_cells(dist[None, :])[0])

    def blocked_aims(self, cell: int, p: int) -> np.ndarray:
        """:meth:`cell_aims` on the graph less cell index ``p``: the aims whose turn with
        ``p`` in the way may end off the cells (a mask)."""
        if not self.near[cell]:
            return np.zeros(self.n, dtype=bool)
        dist = self._without(cell, p)
        edges = self._turn_edges(dist)
        edges = edges[self.sb[edges] % self.n != p]
        return self._aims_by(dist, edges, self._to_cells(dist[None, :])[0])

    def _without(self, cell: int, p: int) -> np.ndarray:
        """Distances from ``cell``'s start node with every node of cell ``p`` taken away
        (the graph less its edges into ``p``)."""
        csr = self.csr
        cut = np.flatnonzero(self._into == p)
        indptr = self._indptr - np.searchsorted(cut, self._indptr, side="left")
        indices = np.delete(self._indices, cut)
        data = np.delete(self._data, cut)
        src = np.array([self.start + cell], dtype=np.int64)
        if kernel.available():
            dist = np.full(csr.shape[0], np.inf)
            steps = None if self._steps is None else np.delete(self._steps, cut)
            kernel.field(indptr, indices, data, src, dist, steps, 1.0)
            return dist
        from scipy.sparse import csr_array

        graph = csr_array((data, indices, indptr), shape=csr.shape)
        return dijkstra(graph, indices=src)[0]


def side_moves(
    w: Walks,
    side: str,
    moves: dict[int, dict[int, int]],
    todo: list[int],
    red: Reducer,
    aims: list[int],
) -> None:
    """:func:`engine.solve.crossing._side_moves` walking only the aims :class:`Reducer`
    keeps: a cell's reach aimed at itself, a crossing's its cell's (turning away), and the
    turns that may end elsewhere walked (one at least from a crossing: whether its token
    is on the game's profile)."""
    game, out = w.game, w.out
    reach = game.reach_p if side == "pursuer" else game.reach_q
    order = np.array(aims, dtype=np.int64)
    while todo:
        src = todo.pop()
        if src in moves:
            continue
        if src < out.n:
            cell = src
            keep = red.cell_aims(cell)
        else:
            i = src - out.n
            cell = out.stand[i]
            keep = red.cell_aims(cell)  # going on too: its slow edge is 0 turns away
        row = {c: c for c in sorted(reach.of(cell).tolist())}
        walk = order[keep[order]].tolist()
        if src >= out.n and not walk:
            walk = [cell]
        for dst in walk:
            end = w.end(side, src, dst, None)
            row.setdefault(end, dst)
            if end not in moves:  # a crossing, or a cell only a crossing gets into
                todo.append(end)
        moves[src] = row


def blocked_moves(
    w: Walks, quarry: dict[int, dict[int, int]], stand_p: np.ndarray, red: Reducer
) -> dict[tuple[int, int], dict[int, int]]:
    """:func:`engine.solve.crossing._blocked_moves` over the turns :func:`side_moves`
    walked: per ``(pursuer cell, source)`` where the pursuer may be in the way (a cell the
    source's turns enter, or where the game's cell moves differ), the cells around it, the
    walked turns (again with it there where their way entered it) and the aims that may end
    off the cells with it there (:meth:`Reducer.blocked_aims`), walked both ways."""
    game, out = w.game, w.out
    b = game.blocked
    assert b is not None
    n = out.n
    reach = game.reach_q
    cells_of = {
        (int(b.p[k]), int(b.q[k])): b.idx[b.ptr[k] : b.ptr[k + 1]].tolist() for k in range(len(b.p))
    }
    walked: dict[int, dict[int, int]] = {}
    for (side, src, dst), end in w.ends.items():
        if side == "quarry":
            walked.setdefault(src, {})[dst] = end
    got: dict[tuple[int, int], dict[int, int]] = {}
    for src in sorted(quarry):
        cell = src if src < n else out.stand[src - n]
        around = reach.of(cell).tolist()
        entered: set[int] = set(around) if len(around) > 1 else set()
        mine = walked.setdefault(src, {})
        for dst in mine:
            entered |= w.entered[("quarry", src, dst)]
        for p in np.flatnonzero(stand_p).tolist():
            if not ((src < n and (p, src) in cells_of) or p in entered):
                continue
            if src < n:
                cells = cells_of.get((p, src))
                if cells is None:
                    cells = [c for c in quarry[src] if c < n]
            else:
                cells = cells_of.get((p, cell), around)
            got[(p, src)] = _around(w, src, p, cells, mine, red.blocked_aims(cell, p))
    return got


def _around(
    w: Walks, src: int, p: int, cells: list[int], mine: dict[int, int], extra: np.ndarray
) -> dict[int, int]:
    """The quarry's row from ``src`` with the pursuer's cell ``p`` in its way: ``cells``
    around it, the turns walked from ``src`` (``mine``: aim to end, more added) and those
    ``extra`` keeps, each walked again with ``p`` there where its way entered it and it may
    end off the cells."""
    row = {c: c for c in sorted(cells)}
    for dst in sorted(set(mine) | set(np.flatnonzero(extra).tolist())):
        if dst not in mine:
            mine[dst] = w.end("quarry", src, dst, None)
        end = mine[dst]
        if p in w.entered[("quarry", src, dst)]:
            if not extra[dst] and dst != p:
                # With it there, the way goes round it (it toward its cell: the same way
                # cut before it) and ends on a cell around it.
                continue
            end = w.end("quarry", src, dst, p)
        row.setdefault(end, dst)
    return row


def reducers(game: Game, profiles: StandingProfiles) -> dict[str, Reducer | None]:
    """Per side, its :class:`Reducer`, or None where every aim is walked the plain way (a
    cell it may stand on puts it on another profile: the plain walk refuses it)."""
    got: dict[str, Reducer | None] = {}
    for side, stand in (("pursuer", game.stand_p), ("quarry", game.stand_q)):
        red = Reducer(game, side)
        got[side] = red if red.applies(stand, profiles, side) else None
    return got


def planned(red: Reducer, stand: np.ndarray) -> int:
    """The turns :func:`side_moves` walks from the cells ``stand`` (a mask) at least."""
    return sum(int(red.cell_aims(c).sum()) for c in np.flatnonzero(stand & red.near).tolist())


def unchanged(
    game: Game,
    size: int,
    moves: dict[str, dict[int, dict[int, int]]],
    blocked_rows: dict[tuple[int, int], dict[int, int]],
) -> bool:
    """Whether the crossings' walks found nothing the game has not (no crossing position,
    each row the game's own: the game's moves around the pursuer where it keeps them, its
    own moves elsewhere): then the game is its own lift, every move aimed at its end."""
    if size != game.n:
        return False
    for side, reach in (("pursuer", game.reach_p), ("quarry", game.reach_q)):
        for pos, row in moves[side].items():
            if len(row) != len(reach.of(pos)) or not set(reach.of(pos).tolist()) >= row.keys():
                return False
    b = game.blocked
    if b is None:
        return not blocked_rows
    kept = {(int(p), int(q)): k for k, (p, q) in enumerate(zip(b.p, b.q, strict=True))}
    if not kept.keys() <= blocked_rows.keys():
        return False
    for (p, q), row in blocked_rows.items():
        k = kept.get((p, q))
        want = game.reach_q.of(q) if k is None else b.idx[b.ptr[k] : b.ptr[k + 1]]
        if len(row) != len(want) or not set(want.tolist()) >= row.keys():
            return False
    return True
