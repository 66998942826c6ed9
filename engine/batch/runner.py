"""A batch from start to end: the folder and its plan, the runs handed to an executor,
written in run order and tallied, the summary and table at the end."""

from __future__ import annotations

import contextlib
import json
import os
import signal
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from engine import version
from engine.batch.control import (
    BatchStopped,
    _FolderLock,
    _signals_held,
    _Stop,
    _stop_on_signals,
    out_folder,
)
from engine.batch.dask import (
    DaskCluster,
    _check_address,
    _close_client,
    _cluster_logs_quiet,
    _connect,
)
from engine.batch.pool import LocalPool
from engine.batch.results import (
    RUNS_TABLE,
    RunsTable,
    _line,
    _remove,
    _sort_file,
    _write_atomic,
    finish_runs_table,
    iter_runs,
    tables_available,
)
from engine.batch.tally import Tally
from engine.batch.work import (
    CHUNK,
    WORKER_CACHE,
    ChunkFn,
    Executor,
    InProcess,
    Job,
    WorkerCache,
    _Plan,
    run_seed,
)
from engine.errors import ArgumentError, Wording, literal
from engine.safeio import AppendFile, rename_over
from engine.sources import read_json_file

if TYPE_CHECKING:
    from engine.scenario import MapRead

#: The most runs one batch may have: runs.jsonl holds about 0.45 KB a run, so this is
#: already some 450 GB of results; a larger study is several batches with other seeds.
MAX_RUNS = 10**9

#: Local worker processes per CPU at most (the runs are CPU-bound).
WORKERS_PER_CPU = 2

#: ``progress(runs done, runs in the batch, outcome counts so far)``.
ProgressFn = Callable[[int, int, dict[str, int]], None]


def _read_meta(meta_path: str) -> dict[str, Any] | None:
    if not os.path.exists(meta_path):
        return None
    try:  # a regular file within the cap, finite JSON (engine.sources)
        old = read_json_file(meta_path, "batch", ArgumentError)
    except ArgumentError:
        old = None
    if not isinstance(old, dict) or not isinstance(old.get("runs"), int):
        raise ArgumentError(
            role="resume",
            problem=f"{literal(meta_path)} is damaged; use another {{out}} or drop {{resume}}",
            others=("out", "resume"),
        )
    return old


def run_batch(
    scenario_path: str,
    *,
    runs: int | None = None,
    seed: int | None = None,
    workers: int = 1,
    scheduler: str | None = None,
    out_dir: str = "runs",
    resume: bool = False,
    force: bool = False,
    overrides: dict[str, Any] | None = None,
    progress: ProgressFn | None = None,
    note: Callable[[Wording], None] | None = None,
    chunk_fn: ChunkFn | None = None,
    cache: WorkerCache | None = None,
    executor: Executor | None = None,
    same_map: MapRead | None = None,
) -> dict[str, Any]:
    """Run a batch and write ``runs.jsonl`` and ``summary.json`` into ``out_dir``.

    An existing batch in ``out_dir`` is refused unless ``resume`` (complete it; a larger
    ``runs`` extends it to the same results as a fresh batch of that size) or ``force``
    (replace it once the new batch's first runs are in). ``runs`` defaults to the resumed
    batch's size, else the scenario's. ``note`` receives one-line remarks (a capped
    ``workers``). ``cache``: the worker cache the batch plays from and warms (this
    process's :data:`engine.batch.work.WORKER_CACHE` if not given). ``chunk_fn`` replaces
    the cache's :meth:`WorkerCache.run_chunk` (same arguments); it exists for tests that
    make a worker die, and must be picklable for ``workers > 1``. ``executor``: where the
    runs play, chosen by the caller (a sweep's point on a cluster it is connected to:
    engine.batch.dask.DaskPoints); ``workers`` and ``scheduler`` then go unused.
    ``same_map``: the scenario's map as the caller read it already
    (engine.scenario.read_scenario_map; a sweep's, for every point), loaded from instead
    of reading the map file again where ``overrides`` leave the map as read
    (:func:`engine.scenario.load_scenario`'s ``same_map``).
    Raises :class:`BatchStopped` on SIGINT or SIGTERM (in the main thread).
    """
    from engine.scenario import load_scenario

    # Validated before anything runs, and loaded as the workers load it (overrides in order).
    ordered = dict(sorted((overrides or {}).items()))
    scenario = load_scenario(scenario_path, overrides=ordered, same_map=same_map)
    if runs is not None:
        _check_runs(runs)
    if workers < 1:
        raise ArgumentError(
            role="workers", given=str(workers), problem="expected a whole number >= 1"
        )
    if resume and force:
        raise ArgumentError(
            problem="{resume} and {force}: give one (complete the batch, or replace it)",
            others=("resume", "force"),
        )
    address = _check_address(scheduler) if scheduler else None
    out_folder(out_dir)
    lock = _FolderLock(out_dir)
    client = None
    try:
        with _stop_on_signals() as stop, _cluster_logs_quiet(address is not None):
            try:
                plan = _plan(scenario_path, scenario, runs, seed, out_dir, resume, force, overrides)
                if chunk_fn is None:
                    cache = WORKER_CACHE if cache is None else cache
                    # The runs made here use the scenario just loaded.
                    cache.prepared(scenario_path, plan.overrides, scenario)
                    job = Job(plan, cache.run_chunk, cache)
                else:
                    job = Job(plan, chunk_fn)
                # A cluster that cannot be reached is an error before anything is written.
                if executor is None:
                    client = _connect(address) if address else None
                    executor = _executor(job, workers, client, scheduler, note, stop)
                return _run(job, executor, progress, stop)
            except BatchStopped as early:
                if early.message:  # from _run, which says how far the batch got
                    raise
                name = signal.Signals(early.signum).name
                raise BatchStopped(
                    early.signum,
                    f"stopped by {name} before the batch started: no run was played; run the "
                    "same command again to start it",
                ) from None
            finally:
                if client is not None:
                    if isinstance(executor, DaskCluster):
                        executor.settle()  # its shipment dropped while the summary was written
                    _close_client(client)
    finally:
        lock.release()


def _check_runs(n: int) -> None:
    if n < 1:
        raise ArgumentError(role="runs", given=str(n), problem="expected a whole number >= 1")
    if n > MAX_RUNS:
        raise ArgumentError(
            role="runs",
            given=str(n),
            problem=f"at most {MAX_RUNS} runs in one batch (runs.jsonl takes about 0.45 KB a "
            "run); split the study into batches with different {seed}",
            others=("seed",),
        )


def _plan(
    scenario_path: str,
    scenario: Any,
    runs: int | None,
    seed: int | None,
    out_dir: str,
    resume: bool,
    force: bool,
    overrides: dict[str, Any] | None,
) -> _Plan:
    runs_path = os.path.join(out_dir, "runs.jsonl")
    meta_path = os.path.join(out_dir, "batch.json")
    summary_path = os.path.join(out_dir, "summary.json")
    base_seed = seed if seed is not None else scenario.seed
    meta = {
        "scenario": os.path.abspath(scenario_path),
        "digest": scenario.digest,
        "seed": base_seed,
        "runs": 0,
        "settings": {k: str(v) for k, v in sorted((overrides or {}).items())},
        "version": version(),
    }
    existing = os.path.exists(meta_path) or os.path.exists(runs_path)
    old = _read_meta(meta_path) if resume else None
    n = runs
    if old is not None:
        _check_version(old.get("version"), out_dir, "batch")
        if {**old, "runs": 0} != meta:
            raise ArgumentError(
                role="resume",
                problem=literal(
                    f"{out_dir} holds a batch of another scenario or seed "
                    f"({old.get('scenario')}, seed {old.get('seed')}, {old.get('runs')} runs)"
                )
                + "; use another {out} or drop {resume}",
                others=("out", "resume"),
            )
        if n is None:
            n = old["runs"]
        elif n < old["runs"]:
            raise ArgumentError(
                role="runs",
                given=str(n),
                problem=f"{literal(out_dir)} holds a batch of {old['runs']} runs; give {{runs}} "
                f"{old['runs']} or more to extend it, or another {{out}}",
                others=("runs", "out"),
            )
    elif existing and not resume and not force:
        raise ArgumentError(
            role="out",
            given=out_dir,
            problem="holds a batch already; add {resume} to complete or extend it, {force} to "
            "replace it, or give another {out}",
            others=("resume", "force", "out"),
        )
    if n is None:
        n = scenario.runs
    _check_runs(n)
    meta["runs"] = n
    tally = Tally()
    prefix, extra, ordered = 0, set[int](), True
    if resume:
        prefix, extra, ordered = _scan_done(runs_path, base_seed, n, tally)
    return _Plan(
        scenario_path=scenario_path,
        n=n,
        seed=base_seed,
        meta=meta,
        overrides=tuple(sorted((overrides or {}).items())),
        runs_path=runs_path,
        meta_path=meta_path,
        summary_path=summary_path,
        out_dir=out_dir,
        tally=tally,
        prefix=prefix,
        extra=extra,
        ordered=ordered,
        staged=not resume,
    )


def _check_version(made_by: Any, out_dir: str, what: str) -> None:
    """A batch (or sweep) is resumed only by the tacgrid version that made it: another
    version's rules would play the runs still to do, and the folder would mix the two."""
    if made_by == version():
        return
    by = f"tacgrid {made_by}" if isinstance(made_by, str) else "a tacgrid that did not record it"
    raise ArgumentError(
        role="resume",
        problem=literal(f"{out_dir} holds a {what} made by {by}, not this tacgrid {version()}; ")
        + "its runs would mix two versions' rules: replace it with {force} (no {resume}) "
        "or give another {out}",
        others=("force", "resume", "out"),
    )


def _scan_done(path: str, seed: int, n: int, tally: Tally) -> tuple[int, set[int], bool]:
    """Check the runs already in ``path`` and tally them: (in-order prefix, others, ordered)."""
    prefix, extra, ordered = 0, set[int](), True
    stray: int | None = None
    for r in iter_runs(path, repair=True):  # resuming: appends follow a whole record
        i = r["run"]
        if ordered and i == prefix:
            prefix += 1
        elif not 0 <= i < n or i < prefix or i in extra:
            stray = i
        else:
            ordered = False
            extra.add(i)
        if stray is None and r.get("seed") != run_seed(seed, i):
            stray = i
        if stray is not None:
            break
        tally.add(r)
    if stray is None:
        return prefix, extra, ordered
    raise ArgumentError(
        role="resume",
        problem=literal(f"{path} holds runs that are not this batch's (run {stray}, edited or ")
        + "copied in); use another {out} or drop {resume}",
        others=("out", "resume"),
    )


def _cap_workers(workers: int, chunks: int, note: Callable[[Wording], None] | None) -> int:
    cpus = os.cpu_count() or 1
    cap = max(1, min(chunks, WORKERS_PER_CPU * cpus))
    if workers > cap:
        if note:
            why = (
                f"the batch has {chunks} chunk{'s' if chunks != 1 else ''} of up to {CHUNK} runs to do"
                if cap == chunks
                else f"at most {WORKERS_PER_CPU} per CPU, {cpus} CPUs here"
            )
            note(Wording(f"{{workers}} {workers}: using {cap} ({why})", ("workers",)))
        return cap
    return workers


def _executor(
    job: Job,
    workers: int,
    client: Any,
    scheduler: str | None,
    note: Callable[[Wording], None] | None,
    stop: _Stop | None,
) -> Executor:
    """Where the batch's chunks play: the cluster if connected, else this process (one
    worker) or a pool of local worker processes (capped: :func:`_cap_workers`)."""
    if client is not None:
        return DaskCluster(client, scheduler or "")
    n_chunks = -(-job.todo // CHUNK)
    if n_chunks:
        workers = _cap_workers(workers, n_chunks, note)
    return InProcess() if workers == 1 else LocalPool(workers, stop)


def _run(
    job: Job, executor: Executor, progress: ProgressFn | None, stop: _Stop | None = None
) -> dict[str, Any]:
    plan = job.plan
    tally = plan.tally
    write_path = plan.runs_path + ".new" if plan.staged else plan.runs_path
    appender: AppendFile | None = None
    # A new batch's table is made from its records as they come, not read back from the file.
    table = RunsTable() if plan.staged and tables_available() else None
    try:
        if progress:
            progress(tally.n, plan.n, dict(tally.counts))
        if not plan.staged:
            # Resuming: the folder states the (perhaps larger) batch before any new run.
            _remove(plan.summary_path)
            _remove(os.path.join(plan.out_dir, RUNS_TABLE))  # made again at the end
            _write_atomic(plan.meta_path, json.dumps(plan.meta, indent=2) + "\n")
        if plan.staged:
            _remove(write_path)
        appender = AppendFile(write_path, "out")
        if plan.staged and not job.todo:  # pragma: no cover - a batch has >= 1 run
            _commit(plan, write_path)
        # Nothing left to play (a finished batch resumed): no pool started, no cluster asked.
        stream = (executor if job.todo else InProcess()).run(job)
        with contextlib.closing(stream):
            for results in stream:
                with _signals_held():
                    appender.append("".join(_line(r) for r in results).encode())
                    if plan.staged:
                        _commit(plan, write_path)
                        plan.staged = False
                    for r in results:
                        tally.add(r)
                if table is not None:
                    table.add(results)
                if progress:
                    progress(tally.n, plan.n, dict(tally.counts))
    except BatchStopped as stopped:
        raise BatchStopped(stopped.signum, _stopped(plan, stopped.signum)) from None
    finally:
        if appender is not None:
            appender.close()
        if plan.staged:  # stopped before its first runs: the old batch stays as it was
            _remove(write_path)
    try:
        if not plan.ordered:
            _sort_file(plan.runs_path)  # a file from an older tacgrid, written out of order
        summary = tally.summary(
            seed=plan.seed,
            scenario=plan.scenario_path,
            digest=plan.meta["digest"],
            results_path=plan.runs_path,
        )
        _write_atomic(plan.summary_path, json.dumps(summary, indent=2, sort_keys=True) + "\n")
        if tables_available():  # else the analysis extra is missing: runs.jsonl alone
            finish_runs_table(table, plan.runs_path, os.path.join(plan.out_dir, RUNS_TABLE))
        if stop is not None:
            stop.done = True  # from here a stop would find the batch whole: it waits
    except BatchStopped as stopped:
        with _signals_held():
            _unfinish(plan)
        raise BatchStopped(stopped.signum, _stopped(plan, stopped.signum)) from None
    return summary


def _unfinish(plan: _Plan) -> None:
    """After a stop while the summary and table were being written: neither stays (a batch
    with a summary is a finished one), nor a temporary file of theirs (engine.safeio's
    writers remove theirs, but a stop can land before they can; the folder is ours)."""
    _remove(plan.summary_path)
    _remove(os.path.join(plan.out_dir, RUNS_TABLE))
    made = (plan.summary_path, RUNS_TABLE, plan.runs_path)  # runs.jsonl: _sort_file's
    ends = tuple(f"-{os.path.basename(p)}.tmp" for p in made)
    with contextlib.suppress(OSError):
        for name in os.listdir(plan.out_dir):
            if name.startswith(".tacgrid-") and name.endswith(ends):
                _remove(os.path.join(plan.out_dir, name))


def _stopped(plan: _Plan, signum: int) -> Wording:
    name = signal.Signals(signum).name
    if plan.staged:
        return Wording.plain(
            f"stopped by {name} before the first runs were in; {plan.out_dir} is unchanged"
        )
    if plan.tally.n == plan.n:
        done = f"stopped by {name}: all {plan.n} runs are in {plan.runs_path}, but not the "
        rest = "summary and runs table; run the same command with {resume} to write them"
    else:
        done = f"stopped by {name}: {plan.tally.n} of {plan.n} runs are in {plan.runs_path}; "
        rest = "run the same command with {resume} to finish the batch"
    return Wording(literal(done) + rest, ("resume",))


def _commit(plan: _Plan, staged_path: str) -> None:
    """The new batch has started well: it replaces whatever the folder held."""
    _remove(plan.summary_path)
    _remove(os.path.join(plan.out_dir, RUNS_TABLE))
    _write_atomic(plan.meta_path, json.dumps(plan.meta, indent=2) + "\n")
    try:
        rename_over(staged_path, plan.runs_path, "out")  # the open descriptor follows it
    except OSError as exc:
        raise ArgumentError(
            role="out", given=plan.out_dir, problem=f"cannot write ({exc.strerror})"
        ) from None
