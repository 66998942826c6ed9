"""Runs per second of the shipped square chase on one worker, as a ratio to the same chase
driven by a plain networkx shortest-path search every turn (issue 11 target: >= 15x).

Run: python benchmarks/bench_chase.py   (exit status 1 if the target is missed)
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import networkx as nx  # noqa: E402

from engine.batch import run_chunk, run_seeds  # noqa: E402
from engine.scenario import load_scenario  # noqa: E402
from engine.sim import FieldCache, Simulation  # noqa: E402

SCENARIO = str(ROOT / "scenarios" / "chase.yaml")
TARGET = 15.0


class NetworkxChase(Simulation):
    """The reference: every turn, each token asks networkx for a shortest path."""

    def take_turn(self, tid, path=None):  # type: ignore[override]
        spec = self.specs[tid]
        token = self.tokens[tid]
        prof = self.fields.profile(token, spec.pace or self.system.default_pace)
        graph = prof.graph.to_networkx()
        here = (token.state.cell, 0)
        if spec.policy == "quarry":
            exits = [(c, p) for c in self.scenario.exit_cells for p in range(prof.graph.n_states)]
            _, paths = nx.multi_source_dijkstra(graph.reverse(copy=False), exits, weight="ticks")
            route = paths.get(here)
            cells = [c for c, _ in reversed(route)] if route else None
        else:
            goal = self.tokens[spec.target or self.quarries[0]].state.cell
            try:
                route = nx.shortest_path(graph, here, (goal, 0), weight="ticks")
                cells = [c for c, _ in route]
            except nx.NetworkXNoPath:
                cells = None
        super().take_turn(tid, cells)


def main() -> int:
    scenario = load_scenario(SCENARIO)
    seeds = run_seeds(scenario.seed, 400)
    items = list(enumerate(seeds))
    run_chunk(SCENARIO, (), items[:20])  # warm: load, graphs, first fields
    t = time.perf_counter()
    ours = run_chunk(SCENARIO, (), items)
    t_ours = time.perf_counter() - t
    rate_ours = len(ours) / t_ours

    fields = FieldCache(scenario)
    ref_items = items[:20]
    NetworkxChase(scenario, ref_items[0][1], fields=fields, record=False).run()  # warm
    t = time.perf_counter()
    for run, seed in ref_items:
        NetworkxChase(scenario, seed, fields=fields, run=run, record=False).run()
    t_ref = time.perf_counter() - t
    rate_ref = len(ref_items) / t_ref
    ratio = rate_ours / rate_ref
    ok = ratio >= TARGET
    print(
        f"square chase, 1 worker: {rate_ours:.0f} runs/s vs networkx per turn {rate_ref:.1f} runs/s "
        f"-> {ratio:.1f}x (target >= {TARGET:g}x) {'ok' if ok else 'MISSED'}"
    )
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
