"""Rule systems, found automatically.

Every module in this package that defines ``SYSTEM`` (a
:class:`~engine.systems.base.RuleSystem` subclass) is a registered system: adding a
system is adding one module, nothing else changes.
"""

from __future__ import annotations

import importlib
import pkgutil
from functools import cache
from typing import Any

from engine.errors import ArgumentError, did_you_mean


@cache
def _registry() -> dict[str, type]:
    found: dict[str, type] = {}
    for info in pkgutil.iter_modules(__path__):
        if info.name.startswith("_") or info.name == "base":
            continue
        module = importlib.import_module(f"{__name__}.{info.name}")
        system = getattr(module, "SYSTEM", None)
        if system is not None:
            found[system.name] = system
    return dict(sorted(found.items()))


def names() -> list[str]:
    """Registered system names, sorted."""
    return list(_registry())


def get(name: str) -> Any:
    """The RuleSystem class called ``name``; unknown names get a "did you mean"."""
    # Fast path: a system lives in the module of its own name; importing only that one
    # keeps start-up short for commands that name their system.
    if name.isidentifier() and not name.startswith("_") and name != "base":
        try:
            module = importlib.import_module(f"{__name__}.{name}")
        except ModuleNotFoundError as exc:
            if exc.name != f"{__name__}.{name}":
                raise
        else:
            system = getattr(module, "SYSTEM", None)
            if system is not None and system.name == name:
                return system
    reg = _registry()
    if name not in reg:
        raise ArgumentError(
            f"--system {name}: unknown rule system{did_you_mean(name, list(reg))}; "
            f"systems: {', '.join(reg)}"
        )
    return reg[name]


def create(name: str, settings: dict[str, Any] | None = None) -> Any:
    """An instance of system ``name`` with ``settings`` (``--set`` values) applied."""
    return get(name)(settings)
