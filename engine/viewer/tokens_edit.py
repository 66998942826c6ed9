"""The token form of the GM's table: a new token, or a token's stats and conditions.

Every stat of the system (``tacgrid systems``: its :class:`~engine.systems.base.Param`
list) is a field, filled with the token's value (or the side's, for a new token: the
palette), validated by the system exactly as ``--token`` is on the command line; a bad
value keeps the form open with the system's one-line error in the panel.

Keys while the form is open: Up/Down (or Tab) pick a field, typing edits it, Backspace
deletes, Left/Right on ``side`` step through the scenario's sides (a new token takes
that side's stats), Enter applies, Esc cancels.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from engine.exact import jsonable
from engine.grid import Cell
from engine.scenario import TokenSpec

_ID = re.compile(r"^[A-Za-z0-9_.-]{1,32}$")
_CONDITION = re.compile(r"^[A-Za-z0-9_-]{1,32}$")


@dataclass
class FormField:
    name: str
    value: str
    help: str = ""


@dataclass
class TokenForm:
    """An open form: ``add`` (a new token at ``cell``) or ``edit`` (token ``tid``)."""

    mode: str
    fields: list[FormField]
    sides: list[str]
    tid: str | None = None
    cell: Cell | None = None
    index: int = 0
    error: str = ""
    palette: dict[str, dict[str, Any]] = field(default_factory=dict)

    def value(self, name: str) -> str:
        return next(f.value for f in self.fields if f.name == name)

    def put(self, name: str, value: str) -> None:
        for f in self.fields:
            if f.name == name:
                f.value = value

    # ----------------------------------------------------------------- keys

    def type_text(self, text: str) -> None:
        f = self.fields[self.index]
        if f.name == "side":
            return  # a choice: Left/Right
        if text.isprintable() and len(f.value) < 64:
            f.value += text
            self.error = ""

    def backspace(self) -> None:
        f = self.fields[self.index]
        if f.name != "side":
            f.value = f.value[:-1]

    def move(self, delta: int) -> None:
        self.index = (self.index + delta) % len(self.fields)

    def cycle_side(self, delta: int) -> None:
        if self.fields[self.index].name != "side" or not self.sides:
            return
        side = self.value("side")
        i = self.sides.index(side) if side in self.sides else 0
        side = self.sides[(i + delta) % len(self.sides)]
        self.put("side", side)
        if self.mode == "add" and side in self.palette:  # the palette: that side's stats
            for k, v in self.palette[side].items():
                self.put(k, str(v))

    # ----------------------------------------------------------------- reading

    def stats(self, system: Any) -> dict[str, str]:
        """The stats typed (blank fields left to the system's defaults)."""
        names = {s.name for s in system.stats}
        return {f.name: f.value.strip() for f in self.fields if f.name in names and f.value.strip()}

    def conditions(self) -> frozenset[str]:
        """The conditions typed (comma-separated words); a bad one raises ValueError."""
        out = set()
        for part in self.value("conditions").split(","):
            word = part.strip()
            if not word:
                continue
            if not _CONDITION.match(word):
                raise ValueError(
                    f"condition '{word[:40]}': use letters, digits, - or _ (e.g. prone)"
                )
            out.add(word)
        return frozenset(out)

    def new_id(self, taken: set[str]) -> str:
        tid = self.value("id").strip()
        if not _ID.match(tid):
            raise ValueError("id: 1-32 letters, digits, '.', '-' or '_' (e.g. goblin2)")
        if tid in taken:
            raise ValueError(f"id '{tid}' is taken; give another")
        return tid


def _sides(viewer: Any) -> list[str]:
    seen = [spec.side for spec in viewer.sim.specs.values()]
    seen += [spec.side for spec in viewer.scenario.tokens]
    out: list[str] = []
    for side in [*seen, "gm", "pursuer", "quarry"]:
        if side not in out:
            out.append(side)
    return out


def _palette(viewer: Any) -> dict[str, dict[str, Any]]:
    """Each side's stats, from the first token of that side (present or in the scenario)."""
    out: dict[str, dict[str, Any]] = {}
    for spec in [*viewer.sim.specs.values(), *viewer.scenario.tokens]:
        if spec.side not in out:
            tok = viewer.sim.tokens.get(spec.id)
            stats = dict(tok.stats) if tok is not None else dict(spec.stats)
            out[spec.side] = {k: jsonable(v) for k, v in stats.items()}
    return out


def _stat_fields(system: Any, stats: dict[str, Any]) -> list[FormField]:
    out = []
    for p in system.stats:
        v = stats.get(p.name)
        out.append(FormField(p.name, "" if v is None else str(jsonable(v)), p.allowed()))
    return out


def add_form(viewer: Any, cell: Cell) -> TokenForm:
    """A new token at ``cell``: the selected token's side and stats to start from."""
    sides = _sides(viewer)
    palette = _palette(viewer)
    side = (
        viewer.sim.specs[viewer.selected].side if viewer.selected in viewer.sim.specs else sides[0]
    )
    n = len(viewer.sim.specs) + 1
    while f"token{n}" in viewer.sim.specs:
        n += 1
    fields = [
        FormField("id", f"token{n}", "a name, e.g. goblin2"),
        FormField("side", side, "Left/Right: " + " | ".join(sides)),
        *_stat_fields(viewer.sim.system, palette.get(side, {})),
        FormField("conditions", "", "comma-separated, e.g. prone"),
    ]
    return TokenForm("add", fields, sides, cell=cell, palette=palette)


def edit_form(viewer: Any, tid: str) -> TokenForm:
    tok = viewer.sim.tokens[tid]
    spec = viewer.sim.specs[tid]
    sides = _sides(viewer)
    fields = [
        FormField("side", spec.side, "Left/Right: " + " | ".join(sides)),
        *_stat_fields(viewer.sim.system, dict(tok.stats)),
        FormField("conditions", ",".join(sorted(tok.state.conditions)), "comma-separated"),
    ]
    return TokenForm("edit", fields, sides, tid=tid)


def apply_form(viewer: Any, form: TokenForm) -> bool:
    """Apply the form as one event (undoable); False with ``form.error`` set when a value
    is refused (nothing changes)."""
    from engine.errors import TacgridError

    sim = viewer.sim
    try:
        conditions = form.conditions()
        stats = form.stats(sim.system)
        sim.system.token(stats)  # the command line's validation, before anything changes
        if form.mode == "add":
            assert form.cell is not None
            tid = form.new_id(set(sim.specs))
            if viewer.token_at(form.cell) is not None:
                raise ValueError(f"cell {form.cell[0]},{form.cell[1]} is taken")
            spec = TokenSpec(
                id=tid,
                side=form.value("side"),
                stats=stats,
                cell=form.cell,
                policy="human",
                conditions=tuple(sorted(conditions)),
            )
            viewer.table.record(lambda: sim.add_token(spec))
            viewer.select(tid)
            viewer.message = f"added {tid}"
        else:
            assert form.tid is not None
            tid = form.tid
            viewer.table.record(
                lambda: sim.edit_token(
                    tid, stats=stats, conditions=conditions, side=form.value("side")
                )
            )
            viewer.message = f"edited {tid}"
    except (TacgridError, ValueError) as exc:
        form.error = str(exc)
        return False
    return True
