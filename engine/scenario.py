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
      capture_altitude: 0         # a flier catches / is caught only at or below this (m)
      escape: [exit_east]         # exit names a quarry escapes through (default: all)
    tokens:
      - id: quarry
        side: quarry
        stats: {speed: 30}
        spawn: quarry             # a spawn object's name, or cell: [c, r]
        policy: quarry            # quarry | pursuer | waypoints | idle | human
        pace: dash
        flight: {heading: 90, speed: 0, altitude: 0}   # a momentum flier's start (optional)
        size: 1                   # cells across (2: a 2x2 token; hex: 7 hexes); default 1
        acts: [attack]            # actions besides moving, taken every turn (optional)

``settings.tokens_block`` (``enemies`` | ``all`` | ``none``, default ``enemies``) says who
stands in a moving token's way (engine.occupancy); it is the scenario's, not the system's.
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from engine import edits as keys
from engine import policies
from engine.edits import EDITABLE_TERRAIN as EDITABLE_TERRAIN  # kept importable from here
from engine.edits import EDITABLE_TOKEN as EDITABLE_TOKEN
from engine.edits import EDITABLE_TOP as EDITABLE_TOP
from engine.edits import GOAL_KEYS, apply_edits, edit_terrain
from engine.edits import MAP_EDITS as MAP_EDITS
from engine.errors import ScenarioError, TacgridError, did_you_mean
from engine.grid import Cell
from engine.mapmodel import MapModel
from engine.sources import clip
from engine.tokenspec import TokenSpec

if TYPE_CHECKING:
    from engine.tiled import TiledFile

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
    "sweep",  # a parameter sweep's grid (engine.sweep); a batch ignores it
    "solve",  # auto | off: the policies play the solved game where it fits (docs/solve.md)
    "measures",  # per-run measures a batch records (engine.edits.MEASURES)
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
    "flight",
    "size",
    "acts",
)


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
    #: Fliers catch and are caught only at or below this altitude (metres), or landed.
    capture_altitude: int = 0
    exits: tuple[str, ...] = ()
    exit_cells: frozenset[Cell] = frozenset()
    settings: dict[str, Any] = field(default_factory=dict)
    #: Who stands in a moving token's way: enemies | all | none (engine.occupancy).
    tokens_block: str = "enemies"
    digest: str = ""
    raw: dict[str, Any] = field(default_factory=dict)
    #: The per-run measures its batches record (names of :data:`MEASURES`, in its order).
    measures: tuple[str, ...] = ()
    #: The map file as read for drawing (pytmx's map and the document's tree beside
    #: :attr:`model`), for a renderer to be handed; only with ``load_scenario(...,
    #: for_render=True)``, None in the engine's own loads.
    tiled: TiledFile | None = field(default=None, compare=False, repr=False)
    #: ``auto``: the pursuer and quarry policies play the solved game where it fits
    #: (engine.solve, docs/solve.md); ``off`` (the default): their heuristics.
    solve: str = "off"
    #: A bare map's ``--set`` map edits (``terrain.NAME.PROP``, ``region.NAME.PROP``,
    #: ``map.collision``), kept so that a session file reads the map as it was played.
    map_sets: dict[str, Any] = field(default_factory=dict)

    def token_spec(self, token_id: str) -> TokenSpec:
        for t in self.tokens:
            if t.id == token_id:
                return t
        raise KeyError(token_id)

    @classmethod
    def for_map(
        cls,
        map_path: str,
        system_name: str | None,
        sets: dict[str, Any] | None = None,
        stats: dict[str, Any] | None = None,
    ) -> Scenario:
        """A scenario for a bare map: a GM token at each spawn (else one at the centre), all
        with ``stats``; the map's rule system unless ``system_name`` names one (else generic)."""
        from engine import systems
        from engine.tiled import read_tiled

        collision, rest = split_collision(sets)
        # with pytmx's map: a bare map is opened to be drawn
        tiled = read_tiled(map_path, collision=collision)
        model = tiled.model
        settings = edit_bare_map(map_path, model, rest)
        map_sets = {  # what edits the map: terrain., region., map.collision
            k: v for k, v in (sets or {}).items() if "." in k and not k.startswith("settings.")
        }
        system = systems.create(system_name or model.system or "generic", settings)
        system.token(dict(stats or {}))  # bad stats: one line now, not in a window
        if model.spawns:
            tokens = tuple(
                TokenSpec(id=s.id, side="gm", stats=dict(stats or {}), cell=s.cell, policy="human")
                for s in model.spawns
            )
        else:
            centre = _open_cell_near(model, (model.width // 2, model.height // 2))
            tokens = (
                TokenSpec(
                    id="token", side="gm", stats=dict(stats or {}), cell=centre, policy="human"
                ),
            )
        return cls(
            path=map_path,
            name=os.path.basename(map_path),
            model=model,
            system=system,
            tokens=tokens,
            turns=10**6,
            tiled=tiled,
            map_sets=map_sets,
        )


#: The ``--set`` key that picks a map's collision conventions (engine.tiled.collision:
#: ``all``, ``none`` or a comma list), in place of the map property ``collision``.
MAP_COLLISION = "map.collision"


def split_collision(overrides: dict[str, Any] | None) -> tuple[str | None, dict[str, Any]]:
    """``--set map.collision=...`` taken out of ``overrides`` (None where not given)."""
    rest = dict(overrides or {})
    value = rest.pop(MAP_COLLISION, None)
    return (None if value is None else str(value)), rest


def edit_bare_map(path: str, model: MapModel, overrides: dict[str, Any] | None) -> dict[str, Any]:
    """A bare map's ``--set`` (no scenario around it): ``terrain.NAME.PROP`` and
    ``region.NAME.PROP`` edit ``model`` in place, as they edit a scenario's map; the rule
    settings (keys without a dot, ``settings.NAME``) are returned for the system."""
    _, settings, edits = apply_edits(path, {}, overrides)
    edit_terrain(path, model, edits)
    return settings


def _open_cell_near(model: MapModel, cell: Cell) -> Cell:
    """``cell``, or where it is blocked terrain the nearest cell that is not (fewest steps,
    then the lower row and column); ``cell`` itself on a map with no open cell."""
    if model.terrain_at(cell).move != "blocked":
        return cell
    grid = model.grid
    best: tuple[int, int, int] | None = None
    for r in range(model.height):
        for c in range(model.width):
            if model.terrain_at((c, r)).move != "blocked":
                key = (grid.steps(cell, (c, r)), r, c)
                if best is None or key < best:
                    best = key
    return cell if best is None else (best[2], best[1])


def _err(path: str, where: str, problem: str, fix: str = "") -> ScenarioError:
    return ScenarioError(f"{path}: {where}: {problem}" + (f"; {fix}" if fix else ""))


#: Bounds on a scenario's numbers, each of them work: turns a run may last (one that cannot
#: end sooner would play on for hours), runs it asks for (a batch's own bound, 10**9),
#: tokens it places (each a field, a policy and a turn of work per turn), and the capture
#: distance (cells) or altitude (metres).
MAX_TURNS, MAX_RUNS, MAX_TOKENS, MAX_GOAL = 10_000, 10**9, 100, 100_000


def _int(path: str, where: str, value: Any, minimum: int = 0, maximum: int | None = None) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise _err(path, where, f"{clip(repr(value))} is not a whole number >= {minimum}")
    if maximum is not None and value > maximum:
        fix = f"give a whole number from {minimum} to {maximum}"
        raise _err(path, where, f"{clip(repr(value))} is more than tacgrid allows", fix)
    return value


def _cell(path: str, where: str, value: Any, model: MapModel) -> Cell:
    if (
        not isinstance(value, list | tuple)
        or len(value) != 2
        or not all(isinstance(v, int) and not isinstance(v, bool) for v in value)
    ):
        raise _err(
            path, where, f"{clip(repr(value))} is not a cell", "write it as [col, row], e.g. [3, 4]"
        )
    cell = (int(value[0]), int(value[1]))
    if not model.grid.in_bounds(cell):
        raise _err(
            path,
            where,
            f"cell {cell[0]},{cell[1]} is outside the map ({model.width} x {model.height})",
        )
    return cell


def load_scenario(
    path: str | os.PathLike[str],
    *,
    overrides: dict[str, Any] | None = None,
    for_render: bool = False,
    same_map: MapRead | None = None,
) -> Scenario:
    """Read and validate a scenario file (``overrides`` = ``--set`` values).

    ``for_render``: also read the map as a renderer needs it (pytmx's map), kept as
    :attr:`Scenario.tiled`, so a viewer draws it without reading the file again.
    ``same_map``: the scenario's map as already read (:func:`read_scenario_map`), used
    instead of reading the map file again where these overrides leave the map as read (no
    ``terrain.``/``region.`` edit, no ``collision``) and it is this scenario's map file; the
    scenario then shares its model with ``same_map`` (a sweep validating each value).
    """
    path = os.fspath(path)
    raw_bytes, data = _read_yaml(path)
    _check_top_level(path, data)
    collision, overrides = split_collision(overrides)
    tied = [k for k in overrides or {} if k.startswith("side.")]
    data, overrides, terrain_edits = apply_edits(path, data, overrides)
    if (
        same_map is not None
        and not for_render
        and collision is None
        and not terrain_edits
        and same_map.map_path == _map_path(path, data)
    ):
        tiled = same_map.tiled
    else:
        tiled = _load_scenario_map(path, data, for_render, collision)
    model = tiled.model
    edit_terrain(path, model, terrain_edits)
    system, settings = _create_system(path, data, model, overrides)
    keys.check_tied_stats(path, tied, system)
    measures = keys.read_measures(path, data)
    tokens_block = _tokens_block(path, settings)
    seed = _int(path, "seed", data.get("seed", 0))
    runs = _int(path, "runs", data.get("runs", 100), 1, MAX_RUNS)
    turns = _int(path, "turns", data.get("turns", 30), 1, MAX_TURNS)
    tokens = _read_tokens(path, data, model, system)
    _check_targets(path, tokens)
    _apply_order(path, data, tokens)
    capture, escape, exit_cells = _read_goals(path, data, model)
    altitude = (data.get("goals") or {}).get("capture_altitude", 0)
    capture_altitude = _int(path, "goals.capture_altitude", altitude, 0, MAX_GOAL)
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
        capture_altitude=capture_altitude,
        exits=tuple(escape),
        exit_cells=exit_cells,
        settings=settings,
        tokens_block=tokens_block,
        digest=hashlib.sha256(raw_bytes).hexdigest()[:16],
        raw=data,
        measures=measures,
        tiled=tiled if for_render else None,
        solve=_solve_option(path, data),
    )


def _solve_option(path: str, data: dict[str, Any]) -> str:
    """``solve``: ``auto`` or ``off`` (default)."""
    got = data.get("solve", "off")
    if got is False:  # YAML reads a bare off as false
        got = "off"
    if got not in ("auto", "off"):
        raise _err(path, "solve", f"expected auto or off, not {clip(str(got))}")
    return str(got)


#: Parsed scenario documents by the SHA-256 of their bytes (:func:`_read_yaml`): a sweep
#: loads one scenario once per value and point, a batch and its workers again.
_PARSED: dict[bytes, Any] = {}
_PARSED_KEPT = 16


def _read_yaml(path: str) -> tuple[bytes, Any]:
    """The file's bytes (the scenario's digest) and its parsed YAML: a regular file of at
    most MAX_YAML_BYTES, with aliases, nesting and expanded size bounded (engine.sources).
    The same bytes are parsed once (a copy of the document each time: callers edit it)."""
    import copy

    from engine.sources import MAX_YAML_BYTES, load_yaml, read_bytes

    raw_bytes = read_bytes(path, "scenario", MAX_YAML_BYTES, ScenarioError)
    key = hashlib.sha256(raw_bytes).digest()
    if key not in _PARSED:
        data = load_yaml(raw_bytes, path, ScenarioError)
        if len(_PARSED) >= _PARSED_KEPT:
            del _PARSED[next(iter(_PARSED))]
        _PARSED[key] = data
    return raw_bytes, copy.deepcopy(_PARSED[key])


def _check_top_level(path: str, data: Any) -> None:
    """A mapping of known keys, with a map."""
    if not isinstance(data, dict):
        raise _err(path, "top level", "expected a mapping of keys (map, system, tokens, ...)")
    for key in data:
        if key not in TOP_KEYS:
            raise _err(
                path,
                clip(str(key), 40),  # no key is longer: room for the list of keys
                "unknown key" + did_you_mean(str(key)[:80], TOP_KEYS),
                f"keys: {', '.join(TOP_KEYS)}",
            )
    if "map" not in data:
        raise _err(path, "map", "missing", "give the .tmx file, relative to the scenario")


@dataclass(frozen=True)
class MapRead:
    """A scenario's map file as read, with no edit and the map's own collision conventions
    (:func:`read_scenario_map`): what :func:`load_scenario` reuses (``same_map``) instead
    of reading the file again."""

    #: The map file (absolute, normalised), as the scenario names it.
    map_path: str
    tiled: TiledFile


def read_scenario_map(path: str | os.PathLike[str]) -> MapRead:
    """The map of the scenario file ``path``, read once for several :func:`load_scenario`
    calls of the same file (``same_map``); errors as :func:`load_scenario` gives them."""
    path = os.fspath(path)
    _, data = _read_yaml(path)
    _check_top_level(path, data)
    return MapRead(_map_path(path, data), _load_scenario_map(path, data, False))


def _map_path(path: str, data: dict[str, Any]) -> str:
    """The map file a scenario names, relative to the scenario file."""
    return os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(path)), str(data["map"])))


def _load_scenario_map(
    path: str, data: dict[str, Any], for_render: bool, collision: str | None = None
) -> TiledFile:
    """The map, relative to the scenario file (with pytmx's map only ``for_render``); its
    errors under ``map``."""
    from engine.tiled import read_tiled

    map_path = _map_path(path, data)
    try:
        return read_tiled(map_path, with_tmx=for_render, collision=collision)
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
    if not isinstance(settings, dict) or not all(isinstance(k, str) for k in settings):
        raise _err(path, "settings", "expected a mapping of setting: value (names as text)")
    settings = {**settings, **(overrides or {})}
    rules = {k: v for k, v in settings.items() if k != "tokens_block"}  # the scenario's own
    try:
        return systems.create(str(system_name), rules), settings
    except TacgridError as exc:
        # "--set x: ..." on the command line: the error keeps the arguments it names
        raise exc.within(f"{path}: system/settings: ", ScenarioError) from None


def _read_tokens(path: str, data: dict[str, Any], model: MapModel, system: Any) -> list[TokenSpec]:
    """Every token, in file order, each checked on its own."""
    spawns = {s.id: s.cell for s in model.spawns}
    raw_tokens = data.get("tokens")
    if not isinstance(raw_tokens, list) or not raw_tokens:
        raise _err(path, "tokens", "expected a list of tokens", "see scenarios/ for examples")
    if len(raw_tokens) > MAX_TOKENS:
        too_many = f"{len(raw_tokens)} tokens; a scenario has at most {MAX_TOKENS}"
        raise _err(path, "tokens", too_many, "split the scene into several scenarios")
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
    if not isinstance(stats, dict) or not all(isinstance(k, str) for k in stats):
        raise _err(path, f"{where}.stats", "expected a mapping of stat: value (names as text)")
    try:
        system.token(stats, token_id=tid)
    except TacgridError as exc:
        # The file says where the stats came from: the message without the argument's name.
        said = exc.detail() if exc.role == "token" else str(exc)
        raise _err(path, f"{where}.stats", said) from None
    cell = _token_cell(path, where, t, tid, model, spawns)
    policy = t.get("policy", "idle")
    known = policies.names()
    if not isinstance(policy, str) or policy not in known:
        raise _err(
            path,
            f"{where}.policy",
            f"'{clip(str(policy))}'" + policies.unknown(str(policy)),
            f"use {' | '.join(known)}",
        )
    pace = t.get("pace")
    if pace is not None and pace not in system.paces:
        raise _err(
            path,
            f"{where}.pace",
            f"'{clip(str(pace))}'",
            f"{system.name} paces: {', '.join(system.paces)}",
        )
    waypoints = _token_waypoints(path, where, t, policy, model)
    target = t.get("target")
    if target is not None and not isinstance(target, str):
        raise _err(path, f"{where}.target", f"{clip(repr(target))} is not a token id")
    conditions = t.get("conditions") or []
    if not isinstance(conditions, list) or not all(isinstance(c, str) for c in conditions):
        raise _err(path, f"{where}.conditions", "expected a list of names, e.g. [prone]")
    flight = _token_flight(path, where, t, stats, cell, model, system)
    size = _token_size(path, where, t, cell, model)
    acts = _token_acts(path, where, t, system.token(stats, token_id=tid), pace, system)
    if acts and flight is not None:
        raise _err(
            path,
            f"{where}.acts",
            "a momentum flier's turn is its flight's actions (docs/flight.md): acts beside a "
            "flight are not played",
            "leave acts out of a flier",
        )
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
        flight=flight,
        size=size,
        acts=acts,
    )


def _token_acts(
    path: str, where: str, t: dict[str, Any], token: Any, pace: str | None, system: Any
) -> tuple[str, ...]:
    """``acts``: actions besides moving the token takes every turn, names of its system's
    acts (:meth:`RuleSystem.with_acts` prices them); a ``pace`` they leave no room for is
    refused (a pace not given is the fastest they leave: :meth:`RuleSystem.act_pace`)."""
    raw = t.get("acts") or []
    if not isinstance(raw, list) or not all(isinstance(a, str) for a in raw):
        raise _err(path, f"{where}.acts", "expected a list of names, e.g. [attack]")
    acts = tuple(raw)
    if not acts:
        return acts
    try:
        acting = system.with_acts(token, acts)
    except TacgridError as exc:
        said = exc.detail() if exc.role == "act" else str(exc)
        raise _err(path, f"{where}.acts", said) from None
    if pace is not None and system.act_pace(acting, pace) != pace:
        raise _err(
            path,
            f"{where}.pace",
            f"'{pace}' leaves no room for acts {', '.join(acts)}",
            f"use pace {system.act_pace(acting, pace)} (or leave pace out), or fewer acts",
        )
    return acts


def _tokens_block(path: str, settings: dict[str, Any]) -> str:
    """``settings.tokens_block``: who stands in a moving token's way (engine.occupancy)."""
    from engine.occupancy import TOKENS_BLOCK

    value = settings.get("tokens_block", TOKENS_BLOCK[0])
    if value not in TOKENS_BLOCK:
        raise _err(
            path,
            "settings.tokens_block",
            f"{clip(repr(value))}" + did_you_mean(str(value)[:80], TOKENS_BLOCK),
            f"use {' | '.join(TOKENS_BLOCK)}",
        )
    return str(value)


def _token_size(path: str, where: str, t: dict[str, Any], cell: Cell, model: MapModel) -> int:
    """``size``: cells across, 1..MAX_SIZE, its footprint on the map at the start cell."""
    from engine.footprint import MAX_SIZE, fits

    size = t.get("size", 1)
    if isinstance(size, bool) or not isinstance(size, int) or not 1 <= size <= MAX_SIZE:
        raise _err(
            path,
            f"{where}.size",
            f"{clip(repr(size))} is not a whole number from 1 to {MAX_SIZE}",
            "cells across: 2 = a 2x2 token (7 hexes on hex maps)",
        )
    if not fits(model.grid, cell, size):
        raise _err(
            path,
            f"{where}.size",
            f"a size-{size} token at {cell[0]},{cell[1]} leaves the map "
            f"({model.width} x {model.height})",
            "start it further in (its cell is the top-left of its block; a hex token's centre)",
        )
    return size


def _token_flight(
    path: str,
    where: str,
    t: dict[str, Any],
    stats: dict[str, Any],
    cell: Cell,
    model: MapModel,
    system: Any,
) -> dict[str, int] | None:
    """``flight``: a momentum flier's start (heading, speed, altitude), checked by its
    system's flight rules; a token that does not fly with momentum may not have one."""
    raw = t.get("flight")
    if raw is None:
        # A momentum flier given none starts on the ground (speed 0, altitude 0), as the
        # turn loop starts it: refused here where its cell has no ground.
        rules = system.flight(system.token(stats, token_id=str(t.get("id"))), model)
        try:
            if rules is not None:
                rules.start_state(cell, 0, 0, altitude=0)
        except TacgridError as exc:
            raise _err(
                path,
                f"{where}.flight",
                "not given, so this flier starts on the ground; " + exc.naming({"start": "cell"}),
                "give it flight: {heading: H, speed: S, altitude: A} or a cell with ground",
            ) from None
        return None
    keys = ("heading", "speed", "altitude")
    if not isinstance(raw, dict) or any(k not in keys for k in raw):
        raise _err(path, f"{where}.flight", "expected a mapping of heading, speed, altitude")
    for k, v in raw.items():
        if isinstance(v, bool) or not isinstance(v, int):
            raise _err(path, f"{where}.flight.{k}", f"{v!r} is not a whole number")
    rules = system.flight(system.token(stats, token_id=str(t.get("id"))), model)
    if rules is None:
        raise _err(
            path,
            f"{where}.flight",
            f"this token does not fly with momentum under {system.name}",
            "give the system's flier stats (mythmaster: flyer: true; speedpoints: airspeed)",
        )
    try:
        rules.start_state(
            cell, raw.get("heading", 0), raw.get("speed", 0), altitude=raw.get("altitude", 0)
        )
    except TacgridError as exc:
        # The start's arguments by the scenario's words (the flight mapping's keys).
        names = {"start": "from", "ground_pace": "ground-pace"}
        raise _err(path, f"{where}.flight", exc.naming(names)) from None
    return dict(raw)


def _token_id(path: str, i: int, t: Any, earlier: list[TokenSpec]) -> str:
    """A token mapping's keys checked, and its id (text, not used before)."""
    where = f"tokens[{i}]"
    if not isinstance(t, dict):
        raise _err(path, where, "expected a mapping (id, side, stats, spawn, policy)")
    for key in t:
        if key not in TOKEN_KEYS:
            raise _err(
                path,
                f"{where}.{clip(str(key))}",
                "unknown key" + did_you_mean(str(key)[:80], TOKEN_KEYS),
            )
    tid = t.get("id")
    if not isinstance(tid, str) or not tid:
        raise _err(path, f"{where}.id", "missing or not text")
    if any(x.id == tid for x in earlier):
        raise _err(path, f"{where}.id", f"'{clip(tid)}' is used twice")
    return tid


def _token_cell(
    path: str, where: str, t: dict[str, Any], tid: str, model: MapModel, spawns: dict[str, Cell]
) -> Cell:
    """The start cell: ``cell: [c, r]``, else the spawn named by ``spawn`` (default: the id)."""
    if "cell" in t:
        return _cell(path, f"{where}.cell", t["cell"], model)
    spawn = t.get("spawn", tid)
    if not isinstance(spawn, str):
        raise _err(path, f"{where}.spawn", f"{clip(repr(spawn))} is not a spawn name")
    if spawn not in spawns:
        raise _err(
            path,
            f"{where}.spawn",
            f"the map has no spawn '{clip(spawn)}'" + did_you_mean(spawn[:80], list(spawns)),
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
                f"no token '{clip(t.target)}'" + did_you_mean(t.target[:80], ids),
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
        if key not in GOAL_KEYS:
            raise _err(
                path,
                f"goals.{clip(str(key))}",
                "unknown goal" + did_you_mean(str(key)[:80], GOAL_KEYS),
            )
    capture = _int(path, "goals.capture", goals.get("capture", 0), 0, MAX_GOAL)
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
            f"no exit '{clip(str(bad))}' on the map" + did_you_mean(str(bad)[:80], exit_names),
            f"exits: {', '.join(exit_names) or 'none'}",
        )
    exit_cells = frozenset(c for e in model.exits if e.name in escape for c in e.cells)
    return capture, escape, exit_cells
