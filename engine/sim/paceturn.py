"""The turn loop's turns of a token whose state carries from turn to turn, each degree of
its once-a-turn roll taken with its exact chance, for the solve's pace positions
(:mod:`engine.solve.pace`): D6's speed, which may change two levels a round (the pace
ramp), and its one movement roll a round, whose failure cuts the move short and may leave
a penalty, a lost round or a stop for the rounds after.

A turn is made as the loop makes it (:meth:`Simulation._begin`, ``_ground_way``,
:meth:`Walker._roll_turn`, :meth:`Simulation._ended`): the system's start of the turn, the
pace it may use (:meth:`RuleSystem.turn_pace`), whether the rules hold it
(:meth:`RuleSystem.held`), the profile at that pace and the field cache's descent to the
one cell aimed at, the turn's rolls over the cells it enters (:meth:`Walker.turn_rolls`),
each result applied and a failure's share of the move kept (:func:`kept_share`), then
:meth:`RuleSystem.paced` and the end of the turn, whose rolls the system lists with their
chances (:meth:`RuleSystem.end_turn_outcomes`). Nothing is rolled: each degree of a roll is
a branch with its chance.
"""

from __future__ import annotations

from collections.abc import Iterator
from fractions import Fraction
from typing import Any

from engine.dice import Dice
from engine.grid import Cell
from engine.occupancy import Occupancy
from engine.sim.crossing import kept_share, mode_at
from engine.sim.diceturn import DiceTurns, _Scripted
from engine.sim.dryturn import _AimWays
from engine.sim.fields import Profile
from engine.sim.walking import EventSink, StatsKeys, Walker
from engine.solve.game import Unsolvable
from engine.systems.base import Token


class SolveTurns(DiceTurns):
    """:class:`DiceTurns` and the turns of a token whose pace state carries
    (:class:`engine.solve.pace.PacedTurns`)."""

    def __init__(self, *args: Any) -> None:
        super().__init__(*args)
        self._walker: Walker | None = None
        self._ways: dict[tuple[Any, ...], tuple[Profile, Any, int]] = {}
        self._turns: dict[tuple[Any, ...], list[tuple[Cell, Token, Fraction]]] = {}
        self._ends: dict[tuple[str, Any], list[tuple[Token, Fraction]]] = {}

    @property
    def walker(self) -> Walker:
        if self._walker is None:
            fields = self.ways.fields
            sink = EventSink(record=False)
            self._walker = Walker(self.system, fields, Dice(0), sink, StatsKeys(fields))
        return self._walker

    def profile_now(self, side: str, token: Token) -> Profile:
        """The profile ``token`` moves on at its scenario pace (:meth:`Simulation.profile_now`)."""
        return self.ways.profile_of(side, token)

    def pace_start(self, side: str, token: Token, cell: Cell) -> tuple[str, Profile | None]:
        """``side``'s token as its last turn left it (``token``) starting a turn on
        ``cell``: the pace the turn may use, and the profile it moves on (None: the rules
        hold it this turn)."""
        tok, pace = self._started(side, token, cell)
        if self.system.held(tok) is not None:
            return pace, None
        ways = self.ways
        return pace, ways.fields.profile(tok, pace, ways.sizes[side], ways.doors)

    def _started(self, side: str, token: Token, cell: Cell) -> tuple[Token, str]:
        g = self.ways.profs[side].graph
        tok = token.moved(cell=cell, mode=mode_at(g.model, cell))
        dice = Dice(0)
        tok = self.system.start_turn(tok, dice)
        if dice.log:
            raise Unsolvable(
                f"token {token.id} rolls as its turn starts, which solve does not carry "
                "(docs/solve.md)"
            )
        return tok, self.system.turn_pace(tok, g.pace)

    def pace_turn(
        self, side: str, token: Token, cell: Cell, dst: Cell, blocker: Cell | None
    ) -> list[tuple[Cell, Token, Fraction]]:
        """A whole turn of ``side``'s token (``token``, as its last turn left it) from
        ``cell`` aiming at ``dst``, the other token on ``blocker`` where it is in the way:
        each way it may end, the cell, the token the turn leaves (less the system's notes)
        and its exact chance."""
        tok, pace = self._started(side, token, cell)
        # What decides the turn: the token as its turn starts (its stats are the
        # scenario's all through a solve), where it stands, its aim and the other token in
        # its way. Pace states that start their turn alike (a fall's kneeling gone, say)
        # share it.
        key = (side, tok.state, cell, dst, blocker)
        got = self._turns.get(key)
        if got is None:
            got = self._turns[key] = self._pace_turn(side, tok, pace, cell, dst, blocker)
        return got

    def _pace_turn(
        self, side: str, tok: Token, pace: str, cell: Cell, dst: Cell, blocker: Cell | None
    ) -> list[tuple[Cell, Token, Fraction]]:
        """:meth:`pace_turn` of the token as its turn starts (``tok``) at ``pace``."""
        system = self.system
        # The end of the turn's outcomes that differ only in notes are one (by state).
        out: dict[tuple[Cell, Any], tuple[Token, Fraction]] = {}
        for end, moved, p in self._moves(side, tok, pace, cell, dst, blocker):
            paced = system.paced(moved, pace, end != cell)
            for less, q in self._ended(paced):
                got = out.get((end, less.state))
                out[(end, less.state)] = (less, p * q + (got[1] if got else 0))
        return [(end, t, p) for (end, _), (t, p) in out.items()]

    def _ended(self, paced: Token) -> list[tuple[Token, Fraction]]:
        """The end of the turn's outcomes (:meth:`RuleSystem.end_turn_outcomes`) less the
        system's notes, those alike in all else as one, with their chances: a pure function
        of the token, kept by its id and state (its stats are the scenario's, the same all
        through a solve; D6's collision damage lists a margin per total of the two pools,
        hundreds of tokens that differ only in notes)."""
        key = (paced.id, paced.state)
        got = self._ends.get(key)
        if got is not None:
            return got
        ends = self.system.end_turn_outcomes(paced)
        if ends is None:
            raise Unsolvable(
                f"token {paced.id} rolls at the end of its turn and the system does not "
                "list the outcomes (docs/solve.md)"
            )
        fields = self.ways.fields
        out: dict[Any, tuple[Token, Fraction]] = {}
        for ended, q in ends:
            less = fields.less_notes(ended)
            was = out.get(less.state)
            out[less.state] = (less, q + (was[1] if was else 0))
        got = self._ends[key] = list(out.values())
        return got

    def _moves(
        self, side: str, tok: Token, pace: str, cell: Cell, dst: Cell, blocker: Cell | None
    ) -> Iterator[tuple[Cell, Token, Fraction]]:
        """Where the move ends, the token there and the chance, each degree a branch."""
        ways, system = self.ways, self.system
        fields = ways.fields
        if system.held(tok) is not None or dst == cell:
            yield cell, tok, Fraction(1)
            return
        prof = fields.profile(tok, pace, ways.sizes[side], ways.doors)
        occ = ways.occupancy(side, blocker)
        # The field cache makes a way with a token in it every time: the states that
        # share a profile ask it once here.
        key = (prof, dst, cell, occ.blocked)
        got = self._ways.get(key)
        if got is None:
            got = self._ways[key] = fields.descent(prof, (dst,), False, cell, occ)
        prof, walk, k = got
        g = prof.graph
        if walk.jumps or (walk.after is not None and k == len(walk.edges)):
            raise Unsolvable(
                f"token {tok.id}'s way to {list(dst)} jumps or goes into a crossing of more "
                "than a turn, which solve does not carry with its pace (docs/solve.md)"
            )
        per_turn = system.turn_checks(tok, [], pace) is not None
        if walk.checks and not per_turn:
            yield from self._cell_rolls(side, tok, pace, cell, dst, prof, walk, k, occ)
            return
        entries, walked, rolled = walk.upto(k)
        path = [cell, *walked]
        rolls = self.walker.turn_rolls(tok, g, entries, rolled) if entries else []
        ticks = [t for _, t in entries]
        for kept, after, p in self._rolled(tok, rolls, 0, g, ticks, len(path) - 1):
            end = path[kept]
            mode = mode_at(g.model, end)
            yield end, (fields.hooks.moved(after, end, mode) if kept else after), p

    def _rolled(
        self, tok: Token, rolls: list[Any], i: int, g: Any, ticks: list[float], whole: int
    ) -> Iterator[tuple[int, Token, Fraction]]:
        """The rolls from the ``i``-th on, in order: each degree with its chance, the cells
        of the path kept (:meth:`Walker._roll_turn`) and the token after them."""
        if i == len(rolls):
            yield whole, tok, Fraction(1)
            return
        at, check = rolls[i]
        if check.check is None:
            yield from self._rolled(tok, rolls, i + 1, g, ticks, whole)
            return
        system, walker = self.system, self.walker
        p_success = check.check.p_success()
        upto = Fraction(0)
        for degree, p in check.check.outcomes().items():
            success = upto < p_success  # the successes come first (engine.checks)
            upto += p
            if not p:
                continue
            after = walker.apply_check(tok.id, tok, check.what, degree)
            share = None if success else system.failure_share(check, degree)
            if success or (share is not None and share >= 1):
                for kept, tok2, q in self._rolled(after, rolls, i + 1, g, ticks, whole):
                    yield kept, tok2, p * q
                continue
            total = walker.share_whole(g, ticks[-1])
            yield (at if share is None else kept_share(ticks, share, total)), after, p

    def _cell_rolls(
        self,
        side: str,
        tok: Token,
        pace: str,
        cell: Cell,
        dst: Cell,
        prof: Profile,
        walk: Any,
        k: int,
        occ: Occupancy,
    ) -> Iterator[tuple[Cell, Token, Fraction]]:
        """A turn whose checks are rolled cell by cell as it walks (D6's ``roll_per =
        cell_run``: one roll a run of terrain), walked by the loop's own walker once per
        combination of degrees (:class:`~engine.sim.diceturn._Scripted`, through the seam
        :meth:`Walker.roll`), depth first: each way it ends, the token there and the
        product of its degrees' exact chances."""
        fields = self.ways.fields
        script: list[int] = []
        replan = _PacedAim(self.ways, side, dst, occ, pace)
        while True:
            dice = Dice(0)
            plain = Walker(self.system, fields, dice, EventSink(record=False), StatsKeys(fields))
            walker = _Scripted(plain, script)
            end = walker.walk_down(tok.id, tok, prof, walk, k, replan)
            if dice.log:
                raise Unsolvable(
                    f"token {tok.id} rolls beyond a cell's check on its way to {list(dst)}, "
                    "which solve does not carry with its pace (docs/solve.md)"
                )
            if end.state.toward is not None:
                raise Unsolvable(
                    f"token {tok.id}'s way to {list(dst)} goes into a crossing of more than "
                    "a turn, which solve does not carry with its pace (docs/solve.md)"
                )
            at = end.state.cell
            assert at is not None
            yield at, end, walker.chance
            del script[walker.at :]
            while script and script[-1] + 1 >= walker.widths[len(script) - 1]:
                script.pop()
            if not script:
                return
            script[-1] += 1


class _PacedAim(_AimWays):
    """:class:`~engine.sim.dryturn._AimWays` at the pace of the turn under way (the
    loop's :class:`Simulation._replan` with the pace it began the turn at)."""

    def __init__(self, ways: Any, side: str, dst: Cell, occ: Occupancy, pace: str) -> None:
        super().__init__(ways, side, dst, occ)
        self.pace = pace

    def profile(self, token: Token) -> Profile:
        ways = self.ways
        return ways.fields.profile(token, self.pace, ways.sizes[self.side], ways.doors)
