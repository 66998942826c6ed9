"""`tacgrid solve` with dice where a failed jump falls into a pit the token climbs out of
over turns (issue 39). Checked against an expectimax written here from seed 004's words and
docs/rules.md's rulings alone (Fractions, no code of engine.solve), and by seeded runs of the
solved policies inside the 95% interval.

Seed 004 on climbing: "For each climb make a success roll using the character's climbing
ability vs. the difficulty of the climb ... If the character is not successful he looses his
grip and falls. If the character is still able to climb after falling he can attempt the climb
again." Its climbing table: difficulty 0 ("ladder, steep mountain"), half the running, rounded
up, spaces a turn; 5 ("rope, pole"), 1 m a turn. docs/rules.md's ruling on pits (setting
`pit_wall`): the turn it fell in the token moves no more; each later turn starts with the
climb's one roll until one succeeds (a failure: no move that turn, another try next turn);
once climbing, every whole turn the climb needs is spent on it, and a token that has climbed
the pit's whole depth stands on the gap cell, out of the pit. The harm of a fall is a note
for the table: no rule reads it while moving.
"""

from __future__ import annotations

import math
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest
import tmxtext
from corridor_game import played, solved
from test_solve_jumps import SPACE_M, PitCorridor, write

from engine.dice import Dice
from engine.scenario import load_scenario
from engine.sim import FieldCache, Simulation


def p_climb(climbing: int, wall: int) -> Fraction:
    """The climbing roll out of the pit: 1d20 + climbing >= 10 + the wall's difficulty
    (docs/rules.md's success roll), counted by hand."""
    return Fraction(sum(1 for d in range(1, 21) if d + climbing >= 10 + wall), 20)


def climb_m(running: int, wall: int) -> Fraction:
    """Metres of the wall climbed a turn: the seed's climbing table."""
    if wall >= 10:
        return Fraction(0)
    if wall >= 5:
        return Fraction(1)
    return Fraction(-(-running // 2) * SPACE_M)


class ClimbCorridor(PitCorridor):
    """:class:`PitCorridor` whose pit (``depth`` m) is climbed out of at ``wall``: a token
    in it is ``("pit", gap, c)``, ``c`` the whole turns it has climbed. At its turn with
    ``c`` 0 it rolls: a success climbs a turn (out on the gap cell where one turn climbs
    the whole depth), a failure stays; with ``c`` above 0 it climbs a turn more, out once
    it has climbed the depth. Out, it stands on the gap cell and steps off it as from any
    cell (no jump starts in a gap)."""

    def __init__(self, *args: Any, climbing: dict[str, int], wall: int, depth: int) -> None:
        super().__init__(*args)
        self.climbing, self.wall, self.depth = climbing, wall, depth

    def left(self, who: str, at: Any) -> Fraction | None:
        """Turns of climbing still between a token at pit position ``at`` and the rim once
        it climbs this turn (None: it cannot climb the wall)."""
        per = climb_m(self.stats[who][0], self.wall)
        return None if per == 0 else self.depth / per - at[2]

    def reach_from(self, who: str, at: int, spent: Fraction, block: Any) -> list[int]:
        """The cells a turn ends on from ``at`` with ``spent`` of it gone (no jump made
        whole: the turn did not start with it)."""
        block = None if block is None else self.reach(block)
        seen, todo = {at: spent}, [at]
        while todo:
            c = todo.pop()
            steps = [
                ([c + d], self.time(who, c + d)) for d in (-1, 1) if 0 <= c + d < len(self.row)
            ]
            for passed, took in [*steps, *self.jumps(who, c)]:
                if took is None or block in passed or seen[c] + took > 1:
                    continue
                if passed[-1] not in seen or seen[c] + took < seen[passed[-1]]:
                    seen[passed[-1]] = seen[c] + took
                    todo.append(passed[-1])
        return sorted(seen)

    def moves(self, who: str, at: Any, block: Any) -> list[Any]:
        if isinstance(at, tuple) and (left := self.left(who, at)) is not None and left < 1:
            return self.reach_from(who, at[1], left, block)  # the rest climbed, then on
        return super().moves(who, at, block)

    def outcomes(self, who: str, at: Any, to: Any) -> list[tuple[Any, Fraction]]:
        if not isinstance(at, tuple):
            d = 1 if to > at else -1
            if self.row[at] == "O" and to != at and self.row[at + d] == "O":
                at -= d  # out on the gap cell, toward the pit's far side: off it first
            got = super().outcomes(who, at, to)
            return [((*e, 0) if isinstance(e, tuple) else e, p) for e, p in got]
        _, gap, c = at
        left = self.left(who, at)
        if left is None:
            return [(at, Fraction(1))]
        if left >= 1:  # a whole turn climbing: out on the gap cell once it is all climbed
            climbed = [(gap if left == 1 else ("pit", gap, c + 1), Fraction(1))]
        else:  # the rest of the wall, then on from the gap cell
            climbed = [(gap, Fraction(1))] if to == gap else self.outcomes(who, gap, to)
        if c > 0:
            return climbed
        ok = p_climb(self.climbing[who], self.wall)
        return [(e, p * ok) for e, p in climbed if p * ok] + ([(at, 1 - ok)] if ok < 1 else [])


#: (row, quarry (cell, running, acrobatics, climbing), pursuer, turns, exits, pursuer first,
#: pit_wall, the pit's depth in m).
CLIMB_CORRIDORS = [
    # Running 5 over a 4-m pit, 6 m deep: a ladder's wall (0) climbed at 6 m a turn, one turn.
    ("....OO....", (8, 5, 8, 5), (0, 5, 8, 8), 6, (), False, 0, 6),
    ("....OO....", (8, 5, 8, 5), (0, 5, 4, 8), 9, (), True, 0, 12),
    # A rope's wall (5): 1 m a turn, two or three turns once the roll succeeds.
    ("....OO....", (8, 5, 8, 5), (0, 5, 8, 8), 9, (), False, 5, 3),
    ("..O...O...", (4, 3, 6, 5), (9, 3, 14, 8), 7, (0,), True, 5, 2),
    # Running 3 (4 m a turn) out of 4-m and 8-m pits (dangerous falls on a lost grip).
    ("....O....", (1, 3, 9, 5), (7, 3, 12, 8), 6, (), False, 0, 8),
    ("..O...O...", (4, 3, 6, 5), (9, 3, 14, 8), 7, (0,), True, 0, 4),
    # The pursuer in the pit, and out on its gap cell, in the quarry's way to the exit.
    ("...OO......", (8, 6, 0, 5), (1, 5, 8, 8), 6, (0,), True, 5, 2),
    ("...OO.......", (9, 6, 0, 5), (0, 5, 10, 8), 9, (0,), True, 0, 6),
    # The default: a ladder's wall out of a 10-m pit, the last turn climbs the rest and
    # walks on (running 5 and 6: 6 m a turn, 4 m left; running 3: 4 m, 2 m left).
    ("....OO....", (8, 5, 8, 5), (0, 5, 8, 8), 8, (), False, 0, 10),
    ("..O...O...", (4, 3, 6, 5), (9, 3, 14, 8), 9, (0,), True, 0, 10),
    ("...OO.......", (9, 6, 0, 5), (0, 5, 10, 8), 9, (0,), True, 0, 10),
    # A 2-m pit: the roll's turn climbs it all and walks on (6 m a turn).
    ("...OO.......", (9, 6, 0, 5), (0, 5, 10, 8), 7, (0,), True, 0, 2),
]


def write_climb(tmp: Path, case: tuple, monkeypatch: pytest.MonkeyPatch) -> Path:  # type: ignore[type-arg]
    """``case`` as a scenario: swimming 1, the acrobatics and climbing given, the pit as
    deep as given, its wall at the difficulty given."""
    row, quarry, pursuer, turns, exits, first, wall, depth = case
    monkeypatch.setitem(tmxtext.LEGEND["O"], "height", float(depth))
    q, p = (quarry[0], quarry[1], 1, quarry[2]), (pursuer[0], pursuer[1], 1, pursuer[2])
    path = write(tmp, row, quarry=q, pursuer=p, turns=turns, exits=exits,
                 pursuer_first=first, settings=f", pit_wall: {wall}")  # fmt: skip
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    for tid, climbing in (("q", quarry[3]), ("p", pursuer[3])):
        at = next(i for i, line in enumerate(lines) if line.startswith(f"  - {{id: {tid},"))
        lines[at] = lines[at].replace("}}\n", f", climbing: {climbing}}}}}\n")
    path.write_text("".join(lines), encoding="utf-8")
    return path


def climb_oracle(case: tuple) -> tuple[Fraction, Fraction]:  # type: ignore[type-arg]
    row, quarry, pursuer, turns, exits, first, wall, depth = case
    game = ClimbCorridor(row, set(exits), turns, first,
                         {"q": (quarry[1], 1), "p": (pursuer[1], 1)},
                         {"q": quarry[2], "p": pursuer[2]},
                         climbing={"q": quarry[3], "p": pursuer[3]}, wall=wall,
                         depth=depth)  # fmt: skip
    pc, _, pe = game.value(pursuer[0], quarry[0], 1)
    return pc, pe


@pytest.mark.parametrize("case", CLIMB_CORRIDORS)
def test_pits_climbed_out_of_equal_the_expectimax(
    tmp_path: Path,
    case: tuple,  # type: ignore[type-arg]
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    pc, pe = climb_oracle(case)
    assert 0 < pc < 1 or 0 < pe < 1  # the rolls decide something
    got = solved(write_climb(tmp_path, case, monkeypatch))
    assert got.pits is not None and got.pits.outs  # a token climbs out somewhere
    assert bool(got.pits.partial) == (case[7] % climb_m(max(case[1][1], case[2][1]), case[6]) != 0)
    doc = got.to_dict()
    assert doc["p"]["capture"] == pytest.approx(float(pc), abs=1e-9)
    assert doc["p"]["escape"] == pytest.approx(float(pe), abs=1e-9)


@pytest.mark.parametrize("case", [CLIMB_CORRIDORS[2], CLIMB_CORRIDORS[6], CLIMB_CORRIDORS[8]])
def test_solved_policies_climbing_out_capture_within_the_interval(
    tmp_path: Path,
    case: tuple,  # type: ignore[type-arg]
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import engine.sim.view as view

    sc = load_scenario(str(write_climb(tmp_path, case, monkeypatch)))
    fields = FieldCache(sc)
    got = solved(Path(sc.path), fields)
    assert got.pits is not None
    want = got.to_dict()["p"]["capture"]
    gaps = {(c, 0) for _, c in got.pits.outs}
    # Every move asked is the solved game's: with a token climbing out of the pit, and
    # with one out of it standing on its gap cell.
    asked: list[tuple[bool, bool, object]] = []
    plain = view.solved_move

    def spy(run: Any, tid: str) -> object:
        move = plain(run, tid)
        states = [t.state for t in run.tokens.values()]
        climbing = any(s.has("climbing_out") for s in states)
        out = any(s.cell in gaps and not s.has("in_gap") for s in states)
        asked.append((climbing, out, move))
        return move

    monkeypatch.setattr(view, "solved_move", spy)
    rate, half, _ = played(sc, fields, want, 400)
    assert 0 < want < 1
    assert abs(rate - want) <= half, (rate, want, half)
    assert all(move is not None for _, _, move in asked)
    assert any(climbing for climbing, _, _ in asked)
    assert any(out for _, out, _ in asked)


def test_the_climbing_roll_is_listed_as_start_turn_rolls_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Speedpoints.start_turn_outcomes against start_turn rolled with 2 000 seeds: each
    # token it lists (the climb's success, a lost grip with each degree of the fall) comes
    # up inside its 99.9% interval, and nothing else does.
    case = CLIMB_CORRIDORS[5]
    sc = load_scenario(str(write_climb(tmp_path, case, monkeypatch)))
    run = Simulation(sc, seed=0, record=False)
    system = sc.system
    token = run.tokens["q"]
    fallen = system.apply_check(
        token.moved(cell=(2, 0)), "acrobatics (jump 2 m of 3 m, fall 4 m onto hard)", "failure"
    )
    (ended, _), *_ = system.end_turn_outcomes(fallen)
    listed = system.start_turn_outcomes(ended)
    assert listed is not None and len(listed) == 3  # success, lost grip: unharmed, hurt
    assert sum(p for _, p in listed) == 1
    counts = dict.fromkeys((t.state for t, _ in listed), 0)
    runs = 2000
    for seed in range(runs):
        got = system.start_turn(ended, Dice(seed)).state
        assert got in counts
        counts[got] += 1
    for t, p in listed:
        half = 3.29 * math.sqrt(float(p * (1 - p)) / runs)
        assert abs(counts[t.state] / runs - float(p)) <= half, (t.state, p)
