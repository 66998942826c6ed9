"""Big maps and scales: the renderer draws at the output size, the viewer draws what is on
screen (issue 19 item 2, issue 20's render targets).

Memory is capped with RLIMIT_AS in a child process, so a full-size intermediate (a 1024x1024
map at 32 px is 32768x32768 pixels, 4 GiB) fails the test instead of passing by luck.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pygame
import pytest
from conftest import CORPUS, ROOT

from engine.cli import main
from engine.grid import Grid
from engine.viewer.render import (
    MAX_PIXELS,
    MAX_SIDE,
    MapChunks,
    largest_scale,
    load_for_render,
    output_size,
    render_banded,
    render_map,
    render_to_file,
)

CHASE_TMX = ROOT / "maps" / "chase.tmx"
TMXRASTERIZER = shutil.which("tmxrasterizer")


def chase_tiled(path: Path, size: int) -> Path:
    """A size x size map repeating maps/chase.tmx's terrain layer (its shipped tileset)."""
    text = CHASE_TMX.read_text(encoding="utf-8")
    found = re.search(r'<data encoding="csv">(.*?)</data>', text, re.S)
    assert found is not None
    rows = [r.strip().rstrip(",").split(",") for r in found.group(1).strip().splitlines()]
    h, w = len(rows), len(rows[0])
    lines = []
    for r in range(h):
        line = rows[r] * (size // w + 1)
        lines.append(",".join(line[:size]))
    data = ",\n".join(lines[r % h] for r in range(size))
    tileset = (ROOT / "assets" / "terrain_square.tsx").as_posix()
    path.write_text(
        '<?xml version="1.0" encoding="UTF-8"?>\n'
        '<map version="1.8" tiledversion="1.8.2" orientation="orthogonal" '
        f'renderorder="right-down" width="{size}" height="{size}" tilewidth="32" '
        'tileheight="32" infinite="0" nextlayerid="2" nextobjectid="1">\n'
        f' <tileset firstgid="1" source="{tileset}"/>\n'
        f' <layer id="1" name="terrain" width="{size}" height="{size}">\n'
        f'  <data encoding="csv">\n{data}\n</data>\n </layer>\n</map>\n',
        encoding="utf-8",
    )
    return path


def run_capped(code: str, limit_mb: int, timeout: int = 300) -> subprocess.CompletedProcess[str]:
    """Run ``code`` in a fresh interpreter whose address space is capped at ``limit_mb``."""
    prelude = (
        "import resource, sys\n"
        f"resource.setrlimit(resource.RLIMIT_AS, ({limit_mb << 20}, {limit_mb << 20}))\n"
        f"sys.path.insert(0, {str(ROOT)!r})\n"
    )
    env = {**os.environ, "SDL_VIDEODRIVER": "dummy", "SDL_AUDIODRIVER": "dummy"}
    return subprocess.run(
        [sys.executable, "-c", prelude + code],
        capture_output=True,
        text=True,
        timeout=timeout,
        env=env,
        cwd=str(ROOT),
    )


def rgba(surface: pygame.Surface) -> np.ndarray:
    rgb = pygame.surfarray.array3d(surface)
    alpha = pygame.surfarray.array_alpha(surface)
    return np.concatenate([rgb, alpha[..., None]], axis=2).transpose(1, 0, 2).astype(np.int16)


@pytest.fixture(scope="module")
def map1024(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return chase_tiled(tmp_path_factory.mktemp("big") / "c1024.tmx", 1024)


# --------------------------------------------------------------------------- render


def test_1024_map_at_a_sixteenth_renders_under_1_gb(map1024: Path, tmp_path: Path) -> None:
    out = tmp_path / "small.png"
    run = run_capped(
        "from engine.cli import main\n"
        f"sys.exit(main(['render', {str(map1024)!r}, '--out', {str(out)!r}, "
        "'--scale', '0.0625']))\n",
        1024,
    )
    assert run.returncode == 0, run.stderr
    img = pygame.image.load(str(out))
    assert img.get_size() == (2048, 2048)
    # The picture is the shipped map repeated: its corner is chase.tmx at the same scale.
    model, tmx = load_for_render(CHASE_TMX)
    one = rgba(render_map(model, tmx, scale=0.0625, objects=False))  # the terrain only
    h, w = one.shape[:2]
    got = rgba(img)
    assert (got[:h, :w] == one).all() and (got[h : 2 * h, w : 2 * w] == one).all()


def test_scale_20_on_chase_is_refused_in_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "x.png"
    assert main(["render", str(CHASE_TMX), "--out", str(out), "--scale", "20"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "--scale 20" in err
    model, _ = load_for_render(CHASE_TMX)
    best = largest_scale(model.grid)
    assert f"--scale {best:g} or less" in err and not out.exists()
    # The scale it names works, and a little more does not.
    w, h = output_size(model.grid, best)
    assert max(w, h) <= MAX_SIDE and w * h <= MAX_PIXELS
    w2, h2 = output_size(model.grid, best * 1.01)
    assert max(w2, h2) > MAX_SIDE or w2 * h2 > MAX_PIXELS


def test_the_scenario_render_is_refused_the_same_way(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    chase = str(ROOT / "scenarios" / "chase.yaml")
    assert main(["render", chase, "--out", str(tmp_path / "x.png"), "--scale", "20"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "--scale" in err and "or less" in err


@pytest.mark.parametrize("source", ["scenarios/chase.yaml", "maps/hex_flat.tmx"])
def test_an_output_not_named_png_is_never_another_format(
    tmp_path: Path, source: str, capsys: pytest.CaptureFixture[str]
) -> None:
    # pygame picks the format by the name (.tga wrote a TGA): the command refuses the
    # name in one line (docs/robustness.md, "Writes") and writes nothing.
    out = tmp_path / "picture.tga"
    rc = main(["render", str(ROOT / source), "--out", str(out)])
    err = capsys.readouterr().err.strip()
    assert rc == 2 and len(err.splitlines()) == 1 and ".png" in err and not out.exists()
    # The Python API writes a PNG whatever the name.
    model, _ = load_for_render(ROOT / "maps" / "hex_flat.tmx")
    api_out = tmp_path / "api.tga"
    assert render_to_file(ROOT / "maps" / "hex_flat.tmx", api_out) == model.grid.pixel_size()
    assert api_out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_largest_scale_of_a_huge_map_is_small_but_positive() -> None:
    grid = Grid("orthogonal", 4096, 4096, 32, 32)
    s = largest_scale(grid)
    w, h = output_size(grid, s)
    assert 0 < s < 0.13 and max(w, h) <= MAX_SIDE and w * h <= MAX_PIXELS


def test_bands_and_areas_give_the_whole_picture(tmp_path: Path) -> None:
    for name in ("hex_flat.tmx", "hex_pointy.tmx", "encounter.tmx"):
        model, tmx = load_for_render(ROOT / "maps" / name)
        for scale in (1.0, 0.3, 0.125, 2.0):
            whole = rgba(render_map(model, tmx, scale=scale))
            assert (rgba(render_banded(model, tmx, scale=scale)) == whole).all()
            h, w = whole.shape[:2]
            x, y = w // 3 + 1, h // 2 - 1
            part = rgba(render_map(model, tmx, scale=scale, area=(x, y, w - x, h - y)))
            assert (part == whole[y:, x:]).all(), (name, scale)


def test_scale_two_repeats_each_pixel() -> None:
    model, tmx = load_for_render(ROOT / "maps" / "hex_pointy.tmx")
    # Tile layers (object outlines are Tiled's cosmetic 2-pixel pens at any scale).
    one = rgba(render_map(model, tmx, objects=False))
    two = rgba(render_map(model, tmx, scale=2, objects=False))
    assert (two == one.repeat(2, axis=0).repeat(2, axis=1)).all()


@pytest.mark.skipif(TMXRASTERIZER is None, reason="tmxrasterizer (Debian 'tiled') not on PATH")
@pytest.mark.parametrize("name", ["chase.tmx", "hex_flat.tmx", "hex_pointy.tmx"])
@pytest.mark.parametrize("scale", [0.5, 0.3, 0.25, 0.125])
def test_scaled_render_matches_tmxrasterizer(name: str, scale: float, tmp_path: Path) -> None:
    path = ROOT / "maps" / name
    ref = tmp_path / "ref.png"
    run = subprocess.run(
        [TMXRASTERIZER, "--hide-layer", "objects", "-s", str(scale), str(path), str(ref)],
        env={**os.environ, "QT_QPA_PLATFORM": "offscreen"},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert run.returncode == 0 and ref.exists(), run.stderr
    want = rgba(pygame.image.load(str(ref)))
    model, tmx = load_for_render(path)
    got = rgba(render_map(model, tmx, scale=scale, background=False, objects=False))
    assert got.shape == want.shape
    clear = (got[..., 3] == 0) & (want[..., 3] == 0)
    differ = (np.abs(got - want).max(axis=2) > 8) & ~clear
    assert differ.mean() <= 0.002, f"{100 * differ.mean():.2f}% of pixels differ"


# --------------------------------------------------------------------------- viewer


def test_a_4096_map_views_under_a_memory_cap(tmp_path: Path) -> None:
    path = chase_tiled(tmp_path / "c4096.tmx", 4096)
    shot = tmp_path / "shot.png"
    run = run_capped(
        "from engine.cli import main\n"
        f"sys.exit(main(['view', {str(path)!r}, '--frames', '2', '--screenshot', "
        f"{str(shot)!r}]))\n",
        1536,
        timeout=600,
    )
    assert run.returncode == 0, run.stderr
    img = pygame.image.load(str(shot))
    assert img.get_size() == (1280, 800)
    # The map fills the view (zoomed out as far as the viewer goes): no background showing.
    px = rgba(img)[:, :900]
    assert ((px[..., :3] == (24, 26, 30)).all(axis=2)).mean() < 0.01


def test_viewer_draws_chunks_not_the_whole_map(tmp_path: Path) -> None:
    from engine.viewer.app import Viewer, map_scenario

    path = chase_tiled(tmp_path / "c200.tmx", 200)
    v = Viewer(map_scenario(str(path), "generic", {}), size=(1280, 800))
    try:
        v.camera.zoom = 1.0
        v.camera.x, v.camera.y = 2000.0, 2000.0
        v.draw()
        chunks = v.map_surface.cache
        # The chunks in view (950x800 px: at most 5x5 of 256 px), one drawn ahead: no more.
        c = MapChunks.CHUNK
        in_view = ((950 + c - 1) // c + 1) * ((800 + c - 1) // c + 1)
        assert 0 < len(chunks) <= in_view + 1 and chunks.bytes <= (in_view + 1) * 4 * c * c
        # What the window shows is the map, pixel for pixel, at the camera's place.
        model, tmx = load_for_render(path)
        want = rgba(render_map(model, tmx, area=(2000, 2000, 400, 300)))
        shown = rgba(v.screen.subsurface((0, 0, 400, 300)))
        assert (shown[..., :3] == want[..., :3]).all()
        for _ in range(40):  # pan right: older chunks make way, memory stays bounded
            v.camera.x += 300
            v.draw()
        assert chunks.bytes <= chunks.max_bytes
    finally:
        pygame.quit()


# --------------------------------------------------------------------------- plots


def test_plots_of_a_1024_map_under_1_gb(map1024: Path, tmp_path: Path) -> None:
    results = [
        {
            "turns": 3 + i % 5,
            "outcome": ("capture", "escape", "timeout")[i % 3],
            "cell": [(i * 37) % 1024, (i * 91) % 1024],
        }
        for i in range(60)
    ]
    run = run_capped(
        "from engine.viewer.plots import write_plots\n"
        f"print(write_plots({results!r}, {str(map1024)!r}, {str(tmp_path)!r}, 'big'))\n",
        1024,
    )
    assert run.returncode == 0, run.stderr
    img = pygame.image.load(str(tmp_path / "outcomes_map.png"))
    assert max(img.get_size()) == 1400  # the plot's pixels, not the map's
    assert (tmp_path / "turns.png").exists()


LATTICE_MAPS = [
    ROOT / "maps" / "chase.tmx",
    ROOT / "maps" / "encounter.tmx",
    ROOT / "maps" / "hex_pointy.tmx",
    ROOT / "maps" / "vtt_room.dd2vtt",
    *(
        pytest.param(CORPUS / "tiled-examples" / name, marks=pytest.mark.corpus)
        for name in (
            "desert.tmx",
            "sewers.tmx",
            "orthogonal-outside.tmx",
            "rpg/island.tmx",
            "forest/forest.tmx",
            "perspective_walls.tmx",
            "isometric_grass_and_water.tmx",
        )
    ),
]


@pytest.mark.parametrize("path", LATTICE_MAPS, ids=lambda p: p.name)
def test_tiles_copied_as_a_lattice_are_the_pixels_their_blits_make(
    path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Where a layer's tiles tile a blank canvas (one size, one lattice cell each), they are
    copied as arrays (render._paint_lattice): every picture is byte for byte the one
    pygame's blits make, at whole-pixel and fractional scales, with and without the map's
    background, whole and in an area; and the copies are made (not only the blits)."""
    import engine.viewer.render as render

    model, tmx = load_for_render(str(path))
    made: list[bool] = []
    lattice = render._paint_lattice

    def counted(*args: object) -> bool:
        made.append(lattice(*args))  # type: ignore[arg-type]
        return made[-1]

    for scale in (0.125, 0.25, 0.5, 0.3):
        w, h = output_size(model.grid, scale)
        for background in (True, False):
            for area in (None, (w // 5, h // 7, max(1, w // 2), max(1, h // 3))):
                monkeypatch.setattr(render, "_paint_lattice", counted)
                ours = render_map(model, tmx, scale=scale, background=background, area=area)
                monkeypatch.setattr(render, "_paint_lattice", lambda *a: False)
                blits = render_map(model, tmx, scale=scale, background=background, area=area)
                got = pygame.image.tobytes(ours, "RGBA")
                assert got == pygame.image.tobytes(blits, "RGBA"), (scale, background, area)
    if path.name in ("chase.tmx", "encounter.tmx", "desert.tmx"):
        assert any(made), "no layer was copied as a lattice"


def _layered(path: Path) -> Path:
    """A map of three tile layers with no tile images (cells drawn in their terrain's
    colour): a full ground, a sparse layer over it, and a half-transparent full layer."""
    import tmxtext

    rows = ["".join(tmxtext.CHARS[(r * 7 + c * 3) % 5] for c in range(40)) for r in range(30)]
    sparse = [
        ",".join(str(tmxtext.CHARS.index("~") + 1 if (r + c) % 3 == 0 else 0) for c in range(40))
        for r in range(30)
    ]
    full = ",".join([str(tmxtext.CHARS.index("#") + 1)] * (40 * 30))
    extra = (
        '<layer id="2" name="sparse" width="40" height="30"><data encoding="csv">'
        + ",\n".join(sparse)
        + '</data></layer><layer id="3" name="veil" width="40" height="30" opacity="0.5">'
        f'<data encoding="csv">{full}</data></layer>'
        '<layer id="4" name="top" width="40" height="30"><data encoding="csv">'
        + ",\n".join(sparse[::-1])
        + "</data></layer>"
    )
    return tmxtext.write(path, rows, extra_layers=extra)


def test_upper_layers_copied_as_a_lattice_are_the_pixels_their_blits_make(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Layers over others (issue 42: 8 layers of 2048^2 took 15.6 CPU-s in blits) are
    copied as a lattice too where every tile covers its cell whatever lies under it, the
    cells without a tile left as they are: byte for byte the blits' picture, whole, in
    areas (whose margins cross the canvas's edge) and in the bands of ``render``; and the
    copies over a drawn canvas are made."""
    import engine.viewer.render as render

    model, tmx = load_for_render(str(_layered(tmp_path / "layered.tmx")))
    over: list[bool] = []
    lattice = render._paint_lattice

    def counted(*args: object) -> bool:
        made = lattice(*args)  # type: ignore[arg-type]
        if args[-1] is False:
            over.append(made)
        return made

    for scale in (0.125, 0.25, 0.5, 0.3):
        w, h = output_size(model.grid, scale)
        for area in (None, (w // 5, h // 7, max(1, w // 2), max(1, h // 3))):
            monkeypatch.setattr(render, "_paint_lattice", counted)
            ours = render_map(model, tmx, scale=scale, area=area)
            monkeypatch.setattr(render, "_paint_lattice", lambda *a: False)
            blits = render_map(model, tmx, scale=scale, area=area)
            got = pygame.image.tobytes(ours, "RGBA")
            assert got == pygame.image.tobytes(blits, "RGBA"), (scale, area)
    assert any(over), "no upper layer was copied as a lattice"
    assert not all(over), "the half-transparent layer cannot be copied"


@pytest.mark.parametrize(
    "name",
    [
        "layered",
        "chase.tmx",
        pytest.param("desert.tmx", marks=pytest.mark.corpus),
        pytest.param("sewers.tmx", marks=pytest.mark.corpus),
        pytest.param("orthogonal-outside.tmx", marks=pytest.mark.corpus),
    ],
)
def test_cells_hidden_by_later_layers_are_left_out_with_the_same_pixels(
    name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A cell under an opaque stamp of the same size and place in a later layer is not
    drawn (render._hidden_cells): the picture is byte for byte the one drawing every cell
    makes, at several scales, whole and in an area; on the layered map (an opaque top
    layer over half of it, a half-transparent full layer under that) cells are left out."""
    import engine.viewer.render as render

    if name == "layered":
        path = _layered(tmp_path / "layered.tmx")
    elif name == "chase.tmx":
        path = CHASE_TMX
    else:
        path = CORPUS / "tiled-examples" / name
    model, tmx = load_for_render(str(path))
    left_out = 0
    real = render._hidden_cells

    def counted(*args: object) -> dict[int, np.ndarray]:
        nonlocal left_out
        got = real(*args)  # type: ignore[arg-type]
        left_out += sum(int(m.sum()) for m in got.values())
        return got

    for scale in (1.0, 0.5, 0.3, 0.125):
        w, h = output_size(model.grid, scale)
        for area in (None, (w // 5, h // 7, max(1, w // 2), max(1, h // 3))):
            monkeypatch.setattr(render, "_hidden_cells", counted)
            ours = render_map(model, tmx, scale=scale, area=area)
            monkeypatch.setattr(render, "_hidden_cells", lambda *a: {})
            every = render_map(model, tmx, scale=scale, area=area)
            got = pygame.image.tobytes(ours, "RGBA")
            assert got == pygame.image.tobytes(every, "RGBA"), (scale, area)
    if name == "layered":
        assert left_out > 0
