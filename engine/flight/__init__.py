"""Flight as momentum (RULES.md 6), in three layers.

* :mod:`engine.flight.model`: states, choices, headings, geometry and the
  :class:`~engine.flight.model.FlightRules` interface a rule system implements; it sits
  below the rule systems;
* :mod:`engine.flight.simulator`: choices flown turn by turn under a system's rules;
* :mod:`engine.flight.planner`: the A* planner for the fewest turns.

The ``fly`` report (JSON and text) lives in :mod:`engine.report.flight`.

This package file imports nothing eagerly: the rule systems import
``engine.flight.model``, which runs this file first, and must not drag in the simulator
or the planner (they sit above the systems). ``from engine.flight import X`` still works
for every name of the three modules, through a lazy module ``__getattr__`` (PEP 562).
"""

from __future__ import annotations

import importlib
from typing import Any

#: Where each of the three modules' names lives, for ``from engine.flight import X``.
_HOMES = ("engine.flight.model", "engine.flight.simulator", "engine.flight.planner")


def __getattr__(name: str) -> Any:
    if not name.startswith("__"):
        for home in _HOMES:
            module = importlib.import_module(home)
            if name in vars(module):
                value = vars(module)[name]
                globals()[name] = value
                return value
    raise AttributeError(f"module 'engine.flight' has no attribute {name!r}")
