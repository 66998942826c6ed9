"""Objects: templates (.tx) merged in, shapes told apart (rectangle, ellipse, point,
polygon, polyline, text, tile), and the objects that mean something to tacgrid applied to
the model: spawns, exits, terrain regions, and walls, doors and windows."""

from __future__ import annotations

import math
import os
from typing import Any
from xml.etree import ElementTree as ET

import engine.tiled.source as source
from engine.errors import MapError
from engine.grid import Cell, Grid
from engine.mapmodel import TERRAIN_KEYS, WALL_KINDS, Exit, MapModel, MapObject, Spawn, Wall
from engine.sources import clip
from engine.tiled.common import fail, geometry_attr, int_attr, properties, sanitise_properties
from engine.tiled.coverage import Coverage, Painter
from engine.tiled.project import resolve_properties
from engine.tiled.terrain import check_terrain_value

#: The most polygon and polyline points a map's objects may have, all together (a point
#: of a template counts once for each object that uses it): each point is work for every
#: cell its shape may cover.
MAX_OBJECT_POINTS = 250_000


def read_objects(path: str, root: ET.Element) -> list[MapObject]:
    """Every object of every object layer, templates merged; tile objects' gids made
    plain for pytmx (it cannot decode the hex rotation bit)."""
    template_cache: dict[str, tuple[ET.Element, dict[str, Any]]] = {}
    # A template's shape is shared by every object that uses it: its points parsed once.
    parsed: dict[str, tuple[tuple[float, float], ...]] = {}
    objects: list[MapObject] = []
    points = 0
    for og in _object_layers(root):
        for obj in og.findall("object"):
            _merge_template(path, obj, template_cache)
            points += _point_count(obj)
            if points > MAX_OBJECT_POINTS:
                raise fail(
                    path,
                    f"its objects have more than {MAX_OBJECT_POINTS} polygon and polyline "
                    f"points (object {clip(obj.get('id', '?'))} passes it)",
                    "simplify the shapes (fewer points)",
                )
            objects.append(_read_object(path, obj, parsed))
    for obj_el in root.iter("object"):
        if obj_el.get("gid"):
            g = int_attr(path, obj_el, "gid")
            if not 0 <= g <= 0xFFFFFFFF:
                raise fail(path, f"<object> gid='{g}' is out of range", "re-place the tile object")
            obj_el.set("gid", str(g & ~0x10000000 if g & 0x10000000 else g))
    return objects


def _point_count(obj: ET.Element) -> int:
    """The points an object's polygon or polyline lists, counted before they are parsed."""
    n = 0
    for tag in ("polygon", "polyline"):
        sub = obj.find(tag)
        if sub is not None:
            n += len((sub.get("points") or "").split())
    return n


def _object_layers(root: ET.Element) -> list[ET.Element]:
    """The map's object layers in document order, groups walked (a tileset's per-tile
    collision shapes are <objectgroup>s too, but no objects of the map). The reader has
    bounded the nesting depth."""
    out: list[ET.Element] = []
    for child in root:
        if child.tag == "objectgroup":
            out.append(child)
        elif child.tag == "group":
            out.extend(_object_layers(child))
    return out


def _merge_template(  # noqa: C901
    map_path: str, obj: ET.Element, cache: dict[str, tuple[ET.Element, dict[str, Any]]]
) -> None:
    """Merge a template (.tx) into an object: the object's own attributes win."""
    src = obj.get("template")
    if not src:
        return
    tx_path = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(map_path)), src))
    if tx_path not in cache:
        if not os.path.exists(tx_path):
            raise fail(map_path, f"object template '{src}' not found (looked at {tx_path})")
        try:
            tx = source.read_document(tx_path, "template")
        except MapError as exc:
            raise fail(map_path, f"object template '{src}': {exc}") from None
        resolve_properties(map_path, tx, [])
        sanitise_properties(tx, [])
        tobj = tx.find("object")
        if tobj is None:
            raise fail(map_path, f"object template '{src}' has no <object>")
        cache[tx_path] = (tobj, properties(tobj))  # read once, whatever uses it
    tobj, tprops = cache[tx_path]
    for k, v in tobj.attrib.items():
        if k not in obj.attrib and k not in ("id", "gid"):
            obj.set(k, v)
    # Template properties first, object's own override.
    oprops = properties(obj)
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


def _read_object(
    path: str, el: ET.Element, parsed: dict[str, tuple[tuple[float, float], ...]]
) -> MapObject:
    shape = "rectangle"
    points: tuple[tuple[float, float], ...] = ()
    for tag in ("ellipse", "point", "polygon", "polyline", "text"):
        sub = el.find(tag)
        if sub is not None:
            shape = tag
            if tag in ("polygon", "polyline"):
                text = sub.get("points") or ""
                if text not in parsed:
                    parsed[text] = _points(text)
                points = parsed[text]
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
        x=geometry_attr(path, el, "x"),
        y=geometry_attr(path, el, "y"),
        width=geometry_attr(path, el, "width"),
        height=geometry_attr(path, el, "height"),
        rotation=geometry_attr(path, el, "rotation"),
        points=points,
        properties=properties(el),
    )


def _points(text: str) -> tuple[tuple[float, float], ...]:
    """A polygon's or polyline's ``points`` attribute: pairs that are no finite pair of
    numbers are left out."""
    pts = []
    for pair in text.split():
        try:
            x, y = pair.split(",")
            pt = (float(x), float(y))
        except ValueError:
            continue
        if math.isfinite(pt[0]) and math.isfinite(pt[1]):
            pts.append(pt)
    return tuple(pts)


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
        u, v = (dx - rx) / rx, (dy - ry) / ry
        return u * u + v * v <= 1.0
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


def _covered(cover: Coverage, grid: Grid, obj: MapObject) -> tuple[Any, Any]:
    """``(cols, rows)`` of the cells whose centre lies inside the object, row by row; a
    point (or 0-size shape) gives its cell. Lists, or numpy arrays for a large object."""
    if obj.shape in ("point", "polyline") or (
        obj.shape in ("rectangle", "ellipse") and obj.width <= 0 and obj.height <= 0
    ):
        cell = _object_cell(grid, obj.x, obj.y)
        return ([cell[0]], [cell[1]]) if grid.in_bounds(cell) else ([], [])
    if obj.shape == "tile":
        cell = _object_cell(grid, obj.x + obj.width / 2, obj.y - obj.height / 2)
        return ([cell[0]], [cell[1]]) if grid.in_bounds(cell) else ([], [])
    return cover.cells(
        obj,
        lambda x, y: _object_cell(grid, x, y),
        lambda cell: _object_space_center(grid, cell),
    )


def _cells_in(cover: Coverage, grid: Grid, obj: MapObject) -> list[Cell]:
    """:func:`_covered` as a list of cells (spawns, exits: counted against the budget of
    listed cells)."""
    cols, rows = _covered(cover, grid, obj)
    cover.charge_listed(len(cols), obj)
    return [(int(c), int(r)) for c, r in zip(cols, rows, strict=True)]


def _outline(obj: MapObject) -> list[tuple[float, float]]:
    """A wall object's line in object space, rotation applied: a polyline's points, a
    polygon's or a rectangle's outline closed, an ellipse as a closed 32-sided outline."""
    if obj.shape == "polyline":
        rel = list(obj.points)
    elif obj.shape == "polygon":
        rel = [*obj.points, obj.points[0]] if obj.points else []
    elif obj.shape == "rectangle":
        w, h = obj.width, obj.height
        rel = [(0.0, 0.0), (w, 0.0), (w, h), (0.0, h), (0.0, 0.0)]
    elif obj.shape == "ellipse":
        rx, ry = obj.width / 2, obj.height / 2
        rel = [
            (rx + rx * math.cos(2 * math.pi * k / 32), ry + ry * math.sin(2 * math.pi * k / 32))
            for k in range(33)
        ]
    else:
        return []
    if obj.rotation:
        a = math.radians(obj.rotation)
        ca, sa = math.cos(a), math.sin(a)
        rel = [(x * ca - y * sa, x * sa + y * ca) for x, y in rel]
    return [(obj.x + x, obj.y + y) for x, y in rel]


def _to_screen(grid: Grid, x: float, y: float) -> tuple[float, float]:
    """Object space to map pixels (isometric objects are stored unprojected)."""
    if grid.orientation != "isometric":
        return (x, y)
    th, tw = grid.tile_height, grid.tile_width
    tx, ty = x / th, y / th
    origin = grid.height * tw // 2  # Tiled's originX, in whole pixels
    return ((tx - ty) * tw / 2 + origin, (tx + ty) * th / 2)


def _wall(path: str, grid: Grid, obj: MapObject, kind: str) -> Wall:
    points = [_to_screen(grid, x, y) for x, y in _outline(obj)]
    if len(points) < 2 or len(set(points)) < 2:
        raise fail(
            path,
            f"{kind} object {obj.id} '{obj.name}' is a {obj.shape} with no length",
            "draw it with the polyline tool (L) along the cell edges it stands on",
        )
    is_open = obj.properties.get("open", False)
    if kind == "door" and not isinstance(is_open, bool):
        raise fail(
            path,
            f"door object {obj.id} '{obj.name}' has open='{is_open}'",
            "make 'open' a bool property (ticked = open)",
        )
    return Wall(obj.id, kind, tuple(points), bool(is_open) and kind == "door", obj.name)


def apply_objects(  # noqa: C901
    path: str, model: MapModel, objects: list[MapObject], origin: Cell
) -> tuple[tuple[Spawn, ...], tuple[Exit, ...], tuple[Wall, ...]]:
    grid = model.grid
    ox, oy = origin
    cover = Coverage(path, grid, _contains)
    painter = Painter(model)
    spawns: list[Spawn] = []
    exits: list[Exit] = []
    walls: list[Wall] = []
    if origin != (0, 0):
        # Objects of infinite maps are in Tiled's coordinates; shift to ours.
        px, py = origin_pixels(grid, ox, oy)
        objects = [MapObject(**{**o.__dict__, "x": o.x - px, "y": o.y - py}) for o in objects]
    # Every area to cover counted first: a map past the budget is refused before the work.
    for obj in objects:
        if obj.cls.lower() in ("spawn", "exit") or _terrain_keys(obj):
            cover.prepay(obj, lambda x, y: _object_cell(grid, x, y))
    for obj in objects:
        cls = obj.cls.lower()
        label = f"object {obj.id} '{obj.name}'"
        if cls == "spawn":
            if not obj.name:
                raise fail(path, f"spawn object {obj.id} has no name", "name it after the token id")
            cells = _cells_in(cover, grid, obj) if obj.shape not in ("point", "tile") else None
            if cells is None or not cells:
                cx, cy = (obj.x, obj.y)
                if obj.shape == "tile":
                    cx, cy = obj.x + obj.width / 2, obj.y - obj.height / 2
                elif obj.shape in ("rectangle", "ellipse") and (obj.width or obj.height):
                    cx, cy = obj.x + obj.width / 2, obj.y + obj.height / 2
                cell = _object_cell(grid, cx, cy)
            else:  # an area: its first open cell (a game's spawn area may start on a wall)
                cell = next((c for c in cells if model.terrain_at(c).move != "blocked"), cells[0])
            if not grid.in_bounds(cell):
                raise fail(
                    path,
                    f"spawn {label} lies outside the map at cell {cell}",
                    "move it onto the map",
                )
            spawns.append(Spawn(obj.name, cell))
        elif cls == "exit":
            cells = _cells_in(cover, grid, obj)
            if not cells:
                raise fail(
                    path,
                    f"exit {label} covers no cell centre",
                    "make it larger or move it onto the map",
                )
            exits.append(Exit(obj.name or f"exit{obj.id}", tuple(cells)))
        elif cls in WALL_KINDS:
            walls.append(_wall(path, grid, obj, cls))
        else:
            override = {
                k: check_terrain_value(path, label, k, v)
                for k, v in obj.properties.items()
                if k in TERRAIN_KEYS and v is not None and v != ""
            }
            if override:
                if "terrain" in override:
                    override["name"] = override.pop("terrain")
                painter.paint(*_covered(cover, grid, obj), override)
    painter.finish()
    return tuple(spawns), tuple(exits), tuple(walls)


def _terrain_keys(obj: MapObject) -> bool:
    """Does the object set a terrain property (a region :func:`apply_objects` paints)?"""
    return any(k in TERRAIN_KEYS and v is not None and v != "" for k, v in obj.properties.items())


def origin_pixels(grid: Grid, ox: int, oy: int) -> tuple[float, float]:
    """Tiled pixel position of Tiled cell (ox, oy) relative to Tiled cell (0, 0).

    Infinite maps' chunk origins are multiples of the chunk size (even), so the
    stagger parity of every cell is the same in Tiled's coordinates and ours.
    """
    if grid.orientation == "isometric":
        return ox * grid.tile_height, oy * grid.tile_height
    x1, y1 = grid.cell_origin((ox, oy))
    x0, y0 = grid.cell_origin((0, 0))
    return x1 - x0, y1 - y0


# --------------------------------------------------------------------------- named regions

#: Shapes that are a region by their area alone (no terrain property needed): what a GM
#: draws to name a part of the map (a ford, a ridge) that a sweep then varies.
_AREA_SHAPES = ("rectangle", "ellipse", "polygon")


def is_region(obj: MapObject) -> bool:
    """A named object that is no spawn, exit, wall, door or window, and either sets a
    terrain property (MAP-FORMAT.md's region) or is an area (rectangle, ellipse, polygon)."""
    cls = obj.cls.lower()
    if not obj.name or cls in ("spawn", "exit") or cls in WALL_KINDS:
        return False
    if _terrain_keys(obj):
        return True
    return obj.shape in _AREA_SHAPES


def region_names(model: MapModel) -> list[str]:
    """The names of the map's regions (:func:`is_region`), sorted, each once."""
    return sorted({o.name for o in model.objects if is_region(o)})


def region_cells(model: MapModel, name: str) -> list[Cell]:
    """The cells of every region named ``name`` (their centres inside it, as
    :func:`apply_objects` paints them), sorted; empty when no region has that name."""
    grid = model.grid
    px, py = origin_pixels(grid, *model.origin) if model.origin != (0, 0) else (0.0, 0.0)
    cover = Coverage(model.path or "the map", grid, _contains)
    cells: set[Cell] = set()
    for obj in model.objects:
        if obj.name == name and is_region(obj):
            if (px, py) != (0.0, 0.0):
                obj = MapObject(**{**obj.__dict__, "x": obj.x - px, "y": obj.y - py})
            cols, rows = _covered(cover, grid, obj)
            cells.update((int(c), int(r)) for c, r in zip(cols, rows, strict=True))
    return sorted(cells, key=lambda c: (c[1], c[0]))
