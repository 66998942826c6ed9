"""Surfaces to PNG files: encoded in memory here, written by :mod:`engine.safeio`.

pygame writes a file itself without reporting a failed write (a full disk leaves a
truncated PNG and no error), and it picks the format from the name's extension (``.tga``
gives a TGA). So the viewer never hands pygame a file name: :func:`png_bytes` encodes to
memory as PNG, and :func:`save_png` passes the checked bytes to ``safeio.write_png``,
which writes them whole or not at all and only over a regular ``.png`` file.
"""

from __future__ import annotations

import os
import struct
import threading
import zlib
from typing import Literal

import numpy as np
import pygame

from engine.errors import WriteError
from engine.safeio import check_target, write_png

#: Bytes of filtered rows per deflate segment (whole rows, one at least).
SEGMENT = 1 << 20
#: The window a segment is primed with: the raw bytes just before it (deflate's 32 KiB).
WINDOW = 1 << 15
#: Segments compressed at once, one thread each (zlib lets go of the GIL while it works).
THREADS = max(1, min(4, len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else 1))


def png_bytes(surface: pygame.Surface) -> bytes:
    """The surface encoded as a PNG, in memory (no file is touched): 8-bit RGBA where the
    surface has per-pixel alpha, else RGB, as pygame writes it.

    Encoded here rather than by ``pygame.image.save``: libpng tries every filter on every
    row, which made saving the largest cost of ``tacgrid render``. Each row here gets the
    Sub filter (a pixel minus its left neighbour), the one that suits a map: flat tile
    colours become runs of zeros, so the file is no larger and no search is paid. The rows are deflated in segments of about 1 MB on up to :data:`THREADS`
    threads, as pigz does: each segment is primed with the 32 KiB before it and ends on a
    byte boundary, so they join into one zlib stream that compresses as one pass would,
    and the file is the same whatever the number of threads."""
    w, h = surface.get_size()
    if not w or not h:
        raise WriteError(f"the image could not be encoded as PNG (it is {w}x{h} pixels)")
    alpha = bool(surface.get_flags() & pygame.SRCALPHA)
    bpp = 4 if alpha else 3
    mode: Literal["RGBA", "RGB"] = "RGBA" if alpha else "RGB"
    # A segment of rows at a time: memory stays that of the surface plus a few segments,
    # not three copies of it (a 12896^2 render is 665 MB of pixels).
    band = max(1, SEGMENT // (w * bpp + 1))
    deflate = _Deflater(THREADS)
    adler = 1
    tail = b""
    try:
        for y in range(0, h, band):
            n = min(band, h - y)
            try:
                raw = pygame.image.tobytes(surface.subsurface((0, y, w, n)), mode)
            except pygame.error as exc:
                raise WriteError(f"the image could not be encoded as PNG ({exc})") from None
            pixels = np.frombuffer(raw, dtype=np.uint8).reshape(n, w * bpp)
            out = np.empty((n, w * bpp + 1), dtype=np.uint8)
            out[:, 0] = 1  # filter type Sub: each byte minus the same byte to its left
            out[:, 1 : 1 + bpp] = pixels[:, :bpp]
            np.subtract(pixels[:, bpp:], pixels[:, :-bpp], out=out[:, 1 + bpp :])
            # The filtered rows are deflated from the array itself (zlib reads any
            # buffer), not from a bytes copy of it.
            data = out.reshape(-1).data
            del raw, pixels, out
            adler = zlib.adler32(data, adler)
            deflate.add(data, tail, last=y + n >= h)
            tail = data[-WINDOW:].tobytes()
        parts = deflate.finish()
    finally:
        deflate.close()
    header = struct.pack(">IIBBBBB", w, h, 8, 6 if alpha else 2, 0, 0, 0)
    stream = b"".join([b"\x78\x9c", *parts, struct.pack(">I", adler & 0xFFFFFFFF)])
    return b"".join(
        [
            b"\x89PNG\r\n\x1a\n",
            _chunk(b"IHDR", header),
            _chunk(b"IDAT", stream),
            _chunk(b"IEND", b""),
        ]
    )


class _Deflater:
    """Raw deflate segments made on up to ``threads`` threads at once, kept in order: each
    primed with the bytes before it, each but the last ended by a sync flush (an empty
    stored block: the next segment starts on a byte boundary), the last by the final
    block."""

    LEVEL = 6

    def __init__(self, threads: int) -> None:
        self._slots = threading.BoundedSemaphore(threads)
        self._parts: list[bytes | None] = []
        self._threads: list[threading.Thread] = []
        self._error: BaseException | None = None
        self._inline = threads <= 1

    def add(self, data: bytes | memoryview, primer: bytes, *, last: bool) -> None:
        i = len(self._parts)
        self._parts.append(None)
        if self._inline:
            self._parts[i] = self._segment(data, primer, last)
            return
        self._slots.acquire()
        if self._error is not None:
            self._slots.release()
            raise self._error
        t = threading.Thread(target=self._work, args=(i, data, primer, last), daemon=True)
        self._threads.append(t)
        t.start()

    def _segment(self, data: bytes | memoryview, primer: bytes, last: bool) -> bytes:
        if primer:
            c = zlib.compressobj(self.LEVEL, zlib.DEFLATED, -15, 8, zlib.Z_DEFAULT_STRATEGY, primer)
        else:
            c = zlib.compressobj(self.LEVEL, zlib.DEFLATED, -15)
        return c.compress(data) + c.flush(zlib.Z_FINISH if last else zlib.Z_SYNC_FLUSH)

    def _work(self, i: int, data: bytes | memoryview, primer: bytes, last: bool) -> None:
        try:
            self._parts[i] = self._segment(data, primer, last)
        except BaseException as exc:  # noqa: BLE001 - handed to the caller (MemoryError)
            self._error = exc
        finally:
            self._slots.release()

    def finish(self) -> list[bytes]:
        self.close()
        if self._error is not None:
            raise self._error
        parts = self._parts
        assert all(p is not None for p in parts)
        return parts  # type: ignore[return-value]

    def close(self) -> None:
        for t in self._threads:
            t.join()
        self._threads.clear()


def _chunk(kind: bytes, data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))


def check_png_target(path: str | os.PathLike[str], label: str | None = None) -> str:
    """Refuse, before drawing, a name that is not ``.png`` or a target that is not a
    regular file (see :func:`engine.safeio.check_target`)."""
    return check_target(path, label, suffix=".png")


def save_png(
    surface: pygame.Surface,
    path: str | os.PathLike[str],
    label: str | None = None,
    *,
    any_name: bool = False,
) -> str:
    """Write ``surface`` to ``path`` as a PNG, whole or not at all; returns the path.

    The name must end in ``.png`` unless ``any_name`` (the API's ``render_to_file``
    writes a PNG whatever the name; the command line asks for ``FILE.png``).
    """
    check_target(path, label, suffix=None if any_name else ".png")  # before encoding
    return write_png(path, png_bytes(surface), label, any_name=any_name)
