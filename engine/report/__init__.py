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
from collections.abc import Iterator
from typing import Any


def json_chunks(doc: Any) -> Iterator[str]:
    """:func:`to_json`'s text in pieces, as the encoder makes them (a long path's document
    is printed as it is made, never held whole)."""
    yield from json.JSONEncoder(indent=2, allow_nan=False).iterencode(finite(doc))
    yield "\n"


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
