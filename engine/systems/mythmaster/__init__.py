"""Mythmaster (seed 002; RULES.md section 2).

Over 800 lines on purpose: a rule system is one plug-in module (adding a system touches no
other file; ARCHITECTURE.md), and its sections follow the seed's chapters.

Sections, in order: the checks (21 Challenge and Versus Challenge); Base Move and Bulk
Factor; carrying bodies, travel and speed; sneaking against detection; the rule system.
Its flight rules (RULES.md 6) are in :mod:`engine.systems.mythmaster.flight`, imported when
a token flies.

Units: hexes of 2 m, turns of 5 s of 3 actions. The seed's speeds are hexes per action
("h/t"); :meth:`Mythmaster.rate` gives metres per turn (the system's unit) at a pace of 1, 2
or 3 actions moving (walk, run, sprint). Every figure is an exact int or Fraction.
"""

from __future__ import annotations

import functools
import math
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import TYPE_CHECKING, Any, ClassVar

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
from engine.errors import ArgumentError, StatError, did_you_mean
from engine.exact import exact, jsonable
from engine.lazy import numpy as np
from engine.systems.base import (
    ActSpec,
    CellCheck,
    ClimbOdds,
    ClimbRoll,
    Param,
    RuleSystem,
    Setting,
    Stat,
    Token,
)
from engine.terrain import DIFFICULTIES, Terrain

if TYPE_CHECKING:
    from engine.systems.mythmaster.flight import MythmasterFlight

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
        """Exact probability of each degree, best first; sums to exactly 1 (a new dict;
        worked out once per check: the turn loop asks it every climbing turn)."""
        return dict(_outcomes(self))

    def _outcomes_made(self) -> tuple[tuple[str, Fraction], ...]:
        """:meth:`outcomes` worked out."""
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
        return tuple(out.items())

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


# =============================================================================================
# Base Move and Bulk Factor
# =============================================================================================
#
# Base Move (BM) is hexes per action. It is an integer: the seed rounds (Adaptability +
# adjustments) x 0.44 to the nearest whole number, half up (RULES.md 2). 44 x n never ends in
# 50, so no sum ever sits exactly on a half; the rounding is still written half up.

LEVELS: tuple[str, ...] = DIFFICULTIES[1:]
"""The neutral difficulty levels (MAP-FORMAT.md) the system maps, easiest first."""

LEVEL_ADJUST: dict[str, int] = {
    "very_easy": 3,
    "easy": 0,
    "moderate": -1,
    "difficult": -2,
    "very_difficult": -3,
    "heroic": -7,
}
"""21C adjustment of each level (RULES.md 2, a ruling): Normal 0, Somewhat Difficult -2..."""

CLIMB_DIVISOR: dict[str, int] = {
    "very_easy": 1,
    "easy": 1,
    "moderate": 2,
    "difficult": 3,
    "very_difficult": 4,
    "heroic": 8,
}
"""k of each level: a successful skill-climbing turn moves BM / (10 k) hexes (RULES.md 2)."""

BULK_AFFECTED_SKILLS: frozenset[str] = frozenset(
    {
        "acrobatics",
        "athletics",
        "climbing",
        "dancing",
        "distance_running",
        "escape",
        "legerdemain",
        "pickpocket",
        "reposition",
        "sneaking",
        "sport",
        "swimming",
        "vanish",
        "wall_run",
    }
)
"""Skills rolled at -Bulk Factor (seed 002's list, lower case with underscores)."""

PACE_ACTIONS: dict[str, int] = {"walk": 1, "run": 2, "sprint": 3, "sneak": 2}
"""Actions of the turn spent moving at each pace. Sneaking (seed 002: "you must expend two
actions to move your Base Move") spends 2 actions for BM: BM / 2 an action, at most BM a turn."""

HEX_METRES = Fraction(2)
TURN_SECONDS = Fraction(5)
FLIGHT_TOP_BM = 18
"""Top flying speed in Base Moves a turn (seed 002: "18x their Base Move"); flight.py's
constant of the same name, which the flight rules use (a test holds the two equal)."""
MAX_BULK_FACTOR = 10
BULK_REDUCTIONS = ("total", "per_factor", "compound")


def level_of(difficulty: str) -> str:
    """The level a terrain difficulty stands for; ``none`` is the easiest (skill climbs
    always roll, RULES.md 0)."""
    if difficulty == "none":
        return LEVELS[0]
    if difficulty not in LEVEL_ADJUST:
        raise ArgumentError(
            f"difficulty {difficulty!r}: expected none | {' | '.join(LEVELS)}"
            f"{did_you_mean(difficulty, LEVELS)}"
        )
    return difficulty


def base_move(adaptability: int, adjustments: int = 0) -> int:
    """Base Move in hexes per action: (Adaptability + adjustments) x 0.44, rounded half up.

    >>> [base_move(a) for a in (11, 12, 13, 14, 15)]
    [5, 5, 6, 6, 7]
    """
    total = adaptability + adjustments
    if total <= 0:
        return 0
    return (44 * total + 50) // 100


def bulk_factor(bulk: Fraction | int, physical: int) -> int:
    """0 while bulk <= Physical; else min(10, ceil(bulk / Physical) - 1).

    >>> bulk_factor(30, 12), bulk_factor(12, 12), bulk_factor(121, 12)
    (2, 0, 10)
    """
    if physical < 1:
        raise StatError(
            role="token", given=f"physical={physical}", problem="expected a whole number >= 1"
        )
    carried = Fraction(bulk)
    if carried <= physical:
        return 0
    return min(MAX_BULK_FACTOR, math.ceil(carried / physical) - 1)


def reduced_base_move(bm: int, bf: int, rule: str = "total") -> int:
    """Base Move after the Bulk Factor's 10% steps (each rounded up). BF 10 gives 0.

    ``total`` (RULES.md 2, the ruling): BM - ceil(BM x BF / 10). ``per_factor``: each factor
    takes ceil(BM / 10) off the unburdened BM. ``compound``: each factor takes 10% (rounded
    up) off what the previous factors left.

    >>> reduced_base_move(6, 2), reduced_base_move(6, 5, "per_factor")
    (4, 1)
    """
    if bf >= MAX_BULK_FACTOR or bm <= 0:
        return 0
    if rule == "total":
        return bm - (-(-bm * bf // 10))
    if rule == "per_factor":
        return max(0, bm - bf * (-(-bm // 10)))
    if rule == "compound":
        left = bm
        for _ in range(bf):
            left -= -(-left // 10)
        return left
    raise ArgumentError(f"bulk_reduction={rule!r}: expected {' | '.join(BULK_REDUCTIONS)}")


def climb_per_success(bm: int, level: str) -> Fraction:
    """Hexes one successful skill-climbing turn gains: BM / (10 k).

    >>> climb_per_success(6, "difficult")  # seed 002's climber: 0.2 hex
    Fraction(1, 5)
    """
    return Fraction(bm, 10 * CLIMB_DIVISOR[level_of(level)])


def skill_check(
    rank: int | None, skill: str, *, adjust: int = 0, bf: int = 0, tie: str = "opponent"
) -> MythmasterCheck:
    """A 21C of ``skill`` at ``rank`` (None: untrained, rolled at 0), at -BF when the seed
    lists the skill as bulk-affected."""
    key = skill.lower().replace(" ", "_")
    return MythmasterCheck(
        skill=rank or 0,
        adjust=adjust,
        bulk_factor=bf if key in BULK_AFFECTED_SKILLS else 0,
        has_skill=rank is not None,
        tie=tie,
    )


# =============================================================================================
# Carrying bodies, travel, actual speed
# =============================================================================================

MAX_CARRIERS = 4
"""At most four people share a body's (or a stretcher's) bulk (seed 002)."""


def carried_bulk(
    weight: Fraction | int, gear: Fraction | int = 0, carriers: int = 1, stretcher: bool = False
) -> Fraction:
    """Bulk each carrier takes for a body: (weight kg, halved on a stretcher, + the body's
    gear) / carriers, for 1 to 4 carriers.

    >>> carried_bulk(80, carriers=4), carried_bulk(80, carriers=4, stretcher=True)
    (Fraction(20, 1), Fraction(10, 1))
    """
    if not 1 <= carriers <= MAX_CARRIERS:
        raise ArgumentError(
            f"carriers={carriers}: expected 1 to {MAX_CARRIERS} (seed 002 splits a body's bulk "
            f"over at most four carriers)"
        )
    weight, gear = Fraction(weight), Fraction(gear)
    if weight < 0 or gear < 0:
        raise ArgumentError(f"weight={weight}, gear={gear}: expected numbers >= 0")
    return ((weight / 2 if stretcher else weight) + gear) / carriers


@dataclass(frozen=True)
class Travel:
    """A day's travel on foot over even terrain: hours, km and Stamina lost."""

    hours: Fraction
    km: Fraction
    stamina_lost: Fraction

    def to_dict(self) -> dict[str, Fraction]:
        return {"hours": self.hours, "km": self.km, "stamina_lost": self.stamina_lost}


def travel(bm: int, hours: Fraction | int = 8, *, stops: bool = False) -> Travel:
    """Daily travel distance (seed 002): 5 x BM km in 8 h at 8 Stamina, or in 10 h with rest
    stops and none; each hour past 8 adds 5% of 5 x BM and costs 1 Stamina.

    Readings (not in the seed): under 8 h without stops goes 5 x BM / 8 km an hour at 1
    Stamina an hour; with stops a day is at most 10 h, at 5 x BM / 10 km an hour.

    >>> travel(6, 24)  # 1.8 x 30 km for 24 Stamina
    Travel(hours=Fraction(24, 1), km=Fraction(54, 1), stamina_lost=Fraction(24, 1))
    """
    h = Fraction(hours)
    day = 5 * Fraction(bm)
    if h < 0:
        raise ArgumentError(f"hours={h}: expected a number of hours >= 0")
    if stops:
        if h > 10:
            raise ArgumentError(
                f"hours={h} with stops: a day with rest stops is at most 10 hours (seed 002); "
                f"longer days are travelled without stops"
            )
        return Travel(h, day * h / 10, Fraction(0))
    if h <= 8:
        return Travel(h, day * h / 8, h)
    return Travel(h, day * (1 + (h - 8) / 20), h)


def metres_per_second(hexes_per_turn: Fraction | int) -> Fraction:
    """Actual speed: hexes per turn / 2.5 (2 m hexes, 5 s turns).

    >>> metres_per_second(6)
    Fraction(12, 5)
    """
    return Fraction(hexes_per_turn) * HEX_METRES / TURN_SECONDS


# =============================================================================================
# Sneaking against detection
# =============================================================================================
#
# Seed 002: with the Sneaking skill, a 21C (context adjustment, -BF) succeeds undetected.
# Without the skill, or after a failed Sneaking roll, a Versus Challenge of Adaptability
# (-BF, context adjustment, -1 per action taken) against each observer's Alertness, "or use
# your failed roll". ``fallback`` (a ruling, setting ``sneak_fallback``) reads that "or":
# ``reuse`` (default) the failed Sneaking roll's total is the Versus total; ``adaptability``
# a fresh Adaptability roll; ``best`` the sneaker, seeing the failed total, keeps it or rolls
# Adaptability, whichever wins more often. One roll of the sneaker's faces all observers.

SNEAK_FALLBACKS = ("reuse", "adaptability", "best")
_FACES = tuple((a, b) for a in range(1, 11) for b in range(1, 11))
_PAIR = Fraction(1, 100)


def _p_beats_all(check: MythmasterCheck, a: int, b: int, observers: Sequence[int]) -> Fraction:
    """Chance that the roller's faces a, b win the Versus against every observer."""
    opp = sum_dist(2, 10)
    p = Fraction(1)
    for alertness in observers:
        p *= sum(
            (q for t, q in opp.items() if check.decide(a, b, t + alertness).endswith("success")),
            Fraction(0),
        )
    return p


def undetected_odds(
    *,
    adaptability: int,
    alertness: int | Iterable[int],
    sneaking: int | None = None,
    bulk_factor: int = 0,
    adjust: int = 0,
    actions: int = 1,
    tie: str = "opponent",
    fallback: str = "reuse",
) -> dict[str, Fraction]:
    """Exact chances of staying undetected by every observer (one Alertness each).

    Returns ``p_undetected``, ``p_sneaking`` (the Sneaking 21C alone; 0 untrained) and
    ``p_versus`` (undetected through the Versus Challenge after a failed or absent Sneaking
    roll). ``adjust`` is the context's difficulty; ``actions`` the actions taken (-1 each
    on the Adaptability roll).

    >>> undetected_odds(adaptability=12, alertness=10, sneaking=15, adjust=-2)["p_sneaking"]
    Fraction(79, 100)
    """
    observers = [alertness] if isinstance(alertness, int) else list(alertness)
    if not observers:
        raise ArgumentError("alertness: give at least one observer's Alertness")
    if actions < 0:
        raise ArgumentError(f"actions={actions}: expected a whole number >= 0")
    if fallback not in SNEAK_FALLBACKS:
        raise ArgumentError(f"sneak_fallback={fallback!r}: expected {' | '.join(SNEAK_FALLBACKS)}")
    fresh = MythmasterCheck(
        skill=adaptability, adjust=adjust - actions, bulk_factor=bulk_factor, tie=tie
    )
    p_fresh = sum((_PAIR * _p_beats_all(fresh, a, b, observers) for a, b in _FACES), Fraction(0))
    if sneaking is None:
        return {"p_undetected": p_fresh, "p_sneaking": Fraction(0), "p_versus": p_fresh}
    sneak = skill_check(sneaking, "sneaking", adjust=adjust, bf=bulk_factor, tie=tie)
    p_sneak = Fraction(0)
    p_versus = Fraction(0)
    for a, b in _FACES:
        if sneak.decide(a, b).endswith("success"):
            p_sneak += _PAIR
            continue
        if fallback == "adaptability":
            p_versus += _PAIR * p_fresh
            continue
        kept = _p_beats_all(sneak, a, b, observers)
        p_versus += _PAIR * (max(kept, p_fresh) if fallback == "best" else kept)
    return {"p_undetected": p_sneak + p_versus, "p_sneaking": p_sneak, "p_versus": p_versus}


# =============================================================================================
# Flight (RULES.md 6)
# =============================================================================================
#
# The flight rules themselves (MythmasterFlight) are in flight.py beside this module, imported
# when a token flies: listing the systems or a token's figures needs no engine.flight.

FLIGHT_SETTINGS: tuple[Param, ...] = (
    Setting(
        "collision_damage",
        "number",
        Fraction(0),
        minimum=0,
        help="docs/flight.md (the damage formula is a setting): damage points per hex/turn of "
        "relative speed in a collision, rounded down; 0 = none (the event gives the speed)",
    ),
)


# =============================================================================================
# The rule system
# =============================================================================================

_WHAT_RE = re.compile(r"^(climbing|climbing recovery|swimming) \((\w+)\)$")


def _choice(name: str, choices: tuple[str, ...], help: str) -> Param:
    return Setting(name, "choice", choices[0], choices=choices, help=help)


def _skill(name: str, what: str) -> Param:
    return Stat(name, "int", None, minimum=0, help=f"{what} skill rank; absent = untrained")


class Mythmaster(RuleSystem):
    """Mythmaster: Base Move from Adaptability, Bulk Factor, a 3-action turn on 2 m hexes."""

    name = "mythmaster"
    title = "Mythmaster (2d10 21 Challenge, hexes)"
    source = "seed 002; docs/rules.md#mythmaster"
    unit = "m"
    cell_size = HEX_METRES
    turn_name = "turn"
    turn_seconds = TURN_SECONDS
    actions_per_turn = 3
    paces = ("walk", "run", "sprint", "sneak")
    default_pace = "sprint"
    fastest_pace = "sprint"
    # Seed 002: a character "who uses two of their actions in a given turn to move is
    # considered to be running", "all three of their actions ... sprinting"; climbing "uses
    # all of your actions for the turn, so you cannot sprint or perform any other action";
    # fliers "can attack while flying, but this uses Actions normally". Each act takes one
    # of the turn's 3 actions: one act leaves at most a run, two a walk, and none a climb.
    acts = (
        ActSpec("action", 1, "one of the turn's 3 actions, spent on something else (seed 002)"),
        ActSpec("attack", 1, "seed 002: attacking 'uses Actions normally'"),
    )
    act_limit = 3
    stats: ClassVar[tuple[Param, ...]] = (
        Stat(
            "adaptability",
            "int",
            14,
            minimum=0,
            help="Adaptability attribute (default 14: Base Move 6, seed 002's climber)",
        ),
        Stat("adjustments", "int", 0, help="species and other adjustments to Adaptability for BM"),
        Stat("physical", "int", 12, minimum=1, help="Physical: bulk carried without penalty"),
        Stat("bulk", "number", Fraction(0), minimum=0, help="total bulk carried", unit="bulk"),
        _skill("climbing", "Climbing"),
        _skill("swimming", "Swimming"),
        _skill("sneaking", "Sneaking"),
        _skill("acrobatics", "Acrobatics"),
        Stat("dash", "bool", False, help="the Dash perk: doubles run and sprint"),
        Stat("aquatic", "bool", False, help="aquatic species (merfolk, lizari): swims at full BM"),
        Stat(
            "flyer",
            "bool",
            False,
            help="can fly (flight, docs/flight.md, is planned apart from ground moves)",
        ),
        Stat(
            "body_weight",
            "number",
            Fraction(0),
            minimum=0,
            unit="kg",
            help="a carried body's weight in kg (seed 002: its bulk = kg + its gear, split "
            "over the carriers; a stretcher halves the weight)",
        ),
        Stat("body_gear", "number", Fraction(0), minimum=0, help="bulk of the body's gear"),
        Stat(
            "carriers",
            "int",
            1,
            minimum=1,
            maximum=MAX_CARRIERS,
            help="people sharing the body (1 to 4, seed 002); each takes an equal share",
        ),
        Stat("stretcher", "bool", False, help="the body is on a stretcher: its weight halves"),
        Stat(
            "group_base_move",
            "int",
            None,
            minimum=0,
            help="carrying with others: the slowest other carrier's effective Base Move "
            "(seed 002: 'that of the slowest person'); this token moves at the lower",
        ),
    )
    settings: ClassVar[tuple[Param, ...]] = (
        _choice(
            "bulk_reduction",
            BULK_REDUCTIONS,
            "docs/rules.md#mythmaster (ruling): effective BM = BM - ceil(BM x BF / 10); per_factor: "
            "BM - BF x ceil(BM / 10); compound: 10% rounded up off what is left, per factor",
        ),
        _choice(
            "dash_doubles",
            ("run_and_sprint", "every_pace"),
            "docs/rules.md#mythmaster (ruling): Dash doubles run and sprint (4 and 6 x BM), not walk; "
            "every_pace doubles walk too",
        ),
        _choice(
            "climb_slip",
            ("lose_turn", "none"),
            "docs/rules.md#mythmaster (ruling): a natural 2 climbing loses a turn's progress, BM / (10 k), "
            "then rolls again at once, failing that is a fall; none: no loss, the roll only",
        ),
        _choice(
            "versus_tie",
            TIE_SETTINGS,
            "Versus Challenge ties (ruling, the check section): the opponent wins; roller: "
            "the roller wins",
        ),
        _choice(
            "sneak_fallback",
            SNEAK_FALLBACKS,
            "after a failed Sneaking 21C (ruling on seed 002's 'or use your failed roll'): "
            "reuse its total in the Versus; adaptability: roll Adaptability; best: either",
        ),
        _choice(
            "aquatic_swim",
            ("unadjusted", "adjusted"),
            "aquatic species swim at 'unadjusted Base Move' (reading): unadjusted = "
            "Adaptability x 0.44 without adjustments, then bulk; adjusted: their BM",
        ),
        _choice(
            "untrained_climbing",
            ("roll", "refuse"),
            "skill climbs without the Climbing skill (reading, the seed is silent): roll "
            "untrained at 0; refuse: the path search will not climb",
        ),
        *FLIGHT_SETTINGS,
    )

    parse_check = staticmethod(parse_check)

    # ----------------------------------------------------------------- derived figures

    def validate(self, stats: dict[str, Any]) -> None:
        total = stats["adaptability"] + stats["adjustments"]
        if total < 0:
            raise StatError(
                role="token",
                given=f"adjustments={stats['adjustments']}",
                problem=f"adaptability + adjustments must be >= 0 (got {total})",
            )

    def base_move(self, token: Token) -> int:
        """Base Move before bulk (hexes per action)."""
        return base_move(token["adaptability"], token["adjustments"])

    def bulk_factor(self, token: Token) -> int:
        return bulk_factor(self.total_bulk(token), token["physical"])

    def body_share(self, token: Token) -> Fraction:
        """Bulk of the token's share of a carried body (stats ``body_weight``, ``body_gear``,
        ``carriers``, ``stretcher``; seed 002's "Bulk and Bodies"); 0 when it carries none."""
        weight, gear = token.stats.get("body_weight"), token.stats.get("body_gear")
        if not weight and not gear:
            return Fraction(0)
        return carried_bulk(
            weight or 0,
            gear or 0,
            int(token.stats.get("carriers") or 1),
            bool(token.stats.get("stretcher")),
        )

    def total_bulk(self, token: Token) -> Fraction:
        """The ``bulk`` stat plus the token's share of a carried body."""
        return Fraction(token["bulk"]) + self.body_share(token)

    def effective_base_move(self, token: Token) -> int:
        """Base Move after the Bulk Factor: what every movement rate derives from. A token
        carrying a body with others moves at the slowest carrier's (``group_base_move``)."""
        own = reduced_base_move(
            self.base_move(token), self.bulk_factor(token), self.config["bulk_reduction"]
        )
        group = token.stats.get("group_base_move")
        return own if group is None else min(own, int(group))

    def skill_check(self, token: Token, skill: str, adjust: int = 0) -> MythmasterCheck:
        """A 21C of one of the token's skills, at -Bulk Factor where the seed says so."""
        rank = token.stats.get(skill.lower())
        return skill_check(
            rank, skill, adjust=adjust, bf=self.bulk_factor(token), tie=self.config["versus_tie"]
        )

    def climb_check(self, token: Token, level: str) -> MythmasterCheck:
        return self.skill_check(token, "climbing", LEVEL_ADJUST[level_of(level)])

    def can_climb(self, token: Token) -> bool:
        return (
            token.stats.get("climbing") is not None or self.config["untrained_climbing"] == "roll"
        )

    def climb_per_success(self, token: Token, level: str) -> Fraction:
        """Hexes a successful skill-climbing turn gains at ``level``."""
        return climb_per_success(self.effective_base_move(token), level)

    def climb_expected(self, token: Token, level: str) -> Fraction:
        """Expected hexes per turn of skill climbing: p(21C) x BM / (10 k)."""
        if not self.can_climb(token):
            return Fraction(0)
        return self.climb_check(token, level).p_success() * self.climb_per_success(token, level)

    def swim_per_action(self, token: Token) -> Fraction:
        """Hexes per action swimming: BM / 6 with the skill; aquatic species their full BM."""
        if token["aquatic"]:
            adjustments = 0 if self.config["aquatic_swim"] == "unadjusted" else token["adjustments"]
            bm = base_move(token["adaptability"], adjustments)
            return Fraction(
                reduced_base_move(bm, self.bulk_factor(token), self.config["bulk_reduction"])
            )
        if token.stats.get("swimming") is None:
            return Fraction(0)
        return Fraction(self.effective_base_move(token), 6)

    def moves(self, token: Token) -> dict[str, Fraction]:
        """The seed's own figures in hexes: per action, except run and sprint (per turn)."""
        bm = Fraction(self.effective_base_move(token))
        return {
            "walk": self.hexes_per_turn(token, "walk", "walk"),
            "run": self.hexes_per_turn(token, "walk", "run"),
            "sprint": self.hexes_per_turn(token, "walk", "sprint"),
            "sneak": bm / 2,
            "down": bm / 6,
            "ladder": bm / 6,
            "swim": self.swim_per_action(token),
        }

    @staticmethod
    def actions_of(pace: str | None) -> int:
        """Actions spent moving at ``pace`` (None: sprint, the default)."""
        name = pace or Mythmaster.default_pace
        if name not in PACE_ACTIONS:
            raise ArgumentError(
                role="pace",
                given=name,
                problem=f"mythmaster paces are {', '.join(PACE_ACTIONS)}"
                f"{did_you_mean(name, list(PACE_ACTIONS))}",
            )
        return PACE_ACTIONS[name]

    def hexes_per_turn(self, token: Token, mode: str, pace: str | None = None) -> Fraction:
        """Hexes crossed in ``mode`` in one turn at ``pace`` (climb: expected, at its
        easiest level; it always takes the whole turn)."""
        n = self.actions_of(pace)
        if n > self.actions_left(token) or (mode == "climb" and token.state.counter("actions")):
            return Fraction(0)  # the turn's acts leave too few actions (:meth:`with_acts`)
        bm = Fraction(self.effective_base_move(token))
        if mode == "walk" and pace == "sneak":
            return bm  # seed 002: two actions for Base Move, no Dash
        if mode == "walk":
            doubled = token["dash"] and (n > 1 or self.config["dash_doubles"] == "every_pace")
            return bm * n * (2 if doubled else 1)
        if mode in ("crawl", "ladder"):
            return bm / 6 * n
        if mode == "swim":
            return self.swim_per_action(token) * n
        if mode == "climb":
            return self.climb_expected(token, LEVELS[0])
        return Fraction(0)

    def actions_left(self, token: Token) -> int:
        """The turn's actions its acts leave for moving (:meth:`with_acts`)."""
        return self.actions_per_turn - token.state.counter("actions")

    def act_pace(self, token: Token, pace: str) -> str:
        """The fastest of walk, run and sprint no faster than ``pace`` that the turn's acts
        leave actions for (seed 002: run is 2 actions moving, sprint 3); sneak stays sneak
        (2 actions for Base Move), refused where fewer are left."""
        if pace not in ("walk", "run", "sprint"):
            return pace
        room = min(self.actions_left(token), PACE_ACTIONS[pace])
        fits = [p for p in ("walk", "run", "sprint") if PACE_ACTIONS[p] <= room]
        return fits[-1] if fits else pace

    def _act_refusal(self, token: Token, terrain: Terrain, pace: str | None) -> str | None:
        """Why this turn's acts leave no move into ``terrain`` at ``pace`` (None: they do)."""
        taken = token.state.counter("actions")
        if not taken:
            return None
        if terrain.move == "climb":
            return (
                f"{terrain.name}: climbing 'uses all of your actions for the turn, so you "
                f"cannot sprint or perform any other action' (seed 002); other actions take "
                f"{taken}"
            )
        need = self.actions_of(pace)
        if need > self.actions_left(token):
            return (
                f"{pace or self.default_pace} moves with {need} of the turn's "
                f"{self.actions_per_turn} actions; other actions take {taken}"
            )
        return None

    # ----------------------------------------------------------------- hooks

    def rate(self, token: Token, mode: str, pace: str | None = None) -> Fraction:
        """Metres per turn in ``mode`` at ``pace``: walk BM x actions (Dash doubles run and
        sprint), crawl and ladder BM / 6 an action, swim BM / 6 an action (skill needed;
        aquatic: full BM), climb the EXPECTED p x BM / (10 k) a turn (whole turn)."""
        return self.hexes_per_turn(token, mode, pace) * HEX_METRES

    def cell_rate(self, token: Token, terrain: Terrain, pace: str | None = None) -> Fraction:
        if terrain.move == "climb":
            if token.state.counter("actions"):
                return Fraction(0)  # climbing takes all 3 actions (seed 002)
            return self.climb_expected(token, level_of(terrain.difficulty)) * HEX_METRES
        return self.rate(token, terrain.move, pace)

    def refusal(self, token: Token, terrain: Terrain, pace: str | None = None) -> str | None:
        move = terrain.move
        if move == "blocked":
            return f"{terrain.name} is blocked"
        if move in ("gap", "air"):
            return (
                f"{terrain.name}: {move} cells are for fliers (seed 002 has no jumping rules; "
                f"flight is planned separately)"
            )
        if self.effective_base_move(token) == 0:
            return (
                f"Base Move 0 (Bulk Factor {self.bulk_factor(token)}): the token cannot move "
                f"until it drops bulk"
            )
        if move == "swim" and self.swim_per_action(token) == 0:
            return f"{terrain.name}: swimming needs the Swimming skill (seed 002)"
        if move == "climb" and not self.can_climb(token):
            return (
                f"{terrain.name}: skill climbing needs the Climbing skill "
                f"(setting untrained_climbing=refuse)"
            )
        return self._act_refusal(token, terrain, pace) or super().refusal(token, terrain, pace)

    def per_turn(self, token: Token) -> dict[str, Fraction]:
        """The most hexes of each mode crossed in a turn (CONTRACT.md ``per_turn``). Climb:
        one success at the easiest level, BM / 10 (RULES.md 2: "``per_turn.climb`` is the
        most progress of a turn (one success: BM/10k)"; seed 002: "this is the rate of
        movement per turn when you succeed your 21C"); :meth:`rate`'s expected figure, which
        paths are priced by, is ``per_turn_expected`` beside it. Air: a flyer's top speed,
        18 x BM (seed 002: "the maximum speed a creature ... can achieve is equal to 18x
        their Base Move"), and gap the same (gap and air cells are only flown over: seed 002
        has no jumping rules); 0 for a token that cannot fly."""
        out = super().per_turn(token)
        out["climb"] = (
            self.climb_per_success(token, LEVELS[0]) if self.can_climb(token) else Fraction(0)
        )
        top = FLIGHT_TOP_BM * self.effective_base_move(token)
        out["air"] = out["gap"] = Fraction(0) if self.flight_refusal(token) else Fraction(top)
        return out

    def stats_report(self, token: Token) -> dict[str, Any]:
        """The base report, with ``per_turn_by_pace`` taking :meth:`per_turn`'s climb, air and
        gap at every pace (a skill climb takes the whole turn at any pace; a flight's speed is no
        ground pace), and ``per_turn_expected``: the expected climb of a turn, p x BM / 10."""
        report = super().stats_report(token)
        most = jsonable(self.per_turn(token))
        for row in report["per_turn_by_pace"].values():
            row.update({mode: most[mode] for mode in ("climb", "air", "gap")})
        report["per_turn_expected"] = jsonable(
            {"climb": self.hexes_per_turn(token, "climb", self.fastest_pace)}
        )
        return report

    def rates(self, token: Token) -> dict[str, Any]:
        """Metres: per action, except run and sprint (their turn) and climb (a turn)."""
        out = {name: v * HEX_METRES for name, v in self.moves(token).items()}
        out["climb"] = self.rate(token, "climb")
        out["climb_per_success"] = self.climb_per_success(token, LEVELS[0]) * HEX_METRES
        return out

    def encumbrance(self, token: Token) -> str:
        """none at BF 0; encumbered at BF 1-4; heavy at 5-9 (half of BM or more gone);
        immobile when the effective Base Move is 0."""
        bf = self.bulk_factor(token)
        if self.effective_base_move(token) == 0:
            return "immobile"
        if bf >= 5:
            return "heavy"
        return "encumbered" if bf else "none"

    def cell_check(
        self, token: Token, terrain: Terrain, pace: str | None = None
    ) -> CellCheck | None:
        """Skill climbs always roll a Climbing 21C each turn (difficulty none: very_easy);
        rough water (difficulty other than none) a Swimming 21C, except for aquatic species.
        Walking, crawling and ladders roll nothing: seed 002 gives them no roll."""
        if terrain.move == "climb" and self.can_climb(token):
            level = level_of(terrain.difficulty)
            check = self.climb_check(token, level)
            what = f"climbing ({level})"
        elif (
            terrain.move == "swim"
            and terrain.difficulty != "none"
            and not token["aquatic"]
            and token.stats.get("swimming") is not None
        ):
            level = level_of(terrain.difficulty)
            check = self.skill_check(token, "swimming", LEVEL_ADJUST[level])
            what = f"swimming ({level})"
        else:
            return None
        target = f"21C: 2d10{check.modifier:+d} >= 21"
        return CellCheck(what=what, target=target, p_success=check.p_success(), check=check)

    def on_failure(self, check: CellCheck) -> str:
        """A failed climbing 21C is no progress that turn (seed 002): a delay, whose fall (a
        slip, then a failed re-roll) :meth:`climb_odds` prices. A failed swimming 21C ends
        the move in the water for the rest of the turn: a stop."""
        return "delay" if check.what.startswith("climbing") else "stop"

    def climb_odds(
        self, token: Token, terrain: Terrain, pace: str | None = None
    ) -> ClimbOdds | None:
        """A run of skill-climb cells is one climb in whole successes (RULES.md 2): each turn
        a 21C; a success gains BM / (10 k) hexes, a failure nothing, a natural 2 a slip
        (setting ``climb_slip``) and a re-roll at once, failing that a fall. Each roll takes
        a whole turn (seed 002: climbing "uses all of your actions for the turn, so you
        cannot sprint or perform any other action"): the climb starts at a turn boundary."""
        if terrain.move != "climb" or not self.can_climb(token):
            return None
        level = level_of(terrain.difficulty)
        odds = self.climb_check(token, level).outcomes()
        return ClimbOdds(
            per_success=self.climb_per_success(token, level) * HEX_METRES,
            p=sum((v for k, v in odds.items() if k.endswith("success")), Fraction(0)),
            q=odds.get("catastrophe", Fraction(0)),
            slip=self.config["climb_slip"] == "lose_turn",
            whole_turns=True,  # "uses all of your actions for the turn" (seed 002)
        )

    def apply_check(self, token: Token, what: str, degree: str) -> Token:
        """Climbing (one turn, :meth:`climb_turn`): progress in hexes of the climb, mode
        ``climb``. A success gains BM / (10 k); a failure nothing; a natural 2 above the foot
        loses a success's worth (setting ``climb_slip``; not below the foot) and sets
        ``slipping`` until the ``climbing recovery`` roll made at once: its success holds
        on, its failure is a fall: ``falling``, progress back to 0 (the token is at the foot
        of the climb). A natural 2 at the foot (no progress yet) loses nothing and cannot
        fall, as :meth:`climb_odds` prices it. Swimming: a failure sets ``stalled`` (no
        progress in the water for the rest of the turn; cleared at the end of the turn)."""
        match = _WHAT_RE.match(what)
        if match is None:
            return token
        kind, level = match.groups()
        success = degree.endswith("success")
        state = token.state
        if kind == "swimming":
            return token if success else token.moved(conditions=state.conditions | {"stalled"})
        progress = state.progress if state.mode == "climb" else Fraction(0)
        step = self.climb_per_success(token, level)
        if kind == "climbing recovery":
            if success:
                return token.moved(
                    mode="climb", progress=progress, conditions=state.conditions - {"slipping"}
                )
            return token.moved(
                mode="climb",
                progress=Fraction(0),
                conditions=(state.conditions - {"slipping"}) | {"falling"},
            )
        if success:
            return token.moved(mode="climb", progress=progress + step)
        if degree == "catastrophe" and progress > 0:
            loss = step if self.config["climb_slip"] == "lose_turn" else Fraction(0)
            return token.moved(
                mode="climb",
                progress=max(Fraction(0), progress - loss),
                conditions=state.conditions | {"slipping"},
            )
        return token.moved(mode="climb", progress=progress)

    def start_turn(self, token: Token, dice: Any) -> Token:
        """A fall (``falling``, :meth:`climb_turn`) is over by the token's next turn: it lay
        at the foot of the climb through the turn it fell in (the run's log shows it)."""
        if token.state.has("falling"):
            return token.moved(conditions=token.state.conditions - {"falling"})
        return token

    def end_turn(self, token: Token, dice: Any) -> Token:
        if token.state.has("stalled"):
            return token.moved(conditions=token.state.conditions - {"stalled"})
        return token

    # ----------------------------------------------------------------- turns and groups

    def advance(self, token: Token, mode: str, hexes: Fraction | int) -> tuple[Token, int]:
        """Add ``hexes`` of movement in ``mode``: progress carries over while the mode stays
        the same (a new mode starts from 0). Returns the token, keeping the fraction, and the
        whole hexes it may now enter."""
        carried = token.state.progress if token.state.mode == mode else Fraction(0)
        total = carried + Fraction(hexes)
        whole = math.floor(total)
        return token.moved(mode=mode, progress=total - whole), whole

    def climb_turn(
        self, token: Token, terrain: Terrain, dice: Any
    ) -> tuple[Token, list[ClimbRoll]]:
        """One turn of a skill climb priced by :meth:`climb_odds` (RULES.md 2; ruling R3:
        "Mythmaster a 21C each turn", seed 002: climbing "uses all of your actions for the
        turn"): the Climbing 21C at ``terrain``'s level, and on a natural 2 above the foot
        ("a slip and a regression, requiring another Climbing roll to avoid a fall") the
        slip of setting ``climb_slip`` and the re-roll at once (at the foot too, where its
        failure has no height to fall from). Every roll is an event in
        ``dice``'s log and a :class:`ClimbRoll`. ``state.progress`` is the share of the
        cell climbed (the turn loop's unit: :meth:`RuleSystem.climb_turn`), counted here in
        hexes (2-m cells) over the cell's length, its ``height`` in hexes (at least one, as
        the path's odds count it); a failed re-roll is a fall: ``falling`` and progress 0.
        Seed 002 gives a fall no figure ("potential falling damage"): the token falls to
        the foot of the climb (the cell it climbed from), with no damage and no other
        condition; ``falling`` is cleared as its next turn starts (:meth:`start_turn`).
        """
        if terrain.move != "climb" or not self.can_climb(token):
            raise ArgumentError(
                f"{terrain.name}: no skill climb for this token "
                f"({self.refusal(token, terrain) or 'not a climb cell'})"
            )
        length = max(Fraction(1), exact(terrain.height) / HEX_METRES) if terrain.height else 1
        level = level_of(terrain.difficulty)
        check = self.climb_check(token, level)
        target = f"21C: 2d10{check.modifier:+d} >= 21"
        token = token.moved(mode="climb", progress=token.state.progress * length)
        result = check.roll(dice)
        rolls = [ClimbRoll(f"climbing ({level})", target, result.degree, result.success)]
        token = self.apply_check(token, f"climbing ({level})", result.degree)
        if result.degree == "catastrophe":
            # "requiring another Climbing roll to avoid a fall": rolled at once, at the foot
            # too, where there is no height to fall from (its failure does nothing there).
            again = check.roll(dice)
            what = f"climbing recovery ({level})"
            rolls.append(ClimbRoll(what, target, again.degree, again.success))
            if token.state.has("slipping"):
                token = self.apply_check(token, what, again.degree)
        return token.moved(progress=token.state.progress / length), rolls

    def climb_turn_outcomes(
        self, token: Token, terrain: Terrain
    ) -> list[tuple[Token, Fraction]] | None:
        """:meth:`climb_turn`'s tokens with their exact chances: each degree of the
        Climbing 21C, and on a natural 2 each degree of the re-roll made at once (applied
        only where it slipped, as :meth:`climb_turn` applies it); the same tokens merged."""
        if terrain.move != "climb" or not self.can_climb(token):
            return None
        length = max(Fraction(1), exact(terrain.height) / HEX_METRES) if terrain.height else 1
        level = level_of(terrain.difficulty)
        odds = [(d, p) for d, p in self.climb_check(token, level).outcomes().items() if p]
        start = token.moved(mode="climb", progress=token.state.progress * length)
        out: list[tuple[Token, Fraction]] = []
        for degree, p in odds:
            after = self.apply_check(start, f"climbing ({level})", degree)
            branches = [(after, p)]
            if degree == "catastrophe" and after.state.has("slipping"):
                what = f"climbing recovery ({level})"
                branches = [(self.apply_check(after, what, d), p * q) for d, q in odds]
            for got, chance in branches:
                got = got.moved(progress=got.state.progress / length)
                at = next((i for i, (t, _) in enumerate(out) if t.state == got.state), None)
                if at is None:
                    out.append((got, chance))
                else:
                    out[at] = (out[at][0], out[at][1] + chance)
        return out

    def carrying(self, token: Token, bulk: Fraction | int) -> Token:
        """The token with ``bulk`` more carried (e.g. its share of a body)."""
        stats = dict(token.stats)
        stats["bulk"] = Fraction(stats["bulk"]) + Fraction(bulk)
        carried = self.token(stats, token_id=token.id)
        return carried.moved(
            cell=token.state.cell, mode=token.state.mode, progress=token.state.progress
        )

    def group_rate(
        self,
        carriers: Sequence[Token],
        mode: str = "walk",
        pace: str | None = None,
        *,
        weight: Fraction | int = 0,
        gear: Fraction | int = 0,
        stretcher: bool = False,
    ) -> Fraction:
        """Metres per turn of a group carrying a body: each carrier takes
        :func:`carried_bulk` on top of its own bulk; the group moves at the slowest rate."""
        share = carried_bulk(weight, gear, len(carriers), stretcher)
        return min(self.rate(self.carrying(t, share), mode, pace) for t in carriers)

    def sneak_odds(
        self, token: Token, alertness: int | Iterable[int], *, adjust: int = 0, actions: int = 1
    ) -> dict[str, Fraction]:
        """Exact odds of staying undetected (see :func:`undetected_odds`)."""
        return undetected_odds(
            adaptability=token["adaptability"],
            alertness=alertness,
            sneaking=token.stats.get("sneaking"),
            bulk_factor=self.bulk_factor(token),
            adjust=adjust,
            actions=actions,
            tie=self.config["versus_tie"],
            fallback=self.config["sneak_fallback"],
        )

    # ----------------------------------------------------------------- flight (the Flight section)

    def flight_refusal(self, token: Token) -> str | None:
        """Why this token cannot fly (None when it can)."""
        if not token["flyer"]:
            return "mythmaster: this token cannot fly; give it the stat flyer=true"
        if self.effective_base_move(token) == 0:
            return (
                f"mythmaster: Base Move 0 (Bulk Factor {self.bulk_factor(token)}): the token "
                "cannot fly until it drops bulk"
            )
        return None

    def flight(self, token: Token, model: Any) -> MythmasterFlight | None:
        """Flight rules (RULES.md 6) for a ``flyer`` on ``model``; None when it cannot fly."""
        if self.flight_refusal(token):
            return None
        from engine.systems.mythmaster.flight import MythmasterFlight

        return MythmasterFlight(self, token, model)

    # ----------------------------------------------------------------- the report

    def extra_stats(self, token: Token) -> dict[str, Any]:
        bm = self.effective_base_move(token)
        bf = self.bulk_factor(token)
        moves = self.moves(token)
        climbing: dict[str, Any] = {}
        for level in LEVELS:
            check = self.climb_check(token, level)
            climbing[level] = {
                "adjust": LEVEL_ADJUST[level],
                "divisor": 10 * CLIMB_DIVISOR[level],
                "needs_on_2d10": max(3, min(20, TARGET - check.modifier)),
                "p_success": check.p_success(),
                "per_success": self.climb_per_success(token, level),
                "expected_per_turn": self.climb_expected(token, level),
            }
        skills = {}
        for skill in ("climbing", "swimming", "sneaking", "acrobatics"):
            check = self.skill_check(token, skill)
            skills[skill] = {
                "rank": token.stats.get(skill),
                "bulk_penalty": -check.bulk_factor,
                "modifier": check.modifier,
            }
        return {
            **self.seed_reach_stats(token),
            "base_move": self.base_move(token),
            "bulk_factor": bf,
            "effective_base_move": bm,
            "bulk": {
                "carried": self.total_bulk(token),
                "free_up_to": token["physical"],
                "next_factor_above": token["physical"] * (bf + 1) if bf < 10 else None,
            },
            "moves_hexes": moves,
            "speed_m_per_s": {
                pace: metres_per_second(moves[pace]) for pace in ("walk", "run", "sprint")
            },
            "climbing": climbing,
            "skills": skills,
            "travel": {
                "km_per_day": 5 * bm,
                "day": travel(bm, 8).to_dict(),
                "day_with_stops": travel(bm, 10, stops=True).to_dict(),
                "extra_hour": {"km": Fraction(bm, 4), "stamina_lost": 1},
            },
        }

    def seed_reach_stats(self, token: Token) -> dict[str, Any]:
        """``stats`` figures of issue 17: the sneak pace, a carried body and the take-off
        speed after each ground pace."""
        bm = self.effective_base_move(token)
        share = self.body_share(token)
        own = reduced_base_move(
            self.base_move(token), self.bulk_factor(token), self.config["bulk_reduction"]
        )
        group = token.stats.get("group_base_move")
        return {
            "sneak": {
                "actions": PACE_ACTIONS["sneak"],
                "hexes_per_action": Fraction(bm, 2),
                "hexes_per_turn": self.hexes_per_turn(token, "walk", "sneak"),
                "actions_left": self.actions_per_turn - PACE_ACTIONS["sneak"],
            },
            "body": None
            if not share
            else {
                "weight_kg": Fraction(token["body_weight"]),
                "gear": Fraction(token["body_gear"]),
                "stretcher": bool(token["stretcher"]),
                "body_bulk": (
                    Fraction(token["body_weight"]) / (2 if token["stretcher"] else 1)
                    + Fraction(token["body_gear"])
                ),
                "carriers": int(token["carriers"]),
                "share": share,
                "total_bulk": self.total_bulk(token),
                "own_base_move": own,
                "group_base_move": group,
                "moves_at": bm,
                "slowest": "this token" if group is None or own <= int(group) else "another",
            },
            "take_off_speed": {
                pace: self.hexes_per_turn(token, "walk", pace) for pace in self.paces
            },
        }


SYSTEM = Mythmaster


@functools.lru_cache(maxsize=4096)
def _outcomes(check: MythmasterCheck) -> tuple[tuple[str, Fraction], ...]:
    """:meth:`MythmasterCheck.outcomes` of ``check`` (frozen: kept by value)."""
    return check._outcomes_made()
