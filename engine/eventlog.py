"""The event log: where a log's files came from, reading a log back, replaying states."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from engine.errors import TacgridError
from engine.flight.model import state_from_dict
from engine.scenario import Scenario
from engine.systems.base import TokenState, exact


def _text(value: Any, what: str) -> str:
    if not isinstance(value, str):
        raise ValueError(f"{what} must be text, not {type(value).__name__}")
    return value


def token_state_from_dict(d: dict[str, Any]) -> TokenState:
    """A token state from its logged form; values of the wrong kind raise ValueError."""
    conditions = d.get("conditions", ())
    if not isinstance(conditions, list | tuple):
        raise ValueError("conditions must be a list")
    return TokenState(
        cell=(int(d["cell"][0]), int(d["cell"][1])) if d.get("cell") is not None else None,
        mode=_text(d.get("mode", "walk"), "mode"),
        conditions=frozenset(_text(c, "a condition") for c in conditions),
        encumbrance=_text(d.get("encumbrance", "none"), "encumbrance"),
        progress=exact(d.get("progress", 0)),
        counters=tuple(sorted((k, int(v)) for k, v in (d.get("counters") or {}).items())),
        flight=state_from_dict(d["flight"]) if d.get("flight") is not None else None,
    )


def file_digest(path: str) -> str:
    """The first 16 hex digits of the SHA-256 of a file's bytes (a scenario's ``digest``);
    a file just loaded is not read again."""
    from engine.sources import file_digest as digest

    return digest(path)


def log_sources(scenario: Scenario) -> dict[str, Any]:
    """What an event log's start event records of the files it was run on.

    The scenario path as given and absolute, the map's absolute path, and a digest of each
    file's bytes: ``tacgrid replay`` finds the files from another folder and refuses to
    replay on a scenario or map that has changed since.
    """
    import os

    return {
        "scenario": scenario.path,
        "scenario_abs": os.path.abspath(scenario.path),
        "digest": scenario.digest,
        "map": scenario.model.path,
        "map_digest": _digest_or_none(scenario.model.path),
    }


def _digest_or_none(path: str) -> str | None:
    try:
        return file_digest(path)
    except (OSError, ValueError, TacgridError):  # a model built in memory has no file
        return None


def replay_states(events: list[dict[str, Any]]) -> tuple[dict[str, TokenState], str | None]:
    """Rebuild every token's state from an event log alone (no rules, no dice)."""
    states: dict[str, TokenState] = {}
    outcome = None
    for ev in events:
        kind = ev.get("type")
        if kind == "start":
            states = {tid: token_state_from_dict(s) for tid, s in ev["tokens"].items()}
        elif kind == "move":
            states[ev["token"]] = replace(states[ev["token"]], cell=tuple(ev["path"][-1]))
        elif kind == "flight":
            f = state_from_dict(ev["state"])
            states[ev["token"]] = replace(states[ev["token"]], cell=f.cell, flight=f)
        elif kind == "state":
            states[ev["token"]] = token_state_from_dict(ev["state"])
        elif kind in ("token_add", "token_edit"):  # the GM's edits (the viewer)
            states[ev["token"]] = token_state_from_dict(ev["state"])
        elif kind == "token_remove":
            states.pop(ev["token"], None)
        elif kind == "place":
            states[ev["token"]] = replace(states[ev["token"]], cell=tuple(ev["cell"]))
        elif kind == "end":
            outcome = ev["outcome"]
    return states, outcome


def replay_doors(events: list[dict[str, Any]]) -> dict[int, bool]:
    """The doors opened or closed in play by the end of an event log (door id -> open)."""
    doors: dict[int, bool] = {}
    for ev in events:
        if ev.get("type") == "door":
            doors[int(ev["door"])] = bool(ev["open"])
    return doors


def read_log(path: str) -> list[dict[str, Any]]:
    from engine.errors import ArgumentError
    from engine.sources import MAX_LOG_BYTES, load_json, read_bytes

    # A regular file within the log cap; each line JSON with finite numbers, shallow.
    data = read_bytes(path, "event log", MAX_LOG_BYTES, ArgumentError)
    events = []
    for n, line in enumerate(data.splitlines(), 1):
        if not line.strip():
            continue
        event = load_json(line, f"{path}: line {n}", ArgumentError)
        if not isinstance(event, dict):
            raise ArgumentError(f"{path}: line {n} is not an event; give a log written by tacgrid")
        events.append(event)
    if not events or events[0].get("type") != "start":
        raise ArgumentError(
            f"{path}: not a tacgrid event log (no start event); write one with `tacgrid run ... --log FILE`"
        )
    return events
