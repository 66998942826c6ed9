"""Collision conventions: what game maps made for other engines mark as impassable,
read as tacgrid's ``move = blocked`` so that their houses, water and maze walls block.

Three conventions are read (docs/maps.md, "Collision conventions"):

* ``tile-property``: a tile whose custom property ``collides``, ``collision``, ``solid`` or
  ``blocked`` is true blocks the cells it lies on (as ``move = blocked`` would; a ``move``
  the tile sets itself wins);
* ``layer``: a tile layer named ``collision``, ``collisions`` or ``blocked`` (any case):
  every cell with a tile on it is blocked (The Mana World's ``Collision`` layer); the layer
  sets nothing else;
* ``objects``: an object layer of one of those names: every cell whose centre one of its
  shapes (rectangle, ellipse, polygon, tile) covers is blocked.

The map property ``collision`` (or ``--set map.collision=...``) picks them: ``all`` (the
default), ``none``, or a comma list of the conventions' names. A blocked cell of the
``layer`` and ``objects`` conventions becomes terrain ``collision``, so that
``--set terrain.collision.move=walk`` opens them again.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any
from xml.etree import ElementTree as ET

from engine.cells import Cells, held, to_numpy
from engine.lazy import numpy as np
from engine.mapmodel import Collision, MapModel, MapObject, Terrain, TileLayer
from engine.sources import clip
from engine.tiled.common import fail

if TYPE_CHECKING:
    from engine.tiled.layers import RawLayer

#: The conventions, in the order they are applied.
CONVENTIONS: tuple[str, ...] = ("tile-property", "layer", "objects")
#: Layer names (any case) that mark collision.
LAYER_NAMES: tuple[str, ...] = ("collision", "collisions", "blocked")
#: Tile properties that, true, make a tile block.
TILE_KEYS: tuple[str, ...] = ("collides", "collision", "solid", "blocked")
#: The terrain name the layer and object conventions give the cells they block.
COLLISION_TERRAIN = "collision"
#: Object shapes with an area (a polyline or point marks no cells).
_AREAS = ("rectangle", "ellipse", "polygon", "tile")


def wanted(path: str, value: Any) -> frozenset[str]:
    """The conventions a ``collision`` value turns on (``all``, ``none`` or a comma list);
    anything else is refused in one line naming the map."""
    text = "all" if value is None else str(value).strip().lower()
    if text in ("all", ""):
        return frozenset(CONVENTIONS)
    if text == "none":
        return frozenset()
    names = [n.strip() for n in text.split(",") if n.strip()]
    bad = [n for n in names if n not in CONVENTIONS]
    if bad:
        raise fail(
            path,
            f"collision='{clip(str(value))}' names no convention '{clip(bad[0])}'",
            f"use all, none or a comma list of {', '.join(CONVENTIONS)}",
        )
    return frozenset(names)


def is_collision_name(name: str) -> bool:
    return name.strip().lower() in LAYER_NAMES


def truthy(value: Any) -> bool:
    """A tile property read as a flag: a bool, or the text/number Tiled older files hold."""
    if isinstance(value, bool):
        return value
    return str(value).strip().lower() in ("true", "1", "yes")


def tile_blocks(props: dict[str, Any] | None) -> str | None:
    """The collision property that makes this tile block (the first true one), or None."""
    if not props:
        return None
    for key in TILE_KEYS:
        if key in props and truthy(props[key]):
            return key
    return None


def mark_layers(raw_layers: list[RawLayer], on: frozenset[str]) -> list[RawLayer]:
    """The collision tile layers (``layer`` convention on): taken out of the terrain stack,
    since they mean "blocked" and nothing else."""
    if "layer" not in on:
        return []
    found = [lay for lay in raw_layers if is_collision_name(lay.name)]
    for lay in found:
        lay.terrain = False
    return found


def block_mask(model: MapModel, mask: Any, label: str, convention: str) -> Collision:
    """Block every cell of ``mask`` ((height, width) bools, or a list of cells) in place:
    each terrain record under it gets a twin named ``collision`` with ``move = blocked``."""
    from dataclasses import replace

    ids = held(model, "terrain_ids")
    table = list(model.terrains)
    remap: dict[int, int] = {}

    def twin(old: int) -> int:
        if old not in remap:
            new = replace(table[old], name=COLLISION_TERRAIN, move="blocked")
            if new not in table:
                table.append(new)
            remap[old] = table.index(new)
        return remap[old]

    if isinstance(mask, list):
        width = model.width
        if isinstance(ids, Cells):
            values = ids.values
            for c, r in mask:
                values[r * width + c] = twin(values[r * width + c])
        else:
            for c, r in mask:
                ids[r, c] = twin(int(ids[r, c]))
        count = len(mask)
    else:
        arr = to_numpy(ids)
        olds = np.unique(arr[mask])
        lut = np.arange(len(table) + len(olds), dtype=arr.dtype)
        for old in olds.tolist():
            lut[old] = twin(int(old))
        arr = arr.copy()
        arr[mask] = lut[arr[mask]]
        model.terrain_ids = arr
        count = int(np.count_nonzero(mask))
    model.terrains = tuple(table)
    return Collision(convention, label, count)


def block_layers(model: MapModel, layers: list[RawLayer]) -> list[Collision]:
    """The ``layer`` convention: every cell with a tile on a collision layer is blocked."""
    out = []
    for raw in layers:
        lay = next(x for x in model.layers if x.name == raw.name and not x.terrain)
        gids = held(lay, "gids")
        if isinstance(gids, Cells):
            w = gids.shape[1]
            cells = [(i % w, i // w) for i, g in enumerate(gids.values) if g]
            out.append(block_mask(model, cells, raw.name, "layer"))
        else:
            out.append(block_mask(model, np.asarray(gids) != 0, raw.name, "layer"))
    return out


def collision_object_ids(root: ET.Element) -> dict[int, str]:
    """Object id -> its collision layer's name, for every object of an object layer named
    as a collision layer (groups walked)."""
    out: dict[int, str] = {}

    def walk(node: ET.Element) -> None:
        for child in node:
            if child.tag == "group":
                walk(child)
            elif child.tag == "objectgroup" and is_collision_name(child.get("name", "")):
                for obj in child.findall("object"):
                    try:
                        out[int(obj.get("id", "-1"))] = child.get("name", "")
                    except ValueError:
                        continue

    walk(root)
    return out


def block_objects(
    model: MapModel, objects: list[MapObject], owners: dict[int, str], shift: tuple[float, float]
) -> list[Collision]:
    """The ``objects`` convention: cells whose centre a collision layer's shape covers.
    ``shift``: map pixels to take off (an infinite map's cropped origin)."""
    from engine.tiled.coverage import Coverage
    from engine.tiled.objects import _contains, _covered

    cover = Coverage(model.path or "the map", model.grid, _contains)  # one budget for all
    per_layer: dict[str, set[tuple[int, int]]] = {}
    for obj in objects:
        name = owners.get(obj.id)
        if name is None or obj.shape not in _AREAS:
            continue
        if shift != (0.0, 0.0):
            obj = MapObject(**{**obj.__dict__, "x": obj.x - shift[0], "y": obj.y - shift[1]})
        cols, rows = _covered(cover, model.grid, obj)
        per_layer.setdefault(name, set()).update(
            (int(c), int(r)) for c, r in zip(cols, rows, strict=True)
        )
    return [
        block_mask(model, sorted(cells, key=lambda c: (c[1], c[0])), name, "objects")
        for name, cells in per_layer.items()
        if cells
    ]


def count_solid(
    layers: tuple[TileLayer, ...],
    solid: set[int],
    terrain_ids: Cells | np.ndarray,
    terrains: tuple[Terrain, ...],
) -> int:
    """How many cells the ``tile-property`` convention blocked: blocked cells with a tile
    of a true collision property on a terrain layer."""
    if not solid:
        return 0
    blocked = [t.move == "blocked" for t in terrains]
    grids = [held(lay, "gids") for lay in layers if lay.terrain]
    if isinstance(terrain_ids, Cells) and all(isinstance(g, Cells) for g in grids):
        hit = [
            blocked[t] and any(g.values[i] in solid for g in grids)
            for i, t in enumerate(terrain_ids.values)
        ]
        return sum(hit)
    mask = np.zeros(terrain_ids.shape, dtype=bool)
    wanted_gids = np.fromiter(solid, dtype=np.int64)
    for g in grids:
        mask |= np.isin(to_numpy(g), wanted_gids)
    return int(np.count_nonzero(mask & np.asarray(blocked, dtype=bool)[to_numpy(terrain_ids)]))
