"""Issue 17: seed rules that no command reached, each now shown by ``tacgrid``.

Every expected figure is worked out by hand from the seed line quoted beside it (seeds in
/work/shared/seeds, rulings in RULES.md); the commands run in-process through ``main``.
"""

from __future__ import annotations

import json
from fractions import Fraction as F
from pathlib import Path
from typing import Any

import pytest

from engine import systems
from engine.cli import main
from engine.dice import Dice

ROOT = Path(__file__).resolve().parents[1]


def run_json(capsys: pytest.CaptureFixture[str], *argv: str) -> dict[str, Any]:
    assert main([*argv, "--json"]) == 0
    doc: dict[str, Any] = json.loads(capsys.readouterr().out)
    return doc


def exact(doc: dict[str, Any]) -> dict[str, F]:
    return {k: F(v) for k, v in doc["exact"].items()}


def fails(capsys: pytest.CaptureFixture[str], *argv: str) -> str:
    assert main(list(argv)) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    return err


# ============================================================================ Whisperspace


def test_whisperspace_fall_odds_near(capsys) -> None:
    """Seed 000: "Near | 1d12"; "1-3 | No damage. 4-6 | Take 1 damage. 7-8 | Take 2 damage.
    9-10 | ... 11-12 | ..." RULES.md 1: "<= 30 Near (0)". 25 ft is Near: each face 1/12."""
    d = run_json(capsys, "odds", "--system", "whisperspace", "fall=25")
    assert exact(d) == {
        "1-3": F(3, 12),
        "4-6": F(3, 12),
        "7-8": F(2, 12),
        "9-10": F(2, 12),
        "11-12": F(2, 12),
        "13-15": F(0),
        "16+": F(0),
    }
    assert F(d["p_success_exact"]) == F(1, 4)  # no damage


def test_whisperspace_fall_odds_melee_and_long(capsys) -> None:
    """Seed 000: "Melee | 1d12 -2" (RULES.md 1: "Result <= 3 nothing (this includes results
    below 1)"): -1..3 is five faces; "Long | 1d12 +4" (<= 120 ft): 5..16, "16+" one face."""
    melee = exact(run_json(capsys, "odds", "--system", "whisperspace", "fall=5"))
    assert melee["1-3"] == F(5, 12) and melee["4-6"] == F(3, 12) and melee["11-12"] == 0
    long = exact(run_json(capsys, "odds", "--system", "whisperspace", "fall=100"))
    assert long == {
        "1-3": F(0),
        "4-6": F(2, 12),  # 5, 6
        "7-8": F(2, 12),
        "9-10": F(2, 12),
        "11-12": F(2, 12),
        "13-15": F(3, 12),
        "16+": F(1, 12),
    }
    # RULES.md 1: "<= 5 Melee (-2), <= 15 Very Near (-1)": 6 ft is already Very Near
    assert run_json(capsys, "odds", "--system", "whisperspace", "fall=6")["check"].startswith(
        "fall=6 (Very Near: 1d12-1)"
    )


def test_whisperspace_fall_table_in_stats(capsys) -> None:
    """Seed 000: "Extreme | 1d12 +9": 10..21, so "16+" takes 16..21, six faces of twelve."""
    d = run_json(capsys, "stats", "--system", "whisperspace")
    rows = {row["band"]: row for row in d["fall_severity"]}
    assert [r["band"] for r in d["fall_severity"]] == [
        "melee", "very_near", "near", "medium", "long", "very_long", "extreme",
    ]  # fmt: skip
    extreme = {k: F(v) for k, v in rows["extreme"]["outcomes"].items()}
    assert extreme["16+"] == F(1, 2) and extreme["9-10"] == F(1, 12)
    assert rows["medium"]["roll"] == "1d12+2" and rows["medium"]["up_to_ft"] == 60
    assert d["fall_outcomes"]["13-15"] == "6 damage, Unconscious"


def test_whisperspace_fall_roll_is_an_event(capsys) -> None:
    d = run_json(capsys, "roll", "--system", "whisperspace", "fall=25", "--seed", "7")
    (event,) = d["events"]
    assert event["expression"] == "1d12" and d["total"] == event["total"]
    assert d["degree"] in ("1-3", "4-6", "7-8", "9-10", "11-12")
    fails(capsys, "odds", "--system", "whisperspace", "fall=25", "athletics=2")
    fails(capsys, "odds", "--system", "whisperspace", "fall=-5")


def test_whisperspace_fall_batch_matches_single_rolls() -> None:
    check = systems.load_check("whisperspace", "fall=100")
    one = [check.roll(Dice(3)).degree for _ in range(1)]
    batch = check.roll_many(Dice(3), 1)
    assert batch.degree(0) == one[0]
    many = check.roll_many(Dice(11), 4000).counts()
    assert many["1-3"] == 0 and sum(many.values()) == 4000


def test_whisperspace_asphyxiation_check(capsys) -> None:
    """Seed 000: "Extreme Failure: gain the Asphyxiating condition. If the character is close
    to the surface, a successful Asphyxiation check immediately removes this condition." The
    seeds give it no DC: the project reads it as the swimming check, "Athletics (DC6)"
    ("Encumbrance increases the DC by +2"). 1d12 + 2 >= 6: faces 4..12, 9 of 12."""
    d = run_json(capsys, "odds", "--system", "whisperspace", "asphyxiation", "athletics=2")
    assert d["check"] == "asphyxiation athletics=2 dc=6 bonus=0 penalty=0"
    assert F(d["p_success_exact"]) == F(9, 12)
    # phys 0: capacity 5; six Light gear (bulk 1 each) is 6 > 5: encumbered, DC 6 + 2 = 8
    s = run_json(capsys, "stats", "--system", "whisperspace", "--token", "items=light*6")
    assert s["asphyxiation_check"]["target"] == "DC 8"
    assert F(s["asphyxiation_check"]["p_success_exact"]) == F(5, 12)  # faces 8..12
    after = systems.create("whisperspace")
    tok = after.token("athletics=2")
    tok = tok.moved(mode="swim", conditions=frozenset({"asphyxiating"}))
    assert not after.apply_check(tok, "asphyxiation", "success").state.has("asphyxiating")


def test_whisperspace_items_bulk_and_encumbrance(capsys, tmp_path) -> None:
    """Seed 000's item table: "Light gear | 1", "Medium gear | 2", "Heavy gear | 3+",
    "Storage crates, containers | 4-5 (or more)", "Incapacitated Teammate | 30". RULES.md 1:
    capacity 5 + 5 x PHYS; > capacity encumbered, > 2 x heavy, > 3 x prone and Immobile."""
    d = run_json(
        capsys,
        "stats",
        "--system",
        "whisperspace",
        "--token",
        "phys=1,items=light*3+medium+crate:5",
    )
    assert d["items_bulk"] == 3 * 1 + 2 + 5 and d["bulk"] == 10
    assert d["capacity"] == 10 and d["encumbrance"] == "none"  # 10 is not beyond 10
    assert [i["item"] for i in d["items"]] == ["light", "medium", "crate"]
    d = run_json(capsys, "stats", "--system", "whisperspace", "--token", "phys=1,items=teammate")
    assert d["bulk"] == 30 and d["encumbrance"] == "heavy"  # 30 > 20, not > 30
    d = run_json(
        capsys, "stats", "--system", "whisperspace", "--token", "phys=1,bulk=1,items=teammate"
    )
    assert d["bulk"] == 31 and d["encumbrance"] == "immobile"
    # YAML token file: a list of names
    spec = tmp_path / "tok.yaml"
    spec.write_text("phys: 1\nitems: [light, light, medium, 'heavy:4']\n")
    d = run_json(capsys, "stats", "--system", "whisperspace", "--token", str(spec))
    assert d["items_bulk"] == 1 + 1 + 2 + 4
    # bad names and bulks below the seed's figure are one line, exit 2
    assert "items: light, medium" in fails(
        capsys, "stats", "--system", "whisperspace", "--token", "items=rifle"
    )
    assert ">= 3" in fails(capsys, "stats", "--system", "whisperspace", "--token", "items=heavy:2")


# ============================================================================ Mythmaster


def test_mythmaster_sneak_pace(capsys) -> None:
    """Seed 002: "To move while using the Sneaking skill, you must expend two actions to move
    your Base Move, this means the furthest your can move while sneaking in a single turn is
    your Base Move - though you will still have an action remaining". Adaptability 14: BM 6
    (RULES.md 2's example), 6 hexes of 2 m = 12 m a turn, BM/2 = 3 hexes an action."""
    mm = systems.create("mythmaster")
    tok = mm.token("")
    assert "sneak" in mm.paces
    assert mm.rate(tok, "walk", "sneak") == 12
    dash = mm.token("dash=true")
    assert mm.rate(dash, "walk", "sneak") == 12  # Dash doubles run and sprint only
    d = run_json(capsys, "stats", "--system", "mythmaster")
    assert d["sneak"] == {
        "actions": 2,
        "hexes_per_action": 3,
        "hexes_per_turn": 6,
        "actions_left": 1,
    }


def test_mythmaster_sneak_pace_in_reach(capsys) -> None:
    walk = run_json(
        capsys, "reach", str(ROOT / "maps/hex_flat.tmx"), "--system", "mythmaster",
        "--from", "0,0", "--pace", "walk",
    )  # fmt: skip
    sneak = run_json(
        capsys, "reach", str(ROOT / "maps/hex_flat.tmx"), "--system", "mythmaster",
        "--from", "0,0", "--pace", "sneak",
    )  # fmt: skip
    sprint = run_json(
        capsys, "reach", str(ROOT / "maps/hex_flat.tmx"), "--system", "mythmaster",
        "--from", "0,0", "--pace", "sprint",
    )  # fmt: skip
    # one action walking is BM; sneaking two actions is BM too: the same cells
    assert len(sneak["cells"]) == len(walk["cells"]) < len(sprint["cells"])


def test_mythmaster_carrying_a_body(capsys) -> None:
    """Seed 002: "four characters working together to carry a wounded 80kg ally off the
    battlefield are each considered to be carrying 20 bulk" and "four characters with a
    stretcher could carry the same wounded ally ... only needing to carry 10 bulk each".
    RULES.md 2: Physical 12, bulk 20: BF = ceil(20/12) - 1 = 1, BM 6 - ceil(6 x 1 / 10) = 5."""
    d = run_json(capsys, "stats", "--system", "mythmaster", "--token", "body_weight=80,carriers=4")
    assert F(d["body"]["share"]) == 20 and d["bulk_factor"] == 1
    assert d["effective_base_move"] == 5 and d["rates"]["walk"] == 10  # 5 hexes x 2 m
    d = run_json(
        capsys, "stats", "--system", "mythmaster", "--token",
        "body_weight=80,carriers=4,stretcher=true",
    )  # fmt: skip
    assert F(d["body"]["share"]) == 10 and d["bulk_factor"] == 0 and d["effective_base_move"] == 6
    # "the weight of the person (but not their equipment) is halved": (80/2 + 8) / 4 = 12
    d = run_json(
        capsys, "stats", "--system", "mythmaster", "--token",
        "body_weight=80,body_gear=8,carriers=4,stretcher=true",
    )  # fmt: skip
    assert F(d["body"]["body_bulk"]) == 48 and F(d["body"]["share"]) == 12
    # "Movement speed while carrying a body is that of the slowest person."
    d = run_json(
        capsys, "stats", "--system", "mythmaster", "--token",
        "body_weight=80,carriers=4,stretcher=true,group_base_move=4",
    )  # fmt: skip
    assert d["body"]["moves_at"] == 4 and d["body"]["slowest"] == "another"
    assert d["rates"]["walk"] == 8
    # "to a maximum of four"
    assert "carriers" in fails(
        capsys, "stats", "--system", "mythmaster", "--token", "body_weight=80,carriers=5"
    )


def test_mythmaster_take_off_at_ground_speed(capsys) -> None:
    """Seed 002: "If taking off following a turn in which the last Action spent was to move,
    their initial flying speed is equal to the movement speed from the previous turn." A run
    is 2 x BM = 12 hexes a turn (BM 6); the stats list each pace's take-off speed."""
    d = run_json(
        capsys, "fly", str(ROOT / "maps/hex_flat.tmx"), "--system", "mythmaster",
        "--token", "flyer=true", "--from", "0,0", "--to", "9,0", "--ground-pace", "run",
    )  # fmt: skip
    assert d["take_off_speed"] == 12 and d["plan"][0]["actions"][0] == "take_off"
    still = run_json(
        capsys, "fly", str(ROOT / "maps/hex_flat.tmx"), "--system", "mythmaster",
        "--token", "flyer=true", "--from", "0,0", "--to", "9,0",
    )  # fmt: skip
    assert d["turns"] <= still["turns"]
    s = run_json(capsys, "stats", "--system", "mythmaster")
    assert s["take_off_speed"] == {"walk": 6, "run": 12, "sprint": 18, "sneak": 6}
    fails(
        capsys, "fly", str(ROOT / "maps/hex_flat.tmx"), "--system", "mythmaster",
        "--token", "flyer=true", "--from", "0,0", "--to", "9,0", "--ground-pace", "run",
        "--speed", "6",
    )  # fmt: skip


# ============================================================================ D6


def test_d6_maneuver_adds_to_the_dn(capsys) -> None:
    """Seed 003: "Add a modifier for stunts while moving: +1-5: Minor coordination ...":
    a minor stunt of +4 on a Moderate 13 is rolled against 17."""
    with_stunt = run_json(capsys, "odds", "--system", "d6", "dice=3D", "dn=13", "maneuver=4")
    plain = run_json(capsys, "odds", "--system", "d6", "dice=3D", "dn=17")
    assert with_stunt["exact"] == plain["exact"]
    assert "minor 1-5" in fails(capsys, "odds", "--system", "d6", "dice=3D", "dn=13", "maneuver=x")
    d = run_json(capsys, "stats", "--system", "d6")
    assert d["maneuvers"][0] == {"name": "minor", "modifier": [1, 5], "for": "minor coordination"}


def _wild_at_least(k: int) -> F:
    """P(an exploding d6 >= k): the wild die rerolls and adds on a 6 (RULES.md 3)."""
    if k <= 1:
        return F(1)
    if k <= 6:
        return F(7 - k, 6)
    return F(1, 6) * _wild_at_least(k - 6)


def test_d6_long_march_terrain_checks(capsys) -> None:
    """Seed 003: "Long Marches (Cruising) - Very Easy stamina every 3 hours" and "Also roll
    terrain movement checks every 3 hours (or 2 hours if forced march)". 22 km cruising at
    Move 10 is 2200 rounds of 5 s = 11000 s: one check at 3 h (forced: one at 2 h). Cruising
    in Difficult terrain rolls at Difficult, DN 18 (RULES.md 3), Dexterity 3D with the wild
    die; the Very Easy stamina roll (DN 3) of 3D never fails."""
    d = run_json(capsys, "stats", "--system", "d6", "--distance", "22000", "--terrain", "difficult")
    march = d["long_distance"]["speeds"]["cruising"]
    forced = d["long_distance"]["speeds"]["cruising_forced"]
    assert [c["at_s"] for c in march["checks"]] == [10800]
    assert [c["at_s"] for c in forced["checks"]] == [7200]
    two = {a + b: F(0) for a in range(1, 7) for b in range(1, 7)}
    for a in range(1, 7):
        for b in range(1, 7):
            two[a + b] += F(1, 36)
    p18 = sum((p * _wild_at_least(18 - s) for s, p in two.items()), F(0))
    assert F(march["p_arrive_exact"]) == p18
    assert march["checks"][0]["terrain_p_success"] == float(p18)
    # sprints and runs have no terrain checks (the seed gives them under long marches)
    assert "terrain" not in d["long_distance"]["speeds"]["high"]
    assert "--distance" in fails(capsys, "stats", "--system", "d6", "--terrain", "difficult")
    fails(capsys, "stats", "--system", "d6", "--distance", "100", "--terrain", "muddy")


def test_d6_overload_leads_to_stamina(capsys) -> None:
    """Seed 003: "Strength 3D+2 = (3x3) + 2 = 11 medium items" and "Overloaded characters may
    trigger long-distance movement and stamina rules"; RULES.md 3: the schedule "all-out
    every minute = 12 rounds, high every 10 minutes, cruising every 3 hours", first roll Very
    Easy."""
    d = run_json(
        capsys, "stats", "--system", "d6", "--token", "strength=3D+2,items=12",
        "--set", "encumbrance=true",
    )  # fmt: skip
    o = d["overload"]
    assert o["overloaded"] and o["rolls_stamina"] and o["first_level"] == "very_easy"
    assert o["every_s"]["all_out"] == 60 and o["every_s"]["high"] == 600
    assert o["every_s"]["cruising"] == 3 * 3600
    d = run_json(
        capsys, "stats", "--system", "d6", "--token", "strength=3D+2,items=11",
        "--set", "encumbrance=true",
    )  # fmt: skip
    assert not d["overload"]["overloaded"] and d["overload"]["every_s"] is None


# ============================================================================ Speedpoints


def test_speedpoints_vertical_jump() -> None:
    """Seed 004: "A character can jump vertically half as high as they can jump horizontally
    (half of their running with a running start, a quarter of their running without it.) If
    the character can barely make a vertical leap (within 1 meter of their maximum jumping
    height) they must make a success roll using their acrobatics ability". Running 5: 5/2 m
    with a run-up, 5/4 standing."""
    from engine.systems.speedpoints import vertical_jump_check

    sp = systems.create("speedpoints")
    tok = sp.token("running=5,acrobatics=2")
    rep = sp.stats_report(tok)["vertical_jump"]
    assert F(rep["run_up"]["highest_m"]) == F(5, 2) and F(rep["standing"]["highest_m"]) == F(5, 4)
    assert F(rep["run_up"]["sure_up_to_m"]) == F(3, 2)
    assert vertical_jump_check(tok, 1, True) is None  # 1.5 m short: no roll
    barely = vertical_jump_check(tok, 2, True)
    assert barely is not None and barely.check is not None
    assert barely.p_success == F(3, 20)  # 1d20 + 2 >= 10 + 10: faces 18..20
    high = vertical_jump_check(tok, 3, True)
    assert high is not None and high.refusal and high.p_success == 0
    assert vertical_jump_check(tok, F(3, 2), False) is not None  # standing: 5/4 < 3/2
    assert vertical_jump_check(tok, F(3, 2), False).refusal  # type: ignore[union-attr]


def test_speedpoints_one_quick_action_while_climbing(capsys) -> None:
    """Seed 004: "While a character climbs he can move and perform one quick action per
    turn.\""""
    d = run_json(capsys, "stats", "--system", "speedpoints")
    assert d["climbing_actions"]["quick_actions_per_turn"] == 1


def test_speedpoints_fall_odds(capsys) -> None:
    """RULES.md 4: "up to 3 m safe; over 3 m dangerous; over 6 m lethal; the landing's `fall`
    property may soften it one step. Roll: ... (10 when not from a climb) ... Dangerous:
    success unharmed, failure damage and stun equal to toughness. Lethal: success damage and
    stun equal to toughness, failure damage equal to stamina." 1d20 + 3 >= 20: 4 faces."""
    hard5 = exact(run_json(capsys, "odds", "--system", "speedpoints", "fall=5", "ability=3"))
    assert hard5 == {"unharmed": F(1, 5), "hurt": F(4, 5), "grievous": F(0)}
    hard7 = exact(run_json(capsys, "odds", "--system", "speedpoints", "fall=7", "ability=3"))
    assert hard7 == {"unharmed": F(0), "hurt": F(1, 5), "grievous": F(4, 5)}
    soft7 = exact(
        run_json(capsys, "odds", "--system", "speedpoints", "fall=7", "ability=3", "surface=soft")
    )
    assert soft7 == hard5  # softened one step: dangerous
    three = exact(run_json(capsys, "odds", "--system", "speedpoints", "fall=3"))
    assert three["unharmed"] == 1
    hard = exact(
        run_json(
            capsys, "odds", "--system", "speedpoints", "fall=5", "surface=soft", "landing=none"
        )
    )
    assert hard["hurt"] == F(19, 20)  # landing=none: no softening; 1d20 >= 20 fails 19 of 20
    d = run_json(capsys, "stats", "--system", "speedpoints", "--token", "acrobatics=2,agility=1")
    lethal = d["fall_odds"]["by_height"]["over_6_m"]
    assert lethal["hard"]["band"] == "lethal" and lethal["water"]["band"] == "dangerous"
    assert F(lethal["hard"]["outcomes"]["hurt"]) == F(4, 20)  # 1d20 + 3 >= 20


def test_speedpoints_fall_roll_and_batch() -> None:
    check = systems.load_check("speedpoints", "fall=7 ability=3")
    one = check.roll(Dice(5))
    assert one.degree in ("hurt", "grievous") and not one.success
    again = systems.load_check("speedpoints", str(check))
    assert str(again) == str(check)
    counts = check.roll_many(Dice(5), 2000).counts()
    assert counts["unharmed"] == 0 and counts["hurt"] + counts["grievous"] == 2000
