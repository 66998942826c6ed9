"""Mythmaster's flight (seed 002; RULES.md 6): :class:`MythmasterFlight`, the
FlightRules a flying Mythmaster token flies by (:meth:`Mythmaster.flight`).

Apart from the system itself so that what only lists or describes the systems never imports
engine.flight; its setting (``collision_damage``) is the system's, in ``__init__``. The
system imports this module when a token flies, never the other way round: the rules read
their system through :class:`MythmasterRules` (what they use of it).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from fractions import Fraction
from typing import TYPE_CHECKING, Any, Protocol

from engine.errors import ArgumentError, did_you_mean
from engine.flight.model import (
    FlightChoice,
    FlightRules,
    FlightState,
    Goal,
    Key,
    Runs,
    TurnRecord,
    Turns,
    angle,
    check_turns,
    moves,
    trace,
    turn_plans,
)
from engine.grid import Cell
from engine.lazy import numpy as np
from engine.systems.base import Token
from engine.systems.mythmaster.turnround import TurnRound
from engine.terrain import MODES

if TYPE_CHECKING:
    from engine.mapmodel import MapModel


class MythmasterRules(Protocol):
    """What the flight reads of its system (:class:`engine.systems.mythmaster.Mythmaster`)."""

    @property
    def paces(self) -> tuple[str, ...]: ...

    @property
    def cell_size(self) -> Fraction: ...

    @property
    def turn_seconds(self) -> Fraction: ...

    config: dict[str, Any]

    def effective_base_move(self, token: Token) -> int: ...

    def hexes_per_turn(self, token: Token, mode: str, pace: str | None = None) -> Fraction: ...


#
# State: cell, heading, speed in hexes per turn (engine/flight.py's FlightState). Each turn
# the flier spends up to 3 actions: take off / land 1 each; one speed action: maintain (1),
# accelerate n (+n x BM, n actions) or decelerate n (-(n+1) x BM, n actions); with neither
# maintain nor accelerate the speed drops by BM anyway. Turning: the turn's total up to 30
# degrees is free, each further 30 one action (square maps: each 45 counts as 30). New speed
# = clamp(old +- change, 0, 18 x BM), then the flier enters exactly that many hexes.
#
# Readings (documented here and in the report):
# * Turns may be split over any points of the move (the simulator takes any list); the
#   planner searches turns made at one point of each move (``turn_points``, default 1).
# * Only ``blocked`` cells and the map's edge stop a flier (no altitude here). Entering one
#   is a collision at the turn's speed: the flier stops in the cell before, at speed 0, still
#   flying (a turn's land action is then not made). Damage: setting ``collision_damage``
#   points per hex/turn of relative speed, rounded down (default 0: the event only reports
#   the speed, RULES.md 6 "default none").
# * Landing ends the move: the flier lands in the last cell entered, which must have ground
#   (not air, gap or blocked: else the action is spent and it flies on). Faster than the
#   token's sprint (3 x BM, 6 x BM with Dash) is a collision ("unsafe landing"); it still
#   lands. A landed flier's speed is its ground rate of the turn before, the speed it takes
#   off with (0 after landing or standing still); taking off costs 1 action that turn.
# * Tripped or downed (``knock_down``): speed - the token's Sprint Move (the seed's words;
#   3 x BM, 6 x BM with Dash), and 2 actions to recover, spent in this or later turns. Until
#   then the flier flies straight on: no speed action (so it slows by BM a turn), no turning,
#   no landing; once the last recovery action is spent the rest of the turn is free.
# * The planner never lands anywhere but the goal and never collides.

FLIGHT_TOP_BM = 18
"""Top flying speed, in Base Moves per turn."""

FLIGHT_ACTIONS = 3
DOWNED_RECOVERY = 2
"""Actions a downed flier spends to get up (seed 002)."""

# speed action -> (actions spent, change in Base Moves) for n = 1..3 (n = 0: none)
_SPEED_KINDS = ("none", "maintain", "accelerate", "decelerate")


def _speed_change(kind: str, n: int) -> tuple[int, int]:
    """(actions, change in BM) of one speed action."""
    if kind == "none":
        return 0, -1
    if kind == "maintain":
        return 1, 0
    if kind == "accelerate":
        return n, n
    return n, -(n + 1)


class MythmasterFlight(FlightRules):
    """Mythmaster's flight for one token on one map (see the section comment)."""

    system_name = "mythmaster"

    def __init__(self, system: MythmasterRules, token: Token, model: MapModel) -> None:
        super().__init__(model)
        self.system = system
        self.token = token
        bm = system.effective_base_move(token)
        self.bm = bm
        self.top = FLIGHT_TOP_BM * bm
        sprint = int(system.hexes_per_turn(token, "walk", "sprint"))
        self.land_limit = sprint
        self.down_slowdown = sprint
        self.damage_rate = Fraction(system.config["collision_damage"])
        codes = model.move_codes()
        rows, cols = np.nonzero(codes == MODES.index("blocked"))
        self.blocked_cells: frozenset[Cell] = frozenset(
            zip(cols.tolist(), rows.tolist(), strict=True)
        )
        self.runs = Runs(self.geo, self.blocked_cells.__contains__)
        self._next: dict[int, list[tuple[int, int]]] = {}
        self._relax_memo: dict[tuple[int, int, bool, int], tuple[int, int] | None] = {}

    def with_model(self, model: MapModel) -> MythmasterFlight:
        return MythmasterFlight(self.system, self.token, model)

    def passable(self, cell: Cell) -> bool:
        return cell not in self.blocked_cells

    # ----------------------------------------------------------------- states and choices

    def start_state(
        self, cell: Cell, heading: int, speed: int, *, altitude: int = 0, face: int = -1
    ) -> FlightState:
        if not self.model.grid.in_bounds(cell):
            raise ArgumentError(
                role="start", given=f"{cell[0]},{cell[1]}", problem="outside the map"
            )
        if cell in self.blocked_cells:
            raise ArgumentError(
                role="start", given=f"{cell[0]},{cell[1]}", problem="a blocked cell"
            )
        h = self.geo.check_heading(heading)
        if altitude:
            raise ArgumentError(f"altitude {altitude}: mythmaster flight has no altitude")
        if not 0 <= speed <= self.top:
            raise ArgumentError(
                role="speed",
                given=str(speed),
                problem=f"expected 0 (on the ground) to {self.top} hexes per turn "
                f"(18 x Base Move {self.bm})",
            )
        if speed == 0 and not self.landable(cell):
            raise ArgumentError(
                role="start",
                given=f"{cell[0]},{cell[1]}",
                problem="speed 0 starts on the ground, and this cell has none "
                f"({self.model.terrain_at(cell).name}); give a flying speed",
            )
        return self.normal(FlightState(cell, h, speed, landed=speed == 0, face=face))

    def ground_start(self, cell: Cell, heading: int, pace: str) -> FlightState:
        """On the ground at ``cell`` after a turn moving at ``pace``: RULES.md 6 "Take off
        after ground movement: the start speed is the previous turn's ground rate" (seed 002:
        "their initial flying speed is equal to the movement speed from the previous turn")."""
        if pace not in self.system.paces:
            raise ArgumentError(
                role="ground_pace",
                given=pace,
                problem=f"mythmaster paces are {', '.join(self.system.paces)}"
                f"{did_you_mean(pace, list(self.system.paces))}",
            )
        state = self.start_state(cell, heading, 0)
        rate = self.system.hexes_per_turn(self.token, "walk", pace)
        return replace(state, speed=min(self.top, int(rate)))

    def turn_cost(self, turns: Turns) -> int:
        """Actions the turn's turning costs: up to 30 degrees free, each further 30 one."""
        return max(0, self.geo.turn_steps(turns) - 1) if turns else 0

    def actions(self, choice: FlightChoice) -> tuple[str, ...]:
        out: list[str] = []
        if choice.take_off:
            out.append("take_off")
        out += ["recover"] * choice.recover
        if choice.maintain:
            out.append("maintain")
        out += ["accelerate"] * choice.accelerate + ["decelerate"] * choice.decelerate
        out += ["turn"] * self.turn_cost(choice.turns)
        if choice.land:
            out.append("land")
        return tuple(out)

    def _check(self, state: FlightState, c: FlightChoice) -> int:
        """Validate a choice against a state; returns the new speed."""
        if c.climb or c.spaces is not None:
            raise ArgumentError(
                "mythmaster flight has no altitude or spaces (speedpoints' choices)"
            )
        if min(c.accelerate, c.decelerate, c.recover) < 0:
            raise ArgumentError("accelerate, decelerate and recover count actions: >= 0")
        if int(c.maintain) + int(c.accelerate > 0) + int(c.decelerate > 0) > 1:
            raise ArgumentError("choose one speed action: maintain, accelerate n or decelerate n")
        if state.landed and not c.take_off:
            raise ArgumentError("the flier is on the ground: take_off first")
        if c.take_off and not state.landed:
            raise ArgumentError("take_off: the flier is already flying")
        if c.recover > state.downed:
            raise ArgumentError(f"recover {c.recover}: only {state.downed} recovery actions due")
        if state.downed - c.recover and (
            c.maintain or c.accelerate or c.decelerate or c.turns or c.land
        ):
            raise ArgumentError(
                f"the flier is down: it flies straight on until it spends "
                f"{state.downed} actions to recover"
            )
        change = _speed_change(
            "maintain"
            if c.maintain
            else "accelerate"
            if c.accelerate
            else "decelerate"
            if c.decelerate
            else "none",
            c.accelerate or c.decelerate,
        )[1]
        return min(self.top, max(0, state.speed + change * self.bm))

    def step(self, state: FlightState, choice: FlightChoice) -> tuple[FlightState, TurnRecord]:
        state = self.normal(state)
        v = self._check(state, choice)
        turns = check_turns(self.geo, choice.turns, v, "turns")
        actions = self.actions(choice)
        if len(actions) > FLIGHT_ACTIONS:
            raise ArgumentError(
                f"{len(actions)} actions ({', '.join(actions)}): a turn has {FLIGHT_ACTIONS}"
            )
        still_down = state.downed - choice.recover
        tr = trace(
            self.geo,
            state.cell,
            state.heading,
            state.face,
            v,
            turns,
            self.blocked_cells.__contains__,
        )
        events: list[dict[str, Any]] = [
            {"event": "choice", "choice": choice.to_dict(), "actions": list(actions), "speed": v}
        ]
        last = tr.cells[-1] if tr.cells else state.cell
        if tr.hit is not None:
            events.append(self._collision(v, tr.hit, last))
            new = FlightState(last, tr.heading, 0, 0, False, tr.face, 0, still_down)
        elif choice.land and not self.landable(last):
            events.append(
                {
                    "event": "cannot_land",
                    "what": f"{self.model.terrain_at(last).name} at {last[0]},{last[1]} has "
                    "no ground",
                    "cell": last,
                }
            )
            new = FlightState(last, tr.heading, v, 0, False, tr.face, 0, still_down)
        elif choice.land:
            if v > self.land_limit:
                events.append(
                    {
                        **self._collision(v, None, last),
                        "what": f"unsafe landing at {v} hexes/turn (safe up to {self.land_limit})",
                    }
                )
            else:
                events.append({"event": "landed", "cell": last, "speed": v})
            new = FlightState(last, tr.heading, 0, 0, True, tr.face, 0, 0)
        else:
            new = FlightState(last, tr.heading, v, 0, False, tr.face, 0, still_down)
        rec = TurnRecord(0, choice, actions, v, tr.cells, state, new, tuple(events))
        return new, rec

    def _collision(self, v: int, hit: Cell | None, last: Cell) -> dict[str, Any]:
        if hit is None:
            what = "collision"
        elif self.model.grid.in_bounds(hit):
            what = f"{self.model.terrain_at(hit).name} at {hit[0]},{hit[1]} (blocked)"
        else:
            what = f"the map's edge past {last[0]},{last[1]}"
        damage = int(self.damage_rate * v) if self.damage_rate else None
        return {
            "event": "collision",
            "what": what,
            "cell": hit,
            "stopped_at": last,
            "relative_speed": v,
            # metres_per_second(v): hexes per turn in the system's metres and seconds
            "m_per_s": Fraction(v) * self.system.cell_size / self.system.turn_seconds,
            "damage": damage,
        }

    def knock_down(self, state: FlightState) -> tuple[FlightState, dict[str, Any]]:
        """Tripped or downed in flight: speed - Sprint Move, 2 actions to get up."""
        if state.landed:
            raise ArgumentError("knocked down: the flier is on the ground, not flying")
        v = max(0, state.speed - self.down_slowdown)
        new = replace(self.normal(state), speed=v, downed=DOWNED_RECOVERY)
        return new, {"event": "downed", "what": "tripped or downed in flight", "speed": v}

    def goal_refusal(self, goal: Goal) -> str | None:
        cell = goal.cell
        name = self.model.terrain_at(cell).name
        if cell in self.blocked_cells:
            return f"the goal {cell[0]},{cell[1]} is blocked ({name})"
        if goal.land and not self.landable(cell):
            return f"cannot land at {cell[0]},{cell[1]}: {name} has no ground"
        return None

    # ----------------------------------------------------------------- the turn's options

    def _speed_options(self, speed: int, budget: int, dedupe: bool) -> list[tuple[int, str, int]]:
        """``(new speed, kind, n)`` for each speed action affordable from ``budget``; with
        ``dedupe`` only the cheapest way to each new speed (fewer actions leave more for
        turning: it dominates). The kinds are listed cheapest first for any one speed."""
        out: list[tuple[int, str, int]] = []
        seen: set[int] = set()
        for kind in _SPEED_KINDS:
            for n in (0,) if kind in ("none", "maintain") else range(1, budget + 1):
                acts, change = _speed_change(kind, n)
                if acts > budget:
                    continue
                v = min(self.top, max(0, speed + change * self.bm))
                if dedupe:
                    if v in seen:
                        continue
                    seen.add(v)
                out.append((v, kind, n))
        return out

    def _turn_shapes(
        self, state: FlightState, land: bool
    ) -> Iterator[tuple[FlightChoice, int, int, bool]]:
        """(choice without turns, new speed, actions left, still down) for every action mix."""
        fixed = 1 if state.landed else 0
        for r in range(0, min(state.downed, FLIGHT_ACTIONS) + 1) if state.downed else (0,):
            if r < state.downed:
                v = max(0, state.speed - self.bm)
                yield FlightChoice(recover=r), v, 0, True
                continue
            budget = FLIGHT_ACTIONS - fixed - r
            for v, kind, n in self._speed_options(state.speed, budget, dedupe=False):
                left = budget - _speed_change(kind, n)[0]
                base = FlightChoice(
                    take_off=state.landed,
                    recover=r,
                    maintain=kind == "maintain",
                    accelerate=n if kind == "accelerate" else 0,
                    decelerate=n if kind == "decelerate" else 0,
                )
                yield base, v, left, False
                if land and left >= 1:
                    yield replace(base, land=True), v, left - 1, False

    def choices(
        self, state: FlightState, *, turn_points: int = 1, land: bool = True
    ) -> Iterator[FlightChoice]:
        """Every action mix, with every turn of up to ``turn_points`` points the actions left
        pay for (landing variants when ``land``)."""
        state = self.normal(state)
        for base, v, left, down in self._turn_shapes(state, land):
            if down:
                yield base
                continue
            for turns, _ in turn_plans(self.geo.step, v, left + 1, turn_points):
                yield replace(base, turns=turns)

    # ----------------------------------------------------------------- planning

    def expand(
        self, key: Key, goal: Goal, turn_points: int
    ) -> Iterator[tuple[Key, int, bool, Any]]:
        cell, h, speed, _, landed, face, _, downed = key
        geo, runs = self.geo, self.runs
        fixed = 1 if landed else 0
        for r in range(0, min(downed, FLIGHT_ACTIONS) + 1) if downed else (0,):
            if r < downed:
                v = max(0, speed - self.bm)
                if v > runs.free(cell, h, face):
                    continue
                end = geo.cell_at(geo.advance(geo.lat(cell), h, face, v)) if v else cell
                hit = False
                if not goal.land and (goal.heading is None or goal.heading == h):
                    gp, p = geo.lat(goal.cell), geo.lat(cell)
                    t = geo.solve(gp[0] - p[0], gp[1] - p[1], h, face)
                    hit = 1 <= t <= v
                key2 = (end, h, v, 0, False, geo.face_after(h, face, v), 0, downed - r)
                yield key2, r, hit, (False, r, "none", 0, (), False)
                continue
            budget = FLIGHT_ACTIONS - fixed - r
            still = downed - r
            for v, kind, n in self._speed_options(speed, budget, dedupe=True):
                spent = fixed + r + _speed_change(kind, n)[0]
                left = budget - _speed_change(kind, n)[0]
                can_land = goal.land and v <= self.land_limit and left >= 1
                for end, h2, f2, turns, steps, hit in moves(
                    geo, runs, cell, h, face, v, left + 1, turn_points, goal
                ):
                    cost = steps - 1 if steps > 1 else 0
                    acts = spent + cost
                    spec = (landed, r, kind, n, turns, False)
                    if can_land and end == goal.cell and cost + 1 <= left:
                        if goal.heading is None or goal.heading == h2:
                            landed_key = (end, h2, 0, 0, True, f2, 0, 0)
                            yield landed_key, acts + 1, True, (landed, r, kind, n, turns, True)
                    yield (end, h2, v, 0, False, f2, 0, still), acts, hit, spec

    def choice_of(self, key: Key, spec: Any) -> FlightChoice:
        take_off, r, kind, n, turns, land = spec
        return FlightChoice(
            take_off=take_off,
            land=land,
            maintain=kind == "maintain",
            accelerate=n if kind == "accelerate" else 0,
            decelerate=n if kind == "decelerate" else 0,
            turns=turns,
            recover=r,
        )

    # ----------------------------------------------------------------- the heuristic
    #
    # A relaxed 1-D problem: ignore turning and headings; a turn's move brings the flier at
    # most its new speed closer, distance being the fewest steps around blocked cells (a BFS
    # from the goal, FlightRules.steps_to). From (speed v, distance d): the fewest turns,
    # then the fewest speed actions, to cover d (entering: v_1 + ... + v_T >= d; landing: as
    # well, the last turn's speed at most the safe landing speed, reached with 2 actions, the
    # third landing). With a goal heading, the heading steps still to turn count too: each
    # turn takes its free step, further steps cost actions the speed then lacks. Solved
    # lazily and kept for the rules' life: only speeds the flier can reach are ever asked
    # (multiples of BM from a standstill). Any real plan maps to a
    # relaxed one with the same turns and no more actions, so the bound is admissible; it is
    # consistent too (a turn's relaxed cost is at most its real cost).

    def _opts(self, v: int, budget: int) -> list[tuple[int, int]]:
        k = v * 4 + budget
        got = self._next.get(k)
        if got is None:
            got = [
                (w, _speed_change(kind, n)[0])
                for w, kind, n in self._speed_options(v, budget, dedupe=True)
            ]
            self._next[k] = got
        return got

    def _relaxed(self, v: int, d: int, land: bool, n: int = 0) -> tuple[int, int] | None:
        """(turns, actions) of the relaxed problem from speed ``v`` at distance ``d`` with
        ``n`` heading steps still to turn (a goal heading); None when it cannot be done."""
        memo = self._relax_memo
        k = (v, d, land, n)
        if k in memo:
            return memo[k]
        best: tuple[int, int] | None = None
        # Turning as early as possible never costs more: the free step is always taken.
        first = 1 if n else 0
        if land:
            for w, a in self._opts(v, FLIGHT_ACTIONS - 1):
                if not d <= w <= self.land_limit:
                    continue
                extra = max(0, n - 1)
                if extra <= FLIGHT_ACTIONS - 1 - a and (best is None or (1, a + extra + 1) < best):
                    best = (1, a + extra + 1)
        for w, a in self._opts(v, FLIGHT_ACTIONS):
            for turned in range(first, min(n, FLIGHT_ACTIONS - a + 1) + 1):
                cost = a + max(0, turned - 1)
                left = n - turned
                if not land and 0 < d <= w and not left:
                    if best is None or (1, cost) < best:
                        best = (1, cost)
                    continue
                if not left:
                    if d > 0 and w == 0 and v == 0:
                        continue  # a turn standing still changes nothing
                    if d == 0 and w >= v:
                        continue  # at the goal already: only slowing down can help
                d2 = max(0, d - w)
                if not land and left:
                    d2 = max(1, d2)  # it must still come back in, on the heading
                rest = self._relaxed(w, d2, land, left)
                if rest is not None and (best is None or (1 + rest[0], cost + rest[1]) < best):
                    best = (1 + rest[0], cost + rest[1])
        memo[k] = best
        return best

    def heading_bound(self, goal: Goal, start: FlightState, turn_points: int) -> TurnRound | None:
        """The turn-round bound (:mod:`engine.systems.mythmaster.turnround`) for a goal with
        an end heading, moves with one turn point and a start not downed; else None."""
        return TurnRound.of(self, goal, start, turn_points, FLIGHT_ACTIONS)

    def bound(self, key: Key, goal: Goal) -> tuple[int, int] | None:
        cell, h, speed, _, landed, _, _, _ = key
        d_or_none = self.steps_to(goal.cell).get(cell)
        if d_or_none is None:
            return None
        d = d_or_none
        n = 0 if goal.heading is None else angle(h, goal.heading) // self.geo.step
        if not landed:
            if not goal.land and d == 0:
                d = 1  # back at the goal (on the wrong heading): it must enter again
            return self._relaxed(speed, d, goal.land, n)
        # On the ground: the take-off turn has 2 actions left (1 if it lands as well).
        best: tuple[int, int] | None = None
        first = 1 if n else 0
        if goal.land:
            for w, a in self._opts(speed, FLIGHT_ACTIONS - 2):
                extra = max(0, n - 1)
                if d <= w <= self.land_limit and extra <= FLIGHT_ACTIONS - 2 - a:
                    if best is None or (1, a + extra + 2) < best:
                        best = (1, a + extra + 2)
        for w, a in self._opts(speed, FLIGHT_ACTIONS - 1):
            for turned in range(first, min(n, FLIGHT_ACTIONS - 1 - a + 1) + 1):
                cost = 1 + a + max(0, turned - 1)
                left = n - turned
                if d <= w and not goal.land and not left:
                    cand: tuple[int, int] | None = (1, cost)
                else:
                    d2 = max(0, d - w)
                    if not goal.land and left:
                        d2 = max(1, d2)
                    rest = self._relaxed(w, d2, goal.land, left)
                    cand = None if rest is None else (1 + rest[0], cost + rest[1])
                if cand is not None and (best is None or cand < best):
                    best = cand
        return best
