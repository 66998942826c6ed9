"""The generic system (RULES.md section 5), for tables that play something else.

Speed in map units per turn; terrain ``cost`` multiplies time; ``dash`` doubles speed;
the map's diagonal rule. No checks. Every ground mode (walk, crawl, swim, climb, ladder)
moves at speed: a table that wants slower water paints it with a ``cost``. Open ``air``
and ``gap`` cells are for fliers only (there are no jumping rules here).
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any, ClassVar

from engine.systems.base import Param, RuleSystem, Stat, Token

GROUND = ("walk", "crawl", "swim", "climb", "ladder")


class Generic(RuleSystem):
    name = "generic"
    title = "Generic grid movement"
    source = "the project's own; docs/rules.md#generic"
    unit = "ft"
    unit_follows_map = True  # speed is in the map's unit (CONTRACT.md)
    cell_size = Fraction(5)
    turn_name = "turn"
    turn_seconds = Fraction(6)
    actions_per_turn = 1
    paces = ("walk", "dash")
    default_pace = "walk"
    fastest_pace = "dash"
    stats: ClassVar[tuple[Param, ...]] = (
        Stat(
            "speed",
            "number",
            Fraction(30),
            minimum=0,
            unit="map units per turn",
            help="distance per turn in the map's unit",
        ),
        Stat("fly", "bool", False, help="can enter air and gap cells"),
    )

    def rate(self, token: Token, mode: str, pace: str | None = None) -> Fraction:
        speed = Fraction(token["speed"]) * (2 if (pace or self.default_pace) == "dash" else 1)
        if mode in GROUND:
            return speed
        if mode in ("air", "gap"):
            return speed if token["fly"] else Fraction(0)
        return Fraction(0)

    def rates(self, token: Token) -> dict[str, Any]:
        return {"walk": self.rate(token, "walk", "walk"), "dash": self.rate(token, "walk", "dash")}


SYSTEM = Generic
