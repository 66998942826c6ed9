"""Star Wars D6 REUP movement (seed 003; RULES.md section 3): golden figures from the seed."""

from __future__ import annotations

import json
from fractions import Fraction

import pytest

from engine import systems
from engine.cli import main
from engine.dice import Dice, DieCode
from engine.errors import ArgumentError, StatError
from engine.mapmodel import Terrain
from engine.systems import d6
from engine.systems.base import CellCheck
from engine.systems.d6 import D6Check, degree_for_margin

SYSTEM = systems.create("d6")
RHEN = SYSTEM.token("move=10,dexterity=3D")  # seed 003: "Rhen (DEX 3D, Move 10)"


# --------------------------------------------------------------------------- an independent oracle


def wild_at_least(w: int) -> Fraction:
    """P(wild die >= w) by the rule itself: faces 1-5 stand, a 6 adds a re-roll."""
    if w <= 1:
        return Fraction(1)
    hits = sum(1 for face in range(1, 6) if face >= w)
    return Fraction(hits, 6) + Fraction(1, 6) * wild_at_least(w - 6)


def pool_at_least(dice: int, pips: int, target: int) -> Fraction:
    """P(dice D + pips >= target) with one wild die, by brute force over the regular dice."""
    totals: dict[int, int] = {0: 1}
    for _ in range(dice - 1):
        nxt: dict[int, int] = {}
        for s, c in totals.items():
            for face in range(1, 7):
                nxt[s + face] = nxt.get(s + face, 0) + c
        totals = nxt
    denom = 6 ** (dice - 1)
    return sum(
        (Fraction(c, denom) * wild_at_least(target - pips - s) for s, c in totals.items()),
        Fraction(0),
    )


# --------------------------------------------------------------------------- speeds and distances


def test_speeds_rates_and_partial_moves() -> None:
    # Seed 003, Move 10: cautious 5, cruising 10, high 20, all-out 40; half to full distance.
    assert [SYSTEM.rate(RHEN, "walk", p) for p in d6.PACES] == [5, 10, 20, 40]
    assert SYSTEM.move_range(RHEN, "all_out") == (20, 40)  # "allows 20-40 meters"
    assert d6.move_range(RHEN, "cautious") == (Fraction(5, 2), 5)
    assert SYSTEM.move_range(RHEN, "stop") == (0, 0)
    # Unusual movement is Move / 3 as the base for every speed.
    assert SYSTEM.rate(RHEN, "swim", "all_out") == Fraction(40, 3)
    assert SYSTEM.rate(RHEN, "climb", "cruising") == Fraction(10, 3)
    assert SYSTEM.rate(RHEN, "air", "all_out") == 0 and SYSTEM.rate(RHEN, "blocked") == 0
    per = SYSTEM.per_turn(RHEN)  # an all-out round on 2 m cells
    assert per["walk"] == 20 and per["swim"] == Fraction(20, 3) and per["air"] == 0
    assert SYSTEM.rates(RHEN)["high"] == {
        "walk": 20,
        "crawl": Fraction(20, 3),
        "swim": Fraction(20, 3),
        "climb": Fraction(20, 3),
        "ladder": Fraction(20, 3),
    }
    assert "do not fly" in (SYSTEM.refusal(RHEN, Terrain(move="air")) or "")
    assert SYSTEM.refusal(RHEN, Terrain(move="swim")) is None


def test_acceleration_examples() -> None:
    # Seed 003: "Cautious -> next round can be Stop, Cruise, or High Speed (not All-Out)".
    assert d6.allowed_speeds("cautious") == ("stop", "cautious", "cruising", "high")
    # "All-Out -> next round can be All-Out, High Speed, or Cruise (not Cautious or Stop)".
    assert d6.allowed_speeds("all_out") == ("cruising", "high", "all_out")
    assert d6.allowed_speeds("stop") == ("stop", "cautious", "cruising")
    assert d6.speeds_to("stop", "all_out") == ("cruising", "all_out")
    assert d6.speeds_to("all_out", "stop") == ("cruising", "stop")
    # A token starts at rest (setting start_speed): it cannot sprint in its first round.
    assert SYSTEM.allowed_paces(RHEN) == ("stop", "cautious", "cruising")
    with pytest.raises(ArgumentError, match="up to 2 levels"):
        SYSTEM.with_speed(RHEN, "all_out")
    moving = SYSTEM.with_speed(SYSTEM.with_speed(RHEN, "cruising"), "all_out")
    assert SYSTEM.allowed_paces(moving) == ("cruising", "high", "all_out")
    running = systems.create("d6", {"start_speed": "high"}).token({})
    assert "all_out" in SYSTEM.allowed_paces(running)
    with pytest.raises(ArgumentError, match="did you mean 'all_out'"):
        d6.allowed_speeds("allout")


# --------------------------------------------------------------------------- Rhen's examples


def test_rhen_stream_bed_cautious_is_free() -> None:
    # Easy stream bed, cautiously: 5 m, no roll, and she shoots at full dice.
    easy = Terrain(difficulty="easy")
    assert SYSTEM.cell_check(RHEN, easy, "cautious") is None
    assert SYSTEM.move_range(RHEN, "cautious")[1] == 5
    shot = D6Check(DieCode(4), 10, SYSTEM.round_actions(RHEN, easy, "cautious", other=1))
    assert str(shot.rolled) == "4D"


def test_rhen_walks_and_fires() -> None:
    # Moderate terrain, cruising: no roll, but an action; firing too is -1D: a 4D blaster
    # rolls 3D (the seed's "rolls 3D to hit" implies a 4D blaster skill).
    moderate = Terrain(difficulty="moderate")
    assert SYSTEM.cell_check(RHEN, moderate, "cruising") is None
    actions = SYSTEM.round_actions(RHEN, moderate, "cruising", other=1)
    assert actions == 2 and str(D6Check(DieCode(4), 10, actions).rolled) == "3D"


@pytest.mark.parametrize(
    "terrain,pace,level,dn,rolled,metres,p",
    [
        # river: Very Difficult, cautious -> Difficult, DN 17, rolls 17, moves 5 m
        (
            Terrain(difficulty="very_difficult", dn=22),
            "cautious",
            "difficult",
            17,
            17,
            5,
            Fraction(179, 1944),
        ),
        # steep hill: Difficult, DN 16, cruising, rolls 16, moves 10 m
        (
            Terrain(difficulty="difficult", dn=16),
            "cruising",
            "difficult",
            16,
            16,
            10,
            Fraction(971, 7776),
        ),
        # open field: Easy, DN 8 (the default), high speed, rolls 10, moves 20 m
        (Terrain(difficulty="easy"), "high", "easy", 8, 10, 20, Fraction(181, 216)),
        # easy field all-out: becomes Moderate, DN 11, rolls 12, reaches the bunker (40 m)
        (Terrain(difficulty="easy", dn=6), "all_out", "moderate", 11, 12, 40, Fraction(85, 162)),
    ],
)
def test_rhen_successes(
    terrain: Terrain, pace: str, level: str, dn: int, rolled: int, metres: int, p: Fraction
) -> None:
    check = SYSTEM.cell_check(RHEN, terrain, pace)
    assert check is not None and check.target == f"DN {dn}"
    assert check.what.endswith(level) and check.check.dn == dn and check.p_success == p
    assert str(check.check.rolled) == "3D"  # Dexterity, moving is her only action
    degree = degree_for_margin(rolled - dn)
    assert degree == "success"
    after = SYSTEM.apply_check(RHEN, check.what, degree)
    assert after.state == RHEN.state
    assert SYSTEM.move_range(RHEN, pace)[1] * SYSTEM.failure_share(check, degree) == metres


def test_rhen_rocky_ground_fall() -> None:
    # High speed over rocky cratered ground: Difficult -> Very Difficult, DN 24; rolls 16:
    # fails by 8 -> Fall: halfway (10 of 20 m), kneeling, no more actions, -2D next round.
    check = SYSTEM.cell_check(RHEN, Terrain(difficulty="difficult", dn=19), "high")
    assert check is not None and check.target == "DN 24"
    assert "difficult->very_difficult" in check.what
    degree = degree_for_margin(16 - 24)
    assert degree == "fail_7_10"
    fell = SYSTEM.apply_check(RHEN, check.what, degree)
    assert fell.state.conditions == {"kneeling", "no_actions"}
    assert SYSTEM.move_range(RHEN, "high")[1] * SYSTEM.failure_share(check, degree) == 10
    assert fell.state.counter("penalty_next") == 2 and fell.state.counter("collision_dice") == 0
    nxt = SYSTEM.start_turn(fell, Dice(1))
    # Next round she may act: no lost actions, and up from kneeling (ruling R2).
    assert nxt.state.counter("penalty") == 2 and nxt.state.conditions == set()
    assert SYSTEM.held(nxt) is None
    # The -2D reaches her next roll.
    again = SYSTEM.cell_check(nxt, Terrain(difficulty="easy"), "high")
    assert again is not None and str(again.check.rolled) == "1D"


def test_rhen_dense_forest_all_out() -> None:
    # All-out through dense forest: Difficult -> Heroic, DN 34 (the same Difficult 19 as the
    # rocky ground, two levels up).
    check = SYSTEM.cell_check(RHEN, Terrain(difficulty="difficult", dn=19), "all_out")
    assert check is not None and check.target == "DN 34" and check.what.endswith("->heroic")
    assert check.p_success == pool_at_least(3, 0, 34) == Fraction(971, 1679616)


def test_rhen_tumble_takes_3d_collision() -> None:
    # "Rhen runs at high speed and fails by 18 -> Tumble. She takes 3D collision damage."
    check = SYSTEM.cell_check(RHEN, Terrain(difficulty="easy"), "high")
    assert check is not None
    degree = degree_for_margin(-18)
    assert degree == "fail_16_20"
    hurt = SYSTEM.apply_check(RHEN, check.what, degree)
    assert hurt.state.counter("collision_dice") == 3
    assert hurt.state.conditions == {"prone", "no_actions"}
    assert SYSTEM.failure_share(check, degree) == Fraction(1, 4)  # tumble_stop=quarter
    assert hurt.state.counter("lose_next") == 1
    dice = Dice(7)
    done = SYSTEM.end_turn(hurt, dice)
    hit, resist = dice.events()
    assert hit.expression == "3D" and resist.expression == "3D"
    assert done.state.counter("collision_margin") == hit.total - resist.total
    assert done.state.has("injured") == (hit.total > resist.total)
    assert done.state.counter("collision_dice") == 0
    # Next round: no actions (lost), still prone; the round after, free again and up.
    r2 = SYSTEM.start_turn(done, dice)
    assert r2.state.has("no_actions") and r2.state.has("prone") and SYSTEM.held(r2)
    r3 = SYSTEM.start_turn(r2, dice)
    assert not r3.state.has("no_actions") and not r3.state.has("prone")
    assert SYSTEM.held(r3) is None


def test_shifted_numbers_without_a_dn_and_the_other_reading() -> None:
    # Without a cell dn the rolled level's default number (RULES.md 3's ruling) is used.
    want = {"cautious": 18, "cruising": 25, "high": 31, "all_out": 41}
    for pace, dn in want.items():
        check = SYSTEM.cell_check(RHEN, Terrain(difficulty="very_difficult"), pace)
        assert check is not None and check.check.dn == dn, pace
    # dn_shift=level_default: a shifted cell number becomes the new level's default.
    other = systems.create("d6", {"dn_shift": "level_default"})
    rocky = other.cell_check(RHEN, Terrain(difficulty="difficult", dn=19), "high")
    assert rocky is not None and rocky.target == "DN 25"
    hill = other.cell_check(RHEN, Terrain(difficulty="difficult", dn=16), "cruising")
    assert hill is not None and hill.target == "DN 16"  # unshifted: the cell's number
    # A dn alone picks the level; a level beyond Heroic adds 10 each.
    assert SYSTEM.terrain_level(Terrain(dn=24)) == 4 and d6.level_index("heroic+10") == 6
    assert SYSTEM.number(7) == 51 and d6.level_range(6) == (41, 50)
    assert systems.create("d6", {"dn_easy": 6}).number(1) == 6


def test_difficulty_none_counts_as_very_easy_at_speed() -> None:
    open_ground = Terrain()
    assert SYSTEM.cell_check(RHEN, open_ground, "cautious") is None
    assert SYSTEM.cell_check(RHEN, open_ground, "cruising") is None
    high = SYSTEM.cell_check(RHEN, open_ground, "high")
    sprint = SYSTEM.cell_check(RHEN, open_ground, "all_out")
    assert high is not None and high.target == "DN 3" and high.p_success == 1
    assert sprint is not None and sprint.target == "DN 8" and sprint.p_success == Fraction(181, 216)


# --------------------------------------------------------------------------- odds, skills, actions


def test_exact_odds_of_a_3d_pool() -> None:
    golden = {3: Fraction(1), 8: Fraction(181, 216), 11: Fraction(85, 162), 13: Fraction(203, 648)}
    golden |= {16: Fraction(971, 7776), 17: Fraction(179, 1944)}
    golden |= {18: Fraction(67, 972), 24: Fraction(67, 5832), 34: Fraction(971, 1679616)}
    for dn, p in golden.items():
        assert d6.p_at_least(DieCode(3), dn) == p == pool_at_least(3, 0, dn), dn
    # Beyond the wild die's truncation (DN 98+) the tail is still exact.
    for target in (97, 98, 103, 120, 171):
        assert d6.p_at_least(DieCode(3, 2), target) == pool_at_least(3, 2, target)
    assert d6.p_at_least(DieCode(1), 98) == Fraction(5, 6**17)
    for wild_one in ("complication", "remove_highest", "none"):
        for target in range(-1, 40):
            check = D6Check(DieCode(3, 1), target, wild_one=wild_one)
            assert d6.p_at_least(DieCode(3, 1), target, wild_one=wild_one) == check.p_success()
    assert d6.p_at_least(DieCode(3), 11, wild=False) == Fraction(1, 2)
    plain = systems.create("d6", {"wild_die": "false"})
    check = plain.cell_check(RHEN, Terrain(difficulty="difficult", dn=11), "cruising")
    assert check is not None and check.p_success == Fraction(1, 2) and not check.check.wild


def test_skills_by_mode() -> None:
    tok = SYSTEM.token("dexterity=3D,strength=2D+2,running=4D+1,climbing=3D+1")
    assert SYSTEM.skill(tok, "walk") == ("running", DieCode(4, 1))
    assert SYSTEM.skill(tok, "swim") == ("strength", DieCode(2, 2))
    assert SYSTEM.skill(tok, "climb") == ("climbing", DieCode(3, 1))
    assert SYSTEM.skill(tok, "gap") == ("climbing", DieCode(3, 1))
    assert SYSTEM.skill(RHEN, "walk") == ("dexterity", DieCode(3))
    assert SYSTEM.stamina_code(tok) == ("strength", DieCode(2, 2))
    swim = SYSTEM.cell_check(tok, Terrain(move="swim", difficulty="difficult"), "cruising")
    assert swim is not None and swim.what.startswith("move cruising swim: strength 2D+2")


def test_multi_action_penalty() -> None:
    hill = Terrain(difficulty="difficult")
    busy = RHEN.moved(counters=(("actions", 2),))  # two other actions declared this round
    check = SYSTEM.cell_check(busy, hill, "cruising")
    assert check is not None and check.check.actions == 3 and str(check.check.rolled) == "1D"
    sprint = SYSTEM.cell_check(busy, hill, "all_out")  # all-out: nothing else that round
    assert sprint is not None and sprint.check.actions == 1
    careful = SYSTEM.cell_check(busy, hill, "cautious")  # a cautious roll is an action
    assert careful is not None and careful.check.actions == 3
    free = systems.create("d6", {"cautious_roll_action": "false"})
    c2 = free.cell_check(busy, hill, "cautious")
    assert c2 is not None and c2.check.actions == 2
    assert SYSTEM.round_actions(busy, Terrain(), "cautious") == 2  # the free move adds none


def test_maneuvers() -> None:
    assert d6.maneuver("high").low == 11 and d6.maneuver("extreme").high is None
    assert [m.low for m in d6.MANEUVERS] == [1, 6, 11, 16]
    stunt = SYSTEM.move_check(RHEN, Terrain(difficulty="easy"), "cruising", maneuver=5)
    assert stunt is not None and stunt.target == "DN 13"  # a stunt makes even easy ground roll
    with pytest.raises(ArgumentError, match="did you mean 'minor'"):
        d6.maneuver("minr")


# --------------------------------------------------------------------------- failures


def test_failure_table_and_collisions() -> None:
    what = "move all_out walk: dexterity 3D vs easy->moderate"
    sprint = CellCheck(what, "DN 13", Fraction(0))
    slip = SYSTEM.apply_check(RHEN, what, "fail_1_3")
    assert slip.state.counter("penalty") == 1 and SYSTEM.failure_share(sprint, "fail_1_3") == 1
    slip2 = SYSTEM.apply_check(RHEN, what, "fail_4_6")
    assert slip2.state.counter("penalty") == 3 and slip2.state.counter("penalty_next") == 1
    assert SYSTEM.failure_share(sprint, "fail_4_6") == Fraction(1, 2)
    assert not slip2.state.has("no_actions")
    minor = SYSTEM.apply_check(RHEN, what, "fail_11_15")
    assert minor.state.counter("collision_dice") == 1  # all-out: 4D - 3D
    assert SYSTEM.failure_share(sprint, "fail_11_15") == Fraction(1, 4)
    major = SYSTEM.apply_check(RHEN, "move cruising walk: x", "fail_21_plus")
    assert major.state.counter("collision_dice") == 4  # cruising 2D + 2D
    assert d6.collision_damage("high", "fail_11_15") is None  # "none if slower"
    assert d6.collision_damage("cautious", "fail_16_20") == DieCode(1)
    assert d6.collision_damage("all_out", "fail_7_10") is None
    half = systems.create("d6", {"tumble_stop": "half"})
    assert half.failure_share(sprint, "fail_16_20") == Fraction(1, 2)
    with pytest.raises(ArgumentError, match="degree 'oops'"):
        SYSTEM.apply_check(RHEN, what, "oops")
    # A failed jump over a gap lands in it.
    jump = SYSTEM.cell_check(RHEN, Terrain(move="gap", difficulty="easy"), "cautious")
    assert jump is not None and jump.target == "DN 8" and jump.what.startswith("jump cautious")
    assert SYSTEM.apply_check(RHEN, jump.what, "fail_4_6").state.has("fallen")
    assert not SYSTEM.apply_check(RHEN, jump.what, "fail_1_3").state.has("fallen")
    tired = SYSTEM.apply_check(RHEN, "stamina high: strength 3D", "fail_1_3")
    assert tired.state.conditions == {"exhausted"}


def test_one_roll_per_round_at_the_hardest_cell() -> None:
    cells = [
        Terrain(difficulty="easy"),
        Terrain(difficulty="difficult", dn=19),
        Terrain(difficulty="moderate"),
        Terrain(move="gap", difficulty="easy"),
    ]
    checks = SYSTEM.round_checks(RHEN, cells, "high")
    assert [c.target for c in checks] == ["DN 24", "DN 8"]  # the hardest move, and the jump
    runs = systems.create("d6", {"roll_per": "cell_run"}).round_checks(RHEN, cells, "high")
    assert [c.target for c in runs] == ["DN 8", "DN 24", "DN 13", "DN 8"]


_D6_LEGEND = {
    ".": {"terrain": "open", "move": "walk"},
    "d": {"terrain": "forest", "move": "walk", "difficulty": "difficult"},
    "x": {"terrain": "minefield", "move": "walk", "difficulty": "very_difficult"},
}


def _turn_loop_checks(tmp_path, row: str, dexterity: str, rounds: int) -> list[list[dict]]:
    """The check events of each round of a cruising walker heading east along ``row``."""
    import tmxtext

    from engine.scenario import load_scenario
    from engine.sim import Simulation

    old = (tmxtext.LEGEND, tmxtext.CHARS)
    tmxtext.LEGEND, tmxtext.CHARS = _D6_LEGEND, list(_D6_LEGEND)
    try:
        tmxtext.write(tmp_path / "m.tmx", [row])
    finally:
        tmxtext.LEGEND, tmxtext.CHARS = old
    (tmp_path / "s.yaml").write_text(
        f"""
map: m.tmx
system: d6
turns: {rounds}
tokens:
  - {{id: w, policy: waypoints, cell: [0, 0], waypoints: [[{len(row) - 1}, 0]],
      pace: cruising, stats: {{speed: cruising, dexterity: {dexterity}}}}}
"""
    )
    sim = Simulation(load_scenario(tmp_path / "s.yaml"), 1)
    out = []
    for _ in range(rounds):
        before = len(sim.events)
        sim.play_turn()
        out.append([e for e in sim.events[before:] if e["type"] in ("check", "move")])
    return out


def test_turn_loop_rolls_once_a_round_at_the_hardest_cell(tmp_path) -> None:
    """RULES.md 3: "What terrain asks (one roll per round's move, at the hardest cell crossed
    that round, ruling)"; seed 003 cruising: "Requires a roll in Difficult, Very Difficult, Heroic
    terrain". Move 10 cruising: 10 m = 5 cells a round. Round 1 crosses a difficult and a very
    difficult cell: one roll, at the very difficult cell (DN 25); a run of difficult cells over
    two rounds: a roll in each round (DN 18)."""
    rounds = _turn_loop_checks(tmp_path, ".dx" + "." * 10, "9D", 2)
    checks = [[e for e in r if e["type"] == "check"] for r in rounds]
    assert [[(e["cell"], e["target"]) for e in r] for r in checks] == [[([2, 0], "DN 25")], []]
    rounds = _turn_loop_checks(tmp_path, "d" * 13, "9D", 2)
    checks = [[e for e in r if e["type"] == "check"] for r in rounds]
    assert [[(e["cell"], e["target"]) for e in r] for r in checks] == [
        [([1, 0], "DN 18")],
        [([6, 0], "DN 18")],
    ]


def test_turn_loop_failed_round_roll_makes_its_bands_share(tmp_path) -> None:
    """The round's one roll (RULES.md 3), at the very difficult cell 4 (DN 25), by Dexterity 1D
    (a lone wild die: 25 needs four 6s in a row) fails by 11-15 in seed 1's run: seed 003
    "Minor tumble: Fall after one-quarter move". The round set out to walk 5 cells (cruising,
    10 m of 2-m cells); a quarter of that, rounded down to whole cells (ruling: the share of
    the planned move, in time), is 1 cell: 2 m, 1/5 of the round. It was 3 cells (the stop
    before the roll's cell) before the loop played the bands."""
    rounds = _turn_loop_checks(tmp_path, "...dx" + "." * 8, "1D", 1)
    (check,) = [e for e in rounds[0] if e["type"] == "check"]
    (move,) = [e for e in rounds[0] if e["type"] == "move"]
    assert check["cell"] == [4, 0] and check["target"] == "DN 25" and not check["success"]
    assert check["degree"] == "fail_11_15"
    assert move["path"] == [[0, 0], [1, 0]] and move["turns"] == "1/5"


# --------------------------------------------------------------------------- encumbrance


def test_strength_pips_carry_items() -> None:
    # Seed 003: "Strength 3D+2 = (3x3) + 2 = 11 medium items".
    tok = SYSTEM.token("strength=3D+2,items=12")
    assert SYSTEM.carrying_capacity(tok) == 11
    assert SYSTEM.encumbrance(tok) == "none"  # the optional rule is off by default
    heavy = systems.create("d6", {"encumbrance": "true"})
    loaded = heavy.token("strength=3D+2,items=12")
    assert heavy.encumbrance(loaded) == "encumbered" and loaded.state.encumbrance == "encumbered"
    assert heavy.encumbrance(heavy.token("strength=3D+2,items=11")) == "none"
    # RULES.md 3: an overloaded token rolls stamina (setting overload, default stamina) but
    # keeps every speed (issue 17: the old `overloaded_top_speed=high` cap is not a ruling).
    assert heavy.rate(loaded, "walk", "all_out") == 40 and heavy.per_turn(loaded)["walk"] == 20
    assert heavy.top_speed(loaded) == "all_out"
    assert heavy.config["overload"] == "stamina"
    assert systems.create("d6", {"overload": "none"}).config["overload"] == "none"


def test_validation() -> None:
    with pytest.raises(StatError, match="dexterity"):
        SYSTEM.token("dexterity=101D")
    with pytest.raises(StatError, match="move"):
        SYSTEM.token("move=-1")


# --------------------------------------------------------------------------- long distance


def test_long_distance_run_schedule() -> None:
    # 10 km at high speed (20 m a round): 500 rounds, 2500 s; a check every 10 minutes,
    # Very Easy first then one level harder: DN 3, 8, 13, 18 (stamina: Strength 3D).
    plan = d6.long_distance(RHEN, 10000, "high")
    assert plan.time_s == 2500 and plan.rounds == 500
    assert [(c.at_s, c.level, c.dn) for c in plan.checks] == [
        (600, "very_easy", 3),
        (1200, "easy", 8),
        (1800, "moderate", 13),
        (2400, "difficult", 18),
    ]
    assert [c.rest_if_failed_s for c in plan.checks] == [1200, 2400, 3600, 4800]
    assert plan.p_arrive == Fraction(181, 216) * Fraction(203, 648) * Fraction(67, 972)
    assert plan.p_arrive == Fraction(2461781, 136048896)


def test_long_distance_sprint_is_exact_past_the_truncation() -> None:
    plan = SYSTEM.long_distance(RHEN, 10000, "all_out")  # 250 rounds, 1250 s: 20 checks
    assert len(plan.checks) == 20 and plan.checks[-1].at_s == 1200
    assert plan.checks[-1].level == "heroic+140" and plan.checks[-1].dn == 171
    expected = Fraction(1)
    for c in plan.checks:
        assert c.p_success == pool_at_least(3, 0, c.dn)
        expected *= c.p_success
    assert plan.p_arrive == expected > 0


def test_long_distance_marches() -> None:
    # 50 km cruising: 5000 rounds = 25000 s (6 h 56 min 40 s).
    march = SYSTEM.long_distance(RHEN, 50000, "cruising")
    assert [c.at_s for c in march.checks] == [3 * 3600, 6 * 3600]
    assert march.p_arrive == Fraction(181, 216) and march.sleep_hours == 2
    assert all(c.rest_if_failed_s is None for c in march.checks)
    forced = SYSTEM.long_distance(RHEN, 50000, "cruising", forced=True)
    assert [c.dn for c in forced.checks] == [3, 8, 13]
    assert forced.p_arrive == Fraction(181, 216) * Fraction(203, 648)
    # A check falls due at each full interval, the arrival's included (2400 m = 600 s high).
    assert len(SYSTEM.long_distance(RHEN, 2400, "high").checks) == 1
    assert SYSTEM.long_distance(RHEN, 10000, "cruising").checks == ()
    # Terrain rolls on the same schedule: Difficult ground at cruising is DN 18 each time.
    rough = SYSTEM.long_distance(RHEN, 50000, "cruising", terrain=Terrain(difficulty="difficult"))
    assert rough.p_arrive == Fraction(181, 216) * Fraction(67, 972) ** 2
    harder = SYSTEM.long_distance(RHEN, 50000, "cruising", harder=1)
    assert [c.dn for c in harder.checks] == [8, 13]
    tough = SYSTEM.token("stamina=5D")
    assert SYSTEM.long_distance(tough, 10000, "high").stamina == "stamina 5D"
    with pytest.raises(ArgumentError, match="forced march"):
        SYSTEM.long_distance(RHEN, 1000, "high", forced=True)
    with pytest.raises(ArgumentError, match="distance"):
        SYSTEM.long_distance(RHEN, "far", "high")
    with pytest.raises(ArgumentError, match="stamina checks"):
        SYSTEM.long_distance(RHEN, 10**7, "all_out")


# --------------------------------------------------------------------------- the stats report


def test_stats_report_figures(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["stats", "--system", "d6", "--token", "move=10,dexterity=3D", "--json"]) == 0
    rep = json.loads(capsys.readouterr().out)
    assert rep["unit"] == "m" and rep["cell_size"] == 2
    assert rep["rates"]["all_out"]["walk"] == 40 and rep["rates"]["cautious"]["swim"] == "5/3"
    assert rep["per_turn"]["walk"] == 20 and rep["per_turn"]["climb"] == "20/3"
    assert rep["partial_moves"]["all_out"] == [20, 40]
    assert rep["acceleration"]["cautious"] == ["stop", "cautious", "cruising", "high"]
    assert rep["difficulty_numbers"]["very_difficult"] == {"dn": 25, "range": [21, 30]}
    assert rep["terrain_checks"]["cautious"]["easy"] == {"asks": "free", "action": False}
    assert rep["terrain_checks"]["all_out"]["difficult"]["rolls"] == "heroic"
    assert rep["carrying"]["capacity_items"] == 9
    ld = rep["long_distance"]
    assert ld["distance_m"] == 10000 and set(ld["speeds"]) == {
        "cautious",
        "cruising",
        "cruising_forced",
        "high",
        "all_out",
    }
    high = ld["speeds"]["high"]
    assert high["p_arrive_exact"] == "2461781/136048896" and high["time"] == "0:41:40"
    assert [c["dn"] for c in high["checks"]] == [3, 8, 13, 18]
    assert (
        main(["stats", "--system", "d6", "--set", "encumbrance=true", "--token", "items=10"]) == 0
    )
    assert "encumbrance encumbered" in capsys.readouterr().out


def test_per_turn_is_an_all_out_round_at_full_distance() -> None:
    """CONTRACT.md: per_turn is "the most cells of that mode the token crosses in one turn
    when it spends the whole turn moving (... an all-out D6 round ...)". Seed 003: "All-Out
    Sprinting: Move × 4", "a character may move anywhere from half to full distance for that
    speed", "For unusual movement (swimming, climbing, etc.), Move is normally one-third
    normal Move" (RULES.md 3: "Swim and climb: Move / 3 as the base for every speed"). Move 9
    on 2-m cells: walking 36 m = 18 cells; swimming, climbing, ladders and crawling 12 m = 6;
    a gap is entered cell by cell with its jump roll ("roll movement, then roll the other
    skill separately"), at the walking rate: 18. No failure band moves farther than the
    plan ("Complete movement" at best), so no roll's result adds to the figure."""
    per = SYSTEM.per_turn(SYSTEM.token("move=9"))
    assert per == {
        "walk": 18,
        "crawl": 6,
        "swim": 6,
        "climb": 6,
        "ladder": 6,
        "gap": 18,
        "air": 0,
        "blocked": 0,
    }
    assert all(d6.failure_effect(degree).distance <= 1 for degree in d6.CHECK_DEGREES)
