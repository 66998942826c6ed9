"""The token form of the GM's table: a new token, or a token's id, side, size, pace, stats
and conditions.

Every stat of the system (``tacgrid systems``: its :class:`~engine.systems.base.Param`
list) is a field, filled with the token's value (or the side's, for a new token: the
palette), validated by the system as a scenario's token is; a bad value keeps the form
open with one line in the panel that names the field (``field speed='x': expected ...``).

Keys while the form is open: Up/Down (or Tab) pick a field, typing edits it, Backspace
deletes, Left/Right on ``side`` step through the scenario's sides (a new token takes
that side's stats; any other name can be typed) and on ``pace`` through the system's
paces, Enter applies, Esc cancels. The mouse: a click on a field picks it (on ``side``
and ``pace`` a click on the left half steps back, on the right half forward), a click on
``[apply]`` or ``[cancel]`` does that.

Editing a token's id or size puts it back under its new spec at its cell (events
``token_remove``, ``token_add``, ``order``: one undo step), its stats, conditions, acts,
pace and place in the turn order kept; the rest is one ``token_edit``, with the loop's
``token_pace`` where the pace changes.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

from engine.errors import TacgridError
from engine.exact import jsonable
from engine.grid import Cell
from engine.scenario import TokenSpec

_ID = re.compile(r"^[A-Za-z0-9_.-]{1,32}$")
_CONDITION = re.compile(r"^[A-Za-z0-9_-]{1,32}$")
_SIDE = re.compile(r"^[A-Za-z0-9_-]{1,24}$")
#: The largest token size the form takes (cells across).
MAX_SIZE = 9
#: The fields whose value is a choice stepped with Left/Right (side can also be typed).
CHOICES = ("side", "pace")


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
    #: The pace field's choices: "" (the system's default) then the system's paces.
    paces: list[str] = field(default_factory=lambda: [""])

    def value(self, name: str) -> str:
        return next(f.value for f in self.fields if f.name == name)

    def put(self, name: str, value: str) -> None:
        for f in self.fields:
            if f.name == name:
                f.value = value

    # ----------------------------------------------------------------- keys

    def type_text(self, text: str) -> None:
        f = self.fields[self.index]
        if f.name == "pace":
            return  # a choice: Left/Right (or a click)
        if text.isprintable() and len(f.value) < 64:
            f.value += text
            self.error = ""

    def backspace(self) -> None:
        f = self.fields[self.index]
        if f.name != "pace":
            f.value = f.value[:-1]

    def move(self, delta: int) -> None:
        self.index = (self.index + delta) % len(self.fields)

    def pick(self, name: str) -> None:
        """Make the field ``name`` the current one (a click on it)."""
        self.index = next(i for i, f in enumerate(self.fields) if f.name == name)

    def cycle_side(self, delta: int) -> None:
        """Left/Right on a choice: the next side (a new token takes its stats) or pace."""
        name = self.fields[self.index].name
        if name == "pace":
            value = self.value("pace")
            i = self.paces.index(value) if value in self.paces else 0
            self.put("pace", self.paces[(i + delta) % len(self.paces)])
            return
        if name != "side" or not self.sides:
            return
        side = self.value("side")
        i = self.sides.index(side) if side in self.sides else (-1 if delta > 0 else 0)
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

    def side(self) -> str:
        side = self.value("side").strip()
        if not _SIDE.match(side):
            raise ValueError("side: 1-24 letters, digits, '-' or '_' (e.g. goblins)")
        return side

    def size(self) -> int:
        text = self.value("size").strip() or "1"
        if not text.isdigit() or not 1 <= int(text) <= MAX_SIZE:
            raise ValueError(f"size '{text[:8]}': a whole number of cells across, 1 to {MAX_SIZE}")
        return int(text)

    def pace(self) -> str | None:
        """The pace chosen (None: the system's default)."""
        return self.value("pace") or None


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
    paces = _paces(viewer)
    fields = [
        FormField("id", f"token{n}", "a name, e.g. goblin2"),
        *_shape_fields(sides, paces, side, 1, ""),
        *_stat_fields(viewer.sim.system, palette.get(side, {})),
        FormField("conditions", "", "comma-separated, e.g. prone"),
    ]
    return TokenForm("add", fields, sides, cell=cell, palette=palette, paces=paces)


def _paces(viewer: Any) -> list[str]:
    return ["", *viewer.sim.system.paces]


def _shape_fields(
    sides: list[str], paces: list[str], side: str, size: int, pace: str
) -> list[FormField]:
    return [
        FormField("side", side, "Left/Right or type: " + " | ".join(sides)),
        FormField("size", str(size), f"cells across, 1 to {MAX_SIZE}"),
        FormField("pace", pace, "Left/Right: " + " | ".join(p or "default" for p in paces)),
    ]


def edit_form(viewer: Any, tid: str) -> TokenForm:
    tok = viewer.sim.tokens[tid]
    spec = viewer.sim.specs[tid]
    sides = _sides(viewer)
    paces = _paces(viewer)
    fields = [
        FormField("id", tid, "rename: a new name, e.g. goblin2"),
        *_shape_fields(sides, paces, spec.side, spec.size, spec.pace or ""),
        *_stat_fields(viewer.sim.system, dict(tok.stats)),
        FormField("conditions", ",".join(sorted(tok.state.conditions)), "comma-separated"),
    ]
    return TokenForm("edit", fields, sides, tid=tid, paces=paces)


def apply_form(viewer: Any, form: TokenForm) -> bool:
    """Apply the form as one event (undoable); False with ``form.error`` set when a value
    is refused (nothing changes)."""
    sim = viewer.sim
    try:
        conditions = form.conditions()
        stats = form.stats(sim.system)
        side, size, pace = form.side(), form.size(), form.pace()
        sim.system.token(stats)  # the scenario's validation, before anything changes
        if form.mode == "add":
            assert form.cell is not None
            tid = form.new_id(set(sim.specs))
            if viewer.token_at(form.cell) is not None:
                raise ValueError(f"cell {form.cell[0]},{form.cell[1]} is taken")
            spec = TokenSpec(
                id=tid,
                side=side,
                stats=stats,
                cell=form.cell,
                policy="human",
                pace=pace,
                conditions=tuple(sorted(conditions)),
                size=size,
            )
            viewer.table.record(lambda: sim.add_token(spec))
            viewer.select(tid)
            viewer.message = f"added {tid}"
        else:
            assert form.tid is not None
            _apply_edit(viewer, form, stats, conditions, side, size, pace)
    except TacgridError as exc:
        form.error = exc.naming({"token": "field"}) if exc.role else str(exc)
        return False
    except ValueError as exc:
        form.error = str(exc)
        return False
    return True


def _apply_edit(
    viewer: Any,
    form: TokenForm,
    stats: dict[str, str],
    conditions: frozenset[str],
    side: str,
    size: int,
    pace: str | None,
) -> None:
    """One undo step: a ``token_edit`` (and a ``token_pace`` where the pace changes: the
    loop's own edits), or where the id or size change the token put back under its new
    spec at its cell, in its place in the turn order."""
    sim = viewer.sim
    old = form.tid
    assert old is not None
    spec = sim.specs[old]
    tid = form.value("id").strip()
    if tid == old and size == spec.size:

        def edit() -> None:
            sim.edit_token(old, stats=stats, conditions=conditions, side=side)
            if pace != spec.pace:
                sim.set_pace(old, pace)

        _one_step(viewer, edit)
        viewer.message = f"edited {old}"
        return
    if tid != old:
        form.new_id(set(sim.specs))
    cell = sim.tokens[old].state.cell
    if cell is None:
        raise ValueError(f"{old} stands on no cell: put it on the map first")
    policy = side if spec.policy == spec.side else spec.policy
    new = replace(
        spec,
        id=tid,
        side=side,
        stats=stats,
        cell=cell,
        policy=policy,
        pace=pace,
        size=size,
        conditions=tuple(sorted(conditions)),
    )
    order = [tid if t == old else t for t in sim.order]

    def readd() -> None:
        sim.remove_token(old)
        sim.add_token(new)
        sim.set_order(order, "reorder")

    _one_step(viewer, readd)
    if old in viewer.moved:
        viewer.moved.discard(old)
        viewer.moved.add(tid)
    viewer.select(tid)
    viewer.message = f"edited {tid}" if tid == old else f"renamed {old} to {tid}"


def _one_step(viewer: Any, change: Callable[[], None]) -> None:
    """``change`` as one undo step; where it raises, nothing of it is kept (its events
    included) and the error goes on."""
    point = viewer._checkpoint()
    try:
        change()
    except (TacgridError, ValueError):
        viewer._restore(point)
        raise
    viewer.undo.append(point)
    viewer.redo.clear()
    viewer._invalidate()
    viewer.table.version += 1
