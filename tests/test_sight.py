"""The ruler's straight line (engine.sight): its length in cells and in the map's unit, the
walls and shut doors that cut it (not windows, not open doors) and the blocked cells it
passes; and in the viewer, a Shift+drag (posted events) shows it in the panel."""

from __future__ import annotations

import math
from fractions import Fraction
from pathlib import Path

import pygame
import pytest
import tmxtext

from engine.grid import Grid
from engine.mapmodel import MapModel
from engine.sight import sightline
from engine.terrain import Terrain
from engine.tiled import read_tiled
from engine.viewer.app import Viewer, open_source
from engine.walls import with_doors

T = 32


def _walled(tmp_path: Path) -> Path:
    # a wall down x = 3 tiles (rows 0-1), a door "gate" at row 2, a window at row 3,
    # a wall again from row 4; a blocked cell at (1, 5)
    objs = (
        f'<object id="1" class="wall" x="{3 * T}" y="0"><polyline points="0,0 0,{2 * T}"/></object>'
        f'<object id="2" name="gate" class="door" x="{3 * T}" y="{2 * T}">'
        f'<polyline points="0,0 0,{T}"/></object>'
        f'<object id="3" class="window" x="{3 * T}" y="{3 * T}"><polyline points="0,0 0,{T}"/>'
        "</object>"
        f'<object id="4" class="wall" x="{3 * T}" y="{4 * T}"><polyline points="0,0 0,{2 * T}"/>'
        "</object>"
    )
    return tmxtext.write(
        tmp_path / "m.tmx",
        ["......", "......", "......", "......", "......", ".#...."],
        objects=f'<objectgroup id="5" name="walls">{objs}</objectgroup>',
    )


def test_length_in_cells_and_feet() -> None:
    model = MapModel.uniform(Grid("orthogonal", 9, 9, 32, 32), Terrain())
    line = sightline(model, (0, 0), (3, 4), Fraction(5), "ft")
    assert line.cells == 5.0 and line.distance == 25.0 and line.clear
    assert line.text() == "straight 25 ft (5 cells): clear"
    # hex: neighbours are one cell apart, whatever the tile's pixel size
    hexes = MapModel.uniform(
        Grid("hexagonal", 9, 9, 28, 32, stagger_axis="x", stagger_index="odd", hex_side=14),
        Terrain(),
    )
    for n in hexes.grid.neighbours((4, 4)):
        assert math.isclose(sightline(hexes, (4, 4), n, Fraction(5), "ft").cells, 1.0)


def test_walls_and_shut_doors_cut_it_windows_and_open_doors_do_not(tmp_path: Path) -> None:
    model = read_tiled(str(_walled(tmp_path))).model
    ft = Fraction(5), "ft"
    assert sightline(model, (1, 0), (5, 0), *ft).walls == ("wall 1",)
    shut = sightline(model, (1, 2), (5, 2), *ft)
    assert shut.walls == ("gate",) and not shut.clear
    assert shut.text() == "straight 20 ft (4 cells): cut by 1 wall (gate)"
    opened = with_doors(model, {2: True})
    assert sightline(opened, (1, 2), (5, 2), *ft).clear
    assert sightline(model, (1, 3), (5, 3), *ft).clear  # through the window
    # a blocked cell on the way; the line from it or to it is not cut by itself
    past = sightline(model, (0, 5), (2, 5), *ft)
    assert past.blocked == ((1, 5),) and "1 blocked cell" in past.text()
    assert sightline(model, (0, 5), (1, 5), *ft).clear


@pytest.fixture
def viewer(tmp_path: Path):
    _walled(tmp_path)
    scenario = tmp_path / "s.yaml"
    scenario.write_text(
        "map: m.tmx\nsystem: generic\nturns: 5\n"
        "tokens:\n  - {id: w, policy: idle, cell: [1, 1], stats: {speed: 30}}\n",
        encoding="utf-8",
    )
    v = Viewer(open_source(str(scenario)), size=(900, 600))
    yield v
    pygame.quit()


def _drag(v: Viewer, a: tuple[int, int], b: tuple[int, int]) -> None:
    pa, pb = v.cell_screen(a), v.cell_screen(b)
    shift = pygame.KMOD_SHIFT
    pygame.event.post(pygame.event.Event(pygame.MOUSEBUTTONDOWN, pos=pa, button=1, mod=shift))
    pygame.event.post(pygame.event.Event(pygame.MOUSEMOTION, pos=pb, rel=(0, 0), buttons=(1, 0, 0)))
    pygame.event.post(pygame.event.Event(pygame.MOUSEBUTTONUP, pos=pb, button=1, mod=shift))
    v.step()


def test_the_ruler_shows_the_straight_line_and_what_cuts_it(viewer: Viewer) -> None:
    v = viewer
    _drag(v, (1, 2), (5, 2))
    texts = [t for t, _ in v.panel_text]
    assert "  straight 20 ft (4 cells): cut by 1 wall (gate)" in texts, texts
    _drag(v, (1, 3), (4, 3))
    texts = [t for t, _ in v.panel_text]
    assert "  straight 15 ft (3 cells): clear" in texts, texts
