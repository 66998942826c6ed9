"""The stochastic game with dice: backward induction over the rounds (exact value iteration
over a finite horizon) on the moves' outcome distributions (:mod:`.chance`), in float64.

A position's value is four expectations under the solved play from there: ``pc`` the
chance of a capture, ``u`` the tie-break (``big - r`` for a capture in round ``r``,
``r - big`` for an escape, 0 for a timeout: sooner captures, later escapes), ``pe`` the
chance of an escape and ``rr`` the round the run ends in (the turn limit for a timeout).
The pursuer maximises ``(pc, u)`` in that order, the quarry minimises it; of moves as good
(within :data:`EPS`) the one ending nearest the other token (the pursuer) or farthest
from it (the quarry), in grid steps, then its own cell, then the lowest cell index.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from engine.grid import Cell
from engine.solve.chance import Chance, ranges
from engine.solve.game import Game

#: Two values this close are as good (float64 sums of the same chances in another order).
EPS = 1e-12

#: Moves x columns of values worked out at once (four float64 arrays of it).
CHUNK = 1 << 18

#: Rounds whose values after the first mover's move are kept for :meth:`Expecti.move`.
MIDS_KEPT = 4

#: Values a position holds: pc, u, pe, rr.
PC, U, PE, RR = range(4)


def _sparse(ch: Chance, n: int) -> Any:
    from scipy.sparse import csr_array

    return csr_array((ch.prob, ch.end, ch.optr), shape=(len(ch.src), n))


@dataclass
class Side:
    """One side's moves for the value iteration: ``chance`` grouped by source (``ptr``),
    as a sparse matrix of outcome chances (moves x cells)."""

    chance: Chance
    ptr: np.ndarray
    mat: Any


def side_of(ch: Chance, n: int) -> Side:
    return Side(ch, ch.gptr, _sparse(ch, n))


def pick(
    vals: np.ndarray, near: np.ndarray, ptr: np.ndarray, maximise: bool
) -> tuple[np.ndarray, np.ndarray]:
    """Of each group of moves (rows ``ptr[i]:ptr[i + 1]``), per column, the best by
    ``(pc, u)`` (the largest where ``maximise``, else the smallest), then the smallest
    ``near``, then the first: the values it gives (4 x groups x columns) and its row."""
    starts = ptr[:-1]
    counts = np.diff(ptr)
    # Each group's bound spread over its rows (np.repeat of the groups' rows: one array
    # the size of the moves, not a gather and a difference).
    pc, u = (vals[PC], vals[U]) if maximise else (-vals[PC], -vals[U])
    best = np.maximum.reduceat(pc, starts, axis=0)
    cand = pc >= np.repeat(best - EPS, counts, axis=0)
    best_u = np.maximum.reduceat(np.where(cand, u, -np.inf), starts, axis=0)
    cand &= u >= np.repeat(best_u - EPS, counts, axis=0)
    far = np.iinfo(near.dtype).max
    best_n = np.minimum.reduceat(np.where(cand, near, far), starts, axis=0)
    cand &= near == np.repeat(best_n, counts, axis=0)
    rows = np.arange(len(near), dtype=np.int64)[:, None]
    last = np.int64(len(near))
    first = np.minimum.reduceat(np.where(cand, rows, last), starts, axis=0)
    cols = np.arange(vals.shape[2])[None, :]
    return vals[:, first, cols], first


@dataclass
class Expecti:
    """The solved stochastic game: ``values[r]`` the values (pursuer cell x quarry cell)
    at the start of round ``r + 1`` (index 0: round 1, the start, all four; after it
    ``pc`` and ``u`` only, what play reads; index ``turns``: past the limit)."""

    game: Game
    pursuer: Side
    quarry: Side
    #: The quarry's moves where the pursuer is in its way: pair ``k`` (``bp[k]``, ``bq[k]``)
    #: has the moves of ``blocked`` with ``src == k``.
    blocked: Side | None
    bp: np.ndarray
    bq: np.ndarray
    steps: np.ndarray
    values: list[np.ndarray] = field(default_factory=list)
    _mid: dict[int, np.ndarray] = field(default_factory=dict)
    _every: tuple[np.ndarray, ...] | None = None

    @property
    def big(self) -> int:
        return self.game.turns + 2

    def arrive(self, v: np.ndarray, rnd: int) -> np.ndarray:
        """Values on ending a move in round ``rnd`` on each position, ``v`` those of going
        on from there: a capture, else an escape, at once (the turn loop's check)."""
        g, big = self.game, self.big
        out = v.copy()
        esc = np.broadcast_to(g.exit[None, :], g.cap.shape) & ~g.cap
        ends = ((1.0, 0.0), (big - rnd, rnd - big), (0.0, 1.0), (rnd, rnd))
        for k, (cv, ev) in enumerate(ends[: len(v)]):
            out[k][g.cap] = cv
            out[k][esc] = ev
        return out

    def ply(self, side: str, a: np.ndarray) -> np.ndarray:
        """The values (k x n x n, as ``a``) before ``side`` moves, ``a`` those after its
        move ends, worked out a few columns (the other token's cells) at a time."""
        n = self.game.n
        moves = len((self.pursuer if side == "pursuer" else self.quarry).chance.src)
        width = max(1, CHUNK // max(moves, 1))
        out = np.empty_like(a)
        for lo in range(0, n, width):
            cols = np.arange(lo, min(n, lo + width))
            got = self.ply_cols(side, a, cols)
            if side == "pursuer":
                out[:, :, cols] = got
            else:
                out[:, cols, :] = got
        if side == "quarry" and self.blocked is not None and len(self.bp):
            got, _ = self._blocked(a, None)
            out[:, self.bp, self.bq] = got
        return out

    def ply_cols(self, side: str, a: np.ndarray, cols: np.ndarray) -> np.ndarray:
        """:meth:`ply` for the other token on ``cols`` (sorted): 4 x n x cols for the
        pursuer's move, 4 x cols x n for the quarry's (its moves with the pursuer in its
        way apart: :meth:`_blocked`)."""
        if side == "pursuer":
            s = self.pursuer
            near = self.steps[:, cols][s.chance.dst]
            vals = np.stack([s.mat @ a[k][:, cols] for k in range(len(a))])
            best, _ = pick(vals, near, s.ptr, True)
            return best
        s = self.quarry
        near = -self.steps[:, cols][s.chance.dst]
        vals = np.stack([s.mat @ a[k].T[:, cols] for k in range(len(a))])
        best, _ = pick(vals, near, s.ptr, False)
        return np.ascontiguousarray(best.transpose(0, 2, 1))  # 4 x cols x n (pursuer rows)

    def _blocked(self, a: np.ndarray, ks: np.ndarray | None) -> tuple[np.ndarray, np.ndarray]:
        """The quarry's best over its moves in the way of the pursuer for pairs ``ks``
        (None: every pair, its arrays made once): values (k x len(ks)) and the chosen move
        (an index into ``blocked.chance``)."""
        if ks is None:
            if self._every is None:
                self._every = self._pairs(np.arange(len(self.bp)))
            prep = self._every
        else:
            prep = self._pairs(ks)
        rows, gptr, owner, flat, prob, near = prep
        vals = np.stack(
            [np.bincount(owner, prob * a[k].ravel()[flat], len(rows)) for k in range(len(a))]
        )[:, :, None]
        best, first = pick(vals, near, gptr, False)
        return best[:, :, 0], rows[first[:, 0]]

    def _pairs(self, ks: np.ndarray) -> tuple[np.ndarray, ...]:
        """What :meth:`_blocked` reads of pairs ``ks``: their moves (rows of
        ``blocked.chance``), grouped by pair, each outcome's move, its position (pursuer
        cell x quarry cell, raveled) and chance, and each move's distance key."""
        b = self.blocked
        assert b is not None
        ch, n = b.chance, self.game.n
        lo, hi = b.ptr[ks], b.ptr[ks + 1]
        rows = ranges(lo, hi)
        gptr = np.zeros(len(ks) + 1, dtype=np.int64)
        np.cumsum(hi - lo, out=gptr[1:])
        counts = np.diff(ch.optr)[rows]
        oi = ranges(ch.optr[rows], ch.optr[rows + 1])
        owner = np.repeat(np.arange(len(rows)), counts)
        p_row = self.bp[np.repeat(ks, hi - lo)]
        flat = np.repeat(p_row, counts) * n + ch.end[oi]
        near = -self.steps[p_row, ch.dst[rows]][:, None]
        return rows, gptr, owner, flat, ch.prob[oi], near

    def solve(self) -> None:
        """Backward induction from past the turn limit to round 1."""
        g, n = self.game, self.game.n
        first, second = ("pursuer", "quarry") if g.pursuer_first else ("quarry", "pursuer")
        v = np.zeros((4, n, n))
        v[RR] = g.turns
        self.values = [v]
        for rnd in range(g.turns, 0, -1):
            mid = self.ply(second, self.arrive(v, rnd))
            v = self.ply(first, self.arrive(mid, rnd))
            self.values.append(v)
        self.values.reverse()
        # Play reads the chance of a capture and the tie-break only (:meth:`move`).
        self.values[1:] = [np.ascontiguousarray(x[:2]) for x in self.values[1:]]

    def after(self, rnd: int) -> np.ndarray:
        """The values at the start of round ``rnd + 1`` (past the limit: a timeout)."""
        return self.values[min(max(rnd, 1), self.game.turns)]

    def move(self, side: str, p: int, q: int, rnd: int) -> int:
        """The solved move of ``side`` at round ``rnd`` with the tokens on cell indices
        ``p`` and ``q`` (its turn first or second in the round, as the game's order): the
        cell index it goes to."""
        g = self.game
        rnd = min(max(rnd, 1), g.turns)
        first = (side == "pursuer") == g.pursuer_first
        a = self.arrive(self.after(rnd), rnd)
        if first:
            got = self._mid.get(rnd)
            if got is None:
                other = "quarry" if side == "pursuer" else "pursuer"
                got = self._mid[rnd] = self.arrive(self.ply(other, a), rnd)
                if len(self._mid) > MIDS_KEPT:
                    self._mid.pop(next(iter(self._mid)))
            a = got
        if side == "pursuer":
            s = self.pursuer
            rows = np.arange(s.ptr[p], s.ptr[p + 1])
            vals = np.stack([s.mat[rows] @ a[k][:, [q]] for k in range(len(a))])
            near = self.steps[s.chance.dst[rows]][:, [q]]
            _, at = pick(vals, near, np.array([0, len(rows)]), True)
            return int(s.chance.dst[rows[at[0, 0]]])
        b = self.blocked
        if b is not None:
            k = np.flatnonzero((self.bp == p) & (self.bq == q))
            if len(k):
                _, chosen = self._blocked(a, k[:1])
                return int(b.chance.dst[chosen[0]])
        s = self.quarry
        rows = np.arange(s.ptr[q], s.ptr[q + 1])
        vals = np.stack([s.mat[rows] @ a[k].T[:, [p]] for k in range(len(a))])
        near = -self.steps[s.chance.dst[rows]][:, [p]]
        _, at = pick(vals, near, np.array([0, len(rows)]), False)
        return int(s.chance.dst[rows[at[0, 0]]])


def steps_between(game: Game) -> np.ndarray:
    """Grid steps between every two cells either token may stand on (int32; 0 elsewhere)."""
    n = game.n
    grid = game.quarry.graph.grid
    out = np.zeros((n, n), dtype=np.int32)
    cells = np.flatnonzero(game.stand_p | game.stand_q).tolist()
    at: list[Cell] = [grid.cell_of_index(c) for c in cells]
    for i, a in zip(cells, at, strict=True):
        for j, b in zip(cells, at, strict=True):
            out[i, j] = grid.steps(a, b)
    return out
