"""Grid geometry for Tiled maps: neighbours, distances, headings and pixels.

Cells are Tiled's own ``(col, row)`` tile coordinates. The four Tiled orientations reduce to
three kinds of grid that differ only in their direction tables:

* ``square``: ``orthogonal`` and ``isometric`` maps (isometric is a square grid drawn as diamonds);
* ``hex``: ``hexagonal`` maps, all four stagger variants, with Red Blob Games' cube coordinates;
* ``staggered``: staggered isometric maps, diamonds packed into a rectangle.

Square-like grids (square and staggered) are measured in their own orthogonal "axes": the
tile coordinates themselves for square grids, the diamond's two edge directions for staggered
ones. A step along one axis crosses an edge; a diagonal step crosses a corner.

Headings are degrees clockwise from the top of the map as drawn (0 = up, 90 = right). On
diamond-drawn grids (isometric and staggered) the edge neighbours therefore lie at 45, 135, 225
and 315 and the corner ("diagonal") neighbours at 0, 90, 180 and 270.

Pixel positions follow Tiled's renderers (libtiled ``orthogonalrenderer``,
``isometricrenderer``, ``hexagonalrenderer``, ``staggeredrenderer``) to the pixel, including
their integer rounding: hexagonal and staggered maps use the tile size rounded down to even
(``tileWidth & ~1``), so a 15x13 tile with side 6 draws as 14x12.

>>> g = Grid("hexagonal", 10, 10, 14, 12, stagger_axis="y", stagger_index="odd", hex_side=6)
>>> g.neighbours((1, 1))
[(2, 0), (2, 1), (2, 2), (1, 2), (0, 1), (1, 0)]
>>> g.distance((0, 0), (3, 3))
5
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass, field

from engine.errors import MapError, did_you_mean

Cell = tuple[int, int]
Offset = tuple[int, int, bool]

ORIENTATIONS = ("orthogonal", "isometric", "hexagonal", "staggered")
DIAGONAL_RULES = ("none", "equal", "alternate", "euclid")
STAGGER_AXES = ("x", "y")
STAGGER_INDEXES = ("odd", "even")

_SQRT2 = math.sqrt(2.0)

# heading -> step in the grid's own axes. Square: (dcol, drow) as drawn.
_SQUARE_DIRS: dict[int, tuple[int, int]] = {
    0: (0, -1),
    45: (1, -1),
    90: (1, 0),
    135: (1, 1),
    180: (0, 1),
    225: (-1, 1),
    270: (-1, 0),
    315: (-1, -1),
}
# Diamonds (isometric and staggered): axis u is drawn down-right, axis v down-left, so a screen
# step is (du - dv, du + dv) in half tiles.
_DIAMOND_DIRS: dict[int, tuple[int, int]] = {
    0: (-1, -1),
    45: (0, -1),
    90: (1, -1),
    135: (1, 0),
    180: (1, 1),
    225: (0, 1),
    270: (-1, 1),
    315: (-1, 0),
}
# Hex: (dq, dr) in cube coordinates, Red Blob Games' convention.
_POINTY_DIRS: dict[int, tuple[int, int]] = {
    30: (1, -1),
    90: (1, 0),
    150: (0, 1),
    210: (-1, 1),
    270: (-1, 0),
    330: (0, -1),
}
_FLAT_DIRS: dict[int, tuple[int, int]] = {
    0: (0, -1),
    60: (1, -1),
    120: (1, 0),
    180: (0, 1),
    240: (-1, 1),
    300: (-1, 0),
}

# Tiled's HexagonalRenderer::screenToTileCoords: which of the four candidate centres around a
# grid-aligned reference tile is nearest, and the tile offset that candidate stands for.
_HEX_PICK_X = ((0, 0), (1, -1), (1, 0), (2, 0))
_HEX_PICK_Y = ((0, 0), (-1, 1), (0, 1), (0, 2))


def _cdiv2(n: int) -> int:
    """``n / 2`` rounded toward zero, as C++ integer division does."""
    return n // 2 if n >= 0 else -((-n) // 2)


def _whole(name: str, value: object, minimum: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise MapError(f"map {name} must be a whole number, got {value!r}")
    if isinstance(value, float) and not value.is_integer():
        raise MapError(f"map {name} must be a whole number of pixels or cells, got {value!r}")
    if value < minimum:
        raise MapError(f"map {name} must be at least {minimum}, got {value!r}")
    return int(value)


def _choice(name: str, value: object, choices: tuple[str, ...], fix: str) -> None:
    if value not in choices:
        hint = did_you_mean(value, choices) if isinstance(value, str) else ""
        raise MapError(
            f"map {name} {value!r} is not supported{hint}; use one of {', '.join(choices)} ({fix})"
        )


@dataclass(frozen=True)
class Grid:
    """One map's grid: its shape, its neighbour tables and Tiled's pixel layout.

    ``hex_side`` is Tiled's ``hexsidelength`` and only counts on hexagonal maps;
    ``stagger_axis``/``stagger_index`` only count on hexagonal and staggered maps;
    ``diagonals`` only counts on square and staggered grids.
    """

    orientation: str
    width: int
    height: int
    tile_width: int
    tile_height: int
    stagger_axis: str = "y"
    stagger_index: str = "odd"
    hex_side: int = 0
    diagonals: str = "alternate"

    # Derived in __post_init__; not part of the grid's identity.
    _kind: str = field(init=False, repr=False, compare=False)
    _axis_y: bool = field(init=False, repr=False, compare=False)
    _even: bool = field(init=False, repr=False, compare=False)
    _headings: tuple[int, ...] = field(init=False, repr=False, compare=False)
    _face_headings: tuple[int, ...] = field(init=False, repr=False, compare=False)
    _faces: tuple[dict[int, tuple[int, int]], ...] = field(init=False, repr=False, compare=False)
    _heading_of: tuple[dict[tuple[int, int], int], ...] = field(
        init=False, repr=False, compare=False
    )
    _offsets: tuple[tuple[Offset, ...], ...] = field(init=False, repr=False, compare=False)
    _steps: tuple[tuple[tuple[int, int], ...], ...] = field(init=False, repr=False, compare=False)
    _pw: int = field(init=False, repr=False, compare=False)
    _ph: int = field(init=False, repr=False, compare=False)
    _sx: int = field(init=False, repr=False, compare=False)
    _sy: int = field(init=False, repr=False, compare=False)
    _offx: int = field(init=False, repr=False, compare=False)
    _offy: int = field(init=False, repr=False, compare=False)
    _colw: int = field(init=False, repr=False, compare=False)
    _rowh: int = field(init=False, repr=False, compare=False)
    _iso_origin: int = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        _choice("orientation", self.orientation, ORIENTATIONS, "set it in Tiled's Map Properties")
        _choice("staggeraxis", self.stagger_axis, STAGGER_AXES, "Map Properties > Stagger Axis")
        _choice(
            "staggerindex", self.stagger_index, STAGGER_INDEXES, "Map Properties > Stagger Index"
        )
        _choice("property 'diagonals'", self.diagonals, DIAGONAL_RULES, "a map property")
        staggered = self.orientation in ("hexagonal", "staggered")
        # Tiled's hex/staggered renderers round tiles down to even sizes; below 2 pixels a cell
        # would have no size at all.
        least = 2 if staggered else 1
        sizes = {
            "width": ("width", self.width, 1),
            "height": ("height", self.height, 1),
            "tile_width": ("tilewidth", self.tile_width, least),
            "tile_height": ("tileheight", self.tile_height, least),
            "hex_side": ("hexsidelength", self.hex_side, 0),
        }
        for attr, (name, value, minimum) in sizes.items():
            object.__setattr__(self, attr, _whole(name, value, minimum))
        axis_y = self.stagger_axis == "y"
        if self.orientation == "hexagonal":
            along = self.tile_height if axis_y else self.tile_width
            if self.hex_side > along:
                raise MapError(
                    f"map hexsidelength {self.hex_side} is longer than the tile "
                    f"({'height' if axis_y else 'width'} {along}); make it at most {along} "
                    "in Tiled's Map Properties"
                )
        self._init_tables(axis_y)
        self._init_pixels(axis_y)

    # -- tables -------------------------------------------------------------------------------

    def _init_tables(self, axis_y: bool) -> None:
        kind = {"hexagonal": "hex", "staggered": "staggered"}.get(self.orientation, "square")
        diamond = self.orientation in ("isometric", "staggered")
        if kind == "hex":
            dirs = _POINTY_DIRS if axis_y else _FLAT_DIRS
        else:
            dirs = _DIAMOND_DIRS if diamond else _SQUARE_DIRS
        s = object.__setattr__
        s(self, "_kind", kind)
        s(self, "_axis_y", axis_y)
        s(self, "_even", self.stagger_index == "even")
        s(self, "_headings", tuple(range(0, 360, 30 if kind == "hex" else 45)))
        s(self, "_face_headings", tuple(dirs))

        faces: list[dict[int, Offset]] = []
        for parity in (0, 1):
            # Any cell of this parity gives the same offsets: the stagger repeats every 2.
            rep: Cell = (0, 0) if kind == "square" else ((0, parity) if axis_y else (parity, 0))
            if kind == "hex":
                q, r, _ = self.to_cube(rep)
                moved = [
                    self.from_cube(q + dq, r + dr, -q - r - dq - dr) for dq, dr in dirs.values()
                ]
            else:
                u, v = self._axes(rep)
                moved = [self._from_axes(u + du, v + dv) for du, dv in dirs.values()]
            faces.append(
                {
                    h: (c - rep[0], r - rep[1], kind != "hex" and 0 not in d)
                    for (h, d), (c, r) in zip(dirs.items(), moved, strict=True)
                }
            )
        use_diagonals = kind != "hex" and self.diagonals != "none"
        offsets = tuple(
            tuple(o for o in f.values() if not o[2])
            + (tuple(o for o in f.values() if o[2]) if use_diagonals else ())
            for f in faces
        )
        s(self, "_faces", tuple({h: (o[0], o[1]) for h, o in f.items()} for f in faces))
        s(self, "_heading_of", tuple({(o[0], o[1]): h for h, o in f.items()} for f in faces))
        s(self, "_offsets", offsets)
        s(self, "_steps", tuple(tuple((o[0], o[1]) for o in t) for t in offsets))

    def _init_pixels(self, axis_y: bool) -> None:
        # Tiled's HexagonalRenderer::RenderParams (StaggeredRenderer shares it with side 0).
        pw, ph = self.tile_width & ~1, self.tile_height & ~1
        side = self.hex_side if self.orientation == "hexagonal" else 0
        sx, sy = (0, side) if axis_y else (side, 0)
        offx, offy = _cdiv2(pw - sx), _cdiv2(ph - sy)
        s = object.__setattr__
        s(self, "_pw", pw)
        s(self, "_ph", ph)
        s(self, "_sx", sx)
        s(self, "_sy", sy)
        s(self, "_offx", offx)
        s(self, "_offy", offy)
        s(self, "_colw", offx + sx)
        s(self, "_rowh", offy + sy)
        s(self, "_iso_origin", self.height * self.tile_width // 2)

    # -- basics -------------------------------------------------------------------------------

    @property
    def kind(self) -> str:
        """``"square"`` (orthogonal, isometric), ``"hex"`` or ``"staggered"``."""
        return self._kind

    def in_bounds(self, cell: Cell) -> bool:
        c, r = cell
        return 0 <= c < self.width and 0 <= r < self.height

    def cells(self) -> Iterator[Cell]:
        """Every cell, row by row (the order of :meth:`index`)."""
        for r in range(self.height):
            for c in range(self.width):
                yield (c, r)

    def index(self, cell: Cell) -> int:
        """Row-major index of a cell, for flat arrays: ``row * width + col``."""
        return cell[1] * self.width + cell[0]

    def cell_of_index(self, index: int) -> Cell:
        """Inverse of :meth:`index`."""
        r, c = divmod(index, self.width)
        return (c, r)

    def parity(self, cell: Cell) -> int:
        """The stagger parity that picks a cell's offset table (0 on square grids)."""
        if self._kind == "square":
            return 0
        return (cell[1] if self._axis_y else cell[0]) & 1

    def offsets(self, parity: int) -> tuple[Offset, ...]:
        """Neighbour ``(dcol, drow, is_diagonal)`` table for cells of that parity.

        Edge neighbours first, in heading order, then (when the diagonals rule allows them)
        corner neighbours in heading order. Hex grids have 6 entries, none diagonal.
        """
        return self._offsets[parity & 1]

    def neighbours(self, cell: Cell) -> list[Cell]:
        """In-bounds neighbours, in the order of :meth:`offsets`."""
        c, r = cell
        steps = self._steps[(r if self._axis_y else c) & 1]
        w, h = self.width, self.height
        out = []
        for dc, dr in steps:
            nc, nr = c + dc, r + dr
            if 0 <= nc < w and 0 <= nr < h:
                out.append((nc, nr))
        return out

    def neighbour_steps(self, cell: Cell) -> list[tuple[Cell, bool]]:
        """In-bounds neighbours with whether the step is diagonal."""
        c, r = cell
        table = self._offsets[(r if self._axis_y else c) & 1]
        w, h = self.width, self.height
        out = []
        for dc, dr, diagonal in table:
            nc, nr = c + dc, r + dr
            if 0 <= nc < w and 0 <= nr < h:
                out.append(((nc, nr), diagonal))
        return out

    # -- coordinates ----------------------------------------------------------------------------

    def _need_hex(self, what: str) -> None:
        if self._kind != "hex":
            raise ValueError(f"{what} needs a hexagonal map, this one is {self.orientation}")

    def to_cube(self, cell: Cell) -> tuple[int, int, int]:
        """Offset ``(col, row)`` to cube ``(q, r, s)`` (MAP-FORMAT's table; hex only)."""
        self._need_hex("to_cube")
        c, r = cell
        if self._axis_y:
            q = c - ((r + (r & 1)) >> 1 if self._even else (r - (r & 1)) >> 1)
            return (q, r, -q - r)
        rr = r - ((c + (c & 1)) >> 1 if self._even else (c - (c & 1)) >> 1)
        return (c, rr, -c - rr)

    def from_cube(self, q: int, r: int, s: int) -> Cell:
        """Cube ``(q, r, s)`` to offset ``(col, row)``; hex only."""
        self._need_hex("from_cube")
        if q + r + s != 0:
            raise ValueError(f"cube coordinates ({q}, {r}, {s}) do not sum to 0")
        if self._axis_y:
            c = q + ((r + (r & 1)) >> 1 if self._even else (r - (r & 1)) >> 1)
            return (c, r)
        row = r + ((q + (q & 1)) >> 1 if self._even else (q - (q & 1)) >> 1)
        return (q, row)

    def _axes(self, cell: Cell) -> tuple[int, int]:
        """A square or staggered cell in the grid's own orthogonal axes."""
        if self.orientation != "staggered":
            return cell
        c, r = cell
        # Position in half tiles, shifted so that X + Y is always even.
        if self._axis_y:
            x, y = 2 * c + (-(r & 1) if self._even else (r & 1)), r
        else:
            x, y = c, 2 * r + (-(c & 1) if self._even else (c & 1))
        return ((x + y) >> 1, (y - x) >> 1)

    def _from_axes(self, u: int, v: int) -> Cell:
        if self.orientation != "staggered":
            return (u, v)
        x, y = u - v, u + v
        if self._axis_y:
            return ((x - (-(y & 1) if self._even else (y & 1))) >> 1, y)
        return (x, (y - (-(x & 1) if self._even else (x & 1))) >> 1)

    # -- distances ----------------------------------------------------------------------------

    def _deltas(self, a: Cell, b: Cell) -> tuple[int, int]:
        """(larger, smaller) absolute axis difference on square and staggered grids."""
        ua, va = self._axes(a)
        ub, vb = self._axes(b)
        du, dv = abs(ub - ua), abs(vb - va)
        return (du, dv) if du >= dv else (dv, du)

    def _cube_distance(self, a: Cell, b: Cell) -> int:
        qa, ra, sa = self.to_cube(a)
        qb, rb, sb = self.to_cube(b)
        return max(abs(qa - qb), abs(ra - rb), abs(sa - sb))

    def distance(self, a: Cell, b: Cell) -> int | float:
        """Distance in cells under the grid's rule.

        Hex: cube distance. Square and staggered, by ``diagonals``: ``none`` counts orthogonal
        steps, ``equal`` counts a diagonal as 1, ``alternate`` as 1 then 2 (5-10-5 feet),
        ``euclid`` as sqrt(2).

        >>> Grid("orthogonal", 9, 9, 32, 32, diagonals="alternate").distance((0, 0), (3, 3))
        4
        """
        if self._kind == "hex":
            return self._cube_distance(a, b)
        hi, lo = self._deltas(a, b)
        rule = self.diagonals
        if rule == "none":
            return hi + lo
        if rule == "equal":
            return hi
        if rule == "alternate":
            return hi + lo // 2
        return (hi - lo) + lo * _SQRT2

    def steps(self, a: Cell, b: Cell) -> int:
        """Fewest neighbour steps from ``a`` to ``b`` on an open grid."""
        if self._kind == "hex":
            return self._cube_distance(a, b)
        hi, lo = self._deltas(a, b)
        return hi + lo if self.diagonals == "none" else hi

    def line(self, a: Cell, b: Cell) -> list[Cell]:
        """Cells from ``a`` to ``b`` inclusive, each a neighbour of the last (not clipped).

        Hex: cube interpolation with Red Blob Games' epsilon nudge. Square and staggered:
        rounded interpolation over :meth:`steps`; with ``diagonals = none`` an orthogonal walk.
        """
        if self._kind == "hex":
            return self._hex_line(a, b)
        ua, va = self._axes(a)
        ub, vb = self._axes(b)
        du, dv = ub - ua, vb - va
        pts: list[tuple[int, int]] = [(ua, va)]
        if self.diagonals == "none":
            nu, nv = abs(du), abs(dv)
            su, sv = (1 if du > 0 else -1), (1 if dv > 0 else -1)
            iu = iv = 0
            u, v = ua, va
            while iu < nu or iv < nv:
                # Step along the axis whose next cell boundary comes first (Red Blob's walk).
                if (1 + 2 * iu) * nv < (1 + 2 * iv) * nu:
                    u, iu = u + su, iu + 1
                else:
                    v, iv = v + sv, iv + 1
                pts.append((u, v))
        else:
            n = max(abs(du), abs(dv))
            pts += [
                (ua + (2 * du * i + n) // (2 * n), va + (2 * dv * i + n) // (2 * n))
                for i in range(1, n + 1)
            ]
        return [self._from_axes(u, v) for u, v in pts]

    def _hex_line(self, a: Cell, b: Cell) -> list[Cell]:
        n = self._cube_distance(a, b)
        qa, ra, _ = self.to_cube(a)
        qb, rb, _ = self.to_cube(b)
        # Nudge off the edges so that points exactly between two hexes round consistently.
        fa, ga = qa + 1e-6, ra + 1e-6
        fb, gb = qb + 1e-6, rb + 1e-6
        out = [a]
        for i in range(1, n + 1):
            t = i / n
            q, r = fa + (fb - fa) * t, ga + (gb - ga) * t
            out.append(self.from_cube(*_cube_round(q, r, -q - r)))
        return out

    def _box(self, center: Cell, radius: int) -> Iterator[Cell]:
        """In-bounds cells of a box that holds every cell within ``radius`` steps."""
        c, r = center
        rc = rr = radius
        if self._kind == "staggered":
            # A corner step moves two rows (axis y) or two columns (axis x).
            rc, rr = (radius, 2 * radius) if self._axis_y else (2 * radius, radius)
        for row in range(max(0, r - rr), min(self.height, r + rr + 1)):
            for col in range(max(0, c - rc), min(self.width, c + rc + 1)):
                yield (col, row)

    def ring(self, center: Cell, radius: int) -> list[Cell]:
        """In-bounds cells exactly ``radius`` steps away, row by row."""
        if radius < 0:
            return []
        return [x for x in self._box(center, radius) if self.steps(center, x) == radius]

    def cells_within(self, center: Cell, radius: int) -> list[Cell]:
        """In-bounds cells at most ``radius`` steps away, row by row."""
        if radius < 0:
            return []
        return [x for x in self._box(center, radius) if self.steps(center, x) <= radius]

    # -- headings -----------------------------------------------------------------------------

    def headings(self) -> tuple[int, ...]:
        """Every heading: hex 0, 30, ..., 330; square and staggered 0, 45, ..., 315."""
        return self._headings

    def face_headings(self) -> tuple[int, ...]:
        """Headings that point at a neighbour (hex: through a face; others: all 8)."""
        return self._face_headings

    def step_heading(self, cell: Cell, heading: int) -> Cell:
        """The neighbour in that direction (not bounds-clipped).

        >>> Grid("orthogonal", 5, 5, 32, 32).step_heading((2, 2), 90)
        (3, 2)
        """
        h = heading % 360
        d = self._faces[self.parity(cell)].get(h)
        if d is None:
            raise ValueError(
                f"heading {heading} does not point through a face of a {self._kind} cell; "
                f"use one of {', '.join(map(str, self.face_headings()))}"
            )
        return (cell[0] + d[0], cell[1] + d[1])

    def vertex_faces(self, heading: int) -> tuple[int, int]:
        """The two face headings beside a hex vertex heading: ``(h - 30, h + 30)``."""
        h = heading % 360
        if h not in self._headings or h in self._face_headings:
            raise ValueError(f"heading {heading} is not a vertex heading on this {self._kind} grid")
        return ((h - 30) % 360, (h + 30) % 360)

    def heading_between(self, a: Cell, b: Cell) -> int:
        """Heading from ``a`` to its neighbour ``b``."""
        d = (b[0] - a[0], b[1] - a[1])
        h = self._heading_of[self.parity(a)].get(d)
        if h is None:
            raise ValueError(f"cells {a} and {b} are not neighbours")
        return h

    # -- pixels (Tiled's renderers) -------------------------------------------------------------

    def pixel_size(self) -> tuple[int, int]:
        """Size of the whole map in pixels, as Tiled's ``mapSize``/``mapBoundingRect``."""
        w, h = self.width, self.height
        if self.orientation == "orthogonal":
            return (w * self.tile_width, h * self.tile_height)
        if self.orientation == "isometric":
            side = w + h
            return (side * self.tile_width // 2, side * self.tile_height // 2)
        pw, ph, sx, sy = self._pw, self._ph, self._sx, self._sy
        offx, offy = self._offx, self._offy
        colw, rowh = self._colw, self._rowh
        if self._axis_y:
            return (w * (pw + sx) + (colw if h > 1 else 0), h * rowh + offy)
        return (w * colw + offx, h * (ph + sy) + (rowh if w > 1 else 0))

    def _shifted(self, i: int) -> bool:
        return bool((i & 1) ^ self._even)

    def cell_origin(self, cell: Cell) -> tuple[int, int]:
        """Top-left corner of the box the cell is drawn in.

        Isometric tiles with an odd width or height can sit on half pixels in Tiled; those
        are rounded down here (:meth:`cell_center` and :meth:`cell_corners` stay exact).
        """
        c, r = cell
        if self.orientation == "orthogonal":
            return (c * self.tile_width, r * self.tile_height)
        if self.orientation == "isometric":
            tw, th = self.tile_width, self.tile_height
            return ((c - r - 1) * tw // 2 + self._iso_origin, (c + r) * th // 2)
        if self._axis_y:
            x = c * (self._pw + self._sx) + (self._colw if self._shifted(r) else 0)
            return (x, r * self._rowh)
        y = r * (self._ph + self._sy) + (self._rowh if self._shifted(c) else 0)
        return (c * self._colw, y)

    def cell_center(self, cell: Cell) -> tuple[float, float]:
        """Centre of the cell's drawn shape, in pixels."""
        c, r = cell
        if self.orientation == "orthogonal":
            return ((c + 0.5) * self.tile_width, (r + 0.5) * self.tile_height)
        if self.orientation == "isometric":
            tw, th = self.tile_width, self.tile_height
            return ((c - r) * tw / 2 + self._iso_origin, (c + r + 1) * th / 2)
        x, y = self.cell_origin(cell)
        return (x + self._pw / 2, y + self._ph / 2)

    def cell_corners(self, cell: Cell) -> list[tuple[float, float]]:
        """The cell's outline, clockwise on screen, as Tiled's ``tileToScreenPolygon``.

        Hex: 6 points (4 if ``hex_side`` is 0); square: 4 from the top-left; isometric and
        staggered: a diamond of 4, from its left (staggered) or top (isometric) vertex.
        """
        c, r = cell
        if self.orientation == "orthogonal":
            tw, th = self.tile_width, self.tile_height
            left, top = float(c * tw), float(r * th)
            return [(left, top), (left + tw, top), (left + tw, top + th), (left, top + th)]
        if self.orientation == "isometric":
            tw, th = self.tile_width, self.tile_height
            # The diamond's top vertex; Tiled adds the half sizes with integer division.
            tx = (c - r) * tw / 2 + self._iso_origin
            ty = (c + r) * th / 2
            hw, hh = tw // 2, th // 2
            return [(tx, ty), (tx + hw, ty + hh), (tx, ty + th), (tx - hw, ty + hh)]
        ox, oy = self.cell_origin(cell)
        pw, ph, offx, offy = self._pw, self._ph, self._offx, self._offy
        octagon = [
            (0, ph - offy),
            (0, offy),
            (offx, 0),
            (pw - offx, 0),
            (pw, offy),
            (pw, ph - offy),
            (pw - offx, ph),
            (offx, ph),
        ]
        # Tiled's octagon repeats points where a hex has a pointed end (and a diamond four).
        pts = [p for i, p in enumerate(octagon) if p != octagon[i - 1]]
        return [(float(ox + px), float(oy + py)) for px, py in pts]

    def cell_at(self, x: float, y: float) -> Cell:
        """The cell under a pixel, as Tiled's ``screenToTileCoords`` (may be out of bounds)."""
        if self.orientation == "orthogonal":
            return (math.floor(x / self.tile_width), math.floor(y / self.tile_height))
        if self.orientation == "isometric":
            tx = (x - self._iso_origin) / self.tile_width
            ty = y / self.tile_height
            return (math.floor(ty + tx), math.floor(ty - tx))
        if self.orientation == "staggered":
            return self._staggered_cell_at(x, y)
        return self._hex_cell_at(x, y)

    def _hex_cell_at(self, x: float, y: float) -> Cell:
        # HexagonalRenderer::screenToTileCoords: find the grid-aligned reference tile, then
        # the nearest of four candidate centres around it.
        pw, ph, sx, sy = self._pw, self._ph, self._sx, self._sy
        colw, rowh, even = self._colw, self._rowh, self._even
        stagger_x = not self._axis_y
        if stagger_x:
            x -= pw if even else self._offx
        else:
            y -= ph if even else self._offy
        rc, rr = math.floor(x / (colw * 2)), math.floor(y / (rowh * 2))
        relx, rely = x - rc * colw * 2, y - rr * rowh * 2
        if stagger_x:
            rc = rc * 2 + int(even)
            left, cy = sx // 2, ph // 2
            cx = left + colw
            centers = ((left, cy), (cx, cy - rowh), (cx, cy + rowh), (cx + colw, cy))
            picks = _HEX_PICK_X
        else:
            rr = rr * 2 + int(even)
            top, cx = sy // 2, pw // 2
            cy = top + rowh
            centers = ((cx, top), (cx - colw, cy), (cx + colw, cy), (cx, cy + rowh))
            picks = _HEX_PICK_Y
        best, best_d = 0, math.inf
        for i, (px, py) in enumerate(centers):
            d = (px - relx) ** 2 + (py - rely) ** 2
            if d < best_d:
                best, best_d = i, d
        return (rc + picks[best][0], rr + picks[best][1])

    def _staggered_cell_at(self, x: float, y: float) -> Cell:
        # StaggeredRenderer::screenToTileCoords: a grid-aligned reference diamond, then the
        # four corner triangles belong to its edge neighbours.
        pw, ph, even = self._pw, self._ph, self._even
        offy = self._offy
        if self._axis_y:
            y -= offy if even else 0
        else:
            x -= self._offx if even else 0
        rc, rr = math.floor(x / pw), math.floor(y / ph)
        relx, rely = x - rc * pw, y - rr * ph
        if self._axis_y:
            rr = rr * 2 + int(even)
        else:
            rc = rc * 2 + int(even)
        ref = (rc, rr)
        y_pos = relx * (ph / pw)
        if offy - y_pos > rely:
            return self.step_heading(ref, 315)
        if -offy + y_pos > rely:
            return self.step_heading(ref, 45)
        if offy + y_pos < rely:
            return self.step_heading(ref, 225)
        if offy * 3 - y_pos < rely:
            return self.step_heading(ref, 135)
        return ref


def _cube_round(q: float, r: float, s: float) -> tuple[int, int, int]:
    """Nearest cube cell to fractional cube coordinates (Red Blob Games)."""
    rq, rr, rs = round(q), round(r), round(s)
    dq, dr, ds = abs(rq - q), abs(rr - r), abs(rs - s)
    if dq > dr and dq > ds:
        rq = -rr - rs
    elif dr > ds:
        rr = -rq - rs
    else:
        rs = -rq - rr
    return (rq, rr, rs)
