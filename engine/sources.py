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

import contextlib
import io
import json
import math
import os
import stat
from collections.abc import Iterator
from typing import Any

from engine.errors import TacgridError, printable

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
    """User text fit to quote in a one-line message: control characters and line breaks
    escaped (:func:`engine.errors.printable`), at most ``limit`` characters (then ``...``
    and how long it was)."""
    text = value if isinstance(value, str) else repr(value)
    size = len(text)
    text = printable(text[: limit + 1])
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
    digest: bool = True,
) -> bytes:
    """The bytes of a regular file of at most ``limit`` bytes; anything else is one
    ``error`` line: ``PATH: problem``. ``digest``: remember the file's digest for
    :func:`file_digest` (a map's or scenario's; pictures need none).

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
    if digest:
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


#: Largest batch or sweep record file read whole (batch.json, sweep.json, summary.json).
MAX_META_BYTES = 16 << 20
#: Longest line of a file read line by line (a runs.jsonl record).
MAX_LINE_BYTES = 1 << 20


def read_json_file(
    path: str | os.PathLike[str],
    what: str,
    error: type[TacgridError] = TacgridError,
    limit: int = MAX_META_BYTES,
) -> Any:
    """A JSON file read through :func:`read_bytes` and parsed by :func:`load_json`."""
    data = read_bytes(path, what, limit, error)
    return load_json(data, clip(os.fspath(path), 200), error)


def open_regular(
    path: str | os.PathLike[str], what: str, error: type[TacgridError] = TacgridError
) -> io.BufferedReader:
    """A regular file opened for reading as :func:`read_bytes` opens one (non-blocking,
    checked on its descriptor), for a reader that streams it (lines, a Parquet table)."""
    name = clip(os.fspath(path), 200)
    try:
        fh = open(path, "rb", opener=_nonblocking)  # noqa: SIM115
    except FileNotFoundError:
        raise error(f"{name}: {what} file not found") from None
    except IsADirectoryError:
        raise error(f"{name}: is a folder, not a {what} file") from None
    except OSError as exc:
        raise error(f"{name}: cannot open {what} file ({exc.strerror})") from None
    except ValueError:
        raise error(f"{name}: not a usable {what} file name") from None
    mode = os.fstat(fh.fileno()).st_mode
    if not stat.S_ISREG(mode):
        fh.close()
        kind = "a FIFO (named pipe)" if stat.S_ISFIFO(mode) else "not a regular file"
        raise error(f"{name}: is {kind}; give the {what} file itself")
    return fh


def iter_lines(
    path: str | os.PathLike[str],
    what: str,
    error: type[TacgridError] = TacgridError,
    line_limit: int = MAX_LINE_BYTES,
) -> Iterator[bytes]:
    """The lines of a regular file, one at a time, each with its ``\\n`` (a last line
    without one is yielded as it is: the caller tells a torn record). The file is opened
    as :func:`read_bytes` opens one (non-blocking, regular files only); a line longer than
    ``line_limit`` is one ``error`` line, read no further than the limit."""
    name = clip(os.fspath(path), 200)
    with open_regular(path, what, error) as fh:
        n = 0
        while True:
            try:
                line = fh.readline(line_limit + 1)
            except OSError as exc:
                raise error(f"{name}: cannot read {what} file ({exc.strerror})") from None
            if not line:
                return
            n += 1
            if len(line) > line_limit:
                raise error(
                    f"{name}: line {n} is longer than tacgrid reads ({line_limit >> 20} MB)"
                )
            yield line


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


# --------------------------------------------------------------------------- pictures

#: Largest picture file read (a tileset image, an image layer, a tile's own image).
MAX_PICTURE_BYTES = 64 << 20
#: Most pixels one picture may decode to (8192 x 8192: 256 MB as 32-bit pixels).
MAX_PICTURE_PIXELS = 8192 * 8192
#: The formats whose header is read here: the only ones ever handed to a decoder.
PICTURE_FORMATS = ("PNG", "JPEG", "GIF", "BMP", "WebP", "TGA")


class PictureProblem(ValueError):
    """Why a picture's bytes are not decoded (a format not read here, a header that does
    not say the size, a size over the budget): the text completes ``PATH: ...``."""


def picture_size(data: bytes, name: str = "") -> tuple[str, int, int]:
    """``(format, width, height)`` of an encoded picture, read from its header alone.

    Only :data:`PICTURE_FORMATS` are read; anything else (SVG, XPM, TIFF, PCX, ...) is a
    :class:`PictureProblem`, so a decoder is never handed a format whose size was not
    known first. GIF's size is the largest of its screen and every frame; JPEG's comes
    from its first frame header wherever it lies; TGA, which has no signature, is read
    only under a ``.tga`` ``name``. A size over :data:`MAX_PICTURE_PIXELS` is refused.
    """
    kind, size = _header(data, name)
    if size is None:
        raise PictureProblem(f"a {kind} picture whose header does not give its size (damaged)")
    w, h = size
    if w <= 0 or h <= 0:
        raise PictureProblem(f"a {kind} picture of {w}x{h} px (no pixels)")
    if w * h > MAX_PICTURE_PIXELS:
        raise PictureProblem(
            f"a {kind} picture of {w}x{h} px; tacgrid loads at most {MAX_PICTURE_PIXELS} "
            "pixels (8192 x 8192)"
        )
    return kind, w, h


def read_picture(
    path: str | os.PathLike[str], error: type[TacgridError] = TacgridError, what: str = "image"
) -> tuple[bytes, str, int, int]:
    """A picture file's bytes, format and size (:func:`read_bytes`, then
    :func:`picture_size`); anything wrong is one ``error`` line naming the file."""
    data = read_bytes(path, what, MAX_PICTURE_BYTES, error, fix="fix the image path", digest=False)
    try:
        kind, w, h = picture_size(data, os.fspath(path))
    except PictureProblem as exc:
        raise error(f"{clip(os.fspath(path), 200)}: {exc}") from None
    return data, kind, w, h


def decoder_hint(kind: str) -> str:
    """A file name telling a decoder (SDL_image) the format already read from the header:
    it finds every format but TGA by its signature, and TGA only by this name."""
    return "picture." + {"JPEG": "jpg", "WebP": "webp"}.get(kind, kind.lower())


def _header(data: bytes, name: str) -> tuple[str, tuple[int, int] | None]:
    if data[:8] == b"\x89PNG\r\n\x1a\n":
        if data[12:16] == b"IHDR" and len(data) >= 24:
            w, h = int.from_bytes(data[16:20], "big"), int.from_bytes(data[20:24], "big")
            return "PNG", (w, h)
        return "PNG", None
    if data[:2] == b"\xff\xd8":
        return "JPEG", jpeg_frame(data)
    if data[:6] in (b"GIF87a", b"GIF89a"):
        return "GIF", _gif_largest(data)
    if data[:2] == b"BM":
        return "BMP", _bmp_size(data)
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return "WebP", _webp_size(data)
    if name.lower().endswith(".tga"):
        return "TGA", _tga_size(data)
    raise PictureProblem(
        f"not a picture format tacgrid reads ({', '.join(PICTURE_FORMATS)}); save it as PNG"
    )


def jpeg_frame(data: bytes) -> tuple[int, int] | None:
    """The size in a JPEG's first frame header (SOFn), however far into the file; None if
    a scan or the end comes first."""
    i, n = 2, len(data)
    while i + 4 <= n:
        if data[i] != 0xFF:
            return None
        marker = data[i + 1]
        if marker == 0xFF:  # fill byte
            i += 1
            continue
        if marker in (0xD8, 0x01) or 0xD0 <= marker <= 0xD7:
            i += 2
            continue
        if marker in (0xD9, 0xDA):  # end of image, start of scan: no frame header before
            return None
        length = int.from_bytes(data[i + 2 : i + 4], "big")
        if 0xC0 <= marker <= 0xCF and marker not in (0xC4, 0xC8, 0xCC):
            if i + 9 > n:
                return None
            h = int.from_bytes(data[i + 5 : i + 7], "big")
            w = int.from_bytes(data[i + 7 : i + 9], "big")
            return w, h
        if length < 2:
            return None
        i += 2 + length
    return None


def _gif_largest(data: bytes) -> tuple[int, int] | None:
    """The largest of a GIF's logical screen and each frame (width x height): a decoder
    allocates a frame's own size, and an animation's canvas the screen's."""
    n = len(data)
    if n < 13:
        return None
    best = (int.from_bytes(data[6:8], "little"), int.from_bytes(data[8:10], "little"))
    flags = data[10]
    i = 13 + (3 << ((flags & 7) + 1) if flags & 0x80 else 0)
    while i < n:
        block = data[i]
        if block == 0x3B:  # trailer
            break
        if block == 0x21:  # extension: label, then sub-blocks
            i = _skip_sub_blocks(data, i + 2)
        elif block == 0x2C:  # image descriptor
            if i + 10 > n:
                return None
            w = int.from_bytes(data[i + 5 : i + 7], "little")
            h = int.from_bytes(data[i + 7 : i + 9], "little")
            if w * h > best[0] * best[1]:
                best = (w, h)
            lflags = data[i + 9]
            i += 10 + (3 << ((lflags & 7) + 1) if lflags & 0x80 else 0)
            i = _skip_sub_blocks(data, i + 1)  # past the LZW code size byte
        else:
            break  # damaged past here: the decoder stops too
        if i < 0:
            break
    return best


def _skip_sub_blocks(data: bytes, i: int) -> int:
    """The offset after a run of GIF sub-blocks starting at ``i`` (-1 if cut short)."""
    n = len(data)
    while i < n:
        size = data[i]
        i += 1 + size
        if size == 0:
            return i
    return -1


def _bmp_size(data: bytes) -> tuple[int, int] | None:
    if len(data) < 26:
        return None
    dib = int.from_bytes(data[14:18], "little")
    if dib == 12:  # OS/2 BITMAPCOREHEADER: 16-bit sizes
        return int.from_bytes(data[18:20], "little"), int.from_bytes(data[20:22], "little")
    w = int.from_bytes(data[18:22], "little", signed=True)
    h = int.from_bytes(data[22:26], "little", signed=True)
    return abs(w), abs(h)


def _webp_size(data: bytes) -> tuple[int, int] | None:
    """A WebP's canvas: lossy (VP8), lossless (VP8L) or extended (VP8X)."""
    if len(data) < 30:
        return None
    chunk = data[12:16]
    if chunk == b"VP8 " and data[23:26] == b"\x9d\x01\x2a":
        return (
            int.from_bytes(data[26:28], "little") & 0x3FFF,
            int.from_bytes(data[28:30], "little") & 0x3FFF,
        )
    if chunk == b"VP8L" and data[20] == 0x2F:
        bits = int.from_bytes(data[21:25], "little")
        return (bits & 0x3FFF) + 1, ((bits >> 14) & 0x3FFF) + 1
    if chunk == b"VP8X":
        w = int.from_bytes(data[24:27], "little") + 1
        h = int.from_bytes(data[27:30], "little") + 1
        return w, h
    return None


def _tga_size(data: bytes) -> tuple[int, int] | None:
    """A TGA's size, if its header is one SDL_image decodes (types 1-3, 9-11)."""
    if len(data) < 18 or data[1] > 1 or data[2] not in (1, 2, 3, 9, 10, 11):
        return None
    return int.from_bytes(data[12:14], "little"), int.from_bytes(data[14:16], "little")


def picture_check(path: str | os.PathLike[str]) -> tuple[str, tuple[int, int] | None]:
    """Why a picture file cannot be used (``""`` when it can) and its size: the problem
    completes ``PATH ...`` (not found, not a regular file, too large, a format or size
    not read here); the whole file is read through :func:`read_bytes`."""
    name = clip(os.fspath(path), 200)
    try:
        data = read_bytes(path, "image", MAX_PICTURE_BYTES, digest=False)
        _kind, w, h = picture_size(data, os.fspath(path))
    except PictureProblem as exc:
        return f"is {exc}", None
    except TacgridError as exc:
        text = str(exc)
        return (text[len(name) + 2 :] if text.startswith(name + ": ") else text), None
    # The decode that usually follows takes these bytes instead of reading the file again.
    with contextlib.suppress(OSError):
        _hand_off(_version(path, os.stat(path)), data)
    return "", (w, h)
