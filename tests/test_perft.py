"""Golden "perft" for movement: text-drawn maps, each seed system, exact path times and
reach sets worked out by hand from RULES.md's numbers (square and all four hex variants)."""

from __future__ import annotations

from fractions import Fraction

import pytest
from test_search import model_from

from engine import systems
from engine.movement import MovementGraph
from engine.report.movement import path_json
from engine.search import dijkstra, find_path

# Row drawn left to right: open, crawlspace, easy water, rough (cost 2), open.
ROW = "._~,."

# (system, stats, expected time of ROW end to end at the default pace, p(no failure))
CASES = [
    # Whisperspace, PHYS 1: speed 35 ft a Move action, sprint = 3 actions = 105 ft a turn.
    # Crawl +1 penalty: 25 ft (75 a turn); swim +2: 15 ft (45); 5-ft cells.
    # 5/75 + 5/45 + 2 * 5/105 + 5/105 = 101/315; the swim asks Athletics DC 6 (easy): 7/12.
    ("whisperspace", {"phys": 1}, Fraction(101, 315), Fraction(7, 12)),
    # Mythmaster, Adaptability 14: BM round(6.16) = 6 hexes an action, sprint 18 a turn
    # (2-m cells). Down (crawl) BM/6 = 1 an action = 3 a turn; swimming BM/6, needs the
    # skill; easy water asks Swimming 21C: 2d10 + 5 >= 21, 15/100.
    # 1/3 + 1/3 + 2/18 + 1/18 = 5/6.
    ("mythmaster", {"adaptability": 14, "swimming": 5}, Fraction(5, 6), Fraction(15, 100)),
    # D6, Move 10, already moving all-out (the `speed` stat: RULES.md 3, a stopped token
    # reaches all-out only in its second round): all-out 40 m a round, crawl and swim
    # Move/3 x 4 = 40/3 m (2-m cells). 3/20 + 3/20 + 2/20 + 1/20 = 9/20.
    ("d6", {"move": 10, "speed": "all_out"}, Fraction(9, 20), None),
    # Speedpoints, running 5: 5 spaces = 10 m a turn; crawl ceil(5/2) = 3 spaces; swimming
    # 1 point = 1 space a turn. 1/3 + 1 + 2/5 + 1/5 = 29/15.
    ("speedpoints", {"running": 5, "swimming": 1}, Fraction(29, 15), None),
]


@pytest.mark.parametrize(("name", "stats", "turns", "p_ok"), CASES, ids=[c[0] for c in CASES])
@pytest.mark.parametrize(
    "layout",
    ["square", "hex-y-odd", "hex-y-even", "hex-x-odd", "hex-x-even"],
)
def test_path_times(name, stats, turns, p_ok, layout) -> None:
    system = systems.create(name)
    token = system.token(stats)
    if layout == "square":
        model = model_from([ROW], diagonals="none")
    else:
        _, axis, index = layout.split("-")
        rows = [ROW] if axis == "y" else list(ROW)  # flat-top: walk down a column
        model = model_from(rows, orientation="hexagonal", stagger=(axis, index))
    graph = MovementGraph(model, system, token)
    goal = (4, 0) if layout == "square" or layout.startswith("hex-y") else (0, 4)
    rep = path_json(find_path(graph, (0, 0), goal))
    assert Fraction(rep["turns_exact"]) == turns
    assert len(rep["cells"]) == 5  # straight through: every detour is slower
    if p_ok is not None:
        assert Fraction(rep["p_no_failure_exact"]) == p_ok


# (system, stats, pace, cells a turn)
REACH = [
    ("whisperspace", {"phys": 0}, "walk", 6),  # 30 ft an action on 5-ft cells
    ("mythmaster", {"adaptability": 7}, "walk", 3),  # BM round(3.08) = 3
    ("d6", {"move": 10}, "cautious", Fraction(5, 2)),  # Move/2 = 5 m on 2-m cells
    ("speedpoints", {"running": 4}, "run", 4),
    ("generic", {"speed": 20}, "walk", 4),
]


def alternate(dc: int, dr: int) -> int:
    """The 5-10-5 rule in cells: every second diagonal counts double."""
    a, b = abs(dc), abs(dr)
    return max(a, b) + min(a, b) // 2


@pytest.mark.parametrize(("name", "stats", "pace", "per_turn"), REACH, ids=[r[0] for r in REACH])
def test_one_turn_reach_square_alternate(name, stats, pace, per_turn) -> None:
    system = systems.create(name)
    graph = MovementGraph(model_from(["." * 17] * 17), system, system.token(stats), pace)
    tree = dijkstra(graph, (8, 8), limit=graph.denominator)
    expected = {(c, r) for r in range(17) for c in range(17) if alternate(c - 8, r - 8) <= per_turn}
    assert set(tree.cells()) == expected


@pytest.mark.parametrize(("name", "stats", "pace", "per_turn"), REACH, ids=[r[0] for r in REACH])
@pytest.mark.parametrize("stagger", [("y", "odd"), ("y", "even"), ("x", "odd"), ("x", "even")])
def test_one_turn_reach_hex(name, stats, pace, per_turn, stagger) -> None:
    system = systems.create(name)
    model = model_from(["." * 17] * 17, orientation="hexagonal", stagger=stagger)
    graph = MovementGraph(model, system, system.token(stats), pace)
    tree = dijkstra(graph, (8, 8), limit=graph.denominator)
    radius = int(per_turn)
    assert len(tree.cells()) == 1 + 3 * radius * (radius + 1)
    assert all(model.grid.steps((8, 8), c) <= radius for c in tree.cells())
