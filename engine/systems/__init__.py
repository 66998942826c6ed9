"""Rule systems, found automatically.

Every module in this package that defines ``SYSTEM`` (a
:class:`~engine.systems.base.RuleSystem` subclass) is a registered system: adding a
system is adding one module, nothing else changes. :func:`load_check` finds a system's
check syntax by name (``odds``/``roll``).
"""

from __future__ import annotations

import importlib
import pkgutil
from functools import cache
from typing import TYPE_CHECKING, Any

from engine.errors import ArgumentError, CheckError, did_you_mean

if TYPE_CHECKING:
    from engine.checks import Check


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
            role="system",
            given=name,
            problem=f"unknown rule system{did_you_mean(name, list(reg))}; systems: {', '.join(reg)}",
        )
    return reg[name]


def create(name: str, settings: dict[str, Any] | None = None) -> Any:
    """An instance of system ``name`` with ``settings`` (``--set`` values) applied."""
    return get(name)(settings)


def load_check(system: str, text: str) -> Check:
    """Parse ``text`` with ``engine.systems.<system>.parse_check``.

    An unknown system raises :class:`~engine.errors.CheckError` with a "did you mean"
    suggestion. (Every module here but ``base`` counts, registered system or not.)

    >>> str(load_check("whisperspace", "athletics=2 dc=6 bonus=1"))
    'athletics=2 dc=6 bonus=1 penalty=0'
    """
    name = system.strip().lower()
    known = sorted(
        m.name
        for m in pkgutil.iter_modules(__path__)
        if not m.name.startswith("_") and m.name != "base"
    )
    if name not in known:
        raise CheckError(
            f"system '{system}': unknown rule system{did_you_mean(name, known)}; "
            f"systems: {', '.join(known)}"
        )
    module = importlib.import_module(f"{__name__}.{name}")
    parse = getattr(module, "parse_check", None)
    if parse is None:
        raise CheckError(f"system '{name}': this rule system has no checks")
    check: Check = parse(text)
    return check
