"""A path's steps and turn plan held as columns, read as the contract's records.

A long path (a maze's millions of cells) priced as one Python dict a step held several GB;
here the steps are typed columns and what only some steps carry (a check, a jump, standing
up first, a climb) sits in a table keyed by step. Two forms behind one interface
(:class:`Steps`): :class:`StepTable`, appended a step at a time by the plain pricing (cell
column and row, kind, cumulative turns, time, turn), and :class:`StepColumns`, made by the
numpy pricing of what the steps are made of (the path's cell indices, terrain ids, ticks),
its floats worked out when read; the spans the pricing weighs (:class:`Spans`) are kept
(:class:`SpanTable`) or read off those columns (:class:`StepSpans`). Indexing makes the
record CONTRACT.md's ``path`` words, key for key and in the same order as the plain dicts
the pricing built before, so the JSON streamed from them is the same text
(tests/test_long_path.py proves it byte for byte, tests/test_path_columns.py the two forms
the same records).
"""

from __future__ import annotations

from array import array
from collections.abc import Iterator, Sequence
from typing import Any, NamedTuple, overload

import numpy as np

#: Records made at a time when a table is iterated (a block's columns as Python lists).
RECORD_BLOCK = 1 << 12


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


class StepBlock(NamedTuple):
    """Steps ``lo``..``hi`` of a table as arrays (the start excluded): each step's cell
    column and row, kind (an index into :meth:`Steps.kinds_of`), cumulative turns, own
    time and turn, as the records give them."""

    cols: np.ndarray
    rows: np.ndarray
    kind: np.ndarray
    turns: np.ndarray
    time: np.ndarray
    turn: np.ndarray


class Steps(_Records):
    """The steps of a path (CONTRACT.md ``path`` ``steps``), read as records.

    Step 0 is the start: ``cell``, ``mode``, ``turns``, ``time``, ``check`` only. Every
    later step has ``terrain`` and ``turn`` too, then its optional parts in the order the
    pricing gives them (``jump``, ``first``, ``checks``, ``on_failure``, ``climb``). What
    only some steps carry sits in :attr:`checks` and :attr:`extra`, keyed by step. Two
    forms: :class:`StepTable` (a step appended at a time, figures as floats) and
    :class:`StepColumns` (priced in numpy, figures kept as ticks)."""

    __slots__ = ("checks", "extra")
    _what = "step"

    def __init__(self) -> None:
        #: Step -> its check's record (a step not listed has ``check`` None).
        self.checks: dict[int, dict[str, Any]] = {}
        #: Step -> its optional parts, in the order they were added.
        self.extra: dict[int, dict[str, Any]] = {}

    def extra_of(self, i: int) -> dict[str, Any]:
        """Step ``i``'s optional parts, to add to (in the contract's order)."""
        found = self.extra.get(i)
        if found is None:
            found = self.extra[i] = {}
        return found

    def check(self, i: int) -> dict[str, Any] | None:
        return self.checks.get(i)

    def kinds_of(self) -> Sequence[tuple[str, str]]:
        """Each kind's ``(mode, terrain name)`` (:attr:`StepBlock.kind` indexes it)."""
        raise NotImplementedError

    def cell(self, i: int) -> list[int]:
        """Step ``i``'s cell, ``[col, row]``."""
        raise NotImplementedError

    def cells_at(self, index: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The columns and rows of the steps ``index`` (an int array) enter."""
        raise NotImplementedError

    def block(self, lo: int, hi: int) -> StepBlock:
        """Steps ``lo``..``hi`` (``lo`` >= 1) as arrays."""
        raise NotImplementedError

    def turns_array(self) -> np.ndarray:
        """Every step's cumulative turns (float64; non-decreasing)."""
        raise NotImplementedError

    def timing(self, i: int) -> tuple[float, float, int]:
        """Step ``i``'s cumulative turns, own time and turn."""
        raise NotImplementedError

    def retime(self, i: int, turns: float, time: float, turn: int) -> None:
        """Set step ``i``'s cumulative turns, own time and turn (a climb's re-timing)."""
        raise NotImplementedError

    def _record(self, i: int) -> dict[str, Any]:
        mode, terrain, cell = self._head(i)
        out: dict[str, Any] = {"cell": cell, "mode": mode}
        turns, time, turn = self.timing(i)
        if i:
            out["terrain"] = terrain
        out["turns"] = turns
        out["time"] = time
        if i:
            out["turn"] = turn
        out["check"] = self.checks.get(i)
        more = self.extra.get(i)
        if more:
            out.update(more)
        return out

    def _head(self, i: int) -> tuple[str, str, list[int]]:
        """Step ``i``'s mode, terrain name and cell."""
        raise NotImplementedError

    def __repr__(self) -> str:
        return f"{type(self).__name__}({len(self)} steps)"


class StepTable(Steps):
    """Steps appended a step at a time (:meth:`append`), a typed column per field (cell
    column and row, kind, cumulative turns, time, turn)."""

    __slots__ = ("cols", "rows", "kind", "turns", "time", "turn", "kinds", "_kind_of")

    def __init__(self) -> None:
        super().__init__()
        self.cols = array("i")
        self.rows = array("i")
        self.kind = array("i")  # index into ``kinds``
        self.turns = array("d")
        self.time = array("d")
        self.turn = array("q")
        self.kinds: list[tuple[str, str]] = []  # (mode, terrain name)
        self._kind_of: dict[tuple[str, str], int] = {}

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

    def kinds_of(self) -> Sequence[tuple[str, str]]:
        return self.kinds

    def cell(self, i: int) -> list[int]:
        return [self.cols[i], self.rows[i]]

    def cells_at(self, index: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        cols = np.frombuffer(self.cols, dtype=np.int32)
        return cols[index], np.frombuffer(self.rows, dtype=np.int32)[index]

    def block(self, lo: int, hi: int) -> StepBlock:
        def view(column: array[Any], dtype: Any) -> np.ndarray:
            return np.frombuffer(column, dtype=dtype)[lo:hi]

        return StepBlock(
            view(self.cols, np.int32),
            view(self.rows, np.int32),
            view(self.kind, np.int32),
            view(self.turns, np.float64),
            view(self.time, np.float64),
            view(self.turn, np.int64),
        )

    def turns_array(self) -> np.ndarray:
        return np.frombuffer(self.turns, dtype=np.float64)

    def timing(self, i: int) -> tuple[float, float, int]:
        return self.turns[i], self.time[i], self.turn[i]

    def retime(self, i: int, turns: float, time: float, turn: int) -> None:
        self.turns[i] = turns
        self.time[i] = time
        self.turn[i] = turn

    def __len__(self) -> int:
        return len(self.cols)

    def _head(self, i: int) -> tuple[str, str, list[int]]:
        mode, terrain = self.kinds[self.kind[i]]
        return mode, terrain, [self.cols[i], self.rows[i]]


class StepColumns(Steps):
    """Steps priced in numpy (:func:`engine.search.columns.priced_columns`), held as
    what they are made of: each step's cell (row-major index on a map ``width`` wide;
    index 0 the start), the terrain id of each step after the start, its cumulative and
    own cost in ticks (``den`` to a turn). A record's ``turns`` and ``time`` are the
    ticks over ``den`` as Python divides two ints, its ``turn`` their ceiling (0 at 0),
    worked out when read: a maze's millions of steps keep 4 + 8 + 4 + 1-4 bytes each, not
    three more columns of floats. A climb's re-timing (:meth:`retime`) keeps the three
    figures as floats from then on."""

    __slots__ = ("flat", "width", "tid", "total", "cost", "den", "start_mode", "kinds", "_timed")

    def __init__(
        self,
        flat: np.ndarray,
        width: int,
        start_mode: str,
        tid: np.ndarray,
        kinds: Sequence[tuple[str, str]],
        total: np.ndarray,
        cost: np.ndarray,
        den: int,
    ) -> None:
        """``flat``: the cells, start first (int32 or int64); ``tid``, ``total`` (int64),
        ``cost``: one per step after the start; ``kinds``: each terrain id's mode and
        terrain name."""
        super().__init__()
        self.flat, self.width, self.start_mode = flat, width, start_mode
        self.tid, self.kinds = tid, list(kinds)
        self.total, self.cost, self.den = total, cost, den
        self._timed: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None

    def __len__(self) -> int:
        return int(self.flat.size)

    def kinds_of(self) -> Sequence[tuple[str, str]]:
        return self.kinds

    def cell(self, i: int) -> list[int]:
        r, c = divmod(int(self.flat[i]), self.width)
        return [c, r]

    def cells_at(self, index: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        at = self.flat[index]
        return at % self.width, at // self.width

    def _figures(self, lo: int, hi: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Steps ``lo``..``hi``'s (``lo`` >= 1) turns, time and turn."""
        if self._timed is not None:
            return (self._timed[0][lo:hi], self._timed[1][lo:hi], self._timed[2][lo:hi])
        total = self.total[lo - 1 : hi - 1]
        # An int64 over an int is the correctly rounded quotient, as Python's int / int
        # (both exact in a double: the graph keeps totals under 2**53).
        return total / self.den, self.cost[lo - 1 : hi - 1] / self.den, -(-total // self.den)

    def block(self, lo: int, hi: int) -> StepBlock:
        if lo < 1:
            raise IndexError("a block of steps starts after the start")
        at = self.flat[lo:hi]
        return StepBlock(at % self.width, at // self.width, self.tid[lo - 1 : hi - 1],
                         *self._figures(lo, hi))  # fmt: skip

    def turns_array(self) -> np.ndarray:
        if self._timed is not None:
            return self._timed[0]
        out = np.empty(len(self), dtype=np.float64)
        out[0] = 0.0
        np.divide(self.total, self.den, out=out[1:])
        return out

    def timing(self, i: int) -> tuple[float, float, int]:
        if not i:
            return (0.0, 0.0, 0) if self._timed is None else (
                float(self._timed[0][0]), float(self._timed[1][0]), int(self._timed[2][0]))  # fmt: skip
        turns, time, turn = self._figures(i, i + 1)
        return float(turns[0]), float(time[0]), int(turn[0])

    def retime(self, i: int, turns: float, time: float, turn: int) -> None:
        if self._timed is None:
            n = len(self)
            timed = (np.zeros(n), np.zeros(n), np.zeros(n, dtype=np.int64))
            for column, values in zip(timed, self._figures(1, n), strict=True):
                column[1:] = values
            self._timed = timed
        self._timed[0][i] = turns
        self._timed[1][i] = time
        self._timed[2][i] = turn

    def _head(self, i: int) -> tuple[str, str, list[int]]:
        if not i:
            return self.start_mode, "", self.cell(0)
        mode, terrain = self.kinds[int(self.tid[i - 1])]
        return mode, terrain, self.cell(i)

    def __iter__(self) -> Iterator[dict[str, Any]]:
        # The records :meth:`_record` makes one at a time, made a block at a time: one
        # numpy division and one ``tolist`` a block, not a slice and a division a step
        # (which were most of ``Context.path``'s time). tests/test_step_records.py holds
        # them equal to ``_record``'s, key for key.
        n = len(self)
        for lo in range(0, n, RECORD_BLOCK):
            yield from self._records(lo, min(n, lo + RECORD_BLOCK))

    def _records(self, lo: int, hi: int) -> Iterator[dict[str, Any]]:
        """Steps ``lo``..``hi``'s records, as :meth:`_record` makes each."""
        at = self.flat[lo:hi]
        cols, rows = (at % self.width).tolist(), (at // self.width).tolist()
        first = max(lo, 1)  # the first step after the start
        if self._timed is not None:
            turns, time, turn = (c[lo:hi].tolist() for c in self._timed)
        else:
            turns, time, turn = [], [], []
            if hi > first:
                turns, time, turn = (f.tolist() for f in self._figures(first, hi))
            if not lo:  # the start's, as :meth:`timing` gives them
                turns, time, turn = [0.0, *turns], [0.0, *time], [0, *turn]
        kinds = [self.kinds[t] for t in self.tid[first - 1 : hi - 1].tolist()]
        checks, extra = self.checks, self.extra
        for j in range(hi - lo):
            i = lo + j
            out: dict[str, Any]
            if i:
                mode, terrain = kinds[i - first]
                out = {"cell": [cols[j], rows[j]], "mode": mode, "terrain": terrain,
                       "turns": turns[j], "time": time[j], "turn": turn[j]}  # fmt: skip
            else:
                out = {"cell": [cols[j], rows[j]], "mode": self.start_mode,
                       "turns": turns[j], "time": time[j]}  # fmt: skip
            out["check"] = checks.get(i)
            more = extra.get(i)
            if more:
                out.update(more)
            yield out


class PlanTable(_Records):
    """A path's turn plan (CONTRACT.md ``path`` ``plan``): per listed turn its number, the
    steps ``lo``..``hi`` it enters and what it spent; the cells read off the steps."""

    __slots__ = ("steps", "k", "lo", "hi", "spent")
    _what = "plan"

    def __init__(self, steps: Steps) -> None:
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

    def __iter__(self) -> Iterator[dict[str, Any]]:
        # :meth:`_record`'s records, the cells of a block of turns read off the steps at
        # once (``cells_at``), not a cell at a time; tests/test_step_records.py holds them
        # equal.
        n, i = len(self), 0
        while i < n:
            index: list[int] = []
            j = i
            while j < n and (j == i or len(index) + self.hi[j] - self.lo[j] < RECORD_BLOCK):
                index.append(self.hi[j] - 1)
                index.extend(range(self.lo[j], self.hi[j]))
                j += 1
            c, r = self.steps.cells_at(np.array(index, dtype=np.int64))
            cols, rows = c.tolist(), r.tolist()
            at = 0
            for k in range(i, j):
                lo, hi = self.lo[k], self.hi[k]
                yield {
                    "turn": self.k[k],
                    "end": [cols[at], rows[at]],
                    "cells": [[cols[m], rows[m]] for m in range(at + 1, at + 1 + hi - lo)],
                    "spent": self.spent[k],
                }
                at += 1 + hi - lo
            i = j

    def __repr__(self) -> str:
        return f"PlanTable({len(self)} turns)"


class Spans(Sequence[tuple[Any, Any, int, int]]):
    """Each step's ``(start, end, terrain, state)`` as the pricing walks it: the start and
    end in the graph's ticks, terrain and search state as ints; :meth:`tids` and
    :meth:`states` the last two as arrays."""

    __slots__ = ()

    def tids(self) -> np.ndarray:
        raise NotImplementedError

    def states(self) -> np.ndarray:
        raise NotImplementedError

    def _span(self, i: int) -> tuple[Any, Any, int, int]:
        raise NotImplementedError

    @overload
    def __getitem__(self, i: int) -> tuple[Any, Any, int, int]: ...
    @overload
    def __getitem__(self, i: slice) -> list[tuple[Any, Any, int, int]]: ...
    def __getitem__(
        self, i: int | slice
    ) -> tuple[Any, Any, int, int] | list[tuple[Any, Any, int, int]]:
        if isinstance(i, slice):
            return [self._span(j) for j in range(*i.indices(len(self)))]
        n = len(self)
        if i < 0:
            i += n
        if not 0 <= i < n:
            raise IndexError("span index out of range")
        return self._span(i)


class SpanTable(Spans):
    """Spans appended a step at a time: ints held in typed arrays (a timed or euclidean
    pace's Fractions or floats, where they come, in lists)."""

    __slots__ = ("start", "end", "tid", "state")

    def __init__(self) -> None:
        self.start: array[int] | list[Any] = array("q")
        self.end: array[int] | list[Any] = array("q")
        self.tid = array("i")
        self.state = array("i")

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

    def tids(self) -> np.ndarray:
        return np.frombuffer(self.tid, dtype=np.int32)

    def states(self) -> np.ndarray:
        return np.frombuffer(self.state, dtype=np.int32)

    def _span(self, i: int) -> tuple[Any, Any, int, int]:
        return (self.start[i], self.end[i], self.tid[i], self.state[i])

    def __iter__(self) -> Iterator[tuple[Any, Any, int, int]]:
        return zip(self.start, self.end, self.tid, self.state, strict=True)


class StepSpans(Spans):
    """The spans of :class:`StepColumns`' steps, read off them (all in search state
    ``state``): a step's span ends at its cumulative ticks and starts its own cost
    before."""

    __slots__ = ("steps", "state")

    def __init__(self, steps: StepColumns, state: int) -> None:
        self.steps = steps
        self.state = state

    def __len__(self) -> int:
        return int(self.steps.total.size)

    def tids(self) -> np.ndarray:
        return self.steps.tid

    def states(self) -> np.ndarray:
        return np.broadcast_to(np.int32(self.state), self.steps.tid.shape)

    def _span(self, i: int) -> tuple[Any, Any, int, int]:
        s = self.steps
        end = int(s.total[i])
        return (end - int(s.cost[i]), end, int(s.tid[i]), self.state)

    def __iter__(self) -> Iterator[tuple[Any, Any, int, int]]:
        for i in range(len(self)):
            yield self._span(i)
