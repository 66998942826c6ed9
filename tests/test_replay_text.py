"""`tacgrid replay RUN.jsonl --text`: turn by turn, who rolled what against what and what it
did, who moved where, flights, doors and the GM's edits (engine.report.replay)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from engine import api, systems
from engine.cli import main
from engine.dice import Dice
from engine.mapmodel import Terrain
from engine.report.replay import check_words, degree_text, format_replay, system_of

ROOT = Path(__file__).resolve().parent.parent
CHASE = str(ROOT / "scenarios" / "chase.yaml")
HEX_HUNT = str(ROOT / "scenarios" / "hex_hunt.yaml")
GRIFFON = str(ROOT / "scenarios" / "griffon.yaml")


def _start(**tokens: Any) -> dict[str, Any]:
    return {
        "type": "start",
        "scenario": "s.yaml",
        "seed": 7,
        "system": "d6",
        "tokens": {t: {"cell": c, "conditions": []} for t, c in tokens.items()},
    }


def _body(text: str) -> list[str]:
    return [line.strip() for line in text.splitlines()[1:]]


def _log(tmp_path: Path, scenario: str, seed: int, capsys: pytest.CaptureFixture[str]) -> Path:
    log = tmp_path / f"{Path(scenario).stem}-{seed}.jsonl"
    assert main(["run", scenario, "--run-seed", str(seed), "--log", str(log), "--json"]) == 0
    capsys.readouterr()
    return log


def _events(log: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in log.read_text().splitlines()]


def _turn_of_each(events: list[dict[str, Any]]) -> list[Any]:
    turn: Any = None
    out = []
    for ev in events:
        if ev["type"] == "turn":
            turn = ev["turn"]
        out.append(turn)
    return out


# --------------------------------------------------------------------------- real runs


@pytest.mark.parametrize("scenario", [CHASE, HEX_HUNT], ids=["d6", "mythmaster"])
def test_every_check_says_the_roll_the_target_and_what_it_did(  # noqa: C901
    scenario: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Seeds until a run has a failed check as well as a passed one (both in a few runs).
    checks: list[tuple[int, dict[str, Any]]] = []
    for seed in range(1, 40):
        events = _events(_log(tmp_path, scenario, seed, capsys))
        checks = [(i, e) for i, e in enumerate(events) if e["type"] == "check"]
        if {c["success"] for _, c in checks} == {True, False}:
            break
    assert {c["success"] for _, c in checks} == {True, False}, "no run with both kinds"
    lines = _body(format_replay(events))
    system = system_of(events)
    turns = _turn_of_each(events)
    rolled = [ln for ln in lines if " rolls " in ln and " vs " in ln]
    assert len(rolled) == len(checks)  # one line per check, in order
    # A roll no check asked for (D6 collision damage, Strength against it) has its own line.
    lone = []
    for i, e in enumerate(events):
        if e["type"] == "roll":
            then = next(x for x in events[i + 1 :] if x["type"] != "roll")
            if then["type"] != "check":
                lone.append(e)
    for roll in lone:
        assert any(
            ln.endswith(f"{roll['token']} rolls {roll['expression']} = {roll['total']}: "
                        f"{degree_text(roll['decided'], system)}")
            for ln in lines
        )  # fmt: skip
    for (i, check), line in zip(checks, rolled, strict=True):
        roll = events[i - 1]
        assert roll["type"] == "roll" and roll["token"] == check["token"]
        skill, against, _ = check_words(check["what"], check["target"], system)
        assert line.startswith(
            f"turn {turns[i]}: {check['token']} rolls {skill} "
            f"{roll['expression']} = {roll['total']} vs {against}"
        ), line
        effect = system.describe_effect(check["what"], check["degree"])
        said = degree_text(check["degree"], system) + (f" ({effect})" if effect else "")
        assert f": {said}, " in line
        cell = f"{check['cell'][0]},{check['cell'][1]}"
        if check["success"]:
            assert line.endswith(f"enters {cell}") or f"toward {cell}" in line
        else:
            # Where it stopped: the end of the move that followed in the turn, if any.
            after = next(
                (
                    e
                    for e in events[i + 1 :]
                    if e["type"] in ("move", "turn", "end")
                    and e.get("token", check["token"]) == check["token"]
                ),
                None,
            )
            passed = (
                after is not None and after["type"] == "move" and check["cell"] in after["path"][1:]
            )
            if after is not None and after["type"] == "move":
                end = after["path"][-1]
                # A failure whose rules still move the token on (D6's "Complete movement",
                # a share past the roll's cell; a Whisperspace swimmer's penalty) ends there.
                if passed and end != check["cell"]:
                    assert f"ends its move at {end[0]},{end[1]}" in line, line
                else:
                    assert f"stops at {end[0]},{end[1]}" in line
            if not passed:
                assert "stops at" in line and f"short of {cell}" in line
    moves = [e for e in events if e["type"] == "move"]
    moved = [ln for ln in lines if " moves " in ln]
    assert len(moved) == len(moves)
    for ev, line in zip(moves, moved, strict=True):
        a, b = ev["path"][0], ev["path"][-1]
        assert f"{ev['token']} moves {a[0]},{a[1]} -> {b[0]},{b[1]}: {len(ev['path']) - 1} " in line
    end = events[-1]
    assert lines[-1].startswith(f"turn {end['turn']}: {end['outcome']}: ")
    assert all(re.match(r"turn \d+: ", ln) for ln in lines)


def test_d6_words(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """D6 words its own checks (D6.describe_check): the replay asks the log's system."""
    d6 = systems.get("d6")
    assert check_words("move all_out walk: running 3D+2 vs easy->moderate", "DN 13", d6) == (
        "running",
        "DN 13",
        "moderate, all-out",
    )
    assert check_words("move high swim: swimming 2D vs moderate", "DN 13", d6)[2] == (
        "moderate, high, swim"
    )
    assert check_words("jump cautious gap: climbing 3D+1 vs easy", "DN 8", d6)[2] == (
        "jump, easy, cautious"
    )
    assert degree_text("fail_7_10", d6) == "failed by 7-10"
    assert degree_text("fail_21_plus", d6) == "failed by 21+"
    assert degree_text("critical_success", d6) == "critical success"
    # Another system's words are not read as D6's.
    assert degree_text("fail_7_10") == "fail 7 10"
    assert check_words("move all_out walk: running 3D+2 vs easy->moderate", "DN 13")[2] == ""
    events = [
        _start(quarry=[7, 18]),
        {"type": "turn", "turn": 3},
        {"type": "roll", "token": "quarry", "expression": "3D", "total": 8, "note": ""},
        {
            "type": "check", "token": "quarry", "cell": [23, 0], "target": "DN 18",
            "what": "move all_out swim: swimming 3D vs moderate->difficult",
            "degree": "fail_7_10", "success": False,
        },
        {"type": "move", "token": "quarry", "path": [[7, 18], [6, 17], [5, 16]], "turns": "3/8"},
        {"type": "state", "token": "quarry", "state": {"cell": [5, 16],
                                                        "conditions": ["kneeling", "half_move"]}},
        {"type": "turn", "turn": 4},
        {"type": "state", "token": "quarry", "state": {"cell": [5, 16], "conditions": []}},
    ]  # fmt: skip
    assert _body(format_replay(events)) == [
        "turn 3: quarry rolls swimming 3D = 8 vs DN 18 (difficult, all-out, swim): failed by "
        "7-10 (fall: stop at half, kneeling, no more actions, -2D next), stops at 5,16 short of "
        "23,0 (half move, kneeling)",
        "turn 3: quarry moves 7,18 -> 5,16: 2 cells in 0.38 turn",
        "turn 4: quarry is no longer half move, kneeling",
    ]


# --------------------------------------------------------------------------- every system


def _system_check(name: str, stats: dict[str, Any], terrain: Terrain) -> tuple[Any, Any]:
    system = api.system(name)
    token = system.token(stats)
    for pace in system.paces:
        check = system.cell_check(token, terrain, pace)
        if check is not None and check.check is not None:
            dice = Dice(3)
            result = check.check.roll(dice)
            return check, (result, [e.to_dict() for e in dice.log])
    raise AssertionError(f"{name} asks nothing on {terrain}")


@pytest.mark.parametrize(
    ("name", "stats", "terrain", "expected"),
    [
        ("whisperspace", {"phys": 1, "athletics": 2}, Terrain(move="swim", difficulty="moderate"),
         ("athletics", "DC ", "swim")),
        ("mythmaster", {"adaptability": 3, "physical": 3, "climbing": 12},
         Terrain(move="climb", difficulty="moderate", height=4), ("climbing", "21", "moderate")),
        ("d6", {"move": 10, "dexterity": "3D", "swimming": "2D"},
         Terrain(move="swim", difficulty="moderate"), ("swimming", "DN ", "moderate, ")),
        ("speedpoints", {"running": 6, "climbing": 4}, Terrain(move="climb", height=4),
         ("climbing", "", "climb, difficulty")),
    ],
)  # fmt: skip
def test_each_systems_checks_read_alike(
    name: str, stats: dict[str, Any], terrain: Terrain, expected: tuple[str, str, str]
) -> None:
    check, (result, rolls) = _system_check(name, stats, terrain)
    events = [
        _start(hero=[1, 1]),
        {"type": "turn", "turn": 1},
        *({"type": "roll", "token": "hero", **r} for r in rolls),
        {
            "type": "check", "token": "hero", "cell": [2, 1], "what": check.what,
            "target": check.target, "degree": result.degree, "success": result.success,
        },
        {"type": "move", "token": "hero", "path": [[1, 1], [2, 1]] if result.success else [[1, 1]],
         "turns": 1},
    ]  # fmt: skip
    (line,) = [ln for ln in _body(format_replay(events)) if " rolls " in ln]
    skill, against, detail = expected
    total = rolls[-1]["total"]
    assert line.startswith(f"turn 1: hero rolls {skill} {rolls[0]['expression']} = ")
    assert f" = {total}" in line and f" vs {against}" in line and f"({detail}" in line
    assert ("enters 2,1" in line) == result.success
    assert (": failure" in line or ": failed" in line or "extreme failure" in line) != (
        result.success
    )
    if name in ("mythmaster", "speedpoints"):  # "... >= N": the number to reach
        assert re.search(r" vs \d+ \(", line), line


# --------------------------------------------------------------------------- flights, doors, GM


def test_flights_doors_and_the_gms_edits(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    events = [
        {**_start(runner=[0, 0]), "system": "mythmaster"},
        {"type": "door", "door": 12, "name": "gate", "open": True},
        {"type": "turn", "turn": 1},
        {"type": "token_add", "token": "wolf", "side": "pursuer", "state": {"cell": [4, 4]}},
        {"type": "place", "token": "runner", "cell": [1, 1]},
        {"type": "order", "order": ["wolf", "runner"], "why": "delay"},
        {"type": "flight", "token": "griffon", "turn": 1, "actions": ["take_off", "accelerate",
         "accelerate"], "speed": 8, "path": [[9, 9], [8, 9], [7, 9]], "events": [
            {"event": "collision", "what": "cliff at 6,9 (blocked)", "cell": [6, 9],
             "stopped_at": [7, 9]}],
         "state": {"cell": [7, 9], "heading": 270, "speed": 0, "altitude": 0}},
        {"type": "turn", "turn": 2},
        {"type": "door", "door": 12, "name": "gate", "open": False},
        {"type": "flight", "token": "falcon", "actions": [], "path": [[3, 3], [3, 4]],
         "events": [{"event": "landed", "cell": [3, 4], "speed": 2}],
         "state": {"cell": [3, 4], "heading": 180, "speed": 0, "altitude": 0, "landed": True}},
        {"type": "token_remove", "token": "wolf"},
        {"type": "turn", "turn": 3},
        {"type": "end", "outcome": "timeout", "turn": 3, "cell": None, "by": None},
    ]  # fmt: skip
    text = format_replay(events)
    assert text.splitlines()[0] == "s.yaml seed 7 (mythmaster): timeout on turn 3"
    assert _body(text) == [
        "before turn 1: door 12 'gate' opens",
        "turn 1: GM adds wolf (pursuer) at 4,4",
        "turn 1: GM places runner at 1,1",
        "turn 1: turn order: wolf, runner (delay)",
        "turn 1: griffon flies 9,9 -> 7,9: take off, accelerate x2 (speed 0, heading 270); "
        "hits cliff at 6,9 (blocked), stops at 7,9",
        "turn 2: door 12 'gate' closes",
        "turn 2: falcon flies 3,3 -> 3,4 (speed 0, heading 180, landed); lands at 3,4",
        "turn 2: GM removes wolf",
        "turn 3: timeout: the turn limit is reached",
    ]


def test_a_real_flight_and_the_command(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    log = _log(tmp_path, GRIFFON, 12345, capsys)
    events = _events(log)
    flights = [e for e in events if e["type"] == "flight"]
    assert flights
    assert main(["replay", str(log), "--text"]) == 0
    out = capsys.readouterr().out
    flown = [ln.strip() for ln in out.splitlines() if " flies " in ln]
    assert len(flown) == len(flights)
    for ev, line in zip(flights, flown, strict=True):
        a, b = ev["path"][0], ev["path"][-1]
        if len(ev["path"]) == 1:  # a turn that covers no cell (speed 0, or a dive that fell)
            assert f"{ev['token']} flies in place at {a[0]},{a[1]}" in line
        else:
            assert f"{ev['token']} flies {a[0]},{a[1]} -> {b[0]},{b[1]}" in line
        assert f"speed {ev['state']['speed']}" in line
    assert "turn 1:" in out


def test_a_damaged_log_still_reads_line_by_line() -> None:
    events = [
        _start(a=[0, 0]),
        {"type": "turn", "turn": "x"},
        {"type": "roll", "token": "a"},  # no expression, no total
        {"type": "check", "token": "a", "cell": "nowhere", "what": 5, "target": None,
         "degree": ["?"], "success": "yes"},
        {"type": "roll", "token": "a", "expression": "1d6", "total": 3, "decided": "hit"},
        {"type": "move", "token": "a", "path": [[0, 0], [0, 1]], "turns": "1/0"},
        {"type": "flight", "token": 7, "path": "up", "state": [], "events": 3},
        {"type": "door", "door": None},
        {"type": "order", "order": 5},
        {"type": "end", "outcome": 9},
    ]  # fmt: skip
    lines = _body(format_replay(events))
    assert lines[0] == 'turn x: a rolls 5 ? = ? vs null: ["?"], stops at 0,1 short of nowhere'
    assert lines[1] == "turn x: a rolls 1d6 = 3: hit"  # a roll no check followed
    assert lines[2] == "turn x: a moves 0,0 -> 0,1: 1 cell in 1/0 turn"
    assert lines[3] == "turn x: 7 flies in place"
    assert lines[4:] == ["turn x: door null closes", "turn x: turn order: ?", "turn x: 9"]
