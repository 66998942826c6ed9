"""PNG plots of a batch: where captures and escapes happened, drawn on the map as the
renderer draws it (Tiled-exact); the turns chart beside it is the reports' (matplotlib:
engine.report.charts), in the same colours."""

from __future__ import annotations

import os
from collections import Counter
from typing import Any

import pygame

from engine.report.charts import charts_available, outcome_rgb, write_turns_chart
from engine.viewer.png import save_png
from engine.viewer.render import load_for_render, render_map


def _font(size: int) -> pygame.font.Font:
    pygame.font.init()
    return pygame.font.Font(None, size)


def outcome_heatmap(
    results: list[dict[str, Any]], map_path: str, path: str, max_px: int = 1400
) -> str:
    """The map with a marker per cell sized and shaded by how many runs ended there.

    The map is drawn directly at the plot's size (at most ``max_px`` a side), so a big map
    costs the plot's pixels, not the map's.
    """
    model, tiled = load_for_render(map_path)
    grid = model.grid
    scale = min(1.0, max_px / max(grid.pixel_size()))
    surf = render_map(model, tiled, scale=scale)
    # Fade the map so the markers carry the picture.
    veil = pygame.Surface(surf.get_size(), pygame.SRCALPHA)
    veil.fill((255, 255, 255, 140))
    surf.blit(veil, (0, 0))
    font = _font(max(14, round(grid.tile_height * scale) // 2))
    cell_r = min(grid.tile_width, grid.tile_height) / 2 * scale
    for outcome in ("escape", "capture"):
        counts = Counter(
            (r["cell"][0], r["cell"][1])
            for r in results
            if r["outcome"] == outcome and r.get("cell")
        )
        peak = max(counts.values(), default=1)
        colour = outcome_rgb(outcome)
        for cell, n in sorted(counts.items(), key=lambda kv: kv[1]):
            cx, cy = grid.cell_center(cell)
            x, y = cx * scale, cy * scale
            # At least 12 px across for the busiest cell, however small the cells are drawn.
            radius = max(3.0, max(cell_r * 1.6, 12.0) * (n / peak) ** 0.5)
            pygame.draw.circle(surf, colour, (x, y), radius)
            pygame.draw.circle(surf, (20, 20, 20), (x, y), radius, 1)
            if n >= max(2, peak // 4) and (scale == 1 or radius >= 7):
                label = font.render(str(n), True, (255, 255, 255))
                surf.blit(label, label.get_rect(center=(x, y)))
    return save_png(surf, path, "--out")


def write_plots(
    results: list[dict[str, Any]], map_path: str, out_dir: str, title: str = ""
) -> list[str]:
    """``turns.png`` (:func:`engine.report.charts.write_turns_chart`; where matplotlib, the
    analysis extra, is installed) and ``outcomes_map.png`` into ``out_dir``; returns the
    paths written."""
    turns = [write_turns_chart(out_dir, results, title)] if charts_available() else []
    return [*turns, outcome_heatmap(results, map_path, os.path.join(out_dir, "outcomes_map.png"))]
