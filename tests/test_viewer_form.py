"""The token form with the mouse and the keyboard (posted events): size, pace, a free side
name, a rename, errors in the form's own words."""

from __future__ import annotations

import pygame
import pytest
from conftest import ROOT

from engine.viewer.app import Viewer, open_source
from engine.viewer.table import FORM_APPLY, FORM_CANCEL

CHASE = str(ROOT / "scenarios" / "chase.yaml")


@pytest.fixture
def viewer():
    v = Viewer(open_source(CHASE), size=(1280, 800))
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


def click_line(v: Viewer, start: str, side: str = "middle") -> None:
    """Click the panel line that starts with ``start`` (its left or right part)."""
    rect = next(r for t, r in v.panel_text if t.startswith(start) or t[2:].startswith(start))
    x = {"left": rect.left + 4, "right": rect.right - 4, "middle": rect.centerx}[side]
    pos = (v.view_size[0] + x, rect.centery)
    post(pygame.MOUSEBUTTONDOWN, pos=pos, button=1, mod=0)
    post(pygame.MOUSEBUTTONUP, pos=pos, button=1, mod=0)
    v.step()


def clear(v: Viewer) -> None:
    for _ in range(30):
        post(pygame.KEYDOWN, key=pygame.K_BACKSPACE, mod=0, unicode="")
    v.step()


def free_cell(v: Viewer) -> tuple[int, int]:
    q = v.sim.tokens["quarry"].state.cell
    for dc in range(3, 9):
        for dr in range(0, 3):
            c = (q[0] + dc, q[1] + dr)
            cells = [(c[0] + i, c[1] + j) for i in (0, 1) for j in (0, 1)]
            if all(v.token_at(x) is None and v.model.terrain_at(x).move == "walk" for x in cells):
                return c
    raise AssertionError("no free 2x2 spot")


def test_a_new_token_with_size_pace_and_a_side_of_its_own_by_mouse(viewer: Viewer) -> None:
    v = viewer
    cell = free_cell(v)
    post(pygame.MOUSEMOTION, pos=v.cell_screen(cell), rel=(0, 0), buttons=(0, 0, 0))
    v.step()
    key(v, pygame.K_n)
    form = v.table.form
    assert form is not None
    click_line(v, "side:")  # picks the field
    clear(v)
    typed(v, "goblins")  # a side of its own
    click_line(v, "size:")
    clear(v)
    typed(v, "2")
    click_line(v, "pace:")
    click_line(v, "pace:", "right")  # a second click on a choice steps it on
    click_line(v, "pace:", "right")
    assert form.value("pace") == v.sim.system.paces[1]
    click_line(v, "pace:", "left")
    assert form.value("pace") == v.sim.system.paces[0]
    assert {FORM_APPLY, FORM_CANCEL} <= {t for t, _ in v.panel_text}
    click_line(v, FORM_APPLY)
    assert v.table.form is None, form.error
    tid = v.selected
    spec = v.sim.specs[tid]
    assert (spec.side, spec.size, spec.pace) == ("goblins", 2, v.sim.system.paces[0])
    assert v.sim.tokens[tid].state.cell == cell
    assert v.sim.events[-1]["type"] == "token_add"


def test_errors_name_the_field_in_the_forms_words(viewer: Viewer) -> None:
    v = viewer
    v.select("pursuer1")
    key(v, pygame.K_e)
    form = v.table.form
    assert form is not None
    click_line(v, "move:")
    clear(v)
    typed(v, "fast")
    n = len(v.sim.events)
    key(v, pygame.K_RETURN)
    assert v.table.form is form and len(v.sim.events) == n
    assert form.error.startswith("field move"), form.error
    assert "--token" not in form.error and "token " not in form.error
    click_line(v, "move:")
    clear(v)
    typed(v, "12")
    click_line(v, "size:")
    clear(v)
    typed(v, "0")
    key(v, pygame.K_RETURN)
    assert form.error.startswith("size '0'"), form.error
    click_line(v, FORM_CANCEL)
    assert v.table.form is None and len(v.sim.events) == n


def test_rename_keeps_the_place_in_the_turn_order_and_undoes(viewer: Viewer) -> None:
    v = viewer
    v.select("pursuer1")
    order = list(v.sim.order)
    cell = v.sim.tokens["pursuer1"].state.cell
    stats = dict(v.sim.tokens["pursuer1"].stats)
    key(v, pygame.K_e)
    click_line(v, "id:")
    clear(v)
    typed(v, "hound")
    key(v, pygame.K_RETURN)
    assert v.table.form is None
    assert v.sim.order == [("hound" if t == "pursuer1" else t) for t in order]
    assert v.sim.tokens["hound"].state.cell == cell and dict(v.sim.tokens["hound"].stats) == stats
    assert v.selected == "hound" and v.message == "renamed pursuer1 to hound"
    assert v.sim.specs["hound"].side == "pursuer"
    key(v, pygame.K_z, pygame.KMOD_CTRL)  # one undo step brings the old name back
    assert v.sim.order == order and "hound" not in v.sim.tokens
    # a taken name is refused, nothing changes
    v.select("pursuer1")
    key(v, pygame.K_e)
    click_line(v, "id:")
    clear(v)
    typed(v, "quarry")
    n = len(v.sim.events)
    key(v, pygame.K_RETURN)
    assert v.table.form is not None and "taken" in v.table.form.error
    assert len(v.sim.events) == n and v.sim.order == order


def test_a_pace_edit_is_the_loops_token_pace_in_one_undo_step(viewer: Viewer) -> None:
    v = viewer
    v.select("pursuer1")
    paces = list(v.sim.system.paces)
    key(v, pygame.K_e)
    click_line(v, "pace:")
    click_line(v, "pace:", "left")  # one pace back: a pace of the system's, not the default
    form = v.table.form
    assert form is not None
    want = form.value("pace")
    assert want in paces and want != v.sim.pace_of("pursuer1")
    n = len(v.sim.events)
    key(v, pygame.K_RETURN)
    assert v.table.form is None and v.sim.specs["pursuer1"].pace == want
    assert [e["type"] for e in v.sim.events[n:]] == ["token_edit", "token_pace"]
    assert v.sim.pace_of("pursuer1") == want
    key(v, pygame.K_z, pygame.KMOD_CTRL)
    assert len(v.sim.events) == n and v.sim.specs["pursuer1"].pace != want


def test_backspace_outside_a_form_removes_nothing(viewer: Viewer) -> None:
    """TABLE-NOTES: Backspace with no form open removed the selected token (the help says
    Delete); now only Delete does."""
    v = viewer
    v.select("pursuer1")
    key(v, pygame.K_BACKSPACE)
    assert "pursuer1" in v.sim.tokens
    key(v, pygame.K_DELETE)
    assert "pursuer1" not in v.sim.tokens
