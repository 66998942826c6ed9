"""Momentum fliers in the turn loop (engine.sim.flight): every flight turn obeys the rules,
replays to the same state, and batches with fliers do not depend on the split."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest
import tmxtext
from conftest import ROOT

from engine.batch import run_batch
from engine.cli import main
from engine.errors import ScenarioError
from engine.eventlog import read_log, replay_states
from engine.flight.model import FlightChoice, angle, state_from_dict
from engine.scenario import load_scenario
from engine.sim import FieldCache, Simulation
from engine.sim.flight import flies_with_momentum
from engine.systems import create

GRIFFON = str(ROOT / "scenarios" / "griffon.yaml")
STOOP = str(ROOT / "scenarios" / "stoop.yaml")
MOMENTUM = ("mythmaster", "speedpoints")


def flight_events(sim: Simulation) -> list[dict]:
    return [e for e in sim.events if e["type"] == "flight"]


def check_run(sim: Simulation) -> int:
    """Re-fly every flight event of a run through the token's flight rules, from the state
    the log had before it, and check the rules' limits independently. Returns the turns
    checked."""
    start = next(e for e in sim.events if e["type"] == "start")
    before = {
        tid: state_from_dict(s["flight"]) for tid, s in start["tokens"].items() if "flight" in s
    }
    grid = sim.scenario.model.grid
    checked = 0
    for ev in flight_events(sim):
        tid = ev["token"]
        rules = sim.flight_rules(sim.tokens[tid])
        assert rules is not None
        state = before[tid]
        choice = FlightChoice.from_dict(ev["choice"])
        new, rec = rules.step(state, choice)
        assert new == state_from_dict(ev["state"]), ev
        assert list(rec.actions) == ev["actions"] and rec.speed == ev["speed"]
        path = [tuple(c) for c in ev["path"]]
        assert path[0] == state.cell and path[-1] == new.cell
        for a, b in zip(path, path[1:], strict=False):
            assert grid.steps(a, b) == 1  # cell by cell
        collided = any(e["event"] == "collision" for e in ev["events"])
        if not collided:
            assert len(path) - 1 == ev["speed"]  # exactly the speed (Speedpoints: spaces)
        turned = sum(abs(d) for _, d in choice.turns) // rules.geo.step
        if rules.system_name == "mythmaster":
            bm = rules.bm
            assert len(ev["actions"]) <= 3
            assert ev["actions"].count("turn") == max(0, turned - 1)  # 30 free, each more 1
            change = (
                choice.accelerate * bm
                if choice.accelerate
                else -(choice.decelerate + 1) * bm
                if choice.decelerate
                else 0
                if choice.maintain
                else -bm
            )
            old = state.speed
            assert ev["speed"] == min(18 * bm, max(0, old + change))
            assert 0 <= new.speed <= 18 * bm
        else:
            base = rules.base
            cur = base if state.landed else state.speed
            assert 0 <= ev["speed"] <= 2 * base and choice.climb <= cur
            assert -choice.climb <= state.altitude and new.altitude >= 0
            if not any(e["event"] == "fall" for e in ev["events"]):
                assert -choice.climb <= cur  # descents within the safe rate
        before[tid] = new
        checked += 1
    return checked


def random_scenario(tmp_path: Path, rng: random.Random, system: str) -> Path:
    w, h = rng.randint(14, 22), rng.randint(10, 16)
    rows = [
        "".join(rng.choice("..........#,~a") if 0 < c < w - 1 else "." for c in range(w))
        for _ in range(h)
    ]
    tmxtext.write(tmp_path / "m.tmx", rows, orientation="hexagonal", hexside=16)
    open_cells = [(c, r) for r in range(h) for c in range(w) if rows[r][c] in ".,"]
    a, b, c = rng.sample(open_cells, 3)
    if system == "mythmaster":
        flier = f"{{adaptability: {rng.randint(6, 14)}, flyer: true}}"
        runner = "{adaptability: 12}"
        start = f"{{heading: {30 * rng.randrange(12)}, speed: {rng.choice([0, 4, 8])}}}"
    else:
        flier = f"{{airspeed: {rng.randint(3, 8)}}}"
        runner = "{running: 5}"
        start = f"{{heading: {30 * rng.randrange(12)}, speed: 3, altitude: {rng.randint(0, 12)}}}"
    flier_policy = rng.choice(["pursuer", "quarry", "waypoints"])
    chaser = "pursuer" if flier_policy != "pursuer" else "quarry"
    text = f"""map: m.tmx
system: {system}
turns: 12
goals: {{capture: {rng.randint(0, 1)}}}
tokens:
  - {{id: flier, side: {flier_policy if flier_policy != "waypoints" else "idle"},
      policy: {flier_policy}, cell: {list(a)}, stats: {flier}, flight: {start},
      waypoints: [{list(b)}, {list(c)}]}}
  - {{id: walker, side: {chaser}, policy: {chaser}, cell: {list(b)}, stats: {runner}}}
"""
    p = tmp_path / "s.yaml"
    p.write_text(text)
    return p


@pytest.mark.parametrize("system", MOMENTUM)
def test_fliers_never_break_their_flight_rules(tmp_path: Path, system: str) -> None:
    rng = random.Random(f"flight-sim-{system}")
    checked = 0
    for i in range(12):
        d = tmp_path / str(i)
        d.mkdir()
        try:
            sc = load_scenario(random_scenario(d, rng, system))
        except ScenarioError:
            continue  # the random start has no ground under a standstill: draw again
        fields = FieldCache(sc)
        for seed in range(3):
            sim = Simulation(sc, seed, fields=fields)
            sim.run()
            checked += check_run(sim)
    assert checked >= 60


@pytest.mark.parametrize("path", [GRIFFON, STOOP], ids=["griffon", "stoop"])
def test_shipped_flier_scenarios_fly_by_the_rules(path: str) -> None:
    sc = load_scenario(path)
    fields = FieldCache(sc)
    outcomes = set()
    for seed in range(8):
        sim = Simulation(sc, seed, fields=fields)
        outcomes.add(sim.run().outcome)
        assert check_run(sim) >= 1
        states, outcome = replay_states(sim.events)
        assert outcome == sim.outcome
        assert {k: v.to_dict() for k, v in states.items()} == sim.final_states()
    assert "capture" in outcomes


def test_a_flier_turns_wide_and_keeps_its_speed() -> None:
    """Momentum shows: the griffon never stops dead from speed in one turn and never turns
    more than its actions pay for."""
    sc = load_scenario(GRIFFON)
    sim = Simulation(sc, 4)
    sim.run()
    prev = None
    for ev in flight_events(sim):
        st = state_from_dict(ev["state"])
        if prev is not None:
            bm = sim.flight_rules(sim.tokens["griffon"]).bm
            assert st.speed >= prev.speed - 4 * bm
            assert angle(prev.heading, st.heading) <= 120  # 30 free + 3 actions of 30
        prev = st


def test_capture_altitude_keeps_a_high_flier_from_catching(tmp_path: Path) -> None:
    tmxtext.write(tmp_path / "m.tmx", ["." * 12] * 8, orientation="hexagonal", hexside=16)
    base = """map: m.tmx
system: speedpoints
turns: 3
goals: {capture: 3, capture_altitude: ALT}
tokens:
  - {id: runner, side: quarry, policy: idle, cell: [6, 4], stats: {running: 1}}
  - {id: kite, side: pursuer, policy: idle, cell: [5, 4], stats: {airspeed: 2},
     flight: {heading: 90, speed: 2, altitude: 10}}
"""
    (tmp_path / "s.yaml").write_text(base.replace("ALT", "0"))
    assert Simulation(load_scenario(tmp_path / "s.yaml"), 1).run().outcome == "timeout"
    (tmp_path / "s.yaml").write_text(base.replace("ALT", "10"))
    assert Simulation(load_scenario(tmp_path / "s.yaml"), 1).run().outcome == "capture"


def test_flight_start_is_checked(tmp_path: Path) -> None:
    tmxtext.write(tmp_path / "m.tmx", ["." * 8] * 6, orientation="hexagonal", hexside=16)
    bad = """map: m.tmx
system: mythmaster
tokens:
  - {id: a, cell: [1, 1], stats: {}, flight: {heading: 90}}
"""
    (tmp_path / "s.yaml").write_text(bad)
    with pytest.raises(ScenarioError, match=r"tokens\[0\] \(a\)\.flight: .*does not fly"):
        load_scenario(tmp_path / "s.yaml")
    (tmp_path / "s.yaml").write_text(
        bad.replace("stats: {}", "stats: {flyer: true}").replace("90", "45")
    )
    with pytest.raises(ScenarioError, match=r"\.flight: .*multiple of 30"):
        load_scenario(tmp_path / "s.yaml")


def test_a_flier_given_no_flight_starts_on_ground_it_has(tmp_path: Path, capsys) -> None:
    """A momentum flier with no ``flight`` starts on the ground, as the turn loop starts it:
    over open air that is refused when the scenario loads, in one line naming the file (it
    used to load and then fail in the first run with the command line's ``--from``)."""
    text = (ROOT / "scenarios" / "flier.yaml").read_text(encoding="utf-8")
    text = text.replace("../maps/", str(ROOT / "maps") + "/")
    grounded = "\n".join(
        line for line in text.splitlines() if not line.strip().startswith("flight:")
    )
    assert grounded != text
    (tmp_path / "s.yaml").write_text(grounded)
    with pytest.raises(
        ScenarioError,
        match=r"s\.yaml: tokens\[1\] \(hawk\)\.flight: not given, so this flier starts on "
        r"the ground; cell 16,12: .*open air",
    ):
        load_scenario(tmp_path / "s.yaml")
    assert main(["run", str(tmp_path / "s.yaml"), "--run-seed", "1"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--from" not in err, err
    # On a cell with ground the same flier loads and plays from the ground.
    (tmp_path / "s.yaml").write_text(grounded.replace("cell: [16, 12]", "cell: [12, 14]"))
    sc = load_scenario(tmp_path / "s.yaml")
    assert sc.tokens[1].flight is None
    sc.turns = 2
    assert Simulation(sc, 1).run().outcome in ("capture", "escape", "timeout")


def test_undo_and_fork_keep_the_flight() -> None:
    sc = load_scenario(GRIFFON)
    sim = Simulation(sc, 7)
    sim.play_turn()
    snap = sim.snapshot()
    sim.play_turn()
    after = (sim.final_states(), list(sim.events))
    assert "flight" in sim.final_states()["griffon"]
    sim.restore(snap)
    sim.play_turn()
    assert (sim.final_states(), sim.events) == after


def test_flier_batch_is_the_same_for_any_worker_count(tmp_path: Path) -> None:
    one = run_batch(GRIFFON, runs=40, seed=3, workers=1, out_dir=str(tmp_path / "a"))
    two = run_batch(GRIFFON, runs=40, seed=3, workers=2, out_dir=str(tmp_path / "b"))
    assert (tmp_path / "a" / "runs.jsonl").read_bytes() == (
        tmp_path / "b" / "runs.jsonl"
    ).read_bytes()
    strip = lambda s: {k: v for k, v in s.items() if k != "results"}  # noqa: E731
    assert strip(one) == strip(two)


def test_flier_batch_on_dask_is_the_same(tmp_path: Path) -> None:
    from distributed import LocalCluster

    local = run_batch(STOOP, runs=30, seed=8, workers=1, out_dir=str(tmp_path / "l"))
    with LocalCluster(
        n_workers=2,
        threads_per_worker=1,
        host="127.0.0.1",
        dashboard_address="127.0.0.1:0",
        processes=True,
    ) as cluster:
        dist = run_batch(
            STOOP, runs=30, seed=8, scheduler=cluster.scheduler_address, out_dir=str(tmp_path / "d")
        )
    assert (tmp_path / "l" / "runs.jsonl").read_bytes() == (
        tmp_path / "d" / "runs.jsonl"
    ).read_bytes()
    assert {k: v for k, v in local.items() if k != "results"} == {
        k: v for k, v in dist.items() if k != "results"
    }


@pytest.mark.parametrize("path", [GRIFFON, STOOP], ids=["griffon", "stoop"])
def test_run_log_replays_to_the_same_final_state(tmp_path: Path, capsys, path: str) -> None:
    log = tmp_path / "one.jsonl"
    assert main(["run", path, "--run-seed", "17", "--log", str(log), "--json"]) == 0
    one = json.loads(capsys.readouterr().out)
    assert main(["replay", str(log), "--json"]) == 0
    rep = json.loads(capsys.readouterr().out)
    assert rep["outcome"] == one["outcome"] and rep["final"] == one["final"]
    assert any("flight" in s for s in rep["final"].values())
    assert any(e["type"] == "flight" for e in read_log(str(log)))


def test_which_systems_fly_with_momentum() -> None:
    flying = {
        name
        for name in ("generic", "mythmaster", "speedpoints", "d6", "whisperspace")
        if flies_with_momentum(create(name))
    }
    assert flying == set(MOMENTUM)


def test_viewer_g_then_t_leaves_the_flier_ready_to_take_off() -> None:
    import pygame

    from engine.viewer.app import Viewer, open_source

    v = Viewer(
        open_source(
            str(ROOT / "maps" / "hex_pointy.tmx"), "mythmaster", token="adaptability=14,flyer=true"
        ),
        size=(900, 600),
    )
    try:
        v.select("hero1")
        for k in (pygame.K_g, pygame.K_t):
            pygame.event.post(pygame.event.Event(pygame.KEYDOWN, key=k, mod=0))
            v.step()
        assert "hero1" in v.flying and v.pending.take_off  # the hint's G, T: still armed
        pygame.event.post(pygame.event.Event(pygame.KEYDOWN, key=pygame.K_t, mod=0))
        v.step()
        assert v.pending.take_off  # T never disarms
        assert v.fly_turn() and v.sim.tokens["hero1"].state.flight is not None
    finally:
        pygame.quit()


def test_replay_viewer_shows_the_flight(tmp_path: Path) -> None:
    import pygame

    from engine.viewer.replay import ReplayViewer

    sc = load_scenario(GRIFFON)
    sim = Simulation(sc, 5)
    sim.run()
    log = tmp_path / "g.jsonl"
    sim.write_log(str(log))
    v = ReplayViewer(str(log), size=(900, 600))
    try:
        v.step()
        assert v.sim.tokens["griffon"].state.flight == sim.tokens["griffon"].state.flight
    finally:
        pygame.quit()


def test_solved_catching_moves_are_every_inner_turn_that_catches() -> None:
    """A pursuer near its quarry weighs the moves turning at an inner point of the move
    that end on the quarry; the turn loop solves for them (one move length per turn point
    and turn). Brute force: every choice the rules allow, flown by the rules' own step."""
    from dataclasses import replace

    import numpy as np

    from engine.flight.model import FlightState
    from engine.grid import Grid
    from engine.mapmodel import MapModel, Terrain
    from engine.sim.flymoves import _catching_inner, _momentum_moves, _plain_moves

    rng = random.Random(18)
    n = 14
    grid = Grid("hexagonal", n, n, 32, 32, "y", "odd", 16)
    ids = np.zeros((n, n), dtype=np.int32)
    for _ in range(12):
        ids[rng.randrange(n), rng.randrange(n)] = 1
    model = MapModel(
        grid=grid, terrain_ids=ids, terrains=(Terrain(), Terrain("rock", move="blocked"))
    )
    system = create("mythmaster")
    rules = system.flight(system.token("adaptability=7,flyer=true"), model)  # Base Move 3
    assert rules is not None
    open_cells = [c for c in grid.cells() if rules.passable(c)]
    found = 0
    for _ in range(60):
        cell = rng.choice(open_cells)
        state = rules.start_state(cell, rng.randrange(12) * 30, rng.randrange(0, 13, 3))
        catch = rng.choice(open_cells)
        # The pilot moves by the cheapest way to each speed (the brute force: by every one).
        plain = _plain_moves(rules, rules.normal(state))
        cheapest = {row[0]: row[1] for row in plain}
        want = set()
        for choice in rules.choices(state, turn_points=1, land=False):
            if len(choice.turns) != 1:
                continue
            new, rec = rules.step(state, choice)
            k = choice.turns[0][0]
            if not 0 < k < rec.speed or new.cell != catch or len(rec.cells) != rec.speed:
                continue
            if any(e["event"] == "collision" for e in rec.events):
                continue
            if cheapest.get(rec.speed) != replace(choice, turns=()):
                continue
            want.add((json.dumps(choice.to_dict(), sort_keys=True), new))
        hits = _catching_inner(rules, rules.normal(state), catch, plain)
        got = {
            (
                json.dumps(m.choice.to_dict(), sort_keys=True),
                FlightState(m.cell, m.heading, m.speed, 0, False, m.face),
            )
            for moves in hits.values()
            for m in moves
        }
        # And the turn loop's own list has them, after the plain moves.
        listed = list(_momentum_moves(rules, state, catch=catch, reach=0))
        assert sum(len(v) for v in hits.values()) == len(listed) - sum(
            len(r[4]) + len(r[5]) for r in plain
        )
        assert got == want, (state, catch)
        found += len(got)
    assert found > 0
