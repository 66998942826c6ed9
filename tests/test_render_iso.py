"""Isometric maps with odd tile sizes (issue 42, work bounded by what is read; pictures
equal to Tiled's).

Tiled's isometric loop lands such tiles on half pixels, from a start it works out from the
layer's chunk bounds and draw margins; :func:`render._iso_walk` replays that loop over the
whole map (the plain twin) and :func:`render._iso_anchors` works the same anchors out in
closed form for just the cells a band or viewer chunk draws. These tests hold the two
equal, check the places and the rounding against figures measured with tmxrasterizer, count
the cells whose anchors a banded render works out, and compare small maps of odd sizes with
tmxrasterizer pixel for pixel where it is installed.
"""

from __future__ import annotations

import os
import shutil
import subprocess
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


def bounds_for(w: int, h: int) -> list[tuple[int, int, int, int]]:
    """A full layer's chunks, one chunk at the origin, one chunk further along each axis."""
    return [render._full_bounds(Grid("isometric", w, h, 2, 1)), (0, 0, 16, 16), (16, 0, 16, 32),
            (0, 16, 48, 16)]  # fmt: skip


@pytest.mark.parametrize("tile", TILES, ids=lambda t: f"{t[0]}x{t[1]}")
@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"map{s[0]}x{s[1]}")
def test_closed_form_anchors_equal_tileds_loop(
    tile: tuple[int, int], size: tuple[int, int]
) -> None:
    grid = Grid("isometric", size[0], size[1], *tile)
    cols, rows = (a.ravel() for a in np.meshgrid(np.arange(size[0]), np.arange(size[1])))
    for margins in margins_for(*tile):
        for bounds in bounds_for(*size):
            walk = render._iso_walk(grid, margins, bounds)
            xs, ys2, visited = render._iso_anchors(grid, margins, bounds, cols, rows)
            listed = (a.tolist() for a in (cols, rows, xs, ys2, visited))
            got = {(c, r): (x, y) for c, r, x, y, v in zip(*listed, strict=True) if v}
            assert got == walk, (margins, bounds)


def test_the_loop_reaches_every_tile_of_its_layer() -> None:
    # Started from the layer's chunk bounds and draw margins (never negative), Tiled's loop
    # reaches every cell holding a tile, on long thin maps too.
    rng = np.random.default_rng(4)
    for _ in range(300):
        w, h = int(rng.integers(1, 50)), int(rng.integers(1, 50))
        tw, th = int(rng.integers(1, 70)) | 1, int(rng.integers(1, 40))
        gids = (rng.random((h, w)) < rng.random() ** 3).astype(np.uint32)
        margins = tuple(int(v) for v in rng.integers(0, 90, 4))
        rows, cols = np.nonzero(gids)
        grid = Grid("isometric", w, h, tw, th)
        _, _, visited = render._iso_anchors(
            grid,
            margins,
            render.layer_bounds(gids),
            cols,
            rows,  # type: ignore[arg-type]
        )
        assert visited.all(), (w, h, tw, th, margins)


def test_cells_outside_the_bounds_keep_the_cell_origin() -> None:
    # An empty cell outside the layer's chunks is never reached by the loop: asked anyway,
    # it gets Grid.cell_origin plus the tile height.
    grid = Grid("isometric", 40, 20, 33, 17)
    cols, rows = np.array([0, 20]), np.array([0, 3])
    xs, ys = tile_anchors(grid, cols, rows, bounds=(16, 0, 16, 16))
    _, _, visited = render._iso_anchors(grid, render._draw_margins([]), (16, 0, 16, 16), cols, rows)
    assert visited.tolist() == [False, True]
    ox, oy = grid.cell_origin((0, 0))
    assert (int(xs[0]), int(ys[0])) == (ox, oy + 17)


def test_layer_bounds_are_the_chunks_holding_tiles() -> None:
    """libtiled's TileLayer::bounds(): the bounding box of the 16 x 16 chunks in which a
    non-empty cell was set, worked out here cell by cell."""
    rng = np.random.default_rng(8)
    for _ in range(200):
        h, w = (int(v) for v in rng.integers(1, 70, 2))
        gids = np.zeros((h, w), dtype=np.uint32)
        for _ in range(int(rng.integers(0, 4))):
            gids[int(rng.integers(0, h)), int(rng.integers(0, w))] = int(rng.integers(1, 9))
        chunks = {(c // 16, r // 16) for r, c in zip(*np.nonzero(gids), strict=True)}
        if not chunks:
            want = (0, 0, w, h)
        else:
            xs, ys = [c for c, _ in chunks], [r for _, r in chunks]
            want = (16 * min(xs), 16 * min(ys), 16 * (max(xs) - min(xs) + 1),
                    16 * (max(ys) - min(ys) + 1))  # fmt: skip
        assert render.layer_bounds(gids) == want


# Measured with Tiled 1.8.2's tmxrasterizer (Qt 5.15) on a 5x3 isometric map of 33x17
# cells, each cell a different 32x32 tile marked at its bottom-left pixel: where each
# tile's bottom-left corner lands (x, y). The layer's chunk (16x16 cells) starts Tiled's
# loop, so these are not Grid.cell_origin's floors; y is Tiled's half pixel rounded up.
MEASURED_5X3 = {
    (0, 0): (34, 18), (0, 1): (17, 26), (1, 0): (50, 26), (0, 2): (1, 35), (1, 1): (34, 35),
    (2, 0): (67, 35), (1, 2): (17, 43), (2, 1): (50, 43), (3, 0): (83, 43), (2, 2): (34, 52),
    (3, 1): (67, 52), (4, 0): (100, 52), (3, 2): (50, 60), (4, 1): (83, 60),
}  # fmt: skip


def test_tile_anchors_are_tileds_measured_places() -> None:
    grid = Grid("isometric", 5, 3, 33, 17)
    sheet = type("Sheet", (), {"tilewidth": 32, "tileheight": 32, "offset": (0, 0)})()
    cells = sorted(MEASURED_5X3)
    cols, rows = np.array([c for c, _ in cells]), np.array([r for _, r in cells])
    xs, ys = tile_anchors(grid, cols, rows, [sheet], (0, 0, 16, 16))
    assert dict(zip(cells, zip(xs.tolist(), ys.tolist(), strict=True), strict=True)) == (
        MEASURED_5X3
    )


def test_half_pixels_round_down_the_picture_at_scale_1_only() -> None:
    """Qt's painter rounds a translated tile's corner (qRound: halves up) at scale 1, and
    scales the exact corner otherwise: tile_anchors is tile_positions' twice-y rounded up,
    and a scaled draw places half-pixel tiles from the exact corner."""
    grid = Grid("isometric", 9, 7, 33, 17)
    cols, rows = (a.ravel() for a in np.meshgrid(np.arange(9), np.arange(7)))
    xs2, ys2 = render.tile_positions(grid, cols, rows)
    xs, ys = tile_anchors(grid, cols, rows)
    assert (xs == xs2).all()
    assert ys.tolist() == [(v + 1) // 2 for v in ys2.tolist()]
    assert (ys2 % 2 == 1).any() and (ys2 % 2 == 0).any()
    view = render._View(grid, 0.25, pygame.Rect(0, 0, 100, 100), render.tile_cache(None), None)
    stamp = render.Stamp(pygame.Surface((32, 32), pygame.SRCALPHA, 32), 0, -32)
    idx = np.zeros(4, dtype=np.int64)
    px, py = np.array([0, 0, 0, 0]), np.array([18, 18, 20, 20])
    halves = np.array([True, False, True, False])
    _, _, oy, _ = render._scale_stamps(view, [stamp], idx, px, py, halves)
    # 17.5 / 4 = 4.375 -> 4, 18 / 4 = 4.5 -> 5, 19.5 / 4 = 4.875 -> 5, 20 / 4 = 5.
    assert oy.tolist() == [4, 5, 5, 5]


# Measured the same way on a 5x4 hexagonal map staggered along x (odd index), 30x38 cells
# with a side of 7, 18x10 tiles: Tiled's rows step 30 + 7 = 37 pixels per two columns where
# its tile-to-screen formula (and Grid.cell_origin) steps 2 x 18 = 36. The x of column c.
MEASURED_HEX_X = {0: 0, 1: 18, 2: 37, 3: 55, 4: 74}


def test_hexagonal_columns_drift_as_tileds_rows_draw_them() -> None:
    grid = Grid("hexagonal", 5, 4, 30, 38, stagger_axis="x", stagger_index="odd", hex_side=7)
    assert render.loop_placed(grid) and render._hex_drift(grid) == 1
    sheet = type("Sheet", (), {"tilewidth": 18, "tileheight": 10, "offset": (0, 0)})()
    cols, rows = (a.ravel() for a in np.meshgrid(np.arange(5), np.arange(4)))
    xs, _ = tile_anchors(grid, cols, rows, [sheet], (0, 0, 16, 16))
    assert dict(zip(cols.tolist(), xs.tolist(), strict=True)) == MEASURED_HEX_X
    # An even side (or the y axis) keeps Tiled's formula: no drift.
    for even in (
        Grid("hexagonal", 5, 4, 30, 38, stagger_axis="x", hex_side=8),
        Grid("hexagonal", 5, 4, 30, 38, stagger_axis="y", hex_side=7),
        Grid("staggered", 5, 4, 31, 17, stagger_axis="x"),
    ):
        assert not render.loop_placed(even)


@pytest.mark.parametrize("tile", [(33, 17), (31, 16), (34, 18)], ids=lambda t: f"{t[0]}x{t[1]}")
def test_tile_anchors_of_some_cells_equal_the_whole_walk(tile: tuple[int, int]) -> None:
    grid = Grid("isometric", 30, 20, *tile)
    rng = np.random.default_rng(5)
    cols, rows = rng.integers(0, 30, 200), rng.integers(0, 20, 200)
    xs, ys = tile_anchors(grid, cols, rows)
    if tile[0] % 2 or tile[1] % 2:
        walk = render._iso_walk(grid, render._draw_margins([]), render._full_bounds(grid))
        want = [
            (x, (y2 + 1) // 2)
            for x, y2 in (walk[cr] for cr in zip(cols.tolist(), rows.tolist(), strict=True))
        ]
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
    plain_walk, closed_form, anchors = render._iso_walk, render._iso_anchors, render.tile_positions

    def counted_walk(grid: Grid, margins, bounds) -> dict:  # type: ignore[no-untyped-def, type-arg]
        worked[0] += grid.width * grid.height
        return plain_walk(grid, margins, bounds)

    def counted_anchors(grid: Grid, margins, bounds, cols, rows):  # type: ignore[no-untyped-def]
        worked[0] += len(cols)
        return closed_form(grid, margins, bounds, cols, rows)

    def counted_cells(grid: Grid, cols, rows, tilesets=None, bounds=None):  # type: ignore[no-untyped-def]
        drawn[0] += len(cols)
        return anchors(grid, cols, rows, tilesets, bounds)

    with monkeypatch.context() as patch:
        patch.setattr(render, "_iso_walk", counted_walk)
        patch.setattr(render, "_iso_anchors", counted_anchors)
        patch.setattr(render, "tile_positions", counted_cells)
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


TMXRASTERIZER = shutil.which("tmxrasterizer")


def tmxrasterized(path: Path, scale: float) -> np.ndarray:
    out = path.with_suffix(f".{scale:g}.png")
    run = subprocess.run(
        [TMXRASTERIZER or "tmxrasterizer", "-s", str(scale), str(path), str(out)],
        env={**os.environ, "QT_QPA_PLATFORM": "offscreen"},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert run.returncode == 0 and out.exists(), run.stderr
    return rgba(pygame.image.load(str(out)))


def rgba(surface: pygame.Surface) -> np.ndarray:
    rgb = pygame.surfarray.array3d(surface).astype(np.int16)
    return np.concatenate([rgb, pygame.surfarray.array_alpha(surface)[..., None]], axis=2)


ODD_MAPS = {
    # The bench row's seam: 32x32 pictures on a 33x17 grid.
    "iso33x17": ("isometric", (20, 14), (33, 17), (32, 32), {}),
    # Tiles only in chunks away from the origin: the loop starts from those chunks.
    "iso_sparse": ("isometric", (40, 35), (31, 16), (20, 37), {"sparse": True}),
    "iso_tall": ("isometric", (7, 30), (65, 33), (64, 70), {}),
    # Flipped and turned tiles on half pixels: Qt samples them there, even at scale 1.
    "iso_flips": ("isometric", (15, 12), (35, 19), (30, 40), {"flips": True}),
    "staggered_odd": ("staggered", (13, 11), (33, 17), (32, 32), {"stagger": ("x", "even")}),
    "hex_odd": ("hexagonal", (12, 9), (31, 27), (34, 30), {"hexside": 9}),
    # Staggered along x with an odd side: Tiled's rows drift from its formula.
    "hex_x_odd_side": (
        "hexagonal",
        (13, 9),
        (30, 38),
        (18, 10),
        {"hexside": 7, "stagger": ("x", "odd")},
    ),
    "hex_x_sparse": (
        "hexagonal",
        (40, 30),
        (31, 37),
        (40, 20),
        {"hexside": 5, "stagger": ("x", "even"), "sparse": True},
    ),
}


@pytest.mark.skipif(TMXRASTERIZER is None, reason="tmxrasterizer (Debian 'tiled') not on PATH")
@pytest.mark.parametrize("name", sorted(ODD_MAPS))
@pytest.mark.parametrize("scale", [1.0, 0.5, 0.25])
def test_odd_sizes_match_tmxrasterizer_pixel_for_pixel(
    name: str, scale: float, tmp_path: Path
) -> None:
    orientation, (w, h), tile, sheet, extra = ODD_MAPS[name]
    rng = np.random.default_rng(len(name))
    rows = rng.integers(1, 5, (h, w))
    if extra.get("sparse"):
        rows[:, :16] = 0
        rows[:3] = 0
    if extra.get("flips"):
        rows = rows | (rng.integers(0, 8, rows.shape) << 29)  # H, V, anti-diagonal bits
    path = write_map(
        tmp_path / f"{name}.tmx", orientation, (w, h), tile, [("g", rows.tolist(), "")],
        sheet_tile=sheet, hexside=int(extra.get("hexside", 0)),
        stagger=extra.get("stagger", ("y", "odd")),
    )  # fmt: skip
    want = tmxrasterized(path, scale)
    model, tmx = load_for_render(path)
    got = rgba(render_map(model, tmx, scale=scale, background=False, objects=False))
    assert got.shape == want.shape
    clear = (got[..., 3] == 0) & (want[..., 3] == 0)
    differ = (np.abs(got - want).max(axis=2) > 8) & ~clear
    assert int(differ.sum()) == 0, f"{100 * differ.mean():.3f}% of pixels differ"
