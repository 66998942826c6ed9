"""Issue 39, the flying policies: "the quarry keeps the largest safe region or the surest
exit. The flying policies likewise", and pursuers cooperate. A flier's reach is the cells
it can end a move on (engine.sim.flymoves.reach_turns, over the planner's bound,
engine.sim.flyreach.flight_turns); a flying pursuer that does not reach the quarry first
shrinks its safe region; a flying quarry takes the exit of widest margin, else ends where
it holds the most cells."""

from __future__ import annotations

import random
from collections import Counter
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest
import tmxtext

from engine.batch import run_seeds, wilson
from engine.grid import Grid
from engine.mapmodel import MapModel, Terrain
from engine.policies import Aim, get
from engine.policies.builtin import Pursuer, Quarry, _chaser, surest_exit
from engine.scenario import load_scenario
from engine.sim import FieldCache, Simulation
from engine.sim.flymoves import _free_turn_moves, _momentum_moves, reach_turns
from engine.sim.flyreach import flight_turns, flight_turns_plain
from engine.sim.view import SimView
from engine.systems import create

FALCON = "{running: 2, airspeed: %d, acrobatics: 6, agility: 3, toughness: 4, stamina: 12}"


class Lone(Pursuer):
    """The flying pursuer with no team play: every flier chases as the one that goes for
    the quarry does (its predicted cell, two turns ahead), whoever else hunts it (the
    ground play is :class:`Pursuer`'s)."""

    name = "lone_flier"

    def aim(self, view, spec, token, state):  # type: ignore[no-untyped-def]
        quarry = spec.target or view.nearest(state.cell, view.quarries)
        qcell = view.reach(quarry)
        catch = qcell if view.low_enough(quarry) else None
        corner = view.times_from(quarry) if catch is not None else None
        return Aim(view.predict(quarry), catch, view.capture, corner=corner)


class Far(Quarry):
    """The flying quarry as it was when no exit is safe: the end of this turn's flight
    farthest from the pursuers (no region weighed)."""

    name = "far_flier"

    def aim(self, view, spec, token, state):  # type: ignore[no-untyped-def]
        got = super().aim(view, spec, token, state)
        if got is None or got.goal is not None:
            return got
        return Aim(None, threats=got.threats)


def _model(rng: random.Random, n: int = 14) -> MapModel:
    grid = Grid("hexagonal", n, n, 32, 32, "y", "odd", 16)
    ids = np.zeros((n, n), dtype=np.int32)
    for _ in range(14):
        ids[rng.randrange(n), rng.randrange(n)] = 1
    terrains = (Terrain(), Terrain("rock", move="blocked", height=6.0))
    return MapModel(grid=grid, terrain_ids=ids, terrains=terrains)


def _fliers(rng: random.Random, model: MapModel):  # type: ignore[no-untyped-def]
    """Random flight states of a Mythmaster and a Speedpoints flier on ``model``."""
    out = []
    for name, stats in (
        ("mythmaster", "adaptability=7,flyer=true"),
        ("speedpoints", "airspeed=4,running=2"),
    ):
        system = create(name)
        rules = system.flight(system.token(stats), model)
        assert rules is not None
        cells = [c for c in model.grid.cells() if rules.passable(c)]
        for _ in range(12):
            cell = rng.choice(cells)
            heading = rng.randrange(12) * 30
            if name == "mythmaster":
                state = rules.start_state(cell, heading, rng.randrange(0, 13, 3))
            else:
                alt = rng.randint(0, 10)
                if model.terrain_at(cell).move == "blocked":
                    alt = rng.randint(7, 12)  # over the rock
                state = rules.start_state(cell, heading, 4, altitude=alt)
            out.append((rules, state))
    return out


def test_flight_reach_is_the_bound_asked_of_every_cell() -> None:
    """One bound per distance (from one cell at that distance, over the flier's own
    field) equals the planner's bound asked of every cell a flight enters."""
    rng = random.Random(39)
    checked = 0
    for _ in range(3):
        for rules, state in _fliers(rng, _model(rng)):
            got = flight_turns(rules, state)
            assert np.array_equal(got, flight_turns_plain(rules, state)), state
            checked += int(np.isfinite(got).sum())
    assert checked > 1000


def test_end_reach_is_where_the_pilot_can_end_a_move() -> None:
    """``reach_turns`` is 1 exactly on the cells some move the pilot weighs when chasing a
    quarry there ends on (the turn loop's own catching moves: every inner turn point for
    a Mythmaster flier, every stoop for a Speedpoints one), at least 2 elsewhere, and
    never below the planner's bound."""
    rng = random.Random(7)
    ones = 0
    for rules, state in _fliers(rng, _model(rng, 12)):
        s = rules.normal(state)
        got = reach_turns(rules, s)
        grid = rules.model.grid
        for i in range(grid.width * grid.height):
            cell = grid.cell_of_index(i)
            if cell == s.cell:
                assert got[i] == 0
                continue
            if rules.system_name == "mythmaster":
                moves = _momentum_moves(rules, s, catch=cell, reach=0)
            else:
                moves = _free_turn_moves(rules, s, cell)
            ends = any(m.cell == cell for m in moves)
            assert (got[i] == 1) == ends, (s, cell)
            assert got[i] >= flight_turns(rules, s)[i]
            ones += ends
    assert ones > 100


def _scenario(tmp_path: Path, text: str, name: str = "s.yaml") -> Path:
    rows = ["." * 30 for _ in range(16)]
    tmxtext.write(tmp_path / "m.tmx", rows, objects=tmxtext.exit_objects([(29, 8)]))
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


TWO_FALCONS = f"""map: m.tmx
system: speedpoints
seed: 3
turns: 12
goals: {{capture: 0, capture_altitude: 0}}
tokens:
  - {{id: runner, side: quarry, policy: quarry, cell: [8, 8], stats: {{running: 3}}}}
  - {{id: f1, side: pursuer, policy: POLICY, target: runner, cell: [2, 8], stats: {FALCON % 5},
      flight: {{heading: 90, speed: 5, altitude: 0}}}}
  - {{id: f2, side: pursuer, policy: POLICY, target: runner, cell: [24, 14], stats: {FALCON % 5},
      flight: {{heading: 270, speed: 5, altitude: 0}}}}
"""


def _ends(path: Path, runs: int = 10) -> Counter[tuple[str, int]]:
    sc = load_scenario(path)
    fields = FieldCache(sc)
    got: Counter[tuple[str, int]] = Counter()
    for run, seed in enumerate(run_seeds(sc.seed, runs)):
        sim = Simulation(sc, seed, fields=fields, run=run, record=False)
        got[(sim.run().outcome, sim.turn)] += 1
    return got


def test_a_second_flier_shrinks_the_region_instead_of_following(tmp_path: Path) -> None:
    """Two falcons on one runner (a 30x16 field, an exit east): the one nearer the runner
    steers for it; the other, which reaches it a turn later, makes for the cell of the
    runner's safe region it comes nearest to claiming, not for the runner. The team
    catches in turn 3 in every run, as two fliers that each chase the runner do: the
    runner weighs each falcon by where it can end a move and has no safe exit either way
    (weighed by their walking pace, it ran for the exit and the lone pair caught it in
    turn 4)."""
    path = _scenario(tmp_path, TWO_FALCONS.replace("POLICY", "pursuer"))
    sim = Simulation(load_scenario(path), 1, record=True)
    aims = {}
    for tid in ("f1", "f2"):
        tok = sim.tokens[tid]
        view = SimView(sim, tid, tok)
        assert _chaser(view, "runner", tid) == "f1"
        aims[tid] = get("pursuer").aim(view, sim.specs[tid], tok, tok.state.flight)
    predicted = SimView(sim, "f1", sim.tokens["f1"]).predict("runner")
    assert aims["f1"] is not None and aims["f1"].goal == predicted
    assert aims["f2"] is not None and aims["f2"].goal not in (predicted, (8, 8))
    assert aims["f2"].catch == (8, 8)  # it still takes a catch that comes its way
    team = _ends(path)
    lone = _ends(_scenario(tmp_path, TWO_FALCONS.replace("POLICY", "lone_flier"), "l.yaml"))
    assert team == Counter({("capture", 3): 10})
    assert lone == Counter({("capture", 3): 10})


def test_a_walker_leaves_the_chase_to_a_flier_that_gets_there_first(tmp_path: Path) -> None:
    """A mixed team: the chaser is whoever reaches the quarry soonest, a flier counted by
    where it can end a move; the walker, slower, shrinks the region."""
    text = f"""map: m.tmx
system: speedpoints
seed: 3
turns: 12
goals: {{capture: 0, capture_altitude: 0}}
tokens:
  - {{id: runner, side: quarry, policy: quarry, cell: [8, 8], stats: {{running: 3}}}}
  - {{id: dog, side: pursuer, policy: pursuer, target: runner, cell: [20, 8], stats: {{running: 3}}}}
  - {{id: f1, side: pursuer, policy: pursuer, target: runner, cell: [4, 8], stats: {FALCON % 5},
      flight: {{heading: 90, speed: 5, altitude: 0}}}}
"""
    sim = Simulation(load_scenario(_scenario(tmp_path, text)), 1, record=True)
    view = SimView(sim, "dog", sim.tokens["dog"])
    assert view.reach_times("f1")[view.grid.index((8, 8))] == 1
    assert _chaser(view, "runner", "dog") == "f1"


def test_the_surest_exit_is_the_widest_margin() -> None:
    """Of the exits the quarry reaches before every pursuer, the one with the most turns
    to spare, not the soonest; none where no exit is safe."""
    grid = Grid("orthogonal", 4, 1, 32, 32)
    view = SimpleNamespace(grid=grid, exits=frozenset({(0, 0), (1, 0), (2, 0), (3, 0)}))
    mine = np.array([1.0, 2.0, 3.0, 1.0])
    threat = np.array([1.5, 5.0, 5.0, 1.0])  # (3, 0): reached no sooner than a pursuer
    assert surest_exit(view, mine, threat) == (1, 0)  # type: ignore[arg-type]
    assert surest_exit(view, mine, np.array([1.0, 2.0, 3.0, 1.0])) is None  # type: ignore[arg-type]


BIRD = f"""map: closed.tmx
system: speedpoints
seed: 3
turns: 12
goals: {{capture: 0, capture_altitude: 0}}
tokens:
  - {{id: bird, side: quarry, policy: POLICY, cell: [16, 8], stats: {FALCON % 3}}}
  - {{id: hawk, side: pursuer, policy: pursuer, target: bird, cell: [2, 8], stats: {FALCON % 4},
      flight: {{heading: 90, speed: 4, altitude: 0}}}}
"""


def test_a_flying_quarry_holds_ground_rather_than_fleeing_into_a_corner(tmp_path: Path) -> None:
    """A bird (airspeed 3) and a hawk (airspeed 4) on a 32x18 field with two long walls,
    no exit: ending each flight where it holds the most cells a whole turn before the hawk,
    the bird is caught in turn 10 in every run; fleeing to the farthest end of each flight
    it was caught in turn 8, in the corner."""
    held = _bird_map(tmp_path)
    far = _bird_map(tmp_path, "far_flier")
    assert _ends(held) == Counter({("capture", 10): 10})
    assert _ends(far) == Counter({("capture", 8): 10})
    sim = Simulation(load_scenario(held), 1, record=True)
    tok = sim.tokens["bird"]
    aim = get("quarry").aim(SimView(sim, "bird", tok), sim.specs["bird"], tok, tok.state.flight)
    assert aim is not None and aim.goal is None and aim.hold is not None


def _bird_map(tmp_path: Path, policy: str = "quarry") -> Path:
    rows = ["." * 32 for _ in range(18)]
    for r in (4, 13):
        rows[r] = "." * 6 + "#" * 20 + "." * 6
    tmxtext.write(tmp_path / "closed.tmx", rows)
    path = tmp_path / f"{policy}.yaml"
    path.write_text(BIRD.replace("POLICY", policy), encoding="utf-8")
    return path


@pytest.mark.parametrize(
    ("key", "values", "sign"),
    [("bird.stats.airspeed", (2, 3, 4, 5), -1), ("hawk.stats.airspeed", (3, 4, 6), 1)],
)
def test_the_flying_chase_follows_speed(
    tmp_path: Path, key: str, values: tuple[int, ...], sign: int
) -> None:
    """tests/test_chase_monotone.py's property on the flying quarry's chase: a faster bird
    is caught no more often (2, 3: caught in turns 7 and 10; 4, 5: never in 12), a faster
    hawk no less, beyond the 95% intervals of 16 runs a point."""
    path = _bird_map(tmp_path)
    runs = 16
    rates = []
    for v in values:
        sc = load_scenario(path, overrides={key: v})
        fields = FieldCache(sc)
        k = 0
        for run, seed in enumerate(run_seeds(sc.seed, runs)):
            sim = Simulation(sc, seed, fields=fields, run=run, record=False)
            k += sim.run().outcome == "capture"
        rates.append((v, k))
    for (_, ka), (_, kb) in zip(rates, rates[1:], strict=False):
        lo_a, hi_a = wilson(ka, runs)
        lo_b, hi_b = wilson(kb, runs)
        if sign > 0:
            assert hi_b >= lo_a, rates
        else:
            assert lo_b <= hi_a, rates
    if sign < 0:
        assert rates[0][1] == runs and rates[-1][1] == 0, rates  # the sweep spans both ends
