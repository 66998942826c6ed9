"""The enemy-threat view (K, as Wesnoth's "show enemy moves"): posted key events turn it
on and off; its cells are what each token of another side reaches this turn, exactly as
that token's own reach says; they are drawn hatched, with an entry in the legend."""

from __future__ import annotations

import numpy as np
import pygame
import pytest
from conftest import ROOT

from engine.viewer.app import Viewer, open_source
from engine.viewer.threat import THREAT

CHASE = str(ROOT / "scenarios" / "chase.yaml")


@pytest.fixture
def viewer():
    v = Viewer(open_source(CHASE), size=(1280, 800))
    yield v
    pygame.quit()


def press(v: Viewer, key: int) -> None:
    pygame.event.post(pygame.event.Event(pygame.KEYDOWN, key=key, mod=0, unicode=""))
    v.step()


def this_turn(v: Viewer, tid: str) -> set[tuple[int, int]]:
    rep = v.reach_of(tid).answer
    return {c for c, _, band in rep.cells if not band.startswith("turn")}


def test_k_shows_what_the_other_side_reaches_this_turn(viewer: Viewer) -> None:
    v = viewer
    v.select("quarry")
    v.step()
    assert v.table.threat.cells(v) == {}
    press(v, pygame.K_k)
    threat = v.table.threat.cells(v)
    # the pursuers' own reaches this turn (each token's reach as its selection shows it)
    want: dict[tuple[int, int], set[str]] = {}
    for tid in ("pursuer1", "pursuer2"):
        for cell in this_turn(v, tid) | {v.sim.tokens[tid].state.cell}:
            want.setdefault(cell, set()).add(tid)
    v.select("quarry")
    assert {c: set(ts) for c, ts in threat.items()} == want
    assert not any("quarry" in ts for ts in threat.values())
    v.step()
    legend = [t for kind, _, t in v.legend() if kind == "threat"]
    assert legend == ["threat: cells 2 opposing tokens reach this turn (K)"]
    vw = v.view_size[0]
    shot = pygame.surfarray.array3d(v.screen)
    assert THREAT in {tuple(c) for c in shot[vw:].reshape(-1, 3).tolist()}  # the swatch
    # a threatened cell far from the tokens shows the hatching's red
    cell = max(threat, key=lambda c: abs(c[0] - 7) + abs(c[1] - 18))
    x, y = (round(t) for t in v.cell_screen(cell))
    patch = shot[x - 6 : x + 7, y - 6 : y + 7].reshape(-1, 3).astype(np.int64)
    redness = patch[:, 0] - (patch[:, 1] + patch[:, 2]) / 2
    assert redness.max() > 100
    # the pursuers' side sees the quarry's reach instead
    v.select("pursuer1")
    assert set(v.table.threat.cells(v)) == this_turn(v, "quarry") | {
        v.sim.tokens["quarry"].state.cell
    }
    press(v, pygame.K_k)
    assert v.table.threat.cells(v) == {} and not any(k == "threat" for k, _, _ in v.legend())
