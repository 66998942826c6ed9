"""A path's steps priced in numpy, a column per figure (:func:`priced_columns`), where the
plain way (:func:`engine.search.odds.evaluate_path`'s step loop) walks it a step at a time.

The seam: :class:`Priced` is what either way hands on (the step table, each step's span,
the checks asked, the totals); :func:`priced_columns` answers None where its graph asks
for what only the plain way prices (in-place state changes, jumps, the euclid rule, a
timed pace, a step it cannot take: the plain way then says why), so it is never asked to
be right where it was not proved. tests/test_long_path.py holds the two equal, record for
record, on every shipped map and on random paths.

Each step is read as :meth:`MovementGraph.walk` reads it (its slot in the grid's offsets,
the ticks of the cell it enters, the 5-10-5 parity of the diagonals before it) and priced
as the loop prices it: cumulative ticks by a running sum of ints (exact), turns and times
as the same int-by-int divisions, a check where its terrain asks one and the run key or the
move changes, the move counted as the loop counts it (``ceil(ticks / (den * period))``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import numpy as np

from engine.grid import Cell
from engine.movement import MovementGraph
from engine.search.cellpath import CellPath
from engine.search.steps import SpanTable, StepTable
from engine.systems.base import CellCheck
from engine.timed import timeline


@dataclass
class Priced:
    """A path's steps as priced, before climbs and per-turn checks are weighed: its
    :class:`StepTable` (checks on the steps that ask them), each step's span in ticks
    (:class:`SpanTable`), the checks asked ``(step, check)`` in step order, the total in
    ticks, the distance in cells and the product of the asked checks' odds."""

    steps: StepTable
    spans: SpanTable
    asked: list[tuple[int, CellCheck]]
    total: Any
    distance_cells: Any
    p_ok: Fraction


def _index_of(graph: MovementGraph, cells: Sequence[Cell]) -> np.ndarray | None:
    """The cells' row-major indices (int64), None where one is off the map."""
    g = graph.grid
    if isinstance(cells, CellPath) and cells.width == g.width:
        return cells.flat
    arr = np.array([(c[0], c[1]) for c in cells], dtype=np.int64).reshape(-1, 2)
    if arr.size and not (
        (arr[:, 0] >= 0).all()
        and (arr[:, 0] < g.width).all()
        and (arr[:, 1] >= 0).all()
        and (arr[:, 1] < g.height).all()
    ):
        return None
    return arr[:, 1] * g.width + arr[:, 0]


def priced_columns(graph: MovementGraph, cells: Sequence[Cell]) -> Priced | None:  # noqa: C901
    """The steps of ``cells`` priced in numpy (see the module); None where the plain way
    must price them."""
    if graph.in_place or graph.jumps or graph.euclid or timeline(graph) is not None:
        return None
    if not len(cells):
        return None
    idx = _index_of(graph, cells)
    if idx is None:
        return None
    # Cell indices and their offsets in 32 bits where the map allows (a maze's path has
    # millions of steps: each such column is one more copy of it).
    idx = idx.astype(np.int32 if graph.n < 2**31 else np.int64, copy=False)
    if idx.size > 1:
        # A cell given twice in a row is no step (the walk skips it).
        keep = np.empty(idx.size, dtype=bool)
        keep[0] = True
        np.not_equal(idx[1:], idx[:-1], out=keep[1:])
        if not keep.all():
            idx = idx[keep]
    g = graph.grid
    w, n, den = g.width, graph.n, graph.denominator
    s = graph.search.start
    src, dst = idx[:-1], idx[1:]
    # The slot of each step in its source cell's offsets (by stagger parity), via a table
    # of every (dcol, drow) a step can make.
    reach = max(max(abs(o[0]), abs(o[1])) for par in (0, 1) for o in g.offsets(par))
    span = 2 * reach + 1
    slot_lut = np.full((2, span * span), -1, dtype=np.int8)
    diag_lut = np.zeros((2, span * span), dtype=bool)
    for par in (0, 1):
        for k, (oc, orow, d) in enumerate(g.offsets(par)):
            slot_lut[par, (oc + reach) * span + orow + reach] = k
            diag_lut[par, (oc + reach) * span + orow + reach] = bool(d)
    c_src, r_src = src % w, src // w
    dcol = dst % w - c_src
    drow = dst // w - r_src
    if dcol.size and (np.abs(dcol).max() > reach or np.abs(drow).max() > reach):
        return None
    code = (dcol + reach) * span + drow + reach
    del dcol, drow
    if g.kind == "square":
        par_src = np.zeros(src.size, dtype=np.int8)
    else:
        par_src = (r_src if g.stagger_axis == "y" else c_src) & 1
    del c_src, r_src
    slot = slot_lut[par_src, code]
    diag = diag_lut[par_src, code]
    del par_src, code
    ticks = graph.state_ticks[s][dst]
    if (slot < 0).any() or (ticks < 0).any():
        return None
    if graph.step_bits is not None:
        bits = graph.step_bits[src].astype(np.int64)
        if ((bits >> slot) & 1).any():
            return None
    if graph.cut:
        pairs = src.astype(np.int64) * n + dst
        cut = np.array([a * n + b for a, b in graph.cut], dtype=np.int64)
        if np.isin(pairs, cut).any():
            return None
    del slot
    # The 5-10-5 parity before each step: the diagonals taken before it, odd or even.
    if graph.parity_state:
        parity = np.cumsum(diag, dtype=np.int64)
        parity -= diag
        parity &= 1
        second = diag & (parity == 1)
        del parity
    else:
        second = np.zeros(diag.size, dtype=bool)
    cost = ticks
    cost[second] *= 2
    if graph.state_add is not None:
        cost += graph.state_add[s][dst]
    distance = int(dst.size + np.count_nonzero(second))
    del second, diag
    total = np.cumsum(cost, dtype=np.int64)
    tid = graph.model.terrain_ids.ravel()[dst].astype(np.int32)
    costs = graph.state_costs[s]
    n_t = len(costs)
    # Checks: where the terrain asks one and the run key or the move changes.
    has_check = np.array([c.check is not None for c in costs], dtype=bool)
    asked_at = np.zeros(0, dtype=np.int64)
    if has_check[tid].any():
        key = graph.run_key[dst].astype(np.int64)
        prev_key = np.empty_like(key)
        prev_key[0] = int(graph.run_key[idx[0]])
        prev_key[1:] = key[:-1]
        num = np.array([0 if p is None else p.numerator for p in graph.check_period[:n_t]])
        dnm = np.array([0 if p is None else p.denominator for p in graph.check_period[:n_t]])
        if total.size and int(total[-1]) * int(dnm.max(initial=1)) >= 2**62:
            return None
        pn, pd = num[tid].astype(np.int64), dnm[tid].astype(np.int64)
        periodic = pn > 0
        move = np.full(total.size, -1, dtype=np.int64)  # -1: once per run (None)
        move[periodic] = -(-(total[periodic] * pd[periodic]) // (den * pn[periodic]))
        prev_move = np.empty_like(move)
        prev_move[0] = 0
        prev_move[1:] = move[:-1]
        asks = has_check[tid] & ((key != prev_key) | (move != prev_move))
        asked_at = np.flatnonzero(asks)
        del key, prev_key, move, prev_move, pn, pd, periodic, asks
    steps = StepTable.of_columns(
        (idx[0] % w, idx[0] // w),
        graph.model.terrain_at((int(idx[0] % w), int(idx[0] // w))).move,
        dst % w,
        dst // w,
        tid,
        [(c.terrain.move, c.terrain.name) for c in costs],
        total,
        cost,
        den,
    )
    asked: list[tuple[int, CellCheck]] = []
    p_ok = Fraction(1)
    counts: dict[int, int] = {}
    for i, t in zip(asked_at.tolist(), tid[asked_at].tolist(), strict=True):
        check = costs[t].check
        assert check is not None
        asked.append((i + 1, check))
        steps.checks[i + 1] = check.to_dict()
        counts[t] = counts.get(t, 0) + 1
    for t, k in counts.items():
        check = costs[t].check
        assert check is not None
        p_ok *= check.p_success**k
    spans = SpanTable.of_columns(total - cost, total, tid, s)
    end = int(total[-1]) if total.size else 0
    return Priced(steps, spans, asked, end, distance, p_ok)
