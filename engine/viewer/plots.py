"""PNG plots of a batch: turns to each outcome, and where captures and escapes happened."""

from __future__ import annotations

import os
from collections import Counter
from typing import Any

import pygame

from engine.viewer.png import save_png
from engine.viewer.render import load_for_render, render_map

OUTCOME_COLOURS = {"capture": (214, 64, 58), "escape": (60, 130, 230), "timeout": (150, 150, 150)}


def _font(size: int) -> pygame.font.Font:
    pygame.font.init()
    return pygame.font.Font(None, size)


def turns_histogram(results: list[dict[str, Any]], path: str, title: str = "") -> str:
    """Stacked bars: how many runs ended in each outcome after each number of turns."""
    w, h = 900, 520
    left, right, top, bottom = 70, 30, 60, 60
    surf = pygame.Surface((w, h))
    surf.fill((255, 255, 255))
    font, small = _font(26), _font(18)
    by_turn: dict[int, Counter[str]] = {}
    for r in results:
        by_turn.setdefault(int(r["turns"]), Counter())[r["outcome"]] += 1
    turns = sorted(by_turn) or [0]
    t0, t1 = min(turns), max(turns)
    peak = max((sum(c.values()) for c in by_turn.values()), default=1)
    span = t1 - t0 + 1
    bar_w = (w - left - right) / span
    for t, counts in by_turn.items():
        x = left + (t - t0) * bar_w
        y: float = h - bottom
        for outcome in ("capture", "escape", "timeout"):
            n = counts.get(outcome, 0)
            if not n:
                continue
            bh = (h - top - bottom) * n / peak
            pygame.draw.rect(surf, OUTCOME_COLOURS[outcome], (x + 1, y - bh, max(1, bar_w - 2), bh))
            y -= bh
    pygame.draw.line(surf, (0, 0, 0), (left, h - bottom), (w - right, h - bottom), 2)
    pygame.draw.line(surf, (0, 0, 0), (left, top), (left, h - bottom), 2)
    step = max(1, span // 15)
    for t in range(t0, t1 + 1, step):
        label = small.render(str(t), True, (0, 0, 0))
        surf.blit(label, label.get_rect(midtop=(left + (t - t0 + 0.5) * bar_w, h - bottom + 6)))
    for frac in (0, 0.5, 1):
        v = round(peak * frac)
        ty = h - bottom - (h - top - bottom) * frac
        label = small.render(str(v), True, (0, 0, 0))
        surf.blit(label, label.get_rect(midright=(left - 6, ty)))
    surf.blit(font.render(title or "turns to outcome", True, (0, 0, 0)), (left, 18))
    surf.blit(small.render("turns", True, (0, 0, 0)), (w // 2, h - 24))
    x = w - right - 300
    for outcome, colour in OUTCOME_COLOURS.items():
        n = sum(1 for r in results if r["outcome"] == outcome)
        pygame.draw.rect(surf, colour, (x, 22, 14, 14))
        surf.blit(small.render(f"{outcome} {n}", True, (0, 0, 0)), (x + 18, 22))
        x += 100
    return save_png(surf, path, "--out")


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
        colour = OUTCOME_COLOURS[outcome]
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
    """Both plots into ``out_dir``; returns their paths."""
    return [
        turns_histogram(results, os.path.join(out_dir, "turns.png"), title),
        outcome_heatmap(results, map_path, os.path.join(out_dir, "outcomes_map.png")),
    ]
