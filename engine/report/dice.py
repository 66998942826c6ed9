"""The ``odds`` and ``roll`` reports: a check's exact chances, and one seeded roll of it.

The check comes from its rule system (:func:`engine.systems.load_check`); the dice from
:mod:`engine.dice`. Both load only when a report is asked for.
"""

from __future__ import annotations

from collections.abc import Mapping
from fractions import Fraction
from typing import Any


def _frac(p: Fraction) -> str:
    return f"{p.numerator}/{p.denominator}"


def odds_report(system: str, text: str) -> dict[str, Any]:
    """The ``odds`` command's JSON: exact chances of every degree of the check.

    ``{"system", "check", "p_success": float, "outcomes": {name: float}, "exact": {name:
    "num/den"}, "p_success_exact": "num/den"}``; ``check`` is the check in canonical form.
    """
    from engine.systems import load_check

    check = load_check(system, text)
    outcomes = check.outcomes()
    p = check.p_success()
    return {
        "system": system.strip().lower(),
        "check": str(check),
        "p_success": float(p),
        "outcomes": {name: float(q) for name, q in outcomes.items()},
        "exact": {name: _frac(q) for name, q in outcomes.items()},
        "p_success_exact": _frac(p),
    }


def roll_report(system: str, text: str, seed: int) -> dict[str, Any]:
    """The ``roll`` command's JSON: one check rolled with a fresh ``Dice(seed)``.

    ``{"system", "check", "seed", "degree", "success", "total", "margin", "notes",
    "events": [...]}``; ``events`` is the dice log.
    """
    from engine.systems import load_check

    check = load_check(system, text)
    from engine.dice import Dice

    dice = Dice(seed)
    result = check.roll(dice)
    return {
        "system": system.strip().lower(),
        "check": str(check),
        "seed": seed,
        "degree": result.degree,
        "success": result.success,
        "total": result.total,
        "margin": result.margin,
        "notes": list(result.notes),
        "events": [e.to_dict() for e in dice.events()],
    }


def _percent(p: float) -> str:
    if 0 < p < 0.00005:
        return "<0.01%"
    return f"{100 * p:.2f}%"


def format_odds(report: Mapping[str, Any]) -> str:
    """Plain text for an :func:`odds_report`: one aligned row per degree, then p(success).

    ``whisperspace: athletics=2 dc=6 bonus=1 penalty=0`` followed by rows like
    ``  success          46.53%   67/144``.
    """
    rows = [(name, _percent(p), report["exact"][name]) for name, p in report["outcomes"].items()]
    exact_p = report.get("p_success_exact", "")
    rows.append(("p_success", _percent(report["p_success"]), exact_p))
    w_name = max(len(r[0]) for r in rows)
    w_pct = max(len(r[1]) for r in rows)
    lines = [f"{report['system']}: {report['check']}"]
    lines += [f"  {n:<{w_name}}  {p:>{w_pct}}  {e}".rstrip() for n, p, e in rows]
    return "\n".join(lines)


def format_roll(report: Mapping[str, Any]) -> str:
    """Plain text for a :func:`roll_report`: the check, each roll, then the result."""
    lines = [f"{report['system']}: {report['check']}  (seed {report['seed']})"]
    for event in report["events"]:
        faces = ", ".join(str(f) for f in event.get("faces", []))
        extra = f"  [{event['note']}]" if event.get("note") else ""
        lines.append(f"  roll {event['expression']}: [{faces}] -> {event['total']}{extra}")
    notes = f", {', '.join(report['notes'])}" if report.get("notes") else ""
    lines.append(
        f"  {report['degree']} (total {report['total']}, margin {report['margin']:+d}{notes})"
    )
    return "\n".join(lines)
