"""The Python API for headless use: everything the command line does, without it.

>>> from engine import api
>>> m = api.load_map("maps/encounter.tmx")                       # doctest: +SKIP
>>> ws = api.system("whisperspace")                              # doctest: +SKIP
>>> hero = ws.token({"phys": 1, "athletics": 2})                 # doctest: +SKIP
>>> api.path(m, ws, hero, (0, 0), (39, 29))["turns"]             # doctest: +SKIP
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from typing import Any

from engine.batch import need_tables, read_runs, run_batch
from engine.eventlog import replay_states
from engine.grid import Cell
from engine.mapmodel import MapModel
from engine.movement import MovementGraph
from engine.occupancy import Other
from engine.query import Query
from engine.report import notebook  # maps, paths and reaches show themselves in Jupyter
from engine.report.movement import path_json, reach_dict
from engine.scenario import Scenario, load_scenario
from engine.search import PathAnswer, ReachAnswer
from engine.sim import Simulation
from engine.systems.base import RuleSystem, Token
from engine.tiled import load_map

load_map = notebook.shows_map(load_map)  # a MapModel that shows itself in a notebook

__all__ = [
    "Context",
    "MovementGraph",
    "Other",
    "Query",
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
    "BatchResult",
    "SweepResult",
    "batch",
    "sweep",
    "results",
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


@notebook.shows_path  # the contract's dict, drawn on its map in a notebook
def path(
    model: MapModel,
    rules: RuleSystem,
    token: Token,
    start: Cell,
    goal: Cell,
    *,
    pace: str | None = None,
    prefer: str = "fast",
    size: int = 1,
    others: Iterable[Other] = (),
    tokens_block: str = "enemies",
    engine: str = "compiled",
    acts: Iterable[str] = (),
    via: Sequence[Cell] = (),
) -> PathAnswer:
    """The best path, as `tacgrid path --json` reports it (raises NoPath with the reason);
    the typed answer is :meth:`engine.query.Query.path`'s.

    ``size``: the token's cells across (engine.footprint); ``others``: tokens in the way
    (:class:`engine.occupancy.Other`), blocking or passed as ``tokens_block`` says;
    ``engine``: ``"compiled"`` or ``"networkx"``; ``acts``: the token's actions besides
    moving each turn (``rules.acts``' names, as ``--act``) (:class:`engine.query.Query`);
    ``via``: cells to pass through in order, as ``--via`` (a route priced as one plan)."""
    query = Query(
        model,
        rules,
        token,
        pace=pace,
        size=size,
        others=others,
        tokens_block=tokens_block,
        engine=engine,
        acts=acts,
    )
    return query.path(start, goal, prefer=prefer, via=via)


@notebook.shows_reach  # the contract's dict and the tree, drawn on its map in a notebook
def reach(
    model: MapModel,
    rules: RuleSystem,
    token: Token,
    start: Cell,
    *,
    turns: int = 1,
    pace: str | None = None,
    size: int = 1,
    others: Iterable[Other] = (),
    tokens_block: str = "enemies",
    engine: str = "compiled",
    acts: Iterable[str] = (),
) -> ReachAnswer:
    """Reachable cells with speed bands, as `tacgrid reach --json`, plus the search ``tree``
    (``size``, ``others``, ``tokens_block``, ``engine`` and ``acts`` as :func:`path`;
    allies' cells left out); the typed answer is :meth:`engine.query.Query.reach`'s."""
    query = Query(
        model,
        rules,
        token,
        size=size,
        others=others,
        tokens_block=tokens_block,
        engine=engine,
        acts=acts,
    )
    return query.reach(start, turns=turns, pace=pace)


class Context:
    """One map, one rule system and one token, loaded once and then asked many times: a
    :class:`engine.query.Query` with landmarks (:attr:`query`), whose map may be given as a
    file, answering as :func:`path` and :func:`reach` do.

    >>> ctx = api.Context("maps/encounter.tmx", ws, hero)           # doctest: +SKIP
    >>> ctx.path((0, 0), (39, 29))["turns"]                          # doctest: +SKIP
    >>> len(ctx.reach((20, 20), pace="walk")["cells"])               # doctest: +SKIP

    ``model`` is a :class:`MapModel` or a map file (read without the pytmx data only a
    renderer needs). The movement graph of each pace is built on first use and kept; the
    first path query of a pace also finds a few landmarks' exact distances
    (:class:`engine.search.Landmarks`, on maps up to
    :data:`engine.search.LANDMARK_NODES` nodes), which make every later query an A* that
    expands little more than its own corridor; larger maps search with the vectorised A*.
    Answers are those of :func:`path` and :func:`reach` (same dicts, same exact totals);
    ``ctx.query`` answers the same questions typed. ``acts``: the token's actions besides
    moving each turn, as :func:`path`'s.
    """

    def __init__(
        self,
        model: MapModel | str | os.PathLike[str],
        rules: RuleSystem,
        token: Token,
        *,
        pace: str | None = None,
        size: int = 1,
        others: Iterable[Other] = (),
        tokens_block: str = "enemies",
        engine: str = "compiled",
        acts: Iterable[str] = (),
    ) -> None:
        from engine.tiled import load_map as read_model

        if not isinstance(model, MapModel):
            model = read_model(model)
        self.query = Query(
            model,
            rules,
            token,
            pace=pace,
            size=size,
            others=others,
            tokens_block=tokens_block,
            landmarks=True,
            engine=engine,
            acts=acts,
        )
        self.model = model

    def graph(self, pace: str | None = None, start: Cell | None = None) -> MovementGraph:
        """The movement graph at ``pace`` (:meth:`engine.query.Query.graph`)."""
        return self.query.graph(pace, start)

    def path(
        self,
        start: Cell,
        goal: Cell,
        *,
        pace: str | None = None,
        prefer: str = "fast",
        safe_below: float | None = None,
        via: Sequence[Cell] = (),
    ) -> dict[str, Any]:
        """The best path as :func:`path` answers it (:meth:`engine.query.Query.path`);
        ``via``: cells to pass through in order (a route priced as one plan, its ``legs``)."""
        found = self.query.path(
            start, goal, pace=pace, prefer=prefer, safe_below=safe_below, via=via
        )
        return path_json(found)

    def reach(self, start: Cell, *, turns: int = 1, pace: str | None = None) -> dict[str, Any]:
        """The reached cells as :func:`reach` answers them, with the search ``tree``
        (:meth:`engine.query.Query.reach`)."""
        return reach_dict(self.query.reach(start, turns=turns, pace=pace))

    def refresh(self, cells: Iterable[Cell] | None = None) -> None:
        """Re-read the map after it changed (:meth:`engine.query.Query.refresh`)."""
        self.query.refresh(cells)


def scenario(path: str, **settings: Any) -> Scenario:
    """A validated scenario (``settings`` as ``--set``)."""
    return load_scenario(path, overrides=settings)


class BatchResult:
    """A finished batch (``tacgrid run``): its summary, its runs, its survival chart; in
    Jupyter it shows itself as a small table of outcomes with 95% intervals."""

    def __init__(self, out_dir: str, summary: dict[str, Any]) -> None:
        self.out_dir = out_dir
        self.summary = summary

    def runs(self) -> list[dict[str, Any]]:
        """Every run's record (runs.jsonl)."""
        import os

        return read_runs(os.path.join(self.out_dir, "runs.jsonl"))

    def figure(self) -> Any:
        """The survival chart (a matplotlib Figure): P(captured / escaped by turn t)."""
        import os

        from engine.batch import RunsFile
        from engine.report.charts import survival_figure

        runs = RunsFile(os.path.join(self.out_dir, "runs.jsonl"))
        return survival_figure(runs, os.path.basename(self.summary["scenario"]))

    def _repr_html_(self) -> str:
        from engine.report.tables import html_table

        return html_table({"kind": "batch", "summary": self.summary})

    def __repr__(self) -> str:
        from engine.report.tables import format_report

        return format_report({"kind": "batch", "summary": self.summary})


class SweepResult:
    """A finished sweep (``tacgrid sweep``): its summary, its tables (``table()`` reads
    points.parquet, ``runs_table()`` runs.parquet, as pyarrow Tables: ``.to_pandas()``),
    its charts; in Jupyter a small table of the points."""

    def __init__(self, out_dir: str, doc: dict[str, Any]) -> None:
        self.out_dir = out_dir
        self.doc = doc

    def table(self) -> Any:
        import os

        need_tables("SweepResult.table")
        import pyarrow.parquet as pq

        from engine.sources import open_regular

        with open_regular(os.path.join(self.out_dir, "points.parquet"), "points table") as fh:
            return pq.read_table(fh)

    def runs_table(self) -> Any:
        import os

        need_tables("SweepResult.runs_table")
        import pyarrow.parquet as pq

        from engine.sources import open_regular

        with open_regular(os.path.join(self.out_dir, "runs.parquet"), "runs table") as fh:
            return pq.read_table(fh)

    def figure(self, outcome: str = "capture", heatmap: bool = False) -> Any:
        """The outcome rate against each varied parameter (or, with ``heatmap``, over a
        two-parameter grid), as a matplotlib Figure."""
        from engine.report.charts import heatmap_figure, sweep_figure

        return (heatmap_figure if heatmap else sweep_figure)(self.doc, outcome)

    def _repr_html_(self) -> str:
        from engine.report.tables import html_table

        return html_table(self.doc)

    def __repr__(self) -> str:
        from engine.report.tables import format_report

        return format_report(self.doc)


def batch(scenario_path: str, *, out_dir: str = "runs", **kw: Any) -> BatchResult:
    """:func:`engine.batch.run_batch` (same keywords), as a :class:`BatchResult`."""
    return BatchResult(out_dir, run_batch(scenario_path, out_dir=out_dir, **kw))


def sweep(
    scenario_path: str,
    vary: dict[str, list[Any]] | None = None,
    *,
    out_dir: str = "sweep",
    **kw: Any,
) -> SweepResult:
    """A sweep (``tacgrid sweep``): ``vary={"pursuer1.stats.move": [8, 10, 12]}``; other
    keywords as :func:`engine.sweep.run_sweep` (runs, seed, workers, scheduler, resume)."""
    from engine.sweep import run_sweep

    return SweepResult(out_dir, run_sweep(scenario_path, vary=vary, out_dir=out_dir, **kw))


def results(out_dir: str) -> BatchResult | SweepResult:
    """The finished batch or sweep in ``out_dir`` (what ``tacgrid report DIR`` shows)."""
    from engine.report.tables import load_results

    doc = load_results(out_dir)
    if doc["kind"] == "sweep":
        return SweepResult(out_dir, doc)
    return BatchResult(out_dir, doc["summary"])
