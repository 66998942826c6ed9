"""`tacgrid solve` with Mythmaster skill climbs over turns (issue 39): the climb's progress
is part of the position (the foot, the cell climbed toward, the share climbed), each turn's
climb drawn from the Climbing 21C's exact odds. Checked against an expectimax written here
from the seed's words alone (Fractions, no code of engine.solve) and by 400 seeded runs of
the solved policies landing within the 95% interval of the solved chance of a capture.

Seed 002 says of skill climbing: "Speed of movement while using the Climbing skill is based
on the difficulty of the climb, starting at 1/10 Base Move for Normal Difficulty"; "Using
the climbing skill to move uses all of your actions for the turn"; "this is the rate of
movement per turn when you succeed your 21C using Climbing Skill - if you fail the roll you
don't move at all. Critical failure leads to a slip and a regression, requiring another
Climbing roll to avoid a fall". RULES.md 2 reads the critical failure as a natural 2, the
slip as the loss of a success's progress (not below the foot) and the fall as a return to
the foot; a natural 20 succeeds.
"""

from __future__ import annotations

import math
from fractions import Fraction
from pathlib import Path

import pytest
import tmxtext
from corridor_game import CorridorGame, played, solved

from engine.cli import main
from engine.scenario import load_scenario
from engine.sim import FieldCache, Simulation
from engine.sim.view import solve_run
from engine.solve import DiceSolution

#: An easy ("Normal") cliff one hex (2 m) high: tmxtext's cliff, redrawn.
CLIFF = (
    '<property name="difficulty" value="difficult"/>'
    '<property name="height" type="float" value="10.0"/>'
)
EASY_CLIFF = (
    '<property name="difficulty" value="easy"/><property name="height" type="float" value="2.0"/>'
)


def base_move(adaptability: int) -> int:
    """Seed 002: Base Move = Adaptability x 0.44, rounded half up."""
    return math.floor(Fraction(adaptability) * Fraction(44, 100) + Fraction(1, 2))


def p_climb(skill: int) -> Fraction:
    """A Climbing 21C on a Normal climb (no adjustment): 2d10 + skill >= 21, a natural 20
    always, a natural 2 never, counted by hand."""
    hits = sum(
        1
        for a in range(1, 11)
        for b in range(1, 11)
        if (a + b + skill >= 21 or a + b == 20) and a + b != 2
    )
    return Fraction(hits, 100)


def write(
    tmp: Path,
    row: str,
    *,
    quarry: tuple[int, int, int],
    pursuer: tuple[int, int, int],
    turns: int,
    exits: tuple[int, ...] = (),
    pursuer_first: bool = False,
) -> Path:
    """A one-row Mythmaster chase at walking pace; each token ``(cell, adaptability,
    climbing)``; the pursuer is in the quarry's way (``tokens_block: enemies``)."""
    drawn = row.replace("q", ".").replace("p", ".")
    text = tmxtext.tmx(
        [drawn],
        properties={"diagonals": "none"},
        objects=tmxtext.exit_objects([(c, 0) for c in exits]),
    )
    assert text.count(CLIFF) == 1
    (tmp / "m.tmx").write_text(text.replace(CLIFF, EASY_CLIFF), encoding="utf-8")
    lines = []
    for tid, side, (cell, adapt, climbing) in (("q", "quarry", quarry), ("p", "pursuer", pursuer)):
        lines.append(
            f"  - {{id: {tid}, side: {side}, policy: {side}, pace: walk, cell: [{cell}, 0], "
            f"stats: {{adaptability: {adapt}, physical: 12, climbing: {climbing}}}}}\n"
        )
    if pursuer_first:
        lines.reverse()
    path = tmp / "chase.yaml"
    path.write_text(
        f"map: m.tmx\nsystem: mythmaster\nturns: {turns}\nsolve: auto\n"
        "goals: {capture: 1}\nsettings: {tokens_block: enemies}\ntokens:\n" + "".join(lines),
        encoding="utf-8",
    )
    return path


#: A position in the oracle: (cell stood on, cell climbed toward or None, share climbed).
Pos = tuple[int, int | None, Fraction]


class ClimbCorridor(CorridorGame):
    """The chase on a one-row corridor of walking cells (``.``) and Normal climb cells
    (``^``): a turn's walk reaches any cell within ``BM`` cells that is no climb (the quarry
    not into nor past where the pursuer is reached); a climb takes the whole turn, into a
    climb cell next to where the token stands: ``BM / 10`` hexes on a success, nothing on a
    failure, on a natural 2 with some climbed a success's worth lost and a re-roll at once,
    whose failure is a fall to where it climbed from; a whole hex climbed is the climb cell
    entered, and what is climbed beyond it carries on into the next climb cell while the
    token climbs on (seed 002's progress that "carries over"; RULES.md 2: "progress carries
    over between turns while the mode stays the same"). A climber partway up is reached at
    the cell it climbs to; a token that walks off loses what it made of the climb."""

    def __init__(
        self,
        row: str,
        exits: set[int],
        turns: int,
        pursuer_first: bool,
        stats: dict,  # type: ignore[type-arg]
    ) -> None:
        super().__init__(row, exits, turns, pursuer_first)
        self.stats = stats  # who: (Base Move, P(success))

    def reach(self, pos: Pos) -> int:
        at, top, share = pos
        return top if top is not None and share > 0 else at

    def arrive(self, p: Pos, q: Pos, rnd: int) -> tuple | None:  # type: ignore[override, type-arg]
        big = self.turns + 2
        if abs(self.reach(p) - self.reach(q)) <= 1:
            return (Fraction(1), Fraction(big - rnd), Fraction(0))
        if q[0] in self.exits:
            return (Fraction(0), Fraction(rnd - big), Fraction(1))
        return None

    def moves(self, who: str, at: Pos, block: Pos | None) -> list:  # type: ignore[override, type-arg]
        bm = self.stats[who][0]
        x = at[0]
        wall = None if block is None else self.reach(block)
        out: list[tuple[str, int]] = [("walk", x)]
        for d in (-1, 1):
            y = x
            for _ in range(bm):
                if not 0 <= y + d < len(self.row) or self.row[y + d] == "^" or y + d == wall:
                    break
                y += d
                out.append(("walk", y))
            if 0 <= x + d < len(self.row) and self.row[x + d] == "^" and x + d != wall:
                out.append(("climb", x + d))
        return out

    def outcomes(self, who: str, at: Pos, to: tuple[str, int]) -> list:  # type: ignore[override, type-arg]
        kind, y = to
        x, top, share = at
        if kind == "walk":
            kept = y == x and top is None  # staying in a climb cell keeps what it made
            return [(at if kept else (y, None, Fraction(0)), Fraction(1))]
        bm, p = self.stats[who]
        step = Fraction(bm, 10)
        on = top == y or (top is None and self.row[x] == "^")
        share = share if on else Fraction(0)
        nat2 = Fraction(1, 100)

        def pos(s: Fraction) -> Pos:
            if s >= 1:
                return (y, None, s - 1)
            return (x, y, s) if s > 0 else (x, None, Fraction(0))

        out = [(pos(share + step), p)]
        if share > 0:
            out.append((pos(share), 1 - p - nat2))
            out.append((pos(max(Fraction(0), share - step)), nat2 * p))  # holds on
            out.append((pos(Fraction(0)), nat2 * (1 - p)))  # falls where it climbed from
        else:
            out.append((pos(share), 1 - p))
        return out


CORRIDORS = [
    # row, (quarry cell, adaptability, climbing), pursuer, turns, exits, pursuer first
    ("......q^...", (6, 13, 8), (0, 5, 8), 5, (10,), False),
    ("q.....^.p", (0, 5, 8), (8, 13, 10), 5, (), False),
    ("..^q......p", (3, 13, 9), (10, 7, 12), 6, (0,), False),
    ("q....^..p", (0, 5, 8), (8, 13, 10), 5, (), True),
    ("..^q...^..p", (3, 13, 9), (10, 9, 10), 6, (0,), True),  # both climb
    # Climbs of more than one cell: what is made beyond a cell carries into the next.
    ("q...^^....p", (0, 5, 8), (10, 13, 10), 6, (), False),
    ("..^^q......p", (4, 13, 9), (11, 7, 12), 7, (0,), False),
    ("q..^^^...p", (0, 5, 8), (9, 13, 12), 8, (), True),
]


def oracle(case: tuple) -> ClimbCorridor:  # type: ignore[type-arg]
    row, q, p, turns, exits, first = case
    stats = {"q": (base_move(q[1]), p_climb(q[2])), "p": (base_move(p[1]), p_climb(p[2]))}
    return ClimbCorridor(row, set(exits), turns, first, stats)


def path_of(tmp: Path, case: tuple) -> Path:  # type: ignore[type-arg]
    row, q, p, turns, exits, first = case
    return write(tmp, row, quarry=q, pursuer=p, turns=turns, exits=exits, pursuer_first=first)


def test_the_seed_odds() -> None:
    # Adaptability 13: 5.72, Base Move 6; a Normal climb 6/10 hex a success, two to a hex.
    assert base_move(13) == 6 and base_move(5) == 2
    # Skill 8: 2d10 >= 13 on 36 of the 100 rolls.
    assert p_climb(8) == Fraction(36, 100)


def test_climb_turn_outcomes_are_the_turn_loops_climb(tmp_path: Path) -> None:
    # The system's list (the solve's hook) against climb_turn rolled 20,000 times.
    from engine.dice import Dice

    sc = load_scenario(str(path_of(tmp_path, CORRIDORS[0])))
    tok = Simulation(sc, seed=0).tokens["q"].moved(mode="climb", toward=(7, 0))
    terrain = sc.model.terrain_at((7, 0))
    for share in (Fraction(0), Fraction(3, 5)):
        got = sc.system.climb_turn_outcomes(tok.moved(progress=share), terrain)
        assert sum(p for _, p in got) == 1
        dice = Dice(7)
        counts: dict = {}  # type: ignore[type-arg]
        n = 20_000
        for _ in range(n):
            after, _rolls = sc.system.climb_turn(tok.moved(progress=share), terrain, dice)
            counts[after.state] = counts.get(after.state, 0) + 1
        assert set(counts) <= {t.state for t, _ in got}
        for t, p in got:
            f = counts.get(t.state, 0) / n
            assert abs(f - float(p)) <= 5 * math.sqrt(float(p * (1 - p)) / n) + 1e-9


@pytest.mark.parametrize("case", CORRIDORS)
def test_values_equal_an_independent_expectimax(tmp_path: Path, case: tuple) -> None:  # type: ignore[type-arg]
    row, q, p, turns, exits, first = case
    doc = solved(path_of(tmp_path, case)).to_dict()
    game = oracle(case)
    pc, _, pe = game.value((p[0], None, Fraction(0)), (q[0], None, Fraction(0)), 1)
    assert 0 < pc < 1 or 0 < pe < 1  # dice decide something
    assert doc["p"]["capture"] == pytest.approx(float(pc), abs=1e-9)
    assert doc["p"]["escape"] == pytest.approx(float(pe), abs=1e-9)


def test_cli_json(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    import json

    case = CORRIDORS[0]
    assert main(["solve", str(path_of(tmp_path, case)), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    pc, _, pe = oracle(case).value((0, None, Fraction(0)), (6, None, Fraction(0)), 1)
    assert doc["dice"] is True and doc["arithmetic"] == "float64"
    assert doc["p"]["capture"] == pytest.approx(float(pc), abs=1e-9)
    assert doc["p"]["escape"] == pytest.approx(float(pe), abs=1e-9)


@pytest.mark.parametrize("case", [CORRIDORS[0], CORRIDORS[1], CORRIDORS[7]])
def test_solved_policies_capture_within_the_interval(tmp_path: Path, case: tuple) -> None:  # type: ignore[type-arg]
    sc = load_scenario(str(path_of(tmp_path, case)))
    fields = FieldCache(sc)
    solution = solve_run(Simulation(sc, seed=0, fields=fields, record=False))
    assert isinstance(solution, DiceSolution)
    want = solution.to_dict()["p"]["capture"]
    assert 0.1 < want < 0.9
    rate, half, _ = played(sc, fields, want, 400)
    assert abs(rate - want) <= half, (rate, want, half)


def test_open_ground_batch_within_the_interval(tmp_path: Path) -> None:
    # A wall with one cliff cell across open ground (diagonals count as steps): the quarry
    # climbs out from whichever foot it holds, the exits beyond; the pursuer closes in.
    rows = [
        "......#..",
        ".#....^..",
        "......#..",
        "..#...#..",
        "......#..",
    ]
    text = tmxtext.tmx(
        rows,
        properties={"diagonals": "equal"},
        objects=tmxtext.exit_objects([(8, r) for r in range(len(rows))]),
    )
    (tmp_path / "m.tmx").write_text(text.replace(CLIFF, EASY_CLIFF), encoding="utf-8")
    (tmp_path / "c.yaml").write_text(
        "map: m.tmx\nsystem: mythmaster\nturns: 6\nsolve: auto\ngoals: {capture: 1}\n"
        "settings: {tokens_block: enemies}\ntokens:\n"
        "  - {id: q, side: quarry, policy: quarry, pace: walk, cell: [5, 2], "
        "stats: {adaptability: 13, physical: 12, climbing: 9}}\n"
        "  - {id: p, side: pursuer, policy: pursuer, pace: walk, cell: [0, 0], "
        "stats: {adaptability: 5, physical: 12, climbing: 9}}\n",
        encoding="utf-8",
    )
    sc = load_scenario(str(tmp_path / "c.yaml"))
    fields = FieldCache(sc)
    solution = solve_run(Simulation(sc, seed=0, fields=fields, record=False))
    assert isinstance(solution, DiceSolution) and solution.climbs is not None
    want = solution.to_dict()["p"]["capture"]
    assert 0.1 < want < 0.9
    rate, half, _ = played(sc, fields, want, 400)
    assert abs(rate - want) <= half, (rate, want, half)
