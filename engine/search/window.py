"""A reach read off the compiled search's arrays (:func:`window_reach`): the seam that makes a
reach as fast as a live drag needs.

The kernel's Dijkstra bounded by the mover's budget touches only the window of cells within
it (:func:`engine.search.frontier.kernel_reach`); this module turns its arrays into the
answer in numpy (each cell's least ticks, the order, the bands) where
:func:`engine.search.reach` walks them cell by cell in Python, and keeps the search tree as
those arrays until a hover asks for a path. It answers where the plain reach's figures are
the search's own: a static pace (:func:`engine.timed.timeline` is None) and no climb priced
in whole successes; elsewhere it answers None and the plain reach runs.
``tests/test_reach_window.py`` holds the two equal.
"""

from __future__ import annotations

import numpy as np

from engine.grid import Cell
from engine.movement import MovementGraph
from engine.search.frontier import kernel_reach
from engine.search.results import ReachAnswer
from engine.search.tree import SearchTree
from engine.timed import timeline


def climb_terrains(graph: MovementGraph) -> list[int]:
    """The terrains on which the token climbs in whole successes (:meth:`RuleSystem.climb_odds`):
    a reach re-prices the cells past them exactly."""
    system = graph.system
    return [
        k
        for k, t in enumerate(graph.model.terrains)
        if any(system.climb_odds(tok, t, graph.pace) is not None for tok in graph.search.tokens)
    ]


def _least(
    graph: MovementGraph, nodes: np.ndarray, ticks: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Each reached cell's index and least ticks over the search states."""
    if graph.n_states == 1:  # a node is its cell
        return nodes, ticks
    idx = nodes % graph.n
    order = np.lexsort((ticks, idx))
    idx, ticks = idx[order], ticks[order]
    first = np.ones(len(idx), dtype=bool)
    first[1:] = idx[1:] != idx[:-1]
    return idx[first], ticks[first]


def window_reach(
    graphs: dict[str, MovementGraph], pace: str, start: Cell, turns: int
) -> ReachAnswer | None:
    """:func:`engine.search.reach`'s answer (the same cells, times, bands and order, the
    same tree), from the kernel's arrays; None where it does not apply (see the module)."""
    main = graphs[pace]
    den = main.denominator
    slower: list[tuple[str, MovementGraph]] = []
    for name, g in graphs.items():
        if g is main:
            break
        slower.append((name, g))
    for g in (main, *(g for _, g in slower)):
        if timeline(g) is not None or climb_terrains(g):
            return None
    limit = turns * den
    got = kernel_reach(main, start, limit)
    if got is None:
        return None
    nodes, ticks, back = got
    idx, least = _least(main, nodes, ticks)
    w = main.grid.width
    rows, cols = np.divmod(idx, w)
    order = np.lexsort((cols, rows, least))
    idx, least, rows, cols = idx[order], least[order], rows[order], cols[order]
    # Band codes: 0.. the paces up to ``pace``, then turn2, turn3, ... for later turns.
    names = [name for name, _ in slower] + [pace] + [f"turn{k}" for k in range(2, turns + 1)]
    code = np.full(len(idx), -1, dtype=np.int64)
    first_turn = least <= den
    for k, (_, g) in enumerate(slower):
        sub = kernel_reach(g, start, g.denominator)
        if sub is None:
            return None
        at = np.isin(idx, _least(g, sub[0], sub[1])[0]) & (code < 0) & first_turn
        code[at] = k
    code[(code < 0) & first_turn] = len(slower)
    later = ~first_turn
    code[later] = len(slower) + (-(-least[later] // den)) - 1  # turn2 follows pace
    band = np.array(names, dtype=object)[code]
    cells = tuple(
        zip(
            zip(cols.tolist(), rows.tolist(), strict=True),
            (least / den).tolist(),
            band.tolist(),
            strict=True,
        )
    )
    return ReachAnswer(
        system=main.system.name,
        pace=pace,
        start=start,
        turns=turns,
        bands=tuple(graphs),
        cells=cells,
        tree=SearchTree.of_arrays(main, start, nodes, ticks, back, limit),
    )
