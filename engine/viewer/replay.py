"""The window on a recorded run: ``tacgrid replay RUN.jsonl`` steps through its rounds."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pygame

from engine.eventlog import check_log_cells, read_log, replay_doors, replay_states
from engine.grid import Cell
from engine.scenario import TokenSpec
from engine.systems.base import TokenState
from engine.viewer.app import Viewer


class ReplayViewer(Viewer):
    """Steps through a recorded run: Right/Left a round, Home/End, the turn's moves drawn."""

    def __init__(self, log_path: str, scenario_path: str | None = None, **kw: Any) -> None:
        """``scenario_path``: the log's scenario as found and checked by
        :func:`engine.eventlog.check_log_sources` (default: as the log names it)."""
        from engine.scenario import load_scenario

        self.events = read_log(log_path)
        start = self.events[0]
        scenario = load_scenario(scenario_path or start["scenario"], for_render=True)
        check_log_cells(self.events, log_path, scenario.model.grid)  # before anything is drawn
        super().__init__(scenario, seed=start.get("seed"), **kw)
        self.table.read_only = True  # a replay is read from its log, not edited
        self.turn_starts = [i for i, e in enumerate(self.events) if e["type"] == "turn"]
        self.position = len(self.turn_starts)
        # The scenario's own tokens: each position starts from them, then the GM's edits.
        self._base = (dict(self.sim.tokens), dict(self.sim.specs), list(self.sim.order))
        self._apply()

    def _tokens_at(self, events: list[dict[str, Any]]) -> None:
        """The tokens as the log has them after ``events``: the scenario's, then every token
        the GM added, edited, removed or reordered in a session (a viewer's log)."""
        sim = self.sim
        tokens, specs, order = dict(self._base[0]), dict(self._base[1]), list(self._base[2])
        for ev in events:
            kind, tid = ev.get("type"), ev.get("token")
            if kind in ("token_add", "token_edit") and isinstance(tid, str):
                old = specs.get(tid) or TokenSpec(
                    id=tid, side="gm", stats={}, cell=(0, 0), policy="idle"
                )
                stats = dict(ev.get("stats") or {})
                acts = ev.get("acts")  # the acts it takes every turn (a log before them: none)
                spec = replace(
                    old,
                    side=str(ev.get("side") or old.side),
                    stats=stats,
                    policy=str(ev.get("policy") or old.policy),
                    size=int(ev.get("size") or old.size),
                    acts=tuple(str(a) for a in acts) if isinstance(acts, list) else old.acts,
                )
                specs[tid] = spec
                tokens[tid] = sim.system.token(stats, token_id=tid)
                if tid not in order:
                    order.append(tid)
            elif kind == "token_pace" and tid in specs:
                pace = ev.get("pace")
                specs[tid] = replace(specs[tid], pace=str(pace) if pace is not None else None)
            elif kind == "token_remove" and tid in specs:
                specs.pop(tid)
                tokens.pop(tid, None)
                order.remove(tid)
            elif kind == "order" and sorted(ev.get("order") or []) == sorted(order):
                order = [str(t) for t in ev["order"]]
        sim.tokens, sim.specs, sim.order = tokens, specs, order

    def _apply(self) -> None:
        upto = (
            self.turn_starts[self.position]
            if self.position < len(self.turn_starts)
            else len(self.events)
        )
        self._tokens_at(self.events[:upto])
        states, outcome = replay_states(self.events[:upto])
        for tid, st in states.items():
            if tid in self.sim.tokens:
                self.sim.tokens[tid] = self.sim.tokens[tid].moved(**_state_fields(st))
        if self.selected not in self.sim.tokens:
            self.selected = self.sim.order[0] if self.sim.order else None
        self.sim.doors = replay_doors(self.events[:upto])
        self.sim.turn = self.position
        self.sim.outcome = outcome
        self.message = f"replay: round {self.position} of {len(self.turn_starts)}"
        self._invalidate()

    def _key(self, ev: pygame.event.Event) -> None:
        k = ev.key
        if k == pygame.K_RIGHT:
            self.position = min(len(self.turn_starts), self.position + 1)
        elif k == pygame.K_LEFT:
            self.position = max(0, self.position - 1)
        elif k == pygame.K_HOME:
            self.position = 0
        elif k == pygame.K_END:
            self.position = len(self.turn_starts)
        else:
            super()._key(ev)
            return
        self._apply()

    def move_selected(self, goal: Cell) -> bool:
        self.message = "replay: moves are read from the log (Left/Right to step)"
        return False

    def dice_events(self) -> list[dict[str, Any]]:
        """The log's events up to the round shown: its rolls fill the dice log."""
        upto = (
            self.turn_starts[self.position]
            if self.position < len(self.turn_starts)
            else len(self.events)
        )
        return self.events[:upto]


def _state_fields(st: TokenState) -> dict[str, Any]:
    return {
        "cell": st.cell,
        "mode": st.mode,
        "conditions": st.conditions,
        "encumbrance": st.encumbrance,
        "progress": st.progress,
        "counters": st.counters,
        "flight": st.flight,
    }


def replay(
    log_path: str,
    *,
    frames: int | None = None,
    screenshot: str | None = None,
    scenario: str | None = None,
) -> int:
    """`tacgrid replay RUN.jsonl` in a window (``scenario``: the log's scenario file)."""
    return ReplayViewer(log_path, scenario).run(frames, screenshot)
