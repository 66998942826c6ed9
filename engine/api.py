"""The Python API for headless use: everything the command line does, without it.

>>> from engine import api
>>> m = api.load_map("maps/encounter.tmx")                       # doctest: +SKIP
>>> ws = api.system("whisperspace")                              # doctest: +SKIP
>>> hero = ws.token({"phys": 1, "athletics": 2})                 # doctest: +SKIP
>>> api.path(m, ws, hero, (0, 0), (39, 29))["turns"]             # doctest: +SKIP
"""

from __future__ import annotations

from typing import Any

from engine.batch import read_runs, run_batch
from engine.grid import Cell
from engine.mapmodel import MapModel
from engine.movement import MovementGraph
from engine.scenario import Scenario, load_scenario
from engine.search import find_path
from engine.search import reach as _reach
from engine.sim import Simulation, replay_states
from engine.systems.base import RuleSystem, Token
from engine.tiled import load_map

__all__ = [
    "MovementGraph",
    "Simulation",
    "graph",
    "load_map",
    "load_scenario",
    "path",
    "reach",
    "read_runs",
    "replay_states",
    "run_batch",
    "scenario",
    "system",
]


def system(name: str, **settings: Any) -> RuleSystem:
    """A rule system with its settings (RULES.md's rulings), e.g. ``system("d6", wild_one="none")``."""
    from engine import systems

    made: RuleSystem = systems.create(name, settings)
    return made


def graph(
    model: MapModel, rules: RuleSystem, token: Token, pace: str | None = None
) -> MovementGraph:
    """The movement graph (``.to_networkx()`` for networkx, ``.csr()`` for scipy)."""
    return MovementGraph(model, rules, token, pace)


def path(
    model: MapModel,
    rules: RuleSystem,
    token: Token,
    start: Cell,
    goal: Cell,
    *,
    pace: str | None = None,
    prefer: str = "fast",
) -> dict[str, Any]:
    """The best path, as `tacgrid path --json` reports it (raises NoPath with the reason)."""
    return find_path(MovementGraph(model, rules, token, pace), start, goal, prefer=prefer)


def reach(
    model: MapModel,
    rules: RuleSystem,
    token: Token,
    start: Cell,
    *,
    turns: int = 1,
    pace: str | None = None,
) -> dict[str, Any]:
    """Reachable cells with speed bands, as `tacgrid reach --json`, plus the search ``tree``."""
    graphs = {p: MovementGraph(model, rules, token, p) for p in rules.paces}
    return _reach(graphs, pace or rules.fastest_pace, start, turns)


def scenario(path: str, **settings: Any) -> Scenario:
    """A validated scenario (``settings`` as ``--set``)."""
    return load_scenario(path, overrides=settings)
