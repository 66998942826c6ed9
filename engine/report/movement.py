"""The ``path`` and ``reach`` reports: a token's best path and the cells it can reach.

The search itself is :mod:`engine.search`, asked through the query front
(:class:`engine.query.Query`), which answers typed (:class:`~engine.search.PathAnswer`,
:class:`~engine.search.ReachAnswer`); this module makes CONTRACT.md's ``path`` and
``reach`` JSON of them (:func:`path_json`, :func:`reach_json`: the floats and the
``*_exact`` strings of the exact figures) and draws them on the map as text.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from engine.exact import jsonable
from engine.grid import Cell
from engine.report import Streamed
from engine.report.blocktext import cells_writer, plan_writer, steps_writer
from engine.report.maptext import TURN_MARKS, CellMarks, band_glyphs, draw_cells, turn_mark
from engine.search import PathAnswer, ReachAnswer
from engine.search.steps import PlanTable, Steps


def path_json(path: PathAnswer, *, streamed: bool = False) -> dict[str, Any]:
    """CONTRACT.md's ``path`` document of ``path`` (``tacgrid path --json``): its steps and
    plan as the answer's records. ``streamed``: its cells, steps and plan as
    :class:`engine.report.Streamed` arrays, each record made as it is written (a maze's
    path has millions of steps), for :func:`engine.report.json_chunks` to print; the
    printed text is the same.
    """
    if streamed:
        cells: Any = Streamed(path.cells, list, cells_writer(path.cells))
        steps: Any = Streamed(path.steps, None, steps_writer(path.steps))
        plan: Any = Streamed(path.plan, None, plan_writer(path.plan))
    else:
        cells, steps, plan = [list(c) for c in path.cells], list(path.steps), list(path.plan)
    out: dict[str, Any] = {
        "system": path.system,
        "pace": path.pace,
        "prefer": path.prefer,
        "cells": cells,
        "distance": jsonable(path.distance),
        "distance_cells": jsonable(path.distance_cells),
        "unit": path.unit,
        "turns": float(path.turns),
        "turns_exact": jsonable(path.turns),
        "steps": steps,
        "p_no_failure": float(path.p_no_failure),
        "p_no_failure_exact": jsonable(path.p_no_failure),
        "p_within_turns": float(path.p_within_turns),
        "p_within_turns_exact": jsonable(path.p_within_turns),
        "on_failure": list(path.on_failure),
        "plan": plan,
        "acts": list(path.acts),
    }
    if path.pareto:
        out["pareto"] = [
            {
                "turns": float(o.turns),
                "p_no_failure": float(o.p_no_failure),
                "cells": [list(c) for c in o.cells],
            }
            for o in path.pareto
        ]
    if path.legs:
        out["legs"] = [
            {"from": list(g.start), "to": list(g.goal), "turns": g.turns, "step": g.step}
            for g in path.legs
        ]
    return out


def reach_json(reach: ReachAnswer) -> dict[str, Any]:
    """CONTRACT.md's ``reach`` document of ``reach`` (``tacgrid reach --json``; the search
    tree is not part of it)."""
    return {
        "system": reach.system,
        "pace": reach.pace,
        "from": list(reach.start),
        "turns": reach.turns,
        "bands": list(reach.bands),
        "cells": [{"cell": [c, r], "turns": t, "band": b} for (c, r), t, b in reach.cells],
        "acts": list(reach.acts),
    }


def reach_dict(reach: ReachAnswer) -> dict[str, Any]:
    """:func:`reach_json` plus the search ``tree``: what ``api.reach`` answers."""
    return {**reach_json(reach), "tree": reach.tree}


def no_path_report(system: Any, reason: str) -> dict[str, Any]:
    """The ``path`` JSON when there is no path (exit status 1)."""
    return {"system": system.name, "cells": [], "reason": reason}


def _with_acts(acts: tuple[str, ...]) -> str:
    """`` with attack, interact`` (the actions besides moving a move was priced with)."""
    return f" with {', '.join(acts)} each turn" if acts else ""


def _short_exact(value: object) -> str:
    """An exact figure as text, or "expected" where its fraction is too long to read (a
    climb's expected time with slips has a denominator of dozens of digits)."""
    text = str(value)
    return text if len(text) <= 24 else "expected"


def format_path(path: PathAnswer, model: Any, system: Any, start: Cell, goal: Cell) -> str:
    """The ``path`` text: a summary line, the path on the map, checks, turns, options."""
    rep = path_json(path, streamed=True)  # the figures; the long lists read as columns
    lines = [
        f"{system.name} path {start[0]},{start[1]} -> {goal[0]},{goal[1]} at "
        f"{rep['pace']}{_with_acts(path.acts)}: "
        f"{_short_exact(rep['turns_exact'])} turns ({rep['turns']:.3g}), "
        f"{rep['distance']} {rep['unit']}, "
        f"{len(path.cells) - 1} steps, p(no failure) {rep['p_no_failure']:.4f}",
        draw_cells(model, _path_marks(path.steps, model.grid, start, goal)),
        "   S start, G goal, 1-9 a-z: the turn each cell is entered in",
    ]
    steps = path.steps
    checked = (
        sorted(i for i, c in steps.checks.items() if c and 0 <= i < len(steps))
        if isinstance(steps, Steps)
        else range(len(steps))
    )
    for i in checked:
        step = steps[i]
        if step["check"]:
            ch = step["check"]
            lines.append(
                f"   check at {step['cell'][0]},{step['cell'][1]}: {ch['what']} {ch['target']} "
                f"-> {100 * ch['p_success']:.2f}%"
            )
    lines += _plan_lines(path.plan)
    for leg in rep.get("legs", []):
        a, b = leg["from"], leg["to"]
        lines.append(f"   leg {a[0]},{a[1]} -> {b[0]},{b[1]}: {leg['turns']:.3g} turns")
    for alt in rep.get("pareto", []):
        lines.append(
            f"   option: {alt['turns']:.3g} turns, p(no failure) {alt['p_no_failure']:.4f}"
        )
    return "\n".join(lines)


def _path_marks(
    steps: Sequence[Any], grid: Any, start: Cell, goal: Cell
) -> dict[Cell, str] | CellMarks:
    """Each cell the path enters marked with the turn it is entered in (a later step's
    over an earlier one's), the start ``S`` and the goal ``G`` over those: read off the
    columns of :class:`Steps` a block at a time, else off the records."""
    if not isinstance(steps, Steps):
        marks: dict[Cell, str] = {}
        for step in steps[1:]:
            marks[tuple(step["cell"])] = turn_mark(step["turn"])
        marks[start], marks[goal] = "S", "G"
        return marks
    width = grid.width
    kind = np.int32 if width * grid.height < 2**31 else np.int64
    codes = np.frombuffer(TURN_MARKS.encode("ascii"), dtype=np.uint8)
    flat: list[np.ndarray] = []
    chars: list[np.ndarray] = []
    for lo in range(1, len(steps), 1 << 20):
        b = steps.block(lo, min(len(steps), lo + (1 << 20)))
        at: np.ndarray = b.rows.astype(kind)
        at *= width
        at += b.cols
        flat.append(at)
        # turn_mark's index, min(turn, len) - 1, read from the end where it is -1.
        at = np.minimum(b.turn, len(TURN_MARKS)) - 1
        chars.append(codes[np.where(at < 0, at + len(TURN_MARKS), at)])
    flat.append(np.array([start[1] * width + start[0], goal[1] * width + goal[0]], kind))
    chars.append(np.array([ord("S"), ord("G")], dtype=np.uint8))
    return CellMarks(np.concatenate(flat), np.concatenate(chars), width)


def _plan_lines(plan: Sequence[Any]) -> list[str]:
    """A line per turn of the plan: where it ends, how many cells it enters."""
    if not isinstance(plan, PlanTable):
        return [
            f"   turn {t['turn']}: ends at {t['end'][0]},{t['end'][1]}, {len(t['cells'])} cells"
            for t in plan
        ]
    lo = np.frombuffer(plan.lo, dtype=np.int64)
    hi = np.frombuffer(plan.hi, dtype=np.int64)
    cols, rows = plan.steps.cells_at(hi - 1)
    return [
        f"   turn {k}: ends at {c},{r}, {n} cells"
        for k, c, r, n in zip(
            plan.k.tolist(),
            cols.tolist(),
            rows.tolist(),
            np.maximum(hi - lo, 0).tolist(),
            strict=True,
        )
    ]


def format_reach(
    reach: ReachAnswer, model: Any, system: Any, start: Cell, turns: int, pace: str
) -> str:
    """The ``reach`` text: the reachable cells on the map, marked by band and turn."""
    glyph = band_glyphs(list(reach.bands))
    marks: dict[tuple[int, int], str] = {
        cell: band[4:] if band.startswith("turn") else glyph[band] for cell, _, band in reach.cells
    }
    marks[start] = "@"
    bands = ", ".join(f"{glyph[b]} = {b}" for b in reach.bands)
    return "\n".join(
        [
            f"{system.name} reach from {start[0]},{start[1]} in {turns} turn(s) at {pace}"
            f"{_with_acts(reach.acts)}: {len(reach.cells)} cells",
            draw_cells(model, marks),
            f"   @ start; first turn: {bands}; 2, 3, ...: the turn a cell is reached in",
        ]
    )
