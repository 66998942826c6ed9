"""Routes and paces at the table (issue 40), under SDL's dummy driver with posted events:

* a measuring drag drops waypoints (Space, a right click) as Drag Ruler does; the route
  through them is priced as one plan as the mouse moves, and Space walks the selected token
  along it through the turn loop's walk (its checks rolled as in play);
* one pace per token: V steps it (an undoable ``token_pace`` event, saved with the session);
  its reach, hover path, click and turns all move at it, and the panel names it.

Generic speed 30 on 5-ft cells: 6 cells a turn at walk, 12 at dash.
"""

from __future__ import annotations

from pathlib import Path

import pygame
import pytest
import tmxtext

from engine.search import PathAnswer, evaluate_path
from engine.viewer.app import Viewer, open_source
from engine.viewer.launch import open_table

SCENARIO = """name: routes
map: map.tmx
system: generic
seed: 3
turns: 5
tokens:
  - id: a
    side: pursuer
    policy: idle
    cell: [2, 2]
    stats: {speed: 30}
  - id: b
    side: quarry
    policy: idle
    cell: [38, 8]
    stats: {speed: 30}
"""

ROWS = ["." * 40] * 4 + ["." * 10 + "#" * 3 + "." * 27] + ["." * 40] * 5


@pytest.fixture
def viewer(tmp_path: Path):
    tmxtext.write(tmp_path / "map.tmx", ROWS, properties={"diagonals": "alternate"})
    (tmp_path / "s.yaml").write_text(SCENARIO, encoding="utf-8")
    v = Viewer(open_source(str(tmp_path / "s.yaml")), size=(1100, 700))
    v.select("a")
    v.step()
    yield v
    pygame.quit()


def post(kind: int, **kw: object) -> None:
    pygame.event.post(pygame.event.Event(kind, **kw))


def key(v: Viewer, k: int, mod: int = 0) -> None:
    post(pygame.KEYDOWN, key=k, mod=mod, unicode="")
    v.step()


def move(v: Viewer, cell: tuple[int, int], buttons: tuple[int, int, int] = (1, 0, 0)) -> None:
    post(pygame.MOUSEMOTION, pos=v.cell_screen(cell), rel=(0, 0), buttons=buttons)
    v.step()


def reach_row(v: Viewer, tid: str = "a") -> int:
    """How far along its row the token's reach overlay says it gets this turn."""
    tree = v.reach_of(tid).answer.tree
    c, r = v.sim.tokens[tid].state.cell
    got = 0
    for d in range(1, 30):
        t = tree.turns((c + d, r))
        if t is None or t > 1:
            break
        got = d
    return got


def panel(v: Viewer) -> str:
    from engine.viewer import panel as panel_mod

    lines = [t for t, _ in v.table.panel_lines()]
    tok, spec = v.sim.tokens["a"], v.sim.specs["a"]
    return "\n".join(lines) + "\npace " + panel_mod._pace(v, tok, spec)


def test_waypoint_drag_prices_one_route_and_walks_it(viewer: Viewer) -> None:
    v = viewer
    start = v.sim.tokens["a"].state.cell
    w1, w2, goal = (5, 1), (8, 6), (6, 8)
    key(v, pygame.K_m)
    post(pygame.MOUSEBUTTONDOWN, pos=v.cell_screen(start), button=1, mod=0)
    move(v, w1)
    key(v, pygame.K_SPACE)  # a waypoint where the mouse is
    move(v, w2)
    post(pygame.MOUSEBUTTONDOWN, pos=v.cell_screen(w2), button=3)  # a right click: another
    v.step()
    move(v, (9, 9))
    live = v.table.measured
    assert isinstance(live, PathAnswer) and live.cells[-1] == (9, 9)  # priced as it moves
    move(v, goal)
    post(pygame.MOUSEBUTTONUP, pos=v.cell_screen(goal), button=1)
    v.step()
    m = v.table.measured
    assert isinstance(m, PathAnswer) and v.table.waypoints == [w1, w2]
    assert [(g.start, g.goal) for g in m.legs] == [(start, w1), (w1, w2), (w2, goal)]
    assert m.cells[m.legs[0].step] == w1 and m.cells[m.legs[1].step] == w2
    # One plan: the joined cells priced whole (the diagonal count carried across legs).
    graph = v.reach_of("a").graph
    assert m.turns == evaluate_path(graph, list(m.cells)).turns
    text = panel(v)
    assert "leg 1 to 5,1" in text and "leg 3 to 6,8" in text and "Space: walk it" in text
    # Space: the token walks it, as far as this turn takes it, and says where it stopped.
    n = len(v.sim.events)
    key(v, pygame.K_SPACE)
    moves = [e for e in v.sim.events[n:] if e["type"] == "move" and e["token"] == "a"]
    assert moves, "the route was walked through the turn loop"
    walked = [tuple(c) for c in moves[0]["path"]]
    assert walked == list(m.cells[: len(walked)]) and len(walked) < len(m.cells)
    end = v.sim.tokens["a"].state.cell
    assert end == walked[-1] and v.message == f"a stops at {end[0]},{end[1]}: the turn is spent"
    # The rest of the route stays measured from where it stopped, the waypoints not yet
    # passed kept: after the round, Space walks on along it.
    rest = v.table.measured
    assert isinstance(rest, PathAnswer) and rest.cells[0] == end and rest.cells[-1] == goal
    passed = len(walked) - 1
    assert v.table.waypoints == [g.goal for g in m.legs[:-1] if g.step > passed]
    key(v, pygame.K_RETURN)  # the round ends
    n = len(v.sim.events)
    key(v, pygame.K_SPACE)
    moves = [e for e in v.sim.events[n:] if e["type"] == "move" and e["token"] == "a"]
    assert moves and [tuple(c) for c in moves[0]["path"]] == list(
        rest.cells[: len(moves[0]["path"])]
    )
    key(v, pygame.K_z, pygame.KMOD_CTRL)
    key(v, pygame.K_z, pygame.KMOD_CTRL)
    key(v, pygame.K_z, pygame.KMOD_CTRL)
    assert v.sim.tokens["a"].state.cell == start


def test_backspace_takes_the_last_waypoint_back(viewer: Viewer) -> None:
    v = viewer
    post(pygame.MOUSEBUTTONDOWN, pos=v.cell_screen((2, 4)), button=1, mod=pygame.KMOD_SHIFT)
    move(v, (4, 0))
    key(v, pygame.K_SPACE)
    move(v, (7, 7))
    key(v, pygame.K_SPACE)
    key(v, pygame.K_BACKSPACE)
    assert v.table.waypoints == [(4, 0)] and "a" in v.sim.tokens  # not removed
    post(pygame.MOUSEBUTTONUP, pos=v.cell_screen((7, 7)), button=1, mod=pygame.KMOD_SHIFT)
    v.step()
    m = v.table.measured
    assert isinstance(m, PathAnswer) and [g.goal for g in m.legs] == [(4, 0), (7, 7)]


def test_one_pace_per_token(viewer: Viewer, tmp_path: Path) -> None:
    v = viewer
    assert v.sim.pace_of("a") == "walk" and reach_row(v) == 6
    assert "pace walk (V)" in panel(v)
    # The hover plans at the pace a click moves at.
    v.hover = (8, 2)
    hp = v.hover_path()
    assert hp is not None and hp.pace == "walk" and float(hp.turns) == 1.0
    key(v, pygame.K_v)
    assert v.sim.specs["a"].pace == "dash" and v.sim.pace_of("a") == "dash"
    assert v.sim.events[-1] == {"type": "token_pace", "token": "a", "pace": "dash"}
    assert reach_row(v) == 12 and "pace dash (V)" in panel(v) and "dash" in v.message
    v.hover = (14, 2)
    hp = v.hover_path()
    assert hp is not None and hp.pace == "dash" and float(hp.turns) == 1.0
    # A click 12 cells on goes there this turn, at dash (the turn loop's pace).
    assert v.move_selected((14, 2)) and v.sim.tokens["a"].state.cell == (14, 2)
    # Saved with the session and reopened.
    path = str(tmp_path / "game.tacgrid")
    v.table.save(path)
    w = open_table(path, size=(1100, 700))
    assert w.sim.specs["a"].pace == "dash" and w.sim.events == v.sim.events
    # Undone like a move: back to walk.
    key(v, pygame.K_z, pygame.KMOD_CTRL)
    key(v, pygame.K_z, pygame.KMOD_CTRL)
    assert v.sim.specs["a"].pace is None and v.sim.pace_of("a") == "walk" and reach_row(v) == 6
    key(v, pygame.K_v)
    key(v, pygame.K_v)  # generic's paces: walk, dash, and round again
    assert v.sim.pace_of("a") == "walk"


def test_a_pace_the_acts_leave_no_room_for_is_skipped(tmp_path: Path) -> None:
    """Whisperspace: one act leaves two Move actions, so sprint (three) is refused and V
    goes on to the next pace it leaves."""
    tmxtext.write(tmp_path / "map.tmx", ["." * 30] * 5)
    (tmp_path / "s.yaml").write_text(
        "name: acts\nmap: map.tmx\nsystem: whisperspace\nturns: 3\ntokens:\n"
        "  - {id: a, side: pursuer, policy: idle, pace: walk, cell: [1, 1], "
        "stats: {speed: 30}, acts: [attack]}\n",
        encoding="utf-8",
    )
    v = Viewer(open_source(str(tmp_path / "s.yaml")), size=(1100, 700))
    try:
        v.select("a")
        v.step()
        assert v.sim.pace_of("a") == "walk"
        key(v, pygame.K_v)
        assert v.sim.pace_of("a") == "run"
        key(v, pygame.K_v)  # sprint: no room beside the attack; walk again
        assert v.sim.pace_of("a") == "walk"
    finally:
        pygame.quit()


def test_a_pace_change_reads_in_the_replay(viewer: Viewer, tmp_path: Path) -> None:
    from engine.report.replay import format_replay
    from engine.viewer.replay import ReplayViewer

    v = viewer
    key(v, pygame.K_v)
    assert "GM sets a's pace to dash" in format_replay(v.sim.events)
    # The viewer's replay rebuilds the spec's pace from the log.
    log = tmp_path / "log.jsonl"
    v.sim.write_log(str(log))
    r = ReplayViewer(str(log), str(tmp_path / "s.yaml"), size=(900, 600))
    assert r.sim.specs["a"].pace == "dash"
