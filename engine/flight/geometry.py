"""Flight geometry (RULES.md 6): headings, faces, lattice arithmetic, and the moves the
systems' planners expand with. Re-exported by :mod:`engine.flight.model`.

* :class:`Geometry`: headings, faces, vertex alternation, lattice arithmetic on any grid;
* :class:`Runs`: how far a flier gets along a heading before a blocked cell (cached lazily);
* the move generators (:func:`moves`, :func:`trace`, ...).

Movement, shared by every system: a turn's move enters exactly ``speed`` cells, cell by cell,
along the heading. A heading through a face steps through that neighbour; a heading on a
vertex (hex: 0, 60, ...; pointy tops) alternates the two faces beside it, starting with the
face nearer the previous heading (RULES.md 6, ruling); continuing on the same vertex heading
keeps alternating. Ties (a 180-degree turn from one vertex heading to the other) go to the face
nearer the face crossed last, then to the counter-clockwise face; a flier that starts on a
vertex heading starts through its counter-clockwise face unless the state names one. On square
grids every heading is a face heading, except that with ``diagonals = none`` the diagonal
headings alternate the two edges beside them in the same way. A flight step is one cell
whatever the diagonal rule. Turns are ``(after k cells, by d degrees)`` pairs, ``d`` positive
clockwise, applied in order (several at one point are allowed: each counts).

Headings are degrees clockwise from the top of the map: steps of 30 on hex maps, 45 on the
others.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from engine.errors import ArgumentError
from engine.flight.states import Goal, Turns
from engine.grid import Cell, Grid


def whole(value: Any) -> int:
    """An int from an int or integral text (``"90"``); anything else raises ValueError."""
    if isinstance(value, bool):
        raise ValueError(value)
    if isinstance(value, str):
        return int(value.strip())
    out = int(value)
    if out != value:
        raise ValueError(value)
    return out


def turn_delta(a: int, b: int) -> int:
    """The signed turn from heading ``a`` to ``b``, in (-180, 180]."""
    d = (b - a) % 360
    return d - 360 if d > 180 else d


def angle(a: int, b: int) -> int:
    """Unsigned angle between two headings, 0..180."""
    return abs(turn_delta(a, b))


class Geometry:
    """A grid's flight geometry: which headings cross faces, the two faces beside each vertex
    heading, and integer lattice coordinates in which a step along a face is a fixed vector
    (so the cell ``t`` steps along a heading is arithmetic, not a walk).

    >>> g = Geometry(Grid("hexagonal", 9, 9, 32, 32, hex_side=16))
    >>> g.step, g.vertex_faces[0]
    (30, (330, 30))
    """

    def __init__(self, grid: Grid) -> None:
        self.grid = grid
        self.hex = grid.kind == "hex"
        self.step = 30 if self.hex else 45
        self.headings = grid.headings()
        rep: Cell = (0, 0)
        # Edges: headings whose step from a parity-0 cell is a non-diagonal offset.
        edge_offsets = {(dc, dr) for dc, dr, diag in grid.offsets(0) if not diag}
        steps = {h: grid.step_heading(rep, h) for h in grid.face_headings()}
        edges = sorted(
            h for h, c in steps.items() if (c[0] - rep[0], c[1] - rep[1]) in edge_offsets
        )
        if self.hex or grid.diagonals != "none":
            faces = tuple(sorted(steps))
        else:
            faces = tuple(edges)
        self.faces: frozenset[int] = frozenset(faces)
        self.vertex_faces: dict[int, tuple[int, int]] = {
            h: ((h - self.step) % 360, (h + self.step) % 360)
            for h in self.headings
            if h not in self.faces
        }
        self._lat: dict[Cell, tuple[int, int]] = {}
        self._cell: dict[tuple[int, int], Cell] = {}
        self.vec: dict[int, tuple[int, int]] = {}
        if self.hex:
            q0, r0, _ = grid.to_cube(rep)
            for h, c in steps.items():
                q, r, _ = grid.to_cube(c)
                self.vec[h] = (q - q0, r - r0)
            self._mode = "cube"
        elif grid.orientation != "staggered":
            for h, c in steps.items():
                self.vec[h] = (c[0] - rep[0], c[1] - rep[1])
            self._mode = "cells"
        else:
            unit = ((1, 0), (0, 1), (-1, 0), (0, -1))
            for i, h in enumerate(edges):
                self.vec[h] = unit[i]
            for h in steps:
                if h not in self.vec:
                    a, b = self.vec[(h - 45) % 360], self.vec[(h + 45) % 360]
                    self.vec[h] = (a[0] + b[0], a[1] + b[1])
            self._mode = "labels"
            self._label_all()
        # (heading, next face) -> (first vector, second vector, the face after one step)
        self._pairs: dict[tuple[int, int], tuple[int, int, int, int, int]] = {}
        for h in self.headings:
            for f in self.faces_of(h):
                g = self.other(h, f)
                (fx, fy), (gx, gy) = self.vec[f], self.vec[g]
                self._pairs[(h, f)] = (fx, fy, gx, gy, g)
        self._first: dict[tuple[int, int, int], int] = {}

    def _label_all(self) -> None:
        """Lattice labels for every cell of a staggered map (its offsets change with parity)."""
        grid = self.grid
        start: Cell = (0, 0)
        self._lat[start] = (0, 0)
        self._cell[(0, 0)] = start
        todo = [start]
        while todo:
            c = todo.pop()
            x, y = self._lat[c]
            for h, (dx, dy) in self.vec.items():
                n = grid.step_heading(c, h)
                if grid.in_bounds(n) and n not in self._lat:
                    self._lat[n] = (x + dx, y + dy)
                    self._cell[(x + dx, y + dy)] = n
                    todo.append(n)

    # ----------------------------------------------------------------- headings

    def check_heading(self, heading: Any, role: str = "heading") -> int:
        """A heading given by a user, as an int in 0..359; anything else is an
        :class:`~engine.errors.ArgumentError` with ``role`` (``heading``, ``end_heading``)."""
        try:
            h = whole(heading)
        except (TypeError, ValueError):
            raise ArgumentError(
                role=role,
                given=repr(heading),
                problem=f"expected a multiple of {self.step} degrees (0 = up, 90 = right)",
            ) from None
        if h % self.step:
            kind = "hex" if self.hex else self.grid.kind
            raise ArgumentError(
                role=role,
                given=str(heading),
                problem=f"expected a multiple of {self.step} on a {kind} map "
                f"(0, {self.step}, ..., {360 - self.step}; 0 = up, clockwise)",
            )
        return h % 360

    def is_face(self, h: int) -> bool:
        return h in self.faces

    def faces_of(self, h: int) -> tuple[int, ...]:
        return (h,) if h in self.faces else self.vertex_faces[h]

    def other(self, h: int, f: int) -> int:
        """The face after ``f`` on heading ``h`` (``h`` itself on a face heading)."""
        if h in self.faces:
            return h
        a, b = self.vertex_faces[h]
        return b if f == a else a

    def norm_face(self, h: int, f: int) -> int:
        """``f`` when it is a face of ``h``; else the heading's default first face."""
        if h in self.faces:
            return h
        a, b = self.vertex_faces[h]
        return f if f in (a, b) else a

    def first_face(self, new: int, old: int, face: int) -> int:
        """The face a flier crosses first after turning from ``old`` (next face ``face``)
        onto ``new``: the one nearer the previous heading (RULES.md 6); ties go to the one
        nearer the face crossed last, then to the counter-clockwise one."""
        k = (new, old, face)
        got = self._first.get(k)
        if got is not None:
            return got
        if new in self.faces:
            out = new
        else:
            a, b = self.vertex_faces[new]
            da, db = angle(a, old), angle(b, old)
            if da != db:
                out = a if da < db else b
            else:
                last = old if old in self.faces else self.other(old, face)
                la, lb = angle(a, last), angle(b, last)
                out = b if lb < la else a
        self._first[k] = out
        return out

    def turn_steps(self, turns: Iterable[tuple[int, int]]) -> int:
        """The turn's total, in heading steps (30 degrees on hex, 45 elsewhere)."""
        return sum(abs(d) for _, d in turns) // self.step

    # ----------------------------------------------------------------- lattice

    def lat(self, cell: Cell) -> tuple[int, int]:
        got = self._lat.get(cell)
        if got is not None:
            return got
        if self._mode == "cube":
            q, r, _ = self.grid.to_cube(cell)
            got = (q, r)
        elif self._mode == "cells":
            got = cell
        else:
            raise KeyError(cell)
        self._lat[cell] = got
        self._cell[got] = cell
        return got

    def cell_at(self, p: tuple[int, int]) -> Cell:
        got = self._cell.get(p)
        if got is not None:
            return got
        if self._mode == "cube":
            got = self.grid.from_cube(p[0], p[1], -p[0] - p[1])
        elif self._mode == "cells":
            got = p
        else:
            raise KeyError(p)
        self._cell[p] = got
        self._lat[got] = p
        return got

    def advance(self, p: tuple[int, int], h: int, f: int, t: int) -> tuple[int, int]:
        """Lattice point ``t`` steps from ``p`` on heading ``h``, crossing ``f`` first."""
        fx, fy, gx, gy, _ = self._pairs[(h, f)]
        a, b = (t + 1) >> 1, t >> 1
        return (p[0] + a * fx + b * gx, p[1] + a * fy + b * gy)

    def face_after(self, h: int, f: int, t: int) -> int:
        return self._pairs[(h, f)][4] if t & 1 else f

    def solve(self, dx: int, dy: int, h: int, f: int) -> int:
        """The step count ``t >= 1`` that moves by ``(dx, dy)`` on ``h`` from face ``f``, or 0."""
        fx, fy, gx, gy, _ = self._pairs[(h, f)]
        if (fx, fy) == (gx, gy):
            if fx:
                t, rem = divmod(dx, fx)
                ok = not rem and dy == t * fy
            else:
                t, rem = divmod(dy, fy)
                ok = not rem and dx == 0
            return t if ok and t >= 1 else 0
        det = fx * gy - fy * gx
        a, ra = divmod(dx * gy - dy * gx, det)
        b, rb = divmod(fx * dy - fy * dx, det)
        if ra or rb or a - b not in (0, 1):
            return 0
        t = a + b
        return t if t >= 1 else 0

    def distance(self, p: tuple[int, int], q: tuple[int, int]) -> int:
        """Fewest steps between two lattice points on an open grid (:meth:`Grid.steps`)."""
        dx, dy = q[0] - p[0], q[1] - p[1]
        if self.hex:
            return (abs(dx) + abs(dy) + abs(dx + dy)) >> 1
        if self.grid.diagonals == "none":
            return abs(dx) + abs(dy)
        return max(abs(dx), abs(dy))


class Runs:
    """How many cells a flier can enter along a heading before a blocked cell or the map's
    edge, from every (cell, heading, next face) it asks about; worked out lazily, once."""

    def __init__(self, geometry: Geometry, blocked: Callable[[Cell], bool]) -> None:
        self.geo = geometry
        self.blocked = blocked
        self._tables: dict[tuple[int, int], dict[Cell, int]] = {}

    def table(self, h: int, f: int) -> dict[Cell, int]:
        """The (partial) table for heading ``h`` with ``f`` the next face: cell -> run.
        Missing cells are not worked out yet: ask :meth:`free`."""
        got = self._tables.get((h, f))
        if got is None:
            got = self._tables[(h, f)] = {}
        return got

    def free(self, cell: Cell, h: int, f: int) -> int:
        tab = self.table(h, f)
        v = tab.get(cell)
        if v is not None:
            return v
        grid, geo, blocked = self.geo.grid, self.geo, self.blocked
        chain: list[tuple[dict[Cell, int], Cell]] = []
        c, face = cell, f
        while True:
            got = tab.get(c)
            if got is not None:
                v = got
                break
            chain.append((tab, c))
            n = grid.step_heading(c, face)
            if not grid.in_bounds(n) or blocked(n):
                v = -1
                break
            c, face = n, geo.other(h, face)
            tab = self.table(h, face)
        for t, c in reversed(chain):
            v += 1
            t[c] = v
        return v


@dataclass(frozen=True)
class Trace:
    """A move traced cell by cell: the cells entered, the heading and next face at the end
    (or at the collision), and the cell it would have entered when something stopped it."""

    cells: tuple[Cell, ...]
    heading: int
    face: int
    hit: Cell | None = None


def trace(
    geo: Geometry,
    cell: Cell,
    heading: int,
    face: int,
    count: int,
    turns: Turns,
    blocked: Callable[[Cell], bool],
) -> Trace:
    """Move exactly ``count`` cells from ``cell`` with ``turns`` made along the way; stop
    before the first blocked or off-map cell."""
    grid = geo.grid
    h, f = heading, geo.norm_face(heading, face)
    cells: list[Cell] = []
    ti = 0
    for i in range(count + 1):
        while ti < len(turns) and turns[ti][0] == i:
            nh = (h + turns[ti][1]) % 360
            f = geo.first_face(nh, h, f)
            h = nh
            ti += 1
        if i == count:
            break
        n = grid.step_heading(cell, f)
        if not grid.in_bounds(n) or blocked(n):
            return Trace(tuple(cells), h, f, n)
        cells.append(n)
        cell = n
        f = geo.other(h, f)
    return Trace(tuple(cells), h, f, None)


def check_turns(geo: Geometry, turns: Sequence[Sequence[int]], count: int, what: str) -> Turns:
    """Validated turn points: ``(k, d)`` with ``0 <= k <= count`` in order and ``d`` a
    non-zero multiple of the heading step, at most 180 degrees either way."""
    out = []
    last = 0
    for t in turns:
        if len(t) != 2:
            raise ArgumentError(f"{what}: a turn is (after k cells, by d degrees), got {t!r}")
        k, d = int(t[0]), int(t[1])
        if not 0 <= k <= count:
            raise ArgumentError(
                f"{what}: turn after {k} cells, but this turn's move is {count} cells"
            )
        if k < last:
            raise ArgumentError(f"{what}: turn points must be in order (after {last}, then {k})")
        if d == 0 or d % geo.step or abs(d) > 180:
            raise ArgumentError(
                f"{what}: turn by {d} degrees: expected a non-zero multiple of {geo.step} "
                "from -180 to 180 (positive = clockwise)"
            )
        last = k
        out.append((k, d))
    return tuple(out)


def turn_options(step: int, max_steps: int) -> list[tuple[int, int]]:
    """``(d, steps)`` for every non-zero turn of at most ``max_steps`` heading steps (180
    counted once)."""
    out = []
    for n in range(1, max_steps + 1):
        d = n * step
        if d > 180:
            break
        out.append((d, n))
        if d != 180:
            out.append((-d, n))
    return out


def turn_plans(step: int, v: int, max_steps: int, points: int) -> Iterator[tuple[Turns, int]]:
    """Every turn list of up to ``points`` points (``0 <= k <= v``, in order) whose total is at
    most ``max_steps`` heading steps, with that total; no turns first. Blind to the map:
    the brute-force side of the planner's tests."""
    yield (), 0

    def rec(first: int, used: int, left: int, turns: Turns) -> Iterator[tuple[Turns, int]]:
        for k in range(first, v + 1):
            for d, n in turn_options(step, max_steps - used):
                more = (*turns, (k, d))
                yield more, used + n
                if left > 1 and used + n < max_steps:
                    yield from rec(k, used + n, left - 1, more)

    if points > 0 and max_steps > 0:
        yield from rec(0, 0, points, ())


def straight_and_one_turn(
    geo: Geometry,
    runs: Runs,
    cell: Cell,
    h: int,
    f: int,
    v: int,
    max_steps: int,
    goal: Goal | None,
) -> Iterator[tuple[Cell, int, int, Turns, int, bool]]:
    """Every move of exactly ``v`` clear cells with at most one turn point (any point
    ``0..v``) of at most ``max_steps`` heading steps: ``(end, heading, next face, turns,
    steps, entered)``, where ``entered`` says whether the move entered ``goal`` (on the
    goal's heading, when it names one). Each move is O(1): lattice arithmetic and
    :class:`Runs`, never a walk."""
    lat0 = geo.lat(cell)
    free0 = runs.free(cell, h, f)
    want = goal is not None and not goal.land
    gh = goal.heading if goal is not None else None
    if want:
        assert goal is not None
        gp = geo.lat(goal.cell)
        t0 = geo.solve(gp[0] - lat0[0], gp[1] - lat0[1], h, f) if gh is None or gh == h else 0
    else:
        gp = (0, 0)
        t0 = 0
    if v <= free0:
        end = geo.cell_at(geo.advance(lat0, h, f, v)) if v else cell
        yield end, h, geo.face_after(h, f, v), (), 0, want and 1 <= t0 <= v
    if max_steps <= 0:
        return
    # Per turn option and per face the flier may have next at the turn point (two on a
    # vertex heading): the new heading's first face, its run table and its vectors.
    pairs = geo._pairs
    per_face: dict[int, list[tuple[int, int, int, int, dict[Cell, int], int, int, int, int, int]]]
    per_face = {}
    for fk in geo.faces_of(h):
        rows = []
        for d, n in turn_options(geo.step, max_steps):
            h2 = (h + d) % 360
            f2 = geo.first_face(h2, h, fk)
            fx, fy, gx, gy, g2 = pairs[(h2, f2)]
            rows.append((d, n, h2, f2, runs.table(h2, f2), fx, fy, gx, gy, g2))
        per_face[fk] = rows
    cell_of = geo._cell
    cell_at = geo.cell_at
    free = runs.free
    solve = geo.solve
    px, py = lat0
    fk, ck = f, cell
    other = pairs[(h, f)][4]
    for k in range(min(v, free0) + 1):
        if k:
            vx, vy = geo.vec[fk]
            px, py = px + vx, py + vy
            fk = other if fk == f else f
            ck = cell_of.get((px, py)) or cell_at((px, py))
        pre = want and 1 <= t0 <= k
        rest = v - k
        a, b = (rest + 1) >> 1, rest >> 1
        for d, n, h2, f2, tab, fx, fy, gx, gy, g2 in per_face[fk]:
            if rest:
                room = tab.get(ck)
                if room is None:
                    room = free(ck, h2, f2)
                if rest > room:
                    continue
                q = (px + a * fx + b * gx, py + a * fy + b * gy)
                end = cell_of.get(q) or cell_at(q)
                fe = g2 if rest & 1 else f2
            else:
                end, fe = ck, f2
            hit = pre
            if want and not hit and rest and (gh is None or gh == h2):
                t = solve(gp[0] - px, gp[1] - py, h2, f2)
                hit = 1 <= t <= rest
            yield end, h2, fe, ((k, d),), n, hit


def multi_turn_moves(
    geo: Geometry,
    runs: Runs,
    cell: Cell,
    h: int,
    f: int,
    v: int,
    max_steps: int,
    points: int,
    goal: Goal | None,
) -> Iterator[tuple[Cell, int, int, Turns, int, bool]]:
    """As :func:`straight_and_one_turn` with up to ``points`` turn points (slow: for tests
    and small maps)."""
    want = goal is not None and not goal.land
    gh = goal.heading if goal is not None else None
    gp = geo.lat(goal.cell) if goal is not None else (0, 0)

    def seg_hit(p: tuple[int, int], hh: int, ff: int, m: int) -> bool:
        if not want or m <= 0 or (gh is not None and gh != hh):
            return False
        t = geo.solve(gp[0] - p[0], gp[1] - p[1], hh, ff)
        return 1 <= t <= m

    def rec(
        c: Cell,
        p: tuple[int, int],
        hh: int,
        ff: int,
        done: int,
        used: int,
        left: int,
        turns: Turns,
        hit: bool,
    ) -> Iterator[tuple[Cell, int, int, Turns, int, bool]]:
        room = runs.free(c, hh, ff)
        rest = v - done
        if rest <= room:
            end = geo.cell_at(geo.advance(p, hh, ff, rest)) if rest else c
            yield (
                end,
                hh,
                geo.face_after(hh, ff, rest),
                turns,
                used,
                hit or seg_hit(p, hh, ff, rest),
            )
        if left <= 0 or used >= max_steps:
            return
        last = turns[-1][0] if turns else 0
        for k in range(max(done, last), min(v, done + room) + 1):
            m = k - done
            pk = geo.advance(p, hh, ff, m)
            fk = geo.face_after(hh, ff, m)
            ck = geo.cell_at(pk) if m else c
            hk = hit or seg_hit(p, hh, ff, m)
            for d, n in turn_options(geo.step, max_steps - used):
                h2 = (hh + d) % 360
                f2 = geo.first_face(h2, hh, fk)
                yield from rec(ck, pk, h2, f2, k, used + n, left - 1, (*turns, (k, d)), hk)

    yield from rec(cell, geo.lat(cell), h, f, 0, 0, points, (), False)


def moves(
    geo: Geometry,
    runs: Runs,
    cell: Cell,
    h: int,
    f: int,
    v: int,
    max_steps: int,
    points: int,
    goal: Goal | None,
) -> Iterator[tuple[Cell, int, int, Turns, int, bool]]:
    """Every clear move of exactly ``v`` cells with up to ``points`` turn points."""
    if points <= 1:
        return straight_and_one_turn(geo, runs, cell, h, f, v, max_steps if points else 0, goal)
    return multi_turn_moves(geo, runs, cell, h, f, v, max_steps, points, goal)
