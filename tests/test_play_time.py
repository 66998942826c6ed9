"""Checks over time in play (issue 38): what falls due hourly, per turn and after a rest,
kept as token state from turn to turn and played by the turn loop's start and end of a turn.

Each expected figure is worked here from the seed line quoted beside it (../shared/seeds,
read through RULES.md's rulings) and checked in every turn of seeded runs.

Mythmaster and Speedpoints have none at a tactical scale: seed 002's travel ("The daily
travel distance assumes 8 hours of foot travel ... and leaves the traveller's Stamina reduced
by 8 points") is counted in days, and seed 004 names nothing that falls due over time.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

import tmxtext  # noqa: E402

from engine.scenario import load_scenario  # noqa: E402
from engine.sim import Simulation  # noqa: E402
from engine.systems import whisperspace as ws  # noqa: E402


def _scenario(
    tmp_path: Path, rows: list[str], system: str, tokens: str, turns: int, settings: str = "{}"
) -> Any:
    tmxtext.write(tmp_path / "map.tmx", rows)
    (tmp_path / "s.yaml").write_text(
        f"name: t\nmap: map.tmx\nsystem: {system}\nsettings: {settings}\nseed: 1\n"
        f"turns: {turns}\ntokens:\n{tokens}",
        encoding="utf-8",
    )
    return load_scenario(str(tmp_path / "s.yaml"))


def _turns(events: list[dict[str, Any]], tid: str) -> list[list[dict[str, Any]]]:
    """The events of each of ``tid``'s turns (its rolls, its move, its state), turn 1 first."""
    out: list[list[dict[str, Any]]] = []
    for ev in events:
        if ev["type"] == "turn":
            out.append([])
        elif out and ev.get("token") == tid:
            out[-1].append(ev)
    return out


def _rolls(turn: list[dict[str, Any]], words: str) -> list[dict[str, Any]]:
    return [e for e in turn if e["type"] == "roll" and words in e.get("decided", "")]


def _state(turn: list[dict[str, Any]]) -> dict[str, Any]:
    return next(e["state"] for e in turn if e["type"] == "state")


def _moved(turn: list[dict[str, Any]]) -> bool:
    return any(e["type"] == "move" and len(e["path"]) > 1 for e in turn)


def _token(tid: str, policy: str, cell: tuple[int, int], stats: str, extra: str = "") -> str:
    return (
        f"  - id: {tid}\n    side: quarry\n    policy: {policy}\n    cell: [{cell[0]}, {cell[1]}]\n"
        f"    stats: {{{stats}}}\n{extra}"
    )


def _back_and_forth(a: tuple[int, int], b: tuple[int, int], n: int) -> str:
    legs = ", ".join(f"[{a[0]}, {a[1]}], [{b[0]}, {b[1]}]" for _ in range(n))
    return f"    waypoints: [{legs}]\n"


# =============================================================================================
# Whisperspace (seed 000): the heavy load each turn, the hour encumbered, the ten-minute rest
# =============================================================================================

LAND_AND_WATER = ["." * 10 + "w" * 10] * 3  # calm water: no swimming check to muddle the log


@pytest.fixture
def calm_water(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(tmxtext.LEGEND, "w", {"terrain": "calm", "move": "swim"})
    monkeypatch.setattr(tmxtext, "CHARS", [*tmxtext.CHARS, "w"])


def _play(sim: Simulation, turns: int) -> None:
    for _ in range(turns):
        sim.play_turn()


@pytest.mark.usefixtures("calm_water")
def test_whisperspace_the_hour_counts_time_in_the_water_and_is_rolled_on_land(
    tmp_path: Path,
) -> None:
    """Seed 000: "If a character is encumbered for an hour or more, they must roll an
    Endurance (DC6) encumbrance check. Success: they continue normally for another hour" and
    "While a character is swimming, regular encumbrance checks do not apply."

    Reading (docs/rules.md): the swimmer is still encumbered (its swimming DC counts it), so
    the hour (600 turns of 6 s) counts its turns in the water; the check is not rolled
    while it swims, and one that fell due there is rolled at the start of its first turn on
    land ("an hour or more"). Here: 300 turns on land, 350 in calm water (the hour is up at
    turn 600, in the water), then land: one roll, at turn 651, and the next hour starts."""
    mule = _token("mule", "idle", (1, 1), "speed: 30, capacity: 5, bulk: 7, endurance: 20")
    sim = Simulation(_scenario(tmp_path, LAND_AND_WATER, "whisperspace", mule, 2000), 3)
    _play(sim, 300)
    sim.place_token("mule", (15, 1))
    _play(sim, 350)
    sim.place_token("mule", (1, 1))
    _play(sim, 5)
    turns = _turns(sim.events, "mule")
    hourly = [i + 1 for i, t in enumerate(turns) if _rolls(t, "an hour encumbered")]
    assert hourly == [651]
    (roll,) = _rolls(turns[650], "an hour encumbered")
    assert roll["decided"].endswith("DC 6, another hour")  # endurance 20 always makes it
    assert _state(turns[599])["mode"] == "swim"  # RULES.md R4: the turn the hour was up
    assert _state(turns[599])["counters"]["encumbered_turns"] == 600
    assert _state(turns[650])["counters"]["encumbered_turns"] == 0  # "another hour"
    assert _state(turns[651])["counters"]["encumbered_turns"] == 1


def test_whisperspace_the_hour_on_land_is_rolled_at_turn_600(tmp_path: Path) -> None:
    """Seed 000: "If a character is encumbered for an hour or more, they must roll an
    Endurance (DC6) encumbrance check" (an hour: 600 turns of 6 s); "Failure: ... The
    character moves from being encumbered to being heavily encumbered": from the next turn
    on it rolls the heavy-load check ("At the start of each of your turns while heavily
    encumbered, roll an Endurance (DC6) encumbrance check")."""
    mule = _token("mule", "idle", (1, 1), "speed: 30, capacity: 5, bulk: 7, endurance: -20")
    sim = Simulation(_scenario(tmp_path, ["." * 10] * 3, "whisperspace", mule, 603), 1)
    sim.run()
    turns = _turns(sim.events, "mule")
    assert [i + 1 for i, t in enumerate(turns) if _rolls(t, "an hour encumbered")] == [600]
    assert [i + 1 for i, t in enumerate(turns) if _rolls(t, "heavy load")] == [601, 602, 603]
    assert _state(turns[598])["encumbrance"] == "encumbered"
    assert _state(turns[599])["encumbrance"] == "heavy"
    assert "strained" in _state(turns[599])["conditions"]


def _heavy_dcs(turns: list[list[dict[str, Any]]]) -> list[int]:
    out = []
    for turn in turns:
        (roll,) = _rolls(turn, "heavy load")
        out.append(int(roll["decided"].split("endurance DC ")[1].split(":")[0]))
    return out


def test_whisperspace_heavy_load_dc_rises_each_turn_and_a_rest_resets_it(tmp_path: Path) -> None:
    """Seed 000: "At the start of each of your turns while heavily encumbered, roll an
    Endurance (DC6) encumbrance check. Each consecutive turn you remain heavily encumbered
    increases the DC by +1." and "The DC resets to 6 once you drop below heavy encumbrance or
    rest for at least ten minutes."

    Resting is not moving (docs/rules.md): a heavily encumbered token that stays put has
    rested ten minutes (100 turns of 6 s) after turn 100, and from turn 101 its DC is 6
    again; one that walks to and fro every turn never rests, and its DC climbs on."""
    stats = "speed: 30, capacity: 5, bulk: 11, endurance: 0"
    stay = _token("stay", "idle", (1, 0), stats)
    walk = _token("walk", "waypoints", (1, 2), stats, _back_and_forth((8, 2), (1, 2), 80))
    sim = Simulation(_scenario(tmp_path, ["." * 10] * 3, "whisperspace", stay + walk, 110), 5)
    sim.run()
    stayed, walked = _turns(sim.events, "stay"), _turns(sim.events, "walk")
    assert len(stayed) == 110
    assert _heavy_dcs(stayed) == [6 + k for k in range(100)] + [6] * 10
    assert not any(_moved(t) for t in stayed)
    assert all(_moved(t) for t in walked)
    assert _heavy_dcs(walked) == [6 + k for k in range(110)]
    assert _state(stayed[99])["counters"]["rest_turns"] == ws.REST_TURNS


def test_whisperspace_a_ten_minute_rest_without_encumbrance_ends_the_strain(
    tmp_path: Path,
) -> None:
    """Seed 000, the hourly check: "Failure: the extra weight takes a toll. The character moves
    from being encumbered to being heavily encumbered. A ten minute rest (without any
    encumbrance) resets this." RULES.md 1: a failed heavy-load check is "drop the load or
    take 1 Stress ... the token's configured choice decides".

    An encumbered token (bulk 7, capacity 5) fails the hour at turn 600 (heavily encumbered),
    fails the heavy-load check at 601 and drops its load to its capacity (no longer
    encumbered); resting from then on (not moving), after ten minutes (turns 601-700) it is
    no longer strained as turn 701 starts. A token that walks on is never rested: strained
    to the end (it is not encumbered either way, so it rolls nothing more)."""
    stats = "speed: 30, capacity: 5, bulk: 7, endurance: -20, strain_choice: drop_load"
    stay = _token("stay", "idle", (1, 0), stats)
    walk = _token("walk", "waypoints", (1, 2), stats, _back_and_forth((8, 2), (1, 2), 400))
    sim = Simulation(_scenario(tmp_path, ["." * 10] * 3, "whisperspace", stay + walk, 720), 2)
    sim.run()
    for tid in ("stay", "walk"):
        turns = _turns(sim.events, tid)
        assert [i + 1 for i, t in enumerate(turns) if _rolls(t, "an hour encumbered")] == [600]
        assert [i + 1 for i, t in enumerate(turns) if _rolls(t, "heavy load")] == [601]
        assert _rolls(turns[600], "heavy load")[0]["decided"].endswith("drops the load")
        strained = [i + 1 for i, t in enumerate(turns) if "strained" in _state(t)["conditions"]]
        last = 700 if tid == "stay" else 720
        assert strained == list(range(600, last + 1)), tid
        assert _state(turns[601])["encumbrance"] == "none"


# =============================================================================================
# D6 (seed 003 + RULES.md 3): the long-distance stamina schedule in play
# =============================================================================================

# A runner who never fails a movement roll (9D against open ground at most DN 8: "Very Easy"
# shifted up at all-out), with Strength 1D (3 pips: 3 medium items) for the stamina rolls.
SPRINTER = "move: 10, dexterity: 9D, strength: 1D"

INTERVAL = {"all_out": 12, "high": 120}
"""Seed 003: all-out "Make a stamina roll every minute", high "every 10 minutes"; rounds of
5 s (RULES.md 3: "all-out every minute = 12 rounds, high every 10 minutes")."""

DN_BY_ROLL = [3, 8, 13, 18, 25, 31]
"""RULES.md 3's default numbers: Very Easy 3, Easy 8, Moderate 13, Difficult 18, ..."""


def _check_schedule(turns: list[list[dict[str, Any]]], pace: str) -> dict[str, int]:
    """Every round of one runner against the seed's schedule, worked from its moves alone:
    the first round is cruising (seed 003: "A character may change speed by up to two levels
    per round", from a stop) and every other moving round at ``pace``. What was seen."""
    seen = {"success": 0, "failure": 0, "rested": 0}
    moving = 0  # rounds at pace since the run began
    rolls = 0  # stamina rolls of this run
    owed = 0  # rounds of rest still owed after a failure
    first = True
    for n, turn in enumerate(turns, 1):
        stamina = _rolls(turn, "stamina roll")
        state = _state(turn)
        if owed:
            # "If failed: must rest twice as long as sprint duration": held, not moving.
            assert not _moved(turn) and not stamina, n
            owed -= 1
            assert ("exhausted" in state["conditions"]) == bool(owed), n
            if not owed:
                seen["rested"] += 1
                moving, rolls, first = 0, 0, True
                assert state["counters"] == {}, n  # the run is over: a fresh start
            continue
        assert _moved(turn), n
        if first:  # the cruising round from a stop: 1/2160 of a roll, none due
            first = False
            assert not stamina, n
            continue
        moving += 1
        if moving % INTERVAL[pace]:
            assert not stamina, n
            continue
        (roll,) = stamina
        # "First roll: Very Easy; increase one level each additional roll."
        assert f"DN {DN_BY_ROLL[rolls]}" in roll["decided"], (n, roll["decided"])
        assert f"stamina roll {rolls + 1}," in roll["decided"]
        rolls += 1
        if roll["decided"].startswith("success"):
            seen["success"] += 1
            assert "exhausted" not in state["conditions"]
            continue
        seen["failure"] += 1
        assert "exhausted" in state["conditions"], n
        run = moving + 1  # the run so far, its cruising round included
        owed = 2 * run
        assert roll["decided"].endswith(f"exhausted, rests {owed} rounds"), roll
        assert state["counters"]["rest_due"] == owed
    return seen


@pytest.mark.parametrize(
    ("pace", "turns", "seeds"), [("all_out", 200, range(12)), ("high", 380, range(3))]
)
def test_d6_an_overloaded_runner_rolls_stamina_on_the_long_distance_schedule(
    tmp_path: Path, pace: str, turns: int, seeds: range
) -> None:
    """Seed 003: "Overloaded characters may trigger long-distance movement and stamina rules"
    (RULES.md 3, ruling ``overload = stamina``: "in play, an overloaded token rolls stamina
    on the long-distance schedule for the speed it moves at (all-out every minute = 12
    rounds, high every 10 minutes, cruising every 3 hours), first roll Very Easy, one level
    harder each roll, a failure forcing rest"); "All-Out (sprinting) • Make a stamina roll
    every minute. • First roll: Very Easy; increase one level each additional roll. • If
    failed: must rest twice as long as sprint duration." Strength 1D carries 3 medium items
    ("one medium-sized object per pip of Strength"): 4 overload it. Resting is not moving;
    after the rest the run starts again from Very Easy."""
    runner = _token(
        "runner",
        "waypoints",
        (1, 1),
        f"{SPRINTER}, items: 4",
        f"    pace: {pace}\n" + _back_and_forth((58, 1), (1, 1), 200),
    )
    sc = _scenario(tmp_path, ["." * 60] * 3, "d6", runner, turns, settings="{encumbrance: true}")
    seen = {"success": 0, "failure": 0, "rested": 0}
    for seed in seeds:
        sim = Simulation(sc, seed)
        sim.run()
        for k, v in _check_schedule(_turns(sim.events, "runner"), pace).items():
            seen[k] += v
        quiet = Simulation(sc, seed, record=False)  # a batch's run plays the same
        quiet.run()
        assert quiet.tokens["runner"].state == sim.tokens["runner"].state
    assert seen["success"] and seen["failure"] and seen["rested"], seen


def test_d6_stamina_rolls_only_for_overloaded_tokens_unless_the_scenario_asks(
    tmp_path: Path,
) -> None:
    """RULES.md 3: "A token that is not overloaded rolls that schedule only when a scenario
    asks (`stamina: true`)"; setting ``overload = stamina | none``. Seed 003's encumbrance is
    "Optional": with it off nobody is overloaded."""
    rows = ["." * 60] * 3

    def stamina_rolls(stats: str, settings: str) -> int:
        tok = _token(
            "r",
            "waypoints",
            (1, 1),
            stats,
            "    pace: all_out\n" + _back_and_forth((58, 1), (1, 1), 20),
        )
        sim = Simulation(_scenario(tmp_path, rows, "d6", tok, 30, settings), 1)
        sim.run()
        return sum(len(_rolls(t, "stamina roll")) for t in _turns(sim.events, "r"))

    light, loaded = "move: 10, dexterity: 9D, strength: 4D", f"{SPRINTER}, items: 4"
    assert stamina_rolls(loaded, "{encumbrance: true}") >= 1
    assert stamina_rolls(loaded, "{}") == 0  # the optional rule off: not overloaded
    assert stamina_rolls(loaded, "{encumbrance: true, overload: none}") == 0
    assert stamina_rolls(light, "{stamina: true}") >= 1
    assert stamina_rolls(light, "{}") == 0
    # `stats` says so, with the schedule in rounds of 5 s.
    from engine import systems

    asked = systems.create("d6", {"stamina": True})
    overload = asked.stats_report(asked.token(light.replace(": ", "=").replace(" ", "")))
    assert overload["overload"]["rolls_stamina"] is True
    assert overload["overload"]["in_play"]["every_rounds"]["all_out"] == 12
    assert overload["overload"]["in_play"]["every_rounds"]["high"] == 120
    plain = systems.create("d6")
    assert plain.stats_report(plain.token("move=10"))["overload"]["rolls_stamina"] is False


# =============================================================================================
# The hooks stay pure: the turn loop's memo serves the same states as the plain calls
# =============================================================================================


def test_the_over_time_hooks_answer_the_same_through_the_hook_memo(tmp_path: Path) -> None:
    """The RuleSystem contract (systems/base.py: hooks are pure and read through the state's
    methods), for the states these runs meet: the stamina clock, the rest and the strain,
    perturbed field by field as tests/test_hookmemo.py does for the shipped scenarios."""
    import random

    from test_hookmemo import _bound, _outcome, _perturbed

    from engine.dice import Dice
    from engine.eventlog import token_state_from_dict
    from engine.sim.hookmemo import HookMemo
    from engine.systems.base import Token

    runner = _token(
        "r", "waypoints", (1, 1), f"{SPRINTER}, items: 4", _back_and_forth((58, 1), (1, 1), 40)
    )
    heavy = _token("h", "idle", (1, 1), "speed: 30, capacity: 5, bulk: 11, endurance: 0")
    cases = [
        (["." * 60] * 3, "d6", runner, "{encumbrance: true}", ["exhausted", "no_actions"]),
        (["." * 10] * 3, "whisperspace", heavy, "{}", ["strained", "prone"]),
    ]
    rng = random.Random(5)
    for rows, system_name, tokens, settings, conditions in cases:
        sc = _scenario(tmp_path, rows, system_name, tokens, 130, settings)
        sim = Simulation(sc, 4)
        start = next(iter(sim.tokens.values()))
        sim.run()
        states = [token_state_from_dict(e["state"]) for e in sim.events if e["type"] == "state"]
        system, memo = sc.system, HookMemo()
        for st in states[::5]:
            tok = Token(start.system, start.stats, st, start.id)
            for _ in range(4):
                tok = _perturbed(rng, tok, conditions, ["walk", "swim"])
                for moved in (False, True):
                    hook = _bound(system.paced, system.default_pace, moved)
                    got = _outcome(memo.token, ("paced", moved), tok, hook)
                    assert got == _outcome(hook, tok)
                seed = rng.randrange(1 << 30)
                for name, hook in (("start", system.start_turn), ("end", system.end_turn)):
                    got = _outcome(memo.token, (name,), tok, hook, Dice(seed))
                    assert got == _outcome(hook, tok, Dice(seed))
