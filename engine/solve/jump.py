"""Jumps with a check as moves of the game with dice: a failure falls into the pit.

A jump over a gap within reach of the token's longest asks a roll (Speedpoints, seed 004:
"within 1 meter of their maximum jumping distance they must make a success roll using their
acrobatics ability or fall into the gap"). The turn loop rolls it as the jump is made
(:meth:`engine.sim.walking.Walker._enter`): a success lands and the move goes on; a failure
leaves the token in the first cell of the gap, its move over (:meth:`RuleSystem.apply_check`,
:meth:`RuleSystem.goes_on`). The solve walks a move's jumps as the loop does
(:func:`engine.solve.chance.outcomes`), and a failure ends the move on a pit position
(:class:`Pits`): the side's token in that gap cell, beside the map's cells. It is caught,
stands in the other token's way and escapes where it stands (the gap cell).

A pit position is one the token never leaves: the solve carries a pit whose wall is no
tactical climb (Speedpoints' ``pit_wall`` of 10 or more: "there is no tactical way out, and
the token stays in the pit"), asked of the system's own hooks (:func:`find_pits`): after
the fall and its roll at the end of the turn (:meth:`RuleSystem.end_turn_outcomes`, whose
harm is the system's notes), every later turn starts rolling nothing
(:meth:`RuleSystem.start_turn`) with the token held (:meth:`RuleSystem.held`) and nothing
changed. A pit climbed out of over turns (a roll as each turn starts, the climb's progress,
the profile of a token in the pit) is refused in one line.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from engine.dice import Dice
from engine.solve.chance import Chance, Degrees, _lasting, build_chance
from engine.solve.climb import _joined, as_chance, groups_of
from engine.solve.expect import steps_between
from engine.solve.game import Game, Unsolvable, _one_turn, without_cell


@dataclass
class Pits:
    """The pit positions of both sides: position ``n + i`` is a token of ``side[i]`` fallen
    into the gap cell ``cell[i]`` (a cell index), where it stays."""

    n: int
    side: list[str] = field(default_factory=list)
    cell: list[int] = field(default_factory=list)
    index: dict[tuple[str, int], int] = field(default_factory=dict)

    @property
    def size(self) -> int:
        """Cells and pit positions."""
        return self.n + len(self.side)

    def add(self, side: str, cell: int) -> int:
        got = self.index.get((side, cell))
        if got is None:
            got = self.index[(side, cell)] = self.size
            self.side.append(side)
            self.cell.append(cell)
        return got

    def stands(self) -> np.ndarray:
        """Per position, the cell index it stands on (a pit's: its gap cell)."""
        return np.concatenate((np.arange(self.n), np.array(self.cell, dtype=np.int64)))

    def of_side(self, side: str) -> list[int]:
        """``side``'s pit positions."""
        return [self.n + i for i, s in enumerate(self.side) if s == side]


def jump_checks(g: Any) -> list[Any]:
    """The jumps of ``g`` over a gap that ask a roll (a leap's failure only stops below)."""
    return [
        j for j in g.jumps if j.kind == "gap" and j.check is not None and j.check.check is not None
    ]


def find_pits(game: Game, name: str, system: Any) -> Pits | None:
    """The pit positions of the game (None: no jump on the map asks a roll), each side's
    failed jumps checked to leave it in a pit it never leaves; :class:`Unsolvable`
    otherwise, in one line."""
    out = Pits(game.n)
    for mover in (game.pursuer, game.quarry):
        g = mover.graph
        base = g.search.tokens[g.search.start]
        for j in jump_checks(g):
            gap = j.parts[j.gap_at][0]
            if (mover.side, gap) in out.index:
                continue
            _stays(name, mover.tid, system, base.moved(cell=g.grid.cell_of_index(gap)), j.check)
            out.add(mover.side, gap)
    return out if out.side else None


def _stays(name: str, tid: str, system: Any, token: Any, cc: Any) -> None:
    """Refuse a failed jump ``cc`` that leaves ``token`` anywhere but held in the pit for
    good: a roll at the end of the turn whose outcomes the system does not list, a roll as
    a later turn starts (a climb out), a token that moves again, or one that changes."""
    notes = frozenset(system.notes)
    odds: dict[str, Any] = cc.check.outcomes()
    p_success = cc.check.p_success()
    upto = 0
    for degree, p in odds.items():
        success = upto < p_success
        upto += p
        if not p or success or system.goes_on(cc, degree, success):
            continue
        fallen = system.apply_check(token, cc.what, degree)
        ends = system.end_turn_outcomes(fallen)
        why = "a roll at the end of its turn whose outcomes the system does not list"
        for ended, _ in ends or ():
            dice = Dice(0)
            started = system.start_turn(ended, dice)
            again = system.start_turn(system.end_turn(started, Dice(0)), Dice(0))
            if dice.log:
                why = "a roll as its next turn starts (a climb out of the pit over turns)"
            elif system.held(started) is None:
                why = "it free to move again"
            else:
                why = _lasting(started, again, notes) or ""
            if why:
                break
        if why:
            raise Unsolvable(
                f"{name}: token {tid} jumps with a check on this map and a failure ({degree}) "
                f"leaves {why}, which solve does not carry (docs/solve.md): give it a pit it "
                "cannot climb out of (pit_wall 10) or a map without this jump"
            )


def jump_degrees(degrees: Degrees, token: Any, cc: Any) -> list[tuple[str, Any, bool]]:
    """The degrees of a jump's roll ``cc`` with their exact chances and whether each lets
    the token on (a failure falls into the gap: :func:`find_pits` checked it); a degree
    that lets it on changed is refused (the loop would price the rest of its move again)."""
    system = degrees.system
    odds: dict[str, Any] = cc.check.outcomes()
    p_success = cc.check.p_success()
    upto = 0
    out: list[tuple[str, Any, bool]] = []
    for degree, p in odds.items():
        success = upto < p_success
        upto += p
        if not p:
            continue
        on = success or system.goes_on(cc, degree, success)
        if on and _lasting(token, system.apply_check(token, cc.what, degree)):
            raise Unsolvable(
                f"{degrees.name}: token {degrees.tid}'s {cc.what} at {degree} changes it on "
                "its way, which solve does not carry (docs/solve.md): give it a map without "
                "this jump"
            )
        out.append((degree, p, on))
    return out


class PitFalls:
    """:class:`engine.solve.chance.Falls` for one side: its jumps' degrees
    (:func:`jump_degrees`) and its pit positions."""

    def __init__(self, pits: Pits, side: str, degrees: Degrees) -> None:
        self.pits, self.side, self.of = pits, side, degrees

    def degrees(self, token: Any, cc: Any) -> list[tuple[str, Any, bool]]:
        return jump_degrees(self.of, token, cc)

    def pit(self, gap: int) -> int:
        return self.pits.index[(self.side, gap)]


def lift_pits_side(pits: Pits, side: str, ch: Chance) -> Chance:
    """One side's moves from every position: a cell's as they are; a pit position, of
    either side, stays (its token never leaves it; the other side's is never asked)."""
    groups = groups_of(ch)
    for pos in range(pits.n, pits.size):
        groups.append([(pos, [pos], [1.0])])
    return as_chance(groups)


def pit_blocked(
    game: Game, pits: Pits, ways: Any, degrees: Degrees, kept: dict[Any, Any]
) -> tuple[Chance, np.ndarray, np.ndarray] | None:
    """The quarry's moves from each cell it may stand on with the pursuer in a pit in its
    way (at the gap cell: no jump over it), where the scenario's tokens block: the moves,
    and the pursuer's pit position and the quarry's cell of each pair."""
    if game.blocked is None or not pits.of_side("pursuer"):
        return None
    g = game.quarry.graph
    csr = g.csr()
    cells = np.flatnonzero(game.stand_q)
    ps: list[int] = []
    pairs: list[tuple[int, int, int | None]] = []
    moves: list[np.ndarray] = []
    for pos in pits.of_side("pursuer"):
        gap = pits.cell[pos - pits.n]
        ok = np.isfinite(_one_turn(g, without_cell(g, csr, gap), cells))
        ok[:, gap] = False
        for row, q in zip(ok, cells.tolist(), strict=True):
            pairs.append((len(moves), q, gap))
            moves.append(np.flatnonzero(row))
            ps.append(pos)
    got = build_chance(game, "quarry", lambda k: moves[k], pairs, ways, degrees, kept)
    return got, np.array(ps, dtype=np.int64), np.array([q for _, q, _ in pairs], dtype=np.int64)


def lift_pits_game(game: Game, pits: Pits) -> Game:
    """``game`` over the positions: a pit's token caught, in the way and escaping at its
    gap cell."""
    stands = pits.stands()
    side = np.array(pits.side)
    return replace(
        game,
        n=pits.size,
        cap=game.cap[np.ix_(stands, stands)],
        exit=game.exit[stands],
        stand_p=np.concatenate((game.stand_p, side == "pursuer")),
        stand_q=np.concatenate((game.stand_q, side == "quarry")),
    )


def lift_pits(
    name: str,
    game: Game,
    pits: Pits,
    ways: Any,
    dq: Degrees,
    kept: dict[Any, Any],
    chance_p: Chance,
    chance_q: Chance,
    chance_b: Chance | None,
    bp: np.ndarray,
    bq: np.ndarray,
    max_values: int,
) -> tuple[Game, Chance, Chance, Chance | None, np.ndarray, np.ndarray, np.ndarray]:
    """The game with dice over the pit positions: both sides' moves, the quarry's around
    a pursuer in a pit too (its pairs after the others), and the grid steps between the
    positions (a pit's: its gap cell's); more than ``max_values`` values kept refused."""
    held = pits.size**2 * (game.turns + 1)
    if held > max_values:
        raise Unsolvable(
            f"{name}: {held:,} values with dice ({pits.size} positions squared x "
            f"{game.turns + 1} rounds) is more than the limit {max_values:,} held in "
            "memory; solve a smaller map or turn limit"
        )
    extra = pit_blocked(game, pits, ways, dq, kept)
    if extra is not None:
        chance_b = extra[0] if chance_b is None else _joined(chance_b, extra[0])
        bp, bq = np.concatenate((bp, extra[1])), np.concatenate((bq, extra[2]))
    gaps = np.zeros(game.n, dtype=bool)
    gaps[pits.cell] = True
    grown = replace(game, stand_p=game.stand_p | gaps, stand_q=game.stand_q | gaps)
    stands = pits.stands()
    steps = steps_between(grown)[np.ix_(stands, stands)]
    return (
        lift_pits_game(game, pits),
        lift_pits_side(pits, "pursuer", chance_p),
        lift_pits_side(pits, "quarry", chance_q),
        chance_b,
        bp,
        bq,
        steps,
    )
