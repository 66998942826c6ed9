"""The GM gives a token acts in the viewer (issue 38: "a token's policy or the GM can give it
other actions (`act` with a name, costing what the seed says and imposing its penalties on
the moves around it)"): C, then a number, under SDL's dummy driver.

The figures are Whisperspace's, RULES.md 1: "Turn: 3 actions; each Move action moves up to
the current speed; a turn may spend 1, 2 or 3 actions on moving, with other actions
between". Speed 30 on 5-ft cells is 6 cells a Move action: 18 cells a turn with no act, 12
beside one (two Move actions).
"""

from __future__ import annotations

from pathlib import Path

import pygame
import pytest
import tmxtext
from conftest import ROOT

from engine.cli import main
from engine.eventlog import replay_states
from engine.scenario import load_scenario
from engine.viewer.app import Viewer, open_source
from engine.viewer.launch import open_table
from engine.viewer.replay import ReplayViewer

SCENARIO = """name: acts
map: map.tmx
system: whisperspace
seed: 1
turns: 5
tokens:
  - id: a
    side: quarry
    policy: waypoints
    waypoints: [[59, 1]]
    cell: [0, 1]
    stats: {speed: 30}
  - id: b
    side: pursuer
    policy: idle
    pace: sprint
    cell: [0, 2]
    stats: {speed: 30}
"""


@pytest.fixture
def scenario(tmp_path: Path) -> str:
    tmxtext.write(tmp_path / "map.tmx", ["." * 60] * 3)
    (tmp_path / "s.yaml").write_text(SCENARIO, encoding="utf-8")
    return str(tmp_path / "s.yaml")


@pytest.fixture
def viewer(scenario: str):
    v = Viewer(open_source(scenario), size=(1100, 700))
    v.select("a")
    v.step()
    yield v
    pygame.quit()


def key(v: Viewer, k: int, mod: int = 0) -> None:
    pygame.event.post(pygame.event.Event(pygame.KEYDOWN, key=k, mod=mod, unicode=""))
    v.step()


def click(v: Viewer, cell: tuple[int, int]) -> None:
    pos = v.cell_screen(cell)
    pygame.event.post(pygame.event.Event(pygame.MOUSEBUTTONDOWN, pos=pos, button=1))
    pygame.event.post(pygame.event.Event(pygame.MOUSEBUTTONUP, pos=pos, button=1))
    v.step()


def reach(v: Viewer, tid: str = "a") -> int:
    """The farthest cell along the token's row that its reach overlay says it gets to in
    one turn, in cells from where it stands."""
    tree = v.reach_of(tid).answer.tree
    c, r = v.sim.tokens[tid].state.cell
    far = [x for x in range(60) if (t := tree.turns((x, r))) is not None and t <= 1]
    return max(far) - c


def panel(v: Viewer) -> str:
    return "\n".join(text for text, _ in v.panel_text)


def shown(v: Viewer, text: str) -> bool:
    """Whether the panel shows ``text`` (wrapped over lines or not)."""
    return " ".join(text.split()) in " ".join(panel(v).split())


def moves(events: list[dict], tid: str = "a") -> list[int]:
    return [len(e["path"]) - 1 for e in events if e["type"] == "move" and e["token"] == tid]


def test_c_gives_the_selected_token_an_act_and_0_clears_it(viewer: Viewer) -> None:
    """One attack leaves 2 Move actions: 12 cells, not 18; the reach overlay, the click
    and the panel say so at once, and clearing gives the 18 back."""
    v = viewer
    assert reach(v) == 18
    key(v, pygame.K_c)
    assert v.table.acts.open and "acts for a (1-3 add, 0 clears, C done)" in panel(v)
    assert "  2 attack (1 action)" in panel(v)
    key(v, pygame.K_2)  # attack
    assert v.sim.specs["a"].acts == ("attack",)
    ev = v.sim.events[-1]
    assert ev["type"] == "token_edit" and ev["acts"] == ["attack"]
    assert ev["state"]["counters"] == {"act_attack": 1, "actions": 1}
    assert v.message == "a takes attack each turn"
    assert reach(v) == 12
    assert "acts each turn: attack" in panel(v) and "pace run" in panel(v)
    legend = [text for _, _, text in v.legend()]
    assert "run: reach this turn" in legend and "sprint: reach this turn" not in legend
    click(v, (13, 1))
    assert v.message == "out of reach this turn" and not moves(v.sim.events)
    click(v, (12, 1))
    assert moves(v.sim.events) == [12] and v.sim.tokens["a"].state.cell == (12, 1)
    v.do_undo()  # the move
    assert v.sim.specs["a"].acts == ("attack",) and reach(v) == 12
    key(v, pygame.K_0)
    assert v.sim.specs["a"].acts == () and v.message == "a takes no other action"
    assert v.sim.events[-1]["acts"] == [] and not v.sim.tokens["a"].state.counters
    assert reach(v) == 18 and "acts each turn" not in panel(v)
    key(v, pygame.K_c)  # closed: the digits are no one's again
    assert not v.table.acts.open and "acts for a" not in panel(v)


def test_acts_add_up_and_undo_takes_them_back(viewer: Viewer) -> None:
    """Two acts leave one Move action (6 cells, a walk); undo goes back one act at a time,
    redo brings it back."""
    v = viewer
    key(v, pygame.K_c)
    key(v, pygame.K_2)
    key(v, pygame.K_3)  # attack, then interact
    assert v.sim.specs["a"].acts == ("attack", "interact") and reach(v) == 6
    assert "acts each turn: attack, interact" in panel(v) and "pace walk" in panel(v)
    key(v, pygame.K_z, pygame.KMOD_CTRL)
    assert v.sim.specs["a"].acts == ("attack",) and reach(v) == 12
    key(v, pygame.K_z, pygame.KMOD_CTRL)
    assert v.sim.specs["a"].acts == () and reach(v) == 18
    assert not v.sim.tokens["a"].state.counters
    assert [e["type"] for e in v.sim.events] == ["start", "turn"]
    key(v, pygame.K_y, pygame.KMOD_CTRL)
    assert v.sim.specs["a"].acts == ("attack",) and reach(v) == 12


def test_the_turn_loop_takes_the_gms_acts_every_turn(viewer: Viewer) -> None:
    """A (the policies play the round): the token walks its waypoints 12 cells a turn while
    it attacks every turn, 18 once the GM clears it; its logged state records the act."""
    v = viewer
    key(v, pygame.K_c)
    key(v, pygame.K_2)
    key(v, pygame.K_a)
    key(v, pygame.K_a)
    assert moves(v.sim.events) == [12, 12]
    states = [e["state"] for e in v.sim.events if e["type"] == "state" and e["token"] == "a"]
    assert states and all(s["counters"].get("act_attack") == 1 for s in states)
    key(v, pygame.K_0)
    key(v, pygame.K_a)
    assert moves(v.sim.events) == [12, 12, 18]
    assert v.sim.tokens["a"].state.cell == (42, 1)


def test_a_refused_act_is_the_panels_message(viewer: Viewer) -> None:
    """Refusals, each the system's one line, and nothing changes (no event, no undo point):
    a pace the acts leave no room for (b sprints: "a sprint is 3 Move actions"), more acts
    than the turn's 3 actions, a number beyond the system's acts."""
    v = viewer
    n_events, n_undo = len(v.sim.events), len(v.undo)
    v.select("b")
    key(v, pygame.K_c)
    key(v, pygame.K_2)
    assert v.message.startswith("act attack: its pace 'sprint' leaves no room for them")
    assert "the fastest they leave: run" in v.message and shown(v, v.message)
    assert v.sim.specs["b"].acts == () and len(v.sim.events) == n_events
    assert len(v.undo) == n_undo
    v.select("a")
    for _ in range(3):
        key(v, pygame.K_1)
    assert v.sim.specs["a"].acts == ("action",) * 3 and reach(v) == 0  # no Move action left
    key(v, pygame.K_2)
    assert v.message == (
        "act action, action, action, attack: these take 4 actions; a whisperspace turn has 3"
    )
    assert v.sim.specs["a"].acts == ("action",) * 3
    key(v, pygame.K_7)
    assert v.message == "whisperspace has 3 acts: 1-3"
    key(v, pygame.K_ESCAPE)  # closes the chooser, not the window
    assert v.running and not v.table.acts.open


def test_help_and_viewer_doc_name_the_acts_key(viewer: Viewer) -> None:
    from engine.viewer.app import HELP

    assert ("C, then 1-9 / 0", "acts: the selected token takes one more each turn / none") in HELP
    key(viewer, pygame.K_h)
    assert viewer.show_help and viewer.screen.get_rect().contains(viewer.help_rect)
    doc = (ROOT / "docs" / "viewer.md").read_text(encoding="utf-8")
    assert "| `C`, then `1`-`9` / `0` | acts for the selected token" in doc


def test_a_system_without_acts_says_so(tmp_path: Path) -> None:
    """RULES.md 5: "Speed in map units per turn ... This is the system for a table that
    plays something else": the generic turn has no actions besides its move, and C says so
    and opens nothing."""
    path = tmp_path / "generic.yaml"
    path.write_text(
        f"map: {ROOT / 'maps' / 'hex_pointy.tmx'}\nsystem: generic\n"
        "tokens:\n  - {id: hawk, cell: [24, 4], stats: {speed: 30, fly: true}}\n",
        encoding="utf-8",
    )
    v = Viewer(open_source(str(path)), size=(900, 600))
    try:
        key(v, pygame.K_c)
        assert not v.table.acts.open
        assert v.message == "generic declares no actions besides moving (its turn is its move)"
    finally:
        pygame.quit()


def test_a_momentum_fliers_turn_takes_no_acts() -> None:
    """RULES.md 6: "Each turn, in order: (1) choose actions: take off / land 1; maintain 1;
    accelerate n ...": a momentum flier's turn is its flight's actions (a scenario's flier
    with acts is refused alike): the griffon's act is the panel's message; nothing changes."""
    v = Viewer(open_source(str(ROOT / "scenarios" / "griffon.yaml")), size=(900, 600))
    try:
        n_events = len(v.sim.events)
        v.select("griffon")
        key(v, pygame.K_c)
        key(v, pygame.K_2)
        assert v.message == (
            "act attack: a momentum flier's turn is its flight's actions (docs/flight.md)"
        )
        assert v.sim.specs["griffon"].acts == () and len(v.sim.events) == n_events
    finally:
        pygame.quit()


def test_a_saved_session_and_a_replayed_log_keep_the_acts(
    viewer: Viewer, scenario: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The acts are the token's spec and its logged state: a session saved and reopened
    takes them on (12 cells), and so does the log replayed, from the round of the edit."""
    v = viewer
    key(v, pygame.K_a)  # round 1 without acts: 18 cells
    key(v, pygame.K_c)
    key(v, pygame.K_2)
    key(v, pygame.K_a)  # round 2 attacking: 12
    assert moves(v.sim.events) == [18, 12]
    path = str(tmp_path / "game.tacgrid")
    assert v.table.save(path) == path
    w = open_table(path, size=(900, 600))
    assert w.sim.specs["a"].acts == ("attack",) and w.sim.events == v.sim.events
    w.select("a")
    assert w.sim.tokens["a"].state.cell == (30, 1) and reach(w) == 12
    w.do_undo()  # round 2's A
    assert w.sim.tokens["a"].state.cell == (18, 1) and reach(w) == 12
    w.do_undo()  # the act
    assert w.sim.specs["a"].acts == () and reach(w) == 18
    log = str(tmp_path / "game.jsonl")
    v.sim.write_log(log)
    states, _ = replay_states(v.sim.events)
    assert dict(states["a"].counters)["act_attack"] == 1
    r = ReplayViewer(log, size=(900, 600))
    try:
        assert r.sim.specs["a"].acts == ("attack",)
        r.position = 1  # round 1, before the GM's edit
        r._apply()
        assert r.sim.specs["a"].acts == ()
        r.position = 2  # round 2 played: the edit, then a move of 12
        r._apply()
        r.select("a")
        r.step()
        assert r.sim.tokens["a"].state.cell == (30, 1)
        assert r.sim.specs["a"].acts == ("attack",) and reach(r) == 12
        assert "acts each turn: attack" in panel(r)
    finally:
        pygame.quit()
    assert main(["replay", log, "--text"]) == 0
    text = capsys.readouterr().out.splitlines()
    assert "  turn 2: a also takes attack each turn" in text, text
    assert load_scenario(scenario).token_spec("a").acts == ()  # the file is not edited
