"""Whisperspace (seeds 000 and 001; RULES.md section 1)."""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from engine.checks import BatchResult, CheckResult, field_int, finish_batch, parse_fields
from engine.dice import Dice, Dist, add_constant, keep_highest, keep_lowest

# =============================================================================================
# Checks: 1d12 + modifier >= DC, with bonus and penalty dice (seed 001)
# =============================================================================================

CHECK_DEGREES = ("extreme_success", "success", "failure", "extreme_failure")
"""Whisperspace degrees, best first: margin >= 4, 0..3, -1..-3, <= -4 (seed 001)."""

MAX_NET_DICE = 2
"""Bonus (or penalty) dice stack to at most 2, counted after they cancel (RULES.md 1)."""

# Keys that name the skill modifier: the generic ones and the skills the movement rules roll.
_SKILL_KEYS = ("mod", "modifier", "skill", "athletics", "endurance", "reflex")
_CHECK_KEYS = {
    **{k: "modifier" for k in _SKILL_KEYS},
    "dc": "dc",
    "bonus": "bonus",
    "penalty": "penalty",
}
_CHECK_EXAMPLE = "athletics=2 dc=6 bonus=1"


def degree_for_margin(margin: int) -> str:
    """The degree of a check that beat its DC by ``margin`` (total - DC).

    >>> degree_for_margin(14 - 8), degree_for_margin(4 - 8)  # seed 001's wall, DC 8
    ('extreme_success', 'extreme_failure')
    """
    if margin >= 4:
        return "extreme_success"
    if margin >= 0:
        return "success"
    if margin >= -3:
        return "failure"
    return "extreme_failure"


@dataclass(frozen=True)
class WhisperspaceCheck:
    """A skill check: 1d12 + ``modifier`` against ``dc``.

    Bonus and penalty dice cancel one for one; what is left is capped at 2 (seed 001: "up to
    a maximum of 2"; 4 bonus and 2 penalty leave 2). The roll is then 1 + |net| d12, keeping
    the highest (net bonus) or the lowest (net penalty). ``skill`` is only the key the
    modifier was given under, kept for display.
    """

    modifier: int
    dc: int
    bonus: int = 0
    penalty: int = 0
    skill: str = "mod"

    @property
    def net_dice(self) -> int:
        """Bonus minus penalty dice, after cancelling, capped to -2..+2."""
        return max(-MAX_NET_DICE, min(MAX_NET_DICE, self.bonus - self.penalty))

    def total_dist(self) -> Dist:
        """Exact distribution of the check's total (kept d12 + modifier)."""
        net = self.net_dice
        if net >= 0:
            kept = keep_highest(1 + net, 12)
        else:
            kept = keep_lowest(1 - net, 12)
        return add_constant(kept, self.modifier)

    def outcomes(self) -> dict[str, Fraction]:
        """Exact probability of each degree, best first; sums to exactly 1."""
        out = {name: Fraction(0) for name in CHECK_DEGREES}
        for total, p in self.total_dist().items():
            out[degree_for_margin(total - self.dc)] += p
        return out

    def p_success(self) -> Fraction:
        """Probability of a success or an extreme success."""
        out = self.outcomes()
        return out["extreme_success"] + out["success"]

    def roll(self, dice: Dice) -> CheckResult:
        """Roll the check once, recording the roll with its degree."""
        net = self.net_dice
        event = dice.roll(
            1 + abs(net),
            12,
            self.modifier,
            keep_highest=1 if net > 0 else 0,
            keep_lowest=1 if net < 0 else 0,
        )
        margin = event.total - self.dc
        degree = degree_for_margin(margin)
        event = dice.decide(event, degree)
        return CheckResult(degree, margin >= 0, event.total, margin, (event,))

    def roll_many(self, dice: Dice, n: int) -> BatchResult:
        """Roll ``n`` times at once: the results ``n`` calls of :meth:`roll` would give."""
        net = self.net_dice
        k = 1 + abs(net)
        faces = dice.faces_array(n * k, 12).reshape(n, k)
        # Column-wise maximum/minimum: far quicker than reducing along a short axis.
        kept = faces[:, 0]
        for j in range(1, k):
            kept = np.maximum(kept, faces[:, j]) if net > 0 else np.minimum(kept, faces[:, j])
        totals = kept + self.modifier
        margins = totals - self.dc
        # Degree index 0..3 counts the thresholds the margin falls below.
        index = (margins < 4).astype(np.int8) + (margins < 0) + (margins < -3)
        return finish_batch(dice, self, CHECK_DEGREES, 2, index, totals, margins)

    def __str__(self) -> str:
        return (
            f"{self.skill}={self.modifier} dc={self.dc} bonus={self.bonus} penalty={self.penalty}"
        )


def parse_check(text: str) -> WhisperspaceCheck:
    """Read ``athletics=2 dc=6 bonus=1 penalty=0``.

    The modifier may be given as ``mod=``, ``modifier=``, ``skill=`` or a skill name
    (``athletics``, ``endurance``, ``reflex``); it defaults to 0. ``dc`` is required;
    ``bonus`` and ``penalty`` are dice counts (>= 0, default 0).

    >>> parse_check("athletics=2 dc=6 bonus=1").net_dice
    1
    """
    fields = parse_fields(text, keys=_CHECK_KEYS, example=_CHECK_EXAMPLE)
    skill = fields["modifier"][0].split("=", 1)[0].lower() if "modifier" in fields else "mod"
    return WhisperspaceCheck(
        modifier=field_int(fields, "modifier", example=2, default=0),
        dc=field_int(fields, "dc", example=6, text=text),
        bonus=field_int(fields, "bonus", example=1, default=0, minimum=0),
        penalty=field_int(fields, "penalty", example=1, default=0, minimum=0),
        skill=skill,
    )
