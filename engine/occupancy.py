"""Tokens in the way, and tokens larger than one cell (issue 23).

Both are derived *inputs* to the movement graph, never a change to it: a
:class:`~engine.movement.MovementGraph` is built on a derived :class:`MapModel` whose cells
are the moving token's *anchors*.

* **Size** (:func:`sized_model`): a size-``k`` token (``engine.footprint``: a ``k x k`` block
  on square maps, the hexes within ``k - 1`` steps on hex maps) may stand on an anchor only
  when every cell of its footprint is on the map and one it may enter; entering the anchor
  costs what the footprint's *slowest* cell costs this token at this pace (that cell's
  terrain, with its check, stands for the anchor). A cell it cannot enter anywhere under
  the footprint refuses the anchor. So a 2x2 token cannot pass a one-cell gap between walls
  that a 1x1 token walks through, and half in the mud is in the mud.
* **Occupancy** (:func:`occupancy`): the other tokens' footprints, sorted by the scenario's
  ``settings.tokens_block``: ``enemies`` (the default: enemies block; allies may be passed
  through but not stopped on), ``all`` (every token blocks) or ``none`` (tokens are
  ignored). A blocked anchor is one whose footprint would overlap a blocking token; a
  no-stop anchor one whose footprint would overlap an ally. A token a pursuer hunts never
  blocks that pursuer: moving onto it is the catch.

>>> from engine.grid import Grid
>>> occ = occupancy(Grid("orthogonal", 5, 5, 32, 32), 1,
...                 [Other((2, 2), enemy=True), Other((3, 3), enemy=False)], "enemies")
>>> sorted(occ.blocked), sorted(occ.no_stop)
([(2, 2)], [(3, 3)])
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from engine.errors import ArgumentError
from engine.footprint import MAX_SIZE, covering, dilate, fits, footprint
from engine.grid import Cell, Grid
from engine.mapmodel import MapModel, Terrain
from engine.movement import MovementGraph
from engine.systems.base import RuleSystem, Token
from engine.walls import anchor_blocks, no_blocks, step_blocks

#: ``settings.tokens_block`` values: who stops a moving token (the first is the default).
TOKENS_BLOCK: tuple[str, ...] = ("enemies", "all", "none")
#: The terrain record an anchor gets where its footprint leaves the map.
MAP_EDGE = Terrain(name="the map edge", move="blocked")
#: The terrain record an anchor gets where its footprint meets a blocking token.
TOKEN_IN_THE_WAY = Terrain(name="a token in the way", move="blocked")
#: The terrain record an anchor gets where its footprint would straddle a wall.
ACROSS_A_WALL = Terrain(name="across a wall", move="blocked")


def check_size(size: Any) -> int:
    """A token size (a whole number 1..MAX_SIZE), or an
    :class:`~engine.errors.ArgumentError` with role ``size``."""
    if isinstance(size, bool) or not isinstance(size, int) or not 1 <= size <= MAX_SIZE:
        raise ArgumentError(
            role="size",
            given=repr(size),
            problem=f"expected a whole number from 1 to {MAX_SIZE} "
            "(cells across: 2 = a 2x2 token; on hex maps 2 = 7 hexes)",
        )
    return size


def check_tokens_block(value: Any, what: str = "settings.tokens_block") -> str:
    """A ``tokens_block`` setting, or one clear line naming the choices."""
    if value not in TOKENS_BLOCK:
        raise ArgumentError(f"{what} {value!r}: expected {' | '.join(TOKENS_BLOCK)}")
    return str(value)


# --------------------------------------------------------------------------- size


def _rank_key(graph: MovementGraph, k: int) -> tuple[int, Any, Any, int]:
    """How bad terrain ``k`` is for this token (higher = worse): refused, then a gap, then
    slower, then a riskier check; the index last, so every terrain has its own rank."""
    cost = graph.costs[k]
    if cost.time is None and cost.over is None:
        return (3, 0, 0, k)
    if cost.time is None:
        return (2, cost.over, 0, k)
    risk = 0 if cost.check is None else 1 - cost.check.p_success
    return (1, cost.time, risk, k)


def sized_model(
    model: MapModel, system: RuleSystem, token: Token, pace: str | None = None, size: int = 1
) -> MapModel:
    """The map as a size-``size`` token's anchors see it: each anchor carries the terrain
    of the slowest cell of its footprint for this token at this pace (refused where a
    footprint cell is refused or off the map). Size 1 gives ``model`` itself.

    Systems with search layers (a prone token) rank the cells by the layer a path starts in.
    """
    check_size(size)
    if size == 1:
        return model
    base = MovementGraph(model, system, token, pace)
    n_t = len(model.terrains)
    order = sorted(range(n_t), key=lambda k: _rank_key(base, k))
    rank = np.empty(n_t, dtype=np.int64)
    rank[order] = np.arange(n_t)
    worst = dilate(model.grid, rank[model.terrain_ids], size, off_map=n_t)
    to_terrain = np.array([*order, n_t], dtype=np.int32)  # rank -> terrain id (n_t: edge)
    ids = to_terrain[worst].astype(np.int32)
    # Walls: a step of the anchor is blocked where any footprint cell's step is; an anchor
    # whose footprint straddles a wall is refused (engine.walls.anchor_blocks).
    bits, straddle = anchor_blocks(model, size)
    terrains = (*model.terrains, MAP_EDGE)
    if straddle:
        cols = np.array([c for c, _ in straddle])
        rows = np.array([r for _, r in straddle])
        ids[rows, cols] = len(terrains)
        terrains = (*terrains, ACROSS_A_WALL)
    return replace(
        model,
        terrain_ids=ids,
        terrains=terrains,
        step_blocks=no_blocks(model.grid) if bits is None else bits,
    )


def with_blocked(model: MapModel, cells: Iterable[Cell]) -> MapModel:
    """``model`` with ``cells`` (anchors) blocked by a token in the way (a copy; none: the
    model itself)."""
    grid = model.grid
    inside = sorted(c for c in set(cells) if grid.in_bounds(c))
    if not inside:
        return model
    ids = model.terrain_ids.copy()
    cols = np.array([c for c, _ in inside])
    rows = np.array([r for _, r in inside])
    ids[rows, cols] = len(model.terrains)
    # The walls (and the corners rule) as the map itself has them: a token is not a
    # blocked cell for `corners = block`.
    bits = step_blocks(model)
    return replace(
        model,
        terrain_ids=ids,
        terrains=(*model.terrains, TOKEN_IN_THE_WAY),
        step_blocks=no_blocks(model.grid) if bits is None else bits,
    )


def token_graph(
    model: MapModel,
    system: RuleSystem,
    token: Token,
    pace: str | None = None,
    *,
    size: int = 1,
    blocked: Iterable[Cell] = (),
) -> MovementGraph:
    """The movement graph of a size-``size`` token with ``blocked`` anchors."""
    return MovementGraph(
        with_blocked(sized_model(model, system, token, pace, size), blocked), system, token, pace
    )


# --------------------------------------------------------------------------- occupancy


@dataclass(frozen=True)
class Other:
    """Another token on the map, as a mover sees it."""

    cell: Cell
    size: int = 1
    enemy: bool = True
    #: The token the mover hunts: never in its way (moving onto it is the catch).
    quarry: bool = False


@dataclass(frozen=True)
class Occupancy:
    """What the other tokens take away from one mover (its anchors)."""

    blocked: frozenset[Cell] = frozenset()
    no_stop: frozenset[Cell] = frozenset()

    def __bool__(self) -> bool:
        return bool(self.blocked or self.no_stop)


def occupancy(
    grid: Grid, size: int, others: Iterable[Other], setting: str = "enemies"
) -> Occupancy:
    """The anchors a size-``size`` mover may not enter, and those it may pass but not stop
    on, under ``setting`` (:data:`TOKENS_BLOCK`)."""
    check_tokens_block(setting)
    if setting == "none":
        return Occupancy()
    blocked: set[Cell] = set()
    no_stop: set[Cell] = set()
    others = others if isinstance(others, list | tuple) else list(others)
    if size <= 1 and all(o.size <= 1 for o in others):
        # One cell each (the common case): a token's footprint and the anchors covering it
        # are its own cell.
        inside = grid.in_bounds
        for other in others:
            if not other.quarry and inside(other.cell):
                (blocked if (other.enemy or setting == "all") else no_stop).add(other.cell)
        return Occupancy(frozenset(blocked), frozenset(no_stop - blocked))
    for other in others:
        if other.quarry:
            continue
        into = blocked if (other.enemy or setting == "all") else no_stop
        for cell in _footprint_cells(grid, other):
            into.update(a for a in covering(grid, cell, size) if grid.in_bounds(a))
    return Occupancy(frozenset(blocked), frozenset(no_stop - blocked))


def _footprint_cells(grid: Grid, other: Other) -> list[Cell]:
    return [c for c in footprint(grid, other.cell, other.size) if grid.in_bounds(c)]


def reach_cell(token: Token) -> Cell | None:
    """Where ``token`` is for capture and for standing in another token's way: its cell,
    except for a climber partway up (docs/rules.md, "Climbers in play": a crossing of more
    than a turn under way, ``state.toward`` set, in mode ``climb``, with some of it climbed,
    ``progress`` above 0), which is off the ground and reached only at the cell it climbs
    to. A climber that has climbed nothing yet, or fell back (progress 0), is at its foot."""
    st = token.state
    if st.toward is not None and st.mode == "climb" and st.progress > 0:
        return st.toward
    return st.cell


def gap_steps(grid: Grid, a: Cell, size_a: int, b: Cell, size_b: int) -> int:
    """Fewest steps between two tokens' footprints (0: they overlap); the capture distance
    of tokens larger than one cell."""
    if size_a <= 1 and size_b <= 1:
        return grid.steps(a, b)
    fa = footprint(grid, a, size_a)
    fb = footprint(grid, b, size_b)
    if set(fa) & set(fb):
        return 0
    return min(grid.steps(x, y) for x in fa for y in fb)


# --------------------------------------------------------------------------- queries


def check_start(grid: Grid, start: Cell, size: int) -> None:
    """A size-``size`` token's start anchor keeps its footprint on the map (an
    :class:`~engine.errors.ArgumentError` with role ``start`` if not)."""
    if grid.in_bounds(start) and not fits(grid, start, size):
        raise ArgumentError(
            role="start",
            given=f"{start[0]},{start[1]}",
            problem=f"a size-{size} token there leaves the map ({grid.width} x {grid.height}); "
            "give its anchor (top-left on square maps, the centre on hex maps) further in",
        )
