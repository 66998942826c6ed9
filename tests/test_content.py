"""The shipped Tiled content (assets/, maps/) agrees with its ASCII sources and MAP-FORMAT.

The legend below is written out again on purpose: it is the fixture the maps are checked
against, independently of the generator script that made them.
"""

from __future__ import annotations

import importlib.util
import json
import struct
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
import pytmx

ROOT = Path(__file__).resolve().parent.parent
ASSETS = ROOT / "assets"
MAPS = ROOT / "maps"

# char -> (terrain = tile class, move)
LEGEND: dict[str, tuple[str, str]] = {
    ".": ("open", "walk"),
    "_": ("floor", "walk"),
    ",": ("rough", "walk"),
    "%": ("rubble", "walk"),
    "T": ("forest", "walk"),
    "~": ("shallow water", "swim"),
    "w": ("deep water", "swim"),
    "r": ("rapids", "swim"),
    "H": ("ladder", "ladder"),
    "^": ("cliff", "climb"),
    "#": ("wall", "blocked"),
    "O": ("pit", "gap"),
    ":": ("open air", "air"),
    "=": ("crawlspace", "crawl"),
    "+": ("difficult ground", "walk"),
}

# MAP-FORMAT.md's value sets
ENUMS: dict[str, list[str]] = {
    "move": ["walk", "crawl", "swim", "climb", "ladder", "gap", "air", "blocked"],
    "difficulty": [
        "none",
        "very_easy",
        "easy",
        "moderate",
        "difficult",
        "very_difficult",
        "heroic",
    ],
    "fall": ["hard", "soft", "water"],
    "diagonals": ["none", "equal", "alternate", "euclid"],
    "cell_unit": ["ft", "m"],
    "corners": ["pass", "block"],
}

# name -> (orientation, staggeraxis, staggerindex, tileset file, cell_size, cell_unit)
SHIPPED: dict[str, tuple[str, str | None, str | None, str, float, str]] = {
    "encounter": ("orthogonal", None, None, "terrain_square.tsx", 5.0, "ft"),
    "hex_pointy": ("hexagonal", "y", "odd", "terrain_hex_pointy.tsx", 2.0, "m"),
    "hex_flat": ("hexagonal", "x", "even", "terrain_hex_flat.tsx", 2.0, "m"),
    "chase": ("orthogonal", None, None, "terrain_square.tsx", 5.0, "ft"),
}
TILESETS = ("terrain_square", "terrain_hex_pointy", "terrain_hex_flat")


def ascii_rows(name: str) -> list[str]:
    return (MAPS / "src" / f"{name}.txt").read_text(encoding="utf-8").splitlines()


def load(name: str) -> tuple[pytmx.TiledMap, int]:
    tmap = pytmx.TiledMap(str(MAPS / f"{name}.tmx"))
    return tmap, tmap.layers.index(tmap.get_layer_by_name("terrain"))


def png_size(path: Path) -> tuple[int, int]:
    head = path.read_bytes()[:24]
    assert head[:8] == b"\x89PNG\r\n\x1a\n", f"{path} is not a PNG"
    return struct.unpack(">II", head[16:24])


def tsx_tiles(stem: str) -> tuple[ET.Element, dict[int, ET.Element]]:
    root = ET.parse(ASSETS / f"{stem}.tsx").getroot()
    return root, {int(t.get("id", "-1")): t for t in root.iter("tile")}


def xml_props(elem: ET.Element) -> dict[str, ET.Element]:
    return {p.get("name", ""): p for p in elem.iterfind("properties/property")}


@pytest.mark.parametrize("name", sorted(SHIPPED))
def test_every_cell_matches_its_ascii_source(name: str) -> None:
    rows = ascii_rows(name)
    tmap, layer = load(name)
    orientation, axis, index, tileset, cell_size, unit = SHIPPED[name]
    assert (tmap.width, tmap.height) == (len(rows[0]), len(rows))
    assert tmap.orientation == orientation
    if axis is not None:
        assert (tmap.staggeraxis, tmap.staggerindex) == (axis, index)
    assert tmap.properties["cell_size"] == cell_size
    assert tmap.properties["cell_unit"] == unit
    wrong = []
    for r, row in enumerate(rows):
        assert len(row) == tmap.width, f"{name}.txt row {r + 1} has {len(row)} cells"
        for c, ch in enumerate(row):
            props = tmap.get_tile_properties(c, r, layer) or {}
            # Enum-typed properties come back from pytmx as plain strings.
            got = (props.get("type"), props.get("move"))
            if got != LEGEND[ch]:
                wrong.append(f"({c},{r}) {ch!r}: {got}")
    assert not wrong, f"{name}: {len(wrong)} cells differ, e.g. {wrong[:5]}"


@pytest.mark.parametrize("name", sorted(SHIPPED))
def test_map_references_its_tileset_relatively(name: str) -> None:
    root = ET.parse(MAPS / f"{name}.tmx").getroot()
    (ts,) = root.findall("tileset")
    assert ts.get("source") == f"../assets/{SHIPPED[name][3]}"
    assert root.find("layer/data").get("encoding") == "csv"
    assert root.get("infinite") == "0"


@pytest.mark.parametrize("stem", TILESETS)
def test_tileset_tiles_carry_valid_properties(stem: str) -> None:
    root, tiles = tsx_tiles(stem)
    assert sorted(tiles) == list(range(len(LEGEND)))
    assert int(root.get("tilecount", "0")) == len(tiles)
    names = {terrain: move for terrain, move in LEGEND.values()}
    for tid, tile in tiles.items():
        props = xml_props(tile)
        assert "move" in props, f"{stem} tile {tid} has no move"
        move = props["move"].get("value")
        assert move in ENUMS["move"]
        assert names[tile.get("type", "")] == move, f"{stem} tile {tid}"
        for key in ("difficulty", "fall"):
            if key in props:
                assert props[key].get("value") in ENUMS[key], f"{stem} tile {tid} {key}"
        for key in ("cost", "cost_add", "height"):
            if key in props:
                assert props[key].get("type") == "float"
                assert float(props[key].get("value", "nan")) >= (1 if key == "cost" else 0)
        assert set(props) <= {
            "terrain", "move", "difficulty", "dn", "cost", "cost_add", "height", "fall"
        }  # fmt: skip


@pytest.mark.parametrize("stem", TILESETS)
def test_tileset_image_matches_its_grid(stem: str) -> None:
    root, _ = tsx_tiles(stem)
    image = root.find("image")
    assert image is not None
    w, h = png_size(ASSETS / image.get("source", ""))
    assert (w, h) == (int(image.get("width", "0")), int(image.get("height", "0")))
    columns = int(root.get("columns", "0"))
    tw, th = int(root.get("tilewidth", "0")), int(root.get("tileheight", "0"))
    assert w == columns * tw
    assert (w // tw) * (h // th) == int(root.get("tilecount", "0"))


def test_heights_follow_each_tilesets_unit() -> None:
    # pytmx overwrites a tile's `height` property with the tile's pixel height, so the value
    # must be read from the .tsx itself; here the files are checked directly.
    expected = {
        "terrain_square": {"ladder": 5.0, "cliff": 15.0, "wall": 10.0, "pit": 10.0},
        "terrain_hex_pointy": {"ladder": 2.0, "cliff": 4.0, "wall": 3.0, "pit": 3.0},
        "terrain_hex_flat": {"ladder": 2.0, "cliff": 4.0, "wall": 3.0, "pit": 3.0},
    }
    for stem, heights in expected.items():
        _, tiles = tsx_tiles(stem)
        got = {
            t.get("type"): float(xml_props(t)["height"].get("value", "nan"))
            for t in tiles.values()
            if "height" in xml_props(t)
        }
        assert got == heights, stem


def test_hex_tilesets_lose_nothing_to_tileds_integer_maths() -> None:
    for name in ("hex_pointy", "hex_flat"):
        root = ET.parse(MAPS / f"{name}.tmx").getroot()
        w, h = int(root.get("tilewidth", "0")), int(root.get("tileheight", "0"))
        side = int(root.get("hexsidelength", "0"))
        sx, sy = (0, side) if root.get("staggeraxis") == "y" else (side, 0)
        # drawn size (TECH-NOTES) == tile size: no seam and no overlap between cells
        assert (2 * ((w - sx) // 2) + sx, 2 * ((h - sy) // 2) + sy) == (w, h)


def test_project_enums_are_map_formats_value_sets() -> None:
    project = json.loads((ASSETS / "tacgrid.tiled-project").read_text(encoding="utf-8"))
    types = project["propertyTypes"]
    enums = {t["name"]: t for t in types if t["type"] == "enum"}
    assert {name: t["values"] for name, t in enums.items()} == ENUMS
    assert all(t["storageType"] == "string" and not t["valuesAsFlags"] for t in enums.values())
    ids = [t["id"] for t in types]
    assert len(ids) == len(set(ids))
    # every enum-typed property in the shipped files names one of these types
    for path in [*ASSETS.glob("*.tsx"), *MAPS.glob("*.tmx")]:
        for prop in ET.parse(path).getroot().iter("property"):
            kind = prop.get("propertytype")
            if kind is not None:
                assert kind in enums, f"{path.name}: {prop.get('name')} uses {kind}"
                assert prop.get("value") in enums[kind]["values"]


def test_project_offers_wall_door_and_window_classes() -> None:
    """A GM paints walls in Tiled by giving a line or polyline object one of these classes
    (MAP-FORMAT.md, Objects); a door's `open` is a checkbox, unticked (closed) by default."""
    project = json.loads((ASSETS / "tacgrid.tiled-project").read_text(encoding="utf-8"))
    classes = {t["name"]: t for t in project["propertyTypes"] if t["type"] == "class"}
    for name in ("wall", "door", "window"):
        assert "object" in classes[name]["useAs"], name
    assert classes["door"]["members"] == [{"name": "open", "type": "bool", "value": False}]
    assert classes["wall"]["members"] == classes["window"]["members"] == []


@pytest.mark.parametrize("name", sorted(SHIPPED))
def test_spawns_are_points_on_walkable_cells(name: str) -> None:
    rows = ascii_rows(name)
    root = ET.parse(MAPS / f"{name}.tmx").getroot()
    tmap, _ = load(name)
    spawns = [o for o in tmap.objects if o.type == "spawn"]
    assert spawns
    xml_objects = {int(o.get("id", "0")): o for o in root.iter("object")}
    tw, th = tmap.tilewidth, tmap.tileheight
    for obj in spawns:
        assert xml_objects[obj.id].find("point") is not None, obj.name
        if tmap.orientation == "orthogonal":
            c, r = int(obj.x // tw), int(obj.y // th)
            assert LEGEND[rows[r][c]][1] in ("walk", "crawl"), f"{name}: {obj.name}"
    names = [o.name for o in spawns]
    assert len(names) == len(set(names))


def test_chase_has_pursuers_quarry_exits_and_regions() -> None:
    tmap, _ = load("chase")
    by_name = {o.name: o for o in tmap.objects}
    assert {"pursuer1", "pursuer2", "quarry"} <= {o.name for o in tmap.objects if o.type == "spawn"}
    exits = [o for o in tmap.objects if o.type == "exit"]
    assert 1 <= len(exits) <= 2
    assert by_name["mud"].properties == {"terrain": "mud", "cost": 3.0}
    assert by_name["brambles"].properties["cost"] == 2.0
    assert len(by_name["brambles"].points) == 5


def test_generated_files_are_up_to_date(tmp_path: Path) -> None:
    """The committed .tsx/.tmx/project equal what the script makes from the ASCII sources."""
    spec = importlib.util.spec_from_file_location("build_content", ASSETS / "build_content.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["build_content"] = module  # dataclasses look their module up by name
    try:
        spec.loader.exec_module(module)
        written = module.build(tmp_path, images=False)
    finally:
        sys.modules.pop("build_content", None)
    assert written
    for path in written:
        committed = ROOT / path.relative_to(tmp_path)
        assert committed.read_text(encoding="utf-8") == path.read_text(encoding="utf-8"), (
            f"{committed.relative_to(ROOT)} is stale: run python assets/build_content.py"
        )
    # and the script's legend is this test's legend
    assert {t.char: (t.name, t.move) for t in module.LEGEND} == LEGEND


@pytest.mark.parametrize("name", sorted(SHIPPED))
def test_engine_loader_matches_the_drawing(name: str) -> None:
    """`tacgrid info` counts come from the same cells the GM drew (regions change cost only)."""
    from engine.tiled import load_map

    rows = [line for line in (MAPS / "src" / f"{name}.txt").read_text().splitlines() if line]
    model = load_map(MAPS / f"{name}.tmx")
    assert (model.width, model.height) == (len(rows[0]), len(rows))
    expected: dict[str, int] = {}
    for r, row in enumerate(rows):
        for c, ch in enumerate(row):
            terrain, move = LEGEND[ch]
            assert model.terrain_at((c, r)).move == move, (name, c, r, ch)
            expected[move] = expected.get(move, 0) + 1
    assert {k: v for k, v in model.mode_counts().items() if v} == expected
    assert model.spawns, name
