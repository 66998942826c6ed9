"""A map model written back as a Tiled map (.tmx) that carries its rules: what
``tacgrid export`` writes after a GM painted terrain with the viewer's brush (or gave a bare
map rules with ``--set``).

The file holds one tile layer ``terrain`` whose tiles are the model's terrain records, a
tileset ``tacgrid-terrain`` (one tile a record, its class the terrain's name, every terrain
property written out, and a picture of flat colours beside the map, one per movement mode),
the map properties tacgrid reads (cell size and unit, diagonals, corners, system), and the
objects the model still needs: spawns (one point each, under their unique ids), exits, and
walls, doors and windows (under their own ids). Regions are not written: their effect is in
the terrain layer already. Reading the file back gives the same model (tests/test_brush.py).
"""

from __future__ import annotations

import os
import struct
import zlib
from typing import Any
from xml.sax.saxutils import quoteattr

from engine.mapmodel import MapModel, MapObject, Terrain

#: Flat colours per movement mode for the tileset's picture (the viewer's terrain colours).
MODE_COLOURS: dict[str, tuple[int, int, int]] = {
    "walk": (112, 170, 84),
    "crawl": (128, 128, 40),
    "swim": (58, 120, 204),
    "climb": (128, 88, 52),
    "ladder": (210, 180, 140),
    "gap": (0, 0, 0),
    "air": (190, 226, 250),
    "blocked": (64, 64, 64),
}
#: The names the export gives its layer and tileset.
LAYER_NAME = "terrain"
TILESET_NAME = "tacgrid-terrain"


def export_tmx(model: MapModel, out: str) -> tuple[str, str]:
    """Write ``model`` as the Tiled map ``out`` and its tileset picture beside it
    (``NAME-terrain.png``), each whole or not at all; returns both paths."""
    from engine.safeio import write_png, write_text

    terrains = list(model.terrains)
    picture = os.path.splitext(out)[0] + "-terrain.png"
    png = tileset_png(model, terrains)
    doc = tmx_text(model, terrains, os.path.basename(picture))
    write_png(picture, png, "tileset picture")
    write_text(out, doc, "map")
    return out, picture


def tmx_text(model: MapModel, terrains: list[Terrain], picture: str) -> str:
    """The .tmx document."""
    g = model.grid
    w, h = g.width, g.height
    attrs = {
        "version": "1.10",
        "tiledversion": "1.10.2",
        "orientation": g.orientation,
        "renderorder": "right-down",
        "width": str(w),
        "height": str(h),
        "tilewidth": str(g.tile_width),
        "tileheight": str(g.tile_height),
        "infinite": "0",
    }
    if g.orientation == "hexagonal":
        attrs["hexsidelength"] = str(g.hex_side)
    if g.orientation in ("hexagonal", "staggered"):
        attrs["staggeraxis"] = g.stagger_axis
        attrs["staggerindex"] = g.stagger_index
    attrs["nextlayerid"] = "3"
    objects = _objects(model)
    top = max((w.id for w in model.walls), default=0) + len(objects)
    attrs["nextobjectid"] = str(top + 1)
    head = " ".join(f"{k}={quoteattr(v)}" for k, v in attrs.items())
    out = ['<?xml version="1.0" encoding="UTF-8"?>', f"<map {head}>"]
    out.append(_properties(_map_properties(model)))
    n = len(terrains)
    out.append(
        f'<tileset firstgid="1" name="{TILESET_NAME}" tilewidth="{g.tile_width}" '
        f'tileheight="{g.tile_height}" tilecount="{n}" columns="{n}">'
    )
    out.append(
        f'<image source={quoteattr(picture)} width="{g.tile_width * n}" height="{g.tile_height}"/>'
    )
    for i, t in enumerate(terrains):
        out.append(f'<tile id="{i}" class={quoteattr(t.name)}>')
        out.append(_properties(terrain_properties(t)))
        out.append("</tile>")
    out.append("</tileset>")
    ids = model.terrain_ids
    rows = [",".join(str(int(v) + 1) for v in ids[r]) for r in range(h)]
    out.append(f'<layer id="1" name="{LAYER_NAME}" width="{w}" height="{h}">')
    out.append('<data encoding="csv">\n' + ",\n".join(rows) + "\n</data>")
    out.append("</layer>")
    if objects:
        out.append('<objectgroup id="2" name="objects">')
        out.extend(objects)
        out.append("</objectgroup>")
    out.append("</map>")
    return "\n".join(out) + "\n"


def terrain_properties(t: Terrain) -> dict[str, Any]:
    """Every terrain property of ``t`` as a tile carries it (``dn`` and ``height`` only
    where set: unset is their default)."""
    props: dict[str, Any] = {
        "terrain": t.name,
        "move": t.move,
        "difficulty": t.difficulty,
        "cost": float(t.cost),
        "cost_add": float(t.cost_add),
        "fall": t.fall,
    }
    if t.dn is not None:
        props["dn"] = int(t.dn)
    if t.height is not None:
        props["height"] = float(t.height)
    return props


def _map_properties(model: MapModel) -> dict[str, Any]:
    props: dict[str, Any] = {}
    if model.cell_size is not None:
        props["cell_size"] = float(model.cell_size)
    if model.cell_unit is not None:
        props["cell_unit"] = model.cell_unit
    props["diagonals"] = model.grid.diagonals
    props["corners"] = model.corners
    if model.system:
        props["system"] = model.system
    return props


def _properties(props: dict[str, Any]) -> str:
    parts = []
    for k, v in props.items():
        if isinstance(v, bool):
            parts.append(f'<property name="{k}" type="bool" value="{"true" if v else "false"}"/>')
        elif isinstance(v, float):
            parts.append(f'<property name="{k}" type="float" value="{v!r}"/>')
        elif isinstance(v, int):
            parts.append(f'<property name="{k}" type="int" value="{v}"/>')
        else:
            parts.append(f"<property name={quoteattr(k)} value={quoteattr(str(v))}/>")
    return "<properties>" + "".join(parts) + "</properties>"


def _objects(model: MapModel) -> list[str]:
    """Walls, doors and windows under their own ids (a door's id is what play and sessions
    name), as polylines in absolute coordinates (read back to the same points); then spawns
    (a point each, at the cell's centre) and exits as drawn (shifted where an infinite map
    was cropped), numbered after the walls."""
    from engine.tiled.objects import _object_space_center, origin_pixels

    out: list[str] = []
    for w in model.walls:
        pts = " ".join(f"{x!r},{y!r}" for x, y in (_from_screen(model, p) for p in w.points))
        props = _properties({"open": True}) if w.open else ""
        out.append(
            f'<object id="{w.id}" name={quoteattr(w.name)} class="{w.kind}" x="0" y="0">'
            f'{props}<polyline points="{pts}"/></object>'
        )
    next_id = max((w.id for w in model.walls), default=0) + 1
    shift = origin_pixels(model.grid, *model.origin) if model.origin != (0, 0) else (0.0, 0.0)
    for s in model.spawns:
        x, y = _object_space_center(model.grid, s.cell)
        out.append(
            f'<object id="{next_id}" name={quoteattr(s.id)} class="spawn" '
            f'x="{x!r}" y="{y!r}"><point/></object>'
        )
        next_id += 1
    for obj in model.objects:
        if obj.cls.lower() == "exit":
            out.append(_object(next_id, obj, shift))
            next_id += 1
    return out


def _from_screen(model: MapModel, p: tuple[float, float]) -> tuple[float, float]:
    """Map pixels back to Tiled's object space (isometric objects are stored unprojected:
    the inverse of :func:`engine.tiled.objects._to_screen`)."""
    g = model.grid
    if g.orientation != "isometric":
        return p
    tw, th = g.tile_width, g.tile_height
    sx = p[0] - g.height * tw // 2
    tx = sx / tw + p[1] / th
    ty = p[1] / th - sx / tw
    return (tx * th, ty * th)


def _object(oid: int, obj: MapObject, shift: tuple[float, float]) -> str:
    attrs = (
        f'id="{oid}" name={quoteattr(obj.name)} class={quoteattr(obj.cls)} '
        f'x="{obj.x - shift[0]!r}" y="{obj.y - shift[1]!r}"'
    )
    if obj.width:
        attrs += f' width="{obj.width!r}"'
    if obj.height:
        attrs += f' height="{obj.height!r}"'
    if obj.rotation:
        attrs += f' rotation="{obj.rotation!r}"'
    inner = ""
    if obj.properties:
        inner += _properties(obj.properties)
    if obj.shape in ("polygon", "polyline"):
        pts = " ".join(f"{x!r},{y!r}" for x, y in obj.points)
        inner += f'<{obj.shape} points="{pts}"/>'
    elif obj.shape in ("ellipse", "point"):
        inner += f"<{obj.shape}/>"
    return f"<object {attrs}>{inner}</object>"


def tileset_png(model: MapModel, terrains: list[Terrain]) -> bytes:
    """The tileset's picture: one tile a terrain record, its cell's shape (square, diamond
    or hexagon, as the grid draws it) filled with its mode's colour, darker where a cost
    or a check makes it harder, on a transparent ground."""
    g = model.grid
    tw, th = g.tile_width, g.tile_height
    cell = (0, 0)
    ox, oy = g.cell_origin(cell)
    shape = [(x - ox, y - oy) for x, y in g.cell_corners(cell)]
    inside = [[_inside(shape, x + 0.5, y + 0.5) for x in range(tw)] for y in range(th)]
    rows = []
    for y in range(th):
        row = bytearray()
        for t in terrains:
            r, gr, b = terrain_colour(t)
            for x in range(tw):
                edge = inside[y][x] and not all(
                    0 <= y + dy < th and 0 <= x + dx < tw and inside[y + dy][x + dx]
                    for dx, dy in ((1, 0), (-1, 0), (0, 1), (0, -1))
                )
                if not inside[y][x]:
                    row += b"\0\0\0\0"
                elif edge:
                    row += bytes((r // 2, gr // 2, b // 2, 255))
                else:
                    row += bytes((r, gr, b, 255))
        rows.append(bytes(row))
    return encode_png(tw * len(terrains), th, rows)


def terrain_colour(t: Terrain) -> tuple[int, int, int]:
    """A terrain's flat colour: its mode's, darker for each of a cost, an added cost and a
    check (so rough ground, mud and a difficult climb stand apart from open ground)."""
    r, g, b = MODE_COLOURS.get(t.move, (200, 0, 200))
    harder = (t.cost > 1) + (t.cost_add > 0) + (t.difficulty != "none")
    k = max(0.45, 1.0 - 0.18 * harder)
    return (int(r * k), int(g * k), int(b * k))


def _inside(poly: list[tuple[float, float]], px: float, py: float) -> bool:
    inside = False
    j = len(poly) - 1
    for i in range(len(poly)):
        xi, yi = poly[i]
        xj, yj = poly[j]
        if (yi > py) != (yj > py) and px < (xj - xi) * (py - yi) / (yj - yi) + xi:
            inside = not inside
        j = i
    return inside


def encode_png(width: int, height: int, rows: list[bytes]) -> bytes:
    """An 8-bit RGBA PNG of ``rows`` (each ``width * 4`` bytes), no filter."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        body = kind + data
        return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body))

    raw = b"".join(b"\0" + row for row in rows)
    header = struct.pack(">IIBBBBB", width, height, 8, 6, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(raw, 9))
        + chunk(b"IEND", b"")
    )
