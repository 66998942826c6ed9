"""The project's own map model, independent of pytmx and of any file format.

A :class:`MapModel` is a grid plus, for every cell, an index into a small table of
:class:`Terrain` records (cells that share every property share a record). Per-property
numpy arrays (``move_codes()``, ``cost_array()``...) are derived from that table in one
vectorised lookup, which is what the search and the renderer consume.

The per-cell arrays (``terrain_ids``, a layer's ``gids`` and ``flags``) may be given as
:class:`~engine.cells.Cells` (what the reader builds for a small map) and read as numpy
arrays; the counts ``info`` reports are taken without numpy while they are still Cells.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

from engine.cells import Cells, NumpyField, held, value_counts
from engine.grid import Cell, Grid
from engine.lazy import numpy as np
from engine.terrain import DIFFICULTIES, MODES, Mode, Terrain  # noqa: F401 (importable from here)

FALLS: tuple[str, ...] = ("hard", "soft", "water")
UNITS: tuple[str, ...] = ("ft", "m")
#: The map property ``corners`` (MAP-FORMAT.md); the first is the default.
CORNER_RULES: tuple[str, ...] = ("pass", "block")
#: The properties a tile or a region object may set (MAP-FORMAT.md).
TERRAIN_KEYS: tuple[str, ...] = (
    "terrain",
    "move",
    "difficulty",
    "dn",
    "cost",
    "cost_add",
    "height",
    "fall",
)


BLOCKED_EMPTY = Terrain(name="empty", move="blocked")


@dataclass(frozen=True)
class MapObject:
    """A Tiled object as the model keeps it (position in map pixels, Tiled's object space)."""

    id: int
    name: str
    cls: str
    shape: str  # rectangle | ellipse | point | polygon | polyline | tile | text
    x: float
    y: float
    width: float = 0.0
    height: float = 0.0
    rotation: float = 0.0
    points: tuple[tuple[float, float], ...] = ()  # polygon/polyline, relative to (x, y)
    properties: dict[str, Any] = field(default_factory=dict, compare=False, hash=False)


@dataclass(frozen=True)
class Spawn:
    id: str
    cell: Cell


@dataclass(frozen=True)
class Exit:
    name: str
    cells: tuple[Cell, ...]


@dataclass(frozen=True)
class Wall:
    """A thin wall on cell edges (MAP-FORMAT.md, Objects): a polyline in map pixels.

    ``kind`` is ``wall``, ``door`` or ``window``; a door blocks only while closed. Which cell
    edges a wall blocks is derived from its points by :mod:`engine.walls`.
    """

    id: int
    kind: str
    points: tuple[tuple[float, float], ...]
    open: bool = False
    name: str = ""

    @property
    def blocks(self) -> bool:
        return not (self.kind == "door" and self.open)


WALL_KINDS: tuple[str, ...] = ("wall", "door", "window")


@dataclass(frozen=True)
class Collision:
    """One collision convention the reader applied (engine.tiled.collision): which
    (``tile-property``, ``layer`` or ``objects``), where (the layer's name, or the tile
    properties read) and how many cells it blocked."""

    convention: str
    source: str
    cells: int


@dataclass(frozen=True)
class TileLayer:
    """One tile layer's raw tile ids, for renderers (flip flags kept apart)."""

    name: str
    gids: NumpyField = NumpyField()  # (height, width) uint32, flags stripped; 0 = empty
    flags: NumpyField = NumpyField()  # (height, width) uint8: Tiled's top four gid bits >> 28
    visible: bool = True
    opacity: float = 1.0
    offset: tuple[float, float] = (0.0, 0.0)
    terrain: bool = True


@dataclass(frozen=True)
class ImageLayer:
    """A picture drawn with the map: a Universal VTT file's map image (or a Tiled image
    layer). ``data`` is the encoded file (PNG, WebP, JPEG...), decoded only to be drawn.

    ``size`` is the rectangle it is drawn into, in map pixels (the image is stretched to
    it); ``after``: drawn after this many tile layers (0: under all of them).
    """

    name: str
    data: bytes = field(repr=False)
    size: tuple[int, int]
    offset: tuple[float, float] = (0.0, 0.0)
    opacity: float = 1.0
    visible: bool = True
    after: int = 0


@dataclass
class MapModel:
    """A loaded map: grid, terrain per cell, objects, spawns and exits.

    >>> from engine.grid import Grid
    >>> g = Grid("orthogonal", 3, 2, 32, 32)
    >>> m = MapModel.uniform(g, Terrain())
    >>> m.terrain_at((2, 1)).move
    'walk'
    """

    grid: Grid
    terrain_ids: NumpyField = NumpyField()  # (height, width) int32 indices into ``terrains``
    # (no default: a NumpyField has none, though mypy counts the descriptor as one)
    terrains: tuple[Terrain, ...]  # type: ignore[misc]
    path: str = ""
    properties: dict[str, Any] = field(default_factory=dict)
    cell_size: float | None = None  # from the map; None = the system's default
    cell_unit: str | None = None
    system: str | None = None
    spawns: tuple[Spawn, ...] = ()
    exits: tuple[Exit, ...] = ()
    objects: tuple[MapObject, ...] = ()
    layers: tuple[TileLayer, ...] = ()
    origin: Cell = (0, 0)  # Tiled coordinates of cell (0, 0): non-zero for infinite maps
    notes: tuple[str, ...] = ()  # what the loader changed or ignored, for `info`
    walls: tuple[Wall, ...] = ()  # thin walls, doors and windows on cell edges
    corners: str = "pass"  # MAP-FORMAT.md `corners`: pass | block
    images: tuple[ImageLayer, ...] = ()  # pictures drawn with the map (a UVTT map image)
    #: The collision conventions the reader applied (``info`` ``collision``).
    collision: tuple[Collision, ...] = ()
    #: Blocked neighbour slots per cell (engine.walls): None = derived from ``walls`` and
    #: ``corners``; a derived model (a large token's anchors, tokens in the way) sets its own.
    step_blocks: np.ndarray | None = field(default=None, repr=False, compare=False)

    @classmethod
    def uniform(cls, grid: Grid, terrain: Terrain, **kwargs: Any) -> MapModel:
        ids = np.zeros((grid.height, grid.width), dtype=np.int32)
        return cls(grid=grid, terrain_ids=ids, terrains=(terrain,), **kwargs)

    @property
    def width(self) -> int:
        return self.grid.width

    @property
    def height(self) -> int:
        return self.grid.height

    def terrain_at(self, cell: Cell) -> Terrain:
        c, r = cell
        return self.terrains[int(self.terrain_ids[r, c])]

    def _lookup(self, values: list[Any], dtype: Any) -> np.ndarray:
        return np.asarray(values, dtype=dtype)[self.terrain_ids]

    def move_codes(self) -> np.ndarray:
        """(height, width) uint8 array of indices into :data:`MODES`."""
        return self._lookup([MODES.index(t.move) for t in self.terrains], np.uint8)

    def cost_array(self) -> np.ndarray:
        return self._lookup([t.cost for t in self.terrains], np.float64)

    def difficulty_codes(self) -> np.ndarray:
        return self._lookup([DIFFICULTIES.index(t.difficulty) for t in self.terrains], np.uint8)

    def mode_counts(self) -> dict[str, int]:
        """Cells per movement mode, every mode listed (0 where absent)."""
        per_terrain = value_counts(held(self, "terrain_ids"), len(self.terrains))
        counts = dict.fromkeys(MODES, 0)
        for t, n in zip(self.terrains, per_terrain, strict=True):
            counts[t.move] += n
        return counts

    def terrain_counts(self) -> dict[str, int]:
        per_terrain = value_counts(held(self, "terrain_ids"), len(self.terrains))
        counts: dict[str, int] = {}
        for t, n in zip(self.terrains, per_terrain, strict=True):
            if n:
                counts[t.name] = counts.get(t.name, 0) + n
        return dict(sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])))

    def with_terrain(self, cells: list[Cell], override: dict[str, Any]) -> None:
        """Apply a region's properties to ``cells`` in place (new records as needed)."""
        table = list(self.terrains)
        remap: dict[int, int] = {}
        ids = held(self, "terrain_ids")
        # Cells not yet numpy: written in place as they are (a cell is row * width + col).
        flat, width = (ids.values, ids.shape[1]) if isinstance(ids, Cells) else (None, 0)
        for c, r in cells:
            old = int(self.terrain_ids[r, c]) if flat is None else flat[r * width + c]
            if old not in remap:
                new = replace(table[old], **override)
                try:
                    remap[old] = table.index(new)
                except ValueError:
                    table.append(new)
                    remap[old] = len(table) - 1
            if flat is None:
                self.terrain_ids[r, c] = remap[old]
            else:
                flat[r * width + c] = remap[old]
        self.terrains = tuple(table)
