"""Fidelity of the generic system (RULES.md sections 0 and 5; CONTRACT.md stat table).

RULES.md 5: "Speed in map units per turn (cells of 5 ft unless the map says otherwise), `cost`
multiplies time, dash = 2 x speed, the map's diagonal rule. Checks: none."
CONTRACT.md: generic `speed` is "distance per turn, in the map's `cell_unit`: on a 2 m map
`speed=30` is 30 m".
Every expected figure is derived by hand from those lines.
"""

from __future__ import annotations

import itertools
from fractions import Fraction as F
from pathlib import Path

import pytest

from .conftest import tacgrid_json

SYS = ("--system", "generic")

LEGEND = {
    ".": {"move": "walk"},
    ",": {"move": "walk", "cost": 2.0},
    "~": {"move": "swim", "difficulty": "easy"},
    "_": {"move": "crawl"},
    "^": {"move": "climb", "difficulty": "difficult", "height": 10.0},
    "t": {"move": "climb", "height": 15.0},
    "H": {"move": "ladder"},
    "a": {"move": "air"},
}


def _prop(name: str, value) -> str:
    kind = ' type="float"' if isinstance(value, float) else ""
    return f'<property name="{name}"{kind} value="{value}"/>'


def tmx(rows: list[str], properties: dict | None = None, extra: str = "", hexmap=False) -> str:
    chars = list(LEGEND)
    tiles = "".join(
        f'<tile id="{i}" type="t{i}"><properties>'
        + "".join(_prop(k, v) for k, v in LEGEND[ch].items())
        + "</properties></tile>"
        for i, ch in enumerate(chars)
    )
    props = ""
    if properties:
        props = "<properties>" + "".join(_prop(k, v) for k, v in properties.items())
        props += "</properties>"
    orientation = "orthogonal"
    if hexmap:
        orientation = "hexagonal"
        extra += ' hexsidelength="16" staggeraxis="y" staggerindex="odd"'
    h, w = len(rows), len(rows[0])
    data = ",\n".join(",".join(str(chars.index(c) + 1) for c in r) for r in rows)
    return (
        '<?xml version="1.0" encoding="UTF-8"?>\n'
        f'<map version="1.10" tiledversion="1.10.2" orientation="{orientation}" '
        f'renderorder="right-down" width="{w}" height="{h}" tilewidth="32" tileheight="32"'
        f'{extra} infinite="0">{props}'
        f'<tileset firstgid="1" name="t" tilewidth="32" tileheight="32" '
        f'tilecount="{len(chars)}" columns="{len(chars)}">{tiles}</tileset>'
        f'<layer id="1" name="g" width="{w}" height="{h}"><data encoding="csv">\n{data}\n'
        "</data></layer></map>\n"
    )


@pytest.fixture
def mymap(tmp_path: Path):
    counter = itertools.count()

    def _m(rows: list[str], **kw) -> str:
        p = tmp_path / f"gen{next(counter)}.tmx"
        p.write_text(tmx(rows, **kw), encoding="utf-8")
        return str(p)

    return _m


METRIC = {"cell_size": 2.0, "cell_unit": "m"}


def path(map_: str, token: str, start: str, goal: str, pace: str | None = None, rc: int = 0):
    args = ["path", map_, *SYS, "--token", token, "--from", start, "--to", goal]
    if pace:
        args += ["--pace", pace]
    return tacgrid_json(*args, expect_rc=rc)


def frac(x) -> F:
    if isinstance(x, str):
        return F(x)
    return F(x).limit_denominator(10**9)


# --------------------------------------------------------------------------- stats


@pytest.mark.parametrize("speed", [30, 25, 40])
def test_stats_rates_and_per_turn(speed):
    """RULES.md 5: "Speed in map units per turn (cells of 5 ft unless the map says otherwise) ...
    dash = 2 x speed". CONTRACT: per_turn[mode] is "the most cells of that mode the token crosses
    in one turn when it spends the whole turn moving ... on the system's default cell (5 ft
    Whisperspace and generic)": the most is a dash, 2 x speed / 5 cells (speed 30: 60/5 = 12).
    Generic has no mode penalties (RULES.md 5 names none): every ground mode is the same."""
    s = tacgrid_json("stats", *SYS, "--token", f"speed={speed}")
    assert s["unit"] == "ft" and frac(s["cell_size"]) == 5
    assert frac(s["rates"]["walk"]) == speed
    assert frac(s["rates"]["dash"]) == 2 * speed
    for mode in ("walk", "crawl", "swim", "climb", "ladder"):
        assert frac(s["per_turn"][mode]) == F(2 * speed, 5), mode
    assert frac(s["per_turn"]["air"]) == 0  # "fly": can enter air cells; not given here


def test_stats_per_turn_is_the_path_figure(mymap):
    """CONTRACT per_turn ("the most cells ... in one turn") must be what `path` moves in a turn
    at the fastest pace; `path` at walk moves half of it. Speed 30 on a 5-ft map: dash 60 ft =
    12 cells in 1 turn; walk 30 ft = 6 cells a turn, so 12 cells take 2 turns."""
    per_turn = frac(tacgrid_json("stats", *SYS, "--token", "speed=30")["per_turn"]["walk"])
    m = mymap(["." * 13])
    dash = path(m, "speed=30", "0,0", f"{per_turn},0", "dash")
    assert frac(dash["turns"]) == 1
    walk = path(m, "speed=30", "0,0", "12,0", "walk")
    assert frac(walk["turns"]) == 2
    assert walk["distance"] == 60
    half = path(m, "speed=30", "0,0", "6,0")  # default pace: walk (CONTRACT)
    assert frac(half["turns"]) == 1


def test_stats_fly():
    """CONTRACT: generic `fly`; MAP-FORMAT `air` = "only fliers". speed 25 fly: 2 x 25 / 5 = 10
    cells of air at a dash."""
    s = tacgrid_json("stats", *SYS, "--token", "speed=25,fly=true")
    assert frac(s["per_turn"]["air"]) == 10


# --------------------------------------------------------------------------- metric maps


def test_metric_map_distance_in_metres(mymap):
    """MAP-FORMAT `cell_size`/`cell_unit`; RULES.md 0 "Distances are reported in the map's unit".
    15 cells of 2 m = 30 m."""
    p = path(mymap(["." * 31], properties=METRIC), "speed=30", "0,0", "15,0")
    assert p["unit"] == "m"
    assert frac(p["distance"]) == 30


@pytest.mark.parametrize("pace, cells", [("walk", 15), ("dash", 30)])
def test_metric_map_speed_in_map_unit(mymap, pace, cells):
    """CONTRACT: "`speed` (distance per turn, in the map's `cell_unit`: on a 2 m map `speed=30`
    is 30 m)". 30 m / 2 m = 15 cells a turn walking, dash 60 m = 30 cells: 1 turn each."""
    p = path(mymap(["." * 31], properties=METRIC), "speed=30", "0,0", f"{cells},0", pace)
    assert frac(p["turns"]) == 1


def test_metric_map_reach(mymap):
    """CONTRACT (speed in the map's unit), RULES.md 5 "dash = 2 x speed"; reach's default pace is
    the token's, as `path`'s (generic: walk; CONTRACT "`path` and `reach` default to the token's
    pace"). speed 10 on 2-m cells: walk 10 m = 5 cells, cell k at k/5 turn; dash 20 m = 10
    cells, cell k at k/10 turn."""
    args = ("--token", "speed=10", "--from", "0,0")
    r = tacgrid_json("reach", mymap(["." * 15], properties=METRIC), *SYS, *args)
    got = {c["cell"][0]: frac(c["turns"]) for c in r["cells"]}
    assert r["pace"] == "walk" and got == {k: F(k, 5) for k in range(6)}
    r = tacgrid_json("reach", mymap(["." * 15], properties=METRIC), *SYS, *args, "--pace", "dash")
    got = {c["cell"][0]: frac(c["turns"]) for c in r["cells"]}
    assert got == {k: F(k, 10) for k in range(11)}


# --------------------------------------------------------------------------- paths


def test_cost_multiplies_time(mymap):
    """RULES.md 5: "`cost` multiplies time". Speed 30 at walk: 1/6 turn a 5-ft cell; two cost-2
    cells 2 x 2/6 plus one plain 1/6 = 5/6 turn."""
    p = path(mymap([".,,."]), "speed=30", "0,0", "3,0")
    assert p["distance"] == 15
    assert frac(p["turns"]) == F(5, 6)


@pytest.mark.parametrize(
    "diagonals, turns, distance",
    [
        ("none", F(1), 30),  # 4 neighbours: 6 steps = 30 ft; 30/30 = 1 turn
        ("equal", F(1, 2), 15),  # 1-1-1: 3 steps 15 ft; 1/2
        ("alternate", F(2, 3), 20),  # 5-10-5 = 20 ft; 2/3
    ],
)
def test_diagonal_rules(mymap, diagonals, turns, distance):
    """RULES.md 5 "the map's diagonal rule"; RULES.md 0: "`none` = 4 neighbours, `equal` = 1-1-1,
    `alternate` = 1-2-1 (5-10-5), `euclid` = sqrt 2". (0,0) -> (3,3), speed 30, walk."""
    p = path(mymap(["...."] * 4, properties={"diagonals": diagonals}), "speed=30", "0,0", "3,3")
    assert frac(p["distance"]) == distance
    assert frac(p["turns"]) == turns


def test_diagonal_euclid(mymap):
    """RULES.md 0: `euclid` = sqrt 2 a diagonal: 3 sqrt 2 cells x 5 ft / 30 ft = sqrt(2)/2 turn."""
    p = path(mymap(["...."] * 4, properties={"diagonals": "euclid"}), "speed=30", "0,0", "3,3")
    assert abs(p["turns"] - 2**0.5 / 2) < 1e-8
    assert abs(float(frac(p["distance"])) - 15 * 2**0.5) < 1e-6


def test_default_diagonals_alternate(mymap):
    """RULES.md 0: "default `alternate`". Same as the alternate row: 20 ft, 2/3 turn."""
    p = path(mymap(["...."] * 4), "speed=30", "0,0", "3,3")
    assert frac(p["turns"]) == F(2, 3)


def test_hex_one_cell_a_step(mymap):
    """RULES.md 0: "Hex: every step is one cell". Pointy-top odd: (4,4) is cube q = 2, r = 4,
    s = -6: 6 steps = 30 ft; speed 30 walk: 1 turn."""
    p = path(mymap(["." * 9] * 9, hexmap=True), "speed=30", "0,0", "4,4")
    assert len(p["cells"]) == 7
    assert frac(p["turns"]) == 1


def test_no_checks_and_no_mode_penalty(mymap):
    """RULES.md 5: "Checks: none." Easy water and a difficult cliff ask nothing; swimming costs
    the same time as walking (no penalty named): 3 cells x 5 ft / 30 = 1/2 turn."""
    p = path(mymap([".~~."]), "speed=30", "0,0", "3,0")
    assert [s["mode"] for s in p["steps"][1:]] == ["swim", "swim", "walk"]
    assert frac(p["turns"]) == F(1, 2)
    assert all(s["check"] is None for s in p["steps"])
    assert p["p_no_failure"] == 1
    p = path(mymap(["._."]), "speed=30", "0,0", "2,0")
    assert frac(p["turns"]) == F(1, 3)


@pytest.mark.parametrize(
    "rows, turns", [([".^."], F(1, 2)), ([".t."], F(2, 3)), ([".H."], F(1, 3))]
)
def test_climb_costs_its_height(mymap, rows, turns):
    """MAP-FORMAT `height`: "how far a climb goes" (default "one cell" for climb/ladder);
    docs/maps.md "A climb or ladder cell costs its height of climbing (at least one cell)". Speed 30:
    10-ft cliff 10/30 = 1/3 + walk 1/6 = 1/2; 15-ft 1/2 + 1/6 = 2/3; ladder (5 ft) 1/6 + 1/6."""
    p = path(mymap(rows), "speed=30", "0,0", "2,0")
    assert frac(p["turns"]) == turns
    assert p["steps"][1]["check"] is None


def test_air_only_for_fliers(mymap):
    """MAP-FORMAT `air` = "only fliers"; CONTRACT generic `fly`. Three air cells 15 ft / 30."""
    m = mymap(["aaaa"])
    assert path(m, "speed=30", "0,0", "3,0", rc=1)["cells"] == []
    p = path(m, "speed=30,fly=true", "0,0", "3,0")
    assert frac(p["turns"]) == F(1, 2)


def test_reach_two_turns(mymap):
    """RULES.md 5 "dash = 2 x speed"; `--pace dash` bands the walk within it. speed 10 on 5-ft
    cells: dash 20 ft = 4 cells a turn; 2 turns: cells 0..8, cell k at k/4 turn; walk band:
    within 10 ft (2 cells, 1/2 of a dash turn)."""
    r = tacgrid_json(
        "reach",
        mymap(["." * 12]),
        *SYS,
        "--token",
        "speed=10",
        "--from",
        "0,0",
        "--turns",
        "2",
        "--pace",
        "dash",
    )
    got = {c["cell"][0]: c for c in r["cells"]}
    assert set(got) == set(range(9))
    for k, c in got.items():
        assert frac(c["turns"]) == F(k, 4)
    assert got[2]["band"] == "walk"
    assert got[3]["band"] == "dash"
