"""Jumps with a check as moves of the game with dice: a failure falls into the pit.

A jump over a gap within reach of the token's longest asks a roll (Speedpoints, seed 004:
"within 1 meter of their maximum jumping distance they must make a success roll using their
acrobatics ability or fall into the gap"). The turn loop rolls it as the jump is made
(:meth:`engine.sim.walking.Walker._enter`): a success lands and the move goes on; a failure
leaves the token in the first cell of the gap, its move over (:meth:`RuleSystem.apply_check`,
:meth:`RuleSystem.goes_on`). The solve walks a move's jumps as the loop does
(:func:`engine.solve.chance.outcomes`), and a failure ends the move on a pit position
(:class:`Pits`): the side's token in that gap cell, beside the map's cells. It is caught,
stands in the other token's way and escapes where it stands (the gap cell).

A pit position is a token's state in the pit, told apart by what the rules read of it
(:func:`pit_key`), asked of the system's own hooks (:func:`find_pits`): after the fall and
its roll at the end of the turn (:meth:`RuleSystem.end_turn_outcomes`, whose harm is the
system's notes), each turn in the pit starts with its roll (:meth:`RuleSystem.start_turn_outcomes`:
Speedpoints' climbing roll for the pit's wall, ``pit_wall``), is held
(:meth:`RuleSystem.held`) and ends (a turn's climb more) on the next state, or out of the
pit on the gap cell, from where the token moves on. A pit never left (a wall of 10 or
more: "there is no tactical way out, and the token stays in the pit") is one state that
stays. A turn that climbs the rest of the wall and walks on with what is left of it (a
partial turn out of the pit) is a move aimed at each cell it ends on, walked as the loop
walks the token in the pit (:func:`partial_moves`).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from fractions import Fraction
from typing import Any

import numpy as np

from engine.solve.chance import Chance, Degrees, _lasting, build_chance, outcomes
from engine.solve.climb import _joined, as_chance, groups_of
from engine.solve.expect import steps_between
from engine.solve.game import Game, Unsolvable, _one_turn, without_cell

#: A pit position's token state, beyond its cell: what the system's rules read of it (its
#: conditions and counters but the system's notes, a crossing under way, its encumbrance).
PitKey = tuple[Any, ...]


def pit_key(token: Any, notes: frozenset[str]) -> PitKey:
    """``token``'s state as a pit position tells it apart (what :func:`_lasting` compares)."""
    st = token.state
    counters = tuple(sorted((k, v) for k, v in st.counters if v and k not in notes))
    return (st.conditions - notes, counters, st.progress, st.toward, st.encumbrance)


@dataclass
class Pits:
    """The pit positions of both sides: position ``n + i`` is a token of ``side[i]`` in the
    gap cell ``cell[i]`` (a cell index) in the pit state ``key[i]``; at its turn it goes to
    ``turn[i]``'s positions with their chances (a pit position, or the gap cell itself: out
    of the pit, standing on it). ``index``: the position a failed jump falls into."""

    n: int
    #: The system's notes (:attr:`RuleSystem.notes`), which tell no pit state apart.
    notes: frozenset[str] = frozenset()
    side: list[str] = field(default_factory=list)
    cell: list[int] = field(default_factory=list)
    key: list[PitKey] = field(default_factory=list)
    turn: list[list[tuple[int, Fraction]]] = field(default_factory=list)
    index: dict[tuple[str, int], int] = field(default_factory=dict)
    by_key: dict[tuple[str, int, PitKey], int] = field(default_factory=dict)
    #: (side, gap cell) where a token climbs out onto the gap cell.
    outs: set[tuple[str, int]] = field(default_factory=set)
    #: Per pit position (by ``i``), the token that climbs the rest of the wall and walks
    #: on this turn (a partial turn out of the pit) and its chance; its moves are walked
    #: as the loop walks that token (:func:`partial_moves`).
    partial: dict[int, tuple[Any, Fraction]] = field(default_factory=dict)

    @property
    def size(self) -> int:
        """Cells and pit positions."""
        return self.n + len(self.side)

    def add(self, side: str, cell: int, key: PitKey = ()) -> int:
        got = self.by_key.get((side, cell, key))
        if got is None:
            got = self.by_key[(side, cell, key)] = self.size
            self.side.append(side)
            self.cell.append(cell)
            self.key.append(key)
            self.turn.append([])
        return got

    def stands(self) -> np.ndarray:
        """Per position, the cell index it stands on (a pit's: its gap cell)."""
        return np.concatenate((np.arange(self.n), np.array(self.cell, dtype=np.int64)))

    def of_side(self, side: str) -> list[int]:
        """``side``'s pit positions."""
        return [self.n + i for i, s in enumerate(self.side) if s == side]

    def position(self, side: str, cell: int, token: Any) -> int | None:
        """The pit position of ``side``'s ``token`` in the gap cell ``cell`` (None: none)."""
        return self.by_key.get((side, cell, pit_key(token, self.notes)))


def jump_checks(g: Any) -> list[Any]:
    """The jumps of ``g`` over a gap that ask a roll (a leap's failure only stops below)."""
    return [
        j for j in g.jumps if j.kind == "gap" and j.check is not None and j.check.check is not None
    ]


def find_pits(game: Game, name: str, system: Any) -> Pits | None:
    """The pit positions of the game (None: no jump on the map asks a roll): each side's
    failed jumps, then the turns in the pit as the system's hooks make them, until the
    token is out on the gap cell; :class:`Unsolvable` in one line where a turn there is
    one solve does not carry."""
    out = Pits(game.n, frozenset(system.notes))
    for mover in (game.pursuer, game.quarry):
        g = mover.graph
        base = g.search.tokens[g.search.start]
        if mover.token is not None:  # the graph may be another token's of the same profile
            base = mover.token.with_state(base.state)
        for j in jump_checks(g):
            gap = j.parts[j.gap_at][0]
            if (mover.side, gap) in out.index:
                continue
            at = base.moved(cell=g.grid.cell_of_index(gap))
            _chain(out, name, mover, system, gap, at, _fallen(name, mover.tid, system, at, j.check))
    return out if out.side else None


def _refuse(name: str, tid: str, why: str) -> Unsolvable:
    return Unsolvable(
        f"{name}: token {tid} jumps with a check on this map and a failure leaves {why}, "
        "which solve does not carry (docs/solve.md): give it a pit it cannot climb out "
        "of (pit_wall 10) or a map without this jump"
    )


def _fallen(name: str, tid: str, system: Any, token: Any, cc: Any) -> list[Any]:
    """The tokens a failed jump ``cc`` leaves in the pit once its turn is over (the fall
    rolled at the end of it: :meth:`RuleSystem.end_turn_outcomes`)."""
    odds: dict[str, Any] = cc.check.outcomes()
    p_success = cc.check.p_success()
    upto = 0
    got: list[Any] = []
    for degree, p in odds.items():
        success = upto < p_success
        upto += p
        if not p or success or system.goes_on(cc, degree, success):
            continue
        ends = system.end_turn_outcomes(system.apply_check(token, cc.what, degree))
        if ends is None:
            raise _refuse(
                name, tid, "a roll at the end of its turn whose outcomes the system does not list"
            )
        got += [t for t, q in ends if q]
    return got


def _chain(
    out: Pits, name: str, mover: Any, system: Any, gap: int, free: Any, fallen: list[Any]
) -> None:
    """Add ``mover``'s pit positions in ``gap``: from the ``fallen`` tokens, each turn in
    the pit (:meth:`RuleSystem.start_turn_outcomes`, a turn held
    (:meth:`RuleSystem.held`), :meth:`RuleSystem.end_turn_outcomes`) to the pit states it
    may leave, or out on the gap cell once nothing lasts of the pit (``free``: the token
    standing there)."""
    notes = frozenset(system.notes)
    side, tid = mover.side, mover.tid
    keys = {pit_key(t, notes) for t in fallen}
    if len(keys) != 1:
        raise _refuse(name, tid, "it in the pit in ways that differ beyond harm")
    todo = [fallen[0]]
    out.index[(side, gap)] = out.add(side, gap, pit_key(fallen[0], notes))
    seen = set(keys)
    while todo:
        token = todo.pop()
        pos = out.by_key[(side, gap, pit_key(token, notes))]
        turn: dict[int, Fraction] = {}
        starts = system.start_turn_outcomes(token)
        if starts is None:
            raise _refuse(
                name, tid, "a roll as its next turn starts whose outcomes the system does not list"
            )
        for started, p in starts:
            if system.held(started) is None:
                if not _lasting(free, started, notes) or pos - out.n in out.partial:
                    raise _refuse(name, tid, "it in the pit free to move in ways that differ")
                out.partial[pos - out.n] = (started, p)
                out.outs.add((side, gap))
                continue
            ends = system.end_turn_outcomes(started)
            if ends is None:
                raise _refuse(
                    name,
                    tid,
                    "a roll at the end of its turn whose outcomes the system does not list",
                )
            for ended, q in ends:
                dest = _ended(out, side, gap, free, ended, seen, todo)
                turn[dest] = turn.get(dest, Fraction(0)) + p * q
        out.turn[pos - out.n] = sorted(turn.items())


def _ended(
    out: Pits, side: str, gap: int, free: Any, ended: Any, seen: set[PitKey], todo: list[Any]
) -> int:
    """Where a turn in the pit that ends with the token ``ended`` leaves it: out on the
    gap cell once nothing of the pit lasts, else its pit position (new ones to ``todo``)."""
    if not _lasting(free, ended, out.notes):
        out.outs.add((side, gap))
        return gap
    key = pit_key(ended, out.notes)
    dest = out.add(side, gap, key)
    if key not in seen:
        seen.add(key)
        todo.append(ended)
    return dest


def jump_degrees(degrees: Degrees, token: Any, cc: Any) -> list[tuple[str, Any, bool]]:
    """The degrees of a jump's roll ``cc`` with their exact chances and whether each lets
    the token on (a failure falls into the gap: :func:`find_pits` checked it); a degree
    that lets it on changed is refused (the loop would price the rest of its move again)."""
    system = degrees.system
    odds: dict[str, Any] = cc.check.outcomes()
    p_success = cc.check.p_success()
    upto = 0
    out: list[tuple[str, Any, bool]] = []
    for degree, p in odds.items():
        success = upto < p_success
        upto += p
        if not p:
            continue
        on = success or system.goes_on(cc, degree, success)
        if on and _lasting(token, system.apply_check(token, cc.what, degree)):
            raise Unsolvable(
                f"{degrees.name}: token {degrees.tid}'s {cc.what} at {degree} changes it on "
                "its way, which solve does not carry (docs/solve.md): give it a map without "
                "this jump"
            )
        out.append((degree, p, on))
    return out


class PitFalls:
    """:class:`engine.solve.chance.Falls` for one side: its jumps' degrees
    (:func:`jump_degrees`) and its pit positions."""

    def __init__(self, pits: Pits, side: str, degrees: Degrees) -> None:
        self.pits, self.side, self.of = pits, side, degrees

    def degrees(self, token: Any, cc: Any) -> list[tuple[str, Any, bool]]:
        return jump_degrees(self.of, token, cc)

    def pit(self, gap: int) -> int:
        return self.pits.index[(self.side, gap)]


def lift_pits_side(
    pits: Pits, side: str, ch: Chance, out: dict[int, list[Any]], partial: dict[int, list[Any]]
) -> Chance:
    """One side's moves from every position: a cell's as they are, a gap cell's it climbed
    out onto ``out`` (:func:`from_gaps`); its own pit position's turn in the pit (the
    position's :attr:`Pits.turn`: one move, made whatever it aims at, as a failed climbing
    roll holds it anyway); the other side's pit position stays (it is never asked)."""
    groups = groups_of(ch)
    for gap, moves in out.items():
        groups[gap] = moves
    for pos in range(pits.n, pits.size):
        i = pos - pits.n
        if pits.side[i] != side:
            groups.append([(pos, [pos], [1.0])])
            continue
        if pos in partial:
            groups.append(partial[pos])
            continue
        turn = pits.turn[i]
        groups.append([(pos, [d for d, _ in turn], [float(p) for _, p in turn])])
    return as_chance(groups)


def partial_moves(
    game: Game, pits: Pits, pos: int, ways: Any, degrees: Degrees, blocker: int | None
) -> list[Any]:
    """The moves of the token at pit position ``pos`` whose turn climbs the rest of the
    wall and walks on (:attr:`Pits.partial`), ``blocker`` (a cell index) the other token
    in its way: aimed at each cell its turn ends on, walked as the loop walks that token
    (``ways``' :meth:`~engine.solve.chance.Ways.replan`: its profile starts in the pit),
    the rolls on the way with their odds (:func:`outcomes`); the chances are of the turn
    (the token's chance to be climbing so times the walk's)."""
    i = pos - pits.n
    token, p = pits.partial[i]
    side, gap = pits.side[i], pits.cell[i]
    grid = game.quarry.graph.grid
    stand = game.stand_p if side == "pursuer" else game.stand_q
    src = grid.cell_of_index(gap)
    other = None if blocker is None else grid.cell_of_index(blocker)
    aims: dict[int, tuple[Any, Any, list[Any]]] = {}
    for dst in [gap, *np.flatnonzero(stand).tolist()]:
        got = ways.replan(side, token, None, src, grid.cell_of_index(dst), other)
        if got is None:
            continue
        prof, g, edges, _, k = got
        if (edges[k - 1][1] % g.n if k else gap) == dst:
            aims.setdefault(dst, (prof, g, edges[:k]))
    moves: list[Any] = []
    for dst, (prof, g, edges) in aims.items():
        ends = [(gap, Fraction(1))]
        if edges:
            ends, _ = outcomes(g, edges, gap, degrees, ways, side, dst, other, prof)
        moves.append((dst, [c for c, _ in ends], [float(p * q) for _, q in ends]))
    return moves


def with_held(pits: Pits, pos: int, moves: list[Any]) -> list[Any]:
    """``moves`` of a partial turn joined with the turn's other outcomes at ``pos``
    (a failed climbing roll: held), the same whatever it aims at."""
    turn = pits.turn[pos - pits.n]
    ends, probs = [d for d, _ in turn], [float(q) for _, q in turn]
    return [(dst, ends + e, probs + pr) for dst, e, pr in moves]


def from_gaps(
    game: Game, pits: Pits, side: str, ways: Any, degrees: Degrees, kept: dict[Any, Any]
) -> dict[int, list[Any]]:
    """``side``'s moves from each gap cell it climbs out onto (a whole turn, walked as the
    loop walks it: :func:`build_chance`), by gap cell."""
    mover = game.pursuer if side == "pursuer" else game.quarry
    g = mover.graph
    gaps = sorted(c for s, c in pits.outs if s == side)
    if not gaps:
        return {}
    ok = np.isfinite(_one_turn(g, g.csr(), np.array(gaps, dtype=np.int64)))
    pairs = [(k, gap, None) for k, gap in enumerate(gaps)]
    got = build_chance(game, side, lambda k: np.flatnonzero(ok[k]), pairs, ways, degrees, kept)
    return dict(zip(gaps, groups_of(got), strict=True))


def pit_blocked(
    game: Game, pits: Pits, ways: Any, degrees: Degrees, kept: dict[Any, Any]
) -> tuple[Chance, np.ndarray, np.ndarray] | None:
    """The quarry's moves where the scenario's tokens block and the pair is not one of the
    game's cells: from each cell it may stand on (a gap cell it climbed out onto too) with
    the pursuer in a pit or out on its gap cell in its way (no jump over that cell), and
    from a gap cell it climbed out onto with the pursuer on any cell; the moves, and the
    pursuer's position and the quarry's cell of each pair."""
    out_q = sorted(c for s, c in pits.outs if s == "quarry")
    if game.blocked is None or not (pits.of_side("pursuer") or out_q):
        return None
    g = game.quarry.graph
    csr = g.csr()
    cells = np.union1d(np.flatnonzero(game.stand_q), np.array(out_q, dtype=np.int64))
    ps: list[int] = []
    pairs: list[tuple[int, int, int | None]] = []
    moves: list[np.ndarray] = []
    out_p = sorted(c for s, c in pits.outs if s == "pursuer")
    for pos in pits.of_side("pursuer") + out_p:
        gap = pos if pos < pits.n else pits.cell[pos - pits.n]
        ok = np.isfinite(_one_turn(g, without_cell(g, csr, gap), cells))
        ok[:, gap] = False
        for row, q in zip(ok, cells.tolist(), strict=True):
            pairs.append((len(moves), q, gap))
            moves.append(np.flatnonzero(row))
            ps.append(pos)
    stand_p = np.flatnonzero(game.stand_p).tolist()
    for q in out_q:
        for p in stand_p:
            if p == q:
                continue
            row = np.isfinite(_one_turn(g, without_cell(g, csr, p), np.array([q])))[0]
            row[p] = False
            pairs.append((len(moves), q, p))
            moves.append(np.flatnonzero(row))
            ps.append(p)
    got = build_chance(game, "quarry", lambda k: moves[k], pairs, ways, degrees, kept)
    return got, np.array(ps, dtype=np.int64), np.array([q for _, q, _ in pairs], dtype=np.int64)


def _outs(pits: Pits, side: str) -> np.ndarray:
    got = np.zeros(pits.n, dtype=bool)
    got[[c for s, c in pits.outs if s == side]] = True
    return got


def lift_pits_game(game: Game, pits: Pits) -> Game:
    """``game`` over the positions: a pit's token caught, in the way and escaping at its
    gap cell."""
    stands = pits.stands()
    side = np.array(pits.side)
    return replace(
        game,
        n=pits.size,
        cap=game.cap[np.ix_(stands, stands)],
        exit=game.exit[stands],
        stand_p=np.concatenate((game.stand_p | _outs(pits, "pursuer"), side == "pursuer")),
        stand_q=np.concatenate((game.stand_q | _outs(pits, "quarry"), side == "quarry")),
    )


def lift_pits(
    name: str,
    game: Game,
    pits: Pits,
    ways: Any,
    dp: Degrees,
    dq: Degrees,
    kept: dict[Any, Any],
    chance_p: Chance,
    chance_q: Chance,
    chance_b: Chance | None,
    bp: np.ndarray,
    bq: np.ndarray,
    max_values: int,
) -> tuple[Game, Chance, Chance, Chance | None, np.ndarray, np.ndarray, np.ndarray]:
    """The game with dice over the pit positions: both sides' moves, the quarry's around
    a pursuer in a pit too (its pairs after the others), and the grid steps between the
    positions (a pit's: its gap cell's); more than ``max_values`` values kept refused."""
    held = pits.size**2 * (game.turns + 1)
    if held > max_values:
        raise Unsolvable(
            f"{name}: {held:,} values with dice ({pits.size} positions squared x "
            f"{game.turns + 1} rounds) is more than the limit {max_values:,} held in "
            "memory; solve a smaller map or turn limit"
        )
    extra = pit_blocked(game, pits, ways, dq, kept)
    if extra is not None:
        chance_b = extra[0] if chance_b is None else _joined(chance_b, extra[0])
        bp, bq = np.concatenate((bp, extra[1])), np.concatenate((bq, extra[2]))
    partial: dict[str, dict[int, list[Any]]] = {"pursuer": {}, "quarry": {}}
    for i in pits.partial:
        pos, side = pits.n + i, pits.side[i]
        walked = partial_moves(game, pits, pos, ways, dp if side == "pursuer" else dq, None)
        partial[side][pos] = with_held(pits, pos, walked)
    if game.blocked is not None and partial["quarry"]:
        # The quarry's partial turns with the pursuer in its way, wherever it stands.
        stands = pits.stands()
        ppos = np.flatnonzero(game.stand_p | _outs(pits, "pursuer")).tolist()
        pairs = [(a, b) for b in partial["quarry"] for a in ppos + pits.of_side("pursuer")]
        groups = [
            with_held(pits, b, partial_moves(game, pits, b, ways, dq, int(stands[a])))
            for a, b in pairs
        ]
        got = as_chance(groups)
        chance_b = got if chance_b is None else _joined(chance_b, got)
        bp = np.concatenate((bp, np.array([a for a, _ in pairs], dtype=np.int64)))
        bq = np.concatenate((bq, np.array([b for _, b in pairs], dtype=np.int64)))
    gaps = np.zeros(game.n, dtype=bool)
    gaps[pits.cell] = True
    grown = replace(game, stand_p=game.stand_p | gaps, stand_q=game.stand_q | gaps)
    stands = pits.stands()
    steps = steps_between(grown)[np.ix_(stands, stands)]
    return (
        lift_pits_game(game, pits),
        lift_pits_side(
            pits,
            "pursuer",
            chance_p,
            from_gaps(game, pits, "pursuer", ways, dp, {}),
            partial["pursuer"],
        ),
        lift_pits_side(
            pits,
            "quarry",
            chance_q,
            from_gaps(game, pits, "quarry", ways, dq, kept),
            partial["quarry"],
        ),
        chance_b,
        bp,
        bq,
        steps,
    )
