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
from engine.search.steps import Spans, StepColumns, Steps, StepSpans
from engine.systems.base import CellCheck
from engine.timed import timeline


@dataclass
class Priced:
    """A path's steps as priced, before climbs and per-turn checks are weighed: its
    :class:`Steps` (checks on the steps that ask them), each step's span in ticks
    (:class:`Spans`), the checks asked ``(step, check)`` in step order, the total in
    ticks, the distance in cells and the product of the asked checks' odds."""

    steps: Steps
    spans: Spans
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


#: Steps priced a chunk at a time: the temporaries of the pricing (offsets, parities, run
#: keys) are a chunk's, not a maze path's millions of steps.
CHUNK_STEPS = 1 << 20


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
        del keep
    g = graph.grid
    w, n, den = g.width, graph.n, graph.denominator
    s = graph.search.start
    m = idx.size - 1  # the steps after the start
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
    ticks_of = graph.state_ticks[s]
    add_of = graph.state_add[s] if graph.state_add is not None else None
    costs = graph.state_costs[s]
    n_t = len(costs)
    tids_of = graph.model.terrain_ids.ravel()
    has_check = np.array([c.check is not None for c in costs], dtype=bool)
    num = np.array([0 if p is None else p.numerator for p in graph.check_period[:n_t]])
    dnm = np.array([0 if p is None else p.denominator for p in graph.check_period[:n_t]])
    d_max = int(dnm.max(initial=1))
    dearest = 2 * int(ticks_of.max(initial=0))
    dearest += int(add_of.max(initial=0)) if add_of is not None else 0
    cost = np.empty(m, dtype=np.int32 if dearest < 2**31 else np.int64)
    total = np.empty(m, dtype=np.int64)
    tid = np.empty(m, dtype=np.int8 if n_t <= 2**7 else np.int16 if n_t <= 2**15 else np.int32)
    cut = np.array([a * n + b for a, b in graph.cut], dtype=np.int64) if graph.cut else None
    # What carries from one chunk to the next: the diagonals' parity, the running total,
    # the last step's run key and move (a check is asked where either changes).
    odd, done, seconds = 0, 0, 0
    prev_key, prev_move = int(graph.run_key[idx[0]]), 0
    asked_parts: list[np.ndarray] = []
    for lo in range(0, m, CHUNK_STEPS):
        hi = min(m, lo + CHUNK_STEPS)
        src, dst = idx[lo:hi], idx[lo + 1 : hi + 1]
        r_src, c_src = np.divmod(src, w)
        drow, dcol = np.divmod(dst, w)
        dcol -= c_src
        drow -= r_src
        if np.abs(dcol).max() > reach or np.abs(drow).max() > reach:
            return None
        code = dcol
        code += reach
        code *= span
        code += drow
        code += reach
        del drow
        if g.kind == "square":
            par_src: Any = 0
        else:
            par_src = (r_src if g.stagger_axis == "y" else c_src) & 1
        del r_src, c_src
        slot = slot_lut[par_src, code]
        diag = diag_lut[par_src, code]
        del par_src, code
        ticks = ticks_of[dst]
        if (slot < 0).any() or (ticks < 0).any():
            return None
        if graph.step_bits is not None:
            bits = graph.step_bits[src].astype(np.int64)
            if ((bits >> slot) & 1).any():
                return None
            del bits
        if cut is not None:
            pairs = src.astype(np.int64) * n + dst
            if np.isin(pairs, cut).any():
                return None
            del pairs
        del slot
        # The 5-10-5 parity before each step: the diagonals taken before it, odd or even.
        if graph.parity_state:
            parity = np.cumsum(diag, dtype=np.int64)
            parity -= diag
            parity += odd
            parity &= 1
            second = diag & (parity == 1)
            odd = (odd + int(np.count_nonzero(diag))) & 1
            del parity
            ticks[second] *= 2
            seconds += int(np.count_nonzero(second))
            del second
        del diag
        if add_of is not None:
            ticks += add_of[dst]
        cost[lo:hi] = ticks
        np.cumsum(ticks, out=ticks)
        ticks += done
        total[lo:hi] = ticks
        done = int(ticks[-1])
        t = tids_of[dst]
        tid[lo:hi] = t
        # Checks: where the terrain asks one and the run key or the move changes.
        key = graph.run_key[dst]
        if has_check[t].any():
            if done * d_max >= 2**62:
                return None
            pn, pd = num[t].astype(np.int64), dnm[t].astype(np.int64)
            periodic = pn > 0
            move = np.full(t.size, -1, dtype=np.int64)  # -1: once per run (None)
            move[periodic] = -(-(ticks[periodic] * pd[periodic]) // (den * pn[periodic]))
            changed = np.empty(t.size, dtype=bool)
            changed[0] = int(key[0]) != prev_key or int(move[0]) != prev_move
            changed[1:] = (key[1:] != key[:-1]) | (move[1:] != move[:-1])
            asked_parts.append(np.flatnonzero(has_check[t] & changed) + lo)
            del pn, pd, periodic, move, changed
        last = int(t[-1])
        prev_key = int(key[-1])
        prev_move = -1 if not num[last] else -(-(done * int(dnm[last])) // (den * int(num[last])))
        del ticks, t, key
    asked_at = np.concatenate(asked_parts) if asked_parts else np.zeros(0, dtype=np.int64)
    start = (int(idx[0] % w), int(idx[0] // w))
    steps = StepColumns(
        idx, w, graph.model.terrain_at(start).move, tid,
        [(c.terrain.move, c.terrain.name) for c in costs], total, cost, den,
    )  # fmt: skip
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
    end = int(total[-1]) if total.size else 0
    return Priced(steps, StepSpans(steps, s), asked, end, m + seconds, p_ok)
