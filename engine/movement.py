"""The movement graph: cells as nodes, the time to enter a cell as the edge weight.

Over 800 lines on purpose: the graph's forms (terrain costs, Python neighbours, compiled CSR
slots with state layers and jump edges, networkx) must agree edge for edge, so they live
together.

For a map, a rule system, a token and a pace, every terrain record of the map gets one
exact time per cell, ``cell distance / cell_rate * cost`` turns (RULES.md section 0). The
times are scaled by a common denominator ``D`` into integer *ticks*, so every search sums
integers: the networkx graph, the pure-Python searches and scipy's compiled Dijkstra
(float64 holds integers exactly up to 2**53) all give the same, exact totals.

State the rules need is a node dimension, not a special case: with the ``alternate``
diagonal rule (5-10-5) a node is ``(cell, parity)``, the parity of diagonals taken so far;
the first diagonal costs one cell, the second two. Nodes are integers
``parity * width * height + row * width + col`` (compact, and what scipy wants);
:meth:`MovementGraph.to_networkx` gives users the same graph with ``((col, row), parity)``
node labels to run any networkx algorithm on.

A rule system adds its own layers the same way (:meth:`RuleSystem.search_state`): a prone
Whisperspace token searches a ``prone`` layer (crawl cells only) and a ``standing`` layer,
joined by a stand-up edge that stays in the cell. Nodes are then
``((state * parities + parity) * width * height + row * width + col)``; each layer costs its
cells with its own token, and every total stays an exact integer of ticks.

The ``euclid`` rule (a diagonal is sqrt 2 cells) is the one inexact case: its weights
are floats, and its totals are rounded to 1e-9 when compared.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

import numpy as np

from engine.errors import ArgumentError
from engine.grid import Cell, Grid
from engine.mapmodel import MapModel, Terrain
from engine.systems.base import CellCheck, RuleSystem, SearchState, Token, exact
from engine.walls import step_blocks

FT_IN_M = Fraction(3048, 10000)  # 1 ft = 0.3048 m, exactly


def convert(value: Fraction, unit: str, to: str) -> Fraction:
    """Exact ft <-> m conversion."""
    if unit == to:
        return value
    return value * FT_IN_M if (unit, to) == ("ft", "m") else value / FT_IN_M


def map_cell(model: MapModel, system: RuleSystem) -> tuple[Fraction, str]:
    """The map's cell size and unit, or the system's default cell where the map is silent."""
    if model.cell_size is not None:
        return exact(model.cell_size), model.cell_unit or system.unit
    return system.cell_size, system.unit


@dataclass(frozen=True)
class TerrainCost:
    """What one terrain record costs this token: time per cell, the check, or why not."""

    terrain: Terrain
    time: Fraction | None  # turns per cell (one cell of distance), None = cannot enter
    reason: str | None
    check: CellCheck | None
    #: A gap of a system that jumps gaps: never entered by a step (``time`` None), crossed
    #: by a jump edge at this time per cell.
    over: Fraction | None = None
    #: ``cost_add`` as time: added once to every step into the cell, whatever its length
    #: (a second diagonal under 5-10-5 pays it once, as PF2e's +5 ft a square).
    add: Fraction = Fraction(0)


@dataclass(frozen=True)
class Jump:
    """One jump edge (RULES.md 4): from ``src`` over a straight run of gap cells to ``dst``.

    A run-up jump starts one cell earlier: its first part is the straight step onto the
    take-off cell, so the run-up is real. ``parts`` are the cells entered in order
    ``(cell index, terrain id, ticks, cells of distance)``; ``gap_at`` is the first gap part.
    """

    src: int
    dst: int
    ticks: int | float
    parts: tuple[tuple[int, int, int | float, int | float], ...]
    gap_at: int
    width: Fraction  # the gap's width (a leap: the rise), in the system's unit
    run_up: bool
    check: CellCheck | None
    #: ``gap``: over gap cells (``gap_at`` the first); ``leap``: up onto a higher
    #: neighbour (``gap_at`` the landing; a failure stays below).
    kind: str = "gap"


@dataclass(frozen=True)
class StepTables:
    """A graph's steps as padded arrays, for the vectorised search
    (``engine.search.frontier_search``): the same edges as :meth:`MovementGraph.neighbours`,
    one numpy pass for a whole frontier.

    The map is framed by ``pad`` cells of "cannot enter" on every side (as far as a step
    reaches: 2 rows on staggered maps), so a step needs no bounds check: cell ``(col, row)``
    is ``(row + pad) * pw + col + pad`` in a ``pw = width + 2 pad`` wide frame of ``pn``
    cells, and a node is ``layer * pn + framed cell``. ``delta`` and
    ``diag`` are the ``(2, K)`` framed index offsets of the two stagger parities (the same
    table twice on square grids); ``ticks`` and ``adds`` the framed ``state_ticks`` and
    ``state_add`` (state-major, -1 = cannot enter); ``blocked`` has bit k of a framed cell
    set where a wall, a door or the corners rule forbids slot k, or a leap replaces the
    plain step (None: no such step). ``least`` is the fewest ticks any move pays per cell of
    distance (steps, gap crossings), for an admissible A* heuristic; ``jumps`` the jump
    edges as framed ``source -> [(target, ticks)]``.
    """

    pad: int
    pw: int
    pn: int
    delta: np.ndarray
    diag: np.ndarray
    ticks: np.ndarray
    adds: np.ndarray | None
    blocked: np.ndarray | None
    least: int
    jumps: dict[int, list[tuple[int, int]]]
    jump_src: np.ndarray
    #: What searches derive from these tables once (engine.search's compiled kernel's).
    derived: dict[str, Any] = field(default_factory=dict, compare=False, repr=False)

    @classmethod
    def of(cls, graph: MovementGraph) -> StepTables:  # noqa: C901
        g = graph.grid
        w, h, n = g.width, g.height, graph.n
        tables = [g.offsets(0), g.offsets(1)]
        if len(tables[0]) != len(tables[1]):  # pragma: no cover - every grid has equal tables
            raise ValueError("offset tables of different lengths")
        pad = max(max(abs(o[0]), abs(o[1])) for t in tables for o in t)
        pw, ph = w + 2 * pad, h + 2 * pad
        pn = pw * ph
        delta = np.array([[o[1] * pw + o[0] for o in t] for t in tables], dtype=np.int64)
        diag = np.array([[bool(o[2]) for o in t] for t in tables], dtype=bool)
        top = int(graph.state_ticks.max(initial=0))
        if graph.state_add is not None:
            top += int(graph.state_add.max(initial=0))
        itype = np.int32 if 2 * top < 2**31 else np.int64
        ticks = np.full((graph.n_sys, ph, pw), -1, dtype=itype)
        inner = (slice(None), slice(pad, pad + h), slice(pad, pad + w))
        ticks[inner] = graph.state_ticks.reshape(graph.n_sys, h, w)
        adds = None
        if graph.state_add is not None:
            framed = np.zeros((graph.n_sys, ph, pw), dtype=itype)
            framed[inner] = graph.state_add.reshape(graph.n_sys, h, w)
            adds = framed.ravel()
        blocked = None
        if graph.step_bits is not None or graph.cut:
            bits = np.zeros(n, dtype=np.uint16)
            if graph.step_bits is not None:
                bits |= graph.step_bits.astype(np.uint16)
            for a, b in graph.cut:
                ca = g.cell_of_index(a)
                for slot, (oc, orow, _) in enumerate(g.offsets(g.parity(ca))):
                    cb = (ca[0] + oc, ca[1] + orow)
                    if g.in_bounds(cb) and g.index(cb) == b:
                        bits[a] |= np.uint16(1 << slot)
            framed_bits = np.zeros((ph, pw), dtype=np.uint16)
            framed_bits[inner[1:]] = bits.reshape(h, w)
            blocked = framed_bits.ravel()
        den = graph.denominator
        least = min(
            (int(c.time * den) for cs in graph.state_costs for c in cs if c.time is not None),
            default=0,
        )
        jumps: dict[int, list[tuple[int, int]]] = {}
        for jump in graph.jumps:
            for _, _, t, length in jump.parts:
                least = min(least, int(t // length))
            jumps.setdefault(cls._frame(jump.src, w, n, pad, pw, pn), []).append(
                (cls._frame(jump.dst, w, n, pad, pw, pn), int(jump.ticks))
            )
        return cls(
            pad,
            pw,
            pn,
            delta,
            diag,
            ticks.ravel(),
            adds,
            blocked,
            max(0, least),
            jumps,
            np.array(sorted(jumps), dtype=np.int64),
        )

    @staticmethod
    def _frame(node: int, w: int, n: int, pad: int, pw: int, pn: int) -> int:
        layer, idx = divmod(node, n)
        r, c = divmod(idx, w)
        return layer * pn + (r + pad) * pw + c + pad

    def frame(self, node: int, w: int, n: int) -> int:
        """A graph node as a framed node (``w``: the map's width, ``n``: its cells)."""
        return self._frame(node, w, n, self.pad, self.pw, self.pn)

    def unframe(self, node: int, w: int, n: int) -> int:
        """A framed node as a graph node."""
        layer, cell = divmod(node, self.pn)
        r, c = divmod(cell, self.pw)
        return layer * n + (r - self.pad) * w + c - self.pad


def _per_cell(per_terrain: list[list[int]], ids: np.ndarray, n: int) -> np.ndarray:
    """(states, cells) int64: each state's value per terrain, read at each cell's terrain
    id (``ids``, flat), written in place: stacking one row per state would copy every row
    again, a whole map's worth of int64 a state."""
    out = np.empty((len(per_terrain), n), dtype=np.int64)
    for row, values in zip(out, per_terrain, strict=True):
        np.take(np.array(values, dtype=np.int64), ids, out=row, mode="wrap")  # unbuffered
    return out


class MovementGraph:
    """The graph for one (map, system, token, pace). Build once, query many times.

    >>> from engine.grid import Grid
    >>> from engine.mapmodel import MapModel, Terrain
    >>> from engine import systems
    >>> gen = systems.create("generic")
    >>> g = MovementGraph(MapModel.uniform(Grid("orthogonal", 4, 1, 32, 32), Terrain()),
    ...                   gen, gen.token("speed=10"), "walk")
    >>> g.turns(g.ticks_of((1, 0)))   # 5 ft at 10 ft per turn
    Fraction(1, 2)
    """

    def __init__(
        self, model: MapModel, system: RuleSystem, token: Token, pace: str | None = None
    ) -> None:
        pace = pace or system.default_pace
        if pace not in system.paces:
            raise ArgumentError(
                role="pace",
                given=pace,
                problem=f"{system.name} paces are {', '.join(system.paces)}",
            )
        self.model = model
        self.grid: Grid = model.grid
        self.system = system
        self.token = token
        self.pace = pace
        self.cell_size, self.unit = map_cell(model, system)
        self._cell_in_system_unit = (
            self.cell_size
            if system.unit_follows_map
            else convert(self.cell_size, self.unit, system.unit)
        )
        self.n = self.grid.width * self.grid.height
        self.parity_state = self.grid.kind != "hex" and self.grid.diagonals == "alternate"
        self.euclid = self.grid.kind != "hex" and self.grid.diagonals == "euclid"
        self.n_par = 2 if self.parity_state else 1
        self.search: SearchState = system.search_state(token, pace) or SearchState(
            ("",), (token,), (None,)
        )
        self.n_sys = len(self.search.names)
        self.n_states = self.n_par * self.n_sys
        self.state_costs: list[list[TerrainCost]] = [[] for _ in range(self.n_sys)]
        self.costs: list[TerrainCost] = []
        self._terrain_list: list[int] | None = None
        self._refresh_terrains()
        self._csr: Any = None
        self._nx: Any = None

    # ----------------------------------------------------------------- terrain costs

    def _terrain_cost(self, terrain: Terrain, state: int | None = None) -> TerrainCost:
        s = self.search.main if state is None else state
        token = self.search.tokens[s]
        modes = self.search.modes[s]
        if modes is not None and terrain.move not in modes and terrain.move != "blocked":
            why = f"{terrain.name}: a {self.search.names[s]} token must change state first"
            return TerrainCost(terrain, None, why, None)
        reason = self.system.refusal(token, terrain, self.pace)
        if reason is not None:
            return TerrainCost(terrain, None, reason, None)
        rate = self.system.cell_rate(token, terrain, self.pace)
        # A climb or a ladder goes as far as the cell's `height` (MAP-FORMAT.md), at least
        # one cell: a 15-ft cliff drawn as one 5-ft cell is 15 ft of climbing. The height is
        # charged here only: a system's rates are per distance.
        length = Fraction(1)
        if terrain.move in ("climb", "ladder") and terrain.height is not None:
            length = max(length, exact(terrain.height) / self.cell_size)
        time = self._cell_in_system_unit * length * exact(terrain.cost) / rate
        if terrain.move == "gap" and self.system.jumps_gaps:
            why = f"{terrain.name}: a gap is jumped over (from the cell before it), not entered"
            return TerrainCost(terrain, None, why, None, over=time)
        # `cost_add` (MAP-FORMAT.md): extra cells of movement to enter, after `cost`, at the
        # cell's own rate; once a step, so a diagonal's length does not multiply it.
        add = self._cell_in_system_unit * exact(terrain.cost_add) / rate
        check = self.system.cell_check(token, terrain, self.pace)
        return TerrainCost(terrain, time, None, check, add=add)

    def terrain_list(self) -> list[int]:
        """The terrain id of every cell of the map, as a list (made once; made again after
        :meth:`update_cells`): per-cell reads in Python loops, without numpy's cost a read."""
        if self._terrain_list is None:
            self._terrain_list = self.model.terrain_ids.ravel().tolist()
        return self._terrain_list

    def __getstate__(self) -> dict[str, Any]:
        """Pickled without the terrain list (:meth:`terrain_list` makes it again)."""
        state = self.__dict__.copy()
        state["_terrain_list"] = None
        return state

    def _refresh_terrains(self) -> None:
        self._terrain_list = None
        terrains = self.model.terrains
        for s in range(self.n_sys):
            known = {c.terrain: c for c in self.state_costs[s]}
            self.state_costs[s] = [known.get(t) or self._terrain_cost(t, s) for t in terrains]
        self.costs = self.state_costs[self.search.main]
        times = [c.time for cs in self.state_costs for c in cs if c.time is not None]
        times += [c.over for cs in self.state_costs for c in cs if c.over is not None]
        times += [c.add for cs in self.state_costs for c in cs if c.add]
        times += [t for _, _, t in self.search.in_place]
        self.denominator = math.lcm(*(t.denominator for t in times)) if times else 1
        per_state = [
            [-1 if c.time is None else int(c.time * self.denominator) for c in cs]
            for cs in self.state_costs
        ]
        add_state = [
            [0 if c.time is None else int(c.add * self.denominator) for c in cs]
            for cs in self.state_costs
        ]
        # Totals stay exact while they fit a float's 53 bits (scipy sums in float64).
        top = max((max(t, default=0) for t in per_state), default=0)
        top += max((max(t, default=0) for t in add_state), default=0)
        if top * max(1, self.n) * 2 * self.n_sys >= 2**53:
            slowest = max(times)
            raise ArgumentError(
                role="token",
                problem=f"with these {self.system.name} stats one cell costs up to "
                f"{float(slowest):.3g} turns, too extreme for an exact search; use game-sized stats",
            )
        ids = self.model.terrain_ids.ravel()
        self.state_ticks = _per_cell(per_state, ids, self.n)
        self.terrain_ticks = np.array(per_state[self.search.main], dtype=np.int64)
        self.enter_ticks = self.state_ticks[self.search.main]
        # The Python searches' per-cell lists are made on first use: a list a state over
        # every cell is large on a big map, and the vectorised search never needs it.
        self._lists: list[list[int]] | None = None
        self._adds: list[list[int]] | None = None
        self._tables: StepTables | None = None
        #: ``cost_add`` ticks per cell and state (None: no cell of the map has one).
        self.has_add = any(any(row) for row in add_state)
        self.state_add: np.ndarray | None = None
        if self.has_add:
            self.state_add = _per_cell(add_state, ids, self.n)
        self._read_walls()
        #: In-place edges (from state, to state, ticks): standing up, and the like.
        self.in_place = [(a, b, int(t * self.denominator)) for a, b, t in self.search.in_place]
        #: How many turns one move lasts for a check on each terrain (None: once per run).
        self.check_period = [
            self.system.check_period(self.search.tokens[self.search.main], t, self.pace)
            for t in terrains
        ]
        run_keys: dict[tuple[str, str], int] = {}
        self.run_key = np.array(
            [
                run_keys.setdefault((c.terrain.move, c.terrain.difficulty), len(run_keys))
                for c in self.costs
            ],
            dtype=np.int32,
        )[ids]
        self._build_jumps()

    @property
    def _state_lists(self) -> list[list[int]]:
        """Ticks per state and cell as Python lists (the Python searches' form)."""
        if self._lists is None:
            self._lists = [row.tolist() for row in self.state_ticks]
        return self._lists

    @property
    def _ticks_list(self) -> list[int]:
        return self._state_lists[self.search.main]

    @property
    def _add_lists(self) -> list[list[int]] | None:
        """``cost_add`` ticks per state and cell as Python lists (None: none on the map)."""
        if self._adds is None and self.state_add is not None:
            self._adds = [row.tolist() for row in self.state_add]
        return self._adds

    def step_tables(self) -> StepTables:
        """The graph's steps as the vectorised search reads them (built once)."""
        if self._tables is None:
            self._tables = StepTables.of(self)
        return self._tables

    # ----------------------------------------------------------------- walls

    def _read_walls(self) -> None:
        """The steps walls, doors and the ``corners`` rule forbid (:mod:`engine.walls`):
        ``step_bits`` per cell (bit k = slot k of ``grid.offsets``), and the same as a dict of
        the cells that have any, for the Python searches."""
        self.step_bits = step_blocks(self.model)
        self.blocked_slots: dict[int, int] = {}
        if self.step_bits is not None:
            nz = np.nonzero(self.step_bits)[0]
            self.blocked_slots = dict(zip(nz.tolist(), self.step_bits[nz].tolist(), strict=True))

    def step_blocked(self, idx: int, slot: int) -> bool:
        """Whether a wall (or the corners rule) forbids the step from cell ``idx`` in
        direction ``slot``."""
        bits = self.blocked_slots.get(idx, 0) if self.blocked_slots else 0
        return bool(bits >> slot & 1)

    def add_ticks(self, idx: int, state: int | None = None) -> int:
        """``cost_add`` ticks of a step into cell ``idx`` (0 on most maps)."""
        if self._add_lists is None:
            return 0
        return self._add_lists[self.search.main if state is None else state][idx]

    # ----------------------------------------------------------------- jumps

    #: Terrain modes a jump may take off from, land on, and (with a run-up) run on.
    JUMP_GROUND = frozenset({"walk"})
    JUMP_LANDING = frozenset({"walk", "crawl", "swim"})

    def _build_jumps(self) -> None:  # noqa: C901
        """Jump edges over every straight run of gap cells (systems with ``jumps_gaps``).

        From each take-off cell T beside a gap, in each neighbour direction: the gap cells
        in a straight line (the same slot of the heading-ordered offset table, so hex and
        staggered rows keep their line), then the landing L. A standing jump goes from T to
        L; a run-up jump from the cell P before T on the same line (its last step P -> T is
        straight, in the jump's direction) to L. The system prices the width (gap cells x
        cell size, by the diagonal rule on square diagonals) and refuses what is too long.
        """
        self.jumps: list[Jump] = []
        self.jump_out: dict[int, list[Jump]] = {}
        self.jump_at: dict[tuple[int, int], Jump] = {}
        #: Steps ``(from cell index, to cell index)`` that are leaps, not plain steps.
        self.cut: set[tuple[int, int]] = set()
        self._build_leaps()
        if not self.system.jumps_gaps:
            return
        ids = self.model.terrain_ids.ravel()
        gap_tids = [k for k, c in enumerate(self.costs) if c.terrain.move == "gap"]
        if not gap_tids:
            return
        gap_cells = np.nonzero(np.isin(ids, gap_tids))[0].tolist()
        g = self.grid
        w, h, n = g.width, g.height, self.n
        den = self.denominator
        moves = [c.terrain.move for c in self.costs]

        def ahead(idx: int, slot: int) -> tuple[int, bool] | None:
            c, r = idx % w, idx // w
            dc, dr, diag = g.offsets(g.parity((c, r)))[slot]
            nc, nr = c + dc, r + dr
            if not (0 <= nc < w and 0 <= nr < h) or self.step_blocked(idx, slot):
                return None  # off the map, or a wall in the way
            return nr * w + nc, bool(diag)

        starts: set[tuple[int, int]] = set()
        for gi in gap_cells:
            gc = (gi % w, gi // w)
            for t_cell in g.neighbours(gc):
                ti = g.index(t_cell)
                if moves[ids[ti]] not in self.JUMP_GROUND:
                    continue
                for slot, (dc, dr, diag) in enumerate(g.offsets(g.parity(t_cell))):
                    if (t_cell[0] + dc, t_cell[1] + dr) == gc:
                        if self.euclid and diag:
                            break  # sqrt 2 widths are not exact: no diagonal jumps
                        starts.add((ti, slot))
                        break
        for s in range(self.n_sys):
            ticks = self._state_lists[s]
            costs = self.state_costs[s]
            token = self.search.tokens[s]
            for ti, slot in sorted(starts):
                if ticks[ti] < 0:
                    continue
                line: list[tuple[int, bool]] = []
                cur = ti
                walled = False
                while True:
                    nxt = ahead(cur, slot)
                    if nxt is None:
                        walled = self.step_blocked(cur, slot)
                        break
                    line.append(nxt)
                    cur = nxt[0]
                    if ids[cur] not in gap_tids:
                        break
                if walled or len(line) < 2 or ids[line[-1][0]] in gap_tids:
                    continue
                land = line[-1][0]
                if moves[ids[land]] not in self.JUMP_LANDING or ticks[land] < 0:
                    continue
                gaps = line[:-1]
                if any(costs[ids[j]].over is None for j, _ in gaps):
                    continue
                back = self._behind(ti, slot)
                if back is not None and (back[0], ti) in self.cut:
                    back = None  # the step onto the take-off cell is a leap, not a run-up
                for par in range(self.n_par):
                    for run_up in (False, True):
                        src_idx = ti
                        parts: list[tuple[int, int, int | float, int | float]] = []
                        p = par
                        if run_up:
                            if back is None:
                                continue
                            src_idx, diag0 = back
                            if moves[ids[src_idx]] not in self.JUMP_GROUND:
                                continue
                            length = self.step_length(diag0, p)
                            t_in = ticks[ti] * length + self.add_ticks(ti, s)
                            parts.append((ti, int(ids[ti]), t_in, length))
                            if diag0 and self.parity_state:
                                p = 1 - p
                        width = Fraction(0)
                        for j, diag in gaps:
                            length = self.step_length(diag, p)
                            over = int((costs[ids[j]].over or 0) * den)
                            parts.append((j, int(ids[j]), over * length, length))
                            width += Fraction(length) * self._cell_in_system_unit
                            if diag and self.parity_state:
                                p = 1 - p
                        length = self.step_length(line[-1][1], p)
                        t_in = ticks[land] * length + self.add_ticks(land, s)
                        parts.append((land, int(ids[land]), t_in, length))
                        if line[-1][1] and self.parity_state:
                            p = 1 - p
                        terrains = tuple(costs[ids[j]].terrain for j, _ in gaps)
                        why, check = self.system.jump(token, width, run_up, terrains)
                        if why is not None:
                            continue
                        src = (s * self.n_par + par) * n + src_idx
                        dst = (s * self.n_par + p) * n + land
                        jump = Jump(
                            src,
                            dst,
                            sum(t for _, _, t, _ in parts),
                            tuple(parts),
                            1 if run_up else 0,
                            width,
                            run_up,
                            check,
                        )
                        self._add_jump(jump)

    def _add_jump(self, jump: Jump) -> None:
        self.jumps.append(jump)
        self.jump_out.setdefault(jump.src, []).append(jump)
        self.jump_at[(jump.src, jump.dst)] = jump

    def _build_leaps(self) -> None:  # noqa: C901
        """Leap edges up onto higher walkable neighbours (:meth:`RuleSystem.leap`): where a
        standing leap asks a roll or is too high, the plain step is cut and replaced by a
        standing leap (when it can be made) and a run-up leap from the cell before, straight
        on (when it can be made)."""
        moves = [c.terrain.move for c in self.costs]
        scale = self._cell_in_system_unit / self.cell_size
        level = [
            exact(c.terrain.height) * scale if c.terrain.height else Fraction(0) for c in self.costs
        ]
        ground = [k for k, m in enumerate(moves) if m in self.JUMP_GROUND]
        if len({level[k] for k in ground}) < 2:
            return
        if self.system.leap(self.token, Fraction(1), False) is None:
            return
        g = self.grid
        n = self.n
        ids = self.model.terrain_ids.ravel()
        low = min(level[k] for k in ground)
        raised = [k for k in ground if level[k] > low]
        found: list[tuple[int, int, int, bool, Fraction]] = []
        for b in np.nonzero(np.isin(ids, raised))[0].tolist():
            for cell in g.neighbours(g.cell_of_index(b)):
                a = g.index(cell)
                rise = level[ids[b]] - level[ids[a]]
                if rise <= 0 or moves[ids[a]] not in self.JUMP_GROUND:
                    continue
                slot, diag = next(
                    (k, bool(d))
                    for k, (dc, dr, d) in enumerate(g.offsets(g.parity(cell)))
                    if g.in_bounds((cell[0] + dc, cell[1] + dr))
                    and g.index((cell[0] + dc, cell[1] + dr)) == b
                )
                if (self.euclid and diag) or self.step_blocked(a, slot):
                    continue
                for s in range(self.n_sys):
                    standing = self.system.leap(self.search.tokens[s], rise, False)
                    if standing is not None and standing != (None, None):
                        self.cut.add((a, b))
                        found.append((a, b, slot, diag, rise))
                        break
        # A run-up is a plain step straight before the leap (not itself a leap).
        for a, b, slot, diag, rise in found:
            back = self._behind(a, slot)
            if back is not None and (back[0], a) in self.cut:
                back = None
            for s in range(self.n_sys):
                ticks = self._state_lists[s]
                if ticks[b] < 0:
                    continue
                token = self.search.tokens[s]
                for par in range(self.n_par):
                    for run_up in (False, True):
                        why, check = self.system.leap(token, rise, run_up) or (None, None)
                        if why is not None:
                            continue
                        parts: list[tuple[int, int, int | float, int | float]] = []
                        p, src_idx = par, a
                        if run_up:
                            if back is None or moves[ids[back[0]]] not in self.JUMP_GROUND:
                                continue
                            if ticks[a] < 0:
                                continue
                            src_idx = back[0]
                            length = self.step_length(back[1], p)
                            t_in = ticks[a] * length + self.add_ticks(a, s)
                            parts.append((a, int(ids[a]), t_in, length))
                            if back[1] and self.parity_state:
                                p = 1 - p
                        length = self.step_length(bool(diag), p)
                        t_in = ticks[b] * length + self.add_ticks(b, s)
                        parts.append((b, int(ids[b]), t_in, length))
                        if diag and self.parity_state:
                            p = 1 - p
                        layer = s * self.n_par
                        self._add_jump(
                            Jump(
                                (layer + par) * n + src_idx,
                                (layer + p) * n + b,
                                sum(t for _, _, t, _ in parts),
                                tuple(parts),
                                len(parts) - 1,
                                rise,
                                run_up,
                                check,
                                kind="leap",
                            )
                        )

    def _behind(self, idx: int, slot: int) -> tuple[int, bool] | None:
        """The cell P with P -> ``idx`` a step in direction ``slot`` (and its diagonality)."""
        g = self.grid
        cell = g.cell_of_index(idx)
        for nb in g.neighbours(cell):
            dc, dr, diag = g.offsets(g.parity(nb))[slot]
            if (nb[0] + dc, nb[1] + dr) == cell:
                if self.step_blocked(g.index(nb), slot):
                    return None  # a wall before the take-off: no run-up
                return g.index(nb), bool(diag)
        return None

    def signature(self) -> tuple[Any, ...]:
        """What decides every edge of the graph (graphs with equal signatures are equal)."""
        return (
            self.denominator,
            self.state_ticks.tobytes(),
            tuple(self.in_place),
            self.search.names,
            self.search.start,
            tuple(
                (j.src, j.dst, j.ticks, j.check is None or j.check.p_success) for j in self.jumps
            ),
            tuple(sorted(self.cut)),
            None if self.step_bits is None else self.step_bits.tobytes(),
            None if self.state_add is None else self.state_add.tobytes(),
        )

    def update_cells(self, cells: list[Cell]) -> None:
        """Re-read the terrain of ``cells`` after the model changed (doors, fire, ice).

        Only the new terrain records are costed, and the cached CSR arrays are patched
        in place for edges into those cells; the networkx graph, if built, likewise.
        """
        old_den, old_ticks = self.denominator, self.enter_ticks
        factor = target = None
        if (
            self.n_sys > 1
            or self.system.jumps_gaps
            or self.cut
            or self.has_add
            or self.model.corners == "block"
        ):
            # Layered graphs, and graphs with jump edges, are rebuilt lazily (they are
            # small: prone tokens, pits and the like).
            self._refresh_terrains()
            self._csr = self._nx = None
            return
        if self._csr is not None:
            # Each edge's step factor (1, 2, sqrt 2) survives; only the cell time changes.
            target = self._csr.indices % self.n
            factor = self._csr.data / old_ticks[target]
        self._refresh_terrains()
        same = self.denominator == old_den and np.array_equal(old_ticks < 0, self.enter_ticks < 0)
        if self._csr is not None:
            if same:
                self._csr.data = factor * self.enter_ticks[target]
            else:
                self._csr = None  # passability or the tick scale changed: rebuild lazily
        if self._nx is not None:
            self._nx = self._patch_nx(cells) if self.denominator == old_den else None

    # ----------------------------------------------------------------- time

    def turns(self, ticks: float) -> Fraction:
        """Ticks to exact turns (euclid totals are rounded to 1e-9 first)."""
        if isinstance(ticks, float):
            if ticks.is_integer():
                return Fraction(int(ticks), self.denominator)
            return Fraction(round(ticks / self.denominator * 10**9), 10**9)
        return Fraction(ticks, self.denominator)

    def ticks_of(self, cell: Cell) -> int:
        """Ticks to enter ``cell`` by one orthogonal/hex step (-1 = cannot enter)."""
        idx = self.grid.index(cell)
        t = self._ticks_list[idx]
        return t if t < 0 else t + self.add_ticks(idx)

    def step_length(self, diagonal: bool, parity: int) -> float | int:
        """Cells of distance one step covers (the diagonal rule)."""
        if not diagonal:
            return 1
        if self.euclid:
            return math.sqrt(2)
        if self.parity_state:
            return 2 if parity else 1
        return 1

    # ----------------------------------------------------------------- nodes

    def node(self, cell: Cell, parity: int = 0, state: int | None = None) -> int:
        """The node of ``cell`` (in the system's ``state``; default: where a path starts)."""
        st = self.search.start if state is None else state
        return (st * self.n_par + parity) * self.n + self.grid.index(cell)

    def cell_of(self, node: int) -> Cell:
        return self.grid.cell_of_index(node % self.n)

    def state_of(self, node: int) -> int:
        """The system state (layer) of a node."""
        return node // self.n // self.n_par

    def parity_of(self, node: int) -> int:
        return node // self.n % self.n_par

    def neighbours(self, node: int) -> list[tuple[int, float | int]]:
        """Out-edges ``(node, ticks)`` of a node: steps into enterable cells, then the
        in-place edges (same cell, another state)."""
        layer, idx = divmod(node, self.n)
        s, p = divmod(layer, self.n_par)
        base = s * self.n_par * self.n
        # The Python lists where a Python search made them; else the array (a path's
        # evaluation on a big map reads a few thousand cells, not worth 4M-item lists).
        ticks: Any = self._lists[s] if self._lists is not None else None
        row = self.state_ticks[s] if ticks is None else None
        adds = None if self._add_lists is None else self._add_lists[s]
        bits = self.blocked_slots.get(idx, 0) if self.blocked_slots else 0
        w = self.grid.width
        r, c = divmod(idx, w)
        out: list[tuple[int, float | int]] = []
        for slot, (dc, dr, diag) in enumerate(self.grid.offsets(self.grid.parity((c, r)))):
            nc, nr = c + dc, r + dr
            if not (0 <= nc < w and 0 <= nr < self.grid.height):
                continue
            j = nr * w + nc
            t = ticks[j] if row is None else int(row[j])
            if t < 0 or (bits and bits >> slot & 1) or (self.cut and (idx, j) in self.cut):
                continue
            add = adds[j] if adds is not None else 0
            if diag and self.parity_state:
                out.append((base + (1 - p) * self.n + j, (t * 2 if p else t) + add))
            elif diag and self.euclid:
                out.append((base + p * self.n + j, t * math.sqrt(2) + add))
            else:
                out.append((base + p * self.n + j, t + add))
        for a, b, t in self.in_place:
            if a == s:
                out.append(((b * self.n_par + p) * self.n + idx, t))
        if self.jump_out:
            out.extend((j.dst, j.ticks) for j in self.jump_out.get(node, ()))
        return out

    def walk(self, cells: list[Cell]) -> tuple[list[int], list[float | int]] | None:
        """:meth:`node_path`'s nodes and the ticks of each edge between them (None when a
        step cannot be taken). Without in-place edges or jumps each step is read straight
        off its slot, as :meth:`neighbours` prices it, rather than listing every neighbour."""
        if self.in_place or self.jumps or not cells:
            nodes = self.node_path(cells)
            if nodes is None:
                return None
            return nodes, [self._edge_ticks(u, v) for u, v in zip(nodes, nodes[1:], strict=False)]
        g = self.grid
        w, h, n, n_par = g.width, g.height, self.n, self.n_par
        lists = self._lists
        adds = self._add_lists
        slot_of = [
            {(oc, orow): (slot, diag) for slot, (oc, orow, diag) in enumerate(g.offsets(par))}
            for par in (0, 1)
        ]
        square, axis_y = g.kind == "square", g.stagger_axis == "y"
        node = self.node(cells[0])
        out: list[int] = [node]
        ticks: list[float | int] = []
        last = cells[0]
        for cell in cells[1:]:
            if cell == last:
                continue
            last = cell
            layer, idx = divmod(node, n)
            s, p = divmod(layer, n_par)
            r, c = divmod(idx, w)
            par = 0 if square else ((r if axis_y else c) & 1)
            hop = slot_of[par].get((cell[0] - c, cell[1] - r))
            if hop is None or not (0 <= cell[0] < w and 0 <= cell[1] < h):
                return None
            slot, diag = hop
            j = cell[1] * w + cell[0]
            bits = self.blocked_slots.get(idx, 0) if self.blocked_slots else 0
            t = lists[s][j] if lists is not None else int(self.state_ticks[s, j])
            if t < 0 or (bits and bits >> slot & 1) or (self.cut and (idx, j) in self.cut):
                return None
            add = adds[s][j] if adds is not None else 0
            base = s * n_par * n
            cost: float | int
            if diag and self.parity_state:
                node, cost = base + (1 - p) * n + j, (t * 2 if p else t) + add
            elif diag and self.euclid:
                node, cost = base + p * n + j, t * math.sqrt(2) + add
            else:
                node, cost = base + p * n + j, t + add
            out.append(node)
            ticks.append(cost)
        return out, ticks

    def node_path(self, cells: list[Cell]) -> list[int] | None:  # noqa: C901
        """The nodes of a path given as cells: each step the cheapest way into the next cell,
        changing state in place first where that is cheaper or needed (standing up only to
        leave the crawl cells). None when a step cannot be taken."""
        if not cells:
            return []
        seq = [cells[0]]
        for cell in cells[1:]:
            if cell != seq[-1]:
                seq.append(cell)
        if not self.jumps:
            node = self.node(seq[0])
            out = [node]
            for cell in seq[1:]:
                hops = self.step_from(node, cell)
                if hops is None:
                    return None
                out.extend(hops)
                node = out[-1]
            return out
        # With jumps a cell sequence can be walked several ways (a run-up jump, or a step
        # and then a standing one): the cheapest, then the safest, over positions in it.
        start = self.node(seq[0])
        best: list[dict[int, tuple[Any, Fraction, tuple[int, int, list[int]] | None]]] = [
            {} for _ in seq
        ]
        best[0][start] = (0, Fraction(-1), None)
        for i in range(len(seq) - 1):
            for node, (cost, neg_p, _) in sorted(best[i].items()):
                options: list[tuple[int, Any, Fraction, list[int]]] = []
                hops = self.step_from(node, seq[i + 1])
                if hops is not None:
                    t = sum(
                        self._edge_ticks(u, v) for u, v in zip([node, *hops], hops, strict=False)
                    )
                    options.append((i + 1, t, Fraction(1), hops))
                for jump in self.jump_out.get(node, ()):
                    end = i + 1 + len(jump.parts)
                    if end > len(seq) or any(
                        self.grid.index(c) != part[0]
                        for c, part in zip(seq[i + 1 : end], jump.parts, strict=True)
                    ):
                        continue
                    p = Fraction(1) if jump.check is None else jump.check.p_success
                    options.append((end - 1, jump.ticks, p, [jump.dst]))
                for j, t, p, hops in options:
                    cand = (cost + t, neg_p * p, (i, node, hops))
                    old = best[j].get(hops[-1])
                    if old is None or cand[:2] < old[:2]:
                        best[j][hops[-1]] = cand
        if not best[-1]:
            return None
        node = min(best[-1], key=lambda k: best[-1][k][:2])
        rev: list[int] = []
        i = len(seq) - 1
        while True:
            back = best[i][node][2]
            if back is None:
                rev.append(node)
                break
            i0, node0, hops = back
            rev.extend(reversed(hops))
            i, node = i0, node0
        return rev[::-1]

    def _edge_ticks(self, u: int, v: int) -> float | int:
        return next(t for w, t in self.neighbours(u) if w == v)

    def jump_along(self, node: int, cells: list[Cell], i: int) -> Jump | None:
        """The jump from ``node`` whose cells are ``cells[i:]``'s next ones (a run-up jump
        from the cell before the take-off first: it is as fast and never harder), or None."""
        if not self.jump_out:
            return None
        best: Jump | None = None
        for jump in self.jump_out.get(node, ()):
            end = i + len(jump.parts)
            if end > len(cells):
                continue
            if any(
                self.grid.index(c) != part[0]
                for c, part in zip(cells[i:end], jump.parts, strict=True)
            ):
                continue
            p = 1 if jump.check is None else jump.check.p_success
            if best is None or (jump.ticks, -p) < (
                best.ticks,
                -(1 if best.check is None else best.check.p_success),
            ):
                best = jump
        return best

    def step_from(self, node: int, cell: Cell) -> list[int] | None:
        """The cheapest nodes from ``node`` into the neighbouring ``cell`` (any state
        changes in place first, then the step), or None when the step cannot be taken."""
        j = self.grid.index(cell)
        best: tuple[float, int, list[int]] | None = None
        for pre, chain in self._in_place_closure(node):
            here = chain[-1] if chain else node
            for v, t in self.neighbours(here):
                if v % self.n != j:
                    continue
                cand = (pre + t, len(chain), [*chain, v])
                if best is None or cand[:2] < best[:2]:
                    best = cand
        return None if best is None else best[2]

    def _in_place_closure(self, node: int) -> list[tuple[float, list[int]]]:
        """States reachable from ``node`` without leaving its cell: (ticks, nodes on the way)."""
        found: list[tuple[float, list[int]]] = [(0, [])]
        if not self.in_place:
            return found
        seen = {node}
        frontier: list[tuple[float, int, list[int]]] = [(0, node, [])]
        while frontier:
            cost, u, chain = frontier.pop()
            for v, t in self.neighbours(u):
                if v % self.n == u % self.n and v not in seen:
                    seen.add(v)
                    found.append((cost + t, [*chain, v]))
                    frontier.append((cost + t, v, [*chain, v]))
        return found

    # ----------------------------------------------------------------- compiled form

    def _slot_arrays(self) -> tuple[np.ndarray, np.ndarray]:  # noqa: C901
        """Targets and weights as dense ``(states * cells, slots)`` arrays (-1 = no edge).

        Built by shifting the (height, width) tick grid for each neighbour offset, so it
        costs a few numpy passes over the map whatever its size; hex rows (or columns) of
        each stagger parity take their own offset table. In-place edges (a state change in
        the cell) take the last slots.
        """
        g = self.grid
        w, h, n = g.width, g.height, self.n
        index = np.arange(n, dtype=np.int64).reshape(h, w)
        k0 = max(len(g.offsets(0)), len(g.offsets(1)))
        extra = max(
            (sum(1 for a, _, _ in self.in_place if a == s) for s in range(self.n_sys)), default=0
        )
        k_jump = k0 + extra
        k = k_jump + max((len(v) for v in self.jump_out.values()), default=0)
        size = n * self.n_states
        itype = np.int32 if size < 2**31 else np.int64
        targets = np.full((size, k), -1, dtype=itype)
        weights = np.zeros((size, k), dtype=np.float64)
        if g.kind == "square":
            groups = [(0, (slice(None), slice(None)))]
        elif g.stagger_axis == "y":
            groups = [(0, (slice(0, None, 2), slice(None))), (1, (slice(1, None, 2), slice(None)))]
        else:
            groups = [(0, (slice(None), slice(0, None, 2))), (1, (slice(None), slice(1, None, 2)))]
        for s in range(self.n_sys):
            ticks = self.state_ticks[s].reshape(h, w)
            padded = np.full((h + 4, w + 4), -1, dtype=np.int64)
            padded[2 : h + 2, 2 : w + 2] = ticks
            adds = None
            if self.state_add is not None:
                adds = np.zeros((h + 4, w + 4), dtype=np.int64)
                adds[2 : h + 2, 2 : w + 2] = self.state_add[s].reshape(h, w)
            for par in range(self.n_par):
                layer = s * self.n_par + par
                rows = slice(layer * n, (layer + 1) * n)
                tgt_view = targets[rows].reshape(h, w, k)
                wt_view = weights[rows].reshape(h, w, k)
                for grp, sel in groups:
                    for slot, (dc, dr, diag) in enumerate(g.offsets(grp)):
                        t = padded[2 + dr : 2 + dr + h, 2 + dc : 2 + dc + w][sel]
                        ok = t >= 0
                        new_par = (1 - par) if (diag and self.parity_state) else par
                        dest = index[sel] + (dr * w + dc) + (s * self.n_par + new_par) * n
                        tgt_view[sel + (slot,)] = np.where(ok, dest, -1)
                        weight = t * self.step_length(bool(diag), par)
                        if adds is not None:
                            weight = weight + adds[2 + dr : 2 + dr + h, 2 + dc : 2 + dc + w][sel]
                        wt_view[sel + (slot,)] = np.where(ok, weight, 0)
                used = 0
                for a, b, stand in self.in_place:
                    if a != s:
                        continue
                    tgt_view[:, :, k0 + used] = index + (b * self.n_par + par) * n
                    wt_view[:, :, k0 + used] = stand
                    used += 1
        if self.step_bits is not None:
            # Walls, doors and the corners rule: those steps are gone in every layer.
            slots = np.arange(k0, dtype=np.uint16)
            walled = ((self.step_bits[:, None] >> slots) & 1).astype(bool)
            for layer in range(self.n_states):
                view = targets[layer * n : (layer + 1) * n, :k0]
                view[walled] = -1
        if self.cut:
            # Leaps replace these plain steps (in every layer).
            for layer in range(self.n_states):
                for a, b in self.cut:
                    row = layer * n + a
                    hit = targets[row, :k0] % n == b
                    targets[row, :k0][hit & (targets[row, :k0] >= 0)] = -1
        for src, jumps in self.jump_out.items():
            for i, jump in enumerate(jumps):
                targets[src, k_jump + i] = jump.dst
                weights[src, k_jump + i] = jump.ticks
        return targets, weights

    def _edge_arrays(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(source, target, weight) of every edge, in source order."""
        targets, weights = self._slot_arrays()
        mask = targets >= 0
        src = np.nonzero(mask)[0]
        return src, targets[mask], weights[mask]

    def csr(self) -> Any:
        """The graph as a scipy CSR matrix (nodes as in :meth:`node`), built vectorised.

        Rows come out of the dense slot arrays already in order, so no sort is needed.
        """
        if self._csr is None:
            from scipy.sparse import csr_array

            targets, weights = self._slot_arrays()
            mask = targets >= 0
            size = self.n * self.n_states
            indptr = np.zeros(size + 1, dtype=np.int64)
            np.cumsum(np.count_nonzero(mask, axis=1), out=indptr[1:])
            indices = targets[mask]
            data = weights[mask]
            del targets, weights, mask
            self._csr = csr_array((data, indices, indptr.astype(indices.dtype)), shape=(size, size))
        return self._csr

    def to_networkx(self) -> Any:
        """The same graph as a networkx DiGraph: nodes ``((col, row), parity)``, and
        ``((col, row), parity, state)`` where the system adds layers (``prone``).

        Edge attributes: ``ticks`` (the integer weight) and ``turns`` (an exact Fraction).
        Big maps make big graphs (a 512x512 map takes ~1 GB): prefer :meth:`csr` there.
        """
        if self._nx is None:
            import networkx as nx

            graph = nx.DiGraph(denominator=self.denominator, pace=self.pace)
            src, dst, wt = self._edge_arrays()
            label = self.nx_label
            graph.add_weighted_edges_from(
                (
                    (label(int(s)), label(int(d)), float(x))
                    for s, d, x in zip(src, dst, wt, strict=True)
                ),
                weight="ticks",
            )
            # Every cell is a node (a token may stand anywhere, even where it could not
            # go); cells it cannot enter simply have no in-edges.
            graph.add_nodes_from(label(s) for s in range(self.n * self.n_states))
            self._nx = graph
        return self._nx

    def nx_label(self, node: int) -> tuple[Any, ...]:
        """A node as :meth:`to_networkx` names it: ``(cell, parity)``, or ``(cell, parity,
        state)`` where the system adds layers."""
        layer, idx = divmod(node, self.n)
        s, p = divmod(layer, self.n_par)
        if self.n_sys == 1:
            return (self.grid.cell_of_index(idx), p)
        return (self.grid.cell_of_index(idx), p, self.search.names[s])

    def _patch_nx(self, cells: list[Cell]) -> Any:
        """Re-derive the in-edges of ``cells`` (their weights are the cells' own times)."""
        graph = self._nx
        for cell in cells:
            for p in range(self.n_states):
                node = (cell, p)
                if node in graph:
                    graph.remove_edges_from(list(graph.in_edges(node)))
                if self.ticks_of(cell) < 0:
                    continue
            for nb in self.grid.neighbours(cell):
                for p in range(self.n_states):
                    if self.ticks_of(nb) < 0:
                        continue
                    for dst, ticks in self.neighbours(self.node(nb, p)):
                        if self.cell_of(dst) == cell:
                            graph.add_edge((nb, p), self.nx_label(dst), ticks=float(ticks))
        return graph
