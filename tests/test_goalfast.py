"""The goal choices' speed seams give what the plain ways give (the goalfast lane).

- A fleeing quarry's scans (engine.sim.flee ``flee_scan`` and ``sector_picks``, in
  engine/_kernel.c ``flee_scan`` and ``flee_picks``) against their numpy
  twins, on random turn arrays full of ties, +inf and taken cells, and a crossing under
  way; and whole batches of the shipped chases played with the seams on and off.
- Fields by lean buckets (engine.sim.spread ``LEAN``: engine/_kernel.c ``field_upto``
  and ``field_spread_upto`` searching whole, each given its graph's bound on an edge)
  against the kernel's ``field`` and ``field_spread`` and scipy's Dijkstra, bit for bit,
  on random graphs of whole steps (zeros and ties too) and fractional ticks; a bound an
  edge exceeds refused, and arguments out of range.
- The pursuers' least turns kept by where they stand (engine.sim.threat ``ThreatMaps.PLAIN``)
  against asking the field cache every time: the same batches.
"""

from __future__ import annotations

from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest
from scipy.sparse import csr_array
from scipy.sparse import random as sparse_random
from scipy.sparse.csgraph import dijkstra

from engine import kernel
from engine.grid import Grid
from engine.sim import flee, spread
from engine.sim.kernelcsr import _kernel_csr
from engine.sim.threat import ThreatMaps

ROOT = Path(__file__).resolve().parents[1]
needs_flee = pytest.mark.skipif(not kernel.available(), reason=f"kernel {kernel.state()}")


def _turns(rng: np.random.Generator, n: int, scale: float) -> np.ndarray:
    """Turns on a coarse grid of values (ties everywhere), some cells never reached."""
    out = np.round(rng.uniform(0.0, scale, size=n) * 4) / 4
    out[rng.random(n) < rng.uniform(0.0, 0.3)] = np.inf
    return out


def _arrays(rng: np.random.Generator, grid: Grid) -> tuple[np.ndarray, np.ndarray]:
    n = grid.width * grid.height
    mine = _turns(rng, n, 3.0)
    # Exactly on the limits too: 1 + 1e-12 is still this turn, 1 + 1e-9 not yet safe.
    edge = rng.random(n)
    mine[edge < 0.05] = 1 + 1e-12
    mine[(edge >= 0.05) & (edge < 0.1)] = 1.0
    threat = _turns(rng, n, 4.0 if rng.random() < 0.7 else 1.2)  # some turns: no cell safe
    threat[rng.random(n) < 0.05] = 1 + 1e-9
    return mine, threat


def _scan_cases(seed: int, count: int):  # type: ignore[no-untyped-def]
    rng = np.random.default_rng(seed)
    for _ in range(count):
        grid = Grid("orthogonal", int(rng.integers(1, 14)), int(rng.integers(1, 14)), 32, 32)
        n = grid.width * grid.height
        mine, threat = _arrays(rng, grid)
        cells = [grid.cell_of_index(int(i)) for i in rng.integers(0, n, size=4)]
        taken = frozenset(cells[: int(rng.integers(0, 4))])
        crossing = None
        if rng.random() < 0.4:
            crossing = (cells[3], Fraction(int(rng.integers(0, 4)), 4))
        yield grid, mine, threat, taken, crossing


def _scan_of(scan: flee.FleeScan) -> tuple[object, ...]:
    return (scan.near, scan.safe.tolist(), scan.farthest, scan.beyond, scan.cost)


@needs_flee
def test_flee_scan_is_its_numpy_twin() -> None:
    beyond = farthest = 0
    for grid, mine, threat, taken, crossing in _scan_cases(1, 400):
        got = flee.flee_scan(grid, mine, threat, taken, crossing)
        want = flee.flee_scan_plain(grid, mine, threat, taken, crossing)
        assert _scan_of(got) == _scan_of(want), (grid.width, grid.height, taken, crossing)
        beyond += got.beyond >= 0
        farthest += got.farthest >= 0 and not len(got.safe)
    # Every branch met: refuges beyond this turn, turns where no cell is safe.
    assert beyond > 40 and farthest > 10


@needs_flee
def test_sector_picks_are_their_numpy_twin() -> None:
    rng = np.random.default_rng(2)
    compared = 0
    for _ in range(400):
        n = int(rng.integers(1, 200))
        mine = np.round(rng.uniform(0.0, 1.0, size=n) * 8) / 8
        threat = np.round(rng.uniform(1.0, 3.0, size=n) * 4) / 4
        threat[rng.random(n) < 0.2] = np.inf
        safe = np.flatnonzero(rng.random(n) < rng.uniform(0.05, 1.0)).astype(np.int64)
        if not len(safe):
            continue
        sectors = int(rng.integers(1, 10))
        sector = rng.integers(0, sectors, size=len(safe)).astype(np.int64)
        got = flee.sector_picks(safe, sector, mine, threat, sectors)
        assert got == flee.sector_picks_plain(safe, sector, mine, threat)
        assert 1 <= len(got) <= flee.FLEE_CANDIDATES
        compared += 1
    assert compared > 300


@needs_flee
def test_the_kernel_refuses_arrays_that_disagree() -> None:
    mine, threat = np.zeros(4), np.full(4, 2.0)
    none = np.zeros(0, np.int64)
    assert kernel.flee_scan(mine, threat, none, -1, 0.0, np.empty(4, np.int64))[:2] == (
        4,
        4,
    )
    with pytest.raises(ValueError):
        kernel.flee_scan(mine, threat, np.array([4], np.int64), -1, 0.0, np.empty(4, np.int64))
    with pytest.raises(ValueError):
        kernel.flee_scan(mine, threat[:3], none, -1, 0.0, np.empty(4, np.int64))
    safe = np.arange(4, dtype=np.int64)
    with pytest.raises(ValueError):
        kernel.flee_picks(
            safe, np.array([0, 1, 2, 3], np.int64), mine, threat, 3, 4, np.empty(4, np.int64)
        )


# --------------------------------------------------------------------------- fields

needs_lean = pytest.mark.skipif(not kernel.available(), reason=f"kernel {kernel.state()}")


def _graph(rng: np.random.Generator, kind: str, densest: float = 0.1) -> csr_array:
    """A random graph of up to 300 nodes, density up to ``densest``, its ticks by ``kind``."""
    n = int(rng.integers(1, 300))
    m = sparse_random(n, n, density=float(rng.uniform(0.005, densest)), format="csr", rng=rng)
    if kind == "whole":  # whole ticks over a common step, zeros and ties among them
        m.data = np.floor(m.data * 7) * 381.0
    elif kind == "ties":  # every tick alike and above 0: ties everywhere
        m.data = np.full_like(m.data, 381.0)
    else:  # a check's expected delay added: sums that round
        m.data = 381.0 + np.round(m.data * 40) * (1000.0 / 27)
    return csr_array(m)


def _lean(arrays: tuple, bound: float, sources: np.ndarray, dist: np.ndarray) -> float:  # type: ignore[type-arg]
    """The lean buckets' whole search into ``dist`` as engine.sim.spread asks it (no node
    to stop at, a fresh field: stop -1, after -1.0); what it returns."""
    indptr, indices, data, steps, step = arrays
    if steps is not None:
        return kernel.field_upto(indptr, indices, steps, int(bound), sources, dist, step, -1, -1.0)
    return kernel.field_spread_upto(indptr, indices, data, bound, sources, dist, step, -1, -1.0)


@needs_lean
@pytest.mark.parametrize("kind", ["whole", "fractional"])
def test_lean_fields_are_the_kernels_and_scipys(kind: str) -> None:
    rng = np.random.default_rng(["whole", "fractional"].index(kind) + 10)
    lean = 0
    for _ in range(150):
        graph = _graph(rng, kind)
        n = graph.shape[0]
        sources = rng.integers(0, n, size=int(rng.integers(1, 4))).astype(np.int64)
        arrays = _kernel_csr(graph)
        indptr, indices, data, steps, step = arrays
        want = dijkstra(graph, indices=sources.tolist(), min_only=True)
        bound = spread.edge_bound(data, steps)
        plain, got, seam = np.full(n, np.inf), np.full(n, np.inf), np.full(n, np.inf)
        if steps is not None:
            kernel.field(indptr, indices, data, sources, plain, steps, step)
            spread.whole_field(indptr, indices, data, steps, step, sources, seam, bound)
        elif step > 0:
            kernel.field_spread(indptr, indices, data, sources, plain, step)
            spread.spread_field(indptr, indices, data, sources, seam, step, bound)
        else:
            continue  # no edge: no buckets
        assert _lean(arrays, bound, sources, got) == np.inf  # the whole field
        assert np.array_equal(got, plain) and np.array_equal(got, want)
        assert np.array_equal(seam, want)  # (the seam, as the engine asks it)
        lean += 1
    assert lean > 100


@needs_lean
@pytest.mark.parametrize("kind", ["whole", "fractional"])
def test_lean_fields_grow_their_pool(kind: str) -> None:
    """Every node reached three times before it is settled (from the source, then from
    node 1, then along the chain from node 2): more entries than the pool's first room
    (twice the nodes), the same distances."""
    n = 400
    rows, cols, ticks = [0, 0], [1, 2], [1.0, 2.0]
    for j in range(3, n):
        rows += [0, 1, j - 1]
        cols += [j, j, j]
        ticks += [3.0 * n, 2.0 * n, 1.0]
    scale = 1.0 if kind == "whole" else 1.0 + 1 / 27
    graph = csr_array((np.array(ticks) * scale, (rows, cols)), shape=(n, n))
    arrays = _kernel_csr(graph)
    indptr, indices, data, steps, step = arrays
    src = np.array([0], np.int64)
    want = dijkstra(graph, indices=[0], min_only=True)
    plain, got = np.full(n, np.inf), np.full(n, np.inf)
    bound = spread.edge_bound(data, steps)
    if kind == "whole":
        assert steps is not None
        kernel.field(indptr, indices, data, src, plain, steps, step)
    else:
        assert steps is None and step > 0
        kernel.field_spread(indptr, indices, data, src, plain, step)
    assert _lean(arrays, bound, src, got) == np.inf
    assert np.array_equal(got, plain) and np.array_equal(got, want)


@needs_lean
def test_lean_fields_refuse_an_edge_past_the_bound() -> None:
    graph = csr_array(np.array([[0.0, 2.0, 0.0], [0.0, 0.0, 6.0], [0.0, 0.0, 0.0]]))
    indptr, indices, data, steps, step = _kernel_csr(graph)
    assert steps is not None and spread.edge_bound(data, steps) == 3.0
    src = np.array([0], np.int64)
    got = np.full(3, np.inf)
    kernel.field_upto(indptr, indices, steps, 3, src, got, step, -1, -1.0)
    assert got.tolist() == [0.0, 2.0, 8.0]
    with pytest.raises(ValueError, match="a step out of 0..span"):
        kernel.field_upto(indptr, indices, steps, 2, src, np.full(3, np.inf), step, -1, -1.0)
    with pytest.raises(ValueError, match="a tick out of 2 \\* width..most"):
        kernel.field_spread_upto(indptr, indices, data, 5.0, src, np.full(3, np.inf), 1.0, -1, -1.0)
    got = np.full(3, np.inf)
    kernel.field_spread_upto(indptr, indices, data, 6.0, src, got, 1.0, -1, -1.0)
    assert got.tolist() == [0.0, 2.0, 8.0]


@needs_lean
def test_lean_fields_refuse_arguments_out_of_range() -> None:
    graph = csr_array(np.array([[0.0, 2.0, 0.0], [0.0, 0.0, 6.0], [0.0, 0.0, 0.0]]))
    indptr, indices, data, steps, step = _kernel_csr(graph)
    src, far = np.array([0], np.int64), np.array([3], np.int64)

    def whole(span: int, sources: np.ndarray, n: int = 3, at: np.ndarray = indices) -> float:
        dist = np.full(n, np.inf)
        return kernel.field_upto(indptr, at, steps, span, sources, dist, step, -1, -1.0)

    def spread_of(
        most: float, width: float, sources: np.ndarray, ticks: np.ndarray = data
    ) -> float:
        dist = np.full(3, np.inf)
        return kernel.field_spread_upto(
            indptr, indices, ticks, most, sources, dist, width, -1, -1.0
        )

    with pytest.raises(ValueError, match="span, step, stop or after out of range"):
        whole(-1, src)
    with pytest.raises(ValueError, match="span, step, stop or after out of range"):
        whole((1 << 24) + 1, src)
    with pytest.raises(ValueError, match="a source out of range"):
        whole(3, far)
    with pytest.raises(ValueError, match="an index out of range"):
        whole(3, src, at=np.array([1, 3], np.int32))
    with pytest.raises(ValueError, match="indptr, indices, ticks and dist disagree"):
        whole(3, src, n=4)
    with pytest.raises(ValueError, match="width, most, stop or after out of range"):
        spread_of(6.0, 0.0, src)
    with pytest.raises(ValueError, match="width, most, stop or after out of range"):
        spread_of(1.0, 1.0, src)  # most under 2 * width
    with pytest.raises(ValueError, match="a source out of range"):
        spread_of(6.0, 1.0, far)
    with pytest.raises(ValueError, match="a tick out of 2 \\* width..most"):
        spread_of(6.0, 1.0, src, np.array([2.0, np.nan]))


def _records(name: str, runs: int) -> list[dict[str, object]]:
    from engine.batch import run_seeds
    from engine.scenario import load_scenario
    from engine.sim import FieldCache, Simulation

    scenario = load_scenario(str(ROOT / "scenarios" / f"{name}.yaml"))
    fields = FieldCache(scenario)
    return [
        Simulation(scenario, s, fields=fields, run=r, record="count").run().to_dict()
        for r, s in enumerate(run_seeds(scenario.seed, runs))
    ]


@needs_flee
@pytest.mark.parametrize("name", ["chase", "hex_hunt"])
def test_the_chases_play_the_same_runs_with_the_seams_off(
    name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    asked: list[int] = []
    scan = flee.flee_scan

    def counted(*args):  # type: ignore[no-untyped-def]
        asked.append(1)
        return scan(*args)

    monkeypatch.setattr(flee, "flee_scan", counted)
    on = _records(name, 60)
    assert len(asked) > 20  # the quarry fled, by the kernel's scans
    monkeypatch.setattr(flee, "ON", False)
    monkeypatch.setattr(spread, "LEAN", False)
    monkeypatch.setattr(ThreatMaps, "PLAIN", False)
    assert _records(name, 60) == on
