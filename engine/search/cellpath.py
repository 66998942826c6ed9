"""A path's cells held as one typed array (:class:`CellPath`), read as the tuple of
``(col, row)`` cells it replaces.

A maze's path has millions of cells: as a tuple of tuples that is about 90 bytes a cell
(a tuple and two ints each), here 4 bytes (the cell's row-major index). Reading makes the
cells: indexing and iteration give ``(col, row)`` tuples, a slice gives a tuple of them,
and ``==`` holds with any sequence of the same cells (a tuple, a list, another path).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from typing import Any, overload

import numpy as np

Cell = tuple[int, int]


class CellPath(Sequence[Cell]):
    """Cells ``(col, row)`` of a map ``width`` cells wide, held as their row-major indices
    (``flat``, a read-only int32 or int64 array)."""

    __slots__ = ("flat", "width")

    def __init__(self, index: np.ndarray, width: int) -> None:
        kind = np.int32 if index.size == 0 or int(index.max()) < 2**31 else np.int64
        arr = np.ascontiguousarray(index, dtype=kind)
        if arr is index:
            arr = arr.copy()
        arr.flags.writeable = False
        self.flat = arr
        self.width = width

    @classmethod
    def of(cls, cells: Iterable[Cell], width: int) -> CellPath:
        """``cells`` (a sequence of ``(col, row)``, or a :class:`CellPath` of the same
        width, kept as it is) as a path on a map ``width`` wide."""
        if isinstance(cells, CellPath) and cells.width == width:
            return cells
        flat = [c[1] * width + c[0] for c in cells]
        return cls(np.array(flat, dtype=np.int64), width)

    def __len__(self) -> int:
        return int(self.flat.size)

    @overload
    def __getitem__(self, i: int) -> Cell: ...
    @overload
    def __getitem__(self, i: slice) -> tuple[Cell, ...]: ...
    def __getitem__(self, i: int | slice) -> Cell | tuple[Cell, ...]:
        if isinstance(i, slice):
            return tuple(self._cells(self.flat[i]))
        n = self.flat.size
        if not -n <= i < n:
            raise IndexError("cell index out of range")
        r, c = divmod(int(self.flat[i]), self.width)
        return (c, r)

    def _cells(self, index: np.ndarray) -> Iterator[Cell]:
        w = self.width
        return zip((index % w).tolist(), (index // w).tolist(), strict=True)

    def __iter__(self) -> Iterator[Cell]:
        # In blocks: the whole path's ints as Python lists would be most of what it saves.
        for lo in range(0, self.flat.size, 1 << 16):
            yield from self._cells(self.flat[lo : lo + (1 << 16)])

    def __reversed__(self) -> Iterator[Cell]:
        return iter(tuple(self._cells(self.flat[::-1])))

    def __contains__(self, cell: object) -> bool:
        if not (isinstance(cell, tuple) and len(cell) == 2):
            return False
        c, r = cell
        if not (isinstance(c, int) and isinstance(r, int) and 0 <= c < self.width):
            return False
        return bool(np.any(self.flat == r * self.width + c))

    def cols(self) -> np.ndarray:
        """The cells' columns, as an array."""
        return self.flat % self.width

    def rows(self) -> np.ndarray:
        """The cells' rows, as an array."""
        return self.flat // self.width

    def __eq__(self, other: object) -> bool:
        if isinstance(other, CellPath):
            if self.width == other.width:
                return bool(np.array_equal(self.flat, other.flat))
            return len(self) == len(other) and all(a == b for a, b in zip(self, other, strict=True))
        if not isinstance(other, Sequence) or isinstance(other, str | bytes):
            return NotImplemented
        return len(self) == len(other) and all(a == b for a, b in zip(self, other, strict=True))

    def __ne__(self, other: object) -> bool:
        eq = self.__eq__(other)
        return eq if eq is NotImplemented else not eq

    def __hash__(self) -> int:
        return hash(tuple(self))

    def __add__(self, other: Sequence[Cell]) -> tuple[Cell, ...]:
        return (*self, *other)

    def __radd__(self, other: Sequence[Cell]) -> tuple[Cell, ...]:
        return (*other, *self)

    def __reduce__(self) -> tuple[Any, ...]:
        return (CellPath, (np.array(self.flat), self.width))

    def __repr__(self) -> str:
        if len(self) <= 8:
            return f"CellPath({list(self)})"
        return f"CellPath({len(self)} cells, {self[0]} .. {self[-1]})"
