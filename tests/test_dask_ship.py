"""A Dask batch's shipment (its warm field cache, pickled once) goes from the batch's
process straight to each worker (engine.batch.dask._ship, _scatter_to), not through the
scheduler, and each worker holds one copy; a worker the batch's process cannot reach gets
it through the scheduler."""

from __future__ import annotations

import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from engine.batch import dask as batch_dask

pytest.importorskip("distributed")


@pytest.fixture(scope="module")
def cluster() -> Iterator[Any]:
    """Two workers as threads of this process, on loopback: the scheduler's handlers can be
    watched."""
    from distributed import Client, LocalCluster

    with LocalCluster(
        n_workers=2,
        threads_per_worker=1,
        processes=False,
        protocol="tcp://",
        host="127.0.0.1",
        dashboard_address="127.0.0.1:0",
    ) as c, Client(c.scheduler_address, set_as_default=False) as client:  # fmt: skip
        yield c, client


def _scatters(cluster: Any, monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    """The scheduler's ``scatter`` requests (data it is handed to pass on), from now on."""
    seen: list[Any] = []
    handlers = cluster.scheduler.handlers
    real = handlers["scatter"]

    async def scatter(*args: Any, **kw: Any) -> Any:
        seen.append(sorted(kw.get("data", {})))
        return await real(*args, **kw)

    monkeypatch.setitem(handlers, "scatter", scatter)
    return seen


def _holders(client: Any, fut: Any) -> list[str]:
    return sorted(client.who_has([fut])[fut.key])


def test_a_shipment_goes_straight_to_each_worker(
    cluster: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    c, client = cluster
    seen = _scatters(c, monkeypatch)
    blob = bytes(range(256)) * 4096  # 1 MB
    workers = sorted(client.nthreads())
    futs = [batch_dask._scatter_to(client, blob, w) for w in workers]
    assert seen == []  # the scheduler never held it
    assert [_holders(client, f) for f in futs] == [[w] for w in workers]  # one copy each
    assert client.gather(futs) == [blob, blob]
    del futs


def test_a_worker_out_of_reach_gets_its_shipment_through_the_scheduler(
    cluster: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    c, client = cluster
    seen = _scatters(c, monkeypatch)
    monkeypatch.setattr(batch_dask, "_reachable", lambda address, timeout: False)
    blob = b"shipment" * 1000
    w = sorted(client.nthreads())[1]
    fut = batch_dask._scatter_to(client, blob, w)
    assert len(seen) == 1 and _holders(client, fut) == [w]
    assert client.gather(fut) == blob
    del fut


def test_ship_has_every_worker_take_its_own_copy(
    cluster: Any, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """_ship: each worker's task takes the blob on that worker; nothing through the
    scheduler."""
    c, client = cluster
    seen = _scatters(c, monkeypatch)
    log = tmp_path / "taken"  # the workers run a copy of the function: it tells a file

    def take(path: str, overrides: Any, token: str, blob: bytes) -> bool:
        from distributed import get_worker

        with open(log, "a") as f:
            f.write(f"{get_worker().address} {len(blob)}\n")
        return True

    monkeypatch.setattr(batch_dask, "take_shipment", take)
    batch_dask._ship(client, ("p.yaml", (), "t", b"x" * 50_000))
    taken = sorted(log.read_text().splitlines())
    assert taken == sorted(f"{w} 50000" for w in client.nthreads())
    assert seen == []


def test_reachable_opens_a_connection_only_where_one_listens() -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen()
        port = s.getsockname()[1]
        assert batch_dask._reachable(f"tcp://127.0.0.1:{port}", 1.0)
    assert not batch_dask._reachable(f"tcp://127.0.0.1:{port}", 1.0)  # closed now
    assert not batch_dask._reachable(f"inproc://127.0.0.1:{port}", 1.0)
    assert not batch_dask._reachable("tcp://127.0.0.1:port", 1.0)


def test_a_dask_batch_warms_fewer_runs_than_a_local_pool() -> None:
    """The runs the batch's process plays before a Dask batch's tasks go out: one in
    WARM_SHARE of the batch, DASK_WARM_RUNS at most, one chunk at least; a local pool's
    own warm-up (WARM_RUNS) is left as it is."""
    from engine.batch import work

    chunk = work.CHUNK
    assert batch_dask.DASK_WARM_RUNS < work.WARM_RUNS
    assert batch_dask.dask_warm_chunks(60_000) * chunk == batch_dask.DASK_WARM_RUNS
    assert work._warm_chunks(60_000) * chunk == work.WARM_RUNS
    assert batch_dask.dask_warm_chunks(800) * chunk == 800 // work.WARM_SHARE
    assert batch_dask.dask_warm_chunks(30) == 1


def test_a_dask_batchs_last_tasks_allow_for_the_one_queued_on_each_worker() -> None:
    """The tail of a Dask batch's tasks: each at most the runs not yet in a task over twice
    the workers (a worker holds one task queued behind the one it plays), at least
    DASK_TAIL_LEAST but the very last, every run once and in order."""
    from types import SimpleNamespace

    for n, workers in ((60_000, 2), (60_000, 3), (3_000, 2), (130, 2)):
        plan: Any = SimpleNamespace(n=n, prefix=0, extra=set())
        warm, made = batch_dask.dask_tasks(plan, n, workers)
        chunks = [len(c) for c in made]
        assert sum(chunks) == n
        tasks = chunks[warm:]
        rest = tasks[0]
        least = min(batch_dask.DASK_TAIL_LEAST, rest)
        left = n - sum(chunks[:warm])
        for k in tasks[:-1]:
            assert k == max(least, min(rest, -(-left // (2 * workers))))
            left -= k
        tail = [k for k in tasks if k < rest]
        if n >= 3_000:
            assert len(tail) >= 6 and all(k >= least for k in tail[:-1])
            # The last whole-ish task one worker may start is short against the batch.
            assert tail[-2] <= max(least, rest // 16)


def test_a_shipment_to_many_workers_goes_out_once_and_is_copied_between_them(
    cluster: Any, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """Past DIRECT_SHIP_MAX workers the batch's process sends one copy and the workers copy
    it between them (here with the limit set to 1 on a 2-worker cluster): still nothing
    through the scheduler, and every worker takes it."""
    c, client = cluster
    seen = _scatters(c, monkeypatch)
    monkeypatch.setattr(batch_dask, "DIRECT_SHIP_MAX", 1)
    workers = sorted(client.nthreads())
    copies = list(batch_dask._copies(client, b"y" * 40_000, workers))
    assert [w for w, _ in copies] == workers
    fut = copies[0][1]
    assert all(d is fut for _, d in copies)  # one piece of data ...
    assert _holders(client, fut) == workers  # ... held by every worker
    assert seen == []
    del copies, fut


class _Seen:
    """A value that tells, as it is unpickled, whether the collector's passes were on."""

    collecting: list[bool] = []

    def __getstate__(self) -> dict[str, int]:
        return {"x": 1}  # a state, so that unpickling calls __setstate__

    def __setstate__(self, state: Any) -> None:
        import gc

        _Seen.collecting.append(gc.isenabled())


def test_a_tasks_records_are_unpacked_with_the_collector_paused() -> None:
    import gc
    import pickle

    from engine.batch import work

    records = [{"run": i, "cell": [i, 1], "seen": _Seen()} for i in range(3)]
    _Seen.collecting.clear()
    was = gc.isenabled()
    gc.enable()
    try:
        got = batch_dask._taken(work._packed(records))
        assert gc.isenabled()  # as it was
    finally:
        if not was:
            gc.disable()
    assert _Seen.collecting == [False, False, False]
    assert [(r["run"], r["cell"]) for r in got] == [(i, [i, 1]) for i in range(3)]
    assert batch_dask._taken(records) is records  # a test's own chunk_fn's list
    assert pickle.loads(work._packed(records[:0])) == []
