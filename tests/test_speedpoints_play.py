"""Speedpoints in play (issue 38, defects 4 and 6): falls rolled, pits climbed out of.

Seed 004 (shared/seeds/004_23794b380747a1cc.txt) and RULES.md 4 are quoted in each test. A
failed jump drops the token into the pit and the end of the turn rolls the fall by the pit's
depth; a failed climbing roll rolls the fall by the climb's height; a token in a pit climbs
its wall (setting ``pit_wall``, default 0) and is out, its pit conditions cleared, once it
has climbed the pit's depth.
"""

from __future__ import annotations

import random
import re
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest
import tmxtext

from engine import systems
from engine.cli import main
from engine.dice import Dice
from engine.mapmodel import Terrain
from engine.movement import MovementGraph
from engine.report.movement import path_json
from engine.report.replay import format_replay
from engine.scenario import load_scenario
from engine.search import NoPath, find_path
from engine.sim import Simulation
from engine.sim.hookmemo import HookMemo
from engine.systems import speedpoints as sp
from engine.systems.base import Token

F = Fraction
SP = systems.create("speedpoints")
# Fall ability = max(climbing 2, acrobatics 0) + agility 1 = 3 (RULES.md 4: "climbing or
# acrobatics (the better) + agility"); toughness 4, stamina 9.
HERO = "{running: 3, climbing: 2, agility: 1, toughness: 4, stamina: 9}"
PIT_ROWS = ["..O...", "######"]  # O: a gap 10 m deep (tests/tmxtext.py), hard floor


def scenario(tmp_path: Path, rows: list[str], stats: str = HERO, **overrides: Any) -> Any:
    tmxtext.write(tmp_path / "m.tmx", rows, properties={"diagonals": "none"})
    (tmp_path / "s.yaml").write_text(
        "map: m.tmx\nsystem: speedpoints\nturns: 12\ntokens:\n"
        f"  - {{id: t, cell: [0, 0], policy: waypoints, waypoints: [[5, 0]], stats: {stats}}}\n"
    )
    return load_scenario(tmp_path / "s.yaml", overrides=overrides or None)


def by_turn(events: list[dict[str, Any]]) -> dict[int, list[dict[str, Any]]]:
    out: dict[int, list[dict[str, Any]]] = {}
    turn = 0
    for ev in events:
        if ev["type"] == "turn":
            turn = ev["turn"]
        out.setdefault(turn, []).append(ev)
    return out


def rolls(events: list[dict[str, Any]], pattern: str) -> list[dict[str, Any]]:
    return [e for e in events if e["type"] == "roll" and re.search(pattern, e["decided"])]


def last_state(events: list[dict[str, Any]]) -> dict[str, Any]:
    return [e for e in events if e["type"] == "state"][-1]["state"]


def failed_jumps(sc: Any, seeds: range) -> list[tuple[int, Simulation]]:
    """The seeds whose first turn fails the jump (running 3, a 2 m gap after a run-up: within
    1 m of the longest, d20 >= 20 at jump difficulty 10), each run's simulation after it."""
    out = []
    for seed in seeds:
        sim = Simulation(sc, seed)
        sim.play_turn()
        (check,) = [e for e in sim.events if e["type"] == "check"]
        if not check["success"]:
            out.append((seed, sim))
    return out


# --------------------------------------------------------------------------- defect 4: jumps


@pytest.mark.parametrize(
    ("height", "floor", "band"),
    [(10.0, "hard", "lethal"), (5.0, "hard", "dangerous"), (7.0, "soft", "dangerous")],
)
def test_a_failed_jump_rolls_the_fall_by_the_pits_depth(
    tmp_path: Path, height: float, floor: str, band: str
) -> None:
    """Seed 004: "If the character can barely jump across a gap (within 1 meter of their
    maximum jumping distance) they must make a success roll using their acrobatics ability or
    fall into the gap." RULES.md 4: "Falling: up to 3 m safe; over 3 m dangerous; over 6 m
    lethal; the landing's `fall` property may soften it one step. Roll: the climb's difficulty
    (10 when not from a climb), climbing or acrobatics (the better) + agility. Dangerous:
    success unharmed, failure damage and stun equal to toughness. Lethal: success damage and
    stun equal to toughness, failure damage equal to stamina." MAP-FORMAT.md `height`: "how
    deep a gap is"."""
    sc = scenario(tmp_path, PIT_ROWS, **{"terrain.pit.height": height, "terrain.pit.fall": floor})
    fell = failed_jumps(sc, range(30))
    assert len(fell) >= 20
    seen = set()
    for _, sim in fell:
        (fall,) = rolls(sim.events, r"^falls ")
        # 1d20 + 3 >= 10 + 10: the fall is not from a climb.
        assert fall["expression"] == "1d20+3"
        assert fall["decided"].startswith(f"falls {height:g} m onto {floor} ground ({band})")
        success = fall["total"] >= 20
        state = last_state(sim.events)
        assert state["cell"] == [2, 0]
        assert {"fell", "in_gap"} <= set(state["conditions"])
        counters = state["counters"]
        assert counters["pit_cm"] == height * 100
        hurt = (band == "dangerous" and not success) or (band == "lethal" and success)
        if hurt:
            assert "hurt" in state["conditions"]
            assert counters["damage"] == 4 and counters["stun"] == 4
        elif band == "lethal":
            assert "grievous" in state["conditions"]
            assert counters["damage"] == 9 and "stun" not in counters
        else:
            assert "damage" not in counters and "hurt" not in state["conditions"]
        assert not any(k.startswith("fall_") for k in counters)  # rolled, nothing waits
        seen.add(success)
    assert seen == {True, False}


def test_a_safe_pit_asks_no_falling_roll(tmp_path: Path) -> None:
    """Seed 004: "When the height of the climb is more than one story or 3 meters, a fall may
    be potentially dangerous" and "If a fall is potentially dangerous or lethal, make another
    success roll": a 3 m pit (and a 5 m one onto soft ground, RULES.md 4 "the landing's `fall`
    property may soften it one step") is safe and rolls nothing."""
    for height, floor in ((3.0, "hard"), (5.0, "soft")):
        sc = scenario(
            tmp_path, PIT_ROWS, **{"terrain.pit.height": height, "terrain.pit.fall": floor}
        )
        fell = failed_jumps(sc, range(12))
        assert fell
        for _, sim in fell:
            assert rolls(sim.events, r"^falls ") == []
            state = last_state(sim.events)
            assert "in_gap" in state["conditions"] and "damage" not in state["counters"]


# --------------------------------------------------------------------------- defect 4: climbs


def test_a_failed_climbing_roll_rolls_the_fall_by_the_climbs_height(tmp_path: Path) -> None:
    """Seed 004: "If the character is not successful he looses his grip and falls." "When the
    height of the climb is more than one story or 3 meters, a fall may be potentially
    dangerous". "This roll has the same difficulty as the climbing roll but the falling
    character adds his agility to the roll and he can use either his climbing ability or his
    acrobatics ability." RULES.md 4: "failure: the climber loses grip and falls to the foot,
    and how dangerous the fall is follows the height of the climb". A 5 m ladder (difficulty
    0, 3 spaces a turn at running 6: 5/6 of a turn, so it is entered within the turn):
    climbing 0, d20 >= 10; the fall: 1d20 + acrobatics 2 + agility 1 >= 10 + 0."""
    stats = "{running: 6, acrobatics: 2, agility: 1, toughness: 4, stamina: 9}"
    sc = scenario(tmp_path, [".H....", "######"], stats, **{"terrain.ladder.height": 5.0})
    seen = set()
    for seed in range(30):
        sim = Simulation(sc, seed)
        sim.play_turn()
        (check,) = [e for e in sim.events if e["type"] == "check"]
        assert check["what"] == "climbing (ladder, difficulty 0, fall 5 m onto hard)"
        falls = rolls(sim.events, r"^falls ")
        state = last_state(sim.events)
        if check["success"]:
            assert falls == [] and "fell" not in state["conditions"]
            continue
        assert state["cell"] == [0, 0]  # at the foot
        (fall,) = falls
        assert fall["expression"] == "1d20+3"
        assert fall["decided"].startswith("falls 5 m onto hard ground (dangerous)")
        if fall["total"] >= 10:  # the climb's difficulty, 0: not 10 + 10
            assert "hurt" not in state["conditions"] and "damage" not in state["counters"]
        else:
            assert state["counters"]["damage"] == 4 and state["counters"]["stun"] == 4
        assert "fell" in state["conditions"] and "in_gap" not in state["conditions"]
        seen.add(fall["total"] >= 10)
        # "he can attempt the climb again": the fall is over as the next turn starts.
        token = sim.tokens["t"]
        assert not SP.start_turn(token, Dice(seed)).state.has("fell")
    assert seen == {True, False}


# --------------------------------------------------------------------------- the pit floor


def test_climbing_out_of_a_pit_takes_its_depth_of_climbing(tmp_path: Path) -> None:
    """Issue 38 defect 4: "it walks out along the pit floor in half a turn". Ruling (docs/rules.md,
    setting `pit_wall`): the pit's wall is a climb as high as the pit is deep, at difficulty 0
    by default: seed 004's climbing table, "0 | ladder, steep mountain | ½ running (rounded
    up)", one roll ("For each climb make a success roll"). Running 3: 2 spaces = 4 m a turn;
    10 m takes 5/2 turns, then the step onto 3,0 at 1/3 of a turn: 17/6 turns, as `path`
    prices it for the token's state. Defect 6: `fell`/`in_gap` are cleared once it is out."""
    sc = scenario(tmp_path, PIT_ROWS)
    checked = 0
    for seed, sim in failed_jumps(sc, range(40)):
        in_pit = sim.tokens["t"]
        g = MovementGraph(sc.model, SP, in_pit, "run")
        assert F(path_json(find_path(g, (2, 0), (3, 0)))["turns_exact"]) == F(17, 6)
        for _ in range(4):
            sim.play_turn()
        turns = by_turn(sim.events)
        climbs = rolls(turns[2], r"^climbing out of a 10 m pit \(difficulty 0\)")
        assert len(climbs) == 1 and climbs[0]["expression"] == "1d20+2", seed
        if not climbs[0]["decided"].endswith("success"):
            continue
        for turn, climbed in ((2, 400), (3, 800)):
            assert [e for e in turns[turn] if e["type"] == "move"] == []
            state = last_state(turns[turn])
            assert state["cell"] == [2, 0] and state["counters"]["pit_climbed_cm"] == climbed
            assert {"in_gap", "fell", "climbing_out"} <= set(state["conditions"])
        (move,) = [e for e in turns[4] if e["type"] == "move"]
        assert move["path"] == [[2, 0], [3, 0]] and F(move["turns"]) == F(5, 6)
        state = last_state(turns[4])
        assert set(state["conditions"]).isdisjoint(sp.PIT_CONDITIONS)
        assert set(state["counters"]).isdisjoint(sp.PIT_COUNTERS)
        assert rolls(turns[3] + turns[4], r"^climbing") == []  # one roll per climb
        text = format_replay(sim.events)
        assert "falls 10 m onto hard ground (lethal)" in text
        assert "climbing out of a 10 m pit (difficulty 0): success" in text
        checked += 1
    assert checked >= 5


def test_losing_grip_on_the_pit_wall_falls_back_and_tries_again(tmp_path: Path) -> None:
    """Seed 004: "If the character is not successful he looses his grip and falls. If the
    character is still able to climb after falling he can attempt the climb again." RULES.md
    4: the fall "follows the height of the climb": the pit's 10 m, lethal, at the climb's
    difficulty 0: 1d20 + 3 >= 10 hurts (damage and stun 4), less is grievous (damage 9)."""
    sc = scenario(tmp_path, PIT_ROWS)
    checked = 0
    for _, sim in failed_jumps(sc, range(80)):
        sim.play_turn()
        turn2 = by_turn(sim.events)[2]
        climb = rolls(turn2, r"^climbing out")
        if climb[0]["decided"].endswith("success"):
            continue
        (fall,) = rolls(turn2, r"^falls 10 m onto hard ground \(lethal\)")
        before = last_state(by_turn(sim.events)[1])["counters"]["damage"]
        state = last_state(turn2)
        assert [e for e in turn2 if e["type"] == "move"] == []
        assert {"in_gap", "lost_grip"} <= set(state["conditions"])
        assert "climbing_out" not in state["conditions"]
        assert state["counters"]["damage"] - before == (4 if fall["total"] >= 10 else 9)
        assert SP.held(sim.tokens["t"]) == "lost its grip on the wall of a 10 m pit and fell back"
        sim.play_turn()
        turn3 = by_turn(sim.events)[3]
        (again,) = rolls(turn3, r"^climbing out of a 10 m pit")  # tries again
        conditions = set(last_state(turn3)["conditions"])
        assert ("lost_grip" in conditions) == again["decided"].endswith("failure")
        assert ("climbing_out" in conditions) == again["decided"].endswith("success")
        checked += 1
    assert checked >= 2


def pit_token(stats: str = "running=3", **settings: Any) -> tuple[sp.Speedpoints, Token]:
    system = systems.create("speedpoints", settings)
    tok = system.token(stats)
    st = tok.state.with_conditions("in_gap", "fell").set_counter("pit_cm", 1000)
    return system, tok.with_state(st)


def test_the_pit_wall_setting() -> None:
    """Seed 004's climbing table: "5 | rope, pole | 1 meter per turn"; "10 | wall or cliff with
    hand holds | not strategically significant" (RULES.md 4: "10 and up: not tactical").
    `pit_wall=5`: 10 m at 1 m a turn, then a step at running 3: 10 + 1/3 turns. `pit_wall=10`:
    no tactical way out: no path, no roll, and the token is held in the pit."""
    model = load_model(PIT_ROWS)
    system, tok = pit_token(pit_wall=5)
    g = MovementGraph(model, system, tok, "run")
    assert F(path_json(find_path(g, (2, 0), (3, 0)))["turns_exact"]) == 10 + F(1, 3)
    assert system.held(tok) == "climbing out of a 10 m pit (0 m climbed)"
    system, tok = pit_token(pit_wall=10)
    with pytest.raises(NoPath):
        find_path(MovementGraph(model, system, tok, "run"), (2, 0), (3, 0))
    dice = Dice(1)
    assert system.start_turn(tok, dice) == tok and dice.events() == []
    assert "not a tactical climb" in (system.held(tok) or "")


def load_model(rows: list[str]) -> Any:
    from test_search import model_from

    return model_from(rows, diagonals="none")


def test_a_climb_out_of_less_than_a_turn_steps_on_in_the_same_turn() -> None:
    """Seed 004: "While a character climbs he can move"; the climb and the walk share the
    turn's time (RULES.md 0: "Time, not distance, is what a path spends"). Running 5, 4 m of a
    10 m wall left at 6 m a turn: 2/3 of a turn, then 1/5 a space: not held, out through the
    in-place climb, and cleared once it left the cell (``paced``)."""
    system, tok = pit_token("running=5")
    tok = tok.with_state(
        tok.state.with_conditions("climbing_out").set_counter("pit_climbed_cm", 600)
    )
    assert system.pit_turns_left(tok) == F(2, 3) and system.held(tok) is None
    g = MovementGraph(load_model(PIT_ROWS), system, tok, "run")
    assert F(path_json(find_path(g, (2, 0), (4, 0)))["turns_exact"]) == F(2, 3) + F(2, 5)
    out = system.paced(tok, "run", True)
    assert set(out.state.conditions).isdisjoint(sp.PIT_CONDITIONS) and out.state.counters == ()
    # Stayed in the cell: the turn was climbing; 6 m more is past the rim.
    assert system.end_turn(system.paced(tok, "run", False), Dice(1)).state.counters == ()


# --------------------------------------------------------------------------- the hooks


def test_checks_name_the_fall_their_failure_makes() -> None:
    """MAP-FORMAT.md `height`: "how far a climb goes, how deep a gap is"; `fall`: "what a fall
    lands on" (default one cell for a climb, 0 for a gap)."""
    tok = SP.token("running=3,climbing=2")
    rope = SP.cell_check(tok, Terrain(move="climb", difficulty="easy", height=4.0, fall="soft"))
    assert rope is not None and rope.what == "climbing (climb, difficulty 5, fall 4 m onto soft)"
    ladder = SP.cell_check(tok, Terrain(move="ladder"))
    assert (
        ladder is not None and ladder.what == "climbing (ladder, difficulty 0, fall 2 m onto hard)"
    )
    _, jump = SP.jump(tok, F(2), True, (Terrain(move="gap", height=2.5, fall="water"),))
    assert jump is not None and jump.what.endswith(", fall 5/2 m onto water)")
    _, shallow = SP.jump(tok, F(2), True, (Terrain(move="gap"),))
    assert shallow is not None and shallow.what.endswith(", fall 0 m onto hard)")


def test_apply_check_leaves_the_fall_to_roll() -> None:
    """RULES.md 4 "Falling: up to 3 m safe; over 3 m dangerous; over 6 m lethal; the landing's
    `fall` property may soften it one step. Roll: the climb's difficulty (10 when not from a
    climb)". apply_check has no dice: the fall waits in the state for the end of the turn."""
    tok = SP.token("running=3,climbing=2,toughness=4,stamina=9")
    fell = SP.apply_check(tok, "climbing (climb, difficulty 5, fall 4 m onto hard)", "failure")
    assert fell.state.counters == (("fall_cm", 400), ("fall_difficulty", 5))
    assert fell.state.has("fell") and not fell.state.has("in_gap")
    soft = SP.apply_check(tok, "climbing (climb, difficulty 0, fall 7 m onto soft)", "failure")
    assert dict(soft.state.counters) == {"fall_cm": 700, "fall_difficulty": 0, "fall_surface": 1}
    for safe in ("fall 3 m onto hard", "fall 6 m onto water"):
        assert (
            SP.apply_check(tok, f"climbing (climb, difficulty 0, {safe})", "failure").state.counters
            == ()
        )
    pit = SP.apply_check(
        tok, "acrobatics (run-up jump 2 m of 3 m, fall 5/2 m onto water)", "failure"
    )
    assert dict(pit.state.counters) == {"pit_cm": 250, "pit_surface": 2}
    deep = SP.apply_check(
        tok, "acrobatics (standing jump 2 m of 5/2 m, fall 8 m onto hard)", "failure"
    )
    assert dict(deep.state.counters) == {"fall_cm": 800, "fall_difficulty": 10, "pit_cm": 800}
    # The end of the turn rolls it: "success means the character takes damage and stun equal
    # to his toughness and failure means the character takes damage equal to his stamina."
    for seed in range(20):
        dice = Dice(seed)
        ended = SP.end_turn(deep, dice)
        (event,) = dice.events()
        assert event.expression == "1d20+2" and event.decided.startswith("falls 8 m onto hard")
        want = {"damage": 4, "stun": 4} if event.total >= 20 else {"damage": 9}
        assert {k: v for k, v in ended.state.counters if k in ("damage", "stun")} == want
        assert ended.state.counter("fall_cm") == 0 and ended.state.has("in_gap")
    assert SP.apply_check(tok, "fall (lethal)", "failure").state.counters == (("damage", 9),)


def test_fall_results_are_notes_for_the_table() -> None:
    """Seed 004 gives no rule that reads damage or stun while moving: they are the table's."""
    assert {"damage", "stun", "hurt", "grievous"} <= SP.notes
    assert SP.notes.isdisjoint(sp.PIT_CONDITIONS + sp.PIT_COUNTERS + sp.FALL_COUNTERS)


def test_logged_and_unlogged_runs_play_the_pit_alike(tmp_path: Path) -> None:
    """A batch run (no log) plays the same turns as a logged one: the same cells each turn."""
    sc = scenario(tmp_path, PIT_ROWS)
    for seed in range(12):
        logged, quiet = Simulation(sc, seed), Simulation(sc, seed, record=False)
        for _ in range(6):
            logged.play_turn()
            quiet.play_turn()
            a, b = logged.tokens["t"].state, quiet.tokens["t"].state
            assert a.cell == b.cell and a.conditions - SP.notes == b.conditions - SP.notes


JUMP = "acrobatics (run-up jump 2 m of 3 m, fall 10 m onto hard)"


def test_pit_hooks_answer_alike_through_the_hook_memo(tmp_path: Path) -> None:
    """RuleSystem's contract (systems/base.py): hooks are pure and read the state through its
    methods, so the turn loop's memo serves them right. States from pit runs, perturbed."""
    sc = scenario(tmp_path, PIT_ROWS)
    tokens = []
    for seed in range(10):
        sim = Simulation(sc, seed)
        for _ in range(5):
            sim.play_turn()
            tokens.append(sim.tokens["t"])
    rng = random.Random(5)
    memo = HookMemo()
    names = [*sp.PIT_CONDITIONS, "hurt"]
    counters = [*sp.PIT_COUNTERS, *sp.FALL_COUNTERS]
    for base in tokens:
        tok = base
        for _ in range(6):
            st = tok.state
            if rng.random() < 0.5:
                c = rng.choice(names)
                st = st.with_conditions(remove=(c,)) if st.has(c) else st.with_conditions(c)
            else:
                k = rng.choice(counters)
                st = st.set_counter(k, max(0, st.counter(k) + rng.choice((-300, 100, 600))))
            tok = tok.with_state(st)
            seed = rng.randrange(1 << 30)
            for name, hook in (("start", SP.start_turn), ("end", SP.end_turn)):
                assert (
                    memo.token((name, tok.id), tok, hook, Dice(seed)).state
                    == hook(tok, Dice(seed)).state
                )
            for moved in (False, True):
                got = memo.token(("paced", moved), tok, lambda t, m=moved: SP.paced(t, "run", m))
                assert got.state == SP.paced(tok, "run", moved).state
            got = memo.token(("apply",), tok, lambda t: SP.apply_check(t, JUMP, "failure"))
            assert got.state == SP.apply_check(tok, JUMP, "failure").state
            assert memo.get(("held",), tok, SP.held) == SP.held(tok)


# --------------------------------------------------------------------------- task 4: ropes


def test_a_rope_climbs_two_turns_a_space_in_path_json(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Seed 004: "5 | rope, pole | 1 meter per turn"; "one space per turn, where a space is
    about 2 meters wide". RULES.md 4: "5 (rope, pole): 1 m (half a space) per turn". A rope
    of 3 spaces (`tacgrid path --json`): 2 turns a space, 6 in all; a 4 m rope drawn as one
    space: 4 turns."""
    import json

    monkeypatch.setitem(
        tmxtext.LEGEND, "r", {"terrain": "rope", "move": "climb", "difficulty": "easy"}
    )
    monkeypatch.setitem(
        tmxtext.LEGEND,
        "R",
        {"terrain": "rope4", "move": "climb", "difficulty": "easy", "height": 4.0},
    )
    monkeypatch.setattr(tmxtext, "CHARS", list(tmxtext.LEGEND))
    for rows, goal, want in (
        (["r", "r", "r", "."], "0,0", [0, 2, 4, 6]),
        ([".R."], "2,0", [0, 4, F(13, 3)]),
    ):
        mp = tmxtext.write(tmp_path / "rope.tmx", rows, properties={"diagonals": "none"})
        start = "0,3" if len(rows) > 1 else "0,0"
        args = ["path", str(mp), "--system", "speedpoints", "--token", "running=3"]
        assert main([*args, "--from", start, "--to", goal, "--json"]) == 0
        steps = json.loads(capsys.readouterr().out)["steps"]
        assert [F(s["turns"]).limit_denominator(1000) for s in steps] == want
