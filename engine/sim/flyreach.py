"""How soon a flier can be at each cell: the turn arrays the safe-region policies weigh
(:mod:`engine.policies.region`) for tokens that fly with momentum.

A walker's turns to every cell are its profile's field (:func:`engine.sim.view.times_from`).
A flier has none: where it can be depends on its heading, speed and altitude as well as on
its cell. Its *reach* is the system's own planner bound (:meth:`FlightRules.bound`: turns
to enter a cell, never more than any real flight needs) read for every cell. The two
shipped momentum systems' bounds read the cell only through its steps from the flier
(:meth:`FlightRules.steps_to`, symmetric between passable cells), so the bound is asked
once per distance, from one cell at that distance, over the flier's own field, not once
per cell with a field each; tests/test_policies_fly.py holds the array equal to the bound
asked of every cell (a cell no flight enters: +inf).

The arrays are lower bounds: a quarry that weighs a pursuing flier by them keeps clear of
every cell the flier could possibly reach in time, and a flier weighing its own reach by
them counts cells it may need a turn more to line up.
"""

from __future__ import annotations

from hashlib import blake2b
from typing import Any

import numpy as np

from engine.flight.model import FlightRules, FlightState, Goal
from engine.sim.idmemo import IdMemo

#: Reach arrays a rules object keeps in its pilot cache, by flight state: a batch's fliers
#: meet the same states run after run. The oldest half goes past this many, or past
#: :data:`REACH_BYTES` of them (an array is 8 bytes a cell: few on a big map).
REACH_CACHE = 4096
REACH_BYTES = 64 << 20


def kept_arrays(rules: FlightRules, name: str) -> dict[Any, np.ndarray]:
    """The rules' pilot-cache dict ``name`` of per-cell arrays, its oldest half dropped
    once it holds :data:`REACH_CACHE` of them or :data:`REACH_BYTES`."""
    kept: dict[Any, np.ndarray] = rules.pilot_cache.setdefault(name, {})
    grid = rules.model.grid
    limit = max(8, min(REACH_CACHE, REACH_BYTES // (8 * grid.width * grid.height)))
    if len(kept) >= limit:
        for old in list(kept)[: limit // 2]:
            del kept[old]
    return kept


def flight_turns(rules: FlightRules, state: FlightState) -> np.ndarray:
    """Turns (a lower bound, float, +inf where it cannot go) for a flier in ``state`` to
    enter each cell (by grid index), 0 on its own cell; read-only, kept in the rules'
    pilot cache."""
    s = rules.normal(state)
    key = s.key()
    got = rules.pilot_cache.get("reach", {}).get(key)
    if got is None:
        got = kept_arrays(rules, "reach")[key] = _flight_turns(rules, s)
    return got


def _flight_turns(rules: FlightRules, s: FlightState) -> np.ndarray:
    grid = rules.model.grid
    steps = np.asarray(rules.steps_to(s.cell).steps, dtype=np.int64)
    out = np.full(len(steps), np.inf)
    reached = steps >= 0
    # The bound reads a cell only through its steps to the goal, and steps are symmetric:
    # a flier on a cell ``d`` steps off, in this state, bound for this cell needs what
    # this flier needs for that one. One field (this cell's), one bound per distance.
    home = Goal(s.cell)
    h, v, alt, landed, face, m, downed = s.key()[1:]
    by_d = np.full(int(steps.max()) + 2, np.inf)
    dists, first = np.unique(steps[reached], return_index=True)
    cells = np.flatnonzero(reached)[first]
    for d, i in zip(dists.tolist(), cells.tolist(), strict=True):
        b = rules.bound((grid.cell_of_index(i), h, v, alt, landed, face, m, downed), home)
        by_d[d] = np.inf if b is None else float(b[0])
    out[reached] = by_d[steps[reached]]
    out[grid.index(s.cell)] = 0.0
    out.setflags(write=False)
    return out


def flight_turns_plain(rules: FlightRules, state: FlightState) -> np.ndarray:
    """:func:`flight_turns` the plain way: the bound asked of every cell a flight can
    enter (+inf on the others), 0 on the flier's own."""
    grid = rules.model.grid
    s = rules.normal(state)
    key = s.key()
    out = np.full(grid.width * grid.height, np.inf)
    for i in range(len(out)):
        cell = grid.cell_of_index(i)
        if not rules.passable(cell):
            continue
        b = rules.bound(key, Goal(cell))
        if b is not None:
            out[i] = float(b[0])
    out[grid.index(s.cell)] = 0.0
    return out


#: Threat arrays (:func:`least_with`) a rules object keeps, oldest half dropped past this.
THREAT_KEPT = 1024


def least_with(rules: FlightRules, least: np.ndarray, reach: list[np.ndarray]) -> np.ndarray:
    """``least`` (the walkers' least turns to each cell) cell by cell the least with each
    of the fliers' ``reach`` arrays, read-only: kept in ``rules``' pilot cache by the very
    arrays it was made from (:class:`~engine.sim.idmemo.IdMemo`; each is kept, read-only,
    where it was made), so the same arrays give the same array object and what the field
    cache keeps by a threat's identity is found again."""
    memo = kept_memo(rules, "least_with", THREAT_KEPT)
    objects = (least, *reach)
    got = memo.get(objects)
    if got is None:
        got = least
        for r in reach:
            got = np.minimum(got, r)
        if got is least:
            got = least.copy()
        got.setflags(write=False)
        memo.put(objects, None, got)
    return got


def kept_memo(rules: FlightRules, name: str, limit: int) -> IdMemo[Any]:
    """The rules' pilot-cache :class:`~engine.sim.idmemo.IdMemo` ``name`` (made on first
    use, of ``limit`` entries, its oldest half dropped when full)."""
    memo: IdMemo[Any] | None = rules.pilot_cache.get(name)
    if memo is None:
        memo = rules.pilot_cache[name] = IdMemo(limit, drop=limit // 2)
    return memo


#: Slack in reading a quarry's turns as "within one turn" (its field's turns are floats).
CORNER_EPS = 1e-9

#: Quarries' turn arrays whose cells a rules object keeps a digest of (oldest half dropped).
CORNER_KEPT = 4096


def corner_digest(rules: FlightRules, corner: np.ndarray) -> bytes:
    """A digest of the cells an aim's quarry gets to within a turn (:func:`engine.sim.flight._corner_cells`) of an aim with ``corner``, kept in the rules'
    pilot cache by the array itself (a quarry's turns are a kept array: a batch asks of
    the same ones run after run)."""
    memo: IdMemo[bytes] = kept_memo(rules, "corner", CORNER_KEPT)
    got = memo.one(corner)
    if got is None:
        cells = np.flatnonzero(corner <= 1.0 + CORNER_EPS).astype(np.int64)
        got = blake2b(cells.tobytes(), digest_size=16).digest()
        memo.put_one(corner, None, got)
    return got
