"""The goal choices' speed seams give what the plain ways give (the goalfast lane).

- A fleeing quarry's scans (engine.sim.flee ``flee_scan`` and ``sector_picks``, in
  engine/_kernel.c ``goalfast_flee_scan`` and ``goalfast_flee_picks``) against their numpy
  twins, on random turn arrays full of ties, +inf and taken cells, and a crossing under
  way; and whole batches of the shipped chases played with the seams on and off.
"""

from __future__ import annotations

from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest

from engine import kernel
from engine.grid import Grid
from engine.sim import flee

ROOT = Path(__file__).resolve().parents[1]
needs_flee = pytest.mark.skipif(
    not kernel.goalfast_flee_available(), reason="kernel not built with goalfast_flee_*"
)


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
    assert kernel.goalfast_flee_scan(mine, threat, none, -1, 0.0, np.empty(4, np.int64))[:2] == (
        4,
        4,
    )
    with pytest.raises(ValueError):
        kernel.goalfast_flee_scan(
            mine, threat, np.array([4], np.int64), -1, 0.0, np.empty(4, np.int64)
        )
    with pytest.raises(ValueError):
        kernel.goalfast_flee_scan(mine, threat[:3], none, -1, 0.0, np.empty(4, np.int64))
    safe = np.arange(4, dtype=np.int64)
    with pytest.raises(ValueError):
        kernel.goalfast_flee_picks(
            safe, np.array([0, 1, 2, 3], np.int64), mine, threat, 3, 4, np.empty(4, np.int64)
        )


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
def test_the_chases_play_the_same_runs_with_the_flee_seams_off(
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
    assert _records(name, 60) == on
