"""A turn's plan down a distance field (:class:`Walk`, made by
:meth:`engine.sim.fields.Field.walk` from :func:`engine.sim.fields.plan_turn`'s edges) and
what walking it gives."""

from __future__ import annotations

from typing import Any, Protocol

from engine.grid import Cell
from engine.movement import MovementGraph


class Graphed(Protocol):
    """What a walk reads of the profile it is made on (engine.sim.fields.Profile)."""

    graph: MovementGraph


class Walk:
    """A turn's plan down a field from one node (:func:`plan_turn`) and what walking
    it gives when nothing is rolled on the way: per edge, the cell it ends in, whether it
    enters a new cell, and the ticks spent by its end (summed in walking order)."""

    __slots__ = (
        "edges",
        "after",
        "cells",
        "moved",
        "spent",
        "jumps",
        "checks",
        "_graph",
        "_ids",
        "_upto",
    )

    def __init__(
        self,
        prof: Graphed,
        edges: list[tuple[int, int, float]],
        after: tuple[int, int, float] | None = None,
    ) -> None:
        g = prof.graph
        #: The edge down the field after the turn's (None: the way ends, or goes on by a
        #: jump): where it takes longer than a whole turn, the token works at it over turns
        #: (:meth:`Walker.walk_down`).
        self.after = after if after is not None and after[2] > g.denominator + 1e-9 else None
        self._graph = g
        self._ids = ids = g.terrain_list()
        self._upto: dict[int, tuple[list[tuple[int, float]], list[Cell], tuple[Any, ...]]] = {}
        n = g.n
        cell_of = g.grid.cell_of_index
        self.edges = edges
        self.cells = [cell_of(nxt % n) for _, nxt, _ in edges]
        self.moved = [nxt % n != node % n for node, nxt, _ in edges]
        spent = 0.0
        self.spent: list[float] = []
        for _, _, w in edges:
            spent += w
            self.spent.append(spent)
        jump_at = g.jump_at
        self.jumps = bool(jump_at) and any((a, b) in jump_at for a, b, _ in edges)
        # Whether a cell entered asks a check (:meth:`Simulation._enter` may roll there).
        costs = g.state_costs
        per = n * g.n_par
        self.checks = False
        for (_, nxt, _), moved in zip(edges, self.moved, strict=True):
            if moved:
                c = costs[nxt // per][ids[nxt % n]].check
                if c is not None and c.check is not None:
                    self.checks = True
                    break

    def upto(self, k: int) -> tuple[list[tuple[int, float]], list[Cell], tuple[Any, ...]]:
        """Walking the first ``k`` edges with nothing rolled on the way: the cells entered as
        ``(node, ticks spent)``, the cells of the path after the start, and each entered
        cell's ``(terrain id, layer)`` (:meth:`Simulation._turn_rolls`); kept."""
        got = self._upto.get(k)
        if got is None:
            g = self._graph
            n, per = g.n, g.n * g.n_par
            ids = self._ids
            moved, edges = self.moved, self.edges
            at = [i for i in range(k) if moved[i]]
            entries = [(edges[i][1], self.spent[i]) for i in at]
            cells = tuple((ids[nxt % n], nxt // per) for nxt, _ in entries)
            got = self._upto[k] = (entries, [self.cells[i] for i in at], cells)
        return got
