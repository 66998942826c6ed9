"""Terrain painted onto a loaded map: what the viewer's brush does to the model, kept as
strokes that undo, save into a session file and replay onto the map read again.

A :class:`Stroke` is one drag of the brush: a terrain record and the cells it covered (in
the order painted, each once), with the terrain each cell held before (for undo). The
palette a GM paints from is the map's own terrains and the common kinds below
(:func:`palette`), those the rule system cannot price for its default token left out.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import Any

from engine.grid import Cell
from engine.mapmodel import DIFFICULTIES, FALLS, MODES, MapModel, Terrain

#: The common kinds of terrain, beside the map's own: open ground, rough ground (twice the
#: time), difficult ground (PF2e's +1 cell), water, a cliff, a crawlspace, a pit, open sky
#: and a wall.
COMMON: tuple[Terrain, ...] = (
    Terrain("open"),
    Terrain("rough", cost=2.0),
    Terrain("difficult", cost_add=1.0),
    Terrain("water", move="swim", difficulty="easy", fall="water"),
    Terrain("cliff", move="climb", difficulty="moderate"),
    Terrain("crawlspace", move="crawl"),
    Terrain("pit", move="gap"),
    Terrain("sky", move="air"),
    Terrain("wall", move="blocked"),
)
#: At most this many cells in one session's paint (a session file's bound).
MAX_PAINTED = 1 << 22


@dataclass(frozen=True)
class Stroke:
    """One drag of the brush: ``terrain`` onto ``cells``; ``before``: each cell's terrain
    before (the same order), which undo puts back."""

    terrain: Terrain
    cells: tuple[Cell, ...]
    before: tuple[Terrain, ...] = ()


def palette(model: MapModel, system: Any = None) -> list[Terrain]:
    """The terrains a GM paints from: the map's own (one record per name, in table order,
    the reader's ``empty`` left out) then the common kinds whose names the map does not
    use; with ``system``, a kind its default token cannot enter is left out (``blocked``
    always stays: it is the point of a wall)."""
    out: list[Terrain] = []
    names: set[str] = set()
    for t in (*model.terrains, *COMMON):
        if t.name in names or t.name == "empty":
            continue
        if system is not None and t.move != "blocked" and _refused(system, t):
            continue
        names.add(t.name)
        out.append(t)
    return out


def _refused(system: Any, terrain: Terrain) -> bool:
    try:
        return system.refusal(system.token({}), terrain) is not None
    except Exception:  # noqa: BLE001 - a system that needs stats for this: keep the kind
        return False


def paint(model: MapModel, terrain: Terrain, cells: list[Cell]) -> Stroke:
    """Give ``cells`` (in the map, each once) ``terrain``, in place; the stroke to undo it."""
    table = list(model.terrains)
    if terrain not in table:
        table.append(terrain)
        model.terrains = tuple(table)
    index = table.index(terrain)
    ids = model.terrain_ids
    before = tuple(table[int(ids[r, c])] for c, r in cells)
    for c, r in cells:
        ids[r, c] = index
    return Stroke(terrain, tuple(cells), before)


def unpaint(model: MapModel, stroke: Stroke) -> None:
    """Put back what ``stroke`` painted over (strokes are undone last first)."""
    table = list(model.terrains)
    ids = model.terrain_ids
    for (c, r), old in zip(stroke.cells, stroke.before, strict=True):
        if old not in table:
            table.append(old)
        ids[r, c] = table.index(old)
    model.terrains = tuple(table)


def stroke_json(stroke: Stroke) -> dict[str, Any]:
    """A stroke as a session file keeps it (``before`` is recomputed when replayed)."""
    return {"terrain": asdict(stroke.terrain), "cells": [list(c) for c in stroke.cells]}


def replay(model: MapModel, doc: Any) -> list[Stroke]:
    """A session's ``paint`` list painted onto ``model`` in order; a malformed one raises
    ValueError naming what is wrong (the session reader turns it into one line)."""
    if doc is None:
        return []
    if not isinstance(doc, list):
        raise ValueError("its paint is not a list of strokes")
    strokes = []
    total = 0
    for i, item in enumerate(doc):
        if not isinstance(item, dict):
            raise ValueError(f"paint stroke {i} is not an object")
        terrain = terrain_from_json(item.get("terrain"), f"paint stroke {i}")
        cells = item.get("cells")
        if not isinstance(cells, list):
            raise ValueError(f"paint stroke {i} has no list of cells")
        total += len(cells)
        if total > MAX_PAINTED:
            raise ValueError(f"its paint holds more than {MAX_PAINTED} cells")
        strokes.append(paint(model, terrain, cells_from_json(model, cells, f"paint stroke {i}")))
    return strokes


def cells_from_json(model: MapModel, cells: list[Any], where: str) -> list[Cell]:
    """A stroke's cells from a session file: each ``[col, row]`` on the map, each once."""
    got: list[Cell] = []
    seen: set[Cell] = set()
    for cell in cells:
        if (
            not isinstance(cell, list)
            or len(cell) != 2
            or not all(isinstance(v, int) and not isinstance(v, bool) for v in cell)
        ):
            raise ValueError(f"{where} has a cell that is not [col, row]")
        cr = (cell[0], cell[1])
        if not model.grid.in_bounds(cr):
            raise ValueError(f"{where} paints cell {cr} outside the map")
        if cr not in seen:
            seen.add(cr)
            got.append(cr)
    return got


def terrain_from_json(d: Any, where: str) -> Terrain:
    """A terrain record from a session file, every field checked."""
    if not isinstance(d, dict):
        raise ValueError(f"{where} names no terrain")
    fields = set(Terrain.__dataclass_fields__)
    extra = sorted(set(d) - fields)
    if extra:
        raise ValueError(f"{where}: unknown terrain field '{extra[0]}'")
    t = Terrain(**d)
    if not isinstance(t.name, str) or t.move not in MODES or t.difficulty not in DIFFICULTIES:
        raise ValueError(f"{where}: a terrain of bad name, move or difficulty")
    if t.fall not in FALLS:
        raise ValueError(f"{where}: fall '{t.fall}'")
    numbers = (t.cost, t.cost_add, *(() if t.height is None else (t.height,)))
    if not all(isinstance(v, int | float) and not isinstance(v, bool) for v in numbers):
        raise ValueError(f"{where}: a cost or height that is not a number")
    if not all(math.isfinite(v) for v in numbers):
        raise ValueError(f"{where}: a cost or height that is not finite")
    if not (t.cost >= 1 and t.cost_add >= 0 and (t.height is None or t.height >= 0)):
        raise ValueError(f"{where}: a cost below 1, or a negative cost_add or height")
    if t.dn is not None and (not isinstance(t.dn, int) or isinstance(t.dn, bool) or t.dn < 0):
        raise ValueError(f"{where}: dn '{t.dn}'")
    return Terrain(**{**d, "cost": float(t.cost), "cost_add": float(t.cost_add)})
