"""Running aggregates of a batch (outcome counts, turn histograms) and the summary they
give, with 95% Wilson intervals."""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable
from typing import Any


def wilson(k: int, n: int, z: float = 1.959963984540054) -> tuple[float, float]:
    """95% Wilson score interval for k successes in n trials."""
    if n == 0:
        return (0.0, 1.0)
    p = k / n
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    lo = 0.0 if k == 0 else max(0.0, centre - half)
    hi = 1.0 if k == n else min(1.0, centre + half)
    return (lo, hi)


def _nth(hist: Counter[int], rank: int) -> int:
    """The value at 0-based ``rank`` in the sorted multiset ``hist`` (value -> count)."""
    seen = 0
    for value in sorted(hist):
        seen += hist[value]
        if rank < seen:
            return value
    raise IndexError(rank)


def _hist_percentile(hist: Counter[int], n: int, q: float) -> float:
    """Linear-interpolated percentile of a histogram (exactly as of the sorted values)."""
    if n == 0:
        return 0.0
    k = (n - 1) * q
    lo, hi = math.floor(k), math.ceil(k)
    a, b = _nth(hist, lo), _nth(hist, hi)
    return float(a + (b - a) * (k - lo))


class Tally:
    """Running aggregates of a batch: outcome counts, turn sums and turn histograms.

    Its size depends on the distinct outcomes and turn counts (at most the turn limit), not
    on the number of runs; the summary it gives equals one made from every result.
    """

    def __init__(self) -> None:
        self.n = 0
        self.counts: Counter[str] = Counter()
        self.turns: Counter[int] = Counter()
        self.by_outcome: dict[str, Counter[int]] = {}

    def add(self, record: dict[str, Any]) -> None:
        outcome, turns = record["outcome"], int(record["turns"])
        self.n += 1
        self.counts[outcome] += 1
        self.turns[turns] += 1
        self.by_outcome.setdefault(outcome, Counter())[turns] += 1

    def summary(
        self, *, seed: int, scenario: str, digest: str, results_path: str
    ) -> dict[str, Any]:
        """The ``summary.json`` document (CONTRACT.md ``run``): ``digest`` is the scenario
        file's (:attr:`engine.scenario.Scenario.digest`), ``version`` this tacgrid's."""
        from engine import version

        n = self.n
        names = sorted(set(self.counts) | {"capture", "escape", "timeout"})
        by_outcome = {}
        for name in names:
            hist = self.by_outcome.get(name)
            if hist:
                m = sum(hist.values())
                by_outcome[name] = {
                    "mean": sum(t * c for t, c in hist.items()) / m,
                    "p50": _hist_percentile(hist, m, 0.5),
                    "p90": _hist_percentile(hist, m, 0.9),
                }
        total = sum(t * c for t, c in self.turns.items())
        return {
            "scenario": scenario,
            "digest": digest,
            "version": version(),
            "runs": n,
            "seed": seed,
            "outcomes": {k: self.counts.get(k, 0) for k in names},
            "rates": {k: self.counts.get(k, 0) / n if n else 0.0 for k in names},
            "ci95": {k: list(wilson(self.counts.get(k, 0), n)) for k in names},
            "turns": {
                "mean": total / n if n else 0.0,
                "p50": _hist_percentile(self.turns, n, 0.5),
                "p90": _hist_percentile(self.turns, n, 0.9),
            },
            "turns_by_outcome": by_outcome,
            "results": results_path,
        }


def summarise(
    results: Iterable[dict[str, Any]],
    *,
    seed: int,
    scenario: str,
    digest: str,
    results_path: str,
) -> dict[str, Any]:
    """The ``summary.json`` document (CONTRACT.md ``run``), independent of result order."""
    tally = Tally()
    for r in results:
        tally.add(r)
    return tally.summary(seed=seed, scenario=scenario, digest=digest, results_path=results_path)
