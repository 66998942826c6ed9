"""Hostile and huge input (issue 19): the reading side never crashes, hangs or blows up.

Each case of the corpus below is written into a temporary folder (decompression bombs,
FIFOs, /dev/zero and symlinks to it, deep nesting, YAML alias bombs, huge exponents, huge
declared sizes, infinities) and given to the command line in a subprocess under a 1 GB
address-space limit and a wall-clock timeout. Every one must end as docs/robustness.md promises:
exit status 2, nothing on stdout, ONE short line on stderr that names the problem, no
traceback. The subprocesses run side by side so the whole corpus takes a few seconds.

The limits themselves (engine.sources, engine.tiled.common, engine.exact) are tested
in-process below the corpus.
"""

from __future__ import annotations

import base64
import contextlib
import io
import os
import resource
import signal
import struct
import subprocess
import sys
import time
import zlib
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from conftest import ROOT

from engine.cli import main
from engine.errors import ArgumentError, MapError, ScenarioError
from engine.exact import MAX_EXPONENT, exact
from engine.sources import (
    MAX_DEPTH,
    MAX_YAML_NODES,
    clip,
    load_json,
    load_yaml,
    read_bytes,
    read_head,
)
from engine.tiled import load_map
from engine.tiled.common import MAX_LAYER_CELLS

#: Address space each command may use (numpy and the engine need about 400 MB of it).
MEMORY_LIMIT = 1 << 30
#: Wall-clock seconds each command may take.
TIMEOUT = 20
#: Longest acceptable error line.
MAX_LINE = 300
CHASE_TMX = ROOT / "maps" / "chase.tmx"
SQUARE_TSX = ROOT / "assets" / "terrain_square.tsx"

# --------------------------------------------------------------------------- file makers

TILESET = (
    '<tileset firstgid="1" name="t" tilewidth="32" tileheight="32" tilecount="1" columns="1">'
    '<tile id="0"><properties><property name="move" value="walk"/></properties></tile>'
    "</tileset>"
)


def tmx(
    body: str,
    *,
    width: Any = 4,
    height: Any = 4,
    tile: tuple[Any, Any] = (32, 32),
    infinite: bool = False,
    tileset: str = TILESET,
    props: str = "",
) -> str:
    """A map with the given layers/objects ``body``."""
    return (
        '<?xml version="1.0" encoding="UTF-8"?>\n'
        f'<map version="1.10" orientation="orthogonal" renderorder="right-down" '
        f'width="{width}" height="{height}" tilewidth="{tile[0]}" tileheight="{tile[1]}" '
        f'infinite="{int(infinite)}">{props}{tileset}{body}</map>\n'
    )


def csv_layer(width: int = 4, height: int = 4, name: str = "ground", attrs: str = "") -> str:
    data = ",".join(["1"] * (width * height))
    return (
        f'<layer id="1" name="{name}" width="{width}" height="{height}"{attrs}>'
        f'<data encoding="csv">{data}</data></layer>'
    )


def deflate_bomb(total: int, wbits: int) -> bytes:
    """A zlib (wbits 15) or gzip (wbits 31) stream of ``total`` zero bytes, built from one
    independently flushed 16 MB block repeated, so making it costs almost nothing."""
    block = b"\0" * (16 << 20)
    c = zlib.compressobj(9, zlib.DEFLATED, wbits)
    head = c.compress(block) + c.flush(zlib.Z_FULL_FLUSH)
    again = c.compress(block) + c.flush(zlib.Z_FULL_FLUSH)
    return head + again * (total // len(block) - 1)


def zstd_lying_frame(claimed: int) -> bytes:
    """A small zstd frame whose header states ``claimed`` bytes of content."""
    import zstandard

    frame = bytearray(zstandard.ZstdCompressor(write_content_size=True).compress(b"\0" * 4096))
    descriptor = frame[4]
    fcs_flag, single = descriptor >> 6, (descriptor >> 5) & 1
    frame[4] = (descriptor & 0x3F) | (3 << 6)  # an 8-byte content size field
    at = 5 + (0 if single else 1) + (0, 1, 2, 4)[descriptor & 3]
    old = (1, 2, 4, 8)[fcs_flag] if (fcs_flag or single) else 0
    frame[at : at + old] = struct.pack("<Q", claimed)
    assert zstandard.get_frame_parameters(bytes(frame)).content_size == claimed
    return bytes(frame)


def b64_layer(payload: bytes, compression: str, width: int, height: int, n: int = 1) -> str:
    text = base64.b64encode(payload).decode()
    return "".join(
        f'<layer id="{i + 1}" name="l{i}" width="{width}" height="{height}">'
        f'<data encoding="base64" compression="{compression}">{text}</data></layer>'
        for i in range(n)
    )


def png_header(width: int, height: int) -> bytes:
    """The first bytes of a PNG of the given size (enough for any size check)."""
    ihdr = struct.pack(">IIBBBBB", width, height, 8, 6, 0, 0, 0)
    chunk = b"IHDR" + ihdr
    return (
        b"\x89PNG\r\n\x1a\n"
        + struct.pack(">I", len(ihdr))
        + chunk
        + struct.pack(">I", zlib.crc32(chunk))
    )


def alias_bomb(levels: int = 9) -> str:
    """The YAML billion laughs: 9 levels of 9 aliases (10**9 values, 1.4 KB)."""
    lines = ['a0: &a0 ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    for i in range(1, levels + 1):
        refs = ",".join([f"*a{i - 1}"] * 9)
        lines.append(f"a{i}: &a{i} [{refs}]")
    return "\n".join(lines) + "\n"


def scenario(map_path: str | Path = CHASE_TMX, stats: str = "{speed: 30}", extra: str = "") -> str:
    return (
        f"map: {map_path}\nsystem: generic\nruns: 1\n{extra}"
        f"tokens:\n  - id: a\n    cell: [1, 1]\n    stats: {stats}\n"
    )


def event_log(progress: str = "0", extra: str = "") -> str:
    start = (
        '{"type":"start","tokens":{"a":{"cell":[1,1],"mode":"walk","conditions":[],'
        f'"encumbrance":"none","progress":{progress},"counters":{{}}}}}}{extra}}}'
    )
    return start + '\n{"type":"end","outcome":"timeout"}\n'


def fifo(path: Path) -> Path:
    os.mkfifo(path)
    return path


# --------------------------------------------------------------------------- the corpus


@dataclass(frozen=True)
class Case:
    """One hostile input: ``make(folder)`` writes the files and returns the arguments."""

    make: Callable[[Path], list[str]]
    expect: str  # a piece of the one error line
    isolated: bool = False  # a subprocess under the memory limit (memory or a hang is the point)


def _w(path: Path, text: str | bytes) -> Path:
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text, encoding="utf-8")
    return path


def _info(d: Path, text: str | bytes) -> list[str]:
    return ["info", str(_w(d / "m.tmx", text))]


def _run(d: Path, text: str) -> list[str]:
    out = d / "out"
    return ["run", str(_w(d / "s.yaml", text)), "--out", str(out), "--quiet", "--no-plots"]


def _replay(d: Path, text: str) -> list[str]:
    return ["replay", str(_w(d / "run.jsonl", text)), "--json"]


def _stats(d: Path, token: str, *more: str) -> list[str]:
    return ["stats", "--system", "generic", "--token", token, *more]


def _tileset_source(d: Path, src: str) -> list[str]:
    return _info(d, tmx(csv_layer(), tileset=f'<tileset firstgid="1" source="{src}"/>'))


def _image_tileset(d: Path, image: str) -> list[str]:
    ts = (
        '<tileset firstgid="1" name="img" tilewidth="32" tileheight="32" tilecount="1" '
        f'columns="1"><image source="{image}" width="32" height="32"/></tileset>'
    )
    return _info(d, tmx(csv_layer(), tileset=ts))


def _template(d: Path, src: str) -> list[str]:
    obj = (
        f'<objectgroup id="2" name="o"><object id="1" template="{src}" x="0" y="0"/></objectgroup>'
    )
    return _info(d, tmx(csv_layer() + obj))


def _deep_groups(d: Path) -> list[str]:
    depth = 5000
    return _info(d, tmx('<group id="9" name="g">' * depth + csv_layer() + "</group>" * depth))


def _symlink(d: Path, target: str, name: str) -> Path:
    link = d / name
    link.symlink_to(target)
    return link


CASES: dict[str, Case] = {
    # ---- memory: decoders budgeted by what the map declares
    "zlib-bomb-3GB": Case(
        lambda d: _info(d, tmx(b64_layer(deflate_bomb(3 << 30, 15), "zlib", 4, 4))),
        "expands beyond the 16 tiles",
        isolated=True,
    ),
    "gzip-bomb-3GB": Case(
        lambda d: _info(d, tmx(b64_layer(deflate_bomb(3 << 30, 31), "gzip", 4, 4))),
        "expands beyond the 16 tiles",
        isolated=True,
    ),
    "zstd-frame-states-3GB": Case(
        lambda d: _info(d, tmx(b64_layer(zstd_lying_frame(3 << 30), "zstd", 4, 4))),
        "tile data cannot be decoded",
        isolated=True,
    ),
    "40-layers-of-4096x4096": Case(
        lambda d: _info(
            d,
            tmx(
                b64_layer(deflate_bomb(64 << 20, 15), "zlib", 4096, 4096, n=40),
                width=4096,
                height=4096,
            ),
        ),
        "40 tile layers of 4096x4096",
        isolated=True,
    ),
    "overlapping-infinite-chunks": Case(
        lambda d: _info(
            d,
            tmx(
                '<layer id="1" name="l" width="4" height="4"><data encoding="csv">'
                + '<chunk x="0" y="0" width="4096" height="4096">0</chunk>' * 40
                + "</data></layer>",
                infinite=True,
            ),
        ),
        "40 chunks make",
        isolated=True,
    ),
    "csv-with-millions-of-extra-numbers": Case(
        lambda d: _info(
            d,
            tmx(
                '<layer id="1" name="l" width="4" height="4"><data encoding="csv">'
                + "1," * 5_000_000
                + "1</data></layer>"
            ),
        ),
        "more than 16 tiles",
        isolated=True,
    ),
    "xml-element-flood": Case(
        lambda d: _info(d, tmx("<x/>" * 1_200_000)),
        "XML elements; tacgrid reads at most",
        isolated=True,
    ),
    "xml-entity-declarations": Case(
        lambda d: _info(
            d,
            '<?xml version="1.0"?><!DOCTYPE map [<!ENTITY a "aaaaaaaaaa">'
            '<!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;">]><map>&b;</map>',
        ),
        "declares XML entities",
    ),
    "tileset-image-20000x20000": Case(
        lambda d: (_w(d / "big.png", png_header(20000, 20000)), _image_tileset(d, "big.png"))[1],
        "tacgrid loads at most",
        isolated=True,
    ),
    "map-of-1e308-rows": Case(lambda d: _info(d, tmx(csv_layer(), height="1e308")), "1e308"),
    "tilewidth-1e9": Case(lambda d: _info(d, tmx(csv_layer(), tile=("1e9", 32))), "tile size"),
    # ---- hangs: never open a FIFO or a device
    "map-is-a-fifo": Case(lambda d: ["info", str(fifo(d / "m.tmx"))], "FIFO"),
    "tileset-is-a-fifo": Case(
        lambda d: (fifo(d / "t.tsx"), _tileset_source(d, "t.tsx"))[1], "FIFO", isolated=True
    ),
    "tileset-json-is-a-fifo": Case(
        lambda d: (fifo(d / "t.tsj"), _tileset_source(d, "t.tsj"))[1], "FIFO"
    ),
    "tileset-is-dev-zero": Case(lambda d: _tileset_source(d, "/dev/zero"), "device"),
    "tileset-symlink-to-dev-zero": Case(
        lambda d: (_symlink(d, "/dev/zero", "z.tsx"), _tileset_source(d, "z.tsx"))[1], "device"
    ),
    "image-is-a-fifo": Case(
        lambda d: (fifo(d / "i.png"), _image_tileset(d, "i.png"))[1],
        "not a regular file",
        isolated=True,
    ),
    "image-is-dev-zero": Case(lambda d: _image_tileset(d, "/dev/zero"), "not a regular file"),
    "template-is-dev-zero": Case(lambda d: _template(d, "/dev/zero"), "device"),
    "template-is-a-fifo": Case(lambda d: (fifo(d / "o.tx"), _template(d, "o.tx"))[1], "FIFO"),
    "scenario-is-a-fifo": Case(
        lambda d: ["run", str(fifo(d / "s.yaml")), "--out", str(d / "o"), "--quiet"], "FIFO"
    ),
    "scenario-map-is-dev-zero": Case(
        lambda d: _run(d, scenario("/dev/zero")), "device", isolated=True
    ),
    "scenario-map-symlink-to-dev-zero": Case(
        lambda d: _run(d, scenario(_symlink(d, "/dev/zero", "z.tmx"))), "device"
    ),
    "event-log-is-dev-zero": Case(lambda d: ["replay", "/dev/zero", "--json"], "device"),
    "event-log-is-a-fifo": Case(lambda d: ["replay", str(fifo(d / "r.jsonl")), "--json"], "FIFO"),
    "token-file-is-a-fifo": Case(lambda d: _stats(d, str(fifo(d / "tok.yaml"))), "FIFO"),
    # ---- hangs: exponents Fraction would compute
    "token-speed-1e999999999": Case(
        lambda d: _stats(d, "speed=1e999999999"), "speed=", isolated=True
    ),
    "distance-1e999999999": Case(
        lambda d: ["stats", "--system", "d6", "--token", "move=10", "--distance", "1e999999999"],
        "--distance",
    ),
    "scenario-stat-1e999999999": Case(
        lambda d: _run(d, scenario(stats='{speed: "1e999999999"}')), "speed="
    ),
    "event-log-progress-1e999999999": Case(
        lambda d: _replay(d, event_log(progress='"1e999999999"')),
        "token state cannot be read",
        isolated=True,
    ),
    # ---- one line, not a traceback
    "token-yaml-syntax-error": Case(
        lambda d: _stats(d, str(_w(d / "tok.yaml", "speed: [30\nfly: true\n"))),
        "not valid YAML",
    ),
    "token-yaml-alias-bomb": Case(
        lambda d: _stats(d, str(_w(d / "tok.yaml", alias_bomb()))), "aliases are expanded"
    ),
    "token-yaml-non-text-keys": Case(
        lambda d: _stats(d, str(_w(d / "tok.yaml", "1: 2\n"))), "mapping of stat names"
    ),
    "token-json-deep": Case(
        lambda d: _stats(d, str(_w(d / "tok.json", "[" * 100_000 + "]" * 100_000))),
        "nested deeper",
    ),
    "scenario-yaml-alias-bomb": Case(
        lambda d: _run(d, scenario() + alias_bomb().replace("a0:", "description:", 1)),
        "aliases are expanded",
        isolated=True,
    ),
    "scenario-yaml-deep": Case(
        lambda d: _run(d, scenario() + "name: " + "[" * 50_000 + "]" * 50_000 + "\n"),
        "nested deeper",
    ),
    "scenario-settings-non-text-keys": Case(
        lambda d: _run(d, scenario(extra="settings: {1: 2}\n")), "settings"
    ),
    "scenario-stats-non-text-keys": Case(
        lambda d: _run(d, scenario(stats="{[1, 2]: 3}")), "not valid YAML"
    ),
    "scenario-stats-int-keys": Case(lambda d: _run(d, scenario(stats="{7: 3}")), ".stats"),
    "scenario-huge-unknown-key": Case(
        lambda d: _run(d, scenario() + "? " + "x" * 100_000 + "\n: 1\n"), "unknown key"
    ),
    "deep-xml-groups": Case(_deep_groups, "nested deeper"),
    "deep-json-tileset": Case(
        lambda d: (
            _w(d / "t.tsj", "[" * 100_000 + "]" * 100_000),
            _tileset_source(d, "t.tsj"),
        )[1],
        "nested deeper",
    ),
    "json-tileset-with-infinity": Case(
        lambda d: (
            _w(d / "t.tsj", '{"tilewidth": Infinity, "tileheight": 32}'),
            _tileset_source(d, "t.tsj"),
        )[1],
        "Infinity",
    ),
    "event-log-infinity-counter": Case(
        lambda d: _replay(d, event_log().replace('"counters":{}', '"counters":{"x":Infinity}')),
        "not JSON",
    ),
    "event-log-deep-line": Case(
        lambda d: _replay(d, event_log() + "[" * 100_000 + "]" * 100_000 + "\n"), "not JSON"
    ),
    "object-height-1e308": Case(
        lambda d: _info(
            d,
            tmx(
                csv_layer() + '<objectgroup id="2" name="o"><object id="1" name="r" x="0" y="0" '
                'width="1e308" height="1e308"><ellipse/><properties>'
                '<property name="move" value="swim"/></properties></object></objectgroup>'
            ),
        ),
        "",
    ),
    "layer-offsets-1e308": Case(
        lambda d: _info(
            d,
            tmx(
                '<group id="5" name="g" offsetx="1e308" offsety="-1e308">'
                + csv_layer(attrs=' offsetx="1e308" offsety="1e308"')
                + "</group>"
            ),
        ),
        "offset by",
    ),
    "int-property-infinity": Case(
        lambda d: _info(
            d,
            tmx(
                csv_layer(),
                props='<properties><property name="cell_size" type="int" value="inf"/>'
                "</properties>",
            ),
        ),
        "'inf'",
    ),
}
#: Cases that are not errors: the map loads, the command succeeds.
SUCCEEDS = {"object-height-1e308"}


def _limit_memory() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT, MEMORY_LIMIT))


@dataclass
class Result:
    rc: int
    stdout: str
    stderr: str
    seconds: float


def _execute(args: list[str], cwd: Path) -> Result:
    start = time.monotonic()
    env = {**os.environ, "SDL_VIDEODRIVER": "dummy", "SDL_AUDIODRIVER": "dummy"}
    try:
        p = subprocess.run(
            [sys.executable, "-m", "engine.cli", *args],
            cwd=ROOT,
            env=env,
            capture_output=True,
            text=True,
            errors="replace",
            timeout=TIMEOUT,
            preexec_fn=_limit_memory,
        )
    except subprocess.TimeoutExpired:
        return Result(-1, "", f"HANG: no answer within {TIMEOUT} s", time.monotonic() - start)
    return Result(p.returncode, p.stdout, p.stderr, time.monotonic() - start)


class _Hang(BaseException):
    pass


def _in_process(args: list[str]) -> Result:
    """``main(args)`` here, with its output captured and an alarm for hangs."""

    def ring(*_: Any) -> None:
        raise _Hang

    out, err = io.StringIO(), io.StringIO()
    start = time.monotonic()
    old = signal.signal(signal.SIGALRM, ring)
    signal.alarm(TIMEOUT)
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            rc = main(args)
    except _Hang:
        return Result(-1, "", f"HANG: no answer within {TIMEOUT} s", time.monotonic() - start)
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)
    return Result(rc, out.getvalue(), err.getvalue(), time.monotonic() - start)


@pytest.fixture(scope="module")
def isolated(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Result]:
    """The isolated cases, run once each in subprocesses side by side."""
    jobs = {}
    for name, case in CASES.items():
        if case.isolated:
            folder = tmp_path_factory.mktemp(name)
            jobs[name] = (case.make(folder), folder)
    with ThreadPoolExecutor(max_workers=min(4, os.cpu_count() or 1)) as pool:
        futures = {name: pool.submit(_execute, *job) for name, job in jobs.items()}
        return {name: f.result() for name, f in futures.items()}


@pytest.mark.parametrize("name", sorted(CASES))
def test_hostile_input_is_one_line_exit_2(
    name: str, request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    case = CASES[name]
    if case.isolated:
        r = request.getfixturevalue("isolated")[name]
    else:
        r = _in_process(case.make(tmp_path))
    assert "Traceback" not in r.stderr, r.stderr[-2000:]
    assert r.rc != -1, f"{name}: {r.stderr}"
    if name in SUCCEEDS:
        assert r.rc == 0, r.stderr[:MAX_LINE]
        return
    assert r.rc == 2, (r.rc, r.stderr[:2000])
    assert r.stdout == ""
    lines = r.stderr.splitlines()
    assert len(lines) == 1, r.stderr[:2000]
    assert len(lines[0]) < MAX_LINE, lines[0]
    assert CASES[name].expect in lines[0], lines[0]
    assert r.seconds < TIMEOUT


# --------------------------------------------------------------------------- limits in-process


def test_exact_refuses_huge_exponents_at_once() -> None:
    start = time.monotonic()
    for text in ("1e999999999", "-2.5E-999999999", f"1e{MAX_EXPONENT + 1}", "9" * 500):
        with pytest.raises(ValueError):
            exact(text)
    assert time.monotonic() - start < 1
    assert exact(f"1e{MAX_EXPONENT}") == 10**MAX_EXPONENT
    assert exact("7.5") == exact("15/2") == exact(7.5)
    assert exact("1_0e-1") == 1


def test_yaml_limits() -> None:
    with pytest.raises(ScenarioError, match="aliases are expanded"):
        load_yaml(alias_bomb(), "s.yaml", ScenarioError)
    with pytest.raises(ScenarioError, match="nested deeper"):
        load_yaml("[" * (MAX_DEPTH + 1) + "]" * (MAX_DEPTH + 1), "s.yaml", ScenarioError)
    with pytest.raises(ScenarioError, match="refers to itself"):
        load_yaml("a: &x [1, *x]\n", "s.yaml", ScenarioError)
    with pytest.raises(ScenarioError, match="line 2: not valid YAML"):
        load_yaml("a: [1\nb: 2\n", "s.yaml", ScenarioError)
    with pytest.raises(ScenarioError, match="not valid YAML"):
        load_yaml("a: " + "1" * 5000 + "\n", "s.yaml", ScenarioError)  # int() digit limit
    # Aliases within the limits still read as the same values.
    doc = load_yaml("base: &b {speed: 30}\nx: *b\ny: *b\n", "s.yaml", ScenarioError)
    assert doc == {"base": {"speed": 30}, "x": {"speed": 30}, "y": {"speed": 30}}
    wide = "a: &a [" + ",".join(["1"] * 999) + "]\nb: [*a, *a, *a]\n"
    assert len(load_yaml(wide, "s.yaml", ScenarioError)["b"]) == 3
    assert MAX_YAML_NODES < 9**6  # the bomb's sixth level is already refused


def test_json_limits() -> None:
    for text in ("NaN", "[Infinity]", '{"a": -Infinity}', "[1e999]"):
        with pytest.raises(ArgumentError, match="not readable JSON"):
            load_json(text, "log", ArgumentError)
    with pytest.raises(ArgumentError, match="nested deeper"):
        load_json("[" * (MAX_DEPTH + 1) + "]" * (MAX_DEPTH + 1), "log", ArgumentError)
    with pytest.raises(ArgumentError, match="nested deeper"):
        load_json("[" * 100_000 + "]" * 100_000, "log", ArgumentError)
    assert load_json('{"a": [1, 2.5]}', "log", ArgumentError) == {"a": [1, 2.5]}


def test_read_bytes_refuses_what_is_not_a_regular_file(tmp_path: Path) -> None:
    pipe = fifo(tmp_path / "pipe")
    start = time.monotonic()
    with pytest.raises(MapError, match="FIFO"):
        read_bytes(pipe, "map", 1 << 20, MapError)
    with pytest.raises(MapError, match="device"):
        read_bytes("/dev/zero", "map", 1 << 20, MapError)
    with pytest.raises(MapError, match="folder"):
        read_bytes(tmp_path, "map", 1 << 20, MapError)
    assert read_head(pipe, 10) is None and read_head("/dev/zero", 10) is None
    assert time.monotonic() - start < 1
    big = _w(tmp_path / "big", b"x" * 2000)
    with pytest.raises(MapError, match="larger than tacgrid reads"):
        read_bytes(big, "map", 1000, MapError)
    assert read_bytes(big, "map", 2000, MapError) == b"x" * 2000


def test_clip_keeps_quotes_short_and_on_one_line() -> None:
    assert clip("short") == "short"
    quoted = clip("a\nb" * 1000)
    assert "\n" not in quoted and len(quoted) < 120 and "3000 characters" in quoted


def test_layer_budget_allows_the_largest_map_but_not_more_layers(tmp_path: Path) -> None:
    # Two layers at the largest size are within MAX_LAYER_CELLS; three are refused
    # before a single byte is decoded (the data here would not even decode).
    side = 4096
    assert 2 * side * side <= MAX_LAYER_CELLS < 3 * side * side
    path = _w(
        tmp_path / "m.tmx", tmx(b64_layer(b"x", "zlib", side, side, n=3), width=side, height=side)
    )
    with pytest.raises(MapError, match="3 tile layers of 4096x4096"):
        load_map(path)


def test_hostile_values_in_a_loaded_map_stay_finite(tmp_path: Path) -> None:
    """Offsets that add up to infinity, an int property of inf and a <tile> gid that is not
    a number are one MapError line each; 1e308-sized objects load."""
    group = '<group id="5" name="g" offsetx="1e308">'
    with pytest.raises(MapError, match="offset by"):
        load_map(
            _w(tmp_path / "m.tmx", tmx(group + csv_layer(attrs=' offsetx="1e308"') + "</group>"))
        )
    inf_prop = '<properties><property name="n" type="int" value="inf"/></properties>'
    with pytest.raises(MapError, match="'inf'"):
        load_map(_w(tmp_path / "p.tmx", tmx(csv_layer(), props=inf_prop)))
    bad_gid = tmx(
        '<layer id="1" name="l" width="1" height="1"><data><tile gid="x"/></data></layer>',
        width=1,
        height=1,
    )
    with pytest.raises(MapError, match="gid='x'"):
        load_map(_w(tmp_path / "g.tmx", bad_gid))
