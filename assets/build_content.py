"""Build tacgrid's shipped Tiled content: terrain tilesets, the project file and the maps.

Run from the repository root (or anywhere)::

    python assets/build_content.py

It draws the tileset images with pygame (no display needed), writes one ``.tsx`` per grid
shape, ``assets/tacgrid.tiled-project``, one ``.tmx`` per ASCII source in ``maps/src/`` (and
a Tiled JSON twin ``.tmj`` of ``hex_flat``), and ``maps/vtt_room.dd2vtt``, a Universal VTT
battle map (drawn with the images: ``--no-images`` leaves it as it is).
The ASCII sources are the truth: one character per cell, read through :data:`LEGEND`, and the
tests compare every loaded cell against them, so edit the ``.txt`` and rerun rather than
painting the ``.tmx`` in Tiled. Output is deterministic (same bytes on every run).
"""

from __future__ import annotations

import json
import math
import os
import sys
from collections import deque
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from xml.sax.saxutils import quoteattr

ROOT = Path(__file__).resolve().parent.parent
SOURCES = ROOT / "maps" / "src"

TILED_VERSION = "1.8.2"  # Debian's tiled; newer Tiled opens these files unchanged
FORMAT_VERSION = "1.8"

# The property value sets of MAP-FORMAT.md, offered as pick-lists by the project file:
# the engine's own tables, so the editor offers exactly what the loader accepts.
sys.path.insert(0, str(ROOT))
from engine.grid import DIAGONAL_RULES  # noqa: E402
from engine.mapmodel import CORNER_RULES, DIFFICULTIES, FALLS, MODES, UNITS  # noqa: E402

ENUMS: dict[str, tuple[str, ...]] = {
    "move": MODES,
    "difficulty": DIFFICULTIES,
    "fall": FALLS,
    "diagonals": DIAGONAL_RULES,
    "cell_unit": UNITS,
    "corners": CORNER_RULES,
}


# --------------------------------------------------------------------------------------
# LEGEND: one ASCII character per terrain. The order is the tile id order in every tileset
# (tile id = index), so append new terrains at the end to keep existing maps' gids valid.
# Heights are per unit because a tileset's numbers are in its maps' cell_unit: the square
# tileset serves 5-ft maps, the hex tilesets 2-m maps.
#
#  char  terrain        move     difficulty  cost  height ft / m  fall
#  .     open           walk     -           -     -              -
#  _     floor          walk     -           -     -              -
#  ,     rough          walk     -           2     -              -
#  %     rubble         walk     easy        2     -              -
#  T     forest         walk     -           2     -              -
#  ~     shallow water  swim     none        -     -              water
#  w     deep water     swim     moderate    -     -              water
#  r     rapids         swim     difficult   -     -              water
#  H     ladder         ladder   -           -     5 / 2 (a cell) -
#  ^     cliff          climb    difficult   -     15 / 4         -
#  #     wall           blocked  -           -     10 / 3         -
#  O     pit            gap      -           -     10 / 3         -
#  :     open air       air      -           -     -              -
#  =     crawlspace     crawl    -           -     -              -
#  +     difficult      walk     -           +1 (cost_add: one cell more to enter, PF2e)
# --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class TerrainSpec:
    char: str
    name: str  # the tile's Tiled class (type) and the terrain name users see
    move: str
    difficulty: str | None = None  # None = not written (the default, "none")
    cost: float | None = None
    cost_add: float | None = None  # extra cells of movement to enter (MAP-FORMAT.md)
    height: dict[str, float] = field(default_factory=dict)  # unit -> height
    fall: str | None = None
    art: str = ""  # drawing function name in ART


LEGEND: tuple[TerrainSpec, ...] = (
    TerrainSpec(".", "open", "walk", art="open"),
    TerrainSpec("_", "floor", "walk", art="floor"),
    TerrainSpec(",", "rough", "walk", cost=2, art="rough"),
    TerrainSpec("%", "rubble", "walk", difficulty="easy", cost=2, art="rubble"),
    TerrainSpec("T", "forest", "walk", cost=2, art="forest"),
    TerrainSpec("~", "shallow water", "swim", difficulty="none", fall="water", art="shallow"),
    TerrainSpec("w", "deep water", "swim", difficulty="moderate", fall="water", art="deep"),
    TerrainSpec("r", "rapids", "swim", difficulty="difficult", fall="water", art="rapids"),
    TerrainSpec("H", "ladder", "ladder", height={"ft": 5, "m": 2}, art="ladder"),
    TerrainSpec(
        "^", "cliff", "climb", difficulty="difficult", height={"ft": 15, "m": 4}, art="cliff"
    ),
    TerrainSpec("#", "wall", "blocked", height={"ft": 10, "m": 3}, art="wall"),
    TerrainSpec("O", "pit", "gap", height={"ft": 10, "m": 3}, art="pit"),
    TerrainSpec(":", "open air", "air", art="air"),
    TerrainSpec("=", "crawlspace", "crawl", art="crawl"),
    TerrainSpec("+", "difficult ground", "walk", cost_add=1, art="difficult"),
)
BY_CHAR: dict[str, TerrainSpec] = {t.char: t for t in LEGEND}
TILE_ID: dict[str, int] = {t.char: i for i, t in enumerate(LEGEND)}
COLUMNS = 5  # tileset image layout: 5 x 3 tiles


# --------------------------------------------------------------------------------------
# Tilesets: one per grid shape. Hex sizes are chosen so Tiled's integer maths loses nothing
# (TECH-NOTES): (H - S) and (W - S) even, so the drawn cell is exactly the tile image.
# --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class TilesetSpec:
    key: str
    width: int
    height: int
    unit: str  # the cell_unit of the maps it is made for (heights are in it)
    axis: str | None = None  # None = square; "y" pointy-top; "x" flat-top
    side: int = 0  # hexsidelength

    @property
    def stem(self) -> str:
        return f"terrain_{self.key}"

    def hex_polygon(self) -> list[tuple[float, float]]:
        w, h, s = self.width, self.height, self.side
        if self.axis == "y":
            oy = (h - s) // 2
            return [(w / 2, 0), (w, oy), (w, oy + s), (w / 2, h), (0, oy + s), (0, oy)]
        if self.axis == "x":
            ox = (w - s) // 2
            return [(ox, 0), (ox + s, 0), (w, h / 2), (ox + s, h), (ox, h), (0, h / 2)]
        return [(0, 0), (w, 0), (w, h), (0, h)]


TILESETS: dict[str, TilesetSpec] = {
    "square": TilesetSpec("square", 32, 32, "ft"),
    "hex_pointy": TilesetSpec("hex_pointy", 32, 36, "m", axis="y", side=18),
    "hex_flat": TilesetSpec("hex_flat", 36, 32, "m", axis="x", side=18),
}


# --------------------------------------------------------------------------------------
# Maps: ASCII source maps/src/<name>.txt + the settings and objects below. Object positions
# are in cells (col, row); rectangles and polygons in cell units from the map's top-left
# (square maps only, where one cell = one tile).
# --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Obj:
    name: str
    cls: str = ""  # written as Tiled 1.8's `type` attribute
    cell: tuple[int, int] | None = None  # a point at this cell's centre
    rect: tuple[float, float, float, float] | None = None  # x, y, w, h in cells
    polygon: tuple[tuple[float, float], ...] = ()  # cell units, absolute
    properties: tuple[tuple[str, str, object], ...] = ()  # (name, type, value)


@dataclass(frozen=True)
class MapSpec:
    name: str
    tileset: str
    staggerindex: str = "odd"
    properties: tuple[tuple[str, str, object], ...] = ()
    objects: tuple[Obj, ...] = ()
    connected: tuple[str, ...] = ()  # object names that must reach each other on foot


def _spawn(name: str, col: int, row: int) -> Obj:
    return Obj(name, "spawn", cell=(col, row))


MAP_SPECS: tuple[MapSpec, ...] = (
    MapSpec(
        "encounter",
        "square",
        properties=(
            ("cell_size", "float", 5),
            ("cell_unit", "cell_unit", "ft"),
            ("diagonals", "diagonals", "alternate"),
        ),
        objects=(
            _spawn("pc1", 3, 12),
            _spawn("pc2", 3, 14),
            _spawn("pc3", 2, 16),
            _spawn("pc4", 2, 18),
            _spawn("ogre", 29, 18),
            _spawn("goblin1", 27, 3),
            _spawn("goblin2", 35, 5),
            _spawn("goblin3", 21, 25),
        ),
        connected=("pc1", "pc2", "pc3", "pc4", "ogre", "goblin1", "goblin2", "goblin3"),
    ),
    MapSpec(
        "hex_pointy",
        "hex_pointy",
        staggerindex="odd",
        properties=(("cell_size", "float", 2), ("cell_unit", "cell_unit", "m")),
        objects=(
            _spawn("hero1", 2, 20),
            _spawn("hero2", 3, 21),
            _spawn("hero3", 2, 22),
            _spawn("beast", 24, 4),
        ),
        connected=("hero1", "hero2", "hero3", "beast"),
    ),
    MapSpec(
        "hex_flat",
        "hex_flat",
        staggerindex="even",
        properties=(("cell_size", "float", 2), ("cell_unit", "cell_unit", "m")),
        objects=(
            _spawn("scout1", 1, 3),
            _spawn("scout2", 2, 5),
            _spawn("guard1", 22, 13),
            _spawn("guard2", 25, 16),
        ),
        connected=("scout1", "scout2", "guard1", "guard2"),
    ),
    MapSpec(
        "chase",
        "square",
        properties=(
            ("cell_size", "float", 5),
            ("cell_unit", "cell_unit", "ft"),
            ("diagonals", "diagonals", "alternate"),
        ),
        objects=(
            _spawn("pursuer1", 1, 16),
            _spawn("pursuer2", 1, 20),
            _spawn("quarry", 7, 18),
            Obj("exit_east", "exit", rect=(46, 14, 2, 8)),
            Obj("exit_north", "exit", rect=(36, 0, 6, 1)),
            Obj(
                "mud",
                rect=(10, 19, 7, 5),
                properties=(("terrain", "string", "mud"), ("cost", "float", 3)),
            ),
            Obj(
                "brambles",
                polygon=((28, 3), (33, 2), (35, 6), (31, 9), (27, 7)),
                properties=(
                    ("terrain", "string", "brambles"),
                    ("cost", "float", 2),
                    ("difficulty", "difficulty", "easy"),
                ),
            ),
        ),
        connected=("pursuer1", "pursuer2", "quarry", "exit_east", "exit_north"),
    ),
)


# --------------------------------------------------------------------------------------
# Grid geometry, as Tiled's renderers place cells (TECH-NOTES "Tiled's hexagonal renderer")
# --------------------------------------------------------------------------------------


def cell_centre(ts: TilesetSpec, staggerindex: str, col: int, row: int) -> tuple[float, float]:
    """Pixel centre of a cell in Tiled's map (object) coordinates."""
    w, h = ts.width, ts.height
    if ts.axis is None:
        return ((col + 0.5) * w, (row + 0.5) * h)
    sx, sy = (0, ts.side) if ts.axis == "y" else (ts.side, 0)
    ox, oy = (w - sx) // 2, (h - sy) // 2
    colw, rowh = ox + sx, oy + sy
    ew, eh = colw + ox, rowh + oy

    def shifted(i: int) -> bool:
        return bool(i & 1) ^ (staggerindex == "even")

    if ts.axis == "y":
        x = col * ew + (colw if shifted(row) else 0)
        y = row * rowh
    else:
        x = col * colw
        y = row * eh + (rowh if shifted(col) else 0)
    return (x + ew / 2, y + eh / 2)


def neighbours(ts: TilesetSpec, staggerindex: str, col: int, row: int) -> list[tuple[int, int]]:
    """Edge neighbours (square: 8 with diagonals, hex: 6) via the cube convention."""
    if ts.axis is None:
        return [(col + dc, row + dr) for dc in (-1, 0, 1) for dr in (-1, 0, 1) if dc or dr]
    odd = staggerindex == "odd"
    if ts.axis == "y":
        q = col - (row - (row & 1)) // 2 if odd else col - (row + (row & 1)) // 2
        r = row
    else:
        q = col
        r = row - (col - (col & 1)) // 2 if odd else row - (col + (col & 1)) // 2
    out = []
    for dq, dr in ((1, 0), (-1, 0), (0, 1), (0, -1), (1, -1), (-1, 1)):
        nq, nr = q + dq, r + dr
        if ts.axis == "y":
            nrow = nr
            ncol = nq + (nr - (nr & 1)) // 2 if odd else nq + (nr + (nr & 1)) // 2
        else:
            ncol = nq
            nrow = nr + (nq - (nq & 1)) // 2 if odd else nr + (nq + (nq & 1)) // 2
        out.append((ncol, nrow))
    return out


# --------------------------------------------------------------------------------------
# Drawing (pygame, headless)
# --------------------------------------------------------------------------------------


def _shade(c: tuple[int, int, int], f: float) -> tuple[int, int, int]:
    r, g, b = (max(0, min(255, round(v * f))) for v in c)
    return (r, g, b)


BASE: dict[str, tuple[int, int, int]] = {
    "open": (176, 204, 124),
    "floor": (206, 176, 128),
    "rough": (168, 168, 112),
    "rubble": (160, 148, 132),
    "forest": (96, 146, 72),
    "shallow": (150, 205, 235),
    "deep": (48, 96, 176),
    "rapids": (80, 140, 205),
    "ladder": (150, 132, 112),
    "cliff": (128, 118, 108),
    "wall": (96, 84, 78),
    "pit": (124, 104, 84),
    "air": (222, 236, 250),
    "crawl": (120, 98, 76),
    "difficult": (150, 146, 96),
}


def _draw_art(pg: Any, surf: Any, art: str, w: int, h: int) -> None:  # noqa: C901
    """Draw one terrain's picture over the whole w x h surface (a hex mask comes later)."""
    d = pg.draw
    cx, cy = w / 2, h / 2
    k = min(w, h) / 32  # glyph scale: 1 at 32 px

    def P(x: float, y: float) -> tuple[int, int]:  # glyph coordinates from the centre
        return (round(cx + x * k), round(cy + y * k))

    base = BASE[art]
    surf.fill((*base, 255))
    dark = _shade(base, 0.62)
    if art == "open":
        for x, y in ((-8, -6), (5, -9), (7, 5), (-6, 7), (0, 0)):
            d.line(surf, dark, P(x, y + 2), P(x - 2, y - 2), 1)
            d.line(surf, dark, P(x, y + 2), P(x, y - 3), 1)
            d.line(surf, dark, P(x, y + 2), P(x + 2, y - 2), 1)
    elif art == "floor":
        for y in (-8, 0, 8):
            d.line(surf, dark, (0, P(0, y)[1]), (w, P(0, y)[1]), 1)
        for x, y in ((-6, -4), (6, 4), (0, -12), (-10, 12), (10, -12)):
            d.line(surf, dark, P(x, y - 4), P(x, y + 3), 1)
    elif art == "rough":
        for x, y, r in (
            (-8, -7, 2),
            (6, -9, 1.5),
            (9, 3, 2),
            (-3, 2, 1.5),
            (-9, 9, 1.5),
            (3, 10, 2),
        ):
            d.circle(surf, (108, 104, 84), P(x, y), max(1, round(r * k)))
        for x, y in ((0, -4), (-10, 0), (6, 9)):
            d.line(surf, dark, P(x - 2, y), P(x + 2, y), 1)
    elif art == "rubble":
        stones = (
            ((-11, -4), (-4, -9), (1, -3), (-5, 1)),
            ((3, -10), (10, -8), (9, -2), (3, -3)),
            ((-9, 4), (-2, 3), (0, 10), (-8, 11)),
            ((4, 2), (12, 3), (10, 10), (3, 8)),
        )
        for poly in stones:
            pts = [P(x, y) for x, y in poly]
            d.polygon(surf, (196, 188, 176), pts)
            d.polygon(surf, (86, 80, 74), pts, 1)
    elif art == "forest":
        for x, y, r in ((-6, -3, 7), (6, 3, 7)):
            d.rect(surf, (104, 72, 40), (*P(x - 1.5, y + 3), max(2, round(3 * k)), round(8 * k)))
            d.circle(surf, (36, 96, 40), P(x, y), round(r * k))
            d.circle(surf, (62, 128, 56), P(x - 2, y - 2), round(r * k * 0.45))
    elif art in ("shallow", "deep", "rapids"):
        wave = {"shallow": (70, 140, 200), "deep": (150, 190, 240), "rapids": (240, 248, 255)}[art]
        rows = {"shallow": (0,), "deep": (-5, 5), "rapids": (-8, 0, 8)}[art]
        for y0 in rows:
            if art == "rapids":
                for x0 in (-7, 5):
                    d.lines(
                        surf, wave, False, [P(x0 - 4, y0 + 3), P(x0, y0 - 2), P(x0 + 4, y0 + 3)], 2
                    )
            else:
                pts = [P(x / 2, y0 + 2.5 * math.sin(x / 2 / 3.0)) for x in range(-24, 25)]
                d.lines(surf, wave, False, pts, 2)
    elif art == "ladder":
        wood = (112, 70, 30)
        d.line(surf, wood, P(-6, -14), P(-6, 14), max(2, round(2.5 * k)))
        d.line(surf, wood, P(6, -14), P(6, 14), max(2, round(2.5 * k)))
        for y in (-10, -4, 2, 8):
            d.line(surf, (150, 100, 50), P(-6, y), P(6, y), max(2, round(2 * k)))
    elif art == "cliff":
        for x, y in ((-7, -5), (5, -7), (-1, 5), (9, 6), (-10, 8)):
            pts = [P(x - 5, y + 4), P(x, y - 5), P(x + 5, y + 4)]
            d.polygon(surf, (84, 76, 70), pts)
            d.line(surf, (176, 168, 158), P(x, y - 5), P(x - 5, y + 4), 1)
    elif art == "wall":
        brick, mortar = (176, 92, 70), (96, 84, 78)
        surf.fill((*mortar, 255))
        bh = max(4, round(6 * k))
        bw = max(8, round(12 * k))
        for j, y in enumerate(range(-bh, h + bh, bh)):
            off = (bw // 2) * (j % 2)
            for x in range(-bw, w + bw, bw):
                d.rect(surf, brick, (x + off + 1, y + 1, bw - 2, bh - 2))
    elif art == "pit":
        d.ellipse(surf, (70, 56, 44), (*P(-13, -11), round(26 * k), round(22 * k)))
        d.ellipse(surf, (30, 22, 18), (*P(-11, -9), round(22 * k), round(18 * k)))
        d.ellipse(surf, (6, 4, 4), (*P(-8, -6), round(16 * k), round(12 * k)))
    elif art == "air":
        d.circle(surf, (255, 255, 255), P(-4, -6), round(5 * k))
        d.circle(surf, (255, 255, 255), P(2, -8), round(6 * k))
        d.circle(surf, (255, 255, 255), P(7, -5), round(4 * k))
        d.rect(surf, (255, 255, 255), (*P(-4, -6), round(11 * k), round(5 * k)))
        for y in (2, 7):
            d.lines(surf, (150, 170, 200), False, [P(-5, y), P(0, y + 4), P(5, y)], 2)
    elif art == "crawl":
        d.rect(surf, (150, 120, 88), (*P(-16, -11), w, round(5 * k)))  # the low beam
        d.line(surf, (92, 70, 50), P(-16, -6), P(16, -6), 1)
        d.ellipse(surf, (24, 18, 14), (*P(-11, -3), round(22 * k), round(20 * k)))
        d.rect(surf, base, (*P(-16, 8), w, h))  # flatten the arch's bottom
    elif art == "difficult":  # tangled scrub: roots and tussocks that slow every step
        for x, y in ((-8, -8), (6, -6), (-2, 3), (9, 8), (-10, 9)):
            d.arc(surf, (86, 70, 40), (*P(x - 4, y - 3), round(8 * k), round(6 * k)), 0.3, 2.8, 1)
            d.line(surf, (72, 96, 44), P(x - 2, y + 2), P(x, y - 3), 1)
            d.line(surf, (72, 96, 44), P(x + 2, y + 2), P(x, y - 3), 1)
    else:  # pragma: no cover - a legend entry without art
        raise ValueError(f"no drawing for terrain art {art!r}")


def _inside_mask(ts: TilesetSpec) -> Any:
    """Pixels whose centre lies inside the cell's shape. The hex edges never pass through a
    pixel centre with these sizes, so neighbouring tiles share no pixel and leave no gap."""
    import numpy as np

    poly = ts.hex_polygon()
    xs = np.arange(ts.width)[:, None] + 0.5  # surfarray layout: [x, y]
    ys = np.arange(ts.height)[None, :] + 0.5
    inside = np.ones((ts.width, ts.height), dtype=bool)
    for (x0, y0), (x1, y1) in zip(poly, poly[1:] + poly[:1], strict=True):
        inside &= (x1 - x0) * (ys - y0) - (y1 - y0) * (xs - x0) >= 0
    return inside


def draw_tile(pg: Any, ts: TilesetSpec, spec: TerrainSpec) -> Any:
    import numpy as np

    surf = pg.Surface((ts.width, ts.height), pg.SRCALPHA, 32)
    _draw_art(pg, surf, spec.art, ts.width, ts.height)
    inside = _inside_mask(ts)
    pad = np.pad(inside, 1, constant_values=False)
    edge = inside & ~(pad[:-2, 1:-1] & pad[2:, 1:-1] & pad[1:-1, :-2] & pad[1:-1, 2:])
    rgb = pg.surfarray.pixels3d(surf)
    outline = np.array(_shade(BASE[spec.art], 0.55), dtype=np.uint8)
    rgb[edge] = (rgb[edge] * 0.35 + outline * 0.65).astype(np.uint8)
    del rgb
    alpha = pg.surfarray.pixels_alpha(surf)
    alpha[:] = np.where(inside, 255, 0).astype(np.uint8)
    del alpha
    return surf


def draw_tileset(pg: Any, ts: TilesetSpec, root: Path = ROOT) -> Path:
    rows = math.ceil(len(LEGEND) / COLUMNS)
    sheet = pg.Surface((COLUMNS * ts.width, rows * ts.height), pg.SRCALPHA, 32)
    sheet.fill((0, 0, 0, 0))
    for i, spec in enumerate(LEGEND):
        tile = draw_tile(pg, ts, spec)
        sheet.blit(tile, ((i % COLUMNS) * ts.width, (i // COLUMNS) * ts.height))
    out = root / "assets" / f"{ts.stem}.png"
    pg.image.save(sheet, str(out))
    return out


# --------------------------------------------------------------------------------------
# Writers
# --------------------------------------------------------------------------------------


def _num(v: object) -> str:
    if isinstance(v, float) and v.is_integer():
        return str(int(v))
    return str(v)


def _property(name: str, kind: str, value: object, indent: str) -> str:
    """One <property>. ``kind`` is a Tiled type, or an enum name from ENUMS (then it is
    saved as Tiled saves a string-stored enum: no type attribute, propertytype=name)."""
    if kind in ENUMS:
        if value not in ENUMS[kind]:
            raise ValueError(f"{name}={value!r} is not one of {ENUMS[kind]}")
        attrs = f"name={quoteattr(name)} propertytype={quoteattr(kind)}"
    elif kind == "string":
        attrs = f"name={quoteattr(name)}"
    else:
        attrs = f"name={quoteattr(name)} type={quoteattr(kind)}"
    return f"{indent}<property {attrs} value={quoteattr(_num(value))}/>\n"


def _properties(props: list[tuple[str, str, object]], indent: str) -> str:
    if not props:
        return ""
    body = "".join(_property(n, k, v, indent + " ") for n, k, v in sorted(props))
    return f"{indent}<properties>\n{body}{indent}</properties>\n"


def tile_properties(spec: TerrainSpec, unit: str) -> list[tuple[str, str, object]]:
    props: list[tuple[str, str, object]] = [("move", "move", spec.move)]
    if spec.difficulty is not None:
        props.append(("difficulty", "difficulty", spec.difficulty))
    if spec.cost is not None:
        props.append(("cost", "float", float(spec.cost)))
    if spec.cost_add is not None:
        props.append(("cost_add", "float", float(spec.cost_add)))
    if unit in spec.height:
        props.append(("height", "float", float(spec.height[unit])))
    if spec.fall is not None:
        props.append(("fall", "fall", spec.fall))
    return props


def write_tsx(ts: TilesetSpec, root: Path = ROOT) -> Path:
    rows = math.ceil(len(LEGEND) / COLUMNS)
    name = f"tacgrid {ts.key.replace('_', ' ')} ({ts.unit})"
    out = [
        '<?xml version="1.0" encoding="UTF-8"?>\n',
        f'<tileset version="{FORMAT_VERSION}" tiledversion="{TILED_VERSION}" '
        f'name={quoteattr(name)} tilewidth="{ts.width}" tileheight="{ts.height}" '
        f'tilecount="{COLUMNS * rows}" columns="{COLUMNS}">\n',
        f' <image source="{ts.stem}.png" width="{COLUMNS * ts.width}" '
        f'height="{rows * ts.height}"/>\n',
    ]
    for i, spec in enumerate(LEGEND):
        out.append(f' <tile id="{i}" type={quoteattr(spec.name)}>\n')
        out.append(_properties(tile_properties(spec, ts.unit), "  "))
        out.append(" </tile>\n")
    out.append("</tileset>\n")
    path = root / "assets" / f"{ts.stem}.tsx"
    path.write_text("".join(out), encoding="utf-8", newline="\n")
    return path


#: The object classes a GM draws walls with: (name, Tiled colour, members).
WALL_CLASSES: tuple[tuple[str, str, tuple[dict[str, object], ...]], ...] = (
    ("wall", "#ff202020", ()),
    ("door", "#ffa0522d", ({"name": "open", "type": "bool", "value": False},)),
    ("window", "#ff4080c0", ()),
)


def write_project(root: Path = ROOT) -> Path:
    types: list[dict[str, object]] = []
    for i, (name, values) in enumerate(ENUMS.items(), start=1):
        types.append(
            {
                "id": i,
                "name": name,
                "storageType": "string",
                "type": "enum",
                "values": list(values),
                "valuesAsFlags": False,
            }
        )
    # Object classes (Tiled 1.9+ lists them in an object's Class box and colours the objects).
    for i, (name, colour) in enumerate((("exit", "#ffe04040"), ("spawn", "#ff30a030")), 100):
        types.append(
            {
                "color": colour,
                "id": i,
                "members": [],
                "name": name,
                "type": "class",
                "useAs": ["object"],
            }
        )
    # Walls, doors and windows on cell edges (MAP-FORMAT.md, Objects): a line or polyline
    # object of one of these classes; a door's `open` defaults to closed.
    for i, (name, colour, members) in enumerate(WALL_CLASSES, 110):
        types.append(
            {
                "color": colour,
                "drawFill": False,
                "id": i,
                "members": [dict(m) for m in members],
                "name": name,
                "type": "class",
                "useAs": ["object"],
            }
        )
    # The Terrain class: one property on a tile or region stands for all terrain
    # properties (MAP-FORMAT.md), each member defaulting to the engine's own default;
    # dn and height are text so that empty means "the default" (no number does).
    members: list[dict[str, object]] = [
        {"name": "terrain", "type": "string", "value": ""},
        {"name": "move", "propertyType": "move", "type": "string", "value": "walk"},
        {"name": "difficulty", "propertyType": "difficulty", "type": "string", "value": "none"},
        {"name": "dn", "type": "string", "value": ""},
        {"name": "cost", "type": "float", "value": 1},
        {"name": "cost_add", "type": "float", "value": 0},
        {"name": "height", "type": "string", "value": ""},
        {"name": "fall", "propertyType": "fall", "type": "string", "value": "hard"},
    ]
    types.append(
        {
            "color": "#ff808080",
            "drawFill": True,
            "id": 200,
            "members": members,
            "name": "Terrain",
            "type": "class",
            "useAs": ["property", "tile", "object"],
        }
    )
    project = {
        "automappingRulesFile": "",
        "commands": [],
        "extensionsPath": "extensions",
        "folders": [".", "../maps"],
        "objectTypesFile": "",
        "propertyTypes": types,
    }
    path = root / "assets" / "tacgrid.tiled-project"
    path.write_text(json.dumps(project, indent=4) + "\n", encoding="utf-8", newline="\n")
    return path


def read_ascii(name: str) -> list[str]:
    """The rows of maps/src/<name>.txt; every row as wide as the first, every char known."""
    path = SOURCES / f"{name}.txt"
    rows = path.read_text(encoding="utf-8").splitlines()
    while rows and not rows[-1]:
        rows.pop()
    if not rows:
        raise ValueError(f"{path}: empty map source")
    width = len(rows[0])
    for r, line in enumerate(rows):
        if len(line) != width:
            raise ValueError(f"{path}:{r + 1}: row is {len(line)} cells wide, expected {width}")
        for c, ch in enumerate(line):
            if ch not in BY_CHAR:
                raise ValueError(f"{path}:{r + 1}:{c + 1}: {ch!r} is not in the legend")
    return rows


def _object_cells(ms: MapSpec, ts: TilesetSpec, obj: Obj, w: int, h: int) -> list[tuple[int, int]]:
    if obj.cell is not None:
        return [obj.cell]
    if obj.rect is not None:
        x, y, rw, rh = obj.rect
        return [
            (c, r)
            for r in range(h)
            for c in range(w)
            if x <= c + 0.5 < x + rw and y <= r + 0.5 < y + rh
        ]
    return []


def check_map(ms: MapSpec, rows: list[str]) -> None:  # noqa: C901
    """Spawns stand on cells a walker can use, and the named objects reach each other."""
    ts = TILESETS[ms.tileset]
    h, w = len(rows), len(rows[0])
    cells: dict[str, list[tuple[int, int]]] = {}
    for obj in ms.objects:
        oc = _object_cells(ms, ts, obj, w, h)
        for c, r in oc:
            if not (0 <= c < w and 0 <= r < h):
                raise ValueError(f"{ms.name}: object {obj.name} lies outside the map at {(c, r)}")
        if obj.cls == "spawn":
            c, r = oc[0]
            if BY_CHAR[rows[r][c]].move not in ("walk", "crawl"):
                raise ValueError(f"{ms.name}: spawn {obj.name} on {BY_CHAR[rows[r][c]].name}")
        cells[obj.name] = oc
    if not ms.connected:
        return
    # Anything but walls and open air can be crossed by someone on foot (swim, climb, jump).
    start = cells[ms.connected[0]][0]
    seen = {start}
    todo = deque([start])
    while todo:
        c, r = todo.popleft()
        for nc, nr in neighbours(ts, ms.staggerindex, c, r):
            if 0 <= nc < w and 0 <= nr < h and (nc, nr) not in seen:
                if BY_CHAR[rows[nr][nc]].move not in ("blocked", "air"):
                    seen.add((nc, nr))
                    todo.append((nc, nr))
    for name in ms.connected:
        if not any(cell in seen for cell in cells[name]):
            raise ValueError(f"{ms.name}: {name} cannot be reached from {ms.connected[0]}")


def write_tmx(ms: MapSpec, root: Path = ROOT) -> Path:  # noqa: C901
    ts = TILESETS[ms.tileset]
    rows = read_ascii(ms.name)
    check_map(ms, rows)
    h, w = len(rows), len(rows[0])
    if ts.axis is None:
        grid = 'orientation="orthogonal" renderorder="right-down"'
    else:
        grid = 'orientation="hexagonal" renderorder="right-down"'
    # Attribute order as Tiled 1.8 writes it, so a GM's re-save diffs cleanly.
    size = f'width="{w}" height="{h}" tilewidth="{ts.width}" tileheight="{ts.height}" infinite="0"'
    if ts.axis is not None:
        size += (
            f' hexsidelength="{ts.side}" staggeraxis="{ts.axis}" staggerindex="{ms.staggerindex}"'
        )
    objects = []
    for oid, obj in enumerate(ms.objects, start=1):
        attrs = f'id="{oid}" name={quoteattr(obj.name)}'
        if obj.cls:
            attrs += f" type={quoteattr(obj.cls)}"
        props = _properties(list(obj.properties), "   ")
        if obj.cell is not None:
            x, y = cell_centre(ts, ms.staggerindex, *obj.cell)
            objects.append(
                f'  <object {attrs} x="{_num(x)}" y="{_num(y)}">\n{props}   <point/>\n  </object>\n'
            )
        elif obj.rect is not None:
            if ts.axis is not None:
                raise ValueError(f"{ms.name}: rectangles in cell units need a square map")
            x, y, rw, rh = (v * s for v, s in zip(obj.rect, (ts.width, ts.height) * 2, strict=True))
            geo = f'x="{_num(x)}" y="{_num(y)}" width="{_num(rw)}" height="{_num(rh)}"'
            if props:
                objects.append(f"  <object {attrs} {geo}>\n{props}  </object>\n")
            else:
                objects.append(f"  <object {attrs} {geo}/>\n")
        elif obj.polygon:
            if ts.axis is not None:
                raise ValueError(f"{ms.name}: polygons in cell units need a square map")
            px = [(x * ts.width, y * ts.height) for x, y in obj.polygon]
            x0, y0 = px[0]
            pts = " ".join(f"{_num(x - x0)},{_num(y - y0)}" for x, y in px)
            objects.append(
                f'  <object {attrs} x="{_num(x0)}" y="{_num(y0)}">\n{props}'
                f'   <polygon points="{pts}"/>\n  </object>\n'
            )
    csv = ",\n".join(",".join(str(TILE_ID[ch] + 1) for ch in row) for row in rows)
    out = [
        '<?xml version="1.0" encoding="UTF-8"?>\n',
        f'<map version="{FORMAT_VERSION}" tiledversion="{TILED_VERSION}" {grid} {size} '
        f'nextlayerid="3" nextobjectid="{len(ms.objects) + 1}">\n',
        _properties(list(ms.properties), " "),
        f' <tileset firstgid="1" source="../assets/{ts.stem}.tsx"/>\n',
        f' <layer id="1" name="terrain" width="{w}" height="{h}">\n',
        f'  <data encoding="csv">\n{csv}\n</data>\n',
        " </layer>\n",
        ' <objectgroup id="2" name="objects">\n'
        if objects
        else ' <objectgroup id="2" name="objects"/>\n',
        *objects,
        " </objectgroup>\n" if objects else "",
        "</map>\n",
    ]
    path = root / "maps" / f"{ms.name}.tmx"
    path.write_text("".join(out), encoding="utf-8", newline="\n")
    return path


#: Shipped maps that also get a Tiled JSON twin (``.tmj``, the same map saved as JSON).
JSON_TWINS = ("hex_flat",)


def _json_properties(props: list[tuple[str, str, object]]) -> list[dict[str, object]]:
    """Custom properties as Tiled's JSON lists them (enums: a string with propertytype)."""
    out: list[dict[str, object]] = []
    for name, kind, value in sorted(props):
        if kind in ENUMS:
            if value not in ENUMS[kind]:
                raise ValueError(f"{name}={value!r} is not one of {ENUMS[kind]}")
            out.append({"name": name, "propertytype": kind, "type": "string", "value": value})
        else:
            out.append({"name": name, "type": kind, "value": value})
    return out


def _json_object(ms: MapSpec, ts: TilesetSpec, oid: int, obj: Obj) -> dict[str, object]:
    """One object as Tiled 1.8 writes it in JSON (positions in map pixels)."""
    doc: dict[str, object] = {
        "height": 0,
        "id": oid,
        "name": obj.name,
        "rotation": 0,
        "type": obj.cls,
        "visible": True,
        "width": 0,
    }
    if obj.properties:
        doc["properties"] = _json_properties(list(obj.properties))
    if obj.cell is not None:
        x, y = cell_centre(ts, ms.staggerindex, *obj.cell)
        doc.update(point=True, x=x, y=y)
    elif obj.rect is not None:
        if ts.axis is not None:
            raise ValueError(f"{ms.name}: rectangles in cell units need a square map")
        x, y, rw, rh = (v * s for v, s in zip(obj.rect, (ts.width, ts.height) * 2, strict=True))
        doc.update(x=x, y=y, width=rw, height=rh)
    elif obj.polygon:
        if ts.axis is not None:
            raise ValueError(f"{ms.name}: polygons in cell units need a square map")
        px = [(x * ts.width, y * ts.height) for x, y in obj.polygon]
        x0, y0 = px[0]
        doc.update(x=x0, y=y0, polygon=[{"x": x - x0, "y": y - y0} for x, y in px])
    return {k: (int(v) if isinstance(v, float) and v.is_integer() else v) for k, v in doc.items()}


def write_tmj(ms: MapSpec, root: Path = ROOT) -> Path:
    """The map as Tiled JSON (``.tmj``), the twin of :func:`write_tmx`'s ``.tmx``: the same
    tileset file, layers, properties and objects, keys in the order Tiled writes them."""
    ts = TILESETS[ms.tileset]
    rows = read_ascii(ms.name)
    check_map(ms, rows)
    h, w = len(rows), len(rows[0])
    doc: dict[str, object] = {
        "compressionlevel": -1,
        "height": h,
        "infinite": False,
        "layers": [
            {
                "data": [TILE_ID[ch] + 1 for row in rows for ch in row],
                "height": h,
                "id": 1,
                "name": "terrain",
                "opacity": 1,
                "type": "tilelayer",
                "visible": True,
                "width": w,
                "x": 0,
                "y": 0,
            },
            {
                "draworder": "topdown",
                "id": 2,
                "name": "objects",
                "objects": [_json_object(ms, ts, i, o) for i, o in enumerate(ms.objects, 1)],
                "opacity": 1,
                "type": "objectgroup",
                "visible": True,
                "x": 0,
                "y": 0,
            },
        ],
        "nextlayerid": 3,
        "nextobjectid": len(ms.objects) + 1,
        "orientation": "orthogonal" if ts.axis is None else "hexagonal",
        "properties": _json_properties(list(ms.properties)),
        "renderorder": "right-down",
        "tiledversion": TILED_VERSION,
        "tileheight": ts.height,
        "tilesets": [{"firstgid": 1, "source": f"../assets/{ts.stem}.tsx"}],
        "tilewidth": ts.width,
        "type": "map",
        "version": FORMAT_VERSION,
        "width": w,
    }
    if ts.axis is not None:
        doc.update(hexsidelength=ts.side, staggeraxis=ts.axis, staggerindex=ms.staggerindex)
    path = root / "maps" / f"{ms.name}.tmj"
    # The tile data on one line, as Tiled writes it.
    layers: Any = doc["layers"]
    data, layers[0]["data"] = layers[0]["data"], "@DATA@"
    text = json.dumps(doc, indent=1, sort_keys=True)
    text = text.replace('"@DATA@"', "[" + ",".join(map(str, data)) + "]")
    path.write_text(text + "\n", encoding="utf-8", newline="\n")
    return path


# --------------------------------------------------------------------------------------
# A Universal VTT battle map (maps/vtt_room.dd2vtt): two rooms, an inner door (closed), an
# outer door (open) and a pillar, as map makers export them: coordinates in grid squares.
# --------------------------------------------------------------------------------------

VTT_SIZE = (12, 9)  # grid squares
VTT_PPG = 40  # pixels per grid square
#: Walls: the outer ring (a gap at x 4..5 on the south side for the outer door) and the
#: inner wall at x = 6 (a gap at y 4..5 for the inner door).
VTT_WALLS: tuple[tuple[tuple[float, float], ...], ...] = (
    ((4, 8), (1, 8), (1, 1), (11, 1), (11, 8), (5, 8)),
    ((6, 1), (6, 4)),
    ((6, 5), (6, 8)),
)
VTT_OBJECTS: tuple[tuple[tuple[float, float], ...], ...] = (
    ((8, 3), (9, 3), (9, 4), (8, 4), (8, 3)),  # a pillar
)
#: Doors: (bounds, closed).
VTT_DOORS: tuple[tuple[tuple[tuple[float, float], tuple[float, float]], bool], ...] = (
    (((6, 4), (6, 5)), True),
    (((4, 8), (5, 8)), False),
)


def _vtt_picture(pg: Any) -> Any:
    """The room drawn as a map maker would: floor, walls, doors, a pillar, a faint grid."""
    g = VTT_PPG
    w, h = VTT_SIZE[0] * g, VTT_SIZE[1] * g
    surf = pg.Surface((w, h), 0, 32)
    surf.fill((34, 30, 28))
    pg.draw.rect(surf, (176, 150, 112), (1 * g, 1 * g, 5 * g, 7 * g))  # west room
    pg.draw.rect(surf, (150, 160, 170), (6 * g, 1 * g, 5 * g, 7 * g))  # east room
    for x in range(0, w + 1, g):
        pg.draw.line(surf, (90, 84, 78), (x, 0), (x, h - 1))
    for y in range(0, h + 1, g):
        pg.draw.line(surf, (90, 84, 78), (0, y), (w - 1, y))
    for line in VTT_WALLS:
        pg.draw.lines(surf, (20, 18, 16), False, [(x * g, y * g) for x, y in line], 7)
    for line in VTT_OBJECTS:
        pg.draw.polygon(surf, (96, 96, 104), [(x * g, y * g) for x, y in line])
    for ((x0, y0), (x1, y1)), closed in VTT_DOORS:
        if closed:
            pg.draw.line(surf, (140, 80, 36), (x0 * g, y0 * g), (x1 * g, y1 * g), 9)
        else:  # swung open, into the room
            pg.draw.line(surf, (140, 80, 36), (x0 * g, y0 * g), (x0 * g, (y0 - 1) * g), 5)
    return surf


def write_vtt_room(pg: Any, root: Path = ROOT) -> Path:
    """maps/vtt_room.dd2vtt: the room above with its picture as base64 PNG (made with the
    images, like the tileset PNGs, since the PNG bytes depend on the pygame build)."""
    import base64
    import io

    buf = io.BytesIO()
    pg.image.save(_vtt_picture(pg), buf, "room.png")

    def pts(line: tuple[tuple[float, float], ...]) -> list[dict[str, float]]:
        return [{"x": x, "y": y} for x, y in line]

    doc = {
        "format": 0.3,
        "resolution": {
            "map_origin": {"x": 0, "y": 0},
            "map_size": {"x": VTT_SIZE[0], "y": VTT_SIZE[1]},
            "pixels_per_grid": VTT_PPG,
        },
        "line_of_sight": [pts(line) for line in VTT_WALLS],
        "objects_line_of_sight": [pts(line) for line in VTT_OBJECTS],
        "portals": [
            {
                "position": {"x": (a[0] + b[0]) / 2, "y": (a[1] + b[1]) / 2},
                "bounds": pts((a, b)),
                "rotation": 0.0 if a[1] == b[1] else math.pi / 2,
                "closed": closed,
                "freestanding": False,
            }
            for (a, b), closed in VTT_DOORS
        ],
        "environment": {"baked_lighting": True, "ambient_light": "ffffffff"},
        "lights": [
            {
                "position": {"x": 3.5, "y": 4.5},
                "range": 6,
                "intensity": 1,
                "color": "ffffe0b0",
                "shadows": True,
            }
        ],
        "image": base64.b64encode(buf.getvalue()).decode("ascii"),
    }
    path = root / "maps" / "vtt_room.dd2vtt"
    path.write_text(json.dumps(doc, indent=1) + "\n", encoding="utf-8", newline="\n")
    return path


def build(root: Path = ROOT, images: bool = True) -> list[Path]:
    """Write every output file under ``root`` (assets/ and maps/); return their paths.

    ``images=False`` skips the PNGs (and pygame): the tests rebuild the text files into a
    temporary folder and compare them with the committed ones.
    """
    (root / "assets").mkdir(parents=True, exist_ok=True)
    (root / "maps").mkdir(parents=True, exist_ok=True)
    written: list[Path] = []
    pg: Any = None
    if images:
        os.environ.setdefault("SDL_VIDEODRIVER", "dummy")
        os.environ.setdefault("SDL_AUDIODRIVER", "dummy")
        os.environ.setdefault("PYGAME_HIDE_SUPPORT_PROMPT", "1")
        import pygame as pg

        pg.init()
    for ts in TILESETS.values():
        if pg is not None:
            written.append(draw_tileset(pg, ts, root))
        written.append(write_tsx(ts, root))
    written.append(write_project(root))
    for ms in MAP_SPECS:
        written.append(write_tmx(ms, root))
        if ms.name in JSON_TWINS:
            written.append(write_tmj(ms, root))
    if pg is not None:
        written.append(write_vtt_room(pg, root))
        pg.quit()
    return written


def main(argv: list[str] | None = None) -> int:
    import argparse

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=ROOT, help="root to write into (default: repo)")
    ap.add_argument("--no-images", action="store_true", help="skip drawing the tileset PNGs")
    args = ap.parse_args(argv)
    for p in build(args.out, images=not args.no_images):
        print("wrote", p)
    for ms in MAP_SPECS:
        rows = read_ascii(ms.name)
        counts: dict[str, int] = {}
        for row in rows:
            for ch in row:
                counts[BY_CHAR[ch].move] = counts.get(BY_CHAR[ch].move, 0) + 1
        print(f"{ms.name}: {len(rows[0])}x{len(rows)} {dict(sorted(counts.items()))}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
