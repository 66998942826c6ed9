"""Input files: the one place a user's file is opened, and its YAML or JSON parsed.

Every reader of user input goes through here, so that no file can hang a command or blow
up its memory, whatever it holds:

* :func:`read_bytes` opens regular files only (a FIFO, a device such as ``/dev/zero``, a
  folder, or a symlink to any of them is refused in one line naming the file, without
  blocking) and reads at most a size cap;
* :func:`load_yaml` is ``yaml.safe_load`` with its expanded size (aliases counted as the
  nodes they stand for), its alias count and its nesting depth capped;
* :func:`load_json` refuses ``NaN``/``Infinity``, out-of-range floats and deep nesting;
* :func:`clip` quotes user text in an error message (at most :data:`QUOTE_CHARS` characters
  on one line).

Each function raises the caller's error class (``error=``), so messages keep their kind
(MapError, ScenarioError, ArgumentError) and the command line's one-line exit 2.
"""

from __future__ import annotations

import json
import math
import os
import stat
from typing import Any

from engine.errors import TacgridError

#: Most characters of user input quoted in an error message.
QUOTE_CHARS = 80
#: Largest .tmx map file read (a 4096 x 4096 csv layer is about 40 MB).
MAX_MAP_BYTES = 128 << 20
#: Largest tileset (.tsx, .tsj) or template (.tx) file.
MAX_TILESET_BYTES = 16 << 20
#: Largest scenario or --token file (YAML or JSON).
MAX_YAML_BYTES = 1 << 20
#: Largest event log (`tacgrid replay`).
MAX_LOG_BYTES = 64 << 20
#: Most nodes a YAML document may stand for once its aliases are expanded.
MAX_YAML_NODES = 50_000
#: Most aliases (``*name``) in one YAML document.
MAX_YAML_ALIASES = 1_000
#: Deepest nesting of YAML or JSON collections (and of XML elements, in the map reader).
MAX_DEPTH = 64


def clip(value: Any, limit: int = QUOTE_CHARS) -> str:
    """User text fit to quote in a one-line message: line breaks escaped, at most ``limit``
    characters (then ``...`` and how long it was)."""
    text = value if isinstance(value, str) else repr(value)
    size = len(text)
    text = text[: limit + 1].replace("\r", "\\r").replace("\n", "\\n")
    if size <= limit and len(text) <= limit:
        return text
    return f"{text[:limit]}... ({size} characters)"


def read_bytes(  # noqa: C901
    path: str | os.PathLike[str],
    what: str,
    limit: int,
    error: type[TacgridError] = TacgridError,
    *,
    fix: str = "check the path",
) -> bytes:
    """The bytes of a regular file of at most ``limit`` bytes; anything else is one
    ``error`` line: ``PATH: problem``.

    The file is opened non-blocking and checked on its descriptor, so a FIFO or a device
    is refused without ever waiting on it, and a file swapped after a check cannot slip in.
    """
    name = clip(os.fspath(path), 200)
    handed = _take_handoff(path, limit)
    if handed is not None:
        return handed
    try:
        fh = open(path, "rb", buffering=0, opener=_nonblocking)  # noqa: SIM115
    except FileNotFoundError:
        raise error(f"{name}: {what} file not found; {fix}") from None
    except IsADirectoryError:
        raise error(f"{name}: is a folder, not a {what} file") from None
    except OSError as exc:
        raise error(f"{name}: cannot open {what} file ({exc.strerror})") from None
    except ValueError:  # a NUL byte in the path (possible only through the Python API)
        raise error(f"{name}: not a usable {what} file name") from None
    with fh:
        try:
            st = os.fstat(fh.fileno())
            if stat.S_ISDIR(st.st_mode):
                raise error(f"{name}: is a folder, not a {what} file")
            if not stat.S_ISREG(st.st_mode):
                kind = "a FIFO (named pipe)" if stat.S_ISFIFO(st.st_mode) else "a device or socket"
                raise error(f"{name}: is {kind}, not a regular file; give the {what} file itself")
            if st.st_size > limit:
                raise error(_too_big(name, what, limit))
            # Read what fstat reported (read(n) allocates n up front); a file that grows
            # meanwhile is read on in chunks, still capped.
            parts: list[bytes] = []
            got, want = 0, st.st_size + 1
            while got <= limit:
                part = fh.read(min(want, limit + 1 - got))
                if not part:
                    break
                parts.append(part)
                got += len(part)
                want = 1 << 20
        except OSError as exc:
            raise error(f"{name}: cannot read {what} file ({exc.strerror})") from None
    if got > limit:
        raise error(_too_big(name, what, limit))
    data = b"".join(parts)
    _remember_digest(path, st, data)
    return data


#: SHA-256 digests of files read, keyed by what identifies one version of a file, so that
#: an event log's digest of its map costs no second read of a map just loaded.
_DIGESTS: dict[tuple[str, int, int, int, int], str] = {}


def _version(path: str | os.PathLike[str], st: os.stat_result) -> tuple[str, int, int, int, int]:
    return (os.path.realpath(path), st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)


def _remember_digest(path: str | os.PathLike[str], st: os.stat_result, data: bytes) -> None:
    import hashlib

    if len(_DIGESTS) > 256:
        _DIGESTS.clear()
    _DIGESTS[_version(path, st)] = hashlib.sha256(data).hexdigest()


def file_digest(path: str | os.PathLike[str], limit: int = 256 << 20) -> str:
    """The first 16 hex digits of the SHA-256 of a file's bytes.

    A file read through :func:`read_bytes` and unchanged since (same inode, size and
    modification time) is not read again.
    """
    try:
        known = _DIGESTS.get(_version(path, os.stat(path)))
    except OSError:
        known = None
    if known is None:
        data = read_bytes(path, "input", limit)
        version = _version(path, os.stat(path))
        known = _DIGESTS[version]
        # Whoever loads this file next (replay checks a log's files, then opens them) gets
        # these bytes instead of a second read, as long as the file has not changed.
        _hand_off(version, data)
    return known[:16]


def peek_bytes(path: str | os.PathLike[str], what: str, limit: int) -> bytes:
    """:func:`read_bytes`, leaving the bytes for the next read of the unchanged file."""
    data = read_bytes(path, what, limit)
    _hand_off(_version(path, os.stat(path)), data)
    return data


def _hand_off(version: tuple[str, int, int, int, int], data: bytes) -> None:
    if len(data) <= _HANDOFF_LIMIT:
        while len(_HANDOFF) >= 4:
            _HANDOFF.pop(next(iter(_HANDOFF)))
        _HANDOFF[version] = data


#: Bytes read for a digest, kept for the one load that follows (see :func:`file_digest`).
_HANDOFF: dict[tuple[str, int, int, int, int], bytes] = {}
_HANDOFF_LIMIT = 32 << 20


def _take_handoff(path: str | os.PathLike[str], limit: int) -> bytes | None:
    if not _HANDOFF:
        return None
    try:
        st = os.stat(path)
    except (OSError, ValueError):
        return None
    if not stat.S_ISREG(st.st_mode):
        return None
    data = _HANDOFF.pop(_version(path, st), None)
    return data if data is not None and len(data) <= limit else None


def _nonblocking(path: str, flags: int) -> int:
    """Open without blocking: a FIFO with no writer would otherwise wait for ever."""
    return os.open(path, flags | os.O_NONBLOCK)


def _too_big(name: str, what: str, limit: int) -> str:
    return f"{name}: {what} file is larger than tacgrid reads ({limit >> 20} MB at most)"


def read_head(path: str | os.PathLike[str], n: int) -> bytes | None:
    """The first ``n`` bytes of a regular file, or None for anything else (missing, a FIFO,
    a device, a folder, unreadable). Never blocks."""
    try:
        with open(path, "rb", buffering=0, opener=_nonblocking) as fh:
            if not stat.S_ISREG(os.fstat(fh.fileno()).st_mode):
                return None
            return fh.read(n)
    except (OSError, ValueError):
        return None


def regular_file(path: str) -> bool:
    """Is ``path`` (after symlinks) a regular file? Never opens it, never blocks."""
    try:
        return stat.S_ISREG(os.stat(path).st_mode)
    except (OSError, ValueError):
        return False


# --------------------------------------------------------------------------- YAML


def load_yaml(data: bytes | str, where: str, error: type[TacgridError] = TacgridError) -> Any:
    """``yaml.safe_load`` within limits: at most :data:`MAX_YAML_NODES` nodes with aliases
    expanded, :data:`MAX_YAML_ALIASES` aliases and :data:`MAX_DEPTH` levels of nesting.

    A syntax error or a limit is one ``error`` line: ``WHERE: line N: not valid YAML (...)``.
    """
    import yaml

    try:
        loader = _loader_class()(data)
        try:
            return loader.get_single_data()
        finally:
            loader.dispose()
    except _YamlLimit as exc:
        raise error(f"{where}: {exc}") from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        at = f"line {mark.line + 1}" if mark is not None else "YAML"
        if isinstance(exc, yaml.reader.ReaderError):  # bytes that are not text
            at = f"byte {exc.position}"
            problem = f"character {exc.character!r} ({exc.reason})"
        else:
            problem = str(getattr(exc, "problem", None) or exc)
        raise error(f"{where}: {at}: not valid YAML ({clip(' '.join(problem.split()))})") from None
    except ValueError as exc:  # a constructor's own refusal (an int of 5000 digits, a date)
        raise error(f"{where}: not valid YAML ({clip(str(exc))})") from None
    except RecursionError:  # only past MAX_DEPTH, which the composer refuses first
        raise error(f"{where}: YAML nested too deeply") from None


class _YamlLimit(Exception):
    pass


_LOADER: Any = None


def _loader_class() -> Any:  # noqa: C901
    """A SafeLoader whose composer counts what the document stands for."""
    global _LOADER
    if _LOADER is not None:
        return _LOADER
    import yaml
    from yaml.composer import ComposerError
    from yaml.events import AliasEvent

    class BoundedLoader(yaml.SafeLoader):
        def __init__(self, stream: Any) -> None:
            super().__init__(stream)
            self._depth = 0
            self._aliases = 0
            self._nodes = 0
            self._sizes: dict[int, int] = {}  # id(anchored node) -> nodes it stands for

        def compose_node(self, parent: Any, index: Any) -> Any:
            if self.check_event(AliasEvent):
                event = self.peek_event()
                node = self.anchors.get(event.anchor)
                if node is None:
                    raise ComposerError(
                        None, None, f"found undefined alias {event.anchor!r}", event.start_mark
                    )
                self._aliases += 1
                if self._aliases > MAX_YAML_ALIASES:
                    raise _YamlLimit(f"more than {MAX_YAML_ALIASES} YAML aliases (*name)")
                size = self._sizes.get(id(node))
                if size is None:  # an alias to a collection that is still open
                    raise _YamlLimit(f"YAML alias *{clip(event.anchor)} refers to itself")
                self._count(size)
                self.get_event()
                return node
            self._depth += 1
            if self._depth > MAX_DEPTH:
                raise _YamlLimit(f"YAML nested deeper than {MAX_DEPTH} levels")
            before = self._nodes
            node = super().compose_node(parent, index)
            self._depth -= 1
            self._count(1)
            self._sizes[id(node)] = self._nodes - before
            return node

        def _count(self, n: int) -> None:
            self._nodes += n
            if self._nodes > MAX_YAML_NODES:
                raise _YamlLimit(
                    f"YAML stands for more than {MAX_YAML_NODES} values once its aliases "
                    "are expanded; write the values out or use fewer aliases"
                )

    _LOADER = BoundedLoader
    return _LOADER


# --------------------------------------------------------------------------- JSON


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a number tacgrid reads")


def _finite_float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise ValueError(f"{clip(text)} is out of range")
    return value


def load_json(text: str | bytes, where: str, error: type[TacgridError] = TacgridError) -> Any:
    """``json.loads`` that refuses NaN, Infinity, floats out of range and nesting deeper than
    :data:`MAX_DEPTH`; each is one ``error`` line starting with ``where``."""
    try:
        value = json.loads(text, parse_constant=_no_constant, parse_float=_finite_float)
    except RecursionError:
        raise error(f"{where}: JSON nested deeper than {MAX_DEPTH} levels") from None
    except ValueError as exc:  # JSONDecodeError, UnicodeDecodeError, our refusals
        raise error(f"{where}: not readable JSON ({clip(str(exc))})") from None
    if isinstance(value, dict | list) and _depth(value) > MAX_DEPTH:
        raise error(f"{where}: JSON nested deeper than {MAX_DEPTH} levels")
    return value


def _depth(value: Any) -> int:
    """Nesting depth of parsed JSON, without recursion."""
    deepest = 0
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        node, depth = stack.pop()
        if depth > deepest:
            deepest = depth
            if deepest > MAX_DEPTH:
                break
        items = node.values() if isinstance(node, dict) else node
        stack.extend((v, depth + 1) for v in items if isinstance(v, dict | list))
    return deepest
