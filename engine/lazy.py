"""numpy, imported on first use (issue 20: quick commands start quickly).

The rule systems, the dice, the checks and the map model use numpy only inside functions,
yet ``tacgrid systems`` imports them all to list the systems; importing numpy is most of
that command's start-up. A module that needs numpy only at run time writes::

    from engine.lazy import numpy as np

and uses ``np`` as usual. ``np`` stays a stand-in: its first attribute read imports numpy,
and every read hands on to numpy (one Python call a read; the hot loops that matter import
numpy themselves). To type checkers ``numpy`` here is numpy.
"""

from __future__ import annotations

import importlib
from types import ModuleType
from typing import TYPE_CHECKING, Any


class LazyModule:
    """A stand-in for module ``name`` that imports it on the first attribute read and
    hands every read on to it from then on."""

    __slots__ = ("_lazy_name", "_lazy_module")

    def __init__(self, name: str) -> None:
        self._lazy_name = name
        self._lazy_module: ModuleType | None = None

    def __getattr__(self, attr: str) -> Any:
        if attr in LazyModule.__slots__:  # not set yet (copy, pickle): no recursion
            raise AttributeError(attr)
        module = self._lazy_module
        if module is None:
            module = self._lazy_module = importlib.import_module(self._lazy_name)
        return getattr(module, attr)

    def __repr__(self) -> str:
        return f"<lazy module {self._lazy_name!r}>"


if TYPE_CHECKING:
    import numpy as numpy
else:
    numpy = LazyModule("numpy")

__all__ = ["LazyModule", "numpy"]
