"""networkx as a search engine: the movement graph as networkx's DiGraph
(:meth:`MovementGraph.to_networkx`) searched with networkx's own Dijkstra.

The compiled engines answer faster; this one is the plain reference a reader can check by
hand, and the way to hand tacgrid's graphs to the rest of networkx. It answers the same
exact totals (tests/test_query.py compares it on every shipped map). A token whose paces
change turn by turn (D6 speeds, a time-dependent search: :mod:`engine.timed`) has no
static graph to hand over: it is refused with the reason.
"""

from __future__ import annotations

from typing import Any

from engine.errors import ArgumentError
from engine.movement import MovementGraph
from engine.search.tree import SearchTree
from engine.timed import timeline

#: What ``engine=`` (``--engine``) takes: tacgrid's own searches, or networkx's.
ENGINES = ("compiled", "networkx")


def check_engine(engine: str, graph: MovementGraph | None = None) -> str:
    """``engine`` if it is one of :data:`ENGINES` (and, for networkx, ``graph`` is a static
    one: :func:`check_static`), else one line saying why not."""
    if engine not in ENGINES:
        raise ArgumentError(
            role="engine", given=repr(engine), problem=f"expected {' or '.join(ENGINES)}"
        )
    if engine == "networkx" and graph is not None:
        check_static(graph)
    return engine


def check_static(graph: MovementGraph) -> None:
    """Refuse, with the reason, a graph whose search is time-dependent (no static graph)."""
    if timeline(graph) is not None:
        raise ArgumentError(
            role="engine",
            given="networkx",
            problem=f"{graph.system.name} at {graph.pace} changes pace turn by turn, which no "
            "static networkx graph holds; use the compiled engine",
        )


def nx_tree(graph: MovementGraph, start: Any, *, limit: float | None = None) -> SearchTree:
    """Distances (ticks) and predecessors from ``start`` up to ``limit`` ticks, by
    ``networkx.single_source_dijkstra`` on the graph's networkx form."""
    import networkx as nx

    check_static(graph)
    nxg = graph.to_networkx()
    source = graph.nx_label(graph.node(start))
    dist, paths = nx.single_source_dijkstra(nxg, source, cutoff=limit, weight="ticks")
    number = _numbering(graph)
    got: dict[int, float] = {number(label): d for label, d in dist.items()}
    prev: dict[int, int] = {}
    for label, way in paths.items():
        if len(way) > 1:
            prev[number(label)] = number(way[-2])
    return SearchTree(graph, start, got, prev, limit)


def _numbering(graph: MovementGraph) -> Any:
    """A networkx label back to the graph's node number."""
    states = {name: s for s, name in enumerate(graph.search.names)} if graph.n_sys > 1 else {}
    index, n, n_par = graph.grid.index, graph.n, graph.n_par

    def number(label: tuple[Any, ...]) -> int:
        s = states[label[2]] if len(label) == 3 else 0
        return (s * n_par + label[1]) * n + index(label[0])

    return number
