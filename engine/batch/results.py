"""A batch's results on disk: ``runs.jsonl`` read back (a torn last line cut off) and
the ``runs.parquet`` table made from it."""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Iterable, Iterator
from typing import Any

from engine.batch.measures import ordered
from engine.errors import ArgumentError, MissingExtra, literal
from engine.safeio import truncate, write_text
from engine.sources import iter_lines, load_json


def _write_atomic(path: str, text: str) -> None:
    """Write a whole file or nothing (:func:`engine.safeio.write_text`: a unique temporary
    file, synced, renamed over ``path``; a special file or a link is refused)."""
    write_text(path, text, "out")


#: The encoder ``json.dumps(record, sort_keys=True)`` makes on each call, made once.
_ENCODER = json.JSONEncoder(sort_keys=True)


def _line(record: dict[str, Any]) -> str:
    return _ENCODER.encode(record) + "\n"


def iter_runs(path: str, *, repair: bool = False) -> Iterator[dict[str, Any]]:
    """The complete lines of a runs.jsonl, one at a time, read through
    :func:`engine.sources.iter_lines` (a regular file, each line size-capped). A torn last
    line from a kill is skipped; only a batch resuming into this file (``repair``) cuts it
    off: a report never writes to what it reads.

    A complete line that is not a run record means the file was edited or is another
    file: that is one clear error, not a half-resumed batch.
    """
    if not os.path.exists(path):
        return
    good_end = 0
    torn = False
    for n, line in enumerate(iter_lines(path, "runs", ArgumentError), 1):
        if not line.endswith(b"\n"):
            torn = True
            break
        good_end += len(line)
        if not line.strip():
            continue
        try:  # finite numbers only, nesting bounded
            record = load_json(line, path, ArgumentError)
        except ArgumentError:
            record = None
        if not (
            isinstance(record, dict)
            and isinstance(record.get("run"), int)
            and isinstance(record.get("outcome"), str)
            and isinstance(record.get("turns"), int)
        ):
            raise ArgumentError(
                problem=literal(f"{path}: line {n} is not a run record; ")
                + "it was edited or is not tacgrid's: use another {out} or drop {resume}",
                others=("out", "resume"),
            )
        yield record
    if torn and repair:
        truncate(path, good_end, "out")


def read_runs(path: str) -> list[dict[str, Any]]:
    """Every complete line of a runs.jsonl (see :func:`iter_runs`), as a list."""
    return list(iter_runs(path))


class RunsFile:
    """A runs.jsonl that can be iterated any number of times without holding it in
    memory (each pass reads the file again): for plots of a large batch."""

    def __init__(self, path: str) -> None:
        self.path = path

    def __iter__(self) -> Iterator[dict[str, Any]]:
        return iter_runs(self.path)


def _remove(path: str) -> None:
    with contextlib.suppress(FileNotFoundError):
        os.remove(path)


def _sort_file(path: str) -> None:
    results = sorted(iter_runs(path), key=lambda r: r["run"])
    _write_atomic(path, "".join(_line(r) for r in results))


#: The batch's runs as a table (Parquet, beside runs.jsonl): a row per run, in run order.
RUNS_TABLE = "runs.parquet"

#: Runs read from runs.jsonl per record batch (bounded memory), and rows per row group.
TABLE_CHUNK = 1024
TABLE_GROUP = 65_536


def tables_available() -> bool:
    """Whether pyarrow (the analysis extra) is installed: a batch then writes its
    ``runs.parquet``; without it the batch's runs are in runs.jsonl alone."""
    try:
        import pyarrow  # noqa: F401
        import pyarrow.parquet  # noqa: F401
    except ImportError:
        return False
    return True


def need_tables(what: str) -> None:
    """One line naming the analysis extra where pyarrow is not installed."""
    if not tables_available():
        raise MissingExtra("analysis", what)


def run_fields(measures: tuple[str, ...] = ()) -> list[Any]:
    """The columns of a run in a runs table (pyarrow fields): its index, seed, outcome,
    turns, who ended it, the cell it ended on and its event count, then a column per
    measure the scenario names (engine.batch.measures). A sweep's table puts its point and
    varied parameters before them (engine.sweep)."""
    import pyarrow as pa

    from engine.batch.measures import MEASURE_TYPES

    return [
        pa.field("run", pa.int64(), nullable=False),
        pa.field("seed", pa.int64(), nullable=False),
        pa.field("outcome", pa.string(), nullable=False),
        pa.field("turns", pa.int64(), nullable=False),
        pa.field("by", pa.string()),
        pa.field("col", pa.int64()),
        pa.field("row", pa.int64()),
        pa.field("events", pa.int64()),
        *(
            pa.field(m, pa.float64() if MEASURE_TYPES[m] == "float" else pa.int64())
            for m in measures
        ),
    ]


def measures_of(path: str) -> tuple[str, ...]:
    """The measures a runs.jsonl's records carry (its first record's: every run of a batch
    has its scenario's), in their canonical order (:func:`engine.batch.measures.ordered`)."""
    from engine.batch.measures import ordered

    for r in iter_runs(path):
        got = r.get("measures")
        return ordered(got) if isinstance(got, dict) else ()
    return ()


def run_columns(rows: list[dict[str, Any]], measures: tuple[str, ...] = ()) -> dict[str, list[Any]]:
    """The :func:`run_fields` columns of some runs.jsonl records."""
    cells = [r.get("cell") for r in rows]
    extra = {m: [(r.get("measures") or {}).get(m) for r in rows] for m in measures}
    return {
        "run": [r.get("run") for r in rows],
        "seed": [r.get("seed") for r in rows],
        "outcome": [r.get("outcome") for r in rows],
        "turns": [r.get("turns") for r in rows],
        "by": [r.get("by") for r in rows],
        "col": [c[0] if isinstance(c, list) and len(c) == 2 else None for c in cells],
        "row": [c[1] if isinstance(c, list) and len(c) == 2 else None for c in cells],
        "events": [r.get("events") for r in rows],
        **extra,
    }


#: The keys of a run record (:meth:`engine.sim.Outcome.to_dict`), and ``measures`` where
#: the scenario names some: what a runs table holds, so that :func:`fragment_records` gives
#: back the very records :func:`runs_fragment` took.
RUN_KEYS = frozenset({"run", "seed", "outcome", "turns", "cell", "by", "events"})


def runs_fragment(records: list[dict[str, Any]]) -> bytes:
    """Runs as one Parquet fragment (the :func:`run_fields` columns, a measure's after
    them, zstd): how a sweep's point comes back from a Dask worker, a few KB for thousands
    of runs. A record the table could not give back whole is refused: another key, or
    measures other than the first record's."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    first = records[0].get("measures") if records else None
    measures = ordered(first) if isinstance(first, dict) else ()
    keys = RUN_KEYS | {"measures"} if measures else RUN_KEYS
    for r in records:
        got = r.get("measures")
        if r.keys() != keys or (
            measures and (not isinstance(got, dict) or ordered(got) != measures)
        ):
            raise ValueError(f"a run record with other keys than a runs table's: {sorted(r)}")
    schema = pa.schema(run_fields(measures))
    sink = pa.BufferOutputStream()
    cols = run_columns(records, measures)
    table = pa.Table.from_arrays(
        [arrow_column(cols[f.name], f.type) for f in schema], schema=schema
    )
    pq.write_table(table, sink, compression="zstd")
    return bytes(sink.getvalue().to_pybytes())


#: The most characters of a string column :func:`arrow_column` makes itself (32-bit offsets).
_STRING_BYTES = 2**31 - 1


def arrow_column(values: list[Any], kind: Any) -> Any:
    """``pa.array(values, type=kind)`` for a runs table's int64, float64 and string columns
    (None a null), made from numpy buffers: pyarrow's conversion of a Python list first asks
    whether it holds pandas objects, which imports pandas, about 0.2 s of CPU in the first
    task of every new Dask worker. Values it does not take exactly as pa.array does (a
    float or bool in an int64 column, an int past 2**53 in a float64 one, not text in a
    string one) go through pa.array. A test holds the two equal."""
    import numpy as np
    import pyarrow as pa

    present = [v for v in values if v is not None]
    if kind == pa.string():
        ok = all(type(v) is str for v in present)
    elif kind == pa.int64():
        ok = all(type(v) is int and -(2**63) <= v < 2**63 for v in present)
    elif kind == pa.float64():
        ok = all(type(v) is float or (type(v) is int and abs(v) <= 2**53) for v in present)
    else:
        ok = False
    if not ok:
        return pa.array(values, type=kind)
    n = len(values)
    nulls = n - len(present)
    validity = None
    if nulls:
        valid = np.fromiter((v is not None for v in values), dtype=bool, count=n)
        validity = pa.py_buffer(np.packbits(valid, bitorder="little"))
    if kind == pa.string():
        data = [b"" if v is None else v.encode() for v in values]
        offsets = np.zeros(n + 1, dtype=np.int64)
        np.cumsum([len(d) for d in data], out=offsets[1:])
        if offsets[-1] > _STRING_BYTES:
            return pa.array(values, type=kind)
        buffers = [validity, pa.py_buffer(offsets.astype(np.int32)), pa.py_buffer(b"".join(data))]
    else:
        dtype = np.float64 if kind == pa.float64() else np.int64
        filled = np.array([0 if v is None else v for v in values], dtype=dtype)
        buffers = [validity, pa.py_buffer(filled)]
    return pa.Array.from_buffers(kind, n, buffers, null_count=nulls)


def fragment_records(data: bytes) -> list[dict[str, Any]]:
    """The records :func:`runs_fragment` took, in its order, equal key for key."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    # ParquetFile, not read_table: that one imports pyarrow.dataset (and pandas), a second.
    cols = pq.ParquetFile(pa.BufferReader(data)).read().to_pydict()
    base = ("run", "seed", "outcome", "turns", "by", "col", "row", "events")
    measures = [name for name in cols if name not in base]
    out = []
    for i, (run, seed, outcome, turns, by, col, row, events) in enumerate(
        zip(*(cols[name] for name in base), strict=True)
    ):
        record = {
            "run": run,
            "seed": seed,
            "outcome": outcome,
            "turns": turns,
            "cell": None if col is None or row is None else [col, row],
            "by": by,
            "events": events,
        }
        if measures:
            record["measures"] = {m: cols[m][i] for m in measures}
        out.append(record)
    return out


def write_table(path: str, schema: Any, batches: Iterable[Any]) -> str:
    """Stream pyarrow record batches into a Parquet file (zstd), whole or not at all
    (:func:`engine.safeio.replace_with`: a temporary file renamed over ``path``)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from engine.safeio import replace_with

    def write(fd: int) -> None:
        # The temporary file's descriptor, wrapped for pyarrow (safeio syncs and closes it).
        with os.fdopen(fd, "wb", closefd=False) as sink:
            with pq.ParquetWriter(sink, schema, compression="zstd") as writer:
                group: list[Any] = []
                size = 0
                for b in batches:
                    group.append(b)
                    size += b.num_rows
                    if size >= TABLE_GROUP:
                        writer.write_table(pa.Table.from_batches(group, schema))
                        group, size = [], 0
                if group:
                    writer.write_table(pa.Table.from_batches(group, schema))

    return replace_with(path, write, "out")


#: Runs a batch holds as table batches while it plays (:class:`RunsTable`, some 70 bytes a
#: run): a larger batch makes its table from runs.jsonl at the end, in bounded memory.
TABLE_HELD = 1 << 18


class RunsTable:
    """A new batch's ``runs.parquet`` made from its records as they are appended to
    runs.jsonl, in the file's order, so that the table needs no second reading of the file:
    the very record batches :func:`write_runs_table` makes from the file (a test holds the
    bytes equal). Where a record is not as runs.jsonl gives it back (a cell that is not a
    list, measures that are not a mapping) or the batch passes ``held`` runs, it gives up
    (:attr:`whole` false) and the table is made from the file (:func:`finish_runs_table`)."""

    def __init__(self, held: int = TABLE_HELD) -> None:
        self.held = held
        self.whole = True
        self.measures: tuple[str, ...] | None = None
        self.batches: list[Any] = []
        self.rows: list[dict[str, Any]] = []
        self.n = 0

    def add(self, records: list[dict[str, Any]]) -> None:
        """The next records of runs.jsonl, in its order."""
        if not self.whole:
            return
        for r in records:
            cell, got = r.get("cell"), r.get("measures")
            if not (cell is None or isinstance(cell, list)) or not (
                got is None or isinstance(got, dict)
            ):
                self.drop()
                return
        if self.measures is None and records:
            first = records[0].get("measures")
            self.measures = ordered(first) if isinstance(first, dict) else ()
        self.n += len(records)
        if self.n > self.held:
            self.drop()
            return
        self.rows += records
        while len(self.rows) >= TABLE_CHUNK:
            self._batch(self.rows[:TABLE_CHUNK])
            del self.rows[:TABLE_CHUNK]

    def drop(self) -> None:
        """Give up: the table is made from runs.jsonl."""
        self.whole = False
        self.batches, self.rows = [], []

    def _batch(self, rows: list[dict[str, Any]]) -> None:
        import pyarrow as pa

        measures = self.measures or ()
        self.batches.append(
            pa.RecordBatch.from_pydict(
                run_columns(rows, measures), schema=pa.schema(run_fields(measures))
            )
        )

    def write(self, table_path: str) -> str:
        """``runs.parquet`` of the records added (all of runs.jsonl's)."""
        import pyarrow as pa

        if self.rows:
            self._batch(self.rows)
            self.rows = []
        schema = pa.schema(run_fields(self.measures or ()))
        return write_table(table_path, schema, self.batches)


def finish_runs_table(table: RunsTable | None, runs_path: str, table_path: str) -> str:
    """A finished batch's ``runs.parquet``: from ``table`` where it holds every run of
    runs.jsonl, else from the file (:func:`write_runs_table`)."""
    if table is not None and table.whole:
        return table.write(table_path)
    return write_runs_table(runs_path, table_path)


#: The columns of a runs table that pair two points' runs (engine.batch.paired).
PAIR_COLUMNS = ("run", "seed", "outcome", "turns")


def runs_table_of(
    folder: str, measures: tuple[str, ...] | None = None, columns: tuple[str, ...] | None = None
) -> Any | None:
    """A finished batch's runs as a pyarrow table, read from its ``runs.parquet`` (written
    with its runs.jsonl, from the same records, and removed before that file changes): the
    :func:`run_fields` columns for ``measures`` (any measures where None), or ``columns``
    of them alone. None where the folder has no such table: then read its runs.jsonl."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    path = os.path.join(folder, RUNS_TABLE)
    if not os.path.isfile(path) or os.path.islink(path):
        return None
    try:
        table = pq.ParquetFile(path)
        schema = table.schema_arrow
        base = pa.schema(run_fields(()))
        if measures is not None and schema != pa.schema(run_fields(measures)):
            return None
        if list(schema.names[: len(base)]) != base.names or not all(
            schema.field(f.name).type == f.type for f in base
        ):
            return None
        got = table.read(columns=list(columns) if columns is not None else None)
    except (OSError, pa.ArrowException):
        return None
    return got


def write_runs_table(runs_path: str, table_path: str) -> str:
    """``runs.parquet`` from a finished batch's runs.jsonl: the :func:`run_fields` columns,
    a row per run in run order. Made from the file alone, so a batch stopped and resumed
    gives the table of an uninterrupted one."""
    import pyarrow as pa

    measures = measures_of(runs_path)
    schema = pa.schema(run_fields(measures))

    def batches() -> Iterator[Any]:
        rows: list[dict[str, Any]] = []
        for r in iter_runs(runs_path):
            rows.append(r)
            if len(rows) == TABLE_CHUNK:
                yield pa.RecordBatch.from_pydict(run_columns(rows, measures), schema=schema)
                rows = []
        if rows:
            yield pa.RecordBatch.from_pydict(run_columns(rows, measures), schema=schema)

    return write_table(table_path, schema, batches())
