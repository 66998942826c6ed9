"""The event log, the one module that reads it: where a log's files came from (and whether
they changed since, :func:`check_log_sources`), reading a log back checked so that
replaying it cannot fail half-way (:func:`read_log`), and the states and doors it replays
to (:func:`replay_states`, :func:`replay_doors`). The viewer, the replay reports and the API
all read logs here."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from engine.errors import ArgumentError, TacgridError
from engine.flight.model import state_from_dict
from engine.grid import Grid
from engine.scenario import Scenario
from engine.sources import MAX_LOG_BYTES, clip, load_json, read_bytes, regular_file
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
        toward=(int(d["toward"][0]), int(d["toward"][1])) if d.get("toward") is not None else None,
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


def _placed(ev: dict[str, Any]) -> list[tuple[Any, Any]]:
    """(token, cell) for each cell an event puts a token on (the cells a move passes
    through included); read with the same readers as :func:`replay_states`."""
    kind, tid = ev.get("type"), ev.get("token")
    states: list[tuple[Any, TokenState]] = []
    if kind == "start":
        states = [(t, token_state_from_dict(s)) for t, s in ev["tokens"].items()]
    elif kind in ("state", "token_add", "token_edit"):
        states = [(tid, token_state_from_dict(ev["state"]))]
    elif kind == "move":
        return [(tid, tuple(c)) for c in ev["path"]]
    elif kind == "flight":
        return [(tid, state_from_dict(ev["state"]).cell)]
    elif kind == "place":
        return [(tid, tuple(ev["cell"]))]
    out: list[tuple[Any, Any]] = []
    for t, st in states:
        out.append((t, st.cell))
        if st.flight is not None:
            out.append((t, st.flight.cell))
    return out


def check_log_cells(events: list[dict[str, Any]], path: str, grid: Grid | tuple[int, int]) -> None:
    """Every cell an event log puts a token on lies on ``grid`` (the map of the scenario it
    replays on, or its ``(width, height)``): a damaged log would draw and move tokens
    nowhere. ArgumentError names the first event, token and cell that do not."""
    width, height = grid if isinstance(grid, tuple) else (grid.width, grid.height)
    for n, ev in enumerate(events, 1):
        for tid, cell in _placed(ev):
            if cell is not None and not (0 <= cell[0] < width and 0 <= cell[1] < height):
                raise ArgumentError(
                    f"{path}: event {n}: token {clip(str(tid))} at {cell[0]},{cell[1]} is off "
                    f"the map ({width} x {height}); a damaged log: write it again "
                    "with `tacgrid run SCENARIO --run-seed N --log FILE`"
                )


#: The bytes of a .tmx map read for its size (its root element comes first).
_TMX_HEAD = 1 << 16


def log_map_size(scenario: str) -> tuple[int, int]:
    """The size in cells of the map of ``scenario`` (a scenario file that
    :func:`check_log_sources` found and checked), for :func:`check_log_cells` where nothing
    else of the map is needed (``replay --text`` and ``--json``): a finite .tmx map's from
    its root element's attributes (the first 64 KB of the file), any other map's by loading
    the scenario (its errors are one line, as ``run``'s)."""
    import re
    import xml.etree.ElementTree as ET

    from engine.sources import peek_bytes, read_head

    map_path = _scenario_map(scenario, peek_bytes(scenario, "scenario", 1 << 20))
    head = None
    if map_path is not None and map_path.lower().endswith(".tmx"):
        head = read_head(map_path, _TMX_HEAD)
    if head is not None:
        if b"<!ENTITY" not in head:  # (the map's reader refuses those: load it to say so)
            parser: ET.XMLPullParser[ET.Element] = ET.XMLPullParser(events=("start",))
            root: ET.Element | None = None
            try:
                parser.feed(head)
                for event in parser.read_events():
                    el = event[-1]
                    root = el if isinstance(el, ET.Element) else None
                    break
            except ET.ParseError:
                root = None
            if root is not None and root.tag == "map":
                attrs = root.attrib
                size = [attrs.get("width", ""), attrs.get("height", "")]
                whole = all(re.fullmatch(r"[1-9][0-9]{0,5}", v) for v in size)
                if whole and attrs.get("infinite", "0") == "0":
                    return int(size[0]), int(size[1])
    from engine.scenario import load_scenario

    grid = load_scenario(scenario).model.grid
    return grid.width, grid.height


#: Keys each kind of event must carry for `replay` (other kinds are skipped).
_EVENT_KEYS = {
    "start": ("tokens",),
    "turn": ("turn",),
    "move": ("token", "path"),
    "check": ("token", "cell", "what", "degree"),
    "state": ("token", "state"),
    "end": ("outcome",),
}


def read_log(path: str, *, viewer: bool = False) -> list[dict[str, Any]]:  # noqa: C901
    """An event log, checked so that replaying it cannot fail half-way.

    A damaged or foreign file (binary, a folder, JSON lines that are not events, events
    without their keys, token states that cannot be read) is one clear line.
    ``viewer``: the start event must also name its scenario file.
    """
    hint = "give an event log written by `tacgrid run SCENARIO --run-seed N --log FILE`"

    def bad(problem: str) -> ArgumentError:
        return ArgumentError(f"{path}: {problem}; {hint}")

    # A regular file (never a FIFO or a device) within the log cap (engine.sources).
    raw = read_bytes(path, "event log", MAX_LOG_BYTES, ArgumentError, fix=hint)
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise bad("not a text file") from None
    events: list[dict[str, Any]] = []
    tokens: set[str] = set()
    for n, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:  # finite numbers only, nesting bounded
            ev = load_json(line, "", ArgumentError)
        except ArgumentError:
            raise bad(f"line {n} is not JSON tacgrid reads") from None
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
                raise bad(f"line {n}: no token {clip(ev['token'])!r} in the start event")
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
    except (AttributeError, KeyError, TypeError, ValueError, IndexError, ArithmeticError) as exc:
        # What is left are token states with values of the wrong kind (read by sim).
        raise bad(
            f"a token state cannot be read ({type(exc).__name__}: {clip(str(exc))})"
        ) from None
    return events


def check_log_sources(  # noqa: C901
    events: list[dict[str, Any]], path: str, *, force: bool = False, need_scenario: bool = False
) -> tuple[str | None, list[str]]:
    """The scenario file an event log was run on, checked against the log's digests.

    The start event names the scenario as given and absolute (logs from before the
    absolute path: as given only); the first that exists is used. A log names a file on
    its own, so it opens one only with the digest it recorded: the digest is required
    and compared before anything parses the file (a log naming ``/etc/shadow`` is refused
    without a word of its content). Its bytes and its map's must match the log's
    ``digest`` and ``map_digest``: a log replayed on a changed file would draw or report
    moves on another map. A mismatch is one line naming the file that changed, or with
    ``force`` a warning (returned, for the caller to print), and then only for a file that
    still reads as a scenario. A scenario that cannot be found, or a log without its
    digest, is an error only when ``need_scenario`` (the window).
    Returns ``(scenario path or None, warnings)``.
    """
    start = events[0]
    given, absolute = start.get("scenario"), start.get("scenario_abs")
    digest, map_digest = start.get("digest"), start.get("map_digest")
    if not _is_digest(digest):
        if need_scenario:
            raise ArgumentError(
                f"{path}: its start event has no digest of its scenario, so tacgrid cannot "
                "tell the file is the one it was run on; replay with --text or --json"
            )
        return None, []
    names = [p for p in (absolute, given) if isinstance(p, str) and p]
    found = next((p for p in names if regular_file(p)), None)
    if found is None:
        if need_scenario:
            shown = " or ".join(clip(n, 200) for n in dict.fromkeys(names))
            raise ArgumentError(
                f"{path}: the scenario it was run on is not found "
                f"({shown or 'no scenario named'}); "
                "restore it, or replay with --text or --json"
            )
        return None, []
    import hashlib

    from engine.sources import peek_bytes

    problems = []
    # Read once here and handed on: the replay that follows loads these same bytes.
    raw = peek_bytes(found, "scenario", 1 << 20)
    now = hashlib.sha256(raw).hexdigest()[:16]
    if now != digest:
        problems.append(f"the scenario {clip(found, 200)} changed since the log was written")
        if force and _scenario_map(found, raw) is None:
            # Not a scenario at all: nothing of it is parsed further or quoted.
            raise ArgumentError(
                f"{path}: the file it names as its scenario ({clip(found, 200)}) is not the "
                "one it was run on and not a scenario; replay it with the files it was run on"
            )
    elif _is_digest(map_digest):
        map_path = _scenario_map(found, raw)
        if map_path is not None and regular_file(map_path):
            if file_digest(map_path) != map_digest:
                problems.append(f"the map {clip(map_path, 200)} changed since the log was written")
    if not problems:
        return found, []
    if not force:
        raise ArgumentError(
            f"{path}: {problems[0]}; replay it with the files it was run on, "
            "or add --force to replay anyway"
        )
    return found, [f"warning: {path}: {p}; replaying anyway (--force)" for p in problems]


def _is_digest(value: Any) -> bool:
    """A digest as logs record them: 16 lowercase hex digits."""
    return (
        isinstance(value, str) and len(value) == 16 and all(c in "0123456789abcdef" for c in value)
    )


def _scenario_map(scenario_path: str, raw: bytes) -> str | None:
    """The map file a scenario names, resolved as the scenario loader resolves it."""
    import os

    from engine.sources import load_yaml

    try:
        data = load_yaml(raw, scenario_path)
    except TacgridError:
        return None
    if not isinstance(data, dict) or not isinstance(data.get("map"), str):
        return None
    folder = os.path.dirname(os.path.abspath(scenario_path))
    return os.path.normpath(os.path.join(folder, data["map"]))


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
