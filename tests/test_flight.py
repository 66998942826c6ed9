"""Flight as momentum (RULES.md 6): the rules turn by turn, and the planner against a brute
force and its own replays."""

from __future__ import annotations

import json
import random
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine import flight as F
from engine.errors import ArgumentError
from engine.flight import FlightChoice, FlightState, Geometry
from engine.grid import Grid
from engine.mapmodel import MapModel, Terrain
from engine.report.flight import fly_report, format_fly
from engine.search import NoPath
from engine.systems import create

MM = create("mythmaster")
SP = create("speedpoints")

# Text maps: one character a cell.
LEGEND = {
    ".": Terrain(),
    "#": Terrain(name="wall", move="blocked"),  # no height: blocks at any altitude
    "1": Terrain(name="fence", move="blocked", height=1.0),
    "2": Terrain(name="wall2", move="blocked", height=2.0),
    "h": Terrain(name="hut", move="walk", height=1.5),
    "a": Terrain(name="sky", move="air"),
    "~": Terrain(name="water", move="swim"),
}


def model(
    rows: list[str],
    orientation: str = "hexagonal",
    diagonals: str = "equal",
    stagger: tuple[str, str] = ("y", "odd"),
    **kwargs: object,
) -> MapModel:
    keys = list(LEGEND)
    ids = np.array([[keys.index(ch) for ch in row] for row in rows], dtype=np.int32)
    side = 16 if orientation == "hexagonal" else 0
    grid = Grid(
        orientation, len(rows[0]), len(rows), 32, 32, stagger[0], stagger[1], side, diagonals
    )
    return MapModel(grid=grid, terrain_ids=ids, terrains=tuple(LEGEND.values()), **kwargs)  # type: ignore[arg-type]


def open_map(w: int, h: int, **kw: object) -> MapModel:
    return model(["." * w] * h, **kw)  # type: ignore[arg-type]


def flier(spec: str = "adaptability=5", system=MM, m: MapModel | None = None):
    """Flight rules for a token (Mythmaster: flyer=true added; adaptability 5 = BM 2)."""
    if system is MM and "flyer" not in spec:
        spec += ",flyer=true"
    return system.flight(system.token(spec), m if m is not None else open_map(9, 9))


def walk(grid: Grid, cell, faces):
    out = []
    for f in faces:
        cell = grid.step_heading(cell, f)
        out.append(cell)
    return tuple(out)


# --------------------------------------------------------------------------- geometry


def test_headings_are_checked() -> None:
    hexes = Geometry(open_map(3, 3).grid)
    with pytest.raises(ArgumentError, match="expected a multiple of 30"):
        hexes.check_heading(45)
    assert hexes.check_heading(390) == 30 and hexes.check_heading("270") == 270
    with pytest.raises(ArgumentError, match="expected a multiple of 30"):
        hexes.check_heading(30.5)
    square = Geometry(open_map(3, 3, orientation="orthogonal").grid)
    with pytest.raises(ArgumentError, match="expected a multiple of 45"):
        square.check_heading(30)
    with pytest.raises(ArgumentError, match="multiple of 45"):
        square.check_heading("north")


def test_vertex_headings_alternate_starting_with_the_nearer_face() -> None:
    m = open_map(12, 12)
    rules = flier(m=m)
    g = m.grid
    # Flying east (90, a face), turn 90 left onto 0 (a vertex: faces 330 and 30): 30 is
    # nearer the previous heading, so it comes first, then they alternate.
    s = FlightState((6, 8), 90, 4)
    turn = FlightChoice(maintain=True, turns=((0, -90),))
    s2, rec = rules.step(s, turn)
    assert rec.actions == ("maintain", "turn", "turn")
    assert rec.cells == walk(g, (6, 8), [30, 330, 30, 330])
    assert (s2.heading, s2.face) == (0, 30)
    # Holding the vertex heading keeps alternating where it left off.
    _, rec2 = rules.step(s2, FlightChoice(maintain=True))
    assert rec2.cells == walk(g, rec.cells[-1], [30, 330, 30, 330])
    # From the west (270) the other face is the nearer one.
    _, rec3 = rules.step(FlightState((6, 8), 270, 4), FlightChoice(maintain=True, turns=((0, 90),)))
    assert rec3.cells == walk(g, (6, 8), [330, 30, 330, 30])
    # A turn of 180 from one vertex heading to the other (free for Speedpoints): both faces
    # are equally near the old heading; the one nearer the face crossed last comes first.
    sp = sp_rules("airspeed=2", m=m)
    last_30 = sp.start_state((6, 5), 0, 2, face=330)  # crossed 30 last, 330 next
    _, rec4 = sp.step(last_30, FlightChoice(turns=((0, 180),)))
    assert rec4.cells == walk(g, (6, 5), [150, 210])
    last_330 = sp.start_state((6, 5), 0, 2, face=30)
    _, rec5 = sp.step(last_330, FlightChoice(turns=((0, 180),)))
    assert rec5.cells == walk(g, (6, 5), [210, 150])


def test_square_maps_without_diagonals_alternate_edges() -> None:
    m = open_map(9, 9, orientation="orthogonal", diagonals="none")
    rules = flier(m=m)
    assert 45 in rules.geo.vertex_faces and rules.geo.vertex_faces[45] == (0, 90)
    _, rec = rules.step(FlightState((2, 6), 0, 4), FlightChoice(maintain=True, turns=((0, 45),)))
    assert rec.cells == ((2, 5), (3, 5), (3, 4), (4, 4))  # 0 first: nearer the old heading
    with_diagonals = flier(m=open_map(9, 9, orientation="orthogonal"))
    _, rec = with_diagonals.step(
        FlightState((2, 6), 0, 4), FlightChoice(maintain=True, turns=((0, 45),))
    )
    assert rec.cells == ((3, 5), (4, 4), (5, 3), (6, 2))


GRIDS = [
    ("hexagonal", "equal", ("y", "odd")),
    ("hexagonal", "equal", ("x", "even")),
    ("orthogonal", "equal", ("y", "odd")),
    ("orthogonal", "none", ("y", "odd")),
    ("isometric", "alternate", ("y", "odd")),
    ("staggered", "equal", ("x", "odd")),
    ("staggered", "none", ("y", "even")),
]


@settings(max_examples=150, deadline=None)
@given(
    st.sampled_from(GRIDS),
    st.integers(0, 11),
    st.integers(0, 11),
    st.integers(0, 15),
    st.integers(0, 1),
    st.integers(0, 7),
)
def test_lattice_arithmetic_matches_walking(grid_kind, c, r, hi, fi, t) -> None:
    orientation, diagonals, stagger = grid_kind
    m = open_map(12, 12, orientation=orientation, diagonals=diagonals, stagger=stagger)
    geo = Geometry(m.grid)
    h = geo.headings[hi % len(geo.headings)]
    f = geo.faces_of(h)[fi % len(geo.faces_of(h))]
    cells, face = [], f
    cell = (c, r)
    for _ in range(t):
        cell = m.grid.step_heading(cell, face)
        if not m.grid.in_bounds(cell):
            return
        cells.append(cell)
        face = geo.other(h, face)
    p0 = geo.lat((c, r))
    assert geo.cell_at(geo.advance(p0, h, f, t)) == cell
    assert geo.face_after(h, f, t) == face
    end = geo.lat(cell)
    if t:
        assert geo.solve(end[0] - p0[0], end[1] - p0[1], h, f) == t
        assert geo.distance(p0, end) == m.grid.steps((c, r), cell)
    runs = F.Runs(geo, lambda x: False)
    free = runs.free((c, r), h, f)
    assert free >= t


# --------------------------------------------------------------------------- Mythmaster


ROOM = open_map(80, 3)  # heading 90 runs along row 1


def mm_step(state: FlightState, choice: FlightChoice, spec: str = "adaptability=5"):
    rules = flier(spec, m=ROOM)
    return rules.step(state, choice)


@pytest.mark.parametrize(
    ("start", "choice", "speed", "actions"),
    [
        # From a standstill on the ground (take off: the start speed is the ground rate, 0).
        ((0, True), dict(take_off=True), 0, ["take_off"]),
        ((0, True), dict(take_off=True, maintain=True), 0, ["take_off", "maintain"]),
        ((0, True), dict(take_off=True, accelerate=1), 2, ["take_off", "accelerate"]),
        ((0, True), dict(take_off=True, accelerate=2), 4, ["take_off"] + ["accelerate"] * 2),
        ((0, True), dict(take_off=True, decelerate=1), 0, ["take_off", "decelerate"]),
        # After running on the ground at 6 hexes a turn.
        ((6, True), dict(take_off=True), 4, ["take_off"]),
        ((6, True), dict(take_off=True, maintain=True), 6, ["take_off", "maintain"]),
        ((6, True), dict(take_off=True, accelerate=2), 10, ["take_off"] + ["accelerate"] * 2),
        # Cruising at 10: with neither maintain nor accelerate it slows by BM anyway.
        ((10, False), dict(), 8, []),
        ((10, False), dict(maintain=True), 10, ["maintain"]),
        ((10, False), dict(accelerate=1), 12, ["accelerate"]),
        ((10, False), dict(accelerate=3), 16, ["accelerate"] * 3),
        ((10, False), dict(decelerate=1), 6, ["decelerate"]),
        ((10, False), dict(decelerate=2), 4, ["decelerate"] * 2),
        ((10, False), dict(decelerate=3), 2, ["decelerate"] * 3),
        ((2, False), dict(decelerate=3), 0, ["decelerate"] * 3),
        # At the cap, 18 x BM = 36.
        ((36, False), dict(accelerate=2), 36, ["accelerate"] * 2),
        ((36, False), dict(maintain=True), 36, ["maintain"]),
        ((36, False), dict(), 34, []),
    ],
)
def test_speed_after_each_action_mix(start, choice, speed, actions) -> None:
    v0, landed = start
    state = FlightState((1, 1), 90, v0, landed=landed)
    new, rec = mm_step(state, FlightChoice(**choice))
    assert rec.speed == speed == new.speed
    assert list(rec.actions) == actions
    assert rec.cells == tuple((1 + i, 1) for i in range(1, speed + 1))  # exactly speed cells
    assert not new.landed and rec.events[0]["event"] == "choice"


def test_one_speed_action_and_three_actions_at_most() -> None:
    s = FlightState((1, 1), 90, 10)
    with pytest.raises(ArgumentError, match="one speed action"):
        mm_step(s, FlightChoice(maintain=True, accelerate=1))
    with pytest.raises(ArgumentError, match="4 actions"):
        mm_step(s, FlightChoice(accelerate=2, turns=((0, 30), (1, 60))))
    with pytest.raises(ArgumentError, match="on the ground"):
        mm_step(FlightState((1, 1), 90, 0, landed=True), FlightChoice(maintain=True))
    with pytest.raises(ArgumentError, match="turn after 12 cells"):
        mm_step(s, FlightChoice(maintain=True, turns=((12, 30),)))
    with pytest.raises(ArgumentError, match="multiple of 30"):
        mm_step(s, FlightChoice(maintain=True, turns=((1, 45),)))


@pytest.mark.parametrize(
    ("orientation", "costs"),
    [
        ("hexagonal", {30: 0, 60: 1, 90: 2, 120: 3, 150: 4, 180: 5}),
        ("orthogonal", {45: 0, 90: 1, 135: 2, 180: 3}),  # each 45 counts as 30
    ],
)
def test_turning_costs(orientation, costs) -> None:
    rules = flier(m=open_map(9, 9, orientation=orientation))
    for degrees, cost in costs.items():
        for sign in (1, -1):
            choice = FlightChoice(turns=((0, sign * degrees),))
            assert rules.actions(choice).count("turn") == cost
            if cost <= 3:
                new, _ = rules.step(FlightState((4, 4), 0, 2), choice)
                assert new.heading == (sign * degrees) % 360
            else:
                with pytest.raises(ArgumentError, match="a turn has 3"):
                    rules.step(FlightState((4, 4), 0, 2), choice)
    # The total counts, however it is split along the move.
    step = 30 if orientation == "hexagonal" else 45
    split = FlightChoice(maintain=True, turns=((1, step), (2, -step)))
    assert rules.actions(split).count("turn") == 1


def test_collisions_with_blocked_cells_and_the_edge() -> None:
    m = model(["..........", "....#.....", ".........."])
    rules = flier(m=m)
    new, rec = rules.step(FlightState((0, 1), 90, 6), FlightChoice(maintain=True))
    assert rec.cells == ((1, 1), (2, 1), (3, 1))
    (hit,) = [e for e in rec.events if e["event"] == "collision"]
    assert hit["cell"] == (4, 1) and hit["stopped_at"] == (3, 1)
    assert hit["relative_speed"] == 6 and hit["m_per_s"] == Fraction(12, 5)
    assert hit["damage"] is None  # default: no damage formula
    assert new.cell == (3, 1) and new.speed == 0 and not new.landed
    # The map's edge stops a flier too; a damage rate is a setting.
    hurt = create("mythmaster", {"collision_damage": "1/2"})
    edge = hurt.flight(hurt.token("adaptability=5,flyer=true"), m)
    _, rec = edge.step(FlightState((6, 1), 90, 6), FlightChoice(maintain=True))
    (hit,) = [e for e in rec.events if e["event"] == "collision"]
    assert rec.cells == ((7, 1), (8, 1), (9, 1)) and "edge" in hit["what"]
    assert hit["damage"] == 3


def test_unsafe_landings_and_landing_without_ground() -> None:
    m = model(["..........", "......a...", ".........."])
    rules = flier(m=m)  # BM 2: safe up to 6
    new, rec = rules.step(FlightState((0, 1), 90, 8), FlightChoice(maintain=True, land=True))
    assert new.landed and new.speed == 0 and new.cell == (8, 1)
    (crash,) = [e for e in rec.events if e["event"] == "collision"]
    assert "unsafe landing" in crash["what"] and crash["relative_speed"] == 8
    new, rec = rules.step(FlightState((0, 1), 90, 8), FlightChoice(decelerate=1, land=True))
    assert new.landed and new.cell == (4, 1)
    assert [e["event"] for e in rec.events] == ["choice", "landed"]
    dash = flier("adaptability=5,dash=true", m=m)  # Dash: safe up to 6 x BM = 12
    _, rec = dash.step(FlightState((0, 1), 90, 8), FlightChoice(maintain=True, land=True))
    assert [e["event"] for e in rec.events] == ["choice", "landed"]
    # Open air has nothing to land on: the action is spent, the flier flies on.
    new, rec = rules.step(FlightState((0, 1), 90, 6), FlightChoice(maintain=True, land=True))
    assert not new.landed and new.speed == 6 and rec.events[-1]["event"] == "cannot_land"


def test_downed_in_flight() -> None:
    rules = flier(m=ROOM)  # BM 2, sprint 6
    start = FlightState((0, 1), 90, 10)
    recs = F.simulate(
        ROOM, rules, start, [FlightChoice(), FlightChoice(recover=2, maintain=True)], downs=[1]
    )
    assert recs[0].events[0]["event"] == "downed" and recs[0].events[0]["speed"] == 4
    assert recs[0].speed == 2 and recs[0].state.downed == 2  # no maintain: -BM
    assert recs[1].speed == 2 and recs[1].state.downed == 0
    assert list(recs[1].actions) == ["recover", "recover", "maintain"]
    down = replace_state(start, speed=4, downed=2)
    with pytest.raises(ArgumentError, match="down"):
        rules.step(down, FlightChoice(recover=1, maintain=True))
    with pytest.raises(ArgumentError, match="down"):
        rules.step(down, FlightChoice(turns=((0, 30),)))


def replace_state(state: FlightState, **kw: object) -> FlightState:
    from dataclasses import replace

    return replace(state, **kw)  # type: ignore[arg-type]


def test_only_fliers_fly() -> None:
    m = open_map(5, 5)
    assert MM.flight(MM.token("adaptability=14"), m) is None
    assert MM.flight(MM.token("adaptability=14,flyer=true,bulk=200"), m) is None
    with pytest.raises(ArgumentError, match="flyer=true"):
        fly_report(m, MM, MM.token("adaptability=14"), (0, 0), 90, 0, (4, 4), False)
    assert create("generic").flight(create("generic").token("speed=30,fly=true"), m) is None


# --------------------------------------------------------------------------- Speedpoints


def sp_rules(spec: str = "airspeed=4", m: MapModel | None = None, **settings: str):
    system = create("speedpoints", settings) if settings else SP
    return system.flight(system.token(spec), m if m is not None else open_map(30, 3))


def test_climbing_costs_airspeed_and_descending_gives_it_back() -> None:
    rules = sp_rules()
    s = rules.start_state((0, 1), 90, 4)
    assert (s.speed, s.altitude, s.modifier) == (4, 0, 0)
    s, rec = rules.step(s, FlightChoice(climb=3))
    assert (s.speed, s.altitude, s.modifier, rec.speed, len(rec.cells)) == (1, 3, -3, 1, 1)
    with pytest.raises(ArgumentError, match="at most the airspeed, 1 m"):
        rules.step(s, FlightChoice(climb=2))
    s, _ = rules.step(s, FlightChoice(climb=1, spaces=0))
    assert (s.speed, s.altitude) == (0, 4)
    with pytest.raises(ArgumentError, match="airspeed"):
        rules.step(s, FlightChoice(climb=1))  # airspeed 0: no more climbing
    # Descending gives it back, metre for metre, up to twice the airspeed.
    high = rules.start_state((0, 1), 90, 4, altitude=12)
    s, _ = rules.step(high, FlightChoice(climb=-4, spaces=0))
    assert (s.speed, s.altitude) == (8, 8)
    s, rec = rules.step(s, FlightChoice(climb=-8, spaces=0))
    assert (s.speed, s.altitude) == (8, 0) and [e["event"] for e in rec.events] == ["choice"]
    # Faster than the airspeed is a fall; below the ground is impossible.
    s, rec = rules.step(rules.start_state((0, 1), 90, 2, altitude=6), FlightChoice(climb=-5))
    fall = rec.events[-1]
    assert fall["event"] == "fall" and fall["height_m"] == 5 and fall["band"] == "dangerous"
    with pytest.raises(ArgumentError, match="above the ground"):
        rules.step(rules.start_state((0, 1), 90, 4, altitude=2), FlightChoice(climb=-3))


def test_altitude_trade_setting() -> None:
    running, reset = sp_rules(), sp_rules(altitude_trade="reset")
    for rules, after in ((running, 2), (reset, 5)):
        s, _ = rules.step(rules.start_state((0, 1), 90, 4), FlightChoice(climb=3, spaces=0))
        s, _ = rules.step(s, FlightChoice(climb=-1, spaces=0))
        assert s.speed == after  # running: 4 - 3 + 1; reset: the penalty ends, then + 1


def test_obstacles_by_height() -> None:
    m = model(["..........", "...2..h..#", ".........."])
    rules = sp_rules(m=m)
    # At 2 m the 2-m wall and the 1.5-m hut are cleared; the wall of unknown height is not.
    s = rules.start_state((0, 1), 90, 4, altitude=2)
    s, rec = rules.step(s, FlightChoice())
    assert rec.cells == ((1, 1), (2, 1), (3, 1), (4, 1))
    _, rec = rules.step(s, FlightChoice())
    assert rec.cells == ((5, 1), (6, 1), (7, 1), (8, 1))
    s, rec = rules.step(replace_state(s, cell=(5, 1)), FlightChoice())
    assert rec.cells[-1] == (8, 1) and rec.events[-1]["event"] == "collision"
    # At 1 m the hut blocks; climbing to 2 m that turn does not help (the lower counts).
    low = rules.start_state((4, 1), 90, 4, altitude=1)
    _, rec = rules.step(low, FlightChoice(climb=1, spaces=3))
    assert rec.cells == ((5, 1),) and rec.events[-1]["event"] == "collision"
    with pytest.raises(ArgumentError, match="taller than altitude"):
        rules.start_state((3, 1), 90, 4, altitude=1)


def test_heights_in_feet() -> None:
    m = model([".1.."], cell_size=5.0, cell_unit="ft")
    rules = sp_rules(m=m)
    assert rules.levels == [Fraction(3048, 10000)]  # 1 ft
    _, rec = rules.step(rules.start_state((0, 0), 90, 2, altitude=0), FlightChoice())
    assert rec.events[-1]["event"] == "collision"
    _, rec = rules.step(rules.start_state((0, 0), 90, 2, altitude=1), FlightChoice())
    assert rec.cells == ((1, 0), (2, 0))


def test_no_flight_while_encumbered() -> None:
    m = open_map(5, 5)
    tok = SP.token("airspeed=6,strength=10,load=81")
    assert SP.flight(tok, m) is None
    assert "encumbered" in (SP.flight_refusal(tok) or "")
    assert SP.flight(SP.token("airspeed=0"), m) is None
    with pytest.raises(ArgumentError, match="encumbered"):
        fly_report(m, SP, tok, (0, 0), 90, 0, (4, 4), False)


def test_speedpoints_landing_and_take_off() -> None:
    rules = sp_rules()
    ground = rules.start_state((0, 1), 90, 0)
    assert ground.landed
    s, rec = rules.step(ground, FlightChoice(take_off=True, spaces=2))
    assert rec.actions == ("take_off",) and s.speed == 4 and s.cell == (2, 1)
    with pytest.raises(ArgumentError, match="descend first"):
        rules.step(replace_state(s, altitude=2), FlightChoice(land=True))
    s, rec = rules.step(s, FlightChoice(land=True, spaces=1))
    assert s.landed and s.cell == (3, 1) and rec.actions == ("land",)


# --------------------------------------------------------------------------- the planner


def heading_at(rec, i: int) -> int:
    """The heading flown on step ``i`` (1-based) of a turn, from its turn points."""
    h = rec.before.heading
    for k, d in rec.choice.turns:
        if k <= i - 1:
            h = (h + d) % 360
    return h


def brute_force(rules, start, goal, land=False, heading=None, max_turns=6, turn_points=1):
    """Breadth first over every choice the rules list: (turns, actions) or None."""
    start = rules.normal(start)
    if F.at_goal(rules, start, F.Goal(goal, land, heading)):
        return (0, 0)
    frontier, seen = {start: 0}, {start}
    for turn in range(1, max_turns + 1):
        nxt: dict[FlightState, int] = {}
        best = None
        for s, acts in frontier.items():
            for c in rules.choices(s, turn_points=turn_points, land=land):
                s2, rec = rules.step(s, c)
                if any(e["event"] in ("collision", "cannot_land", "fall") for e in rec.events):
                    continue
                a2 = acts + len(rec.actions)
                if land:
                    done = s2.landed and s2.cell == goal
                    done = done and (heading is None or s2.heading == heading)
                else:
                    done = any(
                        c2 == goal and (heading is None or heading_at(rec, i) == heading)
                        for i, c2 in enumerate(rec.cells, 1)
                    )
                if done:
                    best = a2 if best is None else min(best, a2)
                elif s2 not in seen and a2 < nxt.get(s2, 1 << 30):
                    nxt[s2] = a2
        if best is not None:
            return (turn, best)
        seen |= nxt.keys()
        frontier = nxt
    return None


def plan_cost(m, rules, start, goal, **kw):
    found = F.search(m, rules, start, goal, **kw)
    return None if found.plan is None else (found.plan.turns, found.plan.actions)


# Open 9 x 9 maps, BM 1 and 2 fliers (the brief's case), chosen so the brute force is quick.
OPEN_CASES = [
    ("hexagonal", 5, (1, 4), (7, 4), 0, 270, False),
    ("hexagonal", 3, (2, 4), (7, 4), 1, 90, True),
    ("hexagonal", 3, (4, 4), (1, 2), 2, 90, False),
    ("orthogonal", 5, (0, 0), (8, 8), 0, 90, True),
    ("orthogonal", 3, (4, 4), (4, 0), 2, 180, True),
    ("orthogonal", 5, (1, 4), (7, 4), 0, 270, False),
]


@pytest.mark.parametrize("case", OPEN_CASES)
def test_planner_equals_brute_force_on_open_maps(case) -> None:
    orientation, adaptability, start, goal, speed, heading, land = case
    m = open_map(9, 9, orientation=orientation)
    rules = flier(f"adaptability={adaptability}", m=m)
    s = rules.start_state(start, heading, speed)
    assert plan_cost(m, rules, s, goal, land=land) == brute_force(rules, s, goal, land, max_turns=8)


def random_case(rng: random.Random, n: int, walls: str, system: str, fast: int = 1):
    rows = ["".join(rng.choice(walls) for _ in range(n)) for _ in range(n)]
    orientation = rng.choice(["hexagonal", "orthogonal", "staggered"])
    diagonals = rng.choice(["equal", "none"])
    m = model(rows, orientation=orientation, diagonals=diagonals)
    free = [(c, r) for r in range(n) for c in range(n) if rows[r][c] == "."]
    start, goal = rng.choice(free), rng.choice(free)
    if system == "mythmaster":
        rules = flier(f"adaptability={rng.choice([3, 5]) + 2 * fast - 2}", m=m)
        speed = rng.choice([0, 0, 1, 2, 3])
    else:
        rules = sp_rules(f"airspeed={rng.choice([1, 2]) * fast}", m=m)
        speed = rng.choice([0, rules.base])
    state = rules.start_state(start, rng.choice(rules.geo.headings), speed)
    goal_heading = rng.choice([None, None, rng.choice(sorted(rules.geo.faces))])
    return m, rules, state, goal, rng.random() < 0.5, goal_heading


@pytest.mark.parametrize("seed", range(12))
def test_planner_equals_brute_force_with_obstacles(seed) -> None:
    rng = random.Random(seed)
    system = "speedpoints" if seed % 3 == 2 else "mythmaster"
    walls = "......#2" if system == "speedpoints" else "......#"
    m, rules, state, goal, land, heading = random_case(rng, 5, walls, system)
    expect = brute_force(rules, state, goal, land, heading, max_turns=5)
    assert plan_cost(m, rules, state, goal, land=land, heading=heading, max_turns=5) == expect


def test_planner_equals_brute_force_with_two_turn_points() -> None:
    m = model([".....", ".#...", "...#.", ".....", "....."])
    rules = flier("adaptability=3", m=m)
    s = rules.start_state((0, 4), 0, 2)
    expect = brute_force(rules, s, (4, 0), True, turn_points=2)
    assert expect is not None
    assert plan_cost(m, rules, s, (4, 0), land=True, turn_points=2) == expect


@pytest.mark.parametrize("system", ["mythmaster", "speedpoints"])
def test_plans_replay_exactly(system) -> None:
    rng = random.Random(2024)
    checked = 0
    for _ in range(60):
        walls = "......#" if system == "mythmaster" else "......#2h"
        m, rules, state, goal, land, heading = random_case(rng, 12, walls, system, fast=2)
        found = F.search(m, rules, state, goal, land=land, heading=heading, max_turns=8)
        p = found.plan
        if p is None:
            continue
        checked += 1
        records = F.simulate(m, rules, state, p.choices)
        assert (records[-1].state if records else rules.normal(state)) == p.end
        assert [r.cells for r in records] == [r.cells for r in p.records]
        assert all(e["event"] in ("choice", "landed") for r in records for e in r.events)
        if not records:
            continue
        last = records[-1]
        if land:
            assert p.end.landed and p.end.cell == goal
        else:
            assert goal in last.cells
            if heading is not None:
                assert any(
                    c == goal and heading_at(last, i) == heading
                    for i, c in enumerate(last.cells, 1)
                )
        assert sum(len(r.actions) for r in records) == p.actions
    assert checked >= 40


def test_heuristic_changes_nothing_but_the_work() -> None:
    rng = random.Random(7)
    rows = ["".join(rng.choice(".......#") for _ in range(16)) for _ in range(16)]
    rows[1] = "." * 16
    rows[14] = "." * 16
    m = model(rows)
    rules = flier("adaptability=5", m=m)
    s = rules.start_state((1, 1), 90, 0)
    for land in (False, True):
        fast = F.search(m, rules, s, (14, 14), land=land)
        slow = F.search(m, rules, s, (14, 14), land=land, use_heuristic=False)
        assert fast.plan is not None and slow.plan is not None
        assert (fast.plan.turns, fast.plan.actions) == (slow.plan.turns, slow.plan.actions)
        assert fast.expanded * 3 < slow.expanded
        assert rules.bound(s.key(), F.Goal((14, 14), land)) <= (fast.plan.turns, fast.plan.actions)


def test_no_plan_says_why() -> None:
    m = model([".....", ".###.", ".#.#.", ".###.", "....a"])
    rules = flier(m=m)
    s = rules.start_state((0, 0), 90, 0)
    assert "blocked" in F.search(m, rules, s, (1, 1)).reason
    assert F.plan(m, rules, s, (2, 2)) is None  # walled in
    assert "no ground" in F.search(m, rules, s, (4, 4), land=True).reason
    assert F.plan(m, rules, s, (4, 4)) is not None  # it can fly through the air cell
    assert F.plan(m, rules, s, (0, 0)).turns == 0  # already there


def test_goal_headings() -> None:
    m = open_map(9, 9)
    rules = flier(m=m)
    s = rules.start_state((1, 4), 90, 0)
    p = F.plan(m, rules, s, (6, 4), heading=150)
    assert p is not None
    last = p.records[-1]
    assert any(c == (6, 4) and heading_at(last, i) == 150 for i, c in enumerate(last.cells, 1))
    p = F.plan(m, rules, s, (6, 4), land=True, heading=270)
    assert p is not None and p.end.landed and p.end.heading == 270 and p.end.cell == (6, 4)
    # Speedpoints turns freely: a vertex heading is met by a step along either of its faces.
    sp = sp_rules("airspeed=3", m=m)
    g = sp.start_state((1, 4), 90, 0)
    p = F.plan(m, sp, g, (5, 4), heading=60)
    assert p is not None and p.end.heading == 60 and p.end.cell == (5, 4)
    rec = F.simulate(m, sp, g, p.choices)
    assert rec[-1].state == p.end


# --------------------------------------------------------------------------- reports


def test_fly_report_json() -> None:
    m = model(["." * 12] * 3 + ["....###....."] + ["." * 12] * 4)
    tok = MM.token("adaptability=5,flyer=true")
    rep = fly_report(m, MM, tok, (1, 6), 90, 0, (10, 1), True)
    json.dumps(rep)
    assert set(rep) >= {"turns", "plan", "end"}
    assert rep["turns"] == len(rep["plan"])
    first = rep["plan"][0]
    assert set(first) >= {"turn", "actions", "speed", "cells"} and first["turn"] == 1
    assert first["actions"][0] == "take_off"  # speed 0: starts on the ground
    assert all(
        a in ("take_off", "land", "maintain", "accelerate", "decelerate", "turn")
        for t in rep["plan"]
        for a in t["actions"]
    )
    assert rep["plan"][-1]["actions"][-1] == "land"
    assert rep["end"] == {
        "cell": [10, 1],
        "heading": rep["end"]["heading"],
        "speed": 0,
        "landed": True,
    }
    for t in rep["plan"]:
        assert len(t["cells"]) == t["speed"]
    text = format_fly(rep, m)
    assert "turn 1: take_off" in text and "S" in text and "G" in text
    sp = fly_report(m, SP, SP.token("airspeed=5"), (1, 6), 90, 0, (10, 1), True)
    assert sp["end"]["landed"] and "altitude" in sp["plan"][0]


def test_fly_report_errors() -> None:
    m = model([".....", ".###.", ".#.#.", ".###.", "....."])
    tok = MM.token("adaptability=5,flyer=true")
    with pytest.raises(ArgumentError, match="expected a multiple of 30"):
        fly_report(m, MM, tok, (0, 0), 45, 0, (4, 4), False)
    with pytest.raises(ArgumentError, match="outside the map"):
        fly_report(m, MM, tok, (0, 0), 90, 0, (9, 4), False)
    with pytest.raises(ArgumentError, match=r"^speed 99: expected 0") as err:
        fly_report(m, MM, tok, (0, 0), 90, 99, (4, 4), False)
    from engine.cli import FLAGS  # the engine names the role, the command line its flag

    assert err.value.role == "speed" and err.value.naming(FLAGS).startswith("--speed 99: ")
    with pytest.raises(NoPath, match="no flight plan"):
        fly_report(m, MM, tok, (0, 0), 90, 0, (2, 2), False)
    with pytest.raises(ArgumentError):
        fly_report(m, MM, tok, (1, 1), 90, 0, (4, 4), False)  # starts in a wall


def test_fly_command_contract(capsys) -> None:
    import json

    from engine.cli import main

    argv = [
        "fly",
        "maps/hex_pointy.tmx",
        "--system",
        "mythmaster",
        "--token",
        "adaptability=14,flyer=true",
        "--from",
        "2,20",
        "--speed",
        "0",
        "--to",
        "24,4",
    ]
    assert main([*argv, "--land", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert {"turns", "plan", "end"} <= set(doc)
    assert doc["end"]["cell"] == [24, 4] and doc["end"]["landed"] is True
    assert doc["plan"][0]["actions"][0] == "take_off"
    assert all({"turn", "actions", "speed", "cells"} <= set(t) for t in doc["plan"])
    assert main(argv) == 0
    text = capsys.readouterr().out
    assert "turn 1: take_off" in text and "G" in text
    walker = [
        "fly",
        "maps/hex_pointy.tmx",
        "--system",
        "mythmaster",
        "--from",
        "2,20",
        "--to",
        "24,4",
    ]
    assert main(walker) == 2  # no flyer stat: one line saying why
    assert "fly" in capsys.readouterr().err


# --------------------------------------------------------------------------- end headings
#
# Goals with an end heading (issue 18): Mythmaster's turn-round bound
# (engine.systems.mythmaster.turnround), which the planner asks for through
# FlightRules.heading_bound, works out backwards from the goal the fewest turns and actions
# every flight state needs. It must never overestimate (the plans stay the fewest turns,
# then actions), its turns must be exact, and it must find the slow case's plan with a few
# expansions.


def test_the_planner_names_no_system() -> None:
    """The generic planner asks the rules for a sharper bound (FlightRules.heading_bound);
    it neither imports nor looks up any rule system."""
    from pathlib import Path

    from engine.flight import planner
    from engine.systems.mythmaster.flight import MythmasterFlight

    text = Path(planner.__file__).read_text(encoding="utf-8")
    assert "sys.modules" not in text and "importlib" not in text
    for name in ("mythmaster", "speedpoints", "engine.systems"):
        assert name not in text.lower(), name
    base = F.FlightRules.heading_bound
    assert base is not MythmasterFlight.heading_bound


def turn_round(rules, state, goal: F.Goal, turn_points: int = 1, max_turns: int = 8):
    """The turn-round bound of ``state`` with its layers as deep as it needs (the search's
    own refinement, repeated until it settles), or None where it does not apply."""
    guide = rules.heading_bound(goal, state, turn_points)
    if guide is None:
        return None
    key = rules.normal(state).key()
    b = guide.bound(key, goal)
    while b is not None and b[0] <= max_turns:
        again = guide.refine(key, b[0], b[0], max_turns)
        if again == b:
            break
        b = again
    return b


def end_heading_case(rng: random.Random, seed: int, n: int, walls: str = ".......#"):
    rows = ["".join(rng.choice(walls) for _ in range(n)) for _ in range(n)]
    orientation = ("hexagonal", "orthogonal", "staggered")[seed % 3]
    m = model(rows, orientation=orientation, diagonals=rng.choice(["equal", "none"]))
    free = [(c, r) for r in range(n) for c in range(n) if rows[r][c] == "."]
    return m, free


def random_flier_state(rng: random.Random, rules, cell):
    """On the ground or flying (any speed up to 3 x BM, any next face of its heading)."""
    speed = rng.choice([0, 0, 1, rules.bm, 2 * rules.bm, 3 * rules.bm])
    state = rules.start_state(cell, rng.choice(rules.geo.headings), speed)
    if not state.landed:
        state = replace_state(state, face=rng.choice(rules.geo.faces_of(state.heading)))
    return state


@pytest.mark.parametrize("seed", range(12))
def test_end_heading_goals_match_the_unguided_search(seed) -> None:
    """The bound never overestimates, so the plan's (turns, actions) equal those of the same
    search with a zero heuristic, on random small hex and square maps with random starts
    (on the ground or flying, any face), goals and end headings (landing or not), with one,
    no or two turn points a move; and the bound at the start is at most that cost."""
    rng = random.Random(1800 + seed)
    m, free = end_heading_case(rng, seed, rng.choice([5, 6, 7]))
    rules = flier(f"adaptability={rng.choice([3, 5])}", m=m)
    checked = 0
    for _ in range(6):
        start, goal = rng.choice(free), rng.choice(free)
        state = random_flier_state(rng, rules, start)
        heading = rng.choice(sorted(rules.geo.faces if rng.random() < 0.5 else rules.geo.headings))
        land = rng.random() < 0.5
        points = rng.choice([1, 1, 1, 0, 2])
        limit = 6 if points < 2 else 3  # two turn points: many more moves a turn
        kw = {"land": land, "heading": heading, "max_turns": limit, "turn_points": points}
        guided = F.search(m, rules, state, goal, **kw)
        plain = F.search(m, rules, state, goal, use_heuristic=False, **kw)
        why = (state.key(), goal, heading, land, points)
        assert (guided.plan is None) == (plain.plan is None), why
        if plain.plan is None:
            continue
        checked += 1
        cost = (plain.plan.turns, plain.plan.actions)
        assert (guided.plan.turns, guided.plan.actions) == cost, why
        assert guided.expanded <= plain.expanded, why
        g = F.Goal(goal, land, heading)
        b = rules.bound(rules.normal(state).key(), g)
        assert cost == (0, 0) or (b is not None and b <= cost), why
        tr = turn_round(rules, state, g, points)
        assert (tr is None) == (points > 1), why
        assert cost == (0, 0) or tr is None or tr <= cost, why
    assert checked >= 2


@pytest.mark.parametrize("seed", range(8))
def test_turn_round_bound_is_exact_in_turns(seed) -> None:
    """From any flying state, not just the start: the turn-round bound's turns are the
    fewest turns the unguided search finds, its (turns, actions) never more than the plan's;
    where the search finds no plan within the limit, the bound says more turns than that."""
    rng = random.Random(2800 + seed)
    m, free = end_heading_case(rng, seed, rng.choice([6, 7]))
    rules = flier(f"adaptability={rng.choice([3, 5])}", m=m)
    goal = F.Goal(rng.choice(free), rng.random() < 0.5, rng.choice(sorted(rules.geo.headings)))
    assert not rules.goal_refusal(goal)
    checked = 0
    for _ in range(10):
        state = random_flier_state(rng, rules, rng.choice(free))
        if state.landed or F.at_goal(rules, state, goal):
            continue
        tr = turn_round(rules, state, goal, max_turns=7)
        plain = F.search(
            m,
            rules,
            state,
            goal.cell,
            land=goal.land,
            heading=goal.heading,
            max_turns=7,
            use_heuristic=False,
        )
        if plain.plan is None:
            assert tr is None or tr[0] >= 7, (state.key(), goal)
            continue
        cost = (plain.plan.turns, plain.plan.actions)
        assert tr is not None and tr <= cost and tr[0] == cost[0], (state.key(), goal, tr, cost)
        checked += 1
    assert checked >= 3


@pytest.mark.parametrize("seed", range(10))
def test_end_heading_plans_equal_brute_force(seed) -> None:
    """Turning round, against the rules' own choices (no planner move generator): a flier
    starting away from the goal's end heading, on small maps with walls, lands on (or enters)
    the goal on it in the fewest turns, then actions, that a breadth-first search over every
    choice the rules list finds."""
    rng = random.Random(3800 + seed)
    m, free = end_heading_case(rng, seed, 5, "......#")
    rules = flier("adaptability=3", m=m)  # BM 1: the brute force stays quick
    for _ in range(20):  # a case with a plan (the brute force is slow to prove there is none)
        start, goal = rng.choice(free), rng.choice(free)
        heading = rng.choice(sorted(rules.geo.faces))
        state = rules.start_state(start, (heading + 180) % 360, rng.choice([0, 1, 2]))
        land = rng.random() < 0.6
        got = plan_cost(m, rules, state, goal, land=land, heading=heading, max_turns=4)
        if got is not None and got[0] >= 2:
            break
    assert got is not None
    assert got == brute_force(rules, state, goal, land, heading, max_turns=4), (
        start,
        goal,
        heading,
        land,
    )


def clustered_hex_map(n: int, seed: int) -> MapModel:
    """Blocked clusters on an n x n hex map (as benchmarks/bench_flight.py draws them), the
    ends of the middle row kept clear."""
    rng = random.Random(seed)
    grid = Grid("hexagonal", n, n, 32, 32, "y", "odd", 16)
    ids = np.zeros((n, n), dtype=np.int32)
    for _ in range(max(1, round(60 / 4096 * n * n))):
        centre = (rng.randrange(n), rng.randrange(n))
        for c, r in grid.cells_within(centre, rng.randint(1, 3)):
            ids[r, c] = 1
    for c, r in grid.cells_within((1, n // 2), 2) + grid.cells_within((n - 2, n // 2), 2):
        ids[r, c] = 0
    return MapModel(grid=grid, terrain_ids=ids, terrains=(Terrain(), LEGEND["#"]))


def test_turning_round_takes_a_few_expansions(monkeypatch) -> None:
    """The slow case (issue 18): from a standstill heading 90, land on the far side of the
    map on heading 270. The same plan as the unguided search and as the rules' own bound
    alone, with a small fraction of either's expansions."""
    from engine.systems.mythmaster.flight import MythmasterFlight

    m = clustered_hex_map(16, 11)
    rules = flier("adaptability=14", m=m)  # BM 6
    s = rules.start_state((1, 8), 90, 0)
    kw = {"land": True, "heading": 270, "max_states": 200_000}
    fast = F.search(m, rules, s, (14, 8), **kw)
    plain = F.search(m, rules, s, (14, 8), use_heuristic=False, **kw)
    with monkeypatch.context() as patch:
        patch.setattr(MythmasterFlight, "heading_bound", lambda self, *a: None)
        own = F.search(m, flier("adaptability=14", m=m), s, (14, 8), **kw)
    assert fast.plan is not None and plain.plan is not None and own.plan is not None
    cost = (plain.plan.turns, plain.plan.actions)
    assert (fast.plan.turns, fast.plan.actions) == cost == (own.plan.turns, own.plan.actions)
    assert fast.plan.end.heading == 270 and fast.plan.end.landed
    assert fast.expanded * 20 < plain.expanded
    assert fast.expanded * 5 < own.expanded


def test_turn_round_layers_are_kept_for_the_rules() -> None:
    """Policies ask every turn: the layers for a goal are kept with the rules (and shared by
    starts with the same speeds), plans made with them equal plans made from scratch, and
    they go when the rules go."""
    import gc
    import weakref

    from engine.systems.mythmaster.turnround import TurnRound

    rng = random.Random(18)
    m, free = end_heading_case(rng, 0, 8)
    rules = flier("adaptability=5", m=m)
    goal = rng.choice(free)
    starts = [
        rules.start_state(rng.choice(free), rng.choice(rules.geo.headings), 0) for _ in "abcd"
    ]
    guides = set()
    for s in starts:
        kept = F.search(m, rules, s, goal, land=True, heading=90, max_turns=8)
        fresh = F.search(
            m, flier("adaptability=5", m=m), s, goal, land=True, heading=90, max_turns=8
        )
        assert (kept.plan is None) == (fresh.plan is None)
        if kept.plan is not None:
            assert kept.plan.choices == fresh.plan.choices
        guides.add(id(rules.heading_bound(F.Goal(goal, True, 90), s, 1)))
    assert len(guides) == 1
    assert rules.heading_bound(F.Goal(goal, True, 270), starts[0], 1) is not (
        rules.heading_bound(F.Goal(goal, True, 90), starts[0], 1)
    )
    # No heading, another system, two turn points: the rules' own bound alone.
    assert rules.heading_bound(F.Goal(goal, True), starts[0], 1) is None
    assert rules.heading_bound(F.Goal(goal, True, 90), starts[0], 2) is None
    sp = sp_rules("airspeed=3", m=m)
    assert sp.heading_bound(F.Goal(goal, True, 90), sp.start_state(goal, 0, 0), 1) is None
    assert rules in TurnRound._kept and rules in TurnRound._boards
    gone = weakref.ref(rules)
    del rules
    gc.collect()
    assert gone() is None  # the kept layers did not keep their rules alive


def test_an_end_heading_out_of_reach_says_why() -> None:
    """The turn-round bound can raise the start's bound past the turn limit: the search
    then says how many turns it needs, as it does for the rules' own bound."""
    m = open_map(9, 9)
    rules = flier("adaptability=5", m=m)
    s = rules.start_state((1, 4), 90, 0)
    full = F.search(m, rules, s, (7, 4), land=True, heading=270)
    assert full.plan is not None and full.plan.turns >= 3
    short = F.search(m, rules, s, (7, 4), land=True, heading=270, max_turns=full.plan.turns - 1)
    assert short.plan is None
    assert "needs at least" in short.reason or "within" in short.reason
