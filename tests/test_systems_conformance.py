"""One conformance suite, run over every registered rule system automatically."""

from __future__ import annotations

import json
from fractions import Fraction

import pytest

from engine import systems
from engine.cli import main
from engine.errors import ArgumentError, StatError
from engine.mapmodel import MODES
from engine.systems.base import RuleSystem

NAMES = systems.names()
STATS_KEYS = {"system", "unit", "cell_size", "rates", "per_turn", "encumbrance"}


def sample_value(param):
    """A valid non-default value for a stat or setting."""
    if param.kind == "bool":
        return not param.default
    if param.kind == "choice":
        return next((c for c in param.choices if c != param.default), param.default)
    if param.kind == "dice":
        return "3D+2"
    if param.kind in ("int", "number"):
        lo = param.minimum if param.minimum is not None else 0
        hi = param.maximum if param.maximum is not None else lo + 10
        return (
            int((Fraction(lo) + Fraction(hi)) // 2)
            if param.kind == "int"
            else (Fraction(lo) + Fraction(hi)) / 2
        )
    return "x"


def test_registry_finds_systems() -> None:
    assert "generic" in NAMES
    for name in NAMES:
        cls = systems.get(name)
        assert issubclass(cls, RuleSystem) and cls.name == name


def test_unknown_system_suggests() -> None:
    with pytest.raises(ArgumentError, match="did you mean 'generic'"):
        systems.get("generik")


@pytest.fixture(params=NAMES)
def system(request: pytest.FixtureRequest) -> RuleSystem:
    return systems.create(request.param)


def test_metadata(system: RuleSystem) -> None:
    assert system.unit in ("ft", "m")
    assert isinstance(system.cell_size, Fraction) and system.cell_size > 0
    assert system.default_pace in system.paces and system.fastest_pace in system.paces
    names = system.stat_names()
    assert len(names) == len(set(names))
    # Notes (what no rule reads: a batch drops them) are counter or condition names.
    assert isinstance(system.notes, frozenset)
    assert all(isinstance(n, str) and n for n in system.notes)
    d = system.describe()
    json.dumps(d)  # serialisable


def test_unknown_stat_names_the_stat_and_the_allowed(system: RuleSystem) -> None:
    with pytest.raises(StatError) as err:
        system.token("no_such_stat=1")
    msg = str(err.value)
    assert "no_such_stat" in msg and all(n in msg for n in system.stat_names())


def test_bad_stat_values_name_the_stat(system: RuleSystem) -> None:
    for param in system.stats:
        bad = {"bool": "maybe", "choice": "zzz", "dice": "3Q", "int": "1.5", "number": "abc"}.get(
            param.kind
        )
        if bad is None:
            continue
        with pytest.raises(StatError) as err:
            system.token({param.name: bad})
        assert param.name in str(err.value) and "expected" in str(err.value)
        if param.minimum is not None:
            with pytest.raises(StatError):
                system.token({param.name: Fraction(param.minimum) - 1})


def test_settings_round_trip(system: RuleSystem) -> None:
    cls = type(system)
    defaults = cls().config
    assert defaults == {s.name: s.default for s in cls.settings}
    for s in cls.settings:
        value = sample_value(s)
        changed = cls({s.name: str(value).lower() if isinstance(value, bool) else str(value)})
        assert changed.config[s.name] == value
        assert cls({s.name: changed.config[s.name]}).config == changed.config
    with pytest.raises(StatError, match="no setting"):
        cls({"no_such_setting": 1})


def test_rates_are_exact(system: RuleSystem) -> None:
    tok = system.token({})
    for mode in MODES:
        for pace in system.paces:
            r = system.rate(tok, mode, pace)
            assert isinstance(r, Fraction) and r >= 0, (mode, pace)
    assert system.rate(tok, "blocked", system.fastest_pace) == 0
    for mode, n in system.per_turn(tok).items():
        assert isinstance(n, Fraction), mode


def test_stats_report_shape_and_determinism(system: RuleSystem) -> None:
    tok = system.token({})
    rep = system.stats_report(tok)
    assert STATS_KEYS <= set(rep)
    assert {"walk", "crawl", "swim", "climb", "ladder"} <= set(rep["per_turn"])
    assert rep["encumbrance"] in ("none", "encumbered", "heavy", "immobile")
    assert json.dumps(rep) == json.dumps(system.stats_report(system.token({})))


def test_turn_upkeep_is_deterministic_for_a_seed(system: RuleSystem) -> None:
    from engine.dice import Dice

    def play(seed: int):
        dice = Dice(seed)
        tok = system.token({})
        for _ in range(5):
            tok = system.end_turn(system.start_turn(tok, dice), dice)
        return tok.state, [e.to_dict() for e in dice.events()]

    assert play(11) == play(11)


def test_stats_command_json(system: RuleSystem, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["stats", "--system", system.name, "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert STATS_KEYS <= set(out) and out["system"] == system.name


def test_stats_command_bad_stat_exit_2(
    system: RuleSystem, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["stats", "--system", system.name, "--token", "bogus=1", "--json"]) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.count("\n") == 1 and "bogus" in err
