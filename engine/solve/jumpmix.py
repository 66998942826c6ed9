"""Jumps with a roll in a game whose turns are the loop's own (:mod:`.dicecross`): a jump
of more than a turn with a roll, and a jump with a roll on a map with dice crossings.

Such a game's moves are the turn loop's whole turns, every way its walker may walk them
(:class:`engine.sim.diceturn.DiceTurns`: each roll a branch through the seam
:meth:`engine.sim.walking.Walker.roll`, a jump's as a cell's). A failed jump leaves the
token in the first cell of its gap (seed 004: "make a success roll using their acrobatics
ability or fall into the gap"): that end is a pit position (:class:`~engine.solve.jump.Pits`,
found by the system's own hooks as :func:`~engine.solve.jump.find_pits` finds them), the
fall's roll at the end of the turn taken with its outcomes
(:meth:`RuleSystem.end_turn_outcomes`). A pit position's turn is the pit's
(:attr:`Pits.turn`: the climbing roll as it starts, the turn held, its end), and the turn
that climbs the rest of the wall and walks on is the loop's turn of that token
(:meth:`DiceTurns.outcomes` from the token as it starts), aimed at each cell. Out on the
gap cell, the token's turns are walked as any cell's. A token in a pit is caught, escapes
and stands in the other token's way at its gap cell.

During the build a pit position is numbered :data:`PIT_BASE` + ``i`` (the crossings'
positions are found as the turns are walked); once every turn is walked, the pit
positions follow the crossings' (:meth:`DicePits.numbered`).
"""

from __future__ import annotations

from dataclasses import replace
from fractions import Fraction
from typing import Any, Protocol, runtime_checkable

import numpy as np

from engine.dice import Dice
from engine.solve.chance import _lasting
from engine.solve.game import Game, Unsolvable
from engine.solve.jump import Pits, pit_key

#: Where the pit positions are numbered while the turns are walked: past any position the
#: crossings may add.
PIT_BASE = 1 << 40


@runtime_checkable
class TokenTurns(Protocol):
    """What the pit positions ask of the loop's turns (:class:`engine.sim.diceturn.DiceTurns`)."""

    def outcomes(
        self,
        side: str,
        cell: Any,
        toward: Any,
        share: Fraction,
        dst: Any,
        blocker: Any,
        token: Any = None,
    ) -> tuple[list[tuple[Any, Fraction]], frozenset[Any], bool, bool]: ...

    def on_base(self, side: str, token: Any) -> bool: ...

    def stands_on_base(self, side: str, cell: int) -> bool: ...


class DicePits:
    """The pit positions of a game walked by the loop's turns (see the module)."""

    def __init__(self, game: Game, pits: Pits, turns: TokenTurns, system: Any, name: str) -> None:
        self.game, self.pits, self.turns, self.system, self.name = game, pits, turns, system, name
        self.grid = game.quarry.graph.grid
        self.notes = frozenset(system.notes)
        #: The pit positions renumbered after the crossings' (:meth:`numbered`), for play.
        self.placed: Pits | None = None

    # ----------------------------------------------------------------- the build

    def holds(self, pos: int) -> bool:
        """Whether ``pos`` is a pit position (as the build numbers them)."""
        return pos >= PIT_BASE

    def gap(self, pos: int) -> int:
        """The gap cell of pit position ``pos``."""
        return self.pits.cell[pos - PIT_BASE]

    def _build_pos(self, pos: int) -> int:
        """A position of :attr:`pits` (a cell, or ``n + i``) as the build numbers it."""
        return pos if pos < self.pits.n else PIT_BASE + pos - self.pits.n

    def on_base(self, side: str, token: Any) -> bool:
        return self.turns.on_base(side, token)

    def starts_on_base(self, side: str, cell: int) -> bool:
        """Whether a turn from ``cell`` starts on the profile the solve was made for (a turn
        whose end in a pit is on another profile is told apart by its ends)."""
        return self.turns.stands_on_base(side, cell)

    def _free(self, side: str, cell: Any) -> Any:
        """``side``'s token standing on ``cell``, nothing of a pit on it, its turn over."""
        mover = self.game.pursuer if side == "pursuer" else self.game.quarry
        g = mover.graph
        base = g.search.tokens[g.search.start]
        if mover.token is not None:
            base = mover.token.with_state(base.state)
        return self.system.end_turn(base.moved(cell=cell), Dice(0))

    def fallen(self, side: str, token: Any) -> list[tuple[int, Fraction]] | None:
        """Where a turn that leaves ``token`` in a gap cell of ``side``'s pits puts it once
        the turn is over (its end's outcomes, each a pit position, with their chances);
        None where it is not in a pit (on no gap cell, or out of it)."""
        cell = token.state.cell
        gap = self.grid.index(cell)
        if (self.pits.index.get((side, gap))) is None:
            return None
        ends = self.system.end_turn_outcomes(token)
        if ends is None:
            raise Unsolvable(
                f"{self.name}: token {token.id} falls into a gap and rolls at the end of its "
                "turn with outcomes the system does not list, which solve does not carry "
                "(docs/solve.md)"
            )
        free = self._free(side, cell)
        got: dict[int, Fraction] = {}
        for ended, q in ends:
            if not q:
                continue
            if not _lasting(free, ended, self.notes):
                if got:
                    break
                return None  # standing on the gap cell, out of the pit
            pos = self.pits.by_key.get((side, gap, pit_key(ended, self.notes)))
            if pos is None:
                break
            at = self._build_pos(pos)
            got[at] = got.get(at, Fraction(0)) + q
        else:
            return sorted(got.items())
        raise Unsolvable(
            f"{self.name}: token {token.id} falls into the gap at {list(cell)} in a state "
            "its pit's turns do not list, which solve does not carry (docs/solve.md)"
        )

    def turn(
        self, b: Any, side: str, src: int, dst: int, blocker: int | None
    ) -> tuple[dict[int, Fraction], frozenset[int]]:
        """The turn of ``side``'s token in the pit at position ``src`` aiming at cell
        ``dst`` (``b``: the build, :class:`engine.solve.dicecross._Build`): the positions
        it ends on with their chances, and the cells its way entered. Held, or climbing
        (:attr:`Pits.turn`), whatever it aims at; where the turn may climb the rest of the
        wall and walk on (:attr:`Pits.partial`), that turn walked as the loop walks it."""
        i = src - PIT_BASE
        pits = self.pits
        ends: dict[int, Fraction] = {}
        for pos, q in pits.turn[i]:
            at = self._build_pos(pos)
            ends[at] = ends.get(at, Fraction(0)) + q
        part = pits.partial.get(i)
        if part is None or pits.side[i] != side:
            return ends, frozenset()
        token, p = part
        grid = self.grid
        gap = grid.cell_of_index(pits.cell[i])
        got, entered, same, rolled = self.turns.outcomes(
            side,
            gap,
            None,
            Fraction(0),
            grid.cell_of_index(dst),
            None if blocker is None else grid.cell_of_index(blocker),
            token,
        )
        where = f"token {token.id} climbing out of the gap at {list(gap)}"
        if rolled:
            raise Unsolvable(
                f"{self.name}: {where} rolls beyond a cell's check on its way, which solve "
                "does not carry (docs/solve.md)"
            )
        mover = self.game.pursuer if side == "pursuer" else self.game.quarry
        for pos, q in b.ends(mover, side, self._over(mover, gap, got), same, where).items():
            ends[pos] = ends.get(pos, Fraction(0)) + p * q
        return ends, frozenset(grid.index(c) for c in entered)

    def _over(self, mover: Any, gap: Any, got: list[tuple[Any, Fraction]]) -> list[Any]:
        """The tokens a turn out of the pit leaves once it is over, as the loop ends it
        (:meth:`Simulation._ended`): :meth:`RuleSystem.paced` (a token that left the gap
        cell is out of the pit), then :meth:`RuleSystem.end_turn_outcomes` (the rest of
        the climb made, a fall rolled), with their chances."""
        system = self.system
        out: list[tuple[Any, Fraction]] = []
        for token, p in got:
            paced = system.paced(token, mover.graph.pace, token.state.cell != gap)
            ends = system.end_turn_outcomes(paced)
            if ends is None:
                raise Unsolvable(
                    f"{self.name}: token {token.id} climbing out of the gap at {list(gap)} "
                    "rolls at the end of its turn with outcomes the system does not list, "
                    "which solve does not carry (docs/solve.md)"
                )
            out += [(ended, p * q) for ended, q in ends if q]
        return out

    def in_way(self) -> np.ndarray:
        """The cells the pursuer in a pit, or out on its gap cell, is in the quarry's way at."""
        pits = self.pits
        gaps = [c for s, c in pits.index if s == "pursuer"]
        return np.array(sorted(set(gaps)), dtype=np.int64)

    # ----------------------------------------------------------------- the lifted game

    def numbered(
        self,
        size: int,
        moves: dict[str, dict[int, list[tuple[int, Any]]]],
        blocked: dict[tuple[int, int], list[tuple[int, Any]]],
    ) -> tuple[dict[str, dict[int, list[tuple[int, Any]]]], dict[tuple[int, int], Any]]:
        """The moves with the pit positions numbered after the ``size`` positions of the
        cells and crossings (the aims are cells, as they were); :attr:`placed` the pits so
        numbered, for play."""
        pits = self.pits

        def num(pos: int) -> int:
            return pos - PIT_BASE + size if pos >= PIT_BASE else pos

        def row(r: list[tuple[int, Any]]) -> list[tuple[int, Any]]:
            return [(aim, tuple((num(e), q) for e, q in d)) for aim, d in r]

        got = {side: {num(s): row(r) for s, r in m.items()} for side, m in moves.items()}
        out = {(p, num(q)): row(r) for (p, q), r in blocked.items()}
        shift = size - pits.n
        self.placed = replace(
            pits,
            n=size,
            index={k: v + shift for k, v in pits.index.items()},
            by_key={k: v + shift for k, v in pits.by_key.items()},
            turn=[[(e + shift if e >= pits.n else e, q) for e, q in t] for t in pits.turn],
        )
        return got, out

    def extended(
        self, at: np.ndarray, stands: np.ndarray, side_of: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Per position, where it is reached and stands, and its side, the pit positions'
        added (a pit's: its gap cell)."""
        cells = np.array(self.pits.cell, dtype=np.int64)
        sides = np.array(self.pits.side) if self.pits.side else np.zeros(0, dtype=str)
        return (
            np.concatenate((at, cells)),
            np.concatenate((stands, cells)),
            np.concatenate((side_of.astype(str), sides)),
        )

    def stood_on(self, game: Game) -> tuple[np.ndarray, np.ndarray]:
        """The cells each side may stand on: the game's, and the gap cells it climbs out
        onto."""
        got = []
        for side, stand in (("pursuer", game.stand_p), ("quarry", game.stand_q)):
            more = stand.copy()
            more[[c for s, c in self.pits.outs if s == side]] = True
            got.append(more)
        return got[0], got[1]
