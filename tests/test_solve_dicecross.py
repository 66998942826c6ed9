"""`tacgrid solve` with crossings of more than a turn the earlier solve refused (issue 39):
a climb over turns without dice (the generic system's cliffs at a low speed: partway up,
the climber is reached at the top). Checked against a game tree written here from the
rule text alone (tests/corridor_game.py's rounds, Fractions; no code of engine.solve), and
by seeded ``solve: auto`` runs ending in the solved round.

The rule text (docs/rules.md, MAP-FORMAT.md; /work/shared/RULES.md 0):

- "The cost of entering a cell is the *time* it takes this token, in its current mode, to
  cross that cell: `cell distance / rate of the mode`"; a generic token moves at its
  ``speed`` in every ground mode, rough ground (``cost`` 2) takes twice as long, and a
  climb cell's distance is its ``height`` ("vertical extent in `cell_unit`: how far a climb
  goes"): the drawings' 10-ft cliff is two 5-ft cells of climbing.
- A cell that takes more than a whole turn is crossed over turns: "the token stays where it
  is, its state's `progress` records how much of that crossing is done"; going on, it gets
  in once the rest is made and walks on with what is left of the turn; any other move
  turns away and loses what it made (docs/rules.md, RULES.md 0).
- "a climber partway up is off the ground, on the face of the cell it climbs to": it "is
  reached only at its `toward` cell" for a capture, "stands in the way at its `toward` cell,
  not on its foot", and "a quarry escapes only by standing on an exit" (docs/rules.md,
  "Climbers in play"). A swimmer or walker partway across stays on its cell.
"""

from __future__ import annotations

import math
import random
from fractions import Fraction
from pathlib import Path

import pytest
import tmxtext
from corridor_game import CorridorGame, played
from test_solve import Crossing, random_chase, spy_solved_moves, write_chase

from engine.cli import main
from engine.scenario import load_scenario
from engine.sim import FieldCache, Simulation
from engine.sim.view import solve_run
from engine.solve import DiceSolution, Solution

#: Cells' time to enter at 5 ft a turn: open, rough (cost 2), a 10-ft cliff (climbed).
COST = {".": 1, ",": 2, "^": 2}

#: A position: (cell stood on, cell crossed toward or None, share crossed).
Pos = tuple[int, int | None, Fraction]


class CrossCorridor(CorridorGame):
    """The chase along a one-row corridor of open (``.``), rough (``,``) and cliff (``^``)
    cells, ``speed`` cells a turn a side, no dice: each move ends on one position."""

    def __init__(
        self,
        row: str,
        exits: set[int],
        turns: int,
        pursuer_first: bool,
        speed: dict[str, int],
        capture: int,
    ) -> None:
        super().__init__(row, exits, turns, pursuer_first)
        self.speed, self.capture = speed, capture

    def reach(self, pos: Pos) -> int:
        """Where ``pos`` is reached (a capture, the other's way): a climber partway up at
        the cell it climbs to, any other where it stands."""
        at, toward, share = pos
        return toward if toward is not None and share > 0 and self.row[toward] == "^" else at

    def arrive(self, p: Pos, q: Pos, rnd: int) -> tuple | None:  # type: ignore[override, type-arg]
        big = self.turns + 2
        if abs(self.reach(p) - self.reach(q)) <= self.capture:
            return (Fraction(1), Fraction(big - rnd), Fraction(0))
        if q[0] in self.exits:
            return (Fraction(0), Fraction(rnd - big), Fraction(1))
        return None

    def walks(self, start: int, budget: int, block: int | None, used: Fraction,
              avoid: int | None = None) -> set[Pos]:  # fmt: skip
        """Where a walk from ``start`` with ``used`` of the turn's ``budget`` spent may end:
        a cell reached within the turn, or a crossing begun from one with time left (none
        toward ``avoid`` from the start). Nobody passes or ends on ``block``."""
        ends: set[Pos] = set()
        for d in (-1, 1):
            x, spent = start, used
            while True:
                ends.add((x, None, Fraction(0)))
                y = x + d
                if not 0 <= y < len(self.row) or y == block:
                    break
                cost = COST[self.row[y]]
                if cost > budget:  # more than a whole turn: the rest of the turn goes into it
                    if spent < budget and not (x == start and y == avoid):
                        ends.add((x, y, Fraction(budget - spent, cost)))
                    break
                if spent + cost > budget:
                    break
                x, spent = y, spent + cost
        return ends

    def moves(self, who: str, at: Pos, block: Pos | None) -> list:  # type: ignore[override, type-arg]
        budget = self.speed[who]
        wall = None if block is None else self.reach(block)
        x, toward, share = at
        if toward is None:
            return sorted(self.walks(x, budget, wall, Fraction(0)), key=str)
        ends = self.walks(x, budget, wall, Fraction(0), avoid=toward)  # turning away
        if toward != wall:  # going on
            cost = COST[self.row[toward]]
            need = (1 - share) * cost
            if need <= budget:
                ends |= self.walks(toward, budget, wall, need)
            else:
                ends.add((x, toward, share + Fraction(budget, cost)))
        return sorted(ends, key=str)

    def outcomes(self, who: str, at: Pos, to: Pos) -> list:  # type: ignore[override, type-arg]
        return [(to, Fraction(1))]

    def outcome(self, p: int, q: int) -> tuple[str, int]:
        pc, tie, pe = self.value((p, None, Fraction(0)), (q, None, Fraction(0)), 1)
        big = self.turns + 2
        if pc:
            return "capture", int(big - tie)
        if pe:
            return "escape", int(big + tie)
        return "timeout", self.turns


def climb_chase(tmp: Path, case: dict) -> tuple[Path, CrossCorridor]:  # type: ignore[type-arg]
    """The scenario of a corridor case (a generic chase, 5 ft a cell) and its game tree."""
    row, q, p = case["row"], case["quarry"], case["pursuer"]
    chase = dict(
        rows=[row],
        diagonals="none",
        quarry=(q, 0),
        pursuer=(p, 0),
        q_speed=5 * case["q_cells"],
        p_speed=5 * case["p_cells"],
        capture=case["capture"],
        turns=case["turns"],
        exits=[(e, 0) for e in case.get("exits", ())],
        pursuer_first=case.get("pursuer_first", False),
    )
    path = write_chase(tmp, **chase)  # type: ignore[arg-type]
    game = CrossCorridor(
        row,
        set(case.get("exits", ())),
        case["turns"],
        case.get("pursuer_first", False),
        {"p": case["p_cells"], "q": case["q_cells"]},
        case["capture"],
    )
    return path, game


#: Corridors with 10-ft cliffs climbed over turns at 5 ft a turn (two turns a cliff cell),
#: by either side, rough ground beside them; captures at 0 and 1 step.
CLIMBS = [
    dict(row="...^..", quarry=2, pursuer=0, q_cells=1, p_cells=1, capture=0, turns=6,
         exits=[5]),
    dict(row="...^..", quarry=2, pursuer=0, q_cells=1, p_cells=1, capture=1, turns=6,
         exits=[5]),
    dict(row=".^.^....", quarry=4, pursuer=0, q_cells=1, p_cells=2, capture=1, turns=10,
         exits=[7]),
    dict(row="..^^...^.", quarry=4, pursuer=0, q_cells=2, p_cells=1, capture=0, turns=10,
         exits=[8]),
    dict(row="^.^..,^..", quarry=3, pursuer=8, q_cells=1, p_cells=1, capture=1, turns=10,
         exits=[], pursuer_first=True),
    dict(row="..,^.^^.", quarry=4, pursuer=0, q_cells=1, p_cells=1, capture=0, turns=12,
         exits=[7], pursuer_first=True),
    dict(row=".^^.^..", quarry=0, pursuer=6, q_cells=1, p_cells=1, capture=1, turns=8,
         exits=[]),
    dict(row="^..^.^..", quarry=2, pursuer=7, q_cells=1, p_cells=2, capture=0, turns=10,
         exits=[0]),
]  # fmt: skip


@pytest.mark.parametrize("k", range(len(CLIMBS)))
def test_climbs_over_turns_match_the_game_tree(
    k: int, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """solve's outcome and round on each corridor is the game tree's, and seeded
    ``solve: auto`` runs end in it, the solved game answering every move asked (a climb
    under way too)."""
    case = CLIMBS[k]
    path, game = climb_chase(tmp_path, case)
    want = game.outcome(case["pursuer"], case["quarry"])
    sc = load_scenario(str(path))
    solution = solve_run(Simulation(sc, seed=0, record=False))
    assert isinstance(solution, Solution)
    assert solution.outcome() == want, (case, want)
    asked = spy_solved_moves(monkeypatch)
    fields = FieldCache(sc)
    played = {
        (r.outcome, r.turns)
        for r in (Simulation(sc, seed=s, fields=fields, record=False).run() for s in range(3))
    }
    assert played == {want}
    assert asked and all(got is not None for _, got in asked)


def random_climb(seed: int) -> dict:  # type: ignore[type-arg]
    """A random corridor of open, rough and cliff cells, speeds of 1 or 2 cells a turn."""
    rng = random.Random(seed)
    n = rng.randint(6, 9)
    row = "^" * n
    while n - row.count("^") < 2:
        row = "".join(rng.choice("...^^,") for _ in range(n))
    q, p = rng.sample([i for i in range(n) if row[i] != "^"], 2)
    exits = [e for e in (rng.choice([0, n - 1]),) if rng.random() < 0.6 and row[e] != "^"]
    return dict(row=row, quarry=q, pursuer=p, q_cells=rng.randint(1, 2),
                p_cells=rng.randint(1, 2), capture=rng.randint(0, 1),
                turns=rng.randint(4, 10), exits=[e for e in exits if e not in (p, q)],
                pursuer_first=rng.random() < 0.5)  # fmt: skip


RANDOM_SEEDS = range(48)


@pytest.mark.parametrize("seed", RANDOM_SEEDS)
def test_random_climbs_match_the_game_tree(seed: int, tmp_path: Path) -> None:
    case = random_climb(seed)
    path, game = climb_chase(tmp_path, case)
    want = game.outcome(case["pursuer"], case["quarry"])
    sc = load_scenario(str(path))
    assert solve_run(Simulation(sc, seed=0, record=False)).outcome() == want, case
    run = Simulation(sc, seed=seed, record=False).run()
    assert (run.outcome, run.turns) == want, case


def test_the_climbs_change_the_answer() -> None:
    """In some corridors the climber's place matters: the game where a climber partway up
    stands on its foot (a swimmer's rule) answers another outcome or round."""

    class Footed(CrossCorridor):
        def reach(self, pos: Pos) -> int:
            return pos[0]

    changed = 0
    for case in CLIMBS + [random_climb(s) for s in RANDOM_SEEDS]:
        args = (
            case["row"],
            set(case.get("exits", ())),
            case["turns"],
            case.get("pursuer_first", False),
            {"p": case["p_cells"], "q": case["q_cells"]},
            case["capture"],
        )
        a = CrossCorridor(*args).outcome(case["pursuer"], case["quarry"])
        b = Footed(*args).outcome(case["pursuer"], case["quarry"])
        changed += a != b
    assert changed >= 6


def test_a_climb_under_way_is_reached_at_the_top(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The corridor the earlier solve refused (a generic token at 5 ft a turn climbing a
    10-ft cliff): the quarry climbs toward the exit, half-way up after its first turn,
    and escapes in round 4; the JSON says so."""
    import json

    case = CLIMBS[0]
    path, game = climb_chase(tmp_path, case)
    assert game.outcome(0, 2) == ("escape", 4)
    assert main(["solve", str(path), "--json"]) == 0
    got = json.loads(capsys.readouterr().out)
    assert (got["outcome"], got["turns"], got["dice"]) == ("escape", 4, False)
    sim = Simulation(load_scenario(str(path)), seed=0)
    run = sim.run()
    assert (run.outcome, run.turns) == ("escape", 4)
    up = [e["state"] for e in sim.events if e["type"] == "state" and e["state"].get("toward")]
    assert up[0]["mode"] == "climb" and up[0]["progress"] == "1/2"


class ClimbCrossing(Crossing):
    """tests/test_solve.py's minimax with crossings, where a climber partway up (toward a
    cliff cell) is reached at the cell it climbs to, for a capture and in the quarry's way
    (docs/rules.md, "Climbers in play")."""

    def reach(self, pos: tuple) -> tuple[int, int]:  # type: ignore[type-arg]
        if len(pos) == 3 and self.rows[pos[1][1]][pos[1][0]] == "^":
            return pos[1]  # type: ignore[no-any-return]
        return self.stand(pos)


def cliff_chase(seed: int) -> dict:  # type: ignore[type-arg]
    """tests/test_solve.py's random chase with its rough cells drawn as 10-ft cliffs."""
    chase = random_chase(seed)
    chase["rows"] = [r.replace(",", "^") for r in chase["rows"]]
    return chase


#: Random small maps with cliffs (either diagonal rule, walls, an exit or none) where the
#: climber's place changes the answer (72 to 176), and others.
CLIFF_SEEDS = [72, 100, 111, 134, 166, 176, 3, 8, 21, 40]


@pytest.mark.parametrize("seed", CLIFF_SEEDS)
def test_random_maps_with_cliffs_match_the_minimax(seed: int, tmp_path: Path) -> None:
    chase = cliff_chase(seed)
    assert "^" in "".join(chase["rows"])
    want = ClimbCrossing(chase).outcome()
    if seed >= 72:  # the climber at its foot would answer otherwise
        footed = type("Footed", (ClimbCrossing,), {"reach": Crossing.stand})
        assert footed(chase).outcome() != want
    sc = load_scenario(str(write_chase(tmp_path, **chase)))  # type: ignore[arg-type]
    assert solve_run(Simulation(sc, seed=0, record=False)).outcome() == want, chase
    run = Simulation(sc, seed=seed, record=False).run()
    assert (run.outcome, run.turns) == want, chase


# --------------------------------------------------------------------------- with dice

SWIM_RULES = """
Seed 002 on swimming: "If you have the swimming skill, your movement while swimming is equal
to 1/6 of your Base Move"; "Base Move = (Adaptability + Adjustments) * 0.44", "rounded to the
nearest whole number"; a walk is one action, Base Move hexes a turn. The seed has no swimming
roll: rough water (difficulty above none) asks a Swimming 21C because checks come from the
terrain's difficulty (RULES.md 0), 2d10 + skill >= 21 at an easy level, a natural 20 always,
a natural 2 never; "A failure ends the token's move before that cell for the rest of the
turn" (docs/rules.md, "Rough water"). A check is rolled "on entering the first cell of a
stretch of the same mode and difficulty in one move" (a Mythmaster move: a turn). Crossing a
cell over turns (RULES.md 0, docs/rules.md), the roll is made each turn the crossing goes
on, and a failure loses what was made of it (the token turns back where it stands).
"""


def base_move(adaptability: int) -> int:
    return math.floor(Fraction(adaptability) * Fraction(44, 100) + Fraction(1, 2))


def p_21c(skill: int) -> Fraction:
    """2d10 + skill >= 21, a natural 20 always, a natural 2 never, counted by hand."""
    hits = sum(
        1
        for a in range(1, 11)
        for b in range(1, 11)
        if (a + b + skill >= 21 or a + b == 20) and a + b != 2
    )
    return Fraction(hits, 100)


class SwimCorridor(CorridorGame):
    """The chase along a one-row corridor of open cells (``.``) and rough water (``~``),
    each token ``(Base Move, P(swimming 21C))``, capture a step away, the quarry kept out
    of the pursuer's cell. A plan is a direction and how many cells to walk (None: as far
    as the turn goes, into the water over turns)."""

    def __init__(self, row: str, exits: set[int], turns: int, pursuer_first: bool,
                 stats: dict[str, tuple[int, Fraction]]) -> None:  # fmt: skip
        super().__init__(row, exits, turns, pursuer_first)
        self.stats = stats

    def arrive(self, p: Pos, q: Pos, rnd: int) -> tuple | None:  # type: ignore[override, type-arg]
        return super().arrive(p[0], q[0], rnd)

    def run_of(self, y: int) -> int:
        """The first cell of the stretch of water ``y`` is in."""
        while y > 0 and self.row[y - 1] == "~":
            y -= 1
        return y

    def cost(self, who: str, y: int) -> Fraction:
        bm = self.stats[who][0]
        return Fraction(6, bm) if self.row[y] == "~" else Fraction(1, bm)

    def go(self, who: str, x: int, t: Fraction, d: int, k: int | None, key: int | None,
           block: int | None) -> dict[Pos, Fraction] | None:  # fmt: skip
        """From cell ``x`` with ``t`` of the turn spent (``key``: the stretch of water last
        entered), ``k`` more cells toward ``d`` (None: as far as the turn goes); None where
        the plan cannot be walked."""
        if k == 0:
            return {(x, None, Fraction(0)): Fraction(1)}
        y = x + d
        if not 0 <= y < len(self.row) or y == block:
            return None if k else {(x, None, Fraction(0)): Fraction(1)}
        c = self.cost(who, y)
        if c <= 1:
            if t + c > 1:
                return None if k else {(x, None, Fraction(0)): Fraction(1)}
            return self.go(who, y, t + c, d, None if k is None else k - 1, None, block)
        if k is not None or t >= 1:  # a crossing over turns is walked only as far as it goes
            return None if k else {(x, None, Fraction(0)): Fraction(1)}
        on = (x, y, (1 - t) / c)
        if self.run_of(y) == key:
            return {on: Fraction(1)}
        p = self.stats[who][1]
        return {on: p, (x, None, Fraction(0)): 1 - p}

    def moves(self, who: str, at: Pos, block: Pos | None) -> list:  # type: ignore[override, type-arg]
        x, toward, share = at
        wall = None if block is None else block[0]
        plans: list[dict[Pos, Fraction]] = [{(x, None, Fraction(0)): Fraction(1)}]
        for d in (-1, 1):
            if toward == x + d:  # going on: a roll, then in (and on) or further in
                if toward == wall:
                    continue
                c, p = self.cost(who, toward), self.stats[who][1]
                need = (1 - share) * c
                if need > 1:
                    plans.append({(x, toward, share + 1 / c): p, (x, None, Fraction(0)): 1 - p})
                    continue
                for k in [*range(len(self.row)), None]:
                    got = self.go(who, toward, need, d, k, self.run_of(toward), wall)
                    if got is not None:
                        ends = {e: q * p for e, q in got.items()}
                        ends[(x, None, Fraction(0))] = 1 - p
                        plans.append(ends)
                continue
            for k in [*range(1, len(self.row)), None]:
                got = self.go(who, x, Fraction(0), d, k, None, wall)
                if got is not None:
                    plans.append(got)
        return [tuple(sorted(p.items(), key=str)) for p in plans]

    def outcomes(self, who: str, at: Pos, to: tuple) -> list:  # type: ignore[override, type-arg]
        return list(to)


def swim_chase(tmp: Path, case: tuple) -> tuple[Path, SwimCorridor]:  # type: ignore[type-arg]
    """A one-row Mythmaster chase at walking pace, each token ``(cell, adaptability,
    swimming)``, the pursuer in the quarry's way, capture a step away."""
    row, q, p, turns, exits, first = case
    tmxtext.write(tmp / "m.tmx", [row], properties={"diagonals": "none"},
                  objects=tmxtext.exit_objects([(c, 0) for c in exits]))  # fmt: skip
    lines = [
        f"  - {{id: {tid}, side: {side}, policy: {side}, pace: walk, cell: [{c}, 0], "
        f"stats: {{adaptability: {a}, physical: 12, swimming: {s}}}}}\n"
        for tid, side, (c, a, s) in (("q", "quarry", q), ("p", "pursuer", p))
    ]
    if first:
        lines.reverse()
    (tmp / "s.yaml").write_text(
        f"map: m.tmx\nsystem: mythmaster\nturns: {turns}\nsolve: auto\n"
        "goals: {capture: 1}\nsettings: {tokens_block: enemies}\ntokens:\n" + "".join(lines),
        encoding="utf-8",
    )
    stats = {w: (base_move(t[1]), p_21c(t[2])) for w, t in (("q", q), ("p", p))}
    return tmp / "s.yaml", SwimCorridor(row, set(exits), turns, first, stats)


SWIMS = [
    # row, quarry (cell, adaptability, swimming), pursuer, turns, exits, pursuer first
    ("..~...~..", (4, 9, 11), (0, 11, 8), 6, (8,), False),
    ("~..~~.~..", (8, 9, 11), (2, 11, 12), 5, (), True),
    ("..~~...", (0, 9, 11), (5, 9, 11), 6, (), True),
    ("...~..~.~", (7, 9, 9), (5, 11, 8), 6, (0,), False),
    ("~~.~.~.~", (6, 9, 9), (4, 11, 9), 5, (), False),
    ("....~.", (0, 9, 9), (5, 11, 11), 4, (), False),
]


def test_the_swim_odds() -> None:
    assert base_move(9) == 4 and base_move(11) == 5  # water: 3/2 and 6/5 turns a cell
    assert p_21c(10) == Fraction(55, 100)  # 2d10 >= 11


@pytest.mark.parametrize("case", SWIMS)
def test_swims_over_turns_equal_the_expectimax(tmp_path: Path, case: tuple) -> None:  # type: ignore[type-arg]
    path, game = swim_chase(tmp_path, case)
    doc = solve_run(Simulation(load_scenario(str(path)), seed=0, record=False)).to_dict()
    pc, _, pe = game.value((case[2][0], None, Fraction(0)), (case[1][0], None, Fraction(0)), 1)
    assert doc["dice"] is True and (0 < pc < 1 or 0 < pe < 1)  # dice decide something
    assert doc["p"]["capture"] == pytest.approx(float(pc), abs=1e-9), (pc, pe)
    assert doc["p"]["escape"] == pytest.approx(float(pe), abs=1e-9), (pc, pe)


@pytest.mark.parametrize("case", [SWIMS[0], SWIMS[3], SWIMS[5]])
def test_solved_swims_capture_within_the_interval(tmp_path: Path, case: tuple) -> None:  # type: ignore[type-arg]
    """400 seeded runs of the solved policies (a swim under way asking the solved game
    too) capture at the solved rate, within its 95% interval."""
    path, _ = swim_chase(tmp_path, case)
    sc = load_scenario(str(path))
    fields = FieldCache(sc)
    solution = solve_run(Simulation(sc, seed=0, fields=fields, record=False))
    assert isinstance(solution, DiceSolution) and solution.crossings is not None
    want = solution.to_dict()["p"]["capture"]
    assert 0.1 < want < 0.9
    rate, half, _ = played(sc, fields, want, 400)
    assert abs(rate - want) <= half, (rate, want, half)


def test_the_slow_swim_once_refused_is_solved(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The map the earlier solve refused in one line ("token q can enter cell [3, 0] from
    [2, 0] only over 3/2 turns at pace walk"): Adaptability 9, so a water cell takes 3/2
    turns, crossed over turns with a Swimming 21C each turn. ``solve --json`` answers the
    expectimax's chances."""
    import json

    case = ("...~..", (2, 9, 30), (0, 9, 30), 6, (5,), False)
    path, game = swim_chase(tmp_path, case)
    assert main(["solve", str(path), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    pc, _, pe = game.value((0, None, Fraction(0)), (2, None, Fraction(0)), 1)
    assert doc["dice"] is True and doc["arithmetic"] == "float64"
    assert doc["p"]["capture"] == pytest.approx(float(pc), abs=1e-9)
    assert doc["p"]["escape"] == pytest.approx(float(pe), abs=1e-9)
