"""Learning a turn of a run cheaper (issue 43's one-worker rate): each shortcut held equal
to the plain way it replaces, with a case the plain way tells apart from a wrong one."""

from __future__ import annotations

from typing import Any

import numpy as np
from conftest import ROOT

from engine.batch import run_seeds
from engine.dice import Dice
from engine.scenario import load_scenario
from engine.sim import FieldCache, Simulation
from engine.sim.hookmemo import HookMemo
from engine.sim.threat import least_plain
from engine.systems.base import Token

CHASE = str(ROOT / "scenarios" / "chase.yaml")


def test_the_threat_of_a_few_arrays_is_their_least_in_a_new_array() -> None:
    """FieldCache.threat makes the least of two arrays in one pass (no copy of the first):
    bit for bit the plain least, a new read-only array, the inputs untouched, for one, two,
    three and more arrays than a part holds."""
    fields = FieldCache(load_scenario(CHASE))
    rng = np.random.default_rng(43)
    n = 64
    for count in (1, 2, 3, fields.THREAT_PART + 3):
        times = []
        for _ in range(count):
            t = np.floor(rng.random(n) * 12) / 4
            t[rng.random(n) < 0.2] = np.inf
            t.setflags(write=False)
            times.append(t)
        copies = [t.copy() for t in times]
        got = fields.threat(times, n)
        want = least_plain(times, n)
        assert got.dtype == want.dtype and np.array_equal(got, want)
        assert not got.flags.writeable and all(got is not t for t in times)
        assert all(np.array_equal(t, c) for t, c in zip(times, copies, strict=True))
        assert fields.threat(times, n) is got  # kept by the very arrays


class _Counted(FieldCache):
    """A field cache that counts the trims the turns ask for."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.trims = 0

    def trim(self, cells: Any = ()) -> None:
        self.trims += 1
        super().trim(cells)


def test_a_turn_trims_the_fields_only_past_their_budget() -> None:
    """A turn asks FieldCache.trim only where the fields weigh more than their budget (the
    trim's own test, made first: no generator of cells a turn); past it, every such turn
    (a budget of 0: every turn that starts with fields kept), and the runs are the same."""
    sc = load_scenario(CHASE)
    items = list(enumerate(run_seeds(sc.seed, 3)))
    roomy = _Counted(sc)
    roomy_runs = [
        Simulation(sc, seed, fields=roomy, run=run, record="count").run() for run, seed in items
    ]
    tight = _Counted(sc)
    tight.FIELD_BYTES = 0
    tight_runs = []
    due = 0
    for run, seed in items:
        sim = Simulation(sc, seed, fields=tight, run=run, record="count")
        before = tight.trims
        while sim.outcome is None:
            sim.begin_turn()
            for tid in sim.order:
                due += tight.weight.used > tight.FIELD_BYTES
                sim.take_turn(tid)
                if sim.outcome is not None:
                    break
            sim.end_round()
        assert tight.trims - before > 0
        tight_runs.append(sim.result())
    assert roomy.trims == 0 and tight.trims == due > 0
    assert tight_runs == roomy_runs


def test_a_kept_token_asks_its_hook_once_and_an_equal_one_is_served() -> None:
    """HookMemo.token asks the memo once for a token kept by value (its own canon): the
    hook is called once, kept, and an equal token of another object is served it."""
    sc = load_scenario(CHASE)
    sim = Simulation(sc, 1)
    memo = HookMemo()
    token = memo.canon(sim.tokens["quarry"])
    calls: list[Token] = []

    def start(tok: Token, dice: Any) -> Token:
        calls.append(tok)
        return sc.system.start_turn(tok, dice)

    first = memo.token(("begin", "quarry"), token, start, Dice(1))
    assert len(calls) == 1
    assert memo.token(("begin", "quarry"), token, start, Dice(1)) is first
    twin = Token(token.system, token.stats, token.state.changed(), token.id)
    assert twin is not token and twin == token
    assert memo.token(("begin", "quarry"), twin, start, Dice(1)) is first
    assert len(calls) == 1
    plain = sc.system.start_turn(sim.tokens["quarry"], Dice(1))
    assert first == plain
