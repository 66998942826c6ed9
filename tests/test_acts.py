"""A turn is the system's actions, not only a move (issue 38): each system's acts (actions
besides moving), what they cost the moves around them, in `path`, `reach` and in play.

Each expected figure is worked from the seed line (../shared/seeds) or RULES.md ruling
quoted beside it.
"""

from __future__ import annotations

import json
import random
from fractions import Fraction as F
from pathlib import Path
from typing import Any

import pytest
import tmxtext

from engine import api, systems
from engine.cli import main
from engine.dice import Dice
from engine.errors import ScenarioError, StatError
from engine.scenario import load_scenario
from engine.sim import Simulation
from engine.sim.hookmemo import HookMemo
from engine.systems.base import Token
from engine.systems.d6 import parse_check as d6_check
from engine.systems.whisperspace import plan_turn
from engine.terrain import Terrain

OPEN = ["." * 40] * 3


def _map(tmp_path: Path, rows: list[str], name: str = "m.tmx") -> str:
    return str(tmxtext.write(tmp_path / name, rows))


def _cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, Any, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, (json.loads(out) if out.startswith("{") else out), err


def _farthest(reach: dict[str, Any], turns: float = 1) -> int:
    return max(c["cell"][0] for c in reach["cells"] if c["turns"] <= turns)


# --------------------------------------------------------------------------- whisperspace


def test_whisperspace_an_act_leaves_two_move_actions() -> None:
    """Seed 000: "You may use an action to move up to your speed ... This movement can be
    interwoven between other actions on your turn"; RULES.md 1: "Turn: 3 actions; each Move
    action moves up to the current speed; a turn may spend 1, 2 or 3 actions on moving, with
    other actions between". Speed 30 with one attack: 2 Move actions, 60 ft at most; a sprint
    (3 Move actions) is refused; two acts leave one Move action, 30 ft."""
    ws = systems.create("whisperspace")
    tok = ws.token({"speed": 30})
    one = ws.with_acts(tok, ("attack",))
    assert [ws.rate(one, "walk", p) for p in ("walk", "run", "sprint")] == [30, 60, 0]
    assert ws.act_pace(one, "sprint") == "run"
    assert "sprint is 3 Move actions" in (ws.refusal(one, Terrain(), "sprint") or "")
    two = ws.with_acts(tok, ("attack", "interact"))
    assert ws.act_pace(two, "sprint") == "walk"
    assert [ws.rate(two, "walk", p) for p in ("walk", "run")] == [30, 0]
    three = ws.with_acts(tok, ("action",) * 3)
    assert ws.rate(three, "walk", "walk") == 0  # every action spent on something else
    assert ws.rate(tok, "walk", "sprint") == 90  # no acts: the whole turn moving


def test_whisperspace_the_seeds_example_turn(tmp_path: Path) -> None:
    """Seed 000's example: speed 35, "move 10 feet ..., then use the attack action ..., then
    move another 10 feet ..., use an interact action to open a door, then move your remaining
    15 feet": one Move action of 35 ft beside two acts, three actions in all (plan_turn). A
    path with --act attack --act interact moves 35 ft (7 cells of 5 ft) a turn."""
    plan = plan_turn(35, [10, "attack", 10, "interact", 15])
    assert (plan.actions, plan.move_actions, plan.fits) == (3, 1, True)
    m = api.load_map(_map(tmp_path, OPEN))
    ws = systems.create("whisperspace")
    tok = ws.token({"speed": 35})
    got = api.path(m, ws, tok, (0, 1), (7, 1), acts=("attack", "interact"))
    assert (got["pace"], got["acts"], F(got["turns_exact"])) == ("walk", ["attack", "interact"], 1)
    assert F(api.path(m, ws, tok, (0, 1), (7, 1))["turns_exact"]) == F(1, 3)  # a sprint: 105 ft


# --------------------------------------------------------------------------- mythmaster


def test_mythmaster_an_act_leaves_at_most_a_run_and_no_climb() -> None:
    """Seed 002: "Any character who uses two of their actions in a given turn to move is
    considered to be running"; "A character who uses all three of their actions in a given
    turn to move is considered to be sprinting"; "Using the climbing skill to move uses all
    of your actions for the turn, so you cannot sprint or perform any other action". BM 6
    (Adaptability 14): one act, run at 2 x 6 hexes, sprint refused; no skill climb."""
    mm = systems.create("mythmaster")
    tok = mm.token({"climbing": 10})
    one = mm.with_acts(tok, ("attack",))
    hexes = {p: mm.rate(one, "walk", p) / 2 for p in ("walk", "run", "sprint", "sneak")}
    assert hexes == {"walk": 6, "run": 12, "sprint": 0, "sneak": 6}
    assert mm.act_pace(one, "sprint") == "run"
    assert "sprint moves with 3" in (mm.refusal(one, Terrain(), "sprint") or "")
    cliff = Terrain(name="cliff", move="climb", difficulty="moderate")
    assert mm.refusal(tok, cliff, "sprint") is None
    assert "uses all of your actions" in (mm.refusal(one, cliff, "walk") or "")
    assert mm.cell_rate(one, cliff, "walk") == 0
    two = mm.with_acts(tok, ("action", "attack"))
    assert mm.act_pace(two, "sprint") == "walk"
    assert "sneak moves with 2" in (mm.refusal(two, Terrain(), "sneak") or "")


def test_mythmaster_acts_beyond_three_are_refused(capsys: pytest.CaptureFixture[str]) -> None:
    """RULES.md 2: "3 actions a turn": four acts are one line, exit 2."""
    m = str(Path(__file__).resolve().parent.parent / "maps" / "hex_pointy.tmx")
    code, _, err = _cli(
        capsys, "path", m, "--system", "mythmaster", "--from", "1,1", "--to", "3,1",
        *("--act", "action") * 4,
    )  # fmt: skip
    assert code == 2 and err.count("\n") == 1
    assert "--act action, action, action, action: these take 4 actions" in err


# --------------------------------------------------------------------------- d6


def test_d6_one_other_action_is_minus_one_die_on_the_move_roll(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Seed 003: "Moving is an action, just like firing a blaster or dodging" and "walking is
    an action, firing is a second action, so she takes -1D"; RULES.md 3: "Multi-action
    penalty: -1D on every roll of the round per action beyond the first". Running (high)
    on open ground rolls "at that level" (Very Easy, DN 3): with one shot, Dexterity 3D rolls
    2D, the odds of `tacgrid odds --system d6 dice=3D dn=3 actions=2`."""
    m = _map(tmp_path, OPEN)
    base = ["path", m, "--system", "d6", "--token", "speed=high", "--from", "0,1", "--to", "12,1"]
    code, plain, _ = _cli(capsys, *base, "--pace", "high", "--json")
    assert code == 0 and plain["acts"] == []
    code, shot, _ = _cli(capsys, *base, "--pace", "high", "--act", "fire", "--json")
    assert code == 0 and shot["acts"] == ["fire"]
    code, odds, _ = _cli(capsys, "odds", "--system", "d6", "dice=3D", "dn=3", "actions=2", "--json")
    want = d6_check("dice=3D dn=3 actions=2").p_success()
    assert F(odds["p_success_exact"]) == want == F(35, 36)
    checks = [s["check"] for s in shot["steps"] if s["check"]]
    assert checks and all(c["what"].endswith("dexterity 2D vs very_easy") for c in checks)
    assert all(c["p_success"] == float(want) for c in checks)
    assert [s["check"]["p_success"] for s in plain["steps"] if s["check"]][0] == 1.0
    assert F(shot["p_no_failure_exact"]) == want ** len(checks)


def test_d6_all_out_does_nothing_else(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Seed 003, All-Out: "The character may do nothing else this round (no dodge/parry)".
    With a dodge, all-out is refused; a pace not named is high speed, 2 x Move."""
    d6 = systems.create("d6")
    tok = d6.with_acts(d6.token({"speed": "all_out"}), ("dodge",))
    assert d6.rate(tok, "walk", "all_out") == 0 and d6.rate(tok, "walk", "high") == 20
    assert d6.act_pace(tok, "all_out") == "high"
    m = _map(tmp_path, OPEN)
    base = ["path", m, "--system", "d6", "--token", "speed=all_out", "--from", "0,1"]
    code, out, _ = _cli(capsys, *base, "--to", "12,1", "--pace", "all_out", "--act", "dodge")
    assert code == 1 and "may do nothing else this round (no dodge/parry)" in out
    code, rep, _ = _cli(capsys, *base, "--to", "12,1", "--act", "dodge", "--json")
    assert code == 0 and rep["pace"] == "high"
    code, rep, _ = _cli(capsys, "reach", *base[1:], "--turns", "1", "--act", "parry", "--json")
    assert code == 0 and rep["pace"] == "high" and _farthest(rep) == 10  # 20 m of 2-m cells


# --------------------------------------------------------------------------- speedpoints


def test_speedpoints_actions_cost_the_move_nothing_but_a_climb_allows_one_quick(
    tmp_path: Path,
) -> None:
    """Seed 004: "Characters can move more than once during their turn (before and after
    performing actions) but the total distance may not exceed their running": running 5, 5
    spaces a turn with or without an action. "While a character climbs he can move and
    perform one quick action per turn": a ladder is climbed with one quick act, not with
    another act or a second quick one."""
    sp = systems.create("speedpoints")
    tok = sp.token({})
    ground = api.load_map(_map(tmp_path, OPEN, "open.tmx"))
    plain = api.reach(ground, sp, tok, (0, 1), turns=2)
    acting = api.reach(ground, sp, tok, (0, 1), turns=2, acts=("action", "strenuous"))
    assert _farthest(plain) == _farthest(acting) == 5 and acting["acts"] == ["action", "strenuous"]
    assert plain["cells"] == acting["cells"]
    m = api.load_map(_map(tmp_path, ["..HH....."] * 3))
    ladder = Terrain(name="ladder", move="ladder")
    assert sp.refusal(sp.with_acts(tok, ("quick",)), ladder, "run") is None
    for acts in (("action",), ("quick", "quick"), ("strenuous",)):
        why = sp.refusal(sp.with_acts(tok, acts), ladder, "run") or ""
        assert "can move and perform one quick action per turn" in why, acts
    goal = (6, 1)
    quick = api.path(m, sp, tok, (0, 1), goal, acts=("quick",))
    assert quick["turns_exact"] == api.path(m, sp, tok, (0, 1), goal)["turns_exact"]
    with pytest.raises(Exception, match="cut off"):
        api.path(m, sp, tok, (0, 1), goal, acts=("action",))


def test_speedpoints_no_strenuous_act_while_encumbered() -> None:
    """Seed 004: "An encumbered character cannot perform strenuous actions": strength 10
    carries 80 kg (the seed's table), so 100 kg refuses a strenuous act, one line."""
    sp = systems.create("speedpoints")
    sp.with_acts(sp.token({"load": 50}), ("strenuous",))
    with pytest.raises(StatError, match="cannot perform strenuous actions"):
        sp.with_acts(sp.token({"load": 100}), ("strenuous",))


# --------------------------------------------------------------------------- the command line


def test_path_and_reach_act_change_the_figures(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """RULES.md 1 ("Turn: 3 actions; each Move action moves up to the current speed"):
    speed 30 moves 90 ft (18 cells) a turn, 60 ft (12) beside one attack; the JSON says the
    acts it was priced with, and the text says them on its first line."""
    m = _map(tmp_path, OPEN)
    base = ["--system", "whisperspace", "--token", "speed=30", "--from", "0,1"]
    _, plain, _ = _cli(capsys, "reach", m, *base, "--json")
    _, acting, _ = _cli(capsys, "reach", m, *base, "--act", "attack", "--json")
    assert (plain["pace"], plain["acts"], _farthest(plain)) == ("sprint", [], 18)
    assert (acting["pace"], acting["acts"], _farthest(acting)) == ("run", ["attack"], 12)
    _, plain, _ = _cli(capsys, "path", m, *base, "--to", "36,1", "--json")
    _, acting, _ = _cli(capsys, "path", m, *base, "--to", "36,1", "--act", "attack", "--json")
    assert (F(plain["turns_exact"]), F(acting["turns_exact"])) == (2, 3)
    code, text, _ = _cli(capsys, "path", m, *base, "--to", "36,1", "--act", "attack")
    assert code == 0 and "at run with attack each turn: 3 turns" in text.splitlines()[0]
    code, text, _ = _cli(capsys, "reach", m, *base, "--act", "attack", "--act", "interact")
    assert code == 0 and "at walk with attack, interact each turn" in text.splitlines()[0]


@pytest.mark.parametrize(
    ("system", "given", "said"),
    [
        ("whisperspace", "atack", "whisperspace has no act 'atack' (did you mean 'attack'?)"),
        ("d6", "shoot", "d6 has no act 'shoot'"),
        ("generic", "attack", "generic declares no actions besides moving"),
    ],
)
def test_an_unknown_act_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], system: str, given: str, said: str
) -> None:
    """An act a system does not declare: one line naming the flag and the system's acts,
    exit 2 (CONTRACT.md: "Errors: one line on stderr that names the file or argument")."""
    m = _map(tmp_path, OPEN)
    for command in ("path", "reach"):
        to = ["--to", "3,1"] if command == "path" else []
        code, out, err = _cli(
            capsys, command, m, "--system", system, "--from", "0,1", *to, "--act", given
        )
        assert (code, out) == (2, "") and err.count("\n") == 1, err
        assert err.startswith(f"tacgrid: --act {given}: {said}"), err
    acts = [a.name for a in systems.get(system).acts]
    if acts:
        assert f"acts: {', '.join(acts)}" in err


def test_every_system_describes_its_acts() -> None:
    """`tacgrid systems --json` lists each system's acts (name, actions, the seed's words);
    their names are unique, and each records itself in the token's state."""
    for name in systems.names():
        rules = systems.create(name)
        described = rules.describe()["acts"]
        assert [a["name"] for a in described] == [a.name for a in rules.acts]
        assert len({a.name for a in rules.acts}) == len(rules.acts)
        tok = rules.token({})
        assert rules.with_acts(tok, ()) is tok  # nothing to record
        for act in rules.acts:
            state = rules.with_acts(tok, (act.name,)).state
            assert (state.counter("actions"), state.counter(f"act_{act.name}")) == (
                act.actions,
                1,
            )
            assert rules.with_acts(rules.with_acts(tok, (act.name,)), ()).state == tok.state


def test_acts_hooks_are_pure_through_the_memo() -> None:
    """The RuleSystem contract ("Pure. A hook's result depends only on its arguments"):
    with_acts and act_pace answer through the turn loop's hook memo as called directly,
    on tokens perturbed counter by counter."""
    rng = random.Random(38)
    memo = HookMemo()
    for name in systems.names():
        rules = systems.create(name)
        names = [a.name for a in rules.acts]
        base = rules.token({})
        for i in range(40):
            counters = dict(base.state.counters)
            for key in ("actions", "act_quick", "speed", *(f"act_{n}" for n in names)):
                if rng.random() < 0.3:
                    counters[key] = rng.randrange(3)
            tok = base.with_state(
                base.state.changed(counters=tuple(sorted((k, v) for k, v in counters.items() if v)))
            )
            acts = tuple(rng.choice(names) for _ in range(rng.randrange(3))) if names else ()

            def give(t: Token, acts: tuple[str, ...] = acts, rules: Any = rules) -> Token:
                return rules.with_acts(t, acts)

            assert memo.token(("acts", name, acts), tok, give).state == give(tok).state, i
            for pace in rules.paces:

                def leave(t: Token, pace: str = pace, rules: Any = rules) -> str:
                    return rules.act_pace(t, pace)

                assert memo.get(("act_pace", name, pace), tok, leave) == leave(tok)


# --------------------------------------------------------------------------- scenarios


def _scenario(tmp_path: Path, system: str, tokens: str, turns: int = 3) -> Any:
    tmxtext.write(tmp_path / "map.tmx", OPEN)
    (tmp_path / "s.yaml").write_text(
        f"name: t\nmap: map.tmx\nsystem: {system}\nseed: 1\nturns: {turns}\ntokens:\n{tokens}",
        encoding="utf-8",
    )
    return load_scenario(str(tmp_path / "s.yaml"))


def _token(tid: str, row: int, stats: str, more: str = "") -> str:
    return (
        f"  - id: {tid}\n    side: quarry\n    policy: waypoints\n    waypoints: [[39, {row}]]\n"
        f"    cell: [0, {row}]\n    stats: {stats}\n{more}"
    )


def _moves(sim: Simulation, tid: str) -> list[int]:
    return [len(e["path"]) - 1 for e in sim.events if e["type"] == "move" and e["token"] == tid]


def test_a_scenario_token_with_acts_moves_what_they_leave(tmp_path: Path) -> None:
    """RULES.md 1: "Turn: 3 actions; each Move action moves up to the current speed": a
    Whisperspace token at speed 30 that attacks every turn moves 60 ft (12 cells) a turn,
    one that does not 90 ft (18); its logged state records the act."""
    tokens = _token("a", 1, "{speed: 30}", "    acts: [attack]\n") + _token("b", 2, "{speed: 30}")
    sc = _scenario(tmp_path, "whisperspace", tokens)
    assert sc.token_spec("a").acts == ("attack",) and sc.token_spec("b").acts == ()
    sim = Simulation(sc, 1)
    sim.run()
    assert _moves(sim, "a") == [12, 12, 12] and _moves(sim, "b")[:2] == [18, 18]
    states = [e["state"] for e in sim.events if e["type"] == "state" and e["token"] == "a"]
    assert states and all(s["counters"]["act_attack"] == 1 for s in states)


def test_a_run_with_acts_replays_them(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`replay --text` tells a token's acts once, as its log first records them (RULES.md 1:
    "a turn may spend 1, 2 or 3 actions on moving, with other actions between"); the other
    token takes none and is told nothing of them."""
    tokens = _token("a", 1, "{speed: 30}", "    acts: [attack, attack]\n")
    tokens += _token("b", 2, "{speed: 30}")
    _scenario(tmp_path, "whisperspace", tokens)
    log = str(tmp_path / "run.jsonl")
    code, _, err = _cli(capsys, "run", str(tmp_path / "s.yaml"), "--run-seed", "1", "--log", log)
    assert code == 0, err
    code, text, _ = _cli(capsys, "replay", log, "--text")
    lines = text.splitlines()
    assert code == 0 and lines.count("  turn 1: a also takes attack x2 each turn") == 1, text
    assert "  turn 1: a moves 0,1 -> 6,1: 6 cells in 1 turn" in lines  # a walk: 30 ft
    assert not any(line.startswith("  turn 1: b also") for line in lines)


def test_a_d6_scenario_token_that_fires_rolls_at_minus_one_die(tmp_path: Path) -> None:
    """Seed 003: "walking is an action, firing is a second action, so she takes -1D", and
    All-Out: "The character may do nothing else this round": a runner that fires every round
    runs at high speed (not all-out) and rolls Dexterity 3D as 2D; one that does not sprints
    all-out at 3D."""
    stats = "{move: 10, dexterity: 3D}"
    tokens = _token("a", 1, stats, "    acts: [fire]\n") + _token("b", 2, stats)
    sim = Simulation(_scenario(tmp_path, "d6", tokens), 1)
    sim.run()
    checks = {
        tid: [e["what"] for e in sim.events if e["type"] == "check" and e["token"] == tid]
        for tid in ("a", "b")
    }
    assert checks["a"] and all(
        w == "move high walk: dexterity 2D vs very_easy" for w in checks["a"]
    )
    assert checks["b"] and all(w.startswith("move all_out walk: dexterity 3D") for w in checks["b"])
    assert _moves(sim, "a") == [5, 10, 10]  # cruising from a stop, then high: 2 x 10 m


@pytest.mark.parametrize(
    ("system", "more", "said"),
    [
        (
            "whisperspace",
            "    acts: [dance]\n",
            "tokens[0] (a).acts: dance: whisperspace has no act 'dance'",
        ),
        ("whisperspace", "    acts: attack\n", "tokens[0] (a).acts: expected a list of names"),
        (
            "whisperspace",
            "    pace: sprint\n    acts: [attack]\n",
            "tokens[0] (a).pace: 'sprint' leaves no room for acts attack; use pace run",
        ),
        (
            "d6",
            "    pace: all_out\n    acts: [fire]\n",
            "tokens[0] (a).pace: 'all_out' leaves no room for acts fire; use pace high",
        ),
        ("generic", "    acts: [attack]\n", "generic declares no actions besides moving"),
        (
            "mythmaster",
            "    flight: {heading: 90, speed: 0}\n    acts: [attack]\n",
            "tokens[0] (a).acts: a momentum flier's turn is its flight's actions",
        ),
    ],
)
def test_a_scenario_with_acts_it_cannot_take_is_refused(
    tmp_path: Path, system: str, more: str, said: str
) -> None:
    """A scenario's acts are checked as it loads, each error one line naming the field: an
    act the system lacks; a pace the acts leave no room for (RULES.md 1: "a turn may spend
    1, 2 or 3 actions on moving", so a sprint and an attack are 4 of 3; seed 003, all-out:
    "The character may do nothing else this round"); acts beside a momentum flight, whose
    turn is the flight's own actions (RULES.md 6), are not played, so refused."""
    stats = {
        "whisperspace": "{speed: 30}",
        "d6": "{move: 10}",
        "generic": "{speed: 30}",
        "mythmaster": "{flyer: true}",
    }[system]
    with pytest.raises(ScenarioError) as info:
        _scenario(tmp_path, system, _token("a", 1, stats, more))
    assert said in str(info.value) and "\n" not in str(info.value)


def test_upkeep_keeps_the_acts_for_the_next_turn() -> None:
    """The acts are the turn's: taken again as each turn starts (the loop's ``_begin``), so a
    system's start and end of turn leave them as they were (D6's new round resets its
    penalties, not the actions declared)."""
    for name in systems.names():
        rules = systems.create(name)
        if not rules.acts:
            continue
        tok = rules.with_acts(rules.token({}), (rules.acts[0].name,))
        after = rules.end_turn(rules.start_turn(tok, Dice(1)), Dice(2))
        assert after.state.counter("actions") == rules.acts[0].actions, name
