"""Flight states, choices, turn records and goals: the words flight is written in (RULES.md 6).

A flier's state is a :class:`FlightState` (cell, heading, speed, altitude, landed, the face it
crosses next on a vertex heading, and what a system adds). Each turn the flier makes one
:class:`FlightChoice`; its rule system's rules turn that into the next state and a
:class:`TurnRecord` of the cells entered and the events. A :class:`Goal` is what a plan must
do. Re-exported by :mod:`engine.flight.model`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from engine.exact import jsonable
from engine.grid import Cell

#: A flight state as a plain tuple, in :class:`FlightState`'s field order (the planner's key).
Key = tuple[Cell, int, int, int, bool, int, int, int]
Turns = tuple[tuple[int, int], ...]

#: Cells a flier cannot land on: nothing to stand on, or nothing but wall.
UNLANDABLE = ("air", "gap", "blocked")

# =============================================================================================
# States, choices, records
# =============================================================================================


@dataclass(frozen=True)
class FlightState:
    """Where a flier is and how it moves.

    ``heading``: degrees clockwise from up. ``speed``: cells per turn (Mythmaster: its
    momentum; Speedpoints: its current airspeed). A landed flier's ``speed`` is its ground
    rate of the turn before (Mythmaster's take-off speed; 0 when it stood still).
    ``altitude``: metres above the ground (Speedpoints; 0 elsewhere). ``face``: the face the
    next step crosses (equal to ``heading`` on a face heading; on a vertex heading, one of
    the two faces beside it). ``modifier``: Speedpoints' airspeed modifier (climbs take,
    descents give). ``downed``: Mythmaster actions still needed to recover from a trip.
    """

    cell: Cell
    heading: int
    speed: int = 0
    altitude: int = 0
    landed: bool = False
    face: int = -1  # -1: not set yet (the rules fill it in)
    modifier: int = 0
    downed: int = 0

    def key(self) -> Key:
        return (
            self.cell,
            self.heading,
            self.speed,
            self.altitude,
            self.landed,
            self.face,
            self.modifier,
            self.downed,
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "cell": list(self.cell),
            "heading": self.heading,
            "speed": self.speed,
            "altitude": self.altitude,
            "landed": self.landed,
            "face": self.face,
            "modifier": self.modifier,
            "downed": self.downed,
        }


def state_of(key: Key) -> FlightState:
    return FlightState(*key)


def state_from_dict(d: dict[str, Any]) -> FlightState:
    """The inverse of :meth:`FlightState.to_dict` (an event log's flight state)."""
    return FlightState(
        (int(d["cell"][0]), int(d["cell"][1])),
        int(d["heading"]),
        int(d.get("speed", 0)),
        int(d.get("altitude", 0)),
        bool(d.get("landed", False)),
        int(d.get("face", -1)),
        int(d.get("modifier", 0)),
        int(d.get("downed", 0)),
    )


@dataclass(frozen=True)
class FlightChoice:
    """One turn's choice. Each system reads the fields it has and refuses the others.

    Mythmaster: ``take_off``/``land`` (1 action each), ``maintain`` (1), ``accelerate`` n
    or ``decelerate`` n (n actions; at most one of the three speed actions), ``turns`` (the
    turn's total up to 30 degrees free, each further 30 one action; on square maps each 45
    counts as 30), ``recover`` (actions spent getting up after a trip).
    Speedpoints: ``climb`` metres (negative: descend), ``spaces`` to move (None: all of the
    airspeed), ``turns`` (free), ``take_off``/``land`` (no action cost).
    """

    take_off: bool = False
    land: bool = False
    maintain: bool = False
    accelerate: int = 0
    decelerate: int = 0
    turns: Turns = ()
    recover: int = 0
    climb: int = 0
    spaces: int | None = None

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for name in (
            "take_off",
            "land",
            "maintain",
            "accelerate",
            "decelerate",
            "recover",
            "climb",
        ):
            value = getattr(self, name)
            if value:
                out[name] = value
        if self.turns:
            out["turns"] = [list(t) for t in self.turns]
        if self.spaces is not None:
            out["spaces"] = self.spaces
        return out

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> FlightChoice:
        """The inverse of :meth:`to_dict` (an event log's choice)."""
        return cls(
            take_off=bool(d.get("take_off", False)),
            land=bool(d.get("land", False)),
            maintain=bool(d.get("maintain", False)),
            accelerate=int(d.get("accelerate", 0)),
            decelerate=int(d.get("decelerate", 0)),
            turns=tuple((int(k), int(t)) for k, t in d.get("turns", ())),
            recover=int(d.get("recover", 0)),
            climb=int(d.get("climb", 0)),
            spaces=None if d.get("spaces") is None else int(d["spaces"]),
        )


@dataclass(frozen=True)
class TurnRecord:
    """One turn flown: the choice, the actions it spent, the speed flown, the cells entered
    in order, the states before and after, and the events (the choice first)."""

    turn: int
    choice: FlightChoice
    actions: tuple[str, ...]
    speed: int
    cells: tuple[Cell, ...]
    before: FlightState
    state: FlightState
    events: tuple[dict[str, Any], ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {
            "turn": self.turn,
            "actions": list(self.actions),
            "speed": self.speed,
            "cells": [list(c) for c in self.cells],
            "state": self.state.to_dict(),
            "events": jsonable(list(self.events)),
        }


@dataclass(frozen=True)
class Goal:
    """What a plan must do: enter ``cell`` (optionally on ``heading``: the heading of the
    step that enters it), or with ``land`` end a move there and land safely (``heading``:
    the heading it lands with)."""

    cell: Cell
    land: bool = False
    heading: int | None = None
