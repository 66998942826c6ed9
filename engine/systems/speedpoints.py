"""Speedpoints (seed 004, a wiki system whose name is unknown; RULES.md section 4)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from engine.checks import BatchResult, CheckResult, field_int, finish_batch, parse_fields
from engine.dice import Dice, Dist, add_constant, sum_dist
from engine.errors import CheckError

# =============================================================================================
# Checks: the success roll
# =============================================================================================
#
# The seed names no dice for its "success roll" (ruling, RULES.md section 4): the resolver is a
# setting, by default 1d20 + ability >= 10 + difficulty, with the seed's difficulty scale
# 0/5/10/15/20. Any NdS resolver may replace 1d20; the target stays 10 + difficulty, which is
# the resolver's middle for 1d20, 3d6 and 2d10 alike (mean 10.5, 10.5, 11).

CHECK_DEGREES = ("success", "failure")
"""Speedpoints degrees, best first."""

DEFAULT_RESOLVER = "1d20"
"""The success roll's dice unless the check sets ``resolver=`` (ruling)."""

BASE_TARGET = 10
"""The success roll needs ``BASE_TARGET + difficulty`` or more."""

_RESOLVER_RE = re.compile(r"([0-9]*)d([0-9]+)")
_CHECK_KEYS = {
    "ability": "ability",
    "climbing": "ability",
    "acrobatics": "ability",
    "difficulty": "difficulty",
    "diff": "difficulty",
    "resolver": "resolver",
}
_CHECK_EXAMPLE = "ability=4 difficulty=5"


def parse_resolver(text: str) -> tuple[int, int]:
    """Read a resolver ``NdS`` (``d20`` = ``1d20``) as ``(n, sides)``; 1-20 dice of 2-1000."""
    m = _RESOLVER_RE.fullmatch(text.strip().lower())
    if m is None:
        raise ValueError(f"resolver '{text}': expected dice like 1d20 or 3d6")
    n, sides = int(m.group(1) or 1), int(m.group(2))
    if not (1 <= n <= 20 and 2 <= sides <= 1000):
        raise ValueError(f"resolver '{text}': expected 1-20 dice of 2-1000 sides")
    return n, sides


@dataclass(frozen=True)
class SpeedpointsCheck:
    """A success roll: resolver + ``ability`` >= 10 + ``difficulty``."""

    ability: int
    difficulty: int
    resolver: str = DEFAULT_RESOLVER

    @property
    def target(self) -> int:
        """The total needed: 10 + difficulty."""
        return BASE_TARGET + self.difficulty

    def total_dist(self) -> Dist:
        """Exact distribution of resolver + ability."""
        n, sides = parse_resolver(self.resolver)
        return add_constant(sum_dist(n, sides), self.ability)

    def outcomes(self) -> dict[str, Fraction]:
        """Exact probability of success and failure; sums to exactly 1."""
        win = sum(
            (p for total, p in self.total_dist().items() if total >= self.target), Fraction(0)
        )
        return {"success": win, "failure": 1 - win}

    def p_success(self) -> Fraction:
        """Probability of a success."""
        return self.outcomes()["success"]

    def roll(self, dice: Dice) -> CheckResult:
        """Roll once, recording the roll with its degree."""
        n, sides = parse_resolver(self.resolver)
        event = dice.roll(n, sides, self.ability)
        margin = event.total - self.target
        degree = "success" if margin >= 0 else "failure"
        event = dice.decide(event, degree)
        return CheckResult(degree, margin >= 0, event.total, margin, (event,))

    def roll_many(self, dice: Dice, n: int) -> BatchResult:
        """Roll ``n`` times at once: the results ``n`` calls of :meth:`roll` would give."""
        k, sides = parse_resolver(self.resolver)
        totals = dice.faces_array(n * k, sides).reshape(n, k).sum(axis=1) + self.ability
        margins = totals - self.target
        index = (margins < 0).astype(np.int8)
        return finish_batch(dice, self, CHECK_DEGREES, 1, index, totals, margins)

    def __str__(self) -> str:
        return f"ability={self.ability} difficulty={self.difficulty} resolver={self.resolver}"


def parse_check(text: str) -> SpeedpointsCheck:
    """Read ``ability=4 difficulty=5`` (+ ``resolver=3d6``).

    ``ability`` (alias ``climbing``, ``acrobatics``) defaults to 0; ``difficulty`` (the
    seed's 0/5/10/15/20 scale, alias ``diff``) is required.

    >>> parse_check("ability=4 difficulty=5").p_success()  # d20 >= 11
    Fraction(1, 2)
    """
    fields = parse_fields(text, keys=_CHECK_KEYS, example=_CHECK_EXAMPLE)
    resolver = DEFAULT_RESOLVER
    if "resolver" in fields:
        token, value = fields["resolver"]
        try:
            n, sides = parse_resolver(value)
        except ValueError:
            raise CheckError(
                f"check '{token}': resolver must be dice like 1d20 or 3d6 (1-20 dice, 2-1000 sides)"
            ) from None
        resolver = f"{n}d{sides}"
    return SpeedpointsCheck(
        ability=field_int(fields, "ability", example=4, default=0),
        difficulty=field_int(fields, "difficulty", example=5, text=text),
        resolver=resolver,
    )
