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
from engine.occupancy import Occupancy
from engine.sim.dryturn import DryTurns, _AimWays
from engine.sim.fields import Profile, Walk
from engine.sim.view import SolveWays
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


#: An edge of a walk: (node, next node, ticks).
_Edge = tuple[int, int, float]

#: What a way given to the walker decides (:func:`_way_key`).
WayKey = tuple[bool, bool, tuple[_Edge, ...], _Edge | None, int]


def _way_key(way: tuple[Profile, Walk, int], asked: Profile, dst_in_way: bool) -> WayKey:
    """What the walker reads of a way (:meth:`Walker.walk_down`): whether it is on the
    profile ``asked`` for (else the descent's one with the tokens in the way taken away,
    which ``dst_in_way`` and the occupancy decide), its edges (the checks and jumps on them),
    the edge after them where the turn goes into it, and how many are walked."""
    prof, walk, k = way
    after = walk.after if k == len(walk.edges) else None
    return (prof is asked, dst_in_way, tuple(walk.edges), after, k)


class _Told(_AimWays):
    """:class:`_AimWays` that keeps each way it gives, by what decides it, with the question
    asked (the walk's only other reading of the aim)."""

    def __init__(self, ways: SolveWays, side: str, dst: Cell, occ: Occupancy) -> None:
        super().__init__(ways, side, dst, occ)
        self.asked: list[tuple[Token, Profile | None, Fraction, Fraction | None, Any]] = []

    def __call__(
        self, token: Token, prof: Profile | None, used: Fraction, until: Fraction | None
    ) -> tuple[Profile, Any, int] | None:
        got = super().__call__(token, prof, used, until)
        self.asked.append((token, prof, used, until, self.key(got, token)))
        return got

    def key(self, got: tuple[Profile, Any, int] | None, token: Token) -> WayKey | None:
        if got is None:
            return None
        cell = token.state.cell
        return _way_key(got, self.profile(token), self.dst != cell and self.dst in self.occ.blocked)

    def gives_as(
        self, asked: list[tuple[Token, Profile | None, Fraction, Fraction | None, Any]]
    ) -> bool:
        """Whether this aim answers each of ``asked`` (another aim's questions) as it was
        answered, by what decides the way."""
        return all(self.key(_AimWays.__call__(self, t, p, u, e), t) == k for t, p, u, e, k in asked)


#: A turn's outcomes (:meth:`DiceTurns.outcomes` less the starting profile's part).
_Outcomes = tuple[list[tuple[Token, Fraction]], frozenset[Cell], bool, bool]


class DiceTurns(DryTurns):
    """:class:`DryTurns` whose turns may meet checks: each turn's outcomes.

    A turn is walked once per thing that decides it (:attr:`KEEP`): the token it sets out
    with (:meth:`Walker.setting_out`: a crossing turned away from is lost, so such a turn
    from a crossing under way is its cell's), the other token's cell, and the ways the
    walker is given (the first leg's, and each asked again on the way: the aim is read
    nowhere else). A turn aimed elsewhere with the same of all these walks the same, edge
    for edge and roll for roll (``tests/test_solve_dicefast.py`` holds it equal to walking
    every aim)."""

    #: Whether turns that are decided alike are walked once (off: each walked, the plain way).
    KEEP = True

    def __init__(self, *args: Any) -> None:
        super().__init__(*args)
        #: Per (side, state set out with, blocker): per first way, the turns walked with the
        #: questions they asked again on the way and their outcomes.
        self._kept: dict[tuple[Any, ...], dict[WayKey, list[tuple[list[Any], _Outcomes]]]] = {}
        #: The same per aim (a turn asked again: a crossing turned away from is its cell's).
        self._kept_aims: dict[tuple[Any, ...], dict[Cell, _Outcomes]] = {}
        self._placed: dict[tuple[Any, ...], tuple[Token, Profile]] = {}
        self._firsts: dict[tuple[Any, ...], tuple[Profile, Walk, int]] = {}
        #: Per position, blocker and what setting out reads of the way: the token it sets
        #: out with and its turns per aim.
        self._set_out: dict[tuple[Any, ...], tuple[Token, dict[Cell, _Outcomes]]] = {}
        self._occ: dict[tuple[str, Cell | None], Occupancy] = {}
        #: The turns walked (each script of a turn's checks walked once per turn).
        self.walked = 0

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
        base = ways.profs[side]
        keep = self.KEEP and token is None
        given = token is not None
        here = (side, cell, toward, share)
        placed = self._placed.get(here) if keep else None
        if placed is None:
            token = self.placed(side, cell, toward, share) if token is None else token
            placed = (token, ways.profile_of(side, token))
            if keep:
                self._placed[here] = placed
        token, start = placed
        occ = self._occ.get((side, blocker)) if keep else None
        if occ is None:  # (an Occupancy of nobody is falsy)
            occ = ways.occupancy(side, blocker)
            if keep:
                self._occ[(side, blocker)] = occ
        if not keep:
            first = ways.fields.descent(start, (dst,), False, cell, occ)
            token = Walker.setting_out(token, *first)
            got = self._walk(side, token, first, _Told(ways, side, dst, occ))
        else:
            # The descent, a pure function of its arguments (the field cache keeps those
            # not around a token in the way: a crossing's turns ask them again).
            way_key = (start, cell, blocker, dst)
            kept_way = self._firsts.get(way_key)
            if kept_way is None:
                kept_way = ways.fields.descent(start, (dst,), False, cell, occ)
                self._firsts[way_key] = kept_way
            first = kept_way
            prof, walk, k = first
            # What setting out reads: the token, the graph, and the way's edges walked, its
            # length and the edge after it.
            out_key = (here, blocker, prof, k, len(walk.edges), walk.after)
            set_out = self._set_out.get(out_key)
            if set_out is None:
                token = Walker.setting_out(token, *first)
                by_aim = self._kept_aims.setdefault((side, token.state, blocker), {})
                set_out = self._set_out[out_key] = (token, by_aim)
            token, by_aim = set_out
            kept = by_aim.get(dst)
            if kept is None:
                kept = by_aim[dst] = self._kept_walk(side, token, start, first, dst, occ, blocker)
            got = kept
        ends, entered, same, rolled = got
        return ends, entered, same and (given or start is base), rolled

    def _kept_walk(
        self,
        side: str,
        token: Token,
        start: Profile,
        first: tuple[Profile, Walk, int],
        dst: Cell,
        occ: Occupancy,
        blocker: Cell | None,
    ) -> _Outcomes:
        """The turn set out on with ``token`` aimed at ``dst``, walked once per thing that
        decides it (the class)."""
        cell = token.state.cell
        aim = _Told(self.ways, side, dst, occ)
        by_way = self._kept.setdefault((side, token.state, blocker), {})
        kept = by_way.setdefault(_way_key(first, start, dst != cell and dst in occ.blocked), [])
        for asked, got in kept:
            if aim.gives_as(asked):
                return got
        got = self._walk(side, token, first, aim)
        kept.append((aim.asked, got))
        return got

    def _walk(
        self, side: str, token: Token, first: tuple[Profile, Walk, int], aim: _Told
    ) -> _Outcomes:
        """Walk the turn once for every script of the checks' degrees (see the module)."""
        self.walked += 1
        ways = self.ways
        fields = ways.fields
        base = ways.profs[side]
        dice = Dice(0)
        plain = Walker(self.system, fields, dice, EventSink(record=True), StatsKeys(fields))
        got: list[tuple[Token, Fraction]] = []
        entered: set[Cell] = set()
        script: list[int] = []
        same = True
        rolled = False
        prof, walk, k = first
        while True:
            plain.sink = EventSink(record=True)
            walker = _Scripted(plain, script)
            end = walker.walk_down(token.id, token, prof, walk, k, aim)
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
