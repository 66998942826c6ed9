"""The Tiled reader: a .tmx file in, a :class:`~engine.mapmodel.MapModel` out.

pytmx reads the map (attributes, map/layer properties, tilesets and their typed tile
properties). A pre-pass over the XML fills the gaps pytmx 3.32 has, so that a GM never
has to change a file that Tiled itself opens:

* tile layer data is decoded here with numpy (csv, base64, gzip, zlib and zstd; infinite
  maps' chunks), which is also much faster than pytmx's per-tile Python loop, and the
  Tiled flip/rotation bits (including the hex 120-degree bit 0x10000000) are split off;
* external tilesets (.tsx, and .tsj/.json converted to XML) are inlined with their image
  paths made relative to the map, image sizes filled in from the PNG header;
* object templates (.tx) are merged into their objects; ellipse, point, text, polygon
  and tile objects are told apart; float layer offsets are kept (pytmx gets rounded ones);
* class- and list-typed custom properties, which pytmx cannot parse, are left out.

Anything that still cannot be read stops with one :class:`~engine.errors.MapError` line
naming the file, the problem and what to change in Tiled.
"""

from __future__ import annotations

import base64
import gzip
import json
import logging
import math
import os
import struct
import sys
import zlib
from dataclasses import dataclass, field
from types import ModuleType
from typing import Any
from xml.etree import ElementTree as ET

import numpy as np

from engine.errors import MapError
from engine.grid import DIAGONAL_RULES, Cell, Grid
from engine.mapmodel import (
    BLOCKED_EMPTY,
    DIFFICULTIES,
    FALLS,
    MODES,
    TERRAIN_KEYS,
    UNITS,
    Exit,
    MapModel,
    MapObject,
    Spawn,
    Terrain,
    TileLayer,
)

#: Largest map we allocate; a file that declares more is refused before any allocation.
MAX_CELLS = 4096 * 4096
#: Most tiles in one tileset (an image cut into tiles, or a declared tilecount).
MAX_TILESET_TILES = 1 << 20
ORIENTATIONS = ("orthogonal", "isometric", "hexagonal", "staggered")
FLAG_MASK = 0xF0000000
GID_MASK = 0x0FFFFFFF


def _pytmx() -> ModuleType:
    """Import pytmx without letting it import pygame (the engine stays headless).

    pytmx's package import pulls in its pygame helpers; with pygame hidden they fail
    quietly and are dropped again, so the viewer can still import them properly later.
    """
    mod = sys.modules.get("pytmx")
    if mod is not None:
        return mod
    if "pygame" in sys.modules:
        import pytmx

        return pytmx
    log = logging.getLogger("pytmx.util_pygame")
    was_disabled = log.disabled
    log.disabled = True
    sys.modules["pygame"] = None  # type: ignore[assignment]
    try:
        import pytmx
    finally:
        del sys.modules["pygame"]
        log.disabled = was_disabled
    sys.modules.pop("pytmx.util_pygame", None)
    pytmx.__dict__.pop("util_pygame", None)
    pytmx.__dict__.pop("load_pygame", None)
    return pytmx


# --------------------------------------------------------------------------- helpers


def _fail(path: str, problem: str, fix: str = "") -> MapError:
    return MapError(f"{path}: {problem}" + (f"; {fix}" if fix else ""))


def _read_xml(path: str, what: str = "map") -> ET.Element:
    try:
        with open(path, "rb") as fh:
            data = fh.read()
    except FileNotFoundError:
        raise _fail(path, f"{what} file not found", "check the path") from None
    except IsADirectoryError:
        raise _fail(path, f"is a directory, not a {what} file") from None
    except OSError as exc:
        raise _fail(path, f"cannot read {what} file ({exc.strerror})") from None
    except ValueError:  # a NUL byte in the path (possible only through the Python API)
        raise _fail(path, f"not a usable {what} file name") from None
    if not data.strip():
        raise _fail(path, f"{what} file is empty", "save it again from Tiled")
    try:
        return ET.fromstring(data)
    except (ET.ParseError, LookupError, ValueError) as exc:
        # LookupError/ValueError: an XML declaration naming an unknown or unusable encoding.
        raise _fail(
            path,
            f"not a readable Tiled XML file ({exc})",
            "the file is truncated or not XML: save it again from Tiled as .tmx",
        ) from None


def _png_size(path: str) -> tuple[int, int] | None:
    try:
        with open(path, "rb") as fh:
            head = fh.read(24)
    except OSError:
        return None
    if head[:8] == b"\x89PNG\r\n\x1a\n" and head[12:16] == b"IHDR":
        w, h = struct.unpack(">II", head[16:24])
        return int(w), int(h)
    return None


def _int_attr(path: str, el: ET.Element, name: str, default: int | None = None) -> int:
    raw = el.get(name)
    if raw is None:
        if default is None:
            raise _fail(path, f"<{el.tag}> has no '{name}' attribute", "save it again from Tiled")
        return default
    try:
        value = float(raw)
    except ValueError:
        raise _fail(path, f"<{el.tag}> {name}='{raw}' is not a number") from None
    if not value.is_integer():
        raise _fail(path, f"<{el.tag}> {name}='{raw}' must be a whole number")
    return int(value)


def _float_attr(el: ET.Element, name: str, default: float = 0.0) -> float:
    """A lenient number (offsets, opacity): missing, not a number or not finite -> default."""
    raw = el.get(name)
    try:
        value = float(raw) if raw is not None else default
    except ValueError:
        return default
    return value if math.isfinite(value) else default


def _geometry_attr(path: str, el: ET.Element, name: str) -> float:
    """An object's position, size or rotation: a finite number (0 when missing)."""
    raw = el.get(name)
    if raw is None:
        return 0.0
    try:
        value = float(raw)
    except ValueError:
        value = math.nan
    if not math.isfinite(value):
        raise _fail(
            path,
            f"object {el.get('id', '?')} '{el.get('name', '')}' has {name}='{raw}'",
            "use a finite number: move or resize the object in Tiled",
        )
    return value


def _layer_label(el: ET.Element) -> str:
    return f"layer '{el.get('name', '?')}'"


# --------------------------------------------------------------------------- tile data


def _decode_gids(path: str, data: ET.Element, count: int, label: str) -> np.ndarray:
    """Decode one <data> or <chunk> body into ``count`` raw uint32 gids."""
    encoding = data.get("encoding")
    compression = data.get("compression")
    text = (data.text or "").strip()
    if encoding is None:
        tiles = data.findall("tile")
        arr = np.fromiter((int(t.get("gid", "0")) for t in tiles), dtype=np.int64)
    elif encoding == "csv":
        try:
            arr = np.fromstring(text, dtype=np.int64, sep=",") if text else np.zeros(0, np.int64)
        except ValueError:
            raise _fail(path, f"{label} has csv tile data that is not a list of numbers") from None
    elif encoding == "base64":
        try:
            raw = base64.b64decode(text, validate=False)
            if compression == "zlib":
                raw = zlib.decompress(raw)
            elif compression == "gzip":
                raw = gzip.decompress(raw)
            elif compression == "zstd":
                import zstandard

                raw = zstandard.ZstdDecompressor().decompress(raw, max_output_size=count * 4 + 16)
            elif compression:
                raise _fail(
                    path,
                    f"{label} uses unknown compression '{compression}'",
                    "in Tiled, Map > Map Properties > Tile Layer Format: choose CSV or Base64",
                )
        except (ValueError, zlib.error, OSError, EOFError) as exc:
            raise _fail(
                path,
                f"{label} tile data cannot be decoded ({compression or 'base64'}: {exc})",
                "the file is damaged: save it again from Tiled",
            ) from None
        except MapError:
            raise
        except Exception as exc:  # zstandard.ZstdError is not a ValueError
            raise _fail(
                path, f"{label} tile data cannot be decoded ({compression}: {exc})"
            ) from None
        if len(raw) % 4:
            raise _fail(path, f"{label} tile data is not a whole number of tiles (truncated?)")
        arr = np.frombuffer(raw, dtype="<u4").astype(np.int64)
    else:
        raise _fail(
            path,
            f"{label} uses unknown encoding '{encoding}'",
            "in Tiled choose CSV or Base64 as the Tile Layer Format",
        )
    if arr.size != count:
        raise _fail(
            path,
            f"{label} has {arr.size} tiles, expected {count}",
            "the file is truncated or damaged: save it again from Tiled",
        )
    if arr.size and (arr.min() < 0 or arr.max() > 0xFFFFFFFF):
        raise _fail(path, f"{label} has tile ids out of range")
    return arr.astype(np.uint32)


@dataclass
class _RawLayer:
    element: ET.Element
    name: str
    raw: np.ndarray | None  # (h, w) raw gids, finite maps
    chunks: list[tuple[int, int, np.ndarray]] = field(default_factory=list)  # infinite
    visible: bool = True
    opacity: float = 1.0
    offset: tuple[float, float] = (0.0, 0.0)
    terrain: bool = True


def _bool_prop(el: ET.Element, name: str) -> bool | None:
    props = el.find("properties")
    if props is None:
        return None
    for p in props.findall("property"):
        if p.get("name") == name:
            raw = (p.get("value") or p.text or "").strip().lower()
            return raw not in ("false", "0", "no", "")
    return None


# --------------------------------------------------------------------------- tilesets


def _tileset_from_json(path: str, data: dict[str, Any], firstgid: str) -> ET.Element:
    """Turn a Tiled JSON tileset (.tsj/.json) into the equivalent <tileset> element."""
    ts = ET.Element("tileset", firstgid=firstgid)
    for key in ("name", "tilewidth", "tileheight", "tilecount", "columns", "spacing", "margin"):
        if key in data:
            ts.set(key, str(data[key]))
    offset = data.get("tileoffset")
    if isinstance(offset, dict):
        ET.SubElement(ts, "tileoffset", x=str(offset.get("x", 0)), y=str(offset.get("y", 0)))
    if data.get("image"):
        ET.SubElement(
            ts,
            "image",
            source=str(data["image"]),
            width=str(data.get("imagewidth", 0)),
            height=str(data.get("imageheight", 0)),
        )
    _json_properties(ts, data.get("properties"))
    for tile in data.get("tiles", []) or []:
        t = ET.SubElement(ts, "tile", id=str(tile.get("id", 0)))
        cls = tile.get("class", tile.get("type"))
        if cls:
            t.set("type", str(cls))
        _json_properties(t, tile.get("properties"))
        if tile.get("image"):
            ET.SubElement(
                t,
                "image",
                source=str(tile["image"]),
                width=str(tile.get("imagewidth", 0)),
                height=str(tile.get("imageheight", 0)),
            )
    return ts


def _json_properties(el: ET.Element, props: Any) -> None:
    if not isinstance(props, list) or not props:
        return
    node = ET.SubElement(el, "properties")
    for p in props:
        if not isinstance(p, dict) or "name" not in p:
            continue
        ptype = str(p.get("type", "string"))
        value = p.get("value")
        if ptype == "bool":
            value = "true" if value else "false"
        ET.SubElement(node, "property", name=str(p["name"]), type=ptype, value=str(value))


def _inline_tileset(
    map_path: str, ts: ET.Element, missing_images: str = "error", notes: list[str] | None = None
) -> ET.Element:
    """Return a self-contained <tileset> (external ones loaded, paths relative to the map).

    A missing image is an error, or with ``missing_images="skip"`` a note (the renderer
    then draws those cells in terrain colours).
    """
    notes = notes if notes is not None else []
    source = ts.get("source")
    map_dir = os.path.dirname(os.path.abspath(map_path))
    firstgid = ts.get("firstgid", "1")
    if not source:
        base_dir = map_dir
        out = ts
    else:
        ts_path = os.path.normpath(os.path.join(map_dir, source))
        base_dir = os.path.dirname(ts_path)
        if not os.path.exists(ts_path):
            raise _fail(
                map_path,
                f"tileset '{source}' not found (looked at {ts_path})",
                "put the tileset file there, or re-link it in Tiled (Map > Replace Tileset)",
            )
        ext = os.path.splitext(source)[1].lower()
        if ext in (".tsj", ".json"):
            try:
                with open(ts_path, encoding="utf-8") as fh:
                    data = json.load(fh)
            except (OSError, ValueError) as exc:
                raise _fail(map_path, f"tileset '{source}' is not readable JSON ({exc})") from None
            if not isinstance(data, dict):
                raise _fail(map_path, f"tileset '{source}' is not a Tiled JSON tileset")
            out = _tileset_from_json(ts_path, data, firstgid)
        else:
            try:
                out = _read_xml(ts_path, "tileset")
            except MapError as exc:
                raise _fail(map_path, f"tileset '{source}': {exc}") from None
            if out.tag != "tileset":
                raise _fail(map_path, f"tileset '{source}' is a <{out.tag}>, not a <tileset>")
            out.set("firstgid", firstgid)
    # Image paths become relative to the map, as pytmx and renderers expect.
    name = out.get("name", source or "?")
    for parent in list(out.iter()):
        for img in list(parent.findall("image")):
            src = img.get("source")
            if not src:
                continue
            abs_src = os.path.normpath(os.path.join(base_dir, src))
            if not os.path.exists(abs_src):
                if missing_images == "error":
                    raise _fail(
                        map_path,
                        f"tileset '{name}' image '{src}' not found (looked at {abs_src})",
                        "put the image there, or fix the tileset's image in Tiled",
                    )
                # Headless work and the viewer go on: the cells draw in terrain colours.
                parent.remove(img)
                notes.append(f"tileset '{name}' image '{src}' not found: drawn in terrain colours")
                continue
            img.set("source", os.path.relpath(abs_src, map_dir))
            # Tiled uses the image's real size; the file's width/height are only a note
            # (and pytmx loops over every tile they imply).
            size = _png_size(abs_src)
            if size is not None:
                img.set("width", str(size[0]))
                img.set("height", str(size[1]))
    for tile in out.iter("tile"):
        # Tiled 1.10 writes a tile's class as `class`; pytmx only knows `type`.
        if tile.get("class") is not None:
            tile.set("type", tile.attrib.pop("class"))
    _check_tileset(map_path, out, name)
    return out


def _check_tileset(path: str, ts: ET.Element, name: str) -> None:
    """Refuse tileset numbers that would make pytmx loop (or allocate) without end."""
    label = f"tileset '{name}'"
    firstgid = _int_attr(path, ts, "firstgid", 1)
    if not 1 <= firstgid <= GID_MASK:
        raise _fail(path, f"{label} has firstgid {firstgid}", "re-add the tileset in Tiled")
    numbers = {
        k: _int_attr(path, ts, k, 0) for k in ("tilewidth", "tileheight", "spacing", "margin")
    }
    count = _int_attr(path, ts, "tilecount", 0)
    if min(numbers.values()) < 0 or not 0 <= count <= MAX_TILESET_TILES:
        raise _fail(
            path,
            f"{label} has "
            + ", ".join(f"{k}={v}" for k, v in {**numbers, "tilecount": count}.items()),
            "fix the tileset in Tiled (Tileset > Tileset Properties)",
        )
    img = ts.find("image")
    if img is None or not img.get("source"):
        return
    tw, th = numbers["tilewidth"], numbers["tileheight"]
    iw, ih = _int_attr(path, img, "width", 0), _int_attr(path, img, "height", 0)
    if tw <= 0 or th <= 0 or iw < 0 or ih < 0:
        raise _fail(
            path,
            f"{label} has tiles of {tw}x{th} px in an image of {iw}x{ih} px",
            "fix the tile size in Tiled (Tileset > Tileset Properties)",
        )
    # As pytmx counts them when it cuts the image into tiles.
    m, sp = numbers["margin"], numbers["spacing"]
    tiles = len(range(m, ih + m - th + 1, th + sp)) * len(range(m, iw + m - tw + 1, tw + sp))
    if tiles > MAX_TILESET_TILES:
        raise _fail(
            path,
            f"{label} cuts its {iw}x{ih} px image into {tiles} tiles; "
            f"tacgrid reads at most {MAX_TILESET_TILES}",
            "use larger tiles or a smaller image",
        )


# --------------------------------------------------------------------------- properties


def _sanitise_properties(root: ET.Element, notes: list[str]) -> None:
    """Drop class- and list-typed properties, which pytmx cannot parse and we never read."""
    dropped = 0
    for props in root.iter("properties"):
        for p in list(props):
            if p.tag == "property" and (
                p.get("type") in ("class", "list") or p.find("properties") is not None
            ):
                props.remove(p)
                dropped += 1
    if dropped:
        notes.append(f"{dropped} class- or list-typed custom properties ignored")


def _typed(value: str | None, ptype: str | None) -> Any:
    if value is None:
        return None
    if ptype == "int":
        return int(float(value))
    if ptype == "float":
        return float(value)
    if ptype == "bool":
        return value.strip().lower() == "true"
    return value


def _properties(el: ET.Element) -> dict[str, Any]:
    out: dict[str, Any] = {}
    props = el.find("properties")
    if props is None:
        return out
    for p in props.findall("property"):
        name = p.get("name")
        if name is None:
            continue
        try:
            out[name] = _typed(p.get("value", p.text), p.get("type"))
        except ValueError:
            out[name] = p.get("value", p.text)
    return out


# --------------------------------------------------------------------------- objects


def _merge_template(map_path: str, obj: ET.Element, cache: dict[str, ET.Element]) -> None:
    """Merge a template (.tx) into an object: the object's own attributes win."""
    src = obj.get("template")
    if not src:
        return
    tx_path = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(map_path)), src))
    if tx_path not in cache:
        if not os.path.exists(tx_path):
            raise _fail(map_path, f"object template '{src}' not found (looked at {tx_path})")
        try:
            tx = _read_xml(tx_path, "template")
        except MapError as exc:
            raise _fail(map_path, f"object template '{src}': {exc}") from None
        tobj = tx.find("object")
        if tobj is None:
            raise _fail(map_path, f"object template '{src}' has no <object>")
        cache[tx_path] = tobj
    tobj = cache[tx_path]
    for k, v in tobj.attrib.items():
        if k not in obj.attrib and k not in ("id", "gid"):
            obj.set(k, v)
    # Template properties first, object's own override.
    tprops = _properties(tobj)
    oprops = _properties(obj)
    if tprops:
        merged = {**tprops, **oprops}
        node = obj.find("properties")
        if node is None:
            node = ET.SubElement(obj, "properties")
        for name, value in merged.items():
            if name not in oprops:
                ptype = (
                    "bool"
                    if isinstance(value, bool)
                    else "int"
                    if isinstance(value, int)
                    else "float"
                    if isinstance(value, float)
                    else "string"
                )
                sval = str(value).lower() if isinstance(value, bool) else str(value)
                ET.SubElement(node, "property", name=name, type=ptype, value=sval)
    for shape in ("ellipse", "point", "polygon", "polyline", "text"):
        if obj.find(shape) is None and tobj.find(shape) is not None:
            obj.append(tobj.find(shape))  # type: ignore[arg-type]
    del obj.attrib["template"]


def _read_object(path: str, el: ET.Element) -> MapObject:
    shape = "rectangle"
    points: tuple[tuple[float, float], ...] = ()
    for tag in ("ellipse", "point", "polygon", "polyline", "text"):
        sub = el.find(tag)
        if sub is not None:
            shape = tag
            if tag in ("polygon", "polyline"):
                pts = []
                for pair in (sub.get("points") or "").split():
                    try:
                        x, y = pair.split(",")
                        pt = (float(x), float(y))
                    except ValueError:
                        continue
                    if math.isfinite(pt[0]) and math.isfinite(pt[1]):
                        pts.append(pt)
                points = tuple(pts)
            break
    if el.get("gid"):
        shape = "tile"
    try:
        oid = int(el.get("id", "0"))
    except ValueError:
        oid = 0
    return MapObject(
        id=oid,
        name=el.get("name", ""),
        cls=el.get("class", el.get("type", "")) or "",
        shape=shape,
        x=_geometry_attr(path, el, "x"),
        y=_geometry_attr(path, el, "y"),
        width=_geometry_attr(path, el, "width"),
        height=_geometry_attr(path, el, "height"),
        rotation=_geometry_attr(path, el, "rotation"),
        points=points,
        properties=_properties(el),
    )


def _object_space_center(grid: Grid, cell: Cell) -> tuple[float, float]:
    """A cell's centre in Tiled's object coordinates.

    Isometric maps store objects in an unprojected space where a tile is tile_height
    square; every other orientation uses screen pixels.
    """
    if grid.orientation == "isometric":
        th = grid.tile_height
        return ((cell[0] + 0.5) * th, (cell[1] + 0.5) * th)
    return grid.cell_center(cell)


def _object_cell(grid: Grid, x: float, y: float) -> Cell:
    if grid.orientation == "isometric":
        th = grid.tile_height
        return (math.floor(x / th), math.floor(y / th))
    return grid.cell_at(x, y)


def _contains(obj: MapObject, px: float, py: float) -> bool:
    """Is the point inside the object's shape (rotation about its origin honoured)?"""
    dx, dy = px - obj.x, py - obj.y
    if obj.rotation:
        a = math.radians(-obj.rotation)
        dx, dy = dx * math.cos(a) - dy * math.sin(a), dx * math.sin(a) + dy * math.cos(a)
    if obj.shape == "rectangle" or obj.shape == "text":
        return 0 <= dx <= obj.width and 0 <= dy <= obj.height
    if obj.shape == "tile":  # anchored bottom-left
        return 0 <= dx <= obj.width and -obj.height <= dy <= 0
    if obj.shape == "ellipse":
        rx, ry = obj.width / 2, obj.height / 2
        if rx <= 0 or ry <= 0:
            return False
        return ((dx - rx) / rx) ** 2 + ((dy - ry) / ry) ** 2 <= 1.0
    if obj.shape == "polygon" and len(obj.points) >= 3:
        inside = False
        pts = obj.points
        j = len(pts) - 1
        for i in range(len(pts)):
            xi, yi = pts[i]
            xj, yj = pts[j]
            if (yi > dy) != (yj > dy) and dx < (xj - xi) * (dy - yi) / (yj - yi) + xi:
                inside = not inside
            j = i
        return inside
    return False


def _cells_in(grid: Grid, obj: MapObject) -> list[Cell]:
    """Cells whose centre lies inside the object; a point (or 0-size shape) gives its cell."""
    if obj.shape in ("point", "polyline") or (
        obj.shape in ("rectangle", "ellipse") and obj.width <= 0 and obj.height <= 0
    ):
        cell = _object_cell(grid, obj.x, obj.y)
        return [cell] if grid.in_bounds(cell) else []
    if obj.shape == "tile":
        cell = _object_cell(grid, obj.x + obj.width / 2, obj.y - obj.height / 2)
        return [cell] if grid.in_bounds(cell) else []
    # Candidate cells: the bounding box of the shape in object space, with a margin.
    if obj.points:
        xs = [obj.x + p[0] for p in obj.points]
        ys = [obj.y + p[1] for p in obj.points]
    else:
        xs = [obj.x, obj.x + obj.width]
        ys = [obj.y, obj.y + obj.height]
    if obj.rotation:
        r = math.hypot(max(abs(v - obj.x) for v in xs), max(abs(v - obj.y) for v in ys))
        xs, ys = [obj.x - r, obj.x + r], [obj.y - r, obj.y + r]
    corners = [_object_cell(grid, x, y) for x in (min(xs), max(xs)) for y in (min(ys), max(ys))]
    c0 = max(0, min(c for c, _ in corners) - 2)
    c1 = min(grid.width - 1, max(c for c, _ in corners) + 2)
    r0 = max(0, min(r for _, r in corners) - 2)
    r1 = min(grid.height - 1, max(r for _, r in corners) + 2)
    out = []
    for r in range(r0, r1 + 1):
        for c in range(c0, c1 + 1):
            cx, cy = _object_space_center(grid, (c, r))
            if _contains(obj, cx, cy):
                out.append((c, r))
    return out


# --------------------------------------------------------------------------- terrain


def _check_terrain_value(path: str, where: str, key: str, value: Any) -> Any:
    """Validate one terrain property and return it in the model's type."""

    def bad(allowed: str) -> MapError:
        return _fail(path, f"{where} has {key}='{value}'", f"use {allowed}")

    if key == "terrain":
        return str(value)
    if key == "move":
        if str(value) not in MODES:
            raise bad(" | ".join(MODES))
        return str(value)
    if key == "difficulty":
        if str(value) not in DIFFICULTIES:
            raise bad(" | ".join(DIFFICULTIES))
        return str(value)
    if key == "fall":
        if str(value) not in FALLS:
            raise bad(" | ".join(FALLS))
        return str(value)
    if key == "dn":
        try:
            f = float(value)
        except (TypeError, ValueError):
            raise bad("a whole number such as 13") from None
        if not f.is_integer() or f < 0:
            raise bad("a whole number such as 13")
        return int(f)
    if key == "cost":
        try:
            f = float(value)
        except (TypeError, ValueError):
            raise bad("a number >= 1, such as 2") from None
        if not math.isfinite(f) or f < 1:
            raise bad("a number >= 1, such as 2")
        return f
    if key == "height":
        try:
            f = float(value)
        except (TypeError, ValueError):
            raise bad("a number >= 0 in the map's cell_unit") from None
        if not math.isfinite(f) or f < 0:
            raise bad("a number >= 0 in the map's cell_unit")
        return f
    return value


def _tile_terrain(path: str, gid: int, props: dict[str, Any] | None) -> dict[str, Any]:
    """The terrain keys one tile sets (its class counts as `terrain` if no property)."""
    if not props:
        return {}
    out: dict[str, Any] = {}
    where = f"tile {gid}"
    for key in TERRAIN_KEYS:
        if key in props and props[key] is not None and props[key] != "":
            out[key] = _check_terrain_value(path, where, key, props[key])
    if "terrain" not in out:
        cls = props.get("type") or props.get("class")
        if cls:
            out["terrain"] = str(cls)
    return out


def _terrain_from_stack(stack: list[dict[str, Any]]) -> Terrain:
    """Merge tile records top-most first: per property, the first that sets it wins."""
    merged: dict[str, Any] = {}
    for rec in stack:
        for k, v in rec.items():
            merged.setdefault(k, v)
    name = merged.pop("terrain", "open")
    return Terrain(name=name, **merged)


# --------------------------------------------------------------------------- the reader


@dataclass
class TiledFile:
    """What :func:`read_tiled` returns: the model plus pytmx's map for renderers."""

    model: MapModel
    tmx: Any  # pytmx.TiledMap (tile layer data lives in the model, not here)


def load_map(path: str | os.PathLike[str]) -> MapModel:
    """Read a Tiled .tmx file into the project's map model.

    >>> m = load_map("maps/encounter.tmx")  # doctest: +SKIP
    >>> m.grid.kind, m.terrain_at((0, 0)).move  # doctest: +SKIP
    ('square', 'walk')
    """
    return read_tiled(path).model


def read_tiled(
    path: str | os.PathLike[str], image_loader: Any = None, *, missing_images: str = "error"
) -> TiledFile:
    """Read a .tmx file: the model, and pytmx's TiledMap (with ``image_loader`` if given).

    ``missing_images``: ``"error"`` (a missing tile image stops with one line) or
    ``"skip"`` (noted in ``model.notes``; for viewers that fall back to terrain colours).
    """
    path = os.fspath(path)
    notes: list[str] = []
    root = _read_xml(path)
    if root.tag != "map":
        raise _fail(path, f"is a <{root.tag}> file, not a Tiled map (<map>)", "open a .tmx map")

    orientation = root.get("orientation", "orthogonal")
    if orientation not in ORIENTATIONS:
        raise _fail(
            path,
            f"unknown orientation '{orientation}'",
            "use an orthogonal, isometric, hexagonal or staggered map",
        )
    width = _int_attr(path, root, "width")
    height = _int_attr(path, root, "height")
    tw = _int_attr(path, root, "tilewidth")
    th = _int_attr(path, root, "tileheight")
    infinite = root.get("infinite", "0") == "1"
    if not infinite:
        if width <= 0 or height <= 0:
            raise _fail(path, f"map size {width}x{height} has no cells")
        if width * height > MAX_CELLS:
            raise _fail(
                path,
                f"map declares {width}x{height} = {width * height} cells; "
                f"tacgrid reads at most {MAX_CELLS}",
                "split the map or resize it in Tiled (Map > Resize Map)",
            )
    if tw <= 0 or th <= 0:
        raise _fail(path, f"tile size {tw}x{th} must be positive")

    _sanitise_properties(root, notes)

    # Tilesets: inline every external one so pytmx and we see the same thing.
    for i, child in enumerate(list(root)):
        if child.tag == "tileset":
            inlined = _inline_tileset(path, child, missing_images, notes)
            if inlined is not child:
                _sanitise_properties(inlined, notes)
                root[i] = inlined

    # Tile layers in document order (groups flattened, their visibility, offsets and
    # terrain_layer flag inherited), data decoded here and stubbed out for pytmx.
    raw_layers: list[_RawLayer] = []

    def walk(
        node: ET.Element, visible: bool, opacity: float, off: tuple[float, float], terrain: bool
    ) -> None:
        for child in node:
            if child.tag not in ("layer", "group", "objectgroup", "imagelayer"):
                continue
            vis = visible and child.get("visible", "1") != "0"
            opa = opacity * _float_attr(child, "opacity", 1.0)
            o = (off[0] + _float_attr(child, "offsetx"), off[1] + _float_attr(child, "offsety"))
            flag = _bool_prop(child, "terrain_layer")
            ter = terrain and (flag is None or flag)
            for attr in ("offsetx", "offsety"):
                if child.get(attr) is not None:
                    child.set(attr, str(round(_float_attr(child, attr))))
            if child.tag == "group":
                walk(child, vis, opa, o, ter)
            elif child.tag == "layer":
                raw_layers.append(
                    _read_layer(path, child, width, height, infinite, vis, opa, o, ter)
                )

    walk(root, True, 1.0, (0.0, 0.0), True)

    origin = (0, 0)
    if infinite:
        chunks = [ch for lay in raw_layers for ch in lay.chunks]
        if chunks:
            x0 = min(x for x, _, _ in chunks)
            y0 = min(y for _, y, _ in chunks)
            x1 = max(x + a.shape[1] for x, _, a in chunks)
            y1 = max(y + a.shape[0] for _, y, a in chunks)
        else:
            x0 = y0 = 0
            x1, y1 = max(width, 1), max(height, 1)
        width, height = x1 - x0, y1 - y0
        if width * height > MAX_CELLS:
            raise _fail(
                path,
                f"infinite map spans {width}x{height} cells; tacgrid reads at most {MAX_CELLS}",
            )
        origin = (x0, y0)
        for lay in raw_layers:
            full = np.zeros((height, width), dtype=np.uint32)
            for x, y, a in lay.chunks:
                full[y - y0 : y - y0 + a.shape[0], x - x0 : x - x0 + a.shape[1]] = a
            lay.raw = full
            lay.element.set("width", str(width))
            lay.element.set("height", str(height))
        root.set("width", str(width))
        root.set("height", str(height))
        root.set("infinite", "0")
        notes.append(
            f"infinite map: cropped to its painted chunks, {width}x{height} cells; "
            f"cell (0,0) is Tiled's ({x0},{y0})"
        )

    # Objects: templates merged, shapes told apart.
    template_cache: dict[str, ET.Element] = {}
    objects: list[MapObject] = []
    for og in root.iter("objectgroup"):
        for obj in og.findall("object"):
            _merge_template(path, obj, template_cache)
            objects.append(_read_object(path, obj))
    for obj_el in root.iter("object"):
        if obj_el.get("gid"):
            g = _int_attr(path, obj_el, "gid")
            if not 0 <= g <= 0xFFFFFFFF:
                raise _fail(path, f"<object> gid='{g}' is out of range", "re-place the tile object")
            # pytmx cannot decode the hex rotation bit: hand it the plain gid.
            obj_el.set("gid", str(g & ~0x10000000 if g & 0x10000000 else g))

    # pytmx reads everything but the tile data, which we decoded above.
    pytmx = _pytmx()
    kwargs: dict[str, Any] = {"allow_duplicate_names": True}
    if image_loader is not None:
        kwargs["image_loader"] = image_loader
    tm = pytmx.TiledMap(**kwargs)
    tm.filename = path
    try:
        tm.parse_xml(root)
    except MapError:
        raise
    except FileNotFoundError as exc:
        raise _fail(
            path, f"an image cannot be opened ({exc.filename})", "fix the image path in Tiled"
        ) from None
    except Exception as exc:  # pytmx raises bare Exception/ValueError/TypeError/KeyError
        raise _fail(
            path,
            f"pytmx cannot read this map ({type(exc).__name__}: {exc or 'no detail'})",
            "save it again from Tiled with CSV or Base64 layers",
        ) from None
    finally:
        pytmx.TiledElement.allow_duplicate_names = False

    # Grid and map properties.
    mprops = _properties(root)
    diagonals = str(mprops.get("diagonals", "alternate"))
    if diagonals not in DIAGONAL_RULES:
        raise _fail(
            path, f"map property diagonals='{diagonals}'", "use " + " | ".join(DIAGONAL_RULES)
        )
    hexside = 0
    if orientation == "hexagonal":
        hexside = int(_float_attr(root, "hexsidelength"))
    stagger_axis = root.get("staggeraxis", "y") or "y"
    stagger_index = root.get("staggerindex", "odd") or "odd"
    if stagger_axis not in ("x", "y") or stagger_index not in ("odd", "even"):
        raise _fail(
            path,
            f"staggeraxis='{stagger_axis}' staggerindex='{stagger_index}'",
            "use x|y and odd|even",
        )
    try:
        grid = Grid(
            orientation=orientation,
            width=width,
            height=height,
            tile_width=tw,
            tile_height=th,
            stagger_axis=stagger_axis,
            stagger_index=stagger_index,
            hex_side=hexside,
            diagonals=diagonals,
        )
    except MapError as exc:
        raise _fail(path, str(exc)) from None

    cell_size = mprops.get("cell_size")
    if cell_size is not None:
        try:
            cell_size = float(cell_size)
        except ValueError:
            cell_size = -1.0
        if not (math.isfinite(cell_size) and cell_size > 0):
            raise _fail(
                path,
                f"map property cell_size='{mprops.get('cell_size')}'",
                "use a number > 0, e.g. 5",
            )
    cell_unit = mprops.get("cell_unit")
    if cell_unit is not None and cell_unit not in UNITS:
        raise _fail(path, f"map property cell_unit='{cell_unit}'", "use ft or m")
    system = mprops.get("system")

    # Terrain per cell.
    # Tile properties straight from the tilesets: pytmx mixes a tile's image width and
    # height into the same dict as its custom properties, which clashes with `height`.
    tile_props: dict[int, dict[str, Any]] = {}
    for ts in root.findall("tileset"):
        first = _int_attr(path, ts, "firstgid", 1)
        for tile in ts.findall("tile"):
            props = _properties(tile)
            cls = tile.get("type") or tile.get("class")
            if cls:
                props.setdefault("type", cls)
            if props:
                tile_props[first + _int_attr(path, tile, "id", 0)] = props
    ranges = _tileset_ranges(path, root)
    layers = tuple(_tile_layer(lay, (height, width)) for lay in raw_layers)
    terrain_ids, terrains = _terrain(path, layers, tile_props, ranges, (height, width))

    model = MapModel(
        grid=grid,
        terrain_ids=terrain_ids,
        terrains=terrains,
        path=path,
        properties=mprops,
        cell_size=cell_size,
        cell_unit=cell_unit,
        system=str(system) if system else None,
        objects=tuple(objects),
        layers=layers,
        origin=origin,
    )
    spawns, exits = _apply_objects(path, model, objects, origin)
    model.spawns = spawns
    model.exits = exits
    model.notes = tuple(notes)
    return TiledFile(model=model, tmx=tm)


def _tile_layer(lay: _RawLayer, shape: tuple[int, int]) -> TileLayer:
    raw = lay.raw if lay.raw is not None else np.zeros(shape, dtype=np.uint32)
    return TileLayer(
        name=lay.name,
        gids=(raw & GID_MASK).astype(np.uint32),
        flags=((raw & FLAG_MASK) >> 28).astype(np.uint8),
        visible=lay.visible,
        opacity=lay.opacity,
        offset=lay.offset,
        terrain=lay.terrain,
    )


def _read_layer(
    path: str,
    el: ET.Element,
    width: int,
    height: int,
    infinite: bool,
    visible: bool,
    opacity: float,
    offset: tuple[float, float],
    terrain: bool,
) -> _RawLayer:
    label = _layer_label(el)
    data = el.find("data")
    lay = _RawLayer(
        element=el,
        name=el.get("name", ""),
        raw=None,
        visible=visible,
        opacity=opacity,
        offset=offset,
        terrain=terrain,
    )
    if data is None:
        # An empty layer; pytmx still wants a <data> element to read.
        lay.raw = np.zeros((height, width), dtype=np.uint32) if not infinite else None
        ET.SubElement(el, "data", encoding="csv").text = "0"
    else:
        chunk_els = data.findall("chunk")
        if chunk_els:
            if not infinite:
                raise _fail(path, f"{label} has chunks but the map is not infinite")
            for ch in chunk_els:
                # Chunks carry the layer's encoding on the <data> element.
                for attr in ("encoding", "compression"):
                    if data.get(attr):
                        ch.set(attr, data.get(attr, ""))
                cx, cy = _int_attr(path, ch, "x"), _int_attr(path, ch, "y")
                cw, chh = _int_attr(path, ch, "width"), _int_attr(path, ch, "height")
                if cw <= 0 or chh <= 0 or cw * chh > MAX_CELLS:
                    raise _fail(path, f"{label} has a chunk of bad size {cw}x{chh}")
                arr = _decode_gids(path, ch, cw * chh, f"{label} chunk ({cx},{cy})")
                lay.chunks.append((cx, cy, arr.reshape(chh, cw)))
        elif infinite:
            lay.raw = None
        else:
            lw = _int_attr(path, el, "width", width)
            lh = _int_attr(path, el, "height", height)
            if (lw, lh) != (width, height):
                raise _fail(path, f"{label} is {lw}x{lh} but the map is {width}x{height}")
            el.set("width", str(width))  # pytmx needs them, even where the file left them out
            el.set("height", str(height))
            lay.raw = _decode_gids(path, data, width * height, label).reshape(height, width)
        # pytmx gets an empty layer; it would only re-decode what we already have.
        for child in list(data):
            data.remove(child)
        data.attrib.clear()
        data.set("encoding", "csv")
        data.text = "0"
    if infinite and lay.raw is None and not lay.chunks:
        lay.chunks = []
    return lay


def _tileset_ranges(path: str, root: ET.Element) -> list[tuple[int, int]]:
    """(firstgid, end) per tileset, end exclusive (None-sized tilesets are open-ended)."""
    out = []
    for ts in root.findall("tileset"):
        first = _int_attr(path, ts, "firstgid", 1)
        count = ts.get("tilecount")
        if count is not None:
            n = int(float(count))
        else:
            tiles = [int(t.get("id", "0")) for t in ts.findall("tile")]
            img = ts.find("image")
            twid = _int_attr(path, ts, "tilewidth", 0)
            thei = _int_attr(path, ts, "tileheight", 0)
            n = max(tiles, default=-1) + 1
            if img is not None and twid > 0 and thei > 0:
                iw = int(_float_attr(img, "width"))
                ih = int(_float_attr(img, "height"))
                n = max(n, (iw // twid) * (ih // thei))
        out.append((first, first + max(n, 0)))
    return out


def _terrain(
    path: str,
    layers: tuple[TileLayer, ...],
    tile_props: dict[int, dict[str, Any]],
    ranges: list[tuple[int, int]],
    shape: tuple[int, int],
) -> tuple[np.ndarray, tuple[Terrain, ...]]:
    """Per-cell terrain ids from the tile stacks (top-most layer that sets a key wins)."""
    tlayers = [lay.gids for lay in layers if lay.terrain]
    if not tlayers:
        return np.zeros(shape, dtype=np.int32), (BLOCKED_EMPTY,)
    allg = np.unique(np.concatenate([g.ravel() for g in tlayers]))
    # Every gid must belong to a tileset.
    known = np.zeros(allg.shape, dtype=bool)
    known |= allg == 0
    for first, end in ranges:
        known |= (allg >= first) & (allg < end)
    if not known.all():
        bad = int(allg[~known][0])
        raise _fail(
            path,
            f"tile id {bad} is used but no tileset covers it",
            "a tileset is missing or was edited: re-add it in Tiled (Map > Add External Tileset)",
        )
    k = len(allg)
    idx = [np.searchsorted(allg, g).astype(np.int64) for g in tlayers]
    if len(idx) == 1:
        stack_keys = idx[0]
        uniq = np.unique(stack_keys)
        decode: list[tuple[int, ...]] = [(int(u),) for u in uniq]
        inverse = np.searchsorted(uniq, stack_keys)
    elif k ** len(idx) < 2**62:
        key = np.zeros(shape, dtype=np.int64)
        for i in idx:
            key = key * k + i
        uniq, inverse = np.unique(key.ravel(), return_inverse=True)
        decode = []
        for u in uniq.tolist():
            parts = []
            for _ in idx:
                parts.append(u % k)
                u //= k
            decode.append(tuple(reversed(parts)))
        inverse = inverse.reshape(shape)
    else:
        stacked = np.stack([i.ravel() for i in idx], axis=1)
        uniq2, inverse = np.unique(stacked, axis=0, return_inverse=True)
        decode = [tuple(int(v) for v in row) for row in uniq2]
        inverse = inverse.reshape(shape)
    records: dict[int, dict[str, Any]] = {}
    table: list[Terrain] = []
    seen: dict[Terrain, int] = {}
    stack_to_terrain = np.zeros(len(decode), dtype=np.int32)
    for si, stack in enumerate(decode):
        gids = [int(allg[i]) for i in stack]  # bottom .. top
        if not any(gids):
            t = BLOCKED_EMPTY
        else:
            recs = []
            for g in reversed(gids):
                if g == 0:
                    continue
                if g not in records:
                    records[g] = _tile_terrain(path, g, tile_props.get(g))
                recs.append(records[g])
            t = _terrain_from_stack(recs)
        if t not in seen:
            seen[t] = len(table)
            table.append(t)
        stack_to_terrain[si] = seen[t]
    return stack_to_terrain[inverse].astype(np.int32), tuple(table)


def _apply_objects(
    path: str, model: MapModel, objects: list[MapObject], origin: Cell
) -> tuple[tuple[Spawn, ...], tuple[Exit, ...]]:
    grid = model.grid
    ox, oy = origin
    spawns: list[Spawn] = []
    exits: list[Exit] = []
    for obj in objects:
        if origin != (0, 0):
            # Objects of infinite maps are in Tiled's coordinates; shift to ours.
            px, py = _origin_pixels(grid, ox, oy)
            obj = MapObject(**{**obj.__dict__, "x": obj.x - px, "y": obj.y - py})
        cls = obj.cls.lower()
        label = f"object {obj.id} '{obj.name}'"
        if cls == "spawn":
            if not obj.name:
                raise _fail(
                    path, f"spawn object {obj.id} has no name", "name it after the token id"
                )
            cells = _cells_in(grid, obj) if obj.shape not in ("point", "tile") else None
            if cells is None or not cells:
                cx, cy = (obj.x, obj.y)
                if obj.shape == "tile":
                    cx, cy = obj.x + obj.width / 2, obj.y - obj.height / 2
                elif obj.shape in ("rectangle", "ellipse") and (obj.width or obj.height):
                    cx, cy = obj.x + obj.width / 2, obj.y + obj.height / 2
                cell = _object_cell(grid, cx, cy)
            else:
                cell = cells[0]
            if not grid.in_bounds(cell):
                raise _fail(
                    path,
                    f"spawn {label} lies outside the map at cell {cell}",
                    "move it onto the map",
                )
            spawns.append(Spawn(obj.name, cell))
        elif cls == "exit":
            cells = _cells_in(grid, obj)
            if not cells:
                raise _fail(
                    path,
                    f"exit {label} covers no cell centre",
                    "make it larger or move it onto the map",
                )
            exits.append(Exit(obj.name or f"exit{obj.id}", tuple(cells)))
        else:
            override = {
                k: _check_terrain_value(path, label, k, v)
                for k, v in obj.properties.items()
                if k in TERRAIN_KEYS and v is not None and v != ""
            }
            if override:
                if "terrain" in override:
                    override["name"] = override.pop("terrain")
                model.with_terrain(_cells_in(grid, obj), override)
    return tuple(spawns), tuple(exits)


def _origin_pixels(grid: Grid, ox: int, oy: int) -> tuple[float, float]:
    """Tiled pixel position of Tiled cell (ox, oy) relative to Tiled cell (0, 0).

    Infinite maps' chunk origins are multiples of the chunk size (even), so the
    stagger parity of every cell is the same in Tiled's coordinates and ours.
    """
    if grid.orientation == "isometric":
        return ox * grid.tile_height, oy * grid.tile_height
    x1, y1 = grid.cell_origin((ox, oy))
    x0, y0 = grid.cell_origin((0, 0))
    return x1 - x0, y1 - y0
