"""`tacgrid solve` with Speedpoints jumps of more than a turn that ask a roll (issue 39):
the game whose moves are the turn loop's whole turns (engine/solve/dicecross.py), a failed
jump falling into the pit (engine/solve/jumpmix.py). Checked against the expectimax
test_solve_jumps.py and test_solve_pitclimb.py write from seed 004's words and the rulings
alone (`PitCorridor`, `ClimbCorridor`: Fractions, no code of engine.solve), whose moves
already hold a jump of more than a turn made whole at a turn's start, and by seeded
``solve: auto`` runs inside the 95% interval.

Seed 004: "Running is also the maximum distance a character can jump with a running
start. If the character can barely jump across a gap (within 1 meter of their maximum
jumping distance) they must make a success roll using their acrobatics ability or fall
into the gap." docs/rules.md: a jump is one edge, made whole, in a turn that starts with it
where it takes more than a turn (the run-up space, the gap cells at the running rate, the
landing at its own: water at swimming 1 takes a whole turn).

Before this, the turns walked for such a game rolled a jump on the walker's own dice
(seed 0) rather than through the seam that branches every roll, so the solve answered as
if each jump's roll came out as that one die did (P(capture) 1 for the first corridor
below, whose pursuer must make a 13-in-20 jump).

The same seam now carries a Speedpoints ladder's failed roll (`fell` until the next turn
starts) and a Mythmaster climb's turn beside a swim (below).

Mutations of engine/solve/jumpmix.py these tests catch: no pit position for a fall (a
refusal), a partial turn out of the pit not weighed by its climbing roll's chance, and the
pursuer in a pit not in the quarry's way.
"""

from __future__ import annotations

from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest
import test_solve_climb as climb21
import tmxtext
from corridor_game import played, solved
from test_solve_dicecross import SwimCorridor, base_move, p_21c
from test_solve_jumps import PitCorridor, pit_oracle, write_pits
from test_solve_pitclimb import ClimbCorridor, climb_oracle, p_climb, write_climb

from engine.scenario import load_scenario
from engine.sim import FieldCache, Simulation
from engine.sim.diceturn import DiceTurns
from engine.sim.view import SolveWays
from engine.solve import DiceSolution


class PitWithinTurns(PitCorridor):
    """:class:`PitCorridor` with no jump of more than a turn: what the long jumps decide."""

    def all_jumps(self, who: str, c: int) -> list[tuple[list[int], Fraction, Fraction]]:
        return [j for j in super().all_jumps(who, c) if j[1] <= 1]


class ClimbWithinTurns(ClimbCorridor):
    def all_jumps(self, who: str, c: int) -> list[tuple[list[int], Fraction, Fraction]]:
        return [j for j in super().all_jumps(who, c) if j[1] <= 1]


#: (row, quarry (cell, running, acrobatics), pursuer, turns, exits, pursuer first): pits
#: never left (``pit_wall`` 10), each with a jump of more than a turn that asks a roll
#: (running 3 over a 2-m pit with a run-up into water; running 5 or 6 over 4 m). Found by
#: drawing random corridors and keeping those whose answer the long jumps change.
LONG_PITS = [
    ("....O~....", (8, 3, 8), (0, 3, 12), 6, (), False),
    (",.O~,.O,..~", (3, 3, 13), (10, 3, 12), 6, (0,), False),
    ("..,O.,,..,", (6, 3, 13), (9, 3, 5), 5, (), False),
    ("..~~~O.~", (2, 5, 13), (7, 5, 10), 6, (), True),
    (".O~~O.O~~.", (9, 4, 12), (5, 5, 9), 6, (), False),
    ("..,O~~.~~.", (9, 6, 11), (0, 3, 5), 6, (), False),
    (".~O.~..~", (3, 5, 12), (7, 6, 4), 5, (), False),
    # The quarry's long jump to the exit: it escapes when it makes it.
    ("~O,,O.....,", (2, 3, 14), (0, 4, 10), 5, (10,), True),
    # A pursuer fallen into the first pit is in the way of the quarry's jump to the exit
    # (were it not: P(escape) 0.55).
    ("...OO.....OO~.", (8, 6, 0), (1, 5, 8), 6, (0,), True),
]

#: (row, quarry (cell, running, acrobatics, climbing), pursuer, turns, exits, pursuer
#: first, pit_wall, the pit's depth in m): pits climbed out of, some with a last turn that
#: climbs the rest and walks on (a ladder's wall, 10 m deep), each with a long jump.
LONG_CLIMBS = [
    (".~O....~.~", (6, 3, 13, 7), (9, 3, 8, 5), 5, (), True, 5, 4),
    ("..~O....", (2, 5, 10, 7), (4, 3, 5, 5), 5, (), True, 0, 10),
    (".,.~O,~.", (0, 5, 11, 8), (5, 4, 14, 8), 5, (), True, 0, 10),
    (".,..O~~.", (6, 5, 13, 8), (2, 3, 5, 10), 7, (7,), True, 0, 10),
    (".,.~O...", (2, 6, 4, 8), (6, 3, 7, 9), 6, (0, 7), True, 0, 6),
    ("..,,.O,...", (8, 3, 7, 6), (3, 3, 5, 4), 7, (), False, 0, 10),
    (",,,...O,..", (4, 3, 4, 6), (9, 3, 5, 10), 5, (), True, 0, 2),
    ("~.O.O~O.O.", (5, 5, 8, 5), (1, 4, 11, 8), 6, (9,), False, 0, 4),
    # A 2-m pit at 4 m a turn: the turn whose climbing roll succeeds walks on (its chance
    # the roll's, below 1).
    (".,O...,O.,", (5, 3, 4, 9), (0, 3, 10, 8), 6, (9,), True, 0, 2),
    ("~.~...O~~.", (3, 3, 11, 8), (1, 3, 10, 6), 5, (0, 9), False, 0, 2),
]


def _long_decides_pits(case: tuple) -> bool:  # type: ignore[type-arg]
    row, quarry, pursuer, turns, exits, first = case
    game = PitWithinTurns(row, set(exits), turns, first, {"q": (quarry[1], 1), "p": (pursuer[1], 1)},
                          {"q": quarry[2], "p": pursuer[2]})  # fmt: skip
    pc, _, pe = game.value(pursuer[0], quarry[0], 1)
    return (pc, pe) != pit_oracle(case)


@pytest.mark.parametrize("case", LONG_PITS)
def test_long_jumps_with_a_roll_equal_the_expectimax(tmp_path: Path, case: tuple) -> None:  # type: ignore[type-arg]
    pc, pe = pit_oracle(case)
    assert 0 < pc < 1 or 0 < pe < 1  # the rolls decide something
    assert _long_decides_pits(case)  # and so do the jumps of more than a turn
    got = solved(write_pits(tmp_path, case))
    assert got.crossings is not None and got.pits is not None  # the loop's turns, pits
    doc = got.to_dict()
    assert doc["p"]["capture"] == pytest.approx(float(pc), abs=1e-9)
    assert doc["p"]["escape"] == pytest.approx(float(pe), abs=1e-9)


@pytest.mark.parametrize("case", LONG_CLIMBS)
def test_long_jumps_into_pits_climbed_out_of_equal_the_expectimax(
    tmp_path: Path,
    case: tuple,  # type: ignore[type-arg]
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    pc, pe = climb_oracle(case)
    assert 0 < pc < 1 or 0 < pe < 1
    row, quarry, pursuer, turns, exits, first, wall, depth = case
    before = ClimbWithinTurns(row, set(exits), turns, first,
                              {"q": (quarry[1], 1), "p": (pursuer[1], 1)},
                              {"q": quarry[2], "p": pursuer[2]},
                              climbing={"q": quarry[3], "p": pursuer[3]}, wall=wall,
                              depth=depth)  # fmt: skip
    was = before.value(pursuer[0], quarry[0], 1)
    assert (was[0], was[2]) != (pc, pe)  # the long jumps decide it
    got = solved(write_climb(tmp_path, case, monkeypatch))
    assert got.crossings is not None and got.pits is not None and got.pits.outs
    doc = got.to_dict()
    assert doc["p"]["capture"] == pytest.approx(float(pc), abs=1e-9)
    assert doc["p"]["escape"] == pytest.approx(float(pe), abs=1e-9)


def test_some_last_turns_climb_the_rest_and_walk_on(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The partial turns out of a pit (a 10-m pit at a ladder's 4 or 6 m a turn) are in the
    # cases above: the turn the loop walks from the token climbing out.
    partial = 0
    for i, case in enumerate(LONG_CLIMBS[1:4]):
        (tmp_path / str(i)).mkdir()
        got = solved(write_climb(tmp_path / str(i), case, monkeypatch))
        assert got.pits is not None
        partial += bool(got.pits.partial)
    assert partial == 3


def test_the_long_jump_is_branched_on_its_roll(tmp_path: Path) -> None:
    # The pursuer's long jump from (2, 0) (run-up (3, 0), the 2-m pit, the water landing:
    # 5/3 turns at running 3) asks acrobatics 12 + 1d20 >= 20: made 13 in 20, else the
    # token is in the gap cell (4, 0). The turn is walked once per degree.
    sc = load_scenario(str(write_pits(tmp_path, LONG_PITS[0])))
    run = Simulation(sc, seed=0, record=False)
    profs = {"pursuer": run.profile_now("p"), "quarry": run.profile_now("q")}
    ways = SolveWays(run.fields, profs, {"pursuer": 1, "quarry": 1}, run.door_key(), True)
    turns = DiceTurns(ways, {"pursuer": run.tokens["p"], "quarry": run.tokens["q"]}, sc.system)
    got, entered, _, rolled = turns.outcomes("pursuer", (2, 0), None, Fraction(0), (8, 0), None)
    ends = {(t.state.cell, t.state.has("in_gap")): p for t, p in got}
    assert ends == {((5, 0), False): Fraction(13, 20), ((4, 0), True): Fraction(7, 20)}
    assert not rolled and {(3, 0), (4, 0), (5, 0)} <= entered


def _batch(sc: Any, fields: FieldCache, monkeypatch: pytest.MonkeyPatch) -> tuple[float, list[Any]]:
    """400 seeded runs of the solved policies: the rate of captures and every move asked
    (whether a token was in a pit, the move)."""
    import engine.sim.view as view

    got = solved(Path(sc.path), fields)
    assert isinstance(got, DiceSolution)
    want = got.to_dict()["p"]["capture"]
    asked: list[tuple[bool, object]] = []
    plain = view.solved_move

    def spy(run: Any, tid: str) -> object:
        move = plain(run, tid)
        asked.append((any(t.state.has("in_gap") for t in run.tokens.values()), move))
        return move

    monkeypatch.setattr(view, "solved_move", spy)
    rate, half, _ = played(sc, fields, want, 400)
    assert 0 < want < 1
    assert abs(rate - want) <= half, (rate, want, half)
    return want, asked


def test_solved_policies_with_long_jumps_capture_within_the_interval(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    sc = load_scenario(str(write_pits(tmp_path, LONG_PITS[4])))
    _, asked = _batch(sc, FieldCache(sc), monkeypatch)
    assert all(move is not None for _, move in asked)  # every move the solved game's
    assert any(pit for pit, _ in asked)  # with a token in the pit too


def test_solved_policies_climbing_out_after_a_long_jump_within_the_interval(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    sc = load_scenario(str(write_climb(tmp_path, LONG_CLIMBS[1], monkeypatch)))
    _, asked = _batch(sc, FieldCache(sc), monkeypatch)
    assert all(move is not None for _, move in asked)
    assert any(pit for pit, _ in asked)


# ----------------------------------------------------------------- a fall's `fell`

#: Seed 004 on climbing, as test_solve_pitclimb.py reads it: "For each climb make a success
#: roll using the character's climbing ability vs. the difficulty of the climb ... If the
#: character is not successful he looses his grip and falls." A ladder (difficulty 0)
#: climbs at half the running, rounded up, spaces a turn. docs/rules.md: "A check is rolled
#: once for a stretch of cells of the same mode and difficulty, on entering its first cell"
#: (a crossing over turns: as it starts); "A failed climbing roll leaves the climber at the
#: foot (`fell`)", its turn over, the fall rolled at the end of that turn (its harm "notes
#: for the table"); ``fell`` ends as its next turn starts.
LADDER_M = 10


class LadderCorridor(SwimCorridor):
    """:class:`SwimCorridor`'s crossings over turns with ladder cells (``H``, ``LADDER_M``
    high) for its water, each token ``(running, climbing)``: a ladder at half the running
    (rounded up) spaces of 2 m a turn, open ground at the running; one roll a crossing, as
    it starts (going on rolls nothing)."""

    def __init__(self, row: str, exits: set[int], turns: int, pursuer_first: bool,
                 stats: dict[str, tuple[int, int]]) -> None:  # fmt: skip
        odds = {w: (r, p_climb(c, 0)) for w, (r, c) in stats.items()}
        super().__init__(row, exits, turns, pursuer_first, odds)  # type: ignore[arg-type]

    def run_of(self, y: int) -> int:
        return y

    def cost(self, who: str, y: int) -> Fraction:
        running = self.stats[who][0]
        if self.row[y] == "H":
            return Fraction(LADDER_M, -(-running // 2) * 2)
        return Fraction(1, running)

    def moves(self, who: str, at: Any, block: Any) -> list:  # type: ignore[override, type-arg]
        x, toward, share = at
        wall = None if block is None else block[0]
        plans: list[dict[Any, Fraction]] = [{(x, None, Fraction(0)): Fraction(1)}]
        for d in (-1, 1):
            if toward == x + d:  # going on: rolls nothing
                if toward == wall:
                    continue
                c = self.cost(who, toward)
                need = (1 - share) * c
                if need > 1:
                    plans.append({(x, toward, share + 1 / c): Fraction(1)})
                    continue
                for k in [*range(len(self.row)), None]:
                    got = self.go(who, toward, need, d, k, self.run_of(toward), wall)
                    if got is not None:
                        plans.append(got)
                continue
            for k in [*range(1, len(self.row)), None]:
                got = self.go(who, x, Fraction(0), d, k, None, wall)
                if got is not None:
                    plans.append(got)
        return [tuple(sorted(p.items(), key=str)) for p in plans]


def ladder_chase(tmp: Path, case: tuple, monkeypatch: pytest.MonkeyPatch) -> Path:  # type: ignore[type-arg]
    """A one-row Speedpoints chase with ladders, each token ``(cell, running, climbing[,
    acrobatics])`` (acrobatics 5 where not given)."""
    row, q, p, turns, exits, first = case
    monkeypatch.setitem(tmxtext.LEGEND["H"], "height", float(LADDER_M))
    tmxtext.write(tmp / "m.tmx", [row], properties={"diagonals": "none"},
                  objects=tmxtext.exit_objects([(c, 0) for c in exits]))  # fmt: skip
    lines = [
        f"  - {{id: {tid}, side: {side}, policy: {side}, cell: [{c}, 0], stats: {{running: "
        f"{r}, swimming: 1, climbing: {cl}, acrobatics: {(*a, 5)[0]}}}}}\n"
        for tid, side, (c, r, cl, *a) in (("q", "quarry", q), ("p", "pursuer", p))
    ]
    if first:
        lines.reverse()
    (tmp / "s.yaml").write_text(
        f"map: m.tmx\nsystem: speedpoints\nturns: {turns}\nsolve: auto\n"
        "goals: {capture: 1}\nsettings: {tokens_block: enemies}\ntokens:\n" + "".join(lines),
        encoding="utf-8",
    )
    return tmp / "s.yaml"


#: (row, quarry (cell, running, climbing), pursuer, turns, exits, pursuer first).
LADDERS = [
    ("..H..H..", (3, 3, 0), (0, 4, 4), 6, (7,), True),
    ("..H...", (0, 3, 0), (5, 3, 0), 5, (), False),
    (".H...H.", (3, 3, 2), (0, 3, 5), 6, (6,), False),
]


@pytest.mark.parametrize("case", LADDERS)
def test_ladders_whose_failure_leaves_fell_equal_the_expectimax(
    tmp_path: Path,
    case: tuple,  # type: ignore[type-arg]
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Refused before ("leaves a roll at the end of its turn"): the failed climb's fall.
    row, q, p, turns, exits, first = case
    game = LadderCorridor(row, set(exits), turns, first, {"q": q[1:], "p": p[1:]})
    pc, _, pe = game.value((p[0], None, Fraction(0)), (q[0], None, Fraction(0)), 1)
    assert 0 < pc < 1 or 0 < pe < 1
    got = solved(ladder_chase(tmp_path, case, monkeypatch))
    assert got.crossings is not None
    doc = got.to_dict()
    assert doc["p"]["capture"] == pytest.approx(float(pc), abs=1e-9)
    assert doc["p"]["escape"] == pytest.approx(float(pe), abs=1e-9)


def test_solved_policies_on_ladders_capture_within_the_interval(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    sc = load_scenario(str(ladder_chase(tmp_path, LADDERS[2], monkeypatch)))
    fields = FieldCache(sc)
    want = solved(Path(sc.path), fields).to_dict()["p"]["capture"]
    rate, half, runs = played(sc, fields, want, 400)
    assert 0 < want < 1 and abs(rate - want) <= half, (rate, want, half)


def test_a_ladder_and_a_pit_on_one_map_capture_within_the_interval(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A crossing over turns with a roll (the ladder, refused before) and a jump with a
    # roll into a pit climbed out of (a ladder's wall), on one map: 400 seeded runs of
    # the solved policies capture within the 95% interval of the solved chance, with moves
    # asked of the solved game while a token is in the pit.
    case = ("..H...OO...", (9, 5, 3, 6), (0, 5, 4, 8), 8, (), False)
    path = ladder_chase(tmp_path, case, monkeypatch)
    sc = load_scenario(str(path))
    fields = FieldCache(sc)
    got = solved(path, fields)
    assert got.crossings is not None and got.pits is not None and got.pits.partial
    want, asked = _batch(sc, fields, monkeypatch)
    assert all(move is not None for _, move in asked)
    assert any(pit for pit, _ in asked)


# ----------------------------------------------------------------- climbs beside swims

#: Seed 002 on skill climbing and swimming, as test_solve_climb.py and
#: test_solve_dicecross.py quote it: a climb "uses all of your actions for the turn", at
#: "1/10 Base Move" on a Normal climb "when you succeed your 21C using Climbing Skill - if
#: you fail the roll you don't move at all"; "your movement while swimming is equal to 1/6
#: of your Base Move". Their games joined: each corridor holds a swim over turns and a climb
#: over turns. Before, the walker rolled a climb's turn on its own seeded die and the solve
#: answered from that one roll (the first corridor: P(capture) 0.2125 against 0.0951).


class ClimbSwimCorridor(SwimCorridor):
    """:class:`SwimCorridor` with Normal climb cells (``^``, one hex high) climbed as
    ``test_solve_climb.ClimbCorridor`` climbs them: a whole turn's action from the cell next
    to one, ``BM / 10`` hexes on a success, a natural 2 partway up a slip and a re-roll,
    whose failure falls to the foot; a climber partway up is reached at the top; a walk or
    swim loses what it climbed. Each token ``(Base Move, P(swimming 21C), P(climbing 21C))``."""

    def __init__(self, row: str, exits: set[int], turns: int, pursuer_first: bool,
                 stats: dict[str, tuple[int, Fraction, Fraction]]) -> None:  # fmt: skip
        super().__init__(row, exits, turns, pursuer_first, {w: t[:2] for w, t in stats.items()})
        self.climbing = {w: t[2] for w, t in stats.items()}

    def reach(self, pos: Any) -> int:
        at, top, share = pos
        return top if top is not None and share > 0 and self.row[top] == "^" else at

    def arrive(self, p: Any, q: Any, rnd: int) -> tuple | None:  # type: ignore[type-arg]
        big = self.turns + 2
        if abs(self.reach(p) - self.reach(q)) <= 1:
            return (Fraction(1), Fraction(big - rnd), Fraction(0))
        if q[0] in self.exits:
            return (Fraction(0), Fraction(rnd - big), Fraction(1))
        return None

    def go(self, who: str, x: int, t: Fraction, d: int, k: int | None, key: int | None,
           block: int | None) -> dict[Any, Fraction] | None:  # fmt: skip
        if k != 0 and 0 <= x + d < len(self.row) and self.row[x + d] == "^":  # climbed only
            return None if k else {(x, None, Fraction(0)): Fraction(1)}
        return super().go(who, x, t, d, k, key, block)

    def moves(self, who: str, at: Any, block: Any) -> list:  # type: ignore[override, type-arg]
        x, toward, share = at
        wall = None if block is None else self.reach(block)
        climbing = toward is not None and self.row[toward] == "^"
        plans = [((at, Fraction(1)),)] if climbing else []  # staying keeps the climb made
        walked = (x, None, Fraction(0)) if climbing else at
        plans += super().moves(who, walked, None if wall is None else (wall, None, 0))
        for y in (x - 1, x + 1):
            if 0 <= y < len(self.row) and self.row[y] == "^" and y != wall:
                plans.append(self.climbed(who, at, y))
        return plans

    def climbed(self, who: str, at: Any, y: int) -> tuple:  # type: ignore[type-arg]
        """A turn's climb toward ``y``: where it ends, with the chances."""
        x, top, share = at
        p, step, nat2 = self.climbing[who], Fraction(self.stats[who][0], 10), Fraction(1, 100)
        share = share if top == y or (top is None and self.row[x] == "^") else Fraction(0)

        def pos(s: Fraction) -> Any:
            if s >= 1:
                return (y, None, s - 1)
            return (x, y, s) if s > 0 else (x, None, Fraction(0))

        ends = [(pos(share + step), p)]
        if share > 0:
            ends += [(pos(share), 1 - p - nat2), (pos(max(Fraction(0), share - step)), nat2 * p),
                     (pos(Fraction(0)), nat2 * (1 - p))]  # fmt: skip
        else:
            ends.append((pos(share), 1 - p))
        out: dict[Any, Fraction] = {}
        for e, q in ends:
            out[e] = out.get(e, Fraction(0)) + q
        return tuple(sorted(out.items(), key=str))


def climb_swim_chase(tmp: Path, case: tuple, monkeypatch: pytest.MonkeyPatch) -> Path:  # type: ignore[type-arg]
    """A one-row Mythmaster chase at walking pace with a Normal cliff one hex high, each
    token ``(cell, adaptability, swimming, climbing)``."""
    row, q, p, turns, exits, first = case
    monkeypatch.setitem(tmxtext.LEGEND, "^", {**tmxtext.LEGEND["^"], "difficulty": "easy",
                                              "height": 2.0})  # fmt: skip
    tmxtext.write(tmp / "m.tmx", [row], properties={"diagonals": "none"},
                  objects=tmxtext.exit_objects([(c, 0) for c in exits]))  # fmt: skip
    lines = [
        f"  - {{id: {tid}, side: {side}, policy: {side}, pace: walk, cell: [{c}, 0], stats: "
        f"{{adaptability: {a}, physical: 12, swimming: {sw}, climbing: {cl}}}}}\n"
        for tid, side, (c, a, sw, cl) in (("q", "quarry", q), ("p", "pursuer", p))
    ]
    if first:
        lines.reverse()
    (tmp / "s.yaml").write_text(
        f"map: m.tmx\nsystem: mythmaster\nturns: {turns}\nsolve: auto\n"
        "goals: {capture: 1}\nsettings: {tokens_block: enemies}\ntokens:\n" + "".join(lines),
        encoding="utf-8",
    )
    return tmp / "s.yaml"


#: (row, quarry (cell, adaptability, swimming, climbing), pursuer, turns, exits, first).
CLIMB_SWIMS = [
    ("..~..^...", (7, 9, 11, 9), (0, 11, 8, 12), 8, (), False),
    ("..^..~..", (4, 9, 11, 9), (0, 11, 11, 10), 7, (7,), False),
    ("~..^....", (6, 9, 10, 9), (1, 11, 9, 10), 7, (), True),
]


@pytest.mark.parametrize("case", CLIMB_SWIMS)
def test_climbs_beside_swims_equal_the_expectimax(
    tmp_path: Path,
    case: tuple,  # type: ignore[type-arg]
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    row, q, p, turns, exits, first = case
    stats = {
        w: (base_move(t[1]), p_21c(t[2]), climb21.p_climb(t[3])) for w, t in (("q", q), ("p", p))
    }
    game = ClimbSwimCorridor(row, set(exits), turns, first, stats)
    pc, _, pe = game.value((p[0], None, Fraction(0)), (q[0], None, Fraction(0)), 1)
    assert 0 < pc < 1 or 0 < pe < 1
    got = solved(climb_swim_chase(tmp_path, case, monkeypatch))
    assert got.crossings is not None and any(got.crossings.climb)  # climbers partway up
    doc = got.to_dict()
    assert doc["p"]["capture"] == pytest.approx(float(pc), abs=1e-9)
    assert doc["p"]["escape"] == pytest.approx(float(pe), abs=1e-9)


def test_solved_policies_climbing_beside_a_swim_within_the_interval(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    sc = load_scenario(str(climb_swim_chase(tmp_path, CLIMB_SWIMS[2], monkeypatch)))
    fields = FieldCache(sc)
    want = solved(Path(sc.path), fields).to_dict()["p"]["capture"]
    rate, half, _ = played(sc, fields, want, 400)
    assert 0 < want < 1 and abs(rate - want) <= half, (rate, want, half)
