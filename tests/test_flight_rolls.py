"""Checks fliers roll in the turn loop (engine.sim.flight.fly_turn, RuleSystem.flight_rolls):
a Speedpoints dive faster than is safe is a fall whose falling roll is made at once, and the
shipped flying scenarios whose systems roll dice give batches whose runs differ."""

from __future__ import annotations

import json
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest
from conftest import ROOT

from engine.batch import run_batch
from engine.dice import Dice
from engine.flight import FlightChoice
from engine.flight.model import state_from_dict
from engine.grid import Grid
from engine.mapmodel import MapModel, Terrain
from engine.scenario import load_scenario
from engine.sim import Simulation
from engine.sim.flight import fly_turn
from engine.systems import create

SCENARIOS = ROOT / "scenarios"
STOOP = str(SCENARIOS / "stoop.yaml")

HARD = Terrain()
LAKE = Terrain(name="lake", move="swim", fall="water")


def strip(terrain: Terrain, w: int = 12) -> MapModel:
    """One row of hexes of ``terrain`` (a flier over open ground or over water)."""
    grid = Grid("hexagonal", w, 1, 32, 32, "y", "odd", 16, "equal")
    ids = np.zeros((1, w), dtype=np.int32)
    return MapModel(grid=grid, terrain_ids=ids, terrains=(terrain,))


def falcon(spec: str, terrain: Terrain = HARD, **settings: str):
    system = create("speedpoints", settings)
    token = system.token(spec)
    return system, system.flight(token, strip(terrain)), token


def face(seed: int) -> int:
    """The first d20 a run's dice seeded with ``seed`` rolls."""
    return Dice(seed).roll(1, 20).faces[0]


# --------------------------------------------------------------------------- the rule


def test_a_lethal_stoop_is_even_odds_for_ability_9() -> None:
    """Seed 004: a flier descends safely at most half its airspeed a metre each second, and a
    fall over two stories (6 m) may kill, decided by a success roll with the better of
    climbing and acrobatics plus agility. The falcon of stoop.yaml (acrobatics 6, agility 3,
    airspeed 4) 20 m up, level at airspeed 4, dives all 20 m in one 2-s turn: safe only up to
    4 m, so a lethal fall; 1d20 + 9 >= 10 + 10 needs 11 or more, 10 faces of 20."""
    system, rules, _ = falcon("airspeed=4,acrobatics=6,agility=3,toughness=4,stamina=12")
    _, rec = rules.step(rules.start_state((1, 0), 90, 4, altitude=20), FlightChoice(climb=-20))
    fall = rec.events[-1]
    assert (fall["event"], fall["height_m"], fall["band"], fall["surface"]) == (
        "fall",
        20,
        "lethal",
        "hard",
    )
    assert fall["outcomes"] == {"hurt": Fraction(1, 2), "grievous": Fraction(1, 2)}


@pytest.mark.parametrize("seed", range(40))
def test_the_falling_roll_decides_whether_the_dive_is_flown(seed: int) -> None:
    """A dive faster than is safe is rolled at once on the run's dice: 11+ on the d20 (the
    falcon above) flies the turn as chosen and is hurt (damage and stun 4: its toughness);
    less is the fall itself, straight down where the turn began with no space covered, and
    grievous (damage 12: its stamina). The roll is an event of the dice's log."""
    system, rules, token = falcon("airspeed=4,acrobatics=6,agility=3,toughness=4,stamina=12")
    start = rules.start_state((1, 0), 90, 4, altitude=20)
    dice = Dice(seed)
    rec, tok, flown = fly_turn(system, rules, token, start, FlightChoice(climb=-20), dice)
    d20 = face(seed)
    assert len(dice.log) == 1 and dice.log[0].faces == (d20,)
    assert dice.log[0].total == d20 + 9
    fall = next(e for e in rec.events if e["event"] == "fall")
    if d20 >= 11:
        assert not fall["fell"] and flown == FlightChoice(climb=-20)
        assert rec.state.cell == (9, 0) and len(rec.cells) == 8  # airspeed 8 after 20 m down
        assert tok.state.has("hurt") and tok.state.counter("stun") == 4
        assert "flies on" in dice.log[0].decided
    else:
        assert fall["fell"] and flown.spaces == 0 and rec.cells == ()
        assert rec.state.cell == (1, 0) and rec.state.altitude == 0 and rec.state.speed == 8
        assert tok.state.has("grievous") and tok.state.counter("damage") == 12
        assert "falls" in dice.log[0].decided


def test_the_roll_falls_as_often_as_the_odds_say() -> None:
    """Over the 20 faces the dive is flown on exactly the 10 the odds count (seeds chosen to
    show every face at least once; the count of faces, not a sampled rate, is compared)."""
    system, rules, token = falcon("airspeed=4,acrobatics=6,agility=3")
    start = rules.start_state((1, 0), 90, 4, altitude=20)
    by_face: dict[int, bool] = {}
    seed = 0
    while len(by_face) < 20:
        rec, _, _ = fly_turn(system, rules, token, start, FlightChoice(climb=-20), Dice(seed))
        fell = next(e for e in rec.events if e["event"] == "fall")["fell"]
        by_face.setdefault(face(seed), not fell)
        seed += 1
    assert sum(by_face.values()) == 10 and all(by_face[f] for f in range(11, 21))


def test_a_dangerous_dive_is_unharmed_or_hurt() -> None:
    """Seed 004: a fall over one story (3 m) may harm; success leaves the faller unharmed,
    failure deals damage and stun equal to its toughness. A 6-m dive at airspeed 2 (safe up
    to 2 m) with ability 0 needs 20 on the d20: 1/20 flies on unharmed."""
    system, rules, token = falcon("airspeed=2,toughness=3")
    start = rules.start_state((1, 0), 90, 2, altitude=6)
    _, rec = rules.step(start, FlightChoice(climb=-6))
    assert rec.events[-1]["outcomes"] == {"unharmed": Fraction(1, 20), "hurt": Fraction(19, 20)}
    for seed in range(30):
        rec, tok, _ = fly_turn(system, rules, token, start, FlightChoice(climb=-6), Dice(seed))
        fell = next(e for e in rec.events if e["event"] == "fall")["fell"]
        assert fell == (face(seed) < 20)
        assert tok.state.has("hurt") == fell and tok.state.counter("stun") == (3 if fell else 0)


def test_water_softens_a_dive_to_safe_and_nothing_is_rolled() -> None:
    """Seed 004: how dangerous a fall is depends on the surface that stops it (the landing
    setting: water softens one step). A 5-m dive (dangerous) over water is safe: no roll, the
    turn is flown as chosen."""
    system, rules, token = falcon("airspeed=2", LAKE)
    start = rules.start_state((1, 0), 90, 2, altitude=5)
    _, rec = rules.step(start, FlightChoice(climb=-5))
    assert rec.events[-1]["surface"] == "water" and rec.events[-1]["band"] == "safe"
    dice = Dice(1)
    rec, tok, flown = fly_turn(system, rules, token, start, FlightChoice(climb=-5), dice)
    assert (
        dice.log == [] and flown == FlightChoice(climb=-5) and len(rec.cells) == 4
    )  # airspeed 2, doubled
    assert tok is token


def test_dive_fall_odds_only_records_the_odds() -> None:
    """Setting ``dive_fall=odds``: the fall's odds are recorded, nothing is rolled."""
    system, rules, token = falcon("airspeed=4", dive_fall="odds")
    start = rules.start_state((1, 0), 90, 4, altitude=20)
    dice = Dice(3)
    rec, tok, flown = fly_turn(system, rules, token, start, FlightChoice(climb=-20), dice)
    assert dice.log == [] and tok is token and flown == FlightChoice(climb=-20)
    assert next(e for e in rec.events if e["event"] == "fall")["fell"] is False


def test_a_safe_dive_and_mythmaster_flight_roll_nothing() -> None:
    """Within the safe rate nothing is rolled; seed 002's fliers face no check at all."""
    system, rules, token = falcon("airspeed=4")
    start = rules.start_state((1, 0), 90, 4, altitude=20)
    dice = Dice(2)
    rec, tok, _ = fly_turn(system, rules, token, start, FlightChoice(climb=-4), dice)
    assert dice.log == [] and tok is token and rec.state.altitude == 16
    mm = create("mythmaster")
    griffon = mm.token("adaptability=9,flyer=true")
    mrules = mm.flight(griffon, strip(HARD))
    got = fly_turn(mm, mrules, griffon, mrules.start_state((1, 0), 90, 4), FlightChoice(), dice)
    assert dice.log == [] and got[1] is griffon


# --------------------------------------------------------------------------- in play


def test_stoop_runs_log_their_rolls_and_replay() -> None:
    """In stoop.yaml the falcon stoops only where the stoop ends on the runner; each stoop's
    falling roll is a roll event just before its flight event, which says whether it fell, and
    the logged choice re-flown from the logged state lands where the log says."""
    scenario = load_scenario(STOOP)
    fell = flew = 0
    for seed in range(12):
        sim = Simulation(scenario, seed)
        sim.run()
        events = sim.events
        before = {t: s["flight"] for t, s in events[0]["tokens"].items() if "flight" in s}
        runner = [e for e in events if e["type"] == "state" and e["token"] == "runner"]
        for i, ev in enumerate(events):
            if ev["type"] != "flight":
                continue
            falls = [e for e in ev["events"] if e["event"] == "fall"]
            rules = sim.flight_rules(sim.tokens[ev["token"]])
            new, _ = rules.step(
                state_from_dict(before[ev["token"]]), FlightChoice.from_dict(ev["choice"])
            )
            assert new == state_from_dict(ev["state"])
            before[ev["token"]] = ev["state"]
            if not falls:
                continue
            roll = events[i - 1]
            assert roll["type"] == "roll" and roll["token"] == "falcon"
            assert roll["decided"].startswith("dives ")
            if falls[0]["fell"]:
                fell += 1
                assert ev["path"] == [ev["path"][0]]
            else:
                flew += 1
                last = [r for r in runner if events.index(r) < i][-1]
                assert ev["state"]["cell"] == last["state"]["cell"]  # it ends on the runner
    assert fell and flew


def _momentum_scenarios() -> list[Path]:
    """The shipped scenarios with a flier in a system that rolls dice (every one but the
    generic system, which has no checks: docs/rules.md "generic")."""
    out = []
    for path in sorted(SCENARIOS.glob("*.yaml")):
        scenario = load_scenario(str(path))
        if scenario.system.name == "generic":
            continue
        if any(
            scenario.system.flight(scenario.system.token(t.stats), scenario.model)
            for t in scenario.tokens
        ):
            out.append(path)
    return out


def test_the_flying_scenarios_are_found() -> None:
    assert {"flier.yaml", "griffon.yaml", "stoop.yaml"} <= {p.name for p in _momentum_scenarios()}


@pytest.mark.parametrize("path", _momentum_scenarios(), ids=lambda p: p.stem)
def test_a_100_run_batch_of_each_flying_scenario_has_runs_that_differ(
    path: Path, tmp_path: Path
) -> None:
    """Issue 39: a batch of a shipped flying scenario must answer a question, so its runs
    differ in outcome, turn or cell (stoop and flier: the falcon's and the hawk's falling
    rolls; griffon: the runner's climbing roll, seed 002 giving its fliers none)."""
    run_batch(str(path), runs=100, workers=1, out_dir=str(tmp_path / "b"))
    lines = (tmp_path / "b" / "runs.jsonl").read_text(encoding="utf-8").splitlines()
    runs = [json.loads(line) for line in lines]
    assert len(runs) == 100
    ends = {(r["outcome"], r["turns"], tuple(r["cell"] or ())) for r in runs}
    assert len(ends) > 1, ends
    most = max(sum(1 for r in runs if (r["outcome"], r["turns"]) == k[:2]) for k in ends)
    assert most <= 90  # not one ending with a few strays: a tenth of the runs at least differ
