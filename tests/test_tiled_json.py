"""Tiled JSON maps (.tmj/.json), templates (.tj), tilesets (.tsj), worlds (.world) and
class-typed properties: one model out, whatever format the GM saved in."""

from __future__ import annotations

import base64
import gzip
import json
import shutil
import zlib
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from conftest import CORPUS, ROOT

from engine.cli import main
from engine.errors import MapError
from engine.tiled import is_map_source, load_map, read_world

PT = CORPUS / "pytiled-parser"

#: JSON maps of the corpus whose .tmx twin holds something else on purpose.
REFUSED_JSON = {
    # a layer of type "faketype" (Tiled refuses it too); its .tmx twin has a tile layer
    "layer_tests/unknown_type/map.json": "unknown type 'faketype'",
    # its tileset is a file of garbage
    "map_tests/json_invalid_tileset/map.json": "tileset 'tileset.garbage'",
}


def _corpus_files() -> list[Path]:
    return sorted(p for p in CORPUS.rglob("*") if p.suffix in (".tmx", ".tmj", ".json"))


def _pairs() -> list[Path]:
    return [
        p
        for p in _corpus_files()
        if p.suffix in (".json", ".tmj") and p.with_suffix(".tmx").exists()
    ]


def _json_kind(p: Path) -> str:
    try:
        doc = json.loads(p.read_text(encoding="utf-8"))
    except ValueError:
        return "garbage"
    return str(doc.get("type", "map")) if isinstance(doc, dict) else "garbage"


@pytest.mark.corpus
@pytest.mark.parametrize("path", _corpus_files(), ids=lambda p: str(p.relative_to(CORPUS)))
def test_every_corpus_file_loads_or_is_refused_in_one_line(path: Path) -> None:
    try:
        model = load_map(path)
    except MapError as exc:
        msg = str(exc)
        assert "\n" not in msg and msg.startswith(str(path)), msg
        rel = str(path.relative_to(PT)) if path.is_relative_to(PT) else ""
        if path.suffix == ".json" and rel not in REFUSED_JSON:
            # a tileset or template opened as a map is named as such
            assert _json_kind(path) in ("tileset", "template"), msg
            assert f"'{_json_kind(path)}' file, not a map" in msg
        elif rel in REFUSED_JSON:
            assert REFUSED_JSON[rel] in msg
        return
    assert model.grid.width > 0
    if path.suffix == ".json":
        assert _json_kind(path) == "map"


@pytest.mark.corpus
def test_every_json_map_of_the_corpus_loads() -> None:
    maps = [p for p in _corpus_files() if p.suffix == ".json" and _json_kind(p) == "map"]
    loaded = []
    for p in maps:
        if str(p.relative_to(CORPUS)).removeprefix("pytiled-parser/") in REFUSED_JSON:
            continue
        load_map(p)
        loaded.append(p)
    assert len(loaded) >= 23


def _info(path: Path, capsys: pytest.CaptureFixture[str]) -> dict[str, Any]:
    assert main(["info", str(path), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    doc.pop("path")
    return doc


@pytest.mark.corpus
@pytest.mark.parametrize("json_path", _pairs(), ids=lambda p: str(p.relative_to(CORPUS)))
def test_tmx_and_json_twins_give_the_same_model(
    json_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    tmx_path = json_path.with_suffix(".tmx")
    rel = str(json_path.relative_to(PT))
    if rel in REFUSED_JSON:
        with pytest.raises(MapError, match=REFUSED_JSON[rel]):
            load_map(json_path)
        return
    _assert_same_model(tmx_path, json_path, capsys)


#: The shipped maps' Tiled JSON twins (assets/build_content.py writes both files).
SHIPPED_TWINS = ["hex_flat"]


@pytest.mark.parametrize("name", SHIPPED_TWINS)
def test_shipped_json_twin_gives_the_same_model(
    name: str, capsys: pytest.CaptureFixture[str]
) -> None:
    maps = ROOT / "maps"
    _assert_same_model(maps / f"{name}.tmx", maps / f"{name}.tmj", capsys)
    a, b = load_map(maps / f"{name}.tmx"), load_map(maps / f"{name}.tmj")
    assert a.spawns and (a.spawns, a.exits, a.walls) == (b.spawns, b.exits, b.walls)


@pytest.mark.parametrize("name", SHIPPED_TWINS)
def test_shipped_json_twin_renders_pixel_for_pixel(name: str, tmp_path: Path) -> None:
    import pygame

    from engine.viewer.render import render_to_file

    images = []
    for ext in (".tmx", ".tmj"):
        out = tmp_path / f"{ext[1:]}.png"
        render_to_file(str(ROOT / "maps" / (name + ext)), str(out))
        surf = pygame.image.load(str(out))
        images.append((surf.get_size(), pygame.image.tobytes(surf, "RGBA")))
    assert images[0] == images[1]


@pytest.mark.skipif(shutil.which("tmxrasterizer") is None, reason="no tmxrasterizer (Tiled)")
@pytest.mark.parametrize("name", SHIPPED_TWINS)
def test_tiled_reads_the_shipped_json_twin(name: str, tmp_path: Path) -> None:
    """Tiled itself (tmxrasterizer) draws the .tmj exactly as the .tmx: it is Tiled JSON."""
    import os
    import subprocess

    import pygame

    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen"}
    images = []
    for ext in (".tmx", ".tmj"):
        out = tmp_path / f"{ext[1:]}.png"
        run = subprocess.run(
            ["tmxrasterizer", str(ROOT / "maps" / (name + ext)), str(out)],
            env=env,
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert run.returncode == 0 and out.exists(), run.stderr
        surf = pygame.image.load(str(out))
        images.append((surf.get_size(), pygame.image.tobytes(surf, "RGBA")))
    assert images[0] == images[1]


def _assert_same_model(tmx_path: Path, json_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A map and its JSON twin: the same `info`, terrain, layers, properties and objects."""
    assert _info(tmx_path, capsys) == _info(json_path, capsys)
    a, b = load_map(tmx_path), load_map(json_path)
    assert [[a.terrains[i] for i in row] for row in a.terrain_ids.tolist()] == [
        [b.terrains[i] for i in row] for row in b.terrain_ids.tolist()
    ]
    assert [lay.name for lay in a.layers] == [lay.name for lay in b.layers]
    for la, lb in zip(a.layers, b.layers, strict=True):
        assert np.array_equal(la.gids, lb.gids) and np.array_equal(la.flags, lb.flags)
        assert (la.visible, la.opacity) == (lb.visible, lb.opacity)
        # the .tmx rounds floats to 6 significant digits, the .json keeps 15
        assert la.offset == pytest.approx(lb.offset, abs=1e-3)
    assert a.properties == b.properties
    assert len(a.objects) == len(b.objects)
    for oa, ob in zip(a.objects, b.objects, strict=True):
        assert (oa.id, oa.name, oa.cls, oa.shape, oa.properties) == (
            ob.id,
            ob.name,
            ob.cls,
            ob.shape,
            ob.properties,
        )
        assert (oa.x, oa.y, oa.width, oa.height) == pytest.approx(
            (ob.x, ob.y, ob.width, ob.height), abs=1e-3
        )


@pytest.mark.corpus
@pytest.mark.parametrize(
    "rel",
    [
        "map_tests/hexagonal/map",
        "layer_tests/b64_zstd/map",
        "layer_tests/infinite_map/map",
        "map_tests/template/map",
        "map_tests/external_tileset_dif_dir/map",
    ],
)
def test_json_twin_renders_pixel_for_pixel(rel: str, tmp_path: Path) -> None:
    import pygame

    from engine.viewer.render import render_to_file

    images = []
    for ext in (".tmx", ".json"):
        out = tmp_path / f"{ext[1:]}.png"
        render_to_file(str(PT / (rel + ext)), str(out))
        surf = pygame.image.load(str(out))
        images.append((surf.get_size(), pygame.image.tobytes(surf, "RGBA")))
    assert images[0][0] == images[1][0]
    assert images[0][1] == images[1][1]


# --------------------------------------------------------------------------- hand-written


TILESET = {
    "type": "tileset",
    "name": "t",
    "tilewidth": 32,
    "tileheight": 32,
    "tilecount": 3,
    "columns": 0,
    "tiles": [
        {"id": 0, "type": "grass"},
        {
            "id": 1,
            "type": "water",
            "properties": [
                {"name": "move", "type": "string", "propertytype": "move", "value": "swim"},
                {"name": "cost", "type": "float", "value": 2},
            ],
        },
        {
            "id": 2,
            "properties": [
                {
                    "name": "ground",
                    "type": "class",
                    "propertytype": "Terrain",
                    "value": {"move": "climb", "height": "10"},
                }
            ],
        },
    ],
}

GIDS = [1, 2, 3, 1, 0x80000002, 1]  # one horizontally flipped water tile


def _encode(gids: list[int], compression: str) -> str:
    raw = np.array(gids, dtype="<u4").tobytes()
    if compression == "zlib":
        raw = zlib.compress(raw)
    elif compression == "gzip":
        raw = gzip.compress(raw)
    elif compression == "zstd":
        import zstandard

        raw = zstandard.ZstdCompressor().compress(raw)
    return base64.b64encode(raw).decode("ascii")


def _map(layer: dict[str, Any], **extra: Any) -> dict[str, Any]:
    doc = {
        "type": "map",
        "orientation": "orthogonal",
        "width": 3,
        "height": 2,
        "tilewidth": 32,
        "tileheight": 32,
        "infinite": False,
        "tilesets": [{"firstgid": 1, "source": "t.tsj"}],
        "layers": [{"type": "tilelayer", "name": "ground", "width": 3, "height": 2, **layer}],
        "properties": [{"name": "cell_size", "type": "float", "value": 5}],
    }
    doc.update(extra)
    return doc


def _write(folder: Path, name: str, doc: Any) -> Path:
    path = folder / name
    path.write_text(json.dumps(doc) if not isinstance(doc, str) else doc, encoding="utf-8")
    return path


ENCODINGS = {
    "csv": {"data": GIDS},
    "base64": {"encoding": "base64", "data": _encode(GIDS, "")},
    "zlib": {"encoding": "base64", "compression": "zlib", "data": _encode(GIDS, "zlib")},
    "gzip": {"encoding": "base64", "compression": "gzip", "data": _encode(GIDS, "gzip")},
    "zstd": {"encoding": "base64", "compression": "zstd", "data": _encode(GIDS, "zstd")},
}


@pytest.mark.parametrize("encoding", sorted(ENCODINGS))
def test_hand_written_tmj_every_encoding(encoding: str, tmp_path: Path) -> None:
    _write(tmp_path, "t.tsj", TILESET)
    path = _write(tmp_path, "m.tmj", _map(ENCODINGS[encoding]))
    m = load_map(path)
    assert (m.grid.width, m.grid.height, m.cell_size) == (3, 2, 5.0)
    names = [[m.terrain_at((c, r)).name for c in range(3)] for r in range(2)]
    assert names == [["grass", "water", "open"], ["grass", "water", "grass"]]
    assert m.terrain_at((1, 0)).move == "swim" and m.terrain_at((1, 0)).cost == 2.0
    assert m.layers[0].flags[1, 1] == 0x8
    # the Terrain class property on tile 3: its members, defaults from no project here
    assert m.terrain_at((2, 0)).move == "climb" and m.terrain_at((2, 0)).height == 10.0


def _tmx_twin(folder: Path, layer: dict[str, Any]) -> Path:
    """The .tmx that `_map(layer)` plus `BOG` is saved as JSON: same tileset, gids, objects."""
    if "encoding" in layer:
        attrs = 'encoding="base64"' + (
            f' compression="{layer["compression"]}"' if "compression" in layer else ""
        )
        body = layer["data"]
    else:
        attrs, body = 'encoding="csv"', ",".join(map(str, layer["data"]))
    text = (
        '<?xml version="1.0" encoding="UTF-8"?>\n<map version="1.10" orientation="orthogonal" '
        'renderorder="right-down" width="3" height="2" tilewidth="32" tileheight="32" '
        'infinite="0"><properties><property name="cell_size" type="float" value="5"/>'
        '</properties><tileset firstgid="1" source="t.tsj"/>'
        f'<layer id="1" name="ground" width="3" height="2"><data {attrs}>{body}</data></layer>'
        '<objectgroup id="2" name="objects"><object id="1" name="bog" x="32" y="0" width="32" '
        'height="64"><properties><property name="cost" type="float" value="3"/></properties>'
        "</object></objectgroup></map>\n"
    )
    return _write(folder, "m.tmx", text)


#: The object layer of `_tmx_twin`, as Tiled JSON.
BOG = {
    "type": "objectgroup",
    "name": "objects",
    "objects": [
        {
            "id": 1,
            "name": "bog",
            "type": "",
            "x": 32,
            "y": 0,
            "width": 32,
            "height": 64,
            "properties": [{"name": "cost", "type": "float", "value": 3}],
        }
    ],
}


@pytest.mark.parametrize("encoding", sorted(ENCODINGS))
def test_hand_written_twins_give_the_same_model_and_pixels(
    encoding: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A .tmx and its Tiled JSON twin, written here (the corpus suite checks the twins Tiled
    saved): the same model and, drawn, the same pixels."""
    import pygame

    from engine.viewer.render import render_to_file

    _write(tmp_path, "t.tsj", TILESET)
    doc = _map(ENCODINGS[encoding])
    doc["layers"].append(BOG)
    json_path = _write(tmp_path, "m.tmj", doc)
    tmx_path = _tmx_twin(tmp_path, ENCODINGS[encoding])
    _assert_same_model(tmx_path, json_path, capsys)
    assert load_map(tmx_path).terrain_at((1, 1)).cost == 3  # the bog region, both ways
    images = []
    for path in (tmx_path, json_path):
        out = tmp_path / f"{path.suffix[1:]}.png"
        render_to_file(str(path), str(out))
        surf = pygame.image.load(str(out))
        images.append((surf.get_size(), pygame.image.tobytes(surf, "RGBA")))
    assert images[0] == images[1]


def test_infinite_json_map_with_chunks(tmp_path: Path) -> None:
    _write(tmp_path, "t.tsj", TILESET)
    chunk = {"x": -16, "y": 0, "width": 16, "height": 16, "data": [1] * 255 + [2]}
    layer = {"chunks": [chunk], "startx": -16, "starty": 0}
    path = _write(tmp_path, "inf.tmj", _map(layer, infinite=True))
    m = load_map(path)
    assert (m.grid.width, m.grid.height, m.origin) == (16, 16, (-16, 0))
    assert m.terrain_at((15, 15)).name == "water"


def test_json_template_and_tile_objects(tmp_path: Path) -> None:
    _write(tmp_path, "t.tsj", TILESET)
    _write(
        tmp_path,
        "spawn.tj",
        {
            "type": "template",
            "object": {"name": "hero", "type": "spawn", "point": True, "x": 0, "y": 0},
        },
    )
    _write(
        tmp_path,
        "pool.tj",
        {
            "type": "template",
            "object": {
                "width": 64,
                "height": 32,
                "properties": [{"name": "move", "type": "string", "value": "swim"}],
            },
        },
    )
    objects = [
        {"id": 1, "template": "spawn.tj", "x": 48, "y": 16},
        {"id": 2, "template": "pool.tj", "x": 0, "y": 32},
    ]
    path = _write(
        tmp_path,
        "m.json",
        _map(
            ENCODINGS["csv"],
            layers=[
                {"type": "tilelayer", "name": "g", "width": 3, "height": 2, "data": GIDS},
                {"type": "objectgroup", "name": "o", "objects": objects},
            ],
        ),
    )
    m = load_map(path)
    assert [(s.id, s.cell) for s in m.spawns] == [("hero", (1, 0))]
    assert m.terrain_at((0, 1)).move == "swim" and m.terrain_at((1, 1)).move == "swim"
    assert m.terrain_at((2, 1)).move == "walk"


# --------------------------------------------------------------------------- worlds


def _world(tmp_path: Path) -> Path:
    _write(tmp_path, "t.tsj", TILESET)
    _write(tmp_path, "west.tmj", _map(ENCODINGS["csv"]))
    _write(tmp_path, "map_p1-n0.tmj", _map(ENCODINGS["zlib"]))
    return _write(
        tmp_path,
        "w.world",
        {
            "type": "world",
            "maps": [{"fileName": "west.tmj", "x": -96, "y": 0, "width": 96, "height": 64}],
            "patterns": [
                {"regexp": r"map_p(\d+)-n(\d+)\.tmj", "multiplierX": 96, "multiplierY": 64}
            ],
        },
    )


def test_world_lists_maps_and_loads_one_by_name(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    world = _world(tmp_path)
    assert [(m.name, m.x, m.y) for m in read_world(str(world))] == [
        ("west", -96, 0),
        ("map_p1-n0", 96, 0),
    ]
    assert main(["info", str(world), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert [m["name"] for m in doc["maps"]] == ["west", "map_p1-n0"]
    m = load_map(f"{world}#map_p1-n0")
    assert m.path == str(tmp_path / "map_p1-n0.tmj")
    assert main(["info", f"{world}#west", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["width"] == 3
    assert is_map_source(f"{world}#west") and is_map_source("x.tmj")


@pytest.mark.parametrize(
    ("suffix", "expect"),
    [("", "is a Tiled world of 2 maps"), ("#nope", "no map named 'nope'")],
)
def test_world_without_a_known_map_is_one_line(
    tmp_path: Path, suffix: str, expect: str, capsys: pytest.CaptureFixture[str]
) -> None:
    world = _world(tmp_path)
    assert (
        main(["path", str(world) + suffix, "--system", "generic", "--from", "0,0", "--to", "1,0"])
        == 2
    )
    err = capsys.readouterr().err.strip()
    assert expect in err and "\n" not in err and "west" in err


@pytest.mark.corpus
def test_corpus_worlds() -> None:
    names = {m.name for m in read_world(str(PT / "world_tests/both/world.world"))}
    assert names == {"map_manual_one", "map_p0-n0", "map_p0-n1"}
    for m in read_world(str(CORPUS / "tiled-examples/sticker-knight/sticker-knight.world")):
        load_map(m.file)


# --------------------------------------------------------------------------- class properties


def _class_map(folder: Path, tile_props: list[dict[str, Any]]) -> Path:
    ts = {**TILESET, "tiles": [{"id": 0, "properties": tile_props}]}
    _write(folder, "t.tsj", ts)
    return _write(folder, "m.tmj", _map({"data": [1] * 6}))


def test_terrain_class_property_takes_project_defaults(tmp_path: Path) -> None:
    sub = tmp_path / "maps"
    sub.mkdir()
    shutil.copy(ROOT / "assets" / "tacgrid.tiled-project", tmp_path / "p.tiled-project")
    path = _class_map(
        sub,
        [
            {"name": "t", "type": "class", "propertytype": "Terrain", "value": {"move": "swim"}},
            {"name": "cost", "type": "float", "value": 3},
        ],
    )
    m = load_map(path)
    t = m.terrain_at((0, 0))
    assert (t.move, t.difficulty, t.fall, t.cost) == ("swim", "none", "hard", 3.0)
    assert any("Terrain class properties resolved" in n for n in m.notes)


def test_terrain_class_defaults_and_int_enums(tmp_path: Path) -> None:
    project = {
        "propertyTypes": [
            {
                "id": 1,
                "name": "Mode",
                "type": "enum",
                "storageType": "int",
                "values": ["walk", "crawl"],
            },
            {
                "id": 2,
                "name": "Terrain",
                "type": "class",
                "members": [
                    {"name": "move", "type": "int", "propertyType": "Mode", "value": 1},
                    {"name": "difficulty", "type": "string", "value": "moderate"},
                ],
            },
        ]
    }
    _write(tmp_path, "x.tiled-project", project)
    path = _class_map(
        tmp_path, [{"name": "t", "type": "class", "propertytype": "Terrain", "value": {}}]
    )
    t = load_map(path).terrain_at((0, 0))
    assert (t.move, t.difficulty) == ("crawl", "moderate")


def test_terrain_class_in_tmx_matches_tmj(tmp_path: Path) -> None:
    shutil.copy(ROOT / "assets" / "tacgrid.tiled-project", tmp_path / "p.tiled-project")
    (tmp_path / "t.tsx").write_text(
        '<tileset name="t" tilewidth="32" tileheight="32" tilecount="1" columns="0">'
        '<tile id="0"><properties><property name="g" type="class" propertytype="Terrain">'
        '<properties><property name="move" value="climb"/></properties></property>'
        "</properties></tile></tileset>",
        encoding="utf-8",
    )
    (tmp_path / "m.tmx").write_text(
        '<map orientation="orthogonal" width="1" height="1" tilewidth="32" tileheight="32">'
        '<tileset firstgid="1" source="t.tsx"/><layer name="g" width="1" height="1">'
        '<data encoding="csv">1</data></layer></map>',
        encoding="utf-8",
    )
    t = load_map(tmp_path / "m.tmx").terrain_at((0, 0))
    assert (t.move, t.difficulty, t.cost) == ("climb", "none", 1.0)


# --------------------------------------------------------------------------- hostile


def _deep(n: int) -> dict[str, Any]:
    layer: dict[str, Any] = {"type": "group", "name": "g", "layers": []}
    top = layer
    for _ in range(n):
        inner: dict[str, Any] = {"type": "group", "name": "g", "layers": []}
        layer["layers"].append(inner)
        layer = inner
    return top


HOSTILE: dict[str, tuple[Any, str]] = {
    "depth": (_map({"data": GIDS}, layers=[_deep(80)]), "nested deeper"),
    "nan": ('{"type": "map", "width": NaN}', "NaN is not a number"),
    "inf_float": ('{"type": "map", "width": 1e999}', "out of range"),
    "huge_int": (_map({"data": GIDS}, width=10**30), "out of range"),
    "huge_gid": (_map({"data": [1, 2, 3, 1, 2, 2**40]}), "out of range"),
    "negative_gid": (_map({"data": [1, 2, 3, 1, 2, -1]}), "out of range"),
    "float_gid": (_map({"data": [1, 2, 3, 1, 2, 1.5]}), "not a whole-number tile id"),
    "text_gid": (_map({"data": [1, 2, 3, 1, 2, "x"]}), "not a whole-number tile id"),
    "short_data": (_map({"data": [1, 2]}), "has 2 tiles, expected 6"),
    "layers_not_list": (_map({"data": GIDS}, layers={"a": 1}), "'layers' is not a JSON list"),
    "width_is_list": (_map({"data": GIDS}, width=[3]), "'width' is a JSON list"),
    "not_object": ("[1, 2, 3]", "not a Tiled JSON map"),
    "truncated": ('{"type": "map", "width": ', "not readable JSON"),
    "tileset_as_map": (TILESET, "'tileset' file, not a map"),
    "bad_base64": (
        _map({"encoding": "base64", "compression": "zlib", "data": "!!!"}),
        "cannot be decoded",
    ),
    "text_data_csv": (_map({"data": "1,2,3"}), "tile data is text"),
}


@pytest.mark.parametrize("case", sorted(HOSTILE))
def test_hostile_json_is_one_line(
    case: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _write(tmp_path, "t.tsj", TILESET)
    doc, expect = HOSTILE[case]
    path = _write(tmp_path, "bad.tmj", doc)
    with pytest.raises(MapError) as info:
        load_map(path)
    msg = str(info.value)
    assert "\n" not in msg and msg.startswith(str(path)) and expect in msg, msg
    assert main(["info", str(path)]) == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and expect in err


def test_hostile_tileset_and_template_name_their_file(tmp_path: Path) -> None:
    _write(tmp_path, "t.tsj", '{"type": "tileset", "tiles": [{"id": NaN}]}')
    path = _write(tmp_path, "m.tmj", _map({"data": GIDS}))
    with pytest.raises(MapError, match=r"tileset 't\.tsj'.*NaN") as info:
        load_map(path)
    assert "\n" not in str(info.value)
    _write(tmp_path, "t.tsj", TILESET)
    _write(tmp_path, "o.tj", {"type": "template"})
    objects = [{"id": 1, "template": "o.tj", "x": 0, "y": 0}]
    path = _write(
        tmp_path,
        "m2.tmj",
        _map({"data": GIDS}, layers=[{"type": "objectgroup", "name": "o", "objects": objects}]),
    )
    with pytest.raises(MapError, match=r"template 'o\.tj'.*no 'object'"):
        load_map(path)


# --------------------------------------------------------------------------- commands


def test_commands_take_a_tmj(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _write(tmp_path, "t.tsj", TILESET)
    path = str(_write(tmp_path, "m.tmj", _map({"data": [1] * 6})))
    args = ["--system", "generic", "--token", "speed=30", "--from", "0,0"]
    assert main(["path", path, *args, "--to", "2,1", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["cells"][-1] == [2, 1]
    assert main(["reach", path, *args, "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["cells"]
    out = tmp_path / "r.png"
    assert main(["render", path, "--out", str(out)]) == 0
    assert out.exists()
    scenario = tmp_path / "s.yaml"
    scenario.write_text(
        "name: s\nmap: m.tmj\nsystem: generic\ntokens:\n"
        "  - id: a\n    cell: [0, 0]\n    stats: {speed: 30}\n",
        encoding="utf-8",
    )
    from engine.scenario import load_scenario

    assert load_scenario(str(scenario)).model.path.endswith("m.tmj")
    from engine.viewer.app import open_source

    assert open_source(path, "generic").model.path == path
