"""Fidelity suite for Speedpoints (seed 004; RULES.md sections 0, 4 and 6).

Every expected number below is derived by hand from the seed text
(shared/seeds/004_23794b380747a1cc.txt) or, where the seed is silent, from RULES.md. The module
itself was not read. Seed quotes sit in each test's docstring; the arithmetic in comments.
"""

from __future__ import annotations

import itertools
import math
from fractions import Fraction as F
from typing import Any

import pytest

from .conftest import tacgrid, tacgrid_json

SP = ("--system", "speedpoints")


def frac(value: Any) -> F:
    """A JSON figure (int, float or "a/b" string) as an exact Fraction."""
    if isinstance(value, str):
        return F(value)
    if isinstance(value, float):
        return F(value).limit_denominator(10**6)
    return F(value)


def stats(token: str) -> dict[str, Any]:
    return tacgrid_json("stats", *SP, "--token", token)


def path(mp: str, token: str, start: str, goal: str, *extra: str, rc: int = 0) -> dict[str, Any]:
    return tacgrid_json(
        "path", mp, *SP, "--token", token, "--from", start, "--to", goal, *extra, expect_rc=rc
    )


def checks(route: dict[str, Any]) -> list[dict[str, Any]]:
    return [s["check"] for s in route["steps"] if s["check"] is not None]


def close(x: float, y: F) -> bool:
    return abs(x - float(y)) < 1e-12


# --- maps with tile properties of our own (the shared legend has no climb levels) ---

OWN_LEGEND: dict[str, dict[str, Any]] = {
    ".": {"move": "walk"},
    "#": {"move": "blocked"},
    "c": {"move": "climb"},  # difficulty none: counts as the easiest level (RULES.md 0)
    "v": {"move": "climb", "difficulty": "very_easy"},  # 0 (RULES.md 4)
    "e": {"move": "climb", "difficulty": "easy"},  # 5: rope, pole
    "m": {"move": "climb", "difficulty": "moderate"},  # 10: wall with hand holds
    "d": {"move": "climb", "difficulty": "difficult"},  # 15: finger holds only
    "w": {"move": "swim"},
}


def _prop(name: str, value: Any) -> str:
    kind = ' type="float"' if isinstance(value, float) else ""
    return f'<property name="{name}"{kind} value="{value}"/>'


def own_tmx(rows: list[str], legend: dict[str, dict[str, Any]]) -> str:
    chars = list(legend)
    tiles = "".join(
        f'<tile id="{i}"><properties>'
        + "".join(_prop(k, v) for k, v in legend[ch].items())
        + "</properties></tile>"
        for i, ch in enumerate(chars)
    )
    height, width = len(rows), len(rows[0])
    data = ",\n".join(",".join(str(chars.index(ch) + 1) for ch in row) for row in rows)
    return (
        '<?xml version="1.0" encoding="UTF-8"?>\n'
        f'<map version="1.10" orientation="orthogonal" renderorder="right-down" width="{width}" '
        f'height="{height}" tilewidth="32" tileheight="32" infinite="0">'
        f'<tileset firstgid="1" name="own" tilewidth="32" tileheight="32" '
        f'tilecount="{len(chars)}" columns="{len(chars)}">{tiles}</tileset>'
        f'<layer id="1" name="ground" width="{width}" height="{height}">'
        f'<data encoding="csv">\n{data}\n</data></layer></map>\n'
    )


@pytest.fixture
def draw_own(tmp_path):
    counter = itertools.count()

    def _draw(rows: list[str], legend: dict[str, dict[str, Any]] | None = None) -> str:
        p = tmp_path / f"own{next(counter)}.tmx"
        p.write_text(own_tmx(rows, legend or OWN_LEGEND), encoding="utf-8")
        return str(p)

    return _draw


HEX = {"orientation": "hexagonal", "tile": (28, 32), "hexside": 16, "stagger": ("y", "odd")}

# Seed 004, Encumbrance: "CC is determined by the character's strength." (the whole table)
CC_TABLE = {
    0: 0, 1: 1, 2: 2, 3: 5, 4: 10, 5: 15, 6: 20, 7: 30, 8: 50, 9: 65, 10: 80,
    11: 100, 12: 120, 13: 150, 14: 200, 15: 250, 16: 300, 17: 400, 18: 500, 19: 600,
    20: 800, 21: 1000, 22: 1200, 23: 1500, 24: 1800, 25: 2100, 26: 2500, 27: 3000,
    28: 4000, 29: 5000, 30: 6000, 31: 7500, 32: 9000, 33: 10000, 34: 12000, 35: 15000,
    36: 20000, 37: 25000, 38: 30000, 39: 35000, 40: 40000, 41: 45000, 42: 50000,
    43: 55000, 44: 60000, 45: 65000, 46: 70000, 47: 75000, 48: 80000, 49: 90000,
    50: 100000,
}  # fmt: skip


# ============================================================== stats: derived figures


@pytest.mark.parametrize("running,swimming", [(4, 1), (7, 3), (1, 0)])
def test_points_are_spaces_per_turn(running, swimming):
    """Seed: "Each point of running, swimming or airspeed allows the character to move one
    meter per second, 3.6 kilometers per hour ... or one space per turn, where a space is about
    2 meters wide and a turn is about 2 seconds." """
    d = stats(f"running={running},swimming={swimming}")
    assert d["unit"] == "m" and frac(d["cell_size"]) == 2
    # one point = one space a turn: per_turn walk = running, swim = swimming
    assert frac(d["per_turn"]["walk"]) == running
    assert frac(d["per_turn"]["swim"]) == swimming
    for name, pts in (("running", running), ("swimming", swimming)):
        sp = d["speeds"][name]
        assert frac(sp["spaces_per_turn"]) == pts
        assert frac(sp["m_per_s"]) == pts  # 1 point = 1 m/s
        assert frac(sp["m_per_turn"]) == 2 * pts  # 1 m/s x 2 s
        assert frac(sp["km_per_h"]) == F(36, 10) * pts  # 3.6 km/h a point
    assert d["encumbrance"] == "none"


def test_airspeed_points_are_spaces_per_turn():
    """Seed: "Each point of running, swimming or airspeed allows the character to move ... one
    space per turn". CONTRACT: per_turn[mode] is the most cells of that mode a turn; "a mode
    it cannot use is 0" - a token with airspeed 6 (unencumbered) can fly."""
    d = stats("airspeed=6")
    assert d["carrying"]["can_fly"] is True
    assert frac(d["speeds"]["airspeed"]["spaces_per_turn"]) == 6
    # 6 points = 6 spaces a turn of flight
    assert frac(d["per_turn"]["air"]) == 6
    assert frac(d["rates"]["air"]) == 12  # 6 m/s x 2 s
    # Seed: "An encumbered character cannot perform strenuous actions or fly": strength 10
    # carries 80 kg (the table), so a 100 kg load encumbers and flight is 0 spaces a turn.
    enc = stats("airspeed=6,strength=10,load=100")
    assert enc["carrying"]["can_fly"] is False
    assert frac(enc["per_turn"]["air"]) == 0


@pytest.mark.parametrize("running", [3, 4, 5, 7])
def test_climbing_rates_by_difficulty(running):
    """Seed climbing table: difficulty 0 "ladder, steep mountain": "½ running (rounded up)";
    5 "rope, pole": "1 meter per turn"; 10, 15, 20: "not strategically significant".
    RULES.md 4: ladder cells and difficulty 0: ceil(running / 2) spaces per turn; 5: 1 m (half
    a space) per turn; 10 and up: not tactical."""
    d = stats(f"running={running}")
    half_up = math.ceil(F(running, 2))  # 3 -> 2, 4 -> 2, 5 -> 3, 7 -> 4
    assert frac(d["per_turn"]["ladder"]) == half_up
    table = {row["difficulty"]: row for row in d["climbing"]}
    assert frac(table[0]["spaces_per_turn"]) == half_up
    assert frac(table[0]["m_per_turn"]) == 2 * half_up
    assert frac(table[5]["spaces_per_turn"]) == F(1, 2)  # 1 m of a 2 m space
    assert frac(table[5]["m_per_turn"]) == 1
    for level in (10, 15, 20):
        assert "spaces_per_turn" not in table[level] or not table[level]["spaces_per_turn"]
        assert "tactical" in str(table[level]).lower()


def test_climbing_table_roll_odds():
    """Seed: "For each climb make a success roll using the character's climbing ability vs. the
    difficulty of the climb". RULES.md 4: 1d20 + ability >= 10 + difficulty."""
    d = stats("running=4,climbing=4")
    table = {row["difficulty"]: row for row in d["climbing"]}
    # difficulty 0: d20 >= 10 - 4 = 6 -> faces 6..20 = 15/20 = 3/4
    assert frac(table[0]["p_success"]) == F(15, 20)
    # difficulty 5: d20 >= 15 - 4 = 11 -> faces 11..20 = 10/20 = 1/2
    assert frac(table[5]["p_success"]) == F(10, 20)


@pytest.mark.parametrize("running", [4, 5, 7])
def test_jump_figures(running):
    """Seed: "Running is also the maximum distance a character can jump with a running start.
    ... Without a running start a character can jump half as far. A character can jump
    vertically half as high as they can jump horizontally (half of their running with a running
    start, a quarter of their running without it.)" ... "(within 1 meter of their maximum
    jumping distance)" """
    j = stats(f"running={running}")["jump"]
    assert frac(j["run_up"]["length_m"]) == running  # running metres
    assert frac(j["run_up"]["height_m"]) == F(running, 2)  # half the length
    assert frac(j["standing"]["length_m"]) == F(running, 2)  # half as far
    assert frac(j["standing"]["height_m"]) == F(running, 4)  # a quarter of running
    assert frac(j["check_within_m"]) == 1


def test_carrying_capacity_table():
    """Seed: "CC is determined by the character's strength." (Strength/CC table, 0-50) and
    "A character cannot carry more than twice his CC." """
    for strength, cc in CC_TABLE.items():
        c = stats(f"strength={strength}")["carrying"]
        assert frac(c["capacity_kg"]) == cc, strength
        assert frac(c["max_kg"]) == 2 * cc, strength  # twice the CC


@pytest.mark.parametrize(
    "token,level,running,swimming",
    [
        # strength 10: CC 80 kg. load 80 = CC: not over, so not encumbered
        ("strength=10,load=80,running=5,swimming=3", "none", 5, 3),
        # load 81 > 80: encumbered: floor(5/2) = 2, floor(3/2) = 1
        ("strength=10,load=81,running=5,swimming=3", "encumbered", 2, 1),
        # load 160 = 2 x CC: still carried, encumbered
        ("strength=10,load=160,running=5,swimming=3", "encumbered", 2, 1),
        # strength 3: CC 5 kg; load 5.5 > 5: floor(7/2) = 3, floor(1/2) = 0
        ("strength=3,load=5.5,running=7,swimming=1", "encumbered", 3, 0),
        # strength 34: CC 12,000 kg; load 24,000 = 2 x CC: floor(9/2) = 4, floor(4/2) = 2
        ("strength=34,load=24000,running=9,swimming=4", "encumbered", 4, 2),
    ],
)
def test_encumbrance_halves_running_and_swimming(token, level, running, swimming):
    """Seed: "Carrying capacity (CC) is the amount of equipment a character can carry without
    being encumbered. An encumbered character moves at half of his normal swimming and running
    speed. An encumbered character cannot perform strenuous actions or fly."
    RULES.md 4: "load > CC halves running and swimming (round down)"."""
    d = stats(token)
    assert d["encumbrance"] == level
    assert frac(d["per_turn"]["walk"]) == running
    assert frac(d["per_turn"]["swim"]) == swimming
    # ladders climb at ceil(running / 2) of the (halved) running
    assert frac(d["per_turn"]["ladder"]) == math.ceil(F(running, 2))
    assert d["carrying"]["strenuous_actions"] is (level == "none")
    if level != "none":
        assert d["carrying"]["can_fly"] is False


def test_encumbered_token_cannot_fly_stats():
    """Seed: "An encumbered character cannot perform strenuous actions or fly." """
    # strength 3: CC 5 kg. load 5: flies; load 6 > 5: encumbered, no flight
    assert stats("strength=3,load=5,airspeed=6")["carrying"]["can_fly"] is True
    assert stats("strength=3,load=6,airspeed=6")["carrying"]["can_fly"] is False


def test_more_than_twice_cc_cannot_be_carried():
    """Seed: "A character cannot carry more than twice his CC." RULES.md 4: "load > 2 x CC
    cannot be carried" (setting overload, default immobile: the token cannot move)."""
    # strength 10: CC 80, twice = 160; 161 > 160
    d = stats("strength=10,load=161,running=5,swimming=3")
    assert d["encumbrance"] != "none" and d["encumbrance"] != "encumbered"
    assert frac(d["per_turn"]["walk"]) == 0
    assert frac(d["per_turn"]["swim"]) == 0


def test_fall_figures():
    """Seed: "When the height of the climb is more than one story or 3 meters, a fall may be
    potentially dangerous ... more than two stories or 6 meters, the fall may be potentially
    lethal" ... "the falling character adds his agility to the roll and he can use either his
    climbing ability or his acrobatics ability" ... dangerous failure: "damage and stun equal to
    his toughness"; lethal failure: "damage equal to his stamina".
    RULES.md 4: "Roll: the climb's difficulty (10 when not from a climb), climbing or acrobatics
    (the better) + agility"."""
    token = "running=4,toughness=3,stamina=7,agility=2,acrobatics=1,climbing=4"
    f = stats(token)["falls"]
    assert frac(f["safe_up_to_m"]) == 3
    assert frac(f["dangerous_over_m"]) == 3
    assert frac(f["lethal_over_m"]) == 6
    # ability = max(climbing 4, acrobatics 1) + agility 2 = 6
    assert frac(f["ability"]) == 6
    # not from a climb: d20 + 6 >= 10 + 10 -> d20 >= 14 -> 7/20
    assert frac(f["p_success_not_from_a_climb"]) == F(7, 20)
    assert f["hurt"]["damage"] == 3 and f["hurt"]["stun"] == 3  # toughness
    assert f["grievous"]["damage"] == 7  # stamina
    # acrobatics 6 is now the better: 6 + 2 = 8; d20 >= 12 -> 9/20
    f = stats(token.replace("acrobatics=1", "acrobatics=6"))["falls"]
    assert frac(f["ability"]) == 8
    assert frac(f["p_success_not_from_a_climb"]) == F(9, 20)


# ============================================================== odds


@pytest.mark.parametrize(
    "ability,difficulty,expected",
    [
        (4, 5, F(10, 20)),  # d20 >= 11: faces 11..20
        (0, 0, F(11, 20)),  # d20 >= 10: faces 10..20
        (0, 10, F(1, 20)),  # d20 >= 20: face 20 only
        (9, 0, F(1)),  # d20 >= 1: every face
        (10, 0, F(1)),  # d20 >= 0: every face (edge: no automatic 1 failure in the ruling)
        (0, 15, F(0)),  # d20 >= 25: impossible
        (15, 25, F(1, 20)),  # d20 >= 20
        (3, 20, F(0)),  # d20 >= 27
        (12, 20, F(3, 20)),  # d20 >= 18: 18, 19, 20
    ],
)
def test_success_roll_odds_d20(ability, difficulty, expected):
    """RULES.md 4 (ruling, the seed names no dice): "1d20 + ability >= 10 + difficulty, where the
    difficulty is the seed's 0/5/10/15/20 scale"."""
    d = tacgrid_json("odds", *SP, f"ability={ability}", f"difficulty={difficulty}")
    assert close(d["p_success"], expected)
    assert close(d["outcomes"]["success"], expected)
    assert close(d["outcomes"]["failure"], 1 - expected)


def _enumerate(n: int, sides: int, need: int) -> F:
    hits = sum(
        1 for faces in itertools.product(range(1, sides + 1), repeat=n) if sum(faces) >= need
    )
    return F(hits, sides**n)


@pytest.mark.parametrize(
    "resolver,ability,difficulty,n,sides",
    [("3d6", 0, 0, 3, 6), ("3d6", 4, 10, 3, 6), ("2d10", 2, 5, 2, 10), ("2d10", 0, 15, 2, 10)],
)
def test_success_roll_other_resolvers(resolver, ability, difficulty, n, sides):
    """RULES.md 4: "Keep the resolver a setting." (resolver + ability >= 10 + difficulty)."""
    # e.g. 3d6 + 0 >= 10: 135 of 216 = 5/8; 2d10 + 2 >= 15: sums 13..20 = 36 of 100 = 9/25
    expected = _enumerate(n, sides, 10 + difficulty - ability)
    d = tacgrid_json(
        "odds", *SP, f"ability={ability}", f"difficulty={difficulty}", f"resolver={resolver}"
    )
    assert close(d["p_success"], expected)


def test_resolver_spot_values():
    """The two worked values of the resolver test above, by hand."""
    assert _enumerate(3, 6, 10) == F(5, 8)
    assert _enumerate(2, 10, 13) == F(9, 25)


# ============================================================== paths and reach: movement


def test_straight_run_square(draw):
    """Seed: "one space per turn" a point; "Characters can move more than once during their turn
    ... but the total distance may not exceed their running". RULES.md 0: time = distance / rate."""
    mp = draw(["......"])
    r = path(mp, "running=4", "0,0", "5,0")
    # 5 spaces at 4 spaces a turn = 5/4 turns; 5 x 2 m = 10 m
    assert close(r["turns"], F(5, 4))
    assert frac(r["distance"]) == 10
    assert [s["mode"] for s in r["steps"][1:]] == ["walk"] * 5
    assert checks(r) == [] and close(r["p_no_failure"], F(1))
    # cumulative turns per step: k/4
    for k, s in enumerate(r["steps"]):
        assert close(s["turns"], F(k, 4))


def test_alternate_diagonals_square(draw):
    """RULES.md 0: square default `alternate` (1-2-1); cost depends on diagonals before."""
    mp = draw(["....."] * 5)
    r = path(mp, "running=4", "0,0", "3,3")
    # three diagonals: 1 + 2 + 1 = 4 spaces; 4 / 4 = 1 turn; 8 m
    assert close(r["turns"], F(1))
    assert frac(r["distance"]) == 8


def test_hex_straight_and_oblique(draw):
    """RULES.md 0: "Hex: every step is one cell." """
    mp = draw(["......."] * 3, **HEX)
    r = path(mp, "running=3", "0,1", "5,1")
    # 5 cells / 3 a turn = 5/3 turns, 10 m
    assert close(r["turns"], F(5, 3)) and frac(r["distance"]) == 10
    # pointy odd-r: (0,0) cube (0,0); (2,2) q = 2 - 1 = 1, r = 2: distance max(1, 2, 3) = 3
    r = path(mp, "running=3", "0,0", "2,2")
    assert close(r["turns"], F(1)) and frac(r["distance"]) == 6


def test_swimming_in_water(draw_own):
    """Seed: "Each point of running, swimming ... one space per turn"; RULES.md 4: "the turn's
    total is at most its running (swimming in water)"."""
    mp = draw_own(["..ww.."])
    r = path(mp, "running=5,swimming=2", "0,0", "5,0")
    # walk 1/5 + swim 1/2 + swim 1/2 + walk 1/5 + walk 1/5 = 8/5
    assert close(r["turns"], F(8, 5))
    assert [s["mode"] for s in r["steps"][1:]] == ["walk", "swim", "swim", "walk", "walk"]
    r = path(mp, "running=6,swimming=3", "0,0", "5,0")
    # 1/6 + 1/3 + 1/3 + 1/6 + 1/6 = 7/6
    assert close(r["turns"], F(7, 6))
    # swimming 0: cannot enter water, no other way round
    r = path(mp, "running=5,swimming=0", "0,0", "5,0", rc=1)
    assert r["cells"] == []


def test_encumbered_path_is_halved(draw):
    """Seed: "An encumbered character moves at half of his normal ... running speed." """
    mp = draw(["......"])
    # strength 10 (CC 80), load 100: running floor(5/2) = 2; 5 spaces / 2 = 5/2 turns
    r = path(mp, "running=5,strength=10,load=100", "0,0", "5,0")
    assert close(r["turns"], F(5, 2))


def test_reach_one_turn(draw):
    """Seed: "one space per turn" a point. Running 2, one turn, alternate diagonals (1-2-1)."""
    mp = draw(["....."] * 5)
    d = tacgrid_json("reach", mp, *SP, "--token", "running=2", "--from", "0,0", "--turns", "1")
    got = {tuple(c["cell"]): frac(c["turns"]) for c in d["cells"]}
    # orthogonal 1 = 1/2 turn, 2 = 1; one diagonal 1 = 1/2; diagonal + orthogonal 2 = 1;
    # two diagonals 1 + 2 = 3 > 2 out of reach
    expected = {
        (0, 0): F(0),
        (1, 0): F(1, 2),
        (0, 1): F(1, 2),
        (1, 1): F(1, 2),
        (2, 0): F(1),
        (0, 2): F(1),
        (2, 1): F(1),
        (1, 2): F(1),
    }
    assert got == expected


# ============================================================== climbing


@pytest.mark.parametrize("running,turns", [(4, F(2)), (5, F(4, 3)), (3, F(2))])
def test_ladder_rate(draw, running, turns):
    """Seed: difficulty 0 "ladder, steep mountain": "½ running (rounded up)" a turn."""
    mp = draw(["H", "H", "H", "H", "."])
    r = path(mp, f"running={running}", "0,4", "0,0")
    # 4 ladder spaces at ceil(running / 2): r4 -> 2 a turn = 2 turns; r5 -> 3 = 4/3; r3 -> 2 = 2
    assert close(r["turns"], turns)
    assert [s["mode"] for s in r["steps"][1:]] == ["ladder"] * 4
    assert frac(r["distance"]) == 8


@pytest.mark.parametrize("running", [4, 5])
def test_ladder_over_two_turns_is_one_roll(draw, running):
    """Seed: "For each climb make a success roll using the character's climbing ability vs. the
    difficulty of the climb". RULES.md 4: "One climbing roll per climb"; RULES.md 0: being in the
    middle of one climb is path state. RULES.md 0: difficulty none counts as the easiest (0)."""
    mp = draw(["H", "H", "H", "H", "."])
    r = path(mp, f"running={running}", "0,4", "0,0")
    # 4 spaces at 2 (or 3) a turn cross a turn boundary; one climb: one roll
    # d20 + 0 >= 10 + 0: faces 10..20 = 11/20
    assert len(checks(r)) == 1
    assert close(checks(r)[0]["p_success"], F(11, 20))
    assert close(r["p_no_failure"], F(11, 20))


@pytest.mark.parametrize("cell", ["c", "v"])
def test_easy_climb_difficulty_zero(draw_own, cell):
    """Seed: difficulty 0: "½ running (rounded up)"; "For each climb make a success roll".
    RULES.md 0: for Speedpoints climbs difficulty `none` counts as the easiest level;
    RULES.md 4: very_easy = 0."""
    mp = draw_own([cell, cell, cell, "."])
    r = path(mp, "running=5,climbing=3", "0,3", "0,0")
    # 3 spaces at ceil(5/2) = 3 a turn = 1 turn; one roll d20 + 3 >= 10: faces 7..20 = 14/20
    assert close(r["turns"], F(1))
    assert [s["mode"] for s in r["steps"][1:]] == ["climb"] * 3
    assert len(checks(r)) == 1
    assert close(checks(r)[0]["p_success"], F(14, 20))
    assert close(r["p_no_failure"], F(14, 20))


def test_rope_climb_rate(draw_own):
    """Seed: difficulty 5 "rope, pole": "1 meter per turn". RULES.md 4: half a space a turn."""
    mp = draw_own(["e", "e", "e", "."])
    r = path(mp, "running=5,climbing=3", "0,3", "0,0")
    # 3 spaces of 2 m at 1 m a turn = 6 turns
    assert close(r["turns"], F(6))
    for k, s in enumerate(r["steps"]):
        assert close(s["turns"], F(2 * k))


def test_rope_climb_is_one_roll(draw_own):
    """Seed: "For each climb make a success roll". RULES.md 4: "One climbing roll per climb"."""
    mp = draw_own(["e", "e", "e", "."])
    r = path(mp, "running=5,climbing=3", "0,3", "0,0")
    # d20 + 3 >= 10 + 5 -> d20 >= 12: faces 12..20 = 9/20, once
    assert len(checks(r)) == 1
    assert close(r["p_no_failure"], F(9, 20))


@pytest.mark.parametrize("cell,level", [("m", 10), ("d", 15)])
def test_untactical_climbs_refused(draw_own, cell, level):
    """Seed: difficulty 10 "wall or cliff with hand holds", 15 "finger holds only": "not
    strategically significant". RULES.md 4: "10 and up: not tactical: the path search treats it
    as blocked and says why"."""
    mp = draw_own([cell, cell, "."])
    r = path(mp, "running=5,climbing=10", "0,2", "0,0", rc=1)
    assert r["cells"] == []
    reason = r["reason"].lower()
    assert "tactical" in reason or "strategically" in reason
    assert str(level) in reason


# ============================================================== jumping over gaps

JUMP10 = ("--set", "jump_difficulty=10")  # pinned: the seed names no difficulty for the jump


@pytest.mark.parametrize("running,roll", [(3, True), (4, False), (5, False)])
def test_one_gap_with_run_up(draw, running, roll):
    """Seed: "Running is also the maximum distance a character can jump with a running start.
    If the character can barely jump across a gap (within 1 meter of their maximum jumping
    distance) they must make a success roll using their acrobatics ability or fall into the
    gap." RULES.md 4: a run-up is at least 1 space straight before."""
    mp = draw(["...O..."])
    r = path(mp, f"running={running}", "0,0", "6,0", *JUMP10)
    # run-up of 3 spaces; the gap is one 2 m space. Longest = running m.
    # r3: 3 - 2 = 1 <= 1: roll. r4: 4 - 2 = 2: no roll. r5: 3: no roll.
    assert r["steps"][3]["mode"] == "gap"
    assert close(r["turns"], F(6, running))  # 6 spaces at running a turn
    if roll:
        # acrobatics 0: d20 + 0 >= 10 + 10 -> 1/20
        assert len(checks(r)) == 1
        assert close(r["p_no_failure"], F(1, 20))
    else:
        assert checks(r) == []


def test_jump_roll_uses_acrobatics(draw):
    """Seed: "they must make a success roll using their acrobatics ability"."""
    mp = draw(["...O..."])
    r = path(mp, "running=3,acrobatics=5", "0,0", "6,0", *JUMP10)
    # d20 + 5 >= 20 -> faces 15..20 = 6/20
    assert len(checks(r)) == 1
    assert close(r["p_no_failure"], F(6, 20))


def test_four_metre_gap_impossible_for_running_3(draw):
    """Seed: "Running is also the maximum distance a character can jump with a running start."
    RULES.md 4: "Pits (gap cells) are crossed this way" (by jumping)."""
    mp = draw(["...OO..."])
    # gap = 2 cells x 2 m = 4 m > 3 m longest jump: no way across
    r = path(mp, "running=3", "0,0", "7,0", *JUMP10, rc=1)
    assert r["cells"] == []


@pytest.mark.parametrize("running", [4, 5])
def test_four_metre_gap_needs_roll(draw, running):
    """Seed: "If the character can barely jump across a gap (within 1 meter of their maximum
    jumping distance) they must make a success roll using their acrobatics ability"."""
    mp = draw(["...OO..."])
    r = path(mp, f"running={running}", "0,0", "7,0", *JUMP10)
    # 4 m gap; longest 4 (0 short) or 5 (1 short): within 1 m: one roll, d20 >= 20 = 1/20
    assert len(checks(r)) == 1
    assert close(r["p_no_failure"], F(1, 20))


def test_four_metre_gap_easy_for_running_6(draw):
    """Seed: "Running is also the maximum distance a character can jump with a running start."
    6 m longest, 4 m gap: 2 m spare, more than 1 m: no roll."""
    mp = draw(["...OO..."])
    r = path(mp, "running=6", "0,0", "7,0", *JUMP10)
    # 7 spaces at 6 a turn = 7/6 turns, 14 m
    assert close(r["turns"], F(7, 6)) and frac(r["distance"]) == 14
    assert checks(r) == []
    assert [s["mode"] for s in r["steps"][3:5]] == ["gap", "gap"]


def test_four_metre_gap_hex(draw):
    """Seed: jump with a running start up to running m; within 1 m: acrobatics roll."""
    mp = draw(["..OO..."], **HEX)
    r = path(mp, "running=4", "0,0", "5,0", *JUMP10)
    assert len(checks(r)) == 1
    assert close(r["p_no_failure"], F(1, 20))


def test_standing_jump_long_enough(draw):
    """Seed: "Without a running start a character can jump half as far."
    Running 8, no run-up: 4 m standing; 2 m gap, 2 m spare: no roll."""
    mp = draw([".O..."])
    r = path(mp, "running=8", "0,0", "2,0", *JUMP10)
    assert checks(r) == []
    assert close(r["turns"], F(2, 8))


@pytest.mark.parametrize("running", [4, 6])
def test_standing_jump_needs_roll(draw, running):
    """Seed: "Without a running start a character can jump half as far." RULES.md 4: "with a
    run-up (at least 1 space straight before) the longest jump is running metres, standing half
    that"."""
    mp = draw([".O..."])
    r = path(mp, f"running={running}", "0,0", "2,0", *JUMP10)
    # start cell is next to the gap: no space before it. Standing: 2 m (r4) or 3 m (r6);
    # 2 m gap: within 1 m -> d20 >= 20: 1/20
    assert len(checks(r)) == 1
    assert close(r["p_no_failure"], F(1, 20))


def test_standing_jump_too_short(draw):
    """Seed: "Without a running start a character can jump half as far." """
    mp = draw([".O..."])
    # 3 / 2 = 1.5 m < 2 m: impossible, and no other way round
    r = path(mp, "running=3", "0,0", "2,0", *JUMP10, rc=1)
    assert r["cells"] == []


def test_run_up_must_be_straight(draw):
    """Seed: "Without a running start a character can jump half as far." RULES.md 4: "with a
    run-up (at least 1 space straight before)". The only approach turns 90 degrees at the gap's
    edge, so the jump is a standing one."""
    mp = draw(["#.####", "#.O...", "######"], properties={"diagonals": "none"})
    # 1,0 -> 1,1 (down), then the jump goes right over 2,1: no straight space before it.
    # standing = 4 / 2 = 2 m, gap 2 m: within 1 m: roll d20 >= 20 = 1/20
    r = path(mp, "running=4", "1,0", "3,1", *JUMP10)
    assert len(checks(r)) == 1
    assert close(r["p_no_failure"], F(1, 20))


def test_straight_run_up_of_one_space(draw):
    """RULES.md 4: "with a run-up (at least 1 space straight before) the longest jump is running
    metres". One straight space 0,0 -> 1,0 then the jump: running 4 = 4 m, 2 m gap: no roll."""
    mp = draw(["..O.."])
    r = path(mp, "running=4", "0,0", "3,0", *JUMP10)
    assert checks(r) == []
    assert close(r["turns"], F(3, 4))


# ============================================================== flight (RULES.md 6)


def fly(mp: str, token: str, goal: str, *extra: str, rc: int = 0) -> dict[str, Any]:
    return tacgrid_json(
        "fly", mp, *SP, "--token", token, "--from", "0,1", "--heading", "90",
        "--to", goal, *extra, expect_rc=rc,
    )  # fmt: skip


@pytest.mark.parametrize("goal,turns", [("8,1", 2), ("9,1", 3)])
def test_level_flight(draw, goal, turns):
    """Seed: "Each point of ... airspeed allows the character to move ... one space per turn"
    and "the total distance may not exceed their ... airspeed"."""
    mp = draw([".........."] * 3)
    d = fly(mp, "airspeed=4", goal, "--speed", "0")
    # 8 spaces at 4 a turn = 2 turns; 9 spaces: ceil(9/4) = 3 turns
    assert d["turns"] == turns
    for t in d["plan"]:
        assert len(t["cells"]) <= 4
    assert d["end"]["cell"] == [int(x) for x in goal.split(",")]


def _tower(draw_own, height: float) -> str:
    legend = dict(OWN_LEGEND)
    legend["T"] = {"move": "blocked", "height": height}
    return draw_own(["....T.....", "....T.....", "....T....."], legend)


def test_flying_over_an_obstacle_costs_airspeed(draw_own):
    """Seed: "When a flying character ascends 1 meter vertically (under their own flying power)
    their airspeed is temporarily reduced by 1 until they descend again or land."
    RULES.md 6: "Cells with height above the altitude block." A 5 m wall across the map:
    airspeed 6 must be at 5 m to cross it, where its airspeed is 6 - 5 = 1."""
    mp = _tower(draw_own, 5.0)
    d = fly(mp, "airspeed=6", "9,1", "--speed", "0")
    assert d["end"]["cell"] == [9, 1]
    crossing = [t for t in d["plan"] if any(c[0] == 4 for c in t["cells"])]
    assert len(crossing) == 1
    t = crossing[0]
    assert frac(t["altitude"]) >= 5
    assert len(t["cells"]) <= 1  # 6 - 5 = 1 space that turn


def test_obstacle_as_high_as_airspeed_is_impassable(draw_own):
    """Seed: "A character can no longer ascend when their airspeed is 0." Airspeed 6 climbing
    6 m has airspeed 6 - 6 = 0: it cannot move on over a 6 m wall (and may not go higher)."""
    mp = _tower(draw_own, 6.0)
    d = fly(mp, "airspeed=6", "9,1", "--speed", "0", rc=1)
    assert not d["plan"]


def test_encumbered_cannot_fly(draw):
    """Seed: "An encumbered character cannot perform strenuous actions or fly." """
    mp = draw([".........."] * 3)
    # strength 3: CC 5 kg; load 6 > 5: encumbered
    args = ("fly", mp, *SP, "--token", "airspeed=4,strength=3,load=6")
    rc, out, err = tacgrid(*args, "--from", "0,1", "--heading", "90", "--speed", "0", "--to", "8,1")
    assert rc != 0
    assert "encumber" in (out + err).lower()
    # load 5 = CC: not encumbered, flies
    d = fly(mp, "airspeed=4,strength=3,load=5", "8,1", "--speed", "0")
    assert d["turns"] == 2


def test_airspeed_zero_cannot_fly(draw):
    """Seed: "A character can no longer ascend when their airspeed is 0." """
    mp = draw([".........."] * 3)
    rc, out, err = tacgrid(
        "fly", mp, *SP, "--token", "airspeed=0", "--from", "0,1", "--heading", "90",
        "--speed", "0", "--to", "8,1",
    )  # fmt: skip
    assert rc != 0
