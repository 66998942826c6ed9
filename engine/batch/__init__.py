"""Headless batches: many seeded runs of a scenario, locally or on a Dask cluster.

The package's rooms, outer to inner (an import-linter contract holds the order):
``sweep`` (a batch per point of a grid) > ``runner`` (a batch from start to end) >
``pool`` (local worker processes) | ``dask`` (a Dask cluster) > ``work`` (seeds, chunks and
the worker cache) > ``control`` (lock, signals, collector pause) | ``tally`` (statistics) |
``results`` (runs.jsonl, runs.parquet).

* Run *i*'s seed is child *i* of ``numpy.random.SeedSequence(seed)`` (what ``spawn`` gives),
  made on its own when the run is handed out, so run *i* has the same seed however the batch
  is split (1 worker, 8, or a cluster) and however large it is: a batch of N runs is the
  first N runs of every larger batch with that seed.
* Runs are handed out lazily, in chunks, with a bounded number in flight; results are
  written to ``runs.jsonl`` in run order as they come back (a reorder buffer of at most the
  chunks in flight), one whole record per write (:class:`engine.safeio.AppendFile`). A kill
  leaves a prefix of the batch, at most one torn last line, which ``--resume`` drops and
  runs again. The summary comes from running tallies (counts, sums and a histogram of
  turns, exact since turns are small integers), so a batch of a million runs runs in
  bounded memory and its bytes do not depend on the worker count.
* The ``--out`` folder is locked (``fcntl.flock`` on ``DIR/.lock``) for the whole batch. An
  existing batch there is refused unless ``resume`` (complete or extend it) or ``force``
  (replace it, once the new batch's first runs are in).
* Local workers are a pool of this package's own (:class:`engine.batch.pool._Pool`): processes, each on its
  own socket, and no thread in this process, so no exit waits on one; a worker that dies
  ends its socket, and its chunks go to a new worker.
* SIGINT and SIGTERM stop a batch within moments: the workers are killed, the runs so far
  stay, and :class:`BatchStopped` says how far the batch got and how to resume. Inside the
  pool's own code a stop is noted and raised between its steps
  (:class:`engine.batch.control._Stop`). Workers die
  with the parent even on ``kill -9`` (Linux ``PR_SET_PDEATHSIG``; elsewhere a thread
  watching the parent).
* ``summary.json`` (CONTRACT.md ``run``) and ``runs.parquet`` are written atomically at the
  end, the summary with 95% Wilson intervals for every outcome; a batch stopped while they
  are written keeps neither, and ``--resume`` writes them without running anything again.
"""

from __future__ import annotations

from engine.batch.control import BatchStopped
from engine.batch.results import (
    RUNS_TABLE,
    RunsFile,
    iter_runs,
    need_tables,
    read_runs,
    run_columns,
    run_fields,
    tables_available,
    write_runs_table,
    write_table,
)
from engine.batch.runner import MAX_RUNS, ProgressFn, run_batch
from engine.batch.tally import Tally, summarise, wilson
from engine.batch.work import (
    CHUNK,
    ChunkFn,
    engine_digest,
    run_chunk,
    run_chunk_packed,
    run_seed,
    run_seeds,
)

__all__ = [
    "CHUNK",
    "MAX_RUNS",
    "RUNS_TABLE",
    "BatchStopped",
    "ChunkFn",
    "ProgressFn",
    "RunsFile",
    "Tally",
    "engine_digest",
    "iter_runs",
    "need_tables",
    "read_runs",
    "run_batch",
    "run_chunk",
    "run_chunk_packed",
    "run_columns",
    "run_fields",
    "run_seed",
    "run_seeds",
    "summarise",
    "tables_available",
    "wilson",
    "write_runs_table",
    "write_table",
]
