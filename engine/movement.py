"""The movement graph: cells as nodes, the time to enter a cell as the edge weight.

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

The ``euclid`` rule (a diagonal is sqrt 2 cells) is the one inexact case: its weights
are floats, and its totals are rounded to 1e-9 when compared.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import numpy as np

from engine.errors import ArgumentError
from engine.grid import Cell, Grid
from engine.mapmodel import MapModel, Terrain
from engine.systems.base import CellCheck, RuleSystem, Token, exact

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
            raise ArgumentError(f"--pace {pace}: {system.name} paces are {', '.join(system.paces)}")
        self.model = model
        self.grid: Grid = model.grid
        self.system = system
        self.token = token
        self.pace = pace
        self.cell_size, self.unit = map_cell(model, system)
        self._cell_in_system_unit = convert(self.cell_size, self.unit, system.unit)
        self.n = self.grid.width * self.grid.height
        self.parity_state = self.grid.kind != "hex" and self.grid.diagonals == "alternate"
        self.euclid = self.grid.kind != "hex" and self.grid.diagonals == "euclid"
        self.n_states = 2 if self.parity_state else 1
        self.costs: list[TerrainCost] = []
        self._refresh_terrains()
        self._csr: Any = None
        self._nx: Any = None

    # ----------------------------------------------------------------- terrain costs

    def _terrain_cost(self, terrain: Terrain) -> TerrainCost:
        reason = self.system.refusal(self.token, terrain, self.pace)
        if reason is not None:
            return TerrainCost(terrain, None, reason, None)
        rate = self.system.cell_rate(self.token, terrain, self.pace)
        # A climb or a ladder goes as far as the cell's `height` (MAP-FORMAT.md), at least
        # one cell: a 15-ft cliff drawn as one 5-ft cell is 15 ft of climbing.
        length = Fraction(1)
        if terrain.move in ("climb", "ladder") and terrain.height is not None:
            length = max(length, exact(terrain.height) / self.cell_size)
        time = self._cell_in_system_unit * length * exact(terrain.cost) / rate
        return TerrainCost(
            terrain, time, None, self.system.cell_check(self.token, terrain, self.pace)
        )

    def _refresh_terrains(self) -> None:
        known = {c.terrain: c for c in self.costs}
        self.costs = [known.get(t) or self._terrain_cost(t) for t in self.model.terrains]
        times = [c.time for c in self.costs if c.time is not None]
        self.denominator = math.lcm(*(t.denominator for t in times)) if times else 1
        ticks = [-1 if c.time is None else int(c.time * self.denominator) for c in self.costs]
        # Totals stay exact while they fit a float's 53 bits (scipy sums in float64).
        if max(ticks, default=0) * max(1, self.n) * 2 >= 2**53:
            slowest = max(c.time for c in self.costs if c.time is not None)
            raise ArgumentError(
                f"--token: with these {self.system.name} stats one cell costs up to "
                f"{float(slowest):.3g} turns, too extreme for an exact search; use game-sized stats"
            )
        self.terrain_ticks = np.array(ticks, dtype=np.int64)
        self.enter_ticks = self.terrain_ticks[self.model.terrain_ids].ravel()
        self._ticks_list: list[int] = self.enter_ticks.tolist()
        run_keys: dict[tuple[str, str], int] = {}
        self.run_key = np.array(
            [
                run_keys.setdefault((c.terrain.move, c.terrain.difficulty), len(run_keys))
                for c in self.costs
            ],
            dtype=np.int32,
        )[self.model.terrain_ids].ravel()

    def update_cells(self, cells: list[Cell]) -> None:
        """Re-read the terrain of ``cells`` after the model changed (doors, fire, ice).

        Only the new terrain records are costed, and the cached CSR arrays are patched
        in place for edges into those cells; the networkx graph, if built, likewise.
        """
        old_den, old_ticks = self.denominator, self.enter_ticks
        factor = target = None
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
        return self._ticks_list[self.grid.index(cell)]

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

    def node(self, cell: Cell, parity: int = 0) -> int:
        return parity * self.n + self.grid.index(cell)

    def cell_of(self, node: int) -> Cell:
        return self.grid.cell_of_index(node % self.n)

    def neighbours(self, node: int) -> list[tuple[int, float | int]]:
        """Out-edges ``(node, ticks)`` of a node, enterable cells only."""
        p, idx = divmod(node, self.n)
        w = self.grid.width
        r, c = divmod(idx, w)
        out: list[tuple[int, float | int]] = []
        for dc, dr, diag in self.grid.offsets(self.grid.parity((c, r))):
            nc, nr = c + dc, r + dr
            if not (0 <= nc < w and 0 <= nr < self.grid.height):
                continue
            j = nr * w + nc
            t = self._ticks_list[j]
            if t < 0:
                continue
            if diag and self.parity_state:
                out.append(((1 - p) * self.n + j, t * 2 if p else t))
            elif diag and self.euclid:
                out.append((p * self.n + j, t * math.sqrt(2)))
            else:
                out.append((p * self.n + j, t))
        return out

    # ----------------------------------------------------------------- compiled form

    def _slot_arrays(self) -> tuple[np.ndarray, np.ndarray]:
        """Targets and weights as dense ``(states * cells, slots)`` arrays (-1 = no edge).

        Built by shifting the (height, width) tick grid for each neighbour offset, so it
        costs a few numpy passes over the map whatever its size; hex rows (or columns) of
        each stagger parity take their own offset table.
        """
        g = self.grid
        w, h, n = g.width, g.height, self.n
        ticks = self.enter_ticks.reshape(h, w)
        padded = np.full((h + 4, w + 4), -1, dtype=np.int64)
        padded[2 : h + 2, 2 : w + 2] = ticks
        index = np.arange(n, dtype=np.int64).reshape(h, w)
        k = max(len(g.offsets(0)), len(g.offsets(1)))
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
        for state in range(self.n_states):
            rows = slice(state * n, (state + 1) * n)
            tgt_view = targets[rows].reshape(h, w, k)
            wt_view = weights[rows].reshape(h, w, k)
            for par, sel in groups:
                for slot, (dc, dr, diag) in enumerate(g.offsets(par)):
                    t = padded[2 + dr : 2 + dr + h, 2 + dc : 2 + dc + w][sel]
                    ok = t >= 0
                    new_state = (1 - state) if (diag and self.parity_state) else state
                    dest = index[sel] + (dr * w + dc) + new_state * n
                    tgt_view[sel + (slot,)] = np.where(ok, dest, -1)
                    wt_view[sel + (slot,)] = np.where(
                        ok, t * self.step_length(bool(diag), state), 0
                    )
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
        """The same graph as a networkx DiGraph: nodes ``((col, row), parity)``.

        Edge attributes: ``ticks`` (the integer weight) and ``turns`` (an exact Fraction).
        Big maps make big graphs (a 512x512 map takes ~1 GB): prefer :meth:`csr` there.
        """
        if self._nx is None:
            import networkx as nx

            graph = nx.DiGraph(denominator=self.denominator, pace=self.pace)
            src, dst, wt = self._edge_arrays()
            label = self._label
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

    def _label(self, node: int) -> tuple[Cell, int]:
        p, idx = divmod(node, self.n)
        return (self.grid.cell_of_index(idx), p)

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
                            graph.add_edge((nb, p), self._label(dst), ticks=float(ticks))
        return graph
