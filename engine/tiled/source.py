"""Reading files from disk: the one place the reader opens a map, tileset or template file
(Tiled's XML .tmx/.tsx/.tx, or its JSON .tmj/.tsj/.tj, turned into the same XML tree) and
parses it."""

from __future__ import annotations

import re
from xml.etree import ElementTree as ET

import engine.tiled.jsondoc as jsondoc
from engine.errors import MapError
from engine.sources import (
    MAX_DEPTH,
    MAX_MAP_BYTES,
    MAX_TILESET_BYTES,
    clip,
    load_json,
    read_bytes,
)
from engine.tiled.common import MAX_XML_ELEMENTS, fail


def read_document(path: str, what: str = "map", firstgid: str = "1") -> ET.Element:
    """Read a map, tileset or template file in either of Tiled's formats: XML as it is,
    JSON (told by its first character, whatever the file is named) converted to the same
    element tree, within the same limits. ``what``: ``map``, ``tileset`` or ``template``."""
    limit = MAX_MAP_BYTES if what == "map" else MAX_TILESET_BYTES
    data = read_bytes(path, what, limit, MapError)
    head = data[:64].lstrip(b"\xef\xbb\xbf \t\r\n")
    if not head.startswith((b"{", b"[")):
        return read_xml(path, what, data)
    if _json_objects(data) > MAX_XML_ELEMENTS:  # refused before json.loads makes them
        raise fail(
            path,
            f"has more than {MAX_XML_ELEMENTS} JSON objects (layers, objects, properties, "
            f"tiles); tacgrid reads at most {MAX_XML_ELEMENTS}",
            "split the map",
        )
    doc = load_json(data, clip(path, 200), MapError)
    if what == "map":
        root = jsondoc.map_from_json(path, doc)
    elif what == "tileset":
        root = jsondoc.tileset_from_json(path, doc, firstgid)
    else:
        root = jsondoc.template_from_json(path, doc)
    elements = sum(1 for _ in root.iter())
    if elements > MAX_XML_ELEMENTS:
        raise fail(
            path,
            f"has {elements} layers, objects and properties; tacgrid reads at most "
            f"{MAX_XML_ELEMENTS}",
            "split the map",
        )
    if _depth(root) > MAX_DEPTH:
        raise fail(path, f"nested deeper than {MAX_DEPTH} levels", "flatten its groups in Tiled")
    return root


#: For :func:`_json_objects`: a JSON string (its escapes included), a polygon's point
#: ``{"x": X, "y": Y}`` (the points are one element, and held to their own budget), or an
#: object's opening brace.
_NUMBER = rb"\s*-?[0-9][0-9.eE+-]*\s*"
_JSON_STRING_OR_BRACE = re.compile(
    rb'"(?:[^"\\]|\\.)*"|\{\s*"[xy]"\s*:' + _NUMBER + rb',\s*"[xy]"\s*:' + _NUMBER + rb"\}|\{"
)


def _json_objects(data: bytes, most: int = MAX_XML_ELEMENTS) -> int:
    """How many JSON objects (``{...}``) a document holds, counted in its bytes before
    it is parsed (braces inside strings and polygon points left out; counting stops past
    ``most``): every layer, object, property, chunk and tile of a Tiled
    JSON file is one and becomes an element, so a file of more is refused before
    ``json.loads`` builds them all. The braces alone are counted first: most files have
    fewer than the cap however counted."""
    braces = data.count(b"{")
    if braces <= most:
        return braces
    count = 0
    for m in _JSON_STRING_OR_BRACE.finditer(data):  # one match at a time: no copy made
        if m.end() - m.start() == 1:
            count += 1
            if count > most:
                break
    return count


def read_xml(path: str, what: str = "map", data: bytes | None = None) -> ET.Element:
    """Read and parse one XML file; every way it can fail is one :class:`MapError` line.

    Only a regular file is opened (never a FIFO or a device), of at most
    :data:`~engine.sources.MAX_MAP_BYTES` (maps) or ``MAX_TILESET_BYTES`` (tilesets,
    templates); entity declarations, more than :data:`MAX_XML_ELEMENTS` elements and
    nesting deeper than :data:`~engine.sources.MAX_DEPTH` are refused before anything
    walks the tree.
    """
    if data is None:
        limit = MAX_MAP_BYTES if what == "map" else MAX_TILESET_BYTES
        data = read_bytes(path, what, limit, MapError)
    if not data or data.isspace():  # (stripping copied the whole file first)
        raise fail(path, f"{what} file is empty", "save it again from Tiled")
    if b"<!ENTITY" in data:
        raise fail(
            path, "declares XML entities, which Tiled never writes", "save it again from Tiled"
        )
    # Every element opens with '<' and no closing tag does: a bound before parsing.
    elements = data.count(b"<") - data.count(b"</")
    if elements > MAX_XML_ELEMENTS:
        raise fail(
            path,
            f"has {elements} XML elements; tacgrid reads at most {MAX_XML_ELEMENTS}",
            "in Tiled choose CSV or Base64 as the Tile Layer Format (not XML)",
        )
    try:
        root = ET.fromstring(data)
    except (ET.ParseError, LookupError, ValueError) as exc:
        # LookupError/ValueError: an XML declaration naming an unknown or unusable encoding.
        raise fail(
            path,
            f"not a readable Tiled XML file ({clip(str(exc))})",
            "the file is truncated or not XML: save it again from Tiled as .tmx",
        ) from None
    if _depth(root) > MAX_DEPTH:
        raise fail(
            path, f"XML nested deeper than {MAX_DEPTH} levels", "flatten its groups in Tiled"
        )
    return root


def _depth(root: ET.Element) -> int:
    """Nesting depth of the elements that the reader and pytmx walk (layer data's tiles and
    chunks are only ever listed, never walked), without recursion."""
    deepest = 0
    stack = [(root, 1)]
    while stack:
        el, depth = stack.pop()
        deepest = max(deepest, depth)
        if deepest > MAX_DEPTH:
            break
        if el.tag != "data" and len(el):
            stack.extend((child, depth + 1) for child in el)
    return deepest
