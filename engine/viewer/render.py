"""Draw a map's tile layers the way Tiled draws them.

Over 800 lines: Tiled's renderers for every orientation with scaled tiles and banded/chunked
output in one place, so every caller (render, viewer, plots) draws the same pixels.

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

Scaled (``scale``), each tile is drawn as Qt's painter draws it under a scale transform with
smooth pixmaps (tmxrasterizer ``--scale``): it fills the output pixels whose centres it
covers (``qRound`` of its scaled corners) and each is sampled bilinearly from the tile's
premultiplied pixels, edges clamped; the canvas is the map's size times the scale, the
fraction dropped. Only that output is allocated, and ``area`` draws one rectangle of it
(the viewer's chunks, ``render``'s bands) with exactly the pixels of the whole picture.

Cells whose tile has no usable image (an image that cannot be decoded, a tile outside its
tileset image, a tileset without an image as in generated test maps) are drawn as the cell's
polygon in a colour per terrain ``move`` (:data:`TERRAIN_COLOURS`), with a thin outline,
standing in for the tile (same layer offset and opacity).

Object layers are drawn as Tiled draws them (outlines, fills and point pins, in their
place among the tile layers: :mod:`engine.viewer.mapobjects`; ``objects=False`` leaves them
out). A Universal VTT file's map image (the model's ``images``) is drawn under the tile
layers, stretched over the grid (:mod:`engine.viewer.images`). Not drawn: Tiled image
layers (the viewer draws tokens and overlays itself), and
Tiled 1.9+ tile render size, fill mode and image-collection sub-rectangles, which Tiled 1.8's
tmxrasterizer ignores too. On isometric maps with odd tile sizes Tiled's loop puts tiles on
half pixels, from a start it works out from the layer's chunk bounds (:func:`layer_bounds`)
and draw margins; plain tiles there are rounded as Qt does at scale 1 and scaled from the
half pixel otherwise (:func:`tile_positions`), and flipped or turned ones are sampled
bilinearly on the half pixel at every scale, as Qt's transformed drawing does. On hexagonal
maps staggered along x with an odd ``tileWidth - hexSideLength``, Tiled's rows drift a pixel
per two columns from its own tile-to-screen formula; that is replayed too
(:func:`_hex_start_columns`).

No display is needed: surfaces are converted to a 32-bit ARGB format with
``Surface.convert(template)`` instead of ``convert_alpha()``, so rendering to a file never
opens a window, with or without ``SDL_VIDEODRIVER=dummy``.

>>> model, tiled = load_for_render("maps/hex_pointy.tmx")  # doctest: +SKIP
>>> render_map(model, tiled).get_size() == model.grid.pixel_size()  # doctest: +SKIP
True
"""

from __future__ import annotations

import bisect
import gc
import math
import os
import weakref
from collections import OrderedDict
from collections.abc import Callable, Collection, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace
from fractions import Fraction
from typing import Any

import numpy as np
import pygame

from engine.errors import ArgumentError
from engine.grid import Grid
from engine.mapmodel import MODES, WALL_KINDS, MapModel
from engine.sources import clip, picture_check
from engine.tiled import TiledFile, read_tiled
from engine.tiled.uvtt import is_uvtt
from engine.viewer import images
from engine.viewer.draw import draw_walls
from engine.viewer.mapobjects import draw_object_layer, object_layers, parse_colour

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


def _png_transparent_index(data: bytes) -> int | None:
    """The palette index a paletted PNG's ``tRNS`` chunk makes fully transparent."""
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


def _palette_to_argb(data: bytes, image: pygame.Surface) -> pygame.Surface:
    """A paletted image with a colour key, made transparent by palette index.

    SDL converts such a colour key by colour value, so every other palette entry of the
    same colour (often black) would turn transparent too; Qt, and so Tiled, go by index.
    """
    key = image.get_colorkey()
    index = _png_transparent_index(data)
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
    got = images.load_picture(path)  # read and decoded within the picture limits
    if got is None:
        image = None
    else:
        raw, data = got
        if raw.get_bitsize() == 8 and raw.get_colorkey() is not None:
            image = _palette_to_argb(data, raw)
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


def load_for_render(path: str | os.PathLike[str]) -> tuple[MapModel, TiledFile]:
    """Read a map for drawing: the model, and the file as read (pytmx's map with pygame
    surfaces, the document's tree) to hand :func:`render_map`.

    Tile images that are missing or cannot be decoded do not stop the load:
    :func:`render_map` draws those cells in their terrain colour (the model's notes say so).
    """
    tf = read_tiled(path, image_loader=image_loader, missing_images="skip")
    return tf.model, tf


def picture_notes(model: MapModel, tiled: TiledFile | None) -> list[str]:
    """What the drawing of ``model`` (with ``tiled`` from :func:`render_source`) leaves
    out, one note each, in the wording of the map reader's own notes: the reader's notes,
    then each tile picture, tile image or map picture that the header check refused or
    that could not be decoded (drawn in terrain colours). Pictures already decoded are
    answered from the cache; a refused one is checked again to say why."""
    notes = dict.fromkeys(model.notes)
    if tiled is not None:  # the map read again for drawing, with its pictures
        notes.update(dict.fromkeys(tiled.model.notes))
    where = os.path.dirname(os.path.abspath(model.path or "."))
    if tiled is not None and tiled.tmx is not None:
        for path, trans in TileImages(tiled.tmx).pictures().items():
            if load_image(path, trans) is None:
                why = picture_check(path)[0] or "cannot be decoded"
                notes[f"image '{clip(os.path.relpath(path, where))}' {why}: drawn without it"] = (
                    None
                )
    for layer in model.images:
        if layer.visible and images.decoded(layer)[0] is None:
            notes[f"picture '{clip(layer.name)}' cannot be decoded: drawn without it"] = None
    return list(notes)


def render_source(model: MapModel, tiled: TiledFile | None = None) -> TiledFile | None:
    """The Tiled file to draw an already loaded ``model`` with: ``tiled`` when ``model``
    was read with pytmx's map in it (a scenario loaded for drawing keeps its file as read,
    so it is not read again); else its file read again; ``None`` for a model built in
    code or a Universal VTT file's (every cell in its terrain colour, or its picture).
    """
    if tiled is not None and tiled.model is model and tiled.tmx is not None:
        return tiled
    if model.path and not is_uvtt(model.path):  # UVTT: no pytmx map
        return load_for_render(model.path)[1]
    return None


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

    def pictures(self) -> dict[str, str | None]:
        """Every picture file the tiles are cut from (path -> transparent colour)."""
        out: dict[str, str | None] = {}
        for ts in self._tilesets:
            if getattr(ts, "source", None):
                out.setdefault(os.path.join(self._base, ts.source), getattr(ts, "trans", None))
        for src, trans in self._sources.values():
            out.setdefault(os.path.join(self._base, src), trans)
        return out

    def tilesets_of(self, gids: np.ndarray) -> list[Any]:
        """The pytmx tilesets that these gids belong to."""
        found = {
            bisect.bisect_right(self._firsts, int(g)) - 1 for g in _unique_values(gids).tolist()
        }
        return [self._tilesets[i] for i in sorted(found) if i >= 0]

    def layer_tilesets(self, gids: np.ndarray) -> list[Any]:
        """The tilesets a whole layer's ``gids`` (flags stripped) use, as Tiled's
        ``usedTilesets``: the same for every band or chunk of the layer drawn. One pass over
        the layer per tileset, none where the map has a single tileset."""
        if not self._tilesets:
            return []
        if len(self._tilesets) == 1:
            return self._tilesets if int(gids.max(initial=0)) >= self._firsts[0] else []
        ends = [*self._firsts[1:], None]
        return [
            ts
            for ts, lo, hi in zip(self._tilesets, self._firsts, ends, strict=True)
            if ((gids >= lo) if hi is None else ((gids >= lo) & (gids < hi))).any()
        ]

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
        # Scaled copies, per scale (the few most recent scales only).
        self._scaled: dict[
            float, dict[tuple[int, int, int, tuple[int, int]], tuple[Stamp, Stamp]]
        ] = {}
        # How far a tile image can reach from its cell: twice the largest tile (a turned
        # hex tile grows), plus the largest tile offset.
        big, off = 0, 0
        for ts in getattr(tmx, "tilesets", None) or []:
            try:
                big = max(big, int(ts.tilewidth or 0), int(ts.tileheight or 0))
                off = max(off, abs(int(float(ts.offset[0]))), abs(int(float(ts.offset[1]))))
            except (TypeError, ValueError, IndexError, AttributeError):
                continue
        self.margin = 2 * big + off

    def scaled(
        self, stamp: Stamp, scale: float, qx: int, qy: int, grow: tuple[int, int] = (0, 0)
    ) -> Stamp:
        """``stamp`` drawn at ``scale`` with sub-pixel phase ``(qx, qy)``, ``grow`` pixels
        wider and taller than that phase makes it (see :func:`_bilinear`)."""
        table = self._scaled.get(scale)
        if table is None:
            if len(self._scaled) >= 4:
                self._scaled.pop(next(iter(self._scaled)))
            table = self._scaled[scale] = {}
        key = (id(stamp.surface), qx, qy, grow)  # the entry keeps ``stamp`` alive: ids stay unique
        entry = table.get(key)
        if entry is None:
            if scale.is_integer() and not (qx or qy):
                w, h = stamp.surface.get_size()
                k = int(scale)
                surface = pygame.transform.scale(stamp.surface, (w * k, h * k))
                got = Stamp(surface, 0, 0, stamp.opaque, stamp.partial)
            else:
                got = _bilinear(stamp, scale, qx, qy, grow)
            entry = table[key] = (stamp, got)
        return entry[1]

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


def _iso_walk_start(
    grid: Grid, margins: tuple[int, int, int, int], bounds: tuple[int, int, int, int]
) -> tuple[int, int, int, int, bool, int, int]:
    """Where Tiled's isometric ``drawTileLayer`` loop starts: its first row's cell (x, y),
    twice its screen x and y (whole numbers: the loop moves by halves), whether its first
    step is shifted, and the right and bottom edges it stops at. ``margins`` is the layer's
    ``drawMargins`` (left, top, right, bottom); ``bounds`` the layer's ``bounds()`` in
    cells (x, y, width, height: :func:`layer_bounds`). The loop covers libtiled's
    ``boundingRect(bounds)`` grown by the margins, as a ``QRectF`` made from a ``QRect``
    (its right and bottom one past the last pixel)."""
    tw, th = grid.tile_width, grid.tile_height
    origin_x = _cdiv(grid.height * tw, 2)
    bx, by, bw, bh = bounds
    left, top, right, bottom = margins
    top -= th
    right -= tw
    side = bw + bh
    x1 = _cdiv((bx - (by + bh)) * tw, 2) + origin_x - right
    y1 = _cdiv((bx + by) * th, 2) - bottom
    rect_right = x1 + right + _cdiv(side * tw, 2) + left
    rect_bottom = y1 + bottom + _cdiv(side * th, 2) + top
    # screenToTileCoords(x1, y1), then tileToScreenCoords of its floor.
    tx, ty = (x1 - origin_x) / tw, y1 / th
    row_x, row_y = math.floor(ty + tx), math.floor(ty - tx)
    start_x2 = (row_x - row_y) * tw + 2 * origin_x - 2 * (tw // 2)
    start_y2 = (row_x + row_y) * th + 2 * th
    upper = start_y2 - 2 * y1 > 2 * (th // 2)
    left_half = start_x2 > 2 * (x1 - tw // 2)  # x1 - start_x < tw // 2
    if upper:
        if left_half:
            row_x -= 1
            start_x2 -= 2 * (tw // 2)
        else:
            row_y -= 1
            start_x2 += 2 * (tw // 2)
        start_y2 -= 2 * (th // 2)
    return row_x, row_y, start_x2, start_y2, upper ^ left_half, rect_right, rect_bottom


def _cdiv(a: int, b: int) -> int:
    """C++ integer division (truncates toward zero), as libtiled's ``int`` arithmetic."""
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b > 0) else -q


#: libtiled keeps a tile layer in chunks of this many cells a side (``CHUNK_SIZE``).
CHUNK = 16


def layer_bounds(gids: np.ndarray) -> tuple[int, int, int, int]:
    """libtiled's ``TileLayer::bounds()`` of a layer with these ``gids`` (rows, columns):
    the cells are stored in 16 x 16 chunks, a chunk made only when a non-empty cell is
    set, and the bounds are the chunks' bounding rectangle (x, y, width, height, in
    cells), not the map's size: Tiled's isometric loop starts from it. A layer without
    tiles has the map's (it draws nothing)."""
    rows = np.flatnonzero(gids.any(axis=1))
    if rows.size == 0:
        return 0, 0, gids.shape[1], gids.shape[0]
    cols = np.flatnonzero(gids[int(rows[0]) : int(rows[-1]) + 1].any(axis=0))
    x0, x1 = int(cols[0]) // CHUNK, int(cols[-1]) // CHUNK
    y0, y1 = int(rows[0]) // CHUNK, int(rows[-1]) // CHUNK
    return x0 * CHUNK, y0 * CHUNK, (x1 - x0 + 1) * CHUNK, (y1 - y0 + 1) * CHUNK


def _full_bounds(grid: Grid) -> tuple[int, int, int, int]:
    """:func:`layer_bounds` of a layer with a tile in every cell."""
    w = -(-grid.width // CHUNK) * CHUNK
    h = -(-grid.height // CHUNK) * CHUNK
    return 0, 0, w, h


def _iso_walk(
    grid: Grid, margins: tuple[int, int, int, int], bounds: tuple[int, int, int, int]
) -> dict[tuple[int, int], tuple[int, int]]:
    """Tiled's isometric ``drawTileLayer`` loop over the whole map: cell -> tile anchor
    (x, twice y: the loop puts tiles on half pixels down).

    With an odd tile width or height Tiled's loop lands tiles on half pixels, starting from
    a corner it rounds with integer division; :meth:`Grid.cell_origin` rounds down instead.
    Replaying the loop (libtiled ``IsometricRenderer::drawTileLayer``; C++ integer division
    and truncation kept) gives Tiled's places; Qt rounds the halves up at scale 1 and
    scales them exactly otherwise (:func:`tile_positions`). This is the plain twin of
    :func:`_iso_anchors`, which works the same anchors out for just the cells asked (tests
    hold the two equal).
    """
    tw, th = grid.tile_width, grid.tile_height
    w, h = grid.width, grid.height
    row_x, row_y, start_x2, y2, shifted, rect_right, rect_bottom = _iso_walk_start(
        grid, margins, bounds
    )
    start_x = start_x2 / 2
    out: dict[tuple[int, int], tuple[int, int]] = {}
    while y2 - th * 2 < rect_bottom * 2:
        cx, cy = row_x, row_y
        x = int(start_x)  # C++ truncation toward zero
        while x < rect_right:
            if 0 <= cx < w and 0 <= cy < h:
                out[(cx, cy)] = (x, y2)
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


def _iso_anchors(
    grid: Grid,
    margins: tuple[int, int, int, int],
    bounds: tuple[int, int, int, int],
    cols: np.ndarray,
    rows: np.ndarray,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """:func:`_iso_walk` for the cells ``cols``, ``rows`` only: (x, twice y, visited).

    The loop's k-th row holds the cells with x + y = k + (its first row's x + y), starting
    at the cell whose x the row's alternating steps give, and walks right along it by whole
    tiles; so each cell's row, place in the row and screen position follow in closed form.
    ``visited`` is False for the cells the loop never reaches (their x and y are then
    meaningless)."""
    tw, th = grid.tile_width, grid.tile_height
    row_x, row_y, start_x2, y2, shifted, rect_right, rect_bottom = _iso_walk_start(
        grid, margins, bounds
    )
    c = cols.astype(np.int64)
    k = c + rows.astype(np.int64) - (row_x + row_y)
    # Unshifted steps move the row's start right along x, shifted ones along y; they alternate.
    steps_x = k // 2 if shifted else (k + 1) // 2
    place = c - (row_x + steps_x)
    sx2 = start_x2 + 2 * (tw // 2) * (2 * steps_x - k)
    x = np.where(sx2 >= 0, sx2 // 2, -((-sx2) // 2)) + place * tw  # C++ truncation
    row_y2 = y2 + k * th
    visited = (k >= 0) & (place >= 0) & (x < rect_right) & (row_y2 - 2 * th < 2 * rect_bottom)
    return x, row_y2, visited


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


def _hex_drift(grid: Grid) -> int:
    """Pixels a hexagonal map staggered along x drifts right per two columns as Tiled's
    ``drawTileLayer`` draws it: its rows step by ``tileWidth + sideLengthX`` per two
    columns, while ``tileToScreenCoords`` (and :meth:`Grid.cell_origin`) step by twice
    ``columnWidth``, which drops the half pixel of an odd ``tileWidth - sideLengthX``."""
    if grid.orientation != "hexagonal" or grid.stagger_axis != "x":
        return 0
    diff = (grid.tile_width & ~1) - grid.hex_side
    return diff - 2 * _cdiv(diff, 2)


def _hex_start_columns(
    grid: Grid, margins: tuple[int, int, int, int], bounds: tuple[int, int, int, int]
) -> tuple[int, int]:
    """The columns Tiled's hexagonal ``drawTileLayer`` loop (staggered along x) starts its
    rows from, by turns: libtiled's ``screenToTileCoords`` (the nearest of four hexagon
    centres, in floats) of the corner of ``boundingRect(bounds)`` grown by the draw
    margins, one column left where that corner is in the tile's left part; then one column
    left of it where that column is staggered, else one right. Each row draws every other
    column from its start (see :func:`_hex_drift`)."""
    tw, th = grid.tile_width & ~1, grid.tile_height & ~1
    side = grid.hex_side
    even = grid.stagger_index == "even"
    side_off_x, row_h = _cdiv(tw - side, 2), th // 2
    col_w = side_off_x + side
    bx, by, bw, _ = bounds
    left, top, right, bottom = margins
    staggered = bool((bx & 1) ^ even)
    x1 = bx * col_w - (right - grid.tile_width)
    y1 = by * th + (row_h if staggered else 0) - (row_h if bw > 1 and staggered else 0) - bottom
    x = x1 - (tw if even else side_off_x)
    ref_x, ref_y = math.floor(x / (col_w * 2)), math.floor(y1 / (row_h * 2))
    rel = np.array([x - ref_x * col_w * 2, y1 - ref_y * row_h * 2], dtype=np.float32)
    ref_x = ref_x * 2 + (1 if even else 0)
    cx, cy = side // 2 + col_w, th // 2
    centres = np.array(
        [[side // 2, cy], [cx, cy - row_h], [cx, cy + row_h], [cx + col_w, cy]], dtype=np.float32
    )
    dist = ((centres - rel) ** 2).sum(axis=1, dtype=np.float32)
    column = ref_x + (0, 1, 1, 2)[int(np.argmin(dist))]  # the first of equal ones, as Tiled
    if x1 - column * col_w < side_off_x:
        column -= 1
    return column, column - 1 if (column & 1) ^ even else column + 1


def loop_placed(grid: Grid) -> bool:
    """Whether Tiled's draw loop, not its tile-to-screen formula, decides where tiles land
    (so the layer's tilesets and bounds are needed): isometric maps with an odd tile size,
    and hexagonal maps staggered along x whose rows drift (:func:`_hex_drift`)."""
    odd_iso = grid.orientation == "isometric" and bool(grid.tile_width % 2 or grid.tile_height % 2)
    return odd_iso or _hex_drift(grid) != 0


def tile_positions(
    grid: Grid,
    cols: np.ndarray,
    rows: np.ndarray,
    tilesets: list[Any] | None = None,
    bounds: tuple[int, int, int, int] | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Where Tiled puts each cell's tile: the bottom-left corner of its image as x and
    twice y, exact (an isometric map with odd tile sizes puts tiles on half pixels down).

    ``tilesets`` (the layer's) and ``bounds`` (:func:`layer_bounds` of the layer; a full
    layer's when None), where :func:`loop_placed`, are needed to replay Tiled's loop
    exactly; see :func:`_iso_walk`, :func:`_iso_anchors` and :func:`_hex_start_columns`.
    """
    if grid.orientation == "isometric" and (grid.tile_width % 2 or grid.tile_height % 2):
        box = _full_bounds(grid) if bounds is None else bounds
        wx, wy2, visited = _iso_anchors(grid, _draw_margins(tilesets or []), box, cols, rows)
        xs, ys = cell_origins(grid, cols, rows)
        return np.where(visited, wx, xs), np.where(visited, wy2, 2 * (ys + grid.tile_height))
    xs, ys = cell_origins(grid, cols, rows)
    drift = _hex_drift(grid)
    if drift and grid.tile_height > 1:
        box = _full_bounds(grid) if bounds is None else bounds
        first, second = _hex_start_columns(grid, _draw_margins(tilesets or []), box)
        c = cols.astype(np.int64)
        start = np.where((c - first) % 2 == 0, first, second)
        xs = xs + drift * ((c - start) // 2)
    ys += _anchor_height(grid)  # ys is cell_origins' own: 2 * (ys + anchor), in place
    ys *= 2
    return xs, ys


def tile_anchors(
    grid: Grid,
    cols: np.ndarray,
    rows: np.ndarray,
    tilesets: list[Any] | None = None,
    bounds: tuple[int, int, int, int] | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """:func:`tile_positions` in whole pixels, as Qt's painter draws them at scale 1 (a
    translated image's corner is ``qRound``-ed: half pixels round down the picture)."""
    xs, ys2 = tile_positions(grid, cols, rows, tilesets, bounds)
    return xs, (ys2 + 1) // 2


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
    # In place, a term left out where its step is 0: a big layer's arrays are a megabyte
    # or more each, and every new one is memory first touched (page faults, which cost
    # more than the arithmetic).
    cols = np.asarray(cols, dtype=np.int64)
    rows = np.asarray(rows, dtype=np.int64)
    parity = rows & 1
    parity <<= 1
    parity |= cols & 1
    xs = base[..., 0].reshape(4)[parity]
    ys = base[..., 1].reshape(4)[parity]
    del parity
    for index, step in ((cols, step_c), (rows, step_r)):
        half = index >> 1
        for out, k in ((xs, int(step[0])), (ys, int(step[1]))):
            if k:
                out += half * k
    return xs, ys


def _draw_order(
    grid: Grid, renderorder: str, rows: np.ndarray, cols: np.ndarray, xs: np.ndarray, ys: np.ndarray
) -> np.ndarray | None:
    """The order to draw the cells ``rows``, ``cols`` (as ``np.nonzero`` lists them: by row,
    then column) in; None where that is already it (an orthogonal map drawn right-down)."""
    if grid.orientation == "orthogonal":
        order = renderorder if renderorder in _ORDERS else "right-down"
        if order == "right-down":
            return None
        r = rows if order.endswith("down") else -rows.astype(np.int64)
        c = cols if order.startswith("right") else -cols.astype(np.int64)
        return np.lexsort((c, r))
    return np.lexsort((xs, ys))


#: The largest image :func:`render_map` makes in one piece (``render --out``): pygame
#: surfaces are limited to 2 GiB and a 32-bit pixel takes 4 bytes, so the budget is
#: 32768 pixels a side and 2^28 pixels (1 GiB) in all.
MAX_SIDE = 32768
MAX_PIXELS = 1 << 28
#: Sub-pixel phases of scaled tiles are kept to 1/PHASES of a pixel.
PHASES = 64
#: Cells blitted per ``fblits`` call (bounds the list of blits held at once).
_BLIT_BATCH = 65536


def check_scale(scale: Any, label: str = "scale") -> float:
    """``scale`` as a float, or one line saying why it cannot be used."""
    try:
        value = float(scale)
    except (TypeError, ValueError):
        raise ArgumentError(f"{label} {scale!r} is not a number; use e.g. 0.5 or 2") from None
    if not (math.isfinite(value) and 0 < value <= 64):
        raise ArgumentError(f"{label} {value:g} is out of range; use a number > 0 and <= 64")
    return value


def output_size(grid: Grid, scale: float = 1.0) -> tuple[int, int]:
    """The size in pixels of the map drawn at ``scale``: the map's pixel size times the
    scale, the fraction dropped, as tmxrasterizer sizes its image."""
    w, h = grid.pixel_size()
    return max(1, math.floor(w * scale + 1e-9)), max(1, math.floor(h * scale + 1e-9))


def _fits(size: tuple[int, int]) -> bool:
    return max(size) <= MAX_SIDE and size[0] * size[1] <= MAX_PIXELS


def largest_scale(grid: Grid) -> float:
    """The largest scale (four significant digits, rounded down) whose image fits the budget."""
    w, h = grid.pixel_size()
    s = min(64.0, MAX_SIDE / max(w, 1), MAX_SIDE / max(h, 1), math.sqrt(MAX_PIXELS / max(w * h, 1)))
    step = 10.0 ** (math.floor(math.log10(s)) - 3)
    s = math.floor(s / step) * step
    while s > step and not _fits(output_size(grid, s)):
        s -= step
    return float(f"{s:.4g}")


def check_output(grid: Grid, scale: float, label: str = "--scale") -> tuple[int, int]:
    """The output size at ``scale``, or one line naming ``label`` and the largest that works."""
    size = output_size(grid, scale)
    if not _fits(size):
        raise ArgumentError(
            f"{label} {scale:g}: the image would be {size[0]}x{size[1]} pixels, over the "
            f"limit of {MAX_SIDE} pixels a side and 2^28 ({MAX_PIXELS}) pixels in all; "
            f"use {label} {largest_scale(grid):g} or less"
        )
    return size


def render_map(  # noqa: C901
    model: MapModel,
    tiled: TiledFile | None,
    *,
    terrain_fallback: bool = True,
    background: bool = True,
    scale: float = 1.0,
    area: pygame.Rect | tuple[int, int, int, int] | None = None,
    phases: int = PHASES,
    objects: bool = True,
    walls: bool = True,
    spawns: bool = True,
    hide: Collection[str] = (),
    show: Collection[str] = (),
) -> pygame.Surface:
    """Draw every visible tile layer of the map onto a new surface.

    ``tiled`` is the map file as read for drawing, from :func:`load_for_render` (or
    ``read_tiled``): pytmx's map and the document's tree; with ``None`` every cell is drawn
    in its terrain colour. ``terrain_fallback=False`` leaves cells without a tile image
    empty instead. ``background=False`` ignores the map's background colour (the canvas
    starts transparent).

    ``scale`` draws at that size directly (each tile scaled once, as Qt's painter does under
    a scale transform: bilinear, the tile filling the pixels whose centres it covers; whole
    numbers >= 2 repeat pixels instead), so memory follows the output, not the map.
    ``area`` (x, y, width, height, in output pixels) draws only that part of the scaled
    map; the result is that rectangle of the whole picture, pixel for pixel. Without it the
    surface is the whole map (:func:`output_size`). ``phases``: a scaled tile's sub-pixel
    position is kept to 1/phases of a pixel (fewer phases, fewer scaled copies to make: the
    viewer uses 4). ``objects`` draws the visible object layers in their place among the
    tile layers, as Tiled does (:mod:`engine.viewer.mapobjects`); ``False`` leaves them out.
    ``walls`` draws the walls and doors that are no Tiled object (a UVTT file's) on top, as
    the viewer does (a Tiled map's wall objects are drawn with the objects, as in Tiled).
    ``spawns=False`` leaves the spawn objects out of the objects (the viewer marks spawns
    its own way, unlike its tokens). ``hide``: names of tile and object layers left out;
    ``show``: names of tile layers drawn even where the file hides them (the viewer's
    collision layers, :mod:`engine.viewer.collayer`; ``render`` passes neither).

    The result has straight (not premultiplied) alpha; tile images and their transformed,
    premultiplied (and scaled) copies are cached per pytmx map, so drawing the same map
    again is cheaper.
    """
    tmx = None if tiled is None else tiled.tmx
    grid = model.grid
    rect = pygame.Rect(area) if area is not None else pygame.Rect(0, 0, *output_size(grid, scale))
    out = pygame.Surface(rect.size, pygame.SRCALPHA, 32)  # zeroed: transparent
    colour = parse_colour(getattr(tmx, "background_color", None)) if background else None
    partial = False
    if colour is not None:
        r, g, b, a = colour
        out.fill(((r * a + 127) // 255, (g * a + 127) // 255, (b * a + 127) // 255, a))
        partial = 0 < a < 255
    cache = tile_cache(tmx)
    view = _View(grid, float(scale), rect, cache, model if terrain_fallback else None)
    view.phases = _phases_for(float(scale), phases)
    renderorder = str(getattr(tmx, "renderorder", "right-down") or "right-down")

    layers: list[Any] = list(model.layers)
    if (
        not layers
        and terrain_fallback
        and (tmx is None or not getattr(tmx, "tilesets", None))
        and not images.drawable(model)
    ):
        # A model built in code (or a UVTT map without a usable picture): every cell in
        # its terrain colour.
        layers = [_AllCells(np.ones((grid.height, grid.width), dtype=np.uint8))]
    root = None if tiled is None else tiled.root
    groups = object_layers(model, tmx, root) if objects else []
    if not spawns:
        groups = [
            replace(g, objects=tuple(o for o in g.objects if o.cls.lower() != "spawn"))
            for g in groups
        ]
    if hide:
        groups = [g for g in groups if g.name not in hide]

    def drawn(layer: Any) -> bool:
        name = getattr(layer, "name", "")
        return bool(layer.visible or name in show) and name not in hide

    hidden = _hidden_cells(layers, view, drawn)
    for n, layer in enumerate(layers):
        for picture in model.images:  # pictures (a UVTT map image) in their place
            if picture.after == n:
                partial |= images.draw_image_layer(out, picture, float(scale), rect)
                view.blank = False
        for group in groups:
            if group.after == n:
                partial |= draw_object_layer(out, grid, group, float(scale), rect)
                view.blank = False
        if drawn(layer):
            partial |= _draw_layer(out, layer, view, renderorder, hidden.get(n))
    for picture in model.images:
        if picture.after >= len(layers):
            partial |= images.draw_image_layer(out, picture, float(scale), rect)
    for group in groups:
        if group.after < 0 or group.after >= len(layers):
            partial |= draw_object_layer(out, grid, group, float(scale), rect)
    if partial:
        _unpremultiply(out)
    if walls:
        _draw_file_walls(out, model, float(scale), rect)
    return out


def _draw_file_walls(out: pygame.Surface, model: MapModel, scale: float, rect: pygame.Rect) -> None:
    """Walls that are not Tiled objects (a Universal VTT file's), over the map."""
    drawn = {o.id for o in model.objects if o.cls.lower() in WALL_KINDS}
    walls = [w for w in model.walls if w.id not in drawn]
    if not walls:
        return
    ox, oy = rect.left / scale, rect.top / scale
    bounds = (ox, oy, ox + rect.width / scale, oy + rect.height / scale)
    width = max(1, round(4 * scale))
    draw_walls(out, walls, lambda x, y: ((x - ox) * scale, (y - oy) * scale), width, bounds)


def _phases_for(scale: float, phases: int) -> int:
    """Sub-pixel phases for ``scale``: a scale that is a fraction with a small denominator
    (1/8, 0.3 = 3/10) puts tiles on a few phases only, kept exactly (to 1/64); any other
    puts them on every fraction of a pixel, so they are kept to a quarter pixel (fewer
    scaled copies to make). Decided by the scale alone, so that every area of a picture
    agrees."""
    wanted = max(1, min(PHASES, int(phases)))
    frac = Fraction(scale).limit_denominator(64)
    if frac.denominator <= 16 and abs(float(frac) - scale) < 1e-12:
        return wanted
    return min(wanted, 4)


class _View:
    """What one :func:`render_map` call draws: scale, output rectangle, the cells it needs."""

    def __init__(
        self, grid: Grid, scale: float, rect: pygame.Rect, cache: TileCache, model: Any
    ) -> None:
        self.grid, self.scale, self.rect, self.cache = grid, scale, rect, cache
        self.hexagonal = grid.orientation == "hexagonal"
        self.model = model  # None: no terrain fallback
        self.whole = scale == 1.0 and rect == pygame.Rect(0, 0, *grid.pixel_size())
        self.phases = PHASES
        #: Nothing drawn on the canvas yet: it is all one colour (background or clear).
        self.blank = True

    def window(self, layer: Any) -> tuple[int, int, int, int]:
        """Rows and columns (r0, r1, c0, c1) of the cells whose tiles can touch the area."""
        grid = self.grid
        if self.whole:
            return 0, grid.height, 0, grid.width
        m = self.cache.margin + abs(layer.offset[0]) + abs(layer.offset[1]) + 2
        s, r = self.scale, self.rect
        x0, y0 = r.left / s - m, r.top / s - m
        x1, y1 = r.right / s + m, r.bottom / s + m
        cells = [grid.cell_at(x, y) for x in (x0, x1) for y in (y0, y1)]
        c0 = max(0, min(c for c, _ in cells) - 2)
        c1 = min(grid.width, max(c for c, _ in cells) + 3)
        r0 = max(0, min(rr for _, rr in cells) - 2)
        r1 = min(grid.height, max(rr for _, rr in cells) + 3)
        return r0, max(r0, r1), c0, max(c0, c1)

    def strip(self, layer: Any) -> tuple[int, int, int, int] | None:
        """On an isometric map, the cells of :meth:`window` whose tiles can touch the area
        as bounds on x + y and x - y (s0, s1, d0, d1; inclusive): a band across the map is a
        diagonal strip of cells, whose row-and-column window is nearly the whole map.
        None on other maps, or where the whole map is drawn."""
        grid = self.grid
        if self.whole or grid.orientation != "isometric":
            return None
        m = self.cache.margin + abs(layer.offset[0]) + abs(layer.offset[1]) + 2
        s, r = self.scale, self.rect
        x0, y0 = r.left / s - m, r.top / s - m
        x1, y1 = r.right / s + m, r.bottom / s + m
        cells = [grid.cell_at(x, y) for x in (x0, x1) for y in (y0, y1)]
        sums = [c + rr for c, rr in cells]
        diffs = [c - rr for c, rr in cells]
        # As the window's two cells of slack on each axis: four on each diagonal.
        return min(sums) - 4, max(sums) + 4, min(diffs) - 4, max(diffs) + 4


def _strip_cells(
    window: tuple[int, int, int, int], strip: tuple[int, int, int, int]
) -> tuple[np.ndarray, np.ndarray]:
    """The cells of ``window`` (r0, r1, c0, c1) within ``strip`` (:meth:`_View.strip`), by
    row then column as ``np.nonzero`` lists them."""
    r0, r1, c0, c1 = window
    s0, s1, d0, d1 = strip
    rows = np.arange(r0, r1, dtype=np.int64)
    lo = np.maximum(np.maximum(c0, s0 - rows), d0 + rows)
    hi = np.minimum(np.minimum(c1, s1 + 1 - rows), d1 + 1 + rows)
    counts = np.maximum(hi - lo, 0)
    starts = np.cumsum(counts) - counts
    total = int(counts.sum())
    out_rows = np.repeat(rows, counts)
    out_cols = np.arange(total, dtype=np.int64) - np.repeat(starts - lo, counts)
    return out_rows, out_cols


def _layer_alpha(layer: Any) -> int:
    return int(round(min(1.0, max(0.0, float(layer.opacity))) * 255))


def _cell_looks(
    layer: Any, view: _View, window: tuple[int, int, int, int], looks: dict[Any, int]
) -> tuple[np.ndarray, np.ndarray]:
    """Per cell of ``window``: the number (in ``looks``) of its stamp's size and place
    relative to the cell (-1: nothing drawn), and whether the stamp is opaque."""
    r0, r1, c0, c1 = window
    gids = layer.gids[r0:r1, c0:c1]
    keys = (gids.astype(np.int64) << 4) | layer.flags[r0:r1, c0:c1]
    ukeys, inv = _unique_inverse(keys.reshape(-1))
    alpha, tint = _layer_alpha(layer), _layer_tint(getattr(layer, "tint", None))
    look = np.full(ukeys.size, -1, dtype=np.int64)
    opaque = np.zeros(ukeys.size, dtype=bool)
    fallback = fallback_stamps(view.grid, alpha) if view.model is not None else None
    for i, k in enumerate(ukeys.tolist()):
        if k >> 4 == 0:
            continue
        st = view.cache.stamp(k >> 4, k & 15, view.hexagonal, alpha, tint)
        if st is None and fallback is not None:
            # The cell's terrain picks the stamp; all of them are one shape.
            st = fallback[0]
            st = replace(st, opaque=all(f.opaque for f in fallback))
        if st is None:
            continue
        shape = (st.surface.get_size(), st.dx, st.dy)
        look[i] = looks.setdefault(shape, len(looks))
        opaque[i] = st.opaque
    shape2d = gids.shape
    return look[inv].reshape(shape2d), opaque[inv].reshape(shape2d)


def _hidden_cells(layers: list[Any], view: _View, drawn: Callable[[Any], bool]) -> dict[int, Any]:
    """Per layer (by index), the cells of its window that a later layer hides: one drawn
    after it with an opaque stamp of the same size and place on the same cell overwrites
    every pixel the cell's stamp would draw (a map of full layers drawn over each other).
    Orthogonal maps, layers with the same offset (the same window) as the topmost one."""
    if view.grid.orientation != "orthogonal" or len(layers) < 2:
        return {}
    hidden: dict[int, Any] = {}
    cover: dict[int, np.ndarray] = {}
    looks: dict[Any, int] = {}
    top: tuple[Any, ...] | None = None
    for n in range(len(layers) - 1, -1, -1):
        layer = layers[n]
        if isinstance(layer, _AllCells) or not drawn(layer) or _layer_alpha(layer) == 0:
            continue
        window = view.window(layer)
        if top is None:
            top = (window, tuple(layer.offset))
        elif top != (window, tuple(layer.offset)):
            break
        look, opaque = _cell_looks(layer, view, window, looks)
        mask = np.zeros(look.shape, dtype=bool)
        for shape, covered in cover.items():
            mask |= covered & (look == shape)
        if mask.any():
            hidden[n] = mask
        for shape in np.unique(look[opaque]).tolist():
            mine = opaque & (look == shape)
            cover[shape] = cover[shape] | mine if shape in cover else mine
    return hidden


def _draw_layer(
    out: pygame.Surface, layer: Any, view: _View, renderorder: str, hidden: Any = None
) -> bool:
    """Draw one layer (premultiplied); True if it drew any half-transparent pixel.
    ``hidden``: the cells of its window not to draw (:func:`_hidden_cells`)."""
    alpha = _layer_alpha(layer)
    if alpha == 0:
        return False
    # Tiled 1.8+ layer tint (group tints multiplied in), when the model carries one.
    tint = _layer_tint(getattr(layer, "tint", None))
    grid, cache = view.grid, view.cache
    r0, r1, c0, c1 = view.window(layer)
    strip = view.strip(layer) if hidden is None else None
    if strip is not None:
        rows, cols = _strip_cells((r0, r1, c0, c1), strip)
        found = layer.gids[rows, cols]
        rows, cols = rows[found != 0], cols[found != 0]
        if rows.size == 0:
            return False
        keys = (found[found != 0].astype(np.int64) << 4) | layer.flags[rows, cols]
    else:
        gids = layer.gids[r0:r1, c0:c1]
        rows, cols = np.nonzero(gids if hidden is None else (gids != 0) & ~hidden)
        if rows.size == 0:
            return False
        keys = (gids[rows, cols].astype(np.int64) << 4) | layer.flags[r0:r1, c0:c1][rows, cols]
        rows = rows + r0
        cols = cols + c0
    ukeys, inv = _unique_inverse(keys)
    del keys
    stamps: list[Stamp | None] = [
        None
        if isinstance(layer, _AllCells)
        else cache.stamp(int(k) >> 4, int(k) & 15, view.hexagonal, alpha, tint)
        for k in ukeys.tolist()
    ]
    missing = np.array([st is None for st in stamps], dtype=bool)[inv]
    if missing.any():
        if view.model is not None:
            stamps.extend(fallback_stamps(grid, alpha))
            table = np.array([MODES.index(t.move) for t in view.model.terrains], dtype=np.int64)
            moves = table[view.model.terrain_ids[rows[missing], cols[missing]]]
            inv[missing] = len(ukeys) + moves
        else:
            rows, cols, inv = rows[~missing], cols[~missing], inv[~missing]
            if inv.size == 0:
                return False
    # Tiled's isometric loop with odd tile sizes starts from the layer's draw margins, from
    # all the tilesets the layer uses, whatever part of it is drawn.
    odd_isometric = grid.orientation == "isometric" and (
        grid.tile_width % 2 or grid.tile_height % 2
    )
    placed = loop_placed(grid)
    tilesets = cache.images.layer_tilesets(layer.gids) if placed else None
    bounds = layer_bounds(layer.gids) if placed else None
    xs, ys2 = tile_positions(grid, cols, rows, tilesets, bounds)
    order = _draw_order(grid, renderorder, rows, cols, xs, ys2)
    del rows, cols
    if order is not None:
        inv, xs, ys2 = inv[order], xs[order], ys2[order]
    # A tile half a pixel down is drawn a pixel down at scale 1 (Qt's qRound of its
    # corner) and half a pixel down, scaled, at other scales.
    halves = (ys2 & 1).astype(bool) if odd_isometric else None
    idx = inv
    ready = [st if st is not None else Stamp(out, 0, 0) for st in stamps]  # None never drawn
    px, py = _stamp_corners(xs, ys2, layer.offset, ready, idx)
    del xs, ys2, order
    turned = None if halves is None else _turned(ukeys, len(ready))
    idx, px, py, ready = _scale_stamps(view, ready, idx, px, py, halves, turned)
    surfaces = [st.surface for st in ready]
    opaque = np.array([st.opaque for st in ready], dtype=bool)
    # Opaque tiles are plain copies, the others premultiplied "over": one fblits per run.
    # The (surface, (x, y)) pairs are hundreds of thousands of new tuples on a big map,
    # which would set off the cycle collector over and over (a quarter of the draw at
    # scale 1/8); they hold no cycles, so it is paused while they are made.
    used = _unique_values(idx)
    if not _paint_lattice(out, surfaces, opaque, used, idx, px, py, view.blank):
        with _collector_paused():
            _blit_runs(out, surfaces, opaque, idx, px, py)
    view.blank = False
    partial = np.array([st.partial for st in ready], dtype=bool)
    return bool(partial[used].any())


def _stamp_corners(
    xs: np.ndarray,
    ys2: np.ndarray,
    offset: tuple[float, float],
    ready: list[Stamp],
    idx: np.ndarray,
) -> tuple[np.ndarray, np.ndarray]:
    """Each tile's stamp corner in unscaled pixels: ``xs`` and ``(ys2 + 1) >> 1`` (a half
    pixel rounded down the picture), plus the layer's ``offset`` rounded and the stamp's own
    ``dx``, ``dy``. Worked in place on ``xs`` and ``ys2``, which the caller hands over (a big
    layer's arrays are megabytes each, and new ones are memory first touched: page faults
    cost more than the sums); an offset the same for every stamp is added as a number."""
    px = np.asarray(xs, dtype=np.int64)
    py = np.asarray(ys2, dtype=np.int64)
    py += 1
    py >>= 1
    for at, shift, shifts in (
        (px, offset[0], [st.dx for st in ready]),
        (py, offset[1], [st.dy for st in ready]),
    ):
        at += math.floor(shift + 0.5)
        if len(set(shifts)) == 1:
            at += shifts[0]
        else:
            at += np.array(shifts, dtype=np.int64)[idx]
    return px, py


def _turned(ukeys: np.ndarray, stamps: int) -> np.ndarray:
    """Per stamp (the layer's keys, then fallbacks): flipped or turned, which Qt's cell
    renderer draws through a transform (a negative scale or a rotation), not as a plain
    translated copy."""
    turned = np.zeros(stamps, dtype=bool)
    turned[: ukeys.size] = (ukeys & (FLIP_H | FLIP_V | FLIP_D)) != 0
    return turned


#: Pixels (4 bytes each) that :func:`_paint_lattice` writes at a time, at most: a band's
#: gathered pieces (256 KB) then reuse the memory the last band's freed, where a few MB
#: a band were memory touched afresh each time (page faults cost more than the copy).
_LATTICE_BAND = 1 << 16
#: The largest stamp :func:`_paint_lattice` copies, in pixels (16 x 16): the lattice copy
#: pays per stamp pixel and pygame's blits of whole rows per row, so small stamps (a map
#: drawn at a small scale) are quicker copied and larger ones quicker blitted; 16 x 16 is
#: where they cross (``benchmarks/bench_render.py``'s scale rows hold both sides).
_LATTICE_MAX_PIXELS = 256


def _paint_lattice(
    out: pygame.Surface,
    surfaces: list[pygame.Surface],
    opaque: np.ndarray,
    used: np.ndarray,
    idx: np.ndarray,
    px: np.ndarray,
    py: np.ndarray,
    blank: bool = True,
) -> bool:
    """The blits of :func:`_blit_runs` made as array copies where they tile the canvas:
    every stamp the same size, each on its own cell of a lattice of that size, none outside
    the canvas (a square map's tiles at a scale that keeps whole pixels: 162k 4x4 tiles at
    1/8 on 403^2). Each stamp is blitted once, by pygame, onto a piece of the canvas (the
    pixels every blit of it would make), and the pieces are copied into place. ``blank``:
    the canvas is still all one colour; otherwise every stamp must cover its piece whatever
    lies under it (an opaque tile: checked, see below), and the lattice's cells without a
    tile keep their pixels (a map's upper layers). False (nothing drawn) where the blits do
    not tile the canvas so."""
    size = surfaces[int(used[0])].get_size()
    sw, sh = size
    if (
        sw <= 0
        or sh <= 0
        or sw * sh > _LATTICE_MAX_PIXELS
        or any(surfaces[i].get_size() != size for i in used.tolist())
    ):
        return False
    x0, y0 = int(px.min()), int(py.min())
    gx, rx = np.divmod(px - x0, sw)
    gy, ry = np.divmod(py - y0, sh)
    if rx.any() or ry.any():
        return False
    nx, ny = int(gx.max()) + 1, int(gy.max()) + 1
    if nx * ny > 4 * idx.size + 1024:  # a sparse lattice: the blits are cheaper
        return False
    if np.bincount(gy * nx + gx, minlength=nx * ny).max() > 1:
        return False
    # The lattice's cells wholly on the canvas are copied; the stamps across its edge (an
    # area's margin) are blitted, those off it dropped: no two stamps overlap, so the order
    # between copies and blits does not matter.
    gc0, gr0 = max(0, -(x0 // sw)), max(0, -(y0 // sh))
    gc1 = min(nx, (out.get_width() - x0) // sw)
    gr1 = min(ny, (out.get_height() - y0) // sh)
    if gc0 >= gc1 or gr0 >= gr1:
        return False
    inside = (gx >= gc0) & (gx < gc1) & (gy >= gr0) & (gy < gr1)
    edge = (
        ~inside & (px < out.get_width()) & (py < out.get_height()) & (px + sw > 0) & (py + sh > 0)
    )
    x0, y0, nx, ny = x0 + gc0 * sw, y0 + gr0 * sh, gc1 - gc0, gr1 - gr0
    cells = (gy[inside] - gr0) * nx + (gx[inside] - gc0)
    across = idx[edge], px[edge], py[edge]
    idx = idx[inside]
    pieces = _lattice_pieces(out, surfaces, opaque, used, size, blank)
    if pieces is None:
        return False
    flat = np.full(nx * ny, len(surfaces), dtype=np.int64)
    flat[cells] = idx
    table = flat.reshape(ny, nx)
    _copy_lattice(out, pieces, table, (x0, y0), blank)
    if across[0].size:
        with _collector_paused():
            _blit_runs(out, surfaces, opaque, *across)
    return True


def _copy_lattice(
    out: pygame.Surface, pieces: np.ndarray, table: np.ndarray, at: tuple[int, int], blank: bool
) -> None:
    """Copy ``pieces[table]`` (rows, columns of the lattice) onto ``out`` from ``at``, in
    bands; where not ``blank``, the cells without a tile (the last piece) are left as they
    are."""
    x0, y0 = at
    ny, nx = table.shape
    _, sw, sh = pieces.shape
    empty = pieces.shape[0] - 1
    canvas = pygame.surfarray.pixels2d(out)  # (width, height), locks ``out`` while it lives
    try:
        rows = max(1, _LATTICE_BAND // max(1, nx * sw * sh))
        for r0 in range(0, ny, rows):
            r1 = min(ny, r0 + rows)
            block = pieces[table[r0:r1]].transpose(1, 2, 0, 3)  # (nx, sw, rows, sh)
            target = canvas[x0 : x0 + nx * sw, y0 + r0 * sh : y0 + r1 * sh]
            cells4 = target.reshape(nx, sw, r1 - r0, sh)  # splits each axis: still a view
            if not np.may_share_memory(cells4, canvas):  # a copy would take the writes
                raise AssertionError("the canvas view could not be split")
            tiled = table[r0:r1] != empty
            if blank or tiled.all():
                cells4[...] = block
            else:
                np.copyto(cells4, block, where=tiled.T[:, None, :, None])
    finally:
        del canvas


def _lattice_pieces(
    out: pygame.Surface,
    surfaces: list[pygame.Surface],
    opaque: np.ndarray,
    used: np.ndarray,
    size: tuple[int, int],
    blank: bool,
) -> np.ndarray | None:
    """The pieces of :func:`_paint_lattice`, as 32-bit pixels (x, y): each stamp as its
    blits would leave it on the blank canvas, and last the blank piece itself (the
    lattice's cells without a tile). Not ``blank``: None unless no stamp's piece depends on
    what lies under it; blending is monotone in the pixel under it, so the same piece over
    clear black and over opaque white means the same piece over anything."""
    blank_piece = out.subsurface((0, 0, *size)).copy()
    pieces = np.empty((len(surfaces) + 1, *size), dtype=np.uint32)
    pieces[-1] = pygame.surfarray.array2d(blank_piece)
    under = None if blank else pygame.Surface(size, pygame.SRCALPHA, 32)
    if under is not None:
        under.fill((255, 255, 255, 255))
    for i in used.tolist():
        flags = 0 if opaque[i] else pygame.BLEND_PREMULTIPLIED
        piece = blank_piece.copy() if blank else pygame.Surface(size, pygame.SRCALPHA, 32)
        piece.blit(surfaces[i], (0, 0), special_flags=flags)
        pixels = pygame.surfarray.array2d(piece)
        pieces[i] = pixels
        if under is not None:
            over = under.copy()
            over.blit(surfaces[i], (0, 0), special_flags=flags)
            if not np.array_equal(pygame.surfarray.array2d(over), pixels):
                return None
    return pieces


def _unique_inverse(keys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``np.unique(keys, return_inverse=True)`` for small non-negative keys (tile ids and
    flips) by a lookup table, not a sort: a layer's keys are few and small, so marking them
    in a table is linear where ``np.unique`` sorts the whole layer."""
    top = int(keys.max(initial=0))
    if top >= 1 << 24:
        ukeys, inv = np.unique(keys, return_inverse=True)
        return ukeys, inv.reshape(-1)
    seen = np.zeros(top + 1, dtype=bool)
    seen[keys] = True
    ukeys = np.flatnonzero(seen)
    # Each key's rank written where it is seen, not counted along the whole table (a
    # cumulative sum wrote all of it: 16 MB for a scaled layer's keys, which are sparse);
    # only the entries written are read.
    rank = np.empty(top + 1, dtype=np.int64)
    rank[ukeys] = np.arange(ukeys.size, dtype=np.int64)
    return ukeys, rank[keys]


def _unique_values(keys: np.ndarray) -> np.ndarray:
    """``np.unique(keys)`` for small non-negative keys, by the lookup table of
    :func:`_unique_inverse`. (numpy's plain ``unique`` also imports ``numpy.ma`` on its first
    call, which a quick render's start would pay for nothing.)"""
    top = int(keys.max(initial=0))
    if top >= 1 << 24 or int(keys.min(initial=0)) < 0:
        return np.unique(keys)
    seen = np.zeros(top + 1, dtype=bool)
    seen[keys] = True
    return np.flatnonzero(seen)


@contextmanager
def _collector_paused() -> Iterator[None]:
    """Python's cycle collector off for the block (as it was, after)."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


def _blit_runs(
    out: pygame.Surface,
    surfaces: list[pygame.Surface],
    opaque: np.ndarray,
    idx: np.ndarray,
    px: np.ndarray,
    py: np.ndarray,
) -> None:
    """Blit ``surfaces[idx[k]]`` at ``(px[k], py[k])`` in order, in batches."""
    for a0 in range(0, idx.size, _BLIT_BATCH):
        bi = idx[a0 : a0 + _BLIT_BATCH]
        xs_b, ys_b = px[a0 : a0 + _BLIT_BATCH].tolist(), py[a0 : a0 + _BLIT_BATCH].tolist()
        where = zip(xs_b, ys_b, strict=True)
        seq = list(zip(map(surfaces.__getitem__, bi.tolist()), where, strict=True))
        kinds = opaque[bi]
        cuts = [0, *(np.flatnonzero(kinds[1:] != kinds[:-1]) + 1).tolist(), len(seq)]
        for a, b in zip(cuts[:-1], cuts[1:], strict=False):
            out.fblits(seq[a:b], 0 if kinds[a] else pygame.BLEND_PREMULTIPLIED)


def _scale_stamps(
    view: _View,
    ready: list[Stamp],
    idx: np.ndarray,
    px: np.ndarray,
    py: np.ndarray,
    halves: np.ndarray | None = None,
    turned: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, list[Stamp]]:
    """Stamps and positions in output pixels, relative to the area's corner.

    Scale 1 keeps them; a whole number k repeats each pixel k times (positions times k);
    other scales place each tile where Qt's painter puts it under the scale transform (the
    pixels whose centres fall inside it, from ``qRound`` of its scaled corners) and sample
    it bilinearly there; a tile's scaled copy depends on its sub-pixel phase, kept to
    1/:data:`PHASES` of a pixel. ``halves``: the tiles whose place is half a pixel above
    ``py`` (``py`` is that place rounded, as drawn at scale 1); scaled, the exact place is.
    ``turned`` (per stamp): flipped or turned tiles, which Qt draws through its transformed
    path even at scale 1, so that one on a half pixel is sampled there, not rounded.
    """
    s, rect = view.scale, view.rect
    if s == 1.0:
        moved = None if halves is None or turned is None else halves & turned[idx]
        if moved is None or not moved.any():
            return idx, px - rect.x, py - rect.y, ready
        fy = py[moved] - 0.5
        some, sx, sy, extra = _phased(view, ready, idx[moved], px[moved].astype(np.float64), fy)
        idx, px, py = idx.copy(), px.copy(), py.copy()
        idx[moved], px[moved], py[moved] = some + len(ready), sx, sy
        return idx, px - rect.x, py - rect.y, [*ready, *extra]
    if s.is_integer():
        k = int(s)
        used = _unique_values(idx).tolist()
        scaled = list(ready)
        for i in used:
            scaled[i] = view.cache.scaled(ready[i], s, 0, 0)
        # k (py - 1/2) rounded half up.
        lift = 0 if halves is None else (k // 2) * halves
        return idx, px * k - rect.x, py * k - lift - rect.y, scaled
    keys = None if halves is not None else _lattice_phase_keys(view, ready, idx, px, py)
    if keys is None:
        fy = (py if halves is None else py - 0.5 * halves) * s
        keys = _phase_keys(view, ready, idx, px * s, fy)
    new_idx, ix, iy, out = _phased_stamps(view, ready, *keys)
    return new_idx, ix - rect.x, iy - rect.y, out


def _phased(
    view: _View, ready: list[Stamp], idx: np.ndarray, fx: np.ndarray, fy: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray, list[Stamp]]:
    """Tiles whose corners land at output ``fx``, ``fy`` (fractions of a pixel) at the
    view's scale: (stamp per tile, whole-pixel corners, the stamps' sampled copies)."""
    return _phased_stamps(view, ready, *_phase_keys(view, ready, idx, fx, fy))


#: The key of a scaled tile's copy (:func:`_phase_keys`) is
#: ``((stamp * _SPAN + x phase) * _SPAN + y phase) * 9 + grow``.
_SPAN = 2 * PHASES + 1


def _axis_phase(
    view: _View, f: np.ndarray, size: np.ndarray | float
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Along one axis, tiles whose corner lands at ``f`` (fractions of an output pixel)
    and ``size`` output pixels long: the whole-pixel corner, the phase (in 1/PHASES of a
    pixel) and the grow (-1, 0 or 1) of the copy's key (:func:`_phase_keys`)."""
    step = PHASES // view.phases
    i = np.floor(f + 0.5)
    q = np.rint((i - f) * view.phases).astype(np.int64) * step
    # A tile covers the output pixels between its rounded corners, exactly; a phase kept
    # to a quarter pixel can make its copy a pixel narrower or wider than that, which
    # left a seam (or an overlap) beside the next tile: the difference, -1, 0 or 1, is
    # part of the copy's key.
    g = np.floor(f + size + 0.5) - i - np.floor(size - q / PHASES + 0.5)
    return i, q, np.clip(g, -1, 1).astype(np.int64)


def _phase_keys(
    view: _View, ready: list[Stamp], idx: np.ndarray, fx: np.ndarray, fy: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per tile (stamp ``idx``, corner at output ``fx``, ``fy``): the key of its scaled
    copy (stamp, sub-pixel phase kept to 1/``view.phases`` of a pixel, and grow) and its
    whole-pixel corner."""
    s = view.scale
    tw = np.array([st.surface.get_width() for st in ready], dtype=np.float64)[idx] * s
    th = np.array([st.surface.get_height() for st in ready], dtype=np.float64)[idx] * s
    ix, qx, gx = _axis_phase(view, fx, tw)
    iy, qy, gy = _axis_phase(view, fy, th)
    combo = ((idx.astype(np.int64) * _SPAN + (qx + PHASES)) * _SPAN + (qy + PHASES)) * 9
    combo += (gx + 1) * 3 + gy + 1
    return combo, ix.astype(np.int64), iy.astype(np.int64)


def _lattice_phase_keys(
    view: _View, ready: list[Stamp], idx: np.ndarray, px: np.ndarray, py: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
    """:func:`_phase_keys` of tiles at whole unscaled pixels ``px``, ``py`` (int arrays),
    worked out once per column and row of pixels, not once per tile: where every stamp
    used is the same size, a tile's x part depends on ``px`` alone and its y part on
    ``py`` (the same arithmetic on the same values, looked up; tests/test_render_scale.py
    holds it equal to the plain way). None where the stamps differ in size or the pixels
    are too spread out to tabulate (the plain way then)."""
    sizes = {ready[i].surface.get_size() for i in _unique_values(idx).tolist()}
    if len(sizes) != 1 or px.size == 0:
        return None
    (w, h), s = sizes.pop(), view.scale
    tables = []
    for at, size in ((px, w), (py, h)):
        lo, hi = int(at.min()), int(at.max())
        if hi - lo > 2 * at.size + 65536:
            return None
        values = np.arange(lo, hi + 1, dtype=np.int64)
        tables.append((at - lo, *_axis_phase(view, values * s, np.float64(size) * s)))
    (ax, ix, qx, gx), (ay, iy, qy, gy) = tables
    # The key of :func:`_phase_keys`, its x and y parts apart.
    xpart = (qx + PHASES) * (_SPAN * 9) + (gx + 1) * 3
    ypart = (qy + PHASES) * 9 + gy + 1
    combo = idx.astype(np.int64)
    combo *= _SPAN * _SPAN * 9
    combo += xpart[ax]
    combo += ypart[ay]
    return combo, ix.astype(np.int64)[ax], iy.astype(np.int64)[ay]


def _phased_stamps(
    view: _View, ready: list[Stamp], combo: np.ndarray, ix: np.ndarray, iy: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray, list[Stamp]]:
    """The tiles' stamps from their copies' keys (:func:`_phase_keys`): (stamp per tile,
    whole-pixel corners, the stamps' sampled copies)."""
    s = view.scale
    ucombo, new_idx = _unique_inverse(combo)
    del combo
    out: list[Stamp] = []
    for c in ucombo.tolist():
        gxv, gyv = (c % 9) // 3 - 1, c % 3 - 1
        c //= 9
        qyv = c % _SPAN - PHASES
        qxv = (c // _SPAN) % _SPAN - PHASES
        out.append(view.cache.scaled(ready[c // _SPAN // _SPAN], s, qxv, qyv, (gxv, gyv)))
    return new_idx.reshape(-1), ix, iy, out


def _bilinear(stamp: Stamp, s: float, qx: int, qy: int, grow: tuple[int, int] = (0, 0)) -> Stamp:
    """A stamp drawn at scale ``s`` with its top-left corner ``q / PHASES`` of a pixel left
    of (above) the output pixel grid line it rounds to, as Qt's bilinear image filler does:
    each covered output pixel centre maps back into the tile, sampled between its four
    nearest pixels (premultiplied), edges clamped. ``grow``: pixels more (or fewer) than
    the phase covers, where the phase was rounded (:func:`_scale_stamps`)."""
    surface = stamp.surface
    w, h = surface.get_size()
    ex, ey = qx / PHASES, qy / PHASES  # output grid line minus the exact scaled corner
    nx = max(0, math.floor(w * s - ex + 0.5) + grow[0])
    ny = max(0, math.floor(h * s - ey + 0.5) + grow[1])
    if nx == 0 or ny == 0:
        return Stamp(pygame.Surface((1, 1), pygame.SRCALPHA, 32), 0, 0, partial=False)
    rgb = pygame.surfarray.array3d(surface).astype(np.float32)  # (w, h, 3)
    has_alpha = not stamp.opaque
    if has_alpha:
        a = pygame.surfarray.array_alpha(surface).astype(np.float32)
        src = np.concatenate([rgb, a[..., None]], axis=2)
    else:
        src = rgb
    u = (np.arange(nx, dtype=np.float64) + 0.5 + ex) / s - 0.5
    v = (np.arange(ny, dtype=np.float64) + 0.5 + ey) / s - 0.5
    ux0 = np.floor(u)
    vy0 = np.floor(v)
    tx = (u - ux0).astype(np.float32)[:, None, None]
    ty = (v - vy0).astype(np.float32)[None, :, None]
    xa = np.clip(ux0, 0, w - 1).astype(np.intp)
    xb = np.clip(ux0 + 1, 0, w - 1).astype(np.intp)
    ya = np.clip(vy0, 0, h - 1).astype(np.intp)
    yb = np.clip(vy0 + 1, 0, h - 1).astype(np.intp)
    rows_a, rows_b = src[:, ya], src[:, yb]  # (w, ny, c)
    top = rows_a[xa] * (1 - tx) + rows_a[xb] * tx
    bottom = rows_b[xa] * (1 - tx) + rows_b[xb] * tx
    res = np.clip(np.rint(top * (1 - ty) + bottom * ty), 0, 255).astype(np.uint8)
    if not has_alpha:
        result = pygame.Surface((nx, ny), 0, 32)
        pygame.surfarray.blit_array(result, res)
        return Stamp(result, 0, 0, opaque=True)
    result = pygame.Surface((nx, ny), pygame.SRCALPHA, 32)
    pygame.surfarray.blit_array(result, res[..., :3])
    alpha_view = pygame.surfarray.pixels_alpha(result)
    alpha_view[...] = res[..., 3]
    del alpha_view  # release the surface lock
    partial = bool(((res[..., 3] > 0) & (res[..., 3] < 255)).any())
    return Stamp(result, 0, 0, partial=partial)


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
    path_in: str | os.PathLike[str],
    path_out: str | os.PathLike[str],
    *,
    scale: float = 1.0,
    walls: bool = True,
    note: Callable[[str], None] | None = None,
) -> tuple[int, int]:
    """Load a map, draw it and save it as a PNG (whatever the name's ending); returns the
    image size in pixels. ``note`` is told each of :func:`picture_notes` once.

    ``scale`` draws at that size directly (see :func:`render_map`): whole numbers >= 2 with
    crisp repeated pixels, anything else bilinearly as Tiled does. An image over the budget
    (:data:`MAX_SIDE`, :data:`MAX_PIXELS`) is refused before anything is drawn. The map is
    drawn in horizontal bands, so no more than the output and a band is held. ``walls``:
    draw a Universal VTT file's walls and doors over its picture (:func:`render_map`).
    """
    scale = check_scale(scale)
    model, tiled = load_for_render(path_in)
    size = check_output(model.grid, scale)
    surface = render_banded(model, tiled, scale=scale, walls=walls)
    save_png(surface, path_out)
    if note is not None:
        for text in picture_notes(model, tiled):
            note(text)
    return size


def render_banded(
    model: MapModel, tiled: TiledFile | None, *, scale: float = 1.0, walls: bool = True
) -> pygame.Surface:
    """:func:`render_map` of the whole map, drawn in bands of output rows (same pixels)."""
    w, h = output_size(model.grid, scale)
    cells = max(1, model.grid.width * model.grid.height)
    band = max(1, min(h, (1 << 22) // w, (1 << 18) * h // cells))
    if band >= h:
        return render_map(model, tiled, scale=scale, walls=walls)
    out = pygame.Surface((w, h), pygame.SRCALPHA, 32)
    for y in range(0, h, band):
        area = (0, y, w, min(band, h - y))
        part = render_map(model, tiled, scale=scale, area=area, walls=walls)
        out.blit(part, (0, y), special_flags=pygame.BLEND_RGBA_ADD)  # onto zeroed pixels
    return out


def save_png(surface: pygame.Surface, path_out: str | os.PathLike[str]) -> None:
    """Write ``surface`` as a PNG (a name not ending in ``.png`` still gets a PNG), whole
    or not at all and only over a regular file (:mod:`engine.viewer.png`, :mod:`engine.safeio`)."""
    from engine.viewer import png

    png.save_png(surface, path_out, any_name=True)


class SurfaceLRU:
    """Surfaces by key, least recently used dropped first once over ``max_bytes``."""

    def __init__(self, max_bytes: int) -> None:
        self.max_bytes = max_bytes
        self.bytes = 0
        self._items: OrderedDict[Any, pygame.Surface] = OrderedDict()

    def get(self, key: Any) -> pygame.Surface | None:
        surface = self._items.get(key)
        if surface is not None:
            self._items.move_to_end(key)
        return surface

    def put(self, key: Any, surface: pygame.Surface) -> None:
        old = self._items.pop(key, None)
        if old is not None:
            self.bytes -= _nbytes(old)
        self._items[key] = surface
        self.bytes += _nbytes(surface)
        while self.bytes > self.max_bytes and len(self._items) > 1:
            _, dropped = self._items.popitem(last=False)
            self.bytes -= _nbytes(dropped)

    def clear(self) -> None:
        self._items.clear()
        self.bytes = 0

    def __len__(self) -> int:
        return len(self._items)


def _nbytes(surface: pygame.Surface) -> int:
    return surface.get_pitch() * surface.get_height()


class MapChunks:
    """The map drawn in square chunks of :attr:`CHUNK` output pixels, per zoom, on demand.

    What a window shows of a big map is a few chunks; each is :func:`render_map` of that
    rectangle at that zoom (the same pixels as the whole picture), kept in an LRU cache
    bounded in bytes. ``get_size()`` is the map's size in pixels at zoom 1.
    """

    CHUNK = 256

    def __init__(self, model: MapModel, tiled: TiledFile | None, max_bytes: int = 96 << 20) -> None:
        self.model, self.tiled = model, tiled
        self.cache = SurfaceLRU(max_bytes)
        #: Draw the map's object layers (exits, regions, spawns) as Tiled does.
        self.objects = True
        #: Layers left out, and tile layers drawn though the file hides them (by name).
        self.hide: frozenset[str] = frozenset()
        self.show: frozenset[str] = frozenset()

    def show_layers(self, hide: frozenset[str], show: frozenset[str]) -> None:
        """Leave the ``hide`` layers out and draw the ``show`` ones from the next chunk on."""
        if (hide, show) != (self.hide, self.show):
            self.hide, self.show = hide, show
            self.cache.clear()

    def show_objects(self, show: bool) -> None:
        """Draw the object layers, or not, from the next chunk on (chunks are redrawn)."""
        if show != self.objects:
            self.objects = show
            self.cache.clear()

    def get_size(self) -> tuple[int, int]:
        return self.model.grid.pixel_size()

    def size_at(self, zoom: float) -> tuple[int, int]:
        return output_size(self.model.grid, zoom)

    def chunks_in(self, zoom: float, rect: pygame.Rect) -> list[tuple[int, int]]:
        """The chunks (column, row) that cover ``rect`` (output pixels at ``zoom``)."""
        w, h = self.size_at(zoom)
        c = self.CHUNK
        x0, y0 = max(0, rect.left) // c, max(0, rect.top) // c
        x1 = min(w, rect.right) - 1
        y1 = min(h, rect.bottom) - 1
        if x1 < 0 or y1 < 0 or rect.left >= w or rect.top >= h:
            return []
        return [(i, j) for j in range(y0, y1 // c + 1) for i in range(x0, x1 // c + 1)]

    def cached(self, zoom: float, i: int, j: int) -> bool:
        return self.cache.get((zoom, self.objects, self.hide, self.show, i, j)) is not None

    def chunk(self, zoom: float, i: int, j: int) -> pygame.Surface:
        """Chunk (i, j) at ``zoom``: its top-left is output pixel (i, j) times CHUNK."""
        key = (zoom, self.objects, self.hide, self.show, i, j)
        got = self.cache.get(key)
        if got is not None:
            return got
        w, h = self.size_at(zoom)
        c = self.CHUNK
        x, y = i * c, j * c
        area = (x, y, max(1, min(c, w - x)), max(1, min(c, h - y)))
        surface = render_map(
            self.model,
            self.tiled,
            scale=zoom,
            area=area,
            phases=4,
            objects=self.objects,
            walls=False,  # the viewer draws walls and doors over the map, as they stand
            spawns=False,  # and spawns as marks unlike its tokens (engine.viewer.table)
            hide=self.hide,
            show=self.show,
        )
        if pygame.display.get_init() and pygame.display.get_surface() is not None:
            alpha = pygame.surfarray.pixels_alpha(surface)  # a view: no copy
            opaque = int(alpha.min(initial=255)) == 255
            del alpha  # release the surface lock
            surface = surface.convert() if opaque else surface.convert_alpha()
        self.cache.put(key, surface)
        return surface
