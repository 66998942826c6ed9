"""Exact solutions of small chases: one pursuer against one quarry played perfectly by both
under the turn loop's own rules (docs/solve.md).

:func:`solve` builds the game (:mod:`.game`: each side's moves of a turn from the engine's
movement graphs, tokens in the way, the capture distance, the exits, the turn order and
limit) and solves it by retrograde analysis (:mod:`.retro`). The :class:`Solution` answers
``tacgrid solve`` (:meth:`Solution.to_dict`) and tells the pursuer and quarry policies the
solved move (:meth:`Solution.move`), a pure function of where the two tokens stand.

Layers: this module > retro > game.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from engine.grid import Cell
from engine.scenario import Scenario
from engine.solve.game import MAX_POSITIONS, MAX_STATES, Game, Mover, Unsolvable, build_game
from engine.solve.retro import Retro, solve_retro

__all__ = ["MAX_POSITIONS", "MAX_STATES", "Game", "Mover", "Solution", "Unsolvable", "solve"]


@dataclass(frozen=True)
class Solution:
    """A solved :class:`Game`: the value of every position (``values``: at the start of a
    round, pursuer cell x quarry cell; see :meth:`value_of`) and the start's outcome."""

    game: Game
    retro: Retro
    values: np.ndarray

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

    def move(self, side: str, p_cell: Cell, q_cell: Cell) -> Cell:
        """The solved move of ``side`` (``pursuer`` or ``quarry``) with the tokens on these
        cells, at its turn in the round (first or second, as the game's order). Of its best
        moves (all as good under perfect play), the one that ends nearest the other token
        (the pursuer) or farthest from it (the quarry), in grid steps: a pursuer that cannot
        force a capture still closes in rather than idles; then its own cell, then the
        lowest cell index."""
        g = self.game
        grid = g.quarry.graph.grid
        p, q = g.index(p_cell), g.index(q_cell)
        first = (side == "pursuer") == g.pursuer_first
        if side == "pursuer":
            opts = _own_first(g.reach_p.of(p), p)
            if first:
                vals = np.array([self._mid_value(int(o), q).item() for o in opts])
            else:
                vals = self.after_round(opts, np.full(len(opts), q))
            score = vals.astype(np.int64)
            near = [grid.steps(grid.cell_of_index(int(o)), q_cell) for o in opts]
        else:
            opts = _own_first(g.quarry_moves(p, q), q)
            if first:
                vals = np.array([self._mid_value(p, int(o)).item() for o in opts])
            else:
                vals = self.after_round(np.full(len(opts), p), opts)
            score = -vals.astype(np.int64)
            near = [-grid.steps(p_cell, grid.cell_of_index(int(o))) for o in opts]
        # The best value, then the nearer (farther), then the order of ``opts``.
        pick = np.lexsort((np.arange(len(opts)), np.array(near), -score))[0]
        return grid.cell_of_index(int(opts[pick]))

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


def solve(
    scenario: Scenario, movers: list[Mover], system: Any, max_states: int = MAX_STATES
) -> Solution:
    """Solve one pursuer against one quarry (``movers`` in turn order)."""
    game = build_game(scenario, movers, system, max_states)
    retro = solve_retro(game)
    big = game.turns + 2
    values = np.where(
        retro.capture_in > 0,
        big - retro.capture_in,
        np.where(retro.escape_in > 0, retro.escape_in - big, 0),
    ).astype(np.int32)
    return Solution(game, retro, values)
