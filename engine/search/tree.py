"""One search's answer, kept: a :class:`SearchTree` (distances and predecessors from one
start, the viewer's hover cache), a node path as cells, and :class:`NoPath`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction
from typing import cast

from engine.errors import TacgridError
from engine.grid import Cell
from engine.movement import MovementGraph


class NoPath(TacgridError):
    """There is no path; the message says why (exit status 1, not a user error)."""


@dataclass
class SearchTree:
    """Distances (ticks) and predecessors from one start; the viewer's hover cache."""

    graph: MovementGraph
    start: Cell
    dist: dict[int, float]
    prev: dict[int, int]
    limit: float | None = None
    _best: dict[Cell, int] = field(default_factory=dict)
    #: Cells whose figure is re-priced exactly (a climb in whole successes on the way:
    #: :func:`_reprice_climbs`), in turns; they override the search's mean-rate labels.
    exact: dict[Cell, Fraction] = field(default_factory=dict)

    def __post_init__(self) -> None:
        w = self.graph.grid.width
        if self.graph.n_states == 1:  # a node is its cell
            self._best = {(i % w, i // w): i for i in self.dist}
            return
        n = self.graph.n
        best: dict[int, int] = {}
        for node, d in self.dist.items():
            idx = node % n
            cur = best.get(idx)
            if cur is None or d < self.dist[cur]:
                best[idx] = node
        self._best = {(i % w, i // w): node for i, node in best.items()}

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
