"""The turn loop (:class:`Simulation`)."""

from __future__ import annotations

import json
from dataclasses import dataclass, field, replace
from fractions import Fraction
from typing import Any, Literal

from engine import policies
from engine.dice import Dice
from engine.flight.model import FlightRules
from engine.grid import Cell
from engine.mapmodel import MapModel
from engine.occupancy import Occupancy, reach_cell
from engine.scenario import Scenario, TokenSpec
from engine.sim.cache import FieldCache
from engine.sim.crossing import mode_at
from engine.sim.edits import TokenEdits, on_the_map
from engine.sim.fields import Profile, Walk
from engine.sim.flight import choose, fly_turn, rules_for, start_flight
from engine.sim.idmemo import MISSING
from engine.sim.paceturn import SolveTurns
from engine.sim.plans import PlanPlay
from engine.sim.view import SimView, low_enough
from engine.sim.walking import EventSink, StatsKeys, Walker
from engine.sim.ways import occupancy_of, start_key, way_key
from engine.systems.base import Token, jsonable
from engine.walls import doors_of


@dataclass
class RunResult:
    run: int
    seed: int
    outcome: str  # capture | escape | timeout
    turns: int
    cell: Cell | None = None
    by: str | None = None
    events: int = 0

    def to_dict(self) -> dict[str, Any]:
        return {
            "run": self.run,
            "seed": self.seed,
            "outcome": self.outcome,
            "turns": self.turns,
            "cell": list(self.cell) if self.cell else None,
            "by": self.by,
            "events": self.events,
        }


@dataclass
class Snapshot:
    tokens: dict[str, Token]
    turn: int
    outcome: str | None
    n_events: int
    dice_state: Any
    waypoint: dict[str, int] = field(default_factory=dict)
    #: The tokens' specs and the turn order (the GM adds, removes and reorders tokens).
    specs: dict[str, TokenSpec] | None = None
    order: list[str] | None = None
    #: Doors opened or closed in play (door id -> open), beside the map as drawn.
    doors: dict[int, bool] | None = None


class Simulation(TokenEdits, PlanPlay):
    """One seeded run of a scenario, turn by turn, with an event log.

    >>> from engine.scenario import load_scenario  # doctest: +SKIP
    >>> sim = Simulation(load_scenario("scenarios/chase.yaml"), seed=1)  # doctest: +SKIP
    >>> sim.run().outcome  # doctest: +SKIP
    'capture'
    """

    def __init__(
        self,
        scenario: Scenario,
        seed: int,
        *,
        fields: FieldCache | None = None,
        run: int = 0,
        record: bool | Literal["count"] = True,
    ) -> None:
        self.scenario = scenario
        self.system = scenario.system
        self.seed = seed
        self.run_index = run
        self.dice = Dice(seed)
        self.fields = fields or FieldCache(scenario)
        #: ``record``: True keeps the event log (``events``); "count" only counts the
        #: events the log would hold (a batch's records carry the number, not the log);
        #: False neither. A run without the log keeps no notes either (RuleSystem.notes:
        #: what the system keeps for the table and no rule reads, dropped as each turn
        #: closes: :meth:`_close_turn`).
        self.sink = EventSink(record)
        self._stats_key = StatsKeys(self.fields)
        self.walker = Walker(self.system, self.fields, self.dice, self.sink, self._stats_key)
        self.dry_turns = SolveTurns  # the solve's turns walked (engine.sim.view.solve_run)
        self.turn = 0
        self.outcome: str | None = None
        self.result_cell: Cell | None = None
        self.result_by: str | None = None
        self.specs = {t.id: t for t in scenario.tokens}
        self.order = [t.id for t in scenario.tokens]
        self.tokens: dict[str, Token] = {}
        self.waypoint: dict[str, int] = {}
        #: Doors opened or closed in play (door id -> open); the map as drawn elsewhere.
        self.doors: dict[int, bool] = {}
        #: Each token's last profile at its scenario pace (:meth:`profile_now`).
        self._now: dict[str, tuple[Token, TokenSpec, Any, Profile]] = {}
        #: Whether the last start of a turn (:meth:`_turn_start`) is one kept in the cache.
        self._kept_start = False
        for spec in scenario.tokens:
            on_the_map(scenario.model, spec.id, spec.cell, str(scenario.path or ""))
            self.tokens[spec.id] = self.fields.start_token(spec, lambda s: self._start_token(s))
        self.pursuers: list[str] = []
        self.quarries: list[str] = []
        self._sides()
        if self.sink.counting:
            self.sink.counted += 1
        elif self.record:
            self._emit(
                {
                    "type": "start",
                    **self.fields.sources(),
                    "seed": seed,
                    "run": run,
                    "system": self.system.name,
                    "tokens": {
                        tid: self.fields.hooks.state_dict(self.tokens[tid].state)
                        for tid in self.order
                    },
                }
            )

    def _start_token(self, spec: TokenSpec) -> Token:
        """A token of the scenario as a run starts it."""
        tok = self.system.token(spec.stats, token_id=spec.id)
        state = replace(
            tok.state, cell=spec.cell, conditions=tok.state.conditions | set(spec.conditions)
        )
        if spec.cell is not None:  # on the map: checked as the run is built
            state = state.changed(mode=mode_at(self.scenario.model, spec.cell))
        rules = self.flight_rules(tok)
        if rules is not None:
            state = replace(state, flight=start_flight(rules, spec))
            if not state.flight.landed:
                state = state.changed(mode="air")
        return replace(tok, state=state)

    # ----------------------------------------------------------------- events

    def _emit(self, event: dict[str, Any]) -> None:
        self.sink.emit(event)

    @property
    def events(self) -> list[dict[str, Any]]:
        """The event log (empty for a run that keeps none)."""
        return self.sink.events

    @property
    def record(self) -> bool:
        """Whether the run keeps its event log."""
        return self.sink.record

    @property
    def n_events(self) -> int:
        """The events of the run so far: those logged, or (``record="count"``) counted."""
        return self.sink.n_events

    def snapshot(self) -> Snapshot:
        """Everything needed to undo to this point or fork from it."""
        return Snapshot(
            dict(self.tokens),
            self.turn,
            self.outcome,
            self.n_events,
            self.dice.getstate(),
            dict(self.waypoint),
            dict(self.specs),
            list(self.order),
            dict(self.doors),
        )

    def restore(self, snap: Snapshot) -> None:
        self.tokens = dict(snap.tokens)
        self.turn = snap.turn
        self.outcome = snap.outcome
        self.sink.back_to(snap.n_events)
        self.dice.setstate(snap.dice_state)
        self.waypoint = dict(snap.waypoint)
        self.doors = dict(snap.doors or {})
        if snap.specs is not None and snap.order is not None:
            self.specs = dict(snap.specs)
            self.order = list(snap.order)
            self._sides()

    # ----------------------------------------------------------------- the GM's edits

    def _sides(self) -> None:
        """Pursuers and quarries from the specs in turn order (after the GM's edits)."""
        specs = [self.specs[t] for t in self.order]
        self.pursuers = [t.id for t in specs if t.side == "pursuer" or policies.get(t.policy).hunts]
        self.quarries = [t.id for t in specs if t.side == "quarry" or policies.get(t.policy).flees]

    def door_key(self) -> tuple[tuple[int, bool], ...]:
        """The doors set in play that differ from the map as drawn, sorted (a cache key)."""
        if not self.doors:
            return ()
        drawn = {w.id: w.open for w in doors_of(self.scenario.model)}
        return tuple(sorted((d, o) for d, o in self.doors.items() if drawn.get(d) != o))

    @property
    def model(self) -> MapModel:
        """The map as it stands now: the scenario's, with the doors set in play."""
        return self.fields.model_for(self.door_key())

    def set_door(self, door: int, is_open: bool) -> None:
        """Open or close a door of the map (MAP-FORMAT.md objects); event ``door``.

        Paths, reach and policies see the door from then on; undo restores it."""
        found = next((w for w in doors_of(self.scenario.model) if w.id == door), None)
        if found is None:
            known = ", ".join(str(w.id) for w in doors_of(self.scenario.model)) or "none"
            raise ValueError(f"door {door}: no such door on this map (its doors: {known})")
        self.doors[door] = bool(is_open)
        self._emit({"type": "door", "door": door, "name": found.name, "open": bool(is_open)})

    def door_open(self, door: int) -> bool:
        """Whether door ``door`` stands open now."""
        for w in self.model.walls:
            if w.id == door:
                return w.open
        raise ValueError(f"door {door}: no such door on this map")

    def set_order(self, order: list[str], why: str = "reorder") -> None:
        """A new turn order (the same tokens); event ``order``."""
        if sorted(order) != sorted(self.order):
            raise ValueError("a turn order must list every token once")
        self.order = list(order)
        self._sides()
        self._emit({"type": "order", "order": list(order), "why": why})

    # ----------------------------------------------------------------- running

    def run(self) -> RunResult:
        while self.outcome is None:
            self.play_turn()
        return self.result()

    def result(self) -> RunResult:
        return RunResult(
            run=self.run_index,
            seed=self.seed,
            outcome=self.outcome or "running",
            turns=self.turn,
            cell=self.result_cell,
            by=self.result_by,
            events=self.n_events,
        )

    def play_turn(self, moves: dict[str, list[Cell]] | None = None) -> None:
        """One round: every token in order takes its turn (``moves`` for human tokens)."""
        if self.outcome is not None:
            return
        self.begin_turn()
        for tid in self.order:
            self.take_turn(tid, moves.get(tid) if moves else None)
            if self.outcome is not None:
                break
        self.end_round()

    def begin_turn(self) -> None:
        """Start the next round (the viewer calls this, then moves tokens one by one)."""
        self.turn += 1
        self._emit({"type": "turn", "turn": self.turn})

    def end_round(self) -> None:
        """Close the round: the turn limit ends the run in a timeout."""
        if self.outcome is None and self.turn >= self.scenario.turns:
            self._finish("timeout", None, None)

    def take_turn(self, tid: str, path: list[Cell] | None = None) -> None:
        fields = self.fields
        if fields.weight.used > fields.FIELD_BYTES:  # (FieldCache.trim's own test, first)
            fields.trim(t.state.cell for t in self.tokens.values())
        spec = self.specs[tid]
        if path is None:
            start = self._turn_start(tid, spec)
            self._tell_held(tid, start[0])
            if self._kept_start and not self.record:
                plan = self.fields.plans.one(start, None, MISSING)
                if plan is MISSING:
                    plan = self.fields.plan_by_reads(tid, start, self._plan_of)
                if plan is not None:
                    self._play_plan(tid, start, plan)
                    return
            token, pace, per_turn, prof, way = start
        else:
            token, pace, per_turn, prof = self._begin(tid, spec)
            way = None
            if self._tell_held(tid, token):
                path = None  # it may not move this turn (RuleSystem.held)
        self.walker.defer = [] if per_turn else None
        before = token.state.cell
        flight = self.flight_rules(token) if token.state.flight is not None else None
        if path is not None:
            ways = _Ways(self, tid, spec, pace)
            token = self.walker.walk_path(
                tid, token, prof, path, self.occupancy_of(tid), ways.profile
            )
        elif flight is not None:
            token = self._fly(tid, token, flight)
        elif way is not None:
            token = self.walker.walk_down(tid, token, *way, _Ways(self, tid, spec, pace))
        moved = None if flight is not None else token.state.cell != before
        self._end_turn(tid, token, pace, moved)

    def _tell_held(self, tid: str, token: Token) -> bool:
        """Whether the rules hold ``tid`` this turn (:meth:`RuleSystem.held`: it does not
        move); event ``held`` with why."""
        if token.state.flight is not None:
            return False
        why = self.system.held(token)
        if why is None:
            return False
        if self.record:
            self.events.append({"type": "held", "token": tid, "why": why})
        elif self.sink.counting:
            self.sink.counted += 1
        return True

    def _end_turn(self, tid: str, token: Token, pace: str, moved: bool | None) -> Token:
        """The system's end of ``tid``'s turn (``moved``: whether it left its cell; None for
        a flier), the token kept one object per value, its state logged, the goals checked;
        returns the token as it ends the turn."""
        return self._close_turn(tid, self._ended(tid, token, pace, moved))

    def _close_turn(self, tid: str, token: Token) -> Token:
        """``token`` as ``tid`` ends its turn: kept one object per value (a turn that rolled
        made a new one: the next turns of every token start from what is kept for these
        tokens, :meth:`_turn_start`), its state logged, the goals checked. A run that keeps
        no log keeps no notes either (RuleSystem.notes: no rule reads them): it plays on
        from the token less them, so the turns that follow are those learned for it."""
        token = self.fields.hooks.canon(token)
        if not self.record and self.fields.notes:
            token = self.fields.less_notes(token)
        self.tokens[tid] = token
        if self.record:
            state = self.fields.hooks.state_dict(token.state)
            self.events.append({"type": "state", "token": tid, "state": state})
        elif self.sink.counting:
            self.sink.counted += 1
        self._check_goals(tid)
        return token

    def _ended(self, tid: str, token: Token, pace: str, moved: bool | None) -> Token:
        """:meth:`RuleSystem.paced` (where the token walked) and :meth:`RuleSystem.end_turn`
        on ``token``: kept for this very token where they roll nothing."""
        system = self.system
        hooks = self.fields.hooks
        skey = self._stats_key(token)
        key = self._end_key(tid, token, pace, moved)
        got = hooks.same(key, token)
        if got is not None:  # the end of this turn kept for this very token: no roll in it
            return got[1]

        def end(tok: Token, dice: Any) -> Token:
            if moved is not None:
                tok = system.paced(tok, pace, moved)
            return system.end_turn(tok, dice)

        def rolls(tok: Token, dice: Any) -> Token:
            # The end of a turn that rolls (D6: collision damage): the pace remembered
            # is still kept; the end of the turn is made.
            if moved is not None:
                tok = hooks.token(
                    ("paced", tid, skey, pace, moved),
                    tok,
                    lambda t: system.paced(t, pace, moved),
                )
            return system.end_turn(tok, dice)

        token = hooks.token(key, token, end, self.dice, rolls)
        self.walker.log_rolls(tid)
        return token

    def _end_key(self, tid: str, token: Token, pace: str, moved: bool | None) -> tuple[Any, ...]:
        """What :meth:`_ended` keeps the end of a turn by (with the very token)."""
        return ("end", tid, self._stats_key(token), pace, moved)

    def _begin(self, tid: str, spec: TokenSpec) -> tuple[Token, str, bool, Profile]:
        """The start of ``tid``'s turn: its token after the system's start of a turn, the
        pace this turn may use on the way to the chosen one (D6: two speed levels a round;
        the token remembers it: its state, logged at the end of the turn), whether the
        system rolls once a turn, and the profile it moves on. The token's acts (its spec's
        ``acts``: actions besides moving, every turn) are taken as the turn starts
        (:meth:`RuleSystem.with_acts`); a pace its spec does not name is the fastest they
        leave (:meth:`RuleSystem.act_pace`). Pure hooks, kept as one."""
        system = self.system
        token = self.tokens[tid]
        skey = self._stats_key(token)
        chosen = spec.pace or system.default_pace
        acts = spec.acts

        def begin(tok: Token, dice: Any) -> tuple[Token, str, bool]:
            tok = system.start_turn(tok, dice)
            if acts:
                tok = system.with_acts(tok, acts)
            pace = system.turn_pace(tok, system.act_pace(tok, chosen) if acts else chosen)
            return tok, pace, system.turn_checks(tok, [], pace) is not None

        token, pace, per_turn = self.fields.hooks.token(
            ("begin", tid, skey, chosen, acts), token, begin, self.dice
        )
        self.walker.log_rolls(tid)
        prof = self.fields.profile(token, pace, spec.size, self.door_key(), skey)
        return token, pace, per_turn, prof

    def _turn_start(
        self, tid: str, spec: TokenSpec
    ) -> tuple[Token, str, bool, Profile, tuple[Profile, Walk, int] | None]:
        """:meth:`_begin` and the way the token's policy takes this turn (:meth:`_ground_way`;
        None for a flier or where it stays), before anything is rolled.

        All of it is a pure function of the token itself, the other tokens' cells and
        profiles (:meth:`_way_key`: what the policies and the way read of them), the specs
        and the doors, wherever the start of the turn rolled nothing and the way is kept:
        kept in the field cache by those (``starts_by_reads``), and by every token as it
        stands, by identity (``starts``: one lookup, no profile asked, for a turn whose
        tokens were all seen together before)."""
        self._kept_start = False
        if policies.get(spec.policy).reads is None:
            return self._turn_start_made(tid, spec)
        fields = self.fields
        order, tokens, specs = self.order, self.tokens, self.specs
        plain = (tid, self.door_key(), self.turn if self.scenario.solve == "auto" else 0)
        objects = (*map(tokens.get, order), *map(specs.__getitem__, order))
        got = fields.starts.get(objects, plain)
        if got is not None:
            self._kept_start = True
            return got
        kept: dict[str, Any] = {}  # what the key and the way read of each token
        by_reads = start_key(self, tid, kept)
        if by_reads is not None:
            read, read_objects = by_reads
            start = fields.starts_by_reads.get(read_objects, read)
            if start is None:
                start = self._turn_start_made(tid, spec, kept)
                if not self._start_kept(tid, spec, start):
                    return start
                fields.starts_by_reads.put(read_objects, read, start)
            fields.starts.put(objects, plain, start)
            self._kept_start = True
            return start
        return self._turn_start_made(tid, spec)

    def _turn_start_made(
        self, tid: str, spec: TokenSpec, kept: dict[str, Any] | None = None
    ) -> tuple[Token, str, bool, Profile, tuple[Profile, Walk, int] | None]:
        """:meth:`_turn_start` worked out (``kept``: what its key read of each token)."""
        token, pace, per_turn, prof = self._begin(tid, spec)
        if token.state.flight is not None or self.system.held(token) is not None:
            return token, pace, per_turn, prof, None
        way = self._ground_way(tid, spec, token, prof, per_turn, kept)
        return token, pace, per_turn, prof, way

    def _start_kept(self, tid: str, spec: TokenSpec, start: tuple[Any, ...]) -> bool:
        """Whether :meth:`_turn_start` keeps ``start``: no profile with tokens taken away in
        its way (those are not kept), and the token kept one object per value
        (:meth:`HookMemo.canon`: another token of its value is then the same object, so the
        start serves it) with the start of its turn kept as a pure result of it (it rolled
        nothing)."""
        way, prof = start[4], start[3]
        if way is not None and way[0] is not prof:
            return False
        hooks = self.fields.hooks
        token = self.tokens[tid]
        if not hooks.is_canon(token):
            return False
        chosen = spec.pace or self.system.default_pace
        key = ("begin", tid, self._stats_key(token), chosen, spec.acts)
        return hooks.same(key, token) is not None

    # ----------------------------------------------------------------- policies

    def _ground_way(
        self,
        tid: str,
        spec: TokenSpec,
        token: Token,
        prof: Profile,
        per_turn: bool,
        kept: dict[str, Any] | None = None,
    ) -> tuple[Profile, Walk, int] | None:
        """The way a ground token's policy takes this turn, before anything is rolled: the
        profile walked, its walk and how many edges of it (:meth:`_descent`), or None (it
        stays). Kept in the field cache (``ways``) by all that the policy and the way
        read (:meth:`_way_key`; ``kept``: what the start's key read of each token)."""
        keyed = way_key(self, tid, spec, prof, per_turn, kept)
        if keyed is None:
            return self._find_way(tid, spec, token, prof)
        plain, objects = keyed
        ways = self.fields.ways
        got = ways.get(objects, plain, MISSING)
        if got is not MISSING:
            return got
        way = self._find_way(tid, spec, token, prof)
        # A way with tokens taken away from the field (a profile of its own) is not kept.
        if way is None or way[0] is prof:
            ways.put(objects, plain, way)
        return way

    def _find_way(
        self, tid: str, spec: TokenSpec, token: Token, prof: Profile
    ) -> tuple[Profile, Walk, int] | None:
        """:meth:`_ground_way` worked out: the policy's goal, then the way down to it."""
        occ = self.occupancy_of(tid)
        goal = policies.get(spec.policy).goal(SimView(self, tid, token, prof, occ), spec, token)
        if goal.progress is not None:
            self.waypoint[tid] = goal.progress
        if not goal.cells:
            return None
        cell = token.state.cell
        assert cell is not None
        return self.fields.descent(prof, goal.cells, goal.risk, cell, occ)

    def pace_of(self, tid: str) -> str:
        """The pace ``tid`` moves at when its turn comes, as :meth:`_begin` chooses it: its
        spec's, else the system's default, as far as its acts leave
        (:meth:`RuleSystem.act_pace`). The viewer's hover plans at it, so that a click goes
        where the hover said."""
        spec, system = self.specs[tid], self.system
        chosen = spec.pace or system.default_pace
        if not spec.acts:
            return chosen
        return system.act_pace(system.with_acts(self.tokens[tid], tuple(spec.acts)), chosen)

    def _replan(
        self,
        tid: str,
        spec: TokenSpec,
        pace: str,
        token: Token,
        prof: Profile | None,
        used: Fraction,
        until: Fraction | None,
    ) -> tuple[Profile, Walk, int] | None:
        """The rest of ``tid``'s turn for ``token``, whose rates changed on the way
        (:data:`~engine.sim.walking.Replan`): its policy's way on its new profile, cut to
        the time left of the turn (or up to ``until``); None where its profile is still
        ``prof``."""
        new = self._profile_for(token, spec, pace)
        if new is prof:
            return None
        way = self._find_way(tid, spec, token, new)
        if way is None:
            return new, Walk(new, []), 0
        new, walk, k = way
        left = float((min(until or 1, 1) - used) * new.graph.denominator) + 1e-9
        while k and walk.spent[k - 1] > left:
            k -= 1
        return new, walk, k

    def _profile_for(self, token: Token, spec: TokenSpec, pace: str) -> Profile:
        """The profile ``token`` moves on at ``pace`` (its spec's size, the doors now)."""
        return self.fields.profile(token, pace, spec.size, self.door_key(), self._stats_key(token))

    def profile_now(self, tid: str, doors: tuple[tuple[int, bool], ...] | None = None) -> Profile:
        """The profile of token ``tid`` as it stands now, at its scenario pace, on the map
        with ``doors`` (default: as they are in play)."""
        tok, spec = self.tokens[tid], self.specs[tid]
        if doors is None:
            doors = self.door_key()
        # The last answer per token, while the token, its spec and the doors are the same
        # objects (tokens are frozen): the other tokens' profiles are asked every turn.
        got = self._now.get(tid)
        if got is not None and got[0] is tok and got[1] is spec and got[2] == doors:
            return got[3]
        pace = spec.pace or self.system.default_pace
        if spec.acts:  # a pace not named: the fastest its acts leave (RuleSystem.act_pace)
            pace = self.system.act_pace(tok, pace)
        prof = self.fields.profile(tok, pace, spec.size, doors, self._stats_key(tok))
        self._now[tid] = (tok, spec, doors, prof)
        return prof

    def occupancy_of(self, tid: str) -> Occupancy:
        """What the other tokens take away from ``tid`` this turn (:func:`engine.sim.ways.occupancy_of`)."""
        return occupancy_of(self, tid)

    def flight_rules(self, token: Token) -> FlightRules | None:
        """The token's flight rules on the scenario's map (kept in the field cache: shared by
        every run of a batch), or None when it does not fly with momentum."""
        return rules_for(self.fields.flight, self.system, self.scenario.model, token)

    def _fly(self, tid: str, token: Token, rules: FlightRules) -> Token:
        """One flight turn for ``tid``: its policy's choice flown by the rules, as an event."""
        state = token.state.flight
        assert state is not None
        spec = self.specs[tid]
        policy = policies.get(spec.policy)
        view = SimView(self, tid, token)
        cap_alt = self.scenario.capture_altitude
        choice = choose(view, policy, spec, token, rules, state, cap_alt)
        if choice is None:
            return token
        rec, token, choice = fly_turn(self.system, rules, token, state, choice, self.dice)
        self.walker.log_rolls(tid)  # a dive's falling roll, before the flight it decided
        new = rec.state
        self._emit(
            {
                "type": "flight",
                "token": tid,
                "turn": self.turn,
                "choice": choice.to_dict(),
                "actions": list(rec.actions),
                "speed": rec.speed,
                "path": [list(state.cell)] + [list(c) for c in rec.cells],
                "events": jsonable([e for e in rec.events if e.get("event") != "choice"]),
                "state": new.to_dict(),
            }
        )
        progress = policy.flown(view, spec, (state.cell, *rec.cells))
        if progress is not None:
            self.waypoint[tid] = progress
        mode = mode_at(self.model, new.cell) if new.landed else "air"  # RULES.md 0: air
        return token.moved(cell=new.cell, flight=new, mode=mode)

    # ----------------------------------------------------------------- goals

    def _check_goals(self, moved: str) -> None:
        """A capture where a pursuer ends within ``capture`` steps of a quarry, both low
        enough, each where it is reached (:func:`reach_cell`: a climber partway up at the
        cell it climbs to, docs/rules.md "Climbers in play"); an escape where a quarry
        stands on an exit."""
        scenario = self.scenario
        tokens, specs, gap = self.tokens, self.specs, self.fields.gap
        capture, altitude = scenario.capture, scenario.capture_altitude
        for q in self.quarries:
            qtok = tokens[q]
            qst = qtok.state
            qc = qst.cell if qst.toward is None else reach_cell(qtok)
            if qc is not None:
                q_low = qst.flight is None or low_enough(qtok, altitude)
                q_size = specs[q].size
                for p in self.pursuers:
                    ptok = tokens[p]
                    pst = ptok.state
                    pc = pst.cell if pst.toward is None else reach_cell(ptok)
                    if (
                        pc is not None
                        and gap(pc, specs[p].size, qc, q_size) <= capture
                        and q_low
                        and (pst.flight is None or low_enough(ptok, altitude))
                    ):
                        self._finish("capture", qc, p)
                        return
            if qst.cell in scenario.exit_cells:
                self._finish("escape", qst.cell, q)
                return

    def _finish(self, outcome: str, cell: Cell | None, by: str | None) -> None:
        self.outcome = outcome
        self.result_cell = cell
        self.result_by = by
        self._emit(
            {
                "type": "end",
                "outcome": outcome,
                "turn": self.turn,
                "cell": list(cell) if cell else None,
                "by": by,
            }
        )

    # ----------------------------------------------------------------- logs

    def final_states(self) -> dict[str, dict[str, Any]]:
        return {tid: self.tokens[tid].state.to_dict() for tid in self.order}

    def write_log(self, path: str, label: str | None = "log") -> None:
        """The event log as JSON lines, written whole or not at all (:mod:`engine.safeio`):
        a special file or a link is refused, a full disk leaves no half file. An error names
        the path as the argument ``label`` (a role: engine.errors)."""
        from engine.safeio import write_text

        write_text(
            path, "".join(json.dumps(ev, separators=(",", ":")) + "\n" for ev in self.events), label
        )


class _Ways:
    """The rest of one token's turn where its rates change on the way
    (:class:`~engine.sim.walking.Replan`)."""

    __slots__ = ("sim", "tid", "spec", "pace")

    def __init__(self, sim: Simulation, tid: str, spec: TokenSpec, pace: str) -> None:
        self.sim, self.tid, self.spec, self.pace = sim, tid, spec, pace

    def __call__(
        self, token: Token, prof: Profile | None, used: Fraction, until: Fraction | None
    ) -> tuple[Profile, Walk, int] | None:
        return self.sim._replan(self.tid, self.spec, self.pace, token, prof, used, until)

    def profile(self, token: Token) -> Profile:
        return self.sim._profile_for(token, self.spec, self.pace)
