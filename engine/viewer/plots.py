"""PNG plots of a batch: where captures and escapes happened, drawn on the map as the
renderer draws it (Tiled-exact), with a title and a legend counting every outcome; the turns chart beside it is the reports' (matplotlib:
engine.report.charts), in the same colours."""

from __future__ import annotations

import math
import os
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import pygame

from engine.report.charts import charts_available, outcome_rgb, write_turns_chart
from engine.viewer.png import save_png
from engine.viewer.render import load_for_render, output_size, render_map


def _font(size: int) -> pygame.font.Font:
    pygame.font.init()
    return pygame.font.Font(None, size)


#: The canvas around the map (the discs of edge cells reach into it), its text and lines.
CANVAS = (238, 238, 236)
INK = (30, 30, 34)
#: The outcomes drawn, biggest disc first so that the small ones stay in sight.
PLACED = ("capture", "escape", "timeout")


@dataclass(frozen=True)
class HeatmapLayout:
    """Where the map lies on the outcome map: its scale, the map's top-left corner on the
    canvas (a margin all round, the title and legend above), the canvas's size, and the
    disc radius of the busiest cell."""

    scale: float
    origin: tuple[int, int]
    size: tuple[int, int]
    biggest: float

    def at(self, grid: Any, cell: tuple[int, int]) -> tuple[float, float]:
        """A cell's centre on the canvas."""
        cx, cy = grid.cell_center(cell)
        return self.origin[0] + cx * self.scale, self.origin[1] + cy * self.scale


def header_height() -> int:
    """The title's and legend's rows above the map on an outcome map."""
    return 8 + _font(20).get_height() + 6 + _font(17).get_height() + 8


def heatmap_layout(grid: Any, max_px: int = 1400, header: int = 0) -> HeatmapLayout:
    """The layout of an outcome map at most ``max_px`` a side: the map scaled (at most 1)
    to leave room for a margin as wide as the biggest disc and ``header`` pixels above."""
    w, h = grid.pixel_size()

    def biggest(scale: float) -> float:
        # At least 12 px across for the busiest cell, however small the cells are drawn.
        return max(min(grid.tile_width, grid.tile_height) / 2 * scale * 1.6, 12.0)

    scale = min(1.0, max_px / max(w, h))
    margin = math.ceil(biggest(scale)) + 6  # the discs only shrink as the scale does
    scale = min(1.0, (max_px - 2 * margin) / w, (max_px - 2 * margin - header) / h)
    mw, mh = output_size(grid, scale)
    return HeatmapLayout(
        scale,
        (margin, margin + header),
        (mw + 2 * margin, mh + 2 * margin + header),
        biggest(scale),
    )


def outcome_heatmap(
    results: Iterable[dict[str, Any]],
    map_path: str,
    path: str,
    max_px: int = 1400,
    title: str = "",
) -> str:
    """The map with a disc per cell where runs ended, its area by how many, in the
    outcome's colour; above it a title and a legend counting every outcome, timeouts
    included (a run that reaches the turn limit ends on no cell: it is counted, not
    placed). The map is drawn directly at the plot's size (at most ``max_px`` a side), so
    a big map costs the plot's pixels, not the map's; a margin keeps edge cells' discs
    whole."""
    model, tiled = load_for_render(map_path)
    grid = model.grid
    font, small = _font(20), _font(17)
    lay = heatmap_layout(grid, max_px, header_height())
    canvas = pygame.Surface(lay.size)
    canvas.fill(CANVAS)
    surf = render_map(model, tiled, scale=lay.scale)
    # Fade the map so the markers carry the picture.
    veil = pygame.Surface(surf.get_size(), pygame.SRCALPHA)
    veil.fill((255, 255, 255, 140))
    surf.blit(veil, (0, 0))
    canvas.blit(surf, lay.origin)
    pygame.draw.rect(canvas, (150, 150, 150), (*lay.origin, *surf.get_size()), 1)
    totals: Counter[str] = Counter()
    counts: Counter[tuple[str, int, int]] = Counter()
    for row in results:  # one pass: the rows may be read from a file as they come
        totals[row["outcome"]] += 1
        if row["outcome"] in PLACED and row.get("cell"):
            counts[(row["outcome"], row["cell"][0], row["cell"][1])] += 1
    peak = max(counts.values(), default=1)
    label_font = _font(max(14, round(grid.tile_height * lay.scale) // 2))
    for (outcome, c, r), n in sorted(counts.items(), key=lambda kv: -kv[1]):
        x, y = lay.at(grid, (c, r))
        radius = max(3.0, lay.biggest * (n / peak) ** 0.5)
        pygame.draw.circle(canvas, outcome_rgb(outcome), (x, y), radius)
        pygame.draw.circle(canvas, (20, 20, 20), (x, y), radius, 1)
        if n >= max(2, peak // 4) and (lay.scale == 1 or radius >= 7):
            label = label_font.render(str(n), True, (255, 255, 255))
            canvas.blit(label, label.get_rect(center=(x, y)))
    _legend(canvas, font, small, title, totals, sum(totals.values()), peak)
    return save_png(canvas, path, "--out")


def _legend(
    canvas: pygame.Surface,
    font: pygame.font.Font,
    small: pygame.font.Font,
    title: str,
    totals: Counter[str],
    n: int,
    peak: int,
) -> None:
    """The title and, under it, a disc and a count per outcome (timeouts too)."""
    head = f"{title}: where {n} runs ended" if title else f"where {n} runs ended"
    canvas.blit(font.render(head, True, INK), (10, 8))
    x = 10
    y = 8 + font.get_height() + 6
    mid = y + small.get_height() // 2
    for outcome in PLACED:
        k = totals.get(outcome, 0)
        pygame.draw.circle(canvas, outcome_rgb(outcome), (x + 7, mid), 7)
        pygame.draw.circle(canvas, (20, 20, 20), (x + 7, mid), 7, 1)
        words = f"{outcome} {k}" + (" (turn limit: no end cell)" if outcome == "timeout" else "")
        text = small.render(words, True, INK)
        canvas.blit(text, (x + 18, y))
        x += 18 + text.get_width() + 16
    note = small.render(f"disc area: runs that ended there (most {peak})", True, (90, 90, 96))
    if x + note.get_width() + 10 <= canvas.get_width():
        canvas.blit(note, (x, y))


def write_plots(
    results: list[dict[str, Any]], map_path: str, out_dir: str, title: str = ""
) -> list[str]:
    """``turns.png`` (:func:`engine.report.charts.write_turns_chart`; where matplotlib, the
    analysis extra, is installed) and ``outcomes_map.png`` into ``out_dir``; returns the
    paths written."""
    turns = [write_turns_chart(out_dir, results, title)] if charts_available() else []
    out = os.path.join(out_dir, "outcomes_map.png")
    return [*turns, outcome_heatmap(results, map_path, out, title=title)]
