"""Flight as momentum (RULES.md 6): the interface a rule system's flight rules implement.

Over 800 lines: the interface, the geometry and the one turn routine (fly_turns) that the
simulator and the planner both call, so both fly the same turn; the layer contract gives
engine.flight.model one layer.

A flier's state is a :class:`FlightState` (cell, heading, speed, altitude, landed, the face it
crosses next on a vertex heading, and what a system adds). Each turn the flier makes one
:class:`FlightChoice`; its rule system's :class:`FlightRules` turns that into the next state
and a :class:`TurnRecord` of the cells entered and the events (the choice itself, collisions,
unsafe landings, falls). The rules live in the system modules (their "Flight" sections); this
module holds the shared vocabulary they are written in:

* the states, choices, records and goals;
* :class:`Geometry`: headings, faces, vertex alternation, lattice arithmetic on any grid;
* :class:`Runs`: how far a flier gets along a heading before a blocked cell (cached lazily);
* the move generators the systems' planners expand with (:func:`moves`, :func:`trace`, ...);
* :class:`FlightRules`, the base class each system's rules subclass.

It sits below the rule systems and imports nothing above the map model, so a system can
implement flight without pulling in the simulator (``engine.flight.simulator``) or the
planner (``engine.flight.planner``), which sit above the systems and use them.

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

from collections.abc import Callable, Hashable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, Protocol

from engine.errors import ArgumentError
from engine.exact import jsonable
from engine.grid import Cell, Grid
from engine.lazy import numpy as np

if TYPE_CHECKING:
    from engine.mapmodel import MapModel

#: A flight state as a plain tuple, in :class:`FlightState`'s field order (the planner's key).
Key = tuple[Cell, int, int, int, bool, int, int, int]
Turns = tuple[tuple[int, int], ...]

#: Cells a flier cannot land on: nothing to stand on, or nothing but wall.
UNLANDABLE = ("air", "gap", "blocked")

# =============================================================================================
# States, choices, records
# =============================================================================================


@dataclass(frozen=True)
class FlightState:
    """Where a flier is and how it moves.

    ``heading``: degrees clockwise from up. ``speed``: cells per turn (Mythmaster: its
    momentum; Speedpoints: its current airspeed). A landed flier's ``speed`` is its ground
    rate of the turn before (Mythmaster's take-off speed; 0 when it stood still).
    ``altitude``: metres above the ground (Speedpoints; 0 elsewhere). ``face``: the face the
    next step crosses (equal to ``heading`` on a face heading; on a vertex heading, one of
    the two faces beside it). ``modifier``: Speedpoints' airspeed modifier (climbs take,
    descents give). ``downed``: Mythmaster actions still needed to recover from a trip.
    """

    cell: Cell
    heading: int
    speed: int = 0
    altitude: int = 0
    landed: bool = False
    face: int = -1  # -1: not set yet (the rules fill it in)
    modifier: int = 0
    downed: int = 0

    def key(self) -> Key:
        return (
            self.cell,
            self.heading,
            self.speed,
            self.altitude,
            self.landed,
            self.face,
            self.modifier,
            self.downed,
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "cell": list(self.cell),
            "heading": self.heading,
            "speed": self.speed,
            "altitude": self.altitude,
            "landed": self.landed,
            "face": self.face,
            "modifier": self.modifier,
            "downed": self.downed,
        }


def state_of(key: Key) -> FlightState:
    return FlightState(*key)


def state_from_dict(d: dict[str, Any]) -> FlightState:
    """The inverse of :meth:`FlightState.to_dict` (an event log's flight state)."""
    return FlightState(
        (int(d["cell"][0]), int(d["cell"][1])),
        int(d["heading"]),
        int(d.get("speed", 0)),
        int(d.get("altitude", 0)),
        bool(d.get("landed", False)),
        int(d.get("face", -1)),
        int(d.get("modifier", 0)),
        int(d.get("downed", 0)),
    )


@dataclass(frozen=True)
class FlightChoice:
    """One turn's choice. Each system reads the fields it has and refuses the others.

    Mythmaster: ``take_off``/``land`` (1 action each), ``maintain`` (1), ``accelerate`` n
    or ``decelerate`` n (n actions; at most one of the three speed actions), ``turns`` (the
    turn's total up to 30 degrees free, each further 30 one action; on square maps each 45
    counts as 30), ``recover`` (actions spent getting up after a trip).
    Speedpoints: ``climb`` metres (negative: descend), ``spaces`` to move (None: all of the
    airspeed), ``turns`` (free), ``take_off``/``land`` (no action cost).
    """

    take_off: bool = False
    land: bool = False
    maintain: bool = False
    accelerate: int = 0
    decelerate: int = 0
    turns: Turns = ()
    recover: int = 0
    climb: int = 0
    spaces: int | None = None

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for name in (
            "take_off",
            "land",
            "maintain",
            "accelerate",
            "decelerate",
            "recover",
            "climb",
        ):
            value = getattr(self, name)
            if value:
                out[name] = value
        if self.turns:
            out["turns"] = [list(t) for t in self.turns]
        if self.spaces is not None:
            out["spaces"] = self.spaces
        return out

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> FlightChoice:
        """The inverse of :meth:`to_dict` (an event log's choice)."""
        return cls(
            take_off=bool(d.get("take_off", False)),
            land=bool(d.get("land", False)),
            maintain=bool(d.get("maintain", False)),
            accelerate=int(d.get("accelerate", 0)),
            decelerate=int(d.get("decelerate", 0)),
            turns=tuple((int(k), int(t)) for k, t in d.get("turns", ())),
            recover=int(d.get("recover", 0)),
            climb=int(d.get("climb", 0)),
            spaces=None if d.get("spaces") is None else int(d["spaces"]),
        )


@dataclass(frozen=True)
class TurnRecord:
    """One turn flown: the choice, the actions it spent, the speed flown, the cells entered
    in order, the states before and after, and the events (the choice first)."""

    turn: int
    choice: FlightChoice
    actions: tuple[str, ...]
    speed: int
    cells: tuple[Cell, ...]
    before: FlightState
    state: FlightState
    events: tuple[dict[str, Any], ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {
            "turn": self.turn,
            "actions": list(self.actions),
            "speed": self.speed,
            "cells": [list(c) for c in self.cells],
            "state": self.state.to_dict(),
            "events": jsonable(list(self.events)),
        }


@dataclass(frozen=True)
class Goal:
    """What a plan must do: enter ``cell`` (optionally on ``heading``: the heading of the
    step that enters it), or with ``land`` end a move there and land safely (``heading``:
    the heading it lands with)."""

    cell: Cell
    land: bool = False
    heading: int | None = None


# =============================================================================================
# Geometry: headings, faces, lattice arithmetic
# =============================================================================================


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

    def check_heading(self, heading: Any, what: str = "--heading") -> int:
        """A heading given by a user, as an int in 0..359; anything else is one clear line."""
        try:
            h = whole(heading)
        except (TypeError, ValueError):
            raise ArgumentError(
                f"{what} {heading!r}: expected a multiple of {self.step} degrees "
                f"(0 = up, 90 = right)"
            ) from None
        if h % self.step:
            kind = "hex" if self.hex else self.grid.kind
            raise ArgumentError(
                f"{what} {heading}: expected a multiple of {self.step} on a {kind} map "
                f"(0, {self.step}, ..., {360 - self.step}; 0 = up, clockwise)"
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


# =============================================================================================
# The rules' shape
# =============================================================================================


#: Distance fields a rules object keeps (oldest dropped first): a batch's fliers chase
#: many goals, and each field holds a number per cell.
FIELD_CACHE = 512


class StepField(Mapping[Cell, int]):
    """Steps to one goal from every cell (read-only; cells that cannot reach it are
    missing), stored as one list indexed by the grid's cell index."""

    __slots__ = ("grid", "steps")

    def __init__(self, grid: Grid, steps: list[int]) -> None:
        self.grid = grid
        self.steps = steps

    def get(self, cell: Cell, default: Any = None) -> Any:
        c, r = cell
        grid = self.grid
        if not (0 <= c < grid.width and 0 <= r < grid.height):
            return default
        v = self.steps[grid.index(cell)]
        return default if v < 0 else v

    def __getitem__(self, cell: Cell) -> int:
        v = self.get(cell)
        if v is None:
            raise KeyError(cell)
        return int(v)

    def __iter__(self) -> Iterator[Cell]:
        grid = self.grid
        return (grid.cell_of_index(i) for i, v in enumerate(self.steps) if v >= 0)

    def __len__(self) -> int:
        return sum(1 for v in self.steps if v >= 0)


class FlightRules:
    """What a rule system's flight rules provide (one subclass per system, in the system's
    module). Bound to one token and one map.

    Rules: :meth:`start_state`, :meth:`step` (one turn), :meth:`choices` (every choice the
    planner considers, for brute force and tests). Planning: :meth:`expand` (successors as
    plain tuples, generated lazily and fast), :meth:`choice_of` (the choice behind one),
    :meth:`heuristic` (a lower bound on the turns left), :meth:`dedup` (what counts as the
    same state for pruning).
    """

    system_name = ""
    #: Whether the system has altitude (the report shows it per turn).
    has_altitude = False

    def __init__(self, model: MapModel) -> None:
        self.model = model
        self.geo = Geometry(model.grid)
        self._fields: dict[Cell, StepField] = {}
        self._adjacency: Any = None
        #: What pilots in the turn loop (engine.sim_flight) work out per flight state and
        #: keep for the rules' life (shared by every run of a batch in a worker).
        self.pilot_cache: dict[Any, Any] = {}

    def passable(self, cell: Cell) -> bool:
        """Whether any flight at all can enter ``cell`` (at the best altitude)."""
        return True

    def steps_to(self, goal: Cell) -> StepField:
        """Fewest steps from every cell to ``goal`` through passable cells (a BFS from the
        goal, once per goal): a flier needs at least that many cells of movement, so every
        heuristic measures distance with it. Cells missing cannot reach the goal.

        The BFS runs in scipy's compiled graph code over the passable cells' adjacency
        (built once per rules): policies in the turn loop ask for a new goal every turn.
        """
        got = self._fields.get(goal)
        if got is None:
            grid = self.model.grid
            if self._adjacency is None and not self._fields:
                got = self._bfs(goal)  # one goal (a plan): no graph to build
            else:
                from scipy.sparse.csgraph import dijkstra

                if self._adjacency is None:
                    self._adjacency = self._passable_graph()
                dist = dijkstra(self._adjacency, indices=grid.index(goal), unweighted=True)
                dist[~np.isfinite(dist)] = -1
                got = StepField(grid, dist.astype(np.int64).tolist())
            if len(self._fields) >= FIELD_CACHE:
                self._fields.pop(next(iter(self._fields)))
            self._fields[goal] = got
        return got

    def _bfs(self, goal: Cell) -> StepField:
        """The plain BFS from ``goal`` (cheaper than building the graph for one goal)."""
        grid = self.model.grid
        steps = [-1] * (grid.width * grid.height)
        index = grid.index
        steps[index(goal)] = 0
        frontier = [goal]
        d = 0
        while frontier:
            d += 1
            nxt = []
            for c in frontier:
                for n in grid.neighbours(c):
                    i = index(n)
                    if steps[i] < 0 and self.passable(n):
                        steps[i] = d
                        nxt.append(n)
            frontier = nxt
        return StepField(grid, steps)

    def _passable_graph(self) -> Any:
        """Every cell's steps into its passable neighbours, as a sparse matrix (steps are
        symmetric between passable cells, so distances from the goal are distances to it;
        a goal that is not passable itself still reaches out, as the plain BFS did)."""
        from scipy.sparse import csr_matrix

        grid = self.model.grid
        w, h = grid.width, grid.height
        cells = list(grid.cells())
        ok = np.array([self.passable(c) for c in cells], dtype=bool).reshape(h, w)
        par = np.array([grid.parity(c) for c in cells], dtype=np.int8).reshape(h, w)
        rr, cc = np.mgrid[0:h, 0:w]
        rows_l, cols_l = [], []
        for p in (0, 1):
            for dc, dr, _ in grid.offsets(p):
                nc, nr = cc + dc, rr + dr
                inside = (par == p) & (nc >= 0) & (nc < w) & (nr >= 0) & (nr < h)
                src_r, src_c = rr[inside], cc[inside]
                dst_r, dst_c = nr[inside], nc[inside]
                keep = ok[dst_r, dst_c]
                rows_l.append(src_r[keep] * w + src_c[keep])
                cols_l.append(dst_r[keep] * w + dst_c[keep])
        rows = np.concatenate(rows_l)
        cols = np.concatenate(cols_l)
        n = w * h
        data = np.ones(len(rows), dtype=np.float64)
        return csr_matrix((data, (rows, cols)), shape=(n, n))

    # ----------------------------------------------------------------- map

    def with_model(self, model: MapModel) -> FlightRules:
        """The same rules on another map."""
        raise NotImplementedError

    def landable(self, cell: Cell) -> bool:
        return self.model.terrain_at(cell).move not in UNLANDABLE

    # ----------------------------------------------------------------- rules

    def start_state(
        self, cell: Cell, heading: int, speed: int, *, altitude: int = 0, face: int = -1
    ) -> FlightState:
        """A validated start: ``speed`` 0 means on the ground."""
        raise NotImplementedError

    def normal(self, state: FlightState) -> FlightState:
        """``state`` with its face filled in (the heading's default first face)."""
        face = self.geo.norm_face(state.heading, state.face)
        return state if face == state.face else replace(state, face=face)

    def step(self, state: FlightState, choice: FlightChoice) -> tuple[FlightState, TurnRecord]:
        raise NotImplementedError

    def actions(self, choice: FlightChoice) -> tuple[str, ...]:
        """One entry per action spent (CONTRACT.md's names)."""
        raise NotImplementedError

    def choices(
        self, state: FlightState, *, turn_points: int = 1, land: bool = True
    ) -> Iterator[FlightChoice]:
        """Every choice the planner considers from ``state`` (may be many: tests)."""
        raise NotImplementedError

    def knock_down(self, state: FlightState) -> tuple[FlightState, dict[str, Any]]:
        """The flier is tripped or downed in flight (systems with such a rule)."""
        raise ArgumentError(f"{self.system_name}: no rule for a flier downed in flight")

    def goal_refusal(self, goal: Goal) -> str | None:
        """Why no plan can reach ``goal`` at all (a blocked goal, nowhere to land)."""
        return None

    # ----------------------------------------------------------------- planning

    def dedup(self, key: Key) -> Hashable:
        return key

    def expand(
        self, key: Key, goal: Goal, turn_points: int
    ) -> Iterator[tuple[Key, int, bool, Any]]:
        """``(next key, actions, reaches the goal, spec)`` for every useful choice."""
        raise NotImplementedError

    def choice_of(self, key: Key, spec: Any) -> FlightChoice:
        raise NotImplementedError

    def bound(self, key: Key, goal: Goal) -> tuple[int, int] | None:
        """Lower bounds on the (turns, actions) still needed, compared as a pair (None: the
        goal is out of reach). Must be admissible and consistent: never more than any real
        continuation, and never dropping by more than one turn's cost."""
        return (0, 0)

    def heading_bound(
        self, goal: Goal, start: FlightState, turn_points: int
    ) -> HeadingBound | None:
        """A sharper bound than :meth:`bound` for planning from ``start`` to ``goal`` with
        ``turn_points`` turn points a move, or None (the default: :meth:`bound` alone). A
        system offers one where its own bound is blind to something costly, such as a flier
        with momentum turning round to end on the goal's heading (Mythmaster)."""
        return None


class HeadingBound(Protocol):
    """A sharper lower bound the rules offer the planner for one goal
    (:meth:`FlightRules.heading_bound`). It may be worked out lazily: :meth:`bound` tells
    what is known so far, never more than the truth; :meth:`refine` works it out further
    for one state. Both keep :meth:`FlightRules.bound`'s contract (admissible, consistent)."""

    def bound(self, key: Key, goal: Goal) -> tuple[int, int] | None:
        """(turns, actions) still needed at least, from what is worked out so far (None:
        the goal is out of reach)."""
        ...

    def refine(self, key: Key, h: int, f: int, max_turns: int) -> tuple[int, int] | None:
        """``key``'s bound once worked out as deep as ``h`` turns (the bound it was pushed
        with; ``f``: its turns so far plus ``h``), at most ``max_turns``."""
        ...


def at_goal(rules: FlightRules, state: FlightState, goal: Goal) -> bool:
    """Whether ``state`` already satisfies ``goal`` (a plan of no turns)."""
    if state.cell != goal.cell:
        return False
    if goal.heading is not None and state.heading != goal.heading:
        return False
    return state.landed if goal.land else True


def fly_turns(
    rules: FlightRules,
    state: FlightState,
    choices: Iterable[FlightChoice],
    *,
    downs: Iterable[int] = (),
) -> list[TurnRecord]:
    """Fly ``choices`` turn by turn from ``state`` under ``rules`` (on the rules' own map);
    one :class:`TurnRecord` per turn, its events the choice, then whatever the turn brought
    (collisions, landings, falls). ``downs``: turns (1-based) at whose start the flier is
    tripped or downed (systems without such a rule refuse them).

    The one turn loop shared by the simulator and the planner's replay of its plans.
    Illegal choices (too many actions, a turn past the move's end, ...) raise
    :class:`~engine.errors.ArgumentError` naming the turn.
    """
    downed = set(downs)
    records: list[TurnRecord] = []
    state = rules.normal(state)
    for i, choice in enumerate(choices, start=1):
        pre: list[dict[str, Any]] = []
        if i in downed:
            state, event = rules.knock_down(state)
            pre.append({**event, "turn": i})
        try:
            nxt, rec = rules.step(state, choice)
        except ArgumentError as exc:
            raise ArgumentError(f"turn {i}: {exc}") from None
        events = tuple(pre) + tuple({**e, "turn": i} for e in rec.events)
        rec = replace(rec, turn=i, events=events)
        records.append(rec)
        state = nxt
    return records
