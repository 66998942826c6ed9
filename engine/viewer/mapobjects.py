"""Draw a map's objects the way Tiled draws them (libtiled's ``drawMapObject``, 1.8).

What Tiled 1.8's renderers do for an object without a tile (``OrthogonalRenderer``, which
hexagonal and staggered maps share, and ``IsometricRenderer``), followed here:

* colour: the object group's ``color``, else Qt's grey ``#a0a0a4`` (tmxrasterizer loads no
  object types, so a type's colour never applies); the fill is that colour at alpha 50;
* every outline is a 2-pixel *cosmetic* pen (2 output pixels at any scale) with round caps
  and joins, antialiased; a black "shadow" of the outline is drawn first, one map pixel
  right and down (orthogonal), or under the coloured shape drawn two map pixels up
  (isometric);
* rectangles (a null one is a 20x20 square about its position), ellipses (one of zero
  width or height is a rectangle), polygons (even-odd fill) and polylines (no fill), the
  first vertex of a polygon or polyline marked with a dot of an 8-pixel pen;
* points: Tiled's pin, a 235-degree arc of radius 10 map pixels closed to a tip at the
  point, filled and outlined, with an opaque dot of radius 10/3 at the arc's centre;
* a rotated object turns about its position (clockwise degrees); the layer's opacity
  multiplies everything; a ``topdown`` layer draws its objects by ``y``, else in file order;
  object layers take their place between the tile layers in document order.

Qt computes each pixel's exact coverage of an antialiased shape; here pixels near an edge
are sampled 4x4 times (8x8 below scale 1), the others decided at their centre (edge pixels
may differ by a few levels): :mod:`engine.viewer.objraster`, in the C kernel where it is
built. Not drawn: text objects (they need
Tiled's fonts) and tile objects, and the tints and nested-group opacity of object layers.
"""

from __future__ import annotations

import math
import weakref
from dataclasses import dataclass
from typing import Any
from xml.etree import ElementTree as ET

import numpy as np
import pygame

from engine.grid import Grid
from engine.mapmodel import MapModel, MapObject
from engine.viewer.objraster import SS, SS_SMALL, Paint, Point, Points, draw_paints

#: Qt::gray, Tiled's fallback object colour.
GREY = (160, 160, 164)


@dataclass(frozen=True)
class ObjectLayer:
    """An object layer as drawn: its objects, colour, opacity, offset and draw order."""

    objects: tuple[MapObject, ...]
    colour: tuple[int, int, int] = GREY
    opacity: float = 1.0
    offset: Point = (0.0, 0.0)
    after: int = -1  # drawn after this many tile layers (-1: after all of them)
    name: str = ""  # the layer's name (the viewer hides its collision layers by name)


def parse_colour(text: str | None) -> tuple[int, int, int, int] | None:
    """A Tiled colour (``#rrggbb``, ``#aarrggbb``, with or without ``#``) as RGBA.

    >>> parse_colour("#80ff0000")
    (255, 0, 0, 128)
    """
    if not text:
        return None
    s = str(text).strip().lstrip("#")
    try:
        if len(s) == 6:
            return (int(s[0:2], 16), int(s[2:4], 16), int(s[4:6], 16), 255)
        if len(s) == 8:
            return (int(s[2:4], 16), int(s[4:6], 16), int(s[6:8], 16), int(s[0:2], 16))
    except ValueError:
        return None
    return None


# --------------------------------------------------------------------------- layers


#: pytmx map -> (the document tree the layers were read from, the layers).
_layers_cache: weakref.WeakKeyDictionary[Any, tuple[ET.Element | None, list[ObjectLayer]]] = (
    weakref.WeakKeyDictionary()
)


def object_layers(model: MapModel, tmx: Any, root: ET.Element | None = None) -> list[ObjectLayer]:
    """The visible object layers of the map, in document order (groups walked: their
    visibility, opacity and offsets folded in), each placed among the tile layers, with
    the model's objects (shapes as the reader told them apart). ``root``: the document's
    tree as the reader kept it (``TiledFile.root``; without it, pytmx's object layers,
    after the tile layers). Cached per pytmx map."""
    if tmx is None or not model.objects:
        return []
    try:
        kept_root, kept = _layers_cache[tmx]
        if kept_root is root:
            return kept
    except (KeyError, TypeError):
        pass
    got = _read_layers(model, tmx, root)
    try:
        _layers_cache[tmx] = (root, got)
    except TypeError:
        pass
    return got


def _read_layers(model: MapModel, tmx: Any, root: ET.Element | None) -> list[ObjectLayer]:  # noqa: C901
    from engine.tiled.objects import origin_pixels

    by_id = {o.id: o for o in model.objects}
    shift = origin_pixels(model.grid, *model.origin) if model.origin != (0, 0) else (0.0, 0.0)
    if root is None:
        return _pytmx_layers(model, tmx, by_id, shift)
    found: list[tuple[ET.Element, bool, float, Point, int]] = []
    tiles = 0

    def attr(el: ET.Element, name: str, default: float) -> float:
        try:
            value = float(el.get(name, default))
        except ValueError:
            return default
        return value if math.isfinite(value) else default

    def walk(node: ET.Element, visible: bool, opacity: float, off: Point) -> None:
        nonlocal tiles
        for child in node:
            if child.tag not in ("layer", "group", "objectgroup"):
                continue
            vis = visible and child.get("visible", "1") != "0"
            opa = opacity * attr(child, "opacity", 1.0)
            o = (off[0] + attr(child, "offsetx", 0.0), off[1] + attr(child, "offsety", 0.0))
            if child.tag == "group":
                walk(child, vis, opa, o)
            elif child.tag == "layer":
                tiles += 1
            elif vis:
                found.append((child, vis, opa, o, tiles))

    walk(root, True, 1.0, (0.0, 0.0))
    out: list[ObjectLayer] = []
    for el, _, opacity, offset, after in found:
        objs: list[MapObject] = []
        for oel in el.findall("object"):
            try:
                mo = by_id.get(int(oel.get("id", "")))
            except ValueError:
                mo = None
            if mo is None or oel.get("visible", "1") == "0":
                continue
            if shift != (0.0, 0.0):
                mo = MapObject(**{**mo.__dict__, "x": mo.x - shift[0], "y": mo.y - shift[1]})
            objs.append(mo)
        if el.get("draworder", "topdown") == "topdown":
            objs.sort(key=lambda o: o.y)  # stable, as Tiled's std::stable_sort
        colour = parse_colour(el.get("color"))
        out.append(
            ObjectLayer(
                tuple(objs),
                colour[:3] if colour else GREY,
                min(1.0, max(0.0, opacity)),
                offset,
                after if tiles == len(model.layers) else -1,
                el.get("name", ""),
            )
        )
    return out


def _pytmx_layers(
    model: MapModel, tmx: Any, by_id: dict[int, MapObject], shift: Point
) -> list[ObjectLayer]:
    """The object layers as pytmx lists them (after every tile layer: pytmx does not keep
    the document order), for a pytmx map the reader did not make."""
    out: list[ObjectLayer] = []
    for layer in getattr(tmx, "layers", []) or []:
        if type(layer).__name__ != "TiledObjectGroup" or not getattr(layer, "visible", True):
            continue
        objs: list[MapObject] = []
        for po in layer:
            if not getattr(po, "visible", 1):
                continue
            mo = by_id.get(int(getattr(po, "id", 0) or 0)) or _from_pytmx(po)
            if shift != (0.0, 0.0):
                mo = MapObject(**{**mo.__dict__, "x": mo.x - shift[0], "y": mo.y - shift[1]})
            objs.append(mo)
        if str(getattr(layer, "draworder", "") or "topdown") == "topdown":
            objs.sort(key=lambda o: o.y)
        colour = parse_colour(getattr(layer, "color", None))
        try:
            opacity = min(1.0, max(0.0, float(getattr(layer, "opacity", 1.0))))
            offset = (float(layer.offsetx or 0), float(layer.offsety or 0))
        except (TypeError, ValueError):
            opacity, offset = 1.0, (0.0, 0.0)
        name = str(getattr(layer, "name", "") or "")
        out.append(
            ObjectLayer(tuple(objs), colour[:3] if colour else GREY, opacity, offset, name=name)
        )
    return out


def _from_pytmx(po: Any) -> MapObject:
    """A model object for a pytmx object the model does not know (pytmx's polygon points
    are absolute and already turned)."""
    x, y = float(po.x or 0), float(po.y or 0)
    pts = getattr(po, "points", None)
    if pts:
        rel = tuple((float(p[0]) - x, float(p[1]) - y) for p in pts)
        shape = "polygon" if getattr(po, "closed", True) else "polyline"
        return MapObject(int(po.id or 0), str(po.name or ""), "", shape, x, y, points=rel)
    shape = "tile" if getattr(po, "gid", 0) else "rectangle"
    return MapObject(
        int(po.id or 0),
        str(po.name or ""),
        "",
        shape,
        x,
        y,
        float(po.width or 0),
        float(po.height or 0),
        float(po.rotation or 0),
    )


# --------------------------------------------------------------------------- shapes


def _ellipse(x: float, y: float, w: float, h: float) -> list[Point]:
    n = max(48, min(720, int((abs(w) + abs(h)) * 0.75)))
    cx, cy, rx, ry = x + w / 2, y + h / 2, w / 2, h / 2
    return [
        (cx + rx * math.cos(2 * math.pi * k / n), cy + ry * math.sin(2 * math.pi * k / n))
        for k in range(n)
    ]


def _pin() -> list[Point]:
    """Tiled's point marker relative to the point (drawPointObject): y up by 2 radii."""
    radius, sweep = 10.0, 235.0
    start = 90.0 - sweep / 2
    pts = []
    for k in range(65):
        a = math.radians(start + sweep * k / 64)
        pts.append((radius * math.cos(a), -radius * math.sin(a) - 2 * radius))
    pts.append((0.0, 0.0))
    return pts


def _points(path: Points) -> np.ndarray:
    """A path's points as rows (x, y) of float64 (the shapes' arithmetic then runs on whole
    paths, with the same numbers as point by point)."""
    return np.asarray(path, dtype=np.float64).reshape(-1, 2)


def _moved(path: Points, dx: float, dy: float) -> np.ndarray:
    return _points(path) + (dx, dy)


def _ortho_paints(obj: MapObject, colour: tuple[int, int, int]) -> list[Paint]:
    """Tiled's OrthogonalRenderer::drawMapObject, in screen pixels before rotation."""
    line = (*colour, 255)
    black = (0, 0, 0, 255)
    fill = (*colour, 50)
    s = 1.0  # the shadow offset: 2-pixel pen / painter scale 1, halved, in map pixels
    x, y, w, h = obj.x, obj.y, obj.width, obj.height
    shape = obj.shape
    if shape == "ellipse" and ((w == 0) ^ (h == 0)):
        shape = "rectangle"
    if shape in ("rectangle", "ellipse"):
        if w == 0 and h == 0:
            x, y, w, h = x - 10, y - 10, 20.0, 20.0
        if shape == "rectangle":
            ring = [(x, y), (x + w, y), (x + w, y + h), (x, y + h)]
        else:
            ring = _ellipse(x, y, w, h)
        return [
            Paint("stroke", ((_moved(ring, s, s), True),), black),
            Paint("fill", ((ring, True),), fill),
            Paint("stroke", ((ring, True),), line),
        ]
    if shape in ("polygon", "polyline"):
        if not obj.points:
            return []
        pts = _moved(obj.points, x, y)
        closed = shape == "polygon"
        first, first_s = pts[:1], _moved(pts[:1], s, s)
        paints = [
            Paint("stroke", ((_moved(pts, s, s), closed),), black),
            Paint("stroke", ((first_s, False),), black, 4.0),
        ]
        if closed:
            paints.append(Paint("fill", ((pts, True),), fill))
        paints += [
            Paint("stroke", ((pts, closed),), line),
            Paint("stroke", ((first, False),), line, 4.0),
        ]
        return paints
    if shape == "point":
        return _pin_paints(_moved(_pin(), x, y), (x, y - 20.0), colour)
    return []  # text and tile objects are not drawn


def _pin_paints(pin: Points, centre: Point, colour: tuple[int, int, int]) -> list[Paint]:
    line = (*colour, 255)
    s = 1.0
    dot = _ellipse(centre[0] - 10 / 3, centre[1] - 10 / 3, 20 / 3, 20 / 3)
    return [
        Paint("stroke", ((_moved(pin, s, s), True),), (0, 0, 0, 255)),
        Paint("fill", ((pin, True),), (*colour, 50)),
        Paint("stroke", ((pin, True),), line),
        Paint("fill", ((dot, True),), line),
        Paint("stroke", ((dot, True),), line),
    ]


def _iso_project(grid: Grid, p: Point) -> Point:
    """libtiled's IsometricRenderer::pixelToScreenCoords."""
    tw, th = grid.tile_width, grid.tile_height
    tx, ty = p[0] / th, p[1] / th
    return ((tx - ty) * tw / 2 + grid.height * tw / 2, (tx + ty) * th / 2)


def _iso_paints(grid: Grid, obj: MapObject, colour: tuple[int, int, int]) -> list[Paint]:
    """Tiled's IsometricRenderer::drawMapObject: a black outline, then the coloured shape
    two map pixels up."""
    line = (*colour, 255)
    black = (0, 0, 0, 255)
    fill = (*colour, 50)
    up = 2.0

    def proj(pts: Points) -> np.ndarray:
        # _iso_project's arithmetic over every point at once
        tw, th = grid.tile_width, grid.tile_height
        at = _points(pts)
        tx, ty = at[:, 0] / th, at[:, 1] / th
        return np.stack([(tx - ty) * tw / 2 + grid.height * tw / 2, (tx + ty) * th / 2], axis=1)

    x, y, w, h = obj.x, obj.y, obj.width, obj.height
    if obj.shape == "point":
        px, py = _iso_project(grid, (x, y))
        return _pin_paints(_moved(_pin(), px, py), (px, py - 20.0), colour)
    if obj.shape in ("rectangle", "ellipse"):
        rect = proj([(x, y), (x + w, y), (x + w, y + h), (x, y + h)])
        if obj.shape == "rectangle":
            return [
                Paint("stroke", ((rect, True),), black),
                Paint("fill", ((_moved(rect, 0, -up), True),), fill),
                Paint("stroke", ((_moved(rect, 0, -up), True),), line),
            ]
        ring = proj(_ellipse(x, y, w, h))
        return [
            Paint("stroke", ((ring, True),), black),
            Paint("stroke", ((rect, True),), black),
            Paint("stroke", ((_moved(rect, 0, -up), True),), line),
            Paint("fill", ((_moved(ring, 0, -up), True),), fill),
            Paint("stroke", ((_moved(ring, 0, -up), True),), line),
        ]
    if obj.shape in ("polygon", "polyline") and obj.points:
        pts = proj(_moved(obj.points, x, y))
        closed = obj.shape == "polygon"
        moved = _moved(pts, 0, -up)
        paints = [
            Paint("stroke", ((pts, closed),), black),
            Paint("stroke", ((pts[:1], False),), black, 4.0),
        ]
        if closed:
            paints.append(Paint("fill", ((moved, True),), fill))
        paints += [
            Paint("stroke", ((moved, closed),), line),
            Paint("stroke", ((moved[:1], False),), line, 4.0),
        ]
        return paints
    return []


def object_paints(grid: Grid, obj: MapObject, colour: tuple[int, int, int]) -> list[Paint]:
    """What Tiled draws for one object, in screen pixels of the map (rotation applied)."""
    if grid.orientation == "isometric":
        paints = _iso_paints(grid, obj, colour)
        origin = _iso_project(grid, (obj.x, obj.y))
    else:
        paints = _ortho_paints(obj, colour)
        origin = (obj.x, obj.y)
    if not obj.rotation or not paints:
        return paints
    a = math.radians(obj.rotation)
    c, s = math.cos(a), math.sin(a)
    ox, oy = origin

    def turn(path: Points) -> np.ndarray:
        at = _points(path)
        x, y = at[:, 0], at[:, 1]
        return np.stack(
            [ox + (x - ox) * c - (y - oy) * s, oy + (x - ox) * s + (y - oy) * c], axis=1
        )

    return [
        Paint(p.kind, tuple((turn(pts), closed) for pts, closed in p.paths), p.colour, p.half)
        for p in paints
    ]


def _to_output(paints: list[Paint], scale: float, rect: pygame.Rect) -> list[Paint]:
    def tr(path: Points) -> np.ndarray:
        return _points(path) * scale - (rect.x, rect.y)

    return [
        Paint(p.kind, tuple((tr(pts), closed) for pts, closed in p.paths), p.colour, p.half)
        for p in paints
    ]


def draw_object_layer(
    out: pygame.Surface, grid: Grid, layer: ObjectLayer, scale: float, rect: pygame.Rect
) -> bool:
    """Draw one object layer onto ``out`` (premultiplied; ``rect``: the area of the scaled
    map that ``out`` shows). True if it drew anything."""
    drew = False
    ox, oy = layer.offset
    for obj in layer.objects:
        paints = object_paints(grid, obj, layer.colour)
        if ox or oy:
            paints = [
                Paint(p.kind, tuple((_moved(q, ox, oy), c) for q, c in p.paths), p.colour, p.half)
                for p in paints
            ]
        ss = SS if scale >= 1 else SS_SMALL
        drew |= draw_paints(out, _to_output(paints, scale, rect), layer.opacity, ss)
    return drew
