"""Whisperspace movement (seeds 000 and 001; RULES.md section 1): golden examples and tables."""

from __future__ import annotations

import doctest
import json
from fractions import Fraction

import pytest
from hypothesis import given
from hypothesis import strategies as st

from engine import systems
from engine.cli import main
from engine.dice import Dice, keep_lowest
from engine.errors import ArgumentError, StatError
from engine.mapmodel import Terrain
from engine.systems import whisperspace as ws
from engine.systems.whisperspace import (
    FALL_SEVERITY,
    WhisperspaceCheck,
    describe_net,
    encumbrance_for,
    fall_band,
    fall_odds,
    fall_severity,
    net_bonus,
    plan_turn,
    speed_with,
)

W = systems.create("whisperspace")


def tok(spec: str = "", system: ws.Whisperspace = W) -> ws.Token:
    return system.token(spec)


def test_doctests() -> None:
    assert doctest.testmod(ws).failed == 0


# --------------------------------------------------------------------------- seed 000: moving


def test_seed_000_split_move_35_ft() -> None:
    # "move 10 feet closer ... attack ... another 10 feet ... open a door ... then move your
    # remaining 15 feet through that door": one Move action of 35 ft around two others.
    token = tok("phys=1")  # 30 + 5 x PHYS = 35 ft (the seed's "for example, 35 feet")
    speed = W.speed(token, "walk")
    assert speed == 35 and W.rates(token)["walk"] == 35
    plan = plan_turn(speed, [10, "attack", 10, "interact", 15])
    assert (plan.actions, plan.move_actions, plan.other_actions) == (3, 1, ("attack", "interact"))
    assert plan.legs == ((1, 10), (1, 10), (1, 15)) and plan.moved == 35
    assert plan.left_ft == 0 and plan.fits
    # One more foot needs a second Move action: 4 actions do not fit in a turn.
    over = plan_turn(speed, [10, "attack", 10, "interact", 16])
    assert over.move_actions == 2 and over.actions == 4 and not over.fits
    assert "4 actions" in over.reason
    # Moves alone: 3 Move actions, 105 ft, the sprint pace.
    assert plan_turn(35, [105]).move_actions == 3 and W.rate(token, "walk", "sprint") == 105


def test_plan_turn_standing_and_immobile() -> None:
    plan = plan_turn(35, ["stand", 20, "attack"])
    assert plan.move_actions == 1 and plan.left_ft == 0 and plan.fits
    plan = plan_turn(35, [25, "stand"])  # 10 ft left cannot hold the 15 ft stand
    assert plan.move_actions == 2 and plan.left_ft == 20
    assert plan_turn(10, ["stand"]).left_ft == 0  # a Move action under 15 ft: all of it
    assert not plan_turn(0, [5]).fits and "Immobile" in plan_turn(0, [5]).reason


@pytest.mark.parametrize(
    "bonuses,penalties,net,words,speed",
    [
        (2, 1, 1, "1 bonus", 45),  # seed 000: "2 movement bonuses and 1 penalty ... 1 bonus"
        # seed 000: "3 movement penalties and 1 movement bonus ... 2 penalties"
        (1, 3, -2, "2 penalties", 15),
        (0, 0, 0, "none", 35),
        (5, 0, 5, "5 bonuses", 70),  # capped at double
        (0, 4, -4, "4 penalties", 0),  # floored at 0: Immobile
    ],
)
def test_seed_000_bonuses_and_penalties_cancel(bonuses, penalties, net, words, speed) -> None:
    assert net_bonus(bonuses, penalties) == net and describe_net(net) == words
    assert speed_with(35, net) == speed
    token = tok(f"speed=35,bonuses={bonuses},penalties={penalties}")
    assert W.net(token, "walk") == net and W.speed(token, "walk") == speed
    if speed == 0:
        assert "immobile" in token.state.conditions
        assert "Immobile: 4 penalties" in W.refusal(token, Terrain()).replace("open: ", "")


@given(st.integers(0, 200), st.integers(-30, 30))
def test_speed_with_bounds(base: int, net: int) -> None:
    s = speed_with(base, net)
    assert 0 <= s <= 2 * base
    if 0 < s < 2 * base:
        assert s == base + 10 * net


def test_mode_penalties_rulings_and_settings() -> None:
    token = tok("speed=30")
    assert W.rates(token) == {"walk": 30, "crawl": 20, "swim": 10, "climb": 10, "ladder": 10}
    assert W.rate(token, "gap") == 0 and W.rate(token, "air") == 0 and W.rate(token, "blocked") == 0
    assert "no jumping rules" in W.refusal(token, Terrain(move="gap"))
    soft = systems.create("whisperspace", {"swim_penalty": 1, "crawl_penalty": 0})
    assert soft.rates(soft.token("speed=30"))["swim"] == 20
    assert soft.rates(soft.token("speed=30"))["crawl"] == 30


def test_paces_and_per_turn() -> None:
    token = tok("speed=35")
    assert [W.rate(token, "walk", p) for p in ("walk", "run", "sprint")] == [35, 70, 105]
    assert W.rate(token, "walk") == 105  # default pace sprint
    per_turn = W.per_turn(token)
    assert per_turn["walk"] == 21 and per_turn["swim"] == 9 and per_turn["crawl"] == 15
    with pytest.raises(ArgumentError, match="did you mean 'sprint'"):
        W.rate(token, "walk", "sprnt")


def test_derived_speed_and_capacity() -> None:
    token = tok("phys=2")
    assert W.base_speed(token) == 40 and W.capacity(token) == 15
    assert W.base_speed(tok("phys=2,speed=25")) == 25
    assert W.capacity(tok("phys=2,capacity=7")) == 7
    other = systems.create("whisperspace", {"speed_base": 25, "capacity_per_phys": 3})
    assert other.base_speed(other.token("phys=2")) == 35
    assert other.capacity(other.token("phys=2")) == 11
    with pytest.raises(StatError, match="phys=-2.*capacity"):
        tok("phys=-2")
    with pytest.raises(StatError, match="phys=-7.*speed"):
        tok("phys=-7,capacity=3")


# --------------------------------------------------------------------------- standing, dragging


def test_standing_from_prone_uses_15_ft() -> None:
    token = tok("speed=35,prone=true")
    assert W.rate(token, "walk", "walk") == 20 and W.rate(token, "walk", "sprint") == 90
    assert W.rate(token, "crawl", "sprint") == 75  # crawling needs no standing
    assert W.stats_report(token)["stand_up_ft"] == 15
    dice = Dice(1)
    turn1 = W.start_turn(token, dice)
    assert turn1.state.has("standing_up") and not turn1.state.has("prone")
    assert W.rate(turn1, "walk", "sprint") == 90  # the 15 ft still come out of this turn
    turn2 = W.start_turn(W.end_turn(turn1, dice), dice)
    assert turn2.state.conditions == frozenset() and W.rate(turn2, "walk", "sprint") == 105
    assert dice.events() == []  # standing rolls nothing
    # A Move action of under 15 ft is spent standing: a walk-pace turn gets nowhere.
    slow = tok("speed=10,prone=true")
    assert W.rate(slow, "walk", "walk") == 0 and W.rate(slow, "walk", "sprint") == 20
    assert "standing from prone" in W.refusal(slow, Terrain(), "walk")
    # Crawling tokens stay prone.
    crawler = W.start_turn(tok("prone=true").moved(mode="crawl"), dice)
    assert crawler.state.has("prone")


def test_dragging() -> None:
    token = tok("speed=30,dragging=true")
    assert W.speed(token, "walk") == 20 and W.speed(token, "crawl") == 10
    for mode in ("swim", "climb", "ladder"):
        assert W.rate(token, mode) == 0
        assert "dragging something is impossible while" in W.refusal(token, Terrain(move=mode))
    assert "while swimming" in W.refusal(token, Terrain(move="swim"))


# --------------------------------------------------------------------------- encumbrance table


@pytest.mark.parametrize(
    "bulk,level,penalty,dc_add,walk",
    [
        (0, "none", 0, 0, 35),
        (10, "none", 0, 0, 35),  # at capacity
        (11, "encumbered", 1, 2, 25),
        (20, "encumbered", 1, 2, 25),  # at double
        (21, "heavy", 2, 6, 15),  # +2 replaces the +1
        (30, "heavy", 2, 6, 15),  # at triple
        (31, "immobile", 2, 6, 0),  # prone and Immobile
    ],
)
def test_encumbrance_table(bulk, level, penalty, dc_add, walk) -> None:
    assert encumbrance_for(bulk, 10) == level
    token = tok(f"phys=1,bulk={bulk}")  # capacity 5 + 5 x 1 = 10
    rep = W.stats_report(token)
    assert rep["encumbrance"] == level and rep["capacity"] == 10 and rep["bulk"] == bulk
    assert rep["encumbrance_limits"] == {
        "encumbered_above": 10,
        "heavy_above": 20,
        "immobile_above": 30,
    }
    assert rep["encumbrance_penalty"] == penalty
    assert rep["swim_climb_dc"]["easy"] == 6 + dc_add
    assert rep["rates"]["walk"] == walk
    heavy = level in ("heavy", "immobile")
    assert rep["ref_penalty_dice"] == int(heavy) and rep["fully_commit"] is not heavy
    assert (rep["strain_check"] is not None) is (level == "heavy")
    assert W.skill_check(token, "reflex", 9).penalty == int(heavy)
    assert W.skill_check(token, "athletics", 9).penalty == 0
    if level == "immobile":
        assert {"prone", "immobile"} <= token.state.conditions
        assert all(v == 0 for v in rep["per_turn"].values())
        assert "more than 3 x capacity" in W.refusal(token, Terrain())


def test_heavy_load_check_each_turn_dc_rises() -> None:
    token = tok("phys=1,bulk=25,endurance=20")  # always succeeds
    dice = Dice(3)
    dcs = []
    for _ in range(3):
        dcs.append(W.stats_report(token)["strain_check"]["target"])
        token = W.end_turn(W.start_turn(token, dice), dice)
    assert dcs == ["DC 6", "DC 7", "DC 8"]
    assert [e.decided for e in dice.events()] == [
        f"extreme_success: heavy load, endurance DC {dc}: acts normally" for dc in (6, 7, 8)
    ]
    # Out of heavy encumbrance the count resets.
    assert token.state.counter("heavy_turns") == 3
    light = W.start_turn(token.moved(counters=(("dropped_bulk", 10), ("heavy_turns", 3))), dice)
    assert light.state.counter("heavy_turns") == 0 and len(dice.events()) == 3


def test_heavy_load_failures_by_choice() -> None:
    keep = tok("phys=1,bulk=25,endurance=-20")  # always an extreme failure
    dice = Dice(5)
    after = W.start_turn(keep, dice)
    assert after.state.counter("damage") == 1
    # Fell prone, then stands at once: 15 ft of this turn's move.
    assert after.state.has("standing_up") and W.rate(after, "walk", "sprint") == 30
    assert dice.events()[0].decided.endswith("1 damage, falls prone")
    failed = W.apply_check(keep, "strain", "failure")
    assert failed.state.counter("stress") == 1 and failed.state.encumbrance == "heavy"
    drop = tok("phys=1,bulk=25,endurance=-20,strain_choice=drop_load")
    after = W.start_turn(drop, Dice(5))
    assert after.state.counter("damage") == 1 and after.state.encumbrance == "none"
    assert W.stats_report(after)["bulk"] == 10 and W.stats_report(after)["bulk_dropped"] == 15
    assert W.apply_check(drop, "strain", "failure").state.counter("stress") == 0
    half = systems.create("whisperspace", {"drop_load_to": "twice_capacity"})
    kept = half.apply_check(
        half.token("phys=1,bulk=25,strain_choice=drop_load"), "strain", "failure"
    )
    assert kept.state.encumbrance == "encumbered" and half.carried(kept) == 20


def test_no_heavy_load_check_while_swimming() -> None:
    dice = Dice(2)
    token = W.start_turn(tok("phys=1,bulk=25").moved(mode="swim"), dice)
    assert dice.events() == [] and token.state.counter("heavy_turns") == 1


def test_hourly_check_while_encumbered() -> None:
    dice = Dice(4)
    token = tok("phys=1,bulk=15,endurance=-20")
    for _ in range(ws.HOUR_TURNS):
        token = W.start_turn(token, dice)
    assert len(dice.events()) == 1 and "an hour encumbered" in dice.events()[0].decided
    assert token.state.has("strained") and token.state.encumbrance == "heavy"
    # Ten minutes' rest unencumbered (the load dropped; turns without moving) clears it.
    token = token.moved(counters=(("dropped_bulk", 5),))
    for _ in range(ws.REST_TURNS):
        token = W.paced(W.start_turn(token, dice), "sprint", False)
    assert token.state.has("strained")  # the rest takes effect as the next turn starts
    token = W.start_turn(token, dice)
    assert not token.state.has("strained")


# --------------------------------------------------------------------------- swim and climb


def test_swim_and_climb_checks_from_terrain() -> None:
    token = tok("speed=30,athletics=1")
    check = W.cell_check(token, Terrain(move="swim", difficulty="easy"))
    assert check is not None and check.target == "DC 6" and check.what == "athletics (swim)"
    assert check.p_success == Fraction(8, 12) == check.check.p_success()
    climb = W.cell_check(token, Terrain(move="climb", difficulty="difficult", height=20))
    assert climb.target == "DC 12" and climb.what == "athletics (climb 20 ft)"
    assert W.cell_check(token, Terrain(move="ladder", difficulty="moderate")).target == "DC 9"
    assert W.cell_check(token, Terrain(move="swim")) is None  # calm water
    assert W.cell_check(token, Terrain(move="walk", difficulty="heroic")) is None
    encumbered = tok("phys=1,bulk=11")
    assert W.cell_check(encumbered, Terrain(move="swim", difficulty="easy")).target == "DC 8"
    heavy = tok("phys=1,bulk=21")
    assert W.cell_check(heavy, Terrain(move="climb", difficulty="very_easy")).target == "DC 10"


def test_seed_001_degrees_on_the_wall() -> None:
    # "the DC was 8. If a character rolls a 14 (6 over) they're in extreme success territory"
    assert ws.degree_for_margin(14 - 8) == "extreme_success"
    assert ws.degree_for_margin(4 - 8) == "extreme_failure"
    outcomes = WhisperspaceCheck(2, 8).outcomes()
    assert outcomes["extreme_success"] == Fraction(3, 12)  # 10-12 on the die: 12-14
    # Bonus and penalty dice: 2 + 1 -> 1 bonus, 2 + 2 -> none, 4 + 2 -> 2 bonus,
    # 2 penalty dice -> 3d12 keep the lowest.
    assert [WhisperspaceCheck(0, 8, b, p).net_dice for b, p in ((2, 1), (2, 2), (4, 2))] == [
        1,
        0,
        2,
    ]
    assert WhisperspaceCheck(3, 8, 0, 2).total_dist() == {
        t + 3: p for t, p in keep_lowest(3, 12).items()
    }


@pytest.mark.parametrize("degree", ["extreme_success", "success", "failure", "extreme_failure"])
def test_swim_results_for_the_rest_of_the_move(degree) -> None:
    token = tok("speed=40").moved(mode="swim")  # 40 - 20 = 20 ft swimming
    after = W.apply_check(token, "athletics (swim)", degree)
    expected = {"extreme_success": 30, "success": 20, "failure": 10, "extreme_failure": 10}
    assert W.speed(after, "swim") == expected[degree]
    assert W.speed(after, "walk") == 40  # only swimming changes
    assert after.state.has("asphyxiating") is (degree == "extreme_failure")
    ended = W.end_turn(after, Dice(1))  # the Move action ends with the turn
    assert ended.state.counter("check_penalty_swim") == 0
    assert W.speed(ended, "swim") == (10 if degree == "extreme_failure" else 20)


def test_asphyxiating_ends() -> None:
    token = W.apply_check(tok("speed=40").moved(mode="swim"), "athletics (swim)", "extreme_failure")
    assert W.apply_check(token, "asphyxiation", "success").state.has("asphyxiating") is False
    assert W.apply_check(token, "asphyxiation", "failure").state.has("asphyxiating")
    ashore = W.start_turn(token.moved(mode="walk"), Dice(1))
    assert not ashore.state.has("asphyxiating")
    with pytest.raises(ArgumentError, match="degree 'great'"):
        W.apply_check(token, "athletics (swim)", "great")


def test_later_check_replaces_the_effect() -> None:
    token = tok("speed=40").moved(mode="climb")
    token = W.apply_check(token, "athletics (climb 5 ft)", "failure")
    assert W.speed(token, "climb") == 10
    token = W.apply_check(token, "athletics (climb 5 ft)", "extreme_success")
    assert W.speed(token, "climb") == 30 and W.speed(token, "ladder") == 30


def test_climb_extreme_failure_falls_from_partway() -> None:
    token = tok("speed=30").moved(mode="climb")
    dice = Dice(9)
    fallen = W.apply_check(token, "athletics (climb 40 ft)", "extreme_failure", dice)
    (event,) = dice.events()
    # Half of 40 ft: 20 ft, Near, 1d12 + 0.
    assert event.expression == "1d12" and event.decided.startswith("fall 20 ft (Near)")
    outcome = fall_severity(event.total)
    assert fallen.state.counter("damage") == outcome.damage
    assert fallen.state.has("prone") and fallen.state.counter("fall_ft") == 0
    # Without dice the fall waits for the end of the turn, then rolls the same way.
    pending = W.apply_check(token, "athletics (climb 40 ft)", "extreme_failure")
    assert pending.state.counter("fall_ft") == 20 and Dice(9).events() == []
    dice2 = Dice(9)
    ended = W.end_turn(pending, dice2)
    assert dice2.events()[0].total == event.total
    assert ended.state.counter("damage") == outcome.damage
    top = systems.create("whisperspace", {"climb_fall_at": 1})
    top.apply_check(token, "athletics (climb 40 ft)", "extreme_failure", dice3 := Dice(1))
    assert dice3.events()[0].decided.startswith("fall 40 ft (Medium)")


def test_tall_climb_cells_take_longer() -> None:
    # Rates are per distance; the movement graph charges a climb cell's height, once
    # (issue 17: it was charged twice, a 20-ft climb costing 80 ft).
    from engine.grid import Grid
    from engine.mapmodel import MapModel
    from engine.movement import MovementGraph

    token = tok("speed=30")
    assert W.cell_rate(token, Terrain(move="climb")) == 30
    assert W.cell_rate(token, Terrain(move="climb", height=20)) == 30
    for height, turns in ((None, Fraction(1, 6)), (20, Fraction(2, 3)), (2, Fraction(1, 6))):
        model = MapModel.uniform(
            Grid("orthogonal", 2, 1, 32, 32), Terrain(move="climb", height=height)
        )
        graph = MovementGraph(model, W, token, "sprint")
        assert graph.turns(graph.ticks_of((1, 0))) == turns, height


# --------------------------------------------------------------------------- falling tables


@pytest.mark.parametrize(
    "feet,name,modifier",
    [
        (0, "melee", -2),
        (5, "melee", -2),
        (Fraction(11, 2), "very_near", -1),
        (15, "very_near", -1),
        (16, "near", 0),
        (30, "near", 0),
        (31, "medium", 2),
        (60, "medium", 2),
        (61, "long", 4),
        (120, "long", 4),
        (121, "very_long", 6),
        (250, "very_long", 6),
        (251, "extreme", 9),
        (10000, "extreme", 9),
    ],
)
def test_fall_bands(feet, name, modifier) -> None:
    band = fall_band(feet)
    assert (band.name, band.modifier) == (name, modifier)


@pytest.mark.parametrize(
    "results,damage,stunned,unconscious",
    [
        ((-1, 0, 1, 2, 3), 0, 0, False),  # "1-3 No damage", results below 1 too
        ((4, 5, 6), 1, 0, False),
        ((7, 8), 2, 0, False),
        ((9, 10), 3, 1, False),
        ((11, 12), 4, 2, False),
        ((13, 14, 15), 6, 0, True),
        ((16, 17, 21), 8, 0, False),
    ],
)
def test_fall_severity_rows(results, damage, stunned, unconscious) -> None:
    for r in results:
        row = fall_severity(r)
        assert (row.damage, row.stunned_rounds, row.unconscious) == (damage, stunned, unconscious)


def test_fall_odds_exact() -> None:
    twelfths = {
        2: [5, 3, 2, 2, 0, 0, 0],  # Melee, 1d12 - 2
        20: [3, 3, 2, 2, 2, 0, 0],  # Near, 1d12
        300: [0, 0, 0, 1, 2, 3, 6],  # Extreme, 1d12 + 9
    }
    for feet, counts in twelfths.items():
        odds = fall_odds(feet)
        assert list(odds) == [row.row for row in FALL_SEVERITY]
        assert list(odds.values()) == [Fraction(c, 12) for c in counts]


@given(st.fractions(min_value=0, max_value=1000))
def test_fall_odds_sum_to_one(feet: Fraction) -> None:
    assert sum(fall_odds(feet).values()) == 1


def test_fall_from_the_turn_loop_stuns_then_recovers() -> None:
    # Find a seed whose Near fall (1d12) stuns for 1 round: a 9 or 10.
    seed = next(s for s in range(200) if Dice(s).roll(1, 12).total in (9, 10))
    dice = Dice(seed)
    token = W.fall(tok("speed=30"), 20, dice)
    assert token.state.has("stunned") and token.state.counter("damage") == 3
    assert W.rate(token, "walk") == 0 and "Stunned" in W.refusal(token, Terrain())
    token = W.end_turn(token, dice)
    assert token.state.has("stunned")  # the next round is the stunned one
    token = W.start_turn(token, dice)
    assert token.state.has("stunned") and W.rate(token, "walk") == 0
    token = W.end_turn(token, dice)
    assert not token.state.has("stunned") and token.state.has("prone")
    token = W.start_turn(token, dice)
    assert W.rate(token, "walk") == 75  # stands up: 90 - 15
    assert W.fall(tok(), 0, Dice(1)).state.has("prone")  # 0 ft: prone, nothing rolled


# --------------------------------------------------------------------------- stats report


def test_stats_report_per_contract() -> None:
    rep = W.stats_report(tok("phys=1,bulk=12,bonuses=1"))
    assert rep["system"] == "whisperspace" and rep["unit"] == "ft" and rep["cell_size"] == 5
    assert rep["rates"] == {"walk": 35, "crawl": 25, "swim": 15, "climb": 15, "ladder": 15}
    assert rep["per_turn"]["walk"] == 21 and rep["per_turn"]["gap"] == 0
    assert rep["per_turn_ft"]["run"]["walk"] == 70
    assert rep["speed"] == 35 and rep["speed_source"] == "30 + 5 x PHYS"
    assert rep["encumbrance"] == "encumbered" and rep["capacity"] == 10
    assert rep["modifiers"]["swim"] == {"bonuses": 1, "mode": -2, "encumbrance": -1}
    odd = W.stats_report(tok("speed=7.5"))
    assert odd["rates"]["walk"] == "15/2" and odd["per_turn"]["walk"] == "9/2"


def test_stats_command(capsys: pytest.CaptureFixture[str]) -> None:
    args = ["stats", "--system", "whisperspace", "--token", "phys=1,bulk=21", "--json"]
    assert main(args) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["encumbrance"] == "heavy" and out["strain_check"]["target"] == "DC 6"
    assert main(["stats", "--system", "whisperspace", "--token", "phys=1"]) == 0
    rows = [line.split() for line in capsys.readouterr().out.splitlines()]
    assert ["walk", "7", "14", "21"] in rows  # walk, run, sprint: 35 ft a Move action


def test_turns_are_deterministic() -> None:
    def play(seed: int) -> tuple[object, list[dict[str, object]]]:
        dice = Dice(seed)
        token = tok("phys=1,bulk=25,endurance=1").moved(mode="climb")
        for _ in range(6):
            token = W.start_turn(token, dice)
            token = W.apply_check(token, "athletics (climb 30 ft)", "extreme_failure")
            token = W.end_turn(token, dice)
        return token.state, [e.to_dict() for e in dice.events()]

    assert play(7) == play(7)


def test_per_turn_swim_and_climb_carry_the_mode_penalties_and_no_check_result() -> None:
    """CONTRACT.md: per_turn is "the most cells of that mode the token crosses in one turn
    when it spends the whole turn moving (3 actions ...)". Seed 000: "Certain types of
    movement (swimming, crawling) may impose movement penalties", "Each movement penalty
    reduces your movement speed by 10 ft"; RULES.md 1: "Mode penalties (ruling): crawl +1,
    swim +2, climb +2". Speed 30: three Move actions of 10 ft swimming or climbing (ladders
    too) = 6 cells of 5 ft, of 20 ft crawling = 12, of 30 ft walking = 18.

    The figure counts no check result (docs/commands.md): a swim check's "Extreme Success:
    navigate the water well; reduce movement penalty by -1" makes that Move action 20 ft, and
    one on each of the three would swim 12 cells, but that is the dice's, not the token's;
    calm water asks no check at all. Encumbered (bulk 12 of capacity 10): "+1 movement
    penalty", so 3 in water: 0 ft, the swimmer cannot move there."""
    token = tok("speed=30")
    assert W.per_turn(token) == {
        "walk": 18,
        "crawl": 12,
        "swim": 6,
        "climb": 6,
        "ladder": 6,
        "gap": 0,
        "air": 0,
        "blocked": 0,
    }
    lucky = W.apply_check(token, "athletics (swim)", "extreme_success")
    assert W.rate(lucky, "swim", "sprint") == 60  # 12 cells: not per_turn's
    assert W.stats_report(token)["per_turn"]["swim"] == 6
    loaded = W.per_turn(tok("speed=30,capacity=10,bulk=12"))
    assert loaded["swim"] == 0 and loaded["climb"] == 0 and loaded["walk"] == 12
