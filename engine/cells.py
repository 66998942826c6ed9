"""Per-cell arrays held in the standard library until numpy is needed (issue 20).

``tacgrid info`` on a small map must not import numpy (its import alone is most of the
command's start-up), yet the map model's arrays are numpy arrays, which the search and the
renderer use. So the reader builds a small map's arrays as :class:`Cells`: a stdlib
:class:`array.array`, row-major, with its shape. A model field declared
:class:`NumpyField` takes either form and always *reads* as a numpy array: a
:class:`Cells` becomes one on the first read, with ``np.frombuffer`` (no copy: the same
memory, writable), and stays one. Until then :func:`held` gives the field as it is, so that
the counts ``info`` reports need no numpy.

A step that works on these arrays has one function with a pure-Python branch, taken when
every input is :class:`Cells` and small (:func:`pure`), and a numpy branch for the rest;
tests run both branches on the same data and compare them.
"""

from __future__ import annotations

from array import array
from collections import Counter
from typing import Any, overload

from engine.lazy import numpy as np

#: The stdlib array type codes of a 32-bit unsigned integer (Tiled's gids), a 32-bit signed
#: one (terrain ids) and a byte (flip flags).
U32 = "I" if array("I").itemsize == 4 else "L"
I32 = "i" if array("i").itemsize == 4 else "l"
U8 = "B"

#: A step's inputs of at most this many cells in all are worked in pure Python: a map of up
#: to 128 x 128 cells is read without numpy. Up to this size the pure read costs far less
#: than importing numpy, so a quick command on a small map (``info``) never imports it; a
#: command that needs numpy anyway (``path`` on a small map) loses only the pure read's
#: extra time, which this bound keeps small.
SMALL_CELLS = 1 << 14


class Cells:
    """A (height, width) array of integers in a stdlib array (``values``, row-major)."""

    __slots__ = ("shape", "values")

    def __init__(self, values: array[int], shape: tuple[int, int]) -> None:
        if len(values) != shape[0] * shape[1]:
            raise ValueError(f"{len(values)} values for shape {shape}")
        self.values = values
        self.shape = shape

    @classmethod
    def zeros(cls, shape: tuple[int, int], typecode: str) -> Cells:
        """Zeros of ``typecode`` (any size: the numpy view costs no copy later)."""
        values = array(typecode)
        values.frombytes(bytes(shape[0] * shape[1] * values.itemsize))
        return cls(values, shape)

    @property
    def size(self) -> int:
        return len(self.values)

    def numpy(self) -> np.ndarray:
        """The numpy view of the same memory (writes to either are seen by both)."""
        flat = np.frombuffer(self.values, dtype=np.dtype(self.values.typecode))
        return flat.reshape(self.shape)

    def __repr__(self) -> str:
        return f"Cells({self.values.typecode!r}, {self.shape})"


def to_numpy(data: Cells | np.ndarray) -> np.ndarray:
    """``data`` as a numpy array (a :class:`Cells` viewed without a copy)."""
    return data.numpy() if isinstance(data, Cells) else data


def small(cells: int) -> bool:
    """Whether a step on this many cells in all takes its pure-Python branch."""
    return cells <= SMALL_CELLS


def pure(*data: Cells | np.ndarray) -> bool:
    """Whether a step on ``data`` takes its pure-Python branch: every input is
    :class:`Cells`, :data:`SMALL_CELLS` or fewer cells in all."""
    total = 0
    for d in data:
        if not isinstance(d, Cells):
            return False
        total += d.size
    return small(total)


def value_counts(data: Cells | np.ndarray, n: int) -> list[int]:
    """How many cells hold each of the values ``0 .. n-1`` (all in that range)."""
    if pure(data):
        assert isinstance(data, Cells)
        counts = [0] * n
        for value, count in Counter(data.values).items():
            counts[value] = count
        return counts
    counted: list[int] = np.bincount(to_numpy(data).ravel(), minlength=n).tolist()
    return counted


class NumpyField:
    """A dataclass field (``name: NumpyField = NumpyField()``, no default) that takes a
    numpy array or :class:`Cells` and reads as a numpy array (made from the Cells on the
    first read, then kept in their place). ``None`` stays None. The value lives in the
    instance's ``__dict__`` under the field's name, so copies and pickles carry it as is."""

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    @overload
    def __get__(self, obj: None, owner: type) -> NumpyField: ...
    @overload
    def __get__(self, obj: object, owner: type) -> np.ndarray: ...
    def __get__(self, obj: object | None, owner: type) -> Any:
        if obj is None:
            # dataclasses read the class attribute as the field's default: there is none
            raise AttributeError(self.name)
        value = obj.__dict__[self.name]
        if isinstance(value, Cells):
            value = obj.__dict__[self.name] = value.numpy()
        return value

    def __set__(self, obj: object, value: Cells | np.ndarray) -> None:
        obj.__dict__[self.name] = value


def held(obj: object, name: str) -> Any:
    """Field ``name`` of ``obj`` as it is held now: :class:`Cells` not yet read as numpy,
    or the numpy array (reading it through :func:`held` makes no numpy array)."""
    return obj.__dict__[name]


__all__ = [
    "I32",
    "SMALL_CELLS",
    "U8",
    "U32",
    "Cells",
    "NumpyField",
    "held",
    "pure",
    "small",
    "to_numpy",
    "value_counts",
]
