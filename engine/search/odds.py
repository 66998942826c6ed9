"""What a path costs and risks: its step-by-step times, checks and turn plan
(:func:`evaluate_path`), climbs priced as units, and the risk-weighted searches whose
candidates make the Pareto front of time against safety.
"""

from __future__ import annotations

import bisect
import heapq
import itertools
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import numpy as np

from engine.grid import Cell
from engine.movement import MovementGraph
from engine.search.cellpath import CellPath
from engine.search.columns import Priced, priced_columns
from engine.search.results import PathAnswer
from engine.search.steps import PlanTable, Spans, SpanTable, Steps, StepTable
from engine.search.tree import NoPath, _cells
from engine.systems.base import CellCheck, ClimbOdds, exact, jsonable
from engine.timed import Timeline, timeline


def _fmt_time(t: Fraction) -> float:
    return float(t)


def evaluate_path(
    graph: MovementGraph, cells: Sequence[Cell], *, columns: bool = True
) -> PathAnswer:
    """Step-by-step times, checks and the turn plan of a path (exact), as the quickest way
    (``prefer="fast"``; :func:`engine.search.find_path` weighs the others).

    The path is walked on the graph's nodes (:meth:`MovementGraph.node_path`), so the
    system's search state (standing up once, the diagonal parity) is charged as the search
    charged it. A check is asked on entering the first cell of a run of the same mode and
    difficulty, and again whenever a new move starts on the run, as the system counts
    moves (:meth:`RuleSystem.check_period`: a Move action, a turn, or once per climb).
    ``columns``: price the steps in numpy where the graph allows
    (:func:`engine.search.columns.priced_columns`, the same answer); False walks them a
    step at a time (the plain way it is tested against).
    """
    den = graph.denominator
    priced = priced_columns(graph, cells) if columns else None
    if priced is None:
        priced = _priced_plain(graph, cells)
    steps, spans, asked = priced.steps, priced.spans, priced.asked
    total, distance_cells, p_ok = priced.total, priced.distance_cells, priced.p_ok
    tl = timeline(graph)
    turns = graph.turns(total)
    per_turn = _turn_checks(graph, tl, steps, spans)
    if per_turn is not None:
        p_ok = per_turn
    odds = _price_climbs(graph, steps, spans, asked, turns, None if per_turn is None else p_ok)
    turns, p_ok = odds.turns, odds.p_no_failure
    if odds.extra:
        total = float(turns * den)
    plan = turn_plan(steps, turns)
    return PathAnswer(
        system=graph.system.name,
        pace=graph.pace,
        prefer="fast",
        cells=CellPath.of(cells, graph.grid.width),
        distance=graph.cell_size * exact_cells(distance_cells),
        distance_cells=exact_cells(distance_cells),
        unit=graph.unit,
        turns=turns,
        steps=steps,
        p_no_failure=p_ok,
        p_within_turns=odds.p_within,
        on_failure=tuple(odds.on_failure),
        plan=plan,
        ticks=total,
        den=den,
    )


def _priced_plain(graph: MovementGraph, cells: Sequence[Cell]) -> Priced:
    """The steps of ``cells`` priced a step at a time (see :func:`evaluate_path`)."""
    g = graph.grid
    den = graph.denominator
    walked = graph.walk(list(cells))
    if walked is None:
        raise NoPath("the given path takes a step this token cannot take")
    nodes, edge_ticks = walked
    steps = StepTable()
    steps.append(cells[0], graph.model.terrain_at(cells[0]).move, "", 0.0, 0.0, 0)
    total: float = 0
    distance_cells: float = 0
    p_ok = Fraction(1)
    prev_key = int(graph.run_key[g.index(cells[0])])
    prev_move: int | None = 0
    pending: float = 0  # ticks spent in place (standing up) before the next step
    changes: list[str] = []
    names = graph.search.names
    tl = timeline(graph)
    spans = SpanTable()  # each step's (start, end, terrain, state)
    asked: list[tuple[int, CellCheck]] = []  # (step, check) of each check asked
    # Integer ticks (neither euclid nor a timed pace): turns by integer division, which is
    # what the Fractions give, without making one per figure (a long path has thousands).
    whole = tl is None and not graph.euclid
    per_layer = graph.n * graph.n_par

    def turn_of(x: Any) -> int:
        if whole and type(x) is int:
            return -(-x // den)
        return math.ceil(graph.turns(x))

    def move_of(x: Any, period: Fraction) -> int:
        if whole and type(x) is int:
            return -(-(x * period.denominator) // (den * period.numerator))
        return math.ceil(graph.turns(x) / period)

    def as_turns(x: Any) -> float:
        if whole and type(x) is int:
            return x / den
        return float(graph.turns(x))

    # Each node's terrain and run key, read in one pass (not a numpy scalar a step).
    at_nodes = np.array(nodes, dtype=np.int64) % graph.n
    node_tid = graph.model.terrain_ids.ravel()[at_nodes].tolist()
    node_key = graph.run_key[at_nodes].tolist()
    diagonal = [{(dc, dr): bool(d) for dc, dr, d in g.offsets(par)} for par in (0, 1)]
    w, n = g.width, graph.n
    # The node pairs read in place (slices of a maze path's node list are 100s of MB).
    pairs = zip(
        itertools.islice(nodes, len(nodes) - 1), itertools.islice(nodes, 1, None), edge_ticks,
        strict=True,
    )  # fmt: skip
    for i, (u, v, t) in enumerate(pairs):
        jump = graph.jump_at.get((u, v)) if graph.jump_at else None
        if jump is None:
            ua, va = u % n, v % n
            a, b = (ua % w, ua // w), (va % w, va // w)
            if tl is not None:
                # The pace of the turn each part of the step is crossed in (engine.timed).
                end = tl.arrive(total, u, v, t)
                if end is None:
                    raise NoPath("the given path takes a step this token cannot take yet")
                t = end - total
            if a == b:
                total += t
                pending += t
                changes.append(names[graph.state_of(v)])
                continue
            diag = diagonal[g.parity(a)].get((b[0] - a[0], b[1] - a[1]), False)
            length = graph.step_length(diag, graph.parity_of(u))
            parts = [(va, node_tid[i + 1], t, length)]
            key = node_key[i + 1]
        else:
            # A jump: one edge, listed cell by cell (the run-up step, the gap, the landing).
            parts = list(jump.parts)
        state = v // per_layer
        for k, (idx, tid, t, length) in enumerate(parts):
            spans.append(total, total + t, tid, state)
            total += t
            distance_cells += length
            b = g.cell_of_index(idx)
            cost = graph.state_costs[state][tid]
            turn = turn_of(total) if total else 0
            period = graph.check_period[tid]
            move = None if period is None else (move_of(total, period) if total else 0)
            if jump is not None:
                key = int(graph.run_key[idx])
            check = None
            over_gap = jump is not None and jump.kind == "gap" and jump.gap_at < k < len(parts) - 1
            if jump is not None and (k == jump.gap_at or over_gap):
                if k == jump.gap_at and jump.check is not None:
                    check = jump.check.to_dict()
                    p_ok *= jump.check.p_success
                    asked.append((len(steps), jump.check))
            elif cost.check is not None and (key != prev_key or move != prev_move):
                check = cost.check.to_dict()
                p_ok *= cost.check.p_success
                asked.append((len(steps), cost.check))
            prev_key, prev_move = key, move
            terrain = cost.terrain
            at = steps.append(
                b, terrain.move, terrain.name, as_turns(total), as_turns(t + pending), turn
            )
            if check is not None:
                steps.checks[at] = check
            if jump is not None and k == jump.gap_at:
                steps.extra_of(at)["jump"] = {
                    ("width" if jump.kind == "gap" else "rise"): jsonable(jump.width),
                    "run_up": jump.run_up,
                    "to": list(g.cell_of_index(parts[-1][0])),
                }
            if changes:
                # State changes in place before the step (standing up).
                steps.extra_of(at)["first"] = changes
            pending, changes = 0, []
    return Priced(steps, spans, asked, total, distance_cells, p_ok)


def _turn_checks(
    graph: MovementGraph,
    tl: Timeline | None,
    steps: Steps,
    spans: Spans,
) -> Fraction | None:
    """Checks asked per turn (:meth:`RuleSystem.turn_checks`, D6's one roll a round at the
    hardest cell crossed): each turn's checks over the cells its move crosses (a cell split
    between two turns counts in both), each put on the first step of that turn that enters a
    cell asking it, else on the turn's first step; the path's p(no failure), or None when
    the system checks per run of terrain."""
    system, token = graph.system, graph.search.tokens[graph.search.main]
    if system.turn_checks(token, [], graph.pace) is None:
        return None
    den = graph.denominator
    by_turn: dict[int, list[int]] = {}
    for i, (t0, t1, _, _) in enumerate(spans):
        first = math.floor(t0 / den)
        last = max(first, math.ceil(t1 / den) - 1)
        for k in range(first, last + 1):
            by_turn.setdefault(k, []).append(i)
    steps.checks.clear()
    p_ok = Fraction(1)
    terrains = graph.model.terrains
    for k, idxs in sorted(by_turn.items()):
        rg = tl.rounds[k] if tl is not None and k < len(tl.rounds) else graph
        asked = system.turn_checks(token, [terrains[spans[i][2]] for i in idxs], rg.pace) or []
        for check in asked:
            p_ok *= check.p_success
            at = next(
                (
                    i
                    for i in idxs
                    if (c := rg.state_costs[spans[i][3]][spans[i][2]].check) is not None
                    and (c.what, c.target) == (check.what, check.target)
                ),
                idxs[0],
            )
            held = steps.checks.get(at + 1)
            if held is None:
                steps.checks[at + 1] = check.to_dict()
            else:
                steps.extra_of(at + 1).setdefault("checks", [held]).append(check.to_dict())
    return p_ok


@dataclass(frozen=True)
class PathOdds:
    """A path's expected time and odds once its climbs are priced as units."""

    turns: Fraction  # the expected time (exact), climbs in whole successes with slips
    p_no_failure: Fraction  # no check fails in a way that is not only a delay (no fall)
    p_within: Fraction  # through, without such a failure, within ceil(turns) turns
    on_failure: list[str]  # what the path's failures do, distinct, in step order
    extra: bool  # whether climbs changed the time


#: Longest time (turns) whose chance to be through is worked out exactly; beyond, in floats.
EXACT_WITHIN_TURNS = 200


def _climb_chain(odds: ClimbOdds, n: int) -> tuple[list[Fraction], list[Fraction]]:
    """Per success i < n of one climb: the expected turns from i banked to i + 1, and the
    chance to get there before a fall (RULES.md 2: a failure is no progress; a natural 2
    slips one success back, with ``slip``, then a failed re-roll above the foot is a fall).
    Both are first passages, so a climb's time is their sum and its safety their product."""
    p, q = odds.p, odds.q
    times: list[Fraction] = []
    safe: list[Fraction] = []
    for i in range(n):
        if i == 0 or not odds.slip:
            times.append(1 / p)
        else:
            times.append((1 + q * times[i - 1]) / p)
        if i == 0:
            safe.append(Fraction(1))
        else:
            back = safe[i - 1] if odds.slip else Fraction(1)
            safe.append(p / (p + q - q * p * back))
    return times, safe


def _climb_pmf(odds: ClimbOdds, n: int, horizon: int, exact_: bool) -> list[Any]:
    """P(the climb of ``n`` successes is done, without a fall, at turn t), t = 0..horizon."""
    one: Any = Fraction(1) if exact_ else 1.0
    p: Any = odds.p if exact_ else float(odds.p)
    q: Any = odds.q if exact_ else float(odds.q)
    stay = one - p - q
    state = [one] + [0 * one] * max(0, n - 1)
    out = [one if n == 0 else 0 * one]
    for _ in range(horizon):
        new = [0 * one] * n
        done = 0 * one
        for k, m in enumerate(state):
            if not m:
                continue
            if k + 1 >= n:
                done += m * p
            else:
                new[k + 1] += m * p
            new[k] += m * stay
            if k == 0:
                new[0] += m * q  # at the foot a slip loses nothing and cannot fall
            else:
                new[k - 1 if odds.slip else k] += m * q * p  # the re-roll holds; else a fall
        state = new
        out.append(done)
    return out


def _within_exact(chains: Sequence[tuple[ClimbOdds, int, Fraction]], budget: int) -> Fraction:
    """The chance that ``chains`` (each climb's odds and successes) are all done, without a
    fall, within ``budget`` turns in all: their time distributions convolved, cut at
    ``budget``, summed; exact."""
    dist: list[Fraction] = [Fraction(1)]
    for odds, n, _ in chains:
        pmf = _climb_pmf(odds, n, budget, True)
        new = [Fraction(0)] * (budget + 1)
        for a, pa in enumerate(dist):
            if pa:
                for b in range(budget + 1 - a):
                    new[a + b] += pa * pmf[b]
        dist = new
    return sum(dist, Fraction(0))


def _within_floats(chains: Sequence[tuple[ClimbOdds, int, Fraction]], budget: int) -> float:
    """:func:`_within_exact` in floats, for a budget past :data:`EXACT_WITHIN_TURNS`: the
    same products and sums in the same order (every entry of the convolution gets its
    terms by increasing first index, one row of them a numpy operation), so the same float
    as the loop done entry by entry, in O(budget) numpy operations instead of O(budget**2)
    Python ones. tests/test_mythmaster.py holds the two equal, bit for bit."""
    dist = np.zeros(1)
    dist[0] = 1.0
    for odds, n, _ in chains:
        pmf = np.array(_climb_pmf(odds, n, budget, False), dtype=np.float64)
        new = np.zeros(budget + 1)
        for a in np.flatnonzero(dist).tolist():
            new[a:] += dist[a] * pmf[: budget + 1 - a]
        dist = new
    return float(sum(dist.tolist(), 0.0))


def climb_runs(graph: MovementGraph, spans: Spans) -> list[tuple[ClimbOdds, list[int]]]:
    """Each run of steps (indices from 1) climbing on the same mode, difficulty and state,
    with its odds (:meth:`RuleSystem.climb_odds`, asked once per terrain and state: a
    long path asks it of its few kinds of step, not of every step)."""
    n_t = len(graph.model.terrains)
    code = spans.states().astype(np.int64)
    code *= n_t
    code += spans.tids()
    odds_of: dict[int, ClimbOdds] = {}
    for c in np.flatnonzero(np.bincount(code)).tolist():
        state, tid = divmod(c, n_t)
        odds = graph.system.climb_odds(
            graph.search.tokens[state], graph.model.terrains[tid], graph.pace
        )
        if odds is not None:
            odds_of[c] = odds
    runs: list[tuple[ClimbOdds, list[int]]] = []  # each climb: its odds, its step indices
    if not odds_of:
        return runs
    climbing = np.flatnonzero(np.isin(code, np.array(list(odds_of), dtype=np.int64)))
    terrains = graph.model.terrains
    last: tuple[int, Any] = (-1, None)  # the last climbing step and its key
    for k in climbing.tolist():
        i, c = k + 1, int(code[k])
        terrain = terrains[c % n_t]
        key = (terrain.move, terrain.difficulty, c // n_t)
        if last == (i - 1, key):
            runs[-1][1].append(i)
        else:
            runs.append((odds_of[c], [i]))
        last = (i, key)
    return runs


def _price_climbs(
    graph: MovementGraph,
    steps: Steps,
    spans: Spans,
    asked: list[tuple[int, CellCheck]],
    turns: Fraction,
    p_fixed: Fraction | None,
) -> PathOdds:
    """Price each run of climb cells as one climb (:meth:`RuleSystem.climb_odds`): cell j of
    a run needs ceil(height climbed / per success) whole successes banked, its time the
    expected turns of the successes it adds (slips included); the run's chance of no fall
    replaces its per-turn rolls. Failures that only delay do not count in ``p_no_failure``.
    ``p_fixed``: the system's own per-turn odds (D6), kept as they are."""
    system = graph.system
    terrains = graph.model.terrains
    runs = climb_runs(graph, spans)
    climbing = {i for _, idxs in runs for i in idxs}
    effects: list[str] = []
    p_ok = Fraction(1)
    for i, asked_check in asked:
        if i not in climbing and system.on_failure(asked_check) != "delay":
            p_ok *= asked_check.p_success
    for i in sorted(steps.checks):
        if i not in climbing:
            found = next((c for j, c in asked if j == i), None)
            steps.extra_of(i)["on_failure"] = (
                system.on_failure(found) if found is not None else "stop"
            )
    delta: dict[int, Fraction] = {}  # step -> expected time added by whole successes, slips
    expected = Fraction(0)
    chains: list[tuple[ClimbOdds, int, Fraction]] = []
    anchor = Fraction(0)  # when the last whole-turn climb ended (search time): a boundary
    for odds, idxs in runs:
        length = Fraction(0)
        heights = []
        for i in idxs:
            terrain = terrains[spans[i - 1][2]]
            cells = Fraction(1)
            if terrain.height is not None:
                cells = max(cells, exact(terrain.height) / graph.cell_size)
            length += cells * graph._cell_in_system_unit
            heights.append(math.ceil(length / odds.per_success))
        n = heights[-1]
        times, safe = _climb_chain(odds, n)
        p_run = math.prod(safe, start=Fraction(1))
        chains.append((odds, n, p_run))
        p_ok *= p_run
        done = 0
        for i, need in zip(idxs, heights, strict=True):
            t_new = sum(times[done:need], Fraction(0))
            done = need
            delta[i] = t_new - (graph.turns(spans[i - 1][1]) - graph.turns(spans[i - 1][0]))
            expected += t_new
            if i != idxs[0]:
                steps.checks.pop(i, None)
        if odds.whole_turns:
            # Each roll takes a whole turn: the climb starts at the turn boundary after what
            # the path did since the last such climb ended (on a boundary) or since its start.
            since = graph.turns(spans[idxs[0] - 1][0]) - anchor
            delta[idxs[0]] += math.ceil(since) - since
            anchor = graph.turns(spans[idxs[-1] - 1][1])
        first = steps.extra_of(idxs[0])
        first_check = next((c for j, c in asked if j == idxs[0]), None)
        if steps.check(idxs[0]) is None and first_check is not None:
            steps.checks[idxs[0]] = first_check.to_dict()
        if steps.check(idxs[0]) is not None:
            first["on_failure"] = "delay"
        first["climb"] = {
            "successes": n,
            "per_success": jsonable(odds.per_success),
            "p_success": float(odds.p),
            "p_slip": float(odds.q),
            "expected_turns": float(sum(times, Fraction(0))),
            "p_no_fall": float(p_run),
            "p_no_fall_exact": jsonable(p_run),
        }
    shift = Fraction(0)
    if delta:
        # Re-time every step from the first climb on: its time, cumulative turns, turn.
        for i in range(1, len(steps)):
            time = steps.timing(i)[1]
            if i in delta:
                shift += delta[i]
                time = float(Fraction(time) + delta[i])
            now = graph.turns(spans[i - 1][1]) + shift
            steps.retime(i, float(now), time, math.ceil(now) if now else 0)
    total = turns + shift
    for i in sorted(steps.checks):
        effect = steps.extra.get(i, {}).get("on_failure")
        if effect is not None and effect not in effects:
            effects.append(effect)
    if p_fixed is not None:
        p_ok = p_fixed
    # The chance to be through within the turns shown: the climbs' whole turns against what
    # the rest of the path leaves of ceil(total) turns.
    horizon = math.ceil(total) if total else 0
    climbs_safe = math.prod((c[2] for c in chains), start=Fraction(1))
    others = p_ok / climbs_safe if climbs_safe else Fraction(0)
    if chains:
        budget = math.floor(horizon - (total - expected))
        if budget <= EXACT_WITHIN_TURNS:
            within = _within_exact(chains, budget)
        else:
            within = Fraction(_within_floats(chains, budget)).limit_denominator(10**12)
        p_within = others * within
    else:
        p_within = p_ok
    return PathOdds(total, p_ok, p_within, effects, bool(runs))


def exact_cells(x: float) -> Fraction:
    if isinstance(x, int) or float(x).is_integer():
        return Fraction(int(x))
    return Fraction(round(x * 10**9), 10**9)


#: Longest plan that lists every turn; a longer one lists only the turns that enter cells.
MAX_PLAN_TURNS = 1000


def turn_plan(steps: Steps, total: Fraction, *, columns: bool = True) -> PlanTable:
    """Where the token stands at the end of each turn, and what that turn spent.

    Every turn is listed up to :data:`MAX_PLAN_TURNS` turns; a longer move (a very slow
    token) lists the turns in which it enters a cell and the last one, so the plan stays
    as long as the path, not as long as the wait. ``columns``: the turns found in numpy
    (searches over the steps' cumulative turns, the same bounds as :mod:`bisect`'s);
    False: a turn at a time (the plain way it is tested against).
    """
    if not columns:
        return _turn_plan_plain(steps, total)
    eps = 1e-12
    n_turns = math.ceil(total) if total else 0
    done = steps.turns_array()  # non-decreasing
    if n_turns <= MAX_PLAN_TURNS:
        ks = np.arange(1, n_turns + 1, dtype=np.int64)
    else:
        ks = _entered_turns(done, n_turns, eps)
    # steps[1:] entered in turn k: k - 1 < turns <= k (+eps); the last done: <= k (+eps).
    lo = np.maximum(1, np.searchsorted(done, (ks - 1).astype(np.float64), side="right"))
    hi = np.searchsorted(done, ks + eps, side="right")
    if n_turns > MAX_PLAN_TURNS:
        keep = (lo < hi) | (ks == n_turns)
        ks, lo, hi = ks[keep], lo[keep], hi[keep]
    # Every turn before the last is spent whole (total > n_turns - 1 >= k).
    spent = np.ones(ks.size, dtype=np.float64)
    if ks.size and ks[-1] == n_turns:
        spent[-1] = float(min(Fraction(1), total - (n_turns - 1)))
    plan = PlanTable(steps)
    for column, values in ((plan.k, ks), (plan.lo, lo), (plan.hi, hi)):
        column.frombytes(values.astype(np.int64).data.cast("B"))
    plan.spent.frombytes(spent.data.cast("B"))
    return plan


def _entered_turns(done: np.ndarray, n_turns: int, eps: float) -> np.ndarray:
    """The turns (int64, sorted) of ceil(t - eps) and ceil(t) for the cumulative turns
    ``t`` of every step after the start, and ``n_turns``, those from 1 to ``n_turns``:
    each of the two is non-decreasing with ``t``, so each chunk's distinct values are
    found in order, and only those are sorted together."""
    found = [np.array([n_turns], dtype=np.float64)]
    for lo in range(1, done.size, CHUNK_TURNS):
        later = done[lo : lo + CHUNK_TURNS]
        for ks in (np.ceil(later - eps), np.ceil(later)):
            keep = np.empty(ks.size, dtype=bool)
            keep[0] = True
            np.not_equal(ks[1:], ks[:-1], out=keep[1:])
            found.append(ks[keep])
    ks = np.concatenate(found)
    return np.unique(ks[(ks >= 1) & (ks <= n_turns)]).astype(np.int64)


#: Steps whose turns :func:`_entered_turns` reads at a time.
CHUNK_TURNS = 1 << 20


def _turn_plan_plain(steps: Steps, total: Fraction) -> PlanTable:
    """:func:`turn_plan` a turn at a time, with :mod:`bisect`."""
    eps = 1e-12
    n_turns = math.ceil(total) if total else 0
    done = steps.turns_array().tolist()  # non-decreasing
    if n_turns <= MAX_PLAN_TURNS:
        wanted: Iterable[int] = range(1, n_turns + 1)
    else:
        ks = {n_turns}
        for t in itertools.islice(done, 1, None):
            ks.update(k for k in (math.ceil(t - eps), math.ceil(t)) if 1 <= k <= n_turns)
        wanted = sorted(ks)
    plan = PlanTable(steps)
    for k in wanted:
        # steps[1:] entered in turn k: k - 1 < turns <= k (+eps); the last done: <= k (+eps).
        lo = max(1, bisect.bisect_right(done, k - 1))
        hi = bisect.bisect_right(done, k + eps)
        if n_turns > MAX_PLAN_TURNS and lo >= hi and k != n_turns:
            continue
        # Every turn before the last is spent whole (total > n_turns - 1 >= k).
        spent = 1.0 if k < n_turns else float(min(Fraction(1), total - (k - 1)))
        plan.append(k, lo, hi, spent)
    return plan


def _check_risks(graph: MovementGraph) -> list[list[float]]:
    """-log(p) of what entering each terrain risks, per search state: its check's failure,
    except where a failure only delays; a climb priced in whole successes
    (:meth:`RuleSystem.climb_odds`) risks its fall instead (the cell's successes' chain)."""
    system = graph.system
    out: list[list[float]] = []
    for s, costs in enumerate(graph.state_costs):
        token = graph.search.tokens[s]
        row: list[float] = []
        for c in costs:
            p = Fraction(1)
            odds = system.climb_odds(token, c.terrain, graph.pace)
            if odds is not None:
                cells = Fraction(1)
                if c.terrain.height is not None:
                    cells = max(cells, exact(c.terrain.height) / graph.cell_size)
                n = math.ceil(cells * graph._cell_in_system_unit / odds.per_success)
                p = math.prod(_climb_chain(odds, n)[1], start=Fraction(1))
            elif c.check is not None and system.on_failure(c.check) != "delay":
                p = c.check.p_success
            row.append(math.inf if p == 0 else -math.log(float(p)))
        out.append(row)
    return out


def _risk_weighted(
    graph: MovementGraph, start: Cell, goal: Cell, weight: float | None
) -> list[Cell] | None:
    """Dijkstra on (risk, ticks): ``weight`` None = safest first; else ticks + w*D*risk.

    Risk is -log(p) of each check charged as the system counts checks, as
    :func:`evaluate_path` asks them: on entering a run of the same mode and difficulty, and
    again in each new move on the run (:meth:`RuleSystem.check_period`: a Move action, a
    turn, or once per run); where the system rolls once a turn at the hardest cell
    (:meth:`RuleSystem.turn_checks`, D6's round), a turn's risk is its hardest check's, charged
    as the turn's cells raise it. A climb in whole successes risks its fall, cell by cell.
    The time of the step ending at a node (its label) places the step in its move or turn;
    the search is a heuristic for candidates, each then evaluated exactly.
    """
    g = graph.grid
    n = graph.n
    den = graph.denominator
    risks = _check_risks(graph)
    system = graph.system
    per_turn = system.turn_checks(graph.search.tokens[graph.search.main], [], graph.pace)
    tid = graph.model.terrain_ids.ravel().tolist()
    run_key = graph.run_key.tolist()
    layer_n = n * graph.n_par
    src = graph.node(start)
    goal_idx = g.index(goal)
    # A move's ticks over a check period, worked out exactly once per (ticks, terrain): a
    # search meets a few hundred distinct times and asks them millions of times. (Keyed by
    # the terrain, whose period it is, not by the period: a Fraction hashes and compares
    # slowly.)
    moves: dict[tuple[float, int], int] = {}

    def move_of(ticks: float, k: int) -> int | None:
        """The move a step ending at ``ticks`` falls in on terrain ``k`` (None: one per run)."""
        period = 1 if per_turn is not None else graph.check_period[k]
        if period is None:
            return None
        if not ticks:
            return 0
        got = moves.get((ticks, k))
        if got is None:
            got = moves[ticks, k] = math.ceil(Fraction(ticks) / (den * period))
        return got

    best: dict[int, tuple[float, float]] = {src: (0.0, 0.0)}
    # Per settled label: its run key, its move, and (per-turn rolls) the turn's risk so far.
    aux: dict[int, tuple[int, int | None, float]] = {src: (run_key[src % n], 0, 0.0)}
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
        key_u, move_u, turn_risk = aux[node]
        for nxt, t in graph.neighbours(node):
            j = nxt % n
            if j == node % n:
                risk, new_aux = 0.0, (key_u, move_u, turn_risk)  # a state change in place
            else:
                k = tid[j]
                here = risks[nxt // layer_n][k]
                key_v, move_v = run_key[j], move_of(b + t, k)
                risk, seen = 0.0, turn_risk
                if per_turn is not None:
                    seen = 0.0 if move_v != move_u else turn_risk
                    risk = max(0.0, here - seen)
                    seen = max(seen, here)
                elif key_v != key_u or move_v != move_u:
                    risk = here
                new_aux = (key_v, move_v, seen)
            jump = graph.jump_at.get((node, nxt)) if graph.jump_at else None
            if jump is not None and jump.check is not None:
                p = jump.check.p_success
                risk += math.inf if p == 0 else -math.log(float(p))
            if weight is None:
                cand = (a + risk, b + t)
            else:
                cand = (a + t + weight * den * risk, b + t)
            old = best.get(nxt)
            if old is None or cand < old:
                best[nxt] = cand
                prev[nxt] = node
                aux[nxt] = new_aux
                heapq.heappush(heap, (cand[0], cand[1], nxt))
    if found is None:
        return None
    out = [found]
    while found in prev:
        found = prev[found]
        out.append(found)
    return _cells(graph, out[::-1])


def _pareto(cands: list[PathAnswer]) -> list[PathAnswer]:
    # Candidates are weighed by the figures the contract shows (p(no failure) as a float),
    # so that two paths it cannot tell apart are one option.
    uniq: dict[tuple[float, float], PathAnswer] = {}
    for c in cands:
        uniq.setdefault((c.ticks, float(c.p_no_failure)), c)
    pts = list(uniq.items())
    keep = []
    for (ct, cp), c in pts:
        dominated = any((ot <= ct and op >= cp) and (ot < ct or op > cp) for (ot, op), _ in pts)
        if not dominated:
            keep.append(c)
    return sorted(keep, key=lambda c: c.ticks)
