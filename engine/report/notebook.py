"""Maps, paths and reaches that show themselves in a notebook (Jupyter's ``_repr_png_`` and
``_repr_html_``), without changing what the API returns.

* :class:`NotebookMap` is a :class:`~engine.mapmodel.MapModel` (``api.load_map`` returns
  one): every attribute and use of a map is as before; in Jupyter it shows its terrain.
* :class:`PathResult` and :class:`ReachResult` are the ``dict`` that ``api.path`` and
  ``api.reach`` return (same keys, ``==`` a plain dict, JSON as before), which also know the
  map they were found on and show themselves drawn on it.

The picture is matplotlib's (engine.report.charts), drawn from the map model: each cell
filled by the movement mode it forces, walls and doors as lines, spawns and exits marked.
It is a diagram of what the rules read, not the tiles: ``tacgrid render`` (the viewer's
renderer, which the engine below the viewer may not import) draws a map as Tiled does.
"""

from __future__ import annotations

import base64
import dataclasses
import functools
import html
import os
from collections.abc import Callable
from typing import Any, ParamSpec

from engine.grid import Cell
from engine.mapmodel import MODES, MapModel
from engine.report.movement import path_json, reach_dict
from engine.search import PathAnswer, ReachAnswer

P = ParamSpec("P")

#: A cell's colour by the movement mode it forces (the legend lists those on the map).
MODE_COLOURS: dict[str, str] = {
    "walk": "#d9e8c4",
    "crawl": "#c8b48a",
    "swim": "#7fb2e0",
    "climb": "#a9795a",
    "ladder": "#d8b26e",
    "gap": "#3a3a3a",
    "air": "#eef6fb",
    "blocked": "#6b6b6b",
}
#: Colours of a reach's speed bands, in the order the bands are first met.
BAND_COLOURS = ("#1b9e77", "#e7298a", "#7570b3", "#e6ab02", "#66a61e", "#a6761d", "#d95f02")
#: Above this many cells a map is drawn as cell centres, not outlines (time and memory).
MAX_OUTLINED_CELLS = 40_000
#: The widest picture, in inches (at 100 dpi).
MAX_WIDTH_IN = 9.0


# --------------------------------------------------------------------------- drawing


def _cell_list(value: Any) -> list[Cell]:
    return [(int(c[0]), int(c[1])) for c in value]


def map_figure(  # noqa: C901
    model: MapModel,
    *,
    path: list[Cell] | None = None,
    reach: list[dict[str, Any]] | None = None,
    start: Cell | None = None,
    title: str = "",
) -> Any:
    """A matplotlib Figure of ``model``: cells by movement mode (a legend of the modes on
    the map), walls and doors, exits outlined, spawns marked; with ``path`` (cells) drawn
    as a line from a circle to a star, or ``reach`` (``api.reach``'s cells) shaded by band
    from ``start`` (a circle)."""
    from engine.report.charts import need_charts, new_figure

    need_charts("a map's picture")
    import numpy as np
    from matplotlib.collections import PolyCollection
    from matplotlib.patches import Patch

    grid = model.grid
    pw, ph = grid.pixel_size()
    width = min(MAX_WIDTH_IN, max(4.0, pw / 100))
    height = max(2.5, width * ph / max(pw, 1)) + 0.9
    fig = new_figure(width + 1.8, min(height, 14.0))
    ax = fig.add_subplot()
    codes = model.move_codes()
    present = [m for m in MODES if (codes == MODES.index(m)).any()]
    colours = [MODE_COLOURS[m] for m in MODES]
    _draw_cells(ax, grid, codes, colours)
    for wall in model.walls:
        xs, ys = zip(*wall.points, strict=True)
        style = {"door": ("#8b4513", "--"), "window": ("#4a90d9", ":")}.get(wall.kind)
        colour, dash = style or ("#111111", "-")
        ax.plot(xs, ys, color=colour, linestyle=dash, linewidth=2.2, solid_capstyle="round")
    exit_cells = [c for e in model.exits for c in e.cells]
    if exit_cells:
        ax.add_collection(
            PolyCollection(
                [grid.cell_corners(c) for c in exit_cells],
                facecolors="none",
                edgecolors="#c00000",
                linewidths=1.2,
            )
        )
    for s in model.spawns:
        x, y = grid.cell_center(s.cell)
        ax.plot([x], [y], marker="^", color="#222222", markersize=6, linestyle="none")
        ax.annotate(s.id, (x, y), xytext=(4, 4), textcoords="offset points", fontsize=7)
    handles: list[Any] = [
        Patch(facecolor=MODE_COLOURS[m], edgecolor="#999999", label=m) for m in present
    ]
    if exit_cells:
        handles.append(Patch(facecolor="none", edgecolor="#c00000", label="exit"))
    if reach:
        bands: list[str] = []
        for c in reach:
            if str(c.get("band")) not in bands:
                bands.append(str(c.get("band")))
        for k, band in enumerate(bands):
            cells = [tuple(c["cell"]) for c in reach if str(c.get("band")) == band]
            colour = BAND_COLOURS[k % len(BAND_COLOURS)]
            ax.add_collection(
                PolyCollection(
                    [grid.cell_corners(c) for c in cells],
                    facecolors=colour,
                    edgecolors="none",
                    alpha=0.45,
                )
            )
            handles.append(Patch(facecolor=colour, alpha=0.45, label=f"reach: {band}"))
    if start is not None:
        x, y = grid.cell_center(start)
        ax.plot([x], [y], marker="o", color="#111111", markersize=8, linestyle="none")
    if path:
        xs_, ys_ = np.array([grid.cell_center(c) for c in path]).T
        (line,) = ax.plot(xs_, ys_, color="#d0006f", linewidth=2.4, label="path")
        ax.plot([xs_[0]], [ys_[0]], marker="o", color="#d0006f", markersize=8)
        ax.plot([xs_[-1]], [ys_[-1]], marker="*", color="#d0006f", markersize=13)
        handles.append(line)
    ax.set_xlim(0, pw)
    ax.set_ylim(ph, 0)  # Tiled's y runs down
    ax.set_aspect("equal")
    ax.set_xticks([])
    ax.set_yticks([])
    ax.set_title(title or _map_title(model))
    ax.legend(
        handles=handles, loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize="small",
        frameon=False,
    )  # fmt: skip
    return fig


def _draw_cells(ax: Any, grid: Any, codes: Any, colours: list[str]) -> None:
    """Every cell filled with its mode's colour: an image on square grids, outlines on the
    others (cell centres beyond MAX_OUTLINED_CELLS)."""
    import numpy as np
    from matplotlib.collections import PolyCollection
    from matplotlib.colors import ListedColormap

    cmap = ListedColormap(colours)
    n = len(colours)
    if grid.orientation == "orthogonal":
        pw, ph = grid.pixel_size()
        ax.imshow(
            codes, cmap=cmap, vmin=-0.5, vmax=n - 0.5, extent=(0, pw, ph, 0),
            interpolation="nearest",
        )  # fmt: skip
        return
    cells = [(c, r) for r in range(grid.height) for c in range(grid.width)]
    face = [colours[int(codes[r, c])] for c, r in cells]
    if len(cells) <= MAX_OUTLINED_CELLS:
        ax.add_collection(
            PolyCollection(
                [grid.cell_corners(c) for c in cells],
                facecolors=face,
                edgecolors="#ffffff",
                linewidths=0.3,
            )
        )
        return
    xy = np.array([grid.cell_center(c) for c in cells])
    ax.scatter(xy[:, 0], xy[:, 1], c=face, marker="s", s=2, linewidths=0)


def _map_title(model: MapModel) -> str:
    name = os.path.basename(model.path) if model.path else "map"
    return f"{name}: {model.width} x {model.height} {model.grid.kind} cells"


def _png(fig: Any) -> bytes:
    from engine.report.charts import figure_bytes

    return figure_bytes(fig, "png")


def _html(head: str, rows: list[tuple[str, str]], png: bytes) -> str:
    body = "".join(
        f"<tr><th style='text-align:left'>{html.escape(k)}</th><td>{html.escape(v)}</td></tr>"
        for k, v in rows
    )
    image = base64.b64encode(png).decode("ascii")
    return (
        f"<div><b>{html.escape(head)}</b><table>{body}</table>"
        f"<img src='data:image/png;base64,{image}' alt='{html.escape(head)}'/></div>"
    )


# --------------------------------------------------------------------------- maps


class NotebookMap(MapModel):
    """A map that shows itself in a notebook; in every other way the :class:`MapModel` it
    was loaded as (the same fields, holding the same values)."""

    @classmethod
    def of(cls, model: MapModel) -> NotebookMap:
        """A map with ``model``'s fields (shared, not copied) that shows itself in a
        notebook; ``model`` itself when it already does."""
        if isinstance(model, cls):
            return model
        # The fields as held: per-cell arrays not yet read as numpy stay as they are.
        return cls(**{f.name: vars(model)[f.name] for f in dataclasses.fields(MapModel)})

    def figure(self, **kw: Any) -> Any:
        """The map as a matplotlib Figure (:func:`map_figure`'s keywords)."""
        return map_figure(self, **kw)

    def _repr_png_(self) -> bytes:
        return _png(map_figure(self))

    def _repr_html_(self) -> str:
        counts = {m: n for m, n in self.mode_counts().items() if n}
        rows = [
            ("grid", f"{self.grid.orientation} ({self.grid.kind}), {self.width} x {self.height}"),
            ("cells", ", ".join(f"{m} {n}" for m, n in counts.items())),
            ("spawns", ", ".join(s.id for s in self.spawns) or "none"),
            ("exits", ", ".join(e.name for e in self.exits) or "none"),
        ]
        return _html(_map_title(self), rows, self._repr_png_())


def shows_map(load: Callable[P, MapModel]) -> Callable[P, NotebookMap]:
    """``load`` (``engine.tiled.load_map``) returning a :class:`NotebookMap`."""

    @functools.wraps(load)
    def loaded(*args: P.args, **kwargs: P.kwargs) -> NotebookMap:
        return NotebookMap.of(load(*args, **kwargs))

    return loaded


# --------------------------------------------------------------------------- paths, reaches


class PathResult(dict[str, Any]):
    """``api.path``'s dict (CONTRACT.md ``path``), which shows the path on its map."""

    def __init__(self, found: dict[str, Any], model: MapModel) -> None:
        super().__init__(found)
        self.model = model

    def cells(self) -> list[Cell]:
        return _cell_list(self.get("cells") or [])

    def figure(self) -> Any:
        cells = self.cells()
        turns = self.get("turns")
        title = f"path {cells[0][0]},{cells[0][1]} -> {cells[-1][0]},{cells[-1][1]}"
        if isinstance(turns, int | float):
            title += f": {turns:.2f} turns"
        return map_figure(self.model, path=cells, title=title)

    def _repr_png_(self) -> bytes:
        return _png(self.figure())

    def _repr_html_(self) -> str:
        cells = self.cells()
        rows = [
            ("system, pace", f"{self.get('system')}, {self.get('pace')} ({self.get('prefer')})"),
            ("cells", str(len(cells))),
            ("distance", f"{self.get('distance')} {self.get('unit', '')}".strip()),
            ("turns", _number(self.get("turns"))),
            ("p(no failure)", _number(self.get("p_no_failure"))),
        ]
        head = f"path {cells[0][0]},{cells[0][1]} -> {cells[-1][0]},{cells[-1][1]}"
        return _html(head, rows, self._repr_png_())


class ReachResult(dict[str, Any]):
    """``api.reach``'s dict (CONTRACT.md ``reach``, plus ``tree``), which shows the reached
    cells on its map, shaded by speed band."""

    def __init__(self, found: dict[str, Any], model: MapModel, start: Cell) -> None:
        super().__init__(found)
        self.model = model
        self.start = start

    def figure(self) -> Any:
        cells = list(self.get("cells") or [])
        title = f"reach from {self.start[0]},{self.start[1]}: {len(cells)} cells"
        return map_figure(self.model, reach=cells, start=self.start, title=title)

    def _repr_png_(self) -> bytes:
        return _png(self.figure())

    def _repr_html_(self) -> str:
        cells = list(self.get("cells") or [])
        bands: dict[str, int] = {}
        for c in cells:
            bands[str(c.get("band"))] = bands.get(str(c.get("band")), 0) + 1
        rows = [("cells", str(len(cells)))] + [(f"band {b}", str(n)) for b, n in bands.items()]
        head = f"reach from {self.start[0]},{self.start[1]}"
        return _html(head, rows, self._repr_png_())


def _number(value: Any) -> str:
    return f"{value:.4g}" if isinstance(value, float) else str(value)


def _model_and_start(args: tuple[Any, ...], kwargs: dict[str, Any]) -> tuple[MapModel, Cell]:
    """``(model, rules, token, start, ...)``, positional or by name."""
    model = args[0] if args else kwargs["model"]
    start = args[3] if len(args) > 3 else kwargs["start"]
    return model, (int(start[0]), int(start[1]))


def shows_path(find: Callable[P, PathAnswer]) -> Callable[P, PathResult]:
    """``find`` (``api.path``) returning a :class:`PathResult` (its answer's JSON)."""

    @functools.wraps(find)
    def found(*args: P.args, **kwargs: P.kwargs) -> PathResult:
        model, _ = _model_and_start(args, kwargs)
        return PathResult(path_json(find(*args, **kwargs)), model)

    return found


def shows_reach(find: Callable[P, ReachAnswer]) -> Callable[P, ReachResult]:
    """``find`` (``api.reach``) returning a :class:`ReachResult` (its answer's JSON and
    search tree)."""

    @functools.wraps(find)
    def found(*args: P.args, **kwargs: P.kwargs) -> ReachResult:
        model, start = _model_and_start(args, kwargs)
        return ReachResult(reach_dict(find(*args, **kwargs)), model, start)

    return found
