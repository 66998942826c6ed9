"""Walls, doors, windows, the corners rule and additive costs (MAP-FORMAT.md; issue 23).

Maps are drawn as text (tests/tmxtext.py) with walls as Tiled polyline objects, read by the
real reader, and asked through the command line or the search, on square, hex (both
orientations), staggered and isometric grids. Expected figures are counted by hand on the
drawings: the generic system at ``speed=10`` walks 2 cells a turn on 5-ft cells, so a path's
``distance_cells`` and its turns are easy to check.
"""

from __future__ import annotations

import json
import math
import random
from pathlib import Path
from typing import Any

import pytest
import tmxtext
from hypothesis import given, settings
from hypothesis import strategies as st
from wallmaps import random_walled_model

from engine import systems
from engine.cli import main
from engine.errors import MapError
from engine.grid import Grid
from engine.mapmodel import MapModel, Terrain
from engine.movement import MovementGraph
from engine.search import compiled_field, dijkstra
from engine.tiled import load_map
from engine.walls import blocked_step, step_blocks, with_doors

GENERIC = systems.create("generic")
T = 32  # tile size of the drawings


def polyline(oid: int, points: list[tuple[float, float]], cls: str = "wall", **props: Any) -> str:
    x0, y0 = points[0]
    rel = " ".join(f"{x - x0:g},{y - y0:g}" for x, y in points)
    inner = "".join(
        f'<property name="{k}" type="bool" value="{str(v).lower()}"/>'
        if isinstance(v, bool)
        else f'<property name="{k}" value="{v}"/>'
        for k, v in props.items()
    )
    body = f"<properties>{inner}</properties>" if inner else ""
    return (
        f'<object id="{oid}" name="{cls}{oid}" class="{cls}" x="{x0:g}" y="{y0:g}">'
        f'{body}<polyline points="{rel}"/></object>'
    )


def layer(*objects: str) -> str:
    return f'<objectgroup id="9" name="walls">{"".join(objects)}</objectgroup>'


def write_map(
    tmp_path: Path, rows: list[str], *objects: str, name: str = "m.tmx", **kw: Any
) -> str:
    path = tmp_path / name
    tmxtext.write(path, rows, objects=layer(*objects) if objects else "", **kw)
    return str(path)


def path_json(mapfile: str, a: str, b: str, capsys: Any, *extra: str) -> tuple[int, Any]:
    code = main(["path", mapfile, "--system", "generic", "--token", "speed=10",
                 "--from", a, "--to", b, "--json", *extra])  # fmt: skip
    return code, json.loads(capsys.readouterr().out)


def cells_of(doc: dict[str, Any]) -> list[tuple[int, int]]:
    return [tuple(c) for c in doc["cells"]]  # type: ignore[misc]


def graph_of(model: MapModel, speed: str = "10") -> MovementGraph:
    return MovementGraph(model, GENERIC, GENERIC.token(f"speed={speed}"), "walk")


ROOM = ["......"] * 5  # 6 x 5 open ground


# --------------------------------------------------------------------------- square


def test_a_wall_on_a_grid_line_sends_the_path_round_it(tmp_path: Path, capsys: Any) -> None:
    # A wall down x = 3 tiles from row 0 to row 4 (4 rows): the way round goes under it.
    m = write_map(tmp_path, ROOM, polyline(1, [(3 * T, 0), (3 * T, 4 * T)]),
                  properties={"diagonals": "none"})  # fmt: skip
    code, doc = path_json(m, "2,1", "3,1", capsys)
    assert code == 0
    # down 3 to row 4, across, up 3: 7 steps (a plain step across would be 1)
    assert doc["distance_cells"] == 7 and doc["turns_exact"] == "7/2"
    cells = cells_of(doc)
    for (c0, r0), (c1, r1) in zip(cells, cells[1:], strict=False):
        if {c0, c1} == {2, 3}:
            assert r0 == r1 == 4, cells


def test_a_wall_drawn_off_the_grid_line_blocks_the_same_steps(tmp_path: Path) -> None:
    """Unsnapped: between its ends the line wobbles 3 px either side of x = 96; the steps it
    stands in are those of the snapped wall (none along column 2 or 3 is cut). (Its ends
    count: a line running on past a corner crosses the diagonal through it.)"""
    snapped = load_map(write_map(tmp_path, ROOM, polyline(1, [(96, 0), (96, 128)]), name="a.tmx"))
    wobbly = load_map(
        write_map(
            tmp_path, ROOM, polyline(1, [(96, 0), (99, 40), (93, 90), (96, 128)]), name="b.tmx"
        )  # fmt: skip
    )
    a, b = step_blocks(snapped), step_blocks(wobbly)
    assert a is not None and b is not None
    assert a.tolist() == b.tolist()
    g = snapped.grid
    for r in range(4):
        assert blocked_step(g, a, (2, r), (3, r)) and blocked_step(g, a, (3, r), (2, r))
        assert not blocked_step(g, a, (2, r), (2, r + 1))
        assert not blocked_step(g, a, (3, r), (3, r + 1))
    assert not blocked_step(g, a, (2, 4), (3, 4))


def test_diagonal_round_the_end_of_a_wall_passes_unless_corners_block(
    tmp_path: Path, capsys: Any
) -> None:
    # The wall ends at the corner shared by (2,1), (3,1), (2,2), (3,2).
    wall = polyline(1, [(3 * T, 0), (3 * T, 2 * T)])
    m = write_map(tmp_path, ROOM, wall, properties={"diagonals": "equal"})
    code, doc = path_json(m, "2,1", "3,2", capsys)
    assert code == 0 and cells_of(doc) == [(2, 1), (3, 2)]  # round the wall's end
    strict = write_map(tmp_path, ROOM, wall, name="s.tmx",
                       properties={"diagonals": "equal", "corners": "block"})  # fmt: skip
    code, doc = path_json(strict, "2,1", "3,2", capsys)
    assert code == 0 and doc["distance_cells"] == 2  # down, then across under the wall
    assert cells_of(doc) == [(2, 1), (2, 2), (3, 2)]


def test_a_walled_corner_keeps_the_diagonal_out(tmp_path: Path) -> None:
    """An L of two walls meeting at a corner P closes both ways round P for the cell inside
    the L: its diagonal through P is blocked even with corners = pass; the diagonal that
    passes the L's outside corner is not."""
    # P = (96, 64): arms up (x = 96, y 0..64) and right (y = 64, x 96..192); (3,1) is inside.
    for name, objects in (
        ("one.tmx", [polyline(1, [(96, 0), (96, 64), (192, 64)])]),
        ("two.tmx", [polyline(1, [(96, 0), (96, 64)]), polyline(2, [(96, 64), (192, 64)])]),
    ):
        model = load_map(write_map(tmp_path, ROOM, *objects, name=name,
                                   properties={"diagonals": "equal"}))  # fmt: skip
        bits = step_blocks(model)
        g = model.grid
        assert blocked_step(g, bits, (3, 1), (2, 2)), name  # out of the L's inside
        assert blocked_step(g, bits, (2, 2), (3, 1)), name
        assert not blocked_step(g, bits, (2, 1), (3, 2)), name  # past its outer corner


def test_a_wall_crossing_a_corner_blocks_the_diagonal_across_it(tmp_path: Path) -> None:
    """A slanting wall through the corner P = (96, 64) (a cave wall, 2 down for 1 across)
    parts the cells on its two sides: both diagonals through P and the two side steps it
    cuts; the steps beside it are free."""
    model = load_map(write_map(tmp_path, ROOM, polyline(1, [(80, 32), (112, 96)]),
                               properties={"diagonals": "equal"}))  # fmt: skip
    bits = step_blocks(model)
    g = model.grid
    assert blocked_step(g, bits, (3, 1), (2, 2)) and blocked_step(g, bits, (2, 1), (3, 2))
    assert blocked_step(g, bits, (2, 1), (3, 1)) and blocked_step(g, bits, (2, 2), (3, 2))
    assert not blocked_step(g, bits, (2, 1), (2, 2)) and not blocked_step(g, bits, (3, 1), (3, 2))


def test_corners_block_refuses_a_diagonal_between_blocked_cells(
    tmp_path: Path, capsys: Any
) -> None:
    rows = ["....", ".#..", "..#.", "...."]
    m = write_map(tmp_path, rows, properties={"diagonals": "equal"})
    code, doc = path_json(m, "1,2", "2,1", capsys)
    assert code == 0 and cells_of(doc) == [(1, 2), (2, 1)]  # slips between them
    strict = write_map(tmp_path, rows, name="s.tmx",
                       properties={"diagonals": "equal", "corners": "block"})  # fmt: skip
    code, doc = path_json(strict, "1,2", "2,1", capsys)
    assert code == 0
    cells = cells_of(doc)
    assert (1, 2) in cells and (2, 1) in cells and len(cells) > 2
    for (c0, r0), (c1, r1) in zip(cells, cells[1:], strict=False):
        if abs(c1 - c0) == 1 and abs(r1 - r0) == 1:
            beside = {(c1, r0), (c0, r1)}
            assert not beside & {(1, 1), (2, 2)}, cells


def test_a_closed_room_has_no_way_in_and_a_window_is_a_wall(tmp_path: Path, capsys: Any) -> None:
    # A rectangle's outline (class wall) round cells (2..3, 1..2); a window on its left side.
    rect = '<object id="1" class="wall" x="64" y="32" width="64" height="64"/>'
    m = write_map(tmp_path, ROOM, rect)
    code, doc = path_json(m, "0,0", "2,1", capsys)
    assert code == 1 and doc["cells"] == []
    window = polyline(2, [(4 * T, 0), (4 * T, 5 * T)], cls="window")
    m2 = write_map(tmp_path, ROOM, window, name="w.tmx", properties={"diagonals": "none"})
    code, doc = path_json(m2, "3,2", "4,2", capsys)
    assert code == 1


def test_doors_closed_open_and_toggled(tmp_path: Path, capsys: Any) -> None:
    # A wall down x = 3 with a door in it at row 2.
    objs = [
        polyline(1, [(96, 0), (96, 64)]),
        polyline(2, [(96, 64), (96, 96)], cls="door"),
        polyline(3, [(96, 96), (96, 160)]),
    ]
    m = write_map(tmp_path, ROOM, *objs, properties={"diagonals": "none"})
    code, doc = path_json(m, "2,2", "3,2", capsys)
    assert code == 1  # closed by default
    opened = [*objs[:1], polyline(2, [(96, 64), (96, 96)], cls="door", open=True), objs[2]]
    m2 = write_map(tmp_path, ROOM, *opened, name="o.tmx", properties={"diagonals": "none"})
    code, doc = path_json(m2, "2,2", "3,2", capsys)
    assert code == 0 and cells_of(doc) == [(2, 2), (3, 2)]
    model = load_map(m)
    door = next(w for w in model.walls if w.kind == "door")
    assert door.id == 2 and not door.open and door.name == "door2"
    g = model.grid
    assert blocked_step(g, step_blocks(model), (2, 2), (3, 2))
    open_model = with_doors(model, {2: True})
    assert open_model is not model and not blocked_step(g, step_blocks(open_model), (2, 2), (3, 2))
    assert blocked_step(g, step_blocks(open_model), (2, 1), (3, 1))
    assert with_doors(model, {2: False}) is model  # nothing changes
    with pytest.raises(MapError, match="door 1: no such door"):
        with_doors(model, {1: True})


# --------------------------------------------------------------------------- other grids


def _shared_side(grid: Grid, a: tuple[int, int], b: tuple[int, int]) -> list[tuple[float, float]]:
    """The two corners cells a and b share (their common side), from Tiled's outlines."""
    ca = {(round(x, 6), round(y, 6)) for x, y in grid.cell_corners(a)}
    shared = [p for p in grid.cell_corners(b) if (round(p[0], 6), round(p[1], 6)) in ca]
    assert len(shared) == 2, (a, b, shared)
    return shared


@pytest.mark.parametrize(
    ("orientation", "stagger", "tile", "side"),
    [
        ("hexagonal", ("y", "odd"), (28, 32), 16),  # pointy-top
        ("hexagonal", ("x", "even"), (32, 28), 16),  # flat-top
        ("hexagonal", ("y", "even"), (28, 32), 16),
        ("hexagonal", ("x", "odd"), (32, 28), 16),
        ("staggered", ("y", "odd"), (64, 32), 0),
    ],
)
def test_a_wall_on_one_side_blocks_that_step_only(
    tmp_path: Path, orientation: str, stagger: tuple[str, str], tile: tuple[int, int], side: int
) -> None:
    rows = ["......"] * 6
    probe = Grid(orientation, 6, 6, tile[0], tile[1], stagger[0], stagger[1], side)
    a = (2, 2)
    for b in probe.neighbours(a):
        if orientation == "staggered" and b not in [
            (a[0] + dc, a[1] + dr) for dc, dr, d in probe.offsets(probe.parity(a)) if not d
        ]:
            continue
        p, q = _shared_side(probe, a, b)
        wall = polyline(1, [p, q])
        model = load_map(write_map(tmp_path, rows, wall, orientation=orientation, tile=tile,
                                   hexside=side, stagger=stagger, name=f"{b}.tmx"))  # fmt: skip
        g = model.grid
        bits = step_blocks(model)
        assert blocked_step(g, bits, a, b) and blocked_step(g, bits, b, a)
        # every other step of both cells is free
        for x in (a, b):
            for y in g.neighbours(x):
                if {x, y} != {a, b}:
                    assert not blocked_step(g, bits, x, y), (orientation, a, b, x, y)
        # and the search goes round: more than one step from a to b
        graph = graph_of(model)
        tree = dijkstra(graph, a)
        assert tree.turns(b) > graph.turns(graph.ticks_of(b))
        # the same line as a door: shut it blocks that step, open it does not
        for is_open in (False, True):
            door = polyline(1, [p, q], cls="door", open=is_open)
            dm = load_map(write_map(tmp_path, rows, door, orientation=orientation, tile=tile,
                                    hexside=side, stagger=stagger, name=f"d{b}{is_open}.tmx"))  # fmt: skip
            assert blocked_step(g, step_blocks(dm), a, b) is not is_open


def test_isometric_walls_are_read_in_tiled_object_space(tmp_path: Path) -> None:
    """Isometric maps keep objects unprojected (a tile is tile_height square): a line at
    object x = 2 tiles is the edge between columns 1 and 2."""
    rows = ["....."] * 4
    wall = polyline(1, [(2 * 32, 0), (2 * 32, 4 * 32)])
    model = load_map(write_map(tmp_path, rows, wall, orientation="isometric", tile=(64, 32),
                               properties={"diagonals": "none"}))  # fmt: skip
    g = model.grid
    bits = step_blocks(model)
    for r in range(4):
        assert blocked_step(g, bits, (1, r), (2, r))
        assert not blocked_step(g, bits, (2, r), (3, r))
        assert not blocked_step(g, bits, (1, r), (1, min(3, r + 1))) or r == 3


# --------------------------------------------------------------------------- additive costs


def test_cost_add_on_alternate_diagonals_is_pf2e_difficult_terrain(
    tmp_path: Path, capsys: Any
) -> None:
    """Two diagonal steps into +5 ft squares: 5 + 5, then 10 + 5 = 25 ft (PF2e)."""
    m = write_map(tmp_path, ["+++", "+++", "+++"])
    code = main(["path", m, "--system", "generic", "--token", "speed=25", "--from", "0,0",
                 "--to", "2,2", "--json"])  # fmt: skip
    doc = json.loads(capsys.readouterr().out)
    assert code == 0 and cells_of(doc) == [(0, 0), (1, 1), (2, 2)]
    assert doc["turns_exact"] == 1  # 25 ft at 25 ft a turn
    assert [s["time"] for s in doc["steps"][1:]] == [0.4, 0.6]  # 10 ft, then 15 ft
    assert doc["distance_cells"] == 3  # the distance itself is 5 + 10 ft


def test_cost_add_after_cost_and_on_hex(tmp_path: Path) -> None:
    # cost 2 and cost_add 1 on one cell: entering it straight is 1 x 2 + 1 = 3 cells.
    grid = Grid("orthogonal", 3, 1, 32, 32, diagonals="none")
    import numpy as np

    both = Terrain(name="bog", cost=2.0, cost_add=1.0)
    m = MapModel(grid=grid, terrain_ids=np.array([[0, 1, 0]], dtype=np.int32),
                 terrains=(Terrain(), both))  # fmt: skip
    g = graph_of(m)  # 2 cells a turn
    assert g.turns(g.ticks_of((1, 0))) == pytest.approx(1.5)
    tree = dijkstra(g, (0, 0))
    assert tree.turns((2, 0)) == 2  # 3 cells + 1 cell
    hexgrid = Grid("hexagonal", 3, 3, 28, 32, "y", "odd", 16)
    hm = MapModel(grid=hexgrid, terrain_ids=np.ones((3, 3), dtype=np.int32),
                  terrains=(Terrain(), Terrain(name="mud", cost_add=1.0)))  # fmt: skip
    hg = graph_of(hm)
    assert dijkstra(hg, (1, 1)).turns((2, 1)) == 1  # 1 + 1 cells at 2 a turn


def test_bad_wall_objects_and_properties_are_one_line(tmp_path: Path, capsys: Any) -> None:
    point = '<object id="1" class="wall" x="10" y="10"><point/></object>'
    bad_door = polyline(1, [(96, 0), (96, 64)], cls="door", open="maybe")
    for name, rows, objs, props, want in (
        ("p.tmx", ROOM, [point], None, "with no length"),
        ("d.tmx", ROOM, [bad_door], None, "open="),
        ("c.tmx", ROOM, [], {"corners": "sometimes"}, "corners='sometimes'"),
        ("a.tmx", ["+"], [], None, None),
    ):
        m = write_map(tmp_path, rows, *objs, name=name, properties=props)
        code = main(["info", m])
        cap = capsys.readouterr()
        if want is None:
            assert code == 0
            continue
        assert code == 2 and cap.out == "", cap
        assert "\n" not in cap.err.strip() and want in cap.err and m in cap.err, cap.err
    bad_add = tmp_path / "ca.tmx"
    bad_add.write_text(
        tmxtext.tmx(["."]).replace(
            '<property name="move" value="walk"/>',
            '<property name="move" value="walk"/><property name="cost_add" value="-1"/>',
            1,
        ),
        encoding="utf-8",
    )
    assert main(["info", str(bad_add)]) == 2
    assert "cost_add='-1'" in capsys.readouterr().err


def test_walls_too_long_to_read_are_refused_quickly(tmp_path: Path, capsys: Any) -> None:
    # 4000 lines each across the whole 1000 x 1000 map: ~4 million cells of wall.
    rows_xml = "".join(
        polyline(i + 1, [(0, 32 * (i % 1000) + 7), (32000, 32 * (i % 1000) + 9)])
        for i in range(4000)
    )
    path = tmp_path / "big.tmx"
    path.write_text(tmxtext.tmx(["." * 1000] * 1000, objects=layer(rows_xml)), encoding="utf-8")
    code = main(["info", str(path)])
    err = capsys.readouterr().err
    assert code == 2 and "walls run" in err and "\n" not in err.strip(), err


# --------------------------------------------------------------------------- engines agree


@settings(max_examples=40, deadline=None)
@given(
    st.sampled_from(["square-alt", "square-equal", "hex", "staggered"]),
    st.integers(0, 2**31 - 1),
)
def test_python_compiled_and_networkx_agree_with_walls(kind: str, seed: int) -> None:
    import networkx as nx

    rnd = random.Random(seed)
    terrains = (Terrain(), Terrain(name="rough", cost=2.0), Terrain(name="brush", cost_add=1.0))
    model = random_walled_model(kind, rnd, terrains, [0, 0, 0, 1, 2])
    grid = model.grid
    g = graph_of(model)
    start = (rnd.randrange(model.width), rnd.randrange(model.height))
    py = dijkstra(g, start)
    comp = compiled_field(g, start)
    nxg = g.to_networkx()
    src = g.nx_label(g.node(start))
    lengths = nx.single_source_dijkstra_path_length(nxg, src, weight="ticks")
    for cell in grid.cells():
        a = py.ticks(cell)
        b = comp.ticks(cell)
        a = math.inf if a is None else a
        b = math.inf if b is None else b
        best = [v for k, v in lengths.items() if k[0] == cell]
        c = min(best) if best else math.inf
        assert (a, b) == (b, c) or (math.isclose(a, b) and math.isclose(b, c)), (cell, a, b, c)
    # no search crosses a wall: every step of every tree is an edge the walls allow
    bits = step_blocks(model)
    for node, parent in py.prev.items():
        u, v = g.cell_of(parent), g.cell_of(node)
        if u != v:
            assert not blocked_step(grid, bits, u, v)


# --------------------------------------------------------------------------- tokens and play


def test_a_large_token_cannot_straddle_or_squeeze_past_a_wall(tmp_path: Path, capsys: Any) -> None:
    """A wall down x = 3 over rows 0..2; a 2x2 token anchored at (1,0) heading for (3,0):
    anchors (2,0), (2,1), (2,2) would put the token across the wall, so it goes down to
    anchor row 3 (its footprint on rows 3-4, under the wall), across and back up."""
    m = write_map(tmp_path, ROOM, polyline(1, [(96, 0), (96, 96)]),
                  properties={"diagonals": "none"})  # fmt: skip
    code, doc = path_json(m, "1,0", "3,0", capsys, "--size", "2")
    assert code == 0
    assert cells_of(doc) == [(1, 0), (1, 1), (1, 2), (1, 3), (2, 3), (3, 3), (3, 2), (3, 1), (3, 0)]
    assert doc["distance_cells"] == 8
    # a 1x1 token goes round the wall's end: 3 down, 1 across, 3 up
    code, doc = path_json(m, "2,0", "3,0", capsys)
    assert code == 0 and doc["distance_cells"] == 7


def test_doors_in_play_are_events_that_undo_and_reach_the_policies(tmp_path: Path) -> None:
    from engine.scenario import load_scenario
    from engine.sim import Simulation

    objs = [
        polyline(1, [(96, 0), (96, 64)]),
        polyline(2, [(96, 64), (96, 96)], cls="door"),
        polyline(3, [(96, 96), (96, 160)]),
    ]
    write_map(tmp_path, ROOM, *objs, properties={"diagonals": "none"})
    scen = tmp_path / "s.yaml"
    scen.write_text(
        "map: m.tmx\nsystem: generic\nturns: 3\n"
        "tokens:\n  - {id: w, policy: waypoints, cell: [1, 2], waypoints: [[4, 2]],"
        " stats: {speed: 30}}\n",
        encoding="utf-8",
    )
    sc = load_scenario(str(scen))
    shut = Simulation(sc, 1)
    shut.play_turn()
    assert shut.tokens["w"].state.cell != (4, 2)  # 3 cells a turn: the door is shut
    sim = Simulation(sc, 1)
    before = sim.snapshot()
    assert not sim.door_open(2)
    sim.set_door(2, True)
    assert sim.door_open(2) and sim.events[-1] == {
        "type": "door", "door": 2, "name": "door2", "open": True
    }  # fmt: skip
    sim.play_turn()
    assert sim.tokens["w"].state.cell == (4, 2)  # straight through the open door
    sim.restore(before)
    assert not sim.door_open(2) and sim.doors == {}
    assert sc.model.walls[1].open is False  # the scenario's map is never changed
    with pytest.raises(ValueError, match="door 1: no such door"):
        sim.set_door(1, True)


def test_no_jump_over_a_gap_through_a_wall(tmp_path: Path) -> None:
    """Speedpoints jumps gaps: a 2-m pit between two ledges is jumped, unless a wall stands
    across the line of the jump."""
    rows = ["..O..", "#####"]
    sp = systems.create("speedpoints")
    token = sp.token("running=6")

    def reach_ok(*objects: str, name: str) -> bool:
        model = load_map(write_map(tmp_path, rows, *objects, name=name,
                                   properties={"diagonals": "none"}))  # fmt: skip
        g = MovementGraph(model, sp, token, "run")
        return dijkstra(g, (0, 0)).ticks((4, 0)) is not None

    assert reach_ok(name="open.tmx")
    assert not reach_ok(polyline(1, [(96, 0), (96, 32)]), name="walled.tmx")


def test_a_tiled_json_map_reads_the_same_walls_doors_and_corners(tmp_path: Path) -> None:
    objs = [polyline(1, [(64, 0), (64, 64)]), polyline(2, [(64, 64), (64, 96)], cls="door")]
    tmx_model = load_map(write_map(tmp_path, ["....."] * 3, *objs, properties={"corners": "block"}))
    doc = {
        "type": "map", "version": "1.10", "orientation": "orthogonal",
        "renderorder": "right-down", "width": 5, "height": 3, "tilewidth": 32,
        "tileheight": 32, "infinite": False,
        "properties": [{"name": "corners", "type": "string", "value": "block"}],
        "tilesets": [{"firstgid": 1, "name": "t", "tilewidth": 32, "tileheight": 32,
                      "tilecount": 1, "columns": 1, "tiles": [{"id": 0, "type": "open"}]}],
        "layers": [
            {"type": "tilelayer", "id": 1, "name": "g", "width": 5, "height": 3, "x": 0,
             "y": 0, "opacity": 1, "visible": True, "data": [1] * 15},
            {"type": "objectgroup", "id": 9, "name": "walls", "opacity": 1, "visible": True,
             "x": 0, "y": 0, "objects": [
                 {"id": 1, "name": "wall1", "class": "wall", "x": 64, "y": 0, "width": 0,
                  "height": 0, "rotation": 0, "visible": True,
                  "polyline": [{"x": 0, "y": 0}, {"x": 0, "y": 64}]},
                 {"id": 2, "name": "door2", "class": "door", "x": 64, "y": 64, "width": 0,
                  "height": 0, "rotation": 0, "visible": True,
                  "polyline": [{"x": 0, "y": 0}, {"x": 0, "y": 32}]},
             ]},
        ],
        "nextlayerid": 10, "nextobjectid": 3,
    }  # fmt: skip
    path = tmp_path / "m.tmj"
    path.write_text(json.dumps(doc), encoding="utf-8")
    json_model = load_map(str(path))
    assert json_model.walls == tmx_model.walls and len(json_model.walls) == 2
    assert json_model.corners == tmx_model.corners == "block"
    assert step_blocks(json_model).tolist() == step_blocks(tmx_model).tolist()
