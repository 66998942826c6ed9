"""The cells an object covers, within a budget: the work a map's objects make is bounded by
what the file can honestly need, whatever it holds.

A map's objects may be many (10 000 rotated ellipses in 1.5 MB) or long (a polygon of
100 000 points). The plain test (:func:`engine.tiled.objects.contains`, one cell centre
against one shape) is kept as the definition; here the same arithmetic runs on numpy
arrays of centres, a polygon's edges matched only to the centres in their band of rows
(sorted by height, so an edge costs the centres it crosses, not all of them), and every
test is counted against :data:`MAX_COVERAGE_WORK`. Past it the map is refused in one line
before the rest of the work is done. ``tests/test_hostile_bounds.py`` proves the numpy
path equal to the plain one on every orientation.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import replace
from typing import Any

from engine.cells import Cells, held, small
from engine.grid import Cell, Grid
from engine.mapmodel import MapModel, MapObject
from engine.terrain import Terrain
from engine.tiled.common import fail

#: The most cell-centre tests a map's objects may make, all objects together: a candidate
#: cell is one test, and a polygon's edge against a centre in its band of rows one more.
#: Twice the cells of the largest map (4096 x 4096), about 2 s of numpy work.
MAX_COVERAGE_WORK = 1 << 25
#: The most cells the spawns and exits of a map may list (they are kept as lists).
MAX_LISTED_CELLS = 1 << 20
#: An object of at most this many candidate cells on a small map (engine.cells.small) is
#: tested in plain Python, so that a quick command on a small map never imports numpy.
SMALL_OBJECT = 1024
#: What an object tested on numpy costs besides its cells (its arrays' set-up), in tests.
NUMPY_OBJECT_COST = 2048
#: What one plain-Python test costs against :data:`MAX_COVERAGE_WORK`, in numpy tests.
PLAIN_COST = 64
#: Candidate cells per numpy block (bounds the arrays' memory, about 50 MB a block).
BLOCK_CELLS = 1 << 20
#: Polygon edge-centre pairs per numpy block.
BLOCK_PAIRS = 1 << 21

Box = tuple[int, int, int, int]  # c0, c1, r0, r1 inclusive
#: The shapes whose area is tested cell by cell.
_AREAS = ("rectangle", "ellipse", "polygon", "text")


class Coverage:
    """One map's budget of cell tests (:data:`MAX_COVERAGE_WORK`), spent as objects are
    placed; ``contains`` is the plain test of one centre (object space) in one object."""

    def __init__(
        self, path: str, grid: Grid, contains: Callable[[MapObject, float, float], bool]
    ) -> None:
        self.path = path
        self.grid = grid
        self.contains = contains
        self.work = 0
        self.listed = 0
        self.prepaid: set[int] = set()  # ids of the objects charged by prepay
        self.xs: Any = None  # per column, per row parity: the centres' x (numpy)
        self.ys: Any = None  # per row, per column parity: the centres' y

    def charge(self, n: int, obj: MapObject) -> None:
        self.work += n
        if self.work > MAX_COVERAGE_WORK:
            raise fail(
                self.path,
                f"its objects take more than {MAX_COVERAGE_WORK} cell tests to place "
                f"(object {obj.id} passes the budget)",
                "use fewer, smaller or simpler regions",
            )

    def charge_listed(self, n: int, obj: MapObject) -> None:
        self.listed += n
        if self.listed > MAX_LISTED_CELLS:
            raise fail(
                self.path,
                f"its spawns and exits cover more than {MAX_LISTED_CELLS} cells "
                f"(object {obj.id} passes it)",
                "make the exits smaller",
            )

    # -- the candidate cells --------------------------------------------------------------

    def box(self, obj: MapObject, cell_of: Callable[[float, float], Cell]) -> Box | None:
        """The cells whose centres may lie in the shape: its bounding box in object space
        (rotated about the object's origin), two cells of margin, clipped to the map."""
        grid = self.grid
        if obj.points:
            rel = list(obj.points)
        else:
            rel = [(0.0, 0.0), (obj.width, 0.0), (0.0, obj.height), (obj.width, obj.height)]
        if obj.rotation:
            a = math.radians(obj.rotation)
            ca, sa = math.cos(a), math.sin(a)
            xs = [obj.x + x * ca - y * sa for x, y in rel]
            ys = [obj.y + x * sa + y * ca for x, y in rel]
        else:
            xs = [obj.x + x for x, _ in rel]
            ys = [obj.y + y for _, y in rel]
        corners = [cell_of(x, y) for x in (min(xs), max(xs)) for y in (min(ys), max(ys))]
        c0 = max(0, min(c for c, _ in corners) - 2)
        c1 = min(grid.width - 1, max(c for c, _ in corners) + 2)
        r0 = max(0, min(r for _, r in corners) - 2)
        r1 = min(grid.height - 1, max(r for _, r in corners) + 2)
        if c0 > c1 or r0 > r1:
            return None
        return c0, c1, r0, r1

    def cost(self, n: int) -> int:
        """What testing ``n`` candidate cells costs (plain Python on a small map)."""
        if n <= SMALL_OBJECT and small(self.grid.width * self.grid.height):
            return n * PLAIN_COST
        return n + NUMPY_OBJECT_COST

    def prepay(self, obj: MapObject, cell_of: Callable[[float, float], Cell]) -> None:
        """Charge an object's candidate cells now (:meth:`cells` then charges only what it
        finds on the way: a polygon's edge-centre pairs)."""
        if obj.shape in _AREAS:
            box = self.box(obj, cell_of)
            if box is not None:
                c0, c1, r0, r1 = box
                self.charge(self.cost((c1 - c0 + 1) * (r1 - r0 + 1)), obj)
                self.prepaid.add(obj.id)

    # -- the cells inside -----------------------------------------------------------------

    def cells(
        self,
        obj: MapObject,
        cell_of: Callable[[float, float], Cell],
        centre: Callable[[Cell], tuple[float, float]],
    ) -> tuple[Any, Any]:
        """``(cols, rows)`` of the cells whose centre (``centre``, object space) lies in
        the shape, row by row: lists for a small object, numpy arrays for a large one."""
        box = self.box(obj, cell_of)
        if box is None:
            return [], []
        c0, c1, r0, r1 = box
        n = (c1 - c0 + 1) * (r1 - r0 + 1)
        if obj.id not in self.prepaid:
            self.charge(self.cost(n), obj)
        if n <= SMALL_OBJECT and small(self.grid.width * self.grid.height):
            cols: list[int] = []
            rows: list[int] = []
            for r in range(r0, r1 + 1):
                for c in range(c0, c1 + 1):
                    cx, cy = centre((c, r))
                    if self.contains(obj, cx, cy):
                        cols.append(c)
                        rows.append(r)
            return cols, rows
        return self._cells_numpy(obj, box, centre)

    def _cells_numpy(
        self, obj: MapObject, box: Box, centre: Callable[[Cell], tuple[float, float]]
    ) -> tuple[Any, Any]:
        import numpy as np

        c0, c1, r0, r1 = box
        cs = np.arange(c0, c1 + 1)
        if self.xs is None:
            # A centre's x depends on its column and its row's parity, its y on its row and
            # its column's parity (every Tiled orientation, object space): the grid's own
            # floats, asked once per column and row of the map.
            w, h = self.grid.width, self.grid.height
            self.xs = np.array([[centre((c, p))[0] for p in (0, 1)] for c in range(w)])
            self.ys = np.array([[centre((p, r))[1] for p in (0, 1)] for r in range(h)])
        xs, ys = self.xs, self.ys
        per_block = max(1, BLOCK_CELLS // len(cs))
        out_c: list[Any] = []
        out_r: list[Any] = []
        for b0 in range(r0, r1 + 1, per_block):
            rs = np.arange(b0, min(r1, b0 + per_block - 1) + 1)
            cc = np.tile(cs, len(rs))
            rr = np.repeat(rs, len(cs))
            px = xs[cc, rr & 1]
            py = ys[rr, cc & 1]
            inside = self._inside(obj, px, py)
            out_c.append(cc[inside])
            out_r.append(rr[inside])
        return np.concatenate(out_c), np.concatenate(out_r)

    def _inside(self, obj: MapObject, px: Any, py: Any) -> Any:
        """The plain test's arithmetic (``contains``) on arrays of centres."""
        import numpy as np

        dx, dy = px - obj.x, py - obj.y
        if obj.rotation:
            a = math.radians(-obj.rotation)
            dx, dy = dx * math.cos(a) - dy * math.sin(a), dx * math.sin(a) + dy * math.cos(a)
        if obj.shape in ("rectangle", "text"):
            return (dx >= 0) & (dx <= obj.width) & (dy >= 0) & (dy <= obj.height)
        if obj.shape == "ellipse":
            rx, ry = obj.width / 2, obj.height / 2
            if rx <= 0 or ry <= 0:
                return np.zeros(dx.shape, dtype=bool)
            u, v = (dx - rx) / rx, (dy - ry) / ry
            return u * u + v * v <= 1.0
        if obj.shape == "polygon" and len(obj.points) >= 3:
            return self._inside_polygon(obj, dx, dy)
        return np.zeros(dx.shape, dtype=bool)

    def _inside_polygon(self, obj: MapObject, dx: Any, dy: Any) -> Any:
        """Even-odd rule: each edge toggles the centres in its band of heights
        (``min(yi, yj) <= dy < max(yi, yj)``) that lie left of where it crosses them."""
        import numpy as np

        pts = np.asarray(obj.points, dtype=np.float64)
        xi, yi = pts[:, 0], pts[:, 1]
        xj, yj = np.roll(xi, 1), np.roll(yi, 1)  # edge i runs from point i-1 to point i
        order = np.argsort(dy, kind="stable")
        sy = dy[order]
        lo = np.searchsorted(sy, np.minimum(yi, yj), side="left")
        hi = np.searchsorted(sy, np.maximum(yi, yj), side="left")
        counts = hi - lo
        self.charge(int(counts.sum()) + len(pts), obj)
        flips = np.zeros(len(dy), dtype=np.int64)
        edges = np.flatnonzero(counts)
        cum = np.cumsum(counts[edges])
        start = 0
        while start < len(edges):
            # Whole edges per block, at most BLOCK_PAIRS pairs (an edge alone may pass it).
            base = cum[start - 1] if start else 0
            stop = max(start + 1, int(np.searchsorted(cum, base + BLOCK_PAIRS, side="right")))
            e = edges[start:stop]
            k = counts[e]
            edge = np.repeat(e, k)
            first = np.repeat(np.cumsum(k) - k, k)
            point = order[lo[edge] + np.arange(len(edge)) - first]
            x_i, y_i, x_j, y_j = xi[edge], yi[edge], xj[edge], yj[edge]
            cross = (x_j - x_i) * (dy[point] - y_i) / (y_j - y_i) + x_i
            hit = point[dx[point] < cross]
            flips += np.bincount(hit, minlength=len(dy))
            start = stop
        return (flips & 1).astype(bool)


class Painter:
    """Regions' terrain properties painted onto a model's cells: each cell's record replaced
    by the record with the region's properties (as :meth:`MapModel.with_terrain` does),
    records found by a dict rather than a scan of the table, large regions on numpy."""

    def __init__(self, model: MapModel) -> None:
        self.model = model
        self.table = list(model.terrains)
        self.index: dict[Terrain, int] = {}
        for i, t in enumerate(self.table):
            self.index.setdefault(t, i)

    def _record(self, old: int, override: dict[str, Any]) -> int:
        new = replace(self.table[old], **override)
        got = self.index.get(new)
        if got is None:
            got = self.index[new] = len(self.table)
            self.table.append(new)
        return got

    def paint(self, cols: Any, rows: Any, override: dict[str, Any]) -> None:
        """Paint the cells ``(cols[i], rows[i])`` (lists or numpy arrays); the model's
        table of records follows whenever the painting made new ones (a spawn placed
        between two regions reads the cells' terrain)."""
        self._paint(cols, rows, override)
        if len(self.table) != len(self.model.terrains):
            self.model.terrains = tuple(self.table)

    def _paint(self, cols: Any, rows: Any, override: dict[str, Any]) -> None:
        remap: dict[int, int] = {}
        if isinstance(cols, list):
            ids = held(self.model, "terrain_ids")
            if isinstance(ids, Cells):  # not yet numpy: written in place as they are
                flat, width = ids.values, ids.shape[1]
                for c, r in zip(cols, rows, strict=True):
                    i = r * width + c
                    old = flat[i]
                    new = remap.get(old)
                    if new is None:
                        new = remap[old] = self._record(old, override)
                    flat[i] = new
            else:
                for c, r in zip(cols, rows, strict=True):
                    old = int(ids[r, c])
                    new = remap.get(old)
                    if new is None:
                        new = remap[old] = self._record(old, override)
                    ids[r, c] = new
            return
        import numpy as np

        if not len(cols):
            return
        ids = self.model.terrain_ids
        old = ids[rows, cols]
        uniq, inverse = np.unique(old, return_inverse=True)
        records = np.asarray([self._record(int(u), override) for u in uniq], dtype=ids.dtype)
        ids[rows, cols] = records[inverse]

    def finish(self) -> None:
        self.model.terrains = tuple(self.table)
