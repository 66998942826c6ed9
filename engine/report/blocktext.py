"""A long path's JSON arrays written a block of records at a time: the same text as the
encoder writes them one at a time.

A maze's path has millions of cells, steps and plan cells, all of a few shapes. A shape is
a template (:data:`Template`): the literal text of a record (its keys, brackets and
indentation, as :func:`engine.report.json_chunks` lays them out) with gaps where a
column's value goes. :func:`rows_text` writes a block of rows from typed columns in one
call: engine/_kernel.c's ``json_rows`` where it is built, else :func:`rows_plain`, its
Python twin.

The seam is :class:`engine.report.Streamed`'s ``blocks``: :func:`cells_writer`,
:func:`steps_writer` and :func:`plan_writer` give the writer of a
:class:`~engine.search.cellpath.CellPath`, :class:`~engine.search.steps.Steps` or
:class:`~engine.search.steps.PlanTable` (None for any other sequence: it is written a
record at a time). A step with a check or optional parts, and the start, are written as
records (they are few). tests/test_long_path.py holds the text byte for byte equal to the
plain encoder's, and the kernel equal to its twin.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import Any

import numpy as np

from engine import kernel
from engine.report import _ascii, _text
from engine.search.cellpath import CellPath
from engine.search.steps import PlanTable, Steps

#: A record's shape: its literal pieces, and between each two the number of the column
#: whose value goes there (``len(parts) == len(refs) + 1``).
Template = tuple[tuple[str, ...], bytes]

#: A block's writer: the items' text (the first opened by "[", the others after ","),
#: each on its own line starting with the given line start (a newline and indentation).
Writer = Callable[[str], Iterator[str]]

#: Rows a block (a few MB of text).
BLOCK_ROWS = 1 << 13


def rows_text(
    templates: tuple[Template, ...], kind: Any, columns: tuple[Any, ...], lo: int, hi: int
) -> str:
    """Rows ``lo``..``hi`` of ``columns`` (typed arrays: signed ints, float64), row ``i``
    written by template ``kind[i]`` (``kind`` None: the first template): each part of
    the template, then the value of the column its ref names (ints in decimal, floats as
    ``float.__repr__``, null where not finite)."""
    if kernel.available():
        return kernel.json_rows(templates, kind, columns, lo, hi)
    return rows_plain(templates, kind, columns, lo, hi)


def rows_plain(
    templates: tuple[Template, ...], kind: Any, columns: tuple[Any, ...], lo: int, hi: int
) -> str:
    """:func:`rows_text` a value at a time, with the encoder's own scalars."""
    values = [np.asarray(c)[lo:hi].tolist() for c in columns]
    kinds = [0] * (hi - lo) if kind is None else np.asarray(kind)[lo:hi].tolist()
    out: list[str] = []
    for i, k in enumerate(kinds):
        parts, refs = templates[k]
        out.append(parts[0])
        for j, ref in enumerate(refs):
            v = values[ref][i]
            out.append(float.__repr__(v) if isinstance(v, float) and v - v == 0 else
                       "null" if isinstance(v, float) else int.__repr__(v))  # fmt: skip
            out.append(parts[j + 1])
    return "".join(out)


def _pair(open_: str, nl: str) -> tuple[str, str, str]:
    """A ``[col, row]`` pair's pieces at the line start ``nl``, opened by ``open_``."""
    inner = nl + "  "
    return (open_ + "[" + inner, "," + inner, nl + "]")


def cells_writer(cells: Sequence[Any]) -> Writer | None:
    """The writer of a path's cells (``[col, row]`` each), for a :class:`CellPath`."""
    if not isinstance(cells, CellPath):
        return None
    flat, width = cells.flat, cells.width

    def write(pad: str) -> Iterator[str]:
        templates = ((_pair("[" + pad, pad), b"\x00\x01"), (_pair("," + pad, pad), b"\x00\x01"))
        kind = np.ones(BLOCK_ROWS, dtype=np.int8)
        for lo in range(0, flat.size, BLOCK_ROWS):
            block = flat[lo : lo + BLOCK_ROWS]
            kind[0] = 0 if lo == 0 else 1
            cols = (block % width, block // width)
            yield rows_text(templates, kind, cols, 0, block.size)

    return write


def _step_template(mode: str, terrain: str, pad: str) -> Template:
    """A step (after the start) with no check and no optional parts, after the first."""
    in1 = pad + "  "
    cell = _pair("," + pad + "{" + in1 + '"cell": ', in1)
    return (
        (
            cell[0],
            cell[1],
            cell[2] + "," + in1 + '"mode": ' + _ascii(mode) + "," + in1 + '"terrain": '
            + _ascii(terrain) + "," + in1 + '"turns": ',
            "," + in1 + '"time": ',
            "," + in1 + '"turn": ',
            "," + in1 + '"check": null' + pad + "}",
        ),
        bytes(range(5)),
    )  # fmt: skip


def steps_writer(steps: Sequence[Any]) -> Writer | None:
    """The writer of a path's steps, for a table of :class:`Steps`: the start and every
    step with a check or optional parts as records, the runs between them in blocks."""
    if not isinstance(steps, Steps):
        return None

    def write(pad: str) -> Iterator[str]:
        n = len(steps)
        templates = tuple(_step_template(m, t, pad) for m, t in steps.kinds_of())
        odd = {0, *steps.checks, *(i for i, more in steps.extra.items() if more)}
        marks = sorted(i for i in odd if 0 <= i < n)
        at = 0
        for i in [*marks, n]:
            for lo in range(at, i, BLOCK_ROWS):
                b = steps.block(lo, min(i, lo + BLOCK_ROWS))
                cols = (b.cols, b.rows, b.turns, b.time, b.turn)
                yield rows_text(templates, b.kind, cols, 0, b.kind.size)
            if i < n:
                yield ("[" if i == 0 else ",") + pad + _text(steps[i], pad)
            at = i + 1

    return write


def plan_writer(plan: Sequence[Any]) -> Writer | None:
    """The writer of a path's turn plan, for a :class:`PlanTable`: each turn a row of its
    number and end, a row per cell it enters, and a row of what it spent."""
    if not isinstance(plan, PlanTable):
        return None
    items = 1 << 11  # turns a block

    def write(pad: str) -> Iterator[str]:
        in1 = pad + "  "
        in2 = in1 + "  "
        head = (
            "{" + in1 + '"turn": ',
            "," + in1 + '"end": [' + in2,
            "," + in2,
            in1 + "]," + in1 + '"cells": [',
        )
        spent = '"spent": '
        templates: tuple[Template, ...] = (
            (("[" + pad + head[0], *head[1:]), b"\x00\x01\x02"),  # 0: the first turn
            (("," + pad + head[0], *head[1:]), b"\x00\x01\x02"),  # 1: a later turn
            (_pair(in2, in2), b"\x01\x02"),  # 2: its first cell
            (_pair("," + in2, in2), b"\x01\x02"),  # 3: a later cell
            ((in1 + "]," + in1 + spent, pad + "}"), b"\x03"),  # 4: the end, after cells
            (("]," + in1 + spent, pad + "}"), b"\x03"),  # 5: the end of a turn of none
        )
        s = plan.steps
        k_all = np.frombuffer(plan.k, dtype=np.int64)
        lo_all = np.frombuffer(plan.lo, dtype=np.int64)
        hi_all = np.frombuffer(plan.hi, dtype=np.int64)
        spent_all = np.frombuffer(plan.spent, dtype=np.float64)
        for a in range(0, len(plan), items):
            lo, hi = lo_all[a : a + items], hi_all[a : a + items]
            count = np.maximum(hi - lo, 0)
            width = count + 2  # the turn's row, its cells' rows, its end
            start = np.cumsum(width) - width
            total = int(width.sum())
            kind = np.full(total, 3, dtype=np.int8)
            kind[start] = 1
            if a == 0:
                kind[0] = 0
            kind[(start + 1)[count > 0]] = 2
            kind[start + width - 1] = np.where(count > 0, 4, 5)
            # Each cell row's step (lo on from the turn's first cell row); the turn's own
            # row (and its end's) reads the step it ends on.
            step = np.arange(total, dtype=np.int64) + np.repeat(lo - start - 1, width)
            step[start] = hi - 1
            step[start + width - 1] = hi - 1
            cols = (
                np.repeat(k_all[a : a + items], width),
                *s.cells_at(step),
                np.repeat(spent_all[a : a + items], width),
            )
            yield rows_text(templates, kind, cols, 0, total)

    return write
