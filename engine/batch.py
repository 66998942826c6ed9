"""Headless batches: many seeded runs of a scenario, locally or on a Dask cluster.

Over 800 lines: the local pool, Dask, the folder lock, signals and resume are one control
flow around one results file.

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
* Local workers are a pool of this module's own (:class:`_Pool`): processes, each on its
  own socket, and no thread in this process, so no exit waits on one; a worker that dies
  ends its socket, and its chunks go to a new worker.
* SIGINT and SIGTERM stop a batch within moments: the workers are killed, the runs so far
  stay, and :class:`BatchStopped` says how far the batch got and how to resume. Inside the
  pool's own code a stop is noted and raised between its steps (:class:`_Stop`). Workers die
  with the parent even on ``kill -9`` (Linux ``PR_SET_PDEATHSIG``; elsewhere a thread
  watching the parent).
* ``summary.json`` (CONTRACT.md ``run``) and ``runs.parquet`` are written atomically at the
  end, the summary with 95% Wilson intervals for every outcome; a batch stopped while they
  are written keeps neither, and ``--resume`` writes them without running anything again.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import gc
import hashlib
import heapq
import json
import math
import os
import pickle
import signal
import struct
import sys
import threading
import time
import uuid
from collections import Counter
from collections.abc import Callable, Generator, Iterable, Iterator
from typing import Any

import numpy as np

from engine.errors import ArgumentError, ScenarioError, Stopped, TacgridError
from engine.safeio import AppendFile, open_lock, rename_over, truncate, write_pid, write_text

#: Runs per task handed to a worker process or a Dask worker.
CHUNK = 25
#: The most runs one batch may have: runs.jsonl holds about 0.45 KB a run, so this is
#: already some 450 GB of results; a larger study is several batches with other seeds.
MAX_RUNS = 10**9
#: Local worker processes per CPU at most (the runs are CPU-bound).
WORKERS_PER_CPU = 2
#: Chunks handed out ahead per worker (keeps every worker busy; bounds memory).
AHEAD_PER_WORKER = 4
#: Before workers start, this process plays the batch's first runs itself: one run in
#: ``WARM_SHARE`` of the batch, ``WARM_RUNS`` at most, one chunk at least (CHUNK at a time,
#: written as they come). The workers (forked after them, or sent their field cache) start
#: from what those runs learned, instead of each learning it again: on the square chase of
#: 1500 runs, 2 workers' CPU over 1 worker's was 1.15-1.19x with one chunk first; with the
#: turn loop of issue 20's last round it is 1.07-1.10x with 175 runs first and 1.01x with
#: 375, the batch's wall time the same (1.00-1.07 s); at 6000 runs 1.06-1.08x either way
#: (each worker still learns what the other has).
WARM_SHARE = 4
WARM_RUNS = 400
#: Seconds to reach a Dask scheduler before giving up.
CONNECT_TIMEOUT = 10.0
#: Runs per Dask task at most: a batch is split into about ``AHEAD_PER_WORKER`` tasks per
#: worker (a task costs the cluster some milliseconds of its own), never under ``CHUNK``.
DASK_CHUNK_MAX = 1000
#: A warm field cache ships to Dask workers when it pickles to at most this many bytes
#: (else each worker builds its own: the same results either way).
SHIP_MAX_BYTES = 64 * 2**20
#: Seconds the batch waits for every Dask worker to take its shipment (:func:`_ship`).
SHIP_WAIT_S = 60.0
#: Scenarios and their field caches kept per process, by (path, overrides[, shipment]):
#: the most recent few (a sweep makes one per point).
CACHE_KEPT = 4
_CACHE: dict[tuple[Any, ...], Any] = {}
#: The worker function's signature: (scenario path, overrides, [(run, seed), ...]) -> results.
ChunkFn = Callable[[str, tuple[tuple[str, Any], ...], list[tuple[int, int]]], list[dict[str, Any]]]
#: ``progress(runs done, runs in the batch, outcome counts so far)``.
ProgressFn = Callable[[int, int, dict[str, int]], None]


class BatchStopped(Stopped):
    """SIGINT or SIGTERM stopped a batch; the runs so far are kept for ``--resume``."""


def run_seed(seed: int, index: int) -> int:
    """The seed of run ``index`` of a batch with seed ``seed`` (child ``index`` of its
    ``SeedSequence``, made alone: no other run's seed is computed)."""
    child = np.random.SeedSequence(seed, spawn_key=(index,))
    return int(child.generate_state(1, dtype=np.uint32)[0])


def run_seeds(seed: int, runs: int) -> list[int]:
    """The seed of every run, independent of how the batch is split."""
    children = np.random.SeedSequence(seed).spawn(runs)
    return [int(c.generate_state(1, dtype=np.uint32)[0]) for c in children]


def _kept(key: tuple[Any, ...]) -> Any:
    """The :data:`_CACHE` entry for ``key`` (made the most recent), or None."""
    got = _CACHE.pop(key, None)
    if got is not None:
        _CACHE[key] = got
    return got


def _keep(key: tuple[Any, ...], value: Any) -> Any:
    _CACHE.pop(key, None)
    while len(_CACHE) >= CACHE_KEPT:
        del _CACHE[next(iter(_CACHE))]
    _CACHE[key] = value
    return value


def _prepared(path: str, overrides: tuple[tuple[str, Any], ...], scenario: Any = None) -> Any:
    """Scenario and field cache, loaded once per worker process and reused across tasks.

    ``scenario``: the scenario as the batch just loaded it (``overrides`` applied): kept
    with a new field cache unless the one kept is of the same file (its digest)."""
    from engine.sim import FieldCache

    key = (os.path.abspath(path), overrides)
    got = _kept(key)
    if scenario is not None and (got is None or got[0].digest != scenario.digest):
        got = _keep(key, (scenario, FieldCache(scenario)))
    if got is None:
        from engine.scenario import load_scenario

        scenario = load_scenario(path, overrides=dict(overrides))
        got = _keep(key, (scenario, FieldCache(scenario)))
    return got


def run_chunk(
    path: str, overrides: tuple[tuple[str, Any], ...], items: list[tuple[int, int]]
) -> list[dict[str, Any]]:
    """Run ``(run index, run seed)`` items; the worker function for pools and Dask.

    Each run counts the events of its log as it plays (``record="count"``: the log itself
    is not built), so its record carries the true number of events that
    ``--run-seed N --log FILE`` writes.
    """
    scenario, fields = _prepared(path, overrides)
    return _play(scenario, fields, items)


def _play(scenario: Any, fields: Any, items: list[tuple[int, int]]) -> list[dict[str, Any]]:
    from engine.sim import Simulation

    out = []
    with _collector_paused():
        for run, seed in items:
            sim = Simulation(scenario, seed, fields=fields, run=run, record="count")
            out.append(sim.run().to_dict())
    return out


#: Whether the local pool has frozen this process's objects for its workers (they inherit
#: it): :func:`_collector_paused` leaves them frozen. (Asking the collector how many
#: objects are frozen walks all of them: too slow to do after every chunk.)
_FROZEN = [False]


@contextlib.contextmanager
def _collector_paused() -> Iterator[None]:
    """The cyclic garbage collector's automatic passes paused while runs play, as ``timeit``
    pauses them, and resumed as they were.

    The runs make no reference cycles (tests/test_sim.py: none in hundreds of runs of every
    shipped scenario, once the first runs' imports are done), so a pass finds nothing; but
    each one walks every object the field cache keeps, and the cache grows as the batch
    learns: on the square chase the passes were a fifth of a 400-run chunk's CPU. Objects
    still go the moment their last reference does; a cycle some rule plug-in made would be
    collected once the chunk is over.

    Resumed, the collector would at once walk everything the chunk made (it counts the
    objects made since its last pass): instead they join its oldest generation as they
    are (``gc.freeze`` then ``gc.unfreeze``), where the next full pass, not this moment,
    looks at them. In the local pool's processes, whose objects are frozen for the forked
    workers (copy-on-write: a pass would touch, so copy, every page), they join the frozen
    ones: a worker ends with its batch."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        gc.freeze()
        if not _FROZEN[0]:
            gc.unfreeze()
        if was:
            gc.enable()


def _shipment(path: str, overrides: tuple[tuple[str, Any], ...]) -> bytes | None:
    """This process's scenario and warm field cache for ``path``, pickled whole for Dask
    workers (engine.sim.FieldCache pickles its memos kept by object ids keyed again on
    arrival: a worker starts from everything this process learned, as a forked one does);
    None where there is none, it does not pickle or is too big."""
    got = _kept((os.path.abspath(path), overrides))
    if got is None:
        return None
    try:
        blob = pickle.dumps(got, protocol=pickle.HIGHEST_PROTOCOL)
    except (pickle.PicklingError, TypeError, AttributeError):
        return None
    return blob if len(blob) <= SHIP_MAX_BYTES else None


@functools.lru_cache(maxsize=1)
def engine_digest() -> str:
    """A digest of this process's tacgrid engine (its ``.py`` files as read once): a shipped
    field cache is taken only by a worker whose engine is the client's."""
    root = os.path.dirname(os.path.abspath(__file__))
    h = hashlib.sha256()
    for folder, subfolders, names in os.walk(root):
        subfolders.sort()
        for name in sorted(names):
            if name.endswith(".py"):
                file = os.path.join(folder, name)
                h.update(os.path.relpath(file, root).encode() + b"\0")
                with open(file, "rb") as fh:
                    h.update(fh.read())
    return h.hexdigest()[:16]


def take_shipment(
    path: str, overrides: tuple[tuple[str, Any], ...], token: str, blob: bytes
) -> bool:
    """On a Dask worker (a task pinned to it, :func:`_ship`): keep the scenario and warm
    field cache a batch shipped (:func:`_shipment`) for its tasks (:func:`run_shipped`).
    Taken on the worker's task thread, not its event loop. ``token``: the client's
    :func:`engine_digest` and the shipment's name; a worker with another engine than the
    client's keeps nothing (its tasks load the scenario themselves). True if kept."""
    if token.partition("/")[0] != engine_digest():
        return False
    with _collector_paused():  # a cache is many objects made at once: no pass walks them
        scenario, fields = pickle.loads(blob)
    where = (os.path.abspath(path), overrides)
    for old in [k for k in _CACHE if len(k) == 3 and k[:2] == where]:
        del _CACHE[old]  # an earlier batch's shipment of this scenario (stopped, or not forgotten)
    _keep((*where, token), (scenario, fields))
    return True


def drop_shipment(path: str, overrides: tuple[tuple[str, Any], ...], token: str) -> None:
    """On a Dask worker (``Client.run``): forget a finished batch's shipment."""
    _CACHE.pop((os.path.abspath(path), overrides, token), None)


def run_shipped(
    path: str, overrides: tuple[tuple[str, Any], ...], token: str, items: list[tuple[int, int]]
) -> bytes:
    """:func:`run_chunk` on a Dask worker with the batch's shipment (:func:`take_shipment`):
    no scenario file read, no field built again. A worker without it (one that joined or
    was restarted since, or runs another engine) runs :func:`run_chunk`: the same runs.
    The results come back packed (:func:`_packed`)."""
    got = _kept((os.path.abspath(path), overrides, token))
    if got is None:
        return run_chunk_packed(path, overrides, items)
    return _packed(_play(got[0], got[1], items))


def run_chunk_packed(
    path: str, overrides: tuple[tuple[str, Any], ...], items: list[tuple[int, int]]
) -> bytes:
    """:func:`run_chunk`, its results packed (:func:`_packed`): a Dask task's where nothing
    was shipped."""
    return _packed(run_chunk(path, overrides, items))


def _packed(results: list[dict[str, Any]]) -> bytes:
    """A Dask task's results as one pickle. Returned as a list, each run's record is a
    separate object to Dask: it measures each one's size and serializes each apart (a
    pickle, a module lookup and a frame apiece), which cost a worker's event loop more CPU
    than the task took to play its runs' turns from the cache. One ``bytes`` is one frame,
    and the client unpacks it (:func:`_unpacked`)."""
    return pickle.dumps(results, protocol=pickle.HIGHEST_PROTOCOL)


def _unpacked(value: Any) -> list[dict[str, Any]]:
    """A Dask task's results, as :func:`_packed` sent them (a test's own ``chunk_fn``
    returns its list as it is)."""
    return pickle.loads(value) if isinstance(value, bytes) else value


def wilson(k: int, n: int, z: float = 1.959963984540054) -> tuple[float, float]:
    """95% Wilson score interval for k successes in n trials."""
    if n == 0:
        return (0.0, 1.0)
    p = k / n
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    lo = 0.0 if k == 0 else max(0.0, centre - half)
    hi = 1.0 if k == n else min(1.0, centre + half)
    return (lo, hi)


def _nth(hist: Counter[int], rank: int) -> int:
    """The value at 0-based ``rank`` in the sorted multiset ``hist`` (value -> count)."""
    seen = 0
    for value in sorted(hist):
        seen += hist[value]
        if rank < seen:
            return value
    raise IndexError(rank)


def _hist_percentile(hist: Counter[int], n: int, q: float) -> float:
    """Linear-interpolated percentile of a histogram (exactly as of the sorted values)."""
    if n == 0:
        return 0.0
    k = (n - 1) * q
    lo, hi = math.floor(k), math.ceil(k)
    a, b = _nth(hist, lo), _nth(hist, hi)
    return float(a + (b - a) * (k - lo))


class Tally:
    """Running aggregates of a batch: outcome counts, turn sums and turn histograms.

    Its size depends on the distinct outcomes and turn counts (at most the turn limit), not
    on the number of runs; the summary it gives equals one made from every result.
    """

    def __init__(self) -> None:
        self.n = 0
        self.counts: Counter[str] = Counter()
        self.turns: Counter[int] = Counter()
        self.by_outcome: dict[str, Counter[int]] = {}

    def add(self, record: dict[str, Any]) -> None:
        outcome, turns = record["outcome"], int(record["turns"])
        self.n += 1
        self.counts[outcome] += 1
        self.turns[turns] += 1
        self.by_outcome.setdefault(outcome, Counter())[turns] += 1

    def summary(self, *, seed: int, scenario: str, results_path: str) -> dict[str, Any]:
        """The ``summary.json`` document (CONTRACT.md ``run``)."""
        n = self.n
        names = sorted(set(self.counts) | {"capture", "escape", "timeout"})
        by_outcome = {}
        for name in names:
            hist = self.by_outcome.get(name)
            if hist:
                m = sum(hist.values())
                by_outcome[name] = {
                    "mean": sum(t * c for t, c in hist.items()) / m,
                    "p50": _hist_percentile(hist, m, 0.5),
                    "p90": _hist_percentile(hist, m, 0.9),
                }
        total = sum(t * c for t, c in self.turns.items())
        return {
            "scenario": scenario,
            "runs": n,
            "seed": seed,
            "outcomes": {k: self.counts.get(k, 0) for k in names},
            "rates": {k: self.counts.get(k, 0) / n if n else 0.0 for k in names},
            "ci95": {k: list(wilson(self.counts.get(k, 0), n)) for k in names},
            "turns": {
                "mean": total / n if n else 0.0,
                "p50": _hist_percentile(self.turns, n, 0.5),
                "p90": _hist_percentile(self.turns, n, 0.9),
            },
            "turns_by_outcome": by_outcome,
            "results": results_path,
        }


def summarise(
    results: Iterable[dict[str, Any]], *, seed: int, scenario: str, results_path: str
) -> dict[str, Any]:
    """The ``summary.json`` document (CONTRACT.md ``run``), independent of result order."""
    tally = Tally()
    for r in results:
        tally.add(r)
    return tally.summary(seed=seed, scenario=scenario, results_path=results_path)


def _write_atomic(path: str, text: str) -> None:
    """Write a whole file or nothing (:func:`engine.safeio.write_text`: a unique temporary
    file, synced, renamed over ``path``; a special file or a link is refused)."""
    write_text(path, text, "--out")


def _line(record: dict[str, Any]) -> str:
    return json.dumps(record, sort_keys=True) + "\n"


def iter_runs(path: str) -> Iterator[dict[str, Any]]:
    """The complete lines of a runs.jsonl, one at a time (a torn last line from a kill is
    cut off the file and skipped).

    A complete line that is not a run record means the file was edited or is another
    file: that is one clear error, not a half-resumed batch.
    """
    if not os.path.exists(path):
        return
    good_end = 0
    torn = False
    with open(path, "rb") as fh:
        for n, line in enumerate(fh, 1):
            if not line.endswith(b"\n"):
                torn = True
                break
            good_end += len(line)
            if not line.strip():
                continue
            try:
                record = json.loads(line)
            except ValueError:
                record = None
            if not (
                isinstance(record, dict)
                and isinstance(record.get("run"), int)
                and isinstance(record.get("outcome"), str)
                and isinstance(record.get("turns"), int)
            ):
                raise ArgumentError(
                    f"{path}: line {n} is not a run record; it was edited or is not tacgrid's: "
                    "use another --out or drop --resume"
                )
            yield record
    if torn:
        truncate(path, good_end, "--out")


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


# --------------------------------------------------------------------------- the folder


class _FolderLock:
    """``fcntl.flock`` on ``DIR/.lock`` for the whole batch; the file holds the pid."""

    def __init__(self, out_dir: str) -> None:
        self.fd = -1
        try:
            import fcntl
        except ImportError:  # pragma: no cover - not on Linux/macOS: no lock
            return
        path = os.path.join(out_dir, ".lock")
        try:
            fd = open_lock(path, "--out")  # a link or a special file is refused
        except OSError as exc:
            raise ArgumentError(
                f"--out {out_dir}: cannot lock the folder ({exc.strerror}); give a folder "
                "you can write to"
            ) from None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            try:
                pid = os.read(fd, 32).decode("ascii", "replace").strip() or "unknown"
            finally:
                os.close(fd)
            raise ArgumentError(
                f"--out {out_dir}: in use by another batch (pid {pid}); wait for it to "
                "finish or give another --out"
            ) from None
        try:
            write_pid(fd, path, "--out")
        except OSError:
            os.close(fd)
            raise
        self.fd = fd

    def release(self) -> None:
        if self.fd >= 0:
            fd, self.fd = self.fd, -1
            os.close(fd)  # closing the last descriptor releases the flock


def _read_meta(meta_path: str) -> dict[str, Any] | None:
    if not os.path.exists(meta_path):
        return None
    try:
        with open(meta_path, encoding="utf-8") as fh:
            old = json.load(fh)
    except (OSError, ValueError):
        old = None
    if not isinstance(old, dict) or not isinstance(old.get("runs"), int):
        raise ArgumentError(f"--resume: {meta_path} is damaged; use another --out or drop --resume")
    return old


# --------------------------------------------------------------------------- signals


class _Stop:
    """What SIGINT and SIGTERM do while a batch runs in the main thread: raise
    :class:`BatchStopped` where they land, except

    * while the local pool's own code runs (``held``): there a stop is noted, the pool is
      woken (``wake``, a pipe it waits on) and raises it between two of its steps
      (:meth:`check`), so that it never lands inside multiprocessing's code or half-way
      through the pool's bookkeeping;
    * once the batch is finished (``done``): noted, and sent again when the handlers are
      put back (:func:`_stop_on_signals`), to do what it would have done a moment later.
    """

    def __init__(self) -> None:
        self.pid = os.getpid()
        self.held = 0
        self.done = False
        self.signum: int | None = None
        self.wake = -1

    def handler(self, signum: int, frame: Any) -> None:
        if os.getpid() != self.pid:
            return  # a worker forked a moment ago, before _worker_init: the parent acts
        if not (self.held or self.done):
            raise BatchStopped(signum)
        if self.signum is None:
            self.signum = signum
        if self.wake >= 0:
            with contextlib.suppress(OSError):  # full: the pool has a wake-up waiting already
                os.write(self.wake, b"\0")

    def check(self) -> None:
        if self.signum is not None:
            raise BatchStopped(self.signum)


@contextlib.contextmanager
def _stop_on_signals() -> Iterator[_Stop | None]:
    """SIGINT and SIGTERM stop the batch in the main thread (:class:`_Stop`; even where the
    shell started us with SIGINT ignored); other threads leave the handlers alone (None)."""
    if threading.current_thread() is not threading.main_thread():
        yield None
        return
    stop = _Stop()
    old = {s: signal.signal(s, stop.handler) for s in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield stop
    finally:
        for s, h in old.items():
            signal.signal(s, h)
    if stop.done and stop.signum is not None:
        signal.raise_signal(stop.signum)


@contextlib.contextmanager
def _held(stop: _Stop | None, check: bool = True) -> Iterator[None]:
    """Within: a stop is noted, not raised (:class:`_Stop`); at the end, unless ``check`` is
    false or the block raised, a stop noted meanwhile is raised."""
    if stop is None:
        yield
        return
    stop.held += 1
    try:
        yield
    finally:
        stop.held -= 1
    if check:
        stop.check()


@contextlib.contextmanager
def _signals_held() -> Iterator[None]:
    """Hold SIGINT and SIGTERM back for a moment (a record written and counted, the folder
    switched to a new batch): a stop lands after it, never half-way through."""
    held = {signal.SIGINT, signal.SIGTERM}
    if not hasattr(signal, "pthread_sigmask"):  # pragma: no cover - not POSIX
        yield
        return
    old = signal.pthread_sigmask(signal.SIG_BLOCK, held)
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, old)


# --------------------------------------------------------------------------- the batch


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
    note: Callable[[str], None] | None = None,
    chunk_fn: ChunkFn | None = None,
) -> dict[str, Any]:
    """Run a batch and write ``runs.jsonl`` and ``summary.json`` into ``out_dir``.

    An existing batch in ``out_dir`` is refused unless ``resume`` (complete it; a larger
    ``runs`` extends it to the same results as a fresh batch of that size) or ``force``
    (replace it once the new batch's first runs are in). ``runs`` defaults to the resumed
    batch's size, else the scenario's. ``note`` receives one-line remarks (a capped
    ``workers``). ``chunk_fn`` replaces :func:`run_chunk` (same arguments); it exists for
    tests that make a worker die, and must be picklable for ``workers > 1``.
    Raises :class:`BatchStopped` on SIGINT or SIGTERM (in the main thread).
    """
    from engine.scenario import load_scenario

    # Validated before anything runs, and loaded as the workers load it (overrides in order).
    ordered = dict(sorted((overrides or {}).items()))
    scenario = load_scenario(scenario_path, overrides=ordered)
    if runs is not None:
        _check_runs(runs)
    if workers < 1:
        raise ArgumentError(f"--workers {workers}: expected a whole number >= 1")
    if resume and force:
        raise ArgumentError("--resume and --force: give one (complete the batch, or replace it)")
    if os.path.exists(out_dir) and not os.path.isdir(out_dir):
        raise ArgumentError(f"--out {out_dir}: is a file, not a folder; give a folder")
    address = _check_address(scheduler) if scheduler else None
    try:
        os.makedirs(out_dir, exist_ok=True)
    except OSError as exc:
        raise ArgumentError(f"--out {out_dir}: cannot create the folder ({exc.strerror})") from None
    lock = _FolderLock(out_dir)
    client = None
    try:
        with _stop_on_signals() as stop, _cluster_logs_quiet(address is not None):
            try:
                plan = _plan(scenario_path, scenario, runs, seed, out_dir, resume, force, overrides)
                if chunk_fn is None:  # the runs made here use the scenario just loaded
                    _prepared(scenario_path, plan.overrides, scenario)
                # A cluster that cannot be reached is an error before anything is written.
                client = _connect(address) if address else None
                fn = chunk_fn or run_chunk
                return _run(plan, workers, client, scheduler, progress, note, fn, stop)
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
                    _close_client(client)
    finally:
        lock.release()


@contextlib.contextmanager
def _cluster_logs_quiet(on: bool) -> Iterator[None]:
    """While a batch talks to a cluster, distributed's and tornado's own log records (a lost
    scheduler logs tracebacks) stay silent: the batch reports a failure in one line."""
    import logging

    if not on:
        yield
        return
    with contextlib.suppress(ImportError):
        import distributed  # noqa: F401 - its loggers exist, with their levels, from here

    names = ["distributed", "tornado"] + [
        n for n in logging.root.manager.loggerDict if n.startswith(("distributed.", "tornado."))
    ]
    saved = {n: logging.getLogger(n).level for n in names}
    for n in names:
        logging.getLogger(n).setLevel(logging.CRITICAL + 1)
    try:
        yield
    finally:
        for n, level in saved.items():
            logging.getLogger(n).setLevel(level)


def _check_runs(n: int) -> None:
    if n < 1:
        raise ArgumentError(f"--runs {n}: expected a whole number >= 1")
    if n > MAX_RUNS:
        raise ArgumentError(
            f"--runs {n}: at most {MAX_RUNS} runs in one batch (runs.jsonl takes about "
            "0.45 KB a run); split the study into batches with different --seed"
        )


class _Plan:
    """What a batch will do in its folder: its size, seed, the runs already done."""

    def __init__(self, **kw: Any) -> None:
        self.scenario_path: str = kw["scenario_path"]
        self.n: int = kw["n"]
        self.seed: int = kw["seed"]
        self.meta: dict[str, Any] = kw["meta"]
        self.overrides: tuple[tuple[str, Any], ...] = kw["overrides"]
        self.runs_path: str = kw["runs_path"]
        self.meta_path: str = kw["meta_path"]
        self.summary_path: str = kw["summary_path"]
        self.out_dir: str = kw["out_dir"]
        self.tally: Tally = kw["tally"]
        self.prefix: int = kw["prefix"]  # runs 0..prefix-1 are done, in order
        self.extra: set[int] = kw["extra"]  # runs done beyond that (an unordered file)
        self.ordered: bool = kw["ordered"]
        self.staged: bool = kw["staged"]  # a new batch: the folder changes after its first runs


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
    }
    existing = os.path.exists(meta_path) or os.path.exists(runs_path)
    old = _read_meta(meta_path) if resume else None
    n = runs
    if old is not None:
        if {**old, "runs": 0} != meta:
            raise ArgumentError(
                f"--resume: {out_dir} holds a batch of another scenario or seed "
                f"({old.get('scenario')}, seed {old.get('seed')}, {old.get('runs')} runs); "
                "use another --out or drop --resume"
            )
        if n is None:
            n = old["runs"]
        elif n < old["runs"]:
            raise ArgumentError(
                f"--runs {n}: {out_dir} holds a batch of {old['runs']} runs; give --runs "
                f"{old['runs']} or more to extend it, or another --out"
            )
    elif existing and not resume and not force:
        raise ArgumentError(
            f"--out {out_dir}: holds a batch already; add --resume to complete or extend it, "
            "--force to replace it, or give another --out"
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


def _scan_done(path: str, seed: int, n: int, tally: Tally) -> tuple[int, set[int], bool]:
    """Check the runs already in ``path`` and tally them: (in-order prefix, others, ordered)."""
    prefix, extra, ordered = 0, set[int](), True
    stray: int | None = None
    for r in iter_runs(path):
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
        f"--resume: {path} holds runs that are not this batch's (run {stray}, edited or "
        "copied in); use another --out or drop --resume"
    )


def _chunks(
    plan: _Plan, first: int = CHUNK, rest: int = CHUNK, leading: int = 1
) -> Iterator[list[tuple[int, int]]]:
    """The runs still to do: ``leading`` chunks of ``first``, then ``rest`` at a time, seeds
    made as they are handed out."""
    chunk: list[tuple[int, int]] = []
    size = first
    made = 0
    for i in range(plan.prefix, plan.n):
        if i in plan.extra:
            continue
        chunk.append((i, run_seed(plan.seed, i)))
        if len(chunk) == size:
            yield chunk
            made += 1
            chunk = []
            if made >= leading:
                size = rest
    if chunk:
        yield chunk


def _warm_chunks(todo: int) -> int:
    """How many chunks of ``CHUNK`` runs this process plays before its workers start
    (:data:`WARM_SHARE`, :data:`WARM_RUNS`)."""
    return max(1, min(WARM_RUNS, todo // WARM_SHARE) // CHUNK)


def _cap_workers(workers: int, chunks: int, note: Callable[[str], None] | None) -> int:
    cpus = os.cpu_count() or 1
    cap = max(1, min(chunks, WORKERS_PER_CPU * cpus))
    if workers > cap:
        if note:
            why = (
                f"the batch has {chunks} chunk{'s' if chunks != 1 else ''} of up to {CHUNK} runs to do"
                if cap == chunks
                else f"at most {WORKERS_PER_CPU} per CPU, {cpus} CPUs here"
            )
            note(f"--workers {workers}: using {cap} ({why})")
        return cap
    return workers


def _run(
    plan: _Plan,
    workers: int,
    client: Any,
    scheduler: str | None,
    progress: ProgressFn | None,
    note: Callable[[str], None] | None,
    chunk_fn: ChunkFn,
    stop: _Stop | None = None,
) -> dict[str, Any]:
    todo = plan.n - plan.prefix - len(plan.extra)
    n_chunks = -(-todo // CHUNK)
    if client is None and n_chunks:
        workers = _cap_workers(workers, n_chunks, note)
    tally = plan.tally
    write_path = plan.runs_path + ".new" if plan.staged else plan.runs_path
    appender: AppendFile | None = None
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
        appender = AppendFile(write_path, "--out")
        if plan.staged and not n_chunks:  # pragma: no cover - a batch has >= 1 run
            _commit(plan, write_path)
        stream = _execute(plan, n_chunks, workers, client, scheduler, chunk_fn, stop)
        with contextlib.closing(stream):
            for results in stream:
                with _signals_held():
                    appender.append("".join(_line(r) for r in results).encode())
                    if plan.staged:
                        _commit(plan, write_path)
                        plan.staged = False
                    for r in results:
                        tally.add(r)
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
            seed=plan.seed, scenario=plan.scenario_path, results_path=plan.runs_path
        )
        _write_atomic(plan.summary_path, json.dumps(summary, indent=2, sort_keys=True) + "\n")
        write_runs_table(plan.runs_path, os.path.join(plan.out_dir, RUNS_TABLE))
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


def _stopped(plan: _Plan, signum: int) -> str:
    name = signal.Signals(signum).name
    if plan.staged:
        return f"stopped by {name} before the first runs were in; {plan.out_dir} is unchanged"
    if plan.tally.n == plan.n:
        return (
            f"stopped by {name}: all {plan.n} runs are in {plan.runs_path}, but not the "
            "summary and runs table; run the same command with --resume to write them"
        )
    return (
        f"stopped by {name}: {plan.tally.n} of {plan.n} runs are in {plan.runs_path}; "
        f"run the same command with --resume to finish the batch"
    )


def _commit(plan: _Plan, staged_path: str) -> None:
    """The new batch has started well: it replaces whatever the folder held."""
    _remove(plan.summary_path)
    _remove(os.path.join(plan.out_dir, RUNS_TABLE))
    _write_atomic(plan.meta_path, json.dumps(plan.meta, indent=2) + "\n")
    try:
        rename_over(staged_path, plan.runs_path, "--out")  # the open descriptor follows it
    except OSError as exc:
        raise ArgumentError(f"--out {plan.out_dir}: cannot write ({exc.strerror})") from None


def _remove(path: str) -> None:
    with contextlib.suppress(FileNotFoundError):
        os.remove(path)


def _sort_file(path: str) -> None:
    results = sorted(iter_runs(path), key=lambda r: r["run"])
    _write_atomic(path, "".join(_line(r) for r in results))


# --------------------------------------------------------------------------- local workers


def _execute(
    plan: _Plan,
    n_chunks: int,
    workers: int,
    client: Any,
    scheduler: str | None,
    chunk_fn: ChunkFn,
    stop: _Stop | None = None,
) -> Generator[list[dict[str, Any]], None, None]:
    """Each chunk's results, in run order, as soon as they and every earlier chunk are in."""
    if not n_chunks:
        return
    if client is not None:
        yield from _execute_dask(plan, client, scheduler or "", chunk_fn)
        return
    chunks = _chunks(plan)
    if workers == 1:
        for chunk in chunks:
            yield chunk_fn(plan.scenario_path, plan.overrides, chunk)
        return
    yield from _execute_pool(plan, chunks, n_chunks, workers, chunk_fn, stop)


def _worker_init(parent: int) -> None:
    """In each worker process: leave signals to the parent, and die with it."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C reaches the group: the parent acts
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    watched = False
    if sys.platform.startswith("linux"):
        with contextlib.suppress(OSError, AttributeError):
            import ctypes

            libc = ctypes.CDLL(None, use_errno=True)
            pr_set_pdeathsig = 1
            watched = libc.prctl(pr_set_pdeathsig, int(signal.SIGKILL), 0, 0, 0) == 0
    if not watched:
        threading.Thread(target=_watch_parent, args=(parent,), daemon=True).start()
    if os.getppid() != parent:  # the parent died before the watch was set
        os._exit(1)


def _watch_parent(parent: int) -> None:
    while os.getppid() == parent:
        time.sleep(0.5)
    os._exit(1)


#: Chunks a worker process holds at once: the one it runs and the next, so it never waits
#: for the parent between chunks.
IN_FLIGHT = 2
#: Worker deaths that end a batch; before that, a dead worker's chunks go to a new one.
DEATHS = 3
#: Seconds the parent waits for its killed or finished workers to be gone.
REAP_S = 1.0
#: Bytes read from a worker's socket at a time (about what a socket holds).
READ_MAX = 1 << 18

#: A message on a worker's socket is its length, then its pickle: the parent reads whatever
#: has come and keeps a part message until the rest comes, so it never blocks inside one
#: (a worker killed half-way through sending leaves only a part, then the socket's end).
_LENGTH = struct.Struct("!Q")


class _RemoteTraceback(Exception):
    """The traceback of an exception raised in a worker process (its ``__cause__`` here)."""

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else ""


def _frame(obj: Any) -> bytes:
    data = pickle.dumps(obj, protocol=pickle.HIGHEST_PROTOCOL)
    return _LENGTH.pack(len(data)) + data


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def _read_frame(fd: int) -> Any:
    """The next message on ``fd`` (blocking: in a worker only), or None at its end."""
    head = _read_exact(fd, _LENGTH.size)
    body = _read_exact(fd, _LENGTH.unpack(head)[0]) if head is not None else None
    return None if body is None else pickle.loads(body)


def _read_exact(fd: int, n: int) -> bytes | None:
    parts = bytearray()
    while len(parts) < n:
        try:
            got = os.read(fd, n - len(parts))
        except OSError:
            return None
        if not got:
            return None
        parts += got
    return bytes(parts)


def _worker_main(
    conn: Any,
    parent: int,
    scenario_path: str,
    overrides: tuple[tuple[str, Any], ...],
    chunk_fn: ChunkFn,
    inherited: tuple[Any, ...],
) -> None:
    """A worker process: run each ``(index, chunk)`` it is sent, send back ``(index, True,
    results)`` or ``(index, False, exception, traceback)``, until sent None or its socket
    ends. ``inherited``: the parent's ends of the pool's sockets, which a forked worker
    holds too; closed, so that each socket ends when the process at its other end dies."""
    _worker_init(parent)
    for other in inherited:
        other.close()
    fd = conn.fileno()
    while True:
        task = _read_frame(fd)
        if task is None:
            return
        index, chunk = task
        try:
            reply = _frame((index, True, chunk_fn(scenario_path, overrides, chunk)))
        except Exception as exc:  # noqa: BLE001 - raised again in the parent
            reply = _error_frame(index, exc)
        try:
            _write_all(fd, reply)
        except OSError:
            return  # the parent closed its end: it no longer wants this


def _error_frame(index: int, exc: Exception) -> bytes:
    """A worker's report of ``exc``; an exception that would not arrive whole (it does not
    pickle, or not back) arrives as a RuntimeError with its text."""
    import traceback

    text = "".join(traceback.format_exception(exc))
    try:
        reply = _frame((index, False, exc, text))
        pickle.loads(reply[_LENGTH.size :])
    except Exception:  # noqa: BLE001 - any failure to pickle or unpickle
        reply = _frame((index, False, RuntimeError(f"{type(exc).__name__}: {exc}"), text))
    return reply


class _Worker:
    """The parent's side of a worker process: its socket, what it was sent, what it sent."""

    def __init__(self, proc: Any, conn: Any) -> None:
        self.proc = proc
        self.conn = conn
        self.fd: int = conn.fileno()
        self.tasks: list[int] = []  # chunks sent and not back, in the order sent
        self.inbox = bytearray()

    def read(self) -> list[Any] | None:
        """The messages completed by what the socket holds now (it was reported readable,
        so this does not block); None once the worker's end is closed (it died)."""
        try:
            got = os.read(self.fd, READ_MAX)
        except OSError:
            return None
        if not got:
            return None
        self.inbox += got
        out = []
        while len(self.inbox) >= _LENGTH.size:
            end = _LENGTH.size + _LENGTH.unpack_from(self.inbox)[0]
            if len(self.inbox) < end:
                break
            out.append(pickle.loads(self.inbox[_LENGTH.size : end]))
            del self.inbox[:end]
        return out


class _Pool:
    """Worker processes and the parent's ends of their sockets. The parent has no thread of
    the pool's: nothing it does at exit can wait on one."""

    def __init__(
        self,
        ctx: Any,
        scenario_path: str,
        overrides: tuple[tuple[str, Any], ...],
        chunk_fn: ChunkFn,
        stop: _Stop | None,
    ) -> None:
        self.ctx = ctx
        self.args = (os.getpid(), scenario_path, overrides, chunk_fn)
        self.workers: list[_Worker] = []
        self.stop = stop
        self.wake: tuple[Any, Any] | None = None

    def open(self) -> None:
        # The signal handler notes a stop (_Stop) and writes a byte here: it wakes the wait.
        self.wake = self.ctx.Pipe(duplex=False)
        for c in self.wake:
            os.set_blocking(c.fileno(), False)
        if self.stop is not None:
            self.stop.wake = self.wake[1].fileno()

    def start(self) -> _Worker:
        ours, theirs = self.ctx.Pipe(duplex=True)
        forked = self.ctx.get_start_method() == "fork"
        inherited = (ours, *(self.wake or ()), *(w.conn for w in self.workers))
        proc = self.ctx.Process(
            target=_worker_main,
            args=(theirs, *self.args, inherited if forked else ()),
            name="tacgrid-worker",
            daemon=True,
        )
        try:
            proc.start()
        except BaseException:
            ours.close()
            raise
        finally:
            theirs.close()  # the worker's end lives in the worker only: its death ends it
        worker = _Worker(proc, ours)
        self.workers.append(worker)
        return worker

    def send(self, worker: _Worker, index: int, chunk: list[tuple[int, int]]) -> None:
        worker.tasks.append(index)
        # A chunk is a few hundred bytes and a worker holds IN_FLIGHT: the socket has room.
        # A worker that died since the last wait refuses it: wait() finds it dead, and its
        # chunks, this one too, go to another.
        with contextlib.suppress(OSError):
            _write_all(worker.fd, _frame((index, chunk)))

    def wait(self, timeout: float | None = None) -> tuple[list[tuple[_Worker, Any]], list[_Worker]]:
        """Block until something happens (or ``timeout`` seconds pass: 0 only looks): the
        messages that came, in order per worker, and the workers that died (taken out of
        the pool)."""
        from multiprocessing.connection import wait

        assert self.wake is not None
        wake = self.wake[0]
        ready = wait(
            [wake, *(w.conn for w in self.workers), *(w.proc.sentinel for w in self.workers)],
            timeout,
        )
        if wake in ready:
            with contextlib.suppress(OSError):
                os.read(wake.fileno(), 4096)
        came: list[tuple[_Worker, Any]] = []
        dead: list[_Worker] = []
        for w in list(self.workers):
            exited = w.proc.sentinel in ready
            readable = w.conn in ready
            while readable:
                got = w.read()
                if got is None:
                    exited = True
                    break
                came += [(w, m) for m in got]
                # What an exited worker left is all there: read it up without blocking.
                readable = exited and w.conn.poll(0)
            if exited:
                self.workers.remove(w)
                self._reap([w])
                dead.append(w)
        return came, dead

    def finish(self) -> None:
        """All chunks are in: the workers exit of themselves (killed if they linger)."""
        for w in self.workers:
            with contextlib.suppress(OSError):
                _write_all(w.fd, _frame(None))
        self._reap(self.workers, kill=False)

    def kill(self) -> None:
        """Stop now: every worker is killed, whatever it was doing (writing a result too)."""
        self._reap(self.workers)

    def _reap(self, workers: list[_Worker], kill: bool = True) -> None:
        if kill:
            for w in workers:
                with contextlib.suppress(OSError, ValueError, AttributeError):
                    w.proc.kill()
        deadline = time.monotonic() + REAP_S
        for w in workers:
            with contextlib.suppress(OSError, ValueError, AssertionError):
                w.proc.join(max(0.0, deadline - time.monotonic()))
                if w.proc.is_alive():
                    w.proc.kill()
                    w.proc.join(0.1)
                if w.proc.exitcode is not None:
                    w.proc.close()  # its sentinel's descriptor, now
            w.conn.close()
        if workers is self.workers:
            self.workers = []

    def close(self) -> None:
        if self.stop is not None:
            self.stop.wake = -1
        for c in self.wake or ():
            c.close()
        self.wake = None


def _execute_pool(
    plan: _Plan,
    chunks: Iterator[list[tuple[int, int]]],
    n_chunks: int,
    workers: int,
    chunk_fn: ChunkFn,
    stop: _Stop | None = None,
) -> Iterator[list[dict[str, Any]]]:
    import multiprocessing as mp

    ctx = mp.get_context("fork" if sys.platform.startswith("linux") else "spawn")
    numbered = enumerate(chunks)
    next_out = 0
    if chunk_fn is run_chunk and ctx.get_start_method() == "fork":
        # The field cache is built once and shared: the first chunks run here (the graphs,
        # fields and rule results runs ask for first: _warm_chunks), and the workers forked
        # after them start with this process's cache (copy-on-write), not each from nothing.
        for _ in range(_warm_chunks(n_chunks * CHUNK)):
            first = next(numbered, None)
            if first is None:
                return
            yield chunk_fn(plan.scenario_path, plan.overrides, first[1])
            next_out += 1
        # Objects made so far stay out of the collector's passes, here and in the workers:
        # a collection in a worker would otherwise touch (and so copy) the whole cache.
        gc.freeze()
        _FROZEN[0] = True
        try:
            yield from _pool_results(
                plan, numbered, n_chunks, workers, chunk_fn, ctx, next_out, stop
            )
        finally:
            _FROZEN[0] = False
            gc.unfreeze()
        return
    yield from _pool_results(plan, numbered, n_chunks, workers, chunk_fn, ctx, next_out, stop)


def _pool_results(
    plan: _Plan,
    numbered: Iterator[tuple[int, list[tuple[int, int]]]],
    n_chunks: int,
    workers: int,
    chunk_fn: ChunkFn,
    ctx: Any,
    next_out: int,
    stop: _Stop | None,
) -> Iterator[list[dict[str, Any]]]:
    """The pool's part of :func:`_execute_pool`: chunks from ``numbered`` on, in order.

    With the engine's own worker function (:func:`run_chunk`), this process is one of the
    ``workers``: it starts ``workers - 1`` worker processes and, whenever none of their
    results is due, plays the next chunk itself (as a single worker does), then hands the
    others their next chunks. A forked worker costs CPU a run does not (the fork, a copy of
    each page it writes that it shares with this process, a cache warmed again, its
    results sent): one fewer of them took the square chase's 2 workers from 1.10x the CPU
    of 1 worker to 1.02x in one series of 10 interleaved batches of each (the benchmark's
    runs since, 12 rounds each on a machine whose speed drifts 2x: 1.10-1.18x). A
    ``chunk_fn`` given for tests stands for what a worker process does (it may kill its
    process on purpose): it runs in worker processes only, ``workers`` of them. Each worker
    process holds :data:`IN_FLIGHT` chunks, so it works on while this one plays its own.
    Chunks handed out and results waiting for an earlier chunk are ``AHEAD_PER_WORKER *
    workers`` at most. A worker process that dies has its chunks run by a new one (or
    here), :data:`DEATHS` times. While the pool's code runs, SIGINT and SIGTERM are only
    noted (:class:`_Stop`) and raised between its steps: a stop never lands inside the
    pool's bookkeeping or multiprocessing's (while this process plays a chunk it stops the
    batch as a single worker's would), and whatever stops the batch (a signal, an error,
    the caller closing this generator) kills every worker process before it goes on.
    """
    ahead = AHEAD_PER_WORKER * workers
    pending: dict[int, list[tuple[int, int]]] = {}  # handed out, not back
    back: dict[int, list[dict[str, Any]]] = {}  # back, waiting for an earlier chunk
    again: list[int] = []  # a heap: chunks of a worker that died, handed out first
    exhausted = False
    deaths = 0
    pool = _Pool(ctx, plan.scenario_path, plan.overrides, chunk_fn, stop)
    here = chunk_fn is run_chunk  # this process plays chunks too
    processes = workers - 1 if here else workers

    def take() -> int | None:
        nonlocal exhausted
        if again:
            return heapq.heappop(again)
        if exhausted or len(pending) + len(back) >= ahead:
            return None
        item = next(numbered, None)
        if item is None:
            exhausted = True
            return None
        pending[item[0]] = item[1]
        return item[0]

    def feed() -> None:
        while True:
            w = min(pool.workers, key=lambda w: len(w.tasks), default=None)
            if w is not None and len(w.tasks) >= IN_FLIGHT:
                w = None
            # A new worker process (up to ``processes``) rather than a second chunk for a
            # busy one.
            grow = len(pool.workers) < processes and (w is None or bool(w.tasks))
            if w is None and not grow:
                return
            i = take()
            if i is None:
                return
            pool.send(pool.start() if grow or w is None else w, i, pending[i])

    def step(timeout: float | None = None) -> None:
        nonlocal deaths
        came, dead = pool.wait(timeout)
        if stop is not None:
            stop.check()
        for w, (i, ok, value, *why) in came:
            w.tasks.remove(i)
            if not ok:
                value.__cause__ = _RemoteTraceback(why[0])
                raise value
            del pending[i]
            back[i] = value
        for w in dead:
            deaths += 1
            for i in w.tasks:
                heapq.heappush(again, i)
            if deaths >= DEATHS:
                raise ScenarioError(
                    f"{plan.scenario_path}: worker processes kept dying; "
                    f"{n_chunks - next_out} chunks of runs did not finish; run again with --resume"
                )

    try:
        with _held(stop):
            pool.open()
        while True:
            with _held(stop):
                feed()
                mine = take() if here else None
            if mine is not None:  # this process's own chunk, played as a single worker's
                results = chunk_fn(plan.scenario_path, plan.overrides, pending[mine])
                with _held(stop):
                    del pending[mine]
                    back[mine] = results
                    if pool.workers:
                        step(0)  # what came meanwhile, without waiting
            elif pending:
                with _held(stop):
                    step()  # nothing to play here: wait for a worker process
            else:
                break  # nothing handed out, nothing to hand out: all is written
            while next_out in back:
                yield back.pop(next_out)
                next_out += 1
        with _held(stop):
            pool.finish()
            pool.close()
    except BaseException:
        with _held(stop, check=False):  # a second signal does not cut the clean-up short
            pool.kill()
            pool.close()
        raise


# --------------------------------------------------------------------------- Dask


def _check_address(scheduler: str) -> str:
    """``tcp://HOST:PORT`` (or ``HOST:PORT``), checked without touching the network."""
    text = scheduler.strip()
    scheme, sep, rest = text.partition("://")
    if not sep:
        scheme, rest = "tcp", text
    if scheme != "tcp":
        raise ArgumentError(
            f"--scheduler {scheduler}: only tcp:// scheduler addresses are supported "
            f"(not {scheme}://); use tcp://HOST:PORT"
        )
    host, colon, port = rest.rpartition(":")
    host = host.strip("[]")
    if not colon or not host or not port.isdigit() or not 0 < int(port) < 65536:
        raise ArgumentError(
            f"--scheduler {scheduler}: not a scheduler address; use tcp://HOST:PORT"
        )
    return f"tcp://{rest}"


def _connect(address: str, timeout: float | None = None) -> Any:
    """A Dask client for ``address`` within ``timeout`` seconds, or one clear line.

    The connection is made in a thread that is abandoned if it does not finish: a peer
    that accepts and never answers cannot hold the batch.
    """
    try:
        import dask
        from distributed import Client
    except ImportError:  # pragma: no cover - dask is a declared dependency
        raise ArgumentError(
            "--scheduler needs dask[distributed]: pip install 'dask[distributed]'"
        ) from None
    timeout = CONNECT_TIMEOUT if timeout is None else timeout
    box: dict[str, Any] = {}

    def connect() -> None:
        try:
            # Ask the peer who it is first, on a connection of our own with hard timeouts:
            # a silent peer or another service fails here, before a Client exists (a
            # Client that fails half-made lingers and complains at exit).
            kind = asyncio.run(_identity(address, timeout))
            if kind != "Scheduler":
                box["error"] = ValueError(f"it answers as {kind or 'something else'}")
                return
            with dask.config.set({"distributed.comm.timeouts.connect": f"{timeout}s"}):
                box["client"] = Client(address, timeout=timeout, set_as_default=False)
        except BaseException as exc:  # noqa: BLE001 - reported below as one line
            box["error"] = exc

    thread = threading.Thread(target=connect, name="tacgrid-dask-connect", daemon=True)
    thread.start()
    thread.join(3 * timeout + 2)  # the probe's three steps, then the client
    if thread.is_alive():
        raise ArgumentError(
            f"--scheduler {address}: no answer within {timeout:g} s (something accepts "
            "connections there but does not answer as a Dask scheduler); check the address"
        )
    if "client" in box:
        return box["client"]
    exc = box.get("error")
    if isinstance(exc, (TimeoutError, asyncio.TimeoutError)):
        why = f"no answer as a Dask scheduler within {timeout:g} s"
    elif isinstance(exc, ConnectionRefusedError) or "refused" in str(exc).lower():
        why = "connection refused: nothing listens there"
    elif isinstance(exc, OSError):
        why = f"cannot connect ({_short(exc)})"
    elif isinstance(exc, ValueError) and str(exc).startswith("it answers as"):
        why = f"not a Dask scheduler ({exc})"
    else:
        why = "not a Dask scheduler (it answers in another protocol)"
    raise ArgumentError(
        f"--scheduler {address}: {why}; start a dask scheduler there (dask scheduler) "
        "or check the address"
    )


async def _identity(address: str, timeout: float) -> str | None:
    """The ``type`` a Dask server at ``address`` reports (``"Scheduler"``), each step
    bounded by ``timeout``; raises on a peer that is silent or speaks something else."""
    import socket

    from distributed.comm import connect

    host, _, port = address[len("tcp://") :].rpartition(":")
    # A plain connect first: a refused port answers at once, not after distributed's retries.
    await asyncio.wait_for(
        asyncio.get_running_loop().run_in_executor(
            None, lambda: socket.create_connection((host.strip("[]"), int(port)), timeout).close()
        ),
        timeout,
    )
    comm = await asyncio.wait_for(connect(address, timeout=timeout), timeout)
    try:
        await asyncio.wait_for(comm.write({"op": "identity", "reply": True}), timeout)
        answer = await asyncio.wait_for(comm.read(), timeout)
    finally:
        comm.abort()
    return answer.get("type") if isinstance(answer, dict) else None


def _short(exc: BaseException | None) -> str:
    text = f"{type(exc).__name__}: {exc}" if exc is not None else "no answer"
    text = text.replace("\n", " ").strip()
    return text if len(text) <= 160 else text[:157] + "..."


def _close_client(client: Any) -> None:
    """Close a Dask client without waiting long on a scheduler that has gone."""
    done = threading.Event()

    def close() -> None:
        with contextlib.suppress(BaseException):
            client.close(timeout=2)
        done.set()

    threading.Thread(target=close, name="tacgrid-dask-close", daemon=True).start()
    done.wait(5)


def _execute_dask(
    plan: _Plan, client: Any, scheduler: str, chunk_fn: ChunkFn
) -> Iterator[list[dict[str, Any]]]:
    """Each chunk's results from the cluster, in run order.

    With :func:`run_chunk` the field cache is built once, here: the first chunks
    (:func:`_warm_chunks`, each at most half the batch) run in this process, and its
    scenario and warm cache then ship to each worker once (:func:`_shipment`, :func:`_ship`,
    :func:`take_shipment`; the tasks, :func:`run_shipped`, carry only their runs). The rest
    goes in about ``AHEAD_PER_WORKER`` tasks per worker, each at least ``CHUNK`` runs (a
    task costs the cluster some milliseconds of its own); each task's runs come back as one
    pickle (:func:`_packed`)."""
    from distributed import as_completed

    path = os.path.abspath(plan.scenario_path)
    workers = max(1, len(_dask_call(client.nthreads, scheduler, plan)))
    ahead = AHEAD_PER_WORKER * workers
    ours = chunk_fn is run_chunk
    warm = 0
    if ours:
        todo = plan.n - plan.prefix - len(plan.extra)
        first = min(CHUNK, max(1, todo // 2))
        warm = _warm_chunks(todo)
        rest = min(DASK_CHUNK_MAX, max(CHUNK, -(-(todo - first * warm) // ahead)))
        chunks = _chunks(plan, first, rest, warm)
    else:
        chunks = _chunks(plan)
    numbered = enumerate(chunks)
    next_out = 0
    token: str | None = None

    def submit(c: list[tuple[int, int]]) -> Any:
        if token is not None:
            return client.submit(run_shipped, path, plan.overrides, token, c, pure=False, retries=2)
        fn = run_chunk_packed if chunk_fn is run_chunk else chunk_fn
        return client.submit(fn, path, plan.overrides, c, pure=False, retries=2)

    if ours:
        for _ in range(warm):
            here = next(numbered, None)
            if here is None:
                return
            yield run_chunk(plan.scenario_path, plan.overrides, here[1])
            next_out += 1
        blob = _shipment(plan.scenario_path, plan.overrides)
        if blob is not None:
            token = f"{engine_digest()}/{uuid.uuid4().hex}"
            args = (path, plan.overrides, token, blob)
            _dask_call(lambda: _ship(client, args), scheduler, plan)
            del blob, args
    index: dict[str, int] = {}
    back: dict[int, list[dict[str, Any]]] = {}
    queue = as_completed(loop=client.loop)
    exhausted = False

    def top_up() -> None:
        nonlocal exhausted
        while not exhausted and len(index) + len(back) < ahead:
            item = next(numbered, None)
            if item is None:
                exhausted = True
                return
            i, c = item
            fut = submit(c)
            index[fut.key] = i
            queue.add(fut)

    futs: list[Any] = []
    try:
        _dask_call(top_up, scheduler, plan)
        while index:
            fut = _dask_call(lambda: next(queue), scheduler, plan)
            res = _unpacked(_dask_call(fut.result, scheduler, plan))
            back[index.pop(fut.key)] = res
            _dask_call(top_up, scheduler, plan)
            while next_out in back:
                yield back.pop(next_out)
                next_out += 1
    except BaseException:
        futs = list(queue.futures) if hasattr(queue, "futures") else []
        with contextlib.suppress(BaseException):
            client.cancel(futs)
        raise
    if token is not None:
        _forget_shipment(client, (path, plan.overrides, token))


def _ship(client: Any, args: tuple[str, tuple[tuple[str, Any], ...], str, bytes]) -> None:
    """Give every worker of the cluster the batch's shipment (``args``: path, overrides,
    token, pickled cache) and wait until each has taken it (:func:`take_shipment`).

    The pickle goes out as data (``Client.scatter``, to every worker), and a task pinned
    to each worker takes it on its task thread. Sent as an argument of ``Client.run``
    instead, it was copied into the messages of the client, then of the scheduler once per
    worker (msgpack), and unpickled on each worker's event loop: 0.17-0.21 CPU-s of the
    batch's process against 0.04 for a 22 MB cache, two workers. A worker that has not
    taken it within :data:`SHIP_WAIT_S` (gone, too busy, or it failed there) is left
    without: its tasks load the scenario themselves (:func:`run_shipped`)."""
    path, overrides, token, blob = args
    # Every worker: ``scheduler_info()`` lists only the first 5 in some dask releases.
    workers = list(client.nthreads())
    if not workers:
        return
    data = client.scatter(blob, broadcast=True, hash=False)
    takes = [
        client.submit(
            take_shipment,
            path,
            overrides,
            token,
            data,
            workers=[w],
            allow_other_workers=False,
            pure=False,
        )
        for w in workers
    ]
    deadline = time.monotonic() + SHIP_WAIT_S
    try:
        for f in takes:
            # Not taken (gone, too busy, failed): that worker's tasks do without.
            with contextlib.suppress(Exception):
                f.result(timeout=max(0.0, deadline - time.monotonic()))
    finally:
        client.cancel([f for f in takes if not f.done()])
        del data, takes


def _forget_shipment(client: Any, args: tuple[Any, ...]) -> None:
    """Ask every worker to drop the batch's shipment, waiting a few seconds at most (a
    worker that misses it drops it when the next batch of the scenario ships)."""
    done = threading.Event()

    def forget() -> None:
        with contextlib.suppress(BaseException):
            client.run(drop_shipment, *args, on_error="ignore")
        done.set()

    threading.Thread(target=forget, name="tacgrid-dask-forget", daemon=True).start()
    done.wait(5)


def _dask_call(fn: Callable[[], Any], scheduler: str, plan: _Plan) -> Any:
    """``fn()``; a cluster failure (the scheduler gone, a lost connection) is one line."""
    try:
        return fn()
    except (TacgridError, KeyboardInterrupt):
        raise
    except Exception as exc:  # noqa: BLE001 - distributed raises many kinds
        if "deserialization of the task graph" in str(exc):
            # The scheduler unpickles each task: it must import tacgrid's engine too.
            raise ScenarioError(
                f"--scheduler {scheduler}: the scheduler cannot load tacgrid's tasks (it "
                "runs in a Python environment without tacgrid, or another version of it); "
                "start the scheduler and its workers where `import engine` gives this "
                f"tacgrid; {plan.tally.n} of {plan.n} runs are in {plan.runs_path}: run "
                "the same command with --resume then"
            ) from None
        raise ScenarioError(
            f"--scheduler {scheduler}: the cluster failed mid-batch ({_short(exc)}); "
            f"{plan.tally.n} of {plan.n} runs are in {plan.runs_path}; run the same command "
            "with --resume when the scheduler is back"
        ) from None


# --------------------------------------------------------------------------- the runs table

#: The batch's runs as a table (Parquet, beside runs.jsonl): a row per run, in run order.
RUNS_TABLE = "runs.parquet"
#: Runs read from runs.jsonl per record batch (bounded memory), and rows per row group.
TABLE_CHUNK = 1024
TABLE_GROUP = 65_536


def run_fields() -> list[Any]:
    """The columns of a run in a runs table (pyarrow fields): its index, seed, outcome,
    turns, who ended it, the cell it ended on and its event count. A sweep's table puts
    its point and varied parameters before them (engine.sweep)."""
    import pyarrow as pa

    return [
        pa.field("run", pa.int64(), nullable=False),
        pa.field("seed", pa.int64(), nullable=False),
        pa.field("outcome", pa.string(), nullable=False),
        pa.field("turns", pa.int64(), nullable=False),
        pa.field("by", pa.string()),
        pa.field("col", pa.int64()),
        pa.field("row", pa.int64()),
        pa.field("events", pa.int64()),
    ]


def run_columns(rows: list[dict[str, Any]]) -> dict[str, list[Any]]:
    """The :func:`run_fields` columns of some runs.jsonl records."""
    cells = [r.get("cell") for r in rows]
    return {
        "run": [r.get("run") for r in rows],
        "seed": [r.get("seed") for r in rows],
        "outcome": [r.get("outcome") for r in rows],
        "turns": [r.get("turns") for r in rows],
        "by": [r.get("by") for r in rows],
        "col": [c[0] if isinstance(c, list) and len(c) == 2 else None for c in cells],
        "row": [c[1] if isinstance(c, list) and len(c) == 2 else None for c in cells],
        "events": [r.get("events") for r in rows],
    }


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

    return replace_with(path, write, "--out")


def write_runs_table(runs_path: str, table_path: str) -> str:
    """``runs.parquet`` from a finished batch's runs.jsonl: the :func:`run_fields` columns,
    a row per run in run order. Made from the file alone, so a batch stopped and resumed
    gives the table of an uninterrupted one."""
    import pyarrow as pa

    schema = pa.schema(run_fields())

    def batches() -> Iterator[Any]:
        rows: list[dict[str, Any]] = []
        for r in iter_runs(runs_path):
            rows.append(r)
            if len(rows) == TABLE_CHUNK:
                yield pa.RecordBatch.from_pydict(run_columns(rows), schema=schema)
                rows = []
        if rows:
            yield pa.RecordBatch.from_pydict(run_columns(rows), schema=schema)

    return write_table(table_path, schema, batches())
