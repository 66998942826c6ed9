"""Flight as momentum (RULES.md 6), in three layers.

* :mod:`engine.flight.model`: the :class:`~engine.flight.model.FlightRules` interface a
  rule system implements, with the states, choices and geometry it is written in
  (:mod:`engine.flight.states`, :mod:`engine.flight.geometry`, re-exported); it sits below
  the rule systems;
* :mod:`engine.flight.simulator`: choices flown turn by turn under a system's rules;
* :mod:`engine.flight.planner`: the A* planner for the fewest turns.

The ``fly`` report (JSON and text) lives in :mod:`engine.report.flight`.

This package file imports nothing eagerly: the rule systems import
``engine.flight.model``, which runs this file first, and must not drag in the simulator
or the planner (they sit above the systems). ``from engine.flight import X`` still works
for every name of the three modules, through a lazy module ``__getattr__`` (PEP 562).
"""

from __future__ import annotations

from collections.abc import Iterator
from types import ModuleType
from typing import Any


def _modules() -> Iterator[ModuleType]:
    """The three modules, each imported only when the one before lacks the name (model
    first, so that a model name never loads the simulator or the planner)."""
    import engine.flight.model as model

    yield model
    import engine.flight.simulator as simulator

    yield simulator
    import engine.flight.planner as planner

    yield planner


def __getattr__(name: str) -> Any:
    if not name.startswith("__"):
        for module in _modules():
            if name in vars(module):
                value = vars(module)[name]
                globals()[name] = value
                return value
    raise AttributeError(f"module 'engine.flight' has no attribute {name!r}")
