"""The ``replay --text/--json`` reports (an event log, read by :mod:`engine.eventlog`).

An event log is what ``tacgrid run SCENARIO --run-seed N --log FILE`` writes; the viewer
replays it in a window, these reports turn by turn.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from fractions import Fraction
from typing import Any

from engine import systems
from engine.errors import TacgridError, printable
from engine.sources import clip
from engine.systems.base import RuleSystem


def replay_report(events: list[dict[str, Any]]) -> dict[str, Any]:
    """The ``replay --json`` document: per turn the moves and checks, the outcome, and the
    final token states (replayed from the log's events)."""
    from engine.eventlog import replay_states

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


def format_replay(events: list[dict[str, Any]]) -> str:
    """The ``replay --text`` text: a heading with the outcome, then turn by turn one line
    per thing that happened, each starting ``turn N:``: who rolled what against what and
    what it did, who moved where, flights, doors, and the GM's edits of a session.

    >>> print(format_replay([
    ...     {"type": "start", "scenario": "chase.yaml", "seed": 7, "system": "d6",
    ...      "tokens": {"quarry": {"cell": [3, 4], "conditions": []}}},
    ...     {"type": "turn", "turn": 1},
    ...     {"type": "roll", "token": "quarry", "expression": "3D+2", "total": 14},
    ...     {"type": "check", "token": "quarry", "cell": [5, 4], "degree": "success",
    ...      "what": "move all_out walk: running 3D+2 vs easy->moderate", "target": "DN 13",
    ...      "success": True},
    ...     {"type": "move", "token": "quarry", "path": [[3, 4], [4, 4], [5, 4]], "turns": "1/2"},
    ...     {"type": "end", "outcome": "escape", "turn": 1, "cell": [5, 4], "by": "quarry"}]))
    chase.yaml seed 7 (d6): escape by quarry at 5,4 on turn 1
      turn 1: quarry rolls running 3D+2 = 14 vs DN 13 (moderate, all-out): success, enters 5,4
      turn 1: quarry moves 3,4 -> 5,4: 2 cells in 0.5 turn
      turn 1: escape: quarry escapes at 5,4
    """
    # Each line escaped on its own: what the log holds keeps to its line.
    return "\n".join(printable(line) for line in _Narrator(events).lines())


# --------------------------------------------------------------------------- the narration

#: Events that end what a check's token does next (a new turn, the run's end).
_BOUNDS = ("turn", "end")


def _text(value: Any) -> str:
    """A value from the log as one line of text (the log is not trusted)."""
    return clip(value if isinstance(value, str) else json.dumps(value, default=str))


def _cell(value: Any) -> str:
    if (
        isinstance(value, list | tuple)
        and len(value) == 2
        and all(isinstance(v, int) and not isinstance(v, bool) for v in value)
    ):
        return f"{value[0]},{value[1]}"
    return _text(value)


def _mapping(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _sequence(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _conditions(state: Any) -> set[str]:
    got = state.get("conditions") if isinstance(state, dict) else None
    return {c for c in got if isinstance(c, str)} if isinstance(got, list) else set()


def _words(names: Iterable[str]) -> str:
    return ", ".join(clip(n.replace("_", " ")) for n in sorted(names))


def system_of(events: list[dict[str, Any]]) -> type[RuleSystem]:
    """The rule system a log was run with, which words its own checks (a log naming a
    system this install does not have reads with the common wording)."""
    name = events[0].get("system") if events else None
    if isinstance(name, str):
        try:
            found: type[RuleSystem] = systems.get(name)
        except TacgridError:
            pass
        else:
            return found
    return RuleSystem


def degree_text(degree: Any, system: type[RuleSystem] = RuleSystem) -> str:
    """A check's degree in words, as its system says it (``critical success``; D6's
    ``failed by 7-10``)."""
    if not isinstance(degree, str):
        return _text(degree)
    return clip(system.describe_degree(degree))


def _effect(system: type[RuleSystem], what: Any, degree: Any) -> str:
    """:meth:`RuleSystem.describe_effect` of a check event ("" for a malformed one)."""
    if not isinstance(what, str) or not isinstance(degree, str):
        return ""
    return system.describe_effect(clip(what), clip(degree))


def check_words(
    what: Any, target: Any, system: type[RuleSystem] = RuleSystem
) -> tuple[str, str, str]:
    """(skill, against, detail) of a check event, as its system words it: ``("running",
    "DN 13", "moderate, all-out")`` for D6's ``move all_out walk: running 3D+2 vs
    easy->moderate``; ``("swimming", "21", "moderate")`` for Mythmaster's ``swimming
    (moderate)`` against ``21C: 2d10+9 >= 21``. A wording the system does not know is
    kept whole."""
    what = _text(what) if not isinstance(what, str) else clip(what)
    target = _text(target) if not isinstance(target, str) else clip(target)
    return system.describe_check(what, target)


def _roll_text(roll: dict[str, Any]) -> str:
    text = f"{_text(roll.get('expression', '?'))} = {_text(roll.get('total', '?'))}"
    note = roll.get("note")
    return text + (f" ({clip(note)})" if isinstance(note, str) and note else "")


def _turns(value: Any) -> str:
    """A move's time (``"1143/1250"`` or a number) as a decimal of a turn."""
    try:
        if isinstance(value, bool):
            raise ValueError
        got = float(Fraction(value)) if isinstance(value, str | int) else float(value)
    except (TypeError, ValueError, ZeroDivisionError, OverflowError):
        return _text(value)
    return f"{got:.2f}".rstrip("0").rstrip(".") if got == got else _text(value)


def _actions(actions: Any) -> str:
    """A flight's actions, repeats counted: ``take off, accelerate x2``."""
    if not isinstance(actions, list) or not actions:
        return ""
    out: list[str] = []
    counts: list[int] = []
    for a in actions:
        word = _text(a).replace("_", " ")
        if out and out[-1] == word:
            counts[-1] += 1
        else:
            out.append(word)
            counts.append(1)
    return ", ".join(w if n == 1 else f"{w} x{n}" for w, n in zip(out, counts, strict=True))


class _Narrator:
    """Walks an event log once, keeping each token's cell and conditions, and says each
    event in words (a check with a look ahead at the move it led to)."""

    def __init__(self, events: list[dict[str, Any]]) -> None:
        self.events = events
        self.system = system_of(events)
        self.label = "before turn 1"
        self.cells: dict[str, Any] = {}
        self.conds: dict[str, set[str]] = {}
        self.rolls: dict[str, list[dict[str, Any]]] = {}
        self.told: dict[str, set[str]] = {}  # conditions a check already said, this turn
        self.altitude: dict[str, Any] = {}  # a flier's last altitude
        self.acts: dict[str, str] = {}  # the acts a token's state last said (act_NAME counters)
        self.out: list[str] = []
        self.said_in_turn = 0

    def lines(self) -> list[str]:
        start = self.events[0]
        for tid, state in (start.get("tokens") or {}).items():
            self.cells[tid] = state.get("cell") if isinstance(state, dict) else None
            self.conds[tid] = _conditions(state)
            flight = state.get("flight") if isinstance(state, dict) else None
            self.altitude[tid] = flight.get("altitude") if isinstance(flight, dict) else None
        for i, ev in enumerate(self.events[1:], 1):
            try:
                self.event(i, ev)
            except (AttributeError, KeyError, TypeError, ValueError, IndexError, ArithmeticError):
                self.say(f"a {_text(ev.get('type'))} event tacgrid cannot read")
        self.flush_rolls()
        self.close_turn()
        return [self.heading(), *("  " + line for line in self.out)]

    def heading(self) -> str:
        start = self.events[0]
        system = start.get("system")
        head = f"{_text(start.get('scenario'))} seed {_text(start.get('seed'))}"
        head += f" ({_text(system)})" if system else ""
        end = next((e for e in reversed(self.events) if e.get("type") == "end"), None)
        if end is None:
            return f"{head}: unfinished"
        how = _text(end.get("outcome"))
        if end.get("by") is not None:
            how += f" by {_text(end['by'])}"
        if end.get("cell") is not None:
            how += f" at {_cell(end['cell'])}"
        if end.get("turn") is not None:
            how += f" on turn {_text(end['turn'])}"
        return f"{head}: {how}"

    def say(self, text: str) -> None:
        self.out.append(f"{self.label}: {text}")
        self.said_in_turn += 1

    def close_turn(self) -> None:
        if self.label.startswith("turn ") and not self.said_in_turn:
            self.say("no one moves")

    def flush_rolls(self, tid: str | None = None) -> None:
        """Rolls no check followed (a D6 collision, a stamina roll): each on its own."""
        for who in [tid] if tid is not None else list(self.rolls):
            for roll in self.rolls.pop(who, []):
                decided = roll.get("decided")
                tail = f": {degree_text(decided, self.system)}" if decided else ""
                self.say(f"{clip(who)} rolls {_roll_text(roll)}{tail}")

    def event(self, i: int, ev: dict[str, Any]) -> None:  # noqa: C901
        kind = ev.get("type")
        tid = ev.get("token")
        if kind == "roll":
            self.rolls.setdefault(_text(tid) if not isinstance(tid, str) else tid, []).append(ev)
            return
        if isinstance(tid, str) and kind != "check" and tid in self.rolls:
            self.flush_rolls(tid)
        if kind == "turn":
            self.flush_rolls()
            self.close_turn()
            self.label = f"turn {_text(ev.get('turn'))}"
            self.said_in_turn = 0
            self.told = {}
        elif kind == "check":
            self.check(i, ev)
        elif kind == "move":
            self.move(ev)
        elif kind == "state":
            self.state(ev)
        elif kind == "flight":
            self.flight(ev)
        elif kind == "door":
            self.door(ev)
        elif kind == "held" and isinstance(tid, str):
            self.say(f"{tid} does not move: {_text(ev.get('why'))}")
        elif kind == "end":
            self.flush_rolls()
            self.end(ev)
        elif kind in ("token_add", "token_edit", "token_remove", "place", "order", "token_pace"):
            self.gm(kind, ev)

    # ---------------------------------------------------------------- checks and moves

    def _next_of(self, i: int, tid: str) -> tuple[list[Any] | None, set[str] | None]:
        """The path ``tid`` goes next (a move or a flight) after event ``i`` in this turn,
        and its conditions after that."""
        path: list[Any] | None = None
        conds: set[str] | None = None
        for ev in self.events[i + 1 :]:
            kind = ev.get("type")
            if kind in _BOUNDS:
                break
            if ev.get("token") != tid:
                continue
            if kind in ("move", "flight") and path is None and isinstance(ev.get("path"), list):
                path = ev["path"]
            elif kind == "state" and isinstance(ev.get("state"), dict):
                conds = _conditions(ev["state"])
                if path is not None:
                    break
        return path, conds

    def check(self, i: int, ev: dict[str, Any]) -> None:
        tid = ev["token"]
        rolls = self.rolls.pop(tid, [])
        skill, against, detail = check_words(ev.get("what"), ev.get("target"), self.system)
        dice = ", then ".join(_roll_text(r) for r in rolls)
        verb = f"rolls {skill} {dice}" if dice else f"checks {skill}"
        text = f"{tid} {verb} vs {against}" + (f" ({detail})" if detail else "")
        text += f": {degree_text(ev.get('degree'), self.system)}"
        effect = _effect(self.system, ev.get("what"), ev.get("degree"))
        if effect:
            text += f" ({effect})"
        path, after = self._next_of(i, tid)
        cell = ev.get("cell")
        if ev.get("success") is True:
            if path is None or cell in path:
                text += f", enters {_cell(cell)}"
            else:
                text += f", goes on toward {_cell(cell)}"
        else:
            stop = path[-1] if path else self.cells.get(tid)
            if path is not None and cell in path[1:] and cell != stop:
                text += f", ends its move at {_cell(stop)}"  # a failure that still moves on
            else:
                text += f", stops at {_cell(stop)}" + (
                    f" short of {_cell(cell)}" if cell is not None and cell != stop else ""
                )
            gained = (after or set()) - self.conds.get(tid, set())
            if gained:
                text += f" ({_words(gained)})"
                self.told.setdefault(tid, set()).update(gained)
        self.say(text)

    def move(self, ev: dict[str, Any]) -> None:
        tid, path = ev["token"], ev["path"]
        steps = len(path) - 1
        time = f" in {_turns(ev['turns'])} turn" if "turns" in ev else ""
        self.say(
            f"{tid} moves {_cell(path[0])} -> {_cell(path[-1])}: "
            f"{steps} cell{'s' if steps != 1 else ''}{time}"
        )
        self.cells[tid] = path[-1]

    def state(self, ev: dict[str, Any]) -> None:
        tid, state = ev["token"], ev["state"]
        now = _conditions(state)
        before = self.conds.get(tid, set())
        gained = now - before - self.told.get(tid, set())
        lost = before - now
        parts = []
        if gained:
            parts.append(f"now {_words(gained)}")
        if lost:
            parts.append(f"no longer {_words(lost)}")
        if parts:
            self.say(f"{clip(tid)} is {'; '.join(parts)}")
        self.conds[tid] = now
        if "cell" in state:
            self.cells[tid] = state["cell"]
        self._acts(tid, _mapping(state.get("counters")))

    def _acts(self, tid: str, counters: dict[str, Any]) -> None:
        """Say a token's acts (its actions besides moving: ``act_NAME`` counters, RuleSystem
        .with_acts) when they change: ``a also takes attack each turn``."""
        named = [
            f"{_text(k[4:])}" + (f" x{_text(n)}" if n != 1 else "")
            for k, n in sorted(counters.items())
            if isinstance(k, str) and k.startswith("act_") and n
        ]
        acts = ", ".join(named)
        if acts != self.acts.get(tid, ""):
            self.say(
                f"{clip(tid)} also takes {acts} each turn"
                if acts
                else f"{clip(tid)} takes no other action"
            )
        self.acts[tid] = acts

    def flight(self, ev: dict[str, Any]) -> None:
        tid = _text(ev.get("token"))
        path = _sequence(ev.get("path"))
        state = _mapping(ev.get("state"))
        if len(path) > 1:
            where = f"{_cell(path[0])} -> {_cell(path[-1])}"
        else:
            where = f"in place at {_cell(path[0])}" if path else "in place"
        text = f"{tid} flies {where}"
        actions = _actions(ev.get("actions"))
        text += f": {actions}" if actions else ""
        facts = [f"{k} {_text(state[k])}" for k in ("speed", "heading") if k in state]
        # Altitude where the flier has one (Speedpoints): not a Mythmaster flier's constant 0.
        altitude, before = state.get("altitude"), self.altitude.get(tid)
        if altitude is not None and (altitude != 0 or before not in (None, 0)):
            facts.append(f"altitude {_text(altitude)} m")
        self.altitude[tid] = altitude
        if state.get("landed") is True:
            facts.append("landed")
        text += f" ({', '.join(facts)})" if facts else ""
        for happened in _sequence(ev.get("events")):
            text += f"; {self._flight_event(happened)}"
        self.say(text)
        if path:
            self.cells[tid] = path[-1]

    @staticmethod
    def _flight_event(ev: Any) -> str:
        if not isinstance(ev, dict):
            return _text(ev)
        kind = ev.get("event")
        if kind == "landed":
            return f"lands at {_cell(ev.get('cell'))}"
        if kind == "collision":
            stopped = ev.get("stopped_at")
            return f"hits {_text(ev.get('what'))}" + (
                f", stops at {_cell(stopped)}" if stopped is not None else ""
            )
        if kind == "cannot_land":
            return f"cannot land: {_text(ev.get('what'))}"
        if kind == "fall":
            band = ev.get("band")
            return f"falls: {_text(ev.get('what'))}" + (f" ({_text(band)})" if band else "")
        what = ev.get("what")
        return f"{_text(kind)}" + (f": {_text(what)}" if what is not None else "")

    # ---------------------------------------------------------------- the table

    def door(self, ev: dict[str, Any]) -> None:
        name = ev.get("name")
        label = f"door {_text(ev.get('door'))}" + (f" '{_text(name)}'" if name else "")
        self.say(f"{label} {'opens' if ev.get('open') is True else 'closes'}")

    def gm(self, kind: str, ev: dict[str, Any]) -> None:
        tid = _text(ev.get("token"))
        if kind == "order":
            order = ev.get("order")
            names = ", ".join(_text(t) for t in order) if isinstance(order, list) else "?"
            why = ev.get("why")
            self.say(f"turn order: {names}" + (f" ({_text(why)})" if why else ""))
            return
        if kind == "place":
            self.say(f"GM places {tid} at {_cell(ev.get('cell'))}")
            self.cells[tid] = ev.get("cell")
            return
        if kind == "token_remove":
            self.say(f"GM removes {tid}")
            return
        if kind == "token_pace":
            pace = ev.get("pace")
            self.say(f"GM sets {tid}'s pace to {_text(pace) if pace else 'its default'}")
            return
        state = _mapping(ev.get("state"))
        side = ev.get("side")
        what = "adds" if kind == "token_add" else "edits"
        at = f" at {_cell(state['cell'])}" if state.get("cell") is not None else ""
        self.say(f"GM {what} {tid}" + (f" ({_text(side)})" if side else "") + at)
        self.cells[tid] = state.get("cell")
        self.conds[tid] = _conditions(state)

    def end(self, ev: dict[str, Any]) -> None:
        outcome, by, cell = ev.get("outcome"), ev.get("by"), ev.get("cell")
        at = f" at {_cell(cell)}" if cell is not None else ""
        if outcome == "capture" and by is not None:
            text = f"{_text(by)} catches its quarry{at}"
        elif outcome == "escape" and by is not None:
            text = f"{_text(by)} escapes{at}"
        elif outcome == "timeout":
            text = "the turn limit is reached"
        else:
            text = (f"by {_text(by)}" if by is not None else "") + at
        self.say(f"{_text(outcome)}: {text.strip()}" if text.strip() else _text(outcome))
