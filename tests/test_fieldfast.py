"""Fields to cells grown as their walks need (engine.sim.grow, engine/_kernel.c
``field_upto`` and ``field_spread_upto``) give what whole fields give:

- the kernel's grown searches, stopped at random nodes and taken up again, against the
  whole search (stop -1, after -1.0: engine.sim.spread's; tests/test_goalfast.py holds it
  equal to the kernel's ``field`` and ``field_spread``) and scipy's Dijkstra, bit for bit:
  the nodes settled hold their final distances, the others more, and the last call the
  whole field; arguments that are not a previous call's refused;
- a grown :class:`Field`'s steps, distances read one by one, walks, ways entered and routes
  against a whole field's, on random graphs full of ties and on the scenarios' own fields
  (at another speed too); a profile whose least tick does not clear the margin gets the
  whole field; a grown field pickles and reads whole;
- whole batches of the chases played with the seam on and off (``grow.ON``).
"""

from __future__ import annotations

import pickle
from pathlib import Path

import numpy as np
import pytest
from scipy.sparse import csr_array
from scipy.sparse.csgraph import dijkstra
from test_goalfast import _graph as goalfast_graph
from test_goalfast import _records  # the same runs, played the same way

from engine import kernel
from engine.sim import descend, grow, spread
from engine.sim.fields import INF, Field
from engine.sim.kernelcsr import _kernel_csr

ROOT = Path(__file__).resolve().parents[1]
needs_grow = pytest.mark.skipif(not kernel.available(), reason=f"kernel {kernel.state()}")


def _graph(rng: np.random.Generator, kind: str, least_edges: int = 0) -> csr_array:
    """test_goalfast's random graphs a little denser, drawn again until one has at least
    ``least_edges`` edges."""
    graph = goalfast_graph(rng, kind, densest=0.12)
    while graph.nnz < least_edges:
        graph = goalfast_graph(rng, kind, densest=0.12)
    return graph


def _whole(graph: csr_array, arrays: tuple, bound: float, sources: np.ndarray) -> np.ndarray:  # type: ignore[type-arg]
    """The whole field over ``graph`` (its ``arrays``, :func:`_kernel_csr`'s) from
    ``sources``: the kernel's search asked for no stop (-1) on a fresh field (-1.0), as
    engine.sim.spread asks it, and scipy's Dijkstra's, bit for bit."""
    indptr, indices, data, steps, step = arrays
    out = np.full(graph.shape[0], np.inf)
    if steps is not None:
        limit = kernel.field_upto(indptr, indices, steps, int(bound), sources, out, step, -1, -1.0)
    else:
        limit = kernel.field_spread_upto(indptr, indices, data, bound, sources, out, step, -1, -1.0)
    assert limit == INF
    assert np.array_equal(out, dijkstra(graph, indices=sources.tolist(), min_only=True))
    return out


# --------------------------------------------------------------------------- the kernel


@needs_grow
@pytest.mark.parametrize("kind", ["whole", "fractional"])
def test_grown_searches_are_whole_fields_as_far_as_settled(kind: str) -> None:
    rng = np.random.default_rng(["whole", "fractional"].index(kind) + 40)
    stopped = grown = 0
    for _ in range(120):
        graph = _graph(rng, kind)
        n = graph.shape[0]
        arrays = _kernel_csr(graph)
        if arrays[3] is None and not arrays[4] > 0:
            continue  # no edge: no buckets
        bound = spread.edge_bound(arrays[2], arrays[3])
        sources = rng.integers(0, n, size=int(rng.integers(1, 4))).astype(np.int64)
        want = _whole(graph, arrays, bound, sources)
        got = grow.Grow(arrays, bound, sources)
        for stop in rng.integers(0, n, size=5).tolist() + [-1]:
            before = got.limit
            got.reach(stop) if stop >= 0 else got.whole()
            settled = got.dist <= got.limit
            assert np.array_equal(got.dist[settled], want[settled])
            assert np.all(got.dist[~settled] > got.limit)
            assert np.all(got.dist[~settled] >= want[~settled])
            assert np.all(want[~settled] > got.limit)
            assert got.limit >= before
            if stop >= 0 and np.isfinite(want[stop]):
                assert got.dist[stop] == want[stop]
            stopped += got.limit < INF
        assert got.limit == INF and np.array_equal(got.dist, want)
        grown += 1
    assert grown > 80 and stopped > 100


@needs_grow
def test_grown_searches_refuse_what_no_call_left() -> None:
    graph = csr_array(np.array([[0.0, 2.0, 0.0], [0.0, 0.0, 6.0], [0.0, 0.0, 0.0]]))
    indptr, indices, data, steps, step = _kernel_csr(graph)
    src = np.array([0], np.int64)
    dist = np.full(3, np.inf)
    limit = kernel.field_upto(indptr, indices, steps, 3, src, dist, step, 1, -1.0)
    assert limit == 2.0 and dist.tolist() == [0.0, 2.0, 8.0]  # node 2: only reached
    # Taken up again from there, and from a settled node at once:
    assert kernel.field_upto(indptr, indices, steps, 3, src, dist, step, 1, limit) == 2.0
    again = dist.copy()
    assert kernel.field_upto(indptr, indices, steps, 3, src, again, step, -1, 2.0) == INF
    assert again.tolist() == [0.0, 2.0, 8.0]
    for bad_after in (1.5, -2.0, INF):  # not a distance settled, not -1
        with pytest.raises(ValueError):
            kernel.field_upto(indptr, indices, steps, 3, src, dist.copy(), step, -1, bad_after)
    beyond = np.array([0.0, 2.0, 99.0])  # a node reached further than any edge goes
    with pytest.raises(ValueError):
        kernel.field_upto(indptr, indices, steps, 3, src, beyond, step, -1, 2.0)
    with pytest.raises(ValueError):
        kernel.field_upto(indptr, indices, steps, 3, src, np.full(3, np.inf), step, 3, -1.0)
    with pytest.raises(ValueError):
        kernel.field_upto(indptr, indices, steps, 2, src, np.full(3, np.inf), step, -1, -1.0)
    with pytest.raises(ValueError):
        kernel.field_spread_upto(indptr, indices, data, 5.0, src, np.full(3, np.inf), 1.0, -1, -1.0)
    spread_dist = np.full(3, np.inf)
    assert (
        kernel.field_spread_upto(indptr, indices, data, 6.0, src, spread_dist, 1.0, 1, -1.0) == 2.0
    )
    with pytest.raises(ValueError):
        kernel.field_spread_upto(indptr, indices, data, 6.0, src, beyond, 1.0, -1, 2.0)


# --------------------------------------------------------------------------- fields


class _Graph:
    def __init__(self, n: int) -> None:
        self.n, self.n_states = n, 1


class _Prof:
    """What a field's steps read of a profile: its CSR arrays, as lists and for the kernel,
    and its least tick (``least``: given, to try the margin)."""

    def __init__(self, graph: csr_array, least: float | None = None) -> None:
        self.graph = _Graph(graph.shape[0])
        self.indptr, self.indices, self.data = graph.indptr, graph.indices, graph.data
        self._arrays = _kernel_csr(graph)
        self._lists = (self.indptr.tolist(), self.indices.tolist(), self.data.tolist())
        self._least = float(graph.data.min()) if least is None else least

    def lists(self) -> tuple[list[int], list[int], list[float]]:
        return self._lists

    def _kernel_of(self, which: str) -> tuple:  # type: ignore[type-arg]
        assert which == "csr"
        return self._arrays

    def least_tick(self) -> float:
        return self._least


def _grown_field(graph: csr_array, sources: np.ndarray) -> tuple[Field, np.ndarray]:
    """A grown field on the reverse of ``graph`` to ``sources``, and the whole one."""
    rev = csr_array(graph.T)
    arrays = _kernel_csr(rev)
    bound = spread.edge_bound(arrays[2], arrays[3])
    got = grow.grow_of(arrays, bound, sources.tolist())
    assert got is not None
    return Field(got.dist, grow=got), _whole(rev, arrays, bound, sources)


@needs_grow
@pytest.mark.parametrize("kernel_steps", [True, False])
@pytest.mark.parametrize("kind", ["ties", "fractional"])
def test_a_grown_fields_steps_are_the_whole_fields(kind: str, kernel_steps: bool) -> None:
    rng = np.random.default_rng(["ties", "fractional"].index(kind) * 2 + kernel_steps + 50)
    compared = 0
    saved = descend.ON
    descend.ON = kernel_steps
    try:
        for _ in range(60):
            graph = _graph(rng, kind)
            n = graph.shape[0]
            if not graph.nnz:
                continue
            prof = _Prof(graph)
            sources = rng.integers(0, n, size=int(rng.integers(1, 3))).astype(np.int64)
            field, want = _grown_field(graph, sources)
            whole = Field(want)
            for k, v in enumerate(rng.integers(0, n, size=6).tolist()):
                # Each read first on a node in turn (a node not settled yet, often).
                if k % 3 == 0:
                    assert field.step(prof, v) == whole.step(prof, v)  # type: ignore[arg-type]
                elif k % 3 == 1:
                    assert field.left(v) == whole.left(v)
                else:
                    assert field.at(v) == float(want[v])
                assert field.step(prof, v) == whole.step(prof, v)  # type: ignore[arg-type]
                assert field.left(v) == whole.left(v) and field.at(v) == float(want[v])
                compared += 1
            assert all(field._hops[v] == whole.step(prof, v) for v in field._hops)  # type: ignore[arg-type]
            assert np.array_equal(field.dist, want) and field.whole()
    finally:
        descend.ON = saved
    assert compared > 250


@needs_grow
def test_a_margin_too_thin_for_the_ticks_takes_the_whole_field() -> None:
    rng = np.random.default_rng(60)
    graph = _graph(rng, "ties", least_edges=100)
    field, want = _grown_field(graph, np.array([0], np.int64))
    reached = np.flatnonzero(np.isfinite(want) & (want > 0))
    near = int(reached[np.argmin(want[reached])])  # the nearest node but the target
    assert np.max(want[reached]) > want[near]
    field.step(_Prof(graph), near)  # type: ignore[arg-type]
    assert not field.whole()
    thin, _ = _grown_field(graph, np.array([0], np.int64))
    thin.step(_Prof(graph, least=1e-7 * float(want[near])), near)  # type: ignore[arg-type]
    assert thin.whole() and np.array_equal(thin._dist, want)


def _scenario_profiles(name: str):  # type: ignore[no-untyped-def]
    from engine.scenario import load_scenario
    from engine.sim import FieldCache, Simulation

    sc = load_scenario(str(ROOT / "scenarios" / f"{name}.yaml"))
    sim = Simulation(sc, 1, fields=FieldCache(sc), record=False)
    return [sim.profile_now(tid) for tid in sim.order]


@needs_grow
@pytest.mark.parametrize("name", ["chase", "hex_hunt"])
def test_a_scenarios_grown_fields_walk_as_whole_ones(name: str) -> None:
    rng = np.random.default_rng(7)
    walked = 0
    for prof in _scenario_profiles(name):
        g = prof.graph
        for _ in range(4):
            goal = g.grid.cell_of_index(int(rng.integers(0, g.n)))
            for risk in (False, True):
                field = prof.field_to((goal,), risk=risk)
                which = "rev_risk" if risk and prof.rev_risk is not prof.rev else "rev"
                nodes = [g.grid.index(goal) + s * g.n for s in range(g.n_states)]
                whole = Field(prof._dijkstra(which, nodes))
                assert isinstance(field._grow, grow.Grow | grow.Scaled)
                for v in rng.integers(0, g.n * g.n_states, size=5).tolist():
                    a, b = field.walk(prof, v), whole.walk(prof, v)
                    assert (a.edges, a.after) == (b.edges, b.after)
                    assert field.enters(prof, v) == whole.enters(prof, v)
                    assert field.route(prof, v, 3).cells == whole.route(prof, v, 3).cells
                    walked += len(a.edges)
                assert np.array_equal(field.dist, whole.dist)
    assert walked > 200


@needs_grow
def test_a_grown_field_at_another_speed_is_the_base_times_the_scale() -> None:
    rng = np.random.default_rng(8)
    graph = _graph(rng, "whole", least_edges=200)
    n = graph.shape[0]
    base, want = _grown_field(graph, np.array([1], np.int64))
    slow = base.scaled(381.0, 1143.0)
    fast = Field(want / 381.0 * 1143.0)
    prof = _Prof(csr_array((graph.data / 381.0 * 1143.0, graph.indices, graph.indptr)))
    for v in rng.integers(0, n, size=8).tolist():
        assert slow.step(prof, v) == fast.step(prof, v)  # type: ignore[arg-type]
        assert slow.at(v) == fast.at(v)
    assert not slow.whole() or base.whole()
    assert np.array_equal(slow.dist, fast.dist) and base.whole()


@needs_grow
def test_a_grown_field_pickles_and_reads_whole() -> None:
    rng = np.random.default_rng(9)
    graph = _graph(rng, "fractional", least_edges=200)
    field, want = _grown_field(graph, np.array([0], np.int64))
    field.at(int(np.argmax(np.where(np.isfinite(want), want, -1.0)) // 2))
    back = pickle.loads(pickle.dumps(field))
    assert np.array_equal(back.dist, want) and back.whole()


# --------------------------------------------------------------------------- whole runs


@needs_grow
@pytest.mark.parametrize("name", ["chase", "hex_hunt"])
def test_the_chases_play_the_same_runs_with_the_seam_off(
    name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    made: list[int] = []
    searched = grow.Grow._search

    def counted(self, stop):  # type: ignore[no-untyped-def]
        made.append(stop)
        return searched(self, stop)

    monkeypatch.setattr(grow.Grow, "_search", counted)
    on = _records(name, 60)
    assert sum(stop >= 0 for stop in made) > 20  # fields grown as far as walks needed
    monkeypatch.setattr(grow, "ON", False)
    assert _records(name, 60) == on
