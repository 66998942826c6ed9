"""Universal VTT files (``.dd2vtt``, ``.uvtt``): the battle maps that Dungeondraft,
DungeonFog, Arkenforge and Dungeon Alchemist export, read as a map with walls and doors.

The file is one JSON object (format 0.2/0.3, some tools write 1.0):

* ``resolution``: ``map_size`` {x, y} in grid squares, ``pixels_per_grid``, ``map_origin``;
* ``line_of_sight`` and ``objects_line_of_sight``: polylines, each a list of {x, y};
* ``portals``: each ``bounds`` (two {x, y}, the door's line), ``closed`` (bool),
  ``position``, ``rotation`` and ``freestanding`` (not needed here);
* ``image``: the map picture, base64 PNG or WebP (or JPEG); ``lights``, ``environment``.

Every coordinate is in grid squares from the image's top-left corner (as the Foundry and
Owlbear Rodeo importers read them; ``map_origin`` only says where the export sat in its
editor, and is kept in the notes when it is not 0,0).

The map is square (orthogonal) with ``map_size`` cells (a fraction rounded up) of
``pixels_per_grid`` pixels, every cell open ground (``walk``). ``line_of_sight`` and
``objects_line_of_sight`` become walls, ``portals`` doors (open when not ``closed``), and
the image the picture under the grid (:class:`~engine.mapmodel.ImageLayer`, stretched to the
map's pixel size; decoded only when drawn). Lights and environment are left out.

Hostile input is refused in one :class:`~engine.errors.MapError` line naming the file and
the field: the file is read through :mod:`engine.sources` (map size cap, no NaN or
Infinity, bounded nesting); a missing or mistyped field, a map over the Tiled reader's cell
and tile limits, coordinates beyond its offset limit, more than :data:`MAX_POINTS` wall
points, an image over :data:`MAX_IMAGE_BYTES` or not base64. An image that is truncated,
of an unknown format or over :data:`~engine.sources.MAX_PICTURE_PIXELS` is refused too
(``missing_images="skip"``, for ``render`` and the viewer: left out with a note, the cells
drawn in terrain colours), as a Tiled map's tileset images are.
"""

from __future__ import annotations

import base64
import binascii
import math
import os
import struct
from typing import Any

from engine.cells import I32, Cells
from engine.errors import MapError
from engine.grid import Grid
from engine.mapmodel import ImageLayer, MapModel, Terrain, Wall
from engine.sources import (
    MAX_MAP_BYTES,
    PictureProblem,
    clip,
    jpeg_frame,
    load_json,
    picture_size,
    read_bytes,
)
from engine.tiled.common import (
    MAX_CELLS,
    MAX_OFFSET_PIXELS,
    MAX_TILE_PIXELS,
    fail,
)
from engine.walls import check_walls

#: What a Universal VTT file is called.
UVTT_SUFFIXES = (".dd2vtt", ".uvtt")
#: Most wall, object and door points of one file together (a cave's walls run to
#: tens of thousands; more would only slow every path down).
MAX_POINTS = 1 << 20
#: Largest embedded image once decoded from base64 (the whole file is capped at
#: :data:`~engine.sources.MAX_MAP_BYTES`).
MAX_IMAGE_BYTES = 64 << 20

Point = tuple[float, float]


def is_uvtt(path: str | os.PathLike[str]) -> bool:
    """Is ``path`` named as a Universal VTT file?"""
    return os.fspath(path).lower().endswith(UVTT_SUFFIXES)


def read_uvtt(path: str, missing_images: str = "error") -> MapModel:
    """Read a Universal VTT file into the map model (see the module's docstring).

    ``missing_images``: ``"error"`` refuses an unusable map image in one line; ``"skip"``
    leaves it out with a note (``render`` and the viewer draw terrain colours instead).
    """
    data = read_bytes(path, "map", MAX_MAP_BYTES, MapError)
    if not data.strip():
        raise fail(path, "Universal VTT file is empty", "export the map again")
    doc = load_json(data, clip(path, 200), MapError)
    del data
    if not isinstance(doc, dict):
        raise fail(
            path,
            "is not a Universal VTT file (a JSON object with 'resolution')",
            "export the map again as Universal VTT (.dd2vtt)",
        )
    reader = _Reader(path)
    res = reader.obj(doc, "resolution")
    ppg = reader.whole(res, "resolution.pixels_per_grid", "pixels_per_grid")
    if not 0 < ppg <= MAX_TILE_PIXELS:
        raise fail(
            path,
            f"field 'resolution.pixels_per_grid' is {ppg}; tacgrid reads 1 to "
            f"{MAX_TILE_PIXELS} px per grid square",
            "export with another grid size",
        )
    sx, sy = reader.point(reader.get(res, "resolution.map_size", "map_size"), "resolution.map_size")
    width, height = _cells(path, sx, sy)
    grid = Grid("orthogonal", width, height, ppg, ppg)
    notes = [f"Universal VTT file (format {reader.format_of(doc)}), {ppg} px per grid square"]
    if not (float(sx).is_integer() and float(sy).is_integer()):
        notes.append(f"map_size {sx:g} x {sy:g} squares rounded up to {width} x {height} cells")
    origin = res.get("map_origin")
    if origin is not None:
        ox, oy = reader.point(origin, "resolution.map_origin")
        if (ox, oy) != (0, 0):
            notes.append(f"map_origin {ox:g},{oy:g} (where the export sat in its editor) ignored")
    walls = reader.walls(doc, ppg)
    check_walls(path, grid, walls)
    images = _image(path, doc, grid, missing_images, notes)
    notes.append(reader.summary(walls, doc))
    return MapModel(
        grid=grid,
        terrain_ids=Cells.zeros((height, width), I32),
        terrains=(Terrain(),),
        path=path,
        notes=tuple(notes),
        walls=tuple(walls),
        images=images,
    )


def _cells(path: str, sx: float, sy: float) -> tuple[int, int]:
    """The grid's size in cells from ``map_size``, within the Tiled reader's limits."""
    if not (sx > 0 and sy > 0):
        raise fail(path, f"field 'resolution.map_size' is {sx:g} x {sy:g} squares; it has no cells")
    width, height = max(1, math.ceil(sx - 1e-9)), max(1, math.ceil(sy - 1e-9))
    if width * height > MAX_CELLS:
        raise fail(
            path,
            f"field 'resolution.map_size' declares {width}x{height} = {width * height} cells; "
            f"tacgrid reads at most {MAX_CELLS}",
            "split the map",
        )
    return width, height


class _Reader:
    """Typed access to the document's fields; every refusal names the field."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.points = 0  # wall and door points read so far
        self.dropped = 0  # polylines of fewer than two points

    def _bad(self, field: str, problem: str) -> MapError:
        return fail(self.path, f"field '{field}' {problem}", "export the map again")

    def get(self, obj: dict[str, Any], field: str, key: str) -> Any:
        if key not in obj:
            raise self._bad(field, "is missing")
        return obj[key]

    def obj(self, obj: dict[str, Any], field: str) -> dict[str, Any]:
        value = self.get(obj, field, field.rsplit(".", 1)[-1])
        if not isinstance(value, dict):
            raise self._bad(field, f"must be an object {{...}}, not {_kind(value)}")
        return value

    def number(self, value: Any, field: str) -> float:
        # bool is an int to Python, never a number in these files
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise self._bad(field, f"must be a number, not {_kind(value)}")
        number = float(value)  # load_json refuses NaN, Infinity and floats out of range
        if not math.isfinite(number):  # an int of 400 digits
            raise self._bad(field, "is out of range")
        return number

    def whole(self, obj: dict[str, Any], field: str, key: str) -> int:
        value = self.number(self.get(obj, field, key), field)
        if not value.is_integer():
            raise self._bad(field, f"is {value:g}; it must be a whole number")
        return int(value)

    def point(self, value: Any, field: str) -> Point:
        if not isinstance(value, dict):
            raise self._bad(field, f'must be a point {{"x": ..., "y": ...}}, not {_kind(value)}')
        return (
            self.number(self.get(value, f"{field}.x", "x"), f"{field}.x"),
            self.number(self.get(value, f"{field}.y", "y"), f"{field}.y"),
        )

    def polyline(self, value: Any, field: str, ppg: int) -> tuple[Point, ...]:
        """A list of {x, y} in grid squares, as map pixels."""
        if not isinstance(value, list):
            raise self._bad(field, f"must be a list of points, not {_kind(value)}")
        self.points += len(value)
        if self.points > MAX_POINTS:
            raise fail(
                self.path,
                f"has more than {MAX_POINTS} wall and door points",
                "export with fewer walls (a lower cave-wall fidelity)",
            )
        out: list[Point] = []
        for i, p in enumerate(value):
            x, y = self.point(p, f"{field}[{i}]")
            px, py = x * ppg, y * ppg
            if max(abs(px), abs(py)) > MAX_OFFSET_PIXELS:
                raise self._bad(f"{field}[{i}]", f"lies {x:g},{y:g} squares away, off any map")
            out.append((px, py))
        return tuple(out)

    def walls(self, doc: dict[str, Any], ppg: int) -> list[Wall]:  # noqa: C901
        """``line_of_sight`` and ``objects_line_of_sight`` as walls, ``portals`` as doors, in
        file order; a polyline of fewer than two points is left out (counted in the notes)."""
        walls: list[Wall] = []
        for key, name in (("line_of_sight", ""), ("objects_line_of_sight", "object")):
            lines = doc.get(key)
            if lines is None:
                continue
            if not isinstance(lines, list):
                raise self._bad(key, f"must be a list of polylines, not {_kind(lines)}")
            for i, line in enumerate(lines):
                points = self.polyline(line, f"{key}[{i}]", ppg)
                if len(points) < 2:
                    self.dropped += 1
                    continue
                walls.append(Wall(len(walls) + 1, "wall", points, False, name))
        portals = doc.get("portals")
        if portals is None:
            return walls
        if not isinstance(portals, list):
            raise self._bad("portals", f"must be a list of portals, not {_kind(portals)}")
        for i, portal in enumerate(portals):
            field = f"portals[{i}]"
            if not isinstance(portal, dict):
                raise self._bad(field, f"must be an object {{...}}, not {_kind(portal)}")
            points = self.polyline(
                self.get(portal, f"{field}.bounds", "bounds"), f"{field}.bounds", ppg
            )
            if len(points) < 2:
                raise self._bad(f"{field}.bounds", f"has {len(points)} points; a door needs 2")
            closed = portal.get("closed", True)
            if not isinstance(closed, bool):
                raise self._bad(f"{field}.closed", f"must be true or false, not {_kind(closed)}")
            walls.append(Wall(len(walls) + 1, "door", points, not closed, f"door{i + 1}"))
        return walls

    def format_of(self, doc: dict[str, Any]) -> str:
        value = doc.get("format")
        if value is None:
            return "not given"
        if isinstance(value, bool) or not isinstance(value, int | float | str):
            raise self._bad("format", f"must be a number, not {_kind(value)}")
        return clip(str(value), 16)

    def summary(self, walls: list[Wall], doc: dict[str, Any]) -> str:
        kinds = {"": 0, "object": 0}
        doors = opened = 0
        for w in walls:
            if w.kind == "door":
                doors += 1
                opened += w.open
            else:
                kinds[w.name] += 1
        text = (
            f"{_count(kinds[''], 'wall')}, {_count(kinds['object'], 'object wall')}, "
            f"{_count(doors, 'door')} ({opened} open) from line_of_sight, "
            "objects_line_of_sight and portals"
        )
        if self.dropped:
            text += f"; {_count(self.dropped, 'polyline')} of fewer than 2 points left out"
        lights = doc.get("lights")
        if isinstance(lights, list) and lights:
            text += f"; {_count(len(lights), 'light')} not used"
        return text


def _count(n: int, what: str) -> str:
    return f"{n} {what}" + ("" if n == 1 else "s")


def _kind(value: Any) -> str:
    """A JSON value's kind, for a message."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true/false"
    if isinstance(value, int | float):
        return f"the number {clip(repr(value), 24)}"
    if isinstance(value, str):
        return f"the text '{clip(value, 24)}'"
    return "a list" if isinstance(value, list) else "an object"


# --------------------------------------------------------------------------- the image


def _image(
    path: str, doc: dict[str, Any], grid: Grid, missing_images: str, notes: list[str]
) -> tuple[ImageLayer, ...]:
    """The map picture as an image layer stretched over the grid, or none (with a note)."""
    text = doc.get("image")
    if text is None or text == "":
        notes.append("no map image in the file: cells drawn in terrain colours")
        return ()
    if not isinstance(text, str):
        raise fail(path, f"field 'image' must be base64 text, not {_kind(text)}")
    if len(text) // 4 * 3 > MAX_IMAGE_BYTES:
        raise fail(
            path,
            f"field 'image' holds about {len(text) // 4 * 3 >> 20} MB; tacgrid reads images of "
            f"at most {MAX_IMAGE_BYTES >> 20} MB",
            "export with fewer pixels per grid square",
        )
    try:
        data, size = _decode(text)
    except ValueError as exc:
        if missing_images != "skip":
            raise fail(path, f"field 'image': {exc}", "export the map again") from None
        notes.append(f"map image left out ({exc}): cells drawn in terrain colours")
        return ()
    w, h = grid.pixel_size()
    if size != (w, h):
        notes.append(f"map image {size[0]} x {size[1]} px drawn stretched to {w} x {h} px")
    return (ImageLayer("image", data, (w, h)),)


def _decode(text: str) -> tuple[bytes, tuple[int, int]]:
    """The image's bytes and (width, height) from its header; ValueError says why not."""
    if text.startswith("data:") and "," in text[:100]:  # a data: URI
        text = text.split(",", 1)[1]
    try:
        data = base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError):
        try:  # base64 wrapped over lines
            data = base64.b64decode("".join(text.split()), validate=True)
        except (binascii.Error, ValueError) as exc:
            raise ValueError(f"not valid base64 ({clip(str(exc), 60)})") from None
    size, complete = image_header(data)
    if size is None:
        raise ValueError("not a PNG, WebP or JPEG image")
    if not complete:
        raise ValueError("the image is truncated")
    # The size the decoder will allocate, from the one header reader (engine.sources):
    # refused past MAX_PICTURE_PIXELS.
    try:
        _kind, w, h = picture_size(data)
    except PictureProblem as exc:
        raise ValueError(f"{exc}: export with fewer pixels per grid square") from None
    return data, (w, h)


def image_header(data: bytes) -> tuple[tuple[int, int] | None, bool]:
    """An encoded image's (width, height) from its header (PNG, WebP, JPEG), or None for
    another format; and whether the file looks complete (its end marker is there).

    >>> image_header(b"\\x89PNG\\r\\n\\x1a\\n" + bytes(4) + b"IHDR" + bytes([0, 0, 0, 2, 0, 0, 0, 3]))
    ((2, 3), False)
    """
    if data[:8] == b"\x89PNG\r\n\x1a\n" and data[12:16] == b"IHDR" and len(data) >= 24:
        w, h = struct.unpack(">II", data[16:24])
        return (int(w), int(h)), data.rfind(b"IEND", max(0, len(data) - 1024)) > 0
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP" and len(data) >= 30:
        complete = struct.unpack("<I", data[4:8])[0] + 8 <= len(data)
        return _webp_size(data), complete
    if data[:2] == b"\xff\xd8":
        return jpeg_frame(data), data.rstrip(b"\x00")[-2:] == b"\xff\xd9"
    return None, False


def _webp_size(data: bytes) -> tuple[int, int] | None:
    """A WebP's canvas size: lossy (VP8), lossless (VP8L) or extended (VP8X)."""
    chunk = data[12:16]
    if chunk == b"VP8 " and data[23:26] == b"\x9d\x01\x2a":
        w, h = struct.unpack("<HH", data[26:30])
        return int(w) & 0x3FFF, int(h) & 0x3FFF
    if chunk == b"VP8L" and data[20] == 0x2F:
        bits = int.from_bytes(data[21:25], "little")
        return (bits & 0x3FFF) + 1, ((bits >> 14) & 0x3FFF) + 1
    if chunk == b"VP8X":
        w = int.from_bytes(data[24:27], "little") + 1
        h = int.from_bytes(data[27:30], "little") + 1
        return w, h
    return None
