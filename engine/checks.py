"""Checks, system-agnostic: results and the CHECK text syntax.

Each rule system defines its own check type and ``parse_check(text)`` in its module
(``engine/systems/<system>.py``); :func:`engine.systems.load_check` finds it by system
name, and :mod:`engine.report.dice` writes the ``odds``/``roll`` reports. (Both sit above
this module: checks know nothing of the systems.) A check is any object with::

    outcomes() -> dict[str, Fraction]   # exact, best degree first, sums to exactly 1
    p_success() -> Fraction
    roll(dice) -> CheckResult           # records its RollEvent(s), decided = the degree
    roll_many(dice, n) -> BatchResult   # the same results as n calls of roll(), in bulk
    str(check)                          # the check in canonical CHECK syntax

The degrees of a system are ordered best to worst and the successes come first, so a degree
is a success exactly when its index is below the system's count of success degrees.

CHECK text is whitespace- (or comma-) separated ``key=value`` fields and bare flags, e.g.
``athletics=2 dc=6 bonus=1``. Bad text raises :class:`~engine.errors.CheckError` with one
line that names the bad field and what was expected.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, Protocol

from engine.dice import Dice, RollEvent
from engine.errors import CheckError, did_you_mean
from engine.lazy import numpy as np

# ---------------------------------------------------------------------------------------------
# Results
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class CheckResult:
    """One rolled check: its degree, whether that is a success, total, margin and events.

    ``margin`` is the total minus the target (negative on a failure); ``notes`` holds flags
    such as ``complication`` that do not change the degree.
    """

    degree: str
    success: bool
    total: int
    margin: int
    events: tuple[RollEvent, ...]
    notes: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict of the result and its events."""
        return {
            "degree": self.degree,
            "success": self.success,
            "total": self.total,
            "margin": self.margin,
            "notes": list(self.notes),
            "events": [e.to_dict() for e in self.events],
        }


_new = object.__new__


def check_result(
    degree: str,
    success: bool,
    total: int,
    margin: int,
    events: tuple[RollEvent, ...],
    notes: tuple[str, ...] = (),
) -> CheckResult:
    """``CheckResult(...)``, made directly (the same result; its frozen dataclass's own
    __init__ costs more than the roll that a turn loop makes every round)."""
    result = _new(CheckResult)
    d = result.__dict__
    d["degree"] = degree
    d["success"] = success
    d["total"] = total
    d["margin"] = margin
    d["events"] = events
    d["notes"] = notes
    return result


@dataclass(frozen=True, eq=False)
class BatchResult:
    """Many rolls of one check, as arrays (no object per roll).

    ``index[i]`` is roll i's degree as a position in ``degrees``; the first ``n_success``
    degrees are the successes.
    """

    degrees: tuple[str, ...]
    n_success: int
    index: np.ndarray
    totals: np.ndarray
    margins: np.ndarray

    def __len__(self) -> int:
        return len(self.index)

    @property
    def success(self) -> np.ndarray:
        """Boolean array: did roll i succeed."""
        return self.index < self.n_success

    def degree(self, i: int) -> str:
        """The degree of roll ``i``."""
        return self.degrees[int(self.index[i])]

    def counts(self) -> dict[str, int]:
        """How many rolls fell in each degree (every degree listed, best first)."""
        tally = np.bincount(self.index.astype(np.int64), minlength=len(self.degrees))
        return {name: int(c) for name, c in zip(self.degrees, tally, strict=True)}


class Check(Protocol):
    """What every system's check type provides (see the module docstring)."""

    def outcomes(self) -> dict[str, Fraction]: ...

    def p_success(self) -> Fraction: ...

    def roll(self, dice: Dice) -> CheckResult: ...

    def roll_many(self, dice: Dice, n: int) -> BatchResult: ...


def finish_batch(
    dice: Dice,
    check: object,
    degrees: tuple[str, ...],
    n_success: int,
    index: np.ndarray,
    totals: np.ndarray,
    margins: np.ndarray,
) -> BatchResult:
    """Build a :class:`BatchResult` and record one :class:`~engine.dice.BatchEvent` for it."""
    result = BatchResult(degrees, n_success, index.astype(np.int8), totals, margins)
    dice.record_batch(str(check), len(result), result.counts())
    return result


# ---------------------------------------------------------------------------------------------
# CHECK text
# ---------------------------------------------------------------------------------------------

_INT_RE = re.compile(r"[+-]?[0-9]+")
_TRUE = ("1", "yes", "on", "true")
_FALSE = ("0", "no", "off", "false")


def parse_fields(
    text: str,
    *,
    keys: Mapping[str, str],
    flags: Mapping[str, tuple[str, str]] | None = None,
    example: str,
) -> dict[str, tuple[str, str]]:
    """Split CHECK text into ``{field: (token, value)}``.

    ``keys`` maps every accepted key (aliases included) to its field name; ``flags`` maps a
    bare word to the ``(field, value)`` it sets. ``token`` is the text as written, for error
    messages; ``example`` is a whole valid check of the system, shown when the text is empty.

    >>> parse_fields("mod=2 dc=6", keys={"mod": "mod", "dc": "dc"}, example="mod=2 dc=6")
    {'mod': ('mod=2', '2'), 'dc': ('dc=6', '6')}
    """
    flags = flags or {}
    tokens = [t for t in re.split(r"[\s,]+", text.strip()) if t]
    if not tokens:
        raise CheckError(
            f"check '{text.strip()}': empty, expected key=value fields, e.g. {example}"
        )
    fields: dict[str, tuple[str, str]] = {}
    for token in tokens:
        if "=" in token:
            key, value = token.split("=", 1)
            key = key.strip().lower()
            if key not in keys:
                choices = sorted(set(keys) | set(flags))
                raise CheckError(
                    f"check '{token}': unknown key '{key}'{did_you_mean(key, choices)}; "
                    f"keys: {', '.join(choices)}"
                )
            name = keys[key]
        elif token.lower() in flags:
            name, value = flags[token.lower()]
        else:
            raise CheckError(
                f"check '{token}': expected key=value{_flag_hint(flags)}, e.g. {example}"
            )
        if name in fields:
            raise CheckError(f"check '{token}': {name} given twice (also as '{fields[name][0]}')")
        fields[name] = (token, value.strip())
    return fields


def _flag_hint(flags: Mapping[str, tuple[str, str]]) -> str:
    return f" or a flag ({', '.join(sorted(flags))})" if flags else ""


def _key_of(token: str) -> str:
    return token.split("=", 1)[0].strip().lower()


def field_int(
    fields: Mapping[str, tuple[str, str]],
    name: str,
    *,
    example: int,
    default: int | None = None,
    minimum: int | None = None,
    maximum: int | None = None,
    text: str = "",
) -> int:
    """Read an integer field; ``default`` None makes it required.

    Messages name the key as the user wrote it and show ``example`` as its value:
    ``check 'dc=x': dc must be an integer, e.g. dc=6``; ``check 'athletics=2': dc is missing,
    e.g. dc=6`` (``text`` is the whole check, quoted in that case).
    """
    if name not in fields:
        if default is None:
            whole = " ".join(text.split())
            raise CheckError(f"check '{whole}': {name} is missing, e.g. {name}={example}")
        return default
    token, value = fields[name]
    key = _key_of(token)
    if not _INT_RE.fullmatch(value):
        raise CheckError(f"check '{token}': {key} must be an integer, e.g. {key}={example}")
    number = int(value)
    if minimum is not None and number < minimum:
        raise CheckError(f"check '{token}': {key} must be >= {minimum}, e.g. {key}={example}")
    if maximum is not None and number > maximum:
        raise CheckError(f"check '{token}': {key} must be <= {maximum}, e.g. {key}={example}")
    return number


def field_bool(fields: Mapping[str, tuple[str, str]], name: str, *, default: bool) -> bool:
    """Read a yes/no field (``1 yes on true`` / ``0 no off false``)."""
    if name not in fields:
        return default
    token, value = fields[name]
    if value.lower() in _TRUE:
        return True
    if value.lower() in _FALSE:
        return False
    key = _key_of(token)
    raise CheckError(f"check '{token}': {key} must be yes or no, e.g. {key}=no")


def field_choice(
    fields: Mapping[str, tuple[str, str]],
    name: str,
    choices: tuple[str, ...],
    *,
    default: str,
) -> str:
    """Read a field that must be one of ``choices``."""
    if name not in fields:
        return default
    token, value = fields[name]
    value = value.lower()
    if value not in choices:
        raise CheckError(
            f"check '{token}': {_key_of(token)} must be one of {', '.join(choices)}"
            f"{did_you_mean(value, choices)}"
        )
    return value
