"""A field takes its distances as a list of floats only once its walks have gone some way
(engine.sim.fields.LIST_AFTER_STEPS): before, its steps read the array. Either way every
step down it, every turn's walk and every run are the same."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import numpy as np
import pytest

from engine.batch.work import _play, run_seeds
from engine.scenario import load_scenario
from engine.sim import FieldCache, Simulation, descend
from engine.sim import fields as fieldmod
from engine.sim.fields import Field

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize("name", ["chase", "hex_hunt"])
def test_steps_and_walks_are_the_same_from_the_array_and_the_list(
    name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Field.step's own reads (the kernel's steps down, engine.sim.descend, are held equal
    # to them in tests/test_chaserate.py).
    monkeypatch.setattr(descend, "ON", False)
    sc = load_scenario(str(ROOT / "scenarios" / f"{name}.yaml"))
    sim = Simulation(sc, 1, fields=FieldCache(sc), record=False)
    rng = np.random.default_rng(2)
    checked = 0
    for tid in sim.order:
        prof = sim.profile_now(tid)
        g = prof.graph
        for _ in range(4):
            goal = g.grid.cell_of_index(int(rng.integers(0, g.n)))
            for risk in (False, True):
                dist = prof.field_to((goal,), risk=risk).dist
                made = {}
                for after in (0, fieldmod.LIST_AFTER_STEPS, 10**9):
                    monkeypatch.setattr(fieldmod, "LIST_AFTER_STEPS", after)
                    field = Field(dist)
                    steps = [field.step(prof, v) for v in range(len(dist))]
                    walks = [field.walk(prof, v) for v in range(0, len(dist), 5)]
                    made[after] = (steps, [(w.edges, w.after) for w in walks])
                    assert (type(field._steps) is list) == (after < 10**9)
                assert made[0] == made[fieldmod.LIST_AFTER_STEPS] == made[10**9]
                checked += sum(s is not None for s in made[0][0])
    assert checked > 1000


def test_runs_are_the_same_with_lists_at_once(monkeypatch: pytest.MonkeyPatch) -> None:
    sc = load_scenario(str(ROOT / "scenarios" / "chase.yaml"))
    items = list(enumerate(run_seeds(7, 60)))
    digests = []
    for after in (0, fieldmod.LIST_AFTER_STEPS):
        monkeypatch.setattr(fieldmod, "LIST_AFTER_STEPS", after)
        records = _play(sc, FieldCache(sc), items)
        digests.append(hashlib.sha256(json.dumps(records, sort_keys=True).encode()).hexdigest())
    assert digests[0] == digests[1]
