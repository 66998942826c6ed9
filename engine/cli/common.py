"""What every command shares: the parser class, argument types, JSON output, rule systems
from ``--system``/``--set``, and the check of an output file before any work starts."""

from __future__ import annotations

import argparse
import os
import sys
from fractions import Fraction
from typing import Any, NoReturn

from engine.errors import ArgumentError, printable
from engine.report import json_chunks

#: The flag that names each argument role an engine message names (engine.errors:
#: TacgridError.role, Wording).
FLAGS = {
    "start": "--from",
    "goal": "--to",
    "via": "--via",
    "pace": "--pace",
    "turns": "--turns",
    "prefer": "--prefer",
    "engine": "--engine",
    "size": "--size",
    "system": "--system",
    "token": "--token",
    "set": "--set",
    "terrain": "--terrain",
    "out": "--out",
    "log": "--log",
    "runs": "--runs",
    "seed": "--seed",
    "workers": "--workers",
    "scheduler": "--scheduler",
    "resume": "--resume",
    "force": "--force",
    "vary": "--vary",
    "heading": "--heading",
    "end_heading": "--end-heading",
    "speed": "--speed",
    "ground_pace": "--ground-pace",
    "act": "--act",
    "seeds": "--seeds",
    "until_ci": "--until-ci",
    "max_runs": "--max-runs",
    "against": "--against",
    "max_states": "--max-states",
}


class _Parser(argparse.ArgumentParser):
    """argparse that raises instead of printing usage, so errors stay one line."""

    def error(self, message: str) -> NoReturn:
        raise ArgumentError(f"{self.prog}: {message} (see '{self.prog} --help')")


#: Characters of a JSON document gathered before each write to stdout.
JSON_WRITE_CHARS = 1 << 16


def _print_json(doc: Any) -> None:
    """Print ``doc`` as :func:`engine.report.to_json` makes it, streamed: the encoder's
    pieces are written a block at a time, so a long path's document (hundreds of MB of
    text, millions of pieces) is never held whole. json escapes every control and
    non-ASCII character."""
    out: list[str] = []
    size = 0
    for chunk in json_chunks(doc):
        out.append(chunk)
        size += len(chunk)
        if size >= JSON_WRITE_CHARS:
            sys.stdout.write("".join(out))
            out.clear()
            size = 0
    sys.stdout.write("".join(out))


def say(text: str) -> None:
    """Print a command's text on standard output, through :func:`engine.errors.printable`
    (its lines kept; a file's control characters and line separators escaped)."""
    sys.stdout.write(printable(text, lines=True) + "\n")


def tell(text: str, prefix: str = "tacgrid: ") -> None:
    """One line on standard error (a note, a warning, an error), escaped to stay one line."""
    sys.stderr.write(prefix + printable(text) + "\n")


def parse_sets(pairs: list[str] | None) -> dict[str, str]:
    """``--set key=value`` (repeatable) -> dict."""
    out: dict[str, str] = {}
    for pair in pairs or []:
        if "=" not in pair:
            raise ArgumentError(f"--set {pair}: expected key=value, e.g. --set wild_one=none")
        k, v = pair.split("=", 1)
        out[k.strip()] = v.strip()
    return out


def make_system(name: str, sets: list[str] | None) -> Any:
    from engine import systems

    return systems.create(name, parse_sets(sets))


def load_bare_map(path: str, sets: list[str] | None) -> tuple[Any, dict[str, str]]:
    """A map for a command that takes one (`info`, `path`, `reach`, `fly`): its ``--set``
    split into map edits, applied to the model (``terrain.NAME.PROP``,
    ``region.NAME.PROP``, ``map.collision``), and the rule settings, returned."""
    from engine.tiled import load_map

    overrides: dict[str, str] = parse_sets(sets)
    collision = overrides.pop("map.collision", None)  # engine.scenario.MAP_COLLISION
    model = load_map(path, collision=collision)
    if not overrides:  # nothing to edit: the rules stay unimported (`info` on a small map)
        return model, {}
    from engine.scenario import edit_bare_map

    return model, edit_bare_map(path, model, overrides)


def _check_writable(path: str | None, what: str, suffix: str | None = None) -> None:
    """Before any work starts, refuse an output file tacgrid must not write: a missing
    folder, a device, FIFO, socket, folder or link (:func:`engine.safeio.check_target`)."""
    from engine.safeio import check_target

    if path is not None:
        check_target(path, what, suffix=suffix)


def _system_args(s: argparse.ArgumentParser, token: bool = True, required: bool = True) -> None:
    s.add_argument(
        "--system",
        required=required,
        default=None,
        help="rule system (see `tacgrid systems`)" + ("" if required else "; default: the map's"),
    )
    if token:
        s.add_argument("--token", default="", help="key=value,key=value or a YAML/JSON file")
    s.add_argument("--set", action="append", metavar="KEY=VALUE", help="change a rule setting")
    s.add_argument("--json", action="store_true", help="print one JSON document")


def _distance(text: str) -> Fraction:
    from engine.exact import exact
    from engine.sources import clip

    try:
        value = exact(text)  # bounded: `1e999999999` is refused, not computed
    except (ValueError, ZeroDivisionError):
        value = Fraction(0)
    if value <= 0:
        raise argparse.ArgumentTypeError(f"'{clip(text)}': expected metres > 0, e.g. 10000")
    return value


def _whole(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = -1
    if value < 0:
        raise argparse.ArgumentTypeError(f"'{text}': expected a whole number >= 0")
    return value


def _positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"'{text}': expected a whole number >= 1")
    return value


def _size(text: str) -> int:
    from engine.footprint import MAX_SIZE

    value = _positive(text)
    if value > MAX_SIZE:
        raise argparse.ArgumentTypeError(f"'{text}': expected a whole number from 1 to {MAX_SIZE}")
    return value


def _probability(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not 0 <= value <= 1:
        raise argparse.ArgumentTypeError(f"'{text}': expected a probability from 0 to 1, e.g. 0.5")
    return value


def _seed(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = -1
    if value < 0:
        raise argparse.ArgumentTypeError(f"'{text}': expected a whole number >= 0, e.g. --seed 42")
    return value


def _bare(text: str) -> bool:
    """Whether an argument could be a shipped name: no folder in it, no ``#`` (a Tiled
    world's map), and nothing of that name here (a file, a folder, a link)."""
    marks = {"/", "#", os.sep, *([os.altsep] if os.altsep else [])}
    return bool(text) and not any(m in text for m in marks) and not os.path.lexists(text)


def _shipped(text: str, kinds: tuple[str, ...]) -> str:
    """``text`` itself, or where it is no file here but the name of a shipped file of one of
    ``kinds`` ("scenario", "map"; :mod:`engine.data`), that file's path. A bare name that is
    neither is refused in one line listing the shipped names."""
    if not _bare(text):
        return text
    from engine import data

    tables = {"scenario": data.scenarios, "map": data.maps}
    found = {kind: tables[kind]() for kind in kinds}
    for names in found.values():
        if text in names:
            return str(names[text])
    from engine.errors import did_you_mean
    from engine.sources import clip

    every = [n for names in found.values() for n in data.short_names(names)]
    listed = "; ".join(
        f"shipped {kind}s: {', '.join(data.short_names(names)) or 'none'}"
        for kind, names in found.items()
    )
    raise argparse.ArgumentTypeError(
        f"'{clip(text)}': no such file here, nor a shipped {' or '.join(kinds)}"
        f"{did_you_mean(text, every)}; give a file's path or a shipped name ({listed})"
    )


def _scenario(text: str) -> str:
    """A scenario argument: a file, or a shipped scenario's name (``chase``)."""
    return _shipped(text, ("scenario",))


def _map(text: str) -> str:
    """A map argument: a file (or ``WORLD.world#NAME``), or a shipped map's name."""
    return _shipped(text, ("map",))


def _source(text: str) -> str:
    """A map or a scenario (`view`, `render`): a file, or a shipped name, scenarios first
    (``chase`` is the scenario, ``chase.tmx`` its map)."""
    return _shipped(text, ("scenario", "map"))
