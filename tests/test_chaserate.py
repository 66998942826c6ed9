"""The chase's speed seam gives what the plain way gives: the kernel's steps down a field
(engine.sim.descend, engine/_kernel.c ``descend``) are the steps
:meth:`Field.step` takes in Python, on random graphs and fields (ties, near-ties, fields
that end or are not descents), and a batch of the square chase plays the same records
with it on and off."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from scipy.sparse import csr_array
from scipy.sparse import random as sparse_random
from scipy.sparse.csgraph import dijkstra

from engine import kernel
from engine.sim import descend
from engine.sim.fields import INF, Field, _kernel_csr

ROOT = Path(__file__).resolve().parents[1]
needs_descend = pytest.mark.skipif(not kernel.available(), reason=f"kernel {kernel.state()}")


def _whole_graph(rng: np.random.Generator, most: int) -> csr_array:
    n = int(rng.integers(1, 300))
    m = sparse_random(n, n, density=float(rng.uniform(0.005, 0.12)), format="csr", rng=rng)
    m.data = np.floor(m.data * (most + 1))  # whole ticks from 0 (zeros too) to most
    return csr_array(m)


# --------------------------------------------------------------------------- steps down


class _Graph:
    def __init__(self, n: int) -> None:
        self.n, self.n_states = n, 1


class _Prof:
    """What Field.step reads of a profile: its CSR arrays, as lists and for the kernel."""

    def __init__(self, graph: csr_array) -> None:
        self.graph = _Graph(graph.shape[0])
        self.csr = graph
        self.indptr, self.indices, self.data = graph.indptr, graph.indices, graph.data
        self._arrays = _kernel_csr(graph)
        self._lists = (self.indptr.tolist(), self.indices.tolist(), self.data.tolist())

    def lists(self) -> tuple[list[int], list[int], list[float]]:
        return self._lists

    def _kernel_of(self, which: str) -> tuple:
        assert which == "csr"
        return self._arrays


def _plain_hops(prof: _Prof, dist: np.ndarray, nodes: list[int]) -> dict[int, object]:
    field = Field(dist)
    descend.ON = False
    try:
        return {v: field.step(prof, v) for v in nodes}  # type: ignore[arg-type]
    finally:
        descend.ON = True


@needs_descend
@pytest.mark.parametrize("kind", ["whole", "ties", "fractional"])
def test_steps_down_are_field_steps(kind: str) -> None:
    rng = np.random.default_rng(["whole", "ties", "fractional"].index(kind))
    steps_compared = 0
    for _ in range(120):
        graph = _whole_graph(rng, 6 if kind != "fractional" else 1000)
        if kind == "ties":
            graph.data = np.ones_like(graph.data)  # every edge alike: ties everywhere
        elif kind == "fractional":
            graph.data = 0.5 + graph.data / 7
        n = graph.shape[0]
        # A field to a few cells over the reverse graph (every step down it exists), and
        # sometimes a perturbed one (steps that are not down it, inf, near-ties by 1e-10).
        target = rng.integers(0, n, size=int(rng.integers(1, 3)))
        dist = dijkstra(csr_array(graph.T), indices=target.tolist(), min_only=True)
        if rng.random() < 0.3:
            dist = dist + rng.choice([0.0, 1e-10, -1e-10, 0.5], size=n)
            dist[rng.random(n) < 0.05] = INF
        dist = np.ascontiguousarray(dist, dtype=np.float64)
        prof = _Prof(graph)
        want = _plain_hops(prof, dist, list(range(n)))
        for start in rng.integers(0, n, size=5).tolist():
            got = descend.steps_down(prof, dist, start)
            assert got is not None
            assert 1 <= len(got) <= descend.MOST
            at = start
            for k, hop in enumerate(got):
                assert hop == want[at], (start, k)
                steps_compared += 1
                if hop is None:
                    assert k == len(got) - 1
                    break
                at = hop[0]
                if k < len(got) - 1:
                    assert dist[at] > 0  # the walk goes on only while the field does
            # A field keeps them as its own steps: step() from every node of the walk.
            field = Field(dist)
            assert field.step(prof, start) == want[start]  # type: ignore[arg-type]
            assert all(field.step(prof, v) == want[v] for v in field._hops)  # type: ignore[arg-type]
    assert steps_compared > 600


@needs_descend
def test_steps_down_refuse_bad_arrays() -> None:
    indptr = np.array([0, 1, 2], np.int64)
    indices = np.array([1, 0], np.int32)
    data = np.array([1.0, 1.0])
    dist = np.array([1.0, 0.0])
    assert kernel.descend(indptr, indices, data, dist, 0, 8) == [(1, 1.0)]
    with pytest.raises(ValueError):
        kernel.descend(indptr, indices, data, dist, 2, 8)
    with pytest.raises(ValueError):
        kernel.descend(indptr, np.array([1, 7], np.int32), data, dist, 1, 8)


@needs_descend
@pytest.mark.parametrize("name", ["chase", "hex_hunt"])
def test_steps_down_a_scenarios_fields_are_field_steps(name: str) -> None:
    from engine.scenario import load_scenario
    from engine.sim import FieldCache, Simulation

    sc = load_scenario(str(ROOT / "scenarios" / f"{name}.yaml"))
    sim = Simulation(sc, 1, fields=FieldCache(sc), record=False)
    rng = np.random.default_rng(3)
    walked = 0
    for tid in sim.order:
        prof = sim.profile_now(tid)
        g = prof.graph
        for _ in range(3):
            goal = g.grid.cell_of_index(int(rng.integers(0, g.n)))
            for risk in (False, True):
                dist = prof.field_to((goal,), risk=risk).dist
                starts = rng.integers(0, len(dist), size=40).tolist()
                want = _plain_hops(prof, dist, list(range(len(dist))))  # type: ignore[arg-type]
                field = Field(dist)
                for v in starts:
                    assert field.step(prof, v) == want[v]
                assert all(field._hops[v] == want[v] for v in field._hops)
                walked += len(field._hops)
    assert walked > 2000


# --------------------------------------------------------------------------- whole runs


def test_the_chase_plays_the_same_runs_with_the_seams_off() -> None:
    from engine.batch import run_seeds
    from engine.scenario import load_scenario
    from engine.sim import FieldCache, Simulation

    scenario = load_scenario(str(ROOT / "scenarios" / "chase.yaml"))
    items = list(enumerate(run_seeds(scenario.seed, 60)))

    def records() -> list[dict[str, object]]:
        fields = FieldCache(scenario)
        return [
            Simulation(scenario, s, fields=fields, run=r, record="count").run().to_dict()
            for r, s in items
        ]

    on = records()
    descend.ON = False
    try:
        off = records()
    finally:
        descend.ON = True
    assert on == off
    assert {r["outcome"] for r in on} >= {"capture"}
