"""Grid geometry: neighbour tables, distances, lines, headings and Tiled's pixel layout."""

from __future__ import annotations

import dataclasses
import math
import xml.etree.ElementTree as ET
from collections import deque
from pathlib import Path

import pytest
from conftest import CORPUS
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.errors import MapError
from engine.grid import DIAGONAL_RULES, Cell, Grid

EXAMPLES = CORPUS / "tiled-examples"

FAST = settings(max_examples=100, deadline=None)

# One grid per geometric variant (tile size does not matter to the geometry).
GEOMETRY = {
    **{
        f"ortho-{rule}": Grid("orthogonal", 9, 10, 32, 32, diagonals=rule)
        for rule in DIAGONAL_RULES
    },
    "iso-alternate": Grid("isometric", 9, 10, 64, 32),
    "iso-none": Grid("isometric", 9, 10, 64, 32, diagonals="none"),
    **{
        f"hex-{axis}-{index}": Grid("hexagonal", 9, 10, 15, 13, axis, index, 6)
        for axis in "xy"
        for index in ("odd", "even")
    },
    **{
        f"stag-{axis}-{index}": Grid("staggered", 9, 10, 64, 32, axis, index)
        for axis in "xy"
        for index in ("odd", "even")
    },
    "stag-y-odd-none": Grid("staggered", 9, 10, 64, 32, "y", "odd", diagonals="none"),
    "stag-x-even-euclid": Grid("staggered", 9, 10, 64, 32, "x", "even", diagonals="euclid"),
}
HEXES = {k: g for k, g in GEOMETRY.items() if g.kind == "hex"}

# Every orientation x stagger variant x tile size, for the pixel functions.
TILE_SIZES = [(15, 13, 6), (15, 13, 5), (32, 32, 16), (60, 60, 30), (64, 32, 16)]
PIXEL = {
    **{
        f"{o}-{w}x{h}": Grid(o, 5, 4, w, h)
        for o in ("orthogonal", "isometric")
        for w, h, _ in TILE_SIZES
    },
    **{
        f"{o}-{axis}-{index}-{w}x{h}s{s}": Grid(o, 5, 4, w, h, axis, index, s)
        for o in ("hexagonal", "staggered")
        for axis in "xy"
        for index in ("odd", "even")
        for w, h, s in TILE_SIZES
    },
}


def _ids(d: dict[str, Grid]) -> list[str]:
    return list(d)


def geometry(kind: str | None = None) -> pytest.MarkDecorator:
    grids = {k: g for k, g in GEOMETRY.items() if kind is None or g.kind == kind}
    return pytest.mark.parametrize("g", list(grids.values()), ids=_ids(grids))


pixel_variants = pytest.mark.parametrize("g", list(PIXEL.values()), ids=_ids(PIXEL))

cells = st.tuples(st.integers(-30, 30), st.integers(-30, 30))


def bfs(g: Grid, start: Cell) -> dict[Cell, int]:
    seen = {start: 0}
    todo = deque([start])
    while todo:
        cell = todo.popleft()
        for n in g.neighbours(cell):
            if n not in seen:
                seen[n] = seen[cell] + 1
                todo.append(n)
    return seen


def is_step(g: Grid, a: Cell, b: Cell) -> bool:
    """b is a neighbour of a on an unbounded grid."""
    d = (b[0] - a[0], b[1] - a[1])
    return any(d == (dc, dr) for dc, dr, _ in g.offsets(g.parity(a)))


# -- construction ---------------------------------------------------------------------------


def test_kind_and_identity() -> None:
    assert Grid("orthogonal", 3, 3, 32, 32).kind == "square"
    assert Grid("isometric", 3, 3, 64, 32).kind == "square"
    assert Grid("hexagonal", 3, 3, 14, 12, hex_side=6).kind == "hex"
    assert Grid("staggered", 3, 3, 64, 32).kind == "staggered"
    a, b = Grid("hexagonal", 3, 3, 14, 12, hex_side=6), Grid("hexagonal", 3, 3, 14, 12, hex_side=6)
    assert a == b and hash(a) == hash(b)
    assert a != Grid("hexagonal", 3, 3, 14, 12, hex_side=4)
    with pytest.raises(dataclasses.FrozenInstanceError):
        a.width = 4  # type: ignore[misc]
    assert dataclasses.replace(a, width=5).neighbours((4, 0)) == [(4, 1), (3, 1), (3, 0)]


def test_whole_float_sizes_are_accepted() -> None:
    g = Grid("hexagonal", 3, 3, 14, 12, hex_side=6.0)  # type: ignore[arg-type]
    assert g.hex_side == 6 and isinstance(g.hex_side, int)


@pytest.mark.parametrize(
    ("kwargs", "words"),
    [
        ({"orientation": "hexagonl"}, ["'hexagonl'", "did you mean 'hexagonal'"]),
        ({"orientation": "oblique"}, ["'oblique'", "orthogonal"]),
        ({"width": 0}, ["width", "at least 1"]),
        ({"tile_height": -3}, ["tileheight"]),
        ({"stagger_axis": "z"}, ["staggeraxis", "'z'"]),
        ({"stagger_index": "odds"}, ["staggerindex", "did you mean 'odd'"]),
        ({"diagonals": "diag"}, ["diagonals", "'diag'"]),
        ({"hex_side": 6.5}, ["hexsidelength", "6.5"]),
        ({"hex_side": 13}, ["hexsidelength 13", "at most 12"]),
        ({"tile_width": 1}, ["tilewidth", "at least 2"]),
        ({"width": "9"}, ["width", "'9'"]),
    ],
)
def test_bad_values_raise_map_error(kwargs: dict[str, object], words: list[str]) -> None:
    args: dict[str, object] = {
        "orientation": "hexagonal",
        "width": 4,
        "height": 4,
        "tile_width": 14,
        "tile_height": 12,
        "hex_side": 6,
    }
    args.update(kwargs)
    with pytest.raises(MapError) as err:
        Grid(**args)  # type: ignore[arg-type]
    for word in words:
        assert word in str(err.value)


# -- neighbour tables -----------------------------------------------------------------------


@geometry()
def test_offset_tables(g: Grid) -> None:
    for parity in (0, 1):
        table = g.offsets(parity)
        if g.kind == "hex":
            assert len(table) == 6 and not any(diag for _, _, diag in table)
        else:
            want = 4 if g.diagonals == "none" else 8
            assert len(table) == want
            assert [diag for _, _, diag in table] == [False] * 4 + [True] * (want - 4)
        assert len({(dc, dr) for dc, dr, _ in table}) == len(table)
        assert (0, 0) not in {(dc, dr) for dc, dr, _ in table}
    if g.kind == "square":
        assert g.offsets(0) == g.offsets(1)
        assert g.parity((3, 5)) == 0


@geometry()
def test_neighbours_follow_offsets(g: Grid) -> None:
    for cell in g.cells():
        table = g.offsets(g.parity(cell))
        expected = [(cell[0] + dc, cell[1] + dr) for dc, dr, _ in table]
        expected_steps = [((cell[0] + dc, cell[1] + dr), d) for dc, dr, d in table]
        assert g.neighbours(cell) == [c for c in expected if g.in_bounds(c)]
        assert g.neighbour_steps(cell) == [s for s in expected_steps if g.in_bounds(s[0])]


@geometry()
def test_neighbour_symmetry(g: Grid) -> None:
    for a in g.cells():
        for b in g.neighbours(a):
            assert a in g.neighbours(b)
            assert dict(g.neighbour_steps(a))[b] == dict(g.neighbour_steps(b))[a]


def test_square_tables() -> None:
    g = Grid("orthogonal", 5, 5, 32, 32, diagonals="none")
    assert sorted(g.neighbours((2, 2))) == [(1, 2), (2, 1), (2, 3), (3, 2)]
    g = Grid("orthogonal", 5, 5, 32, 32, diagonals="equal")
    assert sorted(g.neighbours((0, 0))) == [(0, 1), (1, 0), (1, 1)]
    assert dict(g.neighbour_steps((2, 2)))[(3, 3)] is True


def _tiled_corner_neighbours(g: Grid, x: int, y: int) -> set[Cell]:
    """Tiled's HexagonalRenderer::topLeft/topRight/bottomLeft/bottomRight."""
    index = int(g.stagger_index == "even")
    if g.stagger_axis == "y":
        if (y & 1) ^ index:
            return {(x, y - 1), (x + 1, y - 1), (x, y + 1), (x + 1, y + 1)}
        return {(x - 1, y - 1), (x, y - 1), (x - 1, y + 1), (x, y + 1)}
    if (x & 1) ^ index:
        return {(x - 1, y), (x + 1, y), (x - 1, y + 1), (x + 1, y + 1)}
    return {(x - 1, y - 1), (x + 1, y - 1), (x - 1, y), (x + 1, y)}


@geometry("staggered")
def test_staggered_edge_and_corner_neighbours(g: Grid) -> None:
    x, y = 4, 5
    for cell in [(x, y), (x + 1, y + 1)]:
        steps = g.neighbour_steps(cell)
        edges = {n for n, diag in steps if not diag}
        corners = {n for n, diag in steps if diag}
        assert edges == _tiled_corner_neighbours(g, *cell)
        c, r = cell
        if g.diagonals == "none":
            assert corners == set()
        elif g.stagger_axis == "y":
            assert corners == {(c, r - 2), (c, r + 2), (c - 1, r), (c + 1, r)}
        else:
            assert corners == {(c - 2, r), (c + 2, r), (c, r - 1), (c, r + 1)}


def parse_hex_picture(g: Grid, picture: str) -> dict[str, set[Cell]]:
    """Cells by mark. Pointy-top: one text line per row, shifted rows indented one character.
    Flat-top: two text lines per row, shifted columns one line lower; columns 2 chars apart."""
    even = g.stagger_index == "even"
    marks: dict[str, set[Cell]] = {}
    for line_no, line in enumerate(picture.strip("\n").splitlines()):
        for k, ch in enumerate(line):
            if ch == " ":
                continue
            if g.stagger_axis == "y":
                row = line_no
                col = (k - ((row & 1) ^ even)) // 2
            else:
                col = k // 2
                row = (line_no - ((col & 1) ^ even)) // 2
            marks.setdefault(ch, set()).add((col, row))
    return marks


HEX_PICTURES = [
    (
        "y",
        "odd",
        """
. . . . .
 . N N . .
. N X N .
 . N N . .
""",
    ),
    (
        "y",
        "odd",
        """
. . N N .
 . N X N .
. . N N .
 . . . . .
""",
    ),
    (
        "x",
        "even",
        """
  .   .
.   N   .
  N   N
.   X   .
  N   N
.   N   .
  .   .
.   .   .
""",
    ),
    (
        "x",
        "even",
        """
  N   .
N   N   .
  X   .
N   N   .
  N   .
.   .   .
  .   .
.   .   .
""",
    ),
]


@pytest.mark.parametrize(("axis", "index", "picture"), HEX_PICTURES)
def test_hex_neighbours_as_drawn(axis: str, index: str, picture: str) -> None:
    g = Grid("hexagonal", 5, 4, 32, 32, axis, index, 16)
    marks = parse_hex_picture(g, picture)
    assert len(marks["."]) + len(marks["N"]) + 1 == 20
    (center,) = marks["X"]
    assert set(g.neighbours(center)) == marks["N"]


# -- cube coordinates -----------------------------------------------------------------------


@pytest.mark.parametrize("g", list(HEXES.values()), ids=_ids(HEXES))
@FAST
@given(cell=cells)
def test_cube_round_trip(g: Grid, cell: Cell) -> None:
    q, r, s = g.to_cube(cell)
    assert q + r + s == 0
    assert g.from_cube(q, r, s) == cell
    for dc, dr, _ in g.offsets(g.parity(cell)):
        nq, nr, ns = g.to_cube((cell[0] + dc, cell[1] + dr))
        assert max(abs(nq - q), abs(nr - r), abs(ns - s)) == 1


@pytest.mark.parametrize(
    ("axis", "index", "cell", "cube"),
    [
        ("y", "odd", (1, 1), (1, 1, -2)),
        ("y", "even", (1, 1), (0, 1, -1)),
        ("y", "odd", (3, 4), (1, 4, -5)),
        ("x", "odd", (1, 1), (1, 1, -2)),
        ("x", "even", (1, 1), (1, 0, -1)),
        ("x", "even", (4, 3), (4, 1, -5)),
        ("y", "even", (0, -1), (0, -1, 1)),
        ("x", "odd", (-1, 0), (-1, 1, 0)),
    ],
)
def test_cube_table(axis: str, index: str, cell: Cell, cube: tuple[int, int, int]) -> None:
    assert Grid("hexagonal", 9, 9, 32, 32, axis, index, 16).to_cube(cell) == cube


def test_cube_needs_hex() -> None:
    g = Grid("orthogonal", 3, 3, 32, 32)
    with pytest.raises(ValueError, match="hexagonal"):
        g.to_cube((0, 0))
    with pytest.raises(ValueError, match="hexagonal"):
        g.from_cube(0, 0, 0)
    with pytest.raises(ValueError, match="sum to 0"):
        HEXES["hex-y-odd"].from_cube(1, 1, 1)


# -- distances ------------------------------------------------------------------------------


@geometry()
def test_steps_equal_bfs(g: Grid) -> None:
    for start in g.cells():
        for cell, n in bfs(g, start).items():
            assert g.steps(start, cell) == n


@pytest.mark.parametrize(
    ("rule", "a", "b", "want"),
    [
        ("alternate", (0, 0), (3, 3), 4),
        ("alternate", (0, 0), (2, 1), 2),
        ("equal", (0, 0), (2, 1), 2),
        ("none", (0, 0), (2, 1), 3),
        ("alternate", (0, 0), (1, 1), 1),
        ("alternate", (0, 0), (2, 2), 3),
        ("alternate", (5, 5), (1, 3), 5),
        ("equal", (0, 0), (3, 3), 3),
        ("none", (0, 0), (3, 3), 6),
        ("euclid", (0, 0), (3, 3), 3 * math.sqrt(2)),
        ("euclid", (0, 0), (2, 1), 1 + math.sqrt(2)),
        ("euclid", (0, 0), (4, 0), 4),
    ],
)
def test_square_distance(rule: str, a: Cell, b: Cell, want: float) -> None:
    for o in ("orthogonal", "isometric"):
        g = Grid(o, 9, 9, 64, 32, diagonals=rule)
        assert g.distance(a, b) == pytest.approx(want)
        assert g.distance(b, a) == pytest.approx(want)


@pytest.mark.parametrize(
    ("rule", "b", "want"),
    [
        # From (2, 2) on a y/odd staggered map: (2, 4) is the corner neighbour below, two
        # rows down; (2, 6) two corners; (2, 3) the edge neighbour down-right; (2, 5) that
        # edge and then a corner.
        ("none", (2, 4), 2),
        ("equal", (2, 4), 1),
        ("alternate", (2, 6), 3),
        ("euclid", (2, 4), math.sqrt(2)),
        ("none", (2, 3), 1),
        ("alternate", (2, 5), 2),
        ("equal", (2, 5), 2),
        ("none", (2, 5), 3),
        ("euclid", (2, 5), 1 + math.sqrt(2)),
        ("alternate", (2, 2), 0),
    ],
)
def test_staggered_distance_in_diamond_axes(rule: str, b: Cell, want: float) -> None:
    g = Grid("staggered", 9, 9, 64, 32, "y", "odd", diagonals=rule)
    assert g.distance((2, 2), b) == pytest.approx(want)


@pytest.mark.parametrize(
    ("axis", "index", "a", "b", "want"),
    [
        ("y", "odd", (0, 0), (3, 3), 5),
        ("y", "odd", (0, 0), (0, 2), 2),
        ("y", "even", (0, 0), (0, 2), 2),
        ("y", "even", (0, 0), (3, 0), 3),
        ("x", "odd", (0, 0), (2, 0), 2),
        ("x", "odd", (0, 0), (4, 2), 4),
        ("x", "even", (0, 0), (1, 0), 1),
        ("x", "even", (0, 0), (1, 1), 1),
        ("x", "even", (0, 0), (1, 2), 2),
        ("x", "odd", (0, 0), (1, 1), 2),
    ],
)
def test_hex_distance(axis: str, index: str, a: Cell, b: Cell, want: int) -> None:
    g = Grid("hexagonal", 9, 9, 32, 32, axis, index, 16)
    assert g.distance(a, b) == want == g.steps(a, b)


@geometry()
@FAST
@given(a=cells, b=cells)
def test_distance_against_steps(g: Grid, a: Cell, b: Cell) -> None:
    d, n = g.distance(a, b), g.steps(a, b)
    assert d == g.distance(b, a) and n == g.steps(b, a)
    if g.kind == "hex" or g.diagonals in ("none", "equal"):
        assert d == n
    else:
        assert n <= d <= 2 * n


# -- lines, rings ---------------------------------------------------------------------------


@geometry()
@FAST
@given(a=cells, b=cells)
def test_line(g: Grid, a: Cell, b: Cell) -> None:
    line = g.line(a, b)
    assert line[0] == a and line[-1] == b
    assert len(line) == g.steps(a, b) + 1
    for x, y in zip(line, line[1:], strict=False):
        assert is_step(g, x, y)


def test_line_examples() -> None:
    sq = Grid("orthogonal", 9, 9, 32, 32)
    assert sq.line((0, 0), (4, 2)) == [(0, 0), (1, 1), (2, 1), (3, 2), (4, 2)]
    assert Grid("orthogonal", 9, 9, 32, 32, diagonals="none").line((0, 0), (2, 1)) == [
        (0, 0),
        (1, 0),
        (1, 1),
        (2, 1),
    ]
    hx = HEXES["hex-y-odd"]
    assert hx.line((0, 0), (4, 0)) == [(0, 0), (1, 0), (2, 0), (3, 0), (4, 0)]
    assert hx.line((1, 1), (1, 1)) == [(1, 1)]


@geometry()
def test_ring_and_disc_sizes(g: Grid) -> None:
    big = dataclasses.replace(g, width=40, height=40)
    center = (20, 20)
    for radius in range(5):
        ring = big.ring(center, radius)
        disc = big.cells_within(center, radius)
        if g.kind == "hex":
            assert len(ring) == (6 * radius or 1)
            assert len(disc) == 1 + 3 * radius * (radius + 1)
        elif g.diagonals == "none":
            assert len(ring) == (4 * radius or 1)
            assert len(disc) == 2 * radius * (radius + 1) + 1
        else:
            assert len(ring) == (8 * radius or 1)
            assert len(disc) == (2 * radius + 1) ** 2
        assert all(big.steps(center, c) == radius for c in ring)
        assert set(disc) == {c for k in range(radius + 1) for c in big.ring(center, k)}
    assert big.ring(center, 1) == sorted(big.neighbours(center), key=lambda c: (c[1], c[0]))
    assert big.ring(center, -1) == [] == big.cells_within(center, -1)


@geometry()
def test_rings_are_clipped(g: Grid) -> None:
    full = dataclasses.replace(g, width=40, height=40)
    for radius in range(4):
        ring = g.ring((0, 0), radius)
        assert all(g.in_bounds(c) for c in ring)
        assert set(ring) == {c for c in full.ring((0, 0), radius) if g.in_bounds(c)}
    assert set(g.cells_within((4, 4), 99)) == set(g.cells())


# -- headings -------------------------------------------------------------------------------


@geometry()
def test_headings(g: Grid) -> None:
    if g.kind == "hex":
        assert g.headings() == tuple(range(0, 360, 30))
        start = 30 if g.stagger_axis == "y" else 0
        assert g.face_headings() == tuple(range(start, 360, 60))
    else:
        assert g.headings() == tuple(range(0, 360, 45)) == g.face_headings()


@geometry()
def test_step_heading_and_heading_between(g: Grid) -> None:
    for cell in [(4, 4), (5, 5), (4, 5), (5, 4)]:
        targets = set()
        for h in g.face_headings():
            n = g.step_heading(cell, h)
            assert g.heading_between(cell, n) == h
            assert g.heading_between(n, cell) == (h + 180) % 360
            assert g.step_heading(cell, h + 360) == n
            targets.add(n)
        assert len(targets) == len(g.face_headings())
        assert set(g.neighbours(cell)) <= targets
    with pytest.raises(ValueError, match="not neighbours"):
        g.heading_between((4, 4), (4, 8))


@geometry("hex")
def test_vertex_headings(g: Grid) -> None:
    vertices = [h for h in g.headings() if h not in g.face_headings()]
    assert len(vertices) == 6
    for h in vertices:
        left, right = g.vertex_faces(h)
        assert (left, right) == ((h - 30) % 360, (h + 30) % 360)
        assert {left, right} <= set(g.face_headings())
        with pytest.raises(ValueError, match="face"):
            g.step_heading((3, 3), h)
    with pytest.raises(ValueError):
        g.vertex_faces(g.face_headings()[0])


def test_vertex_faces_examples() -> None:
    pointy, flat = HEXES["hex-y-odd"], HEXES["hex-x-even"]
    assert pointy.vertex_faces(0) == (330, 30)
    assert flat.vertex_faces(30) == (0, 60)
    with pytest.raises(ValueError):
        GEOMETRY["ortho-equal"].vertex_faces(45)


def test_heading_examples() -> None:
    sq = GEOMETRY["ortho-alternate"]
    assert sq.step_heading((2, 2), 0) == (2, 1)
    assert sq.step_heading((2, 2), 135) == (3, 3)
    iso = GEOMETRY["iso-alternate"]  # headings as drawn: row - 1 is up-right
    assert iso.step_heading((2, 2), 0) == (1, 1)
    assert iso.step_heading((2, 2), 45) == (2, 1)
    stag = GEOMETRY["stag-y-odd"]
    assert stag.step_heading((2, 2), 0) == (2, 0)
    assert stag.step_heading((2, 2), 45) == (2, 1)
    assert stag.step_heading((2, 3), 45) == (3, 2)
    assert HEXES["hex-y-odd"].step_heading((2, 2), 90) == (3, 2)
    assert HEXES["hex-x-odd"].step_heading((1, 1), 60) == (2, 1)


def _angle(g: Grid, a: Cell, b: Cell) -> float:
    (ax, ay), (bx, by) = g.cell_center(a), g.cell_center(b)
    return math.degrees(math.atan2(bx - ax, ay - by)) % 360


@pixel_variants
def test_headings_point_where_drawn(g: Grid) -> None:
    """The heading table agrees with the pixels: each neighbour lies nearest its heading."""
    for cell in [(2, 2), (3, 3), (2, 3), (3, 2)]:
        for h in g.face_headings():
            angle = _angle(g, cell, g.step_heading(cell, h))
            nearest = min(g.face_headings(), key=lambda k: abs((angle - k + 180) % 360 - 180))
            assert nearest == h, (cell, h, angle)


# -- pixels ---------------------------------------------------------------------------------


@pixel_variants
def test_center_maps_back(g: Grid) -> None:
    for c in range(-2, g.width + 2):
        for r in range(-2, g.height + 2):
            assert g.cell_at(*g.cell_center((c, r))) == (c, r)


@pixel_variants
def test_inner_points_map_back(g: Grid) -> None:
    for cell in g.cells():
        cx, cy = g.cell_center(cell)
        corners = g.cell_corners(cell)
        assert len(corners) == {"hexagonal": 6}.get(g.orientation, 4)
        for x, y in corners:
            assert g.cell_at(cx + (x - cx) * 0.6, cy + (y - cy) * 0.6) == cell


@pixel_variants
def test_cells_tile_the_map(g: Grid) -> None:
    """Every cell polygon lies inside pixel_size, and together they reach its edges."""
    xs = [x for cell in g.cells() for x, _ in g.cell_corners(cell)]
    ys = [y for cell in g.cells() for _, y in g.cell_corners(cell)]
    w, h = g.pixel_size()
    # Tiled sizes a hex map from the side offset, which for an odd (tile - side) is one pixel
    # short of the last hex's outline; odd isometric tiles put corners on half pixels.
    odd = bool(g.tile_height & 1 or g.tile_width & 1)
    slack = 1 if odd and g.orientation in ("hexagonal", "isometric") else 0
    assert 0 <= min(xs) <= slack and 0 <= min(ys) <= slack
    assert w - slack <= max(xs) <= w + slack and h - slack <= max(ys) <= h + slack
    if g.orientation == "isometric" and odd:
        return
    for cell in g.cells():
        ox, oy = g.cell_origin(cell)
        assert (ox, oy) == (
            math.floor(min(x for x, _ in g.cell_corners(cell))),
            math.floor(min(y for _, y in g.cell_corners(cell))),
        )


def tech_notes_size(g: Grid) -> tuple[int, int]:
    """TECH-NOTES' formula for hexagonal and staggered maps."""
    s = g.hex_side if g.orientation == "hexagonal" else 0
    sx, sy = (0, s) if g.stagger_axis == "y" else (s, 0)
    off_x, off_y = (g.tile_width - sx) // 2, (g.tile_height - sy) // 2
    col_w, row_h = off_x + sx, off_y + sy
    w_eff, h_eff = col_w + off_x, row_h + off_y
    if g.stagger_axis == "y":
        return (g.width * w_eff + (col_w if g.height > 1 else 0), g.height * row_h + off_y)
    return (g.width * col_w + off_x, g.height * h_eff + (row_h if g.width > 1 else 0))


@pixel_variants
def test_pixel_size_formulas(g: Grid) -> None:
    w, h, tw, th = g.width, g.height, g.tile_width, g.tile_height
    if g.orientation == "orthogonal":
        assert g.pixel_size() == (w * tw, h * th)
    elif g.orientation == "isometric":
        assert g.pixel_size() == ((w + h) * tw // 2, (w + h) * th // 2)
    elif g.hex_side % 2 == 0 or g.orientation == "staggered":
        assert g.pixel_size() == tech_notes_size(g)


# Measured with Tiled 1.8.2's tmxrasterizer on 3x3 maps whose tiles each carry one dot:
# (orientation, tile w, h, axis, index, side, image size, the top-left of each cell's box).
TILED_RENDERS = [
    ("hexagonal", 15, 13, "y", "odd", 6, (49, 30),
     [(0, 0), (14, 0), (28, 0), (7, 9), (21, 9), (35, 9), (0, 18), (14, 18), (28, 18)]),
    ("hexagonal", 15, 13, "y", "even", 6, (49, 30),
     [(7, 0), (21, 0), (35, 0), (0, 9), (14, 9), (28, 9), (7, 18), (21, 18), (35, 18)]),
    ("hexagonal", 15, 13, "x", "odd", 6, (34, 42),
     [(0, 0), (10, 6), (20, 0), (0, 12), (10, 18), (20, 12), (0, 24), (10, 30), (20, 24)]),
    ("hexagonal", 15, 13, "x", "even", 6, (34, 42),
     [(0, 6), (10, 0), (20, 6), (0, 18), (10, 12), (20, 18), (0, 30), (10, 24), (20, 30)]),
    ("hexagonal", 60, 60, "x", "odd", 30, (150, 210),
     [(0, 0), (45, 30), (90, 0), (0, 60), (45, 90), (90, 60), (0, 120), (45, 150), (90, 120)]),
    ("hexagonal", 15, 13, "y", "odd", 5, (49, 27),
     [(0, 0), (14, 0), (28, 0), (7, 8), (21, 8), (35, 8), (0, 16), (14, 16), (28, 16)]),
    ("staggered", 64, 32, "y", "odd", 0, (224, 64),
     [(0, 0), (64, 0), (128, 0), (32, 16), (96, 16), (160, 16), (0, 32), (64, 32), (128, 32)]),
    ("staggered", 15, 13, "x", "even", 0, (28, 42),
     [(0, 6), (7, 0), (14, 6), (0, 18), (7, 12), (14, 18), (0, 30), (7, 24), (14, 30)]),
    ("isometric", 64, 32, "y", "odd", 0, (192, 96),
     [(64, 0), (96, 16), (128, 32), (32, 16), (64, 32), (96, 48), (0, 32), (32, 48), (64, 64)]),
]  # fmt: skip


@pytest.mark.parametrize(
    ("orientation", "tw", "th", "axis", "index", "side", "size", "origins"), TILED_RENDERS
)
def test_matches_tiled_render(
    orientation: str,
    tw: int,
    th: int,
    axis: str,
    index: str,
    side: int,
    size: tuple[int, int],
    origins: list[tuple[int, int]],
) -> None:
    g = Grid(orientation, 3, 3, tw, th, axis, index, side)
    assert g.pixel_size() == size
    assert [g.cell_origin(c) for c in g.cells()] == origins


def _grid_from_tmx(path: Path) -> Grid:
    m = ET.parse(path).getroot().attrib
    return Grid(
        m["orientation"],
        int(m["width"]),
        int(m["height"]),
        int(m["tilewidth"]),
        int(m["tileheight"]),
        m.get("staggeraxis", "y"),
        m.get("staggerindex", "odd"),
        int(m.get("hexsidelength", 0)),
    )


@pytest.mark.corpus
@pytest.mark.parametrize(
    ("name", "size"),
    [
        # Tiled 1.8.2's tmxrasterizer draws these files at exactly these sizes.
        ("hexagonal-mini.tmx", (287, 183)),
        ("test_hexagonal_tile_60x60x30.tmx", (915, 1230)),
        ("isometric_grass_and_water.tmx", (1600, 800)),
        ("desert.tmx", (1280, 1280)),
    ],
)
def test_pixel_size_of_corpus_maps(name: str, size: tuple[int, int]) -> None:
    assert _grid_from_tmx(EXAMPLES / name).pixel_size() == size


@pytest.mark.parametrize(
    ("grid", "size"),
    [
        # The geometries of those maps (their <map> attributes) and the sizes Tiled 1.8.2's
        # tmxrasterizer draws them at: the same figures without the files.
        (Grid("hexagonal", 20, 20, 14, 12, "y", "odd", 6), (287, 183)),
        (Grid("hexagonal", 20, 20, 60, 60, "x", "odd", 30), (915, 1230)),
        (Grid("isometric", 25, 25, 64, 32), (1600, 800)),
        (Grid("orthogonal", 40, 40, 32, 32), (1280, 1280)),
    ],
    ids=["hex-y-odd", "hex-x-odd", "isometric", "orthogonal"],
)
def test_pixel_size_as_tiled_draws_it(grid: Grid, size: tuple[int, int]) -> None:
    assert grid.pixel_size() == size


def test_pixel_examples() -> None:
    hx = Grid("hexagonal", 20, 20, 14, 12, "y", "odd", 6)  # hexagonal-mini
    assert hx.cell_origin((1, 1)) == (21, 9)
    assert hx.cell_center((1, 1)) == (28.0, 15.0)
    assert hx.cell_corners((0, 0)) == [
        (0.0, 9.0),
        (0.0, 3.0),
        (7.0, 0.0),
        (14.0, 3.0),
        (14.0, 9.0),
        (7.0, 12.0),
    ]
    assert hx.cell_at(-1, -1) == (-1, -1)
    iso = Grid("isometric", 3, 2, 64, 32)
    assert iso.cell_corners((0, 0)) == [(64, 0), (96, 16), (64, 32), (32, 16)]
    assert iso.cell_at(64, 1) == (0, 0)
    assert iso.cell_at(64, -1) == (-1, -1)
    assert Grid("orthogonal", 3, 3, 16, 16).cell_corners((1, 0)) == [
        (16, 0),
        (32, 0),
        (32, 16),
        (16, 16),
    ]
    st = Grid("staggered", 4, 4, 64, 32)
    assert st.cell_corners((0, 1)) == [(32.0, 32.0), (64.0, 16.0), (96.0, 32.0), (64.0, 48.0)]
    assert st.cell_at(2, 2) == (-1, -1)


def test_index_helpers() -> None:
    g = Grid("orthogonal", 4, 3, 16, 16)
    assert [g.index(c) for c in g.cells()] == list(range(12))
    assert all(g.cell_of_index(g.index(c)) == c for c in g.cells())
