"""Tile layer data: a <data> element's body decoded into raw Tiled gids.

One entry point, :func:`decode_layer_data`, for every encoding Tiled writes: XML <tile>
elements, csv, base64 (plain, zlib, gzip or zstd) and infinite maps' <chunk>s. The gids
keep Tiled's flip/rotation bits; the layer step splits them off.

The gids come as :class:`~engine.cells.Cells` (a stdlib array: no numpy import), except
csv data of more than :data:`~engine.cells.SMALL_CELLS` tiles, or csv that is not plain
digits and commas, which numpy parses (as it parses every csv, errors included).
"""

from __future__ import annotations

import base64
import sys
import zlib
from array import array
from typing import TYPE_CHECKING
from xml.etree import ElementTree as ET

from engine import kernel
from engine.cells import U32, Cells, small
from engine.errors import MapError
from engine.lazy import numpy as np
from engine.sources import clip
from engine.tiled.common import MAX_CELLS, fail, int_attr

if TYPE_CHECKING:
    #: A layer's or a chunk's (h, w) raw gids.
    Gids = Cells | np.ndarray
    #: One chunk of an infinite map: Tiled's (x, y) of its top-left cell and its gids.
    Chunk = tuple[int, int, Gids]

#: The largest gid (flag bits included).
_GID_TOP = 0xFFFFFFFF


def decode_layer_data(
    path: str, data: ET.Element, label: str, width: int, height: int, infinite: bool
) -> tuple[Gids | None, list[Chunk]]:
    """Decode a layer's <data>: ``(gids, [])`` for a finite map, its (height, width) raw
    uint32 gids; ``(None, chunks)`` for an infinite one (no chunks: an empty layer)."""
    chunk_els = data.findall("chunk")
    if chunk_els:
        if not infinite:
            raise fail(path, f"{label} has chunks but the map is not infinite")
        return None, [_decode_chunk(path, data, ch, label) for ch in chunk_els]
    if infinite:
        return None, []
    return _decode_gids(path, data, (height, width), label), []


def _decode_chunk(path: str, data: ET.Element, ch: ET.Element, label: str) -> Chunk:
    # Chunks carry the layer's encoding on the <data> element.
    for attr in ("encoding", "compression"):
        if data.get(attr):
            ch.set(attr, data.get(attr, ""))
    cx, cy = int_attr(path, ch, "x"), int_attr(path, ch, "y")
    cw, chh = int_attr(path, ch, "width"), int_attr(path, ch, "height")
    if cw <= 0 or chh <= 0 or cw * chh > MAX_CELLS:
        raise fail(path, f"{label} has a chunk of bad size {cw}x{chh}")
    return cx, cy, _decode_gids(path, ch, (chh, cw), f"{label} chunk ({cx},{cy})")


def _decode_gids(path: str, data: ET.Element, shape: tuple[int, int], label: str) -> Gids:
    """Decode one <data> or <chunk> body into ``shape`` (h, w) raw uint32 gids.

    Every decoder is budgeted by the count of cells (what the map declares): more tiles
    than that, or compressed data that would expand beyond 4 bytes a cell, stops before
    the excess is ever held in memory.
    """
    count = shape[0] * shape[1]
    encoding = data.get("encoding")
    text = (data.text or "").strip()
    if encoding is None:
        tiles = data.findall("tile")
        _check_count(path, len(tiles), count, label)
        return _stdlib_gids(path, [_tile_gid(path, t, label) for t in tiles], shape, label)
    if encoding == "csv":
        return _decode_csv(path, text, shape, label)
    if encoding == "base64":
        raw = _decode_base64(path, text, data.get("compression"), count, label)
        _check_count(path, len(raw) // 4, count, label)
        values = array(U32)
        values.frombytes(raw)
        if sys.byteorder == "big":  # Tiled writes little-endian gids
            values.byteswap()
        return Cells(values, shape)
    raise fail(
        path,
        f"{label} uses unknown encoding '{clip(encoding)}'",
        "in Tiled choose CSV or Base64 as the Tile Layer Format",
    )


def _stdlib_gids(path: str, gids: list[int], shape: tuple[int, int], label: str) -> Cells:
    """Whole numbers >= 0 (as many as the layer's cells) as raw uint32 gids."""
    _check_count(path, len(gids), shape[0] * shape[1], label)
    if gids and max(gids) > _GID_TOP:
        raise fail(path, f"{label} has tile ids out of range")
    return Cells(array(U32, gids), shape)


def _check_count(path: str, got: int, count: int, label: str) -> None:
    if got != count:
        raise fail(
            path,
            f"{label} has {got if got <= count else 'more than ' + str(count)} tiles, "
            f"expected {count}",
            "the file is truncated or damaged: save it again from Tiled",
        )


def _tile_gid(path: str, tile: ET.Element, label: str) -> int:
    raw = tile.get("gid", "0")
    if not (raw.isascii() and raw.isdigit() and len(raw) <= 10):
        raise fail(path, f"{label} has a <tile> gid='{clip(raw)}'", "gids are whole numbers")
    return int(raw)


#: What may stand round a csv number (what numpy's parse skips too).
_SPACE = " \t\n\r\v\f"


def _decode_csv(path: str, text: str, shape: tuple[int, int], label: str) -> Gids:
    """csv gids: plain digits (at most 10 each) in a layer of at most SMALL_CELLS cells are
    read here, in a larger one by engine/_kernel.c's ``csv_u32`` where it is built; anything
    else (signs, other characters, a count other than the layer's) by numpy, whose answer is
    the same where they read it (tests/test_cells.py), and which says what is wrong."""
    count = shape[0] * shape[1]
    if text.count(",") > count:  # more numbers than the layer has cells: never parsed
        _check_count(path, count + 1, count, label)
    if small(count) and text.isascii():
        parts = [p.strip(_SPACE) for p in text.split(",")]
        if all(p.isdigit() and len(p) <= 10 for p in parts):
            return _stdlib_gids(path, [int(p) for p in parts], shape, label)
    elif kernel.available() and count and len(text) >= 2 * count - 1:
        # numpy's parse was most of a big csv layer's load; the compiled one writes straight
        # into the layer (benchmarks/bench_load.py times both). Text too short for the layer
        # is numpy's to refuse: nothing is allocated for a declared size the text cannot hold.
        values = array(U32, [0]) * count
        if kernel.csv_u32(text, values) == count:
            return Cells(values, shape)
    try:
        arr = np.fromstring(text, dtype=np.int64, sep=",") if text else np.zeros(0, np.int64)
    except ValueError:
        raise fail(path, f"{label} has csv tile data that is not a list of numbers") from None
    _check_count(path, arr.size, count, label)
    if arr.size and (arr.min() < 0 or arr.max() > _GID_TOP):
        raise fail(path, f"{label} has tile ids out of range")
    return arr.astype(np.uint32).reshape(shape)


def _decode_base64(path: str, text: str, compression: str | None, count: int, label: str) -> bytes:
    size = count * 4  # bytes the layer declares
    try:
        raw = base64.b64decode(text, validate=False)
        if compression == "zlib":
            raw = _inflate(raw, zlib.MAX_WBITS, size)
        elif compression == "gzip":
            raw = _inflate(raw, 16 + zlib.MAX_WBITS, size)
        elif compression == "zstd":
            raw = _unzstd(raw, size)
        elif compression:
            raise fail(
                path,
                f"{label} uses unknown compression '{clip(compression)}'",
                "in Tiled, Map > Map Properties > Tile Layer Format: choose CSV or Base64",
            )
    except _TooLarge:
        raise fail(
            path,
            f"{label} tile data expands beyond the {count} tiles the layer declares",
            "the file is damaged: save it again from Tiled",
        ) from None
    except (ValueError, zlib.error, OSError, EOFError) as exc:
        raise fail(
            path,
            f"{label} tile data cannot be decoded ({compression or 'base64'}: {clip(str(exc))})",
            "the file is damaged: save it again from Tiled",
        ) from None
    except MapError:
        raise
    except Exception as exc:  # zstandard.ZstdError is not a ValueError
        raise fail(
            path, f"{label} tile data cannot be decoded ({compression}: {clip(str(exc))})"
        ) from None
    if len(raw) % 4:
        raise fail(path, f"{label} tile data is not a whole number of tiles (truncated?)")
    return raw


class _TooLarge(Exception):
    """Compressed tile data that expands beyond what its layer declares."""


def _inflate(raw: bytes, wbits: int, size: int) -> bytes:
    """zlib or gzip data expanded to at most ``size`` bytes (one byte more is an error)."""
    d = zlib.decompressobj(wbits)
    out = d.decompress(raw, size + 1)
    if len(out) > size:
        raise _TooLarge
    if not d.eof:
        raise ValueError("the compressed data is truncated")
    return out


def _unzstd(raw: bytes, size: int) -> bytes:
    """zstd data expanded to at most ``size`` bytes, whatever size its frame states (a
    stated size would otherwise be allocated up front), with a window no larger than it."""
    import zstandard

    window = 1 << max(22, min(27, (size - 1).bit_length()))
    dctx = zstandard.ZstdDecompressor(max_window_size=window)
    parts: list[bytes] = []
    got = 0
    with dctx.stream_reader(raw, read_across_frames=True) as reader:
        while got <= size:
            part = reader.read(size + 1 - got)
            if not part:
                break
            parts.append(part)
            got += len(part)
    if got > size:
        raise _TooLarge
    return b"".join(parts)
