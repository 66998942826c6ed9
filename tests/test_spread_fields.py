"""Fields over ticks that are no whole multiples of one step (engine.sim.spread: the C
kernel's ``field_spread``, Dinitz's buckets) equal the plain Dijkstra's (scipy's
``dijkstra(min_only=True)``, the kernel's heap) bit for bit: on random graphs of
fractional ticks, on the square chase's risk-weighted graphs, and with the kernel off."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from scipy.sparse import csr_array
from scipy.sparse import random as sparse_random
from scipy.sparse.csgraph import dijkstra

from engine import kernel
from engine.sim import spread
from engine.sim.fields import _kernel_csr

needs_spread = pytest.mark.skipif(not kernel.available(), reason=f"kernel {kernel.state()}")
ROOT = Path(__file__).resolve().parents[1]


def _random_graph(rng: np.random.Generator, kind: str) -> csr_array:
    n = int(rng.integers(1, 300))
    m = sparse_random(n, n, density=float(rng.uniform(0.005, 0.1)), format="csr", rng=rng)
    if kind == "thirds":  # a check's expected delay: sums that round
        m.data = 381.0 + np.round(m.data * 40) * (1000.0 / 27)
    elif kind == "spread":  # ticks from 1 to 1000 apart: many buckets a tick
        m.data = 0.5 + m.data * 1000.0
    else:  # near-equal ticks: ties everywhere
        m.data = 1.0 + np.round(m.data * 3) / 7
    return csr_array(m)


@needs_spread
@pytest.mark.parametrize("kind", ["thirds", "spread", "ties"])
def test_random_graphs_give_scipys_fields_bit_for_bit(kind: str) -> None:
    rng = np.random.default_rng(["thirds", "spread", "ties"].index(kind))
    spread_runs = 0
    for _ in range(150):
        graph = _random_graph(rng, kind)
        n = graph.shape[0]
        sources = rng.integers(0, n, size=int(rng.integers(1, 4)))
        indptr, indices, data, steps, width = _kernel_csr(graph)
        assert steps is None  # no whole multiples of one step: no bucket queue of steps
        want = dijkstra(graph, indices=sources.tolist(), min_only=True)
        if width > 0:
            got = np.full(n, np.inf)
            settled = kernel.field_spread(indptr, indices, data, sources, got, width)
            assert np.array_equal(got, want)
            assert settled == int(np.isfinite(want).sum())
            spread_runs += 1
        heap = np.full(n, np.inf)
        kernel.field(indptr, indices, data, sources, heap)
        assert np.array_equal(heap, want)
        seam = np.full(n, np.inf)
        spread.spread_field(indptr, indices, data, sources, seam, width)
        assert np.array_equal(seam, want)
    assert spread_runs > 100  # (a graph without edges takes no width)


def test_the_width_is_half_the_least_tick_or_none() -> None:
    assert spread.spread_width(np.array([4.0, 3.0, 9.5]), 10) == 1.5
    assert spread.spread_width(np.array([], dtype=np.float64), 10) == 0.0
    assert spread.spread_width(np.array([0.0, 3.0]), 10) == 0.0  # a free edge: the heap
    assert spread.spread_width(np.array([np.inf, 3.0]), 10) == 0.0
    assert spread.spread_width(np.array([1.0, 2.0**40]), 10) == 0.0  # too many buckets


@needs_spread
def test_the_kernel_refuses_a_width_its_ticks_do_not_allow() -> None:
    graph = csr_array(np.array([[0.0, 3.5], [1.5, 0.0]]))
    indptr, indices, data, steps, width = _kernel_csr(graph)
    assert steps is None and width == 0.75
    dist = np.full(2, np.inf)
    with pytest.raises(ValueError, match="twice the width"):
        kernel.field_spread(indptr, indices, data, np.array([0], np.int64), dist, 1.0)
    with pytest.raises(ValueError, match="source out of range"):
        kernel.field_spread(indptr, indices, data, np.array([2], np.int64), dist, width)


@needs_spread
def test_the_square_chases_risk_weighted_fields_are_the_heaps() -> None:
    """Every risk-weighted graph a few runs of the shipped chase make: fields to cells
    across the map, by the buckets and by scipy, the same bit for bit."""
    from engine.scenario import load_scenario
    from engine.sim import FieldCache, Simulation

    scenario = load_scenario(str(ROOT / "scenarios" / "chase.yaml"))
    fields = FieldCache(scenario)
    for seed in range(3):
        Simulation(scenario, seed, fields=fields, record=False).run()
    weighted = [p for p in fields._profiles.values() if p.rev_risk is not p.rev]
    assert weighted
    rng = np.random.default_rng(3)
    bucketed = 0
    for prof in weighted:
        indptr, indices, data, steps, width = _kernel_csr(prof.rev_risk)
        bucketed += steps is None and width > 0
        n = prof.rev_risk.shape[0]
        for _ in range(8):
            sources = rng.integers(0, n, size=2)
            got = prof._dijkstra("rev_risk", sources.tolist())
            want = dijkstra(prof.rev_risk, indices=sources.tolist(), min_only=True)
            assert np.array_equal(got, want)
    assert bucketed


def test_without_the_kernel_the_plain_way_runs(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(kernel, "enabled", False)
    graph = _random_graph(np.random.default_rng(9), "thirds")
    indptr, indices, data, _, width = _kernel_csr(graph)
    sources = np.array([0], np.int64)
    dist = np.full(graph.shape[0], np.inf)
    spread.spread_field(indptr, indices, data, sources, dist, width)
    assert np.array_equal(dist, dijkstra(graph, indices=[0], min_only=True))
