"""Terrain: each cell's terrain from the stack of tiles on it (the top-most tile that sets
a key wins), and the checks on every terrain value a tile or region gives."""

from __future__ import annotations

import math
from array import array
from typing import Any

from engine.cells import I32, Cells, held, pure, to_numpy
from engine.errors import MapError
from engine.lazy import numpy as np
from engine.mapmodel import (
    BLOCKED_EMPTY,
    DIFFICULTIES,
    FALLS,
    MODES,
    TERRAIN_KEYS,
    Terrain,
    TileLayer,
)
from engine.tiled.common import fail


def cell_terrain(
    path: str,
    layers: tuple[TileLayer, ...],
    tile_props: dict[int, dict[str, Any]],
    ranges: list[tuple[int, int]],
    shape: tuple[int, int],
) -> tuple[Cells | np.ndarray, tuple[Terrain, ...]]:
    """Per-cell terrain ids from the tile stacks (top-most layer that sets a key wins)."""
    tlayers = [held(lay, "gids") for lay in layers if lay.terrain]
    if not tlayers:
        return Cells.zeros(shape, I32), (BLOCKED_EMPTY,)
    used, stacks, inverse = layer_stacks(tlayers)
    bad = _first_unknown(used, ranges)  # every gid must belong to a tileset
    if bad is not None:
        raise fail(
            path,
            f"tile id {bad} is used but no tileset covers it",
            "a tileset is missing or was edited: re-add it in Tiled (Map > Add External Tileset)",
        )
    records: dict[int, dict[str, Any]] = {}
    table: list[Terrain] = []
    seen: dict[Terrain, int] = {}
    stack_to_terrain: list[int] = []
    for gids in stacks:  # bottom .. top
        if not any(gids):
            t = BLOCKED_EMPTY
        else:
            recs = []
            for g in reversed(gids):
                if g == 0:
                    continue
                if g not in records:
                    records[g] = _tile_terrain(path, g, tile_props.get(g))
                recs.append(records[g])
            t = _terrain_from_stack(recs)
        if t not in seen:
            seen[t] = len(table)
            table.append(t)
        stack_to_terrain.append(seen[t])
    ids: Cells | np.ndarray
    if isinstance(inverse, Cells):
        ids = Cells(array(I32, map(stack_to_terrain.__getitem__, inverse.values)), shape)
    else:
        ids = np.asarray(stack_to_terrain, dtype=np.int32)[inverse]
    return ids, tuple(table)


def layer_stacks(
    layers: list[Cells | np.ndarray],
) -> tuple[list[int] | np.ndarray, list[tuple[int, ...]], Cells | np.ndarray]:
    """The gids the layers use (sorted, each once), the distinct stacks of gids on a cell
    (bottom layer first; sorted) and each cell's stack as an index into them. In pure
    Python (a list and Cells) where every layer is small Cells (:func:`~engine.cells.pure`),
    else with numpy (arrays): the same values (tests/test_cells.py)."""
    shape = layers[0].shape
    if pure(*layers):
        values = [lay.values for lay in layers if isinstance(lay, Cells)]
        keys: Any = values[0] if len(values) == 1 else list(zip(*values, strict=True))
        distinct = sorted(set(keys))
        index = {key: i for i, key in enumerate(distinct)}
        used: list[int] = distinct if len(values) == 1 else sorted(set().union(*values))
        stacks: list[tuple[int, ...]] = [(g,) for g in distinct] if len(values) == 1 else distinct
        return used, stacks, Cells(array(I32, map(index.__getitem__, keys)), shape)
    arrays = [to_numpy(lay) for lay in layers]
    allg = _values_used(arrays)
    k = len(allg)
    idx = [_rank(allg, g) for g in arrays]
    if len(idx) == 1:
        # One layer: every value it holds is a stack of its own (allg came from it).
        decode: list[tuple[int, ...]] = [(u,) for u in range(k)]
        inverse = idx[0]
    elif k ** len(idx) < 2**62:
        key = np.zeros(shape, dtype=np.int64)
        for i in idx:
            key = key * k + i
        uniq = _values_used([key])
        inverse = _rank(uniq, key)
        decode = []
        for u in uniq.tolist():
            parts = []
            for _ in idx:
                parts.append(u % k)
                u //= k
            decode.append(tuple(reversed(parts)))
        inverse = inverse.reshape(shape)
    else:
        stacked = np.stack([i.ravel() for i in idx], axis=1)
        uniq2, inverse = np.unique(stacked, axis=0, return_inverse=True)
        decode = [tuple(int(v) for v in row) for row in uniq2]
        inverse = inverse.reshape(shape)
    gids = allg.tolist()
    return allg, [tuple(gids[i] for i in stack) for stack in decode], inverse


def _first_unknown(used: list[int] | np.ndarray, ranges: list[tuple[int, int]]) -> int | None:
    """The least gid of ``used`` (sorted) other than 0 that no tileset's ``[first, end)``
    covers, or None (numpy's passes over an array, Python's over a list)."""
    if isinstance(used, list):
        unknown = (g for g in used if g and not any(a <= g < b for a, b in ranges))
        return next(unknown, None)
    known = used == 0
    for first, end in ranges:
        known |= (used >= first) & (used < end)
    return None if known.all() else int(used[~known][0])


#: The number-valued terrain properties: (least value, what to write instead).
_NUMBERS: dict[str, tuple[float, str]] = {
    "cost": (1, "a number >= 1, such as 2"),
    "cost_add": (0, "a number >= 0 (extra cells to enter), such as 1"),
    "height": (0, "a number >= 0 in the map's cell_unit"),
}


def check_terrain_value(path: str, where: str, key: str, value: Any) -> Any:  # noqa: C901
    """Validate one terrain property and return it in the model's type."""

    def bad(allowed: str) -> MapError:
        return fail(path, f"{where} has {key}='{value}'", f"use {allowed}")

    if key == "terrain":
        return str(value)
    if key == "move":
        if str(value) not in MODES:
            raise bad(" | ".join(MODES))
        return str(value)
    if key == "difficulty":
        if str(value) not in DIFFICULTIES:
            raise bad(" | ".join(DIFFICULTIES))
        return str(value)
    if key == "fall":
        if str(value) not in FALLS:
            raise bad(" | ".join(FALLS))
        return str(value)
    if key == "dn":
        try:
            f = float(value)
        except (TypeError, ValueError):
            raise bad("a whole number such as 13") from None
        if not f.is_integer() or f < 0:
            raise bad("a whole number such as 13")
        return int(f)
    if key in _NUMBERS:
        least, hint = _NUMBERS[key]
        try:
            f = float(value)
        except (TypeError, ValueError):
            raise bad(hint) from None
        if not math.isfinite(f) or f < least:
            raise bad(hint)
        return f
    return value


#: Below this many distinct possible values a table lookup replaces sorting (np.unique):
#: a few linear numpy passes over the map instead of an O(n log n) sort of every cell.
_TABLE_BELOW = 1 << 22


def _values_used(arrays: list[np.ndarray]) -> np.ndarray:
    """The distinct values (>= 0) of ``arrays``, sorted."""
    top = max(int(a.max(initial=0)) for a in arrays)
    if top < _TABLE_BELOW:
        seen = np.zeros(top + 1, dtype=bool)
        for a in arrays:
            seen[a.ravel()] = True
        return np.nonzero(seen)[0].astype(np.int64)
    return np.unique(np.concatenate([a.ravel() for a in arrays])).astype(np.int64)


def _rank(values: np.ndarray, a: np.ndarray) -> np.ndarray:
    """Each element of ``a`` as its index in the sorted ``values`` (it is one of them)."""
    top = int(values[-1]) if len(values) else 0
    if top < _TABLE_BELOW:
        small = len(values) < 2**31
        table = np.zeros(top + 1, dtype=np.int32 if small else np.int64)
        table[values] = np.arange(len(values), dtype=table.dtype)
        return table[a].astype(np.int64) if not small else table[a]
    return np.searchsorted(values, a).astype(np.int64)


def _tile_terrain(path: str, gid: int, props: dict[str, Any] | None) -> dict[str, Any]:
    """The terrain keys one tile sets (its class counts as `terrain` if no property)."""
    if not props:
        return {}
    out: dict[str, Any] = {}
    where = f"tile {gid}"
    for key in TERRAIN_KEYS:
        if key in props and props[key] is not None and props[key] != "":
            out[key] = check_terrain_value(path, where, key, props[key])
    if "terrain" not in out:
        cls = props.get("type") or props.get("class")
        if cls:
            out["terrain"] = str(cls)
    return out


def _terrain_from_stack(stack: list[dict[str, Any]]) -> Terrain:
    """Merge tile records top-most first: per property, the first that sets it wins."""
    merged: dict[str, Any] = {}
    for rec in stack:
        for k, v in rec.items():
            merged.setdefault(k, v)
    name = merged.pop("terrain", "open")
    return Terrain(name=name, **merged)
