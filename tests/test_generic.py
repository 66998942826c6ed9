"""The generic system (RULES.md section 5)."""

from fractions import Fraction

from engine import systems
from engine.mapmodel import Terrain


def test_speed_dash_and_fliers() -> None:
    g = systems.create("generic")
    walker = g.token("speed=30")
    assert g.rate(walker, "walk", "walk") == 30 and g.rate(walker, "walk", "dash") == 60
    assert (
        g.rate(walker, "swim") == 30 and g.rate(walker, "air") == 0 and g.rate(walker, "gap") == 0
    )
    flier = g.token({"speed": "15/2", "fly": "yes"})
    assert g.rate(flier, "air", "walk") == Fraction(15, 2)
    assert g.per_turn(walker)["walk"] == 12  # dash, on 5-ft cells
    assert g.cell_check(walker, Terrain(move="climb", difficulty="heroic")) is None


def test_stats_report_numbers() -> None:
    g = systems.create("generic")
    rep = g.stats_report(g.token("speed=35"))
    assert rep["rates"] == {"walk": 35, "dash": 70}
    assert rep["per_turn"]["walk"] == 14 and rep["per_turn"]["air"] == 0
    assert rep["unit"] == "ft" and rep["cell_size"] == 5
    half = g.stats_report(g.token("speed=7.5"))
    assert half["per_turn"]["walk"] == 3 and half["rates"]["walk"] == "15/2"


def test_per_turn_is_a_dash_in_every_mode_the_token_can_use() -> None:
    """CONTRACT.md: per_turn is "the most cells of that mode the token crosses in one turn
    when it spends the whole turn moving"; RULES.md 5: "Speed in map units per turn ..., dash
    = 2 x speed", no checks. Speed 30 on 5-ft cells: 12 cells in every ground mode (a table
    that wants slower water paints it with a cost); air and gap only for a flier ("fly": can
    enter air and gap cells), 12 too."""
    g = systems.create("generic")
    ground = {"walk": 12, "crawl": 12, "swim": 12, "climb": 12, "ladder": 12}
    assert g.per_turn(g.token("speed=30")) == {**ground, "gap": 0, "air": 0, "blocked": 0}
    flier = g.per_turn(g.token("speed=30,fly=true"))
    assert flier == {**ground, "gap": 12, "air": 12, "blocked": 0}
