"""Shared timing for the benchmarks: the machines are noisy, so report the best and median."""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable


def best(fn: Callable[[], object], repeat: int) -> tuple[float, float]:
    """(quickest, median) of ``repeat`` runs of ``fn``, in seconds."""
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return min(times), statistics.median(times)
