"""The ``systems`` and ``stats`` reports: the rule systems, and a token's movement figures."""

from __future__ import annotations

import json
from fractions import Fraction
from typing import Any

from engine.errors import ArgumentError
from engine.exact import jsonable


def systems_report() -> dict[str, Any]:
    """The ``systems`` JSON: every rule system's description (stats, settings, paces), and
    ``flight``: ``momentum`` where its fliers fly with momentum in scenarios (RULES.md 6,
    RuleSystem.flies_with_momentum), ``ground`` where they cross air and gaps on the ground graph."""
    from engine import systems

    out = []
    for n in systems.names():
        cls = systems.get(n)
        d = cls.describe()
        d["flight"] = "momentum" if cls.flies_with_momentum() else "ground"
        out.append(d)
    return {"systems": out}


def format_systems(report: dict[str, Any]) -> str:
    """The ``systems`` text: per system its unit, turn and paces, then stats and settings."""
    lines: list[str] = []
    for d in report["systems"]:
        lines.append(f"{d['name']}: {d['title']} ({d['source']})")
        lines.append(
            f"  unit {d['unit']}, cell {d['cell_size']} {d['unit']}, {d['turn']['name']} of "
            f"{d['turn']['seconds']} s, {d['turn']['actions']} action(s); paces: "
            f"{', '.join(d['paces'])} (default {d['default_pace']})"
        )
        if "flight" in d:
            lines.append(
                "  flight: momentum: scenarios fly its fliers by its flight rules (docs/flight.md)"
                if d["flight"] == "momentum"
                else "  flight: fliers cross air and gaps on the ground graph (no momentum)"
            )
        if d.get("acts"):
            lines.append("  acts (path/reach --act NAME, a scenario token's acts):")
            for act in d["acts"]:
                lines.append(f"    {act['name']:<14} {act['actions']} action  {act['help']}")
        lines.append("  stats:")
        for st in d["stats"]:
            extra = f" [{' | '.join(st['choices'])}]" if "choices" in st else ""
            lines.append(
                f"    {st['name']:<14} {st['type']:<7} default {st['default']!s:<8}{extra} {st.get('help', '')}"
            )
        if d["settings"]:
            lines.append("  settings (--set key=value):")
            for st in d["settings"]:
                extra = f" [{' | '.join(st['choices'])}]" if "choices" in st else ""
                lines.append(
                    f"    {st['name']:<22} default {st['default']!s:<10}{extra} {st.get('help', '')}"
                )
    return "\n".join(lines)


def stats_report(
    system: Any, token: Any, distance: Fraction | None = None, *, terrain: str | None = None
) -> dict[str, Any]:
    """The ``stats`` JSON; with ``distance`` (metres) also the system's long-distance plan
    (``--distance``; systems without long-distance rules refuse it), over ground of
    ``terrain`` difficulty when given (``--terrain``: its checks on the same schedule)."""
    rep: dict[str, Any] = system.stats_report(token)
    if terrain is not None and distance is None:
        raise ArgumentError(
            f"--terrain {terrain}: give --distance METRES too (terrain checks belong to a "
            "long-distance plan)"
        )
    if distance is not None:
        plan = getattr(system, "long_distance_figure", None)
        if plan is None:
            raise ArgumentError(f"--distance: {system.name} has no long-distance rules")
        if terrain is None:
            rep["long_distance"] = jsonable(plan(token, distance))
        else:
            rep["long_distance"] = jsonable(plan(token, distance, terrain=terrain))
    return rep


#: Keys the ``stats`` text shows in its own lines (or not at all); the rest follow below.
_SHOWN = {
    "system",
    "unit",
    "cell_size",
    "turn",
    "stats",
    "rates",
    "per_turn",
    "per_turn_pace",
    "per_turn_by_pace",
    "encumbrance",
    "state",
    "settings",
}
#: An extra whose JSON is longer than this is shown as indented lines, long lists cut.
_ONE_LINE = 150
_LIST_SHOWN = 4


def format_stats(rep: dict[str, Any]) -> str:
    """The ``stats`` text: stats, rates, cells per turn by mode and pace, then the
    system's extras (long ones as indented lines, long lists cut: ``--json`` has all)."""
    lines = [f"{rep['system']}: {', '.join(f'{k}={v}' for k, v in rep['stats'].items())}"]
    lines.append(
        f"  rates ({rep['unit']}): " + ", ".join(f"{k} {v}" for k, v in rep["rates"].items())
    )
    turn = rep["turn"]["name"]
    by_pace: dict[str, dict[str, Any]] = rep.get("per_turn_by_pace") or {}
    paces = list(by_pace) or [rep.get("per_turn_pace", "")]
    lines.append(
        f"  cells per {turn} moving the whole {turn} ({rep['cell_size']} {rep['unit']} cells), "
        f"by pace (per_turn is at {rep.get('per_turn_pace', paces[-1])}):"
    )
    lines.append("    " + " " * 9 + "".join(f"{p:>10}" for p in paces))
    for mode, n in rep["per_turn"].items():
        if mode == "blocked":
            continue
        row = [by_pace[p].get(mode, "") for p in paces] if by_pace else [n]
        lines.append(f"    {mode:<9}" + "".join(f"{v!s:>10}" for v in row))
    lines.append(f"  encumbrance {rep['encumbrance']}")
    for key, value in rep.items():
        if key not in _SHOWN:
            lines.extend(_lines(key, value, "  "))
    return "\n".join(lines)


def _short(value: Any) -> str:
    """One value for the text: an exact fraction too long to read as its decimal."""
    if isinstance(value, str) and len(value) > 40 and value.count("/") == 1:
        num, den = value.split("/")
        if num.lstrip("-").isdigit() and den.isdigit():
            digits = len(den)
            approx = float(Fraction(value))
            shown = f"{approx:.3g}" if approx else f"below 1e-{digits - len(num)}"
            return f"{shown} (exact: {digits} digits; --json)"
    text = json.dumps(value)
    return text if len(text) <= 60 or not isinstance(value, str) else text[:57] + '..."'


def _lines(key: str, value: Any, indent: str) -> list[str]:
    """``key: value`` as text lines: short values on one line, long dicts and lists
    indented, lists beyond :data:`_LIST_SHOWN` entries cut with a count."""
    text = json.dumps(value)
    if len(text) <= _ONE_LINE or not isinstance(value, dict | list):
        return [f"{indent}{key}: {text if len(text) <= _ONE_LINE else _short(value)}"]
    out = [f"{indent}{key}:"]
    inner = indent + "  "
    if isinstance(value, dict):
        for k, v in value.items():
            out.extend(_lines(str(k), v, inner))
        return out
    for i, item in enumerate(value[:_LIST_SHOWN]):
        out.extend(_lines(f"[{i}]", item, inner))
    if len(value) > _LIST_SHOWN:
        out.append(f"{inner}... {len(value) - _LIST_SHOWN} more (--json lists them all)")
    return out
