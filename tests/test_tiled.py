"""The Tiled reader: text-drawn maps, files written here, broken files, and (the `corpus`
suite, where ../shared/tiled-corpus is beside the checkout) Tiled files made elsewhere."""

from __future__ import annotations

import base64
import json
import struct
import zlib
from pathlib import Path

import numpy as np
import pytest
import tmxtext
from conftest import CORPUS

from engine.errors import MapError
from engine.tiled import load_map

CORPUS_MAPS = sorted(CORPUS.rglob("*.tmx"))
# Files in the corpus that are broken on purpose (Tiled's own error tests).
EXPECTED_ERRORS = {
    "tile_image_not_found_in_tileset.tmx": "hexmini_typo.png' not found",
    "tileset_image_not_found_in_map.tmx": "isometric_grass_and_water_typo.png' not found",
    "tileset_image_not_found_in_tileset.tmx": "tmw_desert_spacing_typo.png' not found",
    "tileset_not_found.tmx": "tileset_image_not_found_in_tileset_typo.tsx' not found",
}


@pytest.mark.corpus
def test_corpus_is_there() -> None:
    assert len(CORPUS_MAPS) >= 40


@pytest.mark.corpus
@pytest.mark.parametrize("path", CORPUS_MAPS, ids=lambda p: str(p.relative_to(CORPUS)))
def test_corpus_map_loads_or_fails_in_one_line(path: Path) -> None:
    if path.name in EXPECTED_ERRORS:
        with pytest.raises(MapError) as err:
            load_map(path)
        msg = str(err.value)
        assert "\n" not in msg and str(path) in msg and EXPECTED_ERRORS[path.name] in msg
        return
    m = load_map(path)
    assert m.terrain_ids.shape == (m.height, m.width)
    assert sum(m.mode_counts().values()) == m.width * m.height


@pytest.mark.corpus
def test_every_layer_encoding_gives_the_same_cells() -> None:
    base = load_map(CORPUS / "pytiled-parser/layer_tests/b64/map.tmx")
    for name in ("b64_gzip", "b64_zlib", "b64_zstd", "all_layer_types"):
        other = load_map(CORPUS / f"pytiled-parser/layer_tests/{name}/map.tmx")
        assert np.array_equal(base.layers[0].gids, other.layers[0].gids), name


@pytest.mark.corpus
def test_infinite_map_with_float_offsets_is_cropped_to_its_chunks() -> None:
    m = load_map(CORPUS / "pytiled-parser/layer_tests/infinite_map/map.tmx")
    assert (m.width, m.height) == (8, 8)
    assert any("infinite" in n for n in m.notes)
    assert any(
        lay.offset != (0.0, 0.0) and not float(lay.offset[0]).is_integer() for lay in m.layers
    )


@pytest.mark.corpus
def test_template_objects_are_resolved() -> None:
    m = load_map(CORPUS / "pytiled-parser/map_tests/template/map.tmx")
    assert m.objects and all("template" not in o.properties for o in m.objects)
    # The template gives the object its size.
    assert any(o.width > 0 for o in m.objects)


@pytest.mark.corpus
def test_object_shapes_are_told_apart() -> None:
    m = load_map(CORPUS / "pytiled-parser/layer_tests/all_layer_types/map.tmx")
    shapes = {o.shape for o in load_map(CORPUS / "tiled-tests/data/mapobject.tmx").objects}
    assert m is not None and shapes
    m2 = load_map(CORPUS / "tiled-examples/sticker-knight/map/sandbox.tmx")
    kinds = {o.shape for o in m2.objects}
    assert "tile" in kinds


@pytest.mark.corpus
def test_hex_rotation_bit_is_stripped() -> None:
    m = load_map(CORPUS / "tiled-examples/test_hexagonal_tile_60x60x30.tmx")
    lay = m.layers[0]
    assert int(lay.gids.max()) < 0x10000000
    assert (lay.flags & 0x1).any(), "the 120-degree bit is kept as a flag"


# --------------------------------------------------------------------------- drawn maps

DRAWING = [
    "..,,##~~",
    ".^H.#_O.",
    "a.....~.",
]


@pytest.mark.parametrize("encoding", tmxtext.ENCODINGS)
def test_cells_match_the_drawing(tmp_path: Path, encoding: str) -> None:
    m = load_map(tmxtext.write(tmp_path / "m.tmx", DRAWING, encoding=encoding))
    for r, row in enumerate(DRAWING):
        for c, ch in enumerate(row):
            t = m.terrain_at((c, r))
            assert t.move == tmxtext.LEGEND[ch]["move"], (c, r, ch)
            assert t.name == tmxtext.LEGEND[ch]["terrain"]
    counts = m.mode_counts()
    assert counts["walk"] == sum(row.count(".") + row.count(",") for row in DRAWING)
    assert counts["blocked"] == 3 and counts["swim"] == 3 and counts["air"] == 1
    assert m.terrain_at((2, 0)).cost == 2.0
    assert m.terrain_at((1, 1)).difficulty == "difficult" and m.terrain_at((1, 1)).height == 10.0


def test_empty_cells_are_blocked(tmp_path: Path) -> None:
    m = load_map(tmxtext.write(tmp_path / "m.tmx", [". .", "..."]))
    assert m.terrain_at((1, 0)).move == "blocked"
    assert m.mode_counts()["blocked"] == 1


def _layer(name: str, rows: list[str], props: str = "") -> str:
    gids = tmxtext.gid_rows(rows)
    data = ",".join(str(g) for r in gids for g in r)
    return (
        f'<layer name="{name}" width="{len(rows[0])}" height="{len(rows)}">{props}'
        f'<data encoding="csv">{data}</data></layer>'
    )


def test_top_most_layer_that_sets_a_property_wins(tmp_path: Path) -> None:
    # A bridge layer over water sets only `move`; the water below still gives `fall`.
    bridge_ts = (
        '<tileset firstgid="100" name="bridge" tilewidth="32" tileheight="32" tilecount="1" columns="1">'
        '<tile id="0"><properties><property name="move" value="walk"/></properties></tile></tileset>'
    )
    over = '<layer name="bridge" width="3" height="1"><data encoding="csv">0,100,0</data></layer>'
    deco = _layer(
        "decor",
        ["###"],
        '<properties><property name="terrain_layer" type="bool" value="false"/></properties>',
    )
    text = tmxtext.tmx(["~~~"], extra_layers=over + deco).replace(
        "</tileset>", "</tileset>" + bridge_ts, 1
    )
    path = tmp_path / "bridge.tmx"
    path.write_text(text)
    m = load_map(path)
    assert [m.terrain_at((c, 0)).move for c in range(3)] == ["swim", "walk", "swim"]
    assert m.terrain_at((1, 0)).fall == "water" and m.terrain_at((1, 0)).name == "water"


def test_regions_spawns_and_exits(tmp_path: Path) -> None:
    rows = ["......", "......", "......"]
    objects = (
        '<objectgroup name="objects">'
        '<object id="1" name="mud" x="32" y="0" width="64" height="64">'
        '<properties><property name="cost" type="float" value="3"/>'
        '<property name="terrain" value="mud"/></properties></object>'
        '<object id="2" name="hero" type="spawn" x="170" y="80"><point/></object>'
        '<object id="3" name="door" type="exit" x="0" y="64" width="32" height="32"/>'
        '<object id="4" name="pond" x="128" y="0" width="64" height="64">'
        '<properties><property name="move" value="swim"/></properties><ellipse/></object>'
        "</objectgroup>"
    )
    m = load_map(tmxtext.write(tmp_path / "m.tmx", rows, objects=objects))
    assert {(c, r) for r in range(3) for c in range(6) if m.terrain_at((c, r)).cost == 3} == {
        (1, 0),
        (2, 0),
        (1, 1),
        (2, 1),
    }
    assert m.terrain_at((1, 0)).name == "mud"
    assert [(s.id, s.cell) for s in m.spawns] == [("hero", (5, 2))]
    assert [(e.name, e.cells) for e in m.exits] == [("door", ((0, 2),))]
    swim = {(c, r) for r in range(3) for c in range(6) if m.terrain_at((c, r)).move == "swim"}
    assert swim == {(4, 0), (5, 0), (4, 1), (5, 1)}


@pytest.mark.parametrize("axis", ["x", "y"])
@pytest.mark.parametrize("index", ["odd", "even"])
def test_hex_maps_all_variants(tmp_path: Path, axis: str, index: str) -> None:
    rows = ["..#..", ".~~..", "....."]
    tile = (32, 28) if axis == "y" else (28, 32)
    m = load_map(
        tmxtext.write(
            tmp_path / "h.tmx",
            rows,
            orientation="hexagonal",
            tile=tile,
            hexside=16,
            stagger=(axis, index),
        )
    )
    assert m.grid.kind == "hex" and (m.grid.stagger_axis, m.grid.stagger_index) == (axis, index)
    assert m.mode_counts()["swim"] == 2 and m.mode_counts()["blocked"] == 1


def test_large_map(tmp_path: Path) -> None:
    rows = ["." * 299 + "#"] * 300
    m = load_map(tmxtext.write(tmp_path / "big.tmx", rows, encoding="base64-zlib"))
    assert (m.width, m.height) == (300, 300)
    assert m.mode_counts()["blocked"] == 300


# --------------------------------------------------------------------------- written here
#
# What the corpus tests above check on files made elsewhere, on files written here: the
# suite covers them on a clone with nothing beside it.


def _chunk(x: int, y: int, rows: list[str]) -> str:
    csv = ",".join(str(g) for r in tmxtext.gid_rows(rows) for g in r)
    return f'<chunk x="{x}" y="{y}" width="{len(rows[0])}" height="{len(rows)}">{csv}</chunk>'


def test_infinite_map_is_cropped_to_its_chunks_and_keeps_float_offsets(tmp_path: Path) -> None:
    # Two layers of chunks: the ground at Tiled's (-4,-2) and (0,2), a second layer's chunk at
    # (2,-4). The map is their bounding box, (-4,-4) to (4,6): 8 x 10 cells.
    ground = _chunk(-4, -2, ["~~~~", "~..~", "~..~", "~~~~"]) + _chunk(0, 2, ["####"] * 4)
    top = _chunk(2, -4, ["^^", "^^"])
    layers = (
        f'<layer id="1" name="ground" width="4" height="4"><data encoding="csv">{ground}</data>'
        '</layer><layer id="2" name="top" width="2" height="2" offsetx="2.5" offsety="-1.25">'
        f'<data encoding="csv">{top}</data></layer>'
    )
    text = tmxtext.tmx(["."]).replace('infinite="0"', 'infinite="1"')
    start, end = text.index("<layer "), text.index("</layer>") + len("</layer>")
    path = tmp_path / "inf.tmx"
    path.write_text(text[:start] + layers + text[end:])
    m = load_map(path)
    assert (m.width, m.height) == (8, 10)
    assert any("infinite" in n for n in m.notes)
    assert [lay.offset for lay in m.layers] == [(0.0, 0.0), (2.5, -1.25)]
    # Tiled's (x, y) is the model's (x + 4, y + 4); where no chunk is painted there is no tile.
    assert m.terrain_at((0, 2)).move == "swim" and m.terrain_at((1, 3)).move == "walk"
    assert m.terrain_at((4, 6)).name == "wall" and m.terrain_at((7, 9)).name == "wall"
    assert m.terrain_at((6, 0)).move == "climb" and m.terrain_at((7, 1)).move == "climb"
    assert m.terrain_at((0, 0)).move == m.terrain_at((4, 3)).move == "blocked"
    assert m.origin == (-4, -4)


def test_template_gives_its_object_shape_size_and_properties(tmp_path: Path) -> None:
    (tmp_path / "pool.tx").write_text(
        '<?xml version="1.0" encoding="UTF-8"?>\n<template>'
        '<object name="pool" width="64" height="32"><properties>'
        '<property name="move" value="swim"/><property name="cost" type="float" value="2"/>'
        "</properties><ellipse/></object></template>\n"
    )
    objects = (
        '<objectgroup id="2" name="objects">'
        '<object id="1" template="pool.tx" x="0" y="0"/>'
        '<object id="2" template="pool.tx" name="deep" x="64" y="64">'
        '<properties><property name="cost" type="float" value="5"/></properties></object>'
        "</objectgroup>"
    )
    m = load_map(tmxtext.write(tmp_path / "m.tmx", ["...."] * 4, objects=objects))
    pool, deep = m.objects
    assert (pool.name, pool.shape, pool.width, pool.height) == ("pool", "ellipse", 64, 32)
    assert (deep.name, deep.shape, deep.x, deep.y) == ("deep", "ellipse", 64, 64)
    assert all("template" not in o.properties for o in m.objects)
    assert (pool.properties["cost"], deep.properties["cost"]) == (2, 5)
    assert deep.properties["move"] == "swim"


def test_object_shapes_are_told_apart_in_a_drawn_map(tmp_path: Path) -> None:
    objects = (
        '<objectgroup id="2" name="objects">'
        '<object id="1" x="0" y="0" width="32" height="32"/>'
        '<object id="2" x="32" y="0" width="32" height="32"><ellipse/></object>'
        '<object id="3" x="64" y="16"><point/></object>'
        '<object id="4" x="0" y="32"><polygon points="0,0 64,0 0,32"/></object>'
        '<object id="5" x="0" y="64"><polyline points="0,0 96,0"/></object>'
        '<object id="6" x="64" y="64" width="32" height="16"><text>hi</text></object>'
        '<object id="7" gid="1" x="96" y="96" width="32" height="32"/>'
        "</objectgroup>"
    )
    m = load_map(tmxtext.write(tmp_path / "m.tmx", ["...."] * 4, objects=objects))
    assert [o.shape for o in m.objects] == [
        "rectangle",
        "ellipse",
        "point",
        "polygon",
        "polyline",
        "text",
        "tile",
    ]
    assert m.objects[3].points == ((0, 0), (64, 0), (0, 32))


def test_a_tmx_map_reads_an_external_json_tileset(tmp_path: Path) -> None:
    tiles = [
        {
            "id": i,
            "type": t["terrain"],
            "properties": [
                {"name": k, "type": "float" if isinstance(v, float) else "string", "value": v}
                for k, v in t.items()
                if k != "terrain"
            ],
        }
        for i, t in enumerate(tmxtext.LEGEND.values())
    ]
    tileset = {
        "type": "tileset",
        "name": "terrain",
        "tilewidth": 32,
        "tileheight": 32,
        "tilecount": len(tiles),
        "columns": 0,
        "tiles": tiles,
    }
    (tmp_path / "terrain.tsj").write_text(json.dumps(tileset))
    text = tmxtext.tmx(DRAWING)
    start = text.index("<tileset ")
    end = text.index("</tileset>") + len("</tileset>")
    path = tmp_path / "m.tmx"
    path.write_text(text[:start] + '<tileset firstgid="1" source="terrain.tsj"/>' + text[end:])
    m, drawn = load_map(path), load_map(tmxtext.write(tmp_path / "d.tmx", DRAWING))
    assert m.terrain_ids.tolist() == drawn.terrain_ids.tolist()
    assert m.terrains == drawn.terrains


def test_missing_tile_images_fail_in_one_line_or_are_skipped_for_viewers(tmp_path: Path) -> None:
    from engine.tiled import read_tiled

    text = tmxtext.tmx(["..~", "#.."]).replace(
        '<tile id="0"', '<image source="gone.png" width="320" height="32"/><tile id="0"', 1
    )
    path = tmp_path / "m.tmx"
    path.write_text(text)
    with pytest.raises(MapError) as err:
        load_map(path)
    msg = str(err.value)
    assert "\n" not in msg and str(path) in msg and "gone.png' not found" in msg
    tf = read_tiled(path, missing_images="skip")
    assert any("gone.png' not found" in n for n in tf.model.notes)
    assert (
        tf.model.mode_counts()
        == load_map(tmxtext.write(tmp_path / "d.tmx", ["..~", "#.."])).mode_counts()
    )


# --------------------------------------------------------------------------- broken files


def _broken(tmp_path: Path, name: str, content: str | bytes) -> Path:
    p = tmp_path / name
    p.write_bytes(content if isinstance(content, bytes) else content.encode())
    return p


GOOD = tmxtext.tmx(["...", "..."])
BROKEN = {
    "empty": ("", "empty"),
    "blank": (" \n\t\r\n", "file is empty"),
    "truncated": (GOOD[: len(GOOD) // 2], "truncated"),
    "garbage": (b"\x00\xff garbage \x13", "not a readable Tiled XML"),
    "not a map": ('<tileset name="x"/>', "not a Tiled map"),
    "unknown orientation": (
        GOOD.replace('orientation="orthogonal"', 'orientation="spiral"'),
        "unknown orientation 'spiral'",
    ),
    "missing tileset": (
        GOOD.replace('<tileset firstgid="1"', '<tileset firstgid="1" source="nope.tsx"'),
        "tileset 'nope.tsx' not found",
    ),
    "short layer": (GOOD.replace("1,1,1\n</data>", "1,1\n</data>"), "has 5 tiles, expected 6"),
    "bad csv": (GOOD.replace("1,1,1\n</data>", "1,x,1\n</data>"), "not a list of numbers"),
    "unknown gid": (GOOD.replace("1,1,1\n</data>", "1,1,77\n</data>"), "tile id 77"),
    "huge": (
        GOOD.replace('width="3" height="2" tilewidth', 'width="100000" height="100000" tilewidth'),
        "at most",
    ),
    "bad move": (GOOD.replace('name="move" value="walk"', 'name="move" value="fly"'), "move='fly'"),
    "bad base64": (
        '<map orientation="orthogonal" width="1" height="1" tilewidth="8" tileheight="8"><layer name="a" width="1" height="1"><data encoding="base64" compression="zlib">!!!!</data></layer></map>',
        "cannot be decoded",
    ),
}


@pytest.mark.parametrize("case", sorted(BROKEN))
def test_broken_files_fail_in_one_line(tmp_path: Path, case: str) -> None:
    content, expected = BROKEN[case]
    p = _broken(tmp_path, "broken.tmx", content)
    with pytest.raises(MapError) as err:
        load_map(p)
    msg = str(err.value)
    assert "\n" not in msg and str(p) in msg and expected in msg, msg


def test_missing_file() -> None:
    with pytest.raises(MapError, match="not found"):
        load_map("/nonexistent/map.tmx")


@pytest.mark.corpus
def test_external_json_tileset() -> None:
    m = load_map(CORPUS / "pytiled-parser/map_tests/cross_format_tileset/map.tmx")
    assert m.width == 8


def test_rotation_bit_in_drawn_map(tmp_path: Path) -> None:
    water = tmxtext.CHARS.index("~") + 1
    flat = struct.pack("<3I", water | 0x10000000, water | 0x80000000, water)
    data = base64.b64encode(zlib.compress(flat)).decode()
    text = tmxtext.tmx(["~~~"], encoding="base64-zlib")
    start = text.index('<data encoding="base64" compression="zlib">') + len(
        '<data encoding="base64" compression="zlib">'
    )
    end = text.index("</data>")
    p = tmp_path / "rot.tmx"
    p.write_text(text[:start] + data + text[end:])
    m = load_map(p)
    assert [m.terrain_at((c, 0)).move for c in range(3)] == ["swim"] * 3
    assert m.layers[0].flags.tolist() == [[1, 8, 0]]


@pytest.mark.corpus
def test_missing_images_can_be_skipped_for_viewers() -> None:
    from engine.tiled import read_tiled

    path = CORPUS / "tiled-tests/errors/tile_image_not_found_in_tileset.tmx"
    tf = read_tiled(path, missing_images="skip")
    assert any("hexmini_typo.png' not found" in n for n in tf.model.notes)
    assert tf.model.mode_counts()["walk"] > 0


# --------------------------------------------------------------------------- TiledFile
#
# The engine's read never parses pytmx; a renderer is handed what read_tiled read (the model,
# pytmx's map and the document tree side by side), never a link kept elsewhere.

SHIPPED = sorted(str(p) for p in (Path(__file__).parent.parent / "maps").glob("*.tm[xj]"))


@pytest.fixture
def no_pytmx(monkeypatch: pytest.MonkeyPatch) -> None:
    import engine.tiled.reader

    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("the engine's read parsed the map with pytmx")

    monkeypatch.setattr(engine.tiled.reader, "parse_with_pytmx", refuse)


@pytest.mark.parametrize("path", SHIPPED)
def test_load_map_never_parses_pytmx(path: str, no_pytmx: None) -> None:
    assert load_map(path).width > 0


def test_a_scenario_for_the_engine_reads_no_pytmx(no_pytmx: None) -> None:
    from engine.scenario import load_scenario

    root = Path(__file__).parent.parent
    for path in sorted((root / "scenarios").glob("*.yaml")):
        assert load_scenario(path).tiled is None


def test_read_tiled_hands_the_model_pytmx_map_and_tree_together() -> None:
    from xml.etree import ElementTree as ET

    from engine.scenario import load_scenario
    from engine.tiled import TiledFile, read_tiled

    tf = read_tiled(SHIPPED[0])
    assert isinstance(tf, TiledFile) and tf.tmx is not None
    assert isinstance(tf.root, ET.Element) and tf.root.tag == "map"
    assert not hasattr(tf.tmx, "tacgrid_root")  # nothing stuck on pytmx's object
    bare = read_tiled(SHIPPED[0], with_tmx=False)
    assert bare.tmx is None and bare.root is None
    assert np.array_equal(bare.model.terrain_ids, tf.model.terrain_ids)
    root = Path(__file__).parent.parent
    drawn = load_scenario(root / "scenarios" / "chase.yaml", for_render=True)
    assert drawn.tiled is not None and drawn.tiled.model is drawn.model
    assert drawn.tiled.tmx is not None


def test_a_notebook_map_is_a_new_map_with_the_same_fields() -> None:
    import dataclasses

    from engine.mapmodel import MapModel
    from engine.report.notebook import NotebookMap

    plain = load_map(SHIPPED[0])
    m = NotebookMap.of(plain)
    assert type(plain) is MapModel and m is not plain and NotebookMap.of(m) is m
    for f in dataclasses.fields(MapModel):
        assert vars(m)[f.name] is vars(plain)[f.name], f.name


@pytest.mark.parametrize(
    ("prop", "said"),
    [
        ('type="int" value="inf"', "'inf'"),
        ('type="int" value="1.5"', "'1.5'"),
        ('type="object" value="x"', "'x'"),
        ('type="float" value="wide"', "'wide'"),
        ('type="bool" value="maybe"', "'maybe'"),
        ('type="vector" value="1"', "'vector'"),
    ],
)
def test_a_property_that_is_not_its_type_is_one_line(tmp_path: Path, prop: str, said: str) -> None:
    """pytmx refused these when it read every map; the engine's own read refuses them too."""
    path = tmxtext.write(tmp_path / "m.tmx", ["..", ".."])
    text = path.read_text(encoding="utf-8")
    head = f'<properties><property name="n" {prop}/></properties>'
    path.write_text(text.replace("<tileset", head + "<tileset", 1), encoding="utf-8")
    with pytest.raises(MapError, match=said):
        load_map(path)
