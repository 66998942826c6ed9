"""Pictures drawn with the map (:class:`~engine.mapmodel.ImageLayer`): a Universal VTT
file's map image, stretched over the grid.

The picture is decoded from its bytes only here, once per opacity (a small cache), and
drawn as the tile layers are (:mod:`engine.viewer.render`): premultiplied, into the area of
the output asked for, at any scale. At scale 1, unstretched and on whole pixels, it is
copied as it is; scaled or stretched, it fills the output pixels whose centres it covers,
each sampled bilinearly from the picture (edges clamped), as Qt's painter draws a
smooth-transformed pixmap; a whole-number stretch repeats pixels instead. Each output
pixel depends only on its own position, so the viewer's chunks and ``render``'s bands
give exactly the pixels of the whole picture.
"""

from __future__ import annotations

import io
import math
from collections import OrderedDict

import numpy as np
import pygame

from engine.errors import TacgridError
from engine.mapmodel import ImageLayer, MapModel
from engine.safeio import quiet_stderr
from engine.sources import PictureProblem, decoder_hint, picture_size, read_picture

#: Output pixels sampled per step (bounds the float buffers of a large area).
_BAND_PIXELS = 1 << 19
#: Decoded pictures kept (a map has one; the viewer redraws chunks often). Each may be
#: up to 256 MB (8192 x 8192 RGBA), so few.
_CACHE_SIZE = 2
_cache: OrderedDict[tuple[int, int], tuple[bytes, pygame.Surface | None, bool]] = OrderedDict()


def decoded(layer: ImageLayer, alpha: int = 255) -> tuple[pygame.Surface | None, bool]:
    """The picture as a premultiplied 32-bit ARGB surface with ``alpha / 255`` folded in
    (``None`` if it cannot be decoded), and whether every pixel is opaque."""
    key = (id(layer.data), alpha)
    hit = _cache.get(key)
    if hit is not None and hit[0] is layer.data:
        _cache.move_to_end(key)
        return hit[1], hit[2]
    surface, opaque = _decode(layer.data, alpha)
    _cache[key] = (layer.data, surface, opaque)
    while len(_cache) > _CACHE_SIZE:
        _cache.popitem(last=False)
    return surface, opaque


def decode_picture(data: bytes, name: str = "") -> pygame.Surface:
    """The one place pixels are decoded: bytes whose format and size
    :func:`engine.sources.picture_size` read from the header (a format not read there, or
    more than :data:`~engine.sources.MAX_PICTURE_PIXELS`, is a PictureProblem before any
    pixel is decoded). The decoder's own warnings (libpng's) are kept off the terminal."""
    kind, _w, _h = picture_size(data, name)
    with quiet_stderr():
        try:
            return pygame.image.load(io.BytesIO(data), decoder_hint(kind))
        except (pygame.error, OSError, ValueError, MemoryError) as exc:
            raise PictureProblem(f"a {kind} picture that cannot be decoded ({exc})") from None


def load_picture(path: str) -> tuple[pygame.Surface, bytes] | None:
    """A picture file decoded (:func:`decode_picture`), read through
    :func:`engine.sources.read_picture` (a regular file, size-capped), with its bytes;
    None if it cannot be used (the caller's map reader has said why)."""
    try:
        data, _kind, _w, _h = read_picture(path)
        return decode_picture(data, path), data
    except (TacgridError, PictureProblem):
        return None


def _decode(data: bytes, alpha: int) -> tuple[pygame.Surface | None, bool]:
    try:
        raw = decode_picture(data)
    except PictureProblem:
        return None, False
    # An explicit format, not convert_alpha(): no display is needed.
    surface = raw.convert(pygame.Surface((1, 1), pygame.SRCALPHA, 32))
    a = pygame.surfarray.pixels_alpha(surface)
    opaque = alpha >= 255 and int(a.min(initial=255)) == 255
    if not opaque:
        rgb = pygame.surfarray.pixels3d(surface)
        # A band of columns at a time, in 16 bits (255 * 255 + 127 fits): the whole
        # picture's channels widened at once took 2 GB for an 8192 x 8192 one.
        band = max(1, _BAND_PIXELS // max(1, a.shape[1]))
        for x in range(0, a.shape[0], band):
            a16 = a[x : x + band].astype(np.uint16)
            if alpha < 255:
                a16 = (a16 * alpha + 127) // 255
                a[x : x + band] = a16
            part = rgb[x : x + band]
            part[...] = (part.astype(np.uint16) * a16[..., None] + 127) // 255
        del rgb
    del a  # release the surface locks
    return surface, opaque


def drawable(model: MapModel) -> bool:
    """Does the model have a visible picture that can be decoded?"""
    return any(
        layer.visible and layer.opacity > 0 and decoded(layer)[0] is not None
        for layer in model.images
    )


def draw_image_layer(
    out: pygame.Surface, layer: ImageLayer, scale: float, rect: pygame.Rect
) -> bool:
    """Draw ``layer`` onto ``out`` (premultiplied), which holds the area ``rect`` of the map
    drawn at ``scale``; True if it drew any half-transparent pixel."""
    alpha = int(round(min(1.0, max(0.0, float(layer.opacity))) * 255))
    if not layer.visible or alpha == 0:
        return False
    src, opaque = decoded(layer, alpha)
    if src is None:
        return False
    iw, ih = src.get_size()
    (w, h), (ox, oy) = layer.size, layer.offset
    sx, sy = w * scale / iw, h * scale / ih  # output pixels per picture pixel
    left, top = ox * scale, oy * scale  # the picture's exact corner in output pixels
    x0, x1 = math.floor(left + 0.5), math.floor(left + w * scale + 0.5)
    y0, y1 = math.floor(top + 0.5), math.floor(top + h * scale + 0.5)
    area = pygame.Rect(x0, y0, x1 - x0, y1 - y0).clip(rect)
    if area.width <= 0 or area.height <= 0:
        return False
    flags = 0 if opaque else pygame.BLEND_PREMULTIPLIED
    if sx == 1 and sy == 1 and left == x0 and top == y0:  # as it is
        part = src.subsurface(area.move(-x0, -y0))
        out.blit(part, (area.x - rect.x, area.y - rect.y), special_flags=flags)
        return not opaque and _partial(part)
    partial = False
    band = max(1, _BAND_PIXELS // area.width)
    for by in range(area.top, area.bottom, band):
        rows = pygame.Rect(area.x, by, area.width, min(band, area.bottom - by))
        part = _sample(src, opaque, rows, (left, top), (sx, sy))
        out.blit(part, (rows.x - rect.x, rows.y - rect.y), special_flags=flags)
        partial = partial or (not opaque and _partial(part))
    return partial


def _sample(
    src: pygame.Surface,
    opaque: bool,
    area: pygame.Rect,
    corner: tuple[float, float],
    step: tuple[float, float],
) -> pygame.Surface:
    """Output pixels ``area`` of the picture drawn with its corner at ``corner`` and
    ``step`` output pixels per picture pixel: bilinear, or repeated pixels when both steps
    are whole numbers and the corner is on the pixel grid."""
    iw, ih = src.get_size()
    (left, top), (sx, sy) = corner, step
    u = (np.arange(area.left, area.right, dtype=np.float64) + 0.5 - left) / sx - 0.5
    v = (np.arange(area.top, area.bottom, dtype=np.float64) + 0.5 - top) / sy - 0.5
    chans = [pygame.surfarray.pixels3d(src)]
    if not opaque:
        chans.append(pygame.surfarray.pixels_alpha(src)[..., None])
    crisp = sx.is_integer() and sy.is_integer() and left.is_integer() and top.is_integer()
    if crisp:
        xi = np.clip(np.floor(u + 0.5), 0, iw - 1).astype(np.intp)
        yi = np.clip(np.floor(v + 0.5), 0, ih - 1).astype(np.intp)
        res = np.concatenate([c[np.ix_(xi, yi)] for c in chans], axis=2)
    else:
        ux, vy = np.floor(u), np.floor(v)
        tx = (u - ux).astype(np.float32)[:, None, None]
        ty = (v - vy).astype(np.float32)[None, :, None]
        xa = np.clip(ux, 0, iw - 1).astype(np.intp)
        xb = np.clip(ux + 1, 0, iw - 1).astype(np.intp)
        ya = np.clip(vy, 0, ih - 1).astype(np.intp)
        yb = np.clip(vy + 1, 0, ih - 1).astype(np.intp)
        parts = []
        for c in chans:  # only the four neighbours of each output pixel are gathered
            upper = c[np.ix_(xa, ya)] * (1 - tx) + c[np.ix_(xb, ya)] * tx
            lower = c[np.ix_(xa, yb)] * (1 - tx) + c[np.ix_(xb, yb)] * tx
            parts.append(upper * (1 - ty) + lower * ty)
        res = np.clip(np.rint(np.concatenate(parts, axis=2)), 0, 255).astype(np.uint8)
    del chans  # release the surface locks
    if opaque:
        result = pygame.Surface(area.size, 0, 32)
        pygame.surfarray.blit_array(result, res)
        return result
    result = pygame.Surface(area.size, pygame.SRCALPHA, 32)
    pygame.surfarray.blit_array(result, res[..., :3])
    alpha = pygame.surfarray.pixels_alpha(result)
    alpha[...] = res[..., 3]
    del alpha
    return result


def _partial(surface: pygame.Surface) -> bool:
    a = pygame.surfarray.array_alpha(surface)
    return bool(((a > 0) & (a < 255)).any())
