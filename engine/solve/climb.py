"""Climbs over turns with dice: a climb priced in whole successes (Mythmaster's skill climbs,
:meth:`~engine.systems.base.RuleSystem.climb_odds`) as positions of the game.

A token at the foot of a climb spends whole turns on it (the turn loop's
:meth:`engine.sim.walking.Walker._long_step`): each turn one :meth:`RuleSystem.climb_turn`,
whose outcomes with their exact chances the system lists
(:meth:`RuleSystem.climb_turn_outcomes`): progress, none, a slip, a fall back to the foot,
or the cell climbed into. Between turns its position is the foot, the cell climbed toward
and the share climbed: a climb position (:class:`Climbs`), beside the map's cells. A
climber partway up is reached where it climbs to (:func:`engine.occupancy.reach_cell`: for
a capture, and in the other token's way); it escapes only where it stands (the foot). A
climber that has climbed nothing, or slipped back to nothing, is at its foot: the foot's
own position. Each turn it may go on climbing (a move toward the cell climbed to) or turn
away: any move of the foot, the climb lost.

Refused in one line: a climb cell next to another (a climb of more than one cell, whose
progress carries from cell to cell), a climb whose outcomes the system does not list, and
an outcome that leaves more than the climb's progress (beyond the system's notes and the
fall's ``falling``, which its next turn's start clears and no profile reads).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

import numpy as np

from engine.movement import MovementGraph
from engine.solve.chance import Chance, Ways, _lasting
from engine.solve.game import Game, Unsolvable


@dataclass
class Climbs:
    """The climb positions of both sides: position ``n + i`` is the ``i``-th, a token of
    ``side[i]`` on ``foot[i]`` climbing toward ``top[i]`` with ``share[i]`` of it climbed
    (above 0, below 1). ``turn[(side, foot, top)]``: a turn's climb from each share (0 for
    the foot), as ``(position, chance)`` pairs."""

    n: int
    side: list[str] = field(default_factory=list)
    foot: list[int] = field(default_factory=list)
    top: list[int] = field(default_factory=list)
    share: list[Fraction] = field(default_factory=list)
    turn: dict[tuple[str, int, int], dict[Fraction, list[tuple[int, float]]]] = field(
        default_factory=dict
    )
    index: dict[tuple[str, int, int, Fraction], int] = field(default_factory=dict)

    @property
    def size(self) -> int:
        """Cells and climb positions."""
        return self.n + len(self.side)

    def position(self, side: str, cell: int, top: int | None, share: Fraction) -> int | None:
        """The position of a token of ``side`` on cell index ``cell``, climbing toward
        ``top`` (None: no climb under way) with ``share`` climbed; None where the game
        holds no such position."""
        if top is None or share == 0:
            return cell
        return self.index.get((side, cell, top, share))

    def reach(self) -> np.ndarray:
        """Per position, the cell index it is reached at (a climber partway up: its top)."""
        return np.concatenate((np.arange(self.n), np.array(self.top, dtype=np.int64)))

    def stands(self) -> np.ndarray:
        """Per position, the cell index it stands on (a climber: its foot)."""
        return np.concatenate((np.arange(self.n), np.array(self.foot, dtype=np.int64)))


def climb_cells(g: MovementGraph) -> np.ndarray:
    """Per cell index, whether entering it is a climb in whole successes for ``g``'s token
    (:meth:`RuleSystem.climb_odds`)."""
    terrains = g.model.terrains
    token = g.search.tokens[g.search.start]
    ok = np.array([g.system.climb_odds(token, t, g.pace) is not None for t in terrains])
    return ok[np.asarray(g.model.terrain_ids).ravel()] if len(ok) else np.zeros(g.n, bool)


def feet_of(g: MovementGraph, climb: np.ndarray) -> list[tuple[int, int]]:
    """The (foot, top) cell index pairs of ``g``'s climbs: an edge of its graph from a cell
    that is no climb into one that is (:func:`find_climbs` keeps those the turn loop climbs
    at once)."""
    n = g.n
    csr = g.csr()
    rows = np.repeat(np.arange(csr.shape[0]), np.diff(csr.indptr)) % n
    cols = csr.indices % n
    keep = climb[cols] & ~climb[rows] & (rows != cols)
    return sorted(set(zip(rows[keep].tolist(), cols[keep].tolist(), strict=True)))


def find_climbs(game: Game, name: str, system: Any, ways: Ways) -> Climbs | None:
    """The game's climb positions (None: no token climbs on this map), each climb's turn
    worked out from the system's outcomes; :class:`Unsolvable` for what is not modelled."""
    out = Climbs(game.n)
    found = False
    for mover in (game.pursuer, game.quarry):
        g = mover.graph
        climb = climb_cells(g)
        if not climb.any():
            continue
        grid = g.grid
        for c in np.flatnonzero(climb).tolist():
            for d in np.flatnonzero(climb).tolist():
                if d != c and g.step_from(g.node(grid.cell_of_index(c)), grid.cell_of_index(d)):
                    raise Unsolvable(
                        f"{name}: token {mover.tid} climbs from {grid.cell_of_index(c)} on into "
                        f"{grid.cell_of_index(d)}, a climb of more than one cell, which solve "
                        "does not carry (docs/solve.md): give it a map of one-cell climbs"
                    )
        for foot, top in feet_of(g, climb):
            # Only where the loop's way to the top climbs at once (a foot from which the
            # descent walks to another foot first makes no climb this turn: a walk).
            _, _, edges, beyond = ways.way(
                mover.side, grid.cell_of_index(foot), grid.cell_of_index(top), None
            )
            if edges or not beyond:
                continue
            found = True
            _one_climb(out, mover, name, system, ways, foot, top)
    return out if found else None


def _one_climb(
    out: Climbs, mover: Any, name: str, system: Any, ways: Ways, foot: int, top: int
) -> None:
    """Work out the climb from ``foot`` to ``top``: its shares from 0, each turn's
    outcomes, the positions they make."""
    table = _turn_table(mover, name, system, ways, foot, top)
    for share in sorted(s for s in table if s > 0):
        out.index[(mover.side, foot, top, share)] = out.size
        out.side.append(mover.side)
        out.foot.append(foot)
        out.top.append(top)
        out.share.append(share)

    def at(share: Fraction) -> int:
        if share >= 1:
            return top
        if share == 0:
            return foot
        return out.index[(mover.side, foot, top, share)]

    out.turn[(mover.side, foot, top)] = {
        s: [(at(nxt), float(p)) for nxt, p in row] for s, row in table.items()
    }


def _turn_table(
    mover: Any, name: str, system: Any, ways: Ways, foot: int, top: int
) -> dict[Fraction, list[tuple[Fraction, Fraction]]]:
    """Per share climbed (from 0, as far as the climb's outcomes go), a turn's outcomes:
    the share after it (1: in the cell climbed to; 0: at the foot, slipped back or
    fallen) with its exact chance."""
    g = mover.graph
    grid = g.grid
    where = grid.cell_of_index(top)
    terrain = g.model.terrain_at(where)
    base = g.search.tokens[g.search.start].moved(cell=grid.cell_of_index(foot))
    climber = base.moved(mode="climb", toward=where)
    notes = frozenset(system.notes) | {"falling"}
    table: dict[Fraction, list[tuple[Fraction, Fraction]]] = {}
    todo = [Fraction(0)]
    while todo:
        share = todo.pop()
        if share in table:
            continue
        got = system.climb_turn_outcomes(climber.moved(progress=share), terrain)
        if got is None:
            raise Unsolvable(
                f"{name}: token {mover.tid}'s climb into {where} has outcomes the system "
                "does not list, which solve does not carry (docs/solve.md): give it a map "
                "without this climb"
            )
        row: list[tuple[Fraction, Fraction]] = []
        for tok, p in got:
            st = tok.state
            plain = climber.moved(progress=st.progress)
            left = _lasting(plain, tok.moved(mode="climb", toward=where), notes)
            if left or not ways.same_profile(mover.side, base, tok):
                raise Unsolvable(
                    f"{name}: token {mover.tid}'s climb into {where} leaves "
                    f"{left or 'it on another profile'}, which solve does not carry "
                    "(docs/solve.md): give it a map without this climb"
                )
            nxt = min(st.progress, Fraction(1)) if not st.has("falling") else Fraction(0)
            row.append((nxt, p))
            if 0 < nxt < 1:
                todo.append(nxt)
        table[share] = row
    return table


#: One move of a group: its destination (its goal cell), the positions it ends on and
#: their chances.
Move = tuple[int, list[int], list[float]]


def groups_of(ch: Chance) -> list[list[Move]]:
    """``ch``'s moves, grouped as asked."""
    out: list[list[Move]] = []
    for i in range(len(ch.gptr) - 1):
        moves: list[Move] = []
        for m in range(int(ch.gptr[i]), int(ch.gptr[i + 1])):
            lo, hi = int(ch.optr[m]), int(ch.optr[m + 1])
            moves.append((int(ch.dst[m]), ch.end[lo:hi].tolist(), ch.prob[lo:hi].tolist()))
        out.append(moves)
    return out


def climb_moves(
    climbs: Climbs, side: str, foot: int, but: int | None = None, share: Fraction = Fraction(0)
) -> list[Move]:
    """``side``'s climbs from ``foot`` (each a move toward its top), the one toward ``but``
    from ``share`` and the others from their foot, the one toward ``but`` first."""
    out: list[Move] = []
    for (s, f, top), table in climbs.turn.items():
        if s == side and f == foot:
            row = table[share if top == but else Fraction(0)]
            move = (top, [e for e, _ in row], [p for _, p in row])
            if top == but:
                out.insert(0, move)
            else:
                out.append(move)
    return out


def as_chance(groups: list[list[Move]]) -> Chance:
    """A :class:`Chance` of ``groups`` (the ``i``-th group the ``i``-th source asked)."""
    counts = [len(g) for g in groups]
    moves = [m for g in groups for m in g]
    gptr = np.zeros(len(groups) + 1, dtype=np.int64)
    np.cumsum(counts, out=gptr[1:])
    optr = np.zeros(len(moves) + 1, dtype=np.int64)
    np.cumsum([len(m[1]) for m in moves], out=optr[1:])
    src = np.repeat(np.arange(len(groups)), counts).astype(np.int64)
    return Chance(
        gptr,
        src,
        np.array([m[0] for m in moves], dtype=np.int64),
        optr,
        np.array([e for m in moves for e in m[1]], dtype=np.int64),
        np.array([p for m in moves for p in m[2]], dtype=np.float64),
    )


def lift_side(climbs: Climbs, side: str, ch: Chance) -> Chance:
    """One side's moves from every position: a cell's, with the climbs from it; a climb
    position's of that side, going on climbing first, then the foot's (the climb lost); the
    other side's climb positions, staying (never asked)."""
    cells = groups_of(ch)
    out: list[list[Move]] = []
    for c, moves in enumerate(cells):
        out.append(moves + climb_moves(climbs, side, c))
    for i, s in enumerate(climbs.side):
        pos = climbs.n + i
        if s != side:
            out.append([(pos, [pos], [1.0])])
            continue
        foot, top = climbs.foot[i], climbs.top[i]
        mine = climb_moves(climbs, side, foot, top, climbs.share[i])
        out.append(mine[:1] + cells[foot] + mine[1:])
    return as_chance(out)


def lift_blocked(
    climbs: Climbs, ch: Chance, bp: np.ndarray, bq: np.ndarray
) -> tuple[Chance, np.ndarray, np.ndarray]:
    """The quarry's moves with the pursuer in its way, for the positions: each pair's, with
    the quarry's climbs from its cell (none toward the pursuer's cell), and the same pair
    with the quarry partway up a climb from that cell (going on first). A pursuer partway
    up is in the way at its top, which no quarry's move of a turn enters."""
    pairs = groups_of(ch)
    out: list[list[Move]] = []
    ps: list[int] = []
    qs: list[int] = []
    for k, moves in enumerate(pairs):
        p, q = int(bp[k]), int(bq[k])
        ps.append(p)
        qs.append(q)
        out.append(moves + [m for m in climb_moves(climbs, "quarry", q) if m[0] != p])
        for i, s in enumerate(climbs.side):
            if s == "quarry" and climbs.foot[i] == q:
                mine = climb_moves(climbs, "quarry", q, climbs.top[i], climbs.share[i])
                ps.append(p)
                qs.append(climbs.n + i)
                out.append(mine[:1] + moves + [m for m in mine[1:] if m[0] != p])
    return as_chance(out), np.array(ps, dtype=np.int64), np.array(qs, dtype=np.int64)


def lift_game(game: Game, climbs: Climbs) -> Game:
    """``game`` over the positions: capture where they are reached, exits where they
    stand."""
    from dataclasses import replace

    reach, stands = climbs.reach(), climbs.stands()
    side = np.array(climbs.side)
    return replace(
        game,
        n=climbs.size,
        cap=game.cap[np.ix_(reach, reach)],
        exit=game.exit[stands],
        stand_p=np.concatenate((game.stand_p, side == "pursuer")),
        stand_q=np.concatenate((game.stand_q, side == "quarry")),
    )
