"""The ``run`` reports: a batch's summary as text, its live progress line, and one run
played with its own seed."""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from typing import Any, TextIO

from engine.errors import printable

#: ``--run-seed`` looks for its run among this many runs of the scenario's batch at most
#: (beyond that, only a runs.jsonl in ``--out`` can say which run it was).
FIND_LIMIT = 100_000


def find_run_index(
    run_seed: int, batch_seed: int, runs: int, runs_path: str | None = None
) -> int | None:
    """Which run of the batch (seed ``batch_seed``, ``runs`` runs) has ``run_seed``: looked
    up in ``runs_path`` if it is there, else among the batch's first runs; None if not."""
    from engine.batch import iter_runs, run_seeds

    if runs_path and os.path.isfile(runs_path):
        try:
            for record in iter_runs(runs_path):
                if record.get("seed") == run_seed:
                    return int(record["run"])
        except (ValueError, OSError):
            pass  # a damaged file says nothing: fall back on the seeds themselves
    seeds = run_seeds(batch_seed, min(runs, FIND_LIMIT))
    return seeds.index(run_seed) if run_seed in seeds else None


def run_one_report(
    path: str,
    overrides: dict[str, str],
    run_seed: int,
    log: str | None,
    *,
    batch_seed: int | None = None,
    batch_runs: int | None = None,
    out_dir: str | None = None,
) -> dict[str, Any]:
    """One run with its own run seed (as listed in runs.jsonl): its result, its final token
    states, and with ``log`` its event log written there (``run --run-seed N --log FILE``).

    ``run`` (in the result and the log's start event) is the run's index in the batch
    of ``batch_seed`` and ``batch_runs`` (the scenario's by default, or the batch in
    ``out_dir``), or null when the seed is none of that batch's.
    """
    from engine.scenario import load_scenario
    from engine.sim import Simulation

    scenario = load_scenario(path, overrides=overrides)
    seed = scenario.seed if batch_seed is None else batch_seed
    runs = scenario.runs if batch_runs is None else batch_runs
    runs_path = None
    meta = _batch_of(out_dir) if out_dir else None
    if out_dir and meta and meta["scenario"] == os.path.abspath(path):
        if batch_seed is None or meta["seed"] == batch_seed:  # the batch in --out
            seed, runs = meta["seed"], meta["runs"] if batch_runs is None else batch_runs
            runs_path = os.path.join(out_dir, "runs.jsonl")
    index = find_run_index(run_seed, seed, runs, runs_path)
    sim = Simulation(scenario, run_seed, run=index if index is not None else 0)
    if index is None and sim.events and sim.events[0].get("type") == "start":
        sim.events[0]["run"] = None
    result: dict[str, Any] = sim.run().to_dict()
    result["run"] = index
    result["batch_seed"] = seed
    if log:
        sim.write_log(log, "--log")  # whole or nothing; refuses devices and links
        result["log"] = log
    result["final"] = sim.final_states()
    return result


def _batch_of(out_dir: str) -> dict[str, Any] | None:
    """The batch.json of the batch in ``out_dir`` (scenario, seed, runs); None if none."""
    from engine.errors import ArgumentError
    from engine.sources import read_json_file

    try:  # a regular file within the cap, finite JSON
        meta = read_json_file(os.path.join(out_dir, "batch.json"), "batch", ArgumentError)
    except ArgumentError:
        return None
    ok = isinstance(meta, dict) and isinstance(meta.get("seed"), int)
    return meta if ok and isinstance(meta.get("runs"), int) else None


def _clock(seconds: float) -> str:
    s = int(seconds + 0.5)
    return f"{s // 3600}:{s // 60 % 60:02d}:{s % 60:02d}"


class ProgressLine:
    """The live ``run`` progress line on stderr: runs done, runs a second, the time left,
    the outcomes so far. On a terminal it rewrites itself; elsewhere (``--progress`` into
    a file or pipe) it prints a line at most every ``every`` seconds."""

    def __init__(
        self, stream: TextIO, tty: bool, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.stream, self.tty, self.clock = stream, tty, clock
        self.every = 0.2 if tty else 1.0
        self.start: float | None = None
        self.start_done = 0
        self.last = -1e9
        self.shown = False

    def text(self, done: int, total: int, counts: dict[str, int], now: float) -> str:
        elapsed = now - (self.start if self.start is not None else now)
        rate = (done - self.start_done) / elapsed if elapsed > 0 else 0.0
        eta = _clock((total - done) / rate) if rate > 0 else "?"
        outcomes = "  ".join(f"{k} {v}" for k, v in sorted(counts.items()))
        return f"{done}/{total} runs  {rate:.1f} runs/s  ETA {eta}" + (
            f"  {outcomes}" if outcomes else ""
        )

    def __call__(self, done: int, total: int, counts: dict[str, int]) -> None:
        now = self.clock()
        if self.start is None:
            self.start, self.start_done = now, done
        if now - self.last < self.every and done < total:
            return
        self.last = now
        line = printable(self.text(done, total, counts, now))  # outcome names from the file
        self.stream.write(f"\r{line}\x1b[K" if self.tty else f"{line}\n")
        self.stream.flush()
        self.shown = True

    def close(self) -> None:
        """Clear the line on a terminal (the summary follows on stdout)."""
        if self.tty and self.shown:
            self.stream.write("\r\x1b[K")
            self.stream.flush()


def format_summary(summary: dict[str, Any]) -> str:
    """The ``run`` text: outcomes with their rates and 95% intervals, turns, the files."""
    lines = [f"{summary['scenario']}: {summary['runs']} runs, seed {summary['seed']}"]
    for name, count in summary["outcomes"].items():
        lo, hi = summary["ci95"][name]
        lines.append(
            f"  {name:<8} {count:>6}  {100 * summary['rates'][name]:5.1f}%  (95% CI {100 * lo:.1f}-{100 * hi:.1f}%)"
        )
    t = summary["turns"]
    lines.append(f"  turns    mean {t['mean']:.2f}, median {t['p50']:g}, 90% {t['p90']:g}")
    lines.append(f"  results  {summary['results']}")
    for plot in summary.get("plots", []):
        lines.append(f"  plot     {plot}")
    return "\n".join(lines)


def format_run(result: dict[str, Any], run_seed: int) -> str:
    """The text of ``run --run-seed N``: how the run ended, and its event log if written."""
    where = (
        f" (run {result['run']} of the batch with seed {result['batch_seed']})"
        if result.get("run") is not None
        else ""
    )
    lines = [
        f"run seed {run_seed}{where}: {result['outcome']} after {result['turns']} turns"
        + (
            f" at {result['cell'][0]},{result['cell'][1]} by {result['by']}"
            if result["cell"]
            else ""
        )
    ]
    if result.get("log"):
        lines.append(f"  event log: {result['log']} ({result['events']} events)")
    return "\n".join(lines)
