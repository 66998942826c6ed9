"""Token policies: how a token plays when no person moves it (:class:`Policy`).

The built-in ones are in :mod:`engine.policies.builtin`; any subclass of :class:`Policy`
with a ``name``, in any module imported before the scenario is loaded, is registered too.
"""

from __future__ import annotations

from engine.errors import ArgumentError, did_you_mean
from engine.policies import builtin as _builtin  # noqa: F401  (registers the built-ins)
from engine.policies.base import (
    CELLS,
    DISTANCES,
    QUARRY_ODDS,
    READS,
    STAY,
    Aim,
    Goal,
    Policy,
    TurnView,
)

__all__ = [
    "CELLS",
    "DISTANCES",
    "QUARRY_ODDS",
    "READS",
    "STAY",
    "Aim",
    "Goal",
    "Policy",
    "TurnView",
    "get",
    "names",
    "unknown",
]

#: The built-ins first, in the order the docs list them; the others by name.
_ORDER = ("pursuer", "quarry", "waypoints", "idle", "human")


def names() -> tuple[str, ...]:
    """Every registered policy's name."""
    reg = Policy.registry
    return tuple(n for n in _ORDER if n in reg) + tuple(sorted(set(reg) - set(_ORDER)))


def get(name: str) -> Policy:
    """The policy called ``name`` (one instance per class); an unknown name is an
    :class:`~engine.errors.ArgumentError` naming the registered ones."""
    cls = Policy.registry.get(name)
    if cls is None:
        raise ArgumentError(
            role="policy",
            given=repr(name),
            problem=f"no such policy{unknown(name)}; policies: {', '.join(names())}",
        )
    return _instance(cls)


_made: dict[type[Policy], Policy] = {}


def _instance(cls: type[Policy]) -> Policy:
    got = _made.get(cls)
    if got is None:
        got = _made[cls] = cls()
    return got


def unknown(name: str) -> str:
    """What to say of a policy name that is not registered: a "did you mean" hint."""
    return did_you_mean(name[:80], list(names()))
