"""Exact values: the small helpers that read numbers as fractions and write them as JSON.

They sit at the bottom of the engine (only ``engine.errors`` is lower) because every layer
needs them: the rule systems read stats with :func:`exact`, flight records and search
reports write fractions with :func:`jsonable`. ``engine.systems.base`` re-exports both.
"""

from __future__ import annotations

from collections.abc import Mapping
from fractions import Fraction
from typing import Any


def exact(value: Any) -> Fraction:
    """An exact fraction from an int, a Fraction, or text like ``7.5`` or ``15/2``."""
    if isinstance(value, bool):
        raise ValueError("not a number")
    if isinstance(value, Fraction | int):
        return Fraction(value)
    if isinstance(value, float):
        # Floats from YAML/JSON are decimal literals: read them as the decimal they show.
        return Fraction(repr(value))
    return Fraction(str(value).strip())


def jsonable(value: Any) -> Any:
    """Exact numbers for JSON: whole fractions as ints, others as ``"a/b"`` strings."""
    if isinstance(value, Fraction):
        return int(value) if value.denominator == 1 else f"{value.numerator}/{value.denominator}"
    if isinstance(value, Mapping):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [jsonable(v) for v in value]
    return value
