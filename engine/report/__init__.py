"""What the commands print: every command's JSON document and its text form.

One module per subject, each loaded only when its command runs, so that quick commands
(``tacgrid systems``, ``tacgrid info``) do not pay for the planner, the search or numpy:

* :mod:`engine.report.maptext`: a map drawn as text, with marks on top (path, reach, fly);
* :mod:`engine.report.mapinfo`: ``info``;
* :mod:`engine.report.systems`: ``systems`` and ``stats``;
* :mod:`engine.report.movement`: ``path`` and ``reach``;
* :mod:`engine.report.flight`: ``fly``;
* :mod:`engine.report.dice`: ``odds`` and ``roll``;
* :mod:`engine.report.batch`: ``run`` (a batch's summary, or one run);
* :mod:`engine.report.replay`: ``replay --text/--json`` (and reading an event log safely).

The reports sit above the engine (they call it) and below the command line and the viewer
(which print or draw them). A report function returns data (a JSON-ready dict) or text; it
never prints. This file imports nothing, so loading one report loads only what it needs.
"""

from __future__ import annotations

import json
import json.encoder
from collections.abc import Callable, Iterator, Sequence
from typing import Any


class Streamed:
    """A JSON array that :func:`json_chunks` writes an item at a time, never holding it
    whole: each of ``items`` (a sequence, read again for each document written) passed
    through ``make`` where given. A long path's steps, cells and plan are written so.

    ``blocks``: where given, what writes the items instead, a block of them at a time
    (:mod:`engine.report.blocktext`): called with the line start of the array's items
    (a newline and their indentation), it yields the same text as the items written one
    at a time, "[" before the first and "," before each other, up to the closing line."""

    __slots__ = ("items", "make", "blocks")

    def __init__(
        self,
        items: Sequence[Any],
        make: Callable[[Any], Any] | None = None,
        blocks: Callable[[str], Iterator[str]] | None = None,
    ) -> None:
        self.items = items
        self.make = make
        self.blocks = blocks

    def __iter__(self) -> Iterator[Any]:
        make = self.make
        return iter(self.items) if make is None else (make(x) for x in self.items)


_ascii = json.encoder.encode_basestring_ascii


def json_chunks(doc: Any) -> Iterator[str]:
    """:func:`to_json`'s text in pieces, as the encoder makes them (a long path's document
    is printed as it is made, never held whole). A :class:`Streamed` array, at the top or
    in dicts, is written an item at a time: each item encoded alone and indented to its
    depth, the same text the encoder gives the whole list."""
    enc = json.JSONEncoder(indent=2, allow_nan=False)
    if _streams(doc):
        yield from _chunks(doc, enc, 0)
    else:
        yield from enc.iterencode(finite(doc))
    yield "\n"


def _streams(doc: Any) -> bool:
    if isinstance(doc, Streamed):
        return True
    return isinstance(doc, dict) and any(_streams(v) for v in doc.values())


def _chunks(value: Any, enc: json.JSONEncoder, level: int) -> Iterator[str]:
    """``value`` at nesting ``level`` (indent 2, as the encoder writes it)."""
    if not _streams(value):
        # An item alone: its own lines indented to the depth it is written at (JSON text
        # has no raw newline inside a string, so every newline is a line of the layout).
        yield enc.encode(finite(value)).replace("\n", "\n" + "  " * level)
        return
    pad = "\n" + "  " * (level + 1)
    first = True
    if isinstance(value, Streamed):
        if value.blocks is not None and len(value.items):
            yield from value.blocks(pad)
            first = False
        for item in value if first else ():
            yield ("[" if first else ",") + pad + _text(item, pad)
            first = False
        yield "[]" if first else "\n" + "  " * level + "]"
        return
    for key, item in value.items():
        if not isinstance(key, str):
            raise TypeError(f"a streamed document's keys are text, not {key!r}")
        yield ("{" if first else ",") + pad + enc.encode(key) + ": "
        yield from _chunks(item, enc, level + 1)
        first = False
    yield "{}" if first else "\n" + "  " * level + "}"


def _text(value: Any, nl: str) -> str:
    """``value`` as the encoder writes it (indent 2, ``finite``: NaN and infinities null)
    at the depth whose line start is ``nl``: one item of a :class:`Streamed` array. The
    encoder's own pure-Python writer (the only one that indents) makes a generator per
    level of every item, most of a long path's time; this builds each item's string
    directly (tests/test_long_path.py proves the text the same)."""
    inner = nl + "  "
    if isinstance(value, list | tuple):
        if not value:
            return "[]"
        return "[" + ",".join(inner + _text(v, inner) for v in value) + nl + "]"
    if isinstance(value, dict):
        if not value:
            return "{}"
        return (
            "{"
            + ",".join(inner + _key(k) + ": " + _text(v, inner) for k, v in value.items())
            + nl
            + "}"
        )
    return _scalar(value)


def _scalar(value: Any) -> str:
    if isinstance(value, str):
        return _ascii(value)
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, int):
        return int.__repr__(value)
    if isinstance(value, float):
        return float.__repr__(value) if value - value == 0 else "null"
    raise TypeError(f"Object of type {type(value).__name__} is not JSON serializable")


def _key(key: Any) -> str:
    """A dict key as the encoder writes it (text; a number, true, false or null as text)."""
    if isinstance(key, str):
        return _ascii(key)
    if isinstance(key, float):
        if key - key != 0:
            raise ValueError(f"Out of range float values are not JSON compliant: {key!r}")
        return _ascii(float.__repr__(key))
    if key is True or key is False or key is None:
        return _ascii(json.dumps(key))
    if isinstance(key, int):
        return _ascii(int.__repr__(key))
    raise TypeError(f"keys must be str, int, float, bool or None, not {type(key).__name__}")


def to_json(doc: Any) -> str:
    """The one JSON document a ``--json`` command prints, with its final newline: JSON
    itself, a number that is not finite (NaN, infinity) written as ``null``."""
    return "".join(json_chunks(doc))


def finite(doc: Any) -> Any:
    """``doc`` with every float that is not finite replaced by None (JSON has no NaN)."""
    if isinstance(doc, float):
        return doc if doc - doc == 0 else None
    if isinstance(doc, dict):
        return {k: finite(v) for k, v in doc.items()}
    if isinstance(doc, list | tuple):
        return [finite(v) for v in doc]
    return doc
