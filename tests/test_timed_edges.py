"""A timeline's edge prices (engine/timed.py): each node's out-edges at a turn's pace are
listed once and kept; every edge priced so equals the plain way, a scan of the turn's
graph's listing of that node for the edge (the first listing of it)."""

from __future__ import annotations

import random
from fractions import Fraction

from conftest import ROOT

from engine import api
from engine.movement import MovementGraph
from engine.tiled import load_map
from engine.timed import Timeline, timeline


def _plain_cost(tl: Timeline, k: int, u: int, v: int, static: object) -> object:
    if k >= len(tl.rounds):
        return static
    scale = Fraction(tl.graph.denominator, tl.rounds[k].denominator)
    for w, t in tl.rounds[k].neighbours(u):
        if w == v:
            return t * scale if isinstance(t, int) else t * float(scale)
    return None


def test_kept_edge_prices_equal_a_scan_of_the_listing() -> None:
    model = load_map(str(ROOT / "maps" / "chase.tmx"))
    rules = api.system("d6")
    rng = random.Random(5)
    asked = 0
    for pace in ("high", "all_out"):
        graph = MovementGraph(model, rules, rules.token({}), pace)
        tl = timeline(graph)
        assert tl is not None and tl.rounds, pace
        nodes = rng.sample(range(graph.n * graph.n_par * len(graph.state_ticks)), 300)
        for u in nodes:
            # Every neighbour of the main graph, and a node that is not one.
            pairs = [*graph.neighbours(u), (u, 7)]
            for _ in range(2):  # the second time from what was kept
                for v, static in pairs:
                    for k in range(len(tl.rounds) + 1):
                        got = tl._cost(k, u, v, static)
                        assert got == _plain_cost(tl, k, u, v, static), (pace, u, v, k)
                        assert type(got) is type(_plain_cost(tl, k, u, v, static))
                        asked += 1
    assert asked > 4000
