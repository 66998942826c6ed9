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
away: any move of the foot, the climb lost. What a success makes beyond the cell it enters
carries into a climb cell next to it (the loop's leftover ``progress`` while the mode stays
``climb``): a position too, the climb cell with that much of the next made.

Refused in one line: a climb whose outcomes the system does not list, and an outcome that
leaves more than the climb's progress (beyond the system's notes and the fall's
``falling``, which its next turn's start clears and no profile reads).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

import numpy as np

from engine.movement import MovementGraph
from engine.solve.chance import Chance, Ways, _lasting, ranges
from engine.solve.game import Game, Unsolvable


@dataclass
class Climbs:
    """The climb positions of both sides: position ``n + i`` is the ``i``-th, a token of
    ``side[i]`` standing on ``foot[i]`` with ``share[i]`` (above 0) of a climb made: partway
    up toward ``top[i]`` (below 1), or, where ``top[i]`` is None, in the climb cell
    ``foot[i]`` with that much of the next climb cell made (the loop's leftover progress,
    carried into a climb cell next to it). ``turn[(side, foot, top)]``: a turn's climb
    from each share it starts from, as ``(position, chance)`` pairs."""

    n: int
    side: list[str] = field(default_factory=list)
    foot: list[int] = field(default_factory=list)
    top: list[int | None] = field(default_factory=list)
    share: list[Fraction] = field(default_factory=list)
    turn: dict[tuple[str, int, int], dict[Fraction, list[tuple[int, float]]]] = field(
        default_factory=dict
    )
    index: dict[tuple[str, int, int | None, Fraction], int] = field(default_factory=dict)
    #: :meth:`onward`'s lists, made once the climbs are all worked out.
    _onward: dict[tuple[str, int], list[int]] | None = None

    @property
    def size(self) -> int:
        """Cells and climb positions."""
        return self.n + len(self.side)

    def position(self, side: str, cell: int, top: int | None, share: Fraction) -> int | None:
        """The position of a token of ``side`` on cell index ``cell``, climbing toward
        ``top`` (None: no climb under way) with ``share`` climbed; None where the game
        holds no such climb under way. Progress with no climb under way that no climb
        carries on (a walk's fraction of a cell) is the cell's position."""
        if share == 0:
            return cell
        got = self.index.get((side, cell, top, share))
        return cell if got is None and top is None else got

    def reach(self) -> np.ndarray:
        """Per position, the cell index it is reached at (a climber partway up: its top)."""
        at = [f if t is None else t for f, t in zip(self.foot, self.top, strict=True)]
        return np.concatenate((np.arange(self.n), np.array(at, dtype=np.int64)))

    def stands(self) -> np.ndarray:
        """Per position, the cell index it stands on (a climber: its foot)."""
        return np.concatenate((np.arange(self.n), np.array(self.foot, dtype=np.int64)))

    def onward(self, side: str, foot: int) -> list[int]:
        """The cells ``side`` climbs into from ``foot``, in the order found."""
        if self._onward is None:
            self._onward = {}
            for s, f, t in self.turn:
                self._onward.setdefault((s, f), []).append(t)
        return self._onward.get((side, foot), [])

    def tops(self) -> list[int]:
        """The cells climbed into."""
        return sorted({t for (_, _, t) in self.turn})


def climb_cells(g: MovementGraph) -> np.ndarray:
    """Per cell index, whether entering it is a climb in whole successes for ``g``'s token
    (:meth:`RuleSystem.climb_odds`)."""
    terrains = g.model.terrains
    token = g.search.tokens[g.search.start]
    ok = np.array([g.system.climb_odds(token, t, g.pace) is not None for t in terrains])
    return ok[np.asarray(g.model.terrain_ids).ravel()] if len(ok) else np.zeros(g.n, bool)


def feet_of(g: MovementGraph, climb: np.ndarray) -> list[tuple[int, int]]:
    """The (foot, top) cell index pairs of ``g``'s climbs: an edge of its graph into a
    climb cell from another cell (:func:`find_climbs` keeps those the turn loop climbs at
    once)."""
    n = g.n
    csr = g.csr()
    rows = np.repeat(np.arange(csr.shape[0]), np.diff(csr.indptr)) % n
    cols = csr.indices % n
    keep = climb[cols] & (rows != cols)
    return sorted(set(zip(rows[keep].tolist(), cols[keep].tolist(), strict=True)))


def find_climbs(game: Game, name: str, system: Any, ways: Ways) -> Climbs | None:
    """The game's climb positions (None: no token climbs on this map), each climb's turn
    worked out from the system's outcomes; :class:`Unsolvable` for what is not modelled."""
    out = Climbs(game.n)
    for mover in (game.pursuer, game.quarry):
        g = mover.graph
        climb = climb_cells(g)
        if not climb.any():
            continue
        grid = g.grid
        pairs = []
        for foot, top in feet_of(g, climb):
            # Only where the loop's way to the top climbs at once (a foot from which the
            # descent walks to another foot first makes no climb this turn: a walk).
            _, _, edges, beyond = ways.way(
                mover.side, grid.cell_of_index(foot), grid.cell_of_index(top), None
            )
            if not edges and beyond:
                pairs.append((foot, top))
        _side_climbs(out, mover, name, system, ways, pairs)
    return out if out.turn else None


def _side_climbs(
    out: Climbs,
    mover: Any,
    name: str,
    system: Any,
    ways: Ways,
    pairs: list[tuple[int, int]],
) -> None:
    """Work out ``mover``'s climbs (``pairs``: foot, top) from every share they start
    from (0, or the leftover of the climb into their foot), and the positions they make."""
    onward: dict[int, list[int]] = {}
    for foot, top in pairs:
        onward.setdefault(foot, []).append(top)
    rows: dict[tuple[int, int], dict[Fraction, list[tuple[Any, Fraction]]]] = {}
    todo = [(foot, top, Fraction(0)) for foot, top in pairs]
    while todo:
        foot, top, share = todo.pop()
        table = rows.setdefault((foot, top), {})
        if share in table:
            continue
        row: list[tuple[Any, Fraction]] = []
        for got, p in _turn_of(mover, name, system, ways, foot, top, share):
            if got < 1:
                row.append((("up", foot, top, got) if got else foot, p))
                if got:
                    todo.append((foot, top, got))
                continue
            left = got - 1  # in the top, the rest carried into a climb cell next to it
            carried = left > 0 and top in onward
            row.append((("on", top, None, left) if carried else top, p))
            if carried:
                todo.extend((top, nxt, left) for nxt in onward[top])
        table[share] = row
    _add(out, mover.side, rows)


def _add(
    out: Climbs, side: str, rows: dict[tuple[int, int], dict[Fraction, list[tuple[Any, Fraction]]]]
) -> None:
    """Number ``side``'s climb positions (those its climbs' outcomes name) and add its
    climbs' turns over positions."""
    keys = {k for t in rows.values() for r in t.values() for k, _ in r if isinstance(k, tuple)}
    for _, foot, top, share in sorted(keys, key=lambda k: (k[1], k[2] is None, k[2] or 0, k[3])):
        out.index[(side, foot, top, share)] = out.size
        out.side.append(side)
        out.foot.append(foot)
        out.top.append(top)
        out.share.append(share)

    def at(k: Any) -> int:
        return k if isinstance(k, int) else out.index[(side, k[1], k[2], k[3])]

    for (foot, top), table in rows.items():
        out.turn[(side, foot, top)] = {
            s: [(at(k), float(p)) for k, p in row] for s, row in table.items()
        }


def _turn_of(
    mover: Any, name: str, system: Any, ways: Ways, foot: int, top: int, share: Fraction
) -> list[tuple[Fraction, Fraction]]:
    """A turn's climb from ``foot`` into ``top`` with ``share`` made: the progress after
    it (1 or more: in the top, the rest carried; 0: at the foot, slipped back or fallen)
    with its exact chance (:meth:`RuleSystem.climb_turn_outcomes`)."""
    g = mover.graph
    grid = g.grid
    where = grid.cell_of_index(top)
    terrain = g.model.terrain_at(where)
    base = g.search.tokens[g.search.start].moved(cell=grid.cell_of_index(foot))
    climber = base.moved(mode="climb", toward=where, progress=share)
    notes = frozenset(system.notes) | {"falling"}
    got = system.climb_turn_outcomes(climber, terrain)
    if got is None:
        raise Unsolvable(
            f"{name}: token {mover.tid}'s climb into {where} has outcomes the system does not "
            "list, which solve does not carry (docs/solve.md): give it a map without this climb"
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
        row.append((Fraction(0) if st.has("falling") else st.progress, p))
    return row


#: One move of a group: its destination (its goal cell), the positions it ends on and
#: their chances.
Move = tuple[int, list[int], list[float]]


def groups_of(ch: Chance) -> list[list[Move]]:
    """``ch``'s moves, grouped as asked."""
    # Plain lists once, sliced per move: a move is a few entries.
    gptr, optr, dst = ch.gptr.tolist(), ch.optr.tolist(), ch.dst.tolist()
    end, prob = ch.end.tolist(), ch.prob.tolist()
    return [
        [(dst[m], end[optr[m] : optr[m + 1]], prob[optr[m] : optr[m + 1]]) for m in range(a, b)]
        for a, b in zip(gptr, gptr[1:], strict=False)
    ]


def climb_moves(
    climbs: Climbs,
    side: str,
    foot: int,
    avoid: int | None = None,
    shares: dict[int, Fraction] | None = None,
) -> list[Move]:
    """``side``'s climbs from ``foot`` (each a move toward its top, none toward ``avoid``:
    the pursuer's cell, in the quarry's way), from share 0, or ``shares[top]`` toward
    that top."""
    out: list[Move] = []
    for top in climbs.onward(side, foot):
        if top != avoid:
            row = climbs.turn[(side, foot, top)][(shares or {}).get(top, Fraction(0))]
            out.append((top, [e for e, _ in row], [p for _, p in row]))
    return out


def position_moves(climbs: Climbs, i: int, plain: list[Move], avoid: int | None) -> list[Move]:
    """The moves of climb position ``i`` (its side's), ``plain`` the moves of the cell it
    stands on (as the loop walks them from there). Partway up: going on climbing first,
    then the foot's moves (turning away: the climb lost), then its other climbs from
    nothing. In a climb cell with some of the next made: the cell's moves (staying keeps
    what is made), then its climbs with that made."""
    side, foot, top, share = climbs.side[i], climbs.foot[i], climbs.top[i], climbs.share[i]
    pos = climbs.n + i
    if top is None:
        stay = [(d, [pos if e == foot else e for e in ends], ps) if d == foot else (d, ends, ps)
                for d, ends, ps in plain]  # fmt: skip
        onward = dict.fromkeys(climbs.onward(side, foot), share)
        return stay + climb_moves(climbs, side, foot, avoid, onward)
    mine = climb_moves(climbs, side, foot, avoid, {top: share})
    going = [m for m in mine if m[0] == top]
    return going + plain + [m for m in mine if m[0] != top]


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
    position's of that side (:func:`position_moves`); the other side's climb positions,
    staying (never asked)."""
    cells = groups_of(ch)
    out: list[list[Move]] = []
    for c, moves in enumerate(cells):
        out.append(moves + climb_moves(climbs, side, c))
    for i, s in enumerate(climbs.side):
        pos = climbs.n + i
        if s != side:
            out.append([(pos, [pos], [1.0])])
        else:
            out.append(position_moves(climbs, i, cells[climbs.foot[i]], None))
    return as_chance(out)


def lift_blocked(
    climbs: Climbs, ch: Chance, bp: np.ndarray, bq: np.ndarray
) -> tuple[Chance, np.ndarray, np.ndarray]:
    """The quarry's moves with the pursuer in its way, for the positions: each pair's, with
    the quarry's climbs from its cell (none toward the pursuer's cell), and the same pair
    with the quarry on a climb position standing on that cell. A pursuer partway up is in
    the way at its top, which no quarry's move of a turn enters. The pairs come back in
    another order (with their cells): those with no climb from the quarry's cell as they
    were, then the others."""
    standing: dict[int, list[int]] = {}  # the quarry's climb positions by the cell stood on
    for i, s in enumerate(climbs.side):
        if s == "quarry":
            standing.setdefault(climbs.foot[i], []).append(i)
    feet = np.zeros(climbs.n, dtype=bool)
    feet[[f for (s, f, _) in climbs.turn if s == "quarry"] + list(standing)] = True
    mixed = feet[bq]
    same = _groups(ch, np.flatnonzero(~mixed))
    asked = np.flatnonzero(mixed)
    pairs = groups_of(_groups(ch, asked))
    out: list[list[Move]] = []
    ps: list[int] = []
    qs: list[int] = []
    for k, moves in zip(asked.tolist(), pairs, strict=True):
        p, q = int(bp[k]), int(bq[k])
        ps.append(p)
        qs.append(q)
        out.append(moves + climb_moves(climbs, "quarry", q, p))
        for i in standing.get(q, ()):
            ps.append(p)
            qs.append(climbs.n + i)
            out.append(position_moves(climbs, i, moves, p))
    lifted = _joined(same, as_chance(out))
    keep = ~mixed
    return (
        lifted,
        np.concatenate((bp[keep], np.array(ps, dtype=np.int64))),
        np.concatenate((bq[keep], np.array(qs, dtype=np.int64))),
    )


def _groups(ch: Chance, ks: np.ndarray) -> Chance:
    """The groups ``ks`` of ``ch`` (in that order), as a :class:`Chance`."""
    lo, hi = ch.gptr[ks], ch.gptr[ks + 1]
    rows = ranges(lo, hi)
    gptr = np.zeros(len(ks) + 1, dtype=np.int64)
    np.cumsum(hi - lo, out=gptr[1:])
    olo, ohi = ch.optr[rows], ch.optr[rows + 1]
    oi = ranges(olo, ohi)
    optr = np.zeros(len(rows) + 1, dtype=np.int64)
    np.cumsum(ohi - olo, out=optr[1:])
    src = np.repeat(np.arange(len(ks), dtype=np.int64), hi - lo)
    return Chance(gptr, src, ch.dst[rows], optr, ch.end[oi], ch.prob[oi])


def _joined(a: Chance, b: Chance) -> Chance:
    """``a``'s groups, then ``b``'s."""
    return Chance(
        np.concatenate((a.gptr, b.gptr[1:] + a.gptr[-1])),
        np.concatenate((a.src, b.src + len(a.gptr) - 1)),
        np.concatenate((a.dst, b.dst)),
        np.concatenate((a.optr, b.optr[1:] + a.optr[-1])),
        np.concatenate((a.end, b.end)),
        np.concatenate((a.prob, b.prob)),
    )


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
