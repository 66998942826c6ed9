"""A path held as columns (engine/search/steps.py) and written as it is read: the same
records and the same JSON text as the plain way, and a maze's long path within 1 GB."""

from __future__ import annotations

import json
import math
import os
import resource
import subprocess
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from conftest import ROOT
from tmxtext import maze

from engine import kernel, systems
from engine.query import Query
from engine.report import Streamed, blocktext, finite, json_chunks, to_json
from engine.report.maptext import CellMarks, draw_cells
from engine.report.movement import format_path, path_json
from engine.search import NoPath
from engine.search.cellpath import CellPath
from engine.search.steps import PlanTable, StepTable
from engine.tiled import load_map

SHIPPED = sorted(p for p in (ROOT / "maps").iterdir() if p.suffix in (".tmx", ".tmj"))


def plain_text(doc: Any) -> str:
    """The document as the standard library's encoder writes it whole (the plain way)."""
    return json.dumps(doc, indent=2, allow_nan=False) + "\n"


def shipped_answers() -> list[tuple[Any, Any, Any]]:
    """Each shipped map's paths under every system, with the map and the rules."""
    out = []
    for path in SHIPPED:
        model = load_map(str(path))
        w, h = model.grid.width, model.grid.height
        for name in ("generic", "d6", "mythmaster", "speedpoints", "whisperspace"):
            rules = systems.create(name, {})
            query = Query(model, rules, rules.token(""))
            for goal in ((w - 1, h - 1), (w // 2, h - 1)):
                try:
                    out.append((model, rules, query.path((0, 0), goal)))
                except NoPath:
                    pass
    return out


def shipped_paths() -> list[Any]:
    return [answer for _, _, answer in shipped_answers()]


def test_shipped_paths_stream_the_plain_text() -> None:
    """Every shipped map under every system: the streamed document (cells, steps, plan
    written an item at a time) is byte for byte the plain encoder's text of the lists."""
    paths = shipped_paths()
    assert len(paths) > 20
    checks = 0
    for p in paths:
        plain = path_json(p)
        assert isinstance(plain["steps"], list) and isinstance(plain["plan"], list)
        streamed = "".join(json_chunks(path_json(p, streamed=True)))
        assert streamed == plain_text(plain) == to_json(plain)
        checks += sum(1 for s in plain["steps"] if s["check"])
    assert checks > 0  # the checks' records, not only plain steps, are compared


def test_a_step_table_is_a_sequence_of_its_records() -> None:
    """Indexing, slices, negative indices, iteration and equality read the same records."""
    table = StepTable()
    table.append((0, 0), "walk", "", 0.0, 0.0, 0)
    table.append((1, 0), "walk", "floor", 0.5, 0.5, 1)
    table.append((2, 0), "swim", "water", 1.5, 1.0, 2)
    table.checks[2] = {"what": "swim", "target": 10, "p_success": 0.5}
    table.extra_of(2)["on_failure"] = "stop"
    want = [
        {"cell": [0, 0], "mode": "walk", "turns": 0.0, "time": 0.0, "check": None},
        {"cell": [1, 0], "mode": "walk", "terrain": "floor", "turns": 0.5, "time": 0.5,
         "turn": 1, "check": None},
        {"cell": [2, 0], "mode": "swim", "terrain": "water", "turns": 1.5, "time": 1.0,
         "turn": 2, "check": {"what": "swim", "target": 10, "p_success": 0.5},
         "on_failure": "stop"},
    ]  # fmt: skip
    assert list(table) == want and table == want and len(table) == 3
    assert table[-1] == want[2] and table[1:] == want[1:]
    assert [list(r) for r in table] == [list(r) for r in want]  # keys in the same order
    with pytest.raises(IndexError):
        table[3]


def test_streamed_items_are_written_as_the_encoder_writes_them() -> None:
    """Every kind of value an item may hold, nested, at every depth: the same text."""
    item = {
        "a": [1, -2, 3.5, 1e300, float("nan"), float("inf"), True, False, None],
        "é\u2028\x1b": 'ü\n"\\\x00',
        "empty": [[], {}, ()],
        "deep": {"x": [{"y": [0.1, (2, 3)]}], 7: "int key", 2.5: "float key", None: 0},
        "big": 2**70,
    }
    doc = {"n": 1, "rows": Streamed([item, [], {}, 5, "s"]), "inner": {"more": Streamed([])}}
    plain = {"n": 1, "rows": [item, [], {}, 5, "s"], "inner": {"more": []}}
    text = "".join(json_chunks(doc))
    assert text == to_json(plain)
    assert json.loads(text)["rows"][0]["a"][4] is None
    with pytest.raises(TypeError):
        "".join(json_chunks({"rows": Streamed([object()])}))


needs_json_rows = pytest.mark.skipif(not kernel.available(), reason=f"kernel {kernel.state()}")


def _random_rows(rng: np.random.Generator) -> tuple[tuple[Any, ...], Any, tuple[Any, ...]]:
    """Random templates over random columns: every int width, floats of every kind."""
    n = int(rng.integers(0, 300))
    specials = [0.0, -0.0, 1e300, -1e-300, 5e-324, 1e16, 1e15 + 0.5, 0.1, 1 / 3, 2.5e-7,
                float("nan"), float("inf"), -float("inf"), 123456789.0, 2.0**63]  # fmt: skip
    floats = rng.standard_normal(n) * 10.0 ** rng.integers(-20, 20, n)
    pick = rng.random(n) < 0.3
    floats[pick] = rng.choice(specials, int(pick.sum()))
    ints = [
        rng.integers(-(2**7), 2**7, n).astype(np.int8),
        rng.integers(-(2**15), 2**15, n).astype(np.int16),
        rng.integers(-(2**31), 2**31, n).astype(np.int32),
        rng.integers(-(2**63), 2**63 - 1, n, dtype=np.int64, endpoint=True),
    ]
    ints[3][: min(n, 2)] = [-(2**63), 2**63 - 1][: min(n, 2)]
    columns = (*ints, floats, np.repeat(floats[:1], n) if n else floats)
    alphabet = list(' \n{}[],:"abc\\') + ["\n    ", '"key": ']
    templates = []
    for _ in range(int(rng.integers(1, 5))):
        refs = bytes(rng.integers(0, len(columns), int(rng.integers(0, 6))).tolist())
        parts = tuple(
            "".join(rng.choice(alphabet, int(rng.integers(0, 4))).tolist())
            for _ in range(len(refs) + 1)
        )
        templates.append((parts, refs))
    kind = rng.integers(0, len(templates), n).astype(np.int32) if rng.random() < 0.8 else None
    return tuple(templates), kind, columns


@needs_json_rows
def test_the_kernels_rows_are_its_twins() -> None:
    """engine/_kernel.c's json_rows writes what rows_plain writes (the encoder's own
    ints and floats), on random templates, kinds, columns and row ranges."""
    rng = np.random.default_rng(42)
    for trial in range(300):
        templates, kind, columns = _random_rows(rng)
        n = len(columns[0])
        lo = int(rng.integers(0, n + 1))
        hi = int(rng.integers(lo, n + 1))
        got = kernel.json_rows(templates, kind, columns, lo, hi)
        assert got == blocktext.rows_plain(templates, kind, columns, lo, hi), trial
    floats = np.array([0.1, float("nan"), -0.0, 1e22, 1e-7])
    assert blocktext.rows_plain(((("", ","), b"\x00"),), None, (floats,), 0, 5) == (
        "0.1,null,-0.0,1e+22,1e-07,"
    )


@needs_json_rows
def test_the_kernels_floats_are_reprs_of_every_magnitude() -> None:
    """Whole numbers and fractions of a few ticks a turn, from 1 to past 2**52, the same
    fractions over many whole parts (the kernel keeps their digits by fraction and
    exponent), next to whole numbers and to 2**52: each written as float.__repr__."""
    rng = np.random.default_rng(5)
    values = []
    for den in (1, 2, 3, 6, 7, 12, 30, 60, 97, 1000, 1 << 20):
        q = rng.integers(1, 2**53 // den, 4000, dtype=np.int64)
        for top in (2**10, 2**30, 2**53 // den):
            whole = q % top + 1
            values.append((whole * den + rng.integers(0, den, whole.size)) / den)
    edges = [2.0**52 - 0.5, 2.0**52, 2.0**52 + 1, 1.0, 1 + 2**-52, 2 - 2**-52, 3 - 2**-51]
    near = np.arange(1, 2000, dtype=np.float64)
    values += [np.array(edges), near + 1e-9, near - 1e-9, near + 0.1, np.nextafter(near, 0)]
    floats = np.concatenate(values)
    template = ((("", ","), b"\x00"),)
    got = kernel.json_rows(template, None, (floats,), 0, floats.size).split(",")[:-1]
    assert got == [float.__repr__(x) for x in floats.tolist()]
    assert blocktext.rows_plain(template, None, (floats,), 0, floats.size).split(",")[:-1] == got


@needs_json_rows
def test_the_kernel_refuses_what_its_rows_cannot_write() -> None:
    ok = np.arange(4, dtype=np.int32)
    one = ((("a", "b"), b"\x00"),)
    with pytest.raises(ValueError, match="shorter"):
        kernel.json_rows(one, None, (ok,), 0, 5)
    with pytest.raises(TypeError, match="ASCII"):
        kernel.json_rows(((("\xe9", "b"), b"\x00"),), None, (ok,), 0, 4)
    with pytest.raises(TypeError, match="signed ints or float64"):
        kernel.json_rows(one, None, (ok.astype(np.uint32),), 0, 4)
    with pytest.raises(ValueError, match="names a column"):
        kernel.json_rows(((("a", "b"), b"\x01"),), None, (ok,), 0, 4)
    with pytest.raises(ValueError, match="names no template"):
        kernel.json_rows(one, np.array([0, 1, 0, 0], dtype=np.int8), (ok,), 0, 4)
    with pytest.raises(TypeError, match="len\\(parts\\)"):
        kernel.json_rows(((("a",), b"\x00"),), None, (ok,), 0, 4)


def _tables(rng: np.random.Generator, n: int) -> tuple[CellPath, StepTable, PlanTable]:
    """A random path's cells, steps (some with checks and optional parts, one at the
    end) and plan (turns of no cells among them)."""
    width = 1000
    flat = rng.integers(0, width * 700, n + 1)
    steps = StepTable()
    kinds = [("walk", ""), ("walk", "open"), ("swim", 'water \u00e9"'), ("climb", "wall")]
    steps.append((int(flat[0] % width), int(flat[0] // width)), "walk", "", 0.0, 0.0, 0)
    done = 0.0
    for i in range(1, n + 1):
        mode, terrain = kinds[int(rng.integers(1, len(kinds)))]
        cost = float(rng.choice([1 / 6, 0.5, 1 / 3, float("inf")], p=[0.6, 0.2, 0.19, 0.01]))
        done += cost if cost != float("inf") else 0.0
        cell = (int(flat[i] % width), int(flat[i] // width))
        steps.append(cell, mode, terrain, done, cost, int(np.ceil(done)))
    for i in rng.choice(np.arange(1, n + 1), min(n, 6), replace=False).tolist() + [n]:
        if rng.random() < 0.5:
            steps.checks[i] = {"what": "swim", "target": 10, "p_success": 0.55}
        if rng.random() < 0.5:
            steps.extra_of(i)["on_failure"] = "stop"
    steps.extra_of(1)  # asked for, left empty: a step like any other
    plan = PlanTable(steps)
    at = 1
    for k in range(1, 40):
        hi = min(n + 1, at + int(rng.integers(0, 5)))
        plan.append(k, at, hi, 1.0 if k < 39 else 0.25)
        at = hi
    return CellPath(flat, width), steps, plan


@pytest.mark.parametrize("compiled", [True, False])
def test_tables_are_written_in_blocks_as_the_encoder_writes_them(
    compiled: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Cells, steps and plan written by their block writers (blocks of 7 rows: runs
    cut at every block's edge and around every step written as a record), at two
    depths, through the kernel or its twin: the plain encoder's text of the records."""
    if compiled and not kernel.available():
        pytest.skip(f"kernel {kernel.state()}")
    monkeypatch.setattr(kernel, "enabled", compiled)
    monkeypatch.setattr(blocktext, "BLOCK_ROWS", 7)
    rng = np.random.default_rng(7)
    for n in (0, 1, 2, 6, 7, 8, 50, 200):
        cells, steps, plan = _tables(rng, n)
        writers = (
            blocktext.cells_writer(cells),
            blocktext.steps_writer(steps),
            blocktext.plan_writer(plan),
        )
        streamed = {
            "cells": Streamed(cells, list, writers[0]),
            "deeper": {"steps": Streamed(steps, None, writers[1])},
            "plan": Streamed(plan, None, writers[2]),
        }
        plain = {
            "cells": [list(c) for c in cells],
            "deeper": {"steps": list(steps)},
            "plan": list(plan),
        }
        text = "".join(json_chunks(streamed))
        assert text == plain_text(finite(plain)) == to_json(plain), n
    assert blocktext.steps_writer([{"cell": [0, 0]}]) is None  # not a table: record by record


def test_a_maze_path_streams_the_plain_text(tmp_path: Path) -> None:
    """A 96 x 96 maze's path (a long plan, every turn listed by the cells it enters):
    the command's streamed output is the plain encoder's text of the typed answer."""
    n = 96
    maze(n, tmp_path / "m.tmx")
    model = load_map(str(tmp_path / "m.tmx"))
    rules = systems.create("generic", {})
    found = Query(model, rules, rules.token("speed=5")).path((0, 0), (n - 1, n - 2))
    assert len(found.steps) > n * n // 3 and math.ceil(found.turns) > 1000
    rc = subprocess.run(
        [sys.executable, "-m", "engine.cli", "path", str(tmp_path / "m.tmx"), "--from", "0,0",
         "--to", f"{n - 1},{n - 2}", "--system", "generic", "--token", "speed=5", "--json"],
        cwd=ROOT, capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert rc.returncode == 0, rc.stderr
    assert rc.stdout == plain_text(path_json(found))


#: Address space a 1024 x 1024 maze's path may use: the issue's bound is 1 GB for the
#: 4096 x 4096 maximum; the largest maze CI can afford gets half of it (main's code ran out
#: of memory under this limit; the columns run it in under 300 MB).
MEMORY_LIMIT = 1 << 29


def _limit_memory() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT, MEMORY_LIMIT))


def test_a_long_maze_path_runs_within_half_a_gb(tmp_path: Path) -> None:
    """A 1024 x 1024 serpentine maze (a 525k-step path, 168 MB of JSON; 823 MB peak RSS
    before the steps were columns, 209 MB now) under a 512 MB address-space limit."""
    n = 1024
    maze(n, tmp_path / "m.tmx")
    env = {**os.environ, "SDL_VIDEODRIVER": "dummy", "SDL_AUDIODRIVER": "dummy"}
    out = tmp_path / "out.json"
    with out.open("w") as sink:
        p = subprocess.run(
            [sys.executable, "-m", "engine.cli", "path", str(tmp_path / "m.tmx"), "--from",
             "0,0", "--to", f"{n - 1},{n - 2}", "--system", "generic", "--token", "speed=30",
             "--json"],
            cwd=ROOT, env=env, stdout=sink, stderr=subprocess.PIPE, text=True, timeout=120,
            preexec_fn=_limit_memory,
        )  # fmt: skip
    assert p.returncode == 0, p.stderr[-2000:]
    with out.open() as f:
        head = f.read(4096)
    assert head.startswith('{\n  "system": "generic"')
    assert out.stat().st_size > 150_000_000


#: Address space the 2048 x 2048 maze's path may take (the map, its graph, the search and
#: the priced path): main's code before the cells and steps were arrays ran out of memory
#: under it (its predecessor walk alone made a list of 2M Python ints); the arrays need
#: under 500 MB.
ARRAY_PATH_LIMIT = 640 << 20


def _limit_array_path() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (ARRAY_PATH_LIMIT, ARRAY_PATH_LIMIT))


def test_a_2048_maze_path_is_priced_within_640_mb(tmp_path: Path) -> None:
    """The 2048 x 2048 serpentine maze's 2M-step path found and priced (cells, steps, plan)
    by the API in a process under a 640 MB address-space limit; its figures read off the
    columns are the maze's own."""
    n = 2048
    maze(n, tmp_path / "m.tmx")
    code = (
        "import sys\n"
        "from engine import systems\n"
        "from engine.query import Query\n"
        "from engine.tiled import load_map\n"
        "rules = systems.create('generic', {})\n"
        "found = Query(load_map(sys.argv[1]), rules, rules.token('speed=30')).path(\n"
        f"    (0, 0), ({n - 1}, {n - 2}))\n"
        "print(len(found.cells), len(found.steps), len(found.plan), found.turns,\n"
        "      found.cells[-1], found.steps[-1]['turn'], found.plan[-1]['end'],\n"
        "      found.cells[1024 * 1000], found.steps[123457]['turns'])\n"
    )
    p = subprocess.run(
        [sys.executable, "-c", code, str(tmp_path / "m.tmx")], cwd=ROOT, capture_output=True,
        text=True, timeout=120, preexec_fn=_limit_array_path,
    )  # fmt: skip
    assert p.returncode == 0, p.stderr[-2000:]
    # What main's lists answered, without the limit (the same search, the same pricing).
    assert p.stdout.split() == [
        "2094083", "2094083", "349184", "349184", "(2047,", "2046)", "349184", "[2047,",
        "2046]", "(500,", "1000)", "20586.166666666668",
    ]  # fmt: skip


def test_marks_as_arrays_draw_as_the_dict_of_them() -> None:
    """Every shipped map (square, hexes of either stagger axis): random marks, cells marked
    twice (the later mark wins), none (the whole map), drawn from CellMarks are the text
    the dict of the same marks draws."""
    rng = np.random.default_rng(3)
    for path in SHIPPED:
        model = load_map(str(path))
        w, h = model.grid.width, model.grid.height
        for count in (0, 1, 5, 60, 400):
            flat = rng.integers(0, w * h, count)
            if count:
                flat = flat[rng.integers(0, count, count)]  # repeats
            codes = rng.choice(np.frombuffer(b"SG123az@", dtype=np.uint8), count)
            plain = {(int(f % w), int(f // w)): chr(c) for f, c in zip(flat, codes, strict=True)}
            text = draw_cells(model, CellMarks(flat, codes, w))
            assert text == draw_cells(model, plain), (path.name, count)
            if count == 5:
                assert text.startswith("   cols ") and len(text.splitlines()) > 1


def test_the_path_text_read_off_the_columns_is_the_records_text() -> None:
    """format_path of every shipped path (checks, turn plans, hex maps) is the same text
    from the answer's columns as from its steps and plan as plain lists of records."""
    checks = 0
    for model, rules, p in shipped_answers():
        start, goal = p.cells[0], p.cells[-1]
        plain = replace(p, steps=list(p.steps), plan=list(p.plan))
        text = format_path(p, model, rules, start, goal)
        assert text == format_path(plain, model, rules, start, goal)
        checks += text.count("   check at ")
    assert checks > 0


#: Address space the 2048 x 2048 maze's whole ``path`` command may take, printing its
#: 683 MB of JSON or its 18 MB of text: main's code before the tables wrote themselves ran
#: out of memory under each (a record per step; a dict of 2M marks, 2.4 GB); now they
#: take about 350 and 450 MB.
PRINT_LIMITS = {"--json": 448 << 20, "": 640 << 20}


@pytest.mark.parametrize(
    ("flag", "size", "digest"),
    [
        ("--json", 683065764, "4f08f548e8fd0ffe0ee9c005b29304ee97c2681763152eef4f6ec1cb23ff1f7a"),
        ("", 18731911, "73a2c8d8876b9193573cf5b44129f42d22403fbc705639b253b54ef900131eea"),
    ],
)
def test_a_2048_maze_path_prints_within_its_bound(
    tmp_path: Path, flag: str, size: int, digest: str
) -> None:
    """The 2048 x 2048 maze's ``path --json`` and ``path`` text under an address-space
    limit: byte for byte what main's record-by-record code printed (its size and sha256,
    taken before the tables wrote themselves)."""
    import hashlib

    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (PRINT_LIMITS[flag], PRINT_LIMITS[flag]))

    n = 2048
    maze(n, tmp_path / "m.tmx")
    env = {**os.environ, "SDL_VIDEODRIVER": "dummy", "SDL_AUDIODRIVER": "dummy"}
    argv = [sys.executable, "-m", "engine.cli", "path", str(tmp_path / "m.tmx"), "--from",
            "0,0", "--to", f"{n - 1},{n - 2}", "--system", "generic", "--token", "speed=30"]  # fmt: skip
    proc = subprocess.Popen(
        argv + ([flag] if flag else []), cwd=ROOT, env=env, stdout=subprocess.PIPE,
        stderr=subprocess.PIPE, preexec_fn=limit,
    )  # fmt: skip
    assert proc.stdout is not None and proc.stderr is not None
    sha, got = hashlib.sha256(), 0
    while block := proc.stdout.read(1 << 20):
        sha.update(block)
        got += len(block)
    err = proc.stderr.read().decode()
    assert proc.wait(timeout=120) == 0, err[-2000:]
    assert (got, sha.hexdigest()) == (size, digest)
