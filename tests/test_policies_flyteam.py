"""Issue 39, fliers that hunt as a team: "pursuers cooperate by shrinking the quarry's safe
region ... no hunter idles while it could shrink the region ... The flying policies
likewise". A flying pursuer plans two turns ahead (the cells the quarry gets to in a turn,
where it may be when the flier moves next); with partners that stand where they are until
the quarry moves (engine.policies.builtin.team_cover), the cells they end a move on are
theirs, and it ends where its own next move reaches the rest."""

from __future__ import annotations

import random
from pathlib import Path

import numpy as np

from engine.batch import run_seeds, wilson
from engine.flight.model import FlightState
from engine.grid import Grid
from engine.mapmodel import MapModel, Terrain
from engine.policies import Aim
from engine.policies.builtin import Pursuer, team_cover
from engine.scenario import load_scenario
from engine.sim import FieldCache, Simulation
from engine.sim.flight import _best_move
from engine.sim.flymoves import _free_ends, _free_turn_moves, _moves, caught_next, reach_turns
from engine.sim.view import SimView
from engine.systems import create

ROOT = Path(__file__).resolve().parent.parent
FALCONS = ROOT / "scenarios" / "falcons.yaml"


def test_free_ends_are_the_cells_the_moves_end_on() -> None:
    """A free-turning (Speedpoints) flier's end cells, worked out without its moves and
    kept by cell, airspeed and altitude (not heading), are the cells its moves end on, at
    every capture altitude, from random states on random maps with rock in the way."""
    rng = random.Random(43)
    system = create("speedpoints")
    checked = 0
    for _ in range(4):
        n = 12
        grid = Grid("hexagonal", n, n, 32, 32, "y", "odd", 16)
        ids = np.zeros((n, n), dtype=np.int32)
        for _ in range(16):
            ids[rng.randrange(n), rng.randrange(n)] = 1
        terrains = (Terrain(), Terrain("rock", move="blocked", height=6.0))
        model = MapModel(grid=grid, terrain_ids=ids, terrains=terrains)
        rules = system.flight(system.token(f"airspeed={rng.randint(2, 5)},running=2"), model)
        assert rules is not None
        open_cells = [c for c in grid.cells() if model.terrain_at(c).move != "blocked"]
        for _ in range(10):
            cell = rng.choice(open_cells)
            state = rules.normal(
                rules.start_state(cell, rng.randrange(6) * 60, 4, altitude=rng.randint(0, 14))
            )
            for low in (None, 0, 6):
                want = {
                    m.cell
                    for m in _free_turn_moves(rules, state, None, every_stoop=True)
                    if low is None or m.altitude <= low
                }
                assert _free_ends(rules, state, low) == want, (state, low)
                checked += len(want)
    assert checked > 1000


def test_team_cover_is_the_partners_that_stand_until_the_quarry_moves() -> None:
    """In turn order runner, falcon, falcon2: falcon2 moves again before the runner does,
    so the falcon hunts alone; falcon2 has the falcon's end cells as the team's. In order
    falcon, runner, falcon2 it is the other way round."""
    sim = Simulation(load_scenario(FALCONS), 1, record=True)
    ends = {}
    for tid in ("falcon", "falcon2"):
        tok = sim.tokens[tid]
        rules = sim.flight_rules(tok)
        assert rules is not None and tok.state.flight is not None
        ends[tid] = reach_turns(rules, tok.state.flight, 0) <= 1

    def cover(tid: str) -> np.ndarray | None:
        return team_cover(SimView(sim, tid, sim.tokens[tid]), tid, "runner")

    assert cover("falcon") is None
    got = cover("falcon2")
    assert got is not None and np.array_equal(got, ends["falcon"])
    sim.set_order(["falcon", "runner", "falcon2"])
    got = cover("falcon")
    assert got is not None and np.array_equal(got, ends["falcon2"])
    assert cover("falcon2") is None  # the falcon moves again before the runner


def test_the_pilot_covers_what_its_partners_leave() -> None:
    """Of every move it weighs, the pilot takes one that leaves the fewest of the quarry's
    one-turn cells to neither it nor its partners (none, where it can: cornered), the
    quarry's own cell covered before that; without the partners' cells it chooses
    otherwise in some of these situations."""
    sc = load_scenario(ROOT / "scenarios" / "griffon.yaml")
    system = sc.system
    rules = system.flight(system.token("adaptability=9,physical=20,flyer=true"), sc.model)
    assert rules is not None
    grid = sc.model.grid
    rng = random.Random(39)
    differs = checked = 0
    for start in ((14, 12), (20, 14)):
        state = rules.start_state(start, 240, 8)
        moves = [m for m in _moves(rules, state, exact=False, target=None) if not m.risky]
        for m in moves[::2]:
            after = FlightState(m.cell, m.heading, m.speed, m.altitude, False, m.face)
            reached = np.flatnonzero(caught_next(rules, after, 0, 0)).tolist()
            here = rng.choice(reached)
            if reach_turns(rules, state, 0)[here] <= 1:
                continue  # caught this turn: no plan
            q = grid.cell_of_index(here)
            near = [grid.index(c) for c in grid.cells_within(q, 3) if grid.in_bounds(c)]
            picked = rng.sample(near, min(8, len(near)))
            cells = np.array(sorted({here, *picked}), dtype=np.int64)
            corner = np.full(grid.width * grid.height, np.inf)
            corner[cells] = 1.0
            corner[here] = 0.0
            team = np.zeros(len(corner), dtype=bool)
            team[rng.sample(cells.tolist(), len(cells) // 2)] = True
            weighed = [x for x in _moves(rules, state, exact=True, target=q) if not x.risky]
            keys = {x.choice: _left(rules, x, team, cells, here) for x in weighed}
            got = keys[_best_move(rules, state, Aim(q, q, 0, corner=corner, team=team), grid, 0)]
            assert got == min(keys.values()), (q, got, min(keys.values()))
            alone = keys[_best_move(rules, state, Aim(q, q, 0, corner=corner), grid, 0)]
            differs += alone != got
            checked += 1
    assert checked > 15 and differs > 0, (checked, differs)


def _left(
    rules: object, m: object, team: np.ndarray, cells: np.ndarray, here: int
) -> tuple[bool, bool, int]:
    """Whether move ``m`` leaves any of ``cells`` to neither its next turn's ends nor the
    ``team``'s, whether it leaves cell index ``here`` so, and how many it leaves."""
    nxt = FlightState(m.cell, m.heading, m.speed, m.altitude, False, m.face)  # type: ignore[attr-defined]
    held = caught_next(rules, nxt, 0, 0) | team  # type: ignore[arg-type]
    left = int(np.count_nonzero(~held[cells]))
    return (left > 0, not bool(held[here]), left)


class Alone(Pursuer):
    """The flying pursuer as it hunted before team play: two turns ahead on its own, the
    cells its partners end a move on left out of its plan."""

    name = "alone_flier"

    def aim(self, view, spec, token, state):  # type: ignore[no-untyped-def]
        got = super().aim(view, spec, token, state)
        if got is not None:
            got.team = None
        return got


def _captures(
    path: Path, runs: int, overrides: dict[str, object] | None = None
) -> tuple[int, set[int]]:
    """Captures in ``runs`` runs of the scenario, and the rounds its runs ended in."""
    sc = load_scenario(path, overrides=overrides)
    fields = FieldCache(sc)
    caught = 0
    turns: set[int] = set()
    for run, seed in enumerate(run_seeds(sc.seed, runs)):
        got = Simulation(sc, seed, fields=fields, run=run, record=False).run()
        caught += got.outcome == "capture"
        turns.add(got.turns)
    return caught, turns


def test_two_falcons_catch_what_one_does_not(tmp_path: Path) -> None:
    """scenarios/falcons.yaml (a fast runner, two falcons): the team catches in more runs
    than one falcon alone and than two falcons that each plan alone, beyond the 95%
    intervals (60 runs, the same seeds); the runs differ (the runner's climbs)."""
    runs = 60
    team, turns = _captures(FALCONS, runs)
    text = FALCONS.read_text(encoding="utf-8").replace("../maps/", f"{ROOT / 'maps'}/")
    one = tmp_path / "one.yaml"
    one.write_text(text[: text.index("  - id: falcon2")], encoding="utf-8")
    single, _ = _captures(one, runs)
    pair = {"falcon.policy": "alone_flier", "falcon2.policy": "alone_flier"}
    alone, _ = _captures(FALCONS, runs // 3, pair)
    lo, _ = wilson(team, runs)
    assert wilson(single, runs)[1] < lo, (team, single)
    assert wilson(alone, runs // 3)[1] < lo, (team, alone)
    assert len(turns) > 1, turns
