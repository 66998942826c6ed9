"""Maps, paths and reaches show themselves in a notebook (engine.report.notebook), and stay
what the API returned before: a MapModel, and plain-looking dicts."""

from __future__ import annotations

import io
import json
import pickle
from pathlib import Path

import numpy as np
import pytest

from engine import api
from engine.mapmodel import MapModel
from engine.movement import MovementGraph
from engine.report.movement import path_json, reach_json
from engine.report.notebook import NotebookMap, PathResult, ReachResult, map_figure
from engine.search import ReachAnswer, find_path
from engine.tiled import load_map as plain_load_map

ROOT = Path(__file__).resolve().parent.parent
ENCOUNTER = str(ROOT / "maps" / "encounter.tmx")
HEX = str(ROOT / "maps" / "hex_pointy.tmx")


def _image(png: bytes) -> tuple[int, int, int]:
    """(width, height, distinct colours) of a PNG."""
    from PIL import Image

    assert png.startswith(b"\x89PNG\r\n\x1a\n")
    with Image.open(io.BytesIO(png)) as im:
        return im.width, im.height, len(im.convert("RGB").getcolors(1 << 16) or [])


@pytest.fixture(scope="module")
def hero() -> tuple[object, object]:
    ws = api.system("whisperspace")
    return ws, ws.token({"phys": 1, "athletics": 2})


def test_a_map_is_still_a_map_and_shows_itself() -> None:
    m = api.load_map(ENCOUNTER)
    assert isinstance(m, MapModel) and isinstance(m, NotebookMap)
    plain = plain_load_map(ENCOUNTER)
    assert type(plain) is MapModel  # the reader itself is untouched
    assert (m.width, m.height, m.spawns, m.exits) == (
        plain.width, plain.height, plain.spawns, plain.exits
    )  # fmt: skip
    assert np.array_equal(m.move_codes(), plain.move_codes())
    w, h, colours = _image(m._repr_png_())
    assert w >= 600 and h >= 400 and colours > 6
    page = m._repr_html_()
    assert "<img src='data:image/png;base64," in page and "encounter.tmx" in page
    assert "ogre" in page and "walk " in page
    # Drawn as the rules read it: one patch in the legend per movement mode on the map.
    fig = m.figure()
    labels = [t.get_text() for t in fig.get_axes()[0].get_legend().get_texts()]
    assert labels == [mode for mode, n in m.mode_counts().items() if n]
    assert pickle.loads(pickle.dumps(m)).width == m.width


def test_a_path_is_its_dict_and_draws_itself_on_its_map(hero: tuple[object, object]) -> None:
    ws, token = hero
    m = api.load_map(ENCOUNTER)
    route = api.path(m, ws, token, (0, 0), (39, 29))
    assert isinstance(route, PathResult) and isinstance(route, dict)
    plain = path_json(find_path(MovementGraph(m, ws, token, None), (0, 0), (39, 29)))  # type: ignore[arg-type]
    assert route == plain and json.dumps(route, sort_keys=True) == json.dumps(plain, sort_keys=True)
    again = api.path(model=m, rules=ws, token=token, start=(0, 0), goal=(39, 29))
    assert again == route and again.model is m
    # The line runs through the path's cells' centres, from a circle to a star.
    ax = route.figure().get_axes()[0]
    (line,) = [ln for ln in ax.get_lines() if ln.get_label() == "path"]
    xy = np.column_stack(line.get_data())
    assert np.allclose(xy, [m.grid.cell_center(tuple(c)) for c in route["cells"]])
    assert "path 0,0 -> 39,29" in ax.get_title()
    with_path = _image(route._repr_png_())
    assert with_path[2] > 6
    assert route._repr_png_() != m._repr_png_()  # the path is drawn
    page = route._repr_html_()
    assert f"{route['turns']:.4g}" in page and "<img" in page and str(len(route["cells"])) in page
    back = pickle.loads(pickle.dumps(route))
    assert back == route and isinstance(back, PathResult)


def test_a_reach_shades_its_cells_by_band(hero: tuple[object, object]) -> None:
    ws, token = hero
    m = api.load_map(ENCOUNTER)
    around = api.reach(m, ws, token, (20, 20))
    assert isinstance(around, ReachResult) and around["cells"] and "tree" in around
    typed = api.reach.__wrapped__(m, ws, token, (20, 20))  # type: ignore[attr-defined]
    assert isinstance(typed, ReachAnswer) and around["cells"] == reach_json(typed)["cells"]
    ax = around.figure().get_axes()[0]
    bands = list(dict.fromkeys(str(c["band"]) for c in around["cells"]))
    labels = [t.get_text() for t in ax.get_legend().get_texts()]
    assert [lb for lb in labels if lb.startswith("reach: ")] == [f"reach: {b}" for b in bands]
    shaded = sum(len(col.get_paths()) for col in ax.collections[-len(bands) :])
    assert shaded == len(around["cells"])
    assert "band walk" in around._repr_html_()
    assert _image(around._repr_png_())[2] > 6


def test_a_hex_map_is_drawn_cell_by_cell() -> None:
    m = api.load_map(HEX)
    mm = api.system("mythmaster")
    token = mm.token({"adaptability": 3, "physical": 3, "climbing": 12, "swimming": 10})
    route = api.path(m, mm, token, (2, 20), (24, 4))
    fig = map_figure(m, path=[tuple(c) for c in route["cells"]])  # type: ignore[misc]
    ax = fig.get_axes()[0]
    cells = ax.collections[0]
    assert len(cells.get_paths()) == m.width * m.height
    assert len(cells.get_paths()[0].vertices) >= 6  # a hexagon (closed), not a square
    w, h, _ = _image(route._repr_png_())
    assert w > h  # a wide map draws wide
