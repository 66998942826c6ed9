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
    field cache's): the profile and graph walked and the edges of the turn walked on the way from
    ``src`` to ``dst`` (cut as the loop cuts them), ``blocker`` the other token's cell
    where it stands in the mover's way (None: nobody), and whether the way goes on into a
    crossing of more than a turn."""

    def way(
        self, side: str, src: Cell, dst: Cell, blocker: Cell | None
    ) -> tuple[Any, MovementGraph, list[Edge], bool]: ...

    def same_profile(self, side: str, a: Any, b: Any) -> bool:
        """Whether tokens ``a`` and ``b`` of ``side`` move on the same profile (the one
        object the turn loop keeps for both): what the other token's solved move reads."""
        ...

    def replan(
        self, side: str, token: Any, current: Any, src: Cell, dst: Cell, blocker: Cell | None
    ) -> Replanned | None:
        """The rest of a move whose token changed on the way (a check's result that
        re-prices it: :meth:`engine.sim.loop.Simulation._replan`): ``token`` standing on
        ``src``, its profile and the loop's way to ``dst`` on it (the descent's edges, their
        ticks so far and its cut to a turn); None where that profile is ``current`` (the
        profile the move walks on, as :meth:`way` or this gave it; None: none)."""
        ...


class Falls(Protocol):
    """What a jump's roll does (a seam: :class:`engine.solve.jump.PitFalls`): its degrees
    with their exact chances and whether each lets the token on, and the position of the
    mover fallen into a gap cell."""

    def degrees(self, token: Any, cc: Any) -> list[tuple[str, Fraction, bool]]: ...

    def pit(self, gap: int) -> int: ...


#: A replanned way: the profile (compared by identity), its graph, the descent's edges,
#: the ticks spent after each and how many of them fit a turn.
Replanned = tuple[Any, MovementGraph, list[Edge], list[float], int]


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


def ranges(lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    """The integers of ``lo[i]:hi[i]`` for every ``i``, in order (one array)."""
    lens = hi - lo
    starts = np.repeat(lo - np.cumsum(lens) + lens, lens)
    return (starts + np.arange(int(lens.sum()))).astype(np.int64)


def own_first(moves: np.ndarray, own: int) -> np.ndarray:
    """``moves`` in the order ties are broken in: its own cell, then by cell index."""
    rest = np.sort(moves[moves != own])
    return np.concatenate(([own], rest)).astype(np.int64) if len(rest) < len(moves) else rest


def check_cells(g: MovementGraph) -> np.ndarray:
    """Per cell index, whether entering it may ask a check (its terrain has one in some
    layer of the token's search, or a jump landing there asks a roll)."""
    asks = np.zeros(len(g.model.terrains), dtype=bool)
    for layer in g.state_costs:
        for t in range(len(asks)):
            cost = layer[t]
            if cost.check is not None and cost.check.check is not None:
                asks[t] = True
    out = asks[np.asarray(g.model.terrain_ids).ravel()]
    for j in g.jumps:  # a jump's roll, on landing (a failure ends elsewhere)
        if j.check is not None and j.check.check is not None:
            out[j.dst % g.n] = True
    return out


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
    """Per check asked on a map, its degrees' exact chances and whether each lets the
    token on, every degree's effect probed once (:meth:`_probe`): what it leaves must not
    outlast the turn."""

    def __init__(self, name: str, tid: str, side: str, system: Any, ways: Ways) -> None:
        self.name, self.tid, self.side, self.system, self.ways = name, tid, side, system, ways
        self._kept: dict[tuple[str, ...], tuple[tuple[str, Fraction, bool], ...]] = {}
        #: The jumps' rolls (None: no jump of this token asks one).
        self.falls: Falls | None = None

    def degrees(self, token: Any, cc: Any, mode: str) -> tuple[tuple[str, Fraction, bool], ...]:
        """The degrees of ``cc`` (asked by a cell of ``mode``) with a chance: (degree,
        chance, whether it lets the token on)."""
        key = (cc.what, str(cc.target), str(cc.check), mode)
        got = self._kept.get(key)
        if got is None:
            got = self._kept[key] = self._probe(token, cc, mode)
        return got

    def _probe(self, token: Any, cc: Any, mode: str) -> tuple[tuple[str, Fraction, bool], ...]:
        system = self.system
        notes = frozenset(system.notes)
        odds: dict[str, Fraction] = cc.check.outcomes()
        p_success = cc.check.p_success()
        upto = Fraction(0)
        plain = system.end_turn(token, Dice(0))  # what the end of the turn leaves anyway
        out: list[tuple[str, Fraction, bool]] = []
        for degree, p in odds.items():
            success = upto < p_success  # the successes come first (engine.checks)
            upto += p
            if not p:
                continue
            after = system.apply_check(token, cc.what, degree)
            if success or system.goes_on(cc, degree, success):
                # A result that re-prices the rest of the move (a Whisperspace swim's, for
                # the rest of the Move action) is walked as the loop walks it; it must end
                # with the turn.
                # It may end the turn where it stands or in the cell it went on into.
                changed = ""
                for m in dict.fromkeys((token.state.mode, mode)):
                    dice = Dice(0)
                    was = system.end_turn(token.moved(mode=m), Dice(0))
                    ended = system.end_turn(system.end_move(after.moved(mode=m)), dice)
                    changed = "a roll at the end of its turn" if dice.log else ""
                    changed = changed or _lasting(was, ended, notes)
                    if changed:
                        break
                if changed:
                    raise Unsolvable(
                        f"{self.name}: token {self.tid}'s {cc.what} at {degree} changes it "
                        f"beyond its turn ({changed}); solve models checks whose results "
                        "end with the turn (docs/solve.md): give it a map without this check"
                    )
                out.append((degree, p, True))
                continue
            self._stops(token, cc, degree, after, plain)
            out.append((degree, p, False))
        return tuple(out)

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


def _move_of(g: MovementGraph, ticks: float, period: Fraction, offset: Fraction) -> int:
    """``ceil((offset + g.turns(ticks)) / period)``: the move (as the system counts them) a
    step ending ``ticks`` into a leg that started ``offset`` turns into the turn is in; in
    whole numbers where the ticks are whole."""
    if ticks.is_integer():
        den = g.denominator
        a = (offset.numerator * den + int(ticks) * offset.denominator) * period.denominator
        return -(-a // (den * offset.denominator * period.numerator))
    return math.ceil((offset + g.turns(ticks)) / period)


@dataclass
class _Walk:
    """What :func:`outcomes` walks a move with: the mover's side and goal, the other token
    in its way, the loop's ways, the degrees and the cells it ends on (with chances) and
    enters."""

    side: str
    dst: Cell
    blocker: Cell | None
    ways: Ways
    degrees: Degrees
    ends: dict[int, Fraction]
    entered: set[int]


def outcomes(
    g: MovementGraph,
    edges: list[Edge],
    src: int,
    degrees: Degrees,
    ways: Ways | None = None,
    side: str = "",
    dst: int = 0,
    blocker: Cell | None = None,
    prof: Any = None,
) -> tuple[list[tuple[int, Fraction]], frozenset[int]]:
    """Where a move along ``edges`` (from cell index ``src`` toward ``dst``) ends, with its
    chances, and the cells its ways enter: the turn loop's walk
    (:meth:`engine.sim.walking.Walker._walk_legs`): a check rolled where a new run of
    terrain, or a run in a new move, is entered; a stop ends it on the cell before; a
    result that changes the token's rates goes on from where it stands on the loop's way
    for what it has become (``ways``' :meth:`Ways.replan`), up to the end of the move it
    was rolled in, where the rest of the turn goes on at the token's own rates."""
    grid = g.grid
    w = _Walk(side, grid.cell_of_index(dst), blocker, ways, degrees, {}, set())  # type: ignore[arg-type]
    key = (int(g.run_key[src]), 0)
    _legs(w, _token(g), prof, g, edges, src, Fraction(0), key, None, Fraction(1))
    got = sorted((c, p) for c, p in w.ends.items() if p)
    return got, frozenset(w.entered)


def _legs(
    w: _Walk,
    token: Any,
    prof: Any,
    g: MovementGraph,
    plan: list[Edge],
    here: int,
    offset: Fraction,
    key: tuple[int, int],
    until: Fraction | None,
    p: Fraction,
    spent: float = 0.0,
    rolled: bool = False,
) -> None:
    """Walk ``plan`` (a leg of the move on ``prof``, from cell index ``here``, ``offset``
    turns into the turn, ``spent`` ticks into the leg) with chance ``p``, then the legs
    after it, adding where they end to ``w.ends``; ``rolled``: the roll of the plan's
    first step is made. ``until``: where the last result's effects end."""
    n = g.n
    tids = np.asarray(g.model.terrain_ids).ravel()
    for i, (node, nxt, cost_w) in enumerate(plan):
        j = nxt % n
        jump = g.jump_at.get((node, nxt)) if g.jump_at else None
        if jump is not None:  # one edge, one roll: the loop's Walker._enter
            if not (rolled and i == 0):
                w.entered.update(part[0] for part in jump.parts)
                if _jumped(w, token, prof, g, plan[i:], here, offset, spent, until, p, jump):
                    return
            key = (int(g.run_key[j]), 0)
            spent += cost_w
            here = j
            continue
        if j != node % n and not (rolled and i == 0):
            w.entered.add(j)
            t = int(tids[j])
            period = g.check_period[t]
            move = 0 if period is None else _move_of(g, spent + cost_w, period, offset)
            run_key = (int(g.run_key[j]), move)
            cost = g.state_costs[g.state_of(nxt)][t]
            if cost.check is not None and cost.check.check is not None and run_key != key:
                mode = g.model.terrains[t].move
                for degree, pd, on in w.degrees.degrees(token, cost.check, mode):
                    if not on:
                        w.ends[here] = w.ends.get(here, Fraction(0)) + p * pd
                        continue
                    after = w.degrees.system.apply_check(token, cost.check.what, degree)
                    _rolled(w, after, token, prof, g, plan[i:], here, offset, spent,
                            run_key, until, p * pd)  # fmt: skip
                return
            key = run_key
        spent += cost_w
        here = j
    _leg_over(w, token, g, here, offset + g.turns(spent), key, until, p)


def _jumped(
    w: _Walk,
    token: Any,
    prof: Any,
    g: MovementGraph,
    rest: list[Edge],
    here: int,
    offset: Fraction,
    spent: float,
    until: Fraction | None,
    p: Fraction,
    jump: Any,
) -> bool:
    """A jump (``rest[0]``) whose roll decides: a failure falls into its first gap cell
    (``w.degrees.falls``' pit position) or stops before it, a success goes on along
    ``rest``; False where it asks none."""
    cc = jump.check
    if cc is None or cc.check is None:
        return False
    falls = w.degrees.falls
    if falls is None:
        raise Unsolvable(
            f"{w.degrees.name}: token {w.degrees.tid} jumps with a check on this map, which "
            "solve does not carry (docs/solve.md): give it a map without this jump"
        )
    key = (int(g.run_key[rest[0][1] % g.n]), 0)
    for _, pd, on in falls.degrees(token, cc):
        if on:
            _legs(w, token, prof, g, rest, here, offset, key, until, p * pd, spent, rolled=True)
            continue
        at = falls.pit(jump.parts[jump.gap_at][0]) if jump.kind == "gap" else here
        w.ends[at] = w.ends.get(at, Fraction(0)) + p * pd
    return True


def _rolled(
    w: _Walk,
    after: Any,
    before: Any,
    prof: Any,
    g: MovementGraph,
    rest: list[Edge],
    here: int,
    offset: Fraction,
    spent: float,
    key: tuple[int, int],
    until: Fraction | None,
    p: Fraction,
) -> None:
    """A roll let the token (now ``after``) on into ``rest[0]``'s cell: where the result
    changed it onto another profile, a new leg from ``here`` up to the end of the move it
    was rolled in; else on along ``rest``."""
    way = None
    if after.state != before.state and w.ways is not None:
        way = w.ways.replan(w.side, after, prof, g.grid.cell_of_index(here), w.dst, w.blocker)
    if way is None:
        _legs(w, after, prof, g, rest, here, offset, key, until, p, spent, rolled=True)
        return
    _, nxt, cost_w = rest[0]
    ends = _move_ends(w.degrees.system, after, g, nxt, offset + g.turns(spent + cost_w))
    new, ng, edges, ticks, k = way
    _leg(w, after, new, ng, edges, ticks, k, here, offset + g.turns(spent), key, ends, p)


def _leg(
    w: _Walk,
    token: Any,
    prof: Any,
    g: MovementGraph,
    edges: list[Edge],
    ticks: list[float],
    k: int,
    here: int,
    used: Fraction,
    key: tuple[int, int],
    until: Fraction | None,
    p: Fraction,
) -> None:
    """A new leg on ``prof`` from ``here`` at ``used`` turns: the loop's way cut to what is
    left of the turn, or of the move up to ``until``."""
    left = float((min(until or 1, 1) - used) * g.denominator) + 1e-9
    while k and ticks[k - 1] > left:
        k -= 1
    _legs(w, token, prof, g, edges[:k], here, used, key, until, p)


def _leg_over(
    w: _Walk,
    token: Any,
    g: MovementGraph,
    here: int,
    used: Fraction,
    key: tuple[int, int],
    until: Fraction | None,
    p: Fraction,
) -> None:
    """A leg's plan is walked: the move ends here, or, where the move the last roll was
    made in ends before the turn does, its effects end and the rest of the turn goes on
    at the token's own rates."""
    if w.ways is None or until is None or until >= 1:
        w.ends[here] = w.ends.get(here, Fraction(0)) + p
        return
    used = max(used, until)
    system = w.degrees.system
    token = system.end_move(token)
    way = None
    if used < 1:
        way = w.ways.replan(w.side, token, None, g.grid.cell_of_index(here), w.dst, w.blocker)
    if way is None:
        w.ends[here] = w.ends.get(here, Fraction(0)) + p
        return
    new, ng, edges, ticks, k = way
    _leg(w, token, new, ng, edges, ticks, k, here, used, key, None, p)


def _move_ends(
    system: Any, token: Any, g: MovementGraph, nxt: int, at: Fraction
) -> Fraction | None:
    """When the move a roll made ``at`` turns into the turn (entering ``nxt``) ends, as the
    system counts moves (:meth:`engine.sim.walking.Walker._move_ends`); None: with the
    turn."""
    terrain = g.model.terrains[g.terrain_list()[nxt % g.n]]
    period = system.check_period(token, terrain, g.pace)
    if period is None or period >= 1:
        return None
    return math.ceil(at / period) * period


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
    prof, wg, edges, beyond = ways.way(
        side, grid.cell_of_index(src), grid.cell_of_index(dst), blocker
    )
    if beyond:
        raise Unsolvable(
            f"{degrees.name}: token {tid}'s way to {grid.cell_of_index(dst)} goes into a "
            "crossing of more than a turn, which solve does not carry (docs/solve.md)"
        )
    entered = frozenset(nxt % wg.n for _, nxt, _ in edges)
    jumps = [wg.jump_at[(a, b)] for a, b, _ in edges if (a, b) in wg.jump_at] if wg.jump_at else []
    if jumps:  # the cells a jump passes are entered too; its roll is the jump's
        entered |= {part[0] for j in jumps for part in j.parts}
    rolls = any(j.check is not None and j.check.check is not None for j in jumps)
    if not rolls and not asks[list(entered)].any():  # no check on the way: it ends there
        end = edges[-1][1] % wg.n if edges else src
        return (end,), (1.0,), entered
    got, entered = outcomes(wg, edges, src, degrees, ways, side, dst, blocker, prof)
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
