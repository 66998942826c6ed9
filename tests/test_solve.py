"""`tacgrid solve` (issue 39): exact solutions of small chases, checked against a plain
minimax written here from the map's drawing alone (its own moves, captures and exits; no
code of engine.solve), and the shipped policies playing the solved game (``solve: auto``)
ending in that round in every run."""

from __future__ import annotations

import functools
import heapq
import json
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest
import tmxtext

from engine.cli import main
from engine.scenario import load_scenario
from engine.sim import FieldCache, Simulation
from engine.sim.view import solve_run
from engine.solve import Unsolvable
from engine.solve.game import _one_turn, without_cell

COST = {".": 1, ",": 2, "^": 2}  # a 10-ft cliff: its height climbed (MAP-FORMAT.md)


def write_chase(
    tmp: Path,
    rows: list[str],
    *,
    diagonals: str,
    quarry: tuple[int, int],
    pursuer: tuple[int, int],
    q_speed: int,
    p_speed: int,
    capture: int,
    turns: int,
    exits: list[tuple[int, int]] = (),  # type: ignore[assignment]
    pursuer_first: bool = False,
    solve: str = "auto",
) -> Path:
    tmxtext.write(
        tmp / "m.tmx",
        rows,
        properties={"diagonals": diagonals},
        objects=tmxtext.exit_objects(list(exits)),
    )
    q = f"  - {{id: q, side: quarry, policy: quarry, cell: {list(quarry)}, stats: {{speed: {q_speed}}}}}\n"
    p = f"  - {{id: p, side: pursuer, policy: pursuer, cell: {list(pursuer)}, stats: {{speed: {p_speed}}}}}\n"
    text = (
        f"map: m.tmx\nsystem: generic\nturns: {turns}\nsolve: {solve}\n"
        f"goals: {{capture: {capture}}}\ntokens:\n" + (p + q if pursuer_first else q + p)
    )
    path = tmp / "chase.yaml"
    path.write_text(text, encoding="utf-8")
    return path


# --------------------------------------------------------------------------- the oracle


class Plain:
    """Minimax over (pursuer, quarry, whose move, round) by plain recursion: moves are the
    cells a plain Dijkstra reaches within the token's cells of a turn (rough ground costs
    two; the quarry may not pass or end on the pursuer), a capture within ``capture`` steps
    after any move, then an exit; the pursuer prefers the earliest capture, then a
    timeout, then the latest escape."""

    def __init__(self, chase: dict) -> None:  # type: ignore[type-arg]
        self.rows = chase["rows"]
        self.h, self.w = len(self.rows), len(self.rows[0])
        self.equal = chase["diagonals"] == "equal"
        if self.equal:
            self.steps = [(c, r) for c in (-1, 0, 1) for r in (-1, 0, 1) if (c, r) != (0, 0)]
        else:
            self.steps = [(1, 0), (-1, 0), (0, 1), (0, -1)]
        self.q_cells, self.p_cells = chase["q_speed"] // 5, chase["p_speed"] // 5
        self.capture, self.turns = chase["capture"], chase["turns"]
        self.exits = set(chase["exits"])
        self.order = ("p", "q") if chase.get("pursuer_first") else ("q", "p")
        self.start = (chase["pursuer"], chase["quarry"])
        self.moves = functools.cache(self._moves)
        self.value = functools.cache(self._value)

    def open_(self, c: tuple[int, int]) -> bool:
        return 0 <= c[0] < self.w and 0 <= c[1] < self.h and self.rows[c[1]][c[0]] != "#"

    def _moves(self, start: tuple[int, int], budget: int, block: object) -> list:  # type: ignore[type-arg]
        return sorted(self.reached(start, budget, block, 0))

    def reached(self, start, budget, block, used):  # type: ignore[no-untyped-def]
        """The cells a walk from ``start`` reaches with ``used`` of ``budget`` already
        spent, not through ``block``, each with the least spent getting there."""
        best = {start: used}
        heap = [(used, start)]
        while heap:
            d, a = heapq.heappop(heap)
            if d > best[a]:
                continue
            for dc, dr in self.steps:
                b = (a[0] + dc, a[1] + dr)
                if not self.open_(b) or b == block:
                    continue
                nd = d + COST[self.rows[b[1]][b[0]]]
                if nd <= budget and nd < best.get(b, 1 << 30):
                    best[b] = nd
                    heapq.heappush(heap, (nd, b))
        return best

    def ended(
        self, p: tuple[int, int], q: tuple[int, int], rnd: int, q_at: object = None
    ) -> int | None:
        """A capture (``p``, ``q``: where they are reached), then an escape (``q_at``:
        where the quarry stands, where it is reached elsewhere)."""
        dc, dr = abs(p[0] - q[0]), abs(p[1] - q[1])
        if (max(dc, dr) if self.equal else dc + dr) <= self.capture:
            return 1000 - rnd
        if (q if q_at is None else q_at) in self.exits:
            return rnd - 1000
        return None

    def stand(self, pos: tuple) -> tuple[int, int]:  # type: ignore[type-arg]
        """The cell a position stands on (a position is a cell here)."""
        return pos  # type: ignore[return-value]

    def reach(self, pos: tuple) -> tuple[int, int]:  # type: ignore[type-arg]
        """Where a position is reached, for a capture and in the quarry's way."""
        return self.stand(pos)

    def pos_moves(self, pos, budget, block):  # type: ignore[no-untyped-def]
        """Where a turn from ``pos`` may end."""
        return self.moves(pos, budget, block)

    def _value(self, p, q, ply: int, rnd: int) -> int:  # type: ignore[no-untyped-def]
        who = self.order[ply]
        if who == "p":
            options = [(x, q) for x in self.pos_moves(p, self.p_cells, None)]
        else:
            bp = self.reach(p)
            block = bp if bp != self.stand(q) else None
            options = [(p, x) for x in self.pos_moves(q, self.q_cells, block)]
        vals = []
        for np_, nq in options:
            v = self.ended(self.reach(np_), self.reach(nq), rnd, self.stand(nq))
            if v is None:
                if ply == 0:
                    v = self.value(np_, nq, 1, rnd)
                else:
                    v = 0 if rnd == self.turns else self.value(np_, nq, 0, rnd + 1)
            vals.append(v)
        return max(vals) if who == "p" else min(vals)

    def outcome(self) -> tuple[str, int]:
        v = self.value(*self.start, 0, 1)
        if v > 0:
            return "capture", 1000 - v
        if v < 0:
            return "escape", 1000 + v
        return "timeout", self.turns


class Crossing(Plain):
    """:class:`Plain` with crossings of more than a turn, from the rule text (RULES.md 0,
    docs/rules.md): a cell that takes more than a whole turn (its cost above the token's
    cells a turn) is entered over turns: a token that reaches a cell next to it with time
    left puts the rest of the turn into it, standing where it is with that share made
    (the rest over the cell's cost); next turn, going on, it gets in once the rest is
    made and walks on with what is left of the turn (perhaps into another such cell);
    any other move turns away and loses it, as if from the cell (going on is the one way
    toward that cell). A token crossing stands on its cell: caught there, in the way
    there, escaping there. A position: a cell, or ``(cell, toward, share)``."""

    def stand(self, pos: tuple) -> tuple[int, int]:  # type: ignore[type-arg]
        return pos[0] if len(pos) == 3 else pos  # type: ignore[no-any-return]

    def walks(self, start, budget, block, used, avoid=None):  # type: ignore[no-untyped-def]
        """Ends of a walk from ``start`` with ``used`` of ``budget`` spent: the cells
        reached within the turn, and the crossings begun from them (none toward ``avoid``)."""
        best = self.reached(start, budget, block, used)
        ends: set = set(best)  # type: ignore[type-arg]
        for a, d in best.items():
            for dc, dr in self.steps:
                b = (a[0] + dc, a[1] + dr)
                if not self.open_(b) or b == block or (a == start and b == avoid):
                    continue
                cost = COST[self.rows[b[1]][b[0]]]
                if cost > budget and d < budget:
                    ends.add((a, b, Fraction(budget - d, cost)))
        return ends

    def pos_moves(self, pos, budget, block):  # type: ignore[no-untyped-def]
        if len(pos) != 3:
            return self.walks(pos, budget, block, 0)
        at, toward, share = pos
        ends = self.walks(at, budget, block, 0, avoid=toward)  # turning away
        if toward != block:  # going on
            cost = COST[self.rows[toward[1]][toward[0]]]
            need = (1 - share) * cost
            if need <= budget:
                ends |= self.walks(toward, budget, block, need)
            else:
                ends.add((at, toward, share + Fraction(budget, cost)))
        return ends


# --------------------------------------------------------------------------- chases

CHASES = {
    # A corridor: the quarry runs for the far end, the faster pursuer behind it.
    "corridor": dict(
        rows=["###########", "...........", "###########"],
        diagonals="none",
        quarry=(3, 1),
        pursuer=(0, 1),
        q_speed=5,
        p_speed=10,
        capture=0,
        turns=12,
        exits=[(10, 1)],
    ),
    # The corridor with the exit too near: the quarry escapes.
    "corridor_escape": dict(
        rows=["###########", "...........", "###########"],
        diagonals="none",
        quarry=(6, 1),
        pursuer=(0, 1),
        q_speed=5,
        p_speed=10,
        capture=0,
        turns=12,
        exits=[(10, 1)],
    ),
    # An open field with rough ground, no exit: the faster pursuer corners the quarry
    # (at 5 ft a turn the quarry crosses a rough cell over two turns: Crossing).
    "open_field": dict(
        rows=[".......", "..,,...", ".......", "...,...", "......."],
        diagonals="equal",
        quarry=(6, 4),
        pursuer=(0, 0),
        q_speed=5,
        p_speed=10,
        capture=0,
        turns=10,
        exits=[],
    ),
    # A pillar at equal speed: the quarry circles it; capture at one step needs more.
    "pillar": dict(
        rows=[".....", ".###.", ".###.", ".###.", "....."],
        diagonals="none",
        quarry=(4, 4),
        pursuer=(0, 0),
        q_speed=5,
        p_speed=5,
        capture=0,
        turns=8,
        exits=[],
    ),
    # A pillar with a faster pursuer, moving first, catching at one step.
    "pillar_faster": dict(
        rows=[".....", ".###.", ".###.", ".###.", "....."],
        diagonals="none",
        quarry=(4, 4),
        pursuer=(0, 0),
        q_speed=5,
        p_speed=10,
        capture=1,
        turns=8,
        exits=[],
        pursuer_first=True,
    ),
    # A maze of rooms joined by doorways, an exit in the far room.
    "rooms": dict(
        rows=[
            "...#...#...",
            "...#.......",
            ".......#...",
            "####.####.#",
            "...#...#...",
            ".......#...",
        ],
        diagonals="equal",
        quarry=(5, 4),
        pursuer=(0, 0),
        q_speed=5,
        p_speed=10,
        capture=0,
        turns=10,
        exits=[(10, 5)],
    ),
}


@pytest.mark.parametrize("name", sorted(CHASES))
def test_solve_matches_a_plain_minimax_and_the_policies_play_it(name: str, tmp_path: Path) -> None:
    chase = dict(CHASES[name])
    path = write_chase(tmp_path, **chase)  # type: ignore[arg-type]
    want = Crossing(chase).outcome()
    sc = load_scenario(str(path))
    solution = solve_run(Simulation(sc, seed=0, record=False))
    assert solution.outcome() == want
    fields = FieldCache(sc)
    played = {
        (r.outcome, r.turns)
        for r in (Simulation(sc, seed=s, fields=fields, record=False).run() for s in range(8))
    }
    assert played == {want}


def test_the_chases_are_not_all_alike() -> None:
    """The chases above cover each outcome (a solver that always said one would fail)."""
    got = {Plain(chase).outcome()[0] for chase in CHASES.values()}
    assert got == {"capture", "escape", "timeout"}


def test_a_replay_of_solved_play_reproduces(tmp_path: Path) -> None:
    path = write_chase(tmp_path, **CHASES["rooms"])  # type: ignore[arg-type]
    sc = load_scenario(str(path))
    a, b = Simulation(sc, seed=3), Simulation(sc, seed=3)
    a.run(), b.run()
    assert a.events == b.events


def test_blocked_moves_are_the_profiles_without_the_cell(tmp_path: Path) -> None:
    """The seam :func:`without_cell` prunes the compiled arrays as
    :meth:`Profile.without` does: the same one-turn moves from every cell."""
    path = write_chase(tmp_path, **CHASES["rooms"])  # type: ignore[arg-type]
    sc = load_scenario(str(path))
    sim = Simulation(sc, seed=0, record=False)
    prof = sim.profile_now("q")
    g = prof.graph
    src = np.arange(g.n)
    for cell in (0, 12, 26, 37, 50):
        mine = _one_turn(g, without_cell(g, g.csr(), cell), src)
        theirs = _one_turn(g, prof.without(frozenset({g.grid.cell_of_index(cell)})).csr, src)
        assert np.array_equal(mine, theirs)


def test_solve_json_and_text(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = write_chase(tmp_path, **CHASES["corridor"])  # type: ignore[arg-type]
    assert main(["solve", str(path), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert {"kind", "outcome", "turns", "p", "states"} <= set(doc)
    assert doc["kind"] == "solve" and doc["outcome"] == "capture"
    assert set(doc["p"]) == {"capture", "escape", "timeout"} and doc["p"]["capture"] == 1.0
    assert doc["states"] == 11 * 11 * 12
    assert main(["solve", str(path)]) == 0
    out = capsys.readouterr().out
    assert "capture" in out and f"round {doc['turns']}" in out and "1,452 states" in out


def test_too_many_states_is_one_line_naming_the_count_and_the_limit(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write_chase(tmp_path, **CHASES["corridor"])  # type: ignore[arg-type]
    assert main(["solve", str(path), "--max-states", "1000"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "1,452 states" in err and "limit 1,000" in err


def test_two_pursuers_are_refused_in_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["solve", "chase"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "one pursuer against one quarry" in err


def test_solve_off_keeps_the_heuristics(tmp_path: Path) -> None:
    """``solve: off`` (the default) never asks the solver."""
    path = write_chase(tmp_path, **dict(CHASES["open_field"], solve="off"))  # type: ignore[arg-type]
    sc = load_scenario(str(path))
    sim = Simulation(sc, seed=0, record=False)
    sim.run()
    assert sim.fields.solved is None
    with pytest.raises(Unsolvable):
        solve_run(sim, max_states=10)


def test_solve_auto_falls_back_where_the_game_does_not_fit(tmp_path: Path) -> None:
    """The shipped chase less its second pursuer (D6: every move a roll, which the solver
    refuses): ``solve: auto`` plays the heuristics, run for run as ``off`` does."""
    from engine.data import maps, scenarios

    text = scenarios()["chase"].read_text(encoding="utf-8")
    text = text.replace("map: ../maps/chase.tmx", f"map: {maps()['chase']}")
    text = text[: text.index("  - id: pursuer2")]
    auto, off = tmp_path / "auto.yaml", tmp_path / "off.yaml"
    auto.write_text(text + "solve: auto\n", encoding="utf-8")
    off.write_text(text, encoding="utf-8")
    a, b = load_scenario(str(auto)), load_scenario(str(off))
    for seed in range(3):
        ra = Simulation(a, seed=seed, record=False)
        rb = Simulation(b, seed=seed, record=False)
        assert ra.run().to_dict() == rb.run().to_dict()
    assert ra.fields.solved is not None and ra.fields.solved[1] is None


def test_a_batch_on_workers_plays_the_solved_round(tmp_path: Path) -> None:
    path = write_chase(tmp_path, **CHASES["pillar_faster"])  # type: ignore[arg-type]
    want = Plain(CHASES["pillar_faster"]).outcome()
    out = tmp_path / "out"
    args = ["run", str(path), "--runs", "12", "--workers", "2", "--out", str(out)]
    assert main([*args, "--no-plots", "--quiet"]) == 0
    runs = [json.loads(line) for line in (out / "runs.jsonl").read_text().splitlines()]
    assert {(r["outcome"], r["turns"]) for r in runs} == {want}


def test_a_map_too_big_for_memory_is_refused_before_any_work(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rows = ["." * 60] * 50
    path = write_chase(tmp_path, **dict(CHASES["corridor"], rows=rows, exits=[]))  # type: ignore[arg-type]
    assert main(["solve", str(path)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "9,000,000 positions" in err and "limit 6,250,000" in err


def test_a_quarry_too_fast_for_memory_is_refused_in_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rows = ["." * 40] * 30
    chase = dict(CHASES["open_field"], rows=rows, q_speed=75, turns=2)
    path = write_chase(tmp_path, **chase)  # type: ignore[arg-type]
    assert main(["solve", str(path)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "more than the limit 80,000,000" in err


def random_chase(seed: int) -> dict:  # type: ignore[type-arg]
    """A small random chase: walls and rough ground, either diagonal rule, an exit or none,
    either turn order, catching on the cell or a step away."""
    rng = np.random.default_rng(seed)
    w, h = int(rng.integers(4, 7)), int(rng.integers(3, 6))
    grid = rng.choice(np.array(list("....,#")), size=(h, w))
    cells = [(c, r) for r in range(h) for c in range(w)]
    pick = rng.permutation(len(cells))[:3]
    p, q, e = (cells[int(i)] for i in pick)
    for c, r in (p, q, e):
        grid[r, c] = "."
    return dict(
        rows=["".join(row) for row in grid.tolist()],
        diagonals=str(rng.choice(["none", "equal"])),
        quarry=q,
        pursuer=p,
        q_speed=5 * int(rng.integers(1, 3)),
        p_speed=5 * int(rng.integers(1, 4)),
        capture=int(rng.integers(0, 2)),
        turns=int(rng.integers(3, 9)),
        exits=[e] if rng.random() < 0.5 else [],
        pursuer_first=bool(rng.random() < 0.5),
    )


def slow_tokens(chase: dict) -> list[str]:  # type: ignore[type-arg]
    """The tokens, in turn order, that can reach (on open cells from their start, the
    other token aside) a cell they enter only over more than one turn: at 5 ft a turn (one
    cell's time) any rough cell (two). The turn loop carries such a crossing into the next
    turn (RULES.md 0), which :class:`Plain` leaves out and :class:`Crossing` models."""
    plain = Plain(chase)
    order = ("p", "q") if chase.get("pursuer_first") else ("q", "p")
    starts = {"p": chase["pursuer"], "q": chase["quarry"]}
    budget = {"p": plain.p_cells, "q": plain.q_cells}
    slow = []
    for who in order:
        seen, todo = {starts[who]}, [starts[who]]
        while todo:
            a = todo.pop()
            for dc, dr in plain.steps:
                b = (a[0] + dc, a[1] + dr)
                if plain.open_(b) and b not in seen:
                    seen.add(b)
                    todo.append(b)
        if any(COST[plain.rows[r][c]] > budget[who] for c, r in seen):
            slow.append(who)
    return slow


#: Seeds of random chases: about half have a crossing of more than a turn.
RANDOM_SEEDS = range(96)


@pytest.mark.parametrize("seed", RANDOM_SEEDS)
def test_random_small_chases_match_the_plain_minimax(seed: int, tmp_path: Path) -> None:
    """solve's value is the minimax's with crossings of more than a turn
    (:class:`Crossing`: :class:`Plain` where no token can reach one), and ``solve: auto``
    play ends in it."""
    chase = random_chase(seed)
    path = write_chase(tmp_path, **chase)  # type: ignore[arg-type]
    sc = load_scenario(str(path))
    solution = solve_run(Simulation(sc, seed=0, record=False))
    want = Crossing(chase).outcome()
    assert solution.outcome() == want, chase
    run = Simulation(sc, seed=seed, record=False).run()
    assert (run.outcome, run.turns) == want, chase


def test_the_random_chases_cover_crossings_that_change_the_value() -> None:
    """The random chases hold crossings of more than a turn for either side (about half
    of them), and in some the crossing changes the value (the game without crossings,
    :class:`Plain`, answers another round)."""
    slow = [slow_tokens(random_chase(s)) for s in RANDOM_SEEDS]
    assert sum(bool(s) for s in slow) >= 32
    assert {s[0] for s in slow if s} == {"p", "q"}
    changed = [
        s
        for s in RANDOM_SEEDS
        if slow[s] and Crossing(random_chase(s)).outcome() != Plain(random_chase(s)).outcome()
    ]
    assert changed


@pytest.mark.parametrize(("pace", "solvable"), [("cruising", True), ("all_out", False)])
def test_d6_is_solved_where_its_pace_rolls_nothing(
    pace: str, solvable: bool, tmp_path: Path
) -> None:
    """D6 rolls once a turn at all-out (and changes speed over the first rounds): its pace
    states are positions (tests/test_solve_d6pace.py), too many turns to walk on this map,
    refused in one line; at cruising pace on open ground nothing is rolled, and the
    policies play the solution."""
    rows = ["." * 16, "....##" + "." * 10, "." * 16, "." * 16]
    tmxtext.write(tmp_path / "m.tmx", rows)
    (tmp_path / "d6.yaml").write_text(
        "map: m.tmx\nsystem: d6\nturns: 10\nsolve: auto\ngoals: {capture: 1}\ntokens:\n"
        f"  - {{id: q, side: quarry, policy: quarry, cell: [15, 3], pace: {pace}}}\n"
        f"  - {{id: p, side: pursuer, policy: pursuer, cell: [0, 0], pace: {pace}, "
        "stats: {move: 12}}\n",
        encoding="utf-8",
    )
    sc = load_scenario(str(tmp_path / "d6.yaml"))
    if not solvable:
        with pytest.raises(Unsolvable, match="more than 10,000 turns walked"):
            solve_run(Simulation(sc, seed=0, record=False))
        return
    want = solve_run(Simulation(sc, seed=0, record=False)).outcome()
    assert want[0] == "capture" and want[1] > 1  # a chase, not a catch at once
    fields = FieldCache(sc)
    played = {
        (r.outcome, r.turns)
        for r in (Simulation(sc, seed=s, fields=fields, record=False).run() for s in range(4))
    }
    assert played == {want}


def test_a_pursuer_that_cannot_force_a_capture_still_closes_in(tmp_path: Path) -> None:
    """Round the pillar at equal speed the game is a timeout: every pursuer move is as good
    under perfect play, and the solved one closes in (it moves every turn, never idles)."""
    sc = load_scenario(str(write_chase(tmp_path, **CHASES["pillar"])))  # type: ignore[arg-type]
    sim = Simulation(sc, seed=0)
    assert sim.run().outcome == "timeout"
    moves = [e for e in sim.events if e["type"] == "move" and e["token"] == "p"]
    assert len(moves) == sc.turns


def test_a_bad_solve_option_names_the_key(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write_chase(tmp_path, **dict(CHASES["corridor"], solve="maybe"))  # type: ignore[arg-type]
    assert main(["solve", str(path)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "solve: expected auto or off, not maybe" in err


def test_a_crossing_of_two_turns_is_solved_as_it_is_played(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """At 5 ft a turn a rough cell takes two turns to enter: the turn loop spends the rest
    of the turn on it and carries the share crossed into the next (RULES.md 0). The quarry
    crosses the rough cell toward the exit and escapes in round 4, where a game without
    crossings (:class:`Plain`) has it caught in round 2. solve answers round 4, as the
    minimax with crossings does, and ``solve: auto`` plays it (the solved game, no
    fallback), the crossing's half in the log."""
    chase = dict(
        rows=["...,.."],
        diagonals="none",
        quarry=(2, 0),
        pursuer=(0, 0),
        q_speed=5,
        p_speed=5,
        capture=0,
        turns=6,
        exits=[(5, 0)],
    )
    assert Plain(chase).outcome() == ("capture", 2)
    assert Crossing(chase).outcome() == ("escape", 4)
    path = write_chase(tmp_path, **chase)  # type: ignore[arg-type]
    assert main(["solve", str(path), "--json"]) == 0
    got = json.loads(capsys.readouterr().out)
    assert (got["outcome"], got["turns"], got["dice"]) == ("escape", 4, False)
    sc = load_scenario(str(path))
    asked = spy_solved_moves(monkeypatch)
    for seed in range(3):
        sim = Simulation(sc, seed=seed)
        run = sim.run()
        assert (run.outcome, run.turns) == ("escape", 4)
        assert sim.fields.solved is not None and sim.fields.solved[1] is not None
        assert (True, (3, 0)) in asked and all(got is not None for _, got in asked)
        under_way = [
            e["state"]
            for e in sim.events
            if e["type"] == "state" and e["token"] == "q" and e["state"].get("toward")
        ]
        assert under_way[0]["cell"] == [2, 0] and under_way[0]["toward"] == [3, 0]
        assert under_way[0]["progress"] == "1/2"


#: Corridors with rough cells crossed over turns (5 ft a turn), each side crossing.
CORRIDORS = [
    dict(rows=[".,..,,..."], quarry=(3, 0), pursuer=(0, 0), q_speed=5, p_speed=10,
         exits=[(8, 0)]),
    dict(rows=["..,.,.,.."], quarry=(4, 0), pursuer=(0, 0), q_speed=10, p_speed=5,
         exits=[(8, 0)]),
    dict(rows=["..,,.,.,..,"], quarry=(5, 0), pursuer=(1, 0), q_speed=5, p_speed=5,
         exits=[(10, 0)], pursuer_first=True),
    dict(rows=[",.,.,,.,"], quarry=(4, 0), pursuer=(0, 0), q_speed=5, p_speed=5,
         exits=[]),
]  # fmt: skip


@pytest.mark.parametrize("k", range(len(CORRIDORS)))
@pytest.mark.parametrize("capture", [0, 1])
def test_corridors_with_crossings_match_the_minimax(
    k: int, capture: int, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """On corridors with rough cells entered over turns, solve's value is the minimax's
    with crossings, and seeded ``solve: auto`` runs end in that round, the solved game
    answering every move asked (a crossing under way too)."""
    chase = dict(CORRIDORS[k], diagonals="none", capture=capture, turns=12)
    want = Crossing(chase).outcome()
    path = write_chase(tmp_path, **chase)  # type: ignore[arg-type]
    sc = load_scenario(str(path))
    assert solve_run(Simulation(sc, seed=0, record=False)).outcome() == want
    asked = spy_solved_moves(monkeypatch)
    fields = FieldCache(sc)
    played = {
        (r.outcome, r.turns)
        for r in (Simulation(sc, seed=s, fields=fields, record=False).run() for s in range(4))
    }
    assert played == {want}
    assert asked and all(got is not None for _, got in asked)


def spy_solved_moves(monkeypatch: pytest.MonkeyPatch) -> list[tuple[bool, object]]:
    """Record each solved move the policies ask: whether the token asking has a crossing
    under way, and the answer (None: the game does not hold the position)."""
    import engine.sim.view as view

    asked: list[tuple[bool, object]] = []
    plain = view.solved_move

    def spy(run: object, tid: str) -> object:
        got = plain(run, tid)  # type: ignore[arg-type]
        asked.append((run.tokens[tid].state.progress > 0, got))  # type: ignore[attr-defined]
        return got

    monkeypatch.setattr(view, "solved_move", spy)
    return asked


def test_crossings_too_long_to_work_out_are_refused_in_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The turns the crossings' moves take to walk are counted against a limit, the
    cells' before any is walked: past it, one line naming the limit."""
    import engine.solve.crossing as crossing

    chase = dict(CORRIDORS[0], diagonals="none", capture=0, turns=12)
    path = write_chase(tmp_path, **chase)  # type: ignore[arg-type]
    # 142 turns: each cell's aims that may end off its reach (engine.solve.bigcross),
    # every aim from a crossing under way, again around the pursuer where they may differ
    # (147 while a turn with no time left at a slow cell's foot ended it under way, nothing
    # of it made: tests/test_bugs_ladders.py).
    monkeypatch.setattr(crossing, "MAX_CROSSING_TURNS", 141)
    assert main(["solve", str(path)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "more than 141 turns walked" in err, err
    monkeypatch.setattr(crossing, "MAX_CROSSING_TURNS", 142)
    assert main(["solve", str(path)]) == 0
