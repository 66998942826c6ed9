"""Search state (issue 17): a system's layers (a prone token's ``prone`` and ``standing``,
joined by standing up in place) are searched alike by the pure-Python Dijkstra, scipy's
compiled Dijkstra on the CSR arrays and networkx, and paths, reach and the turn loop charge
them as the search did."""

from __future__ import annotations

from fractions import Fraction

import networkx as nx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_search import VARIANTS, model_from

from engine import systems
from engine.mapmodel import Terrain
from engine.movement import MovementGraph
from engine.report.movement import path_json, reach_dict
from engine.search import (
    NoPath,
    compiled_field,
    compiled_path,
    dijkstra,
    evaluate_path,
    find_path,
    reach,
)

W = systems.create("whisperspace")
SP = systems.create("speedpoints")


def prone_graph(rows, pace="sprint", stats="phys=1,prone=true", **kw) -> MovementGraph:
    return MovementGraph(model_from(rows, **kw), W, W.token(stats), pace)


def _norm(x: float) -> float:
    return round(float(x), 6)


@st.composite
def prone_maps(draw):
    w = draw(st.integers(2, 8))
    h = draw(st.integers(2, 8))
    rows = ["".join(draw(st.sampled_from("..._,#~^")) for _ in range(w)) for _ in range(h)]
    variant = draw(st.sampled_from(VARIANTS))
    start = (draw(st.integers(0, w - 1)), draw(st.integers(0, h - 1)))
    pace = draw(st.sampled_from(["walk", "run", "sprint"]))
    stats = draw(st.sampled_from(["phys=1,prone=true", "speed=10,prone=true", "phys=1"]))
    return rows, variant, start, pace, stats


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(prone_maps())
def test_layers_agree_in_every_engine(case) -> None:
    rows, (orientation, rule, stagger), start, pace, stats = case
    g = prone_graph(rows, pace, stats, orientation=orientation, diagonals=rule, stagger=stagger)
    py = dijkstra(g, start)
    sp = compiled_field(g, start)
    assert {k: _norm(v) for k, v in py.dist.items()} == {k: _norm(v) for k, v in sp.dist.items()}
    nxg = g.to_networkx()
    src = g.nx_label(g.node(start))
    nd = nx.single_source_dijkstra_path_length(nxg, src, weight="ticks")
    labels = {g.nx_label(k): k for k in range(g.n * g.n_states)}
    assert {labels[lab]: _norm(v) for lab, v in nd.items()} == {
        k: _norm(v) for k, v in py.dist.items()
    }
    # The compiled path and the Python tree's path cost the same when evaluated.
    for cell in py.cells():
        assert _norm(py.ticks(cell)) == _norm(sp.ticks(cell))
        if cell == start:
            continue
        a = evaluate_path(g, py.path_to(cell))
        b = evaluate_path(g, compiled_path(g, start, cell) or [])
        assert _norm(a.ticks) == _norm(b.ticks) == _norm(py.ticks(cell))


def test_prone_token_has_two_layers_and_stands_once() -> None:
    g = prone_graph(["." * 40], "sprint")
    assert g.search.names == ("prone", "standing") and g.n_states == 4
    rep = path_json(find_path(g, (0, 0), (39, 0)))
    # PHYS 1: Speed 35; 195 ft + 15 ft standing = 210 ft = 2 turns at sprint (105 ft a turn).
    assert rep["turns_exact"] == 2
    assert rep["steps"][1]["first"] == ["standing"]
    assert sum("first" in s for s in rep["steps"]) == 1


def test_prone_token_crawls_without_standing() -> None:
    # Crawling needs no standing up: the crawlspace costs the same as for a standing token.
    up = prone_graph(["____"], "sprint", "phys=1")
    down = prone_graph(["____"], "sprint", "phys=1,prone=true")
    a, b = path_json(find_path(up, (0, 0), (3, 0))), path_json(find_path(down, (0, 0), (3, 0)))
    assert a["turns_exact"] == b["turns_exact"]
    assert not any("first" in s for s in b["steps"])


def test_reach_pays_standing_once() -> None:
    g = {p: prone_graph(["." * 60], p) for p in ("walk", "run", "sprint")}
    r = reach_dict(reach(g, "sprint", (0, 0), turns=2))
    # 2 turns at sprint: 210 ft, 15 of them standing: 195 ft = 39 cells.
    assert max(c["cell"][0] for c in r["cells"]) == 39


def test_prone_slow_token_stands_with_a_whole_move_action() -> None:
    # Speed 10: a Move action worth less than 15 ft is spent wholly on standing (then walk).
    g = prone_graph(["...."], "walk", "speed=10,prone=true")
    rep = path_json(find_path(g, (0, 0), (1, 0)))
    assert Fraction(rep["turns_exact"]) == 1 + Fraction(1, 2)


def test_check_period_counts_move_actions_and_climbs() -> None:
    swim = prone_graph([".~~~~~~"], "sprint", "speed=30")
    rep = path_json(find_path(swim, (0, 0), (6, 0)))
    assert [i for i, s in enumerate(rep["steps"]) if s["check"]] == [1, 3, 5]
    ladder = MovementGraph(model_from(["HHHH."]), SP, SP.token("running=4"), SP.default_pace)
    rep = path_json(find_path(ladder, (4, 0), (0, 0)))
    assert rep["turns"] > 1 and sum(1 for s in rep["steps"] if s["check"]) == 1


def test_update_cells_rebuilds_layers() -> None:
    import numpy as np

    g = prone_graph(["....", "...."], "sprint")
    before = compiled_field(g, (0, 0)).ticks((3, 1))
    ids = g.model.terrain_ids
    wall = next(i for i, t in enumerate(g.model.terrains) if t.move == "walk")
    assert ids[0, 1] == wall
    g.model.terrain_ids[:, 1] = np.int32(wall)  # nothing changes: same answers
    g.update_cells([(1, 0), (1, 1)])
    assert compiled_field(g, (0, 0)).ticks((3, 1)) == before == dijkstra(g, (0, 0)).ticks((3, 1))


@pytest.mark.parametrize("pace", ["walk", "run", "sprint"])
def test_turn_loop_walks_the_layers(pace) -> None:
    """The turn loop's next step follows the same layered CSR: a prone token reaches the
    cells the search says it reaches in its first turn."""
    from engine.sim import Profile

    g = prone_graph(["." * 30], pace)
    prof = Profile(g)
    field = prof.field_to(((29, 0),))
    node = g.node((0, 0))
    spent = 0.0
    cells = [(0, 0)]
    while field.left(node) > 0:
        step = field.step(prof, node)
        assert step is not None
        nxt, w = step
        if spent + w > g.denominator:
            break
        spent += w
        node = nxt
        if g.cell_of(node) != cells[-1]:
            cells.append(g.cell_of(node))
    tree = dijkstra(g, (0, 0), limit=g.denominator)
    assert cells[-1] == max(tree.cells())


# --------------------------------------------------------------------------- jumps (issue 17)


def jump_graph(rows, running=4, **kw) -> MovementGraph:
    return MovementGraph(leap_model(rows, **kw), SP, SP.token(f"running={running}"), "run")


def leap_model(rows, orientation="orthogonal", diagonals="alternate", stagger=("y", "odd")):
    """model_from's drawing, with raised ground: digits are walk cells that many m high."""
    import dataclasses

    plain = [r.translate(str.maketrans("123", "...")) for r in rows]
    model = model_from(plain, orientation, diagonals, stagger)
    terrains = list(model.terrains)
    ids = model.terrain_ids.copy()
    for r, row in enumerate(rows):
        for c, ch in enumerate(row):
            if ch.isdigit():
                t = Terrain(name=f"ledge{ch}", move="walk", height=float(ch))
                if t not in terrains:
                    terrains.append(t)
                ids[r, c] = terrains.index(t)
    return dataclasses.replace(model, terrain_ids=ids, terrains=tuple(terrains))


@st.composite
def gap_maps(draw):
    w = draw(st.integers(2, 7))
    h = draw(st.integers(1, 6))
    rows = ["".join(draw(st.sampled_from("....OO,#~123")) for _ in range(w)) for _ in range(h)]
    variant = draw(st.sampled_from(VARIANTS))
    start = (draw(st.integers(0, w - 1)), draw(st.integers(0, h - 1)))
    running = draw(st.integers(2, 9))
    return rows, variant, start, running


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(gap_maps())
def test_jump_edges_agree_in_every_engine(case) -> None:
    """Jump edges are the same graph to the Python search, scipy's and networkx, and a
    path's evaluation (cell by cell, the gap listed) costs what the search said."""
    rows, (orientation, rule, stagger), start, running = case
    g = jump_graph(rows, running, orientation=orientation, diagonals=rule, stagger=stagger)
    py = dijkstra(g, start)
    sp = compiled_field(g, start)
    assert {k: _norm(v) for k, v in py.dist.items()} == {k: _norm(v) for k, v in sp.dist.items()}
    nxg = g.to_networkx()
    nd = nx.single_source_dijkstra_path_length(nxg, g.nx_label(g.node(start)), weight="ticks")
    labels = {g.nx_label(k): k for k in range(g.n * g.n_states)}
    assert {labels[lab]: _norm(v) for lab, v in nd.items()} == {
        k: _norm(v) for k, v in py.dist.items()
    }
    for cell in py.cells():
        if cell == start:
            continue
        cells = py.path_to(cell)
        a = evaluate_path(g, cells)
        b = evaluate_path(g, compiled_path(g, start, cell) or [])
        assert _norm(a.ticks) == _norm(b.ticks) == _norm(py.ticks(cell))
        # Every listed cell is a neighbour of the last: the gap's cells are in the path.
        for u, v in zip(cells, cells[1:], strict=False):
            assert v in g.grid.neighbours(u)
        assert [s["cell"] for s in a.steps] == [list(c) for c in cells]


def _reference_jumps(g: MovementGraph, start) -> dict:  # noqa: C901
    """Brute force with the last step in the state: (cell, direction slot, from ground).

    A jump from T in direction d over the gap cells ahead to the first non-gap cell has a
    run-up when the step onto T went in direction d from a walk cell (RULES.md 4)."""
    import heapq

    grid = g.grid
    ids = g.model.terrain_ids.ravel()
    level = [Fraction(c.terrain.height or 0) if c.terrain.move == "walk" else 0 for c in g.costs]
    ticks = g._ticks_list
    den = g.denominator
    moves = [c.terrain.move for c in g.costs]

    def ahead(idx, slot):
        c, r = grid.cell_of_index(idx)
        dc, dr, _ = grid.offsets(grid.parity((c, r)))[slot]
        nb = (c + dc, r + dr)
        return grid.index(nb) if grid.in_bounds(nb) else None

    n_slots = len(grid.offsets(0))
    best: dict = {}
    heap = [(0, grid.index(start), -1, False)]
    while heap:
        d, idx, last, ground = heapq.heappop(heap)
        if (idx, last, ground) in best:
            continue
        best[(idx, last, ground)] = d
        here_walk = moves[ids[idx]] == "walk"
        for slot in range(n_slots):
            j = ahead(idx, slot)
            if j is None:
                continue
            if moves[ids[j]] != "gap":
                rise = level[ids[j]] - level[ids[idx]]
                if ticks[j] >= 0 and here_walk and moves[ids[j]] == "walk" and rise > 0:
                    standing = SP.leap(g.token, rise, False)
                    plain = standing == (None, None)
                    ok = plain or standing[0] is None
                    if not ok and last == slot and ground:
                        ok = SP.leap(g.token, rise, True)[0] is None
                    if ok:  # a run-up is a plain step, not a leap
                        heapq.heappush(heap, (d + ticks[j], j, slot, here_walk and plain))
                elif ticks[j] >= 0:
                    heapq.heappush(heap, (d + ticks[j], j, slot, here_walk))
                continue
            if not here_walk:
                continue
            cost, width, cur = 0, 0, j
            gaps = []
            while cur is not None and moves[ids[cur]] == "gap":
                gaps.append(g.costs[ids[cur]].terrain)
                cost += int(g.costs[ids[cur]].over * den)
                width += 2
                cur = ahead(cur, slot)
            if cur is None or ticks[cur] < 0 or moves[ids[cur]] not in ("walk", "crawl", "swim"):
                continue
            run_up = last == slot and ground
            why, _ = SP.jump(g.token, Fraction(width), run_up, tuple(gaps))
            if why is None:
                heapq.heappush(heap, (d + cost + ticks[cur], cur, slot, False))
    out: dict = {}
    for (idx, _, _), d in best.items():
        cell = grid.cell_of_index(idx)
        out[cell] = min(out.get(cell, d), d)
    return out


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(gap_maps().filter(lambda c: c[1][1] in ("none", "equal") or c[1][0] == "hexagonal"))
def test_run_up_matches_brute_force(case) -> None:
    """The jump edges (a run-up edge from the cell before the take-off) reach the same cells
    in the same times as a search that carries the last step's direction."""
    rows, (orientation, rule, stagger), start, running = case
    g = jump_graph(rows, running, orientation=orientation, diagonals=rule, stagger=stagger)
    tree = dijkstra(g, start)
    ref = _reference_jumps(g, start)
    assert {c: tree.ticks(c) for c in tree.cells()} == ref


def test_jump_over_two_cells_is_one_edge_with_one_roll() -> None:
    g = jump_graph(["...OO..."], running=4, diagonals="none")
    jumps = [j for j in g.jumps if j.run_up and g.cell_of(j.src) == (1, 0)]
    assert len(jumps) == 1 and jumps[0].width == 4 and g.cell_of(jumps[0].dst) == (5, 0)
    assert jumps[0].check is not None and jumps[0].check.p_success == Fraction(1, 20)
    # Standing from 2,0: 2 m longest < 4 m: no edge.
    assert not [j for j in g.jumps if g.cell_of(j.src) == (2, 0)]
    r = path_json(find_path(g, (0, 0), (7, 0)))
    assert [s["mode"] for s in r["steps"]][3:5] == ["gap", "gap"]
    assert r["steps"][3]["jump"] == {"width": 4, "run_up": True, "to": [5, 0]}
    assert r["steps"][3]["on_failure"] == "fall" and r["on_failure"] == ["fall"]
    assert r["p_no_failure_exact"] == "1/20"
    # Reach sees the far side; a gap cell is never a place to stand.
    cells = {
        tuple(c["cell"]) for c in reach_dict(reach({"run": g}, "run", (0, 0), turns=3))["cells"]
    }
    assert (7, 0) in cells and (3, 0) not in cells and (4, 0) not in cells


@pytest.mark.parametrize("how", ["waypoints", "human"])
def test_turn_loop_jumps_with_one_roll(tmp_path, how) -> None:
    """The turn loop makes a jump as one edge with one roll (running 3, a 2 m gap after a
    run-up: within 1 m, 1/20); a failed roll leaves the token in the gap, fallen."""
    import tmxtext

    from engine.scenario import load_scenario
    from engine.sim import Simulation

    tmxtext.write(tmp_path / "m.tmx", ["..O...", "######"], properties={"diagonals": "none"})
    extra = ", policy: waypoints, waypoints: [[4, 0]]" if how == "waypoints" else ""
    (tmp_path / "s.yaml").write_text(
        "map: m.tmx\nsystem: speedpoints\nturns: 3\ntokens:\n"
        f"  - {{id: t, cell: [0, 0], stats: {{running: 3}}{extra}}}\n"
    )
    sc = load_scenario(tmp_path / "s.yaml")
    outcomes = set()
    for seed in range(30):
        sim = Simulation(sc, seed)
        sim.begin_turn()
        if how == "human":
            sim.take_turn("t", [(0, 0), (1, 0), (2, 0), (3, 0)])
        else:
            sim.take_turn("t")
        checks = [e for e in sim.events if e.get("type") == "check"]
        assert len(checks) == 1 and checks[0]["cell"] == [2, 0]
        state = sim.tokens["t"].state
        if checks[0]["success"]:
            assert state.cell == (3, 0) and not state.has("fell")
        else:
            assert state.cell == (2, 0) and state.has("in_gap") and state.has("fell")
        outcomes.add(checks[0]["success"])
    assert outcomes == {True, False}


# --------------------------------------------------------------------------- speed by round

D6 = systems.create("d6")


def _d6_graph(rows, speed="stop", pace="all_out", diagonals="none") -> MovementGraph:
    return MovementGraph(
        model_from(rows, diagonals=diagonals), D6, D6.token(f"speed={speed}"), pace
    )


def _brute_turns(g: MovementGraph, speed: str, pace: str) -> dict:  # noqa: C901
    """Every simple 4-neighbour path, crossed round by round: round k at the k-th speed from
    ``speed`` towards ``pace`` (two levels a round), each cell's share split exactly."""
    from engine.systems.d6 import speeds_to

    order = speeds_to(speed, pace)
    grid = g.grid
    model = g.model

    def cell_time(cell, k):  # rounds to cross the whole cell at round k's speed
        t = model.terrain_at(cell)
        rate = D6.cell_rate(g.token, t, order[min(k, len(order) - 1)])
        return None if rate <= 0 or t.move == "blocked" else Fraction(2) * Fraction(t.cost) / rate

    def enter(now, cell):
        left = Fraction(1)
        while True:
            k = int(now)  # rounds done
            full = cell_time(cell, k)
            if full is None:
                return None
            if now + left * full <= k + 1 or k >= len(order) - 1:
                return now + left * full
            left -= (k + 1 - now) / full
            now = Fraction(k + 1)

    best: dict = {}

    def walk(cell, now, seen):
        if cell not in best or now < best[cell]:
            best[cell] = now
        c, r = cell
        for nb in ((c + 1, r), (c - 1, r), (c, r + 1), (c, r - 1)):
            if grid.in_bounds(nb) and nb not in seen:
                t = enter(now, nb)
                if t is not None:
                    walk(nb, t, seen | {nb})

    walk((0, 0), Fraction(0), {(0, 0)})
    return best


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    rows=st.lists(st.text(alphabet="..,~#", min_size=3, max_size=3), min_size=3, max_size=3),
    speed=st.sampled_from(["stop", "cautious", "cruising", "high"]),
    pace=st.sampled_from(["cruising", "high", "all_out"]),
)
def test_speed_by_round_matches_brute_force(rows, speed, pace) -> None:
    """Time-dependent Dijkstra (a D6 token speeding up) = every simple path round by round."""
    from engine.search import search_tree

    rows = ["." + rows[0][1:], *rows[1:]]
    g = _d6_graph(rows, speed, pace)
    want = _brute_turns(g, speed, pace)
    tree = search_tree(g, (0, 0))
    assert {c: tree.turns(c) for c in tree.cells()} == want
    for cell, t in want.items():
        if cell != (0, 0):
            assert evaluate_path(g, tree.path_to(cell)).turns == t


def test_speed_by_round_hands_over_to_compiled(monkeypatch) -> None:
    """A big graph finishes the timed search with scipy: same exact times, same paths' times."""
    import engine.timed
    from engine.search import search_tree

    rows = ["..,~.." * 3, ".#,,~." * 3, "~~..,." * 3, "..#..," * 3]
    g = _d6_graph(rows, "stop", "all_out", diagonals="alternate")
    small = search_tree(g, (0, 0))
    monkeypatch.setattr(engine.timed, "COMPILED_ABOVE", 0)
    big = search_tree(g, (0, 0))
    assert {c: big.turns(c) for c in big.cells()} == {c: small.turns(c) for c in small.cells()}
    far = (17, 3)
    assert evaluate_path(g, big.path_to(far)).turns == small.turns(far)


def test_stopped_d6_token_accelerates_two_levels_a_round() -> None:
    """From a stop the first round is at most cruising (5 cells of 2 m at Move 10), the second
    all-out (20 cells); a token already at high goes all-out at once."""
    g = _d6_graph(["." * 40])
    r = path_json(evaluate_path(g, [(c, 0) for c in range(31)]))
    assert Fraction(r["turns_exact"]) == 2 + Fraction(5, 20)
    assert [p["end"] for p in r["plan"]][:2] == [[5, 0], [25, 0]]
    fast = _d6_graph(["." * 40], speed="high")
    assert evaluate_path(fast, [(c, 0) for c in range(21)]).turns == 1


def test_d6_one_roll_per_round_or_per_run() -> None:
    """roll_per=round: one roll a round at the hardest cell, on the step entering it;
    cell_run (the old rule): a roll per run of terrain."""
    rows = ["..~~.~~" + "." * 30]
    cells = [(c, 0) for c in range(21)]
    g = MovementGraph(model_from(rows, diagonals="none"), D6, D6.token("speed=high"), "all_out")
    r = path_json(evaluate_path(g, cells))
    steps = [s for s in r["steps"] if s["check"]]
    # round 1 (swim is Move / 3): the hardest cell is the first water, entered at cell 2;
    # round 2: open ground only, rolled on the round's first step
    assert r["turns"] > 1 and len(steps) == 2 and steps[0]["cell"] == [2, 0]
    assert steps[1]["turns"] > 1 and all(
        s["turns"] <= 1 for s in r["steps"][: r["steps"].index(steps[1])]
    )
    runs = systems.create("d6", {"roll_per": "cell_run"})
    g2 = MovementGraph(
        model_from(rows, diagonals="none"), runs, runs.token("speed=high"), "all_out"
    )
    assert len([s for s in path_json(evaluate_path(g2, cells))["steps"] if s["check"]]) > 1


def test_turn_loop_carries_the_d6_speed() -> None:
    """The turn loop moves each round at the speed allowed and remembers it."""
    token = D6.token({})
    assert D6.turn_pace(token, "all_out") == "cruising"
    moved = D6.paced(token, "cruising", True)
    assert D6.turn_pace(moved, "all_out") == "all_out"
    running = D6.token("speed=high")
    assert D6.paced(running, "all_out", False).state.counter("speed") == 4  # high can't stop
    assert (
        D6.paced(D6.paced(token, "cruising", True), "cruising", False).state.counter("speed") == 0
    )


def test_leap_onto_a_higher_cell() -> None:
    """Seed 004: "A character can jump vertically half as high as they can jump horizontally"
    (running 4: 2 m with a run-up, 1 m standing); within 1 m of it an acrobatics roll."""
    g = jump_graph(["..2.."], running=4, diagonals="none")
    r = path_json(find_path(g, (0, 0), (2, 0)))
    assert r["steps"][2]["jump"] == {"rise": 2, "run_up": True, "to": [2, 0]}
    assert r["p_no_failure_exact"] == "1/20" and r["steps"][2]["on_failure"] == "stop"
    assert r["turns_exact"] == "1/2"  # two spaces at running 4
    with pytest.raises(NoPath):  # standing: 1 m < 2 m, and no room behind for a run-up
        find_path(jump_graph(["#.2.."], running=4, diagonals="none"), (1, 0), (2, 0))
    back = path_json(find_path(g, (1, 0), (2, 0)))  # room behind: a step back, then the run-up
    assert back["cells"] == [[1, 0], [0, 0], [1, 0], [2, 0]]
    # 1 m: standing 1 m (0 short: a roll), run-up 2 m (a roll too: 1 m short).
    low = jump_graph(["..1.."], running=4, diagonals="none")
    assert path_json(find_path(low, (1, 0), (2, 0)))["p_no_failure_exact"] == "1/20"
    # Running 10 leaps 2.5 m standing: 1 m is more than 1 m short, a plain step.
    assert not jump_graph(["..1.."], running=10, diagonals="none").jumps
    assert path_json(find_path(g, (2, 0), (4, 0)))["p_no_failure"] == 1


def test_failed_leap_stays_below(tmp_path) -> None:
    import tmxtext

    from engine.scenario import load_scenario
    from engine.sim import Simulation

    tmxtext.write(tmp_path / "m.tmx", ["......"], properties={"diagonals": "none"})
    sc = None
    outcomes = set()
    for seed in range(30):
        if sc is None:
            (tmp_path / "s.yaml").write_text(
                "map: m.tmx\nsystem: speedpoints\nturns: 3\ntokens:\n"
                "  - {id: t, cell: [0, 0], stats: {running: 4}}\n"
            )
            sc = load_scenario(tmp_path / "s.yaml")
            import dataclasses

            model = leap_model(["..2..."], diagonals="none")
            sc = dataclasses.replace(sc, model=model)
        sim = Simulation(sc, seed)
        sim.begin_turn()
        sim.take_turn("t", [(0, 0), (1, 0), (2, 0), (3, 0)])
        checks = [e for e in sim.events if e.get("type") == "check"]
        assert len(checks) == 1 and "leap" in checks[0]["what"]
        state = sim.tokens["t"].state
        if checks[0]["success"]:
            assert state.cell == (3, 0)
        else:
            assert state.cell == (1, 0) and not state.has("fell")
        outcomes.add(checks[0]["success"])
    assert outcomes == {True, False}
