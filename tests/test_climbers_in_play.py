"""Climbers in play (issue 38): where a climber partway up is for capture and for standing in
the way (docs/rules.md, "Climbers in play").

The ruling quoted by these tests (docs/rules.md): "a climber partway up is off the ground, on
the face of the cell it climbs to. A token whose state has `toward` set, mode `climb` and
`progress` above 0: is reached only at its `toward` cell ... stands in the way at its `toward`
cell, not on its foot"; "A climber that has climbed nothing yet ... or fell back to the foot
... is on the ground at its foot and is caught there." It reads ruling R3 of issue 38: "A cell
that takes longer than a whole turn to cross is crossed over several turns: the token stays
where it is, its state's `progress` records how much of that crossing is done".
"""

from __future__ import annotations

import dataclasses
from fractions import Fraction as F

from conftest import ROOT

from engine.occupancy import reach_cell
from engine.scenario import load_scenario
from engine.sim import Simulation
from engine.sim.ways import occupancy_of, others_read

HEX = str(ROOT / "scenarios" / "hex_hunt.yaml")
FOOT, CLIFF = (24, 3), (25, 3)  # inside the beast's ring of cliffs, and a cliff beside it


def _climbing(sim: Simulation, tid: str, progress: F) -> None:
    """``tid`` at FOOT, partway (``progress``) up the cliff CLIFF, as the loop leaves a
    climber between its turns (R3: it stays where it is; mode climb, toward the cell)."""
    tok = sim.tokens[tid]
    sim.tokens[tid] = tok.moved(cell=FOOT, mode="climb", toward=CLIFF, progress=progress)


def test_the_map_has_the_cliff_beside_its_foot() -> None:
    sc = load_scenario(HEX)
    grid, model = sc.model.grid, sc.model
    assert model.terrain_at(CLIFF).move == "climb" and model.terrain_at(FOOT).move == "walk"
    assert grid.steps(FOOT, CLIFF) == 1 and sc.capture == 0


def test_a_climber_partway_up_is_caught_only_at_the_cell_it_climbs_to() -> None:
    """Capture 0 (hex_hunt): a pursuer on the climber's foot does not catch it once it has
    climbed some of the cliff; one on the cliff cell does, and the capture is there."""
    sc = load_scenario(HEX)
    sim = Simulation(sc, 1)
    _climbing(sim, "beast", F(7, 60))
    assert reach_cell(sim.tokens["beast"]) == CLIFF
    sim.place_token("hero1", FOOT)
    assert sim.outcome is None, "a pursuer at the foot does not reach a climber partway up"
    sim.place_token("hero1", CLIFF)
    assert (sim.outcome, sim.result_cell, sim.result_by) == ("capture", CLIFF, "hero1")


def test_a_climber_with_no_height_yet_is_caught_at_its_foot() -> None:
    """Progress 0 (its first rolls failed, or it fell back): on the ground at its foot."""
    sc = load_scenario(HEX)
    sim = Simulation(sc, 1)
    _climbing(sim, "beast", F(0))
    assert reach_cell(sim.tokens["beast"]) == FOOT
    sim.place_token("hero1", FOOT)
    assert (sim.outcome, sim.result_cell, sim.result_by) == ("capture", FOOT, "hero1")


def test_capture_distance_is_counted_to_the_cell_it_climbs_to() -> None:
    """Capture 1: a pursuer one step from the cliff cell (two from the foot) catches the
    climber partway up; one a step from the foot (two from the cliff) does not."""
    sc = dataclasses.replace(load_scenario(HEX), capture=1)
    grid = sc.model.grid
    beyond, behind = (26, 3), (23, 3)
    assert (grid.steps(beyond, CLIFF), grid.steps(beyond, FOOT)) == (1, 2)
    assert (grid.steps(behind, FOOT), grid.steps(behind, CLIFF)) == (1, 2)
    sim = Simulation(sc, 1)
    _climbing(sim, "beast", F(1, 5))
    sim.place_token("hero1", behind)
    assert sim.outcome is None
    sim.place_token("hero1", beyond)
    assert (sim.outcome, sim.result_cell) == ("capture", CLIFF)
    # A climbing pursuer catches from the cell it climbs to (the quarry standing beside it).
    sim = Simulation(sc, 1)
    sim.tokens["beast"] = sim.tokens["beast"].moved(cell=beyond, mode="walk")
    _climbing(sim, "hero2", F(1, 5))
    sim._check_goals("hero2")
    assert (sim.outcome, sim.result_by) == ("capture", "hero2")


def test_a_climber_partway_up_stands_in_the_way_where_it_climbs_to() -> None:
    """Allies may pass but not stop on one another (tokens_block enemies): hero1 partway up
    the cliff leaves its foot free to hero2 and takes the cliff cell instead; with no height
    yet it takes its foot."""
    sim = Simulation(load_scenario(HEX), 1)
    _climbing(sim, "hero1", F(1, 5))
    occ = occupancy_of(sim, "hero2")
    assert CLIFF in occ.no_stop and FOOT not in occ.no_stop | occ.blocked
    _climbing(sim, "hero1", F(0))
    occ = occupancy_of(sim, "hero2")
    assert FOOT in occ.no_stop and CLIFF not in occ.no_stop | occ.blocked


def test_the_kept_ways_know_where_a_climber_is_reached() -> None:
    """What the loop keeps a way by (others_read) tells a climber partway up from one on the
    ground at the same foot: the tokens in the way read where it is reached."""
    sim = Simulation(load_scenario(HEX), 1)
    _climbing(sim, "hero1", F(0))
    low, _ = others_read(sim, "hero2", ())  # type: ignore[misc]
    _climbing(sim, "hero1", F(1, 5))
    up, _ = others_read(sim, "hero2", ())  # type: ignore[misc]
    assert low != up
