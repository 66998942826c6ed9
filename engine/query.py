"""A token on a map, asked where it can get and how: the one front of ``tacgrid path`` and
``tacgrid reach``, of the Python API and of the viewer's reach overlay.

>>> q = Query(model, rules, token, size=2, others=[Other((5, 5))])   # doctest: +SKIP
>>> q.path((0, 0), (9, 9)).turns                                     # doctest: +SKIP
>>> len(q.reach((0, 0), turns=2).cells)                               # doctest: +SKIP

A query sees the map as the token's anchors do (:func:`engine.occupancy.sized_model`: a
token larger than one cell), with the other tokens in its way (:class:`Other`, blocking or
passed as ``tokens_block`` says; an ally's cell is passed, never stopped on). Its movement
graphs are built on first use, one per pace (and start, where tokens block: a token never
blocks its own start), and kept; ``landmarks=True`` also finds a few landmarks' exact
distances on a graph's first path (:class:`engine.search.Landmarks`), which makes every
later path an A* that expands little more than its own corridor. Answers are typed
(:class:`engine.search.PathAnswer`, :class:`engine.search.ReachAnswer`, with the search
``tree``); :mod:`engine.report.movement` makes CONTRACT.md's ``path`` and ``reach`` JSON.

The map must not change under a query: after editing the model (terrain, doors), call
:meth:`Query.refresh` with the changed cells, or make a new query.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import replace

from engine.errors import ArgumentError
from engine.grid import Cell
from engine.mapmodel import MapModel
from engine.movement import MovementGraph
from engine.occupancy import (
    Occupancy,
    Other,
    check_size,
    check_start,
    occupancy,
    sized_model,
    with_blocked,
)
from engine.search import (
    LANDMARK_NODES,
    Landmarks,
    NoPath,
    PathAnswer,
    ReachAnswer,
    check_engine,
    find_path,
    find_route,
    reach,
    supports_frontier,
)
from engine.systems.base import RuleSystem, Token

__all__ = ["Other", "Query"]


class Query:
    """``token`` (of ``rules``) on ``model``: its paths and reaches (see the module)."""

    def __init__(
        self,
        model: MapModel,
        rules: RuleSystem,
        token: Token,
        *,
        pace: str | None = None,
        size: int = 1,
        others: Iterable[Other] = (),
        tokens_block: str = "enemies",
        in_the_way: Occupancy | None = None,
        landmarks: bool = False,
        engine: str = "compiled",
        acts: Iterable[str] = (),
    ) -> None:
        """``in_the_way``: what the other tokens take away, where the caller has worked it
        out already (the turn loop's :meth:`~engine.sim.Simulation.occupancy_of`); else
        from ``others`` and ``tokens_block``. ``engine``: ``"compiled"`` (tacgrid's own
        searches, the default) or ``"networkx"`` (networkx's Dijkstra on the graph's
        networkx form: the same totals, slower; :mod:`engine.search.nx`). ``acts``: the
        token's actions besides moving each turn (names of ``rules.acts``, repeatable),
        priced by :meth:`RuleSystem.with_acts`: the moves around them are priced with
        their cost and penalties, and a pace not named is the fastest they leave
        (:meth:`RuleSystem.act_pace`); the answers name them (``acts``)."""
        self.model = model
        self.rules = rules
        self.acts = tuple(acts)
        if self.acts:
            token = rules.with_acts(token, self.acts)
        self.token = token
        self.pace = pace or self._pace(rules.default_pace)
        self.size = check_size(size)
        if in_the_way is None:
            in_the_way = occupancy(model.grid, self.size, others, tokens_block)
        self.in_the_way = in_the_way
        self.landmarks = landmarks
        self.engine = check_engine(engine)
        self._graphs: dict[tuple[str, frozenset[Cell]], MovementGraph] = {}
        self._guides: dict[tuple[str, frozenset[Cell]], Landmarks | None] = {}

    def _pace(self, pace: str) -> str:
        """``pace``, or the fastest slower one the token's acts leave."""
        return self.rules.act_pace(self.token, pace) if self.acts else pace

    # ----------------------------------------------------------------- graphs

    def _blocked(self, start: Cell | None) -> frozenset[Cell]:
        blocked = self.in_the_way.blocked
        return blocked - {start} if start is not None else blocked

    def graph(self, pace: str | None = None, start: Cell | None = None) -> MovementGraph:
        """The movement graph at ``pace`` (default: the query's) for a move from ``start``
        (the tokens in the way block every anchor but the start), built once."""
        pace = pace or self.pace
        key = (pace, self._blocked(start))
        found = self._graphs.get(key)
        if found is None:
            seen = sized_model(self.model, self.rules, self.token, pace, self.size)
            if key[1]:
                seen = with_blocked(seen, key[1])
            found = self._graphs[key] = MovementGraph(seen, self.rules, self.token, pace)
        return found

    def _guide(self, pace: str, start: Cell) -> Landmarks | None:
        key = (pace, self._blocked(start))
        if key not in self._guides:
            g = self.graph(pace, start)
            small = g.n * g.n_states <= LANDMARK_NODES
            self._guides[key] = Landmarks(g) if small and supports_frontier(g) else None
        return self._guides[key]

    def _check_start(self, start: Cell) -> None:
        check_start(self.model.grid, start, self.size)

    # ----------------------------------------------------------------- questions

    def path(
        self,
        start: Cell,
        goal: Cell,
        *,
        pace: str | None = None,
        prefer: str = "fast",
        safe_below: float | None = None,
        via: Sequence[Cell] = (),
    ) -> PathAnswer:
        """The best path (CONTRACT.md ``path``, typed); raises :class:`engine.search.NoPath` with
        the reason. ``safe_below``: the quickest path unless its p(no failure) is below it,
        then the safest (``prefer`` in the answer says which was taken). ``via``: cells to
        pass through on the way, in order: the best route through them priced as one plan
        (:func:`engine.search.find_route`; the answer's ``legs``)."""
        pace = pace or self.pace
        self._check_start(start)
        if goal in self.in_the_way.no_stop:
            raise NoPath(
                f"goal {goal[0]},{goal[1]} is an ally's cell: a token may pass through it but "
                "not stop there"
            )
        graph = self.graph(pace, start)
        guide = self._guide(pace, start) if self.landmarks and self.engine == "compiled" else None
        engine = self.engine
        if via:
            points = [start, *via, goal]
            if safe_below is None:
                found = find_route(graph, points, prefer=prefer, guide=guide, engine=engine)
                return self._named(found)
            fast = find_route(graph, points, prefer="fast", guide=guide, engine=engine)
            if float(fast.p_no_failure) >= safe_below:
                return self._named(fast)
            safe = find_route(graph, points, prefer="safe", guide=guide, engine=engine)
            return self._named(safe if safe.p_no_failure > fast.p_no_failure else fast)
        if safe_below is None:
            found = find_path(graph, start, goal, prefer=prefer, guide=guide, engine=engine)
            return self._named(found)
        fast = find_path(graph, start, goal, prefer="fast", guide=guide, engine=engine)
        # Weighed as the contract shows p(no failure): a float.
        fast_p = float(fast.p_no_failure)
        if fast_p >= safe_below:
            return self._named(fast)
        safe = find_path(graph, start, goal, prefer="safe", guide=guide, engine=engine)
        return self._named(safe if float(safe.p_no_failure) > fast_p else fast)

    def _named(self, answer: PathAnswer) -> PathAnswer:
        """``answer`` naming the acts it was priced with."""
        return replace(answer, acts=self.acts) if self.acts else answer

    def reach(self, start: Cell, *, turns: int = 1, pace: str | None = None) -> ReachAnswer:
        """Every cell the token reaches from ``start`` within ``turns`` (CONTRACT.md
        ``reach``, typed, at ``pace``, default the query's: the pace its paths move at), with
        the search ``tree``; allies' cells are left out (passed, never stopped on). The
        first turn's bands are the paces up to ``pace``: a faster pace asked bands the
        cells each slower one reaches too."""
        rules = self.rules
        pace = pace or self.pace
        if pace not in rules.paces:
            raise ArgumentError(
                role="pace", given=pace, problem=f"{rules.name} paces are {', '.join(rules.paces)}"
            )
        self._check_start(start)
        graphs = {p: self.graph(p, start) for p in rules.paces}
        rep = reach(graphs, pace, start, turns, engine=self.engine)
        no_stop = self.in_the_way.no_stop
        if no_stop:
            kept = tuple(c for c in rep.cells if c[0] == start or c[0] not in no_stop)
            rep = replace(rep, cells=kept)
        return replace(rep, acts=self.acts) if self.acts else rep

    def refresh(self, cells: Iterable[Cell] | None = None) -> None:
        """Re-read the map after it changed: ``cells`` that changed terrain (each graph of a
        one-cell token is patched), or None for anything else (doors, walls; a larger
        token's graphs: they are rebuilt)."""
        self._guides.clear()
        if cells is None or self.size != 1:
            self._graphs.clear()
            return
        changed = list(cells)
        for key, g in list(self._graphs.items()):
            if key[1]:
                del self._graphs[key]  # a blocked map is a copy: built again
            else:
                g.update_cells(changed)
