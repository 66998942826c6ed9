"""Movement search: golden "perft" maps, engine agreement, risk, plans, no-path answers."""

from __future__ import annotations

import json
import math
import pickle
from fractions import Fraction
from pathlib import Path

import networkx as nx
import pytest
import tmxtext
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engine import systems
from engine.cli import main
from engine.grid import Grid
from engine.mapmodel import MapModel, Terrain
from engine.movement import MovementGraph
from engine.report.movement import path_json, reach_dict
from engine.search import NoPath, compiled_field, dijkstra, find_path, reach
from engine.systems.base import CellCheck
from engine.tiled import load_map

GENERIC = systems.create("generic")


def model_from(
    rows: list[str], orientation="orthogonal", diagonals="alternate", stagger=("y", "odd")
):
    """A map model straight from a drawing (no file), legend as tests/tmxtext.py."""
    import numpy as np

    table = []
    ids = []
    for row in rows:
        line = []
        for ch in row:
            p = tmxtext.LEGEND[ch]
            t = Terrain(
                name=p["terrain"],
                move=p["move"],
                difficulty=p.get("difficulty", "none"),
                cost=p.get("cost", 1.0),
                height=p.get("height"),
            )
            if t not in table:
                table.append(t)
            line.append(table.index(t))
        ids.append(line)
    side = 16 if orientation == "hexagonal" else 0
    grid = Grid(
        orientation, len(rows[0]), len(rows), 32, 32, stagger[0], stagger[1], side, diagonals
    )
    return MapModel(grid=grid, terrain_ids=np.array(ids, dtype=np.int32), terrains=tuple(table))


def graph(rows, speed="10", pace="walk", **kw) -> MovementGraph:
    return MovementGraph(model_from(rows, **kw), GENERIC, GENERIC.token(f"speed={speed}"), pace)


OPEN = ["." * 7] * 7


# --------------------------------------------------------------------------- golden


@pytest.mark.parametrize(
    ("rule", "turns"),
    [
        ("none", Fraction(5, 2)),
        ("equal", Fraction(3, 2)),
        ("alternate", Fraction(2)),
        ("euclid", None),
    ],
)
def test_path_time_by_diagonal_rule(rule: str, turns: Fraction | None) -> None:
    # speed 10 ft on 5-ft cells: 2 cells a turn; (0,0) -> (3,2)
    g = graph(OPEN, diagonals=rule)
    rep = path_json(find_path(g, (0, 0), (3, 2)))
    if turns is None:
        assert rep["turns"] == pytest.approx((1 + 2 * math.sqrt(2)) / 2, abs=1e-9)
    else:
        assert Fraction(rep["turns_exact"]) == turns
    assert rep["cells"][0] == [0, 0] and rep["cells"][-1] == [3, 2]


@pytest.mark.parametrize(
    ("rule", "size"), [("none", 13), ("equal", 25), ("alternate", 21), ("euclid", 13)]
)
def test_one_turn_reach_sets_by_rule(rule: str, size: int) -> None:
    g = graph(OPEN, diagonals=rule)
    tree = dijkstra(g, (3, 3), limit=g.denominator)
    cells = set(tree.cells())
    assert len(cells) == size
    if rule == "alternate":
        assert (5, 5) not in cells and (5, 4) in cells  # 1 + 2 = 3 cells to the corner


@pytest.mark.parametrize("axis", ["x", "y"])
@pytest.mark.parametrize("index", ["odd", "even"])
def test_hex_reach_and_paths(axis: str, index: str) -> None:
    rows = ["." * 9] * 9
    g = graph(rows, orientation="hexagonal", stagger=(axis, index))
    tree = dijkstra(g, (4, 4), limit=g.denominator)
    assert len(tree.cells()) == 19  # 1 + 6 + 12
    for cell in [(0, 0), (8, 8), (0, 8), (8, 3)]:
        rep = path_json(find_path(g, (4, 4), cell))
        assert Fraction(rep["turns_exact"]) == Fraction(g.grid.steps((4, 4), cell), 2)


def test_terrain_cost_and_walls() -> None:
    rows = [
        ".,,.",
        "###.",
        "....",
    ]
    g = graph(rows, diagonals="none")
    # Rough costs 2 to enter: along the top 2 + 2 + 1 = 5 cells of time, 5/2 turns.
    assert Fraction(path_json(find_path(g, (0, 0), (3, 0)))["turns_exact"]) == Fraction(5, 2)
    rep = path_json(find_path(g, (0, 0), (0, 2)))
    assert Fraction(rep["turns_exact"]) == Fraction(5 + 2 + 3, 2)  # around the wall
    assert [0, 1] not in rep["cells"]


def test_turn_plan_ends() -> None:
    g = graph(["........"], diagonals="none")
    rep = path_json(find_path(g, (0, 0), (7, 0)))
    assert [t["end"] for t in rep["plan"]] == [[2, 0], [4, 0], [6, 0], [7, 0]]
    assert rep["plan"][-1]["spent"] == 0.5
    assert rep["distance"] == 35 and rep["unit"] == "ft"


def test_no_path_is_fast_and_says_why() -> None:
    g = graph(["..#..", "..#..", "..#.."], diagonals="none")
    with pytest.raises(NoPath, match="cut off"):
        path_json(find_path(g, (0, 0), (4, 2)))
    with pytest.raises(NoPath, match="blocked"):
        path_json(find_path(g, (0, 0), (2, 1)))
    water = graph(["..~.."], speed="10")
    assert path_json(find_path(water, (0, 0), (4, 0)))["turns"] == 2.0  # generic swims at speed


def test_fliers_cross_air() -> None:
    rows = ["..aaa.."]
    m = model_from(rows, diagonals="none")
    walker = MovementGraph(m, GENERIC, GENERIC.token("speed=10"), "walk")
    flier = MovementGraph(m, GENERIC, GENERIC.token("speed=10,fly=true"), "walk")
    with pytest.raises(NoPath):
        path_json(find_path(walker, (0, 0), (6, 0)))
    assert path_json(find_path(flier, (0, 0), (6, 0)))["turns"] == 3.0


def test_bands_and_contours() -> None:
    m = model_from(["." * 21], diagonals="none")
    tok = GENERIC.token("speed=10")
    graphs = {p: MovementGraph(m, GENERIC, tok, p) for p in GENERIC.paces}
    rep = reach_dict(reach(graphs, "dash", (10, 0), 2))
    band = {tuple(c["cell"]): c["band"] for c in rep["cells"]}
    assert band[(10, 0)] == "walk" and band[(12, 0)] == "walk" and band[(13, 0)] == "dash"
    assert band[(14, 0)] == "dash" and band[(15, 0)] == "turn2" and band[(18, 0)] == "turn2"
    assert (19, 0) not in band and len(rep["cells"]) == 17


def test_hover_uses_the_cached_tree() -> None:
    g = graph(OPEN)
    tree = dijkstra(g, (0, 0))
    assert tree.path_to((6, 6))[-1] == (6, 6) and tree.path_to((6, 6))[0] == (0, 0)
    assert tree.turns((6, 6)) == Fraction(9, 2)  # 6 diagonals, 1-2-1-2-1-2 = 9 cells


# --------------------------------------------------------------------------- engines agree

VARIANTS = [
    ("orthogonal", "none", ("y", "odd")),
    ("orthogonal", "equal", ("y", "odd")),
    ("orthogonal", "alternate", ("y", "odd")),
    ("orthogonal", "euclid", ("y", "odd")),
    ("hexagonal", "alternate", ("y", "odd")),
    ("hexagonal", "alternate", ("y", "even")),
    ("hexagonal", "alternate", ("x", "odd")),
    ("hexagonal", "alternate", ("x", "even")),
    ("staggered", "none", ("y", "odd")),
    ("staggered", "alternate", ("x", "even")),
]


@st.composite
def random_maps(draw):
    w = draw(st.integers(2, 9))
    h = draw(st.integers(2, 9))
    rows = ["".join(draw(st.sampled_from(".....,,#~")) for _ in range(w)) for _ in range(h)]
    variant = draw(st.sampled_from(VARIANTS))
    start = (draw(st.integers(0, w - 1)), draw(st.integers(0, h - 1)))
    speed = draw(st.sampled_from(["10", "15", "35", "15/2"]))
    return rows, variant, start, speed


def _norm(x: float) -> float:
    return round(float(x), 6)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(random_maps())
def test_python_scipy_and_networkx_agree(case) -> None:
    rows, (orientation, rule, stagger), start, speed = case
    g = graph(rows, speed=speed, orientation=orientation, diagonals=rule, stagger=stagger)
    py = dijkstra(g, start)
    sp = compiled_field(g, start)
    assert {k: _norm(v) for k, v in py.dist.items()} == {k: _norm(v) for k, v in sp.dist.items()}
    nxg = g.to_networkx()
    src = (start, 0)
    nd = nx.single_source_dijkstra_path_length(nxg, src, weight="ticks")
    assert {g.node(c, p): _norm(v) for (c, p), v in nd.items()} == {
        k: _norm(v) for k, v in py.dist.items()
    }
    # Per-cell best times agree whichever engine found them.
    for cell in py.cells():
        assert _norm(py.ticks(cell)) == _norm(sp.ticks(cell))


def test_update_cells_patches_the_compiled_graph() -> None:
    m = model_from(["......", "......", "......"])
    g = MovementGraph(m, GENERIC, GENERIC.token("speed=10"), "walk")
    g.csr()
    g.to_networkx()
    m.with_terrain([(2, 0), (2, 1)], {"cost": 3.0, "name": "mud"})
    g.update_cells([(2, 0), (2, 1)])
    fresh = MovementGraph(m, GENERIC, GENERIC.token("speed=10"), "walk")
    assert (g.csr() != fresh.csr()).nnz == 0
    a = nx.single_source_dijkstra_path_length(g.to_networkx(), ((0, 0), 0), weight="ticks")
    b = nx.single_source_dijkstra_path_length(fresh.to_networkx(), ((0, 0), 0), weight="ticks")
    assert a == b


# --------------------------------------------------------------------------- risk


class RiskySwim(type(GENERIC)):  # type: ignore[misc]
    """A test-only system: water asks a check that succeeds half the time."""

    name = "risky"

    def cell_check(self, token, terrain, pace=None):
        if terrain.move == "swim":
            return CellCheck("swim", "coin", Fraction(1, 2))
        return None


def test_safe_path_and_pareto() -> None:
    # Straight through the water is quick; the dry way round is twice as long.
    rows = [
        ".~~~.",
        ".###.",
        ".....",
    ]
    system = RiskySwim()
    g = MovementGraph(model_from(rows, diagonals="none"), system, system.token("speed=20"), "walk")
    fast = path_json(find_path(g, (0, 0), (4, 0), prefer="fast"))
    safe = path_json(find_path(g, (0, 0), (4, 0), prefer="safe"))
    assert fast["p_no_failure"] == 0.5 and fast["turns"] == 1.0
    assert safe["p_no_failure"] == 1.0 and safe["turns"] == 2.0
    assert [p["turns"] for p in fast["pareto"]] == [1.0, 2.0]
    checks = [s["check"] for s in fast["steps"] if s["check"]]
    assert len(checks) == 1  # one check for the whole run of water in one turn
    slow = MovementGraph(g.model, system, system.token("speed=10"), "walk")
    # At half the speed the same water run spans two turns: a new move, a new check.
    assert path_json(find_path(slow, (0, 0), (4, 0)))["p_no_failure"] == 0.25


# --------------------------------------------------------------------------- commands


def test_path_and_reach_commands(tmp_path: Path, capsys) -> None:
    p = tmxtext.write(tmp_path / "m.tmx", ["....", ".##.", "...."])
    assert (
        main(
            [
                "path",
                str(p),
                "--system",
                "generic",
                "--token",
                "speed=10",
                "--from",
                "0,0",
                "--to",
                "3,2",
                "--json",
            ]
        )
        == 0
    )
    doc = json.loads(capsys.readouterr().out)
    assert {"system", "cells", "distance", "unit", "turns", "steps", "p_no_failure"} <= set(doc)
    assert doc["cells"][0] == [0, 0] and doc["cells"][-1] == [3, 2]
    assert all({"cell", "mode", "turns", "check"} <= set(s) for s in doc["steps"])
    assert (
        main(["path", str(p), "--system", "generic", "--from", "0,0", "--to", "1,1", "--json"]) == 1
    )
    doc = json.loads(capsys.readouterr().out)
    assert doc["cells"] == [] and "blocked" in doc["reason"]
    assert (
        main(
            [
                "reach",
                str(p),
                "--system",
                "generic",
                "--token",
                "speed=5",
                "--from",
                "0,0",
                "--json",
            ]
        )
        == 0
    )
    doc = json.loads(capsys.readouterr().out)
    # the token's pace by default (generic: walk, as `path`): 5 ft = 1 cell
    assert doc["pace"] == "walk"
    assert {tuple(c["cell"]) for c in doc["cells"]} == {(0, 0), (1, 0), (0, 1)}
    reach_args = ["reach", str(p), "--system", "generic", "--token", "speed=5", "--from", "0,0"]
    assert main([*reach_args, "--pace", "dash", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    # dash: 10 ft = 2 cells; (1,2) is one step and one first diagonal; walk's cells band walk
    assert {tuple(c["cell"]) for c in doc["cells"] if c["band"] == "walk"} == {
        (0, 0),
        (1, 0),
        (0, 1),
    }
    assert {tuple(c["cell"]) for c in doc["cells"]} == {
        (0, 0),
        (1, 0),
        (0, 1),
        (2, 0),
        (0, 2),
        (1, 2),
    }
    assert main(["path", str(p), "--system", "generic", "--from", "0,0", "--to", "3,2"]) == 0
    text = capsys.readouterr().out
    assert "S" in text and "G" in text and "turn" in text


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["--from", "9,9", "--to", "0,0"], "outside the map"),
        (["--from", "a,b", "--to", "0,0"], "expected a cell as col,row"),
        (["--from", "0,0", "--to", "1,0", "--pace", "fly"], "paces are"),
    ],
)
def test_path_bad_arguments(tmp_path: Path, capsys, args, expected) -> None:
    p = tmxtext.write(tmp_path / "m.tmx", ["...."])
    assert main(["path", str(p), "--system", "generic", *args]) == 2
    out, err = capsys.readouterr()
    assert out == "" and expected in err and err.count("\n") == 1


def test_search_errors_name_a_role_and_the_command_line_its_flag(tmp_path: Path, capsys) -> None:
    """The search's argument errors say which argument (a role) without a command-line
    flag; the command line prints the role as its flag (--from, --to), as it always has."""
    from engine.errors import ArgumentError
    from engine.search import parse_cell

    g = graph(["...."])
    cases = [
        (lambda: path_json(find_path(g, (9, 9), (0, 0))), "start", "start 9,9: outside the map"),
        (lambda: path_json(find_path(g, (0, 0), (0, 5))), "goal", "goal 0,5: outside the map"),
        (
            lambda: path_json(find_path(g, (0, 0), (1, 0), prefer="slow")),
            "prefer",
            "prefer slow: expected",
        ),
        (
            lambda: reach_dict(reach({"walk": g}, "walk", (0, 0), turns=0)),
            "turns",
            "turns 0: expected",
        ),
        (lambda: parse_cell("a,b", "goal"), "goal", "goal 'a,b': expected a cell as col,row"),
    ]
    for call, role, message in cases:
        with pytest.raises(ArgumentError) as err:
            call()
        assert err.value.role == role and str(err.value).startswith(message)
        assert "--" not in str(err.value)
        kept = pickle.loads(pickle.dumps(err.value))  # as a batch worker's error arrives
        assert (kept.role, str(kept)) == (role, str(err.value))
    p = tmxtext.write(tmp_path / "m.tmx", ["...."])
    for args, line in [
        (["--from", "9,9", "--to", "0,0"], "tacgrid: --from 9,9: outside the map (4 x 1 cells;"),
        (["--from", "0,0", "--to", "0,7"], "tacgrid: --to 0,7: outside the map (4 x 1 cells;"),
        (["--from", "0,0", "--to", "b"], "tacgrid: --to 'b': expected a cell as col,row such"),
    ]:
        assert main(["path", str(p), "--system", "generic", *args]) == 2
        assert capsys.readouterr().err.startswith(line)


def test_shipped_map_paths() -> None:
    m = load_map("maps/encounter.tmx")
    g = MovementGraph(m, GENERIC, GENERIC.token("speed=30"), "walk")
    rep = path_json(find_path(g, (0, 0), (39, 29)))
    assert rep["turns"] == 9.0 and rep["distance"] == 270


def test_climbs_go_as_far_as_the_cliff_is_high() -> None:
    # tmxtext's cliff is 10 ft high: two 5-ft cells of climbing at speed 10 = 1 turn.
    g = graph([".^."], diagonals="none")
    rep = path_json(find_path(g, (0, 0), (2, 0)))
    assert [s["time"] for s in rep["steps"]] == [0.0, 0.5 * 2, 0.5]
