"""The viewer plays a click as the hover shows it (issue 38: rules in play; the GM's table).

A click moves the token at the pace its hover path is planned at (its spec's, else the
system's default), and a click on a cell that takes more than a turn to cross starts that
crossing, which goes on over turns (docs/rules.md, "Rules in play").
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

os.environ.setdefault("SDL_VIDEODRIVER", "dummy")
os.environ.setdefault("SDL_AUDIODRIVER", "dummy")

import tmxtext  # noqa: E402

from engine.viewer.app import Viewer, open_source  # noqa: E402


def _viewer(tmp_path: Path, rows: list[str], system: str, token: str) -> Viewer:
    tmxtext.write(tmp_path / "m.tmx", rows)
    (tmp_path / "s.yaml").write_text(
        f"name: t\nmap: m.tmx\nsystem: {system}\nseed: 1\nturns: 5\ntokens:\n{token}",
        encoding="utf-8",
    )
    return Viewer(open_source(str(tmp_path / "s.yaml")), size=(900, 600))


def test_a_click_moves_at_the_pace_the_hover_planned(tmp_path: Path) -> None:
    """RULES.md 5 (generic): speed in map units per turn, "dash = 2 x speed". A token with no
    pace moves at the system's default (walk: 30 ft, 6 cells); its hover path is planned at
    that pace too, so the cell a click reaches this turn is the hover's end of turn 1 (it
    was planned at dash, 12 cells, and the click stopped at 6 without a word)."""
    v = _viewer(
        tmp_path,
        ["." * 30] * 3,
        "generic",
        "  - {id: a, side: quarry, policy: human, cell: [0, 1], stats: {speed: 30}}\n",
    )
    v.select("a")
    assert v.reach_of("a").answer.pace == v.sim.pace_of("a") == "walk"
    assert v.move_selected((12, 1)) is False  # a dash away: out of reach this turn
    assert v.move_selected((6, 1)) is True
    assert v.sim.tokens["a"].state.cell == (6, 1)


def test_a_click_on_a_tall_wall_starts_the_climb_over_turns(
    tmp_path: Path, monkeypatch: Any
) -> None:
    """A 60-ft wall climbed at 10 ft a Move action (RULES.md 1: climb "+2" penalties, "-10
    ft" each) takes two turns: a click on it starts the climb (half of it this turn, logged
    as progress toward the wall), a second click goes on and gets over it."""
    tall = {"terrain": "tall", "move": "climb", "difficulty": "none", "height": 60.0}
    monkeypatch.setitem(tmxtext.LEGEND, "T", tall)
    monkeypatch.setattr(tmxtext, "CHARS", [*tmxtext.CHARS, "T"])
    v = _viewer(
        tmp_path,
        ["....T....."] * 3,
        "whisperspace",
        "  - {id: a, side: quarry, policy: human, cell: [3, 1], stats: {speed: 30}}\n",
    )
    v.select("a")
    assert v.move_selected((4, 1)) is True
    st = v.sim.tokens["a"].state
    assert (st.cell, st.toward, st.mode) == ((3, 1), (4, 1), "climb")
    assert 0 < st.progress < 1
    v.sim.end_round()
    v.sim.begin_turn()
    assert v.move_selected((4, 1)) is True
    assert v.sim.tokens["a"].state.cell == (4, 1)


@pytest.fixture(autouse=True)
def _quit_pygame() -> Any:
    yield
    import pygame

    pygame.quit()
