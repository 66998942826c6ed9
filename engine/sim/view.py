"""The run as a policy may read it (:class:`SimView`, a :class:`~engine.policies.TurnView`).

The view answers the questions the policies ask of the world (who is nearest, where a
quarry will run, which cell keeps most turns from the pursuers) from the run's state and
the field cache; it changes nothing. The turn loop makes one for each choice a policy
makes, for the token that moves (with the profile it moves on this turn).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from functools import lru_cache
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np

from engine.flight.model import FlightRules, FlightState
from engine.grid import Cell, Grid
from engine.occupancy import Occupancy, reach_cell
from engine.scenario import Scenario
from engine.sim.cache import FieldCache
from engine.sim.fields import INF, Profile
from engine.sim.flymoves import reach_turns
from engine.sim.flyreach import THREAT_KEPT, kept_arrays, kept_memo, least_with
from engine.sim.idmemo import IdMemo
from engine.sim.threat import claim_turns, claim_turns_on, turns_to
from engine.systems.base import RuleSystem, Token
from engine.terrain import standing_mode
from engine.tokenspec import TokenSpec

if TYPE_CHECKING:  # the solve is imported when a run is solved, not with the loop
    from engine.solve import PacedTurns

#: How the solve gets the loop's whole turns: made from the ways, each side's token and the
#: system (:class:`engine.sim.paceturn.SolveTurns`, above this module).
DryTurnsFactory = Callable[["SolveWays", dict[str, Token], RuleSystem], "PacedTurns"]


class RunState(Protocol):
    """What of a run (:class:`~engine.sim.loop.Simulation`) the view reads."""

    scenario: Scenario
    fields: FieldCache
    tokens: dict[str, Token]
    specs: dict[str, TokenSpec]
    pursuers: list[str]
    quarries: list[str]
    waypoint: dict[str, int]
    order: list[str]
    #: The round under way (1 in the first).
    turn: int

    def door_key(self) -> tuple[tuple[int, bool], ...]: ...

    def profile_now(self, tid: str, doors: Any = None) -> Profile: ...

    def flight_rules(self, token: Token) -> FlightRules | None: ...

    @property
    def dry_turns(self) -> DryTurnsFactory:
        """Whole turns walked by the loop's walker with no dice, for the solve
        (:class:`engine.sim.dryturn.DryTurns`, made from a :class:`SolveWays`)."""
        ...


class SimView:
    """:class:`~engine.policies.TurnView` of ``run`` for token ``tid`` moving as ``token``
    on ``prof`` with ``occ`` in its way (None for a flier: it moves on no profile)."""

    __slots__ = ("_run", "_tid", "_token", "_prof", "_occ")

    def __init__(
        self,
        run: RunState,
        tid: str,
        token: Token,
        prof: Profile | None = None,
        occ: Occupancy | None = None,
    ) -> None:
        self._run = run
        self._tid = tid
        self._token = token
        self._prof = prof
        self._occ = occ

    @property
    def tokens(self) -> Mapping[str, Token]:
        return MappingProxyType(self._run.tokens)

    @property
    def specs(self) -> Mapping[str, TokenSpec]:
        return MappingProxyType(self._run.specs)

    @property
    def pursuers(self) -> tuple[str, ...]:
        return tuple(self._run.pursuers)

    @property
    def quarries(self) -> tuple[str, ...]:
        return tuple(self._run.quarries)

    @property
    def order(self) -> tuple[str, ...]:
        return tuple(self._run.order)

    @property
    def grid(self) -> Grid:
        prof = self._prof
        return prof.graph.grid if prof is not None else self._run.scenario.model.grid

    @property
    def exits(self) -> frozenset[Cell]:
        return self._run.scenario.exit_cells

    @property
    def capture(self) -> int:
        return self._run.scenario.capture

    @property
    def capture_altitude(self) -> int:
        return self._run.scenario.capture_altitude

    def progress(self, tid: str) -> int:
        return self._run.waypoint.get(tid, 0)

    def nearest(self, cell: Cell, ids: tuple[str, ...]) -> str | None:
        grid = self._run.scenario.model.grid
        tokens = self._run.tokens
        live = [(grid.steps(cell, tokens[q].state.cell), q) for q in ids]  # type: ignore[arg-type]
        return min(live)[1] if live else None

    def times_from(self, tid: str) -> np.ndarray:
        return times_from(self._run, tid)

    def reach_times(self, tid: str) -> np.ndarray:
        """Turns from ``tid`` to every cell: a flier's to end a move there low enough to
        catch (:func:`~engine.sim.flymoves.reach_turns`), a walker's :meth:`times_from`."""
        run = self._run
        tok = run.tokens[tid]
        f = tok.state.flight
        rules = run.flight_rules(tok) if f is not None else None
        if f is None or rules is None:
            return times_from(run, tid)
        return reach_turns(rules, f, run.scenario.capture_altitude)

    def least_times(self, ids: tuple[str, ...]) -> np.ndarray:
        grid = self.grid
        return least_turns(self._run, ids, grid.width * grid.height)

    def turns_to(self, tid: str, cell: Cell) -> float:
        run = self._run
        src = run.tokens[tid].state.cell
        assert src is not None
        return turns_to(run.profile_now(tid), src, cell, run.fields.THREAT_NODES)

    def moves_to(self, cell: Cell) -> float:
        prof, mine = self._prof, self._token.state.cell
        if prof is None or mine is None:
            return float(self.moves()[self.grid.index(cell)])
        return turns_to(prof, mine, cell, self._run.fields.THREAT_NODES)

    def claim_times(self, tid: str, cells: np.ndarray, less: np.ndarray) -> np.ndarray:
        run = self._run
        src = run.tokens[tid].state.cell
        assert src is not None
        return claim_turns(run.profile_now(tid), src, cells, less, run.fields.THREAT_NODES)

    def claim_times_on(self, tid: str, cells: np.ndarray, less: np.ndarray) -> np.ndarray:
        run = self._run
        src = run.tokens[tid].state.cell
        assert src is not None
        return claim_turns_on(run.profile_now(tid), src, cells, less, run.fields.THREAT_NODES)

    def quarry_goal(self, quarry: str) -> Cell | None:
        return quarry_goal(self._run, quarry)

    def intercept(self, quarry: str) -> Cell:
        """The first cell of the quarry's route to its exit (risk-weighted, as it runs)
        that the mover reaches no later than the quarry does; where it is reached
        (:func:`~engine.occupancy.reach_cell`: a climber partway up on the cell it climbs
        to) if it has no exit to make for."""
        run = self._run
        qtok = run.tokens[quarry]
        qcell = qtok.state.cell
        at = reach_cell(qtok)
        assert qcell is not None and at is not None and self._token.state.cell is not None
        qprof = run.profile_now(quarry)
        if not run.scenario.exit_cells:
            return at
        goal = quarry_goal(run, quarry)
        if goal is None:
            return at
        qfield = qprof.field_to((goal,), risk=True)
        route = qfield.route(qprof, qprof.graph.node(qcell), 4)
        return run.fields.meet(times_from(run, self._tid), route)

    def reach(self, tid: str) -> Cell | None:
        return reach_cell(self._run.tokens[tid])

    def turns_of(self, tid: str, cell: Cell) -> np.ndarray:
        return self._run.profile_now(tid).turns_from(cell)

    def moves(self) -> np.ndarray:
        cell = self._token.state.cell
        assert cell is not None
        prof = self._prof
        return times_from(self._run, self._tid) if prof is None else prof.turns_from(cell)

    def odds_turns(self, cell: Cell) -> float:
        prof = self._prof
        mine = self._token.state.cell
        assert prof is not None and mine is not None
        g = prof.graph
        field = prof.field_to((cell,))  # the way a Goal of the cell walks: no other field
        node = g.node(mine)
        ticks = field.at(node)
        penalty = prof.penalty
        for _ in range(g.n * g.n_states):
            if not ticks < INF or field.left(node) <= 0:
                break
            step = field.step(prof, node)
            if step is None:
                break
            node = step[0]
            ticks += float(penalty[node])
        return ticks / g.denominator

    def flee_cell(self) -> Cell | None:
        """The cell the mover reaches this turn from which it holds the largest region
        (ties: the most turns between it and its nearest pursuer, the nearer cell, the
        lower index), or a refuge further off whose margin (the pursuers' turns less its
        own) beats every one of this turn's, a climb it has started priced by what is left
        of it (:func:`~engine.sim.flee.flee_choice`); never one another token stands on."""
        run = self._run
        if not run.pursuers:
            return None
        prof = self._prof
        assert prof is not None, "a flier flees by its flight policy"
        cell = self._token.state.cell
        assert cell is not None
        g = prof.graph
        mine = prof.turns_from(cell)
        threat = threat_turns(run, g.n)
        occ = self._occ
        taken = (occ.blocked | occ.no_stop) - {cell} if occ else frozenset()
        st = self._token.state
        crossing = None if st.toward is None else (st.toward, st.progress)
        return run.fields.flee_cell(g, cell, mine, threat, taken, crossing, prof)

    def predict(self, quarry: str) -> Cell:
        """Where the quarry will be after its next turn: a flier on its heading at its speed
        (as far as it is clear), a walker one turn along its route to its exit, else where
        it stands."""
        run = self._run
        qtok = run.tokens[quarry]
        qcell = qtok.state.cell
        assert qcell is not None
        f = qtok.state.flight
        grid = run.scenario.model.grid
        if f is not None and not f.landed and f.speed:
            c, face = qcell, f.face
            rules = run.flight_rules(qtok)
            if rules is not None:
                geo = rules.geo
                face = geo.norm_face(f.heading, face)
                for _ in range(f.speed):
                    n = grid.step_heading(c, face)
                    if not grid.in_bounds(n) or not rules.passable(n):
                        break
                    c, face = n, geo.other(f.heading, face)
            return c
        if f is None and run.scenario.exit_cells:
            goal = quarry_goal(run, quarry)
            if goal is not None:
                prof = run.profile_now(quarry)
                target = prof.field_to((goal,), risk=True)
                route = target.route(prof, prof.graph.node(qcell), 1).cells
                if route:
                    return route[-1][0]
        return qcell

    def low_enough(self, tid: str) -> bool:
        return low_enough(self._run.tokens[tid], self._run.scenario.capture_altitude)

    def solved_move(self) -> Cell | None:
        return solved_move(self._run, self._tid)


def times_from(run: RunState, tid: str) -> np.ndarray:
    """Turns from a token's cell to every cell (best parity), as the token stands now: its
    profile's (its state at this moment, the doors as they are), kept in the profile. A
    token whose state changed in place (a failed check, a pace remembered) is seen with its
    new profile by every token that plans after it."""
    return run.profile_now(tid).turns_from(run.tokens[tid].state.cell)  # type: ignore[arg-type]


def least_turns(run: RunState, ids: tuple[str, ...], n: int | None = None) -> np.ndarray:
    """The least of :func:`times_from` over ``ids``, cell by cell (+inf where there are
    none), read-only: :meth:`FieldCache.least_turns` (kept as they move on a big map)."""
    tokens = run.tokens
    return run.fields.least_turns(
        [(t, run.profile_now(t), tokens[t].state.cell) for t in ids],  # type: ignore[misc]
        n,
    )


def threat_turns(run: RunState, n: int | None = None) -> np.ndarray:
    """The pursuers' least turns to every cell, as a ground quarry weighs them: a walker's
    by its field (:func:`least_turns`), a flier's by the turns it needs to end a move low
    enough to catch within the scenario's ``capture`` steps of it (:func:`catch_turns`),
    not by its walking pace; read-only. With fliers about, the same arrays give the same array object
    (:func:`~engine.sim.flyreach.least_with`), so the field cache's choices kept by the
    threat's identity (the safe exit, the flee cell) are found again."""
    tokens = run.tokens
    ids = tuple(run.pursuers)
    rules0 = None
    for p in ids:
        if tokens[p].state.flight is not None:
            rules0 = run.flight_rules(tokens[p])
            break
    if rules0 is None:
        return least_turns(run, ids, n)
    # The same pursuers (the very tokens: each stands for its state) and doors: the same
    # array (two quarries that move one after the other in a round ask it alike).
    held = tuple(tokens[p] for p in ids)
    memo: IdMemo[np.ndarray] = kept_memo(rules0, "threat_turns", THREAT_KEPT)
    capture = run.scenario.capture
    plain = (n, run.door_key(), capture)
    got = memo.get(held, plain)
    if got is not None:
        return got
    fliers = [
        (rules, f)
        for tok in held
        if (f := tok.state.flight) is not None
        and tok.state.cell is not None
        and (rules := run.flight_rules(tok)) is not None
    ]
    walkers = tuple(p for p in ids if tokens[p].state.flight is None)
    low = run.scenario.capture_altitude
    reach = [catch_turns(rules, f, low, capture) for rules, f in fliers]
    got = least_with(rules0, least_turns(run, walkers, n), reach)
    memo.put(held, plain, got)
    return got


def catch_turns(rules: FlightRules, state: FlightState, low: int, capture: int) -> np.ndarray:
    """Turns for a flier in ``state`` to catch on each cell: to end a move at or below
    ``low`` metres on a cell within ``capture`` steps of it (the turn loop's capture,
    docs/scenarios.md ``goals.capture``), the least of
    :func:`~engine.sim.flymoves.reach_turns` over those cells (:func:`within_steps`);
    ``reach_turns`` itself where ``capture`` is 0. Read-only, kept in the rules' pilot
    cache by the flier's state."""
    reach = reach_turns(rules, state, low)
    if not capture:
        return reach
    key = (rules.normal(state).key(), low, capture)
    got = rules.pilot_cache.get("catch", {}).get(key)
    if got is None:
        got = kept_arrays(rules, "catch")[key] = within_steps(rules.model.grid, reach, capture)
    return got


def within_steps(grid: Grid, turns: np.ndarray, k: int) -> np.ndarray:
    """For every cell (by index), the least of ``turns`` over the cells at most ``k`` steps
    from it (:meth:`Grid.cells_within`, as :func:`engine.occupancy.gap_steps` counts
    between one-cell tokens); read-only. By a table of each cell's neighbourhood
    (:func:`_within_table`, kept per grid and distance), held equal to asking
    ``cells_within`` cell by cell in tests/test_bugs_capture.py."""
    index, starts = _within_table(grid, k)
    out = np.minimum.reduceat(turns[index], starts)
    out.setflags(write=False)
    return out


@lru_cache(maxsize=8)
def _within_table(grid: Grid, k: int) -> tuple[np.ndarray, np.ndarray]:
    """Every cell's cells within ``k`` steps, concatenated in index order (each run
    starts with at least the cell itself), and where each cell's run starts."""
    parts: list[int] = []
    starts = np.empty(grid.width * grid.height, dtype=np.int64)
    for i in range(len(starts)):
        starts[i] = len(parts)
        parts.extend(grid.index(c) for c in grid.cells_within(grid.cell_of_index(i), k))
    return np.array(parts, dtype=np.int64), starts


def quarry_goal(run: RunState, quarry: str) -> Cell | None:
    """The exit cell the quarry reaches soonest among those it reaches before every
    pursuer by a way it reaches first all along (the surest exit,
    :meth:`FieldCache.safest_exit`); None when no exit is safe (then it flees)."""
    if not run.scenario.exit_cells:
        return None
    mine = times_from(run, quarry)
    threat = threat_turns(run)
    return run.fields.safest_exit(
        mine, threat, run.profile_now(quarry), run.tokens[quarry].state.cell
    )


def solve_run(run: RunState, max_states: int | None = None) -> Any:
    """The solved game (:class:`engine.solve.Solution`) of the run's tokens as they stand,
    each on its profile now (its scenario pace), in turn order; :class:`engine.solve.Unsolvable`
    where it is not modelled or has more than ``max_states`` states (default
    :data:`engine.solve.MAX_STATES`)."""
    from engine.solve import MAX_STATES, Mover, Unsolvable, solve

    movers = []
    profs: dict[str, Profile] = {}
    sizes: dict[str, int] = {}
    for t in run.order:
        cell = run.tokens[t].state.cell
        if cell is None:
            raise Unsolvable(f"{run.scenario.path}: token {t} is off the map; place it first")
        side = "pursuer" if t in run.pursuers else "quarry" if t in run.quarries else "other"
        profs[side], sizes[side] = run.profile_now(t), run.specs[t].size
        movers.append(Mover(t, side, profs[side].graph, cell, run.tokens[t]))
    limit = MAX_STATES if max_states is None else max_states
    block = run.scenario.tokens_block != "none"
    ways = SolveWays(run.fields, profs, sizes, run.door_key(), block)
    # The loop's whole turns (engine.sim.dryturn, above this module: the run makes them).
    turns = run.dry_turns(ways, {m.side: run.tokens[m.tid] for m in movers}, run.scenario.system)
    return solve(run.scenario, movers, run.scenario.system, limit, ways, turns)


class SolveWays:
    """The turn loop's way for a solved move (:class:`engine.solve.Ways`): the field
    cache's descent to the one cell a solved policy aims at (its goal, as
    :meth:`Simulation._find_way` asks it), the other token in the way as the loop's
    occupancy has it (a pursuer's quarry never blocks it)."""

    def __init__(
        self,
        fields: FieldCache,
        profs: dict[str, Profile],
        sizes: dict[str, int],
        doors: tuple[tuple[int, bool], ...],
        block: bool,
    ) -> None:
        self.fields, self.profs, self.sizes = fields, profs, sizes
        self.doors, self.block = doors, block

    def way(
        self, side: str, src: Cell, dst: Cell, blocker: Cell | None
    ) -> tuple[Profile, Any, list[tuple[int, int, float]], bool]:
        prof, walk, k = self.fields.descent(
            self.profs[side], (dst,), False, src, self._occ(side, blocker)
        )
        beyond = walk.after is not None and k == len(walk.edges)
        return prof, prof.graph, walk.edges[:k], beyond

    def _occ(self, side: str, blocker: Cell | None) -> Occupancy:
        if blocker is not None and self.block and side == "quarry":
            return Occupancy(frozenset({blocker}), frozenset())
        return Occupancy()

    def replan(
        self,
        side: str,
        token: Token,
        current: Profile | None,
        src: Cell,
        dst: Cell,
        blocker: Cell | None,
    ) -> tuple[Profile, Any, list[tuple[int, int, float]], list[float], int] | None:
        """As :meth:`Simulation._replan` does: the profile of ``token`` standing on ``src``
        (in that cell's mode), None where it is ``current``, else the descent on it."""
        graph = self.profs[side].graph
        mode = standing_mode(graph.model.terrain_at(src).move)  # as crossing.mode_at
        here = self.fields.hooks.moved(token, src, mode)
        new = self.fields.profile(here, graph.pace, self.sizes[side], self.doors)
        if new is current:
            return None
        prof, walk, k = self.fields.descent(new, (dst,), False, src, self._occ(side, blocker))
        return prof, prof.graph, walk.edges, walk.spent, k

    def same_profile(self, side: str, a: Token, b: Token) -> bool:
        pace, size = self.profs[side].graph.pace, self.sizes[side]
        got = [self.fields.profile(t, pace, size, self.doors) for t in (a, b)]
        return got[0] is got[1]

    def profile_of(self, side: str, token: Token) -> Profile:
        """The profile ``side``'s token ``token`` moves on (its pace and size, the doors)."""
        pace, size = self.profs[side].graph.pace, self.sizes[side]
        return self.fields.profile(token, pace, size, self.doors)

    def occupancy(self, side: str, blocker: Cell | None) -> Occupancy:
        """What is in ``side``'s way with the other token on ``blocker``."""
        return self._occ(side, blocker)


def solved_move(run: RunState, tid: str) -> Cell | None:
    """Where ``tid`` moves in the solved game (engine.solve), where its scenario says
    ``solve: auto``, the game fits (one pursuer, one quarry, dice it carries, within
    :data:`engine.solve.MAX_STATES`) and both tokens still move on the profiles and in the
    turn order it was solved for; else None (the policy's own heuristics). A pure function
    of the two tokens' positions (their cells, or partway up a climb; with dice, and the round:
    the best move depends on the rounds left; docs/solve.md); None where the game holds no
    such position (a crossing it does not carry)."""
    if run.scenario.solve != "auto" or len(run.order) != 2:
        return None
    from engine.solve import DiceSolution, Unsolvable

    order = tuple(run.order)
    profs = tuple(run.profile_now(t) for t in order)
    kept = run.fields.solved
    if kept is None:
        try:
            got = solve_run(run)
        except Unsolvable:
            got = None
        kept = run.fields.solved = ((order, *profs), got)
    solution = kept[1]
    if kept[0][0] != order or solution is None:
        return None  # the GM reordered the tokens: not the game solved
    if tid not in (solution.game.pursuer.tid, solution.game.quarry.tid):
        return None
    at: list[int] = []
    for side, t in (("pursuer", solution.game.pursuer.tid), ("quarry", solution.game.quarry.tid)):
        st = run.tokens[t].state
        # Where the game holds it: its cell, or partway up a climb (engine.solve.climb), or
        # held in a pit it fell into (engine.solve.jump).
        still = run.scenario.system.held(run.tokens[t]) is not None
        pos = solution.position_of(side, st, still, run.tokens[t])
        if pos is None:
            return None
        prof = profs[order.index(t)]
        # Past the cells of a game with pits: a pit's (held, or climbing out and on).
        pit = isinstance(solution, DiceSolution) and solution.pits is not None
        pit = pit and pos >= solution.game.quarry.graph.n
        if prof is not kept[0][1 + order.index(t)] and not pit:
            if not solution.holds_profile(t, prof):  # a pace state it carries (solve.pace)
                return None  # a profile changed (a pit's token aside): not the game solved
        at.append(pos)
    side = "pursuer" if tid == solution.game.pursuer.tid else "quarry"
    return solution.move_at(side, at[0], at[1], run.turn)


def low_enough(token: Token, capture_altitude: int) -> bool:
    """Whether a token may catch or be caught: on foot, landed, or flying at or below
    ``capture_altitude`` metres."""
    f = token.state.flight
    return f is None or f.landed or f.altitude <= capture_altitude
