"""What ``--set`` and a sweep's ``--vary`` change in a scenario (:func:`apply_edits`: rule
settings, token and goal keys, edits tied across a side's tokens ``side.SIDE.stats.STAT``,
a map's terrains and regions), and the per-run measures a scenario names (``measures:``);
each checked in one line. engine.scenario applies them as it loads a scenario."""

from __future__ import annotations

from typing import Any

from engine.errors import ScenarioError, TacgridError, did_you_mean
from engine.mapmodel import MapModel
from engine.sources import clip

#: A scenario's goals (``goals:``); ``goals.capture`` is an override edit too.
GOAL_KEYS = ("capture", "escape", "capture_altitude")

#: The per-run measures a scenario's ``measures:`` may name (engine.batch.measures defines
#: each from the run's event log and final state; docs/batches.md#per-run-measures).
MEASURES = ("distance_at_end", "checks_failed", "turns_in_water")
#: A token's keys a ``TOKEN.KEY`` or ``side.SIDE.KEY`` override may change (``.stats.STAT``
#: for a stat).
EDITABLE_TOKEN = ("pace", "policy")


def _err(path: str, where: str, problem: str, fix: str = "") -> ScenarioError:
    return ScenarioError(f"{path}: {where}: {problem}" + (f"; {fix}" if fix else ""))


def tied_shape(parts: list[str]) -> bool:
    """``side.SIDE.stats.STAT`` or ``side.SIDE.KEY`` (KEY in :data:`EDITABLE_TOKEN`), split
    on dots: a tied edit of every token whose side is SIDE (:func:`token_side`)."""
    return (len(parts) == 4 and parts[2] == "stats") or (
        len(parts) == 3 and parts[2] in EDITABLE_TOKEN
    )


def token_side(token: dict[str, Any]) -> str:
    """A token document's side as its TokenSpec will have it: ``side:``, else its policy."""
    return str(token.get("side", token.get("policy", "idle")))


def side_tokens(path: str, key: str, data: dict[str, Any], side: str) -> list[dict[str, Any]]:
    """The token documents of ``side`` (a tied edit's tokens); none is one line naming
    ``key`` and the scenario's sides."""
    tokens = [t for t in data.get("tokens") or [] if isinstance(t, dict)]
    found = [t for t in tokens if token_side(t) == side]
    if not found:
        sides = sorted({token_side(t) for t in tokens})
        raise _err(
            path,
            clip(key),
            f"no token's side is '{clip(side)}'" + did_you_mean(side[:80], sides),
            f"sides: {', '.join(sides)}",
        )
    return found


def check_tied_stats(path: str, keys: list[str], system: Any) -> None:
    """A tied ``side.SIDE.stats.STAT`` names a stat of the system (one line naming the key,
    not the first token it reached)."""
    names = system.stat_names()
    for key in keys:
        parts = key.split(".")
        if len(parts) == 4 and parts[2] == "stats" and parts[3] not in names:
            raise _err(
                path,
                clip(key),
                f"no token has the stat '{clip(parts[3])}': {system.name} has no such stat"
                + did_you_mean(parts[3][:80], names),
                f"stats: {', '.join(names)}",
            )


def read_measures(path: str, data: dict[str, Any]) -> tuple[str, ...]:
    """``measures``: names of :data:`MEASURES`, each once."""
    raw = data.get("measures")
    if raw is None:
        return ()
    if not isinstance(raw, list):
        raise _err(path, "measures", "expected a list of names", f"measures: {', '.join(MEASURES)}")
    seen: list[str] = []
    for i, name in enumerate(raw):
        if not isinstance(name, str) or name not in MEASURES:
            raise _err(
                path,
                f"measures[{i}]",
                f"'{clip(str(name))}' is not a measure" + did_you_mean(str(name)[:80], MEASURES),
                f"measures: {', '.join(MEASURES)}",
            )
        if name in seen:
            raise _err(path, f"measures[{i}]", f"'{name}' is listed twice", "list each once")
        seen.append(name)
    return tuple(seen)


def edit_token(token: dict[str, Any], parts: list[str], value: Any) -> None:
    """``stats.STAT`` or ``KEY`` of one token's document set to ``value``."""
    if parts[0] == "stats":
        stats = token.get("stats")
        token["stats"] = {**(stats if isinstance(stats, dict) else {}), parts[1]: value}
    else:
        token[parts[0]] = value


#: The top-level scalars a ``scenario.KEY`` override (a sweep's ``turns``) may change.
EDITABLE_TOP = ("turns",)
#: The terrain properties a ``terrain.NAME.PROP`` or ``region.NAME.PROP`` override may change.
EDITABLE_TERRAIN = ("move", "difficulty", "dn", "cost", "cost_add", "height", "fall")
#: The map edits a dotted override may make: ``terrain`` (every cell of a terrain, by the
#: terrain's name) and ``region`` (every cell of a map region, by the region object's name).
MAP_EDITS = ("terrain", "region")

#: One map edit: (kind, the override's key, the terrain's or region's name, PROP, value).
MapEdit = tuple[str, str, str, str, Any]


def apply_edits(  # noqa: C901
    path: str, data: dict[str, Any], overrides: dict[str, Any] | None
) -> tuple[dict[str, Any], dict[str, Any], list[MapEdit]]:
    """Split ``overrides`` into rule settings, edits of the scenario document and edits of
    the map's terrain.

    A key without a dot (or ``settings.NAME``) is a rule setting, as ``--set``. A dotted
    key edits the document before it is validated: ``TOKEN.stats.STAT`` (a token's stat),
    ``TOKEN.pace``, ``TOKEN.policy``, ``goals.capture`` and ``scenario.turns`` (the turn
    limit); ``side.SIDE.stats.STAT``, ``.pace`` and ``.policy`` edit every token of the side
    SIDE at once (engine.edits). Two kinds edit the map once it is loaded, PROP a terrain property (move,
    difficulty, dn, cost, cost_add, height, fall): ``terrain.NAME.PROP`` every cell of the
    terrain NAME, ``region.NAME.PROP`` every cell of the map's region object(s) named NAME
    (a name may hold dots: the last part is PROP). The file's own data is never changed
    (edits go into a copy).
    """
    settings: dict[str, Any] = {}
    edits = []
    terrain: list[MapEdit] = []
    for key, value in (overrides or {}).items():
        if "." not in key:
            settings[key] = value
        elif key.startswith("settings.") and key.count(".") == 1:
            settings[key.split(".", 1)[1]] = value
        else:
            edits.append((key, value))
    if not edits:
        return data, settings, terrain
    import copy

    data = copy.deepcopy(data)
    ids = [t.get("id") for t in data.get("tokens") or [] if isinstance(t, dict)]
    for key, value in edits:
        parts = key.split(".")
        head = parts[0]
        if head == "side" and tied_shape(parts):
            for token in side_tokens(path, key, data, parts[1]):
                edit_token(token, parts[2:], value)
        elif head == "scenario" and len(parts) == 2 and parts[1] in EDITABLE_TOP:
            data[parts[1]] = value
        elif head == "goals" and len(parts) == 2 and parts[1] in GOAL_KEYS:
            goals = data.get("goals")
            data["goals"] = {**(goals if isinstance(goals, dict) else {}), parts[1]: value}
        elif head in ids and (
            (len(parts) == 3 and parts[1] == "stats")
            or (len(parts) == 2 and parts[1] in EDITABLE_TOKEN)
        ):
            token = next(t for t in data["tokens"] if isinstance(t, dict) and t.get("id") == head)
            edit_token(token, parts[1:], value)
        elif head in MAP_EDITS:
            terrain.append(_map_edit(path, key, parts, value))
        else:
            raise _err(
                path,
                clip(key),
                "cannot be varied or set",
                "use settings.NAME, TOKEN.stats.STAT, TOKEN.pace, TOKEN.policy, "
                "side.SIDE.stats.STAT, goals.capture, scenario.turns, terrain.NAME.PROP or "
                f"region.NAME.PROP (tokens: {', '.join(map(str, ids))})",
            )
    return data, settings, terrain


def _map_edit(path: str, key: str, parts: list[str], value: Any) -> MapEdit:
    """``terrain.NAME.PROP`` / ``region.NAME.PROP`` split, its PROP checked (one line)."""
    kind = parts[0]
    if len(parts) < 3 or not all(parts[1:]):
        raise _err(
            path,
            clip(key),
            f"a {kind} edit names the {kind} and a property",
            f"write {kind}.NAME.PROP, e.g. {kind}.{'mud' if kind == 'region' else 'forest'}.cost",
        )
    name, prop = ".".join(parts[1:-1]), parts[-1]
    if prop not in EDITABLE_TERRAIN:
        raise _err(
            path,
            clip(key),
            f"'{clip(prop)}' is not a terrain property a {kind} edit can change"
            + did_you_mean(prop[:80], EDITABLE_TERRAIN),
            f"use {kind}.{clip(name)}.PROP with PROP one of {', '.join(EDITABLE_TERRAIN)}",
        )
    return (kind, key, name, prop, value)


def edit_terrain(path: str, model: MapModel, edits: list[MapEdit]) -> None:
    """The map edits, in order: ``terrain.NAME.PROP`` gives every terrain record named
    NAME the value; ``region.NAME.PROP`` gives it to every cell of the regions named NAME
    (after the map's own regions are painted; new records as needed)."""
    from dataclasses import replace

    from engine.tiled.objects import region_cells, region_names
    from engine.tiled.terrain import check_terrain_value

    for kind, key, name, prop, value in edits:
        if kind == "terrain":
            names = sorted({t.name for t in model.terrains})
            if name not in names:
                raise _err(
                    path,
                    clip(key),
                    f"the map has no terrain '{clip(name)}'" + did_you_mean(name[:80], names),
                    f"terrains: {', '.join(names)}",
                )
        else:
            cells = region_cells(model, name)
            if not cells:
                regions = region_names(model)
                if name in regions:
                    problem = f"the region '{clip(name)}' covers no cell centre of the map"
                    fix = "make it larger or move it onto the map in Tiled"
                else:
                    problem = f"the map has no region '{clip(name)}'" + did_you_mean(
                        name[:80], regions
                    )
                    fix = (
                        f"regions: {', '.join(regions)}"
                        if regions
                        else "name a shape (rectangle, ellipse or polygon) in Tiled to vary it"
                    )
                raise _err(path, clip(key), problem, fix)
        try:
            checked = check_terrain_value(path, clip(key), prop, value)
        except TacgridError as exc:
            raise ScenarioError(str(exc)) from None  # already "PATH: KEY has PROP=...; use ..."
        if kind == "terrain":
            model.terrains = tuple(
                replace(t, **{prop: checked}) if t.name == name else t for t in model.terrains
            )
        else:
            model.with_terrain(cells, {prop: checked})
