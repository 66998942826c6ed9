"""Speedpoints' flight (seed 004; RULES.md 6): :class:`SpeedpointsFlight`, the
FlightRules a flying Speedpoints token flies by (:meth:`Speedpoints.flight`).

Apart from the system itself so that what only lists or describes the systems never imports
engine.flight; its setting (``altitude_trade``) is the system's, in ``__init__``. The
system imports this module when a token flies, never the other way round: the rules read
their system through :class:`SpeedpointsRules` (what they use of it).
"""

from __future__ import annotations

import bisect
import itertools
import math
from collections.abc import Callable, Hashable, Iterator
from fractions import Fraction
from typing import TYPE_CHECKING, Any, Protocol

from engine.errors import ArgumentError
from engine.flight.model import (
    FlightChoice,
    FlightRules,
    FlightState,
    Goal,
    Key,
    TurnRecord,
    check_turns,
    trace,
    turn_delta,
)
from engine.grid import Cell
from engine.lazy import numpy as np
from engine.systems.base import Token, exact

if TYPE_CHECKING:
    from engine.mapmodel import MapModel


class SpeedpointsRules(Protocol):
    """What the flight reads of its system (:class:`engine.systems.speedpoints.Speedpoints`)."""

    @property
    def unit(self) -> str: ...

    @property
    def cell_size(self) -> Fraction: ...

    config: dict[str, Any]

    def air_spaces(self, token: Token) -> Fraction: ...

    def fall_outcome(self, token: Token, height_m: Fraction | int, surface: str = ...) -> Any: ...

    def dive_odds(self, token: Token, events: tuple[dict[str, Any], ...]) -> Fraction: ...


# State (engine/flight.py's FlightState): cell, heading, altitude in metres, the airspeed
# modifier; ``speed`` is the current airspeed (airspeed + modifier), the spaces the flier may
# cover this turn (1 point = 1 space per turn). No flight while encumbered.
#
# Readings (documented here and in the report):
# * No momentum in the plane: the seed's airspeed is a limit ("the total distance may not
#   exceed"), so a turn's move is any number of spaces up to the airspeed (choice
#   ``spaces``), and turning is free: any heading, at any points of the move (the seed has
#   no turning rule). The momentum is vertical: climbing 1 m costs 1 airspeed, descending
#   1 m gives 1 back, up to twice the airspeed.
# * Setting ``altitude_trade``: ``running`` (default) keeps one running modifier (a metre
#   down undoes a metre up); ``reset`` reads "until they descend again or land" literally:
#   any descent first cancels the whole climbing penalty, any climb the whole descent bonus.
# * Per turn (2 s): at most the airspeed at the start of the turn in metres up (the seed's
#   half airspeed per second), and never below airspeed 0; safely at most that down. Faster
#   is a fall: a ``fall`` event with the metres descended and the fall's odds. The climb or
#   descent is made first: the turn's airspeed (the spaces it may cover) is the new one.
# * Obstacles: a cell blocks when its ``height`` (in the map's cell_unit; ft converted to m)
#   is above the LOWER of the turn's start and end altitudes (where in the turn the climb
#   happens is not said: every cell entered must be clear at both ends). ``gap`` heights are
#   depths and ``air`` has none; a ``blocked`` cell with no height blocks at any altitude.
# * Take off: from the ground at altitude 0, free (its airspeed is the stat). Landing: at the
#   end of a move, at altitude 0, on a cell with ground (not air, gap or blocked); it clears
#   the modifier. Collisions stop the flier in the cell before (an event with the speed).
# * The planner climbs no higher than the tallest obstacle (or the start altitude) and
#   never descends faster than is safe.

_FEET_M = Fraction(3048, 10000)
_BALL_CACHE = 4096


class SpeedpointsFlight(FlightRules):
    """Speedpoints' flight for one token on one map (see the section comment)."""

    system_name = "speedpoints"
    has_altitude = True

    def __init__(self, system: SpeedpointsRules, token: Token, model: MapModel) -> None:
        super().__init__(model)
        self.system = system
        self.token = token
        self.base = int(system.air_spaces(token))  # the airspeed (a token that can fly)
        self.trade = system.config["altitude_trade"]
        unit = model.cell_unit or system.unit
        size = exact(model.cell_size) if model.cell_size else system.cell_size  # a 2 m space
        per_unit = _FEET_M if unit == "ft" else Fraction(1)
        heights: list[Fraction | None] = []
        used = set(np.unique(model.terrain_ids).tolist())
        for i, t in enumerate(model.terrains):
            if i not in used or t.move in ("gap", "air"):
                heights.append(Fraction(0))
            elif t.move == "blocked" and t.height is None:
                heights.append(None)  # a wall of unknown height: blocks at any altitude
            elif t.height is not None:
                heights.append(exact(t.height) * per_unit)
            else:  # the map format's default: one cell for climbs and ladders, else 0
                heights.append(size * per_unit if t.move in ("climb", "ladder") else Fraction(0))
        finite = sorted({h for h in heights if h is not None and h > 0})
        self.levels: list[Fraction] = finite
        top = max(finite, default=Fraction(0))
        self.alt_cap = math.ceil(top)
        self.rank: dict[Cell, int] = {}
        ids = model.terrain_ids
        for i, h in enumerate(heights):
            if h is not None and h <= 0:
                continue
            r = len(finite) if h is None else bisect.bisect_left(finite, h)
            rows, cols = np.nonzero(ids == i)
            for c, rr in zip(cols.tolist(), rows.tolist(), strict=True):
                self.rank[(c, rr)] = r
        self._balls: dict[tuple[Cell, int, int], dict[Cell, tuple[int, Cell | None]]] = {}

    def with_model(self, model: MapModel) -> SpeedpointsFlight:
        return SpeedpointsFlight(self.system, self.token, model)

    def flies_odds(self, events: tuple[dict[str, Any], ...]) -> float:
        """A dive faster than is safe (a ``fall`` event) is flown where its falling roll
        succeeds (:meth:`SpeedpointsRules.flight_rolls`): the roll's chance, 1 for a fall
        softened to safe or where setting ``dive_fall`` rolls nothing."""
        return float(self.system.dive_odds(self.token, events))

    def passable(self, cell: Cell) -> bool:
        return self.rank.get(cell, -1) < len(self.levels)

    def level(self, altitude: int) -> int:
        """How many of the map's obstacle heights ``altitude`` clears."""
        return bisect.bisect_right(self.levels, altitude)

    def blocked_at(self, altitude: int) -> Callable[[Cell], bool]:
        lv = self.level(altitude)
        rank = self.rank
        return lambda cell: rank.get(cell, -1) >= lv

    # ----------------------------------------------------------------- states and choices

    def start_state(
        self, cell: Cell, heading: int, speed: int, *, altitude: int = 0, face: int = -1
    ) -> FlightState:
        if not self.model.grid.in_bounds(cell):
            raise ArgumentError(
                role="start", given=f"{cell[0]},{cell[1]}", problem="outside the map"
            )
        h = self.geo.check_heading(heading)
        if altitude < 0:
            raise ArgumentError(f"altitude {altitude}: expected metres >= 0")
        if self.blocked_at(altitude)(cell):
            raise ArgumentError(
                role="start",
                given=f"{cell[0]},{cell[1]}",
                problem=f"{self.model.terrain_at(cell).name} is taller than altitude {altitude} m",
            )
        if speed == 0:
            if altitude:
                raise ArgumentError(
                    role="speed",
                    given="0",
                    problem=f"starts on the ground, at altitude 0 (not {altitude} m)",
                )
            if not self.landable(cell):
                raise ArgumentError(
                    role="start",
                    given=f"{cell[0]},{cell[1]}",
                    problem="speed 0 starts on the ground, and this cell has none "
                    f"({self.model.terrain_at(cell).name})",
                )
            return self.normal(FlightState(cell, h, 0, 0, True, face))
        hi = 2 * self.base
        if not 0 < speed <= hi:
            raise ArgumentError(
                role="speed",
                given=str(speed),
                problem=f"expected 0 (on the ground) or a current airspeed of 1 to {hi} "
                f"(twice the airspeed {self.base})",
            )
        return self.normal(FlightState(cell, h, speed, altitude, False, face, speed - self.base))

    def actions(self, choice: FlightChoice) -> tuple[str, ...]:
        # The seed's turn is one move: flight spends no actions; take-off and landing are
        # listed so a plan shows them.
        return (("take_off",) if choice.take_off else ()) + (("land",) if choice.land else ())

    def _trade(self, m: int, dz: int) -> int:
        """The modifier after climbing ``dz`` metres (negative: descending)."""
        if dz > 0:
            return (min(m, 0) if self.trade == "reset" else m) - dz
        if dz < 0:
            start = max(m, 0) if self.trade == "reset" else m
            return min(start - dz, self.base)
        return m

    def step(self, state: FlightState, choice: FlightChoice) -> tuple[FlightState, TurnRecord]:  # noqa: C901
        state = self.normal(state)
        c = choice
        if c.maintain or c.accelerate or c.decelerate or c.recover:
            raise ArgumentError(
                "speedpoints flight has no speed actions: choose climb (metres) and spaces"
            )
        if state.landed and not c.take_off:
            raise ArgumentError("the flier is on the ground: take_off first")
        if c.take_off and not state.landed:
            raise ArgumentError("take_off: the flier is already flying")
        cur = self.base if state.landed else state.speed
        m = 0 if state.landed else state.modifier
        alt, dz = state.altitude, c.climb
        if dz > cur:
            raise ArgumentError(f"climb {dz} m: at most the airspeed, {cur} m this turn")
        if -dz > alt:
            raise ArgumentError(f"descend {-dz} m: the flier is {alt} m above the ground")
        m2 = self._trade(m, dz)
        s2 = self.base + m2
        if s2 < 0:
            raise ArgumentError(f"climb {dz} m: the airspeed would fall below 0")
        spaces = s2 if c.spaces is None else c.spaces
        if not 0 <= spaces <= s2:
            raise ArgumentError(f"spaces {spaces}: expected 0 to the airspeed, {s2}")
        turns = check_turns(self.geo, c.turns, spaces, "turns")
        alt2 = alt + dz
        if c.land and alt2:
            raise ArgumentError(f"land: the flier ends {alt2} m above the ground; descend first")
        actions = self.actions(c)
        tr = trace(
            self.geo,
            state.cell,
            state.heading,
            state.face,
            spaces,
            turns,
            self.blocked_at(min(alt, alt2)),
        )
        events: list[dict[str, Any]] = [
            {
                "event": "choice",
                "choice": c.to_dict(),
                "actions": list(actions),
                "speed": spaces,
                "airspeed": s2,
                "altitude": alt2,
            }
        ]
        if -dz > cur:
            under = self.model.terrain_at(state.cell).fall
            surface = under if under in ("hard", "soft", "water") else "hard"
            fall = self.system.fall_outcome(self.token, -dz, surface)
            events.append(
                {
                    "event": "fall",
                    "what": f"descended {-dz} m in a turn (safe up to {cur} m)",
                    "height_m": -dz,
                    "surface": surface,
                    "band": fall.band,
                    "outcomes": dict(fall.outcomes),
                }
            )
        last = tr.cells[-1] if tr.cells else state.cell
        if tr.hit is not None:
            if self.model.grid.in_bounds(tr.hit):
                what = (
                    f"{self.model.terrain_at(tr.hit).name} at {tr.hit[0]},{tr.hit[1]} "
                    f"(taller than {min(alt, alt2)} m)"
                )
            else:
                what = f"the map's edge past {last[0]},{last[1]}"
            events.append(
                {
                    "event": "collision",
                    "what": what,
                    "cell": tr.hit,
                    "stopped_at": last,
                    "relative_speed": spaces,
                    "m_per_s": spaces,
                }
            )
            new = FlightState(last, tr.heading, s2, alt2, False, tr.face, m2, 0)
        elif c.land and not self.landable(last):
            events.append(
                {
                    "event": "cannot_land",
                    "what": f"{self.model.terrain_at(last).name} at {last[0]},{last[1]} has "
                    "no ground",
                    "cell": last,
                }
            )
            new = FlightState(last, tr.heading, s2, alt2, False, tr.face, m2, 0)
        elif c.land:
            events.append({"event": "landed", "cell": last, "speed": spaces})
            new = FlightState(last, tr.heading, 0, 0, True, tr.face, 0, 0)
        else:
            new = FlightState(last, tr.heading, s2, alt2, False, tr.face, m2, 0)
        return new, TurnRecord(0, c, actions, spaces, tr.cells, state, new, tuple(events))

    def goal_refusal(self, goal: Goal) -> str | None:
        cell = goal.cell
        name = self.model.terrain_at(cell).name
        if self.rank.get(cell, -1) >= len(self.levels):
            return f"the goal {cell[0]},{cell[1]} is blocked ({name})"
        if goal.land and not self.landable(cell):
            return f"cannot land at {cell[0]},{cell[1]}: {name} has no ground"
        if goal.land and self.rank.get(cell, -1) >= 0:
            return f"cannot land at {cell[0]},{cell[1]}: {name} is taller than the ground"
        return None

    def _climbs(self, cur: int, alt: int) -> range:
        """The climbs the planner considers: safe descents, climbs up to the tallest
        obstacle (or where it already is)."""
        return range(-min(cur, alt), min(cur, max(0, self.alt_cap - alt)) + 1)

    def choices(
        self, state: FlightState, *, turn_points: int = 1, land: bool = True
    ) -> Iterator[FlightChoice]:
        """Every climb the planner considers, every number of spaces, every path of face
        steps and every heading to turn to at its end (free turns: exponential, for tests
        on small airspeeds), landing variants at altitude 0 when ``land``."""
        state = self.normal(state)
        cur = self.base if state.landed else state.speed
        m = 0 if state.landed else state.modifier
        geo = self.geo
        faces = sorted(geo.faces)
        for dz in self._climbs(cur, state.altitude):
            s2 = self.base + self._trade(m, dz)
            if s2 < 0:
                continue
            landing = (False, True) if land and state.altitude + dz == 0 else (False,)
            for n in range(s2 + 1):
                for seq in itertools.product(faces, repeat=n):
                    turns: list[tuple[int, int]] = []
                    h = state.heading
                    for i, f in enumerate(seq):
                        if f != h:
                            turns.append((i, turn_delta(h, f)))
                            h = f
                    for end in geo.headings:
                        last = ((n, turn_delta(h, end)),) if end != h else ()
                        for ld in landing:
                            yield FlightChoice(
                                take_off=state.landed,
                                land=ld,
                                climb=dz,
                                spaces=n,
                                turns=(*turns, *last),
                            )

    # ----------------------------------------------------------------- planning

    def dedup(self, key: Key) -> Hashable:
        # Free turning: heading and face do not change what the flier can do next.
        return (key[0], key[3], key[4], key[6])

    def _ball(self, cell: Cell, radius: int, lv: int) -> dict[Cell, tuple[int, Cell | None]]:
        """Cells within ``radius`` steps through cells clear at level ``lv``: (steps, the
        cell before on one shortest way)."""
        k = (cell, radius, lv)
        got = self._balls.get(k)
        if got is not None:
            return got
        grid, rank = self.model.grid, self.rank
        out: dict[Cell, tuple[int, Cell | None]] = {cell: (0, None)}
        frontier = [cell]
        for d in range(1, radius + 1):
            nxt = []
            for c in frontier:
                for n in grid.neighbours(c):
                    if n not in out and rank.get(n, -1) < lv:
                        out[n] = (d, c)
                        nxt.append(n)
            frontier = nxt
        if len(self._balls) >= _BALL_CACHE:
            self._balls.clear()  # a bound on memory; rebuilt as needed
        self._balls[k] = out
        return out

    def expand(  # noqa: C901
        self, key: Key, goal: Goal, turn_points: int
    ) -> Iterator[tuple[Key, int, bool, Any]]:
        cell, h, speed, alt, landed, face, m, _ = key
        cur = self.base if landed else speed
        m0 = 0 if landed else m
        geo, grid = self.geo, self.model.grid
        gh = goal.heading
        t0 = int(landed)
        for dz in self._climbs(cur, alt):
            m2 = self._trade(m0, dz)
            s2 = self.base + m2
            if s2 < 0:
                continue
            alt2 = alt + dz
            ball = self._ball(cell, s2, self.level(min(alt, alt2)))
            for end, (_, pred) in ball.items():
                if pred is None:
                    h2, f2 = h, face
                else:
                    h2 = f2 = grid.heading_between(pred, end)
                spec = (landed, dz, end, pred, None, False)
                if end == goal.cell and goal.land:
                    if alt2 == 0:
                        hl, fl = h2, f2
                        if gh is not None and gh != h2:
                            hl, fl = gh, geo.first_face(gh, h2, f2)
                        yield (
                            (end, hl, 0, 0, True, fl, 0, 0),
                            t0 + 1,
                            True,
                            (
                                landed,
                                dz,
                                end,
                                pred,
                                gh,
                                True,
                            ),
                        )
                    yield (end, h2, s2, alt2, False, f2, m2, 0), t0, False, spec
                    continue
                reached = end == goal.cell and not goal.land and (gh is None or gh == h2)
                yield (end, h2, s2, alt2, False, f2, m2, 0), t0, reached, spec
            if goal.land or gh is None or goal.cell not in ball:
                continue
            # Entering on a heading: any step into the goal along it (or, for a vertex
            # heading, along one of its faces: a free turn onto it makes that face first).
            for pred in grid.neighbours(goal.cell):
                got = ball.get(pred)
                if got is None or got[0] >= s2:
                    continue
                f = grid.heading_between(pred, goal.cell)
                if f != gh and f not in geo.vertex_faces.get(gh, ()):
                    continue
                fn = geo.other(gh, f)
                yield (
                    (goal.cell, gh, s2, alt2, False, fn, m2, 0),
                    t0,
                    True,
                    (
                        landed,
                        dz,
                        goal.cell,
                        pred,
                        gh,
                        False,
                    ),
                )

    def choice_of(self, key: Key, spec: Any) -> FlightChoice:
        cell, h, _, alt, landed, _, m, _ = key
        take_off, dz, end, pred, final, land = spec
        m2 = self._trade(0 if landed else m, dz)
        ball = self._ball(cell, self.base + m2, self.level(min(alt, alt + dz)))
        path: list[Cell] = []
        if pred is not None:
            c: Cell | None = pred
            while c is not None:
                path.append(c)
                c = ball[c][1]
            path.reverse()
            path.append(end)
        grid = self.model.grid
        turns: list[tuple[int, int]] = []
        for i in range(len(path) - 1):
            f = grid.heading_between(path[i], path[i + 1])
            if f != h:
                turns.append((i, turn_delta(h, f)))
                h = f
        spaces = max(0, len(path) - 1)
        if final is not None and final != h:
            # Landing: turn at the end; entering: turn onto the heading before the last step.
            turns.append((spaces if land else max(0, spaces - 1), turn_delta(h, final)))
        return FlightChoice(
            take_off=take_off, land=land, climb=dz, spaces=spaces, turns=tuple(turns)
        )

    def bound(self, key: Key, goal: Goal) -> tuple[int, int] | None:
        cell, _, speed, alt, landed, _, m, _ = key
        d_or_none = self.steps_to(goal.cell).get(cell)
        if d_or_none is None:
            return None
        d = d_or_none
        if landed:
            cap = self.base
        elif self.trade == "running":
            cap = min(2 * self.base, self.base + m + alt)
        else:
            cap = 2 * self.base
        need = alt if goal.land else 0
        acts = int(landed) + int(goal.land)
        if cap <= 0:
            return None if d or need else (1, acts)
        return max(1, -(-d // cap), -(-need // cap)), acts
