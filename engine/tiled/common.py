"""What every step of the Tiled reader shares: limits, the one-line error, attribute and
custom-property reading."""

from __future__ import annotations

import math
from typing import Any
from xml.etree import ElementTree as ET

from engine.errors import MapError
from engine.sources import clip

#: Largest map we allocate; a file that declares more is refused before any allocation.
MAX_CELLS = 4096 * 4096
#: Most tiles in one tileset (an image cut into tiles, or a declared tilecount).
MAX_TILESET_TILES = 1 << 20
#: Most tile layers in a map (groups flattened).
MAX_LAYERS = 256
#: Most tile-layer cells of all layers together (every layer costs width x height x 4 bytes
#: of gids and more once split): two layers at the largest map size, or 32 of 1024 x 1024.
MAX_LAYER_CELLS = 2 * MAX_CELLS
#: Most chunks of an infinite map, all layers together.
MAX_CHUNKS = 1 << 18
#: Most XML elements in one file (about 330 bytes each once parsed): Tiled's XML tile
#: format is read up to about a million tiles; CSV and Base64 have no such cost.
MAX_XML_ELEMENTS = 1 << 20
#: Largest tile size, in pixels.
MAX_TILE_PIXELS = 4096
#: Largest layer offset (groups' offsets added), in pixels either way.
MAX_OFFSET_PIXELS = 1 << 24
ORIENTATIONS = ("orthogonal", "isometric", "hexagonal", "staggered")
FLAG_MASK = 0xF0000000
GID_MASK = 0x0FFFFFFF


def fail(path: str, problem: str, fix: str = "") -> MapError:
    """The reader's one error line: the file, the problem and what to change in Tiled."""
    return MapError(f"{path}: {problem}" + (f"; {fix}" if fix else ""))


def int_attr(path: str, el: ET.Element, name: str, default: int | None = None) -> int:
    """A whole-number attribute; missing without a default, or not whole, is an error."""
    raw = el.get(name)
    if raw is None:
        if default is None:
            raise fail(path, f"<{el.tag}> has no '{name}' attribute", "save it again from Tiled")
        return default
    try:
        value = float(raw)
    except ValueError:
        raise fail(path, f"<{el.tag}> {name}='{clip(raw)}' is not a number") from None
    if not value.is_integer():
        raise fail(path, f"<{el.tag}> {name}='{clip(raw)}' must be a whole number")
    if abs(value) > 0xFFFFFFFF:  # no Tiled number (a size, an id, a gid) is beyond 2**32
        raise fail(path, f"<{el.tag}> {name}='{clip(raw)}' is out of range")
    return int(value)


def float_attr(el: ET.Element, name: str, default: float = 0.0) -> float:
    """A lenient number (offsets, opacity): missing, not a number or not finite -> default."""
    raw = el.get(name)
    try:
        value = float(raw) if raw is not None else default
    except ValueError:
        return default
    return value if math.isfinite(value) else default


def geometry_attr(path: str, el: ET.Element, name: str) -> float:
    """An object's position, size or rotation: a finite number (0 when missing)."""
    raw = el.get(name)
    if raw is None:
        return 0.0
    try:
        value = float(raw)
    except ValueError:
        value = math.nan
    if not math.isfinite(value):
        raise fail(
            path,
            f"object {clip(el.get('id', '?'))} '{clip(el.get('name', ''))}' has {name}='{clip(raw)}'",
            "use a finite number: move or resize the object in Tiled",
        )
    return value


def layer_label(el: ET.Element) -> str:
    return f"layer '{clip(el.get('name', '?'))}'"


def bool_prop(el: ET.Element, name: str) -> bool | None:
    """A custom property read as a flag (None when the element does not set it)."""
    props = el.find("properties")
    if props is None:
        return None
    for p in props.findall("property"):
        if p.get("name") == name:
            raw = (p.get("value") or p.text or "").strip().lower()
            return raw not in ("false", "0", "no", "")
    return None


def _typed(value: str | None, ptype: str | None) -> Any:
    if value is None:
        return None
    if ptype == "int":
        number = float(value)
        if not math.isfinite(number):  # inf/nan stay text: int() of them would raise
            raise ValueError(value)
        return int(number)
    if ptype == "float":
        return float(value)
    if ptype == "bool":
        return value.strip().lower() == "true"
    return value


def properties(el: ET.Element) -> dict[str, Any]:
    """An element's custom properties, typed (a value that does not fit its type stays text)."""
    out: dict[str, Any] = {}
    props = el.find("properties")
    if props is None:
        return out
    for p in props.findall("property"):
        name = p.get("name")
        if name is None:
            continue
        try:
            out[name] = _typed(p.get("value", p.text), p.get("type"))
        except ValueError:
            out[name] = p.get("value", p.text)
    return out


#: Tiled's property types, and what a value of each must read as (Tiled writes ints,
#: floats and bools so; colours, files and strings are any text).
_PROPERTY_TYPES = ("string", "int", "float", "bool", "color", "file", "object")
_BOOL_STARTS = ("1", "y", "t", "-", "0", "n", "f")


def _fits(value: str | None, ptype: str) -> bool:
    if ptype in ("int", "object"):
        try:
            int(value)  # type: ignore[arg-type]
        except (TypeError, ValueError):
            return False
        return True
    if ptype == "float":
        try:
            float(value)  # type: ignore[arg-type]
        except (TypeError, ValueError):
            return False
        return True
    if ptype == "bool":
        text = str(value).strip().lower()
        return not text or text[0] in _BOOL_STARTS
    return True


def check_property_types(path: str, root: ET.Element) -> None:
    """Refuse a custom property whose value does not read as its declared type (an int of
    ``inf``, a float of ``x``) or whose type Tiled does not have: the renderer's pytmx
    cannot read such a map, so the engine does not take it either. Run after
    :func:`sanitise_properties` (class and list properties are gone by then)."""
    for props in root.iter("properties"):
        for p in props.findall("property"):
            ptype = p.get("type")
            if ptype is None:
                continue
            name = clip(p.get("name", "?"))
            if ptype not in _PROPERTY_TYPES:
                raise fail(
                    path,
                    f"property '{name}' has the type '{clip(ptype)}', which Tiled does not have",
                    f"use one of {', '.join(_PROPERTY_TYPES)}",
                )
            value = p.get("value")
            if not _fits(value, ptype):
                raise fail(
                    path,
                    f"property '{name}' of type {ptype} has the value '{clip(str(value))}'",
                    f"give it a{'n' if ptype == 'int' else ''} {ptype} value in Tiled",
                )


def sanitise_properties(root: ET.Element, notes: list[str]) -> None:
    """Drop class- and list-typed properties, which pytmx cannot parse and we never read."""
    dropped = 0
    for props in root.iter("properties"):
        for p in list(props):
            if p.tag == "property" and (
                p.get("type") in ("class", "list") or p.find("properties") is not None
            ):
                props.remove(p)
                dropped += 1
    if dropped:
        notes.append(f"{dropped} class- or list-typed custom properties ignored")
