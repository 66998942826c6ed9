"""Mythmaster movement (seed 002; RULES.md section 2): golden numbers from the seed."""

from __future__ import annotations

import itertools
import json
from decimal import ROUND_HALF_UP, Decimal
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from engine.cli import main
from engine.dice import Dice
from engine.errors import ArgumentError, StatError
from engine.mapmodel import Terrain
from engine.report.movement import path_json
from engine.systems import create
from engine.systems.mythmaster import (
    BULK_REDUCTIONS,
    LEVELS,
    MythmasterCheck,
    base_move,
    bulk_factor,
    carried_bulk,
    climb_per_success,
    metres_per_second,
    reduced_base_move,
    travel,
    undetected_odds,
)

MM = create("mythmaster")


def tok(spec: str = "", system=MM):
    return system.token(spec)


def cliff(level: str = "difficult") -> Terrain:
    return Terrain(name="cliff", move="climb", difficulty=level)


# --------------------------------------------------------------------------- Base Move

# (Adaptability + adjustments) x 0.44, rounded half up, for 1..30 (worked by hand).
BASE_MOVE_TABLE = [0, 1, 1, 2, 2, 3, 3, 4, 4, 4, 5, 5, 6, 6, 7]
BASE_MOVE_TABLE += [7, 7, 8, 8, 9, 9, 10, 10, 11, 11, 11, 12, 12, 13, 13]


@pytest.mark.parametrize("adaptability", range(1, 31))
def test_base_move_rounding_table(adaptability: int) -> None:
    expected = BASE_MOVE_TABLE[adaptability - 1]
    decimal = (Decimal(adaptability) * Decimal("0.44")).quantize(Decimal(1), ROUND_HALF_UP)
    assert base_move(adaptability) == expected == int(decimal)
    # Adjustments add to Adaptability before the multiplication.
    assert base_move(adaptability - 3, 3) == expected
    assert MM.base_move(tok(f"adaptability={adaptability}")) == expected


def test_adjustments_below_zero_are_refused() -> None:
    with pytest.raises(StatError, match="adaptability \\+ adjustments must be >= 0"):
        tok("adaptability=5,adjustments=-6")
    assert base_move(0) == 0


# --------------------------------------------------------------------------- Bulk Factor


def test_bulk_factor_seed_example() -> None:
    # RULES.md 2: BM 6, Physical 12, bulk 30: BF 2, effective BM 4.
    t = tok("adaptability=14,physical=12,bulk=30")
    assert MM.base_move(t) == 6
    assert MM.bulk_factor(t) == 2
    assert MM.effective_base_move(t) == 4
    assert MM.encumbrance(t) == "encumbered"
    rep = MM.stats_report(t)
    assert (rep["base_move"], rep["bulk_factor"], rep["effective_base_move"]) == (6, 2, 4)
    assert rep["per_turn"]["walk"] == 12  # 3 actions x 4 hexes


@pytest.mark.parametrize(
    ("bulk", "bf"),
    [(0, 0), (12, 0), ("12.5", 1), (24, 1), ("24.01", 2), (36, 2), (37, 3), (120, 9), (121, 10)],
)
def test_bulk_factor_steps(bulk, bf: int) -> None:
    assert bulk_factor(Fraction(str(bulk)), 12) == bf
    assert bulk_factor(10_000, 12) == 10


def test_bulk_factor_10_is_immobile() -> None:
    t = tok("adaptability=30,physical=10,bulk=101")
    assert MM.bulk_factor(t) == 10 and MM.effective_base_move(t) == 0
    assert MM.encumbrance(t) == "immobile"
    assert MM.rate(t, "walk", "sprint") == 0
    assert "Base Move 0" in (MM.refusal(t, Terrain()) or "")


def test_bulk_reduction_rulings() -> None:
    # Ruling (default): BM - ceil(BM x BF / 10).
    assert [reduced_base_move(6, bf) for bf in range(11)] == [6, 5, 4, 4, 3, 3, 2, 1, 1, 0, 0]
    assert reduced_base_move(6, 5, "per_factor") == 1  # 6 - 5 x ceil(0.6)
    assert reduced_base_move(20, 3, "compound") == 14  # 20 -> 18 -> 16 -> 14
    assert reduced_base_move(13, 1, "total") == 11  # 10% of 13 rounded up is 2
    t = tok("adaptability=14,bulk=60")  # BM 6, BF 4
    assert create("mythmaster", {"bulk_reduction": "per_factor"}).effective_base_move(t) == 2
    assert MM.effective_base_move(t) == 3


@given(st.integers(0, 40), st.sampled_from(BULK_REDUCTIONS))
def test_reduced_base_move_never_rises_and_ends_at_zero(bm: int, rule: str) -> None:
    moves = [reduced_base_move(bm, bf, rule) for bf in range(11)]
    assert moves[0] == bm and moves[-1] == 0
    assert all(a >= b >= 0 for a, b in itertools.pairwise(moves))


def test_bulk_affected_skills_roll_at_minus_bf() -> None:
    t = tok("climbing=15,sneaking=9,physical=12,bulk=30")
    assert MM.skill_check(t, "climbing", -2).modifier == 11
    assert MM.skill_check(t, "sneaking").modifier == 7
    assert MM.skill_check(t, "Wall Run").bulk_factor == 2  # listed in the seed
    assert MM.skill_check(t, "perception").bulk_factor == 0  # not listed
    skills = MM.stats_report(t)["skills"]
    assert skills["climbing"] == {"rank": 15, "bulk_penalty": -2, "modifier": 13}
    assert skills["swimming"]["rank"] is None


# --------------------------------------------------------------------------- rates


def test_walk_run_sprint_and_dash() -> None:
    t = tok("adaptability=14")  # BM 6
    hexes = {p: MM.rate(t, "walk", p) / 2 for p in ("walk", "run", "sprint")}
    assert hexes == {"walk": 6, "run": 12, "sprint": 18}
    assert MM.rate(t, "walk") == 36  # default pace sprint, metres
    d = tok("adaptability=14,dash=true")
    assert [MM.rate(d, "walk", p) / 2 for p in ("walk", "run", "sprint")] == [6, 24, 36]
    every = create("mythmaster", {"dash_doubles": "every_pace"})
    assert [every.rate(d, "walk", p) / 2 for p in ("walk", "run", "sprint")] == [12, 24, 36]
    with pytest.raises(ArgumentError, match="paces are walk, run, sprint"):
        MM.rate(t, "walk", "dash")


def test_slow_modes_per_action() -> None:
    t = tok("adaptability=14,swimming=5")  # BM 6
    for mode in ("crawl", "ladder", "swim"):
        assert [MM.rate(t, mode, p) / 2 for p in ("walk", "run", "sprint")] == [1, 2, 3]
    moves = MM.stats_report(t)["moves_hexes"]
    assert moves == {
        "walk": 6,
        "run": 12,
        "sprint": 18,
        "sneak": 3,
        "down": 1,
        "ladder": 1,
        "swim": 1,
    }
    assert MM.rate(tok("adaptability=9"), "crawl", "walk") == Fraction(4, 6) * 2  # BM 4


def test_swimming_needs_the_skill_unless_aquatic() -> None:
    water = Terrain(name="river", move="swim")
    t = tok("adaptability=14")
    assert MM.rate(t, "swim", "sprint") == 0
    assert "Swimming skill" in (MM.refusal(t, water) or "")
    assert MM.refusal(tok("swimming=3"), water) is None
    # Merfolk with -4 to Adaptability on land: BM 4 walking, unadjusted BM 6 swimming.
    mer = tok("adaptability=14,adjustments=-4,aquatic=true")
    assert MM.rate(mer, "walk", "walk") / 2 == 4
    assert MM.rate(mer, "swim", "walk") / 2 == 6 and MM.rate(mer, "swim", "sprint") / 2 == 18
    adjusted = create("mythmaster", {"aquatic_swim": "adjusted"})
    assert adjusted.rate(mer, "swim", "walk") / 2 == 4
    # Bulk still reduces it: BF 2 takes ceil(1.2) = 2 off 6.
    assert MM.rate(tok("adaptability=14,aquatic=true,bulk=30"), "swim", "walk") / 2 == 4


def test_speed_in_metres_per_second() -> None:
    assert metres_per_second(6) == Fraction(12, 5)  # 6 h/t / 2.5
    rep = MM.stats_report(tok("adaptability=14"))
    assert rep["speed_m_per_s"] == {"walk": "12/5", "run": "24/5", "sprint": "36/5"}


def test_gaps_and_air_are_refused_for_now() -> None:
    t = tok("flyer=true")
    for move in ("gap", "air", "blocked"):
        assert MM.rate(t, move, "sprint") == 0
        assert MM.refusal(t, Terrain(name="x", move=move))


# --------------------------------------------------------------------------- climbing


def test_seed_climbing_example() -> None:
    # Skill 15, Somewhat Difficult (-2), BM 6, no bulk: 0.2 hex a success, 79% a turn,
    # 20 successes for 4 hexes, 20 / 0.79 = about 25.3 turns (RULES.md 2).
    t = tok("adaptability=14,climbing=15")
    assert climb_per_success(6, "difficult") == Fraction(1, 5)
    assert MM.climb_per_success(t, "difficult") == Fraction(1, 5)
    check = MM.climb_check(t, "difficult")
    assert check.p_success() == Fraction(79, 100)
    expected = MM.cell_rate(t, cliff(), "walk") / 2
    assert expected == Fraction(79, 100) * Fraction(1, 5) == Fraction(79, 500)
    assert 4 / MM.climb_per_success(t, "difficult") == 20
    turns = 4 / expected
    assert turns == Fraction(2000, 79) == 20 / Fraction(79, 100)
    assert round(float(turns), 1) == 25.3
    table = MM.stats_report(t)["climbing"]["difficult"]
    assert table == {
        "adjust": -2,
        "divisor": 30,
        "needs_on_2d10": 8,
        "p_success": "79/100",
        "per_success": "1/5",
        "expected_per_turn": "79/500",
    }


def test_climb_rate_is_the_expected_figure_at_any_pace() -> None:
    t = tok("adaptability=14,climbing=15")
    # rate(..., 'climb') is the easiest level (difficulty none): +3, 1/10 BM.
    per_pace = {MM.rate(t, "climb", p) for p in ("walk", "run", "sprint")}
    assert per_pace == {Fraction(99, 100) * Fraction(6, 10) * 2}
    assert MM.cell_rate(t, cliff("none")) == MM.rate(t, "climb")
    assert MM.stats_report(t)["rates"]["climb_per_success"] == "6/5"
    rates = [MM.cell_rate(t, cliff(level)) for level in LEVELS]
    assert rates == sorted(rates, reverse=True)  # harder is never faster


def test_climb_cell_checks_always_roll() -> None:
    t = tok("adaptability=14,climbing=15,bulk=30")  # BF 2 on climbing
    check = MM.cell_check(t, cliff("none"))
    assert check is not None and check.what == "climbing (very_easy)"
    assert check.target == "21C: 2d10+16 >= 21"
    hard = MM.cell_check(t, cliff("difficult"))
    assert hard is not None and hard.p_success == Fraction(64, 100)  # 2d10 >= 10
    assert MM.cell_check(t, Terrain(move="walk", difficulty="difficult")) is None
    assert MM.cell_check(t, Terrain(move="ladder")) is None


def test_untrained_climbing() -> None:
    t = tok("adaptability=14")
    # Untrained: skill 0, +3 very easy: 2d10 >= 18, 6 in 100.
    assert MM.climb_check(t, "none").p_success() == Fraction(6, 100)
    refuse = create("mythmaster", {"untrained_climbing": "refuse"})
    assert refuse.cell_rate(t, cliff()) == 0
    assert "Climbing skill" in (refuse.refusal(t, cliff()) or "")
    assert refuse.cell_check(t, cliff()) is None


def test_climb_results_move_progress_exactly() -> None:
    t = MM.token("adaptability=14,climbing=15").moved(mode="climb", progress=Fraction(1, 10))
    what = "climbing (difficult)"
    assert MM.apply_check(t, what, "success").state.progress == Fraction(3, 10)
    assert MM.apply_check(t, what, "critical_success").state.progress == Fraction(3, 10)
    assert MM.apply_check(t, what, "failure").state.progress == Fraction(1, 10)
    slip = MM.apply_check(t, what, "catastrophe")
    assert slip.state.progress == 0 and slip.state.has("slipping")  # not below the cell
    held = MM.apply_check(slip, "climbing recovery (difficult)", "success")
    assert not held.state.conditions
    fell = MM.apply_check(slip, "climbing recovery (difficult)", "failure")
    assert fell.state.conditions == {"falling"}
    high_fall = MM.apply_check(t.moved(progress=Fraction(7, 10)), what, "catastrophe")
    fell = MM.apply_check(high_fall, "climbing recovery (difficult)", "catastrophe")
    assert (fell.state.progress, fell.state.conditions) == (0, {"falling"})  # to the foot
    high = t.moved(progress=Fraction(7, 10))
    assert MM.apply_check(high, what, "catastrophe").state.progress == Fraction(1, 2)
    keep = create("mythmaster", {"climb_slip": "none"})
    assert keep.apply_check(high, what, "catastrophe").state.progress == Fraction(7, 10)
    # A new mode starts from zero progress.
    walking = t.moved(mode="walk", progress=Fraction(1, 2))
    assert MM.apply_check(walking, what, "success").state.progress == Fraction(1, 5)


def test_climb_turns_replay_from_their_events() -> None:
    """Seed 002: "this is the rate of movement per turn when you succeed your 21C using
    Climbing Skill - if you fail the roll you don't move at all. Critical failure leads to a
    slip and a regression, requiring another Climbing roll to avoid a fall". RULES.md 2:
    "natural 2: lose that turn's progress (ruling) and roll again at once, failing that is a
    fall". Each turn's progress (hexes) follows from its logged rolls alone."""
    t = MM.token("adaptability=14,climbing=15")
    dice = Dice(2024)
    gained = Fraction(0)
    falls = slips = 0
    for _ in range(2000):
        before = len(dice.events())
        t, rolls = MM.climb_turn(t, cliff("difficult"), dice)
        assert [r.degree for r in rolls] == [e.decided for e in dice.events()[before:]]
        events = dice.events()[before:]
        first = events[0].decided
        above = gained > 0
        assert len(events) == (2 if first == "catastrophe" and above else 1)
        if first.endswith("success"):
            gained += Fraction(1, 5)
        elif first == "catastrophe" and above:
            slips += 1
            gained -= Fraction(1, 5)
            if not events[1].decided.endswith("success"):
                falls += 1
                assert t.state.has("falling")
                gained = Fraction(0)  # a fall: back at the foot
                t = MM.start_turn(t, dice)
        assert t.state.progress == gained and t.state.mode == "climb"
        assert not t.state.has("slipping") and not t.state.has("falling")
    assert slips and falls  # the seed 2024 stream has both (the test can tell)


def _turn_with_faces(system, token, terrain, faces: list[int]):
    """One climb_turn whose 2d10 rolls show ``faces`` (pairs, in order): the log's faces."""
    for seed in range(200000):
        dice = Dice(seed)
        probe = Dice(seed)
        if [probe.face(10) for _ in faces] == faces:
            return system.climb_turn(token, terrain, dice)[0], dice.events()
    raise AssertionError(f"no seed below 200000 rolls {faces}")


def test_climb_turn_takes_the_terrain_and_counts_hexes() -> None:
    """Seed 002's example: BM 6, Climbing 15, Somewhat Difficult (-2): "each success moves
    them 1/30 x 6 = 0.2 hexes"; progress is in hexes (2-m cells: RULES.md 2 "hexes of 2 m")."""
    t = MM.token("adaptability=14,climbing=15")
    up, events = _turn_with_faces(MM, t, cliff("difficult"), [4, 4])  # 8 + 13 = 21: success
    assert [e.decided for e in events] == ["success"]
    assert (up.state.mode, up.state.progress) == ("climb", Fraction(1, 5))
    again, _ = _turn_with_faces(MM, up, cliff("difficult"), [3, 4])  # 20: "don't move at all"
    assert (again.state.mode, again.state.progress) == ("climb", Fraction(1, 5))
    # Normal difficulty (easy: 1/10 BM): 0.6 hex a success.
    easy, _ = _turn_with_faces(MM, t, cliff("easy"), [4, 4])
    assert easy.state.progress == Fraction(3, 5)
    with pytest.raises(ArgumentError, match="not a climb cell"):
        MM.climb_turn(t, Terrain(name="open", move="walk"), Dice(1))


@pytest.mark.parametrize(
    ("slip", "held", "fell"),
    [("lose_turn", Fraction(1, 5), Fraction(0)), ("none", Fraction(2, 5), Fraction(0))],
)
def test_natural_two_slips_rerolls_and_a_failed_reroll_falls(slip, held, fell) -> None:
    """Seed 002: "Critical failure leads to a slip and a regression, requiring another
    Climbing roll to avoid a fall". RULES.md 2: "natural 2: lose that turn's progress
    (ruling) and roll again at once, failing that is a fall from the height reached";
    setting climb_slip: "none: no loss, the roll only". A fall puts the token back at the
    foot: progress 0, `falling`."""
    system = create("mythmaster", {"climb_slip": slip})
    t = system.token("adaptability=14,climbing=15").moved(mode="climb", progress=Fraction(2, 5))
    hold, events = _turn_with_faces(system, t, cliff("difficult"), [1, 1, 5, 5])
    assert [e.decided for e in events] == ["catastrophe", "success"]
    assert hold.state.progress == held and not hold.state.conditions
    drop, events = _turn_with_faces(system, t, cliff("difficult"), [1, 1, 2, 3])
    assert [e.decided for e in events] == ["catastrophe", "failure"]
    assert drop.state.progress == fell and drop.state.conditions == {"falling"}
    assert drop.state.mode == "climb"
    # The fall is over as the token's next turn starts (it lay at the foot till then).
    assert not system.start_turn(drop, Dice(1)).state.conditions


def test_natural_two_at_the_foot_cannot_fall() -> None:
    """Seed 002: "Critical failure leads to a slip and a regression, requiring another
    Climbing roll to avoid a fall": the roll is made at once, at the foot too; but a fall is
    from "the height reached" (RULES.md 2) and at the foot there is none, so, as the path's
    odds price it, a natural 2 with no progress loses nothing and cannot fall, whatever the
    second roll shows (here a failure: 3 + 4 + 13 = 20)."""
    t = MM.token("adaptability=14,climbing=15")
    foot, events = _turn_with_faces(MM, t, cliff("difficult"), [1, 1, 3, 4])
    assert [e.decided for e in events] == ["catastrophe", "failure"]
    assert (foot.state.mode, foot.state.progress, foot.state.conditions) == (
        "climb",
        0,
        frozenset(),
    )


# --------------------------------------------------------------------------- progress


def test_progress_carries_over_while_the_mode_stays() -> None:
    t = tok("adaptability=9")  # BM 4: crawling 2/3 hex an action
    step = MM.rate(t, "crawl", "walk") / 2
    t, cells = MM.advance(t, "crawl", step)
    assert (cells, t.state.progress) == (0, Fraction(2, 3))
    t, cells = MM.advance(t, "crawl", step)
    assert (cells, t.state.progress) == (1, Fraction(1, 3))
    t, cells = MM.advance(t, "walk", Fraction(1, 2))
    assert (cells, t.state.mode, t.state.progress) == (0, "walk", Fraction(1, 2))


# --------------------------------------------------------------------------- bodies


def test_carrying_a_body_seed_example() -> None:
    # An 80 kg ally: four carriers take 20 bulk each; with a stretcher 10 each.
    assert carried_bulk(80, carriers=4) == 20
    assert carried_bulk(80, carriers=4, stretcher=True) == 10
    assert carried_bulk(80, 8, carriers=4, stretcher=True) == 12  # gear is not halved
    assert carried_bulk(80, 5, carriers=3) == Fraction(85, 3)
    with pytest.raises(ArgumentError, match="1 to 4"):
        carried_bulk(80, carriers=5)


def test_group_moves_at_the_slowest_carrier() -> None:
    strong = [tok("adaptability=14,physical=12") for _ in range(3)]  # BM 6
    weak = tok("adaptability=10,physical=12")  # BM 4
    group = [*strong, weak]
    # 20 bulk each: BF 1: 6 -> 5 and 4 -> 3; the group moves at 3 hexes an action.
    assert MM.group_rate(group, "walk", "walk", weight=80) == 3 * 2
    assert MM.group_rate(group, "walk", "sprint", weight=80) == 9 * 2
    # On a stretcher: 10 bulk each, under Physical 12: no Bulk Factor.
    assert MM.group_rate(group, "walk", "walk", weight=80, stretcher=True) == 4 * 2
    alone = MM.group_rate([strong[0]], "walk", "walk", weight=80)  # 80 bulk: BF 6 -> 6 - 4
    assert alone == 2 * 2
    assert MM.carrying(weak, 20)["bulk"] == 20


# --------------------------------------------------------------------------- travel


def test_travel_days() -> None:
    # BM 6: 30 km in 8 h for 8 Stamina, or in 10 h with stops for none; +5% an hour after 8.
    assert travel(6, 8).to_dict() == {"hours": 8, "km": 30, "stamina_lost": 8}
    assert travel(6, 10, stops=True).to_dict() == {"hours": 10, "km": 30, "stamina_lost": 0}
    assert travel(6, 10).to_dict() == {"hours": 10, "km": 33, "stamina_lost": 10}
    day = travel(6, 24)
    assert (day.km, day.stamina_lost) == (54, 24) and day.km / 30 == Fraction(9, 5)
    assert travel(6, 4).km == 15 and travel(6, 5, stops=True).km == 15
    with pytest.raises(ArgumentError, match="at most 10 hours"):
        travel(6, 12, stops=True)


def test_travel_in_stats() -> None:
    rep = MM.stats_report(tok("adaptability=14,bulk=30"))  # effective BM 4
    assert rep["travel"] == {
        "km_per_day": 20,
        "day": {"hours": 8, "km": 20, "stamina_lost": 8},
        "day_with_stops": {"hours": 10, "km": 20, "stamina_lost": 0},
        "extra_hour": {"km": 1, "stamina_lost": 1},
    }


# --------------------------------------------------------------------------- sneaking

_SUMS = np.add.outer(np.arange(1, 11), np.arange(1, 11)).ravel()
_PAIRS = list(itertools.product(range(1, 11), repeat=2))


def _natural(a: int, b: int) -> str:
    return "top" if a == b == 10 else "bottom" if a == b == 1 else ""


def _brute(adapt, alerts, sneaking, bf, adjust, actions, tie, fallback) -> Fraction:
    """Count faces: the sneaker's 2d10 (and a fresh Adaptability 2d10), every observer's."""
    grids = np.meshgrid(*[_SUMS] * len(alerts), indexing="ij")
    opponents = [g.ravel() + a for g, a in zip(grids, alerts, strict=True)]
    size = len(opponents[0])

    def beaten(total: int, natural: str) -> int:
        """How many of the observers' face combinations the roller beats, all at once."""
        if natural:
            return size if natural == "top" else 0
        ok = np.ones(size, dtype=bool)
        for opp in opponents:
            ok &= (total > opp) | ((total == opp) & (tie == "roller"))
        return int(ok.sum())

    fresh = sum(beaten(c + d + adapt + adjust - actions - bf, _natural(c, d)) for c, d in _PAIRS)
    won = 0  # out of 100 (sneak faces) x 100 (fresh faces) x size
    for a, b in _PAIRS:
        if sneaking is None or fallback == "adaptability":
            total = a + b + (sneaking or 0) + adjust - bf
            sneaked = sneaking is not None and (
                _natural(a, b) == "top" or (_natural(a, b) == "" and total >= 21)
            )
            won += 100 * size if sneaked else fresh
            continue
        total = a + b + sneaking + adjust - bf
        if _natural(a, b) == "top" or (_natural(a, b) == "" and total >= 21):
            won += 100 * size
        else:
            won += 100 * beaten(total, _natural(a, b))
    return Fraction(won, 100 * 100 * size)


@pytest.mark.parametrize("fallback", ["reuse", "adaptability"])
@pytest.mark.parametrize("tie", ["opponent", "roller"])
def test_sneak_odds_match_enumeration(fallback: str, tie: str) -> None:
    args = dict(adapt=11, alerts=[12], sneaking=12, bf=1, adjust=-1, actions=2)
    got = undetected_odds(
        adaptability=11,
        alertness=12,
        sneaking=12,
        bulk_factor=1,
        adjust=-1,
        actions=2,
        tie=tie,
        fallback=fallback,
    )
    assert got["p_undetected"] == _brute(**args, tie=tie, fallback=fallback)
    assert got["p_sneaking"] == MythmasterCheck(12, -1, 1).p_success()
    assert got["p_undetected"] == got["p_sneaking"] + got["p_versus"]


def test_sneak_odds_untrained_is_the_versus_challenge() -> None:
    got = undetected_odds(adaptability=12, alertness=10, bulk_factor=2, adjust=1, actions=3)
    versus = MythmasterCheck(12, 1 - 3, 2, versus=10).p_success()
    assert got == {"p_undetected": versus, "p_sneaking": 0, "p_versus": versus}


def test_sneak_odds_two_observers_share_one_roll() -> None:
    got = undetected_odds(adaptability=12, alertness=[9, 11], sneaking=10, fallback="reuse")
    assert got["p_undetected"] == _brute(12, [9, 11], 10, 0, 0, 1, "opponent", "reuse")
    one = undetected_odds(adaptability=12, alertness=9, sneaking=10)["p_undetected"]
    assert got["p_undetected"] < one


def test_sneak_odds_best_is_at_least_either() -> None:
    kw = dict(adaptability=14, alertness=12, sneaking=8, bulk_factor=1, adjust=-2, actions=1)
    odds = {f: undetected_odds(**kw, fallback=f)["p_undetected"] for f in ("reuse", "adaptability")}
    best = undetected_odds(**kw, fallback="best")["p_undetected"]
    assert best >= max(odds.values())
    t = tok("adaptability=14,sneaking=8,bulk=13")  # BF 1
    assert MM.sneak_odds(t, 12, adjust=-2, actions=1)["p_undetected"] == odds["reuse"]


# --------------------------------------------------------------------------- the report


def test_stats_command_json_golden(capsys: pytest.CaptureFixture[str]) -> None:
    spec = "adaptability=14,physical=12,bulk=30,climbing=15,swimming=4"
    assert main(["stats", "--system", "mythmaster", "--token", spec, "--json"]) == 0
    rep = json.loads(capsys.readouterr().out)
    assert (rep["unit"], rep["cell_size"], rep["encumbrance"]) == ("m", 2, "encumbered")
    # Effective BM 4: sprint 12 hexes; down, ladder, swim 4/6 an action, 2 a turn.
    assert {k: rep["per_turn"][k] for k in ("walk", "crawl", "swim", "ladder")} == {
        "walk": 12,
        "crawl": 2,
        "swim": 2,
        "ladder": 2,
    }
    # RULES.md 2: "`stats` `per_turn.climb` is the most progress of a turn (one success:
    # BM/10k), the expected rate goes beside it". Easiest level: 4 / 10 = 0.4 hex a success;
    # 2d10 + 15 + 3 - 2 >= 21: 94%, so 0.94 x 0.4 = 47/125 expected.
    assert rep["per_turn"]["climb"] == "2/5"
    assert rep["per_turn_expected"] == {"climb": "47/125"}
    assert rep["rates"]["walk"] == 8 and rep["rates"]["sprint"] == 24
    assert rep["travel"]["km_per_day"] == 20


def test_per_turn_climb_is_one_success_and_the_expected_rate_beside_it() -> None:
    """CONTRACT.md: "`per_turn[mode]` is the most cells of that mode the token crosses in one
    turn"; RULES.md 2: "`stats` `per_turn.climb` is the most progress of a turn (one success:
    BM/10k), the expected rate goes beside it"; seed 002: "this is the rate of movement per
    turn when you succeed your 21C using Climbing Skill". The seed's climber (BM 6, Climbing
    15) at the easiest level (+3, 1/10 BM): 3/5 hex at most, 99/100 x 3/5 = 297/500 expected."""
    t = tok("adaptability=14,climbing=15")
    rep = MM.stats_report(t)
    assert rep["per_turn"]["climb"] == "3/5"
    assert rep["per_turn_expected"] == {"climb": "297/500"}
    assert {row["climb"] for row in rep["per_turn_by_pace"].values()} == {"3/5"}
    # A report figure only: the path search still prices a climb by the expected rate.
    assert MM.rate(t, "climb", "sprint") == Fraction(297, 500) * 2
    assert MM.cell_rate(t, cliff("none")) == Fraction(297, 500) * 2
    # Untrained (setting untrained_climbing=roll): still one success's 3/5 at most.
    untrained = MM.stats_report(tok("adaptability=14"))
    assert untrained["per_turn"]["climb"] == "3/5"
    assert untrained["per_turn_expected"] == {"climb": "9/250"}  # 2d10 >= 18: 6 in 100
    # untrained_climbing=refuse: a mode the token cannot use is 0 (CONTRACT.md).
    refuse = create("mythmaster", {"untrained_climbing": "refuse"})
    assert refuse.per_turn(tok("adaptability=14"))["climb"] == 0
    # Bulk Factor 10: Base Move 0, nothing at all.
    assert MM.per_turn(tok("adaptability=14,physical=10,bulk=101"))["climb"] == 0


def test_per_turn_air_is_a_flyers_top_speed() -> None:
    """CONTRACT.md: `per_turn` is the most cells a turn, "a mode it cannot use is 0". Seed 002:
    "the maximum speed a creature ... can achieve is equal to 18x their Base Move"."""
    from engine.systems.mythmaster import FLIGHT_TOP_BM
    from engine.systems.mythmaster.flight import FLIGHT_TOP_BM as FLIGHT_RULES_TOP

    assert FLIGHT_TOP_BM == FLIGHT_RULES_TOP == 18
    flyer = MM.per_turn(tok("adaptability=14,flyer=true"))
    assert flyer["air"] == flyer["gap"] == 18 * 6  # gap cells are only flown over
    assert MM.per_turn(tok("adaptability=14,flyer=true,bulk=30"))["air"] == 18 * 4  # BF 2
    walker = MM.per_turn(tok("adaptability=14"))
    assert walker["air"] == walker["gap"] == 0  # cannot fly
    rep = MM.stats_report(tok("adaptability=14,flyer=true"))
    assert {row["air"] for row in rep["per_turn_by_pace"].values()} == {108}
    assert {row["gap"] for row in rep["per_turn_by_pace"].values()} == {108}


def test_stats_command_text(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["stats", "--system", "mythmaster", "--token", "adaptability=14"]) == 0
    out = capsys.readouterr().out
    assert "walk 12, run 24, sprint 36" in out and "travel" in out


# --------------------------------------------------------------------------- climbs as one unit


def _climb_path(rows: list[str], goal, settings=None, stats="adaptability=14,climbing=15"):
    import tmxtext  # noqa: F401  (tests/ on the path)
    from test_search import model_from

    from engine.movement import MovementGraph
    from engine.search import find_path

    system = create("mythmaster", settings or {})
    model = model_from(rows, orientation="hexagonal")
    g = MovementGraph(model, system, system.token(stats), "sprint")
    return path_json(find_path(g, (0, 0), goal))


def test_climb_is_priced_in_whole_successes_with_exact_odds() -> None:
    """A climb's time and safety are sums and products over its successes (first passages of
    the success/slip chain), and its chance to be done by turn t is exact."""
    from engine.search.odds import _climb_chain, _climb_pmf
    from engine.systems.base import ClimbOdds

    odds = ClimbOdds(Fraction(2, 5), Fraction(79, 100), Fraction(1, 100), slip=False)
    times, safe = _climb_chain(odds, 3)
    assert times == [Fraction(100, 79)] * 3
    # Without slips a natural 2 above the foot re-rolls: failing it is a fall.
    assert safe[0] == 1 and safe[1] == safe[2] == odds.p / (odds.p + odds.q - odds.q * odds.p)
    # Done within t turns, no fall: a negative binomial where slips are off and q = 0.
    plain = ClimbOdds(Fraction(1), Fraction(17, 20), Fraction(0), slip=False)
    pmf = _climb_pmf(plain, 4, 5, True)
    p = Fraction(17, 20)
    assert pmf[4] == p**4 and pmf[5] == 4 * p**4 * (1 - p)
    assert sum(pmf) == p**5 + 5 * p**4 * (1 - p)


def test_climb_path_reports_delay_and_chance_within_turns() -> None:
    route = _climb_path([".^."], (2, 0), {"climb_slip": "none"})
    climb = route["steps"][1]
    assert climb["mode"] == "climb" and climb["on_failure"] == "delay"
    assert route["on_failure"] == ["delay"]
    info = climb["climb"]
    assert info["successes"] >= 1 and 0 < info["p_no_fall"] <= 1
    assert route["p_no_failure"] == pytest.approx(info["p_no_fall"])
    assert 0 < route["p_within_turns"] <= route["p_no_failure"]
    # Slips lengthen the climb and make a fall likelier.
    slips = _climb_path([".^."], (2, 0), {"climb_slip": "lose_turn"})
    assert slips["turns"] > route["turns"] and slips["p_no_failure"] < route["p_no_failure"]
    # The walk after the climb is timed after the climb's expected turns.
    last = route["steps"][-1]
    assert last["turns"] == pytest.approx(route["turns"])
    assert last["turns"] - climb["turns"] == pytest.approx(last["time"])


def test_swim_failure_stops_and_counts() -> None:
    route = _climb_path([".~~"], (2, 0), stats="adaptability=14,swimming=10")
    checks = [s for s in route["steps"] if s["check"] is not None]
    assert checks and all(s["on_failure"] == "stop" for s in checks)
    assert route["p_no_failure"] == pytest.approx(route["p_within_turns"])


def test_swim_failure_stalls_for_the_rest_of_the_turn_only() -> None:
    """Seed 002 gives swimming no roll; RULES.md 0: "Checks come from the terrain's
    difficulty", so rough water asks a Swimming 21C (at -BF: "Skills affected by bulk
    include: ... Swimming"). Its failure is read from the seed's climbing line, "if you fail
    the roll you don't move at all": a stop for the rest of that turn (``stalled``), gone by
    the end of the turn; the next turn rolls again."""
    t = tok("adaptability=14,swimming=10,bulk=30")  # BF 2
    water = Terrain(name="deep water", move="swim", difficulty="moderate")
    check = MM.cell_check(t, water)
    assert check is not None and check.target == "21C: 2d10+7 >= 21"  # 10 - 1 - 2
    assert MM.on_failure(check) == "stop"
    failed = MM.apply_check(t, check.what, "failure")
    assert failed.state.has("stalled")
    assert MM.apply_check(t, check.what, "catastrophe").state.has("stalled")
    assert not MM.apply_check(t, check.what, "success").state.conditions
    assert MM.start_turn(failed, Dice(1)).state.has("stalled")  # lasts the turn it failed in
    assert not MM.end_turn(failed, Dice(1)).state.conditions
    # Calm water (difficulty none) and aquatic swimmers ask nothing.
    assert MM.cell_check(t, Terrain(name="pond", move="swim")) is None
    assert MM.cell_check(tok("adaptability=14,aquatic=true"), water) is None


def _within_floats_entry_by_entry(chains, budget: int) -> float:
    """The chance within ``budget`` turns in floats, the convolution made entry by entry in
    Python (the plain way :func:`engine.search.odds._within_floats` is held equal to)."""
    from engine.search.odds import _climb_pmf

    dist = [1.0]
    for odds, n, _ in chains:
        pmf = _climb_pmf(odds, n, budget, False)
        new = [0.0] * (budget + 1)
        for a, pa in enumerate(dist):
            if pa:
                for b in range(budget + 1 - a):
                    new[a + b] += pa * pmf[b]
        dist = new
    return sum(dist, 0.0)


def test_a_long_climbs_chance_within_turns_is_the_entry_by_entry_sum() -> None:
    """Past EXACT_WITHIN_TURNS the chance to be through is made in floats a row at a time:
    the same float, bit for bit, as the convolution made entry by entry, for one climb and
    several, slips or none, odds from likely to rare."""
    import random

    from engine.search.odds import EXACT_WITHIN_TURNS, _within_exact, _within_floats
    from engine.systems.base import ClimbOdds

    rng = random.Random(43)
    for trial in range(12):
        chains = []
        for _ in range(1 + trial % 3):
            p = Fraction(rng.randint(1, 60), 100)
            q = Fraction(rng.randint(0, 10), 100)
            odds = ClimbOdds(Fraction(1), p, q, slip=rng.random() < 0.5)
            chains.append((odds, rng.randint(1, 6), Fraction(1)))
        budget = EXACT_WITHIN_TURNS + rng.randint(1, 300)
        got = _within_floats(chains, budget)
        assert got == _within_floats_entry_by_entry(chains, budget)
        assert 0.0 <= got <= 1.0
    # And the floats are the exact sum's, to float precision, where both are made.
    odds = ClimbOdds(Fraction(1), Fraction(3, 10), Fraction(1, 20), slip=True)
    chains = [(odds, 3, Fraction(1)), (odds, 2, Fraction(1))]
    assert _within_floats(chains, 150) == pytest.approx(
        float(_within_exact(chains, 150)), rel=1e-12
    )
