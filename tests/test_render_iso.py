"""Isometric maps with odd tile sizes (issue 42, work bounded by what is read).

Tiled's isometric loop lands such tiles on half pixels; :func:`render._iso_walk` replays
that loop over the whole map (the plain twin) and :func:`render._iso_anchors` works the same
anchors out in closed form for just the cells a band or viewer chunk draws. These tests hold
the two equal and count the cells whose anchors a banded render works out.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pygame
import pytest
from test_render import tile_sheet, write_map

from engine.grid import Grid
from engine.viewer import render
from engine.viewer.render import load_for_render, output_size, render_map, tile_anchors

TILES = [(33, 17), (31, 17), (33, 16), (34, 17), (34, 18), (64, 32), (65, 31), (7, 5), (1, 1)]
SIZES = [(1, 1), (8, 6), (6, 8), (13, 29), (40, 17)]


def margins_for(tw: int, th: int) -> list[tuple[int, int, int, int]]:
    """No tileset, a sheet of the grid's tile, a taller one with offsets, an odd one."""
    return [(0, 0, 0, 0), (0, th, tw, 0), (3, th + 5, tw + 2, 4), (7, 2, 1, 9)]


@pytest.mark.parametrize("tile", TILES, ids=lambda t: f"{t[0]}x{t[1]}")
@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"map{s[0]}x{s[1]}")
def test_closed_form_anchors_equal_tileds_loop(
    tile: tuple[int, int], size: tuple[int, int]
) -> None:
    grid = Grid("isometric", size[0], size[1], *tile)
    cols, rows = (a.ravel() for a in np.meshgrid(np.arange(size[0]), np.arange(size[1])))
    for margins in margins_for(*tile):
        walk = render._iso_walk(grid, margins)
        xs, ys, visited = render._iso_anchors(grid, margins, cols, rows)
        listed = (a.tolist() for a in (cols, rows, xs, ys, visited))
        got = {(c, r): (x, y) for c, r, x, y, v in zip(*listed, strict=True) if v}
        assert got == walk, margins


def test_closed_form_covers_cells_the_loop_skips() -> None:
    # On a long thin map Tiled's loop stops short of a far corner cell or two (it bounds
    # rows by the map's pixel rectangle): those keep Grid.cell_origin, in both ways.
    grid = Grid("isometric", 12, 3, 33, 17)
    margins = (0, 0, 0, 0)
    walk = render._iso_walk(grid, margins)
    cols, rows = (a.ravel() for a in np.meshgrid(np.arange(12), np.arange(3)))
    _, _, visited = render._iso_anchors(grid, margins, cols, rows)
    assert 0 < len(walk) < 36
    assert int(visited.sum()) == len(walk)


@pytest.mark.parametrize("tile", [(33, 17), (31, 16), (34, 18)], ids=lambda t: f"{t[0]}x{t[1]}")
def test_tile_anchors_of_some_cells_equal_the_whole_walk(tile: tuple[int, int]) -> None:
    grid = Grid("isometric", 30, 20, *tile)
    rng = np.random.default_rng(5)
    cols, rows = rng.integers(0, 30, 200), rng.integers(0, 20, 200)
    xs, ys = tile_anchors(grid, cols, rows)
    if tile[0] % 2 or tile[1] % 2:
        walk = render._iso_walk(grid, render._draw_margins([]))
        origin = {
            (c, r): (grid.cell_origin((c, r))[0], grid.cell_origin((c, r))[1] + tile[1])
            for c, r in zip(cols.tolist(), rows.tolist(), strict=True)
        }
        want = [walk.get(cr, origin[cr]) for cr in zip(cols.tolist(), rows.tolist(), strict=True)]
    else:
        want = [
            (grid.cell_origin((c, r))[0], grid.cell_origin((c, r))[1] + tile[1])
            for c, r in zip(cols.tolist(), rows.tolist(), strict=True)
        ]
    assert list(zip(xs.tolist(), ys.tolist(), strict=True)) == want


def banded_work(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, n: int) -> tuple[int, int]:
    """(anchors worked out, cells drawn) drawing an n x n map of 33x17 tiles in bands of 20
    pixel rows."""
    rows = [[((c + r) % 4) + 1 for c in range(n)] for r in range(n)]
    path = write_map(
        tmp_path / f"odd{n}.tmx", "isometric", (n, n), (33, 17), [("g", rows, "")],
        sheet_tile=(33, 21),
    )  # fmt: skip
    model, tmx = load_for_render(path)
    worked, drawn = [0], [0]
    plain_walk, closed_form, anchors = render._iso_walk, render._iso_anchors, tile_anchors

    def counted_walk(grid: Grid, margins: tuple[int, int, int, int]) -> dict:  # type: ignore[type-arg]
        worked[0] += grid.width * grid.height
        return plain_walk(grid, margins)

    def counted_anchors(grid: Grid, margins, cols, rows):  # type: ignore[no-untyped-def]
        worked[0] += len(cols)
        return closed_form(grid, margins, cols, rows)

    def counted_cells(grid: Grid, cols, rows, tilesets=None):  # type: ignore[no-untyped-def]
        drawn[0] += len(cols)
        return anchors(grid, cols, rows, tilesets)

    with monkeypatch.context() as patch:
        patch.setattr(render, "_iso_walk", counted_walk)
        patch.setattr(render, "_iso_anchors", counted_anchors)
        patch.setattr(render, "tile_anchors", counted_cells)
        width, height = output_size(model.grid)
        for y in range(0, height, 20):
            render_map(model, tmx, area=(0, y, width, min(20, height - y)))
    return worked[0], drawn[0]


def test_banded_work_grows_with_the_cells_not_bands_times_cells(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Anchors are worked out once per cell a band draws (not Tiled's whole loop per band),
    and a band draws the diagonal strip of cells its pixels show (not its row-and-column
    window, nearly the whole map): twice the map's side, twice the bands, four times the
    work, where bands x cells would be eight."""
    small_worked, small = banded_work(tmp_path, monkeypatch, 40)
    big_worked, big = banded_work(tmp_path, monkeypatch, 80)
    assert (small_worked, big_worked) == (small, big)
    assert 0 < big <= 4.5 * small


def test_strip_cells_are_the_window_cells_within_both_diagonals() -> None:
    rng = np.random.default_rng(11)
    for _ in range(300):
        r0, c0 = (int(v) for v in rng.integers(0, 10, 2))
        r1, c1 = r0 + int(rng.integers(0, 12)), c0 + int(rng.integers(0, 12))
        s0, d0 = int(rng.integers(-5, 30)), int(rng.integers(-20, 20))
        s1, d1 = s0 + int(rng.integers(-2, 15)), d0 + int(rng.integers(-2, 15))
        rows, cols = render._strip_cells((r0, r1, c0, c1), (s0, s1, d0, d1))
        window = np.zeros((r1 - r0, c1 - c0), dtype=bool)
        rr, cc = np.indices(window.shape)
        rr, cc = rr + r0, cc + c0
        inside = (s0 <= rr + cc) & (rr + cc <= s1) & (d0 <= cc - rr) & (cc - rr <= d1)
        want_rows, want_cols = np.nonzero(inside)
        assert rows.tolist() == (want_rows + r0).tolist()
        assert cols.tolist() == (want_cols + c0).tolist()


def test_bands_of_two_tilesets_draw_the_whole_pictures_pixels(tmp_path: Path) -> None:
    """Tiled starts its loop from the draw margins of every tileset the layer uses: a band
    showing only the small tiles must still start where the whole picture does."""
    n = 40
    small = [[1 + (c + r) % 4 for c in range(n)] for r in range(n)]
    path = write_map(tmp_path / "two.tmx", "isometric", (n, n), (33, 17), [("g", small, "")])
    text = path.read_text(encoding="utf-8")
    big = ",\n".join(
        ",".join(str(1 + (c + r) % 4 + (4 if c + r >= 30 else 0)) for c in range(n))
        for r in range(n)
    )
    tile_sheet(tmp_path / "big.png", 40, 60)
    text = text.replace(
        "\n<layer",
        '\n<tileset firstgid="5" name="b" tilewidth="40" tileheight="60" tilecount="4" '
        'columns="4"><tileoffset x="-3" y="5"/><image source="big.png" width="160" '
        'height="60"/></tileset>\n<layer',
    )
    text = text.replace(text[text.index('<data encoding="csv">') : text.index("</data>")],
                        '<data encoding="csv">' + big)  # fmt: skip
    path.write_text(text, encoding="utf-8")
    model, tmx = load_for_render(path)
    whole = render_map(model, tmx, background=False)
    width, height = output_size(model.grid)
    banded = pygame.Surface((width, height), pygame.SRCALPHA, 32)
    for y in range(0, height, 30):
        part = render_map(model, tmx, background=False, area=(0, y, width, min(30, height - y)))
        banded.blit(part, (0, y), special_flags=pygame.BLEND_RGBA_ADD)
    assert pygame.image.tobytes(banded, "RGBA") == pygame.image.tobytes(whole, "RGBA")
