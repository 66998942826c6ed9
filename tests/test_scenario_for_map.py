"""`Scenario.for_map`: a bare map as a scenario (what `tacgrid view MAP` opens)."""

from __future__ import annotations

from pathlib import Path

import pytest
import tmxtext
from conftest import ROOT

from engine.errors import TacgridError
from engine.scenario import Scenario


def test_a_gm_token_at_each_spawn_with_the_given_stats() -> None:
    s = Scenario.for_map(str(ROOT / "maps" / "chase.tmx"), "d6", {}, {"move": 12})
    assert s.system.name == "d6" and s.name == "chase.tmx" and s.turns == 10**6
    assert [t.id for t in s.tokens] == [sp.id for sp in s.model.spawns]
    assert all(t.side == "gm" and t.policy == "human" for t in s.tokens)
    assert all(t.stats == {"move": 12} for t in s.tokens)


def test_a_map_without_spawns_gets_one_token_at_its_centre(tmp_path: Path) -> None:
    path = str(tmxtext.write(tmp_path / "m.tmx", ["....", "....", "...."]))
    s = Scenario.for_map(path, None)
    assert s.system.name == "generic"
    assert [(t.id, t.cell) for t in s.tokens] == [("token", (2, 1))]


def test_the_centre_token_moves_off_blocked_terrain(tmp_path: Path) -> None:
    """A map without spawns whose centre is a wall: the GM's token stands on the nearest
    open cell, never inside the wall (TABLE-NOTES)."""
    path = str(tmxtext.write(tmp_path / "m.tmx", ["#####", "#.###", "#####"]))
    s = Scenario.for_map(path, None)
    assert s.model.terrain_at((2, 1)).move == "blocked"
    assert [t.cell for t in s.tokens] == [(1, 1)]
    walled = str(tmxtext.write(tmp_path / "w.tmx", [".###.", "#####", "#####"]))
    s = Scenario.for_map(walled, None)
    assert s.model.terrain_at((2, 1)).move == "blocked"
    assert [t.cell for t in s.tokens] == [(0, 0)]  # 2 steps away, the lower row then column


def test_bad_stats_are_refused_before_any_window_opens() -> None:
    with pytest.raises(TacgridError):
        Scenario.for_map(str(ROOT / "maps" / "chase.tmx"), "d6", {}, {"move": "fast"})
