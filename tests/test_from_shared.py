"""Turns from a cell on a small graph: the ticks are kept over the scale, so a profile at
another speed on the same compiled graph takes them, times its scale, with no field made
(Profile.turns_from), and gets the same turns as its own Dijkstra gives."""

from __future__ import annotations

import random

import numpy as np
from conftest import ROOT

from engine.scenario import load_scenario
from engine.sim import FieldCache, Simulation
from engine.sim.fields import Profile

CHASE = ROOT / "scenarios" / "chase.yaml"


def _profiles(fields: FieldCache) -> dict[str, Profile]:
    sc = fields.scenario
    sim = Simulation(sc, 1, fields=fields, record=False)
    return {tid: sim.profile_now(tid) for tid in sim.order}


def test_turns_from_a_cell_at_another_speed_equal_its_own_field() -> None:
    sc = load_scenario(CHASE)
    shared = FieldCache(sc)
    profs = _profiles(shared)
    p1, p2, q = profs["pursuer1"], profs["pursuer2"], profs["quarry"]
    assert p1.shared is p2.shared is q.shared
    assert len({p1.scale, p2.scale}) == 2
    assert p2.graph.denominator != q.graph.denominator
    grid = sc.model.grid
    rng = random.Random(43)
    cells = [grid.cell_of_index(i) for i in rng.sample(range(grid.width * grid.height), 40)]
    taken = 0
    for cell in cells:
        first = p1.turns_from(cell)
        kept = cell in p1.shared.from_
        taken += kept
        for tid in ("pursuer2", "quarry"):
            got = profs[tid].turns_from(cell)
            own = _profiles(FieldCache(sc))[tid].turns_from(cell)
            assert np.array_equal(got, own), (tid, cell)
            assert got.dtype == own.dtype and not got.flags.writeable
        assert np.isfinite(first).any()
    assert taken == len(cells)
