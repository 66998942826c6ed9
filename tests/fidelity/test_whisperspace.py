"""Fidelity of the Whisperspace system (seeds 000 + 001; RULES.md sections 0 and 1).

Every expected figure below is derived by hand from the seed text, or from RULES.md where the
seed is silent, and quotes the line it comes from. Nothing here was taken from tacgrid's module.
"""

from __future__ import annotations

import itertools
from fractions import Fraction as F
from pathlib import Path

import pytest

from .conftest import tacgrid_json

SYS = ("--system", "whisperspace")


# --------------------------------------------------------------------------- helpers


def stats(token: str) -> dict:
    return tacgrid_json("stats", *SYS, "--token", token)


def path(map_: str, token: str, start: str, goal: str, pace: str | None = None, rc: int = 0):
    args = ["path", map_, *SYS, "--token", token, "--from", start, "--to", goal]
    if pace:
        args += ["--pace", pace]
    return tacgrid_json(*args, expect_rc=rc)


def frac(x) -> F:
    """A JSON figure (int, float or 'a/b' string) as a Fraction (floats limited to 1e-9)."""
    if isinstance(x, str):
        return F(x)
    return F(x).limit_denominator(10**9)


def checks(p: dict) -> list[tuple[str, float]]:
    return [(s["check"]["target"], s["check"]["p_success"]) for s in p["steps"] if s["check"]]


def d12_outcomes(mod: int, dc: int, bonus: int = 0, penalty: int = 0) -> dict[str, F]:
    """Seed 001 by brute force over the dice, written from the seed text alone.

    "roll 1d12 and add a modifier"; "Success by 0-3 | Success / Success by 4+ | Extreme Success /
    Fail by 0-3 | Failure / Fail by 4+ | Extreme Failure"; bonus die: "Choose the highest die";
    penalty die: "Choose the lowest"; "cancel each other out"; "up to a maximum of 2" (RULES.md 1:
    clamped to [-2, +2] *after* cancelling).
    """
    net = max(-2, min(2, bonus - penalty))
    n = 1 + abs(net)
    pick = max if net > 0 else min
    counts = {"extreme_success": 0, "success": 0, "failure": 0, "extreme_failure": 0}
    for faces in itertools.product(range(1, 13), repeat=n):
        m = pick(faces) + mod - dc
        if m >= 4:
            counts["extreme_success"] += 1
        elif m >= 0:
            counts["success"] += 1
        elif m >= -3:
            counts["failure"] += 1
        else:
            counts["extreme_failure"] += 1
    return {k: F(v, 12**n) for k, v in counts.items()}


# A tileset of our own (same XML shape as tests/tmxtext.py) for properties LEGEND lacks.
LEGEND = {
    ".": {"move": "walk"},
    ",": {"move": "walk", "cost": 2.0},
    "~": {"move": "swim", "difficulty": "easy"},
    "c": {"move": "swim"},  # calm water: difficulty none
    "w": {"move": "swim", "difficulty": "moderate"},
    "_": {"move": "crawl"},
    "5": {"move": "climb", "height": 5.0},
    "e": {"move": "climb"},  # no height: one cell
    "t": {"move": "climb", "height": 15.0},
    "^": {"move": "climb", "difficulty": "difficult", "height": 10.0},
    "H": {"move": "ladder"},
    "#": {"move": "blocked"},
    "m": {"move": "climb", "difficulty": "moderate"},  # no height: one cell
}


def _prop(name: str, value) -> str:
    kind = ' type="float"' if isinstance(value, float) else ""
    return f'<property name="{name}"{kind} value="{value}"/>'


def tmx(rows: list[str], orientation: str = "orthogonal", extra: str = "") -> str:
    chars = list(LEGEND)
    tiles = "".join(
        f'<tile id="{i}" type="t{i}"><properties>'
        + "".join(_prop(k, v) for k, v in LEGEND[ch].items())
        + "</properties></tile>"
        for i, ch in enumerate(chars)
    )
    h, w = len(rows), len(rows[0])
    data = ",\n".join(",".join(str(chars.index(c) + 1) for c in r) for r in rows)
    return (
        '<?xml version="1.0" encoding="UTF-8"?>\n'
        f'<map version="1.10" tiledversion="1.10.2" orientation="{orientation}" '
        f'renderorder="right-down" width="{w}" height="{h}" tilewidth="32" tileheight="32"'
        f'{extra} infinite="0">'
        f'<tileset firstgid="1" name="t" tilewidth="32" tileheight="32" '
        f'tilecount="{len(chars)}" columns="{len(chars)}">{tiles}</tileset>'
        f'<layer id="1" name="g" width="{w}" height="{h}"><data encoding="csv">\n{data}\n'
        "</data></layer></map>\n"
    )


@pytest.fixture
def mymap(tmp_path: Path):
    counter = itertools.count()

    def _m(rows: list[str]) -> str:
        p = tmp_path / f"ws{next(counter)}.tmx"
        p.write_text(tmx(rows), encoding="utf-8")
        return str(p)

    return _m


# --------------------------------------------------------------------------- stats


@pytest.mark.parametrize("phys", [-1, 0, 1, 2, 4])
def test_speed_from_phys(phys):
    """Seed 000: "each character has a Speed stat based on their PHYS. You may use an action to
    move up to your speed". RULES.md 1: "derived (ruling) as 30 + 5 x PHYS. Turn: 3 actions"."""
    speed = 30 + 5 * phys  # ft per Move action
    s = stats(f"phys={phys}")
    assert s["rates"]["walk"] == speed
    # per_turn: 3 Move actions of `speed` ft, in 5-ft cells (CONTRACT: per_turn).
    assert frac(s["per_turn"]["walk"]) == F(3 * speed, 5)


def test_speed_stat_wins_over_phys():
    """RULES.md 1: "Speed stat in ft, or derived ... as 30 + 5 x PHYS": a given speed is used."""
    s = stats("speed=35,phys=3")  # PHYS 3 would derive 45; the stat says 35
    assert s["rates"]["walk"] == 35
    assert frac(s["per_turn"]["walk"]) == 21  # 3 x 35 / 5


def test_mode_penalties_phys1():
    """Seed 000: "swimming, crawling) may impose movement penalties"; "Each movement penalty
    reduces your movement speed by 10 ft". RULES.md 1: "crawl +1, swim +2, climb +2" (ruling);
    ladders count as climbing (`tacgrid systems`: "climbing (ladders too)")."""
    s = stats("phys=1")  # Speed 35
    # walk 35; crawl 35 - 10 = 25; swim/climb/ladder 35 - 20 = 15 (ft per Move action)
    assert s["rates"] == {"walk": 35, "crawl": 25, "swim": 15, "climb": 15, "ladder": 15}
    # per turn (3 actions, 5-ft cells): 105/5 = 21, 75/5 = 15, 45/5 = 9
    for mode, cells in {"walk": 21, "crawl": 15, "swim": 9, "climb": 9, "ladder": 9}.items():
        assert frac(s["per_turn"][mode]) == cells, mode


@pytest.mark.parametrize(
    "token, walk, crawl, swim",
    [
        # "2 movement bonuses and 1 penalty ... you would move with 1 bonus": 30 + 10 = 40;
        # crawl net 0 -> 30; swim net -1 -> 20
        ("speed=30,bonuses=2,penalties=1", 40, 30, 20),
        # "3 movement penalties and 1 movement bonus would result in ... 2 penalties": 30 - 20;
        # crawl net -3 -> 0 ("can never go below 0 ft"); swim net -4 -> 0
        ("speed=30,bonuses=1,penalties=3", 10, 0, 0),
        # one bonus: 40; crawl net 0: 30; swim net -1: 20
        ("speed=30,bonuses=1", 40, 30, 20),
    ],
)
def test_bonuses_and_penalties_cancel(token, walk, crawl, swim):
    """Seed 000: "Bonuses stack with each other, as do penalties; and bonuses and penalties cancel
    one another out." "Each movement bonus increases your movement speed by 10 ft.\""""
    s = stats(token)
    assert (s["rates"]["walk"], s["rates"]["crawl"], s["rates"]["swim"]) == (walk, crawl, swim)
    assert frac(s["per_turn"]["walk"]) == F(3 * walk, 5)


def test_bonus_capped_at_double():
    """Seed 000: "Your total movement speed cannot be more than double your normal movement
    speed." RULES.md 1: "speed = clamp(base + 10 x net, 0, 2 x base)"."""
    s = stats("speed=30,bonuses=5")
    # walk 30 + 50 = 80 -> 60; crawl net +4: 70 -> 60; swim/climb net +3: 60 -> 60
    for mode in ("walk", "crawl", "swim", "climb", "ladder"):
        assert s["rates"][mode] == 60, mode
        assert frac(s["per_turn"][mode]) == 36, mode  # 3 x 60 / 5


def test_penalties_floor_at_zero_immobile(tmp_path):
    """Seed 000: "Your movement speed can never go below 0 ft; upon reaching 0 ft, you become
    Immobile.\""""
    s = stats("speed=30,penalties=5")  # 30 - 50 -> 0 (not -20)
    for mode in ("walk", "crawl", "swim", "climb", "ladder"):
        assert s["rates"][mode] == 0
        assert frac(s["per_turn"][mode]) == 0
    # penalties=3: 30 - 30 = 0 ft walking: Immobile, so no path at all (CONTRACT: exit status 1).
    m = tmp_path / "line.tmx"
    m.write_text(tmx(["...."]), encoding="utf-8")
    p = path(str(m), "speed=30,penalties=3", "0,0", "3,0", rc=1)
    assert p["cells"] == []


@pytest.mark.parametrize(
    "bulk, level, walk",
    [
        (0, "none", 35),
        (10, "none", 35),  # bulk = capacity is not "beyond"
        (11, "encumbered", 25),  # "beyond ... carrying capacity ... +1 movement penalty": 35 - 10
        (20, "encumbered", 25),  # = 2 x capacity is not "more than double"
        (21, "heavy", 15),  # "more than double ... Gain +2 movement penalties": 35 - 20
        (30, "heavy", 15),  # = 3 x capacity is not "more than three times"
        (31, "immobile", 0),  # "more than three times ... prone and Immobile"
    ],
)
def test_encumbrance_from_bulk(bulk, level, walk):
    """Seed 000 Encumbrance / Heavy Encumbrance / Too Much Weight. RULES.md 1: "Carrying
    capacity (ruling): 5 + 5 x PHYS slots"; "heavily encumbered +2 (replaces the +1)".
    PHYS 1: capacity 10, Speed 35."""
    s = stats(f"phys=1,bulk={bulk}")
    assert s["encumbrance"] == level
    assert s["rates"]["walk"] == walk
    assert frac(s["per_turn"]["walk"]) == F(3 * walk, 5)


def test_capacity_stat_sets_the_limit():
    """RULES.md 1: capacity "5 + 5 x PHYS slots (or a stat that sets it)"."""
    assert stats("speed=30,capacity=4,bulk=4")["encumbrance"] == "none"
    s = stats("speed=30,capacity=4,bulk=5")  # 5 > 4: encumbered, 30 - 10 = 20
    assert s["encumbrance"] == "encumbered"
    assert s["rates"]["walk"] == 20
    assert stats("speed=30,capacity=4,bulk=9")["encumbrance"] == "heavy"  # 9 > 8
    assert stats("speed=30,capacity=4,bulk=13")["encumbrance"] == "immobile"  # 13 > 12


def test_heavy_load_extras():
    """Seed 000: "While heavily encumbered: ... You suffer +1 penalty die to all REF-based skill
    checks. You cannot Fully Commit. At the start of each of your turns ... roll an Endurance
    (DC6) encumbrance check." Endurance +1: 1d12 + 1 >= 6 <=> d12 >= 5: 8/12 = 2/3."""
    s = stats("phys=1,bulk=21,endurance=1")
    assert s["ref_penalty_dice"] == 1
    assert s["fully_commit"] is False
    assert s["strain_check"]["target"] == "DC 6"
    assert abs(s["strain_check"]["p_success"] - 2 / 3) < 1e-12
    light = stats("phys=1,bulk=11")  # merely encumbered: none of these
    assert light["ref_penalty_dice"] == 0 and light["fully_commit"] is True


def test_dragging():
    """Seed 000: "Dragging an object or character ... imposes +1 movement penalty"; "Dragging
    something is impossible while swimming"; "Dragging objects ... while climbing is impossible"."""
    s = stats("speed=30,dragging=true")
    assert s["rates"]["walk"] == 20  # 30 - 10
    assert frac(s["per_turn"]["walk"]) == 12  # 3 x 20 / 5
    assert frac(s["per_turn"]["crawl"]) == 6  # net -2: 10 ft, 3 x 10 / 5
    for mode in ("swim", "climb", "ladder"):
        assert frac(s["per_turn"][mode]) == 0, mode


def test_prone_first_turn_per_turn():
    """Seed 000: "Standing up must be done as part of a move action and uses 15 feet of movement."
    PHYS 1 (Speed 35) prone: the first whole turn moves 3 x 35 - 15 = 90 ft = 18 cells."""
    s = stats("phys=1,prone=true")
    assert frac(s["per_turn"]["walk"]) == 18


# --------------------------------------------------------------------------- odds


def odds(check: str) -> dict:
    return tacgrid_json("odds", *SYS, *check.split())


def assert_odds(out: dict, expect: dict[str, F]) -> None:
    for k, v in expect.items():
        assert abs(out["outcomes"][k] - float(v)) < 1e-12, (k, out["outcomes"][k], v)
    p = expect["extreme_success"] + expect["success"]
    assert abs(out["p_success"] - float(p)) < 1e-12


def test_odds_plain_d12_degrees():
    """Seed 001: "roll 1d12 and add a modifier"; DC "a target number a roll must meet or exceed";
    degrees by "Result vs DC". DC 6, mod 0: d12 >= 10 extreme success (3/12), 6..9 success
    (4/12), 3..5 failure (3/12), 1..2 extreme failure (2/12)."""
    expect = {
        "extreme_success": F(1, 4),
        "success": F(1, 3),
        "failure": F(1, 4),
        "extreme_failure": F(1, 6),
    }
    assert d12_outcomes(0, 6) == expect
    assert_odds(odds("athletics=0 dc=6"), expect)


def test_odds_one_bonus_die():
    """Seed 001: "Bonus die: roll your skill check plus another d12. Choose the highest die".
    Athletics 2, DC 6, 1 bonus die: success needs max >= 4: 1 - (3/12)^2 = 15/16; extreme needs
    max >= 8: 1 - (7/12)^2 = 95/144; failure max 1..3: 9/144 = 1/16; extreme failure: 0."""
    expect = {
        "extreme_success": F(95, 144),
        "success": F(15, 16) - F(95, 144),
        "failure": F(1, 16),
        "extreme_failure": F(0),
    }
    assert d12_outcomes(2, 6, bonus=1) == expect
    assert_odds(odds("athletics=2 dc=6 bonus=1"), expect)


def test_odds_two_penalty_dice():
    """Seed 001: "If you were to roll ... with 2 penalty dice ... you would roll 3d12 ... choose
    the lowest". Mod 0, DC 6: success needs min >= 6: (7/12)^3 = 343/1728; extreme success
    min >= 10: (3/12)^3 = 1/64; extreme failure min <= 2: 1 - (10/12)^3 = 91/216."""
    e = d12_outcomes(0, 6, penalty=2)
    assert e["extreme_success"] + e["success"] == F(343, 1728)
    assert e["extreme_success"] == F(1, 64)
    assert e["extreme_failure"] == F(91, 216)
    assert_odds(odds("athletics=0 dc=6 penalty=2"), e)


@pytest.mark.parametrize(
    "given, same_as",
    [
        # "up to a maximum of 2 bonus dice": 3 bonus dice roll as 2 (3d12 keep highest;
        # athletics 1, DC 6: max >= 5, p_success = 1 - (4/12)^3 = 26/27)
        ("bonus=3", {"bonus": 2}),
        ("penalty=5", {"penalty": 2}),
        # "2 Bonus dice and 2 Penalty dice would equate to no Bonus or Penalty dice"
        ("bonus=2 penalty=2", {}),
        # "4 Bonus dice and 2 Penalty dice would leave you with 2 Bonus dice"
        ("bonus=4 penalty=2", {"bonus": 2}),
        # RULES.md 1: "clamped to [-2, +2] *after* cancelling": 4 - 1 = 3 -> 2 (not 2 - 1 = 1)
        ("bonus=4 penalty=1", {"bonus": 2}),
        # "2 Bonus dice and 1 Penalty die ... leaving you ... with 1 Bonus die"
        ("bonus=2 penalty=1", {"bonus": 1}),
    ],
)
def test_odds_dice_stack_cancel_and_clamp(given, same_as):
    """Seed 001: Stacking Bonuses and Penalties."""
    expect = d12_outcomes(1, 6, **same_as)
    assert_odds(odds(f"athletics=1 dc=6 {given}"), expect)
    if given == "bonus=3":
        assert expect["extreme_success"] + expect["success"] == F(26, 27)


@pytest.mark.parametrize(
    "mod, dc, expect",
    [
        # DC 18 (Improbable), mod 0: the total is at most 12, margin <= -6: always
        # "Fail by 4+" = extreme failure
        (
            0,
            18,
            {"extreme_success": F(0), "success": F(0), "failure": F(0), "extreme_failure": F(1)},
        ),
        # DC 4, mod 3: total 4..15, margin 0..11: never fails; extreme when d12 >= 5: 8/12
        (
            3,
            4,
            {
                "extreme_success": F(2, 3),
                "success": F(1, 3),
                "failure": F(0),
                "extreme_failure": F(0),
            },
        ),
        # DC 4, mod -5: margin = d12 - 9: success d12 9..12 (4/12, never extreme: 12 - 9 = 3);
        # failure 6..8 (3/12); extreme failure 1..5 (5/12)
        (
            -5,
            4,
            {
                "extreme_success": F(0),
                "success": F(1, 3),
                "failure": F(1, 4),
                "extreme_failure": F(5, 12),
            },
        ),
        # DC 15, mod 3: margin = d12 - 12: success only on 12 (margin 0): 1/12;
        # failure 9..11 (3/12); extreme failure 1..8 (8/12)
        (
            3,
            15,
            {
                "extreme_success": F(0),
                "success": F(1, 12),
                "failure": F(1, 4),
                "extreme_failure": F(2, 3),
            },
        ),
    ],
)
def test_odds_edges(mod, dc, expect):
    """Seed 001: "Success by 0-3 | Success", "Success by 4+ | Extreme Success", "Fail by 0-3 |
    Failure", "Fail by 4+ | Extreme Failure"; "meet or exceed"."""
    assert d12_outcomes(mod, dc) == expect
    assert_odds(odds(f"athletics={mod} dc={dc}"), expect)


@pytest.mark.parametrize("seed", [1, 2, 3, 4, 5, 6, 7, 8])
def test_roll_degree_matches_margin(seed):
    """Seed 001: degrees by "Result vs DC". One seeded roll: the degree follows total - DC."""
    r = tacgrid_json("roll", *SYS, "athletics=2", "dc=9", "--seed", str(seed))
    m = r["total"] - 9
    assert r["margin"] == m
    deg = (
        "extreme_success"
        if m >= 4
        else "success"
        if m >= 0
        else "failure"
        if m >= -3
        else "extreme_failure"
    )
    assert r["degree"] == deg
    assert r["total"] == r["events"][0]["faces"][0] + 2  # "roll 1d12 and add a modifier"


# --------------------------------------------------------------------------- paths


def test_straight_run_sprint_and_walk(mymap):
    """Seed 000: "You may use an action to move up to your speed"; RULES.md 1: "a turn may spend 1,
    2 or 3 actions on moving"; CONTRACT: paces walk/run/sprint = 1/2/3 actions.
    PHYS 1 (35 ft), 39 cells = 195 ft: sprint 195/105 = 13/7 turns, run 195/70 = 39/14,
    walk 195/35 = 39/7."""
    m = mymap(["." * 40])
    for pace, turns in (("sprint", F(13, 7)), ("run", F(39, 14)), ("walk", F(39, 7))):
        p = path(m, "phys=1", "0,0", "39,0", pace)
        assert p["distance"] == 195
        assert abs(p["turns"] - float(turns)) < 1e-9, pace
        assert all(s["mode"] == "walk" for s in p["steps"])
        assert p["p_no_failure"] == 1


def test_diagonals_alternate_5_10_5(mymap):
    """RULES.md 0: square cells use the map's diagonals, "default alternate" (1-2-1, 5-10-5).
    (0,0) -> (3,3): three diagonals 5 + 10 + 5 = 20 ft; Speed 30 at sprint (90 ft a turn):
    20/90 = 2/9 turn."""
    m = mymap(["...."] * 4)
    p = path(m, "speed=30", "0,0", "3,3")
    assert p["distance"] == 20
    assert frac(p["turns"]) == F(2, 9)


def test_hex_every_step_one_cell(tmp_path):
    """RULES.md 0: "Hex: every step is one cell". Pointy-top odd: (0,0) is cube (0,0,0), (4,4) is
    q = 4 - (4 - 0)/2 = 2, r = 4, s = -6: 6 steps = 30 ft; Speed 30 sprint: 30/90 = 1/3 turn."""
    m = tmp_path / "hex.tmx"
    m.write_text(
        tmx(
            ["." * 9] * 9,
            orientation="hexagonal",
            extra=' hexsidelength="16" staggeraxis="y" staggerindex="odd"',
        ),
        encoding="utf-8",
    )
    p = path(str(m), "speed=30", "0,0", "4,4")
    assert p["distance"] == 30
    assert len(p["cells"]) == 7
    assert frac(p["turns"]) == F(1, 3)


def test_crawl_and_cost(mymap):
    """RULES.md 1 "crawl +1" penalty: Speed 30 crawls 20 ft an action; MAP-FORMAT `cost`: "extra
    time multiplier". Five crawl cells = 25 ft at 20 ft/action = 5/4 action = 5/12 turn (sprint);
    one walk cell 5/90 = 1/18: 17/36. Rough (cost 2): two cells 2 x 2 x 1/18 + 1/18 = 5/18."""
    p = path(mymap(["._____."]), "speed=30", "0,0", "6,0")
    assert [s["mode"] for s in p["steps"][1:]] == ["crawl"] * 5 + ["walk"]
    assert frac(p["turns"]) == F(17, 36)
    p = path(mymap([".,,."]), "speed=30", "0,0", "3,0")
    assert frac(p["turns"]) == F(5, 18)


def test_multi_turn_walk_pace(mymap):
    """Seed 000 "move up to your speed" per action; walk pace = 1 Move action a turn. Speed 30,
    45 cells = 225 ft: 225/30 = 15/2 turns."""
    p = path(mymap(["." * 46]), "speed=30", "0,0", "45,0", "walk")
    assert p["distance"] == 225
    assert frac(p["turns"]) == F(15, 2)


def test_reach_walk_pace_is_30ft_by_alternate_diagonals(mymap):
    """RULES.md 0 (alternate 5-10-5) with Speed 30 and one Move action (walk pace): every cell
    whose alternate distance max(dx,dy) + floor(min(dx,dy)/2) cells is at most 6 (30 ft)."""
    m = mymap(["." * 13] * 13)
    r = tacgrid_json(
        "reach", m, *SYS, "--token", "speed=30", "--from", "6,6", "--pace", "walk", "--turns", "1"
    )
    got = {tuple(c["cell"]): frac(c["turns"]) for c in r["cells"]}
    expect = {}
    for c, rr in itertools.product(range(13), repeat=2):
        dx, dy = abs(c - 6), abs(rr - 6)
        cells = max(dx, dy) + min(dx, dy) // 2
        if cells <= 6:
            expect[(c, rr)] = F(cells, 6)  # 5 ft a cell, 30 ft a turn at walk pace
    assert got == expect


def test_reach_sprint_bands(mymap):
    """RULES.md 1: a turn spends 1, 2 or 3 Move actions; CONTRACT reach band walk/run/sprint.
    Speed 10: 2 cells an action. Straight east: 2 cells walk (1/3 turn), 4 run, 6 sprint; the
    seventh is out of reach in one turn."""
    m = mymap(["." * 8])
    r = tacgrid_json("reach", m, *SYS, "--token", "speed=10", "--from", "0,0")
    got = {c["cell"][0]: (frac(c["turns"]), c["band"]) for c in r["cells"]}
    assert got[2] == (F(1, 3), "walk")
    assert got[4] == (F(2, 3), "run")
    assert got[6] == (F(1), "sprint")
    assert 7 not in got


# ---- swimming and climbing checks


def test_swim_check_easy_water_dc6_one_move_action(mymap):
    """Seed 000: "roll Athletics (DC6) swimming check"; RULES.md 1: "the seed's DC 6 is `easy`";
    RULES.md 0: "rolled at most once per cell run ... in one move". Speed 30: swim 10 ft/action
    (+2 penalties); 2 swim cells = 1 action = 1/3 turn. One check, athletics 0: 7/12."""
    p = path(mymap([".~~"]), "speed=30", "0,0", "2,0")
    assert [s["mode"] for s in p["steps"][1:]] == ["swim", "swim"]
    assert frac(p["turns"]) == F(1, 3)
    assert checks(p) == [("DC 6", pytest.approx(7 / 12, abs=1e-12))]
    assert abs(p["p_no_failure"] - 7 / 12) < 1e-12


def test_calm_water_no_check_and_level_dcs(mymap):
    """RULES.md 1: "Calm water or an easy wall (difficulty `none`) asks none"; "moderate 9".
    Athletics 3, DC 9: d12 >= 6: 7/12. Two moderate cells and two calm ones (4 swim cells =
    2 actions = 2/3 turn; walk cell 1/18): the moderate run starts in Move action 1 and ends in it;
    one check."""
    p = path(mymap([".wwcc."]), "speed=30,athletics=3", "0,0", "5,0")
    assert frac(p["turns"]) == F(2, 3) + F(1, 18)
    assert checks(p) == [("DC 9", pytest.approx(7 / 12, abs=1e-12))]
    assert p["steps"][1]["check"] is not None
    assert all(s["check"] is None for s in p["steps"][2:])


def test_two_separate_swims_two_checks(mymap):
    """RULES.md 0: a check "on entering the first cell of a stretch of the same mode and
    difficulty": water, land, water = two stretches, two checks. (7/12)^2 = 49/144."""
    p = path(mymap([".~.~"]), "speed=30", "0,0", "3,0")
    assert len(checks(p)) == 2
    assert frac(p["p_no_failure_exact"]) == F(49, 144)


@pytest.mark.parametrize(
    "token, dc, p",
    [
        # DC 6 unencumbered; athletics 3: d12 >= 3: 10/12
        ("speed=60,capacity=2,bulk=0,athletics=3", 6, F(10, 12)),
        # "Encumbrance increases the DC by +2": DC 8; d12 >= 5: 8/12
        ("speed=60,capacity=2,bulk=3,athletics=3", 8, F(8, 12)),
        # "Heavy encumbrance increases the DC by +6": DC 12; d12 >= 9: 4/12
        ("speed=60,capacity=2,bulk=5,athletics=3", 12, F(4, 12)),
    ],
)
def test_swim_dc_with_encumbrance(mymap, token, dc, p):
    """Seed 000 Swimming: "Encumbrance increases the DC by +2. Heavy encumbrance increases the DC
    by +6." (RULES.md 1: "+2 if encumbered, +6 if heavily encumbered")."""
    out = path(mymap([".~"]), token, "0,0", "1,0")
    assert checks(out) == [(f"DC {dc}", pytest.approx(float(p), abs=1e-12))]


def test_climb_check_difficult_dc12(mymap):
    """RULES.md 1: "difficult 12"; seed 000: "Athletics (DC6) climbing check. The GM may raise or
    lower this DC". Athletics 3: d12 + 3 >= 12 <=> d12 >= 9: 4/12 = 1/3."""
    p = path(mymap([".^."]), "speed=30,athletics=3", "0,0", "2,0")
    assert p["steps"][1]["mode"] == "climb"
    assert checks(p) == [("DC 12", pytest.approx(1 / 3, abs=1e-12))]


@pytest.mark.parametrize("pace", ["walk", "run"])
def test_long_swim_checked_once_per_move_action(mymap, pace):
    """RULES.md 0: a check once per stretch "in one move (one Move action, ...)"; seed 000: "You
    may use an action to move up to your speed". Speed 30 swims 10 ft = 2 cells per Move action;
    6 swim cells = 3 Move actions, whatever the pace: 3 checks, p_no_failure (7/12)^3 = 343/1728.
    Time: 3 actions = 3 turns (walk, 1 action a turn), 3/2 (run, 2 a turn)."""
    p = path(mymap([".~~~~~~"]), "speed=30", "0,0", "6,0", pace)
    assert frac(p["turns"]) == {"walk": 3, "run": F(3, 2)}[pace]
    assert [i for i, s in enumerate(p["steps"]) if s["check"]] == [1, 3, 5]
    assert frac(p["p_no_failure_exact"]) == F(343, 1728)


def test_long_swim_at_sprint_checked_per_move_action(mymap):
    """RULES.md 0: "A check is rolled at most once per cell run: on entering the first cell of a
    stretch of the same mode and difficulty in one move (one Move action, ...)"; RULES.md 1
    "Swim/climb results (apply to the rest of that Move action)". Speed 30, sprint: swim cells
    1-2 are Move action 1, 3-4 action 2, 5-6 action 3: checks on cells 1, 3, 5.
    p_no_failure = (7/12)^3 = 343/1728."""
    p = path(mymap([".~~~~~~"]), "speed=30", "0,0", "6,0", "sprint")
    assert frac(p["turns"]) == 1
    assert [i for i, s in enumerate(p["steps"]) if s["check"]] == [1, 3, 5]
    assert frac(p["p_no_failure_exact"]) == F(343, 1728)


def test_moderate_swim_over_two_move_actions(mymap):
    """RULES.md 0 (once per stretch per Move action), RULES.md 1 "moderate 9". Athletics 3, DC 9:
    7/12 a check. 4 moderate cells at 10 ft/action = Move actions 1 and 2: checks on cells 1 and
    3; then 4 calm cells (no check): p_no_failure 49/144."""
    p = path(mymap([".wwwwcccc."]), "speed=30,athletics=3", "0,0", "9,0")
    assert frac(p["turns"]) == F(4, 3) + F(1, 18)  # 8 swim cells = 4 actions; a walk cell
    assert [i for i, s in enumerate(p["steps"]) if s["check"]] == [1, 3]
    assert frac(p["p_no_failure_exact"]) == F(49, 144)


# ---- climb height


def test_climb_cell_without_height_is_one_cell(mymap):
    """MAP-FORMAT: `height` default "(climb/ladder: one cell)"; docs/maps.md: "A climb or ladder cell
    costs its height of climbing (at least one cell)". Speed 30 climbs 10 ft/action (RULES.md 1
    "climb +2"): 5 ft = 1/2 action = 1/6 turn (sprint); then a walk cell 1/18: 2/9."""
    for rows in ([".e."], [".5."], [".H."]):
        p = path(mymap(rows), "speed=30", "0,0", "2,0")
        assert p["steps"][1]["mode"] in ("climb", "ladder")
        assert frac(p["steps"][1]["turns"]) == F(1, 6), rows
        assert frac(p["turns"]) == F(2, 9), rows


def test_climb_height_15ft(mymap):
    """MAP-FORMAT: `height` is "how far a climb goes"; docs/maps.md: "A climb or ladder cell costs its
    height of climbing (at least one cell)". Seed 000 (climb) + RULES.md 1 "climb +2": Speed 30
    climbs 10 ft per Move action. 15 ft of climbing = 3/2 action = 1/2 turn at sprint; the walk
    cell after it 5/90 = 1/18: total 5/9."""
    p = path(mymap([".t."]), "speed=30", "0,0", "2,0")
    assert frac(p["steps"][1]["turns"]) == F(1, 2)
    assert frac(p["turns"]) == F(5, 9)


def test_climb_height_10ft_cliff(mymap):
    """MAP-FORMAT `height`: "how far a climb goes". Speed 30 climbs 10 ft/action: a 10-ft cliff
    is 1 action = 1/3 turn; + walk 1/18 = 7/18."""
    p = path(mymap([".^."]), "speed=30", "0,0", "2,0")
    assert frac(p["turns"]) == F(7, 18)


# ---- standing up from prone


def test_prone_stand_up_short_move(mymap):
    """Seed 000: "Standing up must be done as part of a move action and uses 15 feet of
    movement." Speed 30 prone, 3 cells = 15 ft: 15 + 15 = 30 ft = one Move action = 1/3 turn."""
    p = path(mymap(["...."]), "speed=30,prone=true", "0,0", "3,0")
    assert frac(p["turns"]) == F(1, 3)


@pytest.mark.parametrize("pace, turns", [("sprint", F(2)), ("walk", F(6)), ("run", F(3))])
def test_prone_stand_up_once_per_path(mymap, pace, turns):
    """Seed 000: "Standing up ... uses 15 feet of movement"; RULES.md 0 "State along a path ...
    (standing up once ...)". PHYS 1, Speed 35; 39 cells = 195 ft + 15 ft standing = 210 ft:
    sprint 210/105 = 2, run 210/70 = 3, walk 210/35 = 6 turns."""
    p = path(mymap(["." * 40]), "phys=1,prone=true", "0,0", "39,0", pace)
    assert p["distance"] == 195
    assert frac(p["turns"]) == turns


def test_not_prone_baseline(mymap):
    """Control for the prone tests: PHYS 1 standing, 195 ft at sprint = 195/105 = 13/7."""
    p = path(mymap(["." * 40]), "phys=1", "0,0", "39,0")
    assert frac(p["turns"]) == F(13, 7)


def test_dragging_cannot_swim(mymap):
    """Seed 000: "Dragging something is impossible while swimming." No path into water."""
    out = path(mymap([".~"]), "speed=30,dragging=true", "0,0", "1,0", rc=1)
    assert out["cells"] == []


def test_too_much_weight_cannot_move(mymap):
    """Seed 000: "more than three times your carrying capacity ... renders you both prone and
    Immobile". PHYS 1 capacity 10, bulk 31: no path."""
    out = path(mymap(["..."]), "phys=1,bulk=31", "0,0", "2,0", rc=1)
    assert out["cells"] == []


def test_safest_path_counts_a_check_per_move_action(mymap):
    """RULES.md 0: a check "on entering the first cell of a stretch of the same mode and
    difficulty in one move (one Move action, ...)"; seed 001 "Easy | 6", RULES.md 1 "moderate 9".
    Speed 30 swims 10 ft a Move action (2 cells): the 6 easy swim cells ahead take 3 Move actions,
    3 checks, (7/12)^3 = 343/1728, in 1 turn + one walk cell (5 ft of 30: 1/18 of a turn at
    sprint). The way round (walking, one moderate climb cell: a 1d12 >= 9, 4/12) has one check,
    1/3, and is slower. So the fast path is the swim; the safe one is the way round, found only
    when the search charges each Move action's check, not one per stretch of water."""
    rows = [".~~~~~~."] + [".######."] * 6 + ["...m...."]
    m = mymap(rows)
    fast = tacgrid_json(
        "path", m, *SYS, "--token", "speed=30", "--from", "0,0", "--to", "7,0", "--prefer", "fast"
    )
    assert frac(fast["turns_exact"]) == 1 + F(1, 18)
    assert frac(fast["p_no_failure_exact"]) == F(7, 12) ** 3
    safe = tacgrid_json(
        "path", m, *SYS, "--token", "speed=30", "--from", "0,0", "--to", "7,0", "--prefer", "safe"
    )
    assert frac(safe["p_no_failure_exact"]) == F(4, 12)
    assert [s["cell"] for s in safe["steps"] if s["check"]] == [[3, 7]]
    assert safe["on_failure"] == ["fall"]  # RULES.md 1: a climbing extreme failure is a fall
    assert [c["p_no_failure"] for c in safe["pareto"]] == [
        pytest.approx(float(F(7, 12) ** 3)),
        pytest.approx(1 / 3),
    ]


def test_climb_check_lists_what_each_failure_does(mymap):
    """Seed 000: "Failure: climb takes longer than expected; receive +1 movement penalty. Extreme
    failure: climb results in a fall"; seed 001: "Fail by 0-3 | Failure", "Fail by 4+ | Extreme
    Failure". Athletics 0 vs DC 9 (moderate): d12 = 6..8 fails by 1-3 (3/12), d12 <= 5 by 4+
    (5/12). What a failure does on the path: a fall (RULES.md 1: "climbing gives a fall from the
    height climbed so far")."""
    p = path(mymap([".m."]), "speed=30", "0,0", "2,0")
    step = p["steps"][1]
    assert step["on_failure"] == "fall" and p["on_failure"] == ["fall"]
    got = {f["degree"]: frac(f["p_exact"]) for f in step["check"]["failures"]}
    assert got == {"failure": F(3, 12), "extreme_failure": F(5, 12)}
    assert frac(p["p_no_failure_exact"]) == F(4, 12)
