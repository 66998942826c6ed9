"""Custom property types (Tiled 1.8+): class- and enum-typed properties resolved through
the ``propertyTypes`` of the Tiled project file (``*.tiled-project``, found beside the map
or in one of the two folders above it), or through the values the map itself embeds when there is none.

A property whose class is ``Terrain`` (any case) stands for its members: each becomes a
plain property of the same tile, object or layer (``move``, ``difficulty``, ``cost``, ...),
with the class's defaults for members the map does not set; a property set directly on the
element wins over a member of the same name. An enum stored as a number (``storageType``
``int``) becomes its value's name. Other class- and list-typed properties are left to
:func:`~engine.tiled.common.sanitise_properties` (dropped, with a note).
"""

from __future__ import annotations

import os
from typing import Any
from xml.etree import ElementTree as ET

from engine.errors import MapError
from engine.sources import MAX_TILESET_BYTES, clip, load_json, read_bytes
from engine.tiled.common import fail

#: The class whose members are a tile's (or region's) terrain properties.
TERRAIN_CLASS = "terrain"
#: Folders searched for a project file: the map's own and the two above it (a project's
#: maps sit in its folder or a subfolder or two; a project file further up belongs to
#: something else and is not read).
MAX_PROJECT_LEVELS = 3


def find_project(map_path: str) -> str | None:
    """The ``*.tiled-project`` beside the map or in the nearest of the two folders above it
    (the first by name where a folder holds several), or None."""
    folder = os.path.dirname(os.path.abspath(map_path))
    for _ in range(MAX_PROJECT_LEVELS):
        try:
            names = sorted(
                e.name
                for e in os.scandir(folder)
                if e.name.endswith(".tiled-project") and e.is_file()
            )
        except OSError:
            names = []
        if names:
            return os.path.join(folder, names[0])
        parent = os.path.dirname(folder)
        if parent == folder:
            return None
        folder = parent
    return None


class PropertyTypes:
    """The project's ``propertyTypes`` by name, read on first use."""

    def __init__(self, map_path: str) -> None:
        self.map_path = map_path
        self._types: dict[str, dict[str, Any]] | None = None
        self.source: str | None = None

    def get(self, name: str | None) -> dict[str, Any] | None:
        if not name:
            return None
        if self._types is None:
            self._types = self._load()
        return self._types.get(name) or self._types.get(name.lower())

    def _load(self) -> dict[str, dict[str, Any]]:
        path = find_project(self.map_path)
        if path is None:
            return {}
        self.source = path
        try:
            raw = read_bytes(path, "Tiled project", MAX_TILESET_BYTES, MapError)
            doc = load_json(raw, clip(path, 200), MapError)
        except MapError as exc:
            raise fail(self.map_path, f"project file: {exc}") from None
        types = doc.get("propertyTypes") if isinstance(doc, dict) else None
        out: dict[str, dict[str, Any]] = {}
        for i, t in enumerate(types if isinstance(types, list) else []):
            if isinstance(t, dict) and isinstance(t.get("name"), str):
                self._check(path, i, t)
                out.setdefault(t["name"], t)
                out.setdefault(t["name"].lower(), t)
        return out

    def _check(self, path: str, i: int, t: dict[str, Any]) -> None:
        """A property type holds each field the reader uses, of its kind (what Tiled
        writes): an enum's ``values`` a list of names, a class's ``members`` a list of
        mappings. One line naming the project file otherwise."""
        where = f"propertyTypes[{i}] '{clip(t['name'])}'"
        problem = ""
        if t.get("type") == "enum":
            values = t.get("values", [])
            if not isinstance(values, list) or not all(isinstance(v, str) for v in values):
                problem = "'values' is not a list of names"
            elif not isinstance(t.get("valuesAsFlags", False), bool):
                problem = "'valuesAsFlags' is not true or false"
        elif t.get("type") == "class":
            members = t.get("members", [])
            if not isinstance(members, list) or not all(isinstance(m, dict) for m in members):
                problem = "'members' is not a list of members"
        if problem:
            raise fail(
                self.map_path,
                f"project file {clip(path, 200)}: {where}: {problem}",
                "define the type again in Tiled's Custom Types Editor",
            )


def resolve_properties(path: str, root: ET.Element, notes: list[str]) -> None:
    """Expand ``Terrain`` class properties and name number-stored enum values, everywhere
    in ``root`` (map, layers, tilesets' tiles, objects)."""
    types = PropertyTypes(path)
    expanded = 0
    for props in list(root.iter("properties")):
        for p in list(props):
            if p.tag != "property":
                continue
            if p.get("type") == "class":
                if (p.get("propertytype") or "").lower() == TERRAIN_CLASS:
                    _expand(path, props, p, types)
                    expanded += 1
            else:
                _enum_value(path, p, types)
    if expanded and types.source:
        notes.append(f"Terrain class properties resolved with {clip(types.source, 200)}")


def _expand(path: str, props: ET.Element, prop: ET.Element, types: PropertyTypes) -> None:  # noqa: C901
    """A Terrain class property replaced by its members (defaults, then the map's values)."""
    values: dict[str, tuple[str, str]] = {}
    cls = types.get(prop.get("propertytype"))
    if cls is not None:
        if cls.get("type") != "class":
            raise fail(
                path,
                f"property '{clip(prop.get('name', '?'))}': the project's "
                f"'{clip(str(cls.get('name')))}' is not a class",
                "define Terrain as a class in Tiled's Custom Types Editor",
            )
        for m in cls.get("members") or []:
            if not isinstance(m, dict) or not isinstance(m.get("name"), str):
                continue
            mtype = str(m.get("type", "string"))
            if mtype in ("class", "list"):
                continue
            value = m.get("value")
            named = _enum_name(path, m.get("propertyType"), value, types)
            if named is not value:  # a number-stored enum: its name, as text
                mtype, value = "string", named
            if isinstance(value, bool):
                text = "true" if value else "false"
            else:
                text = "" if value is None else str(value)
            values[m["name"]] = (mtype, text)
    own = prop.find("properties")
    for sub in own.findall("property") if own is not None else []:
        name = sub.get("name")
        if name is None or sub.get("type") in ("class", "list"):
            continue
        if sub.get("propertytype") is None and name in values and sub.get("type") == "int":
            sub.set("propertytype", str(_member_enum(cls, name)))
        _enum_value(path, sub, types)
        values[name] = (sub.get("type", "string"), sub.get("value", sub.text or ""))
    taken = {p.get("name") for p in props.findall("property") if p is not prop}
    index = list(props).index(prop)
    props.remove(prop)
    for name, (mtype, text) in values.items():
        if name in taken:
            continue  # set on the element itself: that value wins
        el = ET.Element("property", name=name, value=text)
        if mtype not in ("string", "color", "file", "object"):
            el.set("type", mtype)
        props.insert(index, el)
        index += 1


def _member_enum(cls: dict[str, Any] | None, name: str) -> str:
    """The enum a class member holds ('' when none): the map's embedded values of a class
    name no property type, the project's class does."""
    for m in (cls or {}).get("members") or []:
        if isinstance(m, dict) and m.get("name") == name:
            return str(m.get("propertyType") or "")
    return ""


def _enum_value(path: str, p: ET.Element, types: PropertyTypes) -> None:
    """A number-stored enum value as its name (``type`` becomes string)."""
    ptt = p.get("propertytype")
    if not ptt or p.get("type") != "int":
        return
    value = p.get("value", "")
    name = _enum_name(path, ptt, value, types)
    if name is not value:
        p.set("value", str(name))
        p.attrib.pop("type", None)


def _enum_name(path: str, ptt: Any, value: Any, types: PropertyTypes) -> Any:
    """An enum's value for a stored number, or ``value`` itself when it is no such enum."""
    if not isinstance(ptt, str) or not ptt:
        return value
    enum = types.get(ptt)
    if enum is None or enum.get("type") != "enum" or enum.get("storageType") != "int":
        return value
    names = enum.get("values") or []
    try:
        number = int(str(value))
    except ValueError:
        return value
    if enum.get("valuesAsFlags"):
        return ",".join(str(n) for i, n in enumerate(names) if number >> i & 1)
    if not 0 <= number < len(names):
        raise fail(
            path,
            f"enum '{clip(ptt)}' value {number} is not one of its {len(names)} values",
            "pick the value again in Tiled",
        )
    return str(names[number])
