"""The quarry's safe reach (engine.policies.region.reached_safely) and held region
(``held_region``) in the compiled kernel (engine/_kernel.c ``reach_within``,
``held_region``) equal their Python twins (``reached_safely_plain``,
``held_region_plain``), on random graphs of one to three states a cell and on a shipped
scenario's own graphs; a kernel switched off, or built without the function, runs the
twin."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from engine import kernel
from engine.policies import region

needs_kernel = pytest.mark.skipif(not kernel.available(), reason=f"kernel {kernel.state()}")


def _graph(rng: np.random.Generator, n: int, states: int, dtype: type) -> tuple:
    nodes = n * states
    deg = rng.integers(0, 5, nodes)
    indptr = np.concatenate(([0], np.cumsum(deg))).astype(dtype)
    indices = rng.integers(0, nodes, int(indptr[-1])).astype(dtype)
    return indptr, indices


@needs_kernel
def test_random_graphs_give_the_twins_cells() -> None:
    rng = np.random.default_rng(11)
    for trial in range(400):
        n, states = int(rng.integers(1, 50)), int(rng.integers(1, 4))
        indptr, indices = _graph(rng, n, states, np.int64 if trial % 2 else np.int32)
        safe = rng.random(n) < rng.random()
        start = int(rng.integers(0, n))
        starts = np.arange(states, dtype=np.int64) * n + start
        got = region.reached_safely(indptr, indices, n, start, safe)
        plain = region.reached_safely_plain(indptr, indices, n, starts, safe)
        assert got.dtype == plain.dtype == bool
        assert (got == plain).all(), trial
        assert got[start]  # where the quarry stands is always its own


@needs_kernel
def test_a_shipped_chases_graphs_give_the_twins_cells() -> None:
    from engine.scenario import load_scenario
    from engine.sim import FieldCache, Simulation

    root = Path(__file__).resolve().parents[1]
    scenario = load_scenario(str(root / "scenarios" / "hex_hunt.yaml"))
    fields = FieldCache(scenario)
    Simulation(scenario, 1, fields=fields).run()
    rng = np.random.default_rng(5)
    profiles = list(fields._profiles.values())
    assert profiles
    for prof in profiles:
        n = prof.graph.n
        for _ in range(20):
            safe = rng.random(n) < 0.7
            start = int(rng.integers(0, n))
            states = (len(prof.indptr) - 1) // n
            starts = np.arange(states, dtype=np.int64) * n + start
            got = region.reached_safely(prof.indptr, prof.indices, n, start, safe)
            assert (got == region.reached_safely_plain(
                prof.indptr, prof.indices, n, starts, safe
            )).all()  # fmt: skip


@needs_kernel
def test_the_kernel_refuses_what_disagrees() -> None:
    indptr = np.array([0, 1, 1], dtype=np.int64)
    indices = np.array([1], dtype=np.int64)
    out = np.zeros(2, dtype=bool)
    with pytest.raises(ValueError, match="out of range"):
        kernel.reach_within(indptr, np.array([5], dtype=np.int64), np.array([0]), out, out.copy())
    with pytest.raises(ValueError, match="a start out of range"):
        kernel.reach_within(indptr, indices, np.array([2]), np.ones(2, bool), out)
    with pytest.raises(ValueError, match="disagree"):
        kernel.reach_within(indptr, indices, np.array([0]), np.ones(3, bool), out)
    with pytest.raises(TypeError):
        kernel.reach_within(indptr, indices, np.array([0], dtype=np.int32), np.ones(2, bool), out)


def test_without_the_kernels_function_the_twin_runs(monkeypatch) -> None:
    monkeypatch.setattr(kernel, "_MISSING", ("reach_within",))
    assert not kernel.available()
    indptr = np.array([0, 1, 2, 2], dtype=np.int64)
    indices = np.array([1, 2], dtype=np.int64)
    got = region.reached_safely(indptr, indices, 3, 0, np.array([True, True, False]))
    assert got.tolist() == [True, True, False]


@needs_kernel
def test_held_region_in_the_kernel_counts_as_its_twin() -> None:
    rng = np.random.default_rng(17)
    for trial in range(400):
        n, states = int(rng.integers(1, 60)), int(rng.integers(1, 4))
        indptr, indices = _graph(rng, n, states, np.int64 if trial % 2 else np.int32)
        data = rng.integers(1, 9, len(indices)).astype(np.float64) * (0.5 if trial % 3 else 1.0)
        denominator = int(rng.integers(1, 12))
        deadline = rng.random(n) * 4 - 0.5
        deadline[rng.random(n) < 0.2] = np.inf
        start = int(rng.integers(0, n * states))
        cap = None if trial % 4 == 0 else int(rng.integers(1, 30))
        got = region.held_region(indptr, indices, data, n, start, deadline, denominator, cap)
        plain = region.held_region_plain(
            indptr.tolist(), indices.tolist(), data.tolist(), n, start, deadline.tolist(),
            denominator, cap,
        )  # fmt: skip
        assert got == plain, trial


@needs_kernel
def test_held_region_refuses_what_disagrees() -> None:
    indptr = np.array([0, 1, 1], dtype=np.int64)
    data = np.ones(1)
    late = np.full(2, 9.0)
    with pytest.raises(ValueError, match="out of range"):
        kernel.held_region(indptr, np.array([7]), data, 0, late, 1.0, 0)
    with pytest.raises(ValueError, match="start out of range"):
        kernel.held_region(indptr, np.array([1]), data, 5, late, 1.0, 0)
    with pytest.raises(ValueError, match="disagree"):
        kernel.held_region(indptr, np.array([1]), data, 0, np.full(3, 9.0), 1.0, 0)
    with pytest.raises(TypeError):
        kernel.held_region(indptr, np.array([1], dtype=np.int16), data, 0, late, 1.0, 0)
    assert kernel.held_region(indptr, np.array([1]), data, 0, late, 1.0, 0) == 2
    assert kernel.held_region(indptr, np.array([1]), data, 0, late, 1.0, 1) == 1
    assert kernel.held_region(indptr, np.array([1]), data, 0, np.array([0.0, 9.0]), 1.0, 0) == 0
