"""The viewer's flight controls (:class:`FlightControls`, mixed into the viewer): a flier
taken to the air (G), its turn's choice edited by key (W/S speed, [ ] turn, T take off,
L land), previewed and suggested, and flown (Space) through the turn loop's flight step."""

from __future__ import annotations

from dataclasses import replace
from typing import Any, Protocol

import pygame

from engine.flight import FlightChoice
from engine.grid import Cell
from engine.mapmodel import MapModel
from engine.sim import Simulation
from engine.sim.flight import fly_turn


class _Flier(Protocol):
    """What the flight controls read and change of the viewer."""

    sim: Simulation
    model: MapModel
    selected: str | None
    hover: Cell | None
    flying: dict[str, Any]
    facing: dict[str, int]
    pending: FlightChoice
    message: str
    preview_error: str
    anim: tuple[str, list[Cell], float] | None
    moved: set[str]
    undo: list[Any]
    redo: list[Any]
    _rules: dict[Any, Any]
    _preview_key: Any
    _preview: Any
    _plan_key: Any
    _plan: Any

    def _checkpoint(self) -> Any: ...

    def _invalidate(self) -> None: ...

    def flight_rules(self, tid: str) -> Any: ...

    def flight_preview(self) -> tuple[Any, Any] | None: ...

    def edit_choice(self, **change: Any) -> None: ...

    def fly_turn(self) -> bool: ...


class FlightControls:
    """A flier's turn in the viewer, from the keys to the flown turn (mixed into
    :class:`engine.viewer.app.Viewer`)."""

    anim: tuple[str, list[Cell], float] | None

    def flight_rules(self: _Flier, tid: str) -> Any:
        """The system's flight rules for this token (None: it cannot fly)."""
        key = (tid, tuple(sorted(self.sim.tokens[tid].stats.items())))
        got = self._rules.get(key)
        if got is None or got[0] is not self.model:  # made for another map (doors, a reload)
            hook = getattr(self.sim.system, "flight", None)
            got = self._rules[key] = (
                self.model,
                hook(self.sim.tokens[tid], self.model) if hook else None,
            )
        return got[1]

    def toggle_flight(self: _Flier) -> None:
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

    def edit_choice(self: _Flier, **change: Any) -> None:
        self.pending = replace(self.pending, **change)
        self._preview_key = None

    def flight_preview(self: _Flier) -> tuple[Any, Any] | None:
        """The selected flier's next turn under the pending choice: (state, record)."""
        tid = self.selected
        if tid is None or tid not in self.flying:
            return None
        key = (self.flying[tid].key(), self.pending)
        if key != self._preview_key:
            from engine.errors import TacgridError

            try:
                self._preview = self.flight_rules(tid).step(self.flying[tid], self.pending)
                self.preview_error = ""
            except TacgridError as exc:
                self._preview = None
                self.preview_error = str(exc)
            self._preview_key = key
        return self._preview

    def flight_suggestion(self: _Flier) -> Any:
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

    def fly_turn(self: _Flier) -> bool:
        """Space: fly the pending choice for the selected flier (its turn), its checks rolled
        as the turn loop rolls a flier's (:func:`engine.sim.flight.fly_turn`: a Speedpoints
        dive faster than is safe rolls its fall), each roll an event before the flight's."""
        tid = self.selected
        got = self.flight_preview()
        if tid is None or got is None:
            if self.preview_error:
                self.message = self.preview_error
            return False
        sim = self.sim
        self.undo.append(self._checkpoint())
        self.redo.clear()
        record, token, _ = fly_turn(
            sim.system, self.flight_rules(tid), sim.tokens[tid], self.flying[tid], self.pending,
            sim.dice,
        )  # fmt: skip
        sim.walker.log_rolls(tid)
        state = record.state
        sim._emit({"type": "flight", "token": tid, **record.to_dict()})
        token = token.moved(
            cell=state.cell,
            mode="walk" if state.landed else "air",
            flight=None if state.landed else state,
        )
        sim.tokens[tid] = token
        sim._emit({"type": "state", "token": tid, "state": token.state.to_dict()})
        self.facing[tid] = state.heading
        if record.cells:
            self.anim = (tid, [record.before.cell, *record.cells], 0.0)
        fell = any(ev.get("fell") for ev in record.events)
        if state.landed:
            self.flying.pop(tid, None)
            self.message = f"{tid} fell" if fell else f"{tid} landed"
        else:
            self.flying[tid] = state
            self.message = "; ".join(str(e.get("type")) for e in record.events[1:]) or ""
        self.pending = FlightChoice(maintain=True)
        self.moved.add(tid)
        self._invalidate()
        return True

    def _flight_key(self: _Flier, k: int) -> None:
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
