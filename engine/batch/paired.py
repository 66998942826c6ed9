"""Paired differences between two points of a sweep played on the same run seeds.

With common random numbers (a sweep's default, engine.batch.sweep) run *i* of every point
rolls from the same seed, so two points' runs pair up one to one and their difference is
estimated from the pairs, not from two independent samples:

* **capture rate**: each pair is (captured at the reference?, captured at the point?). With
  ``both``, ``only_ref`` (captured at the reference only), ``only_point`` and ``neither``
  pairs, the difference is ``(only_point - only_ref) / pairs``; its 95% interval is
  Newcombe's hybrid score interval for paired proportions (Newcombe 1998, method 10: each
  rate's Wilson interval, combined with the pairs' phi correlation), which stays inside
  [-1, 1] and is sound where the discordant pairs are few;
* **mean turns**: the mean of the per-pair differences with the paired t interval (Student's
  t with pairs - 1 degrees of freedom on the differences' standard deviation).

Runs pair by their index, over the runs both points have (a point run longer by
``--until-ci`` pairs its first runs only); a pair whose two seeds differ is not a pair at
all (points seeded per point), and :func:`pair_points` says so instead of a number.

A sweep's points are paired from their runs tables (:func:`pair_runs`: each point's
``runs.parquet``, columns, not runs.jsonl parsed again); :func:`pair_points` is the same
comparison record by record from two runs.jsonl files (a test holds the two equal).
"""

from __future__ import annotations

import math
import os
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, NamedTuple

from engine.batch.results import PAIR_COLUMNS, iter_runs, runs_table_of
from engine.batch.tally import wilson

#: The standard normal's 97.5% point: a 95% two-sided interval.
Z95 = 1.959963984540054


@dataclass
class PairTally:
    """Running counts and sums over the pairs of two points (bounded memory)."""

    both: int = 0
    only_ref: int = 0
    only_point: int = 0
    neither: int = 0
    sum_d: int = 0  # sum of the turn differences (point - reference)
    sum_d2: int = 0  # and of their squares

    @property
    def pairs(self) -> int:
        return self.both + self.only_ref + self.only_point + self.neither

    def add(self, ref: dict[str, Any], point: dict[str, Any], outcome: str = "capture") -> None:
        a, b = ref["outcome"] == outcome, point["outcome"] == outcome
        if a and b:
            self.both += 1
        elif a:
            self.only_ref += 1
        elif b:
            self.only_point += 1
        else:
            self.neither += 1
        d = int(point["turns"]) - int(ref["turns"])
        self.sum_d += d
        self.sum_d2 += d * d


def _phi(both: int, only_ref: int, only_point: int, neither: int) -> float:
    """The pairs' phi coefficient (0 where a margin is empty)."""
    denom = (both + only_ref) * (only_point + neither) * (both + only_point) * (only_ref + neither)
    if denom == 0:
        return 0.0
    return (both * neither - only_ref * only_point) / math.sqrt(denom)


def newcombe_paired(
    both: int, only_ref: int, only_point: int, neither: int, z: float = Z95
) -> tuple[float, float, float]:
    """(difference, lo, hi): the point's rate minus the reference's, with Newcombe's hybrid
    score interval for paired proportions (method 10 of Newcombe 1998, no continuity
    correction)."""
    n = both + only_ref + only_point + neither
    if n == 0:
        return (0.0, -1.0, 1.0)
    p1 = (both + only_point) / n  # the point's rate
    p2 = (both + only_ref) / n  # the reference's
    l1, u1 = wilson(both + only_point, n, z)
    l2, u2 = wilson(both + only_ref, n, z)
    phi = _phi(both, only_ref, only_point, neither)
    diff = p1 - p2
    dl = (p1 - l1) ** 2 - 2 * phi * (p1 - l1) * (u2 - p2) + (u2 - p2) ** 2
    du = (u1 - p1) ** 2 - 2 * phi * (u1 - p1) * (p2 - l2) + (p2 - l2) ** 2
    lo = max(-1.0, diff - math.sqrt(max(dl, 0.0)))
    hi = min(1.0, diff + math.sqrt(max(du, 0.0)))
    return (diff, lo, hi)


def paired_t(n: int, sum_d: float, sum_d2: float) -> tuple[float, float | None, float | None]:
    """(mean difference, lo, hi): the paired t 95% interval of n differences given their sum
    and sum of squares; no interval (None) under two pairs."""
    if n == 0:
        return (0.0, None, None)
    mean = sum_d / n
    if n < 2:
        return (mean, None, None)
    # Student's t quantile: scipy.stats.t.ppf is this function (its _ppf), and importing
    # scipy.stats costs about a second at the end of a sweep.
    from scipy.special import stdtrit

    var = max(0.0, (sum_d2 - n * mean * mean) / (n - 1))
    half = float(stdtrit(n - 1, 0.975)) * math.sqrt(var / n)
    return (mean, mean - half, mean + half)


def _pairs(ref_path: str, point_path: str) -> Iterator[tuple[dict[str, Any], dict[str, Any]]]:
    """Runs of two points' runs.jsonl (each in run order) paired by run index, up to the
    shorter one."""
    yield from zip(iter_runs(ref_path), iter_runs(point_path), strict=False)


#: Why two points' runs do not pair.
UNPAIRED = "the two points' runs have different seeds"


def pair_points(ref_path: str, point_path: str, outcome: str = "capture") -> dict[str, Any]:
    """The paired comparison of a point (``point_path``, its runs.jsonl) with a reference:
    ``{"pairs", "capture": {"diff", "lo", "hi", "both", "only_ref", "only_point",
    "neither"}, "turns": {"diff", "lo", "hi"}}``; or ``{"pairs": 0, "unpaired": why}``
    where the two points' runs do not share their seeds."""
    tally = PairTally()
    for ra, rb in _pairs(ref_path, point_path):
        if ra["run"] != rb["run"] or ra.get("seed") != rb.get("seed"):
            return {"pairs": 0, "unpaired": UNPAIRED}
        tally.add(ra, rb, outcome)
    return _compared(tally, outcome)


class PointRuns(NamedTuple):
    """A point's runs as the columns that pair them (numpy arrays, in run order): run
    index, run seed, whether it ended in the compared outcome, turns."""

    run: Any
    seed: Any
    hit: Any
    turns: Any


def point_runs(folder: str, outcome: str = "capture", table: Any | None = None) -> PointRuns:
    """A finished point's :class:`PointRuns`: from its runs table (``table`` where the
    caller has read it, else its ``runs.parquet``), else from its runs.jsonl."""
    import numpy as np

    if table is None:
        table = runs_table_of(folder, columns=PAIR_COLUMNS)
    if table is not None:
        cols = {c: table.column(c).to_numpy() for c in PAIR_COLUMNS}
        hit = cols["outcome"] == outcome
    else:
        rows = [[r["run"], r.get("seed"), r["outcome"] == outcome, r["turns"]]
                for r in iter_runs(os.path.join(folder, "runs.jsonl"))]  # fmt: skip
        cols = {
            "run": np.array([r[0] for r in rows], dtype=np.int64),
            "seed": np.array([r[1] for r in rows], dtype=object),
            "turns": np.array([r[3] for r in rows], dtype=np.int64),
        }
        hit = np.array([r[2] for r in rows], dtype=bool)
    return PointRuns(cols["run"], cols["seed"], hit, cols["turns"])


def pair_runs(ref: PointRuns, point: PointRuns, outcome: str = "capture") -> dict[str, Any]:
    """:func:`pair_points` of two points' runs columns: the same document."""
    n = min(len(ref.run), len(point.run))
    if not ((ref.run[:n] == point.run[:n]).all() and (ref.seed[:n] == point.seed[:n]).all()):
        return {"pairs": 0, "unpaired": UNPAIRED}
    a, b = ref.hit[:n], point.hit[:n]
    # Turns are at most 10 000 (engine.scenario.MAX_TURNS) and runs 10**9: int64 sums hold.
    d = point.turns[:n].astype("int64") - ref.turns[:n].astype("int64")
    tally = PairTally(
        both=int((a & b).sum()),
        only_ref=int((a & ~b).sum()),
        only_point=int((~a & b).sum()),
        neither=int((~a & ~b).sum()),
        sum_d=int(d.sum()),
        sum_d2=int((d * d).sum()),
    )
    return _compared(tally, outcome)


def _compared(tally: PairTally, outcome: str) -> dict[str, Any]:
    """The comparison document of a tally of pairs."""
    diff, lo, hi = newcombe_paired(tally.both, tally.only_ref, tally.only_point, tally.neither)
    tdiff, tlo, thi = paired_t(tally.pairs, tally.sum_d, tally.sum_d2)
    return {
        "pairs": tally.pairs,
        outcome: {
            "diff": diff,
            "lo": lo,
            "hi": hi,
            "both": tally.both,
            "only_ref": tally.only_ref,
            "only_point": tally.only_point,
            "neither": tally.neither,
        },
        "turns": {"diff": tdiff, "lo": tlo, "hi": thi},
    }


#: What each point is compared with: the sweep's first point, or the one before it.
AGAINST = ("first", "previous")


def reference_of(
    params: list[dict[str, Any]], points: list[dict[str, Any]], against: str
) -> list[int | None]:
    """For each point (in grid order), the index of the point it is compared with: ``first``
    the grid's first point (every parameter at its first value); ``previous`` the point one
    value back along the last parameter not at its first value, the others the same (in a
    sweep of one parameter, the value before). None for the first point."""
    if against == "first":
        return [None if i == 0 else 0 for i in range(len(points))]
    keys = [grid_place(p["params"], params) for p in points]
    where = {k: i for i, k in enumerate(keys)}
    out: list[int | None] = []
    for k in keys:
        idx = list(k)
        back = next((j for j in range(len(idx) - 1, -1, -1) if idx[j] > 0), None)
        if back is None:
            out.append(None)
            continue
        idx[back] -= 1
        out.append(where.get(tuple(idx)))
    return out


def grid_place(values: dict[str, Any], params: list[dict[str, Any]]) -> tuple[int, ...]:
    """A point's place in the grid: each parameter's value's index in its list."""
    import json

    return tuple(
        [json.dumps(v, sort_keys=True) for v in p["values"]].index(
            json.dumps(values[p["name"]], sort_keys=True)
        )
        for p in params
    )


def paired_block(
    out_dir: str, doc: dict[str, Any], against: str = "first", outcome: str = "capture"
) -> dict[str, Any]:
    """The ``paired`` part of a sweep's summary: each point against its reference
    (:func:`reference_of`), from the points' runs tables in ``out_dir/points``
    (:func:`point_runs`), each read once."""
    points = doc["points"]
    refs = reference_of(doc["params"], points, against)
    # A reference's runs are held from its turn until its last point (a point's reference
    # comes before it in the grid): a point or two at a time, whatever the sweep's size.
    last = {ref: i for i, ref in enumerate(refs) if ref is not None}
    held: dict[int, PointRuns] = {}
    rows = []
    for i, (p, ref) in enumerate(zip(points, refs, strict=True)):
        if ref is None and i not in last:
            continue
        runs = point_runs(os.path.join(out_dir, "points", p["point"]), outcome)
        if i in last:
            held[i] = runs
        if ref is not None:
            r = points[ref]
            if ref not in held:  # not before it: points listed out of grid order
                held[ref] = point_runs(os.path.join(out_dir, "points", r["point"]), outcome)
            got = pair_runs(held[ref], runs, outcome)
            rows.append({"point": p["point"], "reference": r["point"], **got})
            if last[ref] <= i:
                del held[ref]
    return block_of(rows, against, outcome)


def block_of(rows: list[dict[str, Any]], against: str, outcome: str) -> dict[str, Any]:
    """The ``paired`` block of a sweep's summary with its ``rows`` (grid order)."""
    return {
        "against": against,
        "outcome": outcome,
        "methods": {outcome: "newcombe-paired-score", "turns": "paired-t"},
        "rows": rows,
    }
