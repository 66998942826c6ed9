"""A straight line between two cells' centres: how long it is, and what cuts it.

The ruler of the GM's table (``M``, or ``Shift`` + drag) prices the walked path; beside it a
GM asks "how far as the crow flies, and is the line open?" (range, line of sight, a thrown
rope). :func:`sightline` answers that on the map as it stands: its length in cells and in
the map's unit, the walls and shut doors it crosses (a window or an open door lets it
through), and the cells it passes whose terrain is ``blocked``. No drawing here.

>>> from engine.grid import Grid
>>> from engine.mapmodel import MapModel
>>> from engine.terrain import Terrain
>>> grid = Grid("orthogonal", 5, 5, 32, 32)
>>> line = sightline(MapModel.uniform(grid, Terrain()), (0, 0), (3, 4), Fraction(5), "ft")
>>> (line.cells, line.distance, line.clear)
(5.0, 25.0, True)
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction

from engine.grid import Cell, Grid
from engine.mapmodel import MapModel
from engine.walls import wall_segments

#: Samples per cell width along the line when looking for blocked cells it passes.
SAMPLES_PER_CELL = 8


@dataclass(frozen=True)
class Sightline:
    """A straight line from ``start``'s centre to ``goal``'s."""

    start: Cell
    goal: Cell
    cells: float  # length in cell widths (centre to centre)
    distance: float  # length in ``unit``
    unit: str
    walls: tuple[str, ...]  # the walls and shut doors crossed, by name (or "wall 7")
    blocked: tuple[Cell, ...]  # cells of blocked terrain passed, in order

    @property
    def clear(self) -> bool:
        return not self.walls and not self.blocked

    def text(self) -> str:
        """One line for the panel: ``"straight 25 ft (5 cells): clear"``."""
        head = f"straight {self.distance:.3g} {self.unit} ({self.cells:.3g} cells)"
        if self.clear:
            return head + ": clear"
        cut = []
        if self.walls:
            n = len(self.walls)
            cut.append(f"{n} wall{'' if n == 1 else 's'} ({', '.join(self.walls[:3])})")
        if self.blocked:
            n = len(self.blocked)
            cut.append(f"{n} blocked cell{'' if n == 1 else 's'}")
        return head + ": cut by " + " and ".join(cut)


def cells_between(grid: Grid, dx: float, dy: float) -> float:
    """The length in cell widths of a line ``(dx, dy)`` map pixels long: square cells by
    their tile size, isometric ones un-projected, hexes scaled so that every neighbour's
    centre is one cell away (Tiled's hex tiles are seldom regular), staggered maps by
    their nearest neighbour's distance."""
    tw, th = float(grid.tile_width), float(grid.tile_height)
    if grid.orientation == "orthogonal":
        return math.hypot(dx / tw, dy / th)
    if grid.orientation == "isometric":
        return math.hypot(dx / tw + dy / th, dy / th - dx / tw)
    cx, cy = grid.width // 2, grid.height // 2
    x0, y0 = grid.cell_center((cx, cy))
    offsets = [
        (x - x0, y - y0) for x, y in (grid.cell_center(n) for n in grid.neighbours((cx, cy)))
    ]
    if grid.orientation == "hexagonal":
        half = math.sqrt(3) / 2
        if grid.stagger_axis == "x":  # columns: the neighbour above is one cell up
            sy = min(abs(oy) for ox, oy in offsets if abs(ox) < 1e-9)
            sx = max(abs(ox) for ox, _ in offsets) / half
        else:
            sx = min(abs(ox) for ox, oy in offsets if abs(oy) < 1e-9)
            sy = max(abs(oy) for _, oy in offsets) / half
        return math.hypot(dx / sx, dy / sy)
    near = min(math.hypot(ox, oy) for ox, oy in offsets)
    return math.hypot(dx, dy) / near


def sightline(model: MapModel, a: Cell, b: Cell, cell_size: Fraction, unit: str) -> Sightline:
    """The straight line from ``a``'s centre to ``b``'s on ``model`` (doors as its walls
    stand): its length in cells and in ``unit`` (``cell_size`` per cell), and what cuts it."""
    grid = model.grid
    ax, ay = grid.cell_center(a)
    bx, by = grid.cell_center(b)
    cells = cells_between(grid, bx - ax, by - ay)
    walls = tuple(
        wall.name or f"{'door' if wall.kind == 'door' else 'wall'} {wall.id}"
        for wall in model.walls
        if wall.kind != "window"
        and wall.blocks
        and any(_crosses((ax, ay, bx, by), seg) for seg in wall_segments(wall))
    )
    blocked: list[Cell] = []
    n = max(1, math.ceil(cells * SAMPLES_PER_CELL))
    for i in range(n + 1):
        t = i / n
        cell = grid.cell_at(ax + (bx - ax) * t, ay + (by - ay) * t)
        if cell in (a, b) or (blocked and blocked[-1] == cell) or not grid.in_bounds(cell):
            continue
        if model.terrain_at(cell).move == "blocked" and cell not in blocked:
            blocked.append(cell)
    return Sightline(a, b, cells, cells * float(cell_size), unit, walls, tuple(blocked))


def _crosses(
    line: tuple[float, float, float, float], seg: tuple[float, float, float, float]
) -> bool:
    """Whether two segments meet (touching counts: a line along a wall's end is cut)."""
    ax, ay, bx, by = line
    cx, cy, dx, dy = seg

    def orient(px: float, py: float, qx: float, qy: float, rx: float, ry: float) -> float:
        return (qx - px) * (ry - py) - (qy - py) * (rx - px)

    d1 = orient(cx, cy, dx, dy, ax, ay)
    d2 = orient(cx, cy, dx, dy, bx, by)
    d3 = orient(ax, ay, bx, by, cx, cy)
    d4 = orient(ax, ay, bx, by, dx, dy)
    if ((d1 > 0) != (d2 > 0) and d1 != 0 and d2 != 0) and (
        (d3 > 0) != (d4 > 0) and d3 != 0 and d4 != 0
    ):
        return True

    def on(px: float, py: float, qx: float, qy: float, rx: float, ry: float) -> bool:
        return min(px, qx) <= rx <= max(px, qx) and min(py, qy) <= ry <= max(py, qy)

    return (
        (d1 == 0 and on(cx, cy, dx, dy, ax, ay))
        or (d2 == 0 and on(cx, cy, dx, dy, bx, by))
        or (d3 == 0 and on(ax, ay, bx, by, cx, cy))
        or (d4 == 0 and on(ax, ay, bx, by, dx, dy))
    )
