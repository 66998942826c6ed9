"""`tacgrid solve` with D6 rolls made cell by cell (issue 39): setting `roll_per = cell_run`,
one movement roll a stretch of the same terrain, whose failure carries into the next rounds
as the once-a-round roll's does (a slip's -1D, a fall's stop, a tumble's lost round), solved
as pace positions (engine.solve.pace, engine.solve.carry). Checked against an expectimax
written here from seed 003's text (test_solve_d6pace's speeds, terrain table, pool and
Movement Failures table) and docs/rules.md's ruling for rolls on the way ("a degree that
does not let it on keeps it out of that cell": the move ends on the cell before), in
Fractions, and against seeded `solve: auto` batches inside the 95% interval."""

from __future__ import annotations

import functools
from fractions import Fraction
from pathlib import Path

import pytest
from corridor_game import played, solved
from test_solve_d6pace import EFFECT, LEVEL, NUMBERS, PaceGame, Pos, bands, rolled_level, write

from engine.scenario import load_scenario
from engine.sim import FieldCache
from engine.solve import PaceSolution
from engine.systems import create

#: The pool's bands, worked out once per pool and number (Fractions of long sums).
_bands = functools.cache(bands)


class CellRunGame(PaceGame):
    """:class:`PaceGame` with a roll at each stretch of terrain entered.

    Seed 003 rolls "running" for the terrain by speed (``rolled_level``); with `cell_run`
    the turn rolls on entering its first cell and again wherever the terrain (its move and
    difficulty) changes from the cell before, each against that stretch's level. A success
    goes on; a failure of any margin keeps the token out of the cell it rolled for (the
    loop's rule for rolls on the way: docs/rules.md), and leaves what the Movement Failures
    table leaves for the rounds after (``EFFECT``: the dice lost next round, the fall's
    stop, the lost round)."""

    def outcomes(self, who: str, at: Pos, to: int) -> list[tuple[Pos, Fraction]]:  # type: ignore[override]
        cell, speed0, lost, held = at
        if held:
            return [((cell, "stop", 0, False), Fraction(1))]
        speed = self.speed_of(who, at)
        d = 1 if to > cell else -1
        dice = max(0, self.kw[who + "_dice"] - lost)
        out: list[tuple[Pos, Fraction]] = []
        going = Fraction(1)  # the chance of every roll so far made
        prev = self.row[cell]
        for k in range(1, abs(to - cell) + 1):
            here = self.row[cell + d * k]
            level = rolled_level(speed, LEVEL[here])
            new = k == 1 or here != prev
            prev = here
            if not new or level is None:
                continue
            odds = _bands(dice, NUMBERS[level])
            for band, p in odds.items():
                if band == "success" or not p:
                    continue
                _, lose, falls, lose_next = EFFECT[band]
                stop = cell + d * (k - 1)
                if falls:
                    out.append(((stop, "stop", lose, lose_next), going * p))
                else:
                    after = self._after(speed0, speed, stop != cell)
                    out.append(((stop, after, lose, False), going * p))
            going *= odds["success"]
        out.append(((to, self._after(speed0, speed, to != cell), 0, False), going))
        return out


def _write(tmp: Path, row: str, game: dict, exits: tuple[int, ...], turns: int) -> Path:  # type: ignore[type-arg]
    path = write(tmp, row, game, exits=exits, turns=turns)
    text = path.read_text(encoding="utf-8")
    path.write_text(text.replace("tokens:", "settings: {roll_per: cell_run}\ntokens:"), "utf-8")
    return path


GAMES = [
    # All-out from a stop across a stretch of rough ground (cruising: automatic there;
    # all-out: Moderate + 1) against a quarry at high speed.
    (
        ".." + ",," + "......",
        dict(p_cell=0, q_cell=4, p_pace="all_out", q_pace="high"),
        (9,),
        4,
        2,
        2,
        True,
    ),
    # Forest and open ground alternating: a roll at each stretch, the quarry first.
    ("...+..+...", dict(p_cell=0, q_cell=3, p_pace="all_out", q_pace="high"), (9,), 5, 2, 2, False),
    # A fast pursuer (Move 4) after a cruising quarry: the batches' games.
    (
        "..,,......",
        dict(p_cell=0, q_cell=5, p_pace="all_out", q_pace="cruising", p_move=4),
        (9,),
        4,
        2,
        2,
        True,
    ),
    (
        "..,,......",
        dict(p_cell=0, q_cell=4, p_pace="all_out", q_pace="cruising", p_move=4),
        (9,),
        4,
        1,
        2,
        False,
    ),
]


def _game(row: str, kw: dict, exits: tuple, turns: int, pd: int, qd: int, first: bool):  # type: ignore[no-untyped-def, type-arg]
    full = {"p_move": 2, "q_move": 2, **kw, "p_dice": pd, "q_dice": qd}
    return dict(full, pursuer_first=first), CellRunGame(row, set(exits), turns, first, **full)


@pytest.mark.parametrize(("row", "kw", "exits", "turns", "pd", "qd", "first"), GAMES)
def test_cell_runs_equal_the_expectimax(
    tmp_path: Path, row, kw, exits, turns, pd, qd, first
) -> None:  # type: ignore[no-untyped-def]
    full, game = _game(row, kw, exits, turns, pd, qd, first)
    sol = solved(_write(tmp_path, row, full, exits, turns))
    assert isinstance(sol, PaceSolution)
    want = game.value((full["p_cell"], "stop", 0, False), (full["q_cell"], "stop", 0, False), 1)
    pc, u, pe, _ = sol.start().tolist()
    assert pc == pytest.approx(float(want[0]), abs=1e-9)
    assert u == pytest.approx(float(want[1]), abs=1e-9)
    assert pe == pytest.approx(float(want[2]), abs=1e-9)


def test_the_games_tell_cell_runs_apart(monkeypatch: pytest.MonkeyPatch) -> None:
    """The same corridors rolled once a round (test_solve_d6pace's game), or with the
    failures' carried effects dropped, come out otherwise: the tests above tell them."""
    import test_solve_d6pace

    monkeypatch.setattr(test_solve_d6pace, "bands", _bands)  # the same bands, kept
    for row, kw, exits, turns, pd, qd, first in GAMES:
        full, game = _game(row, kw, exits, turns, pd, qd, first)
        start = ((full["p_cell"], "stop", 0, False), (full["q_cell"], "stop", 0, False))
        per_round = PaceGame(row, set(exits), turns, first, **game.kw)
        assert game.value(*start, 1) != per_round.value(*start, 1), row
        plain = CellRunGame(row, set(exits), turns, first, **game.kw)
        saved = dict(EFFECT)
        try:
            for k, (share, _, _, _) in saved.items():
                EFFECT[k] = (share, 0, False, False)
            flat = plain.value(*start, 1)
        finally:
            EFFECT.update(saved)
        assert game.value(*start, 1) != flat, row


@pytest.mark.parametrize("i", [2, 3])
def test_seeded_cell_run_batches_capture_at_the_solved_rate(tmp_path: Path, i: int) -> None:
    row, kw, exits, turns, pd, qd, first = GAMES[i]
    full, _ = _game(row, kw, exits, turns, pd, qd, first)
    path = _write(tmp_path, row, full, exits, turns)
    sc = load_scenario(str(path))
    fields = FieldCache(sc)
    want = solved(path, fields).to_dict()["p"]["capture"]
    assert 0.05 < want < 0.95  # a batch that tells something
    rate, half, _ = played(sc, fields, want, 400)
    assert abs(rate - want) <= half, (rate, want, half)


def test_collision_margins_are_the_pools_product() -> None:
    """D6's kept collision margins (one product per damage code and Strength) against the
    product worked out here from the engine's exact pools."""
    from engine.dice import DieCode, d6_pool_dist
    from engine.systems.d6 import collision_margins

    hit = d6_pool_dist(DieCode(2), wild=True, wild_one="complication").dist
    res = d6_pool_dist(DieCode.parse("3D"), wild=True, wild_one="complication").dist
    want: dict[int, Fraction] = {}
    for h, ph in hit.items():
        for r, pr in res.items():
            want[h - r] = want.get(h - r, Fraction(0)) + ph * pr
    got = collision_margins(2, "3D", True, "complication")
    assert dict(got) == want and [m for m, _ in got] == sorted(want)
    d6 = create("d6")
    token = d6.token("move=10,strength=3D")
    token = token.with_state(token.state.set_counter("collision_dice", 2))
    outs = d6.end_turn_outcomes(token)
    assert outs is not None
    assert [(t.state.counter("collision_margin"), p) for t, p in outs] == list(got)


def test_stamina_outcomes_match_rolled_ends() -> None:
    """D6's end_turn_outcomes where a stamina roll falls due (RULES.md 3: "first roll Very
    Easy, one level harder each roll, a failure forcing rest"), after a collision, against
    end_turn rolled: each outcome's chance, and the exhausted share within 4 sigma."""
    from engine.dice import Dice

    d6 = create("d6", {"stamina": True})
    token = d6.token("move=10,strength=2D")
    state = token.state.set_counter("collision_dice", 1).set_counter("stamina_due", 4)
    state = state.set_counter("stamina_rolls", 2).set_counter("run_rounds", 12)
    token = token.with_state(state)
    outs = d6.end_turn_outcomes(token)
    assert outs is not None and sum(p for _, p in outs) == 1
    assert all(t.state.counter("stamina_rolls") == 3 for t, _ in outs)
    assert all(not t.state.counter("stamina_due") for t, _ in outs)
    tired = [t for t, _ in outs if t.state.has("exhausted")]
    assert tired and all(t.state.counter("rest_due") == 24 for t in tired)
    p_tired = float(sum((p for t, p in outs if t.state.has("exhausted")), Fraction(0)))
    dice = Dice(11)
    rolled = [d6.end_turn(token, dice) for _ in range(20000)]
    seen = sum(t.state.has("exhausted") for t in rolled) / len(rolled)
    assert abs(seen - p_tired) < 4 * (p_tired * (1 - p_tired) / len(rolled)) ** 0.5


def _map2d(tmp: Path, rows: list[str], turns: int) -> Path:
    """A D6 chase on a drawn map (``.`` open, ``+`` forest), the pursuer all-out from the
    top left, the quarry at high speed from the bottom right."""
    import re

    import tmxtext
    from test_solve_d6pace import _TILES

    doc = tmxtext.tmx([r.replace("+", "H") for r in rows], properties={"diagonals": "none"})
    doc = doc.replace(tmxtext.tileset_xml(), _TILES)
    gids = {str(tmxtext.CHARS.index(c) + 1): str(i + 1) for i, c in enumerate(".#H")}
    head, data, tail = doc.partition('<data encoding="csv">\n')
    body, end, rest = tail.partition("\n</data>")
    body = re.sub(r"\d+", lambda m: gids[m.group(0)], body)
    (tmp / "m.tmx").write_text(head + data + body + end + rest, encoding="utf-8")
    w, h = len(rows[0]), len(rows)
    path = tmp / "chase.yaml"
    path.write_text(
        f"map: m.tmx\nsystem: d6\nturns: {turns}\ngoals: {{capture: 1}}\ntokens:\n"
        "  - {id: p, side: pursuer, policy: pursuer, cell: [0, 0], pace: all_out, "
        "stats: {move: 2, running: 2D}}\n"
        f"  - {{id: q, side: quarry, policy: quarry, cell: [{w - 1}, {h - 1}], pace: high, "
        "stats: {move: 2, running: 2D}}\n",
        encoding="utf-8",
    )
    return path


def test_kept_turns_equal_the_turns_walked(tmp_path: Path) -> None:
    """SolveTurns keeps a turn by the token as its turn starts, its cell, its aim and the
    other token in its way: on a 2-D map (the quarry's ways around the pursuer bend) the
    game solved so equals the game whose every turn is walked afresh."""
    from engine.sim import Simulation
    from engine.sim.paceturn import SolveTurns
    from engine.sim.view import SolveWays
    from engine.solve import Mover, solve

    class Plain(SolveTurns):
        def pace_turn(self, side, token, cell, dst, blocker):  # type: ignore[no-untyped-def]
            tok, pace = self._started(side, token, cell)
            return self._pace_turn(side, tok, pace, cell, dst, blocker)

    path = _map2d(tmp_path, ["....", ".+..", "...."], 3)
    got = []
    for kind in (SolveTurns, Plain):
        run = Simulation(load_scenario(str(path)), seed=0, record=False)
        movers, profs, sizes = [], {}, {}
        for t in run.order:
            side = "pursuer" if t in run.pursuers else "quarry"
            profs[side], sizes[side] = run.profile_now(t), run.specs[t].size
            movers.append(
                Mover(t, side, profs[side].graph, run.tokens[t].state.cell, run.tokens[t])
            )
        ways = SolveWays(run.fields, profs, sizes, run.door_key(), True)
        tokens = {m.side: run.tokens[m.tid] for m in movers}
        turns = kind(ways, tokens, run.scenario.system)
        got.append(solve(run.scenario, movers, run.scenario.system, 10**8, ways, turns))
    kept, plain = got
    assert isinstance(kept, PaceSolution) and isinstance(plain, PaceSolution)
    assert kept.expecti.values[0].shape == plain.expecti.values[0].shape
    for a, b in zip(kept.expecti.values, plain.expecti.values, strict=True):
        assert (a == b).all()
