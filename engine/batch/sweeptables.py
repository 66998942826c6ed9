"""A sweep's own tables: ``runs.parquet`` (every point's runs, its parameters beside them),
``points.parquet`` (a row per point) and the paired block of its summary, made from each
point's runs table (its ``runs.parquet``), never by parsing runs.jsonl again.

:class:`SweepTables` takes each point as the sweep writes it (engine.batch.sweep), while a
cluster plays the next ones: it reads the point's runs table once, keeps the point's rows of
the sweep's table (up to :data:`SWEEP_HELD` runs in all) and pairs it with its reference,
so that after the last point only the sweep's own files are left to write.
:func:`write_tables` makes the two tables from the points' folders alone.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from typing import Any

from engine.batch.paired import (
    PAIR_COLUMNS,
    PointRuns,
    block_of,
    pair_runs,
    point_runs,
    reference_of,
)
from engine.batch.results import iter_runs, run_columns, run_fields, runs_table_of, write_table

#: Runs per record batch of the sweep's runs.parquet (each point's runs from its first).
ROWS_PER_BATCH = 1024
#: The outcomes every summary reports, found or not.
OUTCOMES = ("capture", "escape", "timeout")
#: The sweep's tables, in its folder.
RUNS_TABLE = "runs.parquet"
POINTS_TABLE = "points.parquet"
#: Runs whose rows of the sweep's runs table are held from their point's turn to the end
#: (some 100 bytes a run); a larger sweep reads its points' runs tables again at the end.
SWEEP_HELD = 1 << 18


def _arrow_type(values: list[Any]) -> Any:
    import pyarrow as pa

    if all(isinstance(v, bool) for v in values):
        return pa.bool_()
    if all(isinstance(v, int) and not isinstance(v, bool) for v in values):
        return pa.int64()
    if all(isinstance(v, int | float) and not isinstance(v, bool) for v in values):
        return pa.float64()
    return pa.string()


def _param_column(values: list[Any], kind: Any) -> list[Any]:
    import pyarrow as pa

    if kind == pa.string():
        return [v if isinstance(v, str) else json.dumps(v) for v in values]
    if kind == pa.float64():
        return [float(v) for v in values]
    return values


def runs_schema(spec: dict[str, Any]) -> Any:
    """``runs.parquet``: the point, every varied parameter, then the run's record."""
    import pyarrow as pa

    fields = [pa.field("point", pa.string(), nullable=False)]
    for p in spec["params"]:
        fields.append(pa.field(p["name"], _arrow_type(p["values"]), nullable=False))
    fields += [
        pa.field("point_seed", pa.int64(), nullable=False),
        *run_fields(tuple(spec.get("measures", ()))),
    ]
    return pa.schema(fields)


def points_schema(spec: dict[str, Any]) -> Any:
    """``points.parquet``: the point, its parameters, runs, and per outcome its count,
    rate and 95% Wilson interval; the turns' mean, median and 90th percentile."""
    import pyarrow as pa

    fields = [pa.field("point", pa.string(), nullable=False)]
    for p in spec["params"]:
        fields.append(pa.field(p["name"], _arrow_type(p["values"]), nullable=False))
    fields += [
        pa.field("point_seed", pa.int64(), nullable=False),
        pa.field("runs", pa.int64(), nullable=False),
    ]
    for o in OUTCOMES:
        fields += [
            pa.field(o, pa.int64(), nullable=False),
            pa.field(f"{o}_rate", pa.float64(), nullable=False),
            pa.field(f"{o}_lo", pa.float64(), nullable=False),
            pa.field(f"{o}_hi", pa.float64(), nullable=False),
        ]
    fields += [
        pa.field("turns_mean", pa.float64(), nullable=False),
        pa.field("turns_p50", pa.float64(), nullable=False),
        pa.field("turns_p90", pa.float64(), nullable=False),
    ]
    return pa.schema(fields)


def _point_batches(
    spec: dict[str, Any], schema: Any, p: dict[str, Any], folder: str, table: Any | None
) -> Iterator[Any]:
    """Point ``p``'s record batches of the sweep's runs table: from its runs ``table``
    (engine.batch.results.runs_table_of), else read from its runs.jsonl."""
    import pyarrow as pa

    names = [prm["name"] for prm in spec["params"]]
    measures = tuple(spec.get("measures", ()))

    def batch(runs: dict[str, Any], n: int) -> Any:
        cols: dict[str, Any] = {"point": [p["point"]] * n}
        for name in names:
            cols[name] = _param_column([p["params"][name]] * n, schema.field(name).type)
        cols["point_seed"] = [p["seed"]] * n
        cols.update(runs)  # the columns of a batch's runs.parquet
        return pa.RecordBatch.from_pydict(cols, schema=schema)

    if table is not None:
        arrays = {name: table.column(name).combine_chunks() for name in table.column_names}
        for start in range(0, table.num_rows, ROWS_PER_BATCH):
            part = {name: a.slice(start, ROWS_PER_BATCH) for name, a in arrays.items()}
            yield batch(part, min(ROWS_PER_BATCH, table.num_rows - start))
        return
    rows: list[dict[str, Any]] = []
    for r in iter_runs(os.path.join(folder, "runs.jsonl")):
        rows.append(r)
        if len(rows) == ROWS_PER_BATCH:
            yield batch(run_columns(rows, measures), len(rows))
            rows = []
    if rows:
        yield batch(run_columns(rows, measures), len(rows))


class SweepTables:
    """A sweep's tables made point by point as the sweep writes its points (in any order):
    :meth:`point_written` after each, then :meth:`paired` and :meth:`write` at the end.

    Held between: each point's rows of the sweep's runs table while the sweep has at most
    ``held`` runs (past it they are dropped and read again at the end, in bounded memory);
    the runs of a reference point until every point paired with it is (points with common
    seeds: each against the first, engine.batch.paired), and a point's own until its
    reference is written."""

    def __init__(
        self, spec: dict[str, Any], out_dir: str, paired: bool, held: int = SWEEP_HELD
    ) -> None:
        self.spec = spec
        self.out_dir = out_dir
        self.held = held
        self.measures = tuple(spec.get("measures", ()))
        self.schema = runs_schema(spec)
        self.batches: dict[int, list[Any]] | None = {}
        self.size = 0
        points = spec["points"]
        self.refs = reference_of(spec["params"], points, "first") if paired else None
        self.users: dict[int, int] = {}  # a reference -> its points not yet paired
        for ref in self.refs or ():
            if ref is not None:
                self.users[ref] = self.users.get(ref, 0) + 1
        self.refruns: dict[int, PointRuns] = {}  # references with points still to pair
        self.waiting: dict[int, PointRuns] = {}  # points whose reference is still playing
        self.rows: dict[int, dict[str, Any]] = {}

    def _folder(self, i: int) -> str:
        return os.path.join(self.out_dir, "points", self.spec["points"][i]["point"])

    def point_written(self, i: int) -> None:
        """Point ``i`` is finished in its folder: its runs table is read, once."""
        keep = self.batches is not None
        pair = self.refs is not None and (self.refs[i] is not None or i in self.users)
        if not (keep or pair):
            return
        table = runs_table_of(self._folder(i), self.measures)
        if self.batches is not None:
            n = table.num_rows if table is not None else None
            if n is None or self.size + n > self.held:
                self.batches = None  # read again at the end
            else:
                p = self.spec["points"][i]
                self.batches[i] = list(_point_batches(self.spec, self.schema, p, "", table))
                self.size += n
        if pair:
            cols = table.select(list(PAIR_COLUMNS)) if table is not None else None
            self._pair(i, point_runs(self._folder(i), table=cols))

    def _pair(self, i: int, runs: PointRuns) -> None:
        """Point ``i``'s paired row where its reference is written, and those of the
        points written before it that wait for it as their reference."""
        assert self.refs is not None
        ref = self.refs[i]
        if i in self.users:
            self.refruns[i] = runs
            for j in [j for j in self.waiting if self.refs[j] == i]:
                self._row(j, self.waiting.pop(j))
        if ref is not None:
            if ref in self.refruns:
                self._row(i, runs)
            else:
                self.waiting[i] = runs

    def _row(self, i: int, runs: PointRuns) -> None:
        assert self.refs is not None
        ref = self.refs[i]
        assert ref is not None
        points = self.spec["points"]
        got = pair_runs(self.refruns[ref], runs)
        self.rows[i] = {"point": points[i]["point"], "reference": points[ref]["point"], **got}
        self.users[ref] -= 1
        if not self.users[ref]:
            del self.refruns[ref]

    def paired(self, doc: dict[str, Any]) -> dict[str, Any]:
        """The sweep summary's ``paired`` block (engine.batch.paired.paired_block's)."""
        from engine.batch.paired import paired_block

        assert self.refs is not None
        wanted = [i for i, ref in enumerate(self.refs) if ref is not None]
        if any(i not in self.rows for i in wanted):  # a point not passed here
            return paired_block(self.out_dir, doc)
        return block_of([self.rows[i] for i in wanted], "first", "capture")

    def _run_batches(self) -> Iterator[Any]:
        """The sweep's runs table, point by point in grid order: the rows held, else each
        point's read again."""
        for i, p in enumerate(self.spec["points"]):
            if self.batches is not None and i in self.batches:
                yield from self.batches.pop(i)
                continue
            folder = self._folder(i)
            table = runs_table_of(folder, self.measures)
            yield from _point_batches(self.spec, self.schema, p, folder, table)

    def write(self, summaries: list[dict[str, Any]]) -> list[str]:
        """``runs.parquet`` and ``points.parquet`` in the sweep's folder, each whole or not
        at all."""
        import pyarrow as pa

        spec, out_dir = self.spec, self.out_dir
        runs_path = os.path.join(out_dir, RUNS_TABLE)
        write_table(runs_path, self.schema, self._run_batches())
        self.batches = None
        pschema = points_schema(spec)
        cols: dict[str, list[Any]] = {f.name: [] for f in pschema}
        for p, s in zip(spec["points"], summaries, strict=True):
            cols["point"].append(p["point"])
            for prm in spec["params"]:
                cols[prm["name"]].append(p["params"][prm["name"]])
            cols["point_seed"].append(p["seed"])
            cols["runs"].append(s["runs"])
            for o in OUTCOMES:
                cols[o].append(s["outcomes"].get(o, 0))
                cols[f"{o}_rate"].append(float(s["rates"].get(o, 0.0)))
                lo, hi = s["ci95"].get(o, (0.0, 1.0))
                cols[f"{o}_lo"].append(float(lo))
                cols[f"{o}_hi"].append(float(hi))
            for k in ("mean", "p50", "p90"):
                cols[f"turns_{k}"].append(float(s["turns"][k]))
        for prm in spec["params"]:
            cols[prm["name"]] = _param_column(cols[prm["name"]], pschema.field(prm["name"]).type)
        table = pa.RecordBatch.from_pydict(cols, schema=pschema)
        points_path = os.path.join(out_dir, POINTS_TABLE)
        write_table(points_path, pschema, [table])
        return [runs_path, points_path]


def write_tables(out_dir: str, spec: dict[str, Any], summaries: list[dict[str, Any]]) -> list[str]:
    """``runs.parquet`` and ``points.parquet`` in ``out_dir`` from its points' folders, each
    whole or not at all (streamed: a sweep of many large points holds one point at a time)."""
    return SweepTables(spec, out_dir, paired=False).write(summaries)
