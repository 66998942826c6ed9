"""One pace per token at the table: ``V`` steps the selected token to its system's next pace.

The pace is its spec's (:meth:`engine.sim.Simulation.set_pace`: an undoable ``token_pace``
event, saved with the session); its turns, its reach and the hover path all move at it
(:meth:`engine.sim.Simulation.pace_of`), and the panel names it.
"""

from __future__ import annotations

from typing import Any

from engine.errors import TacgridError


def next_pace(v: Any) -> None:
    """The selected token's next pace of its system (after the one it moves at), skipping
    those its acts leave no room for; the viewer's message says which, or why none."""
    tid = v.selected
    if tid is None:
        v.message = "select a token, then V steps its pace"
        return
    sim = v.sim
    paces = list(sim.system.paces)
    now = sim.pace_of(tid)
    start = paces.index(now) if now in paces else -1
    problem = ""
    for k in range(1, len(paces) + 1):
        pace = paces[(start + k) % len(paces)]
        if pace == now:
            break
        try:
            v.table.record(lambda p=pace: sim.set_pace(tid, p))
        except TacgridError as exc:
            problem = str(exc)
            continue
        v.message = f"{tid} moves at {pace} (V: next pace)"
        return
    v.message = problem or f"{tid}: {sim.system.name} has one pace ({now})"
