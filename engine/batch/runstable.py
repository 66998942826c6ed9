"""A fresh batch's ``runs.parquet`` made as its runs come in, not read back from runs.jsonl
at the end: the file is written record by record as before (nothing lost if the batch is
stopped), and the table's record batches are made alongside, while the workers play. At
the end only the Parquet file is written: no JSON is parsed again on the batch's serial
tail.

It is a twin of :func:`engine.batch.results.write_runs_table` (the plain way, from the
file alone), which still writes the table of a resumed batch or of one too big to hold:
tests/test_runs_table.py holds the two byte for byte equal.
"""

from __future__ import annotations

from typing import Any

from engine.batch import results
from engine.batch.measures import ordered
from engine.batch.results import run_columns, run_fields, write_table

#: Runs a batch's table is made for in memory at most (about 60 bytes a run as columns);
#: a bigger batch's table is made from its runs.jsonl at the end, in bounded memory.
IN_MEMORY_RUNS = 1_000_000


class RunsTable:
    """The ``runs.parquet`` of a batch whose runs arrive in run order from its first
    (:meth:`add` each lot as it is written to runs.jsonl, :meth:`write` at the end)."""

    def __init__(self) -> None:
        self.measures: tuple[str, ...] | None = None  # the first record's, as the file's
        self.schema: Any = None
        self.batches: list[Any] = []
        self.rows: list[dict[str, Any]] = []

    def add(self, records: list[dict[str, Any]]) -> None:
        """Records as runs.jsonl gets them, in order."""
        if not records:
            return
        if self.measures is None:
            import pyarrow as pa

            got = records[0].get("measures")
            self.measures = ordered(got) if isinstance(got, dict) else ()
            self.schema = pa.schema(run_fields(self.measures))
        self.rows.extend(records)
        chunk = results.TABLE_CHUNK  # the file's record batches, for the same row groups
        while len(self.rows) >= chunk:
            self._flush(self.rows[:chunk])
            del self.rows[:chunk]

    def _flush(self, rows: list[dict[str, Any]]) -> None:
        import pyarrow as pa

        assert self.measures is not None
        columns = run_columns(rows, self.measures)
        self.batches.append(pa.RecordBatch.from_pydict(columns, schema=self.schema))

    def write(self, table_path: str) -> str:
        """The table, whole or not at all (:func:`engine.batch.results.write_table`)."""
        import pyarrow as pa

        if self.rows:
            self._flush(self.rows)
            self.rows = []
        schema = self.schema if self.schema is not None else pa.schema(run_fields(()))
        return write_table(table_path, schema, iter(self.batches))
