"""What the viewer draws: map objects, the overlay and its legend, tokens, the panel.

The window runs under SDL's dummy driver (tests/conftest.py); events are posted and the
assertions look at the viewer's state and at the pixels on its screen.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pygame
import pytest
from conftest import ROOT

from engine.viewer import draw
from engine.viewer.app import PANEL_W, Viewer, open_source
from engine.viewer.replay import ReplayViewer

CHASE = str(ROOT / "scenarios" / "chase.yaml")
HEX_HUNT = str(ROOT / "scenarios" / "hex_hunt.yaml")


@pytest.fixture
def viewer():
    v = Viewer(open_source(CHASE), size=(1100, 700))
    yield v
    pygame.quit()


def post(kind: int, **kw) -> None:
    pygame.event.post(pygame.event.Event(kind, **kw))


def key(v: Viewer, k: int) -> None:
    post(pygame.KEYDOWN, key=k, mod=0)
    v.step()


def rgb(v: Viewer, x: float, y: float) -> tuple[int, int, int]:
    c = v.screen.get_at((round(x), round(y)))
    return (c.r, c.g, c.b)


def at_zoom_1(v: Viewer, x: float = 0.0, y: float = 0.0) -> None:
    v.camera.zoom, v.camera.x, v.camera.y = 1.0, x, y


# --------------------------------------------------------------------------- map objects


def test_map_objects_are_drawn_and_o_hides_them(viewer: Viewer) -> None:
    v = viewer
    v.select(None)
    at_zoom_1(v, 300.0, 560.0)
    v.step()
    # chase.tmx's "mud" region: a rectangle at (320, 608), 224x160 map pixels; Tiled draws
    # its outline in grey #a0a0a4 on the two pixel columns left of and on its edge.
    edge = v.camera.to_screen(319.5, 700.5)
    inside = v.camera.to_screen(400.5, 700.5)
    assert rgb(v, *edge) == (160, 160, 164)
    tinted = rgb(v, *inside)
    assert v.map_surface.objects
    key(v, pygame.K_o)
    assert not v.map_surface.objects and "hidden" in v.message
    assert rgb(v, *edge) != (160, 160, 164)
    plain = rgb(v, *inside)
    # The fill is a light tint (alpha 50 of 255): the terrain shows through.
    assert tinted != plain and max(abs(a - b) for a, b in zip(tinted, plain, strict=True)) < 40
    key(v, pygame.K_o)
    assert v.map_surface.objects and rgb(v, *edge) == (160, 160, 164)


def test_help_and_viewer_doc_name_the_objects_key(viewer: Viewer) -> None:
    from engine.viewer.app import HELP

    assert any(k == "O" and "objects" in text for k, text in HELP)
    key(viewer, pygame.K_h)
    assert viewer.show_help and viewer.screen.get_rect().contains(viewer.help_rect)
    doc = (ROOT / "docs" / "viewer.md").read_text(encoding="utf-8")
    assert "| `O` |" in doc and "legend" in doc.lower()


# --------------------------------------------------------------------------- overlay, legend


def test_overlay_tints_the_terrain_and_outlines_the_bands(viewer: Viewer) -> None:
    v = viewer
    at_zoom_1(v, 0.0, 400.0)
    quarry = v.sim.tokens["quarry"].state.cell
    v.select("quarry")
    cell = (quarry[0] + 2, quarry[1] + 2)
    x, y = v.cell_screen(cell)
    v.step()
    shown = rgb(v, x, y)
    v.select(None)
    v.step()
    plain = rgb(v, x, y)
    diff = max(abs(a - b) for a, b in zip(shown, plain, strict=True))
    # tinted so a GM sees it at a glance (issue 40: a faint tint of about 10 levels was
    # invisible), not painted over: the terrain keeps more than half its weight
    assert 30 <= diff <= 120, (shown, plain)
    # Each band's outer edge is an outline in the band's colour (where the outlines of
    # several bands and contours coincide, along walls, the last drawn shows).
    v.select("quarry")
    v.fit()
    v.step()
    overlay = v._overlay_shapes()
    assert overlay is not None
    bands = v.reach_of("quarry").answer.bands
    edge_colours = {colour[:3] for _, _, colour in overlay.lines}
    for i in range(len(bands)):
        assert draw.BAND_COLOURS[min(i, 3)] in edge_colours, bands[i]
    vw, vh = v.view_size
    view = pygame.surfarray.array3d(v.screen)[:vw, :vh].reshape(-1, 3).tolist()
    assert list(draw.BAND_COLOURS[0]) in view and list(draw.BAND_COLOURS[1]) in view


def test_the_panel_has_a_legend_for_every_overlay(viewer: Viewer) -> None:
    v = viewer
    v.select("pursuer1")
    v.step()
    legend = v.legend()
    texts = [t for _, _, t in legend]
    bands = v.reach_of("pursuer1").answer.bands
    assert list(bands) == list(v.sim.system.paces)
    for band in bands:
        assert any(t.startswith(f"{band}:") for t in texts)
    assert any("2-turn" in t for t in texts) and any("3-turn" in t for t in texts)
    assert any(kind == "ring" for kind, _, _ in legend)  # turn rings on the hover path
    assert any(t == "legend" for t, _ in v.panel_text)
    # The swatches are drawn: every band colour appears in the panel.
    vw = v.view_size[0]
    panel = pygame.surfarray.array3d(v.screen)[vw:]
    colours = {tuple(c) for c in panel.reshape(-1, 3).tolist()}
    for i in range(len(bands)):
        assert draw.BAND_COLOURS[min(i, 3)] in colours
    for colour in draw.CONTOUR_COLOURS.values():
        assert colour in colours
    # No selection, no overlay: no legend.
    v.select(None)
    v.step()
    assert v.legend() == [] and not any(t == "legend" for t, _ in v.panel_text)


# --------------------------------------------------------------------------- tokens


def test_short_labels_are_unique() -> None:
    assert draw.short_labels(["pursuer1", "pursuer2", "quarry"]) == {
        "pursuer1": "p1",
        "pursuer2": "p2",
        "quarry": "q",
    }
    hunt = draw.short_labels(["beast", "hero1", "hero2", "hero3"])
    assert hunt == {"beast": "b", "hero1": "h1", "hero2": "h2", "hero3": "h3"}
    odd = ["guard", "goblin", "gob", "gob_1", "Gob-1", "x" * 30, "x" * 31]
    labels = draw.short_labels(odd)
    assert len(set(labels.values())) == len(odd)
    assert all(1 <= len(lab) <= draw.LABEL_MAX + 1 for lab in labels.values())


def test_tokens_are_labelled_uniquely_and_named_on_hover() -> None:
    v = Viewer(open_source(HEX_HUNT), size=(1100, 700))
    try:
        v.step()
        assert sorted(v.token_labels.values()) == ["b", "h1", "h2", "h3"]
        hero = v.sim.tokens["hero2"].state.cell
        post(pygame.MOUSEMOTION, pos=v.cell_screen(hero), rel=(0, 0), buttons=(0, 0, 0))
        v.step()
        assert v.hover == hero and "hero2" in v.tooltip
    finally:
        pygame.quit()


def test_stacked_tokens_fan_out_and_the_ring_leaves_the_label(viewer: Viewer) -> None:
    v = viewer
    at_zoom_1(v, 0.0, 400.0)
    cell = v.sim.tokens["pursuer1"].state.cell
    v.sim.tokens["pursuer2"] = v.sim.tokens["pursuer2"].moved(cell=cell)
    v.sim.tokens["quarry"] = v.sim.tokens["quarry"].moved(cell=cell)
    v.select("pursuer1")
    v.facing["pursuer1"] = 90  # facing east
    v.step()
    pos = {t: v.token_screen[t] for t in ("pursuer1", "pursuer2", "quarry")}
    pts = [(x, y) for x, y, _ in pos.values()]
    assert len(set(pts)) == 3
    discs = list(pos.values())
    for i in range(3):
        for j in range(i + 1, 3):
            (xa, ya, ra), (xb, yb, rb) = discs[i], discs[j]
            assert float(np.hypot(xa - xb, ya - yb)) >= ra + rb  # no disc covers another
    # Each token's own colour shows around its label: no other token covers it.
    for tid, (x, y, r) in pos.items():
        side = {"pursuer": [214, 64, 58], "quarry": [60, 130, 230]}[v.sim.specs[tid].side]
        box = pygame.Rect(round(x - r), round(y - r), 2 * r, 2 * r)
        px = pygame.surfarray.array3d(v.screen.subsurface(box)).reshape(-1, 3).tolist()
        assert px.count(side) >= 0.1 * len(px), tid
        assert r >= 10  # big enough for its label
    # The selection ring lies outside the disc; the label inside stays white-on-colour.
    x, y, r = pos["pursuer1"]
    assert rgb(v, x, y + r + 2) == (255, 255, 255)
    box = pygame.Rect(round(x - r / 2), round(y - r / 2), round(r), round(r))
    label = pygame.surfarray.array3d(v.screen.subsurface(box)).reshape(-1, 3).tolist()
    assert [255, 255, 255] in label
    # Facing east: the arrow head beyond the ring, right of the token.
    assert rgb(v, x + r + 6 + 4, y) == (255, 255, 255)


# --------------------------------------------------------------------------- panel


def test_panel_text_stays_within_the_panel(viewer: Viewer) -> None:
    v = viewer
    words = [f"word{i:02d}" for i in range(40)]
    v.message = "saved " + " ".join(words) + " /a/very/long/path/" + "x" * 80 + ".tacgrid"
    v.select("pursuer1")
    v.step()
    assert v.panel_text
    for text, rect in v.panel_text:
        assert rect.left >= 0 and rect.right <= PANEL_W - 8, (text, rect)
    shown = " ".join(t for t, _ in v.panel_text)
    assert all(w in shown for w in words)  # wrapped, not cut off


def test_wrap_breaks_at_spaces_and_cuts_long_words() -> None:
    pygame.font.init()
    font = pygame.font.Font(None, 16)
    lines = draw.wrap(font, "  " + "alpha beta gamma " * 10 + "z" * 200, 150)
    assert len(lines) > 3 and all(font.size(line)[0] <= 150 for line in lines)
    assert all(line.startswith("  ") for line in lines)
    assert "".join(line.strip() for line in lines).endswith("z" * 20)


def test_replay_fills_the_dice_log_from_the_log(tmp_path: Path) -> None:
    from engine.scenario import load_scenario
    from engine.sim import Simulation

    sim = Simulation(load_scenario(CHASE), 21)
    sim.run()
    rolls = [e for e in sim.events if e["type"] in ("roll", "check")]
    assert rolls, "the run rolled dice"
    log = tmp_path / "run.jsonl"
    sim.write_log(str(log))
    v = ReplayViewer(str(log), size=(1100, 700))
    try:
        v.step()
        assert v.sim.events == [] or len(v.sim.events) < len(rolls)
        texts = [t for t, _ in v.panel_text]
        at = texts.index("dice log")
        logged = texts[at + 1 :]
        assert any(rolls[-1]["token"] in t for t in logged), logged
        for _, rect in v.panel_text:
            assert rect.right <= PANEL_W - 8
        post(pygame.KEYDOWN, key=pygame.K_HOME, mod=0)
        v.step()
        texts = [t for t, _ in v.panel_text]
        assert texts[texts.index("dice log") + 1 :] == ["H: help"]  # nothing rolled yet
    finally:
        pygame.quit()


def test_a_large_token_is_drawn_over_its_footprint(viewer: Viewer) -> None:
    """A 2x2 token: its four cells outlined in its side's colour, its disc at the centre of
    the block (the anchor's corner), wider than a one-cell token's."""
    from engine.scenario import TokenSpec

    v = viewer
    v.sim.add_token(
        TokenSpec(
            id="ogre", side="pursuer", stats={"move": 8}, cell=(20, 20), policy="idle", size=2
        )  # fmt: skip
    )
    v.select(None)
    at_zoom_1(v, 500.0, 500.0)
    v.step()
    red = (214, 64, 58)
    # the footprint's outer edge: the left side of cell (20, 21), and the right of (21, 21)
    assert rgb(v, *v.camera.to_screen(640, 21 * 32 + 16)) == red
    assert rgb(v, *v.camera.to_screen(22 * 32, 21 * 32 + 16)) == red
    # the disc at the block's centre (the corner 21 * 32, 21 * 32), reaching past one cell
    x, y, r = v.token_screen["ogre"]
    assert (x, y) == tuple(round(c) for c in v.camera.to_screen(21 * 32, 21 * 32))
    assert r > v.token_screen["quarry"][2] * 1.5


def _lab(rgb: np.ndarray) -> np.ndarray:
    """sRGB (0-255) to CIE L*a*b* (D65), for colour differences as a person sees them."""
    c = np.asarray(rgb, dtype=np.float64) / 255
    c = np.where(c > 0.04045, ((c + 0.055) / 1.055) ** 2.4, c / 12.92)
    m = np.array([[0.4124, 0.3576, 0.1805], [0.2126, 0.7152, 0.0722], [0.0193, 0.1192, 0.9505]])
    xyz = c @ m.T / np.array([0.95047, 1.0, 1.08883])
    f = np.where(xyz > 0.008856, np.cbrt(xyz), 7.787 * xyz + 16 / 116)
    return np.stack(
        [116 * f[..., 1] - 16, 500 * (f[..., 0] - f[..., 1]), 200 * (f[..., 1] - f[..., 2])], -1
    )


def _band_shifts(v: Viewer) -> dict[str, np.ndarray]:
    """Per band, how the tint moves each of its cells' centre pixel (L*a*b*, one row a cell)."""
    tid = v.selected
    assert tid is not None
    rep = v.reach_of(tid).answer
    v.hover = None
    v.step()
    tinted = pygame.surfarray.array3d(v.screen).copy()
    v.select(None)
    v.step()
    plain = pygame.surfarray.array3d(v.screen)
    out: dict[str, list[np.ndarray]] = {}
    for cell, _, band in rep.cells:
        if band in rep.bands and v.token_at(cell) is None:
            x, y = (round(t) for t in v.cell_screen(cell))
            out.setdefault(band, []).append(_lab(tinted[x, y]) - _lab(plain[x, y]))
    return {band: np.array(rows) for band, rows in out.items()}


@pytest.mark.parametrize(
    ("source", "token", "n_bands"),
    [(HEX_HUNT, None, 3), (str(ROOT / "maps" / "vtt_room.dd2vtt"), "speed=15", 1)],
)
def test_every_reach_band_is_seen_at_a_glance(source: str, token: str | None, n_bands: int) -> None:
    """On a shipped hex map and on the dark VTT room, each band's tint moves its cells'
    colour by a ΔE of 20 or more (it was about 7), and two bands' tints differ by as much
    (orange and red went the same brown)."""
    v = Viewer(open_source(source, token=token, window=True), size=(1280, 800))
    shifts = _band_shifts(v)
    pygame.quit()
    assert len(shifts) >= n_bands
    means = {band: rows.mean(0) for band, rows in shifts.items()}
    for band, rows in shifts.items():
        assert float(np.linalg.norm(rows, axis=1).mean()) >= 20, band
    names = sorted(means)
    for i, a in enumerate(names):
        for b in names[i + 1 :]:
            assert float(np.linalg.norm(means[a] - means[b])) >= 20, (a, b)


def test_the_four_band_tints_stay_apart_on_light_and_dark_ground() -> None:
    """Every band colour at the fill's alpha over grass, water, sand and a dark floor:
    each moves the ground by ΔE >= 20 and no two land within ΔE 20 of each other."""
    a = draw.BAND_FILL_ALPHA / 255
    for ground in [(112, 170, 84), (58, 120, 204), (176, 150, 110), (40, 38, 36)]:
        g = np.array(ground, dtype=np.float64)
        mixed = [_lab(g * (1 - a) + np.array(c) * a) for c in draw.BAND_COLOURS]
        for m in mixed:
            assert float(np.linalg.norm(m - _lab(g))) >= 20, ground
        for i, m in enumerate(mixed):
            for n in mixed[i + 1 :]:
                assert float(np.linalg.norm(m - n)) >= 20, ground


def test_the_panel_scrolls_to_the_turn_order_and_dice_log_at_1024x600() -> None:
    """Issue 40: the turn order and dice log fell off the panel; the wheel over the panel
    now brings every line into view (posted events), and the wheel over the map zooms."""
    v = Viewer(open_source(CHASE), size=(1024, 600))
    try:
        v.auto_round()
        v.auto_round()
        v.hover = (12, 18)  # a long hover path: its step list fills the panel
        v.step()
        assert v.panel_content > 600
        texts = [t for t, _ in v.panel_text]
        last = texts[-1]
        assert "dice log" in texts and last == "H: help"

        def shown() -> list[str]:
            return [t for t, r in v.panel_text if r.top >= 0 and r.bottom <= 600]

        assert last not in shown()
        zoom = v.camera.zoom
        post(pygame.MOUSEMOTION, pos=(v.view_size[0] + 100, 300), rel=(0, 0), buttons=(0, 0, 0))
        v.step()
        v.hover = (12, 18)
        for _ in range(10):
            post(pygame.MOUSEWHEEL, x=0, y=-1, flipped=False, precise_x=0.0, precise_y=-1.0)
            v.step()
        assert v.camera.zoom == zoom  # the panel scrolled, the map did not zoom
        assert {"dice log", "turn order (PgUp/PgDn, D delays)", last} <= set(shown())
        for _ in range(10):
            post(pygame.MOUSEWHEEL, x=0, y=1, flipped=False, precise_x=0.0, precise_y=1.0)
            v.step()
        assert v.panel_scroll == 0 and v.scenario.name in shown()
        post(pygame.MOUSEMOTION, pos=(200, 300), rel=(0, 0), buttons=(0, 0, 0))
        post(pygame.MOUSEWHEEL, x=0, y=1, flipped=False, precise_x=0.0, precise_y=1.0)
        v.step()
        assert v.camera.zoom > zoom
    finally:
        pygame.quit()


def test_spawns_are_marked_unlike_tokens_and_o_hides_them() -> None:
    """Issue 40: Tiled's grey pins at spawns looked like ghost tokens. The window draws a
    spawn as corner brackets in its cell where no token stands (none under a token), no
    pin; O hides them with the other objects."""
    from engine.viewer.render import render_map
    from engine.viewer.table import SPAWN

    v = Viewer(open_source(str(ROOT / "maps" / "encounter.tmx")), size=(1280, 800))
    try:
        at_zoom_1(v)
        spawn = next(s for s in v.model.spawns if s.id == "pc1")
        assert v.token_at(spawn.cell) == "pc1"
        v.select("pc1")
        v.step()
        g = v.model.grid
        corner = v.camera.to_screen(*g.cell_corners(spawn.cell)[0])
        cx, cy = v.cell_screen(spawn.cell)
        bracket = (corner[0] + (cx - corner[0]) * 0.18 + 1, corner[1] + (cy - corner[1]) * 0.18)

        def shows_bracket() -> bool:
            x, y = (round(t) for t in bracket)
            patch = pygame.surfarray.array3d(v.screen)[x - 1 : x + 3, y - 1 : y + 2]
            return SPAWN in {tuple(p) for p in patch.reshape(-1, 3).tolist()}

        assert not shows_bracket()  # a token stands there
        assert v.move_selected((spawn.cell[0] + 3, spawn.cell[1]))
        v.select(None)
        for _ in range(30):
            v.step()
        assert shows_bracket()
        # no Tiled pin: its disc 20 map pixels above the point is the map's own pixel
        plain = render_map(v.model, v.map_surface.tiled, objects=False, walls=False)
        px, py = cx, cy - 20  # the spawn is a point at its cell's centre
        assert rgb(v, px, py) == tuple(plain.get_at((round(px), round(py))))[:3]
        key(v, pygame.K_o)
        v.step()
        assert not shows_bracket()
    finally:
        pygame.quit()


def test_map_labels_never_cover_each_other_nor_a_token() -> None:
    """Issue 40: the turns label hid a goal's check odds, and the quickest and safest
    paths' words overlapped. Every label of a frame goes where no other label or token disc
    is; where a safest path differs, both ends are labelled and say which a click takes."""
    from engine.viewer.measure import risk_choice
    from engine.viewer.tokens import token_discs

    v = Viewer(open_source(CHASE), size=(1280, 800))
    try:
        tid = v.selected
        assert tid == "quarry"
        rep = v.reach_of(tid)
        start = v.sim.tokens[tid].state.cell
        # The first cell, by column then row, whose quickest and safest paths differ (below
        # the third band): found once by scanning them all, 800 path searches.
        goal = (23, 21)
        bands = {cell: band for cell, _, band in rep.answer.cells}
        assert bands[goal] != "turn3"
        assert risk_choice(rep.graph, start, goal, 0.99) is not None
        key(v, pygame.K_PERIOD)  # prefer the safest path below p = 0.05 ...
        v.table.safe_below = 0.99  # ... and up to 0.99, as repeated presses would
        post(pygame.MOUSEMOTION, pos=v.cell_screen(goal), rel=(0, 0), buttons=(0, 0, 0))
        for _ in range(12):
            v.step()
        assert v.hover == goal
        texts = [t for t, _ in v.labels.placed]
        assert any(t.startswith("quickest ") for t in texts), texts
        assert any(t.startswith("safest ") and t.endswith("(click)") for t in texts), texts
        assert any(t.endswith("%") for t in texts)  # a check's odds on the way
        rects = [r for _, r in v.labels.placed]
        for i, a in enumerate(rects):
            assert a.collidelist(rects[i + 1 :]) < 0, texts
            assert a.collidelist(token_discs(v)) < 0
            assert v.screen.get_rect().contains(a)
        assert any("a click takes it" in t for t, _ in v.panel_text)
    finally:
        pygame.quit()
