"""Scenario files (YAML): a map, a rule system, tokens with policies, goals, runs and a seed.

Everything is validated before anything runs; each error names the file, the field path
(``tokens[1].policy``) and the fix.

.. code-block:: yaml

    name: River chase
    map: ../maps/chase.tmx        # relative to the scenario file
    system: generic
    settings: {}                  # --set values
    seed: 7
    runs: 200
    turns: 30                     # turn limit: the run ends in a "timeout"
    order: [quarry, pursuer1]     # optional; default: as listed
    goals:
      capture: 1                  # a pursuer within 1 cell of a quarry (0 = same cell)
      escape: [exit_east]         # exit names a quarry escapes through (default: all)
    tokens:
      - id: quarry
        side: quarry
        stats: {speed: 30}
        spawn: quarry             # a spawn object's name, or cell: [c, r]
        policy: quarry            # quarry | pursuer | waypoints | idle | human
        pace: dash
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass, field
from typing import Any

from engine.errors import ScenarioError, TacgridError, did_you_mean
from engine.grid import Cell
from engine.mapmodel import MapModel

POLICIES = ("pursuer", "quarry", "waypoints", "idle", "human")
TOP_KEYS = (
    "name",
    "map",
    "system",
    "settings",
    "seed",
    "runs",
    "turns",
    "order",
    "goals",
    "tokens",
    "description",
)
TOKEN_KEYS = (
    "id",
    "side",
    "stats",
    "spawn",
    "cell",
    "policy",
    "pace",
    "target",
    "waypoints",
    "conditions",
)


@dataclass(frozen=True)
class TokenSpec:
    id: str
    side: str
    stats: dict[str, Any]
    cell: Cell
    policy: str
    pace: str | None = None
    target: str | None = None
    waypoints: tuple[Cell, ...] = ()
    conditions: tuple[str, ...] = ()


@dataclass
class Scenario:
    """A validated scenario: the loaded map, the system instance and the token specs."""

    path: str
    name: str
    model: MapModel
    system: Any  # RuleSystem instance
    tokens: tuple[TokenSpec, ...]
    seed: int = 0
    runs: int = 100
    turns: int = 30
    capture: int = 0
    exits: tuple[str, ...] = ()
    exit_cells: frozenset[Cell] = frozenset()
    settings: dict[str, Any] = field(default_factory=dict)
    digest: str = ""
    raw: dict[str, Any] = field(default_factory=dict)

    def token_spec(self, token_id: str) -> TokenSpec:
        for t in self.tokens:
            if t.id == token_id:
                return t
        raise KeyError(token_id)


def _err(path: str, where: str, problem: str, fix: str = "") -> ScenarioError:
    return ScenarioError(f"{path}: {where}: {problem}" + (f"; {fix}" if fix else ""))


def _int(path: str, where: str, value: Any, minimum: int = 0) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise _err(path, where, f"{value!r} is not a whole number >= {minimum}")
    return value


def _cell(path: str, where: str, value: Any, model: MapModel) -> Cell:
    if (
        not isinstance(value, list | tuple)
        or len(value) != 2
        or not all(isinstance(v, int) and not isinstance(v, bool) for v in value)
    ):
        raise _err(path, where, f"{value!r} is not a cell", "write it as [col, row], e.g. [3, 4]")
    cell = (int(value[0]), int(value[1]))
    if not model.grid.in_bounds(cell):
        raise _err(
            path,
            where,
            f"cell {cell[0]},{cell[1]} is outside the map ({model.width} x {model.height})",
        )
    return cell


def load_scenario(
    path: str | os.PathLike[str], *, overrides: dict[str, Any] | None = None
) -> Scenario:
    """Read and validate a scenario file (``overrides`` = ``--set`` values)."""
    path = os.fspath(path)
    raw_bytes, data = _read_yaml(path)
    _check_top_level(path, data)
    model = _load_scenario_map(path, data)
    system, settings = _create_system(path, data, model, overrides)
    seed = _int(path, "seed", data.get("seed", 0))
    runs = _int(path, "runs", data.get("runs", 100), 1)
    turns = _int(path, "turns", data.get("turns", 30), 1)
    tokens = _read_tokens(path, data, model, system)
    _check_targets(path, tokens)
    _apply_order(path, data, tokens)
    capture, escape, exit_cells = _read_goals(path, data, model)
    return Scenario(
        path=path,
        name=str(data.get("name") or os.path.splitext(os.path.basename(path))[0]),
        model=model,
        system=system,
        tokens=tuple(tokens),
        seed=seed,
        runs=runs,
        turns=turns,
        capture=capture,
        exits=tuple(escape),
        exit_cells=exit_cells,
        settings=settings,
        digest=hashlib.sha256(raw_bytes).hexdigest()[:16],
        raw=data,
    )


def _read_yaml(path: str) -> tuple[bytes, Any]:
    """The file's bytes (the scenario's digest) and its parsed YAML."""
    import yaml

    try:
        with open(path, "rb") as fh:
            raw_bytes = fh.read()
    except FileNotFoundError:
        raise ScenarioError(f"{path}: scenario file not found; check the path") from None
    except OSError as exc:
        raise ScenarioError(f"{path}: cannot read ({exc.strerror})") from None
    except ValueError:  # a NUL byte in the path (possible only through the Python API)
        raise ScenarioError(f"{path}: not a usable file name") from None
    try:
        return raw_bytes, yaml.safe_load(raw_bytes)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"line {mark.line + 1}" if mark is not None else "YAML"
        if isinstance(exc, yaml.reader.ReaderError):  # bytes that are not text
            where = f"byte {exc.position}"
            problem = f"character {exc.character!r} ({exc.reason})"
        else:
            problem = str(getattr(exc, "problem", None) or exc)
        problem = " ".join(problem.split())  # PyYAML's messages span lines
        raise _err(path, where, f"not valid YAML ({problem})") from None


def _check_top_level(path: str, data: Any) -> None:
    """A mapping of known keys, with a map."""
    if not isinstance(data, dict):
        raise _err(path, "top level", "expected a mapping of keys (map, system, tokens, ...)")
    for key in data:
        if key not in TOP_KEYS:
            raise _err(
                path,
                str(key),
                "unknown key" + did_you_mean(str(key), TOP_KEYS),
                f"keys: {', '.join(TOP_KEYS)}",
            )
    if "map" not in data:
        raise _err(path, "map", "missing", "give the .tmx file, relative to the scenario")


def _load_scenario_map(path: str, data: dict[str, Any]) -> MapModel:
    """The map, relative to the scenario file; its errors under ``map``."""
    from engine.tiled import load_map

    map_path = os.path.normpath(
        os.path.join(os.path.dirname(os.path.abspath(path)), str(data["map"]))
    )
    try:
        return load_map(map_path)
    except TacgridError as exc:
        raise _err(path, "map", str(exc)) from None


def _create_system(
    path: str, data: dict[str, Any], model: MapModel, overrides: dict[str, Any] | None
) -> tuple[Any, dict[str, Any]]:
    """The rule system (the scenario's, else the map's) with its settings and ``--set``s."""
    from engine import systems

    system_name = data.get("system") or model.system
    if not system_name:
        raise _err(path, "system", "missing (and the map names none)", "e.g. system: generic")
    settings = data.get("settings") or {}
    if not isinstance(settings, dict):
        raise _err(path, "settings", "expected a mapping of setting: value")
    settings = {**settings, **(overrides or {})}
    try:
        return systems.create(str(system_name), settings), settings
    except TacgridError as exc:
        raise _err(path, "system/settings", str(exc)) from None


def _read_tokens(path: str, data: dict[str, Any], model: MapModel, system: Any) -> list[TokenSpec]:
    """Every token, in file order, each checked on its own."""
    spawns = {s.id: s.cell for s in model.spawns}
    raw_tokens = data.get("tokens")
    if not isinstance(raw_tokens, list) or not raw_tokens:
        raise _err(path, "tokens", "expected a list of tokens", "see scenarios/ for examples")
    tokens: list[TokenSpec] = []
    for i, t in enumerate(raw_tokens):
        tokens.append(_read_token(path, i, t, tokens, model, system, spawns))
    return tokens


def _read_token(
    path: str,
    i: int,
    t: Any,
    earlier: list[TokenSpec],
    model: MapModel,
    system: Any,
    spawns: dict[str, Cell],
) -> TokenSpec:
    """``tokens[i]``: keys, id, stats, start cell, policy, pace, waypoints, target and
    conditions."""
    tid = _token_id(path, i, t, earlier)
    where = f"tokens[{i}] ({tid})"
    stats = t.get("stats") or {}
    if not isinstance(stats, dict):
        raise _err(path, f"{where}.stats", "expected a mapping of stat: value")
    try:
        system.token(stats, token_id=tid)
    except TacgridError as exc:
        raise _err(path, f"{where}.stats", str(exc).replace("--token ", "")) from None
    cell = _token_cell(path, where, t, tid, model, spawns)
    policy = t.get("policy", "idle")
    if policy not in POLICIES:
        raise _err(
            path,
            f"{where}.policy",
            f"'{policy}'" + did_you_mean(str(policy), POLICIES),
            f"use {' | '.join(POLICIES)}",
        )
    pace = t.get("pace")
    if pace is not None and pace not in system.paces:
        raise _err(
            path,
            f"{where}.pace",
            f"'{pace}'",
            f"{system.name} paces: {', '.join(system.paces)}",
        )
    waypoints = _token_waypoints(path, where, t, policy, model)
    target = t.get("target")
    if target is not None and not isinstance(target, str):
        raise _err(path, f"{where}.target", f"{target!r} is not a token id")
    conditions = t.get("conditions") or []
    if not isinstance(conditions, list) or not all(isinstance(c, str) for c in conditions):
        raise _err(path, f"{where}.conditions", "expected a list of names, e.g. [prone]")
    return TokenSpec(
        id=tid,
        side=str(t.get("side", policy)),
        stats=dict(stats),
        cell=cell,
        policy=policy,
        pace=pace,
        target=target,
        waypoints=waypoints,
        conditions=tuple(conditions),
    )


def _token_id(path: str, i: int, t: Any, earlier: list[TokenSpec]) -> str:
    """A token mapping's keys checked, and its id (text, not used before)."""
    where = f"tokens[{i}]"
    if not isinstance(t, dict):
        raise _err(path, where, "expected a mapping (id, side, stats, spawn, policy)")
    for key in t:
        if key not in TOKEN_KEYS:
            raise _err(path, f"{where}.{key}", "unknown key" + did_you_mean(str(key), TOKEN_KEYS))
    tid = t.get("id")
    if not isinstance(tid, str) or not tid:
        raise _err(path, f"{where}.id", "missing or not text")
    if any(x.id == tid for x in earlier):
        raise _err(path, f"{where}.id", f"'{tid}' is used twice")
    return tid


def _token_cell(
    path: str, where: str, t: dict[str, Any], tid: str, model: MapModel, spawns: dict[str, Cell]
) -> Cell:
    """The start cell: ``cell: [c, r]``, else the spawn named by ``spawn`` (default: the id)."""
    if "cell" in t:
        return _cell(path, f"{where}.cell", t["cell"], model)
    spawn = t.get("spawn", tid)
    if not isinstance(spawn, str):
        raise _err(path, f"{where}.spawn", f"{spawn!r} is not a spawn name")
    if spawn not in spawns:
        raise _err(
            path,
            f"{where}.spawn",
            f"the map has no spawn '{spawn}'" + did_you_mean(str(spawn), list(spawns)),
            "give cell: [col, row] or name a spawn object of the map",
        )
    return spawns[spawn]


def _token_waypoints(
    path: str, where: str, t: dict[str, Any], policy: str, model: MapModel
) -> tuple[Cell, ...]:
    """The waypoints (cells on the map); a waypoints policy needs at least one."""
    raw_waypoints = t.get("waypoints") or []
    if not isinstance(raw_waypoints, list):
        raise _err(path, f"{where}.waypoints", "expected a list of cells, e.g. [[3, 4], [8, 4]]")
    waypoints = tuple(
        _cell(path, f"{where}.waypoints[{j}]", w, model) for j, w in enumerate(raw_waypoints)
    )
    if policy == "waypoints" and not waypoints:
        raise _err(path, f"{where}.waypoints", "a waypoints policy needs a list of cells")
    return waypoints


def _check_targets(path: str, tokens: list[TokenSpec]) -> None:
    """Every ``target`` names a token of the scenario."""
    ids = [t.id for t in tokens]
    for t in tokens:
        if t.target is not None and t.target not in ids:
            raise _err(
                path,
                f"tokens ({t.id}).target",
                f"no token '{t.target}'" + did_you_mean(t.target, ids),
            )


def _apply_order(path: str, data: dict[str, Any], tokens: list[TokenSpec]) -> None:
    """Sort the tokens by ``order``, which must list every id exactly once."""
    order = data.get("order")
    if order is None:
        return
    ids = [t.id for t in tokens]
    if (
        not isinstance(order, list)
        or not all(isinstance(x, str) for x in order)
        or sorted(order) != sorted(ids)
    ):
        raise _err(path, "order", "must list every token id exactly once", f"ids: {', '.join(ids)}")
    tokens.sort(key=lambda t: order.index(t.id))


def _read_goals(
    path: str, data: dict[str, Any], model: MapModel
) -> tuple[int, list[Any], frozenset[Cell]]:
    """``goals``: the capture distance, and the exits a quarry escapes through (names and
    cells; default: every exit of the map)."""
    goals = data.get("goals") or {}
    if not isinstance(goals, dict):
        raise _err(path, "goals", "expected a mapping (capture, escape)")
    for key in goals:
        if key not in ("capture", "escape"):
            raise _err(
                path, f"goals.{key}", "unknown goal" + did_you_mean(str(key), ["capture", "escape"])
            )
    capture = _int(path, "goals.capture", goals.get("capture", 0))
    exit_names = [e.name for e in model.exits]
    escape = goals.get("escape", exit_names)
    if not isinstance(escape, list) or any(e not in exit_names for e in escape):
        bad = (
            next((e for e in escape if e not in exit_names), escape)
            if isinstance(escape, list)
            else escape
        )
        raise _err(
            path,
            "goals.escape",
            f"no exit '{bad}' on the map" + did_you_mean(str(bad), exit_names),
            f"exits: {', '.join(exit_names) or 'none'}",
        )
    exit_cells = frozenset(c for e in model.exits if e.name in escape for c in e.cells)
    return capture, escape, exit_cells
