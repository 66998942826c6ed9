"""`run`'s charts: the turns chart is the reports' matplotlib code, and the outcome map
(pygame, Tiled-exact) draws its markers in the same colour table."""

from __future__ import annotations

import os
from collections import Counter
from pathlib import Path

import numpy as np
import pygame
from matplotlib.colors import to_rgba

from engine.report import charts
from engine.viewer import plots
from engine.viewer.render import output_size

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
    layout = plots.heatmap_layout(grid, 1400, plots.header_height())  # the map's place
    assert image.get_size() == layout.size
    x, y = layout.at(grid, (4, 6))
    centre = (round(x), round(y))
    assert tuple(image.get_at(centre))[:3] == charts.outcome_rgb("capture")
    assert charts.outcome_rgb("escape") == (60, 130, 230)  # the map's colours as they were


def test_the_outcome_map_has_whole_discs_a_legend_and_no_seams(tmp_path: Path) -> None:
    """Issue 40: white seams, discs cut in half at the top edge, no legend, timeouts left
    out. On a map of 70-pixel tiles drawn at a scale that is no simple fraction, every map
    pixel is a (veiled) tile's; a disc on the top row lies whole on the canvas; the legend
    shows all three outcomes' colours, timeouts included."""
    pygame.display.init()
    t, n = 70, 12
    img = pygame.Surface((2 * t, t), pygame.SRCALPHA)
    img.fill((200, 60, 60, 255), (0, 0, t, t))
    img.fill((60, 60, 200, 255), (t, 0, t, t))
    pygame.image.save(img, str(tmp_path / "tiles.png"))
    rows = ",\n".join(",".join(str(1 + (r + c) % 2) for c in range(n)) for r in range(n))
    (tmp_path / "m.tmx").write_text(
        f'<?xml version="1.0" encoding="UTF-8"?>\n<map version="1.10" orientation="orthogonal" '
        f'renderorder="right-down" width="{n}" height="{n}" tilewidth="{t}" tileheight="{t}" '
        f'infinite="0" nextlayerid="2" nextobjectid="1">\n'
        f'<tileset firstgid="1" name="t" tilewidth="{t}" tileheight="{t}" tilecount="2" '
        f'columns="2"><image source="tiles.png" width="{2 * t}" height="{t}"/></tileset>\n'
        f'<layer id="1" name="g" width="{n}" height="{n}"><data encoding="csv">\n{rows}\n'
        "</data></layer>\n</map>\n",
        encoding="utf-8",
    )
    rows_ = [{"outcome": "capture", "turns": 2, "cell": [5, 0]}] * 9 + [
        {"outcome": "escape", "turns": 3, "cell": [11, 11]},
        {"outcome": "timeout", "turns": 9, "cell": None},
    ]
    out = plots.outcome_heatmap(rows_, str(tmp_path / "m.tmx"), str(tmp_path / "o.png"), 680)
    image = pygame.image.load(out)
    from engine.tiled import load_map

    grid = load_map(str(tmp_path / "m.tmx")).grid
    layout = plots.heatmap_layout(grid, 680, plots.header_height())
    assert image.get_size() == layout.size and max(layout.size) <= 680
    assert layout.scale not in (0.5, 0.25, 1.0)  # a scale that seamed
    rgb = pygame.surfarray.array3d(image).astype(int)
    x0, y0 = layout.origin
    w, h = output_size(grid, layout.scale)
    # the map's pixels away from the discs are the veiled tiles' only: no seam shows
    xs, ys = np.meshgrid(np.arange(x0, x0 + w), np.arange(y0, y0 + h), indexing="ij")
    away = np.ones(xs.shape, dtype=bool)
    for cell in ((5, 0), (11, 11)):
        cx, cy = layout.at(grid, cell)
        away &= (xs - cx) ** 2 + (ys - cy) ** 2 > (layout.biggest + 2) ** 2
    away[[0, -1], :] = away[:, [0, -1]] = False  # the map's thin frame
    pixels = rgb[x0 : x0 + w, y0 : y0 + h][away]
    veiled = np.array(
        [[round(c * (1 - 140 / 255) + 140) for c in k] for k in ((200, 60, 60), (60, 60, 200))]
    )
    off = np.abs(pixels[:, None, :] - veiled[None]).max(-1).min(-1)
    assert int((off > 2).sum()) == 0
    cx, cy = layout.at(grid, (5, 0))
    r = layout.biggest
    assert cy - r > plots.header_height()  # the disc's top lies on the canvas, under the legend
    assert tuple(image.get_at((round(cx), round(cy - r + 2))))[:3] == charts.outcome_rgb("capture")
    header = rgb[:, : plots.header_height()].reshape(-1, 3).tolist()
    for outcome in ("capture", "escape", "timeout"):
        assert list(charts.outcome_rgb(outcome)) in header, outcome
