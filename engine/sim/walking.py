"""Walking a turn's way: cells entered, checks rolled and applied, moves logged.

A :class:`Walker` walks one token at a time for the run that owns it, rolling on that
run's dice and writing to its :class:`EventSink`.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from fractions import Fraction
from typing import Any, Literal

from engine.dice import Dice, RollEvent
from engine.grid import Cell
from engine.mapmodel import MapModel
from engine.movement import MovementGraph
from engine.occupancy import Occupancy
from engine.sim.cache import FieldCache
from engine.sim.fields import Profile, Walk
from engine.sim.ways import NOBODY
from engine.systems.base import CellCheck, RuleSystem, Token, jsonable

#: The rest of a turn's way for a token whose rates changed on the way: ``(token where it
#: stands, the profile it walked on, the turns spent, the turn's time where this leg ends
#: or None)`` to its new ``(profile, walk, edges walked)``, or None where its profile is
#: the same (the plan goes on).
Replan = Callable[[Token, Profile, Fraction, "Fraction | None"], "tuple[Profile, Walk, int] | None"]


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
        if not walk.jumps and (
            (self.defer is not None and not self.defer) or (self.defer is None and not walk.checks)
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
        token, path, turns, g = self._walk_legs(tid, token, prof, plan, replan)
        if turns is None:
            return self.moved(tid, token, path, self._spent, g)
        return self.moved_in(tid, token, path, turns, g)

    def _walk_legs(
        self,
        tid: str,
        token: Token,
        prof: Profile,
        plan: list[tuple[int, int, float]],
        replan: Replan | None,
    ) -> tuple[Token, list[Cell], Fraction | None, MovementGraph]:
        """Walk ``plan``'s edges, rolling on the way, in legs. A check's result that changes
        the token's profile ends a leg where it stands (the roll was made setting out into
        the next cell: the result prices that cell and what follows), and ``replan`` gives
        the next, up to the end of the move it was rolled in (:meth:`RuleSystem.
        check_period`), where :meth:`RuleSystem.end_move` ends its effects and the turn goes
        on at the token's own rates. Returns the token (still on its first cell), the cells
        walked, the turns spent where the move took more than one leg (None: one leg,
        ``self._spent`` its ticks) and the last leg's graph."""
        g = prof.graph
        cell = token.state.cell
        assert cell is not None
        path = [cell]
        key: tuple[int, int] | None = self._run_key_at(g, cell)
        spent, offset, legs = 0.0, Fraction(0), 1
        until: Fraction | None = None  # where the effects of the last roll end
        self.offset = offset
        while True:
            for node, nxt, w in plan:
                before = token.state
                ok, token, key = self._enter(tid, token, prof, node, nxt, key, spent + w)
                path.extend(self._jumped(g, node, nxt, ok))
                if not ok:
                    plan, until = [], None
                    break
                if replan is not None and token.state != before and (node, nxt) not in g.jump_at:
                    here = self.fields.hooks.moved(token, path[-1], mode_at(g.model, path[-1]))
                    used = offset + g.turns(spent)
                    ends = self._move_ends(token, g, nxt, offset + g.turns(spent + w))
                    way = replan(here, prof, used, ends)
                    if way is not None:
                        prof, walk, k = way
                        g, token, plan, until = prof.graph, here, walk.edges[:k], ends
                        spent, offset, legs = 0.0, used, legs + 1
                        self.offset = offset
                        break
                spent += w
                if g.cell_of(nxt) != path[-1]:  # a state change in place (standing) stays put
                    path.append(g.cell_of(nxt))
            else:
                plan = []
            if plan:
                continue
            if replan is None or until is None or until >= 1:
                break
            # The move the last roll was made in is over: its effects end, and the rest of
            # the turn goes on at the token's own rates.
            used, until = max(offset + g.turns(spent), until), None
            ended = self.system.end_move(token)
            here = self.fields.hooks.moved(ended, path[-1], mode_at(g.model, path[-1]))
            way = replan(here, prof, used, None) if ended.state != token.state else None
            if way is None:
                break
            prof, walk, k = way
            g, token, plan = prof.graph, here, walk.edges[:k]
            spent, offset, legs = 0.0, used, legs + 1
            self.offset = offset
        self.offset = Fraction(0)
        self._spent = spent
        return token, path, (offset + g.turns(spent)) if legs > 1 else None, g

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
    ) -> Token:
        """A given path (human moves): walked while the turn's time lasts, up to the first
        token in the way (``occ``), and never to end on an ally's cell."""
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
        token, walked, spent = self._walk(tid, token, prof, path)
        return self.moved(tid, token, walked, spent, prof.graph)

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
                ws.append(next(float(t) for v, t in g.neighbours(a) if v == b))
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
                result = jump.check.check.roll(self.dice)
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
                if not result.success:
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
            result = cost.check.check.roll(self.dice)
            self.log_rolls(tid)
            cell = g.cell_of(nxt)
            self.sink.emit(
                {
                    "type": "check",
                    "token": tid,
                    "cell": list(cell),
                    "what": cost.check.what,
                    "target": cost.check.target,
                    "degree": result.degree,
                    "success": result.success,
                }
            )
            token = self.apply_check(tid, token, cost.check.what, result.degree)
            if not result.success and not self.system.goes_on(
                cost.check, result.degree, result.success
            ):
                return False, token, run_key
        return True, token, run_key

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
                    kept = at if share is None else kept_share(ticks, share, ticks[-1])
                    return token, path[: kept + 1], entries[kept - 1][1] if kept else 0.0
        return token, path, spent

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

        def rolls(tok: Token) -> list[tuple[int, CellCheck]]:
            terrains = [g.model.terrains[t] for t, _ in cells]
            asked = self.system.turn_checks(tok, terrains, g.pace) or []

            def asks(k: int, check: CellCheck) -> bool:
                t, layer = cells[k]
                c = g.state_costs[layer][t].check
                return c is not None and (c.what, c.target) == (check.what, check.target)

            placed = [(next((k for k in range(len(cells)) if asks(k, c)), 0), c) for c in asked]
            return sorted(placed, key=lambda x: x[0])

        key = ("turn_checks", token.id, self.stats_key(token), g, cells)
        result = fields.hooks.get(key, token, rolls)
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
            return self.fields.hooks.moved(token, path[-1], mode_at(g.model, path[-1]))
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
            return self.fields.hooks.moved(token, path[-1], mode_at(g.model, path[-1]))
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


def kept_share(ticks: list[float], share: Fraction, total: float) -> int:
    """How many of a move's cells (entered by ``ticks``, in order) a failed roll that still
    makes ``share`` of that move (``total`` ticks) keeps: those entered by then, rounded
    down to whole cells (RuleSystem.failure_share)."""
    limit = float(share) * total + 1e-9
    kept = 0
    while kept < len(ticks) and ticks[kept] <= limit:
        kept += 1
    return kept


def mode_at(model: MapModel, cell: Cell) -> str:
    """The mode of a token standing on ``cell``: its terrain's (walk on a pit's floor)."""
    move = model.terrain_at(cell).move
    return "walk" if move in ("blocked", "gap") else move


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
