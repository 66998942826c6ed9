"""Whole turns of the solve's game with dice: every way the turn loop's own walker may end a
token's turn, with its exact chance (:meth:`DiceTurns.outcomes`).

The walker rolls a cell's check through one seam (:meth:`Walker.roll`); here a walker
takes each check's degree from a script instead, and the turn is walked once for every
script, depth first: each degree with a chance, in the check's order, the chance of a turn
the product of its degrees'. Nothing of the rules is written again: the degrees' effects,
the crossings over turns and where a failure stops the token are the walker's. A roll made
elsewhere (a climb's turn of rolls, a jump, a roll once a round) comes back as such, for the
solve to refuse.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any

from engine.checks import Check, CheckResult
from engine.dice import Dice
from engine.grid import Cell
from engine.sim.dryturn import DryTurns, _AimWays
from engine.sim.walking import EventSink, StatsKeys, Walker
from engine.systems.base import Token


class _Scripted(Walker):
    """A walker whose checks come out as ``script`` says (the index of each check's degree
    among those with a chance), extended with the first degree past its end."""

    def __init__(self, walker: Walker, script: list[int]) -> None:
        super().__init__(walker.system, walker.fields, walker.dice, walker.sink, walker.stats_key)
        self.script = script
        self.at = 0
        self.chance = Fraction(1)
        #: Per check rolled, how many degrees it had with a chance.
        self.widths: list[int] = []

    def roll(self, check: Check) -> CheckResult:
        odds = check.outcomes()
        p_success = check.p_success()
        degrees: list[tuple[str, Fraction, bool]] = []
        upto = Fraction(0)
        for degree, p in odds.items():
            if p:
                degrees.append((degree, p, upto < p_success))  # the successes come first
            upto += p
        if self.at == len(self.script):
            self.script.append(0)
        degree, p, success = degrees[self.script[self.at]]
        self.at += 1
        self.widths.append(len(degrees))
        self.chance *= p
        return CheckResult(degree, success, 0, 0, ())

    def climb_turn(self, climber: Token, terrain: Any) -> tuple[Token, list[Any]]:
        """A climb's turn of rolls: each outcome the system lists
        (:meth:`RuleSystem.climb_turn_outcomes`) in turn, as a check's degrees; one it does
        not list is rolled on the dice (the solve refuses what it rolled)."""
        outs = self.system.climb_turn_outcomes(climber, terrain)
        if outs is None:
            return super().climb_turn(climber, terrain)
        outs = [(t, p) for t, p in outs if p]
        if self.at == len(self.script):
            self.script.append(0)
        token, p = outs[self.script[self.at]]
        self.at += 1
        self.widths.append(len(outs))
        self.chance *= p
        return token, []


class DiceTurns(DryTurns):
    """:class:`DryTurns` whose turns may meet checks: each turn's outcomes."""

    def outcomes(
        self,
        side: str,
        cell: Cell,
        toward: Cell | None,
        share: Fraction,
        dst: Cell,
        blocker: Cell | None,
        token: Token | None = None,
    ) -> tuple[list[tuple[Token, Fraction]], frozenset[Cell], bool, bool]:
        """Every way a whole turn of ``side``'s token (as :meth:`DryTurns.turn`) may end:
        the token it leaves and its exact chance (they sum to 1); the cells the ways
        entered (and the cells crossed toward); whether every way starts and ends on the
        profile the solve was made for; and whether anything was rolled beyond a cell's
        check (on the run's dice, which this leaves alone). ``token``: the token as its
        turn starts there, where it is not the side's token placed on ``cell`` (one in a
        pit climbing out: :mod:`engine.solve.jumpmix`); then only the ends' profiles are
        compared."""
        ways = self.ways
        fields = ways.fields
        base = ways.profs[side]
        given = token is not None
        token = self.placed(side, cell, toward, share) if token is None else token
        occ = ways.occupancy(side, blocker)
        start = ways.profile_of(side, token)
        same = given or start is base
        dice = Dice(0)
        plain = Walker(self.system, fields, dice, EventSink(record=True), StatsKeys(fields))
        got: list[tuple[Token, Fraction]] = []
        entered: set[Cell] = set()
        script: list[int] = []
        rolled = False
        while True:
            plain.sink = EventSink(record=True)
            walker = _Scripted(plain, script)
            prof, walk, k = fields.descent(start, (dst,), False, cell, occ)
            end = walker.walk_down(token.id, token, prof, walk, k, _AimWays(ways, side, dst, occ))
            got.append((end, walker.chance))
            moves = (e for e in walker.sink.events if e["type"] == "move")
            entered.update(c for e in moves for c in map(tuple, e["path"]))
            # The walker logs what it rolled on the dice (and empties their log): a roll
            # beyond the seam's.
            rolled = rolled or any(e["type"] == "roll" for e in walker.sink.events)
            if end.state.toward is not None:
                entered.add(end.state.toward)
            same = same and ways.profile_of(side, end) is base
            del script[walker.at :]
            while script and script[-1] + 1 >= walker.widths[len(script) - 1]:
                script.pop()
            if not script:
                break
            script[-1] += 1
        return got, frozenset(entered), same, rolled or bool(dice.log)

    def on_base(self, side: str, token: Token) -> bool:
        """Whether ``side``'s ``token`` moves on the profile the solve was made for."""
        return self.ways.profile_of(side, token) is self.ways.profs[side]
