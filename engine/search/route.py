"""A route through waypoints (``tacgrid path --via``): the best way of each leg, the legs
joined and priced as one plan.

Each leg's way is the best from its waypoint to the next (:func:`find_path`'s cells); the joined
cells are then priced once (:func:`evaluate_path`), so what a system carries along a move
(its search state such as standing up or the diagonal count, the turn a step falls in, the
checks a run of terrain asks once, the odds of them all) carries from one leg into the
next: the second leg starts where and as the first ended, not fresh.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from engine.grid import Cell
from engine.movement import MovementGraph
from engine.search.landmarks import Landmarks
from engine.search.odds import evaluate_path
from engine.search.queries import best_cells, check_cell
from engine.search.results import Leg, PathAnswer
from engine.search.tree import NoPath


def find_route(
    graph: MovementGraph,
    waypoints: Sequence[Cell],
    *,
    prefer: str = "fast",
    guide: Landmarks | None = None,
    engine: str = "compiled",
) -> PathAnswer:
    """The best route through ``waypoints`` in order (the start first, the goal last),
    priced as one plan, with its :class:`Leg` s; raises :class:`NoPath` naming the leg
    that has no way. ``prefer``, ``guide`` and ``engine`` as :func:`find_path`'s, for
    each leg (:func:`best_cells`)."""
    if len(waypoints) < 2:
        raise ValueError("a route needs a start and a goal")
    for k, cell in enumerate(waypoints):
        check_cell(graph, cell, "start" if k == 0 else "goal" if k == len(waypoints) - 1 else "via")
    cells: list[Cell] = [waypoints[0]]
    ends: list[int] = [0]  # the index in ``cells`` each waypoint is reached at
    for a, b in zip(waypoints[:-1], waypoints[1:], strict=True):
        if a != b:
            try:
                leg = best_cells(graph, a, b, prefer=prefer, guide=guide, engine=engine)
            except NoPath as exc:
                raise NoPath(f"leg {a[0]},{a[1]} -> {b[0]},{b[1]}: {exc}") from None
            cells.extend(leg[1:])
        ends.append(len(cells) - 1)
    whole = evaluate_path(graph, cells)
    return replace(whole, prefer=prefer, legs=route_legs(whole, waypoints, ends))


def route_legs(
    answer: PathAnswer, waypoints: Sequence[Cell], ends: Sequence[int]
) -> tuple[Leg, ...]:
    """The legs of ``answer`` (a path priced whole) between ``waypoints`` reached at the
    cell indices ``ends``: each leg's time is the plan's time from one to the next (the
    last leg ends at the plan's exact total, so the legs add up to it)."""
    steps = answer.steps
    if len(steps) != len(answer.cells):
        ends = _step_ends(answer, waypoints)
    at = [float(steps[i]["turns"]) for i in ends]
    at[-1] = float(answer.turns)
    return tuple(
        Leg(waypoints[k], waypoints[k + 1], at[k + 1] - at[k], ends[k + 1])
        for k in range(len(waypoints) - 1)
    )


def _step_ends(answer: PathAnswer, waypoints: Sequence[Cell]) -> list[int]:
    """The step each waypoint is reached at, found in order (a leg's best way reaches its
    goal at its end only, so the first step on it after the last waypoint's is its own)."""
    ends = [0]
    i = 0
    for cell in waypoints[1:]:
        while tuple(answer.steps[i]["cell"]) != cell:
            i += 1
        ends.append(i)
    return ends
