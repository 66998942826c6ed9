"""The ``replay --text/--json`` reports, and reading an event log so that replaying it is safe.

An event log is what ``tacgrid run SCENARIO --run-seed N --log FILE`` writes; the viewer
replays it in a window, these reports turn by turn.
"""

from __future__ import annotations

import json
from typing import Any

from engine.errors import ArgumentError

#: Keys each kind of event must carry for `replay` (other kinds are skipped).
_EVENT_KEYS = {
    "start": ("tokens",),
    "turn": ("turn",),
    "move": ("token", "path"),
    "check": ("token", "cell", "what", "degree"),
    "state": ("token", "state"),
    "end": ("outcome",),
}


def read_event_log(path: str, *, viewer: bool = False) -> list[dict[str, Any]]:
    """An event log, checked so that replaying it cannot fail half-way.

    ``engine.sim.read_log`` trusts its file; a damaged or foreign one (binary, a folder,
    JSON lines that are not events, events without their keys) is one clear line here.
    ``viewer``: the start event must also name its scenario file.
    """
    from engine.sim import replay_states

    hint = "give an event log written by `tacgrid run SCENARIO --run-seed N --log FILE`"

    def bad(problem: str) -> ArgumentError:
        return ArgumentError(f"{path}: {problem}; {hint}")

    try:
        with open(path, "rb") as fh:
            text = fh.read().decode("utf-8")
    except FileNotFoundError:
        raise ArgumentError(f"{path}: event log not found") from None
    except IsADirectoryError:
        raise bad("is a folder, not an event log") from None
    except UnicodeDecodeError:
        raise bad("not a text file") from None
    except OSError as exc:
        raise bad(f"cannot read ({exc.strerror})") from None
    except ValueError:  # a NUL byte in the path (possible only through the Python API)
        raise bad("not a usable file name") from None
    events: list[dict[str, Any]] = []
    tokens: set[str] = set()
    for n, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            ev = json.loads(line)
        except ValueError:
            raise bad(f"line {n} is not JSON") from None
        if not isinstance(ev, dict) or not isinstance(ev.get("type"), str):
            raise bad(f"line {n} is not an event (a JSON object with a type)")
        kind = ev["type"]
        if not events and kind != "start":
            raise bad("not a tacgrid event log (no start event)")
        missing = [k for k in _EVENT_KEYS.get(kind, ()) if k not in ev]
        if viewer and kind == "start" and not isinstance(ev.get("scenario"), str):
            missing.append("scenario")
        if missing:
            raise bad(f"line {n}: a {kind} event without {', '.join(missing)}")
        if kind == "start":
            if not isinstance(ev["tokens"], dict) or not all(
                isinstance(s, dict) for s in ev["tokens"].values()
            ):
                raise bad(f"line {n}: the start event's tokens are not token states")
            tokens = set(ev["tokens"])
        elif kind in ("move", "state", "check"):
            if not isinstance(ev["token"], str) or (ev["token"] not in tokens and kind != "state"):
                raise bad(f"line {n}: no token {ev['token']!r} in the start event")
            tokens.add(ev["token"])
            if kind == "move" and not _is_path(ev["path"]):
                raise bad(f"line {n}: the move's path is not a list of [col, row] cells")
            if kind == "state" and not isinstance(ev["state"], dict):
                raise bad(f"line {n}: the state event's state is not a token state")
        events.append(ev)
    if not events:
        raise bad("not a tacgrid event log (no start event)")
    try:
        replay_states(events)
    except (AttributeError, KeyError, TypeError, ValueError, IndexError, ZeroDivisionError) as exc:
        # What is left are token states with values of the wrong kind (read by sim).
        raise bad(f"a token state cannot be read ({type(exc).__name__}: {exc})") from None
    return events


def _is_path(path: Any) -> bool:
    return (
        isinstance(path, list)
        and bool(path)
        and all(
            isinstance(c, list)
            and len(c) == 2
            and all(isinstance(v, int) and not isinstance(v, bool) for v in c)
            for c in path
        )
    )


def replay_report(events: list[dict[str, Any]]) -> dict[str, Any]:
    """The ``replay --json`` document: per turn the moves and checks, the outcome, and the
    final token states (replayed from the log's events)."""
    from engine.sim import replay_states

    turns: list[dict[str, Any]] = []
    for ev in events:
        if ev["type"] == "turn":
            turns.append({"turn": ev["turn"], "moves": [], "checks": []})
        elif ev["type"] == "move" and turns:
            turns[-1]["moves"].append({"token": ev["token"], "path": ev["path"]})
        elif ev["type"] == "check" and turns:
            turns[-1]["checks"].append({k: ev[k] for k in ("token", "cell", "what", "degree")})
    states, outcome = replay_states(events)
    return {
        "scenario": events[0].get("scenario"),
        "seed": events[0].get("seed"),
        "turns": turns,
        "outcome": outcome,
        "final": {k: v.to_dict() for k, v in states.items()},
    }


def format_replay(doc: dict[str, Any]) -> str:
    """The ``replay --text`` text: the outcome, then one line a turn (moves, failed checks)."""
    lines = [f"{doc['scenario']} seed {doc['seed']}: {doc['outcome'] or 'unfinished'}"]
    for t in doc["turns"]:
        moves = "; ".join(
            f"{m['token']} -> {m['path'][-1][0]},{m['path'][-1][1]}" for m in t["moves"]
        )
        fails = [
            c
            for c in t["checks"]
            if c["degree"] not in ("success", "extreme_success", "critical_success")
        ]
        extra = f"  ({len(fails)} failed checks)" if fails else ""
        lines.append(f"  turn {t['turn']}: {moves}{extra}")
    return "\n".join(lines)
