"""pytmx: imported without pygame, and handed the pre-passed XML (tilesets inlined, tile
data stubbed out) to read the map's attributes, properties and tilesets for renderers.

pytmx opens files of its own: a ``<tileset source>`` (which it parses with ElementTree)
and, through the image loader, every tileset image, image layer and tile image, and any
tile property named ``source``. None of these reaches pytmx unchecked: a tileset that
still names a file is refused (the reader inlines every tileset; a ``source`` left is one
nested in an external tileset), and the loader pytmx calls is wrapped so that each path
it is given is read through :func:`engine.sources.picture_check` (a regular file within
the size cap, a format whose header is read, at most ``MAX_PICTURE_PIXELS``) and all of
one map's pictures together stay within :data:`MAP_PICTURE_PIXELS`, before the real
loader opens it.
"""

from __future__ import annotations

import os
import sys
from types import ModuleType
from typing import Any
from xml.etree import ElementTree as ET

from engine.errors import MapError
from engine.sources import MAX_PICTURE_PIXELS, clip, picture_check
from engine.tiled.common import fail

#: Most pixels all the pictures of one map decode to together (two 8192 x 8192 pictures,
#: 512 MB as 32-bit pixels).
MAP_PICTURE_PIXELS = 2 * MAX_PICTURE_PIXELS


def _pytmx() -> ModuleType:
    """Import pytmx without letting it import pygame (the engine stays headless).

    pytmx's package import pulls in its pygame helpers; with pygame hidden they fail
    quietly and are dropped again, so the viewer can still import them properly later.
    """
    mod = sys.modules.get("pytmx")
    if mod is not None:
        return mod
    if "pygame" in sys.modules:
        import pytmx

        return pytmx
    import logging  # here: a map read that skips pytmx (info, path, reach) needs none

    log = logging.getLogger("pytmx.util_pygame")
    was_disabled = log.disabled
    log.disabled = True
    sys.modules["pygame"] = None  # type: ignore[assignment]
    try:
        import pytmx
    finally:
        del sys.modules["pygame"]
        log.disabled = was_disabled
    sys.modules.pop("pytmx.util_pygame", None)
    pytmx.__dict__.pop("util_pygame", None)
    pytmx.__dict__.pop("load_pygame", None)
    return pytmx


def parse_with_pytmx(
    path: str,
    root: ET.Element,
    image_loader: Any = None,
    missing_images: str = "error",
    notes: list[str] | None = None,
) -> Any:
    """pytmx's TiledMap of the pre-passed XML (with ``image_loader`` if given, each path
    checked first: a bad picture is an error, or with ``missing_images="skip"`` a note and
    no image)."""
    for ts in root.iter("tileset"):
        if ts.get("source"):
            raise fail(
                path,
                f"tileset '{clip(ts.get('name') or '?')}' refers to another tileset file "
                f"'{clip(ts.get('source'))}', which Tiled never writes",
                "open the tileset in Tiled and save it again",
            )
    pytmx = _pytmx()
    _quiet_pytmx()
    kwargs: dict[str, Any] = {"allow_duplicate_names": True}
    if image_loader is not None:
        kwargs["image_loader"] = _CheckedLoader(path, image_loader, missing_images, notes)
    tm = pytmx.TiledMap(**kwargs)
    tm.filename = path
    try:
        tm.parse_xml(root)
    except MapError:
        raise
    except FileNotFoundError as exc:
        raise fail(
            path, f"an image cannot be opened ({exc.filename})", "fix the image path in Tiled"
        ) from None
    except Exception as exc:  # pytmx raises bare Exception/ValueError/TypeError/KeyError
        raise fail(
            path,
            f"pytmx cannot read this map ({type(exc).__name__}: {exc or 'no detail'})",
            "save it again from Tiled with CSV or Base64 layers",
        ) from None
    finally:
        pytmx.TiledElement.allow_duplicate_names = False
    return tm


def _quiet_pytmx() -> None:
    """pytmx logs an error before it raises one: kept off standard error (Python's
    last-resort handler printed it), so the reader's own line says it once."""
    import logging

    quiet = logging.getLogger("pytmx")
    if not any(isinstance(h, logging.NullHandler) for h in quiet.handlers):
        quiet.addHandler(logging.NullHandler())
    quiet.propagate = False


class _CheckedLoader:
    """pytmx's image loader behind a gate: the path pytmx is about to open is checked by
    the one picture reader first, and the map's pictures share a pixel budget."""

    def __init__(self, path: str, inner: Any, missing_images: str, notes: list[str] | None) -> None:
        self.path = path
        self.inner = inner
        self.skip = missing_images == "skip"
        self.notes = notes if notes is not None else []
        self.sizes: dict[str, int] = {}

    def __call__(self, filename: str, colorkey: Any = None, **kw: Any) -> Any:
        key = os.path.realpath(filename)
        if key not in self.sizes:
            problem, size = picture_check(filename)
            pixels = size[0] * size[1] if size else 0
            spent = sum(self.sizes.values())
            if not problem and spent + pixels > MAP_PICTURE_PIXELS:
                problem = (
                    f"would take the map's pictures past {MAP_PICTURE_PIXELS} pixels in all "
                    f"(two 8192 x 8192 pictures; {spent} already)"
                )
            if problem:
                name = clip(os.path.relpath(filename, os.path.dirname(os.path.abspath(self.path))))
                if not self.skip:
                    raise fail(
                        self.path, f"image '{name}' {problem}", "fix the image path in Tiled"
                    )
                self.notes.append(f"image '{name}' {problem}: drawn without it")
                return _nothing
            self.sizes[key] = pixels
        return self.inner(filename, colorkey, **kw)


def _nothing(*_: Any, **__: Any) -> None:
    return None
