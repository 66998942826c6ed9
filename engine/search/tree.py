"""One search's answer, kept: a :class:`SearchTree` (distances and predecessors from one
start, the viewer's hover cache), a node path as cells, and :class:`NoPath`.
"""

from __future__ import annotations

from fractions import Fraction
from typing import cast

import numpy as np

from engine.errors import TacgridError
from engine.grid import Cell
from engine.movement import MovementGraph
from engine.search.cellpath import CellPath


class NoPath(TacgridError):
    """There is no path; the message says why (exit status 1, not a user error)."""


class SearchTree:
    """Distances (ticks) and predecessors from one start; the viewer's hover cache.

    Made of dicts (``dist``: node -> ticks, ``prev``: node -> the node before it), or of
    the arrays a compiled search read back (:meth:`of_arrays`), whose dicts are made on
    first use: a reach answered from the arrays (:mod:`engine.search.window`) never needs
    them unless the tree is asked."""

    def __init__(
        self,
        graph: MovementGraph,
        start: Cell,
        dist: dict[int, float],
        prev: dict[int, int],
        limit: float | None = None,
    ) -> None:
        self.graph = graph
        self.start = start
        self.limit = limit
        self._dist: dict[int, float] | None = dist
        self._prev: dict[int, int] | None = prev
        self._best_of: dict[Cell, int] | None = None
        self._arrays: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None
        #: Cells whose figure is re-priced exactly (a climb in whole successes on the way:
        #: :func:`_reprice_climbs`), in turns; they override the search's mean-rate labels.
        self.exact: dict[Cell, Fraction] = {}

    @classmethod
    def of_arrays(
        cls,
        graph: MovementGraph,
        start: Cell,
        nodes: np.ndarray,
        ticks: np.ndarray,
        back: np.ndarray,
        limit: float | None = None,
    ) -> SearchTree:
        """The tree of a search read back as arrays: the nodes reached, their ticks and
        the node before each (-1: the start)."""
        tree = cls(graph, start, {}, {}, limit)
        tree._dist = tree._prev = None
        tree._arrays = (nodes, ticks, back)
        return tree

    @property
    def dist(self) -> dict[int, float]:
        if self._dist is None:
            assert self._arrays is not None
            nodes, ticks, _ = self._arrays
            self._dist = dict(zip(nodes.tolist(), ticks.tolist(), strict=True))
        return self._dist

    @property
    def prev(self) -> dict[int, int]:
        if self._prev is None:
            assert self._arrays is not None
            nodes, _, back = self._arrays
            has = back >= 0
            self._prev = dict(zip(nodes[has].tolist(), back[has].tolist(), strict=True))
        return self._prev

    @property
    def _best(self) -> dict[Cell, int]:
        """Each reached cell's node of least ticks."""
        if self._best_of is None:
            self._best_of = self._least()
        return self._best_of

    def _least(self) -> dict[Cell, int]:
        w = self.graph.grid.width
        dist = self.dist
        if self.graph.n_states == 1:  # a node is its cell
            return {(i % w, i // w): i for i in dist}
        n = self.graph.n
        best: dict[int, int] = {}
        for node, d in dist.items():
            idx = node % n
            cur = best.get(idx)
            if cur is None or d < dist[cur]:
                best[idx] = node
        return {(i % w, i // w): node for i, node in best.items()}

    def cells(self) -> list[Cell]:
        return list(self._best)

    def ticks(self, cell: Cell) -> float | None:
        node = self._best.get(cell)
        if node is not None and cell in self.exact:
            return cast("float", self.exact[cell] * self.graph.denominator)
        return None if node is None else self.dist[node]

    def turns(self, cell: Cell) -> Fraction | None:
        t = self.ticks(cell)
        return None if t is None else self.graph.turns(t)

    def path_to(self, cell: Cell) -> list[Cell]:
        """The best path to ``cell`` from the cached tree ([] if not reached)."""
        node = self._best.get(cell)
        if node is None:
            return []
        return _cells(self.graph, self.nodes_to(node))

    def nodes_to(self, node: int) -> list[int]:
        """The searched nodes from the start to ``node`` (state changes in place included)."""
        out = []
        prev = self.prev
        cur: int | None = node
        while cur is not None:
            out.append(cur)
            cur = prev.get(cur)
        out.reverse()
        return out

    def best_node(self, cell: Cell) -> int | None:
        return self._best.get(cell)


def _cells(graph: MovementGraph, nodes: list[int]) -> list[Cell]:
    """Cells of a node path; a state change in place (standing up) stays in its cell, a
    jump lists the cells it passes over (the take-off cell of a run-up, the gap)."""
    out: list[Cell] = []
    jump_at = graph.jump_at
    for k, node in enumerate(nodes):
        if jump_at and k:
            jump = jump_at.get((nodes[k - 1], node))
            if jump is not None:
                out.extend(graph.grid.cell_of_index(part[0]) for part in jump.parts[:-1])
        cell = graph.cell_of(node)
        if not out or out[-1] != cell:
            out.append(cell)
    return out


def node_cells(graph: MovementGraph, nodes: np.ndarray) -> CellPath:
    """:func:`_cells` of a node path given as an array, as a :class:`CellPath`: each node's
    cell, a state change in place (the same cell again) dropped, read in numpy where the
    graph has no jumps (a jump lists its cells: the plain way)."""
    if graph.jump_at:
        return CellPath.of(_cells(graph, nodes.tolist()), graph.grid.width)
    idx = nodes % graph.n
    if idx.size > 1:
        keep = np.empty(idx.size, dtype=bool)
        keep[0] = True
        np.not_equal(idx[1:], idx[:-1], out=keep[1:])
        if not keep.all():
            idx = idx[keep]
    return CellPath(idx, graph.grid.width)
