"""``tacgrid stats`` as text: every pace's cells per turn (the figure ``path`` moves at that
pace), and long extras cut to what a person reads (``--json`` keeps everything)."""

from __future__ import annotations

import json
from typing import Any

from engine.cli import main


def _stats(capsys: Any, *args: str) -> str:
    assert main(["stats", *args]) == 0
    return capsys.readouterr().out


def test_each_pace_has_its_column_and_path_moves_as_it_says(capsys: Any) -> None:
    out = _stats(capsys, "--system", "generic", "--token", "speed=30")
    assert "per_turn is at dash" in out
    walk_row = next(
        line for line in out.splitlines() if line.strip().startswith("walk ") and "6" in line
    )
    assert walk_row.split()[1:] == ["6", "12"]  # walk pace 6 cells, dash 12
    doc = json.loads(_stats(capsys, "--system", "generic", "--token", "speed=30", "--json"))
    assert doc["per_turn"]["walk"] == 12 and doc["per_turn_pace"] == "dash"
    assert doc["per_turn_by_pace"]["walk"]["walk"] == 6


def test_a_long_plan_is_cut_in_text_not_in_json(capsys: Any) -> None:
    args = ["--system", "d6", "--token", "move=2", "--distance", "40000"]
    out = _stats(capsys, *args)
    assert len(out) < 20_000 and "more (--json lists them all)" in out
    assert "exact:" in out  # a 500-digit fraction shown as its decimal
    doc = json.loads(_stats(capsys, *args, "--json"))
    checks = doc["long_distance"]["speeds"]["all_out"]["checks"]
    assert len(checks) > 100 and all("p_success_exact" in c for c in checks)
