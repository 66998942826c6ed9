"""Exact solutions of small chases: one pursuer against one quarry played perfectly by both
under the turn loop's own rules (docs/solve.md).

:func:`solve` builds the game (:mod:`.game`: each side's moves of a turn from the engine's
movement graphs, tokens in the way, the capture distance, the exits, the turn order and
limit) and solves it by retrograde analysis (:mod:`.retro`). The :class:`Solution` answers
``tacgrid solve`` (:meth:`Solution.to_dict`) and tells the pursuer and quarry policies the
solved move (:meth:`Solution.move`), a pure function of where the two tokens stand.

With dice (a move that meets a check of a cell), the game is a stochastic one: each move
is a distribution over the cells it ends on with the checks' exact odds (:mod:`.chance`,
the turn loop's ways through the :class:`Ways` seam), solved by backward induction over
the rounds (:mod:`.expect`): a :class:`DiceSolution`.

A climb over turns (:mod:`.climb`) adds positions beside the cells: the foot, the cell
climbed toward and the share climbed.

Without dice, a crossing of more than a turn (:mod:`.crossing`) adds positions too: the
cell stood on, the cell crossed toward and the share crossed, each position's moves the
turn loop's own whole turns (:class:`Turns`), solved by the same retrograde analysis.

With dice, a jump's roll whose failure falls into a pit (:mod:`.jump`) adds a position per
side, gap cell and state in the pit: the token held there, or climbing out.

A token whose pace state carries from turn to turn (D6's speed two levels a round, its
once-a-round roll whose failure lasts) adds a pace state to each position (:mod:`.pace`).

Layers: this module > dicecross | jump | pace > expect | retro | climb | crossing > chance > game.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass, replace
from fractions import Fraction
from typing import Any

import numpy as np

from engine.grid import Cell
from engine.scenario import Scenario
from engine.solve.chance import Degrees, Walked, Ways, build_chance
from engine.solve.climb import Climbs, find_climbs, lift_blocked, lift_game, lift_side
from engine.solve.crossing import Crossings, Turns, has_crossings, lift_crossings
from engine.solve.dicecross import DiceTurns, lift_dice_crossings
from engine.solve.expect import Expecti, side_of, steps_between
from engine.solve.game import MAX_POSITIONS, MAX_STATES, Game, Mover, Unsolvable, build_game
from engine.solve.jump import PitFalls, Pits, find_pits, lift_pits
from engine.solve.jumpmix import DicePits, TokenTurns
from engine.solve.pace import PacedTurns, Paces, paces_change, solve_paced
from engine.solve.retro import Retro, solve_retro

__all__ = [
    "MAX_DICE_MOVES",
    "MAX_DICE_VALUES",
    "MAX_POSITIONS",
    "MAX_STATES",
    "DiceSolution",
    "PaceSolution",
    "PacedTurns",
    "Game",
    "Mover",
    "Solution",
    "Turns",
    "Unsolvable",
    "Ways",
    "solve",
]

#: The most positions x (rounds + 1) a solve with dice holds: its values of every round,
#: two float64 arrays of them kept for play (about 400 MB at the limit).
MAX_DICE_VALUES = 25_000_000

#: The most moves (both sides', and the quarry's again around the pursuer) a solve with
#: dice works out with their outcomes: some 500 bytes each at its peak, with the ways kept
#: to build them and a ply's arrays (about 1 GB at the limit).
MAX_DICE_MOVES = 2_000_000


class _Placed(ABC):
    """What play asks of a solution, with or without dice: the position a token stands
    in (:meth:`position`), read off its state (:meth:`position_of`)."""

    @abstractmethod
    def position(
        self,
        side: str,
        cell: Cell,
        toward: Cell | None,
        share: Fraction,
        held: bool = False,
        token: Any = None,
    ) -> int | None:
        """The position of ``side``'s token on ``cell`` (see each solution's)."""

    def holds_profile(self, tid: str, prof: Any) -> bool:
        """Whether token ``tid`` moving on ``prof`` is a token of this game (beyond the
        profile it was solved on): only where its pace state is carried (:mod:`.pace`)."""
        return False

    def position_of(
        self, side: str, state: Any, held: bool = False, token: Any = None
    ) -> int | None:
        """:meth:`position` of ``side``'s token in ``state`` (a token's state; ``token``:
        the token, whose pit state names its pit position)."""
        if state.cell is None:
            return None
        return self.position(side, state.cell, state.toward, state.progress, held, token)


@dataclass(frozen=True)
class Solution(_Placed):
    """A solved :class:`Game`: the value of every position (``values``: at the start of a
    round, pursuer cell x quarry cell; see :meth:`value_of`) and the start's outcome."""

    game: Game
    retro: Retro
    values: np.ndarray
    #: The crossings under way beside the cells (None: nobody crosses over turns).
    crossings: Crossings | None = None

    @property
    def big(self) -> int:
        return self.game.turns + 2

    # ----------------------------------------------------------------- the start

    def start(self) -> tuple[int, int]:
        g = self.game
        return g.index(g.pursuer.cell), g.index(g.quarry.cell)

    def outcome(self) -> tuple[str, int]:
        """The start's outcome under perfect play and its round."""
        p, q = self.start()
        c, e = int(self.retro.capture_in[p, q]), int(self.retro.escape_in[p, q])
        if c:
            return "capture", c
        if e:
            return "escape", e
        return "timeout", self.game.turns

    def to_dict(self) -> dict[str, Any]:
        """``tacgrid solve --json`` (docs/commands.md)."""
        outcome, turns = self.outcome()
        return {
            "kind": "solve",
            "outcome": outcome,
            "turns": turns,
            "p": {k: 1.0 if k == outcome else 0.0 for k in ("capture", "escape", "timeout")},
            "states": self.game.states,
            "rounds_solved": self.retro.rounds,
            "dice": False,
            "arithmetic": "exact",
        }

    # ----------------------------------------------------------------- play

    def arrive(self, v: np.ndarray, p: Any, q: Any) -> np.ndarray:
        """The value of ending a move on ``(p, q)`` (arrays), ``v`` the value of going on
        from there: a capture, else an escape, at once (the turn loop's check), else ``v``."""
        g, big = self.game, self.big
        return np.where(g.cap[p, q], big - 1, np.where(g.exit[q], 1 - big, v))

    def after_round(self, p: Any, q: Any) -> np.ndarray:
        """The value of the second mover ending its move on ``(p, q)``: the round is over,
        and the next one starts there (one round further off)."""
        v = self.values[p, q]
        return self.arrive(v - np.sign(v), p, q)

    def position(
        self,
        side: str,
        cell: Cell,
        toward: Cell | None,
        share: Fraction,
        held: bool = False,
        token: Any = None,
    ) -> int | None:
        """The position of ``side``'s token on ``cell``: its cell index, or with a crossing
        under way toward ``toward`` (``share`` made) its crossing position
        (:mod:`.crossing`); None where the game holds no such. ``held`` (a token that may
        not move) and ``token`` change nothing: without dice nothing holds a token."""
        g = self.game
        if self.crossings is None:
            return g.index(cell) if toward is None or share == 0 else None
        top = None if toward is None else g.index(toward)
        return self.crossings.position(side, g.index(cell), top, share)

    def _cell(self, pos: int) -> Cell:
        """The cell position ``pos`` stands on."""
        grid = self.game.quarry.graph.grid
        x = self.crossings
        return grid.cell_of_index(pos if x is None or pos < x.n else x.stand[pos - x.n])

    def _aim(self, side: str, src: int, end: int, p: int) -> int:
        """The cell aimed at to end a move from ``src`` on ``end`` (a cell: itself)."""
        x = self.crossings
        if x is None:
            return end
        if side == "quarry":  # around the pursuer where its cell is in the way
            got = x.aims_b.get((x.reach_of(p), src, end))
            if got is not None:
                return got
        return x.aims.get((side, src, end), end)

    def _cell_index(self, pos: int) -> int:
        x = self.crossings
        return pos if x is None or pos < x.n else x.stand[pos - x.n]

    def move(self, side: str, p_cell: Cell, q_cell: Cell, turn: int | None = None) -> Cell:
        """The solved move of ``side`` (``pursuer`` or ``quarry``) with the tokens on these
        cells, at its turn in the round (first or second, as the game's order; ``turn``,
        the round, changes nothing without dice: the move is as good in any). Of its best
        moves (all as good under perfect play), the one that ends nearest the other token
        (the pursuer) or farthest from it (the quarry), in grid steps: a pursuer that cannot
        force a capture still closes in rather than idles; then its own cell, then the
        lowest cell index."""
        g = self.game
        return self.move_at(side, g.index(p_cell), g.index(q_cell), turn)

    def move_at(self, side: str, p: int, q: int, turn: int | None = None) -> Cell:
        """:meth:`move` between positions (:meth:`position`: cell indices)."""
        g = self.game
        grid = g.quarry.graph.grid
        p_cell, q_cell = self._cell(p), self._cell(q)
        first = (side == "pursuer") == g.pursuer_first
        if side == "pursuer":
            opts = _own_first(g.reach_p.of(p), p)
            if first:
                vals = np.array([self._mid_value(int(o), q).item() for o in opts])
            else:
                vals = self.after_round(opts, np.full(len(opts), q))
            score = vals.astype(np.int64)
            near = [grid.steps(self._cell(int(o)), q_cell) for o in opts]
        else:
            opts = _own_first(g.quarry_moves(p, q), q)
            if first:
                vals = np.array([self._mid_value(p, int(o)).item() for o in opts])
            else:
                vals = self.after_round(np.full(len(opts), p), opts)
            score = -vals.astype(np.int64)
            near = [-grid.steps(p_cell, self._cell(int(o))) for o in opts]
        # The best value, then the nearer (farther), then the order of ``opts``.
        pick = np.lexsort((np.arange(len(opts)), np.array(near), -score))[0]
        src = p if side == "pursuer" else q
        return grid.cell_of_index(self._aim(side, src, int(opts[pick]), p))

    def _mid_value(self, p: int, q: int) -> np.ndarray:
        """The value of the first mover ending its move on ``(p, q)``: a capture or escape
        at once, else the second mover's best answer."""
        g = self.game
        if g.pursuer_first:
            opts = g.quarry_moves(p, q)
            v = self.after_round(np.full(len(opts), p), opts).min()
        else:
            opts = g.reach_p.of(p)
            v = self.after_round(opts, np.full(len(opts), q)).max()
        return self.arrive(np.array(v), p, q)


def _own_first(moves: np.ndarray, own: int) -> np.ndarray:
    """``moves`` in the order ties are broken in: its own cell, then by cell index."""
    rest = np.sort(moves[moves != own])
    return np.concatenate(([own], rest)) if len(rest) < len(moves) else rest


@dataclass(frozen=True)
class DiceSolution(_Placed):
    """A solved :class:`Game` with dice (:class:`~engine.solve.expect.Expecti`): the
    chances of each outcome at the start and the expected round, float64."""

    game: Game
    expecti: Expecti
    #: The climb positions beside the cells (None: nobody climbs over turns).
    climbs: Climbs | None = None
    #: The pit positions beside the cells (None: no jump asks a roll).
    pits: Pits | None = None
    #: The crossings under way beside the cells, with dice (:mod:`.dicecross`).
    crossings: Crossings | None = None

    def position(
        self,
        side: str,
        cell: Cell,
        toward: Cell | None,
        share: Fraction,
        held: bool = False,
        token: Any = None,
    ) -> int | None:
        """The position of ``side``'s token on ``cell`` (climbing toward ``toward`` with
        ``share`` climbed, where it is partway up a climb; ``held``: it may not move, as a
        token in a pit; ``token``: the token, whose pit state names its pit position);
        None: one the game does not hold."""
        g = self.game
        if self.crossings is not None:
            if self.pits is not None and token is not None:  # engine.solve.jumpmix
                pit = self.pits.position(side, g.index(cell), token)
                if pit is not None:
                    return pit
            top = None if toward is None or held else g.index(toward)
            return None if held else self.crossings.position(side, g.index(cell), top, share)
        if self.pits is not None:
            pit = None if token is None else self.pits.position(side, g.index(cell), token)
            if pit is not None or held:
                return pit
            return g.index(cell) if toward is None else None
        if self.climbs is None:
            return g.index(cell) if toward is None else None
        top = None if toward is None else g.index(toward)
        return self.climbs.position(side, g.index(cell), top, share)

    def start(self) -> np.ndarray:
        g = self.game
        return self.expecti.values[0][:, g.index(g.pursuer.cell), g.index(g.quarry.cell)]

    def outcome(self) -> tuple[str, float]:
        """The likeliest outcome (a capture, then an escape, on equal chances) and the
        expected round the run ends in (the turn limit for a timeout)."""
        pc, _, pe, rr = self.start().tolist()
        pt = max(0.0, 1.0 - pc - pe)
        best = max((pc, 2, "capture"), (pe, 1, "escape"), (pt, 0, "timeout"))
        return best[2], rr

    def to_dict(self) -> dict[str, Any]:
        """``tacgrid solve --json`` (docs/commands.md)."""
        pc, _, pe, _ = self.start().tolist()
        outcome, turns = self.outcome()
        return {
            "kind": "solve",
            "outcome": outcome,
            "turns": round(turns, 9),
            "p": {
                "capture": round(pc, 12),
                "escape": round(pe, 12),
                "timeout": round(max(0.0, 1.0 - pc - pe), 12),
            },
            "states": self.game.states,
            "rounds_solved": self.game.turns,
            "dice": True,
            "arithmetic": "float64",
        }

    def move(self, side: str, p_cell: Cell, q_cell: Cell, turn: int | None = None) -> Cell:
        """The solved move of ``side`` in round ``turn`` (default 1) with the tokens on
        these cells (:meth:`Expecti.move`: the best by the chance of a capture, then
        the tie-break; then nearest the other token or farthest from it, its own cell,
        the lowest cell index)."""
        g = self.game
        return self.move_at(side, g.index(p_cell), g.index(q_cell), turn)

    def move_at(self, side: str, p: int, q: int, turn: int | None = None) -> Cell:
        """:meth:`move` between positions (:meth:`position`): the cell it goes to (a
        climb's: the cell it climbs toward)."""
        got = self.expecti.move(side, p, q, turn or 1)
        if self.pits is not None and got >= self.pits.n:  # in a pit: it stays
            got = self.pits.cell[got - self.pits.n]
        return self.game.quarry.graph.grid.cell_of_index(got)


@dataclass(frozen=True)
class PaceSolution(DiceSolution):
    """A :class:`DiceSolution` whose positions carry each token's pace state
    (:mod:`.pace`): position ``k * n + c``, state ``k`` on cell index ``c``."""

    paces: Paces | None = None

    def holds_profile(self, tid: str, prof: Any) -> bool:
        """Whether token ``tid`` on ``prof`` (at its scenario pace) is in one of the pace
        states the game carries."""
        g = self.game
        side = "pursuer" if tid == g.pursuer.tid else "quarry" if tid == g.quarry.tid else ""
        return self.paces is not None and side != "" and self.paces.holds(side, prof)

    def position_of(
        self, side: str, state: Any, held: bool = False, token: Any = None
    ) -> int | None:
        """The position of ``side``'s token in ``state``: its cell and pace state (a round
        lost is part of it, ``held`` and ``token`` aside); None
        where the game holds no such state (or a crossing under way)."""
        if state.cell is None or self.paces is None:
            return None
        return self.paces.position(side, self.game.index(state.cell), state)


def solve(
    scenario: Scenario,
    movers: list[Mover],
    system: Any,
    max_states: int = MAX_STATES,
    ways: Ways | None = None,
    turns: PacedTurns | None = None,
) -> Solution | DiceSolution:
    """Solve one pursuer against one quarry (``movers`` in turn order); with ``ways``
    (the turn loop's, :class:`Ways`) a map whose cells ask checks too; with ``turns``
    (the loop's whole turns, :class:`Turns`) crossings of more than a turn on a map
    whose moves ask none (:mod:`.crossing`), and a token's pace state that carries from
    turn to turn (:mod:`.pace`)."""
    if ways is not None and turns is not None and paces_change(movers, system):
        game = build_game(scenario, movers, system, max_states, True, paces=True)
        paced, ex, paces = solve_paced(
            scenario, game, system, turns, MAX_DICE_VALUES, MAX_DICE_MOVES
        )
        return PaceSolution(paced, ex, paces=paces)
    crossings = turns is not None
    game = build_game(scenario, movers, system, max_states, ways is not None, crossings)
    if game.dice:
        assert ways is not None
        if isinstance(turns, DiceTurns) and has_crossings(game):
            return _solve_dice_crossings(scenario, game, system, turns)
        return _solve_dice(scenario, game, system, ways)
    lifted = None
    if crossings and has_crossings(game):
        assert turns is not None
        game, lifted = lift_crossings(game, turns, scenario.path)
        if game.n * game.n > MAX_POSITIONS:
            raise Unsolvable(
                f"{scenario.path}: {game.n * game.n:,} positions ({game.n} cells and "
                f"crossings under way, squared) is more than the limit {MAX_POSITIONS:,} the "
                "solver holds in memory; solve a smaller map"
            )
    retro = solve_retro(game)
    big = game.turns + 2
    values = np.where(
        retro.capture_in > 0,
        big - retro.capture_in,
        np.where(retro.escape_in > 0, retro.escape_in - big, 0),
    ).astype(np.int32)
    return Solution(game, retro, values, lifted)


def _solve_dice_crossings(
    scenario: Scenario, game: Game, system: Any, turns: DiceTurns
) -> DiceSolution:
    """A game with dice whose tokens cross cells over turns (:mod:`.dicecross`)."""
    found = find_pits(game, scenario.path, system)  # a failed jump's pit (engine.solve.jumpmix)
    pits = None
    if found is not None and isinstance(turns, TokenTurns):
        pits = DicePits(game, found, turns, system, scenario.path)
    got = lift_dice_crossings(game, turns, system, scenario.path, pits)
    lifted, out, cp, cq, cb, bp, bq, steps = got
    n = lifted.n
    held = n * n * (game.turns + 1)
    if held > MAX_DICE_VALUES:
        raise Unsolvable(
            f"{scenario.path}: {held:,} values with dice ({n} positions squared x "
            f"{game.turns + 1} rounds) is more than the limit {MAX_DICE_VALUES:,} held in "
            "memory; solve a smaller map or turn limit"
        )
    blocked = None if cb is None else side_of(cb, n)
    ex = Expecti(lifted, side_of(cp, n), side_of(cq, n), blocked, bp, bq, steps)
    ex.solve()
    return DiceSolution(lifted, ex, crossings=out, pits=None if pits is None else pits.placed)


def _solve_dice(scenario: Scenario, game: Game, system: Any, ways: Ways) -> DiceSolution:
    n = game.n
    held = n * n * (game.turns + 1)
    if held > MAX_DICE_VALUES:
        raise Unsolvable(
            f"{scenario.path}: {held:,} values with dice ({n} cells squared x "
            f"{game.turns + 1} rounds) is more than the limit {MAX_DICE_VALUES:,} held in "
            "memory; solve a smaller map or turn limit"
        )
    b = game.blocked
    moves = len(game.reach_p.idx) + len(game.reach_q.idx) + (0 if b is None else len(b.idx))
    if moves > MAX_DICE_MOVES:
        raise Unsolvable(
            f"{scenario.path}: {moves:,} moves with dice (both tokens' moves a turn from every "
            f"cell, and the quarry's around the pursuer) is more than the limit "
            f"{MAX_DICE_MOVES:,} worked out in memory; solve a smaller map or slower tokens"
        )
    name = scenario.path
    pm, qm = game.pursuer, game.quarry
    every = [(c, c, None) for c in range(n)]
    dp = Degrees(name, pm.tid, "pursuer", system, ways)
    dq = Degrees(name, qm.tid, "quarry", system, ways)
    pits = find_pits(game, name, system)  # a failed jump's pit (engine.solve.jump)
    if pits is not None:
        dp.falls, dq.falls = PitFalls(pits, "pursuer", dp), PitFalls(pits, "quarry", dq)
    chance_p = build_chance(game, "pursuer", game.reach_p.of, every, ways, dp, {})
    kept: dict[tuple[int, int], Walked] = {}
    chance_q = build_chance(game, "quarry", game.reach_q.of, every, ways, dq, kept)
    chance_b = None
    bp = bq = np.zeros(0, dtype=np.int64)
    if b is not None and len(b.p):
        bp, bq = b.p, b.q
        pairs = [(k, int(bq[k]), int(bp[k])) for k in range(len(bp))]
        chance_b = build_chance(
            game, "quarry", lambda k: b.idx[b.ptr[k] : b.ptr[k + 1]], pairs, ways, dq, kept
        )
    steps = steps_between(game)
    climbs = find_climbs(game, name, system, ways)
    if climbs is not None:
        # The climbs' positions beside the cells: each side's moves from every position,
        # and the quarry's around the pursuer with the quarry partway up too.
        held = climbs.size**2 * (game.turns + 1)
        if held > MAX_DICE_VALUES:
            raise Unsolvable(
                f"{scenario.path}: {held:,} values with dice ({climbs.size} positions "
                f"squared x {game.turns + 1} rounds) is more than the limit "
                f"{MAX_DICE_VALUES:,} held in memory; solve a smaller map or turn limit"
            )
        if chance_b is not None:
            chance_b, bp, bq = lift_blocked(climbs, chance_b, bp, bq)
        chance_p = lift_side(climbs, "pursuer", chance_p)
        chance_q = lift_side(climbs, "quarry", chance_q)
        tops = np.zeros(n, dtype=bool)
        tops[climbs.tops()] = True
        grown = replace(game, stand_p=game.stand_p | tops, stand_q=game.stand_q | tops)
        reach = climbs.reach()
        steps = steps_between(grown)[np.ix_(reach, reach)]
        game = lift_game(game, climbs)
        n = game.n
    if pits is not None:
        if climbs is not None:
            raise Unsolvable(
                f"{scenario.path}: a token climbs over turns and a token jumps with a check "
                "on this map, which solve does not carry together (docs/solve.md)"
            )
        game, chance_p, chance_q, chance_b, bp, bq, steps = lift_pits(
            scenario.path,
            game,
            pits,
            ways,
            dp,
            dq,
            kept,
            chance_p,
            chance_q,
            chance_b,
            bp,
            bq,
            MAX_DICE_VALUES,
        )
        n = game.n
    blocked = None if chance_b is None else side_of(chance_b, n)
    ex = Expecti(game, side_of(chance_p, n), side_of(chance_q, n), blocked, bp, bq, steps)
    ex.solve()
    return DiceSolution(game, ex, climbs, pits)
