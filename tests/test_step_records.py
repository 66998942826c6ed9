"""A path's step and plan records made a block at a time (``StepColumns.__iter__``,
``PlanTable.__iter__``, engine/search/steps.py) are the records made one at a time
(``_record``): the same keys in the same order, the same values of the same types, with
checks, optional parts, re-timed steps and blocks of any size; and ``Context.path``
answers as the plain reading does."""

from __future__ import annotations

import random
from typing import Any

import numpy as np
import pytest
from conftest import ROOT

from engine import api
from engine.errors import TacgridError
from engine.search import steps as steps_mod
from engine.search.steps import PlanTable, StepColumns, Steps, StepTable

KINDS = [("walk", "grass"), ("swim", "water"), ("climb", "cliff"), ("walk", "road")]


def same_records(got: list[dict[str, Any]], want: list[dict[str, Any]]) -> None:
    assert len(got) == len(want)
    for a, b in zip(got, want, strict=True):
        assert list(a) == list(b)  # keys in the same order
        assert a == b
        for key in a:
            assert type(a[key]) is type(b[key]), key
            if isinstance(a[key], list):
                assert a[key] is not b[key]
                assert [type(x) for x in a[key]] == [type(x) for x in b[key]], key


def plain(table: Any) -> list[dict[str, Any]]:
    return [table._record(i) for i in range(len(table))]


def random_columns(rng: random.Random, n: int, width: int = 37) -> StepColumns:
    flat = np.array(
        [rng.randrange(width * 29) for _ in range(n)], dtype=rng.choice([np.int32, np.int64])
    )
    m = max(0, n - 1)
    tid = np.array([rng.randrange(len(KINDS)) for _ in range(m)], dtype=np.int32)
    cost = np.array([rng.randint(1, 40) for _ in range(m)], dtype=np.int64)
    total = np.cumsum(cost, dtype=np.int64)
    steps = StepColumns(flat, width, "prone", tid, KINDS, total, cost, rng.choice([1, 6, 7, 60]))
    for i in range(n):
        if rng.random() < 0.2:
            steps.checks[i] = {"skill": "swim", "p": rng.random()}
        if rng.random() < 0.1:
            steps.extra_of(i)["jump"] = {"over": rng.randint(1, 3)}
        if rng.random() < 0.05:
            steps.extra_of(i)["climb"] = {"turns": rng.randint(1, 4)}
    return steps


@pytest.mark.parametrize("block", [1, 2, 3, 5, 4096])
def test_step_columns_read_a_block_at_a_time_as_a_step_at_a_time(
    monkeypatch: pytest.MonkeyPatch, block: int
) -> None:
    monkeypatch.setattr(steps_mod, "RECORD_BLOCK", block)
    rng = random.Random(block)
    for n in [0, 1, 2, 3, 4, 7, 40, 200]:
        steps = random_columns(rng, n)
        same_records(list(steps), plain(steps))
        if n > 1:  # a climb's re-timing: the figures kept as floats from then on
            i = rng.randrange(n)
            turns, time, turn = steps.timing(i)
            steps.retime(i, turns + 0.5, time + 0.25, turn + 1)
            same_records(list(steps), plain(steps))


def random_plan(rng: random.Random, steps: Steps) -> PlanTable:
    plan = PlanTable(steps)
    lo, k = 1, 1
    while lo <= len(steps):
        hi = min(len(steps), lo + rng.randint(0, 6))  # a turn may enter no cell
        plan.append(k, lo, hi, rng.random())
        k += rng.randint(1, 3)
        if hi == len(steps) and rng.random() < 0.5:
            break
        lo = hi if hi > lo else lo + 1
    return plan


@pytest.mark.parametrize("block", [1, 2, 7, 4096])
def test_plan_reads_a_block_of_turns_at_a_time_as_a_turn_at_a_time(
    monkeypatch: pytest.MonkeyPatch, block: int
) -> None:
    monkeypatch.setattr(steps_mod, "RECORD_BLOCK", block)
    rng = random.Random(100 + block)
    for n in [1, 2, 5, 30, 120]:
        columns = random_columns(rng, n)
        table = StepTable()
        for i in range(n):
            table.append((rng.randrange(9), rng.randrange(9)), "walk", "grass", 0.5 * i, 0.5, i)
        for steps in (columns, table):
            plan = random_plan(rng, steps)
            same_records(list(plan), plain(plan))


def context_answers() -> list[dict[str, Any]]:
    """``Context.path`` between seeded random cells of shipped maps, in three systems."""
    rng = random.Random(5)
    answers = []
    for name in ("encounter.tmx", "chase.tmx", "hex_pointy.tmx"):
        model = api.load_map(ROOT / "maps" / name)
        for system in ("generic", "d6", "mythmaster"):
            rules = api.system(system)
            ctx = api.Context(model, rules, rules.token(""))
            w, h = model.grid.width, model.grid.height
            for _ in range(6):
                a = (rng.randrange(w), rng.randrange(h))
                b = (rng.randrange(w), rng.randrange(h))
                try:
                    answers.append(ctx.path(a, b))
                except TacgridError:  # no path, a goal that cannot be entered
                    continue
    return answers


def test_context_path_answers_as_the_plain_reading(monkeypatch: pytest.MonkeyPatch) -> None:
    """``Context.path`` on shipped maps (checks where the system has them): the documents
    the records read one at a time make."""
    answers = context_answers()
    assert len(answers) > 20
    monkeypatch.setattr(StepColumns, "__iter__", steps_mod._Records.__iter__)
    monkeypatch.setattr(PlanTable, "__iter__", steps_mod._Records.__iter__)
    again = context_answers()
    assert len(again) == len(answers)
    for x, y in zip(answers, again, strict=True):
        same_records(x["steps"], y["steps"])
        same_records(x["plan"], y["plan"])
        assert x == y
