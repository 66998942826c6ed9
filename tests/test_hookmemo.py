"""The hook memo (engine/sim/hookmemo.py) is a seam for speed: a rule hook's result is kept
by what the hook read of the token's state and served to every state that reads alike. It
is only right if every hook is a pure function of what it reads (the contract written on
``RuleSystem`` in systems/base.py) and the memo logs every read. This proves it equal to
the plain call: states met in real runs of every shipped scenario, and in every system's
own tokens, are perturbed field by field (cells, conditions, counters, modes, progress),
and each real hook answers the same through one shared memo as called directly."""

from __future__ import annotations

import random
from fractions import Fraction
from typing import Any

import pytest
from conftest import ROOT

from engine import systems
from engine.dice import Dice
from engine.eventlog import token_state_from_dict
from engine.scenario import load_scenario
from engine.sim import Simulation
from engine.sim.hookmemo import HookMemo
from engine.systems.base import Token, TokenState

SHIPPED = sorted((ROOT / "scenarios").glob("*.yaml"))


def _harvest(path: Any) -> tuple[Any, list[Token], set[str], set[tuple[str, str]]]:
    """The scenario's system, tokens in every state its logged runs met, the conditions
    and counters seen, and the (check, degree) pairs rolled."""
    sc = load_scenario(str(path))
    tokens: list[Token] = []
    seen_conditions: set[str] = set()
    checks: set[tuple[str, str]] = set()
    for seed in range(1, 7):
        sim = Simulation(sc, seed)
        start = {tid: sim.tokens[tid] for tid in sim.order}
        sim.run()
        for ev in sim.events:
            if ev.get("type") == "state":
                st = token_state_from_dict(ev["state"])
                if st.flight is not None:
                    continue
                base = start[ev["token"]]
                tokens.append(Token(base.system, base.stats, st, base.id))
                seen_conditions |= st.conditions
            elif ev.get("type") == "check":
                checks.add((ev["what"], ev["degree"]))
    return sc.system, tokens, seen_conditions, checks


def _perturbed(rng: random.Random, tok: Token, conditions: list[str], modes: list[str]) -> Token:
    st = tok.state
    changes: dict[str, Any] = {}
    what = rng.randrange(5)
    if what == 0 and st.cell is not None:
        changes["cell"] = (st.cell[0] + rng.randint(-3, 3), st.cell[1] + rng.randint(-3, 3))
    elif what == 1 and conditions:
        c = rng.choice(conditions)
        changes["conditions"] = st.conditions ^ {c}
    elif what == 2:
        counters = dict(st.counters)
        name = rng.choice([*counters, "unread_counter"]) if counters else "unread_counter"
        counters[name] = max(0, counters.get(name, 0) + rng.choice((-1, 1, 2)))
        changes["counters"] = tuple(sorted((k, v) for k, v in counters.items() if v))
    elif what == 3 and modes:
        changes["mode"] = rng.choice(modes)
    else:
        changes["progress"] = Fraction(rng.randint(0, 5), rng.choice((1, 2, 3)))
    return tok.with_state(st.changed(**changes))


def _outcome(call: Any, *args: Any) -> Any:
    """What a call gives: its value (a token's state), or the error it raises (a hook may
    refuse a state, as D6 refuses a speed more than two levels from the last)."""
    try:
        got = call(*args)
    except Exception as exc:  # noqa: BLE001 - the error is the outcome compared
        return ("raised", type(exc), str(exc))
    return got.state if isinstance(got, Token) else got


def _bound(hook: Any, *args: Any) -> Any:
    """``hook`` as a function of the token alone."""

    def call(tok: Token) -> Any:
        return hook(tok, *args)

    return call


def _cases() -> list[tuple[str, Any, list[Token], list[str], list[tuple[str, str]]]]:
    cases = []
    for path in SHIPPED:
        system, tokens, conditions, checks = _harvest(path)
        cases.append((path.name, system, tokens, sorted(conditions), sorted(checks)))
    for name in systems.names():
        system = systems.create(name)
        tok = system.token({})
        cases.append((f"{name}-default", system, [tok], ["prone", "stalled", "tired"], []))
    return cases


@pytest.mark.parametrize("case", _cases(), ids=lambda c: c[0])
def test_kept_hook_results_equal_the_plain_calls(case: Any) -> None:
    _, system, tokens, conditions, checks = case
    assert tokens
    rng = random.Random(11)
    memo = HookMemo()
    modes = ["walk", "run", "climb", "swim", "crawl"]
    degrees = sorted({d for _, d in checks}) or ["failure", "success"]
    whats = sorted({w for w, _ in checks}) or ["climb"]
    served = 0
    for base in tokens[:60]:
        tok = base
        for _ in range(8):
            tok = _perturbed(rng, tok, conditions, modes)
            for pace in system.paces:
                hook = _bound(system.turn_pace, pace)
                got = _outcome(memo.get, ("turn_pace", tok.id, pace), tok, hook)
                assert got == _outcome(hook, tok)
                for moved in (False, True):
                    hook = _bound(system.paced, pace, moved)
                    got = _outcome(memo.token, ("paced", tok.id, pace, moved), tok, hook)
                    assert got == _outcome(hook, tok)
                    served += 1
            for what in whats:
                for degree in degrees:
                    hook = _bound(system.apply_check, what, degree)
                    got = _outcome(memo.token, ("apply", tok.id, what, degree), tok, hook)
                    assert got == _outcome(hook, tok)
            seed = rng.randrange(1 << 30)
            for name, hook in (("start", system.start_turn), ("end", system.end_turn)):
                got = _outcome(memo.token, (name, tok.id), tok, hook, Dice(seed))
                assert got == _outcome(hook, tok, Dice(seed))
    assert served


def test_a_carried_field_is_not_read_but_a_replaced_one_is() -> None:
    """:meth:`TokenState.changed` carries the other fields over unread, so a hook that only
    changes the mode is kept for every cell; ``dataclasses.replace`` reads what it copies,
    so the same hook written with it is kept per cell (right, only kept less widely)."""
    from dataclasses import replace

    memo = HookMemo()
    calls: list[str] = []

    def climb(tok: Token) -> Token:
        calls.append("changed")
        return tok.with_state(tok.state.changed(mode="climb"))

    def climb_replace(tok: Token) -> Token:
        calls.append("replace")
        return tok.with_state(replace(tok.state, mode="climb"))

    a = Token("x", {}, TokenState(cell=(0, 0)))
    b = Token("x", {}, TokenState(cell=(4, 1)))
    assert memo.token("c", a, climb).state == TokenState(cell=(0, 0), mode="climb")
    assert memo.token("c", b, climb).state == TokenState(cell=(4, 1), mode="climb")
    assert calls == ["changed"]
    assert memo.token("r", a, climb_replace).state == TokenState(cell=(0, 0), mode="climb")
    assert memo.token("r", b, climb_replace).state == TokenState(cell=(4, 1), mode="climb")
    assert calls == ["changed", "replace", "replace"]
    with pytest.raises(TypeError, match="no field speed"):
        memo.token("bad", a, lambda t: t.with_state(t.state.changed(speed=3)))
