"""Tile layer data: a <data> element's body decoded into raw Tiled gids.

One entry point, :func:`decode_layer_data`, for every encoding Tiled writes: XML <tile>
elements, csv, base64 (plain, zlib, gzip or zstd) and infinite maps' <chunk>s, decoded
with numpy. The gids keep Tiled's flip/rotation bits; the layer step splits them off.
"""

from __future__ import annotations

import base64
import gzip
import zlib
from xml.etree import ElementTree as ET

import numpy as np

from engine.errors import MapError
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
    """Decode one <data> or <chunk> body into ``count`` raw uint32 gids."""
    encoding = data.get("encoding")
    text = (data.text or "").strip()
    if encoding is None:
        tiles = data.findall("tile")
        arr = np.fromiter((int(t.get("gid", "0")) for t in tiles), dtype=np.int64)
    elif encoding == "csv":
        arr = _decode_csv(path, text, label)
    elif encoding == "base64":
        arr = _decode_base64(path, text, data.get("compression"), count, label)
    else:
        raise fail(
            path,
            f"{label} uses unknown encoding '{encoding}'",
            "in Tiled choose CSV or Base64 as the Tile Layer Format",
        )
    if arr.size != count:
        raise fail(
            path,
            f"{label} has {arr.size} tiles, expected {count}",
            "the file is truncated or damaged: save it again from Tiled",
        )
    if arr.size and (arr.min() < 0 or arr.max() > 0xFFFFFFFF):
        raise fail(path, f"{label} has tile ids out of range")
    return arr.astype(np.uint32)


def _decode_csv(path: str, text: str, label: str) -> np.ndarray:
    try:
        return np.fromstring(text, dtype=np.int64, sep=",") if text else np.zeros(0, np.int64)
    except ValueError:
        raise fail(path, f"{label} has csv tile data that is not a list of numbers") from None


def _decode_base64(
    path: str, text: str, compression: str | None, count: int, label: str
) -> np.ndarray:
    try:
        raw = base64.b64decode(text, validate=False)
        if compression == "zlib":
            raw = zlib.decompress(raw)
        elif compression == "gzip":
            raw = gzip.decompress(raw)
        elif compression == "zstd":
            import zstandard

            raw = zstandard.ZstdDecompressor().decompress(raw, max_output_size=count * 4 + 16)
        elif compression:
            raise fail(
                path,
                f"{label} uses unknown compression '{compression}'",
                "in Tiled, Map > Map Properties > Tile Layer Format: choose CSV or Base64",
            )
    except (ValueError, zlib.error, OSError, EOFError) as exc:
        raise fail(
            path,
            f"{label} tile data cannot be decoded ({compression or 'base64'}: {exc})",
            "the file is damaged: save it again from Tiled",
        ) from None
    except MapError:
        raise
    except Exception as exc:  # zstandard.ZstdError is not a ValueError
        raise fail(path, f"{label} tile data cannot be decoded ({compression}: {exc})") from None
    if len(raw) % 4:
        raise fail(path, f"{label} tile data is not a whole number of tiles (truncated?)")
    return np.frombuffer(raw, dtype="<u4").astype(np.int64)
