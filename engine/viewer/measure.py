"""Measuring and risk-aware paths for the GM's table (no drawing here).

:func:`measure` answers "how far, how long, what checks, what odds" between two cells for
a token, by its system's rules (:func:`engine.search.find_path` on the token's graph), or
through the waypoints a measuring drag dropped, as Drag Ruler does (Space or a right click
while dragging): the best route through them in order, priced as one plan
(:func:`engine.search.find_route`), re-priced as the mouse moves.
:func:`risk_choice` picks between the quickest and the safest path the way a GM set it:
the quickest unless its chance of no failure is below ``safe_below``, then the safest.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from engine.errors import TacgridError
from engine.grid import Cell
from engine.movement import MovementGraph
from engine.search import NoPath, PathAnswer, PathOption, ReachAnswer, find_path, find_route


@dataclass(frozen=True)
class Reached:
    """A token's reach as the viewer keeps it: the answer (with its search tree, for hover
    paths) and the graph it was searched on (for measuring and pricing paths)."""

    answer: ReachAnswer
    graph: MovementGraph


@dataclass(frozen=True)
class RiskChoice:
    """The quickest and the safest path to a cell, and which one the threshold picks."""

    fast: PathOption
    safe: PathOption
    chosen: str  # "fast" or "safe"

    def picked(self) -> PathOption:
        return self.safe if self.chosen == "safe" else self.fast


def has_checks(graph: MovementGraph) -> bool:
    return any(c.check is not None for c in graph.costs)


def measure(
    graph: MovementGraph, start: Cell, goal: Cell, via: Sequence[Cell] = ()
) -> PathAnswer | str:
    """The quickest path (CONTRACT.md's ``path``, typed), through the cells ``via`` in order
    where there are any (its ``legs``), or why there is none."""
    points = [start]
    for cell in (*via, goal):
        if cell != points[-1]:
            points.append(cell)
    try:
        if len(points) > 2:
            return find_route(graph, points)
        return find_path(graph, start, goal, prefer="fast")
    except NoPath as exc:
        return f"no path: {exc}"
    except TacgridError as exc:
        return str(exc)


def choose(fast_p: float, safe_p: float, safe_below: float | None) -> str:
    """``fast`` or ``safe``: the quickest unless its p(no failure) is below the threshold
    and the safest path is safer."""
    if safe_below is not None and fast_p < safe_below and safe_p > fast_p:
        return "safe"
    return "fast"


def risk_choice(
    graph: MovementGraph, start: Cell, goal: Cell, safe_below: float | None
) -> RiskChoice | None:
    """The quickest and the safest path to ``goal`` when they differ, and which one the
    threshold picks; None when there is one path only."""
    if start == goal or not has_checks(graph):
        return None
    try:
        rep = find_path(graph, start, goal, prefer="fast")
    except (NoPath, TacgridError):
        return None
    pareto = rep.pareto
    if len(pareto) < 2:
        return None
    fast = pareto[0]
    # Weighed by the figures the contract shows (floats), as the path JSON's front was.
    safe = max(pareto, key=lambda c: (float(c.p_no_failure), -float(c.turns)))
    return RiskChoice(
        fast, safe, choose(float(fast.p_no_failure), float(safe.p_no_failure), safe_below)
    )
