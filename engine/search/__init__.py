"""Movement queries on a :class:`~engine.movement.MovementGraph`: paths, reach, plans, risk.

The engines give identical integer totals:

* a pure-Python Dijkstra (:mod:`.dijkstra`) that touches only what it reaches: reach
  queries and paths on small maps, with an early exit at the goal;
* an A* over the graph's framed step tables (:mod:`.frontier`): paths on big maps, in C
  (engine/_kernel.c, through :mod:`engine.kernel`) or with the frontier relaxed in numpy;
* A* with landmarks (:mod:`.landmarks`), for a query context that asks many paths of one
  graph (``engine.api.Context``);
* scipy's compiled Dijkstra on the graph's CSR arrays (:mod:`.fields`): distance fields,
  and paths under the ``euclid`` rule (float weights);
* networkx's Dijkstra on the graph's networkx form (:mod:`.nx`), chosen by name
  (``engine="networkx"``, ``--engine networkx``): the plain reference.

:mod:`.queries` chooses among them and answers ``path`` and ``reach``; :mod:`.route`
prices a route through waypoints as one plan; :mod:`.odds` prices
a path (times, checks, climbs, the turn plan, the Pareto front of time against safety). A
:class:`SearchTree` (:mod:`.tree`) keeps the distances and predecessors of one search, so
hovering over a cell in the viewer is a walk up the predecessor chain, never a new search.
The answers are typed (:mod:`.results`: :class:`PathAnswer`, :class:`ReachAnswer`, exact
figures kept exact); :mod:`engine.report.movement` makes CONTRACT.md's JSON of them.

Layers (an import-linter contract): route > queries > odds | landmarks > frontier | dijkstra |
fields | nx | results > tree.
"""

from __future__ import annotations

from engine.search.dijkstra import dijkstra
from engine.search.fields import compiled_field, compiled_path
from engine.search.frontier import (
    KEPT_SEARCH_NODES,
    UNREACHED,
    Frontier,
    frontier_path,
    frontier_search,
    kernel_fits,
    kernel_search,
    supports_frontier,
)
from engine.search.landmarks import LANDMARK_NODES, Landmarks, guided_path
from engine.search.nx import ENGINES, check_engine, nx_tree
from engine.search.odds import (
    EXACT_WITHIN_TURNS,
    MAX_PLAN_TURNS,
    PathOdds,
    evaluate_path,
    exact_cells,
    turn_plan,
)
from engine.search.queries import (
    COMPILED_ABOVE,
    check_cell,
    find_path,
    parse_cell,
    reach,
    search_tree,
)
from engine.search.results import Leg, PathAnswer, PathOption, ReachAnswer, ReachCell
from engine.search.route import find_route
from engine.search.tree import NoPath, SearchTree

__all__ = [
    "COMPILED_ABOVE",
    "ENGINES",
    "EXACT_WITHIN_TURNS",
    "KEPT_SEARCH_NODES",
    "LANDMARK_NODES",
    "MAX_PLAN_TURNS",
    "UNREACHED",
    "Frontier",
    "Landmarks",
    "Leg",
    "NoPath",
    "PathAnswer",
    "PathOdds",
    "PathOption",
    "ReachAnswer",
    "ReachCell",
    "SearchTree",
    "check_cell",
    "check_engine",
    "compiled_field",
    "compiled_path",
    "dijkstra",
    "evaluate_path",
    "exact_cells",
    "find_path",
    "find_route",
    "frontier_path",
    "frontier_search",
    "guided_path",
    "kernel_fits",
    "kernel_search",
    "nx_tree",
    "parse_cell",
    "reach",
    "search_tree",
    "supports_frontier",
    "turn_plan",
]
