"""The flight simulator: a list of choices flown turn by turn under a system's rules, on a map.

Every choice becomes an event; what the turn brought (collisions, unsafe landings, falls)
follows it. The turn loop itself is :func:`engine.flight.model.fly_turns`, which the planner
(``engine.flight.planner``, a sibling layer that may not import this one) replays its plans
with too, so a plan and its simulation cannot disagree. :func:`flight_rules` asks a rule
system for a token's flight rules, which is why this module sits above the systems.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from engine.errors import ArgumentError
from engine.flight.model import FlightChoice, FlightRules, FlightState, TurnRecord, fly_turns
from engine.mapmodel import MapModel

if TYPE_CHECKING:
    from engine.systems.base import RuleSystem, Token


def simulate(
    model: MapModel,
    rules: FlightRules,
    state: FlightState,
    choices: Iterable[FlightChoice],
    *,
    downs: Iterable[int] = (),
) -> list[TurnRecord]:
    """Fly ``choices`` turn by turn from ``state``; one :class:`TurnRecord` per turn, its
    events the choice, then whatever the turn brought (collisions, landings, falls).
    ``downs``: turns (1-based) at whose start the flier is tripped or downed (systems
    without such a rule refuse them).

    Illegal choices (too many actions, a turn past the move's end, ...) raise
    :class:`~engine.errors.ArgumentError` naming the turn.
    """
    if rules.model is not model:
        rules = rules.with_model(model)
    return fly_turns(rules, state, choices, downs=downs)


def flight_rules(system: RuleSystem, token: Token, model: MapModel) -> FlightRules:
    """The token's flight rules on ``model``, or one clear line saying why it cannot fly."""
    rules = system.flight(token, model)
    if rules is None:
        reason = system.flight_refusal(token)
        if reason:
            raise ArgumentError(reason)
        raise ArgumentError(
            role="system",
            given=system.name,
            problem="this system has no flight rules (docs/flight.md: mythmaster and speedpoints fly)",
        )
    return rules
