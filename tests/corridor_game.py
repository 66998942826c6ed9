"""The rounds of a one-on-one chase along a one-row corridor, played out exactly in
Fractions: the game tree the dice-solve tests compare ``tacgrid solve`` against.

Each test module writes its own :class:`CorridorGame` from the rule text alone (which cells
a token may move to, and where a move may end with what chance); this part is only the
rounds: after each move a capture (next to each other), then an exit; the pursuer
maximises (P(capture), tie) and the quarry minimises it, the tie being sooner captures and
later escapes. No code of engine.solve is used."""

from __future__ import annotations

import functools
import math
from fractions import Fraction
from pathlib import Path
from typing import Any

from engine.scenario import Scenario, load_scenario
from engine.sim import FieldCache, Simulation
from engine.sim.view import solve_run
from engine.solve import DiceSolution

#: (P(capture), tie, P(escape)).
Value = tuple[Fraction, ...]


class CorridorGame:
    """The rounds; subclasses give :meth:`moves` and :meth:`outcomes`."""

    def __init__(self, row: str, exits: set[int], turns: int, pursuer_first: bool) -> None:
        self.row, self.exits, self.turns = row, exits, turns
        self.order = ("p", "q") if pursuer_first else ("q", "p")
        self.value = functools.cache(self._value)
        self.ply = functools.cache(self._ply)

    def moves(self, who: str, at: int, block: int | None) -> list[int]:
        """The cells ``who`` may move to from ``at`` (``block``: the pursuer's cell, for the
        quarry)."""
        raise NotImplementedError

    def outcomes(self, who: str, at: int, to: int) -> list[tuple[int, Fraction]]:
        """Where a move from ``at`` to ``to`` ends, with what chance."""
        raise NotImplementedError

    def arrive(self, p: int, q: int, rnd: int) -> Value | None:
        big = self.turns + 2
        if abs(p - q) <= 1:
            return (Fraction(1), Fraction(big - rnd), Fraction(0))
        if q in self.exits:
            return (Fraction(0), Fraction(rnd - big), Fraction(1))
        return None

    def _value(self, p: int, q: int, rnd: int) -> Value:
        """(P(capture), tie, P(escape)) at the start of round ``rnd``."""
        if rnd > self.turns:
            return (Fraction(0), Fraction(0), Fraction(0))
        return self.ply(self.order[0], p, q, rnd, second=False)

    def _ply(self, who: str, p: int, q: int, rnd: int, second: bool) -> Value:
        best: tuple[tuple[Fraction, Fraction], Value] | None = None
        at, other = (p, None) if who == "p" else (q, p)
        for m in self.moves(who, at, other):
            v = [Fraction(0)] * 3
            for end, pr in self.outcomes(who, at, m):
                p2, q2 = (end, q) if who == "p" else (p, end)
                after = self.arrive(p2, q2, rnd)
                if after is None:
                    if second:
                        after = self.value(p2, q2, rnd + 1)
                    else:
                        after = self.ply(self.order[1], p2, q2, rnd, second=True)
                v = [a + pr * b for a, b in zip(v, after, strict=True)]
            key = (v[0], v[1]) if who == "p" else (-v[0], -v[1])
            if best is None or key > best[0]:
                best = (key, tuple(v))
        assert best is not None
        return best[1]


def solved(path: Path, fields: FieldCache | None = None) -> DiceSolution:
    """``tacgrid solve``'s answer for the scenario at ``path``, with dice."""
    sc = load_scenario(str(path))
    got = solve_run(Simulation(sc, seed=0, fields=fields, record=False))
    assert isinstance(got, DiceSolution)
    return got


def played(
    sc: Scenario, fields: FieldCache, want: float, runs: int
) -> tuple[float, float, list[Any]]:
    """``runs`` seeded runs of ``sc`` (seeds 0 to ``runs`` - 1, sharing ``fields``): the
    rate of captures, the half-width of the 95% interval around the solved P(capture)
    ``want`` at that many runs, and the runs' results."""
    got = [Simulation(sc, seed=s, fields=fields, record=False).run() for s in range(runs)]
    rate = sum(r.outcome == "capture" for r in got) / runs
    return rate, 1.96 * math.sqrt(want * (1 - want) / runs), got
