"""A path held as columns (engine/search/steps.py) and written as it is read: the same
records and the same JSON text as the plain way, and a maze's long path within 1 GB."""

from __future__ import annotations

import json
import math
import os
import resource
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from conftest import ROOT
from tmxtext import maze

from engine import systems
from engine.query import Query
from engine.report import Streamed, json_chunks, to_json
from engine.report.movement import path_json
from engine.search import NoPath
from engine.search.steps import StepTable
from engine.tiled import load_map

SHIPPED = sorted(p for p in (ROOT / "maps").iterdir() if p.suffix in (".tmx", ".tmj"))


def plain_text(doc: Any) -> str:
    """The document as the standard library's encoder writes it whole (the plain way)."""
    return json.dumps(doc, indent=2, allow_nan=False) + "\n"


def shipped_paths() -> list[Any]:
    out = []
    for path in SHIPPED:
        model = load_map(str(path))
        w, h = model.grid.width, model.grid.height
        for name in ("generic", "d6", "mythmaster", "speedpoints", "whisperspace"):
            rules = systems.create(name, {})
            query = Query(model, rules, rules.token(""))
            for goal in ((w - 1, h - 1), (w // 2, h - 1)):
                try:
                    out.append(query.path((0, 0), goal))
                except NoPath:
                    pass
    return out


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
