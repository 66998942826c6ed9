"""Flight as momentum (RULES.md 6): the interface a rule system's flight rules implement.

Each turn a flier makes one :class:`FlightChoice`; its rule system's :class:`FlightRules`
turns that into the next state and a :class:`TurnRecord`. The rules live in the system
modules (their "Flight" sections); this package holds the shared vocabulary they are
written in, in three modules, one layer each:

* :mod:`engine.flight.states`: the states, choices, records and goals;
* :mod:`engine.flight.geometry`: headings, faces, lattice arithmetic, clear runs and the
  move generators the systems' planners expand with;
* this module: :class:`FlightRules`, the base class each system's rules subclass, the
  :class:`HeadingBound` a system may offer the planner, and the one turn routine
  (:func:`fly_turns`) that the simulator and the planner both call, so both fly the same
  turn. It re-exports the names of the other two, so ``from engine.flight.model import X``
  works for all of them.

It sits below the rule systems and imports nothing above the map model, so a system can
implement flight without pulling in the simulator (``engine.flight.simulator``) or the
planner (``engine.flight.planner``), which sit above the systems and use them.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Iterator, Mapping
from dataclasses import replace
from typing import TYPE_CHECKING, Any, Protocol

from engine.errors import ArgumentError
from engine.flight.geometry import (
    Geometry,
    Runs,
    Trace,
    angle,
    check_turns,
    moves,
    multi_turn_moves,
    straight_and_one_turn,
    trace,
    turn_delta,
    turn_options,
    turn_plans,
    whole,
)
from engine.flight.states import (
    UNLANDABLE,
    FlightChoice,
    FlightState,
    Goal,
    Key,
    TurnRecord,
    Turns,
    state_from_dict,
    state_of,
)
from engine.grid import Cell, Grid
from engine.lazy import numpy as np

if TYPE_CHECKING:
    from engine.mapmodel import MapModel

__all__ = [
    "FIELD_CACHE",
    "UNLANDABLE",
    "FlightChoice",
    "FlightRules",
    "FlightState",
    "Geometry",
    "Goal",
    "HeadingBound",
    "Key",
    "Runs",
    "StepField",
    "Trace",
    "TurnRecord",
    "Turns",
    "angle",
    "at_goal",
    "check_turns",
    "fly_turns",
    "moves",
    "multi_turn_moves",
    "state_from_dict",
    "state_of",
    "straight_and_one_turn",
    "trace",
    "turn_delta",
    "turn_options",
    "turn_plans",
    "whole",
]

# =============================================================================================
# The rules' shape
# =============================================================================================


#: Distance fields a rules object keeps (oldest dropped first): a batch's fliers chase
#: many goals, and each field holds a number per cell.
FIELD_CACHE = 512


class StepField(Mapping[Cell, int]):
    """Steps to one goal from every cell (read-only; cells that cannot reach it are
    missing), stored as one list indexed by the grid's cell index."""

    __slots__ = ("grid", "steps")

    def __init__(self, grid: Grid, steps: list[int]) -> None:
        self.grid = grid
        self.steps = steps

    def get(self, cell: Cell, default: Any = None) -> Any:
        c, r = cell
        grid = self.grid
        if not (0 <= c < grid.width and 0 <= r < grid.height):
            return default
        v = self.steps[grid.index(cell)]
        return default if v < 0 else v

    def __getitem__(self, cell: Cell) -> int:
        v = self.get(cell)
        if v is None:
            raise KeyError(cell)
        return int(v)

    def __iter__(self) -> Iterator[Cell]:
        grid = self.grid
        return (grid.cell_of_index(i) for i, v in enumerate(self.steps) if v >= 0)

    def __len__(self) -> int:
        return sum(1 for v in self.steps if v >= 0)


class FlightRules:
    """What a rule system's flight rules provide (one subclass per system, in the system's
    module). Bound to one token and one map.

    Rules: :meth:`start_state`, :meth:`step` (one turn), :meth:`choices` (every choice the
    planner considers, for brute force and tests). Planning: :meth:`expand` (successors as
    plain tuples, generated lazily and fast), :meth:`choice_of` (the choice behind one),
    :meth:`heuristic` (a lower bound on the turns left), :meth:`dedup` (what counts as the
    same state for pruning).
    """

    system_name = ""
    #: Whether the system has altitude (the report shows it per turn).
    has_altitude = False

    def __init__(self, model: MapModel) -> None:
        self.model = model
        self.geo = Geometry(model.grid)
        self._fields: dict[Cell, StepField] = {}
        self._adjacency: Any = None
        #: What pilots in the turn loop (engine.sim_flight) work out per flight state and
        #: keep for the rules' life (shared by every run of a batch in a worker).
        self.pilot_cache: dict[Any, Any] = {}

    def passable(self, cell: Cell) -> bool:
        """Whether any flight at all can enter ``cell`` (at the best altitude)."""
        return True

    def steps_to(self, goal: Cell) -> StepField:
        """Fewest steps from every cell to ``goal`` through passable cells (a BFS from the
        goal, once per goal): a flier needs at least that many cells of movement, so every
        heuristic measures distance with it. Cells missing cannot reach the goal.

        The BFS runs in scipy's compiled graph code over the passable cells' adjacency
        (built once per rules): policies in the turn loop ask for a new goal every turn.
        """
        got = self._fields.get(goal)
        if got is None:
            grid = self.model.grid
            if self._adjacency is None and not self._fields:
                got = self._bfs(goal)  # one goal (a plan): no graph to build
            else:
                from scipy.sparse.csgraph import dijkstra

                if self._adjacency is None:
                    self._adjacency = self._passable_graph()
                dist = dijkstra(self._adjacency, indices=grid.index(goal), unweighted=True)
                dist[~np.isfinite(dist)] = -1
                got = StepField(grid, dist.astype(np.int64).tolist())
            if len(self._fields) >= FIELD_CACHE:
                self._fields.pop(next(iter(self._fields)))
            self._fields[goal] = got
        return got

    def _bfs(self, goal: Cell) -> StepField:
        """The plain BFS from ``goal`` (cheaper than building the graph for one goal)."""
        grid = self.model.grid
        steps = [-1] * (grid.width * grid.height)
        index = grid.index
        steps[index(goal)] = 0
        frontier = [goal]
        d = 0
        while frontier:
            d += 1
            nxt = []
            for c in frontier:
                for n in grid.neighbours(c):
                    i = index(n)
                    if steps[i] < 0 and self.passable(n):
                        steps[i] = d
                        nxt.append(n)
            frontier = nxt
        return StepField(grid, steps)

    def _passable_graph(self) -> Any:
        """Every cell's steps into its passable neighbours, as a sparse matrix (steps are
        symmetric between passable cells, so distances from the goal are distances to it;
        a goal that is not passable itself still reaches out, as the plain BFS did)."""
        from scipy.sparse import csr_matrix

        grid = self.model.grid
        w, h = grid.width, grid.height
        cells = list(grid.cells())
        ok = np.array([self.passable(c) for c in cells], dtype=bool).reshape(h, w)
        par = np.array([grid.parity(c) for c in cells], dtype=np.int8).reshape(h, w)
        rr, cc = np.mgrid[0:h, 0:w]
        rows_l, cols_l = [], []
        for p in (0, 1):
            for dc, dr, _ in grid.offsets(p):
                nc, nr = cc + dc, rr + dr
                inside = (par == p) & (nc >= 0) & (nc < w) & (nr >= 0) & (nr < h)
                src_r, src_c = rr[inside], cc[inside]
                dst_r, dst_c = nr[inside], nc[inside]
                keep = ok[dst_r, dst_c]
                rows_l.append(src_r[keep] * w + src_c[keep])
                cols_l.append(dst_r[keep] * w + dst_c[keep])
        rows = np.concatenate(rows_l)
        cols = np.concatenate(cols_l)
        n = w * h
        data = np.ones(len(rows), dtype=np.float64)
        return csr_matrix((data, (rows, cols)), shape=(n, n))

    # ----------------------------------------------------------------- map

    def with_model(self, model: MapModel) -> FlightRules:
        """The same rules on another map."""
        raise NotImplementedError

    def landable(self, cell: Cell) -> bool:
        return self.model.terrain_at(cell).move not in UNLANDABLE

    def flies_odds(self, events: tuple[dict[str, Any], ...]) -> float:
        """The chance that a turn whose rules' events are ``events`` (:meth:`step`'s) is
        flown as chosen: the checks the system rolls for it (RuleSystem.flight_rolls)
        passed. Default: 1 (a flight that rolls nothing)."""
        return 1.0

    # ----------------------------------------------------------------- rules

    def start_state(
        self, cell: Cell, heading: int, speed: int, *, altitude: int = 0, face: int = -1
    ) -> FlightState:
        """A validated start: ``speed`` 0 means on the ground."""
        raise NotImplementedError

    def normal(self, state: FlightState) -> FlightState:
        """``state`` with its face filled in (the heading's default first face)."""
        face = self.geo.norm_face(state.heading, state.face)
        return state if face == state.face else replace(state, face=face)

    def step(self, state: FlightState, choice: FlightChoice) -> tuple[FlightState, TurnRecord]:
        raise NotImplementedError

    def actions(self, choice: FlightChoice) -> tuple[str, ...]:
        """One entry per action spent (CONTRACT.md's names)."""
        raise NotImplementedError

    def choices(
        self, state: FlightState, *, turn_points: int = 1, land: bool = True
    ) -> Iterator[FlightChoice]:
        """Every choice the planner considers from ``state`` (may be many: tests)."""
        raise NotImplementedError

    def knock_down(self, state: FlightState) -> tuple[FlightState, dict[str, Any]]:
        """The flier is tripped or downed in flight (systems with such a rule)."""
        raise ArgumentError(f"{self.system_name}: no rule for a flier downed in flight")

    def goal_refusal(self, goal: Goal) -> str | None:
        """Why no plan can reach ``goal`` at all (a blocked goal, nowhere to land)."""
        return None

    # ----------------------------------------------------------------- planning

    def dedup(self, key: Key) -> Hashable:
        return key

    def expand(
        self, key: Key, goal: Goal, turn_points: int
    ) -> Iterator[tuple[Key, int, bool, Any]]:
        """``(next key, actions, reaches the goal, spec)`` for every useful choice."""
        raise NotImplementedError

    def choice_of(self, key: Key, spec: Any) -> FlightChoice:
        raise NotImplementedError

    def bound(self, key: Key, goal: Goal) -> tuple[int, int] | None:
        """Lower bounds on the (turns, actions) still needed, compared as a pair (None: the
        goal is out of reach). Must be admissible and consistent: never more than any real
        continuation, and never dropping by more than one turn's cost."""
        return (0, 0)

    def heading_bound(
        self, goal: Goal, start: FlightState, turn_points: int
    ) -> HeadingBound | None:
        """A sharper bound than :meth:`bound` for planning from ``start`` to ``goal`` with
        ``turn_points`` turn points a move, or None (the default: :meth:`bound` alone). A
        system offers one where its own bound is blind to something costly, such as a flier
        with momentum turning round to end on the goal's heading (Mythmaster)."""
        return None


class HeadingBound(Protocol):
    """A sharper lower bound the rules offer the planner for one goal
    (:meth:`FlightRules.heading_bound`). It may be worked out lazily: :meth:`bound` tells
    what is known so far, never more than the truth; :meth:`refine` works it out further
    for one state. Both keep :meth:`FlightRules.bound`'s contract (admissible, consistent)."""

    def bound(self, key: Key, goal: Goal) -> tuple[int, int] | None:
        """(turns, actions) still needed at least, from what is worked out so far (None:
        the goal is out of reach)."""
        ...

    def refine(self, key: Key, h: int, f: int, max_turns: int) -> tuple[int, int] | None:
        """``key``'s bound once worked out as deep as ``h`` turns (the bound it was pushed
        with; ``f``: its turns so far plus ``h``), at most ``max_turns``."""
        ...


def at_goal(rules: FlightRules, state: FlightState, goal: Goal) -> bool:
    """Whether ``state`` already satisfies ``goal`` (a plan of no turns)."""
    if state.cell != goal.cell:
        return False
    if goal.heading is not None and state.heading != goal.heading:
        return False
    return state.landed if goal.land else True


def fly_turns(
    rules: FlightRules,
    state: FlightState,
    choices: Iterable[FlightChoice],
    *,
    downs: Iterable[int] = (),
) -> list[TurnRecord]:
    """Fly ``choices`` turn by turn from ``state`` under ``rules`` (on the rules' own map);
    one :class:`TurnRecord` per turn, its events the choice, then whatever the turn brought
    (collisions, landings, falls). ``downs``: turns (1-based) at whose start the flier is
    tripped or downed (systems without such a rule refuse them).

    The one turn loop shared by the simulator and the planner's replay of its plans.
    Illegal choices (too many actions, a turn past the move's end, ...) raise
    :class:`~engine.errors.ArgumentError` naming the turn.
    """
    downed = set(downs)
    records: list[TurnRecord] = []
    state = rules.normal(state)
    for i, choice in enumerate(choices, start=1):
        pre: list[dict[str, Any]] = []
        if i in downed:
            state, event = rules.knock_down(state)
            pre.append({**event, "turn": i})
        try:
            nxt, rec = rules.step(state, choice)
        except ArgumentError as exc:
            raise ArgumentError(f"turn {i}: {exc}") from None
        events = tuple(pre) + tuple({**e, "turn": i} for e in rec.events)
        rec = replace(rec, turn=i, events=events)
        records.append(rec)
        state = nxt
    return records
