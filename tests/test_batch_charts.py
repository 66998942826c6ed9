"""`run`'s charts: the turns chart is the reports' matplotlib code, and the outcome map
(pygame, Tiled-exact) draws its markers in the same colour table."""

from __future__ import annotations

import os
from collections import Counter
from pathlib import Path

import pygame
from matplotlib.colors import to_rgba

from engine.report import charts
from engine.viewer import plots

ROOT = Path(__file__).resolve().parent.parent
CHASE_MAP = str(ROOT / "maps" / "chase.tmx")

RECORDS = [
    {"run": i, "outcome": outcome, "turns": turns, "cell": [2 + i % 3, 5]}
    for i, (outcome, turns) in enumerate(
        [("capture", 3)] * 4 + [("escape", 3)] * 2 + [("capture", 5)] + [("timeout", 8)] * 3
    )
]


def test_the_turns_chart_stacks_each_turns_runs_in_the_outcome_colours() -> None:
    fig = charts.turns_figure(RECORDS, "toy")
    ax = fig.get_axes()[0]
    assert ax.get_title() == "toy: turns to each outcome, 10 runs"
    assert ax.get_xlabel() == "turns" and ax.get_ylabel() == "runs"
    labels = [t.get_text() for t in ax.get_legend().get_texts()]
    assert labels == ["capture 5", "escape 2", "timeout 3"]
    drawn: Counter[tuple[int, str]] = Counter()
    colours = {to_rgba(c): name for name, c in charts.OUTCOME_COLOURS.items()}
    for bar in ax.patches:
        if bar.get_height():
            drawn[(round(bar.get_x() + bar.get_width() / 2), colours[bar.get_facecolor()])] += int(
                bar.get_height()
            )
    assert drawn == Counter(
        {(3, "capture"): 4, (3, "escape"): 2, (5, "capture"): 1, (8, "timeout"): 3}
    )


def test_run_writes_the_turns_chart_and_the_outcome_map_in_one_colour_table(
    tmp_path: Path,
) -> None:
    one = [{"run": 0, "outcome": "capture", "turns": 3, "cell": [4, 6]}]
    files = plots.write_plots(one, CHASE_MAP, str(tmp_path), "toy")
    assert [os.path.basename(f) for f in files] == ["turns.png", "outcomes_map.png"]
    assert (tmp_path / "turns.png").read_bytes().startswith(b"\x89PNG")
    from engine.tiled import load_map

    grid = load_map(CHASE_MAP).grid
    image = pygame.image.load(files[1])
    scale = min(1.0, 1400 / max(grid.pixel_size()))  # outcome_heatmap's max_px
    x, y = grid.cell_center((4, 6))
    centre = (round(x * scale), round(y * scale))
    assert tuple(image.get_at(centre))[:3] == charts.outcome_rgb("capture")
    assert charts.outcome_rgb("escape") == (60, 130, 230)  # the map's colours as they were
