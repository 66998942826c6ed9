"""A cell's terrain: the record the rules read, and the movement modes and difficulties it
names (MAP-FORMAT.md).

The rule systems need only this from a map (their hooks take a :class:`Terrain`), so it
lives apart from :mod:`engine.mapmodel`, which re-exports it: listing the systems
(``tacgrid systems``) loads no map model.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum


class Mode(StrEnum):
    """The movement mode a cell forces (MAP-FORMAT.md, ``move``)."""

    WALK = "walk"
    CRAWL = "crawl"
    SWIM = "swim"
    CLIMB = "climb"
    LADDER = "ladder"
    GAP = "gap"
    AIR = "air"
    BLOCKED = "blocked"


MODES: tuple[str, ...] = tuple(m.value for m in Mode)


def standing_mode(move: str) -> str:
    """The mode of a token standing on a cell of ``move``: that mode (walk on a pit's
    floor, or where no token may go)."""
    return "walk" if move in ("blocked", "gap") else move


DIFFICULTIES: tuple[str, ...] = (
    "none",
    "very_easy",
    "easy",
    "moderate",
    "difficult",
    "very_difficult",
    "heroic",
)


@dataclass(frozen=True)
class Terrain:
    """Everything the rules need to know about one cell.

    ``height`` is in the map's ``cell_unit``; ``None`` means the default (one cell for
    ``climb``/``ladder``, 0 otherwise), resolved by :meth:`height_in_cells`.
    """

    name: str = "open"
    move: str = "walk"
    difficulty: str = "none"
    dn: int | None = None
    cost: float = 1.0
    height: float | None = None
    fall: str = "hard"
    #: Extra cells of movement to enter (MAP-FORMAT.md ``cost_add``), after ``cost``.
    cost_add: float = 0.0

    def height_in_cells(self, cell_size: float) -> float:
        """Vertical extent in cells: a climb's length, a gap's depth, an obstacle's height."""
        if self.height is None:
            return 1.0 if self.move in ("climb", "ladder") else 0.0
        return self.height / cell_size
