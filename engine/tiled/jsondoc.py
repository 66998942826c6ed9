"""Tiled JSON (.tmj/.json maps, .tsj tilesets, .tj templates) turned into the XML element
tree that Tiled's .tmx/.tsx/.tx formats hold, so that every later step of the reader (and
pytmx, and the renderer) sees one format.

Only what Tiled writes is converted; a value of the wrong JSON kind (a list where a number
belongs, a number too large for any Tiled field) stops with one line naming the file.
Tile layer data given as a list of gids is checked (whole numbers, 0 to 2**32 - 1) and
handed on as uncompressed base64, which the layer-data step decodes.
"""

from __future__ import annotations

import base64
import math
import sys
from array import array
from typing import Any
from xml.etree import ElementTree as ET

from engine.cells import U32
from engine.errors import MapError
from engine.sources import clip
from engine.tiled.common import MAX_LAYER_CELLS, fail

#: Largest whole number any Tiled field holds (gids with their flag bits are below 2**32).
_MAX_NUMBER = 1 << 53

#: Layer types Tiled writes, and the XML element each becomes.
_LAYER_TAGS = {
    "tilelayer": "layer",
    "objectgroup": "objectgroup",
    "imagelayer": "imagelayer",
    "group": "group",
}


class _Bad(Exception):
    """A JSON value of the wrong kind, with what was wrong."""


def _scalar(value: Any, key: str) -> str:
    """A JSON scalar as an XML attribute value (bools as 1/0, as the .tmx writes them)."""
    if isinstance(value, bool):
        return "1" if value else "0"
    if isinstance(value, int):
        if abs(value) > _MAX_NUMBER:
            raise _Bad(f"'{clip(key)}' is {clip(str(value), 30)}, out of range")
        return str(value)
    if isinstance(value, float):
        if not math.isfinite(value) or abs(value) > _MAX_NUMBER:
            raise _Bad(f"'{clip(key)}' is {clip(repr(value), 30)}, out of range")
        return str(int(value)) if value.is_integer() else repr(value)
    if isinstance(value, str):
        return value
    raise _Bad(f"'{clip(key)}' is a JSON {type(value).__name__}, not a single value")


def _copy(el: ET.Element, data: dict[str, Any], keys: tuple[str, ...]) -> None:
    for key in keys:
        value = data.get(key)
        if value is not None:
            el.set(key, _scalar(value, key))


def _obj(value: Any, what: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise _Bad(f"{what} is not a JSON object")
    return value


def _list(value: Any, what: str) -> list[Any]:
    if value is None:
        return []
    if not isinstance(value, list):
        raise _Bad(f"{what} is not a JSON list")
    return value


def _convert(path: str, what: str, build: Any, data: Any, *args: Any) -> ET.Element:
    """Run one conversion; a value of the wrong kind is one :class:`MapError` line."""
    try:
        return build(data, *args)
    except MapError:
        raise
    except _Bad as exc:
        raise fail(
            path, f"not a usable Tiled JSON {what}: {exc}", "save it again from Tiled"
        ) from None
    except (AttributeError, TypeError, ValueError, KeyError, OverflowError) as exc:
        raise fail(
            path,
            f"not a usable Tiled JSON {what} ({type(exc).__name__}: {clip(str(exc))})",
            "save it again from Tiled",
        ) from None


# --------------------------------------------------------------------------- properties


def add_properties(el: ET.Element, props: Any) -> None:
    """Tiled JSON custom properties as a <properties> child (class values nested, as the
    .tmx writes them)."""
    items = _list(props, "'properties'")
    if not items:
        return
    node = ET.SubElement(el, "properties")
    for p in items:
        p = _obj(p, "a property")
        name = p.get("name")
        if not isinstance(name, str):
            raise _Bad("a property has no name")
        ptype = p.get("type", "string")
        if not isinstance(ptype, str):
            raise _Bad(f"property '{clip(name)}' has a type that is not text")
        prop = ET.SubElement(node, "property", name=name)
        if ptype != "string":
            prop.set("type", ptype)
        ptt = p.get("propertytype", p.get("propertyType"))
        if isinstance(ptt, str) and ptt:
            prop.set("propertytype", ptt)
        _property_value(prop, ptype, p.get("value"))


def _property_value(prop: ET.Element, ptype: str, value: Any) -> None:
    if ptype == "class" or isinstance(value, dict):
        prop.set("type", "class")
        members = _obj(value if value is not None else {}, f"class property '{prop.get('name')}'")
        if members:
            node = ET.SubElement(prop, "properties")
            for name, member in members.items():
                sub = ET.SubElement(node, "property", name=str(name))
                mtype = _json_type(member)
                if mtype != "string":
                    sub.set("type", mtype)
                _property_value(sub, mtype, member)
        return
    if ptype == "list" or isinstance(value, list):
        prop.set("type", "list")  # never read (sanitise_properties drops it)
        return
    if value is None:
        prop.set("value", "")
    elif isinstance(value, bool):
        prop.set("value", "true" if value else "false")
    else:
        prop.set("value", _scalar(value, str(prop.get("name"))))


def _json_type(value: Any) -> str:
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int):
        return "int"
    if isinstance(value, float):
        return "float"
    if isinstance(value, dict):
        return "class"
    if isinstance(value, list):
        return "list"
    return "string"


# --------------------------------------------------------------------------- maps


def map_from_json(path: str, data: Any) -> ET.Element:
    """A Tiled JSON map as the <map> element a .tmx file parses to."""
    if not isinstance(data, dict):
        raise fail(path, "is not a Tiled JSON map (not a JSON object)", "open a .tmj map")
    kind = data.get("type", "map")
    if kind != "map":
        raise fail(
            path,
            f"is a Tiled JSON '{clip(str(kind))}' file, not a map",
            "open a .tmj map (a tileset or template is used by a map)",
        )
    if "layers" not in data and "tilesets" not in data:
        raise fail(path, "is not a Tiled JSON map (no layers, no tilesets)", "open a .tmj map")
    return _convert(path, "map", _map, data)


def _map(data: dict[str, Any]) -> ET.Element:
    root = ET.Element("map")
    _copy(
        root,
        data,
        (
            "version",
            "tiledversion",
            "class",
            "orientation",
            "renderorder",
            "compressionlevel",
            "width",
            "height",
            "tilewidth",
            "tileheight",
            "hexsidelength",
            "staggeraxis",
            "staggerindex",
            "parallaxoriginx",
            "parallaxoriginy",
            "backgroundcolor",
            "nextlayerid",
            "nextobjectid",
        ),
    )
    root.set("infinite", "1" if data.get("infinite") else "0")
    add_properties(root, data.get("properties"))
    for ts in _list(data.get("tilesets"), "'tilesets'"):
        ts = _obj(ts, "a tileset")
        if ts.get("source") is not None:
            el = ET.SubElement(root, "tileset")
            _copy(el, ts, ("firstgid", "source"))
        else:
            root.append(_tileset(ts, ts.get("firstgid", 1)))
    budget = [MAX_LAYER_CELLS]
    _layers(root, data.get("layers"), budget)
    return root


def _layers(parent: ET.Element, layers: Any, budget: list[int]) -> None:
    for lay in _list(layers, "'layers'"):
        lay = _obj(lay, "a layer")
        tag = _LAYER_TAGS.get(lay.get("type"))  # type: ignore[arg-type]
        if tag is None:  # Tiled itself refuses such a file
            raise _Bad(
                f"layer '{clip(str(lay.get('name', '?')))}' has unknown type "
                f"'{clip(str(lay.get('type')))}' (tilelayer, objectgroup, imagelayer or group)"
            )
        el = ET.SubElement(parent, tag)
        _copy(
            el,
            lay,
            (
                "id",
                "name",
                "class",
                "opacity",
                "tintcolor",
                "offsetx",
                "offsety",
                "parallaxx",
                "parallaxy",
            ),
        )
        if lay.get("visible") is False:
            el.set("visible", "0")
        if lay.get("locked"):
            el.set("locked", "1")
        add_properties(el, lay.get("properties"))
        if tag == "layer":
            _tile_layer(el, lay, budget)
        elif tag == "objectgroup":
            _copy(el, lay, ("color", "draworder"))
            for obj in _list(lay.get("objects"), "'objects'"):
                el.append(object_from_json(_obj(obj, "an object")))
        elif tag == "imagelayer":
            _copy(el, lay, ("repeatx", "repeaty"))
            if lay.get("image"):
                img = ET.SubElement(el, "image", source=_scalar(lay["image"], "image"))
                _trans(img, lay)
                _size(img, lay)
        else:
            _layers(el, lay.get("layers"), budget)


def _tile_layer(el: ET.Element, lay: dict[str, Any], budget: list[int]) -> None:
    _copy(el, lay, ("width", "height"))
    data = ET.SubElement(el, "data")
    encoding = lay.get("encoding", "csv")
    compression = lay.get("compression") or None
    chunks = lay.get("chunks")
    if chunks is not None:
        for ch in _list(chunks, "'chunks'"):
            ch = _obj(ch, "a chunk")
            chunk = ET.SubElement(data, "chunk")
            _copy(chunk, ch, ("x", "y", "width", "height"))
            _gids(chunk, ch.get("data"), encoding, compression, budget)
        _move_encoding(data, list(data))
        return
    if "data" in lay:
        _gids(data, lay["data"], encoding, compression, budget)
    else:
        el.remove(data)  # an empty layer, as the .tmx path reads one without <data>


def _move_encoding(data: ET.Element, chunks: list[ET.Element]) -> None:
    """Chunks of one layer share their encoding, which the layer-data step reads from <data>."""
    if chunks:
        for attr in ("encoding", "compression"):
            value = chunks[0].get(attr)
            if value is not None:
                data.set(attr, value)


def _gids(el: ET.Element, value: Any, encoding: Any, compression: Any, budget: list[int]) -> None:
    """Tile data onto a <data> or <chunk>: a base64 string as given, a list of gids checked
    and written as uncompressed base64."""
    if isinstance(value, str):
        if encoding != "base64":
            raise _Bad(f"tile data is text but the layer's encoding is '{clip(str(encoding))}'")
        el.set("encoding", "base64")
        if compression:
            el.set("compression", _scalar(compression, "compression"))
        el.text = value
        return
    items = _list(value, "a layer's 'data'")
    budget[0] -= len(items)
    if budget[0] < 0:
        raise _Bad(f"tile data of more than {MAX_LAYER_CELLS} cells in all layers together")
    if items:
        if not all(type(v) is int for v in items):
            bad = next(v for v in items if type(v) is not int)
            raise _Bad(f"tile data holds {clip(repr(bad), 30)}, not a whole-number tile id")
        if min(items) < 0 or max(items) > 0xFFFFFFFF:
            raise _Bad("tile ids out of range (0 to 4294967295)")
        gids = array(U32, items)
        if sys.byteorder == "big":  # base64 gids are little-endian
            gids.byteswap()
        raw = gids.tobytes()
    else:
        raw = b""
    el.set("encoding", "base64")
    el.text = base64.b64encode(raw).decode("ascii")


def object_from_json(obj: dict[str, Any]) -> ET.Element:
    """One Tiled JSON object as an <object> (only the keys it has: a template fills the rest)."""
    el = ET.Element("object")
    _copy(el, obj, ("id", "name", "x", "y", "width", "height", "rotation", "gid", "template"))
    cls = obj.get("class") or obj.get("type")
    if cls:
        el.set("type", _scalar(cls, "type"))
    if obj.get("visible") is False:
        el.set("visible", "0")
    add_properties(el, obj.get("properties"))
    if obj.get("ellipse"):
        ET.SubElement(el, "ellipse")
    elif obj.get("point"):
        ET.SubElement(el, "point")
    elif obj.get("polygon") is not None or obj.get("polyline") is not None:
        tag = "polygon" if obj.get("polygon") is not None else "polyline"
        pts = []
        for pt in _list(obj.get(tag), f"'{tag}'"):
            pt = _obj(pt, "a point")
            pts.append(f"{_scalar(pt.get('x', 0), 'x')},{_scalar(pt.get('y', 0), 'y')}")
        ET.SubElement(el, tag, points=" ".join(pts))
    elif isinstance(obj.get("text"), dict):
        text = obj["text"]
        sub = ET.SubElement(el, "text")
        _copy(sub, text, ("fontfamily", "pixelsize", "wrap", "color", "bold", "italic"))
        _copy(sub, text, ("underline", "strikeout", "kerning", "halign", "valign"))
        sub.text = _scalar(text.get("text", ""), "text")
    return el


# --------------------------------------------------------------------------- tilesets


def tileset_from_json(path: str, data: Any, firstgid: str) -> ET.Element:
    """A Tiled JSON tileset (.tsj/.json) as the <tileset> element a .tsx parses to."""
    if not isinstance(data, dict):
        raise fail(path, "is not a Tiled JSON tileset (not a JSON object)")
    kind = data.get("type", "tileset")
    if kind != "tileset":
        raise fail(path, f"is a Tiled JSON '{clip(str(kind))}' file, not a tileset")
    return _convert(path, "tileset", _tileset, data, firstgid)


def _tileset(data: dict[str, Any], firstgid: Any) -> ET.Element:
    ts = ET.Element("tileset", firstgid=_scalar(firstgid, "firstgid"))
    _copy(
        ts,
        data,
        (
            "name",
            "class",
            "tilewidth",
            "tileheight",
            "spacing",
            "margin",
            "tilecount",
            "columns",
            "objectalignment",
            "tilerendersize",
            "fillmode",
        ),
    )
    offset = data.get("tileoffset")
    if offset is not None:
        offset = _obj(offset, "'tileoffset'")
        ET.SubElement(
            ts,
            "tileoffset",
            x=_scalar(offset.get("x", 0), "x"),
            y=_scalar(offset.get("y", 0), "y"),
        )
    grid = data.get("grid")
    if isinstance(grid, dict):
        g = ET.SubElement(ts, "grid")
        _copy(g, grid, ("orientation", "width", "height"))
    add_properties(ts, data.get("properties"))
    if data.get("image"):
        img = ET.SubElement(ts, "image", source=_scalar(data["image"], "image"))
        _trans(img, data)
        _size(img, data)
    for tile in _list(data.get("tiles"), "'tiles'"):
        tile = _obj(tile, "a tile")
        t = ET.SubElement(ts, "tile")
        _copy(t, tile, ("id", "probability", "x", "y", "width", "height"))
        if t.get("id") is None:
            t.set("id", "0")
        cls = tile.get("class") or tile.get("type")
        if cls:
            t.set("type", _scalar(cls, "type"))
        add_properties(t, tile.get("properties"))
        if tile.get("image"):
            img = ET.SubElement(t, "image", source=_scalar(tile["image"], "image"))
            _trans(img, tile)
            _size(img, tile)
        frames = _list(tile.get("animation"), "'animation'")
        if frames:
            anim = ET.SubElement(t, "animation")
            for fr in frames:
                fr = _obj(fr, "an animation frame")
                f = ET.SubElement(anim, "frame")
                _copy(f, fr, ("tileid", "duration"))
    return ts


def _trans(img: ET.Element, data: dict[str, Any]) -> None:
    trans = data.get("transparentcolor")
    if trans:
        img.set("trans", _scalar(trans, "transparentcolor").lstrip("#"))


def _size(img: ET.Element, data: dict[str, Any]) -> None:
    for key, attr in (("imagewidth", "width"), ("imageheight", "height")):
        if data.get(key) is not None:
            img.set(attr, _scalar(data[key], key))


# --------------------------------------------------------------------------- templates


def template_from_json(path: str, data: Any) -> ET.Element:
    """A Tiled JSON template (.tj) as the <template> element a .tx parses to."""
    if not isinstance(data, dict) or not isinstance(data.get("object"), dict):
        raise fail(path, "is not a Tiled JSON template (no 'object')")
    return _convert(path, "template", _template, data)


def _template(data: dict[str, Any]) -> ET.Element:
    out = ET.Element("template")
    ts = data.get("tileset")
    if isinstance(ts, dict):
        el = ET.SubElement(out, "tileset")
        _copy(el, ts, ("firstgid", "source"))
    out.append(object_from_json(data["object"]))
    return out
