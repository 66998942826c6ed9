"""Scenario keys of a study: edits tied across a side's tokens (``side.SIDE.stats.STAT``)
and the per-run measures a scenario names (``measures:``), checked in one line each."""

from __future__ import annotations

from typing import Any

from engine.errors import ScenarioError, did_you_mean
from engine.sources import clip

#: The per-run measures a scenario's ``measures:`` may name (engine.batch.measures defines
#: each from the run's event log and final state; docs/batches.md#per-run-measures).
MEASURES = ("distance_at_end", "checks_failed", "turns_in_water")
#: A token's keys a ``TOKEN.KEY`` or ``side.SIDE.KEY`` override may change (``.stats.STAT``
#: for a stat).
EDITABLE_TOKEN = ("pace", "policy")


def _err(path: str, where: str, problem: str, fix: str = "") -> ScenarioError:
    return ScenarioError(f"{path}: {where}: {problem}" + (f"; {fix}" if fix else ""))


def tied_shape(parts: list[str]) -> bool:
    """``side.SIDE.stats.STAT`` or ``side.SIDE.KEY`` (KEY in :data:`EDITABLE_TOKEN`), split
    on dots: a tied edit of every token whose side is SIDE (:func:`token_side`)."""
    return (len(parts) == 4 and parts[2] == "stats") or (
        len(parts) == 3 and parts[2] in EDITABLE_TOKEN
    )


def token_side(token: dict[str, Any]) -> str:
    """A token document's side as its TokenSpec will have it: ``side:``, else its policy."""
    return str(token.get("side", token.get("policy", "idle")))


def side_tokens(path: str, key: str, data: dict[str, Any], side: str) -> list[dict[str, Any]]:
    """The token documents of ``side`` (a tied edit's tokens); none is one line naming
    ``key`` and the scenario's sides."""
    tokens = [t for t in data.get("tokens") or [] if isinstance(t, dict)]
    found = [t for t in tokens if token_side(t) == side]
    if not found:
        sides = sorted({token_side(t) for t in tokens})
        raise _err(
            path,
            clip(key),
            f"no token's side is '{clip(side)}'" + did_you_mean(side[:80], sides),
            f"sides: {', '.join(sides)}",
        )
    return found


def check_tied_stats(path: str, keys: list[str], system: Any) -> None:
    """A tied ``side.SIDE.stats.STAT`` names a stat of the system (one line naming the key,
    not the first token it reached)."""
    names = system.stat_names()
    for key in keys:
        parts = key.split(".")
        if len(parts) == 4 and parts[2] == "stats" and parts[3] not in names:
            raise _err(
                path,
                clip(key),
                f"no token has the stat '{clip(parts[3])}': {system.name} has no such stat"
                + did_you_mean(parts[3][:80], names),
                f"stats: {', '.join(names)}",
            )


def read_measures(path: str, data: dict[str, Any]) -> tuple[str, ...]:
    """``measures``: names of :data:`MEASURES`, each once."""
    raw = data.get("measures")
    if raw is None:
        return ()
    if not isinstance(raw, list):
        raise _err(path, "measures", "expected a list of names", f"measures: {', '.join(MEASURES)}")
    seen: list[str] = []
    for i, name in enumerate(raw):
        if not isinstance(name, str) or name not in MEASURES:
            raise _err(
                path,
                f"measures[{i}]",
                f"'{clip(str(name))}' is not a measure" + did_you_mean(str(name)[:80], MEASURES),
                f"measures: {', '.join(MEASURES)}",
            )
        if name in seen:
            raise _err(path, f"measures[{i}]", f"'{name}' is listed twice", "list each once")
        seen.append(name)
    return tuple(seen)


def edit_token(token: dict[str, Any], parts: list[str], value: Any) -> None:
    """``stats.STAT`` or ``KEY`` of one token's document set to ``value``."""
    if parts[0] == "stats":
        stats = token.get("stats")
        token["stats"] = {**(stats if isinstance(stats, dict) else {}), parts[1]: value}
    else:
        token[parts[0]] = value
