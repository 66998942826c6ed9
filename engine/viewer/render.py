"""Draw a map's tile layers the way Tiled draws them.

The reference is Tiled's own renderer (``tmxrasterizer``, i.e. libtiled's map renderers and
its ``CellRenderer``); the tests compare against it pixel by pixel. What is followed:

* placement: a tile image's bottom-left corner sits at the cell's origin
  (:meth:`~engine.grid.Grid.cell_origin`) plus ``(0, tile height)`` (on hexagonal and
  staggered maps the tile height rounded down to even, as Tiled does), plus the tileset's
  tile offset and the layer's offset; images larger than the grid overhang up and right;
* order: tile layers in document order (group visibility, opacity and offsets are already
  folded in by the reader); within a layer, cells by screen row and then left to right, as
  Tiled's isometric, staggered and hexagonal loops do; orthogonal maps by ``renderorder``;
* flips: horizontal, vertical and anti-diagonal (a transpose, then the other two flips). On
  hexagonal maps Tiled turns the anti-diagonal bit into a 60-degree rotation and the hex bit
  into a 120-degree one, about the image's centre, sampled bilinearly (Qt's smooth pixmap
  transform); that is done here too, with numpy;
* a layer's opacity multiplies the alpha of each tile drawn (Qt's ``QPainter::setOpacity``),
  and a layer ``tint`` (Tiled 1.8's tint colour) multiplies its colours, when the model's
  layer carries one (the reader does not record tints yet);
* compositing is done in premultiplied alpha, as Qt does, so that half-transparent tile
  edges over other half-transparent edges blend as in Tiled; the result is straight alpha;
* an animated tile shows its first frame (tmxrasterizer without ``--advance-animations``);
* paletted PNGs are made transparent by palette index, as Qt does (SDL goes by colour);
* the map's background colour fills the canvas when set, as Tiled's editor shows it
  (tmxrasterizer leaves it out: compare with ``background=False``).

The canvas is the map's pixel size (:meth:`~engine.grid.Grid.pixel_size`); what a layer
offset pushes beyond it is clipped (tmxrasterizer grows its canvas instead).

Cells whose tile has no usable image (an image that cannot be decoded, a tile outside its
tileset image, a tileset without an image as in generated test maps) are drawn as the cell's
polygon in a colour per terrain ``move`` (:data:`TERRAIN_COLOURS`), with a thin outline,
standing in for the tile (same layer offset and opacity).

Not drawn: object layers and image layers (the viewer draws tokens and overlays itself), and
Tiled 1.9+ tile render size, fill mode and image-collection sub-rectangles, which Tiled 1.8's
tmxrasterizer ignores too. Known difference: on isometric maps with an odd tile height Tiled
puts tiles on half pixels; plain tiles are rounded there as Qt does, but Qt resamples
flipped ones half a pixel off (slightly blurred), which is not reproduced.

No display is needed: surfaces are converted to a 32-bit ARGB format with
``Surface.convert(template)`` instead of ``convert_alpha()``, so rendering to a file never
opens a window, with or without ``SDL_VIDEODRIVER=dummy``.

>>> model, tmx = load_for_render("maps/hex_pointy.tmx")  # doctest: +SKIP
>>> render_map(model, tmx).get_size() == model.grid.pixel_size()  # doctest: +SKIP
True
"""

from __future__ import annotations

import bisect
import math
import os
import weakref
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import pygame

from engine.errors import ArgumentError
from engine.grid import Grid
from engine.mapmodel import MODES, MapModel
from engine.tiled import read_tiled, tmx_of

#: Tiled's flag bits as the model keeps them (``TileLayer.flags``: the gid's top bits >> 28).
FLIP_H, FLIP_V, FLIP_D, ROT_120 = 8, 4, 2, 1

#: Fill colour per terrain ``move`` for cells drawn without a tile image.
TERRAIN_COLOURS: dict[str, tuple[int, int, int]] = {
    "walk": (112, 170, 84),  # green
    "crawl": (128, 128, 40),  # olive
    "swim": (58, 120, 204),  # blue
    "climb": (128, 88, 52),  # brown
    "ladder": (210, 180, 140),  # tan
    "gap": (0, 0, 0),  # black
    "air": (190, 226, 250),  # pale sky
    "blocked": (64, 64, 64),  # dark grey
}

_ORDERS = ("right-down", "right-up", "left-down", "left-up")
Tint = tuple[int, int, int, int] | None
_IMAGE_CACHE_SIZE = 64


# --------------------------------------------------------------------------- images


def _argb(surface: pygame.Surface) -> pygame.Surface:
    """The surface as 32-bit ARGB with per-pixel alpha (a colour key becomes alpha 0).

    ``convert_alpha()`` would need a display; converting to an explicit format does not.
    """
    return surface.convert(pygame.Surface((1, 1), pygame.SRCALPHA, 32))


def _opaque(surface: pygame.Surface) -> pygame.Surface:
    """A copy without an alpha channel, for the fast opaque blit path."""
    return surface.convert(pygame.Surface((1, 1), 0, 32))


def parse_colour(text: str | None) -> tuple[int, int, int, int] | None:
    """A Tiled colour (``#rrggbb``, ``#aarrggbb``, with or without ``#``) as RGBA.

    >>> parse_colour("#80ff0000")
    (255, 0, 0, 128)
    """
    if not text:
        return None
    s = str(text).strip().lstrip("#")
    try:
        if len(s) == 6:
            return (int(s[0:2], 16), int(s[2:4], 16), int(s[4:6], 16), 255)
        if len(s) == 8:
            return (int(s[2:4], 16), int(s[4:6], 16), int(s[6:8], 16), int(s[0:2], 16))
    except ValueError:
        return None
    return None


def _png_transparent_index(path: str) -> int | None:
    """The palette index a paletted PNG's ``tRNS`` chunk makes fully transparent."""
    try:
        with open(path, "rb") as fh:
            data = fh.read()
    except OSError:
        return None
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        return None
    pos = 8
    while pos + 8 <= len(data):
        length = int.from_bytes(data[pos : pos + 4], "big")
        kind = data[pos + 4 : pos + 8]
        if kind == b"tRNS":
            alphas = data[pos + 8 : pos + 8 + length]
            zero = [i for i, a in enumerate(alphas) if a == 0]
            return zero[0] if zero else None
        if kind in (b"IDAT", b"IEND"):
            return None
        pos += 12 + length
    return None


def _palette_to_argb(path: str, image: pygame.Surface) -> pygame.Surface:
    """A paletted image with a colour key, made transparent by palette index.

    SDL converts such a colour key by colour value, so every other palette entry of the
    same colour (often black) would turn transparent too; Qt, and so Tiled, go by index.
    """
    key = image.get_colorkey()
    index = _png_transparent_index(path)
    if index is None and key is not None:
        index = int(image.map_rgb(key))
    palette = np.array([tuple(c)[:3] for c in image.get_palette()], dtype=np.uint8)
    indices = pygame.surfarray.array2d(image)
    out = pygame.Surface(image.get_size(), pygame.SRCALPHA, 32)
    pygame.surfarray.blit_array(out, palette[indices])
    alpha = pygame.surfarray.pixels_alpha(out)
    alpha[...] = np.where(indices == index, 0, 255).astype(np.uint8)
    del alpha  # release the surface lock
    return out


_images: dict[tuple[str, int, int, str | None], pygame.Surface | None] = {}


def load_image(path: str, trans: str | None = None) -> pygame.Surface | None:
    """An image file as an ARGB surface, or ``None`` if it is missing or cannot be decoded.

    ``trans`` is Tiled's transparent colour (``ff00ff``): pixels of that colour become
    transparent. Decoded files are cached by path, modification time and size, so that the
    reader's loader and the renderer share them.
    """
    try:
        st = os.stat(path)
    except OSError:
        return None
    key = (os.path.abspath(path), st.st_mtime_ns, st.st_size, trans or None)
    if key in _images:
        return _images[key]
    image: pygame.Surface | None
    try:
        raw = pygame.image.load(path)
    except (pygame.error, OSError, ValueError):
        image = None
    else:
        if raw.get_bitsize() == 8 and raw.get_colorkey() is not None:
            image = _palette_to_argb(path, raw)
        else:
            image = _argb(raw)
        colour = parse_colour(trans)
        if colour is not None:
            rgb = pygame.surfarray.pixels3d(image)
            alpha = pygame.surfarray.pixels_alpha(image)
            alpha[(rgb == np.array(colour[:3], dtype=np.uint8)).all(axis=2)] = 0
            del rgb, alpha  # release the surface locks
    if len(_images) >= _IMAGE_CACHE_SIZE:
        _images.clear()
    _images[key] = image
    return image


def _transpose(surface: pygame.Surface) -> pygame.Surface:
    # A quarter turn clockwise, then a mirror: pixel (x, y) comes from (y, x).
    return pygame.transform.flip(pygame.transform.rotate(surface, -90), True, False)


def image_loader(filename: str, colorkey: Any = None, **_: Any) -> Callable[..., Any]:
    """A pytmx image loader on pygame that never raises (pass it to ``read_tiled``).

    pytmx's own ``pygame_image_loader`` needs a display and raises on an image it cannot
    decode, which would refuse the whole map; here such tiles come back as ``None``.
    """
    sheet = load_image(filename, colorkey)

    def load(rect: Any = None, flags: Any = None) -> pygame.Surface | None:
        if sheet is None:
            return None
        if rect:
            x, y, w, h = (int(v) for v in rect)
            if x < 0 or y < 0 or x + w > sheet.get_width() or y + h > sheet.get_height():
                return None
            tile = sheet.subsurface((x, y, w, h)).copy()
        else:
            tile = sheet.copy()
        if flags is not None:
            if getattr(flags, "flipped_diagonally", False):
                tile = _transpose(tile)
            fh = bool(getattr(flags, "flipped_horizontally", False))
            fv = bool(getattr(flags, "flipped_vertically", False))
            if fh or fv:
                tile = pygame.transform.flip(tile, fh, fv)
        return tile

    return load


def load_for_render(path: str | os.PathLike[str]) -> tuple[MapModel, Any]:
    """Read a map for drawing: the model and pytmx's map with pygame surfaces.

    Tile images that are missing or cannot be decoded do not stop the load:
    :func:`render_map` draws those cells in their terrain colour (the model's notes say so).
    """
    tf = read_tiled(path, image_loader=image_loader, missing_images="skip")
    return tf.model, tf.tmx


def render_source(model: MapModel) -> Any:
    """pytmx's map to draw an already loaded ``model`` with, without reading its file again.

    A model from :func:`~engine.tiled.load_map` (a scenario's, say) keeps the pytmx map read
    with it; a copy of one reads its file; a model built in code has none (``None``: every
    cell in its terrain colour).
    """
    tmx = tmx_of(model)
    if tmx is None and model.path:
        tmx = load_for_render(model.path)[1]
    return tmx


@dataclass(frozen=True)
class TileImage:
    """One tile's untransformed image and its tileset's tile offset."""

    surface: pygame.Surface
    offset: tuple[int, int]


class TileImages:
    """Tiled gid -> :class:`TileImage`, built from pytmx's tilesets.

    pytmx's own ``images`` list only holds the tiles pytmx registered, and the reader hands
    pytmx no layer data, so the table is rebuilt here with Tiled's slicing: a tileset image
    has ``(width - margin + spacing) // (tilewidth + spacing)`` columns, and likewise rows.
    """

    def __init__(self, tmx: Any) -> None:
        self._base = os.path.dirname(os.path.abspath(getattr(tmx, "filename", "") or "."))
        tilesets = sorted(getattr(tmx, "tilesets", []) or [], key=lambda ts: int(ts.firstgid))
        self._tilesets = tilesets
        self._firsts = [int(ts.firstgid) for ts in tilesets]
        self._cache: dict[int, TileImage | None] = {}
        # Per-tile images (image collections) and first animation frames, by Tiled gid.
        self._sources: dict[int, tuple[str, str | None]] = {}
        self._frames: dict[int, int] = {}
        to_tiled = getattr(tmx, "tiledgidmap", {}) or {}
        for pgid, props in (getattr(tmx, "tile_properties", {}) or {}).items():
            tgid = to_tiled.get(pgid)
            if tgid is None or not isinstance(props, dict):
                continue
            if props.get("source"):
                self._sources[int(tgid)] = (str(props["source"]), props.get("trans"))
            frames = props.get("frames") or []
            if frames:
                first = to_tiled.get(getattr(frames[0], "gid", None))
                if first is not None and int(first) != int(tgid):
                    self._frames[int(tgid)] = int(first)

    def tilesets_of(self, gids: np.ndarray) -> list[Any]:
        """The pytmx tilesets that these gids belong to."""
        found = {bisect.bisect_right(self._firsts, int(g)) - 1 for g in np.unique(gids).tolist()}
        return [self._tilesets[i] for i in sorted(found) if i >= 0]

    def get(self, gid: int) -> TileImage | None:
        """The image drawn for a Tiled gid (flags stripped), or ``None`` if it has none."""
        gid = self._frames.get(gid, gid)
        if gid not in self._cache:
            self._cache[gid] = self._load(gid)
        return self._cache[gid]

    def _load(self, gid: int) -> TileImage | None:
        i = bisect.bisect_right(self._firsts, gid) - 1
        if gid <= 0 or i < 0:
            return None
        ts = self._tilesets[i]
        try:
            offset = (int(float(ts.offset[0])), int(float(ts.offset[1])))
        except (TypeError, ValueError, IndexError):
            offset = (0, 0)
        local = gid - int(ts.firstgid)
        surface: pygame.Surface | None = None
        if gid in self._sources:
            src, trans = self._sources[gid]
            surface = load_image(os.path.join(self._base, src), trans)
        elif getattr(ts, "source", None):
            sheet = load_image(os.path.join(self._base, ts.source), getattr(ts, "trans", None))
            if sheet is not None:
                surface = self._slice(ts, sheet, local)
        if surface is None:
            return None
        return TileImage(surface, offset)

    @staticmethod
    def _slice(ts: Any, sheet: pygame.Surface, local: int) -> pygame.Surface | None:
        tw, th = int(ts.tilewidth), int(ts.tileheight)
        margin, spacing = int(ts.margin or 0), int(ts.spacing or 0)
        if tw <= 0 or th <= 0:
            return None
        sw, sh = sheet.get_size()
        cols = max(0, (sw - margin + spacing) // (tw + spacing))
        rows = max(0, (sh - margin + spacing) // (th + spacing))
        if local >= cols * rows:
            return None
        x = margin + (local % cols) * (tw + spacing)
        y = margin + (local // cols) * (th + spacing)
        if x + tw > sw or y + th > sh:
            return None
        return sheet.subsurface((x, y, tw, th)).copy()


# --------------------------------------------------------------------------- transforms


@dataclass(frozen=True)
class Stamp:
    """A ready-to-blit surface and its top-left corner relative to the cell's anchor.

    The anchor is Tiled's tile position: the cell origin plus ``(0, tile height)``.
    """

    surface: pygame.Surface
    dx: int
    dy: int
    opaque: bool = False  # no alpha channel: drawn by plain copy
    partial: bool = False  # has half-transparent pixels (the canvas then needs unpremultiplying)


def _rotate_bilinear(
    surface: pygame.Surface, angle: float, flip_h: bool, flip_v: bool, offset: tuple[int, int]
) -> Stamp:
    """Mirror, then turn ``angle`` degrees clockwise about the image centre, as Qt does.

    Qt's raster engine samples each destination pixel centre through the inverse transform,
    bilinearly in premultiplied colour with the source's edge pixels clamped, and fills the
    pixels whose centre lies inside the turned image (no edge antialiasing).
    """
    w, h = surface.get_size()
    rgb = pygame.surfarray.array3d(surface).astype(np.float64)  # (w, h, 3)
    alpha = pygame.surfarray.array_alpha(surface).astype(np.float64) / 255.0
    src = np.concatenate([rgb * alpha[..., None], alpha[..., None] * 255.0], axis=2)
    src = src.transpose(1, 0, 2)  # (h, w, 4), premultiplied
    sx, sy = (-1.0 if flip_h else 1.0), (-1.0 if flip_v else 1.0)
    a = math.radians(angle)
    c, s = math.cos(a), math.sin(a)
    # The image centre, relative to the anchor (its bottom-left corner plus the offset).
    cx, cy = w / 2 + offset[0], -h / 2 + offset[1]
    xs, ys = [], []
    for ux, uy in ((-w / 2, -h / 2), (w / 2, -h / 2), (w / 2, h / 2), (-w / 2, h / 2)):
        ux, uy = ux * sx, uy * sy
        xs.append(c * ux - s * uy)
        ys.append(s * ux + c * uy)
    x0, x1 = math.floor(cx + min(xs)), math.ceil(cx + max(xs))
    y0, y1 = math.floor(cy + min(ys)), math.ceil(cy + max(ys))
    px = np.arange(x0, x1, dtype=np.float64) + 0.5 - cx
    py = np.arange(y0, y1, dtype=np.float64) + 0.5 - cy
    gx, gy = np.meshgrid(px, py)  # (H, W)
    u = (c * gx + s * gy) * sx + w / 2
    v = (-s * gx + c * gy) * sy + h / 2
    inside = (u >= 0) & (u < w) & (v >= 0) & (v < h)
    fx, fy = u - 0.5, v - 0.5
    ix, iy = np.floor(fx), np.floor(fy)
    tx, ty = (fx - ix)[..., None], (fy - iy)[..., None]
    xa = np.clip(ix, 0, w - 1).astype(np.intp)
    xb = np.clip(ix + 1, 0, w - 1).astype(np.intp)
    ya = np.clip(iy, 0, h - 1).astype(np.intp)
    yb = np.clip(iy + 1, 0, h - 1).astype(np.intp)
    top = src[ya, xa] * (1 - tx) + src[ya, xb] * tx
    bottom = src[yb, xa] * (1 - tx) + src[yb, xb] * tx
    out = top * (1 - ty) + bottom * ty
    out[~inside] = 0.0
    a_out = out[..., 3]
    colour = np.where(
        a_out[..., None] > 0, out[..., :3] * 255.0 / np.maximum(a_out, 1e-9)[..., None], 0
    )
    result = pygame.Surface((x1 - x0, y1 - y0), pygame.SRCALPHA, 32)
    pygame.surfarray.blit_array(
        result, np.clip(np.rint(colour), 0, 255).astype(np.uint8).transpose(1, 0, 2)
    )
    alpha_view = pygame.surfarray.pixels_alpha(result)
    alpha_view[...] = np.clip(np.rint(a_out), 0, 255).astype(np.uint8).T
    del alpha_view  # release the surface lock
    return Stamp(result, x0, y0)


def transform_tile(image: TileImage, flags: int, hexagonal: bool) -> Stamp:
    """The tile as drawn with Tiled's flip flags (see :data:`FLIP_H` and friends)."""
    surface = image.surface
    ox, oy = image.offset
    fh, fv = bool(flags & FLIP_H), bool(flags & FLIP_V)
    if not hexagonal:
        # Tiled ignores the hex bit outside hexagonal maps.
        if flags & FLIP_D:
            surface = _transpose(surface)
        if fh or fv:
            surface = pygame.transform.flip(surface, fh, fv)
        return Stamp(surface, ox, oy - surface.get_height())
    angle = (60 if flags & FLIP_D else 0) + (120 if flags & ROT_120 else 0)
    if angle == 180:  # a half turn is both mirrors, pixel exact
        fh, fv, angle = not fh, not fv, 0
    if angle == 0:
        if fh or fv:
            surface = pygame.transform.flip(surface, fh, fv)
        return Stamp(surface, ox, oy - surface.get_height())
    return _rotate_bilinear(surface, angle, fh, fv, (ox, oy))


def _premultiply(surface: pygame.Surface, alpha: int = 255) -> pygame.Surface:
    """A premultiplied copy, every channel scaled by ``alpha / 255`` (a layer's opacity).

    Rounded as Qt's ``qPremultiply`` (``round(c * a / 255)``), not truncated.
    """
    out = surface.copy()
    a = pygame.surfarray.pixels_alpha(out)
    rgb = pygame.surfarray.pixels3d(out)
    a32 = a.astype(np.uint32)
    if alpha < 255:
        a32 = (a32 * alpha + 127) // 255
        a[...] = a32
    rgb[...] = (rgb.astype(np.uint32) * a32[..., None] + 127) // 255
    del a, rgb  # release the surface locks
    return out


def _tinted(surface: pygame.Surface, tint: tuple[int, int, int, int]) -> pygame.Surface:
    """Tiled's tint: colours multiplied by the tint colour, alpha by the tint's alpha."""
    out = surface.copy()
    rgb = pygame.surfarray.pixels3d(out)
    rgb[...] = (rgb.astype(np.uint32) * np.array(tint[:3], dtype=np.uint32) + 127) // 255
    a = pygame.surfarray.pixels_alpha(out)
    a[...] = (a.astype(np.uint32) * tint[3] + 127) // 255
    del rgb, a  # release the surface locks
    return out


def _finish(stamp: Stamp, alpha: int, tint: Tint = None) -> Stamp:
    """Ready a stamp for drawing: opaque tiles lose their alpha channel (the fast blit
    path); the others are premultiplied, with the layer's tint and opacity folded in."""
    surface = stamp.surface
    if tint is not None and tint != (255, 255, 255, 255):
        surface = _tinted(surface, tint)
    if alpha >= 255 and int(pygame.surfarray.array_alpha(surface).min(initial=255)) == 255:
        return Stamp(_opaque(surface), stamp.dx, stamp.dy, opaque=True)
    surface = _premultiply(surface, alpha)
    a = pygame.surfarray.array_alpha(surface)
    partial = bool(((a > 0) & (a < 255)).any())
    return Stamp(surface, stamp.dx, stamp.dy, partial=partial)


class TileCache:
    """Per-map tile images and their drawn stamps, by (gid, flags, alpha, tint)."""

    def __init__(self, tmx: Any) -> None:
        self.images = TileImages(tmx)
        self._stamps: dict[tuple[int, int, bool, int, Tint], Stamp | None] = {}

    def stamp(
        self, gid: int, flags: int, hexagonal: bool, alpha: int, tint: Tint = None
    ) -> Stamp | None:
        key = (gid, flags, hexagonal, alpha, tint)
        if key not in self._stamps:
            image = self.images.get(gid)
            self._stamps[key] = (
                None
                if image is None
                else _finish(transform_tile(image, flags, hexagonal), alpha, tint)
            )
        return self._stamps[key]


_caches: weakref.WeakKeyDictionary[Any, TileCache] = weakref.WeakKeyDictionary()


def tile_cache(tmx: Any) -> TileCache:
    """The cache kept for this pytmx map (a fresh one if the map cannot be weakly referenced)."""
    if tmx is None:
        return TileCache(None)
    try:
        cache = _caches.get(tmx)
        if cache is None:
            cache = _caches[tmx] = TileCache(tmx)
        return cache
    except TypeError:
        return TileCache(tmx)


# --------------------------------------------------------------------------- fallback


def _outline_colour(rgb: tuple[int, int, int]) -> tuple[int, int, int]:
    lum = 0.299 * rgb[0] + 0.587 * rgb[1] + 0.114 * rgb[2]
    if lum < 72:
        return (min(255, rgb[0] + 72), min(255, rgb[1] + 72), min(255, rgb[2] + 72))
    return (int(rgb[0] * 0.55), int(rgb[1] * 0.55), int(rgb[2] * 0.55))


_fallbacks: dict[tuple[Grid, int], list[Stamp]] = {}


def fallback_stamps(grid: Grid, alpha: int = 255) -> list[Stamp]:
    """One cell polygon per mode of :data:`~engine.mapmodel.MODES`, relative to the anchor."""
    key = (grid, alpha)
    if key in _fallbacks:
        return _fallbacks[key]
    ox, oy = grid.cell_origin((0, 0))
    rel = [(x - ox, y - oy) for x, y in grid.cell_corners((0, 0))]
    x0 = math.floor(min(x for x, _ in rel))
    y0 = math.floor(min(y for _, y in rel))
    x1 = math.ceil(max(x for x, _ in rel))
    y1 = math.ceil(max(y for _, y in rel))
    # Corners lie on pixel edges: the cell's last pixel column and row are x1 - 1 and y1 - 1.
    pts = [(x - x0 - (1 if x >= x1 else 0), y - y0 - (1 if y >= y1 else 0)) for x, y in rel]
    stamps = []
    for mode in MODES:
        rgb = TERRAIN_COLOURS[mode]
        surface = pygame.Surface((max(1, x1 - x0), max(1, y1 - y0)), pygame.SRCALPHA, 32)
        pygame.draw.polygon(surface, (*rgb, 255), pts)
        pygame.draw.polygon(surface, (*_outline_colour(rgb), 255), pts, width=1)
        stamps.append(_finish(Stamp(surface, x0, y0 - _anchor_height(grid)), alpha))
    if len(_fallbacks) > 32:
        _fallbacks.clear()
    _fallbacks[key] = stamps
    return stamps


# --------------------------------------------------------------------------- layers


def _anchor_height(grid: Grid) -> int:
    """Tiled draws a tile's bottom edge this far below the cell origin."""
    if grid.orientation in ("hexagonal", "staggered"):
        return grid.tile_height & ~1
    return grid.tile_height


def _iso_walk(
    grid: Grid, margins: tuple[int, int, int, int]
) -> dict[tuple[int, int], tuple[int, int]]:
    """Tiled's isometric ``drawTileLayer`` loop over the whole map: cell -> tile anchor.

    With an odd tile width or height Tiled's loop lands tiles on half pixels, starting from
    a corner it rounds with integer division, and Qt rounds those halves up when drawing;
    :meth:`Grid.cell_origin` rounds down instead. Replaying the loop (libtiled
    ``IsometricRenderer::drawTileLayer``; C++ integer division and truncation kept) gives
    Tiled's pixels. ``margins`` is the layer's ``drawMargins`` (left, top, right, bottom).
    """
    tw, th = grid.tile_width, grid.tile_height
    w, h = grid.width, grid.height
    origin_x = h * tw // 2
    side = w + h
    left, top, right, bottom = margins
    top -= th
    right -= tw
    x1, y1 = -right, -bottom
    rect_right = side * tw // 2 - 1 + left
    rect_bottom = side * th // 2 - 1 + top
    # screenToTileCoords(x1, y1), then tileToScreenCoords of its floor.
    tx, ty = (x1 - origin_x) / tw, y1 / th
    row_x, row_y = math.floor(ty + tx), math.floor(ty - tx)
    start_x = (row_x - row_y) * tw / 2 + origin_x - tw // 2
    start_y = (row_x + row_y) * th / 2 + th
    upper = start_y - y1 > th // 2
    left_half = x1 - start_x < tw // 2
    if upper:
        if left_half:
            row_x -= 1
            start_x -= tw // 2
        else:
            row_y -= 1
            start_x += tw // 2
        start_y -= th // 2
    shifted = upper ^ left_half
    out: dict[tuple[int, int], tuple[int, int]] = {}
    y2 = int(start_y * 2)
    while y2 - th * 2 < rect_bottom * 2:
        cx, cy = row_x, row_y
        x = int(start_x)  # C++ truncation toward zero
        while x < rect_right:
            if 0 <= cx < w and 0 <= cy < h:
                out[(cx, cy)] = (x, (y2 + 1) // 2)  # Qt rounds y2 / 2 half up
            cx, cy = cx + 1, cy - 1
            x += tw
        if not shifted:
            row_x += 1
            start_x += tw // 2
        else:
            row_y += 1
            start_x -= tw // 2
        shifted = not shifted
        y2 += th
    return out


def _draw_margins(tilesets: list[Any]) -> tuple[int, int, int, int]:
    """libtiled's ``computeDrawMargins`` over a layer's tilesets: (left, top, right, bottom)."""
    biggest = 0
    left = top = right = bottom = 0
    for ts in tilesets:
        try:
            ox, oy = int(float(ts.offset[0])), int(float(ts.offset[1]))
        except (TypeError, ValueError, IndexError, AttributeError):
            ox = oy = 0
        biggest = max(biggest, int(ts.tilewidth or 0), int(ts.tileheight or 0))
        left, top, right, bottom = max(left, -ox), max(top, -oy), max(right, ox), max(bottom, oy)
    return (left, top + biggest, right + biggest, bottom)


def tile_anchors(
    grid: Grid, cols: np.ndarray, rows: np.ndarray, tilesets: list[Any] | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """Where Tiled puts each cell's tile: the bottom-left corner of its image, in pixels.

    ``tilesets`` (the layer's, for isometric maps with odd tile sizes only) is needed to
    replay Tiled's loop exactly; see :func:`_iso_walk`.
    """
    if grid.orientation == "isometric" and (grid.tile_width % 2 or grid.tile_height % 2):
        walk = _iso_walk(grid, _draw_margins(tilesets or []))
        xs, ys = cell_origins(grid, cols, rows)
        ys = ys + grid.tile_height
        for i, (c, r) in enumerate(zip(cols.tolist(), rows.tolist(), strict=True)):
            if (c, r) in walk:
                xs[i], ys[i] = walk[(c, r)]
        return xs, ys
    xs, ys = cell_origins(grid, cols, rows)
    return xs, ys + _anchor_height(grid)


def cell_origins(grid: Grid, cols: np.ndarray, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """:meth:`Grid.cell_origin` for many cells at once.

    Every Tiled layout repeats with period 2 along each axis and moves by a fixed step per
    two cells, so four sample cells and two steps give all origins exactly.
    """
    base = np.array(
        [[grid.cell_origin((c, r)) for c in (0, 1)] for r in (0, 1)], dtype=np.int64
    )  # [r & 1, c & 1] -> (x, y)
    o00 = np.array(grid.cell_origin((0, 0)), dtype=np.int64)
    step_c = np.array(grid.cell_origin((2, 0)), dtype=np.int64) - o00
    step_r = np.array(grid.cell_origin((0, 2)), dtype=np.int64) - o00
    cols = cols.astype(np.int64)
    rows = rows.astype(np.int64)
    b = base[rows & 1, cols & 1]
    xs = b[:, 0] + (cols >> 1) * step_c[0] + (rows >> 1) * step_r[0]
    ys = b[:, 1] + (cols >> 1) * step_c[1] + (rows >> 1) * step_r[1]
    return xs, ys


def _draw_order(
    grid: Grid, renderorder: str, rows: np.ndarray, cols: np.ndarray, xs: np.ndarray, ys: np.ndarray
) -> np.ndarray:
    if grid.orientation == "orthogonal":
        order = renderorder if renderorder in _ORDERS else "right-down"
        r = rows if order.endswith("down") else -rows.astype(np.int64)
        c = cols if order.startswith("right") else -cols.astype(np.int64)
        return np.lexsort((c, r))
    return np.lexsort((xs, ys))


def render_map(
    model: MapModel, tmx: Any, *, terrain_fallback: bool = True, background: bool = True
) -> pygame.Surface:
    """Draw every visible tile layer of the map onto a new surface of the map's pixel size.

    ``tmx`` is pytmx's map from :func:`load_for_render` (or ``read_tiled``); with ``None``
    every cell is drawn in its terrain colour. ``terrain_fallback=False`` leaves cells
    without a tile image empty instead. ``background=False`` ignores the map's background
    colour (the canvas starts transparent).

    The result has straight (not premultiplied) alpha; tile images and their transformed,
    premultiplied copies are cached per pytmx map, so drawing the same map again is cheaper.
    """
    grid = model.grid
    out = pygame.Surface(grid.pixel_size(), pygame.SRCALPHA, 32)  # zeroed: transparent
    colour = parse_colour(getattr(tmx, "background_color", None)) if background else None
    partial = False
    if colour is not None:
        r, g, b, a = colour
        out.fill(((r * a + 127) // 255, (g * a + 127) // 255, (b * a + 127) // 255, a))
        partial = 0 < a < 255
    cache = tile_cache(tmx)
    hexagonal = grid.orientation == "hexagonal"
    renderorder = str(getattr(tmx, "renderorder", "right-down") or "right-down")
    moves: np.ndarray | None = model.move_codes() if terrain_fallback else None

    layers: list[Any] = list(model.layers)
    if not layers and terrain_fallback and (tmx is None or not getattr(tmx, "tilesets", None)):
        # A model built in code: every cell in its terrain colour.
        layers = [_AllCells(np.ones((grid.height, grid.width), dtype=np.uint32))]
    for layer in layers:
        if layer.visible:
            partial |= _draw_layer(out, layer, grid, cache, hexagonal, renderorder, moves)
    if partial:
        _unpremultiply(out)
    return out


def _draw_layer(
    out: pygame.Surface,
    layer: Any,
    grid: Grid,
    cache: TileCache,
    hexagonal: bool,
    renderorder: str,
    moves: np.ndarray | None,
) -> bool:
    """Draw one layer (premultiplied); True if it drew any half-transparent pixel."""
    alpha = int(round(min(1.0, max(0.0, float(layer.opacity))) * 255))
    # Tiled 1.8+ layer tint (group tints multiplied in), when the model carries one.
    tint = _layer_tint(getattr(layer, "tint", None))
    rows, cols = np.nonzero(layer.gids)
    if alpha == 0 or rows.size == 0:
        return False
    keys = (layer.gids[rows, cols].astype(np.int64) << 4) | layer.flags[rows, cols]
    ukeys, inv = np.unique(keys, return_inverse=True)
    inv = inv.reshape(-1)
    stamps: list[Stamp | None] = [
        None
        if isinstance(layer, _AllCells)
        else cache.stamp(int(k) >> 4, int(k) & 15, hexagonal, alpha, tint)
        for k in ukeys.tolist()
    ]
    missing = np.array([st is None for st in stamps], dtype=bool)[inv]
    if missing.any():
        if moves is not None:
            stamps.extend(fallback_stamps(grid, alpha))
            inv[missing] = len(ukeys) + moves[rows[missing], cols[missing]]
        else:
            rows, cols, inv = rows[~missing], cols[~missing], inv[~missing]
            if inv.size == 0:
                return False
    xs, ys = tile_anchors(grid, cols, rows, cache.images.tilesets_of(ukeys >> 4))
    order = _draw_order(grid, renderorder, rows, cols, xs, ys)
    idx = inv[order]
    ready = [st if st is not None else Stamp(out, 0, 0) for st in stamps]  # None never drawn
    dx = np.array([st.dx for st in ready], dtype=np.int64)
    dy = np.array([st.dy for st in ready], dtype=np.int64)
    opaque = np.array([st.opaque for st in ready], dtype=bool)
    px = xs[order] + math.floor(layer.offset[0] + 0.5) + dx[idx]
    py = ys[order] + math.floor(layer.offset[1] + 0.5) + dy[idx]
    surfaces = [st.surface for st in ready]
    seq = [
        (surfaces[i], (x, y))
        for i, x, y in zip(idx.tolist(), px.tolist(), py.tolist(), strict=True)
    ]
    # Opaque tiles are plain copies, the others premultiplied "over": one fblits per run.
    kinds = opaque[idx]
    cuts = [0, *(np.flatnonzero(kinds[1:] != kinds[:-1]) + 1).tolist(), len(seq)]
    for a, b in zip(cuts[:-1], cuts[1:], strict=False):
        flags = 0 if kinds[a] else pygame.BLEND_PREMULTIPLIED
        out.fblits(seq[a:b], flags)
    partial = np.array([st.partial for st in ready], dtype=bool)
    return bool(partial[np.unique(idx)].any())


def _layer_tint(value: Any) -> Tint:
    if value is None:
        return None
    if isinstance(value, str):
        return parse_colour(value)
    try:
        rgba = tuple(int(v) for v in value)
    except (TypeError, ValueError):
        return None
    if len(rgba) == 3:
        rgba = (*rgba, 255)
    return (rgba[0], rgba[1], rgba[2], rgba[3]) if len(rgba) == 4 else None


def _unpremultiply(surface: pygame.Surface) -> None:
    """Premultiplied to straight alpha, in place (only half-transparent pixels change).

    Works on the 32-bit pixels row by row in memory order, in bands, to stay cache-friendly.
    """
    view = pygame.surfarray.pixels2d(surface).T  # (height, width): memory order
    sr, sg, sb, sa = surface.get_shifts()
    for y0 in range(0, view.shape[0], 128):
        band = view[y0 : y0 + 128]
        a = (band >> np.uint32(sa)) & np.uint32(0xFF)
        part = (a - np.uint32(1)) < np.uint32(254)  # 0 < a < 255 (0 wraps around)
        if not part.any():
            continue
        px, pa = band[part], a[part]
        fixed = pa << np.uint32(sa)
        for shift in (sr, sg, sb):
            c = (px >> np.uint32(shift)) & np.uint32(0xFF)
            c = np.minimum(np.uint32(255), (c * np.uint32(255) + pa // np.uint32(2)) // pa)
            fixed |= c << np.uint32(shift)
        band[part] = fixed
    del view  # release the surface lock


@dataclass(frozen=True)
class _AllCells:
    """A stand-in layer covering every cell, for models without tile layers."""

    gids: np.ndarray
    visible: bool = True
    opacity: float = 1.0
    offset: tuple[float, float] = (0.0, 0.0)

    @property
    def flags(self) -> np.ndarray:
        return np.zeros(self.gids.shape, dtype=np.uint8)


def render_to_file(
    path_in: str | os.PathLike[str], path_out: str | os.PathLike[str], *, scale: float = 1.0
) -> tuple[int, int]:
    """Load a map, draw it and save it as a PNG; returns the image size in pixels.

    ``scale`` resizes the result: whole numbers >= 2 with nearest-neighbour (crisp tiles),
    anything else smoothly.
    """
    try:
        scale = float(scale)
    except (TypeError, ValueError):
        raise ArgumentError(f"scale {scale!r} is not a number; use e.g. 0.5 or 2") from None
    if not (math.isfinite(scale) and 0 < scale <= 64):
        raise ArgumentError(f"scale {scale} is out of range; use a number > 0 and <= 64")
    model, tmx = load_for_render(path_in)
    surface = render_map(model, tmx)
    if scale != 1.0:
        w, h = surface.get_size()
        size = (max(1, round(w * scale)), max(1, round(h * scale)))
        if scale.is_integer():
            surface = pygame.transform.scale(surface, size)
        else:
            surface = pygame.transform.smoothscale(surface, size)
    out = os.fspath(path_out)
    try:
        with open(out, "wb") as fh:
            pygame.image.save(surface, fh, "png")
    except (OSError, pygame.error) as exc:
        raise ArgumentError(
            f"{out}: cannot write the image ({getattr(exc, 'strerror', None) or exc}); "
            "check that the folder exists and is writable"
        ) from None
    return surface.get_size()
