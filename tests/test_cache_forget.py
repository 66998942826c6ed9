"""FieldCache.forget_turns: what the runs learned of their turns is dropped, the graphs and
fields are kept, and the runs after play as before."""

from __future__ import annotations

from typing import Any

from conftest import ROOT

from engine.batch import run_seeds
from engine.scenario import load_scenario
from engine.sim import FieldCache, Simulation

SHIPPED = sorted((ROOT / "scenarios").glob("*.yaml"))


def _records(sc: Any, fields: FieldCache, items: list[tuple[int, int]]) -> list[Any]:
    out = []
    for run, seed in items:
        sim = Simulation(sc, seed, fields=fields, run=run, record="count")
        out.append((sim.run().to_dict(), sim.n_events))
    return out


def _fields_made(fields: FieldCache) -> int:
    """How many distance fields the cache's shared distances hold."""
    return sum(
        len(d.to) + len(d.base_to) + len(d.turns) + len(d.from_)
        for ds in fields._by_csr.values()
        for _, d in ds
    )


def test_runs_after_forgetting_the_turns_play_as_before() -> None:
    """In every shipped scenario, runs played again after forget_turns end as they ended
    the first time and as they end from a fresh cache; the turn memos are empty after it,
    and the fields are kept: playing the same runs again makes no new field."""
    for path in SHIPPED:
        sc = load_scenario(path)
        items = list(enumerate(run_seeds(sc.seed, 60 if path.name == "chase.yaml" else 15)))
        fields = FieldCache(sc)
        first = _records(sc, fields, items)
        made = _fields_made(fields)
        learned = len(fields.starts) + len(fields.plans) + len(fields.hooks._memo)
        fields.forget_turns()
        assert not (fields.starts or fields.starts_by_reads or fields.ways or fields.plans)
        assert not (fields.plans_by_reads or fields._descents or fields.hooks._memo)
        again = _records(sc, fields, items)
        assert again == first == _records(sc, FieldCache(sc), items), path.name
        assert _fields_made(fields) == made, path.name
        if path.name == "chase.yaml":
            assert learned > 100 and made > 50
