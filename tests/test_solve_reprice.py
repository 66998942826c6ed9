"""`tacgrid solve` with Whisperspace swims (issue 39): a swim check's result re-prices the
rest of the Move action it was rolled in (extreme success -1 movement penalty, failure
+1), and the turn loop walks on from where the token stands on the way for what it has
become, until that Move action ends. Checked against an expectimax written here from the
rules alone (plain Python and Fractions, no code of engine.solve), and by seeded runs of
the solved policies inside the 95% interval of the solved chance of a capture."""

from __future__ import annotations

import functools
import math
from fractions import Fraction
from pathlib import Path

import pytest
import tmxtext
from corridor_game import CorridorGame, played, solved

from engine.cli import main
from engine.scenario import load_scenario
from engine.sim import FieldCache

#: Move actions a turn at each pace (seed 000: a turn has 3 actions).
ACTIONS = {"walk": 1, "sprint": 3}


def swim_odds(athletics: int) -> list[tuple[int, Fraction]]:
    """A swim in easy water, 1d12 + athletics against DC 6, counted by hand: each degree
    as the movement penalty it sets for the rest of the Move action (extreme success, 10
    or more: -1; success: 0; failure, 5 or less: +1; extreme failure, 2 or less: none with
    the athletics these chases give)."""
    out: dict[int, Fraction] = {}
    for d in range(1, 13):
        total = d + athletics
        assert total > 2, "no extreme failure (Asphyxiating lasts: not solved)"
        pen = -1 if total >= 10 else 0 if total >= 6 else 1
        out[pen] = out.get(pen, Fraction(0)) + Fraction(1, 12)
    return sorted(out.items())


def write(
    tmp: Path,
    row: str,
    *,
    quarry: tuple[int, int, int],
    pursuer: tuple[int, int, int],
    pace: str,
    turns: int,
    exits: tuple[int, ...] = (),
    pursuer_first: bool = False,
) -> Path:
    """A Whisperspace corridor; ``quarry``/``pursuer``: (cell, PHYS, athletics)."""
    tmxtext.write(
        tmp / "m.tmx",
        [row],
        properties={"diagonals": "none"},
        objects=tmxtext.exit_objects([(c, 0) for c in exits]),
    )
    head = f"map: m.tmx\nsystem: whisperspace\nturns: {turns}\nsolve: auto\ngoals: {{capture: 1}}\n"
    q = (
        f"  - {{id: q, side: quarry, policy: quarry, pace: {pace}, cell: [{quarry[0]}, 0], "
        f"stats: {{phys: {quarry[1]}, athletics: {quarry[2]}}}}}\n"
    )
    p = (
        f"  - {{id: p, side: pursuer, policy: pursuer, pace: {pace}, cell: [{pursuer[0]}, 0], "
        f"stats: {{phys: {pursuer[1]}, athletics: {pursuer[2]}}}}}\n"
    )
    path = tmp / "chase.yaml"
    path.write_text(head + "tokens:\n" + (p + q if pursuer_first else q + p), encoding="utf-8")
    return path


class Expectimax(CorridorGame):
    """The chase on a one-row corridor of 5-ft cells. Speed 30 + 5 x PHYS ft a Move
    action walking; swimming 20 ft less (its +2 penalty), 10 ft less or more again while a
    swim result's penalty lasts; a cell takes 5 ft of a Move action, a turn is ``actions``
    of them. A move is any cell within a turn at its own speeds (the quarry may not pass
    or end on the pursuer), walked straight. Entering water rolls the swim where the cell
    starts a new stretch of water or falls in a new Move action (counted at the end of the
    step into it). A result that changes the token's speed sends it on from the cell
    before, at its new speed, as far as the Move action the roll fell in lets it (to the
    turn's end at one Move action a turn); there the result ends, and the rest of the turn
    goes on from that Move action's end at its own speed. After each move a capture (next
    to each other), then an exit."""

    def __init__(
        self,
        row: str,
        exits: set[int],
        turns: int,
        speed: dict[str, int],
        odds: dict[str, list[tuple[int, Fraction]]],
        actions: int,
        pursuer_first: bool,
    ) -> None:
        super().__init__(row, exits, turns, pursuer_first)
        self.speed, self.odds, self.actions = speed, odds, actions
        self.outcomes = functools.cache(self._outcomes)

    def cost(self, who: str, cell: int, pen: int) -> Fraction:
        ft = self.speed[who] - (10 * (2 + pen) if self.row[cell] == "~" else 0)
        return Fraction(5, self.actions * ft)

    def run_of(self, cell: int) -> int:
        while cell > 0 and self.row[cell - 1] == self.row[cell]:
            cell -= 1
        return cell

    def moves(self, who: str, at: int, block: int | None) -> list[int]:
        out = [at]
        for d in (-1, 1):
            t, x = Fraction(0), at
            while 0 <= x + d < len(self.row) and x + d != block:
                x += d
                t += self.cost(who, x, 0)
                if t > 1:
                    break
                out.append(x)
        return out

    def _outcomes(self, who: str, at: int, to: int) -> list[tuple[int, Fraction]]:
        ends: dict[int, Fraction] = {}
        d = 1 if to > at else -1
        a = self.actions

        def leg(pos: int, t0: Fraction, pen: int, key: tuple[int, int], until, p) -> None:  # type: ignore[no-untyped-def]
            limit = min(1 if until is None else until, 1)
            plan, t, x = [], t0, pos
            while x != to and t + self.cost(who, x + d, pen) <= limit:
                x += d
                t += self.cost(who, x, pen)
                plan.append(x)
            walk(pos, t0, pen, key, until, p, plan)

        def walk(pos, t, pen, key, until, p, plan) -> None:  # type: ignore[no-untyped-def]
            for i, c in enumerate(plan):
                t_end = t + self.cost(who, c, pen)
                k = (self.run_of(c), math.ceil(t_end * a))
                if self.row[c] == "~" and k != key:
                    for pen2, pd in self.odds[who]:
                        if pen2 == pen:  # the same speed: on along the plan
                            walk(pos, t, pen, k, until, p * pd, plan[i:])  # rolled below
                        else:
                            then = None if a == 1 else Fraction(math.ceil(t_end * a), a)
                            leg(pos, t, pen2, k, then, p * pd)
                    return
                key, t, pos = k, t_end, c
            if until is None or until >= 1:
                ends[pos] = ends.get(pos, Fraction(0)) + p
                return
            t = max(t, until)
            if t >= 1:
                ends[pos] = ends.get(pos, Fraction(0)) + p
                return
            leg(pos, t, 0, key, None, p)

        leg(at, Fraction(0), 0, (self.run_of(at), 0), None, Fraction(1))
        return sorted(ends.items())


CORRIDORS = [
    # row, quarry (cell, PHYS, athletics), pursuer, pace, turns, exits, pursuer first
    ("......~~~~~~......", (5, 2, 2), (0, 3, 2), "walk", 4, (17,), False),
    ("......~~~~~~......", (5, 2, 2), (0, 3, 2), "sprint", 4, (17,), False),
    ("......~~~~~~......", (8, 3, 2), (0, 2, 2), "walk", 4, (17,), True),
    ("..~~~~....~~~~~~...", (8, 1, 4), (3, 2, 2), "sprint", 4, (0, 18), False),
]


@pytest.mark.parametrize("case", CORRIDORS)
def test_values_equal_an_independent_expectimax(tmp_path: Path, case: tuple) -> None:  # type: ignore[type-arg]
    row, q, p, pace, turns, exits, first = case
    path = write(tmp_path, row, quarry=q, pursuer=p, pace=pace, turns=turns, exits=exits,
                 pursuer_first=first)  # fmt: skip
    doc = solved(path).to_dict()
    oracle = Expectimax(row, set(exits), turns, {"q": 30 + 5 * q[1], "p": 30 + 5 * p[1]},
                        {"q": swim_odds(q[2]), "p": swim_odds(p[2])}, ACTIONS[pace],
                        first)  # fmt: skip
    pc, _, pe = oracle.value(p[0], q[0], 1)
    assert 0 < pc < 1 and 0 < pe < 1  # the swims decide something
    assert doc["p"]["capture"] == pytest.approx(float(pc), abs=1e-9)
    assert doc["p"]["escape"] == pytest.approx(float(pe), abs=1e-9)
    assert doc["p"]["timeout"] == pytest.approx(float(1 - pc - pe), abs=1e-9)


@pytest.mark.parametrize("case", [CORRIDORS[1], CORRIDORS[3]])
def test_solved_policies_capture_within_the_interval(tmp_path: Path, case: tuple) -> None:  # type: ignore[type-arg]
    row, q, p, pace, turns, exits, first = case
    path = write(tmp_path, row, quarry=q, pursuer=p, pace=pace, turns=turns, exits=exits,
                 pursuer_first=first)  # fmt: skip
    sc = load_scenario(str(path))
    fields = FieldCache(sc)
    want = solved(path, fields).to_dict()["p"]["capture"]
    rate, half, _ = played(sc, fields, want, 400)
    assert 0 < want < 1
    assert abs(rate - want) <= half, (rate, want, half)


def test_a_lasting_result_stays_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # Athletics 1: a 1 on the d12 is an extreme failure, Asphyxiating, which lasts while
    # the token stays in the water: refused in one line naming the token and the check.
    path = write(tmp_path, "......~~~~~~......", quarry=(5, 2, 1), pursuer=(0, 3, 2),
                 pace="walk", turns=3, exits=(17,))  # fmt: skip
    assert main(["solve", str(path)]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1
    assert "token q's athletics (swim) at extreme_failure" in err and "asphyxiating" in err


def test_a_climb_whose_results_re_price_it_plays_at_the_solved_rate(tmp_path: Path) -> None:
    # Two cells of a difficult 10-ft wall (DC 12): athletics 8 makes an extreme failure (a
    # fall) impossible, so each climbing roll only slows or speeds the rest of the Move
    # action. The quarry climbs over it to the exit beyond.
    objs = (
        '<objectgroup name="o"><object id="1" name="e" type="exit" x="480" y="0" '
        'width="32" height="32"/></objectgroup>'
    )
    tmxtext.write(tmp_path / "m.tmx", [".......^^......."], properties={"diagonals": "none"},
                  objects=objs)  # fmt: skip
    text = (
        "map: m.tmx\nsystem: whisperspace\nturns: 4\nsolve: auto\ngoals: {capture: 1}\n"
        "tokens:\n"
        "  - {id: q, side: quarry, policy: quarry, pace: sprint, cell: [5, 0], "
        "stats: {phys: 2, athletics: 8}}\n"
        "  - {id: p, side: pursuer, policy: pursuer, pace: sprint, cell: [0, 0], "
        "stats: {phys: 3, athletics: 8}}\n"
    )
    (tmp_path / "c.yaml").write_text(text, encoding="utf-8")
    sc = load_scenario(str(tmp_path / "c.yaml"))
    fields = FieldCache(sc)
    want = solved(tmp_path / "c.yaml", fields).to_dict()["p"]["capture"]
    rate, half, _ = played(sc, fields, want, 400)
    assert 0 < want < 1
    assert abs(rate - want) <= half, (rate, want, half)
