"""The fast paths of issue 20: the vectorised A* (:func:`engine.search.frontier_search`) and
the Python API's query context (:class:`engine.api.Context`, A* with landmarks).

Both must give the totals of the pure-Python Dijkstra, scipy's compiled one and networkx
on every graph the engine builds: walls, doors and the corners rule, ``cost_add``, search
state layers (a prone Whisperspace token) and jump edges (Speedpoints); D6's time-dependent
search falls back to the general one.
"""

from __future__ import annotations

import math
import random
from collections.abc import Iterator
from contextlib import contextmanager
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_search import VARIANTS, graph, random_maps
from test_search_state import gap_maps, jump_graph, prone_graph, prone_maps
from wallmaps import random_walled_model

from engine import kernel, search, systems
from engine.mapmodel import MapModel, Terrain
from engine.movement import MovementGraph
from engine.report.movement import path_json
from engine.search import (
    UNREACHED,
    dijkstra,
    evaluate_path,
    frontier_path,
    frontier_search,
    supports_frontier,
)

GENERIC = systems.create("generic")

#: Each search test runs twice: on engine/_kernel.c where it is built, and on the numpy
#: loop it replaces where it is not (``engine.kernel.enabled = False``, the one switch).
ENGINES = pytest.mark.parametrize("engine", ["compiled", "numpy"])


@contextmanager
def engine_of(name: str) -> Iterator[None]:
    if name == "compiled" and not kernel.available():
        pytest.skip("engine/_kernel.c is not built here")
    saved = kernel.enabled
    if name == "numpy":
        kernel.enabled = False
    try:
        yield
    finally:
        kernel.enabled = saved


def _agree(g: MovementGraph, start: tuple[int, int]) -> None:
    """Dijkstra field, and A* to every cell, against the pure-Python Dijkstra."""
    py = dijkstra(g, start)
    field = frontier_search(g, start).field()
    got = {k: int(v) for k, v in enumerate(field.tolist()) if v != UNREACHED}
    assert got == {k: int(v) for k, v in py.dist.items()}
    for cell in g.grid.cells():
        want = py.ticks(cell)
        found = frontier_search(g, start, cell)
        if want is None:
            assert found.end is None
            continue
        assert found.end is not None
        nodes = found.nodes_to(found.end)
        assert nodes[0] == g.node(start) and nodes[-1] == found.end
        cells = frontier_path(g, start, cell)
        assert cells is not None and cells[0] == start and cells[-1] == cell
        if cell != start:
            assert evaluate_path(g, cells).ticks == want
    # A reach (a search up to a limit) as the API makes it: the compiled one, where it
    # runs, has the pure-Python search's nodes and ticks, and its ways are as short.
    far = max(py.dist.values(), default=0)
    for limit in sorted({0, g.denominator, far // 2, far}):
        tree = search.search_tree(g, start, limit=limit)
        want_tree = dijkstra(g, start, limit=limit)
        assert tree.dist == want_tree.dist
        assert set(tree.cells()) == set(want_tree.cells())
        for cell in tree.cells():
            assert tree.ticks(cell) == want_tree.ticks(cell)
            way = tree.path_to(cell)
            assert way[0] == start and way[-1] == cell
            if cell != start:
                assert evaluate_path(g, way).ticks == tree.ticks(cell)


@ENGINES
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(random_maps())
def test_frontier_search_agrees_on_random_maps(engine: str, case) -> None:
    with engine_of(engine):
        rows, (orientation, rule, stagger), start, speed = case
        g = graph(rows, speed=speed, orientation=orientation, diagonals=rule, stagger=stagger)
        if not supports_frontier(g):
            assert rule == "euclid"
            return
        _agree(g, start)


@ENGINES
@settings(max_examples=40, deadline=None)
@given(
    st.sampled_from(["square-alt", "square-equal", "square-none", "hex", "staggered"]),
    st.integers(0, 2**31 - 1),
)
def test_frontier_search_agrees_with_walls_doors_and_corners(
    engine: str, kind: str, seed: int
) -> None:
    with engine_of(engine):
        rnd = random.Random(seed)
        terrains = (
            Terrain(),
            Terrain(name="rough", cost=2.0),
            Terrain(name="brush", cost_add=1.0),
            Terrain(name="rock", move="blocked"),
        )
        model = random_walled_model(kind, rnd, terrains, [0, 0, 0, 1, 2, 3])
        g = MovementGraph(model, GENERIC, GENERIC.token("speed=10"), "walk")
        _agree(g, (rnd.randrange(model.width), rnd.randrange(model.height)))


@ENGINES
@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(prone_maps())
def test_frontier_search_agrees_on_state_layers(engine: str, case) -> None:
    with engine_of(engine):
        rows, (orientation, rule, stagger), start, pace, stats = case
        g = prone_graph(rows, pace, stats, orientation=orientation, diagonals=rule, stagger=stagger)
        if supports_frontier(g):
            _agree(g, start)


@ENGINES
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(gap_maps())
def test_frontier_search_agrees_with_jumps_and_leaps(engine: str, case) -> None:
    with engine_of(engine):
        rows, (orientation, rule, stagger), start, running = case
        g = jump_graph(rows, running, orientation=orientation, diagonals=rule, stagger=stagger)
        if supports_frontier(g):
            _agree(g, start)


@ENGINES
def test_frontier_search_limit_is_a_reach(engine: str) -> None:
    with engine_of(engine):
        g = graph(["." * 9] * 9, speed="10")
        field = frontier_search(g, (4, 4), limit=g.denominator).field()
        tree = dijkstra(g, (4, 4), limit=g.denominator)
        assert {k for k, v in enumerate(field.tolist()) if v != UNREACHED} == set(tree.dist)


def test_the_heuristic_never_overshoots_on_open_ground() -> None:
    """The A* estimate is the open-grid distance: exact where every cell costs the least."""
    from engine.search.frontier import _heuristic

    for orientation, rule, stagger in VARIANTS:
        if rule == "euclid":
            continue
        g = graph(["." * 8] * 7, speed="10", orientation=orientation, diagonals=rule,
                  stagger=stagger)  # fmt: skip
        tab = g.step_tables()
        for goal in [(0, 0), (7, 6), (3, 2)]:
            h = _heuristic(g, goal)
            field = frontier_search(g, goal).field()  # from the goal: open ground is symmetric
            nodes = np.arange(g.n * g.n_states)
            layer, idx = np.divmod(nodes, g.n)
            r, c = np.divmod(idx, g.grid.width)
            framed = (r + tab.pad) * tab.pw + c + tab.pad
            est = h(framed, layer if g.n_states > 1 else None)
            best = {}
            for node, d in enumerate(field.tolist()):
                best[node % g.n] = min(best.get(node % g.n, math.inf), d)
            for node in range(g.n * g.n_states):
                # never above the true cost to the goal (from parity 0, the start's)
                if node // g.n == 0:
                    assert est[node] <= best[node % g.n], (orientation, rule, goal, node)


# --------------------------------------------------------------------------- the context


def _walkable(model: MapModel) -> list[tuple[int, int]]:
    return [c for c in model.grid.cells() if model.terrain_at(c).move != "blocked"]


MAP = [
    "....,,,...~~~.........",
    "..#####...~~~..####...",
    "......#...,,,.....#...",
    ".,,,..#...........#.__",
    ".,,,......#####...#.__",
    "..........#.......#...",
    "~~~~......#...,,,.....",
]


@ENGINES
def test_context_paths_have_the_totals_of_api_path(engine: str) -> None:
    with engine_of(engine):
        from test_search import model_from

        from engine import api

        for rule in ("alternate", "equal", "none"):
            model = model_from(MAP, diagonals=rule)
            rules = api.system("generic")
            token = rules.token("speed=15")
            ctx = api.Context(model, rules, token)
            rnd = random.Random(rule)
            cells = _walkable(model)
            for _ in range(40):
                a, b = rnd.choice(cells), rnd.choice(cells)
                want = api.path(model, rules, token, a, b)
                got = ctx.path(a, b)
                assert got["turns_exact"] == want["turns_exact"], (rule, a, b)
                assert got["cells"][0] == list(a) and got["cells"][-1] == list(b)
                assert got["distance_cells"] == want["distance_cells"] or rule == "alternate"
            assert ctx.query._guides[("walk", frozenset())] is not None  # the landmarks were used


@ENGINES
def test_context_on_layers_jumps_checks_and_timed_systems(engine: str) -> None:
    """Whisperspace (checks, a prone token's layers), Speedpoints (jumps) and D6 (its
    time-dependent first round) answer as api.path does through the context."""
    with engine_of(engine):
        from test_search import model_from
        from test_search_state import leap_model

        from engine import api

        cases = [
            (model_from(MAP), "whisperspace", "phys=1,prone=true", "sprint"),
            (model_from(MAP), "whisperspace", "phys=1,athletics=1", "walk"),
            (leap_model(["..OO..12..", "...O..21..", "..........", ".OOO...~~."]), "speedpoints",
             "running=4", "run"),
            (model_from(MAP), "d6", "", None),
        ]  # fmt: skip
        for model, name, stats, pace in cases:
            rules = api.system(name)
            token = rules.token(stats)
            ctx = api.Context(model, rules, token, pace=pace)
            rnd = random.Random(name)
            cells = _walkable(model)
            for _ in range(15):
                a, b = rnd.choice(cells), rnd.choice(cells)
                try:
                    want = api.path(model, rules, token, a, b, pace=pace)
                except Exception as exc:  # NoPath: the context says the same
                    try:
                        ctx.path(a, b)
                    except type(exc):
                        continue
                    raise AssertionError(
                        f"{name}: the context found a path api.path did not"
                    ) from exc
                got = ctx.path(a, b)
                assert got["turns_exact"] == want["turns_exact"], (name, a, b)
                assert (
                    got["p_no_failure"] >= want["p_no_failure"] - 1e-12
                    or got["cells"] != want["cells"]
                )


def test_context_reach_is_api_reach() -> None:
    from test_search import model_from

    from engine import api

    model = model_from(MAP)
    rules = api.system("whisperspace")
    token = rules.token("phys=1")
    ctx = api.Context(model, rules, token)
    for start in [(0, 0), (12, 3), (21, 6)]:
        for pace in rules.paces:
            for turns in (1, 2):
                want = api.reach(model, rules, token, start, turns=turns, pace=pace)
                got = ctx.reach(start, turns=turns, pace=pace)
                assert got["cells"] == want["cells"]
                assert got["bands"] == want["bands"]


def test_context_reads_a_file_and_refreshes_after_a_change(tmp_path) -> None:
    import tmxtext

    from engine import api

    path = tmxtext.write(tmp_path / "m.tmx", MAP)
    rules = api.system("generic")
    token = rules.token("speed=10")
    import engine.tiled.reader

    def no_pytmx(*args: object, **kwargs: object) -> None:
        raise AssertionError("a map for the engine was read with pytmx")

    with pytest.MonkeyPatch.context() as patch:  # no pytmx read: nothing draws it
        patch.setattr(engine.tiled.reader, "parse_with_pytmx", no_pytmx)
        ctx = api.Context(str(path), rules, token)
    before = ctx.path((0, 0), (21, 0))
    ctx.model.with_terrain([(c, 0) for c in range(4, 10)], {"cost": 4.0, "name": "mud"})
    ctx.refresh([(c, 0) for c in range(4, 10)])
    after = ctx.path((0, 0), (21, 0))
    fresh = api.path(ctx.model, rules, token, (0, 0), (21, 0))
    assert after["turns_exact"] == fresh["turns_exact"] != before["turns_exact"]
    ctx.refresh()
    assert ctx.path((0, 0), (21, 0))["turns_exact"] == fresh["turns_exact"]


def test_context_on_a_bigger_map_matches_the_vectorised_search() -> None:
    from test_search import model_from

    from engine import api

    rnd = random.Random(5)
    rows = ["".join(rnd.choice(".......,,#~_") for _ in range(90)) for _ in range(80)]
    for rule in ("alternate", "equal"):
        model = model_from(rows, diagonals=rule)
        rules = api.system("generic")
        token = rules.token("speed=30")
        ctx = api.Context(model, rules, token)
        g = ctx.graph()
        cells = _walkable(model)
        for _ in range(25):
            a, b = rnd.choice(cells), rnd.choice(cells)
            ref = frontier_path(g, a, b)
            try:
                got = ctx.path(a, b)
            except Exception:
                assert ref is None
                continue
            assert ref is not None
            assert Fraction(got["turns_exact"]) * g.denominator == evaluate_path(g, ref).ticks


def test_the_path_command_reads_no_pytmx_and_imports_no_scipy(tmp_path) -> None:
    """`tacgrid path` on a big map (the vectorised A*) needs neither pytmx's copy of the
    map nor scipy: both cost start-up time and memory that only renderers and distance
    fields need."""
    import json
    import subprocess
    import sys

    import tmxtext

    rnd = random.Random(3)
    rows = ["".join(rnd.choice(".......,,#~") for _ in range(170)) for _ in range(160)]
    rows[0] = "." + rows[0][1:]
    rows[-1] = rows[-1][:-1] + "."
    path = tmxtext.write(tmp_path / "big.tmx", rows, properties={"diagonals": "alternate"})
    code = (
        "import io, json, sys, contextlib\n"
        "from engine.cli import main\n"
        "out = io.StringIO()\n"
        "with contextlib.redirect_stdout(out):\n"
        f"    rc = main(['path', {str(path)!r}, '--system', 'generic', '--from', '0,0',\n"
        "               '--to', '169,159', '--json'])\n"
        "print(json.dumps({'rc': rc, 'turns': json.loads(out.getvalue())['turns_exact'],\n"
        "                  'mods': [m for m in ('scipy', 'pytmx') if m in sys.modules]}))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    doc = json.loads(done.stdout.strip().splitlines()[-1])
    assert doc["rc"] == 0 and doc["mods"] == []
    # the same total as the pure-Python Dijkstra on the same map
    from engine.tiled import load_map

    model = load_map(path)
    g = MovementGraph(model, GENERIC, GENERIC.token(""), None)
    assert Fraction(doc["turns"]) * g.denominator == dijkstra(g, (0, 0)).ticks((169, 159))


def test_the_compiled_search_is_built_where_a_compiler_is() -> None:
    """The install builds engine/_kernel.c wherever it finds a C compiler (setup.py); a
    silent fall-back to the numpy loop would only show as a slow benchmark."""
    import shutil
    import subprocess
    import sys

    if shutil.which("cc") or shutil.which("gcc"):
        assert kernel.available()
    code = "import engine.search, engine.kernel as k; print(k.available())"
    env = {**__import__("os").environ, "TACGRID_NO_KERNEL": "1"}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env)
    assert out.stdout.strip() == "False"


def test_the_compiled_search_refuses_tables_of_the_wrong_shape() -> None:
    if not kernel.available():
        pytest.skip("engine/_kernel.c is not built here")
    g = graph(["." * 5] * 4, speed="10")
    tab = g.step_tables()
    size = tab.pn * g.n_states
    dist = np.full(size - 1, np.iinfo(np.int32).max, dtype=np.int32)  # one short
    pred = np.full(size, -1, dtype=np.int32)
    with pytest.raises(ValueError, match="inconsistent"):
        search.kernel_search(g, dist, pred, tab.frame(0, 5, g.n), (4, 3), None)
    with pytest.raises(TypeError, match="bytes"):
        search.kernel_search(g, dist.astype(np.int64), pred, 0, (4, 3), None)


def test_the_doors_estimate_kinds_are_the_c_loops() -> None:
    """engine.kernel.Estimate names engine/_kernel.c's heuristic kinds (its ``H_`` enum):
    the same names, the same numbers."""
    import re
    from pathlib import Path

    source = (Path(kernel.__file__).parent / "_kernel.c").read_text()
    enum = re.search(r"enum \{ (H_NONE[^}]*)\}", source)
    assert enum is not None
    in_c = {
        name.strip(): int(value) for name, value in re.findall(r"(H_\w+) = (\d+)", enum.group(1))
    }
    assert in_c == {f"H_{kind.name}": kind.value for kind in kernel.Estimate}


def test_the_one_switch_turns_the_compiled_search_off(monkeypatch: pytest.MonkeyPatch) -> None:
    """With ``engine.kernel.enabled`` off, no search reaches the compiled loop; on (where it
    is built), paths and reach go through :func:`engine.kernel.astar`."""
    calls: list[kernel.AStarArgs] = []
    real = kernel.astar

    def counted(args: kernel.AStarArgs) -> tuple[int, int]:
        calls.append(args)
        return real(args)

    monkeypatch.setattr(kernel, "astar", counted)
    g = graph(["." * 9] * 7, speed="10")
    monkeypatch.setattr(kernel, "enabled", False)
    off = frontier_path(g, (0, 0), (8, 6)), search.search_tree(g, (0, 0), limit=40).cells()
    assert calls == []
    monkeypatch.setattr(kernel, "enabled", True)
    if not kernel.available():
        return  # not built here
    on = frontier_path(g, (0, 0), (8, 6)), search.search_tree(g, (0, 0), limit=40).cells()
    assert len(calls) == 2 and calls[0].guide.kind == kernel.Estimate.ALTERNATE
    assert calls[1].guide == kernel.NO_GUIDE and calls[1].limit == 40
    assert on[0] is not None and off[0] is not None and on[0][-1] == off[0][-1] == (8, 6)
    same = (
        path_json(evaluate_path(g, on[0]))["turns_exact"]
        == path_json(evaluate_path(g, off[0]))["turns_exact"]
    )
    assert same and sorted(on[1]) == sorted(off[1])  # where ways tie, either may be kept
