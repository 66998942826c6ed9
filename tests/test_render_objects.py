"""Object drawing (engine.viewer.mapobjects) against the plain way it was first written.

The coverage of a paint is measured over segment and pixel pairs in bounded chunks, and a
paint is composited over its own box; the plain way (kept below, as it was) loops over
segments one by one over the whole area. Both must give the same numbers, bit for bit, on
random shapes of every kind, at both sampling rates; and the work of a large shape must
not grow with its vertices one numpy call each (issue 42: 300 objects sharing an 800-point
polygon rendered in 47.8 CPU-s).
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable, Sequence

import numpy as np
import pygame
import pytest

from engine.viewer import objraster
from engine.viewer.objraster import SS, Paint, Path, Point, coverage, coverage_numpy, draw_paints

# --------------------------------------------------------------------------- the plain way


def plain_segments(paths: Sequence[Path], fill: bool) -> list[tuple[Point, Point]]:
    """The straight pieces of ``paths``: closed ones (and every path of a fill) closed."""
    segs: list[tuple[Point, Point]] = []
    for pts, closed in paths:
        if len(pts) == 1:
            segs.append((pts[0], pts[0]))
            continue
        segs.extend(zip(pts, pts[1:], strict=False))
        if (closed or fill) and len(pts) > 2:
            segs.append((pts[-1], pts[0]))
    return segs


def plain_fill_grid(segs: list[tuple[Point, Point]], xs: np.ndarray, ys: np.ndarray) -> np.ndarray:
    """Even-odd inside test at every point of the grid ``ys`` x ``xs`` (scanlines)."""
    inside = np.zeros((ys.size, xs.size), dtype=bool)
    for (ax, ay), (bx, by) in segs:
        if ay == by:
            continue
        lo, hi = (ay, by) if ay < by else (by, ay)
        r0, r1 = np.searchsorted(ys, lo, "left"), np.searchsorted(ys, hi, "left")
        if r0 >= r1:
            continue
        xc = ax + (ys[r0:r1] - ay) * ((bx - ax) / (by - ay))
        inside[r0:r1] ^= xs[None, :] < xc[:, None]
    return inside


def plain_distance_grid(
    segs: list[tuple[Point, Point]], reach: float, xs: np.ndarray, ys: np.ndarray
) -> np.ndarray:
    """Distance from each grid point to the nearest segment, where under ``reach``
    (``inf`` beyond)."""
    dist2 = np.full((ys.size, xs.size), np.inf)
    for (ax, ay), (bx, by) in segs:
        c0 = np.searchsorted(xs, min(ax, bx) - reach, "left")
        c1 = np.searchsorted(xs, max(ax, bx) + reach, "right")
        r0 = np.searchsorted(ys, min(ay, by) - reach, "left")
        r1 = np.searchsorted(ys, max(ay, by) + reach, "right")
        if c0 >= c1 or r0 >= r1:
            continue
        d2 = plain_seg_d2(xs[None, c0:c1], ys[r0:r1, None], ax, ay, bx, by)
        np.minimum(dist2[r0:r1, c0:c1], d2, out=dist2[r0:r1, c0:c1])
    return np.sqrt(dist2)


def plain_seg_d2(
    px: np.ndarray, py: np.ndarray, ax: float, ay: float, bx: float, by: float
) -> np.ndarray:
    dx, dy = bx - ax, by - ay
    qx, qy = px - ax, py - ay
    l2 = dx * dx + dy * dy
    if l2 <= 0:
        return np.asarray(qx * qx + qy * qy)
    t = np.clip((qx * dx + qy * dy) / l2, 0.0, 1.0)
    return np.asarray((qx - t * dx) ** 2 + (qy - t * dy) ** 2)


def plain_fill_points(
    segs: list[tuple[Point, Point]], px: np.ndarray, py: np.ndarray
) -> np.ndarray:
    """Even-odd inside test at each pixel's samples (``px``, ``py``: (pixels, SS, SS))."""
    inside = np.zeros(px.shape, dtype=bool)
    top = py[:, 0, 0]
    for (ax, ay), (bx, by) in segs:
        if ay == by:
            continue
        lo, hi = min(ay, by), max(ay, by)
        sel = np.flatnonzero((top < hi) & (top + 1 > lo))
        if sel.size == 0:
            continue
        qy = py[sel]
        xc = ax + (qy - ay) * ((bx - ax) / (by - ay))
        inside[sel] ^= (qy >= lo) & (qy < hi) & (px[sel] < xc)
    return inside


def plain_near_points(
    segs: list[tuple[Point, Point]], half: float, px: np.ndarray, py: np.ndarray
) -> np.ndarray:
    """Which samples (``px``, ``py``: (pixels, SS, SS)) lie within ``half`` of a segment
    (round caps and joins)."""
    hit = np.zeros(px.shape, dtype=bool)
    h2 = half * half
    left, top = px[:, 0, 0], py[:, 0, 0]
    for (ax, ay), (bx, by) in segs:
        sel = np.flatnonzero(
            (left < max(ax, bx) + half)
            & (left + 1 > min(ax, bx) - half)
            & (top < max(ay, by) + half)
            & (top + 1 > min(ay, by) - half)
        )
        if sel.size:
            hit[sel] |= plain_seg_d2(px[sel], py[sel], ax, ay, bx, by) <= h2
    return hit


#: A pixel whose centre lies farther than this from an edge is wholly inside or outside.
_EDGE = 0.75


def plain_coverage(paint: Paint, x0: int, y0: int, w: int, h: int, ss: int = SS) -> np.ndarray:
    """The share of each pixel of the (w, h) area at (x0, y0) that ``paint`` covers.

    Pixels away from the shape's edges are decided at their centre; those near an edge
    are sampled ``ss`` x ``ss`` times.
    """
    fill = paint.kind == "fill"
    segs = plain_segments(paint.paths, fill)
    xs = x0 + np.arange(w) + 0.5
    ys = y0 + np.arange(h) + 0.5
    if fill:
        cov = plain_fill_grid(segs, xs, ys).astype(np.float64)
        dist = plain_distance_grid(segs, _EDGE + 1, xs, ys)
        border = dist < _EDGE
    else:
        dist = plain_distance_grid(segs, paint.half + _EDGE + 1, xs, ys)
        cov = (dist <= paint.half).astype(np.float64)
        border = np.abs(dist - paint.half) < _EDGE
    rows, cols = np.nonzero(border)
    if rows.size:
        sub = (np.arange(ss) + 0.5) / ss
        px = (x0 + cols)[:, None, None] + sub[None, None, :]
        py = (y0 + rows)[:, None, None] + sub[None, :, None]
        px, py = np.broadcast_arrays(px, py)
        for a in range(0, rows.size, 4096):  # bound the samples held at once
            bx, by = px[a : a + 4096], py[a : a + 4096]
            if fill:
                hit = plain_fill_points(segs, bx, by)
            else:
                hit = plain_near_points(segs, paint.half, bx, by)
            cov[rows[a : a + 4096], cols[a : a + 4096]] = hit.mean(axis=(1, 2))
    return cov


def plain_draw_paints(
    out: pygame.Surface, paints: list[Paint], opacity: float = 1.0, ss: int = SS
) -> bool:
    """Composite ``paints`` (output pixels) onto ``out``, which holds premultiplied colour;
    True if anything was drawn."""
    if not paints or opacity <= 0:
        return False
    xs_all = [x for p in paints for pts, _ in p.paths for x, _ in pts]
    ys_all = [y for p in paints for pts, _ in p.paths for _, y in pts]
    pad = max(p.half for p in paints) + 1
    ow, oh = out.get_size()
    x0 = max(0, math.floor(min(xs_all) - pad))
    y0 = max(0, math.floor(min(ys_all) - pad))
    x1 = min(ow, math.ceil(max(xs_all) + pad))
    y1 = min(oh, math.ceil(max(ys_all) + pad))
    if x0 >= x1 or y0 >= y1:
        return False
    drew = False
    band = max(1, (1 << 22) // (x1 - x0))  # bound the pixels held at once
    for by0 in range(y0, y1, band):
        by1 = min(y1, by0 + band)
        canvas = np.zeros((by1 - by0, x1 - x0, 4), dtype=np.float64)  # premultiplied, 0..1
        for p in paints:
            cov = plain_coverage(p, x0, by0, x1 - x0, by1 - by0, ss)
            a = cov * (p.colour[3] / 255.0) * opacity
            if not a.any():
                continue
            src = np.array(p.colour[:3], dtype=np.float64) / 255.0
            canvas *= (1.0 - a)[..., None]
            canvas[..., :3] += a[..., None] * src
            canvas[..., 3] += a
        if not canvas[..., 3].any():
            continue
        drew = True
        px = np.clip(np.rint(canvas * 255.0), 0, 255).astype(np.uint8)
        layer = pygame.Surface((x1 - x0, by1 - by0), pygame.SRCALPHA, 32)
        pygame.surfarray.blit_array(layer, px[..., :3].transpose(1, 0, 2))
        alpha = pygame.surfarray.pixels_alpha(layer)
        alpha[...] = px[..., 3].T
        del alpha  # release the surface lock
        out.blit(layer, (x0, by0), special_flags=pygame.BLEND_PREMULTIPLIED)
    return drew


# --------------------------------------------------------------------------- tests


def _shape(rng: random.Random, kind: str) -> list[Point]:
    """Random vertices: a star-ish ring, a zigzag with horizontal and repeated points, a
    long thin sliver, or a single point; fractional coordinates, some on pixel lines."""
    cx, cy = rng.uniform(10, 60), rng.uniform(10, 60)
    if kind == "ring":
        n = rng.randint(3, 120)
        return [
            (
                cx + rng.uniform(5, 40) * math.cos(2 * math.pi * k / n),
                cy + rng.uniform(5, 40) * math.sin(2 * math.pi * k / n),
            )
            for k in range(n)
        ]
    if kind == "zigzag":
        pts = [(float(rng.randint(0, 80)), float(rng.randint(0, 80))) for _ in range(30)]
        pts += [pts[-1], (pts[-1][0] + 7.5, pts[-1][1])]  # a repeated point, a flat edge
        return pts
    if kind == "sliver":
        return [(cx, cy), (cx + 70.3, cy + 0.25), (cx + 70.3, cy + 0.5)]
    return [(cx + 0.5, cy)]


@pytest.mark.parametrize("way", [coverage, coverage_numpy], ids=["seam", "numpy"])
@pytest.mark.parametrize("ss", [SS, 8])
@pytest.mark.parametrize("kind", ["ring", "zigzag", "sliver", "dot"])
def test_coverage_equals_the_plain_way(kind: str, ss: int, way: Callable[..., np.ndarray]) -> None:
    rng = random.Random(f"{kind}{ss}")
    for trial in range(12):
        pts = _shape(rng, kind)
        half = rng.choice([1.0, 4.0, 0.3])
        closed = rng.random() < 0.5
        for paint in (
            Paint("fill", ((pts, True),), (10, 20, 30, 50)),
            Paint("stroke", ((pts, closed),), (10, 20, 30, 255), half),
            Paint("stroke", ((pts, closed), ([p[::-1] for p in pts], False)), (1, 2, 3, 4), half),
        ):
            x0, y0 = rng.randint(-20, 10), rng.randint(-20, 10)
            w, h = rng.randint(1, 120), rng.randint(1, 120)
            got = way(paint, x0, y0, w, h, ss)
            want = plain_coverage(paint, x0, y0, w, h, ss)
            assert np.array_equal(got, want), (kind, trial, paint.kind, ss)


def test_chunks_of_a_long_segment_equal_the_plain_way(monkeypatch: pytest.MonkeyPatch) -> None:
    """Boxes split into many chunks (a long diagonal, tiny chunk limits) change nothing."""
    monkeypatch.setattr(objraster, "_PAIRS", 7)
    monkeypatch.setattr(objraster, "_SAMPLES", 40)
    pts = [(0.3, 0.7), (150.2, 90.9), (20.0, 140.5)]
    for paint in (
        Paint("fill", ((pts, True),), (1, 2, 3, 255)),
        Paint("stroke", ((pts, True),), (1, 2, 3, 255), 2.5),
    ):
        for ss in (4, 8):
            got = coverage_numpy(paint, -3, -2, 160, 150, ss)
            assert np.array_equal(got, plain_coverage(paint, -3, -2, 160, 150, ss))


def test_draw_paints_equals_the_plain_way() -> None:
    """Paints composited each over its own box: the same pixels as over the whole one."""
    rng = random.Random(5)
    for trial in range(6):
        ring = _shape(rng, "ring")
        paints = [
            Paint("stroke", (([(x + 1, y + 1) for x, y in ring], True),), (0, 0, 0, 255)),
            Paint("fill", ((ring, True),), (200, 40, 40, 50)),
            Paint("stroke", ((ring, True),), (200, 40, 40, 255)),
            Paint("stroke", (([ring[0]], False),), (200, 40, 40, 255), 4.0),
        ]
        opacity = rng.choice([1.0, 0.6])
        ss = rng.choice([4, 8])
        surfaces = []
        for draw in (draw_paints, plain_draw_paints):
            out = pygame.Surface((90 + trial, 80), pygame.SRCALPHA, 32)
            out.fill((0, 30, 60, 128))
            assert draw(out, paints, opacity, ss)
            surfaces.append(pygame.image.tobytes(out, "RGBA"))
        assert surfaces[0] == surfaces[1], trial


def test_a_large_polygon_is_measured_in_a_few_numpy_passes(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """An 800-point polygon's fill and outline: the plain way called the segment distance
    once per segment per pass (1 600 calls or more); now once per chunk of a few thousand
    segment and pixel pairs (76 for the outline)."""
    calls = 0
    real = objraster._seg_d2

    def counted(*args: object) -> np.ndarray:
        nonlocal calls
        calls += 1
        return real(*args)  # type: ignore[arg-type]

    monkeypatch.setattr(objraster, "_seg_d2", counted)
    ring = [
        (
            100 + 100 * math.cos(2 * math.pi * k / 800) + (7 if k % 2 else 0),
            100 + 100 * math.sin(2 * math.pi * k / 800),
        )
        for k in range(800)
    ]
    for paint in (
        Paint("fill", ((ring, True),), (1, 2, 3, 50)),
        Paint("stroke", ((ring, True),), (1, 2, 3, 255)),
    ):
        calls = 0
        coverage_numpy(paint, -5, -5, 230, 230)
        assert 0 < calls <= 100, (paint.kind, calls)
