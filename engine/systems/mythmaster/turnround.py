"""Mythmaster's turn-round bound (issue 18): goals with an end heading, for fliers with momentum.

The planner's own lower bound (a relaxed 1-D speed/distance problem,
:meth:`MythmasterFlight.bound <engine.systems.mythmaster.flight.MythmasterFlight.bound>`)
cannot see that a flier heading away from the goal's heading must swing round, between walls
and inside the map, so a landing that must end facing back the way it came left the search
tens of thousands of states to try. The turn-round bound is the fewest (turns, actions) still
needed, worked out backwards from the goal a turn at a time over every (cell, heading, next
face, speed), as sets of cells in Python integers (:class:`TurnRound`, worked out only as
deep as the search asks). Its moves are exactly the planner's own, so the plans are the same
ones, found with a few expansions.

The generic planner (:mod:`engine.flight.planner`) asks for it through
:meth:`FlightRules.heading_bound <engine.flight.model.FlightRules.heading_bound>`, which
Mythmaster's rules answer with :meth:`TurnRound.of`; it names no system.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable, Iterator
from typing import Any, Protocol, cast

from engine.flight.model import (
    FlightState,
    Geometry,
    Goal,
    Key,
    Runs,
    StepField,
    angle,
    turn_options,
)
from engine.grid import Cell
from engine.lazy import numpy as np


class MomentumRules(Protocol):
    """What the bound reads of a momentum flier's rules (Mythmaster's)."""

    geo: Geometry
    runs: Runs
    land_limit: int
    blocked_cells: frozenset[Cell]

    def _opts(self, v: int, budget: int) -> list[tuple[int, int]]: ...

    def steps_to(self, goal: Cell) -> StepField: ...

    def expand(
        self, key: Key, goal: Goal, turn_points: int
    ) -> Iterator[tuple[Key, int, bool, Any]]: ...

    def bound(self, key: Key, goal: Goal) -> tuple[int, int] | None: ...


# How the layers are worked out
# ------------------------------
#
# Worked out backwards from the goal, a turn at a time: layer 1 holds every flying state
# (cell, heading, next face, speed) with one turn that reaches the goal, layer t every state
# whose best plan takes t turns, each with the fewest actions it can do that with. A layer is
# sets of cells, one per (heading, face, speed) "slice" and action count, each a Python int
# with a bit per cell in lattice order (:class:`_Board`), so one shift and one mask move a
# whole set: the cells that fly m clear cells along a heading into a set are the set shifted
# back m steps and masked by the cells with m clear cells ahead (worked out once per map).
# A turn's move is ``w`` cells (its new speed) with one turn at any point ``k``: the cells
# from which it ends in a set are the union over ``k`` of "k clear cells along the old
# heading, then w - k clear cells along the new one into the set"; the speed actions that
# lead to ``w``, and what they leave for turning, say which old speeds make that turn and at
# what cost. That is the planner's own move set (Mythmaster's expand, with one turn point a
# move), blocked cells and the map's edge included, so the layer a state is first in is the
# fewest turns it needs: exact, so never more than the truth, and never dropping by more
# than one turn's cost from a state to the next.
#
# Three things keep it cheap enough to ask every turn (benchmarks/bench_flight.py):
#
# * Layers are worked out only as deep as the search asks (:meth:`TurnRound.refine`); a
#   state in no layer yet needs more turns than the layers so far hold, with the actions of
#   the 1-D speed/distance problem with that many turns fixed (:meth:`_fixed_turns`).
# * Speed caps: on a plan of ``total`` turns from the start, a state ``r`` turns from the
#   goal is ``total - r`` turns from the start, so no faster than the start can be after that
#   many turns. Faster states count as in layer r by default (a lower bound: fewer turns).
#   A state under a cap only ever moves to one under the next layer's cap, so the states
#   under the caps get exact layers from states under the caps alone; a plan longer than
#   ``total`` (plus a margin) starts the layers again with higher caps.
# * Per slice of the last layer, at most ACTION_CLASSES action counts are told apart (dearer
#   ones count as the last of them): the bound's actions are then a lower bound (still
#   consistent), its turns still exact.
#
# States on the ground (the start) take their bound from their take-off moves; a downed
# flier, or a speed the layers do not have, keeps the rules' own bound.

#: Goals whose turn-round layers a rules object keeps (oldest dropped first).
TURN_ROUND_CACHE = 4
#: Work (bits moved) one set of layers may take before it stops growing: the bound then
#: stays what the layers so far tell (still admissible). A few seconds' worth; the 64x64
#: benchmark takes about 1e9, and a search that runs out of layers has little hope anyway.
TURN_ROUND_WORK = 50_000_000_000

#: Action counts of a layer's states told apart per slice when the next layer is worked
#: out from them: dearer ones count as the last of these (fewer actions: still a lower
#: bound), which keeps a layer's work to a few passes while states of equal turns stay well
#: ordered (more: fewer expansions, dearer layers; 1 to 4 cost about the same on 64x64).
ACTION_CLASSES = 3
#: Turns beyond the plan length first asked for that the speed caps allow for (see
#: :meth:`TurnRound.cap`): a longer plan starts the layers again.
TOTAL_MARGIN = 2

_INF = 1 << 20
_LAST = 255  # turns the fixed-turns problem is tried with at most (layers are bytes too)


def _back(x: int, s: int) -> int:
    """The cells whose step of bit offset ``s`` lands in ``x``."""
    return x >> s if s >= 0 else x << -s


class _Board:
    """One map's cells as bits: lattice rows of ``stride`` bits (one spare bit a row, so a
    step past a row's end lands on no cell), the free cells (in the map, not blocked), and
    per (heading, next face) pair the bit offset of one step and, lazily, the cells with
    ``k`` clear cells ahead."""

    def __init__(self, geo: Geometry, blocked: Callable[[Cell], bool]) -> None:
        self.geo = geo
        grid = geo.grid
        cells = list(grid.cells())
        lats = [geo.lat(c) for c in cells]
        self.x0 = min(p[0] for p in lats)
        self.y0 = min(p[1] for p in lats)
        self.stride = max(p[0] for p in lats) - self.x0 + 2
        self.rows = max(p[1] for p in lats) - self.y0 + 1
        self.nbits = self.stride * self.rows
        self.index: dict[Cell, int] = {}
        raw = bytearray((self.nbits + 7) // 8)
        for c, (x, y) in zip(cells, lats, strict=True):
            i = (y - self.y0) * self.stride + x - self.x0
            self.index[c] = i
            if not blocked(c):
                raw[i >> 3] |= 1 << (i & 7)
        self.free = int.from_bytes(raw, "little")
        #: (heading, next face) pairs, their indices, headings, steps and partners.
        self.pairs: list[tuple[int, int]] = [(h, f) for h in geo.headings for f in geo.faces_of(h)]
        self.pair: dict[tuple[int, int], int] = {p: j for j, p in enumerate(self.pairs)}
        self.of_heading: dict[int, list[int]] = {}
        self.step: list[int] = []
        self.nxt: list[int] = []
        for j, (h, f) in enumerate(self.pairs):
            self.of_heading.setdefault(h, []).append(j)
            dx, dy = geo.vec[f]
            self.step.append(dx + dy * self.stride)
            self.nxt.append(self.pair[(h, geo.other(h, f))])
        self._clear: list[list[int]] = [[self.free] for _ in self.pairs]
        self.work = 0

    def bit(self, p: tuple[int, int]) -> int:
        """The bit of lattice point ``p`` (0 when it is off the board)."""
        x, y = p[0] - self.x0, p[1] - self.y0
        if 0 <= x < self.stride - 1 and 0 <= y < self.rows:
            return (1 << (y * self.stride + x)) & self.free
        return 0

    def offset(self, j: int, k: int) -> int:
        """The bit offset of ``k`` steps from pair ``j`` (vertex headings alternate)."""
        return ((k + 1) >> 1) * self.step[j] + (k >> 1) * self.step[self.nxt[j]]

    def runs_of(self, j: int) -> list[int]:
        """The clear-run masks of pair ``j`` worked out so far (index: cells ahead)."""
        return self._clear[j]

    def clear(self, j: int, k: int) -> int:
        """The free cells from which pair ``j`` flies ``k`` clear cells (0 past the longest)."""
        got = self._clear[j]
        if k < len(got):
            return got[k]
        n = self.nxt[j]
        other = self._clear[n]
        while len(got) <= k and got[-1]:
            m = len(got)
            a = _back(other[m - 1], self.step[j]) & self.free
            if n != j:
                other.append(_back(got[m - 1], self.step[n]) & self.free)
            got.append(a)
            self.work += 2 * self.nbits
        return got[k] if k < len(got) else 0


class TurnRound:
    """The turn-round bound for one goal with a heading, seen from one start (see the
    section comment): the layers so far (per (pair, speed) slice, the cells new in the
    last layer by their actions), each state's layer and actions (a byte each), the speed
    caps of the layers, and the fixed-turns action bounds for the states the layers do not
    hold."""

    #: rules -> {(goal, speeds, speed caps): bound}: kept for the rules' life.
    _kept: weakref.WeakKeyDictionary[MomentumRules, dict[Any, TurnRound]] = (
        weakref.WeakKeyDictionary()
    )
    _boards: weakref.WeakKeyDictionary[MomentumRules, _Board] = weakref.WeakKeyDictionary()

    @classmethod
    def of(
        cls, rules: MomentumRules, goal: Goal, start: FlightState, turn_points: int, fa: int
    ) -> TurnRound | None:
        """The bound for ``goal`` from ``start`` (None where it does not apply: no goal
        heading, moves with more than one turn point, or a start downed in flight), with
        ``fa`` actions a turn. Kept with the rules for the goal and the start's speeds."""
        if goal.heading is None or turn_points > 1 or start.downed:
            return None
        speeds, fastest = cls._speeds(rules, start, fa)
        kept = cls._kept.setdefault(rules, {})
        k = (goal, speeds, fastest)
        got = kept.get(k)
        if got is None:
            board = cls._boards.get(rules)
            if board is None:
                board = cls._boards[rules] = _Board(rules.geo, rules.blocked_cells.__contains__)
            if len(kept) >= TURN_ROUND_CACHE:
                kept.pop(next(iter(kept)))
            got = kept[k] = cls(rules, board, goal, speeds, fastest, fa)
        return got

    @staticmethod
    def _speeds(
        rules: MomentumRules, start: FlightState, fa: int
    ) -> tuple[frozenset[int], tuple[int, ...]]:
        """Every speed a flight from ``start`` can have (the layers' speeds), and the
        fastest it can be after 0, 1, 2, ... turns (-1 on the ground), up to its top."""
        if start.landed:
            first = [w for w, _ in rules._opts(start.speed, fa - 1)]
            fastest = [-1, max(first)]  # it takes off under the first cap
        else:
            first = [start.speed]
            fastest = [start.speed]
        seen = set(first)
        todo = list(first)
        while todo:
            for w, _ in rules._opts(todo.pop(), fa):
                if w not in seen:
                    seen.add(w)
                    todo.append(w)
        # From then on every flying option from every speed under the last cap, so a state
        # under a cap only ever moves to one under the next.
        top = max(seen)
        while fastest[-1] < top:
            cap = fastest[-1]
            nxt = max(w for v in seen if v <= cap for w, _ in rules._opts(v, fa))
            if nxt <= cap:
                break
            fastest.append(nxt)
        return frozenset(seen), tuple(fastest)

    def __init__(
        self,
        rules: MomentumRules,
        board: _Board,
        goal: Goal,
        speeds: frozenset[int],
        fastest: tuple[int, ...],
        fa: int,
    ) -> None:
        assert goal.heading is not None
        self.fa = fa  # actions a turn
        # Not a strong reference: the rules keep this (their cache entry) alive, not the
        # other way round.
        self.rules = cast("MomentumRules", weakref.proxy(rules))
        self.board = board
        self.goal = goal
        self.heading = goal.heading
        self.speeds = sorted(speeds)
        self.si = {v: i for i, v in enumerate(self.speeds)}
        self.ns = len(self.speeds)
        self.fastest = fastest
        #: Per speed: the fewest turns after which a flight from the start can have it.
        self.first_at = {
            v: next((g for g, c in enumerate(fastest) if c >= v), len(fastest)) for v in self.speeds
        }
        # The speed actions (the cheapest to each new speed, as expand makes them): for each
        # new speed, the old speeds and the actions they spend.
        self.preds: dict[int, list[tuple[int, int]]] = {}
        for v in self.speeds:
            for w, a in rules._opts(v, self.fa):
                self.preds.setdefault(w, []).append((v, a))
        geo = rules.geo
        self.step = geo.step
        #: New heading -> (pair before the turn, heading steps, the pair after it when the
        #: turn comes after an even number of cells, after an odd one), for every turn a
        #: move may make onto it.
        self.turns_onto: dict[int, list[tuple[int, int, int, int]]] = {}
        for j, (h, f) in enumerate(board.pairs):
            g = board.pairs[board.nxt[j]][1]
            for d, n in turn_options(self.step, self.fa + 1):
                h2 = (h + d) % 360
                even = board.pair[(h2, geo.first_face(h2, h, f))]
                odd = board.pair[(h2, geo.first_face(h2, h, g))]
                self.turns_onto.setdefault(h2, []).append((j, n, even, odd))
        self.field = rules.steps_to(goal.cell)
        self._fixed: list[dict[int, list[int]]] = []
        self.total = 0
        self._reset(1)

    def _reset(self, total: int) -> None:
        """Start the layers again for plans of ``total`` turns from the start."""
        slices = len(self.board.pairs) * self.ns
        self.total = total
        self.work_start = self.board.work
        self.reach = [0] * slices  # every state of the layers so far, per slice
        self.frontier: list[dict[int, int]] = [{} for _ in range(slices)]
        self.layers = 0
        self.done = False
        #: Per slice: the (layer, actions, cells) found, and made from them when a state of
        #: the slice is first looked up, each cell's layer (0: none yet) and actions.
        self.found: list[list[tuple[int, int, int]]] = [[] for _ in range(slices)]
        self.dist: list[bytearray | None] = [None] * slices
        self.acts: list[bytearray | None] = [None] * slices
        self._read = [0] * slices
        self._ground: dict[Key, tuple[int, tuple[int, int, bool] | None]] = {}

    def cap(self, r: int) -> int:
        """The fastest a state of layer ``r`` can be on a plan of :attr:`total` turns from
        the start (it is then ``total - r`` turns out); faster ones are in the layer by
        default."""
        g = self.total - r
        if g < 0:
            return -1
        return self.fastest[min(g, len(self.fastest) - 1)]

    def _by_default(self, v: int) -> int:
        """The first layer a state of speed ``v`` is in by default (too fast for it)."""
        return max(1, self.total - self.first_at[v] + 1)

    # ----------------------------------------------------------------- the bound

    def bound(self, key: Key, goal: Goal) -> tuple[int, int] | None:
        """(turns, actions) still needed at least (None: the goal is out of reach): a
        layer's for a state in one (its turns exact), else what the layers so far and the
        fixed-turns problem tell; the rules' own for a state the layers do not hold."""
        got = self._ground_bound(key) if key[4] else self._flying(key)
        if got is None:
            return None
        if got[0] >= 0:
            return got[0], got[1]
        return self.rules.bound(key, goal)  # not a state the layers hold

    def _slice(self, key: Key) -> int:
        """The (pair, speed) slice of a flying state; -1: one the layers do not hold."""
        i = self.si.get(key[2])
        if key[7] or i is None:
            return -1
        return self.board.pair[(key[1], key[5])] * self.ns + i

    def _flying(self, key: Key) -> tuple[int, int, bool] | None:
        """A flying state's (turns, actions, in a layer): its layer's when it is in one;
        else lower bounds from the layers so far and the fixed-turns actions ((-1, -1,
        False): not a state the layers hold); None: it cannot reach the goal."""
        s = self._slice(key)
        if s < 0:
            return -1, -1, False
        cell = self.board.index[key[0]]
        row = self._row(s)
        if row is not None and row[cell]:
            acts = self.acts[s]
            assert acts is not None
            return row[cell], acts[cell], True
        # Not in a layer yet: it needs more turns than the layers so far hold, unless it is
        # too fast for them (then it is only known to need its default layer's).
        t = self._by_default(key[2])
        if not self.done:
            t = min(t, self.layers + 1)
        d = self.field.get(key[0])
        if d is None:
            return None
        n = angle(key[1], self.heading) // self.step
        extra = int(self.goal.land)
        while t < _LAST:
            a = self._fixed_turns(t).get(key[2])
            if a is not None and a[min(d, len(a) - 1)] < _INF:
                return t, a[min(d, len(a) - 1)] + extra + max(0, n - t), False
            t += 1  # no plan of exactly t turns: it needs more
        return t, 0, False

    def _ground_bound(self, key: Key) -> tuple[int, int, bool] | None:
        """A flier on the ground: one turn more than its best take-off move (final when
        every take-off move's state is in a layer)."""
        got = self._ground.get(key)
        if got is not None and got[0] == self.layers:
            return got[1]
        best: tuple[int, int] | None = None
        exact = True
        for key2, acts, reached, _ in self.rules.expand(key, self.goal, 1):
            if reached:
                cand: tuple[int, int] | None = (1, acts)
            else:
                b = self._flying(key2)
                if b is not None and b[0] < 0:
                    self._ground[key] = (self.layers, (-1, -1, False))
                    return -1, -1, False
                if b is not None:
                    exact &= b[2]
                cand = None if b is None else (1 + b[0], acts + b[1])
            if cand is not None and (best is None or cand < best):
                best = cand
        out = None if best is None else (best[0], best[1], exact)
        self._ground[key] = (self.layers, out)
        return out

    def _unknown(self, key: Key) -> bool:
        """Whether more layers could raise ``key``'s bound."""
        if self.done:
            return False
        if key[4]:
            b = self._ground_bound(key)
            return b is not None and not b[2]
        s = self._slice(key)
        if s < 0:
            return False
        row = self._row(s)
        if row is not None and row[self.board.index[key[0]]]:
            return False
        return self.layers + 1 < self._by_default(key[2])

    def refine(self, key: Key, h: int, f: int, max_turns: int) -> tuple[int, int] | None:
        """``key``'s bound once the layers are as deep as ``h`` (the bound it was pushed
        with; ``f``: its turns so far and ``h``), or as deep as they may go. A plan longer
        than the layers' caps were set for starts them again, with the caps that length
        allows."""
        if f > self.total:
            self._reset(min(f + TOTAL_MARGIN, max_turns))
        need = min(h - 1 if key[4] else h, max_turns)
        while (
            self.layers < need
            and not self.done
            and self.board.work - self.work_start < TURN_ROUND_WORK
            and self._unknown(key)
        ):
            self._extend()
        return self.bound(key, self.goal)

    # ----------------------------------------------------------------- actions

    def _fixed_turns(self, t: int) -> dict[int, list[int]]:
        """Speed -> (distance -> the fewest speed actions of a plan of exactly ``t`` turns),
        ``_INF`` where there is none: the 1-D problem, each turn covering at most its speed,
        a landing's last turn at a safe speed with an action left to land."""
        fixed = self._fixed
        while len(fixed) < t:
            size = max(max(self.field.steps), 0) + 1
            out: dict[int, list[int]] = {}
            if not fixed:
                for v in self.speeds:
                    arr = np.full(size, _INF, dtype=np.int64)
                    for w, a in self.rules._opts(v, self.fa):
                        if self.goal.land:
                            if a > self.fa - 1 or w > self.rules.land_limit:
                                continue
                        elif w < 1:
                            continue
                        arr[: w + 1] = np.minimum(arr[: w + 1], a)
                    out[v] = arr.tolist()
            else:
                prev = {v: np.array(a, dtype=np.int64) for v, a in fixed[-1].items()}
                at = np.arange(size)
                for v in self.speeds:
                    arr = np.full(size, _INF, dtype=np.int64)
                    for w, a in self.rules._opts(v, self.fa):
                        before = prev.get(w)
                        if before is not None:
                            arr = np.minimum(arr, a + before[np.maximum(at - w, 0)])
                    out[v] = np.minimum(arr, _INF).tolist()
            fixed.append(out)
        return fixed[t - 1]

    # ----------------------------------------------------------------- the layers

    def _chains(self, h2: int, ends: dict[int, int], w: int) -> dict[int, list[int]]:
        """Per pair ``z`` of heading ``h2``: the cells that fly ``m`` clear cells along it
        into ``ends`` (by the pair they end on), for ``m`` up to ``w`` (shorter where empty)."""
        board = self.board
        js = board.of_heading[h2]
        out = {z: [ends.get(z, 0)] for z in js}
        free = board.free
        for m in range(1, w + 1):
            nonzero = False
            for z in js:
                prev = out[board.nxt[z]][m - 1]
                x = _back(prev, board.step[z]) & free if prev else 0
                out[z].append(x)
                nonzero |= bool(x)
            board.work += 2 * len(js) * board.nbits
            if not nonzero:
                break
        return out

    def _turning(self, j: int, even: list[int], odd: list[int], w: int) -> int:
        """The cells (on pair ``j``) whose move of ``w`` cells, turning after some ``k``
        clear cells, ends in a chain's ends: ``even`` / ``odd``, the chain of the pair the
        turn leaves it on after an even / odd ``k``. The union over ``k``."""
        board = self.board
        board.clear(j, w)  # the runs as far as they go (up to w)
        rooms = board.runs_of(j)
        a, b = board.step[j], board.step[board.nxt[j]]
        acc = 0
        done = 0
        for k in range(max(0, w - len(even) + 1), min(w, len(rooms) - 1) + 1):
            src = odd[w - k] if k & 1 else even[w - k]
            if src:
                o = ((k + 1) >> 1) * a + (k >> 1) * b
                acc |= (src >> o if o >= 0 else src << -o) & rooms[k]
                done += 1
        board.work += 3 * done * board.nbits
        return acc

    def _preds(self, r: int) -> dict[int, list[tuple[int, int]]]:
        """For layer ``r``: new speed -> (old speed, actions), old speeds within its cap."""
        cap = self.cap(r)
        out: dict[int, list[tuple[int, int]]] = {}
        for w, preds in self.preds.items():
            kept = [(v, a) for v, a in preds if v <= cap]
            if kept:
                out[w] = kept
        return out

    def _moves_into(
        self, h2: int, chains: dict[int, list[int]], w: int, most: int
    ) -> Iterator[tuple[int, int, int]]:
        """``(pair, heading steps turned, cells)``: for every pair, the cells whose move of
        ``w`` cells ends in the chains' ends on heading ``h2``, straight or turning once by
        at most ``most`` heading steps."""
        for j in self.board.of_heading[h2]:
            got = chains[j]
            if w < len(got) and got[w]:
                yield j, 0, got[w]
        for j, n, even, odd in self.turns_onto[h2]:
            if n <= most:
                acc = self._turning(j, chains[even], chains[odd], w)
                if acc:
                    yield j, n, acc

    def _first_layer(self, out: dict[tuple[int, int], int]) -> None:
        """Every flying state with one turn that reaches the goal, by its actions."""
        board, goal, big_h = self.board, self.goal, self.heading
        gbit = (1 << board.index[goal.cell]) & board.free
        if not gbit:
            return
        fa = self.fa
        geo = board.geo
        preds = self._preds(1)
        if goal.land:
            # Land on the goal, heading ``big_h`` (any face): a safe speed, an action left.
            ws = [w for w in preds if w <= self.rules.land_limit]
            if not ws:
                return
            chains = self._chains(big_h, {z: gbit for z in board.of_heading[big_h]}, max(ws))
            for w in ws:
                most = max(fa - a for _, a in preds[w])
                for j, n, acc in self._moves_into(big_h, chains, w, most):
                    for v, a in preds[w]:
                        if a <= fa - 1 and n <= fa - a:
                            _add(out, (a + max(0, n - 1) + 1, j * self.ns + self.si[v]), acc)
            return
        # Enter the goal on heading ``big_h``: a step along it into the goal, anywhere in a
        # clear move. ``hits[z][m]``: the cells (on pair z of big_h) whose m clear cells
        # along it pass through the goal.
        if not preds:
            return
        gp = geo.lat(goal.cell)
        wmax = max(preds)
        js = board.of_heading[big_h]
        hits: dict[int, list[int]] = {z: [0] for z in js}
        into = {}
        run = {}
        for z in js:
            vx, vy = geo.vec[board.pairs[z][1]]
            into[z] = board.bit((gp[0] - vx, gp[1] - vy))
            run[z] = self.rules.runs.free(goal.cell, big_h, board.pairs[z][1])
        for m in range(1, wmax + 1):
            for z in js:
                n2 = board.nxt[z]
                x = _back(hits[n2][m - 1], board.step[z]) & board.free
                if m - 1 <= run[n2]:
                    x |= into[z]
                hits[z].append(x)
            board.work += 2 * len(js) * board.nbits
        for w in preds:
            most = max(fa - a + 1 for _, a in preds[w])
            rows = list(self._moves_into(big_h, hits, w, most))
            # Through the goal before turning off its heading.
            for j in js:
                g2 = board.pairs[board.nxt[j]][1]
                for d, n in turn_options(self.step, most):
                    h2 = (big_h + d) % 360
                    f_even = board.pair[(h2, geo.first_face(h2, big_h, board.pairs[j][1]))]
                    f_odd = board.pair[(h2, geo.first_face(h2, big_h, g2))]
                    acc = 0
                    for k in range(1, w + 1):
                        hit = hits[j][k]
                        if not hit:
                            continue
                        rest = board.clear(f_odd if k & 1 else f_even, w - k)
                        if rest:
                            acc |= _back(rest, board.offset(j, k)) & hit
                            board.work += 3 * board.nbits
                    if acc:
                        rows.append((j, n, acc))
            for j, n, acc in rows:
                for v, a in preds[w]:
                    if n <= fa - a + 1:
                        _add(out, (a + max(0, n - 1), j * self.ns + self.si[v]), acc)

    def _next_layer(self, out: dict[tuple[int, int], int]) -> None:
        """Every flying state with a turn into the last layer, by its actions."""
        board, ns, fa = self.board, self.ns, self.fa
        last = self.frontier
        by_speed = self._preds(self.layers + 1)
        for h2, js in board.of_heading.items():
            for w, preds in by_speed.items():
                wi = self.si[w]
                classes = sorted({a for z in js for a in last[z * ns + wi]})
                most = max(fa - a + 1 for _, a in preds)
                merged = classes[:ACTION_CLASSES]
                for cost in merged:
                    ends = {}
                    for z in js:
                        got = last[z * ns + wi]
                        x = got.get(cost, 0)
                        if cost == merged[-1]:
                            for c2 in classes[ACTION_CLASSES:]:
                                x |= got.get(c2, 0)
                        if x:
                            ends[z] = x
                    chains = self._chains(h2, ends, w)
                    for j, n, acc in self._moves_into(h2, chains, w, most):
                        turn = max(0, n - 1)
                        for v, a in preds:
                            if n <= fa - a + 1:
                                _add(out, (cost + a + turn, j * ns + self.si[v]), acc)

    def _extend(self) -> None:
        """Work out one more layer (the first: from the goal itself): each state new in
        it takes the fewest actions it can reach the goal with in that many turns."""
        out: dict[tuple[int, int], int] = {}
        if self.layers:
            self._next_layer(out)
        else:
            self._first_layer(out)
        self.layers += 1
        frontier: list[dict[int, int]] = [{} for _ in self.reach]
        for cost, s in sorted(out):
            x = out[(cost, s)] & ~self.reach[s]
            if x:
                self.reach[s] |= x
                frontier[s][cost] = x
                self.found[s].append((self.layers, cost, x))
        self.frontier = frontier
        if not any(frontier):
            self.done = True

    def _row(self, s: int) -> bytearray | None:
        """Slice ``s``'s layers by cell (its actions in :attr:`acts`), brought up to date."""
        found = self.found[s]
        done = self._read[s]
        if done == len(found):
            return self.dist[s]
        nbits = self.board.nbits
        row, acts = self.dist[s], self.acts[s]
        if row is None or acts is None:
            row = self.dist[s] = bytearray(nbits)
            acts = self.acts[s] = bytearray(nbits)
        nbytes = (nbits + 7) // 8
        for layer, cost, x in found[done:]:
            bits = np.unpackbits(
                np.frombuffer(x.to_bytes(nbytes, "little"), dtype=np.uint8), bitorder="little"
            )[:nbits].astype(bool)
            np.frombuffer(row, dtype=np.uint8)[bits] = min(layer, 255)
            np.frombuffer(acts, dtype=np.uint8)[bits] = min(cost, 255)
        self._read[s] = len(found)
        return row


def _add(out: dict[tuple[int, int], int], k: tuple[int, int], cells: int) -> None:
    out[k] = out.get(k, 0) | cells
