"""Turn plans kept by what they read (FieldCache.plan_by_reads): starts of a turn that differ
only in where the other tokens stand share one plan and the outcomes kept in it."""

from __future__ import annotations

from typing import Any

from conftest import ROOT

from engine.batch import run_seeds
from engine.scenario import load_scenario
from engine.sim import FieldCache, Simulation

CHASE = ROOT / "scenarios" / "chase.yaml"
SHIPPED = sorted((ROOT / "scenarios").glob("*.yaml"))


class _Checked(FieldCache):
    """A field cache that, wherever a plan is served by its reads for a start it was not
    made from, makes that start's plan the plain way too and keeps both."""

    def __init__(self, scenario: Any) -> None:
        super().__init__(scenario)
        self.served: list[tuple[Any, Any]] = []

    def plan_by_reads(self, tid: str, start: tuple[Any, ...], make: Any) -> Any:
        made: list[Any] = []

        def counted(s: tuple[Any, ...]) -> Any:
            made.append(s)
            return make(s)

        got = super().plan_by_reads(tid, start, counted)
        if not made:
            self.served.append((got, make(start)))
        return got


def _same_plan(a: Any, b: Any) -> bool:
    if a is None or b is None:
        return a is b
    return (a.rolls, a.path, a.ticks) == (b.rolls, b.path, b.ticks)


def test_a_plan_served_by_its_reads_is_the_plan_of_the_start_and_plays_alike() -> None:
    """Over 300 chase runs, every plan served for a start it was not made from equals the
    plan made for that start (the same checks in the same order, the same cells and
    ticks), and each run counted from the shared plans (and the outcomes other starts
    learned in them) ends as its logged run (which plays no plan) ends, with as many
    events. Sharing happens: over a hundred starts are served so."""
    sc = load_scenario(CHASE)
    logged_fields, counted_fields = FieldCache(sc), _Checked(sc)
    for run, seed in enumerate(run_seeds(sc.seed, 300)):
        logged = Simulation(sc, seed, fields=logged_fields, run=run)
        counted = Simulation(sc, seed, fields=counted_fields, run=run, record="count")
        assert counted.run().to_dict() == logged.run().to_dict(), f"run {run}"
        assert counted.n_events == len(logged.events)
    served = counted_fields.served
    assert len(served) > 100
    assert sum(p is not None for p, _ in served) > 100
    for kept, plain in served:
        assert _same_plan(kept, plain)
    starts = [p for p in counted_fields.plans.values() if p is not None]
    assert len({id(p) for p in starts}) < len(starts)


def test_every_shipped_scenario_plays_alike_with_plans_shared() -> None:
    """Each shipped scenario's runs counted from shared plans end as their logged runs do,
    and every plan served by its reads equals the start's own."""
    for path in SHIPPED:
        sc = load_scenario(path)
        logged_fields, counted_fields = FieldCache(sc), _Checked(sc)
        for run, seed in enumerate(run_seeds(sc.seed, 40)):
            logged = Simulation(sc, seed, fields=logged_fields, run=run)
            counted = Simulation(sc, seed, fields=counted_fields, run=run, record="count")
            assert counted.run().to_dict() == logged.run().to_dict(), f"{path.name} {run}"
            assert counted.n_events == len(logged.events)
        for kept, plain in counted_fields.served:
            assert _same_plan(kept, plain), path.name
