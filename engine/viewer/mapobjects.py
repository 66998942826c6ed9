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
may differ by a few levels). Not drawn: text objects (they need
Tiled's fonts) and tile objects, and the tints and nested-group opacity of object layers.
"""

from __future__ import annotations

import math
import weakref
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any
from xml.etree import ElementTree as ET

import numpy as np
import pygame

from engine.grid import Grid
from engine.mapmodel import MapModel, MapObject

#: Qt::gray, Tiled's fallback object colour.
GREY = (160, 160, 164)
#: Samples per pixel along each axis when measuring coverage near an edge: 4 at scale 1
#: and above, 8 below (where a one-map-pixel shadow offset is a fraction of a pixel).
SS = 4
SS_SMALL = 8
Point = tuple[float, float]
Path = tuple[list[Point], bool]  # points (screen pixels), closed


@dataclass(frozen=True)
class Paint:
    """One drawing operation: fill (even-odd) or stroke (``half`` output pixels wide each
    side, round caps and joins) of paths, in a straight RGBA colour."""

    kind: str  # "fill" | "stroke"
    paths: tuple[Path, ...]
    colour: tuple[int, int, int, int]
    half: float = 1.0


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


def _moved(path: list[Point], dx: float, dy: float) -> list[Point]:
    return [(x + dx, y + dy) for x, y in path]


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
        pts = [(x + px, y + py) for px, py in obj.points]
        if not pts:
            return []
        closed = shape == "polygon"
        first, first_s = [pts[0]], [(pts[0][0] + s, pts[0][1] + s)]
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


def _pin_paints(pin: list[Point], centre: Point, colour: tuple[int, int, int]) -> list[Paint]:
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

    def proj(pts: Iterable[Point]) -> list[Point]:
        return [_iso_project(grid, p) for p in pts]

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
        pts = proj((x + px, y + py) for px, py in obj.points)
        closed = obj.shape == "polygon"
        moved = _moved(pts, 0, -up)
        paints = [
            Paint("stroke", ((pts, closed),), black),
            Paint("stroke", (([pts[0]], False),), black, 4.0),
        ]
        if closed:
            paints.append(Paint("fill", ((moved, True),), fill))
        paints += [
            Paint("stroke", ((moved, closed),), line),
            Paint("stroke", (([moved[0]], False),), line, 4.0),
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

    def turn(path: list[Point]) -> list[Point]:
        return [
            (ox + (x - ox) * c - (y - oy) * s, oy + (x - ox) * s + (y - oy) * c) for x, y in path
        ]

    return [
        Paint(p.kind, tuple((turn(pts), closed) for pts, closed in p.paths), p.colour, p.half)
        for p in paints
    ]


# --------------------------------------------------------------------------- raster


def _segments(paths: Sequence[Path], fill: bool) -> np.ndarray:
    """The straight pieces of ``paths`` (closed ones, and every path of a fill, closed) as
    rows (ax, ay, bx, by); a single point is a piece of length 0."""
    segs: list[tuple[float, float, float, float]] = []
    for pts, closed in paths:
        if len(pts) == 1:
            segs.append((*pts[0], *pts[0]))
            continue
        segs.extend((*a, *b) for a, b in zip(pts, pts[1:], strict=False))
        if (closed or fill) and len(pts) > 2:
            segs.append((*pts[-1], *pts[0]))
    return np.array(segs, dtype=np.float64).reshape(-1, 4)


#: Pairs (a segment and a pixel or row) worked on at once, and samples: the passes below
#: hold a few temporaries of this many numbers, small enough to be reused from the heap
#: (larger ones are mapped afresh each time, and their pages cost more than the arithmetic).
_PAIRS = 1 << 12
_SAMPLES = 1 << 14


def _expand(
    starts: np.ndarray, ends: np.ndarray, limit: int = _PAIRS
) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    """Every ``(i, v)`` with ``starts[i] <= v < ends[i]``, as two arrays, in chunks of at
    most about 2 x ``limit`` (a range longer than that is split)."""
    sizes = np.maximum(ends - starts, 0)
    pieces = -(-sizes // limit)
    owner = np.repeat(np.arange(sizes.size), pieces)
    if owner.size == 0:
        return
    nth = np.arange(owner.size) - np.repeat(np.cumsum(pieces) - pieces, pieces)
    lo = starts[owner] + nth * limit
    size = np.minimum(lo + limit, ends[owner]) - lo
    ends_at = np.cumsum(size)
    group = (ends_at - size) // limit
    cuts = [0, *(np.flatnonzero(np.diff(group)) + 1).tolist(), owner.size]
    for a, b in zip(cuts[:-1], cuts[1:], strict=False):
        sz = size[a:b]
        first = np.repeat(lo[a:b] - (np.cumsum(sz) - sz), sz)
        yield np.repeat(owner[a:b], sz), first + np.arange(int(sz.sum()))


#: (box, rows) -> the columns (first, end) of each row that can lie near the box's segment.
Narrow = Callable[[np.ndarray, np.ndarray], tuple[np.ndarray, np.ndarray]]


def _boxes(
    r0: np.ndarray,
    r1: np.ndarray,
    c0: np.ndarray,
    c1: np.ndarray,
    limit: int = _PAIRS,
    narrow: Narrow | None = None,
) -> Iterator[tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """Every cell ``(row, col)`` of each box ``[r0, r1) x [c0, c1)``, with its box's
    number, as three arrays, in chunks of at most about 2 x ``limit``; ``narrow``: each
    row only over the columns it gives (a long slanted segment's box is mostly far from
    it: its cells grow with its length squared, those near it with its length)."""
    for box, rows in _expand(r0, r1, limit):
        lo, hi = c0[box], c1[box]
        if narrow is not None:
            near_lo, near_hi = narrow(box, rows)
            lo, hi = np.maximum(lo, near_lo), np.minimum(hi, near_hi)
        for k, cols in _expand(lo, hi, limit):
            yield box[k], rows[k], cols


def _x_span(segs: np.ndarray, ylo: np.ndarray, yhi: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The least and greatest x of each segment (rows of ``segs``) between ``ylo`` and
    ``yhi`` (its end nearest the band where it does not reach it)."""
    ax, ay, bx, by = segs.T
    dy = by - ay
    flat = dy == 0
    safe = np.where(flat, 1.0, dy)
    t0, t1 = (ylo - ay) / safe, (yhi - ay) / safe
    tlo = np.where(flat, 0.0, np.clip(np.minimum(t0, t1), 0.0, 1.0))
    thi = np.where(flat, 1.0, np.clip(np.maximum(t0, t1), 0.0, 1.0))
    xa, xb = ax + tlo * (bx - ax), ax + thi * (bx - ax)
    return np.minimum(xa, xb), np.maximum(xa, xb)


def _seg_d2(px: np.ndarray, py: np.ndarray, ax: Any, ay: Any, bx: Any, by: Any) -> np.ndarray:
    """Squared distance from each point to its segment (arrays or numbers, broadcast)."""
    dx, dy = bx - ax, by - ay
    qx, qy = px - ax, py - ay
    l2 = dx * dx + dy * dy
    some = l2 > 0
    t = (qx * dx + qy * dy) / np.where(some, l2, 1.0)
    np.clip(t, 0.0, 1.0, out=t)
    if np.all(some):
        return np.asarray((qx - t * dx) ** 2 + (qy - t * dy) ** 2)
    return np.asarray(np.where(some, (qx - t * dx) ** 2 + (qy - t * dy) ** 2, qx * qx + qy * qy))


def _fill_grid(segs: np.ndarray, xs: np.ndarray, ys: np.ndarray) -> np.ndarray:
    """Even-odd inside test at every point of the grid ``ys`` x ``xs`` (scanlines): each
    crossing of a row flips the points left of it, so a row's parity is counted from the
    right over the crossings' places."""
    segs = segs[segs[:, 1] != segs[:, 3]]
    ax, ay, bx, by = segs.T
    lo, hi = np.minimum(ay, by), np.maximum(ay, by)
    slope = (bx - ax) / (by - ay)
    flips = np.zeros(ys.size * (xs.size + 1), dtype=np.uint8)
    r0, r1 = np.searchsorted(ys, lo, "left"), np.searchsorted(ys, hi, "left")
    for seg, rows in _expand(r0, r1):
        xc = ax[seg] + (ys[rows] - ay[seg]) * slope[seg]
        np.bitwise_xor.at(flips, rows * (xs.size + 1) + np.searchsorted(xs, xc, "left"), 1)
    grid = flips.reshape(ys.size, xs.size + 1)[:, ::-1]
    return np.bitwise_xor.accumulate(grid, axis=1)[:, -2::-1].astype(bool)


def _distance_grid(
    segs: np.ndarray, reach: float, xs: np.ndarray, ys: np.ndarray, near: float = -1.0
) -> tuple[np.ndarray, np.ndarray]:
    """Distance from each grid point to the nearest segment, where under ``reach``
    (``inf`` beyond): each segment is measured over the points of its box widened by
    ``reach``. And the pairs (segment, flat index of the point) at most ``near`` apart
    (``near`` < ``reach``), as two rows."""
    dist2 = np.full((ys.size, xs.size), np.inf)
    found: list[np.ndarray] = [np.zeros((2, 0), dtype=np.int64)]
    ax, ay, bx, by = segs.T
    c0 = np.searchsorted(xs, np.minimum(ax, bx) - reach, "left")
    c1 = np.searchsorted(xs, np.maximum(ax, bx) + reach, "right")
    r0 = np.searchsorted(ys, np.minimum(ay, by) - reach, "left")
    r1 = np.searchsorted(ys, np.maximum(ay, by) + reach, "right")
    flat = dist2.reshape(-1)

    def narrow(box: np.ndarray, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        # A point within reach of the segment lies within reach of its part in the band
        # of rows within reach (one pixel more each way: the rest lies farther, and no
        # distance beyond reach is used).
        y = ys[rows]
        xlo, xhi = _x_span(segs[box], y - reach - 1, y + reach + 1)
        return (
            np.searchsorted(xs, xlo - reach - 1, "left"),
            np.searchsorted(xs, xhi + reach + 1, "right"),
        )

    for seg, rows, cols in _boxes(r0, r1, c0, c1, narrow=narrow):
        d2 = _seg_d2(xs[cols], ys[rows], ax[seg], ay[seg], bx[seg], by[seg])
        at = rows * xs.size + cols
        np.minimum.at(flat, at, d2)
        if near >= 0:
            close = np.flatnonzero(d2 <= near * near)
            found.append(np.stack([seg[close], at[close]]))
    return np.sqrt(dist2), np.concatenate(found, axis=1)


def _packed(hit: np.ndarray) -> np.ndarray:
    """Each pair's (ss, ss) samples as the bits of one unsigned 64-bit number."""
    n = hit.shape[0]
    packed = np.packbits(hit.reshape(n, hit.shape[1] * hit.shape[2]), axis=1, bitorder="little")
    wide = np.zeros((n, 8), dtype=np.uint8)
    wide[:, : packed.shape[1]] = packed
    return wide.view("<u8").reshape(n)


def _fill_samples(
    segs: np.ndarray, x0: int, y0: int, rows: np.ndarray, cols: np.ndarray, ss: int
) -> np.ndarray:
    """Even-odd inside test at the ``ss`` x ``ss`` samples of each pixel ``(rows, cols)``
    (sorted by row), as bits: each segment flips the samples left of it in its rows."""
    sub = (np.arange(ss) + 0.5) / ss
    segs = segs[segs[:, 1] != segs[:, 3]]
    ax, ay, bx, by = segs.T
    lo, hi = np.minimum(ay, by), np.maximum(ay, by)
    slope = (bx - ax) / (by - ay)
    top = (y0 + rows) + sub[0]
    first = np.searchsorted(top + 1, lo, "right")
    last = np.searchsorted(top, hi, "left")
    bits = np.zeros(rows.size, dtype=np.uint64)
    for seg, pix in _expand(first, last, max(1, _SAMPLES // (ss * ss))):
        qy = ((y0 + rows[pix])[:, None] + sub[None, :])[:, :, None]  # (n, ss, 1)
        px = ((x0 + cols[pix])[:, None] + sub[None, :])[:, None, :]  # (n, 1, ss)
        s_lo, s_hi = lo[seg][:, None, None], hi[seg][:, None, None]
        xc = ax[seg][:, None, None] + (qy - ay[seg][:, None, None]) * slope[seg][:, None, None]
        hit = (qy >= s_lo) & (qy < s_hi) & (px < xc)
        np.bitwise_xor.at(bits, pix, _packed(hit))
    return bits


def _near_samples(
    segs: np.ndarray,
    half: float,
    x0: int,
    y0: int,
    width: int,
    pixels: tuple[np.ndarray, np.ndarray, np.ndarray],
    ss: int,
) -> np.ndarray:
    """Which of the ``ss`` x ``ss`` samples of each pixel ``(rows, cols)`` lie within
    ``half`` of a segment (round caps and joins), as bits. ``pixels``: rows, columns and
    the pairs (segment, flat index of a pixel of the area ``width`` wide) whose centres
    lie within half + :func:`_spread` (farther, no sample is within half), each tried
    where its pixel is one of ``rows``, ``cols`` and the segment's box widened by half
    reaches the pixel's first sample."""
    rows, cols, pairs = pixels
    sub = (np.arange(ss) + 0.5) / ss
    which = np.full(int(pairs[1].max(initial=0)) + 1, -1, dtype=np.int64)
    flat = rows * width + cols
    inside = flat < which.size
    which[flat[inside]] = np.flatnonzero(inside)
    pix = which[pairs[1]]
    keep = np.flatnonzero(pix >= 0)
    seg, pix = pairs[0][keep], pix[keep]
    r, c = rows[pix], cols[pix]
    ax, ay, bx, by = segs.T
    left, top = (x0 + c) + sub[0], (y0 + r) + sub[0]
    keep = np.flatnonzero(
        (left < np.maximum(ax, bx)[seg] + half)
        & (left + 1 > np.minimum(ax, bx)[seg] - half)
        & (top < np.maximum(ay, by)[seg] + half)
        & (top + 1 > np.minimum(ay, by)[seg] - half)
    )
    seg, pix, r, c = seg[keep], pix[keep], r[keep], c[keep]
    bits = np.zeros(rows.size, dtype=np.uint64)
    h2 = half * half
    step = max(1, _SAMPLES // (ss * ss))
    for a in range(0, seg.size, step):
        cut = slice(a, a + step)
        qy = ((y0 + r[cut])[:, None] + sub[None, :])[:, :, None]
        px = ((x0 + c[cut])[:, None] + sub[None, :])[:, None, :]
        s = [v[seg[cut]][:, None, None] for v in (ax, ay, bx, by)]
        np.bitwise_or.at(bits, pix[cut], _packed(_seg_d2(px, qy, *s) <= h2))
    return bits


#: A pixel whose centre lies farther than this from an edge is wholly inside or outside.
_EDGE = 0.75


def _spread(ss: int) -> float:
    """How far a pixel's ``ss`` x ``ss`` samples lie from its centre at most, and a hair
    more (so that rounding never counts a sample in that is out)."""
    return (ss - 1) / (2 * ss) * math.sqrt(2) + 1e-6


def coverage(paint: Paint, x0: int, y0: int, w: int, h: int, ss: int = SS) -> np.ndarray:
    """The share of each pixel of the (w, h) area at (x0, y0) that ``paint`` covers.

    Pixels away from the shape's edges are decided at their centre; those near an edge
    are sampled ``ss`` x ``ss`` times (``ss`` at most 8). Each pass works segment by pixel
    pairs in bounded chunks, on the pixels about each segment only; a centre's distance
    is measured only as far as it decides anything (farther ones stay infinite).
    """
    if not 1 <= ss <= 8:
        raise ValueError(f"coverage: {ss} samples a side; at most 8")
    fill = paint.kind == "fill"
    segs = _segments(paint.paths, fill)
    xs = x0 + np.arange(w) + 0.5
    ys = y0 + np.arange(h) + 0.5
    if fill:
        cov = _fill_grid(segs, xs, ys).astype(np.float64)
        dist, _ = _distance_grid(segs, _EDGE, xs, ys)
        border = dist < _EDGE
    else:
        near = paint.half + _spread(ss)
        dist, pairs = _distance_grid(segs, paint.half + _EDGE, xs, ys, near)
        cov = (dist <= paint.half).astype(np.float64)
        # Within half less the samples' spread every sample is covered (cov is 1 there).
        border = np.abs(dist - paint.half) < _EDGE
        border &= dist > paint.half - _spread(ss)
    rows, cols = np.nonzero(border)
    if rows.size:
        if fill:
            bits = _fill_samples(segs, x0, y0, rows, cols, ss)
        else:
            bits = _near_samples(segs, paint.half, x0, y0, w, (rows, cols, pairs), ss)
        cov[rows, cols] = np.bitwise_count(bits) / (ss * ss)
    return cov


def _to_output(paints: list[Paint], scale: float, rect: pygame.Rect) -> list[Paint]:
    def tr(path: list[Point]) -> list[Point]:
        return [(x * scale - rect.x, y * scale - rect.y) for x, y in path]

    return [
        Paint(p.kind, tuple((tr(pts), closed) for pts, closed in p.paths), p.colour, p.half)
        for p in paints
    ]


def draw_paints(
    out: pygame.Surface, paints: list[Paint], opacity: float = 1.0, ss: int = SS
) -> bool:
    """Composite ``paints`` (output pixels) onto ``out``, which holds premultiplied colour;
    True if anything was drawn."""
    if not paints or opacity <= 0:
        return False
    xs_all = [x for p in paints for pts, _ in p.paths for x, _ in pts]
    ys_all = [y for p in paints for pts, _ in p.paths for _, y in pts]
    pad = max(p.half for p in paints) + 1
    ow, oh = out.get_size()
    x0 = max(0, math.floor(min(xs_all) - pad))
    y0 = max(0, math.floor(min(ys_all) - pad))
    x1 = min(ow, math.ceil(max(xs_all) + pad))
    y1 = min(oh, math.ceil(max(ys_all) + pad))
    if x0 >= x1 or y0 >= y1:
        return False
    boxes = []
    for p in paints:
        pxs = [x for pts, _ in p.paths for x, _ in pts]
        pys = [y for pts, _ in p.paths for _, y in pts]
        reach = p.half + 2
        boxes.append(
            (
                max(x0, math.floor(min(pxs) - reach)),
                max(y0, math.floor(min(pys) - reach)),
                min(x1, math.ceil(max(pxs) + reach)),
                min(y1, math.ceil(max(pys) + reach)),
            )
        )
    drew = False
    band = max(1, (1 << 22) // (x1 - x0))  # bound the pixels held at once
    for by0 in range(y0, y1, band):
        by1 = min(y1, by0 + band)
        canvas = np.zeros((by1 - by0, x1 - x0, 4), dtype=np.float64)  # premultiplied, 0..1
        for p, (px0, py0, px1, py1) in zip(paints, boxes, strict=True):
            # Each paint over its own box (nothing outside it is covered), within the band.
            py0, py1 = max(py0, by0), min(py1, by1)
            if px0 >= px1 or py0 >= py1:
                continue
            cov = coverage(p, px0, py0, px1 - px0, py1 - py0, ss)
            # Only the pixels the paint touches change (elsewhere a = 0 leaves them be).
            touched = np.flatnonzero(cov)
            if touched.size == 0:
                continue
            a = cov.reshape(-1)[touched] * (p.colour[3] / 255.0) * opacity
            if not a.any():
                continue
            src = np.array(p.colour[:3], dtype=np.float64) / 255.0
            rr, cc = np.divmod(touched, px1 - px0)
            rr += py0 - by0
            cc += px0 - x0
            under = canvas[rr, cc] * (1.0 - a)[:, None]
            under[:, :3] += a[:, None] * src
            under[:, 3] += a
            canvas[rr, cc] = under
        if not canvas[..., 3].any():
            continue
        drew = True
        px = np.clip(np.rint(canvas * 255.0), 0, 255).astype(np.uint8)
        layer = pygame.Surface((x1 - x0, by1 - by0), pygame.SRCALPHA, 32)
        pygame.surfarray.blit_array(layer, px[..., :3].transpose(1, 0, 2))
        alpha = pygame.surfarray.pixels_alpha(layer)
        alpha[...] = px[..., 3].T
        del alpha  # release the surface lock
        out.blit(layer, (x0, by0), special_flags=pygame.BLEND_PREMULTIPLIED)
    return drew


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
