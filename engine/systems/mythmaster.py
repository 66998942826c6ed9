"""Mythmaster (seed 002; RULES.md section 2)."""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from engine.checks import (
    BatchResult,
    CheckResult,
    field_bool,
    field_choice,
    field_int,
    finish_batch,
    parse_fields,
)
from engine.dice import Dice, RollEvent, sum_dist

# =============================================================================================
# Checks: the 21 Challenge (21C) and the Versus Challenge
# =============================================================================================
#
# 21C: 2d10 + skill + adjustment (- Bulk Factor for bulk-affected skills) >= 21. A natural 20
# (both dice 10) always succeeds, critically if the roller has the skill; a natural 2 (both
# dice 1) always fails, as a catastrophe (RULES.md section 2).
#
# Versus Challenge (ruling: seed 002 names it without its procedure). Both sides roll 2d10 and
# add their modifier; the roller succeeds by beating the opponent's total. Ties go to the
# opponent by default (setting ``tie = opponent | roller``). The roller's naturals decide as in
# a 21C before totals are compared; the opponent's dice only give a total.

TARGET = 21
"""The 21 Challenge's target number."""

TIE_SETTINGS = ("opponent", "roller")
"""Who wins a Versus Challenge tie (ruling; default ``opponent``)."""

_DEGREES_TRAINED = ("critical_success", "success", "failure", "catastrophe")
_DEGREES_UNTRAINED = ("success", "failure", "catastrophe")

_SKILL_KEYS = ("skill", "climbing", "swimming", "sneaking", "acrobatics", "athletics")
_CHECK_KEYS = {
    **{k: "skill" for k in _SKILL_KEYS},
    "adjust": "adjust",
    "adjustment": "adjust",
    "bf": "bulk_factor",
    "bulk_factor": "bulk_factor",
    "versus": "versus",
    "vs": "versus",
    "tie": "tie",
    "has_skill": "has_skill",
}
_CHECK_FLAGS = {"untrained": ("has_skill", "no"), "trained": ("has_skill", "yes")}
_CHECK_EXAMPLE = "skill=15 adjust=-2"


@dataclass(frozen=True)
class MythmasterCheck:
    """A 21 Challenge, or with ``versus`` a Versus Challenge against that total modifier.

    The roller adds ``skill + adjust - bulk_factor``. ``has_skill`` False (an untrained roll)
    turns a natural 20's critical into a plain success, and drops ``critical_success`` from
    the degrees.
    """

    skill: int
    adjust: int = 0
    bulk_factor: int = 0
    has_skill: bool = True
    versus: int | None = None
    tie: str = "opponent"

    @property
    def modifier(self) -> int:
        """What the roller adds to 2d10."""
        return self.skill + self.adjust - self.bulk_factor

    @property
    def degrees(self) -> tuple[str, ...]:
        """This check's degrees, best first."""
        return _DEGREES_TRAINED if self.has_skill else _DEGREES_UNTRAINED

    def decide(self, a: int, b: int, opponent_total: int | None = None) -> str:
        """The degree of roller dice ``a``, ``b`` (and, versus, the opponent's total)."""
        if a == b == 10:
            return "critical_success" if self.has_skill else "success"
        if a == b == 1:
            return "catastrophe"
        total = a + b + self.modifier
        if opponent_total is None:
            return "success" if total >= TARGET else "failure"
        if total > opponent_total or (total == opponent_total and self.tie == "roller"):
            return "success"
        return "failure"

    def outcomes(self) -> dict[str, Fraction]:
        """Exact probability of each degree, best first; sums to exactly 1."""
        out = {name: Fraction(0) for name in self.degrees}
        opponent = (
            {TARGET: Fraction(1)}  # a fixed target: opponent_total unused below
            if self.versus is None
            else sum_dist(2, 10)
        )
        pair = Fraction(1, 100)
        for a in range(1, 11):
            for b in range(1, 11):
                for opp_dice, q in opponent.items():
                    opp_total = None if self.versus is None else opp_dice + self.versus
                    out[self.decide(a, b, opp_total)] += pair * q
        return out

    def p_success(self) -> Fraction:
        """Probability of a success (a critical success included)."""
        return sum(
            (p for name, p in self.outcomes().items() if name.endswith("success")), Fraction(0)
        )

    def roll(self, dice: Dice) -> CheckResult:
        """Roll once (the roller's 2d10 first, then the opponent's), recording the rolls."""
        event = dice.roll(2, 10, self.modifier)
        a, b = event.faces
        events: tuple[RollEvent, ...]
        if self.versus is None:
            target = TARGET
            degree = self.decide(a, b)
            events = (dice.decide(event, degree),)
        else:
            opp = dice.roll(2, 10, self.versus)
            target = opp.total
            degree = self.decide(a, b, target)
            events = (dice.decide(event, degree), dice.decide(opp, f"opponent: {degree}"))
        success = degree.endswith("success")
        return CheckResult(degree, success, event.total, event.total - target, events)

    def roll_many(self, dice: Dice, n: int) -> BatchResult:
        """Roll ``n`` times at once: the results ``n`` calls of :meth:`roll` would give."""
        per_roll = 2 if self.versus is None else 4
        faces = dice.faces_array(n * per_roll, 10).reshape(n, per_roll)
        a, b = faces[:, 0], faces[:, 1]
        totals = a + b + self.modifier
        if self.versus is None:
            targets = np.full(n, TARGET, dtype=np.int64)
            won = totals >= TARGET
        else:
            targets = faces[:, 2] + faces[:, 3] + self.versus
            won = (totals > targets) | ((totals == targets) & (self.tie == "roller"))
        top = (a == 10) & (b == 10)
        bottom = (a == 1) & (b == 1)
        degrees = self.degrees
        code = {name: i for i, name in enumerate(degrees)}
        index = np.where(won, code["success"], code["failure"])
        index = np.where(top, code["critical_success" if self.has_skill else "success"], index)
        index = np.where(bottom, code["catastrophe"], index)
        n_success = 2 if self.has_skill else 1
        return finish_batch(dice, self, degrees, n_success, index, totals, totals - targets)

    def __str__(self) -> str:
        parts = [f"skill={self.skill}", f"adjust={self.adjust}"]
        if self.bulk_factor:
            parts.append(f"bf={self.bulk_factor}")
        if self.versus is not None:
            parts.append(f"versus={self.versus} tie={self.tie}")
        if not self.has_skill:
            parts.append("untrained")
        return " ".join(parts)


def parse_check(text: str) -> MythmasterCheck:
    """Read ``skill=15 adjust=-2`` (+ ``bf=``, ``versus=``, ``tie=``, ``untrained``).

    ``skill`` (or a skill name such as ``climbing``) is required; ``adjust`` (the difficulty
    adjustment, alias ``adjustment``) and ``bf`` (Bulk Factor, subtracted) default to 0. The
    roller has the skill unless the flag ``untrained`` (or ``has_skill=no``) says otherwise.

    >>> parse_check("skill=15 adjust=-2").p_success()  # seed 002's climber: 79 in 100
    Fraction(79, 100)
    """
    fields = parse_fields(text, keys=_CHECK_KEYS, flags=_CHECK_FLAGS, example=_CHECK_EXAMPLE)
    versus = field_int(fields, "versus", example=12, default=0) if "versus" in fields else None
    return MythmasterCheck(
        skill=field_int(fields, "skill", example=15, text=text),
        adjust=field_int(fields, "adjust", example=-2, default=0),
        bulk_factor=field_int(fields, "bulk_factor", example=2, default=0, minimum=0, maximum=10),
        has_skill=field_bool(fields, "has_skill", default=True),
        versus=versus,
        tie=field_choice(fields, "tie", TIE_SETTINGS, default="opponent"),
    )
