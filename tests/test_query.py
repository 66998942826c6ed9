"""The query front (engine/query.py) and its engines: networkx, searched on the graph's
networkx form with networkx's own Dijkstra, answers the totals of tacgrid's compiled
searches on every shipped map, for every system whose pace is a static graph."""

from __future__ import annotations

import random
from fractions import Fraction
from pathlib import Path

import pytest
from conftest import ROOT

from engine import api, systems
from engine.errors import ArgumentError
from engine.query import Other, Query
from engine.report.movement import reach_json
from engine.search import NoPath, ReachAnswer
from engine.tiled import load_map

MAPS = sorted(
    [*(ROOT / "maps").glob("*.tmx"), *(ROOT / "maps").glob("*.tmj")], key=lambda p: p.name
)
SYSTEMS = ["generic", "whisperspace", "mythmaster", "speedpoints", "d6"]
#: networkx's graphs of a 48x36 map take seconds to build: each map is asked of three
#: systems, chosen in turn so that every system meets every grid kind across the maps.


def _static_paces(rules: systems.base.RuleSystem, model: object) -> list[str]:
    from engine.movement import MovementGraph
    from engine.timed import timeline

    token = rules.token({})
    return [p for p in rules.paces if timeline(MovementGraph(model, rules, token, p)) is None]


@pytest.mark.parametrize("path", MAPS, ids=lambda p: p.name)
def test_networkx_answers_the_compiled_totals(path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import networkx as nx

    calls = []
    real = nx.single_source_dijkstra

    def counted(*args: object, **kw: object) -> object:
        calls.append(1)
        return real(*args, **kw)

    monkeypatch.setattr(nx, "single_source_dijkstra", counted)
    model = load_map(str(path))
    rng = random.Random(path.name)
    cells = [(c, r) for r in range(model.grid.height) for c in range(model.grid.width)]
    compared = 0
    k = MAPS.index(path)
    for name in [SYSTEMS[(k + i) % len(SYSTEMS)] for i in range(3)]:
        rules = api.system(name)
        token = rules.token({})
        for pace in _static_paces(rules, model)[:1]:
            compiled = Query(model, rules, token, pace=pace)
            networkx = Query(model, rules, token, pace=pace, engine="networkx")
            for _ in range(4):
                a, b = rng.choice(cells), rng.choice(cells)
                try:
                    want = compiled.path(a, b)
                except NoPath as exc:
                    with pytest.raises(NoPath) as got_err:
                        networkx.path(a, b)
                    assert str(got_err.value) == str(exc)
                    continue
                got = networkx.path(a, b)
                assert got.turns == want.turns, (name, pace, a, b)
                assert got.cells[0] == a and got.cells[-1] == b
                compared += 1
            start = rng.choice(cells)
            want_reach = compiled.reach(start, turns=2, pace=pace)
            got_reach = networkx.reach(start, turns=2, pace=pace)
            assert _cells(got_reach) == _cells(want_reach), (name, pace, start)
    assert compared >= 5
    assert len(calls) >= compared  # networkx's own search answered


def _cells(rep: ReachAnswer) -> dict[tuple[int, int], tuple[Fraction, str]]:
    return {cell: (Fraction(t).limit_denominator(10**6), band) for cell, t, band in rep.cells}


def test_networkx_refuses_a_pace_that_changes_turn_by_turn() -> None:
    """D6's all-out speed changes round by round (a time-dependent search): no static
    networkx graph holds it, and the engine says so instead of answering wrong."""
    model = load_map(str(ROOT / "maps" / "chase.tmx"))
    rules = api.system("d6")
    token = rules.token({})
    static = _static_paces(rules, model)
    timed = [p for p in rules.paces if p not in static]
    assert timed, "D6 has a pace whose search is time-dependent"
    with pytest.raises(ArgumentError) as err:
        Query(model, rules, token, pace=timed[0], engine="networkx").path((1, 1), (9, 9))
    assert err.value.role == "engine" and "compiled engine" in str(err.value)


def test_an_unknown_engine_is_one_line() -> None:
    model = load_map(str(ROOT / "maps" / "chase.tmx"))
    rules = api.system("generic")
    with pytest.raises(ArgumentError) as err:
        Query(model, rules, rules.token({}), engine="tcod")
    assert err.value.role == "engine" and "compiled or networkx" in str(err.value)


def test_a_query_with_tokens_in_the_way() -> None:
    """A large token among others: blocked the long way round, an ally's cell passed but
    never the end of a path or a reach; the start is never blocked by the token itself."""
    model = load_map(str(ROOT / "maps" / "encounter.tmx"))
    rules = api.system("generic")
    token = rules.token({})
    ally, enemy = (6, 3), (6, 6)
    q = Query(
        model,
        rules,
        token,
        others=[Other(ally, enemy=False), Other(enemy)],
    )
    with pytest.raises(NoPath, match="ally's cell"):
        q.path((3, 3), ally)
    rep = q.reach((3, 3), turns=2)
    reached = {cell for cell, _, _ in rep.cells}
    assert ally not in reached and enemy not in reached
    open_map = Query(model, rules, token).reach((3, 3), turns=2)
    assert ally in {cell for cell, _, _ in open_map.cells}
    # The same answers through the API's functions (the contract's JSON).
    assert (
        api.reach(model, rules, token, (3, 3), turns=2, others=q_others())["cells"]
        == reach_json(rep)["cells"]
    )


def q_others() -> list[Other]:
    return [Other((6, 3), enemy=False), Other((6, 6))]
