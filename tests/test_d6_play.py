"""D6 (seed 003; RULES.md 3; issue 38's rulings R1, R2) in play: what a failed movement roll
leaves on a token round by round, the share of its move it still makes, lost rounds, the
speed a fall leaves, and a weak runner who must not freeze."""

from __future__ import annotations

import random
from fractions import Fraction
from pathlib import Path

import pytest
import tmxtext

from engine import systems
from engine.dice import Dice
from engine.mapmodel import Terrain
from engine.scenario import load_scenario
from engine.sim import Simulation
from engine.sim.hookmemo import HookMemo
from engine.systems import d6
from engine.systems.base import CellCheck, Token

SYSTEM = systems.create("d6")
RHEN = SYSTEM.token("move=10,dexterity=3D")  # seed 003: "Rhen (DEX 3D, Move 10)"
SPRINT = "move all_out walk: dexterity 3D vs easy->moderate"
ALL_DEGREES = d6.CHECK_DEGREES


def _check(what: str = SPRINT) -> CellCheck:
    return CellCheck(what, "DN 13", Fraction(0))


def _round(token: Token, dice: Dice) -> Token:
    """The end of a round (end_turn: collision damage) and the start of the next."""
    return SYSTEM.start_turn(SYSTEM.end_turn(token, dice), dice)


# --------------------------------------------------------------------------- R1: the share


@pytest.mark.parametrize(
    "degree, share",
    [
        ("success", Fraction(1)),  # "Success: move normally."
        ("fail_1_3", Fraction(1)),  # "1-3 | Slight slip: Complete movement"
        ("fail_4_6", Fraction(1, 2)),  # "4-6 | Slip: Move half distance."
        ("fail_7_10", Fraction(1, 2)),  # "7-10 | Fall: Fall halfway; ends kneeling."
        ("fail_11_15", Fraction(1, 4)),  # "11-15 | Minor tumble: Fall after one-quarter move"
        ("fail_16_20", Fraction(1, 4)),  # RULES.md 3: 16-20 "stop at a quarter (ruling)"
        ("fail_21_plus", Fraction(1, 4)),  # RULES.md 3: 21+ "stop at a quarter"
    ],
)
def test_failure_share_is_the_seeds_movement_failures_table(degree: str, share: Fraction) -> None:
    # Ruling R1: the token still makes this share of the move it set out to make that round.
    assert SYSTEM.failure_share(_check(), degree) == share
    swim = _check("move cruising swim: swimming 3D vs difficult")
    assert SYSTEM.failure_share(swim, degree) == share


def test_tumble_stop_setting_sets_the_tumbles_share() -> None:
    # RULES.md 3: 16-20 and 21+ stop at a quarter "(ruling)": setting tumble_stop.
    for stop, share in (("quarter", Fraction(1, 4)), ("half", Fraction(1, 2)), ("full", 1)):
        ruled = systems.create("d6", {"tumble_stop": stop})
        assert ruled.failure_share(_check(), "fail_16_20") == share
        assert ruled.failure_share(_check(), "fail_21_plus") == share
        assert ruled.failure_share(_check(), "fail_11_15") == Fraction(1, 4)  # not a ruling
    with pytest.raises(Exception, match="degree 'oops'"):
        SYSTEM.failure_share(_check(), "oops")


def test_a_failed_jump_goes_no_further_than_the_gap() -> None:
    # Seed 003: "If an action crosses into another skill (run then jump a ditch), roll
    # movement, then roll the other skill separately." A jump failed by 4+ falls short.
    jump = SYSTEM.cell_check(RHEN, Terrain(move="gap", difficulty="easy"), "cruising")
    assert jump is not None and jump.what.startswith("jump ")
    shares = {degree: SYSTEM.failure_share(jump, degree) for degree in ALL_DEGREES}
    assert shares == {degree: Fraction(degree in ("success", "fail_1_3")) for degree in shares}
    for degree, share in shares.items():
        assert SYSTEM.apply_check(RHEN, jump.what, degree).state.has("fallen") == (share < 1)


# --------------------------------------------------------------------------- R2: lost actions


def test_a_fall_loses_the_rest_of_the_round_only() -> None:
    # Seed 003: "7-10 | Fall: Fall halfway; ends kneeling. No actions for rest of round;
    # -2D next round." Ruling R2: the posture ends at the start of the first round in
    # which the token may act again.
    fell = SYSTEM.apply_check(RHEN, SPRINT, "fail_7_10")
    assert fell.state.conditions == {"kneeling", "no_actions"}
    assert dict(fell.state.counters) == {"penalty_next": 2}  # all-out: no collision at 7-10
    assert SYSTEM.held(fell) == "a fall: no actions for the rest of the round (seed 003: 7-10)"
    nxt = _round(fell, Dice(3))
    assert SYSTEM.held(nxt) is None
    assert nxt.state.conditions == set() and dict(nxt.state.counters) == {"penalty": 2}
    after = _round(nxt, Dice(3))
    assert after.state == RHEN.state  # the -2D was next round's only


@pytest.mark.parametrize("degree", ["fail_11_15", "fail_16_20", "fail_21_plus"])
def test_a_tumble_loses_this_round_and_the_next(degree: str) -> None:
    # Seed 003: "11-15 | Minor tumble: Fall after one-quarter move; no actions this round
    # or next." 16-20 and 21+ are worse tumbles (RULES.md 3: they lose the same). Ruling
    # R2: prone until the first round in which the token may act again.
    dice = Dice(5)
    hurt = SYSTEM.apply_check(RHEN, SPRINT, degree)
    assert hurt.state.conditions == {"prone", "no_actions"}
    assert hurt.state.counter("lose_next") == 1
    assert SYSTEM.held(hurt) == (
        "a tumble: no actions for the rest of this round or next (seed 003: 11+)"
    )
    r2 = _round(hurt, dice)
    assert r2.state.has("no_actions") and r2.state.has("prone")
    assert r2.state.counter("lose_next") == 0
    assert SYSTEM.held(r2) == "a tumble last round: no actions this round or next (seed 003: 11+)"
    r3 = _round(r2, dice)
    assert SYSTEM.held(r3) is None
    assert not r3.state.has("no_actions") and not r3.state.has("prone")


@pytest.mark.parametrize("degree", ["success", "fail_1_3", "fail_4_6"])
def test_a_slip_loses_no_actions(degree: str) -> None:
    # Seed 003: "1-3 | Slight slip: Complete movement, but -1D to all actions for rest of
    # round." "4-6 | Slip: Move half distance. -3D ... rest of round, and -1D next round."
    slipped = SYSTEM.apply_check(RHEN, SPRINT, degree)
    assert slipped.state.conditions == set() and SYSTEM.held(slipped) is None
    now, nxt = {"success": (0, 0), "fail_1_3": (1, 0), "fail_4_6": (3, 1)}[degree]
    assert slipped.state.counter("penalty") == now
    assert slipped.state.counter("penalty_next") == nxt
    assert _round(slipped, Dice(1)).state.counter("penalty") == nxt


def test_no_actions_is_never_on_a_token_that_may_move() -> None:
    """Any run of degrees, one roll a round: at the start of every round the token is
    held exactly when the seed takes that round's actions away (a fall or tumble the
    round before leaves the rest of that round only; a tumble takes the next round too),
    and its posture lasts exactly as long."""
    rng = random.Random(38)
    dice = Dice(38)
    for _ in range(40):
        token, lost = RHEN, 0  # lost: rounds still held, counted at a round's start
        for _ in range(12):
            token = SYSTEM.start_turn(token, dice)
            assert (SYSTEM.held(token) is not None) == (lost > 0)
            assert token.state.has("prone") == (lost > 0)
            assert not token.state.has("kneeling")
            if lost:
                lost -= 1
            else:
                degree = rng.choice(ALL_DEGREES)
                token = SYSTEM.apply_check(token, SPRINT, degree)
                falls = d6.failure_effect(degree).lose_round
                assert token.state.has("no_actions") == falls
                lost = 1 if d6.failure_effect(degree).lose_next else 0
            token = SYSTEM.end_turn(token, dice)


def test_injured_is_a_wound_that_stays() -> None:
    # Seed 003: "Roll damage against Strength as normal damage resistance." The seed has
    # no wound chart and no healing in its movement rules: damage that beats Strength is
    # a wound (docs/rules.md, D6 in play), kept through the rounds after, whatever later
    # collisions roll; the margin kept is the last collision's.
    hurt = None
    for seed in range(200):
        dice = Dice(seed)
        tumbled = SYSTEM.apply_check(RHEN, SPRINT, "fail_21_plus")  # 4D + 2D = 6D
        done = SYSTEM.end_turn(tumbled, dice)
        if done.state.has("injured"):
            hurt = done
            break
    assert hurt is not None and hurt.state.counter("collision_margin") > 0
    token = hurt
    for _ in range(4):  # the lost round, then free rounds: still injured
        token = _round(token, dice)
        assert token.state.has("injured")
    misses = 0
    for seed in range(200):  # a later collision that does not beat Strength
        bump = SYSTEM.apply_check(token, "move cautious walk: x", "fail_16_20")  # 1D
        after = SYSTEM.end_turn(bump, Dice(seed))
        if after.state.counter("collision_margin") <= 0:
            misses += 1
            assert after.state.has("injured")
    assert misses > 100


def test_held_is_pure_through_the_hook_memo() -> None:
    # The RuleSystem contract (systems/base.py): a hook's result kept by what it read.
    memo = HookMemo()
    states = [SYSTEM.apply_check(RHEN, SPRINT, d) for d in ALL_DEGREES]
    states += [_round(t, Dice(2)) for t in states]
    extra = ("no_actions", "prone", "kneeling", "injured", "fallen")
    for tok in states:
        st = tok.state
        others = [st.changed(conditions=st.conditions ^ {flip}) for flip in extra]
        others.append(st.set_counter("lose_next", 1 - st.counter("lose_next")))
        for t in (tok, *map(tok.with_state, others)):
            assert memo.get(("held", t.id), t, SYSTEM.held) == SYSTEM.held(t)


# --------------------------------------------------------------------------- speed after a fall


def test_a_fall_ends_the_round_at_a_stop() -> None:
    # Seed 003: "Fall: Fall halfway; ends kneeling." The faller is down, not running: the
    # round ends at a stop (setting fall_speed=stop) and the next accelerates from it
    # ("A character may change speed by up to two levels per round").
    running = SYSTEM.with_speed(RHEN, "cruising")
    running = SYSTEM.with_speed(running, "all_out")
    fell = SYSTEM.apply_check(running, SPRINT, "fail_7_10")
    assert fell.state.counter("speed") == d6.SPEEDS.index("stop")  # down at once
    for moved in (False, True):
        stopped = SYSTEM.paced(fell, "all_out", moved)
        assert stopped.state.counter("speed") == d6.SPEEDS.index("stop")
        nxt = SYSTEM.start_turn(stopped, Dice(1))
        assert SYSTEM.turn_pace(nxt, "all_out") == "cruising"
        assert SYSTEM.allowed_paces(nxt) == ("stop", "cautious", "cruising")
    # A round lost to a tumble ends at a stop too.
    tumbled = SYSTEM.start_turn(SYSTEM.apply_check(running, SPRINT, "fail_11_15"), Dice(1))
    assert SYSTEM.held(tumbled) is not None
    assert SYSTEM.paced(tumbled, "all_out", False).state.counter("speed") == 0
    # A slip is no fall: the speed stays.
    slipped = SYSTEM.apply_check(running, SPRINT, "fail_4_6")
    assert SYSTEM.paced(slipped, "all_out", True).state.counter("speed") == 4
    # fall_speed=keep: the speed fallen at, which may drop two levels at most.
    keep = systems.create("d6", {"fall_speed": "keep"})
    kept = keep.paced(keep.apply_check(running, SPRINT, "fail_7_10"), "all_out", False)
    assert kept.state.counter("speed") == 4
    assert keep.allowed_paces(kept) == ("cruising", "high", "all_out")


def test_a_runner_at_0d_is_caught_in_falls_only_at_the_speed_it_fell_at() -> None:
    """Issue 38 defect 6, by the rules alone: Move 10, Dexterity 1D, all-out over open
    ground (very easy, one level up: Easy, DN 8). A 4-6 slip's "-1D next round" or a fall's
    "-2D next round" leaves 0D: a total of 0, always "failed by 8": a fall, -2D next round
    again. At the speed it fell at (fall_speed=keep: all-out, which may not drop below
    cruising) that is a fixed point, round after round; from a stop the next round is
    cruising, and "Cruising ... Automatic in Very Easy, Easy, Moderate terrain": no roll."""
    weak = SYSTEM.token("move=10,dexterity=1D,speed=all_out")
    ground = Terrain()
    keep = systems.create("d6", {"fall_speed": "keep"})
    for system, frozen in ((keep, True), (SYSTEM, False)):
        token = system.apply_check(weak, "move all_out walk: dexterity 1D vs x", "fail_4_6")
        token = system.start_turn(system.paced(token, "all_out", True), Dice(1))
        check = system.move_check(token, ground, system.turn_pace(token, "all_out"))
        assert check is not None and str(check.check.rolled) == "0D" and check.target == "DN 8"
        assert check.check.outcomes()["fail_7_10"] == 1  # 0 against 8: a fall, surely
        token = system.apply_check(token, check.what, "fail_7_10")
        token = system.start_turn(system.paced(token, "all_out", True), Dice(1))
        pace = system.turn_pace(token, "all_out")
        again = system.move_check(token, ground, pace)
        if frozen:
            assert pace == "all_out" and again is not None and again.check == check.check
        else:
            assert pace == "cruising" and again is None  # moves without a roll


EXIT = (
    '<objectgroup name="o"><object id="1" name="door" type="exit" x="1248" y="0" '
    'width="32" height="96"/></objectgroup>'
)


def test_a_weak_runner_is_not_frozen_for_the_run(tmp_path: Path) -> None:
    """Issue 38 defect 6 in runs: a 1D runner sprinting all-out over open ground fell,
    rolled 0D at all-out every round after and stood still for the rest of the run. Each
    run here reaches the exit, never three rounds in a row without moving (a fall's
    round, then at most a round lost to a tumble)."""
    tmxtext.write(tmp_path / "m.tmx", ["." * 40] * 3, objects=EXIT)
    text = """
map: m.tmx
system: d6
turns: 40
goals: {escape: [door]}
tokens:
  - {id: q, policy: quarry, pace: all_out, cell: [0, 1], stats: {move: 10, dexterity: 1D}}
"""
    (tmp_path / "s.yaml").write_text(text)
    sc = load_scenario(tmp_path / "s.yaml")
    falls = 0
    for seed in range(1, 13):
        sim = Simulation(sc, seed)
        result = sim.run()
        assert result.outcome == "escape", f"seed {seed}: {result.to_dict()}"
        still = 0
        moved_this_turn = True
        for ev in sim.events:
            if ev["type"] == "turn":
                still = 0 if moved_this_turn else still + 1
                assert still < 3, f"seed {seed}: still since turn {ev['turn'] - still}"
                moved_this_turn = False
            elif ev["type"] == "move":
                moved_this_turn = True
            elif ev["type"] == "check" and ev["degree"] in ("fail_7_10", "fail_11_15"):
                falls += 1
    assert falls >= 5  # the weak runner did fall: the runs tested the recovery
