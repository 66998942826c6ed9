"""Reading files from disk: the one place the reader opens a .tmx, .tsx or .tx file and
parses its XML, and the PNG header peek for tileset image sizes."""

from __future__ import annotations

import struct
from xml.etree import ElementTree as ET

from engine.tiled.common import fail


def read_xml(path: str, what: str = "map") -> ET.Element:
    """Read and parse one XML file; every way it can fail is one :class:`MapError` line."""
    try:
        with open(path, "rb") as fh:
            data = fh.read()
    except FileNotFoundError:
        raise fail(path, f"{what} file not found", "check the path") from None
    except IsADirectoryError:
        raise fail(path, f"is a directory, not a {what} file") from None
    except OSError as exc:
        raise fail(path, f"cannot read {what} file ({exc.strerror})") from None
    except ValueError:  # a NUL byte in the path (possible only through the Python API)
        raise fail(path, f"not a usable {what} file name") from None
    if not data.strip():
        raise fail(path, f"{what} file is empty", "save it again from Tiled")
    try:
        return ET.fromstring(data)
    except (ET.ParseError, LookupError, ValueError) as exc:
        # LookupError/ValueError: an XML declaration naming an unknown or unusable encoding.
        raise fail(
            path,
            f"not a readable Tiled XML file ({exc})",
            "the file is truncated or not XML: save it again from Tiled as .tmx",
        ) from None


def png_size(path: str) -> tuple[int, int] | None:
    """A PNG's (width, height) from its header, or None for anything else."""
    try:
        with open(path, "rb") as fh:
            head = fh.read(24)
    except OSError:
        return None
    if head[:8] == b"\x89PNG\r\n\x1a\n" and head[12:16] == b"IHDR":
        w, h = struct.unpack(">II", head[16:24])
        return int(w), int(h)
    return None
