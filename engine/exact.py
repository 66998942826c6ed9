"""Exact values: the small helpers that read numbers as fractions and write them as JSON.

They sit at the bottom of the engine (only ``engine.errors`` is lower) because every layer
needs them: the rule systems read stats with :func:`exact`, flight records and search
reports write fractions with :func:`jsonable`. ``engine.systems.base`` re-exports both.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from fractions import Fraction
from typing import Any

#: Longest number text read (digits, point, sign, exponent and a ``/``).
MAX_NUMBER_CHARS = 100
#: Largest decimal exponent read (``1e100``); Fraction would compute 10**N for any N.
MAX_EXPONENT = 100
_EXPONENT = re.compile(r"[eE]\s*([-+]?[\d_]+)\s*$")


def exact(value: Any) -> Fraction:
    """An exact fraction from an int, a Fraction, or text like ``7.5`` or ``15/2``.

    Text is read within bounds (at most :data:`MAX_NUMBER_CHARS` characters, exponents up
    to :data:`MAX_EXPONENT`), so that no input makes it compute a number without end;
    beyond them, and for anything that is not a number, it raises ValueError.
    """
    if isinstance(value, bool):
        raise ValueError("not a number")
    if isinstance(value, Fraction | int):
        return Fraction(value)
    if isinstance(value, float):
        # Floats from YAML/JSON are decimal literals: read them as the decimal they show
        # (finite floats stop at 1.8e308, a bound of their own).
        return Fraction(repr(value))
    text = str(value).strip()
    if len(text) > MAX_NUMBER_CHARS:
        raise ValueError(f"a number of more than {MAX_NUMBER_CHARS} characters")
    match = _EXPONENT.search(text)
    if match is not None:
        try:
            exponent = int(match.group(1))
        except ValueError:
            raise ValueError("not a number") from None
        if abs(exponent) > MAX_EXPONENT:
            raise ValueError(f"an exponent beyond +-{MAX_EXPONENT}")
    try:
        return Fraction(text)
    except ZeroDivisionError:  # "1/0": not a number either
        raise ValueError("a fraction over zero") from None


def jsonable(value: Any) -> Any:
    """Exact numbers for JSON: whole fractions as ints, others as ``"a/b"`` strings."""
    if isinstance(value, Fraction):
        return int(value) if value.denominator == 1 else f"{value.numerator}/{value.denominator}"
    if isinstance(value, Mapping):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [jsonable(v) for v in value]
    return value
