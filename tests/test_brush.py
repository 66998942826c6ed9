"""The terrain brush (posted pygame events, SDL dummy driver) and `tacgrid export`: a map
painted in the viewer, undone and redone, saved in the session, exported as a Tiled map and
read back as the same model."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pygame
import pytest
from conftest import ROOT

from engine.cli import main
from engine.grid import Grid
from engine.mapmodel import MapModel, Terrain
from engine.tiled import load_map
from engine.tiled.export import export_tmx
from engine.tiled.paint import COMMON, paint, palette
from engine.viewer.app import Viewer, open_source
from engine.viewer.launch import open_table

MAP = str(ROOT / "maps" / "chase.tmx")
HEX = str(ROOT / "maps" / "hex_flat.tmx")


@pytest.fixture
def viewer():
    v = Viewer(open_source(MAP, "generic"), size=(1100, 700))
    yield v
    pygame.quit()


def post(kind: int, **kw: Any) -> None:
    pygame.event.post(pygame.event.Event(kind, **kw))


def key(v: Viewer, k: int, mod: int = 0) -> None:
    post(pygame.KEYDOWN, key=k, mod=mod, unicode="")
    v.step()


def drag(v: Viewer, cells: list[tuple[int, int]]) -> None:
    post(pygame.MOUSEBUTTONDOWN, pos=v.cell_screen(cells[0]), button=1)
    for c in cells[1:]:
        post(pygame.MOUSEMOTION, pos=v.cell_screen(c), rel=(0, 0), buttons=(1, 0, 0))
    post(pygame.MOUSEBUTTONUP, pos=v.cell_screen(cells[-1]), button=1)
    v.step()


def pick(v: Viewer, name: str) -> None:
    """Choose the palette's ``name``: its number key among the first nine, else ``]``."""
    names = [t.name for t in v.brush.palette()]
    i = names.index(name)
    if i < 9:
        key(v, pygame.K_1 + i)
    else:
        for _ in range((i - v.brush.choice) % len(names)):
            key(v, pygame.K_RIGHTBRACKET)
    assert v.brush.terrain().name == name


def terrains(model: MapModel) -> list[Terrain]:
    return [model.terrain_at(c) for c in model.grid.cells()]


def same_model(a: MapModel, b: MapModel) -> None:
    assert a.grid == b.grid
    assert terrains(a) == terrains(b)
    assert a.spawns == b.spawns
    assert a.exits == b.exits
    assert [(w.id, w.kind, w.points, w.open) for w in a.walls] == [
        (w.id, w.kind, w.points, w.open) for w in b.walls
    ]
    assert (a.cell_size, a.cell_unit, a.corners, a.system) == (
        b.cell_size,
        b.cell_unit,
        b.corners,
        b.system,
    )


def test_the_palette_is_the_maps_terrains_then_the_common_kinds() -> None:
    model = load_map(MAP)
    pal = palette(model)
    names = [t.name for t in pal]
    assert names[: len({t.name for t in model.terrains})] == list(
        dict.fromkeys(t.name for t in model.terrains)
    )
    assert len(names) == len(set(names))
    assert "wall" in names and "empty" not in names
    from engine import systems

    d6 = palette(model, systems.create("d6"))
    assert "sky" in names and "sky" not in [t.name for t in d6]  # d6 tokens do not fly
    assert "wall" in [t.name for t in d6]


def test_a_drag_paints_one_stroke_that_undoes_and_redoes(viewer: Viewer) -> None:
    v = viewer
    model = v.scenario.model
    before = terrains(model)
    key(v, pygame.K_b)
    assert v.brush.on
    pick(v, "wall")
    # A quick drag from 2,2 to 6,2 (the motion jumps): every cell between is painted.
    drag(v, [(2, 2), (6, 2)])
    painted = [(c, 2) for c in range(2, 7)]
    assert all(model.terrain_at(c).move == "blocked" for c in painted)
    assert len(v.brush.done) == 1 and v.brush.done[0].cells == tuple(painted)
    # The simulation sees it: no path crosses a painted wall (reach stops at it).
    assert v.sim.model.terrain_at((4, 2)).move == "blocked"
    key(v, pygame.K_z, pygame.KMOD_CTRL)
    assert terrains(model) == before and not v.brush.done
    key(v, pygame.K_y, pygame.KMOD_CTRL)
    assert model.terrain_at((4, 2)).name == "wall"
    # Put away, the brush leaves clicks to the table (select / move) and keeps its tint.
    key(v, pygame.K_b)
    assert not v.brush.on
    assert v.brush.painted() == {c: v.brush.terrain() for c in painted}


def test_the_brush_keys_leave_the_tokens_undo_alone_while_it_is_away(viewer: Viewer) -> None:
    v = viewer
    tid = v.selected
    assert tid is not None
    start = v.sim.tokens[tid].state.cell
    goal = (start[0] + 1, start[1])
    v.move_selected(goal)
    assert v.sim.tokens[tid].state.cell != start
    key(v, pygame.K_z, pygame.KMOD_CTRL)  # brush off: the move is undone
    assert v.sim.tokens[tid].state.cell == start


def test_strokes_are_saved_in_the_session_and_come_back(viewer: Viewer, tmp_path: Path) -> None:
    v = viewer
    key(v, pygame.K_b)
    pick(v, "water")
    drag(v, [(10, 10), (10, 13)])
    pick(v, "rough")
    drag(v, [(12, 10), (13, 10)])
    key(v, pygame.K_z, pygame.KMOD_CTRL)  # the rough stroke undone: kept as a redo
    path = str(tmp_path / "painted.tacgrid")
    assert v.table.save(path) == path
    doc = json.loads(Path(path).read_text())
    assert [s["terrain"]["name"] for s in doc["paint"]["strokes"]] == ["water"]
    assert [s["terrain"]["name"] for s in doc["paint"]["undone"]] == ["rough"]
    again = open_table(path, size=(1100, 700))
    m = again.scenario.model
    assert all(m.terrain_at((10, r)).move == "swim" for r in range(10, 14))
    assert m.terrain_at((12, 10)).name != "rough"
    key(again, pygame.K_b)
    key(again, pygame.K_y, pygame.KMOD_CTRL)
    assert m.terrain_at((12, 10)).name == "rough"
    key(again, pygame.K_z, pygame.KMOD_CTRL)
    key(again, pygame.K_z, pygame.KMOD_CTRL)
    assert terrains(m) == terrains(load_map(MAP))


def test_a_painted_map_exported_and_read_back_gives_the_same_model(
    viewer: Viewer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    v = viewer
    key(v, pygame.K_b)
    for name, cells in (("wall", [(3, 3), (8, 3)]), ("cliff", [(20, 5), (20, 9)])):
        pick(v, name)
        drag(v, cells)
    session = str(tmp_path / "s.tacgrid")
    v.table.save(session)
    out = tmp_path / "painted.tmx"
    assert main(["export", session, "--out", str(out), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert Path(doc["tileset"]).read_bytes().startswith(b"\x89PNG")
    same_model(v.scenario.model, load_map(out))
    assert load_map(out).terrain_at((5, 3)).name == "wall"


def _iso_with_walls(tmp_path: Path) -> str:
    import tmxtext

    objects = (
        '<objectgroup id="2" name="w">'
        '<object id="7" name="d" type="door" x="64" y="0"><polyline points="0,0 0,64"/></object>'
        '<object id="9" type="wall" x="0" y="96"><polyline points="0,0 96,0"/></object>'
        "</objectgroup>"
    )
    rows = ["....", "....", "....", "...."]
    path = tmp_path / "iso.tmx"
    tmxtext.write(path, rows, orientation="isometric", tile=(64, 32), objects=objects)
    return str(path)


@pytest.mark.parametrize(
    "source",
    [HEX, str(ROOT / "maps" / "encounter.tmx"), str(ROOT / "maps" / "vtt_room.dd2vtt"), "iso"],
)
def test_export_round_trips_every_shipped_kind_of_map(source: str, tmp_path: Path) -> None:
    model = load_map(_iso_with_walls(tmp_path) if source == "iso" else source)
    assert model.walls or source in (HEX, str(ROOT / "maps" / "encounter.tmx"))
    paint(model, COMMON[3], [(1, 1), (2, 1)])  # water
    paint(model, Terrain("bog", move="swim", cost=3.0, dn=12, height=2.5), [(3, 3)])
    tmx, _ = export_tmx(model, str(tmp_path / "x.tmx"))
    same_model(model, load_map(tmx))


def test_export_of_a_bare_map_with_set_rules(tmp_path: Path, capsys: Any) -> None:
    out = tmp_path / "rules.tmx"
    code = main(["export", MAP, "--out", str(out), "--set", "terrain.wall.move=climb"])
    assert code == 0, capsys.readouterr().err
    back = load_map(out)
    assert {t.move for t in back.terrains if t.name == "wall"} == {"climb"}
    assert main(["export", MAP, "--out", str(tmp_path / "x.png")]) == 2
    assert "ending in .tmx" in capsys.readouterr().err


def test_the_export_of_a_hexagonal_map_draws_hexagons(tmp_path: Path) -> None:
    from engine.tiled.export import tileset_png

    g = Grid("hexagonal", 2, 2, 32, 28, stagger_axis="x", stagger_index="even", hex_side=16)
    model = MapModel.uniform(g, Terrain())
    png = tileset_png(model, [Terrain()])
    surf = pygame.image.load(__import__("io").BytesIO(png))
    assert surf.get_size() == (32, 28)
    assert surf.get_at((0, 0)).a == 0  # a hexagon's corner is outside it
    assert surf.get_at((16, 14)).a == 255


@pytest.mark.parametrize(
    ("paint_doc", "said"),
    [
        ({"strokes": [{"terrain": {"name": "x", "move": "fly"}, "cells": [[1, 1]]}]}, "move"),
        ({"strokes": [{"terrain": {"name": "x"}, "cells": [[999, 1]]}]}, "outside the map"),
        ({"strokes": [{"terrain": {"name": "x", "cost": 0.5}, "cells": []}]}, "cost below 1"),
        ({"strokes": [{"terrain": {"name": "x", "cost": "2"}, "cells": []}]}, "not a number"),
        ({"strokes": [{"terrain": {"name": "x", "colour": 1}, "cells": []}]}, "unknown terrain"),
        ({"strokes": "all"}, "not a list"),
    ],
)
def test_a_damaged_paint_is_one_line_naming_the_session(
    viewer: Viewer, tmp_path: Path, paint_doc: Any, said: str
) -> None:
    from engine.errors import TacgridError

    path = tmp_path / "s.tacgrid"
    viewer.table.save(str(path))
    doc = json.loads(path.read_text())
    doc["paint"] = paint_doc
    path.write_text(json.dumps(doc))
    with pytest.raises(TacgridError) as got:
        open_table(str(path), size=(800, 600))
    message = str(got.value)
    assert "\n" not in message and str(path) in message and said in message
