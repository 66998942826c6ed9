"""Doors in the GM's viewer (SDL dummy driver, posted events): a click on a door opens or
shuts it as an undoable ``door`` event, the reach overlay and paths follow it, the door is
drawn as it stands, and a saved session keeps it."""

from __future__ import annotations

import os
from pathlib import Path

import pygame
import pytest
import tmxtext

from engine.viewer.app import Viewer, open_source
from engine.viewer.launch import open_table

T = 32


def _scenario(tmp_path: Path) -> str:
    # A wall down x = 3 tiles with a door at row 2; a walker on the west side.
    objs = (
        f'<object id="1" class="wall" x="{3 * T}" y="0"><polyline points="0,0 0,{2 * T}"/></object>'
        f'<object id="2" name="gate" class="door" x="{3 * T}" y="{2 * T}">'
        f'<polyline points="0,0 0,{T}"/></object>'
        f'<object id="3" class="wall" x="{3 * T}" y="{3 * T}"><polyline points="0,0 0,{3 * T}"/>'
        "</object>"
    )
    tmxtext.write(
        tmp_path / "m.tmx",
        ["......"] * 6,
        objects=f'<objectgroup id="5" name="walls">{objs}</objectgroup>',
        properties={"diagonals": "none"},
    )
    p = tmp_path / "s.yaml"
    p.write_text(
        "map: m.tmx\nsystem: generic\nturns: 5\n"
        "tokens:\n  - {id: w, policy: idle, cell: [1, 2], stats: {speed: 15}}\n",
        encoding="utf-8",
    )
    return str(p)


@pytest.fixture
def viewer(tmp_path: Path):
    v = Viewer(open_source(_scenario(tmp_path)), size=(900, 600))
    yield v
    pygame.quit()


def click(v: Viewer, pos: tuple[float, float]) -> None:
    pygame.event.post(pygame.event.Event(pygame.MOUSEBUTTONDOWN, pos=pos, button=1, mod=0))
    pygame.event.post(pygame.event.Event(pygame.MOUSEBUTTONUP, pos=pos, button=1, mod=0))
    v.step()


def door_point(v: Viewer) -> tuple[float, float]:
    return v.camera.to_screen(3 * T, 2.5 * T)


def reach_cells(v: Viewer) -> set[tuple[int, int]]:
    return {cell for cell, _, _ in v.reach_of("w").answer.cells}


def test_click_a_door_to_open_and_shut_it(viewer: Viewer) -> None:
    v = viewer
    v.select("w")
    v.step()
    # speed 15 = 3 cells a turn: through the shut door nothing east of the wall is near
    assert (3, 2) not in reach_cells(v)
    shut_pixel = tuple(v.screen.get_at(tuple(int(x) for x in door_point(v))))[:3]
    click(v, door_point(v))
    assert v.sim.door_open(2) and v.sim.events[-1]["type"] == "door"
    assert v.message == "gate opened"
    assert {(3, 2), (4, 2)} <= reach_cells(v)  # two steps past the open door
    v.step()
    open_pixel = tuple(v.screen.get_at(tuple(int(x) for x in door_point(v))))[:3]
    assert open_pixel != shut_pixel  # drawn as it stands
    # a move through it, then undo both
    assert v.move_selected((4, 2))
    assert v.sim.tokens["w"].state.cell == (4, 2)
    v.do_undo()
    v.do_undo()
    assert not v.sim.door_open(2) and v.sim.tokens["w"].state.cell == (1, 2)
    assert (3, 2) not in reach_cells(v)
    v.do_redo()
    assert v.sim.door_open(2)


def test_a_click_beside_a_door_still_moves_the_token(viewer: Viewer) -> None:
    v = viewer
    v.select("w")
    click(v, v.cell_screen((1, 3)))  # a cell centre, far from the door's line
    assert not v.sim.door_open(2)
    assert v.sim.tokens["w"].state.cell == (1, 3)


def test_a_session_keeps_its_doors(viewer: Viewer, tmp_path: Path) -> None:
    v = viewer
    click(v, door_point(v))
    path = str(tmp_path / "doors.tacgrid")
    v.table.save(path)
    assert os.path.exists(path)
    w = open_table(path, size=(900, 600))
    assert w.sim.door_open(2) and w.sim.events == v.sim.events
    w.do_undo()
    assert not w.sim.door_open(2)


def test_a_door_beside_a_token_is_clicked_not_the_token(viewer: Viewer) -> None:
    v = viewer
    assert v.move_selected((2, 2))  # the walker stands right beside the door
    x, y = door_point(v)
    # the click falls on the door's line, in the token's cell
    assert v.cell_at_screen(x - 2, y) == (2, 2)
    click(v, (x - 2, y))
    assert v.sim.door_open(2) and v.message == "gate opened"
    assert v.selected == "w" and v.sim.tokens["w"].state.cell == (2, 2)
    # the token's middle still picks the token (a second token selected, then back)
    v.select(None)
    click(v, v.cell_screen((2, 2)))
    assert v.selected == "w" and v.sim.door_open(2)
