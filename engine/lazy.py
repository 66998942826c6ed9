"""numpy, imported on first use (issue 20: quick commands start quickly).

The rule systems, the dice, the checks and the map model use numpy only inside functions,
yet ``tacgrid systems`` imports them all to list the systems; importing numpy is most of
that command's start-up. A module that needs numpy only at run time writes::

    from engine.lazy import numpy as np

and uses ``np`` as usual. Until the first attribute read, ``np`` is a stand-in; that read
imports numpy and rebinds the name, in this module and in every ``engine`` module that
holds the stand-in, to numpy itself, so later uses cost nothing extra (no wrapper in the
hot loops). To type checkers ``numpy`` here is numpy.
"""

from __future__ import annotations

import importlib
import sys
from types import ModuleType
from typing import TYPE_CHECKING, Any


class LazyModule:
    """A stand-in for module ``name`` that imports it on the first attribute read."""

    __slots__ = ("_lazy_name",)

    def __init__(self, name: str) -> None:
        self._lazy_name = name

    def _lazy_load(self) -> ModuleType:
        module = importlib.import_module(self._lazy_name)
        # Hand every engine module holding this stand-in the module itself.
        for modname, mod in list(sys.modules.items()):
            if modname != "engine" and not modname.startswith("engine."):
                continue
            namespace = getattr(mod, "__dict__", None)
            if namespace is None:
                continue
            for key, value in list(namespace.items()):
                if value is self:
                    namespace[key] = module
        return module

    def __getattr__(self, attr: str) -> Any:
        if attr in LazyModule.__slots__:  # not set yet (copy, pickle): no recursion
            raise AttributeError(attr)
        return getattr(self._lazy_load(), attr)

    def __repr__(self) -> str:
        return f"<lazy module {self._lazy_name!r}>"


if TYPE_CHECKING:
    import numpy as numpy
else:
    numpy = LazyModule("numpy")

__all__ = ["LazyModule", "numpy"]
