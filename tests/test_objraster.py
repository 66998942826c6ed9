"""The compiled object rasterizer (engine/_kernel.c ``objraster_coverage`` and
``objraster_composite``) against its numpy twins (engine.viewer.objraster's
``coverage_numpy`` and ``composite_numpy``): the same numbers, bit for bit, on random
polygons, polylines, ellipses, rectangles and pins as the renderer makes them (every
orientation's shapes, turned, at every scale and both stroke widths it uses), on raw
segments made to land on pixel centres and sample rows, and on whole renders; a kernel
switched off, or built without the functions, runs the twins.
"""

from __future__ import annotations

import math
import random
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pygame
import pytest
from test_render import objects_map

from engine import kernel
from engine.grid import Grid
from engine.mapmodel import MapObject
from engine.viewer import objraster
from engine.viewer.mapobjects import object_paints
from engine.viewer.objraster import (
    SS,
    SS_SMALL,
    Paint,
    Point,
    composite,
    composite_numpy,
    coverage,
    coverage_numpy,
    draw_paints,
)
from engine.viewer.render import load_for_render, render_map

needs_kernel = pytest.mark.skipif(not kernel.available(), reason=f"kernel {kernel.state()}")

#: The scales a render draws objects at (``render --scale``), both sides of 1.
SCALES = (1.0, 1.5, 2.0, 3.0, 0.75, 0.5, 0.25, 0.125, 0.0625)


def _object(rng: random.Random, k: int) -> MapObject:
    """A random object of every shape the renderer draws, sometimes turned."""
    shape = ["rectangle", "ellipse", "polygon", "polyline", "point"][k % 5]
    x, y = rng.uniform(-20, 140), rng.uniform(-20, 140)
    w = rng.choice([0.0, rng.uniform(0.2, 90), float(rng.randint(1, 60))])
    h = rng.choice([0.0, rng.uniform(0.2, 90), float(rng.randint(1, 60))])
    points: tuple[Point, ...] = ()
    if shape in ("polygon", "polyline"):
        n = rng.choice([1, 2, 3, rng.randint(4, 60)])
        points = tuple(
            (rng.choice([rng.uniform(-60, 60), float(rng.randint(-60, 60))]), rng.uniform(-60, 60))
            for _ in range(n)
        )
    turn = rng.choice([0.0, 0.0, rng.uniform(-180, 180), 90.0])
    return MapObject(k + 1, "o", "", shape, x, y, w, h, turn, points=points)


def _paints(rng: random.Random, trial: int) -> Iterator[tuple[Paint, int]]:
    """Each paint of a random object, in output pixels at a random scale, and its
    samples a side (as draw_object_layer picks them)."""
    orientation = ["orthogonal", "isometric", "hexagonal", "staggered"][trial % 4]
    hexes = orientation == "hexagonal"
    grid = Grid(orientation, 8, 6, 32, 36 if hexes else 32, hex_side=18 if hexes else 0)
    obj = _object(rng, trial)
    scale = SCALES[trial % len(SCALES)]
    shift = (rng.uniform(-30, 30), rng.uniform(-30, 30))
    for p in object_paints(grid, obj, (20, 128, 255)):
        paths = tuple(
            ([(x * scale - shift[0], y * scale - shift[1]) for x, y in pts], closed)
            for pts, closed in p.paths
        )
        yield Paint(p.kind, paths, p.colour, p.half), SS if scale >= 1 else SS_SMALL


def _boxes(rng: random.Random, paint: Paint) -> Iterator[tuple[int, int, int, int]]:
    """The paint's own box (as draw_paints takes it), and one cut into or off it."""
    xs = [x for pts, _ in paint.paths for x, _ in pts]
    ys = [y for pts, _ in paint.paths for _, y in pts]
    reach = paint.half + 2
    x0, y0 = math.floor(min(xs) - reach), math.floor(min(ys) - reach)
    x1, y1 = math.ceil(max(xs) + reach), math.ceil(max(ys) + reach)
    yield x0, y0, x1 - x0, y1 - y0
    cx, cy = rng.randint(x0 - 5, x1), rng.randint(y0 - 5, y1)
    yield cx, cy, rng.randint(1, 80), rng.randint(1, 80)


def _same(paint: Paint, box: tuple[int, int, int, int], ss: int) -> None:
    got = coverage(paint, *box, ss)
    want = coverage_numpy(paint, *box, ss)
    assert got.dtype == want.dtype and got.shape == want.shape
    assert np.array_equal(got, want), (paint.kind, paint.half, box, ss)


@needs_kernel
def test_the_renderers_shapes_equal_the_numpy_twin() -> None:
    rng = random.Random(42)
    kinds: set[tuple[str, float, int]] = set()
    for trial in range(160):
        for paint, ss in _paints(rng, trial):
            kinds.add((paint.kind, paint.half, ss))
            for box in _boxes(rng, paint):
                _same(paint, box, ss)
    # fills, 2-pixel outlines and the first vertex's 8-pixel dot, at both sample rates
    assert kinds >= {
        (k, h, s)
        for k, h in [("fill", 1.0), ("stroke", 1.0), ("stroke", 4.0)]
        for s in (SS, SS_SMALL)
    }


def _on_the_grid(rng: random.Random, ss: int) -> float:
    """A coordinate on a pixel's edge, centre, or sample row, or anywhere."""
    whole = rng.randint(-3, 40)
    return whole + rng.choice(
        [0.0, 0.5, (rng.randrange(ss) + 0.5) / ss, rng.random(), 1 - 1e-9, 1e-12]
    )


@needs_kernel
@pytest.mark.parametrize("ss", [1, 2, 3, SS, 5, SS_SMALL])
def test_raw_segments_on_pixel_centres_and_samples_equal_the_numpy_twin(ss: int) -> None:
    """Vertices on pixel edges, centres and sample rows (where every comparison ties),
    horizontal, vertical, repeated and single points, slivers, odd stroke widths."""
    rng = random.Random(ss)
    for trial in range(90):
        n = rng.choice([1, 2, 3, 5, 17])
        pts = [(_on_the_grid(rng, ss), _on_the_grid(rng, ss)) for _ in range(n)]
        if trial % 3 == 0 and n > 1:
            pts[1] = (pts[0][0], pts[1][1])  # vertical
        if trial % 4 == 0 and n > 2:
            pts[2] = (pts[2][0], pts[1][1])  # horizontal
        if trial % 5 == 0:
            pts.append(pts[-1])  # repeated
        half = rng.choice([1.0, 4.0, 0.25, 0.5, 1.75, 2.5])
        closed = rng.random() < 0.5
        x0, y0 = rng.randint(-8, 8), rng.randint(-8, 8)
        w, h = rng.randint(1, 60), rng.randint(1, 60)
        for paint in (
            Paint("fill", ((pts, True),), (1, 2, 3, 50)),
            Paint("fill", ((pts, True), (pts[::-1][1:], False)), (1, 2, 3, 50)),
            Paint("stroke", ((pts, closed),), (1, 2, 3, 255), half),
            Paint("stroke", ((pts, closed), ([pts[0]], False)), (1, 2, 3, 255), half),
        ):
            _same(paint, (x0, y0, w, h), ss)


@needs_kernel
def test_empty_and_outlying_paints_equal_the_numpy_twin() -> None:
    """No segments, segments wholly outside the area, a one-pixel area, a box far off."""
    far = [(500.5, 600.25), (700.0, 650.0), (520.0, 900.0)]
    for paths in ((([], False),), ((far, True),), (([(3.5, 2.5)], False),)):
        for kind, half in (("fill", 1.0), ("stroke", 1.0), ("stroke", 4.0)):
            paint = Paint(kind, paths, (1, 2, 3, 255), half)
            for box in ((0, 0, 1, 1), (0, 0, 40, 30), (-1000, -1000, 7, 5), (3, 2, 1, 9)):
                for ss in (SS, SS_SMALL):
                    _same(paint, box, ss)


@needs_kernel
def test_a_large_polygon_equals_the_numpy_twin() -> None:
    """issue 42's 800-point ring, its outline, fill and first-vertex dot, at both rates."""
    ring = [
        (
            120.25 + 100 * math.cos(2 * math.pi * k / 800) + (7 if k % 2 else 0),
            117.5 + 100 * math.sin(2 * math.pi * k / 800),
        )
        for k in range(800)
    ]
    for paint in (
        Paint("stroke", (([(x + 1, y + 1) for x, y in ring], True),), (0, 0, 0, 255)),
        Paint("fill", ((ring, True),), (1, 2, 3, 50)),
        Paint("stroke", ((ring, True),), (1, 2, 3, 255)),
        Paint("stroke", (([ring[0]], False),), (1, 2, 3, 255), 4.0),
    ):
        for ss in (SS, SS_SMALL):
            _same(paint, (5, 3, 240, 232), ss)


@needs_kernel
def test_compositing_equals_the_numpy_twin() -> None:
    rng = np.random.default_rng(3)
    for trial in range(40):
        h, w = int(rng.integers(1, 30)), int(rng.integers(1, 30))
        ch, cw = h + int(rng.integers(0, 9)), w + int(rng.integers(0, 9))
        at = (int(rng.integers(0, cw - w + 1)), int(rng.integers(0, ch - h + 1)))
        cov = rng.choice([0.0, 1.0, 0.5, 3 / 16, 0.015625], size=(h, w))
        start = rng.random((ch, cw, 4)) * (trial % 2)
        colour = (
            int(rng.integers(0, 256)),
            int(rng.integers(0, 256)),
            int(rng.integers(0, 256)),
            int(rng.choice([0, 50, 255, int(rng.integers(0, 256))])),
        )
        opacity = float(rng.choice([1.0, 0.8, 0.3333]))
        got, want = start.copy(), start.copy()
        composite(got, cov, at, colour, opacity)
        composite_numpy(want, cov, at, colour, opacity)
        assert np.array_equal(got, want), trial


@needs_kernel
def test_pixels_written_into_the_surface_equal_the_numpy_twin() -> None:
    """Halves of a level (ties, rounded to even), values past 0..1, a clear canvas."""
    rng = np.random.default_rng(8)
    for trial in range(30):
        h, w = int(rng.integers(1, 40)), int(rng.integers(1, 40))
        canvas = rng.choice(
            [0.0, 1.0, 0.5 / 255, 1.5 / 255, 2.5 / 255, 1.0000001, -1e-9], (h, w, 4)
        )
        canvas[rng.random((h, w)) < 0.5] = rng.random(4)
        if trial % 5 == 0:
            canvas[..., 3] = 0.0
        got, want = objraster._layer(canvas), objraster.layer_numpy(canvas)
        if want is None:
            assert got is None
            continue
        assert got is not None and got.get_size() == want.get_size() == (w, h)
        assert pygame.image.tobytes(got, "RGBA") == pygame.image.tobytes(want, "RGBA")


def _drawn(paints: list[Paint], opacity: float, ss: int) -> bytes:
    out = pygame.Surface((150, 130), pygame.SRCALPHA, 32)
    out.fill((0, 30, 60, 128))
    draw_paints(out, paints, opacity, ss)
    return pygame.image.tobytes(out, "RGBA")


@needs_kernel
def test_draw_paints_with_the_kernel_off_draws_the_same(monkeypatch: pytest.MonkeyPatch) -> None:
    rng = random.Random(9)
    cases = []
    for trial in range(30):
        paints = [p for p, _ in _paints(rng, trial)]
        cases.append((paints, rng.choice([1.0, 0.8]), SS if trial % 2 else SS_SMALL))
    on = [_drawn(*case) for case in cases]
    monkeypatch.setattr(kernel, "enabled", False)
    assert not kernel.available()
    assert on == [_drawn(*case) for case in cases]


@needs_kernel
@pytest.mark.parametrize("scale", [1.0, 1.5, 0.25])
@pytest.mark.parametrize(
    ("orientation", "tile", "kwargs"),
    [
        ("orthogonal", (32, 32), {}),
        ("isometric", (64, 32), {}),
        ("hexagonal", (32, 36), {"hexside": 18}),
    ],
    ids=["orthogonal", "isometric", "hexagonal"],
)
def test_a_whole_render_is_the_same_with_the_kernel_off(
    orientation: str,
    tile: tuple[int, int],
    kwargs: dict,
    scale: float,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    path = objects_map(tmp_path, orientation, tile, **kwargs)
    model, tmx = load_for_render(path)
    on = pygame.image.tobytes(render_map(model, tmx, scale=scale), "RGBA")
    monkeypatch.setattr(kernel, "enabled", False)
    off = pygame.image.tobytes(render_map(model, tmx, scale=scale), "RGBA")
    assert on == off


def test_a_kernel_without_the_functions_runs_the_twins(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(kernel, "_MISSING", ("objraster_pixels",))
    assert not kernel.available()

    def refuse(*args: object) -> int:
        raise AssertionError("the kernel ran")

    monkeypatch.setattr(kernel, "objraster_coverage", refuse)
    monkeypatch.setattr(kernel, "objraster_composite", refuse)
    monkeypatch.setattr(kernel, "objraster_pixels", refuse)
    paint = Paint("stroke", (([(3.0, 4.0), (20.5, 9.25)], False),), (1, 2, 3, 255))
    assert np.array_equal(coverage(paint, 0, 0, 30, 20), coverage_numpy(paint, 0, 0, 30, 20))
    canvas = np.zeros((20, 30, 4))
    composite(canvas, coverage(paint, 0, 0, 30, 20), (0, 0), paint.colour, 1.0)
    assert canvas[..., 3].any()
    assert objraster._layer(canvas) is not None


@needs_kernel
def test_far_off_coordinates_take_the_numpy_passes(monkeypatch: pytest.MonkeyPatch) -> None:
    """Beyond COMPILED_REACH (a hostile map's far-off object) the numpy passes answer."""
    far = objraster.COMPILED_REACH * 4
    paint = Paint("stroke", (([(3.0, 4.0), (far, 9.25)], False),), (1, 2, 3, 255))
    want = coverage_numpy(paint, 0, 0, 30, 20)

    def refuse(*args: object) -> int:
        raise AssertionError("the kernel ran")

    monkeypatch.setattr(kernel, "objraster_coverage", refuse)
    assert np.array_equal(coverage(paint, 0, 0, 30, 20), want)


@needs_kernel
def test_the_kernel_refuses_arrays_that_disagree() -> None:
    segs = np.zeros((2, 4))
    with pytest.raises(ValueError, match="disagree"):
        kernel.objraster_coverage(segs, np.zeros((3, 5)), 0, 0, 9, True, 1.0, 0.75, 0, 0.75, 0)
    with pytest.raises(ValueError, match="not finite"):
        kernel.objraster_coverage(
            np.full((1, 4), np.nan), np.zeros((3, 5)), 0, 0, 4, True, 1.0, 0.75, 0, 0.75, 0
        )
    with pytest.raises(ValueError, match="disagree"):
        kernel.objraster_pixels(np.zeros((2, 3, 4)), bytearray(20), 11, (16, 8, 0, 24))
    with pytest.raises(ValueError, match="disagree"):
        kernel.objraster_composite(np.zeros((4, 4, 4)), np.ones((3, 3)), (2, 0), (0, 0, 0), 1, 1)
