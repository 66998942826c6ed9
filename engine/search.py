"""Movement queries on a :class:`~engine.movement.MovementGraph`: paths, reach, plans, risk.

Two engines give identical integer totals:

* a pure-Python Dijkstra (:func:`dijkstra`) that touches only what it reaches: reach
  queries and paths on small maps, with an early exit at the goal;
* scipy's compiled Dijkstra on the graph's CSR arrays (:func:`compiled_field`): long paths
  and distance fields on big maps, where the Python loop would be slow.

A :class:`SearchTree` keeps the distances and predecessors of one search, so hovering over
a cell in the viewer is a walk up the predecessor chain, never a new search.
"""

from __future__ import annotations

import bisect
import heapq
import math
from collections.abc import Iterable
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

import numpy as np

from engine.errors import ArgumentError, TacgridError
from engine.grid import Cell
from engine.movement import MovementGraph
from engine.systems.base import jsonable

#: Graphs with more nodes than this use scipy's compiled Dijkstra for map-wide paths.
COMPILED_ABOVE = 20_000


class NoPath(TacgridError):
    """There is no path; the message says why (exit status 1, not a user error)."""


@dataclass
class SearchTree:
    """Distances (ticks) and predecessors from one start; the viewer's hover cache."""

    graph: MovementGraph
    start: Cell
    dist: dict[int, float]
    prev: dict[int, int]
    limit: float | None = None
    _best: dict[Cell, int] = field(default_factory=dict)

    def __post_init__(self) -> None:
        n = self.graph.n
        best: dict[int, int] = {}
        for node, d in self.dist.items():
            idx = node % n
            cur = best.get(idx)
            if cur is None or d < self.dist[cur]:
                best[idx] = node
        w = self.graph.grid.width
        self._best = {(i % w, i // w): node for i, node in best.items()}

    def cells(self) -> list[Cell]:
        return list(self._best)

    def ticks(self, cell: Cell) -> float | None:
        node = self._best.get(cell)
        return None if node is None else self.dist[node]

    def turns(self, cell: Cell) -> Fraction | None:
        t = self.ticks(cell)
        return None if t is None else self.graph.turns(t)

    def path_to(self, cell: Cell) -> list[Cell]:
        """The best path to ``cell`` from the cached tree ([] if not reached)."""
        node = self._best.get(cell)
        if node is None:
            return []
        out = []
        prev = self.prev
        while node is not None:
            out.append(self.graph.cell_of(node))
            node = prev.get(node)
        out.reverse()
        return out


def dijkstra(
    graph: MovementGraph,
    start: Cell,
    *,
    limit: float | None = None,
    goal: Cell | None = None,
) -> SearchTree:
    """Pure-Python Dijkstra from ``start`` (parity 0), up to ``limit`` ticks or to ``goal``."""
    g = graph.grid
    w, h, n = g.width, g.height, graph.n
    ticks = graph._ticks_list
    parity_state, euclid = graph.parity_state, graph.euclid
    root2 = math.sqrt(2)
    tables = []
    for par in (0, 1):
        tables.append(tuple((dc, dr, diag) for dc, dr, diag in g.offsets(par)))
    axis_y = g.stagger_axis == "y"
    square = g.kind == "square"
    src = graph.node(start)
    dist: dict[int, float] = {src: 0}
    prev: dict[int, int] = {}
    heap: list[tuple[float, int]] = [(0, src)]
    done: set[int] = set()
    goal_idx = None if goal is None else g.index(goal)
    pop, push = heapq.heappop, heapq.heappush
    while heap:
        d, node = pop(heap)
        if node in done:
            continue
        done.add(node)
        p, idx = divmod(node, n)
        if idx == goal_idx:
            break
        r, c = divmod(idx, w)
        table = tables[0 if square else ((r if axis_y else c) & 1)]
        for dc, dr, diag in table:
            nc = c + dc
            nr = r + dr
            if nc < 0 or nr < 0 or nc >= w or nr >= h:
                continue
            j = nr * w + nc
            t = ticks[j]
            if t < 0:
                continue
            if diag:
                if parity_state:
                    nd = d + (t + t if p else t)
                    nxt = (1 - p) * n + j
                elif euclid:
                    nd = d + t * root2
                    nxt = p * n + j
                else:
                    nd = d + t
                    nxt = p * n + j
            else:
                nd = d + t
                nxt = p * n + j
            if limit is not None and nd > limit:
                continue
            old = dist.get(nxt)
            if old is None or nd < old:
                dist[nxt] = nd
                prev[nxt] = node
                push(heap, (nd, nxt))
    if goal is not None:
        # Only settled distances are final: drop tentative ones beyond the goal.
        dist = {k: v for k, v in dist.items() if k in done}
    return SearchTree(graph, start, dist, prev, limit)


def compiled_field(graph: MovementGraph, start: Cell, limit: float | None = None) -> SearchTree:
    """scipy's compiled Dijkstra over the whole map: same totals as :func:`dijkstra`."""
    from scipy.sparse.csgraph import dijkstra as sp_dijkstra

    csr = graph.csr()
    src = graph.node(start)
    dist, pred = sp_dijkstra(
        csr,
        directed=True,
        indices=src,
        return_predecessors=True,
        limit=np.inf if limit is None else limit,
    )
    reached = np.nonzero(np.isfinite(dist))[0]
    d = dist[reached]
    if not graph.euclid:
        d = np.rint(d)
    dmap = dict(zip(reached.tolist(), d.tolist(), strict=True))
    if not graph.euclid:
        dmap = {k: int(v) for k, v in dmap.items()}
    pr = pred[reached]
    has = pr >= 0
    prev = dict(zip(reached[has].tolist(), pr[has].tolist(), strict=True))
    return SearchTree(graph, start, dmap, prev, limit)


# --------------------------------------------------------------------------- reports


def check_cell(graph: MovementGraph, cell: Cell, what: str) -> None:
    g = graph.grid
    if not g.in_bounds(cell):
        raise ArgumentError(
            f"{what} {cell[0]},{cell[1]}: outside the map ({g.width} x {g.height} cells; "
            f"cells are col,row from 0,0 to {g.width - 1},{g.height - 1})"
        )


def parse_cell(text: str, what: str) -> Cell:
    """``"c,r"`` -> (c, r); bad text is one clear line."""
    parts = text.replace(" ", "").split(",")
    try:
        if len(parts) != 2:
            raise ValueError
        return (int(parts[0]), int(parts[1]))
    except ValueError:
        raise ArgumentError(f"{what} '{text}': expected a cell as col,row such as 3,4") from None


def _fmt_time(t: Fraction) -> float:
    return float(t)


def evaluate_path(graph: MovementGraph, cells: list[Cell]) -> dict[str, Any]:
    """Step-by-step times, checks and the turn plan of a path (exact)."""
    g = graph.grid
    den = graph.denominator
    steps = [
        {
            "cell": list(cells[0]),
            "mode": graph.model.terrain_at(cells[0]).move,
            "turns": 0.0,
            "time": 0.0,
            "check": None,
        }
    ]
    parity = 0
    total: float = 0
    distance_cells: float = 0
    p_ok = Fraction(1)
    prev_key = int(graph.run_key[g.index(cells[0])])
    prev_turn = 0
    for a, b in zip(cells, cells[1:], strict=False):
        diag = next(
            (d for dc, dr, d in g.offsets(g.parity(a)) if (a[0] + dc, a[1] + dr) == b), False
        )
        length = graph.step_length(bool(diag), parity)
        if diag and graph.parity_state:
            parity = 1 - parity
        t = graph.ticks_of(b) * length
        total += t
        distance_cells += length
        idx = g.index(b)
        cost = graph.costs[int(graph.model.terrain_ids[b[1], b[0]])]
        turn = math.ceil(graph.turns(total)) if total else 0
        key = int(graph.run_key[idx])
        check = None
        if cost.check is not None and (key != prev_key or turn != prev_turn):
            check = cost.check.to_dict()
            p_ok *= cost.check.p_success
        prev_key, prev_turn = key, turn
        steps.append(
            {
                "cell": list(b),
                "mode": cost.terrain.move,
                "terrain": cost.terrain.name,
                "turns": float(graph.turns(total)),
                "time": float(graph.turns(t)),
                "turn": turn,
                "check": check,
            }
        )
    turns = graph.turns(total)
    plan = turn_plan(steps, turns)
    return {
        "cells": [list(c) for c in cells],
        "distance": jsonable(graph.cell_size * exact_cells(distance_cells)),
        "distance_cells": jsonable(exact_cells(distance_cells)),
        "unit": graph.unit,
        "turns": float(turns),
        "turns_exact": jsonable(turns),
        "steps": steps,
        "p_no_failure": float(p_ok),
        "p_no_failure_exact": jsonable(p_ok),
        "plan": plan,
        "_ticks": total,
        "_den": den,
    }


def exact_cells(x: float) -> Fraction:
    if isinstance(x, int) or float(x).is_integer():
        return Fraction(int(x))
    return Fraction(round(x * 10**9), 10**9)


#: Longest plan that lists every turn; a longer one lists only the turns that enter cells.
MAX_PLAN_TURNS = 1000


def turn_plan(steps: list[dict[str, Any]], total: Fraction) -> list[dict[str, Any]]:
    """Where the token stands at the end of each turn, and what that turn spent.

    Every turn is listed up to :data:`MAX_PLAN_TURNS` turns; a longer move (a very slow
    token) lists the turns in which it enters a cell and the last one, so the plan stays
    as long as the path, not as long as the wait.
    """
    eps = 1e-12
    n_turns = math.ceil(total) if total else 0
    done = [s["turns"] for s in steps]  # non-decreasing
    if n_turns <= MAX_PLAN_TURNS:
        wanted: Iterable[int] = range(1, n_turns + 1)
    else:
        ks = {n_turns}
        for t in done[1:]:
            ks.update(k for k in (math.ceil(t - eps), math.ceil(t)) if 1 <= k <= n_turns)
        wanted = sorted(ks)
    plan: list[dict[str, Any]] = []
    for k in wanted:
        # steps[1:] entered in turn k: k - 1 < turns <= k (+eps); the last done: <= k (+eps).
        lo = max(1, bisect.bisect_right(done, k - 1))
        hi = bisect.bisect_right(done, k + eps)
        entered = steps[lo:hi]
        if n_turns > MAX_PLAN_TURNS and not entered and k != n_turns:
            continue
        spent = min(Fraction(1), total - (k - 1))
        plan.append(
            {
                "turn": k,
                "end": steps[hi - 1]["cell"],
                "cells": [s["cell"] for s in entered],
                "spent": float(spent),
            }
        )
    return plan


def find_path(
    graph: MovementGraph,
    start: Cell,
    goal: Cell,
    *,
    prefer: str = "fast",
) -> dict[str, Any]:
    """The best path (CONTRACT.md ``path``); raises :class:`NoPath` with the reason."""
    check_cell(graph, start, "--from")
    check_cell(graph, goal, "--to")
    if prefer not in ("fast", "safe"):
        raise ArgumentError(f"--prefer {prefer}: expected fast or safe")
    goal_cost = graph.costs[int(graph.model.terrain_ids[goal[1], goal[0]])]
    if start != goal and goal_cost.time is None:
        raise NoPath(f"goal {goal[0]},{goal[1]} cannot be entered: {goal_cost.reason}")
    fast = _fast_cells(graph, start, goal)
    if fast is None:
        raise NoPath(_unreachable_reason(graph, start, goal))
    candidates = [evaluate_path(graph, fast)]
    if any(c.check is not None for c in graph.costs):
        for weight in (None, 1.0, 4.0, 16.0):
            cells = _risk_weighted(graph, start, goal, weight)
            if cells and cells != fast:
                candidates.append(evaluate_path(graph, cells))
    pareto = _pareto(candidates)
    if prefer == "fast":
        best = min(candidates, key=lambda c: (c["_ticks"], -c["p_no_failure"]))
    else:
        best = max(candidates, key=lambda c: (c["p_no_failure"], -c["_ticks"]))
    out = {k: v for k, v in best.items() if not k.startswith("_")}
    out = {"system": graph.system.name, "pace": graph.pace, "prefer": prefer, **out}
    if len(pareto) > 1:
        out["pareto"] = [
            {"turns": c["turns"], "p_no_failure": c["p_no_failure"], "cells": c["cells"]}
            for c in pareto
        ]
    return out


def _fast_cells(graph: MovementGraph, start: Cell, goal: Cell) -> list[Cell] | None:
    if graph.n * graph.n_states > COMPILED_ABOVE:
        return compiled_path(graph, start, goal)
    return dijkstra(graph, start, goal=goal).path_to(goal) or None


def compiled_path(graph: MovementGraph, start: Cell, goal: Cell) -> list[Cell] | None:
    """Best path by scipy's Dijkstra, read straight off its predecessor array."""
    from scipy.sparse.csgraph import dijkstra as sp_dijkstra

    dist, pred = sp_dijkstra(
        graph.csr(), directed=True, indices=graph.node(start), return_predecessors=True
    )
    ends = [graph.node(goal, p) for p in range(graph.n_states)]
    end = min(ends, key=lambda e: dist[e])
    if not np.isfinite(dist[end]):
        return None
    out = []
    node = int(end)
    while node >= 0:
        out.append(graph.cell_of(node))
        node = int(pred[node])
    return out[::-1]


def _risk_weighted(
    graph: MovementGraph, start: Cell, goal: Cell, weight: float | None
) -> list[Cell] | None:
    """Dijkstra on (risk, ticks): ``weight`` None = safest first; else ticks + w*D*risk.

    Risk is -log(p) of a check charged where a run of the same mode and difficulty
    starts; turn boundaries (which also restart runs) are counted when the path is
    evaluated, not here.
    """
    g = graph.grid
    n = graph.n
    den = graph.denominator
    risk_of = []
    for c in graph.costs:
        p = c.check.p_success if c.check is not None else Fraction(1)
        risk_of.append(math.inf if p == 0 else -math.log(float(p)))
    tid = graph.model.terrain_ids.ravel()
    src = graph.node(start)
    goal_idx = g.index(goal)
    best: dict[int, tuple[float, float]] = {src: (0.0, 0.0)}
    prev: dict[int, int] = {}
    heap: list[tuple[float, float, int]] = [(0.0, 0.0, src)]
    done: set[int] = set()
    found = None
    while heap:
        a, b, node = heapq.heappop(heap)
        if node in done:
            continue
        done.add(node)
        if node % n == goal_idx:
            found = node
            break
        key_u = graph.run_key[node % n]
        for nxt, t in graph.neighbours(node):
            j = nxt % n
            risk = risk_of[tid[j]] if graph.run_key[j] != key_u else 0.0
            if weight is None:
                cand = (a + risk, b + t)
            else:
                cand = (a + t + weight * den * risk, b + t)
            old = best.get(nxt)
            if old is None or cand < old:
                best[nxt] = cand
                prev[nxt] = node
                heapq.heappush(heap, (cand[0], cand[1], nxt))
    if found is None:
        return None
    out = [graph.cell_of(found)]
    while found in prev:
        found = prev[found]
        out.append(graph.cell_of(found))
    return out[::-1]


def _pareto(cands: list[dict[str, Any]]) -> list[dict[str, Any]]:
    uniq: dict[tuple[float, float], dict[str, Any]] = {}
    for c in cands:
        uniq.setdefault((c["_ticks"], c["p_no_failure"]), c)
    pts = list(uniq.values())
    keep = []
    for c in pts:
        dominated = any(
            (o["_ticks"] <= c["_ticks"] and o["p_no_failure"] >= c["p_no_failure"])
            and (o["_ticks"] < c["_ticks"] or o["p_no_failure"] > c["p_no_failure"])
            for o in pts
        )
        if not dominated:
            keep.append(c)
    return sorted(keep, key=lambda c: c["_ticks"])


def _unreachable_reason(graph: MovementGraph, start: Cell, goal: Cell) -> str:
    if graph.n * graph.n_states > COMPILED_ABOVE:
        reached = len(compiled_field(graph, start).cells())
    else:
        reached = len(dijkstra(graph, start).cells())
    return (
        f"no route from {start[0]},{start[1]} to {goal[0]},{goal[1]}: the goal is cut off "
        f"for this token ({reached} cells reachable from the start)"
    )


# --------------------------------------------------------------------------- reach


def reach(
    graphs: dict[str, MovementGraph],
    pace: str,
    start: Cell,
    turns: int = 1,
) -> dict[str, Any]:
    """Every cell reachable within ``turns`` at ``pace``, with its speed band.

    ``graphs`` holds one graph per pace of the system (slowest first). Within the first
    turn a cell's band is the slowest pace that reaches it in one turn; beyond it, the
    band is the turn it is reached in (``turn2``, ``turn3``, ...).
    """
    main = graphs[pace]
    check_cell(main, start, "--from")
    if turns < 1:
        raise ArgumentError(f"--turns {turns}: expected a whole number >= 1")
    tree = dijkstra(main, start, limit=turns * main.denominator)
    first_turn: dict[Cell, str] = {}
    for name, g in graphs.items():
        sub = dijkstra(g, start, limit=g.denominator)
        for cell in sub.cells():
            first_turn.setdefault(cell, name)
    cells = []
    for cell in sorted(tree.cells(), key=lambda c: (tree.ticks(c), c[1], c[0])):
        t = tree.turns(cell)
        assert t is not None
        band = first_turn.get(cell) if t <= 1 else f"turn{math.ceil(t)}"
        cells.append({"cell": list(cell), "turns": float(t), "band": band or pace})
    return {
        "system": main.system.name,
        "pace": pace,
        "from": list(start),
        "turns": turns,
        "bands": list(graphs),
        "cells": cells,
        "tree": tree,
    }
