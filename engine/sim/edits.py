"""The GM's token edits in play (:class:`TokenEdits`): add, edit, remove and place a token,
set its pace, each an event of the log. :class:`engine.sim.Simulation` takes them in; they
read and change only what :class:`Table` names of it."""

from __future__ import annotations

from dataclasses import replace
from typing import Any, Protocol

from engine.errors import ScenarioError, StatError
from engine.flight.model import FlightRules
from engine.grid import Cell
from engine.mapmodel import MapModel
from engine.scenario import TokenSpec
from engine.sim.crossing import mode_at
from engine.sim.flight import start_flight
from engine.sources import clip
from engine.systems.base import RuleSystem, Token, jsonable


def on_the_map(model: MapModel, tid: str, cell: Cell | None, source: str = "") -> None:
    """A token is put only on a cell of the map (``None``: not on the table): a token
    off it would be drawn nowhere and moved from nowhere. ScenarioError names the token
    and the cell (and ``source``, the scenario file, where there is one)."""
    grid = model.grid
    if cell is not None and not grid.in_bounds(cell):
        where = f"{clip(source, 200)}: " if source else ""
        raise ScenarioError(
            f"{where}token {clip(str(tid))} at {cell[0]},{cell[1]} is off the map "
            f"({grid.width} x {grid.height}); give a cell from 0,0 to "
            f"{grid.width - 1},{grid.height - 1}"
        )


class Table(Protocol):
    """What the GM's edits read and change of the simulation."""

    system: RuleSystem
    specs: dict[str, TokenSpec]
    order: list[str]
    tokens: dict[str, Token]
    waypoint: dict[str, int]

    @property
    def model(self) -> MapModel: ...

    def _emit(self, event: dict[str, Any]) -> None: ...

    def _sides(self) -> None: ...

    def _check_goals(self, moved: str) -> None: ...

    def flight_rules(self, token: Token) -> FlightRules | None: ...

    def _acted(self, tok: Token, pace: str | None, acts: tuple[str, ...]) -> Token: ...


class TokenEdits:
    """The GM's edits of the tokens mid-session (mixed into the simulation)."""

    def add_token(self: Table, spec: TokenSpec) -> Token:
        """A new token (stats validated by the system: a bad one raises StatError, nothing
        changes); event ``token_add`` with its spec and state."""
        if spec.id in self.specs:
            raise ValueError(f"token id '{spec.id}' is taken; give another")
        on_the_map(self.model, spec.id, spec.cell)
        tok = self.system.token(spec.stats, token_id=spec.id)
        tok = replace(
            tok,
            state=replace(
                tok.state, cell=spec.cell, conditions=tok.state.conditions | set(spec.conditions)
            ),
        )
        rules = self.flight_rules(tok)
        if rules is not None:
            tok = tok.moved(flight=start_flight(rules, spec))
        if spec.acts:
            tok = self._acted(tok, spec.pace, tuple(spec.acts))
        self.specs[spec.id] = spec
        self.order.append(spec.id)
        self.tokens[spec.id] = tok
        self._sides()
        self._emit(
            {
                "type": "token_add",
                "token": spec.id,
                "side": spec.side,
                "policy": spec.policy,
                "size": spec.size,
                "stats": {k: jsonable(v) for k, v in tok.stats.items()},
                "state": tok.state.to_dict(),
                "acts": list(spec.acts),
            }
        )
        return tok

    def _acted(self: Table, tok: Token, pace: str | None, acts: tuple[str, ...]) -> Token:
        """``tok`` with ``acts`` taken (:meth:`RuleSystem.with_acts`), checked as a
        scenario's are: an unknown act, too many, a pace they leave no room for or a
        momentum flier raise one StatError about ``act``."""
        tok = self.system.with_acts(tok, acts)  # unknown, too many: StatError (act)
        problem = None
        if acts and tok.state.flight is not None:
            problem = "a momentum flier's turn is its flight's actions (docs/flight.md)"
        elif acts and pace is not None and self.system.act_pace(tok, pace) != pace:
            problem = (
                f"its pace '{pace}' leaves no room for them (the fastest they leave: "
                f"{self.system.act_pace(tok, pace)}); give fewer acts"
            )
        if problem is not None:
            raise StatError(role="act", given=", ".join(acts), problem=problem)
        return tok

    def remove_token(self: Table, tid: str) -> None:
        """Take a token off the map; event ``token_remove``."""
        del self.tokens[tid]
        del self.specs[tid]
        self.order.remove(tid)
        self.waypoint.pop(tid, None)
        self._sides()
        self._emit({"type": "token_remove", "token": tid})

    def edit_token(
        self: Table,
        tid: str,
        stats: dict[str, Any] | None = None,
        conditions: frozenset[str] | None = None,
        side: str | None = None,
        acts: tuple[str, ...] | None = None,
    ) -> Token:
        """New stats (validated; a bad one raises StatError, nothing changes), conditions,
        side or acts for a token mid-session; event ``token_edit`` with its stats, state and
        acts.

        ``acts`` (names of the system's acts; () clears them) are kept in its spec and taken
        every turn from then on, as a scenario token's ``acts``, and recorded in its state at
        once (:meth:`RuleSystem.with_acts`: the counters its profile reads, cleared with
        them). They are checked as a scenario's are: an unknown name or more actions than
        a turn has, a pace of its spec they leave no room for, a momentum flier's (RULES.md
        6) raise one StatError about ``act``, and nothing changes."""
        old = self.tokens[tid]
        spec = self.specs[tid]
        tok = old
        if stats is not None:
            fresh = self.system.token(stats, token_id=tid)
            tok = replace(fresh, state=replace(old.state, encumbrance=fresh.state.encumbrance))
            spec = replace(spec, stats=dict(stats))
        if conditions is not None:
            tok = tok.moved(conditions=frozenset(conditions))
        if side is not None:
            policy = side if spec.policy == spec.side else spec.policy
            spec = replace(spec, side=side, policy=policy)
        if acts is not None:
            acts = tuple(acts)
            tok = self._acted(tok, spec.pace, acts)
            spec = replace(spec, acts=acts)
        self.tokens[tid] = tok
        self.specs[tid] = spec
        self._sides()
        self._emit(
            {
                "type": "token_edit",
                "token": tid,
                "side": spec.side,
                "policy": spec.policy,
                "stats": {k: jsonable(v) for k, v in tok.stats.items()},
                "state": tok.state.to_dict(),
                "acts": list(spec.acts),
            }
        )
        return tok

    def set_pace(self: Table, tid: str, pace: str | None) -> None:
        """The pace ``tid`` moves at from now on (None: the system's default), kept in its
        spec as a scenario token's ``pace``: its turns, reach and hover paths use it; event
        ``token_pace``. A pace the system lacks, or one its acts leave no room for, raises
        one StatError about ``pace`` and nothing changes."""
        system, spec = self.system, self.specs[tid]
        if pace is not None and pace not in system.paces:
            raise StatError(
                role="pace",
                given=pace,
                problem=f"{system.name} paces are {', '.join(system.paces)}",
            )
        if pace is not None and spec.acts:
            self._acted(self.tokens[tid], pace, tuple(spec.acts))
        self.specs[tid] = replace(spec, pace=pace)
        self._emit({"type": "token_pace", "token": tid, "pace": pace})

    def place_token(self: Table, tid: str, cell: Cell) -> None:
        """The GM puts a token on a cell (no move, no checks); event ``place``."""
        on_the_map(self.model, tid, cell)
        self.tokens[tid] = self.tokens[tid].moved(cell=cell, mode=mode_at(self.model, cell))
        self._emit({"type": "place", "token": tid, "cell": list(cell)})
        self._check_goals(tid)
