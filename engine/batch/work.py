"""The work of a batch: its runs' seeds, its chunks, and the worker cache (a scenario and
its warm field cache per process) that plays them, shipped whole to Dask workers."""

from __future__ import annotations

import functools
import hashlib
import os
import pickle
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np

from engine.batch.control import _collector_paused
from engine.batch.tally import Tally

#: Runs per task handed to a worker process or a Dask worker.
CHUNK = 25

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

#: A warm field cache ships to Dask workers when it pickles to at most this many bytes
#: (else each worker builds its own: the same results either way).
SHIP_MAX_BYTES = 64 * 2**20

#: Scenarios and their field caches kept per process, by (path, overrides[, shipment]):
#: the most recent few (a sweep makes one per point).
CACHE_KEPT = 4

_CACHE: dict[tuple[Any, ...], Any] = {}

#: The worker function's signature: (scenario path, overrides, [(run, seed), ...]) -> results.
ChunkFn = Callable[[str, tuple[tuple[str, Any], ...], list[tuple[int, int]]], list[dict[str, Any]]]


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
