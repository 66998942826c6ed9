"""The flight planner: an A* over flight states for the fewest turns, then fewest actions.

States are generated lazily by the system's :meth:`FlightRules.expand`, with the system's
admissible heuristic (a relaxed 1-D speed/distance problem) and dominated states pruned.
Every plan found is replayed turn by turn (:func:`engine.flight.model.fly_turns`, the
simulator's own loop).

Goals with an end heading may get a sharper bound from the rules themselves
(:meth:`FlightRules.heading_bound`, such as the turn-round bound of fliers with momentum);
the planner only asks, and names no system."""

from __future__ import annotations

import heapq
import itertools
from collections.abc import Hashable
from dataclasses import dataclass
from typing import Any

from engine.errors import ArgumentError
from engine.flight.model import (
    FlightChoice,
    FlightRules,
    FlightState,
    Goal,
    Key,
    TurnRecord,
    at_goal,
    fly_turns,
    state_of,
)
from engine.grid import Cell
from engine.mapmodel import MapModel


@dataclass(frozen=True)
class Plan:
    """A flight plan: the start, the turns (as the simulator flies them) and the planner's
    own end state (which a replay must reproduce exactly)."""

    start: FlightState
    goal: Goal
    records: tuple[TurnRecord, ...]
    end: FlightState
    actions: int
    expanded: int

    @property
    def turns(self) -> int:
        return len(self.records)

    @property
    def choices(self) -> list[FlightChoice]:
        return [r.choice for r in self.records]


@dataclass
class SearchResult:
    """A search's plan (None: none within the bounds, ``reason`` says why) and its work:
    flight states expanded and successors generated."""

    plan: Plan | None
    expanded: int
    reason: str = ""
    generated: int = 0


_GOAL = "goal"
_OUT_OF_REACH = "the goal is out of this flier's reach (speed and distance)"


def search(
    model: MapModel,
    rules: FlightRules,
    start: FlightState,
    goal_cell: Cell,
    *,
    land: bool = False,
    heading: int | None = None,
    max_turns: int = 40,
    max_states: int = 400_000,
    turn_points: int = 1,
    use_heuristic: bool = True,
) -> SearchResult:
    """A* over flight states for the fewest turns, then the fewest actions, to ``goal_cell``.

    States are generated lazily by the rules' :meth:`FlightRules.expand`; the priority is
    (turns + the rules' lower bound, actions + a lower bound, the bound itself), so among
    equals the search goes deeper first. A state is dropped when the same state (the rules'
    :meth:`FlightRules.dedup`) was already reached in no more turns and actions: costs are
    compared as (turns, actions) pairs, which add and compare like numbers, so this is
    exact. ``max_states`` bounds the expansions (then: no plan, and the reason says so).

    Where the rules offer a sharper bound for the goal (:meth:`FlightRules.heading_bound`)
    it is used instead; it grows as the search needs it: a state is pushed with what the
    bound tells so far (never more than the truth), and when it comes off the heap the
    bound is first refined as deep as the state's, so it goes back with a larger bound if
    it needs more turns than that.
    """
    if rules.model is not model:
        rules = rules.with_model(model)
    start = rules.normal(start)
    goal = Goal(goal_cell, land, heading)
    if not model.grid.in_bounds(goal_cell):
        raise ArgumentError(f"goal {goal_cell}: outside the map")
    if at_goal(rules, start, goal):
        return SearchResult(Plan(start, goal, (), start, 0, 0), 0)
    refusal = rules.goal_refusal(goal) or _heading_refusal(rules, goal)
    if refusal:
        return SearchResult(None, 0, refusal)
    counter = itertools.count()
    start_key = start.key()
    guide = rules.heading_bound(goal, start, turn_points) if use_heuristic else None
    bound = rules.bound if guide is None else guide.bound

    b0 = bound(start_key, goal) if use_heuristic else (0, 0)
    if b0 is None:
        return SearchResult(None, 0, _OUT_OF_REACH)
    if b0[0] > max_turns:
        return SearchResult(None, 0, f"it needs at least {b0[0]} turns (limit {max_turns})")
    heap: list[tuple[int, int, int, int, Any, int, int]] = [
        (b0[0], b0[1], b0[0], next(counter), start_key, 0, 0)
    ]
    best: dict[Hashable, tuple[int, int, Key]] = {rules.dedup(start_key): (0, 0, start_key)}
    parent: dict[Key, tuple[Key, Any] | None] = {start_key: None}
    goals: list[tuple[Key, Any, Key]] = []
    best_goal: tuple[int, int] | None = None
    expanded = 0
    generated = 0
    pop, push = heapq.heappop, heapq.heappush
    dedup, expand = rules.dedup, rules.expand
    while heap:
        f_t, f_a, _, _, key, g_t, g_a = pop(heap)
        if isinstance(key, tuple) and key and key[0] == _GOAL:
            prev, spec, end = goals[key[1]]
            return SearchResult(
                _reconstruct(rules, start, goal, parent, prev, spec, end, g_a, expanded),
                expanded,
                generated=generated,
            )
        held = best.get(dedup(key))
        if held is None or held[2] != key or (held[0], held[1]) != (g_t, g_a):
            continue
        if g_t >= max_turns:
            continue
        if guide is not None:
            # Refine the bound as deep as this state's, then look again.
            b = guide.refine(key, f_t - g_t, f_t, max_turns)
            if b is None or g_t + b[0] > max_turns:
                if not g_t:  # the start itself: say why, as for its first bound
                    if b is None:
                        return SearchResult(None, 0, _OUT_OF_REACH)
                    return SearchResult(
                        None, 0, f"it needs at least {b[0]} turns (limit {max_turns})"
                    )
                continue
            f2 = (g_t + b[0], g_a + b[1])
            if f2 > (f_t, f_a):
                if best_goal is None or f2 < best_goal:
                    push(heap, (f2[0], f2[1], b[0], next(counter), key, g_t, g_a))
                continue
        if expanded >= max_states:
            return SearchResult(
                None,
                expanded,
                f"the search stopped after {expanded} flight states (limit {max_states}) "
                "without reaching the goal",
                generated,
            )
        expanded += 1
        t2 = g_t + 1
        for key2, acts, reached, spec in expand(key, goal, turn_points):
            generated += 1
            a2 = g_a + acts
            if reached:
                if best_goal is None or (t2, a2) < best_goal:
                    best_goal = (t2, a2)
                    goals.append((key, spec, key2))
                    push(heap, (t2, a2, 0, next(counter), (_GOAL, len(goals) - 1), t2, a2))
                continue
            if t2 >= max_turns:
                continue
            d = dedup(key2)
            held = best.get(d)
            if held is not None and (held[0], held[1]) <= (t2, a2):
                continue
            if use_heuristic:
                b = bound(key2, goal)
                if b is None:
                    continue
                h, ha = b
                if t2 + h > max_turns:
                    continue
            else:
                h = ha = 0
            if best_goal is not None and (t2 + h, a2 + ha) >= best_goal:
                continue
            best[d] = (t2, a2, key2)
            parent[key2] = (key, spec)
            push(heap, (t2 + h, a2 + ha, h, next(counter), key2, t2, a2))
    reason = (
        f"no sequence of turns within {max_turns} turns reaches it"
        if expanded
        else "the flier cannot move from its start"
    )
    return SearchResult(None, expanded, reason, generated)


def _heading_refusal(rules: FlightRules, goal: Goal) -> str | None:
    """Entering on a heading needs a passable cell behind the goal on that heading."""
    if goal.heading is None or goal.land:
        return None
    grid, geo = rules.model.grid, rules.geo
    for f in geo.faces_of(goal.heading):
        back = grid.step_heading(goal.cell, (f + 180) % 360)
        if grid.in_bounds(back) and rules.passable(back):
            return None
    c, r = goal.cell
    return f"no cell to enter {c},{r} from on heading {goal.heading} (the map's edge or walls)"


def _reconstruct(
    rules: FlightRules,
    start: FlightState,
    goal: Goal,
    parent: dict[Key, tuple[Key, Any] | None],
    prev: Key,
    spec: Any,
    end: Key,
    actions: int,
    expanded: int,
) -> Plan:
    chain: list[tuple[Key, Any]] = [(prev, spec)]
    link = parent[prev]
    while link is not None:
        chain.append(link)
        link = parent[link[0]]
    chain.reverse()
    choices = [rules.choice_of(k, s) for k, s in chain]
    records = fly_turns(rules, start, choices)
    return Plan(start, goal, tuple(records), state_of(end), actions, expanded)


def plan(
    model: MapModel,
    rules: FlightRules,
    start: FlightState,
    goal: Cell,
    *,
    land: bool = False,
    heading: int | None = None,
    max_turns: int = 40,
    max_states: int = 400_000,
    turn_points: int = 1,
) -> Plan | None:
    """The plan with the fewest turns, then the fewest actions, that enters ``goal`` (with
    ``land``: ends a move there and lands safely; with ``heading``: on that heading), or
    None when there is none within ``max_turns`` (and ``max_states`` expansions).

    The planner considers turns made at up to ``turn_points`` points of each move (default
    one; the rules and the simulator accept any number). Every plan replays in
    :func:`engine.flight.simulator.simulate` to exactly :attr:`Plan.end`.
    """
    return search(
        model,
        rules,
        start,
        goal,
        land=land,
        heading=heading,
        max_turns=max_turns,
        max_states=max_states,
        turn_points=turn_points,
    ).plan
