"""The policies every scenario may name: quarry, pursuer, waypoints, idle and human."""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from engine.flight.model import FlightState
from engine.footprint import covering, fits
from engine.grid import Cell, Grid
from engine.policies.base import CELLS, DISTANCES, QUARRY_ODDS, STAY, Aim, Goal, Policy, TurnView
from engine.policies.region import EPS, frontier_among, frontier_choice, safe_mask
from engine.systems.base import Token
from engine.tokenspec import TokenSpec


class Quarry(Policy):
    """Make for the surest exit: the one it reaches soonest among those it reaches before
    every pursuer by a way it reaches first all along; with none safe, flee to the cell of
    this turn from which it holds the largest region (the cells it gets to a whole turn
    before any pursuer; ties: the farthest from them), or to a refuge further off: a cell
    of the largest margin (the nearest pursuer's turns to it less its own, by its field's
    expected time: a climb at its expected whole turns, one under way at what is left of
    it), where that margin beats every cell of this turn's and the cell is a crossing over
    turns or holds no less (:func:`engine.sim.flee.flee_choice`). It reads the other
    tokens' cells (where they stand in its way: a climber partway up at the cell it climbs
    to) and their distances; its own crossing under way is part of the key its ways are
    kept by (:func:`engine.sim.ways.way_key`). A greedy look at where it would end, not a
    plan of the way there."""

    name = "quarry"
    reads = frozenset({CELLS, DISTANCES})
    flees = True

    def goal(self, view: TurnView, spec: TokenSpec, token: Token) -> Goal:
        solved = view.solved_move()
        if solved is not None:
            return Goal((solved,))
        goal = view.quarry_goal(spec.id)
        if goal is not None:
            return Goal((goal,), risk=True)
        best = view.flee_cell()
        return STAY if best is None else Goal((best,))

    def aim(self, view: TurnView, spec: TokenSpec, token: Token, state: FlightState) -> Aim | None:
        """In the air, the same aims by its flight reach (:meth:`TurnView.reach_times`, each
        pursuer's by its own, a flier's by its flight state): the surest exit
        (:func:`surest_exit`), else, fleeing, the end of this turn's flight from which it
        holds the most cells a whole turn before every pursuer (``Aim.hold``)."""
        tokens = view.tokens
        hunters = tuple(p for p in view.pursuers if tokens[p].state.cell is not None)
        threat = team_times(view, hunters)
        goal = surest_exit(view, view.reach_times(spec.id), threat, state.cell)
        if goal is not None:
            return Aim(goal)
        threats = tuple(c for p in hunters if (c := tokens[p].state.cell) is not None)
        return Aim(None, threats=threats, hold=threat) if threats else None


class Pursuer(Policy):
    """Hunt its quarry (its ``target``, else the nearest quarry) as one of a team. Any
    pursuer that reaches the quarry this turn, the checks on its way priced by their odds
    (:meth:`TurnView.odds_turns`: a swim it will likely fail is no catch this turn),
    catches it where it is reached; else the one that reaches it soonest (counted from the
    mover's turn, :func:`_chaser`) goes for it, cutting across to the first cell of the
    quarry's predicted route to its exit that it reaches no later than the quarry does
    (straight for the quarry where it makes for no exit). Every other pursuer shrinks the
    quarry's safe region, the cells the quarry reaches before any pursuer
    (:func:`engine.policies.region.frontier_choice`): it makes for the safe exit, else the
    cell of that region, it comes nearest to claiming, by the way that weighs its checks'
    odds (``risk=True``), so no hunter idles behind another while the quarry keeps a way
    out, nor follows it blindly into water it swims worse."""

    name = "pursuer"
    reads = frozenset({CELLS, DISTANCES, QUARRY_ODDS})
    hunts = True

    def goal(self, view: TurnView, spec: TokenSpec, token: Token) -> Goal:
        solved = view.solved_move()
        if solved is not None:
            return Goal((solved,))
        cell = token.state.cell
        assert cell is not None
        quarry = spec.target or view.nearest(cell, view.quarries)
        if quarry is None:
            return STAY
        at = view.reach(quarry)
        if at is None:
            return STAY
        # It catches the quarry where it stands if it gets there this turn (at this turn's
        # pace; its chosen pace first, no slower, so a far quarry asks no field of it).
        if (
            view.turns_to(spec.id, at) <= 1 + EPS
            and view.moves_to(at) <= 1 + EPS
            and view.odds_turns(at) <= 1 + EPS
        ):
            return self._to(view, spec, at)
        if _chaser(view, quarry, spec.id) == spec.id:
            return self._to(view, spec, view.intercept(quarry))
        return Goal((_shrink(view, spec, quarry, at),), risk=True)

    def _to(self, view: TurnView, spec: TokenSpec, at: Cell) -> Goal:
        if spec.size > 1:  # any anchor whose footprint covers the cell
            grid = view.grid
            near = tuple(a for a in covering(grid, at, spec.size) if fits(grid, a, spec.size))
            return Goal(near or (at,))
        return Goal((at,))

    def aim(self, view: TurnView, spec: TokenSpec, token: Token, state: FlightState) -> Aim | None:
        """In the air, the same team play by reach: the pursuer that reaches the quarry
        soonest (:func:`_chaser`, a flier counted by where it can end a move) steers for its
        predicted cell; every other flier shrinks its safe region
        (:func:`_shrink_by_flight`: its safe exit, else the cell of it this flier comes
        nearest to claiming), still taking any move that ends on the quarry. Each plans two
        turns ahead near the quarry (``Aim.corner``: the cells it gets to in a turn), those
        its teammates hold (:func:`team_cover`) left to them (``Aim.team``)."""
        quarry = spec.target or view.nearest(state.cell, view.quarries)
        if quarry is None:
            return None
        qcell = view.reach(quarry)  # a climber partway up is caught where it climbs to
        assert qcell is not None
        catch = qcell if view.low_enough(quarry) else None
        # Where the quarry may be when this flier moves next: the cells it gets to in a
        # turn; and those of them the rest of the team already holds (:func:`team_cover`).
        corner = team = None
        if catch is not None:
            flies = view.tokens[quarry].state.flight is not None
            corner = view.reach_times(quarry) if flies else view.times_from(quarry)
            team = team_cover(view, spec.id, quarry)
        chaser = _chaser(view, quarry, spec.id)
        if chaser is not None and chaser != spec.id:
            goal = _shrink_by_flight(view, spec, quarry, qcell)
            if goal is not None:
                return Aim(goal, catch, view.capture, corner=corner, team=team)
        return Aim(view.predict(quarry), catch, view.capture, corner=corner, team=team)


class Waypoints(Policy):
    """Walk (or fly) to each of its waypoints in turn, then stay."""

    name = "waypoints"

    def goal(self, view: TurnView, spec: TokenSpec, token: Token) -> Goal:
        cell = token.state.cell
        i = view.progress(spec.id)
        while i < len(spec.waypoints) and spec.waypoints[i] == cell:
            i += 1
        if i >= len(spec.waypoints):
            return Goal(progress=i)
        return Goal((spec.waypoints[i],), progress=i)

    def aim(self, view: TurnView, spec: TokenSpec, token: Token, state: FlightState) -> Aim | None:
        i = view.progress(spec.id)
        if i >= len(spec.waypoints):
            return None
        return Aim(spec.waypoints[i])

    def flown(self, view: TurnView, spec: TokenSpec, cells: tuple[Cell, ...]) -> int | None:
        i = view.progress(spec.id)
        for c in cells:
            if i < len(spec.waypoints) and spec.waypoints[i] == c:
                i += 1
        return i


class Idle(Policy):
    """Stay put (a flier in the air cruises on)."""

    name = "idle"


class Human(Policy):
    """Moved by a person (the viewer, or ``play_turn``'s moves); on its own it stays."""

    name = "human"


def _chaser(view: TurnView, quarry: str, mover: str) -> str | None:
    """The pursuer of ``quarry`` (those whose target it is, or that name none) that reaches
    it soonest, counted from ``mover``'s turn: a pursuer before the mover in the turn order
    has moved this round and moves again only next round, a turn later (so two pursuers
    that plan one after the other agree on who goes for it); ties: the mover, then the
    next in turn order. A walker's turns are its field's; a flier's the turns it needs to
    end a move there (:meth:`TurnView.reach_times`)."""
    at = view.reach(quarry)
    if at is None:
        return None
    specs = view.specs
    order = view.pursuers
    tokens = view.tokens
    me = order.index(mover) if mover in order else 0
    team = [
        (k, pid)
        for k, pid in enumerate(order)
        if specs[pid].target in (None, quarry) and tokens[pid].state.cell is not None
    ]
    if len(team) == 1:
        return team[0][1]  # the only one: no turns to weigh
    best: tuple[float, int, str] | None = None
    for k, pid in team:
        after = (k - me) % len(order)
        if tokens[pid].state.flight is not None:
            t = float(view.reach_times(pid)[view.grid.index(at)])
        else:
            t = view.turns_to(pid, at)
        t += 1.0 if k < me else 0.0
        if best is None or (t, after) < best[:2]:
            best = (t, after, pid)
    return None if best is None else best[2]


def _shrink(view: TurnView, spec: TokenSpec, quarry: str, at: Cell) -> Cell:
    """:class:`Pursuer`'s cell for a pursuer that does not go for the quarry itself
    (:func:`~engine.policies.region.frontier_choice`; where the quarry keeps no region,
    where it is reached)."""
    grid = view.grid
    # Every pursuer on the ground, the mover too: frontier_choice takes the least of its
    # own turns and these, the same with it as without it; and so reads the mover's own
    # turns only where it weighs them (its turns less the quarry's, least on its cells).
    tokens = view.tokens
    ground = tuple(
        pid
        for pid in view.pursuers
        if pid == spec.id
        or (tokens[pid].state.cell is not None and tokens[pid].state.flight is None)
    )
    others = view.least_times(ground)
    for pid in view.pursuers:  # a flier by its flight reach
        if pid not in ground and tokens[pid].state.cell is not None:
            others = np.minimum(others, view.reach_times(pid))
    theirs = view.turns_of(quarry, at)
    region = safe_mask(theirs, others) & (theirs > 0)
    exits = exit_indexes(grid, view.exits)
    # frontier_choice's cells: the safe exits if any, else the whole region.
    cells = exits[region[exits]] if len(exits) and region[exits].any() else np.flatnonzero(region)
    mine = view.claim_times_on(spec.id, cells, theirs[cells])
    if bool(np.all(mine >= others[cells])):  # frontier_choice's cells: no map pass
        got = frontier_among(cells, mine, theirs)
    else:
        got = frontier_choice(
            view.claim_times(spec.id, cells, theirs[cells]), others, theirs, exits
        )
    return at if got is None else grid.cell_of_index(got)


def _shrink_by_flight(view: TurnView, spec: TokenSpec, quarry: str, at: Cell) -> Cell | None:
    """:func:`_shrink` for a flying pursuer: of the quarry's safe region against every
    pursuer (each by :meth:`TurnView.reach_times`: a walker's field, a flier's flight
    reach), the safe exit, else the cell this flier comes nearest to claiming
    (:func:`~engine.policies.region.frontier_choice`, with the flier's own reach); None
    where the quarry keeps no region (the flier closes on it)."""
    grid = view.grid
    tokens = view.tokens
    others = team_times(view, tuple(p for p in view.pursuers if p != spec.id))
    qtok = tokens[quarry]
    theirs = (
        view.reach_times(quarry) if qtok.state.flight is not None else view.turns_of(quarry, at)
    )
    exits = exit_indexes(grid, view.exits)
    got = frontier_choice(view.reach_times(spec.id), others, theirs, exits)
    return None if got is None else grid.cell_of_index(got)


@lru_cache(maxsize=8)
def exit_indexes(grid: Grid, exits: frozenset[Cell]) -> np.ndarray:
    """The cell indexes of ``exits`` on ``grid``, in order (read-only): the same for every
    turn of a scenario, so worked out once."""
    out = np.array(sorted(grid.index(c) for c in exits), dtype=np.int64)
    out.setflags(write=False)
    return out


def team_cover(view: TurnView, mover: str, quarry: str) -> np.ndarray | None:
    """The cells (a mask by cell index) where the mover's teammates catch ``quarry`` after
    its next move: where one of them ends a move (a flier, :meth:`TurnView.reach_times`)
    or gets within a turn (a walker) as it stands when the quarry makes that move. Only
    the pursuers that do not move between the mover and the quarry (in turn order) stand
    so: those that do move again first and answer this flier's move in their own turn.
    None where there are none (the flier hunts alone)."""
    order = view.order
    if mover not in order or quarry not in order:
        return None
    at = order.index(mover)
    before: set[str] = set()  # moving after the mover and before the quarry
    for k in range(1, len(order)):
        tid = order[(at + k) % len(order)]
        if tid == quarry:
            break
        before.add(tid)
    specs = view.specs
    fixed = tuple(
        p
        for p in view.pursuers
        if p != mover and p not in before and specs[p].target in (None, quarry)
    )
    if not fixed:
        return None
    return team_times(view, fixed) <= 1 + EPS


def team_times(view: TurnView, ids: tuple[str, ...]) -> np.ndarray:
    """The least turns of ``ids`` to every cell: the walkers' by their fields
    (:meth:`TurnView.least_times`), each flier's by its flight reach
    (:meth:`TurnView.reach_times`); +inf where none comes."""
    tokens = view.tokens
    placed = tuple(p for p in ids if tokens[p].state.cell is not None)
    out = view.least_times(tuple(p for p in placed if tokens[p].state.flight is None))
    for p in placed:
        if tokens[p].state.flight is not None:
            out = np.minimum(out, view.reach_times(p))
    return out


def surest_exit(
    view: TurnView, mine: np.ndarray, threat: np.ndarray, start: Cell | None = None
) -> Cell | None:
    """The exit with the widest margin (``threat``, the pursuers' turns to it, less
    ``mine``, the quarry's) among those the quarry reaches before every pursuer; ties: the
    sooner, then the lower cell. With the quarry's cell ``start``, only an exit it reaches
    by a way whose every cell it reaches before every pursuer (as a ground quarry's,
    :meth:`FieldCache.safest_exit`: an exit behind the pursuers is no way out), the way
    from cell to neighbouring cell (:func:`safe_from`). None where no exit is safe."""
    grid = view.grid
    ahead = [e for e in view.exits if float(mine[grid.index(e)]) < float(threat[grid.index(e)])]
    if ahead and start is not None:
        inside = safe_from(grid, start, mine < threat)
        ahead = [e for e in ahead if inside[grid.index(e)]]
    best: tuple[float, float, Cell] | None = None
    for e in ahead:
        i = grid.index(e)
        m, t = float(mine[i]), float(threat[i])
        if best is None or (m - t, m, e) < best:
            best = (m - t, m, e)
    return None if best is None else best[2]


def safe_from(grid: Grid, start: Cell, region: np.ndarray) -> np.ndarray:
    """The cells of ``region`` (a mask by cell index) reached from ``start`` by steps from
    cell to neighbouring cell without leaving it (``start`` counted in), as a mask: a
    flier's way is no graph's, but every cell it ends a move on along it is one of these
    or a pursuer's first."""
    out = np.zeros(len(region), dtype=bool)
    first = grid.index(start)
    out[first] = True
    todo = [start]
    while todo:
        nxt = []
        for c in todo:
            for n in grid.neighbours(c):
                i = grid.index(n)
                if region[i] and not out[i]:
                    out[i] = True
                    nxt.append(n)
        todo = nxt
    return out
