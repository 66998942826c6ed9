"""Fidelity suite for Star Wars D6 REUP (`--system d6`), seed 003 and RULES.md sections 0 and 3.

Every expected number below is derived by hand from the seed text
(../shared/seeds/003_1149d315bc4baa0f.txt) and, where the seed is silent, from RULES.md's
rulings; each test quotes its source. The dice arithmetic is done here, independently, with
exact fractions (`p_ge` below), never read back from tacgrid.
"""

from __future__ import annotations

import math
import re
from fractions import Fraction as F

import pytest
import tmxtext

from .conftest import tacgrid_json

SIX = F(1, 6)

# ---------------------------------------------------------------------------------------------
# Dice, from the seed and RULES.md 3:
#   "a code XD+Y is X six-sided dice plus Y pips; 3 pips = 1D. Wild die (ruling): on by default:
#    one die of the pool explodes on 6 (roll again and add, repeatedly); a 1 on it is a
#    complication only"  -> the wild die's 1 changes nothing in the total.
# ---------------------------------------------------------------------------------------------


def _code(dice: str) -> tuple[int, int]:
    n, _, pips = dice.upper().partition("D")
    return int(n), int(pips or 0)


def _plain(n: int) -> dict[int, F]:
    """Distribution of the sum of n ordinary d6."""
    dist = {0: F(1)}
    for _ in range(n):
        nxt: dict[int, F] = {}
        for total, p in dist.items():
            for face in range(1, 7):
                nxt[total + face] = nxt.get(total + face, F(0)) + p * SIX
        dist = nxt
    return dist


def _wild_ge(t: int) -> F:
    """P(W >= t) for the wild die W (a 6 is 6 + another W)."""
    if t <= 1:
        return F(1)
    if t <= 6:
        return F(7 - t, 6)  # faces t..6 (a 6 is at least 7 anyway)
    return SIX * _wild_ge(t - 6)  # must roll a 6, then W' >= t - 6


def _wild_eq(v: int) -> F:
    """P(W == v): (v // 6) sixes, then a face 1..5."""
    if v < 1 or v % 6 == 0:
        return F(0)
    return SIX ** (v // 6 + 1)


def p_ge(dice: str, dn: int, wild: bool = True) -> F:
    """Exact P(roll of the code >= dn)."""
    n, pips = _code(dice)
    if n == 0:
        return F(int(pips >= dn))
    if not wild:
        return sum((p for t, p in _plain(n).items() if t + pips >= dn), F(0))
    return sum((p * _wild_ge(dn - pips - t) for t, p in _plain(n - 1).items()), F(0))


def p_eq(dice: str, v: int) -> F:
    n, pips = _code(dice)
    return sum((p * _wild_eq(v - pips - t) for t, p in _plain(n - 1).items()), F(0))


def close(got: float, want: F) -> bool:
    return math.isclose(got, float(want), rel_tol=1e-12, abs_tol=0.0)


def fr(value: int | float | str) -> F:
    """A stats figure (int, float or an exact "20/3" string) as a Fraction."""
    return F(value)


# RULES.md 3: "very_easy 3, easy 8, moderate 13, difficult 18, very_difficult 25, heroic 31;
# each level above heroic adds 10."
LEVELS = ["very_easy", "easy", "moderate", "difficult", "very_difficult", "heroic"]
DN = {"very_easy": 3, "easy": 8, "moderate": 13, "difficult": 18, "very_difficult": 25}


def dn_at(index: int) -> int:
    """DN of level index (0 = very_easy); 5 = heroic 31, 6 = heroic+10 41, 7 = 51."""
    if index >= 5:
        return 31 + 10 * (index - 5)
    return DN[LEVELS[index]]


# ---------------------------------------------------------------------------------------------
# Maps: a D6 tileset with every difficulty level (same XML as tests/tmxtext.py).
# ---------------------------------------------------------------------------------------------

D6_LEGEND = {
    ".": {"terrain": "open", "move": "walk"},
    "#": {"terrain": "wall", "move": "blocked"},
    "v": {"terrain": "clear", "move": "walk", "difficulty": "very_easy"},
    "e": {"terrain": "uneven", "move": "walk", "difficulty": "easy"},
    "m": {"terrain": "rough", "move": "walk", "difficulty": "moderate"},
    "d": {"terrain": "forest", "move": "walk", "difficulty": "difficult"},
    "x": {"terrain": "minefield", "move": "walk", "difficulty": "very_difficult"},
    "h": {"terrain": "avalanche", "move": "walk", "difficulty": "heroic"},
    "7": {"terrain": "hill", "move": "walk", "difficulty": "difficult", "dn": 17},
    "w": {"terrain": "calm", "move": "swim"},
    "W": {"terrain": "storm", "move": "swim", "difficulty": "difficult"},
    "C": {"terrain": "cliff", "move": "climb", "difficulty": "difficult", "height": 2.0},
}


@pytest.fixture
def d6map(draw, monkeypatch):
    monkeypatch.setattr(tmxtext, "LEGEND", D6_LEGEND)
    monkeypatch.setattr(tmxtext, "CHARS", list(D6_LEGEND))
    return draw


def path(mapfile: str, *args: str, expect_rc: int = 0):
    return tacgrid_json("path", mapfile, "--system", "d6", *args, expect_rc=expect_rc)


def checks(result) -> list[int]:
    """The DN of every check along a path, in order."""
    return [
        int(re.findall(r"\d+", s["check"]["target"])[-1]) for s in result["steps"] if s["check"]
    ]


def stats(*args: str):
    return tacgrid_json("stats", "--system", "d6", *args)


# ---------------------------------------------------------------------------------------------
# Stats: speeds from Move
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("move", [10, 12, 8, 7])
def test_rates_from_move(move):
    """Seed: "Cautious ... Move / 2", "Cruising ... Move", "High Speed ... Move x 2",
    "All-Out ... Move x 4"; "For unusual movement (swimming, climbing, etc.), Move is normally
    one-third normal Move". RULES.md 3: "Swim and climb: Move / 3 as the base for every speed";
    "rounds of 5 s; square or hex cells of 2 m". CONTRACT: per_turn = cells in an all-out round.
    """
    r = stats("--token", f"move={move}", "--json")
    m = F(move)
    factor = {"cautious": F(1, 2), "cruising": F(1), "high": F(2), "all_out": F(4)}
    for speed, k in factor.items():
        # e.g. move 10: walk 5 / 10 / 20 / 40 m; swim and climb 5/3, 10/3, 20/3, 40/3 m
        assert fr(r["rates"][speed]["walk"]) == m * k, speed
        assert fr(r["rates"][speed]["swim"]) == m / 3 * k, speed
        assert fr(r["rates"][speed]["climb"]) == m / 3 * k, speed
    # per_turn: all-out round / 2 m cell: walk 4M/2, swim and climb (4M/3)/2
    assert fr(r["per_turn"]["walk"]) == 4 * m / 2
    assert fr(r["per_turn"]["swim"]) == 4 * m / 3 / 2
    assert fr(r["per_turn"]["climb"]) == 4 * m / 3 / 2
    assert r["unit"] == "m" and fr(r["cell_size"]) == 2


@pytest.mark.parametrize("move", [1, 2])
def test_rates_small_move(move):
    """Seed: speeds are Move/2, Move, 2 x Move, 4 x Move; Move/3 for swim and climb.
    CONTRACT: errors are one line and exit 2, never a traceback; move=1 is a valid Move."""
    r = stats("--token", f"move={move}", "--json")
    m = F(move)
    # move 1: walk 1/2, 1, 2, 4 m; swim 1/6, 1/3, 2/3, 4/3 m; per_turn walk 4/2 = 2 cells
    assert fr(r["rates"]["cautious"]["walk"]) == m / 2
    assert fr(r["rates"]["all_out"]["walk"]) == 4 * m
    assert fr(r["rates"]["all_out"]["swim"]) == 4 * m / 3
    assert fr(r["per_turn"]["walk"]) == 4 * m / 2


def test_partial_moves():
    """Seed: "After choosing a speed, a character may move anywhere from half to full distance
    for that speed. Example: Move 10 at all-out allows 20-40 meters." """
    r = stats("--token", "move=10", "--json")
    # Move 10: cautious 5/2..5, cruising 5..10, high 10..20, all-out 20..40 m
    want: dict[str, tuple[F, F]] = {
        "cautious": (F(5, 2), F(5)),
        "cruising": (F(5), F(10)),
        "high": (F(10), F(20)),
        "all_out": (F(20), F(40)),
    }
    for speed, (lo, hi) in want.items():
        got = r["partial_moves"][speed]
        assert (fr(got[0]), fr(got[1])) == (lo, hi), speed


def test_acceleration_table():
    """Seed: "A character may change speed by up to two levels per round. Example: Cautious ->
    next round can be Stop, Cruise, or High Speed (not All-Out). All-Out -> next round can be
    All-Out, High Speed, or Cruise (not Cautious or Stop)." RULES.md 3: steps along
    stop < cautious < cruising < high < all-out; "stopped unless given"."""
    r = stats("--json")
    order = ["stop", "cautious", "cruising", "high", "all_out"]
    for i, prev in enumerate(order):
        # within two steps of prev
        want = [s for j, s in enumerate(order) if abs(i - j) <= 2]
        assert sorted(r["acceleration"][prev]) == sorted(want), prev
    # a stopped token (the default state) may start at cautious or cruising only
    assert r["speed"]["previous"] == "stop"
    assert sorted(r["speed"]["allowed"]) == ["cautious", "cruising", "stop"]


def test_collision_damage():
    """Seed: "Collision damage depends on speed: ... Cautious | 1D | Cruising | 2D | High Speed |
    3D | All-Out | 4D"."""
    r = stats("--json")
    assert r["collision_damage"] == {
        "cautious": "1D",
        "cruising": "2D",
        "high": "3D",
        "all_out": "4D",
    }


def test_terrain_check_table():
    """Seed: cautious "In Very Easy, Easy, Moderate terrain: free action (no roll ...)"; "In
    Difficult, Very Difficult, Heroic terrain: roll running, but reduce terrain difficulty one
    level." Cruising: "Automatic in Very Easy, Easy, Moderate terrain. Requires a roll in
    Difficult, Very Difficult, Heroic terrain." High: "Must roll running for Very Easy, Easy,
    Moderate terrain. For Difficult, Very Difficult, Heroic terrain: increase difficulty one
    level ... Heroic -> Heroic +10". All-Out: "Very Easy/Easy/Moderate: +1 difficulty level;
    Difficult/Very Difficult/Heroic: +2 difficulty levels". RULES.md 3: DNs 3, 8, 13, 18, 25,
    31, each level above heroic +10. Roll: Dexterity 3D (no running skill)."""
    table = stats("--json")["terrain_checks"]
    for i, level in enumerate(LEVELS):
        easy = i <= 2
        # cautious: free, else one level down
        c = table["cautious"][level]
        if easy:
            assert c["asks"] == "free"
        else:
            assert c["asks"] == "roll" and c["dn"] == dn_at(i - 1)
            assert close(c["p_success"], p_ge("3D", dn_at(i - 1)))
        # cruising: automatic, else at that level
        c = table["cruising"][level]
        if easy:
            assert c["asks"] == "automatic"
        else:
            assert c["asks"] == "roll" and c["dn"] == dn_at(i)
        # high: roll at that level, harder one up (heroic -> heroic+10 = 41)
        c = table["high"][level]
        shift = 0 if easy else 1
        assert c["asks"] == "roll" and c["dn"] == dn_at(i + shift)
        assert close(c["p_success"], p_ge("3D", dn_at(i + shift)))
        # all-out: one up, harder two up (heroic -> 51)
        c = table["all_out"][level]
        shift = 1 if easy else 2
        assert c["asks"] == "roll" and c["dn"] == dn_at(i + shift)
        assert close(c["p_success"], p_ge("3D", dn_at(i + shift)))


# ---------------------------------------------------------------------------------------------
# Encumbrance
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "strength, capacity",
    [("3D+2", 11), ("2D", 6), ("4D+1", 13), ("1D+2", 5)],
)
def test_encumbrance_capacity(strength, capacity):
    """Seed: "A character can carry one medium-sized object per pip of Strength. (1D = 3 pips.)
    Example: Strength 3D+2 = (3x3) + 2 = 11 medium items." RULES.md 3: optional setting."""
    # capacity = 3 x dice + pips: 3D+2 -> 11, 2D -> 6, 4D+1 -> 13, 1D+2 -> 5
    at = stats("--token", f"strength={strength},items={capacity}", "--set", "encumbrance=true")
    assert at["carrying"]["capacity_items"] == capacity
    assert at["encumbrance"] == "none" and at["carrying"]["overloaded"] is False
    over = stats(
        "--token", f"strength={strength},items={capacity + 1}", "--set", "encumbrance=true"
    )
    assert over["carrying"]["overloaded"] is True
    assert over["encumbrance"] != "none"


def test_encumbrance_off_by_default():
    """Seed: "Encumbrance (Optional) Star Wars games usually ignore encumbrance"; RULES.md 3:
    "Encumbrance (optional setting)"."""
    r = stats("--token", "strength=2D,items=30", "--json")
    assert r["encumbrance"] == "none"
    assert r["carrying"]["overloaded"] is False


def test_overloaded_keeps_speeds():
    """Seed: "Overloaded characters may trigger long-distance movement and stamina rules."
    RULES.md 3 (ruling): "an overloaded token rolls stamina on the long-distance schedule for the
    speed it moves at (all-out every minute = 12 rounds, ...)" -- it can still move all-out."""
    r = stats("--token", "strength=3D+2,items=12", "--set", "encumbrance=true", "--json")
    # Move 10, all-out 4 x 10 = 40 m = 20 cells of 2 m
    assert fr(r["rates"]["all_out"]["walk"]) == 40
    assert fr(r["per_turn"]["walk"]) == 20


def test_overload_setting_exists():
    """RULES.md 3: "setting `overload = stamina | none`, default `stamina`"."""
    r = stats("--set", "overload=none", "--json")
    assert r["settings"]["overload"] == "none"
    assert stats("--json")["settings"]["overload"] == "stamina"


# ---------------------------------------------------------------------------------------------
# Odds of a roll (wild die, exact)
# ---------------------------------------------------------------------------------------------


def odds(*check: str):
    return tacgrid_json("odds", "--system", "d6", *check)


@pytest.mark.parametrize(
    "dice, dn, want",
    [
        # 3D+1 vs 13: 2 plain d6 + wild + 1 >= 13
        ("3D+1", 13, p_ge("3D+1", 13)),
        # 3D vs 8: every failure is a total of 3..7, none reachable through an explosion:
        # 1 - 35/216 = 181/216
        ("3D", 8, F(181, 216)),
        ("3D", 18, p_ge("3D", 18)),
        # 1D vs 7: the wild die alone must explode: 1/6
        ("1D", 7, F(1, 6)),
        # 1D vs 2: a 1 on the wild die is a complication only, and a total of 1 fails: 5/6
        ("1D", 2, F(5, 6)),
        # 1D vs 13: two sixes then anything: 1/36
        ("1D", 13, F(1, 36)),
        # edge: DN at or below the lowest total always succeeds
        ("1D", 1, F(1)),
        ("2D+2", 4, F(1)),
        ("2D", 30, p_ge("2D", 30)),
        ("4D+2", 31, p_ge("4D+2", 31)),
    ],
)
def test_odds_p_success(dice, dn, want):
    """RULES.md 3: "Wild die (ruling): on by default: one die of the pool explodes on 6 (roll
    again and add, repeatedly); a 1 on it is a complication only". Seed: "3. Success: move
    normally" (roll >= difficulty number)."""
    r = odds(f"dice={dice}", f"dn={dn}")
    assert close(r["p_success"], want)


@pytest.mark.parametrize("dice, dn", [("3D+1", 13), ("2D", 30), ("3D", 18)])
def test_odds_failure_margins(dice, dn):
    """Seed: "If the movement roll fails, find the margin of failure: ... 1-3 | Slight slip ...
    4-6 | Slip ... 7-10 | Fall ... 11-15 | Minor tumble ... 16-20 | Tumble ... 21+ | Major
    tumble". RULES.md 3: "Failure by margin (DN - roll)"."""
    r = odds(f"dice={dice}", f"dn={dn}")["outcomes"]
    # margin m = dn - total; a bucket is the sum of P(total = dn - m) over its margins
    buckets = {"fail_1_3": (1, 3), "fail_4_6": (4, 6), "fail_7_10": (7, 10)}
    buckets |= {"fail_11_15": (11, 15), "fail_16_20": (16, 20)}
    for name, (lo, hi) in buckets.items():
        want = sum((p_eq(dice, dn - m) for m in range(lo, hi + 1)), F(0))
        assert close(r[name], want), name
    rest = 1 - p_ge(dice, dn) - sum((p_eq(dice, dn - m) for m in range(1, 21)), F(0))  # margin 21+
    assert math.isclose(r["fail_21_plus"], float(rest), rel_tol=1e-12, abs_tol=1e-15)
    assert close(r["success"], p_ge(dice, dn))


@pytest.mark.parametrize("actions, pool", [(2, "2D+1"), (3, "1D+1")])
def test_odds_multi_action_penalty(actions, pool):
    """RULES.md 3: "Multi-action penalty: -1D on every roll of the round per action beyond the
    first." (seed example: walking and firing, "she takes -1D")."""
    # 3D+1 with 2 actions -> 2D+1; with 3 actions -> 1D+1
    r = odds("dice=3D+1", "dn=13", f"actions={actions}")
    assert close(r["p_success"], p_ge(pool, 13))


def test_odds_without_wild_die():
    """RULES.md 3: the wild die is a ruling with a setting; without it 3D vs 13 is plain 3d6:
    totals 13..18 = 56 of 216 = 7/27."""
    r = odds("dice=3D", "dn=13", "wild=no")
    assert close(r["p_success"], F(7, 27))


@pytest.mark.parametrize("seed", range(1, 13))
def test_roll_degree_matches_margin(seed):
    """Seed: "Failure Margin ... | 1-3 | ... | 4-6 | ... | 7-10 | ... | 11-15 | ... | 16-20 | ... |
    21+". A seeded roll's degree is the bucket of its margin (total - DN)."""
    r = tacgrid_json("roll", "--system", "d6", "dice=2D+1", "dn=14", "--seed", str(seed))
    assert r["margin"] == r["total"] - 14
    fail = 14 - r["total"]
    if fail <= 0:
        want = "success"
    else:
        want = next(
            name
            for name, lo, hi in [
                ("fail_1_3", 1, 3),
                ("fail_4_6", 4, 6),
                ("fail_7_10", 7, 10),
                ("fail_11_15", 11, 15),
                ("fail_16_20", 16, 20),
                ("fail_21_plus", 21, 10**9),
            ]
            if lo <= fail <= hi
        )
    assert r["degree"] == want
    assert r["success"] is (fail <= 0)


# ---------------------------------------------------------------------------------------------
# Paths and reach: acceleration (state carried from round to round)
# ---------------------------------------------------------------------------------------------

P_EASY = p_ge("3D", 8)  # 181/216: an all-out round on open ground (none = very_easy -> easy)


@pytest.mark.parametrize(
    "goal, turns, p",
    [
        # 5 cells = 10 m: round 1 cruising (full 10 m) on very_easy: automatic, no roll
        (5, F(1), F(1)),
        # 25 cells = 50 m: round 1 cruising 10 m, round 2 all-out 40 m (cruising -> all-out
        # is two levels); only round 2 rolls: very_easy -> easy DN 8
        (25, F(2), P_EASY),
        # 40 cells = 80 m: 10 m + 40 m, then 30 m all-out (within 20..40) = 30/40 round
        (40, F(2) + F(30, 40), P_EASY**2),
    ],
)
def test_path_from_stop(d6map, goal, turns, p):
    """Seed: "A character may change speed by up to two levels per round." RULES.md 3: "The
    round's speed is token state (stopped unless given); it changes by at most two steps a
    round, so paths and reach from a standing start begin at cautious or cruising." RULES.md 0:
    time = distance / rate. Seed: cruising is "Automatic in Very Easy, Easy, Moderate"; all-out
    "Very Easy/Easy/Moderate: +1 difficulty level"; RULES.md 3: "Difficulty `none` counts as
    very_easy here"."""
    m = d6map(["." * 60])
    r = path(m, "--from", "0,0", "--to", f"{goal},0")
    assert r["distance"] == 2 * goal
    assert close(r["turns"], turns)
    assert close(r["p_no_failure"], p)


@pytest.mark.parametrize(
    "how",
    [
        pytest.param(("--token", "speed=high"), id="token"),
        pytest.param(("--set", "start_speed=high"), id="setting"),
    ],
)
@pytest.mark.parametrize(
    "goal, turns, p",
    [
        # high -> all-out is one level: 20 cells = 40 m in round 1, one roll DN 8
        (20, F(1), P_EASY),
        # 40 cells: two full all-out rounds, one roll each
        (40, F(2), P_EASY**2),
    ],
)
def test_path_from_high(d6map, how, goal, turns, p):
    """Seed: "A character may change speed by up to two levels per round"; high -> all-out is
    one level. All-out "Very Easy/Easy/Moderate: +1 difficulty level" (open = very_easy ->
    easy, DN 8, Dexterity 3D: 181/216)."""
    m = d6map(["." * 60])
    r = path(m, *how, "--from", "0,0", "--to", f"{goal},0")
    assert close(r["turns"], turns)
    assert close(r["p_no_failure"], p)
    assert checks(r) == [8] * (goal // 20)


@pytest.mark.parametrize("how", [("--token", "speed=cautious"), ("--set", "start_speed=cautious")])
def test_path_from_cautious(d6map, how):
    """Seed: "Cautious -> next round can be Stop, Cruise, or High Speed (not All-Out)"."""
    m = d6map(["." * 60])
    r = path(m, *how, "--from", "0,0", "--to", "30,0")
    # round 1 high: 20 m = 10 cells, roll at very_easy DN 3 (3D always >= 3: p 1);
    # round 2 all-out: 40 m = 20 cells, roll DN 8.  30 cells -> 2 rounds, p = 181/216
    assert close(r["turns"], F(2))
    assert close(r["p_no_failure"], P_EASY)


def test_path_high_pace_from_stop(d6map):
    """Seed: two levels per round: stop -> cruising -> high. High: "Must roll running for Very
    Easy, Easy, Moderate terrain" (open = very_easy, DN 3)."""
    m = d6map(["." * 40])
    r = path(m, "--token", "dexterity=1D", "--pace", "high", "--from", "0,0", "--to", "15,0")
    # round 1 cruising 10 m = 5 cells (automatic); round 2 high 20 m = 10 cells, one roll:
    # 1D (the wild die) >= 3: faces 3..6 = 2/3
    assert close(r["turns"], F(2))
    assert close(r["p_no_failure"], F(2, 3))


def reach_max_col(result) -> int:
    return max(c["cell"][0] for c in result["cells"])


@pytest.mark.parametrize(
    "turns, pace, far",
    [
        # round 1 from a stop: cruising 10 m = 5 cells
        (1, "all_out", 5),
        # then all-out 40 m = 20 cells: 25
        (2, "all_out", 25),
        # pace high: cruising 5 cells, then high 20 m = 10 cells: 15
        (2, "high", 15),
    ],
)
def test_reach_from_stop(d6map, turns, pace, far):
    """RULES.md 3: "paths and reach from a standing start begin at cautious or cruising"."""
    m = d6map(["." * 60])
    r = tacgrid_json(
        "reach", m, "--system", "d6", "--from", "0,0", "--turns", str(turns), "--pace", pace
    )
    assert reach_max_col(r) == far


@pytest.mark.parametrize(
    "how",
    [
        pytest.param(("--token", "speed=high"), id="token"),
        pytest.param(("--set", "start_speed=high"), id="setting"),
    ],
)
def test_reach_from_high(d6map, how):
    """Seed: high -> all-out is one level; all-out = Move x 4 = 40 m = 20 cells a round."""
    m = d6map(["." * 60])
    r = tacgrid_json("reach", m, "--system", "d6", *how, "--from", "0,0", "--turns", "1")
    assert reach_max_col(r) == 20


# ---------------------------------------------------------------------------------------------
# Paths: one roll per round, at the hardest cell crossed that round
# ---------------------------------------------------------------------------------------------


def test_all_out_one_roll_per_round(d6map):
    """RULES.md 3: "What terrain asks (one roll per round's move, at the hardest cell crossed
    that round, ruling) ... All-out: very_easy..moderate one level up, harder: two levels up"."""
    m = d6map([".eemd" + "." * 10 + "m" * 30])
    r = path(m, "--set", "start_speed=all_out", "--from", "0,0", "--to", "40,0")
    # round 1: cells 1..20 (40 m): hardest is difficult (col 4) -> +2 = heroic DN 31
    # round 2: cells 21..40, all moderate -> +1 = difficult DN 18
    assert close(r["turns"], F(2))
    assert checks(r) == [31, 18]
    assert close(r["p_no_failure"], p_ge("3D", 31) * p_ge("3D", 18))


def test_high_one_roll_at_hardest(d6map):
    """RULES.md 3: "High: very_easy..moderate roll at that level, harder: one level up". Seed:
    "Heroic -> Heroic +10"; RULES.md 3: "each level above heroic adds 10" (41)."""
    m = d6map(["..e..h" + "." * 30])
    r = path(m, "--set", "start_speed=high", "--pace", "high", "--from", "0,0", "--to", "10,0")
    # one round at high: 20 m = 10 cells; hardest heroic -> heroic+10, DN 41
    assert close(r["turns"], F(1))
    assert checks(r) == [41]
    assert close(r["p_no_failure"], p_ge("3D", 41))


def test_cautious_one_roll_at_hardest(d6map):
    """Seed: cautious "In Difficult, Very Difficult, Heroic terrain: roll running, but reduce
    terrain difficulty one level"; free in Moderate or easier. RULES.md 3: one roll per round at
    the hardest cell crossed."""
    m = d6map(["m" * 5 + "x" * 3 + "d" * 4 + "." * 4])
    r = path(m, "--token", "move=8", "--pace", "cautious", "--from", "0,0", "--to", "12,0")
    # Move 8: cautious 4 m = 2 cells a round.  r1 cells 1-2 (m), r2 3-4 (m): free;
    # r3 5-6 (x): very_difficult -> difficult DN 18; r4 7 (x), 8 (d): hardest x -> DN 18;
    # r5 9-10 (d) -> moderate DN 13; r6 11-12 (d) -> DN 13
    assert close(r["turns"], F(6))
    assert checks(r) == [18, 18, 13, 13]
    want = p_ge("3D", 18) ** 2 * p_ge("3D", 13) ** 2
    assert close(r["p_no_failure"], want)


def test_cautious_free_in_moderate(d6map):
    """Seed: cautious "In Very Easy, Easy, Moderate terrain: free action (no roll, no
    multi-action penalty)"."""
    m = d6map(["veem" + "m" * 10])
    r = path(m, "--token", "move=8", "--pace", "cautious", "--from", "0,0", "--to", "8,0")
    # 8 cells x 2 m = 16 m at 4 m a round = 4 rounds, no roll
    assert close(r["turns"], F(4))
    assert checks(r) == []
    assert close(r["p_no_failure"], F(1))


def test_cruising_difficult_one_roll(d6map):
    """Seed: cruising "Requires a roll in Difficult, Very Difficult, Heroic terrain"; "Rhen walks
    up a steep hill (Difficult, DN 16) ... moves 10 meters". RULES.md 3: difficult 18; cruising
    may be chosen from a stop (two levels)."""
    m = d6map(["...d.." + "." * 20])
    r = path(m, "--pace", "cruising", "--from", "0,0", "--to", "10,0")
    # round 1: cells 1-5 (10 m) cross the difficult cell: Dexterity 3D vs DN 18;
    # round 2: cells 6-10 on open ground: automatic
    assert close(r["turns"], F(2))
    assert checks(r) == [18]
    assert close(r["p_no_failure"], p_ge("3D", 18))


def test_cell_dn_overrides_level(d6map):
    """RULES.md 3: "A cell may give its own number (`dn`)". Seed example: "steep hill
    (Difficult, DN 16)". Cruising rolls at the cell's level, so at its own number, 17."""
    m = d6map(["..7..." + "." * 20])
    r = path(m, "--pace", "cruising", "--from", "0,0", "--to", "5,0")
    assert close(r["turns"], F(1))
    assert checks(r) == [17]
    assert close(r["p_no_failure"], p_ge("3D", 17))


def test_running_skill_replaces_dexterity(d6map):
    """Seed: "Walking/Running: running skill (or Dexterity if not improved)"."""
    m = d6map(["...d.." + "." * 20])
    r = path(
        m,
        "--token",
        "dexterity=2D,running=5D",
        "--pace",
        "cruising",
        "--from",
        "0,0",
        "--to",
        "5,0",
    )
    # running 5D vs difficult DN 18
    assert close(r["p_no_failure"], p_ge("5D", 18))


@pytest.mark.parametrize(
    "token, pool",
    [("move=12,swimming=4D,strength=2D", "4D"), ("move=12,strength=2D+1", "2D+1")],
)
def test_swim_rate_and_skill(d6map, token, pool):
    """Seed: "Swimming: swimming skill (or Strength)"; "For unusual movement (swimming,
    climbing, etc.), Move is normally one-third normal Move". Cruising "Requires a roll in
    Difficult" terrain."""
    m = d6map([".WWWW" + "w" * 10])
    r = path(m, "--token", token, "--pace", "cruising", "--from", "0,0", "--to", "4,0")
    # Move 12: swim 4 m a round = 2 cells; 4 storm cells = 2 rounds, one roll each at DN 18
    assert [s["mode"] for s in r["steps"][1:]] == ["swim"] * 4
    assert close(r["turns"], F(2))
    assert checks(r) == [18, 18]
    assert close(r["p_no_failure"], p_ge(pool, 18) ** 2)


def test_calm_water_cruising_no_roll(d6map):
    """Seed: cruising "Automatic in Very Easy, Easy, Moderate terrain"; swim Move / 3.
    RULES.md 3: "Difficulty `none` counts as very_easy here"."""
    m = d6map(["." + "w" * 20])
    r = path(m, "--token", "move=12", "--pace", "cruising", "--from", "0,0", "--to", "10,0")
    # 10 cells x 2 m = 20 m at 4 m a round = 5 rounds, automatic
    assert close(r["turns"], F(5))
    assert checks(r) == []


def test_climb_skill(d6map):
    """Seed: "Climbing: climbing/jumping skill (or Strength)"; Move / 3 when climbing."""
    m = d6map(["." + "C" * 6])
    r = path(
        m, "--token", "move=12,climbing=4D+2", "--pace", "cruising", "--from", "0,0", "--to", "2,0"
    )
    # Move 12: climb 4 m a round = 2 cells of 2 m: 1 round, climbing 4D+2 vs DN 18
    assert close(r["turns"], F(1))
    assert checks(r) == [18]
    assert close(r["p_no_failure"], p_ge("4D+2", 18))


def test_square_alternate_diagonals(d6map):
    """RULES.md 0: square `alternate` diagonals (1-2-1) by default; time = distance / rate."""
    m = d6map(["." * 8] * 8)
    r = path(m, "--token", "move=8", "--pace", "cruising", "--from", "0,0", "--to", "4,4")
    # 4 diagonals: 1 + 2 + 1 + 2 = 6 cells = 12 m at 8 m a round: 3/2 rounds
    assert r["distance"] == 12
    assert close(r["turns"], F(3, 2))


@pytest.mark.parametrize(
    "start, goal, cells",
    [
        ((0, 1), (10, 1), 10),
        # pointy-top, odd rows shifted: (0,0) -> cube (0,0); (3,2) -> q = 3 - 1 = 2, r = 2,
        # s = -4: 4 steps
        ((0, 0), (3, 2), 4),
    ],
)
def test_hex_cruising(d6map, start, goal, cells):
    """RULES.md 0: "Hex: every step is one cell"; RULES.md 3: cells of 2 m, cruising = Move."""
    m = d6map(["." * 16] * 4, orientation="hexagonal", tile=(32, 28), hexside=16)
    r = path(
        m, "--pace", "cruising", "--from", f"{start[0]},{start[1]}", "--to", f"{goal[0]},{goal[1]}"
    )
    # cells x 2 m at 10 m a round
    assert r["distance"] == 2 * cells
    assert close(r["turns"], F(2 * cells, 10))
    assert close(r["p_no_failure"], F(1))


# ---------------------------------------------------------------------------------------------
# Long distance (stats --distance)
# ---------------------------------------------------------------------------------------------


def _levels_dn(count: int) -> list[int]:
    # "First roll: Very Easy; increase one level each additional roll"
    return [dn_at(i) for i in range(count)]


def test_long_distance_schedule():
    """Seed: "All-Out (sprinting) - Make a stamina roll every minute. First roll: Very Easy;
    increase one level each additional roll. If failed: must rest twice as long as sprint
    duration." "High Speed (running) - Make a stamina roll every 10 minutes." "Long Marches
    (Cruising) - Very Easy stamina every 3 hours ... forced march with no breaks: check every 2
    hours. 1 hour of sleep per stamina check". RULES.md 3: rounds of 5 s; stamina (else
    Strength)."""
    r = stats("--token", "stamina=2D", "--distance", "25000", "--json")["long_distance"]["speeds"]
    # cruising: 25000 m / 10 m = 2500 rounds = 12500 s: one check at 10800 s, Very Easy
    cru = r["cruising"]
    assert cru["rounds"] == 2500 and cru["time_s"] == 12500
    assert [c["at_s"] for c in cru["checks"]] == [10800]
    assert cru["checks"][0]["dn"] == 3
    assert cru["sleep_h"] == 1
    # forced march: every 2 h = 7200 s: one check at 7200
    assert [c["at_s"] for c in r["cruising_forced"]["checks"]] == [7200]
    # high: 25000 / 20 = 1250 rounds = 6250 s: checks at 600, 1200, ..., 6000 (10 checks),
    # DN 3, 8, 13, 18, 25, 31, 41, 51, 61, 71; rest twice the run so far
    high = r["high"]
    assert high["rounds"] == 1250 and high["time_s"] == 6250
    assert [c["at_s"] for c in high["checks"]] == [600 * k for k in range(1, 11)]
    assert [c["dn"] for c in high["checks"]] == _levels_dn(10)
    assert [c["rest_if_failed_s"] for c in high["checks"]] == [1200 * k for k in range(1, 11)]
    want = F(1)
    for dn in _levels_dn(10):
        want *= p_ge("2D", dn)  # stamina 2D: DN 3 -> 35/36, ...
    assert close(high["p_arrive"], want)
    # all-out: 25000 / 40 = 625 rounds = 3125 s: a check each 60 s up to 3120: 52 checks
    ao = r["all_out"]
    assert ao["rounds"] == 625 and ao["time_s"] == 3125
    assert [c["at_s"] for c in ao["checks"]] == [60 * k for k in range(1, 53)]
    assert [c["dn"] for c in ao["checks"]][:7] == [3, 8, 13, 18, 25, 31, 41]
    assert ao["checks"][0]["rest_if_failed_s"] == 120


def test_long_distance_40km():
    """Seed: stamina every 3 hours cruising (2 forced), every 10 minutes high, every minute
    all-out; first Very Easy, one level more each roll."""
    r = stats("--distance", "40000", "--json")["long_distance"]["speeds"]
    # cruising 4000 rounds = 20000 s: check at 10800 only (21600 > 20000)
    assert [c["at_s"] for c in r["cruising"]["checks"]] == [10800]
    # forced: 7200, 14400: Very Easy then Easy; Strength 3D: 1 x 181/216
    assert [c["dn"] for c in r["cruising_forced"]["checks"]] == [3, 8]
    assert close(r["cruising_forced"]["p_arrive"], F(181, 216))
    # high: 2000 rounds = 10000 s: checks at 600 .. 9600: 16
    assert len(r["high"]["checks"]) == 16
    # all-out: 1000 rounds = 5000 s: checks at 60 .. 4980: 83
    assert len(r["all_out"]["checks"]) == 83


def test_failure_by_margin_listed_on_the_check(d6map):
    """Seed 003: "If the movement roll fails, find the margin of failure": 1-3 "Slight slip:
    Complete movement, but -1D"; 4-6 "Slip: Move half distance"; 7-10 "Fall: Fall halfway"; 11-15
    "Minor tumble: Fall after one-quarter move". Cruising through a difficult cell (RULES.md 3:
    DN 18) with Dexterity 3D: a total of 15-17 fails by 1-3, 12-14 by 4-6, 8-11 by 7-10, 3-7 by
    11-15 (3D totals at least 3, so no margin of 16+). The path says a failure acts by margin."""
    m = d6map(["...d.." + "." * 20])
    r = path(m, "--pace", "cruising", "--from", "0,0", "--to", "10,0")
    (step,) = [s for s in r["steps"] if s["check"]]
    assert step["on_failure"] == "by_margin" and r["on_failure"] == ["by_margin"]
    got = {f["degree"]: F(f["p_exact"]) for f in step["check"]["failures"]}

    def between(lo: int, hi: int) -> F:
        return sum((p_eq("3D", v) for v in range(lo, hi + 1)), F(0))

    assert got == {
        "fail_1_3": between(15, 17),
        "fail_4_6": between(12, 14),
        "fail_7_10": between(8, 11),
        "fail_11_15": between(3, 7),
    }
    assert sum(got.values()) == 1 - p_ge("3D", 18)
