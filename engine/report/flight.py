"""The ``fly`` report (CONTRACT.md): a flight plan as JSON, and as text on the map.

The planning is :mod:`engine.flight.planner`'s; it loads only when a plan is asked for.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from engine.errors import ArgumentError
from engine.exact import jsonable
from engine.grid import Cell
from engine.mapmodel import MapModel
from engine.report.maptext import draw_cells, turn_mark

if TYPE_CHECKING:
    from engine.systems.base import RuleSystem, Token


def no_plan_report(system: Any, reason: str) -> dict[str, Any]:
    """The ``fly`` JSON when there is no plan (exit status 1)."""
    return {"system": system.name, "turns": None, "plan": [], "reason": reason}


def fly_report(  # noqa: C901
    model: MapModel,
    system: RuleSystem,
    token: Token,
    start: Cell,
    heading: Any,
    speed: Any,
    goal: Cell,
    land: bool = False,
    *,
    altitude: int = 0,
    goal_heading: Any = None,
    ground_pace: str | None = None,
    max_turns: int = 40,
    max_states: int = 100_000,
) -> dict[str, Any]:
    """CONTRACT.md's ``fly`` JSON: the plan with the fewest turns, then actions.

    ``speed`` 0 starts on the ground. Raises :class:`~engine.search.NoPath` (exit status 1)
    with the reason when no plan exists within the bounds, and
    :class:`~engine.errors.ArgumentError` for bad cells, headings and speeds.
    """
    from engine.flight.model import whole
    from engine.flight.planner import search
    from engine.flight.simulator import flight_rules
    from engine.search import NoPath

    grid = model.grid
    for cell, what in ((start, "--from"), (goal, "--to")):
        if not grid.in_bounds(cell):
            raise ArgumentError(
                f"{what} {cell[0]},{cell[1]}: outside the map ({grid.width} x {grid.height} "
                f"cells; cells are col,row from 0,0 to {grid.width - 1},{grid.height - 1})"
            )
    rules = flight_rules(system, token, model)
    h = rules.geo.check_heading(heading)
    gh = None if goal_heading is None else rules.geo.check_heading(goal_heading, "end_heading")
    try:
        v = whole(speed)
        if v < 0:
            raise ValueError
    except (TypeError, ValueError):
        raise ArgumentError(
            f"--speed {speed!r}: expected a whole number of cells per turn >= 0"
        ) from None
    if ground_pace is None:
        state = rules.start_state(start, h, v, altitude=altitude)
    else:
        ground_start = getattr(rules, "ground_start", None)
        if ground_start is None:
            raise ArgumentError(
                f"--ground-pace {ground_pace}: {system.name} flight has no take-off speed "
                "from ground movement (docs/flight.md: Mythmaster only); leave it out"
            )
        if v:
            raise ArgumentError(
                f"--ground-pace {ground_pace}: the token starts on the ground; leave out "
                f"--speed {v} (the take-off speed is the ground pace's rate)"
            )
        state = ground_start(start, h, ground_pace)
    found = search(
        model,
        rules,
        state,
        goal,
        land=land,
        heading=gh,
        max_turns=max_turns,
        max_states=max_states,
    )
    if found.plan is None:
        what = "land at" if land else "reach"
        raise NoPath(
            f"{system.name}: no flight plan to {what} {goal[0]},{goal[1]} from "
            f"{start[0]},{start[1]}: {found.reason}"
        )
    p = found.plan
    turns = []
    for rec in p.records:
        entry: dict[str, Any] = {
            "turn": rec.turn,
            "actions": list(rec.actions),
            "speed": rec.speed,
            "cells": [list(c) for c in rec.cells],
            "heading": rec.state.heading,
        }
        if rules.has_altitude:
            entry["altitude"] = rec.state.altitude
        extra = [e for e in rec.events if e.get("event") != "choice"]
        if extra:
            entry["events"] = jsonable(extra)
        turns.append(entry)
    end = p.end
    out: dict[str, Any] = {
        "turns": p.turns,
        "plan": turns,
        "end": {
            "cell": list(end.cell),
            "heading": end.heading,
            "speed": end.speed,
            "landed": end.landed,
        },
        "system": system.name,
        "from": list(start),
        "to": list(goal),
        "land": land,
        "actions": p.actions,
        "states_expanded": found.expanded,
    }
    if rules.has_altitude:
        out["end"]["altitude"] = end.altitude
    if ground_pace is not None:
        out["take_off_speed"] = state.speed
        out["ground_pace"] = ground_pace
    return out


def format_fly(report: dict[str, Any], model: MapModel) -> str:
    """The plan as text: one line a turn, then the cells on the map (1-9, a-z: the turn a
    cell is entered in; S start, G goal)."""
    start = tuple(report["from"])
    goal = tuple(report["to"])
    end = report["end"]
    what = "land at" if report.get("land") else "reach"
    lines = [
        f"{report.get('system', 'flight')} flight {start[0]},{start[1]} -> {goal[0]},{goal[1]} "
        f"({what}): {report['turns']} turns, {report.get('actions', '?')} actions"
    ]
    marks: dict[tuple[int, int], str] = {}
    for t in report["plan"]:
        acts = ", ".join(t["actions"]) or "no actions"
        cells = t["cells"]
        where = f" -> {cells[-1][0]},{cells[-1][1]}" if cells else " (stays)"
        alt = f", altitude {t['altitude']} m" if "altitude" in t else ""
        lines.append(
            f"   turn {t['turn']}: {acts}; speed {t['speed']}, heading {t['heading']}{alt}, "
            f"{len(cells)} cells{where}"
        )
        for event in t.get("events", []):
            lines.append(f"      {event.get('event')}: {event.get('what', '')}".rstrip(": "))
        mark = turn_mark(t["turn"])
        for c in cells:
            marks[(c[0], c[1])] = mark
    marks[(start[0], start[1])] = "S"
    marks[(goal[0], goal[1])] = "G"
    lines.append(
        f"   end: {end['cell'][0]},{end['cell'][1]}, heading {end['heading']}, speed "
        f"{end['speed']}, {'landed' if end['landed'] else 'flying'}"
    )
    lines.append(draw_cells(model, marks))
    lines.append("   S start, G goal, 1-9 a-z: the turn each cell is entered in")
    return "\n".join(lines)
