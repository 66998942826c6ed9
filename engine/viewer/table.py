"""The GM's table: what a GM needs to run a session in the viewer, beside moving tokens.

* tokens: N adds one at the hovered cell (a form: the palette of the scenario's sides and
  every stat of the system), E edits the selected token's stats, side and conditions,
  Delete removes it, dragging a token with the left button puts it on another cell; C
  gives it acts, actions besides moving taken every turn (:mod:`engine.viewer.acts`);
* threat: K hatches the cells any token of another side reaches this turn
  (:mod:`engine.viewer.threat`);
* turn order: shown in the panel; PageUp/PageDown move the selected token earlier or
  later, D delays it to the end of the round's order;
* measuring: M, then drag between two cells (or Shift+drag at any time): distance, time,
  checks and odds for the selected token, by its system's rules; Space or a right click while
  dragging drops a waypoint (Backspace takes the last back), as Drag Ruler does: the route
  through them is priced as one plan as the mouse moves; Space then walks the selected token
  along it from its cell (:meth:`Viewer.walk_selected`: the turn loop's walk, checks rolled),
  the rest of a route the turn cuts short left measured for the next turn;
  and the straight line's length with the walls and blocked cells that cut it
  (:mod:`engine.sight`);
* risk: where the quickest and the safest path differ, hover draws both (the safest
  dashed) and the panel gives both; ``,`` and ``.`` set "prefer safe below p = X", and a
  click follows the chosen one;
* doors: a click on a door's line (even beside a token) opens or closes it; walls, windows
  and doors are drawn over the map (doors brown when shut, dashed when open);
* sessions: Ctrl+S saves the table (:mod:`engine.viewer.session`), Ctrl+O reopens the saved
  file, a session file dropped on the window opens; after each event the table is
  autosaved to a sibling file, offered (R recovers, X discards) on the next open.

Every edit is an event of the simulation's log (``token_add``, ``token_edit``,
``token_remove``, ``place``, ``order``, ``door``), undone by Ctrl+Z like a move.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

import pygame

from engine.grid import Cell
from engine.mapmodel import Wall
from engine.movement import map_cell
from engine.search import PathAnswer
from engine.sight import Sightline, sightline
from engine.viewer import session as sessions
from engine.viewer.acts import ActPicker
from engine.viewer.draw import DIM, TEXT, dashed, draw_walls, outlined
from engine.viewer.measure import RiskChoice, measure, risk_choice
from engine.viewer.pace import next_pace
from engine.viewer.threat import ThreatView
from engine.viewer.tokens_edit import CHOICES, TokenForm, add_form, apply_form, edit_form
from engine.walls import door_at

FORM = (255, 220, 120)
ERROR = (255, 120, 110)
MEASURE = (120, 255, 200)
SAFE = (90, 200, 255)
#: Spawn points' corner brackets and names.
SPAWN = (245, 235, 200)
#: The form's buttons, a panel line each: a click on one does it.
FORM_APPLY = "[apply: Enter]"
FORM_CANCEL = "[cancel: Esc]"
#: How near (screen pixels) a click must fall to a door's line to open or close it.
DOOR_PICK = 7

#: Frames the cursor rests on a cell before its quickest and safest paths are searched.
REST_FRAMES = 8

HELP = [
    ("N / E / Delete", "add a token here / edit / remove the selected"),
    ("C, then 1-9 / 0", "acts: the selected token takes one more each turn / none"),
    ("drag a token", "put it on another cell (no checks)"),
    ("M, Shift+drag", "measure between two cells"),
    ("Space, right click", "while measuring: a waypoint; after: walk the route"),
    ("V", "the selected token's next pace"),
    ("click a door", "open / close it"),
    ("PgUp/PgDn, D", "turn order: earlier / later, delay"),
    ("K", "threat: cells any opposing token reaches this turn"),
    (", .", "prefer safe below p = X (down / up)"),
    ("Ctrl+S / Ctrl+O", "save the session / reopen it"),
    ("B, then drag", "terrain brush: paint (1-9, [ ] pick; Ctrl+Z undo a stroke)"),
]


class GMTable:
    """The table's state beside the simulation, and its keys, panel lines and drawing."""

    def __init__(self, viewer: Any) -> None:
        self.v = viewer
        self.form: TokenForm | None = None
        #: The chooser of the selected token's acts (C): actions besides moving.
        self.acts = ActPicker(viewer)
        #: The enemy-threat view (K): what the other sides reach this turn.
        self.threat = ThreatView()
        self.measuring = False
        self.measure_from: Cell | None = None
        self.measure_to: Cell | None = None
        self.measured: PathAnswer | str | None = None  # the path, or why there is none
        #: The measuring drag's waypoints (Space, a right click), and whether it is on.
        self.waypoints: list[Cell] = []
        self.measure_drag = False
        self.safe_below: float | None = None
        self.session_path: str | None = None
        self.autosave_to: str | None = None
        self.recovery: str | None = None
        self.drag: tuple[str, Cell] | None = None
        self.version = 0
        self.read_only = False
        self._saved_key: Any = self._event_key()
        self._risk_key: Any = None
        self._risk: RiskChoice | None = None
        self._sight_key: Any = None
        self._sight: Sightline | None = None
        self._rest_cell: Cell | None = None
        self._rest_frames = 0

    # ----------------------------------------------------------------- events

    def record(self, change: Callable[[], Any]) -> Any:
        """Run one edit of the simulation as an undoable step (nothing kept if it raises)."""
        v = self.v
        point = v._checkpoint()
        got = change()
        v.undo.append(point)
        v.redo.clear()
        v._invalidate()
        self.version += 1
        return got

    def remove_selected(self) -> None:
        tid = self.v.selected
        if tid is None:
            return
        self.record(lambda: self.v.sim.remove_token(tid))
        order = self.v.sim.order
        self.v.select(order[0] if order else None)
        self.v.moved.discard(tid)
        self.v.message = f"removed {tid}"

    def place(self, tid: str, cell: Cell) -> bool:
        v = self.v
        if v.token_at(cell) is not None:
            v.message = f"cell {cell[0]},{cell[1]} is taken"
            return False
        t = v.model.terrain_at(cell)
        self.record(lambda: v.sim.place_token(tid, cell))
        v.message = f"{tid} put on {cell[0]},{cell[1]} ({t.name})"
        return True

    def reorder(self, delta: int) -> None:
        v = self.v
        tid = v.selected
        order = list(v.sim.order)
        if tid not in order:
            return
        i = order.index(tid)
        j = max(0, min(len(order) - 1, i + delta))
        if i == j:
            return
        order.insert(j, order.pop(i))
        self.record(lambda: v.sim.set_order(order, "reorder"))
        v.message = f"{tid}: turn {j + 1} of {len(order)}"

    def delay(self) -> None:
        v = self.v
        tid = v.selected
        order = list(v.sim.order)
        if tid not in order:
            return
        order.append(order.pop(order.index(tid)))
        self.record(lambda: v.sim.set_order(order, "delay"))
        v.message = f"{tid} delays: acts last"

    def door_near(self, pos: tuple[int, int]) -> Wall | None:
        """The door whose line passes within :data:`DOOR_PICK` screen pixels of ``pos``."""
        v = self.v
        if pos[0] >= v.view_size[0]:
            return None
        wx, wy = v.camera.to_world(*pos)
        # Within DOOR_PICK screen pixels, but never past a quarter of a cell: a click on a
        # token's middle still picks the token, one on the door's line the door.
        g = v.model.grid
        within = min(DOOR_PICK / v.camera.zoom, min(g.tile_width, g.tile_height) / 4)
        return door_at(v.sim.model, wx, wy, within)

    def toggle_door(self, door: Wall) -> None:
        """Open a shut door or shut an open one: event ``door``, undoable."""
        v = self.v
        now = not v.sim.door_open(door.id)
        self.record(lambda: v.sim.set_door(door.id, now))
        v.message = f"{door.name or f'door {door.id}'} {'opened' if now else 'shut'}"

    def set_threshold(self, delta: float) -> None:
        x = (self.safe_below or 0.0) + delta
        x = round(max(0.0, min(1.0, x)), 2)
        self.safe_below = x if x > 0 else None
        self._risk_key = None
        self.version += 1
        self.v.message = (
            "always the quickest path"
            if self.safe_below is None
            else f"prefer the safest path below p = {self.safe_below:.2f}"
        )

    # ----------------------------------------------------------------- measuring

    def _graph(self) -> Any:
        v = self.v
        if v.selected is None:
            return None
        return v.reach_of(v.selected).graph

    def do_measure(self, a: Cell, b: Cell) -> PathAnswer | str | None:
        """The quickest path from ``a`` to ``b`` (:func:`measure`), or why there is none."""
        graph = self._graph()
        self.measure_from, self.measure_to = a, b
        if graph is None:
            self.measured = "select a token to measure for"
        else:
            self.measured = measure(graph, a, b, self.waypoints)
        self.version += 1
        return self.measured

    def drop_waypoint(self, cell: Cell | None) -> None:
        """A waypoint of the measuring drag at ``cell`` (the route is re-priced)."""
        if cell is None or self.measure_from is None:
            return
        if cell != (self.waypoints[-1] if self.waypoints else self.measure_from):
            self.waypoints.append(cell)
            self.do_measure(self.measure_from, cell)

    def route_key(self, k: int) -> bool:
        """Space and Backspace for routes: while dragging, drop a waypoint or take the last
        back; after it, Space walks the selected token along the measured route from its
        cell. False where the key is not the route's."""
        v = self.v
        if self.measure_drag and k == pygame.K_SPACE:
            self.drop_waypoint(self.measure_to)
            return True
        if self.measure_drag and k == pygame.K_BACKSPACE and self.waypoints:
            self.waypoints.pop()
            if self.measure_from is not None and self.measure_to is not None:
                self.do_measure(self.measure_from, self.measure_to)
            return True
        m, tid = self.measured, v.selected
        if k != pygame.K_SPACE or not isinstance(m, PathAnswer) or tid is None:
            return False
        if tid in v.flying or v.sim.tokens[tid].state.cell != m.cells[0] or v.sim.outcome:
            return False
        cells = list(m.cells)
        self.measure_from = self.measure_to = self.measured = None
        self.waypoints = []
        before = len(v.sim.events)
        v.walk_selected(cells)
        walked = [e["path"] for e in v.sim.events[before:] if e["type"] == "move"]
        end = v.sim.tokens[tid].state.cell
        if walked and end is not None and end != cells[-1] and end == tuple(walked[0][-1]):
            # Cut short by the turn: the rest of the route, from where it stopped, for the
            # next Space (the waypoints not yet passed kept).
            at = len(walked[0]) - 1
            self.waypoints = [g.goal for g in m.legs[:-1] if g.step > at]
            self.do_measure(end, cells[-1])
        return True

    def sight(self) -> Sightline | None:
        """The measure's straight line and what cuts it (:mod:`engine.sight`), on the map
        with its doors as they stand; cached per end cells and event."""
        a, b = self.measure_from, self.measure_to
        if a is None or b is None or a == b:
            return None
        v = self.v
        key = (a, b, len(v.sim.events))
        if key != self._sight_key:
            model = v.sim.model
            size, unit = map_cell(model, v.sim.system)
            self._sight, self._sight_key = sightline(model, a, b, size, unit), key
        return self._sight

    # ----------------------------------------------------------------- risk

    def risk(self, compute: bool = True) -> RiskChoice | None:
        """The hovered cell's quickest and safest paths when they differ (cached; with
        ``compute`` False only what is cached: the search runs once the cursor rests)."""
        v = self.v
        if v.selected is None or v.hover is None or v.selected in v.flying:
            return None
        rep = v.reach_of(v.selected)
        key = (v._reach_key, v.hover, self.safe_below)
        if key != self._risk_key:
            if not compute:
                return None
            cell = v.sim.tokens[v.selected].state.cell
            self._risk = (
                None if cell is None else risk_choice(rep.graph, cell, v.hover, self.safe_below)
            )
            self._risk_key = key
        return self._risk

    def preferred(self, goal: Cell, path: list[Cell]) -> list[Cell]:
        """The path a click follows: the safest where the threshold chose it and it ends
        this turn, else ``path`` (the quickest)."""
        if self.safe_below is None or self.v.selected is None:
            return path
        v = self.v
        cell = v.sim.tokens[v.selected].state.cell
        if cell is None:
            return path
        got = risk_choice(v.reach_of(v.selected).graph, cell, goal, self.safe_below)
        if got is None or got.chosen != "safe" or float(got.safe.turns) > 1 + 1e-9:
            return path
        return list(got.safe.cells)

    # ----------------------------------------------------------------- sessions

    def save(self, path: str | None = None) -> str | None:
        from engine.errors import TacgridError

        v = self.v
        path = path or self.session_path or sessions.default_session_path(v.scenario)
        try:
            sessions.save_session(v, path)
        except TacgridError as exc:
            v.message = f"session not saved: {exc}"
            return None
        self.session_path = path
        self.autosave_to = sessions.autosave_path(path)
        self._saved_key = self._event_key()
        self.recovery = None
        if os.path.exists(self.autosave_to):
            try:
                os.unlink(self.autosave_to)  # the session file is now the newer
            except OSError:
                pass
        v.message = f"saved {path}"
        self.version += 1
        return path

    def open(self, path: str) -> bool:
        """Replace the table by a session file's (a message, not an exit, if it fails)."""
        from engine.errors import TacgridError

        v = self.v
        try:
            data, scenario = sessions.load_session(path)
            sessions.checked_apply(v, data, scenario, path)
        except TacgridError as exc:
            v.message = f"not opened: {exc}"
            return False
        if not path.endswith(sessions.AUTOSAVE_SUFFIX):
            self.session_path = path
            self.autosave_to = sessions.autosave_path(path)
        self._saved_key = self._event_key()
        self.form = None
        self.measured = None
        self.version += 1
        v.message = f"opened {os.path.basename(path)}"
        return True

    def recover(self) -> bool:
        path = self.recovery
        if path is None:
            return False
        self.recovery = None
        keep = self.session_path, self.autosave_to
        if not self.open(path):
            return False
        self.session_path, self.autosave_to = keep
        self._saved_key = None  # recovered, not yet saved
        self.v.message = f"recovered {os.path.basename(path)} (Ctrl+S keeps it)"
        return True

    def discard_recovery(self) -> None:
        if self.recovery is not None:
            try:
                os.unlink(self.recovery)
            except OSError:
                pass
            self.recovery = None
            self.v.message = "autosave discarded"
            self.version += 1

    def _event_key(self) -> Any:
        v = self.v
        ev = v.sim.events
        return (len(ev), id(ev[-1]) if ev else None, len(v.undo), len(v.redo), id(v.sim))

    def mark_saved(self) -> None:
        """The table as it is needs no autosave."""
        self._saved_key = self._event_key()

    def after_step(self) -> None:
        """Autosave when an event (or an undo) changed the table since the last write."""
        v = self.v
        if v.hover != self._rest_cell:
            self._rest_cell, self._rest_frames = v.hover, 0
        else:
            self._rest_frames += 1
            if self._rest_frames >= REST_FRAMES and self._risk_key != (
                v._reach_key,
                v.hover,
                self.safe_below,
            ):
                self.risk()
                self.version += 1  # the panel shows both paths
        key = self._event_key()
        if key == self._saved_key:
            return
        self._saved_key = key
        if self.autosave_to is None:
            return
        from engine.errors import TacgridError

        try:
            sessions.save_session(self.v, self.autosave_to, "autosave")
        except TacgridError as exc:
            self.v.message = f"autosave failed: {exc}"

    # ----------------------------------------------------------------- input

    def handle(self, ev: Any) -> bool:  # noqa: C901
        """Take the event if it is the table's (True: the viewer does nothing more)."""
        v = self.v
        if self.read_only:
            return False
        if ev.type == pygame.DROPFILE:
            path = getattr(ev, "file", "") or ""
            if sessions.is_session_path(path) or path.endswith(sessions.AUTOSAVE_SUFFIX):
                self.open(path)
            else:
                v.message = f"dropped {os.path.basename(path)}: not a session (.tacgrid, .json)"
            return True
        if ev.type == pygame.KEYDOWN:
            return self._key(ev)
        if ev.type == pygame.MOUSEBUTTONDOWN and ev.button == 1:
            if self.form is not None and ev.pos[0] >= v.view_size[0]:
                self._form_click(ev.pos[0] - v.view_size[0], ev.pos[1])
                return True
            cell = v.cell_at_screen(*ev.pos)
            if cell is None:
                return False
            shift = bool(pygame.key.get_mods() & pygame.KMOD_SHIFT) or bool(
                getattr(ev, "mod", 0) & pygame.KMOD_SHIFT
            )
            if self.measuring or shift:
                self.measure_from, self.measure_to, self.measured = cell, cell, None
                self.waypoints, self.measure_drag = [], True
                self.version += 1
                return True
            # A click on a door's line wins over the token beside it: doors are opened
            # from the next cell, where the token stands.
            door = self.door_near(ev.pos)
            if door is not None:
                self.toggle_door(door)
                return True
            tid = v.token_at(cell)
            self.drag = (tid, cell) if tid is not None else None
            return False
        if ev.type == pygame.MOUSEMOTION and self.measure_drag and self.measure_from is not None:
            cell = v.cell_at_screen(*ev.pos)
            if cell is not None and cell != self.measure_to:
                self.do_measure(self.measure_from, cell)  # re-priced as the mouse moves
            return False
        if ev.type == pygame.MOUSEBUTTONDOWN and ev.button == 3 and self.measure_drag:
            self.drop_waypoint(v.cell_at_screen(*ev.pos))
            return True
        if ev.type == pygame.MOUSEBUTTONUP and ev.button == 1:
            cell = v.cell_at_screen(*ev.pos)
            if self.measure_drag and self.measure_from is not None:
                self.measure_drag = False
                if cell is not None:
                    self.do_measure(self.measure_from, cell)
                return True
            drag, self.drag = self.drag, None
            if (
                drag is not None
                and cell is not None
                and cell != drag[1]
                and drag[0] in v.sim.tokens
            ):
                v.select(drag[0])
                self.place(drag[0], cell)
                return True
        return False

    def _key(self, ev: Any) -> bool:  # noqa: C901
        v = self.v
        k = ev.key
        ctrl = ev.mod & pygame.KMOD_CTRL
        if self.form is not None:
            self._form_key(ev)
            return True
        if self.acts.key(ev):
            self.version += 1
            return True
        if self.route_key(k):
            self.version += 1
            return True
        if k == pygame.K_s and ctrl:
            self.save()
        elif k == pygame.K_o and ctrl:
            if self.session_path and os.path.exists(self.session_path):
                self.open(self.session_path)
            else:
                v.message = "no session saved yet: Ctrl+S saves one (or drop a .tacgrid here)"
        elif self.recovery is not None and k == pygame.K_r:
            self.recover()
        elif self.recovery is not None and k == pygame.K_x:
            self.discard_recovery()
        elif ctrl:
            return False
        elif k == pygame.K_n:
            cell = v.hover
            if cell is None:
                v.message = "point at a cell, then N adds a token there"
            elif v.token_at(cell) is not None:
                v.message = f"cell {cell[0]},{cell[1]} is taken"
            else:
                self.form = add_form(v, cell)
        elif k == pygame.K_e and v.selected is not None:
            self.form = edit_form(v, v.selected)
        elif k == pygame.K_c:
            self.acts.toggle()
        elif k == pygame.K_DELETE and v.selected is not None:  # as the help says: not Backspace
            self.remove_selected()
        elif k == pygame.K_m and v.selected not in v.flying:
            self.measuring = not self.measuring
            self.measure_from = self.measure_to = self.measured = None
            self.waypoints = []
            v.message = "measure: drag between two cells (M again: off)" if self.measuring else ""
        elif k == pygame.K_v:
            next_pace(v)
        elif k == pygame.K_k:
            self.threat.on = not self.threat.on
            v.message = (
                "threat: cells any opposing token reaches this turn (K again: off)"
                if self.threat.on
                else ""
            )
        elif k == pygame.K_PAGEUP:
            self.reorder(-1)
        elif k == pygame.K_PAGEDOWN:
            self.reorder(1)
        elif k == pygame.K_d:
            self.delay()
        elif k == pygame.K_COMMA:
            self.set_threshold(-0.05)
        elif k == pygame.K_PERIOD:
            self.set_threshold(0.05)
        else:
            return False
        self.version += 1
        return True

    def _form_click(self, x: int, y: int) -> None:
        """A click on the panel while the form is open: a field's line picks it (on a
        choice, the left half steps back, the right half on), a button does its deed."""
        form = self.form
        assert form is not None
        for text, rect in getattr(self.v, "panel_text", []):
            if not rect.collidepoint(x, y):
                continue
            if text == FORM_APPLY:
                if apply_form(self.v, form):
                    self.form = None
                break
            if text == FORM_CANCEL:
                self.form = None
                break
            name = text[2:].split(":", 1)[0]
            if text[:2] in ("> ", "  ") and any(f.name == name for f in form.fields):
                was = form.fields[form.index].name
                form.pick(name)
                if name in CHOICES and was == name:
                    form.cycle_side(-1 if x < rect.left + rect.width // 2 else 1)
                break
        self.version += 1

    def _form_key(self, ev: Any) -> None:
        form = self.form
        assert form is not None
        k = ev.key
        if k == pygame.K_ESCAPE:
            self.form = None
        elif k in (pygame.K_RETURN, pygame.K_KP_ENTER):
            if apply_form(self.v, form):
                self.form = None
        elif k in (pygame.K_UP,) or (k == pygame.K_TAB and ev.mod & pygame.KMOD_SHIFT):
            form.move(-1)
        elif k in (pygame.K_DOWN, pygame.K_TAB):
            form.move(1)
        elif k in (pygame.K_LEFT, pygame.K_RIGHT):
            form.cycle_side(1 if k == pygame.K_RIGHT else -1)
        elif k == pygame.K_BACKSPACE:
            form.backspace()
        elif getattr(ev, "unicode", ""):
            form.type_text(ev.unicode)
        self.version += 1

    # ----------------------------------------------------------------- the panel

    def panel_lines(self) -> list[tuple[str, tuple[int, int, int]]]:  # noqa: C901
        """The table's lines in the side panel: the form, a recovery offer, the measure,
        the risk choice, the turn order."""
        v = self.v
        out: list[tuple[str, tuple[int, int, int]]] = []
        if self.recovery is not None:
            out.append((f"autosave found: {os.path.basename(self.recovery)}", FORM))
            out.append(("  R recovers it, X discards it", FORM))
        form = self.form
        if form is not None:
            title = "new token" if form.mode == "add" else f"edit {form.tid}"
            out.append((f"{title} (click a field, or Up/Down)", FORM))
            for i, f in enumerate(form.fields):
                mark = ">" if i == form.index else " "
                value = f.value or ("default" if f.name == "pace" else "")
                if f.name in CHOICES:
                    value = f"< {value} >"
                out.append(
                    (
                        f"{mark} {f.name}: {value}" + ("_" if i == form.index else ""),
                        TEXT if i == form.index else DIM,
                    )
                )
            out.append((FORM_APPLY, FORM))
            out.append((FORM_CANCEL, FORM))
            cur = form.fields[form.index]
            if cur.help:
                out.append((f"  {cur.help[:120]}", DIM))
            if form.error:
                for i in range(0, min(len(form.error), 180), 45):
                    out.append((form.error[i : i + 45], ERROR))
        out.extend(self.acts.lines())
        if self.measuring or self.measured is not None:
            out.append(("measure" + (" (M: off)" if self.measuring else ""), MEASURE))
            m = self.measured
            if isinstance(m, str):
                out.append((f"  {m[:60]}", ERROR))
            elif m is not None:
                a, b = self.measure_from, self.measure_to
                assert a is not None and b is not None
                out.append(
                    (
                        f"  {a[0]},{a[1]} -> {b[0]},{b[1]}: {m.distance} {m.unit}, "
                        f"{float(m.turns):.3g} turns",
                        MEASURE,
                    )
                )
                checks = [s["check"] for s in m.steps if s["check"]]
                out.append(
                    (
                        f"  {len(checks)} check{'' if len(checks) == 1 else 's'}, "
                        f"p(no failure) {100 * float(m.p_no_failure):.1f}%",
                        MEASURE,
                    )
                )
                for ch in checks[:4]:
                    out.append((f"    {ch['what']} {100 * ch['p_success']:.0f}%", DIM))
                for i, leg in enumerate(m.legs[:6]):
                    out.append(
                        (f"  leg {i + 1} to {leg.goal[0]},{leg.goal[1]}: {leg.turns:.3g} t", DIM)
                    )
                if self.measure_drag:
                    out.append(("  Space or right click: a waypoint here", DIM))
                elif v.selected is not None and v.sim.tokens[v.selected].state.cell == a:
                    out.append(("  Space: walk it", DIM))
            line = self.sight()
            if line is not None:
                out.append((f"  {line.text()}", MEASURE if line.clear else ERROR))
        risk = self.risk(compute=False)
        if risk is not None:
            quick, safe = risk.fast, risk.safe
            out.append(
                (
                    f"quickest: {float(quick.turns):.3g} t, "
                    f"p {100 * float(quick.p_no_failure):.1f}%"
                    + (" - a click takes it" if risk.chosen == "fast" else ""),
                    TEXT,
                )
            )
            out.append(
                (
                    f"safest (dashed): {float(safe.turns):.3g} t, "
                    f"p {100 * float(safe.p_no_failure):.1f}%"
                    + (" - a click takes it" if risk.chosen == "safe" else ""),
                    SAFE,
                )
            )
        if self.safe_below is not None:
            out.append((f"prefer safe below p = {self.safe_below:.2f}", SAFE))
        out.append(("turn order (PgUp/PgDn, D delays)", TEXT))
        for i, tid in enumerate(v.sim.order[:12]):
            mark = ">" if tid == v.selected else " "
            done = " - moved" if tid in v.moved else ""
            out.append((f"{mark}{i + 1}. {tid} ({v.sim.specs[tid].side}){done}", DIM))
        return out

    # ----------------------------------------------------------------- drawing

    def draw_walls(self, view: pygame.Surface) -> None:
        """Walls, windows and doors as they stand now (doors opened in play included)."""
        v = self.v
        walls = v.sim.model.walls
        if walls:
            vw, vh = view.get_size()
            x0, y0 = v.camera.to_world(0, 0)
            x1, y1 = v.camera.to_world(vw, vh)
            width = max(2, round(4 * v.camera.zoom))
            draw_walls(view, walls, v.camera.to_screen, width, (x0, y0, x1, y1))

    def _draw_sight(
        self, view: pygame.Surface, a: tuple[float, float], b: tuple[float, float]
    ) -> None:
        """The measure's straight line: dashed, red where something cuts it, the first
        blocked cell crossed out."""
        line = self.sight()
        if line is None:
            return
        dashed(view, (10, 10, 10), [a, b], 5)
        dashed(view, MEASURE if line.clear else ERROR, [a, b], 3)
        for cell in line.blocked[:1]:
            x, y = self.v.cell_screen(cell)
            pygame.draw.line(view, ERROR, (x - 6, y - 6), (x + 6, y + 6), 3)
            pygame.draw.line(view, ERROR, (x - 6, y + 6), (x + 6, y - 6), 3)

    def draw_spawns(self, view: pygame.Surface) -> None:
        """The map's spawn points (with its objects, O) as corner brackets in the cell and
        the spawn's name: a place, unlike a token's disc (Tiled's pin looked like a ghost
        token); left out where a token stands."""
        v = self.v
        if not v.map_surface.objects:
            return
        vw, vh = view.get_size()
        grid = v.model.grid
        width = max(1, min(3, round(2 * v.camera.zoom)))
        for spawn in v.model.spawns:
            if v.token_at(spawn.cell) is not None:
                continue
            x, y = v.cell_screen(spawn.cell)
            if not (-64 <= x <= vw + 64 and -64 <= y <= vh + 64):
                continue
            corners = [v.camera.to_screen(*p) for p in grid.cell_corners(spawn.cell)]
            inset = [(cx + (x - cx) * 0.18, cy + (y - cy) * 0.18) for cx, cy in corners]
            n = len(inset)
            for i, (px, py) in enumerate(inset):
                for qx, qy in (inset[i - 1], inset[(i + 1) % n]):
                    end = (px + (qx - px) * 0.3, py + (qy - py) * 0.3)
                    pygame.draw.line(view, (20, 20, 20), (px, py), end, width + 2)
                    pygame.draw.line(view, SPAWN, (px, py), end, width)
            size = abs(inset[0][0] - inset[n // 2][0]) + abs(inset[0][1] - inset[n // 2][1])
            if size >= 24:
                label = outlined(v.small, spawn.id[:10], SPAWN, (0, 0, 0))
                view.blit(label, label.get_rect(center=(x, y)))

    def draw(self, view: pygame.Surface) -> None:
        """The measure line and the safest path (dashed) over the map."""
        v = self.v
        risk = self.risk(compute=False)
        if risk is not None:
            pts = [v.cell_screen(c) for c in risk.safe.cells]
            dashed(view, SAFE, pts, 3)
            if risk.chosen == "safe":
                pygame.draw.circle(view, SAFE, pts[-1], 9, 2)
            safe = risk.safe
            text = f"safest {float(safe.turns):.2f} t, p {100 * float(safe.p_no_failure):.0f}%" + (
                " (click)" if risk.chosen == "safe" else ""
            )
            v.labels.put(view, v.font.render(text, True, SAFE, (0, 0, 0)), pts[-1], text)
        if self.measure_from is not None and self.measure_to is not None:
            m = self.measured
            if isinstance(m, PathAnswer):
                pts = [v.cell_screen(c) for c in m.cells]
            else:
                pts = [v.cell_screen(self.measure_from), v.cell_screen(self.measure_to)]
            line = self.sight()
            if len(pts) > 1 and (isinstance(m, PathAnswer) or line is None):
                pygame.draw.lines(view, (10, 10, 10), False, pts, 5)
                pygame.draw.lines(view, MEASURE, False, pts, 3)
            self._draw_sight(view, pts[0], pts[-1])
            for p in (pts[0], pts[-1]):
                pygame.draw.circle(view, MEASURE, p, 6, 2)
            for cell in self.waypoints:
                pygame.draw.circle(view, MEASURE, v.cell_screen(cell), 5)
            if isinstance(m, PathAnswer):
                text = f"{m.distance} {m.unit}, {float(m.turns):.2f} t"
                v.labels.put(view, v.font.render(text, True, MEASURE, (0, 0, 0)), pts[-1], text)
