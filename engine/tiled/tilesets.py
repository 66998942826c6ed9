"""Tilesets: external ones (.tsx, or .tsj/.json converted to XML) inlined into the map,
image paths made relative to it, sizes checked, and what the terrain step needs from them
(each tileset's gid range and each tile's custom properties)."""

from __future__ import annotations

import os
from typing import Any
from xml.etree import ElementTree as ET

import engine.tiled.source as source
from engine.errors import MapError
from engine.sources import clip, picture_check
from engine.tiled.common import (
    GID_MASK,
    MAX_TILE_PIXELS,
    MAX_TILESET_TILES,
    fail,
    float_attr,
    int_attr,
    properties,
)


def inline_tilesets(path: str, root: ET.Element, missing_images: str, notes: list[str]) -> None:
    """Replace every <tileset> of the map with a self-contained one, so that pytmx and the
    reader see the same thing."""
    for i, child in enumerate(list(root)):
        if child.tag == "tileset":
            inlined = inline_tileset(path, child, missing_images, notes)
            if inlined is not child:
                root[i] = inlined  # its properties are resolved with the map's


def inline_tileset(
    map_path: str, ts: ET.Element, missing_images: str = "error", notes: list[str] | None = None
) -> ET.Element:
    """Return a self-contained <tileset> (external ones loaded, paths relative to the map).

    A missing image is an error, or with ``missing_images="skip"`` a note (the renderer
    then draws those cells in terrain colours).
    """
    notes = notes if notes is not None else []
    ts_source = ts.get("source")
    map_dir = os.path.dirname(os.path.abspath(map_path))
    if not ts_source:
        base_dir, out = map_dir, ts
    else:
        base_dir, out = _load_external(map_path, map_dir, ts_source, ts.get("firstgid", "1"))
    name = out.get("name", ts_source or "?")
    _relink_images(map_path, out, name, base_dir, map_dir, missing_images, notes)
    for tile in out.iter("tile"):
        # Tiled 1.10 writes a tile's class as `class`; pytmx only knows `type`.
        if tile.get("class") is not None:
            tile.set("type", tile.attrib.pop("class"))
    _check_tileset(map_path, out, name)
    return out


def _load_external(
    map_path: str, map_dir: str, ts_source: str, firstgid: str
) -> tuple[str, ET.Element]:
    """An external tileset file as a <tileset> element, and the folder its paths start in."""
    ts_path = os.path.normpath(os.path.join(map_dir, ts_source))
    name = clip(ts_source)
    if not os.path.exists(ts_path):
        raise fail(
            map_path,
            f"tileset '{name}' not found (looked at {clip(ts_path)})",
            "put the tileset file there, or re-link it in Tiled (Map > Replace Tileset)",
        )
    try:  # .tsx, or .tsj/.json (told by its content) converted to the same XML
        out = source.read_document(ts_path, "tileset", firstgid)
    except MapError as exc:
        raise fail(map_path, f"tileset '{name}': {exc}") from None
    if out.tag != "tileset":
        raise fail(map_path, f"tileset '{name}' is a <{clip(out.tag)}>, not a <tileset>")
    out.set("firstgid", firstgid)
    return os.path.dirname(ts_path), out


def _relink_images(
    map_path: str,
    out: ET.Element,
    name: str,
    base_dir: str,
    map_dir: str,
    missing_images: str,
    notes: list[str],
) -> None:
    """Image paths become relative to the map, as pytmx and renderers expect."""
    for parent in list(out.iter()):
        for img in list(parent.findall("image")):
            src = img.get("source")
            if not src:
                continue
            abs_src = os.path.normpath(os.path.join(base_dir, src))
            # Only a regular file is ever opened (a FIFO would hang, /dev/zero never end);
            # its size is read from its header, so a huge image is refused unloaded.
            problem, size = _image_problem(abs_src)
            if problem:
                if missing_images == "error":
                    raise fail(
                        map_path,
                        f"tileset '{clip(name)}' image '{clip(src)}' {problem}",
                        "put the image there, or fix the tileset's image in Tiled",
                    )
                # Headless work and the viewer go on: the cells draw in terrain colours.
                parent.remove(img)
                notes.append(
                    f"tileset '{clip(name)}' image '{clip(src)}' {problem}: "
                    "drawn in terrain colours"
                )
                continue
            img.set("source", os.path.relpath(abs_src, map_dir))
            # Tiled uses the image's real size; the file's width/height are only a note
            # (and pytmx loops over every tile they imply).
            if size is not None:
                img.set("width", str(size[0]))
                img.set("height", str(size[1]))


def _image_problem(abs_src: str) -> tuple[str, tuple[int, int] | None]:
    """Why an image cannot be used ('' when it can), and its size: missing, not a regular
    file, or not a picture whose header (:func:`engine.sources.picture_size`) says it
    decodes to at most :data:`~engine.sources.MAX_PICTURE_PIXELS` pixels."""
    if not os.path.exists(abs_src):
        return f"not found (looked at {clip(abs_src)})", None
    return picture_check(abs_src)


def _check_tileset(path: str, ts: ET.Element, name: str) -> None:
    """Refuse tileset numbers that would make pytmx loop (or allocate) without end."""
    label = f"tileset '{clip(name)}'"
    firstgid = int_attr(path, ts, "firstgid", 1)
    if not 1 <= firstgid <= GID_MASK:
        raise fail(path, f"{label} has firstgid {firstgid}", "re-add the tileset in Tiled")
    numbers = {
        k: int_attr(path, ts, k, 0) for k in ("tilewidth", "tileheight", "spacing", "margin")
    }
    count = int_attr(path, ts, "tilecount", 0)
    if min(numbers.values()) < 0 or not 0 <= count <= MAX_TILESET_TILES:
        raise fail(
            path,
            f"{label} has "
            + ", ".join(f"{k}={v}" for k, v in {**numbers, "tilecount": count}.items()),
            "fix the tileset in Tiled (Tileset > Tileset Properties)",
        )
    img = ts.find("image")
    if img is None or not img.get("source"):
        return
    tw, th = numbers["tilewidth"], numbers["tileheight"]
    iw, ih = int_attr(path, img, "width", 0), int_attr(path, img, "height", 0)
    if not (0 < tw <= MAX_TILE_PIXELS and 0 < th <= MAX_TILE_PIXELS) or iw < 0 or ih < 0:
        raise fail(
            path,
            f"{label} has tiles of {tw}x{th} px in an image of {iw}x{ih} px",
            "fix the tile size in Tiled (Tileset > Tileset Properties)",
        )
    # As pytmx counts them when it cuts the image into tiles.
    m, sp = numbers["margin"], numbers["spacing"]
    tiles = len(range(m, ih + m - th + 1, th + sp)) * len(range(m, iw + m - tw + 1, tw + sp))
    if tiles > MAX_TILESET_TILES:
        raise fail(
            path,
            f"{label} cuts its {iw}x{ih} px image into {tiles} tiles; "
            f"tacgrid reads at most {MAX_TILESET_TILES}",
            "use larger tiles or a smaller image",
        )


def tile_properties(path: str, root: ET.Element) -> dict[int, dict[str, Any]]:
    """Each tile's custom properties (and class, as ``type``) by Tiled gid.

    Read straight from the tilesets: pytmx mixes a tile's image width and height into the
    same dict as its custom properties, which clashes with `height`.
    """
    out: dict[int, dict[str, Any]] = {}
    for ts in root.findall("tileset"):
        first = int_attr(path, ts, "firstgid", 1)
        for tile in ts.findall("tile"):
            props = properties(tile)
            cls = tile.get("type") or tile.get("class")
            if cls:
                props.setdefault("type", cls)
            if props:
                out[first + int_attr(path, tile, "id", 0)] = props
    return out


def tileset_ranges(path: str, root: ET.Element) -> list[tuple[int, int]]:
    """(firstgid, end) per tileset, end exclusive (None-sized tilesets are open-ended)."""
    out = []
    for ts in root.findall("tileset"):
        first = int_attr(path, ts, "firstgid", 1)
        count = ts.get("tilecount")
        if count is not None:
            n = int_attr(path, ts, "tilecount")
        else:
            tiles = [int_attr(path, t, "id", 0) for t in ts.findall("tile")]
            img = ts.find("image")
            twid = int_attr(path, ts, "tilewidth", 0)
            thei = int_attr(path, ts, "tileheight", 0)
            n = max(tiles, default=-1) + 1
            if img is not None and twid > 0 and thei > 0:
                iw = int(float_attr(img, "width"))
                ih = int(float_attr(img, "height"))
                n = max(n, (iw // twid) * (ih // thei))
        out.append((first, first + max(n, 0)))
    return out
