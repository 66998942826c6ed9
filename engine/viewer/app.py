"""The GM viewer: the map, tokens, reach in speed bands, path preview, moves, undo, dice log.

Over 800 lines: the window's event loop and drawing; the GM tools, drawing helpers, map
objects and sessions are already their own modules (table, tokens_edit, measure, draw,
mapobjects, session); the panel is the next split.

Mouse: left click selects a token, or moves the selected one to a reachable cell (its
checks are rolled on the way, into the dice log); right or middle drag pans; the wheel
zooms about the cursor. Keys are listed by the help overlay (H).

The window runs the same :class:`~engine.sim.Simulation` as headless batches, with every
token under the GM's hand: a move is that token's turn, ``Enter`` ends the round, ``A``
lets the scenario's policies play a round, ``Ctrl+Z``/``Ctrl+Y`` undo and redo.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
import pygame

from engine.flight import FlightChoice
from engine.footprint import footprint
from engine.grid import Cell
from engine.mapmodel import MapModel
from engine.movement import MovementGraph
from engine.occupancy import sized_model, with_blocked
from engine.scenario import Scenario, TokenSpec
from engine.search import SearchTree, evaluate_path, reach
from engine.sim import Simulation, read_log, replay_doors, replay_states
from engine.systems.base import TokenState
from engine.tiled import TiledFile, is_map_source
from engine.viewer import draw
from engine.viewer.draw import BAND_COLOURS, BAND_EDGE_ALPHA, BAND_FILL_ALPHA, CONTOUR_COLOURS
from engine.viewer.render import (
    MapChunks,
    SurfaceLRU,
    check_output,
    check_scale,
    load_for_render,
    render_banded,
    render_source,
    save_png,
)
from engine.viewer.session import Checkpoint
from engine.viewer.table import HELP as GM_HELP
from engine.viewer.table import GMTable

PANEL_W = 330
BG = (24, 26, 30)
PANEL_BG = (34, 37, 43)
TEXT = (230, 232, 236)
DIM = (150, 156, 166)
SIDE_COLOURS = {
    "pursuer": (214, 64, 58),
    "quarry": (60, 130, 230),
    "gm": (236, 196, 64),
}
HELP = [
    ("click", "select a token / move it there"),
    ("hover", "path preview: cost per step, turns, checks"),
    ("right/middle drag", "pan"),
    ("wheel, + -", "zoom about the cursor"),
    ("F", "fit the map to the window"),
    ("Tab", "next token"),
    ("Enter", "end the round"),
    ("A", "let the scenario's policies play a round"),
    ("G", "flight mode for a flier (W/S speed, [ ] turn)"),
    ("T / L, Space", "take off / land, fly the turn"),
    ("O", "show / hide the map's objects (exits, regions, spawns)"),
    ("Ctrl+Z / Ctrl+Y", "undo / redo"),
    *GM_HELP,
    ("P or F12", "save a screenshot"),
    ("H or F1", "this help"),
    ("Q or Esc", "quit"),
]


@dataclass
class Camera:
    """Map pixels <-> window pixels: ``screen = (world - origin) * zoom``."""

    x: float = 0.0
    y: float = 0.0
    zoom: float = 1.0

    def to_screen(self, wx: float, wy: float) -> tuple[float, float]:
        return (wx - self.x) * self.zoom, (wy - self.y) * self.zoom

    def to_world(self, sx: float, sy: float) -> tuple[float, float]:
        return sx / self.zoom + self.x, sy / self.zoom + self.y

    def zoom_at(self, sx: float, sy: float, factor: float) -> None:
        wx, wy = self.to_world(sx, sy)
        old = self.zoom
        self.zoom = snap_zoom(self.zoom * factor)
        if self.zoom == old and factor != 1:  # a step too small to reach the next 1/32
            self.zoom = snap_zoom(old + (1 if factor > 1 else -1) / ZOOM_STEPS)
        self.x, self.y = wx - sx / self.zoom, wy - sy / self.zoom


#: Zooms are whole multiples of 1/ZOOM_STEPS: the renderer places tiles exactly at such
#: scales, while an arbitrary one (a fit of 0.6034...) left hairline seams between tiles.
ZOOM_STEPS = 32


def snap_zoom(zoom: float) -> float:
    """``zoom`` rounded down to a multiple of 1/ZOOM_STEPS, within 1/ZOOM_STEPS .. 8."""
    steps = max(1, min(8 * ZOOM_STEPS, int(zoom * ZOOM_STEPS + 1e-9)))
    return steps / ZOOM_STEPS


def map_scenario(
    map_path: str,
    system_name: str | None,
    sets: dict[str, Any] | None = None,
    stats: dict[str, Any] | None = None,
) -> Scenario:
    """A scenario for a bare map: a GM token at each spawn (else one at the centre), all
    with ``stats``."""
    from engine import systems
    from engine.tiled import read_tiled

    tiled = read_tiled(map_path)  # with pytmx's map: the viewer draws it
    model = tiled.model
    system = systems.create(system_name or model.system or "generic", sets or {})
    system.token(dict(stats or {}))  # bad stats: one line now, not in the window
    if model.spawns:
        tokens = tuple(
            TokenSpec(id=s.id, side="gm", stats=dict(stats or {}), cell=s.cell, policy="human")
            for s in model.spawns
        )
    else:
        centre = (model.width // 2, model.height // 2)
        tokens = (
            TokenSpec(id="token", side="gm", stats=dict(stats or {}), cell=centre, policy="human"),
        )
    return Scenario(
        path=map_path,
        name=os.path.basename(map_path),
        model=model,
        system=system,
        tokens=tokens,
        turns=10**6,
        tiled=tiled,
    )


class Viewer:
    """One window on one scenario (or bare map)."""

    def __init__(
        self,
        scenario: Scenario,
        *,
        size: tuple[int, int] = (1280, 800),
        seed: int | None = None,
    ) -> None:
        # Display and fonts only: the viewer makes no sound, so the mixer (and the ALSA
        # noise it makes on machines without a sound card) stays out.
        pygame.display.init()
        pygame.font.init()
        try:
            self.screen = pygame.display.set_mode(size, pygame.RESIZABLE)
        except pygame.error as exc:
            from engine.errors import ArgumentError

            raise ArgumentError(
                f"cannot open a window ({exc}); on a machine without a display use "
                "`tacgrid render ... --out FILE.png`, or set SDL_VIDEODRIVER=dummy with --frames"
            ) from None
        pygame.display.set_caption(f"tacgrid - {scenario.name}")
        self.font = pygame.font.Font(None, 20)
        self.small = pygame.font.Font(None, 16)
        self.big = pygame.font.Font(None, 28)
        self.scenario = scenario
        self.map_path = scenario.model.path
        self.sim = Simulation(scenario, scenario.seed if seed is None else seed)
        self.sim.begin_turn()
        self.camera = Camera()
        self._load_map(scenario.model)
        self.selected: str | None = scenario.tokens[0].id if scenario.tokens else None
        self.hover: Cell | None = None
        self.show_help = False
        self.dragging: tuple[int, int] | None = None
        self.undo: list[Any] = []
        self.redo: list[Any] = []
        self.moved: set[str] = set()
        self.facing: dict[str, int] = {}
        self.anim: tuple[str, list[Cell], float] | None = None
        self.running = True
        self.message = ""
        self._reach_key: Any = None
        self._reach: dict[str, Any] | None = None
        self._overlay: _Overlay | None = None
        self._overlay_version = 0
        # Nothing is cached per zoom here any more (map chunks are keyed by zoom); event
        # handling still clears this when the zoom changes.
        self._scaled: Any = None
        self._hover_key: Any = None
        self._hover_path: dict[str, Any] | None = None
        self._panel: pygame.Surface | None = None
        self._panel_key: Any = None
        self.flying: dict[str, Any] = {}
        self.pending = FlightChoice()
        self._rules: dict[Any, Any] = {}
        self._preview_key: Any = None
        self._preview: Any = None
        self._preview_error = ""
        self._plan_key: Any = None
        self._plan: Any = None
        self._mtime = self._map_mtime()
        self._last_poll = 0.0
        self.fit()
        self.table = GMTable(self)  # the GM's tools: tokens, order, measure, sessions

    # ----------------------------------------------------------------- loading

    def _map_mtime(self) -> float:
        try:
            return os.path.getmtime(self.map_path)
        except OSError:
            return 0.0

    def _load_map(self, model: MapModel | None = None) -> None:
        """Draw ``model`` (the scenario's, already read), or re-read the .tmx when ``None``."""
        tiled: TiledFile | None
        if model is None:
            model, tiled = load_for_render(self.map_path)
        else:
            tiled = render_source(model, self.scenario.tiled)
        self.model: MapModel = model
        # The map in chunks drawn on demand per zoom (a big map is never drawn whole).
        self.map_surface = MapChunks(model, tiled)
        self._overlay_chunks = SurfaceLRU(32 << 20)

    def reload_if_changed(self) -> bool:
        """Re-read the .tmx when Tiled saved it: tokens stay, terrain and costs update."""
        mtime = self._map_mtime()
        if mtime == self._mtime:
            return False
        self._mtime = mtime
        from engine.errors import TacgridError
        from engine.sim import FieldCache

        try:
            self._load_map()
        except TacgridError as exc:
            self.message = f"reload failed: {exc}"
            return False
        self.scenario.model = self.model
        self.scenario.tiled = self.map_surface.tiled
        self.sim.fields = FieldCache(self.scenario)
        self._invalidate()
        self.message = "map reloaded"
        return True

    def _invalidate(self) -> None:
        self._reach_key = None
        self._overlay = None
        self._hover_key = None
        self._panel_key = None

    # ----------------------------------------------------------------- geometry

    @property
    def view_size(self) -> tuple[int, int]:
        w, h = self.screen.get_size()
        return max(1, w - PANEL_W), h

    def fit(self) -> None:
        mw, mh = self.map_surface.get_size()
        vw, vh = self.view_size
        self.camera.zoom = snap_zoom(min(vw / max(mw, 1), vh / max(mh, 1)) * 0.97)
        self.camera.x = -(vw / self.camera.zoom - mw) / 2
        self.camera.y = -(vh / self.camera.zoom - mh) / 2

    def cell_screen(self, cell: Cell) -> tuple[float, float]:
        return self.camera.to_screen(*self.model.grid.cell_center(cell))

    def cell_at_screen(self, sx: float, sy: float) -> Cell | None:
        if sx >= self.view_size[0]:
            return None
        cell = self.model.grid.cell_at(*self.camera.to_world(sx, sy))
        return cell if self.model.grid.in_bounds(cell) else None

    def token_at(self, cell: Cell) -> str | None:
        for tid, tok in self.sim.tokens.items():
            if tok.state.cell == cell:
                return tid
        return None

    # ----------------------------------------------------------------- reach and paths

    def reach_of(self, tid: str) -> dict[str, Any]:
        """Reach of a token in bands (1 turn) and 2-/3-turn contours, cached per state."""
        tok = self.sim.tokens[tid]
        spec = self.sim.specs[tid]
        model = self.sim.model  # the map with the doors as they stand
        occ = self.sim.occupancy_of(tid)  # other tokens in the way
        key = (tid, tok.state, id(model), spec.size, occ)
        if key != self._reach_key or self._reach is None:
            system = self.sim.system
            pace = spec.pace or system.fastest_pace
            assert tok.state.cell is not None
            # As the turn loop sees it: the token's anchors (its size), blocking tokens.
            seen = with_blocked(
                sized_model(model, system, tok, pace, spec.size), occ.blocked - {tok.state.cell}
            )
            graphs = {p: MovementGraph(seen, system, tok, p) for p in system.paces}
            rep = reach(graphs, pace, tok.state.cell, 3)
            rep["graph"] = graphs[pace]
            self._reach, self._reach_key = rep, key
            self._overlay = None
        return self._reach

    def hover_path(self) -> dict[str, Any] | None:
        """The hovered cell's path from the cached tree (no new search)."""
        if self.selected is None or self.hover is None:
            return None
        rep = self.reach_of(self.selected)
        key = (self._reach_key, self.hover)
        if key != self._hover_key:
            tree: SearchTree = rep["tree"]
            cells = tree.path_to(self.hover)
            self._hover_path = evaluate_path(rep["graph"], cells) if len(cells) > 1 else None
            self._hover_key = key
        return self._hover_path

    def _overlay_shapes(self) -> _Overlay | None:
        """The selected token's reach as shapes in map pixels (cached per reach)."""
        if self.selected is None:
            return None
        rep = self.reach_of(self.selected)
        if self._overlay is None:
            grid = self.model.grid
            bands = rep["bands"]
            polys: list[tuple[list[tuple[float, float]], tuple[int, int, int, int]]] = []
            within: dict[int, set[Cell]] = {1: set(), 2: set(), 3: set()}
            in_band: dict[int, set[Cell]] = {}
            for entry in rep["cells"]:
                cell: Cell = (entry["cell"][0], entry["cell"][1])
                band = entry["band"]
                turn = int(band[4:]) if band.startswith("turn") else 1
                for n in range(turn, 4):
                    within.setdefault(n, set()).add(cell)
                if turn == 1:
                    i = bands.index(band) if band in bands else 0
                    colour = BAND_COLOURS[min(i, len(BAND_COLOURS) - 1)]
                    polys.append((grid.cell_corners(cell), (*colour, BAND_FILL_ALPHA)))
                    for j in range(i, len(bands)):
                        in_band.setdefault(j, set()).add(cell)
            # A light tint per band (the terrain stays readable), each band's outer edge
            # drawn in its colour; 2- and 3-turn contours: the outline of the area.
            lines = [
                (a, b, (*BAND_COLOURS[min(j, len(BAND_COLOURS) - 1)], BAND_EDGE_ALPHA))
                for j in sorted(in_band, reverse=True)
                for a, b in _boundary(grid, in_band[j])
            ]
            lines += [
                (a, b, (*colour, 230))
                for n, colour in CONTOUR_COLOURS.items()
                for a, b in _boundary(grid, within.get(n, set()))
            ]
            self._overlay_version += 1
            self._overlay = _Overlay(self._overlay_version, polys, lines)
        return self._overlay

    def _overlay_chunk(self, overlay: _Overlay, zoom: float, i: int, j: int) -> pygame.Surface:
        """The overlay over map chunk (i, j) at ``zoom`` (cached with the overlay)."""
        key = (overlay.version, zoom, i, j)
        got = self._overlay_chunks.get(key)
        if got is None:
            got = overlay.draw(zoom, i, j, MapChunks.CHUNK)
            self._overlay_chunks.put(key, got)
        return got

    # ----------------------------------------------------------------- actions

    def select(self, tid: str | None) -> None:
        self.selected = tid
        self._hover_key = None
        self._panel_key = None

    def move_selected(self, goal: Cell) -> bool:
        """Move the selected token to ``goal`` if it is reachable this turn."""
        if self.selected is None or self.sim.outcome is not None:
            return False
        rep = self.reach_of(self.selected)
        tree: SearchTree = rep["tree"]
        t = tree.turns(goal)
        if t is None or t > 1:
            self.message = "out of reach this turn"
            return False
        path = self.table.preferred(goal, tree.path_to(goal))
        tid = self.selected
        self.undo.append(self._checkpoint())
        self.redo.clear()
        before = len(self.sim.events)
        self.sim.take_turn(tid, path)
        walked = next(
            (
                e["path"]
                for e in self.sim.events[before:]
                if e["type"] == "move" and e["token"] == tid
            ),
            None,
        )
        if walked and len(walked) > 1:
            cells: list[Cell] = [(c[0], c[1]) for c in walked]
            try:
                self.facing[tid] = self.model.grid.heading_between(cells[-2], cells[-1])
            except (ValueError, KeyError):
                pass
            self.anim = (tid, cells, 0.0)
        failed = [e for e in self.sim.events[before:] if e["type"] == "check" and not e["success"]]
        self.message = f"{tid}: failed {failed[-1]['what']}" if failed else ""
        self.moved.add(tid)
        self._invalidate()
        return True

    def end_round(self) -> None:
        self.undo.append(self._checkpoint())
        self.redo.clear()
        self.sim.end_round()
        if self.sim.outcome is None:
            self.sim.begin_turn()
        self.moved.clear()
        self._invalidate()

    def auto_round(self) -> None:
        """The scenario's policies play the rest of this round, then the round ends."""
        self.undo.append(self._checkpoint())
        self.redo.clear()
        for tid in self.sim.order:
            spec = self.sim.specs[tid]
            if tid not in self.moved and spec.policy != "human" and self.sim.outcome is None:
                self.sim.take_turn(tid)
        self.sim.end_round()
        if self.sim.outcome is None:
            self.sim.begin_turn()
        self.moved.clear()
        self._invalidate()

    def _checkpoint(self) -> Checkpoint:
        return Checkpoint(self.sim.snapshot(), dict(self.flying), frozenset(self.moved))

    def _restore(self, point: Checkpoint) -> None:
        if point.tail is not None and point.tail_from is not None:  # redo: its events back
            del self.sim.events[point.tail_from :]
            self.sim.events.extend(point.tail)
        self.sim.restore(point.snap)
        self.flying = dict(point.flying)
        self.moved = set(point.moved)
        self._plan_key = None
        if self.selected not in self.sim.tokens:
            self.selected = self.sim.order[0] if self.sim.order else None

    # ----------------------------------------------------------------- flight

    def flight_rules(self, tid: str) -> Any:
        """The system's flight rules for this token (None: it cannot fly)."""
        key = (tid, tuple(sorted(self.sim.tokens[tid].stats.items())), id(self.model))
        if key not in self._rules:
            hook = getattr(self.sim.system, "flight", None)
            self._rules[key] = hook(self.sim.tokens[tid], self.model) if hook else None
        return self._rules[key]

    def toggle_objects(self) -> None:
        """Show or hide the map's object layers (drawn as Tiled draws them)."""
        show = not self.map_surface.objects
        self.map_surface.show_objects(show)
        self.message = "map objects shown" if show else "map objects hidden (O shows them)"

    def toggle_flight(self) -> None:
        """G: the selected flier takes to the air (or, stopped, goes back to walking)."""
        tid = self.selected
        if tid is None:
            return
        rules = self.flight_rules(tid)
        if rules is None:
            self.message = f"{tid} cannot fly ({self.sim.system.name})"
            return
        if tid in self.flying:
            if self.flying[tid].speed and not self.flying[tid].landed:
                self.message = "land first (L, then Space)"
                return
            del self.flying[tid]
            self.message = f"{tid} walks"
        else:
            cell = self.sim.tokens[tid].state.cell
            heading = self.facing.get(tid, 0)
            heading -= heading % rules.geo.step
            self.flying[tid] = rules.start_state(cell, heading, 0)
            self.pending = FlightChoice(take_off=True)
            self.message = (
                f"{tid}: flight mode (W/S speed, [ ] turn, T take off, L land, Space fly)"
            )
        self._invalidate()

    def edit_choice(self, **change: Any) -> None:
        self.pending = replace(self.pending, **change)
        self._preview_key = None

    def flight_preview(self) -> tuple[Any, Any] | None:
        """The selected flier's next turn under the pending choice: (state, record)."""
        tid = self.selected
        if tid is None or tid not in self.flying:
            return None
        key = (self.flying[tid].key(), self.pending)
        if key != self._preview_key:
            from engine.errors import TacgridError

            try:
                self._preview = self.flight_rules(tid).step(self.flying[tid], self.pending)
                self._preview_error = ""
            except TacgridError as exc:
                self._preview = None
                self._preview_error = str(exc)
            self._preview_key = key
        return self._preview

    def flight_suggestion(self) -> Any:
        """The planner's plan from the flier to the hovered cell (cached per state and cell)."""
        tid = self.selected
        if tid is None or tid not in self.flying or self.hover is None:
            return None
        key = (self.flying[tid].key(), self.hover)
        if key != self._plan_key:
            from engine.flight import plan

            self._plan = plan(
                self.model,
                self.flight_rules(tid),
                self.flying[tid],
                self.hover,
                max_turns=12,
                max_states=20_000,
            )
            self._plan_key = key
        return self._plan

    def fly_turn(self) -> bool:
        """Space: fly the pending choice for the selected flier (its turn)."""
        tid = self.selected
        got = self.flight_preview()
        if tid is None or got is None:
            if self._preview_error:
                self.message = self._preview_error
            return False
        state, record = got
        self.undo.append(self._checkpoint())
        self.redo.clear()
        self.sim._emit({"type": "flight", "token": tid, **record.to_dict()})
        token = self.sim.tokens[tid].moved(
            cell=state.cell,
            mode="walk" if state.landed else "air",
            flight=None if state.landed else state,
        )
        self.sim.tokens[tid] = token
        self.sim._emit({"type": "state", "token": tid, "state": token.state.to_dict()})
        self.facing[tid] = state.heading
        if record.cells:
            self.anim = (tid, [record.before.cell, *record.cells], 0.0)
        if state.landed:
            self.flying.pop(tid, None)
            self.message = f"{tid} landed"
        else:
            self.flying[tid] = state
            self.message = "; ".join(str(e.get("type")) for e in record.events[1:]) or ""
        self.pending = FlightChoice(maintain=True)
        self.moved.add(tid)
        self._invalidate()
        return True

    def do_undo(self) -> None:
        if self.undo:
            point = self.undo.pop()
            back = self._checkpoint()  # redo: this state and the events undone
            back.tail_from = point.snap.n_events
            back.tail = self.sim.events[point.snap.n_events :]
            self.redo.append(back)
            self._restore(point)
            self._invalidate()

    def do_redo(self) -> None:
        if self.redo:
            self.undo.append(self._checkpoint())
            self._restore(self.redo.pop())
            self._invalidate()

    def screenshot(self, path: str | None = None) -> str:
        """Save the window as a PNG, whole or not at all (:mod:`engine.safeio`)."""
        from engine.viewer.png import save_png

        path = path or f"tacgrid-{pygame.time.get_ticks()}.png"
        save_png(self.screen, path, "--screenshot")
        self.message = f"saved {path}"
        return path

    def _screenshot_key(self) -> None:
        """P or F12: a failed save is a message in the window, not the end of the session."""
        from engine.errors import TacgridError

        try:
            self.screenshot()
        except TacgridError as exc:
            self.message = f"screenshot not saved: {exc}"

    # ----------------------------------------------------------------- events

    def handle(self, ev: pygame.event.Event) -> None:
        if self.table.handle(ev):
            return
        if ev.type == pygame.QUIT:
            self.running = False
        elif ev.type == pygame.VIDEORESIZE:
            self._panel_key = None
        elif ev.type == pygame.MOUSEMOTION:
            if self.dragging is not None:
                dx, dy = ev.pos[0] - self.dragging[0], ev.pos[1] - self.dragging[1]
                self.camera.x -= dx / self.camera.zoom
                self.camera.y -= dy / self.camera.zoom
                self.dragging = ev.pos
            self.hover = self.cell_at_screen(*ev.pos)
        elif ev.type == pygame.MOUSEBUTTONDOWN:
            if ev.button == 1:
                cell = self.cell_at_screen(*ev.pos)
                if cell is None:
                    return
                tid = self.token_at(cell)
                if tid is not None and tid != self.selected:
                    self.select(tid)
                elif (
                    self.selected is not None and cell != self.sim.tokens[self.selected].state.cell
                ):
                    self.move_selected(cell)
            elif ev.button in (2, 3):
                self.dragging = ev.pos
            elif ev.button == 4:
                self.camera.zoom_at(ev.pos[0], ev.pos[1], 1.15)
                self._scaled = None
            elif ev.button == 5:
                self.camera.zoom_at(ev.pos[0], ev.pos[1], 1 / 1.15)
                self._scaled = None
        elif ev.type == pygame.MOUSEBUTTONUP and ev.button in (2, 3):
            self.dragging = None
        elif ev.type == pygame.MOUSEWHEEL:
            pos = pygame.mouse.get_pos()
            self.camera.zoom_at(*pos, 1.15**ev.y)
            self._scaled = None
        elif ev.type == pygame.KEYDOWN:
            self._key(ev)

    def _key(self, ev: pygame.event.Event) -> None:
        ctrl = ev.mod & pygame.KMOD_CTRL
        k = ev.key
        if k in (pygame.K_q, pygame.K_ESCAPE):
            if self.show_help and k == pygame.K_ESCAPE:
                self.show_help = False
            else:
                self.running = False
        elif k in (pygame.K_h, pygame.K_F1):
            self.show_help = not self.show_help
        elif k == pygame.K_f:
            self.fit()
        elif k in (pygame.K_PLUS, pygame.K_EQUALS, pygame.K_KP_PLUS):
            self.camera.zoom_at(self.view_size[0] / 2, self.view_size[1] / 2, 1.25)
            self._scaled = None
        elif k in (pygame.K_MINUS, pygame.K_KP_MINUS):
            self.camera.zoom_at(self.view_size[0] / 2, self.view_size[1] / 2, 0.8)
            self._scaled = None
        elif k == pygame.K_TAB:
            ids = self.sim.order
            if ids:
                i = ids.index(self.selected) + 1 if self.selected in ids else 0
                self.select(ids[i % len(ids)])
        elif k in (pygame.K_RETURN, pygame.K_KP_ENTER):
            self.end_round()
        elif k == pygame.K_a:
            self.auto_round()
        elif k == pygame.K_z and ctrl:
            self.do_undo()
        elif k == pygame.K_y and ctrl:
            self.do_redo()
        elif k in (pygame.K_p, pygame.K_F12):
            self._screenshot_key()
        elif k == pygame.K_g:
            self.toggle_flight()
        elif k == pygame.K_o and not ctrl:
            self.toggle_objects()
        elif self.selected in self.flying:
            self._flight_key(k)
        elif k in (pygame.K_LEFT, pygame.K_RIGHT, pygame.K_UP, pygame.K_DOWN):
            step = 60 / self.camera.zoom
            dx = {pygame.K_LEFT: -step, pygame.K_RIGHT: step}.get(k, 0)
            dy = {pygame.K_UP: -step, pygame.K_DOWN: step}.get(k, 0)
            self.camera.x += dx
            self.camera.y += dy

    def _flight_key(self, k: int) -> None:
        c = self.pending
        step = self.flight_rules(self.selected).geo.step  # type: ignore[arg-type]
        turned = sum(d for _, d in c.turns)
        if k == pygame.K_w:
            self.edit_choice(accelerate=c.accelerate + 1, decelerate=0, maintain=False)
        elif k == pygame.K_s:
            if c.accelerate:
                self.edit_choice(accelerate=c.accelerate - 1)
            else:
                self.edit_choice(decelerate=c.decelerate + 1, maintain=False)
        elif k == pygame.K_m:
            self.edit_choice(maintain=not c.maintain, accelerate=0, decelerate=0)
        elif k in (pygame.K_LEFTBRACKET, pygame.K_RIGHTBRACKET):
            turned += step if k == pygame.K_RIGHTBRACKET else -step
            turned = max(-180, min(180, turned))
            self.edit_choice(turns=((0, turned),) if turned else ())
        elif k == pygame.K_t:
            # T arms the take-off of a flier on the ground (G already armed it: pressing T
            # as the hint says keeps it armed); in the air there is nothing to take off from.
            if self.flying[self.selected].landed:  # type: ignore[index]
                self.edit_choice(take_off=True)
            else:
                self.message = "already flying: L lands, Space flies the turn"
        elif k == pygame.K_l:
            self.edit_choice(land=not c.land)
        elif k == pygame.K_SPACE:
            self.fly_turn()

    # ----------------------------------------------------------------- drawing

    def _visible_chunks(self) -> tuple[float, tuple[int, int], list[tuple[int, int]]]:
        """The zoom, the scaled map's pixel at the view's corner, and the chunks in view."""
        z = self.camera.zoom
        vw, vh = self.view_size
        ox, oy = round(self.camera.x * z), round(self.camera.y * z)
        return z, (ox, oy), self.map_surface.chunks_in(z, pygame.Rect(ox, oy, vw, vh))

    def _prefetch(self, zoom: float, ox: int, oy: int) -> None:
        """Draw one chunk next to the view ahead of need (a frame that drew no chunk has
        time for one), so that panning meets chunks already drawn."""
        vw, vh = self.view_size
        c = MapChunks.CHUNK
        ring = pygame.Rect(ox - c, oy - c, vw + 2 * c, vh + 2 * c)
        for i, j in self.map_surface.chunks_in(zoom, ring):
            if not self.map_surface.cached(zoom, i, j):
                self.map_surface.chunk(zoom, i, j)
                return

    def draw(self) -> None:
        screen = self.screen
        screen.fill(BG)
        vw, vh = self.view_size
        view = screen.subsurface((0, 0, vw, vh))
        z, (ox, oy), chunks = self._visible_chunks()
        c = MapChunks.CHUNK
        overlay = self._overlay_shapes() if self.selected not in self.flying else None
        missing = [ij for ij in chunks if not self.map_surface.cached(z, *ij)]
        for i, j in chunks:
            view.blit(self.map_surface.chunk(z, i, j), (i * c - ox, j * c - oy))
        if not missing:
            self._prefetch(z, ox, oy)
        if overlay is not None:
            for i, j in chunks:
                if overlay.touches(z, i, j, c):
                    view.blit(self._overlay_chunk(overlay, z, i, j), (i * c - ox, j * c - oy))
        self.table.draw_walls(view)
        if self.selected in self.flying:
            self._draw_flight(view)
        else:
            self._draw_path(view)
        self.table.draw(view)
        self._draw_tokens(view)
        screen.blit(self._panel_surface(), (vw, 0))
        if self.show_help:
            self._draw_help(screen)

    def _draw_path(self, view: pygame.Surface) -> None:
        rep = self.hover_path()
        if not rep:
            return
        pts = [self.cell_screen((c[0], c[1])) for c in rep["cells"]]
        pygame.draw.lines(view, (255, 255, 255), False, pts, 3)
        pygame.draw.lines(view, (20, 20, 20), False, pts, 1)
        last_turn = 0
        for step, p in zip(rep["steps"][1:], pts[1:], strict=False):
            if step["turn"] != last_turn:
                if last_turn:
                    pygame.draw.circle(view, (255, 255, 255), p, 7, 2)
                last_turn = step["turn"]
            if step["check"]:
                label = self.small.render(
                    f"{100 * step['check']['p_success']:.0f}%", True, (255, 230, 120)
                )
                view.blit(label, (p[0] + 6, p[1] - 14))
        end = pts[-1]
        label = self.font.render(f"{rep['turns']:.2f} t", True, (255, 255, 255), (0, 0, 0))
        view.blit(label, (end[0] + 8, end[1] + 4))

    def _draw_flight(self, view: pygame.Surface) -> None:
        """The planner's suggestion to the hovered cell (magenta dots) and the trajectory
        of the pending choice (cyan)."""
        tid = self.selected
        assert tid is not None
        suggestion = self.flight_suggestion()
        if suggestion is not None:
            for record in suggestion.records:
                for cell in record.cells:
                    pygame.draw.circle(view, (230, 80, 230), self.cell_screen(cell), 4)
        got = self.flight_preview()
        if got is not None:
            _, record = got
            pts = [self.cell_screen(c) for c in (record.before.cell, *record.cells)]
            if len(pts) > 1:
                pygame.draw.lines(view, (20, 20, 20), False, pts, 5)
                pygame.draw.lines(view, (80, 230, 255), False, pts, 3)
            pygame.draw.circle(view, (80, 230, 255), pts[-1], 8, 2)

    def _token_pos(self, tid: str) -> tuple[float, float]:
        if self.anim and self.anim[0] == tid:
            _, path, t = self.anim
            f = t * (len(path) - 1)
            i = min(int(f), len(path) - 2)
            a, b = self.cell_screen(path[i]), self.cell_screen(path[i + 1])
            u = f - i
            return a[0] + (b[0] - a[0]) * u, a[1] + (b[1] - a[1]) * u
        cell = self.sim.tokens[tid].state.cell
        assert cell is not None
        return self.cell_screen(cell)

    def _draw_tokens(self, view: pygame.Surface) -> None:
        """Tokens with short unique labels (full names on hover), stacked ones fanned out
        about their cell, the selection ring outside the disc, facing as an arrow head."""
        g = self.model.grid
        radius = max(11, int(min(g.tile_width, g.tile_height) * 0.38 * self.camera.zoom))
        order = list(self.sim.order)
        self.token_labels = draw.short_labels(order)
        cells = {t: self.sim.tokens[t].state.cell for t in order if not self._animating(t)}
        fan = draw.fan_out(cells, radius)
        self.token_screen: dict[str, tuple[float, float, int]] = {}
        # The selected token last, so that nothing covers its ring.
        for tid in sorted(order, key=lambda t: t == self.selected):
            tok = self.sim.tokens[tid]
            spec = self.sim.specs[tid]
            if tok.state.cell is None:
                continue
            x, y = self._token_pos(tid)
            dx, dy, size = fan.get(tid, (0.0, 0.0, radius))
            colour = SIDE_COLOURS.get(spec.side, SIDE_COLOURS.get(spec.policy, (90, 200, 120)))
            if spec.size > 1:
                # A large token: its footprint outlined, the disc at the footprint's centre
                # and as wide as it (size x the one-cell disc).
                cx, cy, outlines = self._footprint_screen(tok.state.cell, spec.size)
                x, y = x + cx, y + cy
                dx, dy, size = 0.0, 0.0, radius * spec.size * 0.9
                for corners in outlines:
                    pygame.draw.polygon(view, colour, corners, 2)
            x, y = x + dx, y + dy
            r = round(size)
            flight = tok.state.flight
            heading = self.facing.get(tid)
            if flight is not None and not flight.landed:
                heading = flight.heading  # a momentum flier's heading (a replay's too)
            font = self.font if r >= 14 else self.small
            draw.draw_token(
                view,
                font,
                (x, y),
                r,
                colour,
                self.token_labels[tid],
                selected=tid == self.selected,
                heading=heading,
            )
            self.token_screen[tid] = (round(x), round(y), r)
            below = y + r + (8 if tid == self.selected else 2)
            if flight is not None and not flight.landed:
                text = f"v{flight.speed}" + (f" {flight.altitude}m" if flight.altitude else "")
                fl = self.small.render(text, True, (120, 220, 255), (0, 0, 0))
                view.blit(fl, fl.get_rect(midtop=(x, below)))
                below += fl.get_height()
            if tok.state.conditions:
                cond = self.small.render(
                    ",".join(sorted(tok.state.conditions)), True, (255, 220, 120), (0, 0, 0)
                )
                view.blit(cond, cond.get_rect(midtop=(x, below)))
        self.tooltip = ""
        if self.hover is not None:
            names = [
                f"{tid} ({self.sim.specs[tid].side})"
                for tid in order
                if self.sim.tokens[tid].state.cell == self.hover
            ]
            self.tooltip = ", ".join(names)
            if names:
                x, y = self.cell_screen(self.hover)
                draw.tooltip(view, self.font, self.tooltip, (x, y - radius))

    def _footprint_screen(
        self, anchor: Cell, size: int
    ) -> tuple[float, float, list[list[tuple[float, float]]]]:
        """A large token's footprint: the offset from its anchor's centre to the footprint's
        centre (screen pixels), and each on-map cell's outline on screen."""
        g = self.model.grid
        cells = [c for c in footprint(g, anchor, size) if g.in_bounds(c)]
        ax, ay = self.cell_screen(anchor)
        centres = [self.cell_screen(c) for c in cells]
        cx = sum(p[0] for p in centres) / len(centres) - ax
        cy = sum(p[1] for p in centres) / len(centres) - ay
        outlines = [[self.camera.to_screen(*p) for p in g.cell_corners(c)] for c in cells]
        return cx, cy, outlines

    def _animating(self, tid: str) -> bool:
        return self.anim is not None and self.anim[0] == tid

    def _panel_surface(self) -> pygame.Surface:
        key = (
            self.selected,
            self.hover,
            len(self.sim.events),
            self.sim.turn,
            self.message,
            self.screen.get_height(),
            self._hover_key,
            self.pending,
            tuple(sorted((k, v.key()) for k, v in self.flying.items())),
            self.table.version,
            tuple(self.sim.order),
        )
        if key == self._panel_key and self._panel is not None:
            return self._panel
        h = self.screen.get_height()
        panel = pygame.Surface((PANEL_W, h))
        panel.fill(PANEL_BG)
        y = 10
        self.panel_text: list[tuple[str, pygame.Rect]] = []

        def line(text: str, colour: tuple[int, int, int] = TEXT, font: Any = None) -> None:
            """One entry, wrapped to the panel's width (continuations indented)."""
            nonlocal y
            f = font or self.font
            for part in draw.wrap(f, text, PANEL_W - 20):
                if y > h - 16:
                    return
                surf = f.render(part, True, colour)
                panel.blit(surf, (10, y))
                self.panel_text.append((part, pygame.Rect(10, y, *surf.get_size())))
                y += surf.get_height() + 3

        line(self.scenario.name, font=self.big)
        line(
            f"{self.sim.system.name} - round {self.sim.turn}"
            + (f" - {self.sim.outcome}" if self.sim.outcome else ""),
            DIM,
        )
        if self.message:
            line(self.message, (255, 210, 120))
        y += 6
        if self.selected:
            tok = self.sim.tokens[self.selected]
            spec = self.sim.specs[self.selected]
            role = spec.side if spec.side == spec.policy else f"{spec.side}, {spec.policy}"
            line(f"{self.selected} ({role})")
            line(
                f"  at {tok.state.cell[0]},{tok.state.cell[1]}  pace {spec.pace or self.sim.system.fastest_pace}"
                if tok.state.cell
                else "",
                DIM,
            )
            if tok.state.conditions:
                line("  " + ", ".join(sorted(tok.state.conditions)), (255, 220, 120))
            if self.selected in self.moved:
                line("  moved this round", DIM)
            tf = tok.state.flight
            if tf is not None and self.selected not in self.flying:
                line(
                    ("  landed" if tf.landed else "  flying")
                    + f": heading {tf.heading}, speed {tf.speed}"
                    + (f", altitude {tf.altitude} m" if tf.altitude else ""),
                    (120, 220, 255),
                )
            fs = self.flying.get(self.selected)
            if fs is not None:
                line(
                    f"  flying: heading {fs.heading}, speed {fs.speed}"
                    + (f", altitude {fs.altitude} m" if fs.altitude else ""),
                    (120, 220, 255),
                )
                rules = self.flight_rules(self.selected)
                acts = ", ".join(rules.actions(self.pending)) or "none"
                line(f"  next: {acts}", (120, 220, 255), self.small)
                got = self.flight_preview()
                if got is not None:
                    nxt, rec = got
                    line(
                        f"  -> speed {rec.speed}, {len(rec.cells)} cells, heading {nxt.heading}"
                        + (", landed" if nxt.landed else ""),
                        (120, 220, 255),
                        self.small,
                    )
                    for ev in rec.events[1:4]:
                        line(f"  {ev.get('type')}", (255, 160, 120), self.small)
                elif self._preview_error:
                    line(f"  {self._preview_error[:60]}", (255, 160, 120), self.small)
                sug = self.flight_suggestion()
                if sug is not None:
                    first = ", ".join(sug.records[0].actions) if sug.records else ""
                    line(
                        f"  planner: {sug.turns} turns, {sug.actions} actions; now: {first}",
                        (230, 120, 230),
                        self.small,
                    )
        legend = self.legend()
        if legend:
            y += 6
            line("legend", font=self.font)
            y += draw.draw_legend(panel, self.small, 12, y, legend, PANEL_W - 22) + 2
        if self.hover is not None:
            t = self.model.terrain_at(self.hover)
            y += 6
            line(
                f"cell {self.hover[0]},{self.hover[1]}: {t.name} ({t.move}"
                + (f", {t.difficulty}" if t.difficulty != "none" else "")
                + ")"
            )
            rep = self.hover_path()
            if rep:
                line(
                    f"  {rep['turns']:.3f} turns, {rep['distance']} {rep['unit']}, "
                    f"p(no failure) {100 * rep['p_no_failure']:.1f}%"
                )
                for step in rep["steps"][1:12]:
                    check = (
                        f"  {step['check']['what']} {100 * step['check']['p_success']:.0f}%"
                        if step["check"]
                        else ""
                    )
                    line(
                        f"  t{step['turn']} {step['cell'][0]},{step['cell'][1]} {step['mode']} "
                        f"+{step['time']:.3f}{check}",
                        DIM,
                        self.small,
                    )
        y += 6
        for text, colour in self.table.panel_lines():
            line(text, colour, self.small)
        y += 8
        line("dice log", font=self.big)
        rolls = [e for e in self.dice_events() if e["type"] in ("roll", "check")][-14:]
        for e in reversed(rolls):
            if e["type"] == "roll":
                faces = ",".join(str(f) for f in e.get("faces", []))
                line(
                    f"{e['token']}: {e['expression']} [{faces}] = {e['total']} {e.get('decided', '')}",
                    DIM,
                    self.small,
                )
            else:
                line(f"{e['token']}: {e['what']} -> {e['degree']}", TEXT, self.small)
        line("H: help", DIM, self.small)
        self._panel, self._panel_key = panel, key
        return panel

    def legend(self) -> list[tuple[str, Any, str]]:
        """What the overlay on the map means, for the panel: the selected token's bands
        (its system's paces), the 2-/3-turn contours and the hover path's marks."""
        if self.selected is None or self.selected in self.flying:
            return []
        rep = self.reach_of(self.selected)
        contours = list(CONTOUR_COLOURS) if rep["cells"] else []
        return draw.legend_entries(list(rep["bands"]), contours)

    def dice_events(self) -> list[dict[str, Any]]:
        """The events the dice log lists (rolls and checks among them)."""
        return self.sim.events

    def _draw_help(self, screen: pygame.Surface) -> None:
        """The keys, in a box sized to its text (within the window; long lines wrap)."""
        sw, sh = screen.get_size()
        key_w = max(self.font.size(k)[0] for k, _ in HELP) + 24
        text_w = min(max(self.font.size(t)[0] for _, t in HELP), max(200, sw - key_w - 60))
        rows = [(k, draw.wrap(self.font, t, text_w)) for k, t in HELP]
        w = 16 + key_w + text_w + 16
        h = 32 + 22 * sum(len(lines) for _, lines in rows)
        box = pygame.Surface((w, h), pygame.SRCALPHA)
        box.fill((0, 0, 0, 210))
        y = 16
        for k, lines in rows:
            box.blit(self.font.render(k, True, (255, 220, 120)), (16, y))
            for part in lines:
                box.blit(self.font.render(part, True, TEXT), (16 + key_w, y))
                y += 22
        self.help_rect = pygame.Rect((sw - w) // 2, max(0, (sh - h) // 2), w, h)
        screen.blit(box, self.help_rect)

    # ----------------------------------------------------------------- the loop

    def tick(self, dt: float) -> None:
        if self.anim is not None:
            tid, path, t = self.anim
            t += dt / max(0.25, 0.08 * len(path))
            self.anim = None if t >= 1 else (tid, path, t)
        self._last_poll += dt
        if self._last_poll >= 1.0:
            self._last_poll = 0.0
            self.reload_if_changed()

    def run(self, frames: int | None = None, screenshot: str | None = None) -> int:
        driver = pygame.display.get_driver()
        if frames is None and driver in ("offscreen", "dummy"):
            from engine.errors import ArgumentError

            pygame.quit()
            raise ArgumentError(
                f"no display to open the viewer on (SDL video driver '{driver}'); "
                "use `tacgrid render SOURCE --out FILE.png`, or --frames N --screenshot FILE"
            )
        clock = pygame.time.Clock()
        n = 0
        while self.running:
            self.step(clock.tick(60) / 1000 if frames is None else 1 / 60)
            n += 1
            if frames is not None and n >= frames:
                break
        if screenshot:
            self.screenshot(screenshot)
        pygame.quit()
        return 0

    def step(self, dt: float = 1 / 60) -> None:
        """One frame: handle the queued events, advance animations, draw."""
        for ev in pygame.event.get():
            self.handle(ev)
        self.table.after_step()  # autosave after each event
        self.tick(dt)
        self.draw()
        pygame.display.flip()


class ReplayViewer(Viewer):
    """Steps through a recorded run: Right/Left a round, Home/End, the turn's moves drawn."""

    def __init__(self, log_path: str, scenario_path: str | None = None, **kw: Any) -> None:
        """``scenario_path``: the log's scenario as found and checked by
        :func:`engine.report.replay.check_log_sources` (default: as the log names it)."""
        from engine.scenario import load_scenario

        self.events = read_log(log_path)
        start = self.events[0]
        scenario = load_scenario(scenario_path or start["scenario"], for_render=True)
        super().__init__(scenario, seed=start.get("seed"), **kw)
        self.table.read_only = True  # a replay is read from its log, not edited
        self.turn_starts = [i for i, e in enumerate(self.events) if e["type"] == "turn"]
        self.position = len(self.turn_starts)
        # The scenario's own tokens: each position starts from them, then the GM's edits.
        self._base = (dict(self.sim.tokens), dict(self.sim.specs), list(self.sim.order))
        self._apply()

    def _tokens_at(self, events: list[dict[str, Any]]) -> None:
        """The tokens as the log has them after ``events``: the scenario's, then every token
        the GM added, edited, removed or reordered in a session (a viewer's log)."""
        sim = self.sim
        tokens, specs, order = dict(self._base[0]), dict(self._base[1]), list(self._base[2])
        for ev in events:
            kind, tid = ev.get("type"), ev.get("token")
            if kind in ("token_add", "token_edit") and isinstance(tid, str):
                old = specs.get(tid)
                stats = dict(ev.get("stats") or {})
                spec = TokenSpec(
                    id=tid,
                    side=str(ev.get("side") or (old.side if old else "gm")),
                    stats=stats,
                    cell=old.cell if old else (0, 0),
                    policy=str(ev.get("policy") or (old.policy if old else "idle")),
                    size=int(ev.get("size") or (old.size if old else 1)),
                )
                specs[tid] = spec
                tokens[tid] = sim.system.token(stats, token_id=tid)
                if tid not in order:
                    order.append(tid)
            elif kind == "token_remove" and tid in specs:
                specs.pop(tid)
                tokens.pop(tid, None)
                order.remove(tid)
            elif kind == "order" and sorted(ev.get("order") or []) == sorted(order):
                order = [str(t) for t in ev["order"]]
        sim.tokens, sim.specs, sim.order = tokens, specs, order

    def _apply(self) -> None:
        upto = (
            self.turn_starts[self.position]
            if self.position < len(self.turn_starts)
            else len(self.events)
        )
        self._tokens_at(self.events[:upto])
        states, outcome = replay_states(self.events[:upto])
        for tid, st in states.items():
            if tid in self.sim.tokens:
                self.sim.tokens[tid] = self.sim.tokens[tid].moved(**_state_fields(st))
        if self.selected not in self.sim.tokens:
            self.selected = self.sim.order[0] if self.sim.order else None
        self.sim.doors = replay_doors(self.events[:upto])
        self.sim.turn = self.position
        self.sim.outcome = outcome
        self.message = f"replay: round {self.position} of {len(self.turn_starts)}"
        self._invalidate()

    def _key(self, ev: pygame.event.Event) -> None:
        k = ev.key
        if k == pygame.K_RIGHT:
            self.position = min(len(self.turn_starts), self.position + 1)
        elif k == pygame.K_LEFT:
            self.position = max(0, self.position - 1)
        elif k == pygame.K_HOME:
            self.position = 0
        elif k == pygame.K_END:
            self.position = len(self.turn_starts)
        else:
            super()._key(ev)
            return
        self._apply()

    def move_selected(self, goal: Cell) -> bool:
        self.message = "replay: moves are read from the log (Left/Right to step)"
        return False

    def dice_events(self) -> list[dict[str, Any]]:
        """The log's events up to the round shown: its rolls fill the dice log."""
        upto = (
            self.turn_starts[self.position]
            if self.position < len(self.turn_starts)
            else len(self.events)
        )
        return self.events[:upto]


class _Overlay:
    """Reach shapes in map pixels, drawn per chunk at a zoom: filled cells, contour lines."""

    def __init__(
        self,
        version: int,
        polys: list[tuple[list[tuple[float, float]], tuple[int, int, int, int]]],
        lines: list[tuple[tuple[float, float], tuple[float, float], tuple[int, int, int, int]]],
    ) -> None:
        self.version = version
        self.polys = polys
        self.lines = lines
        boxes = [
            (
                min(x for x, _ in pts),
                min(y for _, y in pts),
                max(x for x, _ in pts),
                max(y for _, y in pts),
            )
            for pts, _ in polys
        ] + [
            (min(a[0], b[0]), min(a[1], b[1]), max(a[0], b[0]), max(a[1], b[1]))
            for a, b, _ in lines
        ]
        self.boxes = np.array(boxes, dtype=np.float64).reshape(-1, 4)
        self.n_polys = len(polys)

    def _hits(self, zoom: float, i: int, j: int, chunk: int) -> np.ndarray:
        pad = 3 / zoom  # line width and rounding
        x0, y0 = i * chunk / zoom - pad, j * chunk / zoom - pad
        x1, y1 = (i + 1) * chunk / zoom + pad, (j + 1) * chunk / zoom + pad
        b = self.boxes
        return np.flatnonzero((b[:, 2] >= x0) & (b[:, 0] <= x1) & (b[:, 3] >= y0) & (b[:, 1] <= y1))

    def touches(self, zoom: float, i: int, j: int, chunk: int) -> bool:
        return bool(self._hits(zoom, i, j, chunk).size)

    def draw(self, zoom: float, i: int, j: int, chunk: int) -> pygame.Surface:
        surf = pygame.Surface((chunk, chunk), pygame.SRCALPHA)
        ox, oy = i * chunk, j * chunk
        width = max(1, round(2 * zoom))
        for k in self._hits(zoom, i, j, chunk).tolist():
            if k < self.n_polys:
                pts, colour = self.polys[k]
                pygame.draw.polygon(surf, colour, [(x * zoom - ox, y * zoom - oy) for x, y in pts])
            else:
                a, b, colour = self.lines[k - self.n_polys]
                pa = (a[0] * zoom - ox, a[1] * zoom - oy)
                pb = (b[0] * zoom - ox, b[1] * zoom - oy)
                pygame.draw.line(surf, colour, pa, pb, width)
        return surf


def _boundary(grid: Any, cells: set[Cell]) -> list[tuple[tuple[float, float], tuple[float, float]]]:
    """Edges between cells in ``cells`` and cells outside it (or off the map)."""

    def key(p: tuple[float, float]) -> tuple[float, float]:
        return (round(p[0], 3), round(p[1], 3))

    out = []
    for cell in cells:
        corners = grid.cell_corners(cell)
        inside = [
            {key(p) for p in grid.cell_corners(n)} for n in grid.neighbours(cell) if n in cells
        ]
        for a, b in zip(corners, corners[1:] + corners[:1], strict=True):
            ka, kb = key(a), key(b)
            if not any(ka in ring and kb in ring for ring in inside):
                out.append((a, b))
    return out


def _state_fields(st: TokenState) -> dict[str, Any]:
    return {
        "cell": st.cell,
        "mode": st.mode,
        "conditions": st.conditions,
        "encumbrance": st.encumbrance,
        "progress": st.progress,
        "counters": st.counters,
        "flight": st.flight,
    }


def open_source(
    source: str,
    system: str | None = None,
    sets: dict[str, Any] | None = None,
    token: str | dict[str, Any] | None = None,
) -> Scenario:
    """A scenario file, or a bare map with a GM token at each spawn (``token``: their stats)."""
    from engine.errors import ArgumentError
    from engine.scenario import load_scenario

    if source.endswith((".yaml", ".yml")):
        if token:
            raise ArgumentError(
                f"--token: {source} is a scenario, whose tokens carry their own stats; give "
                "--token with a bare map, or edit a token in the window (E)"
            )
        return load_scenario(source, overrides=sets, for_render=True)
    if is_map_source(source):  # .tmx, .tmj/.json, WORLD.world#NAME
        from engine.systems.base import parse_token_spec

        return map_scenario(source, system, sets, parse_token_spec(token or ""))
    raise ArgumentError(
        f"{source}: expected a Tiled map (.tmx, .tmj, WORLD.world#NAME) or a scenario .yaml"
    )


def view(
    source: str,
    *,
    system: str | None = None,
    sets: dict[str, Any] | None = None,
    token: str | None = None,
    frames: int | None = None,
    screenshot: str | None = None,
    safe_below: float | None = None,
) -> int:
    """`tacgrid view`: open the window (``frames``: draw that many, save, exit) on a
    scenario, a bare map, or a saved session (:mod:`engine.viewer.session`)."""
    viewer = open_table(source, system=system, sets=sets, token=token, safe_below=safe_below)
    if frames is not None:
        # An automated run (--frames: tests, scripts) draws and exits: no autosave file
        # left behind in the working folder, no recovery offered.
        viewer.table.autosave_to = None
        viewer.table.recovery = None
    return viewer.run(frames, screenshot)


def open_table(
    source: str,
    *,
    system: str | None = None,
    sets: dict[str, Any] | None = None,
    token: str | None = None,
    safe_below: float | None = None,
    size: tuple[int, int] = (1280, 800),
) -> Viewer:
    """A viewer on ``source``: a session file resumes where it was left (undo history
    too); a newer autosave beside it (or beside the default save) is offered."""
    from engine.viewer import session as sessions

    if sessions.is_session_path(source):
        from engine.errors import ArgumentError

        if token or system or sets:
            raise ArgumentError(
                f"{source}: a session keeps its own system, settings and tokens; give "
                "--system/--set/--token with a map or scenario, or edit tokens in the window (E)"
            )
        data, scenario = sessions.load_session(source)
        viewer = Viewer(scenario, seed=int(data["seed"]), size=size)
        sessions.checked_apply(viewer, data, scenario, source)
        viewer.table.session_path = source
        saved = source
    else:
        viewer = Viewer(open_source(source, system, sets, token), size=size)
        saved = sessions.default_session_path(viewer.scenario)
    table = viewer.table
    table.autosave_to = sessions.autosave_path(saved)
    table.recovery = sessions.recovery_for(saved)
    if safe_below is not None:
        table.safe_below = safe_below
    table.mark_saved()
    return viewer


def replay(
    log_path: str,
    *,
    frames: int | None = None,
    screenshot: str | None = None,
    scenario: str | None = None,
) -> int:
    """`tacgrid replay RUN.jsonl` in a window (``scenario``: the log's scenario file)."""
    return ReplayViewer(log_path, scenario).run(frames, screenshot)


def render_scenario(
    source: str,
    out: str,
    *,
    system: str | None = None,
    scale: float = 1.0,
    walls: bool = True,
) -> tuple[int, int]:
    """`tacgrid render`: the map (and a scenario's tokens) to a PNG, no window.

    The image is drawn at ``scale`` directly (tokens too), and always written as a PNG,
    whatever ``out``'s name ends in; an image over the renderer's budget is refused.
    """
    if is_map_source(source):  # .tmx, .tmj/.json, WORLD.world#NAME
        from engine.viewer.render import render_to_file

        return render_to_file(source, out, scale=scale, walls=walls)
    scale = check_scale(scale, "--scale")
    scenario = open_source(source, system)
    pygame.font.init()
    model = scenario.model
    g = model.grid
    check_output(g, scale)
    surf = render_banded(model, render_source(model, scenario.tiled), scale=scale, walls=walls)
    radius = max(4, int(min(g.tile_width, g.tile_height) * 0.36))
    if scale != 1.0:
        radius = max(2, round(radius * scale))
    font = pygame.font.Font(None, max(12, radius))
    labels = draw.short_labels([spec.id for spec in scenario.tokens])
    fan = draw.fan_out({spec.id: spec.cell for spec in scenario.tokens}, radius, radius * 0.6)
    for spec in scenario.tokens:
        x, y = g.cell_center(spec.cell)
        dx, dy, size = fan[spec.id]
        x, y = x * scale + dx, y * scale + dy
        r = max(2, round(size))
        colour = SIDE_COLOURS.get(spec.side, (90, 200, 120))
        pygame.draw.circle(surf, colour, (x, y), r)
        pygame.draw.circle(surf, (20, 20, 20), (x, y), r, 1)
        if r >= 6:
            label = draw.outlined(font, labels[spec.id], (255, 255, 255), (0, 0, 0))
            surf.blit(label, label.get_rect(center=(x, y)))
    save_png(surf, out)
    return surf.get_size()
