"""The ``info`` report: what a map file is (CONTRACT.md), as JSON and as text."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from engine.mapmodel import MapModel

from engine.errors import printable


def info_report(path: str, model: MapModel | None = None) -> dict[str, Any]:
    """The `info` JSON for a map file (CONTRACT.md); ``model``: the map as already read
    (and edited by ``--set``), else read here."""
    from engine.tiled import load_map

    model = load_map(path) if model is None else model
    g = model.grid
    size, unit, source = model.cell_size, model.cell_unit, "map"
    if size is None or unit is None:
        source = "default"
        size = size if size is not None else 5.0
        unit = unit or "ft"
    staggered = g.orientation in ("hexagonal", "staggered")
    return {
        "path": path,
        "orientation": g.orientation,
        "grid": g.kind,
        "stagger_axis": g.stagger_axis if staggered else None,
        "stagger_index": g.stagger_index if staggered else None,
        "hex_side": g.hex_side if g.orientation == "hexagonal" else None,
        "width": g.width,
        "height": g.height,
        "tile_width": g.tile_width,
        "tile_height": g.tile_height,
        "pixel_size": list(g.pixel_size()),
        "cell_size": size,
        "cell_unit": unit,
        "cell_size_source": source,
        "diagonals": g.diagonals if g.kind != "hex" else None,
        "system": model.system,
        "cells": model.mode_counts(),
        "terrain": model.terrain_counts(),
        "spawns": [{"id": s.id, "cell": list(s.cell)} for s in model.spawns],
        "exits": [{"name": e.name, "cells": [list(c) for c in e.cells]} for e in model.exits],
        "corners": model.corners,
        "walls": [
            {"id": w.id, "kind": w.kind, "name": w.name, "open": w.open, "points": len(w.points)}
            for w in model.walls
        ],
        "layers": [lay.name for lay in model.layers],
        "origin": list(model.origin),
        "notes": list(model.notes),
        "collision": [
            {"convention": c.convention, "source": c.source, "cells": c.cells}
            for c in model.collision
        ],
    }


def format_info(rep: dict[str, Any]) -> str:  # noqa: C901
    """The ``info`` text: grid, tiles, cell size, cells by movement mode, terrain, spawns."""
    lines = [f"{rep['path']}"]
    grid = rep["grid"]
    if rep["orientation"] == "hexagonal":
        top = "pointy-top" if rep["stagger_axis"] == "y" else "flat-top"
        grid = f"hex ({top}, stagger {rep['stagger_axis']}/{rep['stagger_index']}, side {rep['hex_side']})"
    elif rep["orientation"] == "staggered":
        grid = f"staggered diamond (stagger {rep['stagger_axis']}/{rep['stagger_index']})"
    elif rep["orientation"] == "isometric":
        grid = "square (drawn isometric)"
    lines.append(f"  grid      {grid}, {rep['width']} x {rep['height']} cells")
    lines.append(
        f"  tiles     {rep['tile_width']} x {rep['tile_height']} px, map "
        f"{rep['pixel_size'][0]} x {rep['pixel_size'][1]} px"
    )
    src = "" if rep["cell_size_source"] == "map" else " (default; set map property cell_size)"
    lines.append(f"  cell      {rep['cell_size']:g} {rep['cell_unit']}{src}")
    if rep["diagonals"]:
        lines.append(f"  diagonals {rep['diagonals']}")
    if rep["system"]:
        lines.append(f"  system    {rep['system']}")
    total = rep["width"] * rep["height"]
    lines.append("  cells by movement mode:")
    for mode, n in rep["cells"].items():
        if n:
            lines.append(f"    {mode:<8} {n:>8}  {100 * n / total:5.1f}%")
    lines.append("  terrain:")
    for name, n in list(rep["terrain"].items())[:12]:
        lines.append(f"    {name:<16} {n:>8}")
    if len(rep["terrain"]) > 12:
        lines.append(f"    ... {len(rep['terrain']) - 12} more")
    if rep["spawns"]:
        spawns = ", ".join(f"{s['id']} {s['cell'][0]},{s['cell'][1]}" for s in rep["spawns"])
        lines.append(f"  spawns    {spawns}")
    if rep["exits"]:
        exits = ", ".join(f"{e['name']} ({len(e['cells'])} cells)" for e in rep["exits"])
        lines.append(f"  exits     {exits}")
    if rep["walls"]:
        kinds: dict[str, int] = {}
        for w in rep["walls"]:
            kinds[w["kind"]] = kinds.get(w["kind"], 0) + 1
        said = ", ".join(f"{n} {k}{'s' if n > 1 else ''}" for k, n in kinds.items())
        doors = [w for w in rep["walls"] if w["kind"] == "door"]
        if doors:
            states = ", ".join(
                f"{d['name'] or d['id']} {'open' if d['open'] else 'closed'}" for d in doors
            )
            said += f" (doors: {states})"
        lines.append(f"  walls     {said}")
    if rep["corners"] != "pass":
        lines.append(f"  corners   {rep['corners']} (no diagonal round a wall or blocked cell)")
    for c in rep["collision"]:
        where = "tile property" if c["convention"] == "tile-property" else c["convention"]
        lines.append(f"  collision {where} '{c['source']}': {c['cells']} cells blocked")
    for note in rep["notes"]:
        lines.append(f"  note: {note}")
    # Each line escaped on its own: a name or note from the file keeps to its line.
    return "\n".join(printable(line) for line in lines)
