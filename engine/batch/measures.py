"""Per-run measures a scenario names (``measures: [distance_at_end, checks_failed]``), each
defined from the run's event log alone, so a run replayed with ``run --run-seed N --log``
gives the same values from its log.

The names are a closed set (:data:`engine.edits.MEASURES`; a scenario naming another is
one line at load). Pursuers and quarries are the run's own (a token whose side is
``pursuer`` or whose policy hunts; ``quarry`` or a policy that flees: engine.sim). Each
token's state is its entry in the ``start`` event, replaced by each ``state`` event of it.

* ``distance_at_end``: the fewest cells between a pursuer's cell and a quarry's (a large
  token's anchor cell) in the states the log ends with, by the map's own distance (hex steps; on a square map its ``diagonals``
  rule); null where the run has no pursuer and quarry on the map.
* ``checks_failed``: the ``check`` events whose ``success`` is false (rolls of any token).
* ``turns_in_water``: the turns at whose end some quarry's state has mode ``swim`` (the end
  of turn t is the next ``turn`` event or the ``end`` event).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

#: Each measure's column type in a runs table: ``float`` (null allowed) or ``int``.
MEASURE_TYPES = {"distance_at_end": "float", "checks_failed": "int", "turns_in_water": "int"}


def ordered(names: Iterable[str]) -> tuple[str, ...]:
    """``names`` in the order of :data:`engine.edits.MEASURES`: a table's measure columns
    come in that order whatever order a scenario lists them in."""
    from engine.edits import MEASURES

    given = set(names)
    return tuple(m for m in MEASURES if m in given)


#: A grid's distance in cells between two cells.
DistanceFn = Callable[[tuple[int, int], tuple[int, int]], float]


def _cells_at_end(events: Iterable[dict[str, Any]]) -> dict[str, Any]:
    states: dict[str, Any] = {}
    for ev in events:
        kind = ev.get("type")
        if kind == "start":
            states.update(ev.get("tokens") or {})
        elif kind == "state":
            states[ev["token"]] = ev["state"]
    return states


def distance_at_end(
    events: list[dict[str, Any]], pursuers: list[str], quarries: list[str], distance: DistanceFn
) -> float | None:
    states = _cells_at_end(events)
    best: float | None = None
    for p in pursuers:
        for q in quarries:
            a = (states.get(p) or {}).get("cell")
            b = (states.get(q) or {}).get("cell")
            if a is None or b is None:
                continue
            d = distance((a[0], a[1]), (b[0], b[1]))
            best = d if best is None else min(best, d)
    return best


def checks_failed(events: list[dict[str, Any]]) -> int:
    return sum(1 for ev in events if ev.get("type") == "check" and ev.get("success") is False)


def turns_in_water(events: list[dict[str, Any]], quarries: list[str]) -> int:
    modes: dict[str, Any] = {}
    turn = 0
    wet = 0
    for ev in events:
        kind = ev.get("type")
        if kind in ("turn", "end") and turn > 0:
            wet += any(modes.get(q) == "swim" for q in quarries)
        if kind == "start":
            modes.update({t: s.get("mode") for t, s in (ev.get("tokens") or {}).items()})
        elif kind == "state":
            modes[ev["token"]] = ev["state"].get("mode")
        elif kind == "turn":
            turn = int(ev["turn"])
        elif kind == "end":
            turn = 0  # counted: nothing after the end is a turn
    return wet


def measure_run(
    names: Iterable[str],
    events: list[dict[str, Any]],
    pursuers: list[str],
    quarries: list[str],
    distance: DistanceFn,
) -> dict[str, Any]:
    """The named measures of one run from its event log (see the module's definitions)."""
    out: dict[str, Any] = {}
    for name in names:
        if name == "distance_at_end":
            d = distance_at_end(events, pursuers, quarries, distance)
            out[name] = None if d is None else float(d)
        elif name == "checks_failed":
            out[name] = checks_failed(events)
        elif name == "turns_in_water":
            out[name] = turns_in_water(events, quarries)
        else:
            raise KeyError(name)  # engine.scenario refuses an unknown name at load
    return out
