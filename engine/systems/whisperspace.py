"""Whisperspace (seeds 000 and 001; RULES.md section 1).

Over 800 lines on purpose: a rule system is one plug-in module (adding a system touches no
other file; ARCHITECTURE.md), and its sections follow the seed's chapters.

Three sections:

* **Checks** - 1d12 + modifier >= DC with four degrees and bonus/penalty dice
  (:class:`WhisperspaceCheck`, :func:`parse_check`).
* **Movement tables** - pure functions the turn loop and the viewer show:
  :func:`net_bonus`, :func:`speed_with`, :func:`encumbrance_for`, :func:`plan_turn` (moves
  split around other actions), :func:`fall_band`, :func:`fall_severity`, :func:`fall_odds`.
* **The rule system** - :class:`Whisperspace`: Speed per Move action (the ``speed`` stat or
  30 + 5 x PHYS), 3 actions a turn (paces walk/run/sprint = 1/2/3 Move actions), movement
  bonuses and penalties from stats, mode, encumbrance, dragging, Asphyxiating and check
  results, all in 10-ft steps capped at double and floored at 0 (Immobile); swim and climb
  checks from the terrain; the heavy-load Endurance check each turn; falls.

Everything that changes in play (check effects, Asphyxiating, prone, a dropped load, Stress,
damage, stun, a fall still to roll) is in ``token.state``: conditions ``prone``,
``standing_up`` (this turn's first 15 ft go to standing), ``asphyxiating``, ``stunned``,
``unconscious``, ``strained`` (failed the hourly check), ``immobile``; counters
``check_penalty_swim``/``check_penalty_climb`` (+1 failure, -1 extreme success),
``dropped_bulk``, ``heavy_turns``, ``encumbered_turns``, ``rest_turns``, ``stress``,
``damage``, ``stunned_rounds``, ``fall_ft``.

Checks over time (seed 000) are token state carried from turn to turn: the heavy-load
check at the start of every turn (``heavy_turns`` raises its DC), the hourly check while
encumbered (``encumbered_turns``: 600 turns of 6 s), and rests (``rest_turns``: turns in a
row without leaving the cell, :meth:`Whisperspace.paced`); none is rolled while swimming.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, replace
from fractions import Fraction
from typing import Any, ClassVar

from engine.checks import BatchResult, CheckResult, field_int, finish_batch, parse_fields
from engine.dice import Dice, Dist, add_constant, die_dist, keep_highest, keep_lowest
from engine.errors import ArgumentError, CheckError, StatError, did_you_mean
from engine.lazy import numpy as np
from engine.systems.base import (
    ActSpec,
    CellCheck,
    Param,
    RuleSystem,
    SearchState,
    Setting,
    Stat,
    Token,
    TokenState,
    exact,
)
from engine.terrain import Terrain

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


def parse_check(text: str) -> WhisperspaceCheck | FallCheck:
    """Read ``athletics=2 dc=6 bonus=1 penalty=0``.

    The modifier may be given as ``mod=``, ``modifier=``, ``skill=`` or a skill name
    (``athletics``, ``endurance``, ``reflex``); it defaults to 0. ``dc`` is required;
    ``bonus`` and ``penalty`` are dice counts (>= 0, default 0). ``fall=FEET`` alone is the
    Fall Severity roll (:class:`FallCheck`); the flag ``asphyxiation`` makes the check the
    Asphyxiation check near the surface, whose DC defaults to the swimming DC 6.

    >>> parse_check("athletics=2 dc=6 bonus=1").net_dice
    1
    """
    fall = _fall_check(text)
    if fall is not None:
        return fall
    fields = parse_fields(
        text,
        keys=_CHECK_KEYS,
        flags={"asphyxiation": ("asphyxiation", "yes")},
        example=_CHECK_EXAMPLE,
    )
    skill = fields["modifier"][0].split("=", 1)[0].lower() if "modifier" in fields else "mod"
    asphyxiation = "asphyxiation" in fields
    if asphyxiation:
        skill = f"asphyxiation {skill}"
    return WhisperspaceCheck(
        modifier=field_int(fields, "modifier", example=2, default=0),
        dc=field_int(
            fields, "dc", example=6, text=text, default=ASPHYXIATION_DC if asphyxiation else None
        ),
        bonus=field_int(fields, "bonus", example=1, default=0, minimum=0),
        penalty=field_int(fields, "penalty", example=1, default=0, minimum=0),
        skill=skill,
    )


ASPHYXIATION_DC = 6
"""The seeds name an Asphyxiation check but give it no DC; the project reads it as the swimming
check it ends (Athletics DC 6, + 2 encumbered, + 6 heavily encumbered)."""


def _fall_check(text: str) -> FallCheck | None:
    """``fall=FEET`` (nothing else) as a :class:`FallCheck`; None when ``fall=`` is absent."""
    tokens = [t for t in re.split(r"[\s,]+", text.strip()) if t]
    falls = [t for t in tokens if t.lower().startswith("fall=")]
    if not falls:
        return None
    if len(tokens) != 1:
        others = " ".join(t for t in tokens if t not in falls)
        raise CheckError(
            f"check '{others}': a fall check takes only fall=FEET (the Fall Severity roll has "
            "no modifier), e.g. fall=25"
        )
    raw = falls[0].split("=", 1)[1]
    try:
        feet = exact(raw)
    except (ValueError, ZeroDivisionError):
        feet = Fraction(-1)
    if feet < 0 or feet > 1_000_000:
        raise CheckError(f"check '{falls[0]}': fall must be feet fallen, 0..1000000, e.g. fall=25")
    return FallCheck(feet)


# =============================================================================================
# Movement tables: pure functions (seed 000; RULES.md section 1)
# =============================================================================================

MOVE_STEP_FT = 10
"""Each movement bonus adds, and each penalty takes, 10 ft of speed (seed 000)."""

STAND_UP_FT = 15
"""Standing up from prone uses 15 ft of a Move action (seed 000)."""

MOVE_ACTIONS = {"walk": 1, "run": 2, "sprint": 3}
"""Paces: how many of the turn's 3 actions are Move actions (CONTRACT.md)."""

LEVEL_DC = {
    "very_easy": 4,
    "easy": 6,
    "moderate": 9,
    "difficult": 12,
    "very_difficult": 15,
    "heroic": 18,
}
"""A terrain's neutral difficulty to a DC (seed 001's table; RULES.md section 1)."""

ENCUMBRANCE_DC_ADD = {"none": 0, "encumbered": 2, "heavy": 6, "immobile": 6}
"""Swim and climb DC increase by encumbrance (seed 000)."""

ENCUMBRANCE_PENALTY = {"none": 0, "encumbered": 1, "heavy": 2, "immobile": 2}
"""Movement penalties from encumbrance: heavy's +2 replaces the +1 (RULES.md section 1)."""

STRAIN_DC = 6
"""Endurance DC of the encumbrance checks; +1 per consecutive heavy turn (seed 000)."""

HOUR_TURNS = 600
"""Turns in an hour (6-second turns): how often an encumbered token rolls (seed 000). The
hour counts every turn the token is encumbered, swimming included; a check that falls due
in the water waits for its first turn out of it (:meth:`Whisperspace.start_turn`)."""

REST_TURNS = 100
"""Turns in ten minutes: a rest this long (turns in a row in which the token does not leave
its cell: :meth:`Whisperspace.paced`) resets the heavy-load DC to 6 and, without any
encumbrance, ends a failed hourly check's heavy encumbrance (seed 000)."""


def net_bonus(bonuses: int, penalties: int) -> int:
    """Movement bonuses and penalties after they cancel: > 0 bonuses, < 0 penalties.

    Unlike bonus and penalty *dice*, nothing caps the count: the speed cap does that.

    >>> net_bonus(2, 1), net_bonus(1, 3)  # seed 000: 1 bonus; 2 penalties
    (1, -2)
    """
    return bonuses - penalties


def describe_net(net: int) -> str:
    """``net`` in the seed's words: ``'1 bonus'``, ``'2 penalties'``, ``'none'``."""
    if net == 0:
        return "none"
    n = abs(net)
    word = ("bonus" if n == 1 else "bonuses") if net > 0 else ("penalty" if n == 1 else "penalties")
    return f"{n} {word}"


def speed_with(base: Fraction | int, net: int) -> Fraction:
    """Speed after ``net`` movement bonuses (negative: penalties), in ft.

    Each step is 10 ft; the result never exceeds double ``base`` and never drops below 0
    (0 ft is Immobile).

    >>> speed_with(35, 1), speed_with(35, -2), speed_with(30, 5), speed_with(30, -4)
    (Fraction(45, 1), Fraction(15, 1), Fraction(60, 1), Fraction(0, 1))
    """
    base = Fraction(base)
    return max(Fraction(0), min(2 * base, base + MOVE_STEP_FT * net))


def derived_speed(phys: int, base: Fraction | int = 30, per_phys: Fraction | int = 5) -> Fraction:
    """Speed from PHYS by the ruling 30 + 5 x PHYS (the settings change 30 and 5)."""
    return Fraction(base) + Fraction(per_phys) * phys


def derived_capacity(phys: int, base: int = 5, per_phys: int = 5) -> int:
    """Inventory slots from PHYS by the ruling 5 + 5 x PHYS."""
    return base + per_phys * phys


def encumbrance_for(bulk: Fraction | int, capacity: Fraction | int) -> str:
    """``none`` | ``encumbered`` | ``heavy`` | ``immobile`` for ``bulk`` carried in ``capacity`` slots.

    Strictly more than capacity is encumbered, more than double heavy, more than triple
    prone and Immobile (seed 000).

    >>> [encumbrance_for(b, 10) for b in (10, 11, 20, 21, 30, 31)]
    ['none', 'encumbered', 'encumbered', 'heavy', 'heavy', 'immobile']
    """
    if bulk > 3 * capacity:
        return "immobile"
    if bulk > 2 * capacity:
        return "heavy"
    if bulk > capacity:
        return "encumbered"
    return "none"


@dataclass(frozen=True)
class TurnPlan:
    """How a turn's moves and other actions fit in its actions (see :func:`plan_turn`).

    ``legs`` lists each movement step as (Move action number from 1, feet); ``left_ft`` is
    what the last Move action still has; ``fits`` is whether it all takes at most the
    turn's actions (``reason`` says why not).
    """

    actions: int
    move_actions: int
    other_actions: tuple[str, ...]
    moved: Fraction
    left_ft: Fraction
    legs: tuple[tuple[int, Fraction], ...]
    fits: bool
    reason: str = ""


def plan_turn(
    speed: Fraction | int,
    steps: list[Fraction | int | str] | tuple[Fraction | int | str, ...],
    *,
    actions: int = 3,
) -> TurnPlan:
    """Fit a turn's steps into Move actions of ``speed`` ft and other actions.

    A step is a distance in ft (movement), ``"stand"`` (standing from prone: 15 ft of one
    Move action, or all of a Move action worth less) or any other word (one other action).
    Movement may be split around other actions (seed 000), so movement first uses what the
    open Move action has left and only then opens another; that is the fewest actions.

    >>> p = plan_turn(35, [10, "attack", 10, "interact", 15])  # seed 000's example
    >>> p.actions, p.move_actions, p.left_ft, p.fits
    (3, 1, Fraction(0, 1), True)
    """
    speed = Fraction(speed)
    open_left = Fraction(0)
    moves = 0
    others: list[str] = []
    legs: list[tuple[int, Fraction]] = []
    moved = Fraction(0)
    reason = ""
    for step in steps:
        if isinstance(step, str) and step != "stand":
            others.append(step)
            continue
        if speed <= 0:
            reason = "speed 0 ft: Immobile"
            break
        if step == "stand":
            need = min(Fraction(STAND_UP_FT), speed)
            if open_left < need:
                moves, open_left = moves + 1, speed
            open_left -= need
            continue
        dist = Fraction(step)
        if dist < 0:
            raise ValueError(f"plan_turn: a distance must be >= 0 ft, got {step}")
        moved += dist
        while dist > 0:
            if open_left == 0:
                moves, open_left = moves + 1, speed
            take = min(dist, open_left)
            legs.append((moves, take))
            open_left -= take
            dist -= take
    used = moves + len(others)
    if not reason and used > actions:
        reason = f"needs {used} actions ({moves} Move), the turn has {actions}"
    return TurnPlan(
        actions=used,
        move_actions=moves,
        other_actions=tuple(others),
        moved=moved,
        left_ft=open_left,
        legs=tuple(legs),
        fits=not reason,
        reason=reason,
    )


# --------------------------------------------------------------------------- falling


@dataclass(frozen=True)
class FallBand:
    """A range band a fall is measured in, and its Fall Severity modifier (seed 000)."""

    name: str
    label: str
    max_ft: int | None  # inclusive; None for the last band
    modifier: int


FALL_BANDS: tuple[FallBand, ...] = (
    FallBand("melee", "Melee", 5, -2),
    FallBand("very_near", "Very Near", 15, -1),
    FallBand("near", "Near", 30, 0),
    FallBand("medium", "Medium", 60, 2),
    FallBand("long", "Long", 120, 4),
    FallBand("very_long", "Very Long", 250, 6),
    FallBand("extreme", "Extreme", None, 9),
)
"""Feet fallen to band: <= 5 Melee ... more than 250 Extreme (RULES.md section 1)."""


@dataclass(frozen=True)
class FallOutcome:
    """A row of the Fall Severity table: the results it covers and what happens."""

    row: str
    low: int | None  # None: every result below `high` (the "1-3" row takes results < 1)
    high: int | None  # None: open-ended (16+)
    damage: int
    stunned_rounds: int = 0
    unconscious: bool = False

    @property
    def text(self) -> str:
        parts = [f"{self.damage} damage" if self.damage else "no damage"]
        if self.stunned_rounds:
            s = "s" if self.stunned_rounds > 1 else ""
            parts.append(f"Stunned {self.stunned_rounds} round{s}")
        if self.unconscious:
            parts.append("Unconscious")
        return ", ".join(parts)


FALL_SEVERITY: tuple[FallOutcome, ...] = (
    FallOutcome("1-3", None, 3, 0),
    FallOutcome("4-6", 4, 6, 1),
    FallOutcome("7-8", 7, 8, 2),
    FallOutcome("9-10", 9, 10, 3, stunned_rounds=1),
    FallOutcome("11-12", 11, 12, 4, stunned_rounds=2),
    FallOutcome("13-15", 13, 15, 6, unconscious=True),
    FallOutcome("16+", 16, None, 8),
)
"""The Fall Severity table (seed 000). Damage is unmitigated; every fall lands prone."""


def fall_band(feet: Fraction | int) -> FallBand:
    """The range band of a fall of ``feet`` ft (a fall of 0 ft is Melee).

    >>> [fall_band(f).label for f in (5, 6, 30, 31, 250, 251)]
    ['Melee', 'Very Near', 'Near', 'Medium', 'Very Long', 'Extreme']
    """
    if feet < 0:
        raise ValueError(f"fall_band: feet fallen must be >= 0, got {feet}")
    for band in FALL_BANDS:
        if band.max_ft is None or feet <= band.max_ft:
            return band
    raise AssertionError("unreachable: the last band is open-ended")


def fall_severity(result: int) -> FallOutcome:
    """The Fall Severity table's row for a roll ``result`` (1d12 + band modifier).

    >>> fall_severity(-1).row, fall_severity(9).text, fall_severity(21).damage
    ('1-3', '3 damage, Stunned 1 round', 8)
    """
    for row in FALL_SEVERITY:
        if row.high is None or result <= row.high:
            return row
    raise AssertionError("unreachable: the last row is open-ended")


def fall_roll_dist(feet: Fraction | int) -> Dist:
    """Exact distribution of the Fall Severity roll for a fall of ``feet``."""
    return add_constant(die_dist(12), fall_band(feet).modifier)


def fall_odds(feet: Fraction | int) -> dict[str, Fraction]:
    """Exact chance of each Fall Severity row for a fall of ``feet``, every row listed.

    >>> fall_odds(20)["16+"], fall_odds(300)["16+"]  # Near: never; Extreme: 1d12+9 >= 16
    (Fraction(0, 1), Fraction(1, 2))
    """
    out = {row.row: Fraction(0) for row in FALL_SEVERITY}
    for result, p in fall_roll_dist(feet).items():
        out[fall_severity(result).row] += p
    return out


class FallCheck:
    """The Fall Severity roll as a check (``tacgrid odds --system whisperspace fall=25``).

    1d12 + the band modifier of ``feet`` fallen (RULES.md 1's table); the degrees are the Fall
    Severity rows, best first, and only ``1-3`` (no damage) counts as a success. The margin of
    a roll is 3 - result: >= 0 exactly when the fall does no damage.
    """

    degrees: ClassVar[tuple[str, ...]] = tuple(row.row for row in FALL_SEVERITY)

    def __init__(self, feet: Fraction) -> None:
        if feet < 0:
            raise ArgumentError(f"fall={feet}: feet fallen must be >= 0, e.g. fall=25")
        self.feet = Fraction(feet)
        self.band = fall_band(self.feet)

    def outcomes(self) -> dict[str, Fraction]:
        return fall_odds(self.feet)

    def p_success(self) -> Fraction:
        return self.outcomes()[FALL_SEVERITY[0].row]

    def roll(self, dice: Dice) -> CheckResult:
        event = dice.roll(1, 12, self.band.modifier)
        outcome = fall_severity(event.total)
        event = dice.decide(event, f"{outcome.row}: {outcome.text}, prone")
        margin = 3 - event.total
        return CheckResult(outcome.row, margin >= 0, event.total, margin, (event,))

    def roll_many(self, dice: Dice, n: int) -> BatchResult:
        totals = dice.faces_array(n, 12).astype(np.int64) + self.band.modifier
        highs = np.array([row.high for row in FALL_SEVERITY[:-1]])
        index = np.searchsorted(highs, totals, side="left")
        return finish_batch(dice, self, self.degrees, 1, index, totals, 3 - totals)

    def __str__(self) -> str:
        sign = f"{self.band.modifier:+d}" if self.band.modifier else ""
        return f"fall={_ft(self.feet)} ({self.band.label}: 1d12{sign})"


def fall_table() -> list[dict[str, Any]]:
    """RULES.md 1's falling tables in one: per band its heights, modifier and the exact
    chance of each Fall Severity row (``stats`` shows it)."""
    out: list[dict[str, Any]] = []
    low: int = 0
    for band in FALL_BANDS:
        feet = band.max_ft if band.max_ft is not None else low + 1
        out.append(
            {
                "band": band.name,
                "label": band.label,
                "over_ft": low,
                "up_to_ft": band.max_ft,
                "roll": f"1d12{band.modifier:+d}" if band.modifier else "1d12",
                "outcomes": {
                    row: f"{p.numerator}/{p.denominator}" for row, p in fall_odds(feet).items()
                },
            }
        )
        low = band.max_ft if band.max_ft is not None else low
    return out


FALL_OUTCOMES = {row.row: row.text for row in FALL_SEVERITY}
"""Each Fall Severity row's effect, in words (every fall also lands prone)."""

# --------------------------------------------------------------------------- items (seed 000)


@dataclass(frozen=True)
class ItemKind:
    """A row of seed 000's item table: its bulk (the least, where the seed gives "N+")."""

    name: str
    label: str
    bulk: int
    more: bool  # the seed's "3+", "4-5 (or more)", "30 ... or more": a larger bulk may be given


ITEM_TABLE: tuple[ItemKind, ...] = (
    ItemKind("light", "Light gear", 1, False),
    ItemKind("medium", "Medium gear", 2, False),
    ItemKind("heavy", "Heavy gear", 3, True),
    ItemKind("crate", "Storage crates, containers", 4, True),
    ItemKind("teammate", "Incapacitated Teammate", 30, True),
)
"""Seed 000: Light gear 1, Medium gear 2, Heavy gear 3+, Storage crates 4-5 (or more),
Incapacitated Teammate 30 bulk."""

_ITEM_ALIASES = {"container": "crate", "body": "teammate"}
_ITEM_RE = re.compile(r"^([a-z_]+)(?::(\d+))?(?:\*(\d+))?$")
_ITEMS_EXAMPLE = "items=light*3+medium+crate:5+teammate"


def parse_items(
    raw: Any, where: str = "", role: str | None = "token"
) -> tuple[tuple[str, int, int], ...]:
    """Items carried as ``(name, bulk each, count)``, from ``light*3+medium+crate:5`` (also
    ``;`` or spaces between entries), a YAML list (``[light, light, "crate:5"]``) or a
    mapping of name to count. ``name:B`` gives a "3+"-style row a larger bulk; ``*N`` a count.
    An error is about the argument ``role`` (a token's stats), after ``where``.
    """
    given = " ".join(x for x in (where, "items") if x)
    if isinstance(raw, dict):
        parts = [f"{k}*{v}" for k, v in raw.items()]
    elif isinstance(raw, (list, tuple)):
        parts = [str(x) for x in raw]
    else:
        parts = [p for p in re.split(r"[+;\s]+", str(raw).strip()) if p]
    kinds = {k.name: k for k in ITEM_TABLE}
    merged: dict[tuple[str, int], int] = {}
    for part in parts:
        m = _ITEM_RE.match(part.strip().lower())
        name = _ITEM_ALIASES.get(m.group(1), m.group(1)) if m else ""
        if m is None or name not in kinds:
            got = m.group(1) if m else part
            raise StatError(
                role=role,
                given=given,
                problem=f"'{part}' is not an item; items: "
                f"{', '.join(kinds)}{did_you_mean(got, list(kinds))} (NAME, NAME*COUNT or "
                f"NAME:BULK, joined by +), e.g. {_ITEMS_EXAMPLE}",
            )
        kind = kinds[name]
        bulk = int(m.group(2)) if m.group(2) else kind.bulk
        count = int(m.group(3)) if m.group(3) else 1
        if bulk != kind.bulk and not (kind.more and bulk >= kind.bulk):
            need = f">= {kind.bulk}" if kind.more else f"{kind.bulk} (the seed's figure)"
            raise StatError(
                role=role, given=given, problem=f"'{part}': {kind.label} bulk must be {need}"
            )
        if count < 1 or count > 10_000:
            raise StatError(role=role, given=given, problem=f"'{part}': the count must be 1..10000")
        merged[(name, bulk)] = merged.get((name, bulk), 0) + count
    order = {k.name: i for i, k in enumerate(ITEM_TABLE)}
    return tuple(
        (name, bulk, count)
        for (name, bulk), count in sorted(
            merged.items(), key=lambda kv: (order[kv[0][0]], kv[0][1])
        )
    )


def items_text(items: tuple[tuple[str, int, int], ...]) -> str:
    """The canonical ``items`` text: ``light*3+medium+crate:5``."""
    kinds = {k.name: k for k in ITEM_TABLE}
    return "+".join(
        name
        + (f":{bulk}" if bulk != kinds[name].bulk else "")
        + (f"*{count}" if count != 1 else "")
        for name, bulk, count in items
    )


class ItemsParam(Param):
    """The ``items`` stat: named items of seed 000's table, kept as canonical text."""

    def parse(self, raw: Any, where: str = "", role: str | None = None) -> Any:
        return items_text(parse_items(raw, where, role))

    def allowed(self) -> str:
        return f"item names joined by + ({', '.join(k.name for k in ITEM_TABLE)}), e.g. {_ITEMS_EXAMPLE}"


# =============================================================================================
# The rule system
# =============================================================================================

GROUND = ("walk", "crawl", "swim", "climb", "ladder")
"""Modes a Whisperspace token moves in; ``gap`` (no jumping rules) and ``air`` it cannot."""

CLIMBING = ("climb", "ladder")
"""Both climb: a ladder is a climbing surface (its difficulty is usually ``none``)."""

_DEGREE_PENALTY = {"extreme_success": -1, "success": 0, "failure": 1, "extreme_failure": 0}
"""A swim or climb check's movement penalty for the rest of that Move action (seed 000)."""

_HEIGHT_RE = re.compile(r"(\d+(?:/\d+)?) ft")


def _family(mode: str) -> str:
    return "climb" if mode in CLIMBING else mode


def _ft(value: Fraction) -> str:
    """Feet as text: ``20`` or ``15/2``."""
    return str(value.numerator) if value.denominator == 1 else str(value)


class Whisperspace(RuleSystem):
    """Whisperspace movement: Move actions of Speed ft, bonuses and penalties in 10-ft steps.

    Speeds depend on the token's state as well as its stats: check results (a penalty or a
    bonus for the rest of the Move action), Asphyxiating, prone (15 ft of the turn go to
    standing up), a dropped load, Stress, damage and falls all live in ``token.state`` so the
    turn loop, the path search and ``stats`` see the same figures.
    """

    name = "whisperspace"
    title = "Whisperspace (d12)"
    source = "seeds 000 and 001; docs/rules.md#whisperspace"
    unit = "ft"
    cell_size = Fraction(5)
    turn_name = "turn"
    # The seeds give no turn length; 6 s (a common tabletop figure) only matters for the
    # hourly encumbrance check (600 turns) and the ten-minute rest (100 turns).
    turn_seconds = Fraction(6)
    actions_per_turn = 3
    paces = ("walk", "run", "sprint")
    default_pace = "sprint"
    fastest_pace = "sprint"
    # Seed 000: "You may use an action to move up to your speed ... This movement can be
    # interwoven between other actions on your turn. For example, you may use the move
    # action to move 10 feet closer to a target, then use the attack action ..., use an
    # interact action to open a door"; RULES.md 1: "Turn: 3 actions". Each act takes one of
    # the 3, so fewer are left for Move actions: one act leaves a run (2), two a walk.
    acts = (
        ActSpec(
            "action",
            1,
            "one of the turn's 3 actions, spent on something else (docs/rules.md#whisperspace)",
        ),
        ActSpec("attack", 1, "seed 000: 'then use the attack action to try to hit them'"),
        ActSpec("interact", 1, "seed 000: 'use an interact action to open a door'"),
    )
    act_limit = 3
    stats: ClassVar[tuple[Param, ...]] = (
        Stat(
            "speed",
            "number",
            None,
            minimum=0,
            unit="ft",
            help="Speed per Move action; absent: speed_base + speed_per_phys x PHYS",
        ),
        Stat("phys", "int", 0, help="PHYS: gives Speed and capacity when they are not set"),
        Stat("athletics", "int", 0, help="Athletics modifier (swim and climb checks)"),
        Stat("endurance", "int", 0, help="Endurance modifier (encumbrance checks)"),
        Stat("reflex", "int", 0, help="REF skill modifier (heavy load: +1 penalty die)"),
        Stat("bulk", "int", 0, minimum=0, help="Bulk carried, in inventory slots"),
        ItemsParam(
            "items",
            "text",
            "",
            help="named items of seed 000's table, joined by + (light 1, medium 2, heavy 3+, "
            "crate 4+, teammate 30; NAME*COUNT, NAME:BULK for the '+' rows; a YAML list or "
            "name: count mapping), e.g. light*3+medium+crate:5; their bulk adds to bulk",
        ),
        Stat(
            "capacity",
            "int",
            None,
            minimum=0,
            help="inventory slots; absent: capacity_base + capacity_per_phys x PHYS",
        ),
        Stat("bonuses", "int", 0, minimum=0, help="movement bonuses (+10 ft each)"),
        Stat("penalties", "int", 0, minimum=0, help="movement penalties (-10 ft each)"),
        Stat("prone", "bool", False, help="starts prone (standing uses 15 ft of a Move action)"),
        Stat("dragging", "bool", False, help="dragging something: +1 penalty, no swim or climb"),
        Stat(
            "strain_choice",
            "choice",
            "keep_load",
            choices=("keep_load", "drop_load"),
            help="a failed heavy-load check: keep_load takes 1 Stress (extreme: falls "
            "prone), drop_load drops the load (see the drop_load_to setting)",
        ),
    )
    settings: ClassVar[tuple[Param, ...]] = (
        Setting(
            "speed_base",
            "number",
            Fraction(30),
            minimum=0,
            unit="ft",
            help="docs/rules.md#whisperspace (ruling): derived Speed = 30 + 5 x PHYS; this is the 30",
        ),
        Setting(
            "speed_per_phys",
            "number",
            Fraction(5),
            minimum=0,
            unit="ft",
            help="docs/rules.md#whisperspace (ruling): derived Speed = 30 + 5 x PHYS; this is the 5 per PHYS",
        ),
        Setting(
            "capacity_base",
            "int",
            5,
            minimum=0,
            help="docs/rules.md#whisperspace (ruling): carrying capacity = 5 + 5 x PHYS slots; this is the 5",
        ),
        Setting(
            "capacity_per_phys",
            "int",
            5,
            minimum=0,
            help="docs/rules.md#whisperspace (ruling): carrying capacity = 5 + 5 x PHYS; this is the 5 per PHYS",
        ),
        Setting(
            "crawl_penalty",
            "int",
            1,
            minimum=0,
            help="docs/rules.md#whisperspace (ruling): movement penalties for crawling (seed: 'may impose')",
        ),
        Setting(
            "swim_penalty",
            "int",
            2,
            minimum=0,
            help="docs/rules.md#whisperspace (ruling): movement penalties for swimming",
        ),
        Setting(
            "climb_penalty",
            "int",
            2,
            minimum=0,
            help="docs/rules.md#whisperspace (ruling): movement penalties for climbing (ladders too)",
        ),
        Setting(
            "climb_fall_at",
            "number",
            Fraction(1, 2),
            minimum=0,
            maximum=1,
            help="share of a climb's height already climbed when an extreme failure drops "
            "the token (seed 001: 'climb partway, then fall'; project reading)",
        ),
        Setting(
            "drop_load_to",
            "choice",
            "capacity",
            choices=("capacity", "twice_capacity", "nothing"),
            help="what a token that drops its load keeps: its capacity (no longer "
            "encumbered), twice it (just below heavy) or nothing (project reading)",
        ),
        Setting(
            "asphyxiation_dc",
            "int",
            ASPHYXIATION_DC,
            minimum=0,
            help="DC of the Asphyxiation check close to the surface (the seeds give none; "
            "project reading: the swimming check's DC 6, + 2 encumbered, + 6 heavily)",
        ),
        Setting(
            "stunned_can_move",
            "bool",
            False,
            help="the seeds do not define Stunned; default: a stunned token takes no "
            "actions, so it does not move",
        ),
    )

    parse_check = staticmethod(parse_check)

    # ----------------------------------------------------------------- stats and figures

    def validate(self, stats: dict[str, Any]) -> None:
        if stats.get("speed") is None:
            speed = derived_speed(
                stats.get("phys", 0), self.config["speed_base"], self.config["speed_per_phys"]
            )
            if speed < 0:
                raise StatError(
                    role="token",
                    given=f"phys={stats.get('phys')}",
                    problem=f"derived speed {_ft(speed)} ft is below 0; give speed=N (ft, >= 0) "
                    "or a larger phys",
                )
        if stats.get("capacity") is None:
            cap = derived_capacity(
                stats.get("phys", 0),
                self.config["capacity_base"],
                self.config["capacity_per_phys"],
            )
            if cap < 0:
                raise StatError(
                    role="token",
                    given=f"phys={stats.get('phys')}",
                    problem=f"derived capacity {cap} slots is below 0; give capacity=N (>= 0) "
                    "or a larger phys",
                )

    def base_speed(self, token: Token) -> Fraction:
        """Speed in ft per Move action before bonuses and penalties."""
        if token.stats.get("speed") is not None:
            return Fraction(token["speed"])
        return derived_speed(
            token["phys"], self.config["speed_base"], self.config["speed_per_phys"]
        )

    def capacity(self, token: Token) -> int:
        """Inventory slots (the ``capacity`` stat, else the ruling from PHYS)."""
        if token.stats.get("capacity") is not None:
            return int(token["capacity"])
        return derived_capacity(
            token["phys"], self.config["capacity_base"], self.config["capacity_per_phys"]
        )

    def carried(self, token: Token) -> int:
        """Bulk carried now: the ``bulk`` stat plus the named ``items`` less what the token
        has dropped."""
        held = int(token["bulk"]) + self.items_bulk(token)
        return max(0, held - token.state.counter("dropped_bulk"))

    @staticmethod
    def items_bulk(token: Token) -> int:
        """Bulk of the token's named ``items`` (seed 000's item table)."""
        return sum(bulk * count for _, bulk, count in parse_items(token.stats.get("items", "")))

    def encumbrance(self, token: Token) -> str:
        level = encumbrance_for(self.carried(token), self.capacity(token))
        if level == "encumbered" and token.state.has("strained"):
            return "heavy"  # a failed hourly check (seed 000)
        return level

    def movement_modifiers(self, token: Token, mode: str) -> dict[str, int]:
        """Each source of movement bonuses (+) and penalties (-) in ``mode``."""
        fam = _family(mode)
        st = token.state
        mode_pen = {
            "crawl": self.config["crawl_penalty"],
            "swim": self.config["swim_penalty"],
            "climb": self.config["climb_penalty"],
        }.get(fam, 0)
        return {
            "bonuses": int(token["bonuses"]),
            "penalties": -int(token["penalties"]),
            "mode": -int(mode_pen),
            "encumbrance": -ENCUMBRANCE_PENALTY[self.encumbrance(token)],
            "dragging": -1 if token["dragging"] else 0,
            "asphyxiating": -1 if fam == "swim" and st.has("asphyxiating") else 0,
            "check": -st.counter(f"check_penalty_{fam}") if fam in ("swim", "climb") else 0,
        }

    def net(self, token: Token, mode: str) -> int:
        """Net movement bonuses (negative: penalties) in ``mode``."""
        return sum(self.movement_modifiers(token, mode).values())

    def why_not(self, token: Token, mode: str) -> str | None:
        """Why the token cannot move in ``mode`` at all now (None when it can)."""
        st = token.state
        if mode == "blocked":
            return "blocked"
        if mode == "gap":
            return "a gap: Whisperspace has no jumping rules, so a token cannot cross it"
        if mode == "air":
            return "open air: Whisperspace tokens do not fly"
        if self.encumbrance(token) == "immobile":
            return (
                f"bulk {self.carried(token)} is more than 3 x capacity {self.capacity(token)}: "
                "prone and Immobile"
            )
        if st.has("unconscious"):
            return "Unconscious"
        if st.has("stunned") and not self.config["stunned_can_move"]:
            return "Stunned (set stunned_can_move=true to let stunned tokens move)"
        if token["dragging"] and mode in ("swim", *CLIMBING):
            doing = "swimming" if mode == "swim" else "climbing"
            return f"dragging something is impossible while {doing} (seed 000)"
        if speed_with(self.base_speed(token), self.net(token, mode)) <= 0:
            return f"Immobile: {describe_net(self.net(token, mode))} bring {mode} speed to 0 ft"
        return None

    def speed(self, token: Token, mode: str) -> Fraction:
        """Feet per Move action in ``mode`` now (0: the token cannot move in it)."""
        if self.why_not(token, mode) is not None:
            return Fraction(0)
        return speed_with(self.base_speed(token), self.net(token, mode))

    def stand_cost(self, token: Token, mode: str) -> Fraction:
        """Feet of this turn's movement that go to standing up (0 unless prone)."""
        st = token.state
        if mode == "crawl" or not (st.has("prone") or st.has("standing_up")):
            return Fraction(0)
        # A Move action worth less than 15 ft is spent wholly on standing (project reading).
        return min(Fraction(STAND_UP_FT), self.speed(token, mode))

    def rate(self, token: Token, mode: str, pace: str | None = None) -> Fraction:
        pace = pace or self.default_pace
        if pace not in MOVE_ACTIONS:
            raise ArgumentError(
                role="pace",
                given=pace,
                problem=f"whisperspace paces are {', '.join(self.paces)}"
                f"{did_you_mean(pace, self.paces)}",
            )
        per_action = self.speed(token, mode)
        if per_action <= 0 or MOVE_ACTIONS[pace] > self.move_actions_left(token):
            return Fraction(0)
        return max(Fraction(0), MOVE_ACTIONS[pace] * per_action - self.stand_cost(token, mode))

    def move_actions_left(self, token: Token) -> int:
        """The turn's actions its acts leave for Move actions (:meth:`with_acts`)."""
        return self.actions_per_turn - token.state.counter("actions")

    def act_pace(self, token: Token, pace: str) -> str:
        """The fastest pace no faster than ``pace`` whose Move actions the turn's acts leave
        (seed 000: other actions are "interwoven" with the moves; a turn has 3 actions)."""
        left = self.move_actions_left(token)
        fits = [p for p in self.paces if MOVE_ACTIONS[p] <= min(left, MOVE_ACTIONS.get(pace, 0))]
        return fits[-1] if fits else pace

    def climb_height(self, terrain: Terrain) -> Fraction:
        """How far a climb cell goes up, in ft (its ``height``; default one cell)."""
        if terrain.height is None:
            return self.cell_size
        return exact(terrain.height)

    def search_state(self, token: Token, pace: str) -> SearchState | None:
        """A prone token searches two layers: ``prone`` (it may crawl without standing) and
        ``standing``, joined by standing up in place: 15 ft of a Move action (seed 000), or
        all of a Move action worth less, paid once however long the path."""
        st = token.state
        if not (st.has("prone") or st.has("standing_up")):
            return None
        up = replace(token, state=st.with_conditions(remove=("prone", "standing_up")))
        speed = self.speed(up, "walk")
        if speed <= 0 or pace not in MOVE_ACTIONS:
            return None
        stand = min(Fraction(STAND_UP_FT), speed) / (speed * MOVE_ACTIONS[pace])
        down = replace(token, state=st.with_conditions("prone", remove=("standing_up",)))
        return SearchState(
            names=("prone", "standing"),
            tokens=(down, up),
            modes=(frozenset({"crawl"}), None),
            in_place=((0, 1, stand),),
            start=0,
            main=1,
        )

    def check_period(self, token: Token, terrain: Terrain, pace: str) -> Fraction | None:
        """Moves are Move actions (RULES.md 0 and 1): a run of swimming or climbing asks a
        check in each Move action it spans, up to three a turn at sprint."""
        return Fraction(1, MOVE_ACTIONS.get(pace, 1))

    def refusal(self, token: Token, terrain: Terrain, pace: str | None = None) -> str | None:
        why = self.why_not(token, terrain.move)
        if why is not None:
            return f"{terrain.name}: {why}"
        pace = pace or self.default_pace
        left = self.move_actions_left(token)
        if MOVE_ACTIONS.get(pace, 0) > left:
            n = MOVE_ACTIONS[pace]
            return (
                f"{pace} is {n} Move action{'s' if n > 1 else ''}; this turn's other actions "
                f"take {self.actions_per_turn - left} of its {self.actions_per_turn}, "
                f"leaving {left}"
            )
        if self.cell_rate(token, terrain, pace) <= 0:
            return (
                f"{terrain.name}: standing from prone takes all of the "
                f"{_ft(self.speed(token, terrain.move))} ft of movement at pace {pace}"
            )
        return None

    def rates(self, token: Token) -> dict[str, Any]:
        """Feet per Move action in each mode the token can use (the seed's figure)."""
        return {mode: self.speed(token, mode) for mode in GROUND}

    # ----------------------------------------------------------------- checks

    def skill_check(
        self, token: Token, skill: str, dc: int, *, bonus: int = 0, penalty: int = 0
    ) -> WhisperspaceCheck:
        """A check of the token's ``skill`` (a stat) at ``dc``; a heavy load adds a penalty
        die to REF checks (seed 000)."""
        if skill == "reflex" and self.encumbrance(token) in ("heavy", "immobile"):
            penalty += 1
        return WhisperspaceCheck(int(token[skill]), dc, bonus, penalty, skill=skill)

    def check_dc(self, token: Token, difficulty: str) -> int:
        """Swim or climb DC for a terrain difficulty, with the encumbrance increase."""
        return LEVEL_DC[difficulty] + ENCUMBRANCE_DC_ADD[self.encumbrance(token)]

    def cell_check(
        self, token: Token, terrain: Terrain, pace: str | None = None
    ) -> CellCheck | None:
        mode = terrain.move
        if mode not in ("swim", *CLIMBING) or terrain.difficulty == "none":
            return None  # calm water, an easy wall, and dry ground ask nothing
        check = self.skill_check(token, "athletics", self.check_dc(token, terrain.difficulty))
        what = (
            "athletics (swim)"
            if mode == "swim"
            else f"athletics ({mode} {_ft(self.climb_height(terrain))} ft)"
        )
        odds = check.outcomes()
        worst = (
            "Asphyxiating (+1 movement penalty while it lasts)"
            if mode == "swim"
            else "a fall from the height climbed so far"
        )
        failures = tuple(
            (degree, text, odds[degree])
            for degree, text in (
                ("failure", "+1 movement penalty for the rest of the Move action"),
                ("extreme_failure", worst),
            )
            if odds.get(degree)
        )
        return CellCheck(
            what=what,
            target=f"DC {check.dc}",
            p_success=check.p_success(),
            check=check,
            failures=failures,
        )

    def on_failure(self, check: CellCheck) -> str:
        """Climbing: ``fall``. Seed 000: "Extreme failure: climb results in a fall"; RULES.md
        1: "climbing gives a fall from the height climbed so far" (a plain failure is +1
        movement penalty for the rest of the Move action: the check's ``failures`` give both
        chances). Swimming: ``stop``, the base default (RULES.md 1 has no stop for it either:
        a failure is +1 penalty, an extreme failure Asphyxiating)."""
        if check.what.startswith("athletics (") and "swim" not in check.what:
            return "fall"
        return "stop"

    @classmethod
    def describe_effect(cls, what: str, degree: str) -> str:
        """Seed 000's swim and climb results, for the rest of that Move action."""
        if not what.startswith("athletics ("):
            return ""
        swim = "swim" in what
        return {
            "extreme_success": "movement penalty -1 for the rest of the Move action",
            "failure": "movement penalty +1 for the rest of the Move action",
            "extreme_failure": "Asphyxiating (+1 movement penalty while it lasts)"
            if swim
            else "a fall from the height climbed so far",
        }.get(degree, "")

    def goes_on(self, check: CellCheck, degree: str, success: bool) -> bool:
        """Seed 000 (RULES.md 1): swim and climb results "apply to the rest of that Move
        action": a failure is +1 movement penalty and the token moves on, slower; an extreme
        failure swimming is Asphyxiating (+1 penalty while it lasts), and it swims on. Only a
        climbing extreme failure ends the move: "climb results in a fall"."""
        if success:
            return True
        climbing = check.what.startswith("athletics (") and "swim" not in check.what
        return not (climbing and degree == "extreme_failure")

    def end_move(self, token: Token) -> Token:
        """A Move action ends: its swim and climb results end with it (seed 000, RULES.md 1:
        they "apply to the rest of that Move action"); Asphyxiating lasts on."""
        st = self._clear_check_effects(token.state)
        return token if st is token.state else self._refresh(token.with_state(st))

    def apply_check(self, token: Token, what: str, degree: str, dice: Dice | None = None) -> Token:
        """A check's effect. ``what`` names it as :meth:`cell_check` did (``athletics
        (swim)``, ``athletics (climb 20 ft)``), or ``asphyxiation`` or ``strain`` (the
        heavy-load Endurance check).

        Swim and climb: extreme success -1 penalty, failure +1, for the rest of the Move
        action (until the next check in that mode or the end of the turn); a swimming extreme
        failure adds Asphyxiating, a climbing one a fall from the height climbed so far (a
        climb over turns: its ``progress``; within a turn: ``climb_fall_at`` of its height). The fall is rolled at once with ``dice``, else at the end of the turn.
        """
        if degree not in CHECK_DEGREES:
            raise ArgumentError(
                f"degree '{degree}': expected one of {', '.join(CHECK_DEGREES)}"
                f"{did_you_mean(degree, CHECK_DEGREES)}"
            )
        text = what.lower()
        st = token.state
        if "asphyxiation" in text:
            if degree in ("extreme_success", "success"):
                st = st.with_conditions(remove=("asphyxiating",))
        elif "strain" in text or "encumbrance" in text:
            return self._strain(token, degree)
        elif "swim" in text or "climb" in text or "ladder" in text:
            fam = "swim" if "swim" in text else "climb"
            st = st.with_counter(f"check_penalty_{fam}", _DEGREE_PENALTY[degree])
            if degree == "extreme_failure" and fam == "swim":
                st = st.with_conditions("asphyxiating")
            elif degree == "extreme_failure":
                m = _HEIGHT_RE.search(text)
                height = Fraction(m.group(1)) if m else self.cell_size
                if st.toward is not None:  # a climb over turns: the height climbed so far
                    feet = height * st.progress
                else:
                    feet = height * self.config["climb_fall_at"]
                token = replace(token, state=st)
                return self._refresh(self.fall(token, feet, dice))
        return self._refresh(replace(token, state=st))

    # ----------------------------------------------------------------- falling

    def fall(self, token: Token, feet: Fraction | int, dice: Dice | None = None) -> Token:
        """The token falls ``feet`` ft and lands prone; with ``dice`` the Fall Severity roll
        is made now (an event), without it the fall waits for the end of the turn.

        A fall of 0 ft rolls nothing (project reading: the table is for a drop).
        """
        feet = Fraction(feet)
        st = token.state.with_conditions("prone", remove=("standing_up",))
        if feet <= 0:
            return replace(token, state=st)
        if dice is None:
            pending = max(st.counter("fall_ft"), math.ceil(feet))
            return replace(token, state=st.with_counter("fall_ft", pending))
        band = fall_band(feet)
        event = dice.roll(1, 12, band.modifier)
        outcome = fall_severity(event.total)
        dice.decide(
            event, f"fall {_ft(feet)} ft ({band.label}): {outcome.row}, {outcome.text}, prone"
        )
        st = st.with_counter("fall_ft", 0)
        if outcome.damage:
            st = st.with_counter("damage", st.counter("damage") + outcome.damage)
        if outcome.stunned_rounds:
            rounds = max(st.counter("stunned_rounds"), outcome.stunned_rounds)
            st = st.with_counter("stunned_rounds", rounds).with_conditions("stunned")
        if outcome.unconscious:
            st = st.with_conditions("unconscious")
        return replace(token, state=st)

    def _pending_fall(self, token: Token, dice: Dice) -> Token:
        # Banding only compares with whole feet, so the rounded-up height keeps the band.
        feet = token.state.counter("fall_ft")
        return self.fall(token, feet, dice) if feet > 0 else token

    # ----------------------------------------------------------------- encumbrance upkeep

    def _drop_load(self, st: TokenState, token: Token) -> TokenState:
        """The load dropped down to what setting ``drop_load_to`` keeps. A rest begun under
        the load is not one "without any encumbrance" (seed 000): it starts again."""
        cap = self.capacity(token)
        keep = {"capacity": cap, "twice_capacity": 2 * cap, "nothing": 0}[
            self.config["drop_load_to"]
        ]
        amount = max(0, self.carried(token) - keep)
        st = st.set_counter("rest_turns", 0)
        return st.with_counter("dropped_bulk", st.counter("dropped_bulk") + amount)

    @staticmethod
    def strain_effect(token: Token, degree: str) -> str:
        """What a heavy-load check's ``degree`` does to this token, in words."""
        drop = token["strain_choice"] == "drop_load"
        if degree == "failure":
            return "drops the load" if drop else "1 Stress"
        if degree == "extreme_failure":
            return "1 damage, " + ("drops the load" if drop else "falls prone")
        return "acts normally"

    def _strain(self, token: Token, degree: str) -> Token:
        """The heavy-load Endurance check's result, by the token's ``strain_choice``."""
        st = token.state
        drop = token["strain_choice"] == "drop_load"
        if degree == "failure":
            if drop:
                st = self._drop_load(st, token)
            else:
                st = st.with_counter("stress", st.counter("stress") + 1)
        elif degree == "extreme_failure":
            st = st.with_counter("damage", st.counter("damage") + 1)
            st = self._drop_load(st, token) if drop else st.with_conditions("prone")
        return self._refresh(replace(token, state=st))

    def strain_dc(self, token: Token) -> int:
        """DC of the next start-of-turn heavy-load check: 6, +1 per consecutive turn; back
        to 6 after a rest of ten minutes (seed 000: "The DC resets to 6 once you drop below
        heavy encumbrance or rest for at least ten minutes")."""
        return STRAIN_DC + self._heavy_turns(token.state)

    @staticmethod
    def _rested(st: TokenState) -> bool:
        """Whether the token has rested ten minutes (:data:`REST_TURNS` turns in a row)."""
        return st.counter("rest_turns") >= REST_TURNS

    def _heavy_turns(self, st: TokenState) -> int:
        """Consecutive heavy turns the DC counts: none after a ten-minute rest."""
        return 0 if self._rested(st) else st.counter("heavy_turns")

    def _upkeep_encumbrance(self, token: Token, dice: Dice) -> Token:
        """The encumbrance checks that fall due over time, at the start of a turn (seed 000):
        heavily encumbered, an Endurance check every turn (:meth:`_heavy_load_check`);
        encumbered, one an hour (:meth:`_hourly_check`); without any encumbrance, a rest of
        ten minutes ends a failed hourly check's heavy encumbrance ("A ten minute rest
        (without any encumbrance) resets this").

        "While a character is swimming, regular encumbrance checks do not apply": a token
        whose turn starts in water (its mode, RULES.md R4) rolls neither check. It is still
        encumbered there (the seed's swimming DC counts its encumbrance), so its time in the
        water counts toward the hour and its heavy turns toward the DC; an hourly check that
        fell due in the water is rolled at the start of its first turn out of it ("for an
        hour or more")."""
        level = self.encumbrance(token)
        st = token.state
        swimming = st.mode == "swim"
        if level == "heavy":
            token = self._heavy_load_check(token, dice, swimming)
        else:
            token = token.with_state(st.with_counter("heavy_turns", 0))
        if level == "encumbered":
            token = self._hourly_check(token, dice, swimming)
        elif level == "none":
            st = token.state.with_counter("encumbered_turns", 0)
            if self._rested(st):
                st = st.with_conditions(remove=("strained",))
            token = token.with_state(st)
        return self._refresh(token)

    def _heavy_load_check(self, token: Token, dice: Dice, swimming: bool) -> Token:
        """Seed 000: "At the start of each of your turns while heavily encumbered, roll an
        Endurance (DC6) encumbrance check. Each consecutive turn you remain heavily
        encumbered increases the DC by +1." (none rolled while swimming)."""
        st = token.state
        dc = self.strain_dc(token)
        token = token.with_state(st.with_counter("heavy_turns", self._heavy_turns(st) + 1))
        if swimming:
            return token
        result = self.skill_check(token, "endurance", dc).roll(dice)
        dice.decide(
            result.events[0],
            f"{result.degree}: heavy load, endurance DC {dc}: "
            + self.strain_effect(token, result.degree),
        )
        return self._strain(token, result.degree)

    def _hourly_check(self, token: Token, dice: Dice, swimming: bool) -> Token:
        """Seed 000: "If a character is encumbered for an hour or more, they must roll an
        Endurance (DC6) encumbrance check. Success: they continue normally for another hour
        Failure: ... The character moves from being encumbered to being heavily encumbered."
        Out of the water only: a check due while swimming waits for the first turn out."""
        st = token.state
        turns = st.counter("encumbered_turns") + 1
        st = st.with_counter("encumbered_turns", turns)
        if turns < HOUR_TURNS or swimming:
            return token.with_state(st)
        result = self.skill_check(token, "endurance", STRAIN_DC).roll(dice)
        failed = not result.success
        dice.decide(
            result.events[0],
            f"{result.degree}: an hour encumbered, DC {STRAIN_DC}"
            + (", heavily encumbered until a 10-minute rest" if failed else ", another hour"),
        )
        st = st.with_counter("encumbered_turns", 0)  # the next hour starts
        return token.with_state(st.with_conditions("strained") if failed else st)

    def paced(self, token: Token, pace: str, moved: bool) -> Token:
        """The end of a turn's move: a turn in which the token did not leave its cell is a
        turn of rest (seed 000's "ten minute rest" and "rest for at least ten minutes";
        project reading: resting is not moving). ``rest_turns`` counts such turns in a row,
        up to ten minutes' worth (:data:`REST_TURNS`: more changes nothing); a move ends
        the rest. Rests take effect at the start of the next turn (:meth:`start_turn`)."""
        st = token.state
        rest = 0 if moved else min(REST_TURNS, st.counter("rest_turns") + 1)
        if rest == st.counter("rest_turns"):
            return token
        return token.with_state(st.set_counter("rest_turns", rest))

    # ----------------------------------------------------------------- state and turns

    def initial_state(self, token: Token) -> TokenState:
        st = TokenState(conditions=frozenset({"prone"} if token["prone"] else ()))
        return self._refresh(replace(token, state=st)).state

    def _refresh(self, token: Token) -> Token:
        """Keep the derived parts of the state in step: encumbrance, prone and Immobile."""
        level = self.encumbrance(token)
        st = token.state.changed(encumbrance=level)
        mode = st.mode if st.mode in GROUND else "walk"
        immobile = level == "immobile" or (
            speed_with(self.base_speed(token), self.net(token, mode)) <= 0
        )
        if level == "immobile":
            st = st.with_conditions("prone", remove=("standing_up",))
        st = (
            st.with_conditions("immobile") if immobile else st.with_conditions(remove=("immobile",))
        )
        return replace(token, state=st)

    def _clear_check_effects(self, st: TokenState) -> TokenState:
        for fam in ("swim", "climb"):
            if st.counter(f"check_penalty_{fam}"):
                st = st.with_counter(f"check_penalty_{fam}", 0)
        return st

    def start_turn(self, token: Token, dice: Any) -> Token:
        """Start of the token's turn, in order: a fall still to roll; the turn's stun; out
        of water, Asphyxiating ends; the encumbrance checks that fall due over time, none
        while swimming (:meth:`_upkeep_encumbrance`: heavy, Endurance DC 6 + 1 per
        consecutive turn; encumbered, DC 6 every hour; a ten-minute rest); a prone token
        stands up (15 ft of this turn's movement) unless it is crawling or cannot move."""
        token = self._pending_fall(token, dice)
        st = self._clear_check_effects(token.state)
        if st.counter("stunned_rounds") > 0:
            st = st.with_counter("stunned_rounds", st.counter("stunned_rounds") - 1)
        if st.mode != "swim":
            st = st.with_conditions(remove=("asphyxiating",))
        token = self._upkeep_encumbrance(replace(token, state=st), dice)
        st = token.state
        mode = st.mode if st.mode in GROUND else "walk"
        if st.has("prone") and mode != "crawl" and self.why_not(token, mode) is None:
            st = st.with_conditions("standing_up", remove=("prone",))
        return self._refresh(replace(token, state=st))

    def end_turn(self, token: Token, dice: Any) -> Token:
        """End of the turn: a fall still to roll; the Move actions' check effects end; the
        standing up is done; a stun whose rounds are spent ends."""
        token = self._pending_fall(token, dice)
        st = self._clear_check_effects(token.state).with_conditions(remove=("standing_up",))
        if st.has("stunned") and st.counter("stunned_rounds") == 0:
            st = st.with_conditions(remove=("stunned",))
        if st.mode != "swim":
            st = st.with_conditions(remove=("asphyxiating",))
        return self._refresh(replace(token, state=st))

    # ----------------------------------------------------------------- the stats report

    def extra_stats(self, token: Token) -> dict[str, Any]:
        st = token.state
        level = self.encumbrance(token)
        cap = self.capacity(token)
        heavy = level in ("heavy", "immobile")
        out: dict[str, Any] = {
            "speed": self.base_speed(token),
            "speed_source": "speed"
            if token.stats.get("speed") is not None
            else f"{_ft(self.config['speed_base'])} + {_ft(self.config['speed_per_phys'])} x PHYS",
            "move_actions_per_turn": self.actions_per_turn,
            "net_bonus": {mode: self.net(token, mode) for mode in GROUND},
            "modifiers": {
                mode: {k: v for k, v in self.movement_modifiers(token, mode).items() if v}
                for mode in GROUND
            },
            "per_turn_ft": {
                pace: {mode: self.rate(token, mode, pace) for mode in GROUND} for pace in self.paces
            },
            "cannot": {
                mode: why for mode in GROUND if (why := self.why_not(token, mode)) is not None
            },
            "stand_up_ft": self.stand_cost(token, "walk"),
            "capacity": cap,
            "capacity_source": "capacity"
            if token.stats.get("capacity") is not None
            else f"{self.config['capacity_base']} + {self.config['capacity_per_phys']} x PHYS",
            "bulk": self.carried(token),
            "bulk_dropped": st.counter("dropped_bulk"),
            **self.seed_reach_stats(token),
            "encumbrance_limits": {
                "encumbered_above": cap,
                "heavy_above": 2 * cap,
                "immobile_above": 3 * cap,
            },
            "encumbrance_penalty": ENCUMBRANCE_PENALTY[level],
            "swim_climb_dc": {lvl: self.check_dc(token, lvl) for lvl in LEVEL_DC},
            "ref_penalty_dice": 1 if heavy else 0,
            "fully_commit": not heavy,
            "strain_check": None,
            "conditions": sorted(st.conditions),
            "damage": st.counter("damage"),
            "stress": st.counter("stress"),
        }
        if level == "heavy":
            check = self.skill_check(token, "endurance", self.strain_dc(token))
            out["strain_check"] = {
                "what": "endurance (heavy load, start of turn)",
                "target": f"DC {check.dc}",
                "p_success": float(check.p_success()),
                "on_failure": self.strain_effect(token, "failure"),
                "on_extreme_failure": self.strain_effect(token, "extreme_failure"),
            }
        return out

    def seed_reach_stats(self, token: Token) -> dict[str, Any]:
        """``stats`` figures of issue 17: the named items and their bulk, the Asphyxiation
        check near the surface, and the Fall Severity odds by height."""
        kinds = {k.name: k for k in ITEM_TABLE}
        items = parse_items(token.stats.get("items", ""))
        dc = self.config["asphyxiation_dc"] + ENCUMBRANCE_DC_ADD[self.encumbrance(token)]
        check = self.skill_check(token, "athletics", dc)
        return {
            "items": [
                {
                    "item": name,
                    "label": kinds[name].label,
                    "count": count,
                    "bulk_each": bulk,
                    "bulk": bulk * count,
                }
                for name, bulk, count in items
            ],
            "items_bulk": self.items_bulk(token),
            "bulk_stat": int(token["bulk"]),
            "asphyxiation_check": {
                "what": "athletics (asphyxiation, close to the surface)",
                "target": f"DC {dc}",
                "p_success": float(check.p_success()),
                "p_success_exact": f"{check.p_success().numerator}/{check.p_success().denominator}",
                "on_success": "Asphyxiating ends at once",
                "asphyxiating": token.state.has("asphyxiating"),
            },
            "fall_severity": fall_table(),
            "fall_outcomes": FALL_OUTCOMES,
        }


SYSTEM = Whisperspace
