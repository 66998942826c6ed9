"""Speedpoints (seed 004, RULES.md section 4): golden figures from the seed's own tables."""

from __future__ import annotations

import json
from fractions import Fraction

import pytest

from engine import systems
from engine.cli import main
from engine.errors import StatError
from engine.mapmodel import Terrain
from engine.systems import speedpoints as sp
from engine.systems.speedpoints import fall_outcome, jump_check, jump_length

F = Fraction


@pytest.fixture
def system() -> sp.Speedpoints:
    return systems.create("speedpoints")


# --------------------------------------------------------------------------- Strength table

# Typed from the seed's table (seed 004, Encumbrance), row by row: strength -> CC in kg.
SEED_STRENGTH_TABLE = [
    (0, 0), (1, 1), (2, 2), (3, 5), (4, 10), (5, 15), (6, 20), (7, 30), (8, 50), (9, 65),
    (10, 80), (11, 100), (12, 120), (13, 150), (14, 200), (15, 250), (16, 300),
    (17, 400), (18, 500), (19, 600), (20, 800), (21, 1000), (22, 1200), (23, 1500),
    (24, 1800), (25, 2100), (26, 2500), (27, 3000), (28, 4000), (29, 5000), (30, 6000),
    (31, 7500), (32, 9000), (33, 10000),
    (34, 12000), (35, 15000), (36, 20000), (37, 25000), (38, 30000), (39, 35000),
    (40, 40000), (41, 45000), (42, 50000), (43, 55000), (44, 60000), (45, 65000),
    (46, 70000), (47, 75000), (48, 80000), (49, 90000), (50, 100000),
]  # fmt: skip


def test_strength_table_has_every_row() -> None:
    assert sorted(sp.CARRYING_CAPACITY.items()) == SEED_STRENGTH_TABLE
    assert len(SEED_STRENGTH_TABLE) == 51


@pytest.mark.parametrize(("strength", "cc"), SEED_STRENGTH_TABLE)
def test_strength_row_in_stats(system: sp.Speedpoints, strength: int, cc: int) -> None:
    carrying = system.stats_report(system.token({"strength": strength}))["carrying"]
    assert (carrying["capacity_kg"], carrying["max_kg"]) == (cc, 2 * cc)
    # Exactly CC is not encumbered; a gram more is; twice CC is the most that can be carried.
    at = system.token({"strength": strength, "load": cc})
    over = system.token({"strength": strength, "load": F(cc) + F(1, 1000)})
    too_much = system.token({"strength": strength, "load": 2 * cc + 1})
    assert at.state.encumbrance == "none"
    # Strength 0 carries nothing: any load is over twice its CC of 0.
    assert over.state.encumbrance == ("encumbered" if cc else "immobile")
    assert too_much.state.encumbrance == "immobile"


def test_strength_outside_the_table(system: sp.Speedpoints) -> None:
    with pytest.raises(StatError, match=r"strength.*<= 50"):
        system.token("strength=51")


# --------------------------------------------------------------------------- units


def test_one_point_is_one_metre_per_second_and_one_space_per_turn() -> None:
    assert sp.convert(1) == {
        "points": 1,
        "m_per_s": 1,
        "km_per_h": F(36, 10),
        "spaces_per_turn": 1,
        "m_per_turn": 2,
    }
    assert sp.convert(5)["km_per_h"] == 18 and sp.convert(7)["spaces_per_turn"] == 7
    assert (sp.SPACE_M, sp.TURN_S) == (2, 2)


@pytest.mark.parametrize("running", [0, 1, 3, 5, 8, 12])
def test_running_points_are_spaces_per_turn(system: sp.Speedpoints, running: int) -> None:
    tok = system.token({"running": running, "swimming": 2})
    assert system.rate(tok, "walk", "run") == 2 * running  # metres per turn
    rep = system.stats_report(tok)
    assert rep["per_turn"]["walk"] == running and rep["per_turn"]["swim"] == 2
    assert rep["rates"]["run"] == 2 * running and rep["rates"]["swim"] == 4
    speed = rep["speeds"]["running"]
    assert speed["m_per_s"] == running and speed["spaces_per_turn"] == running
    assert F(speed["km_per_h"]) == F(36, 10) * running
    assert rep["unit"] == "m" and rep["cell_size"] == 2 and rep["turn"]["seconds"] == 2


def test_metadata(system: sp.Speedpoints) -> None:
    assert system.paces == ("run",) and system.default_pace == system.fastest_pace == "run"
    assert system.config["resolver"] == "1d20"
    assert {s.name for s in system.stats} == {
        "running", "swimming", "airspeed", "strength", "agility",
        "acrobatics", "climbing", "toughness", "stamina", "load",
    }  # fmt: skip


# --------------------------------------------------------------------------- jumping


@pytest.mark.parametrize(
    ("running", "run_up_m", "standing_m"),
    [(0, 0, 0), (1, 1, F(1, 2)), (2, 2, 1), (3, 3, F(3, 2)), (5, 5, F(5, 2)), (8, 8, 4)],
)
def test_jump_distances(
    system: sp.Speedpoints, running: int, run_up_m: Fraction, standing_m: Fraction
) -> None:
    tok = system.token({"running": running})
    assert jump_length(tok, True) == run_up_m and jump_length(tok, False) == standing_m
    jump = system.stats_report(tok)["jump"]
    assert F(jump["run_up"]["length_m"]) == run_up_m
    assert F(jump["run_up"]["height_m"]) == F(run_up_m) / 2  # half of running
    assert F(jump["standing"]["length_m"]) == standing_m
    assert F(jump["standing"]["height_m"]) == F(running, 4)  # a quarter of running


def test_jump_check_bands(system: sp.Speedpoints) -> None:
    tok = system.token("running=5,acrobatics=4")
    # Run-up: longest 5 m. More than 1 m short: no roll; within 1 m: roll; over: refused.
    assert jump_check(tok, F(7, 2), True) is None
    for gap in (4, F(9, 2), 5):
        jc = jump_check(tok, gap, True)
        assert jc is not None and jc.check is not None and jc.refusal is None
        assert jc.p_success == F(1, 4)  # d20 + 4 >= 10 + 10: faces 16-20
    too_long = jump_check(tok, F(51, 10), True)
    assert too_long is not None and too_long.check is None and too_long.p_success == 0
    assert too_long.refusal is not None and "5 m" in too_long.refusal
    # Standing: longest 5/2 m.
    assert jump_check(tok, 1, False) is None
    standing = jump_check(tok, F(3, 2), False)
    assert standing is not None and standing.check is not None
    refused = jump_check(tok, 3, False)
    assert refused is not None and refused.refusal is not None
    # The system's own version uses its resolver and jump difficulty.
    easy = systems.create("speedpoints", {"jump_difficulty": "0"})
    assert easy.jump_check(tok, 5, True).p_success == F(3, 4)


def test_encumbered_jumps_use_halved_running(system: sp.Speedpoints) -> None:
    tok = system.token("running=5,strength=10,load=100")
    assert jump_length(tok, True) == 2 and jump_length(tok, False) == 1


@pytest.mark.parametrize(
    ("running", "gap_jump", "crosses", "asks"),
    [
        (1, "run_up", False, False),  # longest 1 m < 2 m
        (2, "run_up", True, True),  # 0 m to spare
        (3, "run_up", True, True),  # exactly 1 m to spare: within 1 m
        (4, "run_up", True, False),
        (3, "standing", False, False),  # 3/2 m
        (4, "standing", True, True),
        (6, "standing", True, True),
        (7, "standing", True, False),  # 7/2 m
    ],
)
def test_gap_cells(running: int, gap_jump: str, crosses: bool, asks: bool) -> None:
    """A one-cell (2 m) gap jumped with a run-up (``gap_jump=standing`` makes every jump a
    standing one): gap cells themselves ask nothing and are crossed at running rate."""
    system = systems.create("speedpoints", {"gap_jump": gap_jump})
    tok = system.token({"running": running, "acrobatics": 2})
    gap = Terrain(name="pit", move="gap", height=4.0)
    assert system.cell_rate(tok, gap) == 2 * running  # crossed at running rate
    assert system.refusal(tok, gap) is None and system.cell_check(tok, gap) is None
    why, check = system.jump(tok, F(2), True, (gap,))
    assert (why is None) == crosses
    if why is not None:
        assert "longest" in why
    assert (check is not None) == asks
    if check is not None:
        assert check.what.startswith("acrobatics") and check.p_success == F(3, 20)
        easy = Terrain(name="pit", move="gap", difficulty="easy")  # 5: d20 + 2 >= 15
        _, easier = system.jump(tok, F(2), True, (easy,))
        assert easier is not None and easier.p_success == F(2, 5)
        _, mixed = system.jump(tok, F(2), True, (easy, gap))  # the hardest gap cell counts
        assert mixed is not None and mixed.p_success == F(3, 20)


# --------------------------------------------------------------------------- climbing

CLIMB_TABLE = [
    # running, difficulty-0 spaces per turn (ceil(running / 2)), difficulty-5 spaces per turn
    (1, 1, F(1, 2)),
    (2, 1, F(1, 2)),
    (3, 2, F(1, 2)),
    (4, 2, F(1, 2)),
    (5, 3, F(1, 2)),
    (6, 3, F(1, 2)),
    (9, 5, F(1, 2)),
    (10, 5, F(1, 2)),
]


@pytest.mark.parametrize(("running", "easy_spaces", "rope_spaces"), CLIMB_TABLE)
def test_climbing_table(
    system: sp.Speedpoints, running: int, easy_spaces: int, rope_spaces: Fraction
) -> None:
    tok = system.token({"running": running})
    for level in ("none", "very_easy"):
        assert system.cell_rate(tok, Terrain(move="climb", difficulty=level)) == 2 * easy_spaces
    assert system.cell_rate(tok, Terrain(move="ladder")) == 2 * easy_spaces
    assert system.cell_rate(tok, Terrain(move="climb", difficulty="easy")) == 1  # 1 m per turn
    for level in ("moderate", "difficult", "very_difficult", "heroic"):
        cliff = Terrain(name="cliff", move="climb", difficulty=level)
        assert system.cell_rate(tok, cliff) == 0
        reason = system.refusal(tok, cliff)
        assert reason is not None and "untactical" in reason and "cliff" in reason
        assert system.cell_check(tok, cliff) is None
    table = system.stats_report(tok)["climbing"]
    assert [row["difficulty"] for row in table] == [0, 5, 10, 15, 20]
    assert table[0]["spaces_per_turn"] == easy_spaces and table[0]["m_per_turn"] == 2 * easy_spaces
    assert F(table[1]["spaces_per_turn"]) == rope_spaces and table[1]["m_per_turn"] == 1
    assert all(row["movement"] == "not tactical" for row in table[2:])
    assert system.stats_report(tok)["per_turn"]["ladder"] == easy_spaces


def test_every_climb_rolls(system: sp.Speedpoints) -> None:
    tok = system.token("climbing=3")
    # `none` counts as difficulty 0: d20 + 3 >= 10.
    for terrain in (Terrain(move="climb"), Terrain(move="ladder")):
        check = system.cell_check(tok, terrain)
        assert check is not None and check.p_success == F(7, 10)
        assert check.target == "1d20 + 3 >= 10" and check.what.startswith("climbing")
    rope = system.cell_check(tok, Terrain(move="climb", difficulty="easy"))
    assert rope is not None and rope.p_success == F(9, 20)
    slippery = system.cell_check(tok, Terrain(move="ladder", difficulty="moderate"))
    assert slippery is not None and slippery.p_success == F(4, 20)  # a ladder: still tactical
    assert system.cell_check(tok, Terrain(move="walk")) is None


def test_climb_and_jump_failures_fall(system: sp.Speedpoints) -> None:
    tok = system.token({}).moved(mode="climb", progress=F(1, 2))
    fell = system.apply_check(tok, "climbing (climb, difficulty 0)", "failure")
    assert fell.state.has("fell") and fell.state.progress == 0
    assert system.apply_check(tok, "climbing (climb, difficulty 0)", "success") == tok
    jumped = system.apply_check(tok, "acrobatics (jump 2 m of 3 m)", "failure")
    assert jumped.state.has("fell") and jumped.state.has("in_gap")
    assert system.apply_check(tok, "fall (dangerous)", "success") == tok
    assert system.apply_check(tok, "fall (dangerous)", "failure").state.has("hurt")
    assert system.apply_check(tok, "fall (lethal)", "success").state.has("hurt")
    assert system.apply_check(tok, "fall (lethal)", "failure").state.has("grievous")


# --------------------------------------------------------------------------- falling


@pytest.mark.parametrize(
    ("height", "surface", "band"),
    [
        (3, "hard", "safe"),
        (F(7, 2), "hard", "dangerous"),
        (6, "hard", "dangerous"),
        (F(13, 2), "hard", "lethal"),
        (30, "hard", "lethal"),
        (4, "soft", "safe"),
        (4, "water", "safe"),
        (7, "soft", "dangerous"),
        (40, "water", "dangerous"),
    ],
)
def test_fall_bands(system: sp.Speedpoints, height: Fraction, surface: str, band: str) -> None:
    assert fall_outcome(system.token({}), height, surface).band == band


def test_fall_odds(system: sp.Speedpoints) -> None:
    tok = system.token("climbing=3,acrobatics=5,agility=2,toughness=4,stamina=9")
    safe = fall_outcome(tok, 3)
    assert safe.check is None and safe.outcomes == {"unharmed": 1}
    # Not from a climb: difficulty 10; ability max(3, 5) + 2 = 7: d20 >= 13.
    dangerous = fall_outcome(tok, 5)
    assert dangerous.outcomes == {"unharmed": F(2, 5), "hurt": F(3, 5)}
    assert dangerous.effects["hurt"] == {"damage": 4, "stun": 4}
    lethal = fall_outcome(tok, 10)
    assert lethal.outcomes == {"hurt": F(2, 5), "grievous": F(3, 5)}
    assert lethal.effects["grievous"] == {"damage": 9} and lethal.what == "fall (lethal)"
    # From a rope (difficulty 5): d20 >= 8.
    assert fall_outcome(tok, 5, "hard", 5).outcomes["unharmed"] == F(13, 20)
    assert sum(fall_outcome(tok, 8, "hard", 20).outcomes.values()) == 1
    # Resolver 3d6: 3d6 >= 13 is 56 of 216.
    assert fall_outcome(tok, 5, resolver="3d6").outcomes["unharmed"] == F(7, 27)
    three = systems.create("speedpoints", {"resolver": "3d6"})
    assert three.fall_outcome(tok, 5).outcomes["unharmed"] == F(7, 27)


def test_landing_setting(system: sp.Speedpoints) -> None:
    tok = system.token({})
    water_only = systems.create("speedpoints", {"landing": "water"})
    assert water_only.fall_outcome(tok, 7, "soft").band == "lethal"
    assert water_only.fall_outcome(tok, 7, "water").band == "dangerous"
    never = systems.create("speedpoints", {"landing": "none"})
    assert never.fall_outcome(tok, 4, "water").band == "dangerous"


# --------------------------------------------------------------------------- encumbrance


def test_encumbrance_halves_running_and_swimming(system: sp.Speedpoints) -> None:
    tok = system.token("running=5,swimming=3,airspeed=4,strength=10,load=81")
    rep = system.stats_report(tok)
    assert rep["encumbrance"] == "encumbered"
    assert rep["per_turn"]["walk"] == 2 and rep["per_turn"]["swim"] == 1  # rounded down
    assert rep["per_turn"]["climb"] == 1  # ceil(2 / 2)
    carrying = rep["carrying"]
    assert carrying["strenuous_actions"] is False and carrying["can_fly"] is False
    assert rep["points"] == {"running": 2, "swimming": 1, "airspeed": 0}


def test_overload(system: sp.Speedpoints) -> None:
    tok = system.token("running=5,strength=3,load=11")
    assert tok.state.encumbrance == "immobile"
    assert all(n == 0 for n in system.per_turn(tok).values())
    reason = system.refusal(tok, Terrain())
    assert reason is not None and "cannot be carried" in reason
    strict = systems.create("speedpoints", {"overload": "error"})
    with pytest.raises(StatError, match=r"load=11: strength 3 carries at most 10 kg"):
        strict.token("strength=3,load=11")
    assert strict.token("strength=3,load=10").state.encumbrance == "encumbered"


# --------------------------------------------------------------------------- other modes


def test_swim_crawl_air(system: sp.Speedpoints) -> None:
    tok = system.token("running=5,swimming=0,airspeed=6")
    assert system.refusal(tok, Terrain(name="river", move="swim")) is not None
    assert system.rate(tok, "crawl") == 6  # ceil(5 / 2) spaces
    assert systems.create("speedpoints", {"crawl": "full"}).rate(tok, "crawl") == 10
    assert systems.create("speedpoints", {"crawl": "none"}).rate(tok, "crawl") == 0
    assert system.rate(tok, "air") == 0 and system.refusal(tok, Terrain(move="air")) is not None
    assert system.stats_report(tok)["carrying"]["can_fly"] is True


def test_swimming_combat_figures(system: sp.Speedpoints) -> None:
    rep = system.stats_report(system.token("swimming=3"))
    assert rep["swimming_combat"] == {
        "striking_bonus": 3,
        "grappling_bonus": 3,
        "defence_bonus": 3,
        "striking_stun": "1/2",
        "striking_damage": 1,
    }


def test_stats_command(capsys: pytest.CaptureFixture[str]) -> None:
    args = ["stats", "--system", "speedpoints", "--token", "running=7,strength=12,load=130"]
    assert main([*args, "--json"]) == 0
    rep = json.loads(capsys.readouterr().out)
    assert rep["per_turn"]["walk"] == 3 and rep["encumbrance"] == "encumbered"
    assert rep["carrying"]["capacity_kg"] == 120 and rep["jump"]["run_up"]["length_m"] == 3
    assert main(args) == 0
    assert "encumbrance encumbered" in capsys.readouterr().out


def test_turn_loop_rolls_once_per_climb(tmp_path) -> None:
    """Seed 004: "For each climb make a success roll": a ladder climbed over several turns
    is one climb, one roll in the turn loop (not one a turn)."""
    import tmxtext

    from engine.scenario import load_scenario
    from engine.sim import Simulation

    tmxtext.write(tmp_path / "m.tmx", [".HHHH."], properties={"diagonals": "none"})
    (tmp_path / "s.yaml").write_text(
        "map: m.tmx\nsystem: speedpoints\nturns: 8\ntokens:\n"
        "  - {id: t, cell: [0, 0], stats: {running: 2, climbing: 15}, policy: waypoints, "
        "waypoints: [[5, 0]]}\n"
    )
    sc = load_scenario(tmp_path / "s.yaml")
    for seed in range(5):
        sim = Simulation(sc, seed)
        for _ in range(6):
            sim.play_turn()
        checks = [e for e in sim.events if e.get("type") == "check"]
        assert len(checks) == 1 and checks[0]["what"].startswith("climbing")
        if checks[0]["success"]:
            assert sim.tokens["t"].state.cell == (5, 0)


@pytest.mark.parametrize(
    ("running", "gap_jump", "cells"),
    [(5, "run_up", 2), (6, "run_up", 3), (10, "run_up", 7), (2, "run_up", 0), (10, "standing", 6)],
)
def test_per_turn_gap_is_the_most_gap_cells_whole_jumps_cross(
    running: int, gap_jump: str, cells: int
) -> None:
    """CONTRACT.md: per_turn[mode] is "the most cells of that mode the token crosses in one
    turn when it spends the whole turn moving". Seed 004: "Running is also the maximum
    distance a character can jump with a running start ... Without a running start a
    character can jump half as far", and a turn's "total distance may not exceed their
    running". Spaces of 2 m, one a point: a run-up jump over n gap cells (2n m <= running m)
    takes n + 2 spaces of the turn (the run-up, the gap cells, the landing), a standing one
    (2n m <= running / 2 m) n + 1. Running 5: one run-up jump over 2 (4 spaces; not 5, the
    running, which the base figure gave); 6: 2 + 1; 10: 5 + 2 (7 + 3 spaces); 2: none in a
    turn (3 spaces); standing only (setting gap_jump=standing), 10: 2 + 2 + 2 (9 spaces)."""
    system = systems.create("speedpoints", {"gap_jump": gap_jump})
    rep = system.stats_report(system.token(f"running={running}"))
    assert rep["per_turn"]["gap"] == cells
    assert rep["per_turn_by_pace"]["run"]["gap"] == cells
    assert rep["per_turn"]["walk"] == running  # "one space per turn" a point


def test_per_turn_gap_is_what_a_turn_jumps_in_play(tmp_path) -> None:
    """The figure above in the turn loop: on a line laid out for it, a running-10 token
    crosses 7 gap cells in its first turn (a run-up jump over 5, a standing one over 2) and a
    running-5 token 2 a turn (a run-up jump over 2; the fifth space cannot start another)."""
    import tmxtext

    from engine.scenario import load_scenario
    from engine.sim import Simulation

    for running, row, want in ((10, "..OOOOO.OO.....", 7), (5, "..OO..OO..OO.", 2)):
        tmxtext.write(tmp_path / "m.tmx", [row, "#" * len(row)])
        (tmp_path / "s.yaml").write_text(
            "map: m.tmx\nsystem: speedpoints\nturns: 3\ntokens:\n"
            f"  - {{id: t, cell: [0, 0], stats: {{running: {running}, acrobatics: 30}}, "
            f"policy: waypoints, waypoints: [[{len(row) - 1}, 0]]}}\n"
        )
        sim = Simulation(load_scenario(tmp_path / "s.yaml"), 1)
        sim.play_turn()
        (move,) = [e for e in sim.events if e["type"] == "move"]
        assert sum(row[c] == "O" for c, _ in move["path"][1:]) == want
        assert want == systems.create("speedpoints").per_turn(sim.tokens["t"])["gap"]


def test_per_turn_climb_is_the_fastest_tactical_climb(system: sp.Speedpoints) -> None:
    """Seed 004's climbing table: difficulty 0 "ladder, steep mountain": "½ running (rounded
    up)"; 5 "rope, pole": "1 meter per turn"; 10 and up "not strategically significant".
    per_turn.climb is the most of a turn: the difficulty-0 climb (ceil(5 / 2) = 3 spaces for
    running 5); the rope's half space a turn is in ``climbing``; swim is the swimming points."""
    rep = system.stats_report(system.token("running=5,swimming=2"))
    assert rep["per_turn"]["climb"] == rep["per_turn"]["ladder"] == 3
    rope = next(row for row in rep["climbing"] if row["difficulty"] == 5)
    assert F(rope["spaces_per_turn"]) == F(1, 2)
    assert rep["per_turn"]["swim"] == 2
    slow = system.stats_report(system.token("running=1"))
    assert slow["per_turn"]["climb"] == 1  # ceil(1 / 2): never below the rope's 1/2
