"""`tacgrid solve` with D6's pace state (issue 39): the pace ramp (two speed levels a round
from a stop) and the once-a-round movement roll whose failure carries into the next rounds
(a -1D or -2D penalty, a stop after a fall, a round lost to a tumble), as positions of the
game (engine.solve.pace). Checked against an expectimax written here from seed 003's text
and RULES.md's D6 rulings alone (Fractions, no code of engine.solve or engine.systems), and
against seeded `solve: auto` batches inside the 95% interval of the solved P(capture)."""

from __future__ import annotations

import json
from fractions import Fraction
from pathlib import Path

import pytest
import tmxtext
from corridor_game import CorridorGame, Value, played, solved

from engine.cli import main
from engine.dice import DieCode, d6_pool_dist
from engine.scenario import load_scenario
from engine.sim import FieldCache, Simulation
from engine.solve import PaceSolution
from engine.systems import create

# ---------------------------------------------------------------------------------------
# The rules, from seed 003 (quoted) and RULES.md's rulings
# ---------------------------------------------------------------------------------------

#: "Cautious: Move / 2 ... Cruising: Move ... High Speed: Move x 2 ... All-Out: Move x 4";
#: the ladder of "Acceleration and Deceleration", slowest first, with the stop below it.
SPEEDS = ("stop", "cautious", "cruising", "high", "all_out")
FACTOR = {"stop": 0, "cautious": Fraction(1, 2), "cruising": 1, "high": 2, "all_out": 4}
#: "Very Easy: 1-5 - Easy: 6-10 - Moderate: 11-15 - Difficult: 16-20 - Very Difficult:
#: 21-30 - Heroic: 31+", and each level's default number (RULES.md 3, a ruling).
NUMBERS = (3, 8, 13, 18, 25, 31, 41, 51)
#: The map's cells: open ground ("Very Easy (1-5): Flat, clear ground"), rough ground
#: ("Moderate (11-15): Rough ground with many obstacles"), thick forest ("Difficult
#: (16-20): ... thick forest").
LEVEL = {".": 0, ",": 2, "+": 3}
CELL_M = 2  # d6 cells are 2 m (RULES.md 3)


def rolled_level(speed: str, level: int) -> int | None:
    """The level a round at ``speed`` rolls over ground of ``level``, None: no roll.

    Seed 003: cautious "In Very Easy, Easy, Moderate terrain: free action (no roll ...). In
    Difficult ...: roll running, but reduce terrain difficulty one level"; cruising
    "Automatic in Very Easy, Easy, Moderate terrain. Requires a roll in Difficult ...";
    high speed "Must roll running for Very Easy, Easy, Moderate terrain. For Difficult ...:
    increase difficulty one level"; all-out "Very Easy/Easy/Moderate: +1 difficulty level;
    Difficult/Very Difficult/Heroic: +2 difficulty levels"."""
    easy = level <= 2
    if speed == "cautious":
        return None if easy else level - 1
    if speed == "cruising":
        return None if easy else level
    if speed == "high":
        return level if easy else level + 1
    return level + 1 if easy else level + 2


def pool(dice: int) -> dict[int, Fraction]:
    """The totals of ``dice`` d6, one of them the wild die (RULES.md 3, a ruling: it rolls
    again on a 6 and adds; a 1 on it counts as 1), counted here up to 35 (past any number
    asked; the rest lumped at 61, a total that beats every number here)."""
    wild: dict[int, Fraction] = {}
    for k in range(6):  # k sixes, then a non-six
        for face in range(1, 6):
            wild[6 * k + face] = Fraction(1, 6 ** (k + 1))
    wild[61] = 1 - sum(wild.values())
    dist = {0: Fraction(1)} if dice == 0 else wild
    for _ in range(max(0, dice - 1)):
        nxt: dict[int, Fraction] = {}
        for t, p in dist.items():
            for f in range(1, 7):
                nxt[min(t + f, 61)] = nxt.get(min(t + f, 61), Fraction(0)) + p / 6
        dist = nxt
    return dist


def bands(dice: int, dn: int) -> dict[str, Fraction]:
    """Seed 003: "Success: move normally. Failure: see Movement Failures", by the margin of
    failure: 1-3, 4-6, 7-10, 11+ (the tumbles, 16-20 and 21+, stop as 11-15 does by the
    `tumble_stop` ruling)."""
    out = {"success": Fraction(0), "1-3": Fraction(0), "4-6": Fraction(0)}
    out |= {"7-10": Fraction(0), "11+": Fraction(0)}
    for total, p in pool(dice).items():
        margin = dn - total
        key = (
            "success"
            if margin <= 0
            else "1-3"
            if margin <= 3
            else "4-6"
            if margin <= 6
            else "7-10"
            if margin <= 10
            else "11+"
        )
        out[key] += p
    return out


#: Movement Failures (seed 003): "1-3 Slight slip: Complete movement, but -1D to all actions
#: for rest of round"; "4-6 Slip: Move half distance. -3D ... for rest of round, and -1D next
#: round"; "7-10 Fall: Fall halfway; ends kneeling. No actions for rest of round; -2D next
#: round"; "11-15 Minor tumble: Fall after one-quarter move; no actions this round or next."
#: Per band: the share of the move made, the dice lost next round, whether it falls (a stop:
#: the `fall_speed` ruling) and whether the next round is lost.
EFFECT = {
    "success": (Fraction(1), 0, False, False),
    "1-3": (Fraction(1), 0, False, False),
    "4-6": (Fraction(1, 2), 1, False, False),
    "7-10": (Fraction(1, 2), 2, True, False),
    "11+": (Fraction(1, 4), 0, True, True),
}

#: A token between rounds: its cell, its speed, the dice it loses next round, and whether
#: next round is lost.
Pos = tuple[int, str, int, bool]


class PaceGame(CorridorGame):
    """The chase along a one-row corridor of D6 tokens (per side: Move, running dice, the
    pace asked), each starting at a stop."""

    def __init__(self, row: str, exits: set[int], turns: int, pursuer_first: bool, **kw):  # type: ignore[no-untyped-def]
        super().__init__(row, exits, turns, pursuer_first)
        self.kw = kw

    def speed_of(self, who: str, at: Pos) -> str:
        """Seed 003: "A character may change speed by up to two levels per round": the
        round's speed is the nearest to the pace asked within two levels of the last."""
        i, goal = SPEEDS.index(at[1]), SPEEDS.index(self.kw[who + "_pace"])
        return SPEEDS[i + max(-2, min(2, goal - i))]

    def moves(self, who: str, at: Pos, block: Pos | None) -> list[int]:  # type: ignore[override]
        """Any cell within the round's distance (partial moves: RULES.md), not through
        the pursuer (tokens in the way); none in a lost round."""
        if at[3]:
            return [at[0]]
        metres = self.kw[who + "_move"] * FACTOR[self.speed_of(who, at)]
        reach = int(metres // CELL_M)
        out = [at[0]]
        for d in (-1, 1):
            for k in range(1, reach + 1):
                x = at[0] + d * k
                if not 0 <= x < len(self.row) or (block is not None and x == block[0]):
                    break
                out.append(x)
        return out

    def outcomes(self, who: str, at: Pos, to: int) -> list[tuple[Pos, Fraction]]:  # type: ignore[override]
        cell, speed0, lost, held = at
        if held:  # the lost round: it gets up at a stop
            return [((cell, "stop", 0, False), Fraction(1))]
        speed = self.speed_of(who, at)
        cells = abs(to - cell)
        d = 1 if to > cell else -1
        levels = [rolled_level(speed, LEVEL[self.row[cell + d * k]]) for k in range(1, cells + 1)]
        asked = [lv for lv in levels if lv is not None]
        if not asked:  # no roll: the move is made
            return [((to, self._after(speed0, speed, to != cell), 0, False), Fraction(1))]
        # RULES.md 3 (a ruling): one roll a round, at the hardest cell crossed; the dice
        # are the running code less last round's lost dice.
        dn = NUMBERS[max(asked)]
        out: list[tuple[Pos, Fraction]] = []
        for band, p in bands(max(0, self.kw[who + "_dice"] - lost), dn).items():
            if not p:
                continue
            share, lose, falls, lose_next = EFFECT[band]
            # The share is of the move planned, rounded down to whole cells (ruling R1).
            end = cell + d * int(share * cells)
            if falls:
                out.append(((end, "stop", lose, lose_next), p))
            else:
                out.append(((end, self._after(speed0, speed, end != cell), lose, False), p))
        return out

    @staticmethod
    def _after(last: str, speed: str, moved: bool) -> str:
        """The speed it ends the round at: the round's, or a stop where it did not move
        and a stop was within reach (RULES.md 3: a token that stays stopped)."""
        if not moved and SPEEDS.index(last) <= 2:
            return "stop"
        return speed

    def arrive(self, p: Pos, q: Pos, rnd: int) -> Value | None:  # type: ignore[override]
        big = self.turns + 2
        if abs(p[0] - q[0]) <= 1:
            return (Fraction(1), Fraction(big - rnd), Fraction(0))
        if q[0] in self.exits:
            return (Fraction(0), Fraction(rnd - big), Fraction(1))
        return None


# ---------------------------------------------------------------------------------------
# Scenarios
# ---------------------------------------------------------------------------------------

_TILES = (
    '<tileset firstgid="1" name="terrain" tilewidth="32" tileheight="32" tilecount="3" '
    'columns="3"><tile id="0" type="open"><properties><property name="move" value="walk"/>'
    '</properties></tile><tile id="1" type="rough"><properties><property name="move" '
    'value="walk"/><property name="difficulty" value="moderate"/></properties></tile>'
    '<tile id="2" type="forest"><properties><property name="move" value="walk"/><property '
    'name="difficulty" value="difficult"/></properties></tile></tileset>'
)


def write(tmp: Path, row: str, game: dict, *, exits: tuple[int, ...] = (), turns: int) -> Path:  # type: ignore[type-arg]
    """The corridor (``.`` open, ``,`` rough, ``+`` forest) and the chase."""
    doc = tmxtext.tmx(
        [row.replace(",", "#").replace("+", "H")],
        properties={"diagonals": "none"},
        objects=tmxtext.exit_objects([(c, 0) for c in exits]),
    )
    doc = doc.replace(tmxtext.tileset_xml(), _TILES)
    gids = {str(tmxtext.CHARS.index(c) + 1): str(i + 1) for i, c in enumerate(".#H")}
    head, data, tail = doc.partition('<data encoding="csv">\n')
    body, end, rest = tail.partition("\n</data>")
    body = ",".join(gids[g] for g in body.split(","))
    (tmp / "m.tmx").write_text(head + data + body + end + rest, encoding="utf-8")
    lines = [f"map: m.tmx\nsystem: d6\nturns: {turns}\nsolve: auto\ngoals: {{capture: 1}}\ntokens:"]
    for who, side in (("p", "pursuer"), ("q", "quarry")):
        lines.append(
            f"  - {{id: {who}, side: {side}, policy: {side}, cell: [{game[who + '_cell']}, 0], "
            f"pace: {game[who + '_pace']}, stats: {{move: {game[who + '_move']}, "
            f"running: {game[who + '_dice']}D}}}}"
        )
    if not game["pursuer_first"]:
        lines[1], lines[2] = lines[2], lines[1]
    path = tmp / "chase.yaml"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


GAMES = [
    # All-out from a stop (cruising first) against a quarry running at high speed.
    ("." * 10, dict(p_cell=0, q_cell=4, p_pace="all_out", q_pace="high"), (9,), 4, 2, 2, True),
    ("." * 10, dict(p_cell=0, q_cell=3, p_pace="all_out", q_pace="high"), (9,), 5, 2, 2, False),
    # A 1D sprinter (a slip leaves it 0D: always a fall).
    ("." * 9, dict(p_cell=0, q_cell=4, p_pace="all_out", q_pace="high"), (8,), 5, 1, 2, True),
]


def _game(row: str, kw: dict, exits: tuple, turns: int, pd: int, qd: int, first: bool):  # type: ignore[no-untyped-def, type-arg]
    full = dict(kw, p_move=2, q_move=2, p_dice=pd, q_dice=qd)
    return dict(full, pursuer_first=first), PaceGame(row, set(exits), turns, first, **full)


@pytest.mark.parametrize(("row", "kw", "exits", "turns", "pd", "qd", "first"), GAMES)
def test_solve_equals_the_expectimax(tmp_path: Path, row, kw, exits, turns, pd, qd, first) -> None:  # type: ignore[no-untyped-def]
    full, game = _game(row, kw, exits, turns, pd, qd, first)
    sol = solved(write(tmp_path, row, full, exits=exits, turns=turns))
    assert isinstance(sol, PaceSolution)
    start_p: Pos = (full["p_cell"], "stop", 0, False)
    start_q: Pos = (full["q_cell"], "stop", 0, False)
    want = game.value(start_p, start_q, 1)
    pc, u, pe, _ = sol.start().tolist()
    assert pc == pytest.approx(float(want[0]), abs=1e-9)
    assert u == pytest.approx(float(want[1]), abs=1e-9)
    assert pe == pytest.approx(float(want[2]), abs=1e-9)


def test_the_games_are_not_trivial() -> None:
    """Each corridor's value depends on the carried state: the same game with every
    failure's carried effects dropped (no lost dice, no stop, no lost round) differs."""
    for row, kw, exits, turns, pd, qd, first in GAMES:
        full, game = _game(row, kw, exits, turns, pd, qd, first)
        plain = PaceGame(row, set(exits), turns, first, **game.kw)
        saved = dict(EFFECT)
        try:
            for k, (share, _, _, _) in saved.items():
                EFFECT[k] = (share, 0, False, False)
            start = ((full["p_cell"], "stop", 0, False), (full["q_cell"], "stop", 0, False))
            flat = plain.value(*start, 1)
        finally:
            EFFECT.update(saved)
        assert game.value(*start, 1) != flat, row


def test_the_odds_are_the_systems() -> None:
    """The test's pool, counted from the seed's wild die, against the engine's exact one."""
    for dice in range(0, 4):
        mine = pool(dice)
        theirs = d6_pool_dist(DieCode(dice), wild=True, wild_one="complication").dist
        for dn in NUMBERS[:6]:
            a = sum((p for t, p in mine.items() if t >= dn), Fraction(0))
            b = sum((p for t, p in theirs.items() if t >= dn), Fraction(0))
            assert a == b, (dice, dn)


def test_collision_outcomes_match_rolled_ends() -> None:
    """D6's end_turn_outcomes (the collision damage against Strength) against rolled ends."""
    from engine.dice import Dice

    d6 = create("d6")
    token = d6.token("move=10,strength=2D")
    token = token.with_state(token.state.set_counter("collision_dice", 3))
    outs = d6.end_turn_outcomes(token)
    assert outs is not None and sum(p for _, p in outs) == 1
    p_injured = float(sum((p for t, p in outs if t.state.has("injured")), Fraction(0)))
    dice = Dice(7)
    rolled = [d6.end_turn(token, dice) for _ in range(20000)]
    seen = sum(t.state.has("injured") for t in rolled) / len(rolled)
    assert abs(seen - p_injured) < 4 * (p_injured * (1 - p_injured) / len(rolled)) ** 0.5
    assert all(t.state.counter("collision_dice") == 0 for t, _ in outs)


@pytest.mark.parametrize(("row", "kw", "exits", "turns", "pd", "qd", "first"), GAMES)
def test_seeded_batches_capture_at_the_solved_rate(
    tmp_path: Path, row, kw, exits, turns, pd, qd, first
) -> None:  # type: ignore[no-untyped-def]
    full, _ = _game(row, kw, exits, turns, pd, qd, first)
    path = write(tmp_path, row, full, exits=exits, turns=turns)
    sc = load_scenario(str(path))
    fields = FieldCache(sc)
    sol = solved(path, fields)
    want = sol.to_dict()["p"]["capture"]
    assert 0.05 < want < 0.95  # a batch that tells something
    rate, half, _ = played(sc, fields, want, 400)
    assert abs(rate - want) <= half, (rate, want, half)


def test_solve_json_with_paces(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    row, kw, exits, turns, pd, qd, first = GAMES[0]
    full, game = _game(row, kw, exits, turns, pd, qd, first)
    path = write(tmp_path, row, full, exits=exits, turns=turns)
    assert main(["solve", str(path), "--json"]) == 0
    got = json.loads(capsys.readouterr().out)
    want = game.value((0, "stop", 0, False), (full["q_cell"], "stop", 0, False), 1)
    assert got["dice"] is True and got["p"]["capture"] == pytest.approx(float(want[0]))


def test_too_many_pace_states_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """More pace states than the limit: one line naming the token's side and the limit."""
    from engine.solve import Unsolvable, pace

    row, kw, exits, turns, pd, qd, first = GAMES[0]
    full, _ = _game(row, kw, exits, turns, pd, qd, first)
    path = write(tmp_path, row, full, exits=exits, turns=turns)
    monkeypatch.setattr(pace, "MAX_PACE_STATES", 2)
    sc = load_scenario(str(path))
    with pytest.raises(Unsolvable, match="more than 2 pace states"):
        from engine.sim.view import solve_run

        solve_run(Simulation(sc, seed=0, record=False))
