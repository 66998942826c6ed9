"""The Tiled reader: a .tmx file (or its JSON twin .tmj, or ``WORLD.world#NAME``) in, a
:class:`~engine.mapmodel.MapModel` out.

pytmx reads the map (attributes, map/layer properties, tilesets and their typed tile
properties). A pre-pass over the XML fills the gaps pytmx 3.32 has, so that a GM never
has to change a file that Tiled itself opens:

* tile layer data is decoded here (csv, base64, gzip, zlib and zstd; infinite maps'
  chunks), into stdlib arrays for a small map (no numpy import: :mod:`engine.cells`) and
  with numpy for a large one, much faster than pytmx's per-tile Python loop, and the
  Tiled flip/rotation bits (including the hex 120-degree bit 0x10000000) are split off;
* external tilesets (.tsx, and .tsj/.json converted to XML) are inlined with their image
  paths made relative to the map, image sizes filled in from the PNG header;
* object templates (.tx) are merged into their objects; ellipse, point, text, polygon
  and tile objects are told apart; float layer offsets are kept (pytmx gets rounded ones);
* a ``Terrain`` class property stands for its members (the project file's defaults for
  those not set); other class- and list-typed custom properties, which pytmx cannot
  parse, are left out.

Anything that still cannot be read stops with one :class:`~engine.errors.MapError` line
naming the file, the problem and what to change in Tiled.

The steps live in one module each:

* :mod:`~engine.tiled.reader`: :func:`read_tiled` and :func:`load_map`, the steps in order;
* :mod:`~engine.tiled.source`: the one place a file is opened and its XML parsed;
* :mod:`~engine.tiled.jsondoc`: Tiled JSON (.tmj, .tsj, .tj) turned into the same XML tree;
* :mod:`~engine.tiled.project`: class and enum property types from the .tiled-project;
* :mod:`~engine.tiled.world`: .world files and ``WORLD.world#NAME``;
* :mod:`~engine.tiled.uvtt`: Universal VTT files (.dd2vtt/.uvtt), walls and doors on open ground;
* :mod:`~engine.tiled.common`: limits, the error line, attributes and custom properties;
* :mod:`~engine.tiled.tilesets`: external tilesets inlined, images re-linked and checked;
* :mod:`~engine.tiled.layers`: tile layers found, groups flattened, infinite maps cropped;
* :mod:`~engine.tiled.layerdata`: a layer's <data> decoded (every encoding, one entry);
* :mod:`~engine.tiled.objects`: templates, object shapes, spawns, exits and regions;
* :mod:`~engine.tiled.terrain`: each cell's terrain from its stack of tiles;
* :mod:`~engine.tiled.pytmx_bridge`: pytmx, imported headless, given the pre-passed XML.
"""

from __future__ import annotations

from engine.tiled.common import FLAG_MASK, GID_MASK, MAX_CELLS, MAX_TILESET_TILES, ORIENTATIONS
from engine.tiled.pytmx_bridge import _pytmx
from engine.tiled.reader import TiledFile, load_map, read_tiled
from engine.tiled.world import WorldMap, read_world

#: What a map file may be called (a JSON map may also be named otherwise: it is told by
#: its content); ``WORLD.world#NAME`` names one map of a world; .dd2vtt/.uvtt are
#: Universal VTT files.
MAP_SUFFIXES = (".tmx", ".tmj", ".json", ".world", ".dd2vtt", ".uvtt")


def is_map_source(source: str) -> bool:
    """Does a command's MAP-or-SCENARIO argument name a map (rather than a scenario)?"""
    from engine.tiled.world import split_spec

    return source.lower().endswith(MAP_SUFFIXES) or split_spec(source) is not None


__all__ = [
    "FLAG_MASK",
    "GID_MASK",
    "MAX_CELLS",
    "MAX_TILESET_TILES",
    "MAP_SUFFIXES",
    "ORIENTATIONS",
    "TiledFile",
    "WorldMap",
    "_pytmx",
    "is_map_source",
    "load_map",
    "read_tiled",
    "read_world",
]
