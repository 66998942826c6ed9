"""Tiled worlds (``.world``): a JSON list of maps and where each lies, by file name or by
a pattern matched against the file names in the world's folder.

A map of a world is named by its file name without the extension; wherever a command
takes a map, ``WORLD.world#NAME`` loads that one (:func:`map_path`).
"""

from __future__ import annotations

import json
import os
import re
import select
import signal
import time
from dataclasses import dataclass
from typing import Any

from engine.errors import MapError
from engine.sources import MAX_TILESET_BYTES, clip, load_json, read_bytes
from engine.tiled.common import fail

#: Most maps a world lists (explicit and pattern-matched together).
MAX_WORLD_MAPS = 10_000
#: Most files of the world's folder matched against its patterns.
MAX_WORLD_FILES = 100_000
#: Longest pattern (``regexp``) read.
MAX_PATTERN_CHARS = 1000
#: Seconds the world's patterns may take to match its folder's file names, all together.
#: Python's regular expressions backtrack: ``(a+)+b`` takes 2**n steps on a name of n
#: ``a``s, and a match cannot be interrupted from the same process, so the matching runs
#: in a forked child that is killed at this bound.
MATCH_SECONDS = 3.0
#: Separates a world file from the name of one of its maps.
SEP = "#"


@dataclass(frozen=True)
class WorldMap:
    """One map of a world: its name, its file (absolute) and its pixel rectangle."""

    name: str
    file: str
    x: int
    y: int
    width: int
    height: int


def is_world(path: str) -> bool:
    return path.lower().endswith(".world")


def split_spec(spec: str) -> tuple[str, str] | None:
    """``(world, name)`` for ``WORLD.world#NAME``; None for any other path (a file whose
    name holds a ``#`` is itself, when it exists)."""
    if SEP not in spec or os.path.exists(spec):
        return None
    world, _, name = spec.rpartition(SEP)
    return (world, name) if is_world(world) else None


def map_path(spec: str) -> str:
    """The map file a command's MAP names: ``WORLD.world#NAME`` resolved, a bare
    ``WORLD.world`` refused in one line listing its maps, anything else as given."""
    split = split_spec(spec)
    if split is not None:
        world, name = split
        maps = read_world(world)
        for m in maps:
            if m.name == name:
                return m.file
        raise fail(
            world,
            f"the world has no map named '{clip(name)}'",
            "use one of: " + _names(maps),
        )
    if is_world(spec):
        maps = read_world(spec)
        raise fail(
            spec,
            f"is a Tiled world of {len(maps)} maps, not one map",
            f"name one as {clip(spec, 200)}{SEP}NAME: " + _names(maps),
        )
    return spec


def _names(maps: list[WorldMap]) -> str:
    names = ", ".join(m.name for m in maps[:20])
    return names + (f", ... ({len(maps)} in all)" if len(maps) > 20 else "") if maps else "none"


def read_world(path: str) -> list[WorldMap]:
    """The maps of a ``.world`` file: its ``maps`` first, then every file of its folder
    that one of its ``patterns`` matches (first pattern wins); one name once."""
    raw = read_bytes(path, "world", MAX_TILESET_BYTES, MapError)
    doc = load_json(raw, clip(path, 200), MapError)
    if not isinstance(doc, dict) or not isinstance(doc.get("maps", []), list):
        raise fail(path, "is not a Tiled world (a JSON object with 'maps')", "save it from Tiled")
    folder = os.path.dirname(os.path.abspath(path))
    out: dict[str, WorldMap] = {}
    for i, entry in enumerate(doc.get("maps", [])):
        if not isinstance(entry, dict) or not isinstance(entry.get("fileName"), str):
            raise fail(path, f"maps[{i}] has no 'fileName'", "save the world again from Tiled")
        file = entry["fileName"]
        x, y, w, h = (_number(path, entry, k) for k in ("x", "y", "width", "height"))
        _add(
            path,
            out,
            WorldMap(_name(file), os.path.normpath(os.path.join(folder, file)), x, y, w, h),
        )
    patterns = doc.get("patterns") or []
    if patterns:
        _match_patterns(path, folder, patterns, out)
    return list(out.values())


def _match_patterns(path: str, folder: str, patterns: Any, out: dict[str, WorldMap]) -> None:  # noqa: C901
    compiled = []
    for i, p in enumerate(patterns if isinstance(patterns, list) else []):
        rx = p.get("regexp") if isinstance(p, dict) else None
        if not isinstance(rx, str) or len(rx) > MAX_PATTERN_CHARS:
            raise fail(path, f"patterns[{i}] has no usable 'regexp'", "fix it in Tiled")
        try:
            regex = re.compile(rx)
        except re.error as exc:
            raise fail(path, f"patterns[{i}] regexp '{clip(rx)}' ({exc})") from None
        nums = [_number(path, p, k) for k in ("multiplierX", "multiplierY", "offsetX", "offsetY")]
        compiled.append((regex, nums))
    try:
        with os.scandir(folder) as it:
            files: list[str] = []
            for e in it:
                if len(files) >= MAX_WORLD_FILES:
                    break
                files.append(e.name)
    except OSError as exc:
        raise fail(path, f"cannot list the world's folder ({exc.strerror})") from None
    for file, index, groups in _bounded_matches(path, [rx for rx, _ in compiled], files):
        mx, my, ox, oy = compiled[index][1]
        try:
            gx, gy = int(groups[0]), int(groups[1])
        except (IndexError, ValueError):
            continue  # Tiled needs two numbers captured for the position
        full = os.path.join(folder, file)
        _add(path, out, WorldMap(_name(file), full, gx * mx + ox, gy * my + oy, 0, 0))


Match = tuple[str, int, list[str]]


def _matches(regexes: list[re.Pattern[str]], files: list[str]) -> list[Match]:
    """Each file name the first pattern that matches it whole, with its groups (those that
    took part); names no pattern matches are left out."""
    found: list[Match] = []
    for file in sorted(files):
        for index, regex in enumerate(regexes):
            m = regex.fullmatch(file)
            if m is not None:
                found.append((file, index, [g for g in m.groups() if g is not None]))
                break
    return found


def _bounded_matches(path: str, regexes: list[re.Pattern[str]], files: list[str]) -> list[Match]:
    """:func:`_matches` within :data:`MATCH_SECONDS`, or one line naming the world.

    The matching runs in a forked child that sends its answer as JSON down a pipe; the
    parent kills it at the bound. (Where there is no ``fork`` it runs here, unbounded.)"""
    if not hasattr(os, "fork"):  # pragma: no cover - not POSIX
        return _matches(regexes, files)
    rfd, wfd = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child (coverage does not follow it)
        status = 1
        try:
            os.close(rfd)
            data = json.dumps(_matches(regexes, files)).encode("utf-8")
            view = memoryview(data)
            while view:
                view = view[os.write(wfd, view) :]
            status = 0
        finally:
            os._exit(status)
    os.close(wfd)
    chunks: list[bytes] = []
    done = False
    try:
        deadline = time.monotonic() + MATCH_SECONDS
        while (left := deadline - time.monotonic()) > 0:
            ready, _, _ = select.select([rfd], [], [], left)
            if not ready:
                continue
            chunk = os.read(rfd, 1 << 16)
            if not chunk:
                done = True
                break
            chunks.append(chunk)
    finally:
        os.close(rfd)
        if not done:
            os.kill(pid, signal.SIGKILL)
        _, status = os.waitpid(pid, 0)
    if not done:
        raise fail(
            path,
            f"its patterns take more than {MATCH_SECONDS:g} s to match the file names of "
            "its folder (a pattern such as (a+)+ backtracks without end)",
            "write each pattern without a repeated group that itself repeats",
        )
    if status != 0:
        raise fail(path, "its patterns could not be matched against its folder's file names")
    return [(str(f), int(i), [str(g) for g in gs]) for f, i, gs in json.loads(b"".join(chunks))]


def _add(path: str, out: dict[str, WorldMap], m: WorldMap) -> None:
    if len(out) >= MAX_WORLD_MAPS:
        raise fail(path, f"lists more than {MAX_WORLD_MAPS} maps")
    out.setdefault(m.name, m)


def _name(file: str) -> str:
    return os.path.splitext(os.path.basename(file))[0]


def _number(path: str, entry: dict[str, Any], key: str) -> int:
    value = entry.get(key, 0)
    if isinstance(value, bool) or not isinstance(value, int | float) or abs(value) > 1 << 40:
        raise fail(path, f"'{key}' is {clip(repr(value), 30)}", "use a whole number of pixels")
    return int(value)
