"""Quick commands import only what they need (issue 20: `tacgrid systems` and `tacgrid info`
start in <= 0.15 s; benchmarks/bench_startup.py times them).

Each check runs the command in a fresh interpreter and lists the heavy modules it loaded:
`systems` and `stats` need no numpy (engine.lazy imports it on first use), no map model,
no search, movement or flight (a system's flight rules are a submodule of it, imported
when a token flies); `info` reads the map without pytmx (only a renderer needs pytmx's
read), and a small map without numpy (engine.cells: its arrays stay stdlib arrays until
something asks for numpy). The output of a lazy start is the same as that of a process
that had everything loaded already.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

#: Never needed to list the systems or a token's figures.
NOT_FOR_SYSTEMS = (
    "numpy",
    "engine.mapmodel",
    "engine.tiled",
    "engine.search",
    "engine.movement",
    "engine.timed",
    "engine.flight",
    "engine.systems.mythmaster.flight",
    "engine.systems.speedpoints.flight",
    "engine.sim",
    "scipy",
    "networkx",
    "pytmx",
    "yaml",
    "pygame",
)
#: Never needed to describe a map (numpy: a small one).
NOT_FOR_INFO = (
    "numpy",
    "pytmx",
    "engine.systems",
    "engine.search",
    "engine.movement",
    "engine.flight",
    "scipy",
    "networkx",
    "yaml",
    "pygame",
    "PIL",
    "matplotlib",
)


def _run(argv: list[str], preload: tuple[str, ...] = (), watch: tuple[str, ...] = ()) -> dict:
    """Run ``tacgrid ARGV`` in a fresh interpreter (after importing ``preload``): its exit
    status, its stdout, and which of ``watch`` it imported."""
    code = (
        "import contextlib, io, json, sys\n"
        f"for name in {list(preload)!r}:\n"
        "    __import__(name)\n"
        "from engine.cli import main\n"
        "out = io.StringIO()\n"
        "with contextlib.redirect_stdout(out):\n"
        f"    rc = main({argv!r})\n"
        f"seen = [m for m in {list(watch)!r} if m in sys.modules]\n"
        "print(json.dumps({'rc': rc, 'out': out.getvalue(), 'seen': seen}))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize(
    "argv",
    [
        ["systems"],
        ["systems", "--json"],
        ["stats", "--system", "d6", "--json"],
        ["stats", "--system", "mythmaster", "--token", "adaptability=14,flyer=true"],
        ["stats", "--system", "speedpoints", "--token", "airspeed=5", "--json"],
        ["odds", "--system", "whisperspace", "athletics=2", "dc=6", "bonus=1"],
    ],
)
def test_systems_and_stats_import_no_numpy_search_or_planner(argv: list[str]) -> None:
    lazy = _run(argv, watch=NOT_FOR_SYSTEMS)
    assert lazy["rc"] == 0 and lazy["out"]
    assert lazy["seen"] == [], f"{' '.join(argv)} imported {lazy['seen']}"
    # the same output as from a process with numpy, the search and the planner loaded
    loaded = _run(argv, preload=("numpy", "engine.search", "engine.flight.planner"))
    assert loaded["rc"] == 0 and loaded["out"] == lazy["out"]


@pytest.mark.parametrize(
    "path", ["maps/encounter.tmx", "maps/chase.tmx", "maps/hex_pointy.tmx", "maps/hex_flat.tmj"]
)
def test_info_reads_a_small_map_without_numpy_pytmx_or_the_systems(path: str) -> None:
    argv = ["info", path, "--json"]
    lazy = _run(argv, watch=NOT_FOR_INFO)
    assert lazy["rc"] == 0
    assert lazy["seen"] == [], f"info imported {lazy['seen']}"
    loaded = _run(argv, preload=("numpy", "pytmx", "engine.search", "engine.flight.planner"))
    assert loaded["out"] == lazy["out"]


def test_info_on_a_map_with_walls_still_reads_them() -> None:
    """Walls are checked with numpy (engine.walls), so a map with any imports it: the
    same answer as with numpy loaded first."""
    argv = ["info", "maps/vtt_room.dd2vtt", "--json"]
    lazy = _run(argv, watch=NOT_FOR_INFO[1:])
    assert lazy["rc"] == 0 and lazy["seen"] == [], f"info imported {lazy['seen']}"
    assert json.loads(lazy["out"])["walls"]
    assert _run(argv, preload=("numpy",))["out"] == lazy["out"]


def test_a_flier_still_gets_its_flight_rules() -> None:
    """The flight submodules are imported when a token flies (and only then)."""
    code = (
        "import sys\n"
        "from engine import systems\n"
        "from engine.grid import Grid\n"
        "from engine.mapmodel import MapModel, Terrain\n"
        "m = MapModel.uniform(Grid('hexagonal', 4, 4, 32, 28, hex_side=14), Terrain())\n"
        "mm = systems.create('mythmaster')\n"
        "assert mm.flight(mm.token('flyer=false'), m) is None\n"
        "assert 'engine.flight.model' not in sys.modules\n"
        "rules = mm.flight(mm.token('flyer=true'), m)\n"
        "assert type(rules).__module__ == 'engine.systems.mythmaster.flight'\n"
        "sp = systems.create('speedpoints')\n"
        "rules = sp.flight(sp.token('airspeed=5'), m)\n"
        "assert type(rules).__module__ == 'engine.systems.speedpoints.flight'\n"
        "print('ok')\n"
    )
    _prints_ok(code)


def _prints_ok(code: str) -> None:
    """``code`` run in a fresh interpreter succeeds and prints ``ok``."""
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0 and done.stdout.strip() == "ok", done.stderr


def test_lazy_numpy_imports_numpy_on_first_use() -> None:
    """The stand-in imports numpy on the first attribute read and hands every read on to
    it; it rewrites no other module (no look-up of engine modules by name)."""
    code = (
        "import sys\n"
        "import engine.dice, engine.checks, engine.systems.d6 as d6\n"
        "from engine.lazy import LazyModule\n"
        "assert 'numpy' not in sys.modules\n"
        "assert isinstance(engine.dice.np, LazyModule) and d6.np is engine.dice.np\n"
        "assert engine.dice.np.zeros(2).tolist() == [0.0, 0.0]\n"
        "import numpy\n"
        "assert engine.checks.np.int64 is numpy.int64 and d6.np.asarray is numpy.asarray\n"
        "assert engine.dice.np._lazy_module is numpy\n"
        "print('ok')\n"
    )
    _prints_ok(code)


@pytest.mark.parametrize("given", [None, "3"])
def test_the_command_line_keeps_openblas_to_one_thread_unless_told(given: str | None) -> None:
    """No command does linear algebra, so `tacgrid` asks OpenBLAS for one thread (its pool
    costs every start some 60 ms here); a user's own OPENBLAS_NUM_THREADS is kept."""
    import os

    env = {k: v for k, v in os.environ.items() if k != "OPENBLAS_NUM_THREADS"}
    if given is not None:
        env["OPENBLAS_NUM_THREADS"] = given
    code = (
        "import os, contextlib, io\n"
        "from engine.cli import main\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        "    main(['info', 'maps/encounter.tmx'])\n"
        "import numpy\n"
        "print(os.environ['OPENBLAS_NUM_THREADS'])\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd=ROOT
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == (given or "1")


def test_the_benchmarks_time_the_engine_from_bytecode(tmp_path: Path) -> None:
    """benchmarks/timing.compiled writes the bytecode of an engine's modules that have none
    or an older one than their source (where PYTHONDONTWRITEBYTECODE is set, imports never
    do), and only those."""
    import os

    sys.path.insert(0, str(ROOT / "benchmarks"))
    try:
        from timing import compiled
    finally:
        sys.path.remove(str(ROOT / "benchmarks"))
    (tmp_path / "engine" / "sub").mkdir(parents=True)
    a = tmp_path / "engine" / "a.py"
    a.write_text("X = 1\n")
    (tmp_path / "engine" / "sub" / "b.py").write_text("Y = 2\n")
    assert compiled(tmp_path) == 2
    assert compiled(tmp_path) == 0
    a.write_text("X = 3\n")
    later = a.stat().st_mtime + 5
    os.utime(a, (later, later))
    assert compiled(tmp_path) == 1
