"""The bounded searches of the C kernel (``field_toward``, ``claim_reach``, ``threat_move``)
take their keys from a ring of buckets with a heap for keys past it; on random grid graphs
whose steps go from one to thousands (keys far past the ring) as well as one or two (the
open maps' steps), with and without a landmark's bound, each gives what the plain
Dijkstra (scipy's) gives: the settled distances, the walk down the field, the claimed
cells' turns and the kept least turns, bit for bit. The kernel keeps its search arrays
between calls: searches on graphs of different sizes, one after another, stay exact."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.sparse import csr_array
from scipy.sparse.csgraph import dijkstra

from engine import kernel
from engine.sim.fields import _kernel_csr

needs_toward = pytest.mark.skipif(not kernel.available(), reason=f"kernel {kernel.state()}")

#: Each kind's steps of an edge: an open map's (one or two), up to thousands (keys far past
#: the ring), a few tens, and steps about the ring's size (engine/_kernel.c ``KQ_RING``)
#: and twice it, where a key lands on the bucket under way.
KINDS = {
    "open": (1, 2),
    "wide": tuple(range(1, 3001)),
    "mixed": tuple(range(1, 41)),
    "ring": (1, 2, 1022, 1023, 1024, 1025, 2047, 2048, 2049),
}


def _grid_graph(rng: np.random.Generator, kind: str) -> tuple[csr_array, int, int, float]:
    """A random graph on a ``width`` x ``height`` grid of cells with 1 or 2 states a cell
    (node ``k`` on cell ``k % n_cells``), edges to cells up to two apart, ticks of whole
    steps times ``step``: (graph, width, n_cells, step)."""
    width, height = (int(v) for v in rng.integers(2, 24, size=2))
    n_cells = width * height
    states = int(rng.integers(1, 3))
    step = float(rng.choice([1.0, 3.0]))
    rows, cols = [], []
    for v in range(n_cells * states):
        c = v % n_cells
        x, y = c % width, c // width
        for dx in range(-2, 3):
            for dy in range(-2, 3):
                tx, ty = x + dx, y + dy
                if (dx or dy) and 0 <= tx < width and 0 <= ty < height and rng.random() < 0.5:
                    rows.append(v)
                    cols.append(tx + ty * width + n_cells * int(rng.integers(states)))
    pairs = sorted(set(zip(rows, cols, strict=True)))
    n = n_cells * states
    if not pairs:
        return csr_array((n, n)), width, n_cells, step
    r, c = (np.array(a, dtype=np.int64) for a in zip(*pairs, strict=True))
    data = rng.choice(KINDS[kind], size=len(r)).astype(np.float64) * step
    return csr_array((data, (r, c)), shape=(n, n)), width, n_cells, step


def _arrays(graph: csr_array, step: float) -> tuple[np.ndarray, ...]:
    """The kernel's arrays of ``graph``: indptr, indices, ticks and steps of ``step`` ticks."""
    indptr, indices, data, _, _ = _kernel_csr(graph)
    return indptr, indices, data, np.round(data / step).astype(np.int32)


def _bound(arrays: tuple[np.ndarray, ...], width: int, n_cells: int) -> tuple[int, int]:
    indptr, indices, _, steps = arrays
    kappa, span = kernel.toward_kappa(indptr, indices, steps, width, n_cells)
    return max(kappa, 0), span


def _landmark(rng: np.random.Generator, graph: csr_array, n_cells: int) -> np.ndarray | None:
    """Ticks from every node to a random cell's nodes (a field to one cell: the landmark the
    searches are bounded by), or None."""
    if rng.random() < 0.4:
        return None
    cell = int(rng.integers(n_cells))
    nodes = list(range(cell, graph.shape[0], n_cells))
    return np.ascontiguousarray(dijkstra(graph.T.tocsr(), indices=nodes, min_only=True))


def _walk(forward: tuple[np.ndarray, ...], dist: np.ndarray, node: int) -> list[int]:
    """The way down ``dist`` from ``node`` as Field.step takes it: the least ticks plus
    distance, ties to the first edge, while the distance is above 0."""
    indptr, indices, data = forward[:3]
    way = [node]
    for _ in range(len(dist)):
        if not dist[node] > 0:
            break
        heads = indices[indptr[node] : indptr[node + 1]]
        if not len(heads):
            break
        total = data[indptr[node] : indptr[node + 1]] + dist[heads]
        k = int(np.argmin(total))
        if not np.isfinite(total[k]):
            break
        node = int(heads[k])
        way.append(node)
    return way


@needs_toward
@pytest.mark.parametrize("kind", sorted(KINDS))
def test_field_toward_settles_the_whole_fields_distances_and_walk(kind: str) -> None:
    rng = np.random.default_rng(sorted(KINDS).index(kind))
    partial = 0
    for _ in range(60):
        graph, width, n_cells, step = _grid_graph(rng, kind)
        n = graph.shape[0]
        rev = graph.T.tocsr()
        fwd, back = _arrays(graph, step), _arrays(rev, step)
        kappa, span = _bound(back, width, n_cells)
        sources = np.unique(rng.integers(0, n, size=int(rng.integers(1, 4)))).astype(np.int64)
        whole = dijkstra(rev, indices=sources.tolist(), min_only=True)
        start = int(rng.integers(n))
        mark = _landmark(rng, graph, n_cells)
        guide, goff = None, 0
        if mark is not None and np.isfinite(mark[start]):
            guide, goff = mark, int(mark[start] // step)
        dist = np.full(n, np.inf)
        order = np.full(n, -1, np.int32)
        settled = kernel.field_toward(
            (back[0], back[1], back[3]), span, fwd[:3], sources, start, width, n_cells,
            kappa, step, dist, guide, goff, order,
        )  # fmt: skip
        done = np.isfinite(dist)
        assert settled == int(done.sum())
        # order: the settled nodes, each once
        assert sorted(order[:settled]) == np.flatnonzero(done).tolist()
        if kappa == 0 and guide is None:  # no estimate: settled by distance
            assert (np.diff(dist[order[:settled]]) >= 0).all()
        assert np.array_equal(dist[done], whole[done])
        if np.isfinite(whole[start]):
            assert done[start]
            assert _walk(fwd, dist, start) == _walk(fwd, whole, start)
        partial += int(settled < np.isfinite(whole).sum())
    assert partial > 20  # most searches stop before the whole field


@needs_toward
@pytest.mark.parametrize("kind", sorted(KINDS))
def test_claim_reach_is_exact_where_the_least_late_may_be(kind: str) -> None:
    rng = np.random.default_rng(10 + sorted(KINDS).index(kind))
    den = 6.0
    for _ in range(60):
        graph, width, n_cells, step = _grid_graph(rng, kind)
        n = graph.shape[0]
        fwd = _arrays(graph, step)
        kappa, span = _bound(fwd, width, n_cells)
        source = int(rng.integers(n))
        ticks = dijkstra(graph, indices=source)
        plain = ticks.reshape(-1, n_cells).min(axis=0) / den
        cells = np.unique(rng.integers(0, n_cells, size=int(rng.integers(1, 30))))
        less = rng.uniform(0, plain[np.isfinite(plain)].max() + 1, size=len(cells))
        mark = _landmark(rng, graph, n_cells)
        guide, goff = None, 0
        if mark is not None:
            reach = mark.reshape(-1, n_cells)[:, cells]
            if np.isfinite(reach).all():
                guide, goff = mark, int(reach.max() // step)
        out = np.empty(len(cells))
        kernel.claim_reach(
            (fwd[0], fwd[1], fwd[3]), span, source, cells.astype(np.int64), less, width,
            n_cells, kappa, step, den, out, guide, goff,
        )  # fmt: skip
        exact = np.isfinite(out)
        assert np.array_equal(out[exact], plain[cells][exact])
        late = plain[cells] - less
        if np.isfinite(late).any():
            assert exact[late == late.min()].all()
            assert (late[~exact] > late.min()).all()


@needs_toward
@pytest.mark.parametrize("kind", sorted(KINDS))
def test_threat_move_keeps_the_least_steps_of_moving_sources(kind: str) -> None:
    rng = np.random.default_rng(20 + sorted(KINDS).index(kind))
    den = 6.0
    for _ in range(12):
        graph, _, n_cells, step = _grid_graph(rng, kind)
        n = graph.shape[0]
        fwd, back = _arrays(graph, step), _arrays(graph.T.tocsr(), step)
        slots = int(rng.integers(1, 6))
        sources = rng.integers(0, n, size=slots).astype(np.int64)
        kept = (
            np.full(n, np.iinfo(np.int64).max, dtype=np.int64),
            np.full(n, -1, dtype=np.int32),
            np.full(n_cells, np.inf),
        )
        g3, r3 = (fwd[0], fwd[1], fwd[3]), (back[0], back[1], back[3])
        kernel.threat_move(g3, r3, sources, kept, step, den, -1, -1)
        for _ in range(25):
            slot = int(rng.integers(slots))
            old = int(sources[slot])
            sources[slot] = -1 if rng.random() < 0.15 else int(rng.integers(n))
            kernel.threat_move(g3, r3, sources, kept, step, den, slot, old)
            on = sources[sources >= 0]
            want = np.full(n_cells, np.inf)
            if len(on):
                ticks = dijkstra(graph, indices=on.tolist(), min_only=True)
                least = (ticks / step).reshape(-1, n_cells).min(axis=0)
                want = np.where(np.isfinite(least), least * step / den, np.inf)
            assert np.array_equal(kept[2], want)
