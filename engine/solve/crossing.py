"""Crossings of more than a turn as positions of the game without dice.

The turn loop lets a token cross a cell that takes more than a whole turn to enter at its
rate (:meth:`engine.sim.walking.Walker._long_step`, docs/rules.md): the rest of the turn goes
into the cell and the share crossed carries into the next turn (``state.progress``,
``state.toward``); going on, it gets in and walks the rest of that turn; turning away loses
what it made. Between turns such a token is a position of its own: the cell it stands on,
the cell it crosses toward and the share crossed (:class:`Crossings`). It escapes where it
stands, and is caught and stands in the other token's way there too, except a climber
partway up, reached at the cell it climbs to (:func:`engine.occupancy.reach_cell`).

A position's moves are the turn loop's own turns (:class:`Turns`: ``Walker.walk_down`` on
the loop's ways) aiming at each cell of the map, where each ends: a cell, or a crossing
under way. From a cell, aims within the turn end there (the game's one-turn moves); the
others are walked. The quarry's moves with the pursuer in its way are walked again with it
there wherever the way without it entered its cell (elsewhere the loop's descent walks the
same way). The lifted :class:`Game` is solved as any other (:mod:`.retro`).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from fractions import Fraction
from typing import Any, Protocol

import numpy as np

import engine.solve.bigcross as bigcross
from engine.grid import Cell
from engine.solve.game import (
    Blocked,
    Game,
    Reach,
    TurnBudget,
    Unsolvable,
    _as_reach,
    _blocked_reach,
    _reach_all,
    slow_crossing,
)

#: The most turns walked to find the crossings' moves (positions x aims, both sides, and
#: the quarry's again around the pursuer): each is a turn of the loop's walker.
MAX_CROSSING_TURNS = 400_000


class Turns(Protocol):
    """A whole turn as the loop walks it (:meth:`engine.sim.view.SolveWays.turn`)."""

    def turn(
        self,
        side: str,
        cell: Cell,
        toward: Cell | None,
        share: Fraction,
        dst: Cell,
        blocker: Cell | None,
    ) -> tuple[Any, frozenset[Cell], bool]: ...

    def stands_on_base(self, side: str, cell: int) -> bool: ...


@dataclass
class Crossings:
    """The crossing positions of both sides: position ``n + i`` is a token of ``side[i]``
    standing on cell index ``stand[i]`` with ``share[i]`` (between 0 and 1) of the way into
    ``toward[i]`` made. ``aims[(side, source, end)]``: a cell the token of ``side`` aims at
    from position ``source`` to end its turn on position ``end`` (the loop's goal for that
    move); ``aims_b[(blocker cell, source, end)]`` the quarry's with the pursuer's cell in
    its way."""

    n: int
    side: list[str] = field(default_factory=list)
    stand: list[int] = field(default_factory=list)
    toward: list[int] = field(default_factory=list)
    share: list[Fraction] = field(default_factory=list)
    #: Whether the position climbs (mode ``climb``): partway up, reached at ``toward``.
    climb: list[bool] = field(default_factory=list)
    index: dict[tuple[str, int, int, Fraction], int] = field(default_factory=dict)
    aims: dict[tuple[str, int, int], int] = field(default_factory=dict)
    aims_b: dict[tuple[int, int, int], int] = field(default_factory=dict)

    @property
    def size(self) -> int:
        return self.n + len(self.side)

    def stands(self) -> np.ndarray:
        """Per position, the cell index it stands on."""
        return np.concatenate((np.arange(self.n), np.array(self.stand, dtype=np.int64)))

    def position(self, side: str, cell: int, toward: int | None, share: Fraction) -> int | None:
        """The position of ``side``'s token on ``cell`` crossing toward ``toward`` with
        ``share`` made (none made: the cell's own); None where the game holds no such."""
        if toward is None or share == 0:
            return cell
        return self.index.get((side, cell, toward, share))

    def add(self, side: str, cell: int, toward: int, share: Fraction, climb: bool = False) -> int:
        key = (side, cell, toward, share)
        got = self.index.get(key)
        if got is None:
            got = self.index[key] = self.size
            self.side.append(side)
            self.stand.append(cell)
            self.toward.append(toward)
            self.share.append(share)
            self.climb.append(climb)
        return got

    def reach_of(self, pos: int) -> int:
        """The cell index position ``pos`` is reached at (:meth:`reaches`)."""
        if pos < self.n:
            return pos
        i = pos - self.n
        return self.toward[i] if self.climb[i] else self.stand[i]

    def reaches(self) -> np.ndarray:
        """Per position, the cell index it is reached at, for a capture and in the other
        token's way (:func:`engine.occupancy.reach_cell`): a climber partway up at the cell
        it climbs to, any other where it stands."""
        at = [t if c else s for s, t, c in zip(self.stand, self.toward, self.climb, strict=True)]
        return np.concatenate((np.arange(self.n), np.array(at, dtype=np.int64)))


def has_crossings(game: Game) -> bool:
    """Whether either token can reach a crossing of more than a turn on its graph."""
    return any(slow_crossing(m.graph, m.cell) is not None for m in (game.pursuer, game.quarry))


class _Walks(TurnBudget):
    """The walks of one build: each turn asked once, counted against
    :data:`MAX_CROSSING_TURNS`."""

    def __init__(self, game: Game, turns: Turns, name: str, out: Crossings) -> None:
        super().__init__(
            name,
            MAX_CROSSING_TURNS,
            "the crossings of more than a turn",
            "each position's turns that may end off its one-turn cells",
            "solve a smaller map or faster tokens",
        )
        self.game, self.turns, self.out = game, turns, out
        self.grid = game.quarry.graph.grid
        #: Per turn walked with nobody in the way (side, source, aim): the cells its way
        #: entered, and where it ended.
        self.entered: dict[tuple[str, int, int], frozenset[int]] = {}
        self.ends: dict[tuple[str, int, int], int] = {}

    def end(self, side: str, src: int, dst: int, blocker: int | None) -> int:
        """Where ``side``'s turn from position ``src`` aiming at cell ``dst`` ends (a
        position, new ones added), ``blocker`` the pursuer's cell in the quarry's way."""
        self.count(1)
        out, grid = self.out, self.grid
        cell, toward, share = src, None, Fraction(0)
        if src >= out.n:
            i = src - out.n
            cell, toward, share = out.stand[i], out.toward[i], out.share[i]
        tid = (self.game.pursuer if side == "pursuer" else self.game.quarry).tid
        got, entered, same = self.turns.turn(
            side,
            grid.cell_of_index(cell),
            None if toward is None else grid.cell_of_index(toward),
            share,
            grid.cell_of_index(dst),
            None if blocker is None else grid.cell_of_index(blocker),
        )
        st = got.state
        if not same:
            raise Unsolvable(
                f"{self.name}: token {tid} crossing from {grid.cell_of_index(cell)} toward "
                f"{grid.cell_of_index(dst)} moves on another profile until its next turn, "
                "which solve does not carry (docs/solve.md): give it a faster pace"
            )
        here = grid.index(st.cell)
        if blocker is None:
            self.entered[(side, src, dst)] = frozenset(grid.index(c) for c in entered)
        end = here
        if st.toward is not None and st.progress > 0:
            end = out.add(side, here, grid.index(st.toward), st.progress, st.mode == "climb")
        if blocker is None:
            self.ends[(side, src, dst)] = end
        return end


def _aims(game: Game, side: str) -> list[int]:
    """The cells ``side``'s token may aim at: every cell its graph enters."""
    g = (game.pursuer if side == "pursuer" else game.quarry).graph
    csr = g.csr()
    return np.flatnonzero(np.bincount(csr.indices % g.n, minlength=g.n) > 0).tolist()


def _side_moves(w: _Walks, side: str, moves: dict[int, dict[int, int]], todo: list[int]) -> None:
    """``side``'s moves from positions ``todo`` and the crossings they find, into
    ``moves``: ``{source: {end: aim}}`` (the first aim found for an end; a cell within the
    turn aimed at itself)."""
    game, out = w.game, w.out
    reach = game.reach_p if side == "pursuer" else game.reach_q
    aims = _aims(game, side)
    while todo:
        src = todo.pop()
        if src in moves:
            continue
        row: dict[int, int] = {}
        inside: set[int] = set()
        if src < out.n:
            inside = set(reach.of(src).tolist())
            row = {c: c for c in sorted(inside)}
        for dst in aims:
            end = w.end(side, src, dst, None)
            row.setdefault(end, dst)
            if end not in moves:  # a crossing, or a cell only a crossing gets into
                todo.append(end)
        moves[src] = row


def _blocked_moves(
    w: _Walks, quarry: dict[int, dict[int, int]], in_way: np.ndarray
) -> dict[tuple[int, int], dict[int, int]]:
    """The quarry's moves with the pursuer in its way at a cell (``in_way``: the cells it
    may be in the way at), per ``(cell, source)`` where they differ from its own: the
    game's cell moves around that cell, and each turn whose way entered it walked again
    with it there (the others are the same turns)."""
    b = w.game.blocked
    assert b is not None
    cells_of = {
        (int(b.p[k]), int(b.q[k])): b.idx[b.ptr[k] : b.ptr[k + 1]].tolist() for k in range(len(b.p))
    }
    walked: dict[int, list[tuple[int, int, frozenset[int]]]] = {}
    for (side, src, dst), entered in w.entered.items():
        if side == "quarry":
            walked.setdefault(src, []).append((dst, w.ends[(side, src, dst)], entered))
    got: dict[tuple[int, int], dict[int, int]] = {}
    for src in sorted(quarry):
        turns = sorted(walked.get(src, []))
        for p in np.flatnonzero(in_way).tolist():
            if (p, src) in cells_of or any(p in e for _, _, e in turns):
                got[(p, src)] = _blocked_row(w, quarry[src], src, p, turns, cells_of.get((p, src)))
    return got


def _blocked_row(
    w: _Walks,
    own: dict[int, int],
    src: int,
    p: int,
    turns: list[tuple[int, int, frozenset[int]]],
    cells: list[int] | None,
) -> dict[int, int]:
    """The quarry's moves from ``src`` with the pursuer's cell ``p`` in its way (``own``:
    without it; ``cells``: the game's cell moves around it, None where no way of a turn
    meets it): ``{end: aim}``."""
    row: dict[int, int] = {}
    if src < w.out.n:
        if cells is None:
            cells = [c for c in own if c < w.out.n]
        row = {c: c for c in sorted(cells)}
    for dst, end, entered in turns:
        if p in entered:
            end = w.end("quarry", src, dst, p)
        row.setdefault(end, dst)
    return row


def lift_crossings(game: Game, turns: Turns, name: str) -> tuple[Game, Crossings]:
    """``game`` with the crossing positions of both sides (see the module): each side's
    moves over them, the quarry's around the pursuer, captures and exits where a token
    stands."""
    out = Crossings(game.n)
    w = _Walks(game, turns, name, out)
    # The cells' turns at least (crossings under way add theirs): refused before any.
    reduce = bigcross.reducers(game, turns)  # the aims worth walking (engine.solve.bigcross)
    for side, stand in (("pursuer", game.stand_p), ("quarry", game.stand_q)):
        red = reduce[side]
        w.count(
            len(_aims(game, side)) * int(stand.sum())
            if red is None
            else bigcross.planned(red, stand)
        )
    w.walked = 0
    moves: dict[str, dict[int, dict[int, int]]] = {}
    for side, stand in (("pursuer", game.stand_p), ("quarry", game.stand_q)):
        moves[side] = {}
        todo = np.flatnonzero(stand).tolist()
        red = reduce[side]
        if red is None:
            _side_moves(w, side, moves[side], todo)
        else:
            bigcross.side_moves(w, side, moves[side], todo, red, _aims(game, side))
    blocked_rows: dict[tuple[int, int], dict[int, int]] = {}
    in_way = _in_way(w, game)
    red_q = reduce["quarry"]
    while w.game.blocked is not None:
        if red_q is None:
            blocked_rows = _blocked_moves(w, moves["quarry"], in_way)
        else:
            blocked_rows = bigcross.blocked_moves(w, moves["quarry"], in_way, red_q)
        new = {e for row in blocked_rows.values() for e in row if e not in moves["quarry"]}
        if not new:  # a crossing only the way around the pursuer makes: its moves too
            break
        _side_moves(w, "quarry", moves["quarry"], sorted(new))
    if bigcross.unchanged(game, out.size, moves, blocked_rows):
        return game, out
    size = out.size
    side_of = np.array(out.side)
    stand_p = np.concatenate((game.stand_p, side_of == "pursuer"))
    reaches = {side: _reach_of(out, side, moves[side]) for side in ("pursuer", "quarry")}
    stands, at = out.stands(), out.reaches()
    blocked = None
    if game.blocked is not None:
        blocked = _blocked_of(out, blocked_rows, stand_p)
    lifted = replace(
        game,
        n=size,
        cap=game.cap[np.ix_(at, at)],
        exit=game.exit[stands],
        reach_p=reaches["pursuer"],
        reach_q=reaches["quarry"],
        blocked=blocked,
        stand_p=stand_p,
        stand_q=np.concatenate((game.stand_q, side_of == "quarry")),
    )
    return lifted, out


def _in_way(w: _Walks, game: Game) -> np.ndarray:
    """The cells the pursuer may be in the quarry's way at: those it stands on, and those a
    climb of its under way is reached at. Where a climb makes one the game's cell moves
    around the pursuer leave out, they are worked out again with it (``w.game``)."""
    in_way = game.stand_p.copy()
    out = w.out
    for i, side in enumerate(out.side):
        if side == "pursuer" and out.climb[i]:
            in_way[out.toward[i]] = True
    if game.blocked is not None and (in_way & ~game.stand_p).any():
        reach_q, _, cost_q = _reach_all(game.quarry.graph)
        w.game = replace(game, blocked=_blocked_reach(game.quarry.graph, reach_q, cost_q, in_way))
    return in_way


def _reach_of(out: Crossings, side: str, moves: dict[int, dict[int, int]]) -> Reach:
    """``side``'s moves over every position (a position it never moves from: staying),
    their aims kept in ``out``."""
    lists: list[np.ndarray] = []
    for pos in range(out.size):
        row = moves.get(pos)
        if row is None:
            lists.append(np.array([pos]))  # never asked: the other side's, or not stood on
            continue
        lists.append(np.array(sorted(row), dtype=np.int64))
        for end, aim in row.items():
            out.aims[(side, pos, end)] = aim
    return _as_reach(lists)


def _blocked_of(
    out: Crossings, rows_of: dict[tuple[int, int], dict[int, int]], stand_p: np.ndarray
) -> Blocked:
    """The quarry's moves around the pursuer over positions: each pair's for every
    position of the pursuer in the way at its cell (a crosser where it stands, a climber
    partway up where it climbs to), their aims kept in ``out``."""
    at, size = out.reaches(), out.size
    by_cell: dict[int, list[int]] = {}
    for pos in np.flatnonzero(stand_p).tolist():
        by_cell.setdefault(int(at[pos]), []).append(pos)
    ps: list[int] = []
    qs: list[int] = []
    rows: list[np.ndarray] = []
    for (p, q), row in sorted(rows_of.items()):
        for end, aim in row.items():
            out.aims_b[(p, q, end)] = aim
        for pp in by_cell.get(p, [p]):
            ps.append(pp)
            qs.append(q)
            rows.append(np.array(sorted(row), dtype=np.int64))
    ptr = np.zeros(len(rows) + 1, dtype=np.int64)
    np.cumsum([len(r) for r in rows], out=ptr[1:])
    idx = np.concatenate(rows) if rows else np.zeros(0, dtype=np.int64)
    pa, qa = np.array(ps, dtype=np.int64), np.array(qs, dtype=np.int64)
    return Blocked(pa, qa, ptr, idx, np.repeat(pa, np.diff(ptr)) * size + idx)
