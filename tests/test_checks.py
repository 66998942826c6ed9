"""Checks of every system: seed examples, exact odds, seeded rolls, errors, reports."""

from __future__ import annotations

import itertools
import json
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.stats import chisquare

from engine.dice import Dice, keep_lowest
from engine.errors import CheckError
from engine.report.dice import format_odds, format_roll, odds_report, roll_report
from engine.systems import d6, load_check, mythmaster, speedpoints, whisperspace

# Checks covering each system's options: (system, CHECK text).
CASES = [
    ("whisperspace", "athletics=2 dc=6 bonus=1"),
    ("whisperspace", "mod=-1 dc=9 penalty=2"),
    ("whisperspace", "skill=3 dc=12 bonus=1 penalty=1"),
    ("mythmaster", "skill=15 adjust=-2"),
    ("mythmaster", "skill=9 adjust=1 untrained"),
    ("mythmaster", "skill=10 versus=11"),
    ("mythmaster", "skill=12 bf=2 versus=9 tie=roller untrained"),
    ("d6", "dice=3D+1 dn=13"),
    ("d6", "dice=4D+2 dn=20 actions=2 wild_one=remove_highest"),
    ("d6", "dice=2D dn=9 wild=no"),
    ("d6", "dice=1D+1 dn=8 wild_one=none"),
    ("speedpoints", "ability=4 difficulty=5"),
    ("speedpoints", "climbing=2 difficulty=10 resolver=3d6"),
]

DEGREES = {
    "whisperspace": ["extreme_success", "success", "failure", "extreme_failure"],
    "mythmaster": ["critical_success", "success", "failure", "catastrophe"],
    "d6": [
        "success",
        "fail_1_3",
        "fail_4_6",
        "fail_7_10",
        "fail_11_15",
        "fail_16_20",
        "fail_21_plus",
    ],
    "speedpoints": ["success", "failure"],
}


# --------------------------------------------------------------------------- every system


@pytest.mark.parametrize("system,text", CASES)
def test_outcomes_are_exact_ordered_and_sum_to_one(system, text):
    check = load_check(system, text)
    outcomes = check.outcomes()
    assert all(isinstance(p, Fraction) and p >= 0 for p in outcomes.values())
    assert sum(outcomes.values()) == 1
    expected = DEGREES[system]
    if "untrained" in text:
        expected = [d for d in expected if d != "critical_success"]
    assert list(outcomes) == expected
    assert check.p_success() == sum(p for name, p in outcomes.items() if "success" in name)


@pytest.mark.parametrize("system,text", CASES)
def test_batch_rolls_equal_single_rolls(system, text):
    check = load_check(system, text)
    one, many = Dice(77), Dice(77)
    singles = [check.roll(one) for _ in range(2000)]
    batch = check.roll_many(many, 2000)
    assert [r.total for r in singles] == batch.totals.tolist()
    assert [r.margin for r in singles] == batch.margins.tolist()
    assert [r.degree for r in singles] == [batch.degree(i) for i in range(2000)]
    assert [r.success for r in singles] == batch.success.tolist()
    assert one.face(1000) == many.face(1000)  # the stream is left in the same state


@pytest.mark.parametrize("system,text", CASES)
def test_a_roll_records_its_events_with_the_degree(system, text):
    check = load_check(system, text)
    dice = Dice(3)
    result = check.roll(dice)
    assert tuple(dice.events()) == result.events
    assert result.events[0].decided == result.degree
    assert result.success == (result.degree in ("success", "extreme_success", "critical_success"))
    assert result.degree in check.outcomes()
    json.dumps(result.to_dict())
    again = check.roll(Dice(3))
    assert again == result  # same seed, same roll


def merged_chisquare(observed: dict, expected_p: dict, n: int) -> float:
    """Chi-square p-value, pooling bins whose expected count is under 5 into one."""
    obs, exp, pool_o, pool_e = [], [], 0, 0.0
    for key, p in expected_p.items():
        e = float(p) * n
        if e < 5:
            pool_o += observed.get(key, 0)
            pool_e += e
        else:
            obs.append(observed.get(key, 0))
            exp.append(e)
    if pool_e > 0:
        obs.append(pool_o)
        exp.append(pool_e)
    assert sum(obs) == n
    exp = [e * n / sum(exp) for e in exp]  # float rounding: make the sums agree exactly
    return float(chisquare(obs, exp).pvalue)


@pytest.mark.parametrize("system,text", CASES)
def test_100k_seeded_rolls_match_the_exact_odds(system, text):
    # Fixed seed: the test is deterministic, so it cannot flake.
    check = load_check(system, text)
    n = 100_000
    batch = check.roll_many(Dice(20260101), n)
    assert merged_chisquare(batch.counts(), check.outcomes(), n) > 1e-3


@pytest.mark.parametrize(
    "check,dist",
    [
        (whisperspace.parse_check("mod=2 dc=8 bonus=1"), lambda c: c.total_dist()),
        (whisperspace.parse_check("mod=0 dc=8 penalty=2"), lambda c: c.total_dist()),
        (speedpoints.parse_check("ability=0 difficulty=0 resolver=3d6"), lambda c: c.total_dist()),
        (d6.parse_check("dice=4D+2 dn=15"), lambda c: c.pool().dist),
        (d6.parse_check("dice=4D+2 dn=15 wild_one=remove_highest"), lambda c: c.pool().dist),
    ],
)
def test_100k_seeded_totals_match_the_exact_distribution(check, dist):
    n = 100_000
    totals = check.roll_many(Dice(31337), n).totals
    values, counts = np.unique(totals, return_counts=True)
    observed = dict(zip(values.tolist(), counts.tolist(), strict=True))
    assert merged_chisquare(observed, dist(check), n) > 1e-3


# --------------------------------------------------------------------------- whisperspace


def test_whisperspace_seed_001_degrees():
    # "the DC was 8. If a character rolls a 14 (6 over) ... extreme success. If the roll is a
    # 4 ... extreme failure."
    assert whisperspace.degree_for_margin(14 - 8) == "extreme_success"
    assert whisperspace.degree_for_margin(4 - 8) == "extreme_failure"
    table = {4: "extreme_success", 3: "success", 0: "success", -1: "failure", -3: "failure"}
    table[-4] = "extreme_failure"
    for margin, degree in table.items():
        assert whisperspace.degree_for_margin(margin) == degree


@pytest.mark.parametrize(
    "bonus,penalty,net",
    [(2, 1, 1), (2, 2, 0), (4, 2, 2), (1, 0, 1), (5, 0, 2), (0, 2, -2), (0, 3, -2), (1, 4, -2)],
)
def test_whisperspace_bonus_and_penalty_dice_cancel_then_cap(bonus, penalty, net):
    # Seed 001: 2 bonus + 1 penalty = 1 bonus; 2 + 2 = none; 4 bonus + 2 penalty = 2 bonus.
    check = whisperspace.parse_check(f"mod=0 dc=6 bonus={bonus} penalty={penalty}")
    assert check.net_dice == net
    event = check.roll(Dice(1)).events[0]
    assert len(event.faces) == 1 + abs(net)
    if net > 0:
        assert event.total == max(event.faces)
    elif net < 0:
        assert event.total == min(event.faces)


def test_whisperspace_exact_odds():
    assert whisperspace.parse_check("athletics=0 dc=6").p_success() == Fraction(7, 12)
    # One bonus die against DC 8: fail only if both dice show 7 or less.
    assert whisperspace.parse_check("mod=0 dc=8 bonus=1").p_success() == 1 - Fraction(49, 144)
    # Two penalty dice (seed 001): 3d12, keep the lowest.
    check = whisperspace.parse_check("mod=0 dc=6 penalty=2")
    assert check.total_dist() == keep_lowest(3, 12)
    assert check.p_success() == Fraction(7, 12) ** 3
    # Seed 001's wall, DC 8, with +2: extreme success needs 12 (DC + 4), a 10-12 on the die;
    # extreme failure needs 4 or less (DC - 4), a 1 or 2.
    out = whisperspace.parse_check("mod=2 dc=8").outcomes()
    assert out["extreme_success"] == Fraction(3, 12)
    assert out["extreme_failure"] == Fraction(2, 12)


# --------------------------------------------------------------------------- mythmaster


def test_mythmaster_seed_002_climbing_example():
    # Skill 15, Somewhat Difficult (-2): "roll 8 or higher on 2d10", 79% per turn (RULES.md).
    check = mythmaster.parse_check("climbing=15 adjust=-2")
    assert check.p_success() == Fraction(79, 100)
    assert check.modifier == 13 and mythmaster.TARGET - check.modifier == 8
    # 0.2 hex a success, 20 successes for 4 hexes: 20 / 0.79, about 25.3 turns on average.
    assert round(20 / float(check.p_success()), 1) == 25.3


def test_mythmaster_naturals():
    # Only a natural 20 reaches 21 with -10: a critical with the skill, plain without.
    assert mythmaster.parse_check("skill=0 adjust=-10").outcomes() == {
        "critical_success": Fraction(1, 100),
        "success": Fraction(0),
        "failure": Fraction(98, 100),
        "catastrophe": Fraction(1, 100),
    }
    untrained = mythmaster.parse_check("skill=0 adjust=-10 untrained").outcomes()
    assert untrained == {
        "success": Fraction(1, 100),
        "failure": Fraction(98, 100),
        "catastrophe": Fraction(1, 100),
    }
    # A natural 2 fails however high the skill.
    sure = mythmaster.parse_check("skill=30")
    assert sure.outcomes()["catastrophe"] == Fraction(1, 100)
    assert sure.p_success() == Fraction(99, 100)
    assert sure.decide(1, 1) == "catastrophe" and sure.decide(10, 10) == "critical_success"


def test_mythmaster_bulk_factor_is_a_penalty():
    assert mythmaster.parse_check("skill=15 adjust=-2 bf=2").modifier == 11


@pytest.mark.parametrize("tie", ["opponent", "roller"])
def test_mythmaster_versus_matches_enumeration(tie):
    check = mythmaster.parse_check(f"skill=10 adjust=1 versus=12 tie={tie}")
    wins = 0
    for a, b, c, d in itertools.product(range(1, 11), repeat=4):
        if a == b == 10:
            wins += 1
        elif a == b == 1:
            continue
        else:
            mine, theirs = a + b + 11, c + d + 12
            wins += mine > theirs or (mine == theirs and tie == "roller")
    assert check.p_success() == Fraction(wins, 10**4)


def test_mythmaster_versus_rolls_two_events():
    result = mythmaster.parse_check("skill=10 versus=10").roll(Dice(4))
    mine, theirs = result.events
    assert result.margin == mine.total - theirs.total
    assert theirs.decided == f"opponent: {result.degree}"


# --------------------------------------------------------------------------- d6


@pytest.mark.parametrize(
    "dn,rolled,degree",
    [
        (17, 17, "success"),  # cautious through the river: DN 17, rolls 17, moves 5 m
        (16, 16, "success"),  # cruising up the steep hill: DN 16, rolls 16
        (8, 10, "success"),  # running the open field: DN 8, rolls 10
        (24, 16, "fail_7_10"),  # rocky cratered ground: DN 24, rolls 16, fails by 8
        (11, 12, "success"),  # sprinting the easy field: DN 11, rolls 12
        (20, 2, "fail_16_20"),  # "fails by 18 -> Tumble"
    ],
)
def test_d6_seed_003_rhen_examples(dn, rolled, degree):
    assert d6.degree_for_margin(rolled - dn) == degree


def test_d6_failure_bands():
    bands = {1: "fail_1_3", 3: "fail_1_3", 4: "fail_4_6", 6: "fail_4_6", 7: "fail_7_10"}
    bands |= {10: "fail_7_10", 11: "fail_11_15", 15: "fail_11_15", 16: "fail_16_20"}
    bands |= {20: "fail_16_20", 21: "fail_21_plus", 40: "fail_21_plus"}
    for by, degree in bands.items():
        assert d6.degree_for_margin(-by) == degree
    assert d6.degree_for_margin(0) == "success"


def test_d6_multi_action_and_pips():
    # Seed 003: walking and firing is two actions, -1D: a 4D skill rolls 3D.
    check = d6.parse_check("dice=4D dn=10 actions=2")
    assert str(check.rolled) == "3D"
    assert d6.parse_check("strength=3D+2 dn=10").code.pips_total == 11
    assert str(d6.parse_check("dice=2D+4 dn=10").code) == "3D+1"  # 3 pips = 1D


def test_d6_exact_odds():
    # Without the wild die, 3D >= 11 is exactly one half.
    assert d6.parse_check("dice=3D dn=11 wild=no").p_success() == Fraction(1, 2)
    # The wild die alone reaches 7 only by exploding: 1/6, exactly (the tail is inside).
    one = d6.parse_check("dice=1D dn=7")
    assert one.p_success() == Fraction(1, 6) and one.exact
    assert one.p_complication() == Fraction(1, 6)
    deep = d6.parse_check("dice=1D dn=97")
    assert deep.exact and deep.p_success() == Fraction(1, 6**16)
    assert not d6.parse_check("dice=1D dn=98").exact
    assert d6.parse_check("dice=1D dn=98").tail_mass == Fraction(1, 6**16)
    # remove_highest on a lone wild die: a 1 leaves only the pips.
    lone = d6.parse_check("dice=1D+2 dn=3 wild_one=remove_highest")
    assert lone.pool().dist[2] == Fraction(1, 6)
    assert lone.p_complication() == 0


def test_d6_complication_is_a_note_not_a_degree():
    for seed in range(200):
        result = d6.parse_check("dice=3D+1 dn=5").roll(Dice(seed))
        if result.notes:
            assert result.notes == ("complication",)
            assert result.events[0].wild[0] == 1
            assert result.total == sum(result.events[0].faces) + 1
            break
    else:
        pytest.fail("no complication in 200 seeds")


# --------------------------------------------------------------------------- speedpoints


def test_speedpoints_default_resolver():
    assert speedpoints.parse_check("ability=4 difficulty=5").p_success() == Fraction(1, 2)
    assert speedpoints.parse_check("ability=0 difficulty=0").p_success() == Fraction(11, 20)
    assert speedpoints.parse_check("ability=0 difficulty=20").p_success() == Fraction(0)
    check = speedpoints.parse_check("ability=3 difficulty=10 resolver=d20")
    assert check.resolver == "1d20" and check.target == 20


# --------------------------------------------------------------------------- properties


@settings(max_examples=40, deadline=None)
@given(
    mod=st.integers(-5, 10),
    dc=st.integers(0, 25),
    bonus=st.integers(0, 4),
    penalty=st.integers(0, 4),
)
def test_whisperspace_property_sums_to_one(mod, dc, bonus, penalty):
    check = whisperspace.WhisperspaceCheck(mod, dc, bonus, penalty)
    assert sum(check.outcomes().values()) == 1
    if bonus > penalty:
        assert check.p_success() >= whisperspace.WhisperspaceCheck(mod, dc).p_success()


@settings(max_examples=30, deadline=None)
@given(
    dice=st.integers(0, 8),
    pips=st.integers(-2, 2),
    dn=st.integers(1, 45),
    wild=st.booleans(),
    wild_one=st.sampled_from(["complication", "remove_highest", "none"]),
)
def test_d6_property_sums_to_one(dice, pips, dn, wild, wild_one):
    from engine.dice import DieCode

    check = d6.D6Check(DieCode(dice, pips), dn, 1, wild, wild_one)
    assert sum(check.outcomes().values()) == 1
    assert check.exact


# --------------------------------------------------------------------------- errors


@pytest.mark.parametrize(
    "system,text,message",
    [
        ("whisperspace", "dc=x", "check 'dc=x': dc must be an integer, e.g. dc=6"),
        ("whisperspace", "athletics=2", "check 'athletics=2': dc is missing, e.g. dc=6"),
        (
            "whisperspace",
            "athletics=two dc=6",
            "check 'athletics=two': athletics must be an integer",
        ),
        ("whisperspace", "athletics=2 dcc=6", "unknown key 'dcc' (did you mean 'dc'?)"),
        ("whisperspace", "athletics=2 dc=6 bonus=-1", "check 'bonus=-1': bonus must be >= 0"),
        ("whisperspace", "athletics=2 mod=1 dc=6", "check 'mod=1': modifier given twice"),
        ("whisperspace", "   ", "check '': empty, expected key=value fields"),
        ("whisperspace", "athletics 2 dc=6", "check 'athletics': expected key=value"),
        ("mythmaster", "adjust=-2", "check 'adjust=-2': skill is missing, e.g. skill=15"),
        ("mythmaster", "skill=15 tie=maybe", "tie must be one of opponent, roller"),
        ("mythmaster", "skill=15 has_skill=perhaps", "has_skill must be yes or no"),
        ("mythmaster", "skill=15 untrained trained", "has_skill given twice"),
        ("mythmaster", "skill=15 bf=11", "bf must be <= 10"),
        ("d6", "dice=3X+1 dn=13", "check 'dice=3X+1': dice must be a die code like 3D+1"),
        ("d6", "dn=13", "check 'dn=13': dice is missing, e.g. dice=3D+1"),
        ("d6", "dice=3D+1", "dn is missing, e.g. dn=13"),
        ("d6", "dice=3D dn=9 wild_one=remove", "(did you mean 'remove_highest'?)"),
        ("d6", "dice=3D dn=9 actions=0", "actions must be >= 1"),
        ("d6", "dice=101D dn=9", "at most 100D"),
        ("speedpoints", "ability=4", "difficulty is missing, e.g. difficulty=5"),
        ("speedpoints", "ability=4 difficulty=5 resolver=d1", "resolver must be dice like 1d20"),
    ],
)
def test_bad_checks_raise_one_line(system, text, message):
    with pytest.raises(CheckError) as err:
        load_check(system, text)
    assert message in str(err.value)
    assert "\n" not in str(err.value)


def test_unknown_system_suggests_a_name():
    with pytest.raises(CheckError) as err:
        load_check("whisperspce", "athletics=2 dc=6")
    assert "did you mean 'whisperspace'?" in str(err.value) and "\n" not in str(err.value)
    with pytest.raises(CheckError):
        load_check("../errors", "dc=6")


# --------------------------------------------------------------------------- reports


def test_odds_report_shape_and_exact_values():
    report = odds_report("whisperspace", "athletics=2 dc=6 bonus=1")
    assert report["system"] == "whisperspace"
    assert report["check"] == "athletics=2 dc=6 bonus=1 penalty=0"
    assert list(report["outcomes"]) == DEGREES["whisperspace"]
    for name, exact in report["exact"].items():
        assert report["outcomes"][name] == float(Fraction(exact))
    assert sum(Fraction(x) for x in report["exact"].values()) == 1
    assert report["p_success"] == float(Fraction(15, 16))
    json.dumps(report)
    text = format_odds(report)
    assert text.splitlines()[0] == "whisperspace: athletics=2 dc=6 bonus=1 penalty=0"
    assert "p_success" in text and "93.75%" in text


def test_roll_report_is_reproducible():
    a = roll_report("d6", "dice=4D+2 dn=15", seed=12)
    b = roll_report("d6", "dice=4D+2 dn=15", seed=12)
    assert a == b
    assert a["seed"] == 12 and a["degree"] in DEGREES["d6"]
    assert a["events"][0]["decided"] == a["degree"]
    json.dumps(a)
    text = format_roll(a)
    assert "(seed 12)" in text and a["degree"] in text
