"""Fliers in the turn loop: momentum flight (RULES.md 6) for the tokens of a scenario.

A token flies with momentum when its rule system has flight rules for it
(:meth:`RuleSystem.flight`: a Mythmaster ``flyer``, a Speedpoints token with airspeed); the
generic system's fliers keep crossing air and gaps on the ground graph. Such a token's state
carries a :class:`~engine.flight.model.FlightState` (``TokenState.flight``), and each of its
turns is one flight turn:

1. its policy chooses the turn's :class:`~engine.flight.model.FlightChoice` (take off,
   speed actions, turns, climbs, landing);
2. the system's flight rules fly it (:func:`engine.flight.model.fly_turns`, the loop
   ``tacgrid fly`` and the planner use), so speed limits, turning costs, collisions and
   landings are the rules' own;
3. a ``flight`` event records the choice, the actions, the speed, the cells entered, the
   rules' events and the new flight state; a replay re-flies the choice and must land on
   that state (tests/test_flight_sim.py).

Policies: a flying pursuer ends its move on the quarry when it can, else steers for the
quarry's predicted cell by the planner's lower bound (turns still needed, from
:meth:`FlightRules.bound`), a budget of lookahead per turn; a flying quarry makes for a safe
exit or keeps the most cells between it and its pursuers; a waypoints flier flies through
its waypoints in order. Capture: a flier catches or is caught only at or below the
scenario's ``capture_altitude`` (or landed).
"""

from __future__ import annotations

from dataclasses import replace
from hashlib import blake2b
from typing import Any

import numpy as np

from engine.flight.model import (
    FlightChoice,
    FlightRules,
    FlightState,
    Goal,
    TurnRecord,
    fly_turns,
)
from engine.grid import Grid
from engine.mapmodel import MapModel
from engine.policies import Aim, Policy, TurnView
from engine.sim.flymoves import PILOT_CACHE, Move, _fastest, _moves, caught_next
from engine.sim.flyreach import CORNER_EPS, corner_digest, flight_turns
from engine.sim.idmemo import MISSING, IdMemo
from engine.systems.base import RuleSystem, Token
from engine.tokenspec import TokenSpec

#: Candidate moves a pilot weighs exactly (every turn point) once the target is this many
#: cells beyond its fastest move: the "budget" that makes an ending on the quarry exact.
NEAR_MARGIN = 2
#: Cells of reach arrays a fleeing flier reads a turn to weigh its moves by the region each
#: holds (the moves ending farthest from its pursuers first): every move on a map of up to
#: some 2 000 cells; a few on a big map.
HOLD_CELLS = 1 << 21
#: Candidate moves a pursuer near its quarry looks one turn further from (the per-turn
#: budget of lookahead): the best of them by the bound that leaves a move ending on the
#: quarry next turn (should it stay) wins.
LOOKAHEAD = 4
#: Stats mappings whose flight rules :func:`rules_for` keeps by identity.
RULES_KEPT = 1024


def flies_with_momentum(system: RuleSystem) -> bool:
    """Whether the system has flight rules (RULES.md 6) that the turn loop flies."""
    return system.flies_with_momentum()


#: Where :func:`rules_for` keeps, in its cache, the rules by the very stats mapping asked.
_BY_STATS = ("rules by stats",)


def rules_for(
    cache: dict[Any, Any], system: RuleSystem, model: MapModel, token: Token
) -> FlightRules | None:
    """The token's flight rules on ``model``, kept in ``cache`` by its stats (a field cache's:
    shared by every run of a batch), or None when it does not fly with momentum. Found
    first by the stats mapping itself (:class:`~engine.sim.idmemo.IdMemo`: a token keeps
    one mapping as it moves, and the policies ask every turn), else by its values."""
    memo: IdMemo[FlightRules | None] | None = cache.get(_BY_STATS)
    if memo is None:
        memo = cache[_BY_STATS] = IdMemo(RULES_KEPT, drop=RULES_KEPT // 2)
    got = memo.one(token.stats, None, MISSING)
    if got is not MISSING:
        return got
    key = tuple(sorted((k, str(v)) for k, v in token.stats.items()))
    if key not in cache:
        cache[key] = system.flight(token, model)
    memo.put_one(token.stats, None, cache[key])
    return cache[key]


def start_flight(rules: FlightRules, spec: TokenSpec) -> FlightState:
    """A flier's state at the start of a run: its spec's ``flight`` (heading, speed,
    altitude), by default on the ground facing up."""
    raw = spec.flight or {}
    return rules.start_state(
        spec.cell,
        int(raw.get("heading", 0)),
        int(raw.get("speed", 0)),
        altitude=int(raw.get("altitude", 0)),
    )


# --------------------------------------------------------------------------- the turn


def flown(rules: FlightRules, state: FlightState, choice: FlightChoice) -> TurnRecord:
    """``choice`` flown from ``state`` by the rules: the same every time (no dice), so kept
    in the rules' pilot cache."""
    key = ("flown", state, choice)
    rec = rules.pilot_cache.get(key)
    if rec is None:
        (rec,) = fly_turns(rules, state, [choice])
        _remember(rules.pilot_cache, key, rec)
    return rec


def fly_turn(
    system: RuleSystem,
    rules: FlightRules,
    token: Token,
    state: FlightState,
    choice: FlightChoice,
    dice: Any,
) -> tuple[TurnRecord, Token, FlightChoice]:
    """``choice`` flown from ``state``, with the checks it asks rolled on ``dice``
    (:meth:`RuleSystem.flight_rolls`; each roll an event in the dice's log): the turn's
    record, the token after the rolls and the choice flown. Where a roll makes the flier
    fall (a Speedpoints dive faster than is safe, its falling roll failed), the turn flown
    is the choice's climb or descent and nothing more: no space covered, no turn, no
    landing (docs/rules.md "Speedpoints in play: dives faster than safe"). The record
    holds the fall's event either way, with what the roll made of it."""
    rec = flown(rules, state, choice)
    if not any(ev.get("event") == "fall" for ev in rec.events):
        return rec, token, choice
    token, flies = system.flight_rolls(token, rec.events, dice)
    if not flies:
        choice = replace(choice, spaces=0, turns=(), land=False)
        rec = flown(rules, state, choice)
    events = tuple(
        {**ev, "fell": not flies} if ev.get("event") == "fall" else ev for ev in rec.events
    )
    return replace(rec, events=events), token, choice


def choose(
    view: TurnView,
    policy: Policy,
    spec: TokenSpec,
    token: Token,
    rules: FlightRules,
    state: FlightState,
    cap_alt: int,
) -> FlightChoice | None:
    """The policy's choice for this turn (None: a landed flier with nothing to do)."""
    aim = policy.aim(view, spec, token, state)
    if aim is None:
        if state.landed:
            return None
        return _cruise(rules, state)
    return _best(rules, state, aim, view.grid, cap_alt)


def _cruise(rules: FlightRules, state: FlightState) -> FlightChoice:
    """An airborne flier with no aim flies on: no speed action, straight ahead (a
    Speedpoints flier: its whole airspeed)."""
    return FlightChoice()


# --------------------------------------------------------------------------- weighing moves


def _best(
    rules: FlightRules, state: FlightState, aim: Aim, grid: Grid, cap_alt: int
) -> FlightChoice:
    """The move that best serves ``aim`` from ``state``: a pure function of the rules, the
    state, the aim and the scenario's capture altitude, kept in the rules' pilot cache (a
    batch's fliers face the same situations run after run)."""
    # The pursuers' turns by a digest of their bytes (a key of the map's size would be kept
    # per entry).
    hold = None if aim.hold is None else blake2b(aim.hold.tobytes(), digest_size=16).digest()
    corner = None if aim.corner is None else corner_digest(rules, aim.corner)
    team = (
        None
        if aim.team is None
        else blake2b(np.packbits(aim.team).tobytes(), digest_size=16).digest()
    )
    key = ("best", state, aim.goal, aim.catch, aim.reach, aim.threats, hold, corner, team, cap_alt)
    got = rules.pilot_cache.get(key)
    if got is None:
        got = _best_move(rules, state, aim, grid, cap_alt)
        _remember(rules.pilot_cache, key, got)
    return got


def _remember(cache: dict[Any, Any], key: Any, value: Any) -> None:
    """Keep ``value`` in a pilot cache, dropping its oldest half past :data:`PILOT_CACHE`."""
    if len(cache) >= PILOT_CACHE:
        for old in list(cache)[: PILOT_CACHE // 2]:
            del cache[old]
    cache[key] = value


def _best_move(
    rules: FlightRules, state: FlightState, aim: Aim, grid: Grid, cap_alt: int
) -> FlightChoice:
    near = False
    if aim.catch is not None:
        near = grid.steps(state.cell, aim.catch) <= _fastest(rules, state) + aim.reach + NEAR_MARGIN
    moves = list(_moves(rules, state, exact=near, target=aim.catch or aim.goal, reach=aim.reach))
    if not moves:
        return _cruise(rules, state)
    catches = _catches(grid, aim)
    if aim.catch is not None:
        catching = [m for m in moves if catches(m.cell) and m.altitude <= cap_alt]
        sure = [m for m in catching if not m.risky]
        if sure:
            return min(sure, key=lambda m: (m.actions, m.speed)).choice
        if catching:  # only stoops (dives faster than is safe): weighed against waiting
            p, _, _, _, stoop = min(
                (-_odds(rules, state, m), m.actions, m.speed, k, m) for k, m in enumerate(catching)
            )
            safe = [m for m in moves if not m.risky]
            if -p >= _wait_odds(rules, safe, aim, grid, cap_alt):
                return stoop.choice
    moves = [m for m in moves if not m.risky] or moves
    if aim.goal is None:  # fleeing
        threats = aim.threats

        def flee_key(m: Move) -> tuple[bool, int, int, int]:
            far = min(grid.steps(m.cell, t) for t in threats)
            return (m.altitude <= cap_alt, -far, -m.speed, m.actions)

        ranked = sorted(moves, key=flee_key)
        if aim.hold is None:
            return ranked[0].choice
        # Each move weighed asks a reach array of the map's size: on a big map only the
        # moves that end farthest from the pursuers are, within a budget of cells.
        hold = aim.hold
        weighed = ranked[: max(1, HOLD_CELLS // len(hold))]
        return max(weighed, key=lambda m: _held(rules, m, hold)).choice
    # To end a move on the goal the flier must come in slowly enough: the planner's bound
    # for a landing there (turns to end a move on the cell at a safe landing speed) weighs
    # speed against distance; a move whose next step leads away from the goal comes after.
    enter = Goal(aim.goal)
    settle = Goal(aim.goal, land=True) if rules.landable(aim.goal) else enter
    field = rules.steps_to(aim.goal)
    far = 1 << 20
    bound = rules.bound
    step_heading = grid.step_heading

    def chase_key(m: Move) -> tuple[int, int, int, int, int, int]:
        key = (m.cell, m.heading, m.speed, m.altitude, False, m.face, 0, 0)
        b = bound(key, enter)
        b2 = bound(key, settle)
        turns = b[0] if b is not None else far
        turns2 = b2[0] if b2 is not None else far
        d = field.get(m.cell, far)
        ahead = field.get(step_heading(m.cell, m.face), far)
        err = 0 if d == 0 else ahead - d + 1
        return (turns, turns2, err, d, max(0, m.altitude - cap_alt), m.actions)

    ranked = sorted(moves, key=chase_key)
    corner = _corner_cells(aim)
    if corner is not None and aim.catch is not None and _within_two(rules, state, aim, corner):
        # Two turns ahead: the quarry moves before this flier's next turn, to any cell it
        # gets to in a turn, and a quarry that knows where this flier can end keeps off
        # those cells where it can. So first a move after which its next turn reaches
        # every one of them (cornered: caught wherever it goes); else one after which it
        # reaches the quarry's cell (caught if it stays or its move fails a check); then
        # the fewest cells left out, the bound's order breaking ties. With a team, the
        # cells the others catch it on are theirs: this flier weighs the rest.
        cells = np.frombuffer(corner, dtype=np.int64)
        here = rules.model.grid.index(aim.catch)
        held = False
        if aim.team is not None:
            cells = cells[~aim.team[cells]]
            held = bool(aim.team[here])

        def corner_key(km: tuple[int, Move]) -> tuple[bool, bool, int, int]:
            k, m = km
            left, stays = _escapes(rules, m, cells, here, aim.reach, cap_alt)
            return (left > 0, not (stays or held), left, k)

        return min(enumerate(ranked), key=corner_key)[1].choice
    if near and aim.catch is not None:
        for m in ranked[:LOOKAHEAD]:
            nxt = FlightState(m.cell, m.heading, m.speed, m.altitude, False, m.face)
            for m2 in _moves(rules, nxt, exact=True, target=aim.catch, reach=aim.reach):
                if catches(m2.cell) and m2.altitude <= cap_alt:
                    return m.choice
    return ranked[0].choice


def _corner_cells(aim: Aim) -> bytes | None:
    """The cell indexes (int64 bytes, ascending) the quarry gets to within a turn
    (``aim.corner`` at most 1), None where the aim has none."""
    if aim.corner is None:
        return None
    return np.flatnonzero(aim.corner <= 1.0 + CORNER_EPS).astype(np.int64).tobytes()


def _within_two(rules: FlightRules, state: FlightState, aim: Aim, corner: bytes) -> bool:
    """Whether any cell the quarry gets to in a turn may be within the flier's reach after
    two moves (its fastest twice, the capture reach): else no move corners it and the
    bound alone orders them."""
    grid = rules.model.grid
    far = 2 * _fastest_after(rules, state) + aim.reach
    cells = np.frombuffer(corner, dtype=np.int64).tolist()
    return any(grid.steps(state.cell, grid.cell_of_index(i)) <= far for i in cells)


def _fastest_after(rules: FlightRules, state: FlightState) -> int:
    """The most cells a move of the flier's next turn may cover (after this one)."""
    top = getattr(rules, "top", None)
    if top is not None:
        return int(top)
    return _fastest(rules, state) * 2


def _escapes(
    rules: FlightRules, m: Move, cells: np.ndarray, here: int, reach: int, cap_alt: int
) -> tuple[int, bool]:
    """How many of ``cells`` (indexes) no move of the flier's next turn, from where move
    ``m`` leaves it, ends on (within ``reach``, at or below ``cap_alt``), and whether one
    ends on cell index ``here``: a risky move (a stoop that may fail) leaves every one."""
    if m.risky:
        return len(cells), False
    after = FlightState(m.cell, m.heading, m.speed, m.altitude, False, m.face)
    caught = caught_next(rules, after, cap_alt, reach)
    return int(len(cells) - np.count_nonzero(caught[cells])), bool(caught[here])


def _held(rules: FlightRules, m: Move, hold: Any) -> int:
    """How many cells a flier ending move ``m`` holds against pursuers whose turns to each
    cell are ``hold``: those it gets to (by its flight reach from where the move leaves it,
    :func:`~engine.sim.flyreach.flight_turns`) a whole turn before any of them, this turn's
    move counted; none where a pursuer can end its next move on the cell ``m`` ends on."""
    after = FlightState(m.cell, m.heading, m.speed, m.altitude, False, m.face)
    if not 1.0 < hold[rules.model.grid.index(m.cell)]:
        return 0  # a pursuer ends its next move where this one ends: nothing is held
    return int(np.count_nonzero(flight_turns(rules, after) + 1.0 < hold))


def _odds(rules: FlightRules, state: FlightState, m: Move) -> float:
    """The chance that move ``m`` from ``state`` is flown as chosen (its checks passed:
    a stoop's falling roll, :meth:`FlightRules.flies_odds`)."""
    return rules.flies_odds(flown(rules, state, m.choice).events) if m.risky else 1.0


def _wait_odds(rules: FlightRules, safe: list[Move], aim: Aim, grid: Grid, cap_alt: int) -> float:
    """What a pursuer that could catch only by a stoop gets by waiting instead: of the
    :data:`LOOKAHEAD` safe moves that end nearest the quarry's predicted cell
    (``aim.goal``, else where it is), the best chance of a catch there next turn (1 for a
    move ending on it within reach and low enough that asks no roll, else the best
    stoop's odds; 0 where none catches). A stoop is flown where its own odds are no
    worse: a sure catch next turn is worth more than an even stoop now, an even stoop
    next turn no more than one now."""
    target = aim.goal if aim.goal is not None else aim.catch
    if target is None or not safe:
        return 0.0
    aim2 = Aim(target, target, aim.reach)
    catches = _catches(grid, aim2)
    best = 0.0
    for m in sorted(safe, key=lambda m: (grid.steps(m.cell, target), m.actions))[:LOOKAHEAD]:
        nxt = FlightState(m.cell, m.heading, m.speed, m.altitude, False, m.face)
        for m2 in _moves(rules, nxt, exact=True, target=target, reach=aim.reach):
            if catches(m2.cell) and m2.altitude <= cap_alt:
                best = max(best, _odds(rules, nxt, m2))
                if best >= 1.0:
                    return best
    return best


def _catches(grid: Any, aim: Aim) -> Any:
    """Whether a move ending in a cell catches ``aim.catch`` (within ``aim.reach``)."""
    catch, reach = aim.catch, aim.reach
    if catch is None:
        return lambda cell: False
    if reach == 0:
        return catch.__eq__
    return lambda cell: grid.steps(cell, catch) <= reach
