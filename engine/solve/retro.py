"""Retrograde analysis of a :class:`~engine.solve.game.Game` without dice.

``K[j]``: the positions (at the start of a round, pursuer cell x quarry cell) from which the
pursuer forces a capture within ``j`` rounds whatever the quarry does (and before it
escapes); ``S[j]`` the same for the quarry's escape. Both grow with ``j``; a position in
neither within the turn limit is a timeout. Each round is worked out ply by ply with the
turn loop's checks after every move (a capture first, then an exit), over bit-packed rows:
"some move of the pursuer" is an OR over its moves' rows, "every move of the quarry" an
AND, and the quarry's moves near the pursuer are its own list (:class:`Blocked`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from engine.solve.game import Game, Reach


def _any_rows(y: np.ndarray, reach: Reach) -> np.ndarray:
    """``out[a, :] = OR of y[b, :] over b in reach.of(a)`` (``y`` bool, square), on rows
    packed 64 columns to a word."""
    rows, n = y.shape
    words = -(-n // 64)
    packed = np.zeros((rows, words * 8), dtype=np.uint8)
    packed[:, : -(-n // 8)] = np.packbits(y, axis=1)
    got = np.bitwise_or.reduceat(packed.view(np.uint64)[reach.idx], reach.ptr[:-1], axis=0)
    return np.unpackbits(got.view(np.uint8), axis=1, count=n).view(bool)


def pursuer_any(game: Game, y: np.ndarray) -> np.ndarray:
    """``[p, q]``: some move of the pursuer from ``p`` ends on a ``y`` position."""
    return _any_rows(y, game.reach_p)


def quarry_any(game: Game, y: np.ndarray) -> np.ndarray:
    """``[p, q]``: some move of the quarry from ``q`` (the pursuer on ``p``) ends on a
    ``y`` position."""
    out = _any_rows(np.ascontiguousarray(y.T), game.reach_q).T.copy()
    b = game.blocked
    if b is not None and len(b.p):
        out[b.p, b.q] = np.logical_or.reduceat(y.ravel()[b.flat], b.ptr[:-1])
    return out


@dataclass(frozen=True)
class Retro:
    """What :func:`solve_retro` finds: ``capture_in[p, q]`` the fewest rounds in which the
    pursuer forces a capture from the position (0: it cannot within the turn limit),
    ``escape_in`` the same for the quarry's escape, and the rounds worked out."""

    capture_in: np.ndarray
    escape_in: np.ndarray
    rounds: int


def _round(game: Game, won: np.ndarray, pursuer_goal: bool) -> np.ndarray:
    """The positions of the next round from which the side of ``pursuer_goal`` forces its
    goal, ``won`` the positions (next round) from which it forces it already."""
    cap, exits = game.cap, game.exit[None, :]
    if pursuer_goal:
        arrive = cap | (~exits & won)  # a capture, or on to a won position (no escape)
    else:
        arrive = ~cap & (exits | won)
    movers = ("p", "q") if game.pursuer_first else ("q", "p")
    for mover in reversed(movers):
        mine = (mover == "p") == pursuer_goal
        if mover == "p":
            moved = pursuer_any(game, arrive if mine else ~arrive)
        else:
            moved = quarry_any(game, arrive if mine else ~arrive)
        before = moved if mine else ~moved
        if mover == movers[0]:
            return before
        arrive = cap | (~exits & before) if pursuer_goal else ~cap & (exits | before)
    raise AssertionError("a round has two plies")


def solve_retro(game: Game) -> Retro:
    """Retrograde analysis up to the turn limit (or until nothing changes)."""
    n = game.n
    k = np.zeros((n, n), dtype=bool)
    s = np.zeros((n, n), dtype=bool)
    cap_in = np.zeros((n, n), dtype=np.int32)
    esc_in = np.zeros((n, n), dtype=np.int32)
    rounds = 0
    for j in range(1, game.turns + 1):
        rounds = j
        k2 = _round(game, k, True)
        s2 = _round(game, s, False)
        cap_in[k2 & ~k] = j
        esc_in[s2 & ~s] = j
        if np.array_equal(k2, k) and np.array_equal(s2, s):
            break
        k, s = k2, s2
    return Retro(cap_in, esc_in, rounds)
