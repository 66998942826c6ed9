"""What the searches answer, typed: a path (:class:`PathAnswer`) and a reach
(:class:`ReachAnswer`).

Exact figures stay exact here (Fractions: a path's turns, distance and odds); the JSON of
CONTRACT.md's ``path`` and ``reach`` documents, with its floats and ``*_exact`` strings, is
made from these by :mod:`engine.report.movement` (``path_json``, ``reach_json``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from engine.grid import Cell
from engine.search.tree import SearchTree

#: One step of a path as the contract words it: ``cell``, ``mode``, ``terrain``, ``turns``,
#: ``time``, ``turn``, ``check`` and, where they apply, ``jump``, ``first``, ``checks``,
#: ``on_failure``, ``climb`` (CONTRACT.md ``path``). The pricing of a path
#: (:mod:`engine.search.odds`) fills a step's optional parts in the contract's order.
Step = Mapping[str, Any]

#: One turn of a path's plan: ``turn``, ``end`` (a cell), ``cells`` entered, ``spent``.
PlanTurn = Mapping[str, Any]


@dataclass(frozen=True)
class PathOption:
    """One path of the Pareto front of time against safety."""

    turns: Fraction
    p_no_failure: Fraction
    cells: Sequence[Cell]


@dataclass(frozen=True)
class Leg:
    """One leg of a route through waypoints (``path --via``): from one waypoint to the
    next, ``turns`` the time the route's one plan spends on it and ``step`` the index in
    the route's steps of the cell it ends on."""

    start: Cell
    goal: Cell
    turns: float
    step: int


@dataclass(frozen=True)
class PathAnswer:
    """A token's best path between two cells, priced step by step (CONTRACT.md ``path``).

    ``turns``, ``p_no_failure`` and ``p_within_turns`` are exact; ``ticks`` is the total in
    the graph's ticks (``den`` to a turn) that orders the candidates of a search.
    ``pareto``: the Pareto front of the candidates weighed, when it has more than one."""

    system: str
    pace: str
    prefer: str
    #: A :class:`engine.search.cellpath.CellPath` where :func:`evaluate_path` priced it:
    #: the cells held as one typed array, read as the tuple of ``(col, row)`` cells.
    cells: Sequence[Cell]
    distance: Fraction | float
    distance_cells: Fraction
    unit: str
    turns: Fraction
    #: A :class:`engine.search.steps.StepTable` where :func:`evaluate_path` priced it: a
    #: sequence of records made on reading, held as columns (a maze path has millions).
    steps: Sequence[Step]
    p_no_failure: Fraction
    p_within_turns: Fraction
    on_failure: tuple[str, ...]
    plan: Sequence[PlanTurn]
    ticks: float
    den: int
    pareto: tuple[PathOption, ...] = ()
    #: The token's actions besides moving each turn that priced it (``--act``), in order.
    acts: tuple[str, ...] = ()
    #: The legs of a route through waypoints (:func:`engine.search.find_route`); () for a
    #: path from one cell to another.
    legs: tuple[Leg, ...] = ()

    def option(self) -> PathOption:
        """This path as an option of a Pareto front."""
        return PathOption(self.turns, self.p_no_failure, self.cells)


#: A reached cell: ``(cell, turns, band)``, when (the search's figure, in turns) and its
#: speed band. A plain tuple, not a class: a reach holds thousands of cells and is asked
#: many times a second (the viewer, a query context), and a class's constructor is a
#: Python call a cell where a tuple is built in place.
ReachCell = tuple[Cell, float, str]


@dataclass(frozen=True)
class ReachAnswer:
    """Every cell a token reaches from ``start`` within ``turns`` at ``pace``, each with its
    speed band (CONTRACT.md ``reach``), and the search ``tree`` behind them (the viewer's
    hover paths: :meth:`SearchTree.path_to`)."""

    system: str
    pace: str
    start: Cell
    turns: int
    bands: tuple[str, ...]
    cells: tuple[ReachCell, ...]
    tree: SearchTree
    #: The token's actions besides moving each turn that priced it (``--act``), in order.
    acts: tuple[str, ...] = ()
