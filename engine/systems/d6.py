"""Star Wars D6 REUP (seed 003; RULES.md section 3).

Over 800 lines on purpose: a rule system is one plug-in module (adding a system touches no
other file; ARCHITECTURE.md), and its sections follow the seed's chapters.

Sections: the check (a die code against a difficulty number), exact tails, speeds and
acceleration, difficulty and what each speed makes of it, failures / collisions / maneuvers,
long-distance stamina, and the :class:`D6` rule system that ties them to tokens and cells.
"""

from __future__ import annotations

import bisect
import functools
import math
from collections.abc import Mapping
from dataclasses import dataclass, replace
from fractions import Fraction
from typing import Any, ClassVar

from engine.checks import (
    BatchResult,
    CheckResult,
    check_result,
    field_bool,
    field_choice,
    field_int,
    finish_batch,
    parse_fields,
)
from engine.dice import (
    WILD_ONE_SETTINGS,
    Dice,
    DieCode,
    PoolDist,
    d6_pool_dist,
    prob_at_least,
    sum_dist,
    sum_minus_max_counts,
)
from engine.errors import ArgumentError, CheckError, StatError, did_you_mean
from engine.lazy import numpy as np
from engine.systems.base import (
    ActSpec,
    CellCheck,
    Param,
    RuleSystem,
    Setting,
    Stat,
    Token,
    TokenState,
    exact,
    jsonable,
)
from engine.terrain import DIFFICULTIES, Terrain

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
    "maneuver": "maneuver",
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


@functools.lru_cache(maxsize=64)
def _damage_code(n: int) -> DieCode:
    """``nD`` (collision damage), one object per ``n`` (codes are frozen): the dice keep a
    code's roll expression by the object."""
    return DieCode(n)


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

    @functools.cached_property
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
        return dict(_outcomes(self))

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
        dn = self.dn
        event = dice.roll_code(
            self.rolled,
            wild=self.wild,
            wild_one=self.wild_one,
            decide=lambda total: degree_for_margin(total - dn),
        )
        margin = event.total - dn
        notes = ("complication",) if event.note == "complication" else ()
        return check_result(event.decided, margin >= 0, event.total, margin, (event,), notes)

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


@functools.lru_cache(maxsize=4096)
def _outcomes(check: D6Check) -> tuple[tuple[str, Fraction], ...]:
    """Degree odds of a check, memoised: the turn loop and the path search build the same
    few checks over and over, and summing a pool's exact distribution is not free."""
    out = {name: Fraction(0) for name in CHECK_DEGREES}
    for total, p in check.pool().dist.items():
        out[degree_for_margin(total - check.dn)] += p
    return tuple(out.items())


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
        dn=field_int(fields, "dn", example=13, text=text) + maneuver_modifier(fields),
        actions=field_int(fields, "actions", example=2, default=1, minimum=1),
        wild=field_bool(fields, "wild", default=True),
        wild_one=field_choice(fields, "wild_one", WILD_ONE_SETTINGS, default="complication"),
    )


# =============================================================================================
# Exact tails: P(total >= t) for any t, past the wild die's truncation
# =============================================================================================
#
# D6Check.p_success is exact for every DN up to 97 or so. Long-distance stamina checks climb one
# level (10 numbers above Heroic) per roll, so a long sprint asks DNs far beyond that; these
# closed forms keep every chance exact there too.


def _wild_at_least(w: int) -> Fraction:
    """``P(W >= w)`` for the wild die W alone (6 rolls again and adds, without end).

    With ``w - 1 = 6q + m`` (``0 <= m <= 5``): ``(6 - m) / 6**(q + 1)``.
    """
    if w <= 1:
        return Fraction(1)
    q, m = divmod(w - 1, 6)
    return Fraction(6 - m, 6 ** (q + 1))


@functools.lru_cache(maxsize=64)
def _sum_minus_max(n: int) -> tuple[tuple[int, Fraction], ...]:
    """Distribution of the sum of ``n`` d6 less their highest (0 for ``n = 0``)."""
    counts = sum_minus_max_counts(n)
    return tuple((v, Fraction(c, 6**n)) for v, c in sorted(counts.items()))


def p_at_least(
    code: DieCode, target: int, *, wild: bool = True, wild_one: str = "complication"
) -> Fraction:
    """Exactly ``P(total of code >= target)``, for any target (no truncation).

    Agrees with :meth:`D6Check.p_success` wherever that is exact (DN up to 97 or more).

    >>> p_at_least(DieCode(1), 98) == Fraction(5, 6**17)  # 16 sixes then 2-5, or 17 sixes
    True
    """
    n, pips = code.dice, code.pips
    if n <= 0:
        return Fraction(1 if pips >= target else 0)
    if not wild:
        return prob_at_least(sum_dist(n, 6), target - pips)
    need = target - pips
    total = Fraction(0)
    for s, p in sum_dist(n - 1, 6).items():
        tail = _wild_at_least(need - s)
        if wild_one == "remove_highest" and need - s <= 1:
            tail -= Fraction(1, 6)  # a wild 1 is not counted as 1 here ...
        total += p * tail
    if wild_one == "remove_highest":  # ... it removes itself and the highest other die
        total += Fraction(1, 6) * sum(
            (p for v, p in _sum_minus_max(n - 1) if v >= need), Fraction(0)
        )
    return total


# =============================================================================================
# Speeds: distances, partial moves, acceleration
# =============================================================================================
#
# Seed 003: one move a round at one of four speeds, Move/2, Move, 2 x Move, 4 x Move; "after
# choosing a speed, a character may move anywhere from half to full distance for that speed";
# "a character may change speed by up to two levels per round". Stop is the bottom of the
# acceleration ladder but not a pace (it moves nothing).

SPEEDS: tuple[str, ...] = ("stop", "cautious", "cruising", "high", "all_out")
"""The acceleration ladder, slowest first (seed 003: stop < cautious < cruising < high < all-out)."""

PACES: tuple[str, ...] = SPEEDS[1:]
"""The four speeds a token moves at (CONTRACT.md's d6 paces)."""

SPEED_FACTOR: dict[str, Fraction] = {
    "stop": Fraction(0),
    "cautious": Fraction(1, 2),
    "cruising": Fraction(1),
    "high": Fraction(2),
    "all_out": Fraction(4),
}
"""Each speed's distance as a multiple of Move."""

MAX_SPEED_CHANGE = 2
"""Speed levels a round may change by (seed 003)."""

UNUSUAL_MODES: tuple[str, ...] = ("crawl", "swim", "climb", "ladder")
"""Modes at Move / 3 ("for unusual movement (swimming, climbing, etc.) ... one-third")."""

UNUSUAL_DIVISOR = 3

MODE_SKILLS: dict[str, tuple[str, str]] = {
    "walk": ("running", "dexterity"),
    "crawl": ("running", "dexterity"),
    "swim": ("swimming", "strength"),
    "climb": ("climbing", "strength"),
    "ladder": ("climbing", "strength"),
    "gap": ("climbing", "strength"),  # the seed's climbing/jumping skill
}
"""The skill each mode rolls, and the attribute rolled without it (seed 003)."""


def _speed_name(speed: str, allowed: tuple[str, ...] = SPEEDS) -> str:
    if speed not in allowed:
        raise ArgumentError(
            f"speed '{speed}': expected {' | '.join(allowed)}{did_you_mean(speed, allowed)}"
        )
    return speed


def allowed_speeds(previous: str) -> tuple[str, ...]:
    """The speeds a round may use after a round at ``previous`` (up to two levels of change).

    >>> allowed_speeds("cautious")  # seed 003: not all-out
    ('stop', 'cautious', 'cruising', 'high')
    >>> allowed_speeds("all_out")  # seed 003: not cautious or stop
    ('cruising', 'high', 'all_out')
    """
    i = SPEEDS.index(_speed_name(previous))
    return tuple(s for j, s in enumerate(SPEEDS) if abs(j - i) <= MAX_SPEED_CHANGE)


def speeds_to(previous: str, target: str) -> tuple[str, ...]:
    """The quickest run of round speeds from ``previous`` that ends at ``target``.

    >>> speeds_to("stop", "all_out")
    ('cruising', 'all_out')
    """
    i, goal = SPEEDS.index(_speed_name(previous)), SPEEDS.index(_speed_name(target))
    out: list[str] = []
    while True:
        step = max(-MAX_SPEED_CHANGE, min(MAX_SPEED_CHANGE, goal - i))
        i += step
        out.append(SPEEDS[i])
        if i == goal:
            return tuple(out)


def base_move(token: Token, mode: str = "walk") -> Fraction:
    """Metres per round at cruising speed in ``mode`` (Move, or Move / 3 for unusual modes)."""
    move = Fraction(token["move"])
    if mode in ("walk", "gap"):
        return move
    if mode in UNUSUAL_MODES:
        return move / UNUSUAL_DIVISOR
    return Fraction(0)


def move_range(token: Token, speed: str, mode: str = "walk") -> tuple[Fraction, Fraction]:
    """The least and most metres a round at ``speed`` covers (half to full distance).

    >>> from engine.systems.base import Token
    >>> [str(x) for x in move_range(Token("d6", {"move": 10}), "all_out")]  # seed: 20-40 m
    ['20', '40']
    """
    full = base_move(token, mode) * SPEED_FACTOR[_speed_name(speed)]
    return (full / 2, full)


# =============================================================================================
# Difficulty: levels, numbers, and what each speed makes of them
# =============================================================================================

LEVELS: tuple[str, ...] = DIFFICULTIES[1:]
"""Seed 003's difficulty levels; above Heroic come ``heroic+10``, ``heroic+20``, ..."""

LEVEL_RANGES: tuple[tuple[int, int], ...] = (
    (1, 5),
    (6, 10),
    (11, 15),
    (16, 20),
    (21, 30),
    (31, 40),
)
"""The numbers each level spans (seed 003; Heroic is "31+", read as 31-40 before Heroic +10)."""

DEFAULT_NUMBERS: tuple[int, ...] = (3, 8, 13, 18, 25, 31)
"""RULES.md 3's default number of each level (a ruling; settings ``dn_<level>``)."""

HEROIC_STEP = 10
"""Each level above Heroic adds 10 (seed 003: "Heroic -> Heroic +10")."""


def level_name(index: int) -> str:
    """``0 -> very_easy`` ... ``5 -> heroic``, ``6 -> heroic+10``, ``7 -> heroic+20``."""
    if index < 0:
        raise ValueError(f"level index must be >= 0, got {index}")
    if index < len(LEVELS):
        return LEVELS[index]
    return f"heroic+{HEROIC_STEP * (index - len(LEVELS) + 1)}"


def level_index(name: str) -> int:
    """The index of a level name; ``none`` counts as very_easy (RULES.md 3)."""
    if name == "none":
        return 0
    if name in LEVELS:
        return LEVELS.index(name)
    if name.startswith("heroic+"):
        extra = name.removeprefix("heroic+")
        if extra.isdigit() and int(extra) % HEROIC_STEP == 0 and int(extra) > 0:
            return len(LEVELS) - 1 + int(extra) // HEROIC_STEP
    allowed = ("none", *LEVELS)
    raise ArgumentError(
        f"difficulty '{name}': expected {' | '.join(allowed)} or heroic+10, heroic+20, ..."
        f"{did_you_mean(name, allowed)}"
    )


def level_range(index: int) -> tuple[int, int]:
    """The numbers level ``index`` spans: ``level_range(3) == (16, 20)``."""
    if index < len(LEVEL_RANGES):
        return LEVEL_RANGES[index]
    low = LEVEL_RANGES[-1][0] + HEROIC_STEP * (index - len(LEVEL_RANGES) + 1)
    return (low, low + HEROIC_STEP - 1)


def level_of_dn(dn: int) -> int:
    """The level whose range holds ``dn`` (below 1 counts as very_easy)."""
    for i, (_, high) in enumerate(LEVEL_RANGES):
        if dn <= high:
            return i
    return len(LEVEL_RANGES) - 1 + (dn - LEVEL_RANGES[-1][0]) // HEROIC_STEP


def shift_dn(dn: int, level: int, to_level: int) -> int:
    """Move a GM's number ``dn`` of ``level`` to the same place in ``to_level``'s range.

    The offset from the bottom of the range is kept (capped to the new range), so the seed's
    examples agree with one number per terrain: a Difficult 19 becomes Very Difficult 24 at
    high speed and Heroic 34 all-out; a Very Difficult 22 is Difficult 17 taken cautiously.

    >>> shift_dn(19, 3, 4), shift_dn(19, 3, 5), shift_dn(22, 4, 3), shift_dn(6, 1, 2)
    (24, 34, 17, 11)
    """
    if to_level == level:
        return dn
    low, _ = level_range(level)
    new_low, new_high = level_range(to_level)
    return new_low + max(0, min(dn - low, new_high - new_low))


@dataclass(frozen=True)
class TerrainRule:
    """What moving at ``pace`` over terrain of level ``level`` asks (seed 003, Move Speeds).

    ``asks`` is ``free`` (no roll, not an action), ``automatic`` (no roll, an action) or
    ``roll`` (a movement roll at level ``level + shift``, an action unless ruled otherwise).
    """

    pace: str
    level: int
    asks: str
    shift: int
    action: bool

    @property
    def rolled_level(self) -> int:
        return self.level + self.shift


_EASY_TOP = LEVELS.index("moderate")  # very_easy..moderate are the seed's easy grounds


def terrain_rule(pace: str, level: int, *, cautious_roll_action: bool = True) -> TerrainRule:
    """The seed's Move Speeds table for one pace and level index.

    >>> r = terrain_rule("all_out", 3)  # dense forest, Difficult, all-out
    >>> r.asks, level_name(r.rolled_level)
    ('roll', 'heroic')
    """
    _speed_name(pace, PACES)
    easy = level <= _EASY_TOP
    if pace == "cautious":
        if easy:
            return TerrainRule(pace, level, "free", 0, False)
        return TerrainRule(pace, level, "roll", -1, cautious_roll_action)
    if pace == "cruising":
        if easy:
            return TerrainRule(pace, level, "automatic", 0, True)
        return TerrainRule(pace, level, "roll", 0, True)
    if pace == "high":
        return TerrainRule(pace, level, "roll", 0 if easy else 1, True)
    return TerrainRule(pace, level, "roll", 1 if easy else 2, True)


# =============================================================================================
# Failures, collisions, maneuvers
# =============================================================================================


@dataclass(frozen=True)
class FailureEffect:
    """One row of seed 003's Movement Failures table, as state changes.

    ``distance``: the share of the round's chosen distance moved before the move ends.
    ``penalty_now`` / ``penalty_next``: -nD on every action for the rest of this round / the
    next round. ``lose_round`` / ``lose_next``: no more actions this round / none next round.
    ``posture``: ``kneeling`` or ``prone`` after a fall. ``collision``: dice added to the
    speed's collision damage (None: no collision).
    """

    degree: str
    distance: Fraction = Fraction(1)
    penalty_now: int = 0
    penalty_next: int = 0
    lose_round: bool = False
    lose_next: bool = False
    posture: str = ""
    collision: int | None = None


_TUMBLE_STOP = {"quarter": Fraction(1, 4), "half": Fraction(1, 2), "full": Fraction(1)}


def _failure_table(tumble_stop: str) -> dict[str, FailureEffect]:
    """Seed 003's Movement Failures table under the ``tumble_stop`` ruling, row by degree."""
    quarter = Fraction(1, 4)
    tumble = _TUMBLE_STOP[tumble_stop]
    half = Fraction(1, 2)
    return {
        "success": FailureEffect("success"),
        "fail_1_3": FailureEffect("fail_1_3", penalty_now=1),
        "fail_4_6": FailureEffect("fail_4_6", half, penalty_now=3, penalty_next=1),
        "fail_7_10": FailureEffect(
            "fail_7_10", half, penalty_next=2, lose_round=True, posture="kneeling"
        ),
        "fail_11_15": FailureEffect(
            "fail_11_15", quarter, lose_round=True, lose_next=True, posture="prone", collision=-3
        ),
        "fail_16_20": FailureEffect(
            "fail_16_20", tumble, lose_round=True, lose_next=True, posture="prone", collision=0
        ),
        "fail_21_plus": FailureEffect(
            "fail_21_plus", tumble, lose_round=True, lose_next=True, posture="prone", collision=2
        ),
    }


#: The table under each ``tumble_stop`` ruling, made once (its rows are frozen).
_FAILURES: dict[str, dict[str, FailureEffect]] = {t: _failure_table(t) for t in _TUMBLE_STOP}


def failure_effect(degree: str, tumble_stop: str = "quarter") -> FailureEffect:
    """The effect of a movement roll's degree (``tumble_stop``: RULES.md 3's ruling)."""
    table = _FAILURES[tumble_stop]
    got = table.get(degree)
    if got is None:
        raise ArgumentError(
            f"degree '{degree}': expected {' | '.join(CHECK_DEGREES)}"
            f"{did_you_mean(degree, CHECK_DEGREES)}"
        )
    return got


def failure_text(degree: str, tumble_stop: str = "quarter", jump: bool = False) -> str:
    """What a failed movement roll of ``degree`` does (seed 003's Movement Failures table,
    RULES.md 3), in a few words; a failed jump that falls short lands in the gap."""
    stop = {"quarter": "a quarter", "half": "half", "full": "the full move"}[tumble_stop]
    text = {
        "fail_1_3": "slight slip: full move, -1D rest of round",
        "fail_4_6": "slip: half distance, -3D rest of round, -1D next",
        "fail_7_10": "fall: stop at half, kneeling, no more actions, -2D next",
        "fail_11_15": "minor tumble: stop at a quarter, no actions this round or next, "
        "collision damage -3D",
        "fail_16_20": f"tumble: stop at {stop}, full collision damage",
        "fail_21_plus": f"major tumble: stop at {stop}, collision damage +2D",
    }[degree]
    if jump and degree != "fail_1_3":
        text += "; short of the far side: into the gap"
    return text


@functools.lru_cache(maxsize=4096)
def failures_of(
    check: D6Check, tumble_stop: str, jump: bool = False
) -> tuple[tuple[str, str, Fraction], ...]:
    """Each failing margin band of ``check``: (degree, what it does, its exact chance)."""
    return tuple(
        (degree, failure_text(degree, tumble_stop, jump), p)
        for degree, p in check.outcomes().items()
        if degree != "success" and p
    )


COLLISION_DICE: dict[str, int] = {"cautious": 1, "cruising": 2, "high": 3, "all_out": 4}
"""Collision damage by speed (seed 003), rolled against Strength."""


def collision_damage(pace: str, degree: str, tumble_stop: str = "quarter") -> DieCode | None:
    """The collision damage a failed move at ``pace`` deals, or None.

    >>> str(collision_damage("high", "fail_16_20"))  # seed 003: fails by 18 -> 3D
    '3D'
    >>> str(collision_damage("all_out", "fail_11_15")), collision_damage("high", "fail_11_15")
    ('1D', None)
    """
    if tumble_stop in _FAILURES:
        got = _COLLISIONS.get((pace, degree), _UNLISTED)
        if got is not _UNLISTED:
            return got  # type: ignore[return-value]
    return _collision_damage(pace, degree, tumble_stop)


def _collision_damage(pace: str, degree: str, tumble_stop: str = "quarter") -> DieCode | None:
    """:func:`collision_damage` worked out (an unknown pace or degree raises)."""
    extra = failure_effect(degree, tumble_stop).collision
    if extra is None:
        return None
    dice = COLLISION_DICE[_speed_name(pace, PACES)] + extra
    return DieCode(dice) if dice > 0 else None


_UNLISTED = object()
#: :func:`collision_damage` of every pace and degree, made once (no row's collision dice
#: depend on ``tumble_stop``; DieCode is frozen).
_COLLISIONS: dict[tuple[str, str], DieCode | None] = {
    (pace, degree): _collision_damage(pace, degree) for pace in PACES for degree in CHECK_DEGREES
}


@dataclass(frozen=True)
class Maneuver:
    """A stunt while moving adds ``low``..``high`` to the movement difficulty (seed 003)."""

    name: str
    low: int
    high: int | None
    description: str


MANEUVERS: tuple[Maneuver, ...] = (
    Maneuver("minor", 1, 5, "minor coordination"),
    Maneuver("moderate", 6, 10, "moderate coordination"),
    Maneuver("high", 11, 15, "high concentration; very difficult while moving fast"),
    Maneuver("extreme", 16, None, "extremely difficult while moving fast"),
)


def maneuver_modifier(fields: Mapping[str, tuple[str, str]]) -> int:
    """The ``maneuver=N`` field of a check (0 when absent): seed 003's stunt modifier, added
    to the DN (``minor`` 1-5, ``moderate`` 6-10, ``high`` 11-15, ``extreme`` 16+)."""
    if "maneuver" not in fields:
        return 0
    token, value = fields["maneuver"]
    if not value.isdigit() or int(value) > 1000:
        bands = ", ".join(
            f"{m.name} {m.low}-{m.high}" if m.high else f"{m.name} {m.low}+" for m in MANEUVERS
        )
        raise CheckError(
            f"check '{token}': maneuver must be the stunt's modifier, a whole number 0-1000 "
            f"added to the DN ({bands}), e.g. maneuver=4"
        )
    return int(value)


def maneuver(name: str) -> Maneuver:
    """The maneuver band called ``name`` (``minor``, ``moderate``, ``high``, ``extreme``)."""
    names = tuple(m.name for m in MANEUVERS)
    for m in MANEUVERS:
        if m.name == name:
            return m
    raise ArgumentError(
        f"maneuver '{name}': expected {' | '.join(names)}{did_you_mean(name, names)}"
    )


# =============================================================================================
# Long-distance movement: stamina checks
# =============================================================================================

STAMINA_INTERVAL_S: dict[str, int] = {
    "all_out": 60,  # sprinting: every minute
    "high": 600,  # running: every 10 minutes
    "cruising": 3 * 3600,  # a long march: every 3 hours (2 on a forced march)
    "cautious": 3 * 3600,
}
FORCED_MARCH_INTERVAL_S = 2 * 3600
ROUND_S = 5
"""Seconds in a round (RULES.md 3: "rounds of 5 s")."""

STAMINA_ROUNDS: dict[str, int] = {pace: s // ROUND_S for pace, s in STAMINA_INTERVAL_S.items()}
"""Rounds of moving at each speed between stamina rolls in play (RULES.md 3: "all-out every
minute = 12 rounds, high every 10 minutes, cruising every 3 hours"): 12, 120, 2160, 2160."""

STAMINA_CLOCK = math.lcm(*STAMINA_ROUNDS.values())
"""A token's stamina clock counts to this between rolls (counter ``stamina_clock``)."""

STAMINA_TICKS: dict[str, int] = {pace: STAMINA_CLOCK // n for pace, n in STAMINA_ROUNDS.items()}
"""What a round moving at each speed adds to the stamina clock: its share of that speed's
interval (all-out 1/12, high 1/120, cruising and cautious 1/2160 of a roll), so that a run
at one speed rolls on its own schedule and a run that changes speed rolls when the shares
of its rounds add up to a whole interval (project reading: the seed gives each speed alone)."""

SLEEP_ROUNDS = 3600 // ROUND_S
"""Rounds in an hour: a march's rest after a failed check, an hour a check made (seed 003:
"1 hour of sleep per stamina check restores vigor")."""

_RUN_COUNTERS = ("run_rounds", "stamina_clock", "stamina_rolls", "rest_due", "rest_rounds")
"""The state of a run on the stamina schedule, cleared by a full rest."""
MAX_STAMINA_CHECKS = 500
"""Most checks :func:`long_distance` computes exactly (the chance is far below 1e-100 by then)."""

LONG_DISTANCE_M = 10000
"""The distance of the ``long_distance`` figure in ``stats`` (10 km)."""


def _clock(seconds: Fraction) -> str:
    whole = int(seconds)
    h, rest = divmod(whole, 3600)
    m, s = divmod(rest, 60)
    frac = "" if seconds == whole else f"+{seconds - whole}"
    return f"{h}:{m:02d}:{s:02d}{frac}"


@functools.lru_cache(maxsize=256)
def collision_margins(
    dice: int, strength: str, wild: bool, wild_one: str
) -> tuple[tuple[int, Fraction], ...]:
    """The exact chance of each margin of ``dice``D collision damage over a Strength of
    ``strength`` (:meth:`D6.end_turn_outcomes`), in order of the margin: a pure function of
    its arguments, kept by them (the solve asks it for every turn that ends in a fall,
    and the two pools' product is thousands of Fractions)."""
    hit = d6_pool_dist(_damage_code(dice), wild=wild, wild_one=wild_one).dist
    resist = d6_pool_dist(DieCode.parse(strength), wild=wild, wild_one=wild_one).dist
    margins: dict[int, Fraction] = {}
    for h, ph in hit.items():
        for r, pr in resist.items():
            margins[h - r] = margins.get(h - r, Fraction(0)) + ph * pr
    return tuple(sorted(margins.items()))


# =============================================================================================
# The rule system
# =============================================================================================


def _skill_help(skill: str, attribute: str, what: str) -> str:
    return f"{skill} skill die code for {what} (absent: {attribute})"


_POSTURES = ("kneeling", "prone")
"""The postures a failed movement roll leaves (seed 003: "ends kneeling"; a tumble)."""


def _set(state: TokenState, name: str, value: int) -> TokenState:
    """``state`` with counter ``name`` at ``value``; a 0 counter is dropped (absent reads 0).

    :meth:`TokenState.set_counter`: a rule hook traced by the turn loop's cache reads only
    that counter's change, not every counter (engine.sim.HookMemo)."""
    return state.set_counter(name, value)


class D6(RuleSystem):
    """Star Wars D6 REUP: Move per round at four speeds, movement rolls against a DN."""

    name = "d6"
    title = "Star Wars D6 REUP"
    source = "seed 003; docs/rules.md#d6"
    unit = "m"
    cell_size = Fraction(2)
    turn_name = "round"
    turn_seconds = Fraction(5)
    actions_per_turn = 1  # one move a round; other actions cost -1D each
    paces = PACES
    default_pace = "all_out"
    fastest_pace = "all_out"
    # Seed 003: "Moving is an action, just like firing a blaster or dodging"; "walking is an
    # action, firing is a second action, so she takes -1D" (RULES.md 3: -1D on every roll of
    # the round per action beyond the first); all-out: "The character may do nothing else
    # this round (no dodge/parry)". Acts are unlimited, each one more action of the round.
    acts = (
        ActSpec("action", 1, "one more action this round: -1D on every roll (seed 003)"),
        ActSpec("fire", 1, "seed 003: 'walking is an action, firing is a second action'"),
        ActSpec("dodge", 1, "seed 003: 'Moving is an action, just like ... dodging'"),
        ActSpec("parry", 1, "seed 003: all-out allows 'no dodge/parry'"),
    )
    #: No rule reads them again: the seed gives no wound chart (:meth:`end_turn`).
    notes = frozenset({"collision_margin", "injured"})

    def __init__(self, settings: Mapping[str, Any] | None = None) -> None:
        super().__init__(settings)
        #: :meth:`move_check`'s results by all that decides them.
        self._checks: dict[tuple[Any, ...], CellCheck | None] = {}

    @classmethod
    def describe_check(cls, what: str, target: str) -> tuple[str, str, str]:
        """D6's check wording (:meth:`checks`: ``move all_out swim: swimming 3D vs
        easy->moderate``, ``jump cautious gap: climbing 3D+1 vs easy``) in words: the skill,
        the DN, and the difficulty it came to, the pace, a jump or the mode."""
        head, sep, tail = what.partition(": ")
        words = head.split(" ")
        rolled = tail.split(" ")
        if not sep or len(words) != 3 or words[0] not in ("move", "jump") or len(rolled) != 4:
            return super().describe_check(what, target)
        kind, pace, mode = words
        skill, levels = rolled[0], rolled[-1]
        if rolled[-2] != "vs":
            return super().describe_check(what, target)
        detail = [levels.split("->")[-1], pace.replace("_", "-")]
        if kind == "jump":
            detail.insert(0, "jump")
        elif mode != "walk":
            detail.append(mode)
        return skill, target, ", ".join(detail)

    @classmethod
    def describe_degree(cls, degree: str) -> str:
        """D6's failure bands in words: ``fail_7_10`` failed by 7-10, ``fail_21_plus``
        failed by 21+."""
        parts = degree.split("_")
        if len(parts) == 3 and parts[0] == "fail" and parts[1].isdigit():
            lo, hi = parts[1], parts[2]
            if hi == "plus":
                return f"failed by {lo}+"
            if hi.isdigit():
                return f"failed by {lo}-{hi}"
        return super().describe_degree(degree)

    @classmethod
    def describe_effect(cls, what: str, degree: str) -> str:
        """Seed 003's Movement Failures row of a failed move or jump (default settings)."""
        if not what.startswith(("move ", "jump ")) or degree not in _FAILURES["quarter"]:
            return ""
        if degree == "success":
            return ""
        return failure_text(degree, jump=what.startswith("jump "))

    stats: ClassVar[tuple[Param, ...]] = (
        Stat("move", "number", Fraction(10), minimum=0, unit="m", help="metres per round walking"),
        Stat("dexterity", "dice", "3D", help="Dexterity die code (walking without running)"),
        Stat("strength", "dice", "3D", help="Strength die code (swim, climb, stamina, damage)"),
        Stat("running", "dice", None, help=_skill_help("running", "Dexterity", "walking")),
        Stat("swimming", "dice", None, help=_skill_help("swimming", "Strength", "swimming")),
        Stat(
            "climbing",
            "dice",
            None,
            help=_skill_help("climbing/jumping", "Strength", "climbing and jumping"),
        ),
        Stat("stamina", "dice", None, help=_skill_help("stamina", "Strength", "stamina rolls")),
        Stat("items", "int", 0, minimum=0, help="medium-sized items carried (encumbrance rule)"),
        Stat(
            "speed",
            "choice",
            None,
            choices=SPEEDS,
            help="the current speed, the last round's (default: setting start_speed, stop)",
        ),
    )
    settings: ClassVar[tuple[Param, ...]] = (
        Setting("wild_die", "bool", True, help="docs/rules.md#d6 (ruling): one die explodes on 6"),
        Setting(
            "wild_one",
            "choice",
            "complication",
            choices=WILD_ONE_SETTINGS,
            help="docs/rules.md#d6 (ruling): a 1 on the wild die is a complication only",
        ),
        *(
            Setting(
                f"dn_{level}",
                "int",
                number,
                minimum=low,
                maximum=None if level == "heroic" else high,
                help=f"docs/rules.md#d6 (ruling): default number of {level} "
                + (f"({low}+)" if level == "heroic" else f"({low}-{high})"),
            )
            for level, number, (low, high) in zip(
                LEVELS, DEFAULT_NUMBERS, LEVEL_RANGES, strict=True
            )
        ),
        Setting(
            "dn_shift",
            "choice",
            "range_offset",
            choices=("range_offset", "level_default"),
            help="a cell's dn shifted by speed keeps its place in the level's range "
            "(range_offset: Difficult 19 -> Very Difficult 24, as seed 003's examples) "
            "or becomes the new level's default number",
        ),
        Setting(
            "roll_per",
            "choice",
            "round",
            choices=("round", "cell_run"),
            help="docs/rules.md#d6 (ruling): one movement roll per round, at the hardest cell "
            "crossed (cell_run: one per run of the same terrain)",
        ),
        Setting(
            "cautious_roll_action",
            "bool",
            True,
            help="a cautious move that must roll (Difficult or worse) counts as an action",
        ),
        Setting(
            "encumbrance",
            "bool",
            False,
            help="seed 003's optional rule: one medium item per pip of Strength",
        ),
        Setting(
            "overload",
            "choice",
            "stamina",
            choices=("stamina", "none"),
            help="docs/rules.md#d6 (ruling): an overloaded token rolls stamina on the long-distance "
            "schedule for its speed (none: overloading changes nothing); it keeps every speed",
        ),
        Setting(
            "stamina",
            "bool",
            False,
            help="docs/rules.md#d6: every token rolls stamina on the long-distance schedule in play, "
            "overloaded or not (a scenario's stamina: true); false: only overloaded tokens, "
            "as setting overload says",
        ),
        Setting(
            "tumble_stop",
            "choice",
            "quarter",
            choices=tuple(_TUMBLE_STOP),
            help="docs/rules.md#d6 (ruling): a tumble (failure by 16+) stops at a quarter of the move",
        ),
        Setting(
            "share_of",
            "choice",
            "planned",
            choices=("planned", "speed"),
            help="a failed move roll's share (half, a quarter) is of the move the token set "
            "out to make that round (planned), or of its speed's full distance (speed); "
            "either way no further than it set out to go",
        ),
        Setting(
            "fall_speed",
            "choice",
            "stop",
            choices=("stop", "keep"),
            help="a fall or tumble (failure by 7+) ends the round at a stop, and so does a "
            "round lost to one: the next round accelerates from stop (keep: the speed fallen at)",
        ),
        Setting(
            "start_speed",
            "choice",
            "stop",
            choices=SPEEDS,
            help="the speed a token's previous round had when play starts (acceleration)",
        ),
    )

    parse_check = staticmethod(parse_check)

    # ----------------------------------------------------------------- stats and figures

    def validate(self, stats: dict[str, Any]) -> None:
        for name in ("dexterity", "strength", "running", "swimming", "climbing", "stamina"):
            if name in stats and DieCode.parse(stats[name]).dice > MAX_POOL_DICE:
                raise StatError(
                    role="token",
                    given=f"{name}={stats[name]}",
                    problem=f"expected a die code of at most {MAX_POOL_DICE}D",
                )

    def initial_state(self, token: Token) -> TokenState:
        state = super().initial_state(token)
        speed = token.stats.get("speed") or self.config["start_speed"]
        return _set(state, "speed", SPEEDS.index(speed))

    def carrying_capacity(self, token: Token) -> int:
        """Medium-sized items the token carries: one per pip of Strength (3D+2 = 11)."""
        return DieCode.parse(token["strength"]).pips_total

    def overloaded(self, token: Token) -> bool:
        """Carrying more than its capacity, with the optional encumbrance rule on."""
        return bool(self.config["encumbrance"]) and token["items"] > self.carrying_capacity(token)

    def encumbrance(self, token: Token) -> str:
        return "encumbered" if self.overloaded(token) else "none"

    def rolls_stamina(self, token: Token) -> bool:
        """Whether the token rolls stamina on the long-distance schedule in play (RULES.md 3):
        overloaded under ``overload=stamina`` (the default), or any token under
        ``stamina=true``."""
        if self.config["stamina"]:
            return True
        return self.config["overload"] == "stamina" and self.overloaded(token)

    def top_speed(self, token: Token) -> str:
        """The fastest speed the token may use: all-out, overloaded or not (RULES.md 3 rules
        only stamina rolls for an overloaded token, no speed cap)."""
        return "all_out"

    def effective_pace(self, token: Token, pace: str | None) -> str:
        """``pace`` (default all-out), capped at the token's top speed."""
        chosen = _speed_name(pace or self.default_pace, PACES)
        top = self.top_speed(token)
        return top if SPEEDS.index(chosen) > SPEEDS.index(top) else chosen

    def skill(self, token: Token, mode: str) -> tuple[str, DieCode]:
        """The stat a move in ``mode`` rolls, and its code (the skill, else the attribute)."""
        skill, attribute = MODE_SKILLS.get(mode, MODE_SKILLS["walk"])
        name = skill if token.stats.get(skill) is not None else attribute
        return name, DieCode.parse(token[name])

    def stamina_code(self, token: Token) -> tuple[str, DieCode]:
        name = "stamina" if token.stats.get("stamina") is not None else "strength"
        return name, DieCode.parse(token[name])

    def rate(self, token: Token, mode: str, pace: str | None = None) -> Fraction:
        """Metres in one round at ``pace``'s full distance (Move x the speed's factor); 0
        all-out with other actions this round (seed 003: "may do nothing else")."""
        speed = self.effective_pace(token, pace)
        if speed == "all_out" and token.state.counter("actions"):
            return Fraction(0)
        return base_move(token, mode) * SPEED_FACTOR[speed]

    def refusal(self, token: Token, terrain: Terrain, pace: str | None = None) -> str | None:
        if terrain.move == "air":
            return f"{terrain.name}: d6 tokens do not fly (air cells are for fliers only)"
        others = token.state.counter("actions")
        if others and self.effective_pace(token, pace) == "all_out":
            return (
                f"all-out: 'The character may do nothing else this round (no dodge/parry)' "
                f"(seed 003); other actions this round: {others}"
            )
        return super().refusal(token, terrain, pace)

    def act_pace(self, token: Token, pace: str) -> str:
        """All-out with other actions this round is high speed, the fastest left (seed 003:
        all-out "may do nothing else this round"); their -1D each is the move roll's
        (:meth:`round_actions`)."""
        if token.state.counter("actions") and self.effective_pace(token, pace) == "all_out":
            return "high"
        return pace

    def move_range(self, token: Token, speed: str, mode: str = "walk") -> tuple[Fraction, Fraction]:
        """Least and most metres a round at ``speed`` covers (capped at the top speed)."""
        if speed == "stop":
            return (Fraction(0), Fraction(0))
        return move_range(token, self.effective_pace(token, speed), mode)

    def rates(self, token: Token) -> dict[str, Any]:
        """Metres per round at each speed's full distance, walking and in each unusual mode."""
        modes = ("walk", *UNUSUAL_MODES)
        return {pace: {mode: self.rate(token, mode, pace) for mode in modes} for pace in PACES}

    # ----------------------------------------------------------------- acceleration

    def allowed_paces(self, token: Token) -> tuple[str, ...]:
        """Speeds this round may use after the token's last round (and within its top speed)."""
        previous = SPEEDS[token.state.counter("speed")]
        top = SPEEDS.index(self.top_speed(token))
        return tuple(s for s in allowed_speeds(previous) if SPEEDS.index(s) <= top)

    def round_paces(self, token: Token, pace: str) -> tuple[str, ...]:
        """The speeds of the first rounds before ``pace`` holds: up to two levels of change
        a round from the token's current speed (seed 003); () when it is at ``pace``."""
        target = self.effective_pace(token, pace)
        return speeds_to(SPEEDS[token.state.counter("speed")], target)[:-1]

    #: :meth:`round_checks` skips a terrain equal to the one before it.
    turn_checks_by_runs: ClassVar[bool] = True

    def turn_checks(
        self, token: Token, terrains: list[Terrain], pace: str | None = None
    ) -> list[CellCheck] | None:
        """``roll_per=round``: the rolls of one round's move (:meth:`round_checks`);
        ``cell_run``: None, a roll per run of terrain (the search's default)."""
        if self.config["roll_per"] == "cell_run":
            return None
        return self.round_checks(token, terrains, pace)

    def paced(self, token: Token, pace: str, moved: bool) -> Token:
        """The round's speed becomes the current speed; a token that did not move stopped
        when stopping was allowed (seed 003: not from high or all-out).

        A round with no actions (a fall or tumble, or a round lost to one) keeps the stop
        the fall left (:meth:`apply_check`, ``fall_speed=stop``, the default ruling): seed
        003's faller "ends kneeling" or tumbles; it is down, not running, and next round it
        gets up and accelerates from a stop (cautious or cruising). ``keep``: the speed it
        fell at, which then may change by two levels only (after all-out: not cautious, not
        stop).

        A token on the stamina schedule (:meth:`rolls_stamina`) also counts the round on its
        stamina clock (:meth:`_stamina_clock`).
        """
        if self.rolls_stamina(token):
            clock = self._stamina_clock(token.state, self.effective_pace(token, pace), moved)
            token = token.with_state(clock)
        if token.state.has("exhausted"):
            return token  # resting, at the stop the failed stamina roll left
        if token.state.has("no_actions") and self.config["fall_speed"] == "stop":
            return token
        speed = self.effective_pace(token, pace)
        if not moved and "stop" in self.allowed_paces(token):
            speed = "stop"
        return self.with_speed(token, speed)

    @staticmethod
    def _stamina_clock(state: TokenState, pace: str, moved: bool) -> TokenState:
        """A round on the long-distance schedule (RULES.md 3; seed 003's Long-Distance
        Movement), ``pace`` the speed it moved at.

        Moving: the run (``run_rounds``) grows by a round and the stamina clock by that
        speed's share of its interval (:data:`STAMINA_TICKS`); a full clock makes a roll due
        at the end of the round (``stamina_due``: the speed it falls due at,
        :meth:`end_turn`). Not moving (held, or staying): a round of rest (``rest_rounds``).
        A rest as long as the seed asks ends the run, its clock and its count of rolls: an
        exhausted token's ``rest_due`` (its failed roll's), any other's twice the run so far
        (project reading of "must rest twice as long as sprint duration": the seed's measure
        of a rest that restores), and ``exhausted`` goes with it."""
        if moved:
            state = _set(state, "rest_rounds", 0)
            state = _set(state, "run_rounds", state.counter("run_rounds") + 1)
            clock = state.counter("stamina_clock") + STAMINA_TICKS[pace]
            if clock >= STAMINA_CLOCK:
                clock -= STAMINA_CLOCK
                state = _set(state, "stamina_due", SPEEDS.index(pace))
            return _set(state, "stamina_clock", clock)
        if not (state.counter("run_rounds") or state.has("exhausted")):
            return state  # nothing to rest from
        rest = state.counter("rest_rounds") + 1
        owed = (
            state.counter("rest_due") if state.has("exhausted") else 2 * state.counter("run_rounds")
        )
        if rest < owed:
            return _set(state, "rest_rounds", rest)
        for name in _RUN_COUNTERS:
            state = _set(state, name, 0)
        return state.with_conditions(remove=("exhausted",))

    def with_speed(self, token: Token, speed: str) -> Token:
        """The token after a round at ``speed``; a change of more than two levels raises."""
        allowed = self.allowed_paces(token)
        if speed not in allowed:
            previous = SPEEDS[token.state.counter("speed")]
            raise ArgumentError(
                f"speed '{speed}' after a round at {previous}: expected {' | '.join(allowed)} "
                f"(up to {MAX_SPEED_CHANGE} levels of change a round)"
            )
        return replace(token, state=_set(token.state, "speed", SPEEDS.index(speed)))

    # ----------------------------------------------------------------- difficulty

    def number(self, level: int) -> int:
        """The default number of level index ``level`` (settings ``dn_<level>``; +10 a level
        above Heroic)."""
        if level < len(LEVELS):
            return int(self.config[f"dn_{LEVELS[level]}"])
        return int(self.config["dn_heroic"]) + HEROIC_STEP * (level - len(LEVELS) + 1)

    def terrain_level(self, terrain: Terrain) -> int:
        """The level a cell asks for: its difficulty, else the level of its ``dn``; ``none``
        counts as very_easy."""
        if terrain.difficulty == "none" and terrain.dn is not None:
            return level_of_dn(terrain.dn)
        return level_index(terrain.difficulty)

    def terrain_dn(self, level: int, pace: str, dn: int | None = None) -> tuple[TerrainRule, int]:
        """The rule for ``pace`` at ``level`` and the DN it rolls against.

        ``dn`` is the GM's number for the terrain (a cell's ``dn``); without it the level's
        default number. Shifted by the speed as setting ``dn_shift`` says.
        """
        rule = terrain_rule(pace, level, cautious_roll_action=self.config["cautious_roll_action"])
        to = rule.rolled_level
        if dn is None or (to != level and self.config["dn_shift"] == "level_default"):
            return rule, self.number(to)
        return rule, shift_dn(dn, level, to)

    def round_actions(
        self, token: Token, terrain: Terrain, pace: str | None = None, other: int | None = None
    ) -> int:
        """Actions in the round: the move (unless free) plus ``other`` declared actions
        (default: the token's ``actions`` counter; none at all-out)."""
        pace = self.effective_pace(token, pace)
        if pace == "all_out":
            return 1
        rule = terrain_rule(
            pace,
            self.terrain_level(terrain),
            cautious_roll_action=self.config["cautious_roll_action"],
        )
        others = token.state.counter("actions") if other is None else other
        return max(1, others + (1 if rule.action or terrain.move == "gap" else 0))

    def _check(self, code: DieCode, dn: int, actions: int, penalty: int) -> D6Check:
        return D6Check(
            code.minus_dice(penalty),
            dn,
            actions,
            wild=self.config["wild_die"],
            wild_one=self.config["wild_one"],
        )

    #: Movement rolls kept (:meth:`move_check`; all of them go beyond this).
    CHECKS_KEPT = 4096

    def move_check(
        self,
        token: Token,
        terrain: Terrain,
        pace: str | None = None,
        *,
        maneuver: int = 0,
        other: int | None = None,
    ) -> CellCheck | None:
        """The movement roll a round at ``pace`` over ``terrain`` asks, or None (free or
        automatic). ``maneuver`` adds a stunt's modifier to the DN; ``other`` is the count of
        other actions declared this round (default: the token's ``actions`` counter).

        A ``gap`` is jumped: a climbing/jumping roll at the cell's own level, whatever the
        speed (seed 003: "roll movement, then roll the other skill separately").

        Kept by what decides it (:meth:`_made_check`): the terrain's mode, difficulty and
        dn, the speed, the stunt, the skill and its code, the actions and the penalty (the
        token's state read as before, so that a hook memo tracing the reads sees them).
        """
        if terrain.move not in MODE_SKILLS:  # air and blocked: nothing to roll for
            return None
        pace = self.effective_pace(token, pace)
        skill, code = self.skill(token, terrain.move)
        actions = self.round_actions(token, terrain, pace, other)
        penalty = token.state.counter("penalty")
        move, difficulty, dn = terrain.move, terrain.difficulty, terrain.dn
        key = (move, difficulty, dn, pace, maneuver, skill, code, actions, penalty)
        kept = self._checks
        got = kept.get(key, _UNLISTED)
        if got is _UNLISTED:
            got = self._made_check(terrain, pace, maneuver, skill, code, actions, penalty)
            if len(kept) >= self.CHECKS_KEPT:
                kept.clear()
            kept[key] = got
        return got  # type: ignore[return-value]

    def _made_check(
        self,
        terrain: Terrain,
        pace: str,
        maneuver: int,
        skill: str,
        code: DieCode,
        actions: int,
        penalty: int,
    ) -> CellCheck | None:
        """:meth:`move_check` worked out."""
        level = self.terrain_level(terrain)
        if terrain.move == "gap":
            dn = (terrain.dn if terrain.dn is not None else self.number(level)) + maneuver
            check = self._check(code, dn, actions, penalty)
            what = f"jump {pace} gap: {skill} {check.rolled} vs {level_name(level)}"
            failures = failures_of(check, self.config["tumble_stop"], jump=True)
            return CellCheck(what, f"DN {dn}", check.p_success(), check, failures)
        rule, dn = self.terrain_dn(level, pace, terrain.dn)
        if rule.asks != "roll" and not maneuver:
            return None
        dn += maneuver
        check = self._check(code, dn, actions, penalty)
        shifted = level_name(level)
        if rule.shift:
            shifted += f"->{level_name(rule.rolled_level)}"
        what = f"move {pace} {terrain.move}: {skill} {check.rolled} vs {shifted}"
        failures = failures_of(check, self.config["tumble_stop"])
        return CellCheck(what, f"DN {dn}", check.p_success(), check, failures)

    def on_failure(self, check: CellCheck) -> str:
        """Seed 003: "If the movement roll fails, find the margin of failure": a slight slip
        (1-3) completes the move, a slip (4-6) goes half the distance, a fall (7-10) stops at
        half, a tumble (11+) at a quarter (RULES.md 3, setting ``tumble_stop``): by margin,
        each band's chance in the check's ``failures``."""
        return "by_margin"

    def cell_check(
        self, token: Token, terrain: Terrain, pace: str | None = None
    ) -> CellCheck | None:
        return self.move_check(token, terrain, pace)

    def round_checks(
        self, token: Token, terrains: list[Terrain], pace: str | None = None
    ) -> list[CellCheck]:
        """The rolls one round's move over ``terrains`` (in order) asks.

        ``roll_per=round`` (RULES.md 3's ruling): one movement roll, at the hardest DN
        crossed; ``cell_run``: one per run of cells with the same mode, difficulty and dn.
        Jumps over gaps are rolled apart from the movement roll, each in its place.
        """
        checks: list[CellCheck] = []
        last: tuple[str, str, int | None] | None = None
        for terrain in terrains:
            key = (terrain.move, terrain.difficulty, terrain.dn)
            if key == last:
                continue
            last = key
            found = self.move_check(token, terrain, pace)
            if found is not None:
                checks.append(found)
        moves = [k for k, c in enumerate(checks) if c.what.startswith("move ")]
        if self.config["roll_per"] == "cell_run" or len(moves) < 2:
            return checks
        # The first of the highest DN, the least likely among those (a check kept by
        # move_check may stand in the list twice: told apart by place).
        hardest = moves[0]
        for k in moves[1:]:
            c, h = checks[k].check, checks[hardest]
            if c.dn > h.check.dn or (c.dn == h.check.dn and checks[k].p_success < h.p_success):
                hardest = k
        return [c for k, c in enumerate(checks) if k == hardest or not c.what.startswith("move ")]

    # ----------------------------------------------------------------- results

    def failure_share(self, check: CellCheck, degree: str) -> Fraction:
        """The share of the round's planned move a movement roll of ``degree`` still makes
        (ruling R1: of the move measured in time, rounded down to whole cells by the loop).

        Seed 003's Movement Failures table: 1-3 "Complete movement" (all of it), 4-6 "Move
        half distance", 7-10 "Fall halfway", 11-15 "Fall after one-quarter move"; 16-20 and
        21+ as setting ``tumble_stop`` rules (a quarter by default). A success makes all of
        it. A jump is rolled apart from the move (seed 003: "roll movement, then roll the
        other skill separately"): failed by 4 or more it falls short into the gap, so the
        move goes no further than the cell that asked (0, the loop's default); 1-3 clears it.
        """
        if check.what.startswith("jump "):
            return Fraction(1) if degree in ("success", "fail_1_3") else Fraction(0)
        return failure_effect(degree, self.config["tumble_stop"]).distance

    def failure_share_of(self) -> str:
        """Setting ``share_of``: a share of the planned move, or of the speed's distance."""
        return str(self.config["share_of"])

    def goes_on(self, check: CellCheck, degree: str, success: bool) -> bool:
        """A jump rolled where it is made (seed 003: "roll movement, then roll the other
        skill separately"): failed by 1-3 it still clears the gap ("Complete movement")."""
        return success or (check.what.startswith("jump ") and degree == "fail_1_3")

    def held(self, token: Token) -> str | None:
        """Why the token may not move this round, or None (ruling R2).

        Seed 003: a fall (7-10) leaves "No actions for rest of round"; a tumble (11+) "no
        actions this round or next". :meth:`apply_check` sets ``no_actions`` at the failure
        (the rest of that round, its move ended at :meth:`failure_share`), and
        :meth:`start_turn` keeps it through the next round after a tumble only.

        A failed stamina roll (RULES.md 3: "a failure forcing rest") leaves the token
        ``exhausted``: it is held until it has rested its ``rest_due`` rounds
        (:meth:`_stamina_clock`).
        """
        state = token.state
        if not state.has("no_actions"):
            if state.has("exhausted"):
                return "exhausted: resting after a failed stamina roll (seed 003: 'must rest')"
            return None
        if state.counter("lose_next"):
            return "a tumble: no actions for the rest of this round or next (seed 003: 11+)"
        if state.has("prone"):
            return "a tumble last round: no actions this round or next (seed 003: 11+)"
        return "a fall: no actions for the rest of the round (seed 003: 7-10)"

    def apply_check(self, token: Token, what: str, degree: str) -> Token:  # noqa: C901
        """A movement roll's result on the token (seed 003's Movement Failures table).

        ``what`` is a :class:`CellCheck`'s ``what`` (``move <pace> ...``, ``jump <pace> ...``)
        or ``stamina <pace>``; the pace sets the collision damage. Where the move ends is
        not state: the turn loop ends it at :meth:`failure_share`. State kept, what lasts
        past the move: counters ``penalty`` (-nD the rest of this round), ``penalty_next``,
        ``lose_next`` (a tumble: no actions next round either), ``collision_dice`` (rolled
        against Strength at the end of the round), ``speed`` (a fall or tumble stops the
        token: setting ``fall_speed``); conditions ``no_actions`` (the rest of this round: a
        fall or tumble), the posture ``kneeling`` (7-10) or ``prone`` (11+),
        ``fallen`` (a jump short, into the gap), ``exhausted`` (a failed stamina roll: rest).
        """
        words = what.split()
        kind = words[0] if words else ""
        pace = words[1].rstrip(":") if len(words) > 1 else ""
        if pace not in PACES:
            pace = SPEEDS[token.state.counter("speed")]
        state = token.state
        if kind == "stamina":
            if degree != "success":
                failure_effect(degree)  # validates the degree name
                state = self._exhausted(state, pace)
            return replace(token, state=state)
        effect = failure_effect(degree, self.config["tumble_stop"])
        if effect.penalty_now:
            state = _set(state, "penalty", state.counter("penalty") + effect.penalty_now)
        if effect.penalty_next:
            state = _set(state, "penalty_next", state.counter("penalty_next") + effect.penalty_next)
        if effect.lose_round:  # a fall or tumble: down, at a stop (setting fall_speed)
            state = state.with_conditions("no_actions")
            if self.config["fall_speed"] == "stop":
                state = _set(state, "speed", SPEEDS.index("stop"))
        if effect.lose_next:
            state = _set(state, "lose_next", 1)
        if effect.posture:  # prone after a tumble, not kneeling too
            state = state.with_conditions(effect.posture, remove=_POSTURES)
        if kind == "jump" and effect.distance < 1:  # short of the far side (failure_share)
            state = state.with_conditions("fallen")
        if pace in PACES:
            damage = collision_damage(pace, degree, self.config["tumble_stop"])
            if damage is not None:
                state = _set(state, "collision_dice", state.counter("collision_dice") + damage.dice)
        return replace(token, state=state)

    @staticmethod
    def _exhausted(state: TokenState, pace: str) -> TokenState:
        """A failed stamina roll at ``pace``: ``exhausted``, at a stop, owing a rest
        (``rest_due`` rounds). Seed 003: sprinting or running, "If failed: must rest twice as
        long as sprint duration" ("... as run duration"): twice the run so far; a march
        (cruising, cautious), "1 hour of sleep per stamina check restores vigor": an hour a
        roll made."""
        if pace in ("all_out", "high"):
            owed = 2 * state.counter("run_rounds")
        else:
            owed = SLEEP_ROUNDS * state.counter("stamina_rolls")
        state = _set(_set(state, "rest_due", owed), "rest_rounds", 0)
        return _set(state.with_conditions("exhausted"), "speed", SPEEDS.index("stop"))

    def start_turn(self, token: Token, dice: Any) -> Token:
        """A new round: next round's penalties and lost actions arrive, the old ones go.

        Ruling R2: a token that lost this round too (a tumble's "no actions this round or
        next") keeps ``no_actions`` and its posture; one that may act again loses both
        (getting up is part of this round's move: the seed gives it no cost).
        """
        state = token.state
        state = _set(state, "penalty", state.counter("penalty_next"))
        state = _set(state, "penalty_next", 0)
        if state.counter("lose_next"):
            state = _set(state, "lose_next", 0).with_conditions("no_actions")
        else:
            state = state.with_conditions(remove=("no_actions", *_POSTURES))
        return replace(token, state=state)

    def end_turn(self, token: Token, dice: Any) -> Token:
        """The end of the round: its collision damage (:meth:`_collision`), then a stamina
        roll that fell due this round (:meth:`_stamina_roll`); each roll an event."""
        return self._stamina_roll(self._collision(token, dice), dice)

    def end_turn_outcomes(self, token: Token) -> list[tuple[Token, Fraction]] | None:
        """:meth:`end_turn`'s outcomes with their chances: the collision damage against
        Strength, one token per margin (``collision_margin``, ``injured`` above 0) with the
        chance of that margin from the two pools' distributions (exact but for the wild
        die's tail beyond 16 explosions, ``6**-16``: :func:`engine.dice.d6_pool_dist`);
        then a stamina roll that fell due, each degree of it with its chance
        (:meth:`_stamina_outcomes`)."""
        state = token.state
        n = state.counter("collision_dice")
        if not n:
            return self._stamina_outcomes(token, Fraction(1))
        wild, wild_one = self.config["wild_die"], self.config["wild_one"]
        margins = collision_margins(n, str(token["strength"]), wild, wild_one)
        plain = _set(state, "collision_dice", 0)
        out: list[tuple[Token, Fraction]] = []
        for margin, p in margins:
            st = _set(plain, "collision_margin", margin)
            hit = token.with_state(st.with_conditions("injured") if margin > 0 else st)
            out += self._stamina_outcomes(hit, p)
        return out

    def _stamina_outcomes(self, token: Token, p: Fraction) -> list[tuple[Token, Fraction]]:
        """:meth:`_stamina_roll`'s outcomes, each degree of the roll with its exact chance
        times ``p`` (the token alone where no roll is due)."""
        state = token.state
        due = state.counter("stamina_due")
        if not due:
            return [(token, p)]
        level = state.counter("stamina_rolls")
        check = self._check(self.stamina_code(token)[1], self.number(level), 1, 0)
        state = _set(_set(state, "stamina_due", 0), "stamina_rolls", level + 1)
        what = f"stamina {SPEEDS[due]}"
        return [
            (self.apply_check(token.with_state(state), what, degree), p * q)
            for degree, q in check.outcomes().items()
            if q
        ]

    def _stamina_roll(self, token: Token, dice: Any) -> Token:
        """The stamina roll due at the end of this round (:meth:`_stamina_clock`), RULES.md 3
        in play: "first roll Very Easy, one level harder each roll, a failure forcing rest".
        Seed 003: the ``stamina`` skill, else Strength (:meth:`stamina_code`); no round's
        penalty applies (it is no action of the round)."""
        state = token.state
        due = state.counter("stamina_due")
        if not due:
            return token
        pace = SPEEDS[due]
        level = state.counter("stamina_rolls")
        dn = self.number(level)
        code = self.stamina_code(token)[1]
        result = self._check(code, dn, 1, 0).roll(dice)
        state = _set(_set(state, "stamina_due", 0), "stamina_rolls", level + 1)
        token = self.apply_check(token.with_state(state), f"stamina {pace}", result.degree)
        rest = token.state.counter("rest_due")
        dice.decide(  # the roll's expression names the code; one line of a replay's text
            result.events[0],
            f"{self.describe_degree(result.degree)}: stamina roll {level + 1}, "
            f"{level_name(level).replace('_', ' ')} DN {dn}: "
            + ("goes on" if result.success else f"exhausted, rests {rest} rounds"),
        )
        return token

    def _collision(self, token: Token, dice: Any) -> Token:
        """Roll this round's collision damage against Strength (each roll an event).

        The seed gives no wound chart: the state keeps ``collision_margin`` (damage total less
        the Strength total) and the condition ``injured`` when damage beats Strength.
        """
        n = token.state.counter("collision_dice")
        if not n:
            return token
        wild, wild_one = self.config["wild_die"], self.config["wild_one"]
        hit = dice.roll_code(_damage_code(n), wild=wild, wild_one=wild_one)
        resist = dice.roll_code(DieCode.parse(token["strength"]), wild=wild, wild_one=wild_one)
        margin = hit.total - resist.total
        injured = margin > 0
        dice.decide(hit, f"collision damage {n}D: {'injured' if injured else 'no injury'}")
        dice.decide(resist, f"strength resists: margin {margin}")
        state = _set(_set(token.state, "collision_dice", 0), "collision_margin", margin)
        if injured:
            state = state.with_conditions("injured")
        return token.with_state(state)

    # ----------------------------------------------------------------- long distance

    def long_distance(
        self,
        token: Token,
        distance_m: Any,
        speed: str,
        forced: bool = False,
        *,
        mode: str = "walk",
        terrain: Terrain | None = None,
        harder: int = 0,
    ) -> LongDistance:
        """The stamina checks of covering ``distance_m`` at ``speed``, and the exact chance to
        arrive without failing one.

        Seed 003: sprinting (all-out) checks every minute, running (high) every 10 minutes, a
        march (cruising; cautious too) every 3 hours or every 2 on a ``forced`` march; the
        first check is Very Easy, each next one a level harder (``harder`` starts the ladder
        higher: arduous terrain). A check falls due at each full interval spent moving, up to
        and including the arrival. With a ``terrain``, its movement roll at that speed is
        made on the same schedule. The stamina roll is the ``stamina`` skill, else Strength.
        """
        try:
            distance = exact(distance_m)
        except (ValueError, ZeroDivisionError):
            distance = Fraction(-1)
        if distance < 0:
            raise ArgumentError(f"distance {distance_m!r}: expected metres >= 0, e.g. 10000")
        used = self.effective_pace(token, _speed_name(speed, PACES))
        if forced and used not in ("cruising", "cautious"):
            raise ArgumentError(
                f"forced march at {speed}: a forced march is cruising (or cautious); "
                "sprints and runs have their own schedule"
            )
        per_round = self.rate(token, mode, used)
        if per_round <= 0:
            raise ArgumentError(f"long distance in mode '{mode}': this token cannot move there")
        rounds = distance / per_round
        seconds = rounds * self.turn_seconds
        interval = FORCED_MARCH_INTERVAL_S if forced else STAMINA_INTERVAL_S[used]
        count = int(seconds // interval)
        if count > MAX_STAMINA_CHECKS:
            raise ArgumentError(
                f"distance {jsonable(distance)} m at {used}: {count} stamina checks; at most "
                f"{MAX_STAMINA_CHECKS} are computed (choose a shorter distance or a slower speed)"
            )
        stamina, code = self.stamina_code(token)
        wild, wild_one = self.config["wild_die"], self.config["wild_one"]
        hazard = None if terrain is None else self.move_check(token, terrain, used, other=0)
        checks: list[StaminaCheck] = []
        p_arrive = Fraction(1)
        for k in range(1, count + 1):
            at = Fraction(k * interval)
            level = k - 1 + harder
            dn = self.number(level)
            p = p_at_least(code, dn, wild=wild, wild_one=wild_one)
            rest = 2 * at if used in ("all_out", "high") else None
            terrain_p = None if hazard is None else hazard.p_success
            checks.append(StaminaCheck(k, at, level_name(level), dn, p, rest, terrain_p))
            p_arrive *= p * (1 if terrain_p is None else terrain_p)
        return LongDistance(
            speed=speed,
            speed_used=used,
            mode=mode,
            forced=forced,
            distance_m=distance,
            m_per_round=per_round,
            rounds=rounds,
            time_s=seconds,
            interval_s=interval,
            stamina=f"{stamina} {code}",
            terrain=None if hazard is None else f"{hazard.what} {hazard.target}",
            checks=tuple(checks),
            p_arrive=p_arrive,
        )

    def long_distance_figure(
        self, token: Token, distance_m: Any = LONG_DISTANCE_M, *, terrain: str | None = None
    ) -> dict[str, Any]:
        """The ``long_distance`` figure of ``stats``: every speed (and a forced march) over
        ``distance_m`` metres. With ``terrain`` (a difficulty level) the marches (cruising,
        cautious) also roll its movement check on their schedule: seed 003 "Also roll terrain
        movement checks every 3 hours (or 2 hours if forced march)"."""
        ground = None if terrain is None else self._march_terrain(terrain)
        out: dict[str, Any] = {}
        for pace in PACES:
            march = ground if pace in ("cruising", "cautious") else None
            out[pace] = self.long_distance(token, distance_m, pace, terrain=march).to_dict()
            if pace == "cruising":
                out["cruising_forced"] = self.long_distance(
                    token, distance_m, pace, True, terrain=march
                ).to_dict()
        figure: dict[str, Any] = {"distance_m": jsonable(exact(distance_m)), "speeds": out}
        if terrain is not None:
            figure["terrain"] = terrain
        return figure

    @staticmethod
    def _march_terrain(level: str) -> Terrain:
        """A ground of difficulty ``level`` for a march's terrain checks (``--terrain``)."""
        if level not in LEVELS:
            raise ArgumentError(
                role="terrain",
                given=level,
                problem=f"expected a difficulty, {' | '.join(LEVELS)}"
                f"{did_you_mean(level, list(LEVELS))}",
            )
        return Terrain(difficulty=level)

    # ----------------------------------------------------------------- the stats report

    def extra_stats(self, token: Token) -> dict[str, Any]:
        previous = SPEEDS[token.state.counter("speed")]
        walk_skill, walk_code = self.skill(token, "walk")
        terrain_checks: dict[str, Any] = {}
        for pace in PACES:
            row: dict[str, Any] = {}
            for i, level in enumerate(LEVELS):
                found = self.move_check(token, Terrain(difficulty=level), pace, other=0)
                rule, dn = self.terrain_dn(i, self.effective_pace(token, pace))
                entry: dict[str, Any] = {"asks": rule.asks, "action": rule.action}
                if found is not None:
                    entry |= {"rolls": level_name(rule.rolled_level), "dn": dn}
                    entry["p_success"] = float(found.p_success)
                row[level] = entry
            terrain_checks[pace] = row
        capacity = self.carrying_capacity(token)
        return {
            "speed": {
                "previous": previous,
                "allowed": list(self.allowed_paces(token)),
                "top": self.top_speed(token),
            },
            "partial_moves": {pace: list(self.move_range(token, pace)) for pace in PACES},
            "acceleration": {s: list(allowed_speeds(s)) for s in SPEEDS},
            "skills": {
                mode: " ".join(str(x) for x in self.skill(token, mode))
                for mode in ("walk", "swim", "climb", "gap")
            }
            | {"stamina": " ".join(str(x) for x in self.stamina_code(token))},
            "difficulty_numbers": {
                level_name(i): {"dn": self.number(i), "range": list(level_range(i))}
                for i in range(len(LEVELS) + 1)
            },
            "terrain_checks": {"roll": f"{walk_skill} {walk_code}", **terrain_checks},
            "collision_damage": {pace: f"{n}D" for pace, n in COLLISION_DICE.items()},
            "maneuvers": [
                {"name": m.name, "modifier": [m.low, m.high], "for": m.description}
                for m in MANEUVERS
            ],
            "carrying": {
                "capacity_items": capacity,
                "items": token["items"],
                "rule_on": self.config["encumbrance"],
                "overloaded": self.overloaded(token),
            },
            "long_distance": self.long_distance_figure(token),
            **self.seed_reach_stats(token),
        }

    def seed_reach_stats(self, token: Token) -> dict[str, Any]:
        """``stats`` figures of issue 17: what overloading leads to (RULES.md 3, ruling
        ``overload = stamina | none``: an overloaded token rolls stamina on the long-distance
        schedule of its speed, first Very Easy, one level harder each roll), and the long
        march's terrain checks (seed 003: every 3 hours, 2 on a forced march). ``rolls_stamina``
        is whether the token rolls that schedule in play (setting ``stamina=true`` too), and
        ``in_play`` its rounds between rolls and where the token's run stands."""
        rule = self.config.get("overload", "stamina")
        rolls = self.rolls_stamina(token)
        stamina, code = self.stamina_code(token)
        st = token.state
        return {
            "overload": {
                "rule": rule,
                "overloaded": self.overloaded(token),
                "rolls_stamina": rolls,
                "stamina": f"{stamina} {code}",
                "every_s": dict(STAMINA_INTERVAL_S) if rolls else None,
                "first_level": level_name(0) if rolls else None,
                "first_p_success": float(
                    p_at_least(
                        code,
                        self.number(0),
                        wild=self.config["wild_die"],
                        wild_one=self.config["wild_one"],
                    )
                )
                if rolls
                else None,
                "on_failure": "rest (all-out, high: twice as long as the run so far; a march: "
                "an hour a check made)"
                if rolls
                else None,
                "in_play": {
                    "every_rounds": dict(STAMINA_ROUNDS),
                    "run_rounds": st.counter("run_rounds"),
                    "next_level": level_name(st.counter("stamina_rolls")),
                    "exhausted": st.has("exhausted"),
                    "rest_due_rounds": st.counter("rest_due") - st.counter("rest_rounds")
                    if st.has("exhausted")
                    else 0,
                }
                if rolls
                else None,
            },
            "march_terrain_checks": {
                "every_s": STAMINA_INTERVAL_S["cruising"],
                "forced_every_s": FORCED_MARCH_INTERVAL_S,
                "how": "stats --distance METRES --terrain DIFFICULTY",
            },
        }


@dataclass(frozen=True)
class StaminaCheck:
    """One stamina roll of a long move: when (seconds moving), how hard, its exact chance.

    ``rest_if_failed_s``: failing a sprint's or a run's check means resting twice as long as
    the run so far. ``terrain_p``: the chance of the terrain roll made at the same time.
    """

    n: int
    at_s: Fraction
    level: str
    dn: int
    p_success: Fraction
    rest_if_failed_s: Fraction | None = None
    terrain_p: Fraction | None = None

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "check": self.n,
            "at_s": jsonable(self.at_s),
            "at": _clock(self.at_s),
            "level": self.level,
            "dn": self.dn,
            "p_success": float(self.p_success),
            "p_success_exact": str(self.p_success),
        }
        if self.rest_if_failed_s is not None:
            out["rest_if_failed_s"] = jsonable(self.rest_if_failed_s)
        if self.terrain_p is not None:
            out["terrain_p_success"] = float(self.terrain_p)
        return out


@dataclass(frozen=True)
class LongDistance:
    """A long move's schedule of stamina checks and the exact chance to pass them all."""

    speed: str
    speed_used: str
    mode: str
    forced: bool
    distance_m: Fraction
    m_per_round: Fraction
    rounds: Fraction
    time_s: Fraction
    interval_s: int
    stamina: str
    terrain: str | None
    checks: tuple[StaminaCheck, ...]
    p_arrive: Fraction

    @property
    def sleep_hours(self) -> int:
        """Hours of sleep that restore vigor after a march (one per stamina check)."""
        return len(self.checks)

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "speed": self.speed_used,
            "mode": self.mode,
            "forced": self.forced,
            "distance_m": jsonable(self.distance_m),
            "m_per_round": jsonable(self.m_per_round),
            "rounds": jsonable(self.rounds),
            "time_s": jsonable(self.time_s),
            "time": _clock(self.time_s),
            "check_every_s": self.interval_s,
            "stamina": self.stamina,
        }
        if self.speed != self.speed_used:
            out["asked_speed"] = self.speed
        if self.terrain is not None:
            out["terrain"] = self.terrain
        out["checks"] = [c.to_dict() for c in self.checks]
        out["p_arrive"] = float(self.p_arrive)
        # Many stamina checks make exact fractions of thousands of digits: they stay exact
        # in the computation, but the text shows them only while they are short enough to
        # read; beyond that 17 significant digits of it (below a float's range too).
        p = self.p_arrive
        if max(p.numerator.bit_length(), p.denominator.bit_length()) <= EXACT_TEXT_BITS:
            out["p_arrive_exact"] = str(p)
        else:
            from decimal import Context, Decimal

            approx = Context(prec=17).divide(Decimal(p.numerator), Decimal(p.denominator))
            out["p_arrive_approx"] = str(approx)
        if self.speed_used in ("cruising", "cautious"):
            out["sleep_h"] = self.sleep_hours
        return out


#: Longest exact fraction (bits of numerator or denominator) a report prints as text.
EXACT_TEXT_BITS = 256


def long_distance(
    token: Token,
    distance_m: Any,
    speed: str,
    forced: bool = False,
    *,
    settings: Mapping[str, Any] | None = None,
    **options: Any,
) -> LongDistance:
    """:meth:`D6.long_distance` under ``settings`` (default: the rulings).

    >>> from engine import systems
    >>> rhen = systems.create("d6").token("move=10,strength=3D")
    >>> plan = long_distance(rhen, 10000, "high")  # 2500 s: checks at 10, 20, 30, 40 min
    >>> [(c.at_s, c.dn) for c in plan.checks]
    [(Fraction(600, 1), 3), (Fraction(1200, 1), 8), (Fraction(1800, 1), 13), (Fraction(2400, 1), 18)]
    """
    return D6(settings).long_distance(token, distance_m, speed, forced, **options)


SYSTEM = D6
