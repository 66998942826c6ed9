"""The pieces of a turn's move the walker and the turn loop share: the way re-planned on the
way (:class:`Replan`, :class:`PathWays` for a given path), a given path's edges on a
profile (:func:`walk_of`), the share a failed roll keeps (:func:`kept_share`) and the mode
of a cell (:func:`mode_at`). Pure functions of their arguments."""

from __future__ import annotations

from collections.abc import Callable
from fractions import Fraction
from typing import Protocol

from engine.grid import Cell
from engine.mapmodel import MapModel
from engine.movement import MovementGraph
from engine.sim.fields import Profile, Walk
from engine.systems.base import Token
from engine.terrain import standing_mode


class Replan(Protocol):
    """The rest of a turn's way for a token whose rates changed on the way, from the turn
    loop (:meth:`Simulation._replan`)."""

    def __call__(
        self, token: Token, prof: Profile | None, used: Fraction, until: Fraction | None
    ) -> tuple[Profile, Walk, int] | None:
        """``token`` where it stands, ``used`` turns into its turn: its new ``(profile,
        walk, edges walked)`` up to ``until`` (None: the end of the turn), or None where its
        profile is still ``prof`` (the plan goes on; ``prof`` None: always a new way)."""
        ...

    def profile(self, token: Token) -> Profile:
        """The profile ``token`` moves on this turn."""
        ...


class PathWays:
    """:class:`Replan` for a given path (a human's move): the rest of ``path`` from where
    the token stands, on the profile of what it has become, up to a token in the way."""

    def __init__(
        self, profile: Callable[[Token], Profile], path: list[Cell], blocked: frozenset[Cell]
    ) -> None:
        self._profile = profile
        self.path = path
        self.blocked = blocked

    def profile(self, token: Token) -> Profile:
        return self._profile(token)

    def __call__(
        self, token: Token, prof: Profile | None, used: Fraction, until: Fraction | None
    ) -> tuple[Profile, Walk, int] | None:
        new = self._profile(token)
        if new is prof:
            return None
        cell = token.state.cell
        at = max((i for i, c in enumerate(self.path) if c == cell), default=None)
        if at is None:
            return new, Walk(new, []), 0
        rest = self.path[at:]
        cut = next((i for i, c in enumerate(rest) if i and c in self.blocked), len(rest))
        walk = walk_of(new, rest[:cut])
        left = float((min(until or 1, 1) - used) * new.graph.denominator) + 1e-9
        k = len(walk.edges)
        while k and walk.spent[k - 1] > left:
            k -= 1
        return new, walk, k


def walk_of(prof: Profile, cells: list[Cell]) -> Walk:
    """The way a given path (``cells``, from where the token stands) takes on ``prof``:
    the edges this turn's time pays for (standing up first where the rules need it; a jump
    made whole), and the one after where it takes more than a whole turn."""
    g = prof.graph
    node = g.node(cells[0])
    budget = float(g.denominator) + 1e-9
    spent = 0.0
    edges: list[tuple[int, int, float]] = []
    i = 0
    while i + 1 < len(cells):
        i += 1
        jump = g.jump_along(node, cells, i)
        if jump is not None:
            hop = [(node, jump.dst, float(jump.ticks))]
            skip = len(jump.parts) - 1
        else:
            step = g.step_from(node, cells[i])
            if step is None:
                break
            hops = [node, *step]
            hop = [(a, b, hop_ticks(g, a, b)) for a, b in zip(hops, hops[1:], strict=False)]
            skip = 0
        w = sum(h[2] for h in hop)
        if spent + w > budget and not (spent == 0 and jump is not None):
            return Walk(prof, edges, hop[-1] if jump is None and len(hop) == 1 else None)
        edges.extend(hop)
        spent += w
        node = hop[-1][1]
        i += skip
    return Walk(prof, edges)


def edge_turns(g: MovementGraph, cell: Cell, target: Cell) -> Fraction | None:
    """The turns a step from ``cell`` into ``target`` takes on ``g`` (None: no such step)."""
    node = g.node(cell)
    step = g.step_from(node, target)
    if step is None:
        return None
    hops = [node, *step]
    ticks = 0.0
    for a, b in zip(hops, hops[1:], strict=False):
        ticks += hop_ticks(g, a, b)
    return g.turns(ticks)


def kept_share(ticks: list[float], share: Fraction, total: float) -> int:
    """How many of a move's cells (entered by ``ticks``, in order) a failed roll that still
    makes ``share`` of that move (``total`` ticks) keeps: those entered by then, rounded
    down to whole cells (RuleSystem.failure_share)."""
    limit = float(share) * total + 1e-9
    kept = 0
    while kept < len(ticks) and ticks[kept] <= limit:
        kept += 1
    return kept


def mode_at(model: MapModel, cell: Cell) -> str:
    """The mode of a token standing on ``cell``: its terrain's (walk on a pit's floor)."""
    return standing_mode(model.terrain_at(cell).move)


def hop_ticks(g: MovementGraph, a: int, b: int) -> float:
    """The ticks of the edge from node ``a`` to node ``b`` of ``g``."""
    return next(float(t) for v, t in g.neighbours(a) if v == b)
