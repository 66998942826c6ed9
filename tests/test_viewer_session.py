"""The GM's table in the viewer (SDL dummy driver, posted events): tokens added, edited,
removed and dragged, turn order, measuring, risk-aware paths, sessions saved, reopened
and recovered."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pygame
import pytest
from conftest import ROOT

from engine.cli import main
from engine.eventlog import replay_states
from engine.report.movement import path_json
from engine.search import PathAnswer
from engine.viewer.app import Viewer, open_source
from engine.viewer.launch import open_table
from engine.viewer.session import autosave_path

CHASE = str(ROOT / "scenarios" / "chase.yaml")
MAP = str(ROOT / "maps" / "chase.tmx")


@pytest.fixture
def viewer():
    v = Viewer(open_source(CHASE), size=(1100, 700))
    yield v
    pygame.quit()


def post(kind: int, **kw) -> None:
    pygame.event.post(pygame.event.Event(kind, **kw))


def key(v: Viewer, k: int, mod: int = 0, text: str = "") -> None:
    post(pygame.KEYDOWN, key=k, mod=mod, unicode=text)
    v.step()


def typed(v: Viewer, text: str) -> None:
    for ch in text:
        post(pygame.KEYDOWN, key=0, mod=0, unicode=ch)
    v.step()


def hover(v: Viewer, cell) -> None:
    post(pygame.MOUSEMOTION, pos=v.cell_screen(cell), rel=(0, 0), buttons=(0, 0, 0))
    v.step()


def drag(v: Viewer, a, b, mod: int = 0) -> None:
    post(pygame.MOUSEBUTTONDOWN, pos=v.cell_screen(a), button=1, mod=mod)
    post(pygame.MOUSEMOTION, pos=v.cell_screen(b), rel=(0, 0), buttons=(1, 0, 0))
    post(pygame.MOUSEBUTTONUP, pos=v.cell_screen(b), button=1, mod=mod)
    v.step()


def free_cell(v: Viewer, near) -> tuple[int, int]:
    for dc in range(1, 8):
        c = (near[0] + dc, near[1])
        t = v.model.terrain_at(c)
        if v.token_at(c) is None and t.move == "walk" and t.difficulty == "none":
            return c
    raise AssertionError("no free open cell")


def clear_field(v: Viewer) -> None:
    for _ in range(40):
        key(v, pygame.K_BACKSPACE)


def test_add_token_with_the_form_validated_like_the_command_line(viewer: Viewer) -> None:
    v = viewer
    cell = free_cell(v, v.sim.tokens["quarry"].state.cell)
    hover(v, cell)
    key(v, pygame.K_n)
    form = v.table.form
    assert form is not None and form.mode == "add"
    # Every stat of the system is a field (tacgrid systems' list).
    names = [f.name for f in form.fields]
    assert names[:4] == ["id", "side", "size", "pace"] and names[-1] == "conditions"
    assert [p.name for p in v.sim.system.stats] == names[4:-1]
    clear_field(v)  # the id field
    typed(v, "goblin")
    # Down to 'move', a bad value: the form stays, the system's error is in the panel.
    for _ in range(4):
        key(v, pygame.K_DOWN)
    assert form.fields[form.index].name == "move"
    clear_field(v)
    typed(v, "-3")
    n = len(v.sim.events)
    key(v, pygame.K_RETURN)
    assert v.table.form is form and "move" in form.error and len(v.sim.events) == n
    assert any("move" in text for text, _ in v.table.panel_lines())
    clear_field(v)
    typed(v, "9")
    key(v, pygame.K_RETURN)
    assert v.table.form is None
    assert "goblin" in v.sim.tokens and v.sim.tokens["goblin"].state.cell == cell
    assert v.sim.tokens["goblin"].stats["move"] == 9 and v.sim.order[-1] == "goblin"
    ev = v.sim.events[-1]
    assert ev["type"] == "token_add" and ev["token"] == "goblin"
    states, _ = replay_states(v.sim.events)
    assert states["goblin"].cell == cell
    # The token is drawn: its side's colour at its cell.
    from engine.viewer.app import SIDE_COLOURS

    v.step()
    x, y = (round(c) for c in v.cell_screen(cell))
    colour = SIDE_COLOURS[v.sim.specs["goblin"].side]
    near = [v.screen.get_at((x + dx, y + dy))[:3] for dx in range(-6, 7) for dy in range(-6, 7)]
    assert colour in near
    # Undo takes it away, redo brings it back with its event.
    key(v, pygame.K_z, pygame.KMOD_CTRL)
    assert "goblin" not in v.sim.tokens and len(v.sim.events) == n
    key(v, pygame.K_y, pygame.KMOD_CTRL)
    assert "goblin" in v.sim.tokens and v.sim.events[-1]["type"] == "token_add"


def test_palette_side_takes_that_sides_stats(viewer: Viewer) -> None:
    v = viewer
    v.select("pursuer1")
    cell = free_cell(v, v.sim.tokens["pursuer1"].state.cell)
    hover(v, cell)
    key(v, pygame.K_n)
    form = v.table.form
    assert form.value("side") == "pursuer" and form.value("move") == "12"
    key(v, pygame.K_DOWN)  # side
    while form.value("side") != "quarry":
        key(v, pygame.K_RIGHT)
    assert form.value("move") == "10" and form.value("swimming") == "3D"
    key(v, pygame.K_RETURN)
    tid = v.selected
    assert v.sim.specs[tid].side == "quarry" and tid in v.sim.quarries


def test_edit_stats_and_conditions_and_remove(viewer: Viewer) -> None:
    v = viewer
    v.select("pursuer2")
    key(v, pygame.K_e)
    form = v.table.form
    assert form is not None and form.mode == "edit" and form.value("move") == "11"
    while form.fields[form.index].name != "move":
        key(v, pygame.K_DOWN)
    clear_field(v)
    typed(v, "15/2")
    while form.fields[form.index].name != "conditions":
        key(v, pygame.K_DOWN)
    typed(v, "prone")
    key(v, pygame.K_RETURN)
    tok = v.sim.tokens["pursuer2"]
    assert str(tok.stats["move"]) == "15/2" and tok.state.has("prone")
    ev = v.sim.events[-1]
    assert ev["type"] == "token_edit" and ev["state"]["conditions"] == ["prone"]
    assert replay_states(v.sim.events)[0]["pursuer2"].has("prone")
    # Esc cancels a form: nothing changes.
    n = len(v.sim.events)
    key(v, pygame.K_e)
    key(v, pygame.K_ESCAPE)
    assert v.table.form is None and len(v.sim.events) == n and v.running
    # Delete removes the selected token; undo puts it back.
    key(v, pygame.K_DELETE)
    assert "pursuer2" not in v.sim.tokens and "pursuer2" not in v.sim.order
    assert "pursuer2" not in v.sim.pursuers and v.sim.events[-1]["type"] == "token_remove"
    assert "pursuer2" not in replay_states(v.sim.events)[0]
    key(v, pygame.K_z, pygame.KMOD_CTRL)
    assert "pursuer2" in v.sim.tokens and v.sim.order == ["quarry", "pursuer1", "pursuer2"]


def test_drag_a_token_to_another_cell(viewer: Viewer) -> None:
    v = viewer
    start = v.sim.tokens["pursuer1"].state.cell
    far = (start[0] + 12, start[1] - 3)
    assert v.token_at(far) is None
    drag(v, start, far)
    assert v.sim.tokens["pursuer1"].state.cell == far and v.selected == "pursuer1"
    ev = v.sim.events[-1]
    assert ev == {"type": "place", "token": "pursuer1", "cell": list(far)}
    assert not any(e["type"] == "check" for e in v.sim.events[-2:])  # no checks rolled
    key(v, pygame.K_z, pygame.KMOD_CTRL)
    assert v.sim.tokens["pursuer1"].state.cell == start


def test_turn_order_reorder_and_delay(viewer: Viewer) -> None:
    v = viewer
    v.select("quarry")
    key(v, pygame.K_PAGEDOWN)
    assert v.sim.order == ["pursuer1", "quarry", "pursuer2"]
    assert v.sim.events[-1] == {
        "type": "order",
        "order": ["pursuer1", "quarry", "pursuer2"],
        "why": "reorder",
    }
    v.select("pursuer1")
    key(v, pygame.K_d)
    assert v.sim.order == ["quarry", "pursuer2", "pursuer1"]
    lines = [t for t, _ in v.table.panel_lines()]
    i = lines.index("turn order (PgUp/PgDn, D delays)")
    assert lines[i + 1 : i + 4] == [
        " 1. quarry (quarry)",
        " 2. pursuer2 (pursuer)",
        ">3. pursuer1 (pursuer)",
    ]
    key(v, pygame.K_z, pygame.KMOD_CTRL)
    assert v.sim.order == ["pursuer1", "quarry", "pursuer2"]
    # The policies play in the new order.
    v.sim.set_order(["pursuer2", "pursuer1", "quarry"])
    v.auto_round()
    moves = [e["token"] for e in v.sim.events if e["type"] == "state"]
    assert moves[0] == "pursuer2"  # not the scenario's first (quarry)


def test_measure_tool(viewer: Viewer) -> None:
    v = viewer
    v.select("pursuer1")
    p1 = v.sim.tokens["pursuer1"].state.cell
    a, b = (p1[0], p1[1] - 2), (p1[0] + 6, p1[1])
    key(v, pygame.K_m)
    assert v.table.measuring
    n = len(v.sim.events)
    drag(v, a, b)
    m = v.table.measured
    assert isinstance(m, PathAnswer) and m.cells[0] == a and m.cells[-1] == b
    assert m.unit and m.turns > 0 and 0 < m.p_no_failure <= 1
    # The same answer as `tacgrid path` for that token, nothing moved, no event.
    from engine.search import find_path

    want = path_json(find_path(v.reach_of("pursuer1").graph, a, b))
    assert path_json(m)["turns_exact"] == want["turns_exact"]
    assert path_json(m)["distance"] == want["distance"]
    assert len(v.sim.events) == n and v.sim.tokens["pursuer1"].state.cell == p1
    lines = [t for t, _ in v.table.panel_lines()]
    assert any(f"{want['distance']} {m.unit}" in t for t in lines)
    # The line is drawn in the measure colour.
    v.step()
    end = v.cell_screen(b)
    ring = [v.screen.get_at((round(end[0]) + dx, round(end[1]))) for dx in range(-7, 8)]
    assert any(tuple(c[:3]) == (120, 255, 200) for c in ring)
    key(v, pygame.K_m)
    assert not v.table.measuring
    # Shift+drag measures without the mode.
    drag(v, b, a, pygame.KMOD_SHIFT)
    measured = v.table.measured
    assert isinstance(measured, PathAnswer) and measured.cells[0] == b


def _risky_goal(v: Viewer):
    """A cell where pursuer1's quickest and safest paths differ (across the river)."""
    from engine.viewer.measure import risk_choice

    assert v.selected == "pursuer1"
    goal = (26, 5)
    cell = v.sim.tokens["pursuer1"].state.cell
    got = risk_choice(v.reach_of("pursuer1").graph, cell, goal, None)
    assert got is not None, "chase.yaml: pursuer1 has one path to 26,5"
    return goal, got


def test_risk_aware_hover_and_threshold(viewer: Viewer) -> None:
    v = viewer
    v.select("pursuer1")
    goal, got = _risky_goal(v)
    hover(v, goal)
    risk = v.table.risk()
    assert risk is not None and risk.chosen == "fast"
    assert risk.safe.p_no_failure > risk.fast.p_no_failure
    lines = [t for t, _ in v.table.panel_lines()]
    assert any(t.startswith("quickest:") for t in lines) and any(
        t.startswith("safest") for t in lines
    )
    # Set "prefer safe below p = X" above the quickest path's odds: the safest is chosen.
    x = float(risk.fast.p_no_failure)
    while v.table.safe_below is None or v.table.safe_below <= x:
        key(v, pygame.K_PERIOD)
    assert v.table.risk().chosen == "safe"
    key(v, pygame.K_COMMA)
    while v.table.safe_below is not None:
        key(v, pygame.K_COMMA)
    assert v.table.risk().chosen == "fast"


def test_session_save_reopen_is_equal_event_for_event(viewer: Viewer, tmp_path: Path) -> None:
    v = viewer
    # A session: a move, a token added, an edit, a reorder, a round ended, an undo.
    p1 = v.sim.tokens["pursuer1"].state.cell
    v.select("pursuer1")
    v.move_selected((p1[0] + 3, p1[1]))
    hover(v, free_cell(v, v.sim.tokens["quarry"].state.cell))
    key(v, pygame.K_n)
    key(v, pygame.K_RETURN)
    new = v.selected
    key(v, pygame.K_PAGEUP)
    v.end_round()
    v.select("quarry")
    v.move_selected(
        v.sim.tokens["quarry"].state.cell[:1] + (v.sim.tokens["quarry"].state.cell[1] - 1,)
    )
    v.do_undo()
    v.table.safe_below = 0.4
    path = str(tmp_path / "game.tacgrid")
    v.table.save(path)
    assert os.path.exists(path) and v.message == f"saved {path}"
    w = open_table(path, size=(1100, 700))
    assert w.sim.events == v.sim.events  # event for event
    assert w.sim.order == v.sim.order and w.sim.turn == v.sim.turn and new in w.sim.tokens
    assert {t: (k.stats, k.state) for t, k in w.sim.tokens.items()} == {
        t: (k.stats, k.state) for t, k in v.sim.tokens.items()
    }
    assert w.sim.dice.getstate()[0] == v.sim.dice.getstate()[0]
    assert len(w.undo) == len(v.undo) and len(w.redo) == len(v.redo)
    assert w.table.safe_below == 0.4 and w.selected == v.selected
    assert (w.camera.x, w.camera.y, w.camera.zoom) == (v.camera.x, v.camera.y, v.camera.zoom)
    # The same dice follow: the redo and the next move roll the same in both.
    for x in (v, w):
        x.do_redo()
    assert w.sim.events == v.sim.events
    for x in (v, w):
        x.select(new)
        c = x.sim.tokens[new].state.cell
        x.move_selected((c[0], c[1] + 2))
    assert w.sim.events == v.sim.events
    # And the undo history goes back to the very start in both.
    while v.undo:
        v.do_undo()
        w.do_undo()
    assert w.sim.events == v.sim.events and w.sim.order == ["quarry", "pursuer1", "pursuer2"]


def test_ctrl_s_and_ctrl_o(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    v = open_table(CHASE, size=(1100, 700))
    try:
        key(v, pygame.K_s, pygame.KMOD_CTRL)
        saved = tmp_path / "chase.tacgrid"
        assert saved.exists() and v.table.session_path == str(saved)
        data = json.loads(saved.read_text())
        assert data["format"] == "tacgrid-session" and data["events"] == v.sim.events
        v.select("pursuer1")
        key(v, pygame.K_d)
        assert v.sim.order[-1] == "pursuer1"
        key(v, pygame.K_o, pygame.KMOD_CTRL)  # back to the saved table
        assert v.sim.order == ["quarry", "pursuer1", "pursuer2"]
    finally:
        pygame.quit()


def test_autosave_and_recovery(tmp_path: Path) -> None:
    path = str(tmp_path / "game.tacgrid")
    v = open_table(CHASE, size=(1100, 700))
    v.table.save(path)
    auto = autosave_path(path)
    assert not os.path.exists(auto)
    v.select("pursuer1")
    key(v, pygame.K_d)  # an event: autosaved at once
    assert os.path.exists(auto)
    events = list(v.sim.events)
    pygame.quit()  # "a crash": the session file is older than the autosave
    os.utime(path, (1, 1))
    w = open_table(path, size=(1100, 700))
    try:
        assert w.table.recovery == auto
        assert any("autosave found" in t for t, _ in w.table.panel_lines())
        assert w.sim.order == ["quarry", "pursuer1", "pursuer2"]
        key(w, pygame.K_r)
        assert w.sim.events == events and w.sim.order[-1] == "pursuer1"
        assert w.table.session_path == path  # Ctrl+S still saves the session file
        key(w, pygame.K_s, pygame.KMOD_CTRL)
        assert not os.path.exists(auto)
        assert json.loads(Path(path).read_text())["events"] == events
    finally:
        pygame.quit()
    # X discards an autosave.
    Path(auto).write_text(Path(path).read_text())
    os.utime(path, (1, 1))
    w = open_table(path, size=(1100, 700))
    try:
        key(w, pygame.K_x)
        assert w.table.recovery is None and not os.path.exists(auto)
    finally:
        pygame.quit()


def test_bad_session_files_are_one_line(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    bad = tmp_path / "bad.tacgrid"
    bad.write_text('{"format": "tacgrid-session", "version": 1, "source": {}}')
    assert main(["view", str(bad), "--frames", "1"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "bad.tacgrid" in err and "damaged" in err
    other = tmp_path / "other.tacgrid"
    other.write_text("[1, 2]")
    assert main(["view", str(other), "--frames", "1"]) == 2
    assert "not a tacgrid session" in capsys.readouterr().err


def test_view_scenario_refuses_token(capsys: pytest.CaptureFixture) -> None:
    assert main(["view", CHASE, "--token", "move=5", "--frames", "1"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "--token" in err and "scenario" in err


def test_cli_view_session_screenshot(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)  # the unsaved table autosaves beside its default save
    v = open_table(MAP, system="d6", token="move=10", size=(1100, 700))
    hover(v, free_cell(v, v.sim.tokens[v.sim.order[0]].state.cell))
    key(v, pygame.K_n)
    key(v, pygame.K_RETURN)
    assert os.path.exists(tmp_path / "chase.tacgrid.autosave")  # autosaved, not yet saved
    path = str(tmp_path / "map.tacgrid")
    v.table.save(path)
    events = list(v.sim.events)
    pygame.quit()
    shot = tmp_path / "s.png"
    assert main(["view", path, "--frames", "2", "--screenshot", str(shot)]) == 0
    assert shot.exists()
    w = open_table(path, size=(1100, 700))
    try:
        assert w.sim.events == events
    finally:
        pygame.quit()


def test_cli_path_safe_below(capsys: pytest.CaptureFixture) -> None:
    args = ["path", MAP, "--system", "d6", "--token", "move=10,swimming=2D"]
    # Find a goal where the quickest and the safest differ (from the CLI's pareto list).
    v = Viewer(open_source(CHASE), size=(800, 600))
    v.select("pursuer1")
    goal, got = _risky_goal(v)
    start = v.sim.tokens["pursuer1"].state.cell
    stats = ",".join(f"{k}={x}" for k, x in v.sim.specs["pursuer1"].stats.items())
    pygame.quit()
    args = ["path", MAP, "--system", "d6", "--token", stats]
    args += ["--from", f"{start[0]},{start[1]}", "--to", f"{goal[0]},{goal[1]}", "--json"]
    fast_p = float(got.fast.p_no_failure)  # as the JSON shows it
    assert main([*args, "--safe-below", "0"]) == 0
    rep = json.loads(capsys.readouterr().out)
    assert rep["prefer"] == "fast" and rep["p_no_failure"] == fast_p
    assert main([*args, "--safe-below", str(min(1.0, fast_p + 0.01))]) == 0
    rep = json.loads(capsys.readouterr().out)
    assert rep["prefer"] == "safe" and rep["p_no_failure"] > fast_p
    assert set(rep) >= {"system", "cells", "distance", "unit", "turns", "steps", "p_no_failure"}
    assert main([*args, "--safe-below", "2"]) == 2
