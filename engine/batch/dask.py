"""Batches on a Dask cluster: the scheduler's address checked, the connection made in
bounded time, the warm cache shipped once, the tasks' results taken in run order."""

from __future__ import annotations

import asyncio
import contextlib
import os
import threading
import time
import uuid
from collections.abc import Callable, Generator, Iterator
from typing import Any, NamedTuple

from engine.batch.control import _collector_paused
from engine.batch.results import fragment_records
from engine.batch.work import (
    AHEAD_PER_WORKER,
    CHUNK,
    WARM_SHARE,
    Job,
    Records,
    SeededRuns,
    _Plan,
    _run_indices,
    _unpacked,
    drop_shipment,
    engine_digest,
    play_point,
    run_chunk_packed,
    run_seed,
    run_shipped,
    take_shipment,
)
from engine.errors import ArgumentError, MissingExtra, ScenarioError, TacgridError, literal

#: Seconds to reach a Dask scheduler before giving up.
CONNECT_TIMEOUT = 10.0

#: Runs per Dask task at most: a batch is split into about ``AHEAD_PER_WORKER`` tasks per
#: worker, never under ``CHUNK``. A task costs the cluster some milliseconds of CPU of its
#: own (the client, the scheduler and the worker each handle it), whatever its size: at
#: this size that is well under 1% of the time its runs take to play, while its end
#: still comes soon enough for the taper (:func:`engine.batch.work._run_indices`) to even
#: out the workers' last tasks.
DASK_CHUNK_MAX = 4000

#: Seconds the batch waits for every Dask worker to take its shipment (:func:`_ship`).
SHIP_WAIT_S = 60.0

#: Seconds the batch waits for its workers to drop its shipment (:func:`_forget_shipment`).
FORGET_WAIT_S = 5.0


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


def _check_address(scheduler: str) -> str:
    """``tcp://HOST:PORT`` (or ``HOST:PORT``), checked without touching the network."""
    text = scheduler.strip()
    scheme, sep, rest = text.partition("://")
    if not sep:
        scheme, rest = "tcp", text
    if scheme != "tcp":
        raise ArgumentError(
            role="scheduler",
            given=scheduler,
            problem=f"only tcp:// scheduler addresses are supported (not {scheme}://); "
            "use tcp://HOST:PORT",
        )
    host, colon, port = rest.rpartition(":")
    host = host.strip("[]")
    if not colon or not host or not port.isdigit() or not 0 < int(port) < 65536:
        raise ArgumentError(
            role="scheduler",
            given=scheduler,
            problem="not a scheduler address; use tcp://HOST:PORT",
        )
    _need_cluster()
    return f"tcp://{rest}"


def _need_cluster() -> None:
    """Dask and distributed are the cluster extra's: without them a scheduler address is
    one line naming the extra, before anything is written."""
    try:
        import dask  # noqa: F401
        import distributed  # noqa: F401
    except ImportError:
        raise MissingExtra("cluster", role="scheduler") from None


def _connect(address: str, timeout: float | None = None) -> Any:
    """A Dask client for ``address`` within ``timeout`` seconds, or one clear line.

    The connection is made in a thread that is abandoned if it does not finish: a peer
    that accepts and never answers cannot hold the batch.
    """
    _need_cluster()
    import dask
    from distributed import Client

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
            role="scheduler",
            given=address,
            problem=f"no answer within {timeout:g} s (something accepts connections there but "
            "does not answer as a Dask scheduler); check the address",
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
        role="scheduler",
        given=address,
        problem=f"{why}; start a dask scheduler there (dask scheduler) or check the address",
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


class DaskCluster:
    """A Dask cluster (an :class:`engine.batch.work.Executor`) through a connected client;
    ``scheduler``: its address as the user gave it, for the one-line errors.

    A batch's last runs in, its workers are asked to drop its shipment
    (:func:`_forget_shipment`) while the batch writes its summary and runs table, not
    before: whoever closes the client first waits for that (:meth:`settle`)."""

    def __init__(self, client: Any, scheduler: str) -> None:
        self.client = client
        self.scheduler = scheduler
        #: The batches' requests to drop their shipments, set when answered.
        self.forgets: list[threading.Event] = []

    def run(self, job: Job) -> Generator[Records, None, None]:
        return _dask_results(job, self.client, self.scheduler, self.forgets)

    def settle(self, timeout: float = FORGET_WAIT_S) -> None:
        """Wait until every shipment this executor's batches asked to drop is dropped
        (``timeout`` seconds at most in all)."""
        deadline = time.monotonic() + timeout
        for done in self.forgets:
            done.wait(max(0.0, deadline - time.monotonic()))
        self.forgets.clear()


#: Runs the batch's process plays at most before a Dask batch's tasks go out (one in
#: ``WARM_SHARE`` of the batch, one chunk at least: :func:`dask_warm_chunks`). Fewer than a
#: local pool's ``WARM_RUNS``: every worker waits, idle, for these runs and then for their
#: pickle to be made, sent and taken, whereas a forked worker starts at once. A run left
#: out of them is played by a worker instead; what it learns the other worker may learn
#: again, but the learning is front-loaded (the first few hundred runs learn the most),
#: and a smaller shipment is quicker to pickle and to take.
DASK_WARM_RUNS = 400


def dask_warm_chunks(todo: int) -> int:
    """How many chunks of ``CHUNK`` runs a Dask batch's own process plays first
    (:data:`DASK_WARM_RUNS`)."""
    return max(1, min(DASK_WARM_RUNS, todo // WARM_SHARE) // CHUNK)


#: The last tasks of a Dask batch are at most the runs not yet in a task over this many
#: per worker (:func:`engine.batch.work._run_indices`'s ``taper``). A worker holds a task
#: queued behind the one it plays (the scheduler sends a worker of one thread two, its
#: ``worker-saturation``), so the task one worker ends on was cut two tasks before it
#: started: cut at half the runs left, it could outlast the other worker's last ones by a
#: whole such task.
TAPER_PER_WORKER = 2

#: Runs of a Dask batch's last tasks at least (the very last may be fewer): a task costs
#: the client, the scheduler and its worker some milliseconds of CPU whatever its size,
#: about what 25 runs take to play, whereas a worker's last task of this size ends the
#: batch a few hundredths of a second after the other's.
DASK_TAIL_LEAST = 100


def dask_tasks(plan: _Plan, todo: int, workers: int) -> tuple[int, Iterator[list[int]]]:
    """How a Dask batch of ``todo`` runs still to play splits them where the engine's cache
    plays (:func:`_dask_results`): ``warm`` chunks of at most ``CHUNK`` runs played in the
    batch's process (:func:`dask_warm_chunks`, each at most half the batch), then tasks of
    up to :data:`DASK_CHUNK_MAX` runs, about ``AHEAD_PER_WORKER`` a worker, that shrink
    towards the end (``taper``): ``(warm, the run indices of every chunk, warm ones
    first)``."""
    first = min(CHUNK, max(1, todo // 2))
    warm = dask_warm_chunks(todo)
    ahead = AHEAD_PER_WORKER * workers
    rest = min(DASK_CHUNK_MAX, max(CHUNK, -(-(todo - first * warm) // ahead)))
    taper = TAPER_PER_WORKER * workers
    least = min(DASK_TAIL_LEAST, rest)
    return warm, _run_indices(plan, first, rest, warm, taper=taper, least=least)


def _dask_results(
    job: Job, client: Any, scheduler: str, forgets: list[threading.Event] | None = None
) -> Generator[Records, None, None]:
    """Each chunk's results from the cluster, in run order.

    Where the engine's own cache plays (``job.cache``) the field cache is built once,
    here: the first chunks (:func:`dask_warm_chunks`, each at most half the batch) run in this
    process, and the scenario and warm cache then ship to each worker once
    (:meth:`WorkerCache.shipment`, :func:`_ship`, :func:`take_shipment`; the tasks,
    :func:`run_shipped`, carry only their runs). The rest
    goes in about ``AHEAD_PER_WORKER`` tasks per worker, each at least ``CHUNK`` runs (a
    task costs the cluster some milliseconds of its own); each task's runs come back as one
    pickle (:func:`_packed`). Towards the end the tasks shrink (``taper``,
    :func:`engine.batch.work._run_indices`): the workers finish together, not one of them
    alone with a last whole task."""
    from distributed import as_completed

    plan = job.plan
    path = os.path.abspath(plan.scenario_path)
    workers = max(1, len(_dask_call(client.nthreads, scheduler, plan)))
    ahead = AHEAD_PER_WORKER * workers
    cache = job.cache
    warm = 0
    if cache is not None:
        warm, chunks = dask_tasks(plan, job.todo, workers)
    else:
        chunks = _run_indices(plan)
    numbered = enumerate(chunks)
    next_out = 0
    token: str | None = None

    def submit(runs: list[int]) -> Any:
        # A task names a module function: on a worker it plays from that process's own
        # cache (engine.batch.work.WORKER_CACHE), which the shipment warmed.
        if cache is None:  # a caller's chunk_fn (tests) takes the runs with their seeds
            c = [(i, run_seed(plan.seed, i)) for i in runs]
            return client.submit(job.chunk_fn, path, plan.overrides, c, pure=False, retries=2)
        seeded = SeededRuns.of(plan.seed, runs)
        if token is not None:
            return client.submit(
                run_shipped, path, plan.overrides, token, seeded, pure=False, retries=2
            )
        return client.submit(run_chunk_packed, path, plan.overrides, seeded, pure=False, retries=2)

    if cache is not None:
        for _ in range(warm):
            here = next(numbered, None)
            if here is None:
                return
            yield job.play([(i, run_seed(plan.seed, i)) for i in here[1]])
            next_out += 1
        blob = cache.shipment(plan.scenario_path, plan.overrides)
        if blob is not None:
            token = f"{engine_digest()}/{uuid.uuid4().hex}"
            args = (path, plan.overrides, token, blob)
            _dask_call(lambda: _ship(client, args), scheduler, plan)
            del blob, args
    index: dict[str, int] = {}
    back: dict[int, Records] = {}
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
            res = _taken(_dask_call(fut.result, scheduler, plan))
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
        done = _forget_shipment(client, (path, plan.overrides, token), wait=forgets is None)
        if forgets is not None:  # waited for by DaskCluster.settle, after the batch's end
            forgets.append(done)


def _taken(value: Any) -> Records:
    """A task's records as :func:`_unpacked` gives them, made with the cyclic collector's
    automatic passes paused: the thousands of records a task sends back are containers
    enough to set off passes, and a full one walks every object of this process, whose
    warm field cache is most of them. The records make no cycles; each goes when the
    batch has written it."""
    with _collector_paused():
        return _unpacked(value)


#: A sweep's points on the cluster at once, per worker (:class:`DaskPoints`): one playing
#: and one waiting, so that no worker idles while the sweep writes a finished point.
POINTS_AHEAD_PER_WORKER = 2

#: Points whose fragments a sweep holds at most, played or playing (:meth:`DaskPoints.top_up`).
POINTS_HELD = 64


class PointSpec(NamedTuple):
    """A sweep's point as one task: its overrides (as a batch's plan orders them), its
    batch seed and its runs."""

    overrides: tuple[tuple[str, Any], ...]
    seed: int
    runs: int


class DaskPoints:
    """A sweep's points on a Dask cluster, a task each (:func:`engine.batch.work.play_point`).

    A point's runs play on one worker from one field cache, warmed once for the point (not
    once per chunk, nor shipped), and come back as one Parquet fragment of a few KB: the
    scheduler holds no run, the client holds one point's at a time. The sweep writes each
    point's folder through ``run_batch`` in order, with :meth:`executor` as its executor;
    meanwhile the cluster plays the next points (:data:`POINTS_AHEAD_PER_WORKER` a worker).
    A point given as None (resumed part-way), or one whose batch turns out other than its
    spec, plays as any batch on the cluster does (:class:`DaskCluster`)."""

    def __init__(
        self, client: Any, scheduler: str, path: str, points: list[PointSpec | None]
    ) -> None:
        self.client = client
        self.scheduler = scheduler
        self.path = os.path.abspath(path)
        self.points = points
        from distributed import as_completed

        self.futures: dict[int, Any] = {}
        self.finished = as_completed(loop=client.loop)
        self.sent = 0  # points handed to the cluster (or passed over) so far, in order
        workers = max(1, len(_dask_call(client.nthreads, scheduler, None)))
        self.ahead = POINTS_AHEAD_PER_WORKER * workers
        self.top_up()

    def top_up(self) -> None:
        """Send points until :attr:`ahead` are unfinished on the cluster (a finished
        point's fragment waits for the sweep to write it: a few KB, :data:`POINTS_HELD` at
        most), so a long point holds up no worker."""

        def submit() -> None:
            while self.sent < len(self.points) and len(self.futures) < POINTS_HELD:
                if sum(not f.done() for f in self.futures.values()) >= self.ahead:
                    return
                spec = self.points[self.sent]
                if spec is not None:
                    fut = self.client.submit(play_point, self.path, *spec, pure=False, retries=2)
                    self.futures[self.sent] = fut
                    self.finished.add(fut)
                self.sent += 1

        _dask_call(submit, self.scheduler, None)

    def fragment(self, fut: Any, plan: _Plan) -> bytes:
        """``fut``'s fragment; while it plays, the points that finish meanwhile are
        replaced by the next ones (:meth:`top_up`)."""

        def until_done() -> bytes:
            while not fut.done():
                self.top_up()
                next(self.finished)  # the next point to finish, this one or another
            self.top_up()
            return bytes(fut.result())

        return bytes(_dask_call(until_done, self.scheduler, plan))

    def next_point(self, first: int) -> int:
        """The point the sweep writes next, ``first`` being the first it has not written:
        the first whose task has finished (its folder is written while the cluster plays
        the others; points finish out of grid order), else ``first`` where it has no task
        (it plays as a batch on the cluster), else the first to finish."""

        def pick() -> int:
            while True:
                self.top_up()
                done = [i for i, f in self.futures.items() if f.done()]
                if done:
                    return min(done)
                if first not in self.futures:
                    return first
                next(self.finished)  # the next point to finish

        return int(_dask_call(pick, self.scheduler, None))

    def executor(self, index: int) -> PointExecutor:
        """The executor of point ``index``'s batch."""
        return PointExecutor(self, index)

    def close(self) -> None:
        """Cancel the points still on the cluster (a sweep stopped or failed)."""
        futures, self.futures = list(self.futures.values()), {}
        if futures:
            with contextlib.suppress(BaseException):
                self.client.cancel(futures)


class PointExecutor:
    """One point of :class:`DaskPoints` (an :class:`engine.batch.work.Executor`): the
    point's fragment, in chunks of :data:`CHUNK` runs, where the batch is the point's whole
    spec; else the batch's runs on the cluster as any batch's."""

    def __init__(self, points: DaskPoints, index: int) -> None:
        self.points = points
        self.index = index

    def run(self, job: Job) -> Generator[Records, None, None]:
        points = self.points
        spec = points.points[self.index]
        fut = points.futures.pop(self.index, None)
        plan = job.plan
        whole = (
            spec is not None
            and job.cache is not None
            and plan.prefix == 0
            and not plan.extra
            and (plan.n, plan.seed, plan.overrides) == (spec.runs, spec.seed, spec.overrides)
            and os.path.abspath(plan.scenario_path) == points.path
        )
        try:
            points.top_up()
            if fut is None or not whole:
                if fut is not None:
                    _dask_call(lambda: points.client.cancel([fut]), points.scheduler, plan)
                    fut = None
                cluster = DaskCluster(points.client, points.scheduler)
                try:
                    yield from cluster.run(job)
                finally:
                    cluster.settle()
                return
            records = fragment_records(points.fragment(fut, plan))
            fut = None
            for start in range(0, len(records), CHUNK):
                yield records[start : start + CHUNK]
        finally:
            if fut is not None:
                with contextlib.suppress(BaseException):
                    points.client.cancel([fut])


def _ship(client: Any, args: tuple[str, tuple[tuple[str, Any], ...], str, Any]) -> None:
    """Give every worker of the cluster the batch's shipment (``args``: path, overrides,
    token, pickled cache) and wait until each has taken it (:func:`take_shipment`).

    The pickle goes out as data (``Client.scatter``), to each worker from this process
    where it can reach the worker (:func:`_scatter_to`), and a task pinned to each worker
    takes it on its task thread. Sent as an argument of ``Client.run`` instead, it was
    copied into the messages of the client, then of the scheduler once per worker
    (msgpack), and unpickled on each worker's event loop, several times the CPU of the
    batch's own process. A worker that has not taken it within :data:`SHIP_WAIT_S` (gone,
    too busy, or it failed there) is left without: its tasks load the scenario themselves
    (:func:`run_shipped`)."""
    path, overrides, token, blob = args
    # Every worker: ``scheduler_info()`` lists only the first 5 in some dask releases.
    workers = list(client.nthreads())
    if not workers:
        return
    takes = []
    for w, data in _copies(client, blob, workers):
        # Each worker's take is on its way as soon as its copy is there: it unpickles while
        # this process sends the next copy.
        takes.append(
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
        )
    deadline = time.monotonic() + SHIP_WAIT_S
    try:
        for f in takes:
            # Not taken (gone, too busy, failed): that worker's tasks do without.
            with contextlib.suppress(Exception):
                f.result(timeout=max(0.0, deadline - time.monotonic()))
    finally:
        client.cancel([f for f in takes if not f.done()])
        del takes


#: Workers a shipment is sent to one by one from the batch's process, at most
#: (:func:`_copies`); to more, it is sent once and copied from worker to worker.
DIRECT_SHIP_MAX = 4


def _copies(client: Any, blob: Any, workers: list[str]) -> Iterator[tuple[str, Any]]:
    """Each worker with the data (a future) of its copy of ``blob``, as each copy is there.

    A few workers get a copy each from this process (:func:`_scatter_to`): no hop through
    the scheduler or another worker. To more than :data:`DIRECT_SHIP_MAX`, one copy goes to
    one worker and Dask's ``replicate`` copies it from worker to worker (as a cluster's
    network shares the sending out), through the scheduler only where the direct send
    fails."""
    if len(workers) <= DIRECT_SHIP_MAX:
        for w in workers:
            yield w, _scatter_to(client, blob, w)
        return
    try:
        data = client.scatter(blob, direct=True, broadcast=True, hash=False)
    except Exception:  # noqa: BLE001 - distributed raises many kinds; the scheduler relays it
        data = client.scatter(blob, broadcast=True, hash=False)
    for w in workers:
        yield w, data


#: Seconds to open a connection to a worker before a shipment goes to it through the
#: scheduler instead (:func:`_scatter_to`).
DIRECT_CONNECT_S = 2.0


def _scatter_to(client: Any, blob: Any, worker: str) -> Any:
    """``blob`` as data held by ``worker`` alone (a future).

    Sent straight from this process where it can reach the worker (the scheduler is only
    told where it is). Through the scheduler (as ``Client.scatter`` does by default), the
    pickle of tens of MB was read and written by the scheduler and then copied from one
    worker to the other (``broadcast``): a quarter of a second of the scheduler's CPU and
    more of the workers' event loops, while every worker waited. A worker this process
    cannot reach (another network, a firewall), or a direct send that fails, gets it
    through the scheduler."""
    if _reachable(worker, DIRECT_CONNECT_S):
        with contextlib.suppress(Exception):
            return client.scatter(blob, workers=[worker], direct=True, hash=False)
    return client.scatter(blob, workers=[worker], direct=False, hash=False)


def _reachable(address: str, timeout: float) -> bool:
    """Whether a TCP connection to ``address`` (``tcp://HOST:PORT``) opens within
    ``timeout`` seconds (closed at once)."""
    import socket

    scheme, _, rest = address.partition("://")
    host, _, port = rest.rpartition(":")
    if scheme != "tcp" or not port.isdigit():
        return False
    try:
        socket.create_connection((host.strip("[]"), int(port)), timeout).close()
    except OSError:
        return False
    return True


def _forget_shipment(client: Any, args: tuple[Any, ...], wait: bool = True) -> threading.Event:
    """Ask every worker to drop the batch's shipment, waiting :data:`FORGET_WAIT_S` at most
    (a worker that misses it drops it when the next batch of the scenario ships); with
    ``wait`` False, not waiting: the event given back is set when it is done."""
    done = threading.Event()

    def forget() -> None:
        with contextlib.suppress(BaseException):
            client.run(drop_shipment, *args, on_error="ignore")
        done.set()

    threading.Thread(target=forget, name="tacgrid-dask-forget", daemon=True).start()
    if wait:
        done.wait(FORGET_WAIT_S)
    return done


def _dask_call(fn: Callable[[], Any], scheduler: str, plan: _Plan | None) -> Any:
    """``fn()``; a cluster failure (the scheduler gone, a lost connection) is one line
    (``plan``: the batch under way, to say how far it got; None between a sweep's points)."""
    try:
        return fn()
    except (TacgridError, KeyboardInterrupt):
        raise
    except Exception as exc:  # noqa: BLE001 - distributed raises many kinds
        if "deserialization of the task graph" in str(exc):
            # The scheduler unpickles each task: it must import tacgrid's engine too.
            raise ScenarioError(
                role="scheduler",
                given=scheduler,
                problem="the scheduler cannot load tacgrid's tasks (it runs in a Python "
                "environment without tacgrid, or another version of it); start the scheduler "
                "and its workers where `import engine` gives this tacgrid; "
                + literal(_how_far(plan))
                + ": run the same command with {resume} then",
                others=("resume",),
            ) from None
        raise ScenarioError(
            role="scheduler",
            given=scheduler,
            problem=literal(f"the cluster failed mid-batch ({_short(exc)}); {_how_far(plan)}")
            + "; run the same command with {resume} when the scheduler is back",
            others=("resume",),
        ) from None


def _how_far(plan: _Plan | None) -> str:
    if plan is None:
        return "every finished point is in its folder"
    return f"{plan.tally.n} of {plan.n} runs are in {plan.runs_path}"
