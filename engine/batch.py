"""Headless batches: many seeded runs of a scenario, locally or on a Dask cluster.

* Run seeds are spawned from the scenario seed with ``numpy.random.SeedSequence``, so run
  *i* has the same seed however the batch is split (1 worker, 8, or a cluster).
* Results are appended to ``runs.jsonl`` as they finish, one ``os.write`` per line on a
  file opened with ``O_APPEND`` (a kill leaves at most one torn last line, which
  ``--resume`` drops and runs again); when the batch completes the file is rewritten in
  run order, atomically, so its bytes do not depend on the worker count either.
* ``summary.json`` (CONTRACT.md ``run``) is written atomically at the end, with 95%
  Wilson intervals for every outcome.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import sys
from collections import Counter
from collections.abc import Callable, Iterable
from typing import Any

import numpy as np

from engine.errors import ArgumentError, ScenarioError

#: Runs per task handed to a worker process or a Dask worker.
CHUNK = 25
_CACHE: dict[tuple[Any, ...], Any] = {}
#: The worker function's signature: (scenario path, overrides, [(run, seed), ...]) -> results.
ChunkFn = Callable[[str, tuple[tuple[str, Any], ...], list[tuple[int, int]]], list[dict[str, Any]]]


def run_seeds(seed: int, runs: int) -> list[int]:
    """The seed of every run, independent of how the batch is split."""
    children = np.random.SeedSequence(seed).spawn(runs)
    return [int(c.generate_state(1, dtype=np.uint32)[0]) for c in children]


def _prepared(path: str, overrides: tuple[tuple[str, Any], ...]) -> Any:
    """Scenario and field cache, loaded once per worker process and reused across tasks."""
    from engine.scenario import load_scenario
    from engine.sim import FieldCache

    key = (os.path.abspath(path), overrides)
    got = _CACHE.get(key)
    if got is None:
        scenario = load_scenario(path, overrides=dict(overrides))
        got = _CACHE[key] = (scenario, FieldCache(scenario))
    return got


def run_chunk(
    path: str, overrides: tuple[tuple[str, Any], ...], items: list[tuple[int, int]]
) -> list[dict[str, Any]]:
    """Run ``(run index, run seed)`` items; the worker function for pools and Dask."""
    from engine.sim import Simulation

    scenario, fields = _prepared(path, overrides)
    out = []
    for run, seed in items:
        sim = Simulation(scenario, seed, fields=fields, run=run, record=False)
        out.append(sim.run().to_dict())
    return out


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


def _percentile(sorted_vals: list[int], q: float) -> float:
    if not sorted_vals:
        return 0.0
    k = (len(sorted_vals) - 1) * q
    lo, hi = math.floor(k), math.ceil(k)
    return float(sorted_vals[lo] + (sorted_vals[hi] - sorted_vals[lo]) * (k - lo))


def summarise(
    results: list[dict[str, Any]], *, seed: int, scenario: str, results_path: str
) -> dict[str, Any]:
    """The ``summary.json`` document (CONTRACT.md ``run``), independent of result order."""
    results = sorted(results, key=lambda r: r["run"])
    n = len(results)
    counts = Counter(r["outcome"] for r in results)
    names = sorted(set(counts) | {"capture", "escape", "timeout"})
    turns = sorted(r["turns"] for r in results)
    by_outcome = {}
    for name in names:
        ts = sorted(r["turns"] for r in results if r["outcome"] == name)
        if ts:
            by_outcome[name] = {
                "mean": sum(ts) / len(ts),
                "p50": _percentile(ts, 0.5),
                "p90": _percentile(ts, 0.9),
            }
    return {
        "scenario": scenario,
        "runs": n,
        "seed": seed,
        "outcomes": {k: counts.get(k, 0) for k in names},
        "rates": {k: counts.get(k, 0) / n if n else 0.0 for k in names},
        "ci95": {k: list(wilson(counts.get(k, 0), n)) for k in names},
        "turns": {
            "mean": sum(turns) / n if n else 0.0,
            "p50": _percentile(turns, 0.5),
            "p90": _percentile(turns, 0.9),
        },
        "turns_by_outcome": by_outcome,
        "results": results_path,
    }


def _write_atomic(path: str, text: str) -> None:
    """Write a whole file or nothing: a temporary file, synced, then renamed over ``path``."""
    tmp = f"{path}.tmp"
    try:
        with open(tmp, "w", encoding="utf-8") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.remove(tmp)
        raise


def read_runs(path: str) -> list[dict[str, Any]]:
    """Complete lines of a runs.jsonl (a torn last line from a kill is dropped).

    A complete line that is not a run record means the file was edited or is another
    file: that is one clear error, not a half-resumed batch.
    """
    out: list[dict[str, Any]] = []
    if not os.path.exists(path):
        return out
    with open(path, "rb") as fh:
        data = fh.read()
    good_end = data.rfind(b"\n") + 1
    for n, line in enumerate(data[:good_end].splitlines(), 1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except ValueError:
            record = None
        if not (
            isinstance(record, dict)
            and isinstance(record.get("run"), int)
            and isinstance(record.get("outcome"), str)
            and isinstance(record.get("turns"), int)
        ):
            raise ArgumentError(
                f"{path}: line {n} is not a run record; it was edited or is not tacgrid's: "
                "use another --out or drop --resume"
            )
        out.append(record)
    if good_end < len(data):
        with open(path, "r+b") as fh:
            fh.truncate(good_end)
    return out


def run_batch(
    scenario_path: str,
    *,
    runs: int | None = None,
    seed: int | None = None,
    workers: int = 1,
    scheduler: str | None = None,
    out_dir: str = "runs",
    resume: bool = False,
    overrides: dict[str, Any] | None = None,
    progress: Callable[[int, int], None] | None = None,
    chunk_fn: ChunkFn | None = None,
) -> dict[str, Any]:
    """Run a batch and write ``runs.jsonl`` and ``summary.json`` into ``out_dir``.

    ``chunk_fn`` replaces :func:`run_chunk` (same arguments); it exists for tests that
    make a worker die, and must be picklable for ``workers > 1``.
    """
    from engine.scenario import load_scenario

    scenario = load_scenario(scenario_path, overrides=overrides)  # validate before anything runs
    n = runs if runs is not None else scenario.runs
    base_seed = seed if seed is not None else scenario.seed
    if n < 1:
        raise ArgumentError(f"--runs {n}: expected a whole number >= 1")
    if workers < 1:
        raise ArgumentError(f"--workers {workers}: expected a whole number >= 1")
    if os.path.exists(out_dir) and not os.path.isdir(out_dir):
        raise ArgumentError(f"--out {out_dir}: is a file, not a folder; give a folder")
    # A cluster that cannot be reached is an error before anything is written.
    client = _connect(scheduler) if scheduler else None
    try:
        return _run_batch(
            scenario_path,
            scenario,
            n,
            base_seed,
            workers,
            client,
            out_dir,
            resume,
            overrides,
            progress,
            chunk_fn or run_chunk,
        )
    finally:
        if client is not None:
            client.close()


def _run_batch(
    scenario_path: str,
    scenario: Any,
    n: int,
    base_seed: int,
    workers: int,
    client: Any,
    out_dir: str,
    resume: bool,
    overrides: dict[str, Any] | None,
    progress: Callable[[int, int], None] | None,
    chunk_fn: ChunkFn,
) -> dict[str, Any]:
    try:
        os.makedirs(out_dir, exist_ok=True)
    except OSError as exc:
        raise ArgumentError(f"--out {out_dir}: cannot create the folder ({exc.strerror})") from None
    runs_path = os.path.join(out_dir, "runs.jsonl")
    meta_path = os.path.join(out_dir, "batch.json")
    summary_path = os.path.join(out_dir, "summary.json")
    meta = {
        "scenario": os.path.abspath(scenario_path),
        "digest": scenario.digest,
        "seed": base_seed,
        "runs": n,
        "settings": {k: str(v) for k, v in sorted((overrides or {}).items())},
    }
    done: list[dict[str, Any]] = []
    if resume:
        if os.path.exists(meta_path):
            try:
                with open(meta_path, encoding="utf-8") as fh:
                    old = json.load(fh)
            except (OSError, ValueError):
                old = None
            if not isinstance(old, dict):
                raise ArgumentError(
                    f"--resume: {meta_path} is damaged; use another --out or drop --resume"
                )
            if old != meta:
                raise ArgumentError(
                    f"--resume: {out_dir} holds a batch of another scenario, seed or size "
                    f"({old.get('scenario')}, seed {old.get('seed')}, {old.get('runs')} runs); "
                    "use another --out or drop --resume"
                )
        done = read_runs(runs_path)
    else:
        if os.path.exists(runs_path):
            os.remove(runs_path)
    # An older summary must not sit beside this batch's runs while it is unfinished (or
    # after a kill): it comes back, whole, when the batch completes.
    if os.path.exists(summary_path):
        os.remove(summary_path)
    _write_atomic(meta_path, json.dumps(meta, indent=2) + "\n")

    seeds = run_seeds(base_seed, n)
    have = {r["run"] for r in done}
    counts = Counter(r["run"] for r in done)
    stray = [
        r["run"]
        for r in done
        if not 0 <= r["run"] < n or r.get("seed") != seeds[r["run"]] or counts[r["run"]] > 1
    ]
    if stray:
        raise ArgumentError(
            f"--resume: {runs_path} holds runs that are not this batch's (run {stray[0]}, "
            "edited or copied in); use another --out or drop --resume"
        )
    todo = [(i, seeds[i]) for i in range(n) if i not in have]
    ov = tuple(sorted((overrides or {}).items()))
    chunks = [todo[i : i + CHUNK] for i in range(0, len(todo), CHUNK)]
    results = list(done)
    fd = os.open(runs_path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    try:
        for batch in _execute(scenario_path, ov, chunks, workers, client, chunk_fn):
            for r in batch:
                os.write(fd, (json.dumps(r, sort_keys=True) + "\n").encode())
            results.extend(batch)
            if progress:
                progress(len(results), n)
    finally:
        os.close(fd)
    results.sort(key=lambda r: r["run"])
    _write_atomic(runs_path, "".join(json.dumps(r, sort_keys=True) + "\n" for r in results))
    summary = summarise(results, seed=base_seed, scenario=scenario_path, results_path=runs_path)
    _write_atomic(summary_path, json.dumps(summary, indent=2, sort_keys=True) + "\n")
    return summary


def _execute(
    path: str,
    overrides: tuple[tuple[str, Any], ...],
    chunks: list[list[tuple[int, int]]],
    workers: int,
    client: Any = None,
    chunk_fn: ChunkFn = run_chunk,
) -> Iterable[list[dict[str, Any]]]:
    """Yield each chunk's results as it completes (on ``client``, a Dask client, if given)."""
    if not chunks:
        return
    if client is not None:
        yield from _execute_dask(path, overrides, chunks, client, chunk_fn)
        return
    if workers == 1:
        for chunk in chunks:
            yield chunk_fn(path, overrides, chunk)
        return
    import multiprocessing as mp
    from concurrent.futures import ProcessPoolExecutor, as_completed
    from concurrent.futures.process import BrokenProcessPool

    ctx = mp.get_context("fork" if sys.platform.startswith("linux") else "spawn")
    pending = {i: c for i, c in enumerate(chunks)}
    for attempt in range(3):
        try:
            with ProcessPoolExecutor(max_workers=workers, mp_context=ctx) as pool:
                futs = {pool.submit(chunk_fn, path, overrides, c): i for i, c in pending.items()}
                for fut in as_completed(futs):
                    i = futs[fut]
                    res = fut.result()
                    del pending[i]
                    yield res
            return
        except BrokenProcessPool:
            # A worker died (killed, out of memory): its chunks are run again.
            if attempt == 2:
                raise ScenarioError(
                    f"{path}: worker processes kept dying; {len(pending)} chunks of runs did not "
                    "finish; run again with --resume"
                ) from None


def _connect(scheduler: str) -> Any:
    """A Dask client for ``--scheduler``; a bad or unreachable address is one clear line."""
    try:
        from distributed import Client
    except ImportError:  # pragma: no cover - dask is a declared dependency
        raise ArgumentError(
            "--scheduler needs dask[distributed]: pip install 'dask[distributed]'"
        ) from None
    try:
        return Client(scheduler, timeout=10)
    except ValueError as exc:  # distributed's own address parsing
        raise ArgumentError(
            f"--scheduler {scheduler}: not a scheduler address ({exc}); use tcp://HOST:PORT"
        ) from None
    except (OSError, TimeoutError) as exc:
        raise ArgumentError(
            f"--scheduler {scheduler}: cannot connect ({exc}); start a dask scheduler there"
        ) from None


def _execute_dask(
    path: str,
    overrides: tuple[tuple[str, Any], ...],
    chunks: list[list[tuple[int, int]]],
    client: Any,
    chunk_fn: ChunkFn,
) -> Iterable[list[dict[str, Any]]]:
    from distributed import as_completed

    path = os.path.abspath(path)
    futs = client.map(
        chunk_fn,
        [path] * len(chunks),
        [overrides] * len(chunks),
        chunks,
        pure=False,
        retries=2,
    )
    for fut in as_completed(futs):
        yield fut.result()
