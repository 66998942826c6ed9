"""What the window draws over the map: the selected token's reach (a tint per speed band,
each band's edge, the 2- and 3-turn contours), the hovered path, and a flier's turn.

The reach is kept as shapes in map pixels (:class:`Overlay`, built once per reach by
:func:`reach_overlay`) and drawn per map chunk at the camera's zoom, so that a big map's
overlay is never drawn whole.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pygame

from engine.grid import Cell
from engine.search import ReachAnswer
from engine.viewer.draw import (
    BAND_COLOURS,
    BAND_EDGE_ALPHA,
    BAND_FILL_ALPHA,
    CONTOUR_COLOURS,
    boundary,
    outlined,
)
from engine.viewer.window import Window


def reach_overlay(grid: Any, rep: ReachAnswer, version: int) -> Overlay:
    """A reach (:func:`engine.search.reach`) as shapes in map pixels: each first-turn
    cell filled in its band's tint, each band's outer edge, and the outline of what 2 and 3
    turns reach. ``version`` names the shapes in the chunk cache."""
    bands = rep.bands
    polys: list[tuple[list[tuple[float, float]], tuple[int, int, int, int]]] = []
    within: dict[int, set[Cell]] = {1: set(), 2: set(), 3: set()}
    in_band: dict[int, set[Cell]] = {}
    for cell, _, band in rep.cells:
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
        for a, b in boundary(grid, in_band[j])
    ]
    lines += [
        (a, b, (*colour, 230))
        for n, colour in CONTOUR_COLOURS.items()
        for a, b in boundary(grid, within.get(n, set()))
    ]
    return Overlay(version, polys, lines)


class Overlay:
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


def draw_path(v: Window, view: pygame.Surface) -> None:
    """The hovered path: a white line, a ring where each turn ends, each check's odds, and
    the turns it takes at its end."""
    rep = v.hover_path()
    if not rep:
        return
    pts = [v.cell_screen(c) for c in rep.cells]
    pygame.draw.lines(view, (255, 255, 255), False, pts, 3)
    pygame.draw.lines(view, (20, 20, 20), False, pts, 1)
    last_turn = 0
    for step, p in zip(rep.steps[1:], pts[1:], strict=False):
        if step["turn"] != last_turn:
            if last_turn:
                pygame.draw.circle(view, (255, 255, 255), p, 7, 2)
            last_turn = step["turn"]
        if step["check"]:
            text = f"{100 * step['check']['p_success']:.0f}%"
            label = outlined(v.small, text, (255, 230, 120), (0, 0, 0))
            v.labels.put(view, label, p, text)
    # The turns at the end; where the safest path differs (table.draw labels it), this
    # is the quickest's, with its odds, and says whether a click takes it.
    risk = v.table.risk(compute=False)
    text = f"{float(rep.turns):.2f} t"
    if risk is not None:
        text = f"quickest {text}, p {100 * float(risk.fast.p_no_failure):.0f}%" + (
            " (click)" if risk.chosen == "fast" else ""
        )
    label = v.font.render(text, True, (255, 255, 255), (0, 0, 0))
    v.labels.put(view, label, pts[-1], text)


def draw_flight(v: Window, view: pygame.Surface) -> None:
    """The planner's suggestion to the hovered cell (magenta dots) and the trajectory
    of the pending choice (cyan)."""
    tid = v.selected
    assert tid is not None
    suggestion = v.flight_suggestion()
    if suggestion is not None:
        for record in suggestion.records:
            for cell in record.cells:
                pygame.draw.circle(view, (230, 80, 230), v.cell_screen(cell), 4)
    got = v.flight_preview()
    if got is not None:
        _, record = got
        pts = [v.cell_screen(c) for c in (record.before.cell, *record.cells)]
        if len(pts) > 1:
            pygame.draw.lines(view, (20, 20, 20), False, pts, 5)
            pygame.draw.lines(view, (80, 230, 255), False, pts, 3)
        pygame.draw.circle(view, (80, 230, 255), pts[-1], 8, 2)
