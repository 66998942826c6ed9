"""Walking a turn's way: cells entered, checks rolled and applied, moves logged.

A :class:`Walker` walks one token at a time for the run that owns it, rolling on that
run's dice and writing to its :class:`EventSink`.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from fractions import Fraction
from typing import Any, Literal

from engine.checks import Check, CheckResult
from engine.dice import Dice, RollEvent
from engine.grid import Cell
from engine.movement import MovementGraph
from engine.occupancy import Occupancy
from engine.sim.cache import FieldCache
from engine.sim.crossing import (
    PathWays,
    Replan,
    edge_turns,
    hop_ticks,
    kept_share,
    mode_at,
    walk_of,
)
from engine.sim.fields import Profile, Walk
from engine.sim.ways import NOBODY
from engine.systems.base import CellCheck, RuleSystem, Token, jsonable


class EventSink:
    """Where a run's events go. ``record``: True keeps the event log (``events``); "count"
    only counts the events the log would hold (a batch's records carry the number, not the
    log); False neither."""

    def __init__(self, record: bool | Literal["count"] = True) -> None:
        self.counting = record == "count"
        self.record = bool(record) and not self.counting
        self.events: list[dict[str, Any]] = []
        self.counted = 0

    def emit(self, event: dict[str, Any]) -> None:
        if self.record:
            self.events.append(event)
        elif self.counting:
            self.counted += 1

    @property
    def n_events(self) -> int:
        """The events of the run so far: those logged, or counted."""
        return len(self.events) + self.counted

    def back_to(self, n_events: int) -> None:
        """Forget the events after the first ``n_events`` (undo)."""
        del self.events[n_events:]
        if self.counting:
            self.counted = n_events


class StatsKeys:
    """:meth:`FieldCache.stats_id` of a token's stats, kept per token id while its stats
    stay the same object."""

    def __init__(self, fields: FieldCache) -> None:
        self._fields = fields
        self._kept: dict[str, tuple[Any, int]] = {}

    def __call__(self, token: Token) -> int:
        got = self._kept.get(token.id)
        if got is None or got[0] is not token.stats:
            got = self._kept[token.id] = (token.stats, self._fields.stats_id(token.stats))
        return got[1]


class Walker:
    """The moves of one run's tokens: ``system``'s rules on ``fields``' graphs, rolled on
    ``dice``, logged to ``sink``; ``stats_key`` names a token's stats in the field cache."""

    def __init__(
        self,
        system: RuleSystem,
        fields: FieldCache,
        dice: Dice,
        sink: EventSink,
        stats_key: StatsKeys,
    ) -> None:
        self.system = system
        self.fields = fields
        self.dice = dice
        self.sink = sink
        self.stats_key = stats_key
        #: This turn's cells entered, ``(node, ticks spent)``, while a system that rolls
        #: once a turn at the hardest cell (D6's round: :meth:`RuleSystem.turn_checks`)
        #: waits to roll until the move is known (:meth:`_roll_turn`); None otherwise.
        self.defer: list[tuple[int, float]] | None = None
        #: The turns spent before this leg of the move (:meth:`_walk_legs`).
        self.offset = Fraction(0)
        self._spent = 0.0

    def walk_down(
        self,
        tid: str,
        token: Token,
        prof: Profile,
        walk: Walk,
        k: int,
        replan: Replan | None = None,
    ) -> Token:
        """A ground move along its way (:func:`~engine.sim.cache._descent_made`): the first ``k`` edges of
        ``walk`` on ``prof``, rolling on the way. Where a check's result changes the token's
        rates (:meth:`RuleSystem.goes_on`: a Whisperspace swimmer's penalty or bonus for the
        rest of the Move action), ``replan`` gives the rest of the turn's way from where it
        stands, on the profile of what it has become."""
        cell = token.state.cell
        assert cell is not None
        g = prof.graph
        plan = walk.edges if k == len(walk.edges) else walk.edges[:k]
        after = walk.after if k == len(walk.edges) else None
        token = self.setting_out(token, prof, walk, k)
        if (
            not walk.jumps
            and after is None
            and (
                (self.defer is not None and not self.defer)
                or (self.defer is None and not walk.checks)
            )
        ):
            # One roll a turn, rolled once the move is known, or no cell of the way that asks
            # a check: walking enters every cell of the plan (what the loop below does, read
            # off the kept walk).
            entries, walked, rolled = walk.upto(k)
            if self.defer is not None:
                self.defer.extend(entries)
            path = [cell, *walked]
            spent = walk.spent[k - 1] if k else 0.0
            return self.moved(tid, token, path, spent, g, rolled)
        mv = _Move(self, token, prof)
        while True:
            after = self._walk_legs(tid, mv, plan, after, replan)
            if after is None or replan is None or not self._long_step(tid, mv, after, replan):
                break
            # Across a cell of more than a turn: the rest of the turn goes on from there.
            used = mv.used()
            if used >= 1:
                break
            way = replan(mv.here(), None, used, None)
            if way is None:
                break
            walk, k = way[1], way[2]
            mv.next_leg(way[0], mv.here(), used)
            plan, after = walk.edges[:k], walk.after if k == len(walk.edges) else None
        self.offset = Fraction(0)
        token, g = mv.token, mv.prof.graph
        if mv.legs == 1:
            return self.moved(tid, token, mv.path, mv.spent, g)
        return self.moved_in(tid, token, mv.path, mv.used(), g)

    @staticmethod
    def setting_out(token: Token, prof: Profile, walk: Walk, k: int) -> Token:
        """The token :meth:`walk_down` walks ``walk``'s first ``k`` edges with (a seam: the
        solve's turns with dice, :class:`engine.sim.diceturn.DiceTurns`, key a turn by
        it): one that turns away from a crossing of more than a turn loses what it made of
        it, and stands on its cell in that cell's mode."""
        toward = token.state.toward
        if toward is None:
            return token
        g = prof.graph
        after = walk.after if k == len(walk.edges) else None
        if k or after is None or g.cell_of(after[1]) != toward:
            cell = token.state.cell
            assert cell is not None
            token = token.moved(toward=None, progress=Fraction(0), mode=mode_at(g.model, cell))
        return token

    def _walk_legs(
        self,
        tid: str,
        mv: _Move,
        plan: list[tuple[int, int, float]],
        after: tuple[int, int, float] | None,
        replan: Replan | None,
    ) -> tuple[int, int, float] | None:
        """Walk ``plan``'s edges, rolling on the way, in legs (``mv``: the move so far). A
        check's result that changes the token's profile ends a leg where it stands (the roll
        was made setting out into the next cell: the result prices that cell and what
        follows), and ``replan`` gives the next, up to the end of the move it was rolled in
        (:meth:`RuleSystem.check_period`), where :meth:`RuleSystem.end_move` ends its
        effects and the turn goes on at the token's own rates. Returns the edge the way
        takes after the last leg where it ends there taking more than a turn (``after`` of
        the last leg's walk), else None."""
        until: Fraction | None = None  # where the effects of the last roll end
        while True:
            g = mv.prof.graph
            for node, nxt, w in plan:
                before = mv.token.state
                ok, mv.token, mv.key = self._enter(
                    tid, mv.token, mv.prof, node, nxt, mv.key, mv.spent + w
                )
                mv.path.extend(self._jumped(g, node, nxt, ok))
                if not ok:
                    return None
                if replan is not None and mv.token.state != before and (node, nxt) not in g.jump_at:
                    ends = self._move_ends(mv.token, g, nxt, mv.offset + g.turns(mv.spent + w))
                    way = replan(mv.here(), mv.prof, mv.used(), ends)
                    if way is not None:
                        prof, walk, k = way
                        mv.next_leg(prof, mv.here(), mv.used())
                        plan, until = walk.edges[:k], ends
                        after = walk.after if k == len(walk.edges) and ends is None else None
                        break
                mv.spent += w
                if g.cell_of(nxt) != mv.path[-1]:  # a state change in place (standing) stays
                    mv.path.append(g.cell_of(nxt))
            else:
                plan = []
            if plan:
                continue
            if replan is None or until is None or until >= 1:
                return after
            # The move the last roll was made in is over: its effects end, and the rest of
            # the turn goes on at the token's own rates.
            used, until = max(mv.used(), until), None
            mv.token = self.system.end_move(mv.token)
            way = replan(mv.here(), None, used, None) if used < 1 else None
            if way is None:
                return None
            prof, walk, k = way
            mv.next_leg(prof, mv.here(), used)
            plan, after = walk.edges[:k], walk.after if k == len(walk.edges) else None

    def _long_step(
        self, tid: str, mv: _Move, after: tuple[int, int, float], replan: Replan
    ) -> bool:
        """The rest of the turn at a cell that takes more than a whole turn to cross
        (RULES.md 0): ``state.progress`` its share crossed, ``state.toward`` the cell, kept
        into the next turn; checks as the system counts moves (a climb's turn of rolls for
        :meth:`RuleSystem.climb_odds`). Whether the token got in (``mv`` at the cell)."""
        g = mv.prof.graph
        node, nxt, _ = after
        target = g.cell_of(nxt)
        terrain = g.model.terrain_at(target)
        st = mv.token.state
        # Going on: with the crossing under way, or from a cell of the same stretch (the
        # cell it stands on, not the token's mode: that is the mode of the last crossing
        # this turn, stale once it walked on; RULES.md 0, a new stretch asks its check).
        here = mode_at(g.model, g.cell_of(node))
        going_on = st.toward == target or (st.toward is None and here == terrain.move)
        progress = st.progress if going_on else Fraction(0)
        used = mv.used()
        system = self.system
        odds = self.fields.hooks.get(
            ("climb_odds", tid, self.stats_key(mv.token), terrain, g.pace),
            mv.token,
            lambda tok: system.climb_odds(tok, terrain, g.pace),
        )
        if odds is not None:
            if used > 0 and odds.whole_turns:
                return False  # a turn of climbing starts with the turn
            climber = mv.token.moved(mode=terrain.move, toward=target, progress=progress)
            token, rolls = self.climb_turn(climber, terrain)
            self.log_rolls(tid)
            for roll in rolls:
                self.sink.emit(
                    {"type": "check", "token": tid, "cell": list(target)}
                    | {"what": roll.what, "target": roll.target}
                    | {"degree": roll.degree, "success": roll.success}
                )
            mv.spent, mv.offset = 0.0, Fraction(1)  # the whole turn
            mv.legs += 1
            if token.state.has("falling"):  # back at the foot: the crossing is over
                foot = mode_at(g.model, mv.path[-1])
                mv.token = token.moved(toward=None, progress=Fraction(0), mode=foot)
                return False
            if token.state.progress < 1:
                mv.token = token
                return False
            mv.token = token.moved(toward=None, progress=token.state.progress - 1)
            mv.path.append(target)
            return True
        return self._slow_cell(tid, mv, node, nxt, terrain, progress, going_on, replan)

    def _slow_cell(
        self,
        tid: str,
        mv: _Move,
        node: int,
        nxt: int,
        terrain: Any,
        progress: Fraction,
        going_on: bool,
        replan: Replan,
    ) -> bool:
        """:meth:`_long_step` at a cell crossed at a rate: the time left of the turn goes
        to it, Move action by Move action (a check in each, as the system counts moves:
        :meth:`RuleSystem.check_period`; once per crossing where it counts none)."""
        t = mv.used()
        if t >= 1:
            # No time left to set out on it: the crossing has not begun (nothing made,
            # nothing rolled), so the next turn starts it, with the roll a new run of
            # terrain asks (RULES.md 0, 4: one climbing roll a climb, as it starts).
            return False
        g = mv.prof.graph
        target = g.cell_of(nxt)
        period = self.system.check_period(mv.token, terrain, g.pace)
        check = g.state_costs[g.state_of(nxt)][g.terrain_list()[nxt % g.n]].check
        token = mv.token.moved(mode=terrain.move, toward=target, progress=progress)
        prof = mv.prof
        run = int(g.run_key[nxt % g.n])
        rolls = check is not None and check.check is not None
        while t < 1:
            end = Fraction(1) if period is None else min(Fraction(1), (t // period + 1) * period)
            # One roll per run of terrain and move (as _enter counts them): in each Move
            # action spent on it, or once per crossing where the system counts none.
            key = (run, 0 if period is None else int(t // period) + 1)
            if check is not None and rolls and key != mv.key and (period or not going_on):
                ok, token = self._roll_check(tid, token, check, target)
                mv.key = key
                if not ok:  # a fall, or a stop: no further this turn, the crossing lost
                    token = token.moved(toward=None, progress=Fraction(0))
                    token = self.fields.hooks.moved(
                        token, mv.path[-1], mode_at(g.model, mv.path[-1])
                    )
                    break
                prof = replan.profile(token)
            cost = edge_turns(prof.graph, mv.path[-1], target)
            if cost is None:  # it cannot go on (Immobile for now): the Move action is spent
                t = end
                token = self.system.end_move(token) if period is not None else token
                continue
            need = (1 - token.state.progress) * cost
            if t + need <= end:
                mv.token = token.moved(toward=None, progress=Fraction(0))
                mv.key = key
                mv.path.append(target)
                mv.next_leg(prof, mv.token, t + need)
                return True
            token = token.moved(progress=token.state.progress + (end - t) / cost)
            t = end
            if period is not None:
                token = self.system.end_move(token)
        mv.token = token
        mv.legs += 1
        mv.spent, mv.offset = 0.0, max(t, mv.used())
        return False

    def _move_ends(self, token: Token, g: MovementGraph, nxt: int, at: Fraction) -> Fraction | None:
        """When the move a roll made ``at`` turns into the turn (entering ``nxt``) ends, as
        the system counts moves (:meth:`RuleSystem.check_period`); None: with the turn."""
        terrain = g.model.terrains[g.terrain_list()[nxt % g.n]]
        period = self.system.check_period(token, terrain, g.pace)
        if period is None or period >= 1:
            return None
        return math.ceil(at / period) * period

    @staticmethod
    def _run_key_at(g: MovementGraph, cell: Cell) -> tuple[int, int]:
        """The run a token standing on ``cell`` is in at the start of its turn: a run checked
        once (one climb, one roll) is not checked again when the next turn goes on with it."""
        return (int(g.run_key[g.grid.index(cell)]), 0)

    @staticmethod
    def _jumped(g: MovementGraph, node: int, nxt: int, ok: bool) -> list[Cell]:
        """The cells a jump edge passes before its landing (all of them when it is made; up
        to the first gap cell, where the token falls, when its roll failed; a failed leap
        stops below)."""
        jump = g.jump_at.get((node, nxt)) if g.jump_at else None
        if jump is None:
            return []
        if ok:
            upto = len(jump.parts) - 1
        else:  # into the gap; a failed leap stays below the height
            upto = jump.gap_at + 1 if jump.kind == "gap" else jump.gap_at
        return [g.grid.cell_of_index(part[0]) for part in jump.parts[:upto]]

    def walk_path(
        self,
        tid: str,
        token: Token,
        prof: Profile,
        path: list[Cell],
        occ: Occupancy = NOBODY,
        profile: Callable[[Token], Profile] | None = None,
    ) -> Token:
        """A given path (human moves): walked while the turn's time lasts, up to the first
        token in the way (``occ``), and never to end on an ally's cell; as a policy's way is
        (:meth:`walk_down`): rolling on the way, re-priced where a result changes the
        token's rates (``profile``: the profile of what it has become), a cell of more than
        a turn worked at over turns."""
        blocked: frozenset[Cell] = frozenset()
        if path and occ:
            blocked = occ.blocked - {path[0]}
            if blocked & set(path[1:]):
                prof = self.fields.blocked_profile(prof, blocked)
            if occ.no_stop:
                _, walked, _ = self._walk(tid, token, prof, path, dry=True)
                end = len(walked)
                while end > 1 and path[end - 1] in occ.no_stop:
                    end -= 1
                path = path[:end]
        if not path:
            return token
        if profile is None:
            token, walked, spent = self._walk(tid, token, prof, path)
            return self.moved(tid, token, walked, spent, prof.graph)
        walk = walk_of(prof, path)
        ways = PathWays(profile, path, blocked)
        return self.walk_down(tid, token, prof, walk, len(walk.edges), ways)

    def _walk(
        self, tid: str, token: Token, prof: Profile, path: list[Cell], *, dry: bool = False
    ) -> tuple[Token, list[Cell], float]:
        """Walk ``path`` while the turn's time lasts: the token, the cells walked and the
        ticks spent. ``dry``: no checks (all pass) and no events, to see how far it goes."""
        enter = self._enter if not dry else _enter_dry
        g = prof.graph
        node = g.node(path[0])
        spent = 0.0
        walked = [path[0]]
        key: tuple[int, int] | None = self._run_key_at(g, path[0])
        i = 0
        while i + 1 < len(path):
            i += 1
            cell = path[i]
            jump = g.jump_along(node, path, i)
            if jump is not None:
                # A jump over the gap ahead: one edge, made whole or not at all.
                if spent + jump.ticks > g.denominator + 1e-9 and spent > 0:
                    break
                ok, token, key = enter(tid, token, prof, node, jump.dst, key, spent + jump.ticks)
                walked.extend(self._jumped(g, node, jump.dst, ok))
                if not ok:
                    break
                spent += jump.ticks
                node = jump.dst
                walked.append(g.cell_of(node))
                i += len(jump.parts) - 1
                continue
            # The cheapest way into the next cell, standing up first where the rules need it.
            step = g.step_from(node, cell)
            if step is None:
                break
            hops = [node, *step]
            ws = []
            for a, b in zip(hops, hops[1:], strict=False):
                ws.append(hop_ticks(g, a, b))
            if spent + sum(ws) > g.denominator + 1e-9:
                break
            ok = True
            for a, b, w in zip(hops, hops[1:], ws, strict=False):
                ok, token, key = enter(tid, token, prof, a, b, key, spent + w)
                if not ok:
                    break
                spent += w
                node = b
            if not ok:
                break
            walked.append(cell)
        return token, walked, spent

    def _enter(
        self,
        tid: str,
        token: Token,
        prof: Profile,
        node: int,
        nxt: int,
        key: tuple[int, int] | None,
        spent: float,
    ) -> tuple[bool, Token, tuple[int, int] | None]:
        """Roll the check of a new run of terrain, or of a run in a new move as the system
        counts moves (a Move action: ``spent`` ticks into the turn, this step included); a
        failure keeps the token out."""
        g = prof.graph
        j = nxt % g.n
        if j == node % g.n:
            # A state change in place (standing up): no cell entered, no check (the
            # system's start_turn/end_turn keep the token's conditions in step).
            return True, token, key
        jump = g.jump_at.get((node, nxt)) if g.jump_at else None
        if jump is not None:
            # One jump, one roll (RULES.md 4); a failure falls into the gap.
            if jump.check is not None and jump.check.check is not None:
                gap = g.grid.cell_of_index(jump.parts[jump.gap_at][0])
                result = self.roll(jump.check.check)
                self.log_rolls(tid)
                self.sink.emit(
                    {
                        "type": "check",
                        "token": tid,
                        "cell": list(gap),
                        "what": jump.check.what,
                        "target": jump.check.target,
                        "degree": result.degree,
                        "success": result.success,
                    }
                )
                token = self.apply_check(tid, token, jump.check.what, result.degree)
                if not self.system.goes_on(jump.check, result.degree, result.success):
                    return False, token, key
            return True, token, (int(g.run_key[j]), 0)
        if self.defer is not None:  # one roll a turn: rolled once the move is known
            self.defer.append((nxt, spent))
            return True, token, key
        tid_j = int(g.model.terrain_ids.ravel()[j])
        period = g.check_period[tid_j]
        move = 0 if period is None else math.ceil((self.offset + g.turns(spent)) / period)
        run_key = (int(g.run_key[j]), move)
        cost = g.state_costs[g.state_of(nxt)][tid_j]
        if cost.check is not None and run_key != key and cost.check.check is not None:
            ok, token = self._roll_check(tid, token, cost.check, g.cell_of(nxt))
            if not ok:
                return False, token, run_key
        return True, token, run_key

    def _roll_check(
        self, tid: str, token: Token, check: CellCheck, cell: Cell
    ) -> tuple[bool, Token]:
        """Roll ``check``, asked by ``cell``, log it and apply its result: whether the move
        goes on (:meth:`RuleSystem.goes_on`) and the token after it."""
        result = self.roll(check.check)
        self.log_rolls(tid)
        self.sink.emit(
            {
                "type": "check",
                "token": tid,
                "cell": list(cell),
                "what": check.what,
                "target": check.target,
                "degree": result.degree,
                "success": result.success,
            }
        )
        token = self.apply_check(tid, token, check.what, result.degree)
        ok = result.success or self.system.goes_on(check, result.degree, result.success)
        return ok, token

    def climb_turn(self, climber: Token, terrain: Any) -> tuple[Token, list[Any]]:
        """A turn on a climb priced by :meth:`RuleSystem.climb_odds`, rolled on the run's
        dice (a seam, as :meth:`roll`: the solve's turns with dice take each of its listed
        outcomes in turn)."""
        return self.system.climb_turn(climber, terrain, self.dice)

    def roll(self, check: Check) -> CheckResult:
        """A cell's check or a jump's roll on the run's dice (a seam: the solve's turns with dice,
        :class:`engine.sim.diceturn.DiceTurns`, choose each degree in turn instead)."""
        return check.roll(self.dice)

    def _roll_turn(
        self,
        tid: str,
        token: Token,
        path: list[Cell],
        spent: float,
        g: MovementGraph,
        rolled: tuple[Any, ...] | None = None,
    ) -> tuple[Token, list[Cell], float]:
        """Roll this turn's checks over the cells it entered, as the system counts them once
        a turn (D6: one roll a round, at the hardest cell crossed: RULES.md 3), each at the
        first cell asking it, in path order; a failure keeps the token out of that cell."""
        entries, self.defer = self.defer or [], None
        for at, check in self.turn_rolls(token, g, entries, rolled) if entries else ():
            if check.check is None:
                continue
            result = check.check.roll(self.dice)
            if self.sink.counting:  # the roll's events, counted (:meth:`_log_rolls`)
                log = self.dice.log
                self.sink.counted += len(log)
                log.clear()
            else:
                self.log_rolls(tid)
            if self.sink.record:
                self.sink.events.append(
                    {
                        "type": "check",
                        "token": tid,
                        "cell": list(path[at + 1]),
                        "what": check.what,
                        "target": check.target,
                        "degree": result.degree,
                        "success": result.success,
                    }
                )
            elif self.sink.counting:
                self.sink.counted += 1
            token = self.apply_check(tid, token, check.what, result.degree)
            if not result.success:
                share = self.system.failure_share(check, result.degree)
                if share is None or share < 1:
                    ticks = [t for _, t in entries]
                    whole = self.share_whole(g, ticks[-1])
                    kept = at if share is None else kept_share(ticks, share, whole)
                    return token, path[: kept + 1], entries[kept - 1][1] if kept else 0.0
        return token, path, spent

    def share_whole(self, g: MovementGraph, planned: float) -> float:
        """The ticks a failed roll's share is of (:meth:`RuleSystem.failure_share_of`): the
        move planned, or a whole turn's (its pace's full distance)."""
        if self.system.failure_share_of() == "speed":
            return float(g.denominator)
        return planned

    def apply_check(self, tid: str, token: Token, what: str, degree: str) -> Token:
        """:meth:`RuleSystem.apply_check`, kept by what it reads (:class:`HookMemo`), and by
        the very token (one kept by value: :meth:`HookMemo.canon`), check and degree."""
        fields = self.fields
        got = fields.applied.one(token, (what, degree))
        if got is not None:
            return got
        hooks = fields.hooks
        key = ("apply_check", tid, self.stats_key(token), what, degree)
        apply = self.system.apply_check
        made = hooks.token(key, token, lambda tok: apply(tok, what, degree))
        if hooks.is_canon(token) and token.id == tid:
            fields.applied.put_one(token, (what, degree), made)
        return made

    def turn_rolls(
        self,
        token: Token,
        g: MovementGraph,
        entries: list[tuple[int, float]],
        cells: tuple[Any, ...] | None = None,
    ) -> list[tuple[int, CellCheck]]:
        """This turn's checks (:meth:`RuleSystem.turn_checks` over the cells entered), each
        with the first entry asking it, in roll order. A pure function of the token, the
        cells (``cells``: their ``(terrain id, layer)``, where the caller has them) and their
        layers: kept in the field cache by what it read (:class:`HookMemo`)."""
        fields = self.fields
        quick = None
        if cells is None:
            ids = g.terrain_list()
            n, per = g.n, g.n * g.n_par
            cells = tuple((ids[nxt % n], nxt // per) for nxt, _ in entries)
        elif fields.hooks.is_canon(token):
            # The cells of a kept walk (Walk.upto) and a token kept by value: this very
            # call's result, kept by identity, before any key is hashed.
            quick = (token, g, cells)
            got = fields.rolls_same.get(quick)
            if got is not None:
                return got

        # The checks asked, kept by what they read: the token, and the terrains entered
        # (RuleSystem.turn_checks_by_runs: each run of one terrain once).
        by_runs = self.system.turn_checks_by_runs
        runs = terrain_runs(cells) if by_runs else cells

        def checks(tok: Token) -> list[CellCheck]:
            ids = runs if by_runs else [t for t, _ in cells]
            terrains = [g.model.terrains[t] for t in ids]
            return self.system.turn_checks(tok, terrains, g.pace) or []

        key = ("turn_checks", token.id, self.stats_key(token), g, runs)
        result = placed_checks(g, cells, fields.hooks.get(key, token, checks))
        if quick is not None:
            fields.rolls_same.put(quick, None, result)
        return result

    def moved(
        self,
        tid: str,
        token: Token,
        path: list[Cell],
        spent: float,
        g: MovementGraph,
        rolled: tuple[Any, ...] | None = None,
    ) -> Token:
        if self.defer is not None:
            token, path, spent = self._roll_turn(tid, token, path, spent, g, rolled)
        if len(path) > 1:
            if self.sink.record:
                self.sink.events.append(
                    {
                        "type": "move",
                        "token": tid,
                        "path": [list(c) for c in path],
                        "turns": self.fields.turns_json(g, spent),
                    }
                )
            elif self.sink.counting:
                self.sink.counted += 1
            return self.fields.hooks.moved(
                token, path[-1], mode_at(g.model, token.state.toward or path[-1])
            )
        return self.fields.hooks.moved(token, path[-1])

    def moved_in(
        self, tid: str, token: Token, path: list[Cell], turns: Fraction, g: MovementGraph
    ) -> Token:
        """:meth:`moved` for a move of several legs, ``turns`` spent in all."""
        if len(path) > 1:
            if self.sink.record:
                self.sink.events.append(
                    {
                        "type": "move",
                        "token": tid,
                        "path": [list(c) for c in path],
                        "turns": jsonable(turns),
                    }
                )
            elif self.sink.counting:
                self.sink.counted += 1
            return self.fields.hooks.moved(
                token, path[-1], mode_at(g.model, token.state.toward or path[-1])
            )
        return self.fields.hooks.moved(token, path[-1])

    def log_rolls(self, tid: str) -> None:
        """Move the dice's new roll events into the run's log."""
        new = self.dice.log
        if not new:
            return
        if self.sink.record:
            append = self.sink.events.append
            for ev in new:
                if type(ev) is RollEvent:
                    append(ev.logged(tid))
                else:
                    append({"type": "roll", "token": tid, **ev.to_dict()})
        elif self.sink.counting:
            self.sink.counted += len(new)
        new.clear()


class _Move:
    """A turn's move as :class:`Walker` walks it, leg by leg: the token (on its first cell
    until the move is made), the profile of this leg, the cells walked, the run of terrain
    and move it is in, the ticks of this leg and the turns before it."""

    __slots__ = ("walker", "token", "prof", "path", "key", "spent", "offset", "legs")

    def __init__(self, walker: Walker, token: Token, prof: Profile) -> None:
        cell = token.state.cell
        assert cell is not None
        self.walker = walker
        self.token = token
        self.prof = prof
        self.path = [cell]
        self.key: tuple[int, int] | None = Walker._run_key_at(prof.graph, cell)
        self.spent = 0.0
        self.offset = Fraction(0)
        self.legs = 1
        walker.offset = self.offset

    def used(self) -> Fraction:
        """The turns spent so far."""
        return self.offset + self.prof.graph.turns(self.spent)

    def here(self) -> Token:
        """The token where it stands now, in that cell's mode."""
        cell = self.path[-1]
        return self.walker.fields.hooks.moved(
            self.token, cell, mode_at(self.prof.graph.model, cell)
        )

    def next_leg(self, prof: Profile, token: Token, used: Fraction) -> None:
        """A new leg from ``used`` turns into the turn, on ``prof``."""
        self.prof, self.token = prof, token
        self.spent, self.offset = 0.0, used
        self.legs += 1
        self.walker.offset = used


def _enter_dry(
    tid: str,
    token: Token,
    prof: Profile,
    node: int,
    nxt: int,
    key: tuple[int, int] | None,
    spent: float,
) -> tuple[bool, Token, tuple[int, int] | None]:
    """:meth:`Walker._enter` for a dry walk: every check passes, nothing is rolled."""
    return True, token, key


def terrain_runs(cells: tuple[tuple[int, int], ...]) -> tuple[int, ...]:
    """The terrain ids of ``cells`` (``(terrain id, layer)`` each, in the order entered),
    each run of one terrain entered in a row given once."""
    return tuple(t for k, (t, _) in enumerate(cells) if not k or cells[k - 1][0] != t)


def placed_checks(
    g: MovementGraph, cells: tuple[tuple[int, int], ...], asked: list[CellCheck]
) -> list[tuple[int, CellCheck]]:
    """Each check of ``asked`` with the first entry of ``cells`` whose cost asks it (0
    where none does), in that order (a stable sort: roll order among equals)."""
    costs = g.state_costs

    def asks(k: int, check: CellCheck) -> bool:
        t, layer = cells[k]
        c = costs[layer][t].check
        return c is not None and (c.what, c.target) == (check.what, check.target)

    placed = [(next((k for k in range(len(cells)) if asks(k, c)), 0), c) for c in asked]
    return sorted(placed, key=lambda x: x[0])
