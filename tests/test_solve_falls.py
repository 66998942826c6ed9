"""`tacgrid solve` with Speedpoints climbs whose fall asks a falling roll (issue 39): a failed
climbing roll drops the climber to the foot, and the fall (over 3 m: dangerous, over 6 m:
lethal) is rolled as its turn ends. The roll's outcome is written for the table only (the
system's notes: damage, stun, ``hurt``, ``grievous``; no rule reads them), so the chase
goes on as after a safe fall. Checked against an expectimax written here from the map's
drawing alone (plain Python and Fractions, no code of engine.solve), and by seeded runs of
the solved policies inside the 95% interval of the solved chance of a capture."""

from __future__ import annotations

from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest
import tmxtext
from corridor_game import CorridorGame, played, solved

from engine import systems
from engine.dice import Dice
from engine.scenario import load_scenario
from engine.sim import FieldCache, Simulation
from engine.sim.view import solve_run
from engine.systems.base import Token

#: Ladder cells as high as ``H`` 5 m (a dangerous fall) and ``L`` 8 m (a lethal one).
HEIGHT = {"H": 5, "L": 8}


def write(
    tmp: Path,
    row: str,
    *,
    quarry: tuple[int, int],
    pursuer: tuple[int, int],
    turns: int,
    exits: tuple[int, ...] = (),
    pursuer_first: bool = False,
) -> Path:
    """A Speedpoints corridor; ``quarry``/``pursuer``: (cell, running), climbing 2 and 1."""
    text = tmxtext.tmx(
        [row.replace("L", "_")],
        properties={"diagonals": "none"},
        objects=tmxtext.exit_objects([(c, 0) for c in exits]),
    )
    # The drawing's ladder made 5 m high, and its crawlspace an 8 m ladder.
    ladder = '<tile id="5" type="ladder"><properties><property name="move" value="ladder"/>'
    crawl = '<tile id="6" type="crawlspace"><properties><property name="move" value="crawl"/>'
    assert ladder in text and crawl in text
    text = text.replace(ladder, ladder + '<property name="height" type="float" value="5.0"/>')
    text = text.replace(
        crawl,
        '<tile id="6" type="tall_ladder"><properties><property name="move" value="ladder"/>'
        '<property name="height" type="float" value="8.0"/>',
    )
    (tmp / "m.tmx").write_text(text, encoding="utf-8")
    head = f"map: m.tmx\nsystem: speedpoints\nturns: {turns}\nsolve: auto\ngoals: {{capture: 1}}\n"
    q = (
        f"  - {{id: q, side: quarry, policy: quarry, cell: [{quarry[0]}, 0], "
        f"stats: {{running: {quarry[1]}, climbing: 2, agility: 1, toughness: 3, stamina: 9}}}}\n"
    )
    p = (
        f"  - {{id: p, side: pursuer, policy: pursuer, cell: [{pursuer[0]}, 0], "
        f"stats: {{running: {pursuer[1]}, climbing: 1, toughness: 3, stamina: 9}}}}\n"
    )
    path = tmp / "chase.yaml"
    path.write_text(head + "tokens:\n" + (p + q if pursuer_first else q + p), encoding="utf-8")
    return path


def p_climb(skill: int) -> Fraction:
    """A climbing roll at difficulty 0: 1d20 + skill >= 10, counted by hand."""
    return Fraction(sum(1 for d in range(1, 21) if d + skill >= 10), 20)


class Expectimax(CorridorGame):
    """The chase on a one-row corridor. A move is any cell within a turn's time (open
    ground 1/running a cell; a ladder as high as it is at 2 x ceil(running / 2) m a turn;
    the quarry may not pass or end on the pursuer), walked straight; stepping onto a
    ladder from open ground rolls the mover's climb (a failure ends the move on the cell
    before; the fall it rolls changes nothing of the chase). After each move a capture
    (next to each other), then an exit. The pursuer maximises (P(capture), tie) and the
    quarry minimises it, the tie sooner captures and later escapes."""

    def __init__(
        self,
        row: str,
        exits: set[int],
        turns: int,
        running: dict[str, int],
        odds: dict[str, Fraction],
        pursuer_first: bool,
    ) -> None:
        super().__init__(row, exits, turns, pursuer_first)
        self.running, self.odds = running, odds

    def cost(self, who: str, cell: int) -> Fraction:
        r = self.running[who]
        ch = self.row[cell]
        if ch in HEIGHT:
            return Fraction(HEIGHT[ch], 2 * -(-r // 2))
        return Fraction(1, r)

    def moves(self, who: str, at: int, block: int | None) -> list[int]:
        out = [at]
        for d in (-1, 1):
            t, x = Fraction(0), at
            while 0 <= x + d < len(self.row) and x + d != block:
                x += d
                t += self.cost(who, x)
                if t > 1:
                    break
                out.append(x)
        return out

    def outcomes(self, who: str, at: int, to: int) -> list[tuple[int, Fraction]]:
        d = 1 if to > at else -1
        out, left, x = [], Fraction(1), at
        for _ in range(abs(to - at)):
            nxt = x + d
            if self.row[nxt] in HEIGHT and self.row[x] not in HEIGHT:
                p = self.odds[who]
                out.append((x, left * (1 - p)))
                left *= p
            x = nxt
        out.append((x, left))
        return out


CORRIDORS = [
    # row, (quarry cell, running), (pursuer cell, running), turns, exits, pursuer first
    ("..........H.....L.......", (8, 9), (0, 10), 5, (23,), False),
    ("..........H.....L.......", (12, 9), (0, 10), 5, (23,), True),
    ("....L.....H....L.....", (6, 9), (0, 10), 4, (20,), False),
    ("......H...H...", (7, 8), (13, 10), 4, (0,), False),
    ("..H...L...H...", (9, 8), (13, 10), 4, (0,), True),
]


@pytest.mark.parametrize("case", CORRIDORS)
def test_values_equal_an_independent_expectimax(tmp_path: Path, case: tuple) -> None:  # type: ignore[type-arg]
    row, (q, qr), (p, pr), turns, exits, first = case
    path = write(tmp_path, row, quarry=(q, qr), pursuer=(p, pr), turns=turns, exits=exits,
                 pursuer_first=first)  # fmt: skip
    doc = solved(path).to_dict()
    oracle = Expectimax(row, set(exits), turns, {"q": qr, "p": pr},
                        {"q": p_climb(2), "p": p_climb(1)}, first)  # fmt: skip
    pc, _, pe = oracle.value(p, q, 1)
    assert 0 < pc < 1 and 0 < pe < 1  # the falls decide something
    assert doc["p"]["capture"] == pytest.approx(float(pc), abs=1e-9)
    assert doc["p"]["escape"] == pytest.approx(float(pe), abs=1e-9)
    assert doc["p"]["timeout"] == pytest.approx(float(1 - pc - pe), abs=1e-9)


@pytest.mark.parametrize("case", [CORRIDORS[0], CORRIDORS[2]])
def test_solved_policies_capture_within_the_interval(tmp_path: Path, case: tuple) -> None:  # type: ignore[type-arg]
    row, quarry, pursuer, turns, exits, first = case
    path = write(tmp_path, row, quarry=quarry, pursuer=pursuer, turns=turns, exits=exits,
                 pursuer_first=first)  # fmt: skip
    sc = load_scenario(str(path))
    fields = FieldCache(sc)
    solution = solved(path, fields)
    want = solution.to_dict()["p"]["capture"]
    rate, half, _ = played(sc, fields, want, 400)
    assert 0 < want < 1
    assert abs(rate - want) <= half, (rate, want, half)
    # The falls were rolled, some of them hurting: what the solve leaves out happens.
    hurt = 0
    for s in range(40):
        logged = Simulation(sc, seed=s, fields=fields, record=True)
        logged.run()
        hurt += any(
            str(e.get("decided", "")).startswith("falls") and "): hurt" in e["decided"]
            for e in logged.events
        )
    assert hurt > 0


def _pending(system: Any, height_cm: int) -> Token:
    """A token that lost its grip on a ladder this turn: its fall onto hard ground (surface
    0) still to roll at difficulty 0."""
    tok = system.token("running=9,climbing=2,agility=1,toughness=3,stamina=9")
    st = tok.state.set_counter("fall_cm", height_cm).set_counter("fall_difficulty", 0)
    return tok.with_state(st.set_counter("fall_surface", 0).with_conditions("fell"))


@pytest.mark.parametrize("height_cm", [500, 800, 1200])
def test_end_turn_outcomes_are_end_turn_s_rolls(height_cm: int) -> None:
    # The falling roll: 1d20 + climbing 2 + agility 1 >= 10 (difficulty 0, the ladder's).
    system = systems.create("speedpoints")
    token = _pending(system, height_cm)
    outs = system.end_turn_outcomes(token)
    assert outs is not None
    p = Fraction(sum(1 for d in range(1, 21) if d + 3 >= 10), 20)
    win, lose = ("unharmed", "hurt") if height_cm <= 600 else ("hurt", "grievous")
    chances = {("grievous" if e.state.has("grievous") else "hurt" if e.state.has("hurt")
                else "unharmed"): c for e, c in outs}  # fmt: skip
    assert chances == {win: p, lose: 1 - p}
    seen = set()
    for seed in range(200):
        got = system.end_turn(token, Dice(seed))
        match = [k for k, (e, _) in enumerate(outs) if e == got]
        assert match, got
        seen.add(match[0])
    assert seen == set(range(len(outs)))
    # Nothing to roll: the default, the one token end_turn makes.
    plain = system.token("running=9")
    assert system.end_turn_outcomes(plain) == [(system.end_turn(plain, Dice(0)), 1)]


def test_a_failed_jump_into_a_pit_is_solved(tmp_path: Path) -> None:
    # A jump with a check leaves the token in the pit, turns of climbing out: solved
    # (tests/test_solve_pitclimb.py checks it against an expectimax).
    tmxtext.write(tmp_path / "m.tmx", ["....O...."], properties={"diagonals": "none"})
    text = (
        "map: m.tmx\nsystem: speedpoints\nturns: 3\ngoals: {capture: 1}\ntokens:\n"
        "  - {id: q, side: quarry, policy: quarry, cell: [2, 0], stats: {running: 3}}\n"
        "  - {id: p, side: pursuer, policy: pursuer, cell: [8, 0], stats: {running: 4}}\n"
    )
    (tmp_path / "c.yaml").write_text(text, encoding="utf-8")
    sc = load_scenario(str(tmp_path / "c.yaml"))
    got = solve_run(Simulation(sc, seed=0, record=False))
    assert got.pits is not None and got.pits.outs
