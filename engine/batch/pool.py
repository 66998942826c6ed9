"""Local worker processes: a pool of this package's own, each worker on its own socket
(a length-prefixed pickle per message), and no thread in the batch's process."""

from __future__ import annotations

import contextlib
import gc
import heapq
import os
import pickle
import signal
import struct
import sys
import threading
import time
from collections.abc import Generator, Iterator
from typing import Any

from engine.batch.control import _FROZEN, _held, _Stop
from engine.batch.work import (
    AHEAD_PER_WORKER,
    CHUNK,
    Chunk,
    ChunkFn,
    Job,
    Records,
    _chunks,
    _warm_chunks,
    run_chunk,
)
from engine.errors import ScenarioError, literal


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

    def send(self, worker: _Worker, index: int, chunk: Chunk) -> None:
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


class LocalPool:
    """Local worker processes (an :class:`engine.batch.work.Executor`): ``workers`` of them
    in all, this process one of them where the engine's own cache plays (see
    :func:`_pool_results`). ``stop``: the batch's signal handling (SIGINT and SIGTERM are
    raised between the pool's steps, never inside them)."""

    def __init__(self, workers: int, stop: _Stop | None = None) -> None:
        self.workers = workers
        self.stop = stop

    def run(self, job: Job) -> Generator[Records, None, None]:
        import multiprocessing as mp

        ctx = mp.get_context("fork" if sys.platform.startswith("linux") else "spawn")
        forked = ctx.get_start_method() == "fork"
        # A forked worker process plays with the job's own function, the cache it inherits
        # among it; a spawned one is handed a function by name, which plays from that
        # process's own cache (engine.batch.work.WORKER_CACHE).
        remote = job.chunk_fn if forked or job.cache is None else run_chunk
        numbered = enumerate(_chunks(job.plan))
        n_chunks = -(-job.todo // CHUNK)
        next_out = 0
        if job.cache is not None and forked:
            # The field cache is built once and shared: the first chunks run here (the
            # graphs, fields and rule results runs ask for first: _warm_chunks), and the
            # workers forked after them start with this process's cache (copy-on-write),
            # not each from nothing.
            for _ in range(_warm_chunks(n_chunks * CHUNK)):
                first = next(numbered, None)
                if first is None:
                    return
                yield job.play(first[1])
                next_out += 1
            # Objects made so far stay out of the collector's passes, here and in the
            # workers: a collection in a worker would otherwise touch (and so copy) the
            # whole cache.
            gc.freeze()
            _FROZEN[0] = True
            try:
                yield from _pool_results(
                    job, numbered, n_chunks, self.workers, remote, ctx, next_out, self.stop
                )
            finally:
                _FROZEN[0] = False
                gc.unfreeze()
            return
        yield from _pool_results(
            job, numbered, n_chunks, self.workers, remote, ctx, next_out, self.stop
        )


def _pool_results(
    job: Job,
    numbered: Iterator[tuple[int, Chunk]],
    n_chunks: int,
    workers: int,
    remote: ChunkFn,
    ctx: Any,
    next_out: int,
    stop: _Stop | None,
) -> Generator[Records, None, None]:
    """The pool's part of :meth:`LocalPool.run`: chunks from ``numbered`` on, in order;
    ``remote`` plays them in the worker processes.

    Where the engine's own cache plays (``job.cache``), this process is one of the
    ``workers``: it starts ``workers - 1`` worker processes and, whenever none of their
    results is due, plays the next chunk itself (as a single worker does), then hands the
    others their next chunks. A forked worker costs CPU a run does not (the fork, a copy of
    each page it writes that it shares with this process, a cache warmed again, its
    results sent), so one fewer is forked and this process plays instead. A caller's
    ``chunk_fn`` (tests) stands for what a worker process does (it may kill its
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
    pending: dict[int, Chunk] = {}  # handed out, not back
    back: dict[int, Records] = {}  # back, waiting for an earlier chunk
    again: list[int] = []  # a heap: chunks of a worker that died, handed out first
    exhausted = False
    deaths = 0
    plan = job.plan
    pool = _Pool(ctx, plan.scenario_path, plan.overrides, remote, stop)
    here = job.cache is not None  # this process plays chunks too
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
                    problem=literal(
                        f"{plan.scenario_path}: worker processes kept dying; "
                        f"{n_chunks - next_out} chunks of runs did not finish"
                    )
                    + "; run again with {resume}",
                    others=("resume",),
                )

    try:
        with _held(stop):
            pool.open()
        while True:
            with _held(stop):
                feed()
                mine = take() if here else None
            if mine is not None:  # this process's own chunk, played as a single worker's
                results = job.play(pending[mine])
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
