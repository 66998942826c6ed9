"""The ``run`` reports: a batch's summary as text, and one run played with its own seed."""

from __future__ import annotations

from typing import Any

from engine.errors import ArgumentError


def run_one_report(
    path: str, overrides: dict[str, str], run_seed: int, log: str | None
) -> dict[str, Any]:
    """One run with its own run seed (as listed in runs.jsonl): its result, its final token
    states, and with ``log`` its event log written there (``run --run-seed N --log FILE``)."""
    from engine.scenario import load_scenario
    from engine.sim import Simulation

    scenario = load_scenario(path, overrides=overrides)
    sim = Simulation(scenario, run_seed)
    result: dict[str, Any] = sim.run().to_dict()
    if log:
        try:
            sim.write_log(log)
        except OSError as exc:
            raise ArgumentError(f"--log {log}: cannot write ({exc.strerror})") from None
        result["log"] = log
    result["final"] = sim.final_states()
    return result


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
    lines = [
        f"run seed {run_seed}: {result['outcome']} after {result['turns']} turns"
        + (
            f" at {result['cell'][0]},{result['cell'][1]} by {result['by']}"
            if result["cell"]
            else ""
        )
    ]
    if result.get("log"):
        lines.append(f"  event log: {result['log']} ({result['events']} events)")
    return "\n".join(lines)
