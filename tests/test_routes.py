"""Routes through waypoints (``path --via``, ``Query.path(via=)``): the best way of each leg,
priced as one plan."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest
import tmxtext

from engine import api
from engine.cli import main
from engine.query import Query
from engine.search import NoPath, evaluate_path
from engine.tiled import load_map

ROWS = [
    "..........",
    ".,,,....#.",
    ".,,,....#.",
    "......###.",
    "..........",
]


def test_via_is_the_sum_of_its_legs_where_no_state_carries(tmp_path: Path, capsys) -> None:
    """On a map without a diagonal count (no state a move carries), a route through
    waypoints costs what its legs cost apart, and is their cells joined."""
    p = tmxtext.write(tmp_path / "m.tmx", ROWS, properties={"diagonals": "none"})
    points = [(0, 0), (9, 0), (2, 4), (9, 4)]
    args = ["path", str(p), "--system", "generic", "--token", "speed=30", "--json"]
    assert main([*args, "--from", "0,0", "--to", "9,4", "--via", "9,0", "--via", "2,4"]) == 0
    route = json.loads(capsys.readouterr().out)
    legs = []
    for a, b in zip(points[:-1], points[1:], strict=True):
        assert main([*args, "--from", f"{a[0]},{a[1]}", "--to", f"{b[0]},{b[1]}"]) == 0
        legs.append(json.loads(capsys.readouterr().out))
    from fractions import Fraction

    assert Fraction(route["turns_exact"]) == sum(Fraction(g["turns_exact"]) for g in legs)
    assert route["distance"] == sum(g["distance"] for g in legs)
    joined = legs[0]["cells"] + [c for g in legs[1:] for c in g["cells"][1:]]
    assert route["cells"] == joined
    assert [(g["from"], g["to"]) for g in route["legs"]] == [
        (list(a), list(b)) for a, b in zip(points[:-1], points[1:], strict=True)
    ]
    for mine, alone in zip(route["legs"], legs, strict=True):
        assert mine["turns"] == pytest.approx(alone["turns"], abs=1e-12)
        assert route["cells"][mine["step"]] == mine["to"]


def test_plain_path_json_has_no_legs(tmp_path: Path, capsys) -> None:
    p = tmxtext.write(tmp_path / "m.tmx", ROWS)
    assert (
        main(["path", str(p), "--system", "generic", "--from", "0,0", "--to", "9,4", "--json"]) == 0
    )
    assert "legs" not in json.loads(capsys.readouterr().out)


def test_state_carries_from_leg_to_leg(tmp_path: Path) -> None:
    """With 5-10-5 diagonals the second diagonal costs two cells even when a waypoint lies
    between: the second leg starts with the count the first ended with, not fresh."""
    p = tmxtext.write(tmp_path / "m.tmx", ROWS, properties={"diagonals": "alternate"})
    rules = api.system("generic")
    q = Query(load_map(str(p)), rules, rules.token({"speed": 30}))
    route = q.path((0, 0), (2, 2), via=[(1, 1)])
    alone = [q.path((0, 0), (1, 1)), q.path((1, 1), (2, 2))]
    assert route.distance_cells == 3 and sum(a.distance_cells for a in alone) == 2
    assert route.turns > sum(a.turns for a in alone)
    assert route.turns == evaluate_path(q.graph(), [(0, 0), (1, 1), (2, 2)]).turns


def _walk(model, rng: random.Random, start, n: int) -> list:
    """A self-avoiding random walk of passable cells (each step to a neighbour)."""
    grid = model.grid
    cells = [start]
    while len(cells) < n:
        c = cells[-1]
        nxt = [
            (c[0] + dc, c[1] + dr)
            for dc, dr, _ in grid.offsets(grid.parity(c))
            if grid.in_bounds((c[0] + dc, c[1] + dr))
            and (c[0] + dc, c[1] + dr) not in cells
            and model.terrain_at((c[0] + dc, c[1] + dr)).move != "blocked"
        ]
        if not nxt:
            break
        cells.append(rng.choice(nxt))
    return cells


@pytest.mark.parametrize("system", ["whisperspace", "generic", "d6", "mythmaster"])
@pytest.mark.parametrize("name", ["encounter.tmx", "hex_pointy.tmx"])
def test_a_route_through_every_cell_prices_that_route(system: str, name: str) -> None:
    """A route whose waypoints are all its cells is that route, priced exactly as the
    route alone (evaluate_path): cells, steps, turns, checks and odds."""
    from conftest import ROOT

    model = load_map(str(ROOT / "maps" / name))
    rules = api.system(system)
    token = rules.token({})
    q = Query(model, rules, token)
    rng = random.Random(f"{system}{name}")
    checked = 0
    for _ in range(6):
        start = (rng.randrange(model.grid.width), rng.randrange(model.grid.height))
        if model.terrain_at(start).move == "blocked":
            continue
        cells = _walk(model, rng, start, 25)
        if len(cells) < 3:
            continue
        try:
            alone = evaluate_path(q.graph(None, start), cells)
        except NoPath:
            continue
        route = q.path(cells[0], cells[-1], via=cells[1:-1])
        assert route.cells == tuple(cells)
        assert route.turns == alone.turns
        assert route.p_no_failure == alone.p_no_failure
        assert route.steps == alone.steps
        assert len(route.legs) == len(cells) - 1
        assert sum(g.turns for g in route.legs) == pytest.approx(float(alone.turns))
        checked += 1
    assert checked >= 2


def test_via_off_the_map_names_the_flag(tmp_path: Path, capsys) -> None:
    p = tmxtext.write(tmp_path / "m.tmx", ROWS)
    args = ["path", str(p), "--system", "generic", "--from", "0,0", "--to", "1,1"]
    assert main([*args, "--via", "99,3"]) == 2
    out, err = capsys.readouterr()
    assert out == "" and "--via 99,3" in err and err.count("\n") == 1
    assert main([*args, "--via", "x"]) == 2
    assert "--via" in capsys.readouterr().err


def test_context_via(tmp_path: Path) -> None:
    p = tmxtext.write(tmp_path / "m.tmx", ROWS)
    rules = api.system("generic")
    ctx = api.Context(str(p), rules, rules.token({"speed": 30}))
    doc = ctx.path((0, 0), (9, 4), via=[(9, 0)])
    assert [g["to"] for g in doc["legs"]] == [[9, 0], [9, 4]]
    assert doc == api.path(
        ctx.model, rules, rules.token({"speed": 30}), (0, 0), (9, 4), via=[(9, 0)]
    )


def test_a_leg_without_a_way_is_named(tmp_path: Path, capsys) -> None:
    p = tmxtext.write(tmp_path / "m.tmx", ["..#..", "..#..", "..#.."])
    args = ["path", str(p), "--system", "generic", "--from", "0,0", "--to", "1,2", "--json"]
    assert main([*args, "--via", "4,0"]) == 1
    doc = json.loads(capsys.readouterr().out)
    assert doc["cells"] == [] and doc["reason"].startswith("leg 0,0 -> 4,0:")


def test_via_text_lists_the_legs(tmp_path: Path, capsys) -> None:
    p = tmxtext.write(tmp_path / "m.tmx", ROWS)
    args = ["path", str(p), "--system", "generic", "--from", "0,0", "--to", "9,4"]
    assert main([*args, "--via", "9,0"]) == 0
    text = capsys.readouterr().out
    assert "leg 0,0 -> 9,0:" in text and "leg 9,0 -> 9,4:" in text
