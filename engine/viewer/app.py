"""The GM viewer: the map, tokens, reach in speed bands, path preview, moves, undo, dice log.

This module holds the window's state, its events and the frame's order of layers; what
each layer draws is its own module (overlay: reach, path and flight; tokens; panel; the
GM's tools in table), as are the camera and the replay window (replay).

Mouse: left click selects a token, or moves the selected one to a reachable cell (its
checks are rolled on the way, into the dice log); right or middle drag pans; the wheel
zooms about the cursor. Keys are listed by the help overlay (H).

The window runs the same :class:`~engine.sim.Simulation` as headless batches, with every
token under the GM's hand: a move is that token's turn, ``Enter`` ends the round, ``A``
lets the scenario's policies play a round, ``Ctrl+Z``/``Ctrl+Y`` undo and redo.
"""

from __future__ import annotations

import os
from typing import Any

import pygame

from engine.flight import FlightChoice
from engine.grid import Cell
from engine.mapmodel import MapModel
from engine.query import Query
from engine.scenario import Scenario
from engine.search import PathAnswer, evaluate_path
from engine.sim import Simulation
from engine.tiled import TiledFile, is_map_source
from engine.viewer import draw
from engine.viewer.brush import Brush
from engine.viewer.camera import ZOOM_STEPS, Camera, snap_zoom
from engine.viewer.collayer import CollisionView
from engine.viewer.draw import CONTOUR_COLOURS
from engine.viewer.flying import FlightControls
from engine.viewer.measure import Reached
from engine.viewer.overlay import Overlay, draw_flight, draw_path, reach_overlay
from engine.viewer.panel import HELP, PANEL_W, draw_help, draw_panel, scroll_panel
from engine.viewer.render import MapChunks, SurfaceLRU, load_for_render, render_source
from engine.viewer.session import Checkpoint
from engine.viewer.table import GMTable
from engine.viewer.tokens import SIDE_COLOURS, draw_tokens, token_discs

#: The camera, the panel's width and keys, and the sides' colours live in their own
#: modules (camera, panel, tokens); still importable from here. The commands' doors
#: (view, open_table, render_scenario) are in engine.viewer.launch, the replay window in
#: engine.viewer.replay.
__all__ = [
    "HELP",
    "PANEL_W",
    "SIDE_COLOURS",
    "ZOOM_STEPS",
    "Camera",
    "Viewer",
    "map_scenario",
    "open_source",
    "snap_zoom",
]

BG = (24, 26, 30)


#: A scenario for a bare map now lives in engine.scenario; still importable from here.
map_scenario = Scenario.for_map


class Viewer(FlightControls):
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
        #: The map's collision layers: hidden, their cells hatched, or as drawn (I).
        self.collision = CollisionView()
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
        self._reach: Reached | None = None
        self._overlay: Overlay | None = None
        self._overlay_version = 0
        # Nothing is cached per zoom here any more (map chunks are keyed by zoom); event
        # handling still clears this when the zoom changes.
        self._scaled: Any = None
        self._hover_key: Any = None
        self._hover_path: PathAnswer | None = None
        self._panel: pygame.Surface | None = None
        self._panel_key: Any = None
        self.flying: dict[str, Any] = {}
        self.pending = FlightChoice()
        self._rules: dict[Any, Any] = {}
        self._preview_key: Any = None
        self._preview: Any = None
        self.preview_error = ""
        self._plan_key: Any = None
        self._plan: Any = None
        self._mtime = self._map_mtime()
        self._last_poll = 0.0
        self.panel_scroll = 0  # the side panel scrolls with the wheel over it
        self.panel_content = 0
        self.pointer: tuple[int, int] = (0, 0)
        self.labels = draw.LabelPlacer(pygame.Rect(0, 0, 1, 1))
        self.fit()
        self.table = GMTable(self)  # the GM's tools: tokens, order, measure, sessions
        self.brush = Brush(self)  # the terrain brush (B)

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
        self.collision.apply(self.map_surface)
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

    def reach_of(self, tid: str) -> Reached:
        """Reach of a token in bands (1 turn) and 2-/3-turn contours, cached per state: the
        query front's (engine.query), with the map, its size and the tokens in its way as
        the turn loop sees them (an ally's cell is passed, never an end)."""
        tok = self.sim.tokens[tid]
        spec = self.sim.specs[tid]
        model = self.sim.model  # the map with the doors as they stand
        occ = self.sim.occupancy_of(tid)  # other tokens in the way
        key = (tid, tok.state, id(model), spec.size, spec.pace, spec.acts, occ)
        if key != self._reach_key or self._reach is None:
            system = self.sim.system
            cell = tok.state.cell
            assert cell is not None
            # The pace a click moves it at (its spec's, else the system's default; what its
            # acts leave of it): the hover path is the move a click makes.
            pace = self.sim.pace_of(tid)
            query = Query(
                model, system, tok, pace=pace, size=spec.size, in_the_way=occ, acts=spec.acts
            )
            found = query.reach(cell, turns=3, pace=pace)
            rep = Reached(found, query.graph(found.pace, cell))
            self._reach, self._reach_key = rep, key
            self._overlay = None
        return self._reach

    def hover_path(self) -> PathAnswer | None:
        """The hovered cell's path from the cached tree (no new search)."""
        if self.selected is None or self.hover is None:
            return None
        rep = self.reach_of(self.selected)
        key = (self._reach_key, self.hover)
        if key != self._hover_key:
            cells = rep.answer.tree.path_to(self.hover)
            self._hover_path = evaluate_path(rep.graph, cells) if len(cells) > 1 else None
            self._hover_key = key
        return self._hover_path

    def _overlay_shapes(self) -> Overlay | None:
        """The selected token's reach as shapes in map pixels (cached per reach)."""
        if self.selected is None:
            return None
        rep = self.reach_of(self.selected)
        if self._overlay is None:
            self._overlay_version += 1
            self._overlay = reach_overlay(self.model.grid, rep.answer, self._overlay_version)
        return self._overlay

    def _overlay_chunk(self, overlay: Overlay, zoom: float, i: int, j: int) -> pygame.Surface:
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

    def _crossing_to(self, tree: Any, goal: Cell) -> bool:
        """Whether ``goal`` is a cell that takes more than a turn to cross, next to where the
        selected token gets this turn (or the one it is crossing to): a click starts or goes
        on with that crossing, over turns (docs/rules.md, "Rules in play")."""
        assert self.selected is not None
        if self.sim.tokens[self.selected].state.toward == goal:
            return True
        cells = tree.path_to(goal)
        if len(cells) < 2:
            return False
        before = tree.turns(cells[-2])
        return before is not None and before <= 1 and tree.turns(goal) - before > 1

    def move_selected(self, goal: Cell) -> bool:
        """Move the selected token to ``goal`` if it is reachable this turn."""
        if self.selected is None or self.sim.outcome is not None:
            return False
        tree = self.reach_of(self.selected).answer.tree
        t = tree.turns(goal)
        if t is None or (t > 1 and not self._crossing_to(tree, goal)):
            self.message = "out of reach this turn"
            return False
        return self.walk_selected(self.table.preferred(goal, tree.path_to(goal)))

    def walk_selected(self, path: list[Cell]) -> bool:
        """The selected token walks ``path`` (the turn loop's walk: its checks rolled as in
        play), as far as this turn takes it; the message says where it stopped short."""
        tid = self.selected
        assert tid is not None
        self.undo.append(self._checkpoint())
        self.redo.clear()
        before = len(self.sim.events)
        self.sim.take_turn(tid, path)
        new = self.sim.events[before:]
        walked = next((e["path"] for e in new if e["type"] == "move" and e["token"] == tid), None)
        if walked and len(walked) > 1:
            cells: list[Cell] = [(c[0], c[1]) for c in walked]
            try:
                self.facing[tid] = self.model.grid.heading_between(cells[-2], cells[-1])
            except (ValueError, KeyError):
                pass
            self.anim = (tid, cells, 0.0)
        failed = [e for e in new if e["type"] == "check" and not e["success"]]
        end = self.sim.tokens[tid].state.cell
        short = end is not None and end != path[-1]
        stop = f"{tid} stops at {end[0]},{end[1]}: the turn is spent" if end and short else ""
        self.message = f"{tid}: failed {failed[-1]['what']}" if failed else stop
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

    def toggle_objects(self) -> None:
        """Show or hide the map's object layers (drawn as Tiled draws them)."""
        show = not self.map_surface.objects
        self.map_surface.show_objects(show)
        self.message = "map objects shown" if show else "map objects hidden (O shows them)"

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
        if (self.table.form is None and self.brush.handle(ev)) or self.table.handle(ev):
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
            self.pointer = ev.pos
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
            elif ev.button in (4, 5) and ev.pos[0] >= self.view_size[0]:
                pass  # the wheel's own event (MOUSEWHEEL) scrolls the panel
            elif ev.button == 4:
                self.camera.zoom_at(ev.pos[0], ev.pos[1], 1.15)
                self._scaled = None
            elif ev.button == 5:
                self.camera.zoom_at(ev.pos[0], ev.pos[1], 1 / 1.15)
                self._scaled = None
        elif ev.type == pygame.MOUSEBUTTONUP and ev.button in (2, 3):
            self.dragging = None
        elif ev.type == pygame.MOUSEWHEEL:
            pos = self.pointer  # where the last motion left the mouse
            if pos[0] >= self.view_size[0]:  # over the panel: scroll it
                scroll_panel(self, ev.y)
                return
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
        elif k == pygame.K_i and not ctrl:
            self.collision.toggle(self)
        elif self.selected in self.flying:
            self._flight_key(k)
        elif k in (pygame.K_LEFT, pygame.K_RIGHT, pygame.K_UP, pygame.K_DOWN):
            step = 60 / self.camera.zoom
            dx = {pygame.K_LEFT: -step, pygame.K_RIGHT: step}.get(k, 0)
            dy = {pygame.K_UP: -step, pygame.K_DOWN: step}.get(k, 0)
            self.camera.x += dx
            self.camera.y += dy

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
        self.collision.draw(self, view)
        self.brush.draw(view)
        self.table.draw_spawns(view)
        self.table.threat.draw(self, view)
        self.table.draw_walls(view)
        self.labels = draw.LabelPlacer(view.get_rect())  # map labels: none covers another
        for disc in token_discs(self):
            self.labels.block(disc)
        if self.selected in self.flying:
            draw_flight(self, view)
        else:
            draw_path(self, view)
        self.table.draw(view)
        layer = draw_tokens(self, view)
        self.token_labels, self.token_screen, self.tooltip = (
            layer.labels,
            layer.screen,
            layer.tooltip,
        )
        screen.blit(self._panel_surface(), (vw, 0))
        if self.show_help:
            self.help_rect = draw_help(self, screen)

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
            self.panel_scroll,
            self.collision.drawn,
        )
        if key == self._panel_key and self._panel is not None:
            return self._panel
        panel, self.panel_text, self.panel_content = draw_panel(self)
        self._panel, self._panel_key = panel, key
        return panel

    def legend(self) -> list[tuple[str, Any, str]]:
        """What the overlay on the map means, for the panel: the selected token's bands
        (its system's paces up to the one it moves at), the 2-/3-turn contours and the hover
        path's marks, the threat view's) and the map's collision layers'."""
        return self._reach_legend() + self.collision.legend(self)

    def _reach_legend(self) -> list[tuple[str, Any, str]]:
        if self.selected is None or self.selected in self.flying:
            return []
        rep = self.reach_of(self.selected)
        contours = list(CONTOUR_COLOURS) if rep.answer.cells else []
        # The paces up to the one it moves at (slowest first): none its acts rule out.
        bands = list(rep.answer.bands)
        if rep.answer.pace in bands:
            bands = bands[: bands.index(rep.answer.pace) + 1]
        return draw.legend_entries(bands, contours) + self.table.threat.legend(self)

    def dice_events(self) -> list[dict[str, Any]]:
        """The events the dice log lists (rolls and checks among them)."""
        return self.sim.events

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


def open_source(
    source: str,
    system: str | None = None,
    sets: dict[str, Any] | None = None,
    token: str | dict[str, Any] | None = None,
    *,
    window: bool = False,
) -> Scenario:
    """A scenario file, or a bare map with a GM token at each spawn (``token``: their stats).
    ``window``: the caller is the window, which also opens saved sessions (said in the error
    for a file that is none of these)."""
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

        return Scenario.for_map(source, system, sets, parse_token_spec(token or ""))
    raise ArgumentError(
        f"{source}: expected a Tiled map (.tmx, .tmj, WORLD.world#NAME), a Universal VTT "
        "map (.dd2vtt, .uvtt)"
        + (", a scenario .yaml or a saved session .tacgrid" if window else " or a scenario .yaml")
    )
