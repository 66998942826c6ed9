"""The one door to engine/_kernel.c (built by setup.py where a C compiler is found).

Its users (the movement search's A* in :mod:`engine.search.frontier`, the turn loop's
distance fields in :mod:`engine.sim`, the csv layer reader in :mod:`engine.tiled.layerdata`)
ask :func:`available` before each call and otherwise run their own numpy or scipy twin,
which gives the same results, slower. The A* takes its many arguments as named fields
(:class:`AStarTables` once per graph, :class:`AStarArgs` per search) that :func:`astar`
unpacks in the C function's order, so no caller counts positions.

One switch: :data:`enabled`, False where the environment sets ``TACGRID_NO_KERNEL``. Only
:func:`available` reads it; a test that compares the C path with its twin flips it here.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from enum import IntEnum
from typing import Any

#: Every function of engine/_kernel.c this module calls. A module built from an older
#: engine/_kernel.c (a checkout updated without rebuilding it) lacks some: then none of it
#: runs (every user runs its twin) and :func:`state` says ``"stale"``, :func:`missing` which.
ENTRY_POINTS = (
    "search",
    "field",
    "csv_u32",
    "reach_within",
    "held_region",
    "field_spread",
    "json_rows",
    "pred_chain",
    "field_toward",
    "toward_kappa",
    "claim_reach",
    "threat_move",
    "objraster_coverage",
    "objraster_composite",
    "objraster_pixels",
    "descend",
    "flee_scan",
    "flee_picks",
    "field_upto",
    "field_spread_upto",
)


def _load() -> Any:
    try:
        from engine import _kernel  # type: ignore[attr-defined]
    except ImportError:
        return None
    return _kernel


#: The compiled module (None: not built).
_BUILT: Any = _load()


def _lacks(built: Any) -> tuple[str, ...]:
    """The :data:`ENTRY_POINTS` the module ``built`` lacks (none where it is None)."""
    return () if built is None else tuple(f for f in ENTRY_POINTS if not hasattr(built, f))


#: The :data:`ENTRY_POINTS` the built module lacks, found once (see :func:`missing`).
_MISSING = _lacks(_BUILT)

#: The switch: False runs every user's own fallback instead of the compiled module.
enabled = not os.environ.get("TACGRID_NO_KERNEL")


def available() -> bool:
    """Whether the compiled kernel runs: built, with every one of :data:`ENTRY_POINTS`, and
    switched on (:data:`enabled`)."""
    return enabled and _BUILT is not None and not _MISSING


def missing() -> tuple[str, ...]:
    """The :data:`ENTRY_POINTS` the built module lacks: where any, it is stale (built from
    an older engine/_kernel.c) and does not run until rebuilt."""
    return _MISSING


def state() -> str:
    """The kernel in a word, for ``tacgrid --version``: ``"active"`` (:func:`available`),
    ``"off"`` (built, switched off by ``TACGRID_NO_KERNEL``), ``"stale"`` (built from an
    older engine/_kernel.c, without the functions :func:`missing` names: rebuild it) or
    ``"not built"`` (no C compiler at install); where not active the numpy and scipy twins
    run, the same answers, slower."""
    if _BUILT is None:
        return "not built"
    if _MISSING:
        return "stale"
    return "active" if enabled else "off"


class Estimate(IntEnum):
    """The A* estimate the C loop works out (engine/_kernel.c's ``H_`` kinds); the numpy
    twin is ``engine.search.frontier._heuristic``."""

    NONE = 0  # no goal (a Dijkstra up to a limit), or landmark terms instead
    MANHATTAN = 1  # no diagonal steps: straight cells to the goal
    CHEBYSHEV = 2  # a diagonal counts as one cell
    ALTERNATE = 3  # 5-10-5: every other diagonal counts double, from the node's parity
    HEX = 4  # cube distance


@dataclass(frozen=True, slots=True)
class Guide:
    """The open-grid estimate: ``kind`` over the map's axes (``staggered``, stagger axis
    ``axis_y``, stagger index ``even``), the goal at ``(goal_u, goal_v)`` on those axes,
    times ``least`` ticks a cell. The default is no estimate."""

    kind: Estimate = Estimate.NONE
    staggered: bool = False
    axis_y: bool = False
    even: bool = False
    least: int = 0
    goal_u: int = 0
    goal_v: int = 0


#: No estimate: a Dijkstra, or landmark terms.
NO_GUIDE = Guide()


@dataclass(frozen=True, slots=True)
class AStarTables:
    """One graph's framed step tables as the C loop reads them (``engine.movement.
    StepTables``; built once per graph). A node is ``layer * pn + framed cell``; a framed
    cell is ``(row + pad) * pw + col + pad``."""

    delta: Any  # int64 (2, slots): each slot's framed offset, per cell parity
    diag: Any  # uint8 (2, slots): whether the slot is a diagonal
    ticks: Any  # int32 (n_sys * pn): ticks to enter a framed cell per system layer, -1: never
    adds: Any  # int32 like ticks, or None: ``cost_add`` ticks
    blocked: Any  # uint16 (pn) or None: bit k = slot k walled off
    in_place_from: Any  # int64 or None: each in-place edge's system layer, from
    in_place_to: Any  # int64 or None: ... to
    in_place_ticks: Any  # int64 or None: ... and its ticks
    jump_sources: Any  # int64 or None: framed nodes with jumps out, sorted
    jump_starts: Any  # int64 (sources + 1): where each source's jumps start in the two below
    jump_targets: Any  # int64: framed node each jump lands on
    jump_ticks: Any  # int64: its ticks
    pn: int  # framed cells a layer
    pw: int  # framed row width
    pad: int  # frame width
    n_par: int  # parity layers (2 under 5-10-5, else 1)
    n_sys: int  # system layers (standing, prone, ...)
    n_states: int  # n_par * n_sys
    square: bool  # a square grid (one offset table for every cell)
    axis_y: bool  # staggered rows (else columns): which coordinate picks the table
    parity_state: bool  # 5-10-5: a diagonal flips the parity layer, every other one doubles
    width: int  # the map's width in cells (landmark fields are on graph node numbers)
    nodes: int  # the graph's nodes a layer (cells)


@dataclass(frozen=True, slots=True)
class AStarArgs:
    """One search: A* from framed node ``src`` to any node on framed cell ``goal_cell``
    (-1: none, a Dijkstra up to ``limit`` ticks, -1: no limit), estimating by ``guide`` or
    else by landmark ``terms`` (each ``(field, offset)``: ``field[v] + offset`` over graph
    nodes). Writes ``dist`` and ``pred`` (int32, a framed node each) and, in ``settled``
    (int32, or None), the nodes expanded in order as far as it holds them. ``far``: a
    landmark estimate this high means the goal cannot be reached from the node."""

    tables: AStarTables
    dist: Any
    pred: Any
    src: int
    goal_cell: int = -1
    limit: int = -1
    guide: Guide = NO_GUIDE
    terms: Sequence[tuple[Any, int]] = ()
    far: int = 2**61
    settled: Any = None


def astar(args: AStarArgs) -> tuple[int, int]:
    """Run engine/_kernel.c's ``search``: the framed goal node reached (-1: none) and how
    many nodes were expanded. Only where :func:`available`."""
    t, g = args.tables, args.guide
    end, expanded = _BUILT.search(
        t.delta,
        t.diag,
        t.ticks,
        t.adds,
        t.blocked,
        args.dist,
        args.pred,
        t.in_place_from,
        t.in_place_to,
        t.in_place_ticks,
        t.jump_sources,
        t.jump_starts,
        t.jump_targets,
        t.jump_ticks,
        t.pn,
        t.pw,
        t.pad,
        t.n_par,
        t.n_sys,
        t.n_states,
        t.delta.shape[1],
        int(t.square),
        int(t.axis_y),
        int(t.parity_state),
        args.src,
        args.goal_cell,
        args.limit,
        int(g.kind),
        int(g.staggered),
        int(g.axis_y),
        int(g.even),
        g.least,
        g.goal_u,
        g.goal_v,
        t.width,
        t.nodes,
        args.far,
        args.terms,
        args.settled,
    )
    return int(end), int(expanded)


def field(
    indptr: Any,
    indices: Any,
    data: Any,
    sources: Any,
    dist: Any,
    steps: Any = None,
    step: float = 1.0,
) -> None:
    """engine/_kernel.c's ``field``: a Dijkstra over a CSR graph (int64 ``indptr``, int32
    ``indices``, float64 ``data``) from every node of ``sources`` (int64) at once into
    ``dist`` (float64, inf where not reached), as scipy's ``dijkstra(min_only=True)`` gives
    it; ``steps`` (int32, or None): each edge as a whole multiple of ``step``, for a bucket
    queue instead of a heap. Only where :func:`available`."""
    _BUILT.field(indptr, indices, data, sources, dist, steps, step)


def held_region(
    indptr: Any, indices: Any, data: Any, start: int, deadline: Any, denominator: float, cap: int
) -> int:
    """engine/_kernel.c's ``held_region``: how many cells a token holds from node
    ``start`` of a CSR graph (int32 or int64 ``indptr`` and ``indices``, float64 ``data``
    in ticks; node ``k`` on cell ``k % n``, ``n = len(deadline)``), entering a node only
    before its cell's ``deadline`` (float64 turns, ticks / ``denominator``); at most
    ``cap`` (0: no cap). Only where :func:`available`."""
    return int(_BUILT.held_region(indptr, indices, data, start, deadline, denominator, cap))


def reach_within(indptr: Any, indices: Any, starts: Any, allowed: Any, out: Any) -> int:
    """engine/_kernel.c's ``reach_within``: the cells reached over a CSR graph (int32 or
    int64 ``indptr`` and ``indices``; node ``k`` on cell ``k % n``, ``n = len(out)``) from the
    nodes ``starts`` (int64), entering only nodes on ``allowed`` cells (bool, one a cell),
    marked in ``out`` (bool, zeroed); returns the nodes reached. Only where
    :func:`available`."""
    return int(_BUILT.reach_within(indptr, indices, starts, allowed, out))


def csv_u32(text: str, out: Any) -> int:
    """engine/_kernel.c's ``csv_u32``: a csv of plain numbers into ``out`` (uint32); how
    many it wrote, -1 where the text is not that (the caller's twin then reads it). Only
    where :func:`available`."""
    return int(_BUILT.csv_u32(text, out))


def field_spread(
    indptr: Any, indices: Any, data: Any, sources: Any, dist: Any, width: float
) -> int:
    """engine/_kernel.c's ``field_spread``: :func:`field`'s distances (the same arrays and
    sources, ``dist`` filled with inf) by buckets ``width`` ticks wide, where every tick is
    finite and at least ``2 * width`` (:func:`engine.sim.spread.spread_width`): a graph
    whose ticks are no whole multiples of one step (a risk-weighted one) without the heap.
    Returns the nodes settled. Only where :func:`available`."""
    return int(_BUILT.field_spread(indptr, indices, data, sources, dist, float(width)))


def json_rows(
    templates: tuple[Any, ...], kind: Any, columns: tuple[Any, ...], lo: int, hi: int
) -> str:
    """engine/_kernel.c's ``json_rows``: rows ``lo``..``hi`` of a table as text, row ``i``
    by template ``kind[i]`` (``kind`` None: template 0), a template ``(parts, refs)``: the
    ASCII ``parts`` with, between them, the values of the columns ``refs`` (a bytes of
    column numbers) names, ints in decimal and float64 as ``float.__repr__`` (``null``
    where not finite). Only where :func:`available`;
    :func:`engine.report.blocktext.rows_plain` is its twin."""
    return str(_BUILT.json_rows(templates, kind, columns, lo, hi))


def pred_chain(pred: Any, node: int, out: Any = None) -> int:
    """engine/_kernel.c's ``pred_chain``: the length of the chain of predecessors from
    ``node`` back to the start (``pred``: int32 or int64, -1 at the start); with ``out``
    (int32 or int64, exactly that long) the chain written into it, start first. Only where
    :func:`available`; :func:`engine.search.frontier.chain_plain` is its twin."""
    return int(_BUILT.pred_chain(pred, node, out))


def field_toward(
    rev: tuple[Any, Any, Any],
    span: int,
    forward: tuple[Any, Any, Any],
    sources: Any,
    start: int,
    width: int,
    n_cells: int,
    kappa: int,
    step: float,
    dist: Any,
    guide: Any = None,
    goff: int = 0,
    order: Any = None,
) -> int:
    """engine/_kernel.c's ``field_toward``: :func:`field`'s distances over the reverse graph
    ``rev`` (int64 ``indptr``, int32 ``indices``, int32 ``steps`` of at most ``span``, each
    a whole multiple of ``step``) from ``sources`` (int64) into ``dist`` (float64, inf),
    settled only as far as the walk down them from node ``start`` over the ``forward``
    graph (int64 ``indptr``, int32 ``indices``, float64 ticks) needs to be the whole
    field's; A* toward ``start``'s cell by ``kappa`` times the Chebyshev distance of
    ``(cell % width, cell // width)``, node ``k`` on cell ``k % n_cells``; ``guide``
    (float64 ticks a node to a landmark, or None) with ``start`` ``goff`` steps from it
    bounds that estimate by ``goff - guide`` steps too; ``order`` (int32, one a node, or
    None) gets the nodes settled, in turn (the only nodes of ``dist`` written). Returns the
    nodes settled. Only where :func:`available`."""
    return int(
        _BUILT.field_toward(
            *rev,
            span,
            *forward,
            sources,
            start,
            width,
            n_cells,
            kappa,
            step,
            dist,
            guide,
            goff,
            order,
        )
    )


def toward_kappa(
    indptr: Any, indices: Any, steps: Any, width: int, n_cells: int
) -> tuple[int, int]:
    """engine/_kernel.c's ``toward_kappa``: for :func:`field_toward` on a graph (int64
    ``indptr``, int32 ``indices``, int32 ``steps``; node ``k`` on cell ``k % n_cells``), the
    most whole steps no edge falls below per cell of Chebyshev distance between its cells
    (-1 where no edge leaves its cell) and the most steps of an edge. Only where
    :func:`available`."""
    kappa, span = _BUILT.toward_kappa(indptr, indices, steps, width, n_cells)
    return int(kappa), int(span)


def claim_reach(
    graph: tuple[Any, Any, Any],
    span: int,
    source: int,
    cells: Any,
    less: Any,
    width: int,
    n_cells: int,
    kappa: int,
    step: float,
    den: float,
    out: Any,
    guide: Any = None,
    goff: int = 0,
) -> int:
    """engine/_kernel.c's ``claim_reach``: :func:`field`'s distances over ``graph`` (int64
    ``indptr``, int32 ``indices``, int32 ``steps`` of at most ``span``, whole multiples of
    ``step``) from node ``source``, as turns over ``den`` on ``cells`` (int64), settled
    only until the cell of the least turns less ``less`` (float64, one a cell) is proven;
    ``out`` (float64, one a cell) gets each cell's exact turns, inf where it is proven
    later than that least. A* toward the box of ``cells`` as :func:`field_toward`; ``guide``
    (float64 ticks a node to a landmark, or None), every node of ``cells`` at most ``goff``
    steps from it, bounds the estimate by ``guide - goff`` steps too. Only where
    :func:`available`."""
    return int(
        _BUILT.claim_reach(
            *graph,
            span,
            source,
            cells,
            less,
            width,
            n_cells,
            kappa,
            step,
            den,
            out,
            guide,
            goff,
        )
    )


def threat_move(
    graph: tuple[Any, Any, Any],
    rev: tuple[Any, Any, Any],
    sources: Any,
    kept: tuple[Any, Any, Any],
    step: float,
    den: float,
    slot: int,
    old_node: int,
) -> int:
    """engine/_kernel.c's ``threat_move``: the least steps from ``sources`` (int64, a slot's
    node or -1) over ``graph`` and its reverse ``rev`` (int64 ``indptr``, int32 ``indices``,
    int32 ``steps``), kept in ``kept`` (int64 node steps, int32 owners, float64 cell turns:
    a cell's least node steps times ``step`` over ``den``) as ``slot`` moves from
    ``old_node`` to ``sources[slot]`` (slot -1: all made from unreached arrays). Returns
    the nodes touched. Only where :func:`available`."""
    return int(_BUILT.threat_move(*graph, *rev, sources, *kept, step, den, slot, old_node))


def objraster_coverage(
    segs: Any,
    cov: Any,
    x0: int,
    y0: int,
    ss: int,
    fill: bool,
    half: float,
    reach: float,
    near: float,
    edge: float,
    inner: float,
) -> int:
    """engine/_kernel.c's ``objraster_coverage``: into ``cov`` (float64, C order, rows x
    columns, its corner pixel at ``(x0, y0)``) the share of each pixel that the segments
    ``segs`` (float64, rows ``ax, ay, bx, by``, coordinates finite) cover, filled even-odd
    (``fill``) or as a stroke ``half`` wide each side; pixels whose centre lies within
    ``edge`` of the border (for a stroke: of ``half``, and farther than ``inner``) sampled
    ``ss`` x ``ss`` times, distances measured as far as ``reach``, a segment tried on a
    pixel's samples where within ``near`` of its centre. Returns the pixels sampled. Only
    where :func:`available`; ``engine.viewer.objraster.coverage_numpy`` is its
    twin."""
    return int(
        _BUILT.objraster_coverage(
            segs, cov, cov.shape[1], x0, y0, ss, int(fill), half, reach, near, edge, inner
        )
    )


def objraster_composite(
    canvas: Any,
    cov: Any,
    at: tuple[int, int],
    src: tuple[float, float, float],
    k: float,
    opacity: float,
) -> int:
    """engine/_kernel.c's ``objraster_composite``: the straight colour ``src`` (0..1) at
    alpha ``cov * k * opacity`` over the premultiplied ``canvas`` (float64, C order, rows x
    columns x 4) where ``cov`` (float64, C order), placed at column, row ``at``, is not 0.
    Returns those pixels. Only where :func:`available`;
    ``engine.viewer.objraster.composite_numpy`` is its twin."""
    return int(
        _BUILT.objraster_composite(
            canvas, canvas.shape[1], cov, cov.shape[1], at[0], at[1], *src, k, opacity
        )
    )


def objraster_pixels(canvas: Any, out: Any, pitch: int, shifts: tuple[int, int, int, int]) -> bool:
    """engine/_kernel.c's ``objraster_pixels``: whether any pixel of the premultiplied
    ``canvas`` (float64, C order, rows x columns x 4, 0..1) has an alpha other than 0; with
    ``out`` (a writable buffer of ``pitch`` bytes a row: a 32-bit surface's pixels), its
    pixels written there, each channel 255 times the canvas rounded half to even and
    clamped, shifted left by ``shifts`` (red, green, blue, alpha). Only where
    :func:`available`; ``engine.viewer.objraster.layer_numpy`` is its twin."""
    return bool(_BUILT.objraster_pixels(canvas, canvas.shape[1], out, pitch, *shifts))


def descend(
    indptr: Any, indices: Any, data: Any, dist: Any, node: int, most: int
) -> list[tuple[int, float] | None]:
    """engine/_kernel.c's ``descend``: the steps down the field ``dist`` (float64, one a
    node) of a CSR graph (``indptr`` int64, ``indices`` int32, ``data`` float64) from
    ``node``, each ``(next node, ticks)`` as ``engine.sim.fields.Field.step`` takes it, or
    None where there is none (the last); on from each next node while its distance is above
    0, at most ``most``. Only where :func:`available`; ``Field.step``'s own loop is its
    twin."""
    return list(_BUILT.descend(indptr, indices, data, dist, node, most))


def flee_scan(
    mine: Any, threat: Any, taken: Any, cross: int, cross_cost: float, safe: Any
) -> tuple[int, int, int, int, float]:
    """engine/_kernel.c's ``flee_scan``: of a quarry's turns ``mine`` and the pursuers'
    ``threat`` (float64, one a cell), the cells ``taken`` (int64) left out: how many cells
    it reaches this turn, how many of them it wrote into ``safe`` (int64, one a cell: those
    no pursuer reaches in its next move), the one of this turn farthest from the pursuers
    (-1: none), and the refuge beyond this turn with its cost (``cross_cost`` on the cell
    ``cross``; -1: none). Only where :func:`available`; ``engine.sim.flee.flee_scan_plain``
    is its twin."""
    near, count, farthest, beyond, cost = _BUILT.flee_scan(
        mine, threat, taken, cross, cross_cost, safe
    )
    return int(near), int(count), int(farthest), int(beyond), float(cost)


def flee_picks(
    safe: Any, sector: Any, mine: Any, threat: Any, sectors: int, limit: int, picks: Any
) -> int:
    """engine/_kernel.c's ``flee_picks``: the farthest cell of ``safe`` (int64) in each
    direction (``sector``, int64 from 0 to ``sectors - 1``), at most ``limit`` of them
    written into ``picks`` (int64), the farthest from the pursuers first; how many. Only
    where :func:`available`; ``engine.sim.flee.sector_picks_plain`` is its twin."""
    return int(_BUILT.flee_picks(safe, sector, mine, threat, sectors, limit, picks))


def field_upto(
    indptr: Any,
    indices: Any,
    steps: Any,
    span: int,
    sources: Any,
    dist: Any,
    step: float,
    stop: int,
    after: float,
) -> float:
    """engine/_kernel.c's ``field_upto``: :func:`field`'s distances over whole ``steps``
    (int32) where no edge has more than ``span`` of them (ValueError at one that does),
    without a pass over the edges to find that first, into ``dist``, settled up to the
    bucket of node ``stop`` (-1: all), going on from ``after`` (-1.0: a fresh field,
    ``dist`` filled with inf); the greatest distance settled, inf where the field is whole.
    Only where :func:`available`; :func:`field` is its twin."""
    return float(_BUILT.field_upto(indptr, indices, steps, span, sources, dist, step, stop, after))


def field_spread_upto(
    indptr: Any,
    indices: Any,
    data: Any,
    most: float,
    sources: Any,
    dist: Any,
    width: float,
    stop: int,
    after: float,
) -> float:
    """engine/_kernel.c's ``field_spread_upto``: :func:`field_spread`'s distances where no
    edge takes more than ``most`` ticks (ValueError at one that does), without a pass over
    the edges first, grown as :func:`field_upto`'s. Only where :func:`available`;
    :func:`field_spread` is its twin."""
    return float(
        _BUILT.field_spread_upto(indptr, indices, data, most, sources, dist, width, stop, after)
    )
