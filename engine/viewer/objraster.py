"""The pixels an object's paint covers, and their compositing (for
:mod:`engine.viewer.mapobjects`, which turns Tiled's objects into paints).

A paint is an even-odd fill or a round-capped stroke of straight segments in output pixels.
Pixels away from the shape's edges are decided at their centre; those near an edge are
sampled ``ss`` x ``ss`` times (the share of samples covered). Two ways give the same numbers,
bit for bit: the compiled kernel's ``objraster_coverage`` and ``objraster_composite``
(engine/_kernel.c), used where :func:`engine.kernel.objraster_available`, and the numpy
passes here (:func:`coverage_numpy`, :func:`composite_numpy`), which run otherwise
(tests/test_objraster.py holds them equal). The numpy passes work over segment-pixel pairs
in bounded chunks; the kernel walks the same segments over the same pixels, one at a time.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pygame

from engine import kernel

#: Samples per pixel along each axis when measuring coverage near an edge: 4 at scale 1
#: and above, 8 below (where a one-map-pixel shadow offset is a fraction of a pixel).
SS = 4
SS_SMALL = 8
Point = tuple[float, float]
#: A path's points: a list of points or an array of rows (x, y).
Points = Sequence[Point] | np.ndarray
Path = tuple[Points, bool]  # points (screen pixels), closed


@dataclass(frozen=True)
class Paint:
    """One drawing operation: fill (even-odd) or stroke (``half`` output pixels wide each
    side, round caps and joins) of paths, in a straight RGBA colour."""

    kind: str  # "fill" | "stroke"
    paths: tuple[Path, ...]
    colour: tuple[int, int, int, int]
    half: float = 1.0


def _segments(paths: Sequence[Path], fill: bool) -> np.ndarray:
    """The straight pieces of ``paths`` (closed ones, and every path of a fill, closed) as
    rows (ax, ay, bx, by); a single point is a piece of length 0."""
    parts = [np.zeros((0, 4))]
    for pts, closed in paths:
        at = np.asarray(pts, dtype=np.float64).reshape(-1, 2)
        if len(at) == 1:
            parts.append(np.concatenate([at, at], axis=1))
        elif (closed or fill) and len(at) > 2:
            parts.append(np.concatenate([at, np.roll(at, -1, axis=0)], axis=1))
        else:
            parts.append(np.concatenate([at[:-1], at[1:]], axis=1))
    return np.concatenate(parts)


#: Pairs (a segment and a pixel or row) worked on at once, and samples: the passes below
#: hold a few temporaries of this many numbers, small enough to be reused from the heap
#: (larger ones are mapped afresh each time, and their pages cost more than the arithmetic).
_PAIRS = 1 << 12
_SAMPLES = 1 << 14


def _expand(
    starts: np.ndarray, ends: np.ndarray, limit: int = _PAIRS
) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    """Every ``(i, v)`` with ``starts[i] <= v < ends[i]``, as two arrays, in chunks of at
    most about 2 x ``limit`` (a range longer than that is split)."""
    sizes = np.maximum(ends - starts, 0)
    pieces = -(-sizes // limit)
    owner = np.repeat(np.arange(sizes.size), pieces)
    if owner.size == 0:
        return
    nth = np.arange(owner.size) - np.repeat(np.cumsum(pieces) - pieces, pieces)
    lo = starts[owner] + nth * limit
    size = np.minimum(lo + limit, ends[owner]) - lo
    ends_at = np.cumsum(size)
    group = (ends_at - size) // limit
    cuts = [0, *(np.flatnonzero(np.diff(group)) + 1).tolist(), owner.size]
    for a, b in zip(cuts[:-1], cuts[1:], strict=False):
        sz = size[a:b]
        first = np.repeat(lo[a:b] - (np.cumsum(sz) - sz), sz)
        yield np.repeat(owner[a:b], sz), first + np.arange(int(sz.sum()))


#: (box, rows) -> the columns (first, end) of each row that can lie near the box's segment.
Narrow = Callable[[np.ndarray, np.ndarray], tuple[np.ndarray, np.ndarray]]


def _boxes(
    r0: np.ndarray,
    r1: np.ndarray,
    c0: np.ndarray,
    c1: np.ndarray,
    limit: int = _PAIRS,
    narrow: Narrow | None = None,
) -> Iterator[tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """Every cell ``(row, col)`` of each box ``[r0, r1) x [c0, c1)``, with its box's
    number, as three arrays, in chunks of at most about 2 x ``limit``; ``narrow``: each
    row only over the columns it gives (a long slanted segment's box is mostly far from
    it: its cells grow with its length squared, those near it with its length)."""
    for box, rows in _expand(r0, r1, limit):
        lo, hi = c0[box], c1[box]
        if narrow is not None:
            near_lo, near_hi = narrow(box, rows)
            lo, hi = np.maximum(lo, near_lo), np.minimum(hi, near_hi)
        for k, cols in _expand(lo, hi, limit):
            yield box[k], rows[k], cols


def _x_span(segs: np.ndarray, ylo: np.ndarray, yhi: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The least and greatest x of each segment (rows of ``segs``) between ``ylo`` and
    ``yhi`` (its end nearest the band where it does not reach it)."""
    ax, ay, bx, by = segs.T
    dy = by - ay
    flat = dy == 0
    safe = np.where(flat, 1.0, dy)
    t0, t1 = (ylo - ay) / safe, (yhi - ay) / safe
    tlo = np.where(flat, 0.0, np.clip(np.minimum(t0, t1), 0.0, 1.0))
    thi = np.where(flat, 1.0, np.clip(np.maximum(t0, t1), 0.0, 1.0))
    xa, xb = ax + tlo * (bx - ax), ax + thi * (bx - ax)
    return np.minimum(xa, xb), np.maximum(xa, xb)


def _seg_d2(px: np.ndarray, py: np.ndarray, ax: Any, ay: Any, bx: Any, by: Any) -> np.ndarray:
    """Squared distance from each point to its segment (arrays or numbers, broadcast)."""
    dx, dy = bx - ax, by - ay
    qx, qy = px - ax, py - ay
    l2 = dx * dx + dy * dy
    some = l2 > 0
    t = (qx * dx + qy * dy) / np.where(some, l2, 1.0)
    np.clip(t, 0.0, 1.0, out=t)
    if np.all(some):
        return np.asarray((qx - t * dx) ** 2 + (qy - t * dy) ** 2)
    return np.asarray(np.where(some, (qx - t * dx) ** 2 + (qy - t * dy) ** 2, qx * qx + qy * qy))


def _fill_grid(segs: np.ndarray, xs: np.ndarray, ys: np.ndarray) -> np.ndarray:
    """Even-odd inside test at every point of the grid ``ys`` x ``xs`` (scanlines): each
    crossing of a row flips the points left of it, so a row's parity is counted from the
    right over the crossings' places."""
    segs = segs[segs[:, 1] != segs[:, 3]]
    ax, ay, bx, by = segs.T
    lo, hi = np.minimum(ay, by), np.maximum(ay, by)
    slope = (bx - ax) / (by - ay)
    flips = np.zeros(ys.size * (xs.size + 1), dtype=np.uint8)
    r0, r1 = np.searchsorted(ys, lo, "left"), np.searchsorted(ys, hi, "left")
    for seg, rows in _expand(r0, r1):
        xc = ax[seg] + (ys[rows] - ay[seg]) * slope[seg]
        np.bitwise_xor.at(flips, rows * (xs.size + 1) + np.searchsorted(xs, xc, "left"), 1)
    grid = flips.reshape(ys.size, xs.size + 1)[:, ::-1]
    return np.bitwise_xor.accumulate(grid, axis=1)[:, -2::-1].astype(bool)


def _distance_grid(
    segs: np.ndarray, reach: float, xs: np.ndarray, ys: np.ndarray, near: float = -1.0
) -> tuple[np.ndarray, np.ndarray]:
    """Distance from each grid point to the nearest segment, where under ``reach``
    (``inf`` beyond): each segment is measured over the points of its box widened by
    ``reach``. And the pairs (segment, flat index of the point) at most ``near`` apart
    (``near`` < ``reach``), as two rows."""
    dist2 = np.full((ys.size, xs.size), np.inf)
    found: list[np.ndarray] = [np.zeros((2, 0), dtype=np.int64)]
    ax, ay, bx, by = segs.T
    c0 = np.searchsorted(xs, np.minimum(ax, bx) - reach, "left")
    c1 = np.searchsorted(xs, np.maximum(ax, bx) + reach, "right")
    r0 = np.searchsorted(ys, np.minimum(ay, by) - reach, "left")
    r1 = np.searchsorted(ys, np.maximum(ay, by) + reach, "right")
    flat = dist2.reshape(-1)

    def narrow(box: np.ndarray, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        # A point within reach of the segment lies within reach of its part in the band
        # of rows within reach (one pixel more each way: the rest lies farther, and no
        # distance beyond reach is used).
        y = ys[rows]
        xlo, xhi = _x_span(segs[box], y - reach - 1, y + reach + 1)
        return (
            np.searchsorted(xs, xlo - reach - 1, "left"),
            np.searchsorted(xs, xhi + reach + 1, "right"),
        )

    for seg, rows, cols in _boxes(r0, r1, c0, c1, narrow=narrow):
        d2 = _seg_d2(xs[cols], ys[rows], ax[seg], ay[seg], bx[seg], by[seg])
        at = rows * xs.size + cols
        np.minimum.at(flat, at, d2)
        if near >= 0:
            close = np.flatnonzero(d2 <= near * near)
            found.append(np.stack([seg[close], at[close]]))
    return np.sqrt(dist2), np.concatenate(found, axis=1)


def _packed(hit: np.ndarray) -> np.ndarray:
    """Each pair's (ss, ss) samples as the bits of one unsigned 64-bit number."""
    n = hit.shape[0]
    packed = np.packbits(hit.reshape(n, hit.shape[1] * hit.shape[2]), axis=1, bitorder="little")
    wide = np.zeros((n, 8), dtype=np.uint8)
    wide[:, : packed.shape[1]] = packed
    return wide.view("<u8").reshape(n)


def _fill_samples(
    segs: np.ndarray, x0: int, y0: int, rows: np.ndarray, cols: np.ndarray, ss: int
) -> np.ndarray:
    """Even-odd inside test at the ``ss`` x ``ss`` samples of each pixel ``(rows, cols)``
    (sorted by row), as bits: each segment flips the samples left of it in its rows."""
    sub = (np.arange(ss) + 0.5) / ss
    segs = segs[segs[:, 1] != segs[:, 3]]
    ax, ay, bx, by = segs.T
    lo, hi = np.minimum(ay, by), np.maximum(ay, by)
    slope = (bx - ax) / (by - ay)
    top = (y0 + rows) + sub[0]
    first = np.searchsorted(top + 1, lo, "right")
    last = np.searchsorted(top, hi, "left")
    bits = np.zeros(rows.size, dtype=np.uint64)
    for seg, pix in _expand(first, last, max(1, _SAMPLES // (ss * ss))):
        qy = ((y0 + rows[pix])[:, None] + sub[None, :])[:, :, None]  # (n, ss, 1)
        px = ((x0 + cols[pix])[:, None] + sub[None, :])[:, None, :]  # (n, 1, ss)
        s_lo, s_hi = lo[seg][:, None, None], hi[seg][:, None, None]
        xc = ax[seg][:, None, None] + (qy - ay[seg][:, None, None]) * slope[seg][:, None, None]
        hit = (qy >= s_lo) & (qy < s_hi) & (px < xc)
        np.bitwise_xor.at(bits, pix, _packed(hit))
    return bits


def _near_samples(
    segs: np.ndarray,
    half: float,
    x0: int,
    y0: int,
    width: int,
    pixels: tuple[np.ndarray, np.ndarray, np.ndarray],
    ss: int,
) -> np.ndarray:
    """Which of the ``ss`` x ``ss`` samples of each pixel ``(rows, cols)`` lie within
    ``half`` of a segment (round caps and joins), as bits. ``pixels``: rows, columns and
    the pairs (segment, flat index of a pixel of the area ``width`` wide) whose centres
    lie within half + :func:`_spread` (farther, no sample is within half), each tried
    where its pixel is one of ``rows``, ``cols`` and the segment's box widened by half
    reaches the pixel's first sample."""
    rows, cols, pairs = pixels
    sub = (np.arange(ss) + 0.5) / ss
    which = np.full(int(pairs[1].max(initial=0)) + 1, -1, dtype=np.int64)
    flat = rows * width + cols
    inside = flat < which.size
    which[flat[inside]] = np.flatnonzero(inside)
    pix = which[pairs[1]]
    keep = np.flatnonzero(pix >= 0)
    seg, pix = pairs[0][keep], pix[keep]
    r, c = rows[pix], cols[pix]
    ax, ay, bx, by = segs.T
    left, top = (x0 + c) + sub[0], (y0 + r) + sub[0]
    keep = np.flatnonzero(
        (left < np.maximum(ax, bx)[seg] + half)
        & (left + 1 > np.minimum(ax, bx)[seg] - half)
        & (top < np.maximum(ay, by)[seg] + half)
        & (top + 1 > np.minimum(ay, by)[seg] - half)
    )
    seg, pix, r, c = seg[keep], pix[keep], r[keep], c[keep]
    bits = np.zeros(rows.size, dtype=np.uint64)
    h2 = half * half
    step = max(1, _SAMPLES // (ss * ss))
    for a in range(0, seg.size, step):
        cut = slice(a, a + step)
        qy = ((y0 + r[cut])[:, None] + sub[None, :])[:, :, None]
        px = ((x0 + c[cut])[:, None] + sub[None, :])[:, None, :]
        s = [v[seg[cut]][:, None, None] for v in (ax, ay, bx, by)]
        np.bitwise_or.at(bits, pix[cut], _packed(_seg_d2(px, qy, *s) <= h2))
    return bits


#: A pixel whose centre lies farther than this from an edge is wholly inside or outside.
_EDGE = 0.75


def _spread(ss: int) -> float:
    """How far a pixel's ``ss`` x ``ss`` samples lie from its centre at most, and a hair
    more (so that rounding never counts a sample in that is out)."""
    return (ss - 1) / (2 * ss) * math.sqrt(2) + 1e-6


def _bounds(fill: bool, half: float, ss: int) -> tuple[float, float, float]:
    """How far a paint's distances are measured (``reach``), how near a segment must pass a
    pixel's centre to be tried on its samples (``near``), and how far from a stroke's
    segments a pixel is wholly covered (``inner``: within half less the samples' spread)."""
    if fill:
        return _EDGE, 0.0, 0.0
    return half + _EDGE, half + _spread(ss), half - _spread(ss)


def coverage_numpy(paint: Paint, x0: int, y0: int, w: int, h: int, ss: int = SS) -> np.ndarray:
    """:func:`coverage` in numpy passes. Each works segment by pixel pairs in bounded
    chunks, on the pixels about each segment only; a centre's distance is measured only as
    far as it decides anything (farther ones stay infinite)."""
    if not 1 <= ss <= 8:
        raise ValueError(f"coverage: {ss} samples a side; at most 8")
    fill = paint.kind == "fill"
    segs = _segments(paint.paths, fill)
    xs = x0 + np.arange(w) + 0.5
    ys = y0 + np.arange(h) + 0.5
    reach, near, inner = _bounds(fill, paint.half, ss)
    if fill:
        cov = _fill_grid(segs, xs, ys).astype(np.float64)
        dist, _ = _distance_grid(segs, reach, xs, ys)
        border = dist < _EDGE
    else:
        dist, pairs = _distance_grid(segs, reach, xs, ys, near)
        cov = (dist <= paint.half).astype(np.float64)
        # Within half less the samples' spread every sample is covered (cov is 1 there).
        border = np.abs(dist - paint.half) < _EDGE
        border &= dist > inner
    rows, cols = np.nonzero(border)
    if rows.size:
        if fill:
            bits = _fill_samples(segs, x0, y0, rows, cols, ss)
        else:
            bits = _near_samples(segs, paint.half, x0, y0, w, (rows, cols, pairs), ss)
        cov[rows, cols] = np.bitwise_count(bits) / (ss * ss)
    return cov


#: The compiled kernel takes coordinates within this many pixels of the origin: there no
#: product of its arithmetic overflows, so no NaN arises on either side (the numpy passes
#: take the rest, such as a hostile map's far-off object).
COMPILED_REACH = 1e12


def coverage(paint: Paint, x0: int, y0: int, w: int, h: int, ss: int = SS) -> np.ndarray:
    """The share of each pixel of the (w, h) area at (x0, y0) that ``paint`` covers.

    Pixels away from the shape's edges are decided at their centre; those near an edge
    are sampled ``ss`` x ``ss`` times (``ss`` at most 8). The compiled kernel works it out
    where it is available, else :func:`coverage_numpy`: the same numbers.
    """
    return _coverage(paint, _segments(paint.paths, paint.kind == "fill"), (x0, y0, w, h), ss)


def _coverage(
    paint: Paint, segs: np.ndarray, box: tuple[int, int, int, int], ss: int
) -> np.ndarray:
    """:func:`coverage` of ``paint``, whose pieces are ``segs``, over ``box`` (x0, y0, w, h)."""
    x0, y0, w, h = box
    if not 1 <= ss <= 8:
        raise ValueError(f"coverage: {ss} samples a side; at most 8")
    if w < 1 or h < 1 or not kernel.available():
        return coverage_numpy(paint, x0, y0, w, h, ss)
    if segs.size and not np.abs(segs).max() <= COMPILED_REACH:  # NaN fails too
        return coverage_numpy(paint, x0, y0, w, h, ss)
    fill = paint.kind == "fill"
    reach, near, inner = _bounds(fill, paint.half, ss)
    cov = np.empty((h, w), dtype=np.float64)
    kernel.objraster_coverage(segs, cov, x0, y0, ss, fill, paint.half, reach, near, _EDGE, inner)
    return cov


def composite_numpy(
    canvas: np.ndarray,
    cov: np.ndarray,
    at: tuple[int, int],
    colour: tuple[int, int, int, int],
    opacity: float,
) -> None:
    """Composite ``colour`` (straight RGBA), its alpha times ``cov`` and ``opacity``, over
    the premultiplied ``canvas`` (rows, columns, 4; 0..1) where ``cov`` (placed at column,
    row ``at`` of it) is not 0 (elsewhere an alpha of 0 would leave the pixels be)."""
    touched = np.flatnonzero(cov)
    if touched.size == 0:
        return
    a = cov.reshape(-1)[touched] * (colour[3] / 255.0) * opacity
    if not a.any():
        return
    src = np.array(colour[:3], dtype=np.float64) / 255.0
    rr, cc = np.divmod(touched, cov.shape[1])
    rr += at[1]
    cc += at[0]
    under = canvas[rr, cc] * (1.0 - a)[:, None]
    under[:, :3] += a[:, None] * src
    under[:, 3] += a
    canvas[rr, cc] = under


def composite(
    canvas: np.ndarray,
    cov: np.ndarray,
    at: tuple[int, int],
    colour: tuple[int, int, int, int],
    opacity: float,
) -> None:
    """:func:`composite_numpy`, by the compiled kernel where it is available."""
    if not kernel.available():
        composite_numpy(canvas, cov, at, colour, opacity)
        return
    src = np.array(colour[:3], dtype=np.float64) / 255.0
    kernel.objraster_composite(
        canvas, cov, at, (float(src[0]), float(src[1]), float(src[2])), colour[3] / 255.0, opacity
    )


def layer_numpy(canvas: np.ndarray) -> pygame.Surface | None:
    """The premultiplied ``canvas`` (rows, columns, 4; 0..1) as a 32-bit surface, each
    channel 255 times it rounded; None where no pixel has any alpha."""
    if not canvas[..., 3].any():
        return None
    px = np.clip(np.rint(canvas * 255.0), 0, 255).astype(np.uint8)
    layer = pygame.Surface((canvas.shape[1], canvas.shape[0]), pygame.SRCALPHA, 32)
    pygame.surfarray.blit_array(layer, px[..., :3].transpose(1, 0, 2))
    alpha = pygame.surfarray.pixels_alpha(layer)
    alpha[...] = px[..., 3].T
    del alpha  # release the surface lock
    return layer


def _layer(canvas: np.ndarray) -> pygame.Surface | None:
    """:func:`layer_numpy`, by the compiled kernel where it is available (written straight
    into the surface's pixels)."""
    if not kernel.available():
        return layer_numpy(canvas)
    layer = pygame.Surface((canvas.shape[1], canvas.shape[0]), pygame.SRCALPHA, 32)
    shifts = layer.get_shifts()
    if layer.get_bytesize() != 4 or any(layer.get_losses()) or any(s % 8 for s in shifts):
        return layer_numpy(canvas)
    pixels = layer.get_buffer()
    try:
        drawn = kernel.objraster_pixels(canvas, pixels, layer.get_pitch(), shifts)
    finally:
        del pixels  # release the surface lock
    return layer if drawn else None


def draw_paints(
    out: pygame.Surface, paints: list[Paint], opacity: float = 1.0, ss: int = SS
) -> bool:
    """Composite ``paints`` (output pixels) onto ``out``, which holds premultiplied colour;
    True if anything was drawn."""
    if not paints or opacity <= 0:
        return False
    pieces = [_segments(p.paths, p.kind == "fill") for p in paints]
    # Each paint's least and greatest x and y: those of its points, every one the end of
    # a piece.
    lows = [(float(s[:, 0::2].min()), float(s[:, 1::2].min())) for s in pieces]
    highs = [(float(s[:, 0::2].max()), float(s[:, 1::2].max())) for s in pieces]
    pad = max(p.half for p in paints) + 1
    ow, oh = out.get_size()
    x0 = max(0, math.floor(min(lo[0] for lo in lows) - pad))
    y0 = max(0, math.floor(min(lo[1] for lo in lows) - pad))
    x1 = min(ow, math.ceil(max(hi[0] for hi in highs) + pad))
    y1 = min(oh, math.ceil(max(hi[1] for hi in highs) + pad))
    if x0 >= x1 or y0 >= y1:
        return False
    boxes = []
    for p, lo, hi in zip(paints, lows, highs, strict=True):
        reach = p.half + 2
        boxes.append(
            (
                max(x0, math.floor(lo[0] - reach)),
                max(y0, math.floor(lo[1] - reach)),
                min(x1, math.ceil(hi[0] + reach)),
                min(y1, math.ceil(hi[1] + reach)),
            )
        )
    drew = False
    band = max(1, (1 << 22) // (x1 - x0))  # bound the pixels held at once
    for by0 in range(y0, y1, band):
        by1 = min(y1, by0 + band)
        canvas = np.zeros((by1 - by0, x1 - x0, 4), dtype=np.float64)  # premultiplied, 0..1
        for p, segs, (px0, py0, px1, py1) in zip(paints, pieces, boxes, strict=True):
            # Each paint over its own box (nothing outside it is covered), within the band.
            py0, py1 = max(py0, by0), min(py1, by1)
            if px0 >= px1 or py0 >= py1:
                continue
            cov = _coverage(p, segs, (px0, py0, px1 - px0, py1 - py0), ss)
            composite(canvas, cov, (px0 - x0, py0 - by0), p.colour, opacity)
        layer = _layer(canvas)
        if layer is None:
            continue
        drew = True
        out.blit(layer, (x0, by0), special_flags=pygame.BLEND_PREMULTIPLIED)
    return drew
