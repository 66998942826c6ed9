"""Crossings of more than a turn with dice: a slow swim that asks a check, rough ground at a
slow pace with a terrain check, as positions of the stochastic game.

The positions are :class:`~engine.solve.crossing.Crossings`' (the cell stood on, the cell
crossed toward, the share crossed); a position's moves are the turn loop's own turns aiming
at each cell of the map, each a distribution over the positions it ends on with the
checks' exact chances: every way the loop's walker may walk that turn, each check's degree
chosen in turn (:class:`DiceTurns`, :mod:`engine.sim.diceturn`). Moves with the same
distribution are one (the first aim found: its own cell, then by cell index). The quarry's
turns whose ways entered the pursuer's cell are walked again with it in the way; the others
are the same turns. The lifted game is solved by :mod:`.expect` as any other with dice.

What a turn leaves beyond the cell, mode and crossing under way, once the turn is over
(:meth:`RuleSystem.end_turn`), refuses the game in one line, as does a roll the walker makes
outside a cell's check (a climb's turn of rolls, a jump) and a turn on another profile.
"""

from __future__ import annotations

from dataclasses import replace
from fractions import Fraction
from typing import Any, Protocol, runtime_checkable

import numpy as np

from engine.dice import Dice
from engine.grid import Cell
from engine.solve.chance import Chance, _lasting
from engine.solve.crossing import MAX_CROSSING_TURNS, Crossings, _aims
from engine.solve.expect import steps_between
from engine.solve.game import Game, TurnBudget, Unsolvable


@runtime_checkable
class DiceTurns(Protocol):
    """A whole turn's outcomes as the loop walks it (:class:`engine.sim.diceturn.DiceTurns`)."""

    def outcomes(
        self,
        side: str,
        cell: Cell,
        toward: Cell | None,
        share: Fraction,
        dst: Cell,
        blocker: Cell | None,
    ) -> tuple[list[tuple[Any, Fraction]], frozenset[Cell], bool, bool]: ...

    def on_base(self, side: str, token: Any) -> bool: ...


#: A move: its aim (a cell index) and the positions it ends on with their chances.
Dist = tuple[tuple[int, Fraction], ...]


class _Build(TurnBudget):
    """One build's walks: each turn walked once, counted against :data:`MAX_CROSSING_TURNS`."""

    def __init__(
        self, game: Game, turns: DiceTurns, system: Any, name: str, pits: Any = None
    ) -> None:
        super().__init__(
            name,
            MAX_CROSSING_TURNS,
            "the crossings of more than a turn",
            "every position's turn aiming at every cell",
            "solve a smaller map or faster tokens",
        )
        self.game, self.turns, self.system = game, turns, system
        #: The pit positions a failed jump falls into (:class:`engine.solve.jumpmix.DicePits`).
        self.pits = pits
        self.grid = game.quarry.graph.grid
        self.out = Crossings(game.n)
        #: The (side, state) of tokens whose turn's end leaves nothing more.
        self.clean: set[tuple[str, Any]] = set()
        #: Per (side, source, aim) walked with nobody in the way: the cells entered.
        self.entered: dict[tuple[str, int, int], frozenset[int]] = {}
        self.dists: dict[tuple[str, int, int], Dist] = {}

    def turn(self, side: str, src: int, dst: int, blocker: int | None) -> Dist:
        """The positions a turn of ``side`` from position ``src`` aiming at ``dst`` ends on,
        with their chances (new positions added)."""
        self.count(1)
        if self.pits is not None and self.pits.holds(src):  # a token in a pit
            ends, entered = self.pits.turn(self, side, src, dst, blocker)
            if blocker is None:
                self.entered[(side, src, dst)] = entered
            return tuple(sorted(ends.items()))
        out, grid = self.out, self.grid
        cell, toward, share = src, None, Fraction(0)
        if src >= out.n:
            i = src - out.n
            cell, toward, share = out.stand[i], out.toward[i], out.share[i]
        mover = self.game.pursuer if side == "pursuer" else self.game.quarry
        got, entered, same, rolled = self.turns.outcomes(
            side,
            grid.cell_of_index(cell),
            None if toward is None else grid.cell_of_index(toward),
            share,
            grid.cell_of_index(dst),
            None if blocker is None else grid.cell_of_index(blocker),
        )
        where = f"token {mover.tid} from {list(grid.cell_of_index(cell))}"
        if rolled:
            raise Unsolvable(
                f"{self.name}: {where} rolls beyond a cell's check (a climb's turn of rolls, "
                "a jump) on its way over turns, which solve does not carry (docs/solve.md)"
            )
        if not same and (self.pits is None or not self.pits.starts_on_base(side, cell)):
            self._other_profile(where)
        ends = self.ends(mover, side, got, same, where)
        if blocker is None:
            self.entered[(side, src, dst)] = frozenset(grid.index(c) for c in entered)
        return tuple(sorted(ends.items()))

    def _other_profile(self, where: str) -> None:
        raise Unsolvable(
            f"{self.name}: {where} moves on another profile until its next turn, which "
            "solve does not carry (docs/solve.md): give it a faster pace"
        )

    def own(self, src: int) -> int:
        """The cell position ``src`` stands on (a crossing's, a pit's: its gap cell)."""
        if self.pits is not None and self.pits.holds(src):
            return int(self.pits.gap(src))
        return src if src < self.out.n else self.out.stand[src - self.out.n]

    def ends(
        self, mover: Any, side: str, got: list[tuple[Any, Fraction]], same: bool, where: str
    ) -> dict[int, Fraction]:
        """The positions the tokens ``got`` of a turn (with their chances) end on: a pit
        position for one that fell into a gap, else its cell or its crossing under way."""
        out, grid = self.out, self.grid
        ends: dict[int, Fraction] = {}
        for token, p in got:
            fell = None if self.pits is None else self.pits.fallen(side, token)
            if fell is not None:
                for pos, q in fell:
                    ends[pos] = ends.get(pos, Fraction(0)) + p * q
                continue
            if not same and not self.pits.on_base(side, token):
                self._other_profile(where)
            st = token.state
            here = grid.index(st.cell)
            end = here
            if st.toward is not None and st.progress > 0:
                end = out.add(side, here, grid.index(st.toward), st.progress, st.mode == "climb")
            self._ends_clean(mover, side, token)
            ends[end] = ends.get(end, Fraction(0)) + p
        return ends

    def _ends_clean(self, mover: Any, side: str, token: Any) -> None:
        """Refuse a turn that leaves more than its cell, mode and crossing once it is over:
        a roll at its end whose outcomes the system does not list, or an outcome that
        leaves more beyond the system's notes than the next turn's start ends (Speedpoints'
        ``fell`` after a fall: its harm rolled at the end of the turn, a note), or that
        moves the token on another profile until then. A pure function of the side's
        token: each state looked at once."""
        key = (side, token.state)
        if key in self.clean:
            return
        system = self.system
        g = mover.graph
        plain = g.search.tokens[g.search.start].moved(
            cell=token.state.cell,
            mode=token.state.mode,
            toward=token.state.toward,
            progress=token.state.progress,
        )
        plain = system.end_turn(plain, Dice(0))
        ends = system.end_turn_outcomes(token)
        left = "a roll at the end of its turn" if ends is None else ""
        for ended, _ in ends or ():
            left = self._lasts(side, plain, ended)
            if left:
                break
        if left:
            raise Unsolvable(
                f"{self.name}: token {mover.tid}'s turn over turns leaves {left}, which solve "
                "does not carry (docs/solve.md): give it a map without this check"
            )
        self.clean.add(key)

    def _lasts(self, side: str, plain: Any, ended: Any) -> str:
        """What of ``ended`` (a token whose turn is over) lasts beyond ``plain`` (the
        same standing there as a plain turn leaves it) into its next turn, in words ('':
        nothing, or only what the next turn's start ends, on the same profile meanwhile)."""
        system = self.system
        notes = frozenset(system.notes)
        left = _lasting(plain, ended, notes)
        if not left:
            return ""
        if not self.turns.on_base(side, ended):
            return f"{left} until its next turn, moving on another profile"
        dice = Dice(0)
        started = system.start_turn(ended, dice)
        if dice.log:
            return "a roll as its next turn starts"
        return _lasting(system.start_turn(plain, Dice(0)), started, notes)


def _side_moves(b: _Build, side: str, todo: list[int]) -> dict[int, list[tuple[int, Dist]]]:
    """``side``'s moves from the positions ``todo`` and those they reach: per source, the
    distinct distributions with the first aim found (its own cell first, then by index)."""
    aims = _aims(b.game, side)
    moves: dict[int, list[tuple[int, Dist]]] = {}
    while todo:
        src = todo.pop()
        if src in moves:
            continue
        own = b.own(src)
        row: dict[Dist, int] = {}
        for dst in [own] + [a for a in aims if a != own]:
            dist = b.turn(side, src, dst, None)
            b.dists[(side, src, dst)] = dist
            row.setdefault(dist, dst)
            todo.extend(e for e, _ in dist if e not in moves)
        moves[src] = [(aim, dist) for dist, aim in row.items()]
    return moves


def _blocked(
    b: _Build, quarry: dict[int, list[tuple[int, Dist]]], in_way: np.ndarray
) -> dict[tuple[int, int], list[tuple[int, Dist]]]:
    """The quarry's moves with the pursuer in its way at a cell, per (cell, source), where
    a way of its turns entered that cell: those turns walked again with it there."""
    aims = _aims(b.game, "quarry")
    got: dict[tuple[int, int], list[tuple[int, Dist]]] = {}
    for src in sorted(quarry):
        own = b.own(src)
        order = [own] + [a for a in aims if a != own]
        met = set().union(*(b.entered[("quarry", src, a)] for a in order))
        for p in sorted(met & set(np.flatnonzero(in_way).tolist())):
            if p == own:
                continue
            row: dict[Dist, int] = {}
            for dst in order:
                dist = b.dists[("quarry", src, dst)]
                if p in b.entered[("quarry", src, dst)]:
                    dist = b.turn("quarry", src, dst, p)
                row.setdefault(dist, dst)
            got[(p, src)] = [(aim, dist) for dist, aim in row.items()]
    return got


def _chance(groups: list[list[tuple[int, Dist]]]) -> Chance:
    """A :class:`Chance` of ``groups`` (the ``i``-th group the ``i``-th source asked)."""
    counts = [len(g) for g in groups]
    moves = [m for g in groups for m in g]
    gptr = np.zeros(len(groups) + 1, dtype=np.int64)
    np.cumsum(counts, out=gptr[1:])
    optr = np.zeros(len(moves) + 1, dtype=np.int64)
    np.cumsum([len(d) for _, d in moves], out=optr[1:])
    return Chance(
        gptr,
        np.repeat(np.arange(len(groups)), counts).astype(np.int64),
        np.array([a for a, _ in moves], dtype=np.int64),
        optr,
        np.array([e for _, d in moves for e, _ in d], dtype=np.int64),
        np.array([float(p) for _, d in moves for _, p in d], dtype=np.float64),
    )


def _in_way(game: Game, out: Crossings, pits: Any) -> np.ndarray:
    """The cells the pursuer may be in the quarry's way at: those it stands on, where its
    crossings under way are reached, its pits' gap cells (:mod:`.jumpmix`)."""
    in_way = game.stand_p.copy()
    for i, side in enumerate(out.side):
        if side == "pursuer":
            in_way[out.reach_of(out.n + i)] = True
    if pits is not None:
        in_way[pits.in_way()] = True
    return in_way


def lift_dice_crossings(
    game: Game, turns: DiceTurns, system: Any, name: str, pits: Any = None
) -> tuple[Game, Crossings, Chance, Chance, Chance | None, np.ndarray, np.ndarray, np.ndarray]:
    """``game`` over the crossing positions with dice (see the module): the lifted game,
    its positions, both sides' moves from every position, the quarry's around the pursuer
    (with the pairs' positions) and the grid steps between the positions' cells.
    ``pits``: the pit positions a failed jump falls into (:mod:`.jumpmix`), after the
    crossings'."""
    b = _Build(game, turns, system, name, pits)
    b.count(int(game.stand_p.sum()) * len(_aims(game, "pursuer")))
    b.count(int(game.stand_q.sum()) * len(_aims(game, "quarry")))
    b.walked = 0
    moves = {
        side: _side_moves(b, side, np.flatnonzero(stand).tolist())
        for side, stand in (("pursuer", game.stand_p), ("quarry", game.stand_q))
    }
    out = b.out
    in_way = _in_way(game, out, pits)
    blocked: dict[tuple[int, int], list[tuple[int, Dist]]] = {}
    if game.blocked is not None:
        while True:
            blocked = _blocked(b, moves["quarry"], in_way)
            new = [
                e for r in blocked.values() for _, d in r for e, _ in d if e not in moves["quarry"]
            ]
            if not new:
                break
            moves["quarry"].update(_side_moves(b, "quarry", new))
    at, stands = out.reaches(), out.stands()
    side_of = np.array(out.side)
    on_p, on_q = game.stand_p, game.stand_q
    if pits is not None:  # the pit positions after the crossings', the gap cells stood on
        moves, blocked = pits.numbered(out.size, moves, blocked)
        at, stands, side_of = pits.extended(at, stands, side_of)
        on_p, on_q = pits.stood_on(game)
    size = len(at)
    groups = {
        side: [moves[side].get(pos, [(pos, ((pos, Fraction(1)),))]) for pos in range(size)]
        for side in ("pursuer", "quarry")
    }
    stand_p = np.concatenate((on_p, side_of == "pursuer"))
    by_cell: dict[int, list[int]] = {}
    for pos in np.flatnonzero(stand_p).tolist():
        by_cell.setdefault(int(at[pos]), []).append(pos)
    bp: list[int] = []
    bq: list[int] = []
    rows: list[list[tuple[int, Dist]]] = []
    for (p, q), row in sorted(blocked.items()):
        for pp in by_cell.get(p, []):
            bp.append(pp)
            bq.append(q)
            rows.append(row)
    lifted = replace(
        game,
        n=size,
        cap=game.cap[np.ix_(at, at)],
        exit=game.exit[stands],
        stand_p=stand_p,
        stand_q=np.concatenate((on_q, side_of == "quarry")),
    )
    grown = replace(game, stand_p=game.stand_p | True, stand_q=game.stand_q)
    steps = steps_between(grown)[np.ix_(stands, stands)]
    return (
        lifted,
        out,
        _chance(groups["pursuer"]),
        _chance(groups["quarry"]),
        _chance(rows) if rows else None,
        np.array(bp, dtype=np.int64),
        np.array(bq, dtype=np.int64),
        steps,
    )
