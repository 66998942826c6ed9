"""One pursuer against one quarry as a finite game: each side's moves of a turn as the
turn loop prices them, the capture and exit cells, the turn order and limit.

A step into a cell that takes more than a whole turn (the loop carries the crossing into
the next turn) is not a move of the game: a token that can reach one is refused
(:func:`slow_crossing`), climbs in whole successes aside (engine.solve.climb).

A token's moves of one turn are the cells its movement graph (:class:`MovementGraph`: the
engine's own costs, the graph the turn loop walks) reaches within one turn's ticks from
the node a turn starts on: partial moves included, its own cell always. The quarry's are
worked out with the pursuer's cell taken away wherever the scenario's ``tokens_block``
says the pursuer is in its way (the turn loop's :func:`~engine.sim.ways.occupancy_of`: a
quarry never blocks its pursuer); only the cells near enough to matter are worked out
again (:func:`_blocked_reach`).
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import numpy as np

from engine.errors import TacgridError, literal
from engine.grid import Cell
from engine.movement import MovementGraph
from engine.occupancy import gap_steps
from engine.scenario import Scenario

#: The most states (pursuer cells x quarry cells x the turn limit) ``tacgrid solve`` takes
#: on by default: a 40x30 map's 1,200 cells a side at 60 turns, well within memory.
MAX_STATES = 100_000_000


#: The most moves of the quarry kept apart for the pursuer in its way (an upper bound: the
#: squares of its moves a turn, summed over the cells); 8 bytes each.
MAX_BLOCKED_MOVES = 80_000_000

#: The most positions (map cells squared) the solver holds: its arrays are one byte or bit
#: a position, several of them at once (a 40x30 map's 1,440,000 take about 200 MB at peak).
MAX_POSITIONS = 6_250_000


class Unsolvable(TacgridError):
    """A scenario ``solve`` does not model, or one too big for memory (one line)."""


class TurnBudget:
    """The loop's turns walked to build a game, counted: past ``limit`` the solve is
    refused in one line naming ``what`` the turns are, ``how`` they are asked, and the
    ``fix``."""

    def __init__(self, name: str, limit: int, what: str, how: str, fix: str) -> None:
        self.name, self.limit, self.what, self.how, self.fix = name, limit, what, how, fix
        self.walked = 0

    def count(self, more: int = 1) -> None:
        """Count ``more`` turns walked; refuse past the limit."""
        self.walked += more
        if self.walked > self.limit:
            raise Unsolvable(
                f"{self.name}: {self.what} take more than {self.limit:,} turns walked to work "
                f"out ({self.how}); {self.fix}"
            )


@dataclass(frozen=True)
class Mover:
    """One token of the game: its id, side (``pursuer`` or ``quarry``), the graph it moves
    on this turn at its pace (:meth:`Simulation.profile_now`'s) and its cell."""

    tid: str
    side: str
    graph: MovementGraph
    cell: Cell
    #: The token itself (None: the graph's): its stats where a rule reads one the graph
    #: does not price, as the climb out of a pit (engine.solve.jump).
    token: Any = None


@dataclass(frozen=True)
class Reach:
    """A token's moves of one turn from every cell: ``idx[ptr[c]:ptr[c + 1]]`` are the
    cell indices it may end on from cell ``c`` (its own first)."""

    ptr: np.ndarray
    idx: np.ndarray

    def of(self, c: int) -> np.ndarray:
        return self.idx[self.ptr[c] : self.ptr[c + 1]]


@dataclass(frozen=True)
class Blocked:
    """The quarry's moves where the pursuer's cell is in their way: for pair ``k``, the
    pursuer on ``p[k]``, the quarry on ``q[k]``, its moves ``idx[ptr[k]:ptr[k + 1]]``."""

    p: np.ndarray
    q: np.ndarray
    ptr: np.ndarray
    idx: np.ndarray
    #: ``p[k] * n + idx[j]`` for each move ``j`` of pair ``k``: into a raveled ``[p, q]``.
    flat: np.ndarray


@dataclass(frozen=True)
class Game:
    """The game ``tacgrid solve`` solves (see the module)."""

    n: int
    width: int
    pursuer: Mover
    quarry: Mover
    #: Whether the pursuer moves first in a round.
    pursuer_first: bool
    turns: int
    #: ``cap[p, q]``: a pursuer on cell index ``p`` catches a quarry on ``q``.
    cap: np.ndarray
    #: ``exit[q]``: a quarry on ``q`` escapes.
    exit: np.ndarray
    reach_p: Reach
    reach_q: Reach
    blocked: Blocked | None
    #: The cells each side can stand on (its start, and every cell a move may end on).
    stand_p: np.ndarray
    stand_q: np.ndarray
    #: Whether a move may meet a check (solved with dice: engine.solve.expect).
    dice: bool = False

    @property
    def states(self) -> int:
        """Pursuer cells x quarry cells x the turn limit."""
        return int(self.stand_p.sum()) * int(self.stand_q.sum()) * self.turns

    def index(self, cell: Cell) -> int:
        return cell[1] * self.width + cell[0]

    def quarry_moves(self, p: int, q: int) -> np.ndarray:
        """The quarry's moves from ``q`` with the pursuer on ``p`` (in no set order)."""
        b = self.blocked
        if b is not None:
            k = np.flatnonzero((b.p == p) & (b.q == q))
            if len(k):
                return b.idx[b.ptr[k[0]] : b.ptr[k[0] + 1]]
        return self.reach_q.of(q)


def check_scenario(
    scenario: Scenario,
    movers: list[Mover],
    system: Any,
    dice: bool = False,
    crossings: bool = False,
    paces: bool = False,
) -> None:
    """Refuse, in one line, what the game does not model (docs/solve.md); ``dice``: the
    checks of cells are modelled (engine.solve.chance), given the turn loop's ways;
    ``crossings``: crossings and jumps of more than a turn are (engine.solve.crossing, a
    game whose moves ask no check); ``paces``: a pace that changes over the first turns and a
    roll once a turn are (engine.solve.pace)."""
    name = scenario.path
    crossings = crossings and (dice or not any(_has_checks(m.graph) for m in movers))
    sides = sorted(m.side for m in movers)
    if sides != ["pursuer", "quarry"]:
        raise Unsolvable(
            f"{name}: solve plays one pursuer against one quarry; this scenario has "
            f"{sides.count('pursuer')} pursuer(s) and {sides.count('quarry')} quarry(ies) "
            "(other tokens: take them out of a copy of the scenario)"
        )
    for m in movers:
        g = m.graph
        token = g.search.tokens[g.search.start]
        why = None
        if token.state.flight is not None:
            why = "flies with momentum"
        elif not paces and system.round_paces(token, g.pace):
            why = f"changes pace over its first turns (pace {g.pace})"
        elif not paces and _turn_rolls(g, token, system):
            why = f"rolls once a turn at pace {g.pace} on this map"
        elif (_climbs(g) or _jump_checks(g)) and not dice:
            what = (
                "climbs over turns in whole successes on this map (a climb's progress)"
                if _climbs(g)
                else "jumps with a check on this map (a failure falls into the gap)"
            )
            raise Unsolvable(
                f"{name}: token {m.tid} {what}; solve carries the checks that stop a token "
                "and leave nothing after its turn (docs/solve.md): give it a map without these"
            )
        elif not dice and _has_checks(g):
            why = "meets checks on this map (terrain, jumps or climbs)"
        if why is not None:
            raise Unsolvable(
                f"{name}: token {m.tid} {why}; solve models moves that roll nothing "
                "(docs/solve.md): give it a pace and a map without checks"
            )
        slow = None if crossings else slow_crossing(g, m.cell)
        if slow is not None:
            src, dst, turns = slow
            raise Unsolvable(
                f"{name}: token {m.tid} can enter cell {list(dst)} from {list(src)} only over "
                f"{turns} turns at pace {g.pace} (the crossing's progress carried into the "
                "next turn: docs/rules.md); solve models the moves within one turn and no "
                "crossing under way (docs/solve.md): give it a faster pace or a map without "
                "such cells"
            )


def _turn_rolls(g: MovementGraph, token: Any, system: Any) -> bool:
    """Whether a system that rolls once a turn (D6) asks a roll of a move over some
    terrain on the map at the token's pace (:meth:`RuleSystem.turn_checks`)."""
    if system.turn_checks(token, [], g.pace) is None:
        return False
    terrains = [g.model.terrains[t] for t in np.unique(g.model.terrain_ids).tolist()]
    if system.turn_checks(token, terrains, g.pace):
        return True
    return any(system.turn_checks(token, [t], g.pace) for t in terrains)


def _has_checks(g: MovementGraph) -> bool:
    """Whether a move on ``g`` can ask a check: a terrain on the map with one, a jump or
    a climb priced in whole successes."""
    present = set(np.unique(g.model.terrain_ids).tolist())
    for layer in g.state_costs:
        for t in present:
            cost = layer[t]
            if cost.check is not None and cost.check.check is not None:
                return True
    if any(j.check is not None and j.check.check is not None for j in g.jumps):
        return True
    token = g.search.tokens[g.search.start]
    return any(g.system.climb_odds(token, g.model.terrains[t], g.pace) for t in present)


def _climbs(g: MovementGraph) -> bool:
    """Whether a run of terrain on ``g``'s map is one climb priced in whole successes
    (:meth:`RuleSystem.climb_odds`: Mythmaster's skill climbs, over turns)."""
    present = np.unique(g.model.terrain_ids).tolist()
    token = g.search.tokens[g.search.start]
    return any(g.system.climb_odds(token, g.model.terrains[t], g.pace) for t in present)


def slow_crossing(g: MovementGraph, start: Cell) -> tuple[Cell, Cell, Fraction] | None:
    """A step ``g``'s token can reach from ``start`` (on its whole graph) into another
    cell that takes more than a whole turn (the turn loop's
    :meth:`~engine.sim.walking.Walker._long_step`: the rest of the turn goes into the cell
    and its progress carries into the next: docs/rules.md): the cell it steps from, the cell
    and the turns the step takes; None where there is none. A step into a climb priced in
    whole successes (:meth:`RuleSystem.climb_odds`) is left to the climbs (refused without
    dice, positions with them: engine.solve.climb). A jump of more than a turn is one too:
    the loop makes it whole in a turn that starts with it (``plan_turn``), a move the
    game's one-turn reach leaves out (without dice the loop's own turns find it:
    engine.solve.crossing)."""
    from scipy.sparse.csgraph import breadth_first_order

    n, den = g.n, g.denominator
    csr = g.csr()
    rows = np.repeat(np.arange(csr.shape[0]), np.diff(csr.indptr))
    slow = (csr.data > den + 1e-9) & (rows % n != csr.indices % n)
    if not slow.any():
        return None
    token = g.search.tokens[g.search.start]
    terrains = g.model.terrains
    climb = np.array([g.system.climb_odds(token, t, g.pace) is not None for t in terrains])
    slow &= ~climb[np.asarray(g.model.terrain_ids).ravel()][csr.indices % n]
    seen = np.zeros(csr.shape[0], dtype=bool)
    seen[breadth_first_order(csr, g.node(start), directed=True, return_predecessors=False)] = True
    found = np.flatnonzero(slow & seen[rows])
    if not len(found):
        return None
    k = int(found[0])
    return g.cell_of(int(rows[k])), g.cell_of(int(csr.indices[k])), g.turns(csr.data[k])


def _jump_checks(g: MovementGraph) -> bool:
    return any(j.check is not None and j.check.check is not None for j in g.jumps)


def build_game(
    scenario: Scenario,
    movers: list[Mover],
    system: Any,
    max_states: int = MAX_STATES,
    dice: bool = False,
    crossings: bool = False,
    paces: bool = False,
) -> Game:
    """The game of ``movers`` (in turn order) on ``scenario``; :class:`Unsolvable` where it
    is not modelled or has more than ``max_states`` states. ``dice``: cells' checks are
    modelled (the game's ``dice`` says whether a move meets one)."""
    check_scenario(scenario, movers, system, dice, crossings, paces)
    pm = next(m for m in movers if m.side == "pursuer")
    qm = next(m for m in movers if m.side == "quarry")
    grid = scenario.model.grid
    n = grid.width * grid.height
    if n * n > MAX_POSITIONS:
        raise Unsolvable(
            f"{scenario.path}: {n * n:,} positions ({grid.width}x{grid.height} cells, squared) "
            f"is more than the limit {MAX_POSITIONS:,} the solver holds in memory; "
            "solve a smaller map"
        )
    reach_p, stand_p, _ = _reach_all(pm.graph)
    reach_q, stand_q, cost_q = _reach_all(qm.graph)
    stand_p[grid.index(pm.cell)] = True
    stand_q[grid.index(qm.cell)] = True
    states = int(stand_p.sum()) * int(stand_q.sum()) * scenario.turns
    if states > max_states:
        raise Unsolvable(
            problem=literal(
                f"{scenario.path}: {states:,} states ({int(stand_p.sum())} pursuer cells x "
                f"{int(stand_q.sum())} quarry cells x {scenario.turns} turns) is more than "
                f"the limit {max_states:,}"
            )
            + "; give {max_states} or a smaller map or turn limit",
            others=("max_states",),
        )
    exits = np.zeros(n, dtype=bool)
    for c in scenario.exit_cells:
        if grid.in_bounds(c):
            exits[grid.index(c)] = True
    blocked = None
    if scenario.tokens_block in ("enemies", "all"):
        bound = int((np.diff(reach_q.ptr) ** 2).sum())
        if bound > MAX_BLOCKED_MOVES:
            raise Unsolvable(
                f"{scenario.path}: the quarry's moves around the pursuer would be up to "
                f"{bound:,} entries, more than the limit {MAX_BLOCKED_MOVES:,} held in memory "
                f"(it reaches {bound / n:.0f} cells a turn squared on average); solve a slower "
                "quarry or a smaller map"
            )
        blocked = _blocked_reach(qm.graph, reach_q, cost_q, stand_p)
    return Game(
        n=n,
        width=grid.width,
        pursuer=pm,
        quarry=qm,
        pursuer_first=movers[0] is pm,
        turns=scenario.turns,
        cap=_captures(scenario, n),
        exit=exits,
        reach_p=reach_p,
        reach_q=reach_q,
        blocked=blocked,
        stand_p=stand_p,
        stand_q=stand_q,
        dice=dice and any(_has_checks(m.graph) for m in (pm, qm)),
    )


def _one_turn(g: MovementGraph, csr: Any, sources: np.ndarray) -> np.ndarray:
    """The ticks from each source cell (rows) to each cell (columns) within one turn on
    ``csr`` (``g``'s arrays, or them with cells taken away), inf beyond; 0 to itself."""
    from scipy.sparse.csgraph import dijkstra

    n, den = g.n, g.denominator
    first = g.node(g.grid.cell_of_index(0))  # the start layer's node of cell index 0
    nodes = (first + np.asarray(sources, dtype=np.int64)).tolist()
    dist = dijkstra(csr, directed=True, indices=nodes, limit=den + 1e-9)
    # Within a turn at any state or parity of the cell, as the turn loop's walk ends.
    best = dist.reshape(len(nodes), -1, n).min(axis=1)
    best[best > den + 1e-9] = np.inf
    best[np.arange(len(nodes)), sources] = 0
    return best


def _reach_all(g: MovementGraph, chunk: int = 256) -> tuple[Reach, np.ndarray, np.ndarray]:
    """``g``'s one-turn moves from every cell it may stand on, those cells, and the
    ticks of each move (aligned with the moves' ``idx``)."""
    n = g.n
    csr = g.csr()
    indeg = np.bincount(csr.indices % n, minlength=n) > 0
    cells = np.flatnonzero(indeg)
    lists: list[np.ndarray] = [np.array([c]) for c in range(n)]
    costs: list[np.ndarray] = [np.zeros(1) for _ in range(n)]
    stand = np.zeros(n, dtype=bool)
    for lo in range(0, len(cells), chunk):
        src = cells[lo : lo + chunk]
        dist = _one_turn(g, csr, src)
        for row, c in zip(dist, src.tolist(), strict=True):
            got = np.flatnonzero(np.isfinite(row))
            stand[got] = True
            others = got[got != c]
            lists[c] = np.concatenate(([c], others))
            costs[c] = np.concatenate(([0.0], row[others]))
    return _as_reach(lists), stand, np.concatenate(costs)


def _as_reach(lists: list[np.ndarray]) -> Reach:
    ptr = np.zeros(len(lists) + 1, dtype=np.int64)
    np.cumsum([len(x) for x in lists], out=ptr[1:])
    idx = np.concatenate(lists).astype(np.int64) if lists else np.zeros(0, np.int64)
    return Reach(ptr, idx)


def without_cell(g: MovementGraph, csr: Any, cell: int, rows: np.ndarray | None = None) -> Any:
    """``csr`` (``g``'s arrays) with the edges into cell index ``cell`` dropped, and the
    jumps from or over it: what :meth:`engine.sim.fields.Profile.without` makes of a
    size-1 token's profile for one blocked cell (tests/test_solve.py holds them equal).
    ``rows``: each edge's source node, where the caller has them."""
    from scipy.sparse import csr_array

    n = g.n
    size = csr.shape[0]
    keep = csr.indices % n != cell
    if rows is None:
        rows = np.repeat(np.arange(size), np.diff(csr.indptr))
    for j in g.jumps:
        if j.src % n == cell or any(p[0] == cell for p in j.parts):
            keep &= ~((rows == j.src) & (csr.indices == j.dst))
    indptr = np.zeros(size + 1, dtype=np.int64)
    np.cumsum(np.bincount(rows[keep], minlength=size), out=indptr[1:])
    indices = csr.indices[keep]
    return csr_array((csr.data[keep], indices, indptr.astype(indices.dtype)), shape=(size, size))


def _least_out(g: MovementGraph, csr: Any, rows: np.ndarray) -> np.ndarray:
    """Per cell, the fewest ticks of any edge out of it into another cell."""
    n = g.n
    out = np.full(n, np.inf)
    other = rows % n != csr.indices % n
    np.minimum.at(out, rows[other] % n, csr.data[other])
    return out


def _blocked_reach(
    g: MovementGraph, reach: Reach, cost: np.ndarray, stand_p: np.ndarray
) -> Blocked:
    """The quarry's moves for every pair where the pursuer's cell is within its turn.
    Where a way of the turn may pass that cell (the quarry reaches it with time left to
    step on) they are worked out again without it; where it is at the edge of the turn,
    they are ``reach``'s less that cell. Elsewhere no way of a turn meets the pursuer."""
    n, den = g.n, g.denominator
    csr = g.csr()
    rows = np.repeat(np.arange(csr.shape[0]), np.diff(csr.indptr))
    src_of = reach.idx
    from_of = np.repeat(np.arange(n), np.diff(reach.ptr))
    inside = (src_of != from_of) & stand_p[src_of]
    on_way = cost + _least_out(g, csr, rows)[src_of] <= den + 1e-9
    near, ring = inside & on_way, inside & ~on_way
    order = np.lexsort((from_of[near], src_of[near]))
    ps, qs = src_of[near][order], from_of[near][order]
    counts: list[np.ndarray] = []
    moves: list[np.ndarray] = []
    bounds = np.flatnonzero(np.diff(ps)) + 1
    for group in np.split(np.arange(len(ps)), bounds) if len(ps) else []:
        p = int(ps[group[0]])
        sources = qs[group]
        ok = np.isfinite(_one_turn(g, without_cell(g, csr, p, rows), sources))
        ok[:, p] = False
        moves.append(np.nonzero(ok)[1].astype(np.int32))  # each source's moves by index
        counts.append(ok.sum(axis=1))
    # At the edge of the quarry's turn: its moves less the pursuer's cell.
    rp, rq = src_of[ring], from_of[ring]
    span = np.diff(reach.ptr)[rq]
    at = np.repeat(reach.ptr[rq] - np.cumsum(span) + span, span) + np.arange(int(span.sum()))
    got = reach.idx[at].astype(np.int32)
    moves.append(got[got != np.repeat(rp, span)])
    counts.append(span - 1)
    ptr = np.zeros(len(ps) + len(rp) + 1, dtype=np.int64)
    np.cumsum(np.concatenate(counts), out=ptr[1:])
    idx = np.concatenate(moves)
    del moves
    ps_all = np.concatenate((ps, rp)).astype(np.int64)
    qs_all = np.concatenate((qs, rq)).astype(np.int64)
    # n * n fits 32 bits (MAX_POSITIONS): the flat indices at half the bytes.
    flat = np.repeat(ps_all.astype(np.int32), np.diff(ptr))
    flat *= np.int32(n)
    flat += idx
    return Blocked(ps_all, qs_all, ptr, idx, flat)


def _captures(scenario: Scenario, n: int) -> np.ndarray:
    """``cap[p, q]``: the pursuer on ``p`` within ``goals.capture`` steps of the quarry on
    ``q`` (:func:`~engine.occupancy.gap_steps`, as the turn loop asks)."""
    grid = scenario.model.grid
    d = scenario.capture
    cap = np.zeros((n, n), dtype=bool)
    box = 2 * d + 1  # a step moves a cell at most two rows (staggered) and one column
    for p in range(n):
        a = grid.cell_of_index(p)
        for dr in range(-box, box + 1):
            for dc in range(-box, box + 1):
                b = (a[0] + dc, a[1] + dr)
                if grid.in_bounds(b) and gap_steps(grid, a, 1, b, 1) <= d:
                    cap[p, grid.index(b)] = True
    return cap
