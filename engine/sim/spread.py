"""Distance fields by buckets instead of a heap: over ticks that are no whole multiples of
one step (a risk-weighted graph: each check's expected delay added to the ticks of
entering its cell), Dinitz's buckets (engine/_kernel.c ``field_spread``); over whole steps,
Dial's (:func:`whole_field`, the kernel's ``field``).

The seam: :func:`spread_width` says whether a graph's ticks allow it and how wide a
bucket is; :func:`spread_field` fills the field, by the buckets where the kernel has
them, else by the plain Dijkstra (:func:`plain_field`: the kernel's heap, or scipy's).
Every correct Dijkstra gives the same floating-point distances (each the least of the
rounded sums ``d[u] + t`` over final ``d[u]``; rounding is monotone), so both ways give
the same field bit for bit (tests/test_spread_fields.py).

A second seam, :data:`LEAN`: the kernel's ``field`` and ``field_spread`` read every edge
before they search, to find the most steps or ticks of one (on a chase's map, a pass as
long as the search). Given that bound (:func:`edge_bound`, worked out once per graph by
its caller), ``field_upto`` and ``field_spread_upto`` (given no node to stop at, the
whole search) search at once, each edge checked against it as it is read: the same
distances, bit for bit (tests/test_goalfast.py)."""

from __future__ import annotations

import numpy as np

from engine import kernel

#: The most buckets a field may number (engine/_kernel.c ``SPREAD_MOST_BUCKETS``).
MOST_BUCKETS = float(1 << 40)

#: Whether a field given its graph's :func:`edge_bound` takes the kernel's lean buckets
#: (``field_upto``, ``field_spread_upto``, whole); off: ``field`` and ``field_spread``, the
#: plain way, which find the bound in every field.
LEAN = True


def edge_bound(data: np.ndarray, steps: np.ndarray | None) -> float:
    """The most ``steps`` of an edge (whole, where given), else the most ``data`` ticks (0
    for a graph without edges): what the lean buckets take (:data:`LEAN`)."""
    ticks = data if steps is None else steps
    return float(ticks.max()) if ticks.size else 0.0


def whole_field(
    indptr: np.ndarray,
    indices: np.ndarray,
    data: np.ndarray,
    steps: np.ndarray,
    step: float,
    sources: np.ndarray,
    dist: np.ndarray,
    bound: float | None = None,
) -> None:
    """The kernel's ``field`` over whole ``steps`` (int32, each edge's ``data`` over
    ``step``) from ``sources`` (int64) into ``dist`` (float64, filled with inf): by the lean
    buckets where ``bound`` (:func:`edge_bound`) is given and :data:`LEAN`. Only where
    :func:`engine.kernel.available`."""
    if LEAN and bound is not None and kernel.available():
        kernel.field_upto(indptr, indices, steps, int(bound), sources, dist, step, -1, -1.0)
    else:
        kernel.field(indptr, indices, data, sources, dist, steps, step)


def spread_width(data: np.ndarray, nodes: int) -> float:
    """The bucket width ``field_spread`` takes for a graph of ``nodes`` nodes whose edges
    take ``data`` ticks: half the least tick, so that every edge reaches at least one
    bucket further; 0.0 where buckets do not apply (no edge, a tick not finite or not
    above 0, or more buckets than :data:`MOST_BUCKETS`)."""
    if not data.size or not bool(np.all(np.isfinite(data))):
        return 0.0
    least, most = float(data.min()), float(data.max())
    if not least > 0.0:
        return 0.0
    width = least / 2.0
    if (nodes + 1) * (most / width + 2.0) >= MOST_BUCKETS:
        return 0.0
    return width


def plain_field(
    indptr: np.ndarray, indices: np.ndarray, data: np.ndarray, sources: np.ndarray, dist: np.ndarray
) -> None:
    """The plain way: a heap's Dijkstra into ``dist`` (the kernel's ``field``, else
    scipy's ``dijkstra(min_only=True)``)."""
    if kernel.available():
        kernel.field(indptr, indices, data, sources, dist)
        return
    from scipy.sparse import csr_array
    from scipy.sparse.csgraph import dijkstra

    n = len(dist)
    graph = csr_array((data, indices, indptr), shape=(n, n))
    if len(sources):
        dist[:] = dijkstra(graph, indices=sources.tolist(), min_only=True)


def spread_field(
    indptr: np.ndarray,
    indices: np.ndarray,
    data: np.ndarray,
    sources: np.ndarray,
    dist: np.ndarray,
    width: float,
    most: float | None = None,
) -> None:
    """Ticks from the nearest of ``sources`` (int64 nodes) to every node into ``dist``
    (float64, filled with inf) over the CSR arrays (``indptr`` int64, ``indices`` int32,
    ``data`` float64), ``width`` being :func:`spread_width`'s: by buckets where the kernel
    has them and ``width`` > 0 (the lean ones where ``most``, :func:`edge_bound`, is given
    and :data:`LEAN`), else :func:`plain_field`; the same distances either way."""
    if width > 0.0 and LEAN and most is not None and kernel.available():
        kernel.field_spread_upto(indptr, indices, data, most, sources, dist, width, -1, -1.0)
    elif width > 0.0 and kernel.available():
        kernel.field_spread(indptr, indices, data, sources, dist, width)
    else:
        plain_field(indptr, indices, data, sources, dist)
