"""pytmx: imported without pygame, and handed the pre-passed XML (tilesets inlined, tile
data stubbed out) to read the map's attributes, properties and tilesets for renderers."""

from __future__ import annotations

import sys
from types import ModuleType
from typing import Any
from xml.etree import ElementTree as ET

from engine.errors import MapError
from engine.tiled.common import fail


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


def parse_with_pytmx(path: str, root: ET.Element, image_loader: Any = None) -> Any:
    """pytmx's TiledMap of the pre-passed XML (with ``image_loader`` if given)."""
    pytmx = _pytmx()
    kwargs: dict[str, Any] = {"allow_duplicate_names": True}
    if image_loader is not None:
        kwargs["image_loader"] = image_loader
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
