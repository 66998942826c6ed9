"""The enemy-threat view (K), as Wesnoth's "show enemy moves": every cell that a token of
another side than the selected one reaches this turn, at its own pace, with the map and
the tokens in its way as the turn loop sees them; drawn hatched in red under the tokens
and the hovered path, outlined, with its entry in the panel's legend.
"""

from __future__ import annotations

from typing import Any

import pygame

from engine.grid import Cell
from engine.query import Query
from engine.viewer.draw import boundary

THREAT = (235, 45, 45)
#: Hatch lines: their spacing and width in screen pixels.
HATCH_GAP = 9
HATCH_W = 3


def threat_cells(sim: Any, tid: str) -> dict[Cell, list[str]]:
    """Each cell a token of another side than ``tid``'s reaches this turn, and which
    tokens reach it (their own cells included)."""
    side = sim.specs[tid].side
    out: dict[Cell, list[str]] = {}
    for other in sim.order:
        spec = sim.specs[other]
        tok = sim.tokens[other]
        cell = tok.state.cell
        if spec.side == side or cell is None:
            continue
        pace = sim.pace_of(other)
        query = Query(
            sim.model,
            sim.system,
            tok,
            pace=pace,
            size=spec.size,
            in_the_way=sim.occupancy_of(other),
            acts=spec.acts,
        )
        found = query.reach(cell, turns=1, pace=pace)
        out.setdefault(cell, []).append(other)
        for reached, _, band in found.cells:
            if not band.startswith("turn"):
                out.setdefault(reached, []).append(other)
    return out


class ThreatView:
    """The threat view's state: on or off, and its cells cached per table state."""

    def __init__(self) -> None:
        self.on = False
        self._key: Any = None
        self._model: Any = None  # the map the cells were found on (a reload replaces it)
        self._cells: dict[Cell, list[str]] = {}
        self._hatch: pygame.Surface | None = None

    def cells(self, v: Any) -> dict[Cell, list[str]]:
        """The threatened cells for the selected token (empty with none selected)."""
        if not self.on or v.selected is None or v.selected not in v.sim.specs:
            return {}
        sim = v.sim
        key = (
            v.selected,
            sim.specs[v.selected].side,
            tuple((t, sim.tokens[t].state, sim.specs[t]) for t in sim.order),
            len(sim.events),
        )
        if key != self._key or sim.model is not self._model:
            self._cells = threat_cells(sim, v.selected)
            self._key, self._model = key, sim.model
        return self._cells

    def legend(self, v: Any) -> list[tuple[str, Any, str]]:
        if not self.on or v.selected is None:
            return []
        n = len({t for ts in self.cells(v).values() for t in ts})
        text = (
            f"threat: cells {n} opposing token{'' if n == 1 else 's'} reach this turn (K)"
            if n
            else "threat: no opposing token (K)"
        )
        return [("threat", THREAT, text)]

    def draw(self, v: Any, view: pygame.Surface) -> None:
        """The threatened cells hatched and outlined on ``view`` (screen pixels)."""
        cells = self.cells(v)
        if not cells:
            return
        size = view.get_size()
        to_screen = v.camera.to_screen
        grid = v.model.grid
        mask = pygame.Surface(size, pygame.SRCALPHA)
        mask.fill((0, 0, 0, 0))
        for cell in cells:
            pts = [to_screen(*p) for p in grid.cell_corners(cell)]
            pygame.draw.polygon(mask, (255, 255, 255, 255), pts)
        mask.blit(self._hatching(size), (0, 0), special_flags=pygame.BLEND_RGBA_MULT)
        view.blit(mask, (0, 0))
        width = max(2, round(2 * v.camera.zoom))
        for a, b in boundary(grid, set(cells)):
            pygame.draw.line(view, (20, 10, 10), to_screen(*a), to_screen(*b), width + 2)
            pygame.draw.line(view, THREAT, to_screen(*a), to_screen(*b), width)

    def _hatching(self, size: tuple[int, int]) -> pygame.Surface:
        if self._hatch is None or self._hatch.get_size() != size:
            w, h = size
            hatch = pygame.Surface(size, pygame.SRCALPHA)
            hatch.fill((0, 0, 0, 0))
            for x in range(-h, w, HATCH_GAP):
                pygame.draw.line(hatch, (*THREAT, 190), (x, h), (x + h, 0), HATCH_W)
            self._hatch = hatch
        return self._hatch
