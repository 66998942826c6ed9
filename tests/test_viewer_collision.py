"""A map's collision layer in the viewer (I): read as rules, it is hidden by default and
its blocked cells hatched (an entry in the legend); I shows the layer as Tiled draws it
and back. `render` keeps drawing every layer as Tiled does."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pygame
import pytest
from conftest import ROOT

from engine.viewer.app import Viewer, open_source
from engine.viewer.collayer import BLOCKED
from engine.viewer.render import load_for_render, render_map

GREEN = (40, 150, 60)
RED = (220, 30, 30)


def _tiles(tmp_path: Path) -> str:
    """Two one-tile tilesets: gid 1 plain green ground, gid 2 the collision layer's red."""
    for name, colour in (("ground.png", GREEN), ("collision.png", RED)):
        s = pygame.Surface((32, 32))
        s.fill(colour)
        pygame.image.save(s, str(tmp_path / name))
    return (
        '<tileset firstgid="1" name="ground" tilewidth="32" tileheight="32" tilecount="1" '
        'columns="1"><image source="ground.png" width="32" height="32"/></tileset>'
        '<tileset firstgid="2" name="collision" tilewidth="32" tileheight="32" tilecount="1" '
        'columns="1"><image source="collision.png" width="32" height="32"/></tileset>'
    )


def _map(tmp_path: Path, extra: str) -> str:
    """An 8x6 map of green ground, plus ``extra`` layers; written, its path returned."""
    w, h = 8, 6
    ground = ",\n".join(",".join("1" for _ in range(w)) for _ in range(h))
    text = (
        '<?xml version="1.0" encoding="UTF-8"?>\n'
        f'<map version="1.10" orientation="orthogonal" width="{w}" height="{h}" '
        f'tilewidth="32" tileheight="32" infinite="0">{_tiles(tmp_path)}'
        f'<layer id="1" name="Ground1" width="{w}" height="{h}">'
        f'<data encoding="csv">{ground}</data></layer>{extra}</map>\n'
    )
    p = tmp_path / "m.tmx"
    p.write_text(text, encoding="utf-8")
    return str(p)


#: The Mana World's way: a tile layer "Collision" painted red where nothing passes.
BLOCKED_CELLS = [(2, 1), (3, 1), (4, 1), (2, 2), (2, 3), (6, 4)]


def _collision_layer(visible: bool = True) -> str:
    rows = [",".join("2" if (c, r) in BLOCKED_CELLS else "0" for c in range(8)) for r in range(6)]
    vis = "" if visible else ' visible="0"'
    data = ",\n".join(rows)
    return (
        f'<layer id="2" name="Collision" width="8" height="6"{vis}>'
        f'<data encoding="csv">{data}</data></layer>'
    )


def _viewer(path: str, sets: dict[str, str] | None = None) -> Viewer:
    v = Viewer(open_source(path, sets=sets), size=(1100, 700))
    v.selected = None  # no reach tint over the cells looked at
    v.camera.x = v.camera.y = 0.0
    v.camera.zoom = 1.0
    v.step()
    return v


def press(v: Viewer, key: int) -> None:
    pygame.event.post(pygame.event.Event(pygame.KEYDOWN, key=key, mod=0, unicode=""))
    v.step()


def _patch(v: Viewer, cell: tuple[int, int]) -> np.ndarray:
    """The screen pixels inside ``cell`` (a 2-px margin left), as (n, 3) ints."""
    x, y = (round(t) for t in v.cell_screen(cell))
    shot = pygame.surfarray.array3d(v.screen)
    return shot[x - 13 : x + 14, y - 13 : y + 14].reshape(-1, 3).astype(np.int64)


def _red(patch: np.ndarray) -> int:
    """How many pixels are the collision layer's red."""
    return int(np.count_nonzero(np.all(patch == RED, axis=1)))


def _hatched(patch: np.ndarray) -> bool:
    """Light hatch lines on a shaded ground: bright pixels and dark ones, none red."""
    bright = np.all(patch > 180, axis=1)
    return bool(bright.any()) and bool((~bright).any()) and _red(patch) == 0


@pytest.fixture(autouse=True)
def _pygame():
    yield
    pygame.quit()


def test_the_collision_layer_is_hidden_its_cells_hatched_and_i_draws_it(tmp_path: Path) -> None:
    v = _viewer(_map(tmp_path, _collision_layer()))
    blocked, open_cell = (3, 1), (5, 2)
    # by default: no red anywhere on the map; the blocked cells hatched, open ground plain
    assert _red(_patch(v, blocked)) == 0 and _hatched(_patch(v, blocked))
    assert {tuple(p) for p in _patch(v, open_cell).tolist()} == {GREEN}
    vw = v.view_size[0]
    assert _red(pygame.surfarray.array3d(v.screen)[:vw].reshape(-1, 3)) == 0
    legend = [(kind, t) for kind, _, t in v.legend() if kind in ("blocked", "layer")]
    assert legend == [("blocked", "blocked by layer Collision: 6 cells (I: layer as drawn)")]
    panel = pygame.surfarray.array3d(v.screen)[vw:].reshape(-1, 3)
    assert BLOCKED in {tuple(c) for c in panel.tolist()}  # the legend's swatch
    # I: the layer as Tiled draws it (every pixel of a blocked cell red), no hatch
    press(v, pygame.K_i)
    assert v.collision.drawn
    patch = _patch(v, blocked)
    assert _red(patch) == len(patch)
    assert {tuple(p) for p in _patch(v, open_cell).tolist()} == {GREEN}
    assert [k for k, _, _ in v.legend()] == ["layer"]
    assert "drawn as in Tiled" in v.message
    # I again: back to the hatch
    press(v, pygame.K_i)
    assert _red(_patch(v, blocked)) == 0 and _hatched(_patch(v, blocked))
    # the rules do not change with the view
    assert v.model.terrain_at(blocked).move == "blocked"


def test_render_draws_the_collision_layer_as_tiled_does(tmp_path: Path) -> None:
    model, tiled = load_for_render(_map(tmp_path, _collision_layer()))
    pic = render_map(model, tiled)
    for c, r in BLOCKED_CELLS:
        assert tuple(pic.get_at((32 * c + 16, 32 * r + 16)))[:3] == RED
    assert tuple(pic.get_at((32 * 5 + 16, 32 * 2 + 16)))[:3] == GREEN


def test_a_collision_layer_the_file_hides_is_drawn_on_i(tmp_path: Path) -> None:
    # 009-1's Collision layer is hidden in the file: the hatch shows its cells, I the layer
    v = _viewer(_map(tmp_path, _collision_layer(visible=False)))
    assert _hatched(_patch(v, (2, 3)))
    press(v, pygame.K_i)
    patch = _patch(v, (2, 3))
    assert _red(patch) == len(patch)


def test_an_object_collision_layer_is_hidden_and_its_cells_hatched(tmp_path: Path) -> None:
    shapes = (
        '<objectgroup id="3" name="collisions" color="#ff0000">'
        '<object id="1" x="64" y="64" width="64" height="32"/></objectgroup>'
    )
    v = _viewer(_map(tmp_path, shapes))
    assert v.collision.names(v.model) == frozenset({"collisions"})
    # the rectangle's outline runs along the top edge of cells (2, 2) and (3, 2)
    x, y = (round(t) for t in v.cell_screen((2, 2)))
    shot = pygame.surfarray.array3d(v.screen)
    edge = shot[x - 12 : x + 12, y - 17 : y - 14].reshape(-1, 3).astype(np.int64)
    reddish = (edge[:, 0] - (edge[:, 1] + edge[:, 2]) / 2) > 100
    assert not reddish.any()
    assert _hatched(_patch(v, (2, 2))) and _hatched(_patch(v, (3, 2)))
    press(v, pygame.K_i)
    shot = pygame.surfarray.array3d(v.screen)
    edge = shot[x - 12 : x + 12, y - 17 : y - 14].reshape(-1, 3).astype(np.int64)
    assert ((edge[:, 0] - (edge[:, 1] + edge[:, 2]) / 2) > 100).any()  # the layer's outline
    assert not _hatched(_patch(v, (2, 2)))


def test_opened_collision_cells_are_not_hatched(tmp_path: Path) -> None:
    v = _viewer(_map(tmp_path, _collision_layer()), {"terrain.collision.move": "walk"})
    assert v.model.terrain_at((3, 1)).move == "walk"
    # still a collision layer (hidden), but nothing it marks blocks: nothing hatched
    assert _red(_patch(v, (3, 1))) == 0
    assert {tuple(p) for p in _patch(v, (3, 1)).tolist()} == {GREEN}
    assert [t for k, _, t in v.legend() if k == "blocked"] == [
        "blocked by layer Collision: 0 cells (I: layer as drawn)"
    ]


def test_a_map_without_a_collision_layer_says_so_on_i() -> None:
    v = Viewer(open_source(str(ROOT / "scenarios" / "chase.yaml")), size=(1100, 700))
    press(v, pygame.K_i)
    assert not v.collision.drawn and v.message == "this map has no collision layer (I)"
    assert not any(k in ("blocked", "layer") for k, _, _ in v.legend())
    assert v.map_surface.hide == v.map_surface.show == frozenset()


def test_help_and_docs_name_the_collision_key() -> None:
    from engine.viewer.panel import HELP

    keys = [k for k, _ in HELP]
    assert keys.count("I") == 1
    doc = (ROOT / "docs" / "viewer.md").read_text(encoding="utf-8")
    assert "| `I` |" in doc
