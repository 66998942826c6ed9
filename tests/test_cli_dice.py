"""`tacgrid odds` and `tacgrid roll` per CONTRACT.md."""

from __future__ import annotations

import json
from fractions import Fraction

import pytest

from engine.cli import main


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize(
    ("system", "check"),
    [
        ("whisperspace", "athletics=2 dc=6 bonus=1"),
        ("mythmaster", "skill=15 adjust=-2"),
        ("d6", "dice=3D+1 dn=13"),
        ("speedpoints", "ability=4 difficulty=5"),
    ],
)
def test_odds_json_sums_to_one(capsys, system: str, check: str) -> None:
    code, out, err = run(capsys, "odds", "--system", system, *check.split(), "--json")
    assert code == 0 and err == ""
    doc = json.loads(out)
    assert {"p_success", "outcomes"} <= set(doc)
    assert sum(Fraction(v) for v in doc["exact"].values()) == 1
    code, out, _ = run(capsys, "roll", "--system", system, *check.split(), "--seed", "7", "--json")
    first = json.loads(out)
    code2, out2, _ = run(
        capsys, "roll", "--system", system, *check.split(), "--seed", "7", "--json"
    )
    assert code == code2 == 0 and json.loads(out2) == first
    assert first["degree"] in doc["outcomes"] and first["seed"] == 7


def test_mythmaster_climb_is_79_percent(capsys) -> None:
    _, out, _ = run(capsys, "odds", "--system", "mythmaster", "skill=15", "adjust=-2", "--json")
    assert json.loads(out)["p_success_exact"] == "79/100"


def test_plain_text_table(capsys) -> None:
    code, out, _ = run(capsys, "odds", "--system", "whisperspace", "athletics=2", "dc=6", "bonus=1")
    assert code == 0 and "extreme_success" in out and "p_success" in out and "%" in out


def test_roll_without_seed_reports_its_seed(capsys) -> None:
    code, out, _ = run(capsys, "roll", "--system", "d6", "dice=2D", "dn=5", "--json")
    assert code == 0 and isinstance(json.loads(out)["seed"], int)


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        (["odds", "--system", "d6", "dice=3X", "dn=4"], "die code"),
        (["odds", "--system", "whisperspace", "athletics=2", "dc=x"], "dc"),
        (["odds", "--system", "speedpoint", "ability=1"], "did you mean 'speedpoints'"),
        (["roll", "--system", "d6", "dice=3D", "dn=4", "--seed", "x"], "--seed"),
        (["odds", "--system", "d6"], "required"),
    ],
)
def test_bad_checks_exit_2_one_line(capsys, argv, expected) -> None:
    code, out, err = run(capsys, *argv)
    assert code == 2 and out == "" and err.count("\n") == 1 and expected in err
