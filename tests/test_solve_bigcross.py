"""The crossings' walks cut to the aims that may end off a position's one-turn cells
(engine/solve/bigcross.py, issue 39): the lifted game equals the one walking every aim
(engine/solve/crossing.py's plain walks) on random chases with crossings, a wrong bound is
caught, the cut search around the pursuer equals scipy's, and a game the plain walks pass
the limit on solves to the minimax's value, seeded ``solve: auto`` play ending in it."""

from __future__ import annotations

from fractions import Fraction
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.sparse.csgraph import dijkstra
from test_solve import RANDOM_SEEDS, Crossing, random_chase, slow_tokens, write_chase

import engine.solve as solve_pkg
import engine.solve.bigcross as bigcross
import engine.solve.crossing as crossing
from engine.scenario import load_scenario
from engine.sim import FieldCache, Simulation
from engine.sim.view import solve_run
from engine.solve import Unsolvable

#: Random chases where a token can reach a crossing of more than a turn.
SLOW_SEEDS = [s for s in RANDOM_SEEDS if slow_tokens(random_chase(s))]

Key = tuple[Any, ...]


def _rows(game: Any, out: crossing.Crossings) -> dict[Key, frozenset[Key]]:
    """The lifted game's moves by position (a cell, or side, cell, toward, share): each
    side's, and the quarry's around the pursuer where the game keeps them apart."""

    def key(pos: int) -> Key:
        if pos < out.n:
            return (pos,)
        i = pos - out.n
        return (out.side[i], out.stand[i], out.toward[i], out.share[i])

    got: dict[Key, frozenset[Key]] = {}
    for side, reach in (("p", game.reach_p), ("q", game.reach_q)):
        for pos in range(game.n):
            got[(side, key(pos))] = frozenset(key(int(e)) for e in reach.of(pos))
    b = game.blocked
    if b is not None:
        for k in range(len(b.p)):
            row = b.idx[b.ptr[k] : b.ptr[k + 1]]
            got[("b", key(int(b.p[k])), key(int(b.q[k])))] = frozenset(key(int(e)) for e in row)
    return got


def _moves(rows: dict[Key, frozenset[Key]], k: Key) -> frozenset[Key] | None:
    """A position's moves (the quarry's around the pursuer: its own where none apart)."""
    if k in rows:
        return rows[k]
    return rows.get(("q", k[2])) if k[0] == "b" else None


def _lift(path: Path, plain: bool, monkeypatch: pytest.MonkeyPatch) -> tuple[Any, ...]:
    """The outcome, the lifted game's moves and the aims kept, every aim walked where
    ``plain``, else the reduced walks; or the refusal."""
    seen: dict[str, Any] = {}
    real = solve_pkg.lift_crossings

    def spy(game: Any, turns: Any, name: str) -> Any:
        lifted, out = real(game, turns, name)
        seen.update(rows=_rows(lifted, out), out=out, turns=turns)
        return lifted, out

    with monkeypatch.context() as m:
        m.setattr(solve_pkg, "lift_crossings", spy)
        if plain:
            m.setattr(bigcross, "reducers", lambda game, t: {"pursuer": None, "quarry": None})
        try:
            sol = solve_run(Simulation(load_scenario(str(path)), seed=0, record=False))
        except Unsolvable as e:
            return ("refused", str(e), None)
    return (sol.outcome(), seen.get("rows"), seen)


def _differ(a: dict[Key, frozenset[Key]] | None, b: dict[Key, frozenset[Key]] | None) -> int:
    if a is None or b is None:
        return int(a is not b)
    return sum(_moves(a, k) != _moves(b, k) for k in set(a) | set(b))


@pytest.mark.parametrize("seed", SLOW_SEEDS)
def test_the_reduced_walks_lift_the_game_every_aim_lifts(
    seed: int, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every position's moves (the quarry's around the pursuer too) are those walking
    every aim gives, the value the same, and each aim kept ends its turn where it is kept
    for (walked again by the loop's walker)."""
    path = write_chase(tmp_path, **random_chase(seed))  # type: ignore[arg-type]
    plain = _lift(path, True, monkeypatch)
    got = _lift(path, False, monkeypatch)
    assert got[0] == plain[0]
    assert _differ(got[1], plain[1]) == 0
    if got[2] is None or got[2].get("out") is None:
        return
    out, turns = got[2]["out"], got[2]["turns"]
    walks = crossing._Walks(_game_of(path), turns, "t", out)
    for (side, src, end), aim in out.aims.items():
        assert walks.end(side, src, aim, None) == end
    for (p, src, end), aim in out.aims_b.items():
        assert walks.end("quarry", src, aim, p) == end


def _game_of(path: Path) -> Any:
    """The game solve builds for ``path`` before the crossings are lifted."""
    seen: dict[str, Any] = {}
    real = solve_pkg.lift_crossings

    def spy(game: Any, turns: Any, name: str) -> Any:
        seen["game"] = game
        return real(game, turns, name)

    solve_pkg.lift_crossings = spy  # type: ignore[assignment]
    try:
        solve_run(Simulation(load_scenario(str(path)), seed=0, record=False))
    finally:
        solve_pkg.lift_crossings = real
    return seen["game"]


@pytest.mark.parametrize(
    ("name", "wrong"),
    [
        ("a bound one tick too tight", ("ABS_TOL", -1.0)),
        ("no aims around the pursuer", ("blocked_aims", None)),
    ],
)
def test_a_wrong_reduction_is_caught(
    name: str, wrong: tuple[str, Any], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Made wrong, the reduction lifts another game on some of the random chases: the
    comparison above can fail."""
    what, value = wrong
    if what == "ABS_TOL":
        monkeypatch.setattr(bigcross, "ABS_TOL", value)
    else:
        monkeypatch.setattr(bigcross.Reducer, what, lambda self, *a: np.zeros(self.n, dtype=bool))
    differ = 0
    for seed in SLOW_SEEDS:
        folder = tmp_path / str(seed)
        folder.mkdir()
        path = write_chase(folder, **random_chase(seed))  # type: ignore[arg-type]
        with monkeypatch.context() as m:
            m.setattr(bigcross, "ABS_TOL", 1e-6)
            plain = _lift(path, True, m)
        differ += _differ(_lift(path, False, monkeypatch)[1], plain[1]) > 0
        if differ:
            break
    assert differ, name


@pytest.mark.parametrize("seed", range(6))
def test_the_search_without_the_pursuers_cell_is_scipys(seed: int, tmp_path: Path) -> None:
    """:meth:`Reducer._without` (the kernel's search on the graph less a cell's in-edges)
    equals scipy's Dijkstra on the graph with that cell's nodes cut out."""
    chase = random_chase(seed)
    chase.update(rows=[r * 3 for r in chase["rows"]] * 2)
    path = write_chase(tmp_path, **chase)  # type: ignore[arg-type]
    game = _game_of(path) if slow_tokens(chase) else None
    if game is None:
        pytest.skip("no crossing")
    red = bigcross.Reducer(game, "quarry")
    rng = np.random.default_rng(seed)
    dense = red.csr.toarray()
    for _ in range(8):
        cell, p = (int(x) for x in rng.integers(0, red.n, size=2))
        cut = dense.copy()
        cut[:, np.arange(cut.shape[0]) % red.n == p] = 0
        want = dijkstra(sp.csr_array(cut), indices=[red.start + cell])[0]
        assert np.array_equal(red._without(cell, p), want)


#: A 9x6 field of open and rough ground at 5 ft a turn for the quarry (a rough cell over
#: two turns) and 10 for the pursuer.
BIG = dict(
    rows=["...,.....", ".,...,,..", "....#....", "..,..,...", ".#...,..,", "........."],
    diagonals="equal",
    quarry=(4, 3),
    pursuer=(0, 0),
    q_speed=5,
    p_speed=10,
    capture=0,
    turns=8,
    exits=[(8, 5)],
)


def test_a_game_past_the_limit_walking_every_aim_solves_as_played(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Under a limit walking every aim passes (refused in one line), the reduced walks
    solve the game to the value of the minimax with crossings (tests/test_solve.py's
    :class:`Crossing`), and seeded ``solve: auto`` runs end in that round."""
    path = write_chase(tmp_path, **BIG)  # type: ignore[arg-type]
    want = Crossing(BIG).outcome()
    monkeypatch.setattr(crossing, "MAX_CROSSING_TURNS", 10_000)
    refused = _lift(path, True, monkeypatch)
    assert refused[0] == "refused" and "more than 10,000 turns walked" in refused[1]
    got = _lift(path, False, monkeypatch)
    assert got[0] == want
    out = got[2]["out"]
    assert any(s == "quarry" for s in out.side)  # crossings under way are positions
    sc = load_scenario(str(path))
    fields = FieldCache(sc)
    played = {
        (r.outcome, r.turns)
        for r in (Simulation(sc, seed=s, fields=fields, record=False).run() for s in range(4))
    }
    assert played == {want}
    assert Fraction(1, 2) in set(out.share)
