"""The turn loop: tokens take turns through their rule system's hooks, every roll and move
is an event, and the event log replays to the identical state.

Over 800 lines: the turn loop, its policies and event-log replay share the token state; the
ground policies are the next split (as sim_flight was).

A :class:`Simulation` is one run of a scenario with one seed. Distance fields live in a
:class:`FieldCache` that is built once per scenario and shared by every run (in a batch,
by every run of a worker process): the map does not change between runs, so neither do
the fields, which is what makes thousands of runs cheap.

Moving: a policy names a target field (distances *to* a target from every node); the token
steps down that field, one cell at a time, while its turn's time lasts. Entering the first
cell of a run of terrain that asks a check rolls it; a failed check applies its effect
(:meth:`RuleSystem.apply_check`) and ends the token's move before that cell.

Tokens in the way (engine.occupancy, the scenario's ``tokens_block``): a move whose way down
the shared field meets a blocking token walks a field with those tokens taken away (a few
such profiles are kept); a move never ends on an ally's cell. A token larger than one cell
moves its anchor on its own sized graph.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field, replace
from fractions import Fraction
from typing import Any

import numpy as np

from engine import sim_flight
from engine.dice import Dice
from engine.errors import TacgridError
from engine.flight.model import state_from_dict
from engine.footprint import covering, fits
from engine.grid import Cell
from engine.mapmodel import MapModel
from engine.movement import MovementGraph
from engine.occupancy import Occupancy, Other, gap_steps, occupancy, token_graph, with_blocked
from engine.scenario import Scenario, TokenSpec
from engine.systems.base import CellCheck, Token, TokenState, exact, jsonable
from engine.walls import doors_of, with_doors

INF = float("inf")
#: No token in the way.
NOBODY = Occupancy()


def _text(value: Any, what: str) -> str:
    if not isinstance(value, str):
        raise ValueError(f"{what} must be text, not {type(value).__name__}")
    return value


def _state_from_dict(d: dict[str, Any]) -> TokenState:
    """A token state from its logged form; values of the wrong kind raise ValueError."""
    conditions = d.get("conditions", ())
    if not isinstance(conditions, list | tuple):
        raise ValueError("conditions must be a list")
    return TokenState(
        cell=(int(d["cell"][0]), int(d["cell"][1])) if d.get("cell") is not None else None,
        mode=_text(d.get("mode", "walk"), "mode"),
        conditions=frozenset(_text(c, "a condition") for c in conditions),
        encumbrance=_text(d.get("encumbrance", "none"), "encumbrance"),
        progress=exact(d.get("progress", 0)),
        counters=tuple(sorted((k, int(v)) for k, v in (d.get("counters") or {}).items())),
        flight=state_from_dict(d["flight"]) if d.get("flight") is not None else None,
    )


# --------------------------------------------------------------------------- fields


class Field:
    """Distances (ticks) from every node to a target, and the best next step per node.

    Next steps are worked out the first time a node asks and kept: fields are shared by
    every run of a batch, so tokens walking the same ground reuse them.
    """

    __slots__ = ("dist", "_hops", "_steps")

    def __init__(self, dist: np.ndarray) -> None:
        self.dist = dist
        self._hops: dict[int, tuple[int, float] | None] = {}
        self._steps = dist.tolist()

    def left(self, node: int) -> float:
        return self._steps[node]

    def step(self, prof: Profile, node: int) -> tuple[int, float] | None:
        """The out-edge ``(node, ticks)`` that goes furthest down the field, or None."""
        hops = self._hops
        if node in hops:
            return hops[node]
        lo, hi = prof.indptr[node], prof.indptr[node + 1]
        best: tuple[int, float] | None = None
        if lo < hi:
            nbrs = prof.indices[lo:hi]
            w = prof.data[lo:hi]
            total = w + self.dist[nbrs]
            k = int(np.argmin(total))
            here = self.dist[node]
            if np.isfinite(total[k]) and total[k] <= here + 1e-9 * max(1.0, here):
                best = (int(nbrs[k]), float(w[k]))
        hops[node] = best
        return best


class Profile:
    """One token profile's graph and the distance fields computed on it (cached)."""

    def __init__(self, graph: MovementGraph) -> None:
        self.graph = graph
        csr = graph.csr()
        self.csr = csr
        self.rev = csr.T.tocsr()
        self.indptr = csr.indptr
        self.indices = csr.indices
        self.data = csr.data
        n = graph.n
        # Risk-weighted reverse graph: entering a check cell costs its expected delay
        # (1 - p) turns more, so fleeing tokens prefer the sure way when it is close.
        penalty = np.zeros(n * graph.n_states)
        for k, cost in enumerate(graph.costs):
            if cost.check is not None:
                cells = np.nonzero(graph.model.terrain_ids.ravel() == k)[0]
                extra = float((1 - cost.check.p_success) * graph.denominator)
                for s in range(graph.n_states):
                    penalty[cells + s * n] = extra
        self.rev_risk = self.rev.copy()
        self.rev_risk.data = self.rev_risk.data + np.repeat(penalty, np.diff(self.rev.indptr))
        self._to: dict[tuple[int, ...], Field] = {}
        self._to_risk: dict[tuple[int, ...], Field] = {}
        self._from: dict[Cell, np.ndarray] = {}

    def field_to(self, cells: tuple[Cell, ...] | frozenset[Cell], *, risk: bool = False) -> Field:
        """Ticks from every node to the nearest of ``cells`` (any parity), cached."""
        from scipy.sparse.csgraph import dijkstra

        g = self.graph
        idx = tuple(sorted(g.grid.index(c) for c in cells))
        cache = self._to_risk if risk else self._to
        got = cache.get(idx)
        if got is None:
            nodes = [i + s * g.n for i in idx for s in range(g.n_states)]
            dist = dijkstra(self.rev_risk if risk else self.rev, indices=nodes, min_only=True)
            got = cache[idx] = Field(dist)
        return got

    def field_from(self, cell: Cell) -> np.ndarray:
        """Ticks from ``cell`` (parity 0) to every cell (best parity), per cell index.

        Cached: a map that does not change gives the same field in every run, so a batch
        soon answers most of these from memory (at most one field per cell).
        """
        got = self._from.get(cell)
        if got is None:
            from scipy.sparse.csgraph import dijkstra

            g = self.graph
            dist = dijkstra(self.csr, indices=g.node(cell))
            got = dist.reshape(g.n_states, g.n).min(axis=0)
            got.setflags(write=False)
            self._from[cell] = got
        return got


def _check_key(check: Any) -> Any:
    """A hashable identity of a cell check (its system check object where hashable)."""
    if check is None:
        return None
    inner = check.check
    try:
        hash(inner)
    except TypeError:
        inner = repr(inner)
    return (check.what, check.target, check.p_success, inner)


class FieldCache:
    """Graphs and fields per token profile, shared across the runs of one scenario."""

    def __init__(self, scenario: Scenario) -> None:
        self.scenario = scenario
        self._profiles: dict[tuple[Any, ...], Profile] = {}
        self._shared: dict[tuple[Any, ...], Profile] = {}
        #: Profiles with other tokens in the way, by (profile, blocked anchors): the few
        #: most recent (tokens move, so these are rarely asked twice for long).
        self._blocked: dict[tuple[Any, ...], Profile] = {}
        #: Fliers' flight rules by stats (engine.sim_flight), shared like the fields.
        self.flight: dict[Any, Any] = {}
        #: The map with doors opened or closed in play, by door state (``Simulation.doors``).
        self._models: dict[tuple[tuple[int, bool], ...], MapModel] = {}

    def model_for(self, doors: tuple[tuple[int, bool], ...] = ()) -> MapModel:
        """The scenario's map with ``doors`` ((door id, open) pairs) set; () = as drawn."""
        if not doors:
            return self.scenario.model
        got = self._models.get(doors)
        if got is None:
            got = self._models[doors] = with_doors(self.scenario.model, dict(doors))
        return got

    #: How many profiles with tokens in the way are kept.
    BLOCKED_KEPT = 64

    def profile(
        self, token: Token, pace: str, size: int = 1, doors: tuple[tuple[int, bool], ...] = ()
    ) -> Profile:
        """The graph and fields of a size-``size`` token (engine.occupancy: its anchors), on
        the map with ``doors`` set (:meth:`model_for`)."""
        # Everything a rule hook may read, except where the token stands: rates and
        # checks can depend on conditions, encumbrance and counters (last round's speed).
        st = token.state
        key = (
            tuple(sorted((k, str(v)) for k, v in token.stats.items())),
            pace,
            st.mode,
            st.conditions,
            st.encumbrance,
            st.counters,
            size,
            doors,
        )
        prof = self._profiles.get(key)
        if prof is None:
            model = self.model_for(doors)
            graph = token_graph(model, self.scenario.system, token, pace, size=size)
            # Tokens whose states differ but whose terrain costs and checks come out the
            # same share one graph and its fields (the costly part is the fields).
            signature = (
                graph.signature(),
                tuple(_check_key(c.check) for cs in graph.state_costs for c in cs),
            )
            prof = self._shared.get(signature)
            if prof is None:
                prof = self._shared[signature] = Profile(graph)
            self._profiles[key] = prof
        return prof

    def blocked_profile(self, prof: Profile, blocked: frozenset[Cell]) -> Profile:
        """``prof``'s token with ``blocked`` anchors taken away (tokens in the way)."""
        key = (id(prof), blocked)
        got = self._blocked.pop(key, None)
        if got is None:
            g = prof.graph
            got = Profile(MovementGraph(with_blocked(g.model, blocked), g.system, g.token, g.pace))
            if len(self._blocked) >= self.BLOCKED_KEPT:
                del self._blocked[next(iter(self._blocked))]
        self._blocked[key] = got  # most recent last
        return got


# --------------------------------------------------------------------------- the loop


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


class Simulation:
    """One seeded run of a scenario, turn by turn, with an event log.

    >>> from engine.scenario import load_scenario  # doctest: +SKIP
    >>> sim = Simulation(load_scenario("scenarios/chase.yaml"), seed=1)  # doctest: +SKIP
    >>> sim.run().outcome  # doctest: +SKIP
    'capture'
    """

    #: This turn's cells entered, ``(node, ticks spent)``, while a system that rolls once a
    #: turn at the hardest cell (D6's round: :meth:`RuleSystem.turn_checks`) waits to roll
    #: until the move is known (:meth:`_roll_turn`); None otherwise.
    _defer: list[tuple[int, float]] | None = None

    def __init__(
        self,
        scenario: Scenario,
        seed: int,
        *,
        fields: FieldCache | None = None,
        run: int = 0,
        record: bool = True,
    ) -> None:
        self.scenario = scenario
        self.system = scenario.system
        self.seed = seed
        self.run_index = run
        self.dice = Dice(seed)
        self.fields = fields or FieldCache(scenario)
        self.record = record
        self.events: list[dict[str, Any]] = []
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
        self._time_cache: dict[tuple[Any, ...], np.ndarray] = {}
        for spec in scenario.tokens:
            tok = self.system.token(spec.stats, token_id=spec.id)
            state = replace(
                tok.state, cell=spec.cell, conditions=tok.state.conditions | set(spec.conditions)
            )
            rules = sim_flight.rules_for(self, tok)
            if rules is not None:
                state = replace(state, flight=sim_flight.start_flight(rules, spec))
            self.tokens[spec.id] = replace(tok, state=state)
        self.pursuers = [
            t.id for t in scenario.tokens if t.policy == "pursuer" or t.side == "pursuer"
        ]
        self.quarries = [
            t.id for t in scenario.tokens if t.policy == "quarry" or t.side == "quarry"
        ]
        if self.record:
            self._emit(
                {
                    "type": "start",
                    **log_sources(scenario),
                    "seed": seed,
                    "run": run,
                    "system": self.system.name,
                    "tokens": {tid: self.tokens[tid].state.to_dict() for tid in self.order},
                }
            )

    # ----------------------------------------------------------------- events

    def _emit(self, event: dict[str, Any]) -> None:
        if self.record:
            self.events.append(event)

    def snapshot(self) -> Snapshot:
        """Everything needed to undo to this point or fork from it."""
        return Snapshot(
            dict(self.tokens),
            self.turn,
            self.outcome,
            len(self.events),
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
        del self.events[snap.n_events :]
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
        self.pursuers = [t.id for t in specs if t.policy == "pursuer" or t.side == "pursuer"]
        self.quarries = [t.id for t in specs if t.policy == "quarry" or t.side == "quarry"]

    def add_token(self, spec: TokenSpec) -> Token:
        """A new token (stats validated by the system: a bad one raises StatError, nothing
        changes); event ``token_add`` with its spec and state."""
        if spec.id in self.specs:
            raise ValueError(f"token id '{spec.id}' is taken; give another")
        tok = self.system.token(spec.stats, token_id=spec.id)
        tok = replace(
            tok,
            state=replace(
                tok.state, cell=spec.cell, conditions=tok.state.conditions | set(spec.conditions)
            ),
        )
        rules = sim_flight.rules_for(self, tok)
        if rules is not None:
            tok = tok.moved(flight=sim_flight.start_flight(rules, spec))
        self.specs[spec.id] = spec
        self.order.append(spec.id)
        self.tokens[spec.id] = tok
        self._sides()
        self._emit(
            {
                "type": "token_add",
                "token": spec.id,
                "side": spec.side,
                "policy": spec.policy,
                "size": spec.size,
                "stats": {k: jsonable(v) for k, v in tok.stats.items()},
                "state": tok.state.to_dict(),
            }
        )
        return tok

    def remove_token(self, tid: str) -> None:
        """Take a token off the map; event ``token_remove``."""
        del self.tokens[tid]
        del self.specs[tid]
        self.order.remove(tid)
        self.waypoint.pop(tid, None)
        self._sides()
        self._emit({"type": "token_remove", "token": tid})

    def edit_token(
        self,
        tid: str,
        stats: dict[str, Any] | None = None,
        conditions: frozenset[str] | None = None,
        side: str | None = None,
    ) -> Token:
        """New stats (validated; a bad one raises StatError, nothing changes), conditions or
        side for a token mid-session; event ``token_edit`` with its stats and state."""
        old = self.tokens[tid]
        spec = self.specs[tid]
        tok = old
        if stats is not None:
            fresh = self.system.token(stats, token_id=tid)
            tok = replace(fresh, state=replace(old.state, encumbrance=fresh.state.encumbrance))
            spec = replace(spec, stats=dict(stats))
        if conditions is not None:
            tok = tok.moved(conditions=frozenset(conditions))
        if side is not None:
            policy = side if spec.policy == spec.side else spec.policy
            spec = replace(spec, side=side, policy=policy)
        self.tokens[tid] = tok
        self.specs[tid] = spec
        self._sides()
        self._emit(
            {
                "type": "token_edit",
                "token": tid,
                "side": spec.side,
                "policy": spec.policy,
                "stats": {k: jsonable(v) for k, v in tok.stats.items()},
                "state": tok.state.to_dict(),
            }
        )
        return tok

    def place_token(self, tid: str, cell: Cell) -> None:
        """The GM puts a token on a cell (no move, no checks); event ``place``."""
        self.tokens[tid] = self.tokens[tid].moved(cell=cell)
        self._emit({"type": "place", "token": tid, "cell": list(cell)})
        self._check_goals(tid)

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
        self._time_cache.clear()
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
            events=len(self.events),
        )

    def play_turn(self, moves: dict[str, list[Cell]] | None = None) -> None:
        """One round: every token in order takes its turn (``moves`` for human tokens)."""
        if self.outcome is not None:
            return
        self.begin_turn()
        for tid in self.order:
            self.take_turn(tid, (moves or {}).get(tid))
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
        spec = self.specs[tid]
        token = self.system.start_turn(self.tokens[tid], self.dice)
        self._log_rolls(tid)
        # The pace this turn may use on the way to the chosen one (D6: two speed levels a
        # round); the token remembers it (its state, logged below).
        pace = self.system.turn_pace(token, spec.pace or self.system.default_pace)
        prof = self.fields.profile(token, pace, spec.size, self.door_key())
        self._defer = [] if self.system.turn_checks(token, [], pace) is not None else None
        before = token.state.cell
        flight = sim_flight.rules_for(self, token) if token.state.flight is not None else None
        if path is not None:
            token = self._walk_path(tid, token, prof, path, self.occupancy_of(tid))
        elif flight is not None:
            token = sim_flight.fly_turn(self, tid, token, flight)
        else:
            occ = self.occupancy_of(tid)
            goal = self._policy_goal(spec, token, prof, occ)
            if goal is not None:
                token = self._descend(tid, token, prof, goal, occ)
        if flight is None:
            token = self.system.paced(token, pace, token.state.cell != before)
        token = self.system.end_turn(token, self.dice)
        self._log_rolls(tid)
        self.tokens[tid] = token
        self._emit({"type": "state", "token": tid, "state": token.state.to_dict()})
        self._check_goals(tid)

    # ----------------------------------------------------------------- tokens in the way

    def occupancy_of(self, tid: str) -> Occupancy:
        """What the other tokens take away from ``tid`` this turn (engine.occupancy): under
        the scenario's ``tokens_block``, enemies' footprints block and allies' may be
        passed but not stopped on; a pursuer's quarries never block it (that is the catch);
        a flier in the air is over everyone's heads."""
        setting = self.scenario.tokens_block
        if setting == "none":
            return NOBODY
        mine = self.specs[tid]
        hunts = tid in self.pursuers
        others = []
        for oid in self.order:
            tok = self.tokens.get(oid)
            if oid == tid or tok is None or tok.state.cell is None:
                continue
            if not sim_flight.low_enough(tok, 0):
                continue
            spec = self.specs[oid]
            others.append(
                Other(
                    tok.state.cell,
                    spec.size,
                    enemy=spec.side != mine.side,
                    quarry=hunts and oid in self.quarries,
                )
            )
        return occupancy(self.scenario.model.grid, mine.size, others, setting)

    # ----------------------------------------------------------------- policies

    def _policy_goal(
        self, spec: TokenSpec, token: Token, prof: Profile, occ: Occupancy
    ) -> tuple[tuple[Cell, ...], bool] | None:
        """The cells the token's policy makes for this turn, and whether the way there is
        risk-weighted; None: it stays."""
        cell = token.state.cell
        assert cell is not None
        if spec.policy == "quarry":
            goal = self._quarry_goal(spec.id)
            if goal is not None:
                return (goal,), True
            best = self._flee_cell(token, prof, occ)
            return None if best is None else ((best,), False)
        if spec.policy == "pursuer":
            quarry = spec.target or self._nearest(cell, self.quarries)
            if quarry is None:
                return None
            at = self._intercept(spec, token, prof, quarry)
            if spec.size > 1:  # any anchor whose footprint covers the cell
                grid = prof.graph.grid
                near = tuple(a for a in covering(grid, at, spec.size) if fits(grid, a, spec.size))
                return (near or (at,)), False
            return (at,), False
        if spec.policy == "waypoints":
            i = self.waypoint.get(spec.id, 0)
            while i < len(spec.waypoints) and spec.waypoints[i] == cell:
                i += 1
            self.waypoint[spec.id] = i
            if i >= len(spec.waypoints):
                return None
            return (spec.waypoints[i],), False
        return None  # idle, human

    def _nearest(self, cell: Cell, ids: list[str]) -> str | None:
        grid = self.scenario.model.grid
        live = [(grid.steps(cell, self.tokens[q].state.cell), q) for q in ids]  # type: ignore[arg-type]
        return min(live)[1] if live else None

    def _intercept(self, spec: TokenSpec, token: Token, prof: Profile, quarry: str) -> Cell:
        """Where the quarry can be caught soonest: the first cell of its predicted route
        (towards its exit) that this pursuer reaches no later than the quarry does."""
        qtok = self.tokens[quarry]
        qcell = qtok.state.cell
        assert qcell is not None and token.state.cell is not None
        qspec = self.specs[quarry]
        qprof = self.fields.profile(
            qtok, qspec.pace or self.system.default_pace, qspec.size, self.door_key()
        )
        if not self.scenario.exit_cells:
            return qcell
        goal = self._quarry_goal(quarry)
        if goal is None:
            return qcell
        qfield = qprof.field_to((goal,), risk=True)
        route = self._route(qprof, qcell, qfield, limit_turns=4)
        if not route:
            return qcell
        mine = self._times_from(spec.id)
        den_q = qprof.graph.denominator
        grid = self.scenario.model.grid
        for c, t_q in route:
            if mine[grid.index(c)] <= t_q / den_q:
                return c
        return route[-1][0]

    def _times_from(self, tid: str) -> np.ndarray:
        """Turns from a token's cell to every cell (best parity), cached per turn."""
        key = (tid, self.turn, self.tokens[tid].state.cell, self.door_key())
        got = self._time_cache.get(key)
        if got is None:
            tok = self.tokens[tid]
            spec = self.specs[tid]
            prof = self.fields.profile(
                tok, spec.pace or self.system.default_pace, spec.size, self.door_key()
            )
            got = prof.field_from(tok.state.cell) / prof.graph.denominator  # type: ignore[arg-type]
            if len(self._time_cache) > 64:
                self._time_cache.clear()
            self._time_cache[key] = got
        return got

    def _quarry_goal(self, quarry: str) -> Cell | None:
        """The exit cell the quarry reaches soonest among those it reaches before every
        pursuer; None when no exit is safe (then it flees)."""
        exits = self.scenario.exit_cells
        if not exits:
            return None
        grid = self.scenario.model.grid
        mine = self._times_from(quarry)
        threat = np.full(grid.width * grid.height, INF)
        for pid in self.pursuers:
            threat = np.minimum(threat, self._times_from(pid))
        best = None
        for c in exits:
            i = grid.index(c)
            if mine[i] < threat[i] and (best is None or (mine[i], c) < best[0]):
                best = ((mine[i], c), c)
        return None if best is None else best[1]

    def _route(
        self, prof: Profile, cell: Cell, target: Field, limit_turns: int
    ) -> list[tuple[Cell, float]]:
        """The cells a token would pass descending ``target``, with arrival ticks."""
        g = prof.graph
        node = g.node(cell)
        spent = 0.0
        out = [(cell, 0.0)]
        limit = limit_turns * g.denominator
        while spent <= limit and target.left(node) > 0:
            step = target.step(prof, node)
            if step is None:
                break
            node, w = step
            spent += w
            out.append((g.cell_of(node), spent))
        return out

    def _flee_cell(self, token: Token, prof: Profile, occ: Occupancy) -> Cell | None:
        """No safe exit: make for the cell it reaches this turn that keeps the most turns
        between it and its nearest pursuer (ties: the nearer cell, then the lower index);
        never one another token stands on."""
        if not self.pursuers:
            return None
        cell = token.state.cell
        assert cell is not None
        g = prof.graph
        mine = prof.field_from(cell) / g.denominator
        threat = np.full(g.n, INF)
        for pid in self.pursuers:
            threat = np.minimum(threat, self._times_from(pid))
        ok = mine <= 1 + 1e-12
        if occ:
            taken = [g.grid.index(c) for c in occ.blocked | occ.no_stop if c != cell]
            ok[taken] = False
        reachable = np.nonzero(ok)[0]
        if not len(reachable):
            return None
        order = np.lexsort((reachable, mine[reachable], -threat[reachable]))
        best = g.grid.cell_of_index(int(reachable[order[0]]))
        if best == cell:
            return None
        return best

    # ----------------------------------------------------------------- moving

    def _descend(
        self,
        tid: str,
        token: Token,
        prof: Profile,
        goal: tuple[tuple[Cell, ...], bool],
        occ: Occupancy = NOBODY,
    ) -> Token:
        """Step down the field to ``goal`` while the turn's time lasts. Tokens in the way
        (``occ``): where the way down the open field meets a blocking token, the field with
        the blocking tokens taken away is walked instead (a goal cell a token stands on is
        walked up to); the move never ends on an ally's cell."""
        cells, risk = goal
        cell = token.state.cell
        assert cell is not None
        target = prof.field_to(cells, risk=risk)
        blocked = occ.blocked - {cell}
        stop_at: frozenset[Cell] = frozenset()
        if blocked and self._route_meets(prof, target, cell, blocked):
            stop_at = blocked & frozenset(cells)
            prof = self.fields.blocked_profile(prof, blocked - stop_at)
            target = prof.field_to(cells, risk=risk)
        g = prof.graph
        plan = self._plan(prof, target, g.node(cell))
        if stop_at or occ.no_stop:
            plan = self._trim(g, plan, stop_at, occ.no_stop)
        spent = 0.0
        path = [cell]
        key: tuple[int, int] | None = self._run_key_at(g, cell)
        for node, nxt, w in plan:
            ok, token, key = self._enter(tid, token, prof, node, nxt, key, spent + w)
            path.extend(self._jumped(g, node, nxt, ok))
            if not ok:
                break
            spent += w
            if g.cell_of(nxt) != path[-1]:  # a state change in place (standing) stays put
                path.append(g.cell_of(nxt))
        return self._moved(tid, token, path, spent, g)

    @staticmethod
    def _plan(prof: Profile, target: Field, node: int) -> list[tuple[int, int, float]]:
        """The edges ``(node, next, ticks)`` down ``target`` that this turn's time pays for
        (before any check is rolled)."""
        g = prof.graph
        budget = float(g.denominator)
        spent = 0.0
        plan: list[tuple[int, int, float]] = []
        while target.left(node) > 0:
            step = target.step(prof, node)
            if step is None:
                break
            nxt, w = step
            # A jump is one edge: it is made whole, in a turn that starts with it if needs be.
            if spent + w > budget + 1e-9 and not (spent == 0 and (node, nxt) in g.jump_at):
                break
            plan.append((node, nxt, w))
            spent += w
            node = nxt
        return plan

    @staticmethod
    def _route_meets(prof: Profile, target: Field, cell: Cell, blocked: frozenset[Cell]) -> bool:
        """Whether the whole way down ``target`` from ``cell`` (every turn of it) enters a
        blocked anchor. If not, that way is also a best one with the tokens in the way (it
        only loses edges), and the shared open field serves."""
        g = prof.graph
        idx = {g.grid.index(c) for c in blocked}
        node = g.node(cell)
        for _ in range(g.n * g.n_states):
            if target.left(node) <= 0:
                return False
            step = target.step(prof, node)
            if step is None:
                return False
            nxt = step[0]
            jump = g.jump_at.get((node, nxt)) if g.jump_at else None
            if nxt % g.n in idx or (jump is not None and any(p[0] in idx for p in jump.parts)):
                return True
            node = nxt
        return False

    @staticmethod
    def _trim(
        g: MovementGraph,
        plan: list[tuple[int, int, float]],
        stop_at: frozenset[Cell],
        no_stop: frozenset[Cell],
    ) -> list[tuple[int, int, float]]:
        """``plan`` cut before a cell a token stands on (``stop_at``: a goal taken by a
        blocking token) and back to its last cell that is not an ally's."""
        for k, (_, nxt, _) in enumerate(plan):
            if g.cell_of(nxt) in stop_at:
                plan = plan[:k]
                break
        while plan and g.cell_of(plan[-1][1]) in no_stop:
            plan = plan[:-1]
        return plan

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

    def _walk_path(
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
        return self._moved(tid, token, walked, spent, prof.graph)

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
                self._log_rolls(tid)
                self._emit(
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
                token = self.system.apply_check(token, jump.check.what, result.degree)
                if not result.success:
                    return False, token, key
            return True, token, (int(g.run_key[j]), 0)
        if self._defer is not None:  # one roll a turn: rolled once the move is known
            self._defer.append((nxt, spent))
            return True, token, key
        tid_j = int(g.model.terrain_ids.ravel()[j])
        period = g.check_period[tid_j]
        move = 0 if period is None else math.ceil(g.turns(spent) / period)
        run_key = (int(g.run_key[j]), move)
        cost = g.state_costs[g.state_of(nxt)][tid_j]
        if cost.check is not None and run_key != key and cost.check.check is not None:
            result = cost.check.check.roll(self.dice)
            self._log_rolls(tid)
            cell = g.cell_of(nxt)
            self._emit(
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
            token = self.system.apply_check(token, cost.check.what, result.degree)
            if not result.success:
                return False, token, run_key
        return True, token, run_key

    def _roll_turn(
        self, tid: str, token: Token, path: list[Cell], spent: float, g: MovementGraph
    ) -> tuple[Token, list[Cell], float]:
        """Roll this turn's checks over the cells it entered, as the system counts them once
        a turn (D6: one roll a round, at the hardest cell crossed: RULES.md 3), each at the
        first cell asking it, in path order; a failure keeps the token out of that cell."""
        entries, self._defer = self._defer or [], None
        ids = g.model.terrain_ids.ravel()
        terrains = [g.model.terrains[int(ids[nxt % g.n])] for nxt, _ in entries]
        asked = (self.system.turn_checks(token, terrains, g.pace) or []) if entries else []

        def asks(k: int, check: CellCheck) -> bool:
            nxt = entries[k][0]
            c = g.state_costs[g.state_of(nxt)][int(ids[nxt % g.n])].check
            return c is not None and (c.what, c.target) == (check.what, check.target)

        placed = [(next((k for k in range(len(entries)) if asks(k, c)), 0), c) for c in asked]
        for at, check in sorted(placed, key=lambda x: x[0]):
            if check.check is None:
                continue
            result = check.check.roll(self.dice)
            self._log_rolls(tid)
            self._emit(
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
            token = self.system.apply_check(token, check.what, result.degree)
            if not result.success:
                return token, path[: at + 1], entries[at - 1][1] if at else 0.0
        return token, path, spent

    def _moved(
        self, tid: str, token: Token, path: list[Cell], spent: float, g: MovementGraph
    ) -> Token:
        if self._defer is not None:
            token, path, spent = self._roll_turn(tid, token, path, spent, g)
        if len(path) > 1:
            self._emit(
                {
                    "type": "move",
                    "token": tid,
                    "path": [list(c) for c in path],
                    "turns": jsonable(
                        g.turns(spent) if not g.euclid else Fraction(spent / g.denominator)
                    ),
                }
            )
        return token.moved(cell=path[-1])

    def _log_rolls(self, tid: str) -> None:
        """Move the dice's new roll events into the run's log."""
        new = self.dice.log
        if not new:
            return
        if self.record:
            for ev in new:
                self.events.append({"type": "roll", "token": tid, **ev.to_dict()})
        new.clear()

    # ----------------------------------------------------------------- goals

    def _check_goals(self, moved: str) -> None:
        grid = self.scenario.model.grid
        for q in self.quarries:
            qc = self.tokens[q].state.cell
            for p in self.pursuers:
                pc = self.tokens[p].state.cell
                if (
                    qc is not None
                    and pc is not None
                    and gap_steps(grid, pc, self.specs[p].size, qc, self.specs[q].size)
                    <= self.scenario.capture
                    and sim_flight.low_enough(self.tokens[p], self.scenario.capture_altitude)
                    and sim_flight.low_enough(self.tokens[q], self.scenario.capture_altitude)
                ):
                    self._finish("capture", qc, p)
                    return
            if qc in self.scenario.exit_cells:
                self._finish("escape", qc, q)
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

    def write_log(self, path: str, label: str | None = "--log") -> None:
        """The event log as JSON lines, written whole or not at all (:mod:`engine.safeio`):
        a special file or a link is refused, a full disk leaves no half file."""
        from engine.safeio import write_text

        write_text(
            path, "".join(json.dumps(ev, separators=(",", ":")) + "\n" for ev in self.events), label
        )


def _enter_dry(
    tid: str,
    token: Token,
    prof: Profile,
    node: int,
    nxt: int,
    key: tuple[int, int] | None,
    spent: float,
) -> tuple[bool, Token, tuple[int, int] | None]:
    """:meth:`Simulation._enter` for a dry walk: every check passes, nothing is rolled."""
    return True, token, key


def file_digest(path: str) -> str:
    """The first 16 hex digits of the SHA-256 of a file's bytes (a scenario's ``digest``);
    a file just loaded is not read again."""
    from engine.sources import file_digest as digest

    return digest(path)


def log_sources(scenario: Scenario) -> dict[str, Any]:
    """What an event log's start event records of the files it was run on.

    The scenario path as given and absolute, the map's absolute path, and a digest of each
    file's bytes: ``tacgrid replay`` finds the files from another folder and refuses to
    replay on a scenario or map that has changed since.
    """
    import os

    return {
        "scenario": scenario.path,
        "scenario_abs": os.path.abspath(scenario.path),
        "digest": scenario.digest,
        "map": scenario.model.path,
        "map_digest": _digest_or_none(scenario.model.path),
    }


def _digest_or_none(path: str) -> str | None:
    try:
        return file_digest(path)
    except (OSError, ValueError, TacgridError):  # a model built in memory has no file
        return None


def replay_states(events: list[dict[str, Any]]) -> tuple[dict[str, TokenState], str | None]:
    """Rebuild every token's state from an event log alone (no rules, no dice)."""
    states: dict[str, TokenState] = {}
    outcome = None
    for ev in events:
        kind = ev.get("type")
        if kind == "start":
            states = {tid: _state_from_dict(s) for tid, s in ev["tokens"].items()}
        elif kind == "move":
            states[ev["token"]] = replace(states[ev["token"]], cell=tuple(ev["path"][-1]))
        elif kind == "flight":
            f = state_from_dict(ev["state"])
            states[ev["token"]] = replace(states[ev["token"]], cell=f.cell, flight=f)
        elif kind == "state":
            states[ev["token"]] = _state_from_dict(ev["state"])
        elif kind in ("token_add", "token_edit"):  # the GM's edits (the viewer)
            states[ev["token"]] = _state_from_dict(ev["state"])
        elif kind == "token_remove":
            states.pop(ev["token"], None)
        elif kind == "place":
            states[ev["token"]] = replace(states[ev["token"]], cell=tuple(ev["cell"]))
        elif kind == "end":
            outcome = ev["outcome"]
    return states, outcome


def replay_doors(events: list[dict[str, Any]]) -> dict[int, bool]:
    """The doors opened or closed in play by the end of an event log (door id -> open)."""
    doors: dict[int, bool] = {}
    for ev in events:
        if ev.get("type") == "door":
            doors[int(ev["door"])] = bool(ev["open"])
    return doors


def read_log(path: str) -> list[dict[str, Any]]:
    from engine.errors import ArgumentError
    from engine.sources import MAX_LOG_BYTES, load_json, read_bytes

    # A regular file within the log cap; each line JSON with finite numbers, shallow.
    data = read_bytes(path, "event log", MAX_LOG_BYTES, ArgumentError)
    events = []
    for n, line in enumerate(data.splitlines(), 1):
        if not line.strip():
            continue
        event = load_json(line, f"{path}: line {n}", ArgumentError)
        if not isinstance(event, dict):
            raise ArgumentError(f"{path}: line {n} is not an event; give a log written by tacgrid")
        events.append(event)
    if not events or events[0].get("type") != "start":
        raise ArgumentError(
            f"{path}: not a tacgrid event log (no start event); write one with `tacgrid run ... --log FILE`"
        )
    return events
