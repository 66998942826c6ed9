"""`tacgrid solve` with Speedpoints jumps (issue 39): a jump of more than a turn, made whole
in a turn that starts with it, as a move of the game without dice. Checked against a
minimax written here from the seed's words and RULES.md's rulings alone (Fractions, no
code of engine.solve), and by seeded runs of the solved policies ending in the solved
round.

Seed 004 says: "Running is also the maximum distance a character can jump with a running
start. If the character can barely jump across a gap (within 1 meter of their maximum
jumping distance) they must make a success roll using their acrobatics ability or fall into
the gap. Without a running start a character can jump half as far." RULES.md 4 reads a
running start as at least one space straight before the gap, in the jump's direction; a
jump's time is the time of the spaces it covers (the run-up space, the gap cells at the
running rate, the landing at its own); docs/rules.md: a jump is one edge, made whole, in a
turn that starts with it where it takes more than a turn.
"""

from __future__ import annotations

import itertools
import random
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest
import tmxtext
from corridor_game import CorridorGame, played, solved

from engine.scenario import load_scenario
from engine.sim import FieldCache, Simulation
from engine.sim.view import solve_run
from engine.solve import Solution

#: Spaces of 2 m (seed 004: "a space is about 2 meters wide").
SPACE_M = 2


def write(
    tmp: Path,
    row: str,
    *,
    quarry: tuple[int, ...],
    pursuer: tuple[int, ...],
    turns: int,
    exits: tuple[int, ...] = (),
    pursuer_first: bool = False,
    settings: str = "",
) -> Path:
    """A one-row Speedpoints chase; each token ``(cell, running, swimming[, acrobatics])``;
    the pursuer is in the quarry's way (``tokens_block: enemies``); ``settings``: more."""
    text = tmxtext.tmx(
        [row],
        properties={"diagonals": "none"},
        objects=tmxtext.exit_objects([(c, 0) for c in exits]),
    )
    (tmp / "m.tmx").write_text(text, encoding="utf-8")
    lines = []
    for tid, side, (cell, running, swimming, *acro) in (
        ("q", "quarry", quarry),
        ("p", "pursuer", pursuer),
    ):
        more = f", acrobatics: {acro[0]}" if acro else ""
        lines.append(
            f"  - {{id: {tid}, side: {side}, policy: {side}, cell: [{cell}, 0], "
            f"stats: {{running: {running}, swimming: {swimming}{more}}}}}\n"
        )
    if pursuer_first:
        lines.reverse()
    path = tmp / "chase.yaml"
    path.write_text(
        f"map: m.tmx\nsystem: speedpoints\nturns: {turns}\nsolve: auto\n"
        f"goals: {{capture: 1}}\nsettings: {{tokens_block: enemies{settings}}}\ntokens:\n"
        + "".join(lines),
        encoding="utf-8",
    )
    return path


class JumpCorridor(CorridorGame):
    """The chase on a one-row corridor of open ground (``.``), rough ground (``,``: twice
    the time), water (``~``) and pit cells (``O``, never stepped into). A token of running
    ``R`` and swimming ``S`` spends ``1/R`` of a turn a space on the ground (``2/R`` rough),
    ``1/S`` in the water; it may end its turn anywhere its turn's time reaches (partial
    moves). A jump from open or rough ground over a straight run of pit cells lands on the
    cell after them: standing (from the cell next to the pit, at most ``R/2`` m) or with a
    run-up (from the ground cell before that one, at most ``R`` m); it takes the time of
    the run-up space, the pit cells at ``1/R`` each and the landing. A jump may be made
    where the turn's time left pays for it, or whole at the start of a turn. The quarry
    never steps into, jumps from, over or onto the pursuer's cell, nor ends there."""

    def __init__(
        self,
        row: str,
        exits: set[int],
        turns: int,
        pursuer_first: bool,
        stats: dict[str, tuple[int, int]],
    ) -> None:
        super().__init__(row, exits, turns, pursuer_first)
        self.stats = stats  # who: (running, swimming)

    def time(self, who: str, c: int) -> Fraction | None:
        """Turns to step into cell ``c`` (None: never by a step)."""
        running, swimming = self.stats[who]
        ch = self.row[c]
        if ch == ".":
            return Fraction(1, running)
        if ch == ",":
            return Fraction(2, running)
        if ch == "~":
            return Fraction(1, swimming) if swimming else None
        return None

    def jumps(self, who: str, c: int) -> list[tuple[list[int], Fraction]]:
        """The jumps from cell ``c``: the cells each passes (landing last) and its time.
        Only those made for sure: a test map is drawn so that none is within 1 m."""
        running = self.stats[who][0]
        row, out = self.row, []
        for d in (-1, 1):
            for run_up in (False, True):
                t = c + d if run_up else c
                if row[c] not in ".," or not 0 <= t < len(row) or row[t] not in ".,":
                    continue
                k = t + d
                gap = 0
                while 0 <= k < len(row) and row[k] == "O":
                    gap, k = gap + 1, k + d
                if not gap or not 0 <= k < len(row) or row[k] not in ".,~":
                    continue
                land_time = self.time(who, k)
                if land_time is None:
                    continue
                longest = Fraction(running) if run_up else Fraction(running, 2)
                width = gap * SPACE_M
                if width > longest:
                    continue
                assert longest - width > 1, "a test map with a jump that asks a roll"
                took = Fraction(gap, running) + land_time
                passed = list(range(t + d, k + d, d))
                if run_up:
                    took += self.time(who, t) or 0
                    passed = [t, *passed]
                out.append((passed, took))
        return out

    def moves(self, who: str, at: int, block: int | None) -> list[int]:
        seen: dict[int, Fraction] = {at: Fraction(0)}
        todo = [at]
        while todo:
            c = todo.pop()
            spent = seen[c]
            steps: list[tuple[list[int], Fraction, bool]] = []
            for d in (-1, 1):
                t = self.time(who, c + d) if 0 <= c + d < len(self.row) else None
                if t is not None:
                    steps.append(([c + d], t, False))
            steps += [(passed, took, True) for passed, took in self.jumps(who, c)]
            for passed, took, jump in steps:
                end = passed[-1]
                if block is not None and block in passed:
                    continue
                if spent + took > 1 and not (jump and spent == 0):
                    continue
                got = spent + took
                if end not in seen or got < seen[end]:
                    seen[end] = got
                    todo.append(end)
        return sorted(seen)

    def outcomes(self, who: str, at: int, to: int) -> list[tuple[int, Fraction]]:
        return [(to, Fraction(1))]


def expected(game: JumpCorridor, p: int, q: int) -> tuple[str, int]:
    pc, tie, pe = game.value(p, q, 1)
    big = game.turns + 2
    if pc == 1:
        return "capture", int(big - tie)
    if pe == 1:
        return "escape", int(tie + big)
    return "timeout", game.turns


class WithinTurns(JumpCorridor):
    """The same chase with no jump of more than a turn: what the game was before them."""

    def jumps(self, who: str, c: int) -> list[tuple[list[int], Fraction]]:
        return [(passed, took) for passed, took in super().jumps(who, c) if took <= 1]


#: (row, quarry (cell, running, swimming), pursuer, turns, exits, pursuer first), each one
#: whose answer a jump of more than a turn changes. Water at swimming 1 takes a whole
#: turn, so a jump landing in it takes more than one.
CORRIDORS = [
    # The pursuer (running 7) jumps the pit into the water: 9/7 turns with a run-up from
    # 4, 8/7 standing from 5, whole at a turn's start.
    ("......O~..", (9, 7, 1), (0, 7, 1), 8, (), False),
    ("......O~..", (9, 7, 1), (0, 7, 1), 8, (), True),
    # Rough take-off ground: the run-up space costs twice.
    ("..,,O~...", (8, 8, 1), (0, 8, 1), 8, (), False),
    ("~,,O~..,.", (7, 10, 1), (0, 10, 1), 6, (), False),
    # The quarry jumps away over a pit and is caught a round later.
    ("~O..O...,", (2, 10, 1), (8, 7, 1), 5, (), False),
    # The pursuer's jump cuts the quarry off from the exit.
    (".,.O...O~..", (9, 7, 1), (6, 7, 1), 5, (10,), True),
    # Two pits; a quarry that swims at 2.
    (",...~O,~O~.", (1, 10, 2), (6, 10, 1), 7, (), True),
    (",.~O,..~", (4, 10, 1), (6, 7, 1), 8, (7,), False),
]


@pytest.mark.parametrize("case", CORRIDORS)
def test_long_jumps_equal_the_minimax(tmp_path: Path, case: tuple) -> None:  # type: ignore[type-arg]
    row, quarry, pursuer, turns, exits, first = case
    stats = {"q": quarry[1:], "p": pursuer[1:]}
    game = JumpCorridor(row, set(exits), turns, first, stats)
    want = expected(game, pursuer[0], quarry[0])
    # The case is one the jumps of more than a turn decide.
    assert want != expected(WithinTurns(row, set(exits), turns, first, stats), pursuer[0],
                            quarry[0])  # fmt: skip
    assert solved_and_played(tmp_path, case, runs=3) == want


def solved_and_played(tmp: Path, case: tuple, runs: int) -> tuple[str, int]:  # type: ignore[type-arg]
    """``tacgrid solve``'s outcome and round for ``case``, checked against ``runs`` seeded
    runs of the solved policies, every one ending there (nothing is rolled)."""
    row, quarry, pursuer, turns, exits, first = case
    path = write(tmp, row, quarry=quarry, pursuer=pursuer, turns=turns, exits=exits,
                 pursuer_first=first)  # fmt: skip
    sc = load_scenario(str(path))
    fields = FieldCache(sc)
    got = solve_run(Simulation(sc, seed=0, fields=fields, record=False))
    assert isinstance(got, Solution)
    for seed in range(runs):
        run = Simulation(sc, seed=seed, fields=fields, record=False).run()
        assert (run.outcome, run.turns) == got.outcome(), seed
    return got.outcome()


def rolls(row: str, running: int) -> bool:
    """Whether some jump on ``row`` is within 1 m of the longest at ``running`` (it asks a
    roll: the game with dice)."""
    for c, d, run_up in itertools.product(range(len(row)), (-1, 1), (False, True)):
        t = c + d if run_up else c
        if row[c] not in ".," or not 0 <= t < len(row) or row[t] not in ".,":
            continue
        k, gap = t + d, 0
        while 0 <= k < len(row) and row[k] == "O":
            k, gap = k + d, gap + 1
        if gap and 0 <= k < len(row) and row[k] in ".,~":
            longest = Fraction(running) if run_up else Fraction(running, 2)
            if 0 <= longest - gap * SPACE_M <= 1:
                return True
    return False


def random_case(seed: int) -> tuple:  # type: ignore[type-arg]
    """A random one-row chase with pits and water, with no jump that asks a roll."""
    rng = random.Random(seed)
    while True:
        n = rng.randint(8, 12)
        row = "".join(rng.choice("....,~O") for _ in range(n))
        if "O" not in row or row[0] == "O" or row[-1] == "O":
            continue
        rq, rp = rng.randint(5, 10), rng.randint(5, 10)
        if rolls(row, rq) or rolls(row, rp):
            continue
        q, p = rng.sample([i for i, ch in enumerate(row) if ch != "O"], 2)
        if abs(p - q) <= 1:
            continue
        ends = [c for c in (0, n - 1) if rng.random() < 0.4 and row[c] != "O"]
        exits = tuple(c for c in ends if c not in (p, q))
        sq, sp = rng.choice((1, 1, 2)), rng.choice((1, 1, 2))
        return row, (q, rq, sq), (p, rp, sp), rng.randint(5, 8), exits, rng.random() < 0.5


def test_random_jump_chases_equal_the_minimax(tmp_path: Path) -> None:
    decided = 0
    for seed in range(40):
        case = random_case(seed)
        row, quarry, pursuer, turns, exits, first = case
        stats = {"q": quarry[1:], "p": pursuer[1:]}
        want = expected(JumpCorridor(row, set(exits), turns, first, stats), pursuer[0], quarry[0])
        before = WithinTurns(row, set(exits), turns, first, stats)
        decided += want != expected(before, pursuer[0], quarry[0])
        (tmp_path / str(seed)).mkdir()
        assert solved_and_played(tmp_path / str(seed), case, runs=1) == want, (seed, case)
    assert decided >= 2  # some of them the long jumps decide


# ----------------------------------------------------------------- jumps with a roll

#: A pit position in the oracle: the gap cell a token fell into.
Pit = tuple[str, int]


def p_jump(acrobatics: int) -> Fraction:
    """The acrobatics roll of a barely possible jump (seed 004's "success roll using their
    acrobatics ability"; docs/rules.md: 1d20 + ability >= 10 + difficulty, a gap of no
    difficulty at the setting `jump_difficulty`, 10), counted by hand."""
    return Fraction(sum(1 for d in range(1, 21) if d + acrobatics >= 10 + 10), 20)


class PitCorridor(JumpCorridor):
    """:class:`JumpCorridor` with jumps that ask a roll (within 1 m of the longest): a
    success lands and the move goes on, a failure falls into the first pit cell and the
    move is over. The pit's wall is no tactical climb (setting `pit_wall` 10; docs/rules.md:
    "10 and up ... there is no tactical way out, and the token stays in the pit"): a token
    in it never moves again; it is caught there, and a pursuer there is in the quarry's way
    (no jump over it). A move is aimed at a cell; its way is the straight line to it, the
    one jump over each pit on the way (the test maps have one way to jump each)."""

    def __init__(
        self,
        row: str,
        exits: set[int],
        turns: int,
        pursuer_first: bool,
        stats: dict[str, tuple[int, int]],
        acrobatics: dict[str, int],
    ) -> None:
        super().__init__(row, exits, turns, pursuer_first, stats)
        self.acrobatics = acrobatics

    def reach(self, pos: int | Pit) -> int:
        return pos[1] if isinstance(pos, tuple) else pos

    def arrive(self, p: Any, q: Any, rnd: int) -> tuple[Fraction, ...] | None:  # type: ignore[override]
        return super().arrive(self.reach(p), self.reach(q), rnd)

    def all_jumps(self, who: str, c: int) -> list[tuple[list[int], Fraction, Fraction]]:
        """Every jump from ``c``, its cells, time and chance to make it."""
        running = self.stats[who][0]
        row, out = self.row, []
        for d, run_up in itertools.product((-1, 1), (False, True)):
            t = c + d if run_up else c
            if row[c] not in ".," or not 0 <= t < len(row) or row[t] not in ".,":
                continue
            k, gap = t + d, 0
            while 0 <= k < len(row) and row[k] == "O":
                k, gap = k + d, gap + 1
            if not gap or not 0 <= k < len(row) or (took := self.time(who, k)) is None:
                continue
            longest = Fraction(running) if run_up else Fraction(running, 2)
            if gap * SPACE_M > longest:
                continue
            took += Fraction(gap, running) + (self.time(who, t) or 0 if run_up else 0)
            chance = p_jump(self.acrobatics[who]) if longest - gap * SPACE_M <= 1 else Fraction(1)
            out.append(((([t] if run_up else []) + list(range(t + d, k + d, d))), took, chance))
        return out

    def jumps(self, who: str, c: int) -> list[tuple[list[int], Fraction]]:
        return [(cells, took) for cells, took, _ in self.all_jumps(who, c)]

    def moves(self, who: str, at: Any, block: Any) -> list[Any]:
        if isinstance(at, tuple):
            return [at]
        return super().moves(who, at, None if block is None else self.reach(block))

    def outcomes(self, who: str, at: Any, to: Any) -> list[tuple[Any, Fraction]]:
        if isinstance(at, tuple) or to == at:
            return [(to, Fraction(1))]
        d = 1 if to > at else -1
        made, out, c = Fraction(1), [], at
        while c != to:
            if self.row[c + d] != "O":
                c += d
                continue
            # The pit ahead: its one jump on the way (standing from c, or run up from c - d).
            ways = [(cells, ch) for cells, _, ch in self.all_jumps(who, c) if cells[-1] * d > c * d]
            ways += [(cells, ch) for cells, _, ch in self.all_jumps(who, c - d)
                     if len(cells) > 1 and cells[0] == c and cells[-1] * d > c * d]  # fmt: skip
            assert len(ways) == 1, (self.row, who, at, to, ways)
            cells, chance = ways[0]
            gap = next(x for x in cells if self.row[x] == "O")
            if chance < 1:
                out.append((("pit", gap), made * (1 - chance)))
            made *= chance
            c = cells[-1]
        return [*out, (to, made)]


#: (row, quarry (cell, running, acrobatics), pursuer, turns, exits, pursuer first).
PIT_CORRIDORS = [
    # Running 5 over a 4-m pit with a run-up: within 1 m, a roll (standing: 2.5 m, none).
    ("....OO....", (8, 5, 8), (0, 5, 8), 6, (), False),
    ("....OO....", (8, 5, 8), (0, 5, 4), 6, (), True),
    # The quarry's way to the exit is over the pit, the pursuer (running 6) jumps it surely.
    ("..OO......", (5, 5, 10), (9, 6, 0), 6, (0,), False),
    # A 2-m pit at running 3 (a whole turn with the run-up), both sides rolling.
    ("....O....", (2, 3, 9), (0, 3, 12), 6, (8,), False),
    ("....O....", (1, 3, 9), (7, 3, 12), 6, (), False),
    ("..O...O...", (4, 3, 6), (9, 3, 14), 7, (0,), True),
    # A pursuer fallen into the pit is in the way of the quarry's jump to the exit: it
    # never escapes (were it not in the way: P(escape) 0.55, 0.45).
    ("...OO......", (8, 6, 0), (1, 5, 8), 6, (0,), True),
    ("...OO.......", (9, 6, 0), (0, 5, 10), 6, (0,), True),
]


def write_pits(tmp: Path, case: tuple) -> Path:  # type: ignore[type-arg]
    """``case`` as a scenario: swimming 1, the acrobatics given, a pit wall no tactical
    climb (``pit_wall: 10``)."""
    row, quarry, pursuer, turns, exits, first = case
    q, p = (quarry[0], quarry[1], 1, quarry[2]), (pursuer[0], pursuer[1], 1, pursuer[2])
    return write(tmp, row, quarry=q, pursuer=p, turns=turns, exits=exits,
                 pursuer_first=first, settings=", pit_wall: 10")  # fmt: skip


def pit_oracle(case: tuple) -> tuple[Fraction, Fraction]:  # type: ignore[type-arg]
    row, quarry, pursuer, turns, exits, first = case
    game = PitCorridor(row, set(exits), turns, first, {"q": (quarry[1], 1), "p": (pursuer[1], 1)},
                       {"q": quarry[2], "p": pursuer[2]})  # fmt: skip
    pc, _, pe = game.value(pursuer[0], quarry[0], 1)
    return pc, pe


@pytest.mark.parametrize("case", PIT_CORRIDORS)
def test_jumps_with_a_roll_equal_the_expectimax(tmp_path: Path, case: tuple) -> None:  # type: ignore[type-arg]
    pc, pe = pit_oracle(case)
    assert 0 < pc < 1 or 0 < pe < 1  # the rolls decide something
    got = solved(write_pits(tmp_path, case))
    assert got.pits is not None
    doc = got.to_dict()
    assert doc["p"]["capture"] == pytest.approx(float(pc), abs=1e-9)
    assert doc["p"]["escape"] == pytest.approx(float(pe), abs=1e-9)


@pytest.mark.parametrize("case", [PIT_CORRIDORS[0], PIT_CORRIDORS[5]])
def test_solved_policies_with_pits_capture_within_the_interval(
    tmp_path: Path,
    case: tuple,  # type: ignore[type-arg]
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import engine.sim.view as view

    sc = load_scenario(str(write_pits(tmp_path, case)))
    fields = FieldCache(sc)
    want = solved(Path(sc.path), fields).to_dict()["p"]["capture"]
    # Every move asked is the solved game's, a token in the pit or not.
    asked: list[tuple[bool, object]] = []
    plain = view.solved_move

    def spy(run: Any, tid: str) -> object:
        got = plain(run, tid)
        asked.append((any(t.state.has("in_gap") for t in run.tokens.values()), got))
        return got

    monkeypatch.setattr(view, "solved_move", spy)
    rate, half, runs = played(sc, fields, want, 400)
    assert 0 < want < 1
    assert abs(rate - want) <= half, (rate, want, half)
    assert all(got is not None for _, got in asked)
    assert any(pit for pit, _ in asked)  # asked with a token in the pit
    # Some runs end with a token still in the pit: the failures were rolled and kept.
    assert any(r.outcome == "timeout" for r in runs)


def test_a_pit_climbed_out_of_is_solved(tmp_path: Path) -> None:
    # The default wall (pit_wall 0, a ladder's) of a 10-m pit at running 5: 6 m a turn, the
    # last turn climbs the rest and walks on (tests/test_solve_pitclimb.py checks the pits
    # climbed out of against an expectimax).
    case = PIT_CORRIDORS[0]
    row, quarry, pursuer, turns, exits, first = case
    path = write(tmp_path, row, quarry=(quarry[0], quarry[1], 1, quarry[2]),
                 pursuer=(pursuer[0], pursuer[1], 1, pursuer[2]), turns=turns)  # fmt: skip
    got = solved(path)
    assert got.pits is not None and got.pits.partial and got.pits.outs
