"""Tokens in the way and tokens larger than one cell (issue 23): enemies block, allies are
passed but not stopped on, ``settings.tokens_block`` changes who counts, and a size-k token
paths with its footprint (the slowest footprint cell sets the cost)."""

from __future__ import annotations

import heapq
import json
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest
import tmxtext

from engine import api, systems
from engine.cli import main
from engine.errors import ArgumentError, ScenarioError
from engine.eventlog import read_log, replay_states
from engine.footprint import MAX_SIZE, covering, dilate, footprint
from engine.grid import Grid
from engine.mapmodel import MapModel
from engine.occupancy import Other, gap_steps, occupancy, sized_model
from engine.scenario import load_scenario
from engine.search import NoPath
from engine.sim import FieldCache, Simulation

GENERIC = systems.create("generic")
TOKEN = GENERIC.token("speed=10")  # 2 cells (5 ft) a turn
COST = {".": 1, ",": 2}


def model_of(rows: list[str], orientation: str = "orthogonal", diagonals: str = "none") -> MapModel:
    from engine.mapmodel import Terrain

    table = {
        ".": Terrain(),
        ",": Terrain(name="rough", cost=2.0),
        "#": Terrain(name="wall", move="blocked"),
    }
    terrains = tuple(table.values())
    keys = list(table)
    ids = np.array([[keys.index(ch) for ch in row] for row in rows], dtype=np.int32)
    side = 16 if orientation == "hexagonal" else 0
    grid = Grid(orientation, len(rows[0]), len(rows), 32, 32, "y", "odd", side, diagonals)
    return MapModel(grid=grid, terrain_ids=ids, terrains=terrains)


def oracle_cells(rows: list[str], grid: Grid, start, goal, size: int) -> int | None:
    """An independent Dijkstra over anchors: an anchor is allowed when its whole footprint
    is on the map and open; a step costs its footprint's slowest cell (cells of time)."""

    def cost(a):
        cells = footprint(grid, a, size)
        if not all(grid.in_bounds(c) and rows[c[1]][c[0]] != "#" for c in cells):
            return None
        return max(COST[rows[c[1]][c[0]]] for c in cells)

    best = {start: 0}
    heap = [(0, start)]
    while heap:
        d, a = heapq.heappop(heap)
        if a == goal:
            return d
        if d > best[a]:
            continue
        for b in grid.neighbours(a):
            c = cost(b)
            if c is not None and d + c < best.get(b, 1 << 30):
                best[b] = d + c
                heapq.heappush(heap, (d + c, b))
    return None


# --------------------------------------------------------------------------- square

# A short corridor (row 1) and a longer way round (row 3), joined at both ends.
LOOP = [
    "#########",
    ".........",
    ".#######.",
    ".........",
    "#########",
]
CORRIDOR = ["#########", ".........", "#########"]


def test_an_enemy_in_a_corridor_blocks_square() -> None:
    m = model_of(LOOP)
    open_way = api.path(m, GENERIC, TOKEN, (0, 1), (8, 1))
    assert len(open_way["cells"]) - 1 == 8
    around = api.path(m, GENERIC, TOKEN, (0, 1), (8, 1), others=[Other((4, 1))])
    assert [4, 1] not in around["cells"] and len(around["cells"]) - 1 == 12
    assert Fraction(around["turns_exact"]) == Fraction(12, 2)
    with pytest.raises(NoPath):
        api.path(model_of(CORRIDOR), GENERIC, TOKEN, (0, 1), (8, 1), others=[Other((4, 1))])


def test_an_ally_is_passed_through_but_not_stopped_on_square() -> None:
    m = model_of(LOOP)
    ally = [Other((4, 1), enemy=False)]
    alone = api.path(m, GENERIC, TOKEN, (0, 1), (8, 1))
    through = api.path(m, GENERIC, TOKEN, (0, 1), (8, 1), others=ally)
    assert [4, 1] in through["cells"] and through["turns_exact"] == alone["turns_exact"]
    with pytest.raises(NoPath, match="pass through it but not stop"):
        api.path(m, GENERIC, TOKEN, (0, 1), (4, 1), others=ally)
    reach = api.reach(m, GENERIC, TOKEN, (0, 1), turns=4, others=ally)
    cells = {tuple(c["cell"]) for c in reach["cells"]}
    assert (4, 1) not in cells and (5, 1) in cells and (3, 1) in cells
    # `all`: allies block too; `none`: tokens are ignored.
    blocked = api.path(m, GENERIC, TOKEN, (0, 1), (8, 1), others=ally, tokens_block="all")
    assert [4, 1] not in blocked["cells"]
    ignored = api.path(
        m, GENERIC, TOKEN, (0, 1), (8, 1), others=[Other((4, 1))], tokens_block="none"
    )
    assert ignored["cells"] == alone["cells"]
    reach = api.reach(m, GENERIC, TOKEN, (0, 1), turns=4, others=ally, tokens_block="none")
    assert (4, 1) in {tuple(c["cell"]) for c in reach["cells"]}


def test_a_pursuers_quarry_never_blocks_it() -> None:
    g = Grid("orthogonal", 5, 5, 32, 32)
    occ = occupancy(g, 1, [Other((2, 2), quarry=True), Other((3, 3))], "enemies")
    assert occ.blocked == {(3, 3)} and not occ.no_stop


def test_a_2x2_token_cannot_pass_a_one_cell_gap() -> None:
    narrow = ["......", "......", "##.###", "......", "......"]
    wide = ["......", "......", "##..##", "......", "......"]
    m = model_of(narrow)
    assert api.path(m, GENERIC, TOKEN, (0, 0), (0, 3))["cells"][-1] == [0, 3]
    with pytest.raises(NoPath):
        api.path(m, GENERIC, TOKEN, (0, 0), (0, 3), size=2)
    through = api.path(model_of(wide), GENERIC, TOKEN, (0, 0), (0, 3), size=2)
    assert [2, 2] in through["cells"] or [2, 1] in through["cells"]
    # Its anchor is the top-left cell: on the last row it would leave the map.
    with pytest.raises(ArgumentError, match="leaves the map"):
        api.path(model_of(wide), GENERIC, TOKEN, (0, 4), (0, 0), size=2)


@pytest.mark.parametrize("size", [2, 3])
def test_a_large_tokens_cost_is_its_slowest_cell_square(size: int) -> None:
    rows = ["....,....", ".........", "..,......", ".........", ".....,..."]
    m = model_of(rows)
    got = api.path(m, GENERIC, TOKEN, (0, 0), (9 - size, 5 - size), size=size)
    cells = oracle_cells(rows, m.grid, (0, 0), (9 - size, 5 - size), size)
    assert cells is not None and Fraction(got["turns_exact"]) == Fraction(cells, 2)
    # Straight along the top with a rough column: each anchor touching it costs 2.
    band = ["....,....", "....,...."]
    straight = api.path(model_of(band), GENERIC, TOKEN, (0, 0), (7, 0), size=2)
    assert Fraction(straight["turns_exact"]) == Fraction(5 * 1 + 2 * 2, 2)
    single = api.path(model_of(band), GENERIC, TOKEN, (0, 0), (7, 0))
    assert Fraction(single["turns_exact"]) == Fraction(6 + 2, 2)


def test_sized_model_is_the_worst_under_every_footprint() -> None:
    rows = ["....,....", ".#.......", "..,....#.", ".........", ".....,..."]
    m = model_of(rows, diagonals="alternate")
    for size in (1, 2, 3):
        seen = sized_model(m, GENERIC, TOKEN, None, size)
        for cell in m.grid.cells():
            under = footprint(m.grid, cell, size)
            terrain = seen.terrain_at(cell)
            if not all(m.grid.in_bounds(c) for c in under):
                assert terrain.move == "blocked"
            elif any(rows[r][c] == "#" for c, r in under):
                assert terrain.move == "blocked"
            else:
                assert terrain.cost == max(COST[rows[r][c]] for c, r in under)


# --------------------------------------------------------------------------- hex

HEX_OPEN = ["." * 9] * 7


def test_hex_enemy_blocks_and_ally_is_passed() -> None:
    rows = ["#########", ".........", "#########"]
    m = model_of(rows, "hexagonal")
    assert api.path(m, GENERIC, TOKEN, (0, 1), (8, 1))["cells"][-1] == [8, 1]
    with pytest.raises(NoPath):
        api.path(m, GENERIC, TOKEN, (0, 1), (8, 1), others=[Other((4, 1))])
    ally = [Other((4, 1), enemy=False)]
    alone = api.path(m, GENERIC, TOKEN, (0, 1), (8, 1))
    through = api.path(m, GENERIC, TOKEN, (0, 1), (8, 1), others=ally)
    assert through["turns_exact"] == alone["turns_exact"] and [4, 1] in through["cells"]
    reach = api.reach(m, GENERIC, TOKEN, (0, 1), turns=5, others=ally)
    cells = {tuple(c["cell"]) for c in reach["cells"]}
    assert (4, 1) not in cells and (5, 1) in cells
    # An open hex map: an enemy is walked round, at one step more.
    m = model_of(HEX_OPEN, "hexagonal")
    direct = api.path(m, GENERIC, TOKEN, (1, 3), (7, 3))
    around = api.path(m, GENERIC, TOKEN, (1, 3), (7, 3), others=[Other((4, 3))])
    assert [4, 3] not in around["cells"] and len(around["cells"]) == len(direct["cells"]) + 1


def test_hex_size_2_is_seven_hexes_and_needs_a_wider_gap() -> None:
    g = model_of(HEX_OPEN, "hexagonal").grid
    fp = footprint(g, (4, 3), 2)
    assert len(fp) == 7 and set(fp) == {(4, 3), *g.neighbours((4, 3))}
    assert sorted(covering(g, (4, 3), 2)) == sorted(fp)
    narrow = [
        ".........",
        ".........",
        ".........",
        "####.####",
        ".........",
        ".........",
        ".........",
    ]
    wide = [
        ".........",
        ".........",
        ".........",
        "###...###",
        ".........",
        ".........",
        ".........",
    ]
    m = model_of(narrow, "hexagonal")
    assert api.path(m, GENERIC, TOKEN, (4, 1), (4, 5))["cells"][-1] == [4, 5]
    with pytest.raises(NoPath):
        api.path(m, GENERIC, TOKEN, (4, 1), (4, 5), size=2)
    got = api.path(model_of(wide, "hexagonal"), GENERIC, TOKEN, (4, 1), (4, 5), size=2)
    assert [4, 3] in got["cells"]


def test_hex_size_2_cost_is_its_slowest_hex() -> None:
    rows = [
        ".........",
        "...,.....",
        ".........",
        ".....,...",
        ".........",
        "..,......",
        ".........",
    ]
    m = model_of(rows, "hexagonal")
    for start, goal in (((1, 1), (7, 5)), ((1, 3), (7, 3)), ((7, 1), (1, 5))):
        got = api.path(m, GENERIC, TOKEN, start, goal, size=2)
        cells = oracle_cells(rows, m.grid, start, goal, 2)
        assert cells is not None and Fraction(got["turns_exact"]) == Fraction(cells, 2)
    seen = sized_model(m, GENERIC, TOKEN, None, 2)
    assert seen.terrain_at((5, 3)).name == "rough" and seen.terrain_at((4, 3)).name == "rough"
    assert seen.terrain_at((7, 1)).name == "open"
    assert seen.terrain_at((0, 0)).move == "blocked"  # its ring leaves the map


def test_dilate_matches_footprints_on_every_grid() -> None:
    grids = [
        Grid("orthogonal", 7, 6, 32, 32),
        Grid("isometric", 7, 6, 64, 32),
        Grid("staggered", 7, 8, 64, 32),
        Grid("staggered", 7, 8, 64, 32, "x", "even"),
        Grid("hexagonal", 9, 8, 32, 32, "y", "odd", 16),
        Grid("hexagonal", 9, 8, 32, 32, "x", "even", 16),
    ]
    rng = np.random.default_rng(23)
    for g in grids:
        vals = rng.integers(0, 50, size=(g.height, g.width))
        for k in (1, 2, 3):
            got = dilate(g, vals, k, 99)
            for cell in g.cells():
                fp = footprint(g, cell, k)
                want = 99 if not all(map(g.in_bounds, fp)) else max(vals[r, c] for c, r in fp)
                assert got[cell[1], cell[0]] == want
                assert all(cell in covering(g, x, k) for x in fp)


def test_capture_distance_between_footprints() -> None:
    g = Grid("orthogonal", 9, 9, 32, 32)
    assert gap_steps(g, (0, 0), 1, (3, 0), 1) == 3
    assert gap_steps(g, (0, 0), 2, (3, 0), 1) == 2
    assert gap_steps(g, (0, 0), 2, (1, 1), 1) == 0


# --------------------------------------------------------------------------- the turn loop

LOOP_TMX = [
    "............",
    "............",
    "............",
    "............",
]


def write(tmp_path: Path, text: str, rows: list[str]) -> Path:
    tmxtext.write(tmp_path / "m.tmx", rows, properties={"diagonals": "none"})
    p = tmp_path / "s.yaml"
    p.write_text(text)
    return p


CORRIDOR_TMX = ["############", "............", "#.########.#", "............", "############"]

ALLY = """
map: m.tmx
system: generic
turns: 3
settings: {tokens_block: SETTING}
tokens:
  - {id: w, side: party, policy: waypoints, cell: [0, 1], waypoints: [[8, 1]], stats: {speed: 20}}
  - {id: friend, side: party, policy: idle, cell: [4, 1]}
"""


def test_sim_allies_are_passed_not_stopped_on(tmp_path: Path) -> None:
    sc = load_scenario(write(tmp_path, ALLY.replace("SETTING", "enemies"), CORRIDOR_TMX))
    assert sc.tokens_block == "enemies"
    sim = Simulation(sc, 1)
    sim.play_turn()
    assert sim.tokens["w"].state.cell == (3, 1)  # 4 cells would end on the ally
    sim.play_turn()
    assert sim.tokens["w"].state.cell == (7, 1)  # through it
    # none: ends its first turn on the ally's cell; all: the ally is walked round.
    sim = Simulation(
        load_scenario(write(tmp_path, ALLY.replace("SETTING", "none"), CORRIDOR_TMX)), 1
    )
    sim.play_turn()
    assert sim.tokens["w"].state.cell == (4, 1)
    sim = Simulation(
        load_scenario(write(tmp_path, ALLY.replace("SETTING", "all"), CORRIDOR_TMX)), 1
    )
    sim.run()
    moves = [ev for ev in sim.events if ev["type"] == "move" and ev["token"] == "w"]
    assert moves and all([4, 1] not in ev["path"] for ev in moves)
    assert [1, 2] in moves[0]["path"]  # down and round along row 3


ENEMY = """
map: m.tmx
system: generic
turns: 8
tokens:
  - {id: w, side: party, policy: waypoints, cell: [0, 1], waypoints: [[11, 1]], stats: {speed: 20}}
  - {id: ogre, side: monsters, policy: idle, cell: [5, 1]}
"""


def test_sim_enemies_block_and_the_run_replays(tmp_path: Path) -> None:
    sc = load_scenario(write(tmp_path, ENEMY, CORRIDOR_TMX))
    sim = Simulation(sc, 4)
    sim.run()
    moves = [ev for ev in sim.events if ev["type"] == "move" and ev["token"] == "w"]
    assert sim.tokens["w"].state.cell == (11, 1)
    assert all([5, 1] not in ev["path"] for ev in moves)
    log = tmp_path / "run.jsonl"
    sim.write_log(str(log))
    states, outcome = replay_states(read_log(str(log)))
    assert (
        outcome == sim.outcome and {t: s.to_dict() for t, s in states.items()} == sim.final_states()
    )
    again = Simulation(sc, 4, fields=FieldCache(sc))
    again.run()
    assert again.events == sim.events
    # With the setting off the ogre is walked through.
    off = load_scenario(
        write(
            tmp_path,
            ENEMY.replace("turns: 8", "turns: 8\nsettings: {tokens_block: none}"),
            CORRIDOR_TMX,
        )
    )
    sim = Simulation(off, 4)
    sim.run()
    assert any([5, 1] in ev["path"] for ev in sim.events if ev["type"] == "move")


BIG = """
map: m.tmx
system: generic
turns: 6
tokens:
  - {id: ogre, policy: waypoints, size: SIZE, cell: [0, 0], waypoints: [[0, 4]], stats: {speed: 30}}
"""
GAP_TMX = ["......", "......", "#.####", "......", "......", "......"]


def test_sim_large_token_keeps_to_where_it_fits(tmp_path: Path) -> None:
    small = Simulation(load_scenario(write(tmp_path, BIG.replace("SIZE", "1"), GAP_TMX)), 1)
    small.run()
    assert small.tokens["ogre"].state.cell == (0, 4)
    big = Simulation(load_scenario(write(tmp_path, BIG.replace("SIZE", "2"), GAP_TMX)), 1)
    big.run()
    assert big.tokens["ogre"].state.cell == (0, 0)  # no 2-wide way through
    wide = ["......", "......", "#..###", "......", "......", "......"]
    big = Simulation(load_scenario(write(tmp_path, BIG.replace("SIZE", "2"), wide)), 1)
    big.run()
    assert big.tokens["ogre"].state.cell == (0, 4)
    moves = [ev for ev in big.events if ev["type"] == "move"]
    assert any([1, 2] in ev["path"] for ev in moves)


CHASE = """
map: m.tmx
system: generic
turns: 12
goals: {capture: 0}
tokens:
  - {id: q, policy: quarry, cell: [11, 3], stats: {speed: 5}}
  - {id: p1, side: pursuer, policy: pursuer, target: q, cell: [0, 0], stats: {speed: 20}}
  - {id: p2, side: pursuer, policy: pursuer, target: q, cell: [0, 3], stats: {speed: 20}}
  - {id: rock, side: terrain, policy: idle, cell: [6, 1], size: 2}
"""


def test_sim_pursuers_still_catch_with_tokens_in_the_way(tmp_path: Path) -> None:
    sc = load_scenario(write(tmp_path, CHASE, LOOP_TMX))
    rock = set(footprint(sc.model.grid, (6, 1), 2))
    for seed in range(3):
        sim = Simulation(sc, seed)
        while sim.outcome is None:
            sim.play_turn()
            p1, p2 = sim.tokens["p1"].state.cell, sim.tokens["p2"].state.cell
            # Allies never end a move on one cell (but on the quarry, the catch).
            assert p1 != p2 or p1 == sim.tokens["q"].state.cell
        assert sim.outcome == "capture"
        for ev in sim.events:
            if ev["type"] == "move":
                assert not rock & {tuple(c) for c in ev["path"]}


# --------------------------------------------------------------------------- errors


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        ("size: 0", "size: 0 is not a whole number from 1 to 10"),
        ("size: 11", "is not a whole number from 1 to"),
        ("size: two", "is not a whole number"),
        ("size: 3", "leaves the map"),
        ("settings", "settings.tokens_block: 'allies'"),
    ],
)
def test_bad_size_or_setting_is_one_line(
    tmp_path: Path, change: str, expected: str, capsys
) -> None:
    text = """
map: m.tmx
system: generic
tokens:
  - {id: a, cell: [10, 2], stats: {speed: 10}, SIZE}
"""
    if change == "settings":
        text = text.replace(", SIZE", "") + "settings: {tokens_block: allies}\n"
    else:
        text = text.replace("SIZE", change)
    p = write(tmp_path, text, LOOP_TMX)
    with pytest.raises(ScenarioError) as err:
        load_scenario(p)
    assert expected in str(err.value) and "\n" not in str(err.value)
    assert main(["run", str(p), "--out", str(tmp_path / "o")]) == 2
    _, errtext = capsys.readouterr()
    assert errtext.count("\n") == 1 and expected.split(":")[0] in errtext
    assert MAX_SIZE == 10


def test_cli_size_option(tmp_path: Path, capsys) -> None:
    tmxtext.write(tmp_path / "gap.tmx", ["......", "......", "##.###", "......", "......"])
    args = ["--system", "generic", "--token", "speed=10", "--from", "0,0", "--json"]
    assert main(["path", str(tmp_path / "gap.tmx"), *args, "--to", "0,3"]) == 0
    one = json.loads(capsys.readouterr().out)
    assert one["cells"][-1] == [0, 3]
    assert main(["path", str(tmp_path / "gap.tmx"), *args, "--to", "0,3", "--size", "2"]) == 1
    assert json.loads(capsys.readouterr().out)["cells"] == []
    assert main(["reach", str(tmp_path / "gap.tmx"), *args, "--turns", "9", "--size", "2"]) == 0
    cells = {tuple(c["cell"]) for c in json.loads(capsys.readouterr().out)["cells"]}
    assert cells == {(c, 0) for c in range(5)}  # an anchor on row 1 would cover the wall
    for bad in ("0", "11", "x"):
        assert main(["reach", str(tmp_path / "gap.tmx"), *args, "--size", bad]) == 2
        _, err = capsys.readouterr()
        assert err.count("\n") == 1 and "--size" in err
    assert (
        main(["reach", str(tmp_path / "gap.tmx"), *args[:-3], "--from", "5,4", "--size", "2"]) == 2
    )
    _, err = capsys.readouterr()
    assert err.count("\n") == 1 and "leaves the map" in err
