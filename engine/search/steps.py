"""A path's steps and turn plan held as columns, read as the contract's records.

A long path (a maze's millions of cells) priced as one Python dict a step held several GB;
here each field is one typed array (``array.array``: cell column and row, the terrain's
kind, cumulative turns, the step's time, its turn) and what only some steps carry (a
check, a jump, standing up first, a climb) sits in a table keyed by step. Indexing
(:class:`StepTable`, :class:`PlanTable`) makes the record CONTRACT.md's ``path`` words,
key for key and in the same order as the plain dicts the pricing built before, so the JSON
streamed from them is the same text (tests/test_long_path.py proves it byte for byte).
"""

from __future__ import annotations

from array import array
from collections.abc import Iterator, Sequence
from typing import Any, overload

import numpy as np


def _fill(column: array[Any], values: np.ndarray, dtype: Any) -> None:
    """Append ``values`` to ``column`` (a typed array of ``dtype``'s kind) by their bytes,
    without a bytes copy in between."""
    column.frombytes(np.ascontiguousarray(values, dtype=dtype).data.cast("B"))


class _Records(Sequence[dict[str, Any]]):
    """A table read as a sequence of records (``_record(i)``, made when asked): index,
    slice, iteration and ``==`` with any sequence of the same records."""

    __slots__ = ()
    _what = "record"

    def _record(self, i: int) -> dict[str, Any]:
        raise NotImplementedError

    @overload
    def __getitem__(self, i: int) -> dict[str, Any]: ...
    @overload
    def __getitem__(self, i: slice) -> list[dict[str, Any]]: ...
    def __getitem__(self, i: int | slice) -> dict[str, Any] | list[dict[str, Any]]:
        if isinstance(i, slice):
            return [self._record(j) for j in range(*i.indices(len(self)))]
        n = len(self)
        if i < 0:
            i += n
        if not 0 <= i < n:
            raise IndexError(f"{self._what} index out of range")
        return self._record(i)

    def __iter__(self) -> Iterator[dict[str, Any]]:
        return (self._record(i) for i in range(len(self)))

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Sequence) or isinstance(other, str):
            return NotImplemented
        return len(self) == len(other) and all(a == b for a, b in zip(self, other, strict=True))

    __hash__ = None  # type: ignore[assignment]


class StepTable(_Records):
    """The steps of a path (CONTRACT.md ``path`` ``steps``), a column per field.

    Step 0 is the start: ``cell``, ``mode``, ``turns``, ``time``, ``check`` only. Every
    later step has ``terrain`` and ``turn`` too, then its optional parts in the order the
    pricing gives them (``jump``, ``first``, ``checks``, ``on_failure``, ``climb``)."""

    __slots__ = (
        "cols", "rows", "kind", "turns", "time", "turn", "kinds", "_kind_of", "checks", "extra",
    )  # fmt: skip
    _what = "step"

    def __init__(self) -> None:
        self.cols = array("i")
        self.rows = array("i")
        self.kind = array("i")  # index into ``kinds``
        self.turns = array("d")
        self.time = array("d")
        self.turn = array("q")
        self.kinds: list[tuple[str, str]] = []  # (mode, terrain name)
        self._kind_of: dict[tuple[str, str], int] = {}
        #: Step -> its check's record (a step not listed has ``check`` None).
        self.checks: dict[int, dict[str, Any]] = {}
        #: Step -> its optional parts, in the order they were added.
        self.extra: dict[int, dict[str, Any]] = {}

    def append(
        self, cell: tuple[int, int], mode: str, terrain: str, turns: float, time: float, turn: int
    ) -> int:
        """Add a step (its check and optional parts none yet); its index."""
        key = (mode, terrain)
        k = self._kind_of.get(key)
        if k is None:
            k = self._kind_of[key] = len(self.kinds)
            self.kinds.append(key)
        self.cols.append(cell[0])
        self.rows.append(cell[1])
        self.kind.append(k)
        self.turns.append(turns)
        self.time.append(time)
        self.turn.append(turn)
        return len(self.cols) - 1

    @classmethod
    def of_columns(
        cls,
        start: tuple[Any, Any],
        start_mode: str,
        cols: np.ndarray,
        rows: np.ndarray,
        tid: np.ndarray,
        kind_of_tid: Sequence[tuple[str, str]],
        total: np.ndarray,
        cost: np.ndarray,
        den: int,
    ) -> StepTable:
        """The table :meth:`append` makes of a start (``start``, on terrain of
        ``start_mode``) and the steps after it, given as arrays: their cells, terrain ids
        (``kind_of_tid``: each id's mode and terrain name), cumulative ``total`` and own
        ``cost`` in ticks (``den`` to a turn; int64); ``turns`` and ``time`` are the
        ticks over ``den`` as Python divides two ints, ``turn`` the ceiling (0 at 0)."""
        table = cls()
        table.append((int(start[0]), int(start[1])), start_mode, "", 0.0, 0.0, 0)
        # Kinds numbered in the order the steps first meet them, as append numbers them.
        firsts = np.unique(tid, return_index=True)
        lut = np.zeros(len(kind_of_tid), dtype=np.int32)
        for t in firsts[0][np.argsort(firsts[1])].tolist():
            key = kind_of_tid[t]
            k = table._kind_of.get(key)
            if k is None:
                k = table._kind_of[key] = len(table.kinds)
                table.kinds.append(key)
            lut[t] = k
        _fill(table.cols, cols, np.int32)
        _fill(table.rows, rows, np.int32)
        _fill(table.kind, lut[tid], np.int32)
        # An int64 over an int is the correctly rounded quotient, as Python's int / int
        # (both exact in a double: the graph keeps totals under 2**53).
        _fill(table.turns, total / den, np.float64)
        _fill(table.time, cost / den, np.float64)
        turn = -(-total // den)
        _fill(table.turn, turn, np.int64)
        return table

    def extra_of(self, i: int) -> dict[str, Any]:
        """Step ``i``'s optional parts, to add to (in the contract's order)."""
        found = self.extra.get(i)
        if found is None:
            found = self.extra[i] = {}
        return found

    def check(self, i: int) -> dict[str, Any] | None:
        return self.checks.get(i)

    def cell(self, i: int) -> list[int]:
        return [self.cols[i], self.rows[i]]

    def __len__(self) -> int:
        return len(self.cols)

    def _record(self, i: int) -> dict[str, Any]:
        mode, terrain = self.kinds[self.kind[i]]
        out: dict[str, Any] = {"cell": [self.cols[i], self.rows[i]], "mode": mode}
        if i:
            out["terrain"] = terrain
        out["turns"] = self.turns[i]
        out["time"] = self.time[i]
        if i:
            out["turn"] = self.turn[i]
        out["check"] = self.checks.get(i)
        more = self.extra.get(i)
        if more:
            out.update(more)
        return out

    def __repr__(self) -> str:
        return f"StepTable({len(self)} steps)"


class PlanTable(_Records):
    """A path's turn plan (CONTRACT.md ``path`` ``plan``): per listed turn its number, the
    steps ``lo``..``hi`` it enters and what it spent; the cells read off the steps."""

    __slots__ = ("steps", "k", "lo", "hi", "spent")
    _what = "plan"

    def __init__(self, steps: StepTable) -> None:
        self.steps = steps
        self.k = array("q")
        self.lo = array("q")
        self.hi = array("q")
        self.spent = array("d")

    def append(self, k: int, lo: int, hi: int, spent: float) -> None:
        self.k.append(k)
        self.lo.append(lo)
        self.hi.append(hi)
        self.spent.append(spent)

    def __len__(self) -> int:
        return len(self.k)

    def _record(self, i: int) -> dict[str, Any]:
        s = self.steps
        return {
            "turn": self.k[i],
            "end": s.cell(self.hi[i] - 1),
            "cells": [s.cell(j) for j in range(self.lo[i], self.hi[i])],
            "spent": self.spent[i],
        }

    def __repr__(self) -> str:
        return f"PlanTable({len(self)} turns)"


class SpanTable(Sequence[tuple[Any, Any, int, int]]):
    """Each step's ``(start, end, terrain, state)`` as the pricing walks it: the start and
    end in the graph's ticks (ints held in typed arrays; a timed or euclidean pace's
    Fractions or floats, where they come, in lists), terrain and search state as ints."""

    __slots__ = ("start", "end", "tid", "state")

    def __init__(self) -> None:
        self.start: array[int] | list[Any] = array("q")
        self.end: array[int] | list[Any] = array("q")
        self.tid = array("i")
        self.state = array("i")

    @classmethod
    def of_columns(
        cls, start: np.ndarray, end: np.ndarray, tid: np.ndarray, state: int
    ) -> SpanTable:
        """The table of steps given as int64 arrays of start and end ticks and terrain
        ids, all in search state ``state``."""
        table = cls()
        assert isinstance(table.start, array) and isinstance(table.end, array)
        _fill(table.start, start, np.int64)
        _fill(table.end, end, np.int64)
        _fill(table.tid, tid, np.int32)
        _fill(table.state, np.full(len(tid), state, dtype=np.int32), np.int32)
        return table

    def append(self, start: Any, end: Any, tid: int, state: int) -> None:
        if type(start) is not int or type(end) is not int:
            # A tick count that is not an int (a Fraction, a float) is kept as it is.
            if isinstance(self.start, array):
                self.start, self.end = list(self.start), list(self.end)
        self.start.append(start)
        self.end.append(end)
        self.tid.append(tid)
        self.state.append(state)

    def __len__(self) -> int:
        return len(self.tid)

    @overload
    def __getitem__(self, i: int) -> tuple[Any, Any, int, int]: ...
    @overload
    def __getitem__(self, i: slice) -> list[tuple[Any, Any, int, int]]: ...
    def __getitem__(
        self, i: int | slice
    ) -> tuple[Any, Any, int, int] | list[tuple[Any, Any, int, int]]:
        if isinstance(i, slice):
            return [self[j] for j in range(*i.indices(len(self)))]
        return (self.start[i], self.end[i], self.tid[i], self.state[i])

    def __iter__(self) -> Iterator[tuple[Any, Any, int, int]]:
        return zip(self.start, self.end, self.tid, self.state, strict=True)
