"""`tacgrid solve` on a 40x30 one-on-one chase (issue 39): time and peak memory, beside
references measured in the same run. The 40x30 chase is on the shipped maps/encounter.tmx
(generic rules: the pursuer 7 cells a turn from one corner, the quarry 6 from the other,
caught at one step, 25 turns; at 6 cells a turn every cell of the map is entered within a
turn: slower, a climb up its 15-ft cliffs would take more, which solve refuses).

Rows (exit status 1 if a target is missed):

* the whole solve of the 40x30 chase (the game built from the engine's graphs, then the
  retrograde analysis), in a fresh process: CPU seconds and peak resident memory
  (``ru_maxrss``), against the target "in seconds": <= 20 s CPU, <= 1 GB;
* the same chase at 25/30 ft (the quarry crosses a cliff on a second diagonal over more
  than a turn: crossings as positions, the turns walked cut by engine.solve.bigcross), in
  a fresh process: the same targets;
* its rounds alone (the bit-packed ORs of engine.solve.retro) as a ratio to the same rounds
  by dense 0/1 matrix products (numpy's BLAS, one thread), on the same game in the same
  process; both give the same answer (checked): target <= 1x;
* a 12x10 chase solved whole, as a ratio to a plain-Python minimax over the same map
  (memoised recursion over pursuer cell, quarry cell, mover and round; its own moves by a
  plain Dijkstra over the drawing), which must give the same outcome and round;
* a chase with dice (Mythmaster on a 16x12 drawing with water, both tokens swimmers who
  roll a Swimming 21C entering it, an exit beyond the water; 10 rounds), and the same on
  a 20x20 drawing (400 cells), each solved whole in a
  fresh process, CPU seconds and peak memory, as a ratio to the same chase without dice
  (the same tokens untrained at swimming: they roll nothing), solved the same way: target
  the whole solve <= 20 s CPU, <= 1 GB;
* a chase with climbs over turns (Mythmaster on a 16x12 drawing with a wall of one-hex
  cliffs between the quarry and the exits, both tokens climbers; 10 rounds), solved whole
  in a fresh process, beside the same chase where nobody climbs (the cliffs are walls):
  target <= 20 s CPU, <= 1 GB.

Run: python benchmarks/bench_solve.py
"""

from __future__ import annotations

import functools
import heapq
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

import tmxtext  # noqa: E402

#: Targets (the issue: "one pursuer against one quarry on a 40x30 map solves in seconds").
MAX_CPU_S = 20.0
MAX_RSS_MB = 1024.0
MAX_ROUNDS_RATIO = 1.0
COST = {".": 1, ",": 2}


def drawing(w: int, h: int, seed: int) -> list[str]:
    """Open ground with some rough ground and walls; the two start cells open."""
    rng = np.random.default_rng(seed)
    pick = rng.choice(np.array(list("........,#")), size=(h, w))
    pick[2, 2] = pick[h - 5, w - 5] = "."
    return ["".join(r) for r in pick.tolist()]


def write_chase(
    folder: Path,
    rows: list[str] | None,
    turns: int,
    capture: int,
    size: tuple[int, int],
    speeds: tuple[int, int] | None = None,
) -> Path:
    """A one-on-one chase on ``rows`` (written beside it), or on the shipped 40x30 map;
    ``speeds`` the quarry's and the pursuer's (ft a turn) where given."""
    if rows is not None:
        tmxtext.write(folder / "m.tmx", rows, properties={"diagonals": "equal"})
        where = "m.tmx"
    else:
        where = str(ROOT / "maps" / "encounter.tmx")
    w, h = size
    # The drawings' rough ground takes two cells' time; encounter.tmx's cliffs six.
    q_speed, p_speed = (25, 30) if rows is not None else (30, 35)
    if speeds is not None:
        q_speed, p_speed = speeds
    text = (
        f"map: {where}\nsystem: generic\nturns: {turns}\ngoals: {{capture: {capture}}}\n"
        "tokens:\n"
        f"  - {{id: q, side: quarry, policy: quarry, cell: [{w - 5}, {h - 5}], "
        f"stats: {{speed: {q_speed}}}}}\n"
        "  - {id: p, side: pursuer, policy: pursuer, cell: [2, 2], "
        f"stats: {{speed: {p_speed}}}}}\n"
    )
    path = folder / "chase.yaml"
    path.write_text(text, encoding="utf-8")
    return path


def write_dice_chase(folder: Path, swimmers: bool, size: tuple[int, int] = (16, 12)) -> Path:
    """A Mythmaster chase on a drawing of open ground, water and walls (16x12 unless
    ``size`` says), the exits on the far column; ``swimmers``: both tokens roll to swim
    (else they roll nothing)."""
    w, h = size
    rng = np.random.default_rng(5)
    pick = rng.choice(np.array(list("......~~#")), size=(h, w))
    pick[1, 1] = pick[h - 2, w - 5] = "."
    pick[:, w - 3] = "~"
    exits = "".join(
        f'<object id="{r + 1}" name="e{r}" type="exit" x="{(w - 1) * 32}" y="{r * 32}" '
        'width="32" height="32"/>'
        for r in range(h)
    )
    tmxtext.write(
        folder / "m.tmx",
        ["".join(r) for r in pick.tolist()],
        properties={"diagonals": "equal"},
        objects=f'<objectgroup name="o">{exits}</objectgroup>',
    )
    swim = ", swimming: 6" if swimmers else ""
    text = (
        "map: m.tmx\nsystem: mythmaster\nturns: 10\ngoals: {capture: 1}\ntokens:\n"
        f"  - {{id: q, side: quarry, policy: quarry, pace: walk, cell: [{w - 5}, {h - 2}], "
        f"stats: {{adaptability: 13, physical: 12{swim}}}}}\n"
        "  - {id: p, side: pursuer, policy: pursuer, pace: walk, cell: [1, 1], "
        f"stats: {{adaptability: 14, physical: 12{swim}}}}}\n"
    )
    path = folder / "chase.yaml"
    path.write_text(text, encoding="utf-8")
    return path


#: tmxtext's cliff (difficult, 10 m high) and the one the climb row draws (easy, 2 m: a
#: Mythmaster climb of one hex, two successes at Base Move 6).
CLIFF = (
    '<property name="difficulty" value="difficult"/>'
    '<property name="height" type="float" value="10.0"/>'
)
EASY_CLIFF = (
    '<property name="difficulty" value="easy"/><property name="height" type="float" value="2.0"/>'
)


def write_climb_chase(folder: Path, climbers: bool) -> Path:
    """A Mythmaster chase on a 16x12 drawing of open ground, walls and a wall of one-hex
    cliffs across it (some cliffs two cells deep), the exits beyond; ``climbers``: both
    tokens climb them (a Climbing 21C each turn, the climb's progress carried over turns),
    else neither (no Climbing skill: the cliffs are walls)."""
    w, h = 16, 12
    rng = np.random.default_rng(9)
    pick = rng.choice(np.array(list("........#")), size=(h, w))
    pick[:, 10] = "#"
    pick[rng.choice(h, size=5, replace=False), 10] = "^"
    pick[2, 11] = pick[7, 11] = "^"
    pick[1, 1] = pick[h - 2, 9] = "."
    exits = [(w - 1, r) for r in range(h)]
    text = tmxtext.tmx(
        ["".join(r) for r in pick.tolist()],
        properties={"diagonals": "equal"},
        objects=tmxtext.exit_objects(exits),
    )
    assert text.count(CLIFF) == 1
    (folder / "m.tmx").write_text(text.replace(CLIFF, EASY_CLIFF), encoding="utf-8")
    climb = ", climbing: 9" if climbers else ""
    rule = "" if climbers else "settings: {untrained_climbing: refuse}\n"
    text = (
        f"map: m.tmx\nsystem: mythmaster\nturns: 10\ngoals: {{capture: 1}}\n{rule}tokens:\n"
        f"  - {{id: q, side: quarry, policy: quarry, pace: walk, cell: [9, {h - 2}], "
        f"stats: {{adaptability: 13, physical: 12{climb}}}}}\n"
        "  - {id: p, side: pursuer, policy: pursuer, pace: walk, cell: [1, 1], "
        f"stats: {{adaptability: 9, physical: 12{climb}}}}}\n"
    )
    path = folder / "chase.yaml"
    path.write_text(text, encoding="utf-8")
    return path


def load_game(path: Path):  # type: ignore[no-untyped-def]
    from engine.scenario import load_scenario
    from engine.sim import Simulation
    from engine.solve import Mover
    from engine.solve.game import build_game

    sc = load_scenario(str(path))
    run = Simulation(sc, seed=0, record=False)
    movers = [
        Mover(
            t,
            "pursuer" if t in run.pursuers else "quarry",
            run.profile_now(t).graph,
            run.tokens[t].state.cell,
        )  # fmt: skip
        for t in run.order
    ]
    return build_game(sc, movers, sc.system)


# --------------------------------------------------------------------------- children


def child_whole(path: str) -> None:
    """The whole solve in this (fresh) process: CPU, wall, peak memory, the answer."""
    from engine.scenario import load_scenario
    from engine.sim import Simulation
    from engine.sim.view import solve_run

    sc = load_scenario(path)
    run = Simulation(sc, seed=0, record=False)
    c0, w0 = time.process_time(), time.perf_counter()
    doc = solve_run(run).to_dict()
    cpu, wall = time.process_time() - c0, time.perf_counter() - w0
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(json.dumps({"cpu": cpu, "wall": wall, "rss_mb": rss, **doc}))


def dense_retro(game):  # type: ignore[no-untyped-def]
    """The rounds of engine.solve.retro by dense 0/1 matrix products (the reference)."""
    from engine.solve.retro import Retro

    n = game.n
    ap = np.zeros((n, n), np.float32)
    ap[np.repeat(np.arange(n), np.diff(game.reach_p.ptr)), game.reach_p.idx] = 1
    aq = np.zeros((n, n), np.float32)
    aq[np.repeat(np.arange(n), np.diff(game.reach_q.ptr)), game.reach_q.idx] = 1
    b = game.blocked

    def p_any(y: np.ndarray) -> np.ndarray:
        return (ap @ y.astype(np.float32)) > 0

    def q_any(y: np.ndarray) -> np.ndarray:
        out = (y.astype(np.float32) @ aq.T) > 0
        if b is not None and len(b.p):
            vals = y[np.repeat(b.p, np.diff(b.ptr)), b.idx]
            out[b.p, b.q] = np.logical_or.reduceat(vals, b.ptr[:-1])
        return out

    cap, ex = game.cap, game.exit[None, :]

    def round_(won: np.ndarray, hunt: bool) -> np.ndarray:
        arrive = cap | (~ex & won) if hunt else ~cap & (ex | won)
        movers = ("p", "q") if game.pursuer_first else ("q", "p")
        for i, m in enumerate(reversed(movers)):
            mine = (m == "p") == hunt
            f = p_any if m == "p" else q_any
            moved = f(arrive if mine else ~arrive)
            before = moved if mine else ~moved
            if i == 1:
                return before
            arrive = cap | (~ex & before) if hunt else ~cap & (ex | before)
        raise AssertionError

    k = np.zeros((n, n), bool)
    s = np.zeros((n, n), bool)
    cap_in = np.zeros((n, n), np.int32)
    esc_in = np.zeros((n, n), np.int32)
    rounds = 0
    for j in range(1, game.turns + 1):
        rounds = j
        k2, s2 = round_(k, True), round_(s, False)
        cap_in[k2 & ~k] = j
        esc_in[s2 & ~s] = j
        if np.array_equal(k2, k) and np.array_equal(s2, s):
            break
        k, s = k2, s2
    return Retro(cap_in, esc_in, rounds)


def child_rounds(path: str) -> None:
    """The rounds alone, bit-packed against dense, on one game (best of 3 each)."""
    from engine.solve.retro import solve_retro

    game = load_game(Path(path))
    times: dict[str, float] = {}
    answers = {}
    for name, fn in (("packed", solve_retro), ("dense", dense_retro)):
        best = float("inf")
        for _ in range(3):
            t = time.process_time()
            answers[name] = fn(game)
            best = min(best, time.process_time() - t)
        times[name] = best
    same = all(
        np.array_equal(getattr(answers["packed"], f), getattr(answers["dense"], f))
        for f in ("capture_in", "escape_in")
    )
    print(json.dumps({**times, "same": same}))


# --------------------------------------------------------------------------- plain reference


def plain_outcome(rows: list[str], turns: int, capture: int) -> tuple[str, int]:
    """Memoised minimax over the drawing (quarry first, as the scenario lists it)."""
    h, w = len(rows), len(rows[0])
    steps = [(c, r) for c in (-1, 0, 1) for r in (-1, 0, 1) if (c, r) != (0, 0)]

    @functools.cache
    def moves(a0: tuple[int, int], budget: int, block: object) -> tuple:  # type: ignore[type-arg]
        best = {a0: 0}
        heap = [(0, a0)]
        while heap:
            d, a = heapq.heappop(heap)
            if d > best[a]:
                continue
            for dc, dr in steps:
                b = (a[0] + dc, a[1] + dr)
                if not (0 <= b[0] < w and 0 <= b[1] < h) or rows[b[1]][b[0]] == "#" or b == block:
                    continue
                nd = d + COST[rows[b[1]][b[0]]]
                if nd <= budget and nd < best.get(b, 1 << 30):
                    best[b] = nd
                    heapq.heappush(heap, (nd, b))
        return tuple(sorted(best))

    def caught(p: tuple[int, int], q: tuple[int, int]) -> bool:
        return max(abs(p[0] - q[0]), abs(p[1] - q[1])) <= capture

    @functools.cache
    def value(p: tuple[int, int], q: tuple[int, int], ply: int, rnd: int) -> int:
        if ply == 0:  # the quarry (5 cells a turn), the pursuer blocking
            vals = [
                1000 - rnd if caught(p, x) else value(p, x, 1, rnd)
                for x in moves(q, 5, p if p != q else None)
            ]
            return min(vals)
        vals = [
            1000 - rnd if caught(x, q) else (0 if rnd == turns else value(x, q, 0, rnd + 1))
            for x in moves(p, 6, None)
        ]
        return max(vals)

    sys.setrecursionlimit(100000)
    v = value((2, 2), (w - 5, h - 5), 0, 1)
    return ("capture", 1000 - v) if v > 0 else ("timeout", turns)


def run_child(mode: str, path: Path) -> dict:  # type: ignore[type-arg]
    env = {**os.environ, "OPENBLAS_NUM_THREADS": "1"}
    out = subprocess.run(
        [sys.executable, __file__, "--child", mode, str(path)],
        capture_output=True,
        text=True,
        env=env,
        check=True,
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> int:
    ok = True
    with tempfile.TemporaryDirectory() as tmp:
        big = Path(tmp) / "big"
        big.mkdir()
        path = write_chase(big, None, turns=25, capture=1, size=(40, 30))
        whole = run_child("whole", path)
        print(
            f"40x30 solve (whole, fresh process): {whole['cpu']:.2f} s CPU, "
            f"{whole['wall']:.2f} s wall, peak {whole['rss_mb']:.0f} MB; "
            f"{whole['states']:,} states, {whole['outcome']} in round {whole['turns']} "
            f"(targets <= {MAX_CPU_S:.0f} s CPU, <= {MAX_RSS_MB:.0f} MB)"
        )
        if whole["cpu"] > MAX_CPU_S or whole["rss_mb"] > MAX_RSS_MB:
            ok = False
            print("   TARGET MISSED")
        ok = slow_big_row(big) and ok
        rounds = run_child("rounds", path)
        ratio = rounds["packed"] / rounds["dense"]
        print(
            f"40x30 rounds: bit-packed {rounds['packed']:.2f} s, dense BLAS products "
            f"{rounds['dense']:.2f} s: {ratio:.2f}x (same answer: {rounds['same']}; "
            f"target <= {MAX_ROUNDS_RATIO:.0f}x)"
        )
        if ratio > MAX_ROUNDS_RATIO or not rounds["same"]:
            ok = False
            print("   TARGET MISSED")
        small = Path(tmp) / "small"
        small.mkdir()
        rows = drawing(12, 10, 12)
        spath = write_chase(small, rows, turns=12, capture=0, size=(12, 10))
        t = time.process_time()
        want = plain_outcome(rows, 12, 0)
        plain = time.process_time() - t
        got = run_child("whole", spath)
        same = (got["outcome"], got["turns"]) == want
        print(
            f"12x10 solve: {got['cpu']:.3f} s CPU; plain-Python minimax {plain:.2f} s: "
            f"{got['cpu'] / plain:.3f}x (same outcome and round: {same})"
        )
        if not same:
            ok = False
            print("   TARGET MISSED")
        for w, h in ((16, 12), (20, 20)):
            ok = dice_row(Path(tmp), (w, h)) and ok
        ok = climb_row(Path(tmp)) and ok
    return 0 if ok else 1


def slow_big_row(tmp: Path) -> bool:
    """The 40x30 chase at 25/30 ft, where the quarry crosses the cliffs over more than a
    turn on a second diagonal (engine.solve.crossing; the turns walked cut to those that
    may end off a position's one-turn cells, engine.solve.bigcross): whether its targets
    are met."""
    folder = tmp / "slow"
    folder.mkdir()
    got = run_child("whole", write_chase(folder, None, 25, 1, (40, 30), speeds=(25, 30)))
    print(
        f"40x30 solve at 25/30 ft (crossings over turns; whole, fresh process): "
        f"{got['cpu']:.2f} s CPU, {got['wall']:.2f} s wall, peak {got['rss_mb']:.0f} MB; "
        f"{got['states']:,} states, {got['outcome']} in round {got['turns']} "
        f"(targets <= {MAX_CPU_S:.0f} s CPU, <= {MAX_RSS_MB:.0f} MB)"
    )
    if got["cpu"] > MAX_CPU_S or got["rss_mb"] > MAX_RSS_MB:
        print("   TARGET MISSED")
        return False
    return True


def dice_row(tmp: Path, size: tuple[int, int]) -> bool:
    """The chase with dice on a ``size`` drawing beside the same chase without: whether
    its targets are met."""
    w, h = size
    wet, dry = tmp / f"wet{w}x{h}", tmp / f"dry{w}x{h}"
    wet.mkdir()
    dry.mkdir()
    dice = run_child("whole", write_dice_chase(wet, True, size))
    plain = run_child("whole", write_dice_chase(dry, False, size))
    p = dice["p"]
    print(
        f"{w}x{h} chase with dice: {dice['cpu']:.2f} s CPU, peak {dice['rss_mb']:.0f} MB; "
        f"P(capture) {p['capture']:.4f}, P(escape) {p['escape']:.4f}, expected round "
        f"{dice['turns']:.3f}; without dice (the same map, nobody rolls) "
        f"{plain['cpu']:.2f} s CPU, peak {plain['rss_mb']:.0f} MB, {plain['outcome']} in "
        f"round {plain['turns']}: {dice['cpu'] / max(plain['cpu'], 1e-9):.1f}x "
        f"(targets <= {MAX_CPU_S:.0f} s CPU, <= {MAX_RSS_MB:.0f} MB)"
    )
    if not dice["dice"] or dice["cpu"] > MAX_CPU_S or dice["rss_mb"] > MAX_RSS_MB:
        print("   TARGET MISSED")
        return False
    return True


def climb_row(tmp: Path) -> bool:
    """The chase with climbs over turns beside the same chase where nobody climbs: whether
    its targets are met."""
    up, flat = tmp / "climbers", tmp / "walkers"
    up.mkdir()
    flat.mkdir()
    dice = run_child("whole", write_climb_chase(up, True))
    plain = run_child("whole", write_climb_chase(flat, False))
    p = dice["p"]
    print(
        f"16x12 chase with climbs over turns: {dice['cpu']:.2f} s CPU, peak "
        f"{dice['rss_mb']:.0f} MB; P(capture) {p['capture']:.4f}, P(escape) "
        f"{p['escape']:.4f}, expected round {dice['turns']:.3f}; nobody climbing (the same "
        f"map, the cliffs walls) {plain['cpu']:.2f} s CPU, peak {plain['rss_mb']:.0f} MB, "
        f"{plain['outcome']} in round {plain['turns']}: "
        f"{dice['cpu'] / max(plain['cpu'], 1e-9):.1f}x "
        f"(targets <= {MAX_CPU_S:.0f} s CPU, <= {MAX_RSS_MB:.0f} MB)"
    )
    if not dice["dice"] or dice["cpu"] > MAX_CPU_S or dice["rss_mb"] > MAX_RSS_MB:
        print("   TARGET MISSED")
        return False
    return True


if __name__ == "__main__":
    if len(sys.argv) == 4 and sys.argv[1] == "--child":
        {"whole": child_whole, "rounds": child_rounds}[sys.argv[2]](sys.argv[3])
        sys.exit(0)
    sys.exit(main())
