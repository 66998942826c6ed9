"""The movement queries: which engine answers (by the graph's size and kind), the public
path and reach functions, and the checks of their arguments.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import replace
from typing import cast

import numpy as np

from engine.errors import ArgumentError
from engine.grid import Cell
from engine.movement import MovementGraph
from engine.search.dijkstra import dijkstra
from engine.search.fields import compiled_field, compiled_path
from engine.search.frontier import (
    UNREACHED,
    _kernel_tree,
    frontier_path,
    frontier_search,
    supports_frontier,
)
from engine.search.landmarks import Landmarks, guided_path
from engine.search.nx import check_engine, nx_tree
from engine.search.odds import (
    _pareto,
    _risk_weighted,
    evaluate_path,
)
from engine.search.results import PathAnswer, ReachAnswer, ReachCell
from engine.search.tree import NoPath, SearchTree, _cells
from engine.search.window import climb_terrains, window_reach
from engine.timed import timed_search, timeline

#: Graphs with more nodes than this use scipy's compiled Dijkstra for map-wide paths.
COMPILED_ABOVE = 20_000


def check_cell(graph: MovementGraph, cell: Cell, role: str) -> None:
    """An :class:`~engine.errors.ArgumentError` with ``role`` (``"start"``, ``"goal"``)
    where ``cell`` is off the map."""
    g = graph.grid
    if not g.in_bounds(cell):
        raise ArgumentError(
            role=role,
            given=f"{cell[0]},{cell[1]}",
            problem=f"outside the map ({g.width} x {g.height} cells; "
            f"cells are col,row from 0,0 to {g.width - 1},{g.height - 1})",
        )


def parse_cell(text: str, role: str) -> Cell:
    """``"c,r"`` -> (c, r); bad text is an :class:`~engine.errors.ArgumentError` with
    ``role`` (``"start"``, ``"goal"``)."""
    parts = text.replace(" ", "").split(",")
    try:
        if len(parts) != 2:
            raise ValueError
        return (int(parts[0]), int(parts[1]))
    except ValueError:
        raise ArgumentError(
            role=role, given=f"'{text}'", problem="expected a cell as col,row such as 3,4"
        ) from None


def find_path(
    graph: MovementGraph,
    start: Cell,
    goal: Cell,
    *,
    prefer: str = "fast",
    guide: Landmarks | None = None,
    engine: str = "compiled",
) -> PathAnswer:
    """The best path (CONTRACT.md ``path``, typed); raises :class:`NoPath` with the reason.

    ``guide``: landmarks of this graph (:class:`Landmarks`), for a query context that asks
    many paths on one graph (A* with their heuristic; the same total). ``engine``:
    ``"networkx"`` finds the quickest way with networkx's Dijkstra (:mod:`engine.search.nx`);
    the safer ways weighed beside it are tacgrid's own risk-weighted searches either way."""
    fast = _quickest(graph, start, goal, prefer, guide, engine)
    candidates = [evaluate_path(graph, fast)]
    if any(c.check is not None for c in graph.costs):
        for weight in (None, 1.0, 4.0, 16.0):
            cells = _risk_weighted(graph, start, goal, weight)
            if cells and cells != fast:
                candidates.append(evaluate_path(graph, cells))
    pareto = _pareto(candidates)
    # Weighed by the figures the contract shows (p(no failure) as a float), as the front is.
    if prefer == "fast":
        best = min(candidates, key=lambda c: (c.ticks, -float(c.p_no_failure)))
    else:
        best = max(candidates, key=lambda c: (float(c.p_no_failure), -c.ticks))
    return replace(
        best,
        prefer=prefer,
        pareto=tuple(c.option() for c in pareto) if len(pareto) > 1 else (),
    )


def _quickest(
    graph: MovementGraph, start: Cell, goal: Cell, prefer: str, guide: Landmarks | None, engine: str
) -> Sequence[Cell]:
    """The arguments of :func:`find_path` checked, and the quickest way's cells."""
    check_engine(engine, graph)
    check_cell(graph, start, "start")
    check_cell(graph, goal, "goal")
    if prefer not in ("fast", "safe"):
        raise ArgumentError(role="prefer", given=prefer, problem="expected fast or safe")
    goal_cost = graph.costs[int(graph.model.terrain_ids[goal[1], goal[0]])]
    if start != goal and goal_cost.time is None:
        raise NoPath(f"goal {goal[0]},{goal[1]} cannot be entered: {goal_cost.reason}")
    fast = _fast_cells(graph, start, goal, guide, engine)
    if fast is None:
        raise NoPath(_unreachable_reason(graph, start, goal))
    return fast


def best_cells(
    graph: MovementGraph,
    start: Cell,
    goal: Cell,
    *,
    prefer: str = "fast",
    guide: Landmarks | None = None,
    engine: str = "compiled",
) -> Sequence[Cell]:
    """The cells of :func:`find_path`'s answer, without pricing it where nothing is to
    weigh (the quickest way on a graph without checks): a route prices its legs once,
    joined (:func:`engine.search.find_route`)."""
    if prefer == "fast" and not any(c.check is not None for c in graph.costs):
        return _quickest(graph, start, goal, prefer, guide, engine)
    return find_path(graph, start, goal, prefer=prefer, guide=guide, engine=engine).cells


def search_tree(
    graph: MovementGraph,
    start: Cell,
    *,
    limit: float | None = None,
    goal: Cell | None = None,
    engine: str = "compiled",
) -> SearchTree:
    """The search from ``start`` as the token's turns go: time-dependent
    (:mod:`engine.timed`) when its first turns run at other paces, else :func:`dijkstra`
    (``engine="networkx"``: networkx's, :func:`engine.search.nx.nx_tree`)."""
    if engine == "networkx":
        return nx_tree(graph, start, limit=limit)
    tl = timeline(graph)
    if tl is None:
        if goal is None and limit is not None:
            tree = _kernel_tree(graph, start, limit)
            if tree is not None:
                return tree
        return dijkstra(graph, start, limit=limit, goal=goal)
    idx = None if goal is None else graph.grid.index(goal)
    dist, prev = timed_search(graph, tl, graph.node(start), limit=limit, goal=idx)
    # Labels are exact ticks: Fractions where a cell is split between turns (they compare
    # and convert to turns like the floats of the static searches).
    return SearchTree(graph, start, cast("dict[int, float]", dist), prev, limit)


def _fast_cells(
    graph: MovementGraph,
    start: Cell,
    goal: Cell,
    guide: Landmarks | None = None,
    engine: str = "compiled",
) -> Sequence[Cell] | None:
    if engine == "networkx":
        return nx_tree(graph, start).path_to(goal) or None
    if timeline(graph) is not None:
        return search_tree(graph, start, goal=goal).path_to(goal) or None
    if guide is not None and guide.graph is graph and not graph.euclid:
        return guided_path(graph, guide, start, goal)
    if graph.n * graph.n_states > COMPILED_ABOVE:
        if supports_frontier(graph):
            return frontier_path(graph, start, goal)
        return compiled_path(graph, start, goal)
    return dijkstra(graph, start, goal=goal).path_to(goal) or None


def _unreachable_reason(graph: MovementGraph, start: Cell, goal: Cell) -> str:
    if graph.n * graph.n_states > COMPILED_ABOVE and supports_frontier(graph):
        field = frontier_search(graph, start).field().reshape(graph.n_states, graph.n)
        reached = int(np.count_nonzero((field != UNREACHED).any(axis=0)))
    elif graph.n * graph.n_states > COMPILED_ABOVE:
        reached = len(compiled_field(graph, start).cells())
    else:
        reached = len(dijkstra(graph, start).cells())
    return (
        f"no route from {start[0]},{start[1]} to {goal[0]},{goal[1]}: the goal is cut off "
        f"for this token ({reached} cells reachable from the start)"
    )


def _reprice_climbs(graph: MovementGraph, tree: SearchTree, turns: int) -> None:
    """Give the cells whose searched path crosses a climb priced in whole successes
    (:meth:`RuleSystem.climb_odds`) the exact figure of that path (:func:`evaluate_path`),
    and drop those it puts beyond ``turns``.

    The search orders by each cell's mean-rate time: a Dijkstra weight must belong to one
    edge, while a climb's exact expected time belongs to the whole run (the successes
    banked before a cell, the slip chain, the turn boundary it starts at). The exact
    figure is never below the mean one, so no cell the exact figures reach is missed;
    the path to a cell is the search's (the fastest by mean rates)."""
    climbs = climb_terrains(graph)
    if not climbs:
        return
    is_climb = np.isin(graph.model.terrain_ids.ravel(), climbs)
    crosses: dict[int, bool] = {}
    for cell in list(tree.cells()):
        node = tree.best_node(cell)
        assert node is not None
        chain: list[int] = []
        cur: int | None = node
        while cur is not None and cur not in crosses:
            chain.append(cur)
            cur = tree.prev.get(cur)
        for nd in reversed(chain):
            back = tree.prev.get(nd)
            crosses[nd] = back is not None and (crosses[back] or bool(is_climb[nd % graph.n]))
        if not crosses[node]:
            continue
        t = evaluate_path(graph, _cells(graph, tree.nodes_to(node))).turns
        if t > turns:
            del tree._best[cell]
        else:
            tree.exact[cell] = t


def reach(
    graphs: dict[str, MovementGraph],
    pace: str,
    start: Cell,
    turns: int = 1,
    *,
    engine: str = "compiled",
    window: bool = True,
) -> ReachAnswer:
    """Every cell reachable within ``turns`` at ``pace``, with its speed band (``engine``
    as :func:`find_path`'s). ``window``: answer from the compiled search's arrays where it
    can (:func:`engine.search.window.window_reach`, the same answer); False walks the
    search's cells in Python (the plain way it is tested against).

    ``graphs`` holds one graph per pace of the system (slowest first). Within the first
    turn a cell's band is the slowest pace that reaches it in one turn; beyond it, the
    band is the turn it is reached in (``turn2``, ``turn3``, ...).
    """
    main = graphs[pace]
    check_engine(engine)
    check_cell(main, start, "start")
    if turns < 1:
        raise ArgumentError(role="turns", given=str(turns), problem="expected a whole number >= 1")
    if window and engine == "compiled":
        found = window_reach(graphs, pace, start, turns)
        if found is not None:
            return found
    return _walked_reach(graphs, pace, start, turns, engine)


def _walked_reach(
    graphs: dict[str, MovementGraph], pace: str, start: Cell, turns: int, engine: str
) -> ReachAnswer:
    """:func:`reach` the plain way: the search's cells walked in Python."""
    main = graphs[pace]
    tree = search_tree(main, start, limit=turns * main.denominator, engine=engine)
    static = timeline(main) is None
    # The main search already holds what a one-turn search at its pace would find.
    one_turn = [c for c, node in tree._best.items() if tree.dist[node] <= main.denominator]
    _reprice_climbs(main, tree, turns)
    first_turn: dict[Cell, str] = {}
    for name, g in graphs.items():
        if g is main and static:
            for cell in one_turn:
                first_turn.setdefault(cell, name)
        else:
            sub = search_tree(g, start, limit=g.denominator, engine=engine)
            for cell in sub.cells():
                first_turn.setdefault(cell, name)
        if g is main:
            # A band is asked only of cells the main pace reaches within one turn (the
            # exact figure of a climb is never below its search's): no faster pace, later
            # in the list, can be the slowest that reaches one of them.
            break
    cells: list[ReachCell] = []
    den = main.denominator
    if tree.exact:
        order = sorted((tree.ticks(c), c[1], c[0]) for c in tree.cells())
    else:
        dist = tree.dist
        order = sorted((dist[node], c[1], c[0]) for c, node in tree._best.items())
    band_of = first_turn.get
    add = cells.append
    for ticks, r, c in order:
        cell = (c, r)
        if type(ticks) is int:  # whole ticks: the Fraction's figures by integer division
            band = (band_of(cell) or pace) if ticks <= den else f"turn{-(-ticks // den)}"
            add((cell, ticks / den, band))
            continue
        t = tree.turns(cell)
        assert t is not None
        band = (band_of(cell) or pace) if t <= 1 else f"turn{math.ceil(t)}"
        add((cell, float(t), band))
    return ReachAnswer(
        system=main.system.name,
        pace=pace,
        start=start,
        turns=turns,
        bands=tuple(graphs),
        cells=tuple(cells),
        tree=tree,
    )
