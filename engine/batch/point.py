"""One point of a sweep as a unit of work: its batch in its own folder, a fixed number of
runs or, with ``--until-ci``, steps until its capture rate's 95% interval is narrow enough.

:func:`run_point` is all a sweep does per point (engine.batch.sweep loops over them), so a
point can be handed out alone; :class:`PointWork` says how every point of a sweep runs.
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from engine.batch.control import out_folder
from engine.batch.runner import ProgressFn, run_batch
from engine.batch.work import CHUNK, ChunkFn, Executor
from engine.errors import Wording

if TYPE_CHECKING:
    from engine.scenario import MapRead

#: ``--until-ci``'s cap on a point's runs where ``--max-runs`` is not given.
UNTIL_MAX_RUNS = 10_000


def ci_width(summary: dict[str, Any], outcome: str = "capture") -> float:
    """The width of a batch summary's 95% interval of ``outcome``'s rate."""
    lo, hi = summary["ci95"].get(outcome, (0.0, 1.0))
    return float(hi) - float(lo)


def next_step(n: int, k: int, width: float, cap: int) -> int:
    """The runs a point extends to after ``n`` runs with ``k`` captures did not reach an
    interval ``width`` wide: the fewest runs whose Wilson interval at the rate so far is at
    most ``width`` wide, rounded up to a whole chunk, at least a chunk more and at most
    double (the rate moves as runs come in), and at most ``cap``. A function of the runs so
    far alone: a stopped sweep resumed takes the same steps."""
    rate = k / n if n else 0.5

    def wide(m: int) -> bool:
        lo, hi = _wilson_at(rate, m)
        return hi - lo > width

    lo_m, hi_m = n + 1, max(cap, n + 1)
    while lo_m < hi_m:  # the fewest runs m with the interval narrow enough at this rate
        mid = (lo_m + hi_m) // 2
        if wide(mid):
            lo_m = mid + 1
        else:
            hi_m = mid
    target = -(-lo_m // CHUNK) * CHUNK
    return min(cap, max(n + CHUNK, min(target, 2 * n)))


def _wilson_at(rate: float, n: int, z: float = 1.959963984540054) -> tuple[float, float]:
    """The Wilson interval of ``rate`` observed over ``n`` runs (k = rate * n, not rounded)."""
    denom = 1 + z * z / n
    centre = (rate + z * z / (2 * n)) / denom
    half = z * math.sqrt(rate * (1 - rate) / n + z * z / (4 * n * n)) / denom
    return (max(0.0, centre - half), min(1.0, centre + half))


@dataclass(frozen=True)
class PointWork:
    """How every point of a sweep is run: one point is one unit of work (:func:`run_point`),
    its batch in its own folder, so points can be handed out one by one."""

    scenario_path: str
    out_dir: str
    runs: int
    until: dict[str, Any] | None = None
    workers: int = 1
    scheduler: str | None = None
    resume: bool = False
    force: bool = False
    progress: ProgressFn | None = None
    note: Callable[[Wording], None] | None = None
    chunk_fn: ChunkFn | None = None
    #: The scenario's map as the sweep read it (engine.scenario.read_scenario_map): each
    #: point's batch loads its scenario from it, not from the map file again.
    same_map: MapRead | None = None


def _batch_runs(folder: str) -> int | None:
    """The runs the batch in ``folder`` was asked for (its batch.json), or None."""
    from engine.errors import TacgridError
    from engine.sources import read_json_file

    path = os.path.join(folder, "batch.json")
    if not os.path.exists(path):
        return None
    try:
        doc = read_json_file(path, "batch")
    except TacgridError:
        return None
    got = doc.get("runs") if isinstance(doc, dict) else None
    return got if isinstance(got, int) and not isinstance(got, bool) else None


def run_point(
    work: PointWork, point: dict[str, Any], executor: Executor | None = None
) -> dict[str, Any]:
    """Run one point (``{"point", "params", "seed"}`` of a sweep spec) into
    ``out_dir/points/POINT`` and return its batch summary: ``work.runs`` runs, or with
    ``work.until`` steps (:func:`next_step`) until its capture interval is narrow enough."""
    folder = out_folder(work.out_dir, "points", point["point"])  # no link followed
    runs, resume = work.runs, work.resume
    if work.until is not None and resume:
        # A point stopped half-way through a step finishes that step first.
        runs = max(runs, _batch_runs(folder) or 0)
    while True:
        summary = run_batch(
            work.scenario_path,
            runs=runs,
            seed=point["seed"],
            workers=work.workers,
            scheduler=work.scheduler,
            out_dir=folder,
            resume=resume,
            force=work.force and not resume,
            overrides=dict(point["params"]),
            progress=work.progress,
            note=work.note,
            chunk_fn=work.chunk_fn,
            executor=executor,
            same_map=work.same_map,
        )
        until = work.until
        n = summary["runs"]
        if until is None or n >= until["max_runs"] or ci_width(summary) <= until["width"]:
            return summary
        runs = next_step(
            n, summary["outcomes"].get("capture", 0), until["width"], until["max_runs"]
        )
        resume = True
