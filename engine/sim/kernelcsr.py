"""A compiled graph's arrays as engine/_kernel.c's field functions read them (the fields'
Dijkstra, :class:`engine.sim.fields.Profile`), and whether its ticks are whole numbers."""

from __future__ import annotations

from typing import Any

import numpy as np

from engine.sim.spread import spread_width

#: The most steps of an edge for engine/_kernel.c's bucket queue (buckets a field).
_MOST_STEPS = 1 << 16


def _whole_ticks(data: np.ndarray, nodes: int) -> tuple[np.ndarray, int] | None:
    """A graph's edge ticks as whole numbers (int64) and their greatest common divisor (1
    where all are 0), where every tick is a whole number >= 0 and no path of ``nodes``
    nodes can sum past 2**52 (exact in floating point); else None."""
    if not (
        data.size
        and data.dtype == np.float64
        and bool(np.all(np.isfinite(data)))
        and bool(np.all(data >= 0))
        and bool(np.all(data == np.floor(data)))
        and float(data.max()) * (nodes + 1) < 2.0**52
    ):
        return None
    whole = data.astype(np.int64)
    return whole, int(np.gcd.reduce(whole)) or 1


def _kernel_csr(matrix: Any) -> tuple[Any, ...]:
    """A CSR matrix as engine/_kernel.c's field() reads it: indptr (int64), indices (int32:
    the matrix's own where they are, as scipy makes them below 2**31 edges), the ticks
    (float64), and where every tick is a whole multiple of one step (the usual case) the
    ticks in steps (int32) and the step, so a bucket queue runs; else None and the width of
    engine.sim.spread's buckets (0.0: none, the heap)."""
    data = np.ascontiguousarray(matrix.data, dtype=np.float64)
    steps, step = None, 1.0
    whole = _whole_ticks(data, matrix.shape[0])
    if whole is not None and int(whole[0].max()) // whole[1] <= _MOST_STEPS:
        ticks = whole[0] if whole[1] == 1 else whole[0] // whole[1]  # (no pass to divide by 1)
        steps, step = ticks.astype(np.int32), float(whole[1])
    else:
        step = spread_width(data, matrix.shape[0])
    return (
        np.ascontiguousarray(matrix.indptr, dtype=np.int64),
        np.ascontiguousarray(matrix.indices, dtype=np.int32),
        data,
        steps,
        step,
    )
