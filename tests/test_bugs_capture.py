"""A ground quarry weighs a flying pursuer by the cells within the scenario's capture
distance of where it can end a move (the bugs lane): docs/scenarios.md, `goals`:
"`capture` (a pursuer within this many cells of its quarry catches it, counted between
footprints; 0 = overlapping)"; the turn loop catches where a pursuer ends within
``capture`` steps (:meth:`Simulation._check_goals`), so a flier ending its move next to
the quarry catches it as surely as one ending on its cell."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import numpy as np
import tmxtext

from engine.batch import run_seeds
from engine.grid import Grid
from engine.scenario import load_scenario
from engine.sim import FieldCache, Simulation
from engine.sim.flymoves import reach_turns
from engine.sim.view import least_turns, threat_turns, within_steps

ROOT = Path(__file__).resolve().parent.parent
FALCON = "{running: 2, airspeed: 5, acrobatics: 6, agility: 3, toughness: 4, stamina: 12}"

FIELD = """map: m.tmx
system: speedpoints
seed: 3
turns: 12
goals: {{capture: {capture}, capture_altitude: 0}}
tokens:
  - {{id: runner, side: quarry, policy: quarry, cell: [20, 8], stats: {{running: 3}}}}
  - {{id: dog, side: pursuer, policy: pursuer, target: runner, cell: [2, 2], stats: {{running: 3}}}}
  - {{id: falcon, side: pursuer, policy: pursuer, target: runner, cell: [22, 14],
      stats: {falcon}, flight: {{heading: 90, speed: 5, altitude: 0}}}}
"""


def _field(tmp_path: Path, capture: int) -> Simulation:
    rows = ["." * 30 for _ in range(16)]
    tmxtext.write(tmp_path / "m.tmx", rows, objects=tmxtext.exit_objects([(29, 8)]))
    text = FIELD.format(capture=capture, falcon=FALCON)
    (tmp_path / "s.yaml").write_text(text, encoding="utf-8")
    return Simulation(load_scenario(tmp_path / "s.yaml"), 1, record=True)


def _ball_least(grid: Grid, turns: np.ndarray, k: int) -> np.ndarray:
    """The plain way: for every cell, the least of ``turns`` over the cells at most ``k``
    steps from it (the loop's capture test, ``grid.steps`` between one-cell tokens)."""
    out = np.empty_like(turns)
    for i in range(len(turns)):
        near = grid.cells_within(grid.cell_of_index(i), k)
        out[i] = min(float(turns[grid.index(c)]) for c in near)
    return out


def test_a_fliers_threat_reaches_the_capture_distance_past_its_end_cells(
    tmp_path: Path,
) -> None:
    """With ``capture: 1`` every cell next to one where the falcon ends a move this turn is
    a cell it catches on this turn (threat 1), as the loop counts a capture; with
    ``capture: 0`` the threat is the falcon's end cells alone (unchanged)."""
    for capture in (0, 1, 2):
        sim = _field(tmp_path, capture)
        falcon = sim.tokens["falcon"]
        rules = sim.flight_rules(falcon)
        assert rules is not None and falcon.state.flight is not None
        reach = reach_turns(rules, falcon.state.flight, sim.scenario.capture_altitude)
        grid = sim.scenario.model.grid
        got = threat_turns(sim)
        want = np.minimum(least_turns(sim, ("dog",)), _ball_least(grid, reach, capture))
        assert np.array_equal(got, want), capture
        ends = np.flatnonzero(reach <= 1)
        near = {
            grid.index(c) for e in ends for c in grid.cells_within(grid.cell_of_index(e), capture)
        }
        assert all(got[i] <= 1 for i in near)
        if capture:
            assert len(near) > len(ends)  # cells the old threat left at 2 or more
            assert np.all(threat_turns(sim) == got)


def test_within_steps_is_the_least_over_every_cell_within_k_steps() -> None:
    """The seam :func:`within_steps` (a table of each cell's neighbourhood, kept per grid
    and distance) equals the least over ``grid.cells_within`` asked cell by cell, on
    every grid kind, parities and borders included."""
    rng = np.random.default_rng(5)
    grids = [
        Grid("orthogonal", 7, 5, 32, 32),
        Grid("orthogonal", 6, 5, 32, 32, diagonals="none"),
        Grid("hexagonal", 7, 6, 32, 36, hex_side=18),
        Grid("hexagonal", 6, 7, 36, 32, stagger_axis="x", stagger_index="even", hex_side=18),
        Grid("staggered", 6, 7, 64, 32),
    ]
    for grid in grids:
        for k in (0, 1, 2, 3):
            turns = rng.integers(0, 9, grid.width * grid.height).astype(float)
            turns[rng.random(len(turns)) < 0.2] = np.inf
            got = within_steps(grid, turns, k)
            assert np.array_equal(got, _ball_least(grid, turns, k)), (grid, k)
            assert not got.flags.writeable


def test_a_runner_keeps_a_capture_distance_off_the_griffon() -> None:
    """scenarios/griffon.yaml with ``capture: 1``: a runner that weighs the cells next to
    the griffon's end cells keeps off them, so the griffon catches only the swimmer whose
    swim leaves it in the lake's deep water at its start cell ([5, 5], in turn 2), as with
    ``capture: 0`` (griffon.yaml: "a sprinting runner on open ground is never caught").
    Before, the griffon caught the runners elsewhere in 69 of 200 runs (turns 2 and 7)."""
    sc = load_scenario(ROOT / "scenarios" / "griffon.yaml", overrides={"goals.capture": 1})
    assert sc.capture == 1
    fields = FieldCache(sc)
    got: Counter[tuple[str, int, object]] = Counter()
    for run, seed in enumerate(run_seeds(sc.seed, 40)):
        sim = Simulation(sc, seed, fields=fields, run=run, record=False)
        sim.run()
        got[(str(sim.outcome), sim.turn, sim.result_cell)] += 1
    swims = got[("capture", 2, (5, 5))]
    assert swims and got[("timeout", sc.turns, None)], got
    assert swims + got[("timeout", sc.turns, None)] == 40, got
