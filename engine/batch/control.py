"""What keeps a batch whole around its runs: the folder lock, SIGINT and SIGTERM, and
the cyclic collector paused while runs play."""

from __future__ import annotations

import contextlib
import gc
import os
import signal
import stat
import threading
from collections.abc import Iterator
from typing import Any

from engine.errors import ArgumentError, Stopped, literal
from engine.safeio import open_lock, write_pid


def out_folder(out_dir: str, *parts: str) -> str:
    """The folder ``out_dir/parts...`` that a batch or sweep writes in, made as needed: the
    one place that makes output folders, so every write resolves inside ``--out``.

    ``out_dir`` is the folder the user named (made with its parents); each of ``parts``
    below it must be a real folder, not a symbolic link (nor a file): a link there would
    send the files written under it anywhere (``DIR/points`` linked to another folder).
    Refused in one line naming ``--out``."""
    if os.path.exists(out_dir) and not os.path.isdir(out_dir):
        raise ArgumentError(
            role="out", given=out_dir, problem="is a file, not a folder; give a folder"
        )
    path = out_dir
    try:
        os.makedirs(out_dir, exist_ok=True)
        for part in parts:
            if not part or part in (".", "..") or os.sep in part:
                raise ArgumentError(
                    role="out", given=out_dir, problem=f"cannot hold a folder named {part!r}"
                )
            path = os.path.join(path, part)
            try:
                st = os.lstat(path)
            except FileNotFoundError:
                os.mkdir(path)
                st = os.lstat(path)
            if stat.S_ISLNK(st.st_mode) or not stat.S_ISDIR(st.st_mode):
                what = "a symbolic link" if stat.S_ISLNK(st.st_mode) else "not a folder"
                raise ArgumentError(
                    role="out",
                    given=out_dir,
                    problem=f"{path} is {what}; tacgrid writes only inside {{out}}, in folders "
                    "of its own: remove it or give another {out}",
                    others=("out",),
                )
    except OSError as exc:
        raise ArgumentError(
            role="out", given=out_dir, problem=f"cannot create the folder {path} ({exc.strerror})"
        ) from None
    return path


class BatchStopped(Stopped):
    """SIGINT or SIGTERM stopped a batch; the runs so far are kept for ``--resume``."""


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
            fd = open_lock(path, "out")  # a link or a special file is refused
        except OSError as exc:
            raise ArgumentError(
                role="out",
                given=out_dir,
                problem=f"cannot lock the folder ({exc.strerror}); give a folder you can write to",
            ) from None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            try:
                pid = os.read(fd, 32).decode("ascii", "replace").strip() or "unknown"
            finally:
                os.close(fd)
            raise ArgumentError(
                role="out",
                given=out_dir,
                problem=literal(f"in use by another batch (pid {pid}); wait for it to finish ")
                + "or give another {out}",
                others=("out",),
            ) from None
        try:
            write_pid(fd, path, "out")
        except OSError:
            os.close(fd)
            raise
        self.fd = fd

    def release(self) -> None:
        if self.fd >= 0:
            fd, self.fd = self.fd, -1
            os.close(fd)  # closing the last descriptor releases the flock


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
