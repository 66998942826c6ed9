"""Speedpoints (seed 004, a wiki system whose name is unknown; RULES.md section 4).

Over 800 lines on purpose: a rule system is one plug-in module (adding a system touches no
other file; ARCHITECTURE.md), and its sections follow the seed's chapters.

Speeds are points: 1 point = 1 m/s = 3.6 km/h = one 2-m space per 2-s turn, so a token with
running 5 crosses 5 spaces (10 m) in a turn spent running (the only pace, ``run``; the turn's
move may be split around actions, its total at most the running, the swimming in water).

Sections, in order: the success roll (checks); units and tables (the Strength table, the
climbing table); jumping (:func:`jump_length`, :func:`jump_check`); falling
(:func:`fall_outcome`); the rule system, whose hooks the path search calls. Its flight
rules (RULES.md 6) are in :mod:`engine.systems.speedpoints.flight`, imported when a token
flies.

How the cell hooks read the seed (each a documented choice):

* ``climb`` cells: difficulty from the cell's level (``none`` = 0, the easiest: the seed
  rolls for every climb). 0: ceil(running / 2) spaces per turn; 5: 1 m per turn; 10 and up:
  refused ("not strategically significant"). ``ladder`` cells climb at the difficulty-0 rate;
  their level, if any, only makes the roll harder. One climbing roll per climb.
* ``gap`` cells: never entered by a step. A run of them in a straight line is one gap, as
  wide as its cells (cells x 2 m), crossed by one jump (:meth:`Speedpoints.jump`) from the
  cell before it to the cell after it, at running rate: running m with a run-up (the step
  before the jump went the same way), half standing; an acrobatics roll when the jump is
  within 1 m of the longest (exactly 1 m short counts as within); refused when too long.
* Falls in play: a failed climbing roll or jump names its fall in the check (``fall 10 m
  onto hard``: the climb's height, the gap's depth, the cell's ``fall``); the end of the turn
  rolls it (:meth:`Speedpoints.end_turn`). A token in a pit climbs its wall (setting
  ``pit_wall``, a ruling): one roll as the climb starts, whole turns spent climbing, the last
  part of it priced by the search as a climb in place (:meth:`Speedpoints.search_state`).
  State: conditions ``fell``, ``in_gap``, ``climbing_out``, ``lost_grip``, ``hurt``,
  ``grievous``; counters ``fall_cm``, ``fall_difficulty``, ``fall_surface``, ``pit_cm``,
  ``pit_surface``, ``pit_climbed_cm``, ``damage``, ``stun``.
* Encumbrance: load > CC halves running and swimming (rounded down; jumps and the
  difficulty-0 climb use the halved running), forbids strenuous actions and flight;
  load > 2 x CC cannot be carried: the token is ``immobile`` (or, with ``overload=error``,
  refused as a token with a :class:`~engine.errors.StatError`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from fractions import Fraction
from typing import TYPE_CHECKING, Any, ClassVar

from engine.checks import (
    BatchResult,
    CheckResult,
    field_choice,
    field_int,
    finish_batch,
    parse_fields,
)
from engine.dice import Dice, Dist, add_constant, sum_dist
from engine.errors import ArgumentError, CheckError, StatError
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
    exact,
    jsonable,
)
from engine.terrain import Terrain

if TYPE_CHECKING:
    from engine.systems.speedpoints.flight import SpeedpointsFlight

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


def parse_check(text: str) -> SpeedpointsCheck | FallCheck:
    """Read ``ability=4 difficulty=5`` (+ ``resolver=3d6``).

    ``ability`` (alias ``climbing``, ``acrobatics``) defaults to 0; ``difficulty`` (the
    seed's 0/5/10/15/20 scale, alias ``diff``) is required. With ``fall=METRES`` the check
    is a fall (:func:`parse_fall_check`).

    >>> parse_check("ability=4 difficulty=5").p_success()  # d20 >= 11
    Fraction(1, 2)
    """
    if re.search(r"(^|[\s,])(fall|height)=", text.lower()):
        return parse_fall_check(text)
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


# =============================================================================================
# Units and tables (seed 004, RULES.md section 4)
# =============================================================================================
#
# One point of running, swimming or airspeed is 1 m/s = 3.6 km/h = one 2-m space per 2-s turn,
# so a figure in points is at once metres per second and spaces per turn, and 2 m per turn.

SPACE_M = Fraction(2)
"""A space (one cell on the system's default grid), in metres."""

TURN_S = Fraction(2)
"""A turn, in seconds."""

KMH_PER_POINT = Fraction(36, 10)
"""1 m/s in km/h."""

CARRYING_CAPACITY: dict[int, int] = {
    0: 0, 1: 1, 2: 2, 3: 5, 4: 10, 5: 15, 6: 20, 7: 30, 8: 50, 9: 65,
    10: 80, 11: 100, 12: 120, 13: 150, 14: 200, 15: 250, 16: 300,
    17: 400, 18: 500, 19: 600, 20: 800, 21: 1000, 22: 1200, 23: 1500, 24: 1800, 25: 2100,
    26: 2500, 27: 3000, 28: 4000, 29: 5000, 30: 6000, 31: 7500, 32: 9000, 33: 10_000,
    34: 12_000, 35: 15_000, 36: 20_000, 37: 25_000, 38: 30_000, 39: 35_000, 40: 40_000,
    41: 45_000, 42: 50_000, 43: 55_000, 44: 60_000, 45: 65_000, 46: 70_000, 47: 75_000,
    48: 80_000, 49: 90_000, 50: 100_000,
}  # fmt: skip
"""The seed's Strength table: strength -> carrying capacity (CC) in kg, every row."""

MAX_STRENGTH = max(CARRYING_CAPACITY)

LEVEL_DIFFICULTY: dict[str, int] = {
    "very_easy": 0,
    "easy": 5,
    "moderate": 10,
    "difficult": 15,
    "very_difficult": 20,
    "heroic": 25,
}
"""Neutral levels to the seed's 0/5/10/15/20 difficulty scale (RULES.md section 4)."""

CLIMB_SURFACES: dict[int, str] = {
    0: "ladder, steep mountain",
    5: "rope, pole",
    10: "wall or cliff with hand holds",
    15: "finger holds only",
    20: "sheer surface",
}
"""The seed's climbing table, difficulty -> surface or structure."""

TACTICAL_CLIMB_LIMIT = 10
"""Climbs of this difficulty and up are "not strategically significant": never tactical."""

ROPE_CLIMB_M = Fraction(1)
"""Difficulty 5 (rope, pole): 1 m per turn, whatever the running."""

FALL_SAFE_M = Fraction(3)
"""Falls up to 3 m (one story) are safe; over it, dangerous."""

FALL_LETHAL_M = Fraction(6)
"""Falls over 6 m (two stories) are lethal."""

FALL_DIFFICULTY = 10
"""The falling roll's difficulty when the fall is not from a climb (RULES.md section 4)."""

JUMP_MARGIN_M = Fraction(1)
"""A jump within this of the longest is "barely": it asks an acrobatics roll."""

FALL_BANDS = ("safe", "dangerous", "lethal")
SURFACES = ("hard", "soft", "water")


def convert(points: int | Fraction) -> dict[str, Fraction]:
    """A speed in points in every unit the seed names.

    >>> convert(1) == {"points": 1, "m_per_s": 1, "km_per_h": Fraction(18, 5),
    ...                "spaces_per_turn": 1, "m_per_turn": 2}
    True
    """
    p = Fraction(points)
    return {
        "points": p,
        "m_per_s": p,
        "km_per_h": p * KMH_PER_POINT,
        "spaces_per_turn": p * TURN_S / SPACE_M,
        "m_per_turn": p * TURN_S,
    }


def carrying_capacity(strength: int) -> int:
    """CC in kg for a strength on the seed's table (0-50).

    >>> carrying_capacity(10), carrying_capacity(50)
    (80, 100000)
    """
    if strength not in CARRYING_CAPACITY:
        raise StatError(
            role="token",
            given=f"strength={strength}",
            problem=f"expected a whole number 0-{MAX_STRENGTH} (the seed's Strength table)",
        )
    return CARRYING_CAPACITY[strength]


def load_encumbrance(strength: int, load: Fraction | int) -> str:
    """``none`` (load <= CC), ``encumbered`` (<= 2 x CC) or ``immobile`` (more: cannot carry)."""
    cc = carrying_capacity(strength)
    if load > 2 * cc:
        return "immobile"
    if load > cc:
        return "encumbered"
    return "none"


def token_encumbrance(token: Token) -> str:
    """The token's encumbrance from its stats (strength and load)."""
    return load_encumbrance(int(token.stats.get("strength", 10)), token.stats.get("load", 0))


def effective_points(token: Token, stat: str) -> int:
    """``running`` or ``swimming`` after encumbrance: halved, rounded down; 0 when overloaded.

    ``airspeed`` is 0 while encumbered (no flight).
    """
    base = int(token.stats.get(stat, 0))
    enc = token_encumbrance(token)
    if enc == "immobile":
        return 0
    if enc == "encumbered":
        return 0 if stat == "airspeed" else base // 2
    return base


def level_difficulty(level: str, none: int) -> int:
    """A terrain's neutral level on the seed's scale; ``none`` gives the caller's default."""
    return none if level == "none" else LEVEL_DIFFICULTY[level]


def climb_spaces(running: int, difficulty: int) -> Fraction:
    """Spaces per turn on a climb of this difficulty (0 = not tactical).

    Difficulty 0 (and ladders): half the running, rounded up; 5: 1 m (half a space);
    10 and up: not tactical.

    >>> climb_spaces(5, 0), climb_spaces(5, 5), climb_spaces(5, 10)
    (Fraction(3, 1), Fraction(1, 2), Fraction(0, 1))
    """
    if difficulty >= TACTICAL_CLIMB_LIMIT:
        return Fraction(0)
    if difficulty >= 5:
        return ROPE_CLIMB_M / SPACE_M if running > 0 else Fraction(0)
    return Fraction(-(-running // 2))


# =============================================================================================
# Jumping
# =============================================================================================


@dataclass(frozen=True)
class JumpCheck:
    """What a jump over a gap asks: an acrobatics roll (``check``) or a ``refusal``.

    ``p_success`` is exact: the roll's chance, or 0 for a refused jump.
    """

    gap_m: Fraction
    longest_m: Fraction
    run_up: bool
    check: SpeedpointsCheck | None
    p_success: Fraction
    refusal: str | None = None

    def to_dict(self) -> dict[str, object]:
        return {
            "gap_m": self.gap_m,
            "longest_m": self.longest_m,
            "run_up": self.run_up,
            "check": str(self.check) if self.check else None,
            "p_success": self.p_success,
            "refusal": self.refusal,
        }


def jump_length(token: Token, run_up: bool) -> Fraction:
    """The longest jump in metres: running (after encumbrance) with a run-up, half standing.

    >>> from engine.systems import create
    >>> sp = create("speedpoints")
    >>> jump_length(sp.token("running=5"), True), jump_length(sp.token("running=5"), False)
    (Fraction(5, 1), Fraction(5, 2))
    """
    running = Fraction(effective_points(token, "running"))
    return running if run_up else running / 2


def gap_cells_per_turn(running: int, run_up: bool = True) -> int:
    """The most gap cells (2-m spaces) a turn of ``running`` points crosses by jumping: the
    ``per_turn`` figure of ``gap`` (CONTRACT.md: "the most cells of that mode the token
    crosses in one turn when it spends the whole turn moving").

    Seed 004: "Running is also the maximum distance a character can jump with a running
    start ... Without a running start a character can jump half as far", and the turn's
    "total distance may not exceed their running". A jump over n gap cells (2n m) takes the
    turn's time of its cells: the n gap cells and the landing, and with a run-up the space
    run before it too (RULES.md 4: "at least 1 space straight before"); a turn's move is
    whole jumps (the turn loop never ends a turn in the air). So this is the best set of
    jumps in ``running`` spaces of time: run-up jumps of up to running / 2 cells costing
    n + 2 spaces, standing jumps of up to running / 4 cells costing n + 1 (``run_up``
    False: standing jumps only, setting ``gap_jump=standing``); a barely-made jump's roll
    counts as made (``per_turn`` is the rules' figure, not the dice's).

    Running 5: a run-up jump over 2 cells (4 spaces of the 5); running 10: a run-up jump
    over 5 cells (7 spaces) and a standing one over 2 (3 spaces); running 2 clears no gap
    within one turn (a run-up, a 2-m gap and the landing are 3 spaces).

    >>> [gap_cells_per_turn(r) for r in (1, 2, 4, 5, 6, 10)]
    [0, 0, 2, 2, 3, 7]
    """
    r = max(0, int(running))
    longest = r // 2 if run_up else 0  # run-up jumps: 2n m <= running m
    standing = r // 4  # standing jumps: 2n m <= running / 2 m
    # Each jump beyond those that fill the turn only adds its overhead: a few of each
    # kind are all there is to try. A jump's cells are its time less the overhead (2 with a
    # run-up, 1 standing); its time is from 3 (2 standing) up to its longest's.
    most_runs = r // (longest + 2) + 1 if longest else 0
    most_stands = r // (standing + 1) + 1 if standing else 0
    best = 0
    for runs in range(most_runs + 1):
        for stands in range(most_stands + 1):
            if 3 * runs + 2 * stands > r or not (runs or stands):
                continue
            room = runs * (longest + 2) + stands * (standing + 1)
            best = max(best, min(r, room) - 2 * runs - stands)
    return best


def jump_height(token: Token, run_up: bool) -> Fraction:
    """The highest vertical leap in metres: half the longest jump."""
    return jump_length(token, run_up) / 2


def jump_check(
    token: Token,
    gap_m: Fraction | int,
    run_up: bool,
    *,
    difficulty: int = FALL_DIFFICULTY,
    resolver: str = DEFAULT_RESOLVER,
) -> JumpCheck | None:
    """What jumping a gap of ``gap_m`` metres asks.

    None when clearly safe (more than 1 m short of the longest jump); a :class:`JumpCheck`
    with the acrobatics roll and its exact odds when within 1 m of the longest (1 m short
    counts as within); a :class:`JumpCheck` with a ``refusal`` when the gap is longer than
    the longest jump. ``difficulty`` is the roll's (the seed names none; default 10).
    """
    gap = Fraction(gap_m)
    longest = jump_length(token, run_up)
    how = "run-up" if run_up else "standing"
    if gap > longest:
        return JumpCheck(
            gap,
            longest,
            run_up,
            None,
            Fraction(0),
            f"a {jsonable(gap)} m gap is longer than this token's longest {how} jump "
            f"({jsonable(longest)} m)",
        )
    if longest - gap > JUMP_MARGIN_M:
        return None
    check = SpeedpointsCheck(int(token.stats.get("acrobatics", 0)), difficulty, resolver)
    return JumpCheck(gap, longest, run_up, check, check.p_success())


# =============================================================================================
# Falling
# =============================================================================================


@dataclass(frozen=True)
class FallOutcome:
    """A fall's band (before and after the landing) and the exact odds of each outcome.

    ``outcomes`` maps ``unharmed`` / ``hurt`` (damage and stun = toughness) / ``grievous``
    (damage = stamina) to exact probabilities summing to 1; ``effects`` gives each outcome's
    damage and stun (None where the token has no such stat). ``check`` is the falling roll
    (None for a safe fall, which asks none).
    """

    height_m: Fraction
    surface: str
    band_by_height: str
    band: str
    check: SpeedpointsCheck | None
    outcomes: dict[str, Fraction]
    effects: dict[str, dict[str, int | None]]

    @property
    def what(self) -> str:
        """The name :meth:`Speedpoints.apply_check` reads: ``fall (dangerous)`` etc."""
        return f"fall ({self.band})"

    def to_dict(self) -> dict[str, object]:
        return {
            "height_m": self.height_m,
            "surface": self.surface,
            "band_by_height": self.band_by_height,
            "band": self.band,
            "check": str(self.check) if self.check else None,
            "outcomes": dict(self.outcomes),
            "effects": {k: dict(v) for k, v in self.effects.items()},
        }


def fall_band(height_m: Fraction | int) -> str:
    """``safe`` up to 3 m, ``dangerous`` over 3 m, ``lethal`` over 6 m."""
    h = Fraction(height_m)
    if h > FALL_LETHAL_M:
        return "lethal"
    if h > FALL_SAFE_M:
        return "dangerous"
    return "safe"


def softened(band: str, surface: str, landing: str = "soft_and_water") -> str:
    """The band after the landing: soft ground or water soften a fall one step (setting)."""
    softens = (landing == "soft_and_water" and surface in ("soft", "water")) or (
        landing == "water" and surface == "water"
    )
    if not softens or band == "safe":
        return band
    return FALL_BANDS[FALL_BANDS.index(band) - 1]


def fall_effects(token: Token) -> dict[str, dict[str, int | None]]:
    """Each fall outcome's damage and stun for this token (None where it has no such stat):
    ``hurt`` damage and stun equal to toughness, ``grievous`` damage equal to stamina (the
    seed names no stun there); armour does not count."""
    toughness = token.stats.get("toughness")
    return {
        "unharmed": {"damage": 0, "stun": 0},
        "hurt": {"damage": toughness, "stun": toughness},
        "grievous": {"damage": token.stats.get("stamina")},
    }


def fall_degree(band: str, success: bool) -> str:
    """A falling roll's outcome: dangerous, success unharmed and failure ``hurt``; lethal,
    success ``hurt`` and failure ``grievous``; a safe fall is always unharmed."""
    if band == "safe":
        return "unharmed"
    if band == "dangerous":
        return "unharmed" if success else "hurt"
    return "hurt" if success else "grievous"


def fall_ability(token: Token) -> int:
    """The falling roll's ability: the better of climbing and acrobatics, plus agility."""
    stats = token.stats
    return max(int(stats.get("climbing", 0)), int(stats.get("acrobatics", 0))) + int(
        stats.get("agility", 0)
    )


def fall_outcome(
    token: Token,
    height_m: Fraction | int,
    surface: str = "hard",
    difficulty: int = FALL_DIFFICULTY,
    *,
    resolver: str = DEFAULT_RESOLVER,
    landing: str = "soft_and_water",
) -> FallOutcome:
    """The exact odds of each outcome of a fall of ``height_m`` metres onto ``surface``.

    ``difficulty`` is the climb's (10 when the fall is not from a climb). Dangerous: success
    unharmed, failure damage and stun equal to toughness. Lethal: success damage and stun
    equal to toughness, failure damage equal to stamina. Armour does not count.
    """
    if surface not in SURFACES:
        raise ArgumentError(f"fall surface '{surface}': expected {' | '.join(SURFACES)}")
    h = Fraction(height_m)
    by_height = fall_band(h)
    band = softened(by_height, surface, landing)
    effects = fall_effects(token)
    if band == "safe":
        return FallOutcome(h, surface, by_height, band, None, {"unharmed": Fraction(1)}, effects)
    check = SpeedpointsCheck(fall_ability(token), difficulty, resolver)
    p = check.p_success()
    if band == "dangerous":
        outcomes = {"unharmed": p, "hurt": 1 - p}
    else:
        outcomes = {"hurt": p, "grievous": 1 - p}
    return FallOutcome(h, surface, by_height, band, check, outcomes, effects)


# =============================================================================================
# Issue 17: vertical jumps, falls as a check, climbing actions
# =============================================================================================

CLIMB_QUICK_ACTIONS = 1
"""Seed 004: "While a character climbs he can move and perform one quick action per turn"."""


def vertical_jump_check(
    token: Token,
    rise_m: Fraction | int,
    run_up: bool,
    *,
    difficulty: int = FALL_DIFFICULTY,
    resolver: str = DEFAULT_RESOLVER,
) -> JumpCheck | None:
    """What jumping up onto a cell ``rise_m`` metres higher asks (its ``height`` less the
    take-off cell's). Seed 004: "A character can jump vertically half as high as they can
    jump horizontally ... If the character can barely make a vertical leap (within 1 meter of
    their maximum jumping height) they must make a success roll using their acrobatics
    ability or fail to reach the required height."

    None when clearly safe (more than 1 m below the highest leap); a :class:`JumpCheck` with
    the acrobatics roll when within 1 m; with a ``refusal`` when higher than the highest leap.
    The :class:`JumpCheck`'s ``gap_m``/``longest_m`` hold the rise and the highest leap.
    """
    rise = Fraction(rise_m)
    highest = jump_height(token, run_up)
    how = "run-up" if run_up else "standing"
    if rise > highest:
        return JumpCheck(
            rise,
            highest,
            run_up,
            None,
            Fraction(0),
            f"a {jsonable(rise)} m rise is higher than this token's highest {how} leap "
            f"({jsonable(highest)} m: half its longest jump)",
        )
    if rise <= 0 or highest - rise > JUMP_MARGIN_M:
        return None
    check = SpeedpointsCheck(int(token.stats.get("acrobatics", 0)), difficulty, resolver)
    return JumpCheck(rise, highest, run_up, check, check.p_success())


FALL_DEGREES = ("unharmed", "hurt", "grievous")
"""A fall's outcomes, best first: unharmed; damage and stun = toughness; damage = stamina."""

_FALL_KEYS = {
    "fall": "fall",
    "height": "fall",
    "ability": "ability",
    "surface": "surface",
    "difficulty": "difficulty",
    "diff": "difficulty",
    "resolver": "resolver",
    "landing": "landing",
}
_FALL_EXAMPLE = "fall=5 ability=3 surface=soft"
LANDINGS = ("soft_and_water", "water", "none")


@dataclass(frozen=True)
class FallCheck:
    """A fall as a check (``tacgrid odds --system speedpoints fall=5 ability=3``).

    The band comes from the height (RULES.md 4: up to 3 m safe, over 3 m dangerous, over 6 m
    lethal), softened one step by a ``soft`` or ``water`` landing (setting ``landing``); the
    falling roll is 1d20 + ``ability`` (the better of climbing and acrobatics, + agility) >=
    10 + ``difficulty`` (the climb's; 10 when not from a climb). Degrees: ``unharmed``,
    ``hurt`` (damage and stun = toughness), ``grievous`` (damage = stamina); only
    ``unharmed`` counts as a success.
    """

    height_m: Fraction
    ability: int = 0
    surface: str = "hard"
    difficulty: int = FALL_DIFFICULTY
    resolver: str = DEFAULT_RESOLVER
    landing: str = "soft_and_water"

    @property
    def band(self) -> str:
        return softened(fall_band(self.height_m), self.surface, self.landing)

    @property
    def roll_check(self) -> SpeedpointsCheck:
        return SpeedpointsCheck(self.ability, self.difficulty, self.resolver)

    def outcomes(self) -> dict[str, Fraction]:
        out = dict.fromkeys(FALL_DEGREES, Fraction(0))
        if self.band == "safe":
            out["unharmed"] = Fraction(1)
            return out
        p = self.roll_check.p_success()
        win, lose = ("unharmed", "hurt") if self.band == "dangerous" else ("hurt", "grievous")
        out[win], out[lose] = p, 1 - p
        return out

    def p_success(self) -> Fraction:
        return self.outcomes()["unharmed"]

    def roll(self, dice: Dice) -> CheckResult:
        if self.band == "safe":
            return CheckResult("unharmed", True, 0, 0, (), ("safe fall: no roll",))
        n, sides = parse_resolver(self.resolver)
        event = dice.roll(n, sides, self.ability)
        margin = event.total - self.roll_check.target
        degree = fall_degree(self.band, margin >= 0)
        event = dice.decide(event, f"{self.band} fall: {degree}")
        return CheckResult(degree, degree == "unharmed", event.total, margin, (event,))

    def roll_many(self, dice: Dice, n: int) -> BatchResult:
        if self.band == "safe":
            zeros = np.zeros(n, dtype=np.int64)
            return finish_batch(dice, self, FALL_DEGREES, 1, zeros, zeros, zeros)
        k, sides = parse_resolver(self.resolver)
        totals = dice.faces_array(n * k, sides).reshape(n, k).sum(axis=1) + self.ability
        margins = totals - self.roll_check.target
        fail = (margins < 0).astype(np.int8)
        index = fail if self.band == "dangerous" else fail + 1
        return finish_batch(dice, self, FALL_DEGREES, 1, index, totals, margins)

    def __str__(self) -> str:
        return (
            f"fall={jsonable(self.height_m)} surface={self.surface} ability={self.ability} "
            f"difficulty={self.difficulty} resolver={self.resolver} landing={self.landing} "
            f"({self.band})"
        )


def parse_fall_check(text: str) -> FallCheck:
    """Read ``fall=5 ability=3 surface=soft`` (+ ``difficulty=``, ``resolver=``,
    ``landing=``): the fall's height in metres is required; ability defaults to 0, surface
    to hard, difficulty to 10 (not from a climb)."""
    text = re.sub(r"\(\w+\)", " ", text)  # the band str() appends
    fields = parse_fields(text, keys=_FALL_KEYS, example=_FALL_EXAMPLE)
    token, raw = fields["fall"]
    try:
        height = exact(raw)
    except (ValueError, ZeroDivisionError):
        height = Fraction(-1)
    if height < 0 or height > 1_000_000:
        raise CheckError(f"check '{token}': fall must be metres fallen, 0..1000000, e.g. fall=5")
    resolver = DEFAULT_RESOLVER
    if "resolver" in fields:
        rtoken, value = fields["resolver"]
        try:
            n, sides = parse_resolver(value)
        except ValueError:
            raise CheckError(f"check '{rtoken}': resolver must be dice like 1d20 or 3d6") from None
        resolver = f"{n}d{sides}"
    return FallCheck(
        height_m=height,
        ability=field_int(fields, "ability", example=3, default=0),
        surface=field_choice(fields, "surface", SURFACES, default="hard"),
        difficulty=field_int(fields, "difficulty", example=10, default=FALL_DIFFICULTY),
        resolver=resolver,
        landing=field_choice(fields, "landing", LANDINGS, default="soft_and_water"),
    )


# =============================================================================================
# Falls and pits in play (issue 38)
# =============================================================================================
#
# A check names the fall its failure makes (``fall 10 m onto hard``: the height in metres and
# what it lands on), so :meth:`Speedpoints.apply_check`, which is given no dice, records the fall
# still to roll in the token's state and the end of the turn rolls it (as Whisperspace does).
# Heights are kept in whole centimetres, rounded up: the bands compare with whole metres, so
# the rounding never changes a band.

PIT_CONDITIONS = ("in_gap", "fell", "climbing_out", "lost_grip")
"""The conditions of a token in a pit: ``in_gap`` (in it), ``fell`` (fell in), ``climbing_out``
(its climbing roll for the wall succeeded: the climb goes on), ``lost_grip`` (that roll failed
this turn: it fell back and climbs no more this turn)."""

PIT_COUNTERS = ("pit_cm", "pit_surface", "pit_climbed_cm")
"""A pit's depth (cm), its floor (index in :data:`SURFACES`) and the wall climbed so far (cm)."""

FALL_COUNTERS = ("fall_cm", "fall_difficulty", "fall_surface")
"""A fall still to roll: its height (cm), the falling roll's difficulty (the climb's; 10 when
not from a climb) and what it lands on (index in :data:`SURFACES`)."""

_FALL_WORDS = re.compile(r"fall (\d+(?:/\d+)?) m onto (hard|soft|water)")
_DIFFICULTY_WORDS = re.compile(r"difficulty (\d+)")


LANDING_WORDS = {"hard": "hard ground", "soft": "soft ground", "water": "water"}
"""What a fall lands on, in words (a roll's event)."""


def fall_words(height_m: Fraction, surface: str) -> str:
    """How a check names the fall its failure makes: ``fall 10 m onto hard``."""
    return f"fall {jsonable(Fraction(height_m))} m onto {surface}"


def read_fall(what: str) -> tuple[Fraction, str]:
    """The fall a check's ``what`` names (:func:`fall_words`): (metres, surface); a check that
    names none falls 0 m onto hard ground."""
    m = _FALL_WORDS.search(what)
    return (Fraction(m.group(1)), m.group(2)) if m else (Fraction(0), "hard")


def centimetres(metres: Fraction) -> int:
    """Metres as whole centimetres, rounded up (a counter is a whole number)."""
    return -(-Fraction(metres) * 100 // 1)


def surface_of(index: int) -> str:
    """The surface a counter names by its index in :data:`SURFACES` (hard where unknown)."""
    return SURFACES[index] if 0 <= index < len(SURFACES) else "hard"


def terrain_surface(terrain: Terrain) -> str:
    """What a fall from or into this terrain lands on: its ``fall`` (MAP-FORMAT.md)."""
    return terrain.fall if terrain.fall in SURFACES else "hard"


# =============================================================================================
# Flight (RULES.md 6)
# =============================================================================================
#
# The flight rules themselves (SpeedpointsFlight) are in flight.py beside this module,
# imported when a token flies: listing the systems or a token's figures needs no engine.flight.

FLIGHT_SETTINGS: tuple[Param, ...] = (
    Setting(
        "altitude_trade",
        "choice",
        "running",
        choices=("running", "reset"),
        help="docs/flight.md (reading): running = climbing 1 m takes 1 airspeed and descending "
        "1 m gives 1 back, one running modifier; reset = a descent first cancels the whole "
        "climbing penalty and a climb the whole descent bonus ('until they descend again')",
    ),
    Setting(
        "dive_fall",
        "choice",
        "roll",
        choices=("roll", "odds"),
        help="docs/rules.md#speedpoints-in-play-dives-faster-than-safe (ruling): roll = a "
        "descent faster than the safe rate is a fall of the metres descended, its falling "
        "roll made at once: a success flies the turn as chosen, a failure drops straight "
        "down and covers no space that turn; odds = only the fall's odds are recorded",
    ),
)


# =============================================================================================
# The rule system
# =============================================================================================


def _points(name: str, default: int, what: str) -> Param:
    return Stat(
        name,
        "int",
        default,
        minimum=0,
        unit="points (m/s = spaces per turn)",
        help=f"{what} (1 point = 1 m/s = 3.6 km/h = 1 space per turn)",
    )


class Speedpoints(RuleSystem):
    """Speedpoints: speeds in points (m/s = spaces per turn), climbing table, jumps, falls."""

    name = "speedpoints"
    title = "Speedpoints (a wiki system whose name is unknown)"
    source = "seed 004; docs/rules.md#speedpoints"
    unit = "m"
    cell_size = SPACE_M
    turn_name = "turn"
    turn_seconds = TURN_S
    actions_per_turn = 1
    paces = ("run",)
    default_pace = "run"
    fastest_pace = "run"
    #: What falls do to a token, for the table: no rule of the seed reads them.
    notes: ClassVar[frozenset[str]] = frozenset({"damage", "stun", "hurt", "grievous"})
    # Seed 004: "Characters can move more than once during their turn (before and after
    # performing actions) but the total distance may not exceed their running": an action
    # costs the move nothing. "While a character climbs he can move and perform one quick
    # action per turn"; "An encumbered character cannot perform strenuous actions".
    acts = (
        ActSpec(
            "action",
            1,
            "seed 004: a move may be split 'before and after performing "
            "actions'; no climbing that turn (only a quick action)",
        ),
        ActSpec("quick", 1, "seed 004: a climber 'can move and perform one quick action per turn'"),
        ActSpec(
            "strenuous",
            1,
            "seed 004: 'An encumbered character cannot perform strenuous "
            "actions'; no climbing that turn",
        ),
    )
    stats: ClassVar[tuple[Param, ...]] = (
        _points("running", 5, "running; also the longest run-up jump in m"),
        _points("swimming", 1, "swimming (0: cannot swim)"),
        _points("airspeed", 0, "flying (see the Flight section: tacgrid fly)"),
        Stat(
            "strength",
            "int",
            10,
            minimum=0,
            maximum=MAX_STRENGTH,
            help="sets the carrying capacity (the seed's Strength table, 0-50)",
        ),
        Stat("agility", "int", 0, minimum=0, help="added to the falling roll"),
        Stat("acrobatics", "int", 0, minimum=0, help="ability for barely-possible jumps, falls"),
        Stat("climbing", "int", 0, minimum=0, help="ability for climbing rolls, falls"),
        Stat("toughness", "int", None, minimum=0, help="damage and stun of a bad fall"),
        Stat("stamina", "int", None, minimum=0, help="damage of a failed lethal fall"),
        Stat("load", "number", Fraction(0), minimum=0, unit="kg", help="what the token carries"),
    )
    settings: ClassVar[tuple[Param, ...]] = (
        Setting(
            "resolver",
            "choice",
            DEFAULT_RESOLVER,
            choices=("1d20", "3d6", "2d10"),
            help="docs/rules.md#speedpoints (ruling, the seed names no dice): success roll = resolver + "
            "ability >= 10 + difficulty",
        ),
        Setting(
            "overload",
            "choice",
            "immobile",
            choices=("immobile", "error"),
            help="load > 2 x CC cannot be carried: immobile = the token cannot move; "
            "error = refuse the token",
        ),
        Setting(
            "crawl",
            "choice",
            "half",
            choices=("half", "full", "none"),
            help="the seed has no crawling: half = ceil(running / 2) spaces per turn "
            "(its ladder rate), full = running, none = cannot crawl",
        ),
        Setting(
            "gap_jump",
            "choice",
            "run_up",
            choices=("run_up", "standing"),
            help="run_up: a jump after at least one space straight before it, in its "
            "direction, reaches running m (docs/rules.md#speedpoints), any other standing (half); standing: "
            "every jump counts as standing",
        ),
        Setting(
            "jump_difficulty",
            "int",
            FALL_DIFFICULTY,
            minimum=0,
            maximum=25,
            help="the seed names no difficulty for the acrobatics roll of a jump within 1 m "
            "of the longest: this one, or the gap cell's own level",
        ),
        Setting(
            "landing",
            "choice",
            "soft_and_water",
            choices=("soft_and_water", "water", "none"),
            help="which landings soften a fall one step (docs/rules.md#speedpoints: the landing may soften it)",
        ),
        Setting(
            "pit_wall",
            "int",
            0,
            minimum=0,
            maximum=25,
            help="docs/rules.md#speedpoints (ruling): a token that fell into a pit climbs out up its wall, a "
            "climb as high as the pit is deep at this difficulty (0: the seed's 'ladder, steep "
            "mountain', ceil(running / 2) spaces a turn; 5: rope, 1 m a turn; 10 and up: not "
            "tactical, the token stays in the pit); one climbing roll, a failure falls back "
            "the pit's depth",
        ),
        *FLIGHT_SETTINGS,
    )

    # ----------------------------------------------------------------- stats and state

    def validate(self, stats: dict[str, Any]) -> None:
        if self.config["overload"] != "error":
            return
        strength, load = int(stats.get("strength", 10)), stats.get("load", 0)
        cc = carrying_capacity(strength)
        if load > 2 * cc:
            raise StatError(
                role="token",
                given=f"load={jsonable(Fraction(load))}",
                problem=f"strength {strength} carries at most {2 * cc} kg (2 x CC {cc} kg); "
                "lower load or raise strength",
            )

    def encumbrance(self, token: Token) -> str:
        return token_encumbrance(token)

    # ----------------------------------------------------------------- rates

    def _crawl_spaces(self, running: int) -> Fraction:
        how = self.config["crawl"]
        if how == "full":
            return Fraction(running)
        if how == "half":
            return Fraction(-(-running // 2))
        return Fraction(0)

    def rate(self, token: Token, mode: str, pace: str | None = None) -> Fraction:
        running = effective_points(token, "running")
        if mode == "walk":
            spaces = Fraction(running)
        elif mode == "crawl":
            spaces = self._crawl_spaces(running)
        elif mode == "swim":
            spaces = Fraction(effective_points(token, "swimming"))
        elif mode in ("climb", "ladder"):
            # Without a terrain: the easiest climb (difficulty 0, ladders).
            spaces = climb_spaces(running, 0)
        elif mode == "gap":
            # Crossed only by a jump (:meth:`jump`): at running rate, cell by cell.
            spaces = Fraction(running)
        else:
            # air: only flight crosses it (the Flight section, tacgrid fly); blocked: never.
            spaces = Fraction(0)
        return spaces * SPACE_M

    def climb_difficulty(self, terrain: Terrain) -> int:
        """The climb's difficulty on the seed's scale: ``none`` is the easiest (0), since the
        seed always rolls for a climb; a ``ladder`` cell is 0 unless its level says more."""
        return level_difficulty(terrain.difficulty, 0)

    def climb_height(self, terrain: Terrain) -> Fraction:
        """How high a climb cell goes, in m: its ``height``, else one space (MAP-FORMAT.md)."""
        return self.cell_size if terrain.height is None else exact(terrain.height)

    def gap_depth(self, terrain: Terrain) -> Fraction:
        """How deep a gap cell is, in m: its ``height`` (MAP-FORMAT.md), else 0."""
        return Fraction(0) if terrain.height is None else exact(terrain.height)

    def jump_difficulty(self, terrain: Terrain) -> int:
        """The acrobatics roll's difficulty for a gap cell: its level, else the setting."""
        return level_difficulty(terrain.difficulty, int(self.config["jump_difficulty"]))

    def cell_rate(self, token: Token, terrain: Terrain, pace: str | None = None) -> Fraction:
        if terrain.move == "climb":
            running = effective_points(token, "running")
            return climb_spaces(running, self.climb_difficulty(terrain)) * SPACE_M
        # Ladders climb at the difficulty-0 rate whatever their level (which only makes the
        # roll harder); every other mode's rate does not depend on the terrain.
        return self.rate(token, terrain.move, pace)

    def with_acts(self, token: Token, acts: tuple[str, ...]) -> Token:
        """The acts recorded (:meth:`RuleSystem.with_acts`); a strenuous one refused while
        encumbered (seed 004: "An encumbered character cannot perform strenuous actions").
        They cost the move nothing: it is split around them, its total the running."""
        if "strenuous" in acts and token_encumbrance(token) != "none":
            raise StatError(
                role="act",
                given="strenuous",
                problem=f"seed 004: 'An encumbered character cannot perform strenuous "
                f"actions'; load {jsonable(Fraction(token.stats.get('load', 0)))} kg is over "
                f"the carrying capacity ({carrying_capacity(token['strength'])} kg)",
            )
        return super().with_acts(token, acts)

    def climb_act_refusal(self, token: Token, terrain: Terrain) -> str | None:
        """Why this turn's acts rule out climbing ``terrain`` (a climb or a ladder): seed
        004's climber "can move and perform one quick action per turn", and no other."""
        if terrain.move not in ("climb", "ladder"):
            return None
        state = token.state
        quick = state.counter("act_quick")
        others = state.counter("actions") - quick
        if quick <= CLIMB_QUICK_ACTIONS and not others:
            return None
        return (
            f"{terrain.name}: 'While a character climbs he can move and perform one quick "
            f"action per turn' (seed 004); this turn's acts: {quick} quick, {others} other"
        )

    def refusal(self, token: Token, terrain: Terrain, pace: str | None = None) -> str | None:
        if terrain.move == "blocked":
            return f"{terrain.name} is blocked"
        why = self.climb_act_refusal(token, terrain)
        if why is not None:
            return why
        if token_encumbrance(token) == "immobile":
            return (
                f"speedpoints: load {jsonable(Fraction(token.stats.get('load', 0)))} kg is over "
                f"twice the carrying capacity ({2 * carrying_capacity(token['strength'])} kg): "
                "it cannot be carried"
            )
        if terrain.move == "climb":
            d = self.climb_difficulty(terrain)
            if d >= TACTICAL_CLIMB_LIMIT:
                return (
                    f"{terrain.name}: untactical climb (difficulty {d}, "
                    f"{CLIMB_SURFACES.get(d, 'harder than a sheer surface')}: "
                    "10 and up is not strategically significant)"
                )
        if terrain.move == "swim" and effective_points(token, "swimming") == 0:
            return f"{terrain.name}: this token cannot swim (swimming 0)"
        if terrain.move == "air":
            return f"{terrain.name}: air cells are for flight (section 6), not the ground search"
        return super().refusal(token, terrain, pace)

    # ----------------------------------------------------------------- checks

    def cell_check(
        self, token: Token, terrain: Terrain, pace: str | None = None
    ) -> CellCheck | None:
        resolver = self.config["resolver"]
        if terrain.move in ("climb", "ladder"):
            d = self.climb_difficulty(terrain)
            if terrain.move == "climb" and d >= TACTICAL_CLIMB_LIMIT:
                return None  # refused, never entered
            check = SpeedpointsCheck(int(token.stats.get("climbing", 0)), d, resolver)
            fall = fall_words(self.climb_height(terrain), terrain_surface(terrain))
            return CellCheck(
                what=f"climbing ({terrain.move}, difficulty {d}, {fall})",
                target=f"{resolver} + {check.ability} >= {check.target}",
                p_success=check.p_success(),
                check=check,
            )
        # Gap cells ask nothing of their own: the jump over the whole gap does (:meth:`jump`).
        return None

    jumps_gaps = True

    def jump(
        self, token: Token, width: Fraction, run_up: bool, gaps: tuple[Terrain, ...]
    ) -> tuple[str | None, CellCheck | None]:
        """A jump over a gap ``width`` metres wide (RULES.md 4): refused beyond the longest
        jump (running m with a run-up of at least one straight space, half that standing); an
        acrobatics roll within 1 m of it, at the hardest gap cell's difficulty."""
        run_up = run_up and self.config["gap_jump"] == "run_up"
        resolver = self.config["resolver"]
        difficulty = max(self.jump_difficulty(t) for t in gaps)
        jc = jump_check(token, width, run_up, difficulty=difficulty, resolver=resolver)
        if jc is None:
            return None, None
        if jc.refusal is not None or jc.check is None:
            return jc.refusal or "cannot jump", None
        how = "run-up" if run_up else "standing"
        # A failure falls into the first gap cell (the turn loop leaves the token there).
        fall = fall_words(self.gap_depth(gaps[0]), terrain_surface(gaps[0]))
        return None, CellCheck(
            what=f"acrobatics ({how} jump {jsonable(jc.gap_m)} m of {jsonable(jc.longest_m)} m, "
            f"{fall})",
            target=f"{resolver} + {jc.check.ability} >= {jc.check.target}",
            p_success=jc.p_success,
            check=jc.check,
        )

    def check_period(self, token: Token, terrain: Terrain, pace: str) -> Fraction | None:
        """One roll per climb (seed 004: "For each climb make a success roll"; RULES.md 4):
        a climb is one roll however many turns it takes; other runs, once a turn."""
        return None if terrain.move in ("climb", "ladder") else Fraction(1)

    def leap(
        self, token: Token, rise: Fraction, run_up: bool
    ) -> tuple[str | None, CellCheck | None] | None:
        """A step up ``rise`` metres onto a higher cell is a vertical jump (seed 004: half as
        high as the longest jump; within 1 m an acrobatics roll, whose failure only fails to
        reach the height): :func:`vertical_jump_check`."""
        run_up = run_up and self.config["gap_jump"] == "run_up"
        resolver = self.config["resolver"]
        jc = vertical_jump_check(
            token,
            rise,
            run_up,
            difficulty=int(self.config["jump_difficulty"]),
            resolver=resolver,
        )
        if jc is None:
            return None, None
        if jc.refusal is not None or jc.check is None:
            return jc.refusal or "cannot leap", None
        how = "run-up" if run_up else "standing"
        return None, CellCheck(
            what=f"acrobatics ({how} leap {jsonable(jc.gap_m)} m of {jsonable(jc.longest_m)} m)",
            target=f"{resolver} + {jc.check.ability} >= {jc.check.target}",
            p_success=jc.p_success,
            check=jc.check,
        )

    def on_failure(self, check: CellCheck) -> str:
        """A failed climbing roll loses the grip, a failed jump falls into the gap: a fall."""
        if " leap " in check.what:
            return "stop"  # "fail to reach the required height"
        return "fall" if check.what.startswith(("climbing", "acrobatics")) else "stop"

    def apply_check(self, token: Token, what: str, degree: str) -> Token:
        """A check's effect. A failed climbing roll: the climber loses its grip and falls to
        the foot (``fell``; the height reached is lost), a fall as high as the climb (RULES.md
        4). A failed jump: the token falls into the gap (``fell``, ``in_gap``; the pit's depth
        and floor in ``pit_cm``/``pit_surface``), a fall as deep as the pit. A fall that is
        not safe waits in ``fall_cm``/``fall_difficulty``/``fall_surface`` for the end of the
        turn, which rolls it (:meth:`end_turn`). ``fall (BAND)`` with success or failure: the
        falling roll's effect (:meth:`fall_effect`)."""
        if what.startswith("fall"):
            band = next((b for b in FALL_BANDS if f"({b})" in what), "safe")
            return self.fall_effect(token, fall_degree(band, degree == "success"))
        if degree == "success" or (what.startswith("acrobatics") and " leap " in what):
            return token  # a failed vertical leap only fails to reach the height
        height, surface = read_fall(what)
        state = token.state
        if what.startswith("climbing"):
            m = _DIFFICULTY_WORDS.search(what)
            difficulty = int(m.group(1)) if m else 0
            token = token.with_state(state.with_conditions("fell").changed(progress=0))
            return self.pend_fall(token, height, surface, difficulty)
        if what.startswith("acrobatics"):
            state = state.with_conditions("fell", "in_gap", remove=("climbing_out", "lost_grip"))
            state = state.set_counter("pit_cm", centimetres(height))
            state = state.set_counter("pit_surface", SURFACES.index(surface))
            state = state.set_counter("pit_climbed_cm", 0)
            return self.pend_fall(token.with_state(state), height, surface, FALL_DIFFICULTY)
        return token

    # ----------------------------------------------------------------- falls and pits in play

    def pend_fall(self, token: Token, height_m: Fraction, surface: str, difficulty: int) -> Token:
        """``token`` with a fall of ``height_m`` onto ``surface`` still to roll (the falling
        roll at ``difficulty``); a fall that is safe (by height, after the landing) asks no
        roll and leaves nothing to roll. The higher of two falls waits."""
        band = softened(fall_band(height_m), surface, self.config["landing"])
        if band == "safe":
            return token
        st = token.state
        cm = max(st.counter("fall_cm"), centimetres(height_m))
        st = st.set_counter("fall_cm", cm).with_counter("fall_difficulty", difficulty)
        return token.with_state(st.set_counter("fall_surface", SURFACES.index(surface)))

    def roll_fall(self, token: Token, dice: Dice) -> Token:
        """The fall still to roll (:data:`FALL_COUNTERS`), rolled now: each roll an event."""
        st = token.state
        cm = st.counter("fall_cm")
        if cm <= 0:
            return token
        height = Fraction(cm, 100)
        surface = surface_of(st.counter("fall_surface"))
        difficulty = st.counter("fall_difficulty")
        for name in FALL_COUNTERS:
            st = st.set_counter(name, 0)
        return self.fall(token.with_state(st), height, surface, difficulty, dice)

    def fall(
        self, token: Token, height_m: Fraction, surface: str, difficulty: int, dice: Dice
    ) -> Token:
        """A fall of ``height_m`` onto ``surface`` rolled now with ``dice`` (RULES.md 4): the
        falling roll of ``tacgrid odds fall=...`` (:class:`FallCheck`, 1d20 + the better of
        climbing and acrobatics + agility >= 10 + ``difficulty``), its outcome applied
        (:meth:`fall_effect`). A safe fall asks no roll."""
        check = FallCheck(
            Fraction(height_m),
            fall_ability(token),
            surface,
            difficulty,
            self.config["resolver"],
            self.config["landing"],
        )
        result = check.roll(dice)
        if result.events:
            hurt = fall_effects(token)[result.degree]
            harm = ", ".join(f"{k} {v}" for k, v in hurt.items() if v)
            dice.decide(
                result.events[0],
                f"falls {jsonable(Fraction(height_m))} m onto {LANDING_WORDS[surface]} "
                f"({check.band}): {result.degree}" + (f", {harm}" if harm else ""),
            )
        return self.fall_effect(token, result.degree)

    @staticmethod
    def fall_effect(token: Token, degree: str) -> Token:
        """A fall's outcome on the token: ``hurt`` (damage and stun = toughness) or
        ``grievous`` (damage = stamina) as a condition, the damage and stun added to the
        ``damage`` and ``stun`` counters; ``unharmed`` changes nothing."""
        if degree not in ("hurt", "grievous"):
            return token
        st = token.state.with_conditions(degree)
        for name, value in fall_effects(token)[degree].items():
            if value:
                st = st.set_counter(name, st.counter(name) + int(value))
        return token.with_state(st)

    def out_of_pit(self, token: Token) -> Token:
        """``token`` out of its pit: the pit's conditions and counters cleared."""
        st = token.state.with_conditions(remove=PIT_CONDITIONS)
        for name in PIT_COUNTERS:
            st = st.set_counter(name, 0)
        return token.with_state(st)

    def pit_climb_cm(self, token: Token) -> int:
        """Centimetres of the pit's wall climbed a turn (0: it cannot climb it): the seed's
        climbing table at the ``pit_wall`` difficulty."""
        spaces = climb_spaces(effective_points(token, "running"), int(self.config["pit_wall"]))
        return int(spaces * SPACE_M * 100)

    def pit_turns_left(self, token: Token) -> Fraction | None:
        """Turns of climbing still between a token in a pit and its rim; None while it cannot
        climb (it fell back this turn, or the wall is no tactical climb for it)."""
        st = token.state
        per_turn = self.pit_climb_cm(token)
        if st.has("lost_grip") or per_turn <= 0:
            return None
        left = st.counter("pit_cm") - st.counter("pit_climbed_cm")
        return Fraction(max(0, left), per_turn)

    def search_state(self, token: Token, pace: str) -> SearchState | None:
        """A token in a pit (``in_gap``) searches two layers: ``in_pit``, where it enters no
        cell, and ``out``, joined in place by the climb up the pit's wall (what is left of
        it, :meth:`pit_turns_left`); none while it cannot climb."""
        st = token.state
        if not st.has("in_gap") or st.counter("pit_cm") <= 0:
            return None
        left = self.pit_turns_left(token)
        if left is not None and left <= 0:
            return None
        in_place = () if left is None else ((0, 1, left),)
        return SearchState(
            names=("in_pit", "out"),
            tokens=(token, self.out_of_pit(token)),
            modes=(frozenset(), None),
            in_place=in_place,
            start=0,
            main=1,
        )

    def held(self, token: Token) -> str | None:
        """Why a token in a pit makes no move this turn: it fell back off the wall, cannot
        climb it, or spends the whole turn climbing (None: it may move)."""
        st = token.state
        if not st.has("in_gap") or st.counter("pit_cm") <= 0:
            return None
        depth = jsonable(Fraction(st.counter("pit_cm"), 100))
        if st.has("lost_grip"):
            return f"lost its grip on the wall of a {depth} m pit and fell back"
        left = self.pit_turns_left(token)
        if left is None:
            return (
                f"cannot climb out of a {depth} m pit (difficulty {self.config['pit_wall']}: "
                "not a tactical climb)"
            )
        if left >= 1:
            climbed = jsonable(Fraction(st.counter("pit_climbed_cm"), 100))
            return f"climbing out of a {depth} m pit ({climbed} m climbed)"
        return None

    def climb_out(self, token: Token, dice: Dice) -> Token:
        """A token in a pit starts the climb up its wall (seed 004: "For each climb make a
        success roll"; one roll, as the climb starts): success, ``climbing_out``; failure,
        "he looses his grip and falls": ``lost_grip`` and a fall as high as the climb, the
        pit's depth, rolled now. A pit of no depth is no pit."""
        st = token.state
        if st.counter("pit_cm") <= 0:
            return self.out_of_pit(token)
        if st.has("climbing_out") or self.pit_climb_cm(token) <= 0:
            return token
        difficulty = int(self.config["pit_wall"])
        check = SpeedpointsCheck(
            int(token.stats.get("climbing", 0)), difficulty, self.config["resolver"]
        )
        result = check.roll(dice)
        depth = Fraction(st.counter("pit_cm"), 100)
        dice.decide(
            result.events[0],
            f"climbing out of a {jsonable(depth)} m pit (difficulty {difficulty}): "
            + result.degree,
        )
        if result.success:
            return token.with_state(st.with_conditions("climbing_out"))
        token = token.with_state(st.with_conditions("lost_grip"))
        surface = surface_of(st.counter("pit_surface"))
        if softened(fall_band(depth), surface, self.config["landing"]) == "safe":
            return token
        return self.fall(token, depth, surface, difficulty, dice)

    def start_turn(self, token: Token, dice: Any) -> Token:
        """Start of the token's turn: a fall still to roll is rolled; out of a pit, ``fell``
        ends (the token may climb again); in one, a grip lost last turn is found again and
        the token starts the climb up the wall (:meth:`climb_out`)."""
        token = self.roll_fall(token, dice)
        st = token.state
        if not st.has("in_gap"):
            return (
                token.with_state(st.with_conditions(remove=("fell",))) if st.has("fell") else token
            )
        if st.has("lost_grip"):
            token = token.with_state(st.with_conditions(remove=("lost_grip",)))
        return self.climb_out(token, dice)

    def start_turn_outcomes(self, token: Token) -> list[tuple[Token, Fraction]] | None:
        """:meth:`start_turn`'s tokens with their exact chances: in a pit, the climbing
        roll for its wall (:meth:`climb_out`'s :class:`SpeedpointsCheck`), a failure's fall
        as high as the pit rolled at once (:class:`FallCheck`, each degree's harm). A fall
        still to roll, or anything out of a pit: the default."""
        st = token.state
        if st.counter("fall_cm") > 0 or not st.has("in_gap"):
            return super().start_turn_outcomes(token)
        if st.has("lost_grip"):
            token = token.with_state(st.with_conditions(remove=("lost_grip",)))
            st = token.state
        if st.counter("pit_cm") <= 0 or st.has("climbing_out") or self.pit_climb_cm(token) <= 0:
            return super().start_turn_outcomes(token)
        difficulty = int(self.config["pit_wall"])
        odds = SpeedpointsCheck(
            int(token.stats.get("climbing", 0)), difficulty, self.config["resolver"]
        ).outcomes()
        out = [(token.with_state(st.with_conditions("climbing_out")), odds["success"])]
        lost = token.with_state(st.with_conditions("lost_grip"))
        depth = Fraction(st.counter("pit_cm"), 100)
        surface = surface_of(st.counter("pit_surface"))
        if softened(fall_band(depth), surface, self.config["landing"]) == "safe":
            out.append((lost, odds["failure"]))
        else:
            landing = self.config["landing"]
            fall = FallCheck(depth, fall_ability(lost), surface, difficulty,
                             self.config["resolver"], landing)  # fmt: skip
            out += [
                (self.fall_effect(lost, degree), odds["failure"] * p)
                for degree, p in fall.outcomes().items()
            ]
        return [(t, p) for t, p in out if p]

    def paced(self, token: Token, pace: str, moved: bool) -> Token:
        """A token climbing out of a pit that left its cell this turn is out of it (its
        search took the climb up the wall, then stepped on)."""
        st = token.state
        if moved and st.has("in_gap") and st.has("climbing_out"):
            return self.out_of_pit(token)
        return token

    def end_turn(self, token: Token, dice: Any) -> Token:
        """End of the token's turn: a fall still to roll is rolled (a failed jump or climbing
        roll in this turn's move); a token climbing out of a pit that is still in it spent
        the turn climbing: a turn's climb more, out at the rim once it has climbed the
        pit's depth (a grip lost this turn stays lost until the next turn starts)."""
        return self._climbed_on(self.roll_fall(token, dice))

    def end_turn_outcomes(self, token: Token) -> list[tuple[Token, Fraction]] | None:
        """:meth:`end_turn`'s tokens with their exact chances: a fall still to roll, each
        degree of its falling roll (:class:`FallCheck`, as :meth:`roll_fall` rolls it)."""
        st = token.state
        cm = st.counter("fall_cm")
        if cm <= 0:
            return super().end_turn_outcomes(token)
        cleared = st
        for name in FALL_COUNTERS:
            cleared = cleared.set_counter(name, 0)
        before = token.with_state(cleared)
        check = FallCheck(
            Fraction(cm, 100),
            fall_ability(before),
            surface_of(st.counter("fall_surface")),
            st.counter("fall_difficulty"),
            self.config["resolver"],
            self.config["landing"],
        )
        return [
            (self._climbed_on(self.fall_effect(before, degree)), p)
            for degree, p in check.outcomes().items()
            if p
        ]

    def _climbed_on(self, token: Token) -> Token:
        """The rest of :meth:`end_turn` once its fall is rolled: a token climbing out of a
        pit spent the turn climbing."""
        st = token.state
        if st.has("in_gap") and st.has("climbing_out"):
            climbed = st.counter("pit_climbed_cm") + self.pit_climb_cm(token)
            if climbed >= st.counter("pit_cm"):
                return self.out_of_pit(token)
            st = st.set_counter("pit_climbed_cm", climbed)
        return token.with_state(st)

    parse_check = staticmethod(parse_check)

    def jump_check(self, token: Token, gap_m: Fraction | int, run_up: bool) -> JumpCheck | None:
        """:func:`jump_check` with this system's resolver and jump difficulty."""
        return jump_check(
            token,
            gap_m,
            run_up,
            difficulty=int(self.config["jump_difficulty"]),
            resolver=self.config["resolver"],
        )

    def fall_outcome(
        self,
        token: Token,
        height_m: Fraction | int,
        surface: str = "hard",
        difficulty: int = FALL_DIFFICULTY,
    ) -> FallOutcome:
        """:func:`fall_outcome` with this system's resolver and landing setting."""
        return fall_outcome(
            token,
            height_m,
            surface,
            difficulty,
            resolver=self.config["resolver"],
            landing=self.config["landing"],
        )

    # ----------------------------------------------------------------- flight (the Flight section)

    def flight_rolls(
        self, token: Token, events: tuple[dict[str, Any], ...], dice: Any
    ) -> tuple[Token, bool]:
        """A dive faster than is safe (seed 004: the safe rate of descent is half the
        airspeed a second; the flight's ``fall`` event) is a fall of the metres descended
        onto what lies under the flier (the ``surface`` of its cell), and "if a fall is
        potentially dangerous or lethal, make another success roll": the falling roll
        (:class:`FallCheck`, difficulty 10: not from a climb) is made now. Ruling (setting
        ``dive_fall``): a success flies the turn as chosen; a failure is the fall itself,
        straight down where the turn began, with no space covered; the roll's outcome is
        the fall's (:meth:`fall_effect`). A fall softened to safe asks no roll."""
        if self.config["dive_fall"] != "roll":
            return token, True
        flies = True
        for ev in events:
            if ev.get("event") != "fall":
                continue
            height = exact(ev["height_m"])
            surface = str(ev.get("surface", "hard"))
            check = FallCheck(
                height,
                fall_ability(token),
                surface,
                FALL_DIFFICULTY,
                self.config["resolver"],
                self.config["landing"],
            )
            result = check.roll(dice)
            if not result.events:
                continue  # softened to a safe fall: no roll
            success = result.total - check.roll_check.target >= 0
            hurt = fall_effects(token)[result.degree]
            harm = ", ".join(f"{k} {v}" for k, v in hurt.items() if v)
            dice.decide(
                result.events[0],
                f"dives {jsonable(height)} m onto {LANDING_WORDS[surface]} ({check.band}): "
                + ("flies on" if success else "falls")
                + f", {result.degree}"
                + (f", {harm}" if harm else ""),
            )
            token = self.fall_effect(token, result.degree)
            flies = flies and success
        return token, flies

    def dive_odds(self, token: Token, events: tuple[dict[str, Any], ...]) -> Fraction:
        """The exact chance that :meth:`flight_rolls` flies a turn of ``events`` as chosen:
        each falling roll it makes succeeds (1 where it rolls nothing)."""
        if self.config["dive_fall"] != "roll":
            return Fraction(1)
        p = Fraction(1)
        for ev in events:
            if ev.get("event") != "fall":
                continue
            check = FallCheck(
                exact(ev["height_m"]),
                fall_ability(token),
                str(ev.get("surface", "hard")),
                FALL_DIFFICULTY,
                self.config["resolver"],
                self.config["landing"],
            )
            if check.band != "safe":
                p *= check.roll_check.p_success()
        return p

    def flight_refusal(self, token: Token) -> str | None:
        """Why this token cannot fly (None when it can)."""
        enc = token_encumbrance(token)
        if enc != "none":
            cc = carrying_capacity(int(token["strength"]))
            return (
                f"speedpoints: no flight while encumbered (load "
                f"{jsonable(Fraction(token.stats.get('load', 0)))} kg > carrying capacity "
                f"{cc} kg); lower load"
            )
        if int(token["airspeed"]) <= 0:
            return "speedpoints: airspeed 0: this token cannot fly; give it airspeed=N"
        return None

    def flight(self, token: Token, model: Any) -> SpeedpointsFlight | None:
        """Flight rules (RULES.md 6) on ``model``; None when the token cannot fly."""
        if self.flight_refusal(token):
            return None
        from engine.systems.speedpoints.flight import SpeedpointsFlight

        return SpeedpointsFlight(self, token, model)

    # ----------------------------------------------------------------- reports

    def air_spaces(self, token: Token) -> Fraction:
        """Spaces a turn of flight: seed 004 "Each point of running, swimming or airspeed
        allows the character to move ... one space per turn" (RULES.md 4: 1 point = 1 space
        per turn); 0 when the token cannot fly ("An encumbered character cannot ... fly").
        Level flight at the stat's airspeed: a dive's temporary increase is flight state."""
        if self.flight_refusal(token) is not None:
            return Fraction(0)
        return Fraction(effective_points(token, "airspeed"))

    def per_turn(self, token: Token) -> dict[str, Fraction]:
        """The most cells of each mode a turn spent wholly moving crosses (CONTRACT.md).

        Seed 004: "Each point of running, swimming or airspeed allows the character to move
        ... one space per turn": walk = running, swim = swimming (halved, rounded down, while
        encumbered). Climb and ladder: the fastest climb, difficulty 0 ("ladder, steep
        mountain": "½ running (rounded up)"); a rope or pole (5) is "1 meter per turn", half a
        space, and 10 and up is not tactical (``stats`` ``climbing`` lists each). Gap: the
        most gap cells whole jumps cross in a turn (:func:`gap_cells_per_turn`), not the
        running: a jump is at most running metres long. Air: level flight at the airspeed:
        air cells are flown (``tacgrid fly``), never entered by the ground search, so the
        ground rate of ``air`` stays 0 while this figure says how far the token flies (a
        dive's temporary airspeed, up to twice it, is the flight's state, not the token's)."""
        out = super().per_turn(token)
        out["air"] = self.air_spaces(token) * SPACE_M / self.cell_size
        running = effective_points(token, "running")
        run_up = self.config["gap_jump"] == "run_up"
        out["gap"] = Fraction(gap_cells_per_turn(running, run_up)) * SPACE_M / self.cell_size
        return out

    def stats_report(self, token: Token) -> dict[str, Any]:
        """The base report, with ``per_turn_by_pace`` (one pace, ``run``) taking
        :meth:`per_turn`'s ``gap`` and ``air``: a turn's jumps and its flight are not the
        ground rate of those modes."""
        report = super().stats_report(token)
        most = jsonable(self.per_turn(token))
        for row in report["per_turn_by_pace"].values():
            row.update({mode: most[mode] for mode in ("gap", "air")})
        return report

    def rates(self, token: Token) -> dict[str, Any]:
        """Metres per turn (the whole turn's running) by mode; climbs by difficulty; air: the
        airspeed's level flight (0 when the token cannot fly)."""
        running = effective_points(token, "running")
        return {
            "run": self.rate(token, "walk"),
            "crawl": self.rate(token, "crawl"),
            "swim": self.rate(token, "swim"),
            "ladder": self.rate(token, "ladder"),
            "climb_0": climb_spaces(running, 0) * SPACE_M,
            "climb_5": climb_spaces(running, 5) * SPACE_M,
            "air": self.air_spaces(token) * SPACE_M,
        }

    def extra_stats(self, token: Token) -> dict[str, Any]:
        stats = token.stats
        resolver = self.config["resolver"]
        running = effective_points(token, "running")
        enc = token_encumbrance(token)
        cc = carrying_capacity(int(stats["strength"]))
        climbing = int(stats.get("climbing", 0))
        climb_table = []
        for d, surface in CLIMB_SURFACES.items():
            spaces = climb_spaces(running, d)
            row: dict[str, Any] = {"difficulty": d, "surface": surface}
            if d >= TACTICAL_CLIMB_LIMIT:
                row["movement"] = "not tactical"
            else:
                row["spaces_per_turn"] = spaces
                row["m_per_turn"] = spaces * SPACE_M
                row["p_success"] = SpeedpointsCheck(climbing, d, resolver).p_success()
            climb_table.append(row)
        swimming = int(stats["swimming"])
        fall_p = SpeedpointsCheck(fall_ability(token), FALL_DIFFICULTY, resolver).p_success()
        return {
            "points": {
                "running": running,
                "swimming": effective_points(token, "swimming"),
                "airspeed": effective_points(token, "airspeed"),
            },
            "speeds": {
                name: convert(effective_points(token, name))
                for name in ("running", "swimming", "airspeed")
            },
            "jump": {
                "run_up": {
                    "length_m": jump_length(token, True),
                    "height_m": jump_height(token, True),
                },
                "standing": {
                    "length_m": jump_length(token, False),
                    "height_m": jump_height(token, False),
                },
                "check_within_m": JUMP_MARGIN_M,
                "p_barely": SpeedpointsCheck(
                    int(stats.get("acrobatics", 0)), int(self.config["jump_difficulty"]), resolver
                ).p_success(),
            },
            "climbing": climb_table,
            "carrying": {
                "strength": int(stats["strength"]),
                "capacity_kg": cc,
                "max_kg": 2 * cc,
                "load_kg": Fraction(stats.get("load", 0)),
                "encumbrance": enc,
                "strenuous_actions": enc == "none",
                "can_fly": enc == "none" and int(stats["airspeed"]) > 0,
            },
            "falls": {
                "safe_up_to_m": FALL_SAFE_M,
                "dangerous_over_m": FALL_SAFE_M,
                "lethal_over_m": FALL_LETHAL_M,
                "ability": fall_ability(token),
                "p_success_not_from_a_climb": fall_p,
                "hurt": {"damage": stats.get("toughness"), "stun": stats.get("toughness")},
                "grievous": {"damage": stats.get("stamina")},
            },
            **self.seed_reach_stats(token),
            "swimming_combat": {
                "striking_bonus": swimming,
                "grappling_bonus": swimming,
                "defence_bonus": swimming,
                "striking_stun": Fraction(1, 2),
                "striking_damage": Fraction(1),
            },
        }

    def seed_reach_stats(self, token: Token) -> dict[str, Any]:
        """``stats`` figures of issue 17: vertical jumps onto higher cells, the climber's one
        quick action a turn, and each fall band's exact odds by surface."""
        resolver = self.config["resolver"]
        acrobatics = SpeedpointsCheck(
            int(token.stats.get("acrobatics", 0)), int(self.config["jump_difficulty"]), resolver
        )
        vertical: dict[str, Any] = {}
        for how, run_up in (("run_up", True), ("standing", False)):
            highest = jump_height(token, run_up)
            vertical[how] = {
                "highest_m": highest,
                "sure_up_to_m": max(Fraction(0), highest - JUMP_MARGIN_M),
                "roll_above_m": max(Fraction(0), highest - JUMP_MARGIN_M),
                "p_roll": acrobatics.p_success(),
            }
        ability = fall_ability(token)
        falls: dict[str, Any] = {}
        for label, height in (
            ("up_to_3_m", FALL_SAFE_M),
            ("3_to_6_m", FALL_LETHAL_M),
            ("over_6_m", FALL_LETHAL_M + 1),
        ):
            falls[label] = {
                surface: {
                    "band": (
                        f := FallCheck(
                            height,
                            ability,
                            surface,
                            FALL_DIFFICULTY,
                            resolver,
                            self.config["landing"],
                        )
                    ).band,
                    "outcomes": f.outcomes(),
                }
                for surface in SURFACES
            }
        return {
            "vertical_jump": vertical,
            "climbing_actions": {
                "quick_actions_per_turn": CLIMB_QUICK_ACTIONS,
                "moves": True,
            },
            "fall_odds": {"ability": ability, "difficulty": FALL_DIFFICULTY, "by_height": falls},
        }


SYSTEM = Speedpoints
