"""Whole turns of the solve's game walked by the turn loop's own walker with no dice
(:class:`engine.solve.Turns`): a token standing on a cell, perhaps with a crossing of more
than a turn under way, aiming at one cell (a solved policy's goal), on the ways
:class:`~engine.sim.view.SolveWays` gives, its way again once a crossing is made as
:meth:`Simulation._replan` gives it."""

from __future__ import annotations

from fractions import Fraction
from typing import Any

from engine.dice import Dice
from engine.grid import Cell
from engine.occupancy import Occupancy
from engine.sim.crossing import mode_at
from engine.sim.fields import Profile
from engine.sim.view import SolveWays
from engine.sim.walking import EventSink, StatsKeys, Walker
from engine.systems.base import RuleSystem, Token


class DryTurns:
    """The whole turns of the tokens ``tokens`` (by side, as the solve found them) on
    ``ways`` under ``system``."""

    def __init__(self, ways: SolveWays, tokens: dict[str, Token], system: RuleSystem) -> None:
        self.ways, self.tokens, self.system = ways, tokens, system

    def turn(
        self,
        side: str,
        cell: Cell,
        toward: Cell | None,
        share: Fraction,
        dst: Cell,
        blocker: Cell | None,
    ) -> tuple[Token, frozenset[Cell], bool]:
        """A whole turn of ``side``'s token standing on ``cell`` (crossing toward
        ``toward`` with ``share`` of it made) aiming at ``dst``, the other token on
        ``blocker`` where it is in the way, walked by :meth:`Walker.walk_down` on the
        loop's descent (a map whose moves ask no check: nothing is rolled): the token it
        leaves (a crossing under way in its ``toward`` and ``progress``), the cells its
        way entered (and the cell crossed toward), and whether it starts and ends on the
        profile the solve was made for."""
        ways = self.ways
        fields = ways.fields
        base = ways.profs[side]
        token = self.placed(side, cell, toward, share)
        occ = ways.occupancy(side, blocker)
        dice, sink = Dice(0), EventSink(record=True)
        walker = Walker(self.system, fields, dice, sink, StatsKeys(fields))
        start = ways.profile_of(side, token)
        prof, walk, k = fields.descent(start, (dst,), False, cell, occ)
        got = walker.walk_down(token.id, token, prof, walk, k, _AimWays(ways, side, dst, occ))
        assert not dice.log, "a turn of a game without checks rolled"
        entered = {c for e in sink.events if e["type"] == "move" for c in map(tuple, e["path"])}
        if got.state.toward is not None:
            entered.add(got.state.toward)
        return got, frozenset(entered), start is base and ways.profile_of(side, got) is base

    def stands_on_base(self, side: str, cell: int) -> bool:
        """Whether ``side``'s token standing on cell index ``cell`` (in that cell's mode, as
        a turn ending there leaves it) is on the profile the solve was made for."""
        base = self.ways.profs[side]
        token = self.placed(side, base.graph.grid.cell_of_index(cell), None, Fraction(0))
        return self.ways.profile_of(side, token) is base

    def placed(self, side: str, cell: Cell, toward: Cell | None, share: Fraction) -> Token:
        """``side``'s token standing on ``cell`` in its mode (crossing toward ``toward``
        with ``share`` of it made), as a turn starts there."""
        g = self.ways.profs[side].graph
        token = self.ways.fields.hooks.moved(
            self.tokens[side], cell, mode_at(g.model, toward or cell)
        )
        return token if toward is None else token.moved(toward=toward, progress=share)


class _AimWays:
    """The loop's way again after a crossing is made (:meth:`Simulation._replan` for a
    policy whose goal is one cell): the descent to it on the token's profile, cut to the
    time left of the turn."""

    def __init__(self, ways: SolveWays, side: str, dst: Cell, occ: Occupancy) -> None:
        self.ways, self.side, self.dst, self.occ = ways, side, dst, occ

    def profile(self, token: Token) -> Profile:
        return self.ways.profile_of(self.side, token)

    def __call__(
        self, token: Token, prof: Profile | None, used: Fraction, until: Fraction | None
    ) -> tuple[Profile, Any, int] | None:
        new = self.profile(token)
        if new is prof:
            return None
        cell = token.state.cell
        assert cell is not None
        new, walk, k = self.ways.fields.descent(new, (self.dst,), False, cell, self.occ)
        left = float((min(until or 1, 1) - used) * new.graph.denominator) + 1e-9
        while k and walk.spent[k - 1] > left:
            k -= 1
        return new, walk, k
