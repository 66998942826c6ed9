"""The map renderer against Tiled's own renderer (tmxrasterizer), plus its fallbacks.

Pixel comparison: a pixel differs when any of its R, G, B, A channels differs by more than
TOLERANCE (8 of 255); pixels that are fully transparent in both images count as equal
(their colour is undefined). The whole image is compared, transparent pixels included.

tmxrasterizer's canvas is the map's pixel size grown by every tile layer's offset (libtiled
``Map::adjustBoundingRectForOffsetsAndImageLayers``), while tacgrid keeps the map's own
size: the comparison places our image at the reference's map origin and first checks that
the reference's extra size is exactly what the offsets explain. Image layers are hidden in
the reference (tacgrid does not draw them); object layers are hidden for the tile-layer
tests (``objects=False`` on our side) and shown for the object tests, where ours draws them
too. Tiled's tmxrasterizer (1.8) draws no background colour, so ours is turned off for the
comparison.
"""

from __future__ import annotations

import dataclasses
import math
import os
import shutil
import subprocess
import sys
from pathlib import Path
from xml.etree import ElementTree as ET

import numpy as np
import pygame
import pytest
import tmxtext
from conftest import CORPUS, ROOT

from engine.errors import ArgumentError
from engine.grid import Grid
from engine.mapmodel import MODES, MapModel, Terrain
from engine.viewer.render import (
    TERRAIN_COLOURS,
    load_for_render,
    render_map,
    render_to_file,
    tile_anchors,
)

TOLERANCE = 8
MAX_DIFFERENT = 0.01
TMXRASTERIZER = shutil.which("tmxrasterizer")
needs_tiled = pytest.mark.skipif(
    TMXRASTERIZER is None,
    reason="tmxrasterizer (Debian package 'tiled') is not on PATH; CI installs it",
)

SHIPPED = sorted((ROOT / "maps").glob("*.tmx"))
HEX_CORPUS = [
    "tiled-examples/hexagonal-mini.tmx",
    "tiled-examples/test_hexagonal_tile_60x60x30.tmx",  # every flip and hex rotation
    "pytiled-parser/map_tests/hexagonal/map.tmx",
]
OTHER_CORPUS = [
    "tiled-examples/orthogonal-outside.tmx",
    "tiled-examples/isometric_grass_and_water.tmx",
    "tiled-examples/isometric_staggered_grass_and_water.tmx",  # infinite, cropped
    "tiled-examples/rpg/island.tmx",  # external tileset, animations, three layers
    "tiled-examples/desert.tmx",  # margin and spacing
    "tiled-examples/sewers.tmx",  # transparent colour
    "tiled-examples/forest/forest.tmx",  # image collection, paletted PNG with tRNS
]


# --------------------------------------------------------------------------- helpers


def rgba(surface: pygame.Surface) -> np.ndarray:
    """(height, width, 4) int16 RGBA array of a surface."""
    rgb = pygame.surfarray.array3d(surface)
    alpha = pygame.surfarray.array_alpha(surface)
    return np.concatenate([rgb, alpha[..., None]], axis=2).transpose(1, 0, 2).astype(np.int16)


def different(ours: np.ndarray, ref: np.ndarray) -> np.ndarray:
    """Boolean mask of the pixels that differ (see the module docstring)."""
    clear = (ours[..., 3] == 0) & (ref[..., 3] == 0)
    return (np.abs(ours - ref).max(axis=2) > TOLERANCE) & ~clear


@pytest.fixture(scope="session")
def ref_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("tmxrasterizer")


def reference(path: Path, ref_dir: Path, objects: bool = False) -> np.ndarray:
    """tmxrasterizer's image of the map's tile layers, and of its object layers with
    ``objects`` (cached for the session)."""
    key = str(abs(hash(str(path.resolve())))) + ("-objects" if objects else "")
    out = ref_dir / (key + ".png")
    if not out.exists():
        root = ET.parse(path).getroot()
        tile_names = {el.get("name", "") for el in root.iter("layer")}
        hide = []
        for el in root.iter():
            if el.tag == "imagelayer" or (el.tag == "objectgroup" and not objects):
                name = el.get("name", "")
                # tmxrasterizer hides by name: that must not hide a tile layer too.
                assert name not in tile_names, f"{path}: layer name {name!r} is ambiguous"
                hide += ["--hide-layer", name]
        assert TMXRASTERIZER is not None
        env = {**os.environ, "QT_QPA_PLATFORM": "offscreen"}
        run = subprocess.run(
            [TMXRASTERIZER, *hide, str(path), str(out)],
            env=env,
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert run.returncode == 0 and out.exists(), run.stderr
    return rgba(pygame.image.load(str(out)))


def compare(path: Path, ref_dir: Path, objects: bool = False) -> float:
    """Fraction of differing pixels between our render and tmxrasterizer's."""
    model, tmx = load_for_render(path)
    ours = rgba(render_map(model, tmx, background=False, objects=objects))
    ref = reference(path, ref_dir, objects)
    h, w = ours.shape[:2]
    assert (w, h) == model.grid.pixel_size()
    # tmxrasterizer grows its canvas by the tile layers' offsets; nothing else may differ.
    offsets = [layer.offset for layer in model.layers] or [(0.0, 0.0)]
    left = max(0, *(math.ceil(-x) for x, _ in offsets))
    top = max(0, *(math.ceil(-y) for _, y in offsets))
    right = max(0, *(math.ceil(x) for x, _ in offsets))
    bottom = max(0, *(math.ceil(y) for _, y in offsets))
    assert ref.shape[:2] == (h + top + bottom, w + left + right), (
        f"tmxrasterizer canvas {ref.shape[1]}x{ref.shape[0]} vs map {w}x{h} "
        f"with offset margins {(left, top, right, bottom)}"
    )
    return float(different(ours, ref[top : top + h, left : left + w]).mean())


def tile_sheet(path: Path, tw: int, th: int, n: int = 4) -> None:
    """A sheet of n asymmetric tiles (a corner marker, a slanted line, a half-clear dot)."""
    sheet = pygame.Surface((tw * n, th), pygame.SRCALPHA, 32)
    sheet.fill((0, 0, 0, 0))
    for i in range(n):
        r = pygame.Rect(i * tw, 0, tw, th)
        base = [(200, 60, 60), (60, 160, 60), (60, 80, 200), (200, 180, 40)][i % 4]
        pygame.draw.rect(sheet, (*base, 255), r.inflate(-2, -2))
        pygame.draw.rect(sheet, (255, 255, 255, 255), (r.x + 2, r.y + 2, tw // 3, th // 4))
        pygame.draw.line(
            sheet, (0, 0, 0, 255), (r.x + 1, r.bottom - 3), (r.right - 3, r.centery), 2
        )
        pygame.draw.circle(
            sheet, (255, 255, 255, 128), (r.x + tw * 3 // 4, r.y + th * 3 // 4), max(2, tw // 6)
        )
    pygame.image.save(sheet, str(path))


def write_map(
    path: Path,
    orientation: str,
    size: tuple[int, int],
    tile: tuple[int, int],
    layers: list[tuple[str, list[list[int]], str]],
    *,
    sheet_tile: tuple[int, int] | None = None,
    hexside: int = 0,
    stagger: tuple[str, str] = ("y", "odd"),
    tileoffset: tuple[int, int] = (0, 0),
    renderorder: str = "right-down",
    map_attrs: str = "",
) -> Path:
    """A .tmx with a generated 4-tile sheet (sheet_tile may differ from the grid's tile)."""
    stw, sth = sheet_tile or tile
    sheet = path.parent / f"sheet_{stw}x{sth}.png"
    tile_sheet(sheet, stw, sth)
    extra = ""
    if orientation in ("hexagonal", "staggered"):
        extra = f' staggeraxis="{stagger[0]}" staggerindex="{stagger[1]}"'
        if orientation == "hexagonal":
            extra += f' hexsidelength="{hexside}"'
    body = ""
    for i, (name, rows, attrs) in enumerate(layers, start=1):
        data = ",\n".join(",".join(str(g) for g in row) for row in rows)
        body += (
            f'<layer id="{i}" name="{name}" width="{size[0]}" height="{size[1]}"{attrs}>'
            f'<data encoding="csv">{data}</data></layer>\n'
        )
    path.write_text(
        '<?xml version="1.0" encoding="UTF-8"?>\n'
        f'<map version="1.8" tiledversion="1.8.2" orientation="{orientation}" '
        f'renderorder="{renderorder}" width="{size[0]}" height="{size[1]}" '
        f'tilewidth="{tile[0]}" tileheight="{tile[1]}"{extra}{map_attrs} infinite="0" '
        'nextlayerid="9" nextobjectid="1">\n'
        f'<tileset firstgid="1" name="t" tilewidth="{stw}" tileheight="{sth}" tilecount="4" '
        f'columns="4"><tileoffset x="{tileoffset[0]}" y="{tileoffset[1]}"/>'
        f'<image source="{sheet.name}" width="{stw * 4}" height="{sth}"/></tileset>\n'
        f"{body}</map>\n",
        encoding="utf-8",
    )
    return path


def every_flag(width: int, height: int) -> list[list[int]]:
    """Tiles 1-4 with all sixteen combinations of Tiled's flag bits, cycling."""
    return [
        [(((r * width + c) % 4) + 1) | (((r * width + c) % 16) << 28) for c in range(width)]
        for r in range(height)
    ]


# --------------------------------------------------------------------------- tmxrasterizer


@needs_tiled
@pytest.mark.parametrize("path", SHIPPED, ids=lambda p: p.name)
def test_shipped_maps_match_tiled(path: Path, ref_dir: Path) -> None:
    assert compare(path, ref_dir) <= MAX_DIFFERENT


@needs_tiled
@pytest.mark.corpus
@pytest.mark.parametrize("name", HEX_CORPUS + OTHER_CORPUS)
def test_corpus_maps_match_tiled(name: str, ref_dir: Path) -> None:
    assert compare(CORPUS / name, ref_dir) <= MAX_DIFFERENT


GENERATED = {
    # name: (orientation, grid tile, sheet tile, extra keyword arguments)
    "orthogonal": ("orthogonal", (32, 32), (32, 32), {}),
    "ortho_oversized": ("orthogonal", (32, 32), (40, 48), {"tileoffset": (3, -5)}),
    "ortho_left_up": ("orthogonal", (32, 32), (40, 48), {"renderorder": "left-up"}),
    "isometric": ("isometric", (64, 32), (64, 40), {}),
    "isometric_odd_width": ("isometric", (33, 16), (33, 24), {}),
    "hex_y_odd": ("hexagonal", (32, 36), (32, 36), {"hexside": 18}),
    "hex_y_even": ("hexagonal", (32, 36), (32, 36), {"hexside": 18, "stagger": ("y", "even")}),
    "hex_x_odd": ("hexagonal", (36, 32), (36, 32), {"hexside": 18, "stagger": ("x", "odd")}),
    "hex_x_even": ("hexagonal", (36, 32), (36, 32), {"hexside": 18, "stagger": ("x", "even")}),
    "hex_15x13": ("hexagonal", (15, 13), (15, 13), {"hexside": 6}),
    "staggered_y": ("staggered", (64, 32), (64, 40), {}),
    "staggered_x_even": ("staggered", (64, 32), (64, 40), {"stagger": ("x", "even")}),
}


@needs_tiled
@pytest.mark.parametrize("name", sorted(GENERATED))
def test_flips_opacity_offsets_match_tiled(name: str, tmp_path: Path, ref_dir: Path) -> None:
    """Every flag combination, a half-opaque offset layer and a hidden one, per layout."""
    orientation, tile, sheet_tile, kwargs = GENERATED[name]
    w, h = 8, 6
    sparse = [[((c + r) % 4) + 1 if (c * r) % 3 == 0 else 0 for c in range(w)] for r in range(h)]
    layers = [
        ("ground", every_flag(w, h), ""),
        ("over", sparse, ' opacity="0.6" offsetx="5" offsety="-7"'),
        ("hidden", sparse, ' visible="0"'),
    ]
    path = write_map(
        tmp_path / f"{name}.tmx", orientation, (w, h), tile, layers, sheet_tile=sheet_tile, **kwargs
    )
    assert compare(path, ref_dir) <= MAX_DIFFERENT


@needs_tiled
def test_isometric_odd_tile_height_lands_where_tiled_puts_it(tmp_path: Path, ref_dir: Path) -> None:
    # Tiled's loop puts such tiles on half pixels and rounds them; no flips here (see
    # render.py: flipped tiles on half pixels are resampled by Qt and not matched).
    rows = [[((c + r) % 4) + 1 for c in range(8)] for r in range(6)]
    layers = [("ground", rows, ""), ("over", rows, ' opacity="0.5" offsetx="3" offsety="2"')]
    path = write_map(
        tmp_path / "iso_odd.tmx", "isometric", (8, 6), (31, 17), layers, sheet_tile=(31, 21)
    )
    assert compare(path, ref_dir) == 0.0


# --------------------------------------------------------------------------- objects

SHAPES = """
<objectgroup id="7" name="shapes" color="#2080ff" opacity="0.8">
 <object id="1" name="box" type="exit" x="40" y="30" width="70" height="45"/>
 <object id="2" name="null" x="150" y="40"/>
 <object id="3" name="oval" x="30" y="100" width="90" height="50"><ellipse/></object>
 <object id="4" name="flat oval" x="140" y="90" width="60" height="0"><ellipse/></object>
 <object id="5" name="poly" x="150" y="120"><polygon points="0,0 60,-10 70,40 10,55"/></object>
 <object id="6" name="line" x="20" y="170"><polyline points="0,0 50,20 120,5"/></object>
 <object id="8" name="turned" x="200" y="20" width="40" height="20" rotation="30"/>
</objectgroup>
<objectgroup id="8" name="pins" draworder="topdown">
 <object id="9" name="a" type="spawn" x="60" y="90"><point/></object>
 <object id="10" name="b" type="spawn" x="100" y="60"><point/></object>
</objectgroup>
"""


def objects_map(tmp_path: Path, orientation: str, tile: tuple[int, int], **kwargs: object) -> Path:
    """A generated map with a tile layer, an object layer of every shape, a second tile
    layer over it and a layer of points on top."""
    w, h = 8, 6
    ground = [[((c + r) % 4) + 1 for c in range(w)] for r in range(h)]
    over = [[1 if (c + r) % 5 == 0 else 0 for c in range(w)] for r in range(h)]
    path = write_map(
        tmp_path / f"objects_{orientation}.tmx",
        orientation,
        (w, h),
        tile,
        [("ground", ground, ""), ("over", over, ' opacity="0.5"')],
        **kwargs,  # type: ignore[arg-type]
    )
    text = path.read_text(encoding="utf-8")
    first, rest = text.split('<layer id="2"', 1)
    shapes, pins = SHAPES.split('<objectgroup id="8"')
    text = first + shapes + '<layer id="2"' + rest
    text = text.replace("</map>", '<objectgroup id="8"' + pins + "</map>")
    path.write_text(text, encoding="utf-8")
    return path


@needs_tiled
@pytest.mark.parametrize("path", SHIPPED, ids=lambda p: p.name)
def test_shipped_maps_with_their_objects_match_tiled(path: Path, ref_dir: Path) -> None:
    model, _ = load_for_render(path)
    assert model.objects, "every shipped map has objects (spawns at least)"
    assert compare(path, ref_dir, objects=True) <= MAX_DIFFERENT


@needs_tiled
@pytest.mark.parametrize(
    ("orientation", "tile", "kwargs"),
    [
        ("orthogonal", (32, 32), {}),
        ("hexagonal", (32, 36), {"hexside": 18}),
        ("isometric", (64, 32), {}),
    ],
    ids=["orthogonal", "hexagonal", "isometric"],
)
def test_every_object_shape_matches_tiled(
    orientation: str, tile: tuple[int, int], kwargs: dict, tmp_path: Path, ref_dir: Path
) -> None:
    path = objects_map(tmp_path, orientation, tile, **kwargs)
    model, tmx = load_for_render(path)
    assert {o.shape for o in model.objects} >= {
        "rectangle",
        "ellipse",
        "polygon",
        "polyline",
        "point",
    }
    plain = rgba(render_map(model, tmx, background=False, objects=False))
    drawn = rgba(render_map(model, tmx, background=False))
    assert different(plain, drawn).mean() > 0.02  # the objects are really drawn
    assert compare(path, ref_dir, objects=True) <= MAX_DIFFERENT


@needs_tiled
@pytest.mark.parametrize("scale", [1.5, 0.5, 0.25, 0.125])
@pytest.mark.parametrize("path", SHIPPED, ids=lambda p: p.name)
def test_scaled_objects_match_tiled(path: Path, scale: float, tmp_path: Path) -> None:
    """Scaled (tmxrasterizer -s): the outlines stay 2 output pixels wide (cosmetic pens),
    shapes and pins scale."""
    ref = tmp_path / "ref.png"
    run = subprocess.run(
        [str(TMXRASTERIZER), "-s", str(scale), str(path), str(ref)],
        env={**os.environ, "QT_QPA_PLATFORM": "offscreen"},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert run.returncode == 0 and ref.exists(), run.stderr
    want = rgba(pygame.image.load(str(ref)))
    model, tmx = load_for_render(path)
    got = rgba(render_map(model, tmx, scale=scale, background=False))
    assert got.shape == want.shape
    assert different(got, want).mean() <= MAX_DIFFERENT


def test_objects_are_drawn_in_their_place_and_can_be_left_out(tmp_path: Path) -> None:
    path = objects_map(tmp_path, "orthogonal", (32, 32))
    model, tmx = load_for_render(path)
    plain = render_map(model, tmx, objects=False)
    drawn = render_map(model, tmx)
    # The rectangle "box" (40, 30, 70x45): grey-blue outline on its edge, a tinted inside.
    edge, inside = drawn.get_at((40, 50)), drawn.get_at((75, 52))
    assert abs(edge.b - round(0x20 * 0.2 + 0xFF * 0.8)) <= 40 and edge.r < 80
    assert inside != plain.get_at((75, 52))
    # The pin of point "a" (60, 90): its opaque dot 20 pixels above the point.
    dot = drawn.get_at((60, 70))
    assert (dot.r, dot.g, dot.b) == (160, 160, 164)
    # A pytmx map without the document's tree: pytmx's object layers are drawn, over the
    # tile layers.
    model2, tmx2 = load_for_render(path)
    again = render_map(model2, dataclasses.replace(tmx2, root=None))
    assert again.get_at((60, 70))[:3] == (160, 160, 164)
    assert again.get_at((40, 50)) == edge
    # A scaled area is the same rectangle of the scaled whole picture.
    whole = rgba(render_map(model, tmx, scale=1.5))
    part = rgba(render_map(model, tmx, scale=1.5, area=(64, 40, 100, 90)))
    assert np.array_equal(whole[40:130, 64:164], part)


# --------------------------------------------------------------------------- without Tiled


def test_flips_transform_the_tile_image(tmp_path: Path) -> None:
    """H mirrors left-right, V top-bottom, D transposes first (Tiled's order)."""
    tw = th = 8
    tile = np.zeros((th, tw, 4), dtype=np.uint8)
    yy, xx = np.mgrid[0:th, 0:tw]
    tile[..., 0], tile[..., 1], tile[..., 2], tile[..., 3] = xx * 30, yy * 30, 99, 255
    sheet = pygame.Surface((tw, th), pygame.SRCALPHA, 32)
    pygame.surfarray.blit_array(sheet, tile[..., :3].transpose(1, 0, 2))
    pygame.image.save(sheet, str(tmp_path / "one.png"))
    rows = [[1 | (f << 29) for f in range(8)]]  # H, V, D bits = 8, 4, 2 -> << 28
    path = tmp_path / "flips.tmx"
    path.write_text(
        '<?xml version="1.0"?><map version="1.8" orientation="orthogonal" renderorder="right-down" '
        f'width="8" height="1" tilewidth="{tw}" tileheight="{th}" infinite="0">'
        f'<tileset firstgid="1" name="t" tilewidth="{tw}" tileheight="{th}" tilecount="1" '
        f'columns="1"><image source="one.png" width="{tw}" height="{th}"/></tileset>'
        '<layer id="1" name="g" width="8" height="1"><data encoding="csv">'
        + ",".join(str(g) for g in rows[0])
        + "</data></layer></map>",
        encoding="utf-8",
    )
    model, tmx = load_for_render(path)
    out = rgba(render_map(model, tmx))
    for col in range(8):
        flags = col << 1
        want = tile.astype(np.int16)
        if flags & 2:
            want = want.transpose(1, 0, 2)
        if flags & 8:
            want = want[:, ::-1]
        if flags & 4:
            want = want[::-1]
        got = out[:, col * tw : (col + 1) * tw]
        assert np.array_equal(got, want), f"flags {flags:#x}"


def test_hex_half_turn_is_both_mirrors(tmp_path: Path) -> None:
    # Anti-diagonal (60 degrees) + hex bit (120 degrees) on a hex map = a half turn.
    rows = [[1, 1 | 0x30000000, 1 | 0xC0000000]]
    path = write_map(
        tmp_path / "h.tmx", "hexagonal", (3, 1), (32, 36), [("g", rows, "")], hexside=18
    )
    model, tmx = load_for_render(path)
    out = rgba(render_map(model, tmx))
    half_turn = out[:, 32:64]
    both_mirrors = out[:, 64:96]
    assert np.array_equal(half_turn, both_mirrors)
    assert not np.array_equal(half_turn, out[:, 0:32])


def test_image_that_cannot_be_decoded_falls_back_to_terrain_colours(tmp_path: Path) -> None:
    rows = [[1, 2, 0], [3, 4, 1]]
    path = write_map(tmp_path / "m.tmx", "orthogonal", (3, 2), (32, 32), [("g", rows, "")])
    (tmp_path / "sheet_32x32.png").write_bytes(b"not a png")  # exists, but is not an image
    model, tmx = load_for_render(path)
    surface = render_map(model, tmx)
    assert surface.get_size() == (96, 64)
    # No terrain properties: every painted cell walks; the empty cell stays transparent.
    assert tuple(surface.get_at((16, 16)))[:3] == TERRAIN_COLOURS["walk"]
    assert surface.get_at((80, 16)).a == 0
    blank = render_map(model, tmx, terrain_fallback=False)
    assert pygame.surfarray.array_alpha(blank).max() == 0


@pytest.mark.parametrize(
    "kwargs",
    [
        {},
        {"orientation": "hexagonal", "tile": (28, 32), "hexside": 16},
        {"orientation": "hexagonal", "tile": (32, 28), "hexside": 16, "stagger": ("x", "even")},
        {"orientation": "isometric", "tile": (64, 32)},
        {"orientation": "staggered", "tile": (64, 32)},
    ],
    ids=["square", "hex-pointy", "hex-flat", "isometric", "staggered"],
)
def test_map_without_images_draws_each_cell_in_its_terrain_colour(
    tmp_path: Path, kwargs: dict
) -> None:
    rows = ["..#~^", "H_Oa "]  # tmxtext's tileset has no image at all
    path = tmxtext.write(tmp_path / "t.tmx", rows, **kwargs)
    model, tmx = load_for_render(path)
    surface = render_map(model, tmx)
    assert surface.get_size() == model.grid.pixel_size()
    for r, row in enumerate(rows):
        for c, ch in enumerate(row):
            x, y = model.grid.cell_center((c, r))
            pixel = surface.get_at((int(x), int(y)))
            if ch == " ":
                assert pixel.a == 0
            else:
                move = tmxtext.LEGEND[ch]["move"]
                assert tuple(pixel) == (*TERRAIN_COLOURS[move], 255), (c, r, move)


def test_every_mode_has_a_distinct_colour() -> None:
    assert set(TERRAIN_COLOURS) == set(MODES)
    assert len(set(TERRAIN_COLOURS.values())) == len(MODES)


def test_model_without_tile_layers_is_drawn_from_its_terrain() -> None:
    grid = Grid("hexagonal", 4, 3, 28, 32, hex_side=16)
    model = MapModel.uniform(grid, Terrain(name="lake", move="swim"))
    surface = render_map(model, None)
    x, y = grid.cell_center((2, 1))
    assert tuple(surface.get_at((int(x), int(y))))[:3] == TERRAIN_COLOURS["swim"]


def test_background_colour_fills_the_canvas(tmp_path: Path) -> None:
    rows = [[1, 0]]
    path = write_map(
        tmp_path / "bg.tmx",
        "orthogonal",
        (2, 1),
        (32, 32),
        [("g", rows, "")],
        map_attrs=' backgroundcolor="#80102030"',
    )
    model, tmx = load_for_render(path)
    assert tuple(render_map(model, tmx).get_at((48, 16))) == (0x10, 0x20, 0x30, 0x80)
    assert render_map(model, tmx, background=False).get_at((48, 16)).a == 0


def test_layer_tint_multiplies_colours(tmp_path: Path) -> None:
    """Tiled's tint, for when the model carries one (``tint`` on the layer)."""
    from dataclasses import dataclass, replace

    rows = [[1]]
    path = write_map(tmp_path / "tint.tmx", "orthogonal", (1, 1), (32, 32), [("g", rows, "")])
    model, tmx = load_for_render(path)
    plain = render_map(model, tmx).get_at((10, 20))

    @dataclass(frozen=True)
    class Tinted:
        gids: np.ndarray
        flags: np.ndarray
        visible: bool = True
        opacity: float = 1.0
        offset: tuple[float, float] = (0.0, 0.0)
        tint: str = "#ff8000"

    layer = model.layers[0]
    tinted = replace(model, layers=(Tinted(layer.gids, layer.flags),))  # type: ignore[arg-type]
    got = render_map(tinted, tmx).get_at((10, 20))
    assert (got.r, got.g, got.b) == (plain.r, round(plain.g * 128 / 255), 0)


def test_render_to_file_writes_a_png_of_the_map_size(tmp_path: Path) -> None:
    src = ROOT / "maps" / "hex_pointy.tmx"
    out = tmp_path / "hex.png"
    size = render_to_file(src, out)
    model, _ = load_for_render(src)
    assert size == model.grid.pixel_size()
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert pygame.image.load(str(out)).get_size() == size
    w, h = size
    assert render_to_file(src, tmp_path / "x2.png", scale=2) == (2 * w, 2 * h)
    assert render_to_file(src, tmp_path / "half.png", scale=0.5) == (round(w / 2), round(h / 2))


@pytest.mark.parametrize("alpha", [True, False])
def test_png_encoding_is_lossless_for_other_decoders(alpha: bool) -> None:
    """engine.viewer.png encodes its own PNGs: pygame (libpng) and Pillow decode them to
    the very pixels drawn, with and without per-pixel alpha."""
    import io

    from PIL import Image

    from engine.errors import WriteError
    from engine.viewer.png import png_bytes

    rng = np.random.default_rng(5)
    surf = pygame.Surface((37, 23), pygame.SRCALPHA if alpha else 0)
    pixels = rng.integers(0, 256, size=(37, 23, 3), dtype=np.uint8)
    pixels[5:30, 4:9] = (10, 200, 30)  # a flat run, as tiles have
    pygame.surfarray.blit_array(surf, pixels)
    if alpha:
        pygame.surfarray.pixels_alpha(surf)[:] = rng.integers(0, 256, size=(37, 23))
    data = png_bytes(surf)
    back = pygame.image.load(io.BytesIO(data))
    assert back.get_size() == (37, 23)
    assert (pygame.surfarray.array3d(back) == pixels).all()
    im = Image.open(io.BytesIO(data))
    assert im.mode == ("RGBA" if alpha else "RGB")
    want = np.asarray(Image.frombytes(im.mode, (37, 23), pygame.image.tobytes(surf, im.mode)))
    assert (np.asarray(im) == want).all()
    if alpha:
        assert (pygame.surfarray.array_alpha(back) == pygame.surfarray.array_alpha(surf)).all()
    with pytest.raises(WriteError, match="0x4 pixels"):
        png_bytes(pygame.Surface((0, 4)))


@pytest.mark.parametrize("threads", [1, 2, 3])
def test_png_segments_join_into_one_stream_whatever_the_threads(
    threads: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An image of many deflate segments (engine.viewer.png.SEGMENT made small), made on 1
    to 3 threads: the same bytes every time, one valid zlib stream (its checksum checked by
    zlib), and the very pixels back in pygame and Pillow."""
    import io
    import zlib

    from PIL import Image

    from engine.viewer import png

    rng = np.random.default_rng(8)
    surf = pygame.Surface((211, 97))
    pixels = rng.integers(0, 256, size=(211, 97, 3), dtype=np.uint8)
    pixels[:, 40:70] = (90, 60, 200)  # flat rows: matches reach back into the last segment
    pygame.surfarray.blit_array(surf, pixels)
    monkeypatch.setattr(png, "SEGMENT", 5000)  # 7 rows a segment: 14 segments
    monkeypatch.setattr(png, "THREADS", 1)
    one = png.png_bytes(surf)
    monkeypatch.setattr(png, "THREADS", threads)
    data = png.png_bytes(surf)
    assert data == one
    idat = data[data.index(b"IDAT") + 4 : data.index(b"IEND") - 8]
    raw = zlib.decompress(idat)  # raises on a bad stream or checksum
    assert len(raw) == 97 * (211 * 3 + 1)
    assert (pygame.surfarray.array3d(pygame.image.load(io.BytesIO(data))) == pixels).all()
    im = Image.open(io.BytesIO(data))
    assert (np.asarray(im) == pixels.transpose(1, 0, 2)).all()


def test_a_failed_png_segment_fails_the_encoding(monkeypatch: pytest.MonkeyPatch) -> None:
    """Out of memory in a deflate thread is raised to the caller, not a truncated file."""
    from engine.viewer import png

    calls = []

    def segment(self: object, data: bytes, primer: bytes, last: bool) -> bytes:
        calls.append(len(data))
        if len(calls) == 3:
            raise MemoryError
        return b""

    monkeypatch.setattr(png, "SEGMENT", 1000)
    monkeypatch.setattr(png, "THREADS", 2)
    monkeypatch.setattr(png._Deflater, "_segment", segment)
    with pytest.raises(MemoryError):
        png.png_bytes(pygame.Surface((50, 200)))


@pytest.mark.parametrize("scale", [0, -1, float("nan"), "big"])
def test_render_to_file_refuses_a_bad_scale(tmp_path: Path, scale: object) -> None:
    with pytest.raises(ArgumentError, match="scale"):
        render_to_file(ROOT / "maps" / "chase.tmx", tmp_path / "x.png", scale=scale)  # type: ignore[arg-type]


def test_render_to_file_names_an_unwritable_output(tmp_path: Path) -> None:
    with pytest.raises(ArgumentError, match="cannot write"):
        render_to_file(ROOT / "maps" / "chase.tmx", tmp_path / "missing" / "x.png")


def test_odd_isometric_anchors_follow_tiled_not_the_floor(tmp_path: Path) -> None:
    # Cell (0, 0) of a 31x17 isometric map: Tiled's loop puts the tile's bottom-left one
    # pixel right of and below Grid.cell_origin + (0, tile height).
    grid = Grid("isometric", 8, 6, 31, 17)
    xs, ys = tile_anchors(grid, np.array([0, 1]), np.array([0, 0]))
    ox, oy = grid.cell_origin((0, 0))
    assert (int(xs[0]), int(ys[0])) == (ox + 1, oy + 17 + 1)
    assert (int(xs[1]), int(ys[1])) == (
        grid.cell_origin((1, 0))[0],
        grid.cell_origin((1, 0))[1] + 18,
    )


def test_engine_never_imports_pygame() -> None:
    code = (
        "import sys, engine.cli, engine.tiled, engine.search, engine.movement;"
        "engine.tiled.load_map('maps/encounter.tmx');"
        "assert 'pygame' not in sys.modules, 'pygame imported'"
    )
    run = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=60
    )
    assert run.returncode == 0, run.stderr
