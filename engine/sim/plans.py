"""A ground turn played from its plan (:class:`PlanPlay`, mixed into the simulation): the
checks its way rolls and the cells it walks, worked out once per kept start of a turn
(:meth:`PlanPlay._plan_of`), and what each sequence of rolled degrees makes of the turn,
worked out once per plan (:meth:`PlanPlay._plan_outcome`). A run that keeps no log plays
its ground turns so (:meth:`PlanPlay._play_plan`)."""

from __future__ import annotations

from fractions import Fraction
from typing import Any, Protocol

from engine.dice import Dice
from engine.sim.cache import FieldCache
from engine.sim.crossing import kept_share, mode_at
from engine.sim.fields import TurnPlan
from engine.sim.walking import EventSink, Walker
from engine.systems.base import RuleSystem, Token


class Planned(Protocol):
    """What playing a turn from its plan reads and calls of the simulation."""

    system: RuleSystem
    fields: FieldCache
    walker: Walker
    dice: Dice
    sink: EventSink

    def _end_turn(self, tid: str, token: Token, pace: str, moved: bool | None) -> Token: ...

    def _close_turn(self, tid: str, token: Token) -> Token: ...

    def _end_key(
        self, tid: str, token: Token, pace: str, moved: bool | None
    ) -> tuple[Any, ...]: ...

    def _plan_of(self, start: tuple[Any, ...]) -> TurnPlan | None: ...

    def _plan_outcome(
        self, tid: str, start: tuple[Any, ...], plan: TurnPlan, results: list[tuple[str, bool]]
    ) -> tuple[Token, bool, int, Token | None]: ...


class PlanPlay:
    """Ground turns played from plans (mixed into the simulation)."""

    def _plan_of(self: Planned, start: tuple[Any, ...]) -> TurnPlan | None:
        """The plan of a turn from a kept ``start`` (:meth:`_turn_start`): the checks its
        way rolls, in order, and the cells it walks; None where the turn is not played
        from a plan (a flier, a way with jumps, checks rolled cell by cell as it walks)."""
        token, _pace, per_turn, _prof, way = start
        if token.state.flight is not None or token.state.cell is None:
            return None
        if way is None:  # it stays: no move, nothing rolled on the way
            return TurnPlan((), None)
        prof, walk, k = way
        if walk.jumps or not (per_turn or not walk.checks):
            return None
        if token.state.toward is not None or (walk.after is not None and k == len(walk.edges)):
            return None  # a crossing of more than a turn: walked by Walker.walk_down
        entries, walked, rolled = walk.upto(k)
        rolls: tuple[tuple[int, Any], ...] = ()
        if per_turn and entries:
            asked = self.walker.turn_rolls(token, prof.graph, entries, rolled)
            rolls = tuple((at, c) for at, c in asked if c.check is not None)
        return TurnPlan(rolls, (token.state.cell, *walked), tuple(t for _, t in entries))

    def _play_plan(self: Planned, tid: str, start: tuple[Any, ...], plan: TurnPlan) -> None:
        """:meth:`take_turn` from a plan (:meth:`_plan_of`), for a run that keeps no log:
        the plan's checks rolled in order up to the first failure, then what those
        degrees make of the token (kept in the plan by them) and the end of the turn."""
        dice = self.dice
        results: list[tuple[str, bool]] = []
        for _at, check in plan.rolls:
            result = check.check.roll(dice)
            results.append((result.degree, result.success))
            if not result.success and not _goes_on(self.system.failure_share(check, result.degree)):
                break
        log = dice.log
        sink = self.sink
        if sink.counting:  # each roll's event and its check's
            sink.counted += len(log) + len(results)
        log.clear()
        self.walker.defer = None
        key = tuple(results)
        got = plan.outcomes.get(key)
        if got is None:  # new degrees for this plan: the turn is made, and its outcome kept
            got = self._plan_outcome(tid, start, plan, results)
            plan.keep(key, got)
            if sink.counting:
                sink.counted += got[2]
            return
        moved_token, moved, n_move, ended = got
        if sink.counting:
            sink.counted += n_move
        if ended is None:  # an end of the turn that rolls: made every time
            self._end_turn(tid, moved_token, start[1], moved)
            return
        self._close_turn(tid, ended)

    def _plan_outcome(
        self: Planned,
        tid: str,
        start: tuple[Any, ...],
        plan: TurnPlan,
        results: list[tuple[str, bool]],
    ) -> tuple[Token, bool, int, Token | None]:
        """What a plan's rolled ``results`` (degree and success of each check rolled) make
        of the turn, as :meth:`_roll_turn` and :meth:`_moved` make it: the token at the end
        of its move, whether it left its cell, its move events (0 or 1), and the token at
        the end of the turn where that end rolls nothing (None: it rolls, and is made
        every time). The end is made here, on this turn's dice, either way."""
        token, pace = start[0], start[1]
        before = token.state.cell
        hooks = self.fields.hooks
        if plan.path is None:
            moved_token, moved, n_move = token, False, 0
        else:
            path = plan.path
            for (at, check), (degree, success) in zip(plan.rolls, results, strict=False):
                token = self.walker.apply_check(tid, token, check.what, degree)
                share = Fraction(1) if success else self.system.failure_share(check, degree)
                if not _goes_on(share):
                    ticks = plan.ticks
                    whole = self.walker.share_whole(start[3].graph, ticks[-1])
                    kept = at if share is None else kept_share(list(ticks), share, whole)
                    path = path[: kept + 1]
                    break
            n_move = 1 if len(path) > 1 else 0
            if n_move:
                moved_token = hooks.moved(token, path[-1], mode_at(start[3].graph.model, path[-1]))
            else:
                moved_token = hooks.moved(token, path[-1])
            moved = moved_token.state.cell != before
        ended = self._end_turn(tid, moved_token, pace, moved)
        pure = hooks.same(self._end_key(tid, moved_token, pace, moved), moved_token)
        return moved_token, moved, n_move, (ended if pure is not None else None)


def _goes_on(share: Fraction | None) -> bool:
    """Whether a roll whose failure still makes ``share`` of the move lets it go on whole
    (:meth:`RuleSystem.failure_share`; None: it stops before the cell that asked)."""
    return share is not None and share >= 1
