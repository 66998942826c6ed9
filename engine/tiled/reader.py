"""The reader itself: :func:`read_tiled` as a sequence of named steps, and
:func:`load_map` for callers that only want the model.

:func:`read_tiled` returns a :class:`TiledFile`: the model, pytmx's map and the document
tree, side by side, for a renderer to be handed (it then draws a map that was already
read without reading the file again). :func:`load_map`, the engine's read, never parses
the map with pytmx: only a renderer needs that.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any
from xml.etree import ElementTree as ET

import engine.tiled.collision as collision_mod
import engine.tiled.source as source
import engine.tiled.uvtt as uvtt
from engine.cells import Cells
from engine.errors import MapError
from engine.grid import DIAGONAL_RULES, Cell, Grid
from engine.mapmodel import (
    CORNER_RULES,
    UNITS,
    Collision,
    MapModel,
    MapObject,
    Spawn,
    Terrain,
    TileLayer,
)
from engine.sources import clip
from engine.tiled.common import (
    MAX_CELLS,
    MAX_TILE_PIXELS,
    ORIENTATIONS,
    check_property_types,
    fail,
    float_attr,
    int_attr,
    properties,
    sanitise_properties,
)
from engine.tiled.layers import RawLayer, collect_tile_layers, crop_infinite, tile_layer
from engine.tiled.objects import apply_objects, origin_pixels, read_objects
from engine.tiled.project import resolve_properties
from engine.tiled.pytmx_bridge import parse_with_pytmx
from engine.tiled.terrain import cell_terrain
from engine.tiled.tilesets import inline_tilesets, tile_properties, tileset_ranges
from engine.tiled.world import map_path
from engine.walls import check_walls

if TYPE_CHECKING:
    import numpy as np


@dataclass(frozen=True, eq=False)
class TiledFile:
    """A Tiled map as :func:`read_tiled` read it: the model, and for renderers pytmx's map
    and the document's tree (both None for a Universal VTT file; ``tmx`` None when the
    read skipped pytmx)."""

    model: MapModel
    #: pytmx.TiledMap (tile layer data lives in the model, not here).
    tmx: Any = None
    #: The pre-passed document (tilesets inlined, tile data stubbed out): its layers in
    #: document order, which pytmx does not keep (it lists object layers apart).
    root: ET.Element | None = None


@dataclass(frozen=True)
class _Header:
    """The <map> element's own attributes."""

    orientation: str
    width: int
    height: int
    tile_width: int
    tile_height: int
    infinite: bool


def load_map(path: str | os.PathLike[str], *, collision: str | None = None) -> MapModel:
    """Read a Tiled map (.tmx, .tmj/.json or ``WORLD.world#NAME``) into the map model.

    pytmx's read of the map, which only a renderer needs, is skipped: a renderer is
    handed a :func:`read_tiled` result instead.

    >>> m = load_map("maps/encounter.tmx")  # doctest: +SKIP
    >>> m.grid.kind, m.terrain_at((0, 0)).move  # doctest: +SKIP
    ('square', 'walk')
    """
    return read_tiled(path, with_tmx=False, collision=collision).model


def read_tiled(
    path: str | os.PathLike[str],
    image_loader: Any = None,
    *,
    missing_images: str = "error",
    with_tmx: bool = True,
    collision: str | None = None,
) -> TiledFile:
    """Read a Tiled map (.tmx, or JSON .tmj/.json, or ``WORLD.world#NAME``): the model,
    pytmx's TiledMap (with ``image_loader`` if given) and the document's tree; with
    ``with_tmx=False`` (callers that never draw) the model alone. A Universal VTT file
    (.dd2vtt/.uvtt, :mod:`~engine.tiled.uvtt`) gives its model and no pytmx map.

    ``missing_images``: ``"error"`` (a missing tile image stops with one line) or
    ``"skip"`` (noted in ``model.notes``; for viewers that fall back to terrain colours).

    ``collision``: which collision conventions to apply (:mod:`~engine.tiled.collision`:
    ``all``, ``none`` or a comma list), in place of the map property ``collision``.
    """
    if uvtt.is_uvtt(path):  # a Universal VTT file: no Tiled document, nothing for pytmx
        return TiledFile(model=uvtt.read_uvtt(os.fspath(path), missing_images))
    path = map_path(os.fspath(path))  # WORLD.world#NAME: that map's file
    notes: list[str] = []
    root = _parse_map_xml(path)
    header = _read_header(path, root)
    inline_tilesets(path, root, missing_images, notes)
    resolve_properties(path, root, notes)
    sanitise_properties(root, notes)
    check_property_types(path, root)
    width, height, infinite = header.width, header.height, header.infinite
    raw_layers = collect_tile_layers(path, root, width, height, infinite)
    origin: Cell = (0, 0)
    if infinite:
        width, height, origin = crop_infinite(path, root, raw_layers, width, height, notes)
    objects = read_objects(path, root)
    tmx = parse_with_pytmx(path, root, image_loader, missing_images, notes) if with_tmx else None
    mprops = properties(root)
    chosen = mprops.get("collision") if collision is None else collision
    conventions = collision_mod.wanted(path, chosen)
    collision_layers = collision_mod.mark_layers(raw_layers, conventions)
    grid = _build_grid(path, root, header, width, height, mprops)
    cell_size, cell_unit = _cell_measure(path, mprops)
    layers, terrain_ids, terrains, solid = _read_terrain(
        path, root, raw_layers, (height, width), "tile-property" in conventions
    )
    system = mprops.get("system")
    corners = _corners(path, mprops)
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
        corners=corners,
    )
    applied = [solid] if solid.cells else []
    applied += collision_mod.block_layers(model, collision_layers)
    if "objects" in conventions:
        owners = collision_mod.collision_object_ids(root)
        shift = origin_pixels(grid, *origin) if origin != (0, 0) else (0.0, 0.0)
        applied += collision_mod.block_objects(model, objects, owners, shift)
    model.collision = tuple(applied)
    _place_objects(path, model, objects, origin)
    model.notes = tuple(notes)
    if tmx is None:
        return TiledFile(model=model)
    return TiledFile(model=model, tmx=tmx, root=root)


def _parse_map_xml(path: str) -> ET.Element:
    """The file's XML, which must be a <map>."""
    root = source.read_document(path)
    if root.tag != "map":
        raise fail(path, f"is a <{root.tag}> file, not a Tiled map (<map>)", "open a .tmx map")
    return root


def _read_header(path: str, root: ET.Element) -> _Header:
    """Orientation, size and tile size, checked before anything is allocated."""
    orientation = root.get("orientation", "orthogonal")
    if orientation not in ORIENTATIONS:
        raise fail(
            path,
            f"unknown orientation '{clip(orientation)}'",
            "use an orthogonal, isometric, hexagonal or staggered map",
        )
    width = int_attr(path, root, "width")
    height = int_attr(path, root, "height")
    tw = int_attr(path, root, "tilewidth")
    th = int_attr(path, root, "tileheight")
    infinite = root.get("infinite", "0") == "1"
    if not infinite:
        if width <= 0 or height <= 0:
            raise fail(path, f"map size {width}x{height} has no cells")
        if width * height > MAX_CELLS:
            raise fail(
                path,
                f"map declares {width}x{height} = {width * height} cells; "
                f"tacgrid reads at most {MAX_CELLS}",
                "split the map or resize it in Tiled (Map > Resize Map)",
            )
    if not (0 < tw <= MAX_TILE_PIXELS and 0 < th <= MAX_TILE_PIXELS):
        raise fail(
            path,
            f"tile size {tw}x{th} px; tacgrid reads tiles of 1 to {MAX_TILE_PIXELS} px",
            "fix it in Tiled (Map > Map Properties)",
        )
    return _Header(orientation, width, height, tw, th, infinite)


def _build_grid(
    path: str, root: ET.Element, header: _Header, width: int, height: int, mprops: dict[str, Any]
) -> Grid:
    """The grid: orientation, (cropped) size, tile size, stagger and the diagonals rule."""
    diagonals = str(mprops.get("diagonals", "alternate"))
    if diagonals not in DIAGONAL_RULES:
        raise fail(
            path, f"map property diagonals='{clip(diagonals)}'", "use " + " | ".join(DIAGONAL_RULES)
        )
    hexside = 0
    if header.orientation == "hexagonal":
        hexside = int(float_attr(root, "hexsidelength"))
        if not 0 <= hexside <= MAX_TILE_PIXELS:
            raise fail(path, f"hexsidelength {hexside} px", f"use 0 to {MAX_TILE_PIXELS} px")
    stagger_axis = root.get("staggeraxis", "y") or "y"
    stagger_index = root.get("staggerindex", "odd") or "odd"
    if stagger_axis not in ("x", "y") or stagger_index not in ("odd", "even"):
        raise fail(
            path,
            f"staggeraxis='{clip(stagger_axis)}' staggerindex='{clip(stagger_index)}'",
            "use x|y and odd|even",
        )
    try:
        return Grid(
            orientation=header.orientation,
            width=width,
            height=height,
            tile_width=header.tile_width,
            tile_height=header.tile_height,
            stagger_axis=stagger_axis,
            stagger_index=stagger_index,
            hex_side=hexside,
            diagonals=diagonals,
        )
    except MapError as exc:
        raise fail(path, str(exc)) from None


def _cell_measure(path: str, mprops: dict[str, Any]) -> tuple[float | None, str | None]:
    """The map properties ``cell_size`` (a number > 0) and ``cell_unit`` (ft or m)."""
    cell_size = mprops.get("cell_size")
    if cell_size is not None:
        try:
            cell_size = float(cell_size)
        except ValueError:
            cell_size = -1.0
        if not (math.isfinite(cell_size) and cell_size > 0):
            raise fail(
                path,
                f"map property cell_size='{clip(str(mprops.get('cell_size')))}'",
                "use a number > 0, e.g. 5",
            )
    cell_unit = mprops.get("cell_unit")
    if cell_unit is not None and cell_unit not in UNITS:
        raise fail(path, f"map property cell_unit='{clip(str(cell_unit))}'", "use ft or m")
    return cell_size, cell_unit


def _corners(path: str, mprops: dict[str, Any]) -> str:
    """The map property ``corners``: ``pass`` (the default) or ``block``."""
    value = mprops.get("corners", "pass")
    if value not in CORNER_RULES:
        raise fail(
            path,
            f"map property corners='{clip(str(value))}'",
            f"use {' | '.join(CORNER_RULES)}",
        )
    return str(value)


def _read_terrain(
    path: str, root: ET.Element, raw_layers: list[RawLayer], shape: tuple[int, int], solid: bool
) -> tuple[tuple[TileLayer, ...], Cells | np.ndarray, tuple[Terrain, ...], Collision]:
    """The model's tile layers and every cell's terrain from the tiles stacked on it; with
    ``solid`` (the ``tile-property`` collision convention) a tile whose collision property
    is true blocks, and the Collision says how many cells it blocked."""
    tile_props = tile_properties(path, root)
    ranges = tileset_ranges(path, root)
    layers = tuple(tile_layer(lay, shape) for lay in raw_layers)
    keys: set[str] = set()
    solid_gids: set[int] = set()
    if solid:
        tile_props = dict(tile_props)
        for gid, props in tile_props.items():
            key = collision_mod.tile_blocks(props)
            if key is not None and props.get("move") in (None, ""):
                keys.add(key)
                solid_gids.add(gid)
                added = {"move": "blocked"}
                if not (props.get("terrain") or props.get("type") or props.get("class")):
                    added["terrain"] = collision_mod.COLLISION_TERRAIN
                tile_props[gid] = {**props, **added}
    terrain_ids, terrains = cell_terrain(path, layers, tile_props, ranges, shape)
    count = collision_mod.count_solid(layers, solid_gids, terrain_ids, terrains)
    return layers, terrain_ids, terrains, Collision("tile-property", ",".join(sorted(keys)), count)


def _place_objects(path: str, model: MapModel, objects: list[MapObject], origin: Cell) -> None:
    """Spawns, exits and terrain regions from the objects, onto the model."""
    spawns, exits, walls = apply_objects(path, model, objects, origin)
    check_walls(path, model.grid, walls)
    model.spawns = unique_spawns(spawns)
    model.exits = exits
    model.walls = walls


def unique_spawns(spawns: tuple[Spawn, ...]) -> tuple[Spawn, ...]:
    """Spawns with their ids made unique, so that every spawn becomes a token: the first of
    a name keeps it, the next are ``NAME-2``, ``NAME-3``... in document order (a number a
    spawn of that exact name already holds is skipped)."""
    taken = {s.id for s in spawns}
    seen: set[str] = set()
    counts: dict[str, int] = {}
    out = []
    for s in spawns:
        if s.id not in seen:
            seen.add(s.id)
            out.append(s)
            continue
        n = counts.get(s.id, 1)
        while True:
            n += 1
            new = f"{s.id}-{n}"
            if new not in taken:
                break
        counts[s.id] = n
        taken.add(new)
        seen.add(new)
        out.append(Spawn(new, s.cell))
    return tuple(out)
