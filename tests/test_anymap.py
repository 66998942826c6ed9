"""Rules for any map: the collision conventions of game maps, `--set terrain.*` on a bare
map, and every spawn a token (unique ids)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from conftest import CORPUS

from engine.cli import main
from engine.scenario import Scenario
from engine.tiled import load_map

#: The Mana World's client data (themanaworld/tmwa-client-data: maps/, tilesets/,
#: graphics/tiles/), in the corpus under this folder.
TMW = CORPUS / "the-mana-world"


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def _map(rows: list[str], *, tileset: str = "", layers: str = "", props: str = "") -> str:
    """A .tmx of ``rows`` (digits: gids; '.' no tile) on layer 'ground' plus extra XML."""
    h, w = len(rows), len(rows[0])
    data = ",\n".join(",".join("0" if ch == "." else ch for ch in row) for row in rows)
    return (
        '<?xml version="1.0" encoding="UTF-8"?>\n'
        f'<map version="1.10" orientation="orthogonal" width="{w}" height="{h}" '
        f'tilewidth="32" tileheight="32" infinite="0">{props}{tileset}'
        f'<layer id="1" name="ground" width="{w}" height="{h}">'
        f'<data encoding="csv">{data}</data></layer>{layers}</map>\n'
    )


#: Tile 1 plain ground, tile 2 solid (property `solid`), tile 3 `collides` with its own move.
TILESET = (
    '<tileset firstgid="1" name="t" tilewidth="32" tileheight="32" tilecount="3" columns="3">'
    '<tile id="1"><properties><property name="solid" type="bool" value="true"/>'
    "</properties></tile>"
    '<tile id="2" type="bog"><properties><property name="collides" value="true"/>'
    '<property name="move" value="swim"/></properties></tile>'
    "</tileset>"
)


def _layer(name: str, rows: list[str], lid: int = 2) -> str:
    h, w = len(rows), len(rows[0])
    data = ",\n".join(",".join("0" if ch == "." else ch for ch in row) for row in rows)
    return (
        f'<layer id="{lid}" name="{name}" width="{w}" height="{h}">'
        f'<data encoding="csv">{data}</data></layer>'
    )


def _write(tmp_path: Path, text: str, name: str = "m.tmx") -> Path:
    p = tmp_path / name
    p.write_text(text, encoding="utf-8")
    return p


def _moves(model: Any) -> list[str]:
    return [
        "".join(
            "#" if model.terrain_at((c, r)).move == "blocked" else "." for c in range(model.width)
        )
        for r in range(model.height)
    ]


def test_a_tile_property_blocks_its_cells(tmp_path: Path) -> None:
    p = _write(tmp_path, _map(["1121", "1311"], tileset=TILESET))
    model = load_map(p)
    assert _moves(model) == ["..#.", "...."]  # tile 3 sets its own move: that wins
    assert model.terrain_at((2, 0)).name == "collision"
    assert model.terrain_at((1, 1)).move == "swim"
    (hit,) = model.collision
    assert (hit.convention, hit.source, hit.cells) == ("tile-property", "solid", 1)
    off = load_map(p, collision="layer,objects")
    assert _moves(off) == ["....", "...."] and off.collision == ()


@pytest.mark.parametrize("name", ["Collision", "collisions", "BLOCKED"])
def test_a_collision_layer_blocks_its_painted_cells(tmp_path: Path, name: str) -> None:
    layer = _layer(name, ["..2.", "2..."])
    p = _write(tmp_path, _map(["1111", "1111"], tileset=TILESET, layers=layer))
    model = load_map(p)
    assert _moves(model) == ["..#.", "#..."]
    assert {t.name for t in model.terrains} == {"open", "collision"}
    (hit,) = model.collision
    assert (hit.convention, hit.source, hit.cells) == ("layer", name, 2)
    # Its tiles (here the solid tile 2) are no terrain: the layer means "blocked" only.
    assert not any(c.convention == "tile-property" for c in model.collision)


def test_a_map_property_or_the_argument_turns_a_convention_off(tmp_path: Path) -> None:
    layer = _layer("Collision", ["..1.", "1..."])
    off = '<properties><property name="collision" value="none"/></properties>'
    p = _write(tmp_path, _map(["1111", "1111"], tileset=TILESET, layers=layer, props=off))
    assert _moves(load_map(p)) == ["....", "...."]
    assert _moves(load_map(p, collision="layer")) == ["..#.", "#..."]  # the argument wins
    bad = _write(tmp_path, _map(["11"], props=off.replace("none", "layers")), "bad.tmx")
    with pytest.raises(Exception, match="collision='layers'.*use all, none or a comma list"):
        load_map(bad)


def test_an_object_layer_named_collision_blocks_the_cells_its_shapes_cover(
    tmp_path: Path,
) -> None:
    objects = (
        '<objectgroup id="3" name="Collision">'
        '<object id="1" x="32" y="0" width="64" height="32"/>'  # cells 1,0 and 2,0
        '<object id="2" x="0" y="40"><polyline points="0,0 100,0"/></object>'  # a line: nothing
        "</objectgroup>"
        '<objectgroup id="4" name="other"><object id="3" x="0" y="32" width="32" height="32"/>'
        "</objectgroup>"
    )
    p = _write(tmp_path, _map(["1111", "1111"], tileset=TILESET, layers=objects))
    model = load_map(p)
    assert _moves(model) == [".##.", "...."]
    (hit,) = model.collision
    assert (hit.convention, hit.source, hit.cells) == ("objects", "Collision", 2)


def test_info_says_which_convention_it_applied(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    layer = _layer("Collision", ["..1.", "1..."])
    p = _write(tmp_path, _map(["1111", "1111"], tileset=TILESET, layers=layer))
    code, out, _ = run(capsys, "info", str(p), "--json")
    assert code == 0
    doc = json.loads(out)
    assert doc["collision"] == [{"convention": "layer", "source": "Collision", "cells": 2}]
    assert doc["cells"]["blocked"] == 2
    code, out, _ = run(capsys, "info", str(p))
    assert "collision layer 'Collision': 2 cells blocked" in out
    code, out, _ = run(capsys, "info", str(p), "--json", "--set", "map.collision=none")
    assert json.loads(out)["collision"] == [] and json.loads(out)["cells"]["blocked"] == 0


def test_set_terrain_on_a_bare_map_under_the_generic_system(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    # A wall of collision across the map but for one gap at the bottom row.
    layer = _layer("Collision", [".1..", ".1..", "...."])
    p = _write(tmp_path, _map(["1111", "1111", "1111"], tileset=TILESET, layers=layer))
    base = ["path", str(p), "--system", "generic", "--from", "0,0", "--to", "2,0", "--json"]
    code, out, err = run(capsys, *base)
    assert code == 0, err
    around = json.loads(out)
    assert [1, 0] not in [s["cell"] for s in around["steps"]]
    code, out, err = run(capsys, *base, "--set", "terrain.collision.move=walk")
    assert code == 0, err
    through = json.loads(out)
    assert len(through["steps"]) < len(around["steps"])
    # A rule setting still goes to the system, a map edit to the map, in one command.
    code, out, err = run(capsys, *base, "--set", "terrain.open.cost=2")
    assert code == 0, err
    assert json.loads(out)["turns_exact"] != around["turns_exact"]
    code, _, err = run(capsys, *base, "--set", "terrain.lava.cost=2")
    assert code == 2
    assert "no terrain 'lava'" in err and "terrains: collision, open" in err
    code, out, err = run(
        capsys,
        "reach",
        str(p),
        "--system",
        "generic",
        "--from",
        "0,0",
        "--json",
        "--set",
        "terrain.collision.move=walk",
    )
    assert code == 0, err
    assert [1, 0] in [c["cell"] for c in json.loads(out)["cells"]]


def test_the_viewer_map_takes_set_terrain_and_every_spawn_becomes_a_token(
    tmp_path: Path,
) -> None:
    objects = (
        '<objectgroup id="3" name="spawns">'
        + "".join(
            f'<object id="{i + 1}" name="{n}" type="spawn" x="{16 + 32 * i}" y="16"><point/></object>'
            for i, n in enumerate(["Bat", "Bat", "Bat-2", "Bat", "Rat"])
        )
        + "</objectgroup>"
    )
    layer = _layer("Collision", ["......", "111111"])
    p = _write(tmp_path, _map(["111111", "111111"], tileset=TILESET, layers=layer + objects))
    ids = [s.id for s in load_map(p).spawns]
    assert ids == ["Bat", "Bat-3", "Bat-2", "Bat-4", "Rat"]  # Bat-2 was taken by the map
    sc = Scenario.for_map(str(p), "generic", {"terrain.collision.move": "crawl"})
    assert [t.id for t in sc.tokens] == ids
    assert sc.model.terrain_at((0, 1)).move == "crawl"


@pytest.mark.corpus
@pytest.mark.parametrize(
    ("name", "blocked", "spawns"),
    [("009-1", 7377, 6), ("011-6", 77903, 52)],
)
def test_the_mana_worlds_maps_load_with_their_collision_cells_blocked(
    name: str, blocked: int, spawns: int
) -> None:
    path = TMW / "maps" / f"{name}.tmx"
    if not path.exists():
        pytest.skip(f"no {path} (The Mana World's client data, themanaworld/tmwa-client-data)")
    model = load_map(path)
    (hit,) = model.collision
    assert (hit.convention, hit.source, hit.cells) == ("layer", "Collision", blocked)
    assert model.mode_counts()["blocked"] == blocked
    collision = next(lay for lay in model.layers if lay.name == "Collision")
    import numpy as np

    painted = np.asarray(collision.gids) != 0
    assert int(np.count_nonzero(painted)) == blocked
    assert (model.move_codes()[painted] == 7).all()  # MODES.index("blocked")
    ids = [s.id for s in model.spawns]
    assert len(ids) == len(set(ids)) == spawns
    if name == "011-6":
        assert sum(i == "Bandit" or i.startswith("Bandit-") for i in ids) == 10
        assert "Bandit-10" in ids and "Bat-7" in ids
        tokens = Scenario.for_map(str(path), "generic").tokens
        assert len(tokens) == 52
        # Spawn areas start on walls: each token stands on the area's first open cell.
        assert all(model.terrain_at(s.cell).move != "blocked" for s in model.spawns)


@pytest.mark.corpus
def test_a_game_jams_hex_map_takes_rules_by_its_terrain_names(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """cherry-jam's hex maps (Yanrishatum/cherry-jam, ld45) name their tiles by a `type`
    property and use no collision convention: a GM gives them rules with --set."""
    path = CORPUS / "cherry-jam" / "ld45" / "res" / "maps" / "hex-t1-00.tmx"
    if not path.exists():
        pytest.skip(f"no {path} (cherry-jam's ld45 maps, Yanrishatum/cherry-jam)")
    assert load_map(path).collision == ()
    code, out, err = run(capsys, "info", str(path), "--json", "--set", "terrain.Ocean.move=blocked")
    assert code == 0, err
    doc = json.loads(out)
    assert doc["cells"]["blocked"] == doc["terrain"]["Ocean"] == 3


def test_a_spawn_area_puts_its_token_on_its_first_open_cell(tmp_path: Path) -> None:
    area = (
        '<objectgroup id="3" name="spawns">'
        '<object id="1" name="Rat" type="spawn" x="0" y="0" width="96" height="64"/>'
        "</objectgroup>"
    )
    layer = _layer("Collision", ["11..", "...."])
    p = _write(tmp_path, _map(["1111", "1111"], tileset=TILESET, layers=layer + area))
    assert [s.cell for s in load_map(p).spawns] == [(2, 0)]


def test_a_sessions_bare_map_keeps_its_set_rules(tmp_path: Path) -> None:
    import pygame

    from engine.viewer.app import Viewer
    from engine.viewer.launch import open_table

    layer = _layer("Collision", [".1..", "...."])
    p = _write(tmp_path, _map(["1111", "1111"], tileset=TILESET, layers=layer))
    sets = {"terrain.collision.move": "crawl"}
    v = Viewer(Scenario.for_map(str(p), "generic", sets), size=(800, 600))
    try:
        saved = v.table.save(str(tmp_path / "bare.tacgrid"))
        assert saved is not None
        again = open_table(saved, size=(800, 600))
        assert again.scenario.model.terrain_at((1, 0)).move == "crawl"
        assert again.scenario.map_sets == sets
    finally:
        pygame.quit()
