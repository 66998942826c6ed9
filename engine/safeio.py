"""The one place tacgrid writes files: whole or not at all, and only over regular files.

Every file the project writes (event logs, batch results and summaries, plots, renders,
screenshots) goes through this module, and ``tests/test_hostile_writes.py`` greps
``engine/`` to keep it so. Its promises:

* A target that exists and is not a regular file (a device such as ``/dev/null``, a FIFO, a
  socket, a folder) or that is a symbolic link is refused with one line, before anything is
  written: an atomic replace would swap the device or the link out for a plain file.
* A whole file is written to a fresh temporary file in the target's folder (a new name of
  64 random bits, created exclusively: two writers never share one), synced, given the mode
  a new file gets (or the old file's mode), then renamed over the target with
  :func:`os.replace`. A stop (Ctrl-C, SIGTERM) on the way removes it too.
* Any :class:`OSError` on the way (a full disk, a quota, a file-size limit, no permission,
  a read-only file system) removes the temporary file and raises :class:`WriteError`: one
  line naming the path and the cause. The target keeps its old bytes, or stays absent.
* Appending (a batch's ``runs.jsonl``) writes a whole record or nothing: a failed append is
  cut back to the record boundary before the error is raised.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
from collections.abc import Callable, Iterator
from types import TracebackType

from engine.errors import WriteError

#: What a cause means for the user, by errno (the rest: the system's own words).
_FIXES = {
    errno.ENOSPC: "the disk is full: free some space and run again",
    errno.EDQUOT: "the disk quota is used up: free some space and run again",
    errno.EFBIG: "the file is larger than this system allows (file-size limit)",
    errno.EACCES: "no permission to write there: choose a folder you can write to",
    errno.EPERM: "no permission to write there: choose a folder you can write to",
    errno.EROFS: "that file system is read-only: choose another folder",
}


def _refused(
    path: str,
    label: str | None,
    problem: str,
    errno: int | None = None,
    reason: str | None = None,
) -> WriteError:
    """``PATH: problem``, after ``label``: a role word (``"out"``, ``"log"``) is the
    argument the path was given as, which a front end names its own way (engine.errors);
    any other label is printed as it is."""
    if label and label.isidentifier():
        return WriteError(errno=errno, reason=reason, role=label, given=path, problem=problem)
    name = f"{label} {path}" if label else path
    return WriteError(f"{name}: {problem}", errno, reason)


def failure(path: str, exc: OSError, label: str | None = None) -> WriteError:
    """The one-line error for ``exc`` met while writing ``path``."""
    cause = exc.strerror or type(exc).__name__
    fix = _FIXES.get(exc.errno or 0, "check the path and the disk")
    return _refused(path, label, f"cannot write ({cause}); {fix}", exc.errno, cause)


def _kind(mode: int) -> str:
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISFIFO(mode):
        return "a FIFO (named pipe)"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "not a plain file"


def check_target(  # noqa: C901
    path: str | os.PathLike[str], label: str | None = None, *, suffix: str | None = None
) -> str:
    """Refuse, before any work, a file name tacgrid must not write; return it as a str.

    Refused: an empty name, a name without ``suffix`` (e.g. ``".png"``, any case), a
    symbolic link, anything that exists and is not a regular file, a missing folder.

    >>> check_target("/dev/null", "log")
    Traceback (most recent call last):
    ...
    engine.errors.WriteError: log /dev/null: not a regular file (a device); give a file path
    """
    path = os.fspath(path)
    if not path or "\0" in path:
        raise _refused(path, label, "not a usable file name; give a file path")
    if suffix and not path.lower().endswith(suffix):
        kind = suffix.lstrip(".").upper()
        raise _refused(
            path, label, f"tacgrid writes {kind} images only; give a name ending in {suffix}"
        )
    try:
        st: os.stat_result | None = os.lstat(path)
    except FileNotFoundError:
        st = None
    except NotADirectoryError:
        raise _refused(path, label, "a part of the path is a file, not a folder") from None
    except OSError as exc:
        raise failure(path, exc, label) from None
    if st is not None:
        if stat.S_ISLNK(st.st_mode):
            raise _refused(
                path,
                label,
                "is a symbolic link, not a regular file; tacgrid does not write through links: give "
                "the file's own path",
            )
        if stat.S_ISDIR(st.st_mode):
            raise _refused(path, label, "is a folder, not a regular file; give a file name")
        if not stat.S_ISREG(st.st_mode):
            raise _refused(
                path, label, f"not a regular file ({_kind(st.st_mode)}); give a file path"
            )
    folder = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(folder):
        raise _refused(
            path, label, f"cannot write: the folder {folder} does not exist; create it first"
        )
    return path


def _new_file_mode(path: str) -> int:
    """The old file's permissions, or those a new file gets under the umask."""
    try:
        return stat.S_IMODE(os.stat(path).st_mode)
    except OSError:
        pass
    return 0o666 & ~_umask()


def _umask() -> int:
    """The process umask, read without changing it where the system can tell (Linux)."""
    with contextlib.suppress(OSError, ValueError):
        with open("/proc/self/status", encoding="ascii") as fh:
            for line in fh:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


#: Tries at a fresh temporary name before giving up (each name has 64 random bits).
_TEMP_TRIES = 100
_TEMP_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0)


def replace_with(
    path: str | os.PathLike[str],
    write: Callable[[int], None],
    label: str | None = None,
    *,
    suffix: str | None = None,
) -> str:
    """Write ``path`` whole or not at all: ``write(fd)`` fills a fresh temporary file.

    ``write`` gets a file descriptor open for writing; it must not close it. Returns the
    path written.
    """
    path = check_target(path, label, suffix=suffix)
    folder = os.path.dirname(os.path.abspath(path))
    base = os.path.basename(path)
    # The temporary file: hidden, unique per writer, named for its target
    # (".tacgrid-<16 hex>-runs.jsonl.tmp"), mode 0600 until written. Its name is held
    # before the file exists, so a stop landing on any bytecode (Ctrl-C's KeyboardInterrupt,
    # SIGTERM as the command line raises it) finds it removed below; tempfile.mkstemp made
    # the file before its caller held the name, and a stop there left it behind.
    tmp = ""
    try:
        for _ in range(_TEMP_TRIES):
            tmp = os.path.join(folder, f".tacgrid-{os.urandom(8).hex()}-{base}.tmp")
            try:
                fd = os.open(tmp, _TEMP_FLAGS, 0o600)
                break
            except FileExistsError:
                tmp = ""  # another writer's: not ours to remove
        else:
            raise FileExistsError(errno.EEXIST, "no free temporary file name", folder)
        try:
            write(fd)
            os.fchmod(fd, _new_file_mode(path))
            os.fsync(fd)
        finally:
            os.close(fd)
        # The target may have become a link or a device while we wrote: check again.
        check_target(path, label, suffix=suffix)
        os.replace(tmp, path)
    except BaseException as exc:
        if tmp:
            with contextlib.suppress(OSError):
                os.remove(tmp)
        if isinstance(exc, OSError):
            raise failure(path, exc, label) from None
        raise
    with contextlib.suppress(OSError):  # the rename itself survives a power cut
        dfd = os.open(folder, os.O_RDONLY)
        try:
            os.fsync(dfd)
        finally:
            os.close(dfd)
    return path


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        n = os.write(fd, view)
        view = view[n:]


def write_bytes(
    path: str | os.PathLike[str],
    data: bytes,
    label: str | None = None,
    *,
    suffix: str | None = None,
) -> str:
    """Replace ``path`` with ``data``, whole or not at all (see the module's promises)."""
    return replace_with(path, lambda fd: _write_all(fd, data), label, suffix=suffix)


def write_text(path: str | os.PathLike[str], text: str, label: str | None = None) -> str:
    """Replace ``path`` with ``text`` in UTF-8, whole or not at all."""
    return write_bytes(path, text.encode("utf-8"), label)


def write_png(
    path: str | os.PathLike[str], data: bytes, label: str | None = None, *, any_name: bool = False
) -> str:
    """Replace ``path`` (a ``.png`` name unless ``any_name``) with an encoded PNG, checked
    to be complete."""
    if not (data.startswith(b"\x89PNG\r\n\x1a\n") and data.endswith(b"IEND\xaeB`\x82")):
        raise _refused(
            os.fspath(path),
            label,
            "the image could not be encoded as a whole PNG; nothing was written",
        )
    return write_bytes(path, data, label, suffix=None if any_name else ".png")


class AppendFile:
    """A file that grows by whole records (``runs.jsonl``): each :meth:`append` writes all
    of its bytes or none (a failed write is cut back to where it started).

    >>> with AppendFile(path, "out") as log:  # doctest: +SKIP
    ...     log.append(b'{"run": 0}\\n')
    """

    def __init__(self, path: str | os.PathLike[str], label: str | None = None) -> None:
        self.path = check_target(path, label)
        self.label = label
        flags = os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_NOFOLLOW | os.O_NONBLOCK
        try:
            self.fd = os.open(self.path, flags | getattr(os, "O_CLOEXEC", 0), 0o666)
        except OSError as exc:
            raise failure(self.path, exc, label) from None
        if not stat.S_ISREG(os.fstat(self.fd).st_mode):  # swapped in since the check
            os.close(self.fd)
            raise _refused(self.path, label, "not a regular file; give a file path")

    def append(self, data: bytes) -> None:
        """Write ``data`` at the end, whole; on a failure cut the file back and raise."""
        end = os.fstat(self.fd).st_size
        try:
            _write_all(self.fd, data)
        except OSError as exc:
            with contextlib.suppress(OSError):
                os.ftruncate(self.fd, end)
            raise failure(self.path, exc, self.label) from None

    def close(self) -> None:
        if self.fd >= 0:
            fd, self.fd = self.fd, -1
            os.close(fd)

    def __enter__(self) -> AppendFile:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()


def truncate(path: str | os.PathLike[str], size: int, label: str | None = None) -> None:
    """Cut a regular file back to ``size`` bytes (a torn last record), refusing anything else."""
    path = check_target(path, label)
    try:
        fd = os.open(path, os.O_WRONLY | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0))
        try:
            os.ftruncate(fd, size)
        finally:
            os.close(fd)
    except OSError as exc:
        raise failure(path, exc, label) from None


def open_lock(path: str | os.PathLike[str], label: str | None = None) -> int:
    """Open (creating) a lock file for reading and writing: a descriptor to ``flock``.

    A link or a special file is refused, as is a failure to open it: a :class:`WriteError`
    (an :class:`OSError` too, whose ``strerror`` is the cause).
    """
    path = check_target(path, label)
    flags = os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(path, flags, 0o644)
    except OSError as exc:
        raise failure(path, exc, label) from None
    if not stat.S_ISREG(os.fstat(fd).st_mode):  # swapped in since the check
        os.close(fd)
        raise _refused(path, label, "not a regular file; give a file path")
    return fd


def write_pid(fd: int, path: str | os.PathLike[str], label: str | None = None) -> None:
    """Replace a held lock file's content with this process's id (a few bytes, in place)."""
    try:
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
    except OSError as exc:
        raise failure(os.fspath(path), exc, label) from None


def rename_over(
    src: str | os.PathLike[str], dst: str | os.PathLike[str], label: str | None = None
) -> None:
    """Rename a file this process wrote (``src``) over ``dst``, which must be a regular file
    or absent; a failure is a :class:`WriteError` naming ``dst``."""
    dst = check_target(dst, label)
    try:
        os.replace(src, dst)
    except OSError as exc:
        raise failure(dst, exc, label) from None


@contextlib.contextmanager
def quiet_stderr() -> Iterator[None]:
    """Standard error's descriptor pointed at an anonymous scratch file (removed on close,
    never named) while a C library writes warnings there (libpng: "iCCP: known incorrect
    sRGB profile"): one error stays one line."""
    import sys
    import tempfile

    try:
        sys.stderr.flush()
        saved = os.dup(2)
    except (OSError, ValueError):
        yield
        return
    try:
        with tempfile.TemporaryFile() as sink:
            os.dup2(sink.fileno(), 2)
            try:
                yield
            finally:
                os.dup2(saved, 2)
    finally:
        os.close(saved)
