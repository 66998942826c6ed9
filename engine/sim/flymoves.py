"""A flying pilot's candidate moves and where they end (split from :mod:`engine.sim.flight`,
which weighs them): the moves it weighs each turn, by the shape of the system's flight
(Mythmaster's turning costs, Speedpoints' free turns and altitude, any other system's
planner successors), and the cells a flier can end a move on (:func:`reach_turns`,
:func:`caught_next`), which the quarries and the pursuers' team play read.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from typing import Any

import numpy as np

from engine.flight.model import (
    FlightChoice,
    FlightRules,
    FlightState,
    Goal,
    turn_delta,
    turn_options,
)
from engine.grid import Cell
from engine.sim.flyreach import flight_turns, kept_arrays


class Move:
    """A candidate turn: the choice (``base`` with ``turns``), where it ends (cell, heading,
    face, speed), its actions and the altitude it ends at."""

    __slots__ = (
        "base",
        "turns",
        "cell",
        "heading",
        "face",
        "speed",
        "actions",
        "altitude",
        "risky",
    )

    def __init__(
        self,
        base: FlightChoice,
        cell: Cell,
        heading: int,
        face: int,
        speed: int,
        actions: int,
        altitude: int = 0,
        turns: tuple[tuple[int, int], ...] = (),
        risky: bool = False,
    ) -> None:
        self.base = base
        self.risky = risky  # it asks a roll that may undo it (a dive faster than is safe)
        self.turns = turns
        self.cell = cell
        self.heading = heading
        self.face = face
        self.speed = speed
        self.actions = actions
        self.altitude = altitude

    @property
    def choice(self) -> FlightChoice:
        return replace(self.base, turns=self.turns) if self.turns else self.base


def caught_next(rules: FlightRules, state: FlightState, low: int, reach: int) -> np.ndarray:
    """Per cell index, whether a move the pilot weighs from ``state`` ends on it or within
    ``reach`` of it at or below ``low`` metres (:func:`_end_cells`); read-only, kept in the
    rules' pilot cache."""
    s = rules.normal(state)
    key = (s.key(), low, reach)
    got = rules.pilot_cache.get("caught", {}).get(key)
    if got is None:
        grid = rules.model.grid
        out = np.zeros(grid.width * grid.height, dtype=bool)
        if not reach and _frees(rules):
            for _, index in _free_climb_ends(rules, s, low):
                out[index] = True
        else:
            ends = _end_cells(rules, s, low)
            if reach:
                ends = {c for e in ends for c in grid.cells_within(e, reach)}
            out[np.array([grid.index(c) for c in ends if grid.in_bounds(c)], dtype=np.int64)] = True
        out.setflags(write=False)
        got = kept_arrays(rules, "caught")[key] = out
    return got


def _fastest(rules: FlightRules, state: FlightState) -> int:
    top = getattr(rules, "top", None)
    bm = getattr(rules, "bm", None)
    if top is not None and bm is not None:
        return int(min(top, state.speed + 3 * bm))
    base = getattr(rules, "base", None)
    if base is not None:
        return int(2 * base)
    return state.speed


def _moves(
    rules: FlightRules, state: FlightState, *, exact: bool, target: Cell | None, reach: int = 0
) -> Iterator[Move]:
    """The candidate turns a pilot weighs, by the shape of the system's flight."""
    if hasattr(rules, "turn_cost") and hasattr(rules, "runs"):
        yield from _momentum_moves(rules, state, catch=target if exact else None, reach=reach)
    elif hasattr(rules, "blocked_at"):
        yield from _free_turn_moves(rules, state, target)
    else:
        yield from _planner_moves(rules, state, target)


#: Flight states whose plain candidate moves a rules object keeps for pilots (a batch's
#: fliers revisit the same states run after run); the oldest half is dropped past this.
PILOT_CACHE = 100_000


def _momentum_moves(
    rules: Any, state: FlightState, *, catch: Cell | None, reach: int
) -> Iterator[Move]:
    """Turning costs (Mythmaster): every speed action, with the turn the actions left pay
    for made at the start or the end of the move; with ``catch``, also every move turning
    at any other point that ends within ``reach`` of it. Each move is traced by lattice
    arithmetic and the rules' run tables (never a walk); moves that would collide are left
    out.

    Per speed (cheapest way to it first) the moves come in turn-point order: turning at
    the start, then the inner points that catch, then turning at the end. The plain ones
    (start and end) depend on the state alone and are kept in the rules'
    :attr:`~engine.flight.model.FlightRules.pilot_cache`; with ``reach`` 0 the inner ones
    are solved for directly (for each turn point and turn, the one move length that ends
    on the quarry), not walked."""
    s = rules.normal(state)
    if s.downed:
        r = min(s.downed, 3)
        v = max(0, s.speed - rules.bm)
        yield Move(FlightChoice(recover=r), s.cell, s.heading, s.face, v, r)
        return
    plain = _plain_moves(rules, s)
    if catch is None:
        for _, _, _, _, first, last in plain:
            yield from first
            yield from last
        return
    if reach == 0:
        hits = _catching_inner(rules, s, catch, plain)
        for row in plain:
            yield from row[4]
            yield from hits.get(row[0], ())
            yield from row[5]
        return
    grid = rules.geo.grid
    near = grid.steps(s.cell, catch)
    for row in plain:
        yield from row[4]
        if near <= row[0] + reach:
            yield from _inner_within(rules, s, catch, reach, row)
        yield from row[5]


_PlainRow = tuple[int, FlightChoice, int, int, list[Move], list[Move]]


def _plain_moves(rules: Any, s: FlightState) -> list[_PlainRow]:  # noqa: C901
    """Per speed, the cheapest way to it first: ``(speed, choice, actions spent, actions
    left, the moves turning at the start, the moves turning at the end)`` (cached)."""
    cache = rules.pilot_cache
    ck = ("plain", s.key())
    got = cache.get(ck)
    if got is not None:
        return got
    geo, runs, bm, top = rules.geo, rules.runs, rules.bm, rules.top
    fixed = 1 if s.landed else 0
    budget = 3 - fixed
    speed_actions: list[tuple[FlightChoice, int, int]] = [
        (FlightChoice(take_off=s.landed), max(0, s.speed - bm), 0),
        (FlightChoice(take_off=s.landed, maintain=True), s.speed, 1),
    ]
    for n in range(1, budget + 1):
        speed_actions.append(
            (FlightChoice(take_off=s.landed, accelerate=n), min(top, s.speed + n * bm), n)
        )
        speed_actions.append(
            (FlightChoice(take_off=s.landed, decelerate=n), max(0, s.speed - (n + 1) * bm), n)
        )
    h, f = s.heading, s.face
    lat0 = geo.lat(s.cell)
    free0 = runs.free(s.cell, h, f)
    seen: set[int] = set()
    out: list[_PlainRow] = []
    for base, v, acts in speed_actions:
        if acts > budget or v in seen:
            continue
        seen.add(v)  # the cheapest way to each speed (listed cheapest first)
        left = budget - acts
        options = [(0, 0), *turn_options(geo.step, left + 1)]
        first: list[Move] = []
        last: list[Move] = []
        for d, n in options:
            h2 = (h + d) % 360
            f2 = geo.first_face(h2, h, f) if d else f
            if v and v > runs.free(s.cell, h2, f2):
                continue
            q = geo.advance(lat0, h2, f2, v) if v else lat0
            cost = acts + fixed + (n - 1 if n > 1 else 0)
            turn = ((0, d),) if d else ()
            first.append(
                Move(base, geo.cell_at(q), h2, geo.face_after(h2, f2, v), v, cost, 0, turn)
            )
        if 0 < v <= free0:
            pk = geo.advance(lat0, h, f, v)
            fk = geo.face_after(h, f, v)
            end = geo.cell_at(pk)
            for d, n in options[1:]:
                h2 = (h + d) % 360
                f2 = geo.first_face(h2, h, fk)
                cost = acts + fixed + (n - 1 if n > 1 else 0)
                last.append(Move(base, end, h2, f2, v, cost, 0, ((v, d),)))
        out.append((v, base, acts + fixed, left, first, last))
    if len(cache) >= PILOT_CACHE:
        for old in list(cache)[: PILOT_CACHE // 2]:
            del cache[old]
    cache[ck] = out
    return out


def _catching_inner(
    rules: Any, s: FlightState, catch: Cell, plain: list[_PlainRow]
) -> dict[int, list[Move]]:
    """Per speed, the moves turning at an inner point (``0 < k < speed``) that end on
    ``catch``, in (turn point, turn) order: for each point and turn, the ray after the
    turn meets ``catch`` after at most one number of cells, which fixes the speed."""
    geo, runs = rules.geo, rules.runs
    h, f = s.heading, s.face
    by_speed = {row[0]: row for row in plain}
    top = max(by_speed)
    kmax = min(top - 1, runs.free(s.cell, h, f))
    if kmax < 1:
        return {}
    widest = max(row[3] for row in plain)
    options = turn_options(geo.step, widest + 1)
    lat0 = geo.lat(s.cell)
    cx, cy = geo.lat(catch)
    end = geo.cell_at((cx, cy))
    solve, first_face, advance = geo.solve, geo.first_face, geo.advance
    distance = geo.distance
    hits: dict[int, list[Move]] = {}
    for k in range(1, kmax + 1):
        pk = advance(lat0, h, f, k)
        if distance(pk, (cx, cy)) > top - k:
            continue  # no speed left to get there after turning here
        fk = geo.face_after(h, f, k)
        dx, dy = cx - pk[0], cy - pk[1]
        ck: Cell | None = None
        for d, n in options:
            h2 = (h + d) % 360
            f2 = first_face(h2, h, fk)
            t = solve(dx, dy, h2, f2)
            if not t:
                continue
            row = by_speed.get(k + t)
            if row is None or n > row[3] + 1:
                continue
            if ck is None:
                ck = geo.cell_at(pk)
            if t > runs.free(ck, h2, f2):
                continue
            cost = row[2] + (n - 1 if n > 1 else 0)
            hits.setdefault(k + t, []).append(
                Move(row[1], end, h2, geo.face_after(h2, f2, t), k + t, cost, 0, ((k, d),))
            )
    return hits


def _inner_within(
    rules: Any, s: FlightState, catch: Cell, reach: int, row: _PlainRow
) -> Iterator[Move]:
    """The moves of one speed turning at an inner point that end within ``reach`` of
    ``catch`` (walked point by point: a capture reach above 0)."""
    geo, runs = rules.geo, rules.runs
    grid = geo.grid
    v, base, spent, left = row[0], row[1], row[2], row[3]
    h, f = s.heading, s.face
    lat0 = geo.lat(s.cell)
    free0 = runs.free(s.cell, h, f)
    options = turn_options(geo.step, left + 1)
    for k in range(1, min(v - 1, free0) + 1):
        pk = geo.advance(lat0, h, f, k)
        fk = geo.face_after(h, f, k)
        rest = v - k
        ck = geo.cell_at(pk)
        for d, n in options:
            h2 = (h + d) % 360
            f2 = geo.first_face(h2, h, fk)
            q = geo.advance(pk, h2, f2, rest)
            end = geo.cell_at(q)
            if grid.steps(end, catch) > reach or rest > runs.free(ck, h2, f2):
                continue
            cost = spent + (n - 1 if n > 1 else 0)
            yield Move(base, end, h2, geo.face_after(h2, f2, rest), v, cost, 0, ((k, d),))


def _free_turn_moves(
    rules: Any, state: FlightState, target: Cell | None, every_stoop: bool = False
) -> Iterator[Move]:
    """Free turns and vertical momentum (Speedpoints): for a dive as steep as is safe, level
    flight and a climb over the tallest obstacle, every cell the turn's airspeed reaches
    (a breadth-first walk through the cells clear at the lower altitude), as a path of face
    steps turned into turn points."""
    s = rules.normal(state)
    geo = rules.geo
    cur = rules.base if s.landed else s.speed
    alt = s.altitude
    for dz, s2 in _free_climbs(rules, s, target is not None or every_stoop):
        prev = _free_walk(rules, s.cell, s2, min(alt, alt + dz))
        for end in prev:
            steps: list[int] = []
            c = end
            while prev[c] is not None:
                back = prev[c]
                assert back is not None
                c, fh = back
                steps.append(fh)
            steps.reverse()
            turns: list[tuple[int, int]] = []
            h = s.heading
            for i, fh in enumerate(steps):
                if fh != h:
                    turns.append((i, turn_delta(h, fh)))
                    h = fh
            choice = FlightChoice(
                take_off=s.landed, climb=dz, spaces=len(steps), turns=tuple(turns)
            )
            face = h if h in geo.faces else s.face
            if -dz > cur and end != target and not every_stoop:
                continue  # a stoop is weighed only where it ends on the target
            yield Move(choice, end, h, face, s2, 0, alt + dz, risky=-dz > cur)


def _free_climbs(rules: Any, s: FlightState, stoop: bool) -> list[tuple[int, int]]:
    """:func:`_free_turn_moves`' climbs (a dive as steep as is safe, level flight, a climb
    over the tallest obstacle; with ``stoop``, a stoop to the ground where the flier is
    higher than its airspeed), lowest first, each with the airspeed it leaves (those
    leaving none below 0)."""
    cur = rules.base if s.landed else s.speed
    m = 0 if s.landed else s.modifier
    alt = s.altitude
    climbs = {-min(cur, alt), 0}
    if stoop and alt > cur:
        climbs.add(-alt)  # a stoop to the ground, faster than is safe: only if it catches
    cap = int(rules.alt_cap)
    if cap > alt:
        climbs.add(min(cur, cap - alt))
    out = []
    for dz in sorted(climbs):
        s2 = rules.base + rules._trade(m, dz)
        if s2 >= 0:
            out.append((dz, s2))
    return out


def _free_walk(
    rules: Any, cell: Cell, steps: int, level: int
) -> dict[Cell, tuple[Cell, int] | None]:
    """The cells a free-turning flier on ``cell`` reaches in ``steps`` face steps through
    cells clear at ``level`` metres (a breadth-first walk, faces in order), each with the
    cell and face it was entered from (None for ``cell``)."""
    grid = rules.geo.grid
    faces = sorted(rules.geo.faces)
    blocked = rules.blocked_at(level)
    prev: dict[Cell, tuple[Cell, int] | None] = {cell: None}
    frontier = [cell]
    for _ in range(steps):
        nxt = []
        for c in frontier:
            for fh in faces:
                n = grid.step_heading(c, fh)
                if n in prev or not grid.in_bounds(n) or blocked(n):
                    continue
                prev[n] = (c, fh)
                nxt.append(n)
        frontier = nxt
    return prev


def _free_ends(rules: Any, s: FlightState, low: int | None) -> set[Cell]:
    """The cells the moves of :func:`_free_turn_moves` (every stoop) end on, at or below
    ``low`` metres where given, without making the moves (:func:`_free_climb_ends`)."""
    out: set[Cell] = set()
    for cells, _ in _free_climb_ends(rules, s, low):
        out |= cells
    return out


def _free_climb_ends(
    rules: Any, s: FlightState, low: int | None
) -> list[tuple[frozenset[Cell], np.ndarray]]:
    """Per climb of :func:`_free_turn_moves` (every stoop) that ends at or below ``low``
    metres where given, the cells its moves end on and their indexes. A free-turning
    flier's ends depend on its cell, airspeed and altitude, not its heading, so each
    climb's are kept in the rules' pilot cache by those (tests/test_policies_flyteam.py
    holds them equal to the moves' own)."""
    cache = rules.pilot_cache
    grid = rules.geo.grid
    out = []
    for dz, s2 in _free_climbs(rules, s, True):
        if low is not None and s.altitude + dz > low:
            continue
        level = min(s.altitude, s.altitude + dz)
        key = ("free ends", s.cell, s2, level)
        got = cache.get(key)
        if got is None:
            cells = frozenset(_free_walk(rules, s.cell, s2, level))
            got = (cells, np.array([grid.index(c) for c in cells], dtype=np.int64))
            if len(cache) >= PILOT_CACHE:
                for old in list(cache)[: PILOT_CACHE // 2]:
                    del cache[old]
            cache[key] = got
        out.append(got)
    return out


def _planner_moves(rules: FlightRules, state: FlightState, target: Cell | None) -> Iterator[Move]:
    """Any other system's flight: its planner's own successors (every choice it weighs)."""
    s = rules.normal(state)
    goal = Goal(target if target is not None else s.cell)
    for key2, acts, _, spec in rules.expand(s.key(), goal, 1):
        if key2[4]:
            continue  # the planner's landing variants: a pilot in a chase stays up
        yield Move(
            rules.choice_of(s.key(), spec), key2[0], key2[1], key2[5], key2[2], acts, key2[3]
        )


# --------------------------------------------------------------------------- reach


def reach_turns(rules: FlightRules, state: FlightState, low: int | None = None) -> np.ndarray:
    """Turns (float, one a cell index, +inf where it cannot go) for a flier in ``state`` to
    end a move on each cell, at or below ``low`` metres where given (where it can catch
    or be caught): 1 where one of the moves its pilot weighs this turn ends there
    (:func:`_end_cells`), else the planner's bound
    (:func:`~engine.sim.flyreach.flight_turns`) but at least 2; 0 on its own cell. A
    flier moves exactly its speed and cannot stop dead, so the cells it passes over are
    not the cells it can end on: a quarry inside a griffon's turning circle is safe from
    it for a turn. Kept in the rules' pilot cache, read-only."""
    s = rules.normal(state)
    key = (s.key(), low)
    got = rules.pilot_cache.get("ends", {}).get(key)
    if got is None:
        grid = rules.model.grid
        out = np.maximum(flight_turns(rules, s), 2.0)
        if _frees(rules):
            for _, index in _free_climb_ends(rules, s, low):
                out[index] = 1.0
        else:
            out[np.array([grid.index(c) for c in _end_cells(rules, s, low)], dtype=np.int64)] = 1.0
        out[grid.index(s.cell)] = 0.0
        out.setflags(write=False)
        got = kept_arrays(rules, "ends")[key] = out
    return got


def _end_cells(rules: Any, s: FlightState, low: int | None) -> set[Cell]:
    """Every cell a move the pilot weighs from ``s`` ends on (at or below ``low`` metres
    where given): Mythmaster's every speed with its turn at the start, the end or any
    point between (one turn point, as the pilot turns); Speedpoints' every cell of its
    dives, level flight, climbs and stoops; another system's planner successors."""
    if hasattr(rules, "turn_cost") and hasattr(rules, "runs"):
        if s.downed:
            return {m.cell for m in _momentum_moves(rules, s, catch=None, reach=0)}
        plain = _plain_moves(rules, s)
        out = {m.cell for row in plain for part in row[4:] for m in part}
        geo, runs = rules.geo, rules.runs
        h, f = s.heading, s.face
        lat0 = geo.lat(s.cell)
        free0 = runs.free(s.cell, h, f)
        for v, _, _, left, _, _ in plain:
            options = turn_options(geo.step, left + 1)
            for k in range(1, min(v - 1, free0) + 1):
                pk = geo.advance(lat0, h, f, k)
                fk = geo.face_after(h, f, k)
                ck = geo.cell_at(pk)
                rest = v - k
                for d, _ in options:
                    h2 = (h + d) % 360
                    f2 = geo.first_face(h2, h, fk)
                    if rest <= runs.free(ck, h2, f2):
                        out.add(geo.cell_at(geo.advance(pk, h2, f2, rest)))
        return out
    if _frees(rules):
        return _free_ends(rules, s, low)
    moves = _planner_moves(rules, s, None)
    return {m.cell for m in moves if low is None or m.altitude <= low}


def _frees(rules: Any) -> bool:
    """Whether the rules' flight turns freely (Speedpoints): :func:`_moves`' middle shape."""
    return not (hasattr(rules, "turn_cost") and hasattr(rules, "runs")) and hasattr(
        rules, "blocked_at"
    )
