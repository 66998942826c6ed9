"""GM sessions: one JSON file holding a viewer's whole table, to close and come back to.

A session file (``.tacgrid`` or ``.json``) holds the source (a scenario or a bare map, and
the rule settings), the run's seed, the event log, the present state (tokens with their
stats and state, specs, turn order, round, dice position), the undo and redo history,
and the view (camera, selection, the "prefer safe below" threshold). ``tacgrid view
SESSION`` resumes it where it was left; the undo history comes back with it.

Files are written whole or not at all (:mod:`engine.safeio`) and read through
:mod:`engine.sources` (a regular file within a size cap, finite JSON, bounded depth). After
each event the viewer writes the session to a sibling autosave file (``NAME.autosave``),
offered on the next open: a crash loses nothing but the move being made.

No pygame here: the format is data, testable without a window.
"""

from __future__ import annotations

import base64
import binascii
import math
import os
import zlib
from dataclasses import dataclass, field, replace
from types import MappingProxyType
from typing import Any

from engine.errors import ArgumentError, TacgridError
from engine.eventlog import token_state_from_dict
from engine.exact import jsonable
from engine.grid import Cell
from engine.scenario import Scenario, TokenSpec
from engine.sim import Simulation, Snapshot
from engine.sources import clip, file_digest, regular_file
from engine.systems.base import Token

FORMAT = "tacgrid-session"
VERSION = 1
#: What ``tacgrid view`` takes for a session file.
SESSION_SUFFIXES = (".tacgrid", ".json")
AUTOSAVE_SUFFIX = ".autosave"


@dataclass
class Checkpoint:
    """One undo (or redo) point of the viewer: the simulation, the fliers in flight mode,
    the tokens moved this round; a redo point also carries the events it takes back
    (``tail``, from event ``tail_from`` on)."""

    snap: Snapshot
    flying: dict[str, Any] = field(default_factory=dict)
    moved: frozenset[str] = frozenset()
    tail_from: int | None = None
    tail: list[dict[str, Any]] | None = None


def is_session_path(source: str) -> bool:
    """A ``.tacgrid`` file, or a ``.json`` one that says it is a session (a Tiled map may
    be ``.json`` too)."""
    low = source.lower()
    if low.endswith((".tacgrid", ".tacgrid" + AUTOSAVE_SUFFIX)):
        return True
    if low.endswith(".json"):
        from engine.sources import read_head

        head = read_head(source, 256) or b""
        return FORMAT.encode() in head
    return False


def recovery_for(saved: str) -> str | None:
    """The autosave beside ``saved`` when it is newer than ``saved`` (or ``saved`` is not
    there): a session that ended without Ctrl+S."""
    auto = autosave_path(saved)
    try:
        t_auto = os.path.getmtime(auto)
    except OSError:
        return None
    try:
        return auto if t_auto >= os.path.getmtime(saved) else None
    except OSError:
        return auto


def autosave_path(session: str) -> str:
    return session + AUTOSAVE_SUFFIX


def default_session_path(scenario: Scenario) -> str:
    """Where Ctrl+S saves a table opened from a scenario or map: NAME.tacgrid in the
    current folder."""
    base = os.path.basename(scenario.path.split("#")[-1])
    stem = os.path.splitext(base)[0] or "session"
    return os.path.abspath(f"{stem}.tacgrid")


# --------------------------------------------------------------------------- encoding


class _DiceTable:
    """Dice positions, each stored once (edits between rolls share one)."""

    def __init__(self) -> None:
        self.rows: list[dict[str, Any]] = []
        self._index: dict[Any, int] = {}

    def add(self, state: Any) -> int:
        rng, buf, pos = state
        version, words, gauss = rng
        rest = bytes(buf[4 * pos :])  # the unread words; the stream goes on the same
        key = (version, tuple(words), gauss, rest)
        got = self._index.get(key)
        if got is None:
            got = self._index[key] = len(self.rows)
            self.rows.append(
                {
                    "version": version,
                    "words": base64.b64encode(
                        zlib.compress(b"".join(w.to_bytes(4, "little") for w in words))
                    ).decode("ascii"),
                    "gauss": gauss,
                    "unread": base64.b64encode(zlib.compress(rest)).decode("ascii"),
                }
            )
        return got


#: Most bytes all the saved dice positions of one session inflate to: each is 2,500
#: bytes of generator state and the words drawn and not yet rolled (at most a refill's
#: few thousand words in play; a batch roll's more), so a session's whole undo history
#: fits many times over.
MAX_DICE_BYTES = 32 << 20
#: The generator state's size: 625 words of 4 bytes.
_WORDS_BYTES = 625 * 4


def _inflate(text: Any, limit: int) -> bytes:
    """Base64 text of a zlib stream, inflated to at most ``limit`` bytes (a bomb of a few
    MB that would inflate to GB is refused after ``limit`` + 1 bytes)."""
    if not isinstance(text, str):
        raise ValueError("a dice position is not text")
    d = zlib.decompressobj()
    out = d.decompress(base64.b64decode(text, validate=True), limit + 1)
    if len(out) > limit or d.unconsumed_tail:
        raise ValueError(f"a dice position inflates past {limit} bytes")
    if not d.eof:
        raise ValueError("a dice position is cut short")
    return out


def _dice_states(rows: Any) -> list[Any]:
    """Every saved dice position, inflated within :data:`MAX_DICE_BYTES` in all."""
    if not isinstance(rows, list):
        raise ValueError("its dice positions are not a list")
    left = MAX_DICE_BYTES
    out = []
    for row in rows:
        state = _dice_state(row, left)
        left -= _WORDS_BYTES + len(state[1])
        out.append(state)
    return out


def _dice_state(row: dict[str, Any], limit: int = MAX_DICE_BYTES) -> Any:
    raw = _inflate(row["words"], min(_WORDS_BYTES, limit))
    words = tuple(int.from_bytes(raw[i : i + 4], "little") for i in range(0, len(raw), 4))
    if len(words) != 625:
        raise ValueError("a dice position has the wrong length")
    gauss = row.get("gauss")
    if gauss is not None and not isinstance(gauss, float):
        raise ValueError("a dice position is damaged")
    unread = _inflate(row["unread"], max(0, limit - _WORDS_BYTES))
    if len(unread) % 4:
        raise ValueError("a dice position is damaged")
    return ((int(row["version"]), words, gauss), unread, 0)


def _spec_dict(spec: TokenSpec) -> dict[str, Any]:
    return {
        "id": spec.id,
        "side": spec.side,
        "stats": {k: jsonable(v) for k, v in spec.stats.items()},
        "cell": list(spec.cell),
        "policy": spec.policy,
        "pace": spec.pace,
        "target": spec.target,
        "waypoints": [list(c) for c in spec.waypoints],
        "conditions": list(spec.conditions),
        "flight": spec.flight,
        "acts": list(spec.acts),
    }


def _spec(d: dict[str, Any]) -> TokenSpec:
    return TokenSpec(
        id=str(d["id"]),
        side=str(d["side"]),
        stats=dict(d["stats"]),
        cell=_cell(d["cell"]),
        policy=str(d["policy"]),
        pace=d.get("pace"),
        target=d.get("target"),
        waypoints=tuple(_cell(c) for c in d.get("waypoints") or ()),
        conditions=tuple(str(c) for c in d.get("conditions") or ()),
        flight=d.get("flight"),
        acts=tuple(str(a) for a in d.get("acts") or ()),
    )


def _cell(v: Any) -> Cell:
    return (int(v[0]), int(v[1]))


def _checkpoint_dict(cp: Checkpoint, dice: _DiceTable) -> dict[str, Any]:
    s = cp.snap
    out: dict[str, Any] = {
        "tokens": {
            tid: {"stats": {k: jsonable(v) for k, v in t.stats.items()}, "state": t.state.to_dict()}
            for tid, t in s.tokens.items()
        },
        "turn": s.turn,
        "outcome": s.outcome,
        "n_events": s.n_events,
        "dice": dice.add(s.dice_state),
        "waypoint": dict(s.waypoint),
        "specs": [_spec_dict(sp) for sp in (s.specs or {}).values()],
        "order": list(s.order or []),
        "doors": {str(k): bool(v) for k, v in sorted((s.doors or {}).items())},
        "flying": {tid: f.to_dict() for tid, f in cp.flying.items()},
        "moved": sorted(cp.moved),
    }
    if cp.tail is not None:
        out["tail_from"] = cp.tail_from
        out["tail"] = cp.tail
    return out


def _checkpoint(d: dict[str, Any], system: Any, dice: list[Any]) -> Checkpoint:
    from engine.flight.model import state_from_dict

    tokens = {}
    for tid, t in d["tokens"].items():
        stats = {
            s.name: s.parse(t["stats"][s.name], "session")
            for s in system.stats
            if s.name in t["stats"]
        }
        tokens[tid] = Token(
            system=system.name,
            stats=MappingProxyType(stats),
            state=token_state_from_dict(t["state"]),
            id=tid,
        )
    specs = {sp["id"]: _spec(sp) for sp in d["specs"]}
    order = [str(t) for t in d["order"]]
    if sorted(order) != sorted(specs) or sorted(specs) != sorted(tokens):
        raise ValueError("its tokens, specs and turn order disagree")
    snap = Snapshot(
        tokens=tokens,
        turn=int(d["turn"]),
        outcome=d["outcome"],
        n_events=int(d["n_events"]),
        dice_state=dice[int(d["dice"])],
        waypoint={str(k): int(v) for k, v in d["waypoint"].items()},
        specs=specs,
        order=order,
        doors={int(k): bool(v) for k, v in (d.get("doors") or {}).items()},
    )
    return Checkpoint(
        snap,
        {tid: state_from_dict(f) for tid, f in d.get("flying", {}).items()},
        frozenset(d.get("moved", ())),
        d.get("tail_from"),
        d.get("tail"),
    )


# --------------------------------------------------------------------------- the table


def source_dict(scenario: Scenario, session_path: str | None) -> dict[str, Any]:
    """Where the table's map (and scenario) come from, absolute and relative to the
    session file's folder (a folder moved whole still opens)."""
    path = scenario.path
    kind = "scenario" if path.lower().endswith((".yaml", ".yml")) else "map"
    out = {
        "kind": kind,
        "path": os.path.abspath(path),
        "system": scenario.system.name,
        "sets": {k: jsonable(v) for k, v in scenario.system.config.items()},
        # Required on reading: a session opens only the file it was saved with.
        "digest": scenario.digest if kind == "scenario" else file_digest(path.split("#")[0]),
        "map_sets": {k: jsonable(v) for k, v in scenario.map_sets.items()},
    }
    if session_path:
        try:
            out["relative"] = os.path.relpath(
                os.path.abspath(path), os.path.dirname(os.path.abspath(session_path))
            )
        except ValueError:  # another drive
            pass
    return out


def session_dict(viewer: Any, session_path: str | None = None) -> dict[str, Any]:
    """A viewer's whole table as the session file's JSON."""
    dice = _DiceTable()
    present = _checkpoint_dict(viewer._checkpoint(), dice)
    sim = viewer.sim
    present["result"] = {
        "cell": list(sim.result_cell) if sim.result_cell else None,
        "by": sim.result_by,
    }
    cam = viewer.camera
    return {
        "format": FORMAT,
        "version": VERSION,
        "source": source_dict(viewer.scenario, session_path),
        "seed": sim.seed,
        "events": sim.events,
        "present": present,
        "undo": [_checkpoint_dict(cp, dice) for cp in viewer.undo],
        "redo": [_checkpoint_dict(cp, dice) for cp in viewer.redo],
        "dice": dice.rows,
        "paint": viewer.brush.doc(),
        "view": {
            "camera": [cam.x, cam.y, cam.zoom],
            "selected": viewer.selected,
            "safe_below": viewer.table.safe_below,
            "facing": dict(viewer.facing),
        },
    }


def session_text(viewer: Any, session_path: str | None = None) -> str:
    import json

    return json.dumps(session_dict(viewer, session_path), separators=(",", ":")) + "\n"


def save_session(viewer: Any, path: str, label: str = "session") -> str:
    """Write the table to ``path``, whole or not at all."""
    from engine.safeio import write_text

    return write_text(path, session_text(viewer, path), label)


def read_session(path: str) -> dict[str, Any]:
    """A session file's JSON (size-capped, finite, bounded depth); one line if it is not
    one."""
    from engine.sources import MAX_LOG_BYTES, load_json, read_bytes

    raw = read_bytes(path, "session", MAX_LOG_BYTES, ArgumentError)
    data = load_json(raw, path, ArgumentError)
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise ArgumentError(
            f"{path}: not a tacgrid session; save one with Ctrl+S in `tacgrid view`"
        )
    if data.get("version") != VERSION:
        raise ArgumentError(
            f"{path}: session format version {data.get('version')!r}; this tacgrid reads "
            f"version {VERSION}"
        )
    return data


def session_scenario(data: dict[str, Any], path: str) -> Scenario:
    """The scenario (or bare map) a session was played on, with its saved tokens."""
    from engine import systems
    from engine.scenario import load_scenario
    from engine.tiled import read_tiled

    src = data["source"]
    found = source_file(src, path)
    specs = tuple(_spec(sp) for sp in data["present"]["specs"])
    if src["kind"] == "scenario":
        scenario = load_scenario(found, overrides=dict(src.get("sets") or {}), for_render=True)
        return replace(scenario, tokens=specs) if specs else scenario
    from engine.scenario import edit_bare_map, split_collision

    map_sets = dict(src.get("map_sets") or {})  # the bare map's --set edits
    collision, edits = split_collision(map_sets)
    tiled = read_tiled(found, collision=collision)  # with pytmx's map: the viewer draws it
    edit_bare_map(found, tiled.model, edits)
    system = systems.create(src["system"], dict(src.get("sets") or {}))
    return Scenario(
        path=found,
        name=os.path.basename(found),
        model=tiled.model,
        system=system,
        tokens=specs,
        turns=10**6,
        tiled=tiled,
        map_sets=map_sets,
    )


def source_file(src: dict[str, Any], path: str) -> str:
    """The scenario or map file a session was saved with: where the session says it was
    (beside the session as written then, or its absolute path), and only if its bytes
    still have the digest saved with it.

    The digest is required and compared before anything parses the file, so a session
    cannot make tacgrid read a file of its choosing (``/etc/shadow``, ``../../secret``)
    and quote it in an error: another file's bytes never match."""
    kind = src["kind"]
    if kind not in ("scenario", "map"):
        raise ValueError("its source is neither a scenario nor a map")
    digest = src.get("digest")
    if not (isinstance(digest, str) and len(digest) == 16 and _hex(digest)):
        raise ArgumentError(
            f"{path}: its {kind} has no digest, so tacgrid cannot tell it is the file the "
            "session was saved with; open the scenario or map itself and save a new session"
        )
    names = []
    if isinstance(src.get("relative"), str) and src["relative"]:
        names.append(os.path.join(os.path.dirname(os.path.abspath(path)), src["relative"]))
    if isinstance(src.get("path"), str) and src["path"]:
        names.append(src["path"])
    there = [n for n in names if regular_file(n.split("#")[0])]
    if not there:
        raise ArgumentError(
            f"{path}: its {kind} {clip(names[-1] if names else '?', 200)} is not there; put it "
            "back or give the session next to it"
        )
    for name in there:
        if file_digest(name.split("#")[0]) == digest:
            return name
    raise ArgumentError(
        f"{path}: its {kind} {clip(there[0], 200)} is not the file the session was saved "
        "with (its digest differs); open the scenario or map itself and save a new session"
    )


def _hex(text: str) -> bool:
    return all(c in "0123456789abcdef" for c in text)


def _on_the_map(cp: Checkpoint, scenario: Scenario) -> None:
    """Every token of a saved table stands on the map (a token off it would be drawn
    nowhere and moved from nowhere): ValueError naming the first that does not."""
    grid = scenario.model.grid
    cells = [(tid, t.state.cell) for tid, t in cp.snap.tokens.items()]
    cells += [(sp.id, sp.cell) for sp in (cp.snap.specs or {}).values()]
    for tid, cell in cells:
        if cell is not None and not grid.in_bounds(cell):
            raise ValueError(
                f"token {clip(tid)} stands at {cell[0]},{cell[1]}, off the map "
                f"({grid.width} x {grid.height} cells)"
            )


def apply_session(viewer: Any, data: dict[str, Any], scenario: Scenario) -> None:
    """Put a saved table into ``viewer``: events, state, dice, undo history, view."""
    system = scenario.system
    dice = _dice_states(data["dice"])
    present = _checkpoint(data["present"], system, dice)
    undo = [_checkpoint(d, system, dice) for d in data["undo"]]
    redo = [_checkpoint(d, system, dice) for d in data["redo"]]
    for cp in (present, *undo, *redo):
        _on_the_map(cp, scenario)
    events = data["events"]
    if not isinstance(events, list) or not all(isinstance(e, dict) for e in events):
        raise ValueError("its event log is not a list of events")
    done, undone = replay_paint(scenario, data.get("paint"))
    sim = Simulation(scenario, int(data["seed"]))
    sim.events[:] = events
    sim.restore(present.snap)
    try:
        sim.model  # noqa: B018 - a door the map no longer has fails here
    except TacgridError as exc:
        raise ValueError(f"its doors do not match the map ({exc})") from None
    result = data["present"].get("result") or {}
    sim.result_cell = _cell(result["cell"]) if result.get("cell") else None
    sim.result_by = result.get("by")
    viewer.scenario = scenario
    viewer.sim = sim
    viewer.flying = dict(present.flying)
    viewer.moved = set(present.moved)
    viewer.undo, viewer.redo = undo, redo
    view = data.get("view") or {}
    if view.get("camera"):
        viewer.camera.x, viewer.camera.y, viewer.camera.zoom = _camera(view["camera"])
    sel = view.get("selected")
    viewer.selected = sel if sel in sim.tokens else (sim.order[0] if sim.order else None)
    sb = view.get("safe_below")
    viewer.table.safe_below = None if sb is None else float(sb)
    viewer.facing = {str(k): int(v) for k, v in (view.get("facing") or {}).items()}
    viewer.brush.restore(done, undone)
    viewer._invalidate()


def replay_paint(scenario: Scenario, doc: Any) -> tuple[list[Any], list[Any]]:
    """A session's terrain brush strokes (``paint``) painted onto the scenario's map, and
    the strokes it had undone (to redo); a session without ``paint`` painted nothing."""
    from engine.tiled.paint import Stroke, cells_from_json, replay, terrain_from_json

    if doc is None:
        return [], []
    if not isinstance(doc, dict):
        raise ValueError("its paint is not an object")
    done = replay(scenario.model, doc.get("strokes") or [])
    undone = []
    for i, item in enumerate(doc.get("undone") or []):
        if not isinstance(item, dict) or not isinstance(item.get("cells"), list):
            raise ValueError(f"undone paint stroke {i} is malformed")
        terrain = terrain_from_json(item.get("terrain"), f"undone paint stroke {i}")
        cells = cells_from_json(scenario.model, item["cells"], f"undone paint stroke {i}")
        undone.append(Stroke(terrain, tuple(cells)))
    return done, undone


#: The farthest a saved camera may look from the map's origin, in map pixels (the largest
#: map with its offsets lies within it).
MAX_CAMERA = 1 << 25


def _camera(value: Any) -> tuple[float, float, float]:
    """A saved camera ``[x, y, zoom]``: a place near the map, a zoom the viewer has."""
    from engine.viewer.camera import snap_zoom

    x, y, z = (float(v) for v in value)
    if not all(math.isfinite(v) for v in (x, y, z)) or max(abs(x), abs(y)) > MAX_CAMERA:
        raise ValueError(f"its camera [{x:g}, {y:g}] is off the map")
    if z <= 0:
        raise ValueError(f"its zoom {z:g} is not above 0")
    return x, y, snap_zoom(z)


def load_session(path: str) -> tuple[dict[str, Any], Scenario]:
    """Read a session file and its scenario; anything wrong is one line naming the file."""
    data = read_session(path)
    try:
        return data, session_scenario(data, path)
    except TacgridError:
        raise
    except (KeyError, TypeError, ValueError, IndexError, AttributeError, ArithmeticError) as exc:
        raise ArgumentError(
            f"{path}: a damaged session ({type(exc).__name__}: {clip(str(exc))}); open its "
            f"autosave ({os.path.basename(autosave_path(path))}) or start from the scenario"
        ) from None


def checked_apply(viewer: Any, data: dict[str, Any], scenario: Scenario, path: str) -> None:
    """:func:`apply_session`, a damaged file being one line naming it."""
    try:
        apply_session(viewer, data, scenario)
    except TacgridError:
        raise
    except (
        KeyError,
        TypeError,
        ValueError,
        IndexError,
        AttributeError,
        ArithmeticError,
        zlib.error,
        binascii.Error,
    ) as exc:
        raise ArgumentError(
            f"{path}: a damaged session ({type(exc).__name__}: {clip(str(exc))}); open its "
            "autosave or start from the scenario"
        ) from None
