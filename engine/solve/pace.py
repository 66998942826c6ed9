"""A token's pace state as part of the solve's positions: D6's speed, which may change
two levels a round (seed 003: the pace ramp from a stop), and its one movement roll a
round, whose failure cuts the move short (Movement Failures: half, a quarter) and may
leave a penalty, a lost round or a stop that carries into the rounds after.

A position is a cell and a pace state: what the token's last turn left of it beyond where
it stands (its counters and conditions, less the system's notes that no rule reads). Each
side's states are found from the token as the solve finds it, turn by turn: every turn
from every position it reaches, aiming at every cell of its reach at the pace that turn
may use, is the turn loop's own (:class:`PacedTurns`, walked by
:class:`engine.sim.paceturn.SolveTurns`), each degree of its roll a branch with the
check's exact chance; the state it leaves is a new position where it is new. The
positions ``k * n + c`` (state ``k`` on cell index ``c``) are solved by the same backward
induction as the other games with dice (:class:`~engine.solve.expect.Expecti`).

Refused in one line: more pace states a side than :data:`MAX_PACE_STATES`, more turns
walked than :data:`MAX_PACE_TURNS`, more moves than the dice solve holds, and what a turn may leave that the solve does not carry
(crossings of more than a turn under way, rolls at a turn's start, rolls at its end whose
outcomes the system does not list).
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field, replace
from fractions import Fraction
from typing import Any, Protocol

import numpy as np

from engine.grid import Cell
from engine.solve.carry import cell_rolls_carry, counts_turns
from engine.solve.chance import Ways, own_first
from engine.solve.climb import Move, as_chance
from engine.solve.crossing import Turns
from engine.solve.expect import Expecti, side_of, steps_between
from engine.solve.game import (
    Game,
    Mover,
    Reach,
    TurnBudget,
    Unsolvable,
    _blocked_reach,
    _captures,
    _reach_all,
    _turn_rolls,
)

#: The most pace states a side's token may come to (D6: speeds, penalties, lost rounds).
MAX_PACE_STATES = 32

#: The most turns walked to find both sides' states and moves (each a turn of the loop's
#: walker, every degree of its roll a branch), counted as they are walked.
MAX_PACE_TURNS = 10_000


class PacedTurns(Turns, Protocol):
    """The loop's turns of a token whose state carries (:class:`engine.sim.paceturn.SolveTurns`)."""

    #: Each side's token as the solve found it.
    tokens: dict[str, Any]

    def profile_now(self, side: str, token: Any) -> Any:
        """The profile ``token`` moves on at its scenario pace (what play compares)."""
        ...

    def pace_start(self, side: str, token: Any, cell: Cell) -> tuple[str, Any]:
        """The pace of the turn ``token`` starts on ``cell`` and its profile (None: held)."""
        ...

    def pace_turn(
        self, side: str, token: Any, cell: Cell, dst: Cell, blocker: Cell | None
    ) -> list[tuple[Cell, Any, Fraction]]:
        """Each way the turn aiming at ``dst`` ends: the cell, the token, the chance."""
        ...


def paces_change(movers: list[Mover], system: Any) -> bool:
    """Whether a token's turns carry a pace state: its pace changes over its first turns
    (:meth:`RuleSystem.round_paces`), or it rolls once a turn on this map at its pace
    (:meth:`RuleSystem.turn_checks`: D6's movement roll, whose failure may last)."""
    for m in movers:
        g = m.graph
        token = g.search.tokens[g.search.start]
        if token.state.flight is not None:
            return False
        if system.round_paces(token, g.pace) or _turn_rolls(g, token, system):
            return True
        if counts_turns(token, g.pace, system) or cell_rolls_carry(g, token, system):
            return True
    return False


def state_key(state: Any, notes: frozenset[str]) -> Any:
    """What a token's state carries into its next turn beyond its cell: the state less its
    cell and mode (the cell's) and the system's notes."""
    if state.toward is not None or state.progress:
        raise Unsolvable("a crossing under way with a pace state, which solve does not carry")
    return replace(
        state,
        cell=None,
        mode="walk",
        counters=tuple((k, v) for k, v in state.counters if v and k not in notes),
        conditions=state.conditions - notes,
    )


@dataclass
class Side:
    """One side's pace states (``tokens[k]``, keyed by :func:`state_key`) and its turns:
    ``moves[(k, c)]`` from state ``k`` on cell index ``c``, as ``(aim, ends, chances)``
    with ends the positions ``k' * n + c'``; ``reach[k]`` the moves of state ``k``."""

    tokens: list[Any] = field(default_factory=list)
    index: dict[Any, int] = field(default_factory=dict)
    profile: list[Any] = field(default_factory=list)
    #: Each state's profile at the scenario pace (:meth:`PacedTurns.profile_now`).
    now: list[Any] = field(default_factory=list)
    moves: dict[tuple[int, ...], list[Move]] = field(default_factory=dict)


@dataclass
class Paces:
    """Both sides' pace states on ``n`` cells: position ``k * n + c``."""

    n: int
    notes: frozenset[str]
    sides: dict[str, Side]

    @property
    def states(self) -> int:
        return max(len(s.tokens) for s in self.sides.values())

    @property
    def size(self) -> int:
        return self.n * self.states

    def holds(self, side: str, prof: Any) -> bool:
        """Whether ``prof`` is the profile of one of ``side``'s states at its pace."""
        return any(p is prof for p in self.sides[side].now)

    def position(self, side: str, cell: int, state: Any) -> int | None:
        """The position of ``side``'s token on cell index ``cell`` in ``state``; None
        where the game holds no such state."""
        try:
            key = state_key(state, self.notes)
        except Unsolvable:
            return None
        k = self.sides[side].index.get(key)
        return None if k is None else k * self.n + cell


class _Finder:
    """Finds a side's states and turns, position by position from its start."""

    def __init__(self, game: Game, turns: PacedTurns, notes: frozenset[str], name: str) -> None:
        self.game, self.turns, self.notes, self.name = game, turns, notes, name
        self.grid = game.quarry.graph.grid
        self.reaches: dict[Any, tuple[Reach, np.ndarray, np.ndarray]] = {}
        self.limit_moves = 0
        self.budget = TurnBudget(
            name,
            MAX_PACE_TURNS,
            "the pace states' turns",
            "every state's turn from every cell aiming at every cell it reaches",
            "solve a smaller map or a steadier pace",
        )
        self._blocked: dict[Any, Any] = {}
        self.stand: set[int] = set()
        self.stand_p = np.zeros(game.n, dtype=bool)

    def state(self, side: str, s: Side, token: Any) -> int:
        key = state_key(token.state, self.notes)
        k = s.index.get(key)
        if k is None:
            k = s.index[key] = len(s.tokens)
            if k >= MAX_PACE_STATES:
                raise Unsolvable(
                    f"{self.name}: {side}'s token comes to more than {MAX_PACE_STATES} pace "
                    "states (speeds, penalties, lost rounds), the most solve carries; solve a "
                    "steadier pace or a map without rolls"
                )
            s.tokens.append(token)
            s.profile.append(None)
            s.now.append(self.turns.profile_now(side, token))
        return k

    def reach_of(self, prof: Any) -> tuple[Reach, np.ndarray, np.ndarray]:
        got = self.reaches.get(prof)
        if got is None:
            got = self.reaches[prof] = _reach_all(prof.graph)
        return got

    def side(self, side: str, start: int, block: bool) -> Side:
        """The states and turns of ``side`` from its token's start on cell index ``start``;
        ``block``: the quarry's turns with the pursuer in its way too (on the cells it may
        stand on, :attr:`stand_p`), as :meth:`pairs` lists them."""
        s = Side()
        n = self.game.n
        k0 = self.state(side, s, self.turns.tokens[side])
        # Breadth first, by the turns made: a position first reached after the turn
        # limit's last turn is never moved from (a clock's states, D6's stamina, grow
        # without end).
        todo = deque([(k0, start, 0)])
        seen = {(k0, start)}
        last = self.game.turns
        while todo:
            k, c, made = todo.popleft()
            if made >= last:
                continue
            moves = list(self._turns(side, s, k, c, None))
            if block:
                for p in self.pairs(s, k, c):
                    moves += self._turns(side, s, k, c, p)
            for mv in moves:
                for e in mv[1]:
                    if (e // n, e % n) not in seen:
                        seen.add((e // n, e % n))
                        todo.append((e // n, e % n, made + 1))
        self.stand = {c for _, c in seen}
        return s

    def pairs(self, s: Side, k: int, q: int) -> list[int]:
        """The pursuer's cells in the way of the quarry's turn from ``q`` in state ``k``
        (within its turn on that state's profile: :func:`_blocked_reach`)."""
        prof = s.profile[k]
        if prof is None:
            return []
        reach, _, cost = self.reach_of(prof)
        got = self._blocked.get(prof)
        if got is None:
            got = self._blocked[prof] = _blocked_reach(prof.graph, reach, cost, self.stand_p)
        return [int(got.p[j]) for j in np.flatnonzero(got.q == q).tolist()]

    def _turns(self, side: str, s: Side, k: int, c: int, blocker: int | None) -> list[Move]:
        key = (k, c) if blocker is None else (k, c, blocker)
        got = s.moves.get(key)
        if got is not None:
            return got
        turns, grid, n = self.turns, self.grid, self.game.n
        token = s.tokens[k]
        cell = grid.cell_of_index(c)
        _, prof = turns.pace_start(side, token, cell)
        s.profile[k] = prof
        if prof is None:
            aims = np.array([c])
        elif blocker is None:
            aims = own_first(self.reach_of(prof)[0].of(c), c)
        else:
            aims = own_first(self._blocked_moves(prof, c, blocker), c)
        block = None if blocker is None else grid.cell_of_index(blocker)
        moves: list[Move] = []
        for dst in aims.tolist():
            self.budget.count()
            ends: dict[int, float] = {}
            for end, tok, p in turns.pace_turn(side, token, cell, grid.cell_of_index(dst), block):
                pos = self.state(side, s, tok) * n + grid.index(end)
                ends[pos] = ends.get(pos, 0.0) + float(p)
            moves.append((dst, list(ends), list(ends.values())))
        self.limit_moves += len(moves)
        s.moves[key] = moves
        return moves

    def _blocked_moves(self, prof: Any, q: int, p: int) -> np.ndarray:
        """The quarry's moves from ``q`` on ``prof`` with the pursuer on ``p`` in its way."""
        got = self._blocked[prof]
        k = np.flatnonzero((got.p == p) & (got.q == q))
        return got.idx[got.ptr[k[0]] : got.ptr[k[0] + 1]]


def solve_paced(
    scenario: Any, game: Game, system: Any, turns: PacedTurns, max_values: int, max_moves: int
) -> tuple[Game, Expecti, Paces]:
    """The game of ``game``'s two tokens with their pace states, solved (see the module):
    the lifted game, its solution and the positions."""
    name = scenario.path
    n = game.n
    notes = frozenset(system.notes)
    find = _Finder(game, turns, notes, name)
    sp = find.side("pursuer", game.index(game.pursuer.cell), False)
    stand_p = np.zeros(n, dtype=bool)
    stand_p[list(find.stand)] = True
    find.stand_p = stand_p
    block = scenario.tokens_block in ("enemies", "all")
    sq = find.side("quarry", game.index(game.quarry.cell), block)
    stand_q = np.zeros(n, dtype=bool)
    stand_q[list(find.stand)] = True
    paces = Paces(n, notes, {"pursuer": sp, "quarry": sq})
    size = paces.size
    held = size * size * (game.turns + 1)
    if held > max_values:
        raise Unsolvable(
            f"{name}: {held:,} values with dice and paces ({n} cells x {paces.states} pace "
            f"states, squared, x {game.turns + 1} rounds) is more than the limit "
            f"{max_values:,} held in memory; solve a smaller map or turn limit"
        )
    blocked = _blocked_pairs(find, sp, sq, n) if block else None
    if find.limit_moves > max_moves:
        raise Unsolvable(
            f"{name}: {find.limit_moves:,} moves with dice and paces is more than the limit "
            f"{max_moves:,} worked out in memory; solve a smaller map or slower tokens"
        )
    cells = np.tile(np.arange(n), paces.states)
    lifted = replace(
        game,
        n=size,
        cap=_captures(scenario, n)[np.ix_(cells, cells)],
        exit=game.exit[cells],
        stand_p=_stands(sp, n, paces.states),
        stand_q=_stands(sq, n, paces.states),
        dice=True,
    )
    base = replace(game, stand_p=stand_p | game.stand_p, stand_q=stand_q | game.stand_q)
    steps = steps_between(base)[np.ix_(cells, cells)]
    chance_p = as_chance(_groups(sp, n, paces.states))
    chance_q = as_chance(_groups(sq, n, paces.states))
    bside, bp, bq = None, np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    if blocked is not None and blocked[1]:
        bside = side_of(as_chance(blocked[0]), size)
        bp, bq = np.array(blocked[1], dtype=np.int64), np.array(blocked[2], dtype=np.int64)
    ex = Expecti(lifted, side_of(chance_p, size), side_of(chance_q, size), bside, bp, bq, steps)
    ex.solve()
    return lifted, ex, paces


def _stands(s: Side, n: int, states: int) -> np.ndarray:
    out = np.zeros(n * states, dtype=bool)
    for key, moves in s.moves.items():
        if len(key) == 2:
            for mv in moves:
                out[mv[1]] = True
            out[key[0] * n + key[1]] = True
    return out


def _groups(s: Side, n: int, states: int) -> list[list[Move]]:
    """Per position, its side's moves (a position it never reaches: it stays)."""
    out: list[list[Move]] = []
    for k in range(states):
        for c in range(n):
            got = s.moves.get((k, c)) if k < len(s.tokens) else None
            out.append(got if got is not None else [(c, [k * n + c], [1.0])])
    return out


def _blocked_pairs(
    find: _Finder, sp: Side, sq: Side, n: int
) -> tuple[list[list[Move]], list[int], list[int]]:
    """The quarry's turns with the pursuer in its way (worked out by :meth:`_Finder.side`):
    each pursuer position and quarry position the quarry reaches, where the pursuer's cell
    is within the quarry's turn; the same turns for every pursuer state on that cell."""
    groups: list[list[Move]] = []
    ps: list[int] = []
    qs: list[int] = []
    for key, moves in sq.moves.items():
        if len(key) != 3:
            continue
        k, q, p = key
        for kp in range(len(sp.tokens)):
            groups.append(moves)
            ps.append(kp * n + p)
            qs.append(k * n + q)
    return groups, ps, qs


__all__ = [
    "MAX_PACE_STATES",
    "MAX_PACE_TURNS",
    "PacedTurns",
    "Paces",
    "Ways",
    "paces_change",
    "solve_paced",
]
