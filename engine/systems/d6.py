"""Star Wars D6 REUP (seed 003; RULES.md section 3)."""

from __future__ import annotations

import bisect
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
from engine.dice import WILD_ONE_SETTINGS, Dice, DieCode, PoolDist, d6_pool_dist
from engine.errors import CheckError

# =============================================================================================
# Checks: a die code against a difficulty number (DN)
# =============================================================================================
#
# The total of the die code (after the multi-action penalty, -1D per action beyond the first)
# meets or beats the DN: success (seed 003: "DN 17, rolls 17, and moves"). A failure is graded
# by its margin DN - total into the seed's Movement Failures bands. The wild die (RULES.md 3,
# a ruling: on by default) explodes on 6; ``wild_one`` says what a 1 on it does.

CHECK_DEGREES = (
    "success",
    "fail_1_3",
    "fail_4_6",
    "fail_7_10",
    "fail_11_15",
    "fail_16_20",
    "fail_21_plus",
)
"""D6 degrees, best first: success, then failures by margin band (seed 003's table)."""

_BAND_TOPS = (3, 6, 10, 15, 20)  # the highest failure margin of each band but the last

MAX_POOL_DICE = 100
"""Largest pool a check accepts (far beyond any character; keeps exact odds quick)."""

_CODE_KEYS = ("dice", "code", "running", "dexterity", "strength", "swimming", "climbing")
_CHECK_KEYS = {
    **{k: "dice" for k in _CODE_KEYS},
    "dn": "dn",
    "actions": "actions",
    "wild": "wild",
    "wild_one": "wild_one",
}
_CHECK_EXAMPLE = "dice=3D+1 dn=13"


def degree_for_margin(margin: int) -> str:
    """The degree of a roll whose total minus DN is ``margin``.

    >>> degree_for_margin(16 - 24)  # seed 003: Rhen rolls 16 against DN 24
    'fail_7_10'
    """
    if margin >= 0:
        return "success"
    return CHECK_DEGREES[1 + bisect.bisect_left(_BAND_TOPS, -margin)]


@dataclass(frozen=True)
class D6Check:
    """Roll ``code`` (less 1D per action beyond the first) against ``dn``.

    ``outcomes()`` is exact for every DN up to ``pool().exact_up_to`` (97 or more: the wild
    die's tail beyond 16 explosions in a row, probability ``6**-16``, is counted at its least
    value; see :data:`engine.dice.WILD_TAIL_ROUNDS`). Above that it is within ``6**-16``.
    """

    code: DieCode
    dn: int
    actions: int = 1
    wild: bool = True
    wild_one: str = "complication"

    @property
    def rolled(self) -> DieCode:
        """The code actually rolled, after the multi-action penalty (never below 0D)."""
        return self.code.with_actions(self.actions)

    def pool(self) -> PoolDist:
        """The exact distribution of the rolled total, with its truncation bounds."""
        return d6_pool_dist(self.rolled, wild=self.wild, wild_one=self.wild_one)

    @property
    def tail_mass(self) -> Fraction:
        """Probability the wild die's truncation approximates (0 when nothing is cut)."""
        return self.pool().tail_mass

    @property
    def exact(self) -> bool:
        """Whether :meth:`outcomes` is exact for this DN (it is for any DN up to 97)."""
        up_to = self.pool().exact_up_to
        return up_to is None or self.dn <= up_to

    def outcomes(self) -> dict[str, Fraction]:
        """Probability of each degree, best first; sums to exactly 1."""
        out = {name: Fraction(0) for name in CHECK_DEGREES}
        for total, p in self.pool().dist.items():
            out[degree_for_margin(total - self.dn)] += p
        return out

    def p_success(self) -> Fraction:
        """Probability the total meets or beats the DN."""
        return self.outcomes()["success"]

    def p_complication(self) -> Fraction:
        """Probability of a complication (a wild die 1 under ``wild_one=complication``)."""
        if self.wild and self.wild_one == "complication" and self.rolled.dice > 0:
            return Fraction(1, 6)
        return Fraction(0)

    def roll(self, dice: Dice) -> CheckResult:
        """Roll once (regular dice, then the wild die's chain), recording the roll."""
        event = dice.roll_code(self.rolled, wild=self.wild, wild_one=self.wild_one)
        margin = event.total - self.dn
        degree = degree_for_margin(margin)
        event = dice.decide(event, degree)
        notes = ("complication",) if event.note == "complication" else ()
        return CheckResult(degree, margin >= 0, event.total, margin, (event,), notes)

    def roll_many(self, dice: Dice, n: int) -> BatchResult:
        """Roll ``n`` times at once: the results ``n`` calls of :meth:`roll` would give."""
        totals = _pool_totals(dice, self.rolled, n, self.wild, self.wild_one)
        margins = totals - self.dn
        bands = 1 + np.searchsorted(_BAND_TOPS, -margins, side="left")
        index = np.where(margins >= 0, 0, bands)
        return finish_batch(dice, self, CHECK_DEGREES, 1, index, totals, margins)

    def __str__(self) -> str:
        text = f"dice={self.code} dn={self.dn} actions={self.actions}"
        if not self.wild:
            return text + " wild=no"
        return text + f" wild=yes wild_one={self.wild_one}"


def _pool_totals(dice: Dice, code: DieCode, n: int, wild: bool, wild_one: str) -> np.ndarray:
    """Totals of ``n`` rolls of ``code``, drawing faces exactly as :meth:`Dice.roll_code`."""
    d = code.dice
    if n <= 0:
        return np.empty(0, dtype=np.int64)
    if d <= 0:
        return np.full(n, code.pips, dtype=np.int64)
    if not wild:
        return dice.faces_array(n * d, 6).reshape(n, d).sum(axis=1) + code.pips
    regular = d - 1
    # A roll is `regular` faces, then the wild chain: faces up to and including the first
    # non-6. Chains vary in length, so peek a generous run of faces, walk it, and only then
    # consume exactly what was used (peek more and walk again in the rare short case).
    estimate = n * regular + (n * 6) // 5 + n // 16 + 64
    while True:
        faces = dice.peek_faces(estimate, 6)
        length = len(faces)
        non6 = np.flatnonzero(faces != 6)
        # next_end[i]: the first position >= i whose face is not a 6 (length if none).
        next_end = np.append(non6, length)[np.searchsorted(non6, np.arange(length))].tolist()
        starts = [0] * n
        pos = 0
        complete = True
        for i in range(n):
            starts[i] = pos
            wild_at = pos + regular
            if wild_at >= length or next_end[wild_at] >= length:
                complete = False
                break
            pos = next_end[wild_at] + 1
        if complete:
            break
        estimate *= 2
    dice.skip_faces(pos, 6)
    start = np.asarray(starts, dtype=np.int64)
    end = np.append(start[1:], pos)
    sums = np.concatenate(([0], np.cumsum(faces)))
    totals = sums[end] - sums[start] + code.pips
    if wild_one == "remove_highest":
        ones = faces[start + regular] == 1
        if regular == 0:
            totals[ones] = code.pips
        else:
            rows = faces[start[ones, None] + np.arange(regular)]
            totals[ones] = rows.sum(axis=1) - rows.max(axis=1) + code.pips
    return totals


def parse_check(text: str) -> D6Check:
    """Read ``dice=3D+1 dn=13`` (+ ``actions=2``, ``wild=no``, ``wild_one=remove_highest``).

    ``dice`` (alias ``code`` or the stat rolled: ``running``, ``dexterity``, ``strength``,
    ``swimming``, ``climbing``) is a die code, pips of 3 or more carried into dice. ``dn`` is
    required; ``actions`` (default 1) takes -1D per action beyond the first.

    >>> str(parse_check("dice=4D dn=10 actions=2").rolled)  # seed 003: -1D, rolls 3D
    '3D'
    """
    fields = parse_fields(text, keys=_CHECK_KEYS, example=_CHECK_EXAMPLE)
    if "dice" not in fields:
        whole = " ".join(text.split())
        raise CheckError(f"check '{whole}': dice is missing, e.g. dice=3D+1")
    token, value = fields["dice"]
    key = token.split("=", 1)[0].lower()
    try:
        code = DieCode.parse(value)
    except CheckError:
        raise CheckError(
            f"check '{token}': {key} must be a die code like 3D+1 (dice, D, +/- pips)"
        ) from None
    if code.dice > MAX_POOL_DICE:
        raise CheckError(f"check '{token}': {key} may have at most {MAX_POOL_DICE}D")
    return D6Check(
        code=code,
        dn=field_int(fields, "dn", example=13, text=text),
        actions=field_int(fields, "actions", example=2, default=1, minimum=1),
        wild=field_bool(fields, "wild", default=True),
        wild_one=field_choice(fields, "wild_one", WILD_ONE_SETTINGS, default="complication"),
    )
