"""Measuring and risk-aware paths for the GM's table (no drawing here).

:func:`measure` answers "how far, how long, what checks, what odds" between two cells for
a token, by its system's rules (:func:`engine.search.find_path` on the token's graph).
:func:`risk_choice` picks between the quickest and the safest path the way a GM set it:
the quickest unless its chance of no failure is below ``safe_below``, then the safest.
"""

from __future__ import annotations

from typing import Any

from engine.errors import TacgridError
from engine.grid import Cell
from engine.movement import MovementGraph
from engine.search import NoPath, find_path


def has_checks(graph: MovementGraph) -> bool:
    return any(c.check is not None for c in graph.costs)


def measure(graph: MovementGraph, start: Cell, goal: Cell) -> dict[str, Any]:
    """The quickest path's report (CONTRACT.md's ``path`` JSON), or ``{"error": reason}``."""
    try:
        return find_path(graph, start, goal, prefer="fast")
    except NoPath as exc:
        return {"error": f"no path: {exc}"}
    except TacgridError as exc:
        return {"error": str(exc)}


def choose(fast_p: float, safe_p: float, safe_below: float | None) -> str:
    """``fast`` or ``safe``: the quickest unless its p(no failure) is below the threshold
    and the safest path is safer."""
    if safe_below is not None and fast_p < safe_below and safe_p > fast_p:
        return "safe"
    return "fast"


def risk_choice(
    graph: MovementGraph, start: Cell, goal: Cell, safe_below: float | None
) -> dict[str, Any] | None:
    """The quickest and the safest path to ``goal`` when they differ, and which one the
    threshold picks: ``{"fast": {...}, "safe": {...}, "chosen": "fast"|"safe"}`` (each
    with ``turns``, ``p_no_failure``, ``cells``); None when there is one path only."""
    if start == goal or not has_checks(graph):
        return None
    try:
        rep = find_path(graph, start, goal, prefer="fast")
    except (NoPath, TacgridError):
        return None
    pareto = rep.get("pareto") or []
    if len(pareto) < 2:
        return None
    fast = pareto[0]
    safe = max(pareto, key=lambda c: (c["p_no_failure"], -c["turns"]))
    return {
        "fast": fast,
        "safe": safe,
        "chosen": choose(fast["p_no_failure"], safe["p_no_failure"], safe_below),
    }
