"""The reach read off the compiled search's arrays (engine.search.window, the seam a live drag
needs) answers what the plain reach answers: the same cells, times, bands and order, and the
same search tree, on every shipped map, for every system and pace, from random starts."""

from __future__ import annotations

import random
from pathlib import Path

import pytest
from conftest import ROOT

from engine import api, kernel
from engine.query import Query
from engine.search import reach
from engine.search.window import window_reach
from engine.tiled import load_map

MAPS = sorted(
    [*(ROOT / "maps").glob("*.tmx"), *(ROOT / "maps").glob("*.tmj")], key=lambda p: p.name
)
SYSTEMS = ["generic", "whisperspace", "mythmaster", "speedpoints", "d6"]

needs_kernel = pytest.mark.skipif(not kernel.available(), reason="the compiled kernel is off")


@needs_kernel
@pytest.mark.parametrize("path", MAPS, ids=lambda p: p.name)
@pytest.mark.parametrize("system", SYSTEMS)
def test_window_reach_equals_the_plain_reach(path: Path, system: str) -> None:
    model = load_map(str(path))
    rules = api.system(system)
    token = rules.token({})
    q = Query(model, rules, token)
    rng = random.Random(f"{path.name}{system}")
    cells = [
        (c, r)
        for r in range(model.grid.height)
        for c in range(model.grid.width)
        if model.terrain_at((c, r)).move != "blocked"
    ]
    answered = 0
    for pace in rules.paces:
        for turns in (1, 3):
            start = rng.choice(cells)
            graphs = {p: q.graph(p, start) for p in rules.paces}
            plain = reach(graphs, pace, start, turns, window=False)
            fast = window_reach(graphs, pace, start, turns)
            if fast is None:
                continue
            answered += 1
            assert fast.cells == plain.cells
            assert (fast.pace, fast.bands, fast.start, fast.turns) == (
                plain.pace,
                plain.bands,
                plain.start,
                plain.turns,
            )
            assert fast.tree.dist == plain.tree.dist
            assert fast.tree.prev == plain.tree.prev
            far = fast.cells[-1][0]
            assert fast.tree.path_to(far) == plain.tree.path_to(far)
            assert fast.tree.turns(far) == plain.tree.turns(far)
    if system in ("generic", "whisperspace"):
        assert answered, "the window answers on a static pace without climbs"


@needs_kernel
def test_window_reach_on_a_big_map_from_any_start() -> None:
    """A 30-cell mover (speed 150 on a 5-ft map) from starts all over a 96^2 map, edges and
    corners included."""
    import sys

    sys.path.insert(0, str(ROOT / "benchmarks"))
    import mapgen

    model = load_map(mapgen.map_file(96, "alternate"))
    rules = api.system("generic")
    q = Query(model, rules, rules.token({"speed": 150}))
    rng = random.Random(3)
    starts = [(0, 0), (95, 95), (0, 50), (95, 3)] + [
        (rng.randrange(96), rng.randrange(96)) for _ in range(6)
    ]
    for start in starts:
        if model.terrain_at(start).move == "blocked":
            continue
        graphs = {p: q.graph(p, start) for p in rules.paces}
        for pace in rules.paces:
            plain = reach(graphs, pace, start, 1, window=False)
            fast = window_reach(graphs, pace, start, 1)
            assert fast is not None and fast.cells == plain.cells
