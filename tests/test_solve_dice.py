"""`tacgrid solve` with dice (issue 39): the stochastic game's value by value iteration over
the exact check odds, checked against an expectimax written here from the map's drawing
alone (plain Python and Fractions, no code of engine.solve), and the solved policies'
seeded runs landing within the 95% interval of the solved chance of a capture."""

from __future__ import annotations

import functools
import json
import math
from fractions import Fraction
from pathlib import Path

import pytest
import tmxtext
from corridor_game import played

from engine.cli import main
from engine.scenario import load_scenario
from engine.sim import FieldCache, Simulation
from engine.sim.view import solve_run
from engine.solve import DiceSolution, Unsolvable

#: Mythmaster at sprint (its default pace), Base Move 6: 18 cells a turn walking, 3 swimming.
WALK, SWIM = Fraction(1, 18), Fraction(1, 3)


def p_swim(skill: int) -> Fraction:
    """A Swimming 21C in easy water (no adjustment): 2d10 + skill >= 21, counted by hand."""
    return Fraction(sum(1 for a in range(1, 11) for b in range(1, 11) if a + b + skill >= 21), 100)


def write(
    tmp: Path,
    row: str,
    *,
    quarry: int,
    pursuer: int,
    q_swim: int,
    p_swim_skill: int,
    turns: int,
    exits: tuple[int, ...] = (),
    capture: int = 1,
    pursuer_first: bool = False,
) -> Path:
    tmxtext.write(
        tmp / "m.tmx",
        [row],
        properties={"diagonals": "none"},
        objects=tmxtext.exit_objects([(c, 0) for c in exits]),
    )
    stats = "adaptability: 13, physical: 12"
    text = (
        f"map: m.tmx\nsystem: mythmaster\nturns: {turns}\nsolve: auto\n"
        f"goals: {{capture: {capture}}}\ntokens:\n"
    )
    q = (
        f"  - {{id: q, side: quarry, policy: quarry, cell: [{quarry}, 0], "
        f"stats: {{{stats}, swimming: {q_swim}}}}}\n"
    )
    p = (
        f"  - {{id: p, side: pursuer, policy: pursuer, cell: [{pursuer}, 0], "
        f"stats: {{{stats}, swimming: {p_swim_skill}}}}}\n"
    )
    text += p + q if pursuer_first else q + p
    path = tmp / "chase.yaml"
    path.write_text(text, encoding="utf-8")
    return path


class Expectimax:
    """The chase on a one-row corridor (the quarry moves first, or the pursuer): a move
    is any cell within a turn's time (walk 1/18, swim 1/3; the quarry may not pass or end on the pursuer), walked
    straight; entering water from dry ground, or as the first step of the turn, rolls the
    mover's swim (a failure ends the move on the cell before). After each move a capture
    (within ``capture`` cells), then an exit. The pursuer maximises (P(capture), tie) and the
    quarry minimises it, the tie sooner captures and later escapes."""

    def __init__(
        self,
        row: str,
        exits: set[int],
        capture: int,
        turns: int,
        odds: dict,  # type: ignore[type-arg]
        pursuer_first: bool = False,
    ) -> None:
        self.row, self.exits, self.capture, self.turns = row, exits, capture, turns
        self.odds = odds
        self.order = ("p", "q") if pursuer_first else ("q", "p")
        self.value = functools.cache(self._value)

    def moves(self, at: int, block: int | None) -> list[int]:
        out = [at]
        for d in (-1, 1):
            t, x = Fraction(0), at
            while 0 <= x + d < len(self.row) and x + d != block:
                x += d
                t += SWIM if self.row[x] == "~" else WALK
                if t > 1:
                    break
                out.append(x)
        return out

    def outcomes(self, side: str, at: int, to: int) -> list[tuple[int, Fraction]]:
        d = 1 if to > at else -1
        out, left, x = [], Fraction(1), at
        for step in range(abs(to - at)):
            nxt = x + d
            if self.row[nxt] == "~" and (step == 0 or self.row[x] != "~"):
                p = self.odds[side]
                out.append((x, left * (1 - p)))
                left *= p
            x = nxt
        out.append((x, left))
        return out

    def arrive(self, p: int, q: int, rnd: int, then: tuple) -> tuple:  # type: ignore[type-arg]
        big = self.turns + 2
        if abs(p - q) <= self.capture:
            return (Fraction(1), Fraction(big - rnd), Fraction(0))
        if q in self.exits:
            return (Fraction(0), Fraction(rnd - big), Fraction(1))
        return then

    def _value(self, p: int, q: int, rnd: int) -> tuple:  # type: ignore[type-arg]
        """(P(capture), tie, P(escape)) at the start of round ``rnd``."""
        if rnd > self.turns:
            return (Fraction(0), Fraction(0), Fraction(0))
        first = self.order[0]
        return self.ply(first, p, q, rnd, second=False)

    def ply(self, who: str, p: int, q: int, rnd: int, second: bool) -> tuple:  # type: ignore[type-arg]
        """``who`` moves (the round's ``second`` mover or its first); the best for it."""
        best = None
        at, other = (p, None) if who == "p" else (q, p)
        for m in self.moves(at, other):
            v = [Fraction(0)] * 3
            for end, pr in self.outcomes(who, at, m):
                p2, q2 = (end, q) if who == "p" else (p, end)
                after = self.arrive(p2, q2, rnd, None)
                if after is None:
                    if second:
                        after = self.value(p2, q2, rnd + 1)
                    else:
                        after = self.ply(self.order[1], p2, q2, rnd, second=True)
                v = [a + pr * b for a, b in zip(v, after, strict=True)]
            key = (v[0], v[1]) if who == "p" else (-v[0], -v[1])
            if best is None or key > best[0]:
                best = (key, v)
        assert best is not None
        return tuple(best[1])


def solved(path: Path) -> DiceSolution:
    sc = load_scenario(str(path))
    got = solve_run(Simulation(sc, seed=0, record=False))
    assert isinstance(got, DiceSolution)
    return got


def test_one_swim_to_the_exit_worked_by_hand(tmp_path: Path) -> None:
    # The quarry (q, x=7) must swim the one water cell (x=8) to the exit (x=9) within its
    # move of the only round; the pursuer (x=0) runs 18 cells a turn. Its Swimming 21C at
    # skill 6: 2d10 >= 15 on 21 of the 100 rolls (15: 6, 16: 5, 17: 4, 18: 3, 19: 2,
    # 20: 1). A success takes it in (1/3 + 1/18 of its turn) and out: an escape, 21/100.
    # A failure keeps it on x=7, where the pursuer comes next to it: P(capture) = 79/100.
    path = write(tmp_path, "........~.", quarry=7, pursuer=0, q_swim=6, p_swim_skill=6,
                 turns=1, exits=(9,))  # fmt: skip
    doc = solved(path).to_dict()
    assert doc["p"]["capture"] == pytest.approx(0.79, abs=1e-12)
    assert doc["p"]["escape"] == pytest.approx(0.21, abs=1e-12)
    assert doc["p"]["timeout"] == pytest.approx(0.0, abs=1e-12)
    assert doc["turns"] == pytest.approx(1.0)
    assert doc["dice"] is True and doc["arithmetic"] == "float64"
    assert doc["outcome"] == "capture"
    assert p_swim(6) == Fraction(21, 100)


CORRIDORS = [
    # row, quarry, pursuer, quarry's swim, pursuer's swim, turns, exits, capture, p first
    ("..~~......~...", 4, 0, 6, 8, 4, (13,), 1, False),
    ("....~.~.~.~...", 3, 0, 8, 4, 5, (13,), 1, False),
    ("~..~~....~....~..", 8, 0, 6, 6, 6, (), 1, False),
    ("..~...~~~..~..", 3, 12, 10, 6, 3, (0,), 1, False),
    ("..~~......~...", 4, 0, 6, 8, 4, (13,), 1, True),
    ("...~....~~..~....", 5, 0, 6, 10, 5, (16,), 1, True),
]


@pytest.mark.parametrize("case", CORRIDORS)
def test_values_equal_an_independent_expectimax(tmp_path: Path, case: tuple) -> None:  # type: ignore[type-arg]
    row, q, p, qs, ps, turns, exits, cap, first = case
    path = write(tmp_path, row, quarry=q, pursuer=p, q_swim=qs, p_swim_skill=ps, turns=turns,
                 exits=exits, capture=cap, pursuer_first=first)  # fmt: skip
    doc = solved(path).to_dict()
    odds = {"q": p_swim(qs), "p": p_swim(ps)}
    oracle = Expectimax(row, set(exits), cap, turns, odds, pursuer_first=first)
    pc, _, pe = oracle.value(p, q, 1)
    assert 0 < pc < 1 or 0 < pe < 1  # dice decide something
    assert doc["p"]["capture"] == pytest.approx(float(pc), abs=1e-9)
    assert doc["p"]["escape"] == pytest.approx(float(pe), abs=1e-9)
    assert doc["p"]["timeout"] == pytest.approx(float(1 - pc - pe), abs=1e-9)


@pytest.mark.parametrize("case", [CORRIDORS[0], CORRIDORS[5]])
def test_solved_policies_capture_within_the_interval(tmp_path: Path, case: tuple) -> None:  # type: ignore[type-arg]
    row, q, p, qs, ps, turns, exits, cap, first = case
    path = write(tmp_path, row, quarry=q, pursuer=p, q_swim=qs, p_swim_skill=ps, turns=turns,
                 exits=exits, capture=cap, pursuer_first=first)  # fmt: skip
    sc = load_scenario(str(path))
    fields = FieldCache(sc)
    solution = solve_run(Simulation(sc, seed=0, fields=fields, record=False))
    assert isinstance(solution, DiceSolution)
    want = solution.to_dict()["p"]["capture"]
    runs = 400
    rate, half, got = played(sc, fields, want, runs)
    assert 0 < want < 1
    assert abs(rate - want) <= half, (rate, want, half)
    ends = [r.turns for r in got]
    mean_end = sum(ends) / runs
    sd = math.sqrt(sum((t - mean_end) ** 2 for t in ends) / (runs - 1))
    assert abs(mean_end - solution.to_dict()["turns"]) <= 1.96 * sd / math.sqrt(runs)


def test_cli_json_and_text(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = write(tmp_path, "........~.", quarry=7, pursuer=0, q_swim=6, p_swim_skill=6,
                 turns=1, exits=(9,))  # fmt: skip
    assert main(["solve", str(path), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert set(doc) == {"kind", "outcome", "turns", "p", "states", "rounds_solved", "dice",
                        "arithmetic"}  # fmt: skip
    assert doc["rounds_solved"] == 1
    assert main(["solve", str(path)]) == 0
    out = capsys.readouterr().out
    assert "P(capture) 0.79" in out and "float64" in out


def test_refusals_in_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # A Speedpoints jump within 1 m of the longest asks a roll whose failure falls into
    # the gap, a pit climbed out of over turns: solved (tests/test_solve_pitclimb.py).
    tmxtext.write(tmp_path / "m.tmx", ["....OO...."], properties={"diagonals": "none"})
    text = (
        "map: m.tmx\nsystem: speedpoints\nturns: 3\ngoals: {capture: 1}\ntokens:\n"
        "  - {id: q, side: quarry, policy: quarry, cell: [8, 0], "
        "stats: {running: 5, acrobatics: 2}}\n"
        "  - {id: p, side: pursuer, policy: pursuer, cell: [0, 0], "
        "stats: {running: 5, acrobatics: 2}}\n"
    )
    (tmp_path / "c.yaml").write_text(text, encoding="utf-8")
    assert main(["solve", str(tmp_path / "c.yaml")]) == 0
    assert "P(capture)" in capsys.readouterr().out
    # Whisperspace: a swim's result changes the rest of the Move action (a penalty).
    tmxtext.write(tmp_path / "w.tmx", ["..~~~~.."], properties={"diagonals": "none"})
    text = (
        "map: w.tmx\nsystem: whisperspace\nturns: 3\ngoals: {capture: 1}\ntokens:\n"
        "  - {id: q, side: quarry, policy: quarry, cell: [3, 0]}\n"
        "  - {id: p, side: pursuer, policy: pursuer, cell: [0, 0]}\n"
    )
    (tmp_path / "w.yaml").write_text(text, encoding="utf-8")
    assert main(["solve", str(tmp_path / "w.yaml")]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "solve" in err


def test_too_many_values_refused(tmp_path: Path) -> None:
    path = write(tmp_path, "........~.", quarry=7, pursuer=0, q_swim=6, p_swim_skill=6,
                 turns=1, exits=(9,))  # fmt: skip
    sc = load_scenario(str(path))
    import engine.solve as solve_mod

    old = solve_mod.MAX_DICE_VALUES
    solve_mod.MAX_DICE_VALUES = 10
    try:
        with pytest.raises(Unsolvable, match="values with dice"):
            solve_run(Simulation(sc, seed=0, record=False))
    finally:
        solve_mod.MAX_DICE_VALUES = old


def test_speedpoints_ladder_batch_within_the_interval(tmp_path: Path) -> None:
    # A Speedpoints climbing roll on each ladder (difficulty 0): a failure loses the grip
    # below it (a fall of 2 m onto hard ground: no roll, ``fell`` until the next turn,
    # which changes no profile); the quarry climbs two ladders to its exit.
    row = "..........H.H..."
    objs = (
        '<objectgroup name="o"><object id="1" name="e" type="exit" x="480" y="0" '
        'width="32" height="32"/></objectgroup>'
    )
    tmxtext.write(tmp_path / "m.tmx", [row], properties={"diagonals": "none"}, objects=objs)
    text = (
        "map: m.tmx\nsystem: speedpoints\nturns: 4\nsolve: auto\ngoals: {capture: 1}\n"
        "tokens:\n"
        "  - {id: q, side: quarry, policy: quarry, cell: [8, 0], "
        "stats: {running: 4, climbing: 1}}\n"
        "  - {id: p, side: pursuer, policy: pursuer, cell: [0, 0], "
        "stats: {running: 6, climbing: 1}}\n"
    )
    (tmp_path / "c.yaml").write_text(text, encoding="utf-8")
    sc = load_scenario(str(tmp_path / "c.yaml"))
    fields = FieldCache(sc)
    solution = solve_run(Simulation(sc, seed=0, fields=fields, record=False))
    assert isinstance(solution, DiceSolution)
    doc = solution.to_dict()
    want = doc["p"]["capture"]
    assert 0.2 < want < 0.8 and doc["p"]["escape"] > 0.2
    rate, half, _ = played(sc, fields, want, 400)
    assert abs(rate - want) <= half, (rate, want, half)


def test_open_ground_batch_within_the_interval(tmp_path: Path) -> None:
    # Open ground with diagonals, walls and water, the pursuer in the quarry's way
    # (tokens_block: enemies): the quarry swims the water column to the exits beyond it.
    rows = [
        "........~.",
        ".#......~.",
        "..~...#.~.",
        "...#....~.",
        "........~.",
        "..~~#...~.",
        "........~.",
        "....#...~.",
    ]
    objs = "".join(
        f'<object id="{r + 1}" name="e{r}" type="exit" x="288" y="{r * 32}" width="32" '
        'height="32"/>'
        for r in range(len(rows))
    )
    tmxtext.write(
        tmp_path / "m.tmx",
        rows,
        properties={"diagonals": "equal"},
        objects=f'<objectgroup name="o">{objs}</objectgroup>',
    )
    text = (
        "map: m.tmx\nsystem: mythmaster\nturns: 6\nsolve: auto\ngoals: {capture: 1}\n"
        "tokens:\n"
        "  - {id: q, side: quarry, policy: quarry, pace: run, cell: [6, 6], "
        "stats: {adaptability: 13, physical: 12, swimming: 6}}\n"
        "  - {id: p, side: pursuer, policy: pursuer, pace: run, cell: [0, 0], "
        "stats: {adaptability: 14, physical: 12, swimming: 6}}\n"
    )
    (tmp_path / "c.yaml").write_text(text, encoding="utf-8")
    sc = load_scenario(str(tmp_path / "c.yaml"))
    fields = FieldCache(sc)
    solution = solve_run(Simulation(sc, seed=0, fields=fields, record=False))
    assert isinstance(solution, DiceSolution)
    want = solution.to_dict()["p"]["capture"]
    assert 0.1 < want < 0.9
    rate, half, _ = played(sc, fields, want, 400)
    assert abs(rate - want) <= half, (rate, want, half)


def test_too_many_moves_refused(tmp_path: Path) -> None:
    path = write(tmp_path, "........~.", quarry=7, pursuer=0, q_swim=6, p_swim_skill=6,
                 turns=1, exits=(9,))  # fmt: skip
    sc = load_scenario(str(path))
    import engine.solve as solve_mod

    old = solve_mod.MAX_DICE_MOVES
    solve_mod.MAX_DICE_MOVES = 10
    try:
        with pytest.raises(Unsolvable, match="moves with dice") as err:
            solve_run(Simulation(sc, seed=0, record=False))
        assert "\n" not in str(err.value) and "limit 10" in str(err.value)
    finally:
        solve_mod.MAX_DICE_MOVES = old
