"""Issue 39: "Capture rate rises with any pursuer's speed and falls with the quarry's on
every shipped chase, within the 95% intervals". Every shipped scenario with pursuers and
quarries is a chase; each token's speed stat is varied over three values and a small batch
played at each (the same run seeds at every point), and no step may move the capture rate
the wrong way by more than the two points' 95% (Wilson) intervals allow. The full sweeps at
200 runs a point are `tacgrid sweep` runs (the figures are in the issue's report)."""

from __future__ import annotations

from pathlib import Path

import pytest

from engine.batch import run_seeds, wilson
from engine.scenario import load_scenario
from engine.sim.cache import FieldCache
from engine.sim.loop import Simulation

ROOT = Path(__file__).resolve().parent.parent
RUNS = 64

#: Per shipped chase: (the token's speed stat, three values, +1 for a pursuer, -1 for a
#: quarry): each system's speed (D6 Move, Mythmaster Adaptability for Base Move,
#: Speedpoints running and airspeed).
SPEEDS = {
    "chase": [
        ("pursuer1.stats.move", (8, 12, 14), 1),
        ("pursuer2.stats.move", (8, 11, 14), 1),
        ("quarry.stats.move", (8, 10, 12), -1),
    ],
    "hex_hunt": [
        ("hero1.stats.adaptability", (10, 15, 18), 1),
        ("hero2.stats.adaptability", (10, 14, 18), 1),
        ("hero3.stats.adaptability", (10, 13, 18), 1),
        ("beast.stats.adaptability", (12, 16, 20), -1),
    ],
    "falcons": [
        ("falcon.stats.airspeed", (3, 4, 6), 1),
        ("runner.stats.running", (12, 16, 20), -1),
    ],
    "flier": [
        ("hawk.stats.airspeed", (3, 5, 8), 1),
        ("runner.stats.running", (4, 6, 10), -1),
    ],
    "griffon": [
        ("griffon.stats.adaptability", (7, 9, 13), 1),
        ("runner1.stats.adaptability", (10, 14, 18), -1),
    ],
    "stoop": [
        ("falcon.stats.airspeed", (3, 4, 6), 1),
        ("runner.stats.running", (4, 6, 10), -1),
    ],
}


def _chases() -> list[str]:
    """The shipped scenarios with a pursuer and a quarry."""
    out = []
    for path in sorted((ROOT / "scenarios").glob("*.yaml")):
        sides = {t.side for t in load_scenario(path).tokens}
        if {"pursuer", "quarry"} <= sides:
            out.append(path.stem)
    return out


def test_every_shipped_chase_is_swept() -> None:
    assert sorted(SPEEDS) == _chases()


def _captures(name: str, key: str, value: int) -> int:
    sc = load_scenario(ROOT / "scenarios" / f"{name}.yaml", overrides={key: value})
    fields = FieldCache(sc)
    caught = 0
    for run, seed in enumerate(run_seeds(sc.seed, RUNS)):
        caught += Simulation(sc, seed, fields=fields, run=run, record=False).run().outcome == (
            "capture"
        )
    return caught


@pytest.mark.parametrize(
    ("name", "key", "values", "sign"),
    [(n, k, v, s) for n, rows in SPEEDS.items() for k, v, s in rows],
    ids=lambda x: x if isinstance(x, str) else None,
)
def test_capture_rate_follows_speed(name: str, key: str, values: tuple[int, ...], sign: int):
    rates = [(v, _captures(name, key, v)) for v in values]
    for (a, ka), (b, kb) in zip(rates, rates[1:], strict=False):
        lo_a, hi_a = wilson(ka, RUNS)
        lo_b, hi_b = wilson(kb, RUNS)
        if sign > 0:  # a faster pursuer: no fewer captures beyond the intervals
            assert hi_b >= lo_a, f"{name} {key}: {a} -> {ka}/{RUNS}, {b} -> {kb}/{RUNS}"
        else:  # a faster quarry: no more captures beyond the intervals
            assert lo_b <= hi_a, f"{name} {key}: {a} -> {ka}/{RUNS}, {b} -> {kb}/{RUNS}"
