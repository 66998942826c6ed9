"""Moves with dice: each move of a turn as a distribution over the cells it ends on, with
the exact odds of the checks on its way, as the turn loop walks it.

A token moving to a cell walks the way the turn loop takes there (:class:`Ways`: the
policy's goal is that one cell, the way the field cache's descent down a plain field to it,
around the other token where it stands in the way). On that way the loop rolls a cell's
check where the token enters a new run of terrain, or a run in a new move as the system
counts moves (:meth:`~engine.systems.base.RuleSystem.check_period`);
a degree that does not let it on (:meth:`~engine.systems.base.RuleSystem.goes_on`) keeps it
out of that cell: the move ends on the cell before, the rest of the turn lost. That is all
a move is here, so what a degree does to the token must leave nothing that lasts
(:func:`probe_checks`): a degree that lets it on must not change it (the loop would price
the rest of its move again), and one that stops it must leave the token as the end of the
turn would have left it anyway. Anything else is refused in one line naming it.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, Protocol

import numpy as np

from engine.dice import Dice
from engine.grid import Cell
from engine.movement import MovementGraph
from engine.solve.game import Game, Unsolvable

#: One edge of a way: (node, next node, ticks).
Edge = tuple[int, int, float]


class Ways(Protocol):
    """The turn loop's way for a move (a seam: :func:`engine.sim.view.solve_run` gives the
    field cache's): the graph walked and the edges of the turn walked on the way from
    ``src`` to ``dst`` (cut as the loop cuts them), ``blocker`` the other token's cell
    where it stands in the mover's way (None: nobody), and whether the way goes on into a
    crossing of more than a turn."""

    def way(
        self, side: str, src: Cell, dst: Cell, blocker: Cell | None
    ) -> tuple[MovementGraph, list[Edge], bool]: ...

    def same_profile(self, side: str, a: Any, b: Any) -> bool:
        """Whether tokens ``a`` and ``b`` of ``side`` move on the same profile (the one
        object the turn loop keeps for both): what the other token's solved move reads."""
        ...


@dataclass(frozen=True)
class Chance:
    """One side's moves with their outcomes: move ``m`` (``src[m]`` to ``dst[m]``) ends on
    ``end[optr[m]:optr[m + 1]]`` with the chances ``prob[...]`` (float64 of the exact
    odds, which sum to 1); the moves of the ``i``-th pair asked are ``gptr[i]:gptr[i + 1]``."""

    gptr: np.ndarray
    src: np.ndarray
    dst: np.ndarray
    optr: np.ndarray
    end: np.ndarray
    prob: np.ndarray


def own_first(moves: np.ndarray, own: int) -> np.ndarray:
    """``moves`` in the order ties are broken in: its own cell, then by cell index."""
    rest = np.sort(moves[moves != own])
    return np.concatenate(([own], rest)).astype(np.int64) if len(rest) < len(moves) else rest


def check_cells(g: MovementGraph) -> np.ndarray:
    """Per cell index, whether entering it may ask a check (its terrain has one in some
    layer of the token's search)."""
    asks = np.zeros(len(g.model.terrains), dtype=bool)
    for layer in g.state_costs:
        for t in range(len(asks)):
            cost = layer[t]
            if cost.check is not None and cost.check.check is not None:
                asks[t] = True
    return asks[np.asarray(g.model.terrain_ids).ravel()]


def _token(g: MovementGraph) -> Any:
    return g.search.tokens[g.search.start]


def _lasting(before: Any, after: Any, notes: frozenset[str] = frozenset()) -> str:
    """What differs between two token states beyond the cell and mode, in words ('':
    nothing); ``notes``: the system's notes (:attr:`RuleSystem.notes`: written for the
    table, read by no rule), not counted."""
    a, b = before.state, after.state
    parts = [f"condition {c}" for c in sorted(b.conditions - a.conditions - notes)]
    ca = {k: v for k, v in a.counters if v and k not in notes}
    cb = {k: v for k, v in b.counters if v and k not in notes}
    parts += [f"{k} {cb.get(k, 0)}" for k in sorted(set(ca) | set(cb)) if ca.get(k) != cb.get(k)]
    if a.progress != b.progress or a.toward != b.toward:
        parts.append("a crossing under way")
    if a.encumbrance != b.encumbrance:
        parts.append(f"encumbrance {b.encumbrance}")
    return ", ".join(parts)


class Degrees:
    """Per check asked on a map, the chance that a roll lets the token on, exact, with
    every degree's effect probed once (:func:`probe_checks`)."""

    def __init__(self, name: str, tid: str, side: str, system: Any, ways: Ways) -> None:
        self.name, self.tid, self.side, self.system, self.ways = name, tid, side, system, ways
        self._kept: dict[tuple[str, str, str], Fraction] = {}

    def go_on(self, token: Any, cell_check: Any) -> Fraction:
        key = (cell_check.what, str(cell_check.target), str(cell_check.check))
        got = self._kept.get(key)
        if got is None:
            got = self._kept[key] = self._probe(token, cell_check)
        return got

    def _probe(self, token: Any, cc: Any) -> Fraction:
        system = self.system
        odds: dict[str, Fraction] = cc.check.outcomes()
        p_success = cc.check.p_success()
        go, upto = Fraction(0), Fraction(0)
        plain = system.end_turn(token, Dice(0))  # what the end of the turn leaves anyway
        for degree, p in odds.items():
            success = upto < p_success  # the successes come first (engine.checks)
            upto += p
            if not p:
                continue
            after = system.apply_check(token, cc.what, degree)
            if success or system.goes_on(cc, degree, success):
                changed = _lasting(token, after, frozenset(system.notes))
                if changed:
                    raise Unsolvable(
                        f"{self.name}: token {self.tid}'s {cc.what} at {degree} changes it "
                        f"on the way ({changed}: the rest of its move priced again); solve "
                        "models checks that let a token on unchanged or stop it "
                        "(docs/solve.md): give it a map without this check"
                    )
                go += p
                continue
            self._stops(token, cc, degree, after, plain)
        return go

    def _stops(self, token: Any, cc: Any, degree: str, after: Any, plain: Any) -> None:
        """Refuse a stopping ``degree`` that leaves more than the stop: a roll at the end
        of the turn whose outcomes the system does not list, or one of them (a falling
        roll's: :meth:`RuleSystem.end_turn_outcomes`) that leaves a token the other one
        sees on another profile until its next turn, a roll as that turn starts, or
        anything that lasts into it beyond the system's notes (read by no rule)."""
        system = self.system
        notes = frozenset(system.notes)
        ends = system.end_turn_outcomes(after)
        why = "a roll at the end of its turn" if ends is None else ""
        start_plain = system.start_turn(plain, Dice(0))
        for ended, _ in ends or ():
            left = _lasting(plain, ended, notes)
            if left and not self.ways.same_profile(self.side, plain, ended):
                why = f"{left} until its next turn, moving on another profile"
                break
            again = Dice(0)
            why = _lasting(start_plain, system.start_turn(ended, again), notes)
            if again.log:
                why = "a roll as its next turn starts"
            if why:
                break
        if why:
            raise Unsolvable(
                f"{self.name}: token {self.tid}'s failed {cc.what} ({degree}) leaves {why}, "
                "which solve does not carry (docs/solve.md); give it a map without this check"
            )


def _move_of(g: MovementGraph, ticks: float, period: Fraction) -> int:
    """``ceil(g.turns(ticks) / period)``: the move (as the system counts them) a step
    ending ``ticks`` into the turn is in; in whole numbers where the ticks are whole."""
    if ticks.is_integer():
        a = int(ticks) * period.denominator
        return -(-a // (g.denominator * period.numerator))
    return math.ceil(g.turns(ticks) / period)


def outcomes(
    g: MovementGraph, edges: list[Edge], src: int, degrees: Degrees
) -> list[tuple[int, Fraction]]:
    """Where a move along ``edges`` (from cell index ``src``) ends, with its chances: the
    turn loop's walk (:meth:`engine.sim.walking.Walker._enter`): a check rolled where a
    new run of terrain, or a run in a new move, is entered; a stop ends it on the cell
    before."""
    n = g.n
    token = _token(g)
    key = (int(g.run_key[src]), 0)
    here, spent = src, 0.0
    left = Fraction(1)
    out: list[tuple[int, Fraction]] = []
    tids = np.asarray(g.model.terrain_ids).ravel()
    for node, nxt, w in edges:
        j = nxt % n
        if j != node % n:
            t = int(tids[j])
            period = g.check_period[t]
            move = 0 if period is None else _move_of(g, spent + w, period)
            run_key = (int(g.run_key[j]), move)
            cost = g.state_costs[g.state_of(nxt)][t]
            if cost.check is not None and cost.check.check is not None and run_key != key:
                go = degrees.go_on(token, cost.check)
                if go < 1:
                    out.append((here, left * (1 - go)))
                    left *= go
            key = run_key
        spent += w
        here = j
    out.append((here, left))
    merged: dict[int, Fraction] = {}
    for c, p in out:
        if p:
            merged[c] = merged.get(c, Fraction(0)) + p
    return sorted(merged.items())


#: A move's outcomes (the cells it ends on, their chances in float64) and the cell
#: indices its way enters.
Walked = tuple[tuple[int, ...], tuple[float, ...], frozenset[int]]


def _walked(
    ways: Ways,
    side: str,
    tid: str,
    grid: Any,
    src: int,
    dst: int,
    blocker: Cell | None,
    degrees: Degrees,
    asks: np.ndarray,
) -> Walked:
    """A move's outcomes, worked out on the turn loop's way (:func:`outcomes`); ``asks``:
    per cell index, whether entering it may ask a check (:func:`check_cells`)."""
    wg, edges, beyond = ways.way(side, grid.cell_of_index(src), grid.cell_of_index(dst), blocker)
    if beyond:
        raise Unsolvable(
            f"{degrees.name}: token {tid}'s way to {grid.cell_of_index(dst)} goes into a "
            "crossing of more than a turn, which solve does not carry (docs/solve.md)"
        )
    if wg.jump_at and any((a, b) in wg.jump_at for a, b, _ in edges):
        raise Unsolvable(
            f"{degrees.name}: token {tid} jumps on its way; solve models no jumps with dice "
            "(docs/solve.md): give it a map without gaps to jump"
        )
    entered = frozenset(nxt % wg.n for _, nxt, _ in edges)
    if not asks[list(entered)].any():  # no cell of the way asks a check: it ends there
        end = edges[-1][1] % wg.n if edges else src
        return (end,), (1.0,), entered
    got = outcomes(wg, edges, src, degrees)
    return tuple(c for c, _ in got), tuple(float(p) for _, p in got), entered


def build_chance(
    game: Game,
    side: str,
    moves_of: Callable[[int], np.ndarray],
    pairs: Sequence[tuple[int, int, int | None]],
    ways: Ways,
    degrees: Degrees,
    kept: dict[tuple[int, int], Walked],
) -> Chance:
    """The outcomes of ``side``'s moves from each source of ``pairs`` (``(key, source
    cell index, the other token's cell index where it is in the way, else None)``, the
    moves ``moves_of(key)``), in the order ties are broken in (:func:`own_first`). A move
    from a cell whose turn reaches no check cell ends where it goes. ``kept``: the moves
    worked out with nobody in the way, by (source, destination), added to as they are
    worked out; a move with the other token in the way is the same where that way does
    not enter its cell (the loop's descent then walks the same way)."""
    mover = game.pursuer if side == "pursuer" else game.quarry
    g = mover.graph
    grid = g.grid
    asks = check_cells(g)
    srcs: list[np.ndarray] = []
    dsts: list[np.ndarray] = []
    # Per move the count of its outcomes, and the outcomes' cells and chances, in plain
    # lists: a move is a few entries, and a small array each would cost more than it holds.
    counts: list[int] = []
    ends: list[int] = []
    probs: list[float] = []
    per: list[int] = []
    for key, src, other in pairs:
        blocker = None if other is None else grid.cell_of_index(other)
        moves = own_first(moves_of(key), src)
        per.append(len(moves))
        srcs.append(np.full(len(moves), src, dtype=np.int64))
        dsts.append(moves)
        listed = moves.tolist()
        if not asks[moves].any():  # no check within its turn: every move ends where it goes
            counts.extend([1] * len(listed))
            ends.extend(listed)
            probs.extend([1.0] * len(listed))
            continue
        for dst in listed:
            if dst == src:
                counts.append(1)
                ends.append(dst)
                probs.append(1.0)
                continue
            got = kept.get((src, dst)) if other is not None else None
            if got is None or other in got[2]:
                got = _walked(ways, side, mover.tid, grid, src, dst, blocker, degrees, asks)
                if other is None:
                    kept[(src, dst)] = got
            counts.append(len(got[0]))
            ends.extend(got[0])
            probs.extend(got[1])
    optr = np.zeros(len(counts) + 1, dtype=np.int64)
    np.cumsum(counts, out=optr[1:])
    gptr = np.zeros(len(per) + 1, dtype=np.int64)
    np.cumsum(per, out=gptr[1:])

    def joined(parts: list[np.ndarray]) -> np.ndarray:
        return np.concatenate(parts).astype(np.int64) if parts else np.zeros(0, dtype=np.int64)

    return Chance(
        gptr,
        joined(srcs),
        joined(dsts),
        optr,
        np.array(ends, dtype=np.int64),
        np.array(probs, dtype=np.float64),
    )
