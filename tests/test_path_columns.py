"""A path priced in numpy (engine/search/columns.py, the turn plan's searches) is the path
priced a step at a time, record for record; its cells (engine/search/cellpath.py) read as
the tuple of cells they replace; the search's predecessor walk gives the same cells."""

from __future__ import annotations

import pickle
import random
from dataclasses import fields
from typing import Any

import numpy as np
import pytest
from conftest import ROOT

from engine import systems
from engine.grid import Cell
from engine.movement import MovementGraph
from engine.query import Query
from engine.search import NoPath, PathAnswer
from engine.search.cellpath import CellPath
from engine.search.columns import priced_columns
from engine.search.frontier import frontier_path, frontier_search, supports_frontier
from engine.search.odds import evaluate_path, turn_plan
from engine.search.tree import _cells, node_cells
from engine.tiled import load_map

SHIPPED = sorted(p for p in (ROOT / "maps").iterdir() if p.suffix in (".tmx", ".tmj"))
SYSTEMS = ("generic", "d6", "mythmaster", "speedpoints", "whisperspace")


def graphs() -> list[tuple[str, MovementGraph]]:
    out = []
    for path in SHIPPED:
        model = load_map(str(path))
        for name in SYSTEMS:
            rules = systems.create(name, {})
            query = Query(model, rules, rules.token(""))
            for pace in rules.paces:
                out.append((f"{path.name}/{name}/{pace}", query.graph(pace)))
    return out


GRAPHS = graphs()


def random_walk(graph: MovementGraph, rng: random.Random, length: int) -> list[Cell]:
    """A path of ``length`` steps or fewer, each a step the graph can take from where the
    walk stands (no state change in place): any cells, checks and turns they meet but
    climbs (a walk to and fro over a cliff is dozens of climbs, whose chance to be through
    in time is worked out exactly: seconds each; the searched paths cross them)."""
    tids = graph.model.terrain_ids.ravel()
    system, pace = graph.system, graph.pace
    climbs = [system.climb_odds(graph.token, t, pace) is not None for t in graph.model.terrains]
    g = graph.grid
    open_cells = [c for c in g.cells() if graph.ticks_of(c) >= 0]
    node = graph.node(rng.choice(open_cells))
    cells = [graph.cell_of(node)]
    for _ in range(length):
        moves = [(v, t) for v, t in graph.neighbours(node) if v % graph.n != node % graph.n]
        moves = [(v, t) for v, t in moves if not graph.jump_at or (node, v) not in graph.jump_at]
        moves = [(v, t) for v, t in moves if not climbs[int(tids[v % graph.n])]]
        if not moves:
            break
        node = rng.choice(moves)[0]
        cells.append(graph.cell_of(node))
    return cells


def same_answer(a: PathAnswer, b: PathAnswer) -> None:
    for f in fields(PathAnswer):
        x, y = getattr(a, f.name), getattr(b, f.name)
        if f.name in ("steps", "plan"):
            assert len(x) == len(y)
            for rx, ry in zip(x, y, strict=True):
                assert rx == ry and list(rx) == list(ry), f.name  # keys in the same order
        else:
            assert x == y, f.name
            assert type(x) is type(y) or f.name == "cells", f.name


def test_columns_price_every_shipped_path_as_the_loop_does() -> None:
    """Every shipped map, system and pace, the quickest way to two goals and 8 random walks of up to
    80 steps (checks, runs, moves, the 5-10-5 parity, hex rows): the same answer, field
    for field, each step's and turn's record key for key."""
    rng = random.Random(42)
    priced = checked = 0
    for label, graph in GRAPHS:
        w, h = graph.grid.width, graph.grid.height
        paths: list[Any] = []
        for goal in ((w - 1, h - 1), (w // 2, h - 1)):
            if supports_frontier(graph):
                found = frontier_path(graph, (0, 0), goal)  # the search's own cells
                paths += [found] if found is not None else []
        paths += [random_walk(graph, rng, rng.randint(0, 80)) for _ in range(8)]
        for cells in paths:
            try:
                plain = evaluate_path(graph, cells, columns=False)
            except NoPath:
                with pytest.raises(NoPath):
                    evaluate_path(graph, cells)
                continue
            same_answer(evaluate_path(graph, cells), plain)
            if priced_columns(graph, cells) is not None:
                priced += 1
                checked += sum(1 for s in plain.steps if s["check"])
            assert label
    assert priced > 200 and checked > 100  # the numpy way ran, on paths with checks


def test_columns_hand_back_what_the_loop_cannot_price() -> None:
    """A step the token cannot take (a jump across the map, a wall of blocked cells): both
    ways say so; a cell off the map: the plain way's answer, not a guess."""
    graph = next(g for label, g in GRAPHS if label.startswith("encounter.tmx/generic"))
    with pytest.raises(NoPath):
        evaluate_path(graph, [(0, 0), (5, 5)])
    assert priced_columns(graph, [(0, 0), (5, 5)]) is None
    assert priced_columns(graph, [(0, 0), (-1, 0)]) is None


def test_the_turn_plan_in_numpy_is_the_bisected_plan() -> None:
    """Short plans (every turn) and long ones (a slow token: only the turns that enter a
    cell), on random walks: the same turns, steps and time spent."""
    rng = random.Random(7)
    for label, graph in GRAPHS[:: max(1, len(GRAPHS) // 12)]:
        for _ in range(4):
            cells = random_walk(graph, rng, rng.randint(0, 80))
            try:
                answer = evaluate_path(graph, cells)
            except NoPath:
                continue
            for scale in (1, 7, 1000):
                total = answer.turns * scale
                steps = answer.steps
                if scale != 1:
                    for i in range(len(steps)):
                        turns, time, turn = steps.timing(i)
                        steps.retime(i, turns * scale, time, turn)
                fast, plain = turn_plan(steps, total), turn_plan(steps, total, columns=False)
                assert list(fast) == list(plain), label
                if scale != 1:
                    for i in range(len(steps)):
                        turns, time, turn = steps.timing(i)
                        steps.retime(i, turns / scale, time, turn)


def test_a_cell_path_reads_as_the_tuple_it_replaces() -> None:
    cells = ((0, 0), (1, 0), (2, 1), (2, 2), (1, 3))
    path = CellPath.of(cells, 5)
    assert path == cells and cells == path and path == list(cells) and not path != cells
    assert path != cells[:-1] and path != ((0, 0),) * 5 and path != "ab"
    assert len(path) == 5 and tuple(path) == cells and list(reversed(path)) == list(cells[::-1])
    assert path[0] == (0, 0) and path[-1] == (1, 3) and path[1:3] == cells[1:3]
    assert path[::-2] == cells[::-2] and path[1:3] == path[1:3] and type(path[0][0]) is int
    assert (2, 1) in path and (3, 1) not in path and (9, 0) not in path and "x" not in path
    assert path.index((2, 2)) == 3 and path.count((0, 0)) == 1
    assert hash(path) == hash(cells) and path + ((0, 3),) == (*cells, (0, 3))
    assert pickle.loads(pickle.dumps(path)) == path and CellPath.of(path, 5) is path
    with pytest.raises(IndexError):
        path[5]
    with pytest.raises(IndexError):
        path[-6]
    with pytest.raises(ValueError):
        path.flat[0] = 3  # read-only
    empty = CellPath.of([], 4)
    assert empty == () and len(empty) == 0 and list(empty) == []
    big = CellPath(np.arange(200_000, dtype=np.int64), 1000)
    assert list(big)[123_456] == big[123_456] == (456, 123) and len(list(big)) == 200_000


def test_the_searched_nodes_read_as_cells_as_the_list_walk_does() -> None:
    """The predecessor walk into an array and its cells in numpy: the same nodes and cells
    as the plain walk of the list (states changed in place dropped, jumps listed)."""
    for label, graph in GRAPHS:
        if graph.euclid or graph.n * graph.n_states > 1 << 20:
            continue
        w, h = graph.grid.width, graph.grid.height
        try:
            found = frontier_search(graph, (0, 0), (w - 1, h - 1))
        except Exception:  # pragma: no cover - a graph the frontier cannot search
            continue
        if found.end is None:
            continue
        nodes = found.node_array(found.end)
        assert nodes.dtype.kind == "i"
        assert node_cells(graph, nodes) == tuple(_cells(graph, nodes.tolist())), label


def test_columns_priced_in_small_chunks_are_priced_whole(monkeypatch: pytest.MonkeyPatch) -> None:
    """The pricing a few steps at a time (what carries between chunks: the diagonals'
    parity, the running total, the last run key and move) and the plan's turns found a
    few steps at a time: the same answers as the plain loop, on paths with checks."""
    from engine.search import columns, odds

    monkeypatch.setattr(columns, "CHUNK_STEPS", 3)
    monkeypatch.setattr(odds, "CHUNK_TURNS", 2)
    monkeypatch.setattr(odds, "MAX_PLAN_TURNS", 2)  # the plan of entered turns, too
    rng = random.Random(3)
    priced = checked = 0
    for label, graph in GRAPHS:
        w, h = graph.grid.width, graph.grid.height
        paths: list[Any] = [random_walk(graph, rng, rng.randint(0, 40))]
        if supports_frontier(graph):
            found = frontier_path(graph, (0, 0), (w - 1, h - 1))
            paths += [found] if found is not None else []
        for cells in paths:
            try:
                plain = evaluate_path(graph, cells, columns=False)
            except NoPath:
                continue
            same_answer(evaluate_path(graph, cells), plain)
            if priced_columns(graph, cells) is not None:
                priced += 1
                checked += sum(1 for s in plain.steps if s["check"])
            assert label
    assert priced > 100 and checked > 50


def test_the_kernels_predecessor_walk_is_its_twins() -> None:
    """engine/_kernel.c's pred_chain counts and writes the chain chain_plain walks, on
    random predecessor forests (int32 and int64); a cycle is refused."""
    from engine import kernel
    from engine.search.frontier import chain_plain

    if not kernel.available():
        pytest.skip(f"kernel {kernel.state()}")
    rng = np.random.default_rng(9)
    for trial in range(200):
        n = int(rng.integers(1, 300))
        # Each node's predecessor is an earlier node (or -1): a forest, no cycle.
        pred = np.array([-1] + [int(rng.integers(-1, i)) for i in range(1, n)])
        pred = pred.astype(np.int32 if trial % 2 else np.int64)
        node = int(rng.integers(0, n))
        want = chain_plain(pred, node)
        length = kernel.pred_chain(pred, node)
        out = np.empty(length, dtype=np.int64 if trial % 3 else np.int32)
        assert kernel.pred_chain(pred, node, out) == length == want.size
        assert out.tolist() == want.tolist() and want[-1] == node and pred[want[0]] == -1
    cycle = np.array([1, 2, 0], dtype=np.int64)
    with pytest.raises(ValueError, match="cycle"):
        kernel.pred_chain(cycle, 0)
    with pytest.raises(ValueError, match="length"):
        kernel.pred_chain(np.array([-1, 0]), 1, np.empty(3, dtype=np.int64))
