"""The work of a batch: its runs' seeds, its chunks, and the worker cache (a scenario and
its warm field cache per process) that plays them, shipped whole to Dask workers."""

from __future__ import annotations

import functools
import hashlib
import os
import pickle
from collections.abc import Callable, Generator, Iterator
from dataclasses import dataclass
from typing import Any, NamedTuple, Protocol

import numpy as np

from engine.batch.control import _collector_paused
from engine.batch.measures import measure_run
from engine.batch.tally import Tally

#: Runs per task handed to a worker process or a Dask worker.
CHUNK = 25

#: Chunks handed out ahead per worker (keeps every worker busy; bounds memory).
AHEAD_PER_WORKER = 4

#: Before workers start, this process plays the batch's first runs itself: one run in
#: ``WARM_SHARE`` of the batch, ``WARM_RUNS`` at most, one chunk at least (CHUNK at a time,
#: written as they come). The workers (forked after them, or sent their field cache) start
#: from what those runs learned instead of each learning it again (what that saves:
#: ``benchmarks/bench_chase.py``, 2 workers' CPU against 1 worker's). A chase's cache keeps
#: learning over its first few thousand runs (the square chase: a fifth of its misses come
#: after run 400), and what a worker learns after the fork another learns again.
WARM_SHARE = 4
WARM_RUNS = 1600

#: A warm field cache ships to Dask workers when it pickles to at most this many bytes
#: (else each worker builds its own: the same results either way).
SHIP_MAX_BYTES = 64 * 2**20

#: Scenarios and their field caches a :class:`WorkerCache` keeps: the most recent few (a
#: sweep makes one per point).
CACHE_KEPT = 4

#: A key of a :class:`WorkerCache`: (absolute scenario path, overrides), and a shipment's
#: token after them where a Dask batch shipped it.
CacheKey = tuple[Any, ...]
#: Runs to play: ``(run index, run seed)`` each.
Chunk = list[tuple[int, int]]
#: The records of a chunk's runs, in its order.
Records = list[dict[str, Any]]
#: The worker function's signature: (scenario path, overrides, [(run, seed), ...]) -> results.
ChunkFn = Callable[[str, tuple[tuple[str, Any], ...], Chunk], Records]


def run_seed(seed: int, index: int) -> int:
    """The seed of run ``index`` of a batch with seed ``seed`` (child ``index`` of its
    ``SeedSequence``, made alone: no other run's seed is computed)."""
    child = np.random.SeedSequence(seed, spawn_key=(index,))
    return int(child.generate_state(1, dtype=np.uint32)[0])


def run_seeds(seed: int, runs: int) -> list[int]:
    """The seed of every run, independent of how the batch is split."""
    children = np.random.SeedSequence(seed).spawn(runs)
    return [int(c.generate_state(1, dtype=np.uint32)[0]) for c in children]


class WorkerCache:
    """Scenarios and their warm field caches, by :data:`CacheKey`, the most recent
    :data:`CACHE_KEPT`: what one process has learned of the scenarios it played.

    The runner hands its cache to the executor that plays the batch. The batch's process
    warms it on the batch's first runs; a local worker process forked after them inherits
    it (copy-on-write) and plays from it; for Dask it is pickled once (:meth:`shipment`)
    and each worker process keeps it in its own :data:`WORKER_CACHE`
    (:meth:`take_shipment`), since a Dask task names a function, not an object.
    """

    def __init__(self, kept: int = CACHE_KEPT) -> None:
        self.kept = kept
        self._entries: dict[CacheKey, tuple[Any, Any]] = {}

    def __contains__(self, key: object) -> bool:
        return key in self._entries

    def __len__(self) -> int:
        return len(self._entries)

    def keys(self) -> list[CacheKey]:
        """The keys kept, the least recently used first."""
        return list(self._entries)

    def entry(self, key: CacheKey) -> tuple[Any, Any] | None:
        """The (scenario, field cache) kept for ``key`` (made the most recent), or None."""
        got = self._entries.pop(key, None)
        if got is not None:
            self._entries[key] = got
        return got

    def keep(self, key: CacheKey, value: tuple[Any, Any]) -> tuple[Any, Any]:
        self._entries.pop(key, None)
        while len(self._entries) >= self.kept:
            del self._entries[next(iter(self._entries))]
        self._entries[key] = value
        return value

    def drop(self, key: CacheKey) -> None:
        self._entries.pop(key, None)

    def clear(self) -> None:
        self._entries.clear()

    def prepared(
        self, path: str, overrides: tuple[tuple[str, Any], ...], scenario: Any = None
    ) -> tuple[Any, Any]:
        """Scenario and field cache, loaded once and reused across chunks.

        ``scenario``: the scenario as the batch just loaded it (``overrides`` applied): kept
        with a new field cache unless the one kept is of the same file (its digest)."""
        from engine.sim import FieldCache

        key = (os.path.abspath(path), overrides)
        got = self.entry(key)
        if scenario is not None and (got is None or got[0].digest != scenario.digest):
            got = self.keep(key, (scenario, FieldCache(scenario)))
        if got is None:
            from engine.scenario import load_scenario

            scenario = load_scenario(path, overrides=dict(overrides))
            got = self.keep(key, (scenario, FieldCache(scenario)))
        return got

    def run_chunk(self, path: str, overrides: tuple[tuple[str, Any], ...], items: Chunk) -> Records:
        """Play ``(run index, run seed)`` items from this cache (a :data:`ChunkFn`).

        Each run counts the events of its log as it plays (``record="count"``: the log
        itself is not built), so its record carries the true number of events that
        ``--run-seed N --log FILE`` writes.
        """
        scenario, fields = self.prepared(path, overrides)
        return _play(scenario, fields, items)

    def shipment(self, path: str, overrides: tuple[tuple[str, Any], ...]) -> np.ndarray | None:
        """The scenario and warm field cache kept for ``path``, pickled whole for Dask
        workers (engine.sim.FieldCache pickles its memos kept by object ids keyed again on
        arrival: a worker starts from everything this cache learned, as a forked one does),
        packed with its arrays' data apart (:func:`pack_shipment`); None where there is
        none, it does not pickle or is too big."""
        got = self.entry((os.path.abspath(path), overrides))
        if got is None:
            return None
        try:
            # The memos' entries are listed afresh as they pickle (IdMemo.__getstate__):
            # many objects made at once, which would set off passes over the whole heap.
            with _collector_paused():
                blob = pack_shipment(got)
        except (pickle.PicklingError, TypeError, AttributeError):
            return None
        return blob if blob.nbytes <= SHIP_MAX_BYTES else None

    def take_shipment(
        self, path: str, overrides: tuple[tuple[str, Any], ...], token: str, blob: Any
    ) -> bool:
        """Keep a shipment (:meth:`shipment`) under ``token``: the client's
        :func:`engine_digest` and the shipment's name. Another engine than the client's
        keeps nothing (its tasks load the scenario themselves). True if kept.

        The cache's arrays are made on ``blob``'s memory where it is writable (a worker's
        copy as it arrived: :func:`unpack_shipment`), so a blob is taken once."""
        if token.partition("/")[0] != engine_digest():
            return False
        with _collector_paused():  # a cache is many objects made at once: no pass walks them
            scenario, fields = unpack_shipment(blob)
        where = (os.path.abspath(path), overrides)
        for old in [k for k in self._entries if len(k) == 3 and k[:2] == where]:
            self.drop(old)  # an earlier batch's shipment of this scenario (stopped, or forgotten)
        self.keep((*where, token), (scenario, fields))
        return True

    def drop_shipment(self, path: str, overrides: tuple[tuple[str, Any], ...], token: str) -> None:
        self.drop((os.path.abspath(path), overrides, token))

    def run_shipped(
        self, path: str, overrides: tuple[tuple[str, Any], ...], token: str, items: Chunk
    ) -> Records:
        """:meth:`run_chunk` from the shipment kept under ``token``: no scenario file read,
        no field built again; without it (a worker that joined or was restarted since, or
        runs another engine), :meth:`run_chunk`: the same runs."""
        got = self.entry((os.path.abspath(path), overrides, token))
        if got is None:
            return self.run_chunk(path, overrides, items)
        return _play(got[0], got[1], items)


#: This process's worker cache: the one a batch uses unless given its own, and the one the
#: worker functions below play from. A Dask task or a spawned worker process is handed a
#: function by name, so in a worker process that function finds its cache here.
WORKER_CACHE = WorkerCache()


def run_chunk(path: str, overrides: tuple[tuple[str, Any], ...], items: Chunk) -> Records:
    """:meth:`WorkerCache.run_chunk` on this process's :data:`WORKER_CACHE`: the worker
    function for local worker processes and Dask."""
    return WORKER_CACHE.run_chunk(path, overrides, items)


#: Runs of a point whose seeds a worker keeps (:func:`_point_items`): with common seeds (a
#: sweep's default) every point of a sweep plays the same run seeds, made once a worker.
POINT_SEEDS_KEPT = 1 << 16


def _items(seed: int, runs: int) -> list[tuple[int, int]]:
    return [(i, run_seed(seed, i)) for i in range(runs)]


@functools.lru_cache(maxsize=2)
def _point_items(seed: int, runs: int) -> tuple[tuple[int, int], ...]:
    """:func:`_items`, kept for the next point of the same seed and size."""
    return tuple(_items(seed, runs))


def play_point(path: str, overrides: tuple[tuple[str, Any], ...], seed: int, runs: int) -> bytes:
    """A whole batch of ``runs`` runs of ``seed`` played in this process from its
    :data:`WORKER_CACHE` (one field cache for all of them, warmed once), sent back as one
    Parquet fragment (:func:`engine.batch.results.runs_fragment`): a sweep's point as one
    Dask task (engine.batch.dask.DaskPoints)."""
    from engine.batch.results import runs_fragment

    items = _point_items(seed, runs) if runs <= POINT_SEEDS_KEPT else _items(seed, runs)
    records: Records = []
    for start in range(0, runs, CHUNK):
        records += WORKER_CACHE.run_chunk(path, overrides, list(items[start : start + CHUNK]))
    return runs_fragment(records)


def _play(scenario: Any, fields: Any, items: list[tuple[int, int]]) -> list[dict[str, Any]]:
    """The records of the runs ``items``; a scenario that names measures keeps each run's
    event log to take them from (engine.batch.measures) and records them as ``measures``."""
    from engine.sim import Simulation

    out = []
    names = tuple(scenario.measures)
    with _collector_paused():
        for run, seed in items:
            sim = Simulation(scenario, seed, fields=fields, run=run, record=bool(names) or "count")
            record = sim.run().to_dict()
            if names:
                record["measures"] = measure_run(
                    names, sim.events, sim.pursuers, sim.quarries, scenario.model.grid.distance
                )
            out.append(record)
    return out


@functools.lru_cache(maxsize=1)
def engine_digest() -> str:
    """A digest of this process's tacgrid engine (its ``.py`` files as read once): a shipped
    field cache is taken only by a worker whose engine is the client's."""
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # engine/
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


#: Bytes a shipment's array data is aligned to (:func:`pack_shipment`): a cache line, more
#: than any dtype needs.
SHIP_ALIGN = 64


def pack_shipment(value: Any) -> np.ndarray:
    """``value`` pickled for :func:`unpack_shipment`, as one array of bytes: the pickle
    without the data of the arrays in it (protocol 5's out-of-band buffers), then each
    array's data at a multiple of :data:`SHIP_ALIGN` from where the data starts, then
    :data:`SHIP_ALIGN` spare bytes.

    A plain pickle carries the arrays' data inside it: a worker first receives it, then
    unpickling copies each array out of it into memory of its own, page by page (a warm
    cache's fields are most of its bytes). Kept apart, the arrays are made on the received
    bytes themselves. An array of bytes is one frame to Dask, received into one allocation."""
    buffers: list[pickle.PickleBuffer] = []
    head = pickle.dumps(value, protocol=5, buffer_callback=buffers.append)
    raws = [b.raw() for b in buffers]
    offsets, at = [], 0
    for raw in raws:
        offsets.append((at, raw.nbytes))
        at += -(-raw.nbytes // SHIP_ALIGN) * SHIP_ALIGN
    meta = pickle.dumps((head, offsets), protocol=5)
    start = -(-(8 + len(meta)) // SHIP_ALIGN) * SHIP_ALIGN
    # Aligned where it is made: taken in this process (a test, threads as workers), its
    # data is used where it is, never moved (unpack_shipment), so one blob may be taken twice.
    room = np.empty(start + at + 2 * SHIP_ALIGN, np.uint8)
    first = -room.ctypes.data % SHIP_ALIGN
    blob = room[first : first + start + at + SHIP_ALIGN]
    blob[:8] = np.frombuffer(len(meta).to_bytes(8, "little"), np.uint8)
    blob[8 : 8 + len(meta)] = np.frombuffer(meta, np.uint8)
    for (offset, size), raw in zip(offsets, raws, strict=True):
        blob[start + offset : start + offset + size] = np.frombuffer(raw, np.uint8)
    return blob


def unpack_shipment(blob: Any) -> Any:
    """The value :func:`pack_shipment` packed into ``blob`` (its bytes, however they
    arrived: an array, ``bytes``, a memoryview).

    Where ``blob`` is writable its arrays are views of its memory, aligned: Dask hands a
    task the bytes it received in an allocation of their own (its copy alone), at whatever
    offset its message put them, so the data is first moved there to the next multiple of
    :data:`SHIP_ALIGN` (into the spare bytes at the end); a blob as :func:`pack_shipment`
    made it is aligned already and never changed. Read-only bytes are copied once into
    memory of their own first. Either way no array's data is copied again."""
    whole = memoryview(blob).cast("B")
    size = int.from_bytes(whole[:8], "little")
    head, offsets = pickle.loads(whole[8 : 8 + size])
    start = -(-(8 + size) // SHIP_ALIGN) * SHIP_ALIGN
    used = whole.nbytes - start - SHIP_ALIGN
    data = whole[start : start + used + SHIP_ALIGN]
    if data.readonly:
        data = np.empty(data.nbytes, np.uint8).data.cast("B")
        data[:] = whole[start:]
    shift = -np.frombuffer(data, np.uint8).ctypes.data % SHIP_ALIGN
    if shift:
        data[shift : shift + used] = data[:used]  # memoryview copies overlapping bytes right
    buffers = [data[shift + offset : shift + offset + n] for offset, n in offsets]
    return pickle.loads(head, buffers=buffers)


def take_shipment(path: str, overrides: tuple[tuple[str, Any], ...], token: str, blob: Any) -> bool:
    """On a Dask worker (a task pinned to it, engine.batch.dask._ship): keep the scenario
    and warm field cache a batch shipped (:meth:`WorkerCache.shipment`) in this process's
    :data:`WORKER_CACHE` for its tasks (:func:`run_shipped`). Taken on the worker's task
    thread, not its event loop. True if kept."""
    return WORKER_CACHE.take_shipment(path, overrides, token, blob)


def drop_shipment(path: str, overrides: tuple[tuple[str, Any], ...], token: str) -> None:
    """On a Dask worker (``Client.run``): forget a finished batch's shipment."""
    WORKER_CACHE.drop_shipment(path, overrides, token)


def run_shipped(
    path: str, overrides: tuple[tuple[str, Any], ...], token: str, runs: SeededRuns
) -> bytes:
    """A Dask task with the batch's shipment (:meth:`WorkerCache.run_shipped` on this
    process's :data:`WORKER_CACHE`); the results come back packed (:func:`_packed`)."""
    return _packed(WORKER_CACHE.run_shipped(path, overrides, token, runs.items()))


def run_chunk_packed(path: str, overrides: tuple[tuple[str, Any], ...], runs: SeededRuns) -> bytes:
    """:func:`run_chunk`, its results packed (:func:`_packed`): a Dask task's where nothing
    was shipped."""
    return _packed(run_chunk(path, overrides, runs.items()))


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


def _chunks(
    plan: _Plan, first: int = CHUNK, rest: int = CHUNK, leading: int = 1
) -> Iterator[Chunk]:
    """The runs still to do: ``leading`` chunks of ``first``, then ``rest`` at a time, seeds
    made as they are handed out."""
    for runs in _run_indices(plan, first, rest, leading):
        yield [(i, run_seed(plan.seed, i)) for i in runs]


def _run_indices(
    plan: _Plan,
    first: int = CHUNK,
    rest: int = CHUNK,
    leading: int = 1,
    taper: int = 0,
    least: int = CHUNK,
) -> Iterator[list[int]]:
    """:func:`_chunks`'s run indices alone. ``taper``: the chunks after the leading ones
    are at most the runs not yet in a chunk over ``taper`` (``least`` at least), so that
    they shrink towards the batch's end and the workers finish together (the last chunk a
    worker takes is a small one, not a whole ``rest``)."""
    chunk: list[int] = []
    size = first
    made = 0
    left = plan.n - plan.prefix - len(plan.extra)  # runs not yet in a chunk
    for i in range(plan.prefix, plan.n):
        if i in plan.extra:
            continue
        chunk.append(i)
        left -= 1
        if len(chunk) == size:
            yield chunk
            made += 1
            chunk = []
            if made >= leading:
                size = rest if not taper else max(least, min(rest, -(-left // taper)))
    if chunk:
        yield chunk


class SeededRuns(NamedTuple):
    """Runs of a batch as a Dask task takes them: the batch's seed and the runs' indices
    (int64 bytes). The worker makes each run's seed (:func:`run_seed`), so the client does
    not, and Dask sends one ``bytes`` instead of walking a list of pairs."""

    seed: int
    indices: bytes

    @classmethod
    def of(cls, seed: int, runs: list[int]) -> SeededRuns:
        return cls(seed, np.asarray(runs, dtype=np.int64).tobytes())

    def items(self) -> Chunk:
        runs = np.frombuffer(self.indices, np.int64).tolist()
        return [(i, run_seed(self.seed, i)) for i in runs]


def _warm_chunks(todo: int) -> int:
    """How many chunks of ``CHUNK`` runs this process plays before its workers start
    (:data:`WARM_SHARE`, :data:`WARM_RUNS`)."""
    return max(1, min(WARM_RUNS, todo // WARM_SHARE) // CHUNK)


@dataclass(frozen=True)
class Job:
    """A batch's runs still to do, as an executor is handed them."""

    plan: _Plan
    #: What plays a chunk here: the cache's :meth:`WorkerCache.run_chunk`, or the caller's
    #: own worker function (tests: one that dies), which runs where a worker would.
    chunk_fn: ChunkFn
    #: The engine's own worker cache where it plays (the executors warm it here first and
    #: hand it on); None where the caller's ``chunk_fn`` does.
    cache: WorkerCache | None = None

    @property
    def todo(self) -> int:
        """Runs still to play."""
        return self.plan.n - self.plan.prefix - len(self.plan.extra)

    def play(self, chunk: Chunk) -> Records:
        """One chunk played in this process."""
        return self.chunk_fn(self.plan.scenario_path, self.plan.overrides, chunk)


class Executor(Protocol):
    """Where a batch's chunks are played: this process (:class:`InProcess`), local worker
    processes (engine.batch.pool.LocalPool) or a Dask cluster (engine.batch.dask.DaskCluster).
    An executor cuts the job's runs into chunks itself (a cluster's tasks are sized by its
    workers) and gives back each chunk's records in run order, as soon as they and every
    earlier chunk's are in: the runner writes them as they come."""

    def run(self, job: Job) -> Generator[Records, None, None]: ...


class InProcess:
    """Every chunk played here, one after another (one worker)."""

    def run(self, job: Job) -> Generator[Records, None, None]:
        for chunk in _chunks(job.plan):
            yield job.play(chunk)
