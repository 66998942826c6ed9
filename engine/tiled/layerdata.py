"""Tile layer data: a <data> element's body decoded into raw Tiled gids.

One entry point, :func:`decode_layer_data`, for every encoding Tiled writes: XML <tile>
elements, csv, base64 (plain, zlib, gzip or zstd) and infinite maps' <chunk>s, decoded
with numpy. The gids keep Tiled's flip/rotation bits; the layer step splits them off.
"""

from __future__ import annotations

import base64
import zlib
from xml.etree import ElementTree as ET

import numpy as np

from engine.errors import MapError
from engine.sources import clip
from engine.tiled.common import MAX_CELLS, fail, int_attr

#: One chunk of an infinite map: Tiled's (x, y) of its top-left cell and its (h, w) gids.
Chunk = tuple[int, int, np.ndarray]


def decode_layer_data(
    path: str, data: ET.Element, label: str, width: int, height: int, infinite: bool
) -> tuple[np.ndarray | None, list[Chunk]]:
    """Decode a layer's <data>: ``(gids, [])`` for a finite map, its (height, width) raw
    uint32 gids; ``(None, chunks)`` for an infinite one (no chunks: an empty layer)."""
    chunk_els = data.findall("chunk")
    if chunk_els:
        if not infinite:
            raise fail(path, f"{label} has chunks but the map is not infinite")
        return None, [_decode_chunk(path, data, ch, label) for ch in chunk_els]
    if infinite:
        return None, []
    return _decode_gids(path, data, width * height, label).reshape(height, width), []


def _decode_chunk(path: str, data: ET.Element, ch: ET.Element, label: str) -> Chunk:
    # Chunks carry the layer's encoding on the <data> element.
    for attr in ("encoding", "compression"):
        if data.get(attr):
            ch.set(attr, data.get(attr, ""))
    cx, cy = int_attr(path, ch, "x"), int_attr(path, ch, "y")
    cw, chh = int_attr(path, ch, "width"), int_attr(path, ch, "height")
    if cw <= 0 or chh <= 0 or cw * chh > MAX_CELLS:
        raise fail(path, f"{label} has a chunk of bad size {cw}x{chh}")
    arr = _decode_gids(path, ch, cw * chh, f"{label} chunk ({cx},{cy})")
    return cx, cy, arr.reshape(chh, cw)


def _decode_gids(path: str, data: ET.Element, count: int, label: str) -> np.ndarray:
    """Decode one <data> or <chunk> body into ``count`` raw uint32 gids.

    Every decoder is budgeted by ``count`` (what the map declares): more tiles than that,
    or compressed data that would expand beyond ``count * 4`` bytes, stops before the
    excess is ever held in memory.
    """
    encoding = data.get("encoding")
    text = (data.text or "").strip()
    if encoding is None:
        tiles = data.findall("tile")
        _check_count(path, len(tiles), count, label)
        arr = np.fromiter((_tile_gid(path, t, label) for t in tiles), dtype=np.int64)
    elif encoding == "csv":
        arr = _decode_csv(path, text, count, label)
    elif encoding == "base64":
        arr = _decode_base64(path, text, data.get("compression"), count, label)
    else:
        raise fail(
            path,
            f"{label} uses unknown encoding '{clip(encoding)}'",
            "in Tiled choose CSV or Base64 as the Tile Layer Format",
        )
    _check_count(path, arr.size, count, label)
    if arr.dtype != np.uint32 and arr.size and (arr.min() < 0 or arr.max() > 0xFFFFFFFF):
        raise fail(path, f"{label} has tile ids out of range")
    return arr.astype(np.uint32)


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


def _decode_csv(path: str, text: str, count: int, label: str) -> np.ndarray:
    if text.count(",") > count:  # more numbers than the layer has cells: never parsed
        _check_count(path, count + 1, count, label)
    try:
        return np.fromstring(text, dtype=np.int64, sep=",") if text else np.zeros(0, np.int64)
    except ValueError:
        raise fail(path, f"{label} has csv tile data that is not a list of numbers") from None


def _decode_base64(
    path: str, text: str, compression: str | None, count: int, label: str
) -> np.ndarray:
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
    return np.frombuffer(raw, dtype="<u4")


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
