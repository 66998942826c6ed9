"""A token as a scenario places it: who it is, where it starts and how it plays."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from engine.grid import Cell

__all__ = ["TokenSpec"]


@dataclass(frozen=True)
class TokenSpec:
    id: str
    side: str
    stats: dict[str, Any]
    cell: Cell
    policy: str
    pace: str | None = None
    target: str | None = None
    waypoints: tuple[Cell, ...] = ()
    conditions: tuple[str, ...] = ()
    #: A momentum flier's start (heading, speed, altitude; engine.sim.flight), or None.
    flight: dict[str, int] | None = None
    #: Cells across (engine.footprint): 2 = a 2x2 token on square maps, 7 hexes on hex maps.
    size: int = 1
    #: Actions besides moving it takes every turn (names of its system's ``acts``), priced by
    #: :meth:`RuleSystem.with_acts` at the start of each turn.
    acts: tuple[str, ...] = ()
