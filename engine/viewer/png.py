"""Surfaces to PNG files: encoded in memory here, written by :mod:`engine.safeio`.

pygame writes a file itself without reporting a failed write (a full disk leaves a
truncated PNG and no error), and it picks the format from the name's extension (``.tga``
gives a TGA). So the viewer never hands pygame a file name: :func:`png_bytes` encodes to
memory as PNG, and :func:`save_png` passes the checked bytes to ``safeio.write_png``,
which writes them whole or not at all and only over a regular ``.png`` file.
"""

from __future__ import annotations

import io
import os

import pygame

from engine.errors import WriteError
from engine.safeio import check_target, write_png


def png_bytes(surface: pygame.Surface) -> bytes:
    """The surface encoded as a PNG, in memory (no file is touched)."""
    buf = io.BytesIO()
    try:
        pygame.image.save(surface, buf, "png")
    except pygame.error as exc:
        raise WriteError(f"the image could not be encoded as PNG ({exc})") from None
    return buf.getvalue()


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
