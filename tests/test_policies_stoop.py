"""A flying pursuer's stoop weighs its fall odds against waiting (engine.sim.flight._best_move):
a dive faster than is safe is flown only where its falling roll's chance is no worse than the
catch a safe move now lines up for next turn."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from conftest import ROOT

from engine.scenario import load_scenario
from engine.sim import Simulation

# A Speedpoints falcon 6 m over the open ground east of the ruin, the runner two spaces
# off: a stoop of 6 m now is a dangerous fall (the falling roll 1d20 + ability >= 20);
# descending 4 m (its safe rate) now leaves a safe 2 m drop onto the runner next turn.
SCENARIO = """\
map: {map}
system: speedpoints
seed: 3
turns: 6
goals: {{capture: 0, capture_altitude: 0}}
tokens:
  - id: falcon
    side: pursuer
    policy: pursuer
    target: runner
    cell: [24, 20]
    stats: {{running: 2, airspeed: 4, acrobatics: {ability}, agility: {ability},
             toughness: 4, stamina: 12}}
    flight: {{heading: 240, speed: 4, altitude: 6}}
  - id: runner
    side: quarry
    policy: quarry
    cell: [22, 20]
    stats: {{running: 1}}
"""


def _flights(tmp_path: Path, ability: int) -> tuple[str, list[list[Any]]]:
    path = tmp_path / f"wait{ability}.yaml"
    path.write_text(
        SCENARIO.format(map=ROOT / "maps" / "hex_pointy.tmx", ability=ability), encoding="utf-8"
    )
    sim = Simulation(load_scenario(path), 1, record=True)
    result = sim.run()
    flights = [
        [ev.get("event") for ev in e.get("events", [])] for e in sim.events if e["type"] == "flight"
    ]
    return result.outcome, flights


def test_a_clumsy_falcon_waits_for_a_safe_catch(tmp_path: Path) -> None:
    """Ability 0: the stoop flies 1 time in 20; a safe descent now catches for sure next
    turn, so it waits: no fall in any turn, and it catches."""
    outcome, flights = _flights(tmp_path, 0)
    assert outcome == "capture"
    assert len(flights) == 2
    assert not any("fall" in f for f in flights)


def test_a_sure_stooper_stoops_at_once(tmp_path: Path) -> None:
    """Ability 10 + 10: the falling roll always succeeds, as sure as waiting and a turn
    sooner: it stoops in its first turn and catches there."""
    outcome, flights = _flights(tmp_path, 10)
    assert outcome == "capture"
    assert len(flights) == 1 and "fall" in flights[0]
