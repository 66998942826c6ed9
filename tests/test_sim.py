"""Scenarios, the turn loop, policies, event logs and batch runs."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import tmxtext
from conftest import ROOT

from engine.batch import read_runs, run_batch, run_seeds
from engine.cli import main
from engine.errors import ScenarioError
from engine.eventlog import read_log, replay_states
from engine.scenario import load_scenario
from engine.sim import FieldCache, Simulation

CHASE = str(ROOT / "scenarios" / "chase.yaml")
SHIPPED = sorted((ROOT / "scenarios").glob("*.yaml"))


def write_scenario(
    tmp_path: Path, text: str, rows: list[str] | None = None, objects: str = ""
) -> Path:
    rows = rows or ["." * 12] * 6
    tmxtext.write(tmp_path / "m.tmx", rows, objects=objects)
    p = tmp_path / "s.yaml"
    p.write_text(text)
    return p


EXIT = '<objectgroup name="o"><object id="1" name="door" type="exit" x="352" y="0" width="32" height="192"/></objectgroup>'


@pytest.mark.parametrize("path", SHIPPED, ids=lambda p: p.name)
def test_shipped_scenarios_run(path: Path) -> None:
    sc = load_scenario(path)
    fields = FieldCache(sc)
    for seed in range(3):
        res = Simulation(sc, seed, fields=fields).run()
        assert res.outcome in ("capture", "escape", "timeout") and 1 <= res.turns <= sc.turns


def test_quarry_escapes_and_pursuer_captures(tmp_path: Path) -> None:
    text = """
map: m.tmx
system: generic
turns: 10
goals: {capture: 0}
tokens:
  - {id: q, policy: quarry, cell: [0, 2], stats: {speed: 20}}
  - {id: p, policy: pursuer, target: q, cell: [0, 5], stats: {speed: 10}}
"""
    sc = load_scenario(write_scenario(tmp_path, text, objects=EXIT))
    res = Simulation(sc, 1).run()
    assert res.outcome == "escape" and res.by == "q" and res.cell[0] == 11
    fast = text.replace("speed: 10}", "speed: 60}").replace("speed: 20}", "speed: 5}")
    sc = load_scenario(write_scenario(tmp_path, fast, objects=EXIT))
    res = Simulation(sc, 1).run()
    assert res.outcome == "capture" and res.by == "p"


def test_waypoints_and_idle(tmp_path: Path) -> None:
    text = """
map: m.tmx
system: generic
turns: 4
tokens:
  - {id: w, policy: waypoints, cell: [0, 0], waypoints: [[4, 0], [4, 4]], stats: {speed: 20}}
  - {id: s, policy: idle, cell: [11, 5]}
"""
    sim = Simulation(load_scenario(write_scenario(tmp_path, text)), 3)
    sim.play_turn()
    assert sim.tokens["w"].state.cell == (4, 0)
    sim.play_turn()
    assert sim.tokens["w"].state.cell == (4, 4)
    assert sim.tokens["s"].state.cell == (11, 5)


def test_event_log_replays_to_the_same_state(tmp_path: Path) -> None:
    sc = load_scenario(CHASE)
    sim = Simulation(sc, 12345)
    sim.run()
    log = tmp_path / "run.jsonl"
    sim.write_log(str(log))
    states, outcome = replay_states(read_log(str(log)))
    assert outcome == sim.outcome
    assert {k: v.to_dict() for k, v in states.items()} == sim.final_states()
    assert any(e["type"] == "roll" for e in sim.events) and any(
        e["type"] == "check" for e in sim.events
    )
    again = Simulation(sc, 12345)
    again.run()
    assert again.events == sim.events


def test_undo_and_fork_from_a_snapshot() -> None:
    sc = load_scenario(CHASE)
    sim = Simulation(sc, 99)
    sim.play_turn()
    snap = sim.snapshot()
    sim.play_turn()
    after = (sim.final_states(), list(sim.events))
    sim.restore(snap)
    assert sim.turn == 1 and len(sim.events) == snap.n_events
    sim.play_turn()
    assert (sim.final_states(), sim.events) == after


def test_seeds_do_not_depend_on_the_split() -> None:
    assert run_seeds(5, 10)[:4] == run_seeds(5, 4)
    assert len(set(run_seeds(5, 1000))) == 1000


def test_same_seed_same_summary_any_worker_count(tmp_path: Path) -> None:
    one = run_batch(CHASE, runs=60, seed=3, workers=1, out_dir=str(tmp_path / "a"))
    two = run_batch(CHASE, runs=60, seed=3, workers=2, out_dir=str(tmp_path / "b"))
    strip = lambda s: {k: v for k, v in s.items() if k != "results"}  # noqa: E731
    assert strip(one) == strip(two)
    assert (tmp_path / "a" / "runs.jsonl").read_bytes() == (
        tmp_path / "b" / "runs.jsonl"
    ).read_bytes()
    other = run_batch(CHASE, runs=60, seed=4, workers=1, out_dir=str(tmp_path / "c"))
    assert [r["seed"] for r in read_runs(str(tmp_path / "c" / "runs.jsonl"))] != [
        r["seed"] for r in read_runs(str(tmp_path / "a" / "runs.jsonl"))
    ]
    assert strip(other) != strip(one)
    assert set(one) >= {"runs", "seed", "outcomes", "turns", "ci95", "results"}
    assert sum(one["outcomes"].values()) == 60
    # A batch long enough that this process plays several chunks before the workers start
    # (engine.batch.work._warm_chunks): the same runs, byte for byte.
    from engine.batch.work import _warm_chunks

    assert _warm_chunks(450) > 1
    long1 = run_batch(CHASE, runs=450, seed=3, workers=1, out_dir=str(tmp_path / "d"))
    long2 = run_batch(CHASE, runs=450, seed=3, workers=2, out_dir=str(tmp_path / "e"))
    assert strip(long1) == strip(long2)
    assert (tmp_path / "d" / "runs.jsonl").read_bytes() == (
        tmp_path / "e" / "runs.jsonl"
    ).read_bytes()


def test_dask_cluster_gives_the_same_summary(tmp_path: Path) -> None:
    from distributed import LocalCluster

    local = run_batch(CHASE, runs=50, seed=8, workers=1, out_dir=str(tmp_path / "l"))
    with LocalCluster(
        n_workers=2,
        threads_per_worker=1,
        host="127.0.0.1",
        dashboard_address="127.0.0.1:0",
        processes=True,
    ) as cluster:
        dist = run_batch(
            CHASE, runs=50, seed=8, scheduler=cluster.scheduler_address, out_dir=str(tmp_path / "d")
        )
    assert {k: v for k, v in local.items() if k != "results"} == {
        k: v for k, v in dist.items() if k != "results"
    }


def test_resume_after_a_torn_write_gives_the_same_summary(tmp_path: Path) -> None:
    full = run_batch(CHASE, runs=80, seed=5, out_dir=str(tmp_path / "full"))
    part = tmp_path / "part"
    run_batch(CHASE, runs=80, seed=5, out_dir=str(part))
    data = (part / "runs.jsonl").read_bytes().splitlines(keepends=True)
    (part / "runs.jsonl").write_bytes(b"".join(data[:30]) + data[30][:17])  # killed mid-line
    (part / "summary.json").unlink()
    resumed = run_batch(CHASE, runs=80, seed=5, out_dir=str(part), resume=True)
    assert {k: v for k, v in resumed.items() if k != "results"} == {
        k: v for k, v in full.items() if k != "results"
    }


def test_killing_a_batch_and_resuming(tmp_path: Path) -> None:
    out = tmp_path / "killed"
    cmd = [
        sys.executable,
        str(ROOT / "main.py"),
        "run",
        CHASE,
        "--runs",
        "3000",
        "--seed",
        "9",
        "--out",
        str(out),
    ]
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.time() + 60
    while time.time() < deadline:
        f = out / "runs.jsonl"
        if f.exists() and f.stat().st_size > 2000:
            break
        time.sleep(0.05)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    lines = read_runs(str(out / "runs.jsonl"))
    assert 0 < len(lines) < 3000 and not (out / "summary.json").exists()
    assert (
        main(
            ["run", CHASE, "--runs", "3000", "--seed", "9", "--out", str(out), "--resume", "--json"]
        )
        == 0
    )
    resumed = json.loads((out / "summary.json").read_text())
    fresh = run_batch(CHASE, runs=3000, seed=9, out_dir=str(tmp_path / "fresh"))
    # The command adds its plots' paths; the batch's own figures must be identical.
    paths = ("results", "plots")
    assert {k: v for k, v in resumed.items() if k not in paths} == {
        k: v for k, v in fresh.items() if k not in paths
    }


def test_run_one_seed_with_its_log_and_replay(tmp_path: Path, capsys) -> None:
    log = tmp_path / "one.jsonl"
    assert main(["run", CHASE, "--run-seed", "42", "--log", str(log), "--json"]) == 0
    one = json.loads(capsys.readouterr().out)
    assert main(["replay", str(log), "--json"]) == 0
    rep = json.loads(capsys.readouterr().out)
    assert rep["outcome"] == one["outcome"] and rep["final"] == one["final"]
    assert main(["replay", str(log), "--text"]) == 0
    assert "turn 1:" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("map: m.tmx\nsystem: generic\ntokens: []\n", "tokens: expected a list"),
        ("map: m.tmx\nsystem: generc\ntokens: [{id: a}]\n", "did you mean 'generic'"),
        ("map: nope.tmx\nsystem: generic\ntokens: [{id: a}]\n", "map file not found"),
        ("map: m.tmx\nsystem: generic\ntokens: [{id: a, cell: [99, 0]}]\n", "tokens[0] (a).cell"),
        (
            "map: m.tmx\nsystem: generic\ntokens: [{id: a, cell: [0, 0], policy: chaser}]\n",
            "tokens[0] (a).policy",
        ),
        (
            "map: m.tmx\nsystem: generic\ntokens: [{id: a, cell: [0, 0], stats: {sped: 3}}]\n",
            "did you mean 'speed'",
        ),
        ("map: m.tmx\nsystem: generic\ntokens: [{id: a, spawn: nobody}]\n", "no spawn 'nobody'"),
        ("map: m.tmx\nsystem: generic\ntokns: []\n", "did you mean 'tokens'"),
        (
            "map: m.tmx\nsystem: generic\ngoals: {escape: [gate]}\ntokens: [{id: a, cell: [0, 0]}]\n",
            "no exit 'gate'",
        ),
        ("map: [unclosed\n", "not valid YAML"),
    ],
)
def test_malformed_scenarios_name_the_field(
    tmp_path: Path, text: str, expected: str, capsys
) -> None:
    p = write_scenario(tmp_path, text)
    with pytest.raises(ScenarioError) as err:
        load_scenario(p)
    assert expected in str(err.value) and str(p) in str(err.value) and "\n" not in str(err.value)
    assert main(["run", str(p), "--out", str(tmp_path / "o")]) == 2
    _, errtext = capsys.readouterr()
    assert errtext.count("\n") == 1
    assert not (tmp_path / "o").exists()  # nothing written half-way


def test_run_command_writes_plots(tmp_path: Path, capsys) -> None:
    out = tmp_path / "plots"
    assert main(["run", CHASE, "--runs", "30", "--out", str(out), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert [os.path.basename(p) for p in doc["plots"]] == ["turns.png", "outcomes_map.png"]
    assert all(os.path.getsize(p) > 1000 for p in doc["plots"])
    assert json.loads((out / "summary.json").read_text())["plots"] == doc["plots"]


# --------------------------------------------------------------------------- shared caches


def _events(sim: Simulation) -> list[dict]:
    return sim.events[1:]  # the start event names the files (the same either way)


def _variants(tmp_path: Path) -> list[Path]:
    """The chase as shipped and with every setting the fast paths special-case: tokens in
    the way for all, a size-2 hunter, a roll per run of terrain."""
    text = Path(CHASE).read_text().replace("../maps/", f"{ROOT / 'maps'}/")
    out = []
    for name, new in (
        ("all", text.replace("turns: 30", "turns: 30\nsettings: {tokens_block: all}")),
        (
            "big",
            text.replace(
                "    pace: all_out\n    stats: {move: 11",
                "    pace: all_out\n    size: 2\n    stats: {move: 11",
            ),
        ),
        ("runs", text.replace("turns: 30", "turns: 30\nsettings: {roll_per: cell_run}")),
    ):
        assert new != text
        p = tmp_path / f"{name}.yaml"
        p.write_text(new)
        out.append(p)
    return out


def test_a_warm_shared_cache_gives_every_run_the_events_of_a_fresh_one(tmp_path: Path) -> None:
    """The field cache (graphs, fields, walks, rule hooks kept by what they read, policies'
    choices, pilots' moves) is shared by every run of a batch: each run must play as it would
    alone, whatever ran before it, in every system and with every special case."""
    paths = [Path(CHASE), *_variants(tmp_path), *SHIPPED]
    for path in dict.fromkeys(paths):
        sc = load_scenario(path)
        seeds = run_seeds(sc.seed, 14)
        shared = FieldCache(sc)
        warm = [_events(_run(sc, s, shared, i)) for i, s in enumerate(seeds)]
        for i in (13, 5, 0):
            fresh = _run(sc, seeds[i], FieldCache(sc), i)
            assert _events(fresh) == warm[i], f"{path.name} run {i}"


def _fields_held(fields: FieldCache) -> int:  # noqa: C901
    """The bytes of per-cell arrays a field cache holds now: every profile's fields (each
    with its list of floats where it keeps one), those shared between profiles, and the
    policies' memos' maps, each array once."""
    import numpy as np

    seen: set[int] = set()
    total = 0

    def add(a: object) -> None:
        nonlocal total
        if isinstance(a, np.ndarray) and id(a) not in seen:
            seen.add(id(a))
            total += a.nbytes
        elif isinstance(a, list) and id(a) not in seen:  # a field's list of floats
            seen.add(id(a))
            total += 32 * len(a)

    profiles = [*fields._shared.values(), *fields._blocked.values()]
    for prof in profiles:
        for kept in (prof._to, prof._to_risk, prof._to_cells):
            for f in kept.values():
                add(f.dist)
                add(f._steps)
        for kept in (prof._from, prof._turns_from):
            for a in kept.values():
                add(a)
        if prof.shared is not None:
            for f in prof.shared.to.values():
                add(f.dist)
                add(f._steps)
            for a in (
                *(dist for _, dist in prof.shared.base_to.values()),
                *prof.shared.from_.values(),
                *prof.shared.turns.values(),
            ):
                add(a)
    for memo in (fields._threats, fields._exits, fields._flee, fields._meets):
        for objects, _, value in memo.entries():
            for a in (*objects, value):
                add(a)
    return total


def test_the_fields_a_cache_keeps_stay_within_its_budget(tmp_path: Path) -> None:
    """A field cache drops its fields and policy maps past ``FIELD_BYTES`` at the start of a
    turn (FieldCache.trim): what it holds stays within the budget and one turn's fields,
    and the runs are the same, run for run and event for event, as with no limit. On a
    128x128 open map the chase's fields went on growing with the runs before."""
    rows = ["." * 128] * 128
    tmxtext.write(tmp_path / "open.tmx", rows)
    text = Path(CHASE).read_text()
    text = text.replace("../maps/chase.tmx", "open.tmx").replace("turns: 30", "turns: 12")
    text = text.replace("  escape: [exit_east, exit_north]\n", "")
    for tid, cell in (("quarry", "[64, 64]"), ("pursuer1", "[40, 40]"), ("pursuer2", "[90, 80]")):
        text = text.replace(f"  - id: {tid}\n", f"  - id: {tid}\n    cell: {cell}\n")
    (tmp_path / "open.yaml").write_text(text)
    for path, budget in ((tmp_path / "open.yaml", 2 << 20), (Path(CHASE), 1 << 20)):
        sc = load_scenario(path)
        seeds = run_seeds(sc.seed, 40)
        free, tight = FieldCache(sc), FieldCache(sc)
        tight.FIELD_BYTES = budget
        most = round_most = trims = 0
        for run, seed in enumerate(seeds):
            a = Simulation(sc, seed, fields=free, run=run, record="count")
            b = Simulation(sc, seed, fields=tight, run=run, record="count")
            while a.outcome is None:
                a.play_turn()
                b.begin_turn()  # b.play_turn(), a turn at a time: the trim is a turn's
                for tid in b.order:
                    before = _fields_held(tight)
                    b.take_turn(tid)
                    after = _fields_held(tight)
                    most = max(most, after)
                    if after < before:
                        trims += 1
                    else:
                        round_most = max(round_most, after - before)
                    if b.outcome is not None:
                        break
                b.end_round()
            assert b.outcome is not None and b.n_events == a.n_events, f"{path.name} run {run}"
            assert b.result().to_dict() == a.result().to_dict()
        held = _fields_held(free)
        # Without a limit the fields grow past it many times; with one, they stay within
        # it and what one turn adds (a few fields), dropped again and again.
        assert held > 4 * budget and trims >= 3, (path.name, held, trims)
        assert round_most < budget and most <= budget + round_most, (path.name, most, round_most)
        for run, seed in enumerate(seeds[:5]):  # a kept log is the same too
            assert _events(_run(sc, seed, tight, run)) == _events(_run(sc, seed, free, run))


def test_the_small_memos_stay_within_their_cap() -> None:
    """Profiles by token state, capture distances, move times and stats ids are kept up to
    ``SMALL_KEPT`` each, then dropped and made again as asked: the same runs."""

    class Tight(FieldCache):  # (a memo takes its cap when the cache is made)
        SMALL_KEPT = 4

    sc = load_scenario(CHASE)
    free, tight = FieldCache(sc), Tight(sc)
    most = 0
    for run, seed in enumerate(run_seeds(sc.seed, 30)):
        a = Simulation(sc, seed, fields=free, run=run, record="count").run()
        b = Simulation(sc, seed, fields=tight, run=run, record="count").run()
        assert a.to_dict() == b.to_dict()
        most = max(most, len(tight._profiles), len(tight._gaps), len(tight._stats_same))
    assert len(free._profiles) > 4 and most <= 4


def test_profiles_of_one_compiled_graph_share_its_arrays() -> None:
    """Token states whose graphs compile alike (a D6 token one penalty die down: the same
    ways, other odds) get profiles of their own that share one set of compiled arrays
    (Profile.share_compiled): each profile's arrays are still exactly what its own graph
    compiles to, the risk-weighted graph is shared only where the penalties agree, and a
    shipped cache keeps them shared."""
    import pickle

    import numpy as np

    sc = load_scenario(CHASE)
    fields = FieldCache(sc)
    for run, seed in enumerate(run_seeds(sc.seed, 30)):
        Simulation(sc, seed, fields=fields, run=run, record="count").run()
    groups: dict[tuple[int, float], list] = {}
    for prof in fields._shared.values():
        groups.setdefault((id(prof.shared), prof.scale), []).append(prof)
    together = [g for g in groups.values() if len(g) > 1]
    assert together and sum(map(len, together)) >= 4
    risks = set()
    for first, *rest in together:
        for prof in rest:
            assert prof.csr is first.csr and prof.rev is first.rev
            assert prof._kernel_arrays is first._kernel_arrays
            own = prof.graph.csr()
            for a, b in ((own.indptr, prof.indptr), (own.indices, prof.indices)):
                assert np.array_equal(a, b)
            assert np.array_equal(own.data, prof.data)
            same_risk = bool(np.array_equal(prof.penalty, first.penalty))
            assert (prof.rev_risk is first.rev_risk) == same_risk
            risks.add(same_risk)
            # Turns from a cell: one array for both where the turn is as long (the policies'
            # memos, kept by arrays' ids, then serve both), equal to the profile's own.
            cell = sc.tokens[0].cell
            mine = prof.turns_from(cell)
            if prof.graph.denominator == first.graph.denominator:
                assert mine is first.turns_from(cell)
            own = prof._dist_from(cell) / prof.graph.denominator
            assert np.array_equal(mine, own)
    assert False in risks  # the chase's groups differ in their checks' odds
    there = pickle.loads(pickle.dumps(fields))
    here_sets = len({id(p.csr) for p in fields._shared.values()})
    assert here_sets < len(fields._shared)
    assert len({id(p.csr) for p in there._shared.values()}) == here_sets
    # The kernel's arrays are shared again there too (one set per compiled graph, not one
    # per profile), and give what they give here.
    for kind in ("_kernel_arrays", "_kernel_risk"):
        here = len({id(getattr(p, kind)) for p in fields._shared.values()})
        assert len({id(getattr(p, kind)) for p in there._shared.values()}) == here, kind
    for prof, moved in zip(fields._shared.values(), there._shared.values(), strict=True):
        assert np.array_equal(prof._dijkstra("rev", [5]), moved._dijkstra("rev", [5]))
        assert np.array_equal(prof._dijkstra("rev_risk", [5]), moved._dijkstra("rev_risk", [5]))


def _run(sc, seed: int, fields: FieldCache, run: int) -> Simulation:
    sim = Simulation(sc, seed, fields=fields, run=run)
    sim.run()
    return sim


def test_hook_results_are_shared_only_by_states_that_read_alike() -> None:
    """HookMemo keeps a rule hook's result by what the hook read of the state: a token that
    reads alike gets the result, one that differs in a value read does not, a hook that rolls
    is made every time, and a resulting state keeps the fields the hook only copied."""
    from dataclasses import replace

    from engine.dice import Dice
    from engine.sim.hookmemo import HookMemo
    from engine.systems.base import Token, TokenState

    memo = HookMemo()
    calls: list[str] = []

    def pace(tok: Token) -> str:
        calls.append("pace")
        return "fast" if tok.state.counter("speed") > 1 else "slow"

    base = Token("x", {}, TokenState(cell=(0, 0), counters=(("speed", 2),)))
    assert memo.get("pace", base, pace) == "fast"
    # Another cell, another counter that was never read: the kept result serves.
    other = replace(base, state=replace(base.state, cell=(5, 5), counters=(("a", 1), ("speed", 2))))
    assert memo.get("pace", other, pace) == "fast" and calls == ["pace"]
    slow = replace(base, state=replace(base.state, counters=(("speed", 1),)))
    assert memo.get("pace", slow, pace) == "slow" and calls == ["pace", "pace"]

    def where(tok: Token) -> tuple:
        return tok.state.cell  # reads the cell: kept per cell

    assert memo.get("where", base, where) == (0, 0)
    assert memo.get("where", other, where) == (5, 5)

    def tire(tok: Token) -> Token:
        calls.append("tire")
        return tok.moved(conditions=tok.state.conditions | {"tired"})

    a = memo.token("tire", base, tire)
    b = memo.token("tire", other, tire)  # conditions alike: kept, and the cell is b's own
    assert calls.count("tire") == 1
    assert a.state == replace(base.state, conditions=frozenset({"tired"}))
    assert b.state == replace(other.state, conditions=frozenset({"tired"}))
    assert type(b.state) is TokenState and b.stats is other.stats

    def roll(tok: Token, dice: Dice) -> Token:
        calls.append("roll")
        return tok.moved(progress=dice.face(6))

    dice = Dice(3)
    got = [memo.token("roll", base, roll, dice).state.progress for _ in range(3)]
    again = Dice(3)
    assert got == [again.face(6) for _ in range(3)] and calls.count("roll") == 3

    # A traced state compares and hashes as the plain one.
    from engine.sim.hookmemo import _Traced

    traced = _Traced(cell=(1, 2))
    assert traced == TokenState(cell=(1, 2)) and TokenState(cell=(1, 2)) == traced
    assert hash(traced) == hash(TokenState(cell=(1, 2)))


def test_fields_with_tokens_in_the_way_equal_those_of_the_blocked_map() -> None:
    """Profile.without drops the edges into the anchors tokens stand on instead of building
    the map again: everywhere a token can be, its distances and next steps are the rebuilt
    graph's (both fields, both weightings)."""
    import random

    import numpy as np

    from engine.movement import MovementGraph
    from engine.occupancy import with_blocked
    from engine.sim import Profile

    for path in (CHASE, str(ROOT / "scenarios" / "hex_hunt.yaml")):
        sc = load_scenario(path)
        sim = Simulation(sc, 1)
        rng = random.Random(5)
        for spec in sc.tokens:
            tok = sim.tokens[spec.id]
            prof = sim.fields.profile(tok, spec.pace or sc.system.default_pace)
            g = prof.graph
            grid = g.grid
            for _ in range(3):
                blocked = frozenset(
                    (rng.randrange(grid.width), rng.randrange(grid.height)) for _ in range(12)
                )
                fast = prof.without(blocked)
                slow = Profile(
                    MovementGraph(with_blocked(g.model, blocked), g.system, g.token, g.pace)
                )
                free = np.ones(g.n * g.n_states, dtype=bool)
                for c in blocked:
                    for s in range(g.n_states):
                        free[s * g.n + grid.index(c)] = False
                goal = next(
                    c
                    for c in [
                        *sorted(sc.exit_cells),
                        *[spec.cell for spec in sc.tokens if spec.cell],
                    ]
                    if c not in blocked
                )
                for risk in (False, True):
                    a, b = fast.field_to((goal,), risk=risk), slow.field_to((goal,), risk=risk)
                    assert np.array_equal(a.dist[free], b.dist[free])
                    for node in np.flatnonzero(free & np.isfinite(a.dist))[:200].tolist():
                        assert a.step(fast, node) == b.step(slow, node)


def test_policies_see_a_token_edited_mid_round_as_it_now_is() -> None:
    """The turns from a token that a policy plans with are those of the token as it stands
    when asked: a GM's edit in the middle of a round (the viewer's ``E``), with the token on
    the same cell, is seen by every token that plans after it, not the times worked out
    for it earlier in that round."""
    import numpy as np

    from engine.sim.view import times_from

    sc = load_scenario(CHASE)
    sim = Simulation(sc, 1, record=False)
    sim.begin_turn()
    fast = times_from(sim, "quarry")  # a pursuer's plan reads these first
    stats = {**next(t.stats for t in sc.tokens if t.id == "quarry"), "move": 4}
    sim.edit_token("quarry", stats=stats)
    slow = times_from(sim, "quarry")
    fresh = Simulation(sc, 1, record=False)
    fresh.edit_token("quarry", stats=stats)
    fresh.begin_turn()
    assert np.array_equal(slow, times_from(fresh, "quarry"))
    reached = np.isfinite(fast) & np.isfinite(slow)
    assert (slow[reached] >= fast[reached]).all() and (slow[reached] > fast[reached]).any()


def test_a_counted_log_has_the_events_a_kept_log_has(tmp_path: Path) -> None:
    """Batches count their runs' events instead of keeping the log (``record="count"``):
    in every shipped scenario and special case, each run's count is the number of events
    the kept log holds, the run plays the same, and undo (a snapshot) puts the count back.

    A counted run plays its ground turns from plans (Simulation._play_plan: the checks
    rolled, then what their degrees made of the turn the first time); a kept log never
    does. The chase plays 60 runs, so that plans and their outcomes serve again."""
    for path in dict.fromkeys([Path(CHASE), *_variants(tmp_path), *SHIPPED]):
        sc = load_scenario(path)
        kept_fields, counted_fields = FieldCache(sc), FieldCache(sc)
        n = 60 if path == Path(CHASE) else 12
        for run, seed in enumerate(run_seeds(sc.seed, n)):
            kept = Simulation(sc, seed, fields=kept_fields, run=run)
            counted = Simulation(sc, seed, fields=counted_fields, run=run, record="count")
            assert counted.run().to_dict() == kept.run().to_dict(), f"{path.name} run {run}"
            assert counted.n_events == len(kept.events) > 0
            assert counted.events == []
        assert not kept_fields.plans
        if path == Path(CHASE):
            outcomes = [p.outcomes for p in counted_fields.plans.values() if p is not None]
            assert len(outcomes) > 100 and sum(map(len, outcomes)) > len(outcomes)
    sim = Simulation(load_scenario(CHASE), 3, record="count")
    sim.play_turn()
    snap = sim.snapshot()
    at = sim.n_events
    sim.play_turn()
    assert sim.n_events > at
    sim.restore(snap)
    assert sim.n_events == at


def test_a_run_without_a_log_drops_the_notes_no_rule_reads(tmp_path: Path) -> None:
    """D6 keeps a collision's margin over Strength and ``injured`` for the table
    (RuleSystem.notes): no rule reads them. A logged run keeps them in the tokens' states;
    a run that keeps no log (a batch's) drops them as each turn closes and plays the same:
    each of 400 chase runs ends alike all three ways (logged, counted, counted with the
    notes kept), and the runs that drop them learn fewer turn starts (turns that differ
    only in a margin are one). The chase is played with ``fall_speed: keep`` (a faller
    runs on at its speed), where collisions, and so notes, are most frequent, and with
    pursuer1 at move 14, the fastest runner: it falls at the highest speed, so the most
    collisions (margins noted in 231 of the 400 runs, 125 at the shipped move 12)."""
    text = Path(CHASE).read_text(encoding="utf-8")
    text = text.replace("map: ../maps/", f"map: {Path(CHASE).parent.parent / 'maps'}/")
    (tmp_path / "keep.yaml").write_text(text + "settings: {fall_speed: keep}\n", encoding="utf-8")
    sc = load_scenario(tmp_path / "keep.yaml", overrides={"pursuer1.stats.move": 14})
    assert sc.system.notes == {"collision_margin", "injured"}
    logged_fields, dropped, kept = FieldCache(sc), FieldCache(sc), FieldCache(sc)
    kept.notes = frozenset()  # as before notes: every margin makes its own turns
    noted = 0
    for run, seed in enumerate(run_seeds(sc.seed, 400)):
        logged = Simulation(sc, seed, fields=logged_fields, run=run)
        counted = Simulation(sc, seed, fields=dropped, run=run, record="count")
        counted_kept = Simulation(sc, seed, fields=kept, run=run, record="count")
        want = logged.run().to_dict()
        assert counted.run().to_dict() == want == counted_kept.run().to_dict(), f"run {run}"
        noted += any("collision_margin" in dict(t.state.counters) for t in logged.tokens.values())
        for tok in counted.tokens.values():
            assert "collision_margin" not in dict(tok.state.counters)
            assert "injured" not in tok.state.conditions
    assert noted > 50  # the logged runs kept margins: there were notes to drop
    assert len(dropped.starts_by_reads) < 0.8 * len(kept.starts_by_reads)


def test_a_shipped_warm_cache_plays_every_run_as_its_own_process_does(tmp_path: Path) -> None:
    """A warm field cache ships to Dask workers whole (FieldCache.__getstate__): pickled
    with its scenario, its memos kept by object ids keyed again on arrival. The runs after
    it, in every shipped scenario and special case, have the events the cache it came from
    gives them; and the caches it holds by identity serve there (a run seen before starts
    its turns from them, not from nothing)."""
    import pickle

    for path in dict.fromkeys([Path(CHASE), *_variants(tmp_path), *SHIPPED]):
        sc = load_scenario(path)
        seeds = run_seeds(sc.seed, 30)
        here = FieldCache(sc)
        for run in range(20):
            Simulation(sc, seeds[run], fields=here, run=run, record="count").run()
        sc2, there = pickle.loads(pickle.dumps((sc, here), protocol=pickle.HIGHEST_PROTOCOL))
        assert len(there.starts) == len(here.starts) and len(there.ways) == len(here.ways)
        for run in range(30):
            a = _events(_run(sc, seeds[run], here, run))
            b = _events(_run(sc2, seeds[run], there, run))
            assert a == b, f"{path.name} run {run}"
    # The identity-keyed memos found their objects again: replaying a run seen before
    # makes no new turn start there.
    sc = load_scenario(CHASE)
    seeds = run_seeds(sc.seed, 5)
    here = FieldCache(sc)
    for run, seed in enumerate(seeds):
        Simulation(sc, seed, fields=here, run=run, record="count").run()
    sc2, there = pickle.loads(pickle.dumps((sc, here)))
    memos = ("starts", "starts_by_reads", "ways", "rolls_same", "_profile_of", "plans")

    def sizes() -> tuple[int, ...]:
        return (*(len(getattr(there, m)) for m in memos), len(there.hooks._canon))

    before = sizes()
    for run, seed in enumerate(seeds):
        Simulation(sc2, seed, fields=there, run=run, record="count").run()
    assert sizes() == before


def test_runs_make_no_reference_cycles() -> None:
    """A batch pauses the cyclic collector while its runs play (engine.batch.work._play): that
    holds only while the turn loop makes no reference cycles. Every shipped scenario, after
    its first runs (whose imports make some), plays 150 more, kept logs and counted ones,
    leaving nothing for the collector."""
    import gc

    from engine.batch.work import _play

    for path in SHIPPED:
        sc = load_scenario(path)
        fields = FieldCache(sc)
        items = list(enumerate(run_seeds(sc.seed, 160)))
        _play(sc, fields, items[:5])
        Simulation(sc, items[5][1], fields=fields, run=5).run()
        gc.collect()
        was = gc.get_debug()
        gc.set_debug(gc.DEBUG_SAVEALL)
        try:
            _play(sc, fields, items[5:150])
            for run, seed in items[150:]:
                Simulation(sc, seed, fields=fields, run=run).run()
            gc.collect()
            left = [type(o).__name__ for o in gc.garbage]
        finally:
            gc.set_debug(was)
            gc.garbage.clear()
        assert not left, f"{path.name}: the runs left cycles of {sorted(set(left))}"


def test_a_batch_chunk_leaves_the_collector_as_it_found_it() -> None:
    import gc

    from engine.batch.work import _play

    sc = load_scenario(CHASE)
    items = list(enumerate(run_seeds(sc.seed, 3)))
    assert gc.isenabled()
    _play(sc, FieldCache(sc), items)
    assert gc.isenabled()
    gc.disable()
    try:
        _play(sc, FieldCache(sc), items)
        assert not gc.isenabled()
    finally:
        gc.enable()


@pytest.mark.parametrize("ticks", ["whole", "multiples", "fractional", "huge"])
def test_the_kernels_fields_are_scipys_bit_for_bit(ticks: str) -> None:
    """The turn loop's distance fields run on engine/_kernel.c's field() (a bucket queue
    where every tick is a multiple of one step, else a binary heap) where it is built, and
    on scipy's Dijkstra where not: the same distances, bit for bit, from several sources."""
    import numpy as np
    from scipy.sparse import csr_array
    from scipy.sparse import random as sparse_random
    from scipy.sparse.csgraph import dijkstra

    from engine import kernel
    from engine.sim.fields import _kernel_csr

    if not kernel.available():
        pytest.skip("engine/_kernel.c is not built here")
    rng = np.random.default_rng(["whole", "multiples", "fractional", "huge"].index(ticks))
    queued = 0
    for _ in range(60):
        n = int(rng.integers(1, 250))
        m = sparse_random(n, n, density=float(rng.uniform(0.01, 0.1)), format="csr", rng=rng)
        if ticks == "whole":
            m.data = np.floor(m.data * 10)  # zeros too
        elif ticks == "multiples":
            m.data = np.floor(m.data * 6) * 381.0
        elif ticks == "fractional":
            m.data = np.round(m.data * 5) / 3
        else:
            m.data = np.floor(m.data * 3) * 2.0**46  # sums could pass 2**53: the heap
        graph = csr_array(m)
        sources = [int(s) for s in rng.integers(0, n, size=int(rng.integers(1, 4)))]
        indptr, indices, data, steps, step = _kernel_csr(graph)
        queued += steps is not None
        got = np.full(n, np.inf)
        kernel.field(indptr, indices, data, np.array(sources, np.int64), got, steps, step)
        assert np.array_equal(got, dijkstra(graph, indices=sources, min_only=True))
    # Whole ticks mostly take the bucket queue; fractional ones, and sums that could pass
    # 2**53, mostly the heap (a graph without edges, or whose ticks happen to be whole,
    # may take the other).
    assert (queued > 30) == (ticks in ("whole", "multiples")), queued
