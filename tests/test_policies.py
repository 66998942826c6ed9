"""Token policies as plug-ins (engine.policies): a new policy is one class in one file, it
reads the run only through its TurnView, and what it declares it reads of the other tokens
is what the turn loop keeps its ways by."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
from conftest import ROOT

from engine import policies
from engine.errors import ArgumentError, ScenarioError
from engine.grid import Cell
from engine.policies import Goal, Policy, TurnView
from engine.policies.builtin import Pursuer, Quarry
from engine.scenario import Scenario, load_scenario
from engine.sim import FieldCache, Simulation
from engine.sim.ways import others_read
from engine.systems.base import Token
from engine.tokenspec import TokenSpec

CHASE = ROOT / "scenarios" / "chase.yaml"
HEX = ROOT / "scenarios" / "hex_hunt.yaml"


# --------------------------------------------------------------------------- a toy policy


class Rally(Policy):
    """The toy: make for the first exit (in cell order), whoever is about."""

    name = "rally"
    reads = frozenset()
    flees = True

    def goal(self, view: TurnView, spec: TokenSpec, token: Token) -> Goal:
        if not view.exits:
            return Goal()
        return Goal((min(view.exits),))


class RallyUnkept(Rally):
    """The same choice, declared as reading what the loop cannot name: worked out every
    turn, never served from a kept start."""

    name = "rally_unkept"
    reads = None


def _with_policy(sc: Scenario, tid: str, policy: str) -> Scenario:
    tokens = tuple(dataclasses.replace(t, policy=policy) if t.id == tid else t for t in sc.tokens)
    return dataclasses.replace(sc, tokens=tokens)


def _outcomes(sc: Scenario, seeds: range) -> list[tuple[object, ...]]:
    fields = FieldCache(sc)  # one cache for every run: kept starts serve the later ones
    out = []
    for seed in seeds:
        r = Simulation(sc, seed, fields=fields, record=False).run()
        out.append((r.outcome, r.turns, r.cell, r.by, r.events))
    return out


def test_a_new_policy_is_one_class_and_a_scenario_names_it(tmp_path: Path) -> None:
    """Rally above is the whole of the toy policy: a scenario file names it, the loader
    accepts it, and the quarry walks for the first exit turn after turn."""
    text = CHASE.read_text(encoding="utf-8").replace(
        "    policy: quarry\n", "    policy: rally\n", 1
    )
    text = text.replace("map: ../maps/", f"map: {ROOT / 'maps'}/")
    path = tmp_path / "rally.yaml"
    path.write_text(text, encoding="utf-8")
    sc = load_scenario(str(path))
    spec = next(t for t in sc.tokens if t.id == "quarry")
    assert spec.policy == "rally"
    exit_cell = min(sc.exit_cells)
    sim = Simulation(sc, 3)
    grid = sc.model.grid
    before = grid.steps(spec.cell, exit_cell)
    moves = 0
    while sim.outcome is None and sim.turn < 6:
        sim.play_turn()
        cell = sim.tokens["quarry"].state.cell
        assert cell is not None
        now = grid.steps(cell, exit_cell)
        assert now <= before, "the toy never walks away from its exit"
        moves += now < before
        before = now
    assert moves >= 2


def test_an_unknown_policy_names_the_registered_ones(tmp_path: Path) -> None:
    text = CHASE.read_text(encoding="utf-8").replace(
        "    policy: quarry\n", "    policy: ralyl\n", 1
    )
    text = text.replace("map: ../maps/", f"map: {ROOT / 'maps'}/")
    path = tmp_path / "typo.yaml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ScenarioError) as err:
        load_scenario(str(path))
    message = str(err.value)
    assert "tokens[0] (quarry).policy" in message and "did you mean 'rally'" in message
    for name in ("pursuer", "quarry", "waypoints", "idle", "human", "rally"):
        assert name in message


def test_a_policy_declares_only_known_reads() -> None:
    with pytest.raises(TypeError, match="unknown weather"):

        class Forecaster(Policy):  # noqa: F841
            name = "forecaster"
            reads = frozenset({"weather"})

    assert "forecaster" not in policies.names()


def test_the_built_in_policies_are_registered_in_order() -> None:
    assert policies.names()[:5] == ("pursuer", "quarry", "waypoints", "idle", "human")
    assert isinstance(policies.get("pursuer"), Pursuer)
    with pytest.raises(ArgumentError, match="no such policy.*did you mean 'pursuer'"):
        policies.get("pursuir")


def test_a_second_policy_of_a_taken_name_is_refused() -> None:
    """Defining a class may not silently replace another policy (a built-in above all)."""
    with pytest.raises(TypeError, match="registered already"):

        class Impostor(Policy):  # noqa: F841
            name = "pursuer"

    assert isinstance(policies.get("pursuer"), Pursuer)


# --------------------------------------------------------------------------- declared reads


class PursuerUnkept(Pursuer):
    name = "pursuer_unkept"
    reads = None


class QuarryUnkept(Quarry):
    name = "quarry_unkept"
    reads = None


@pytest.mark.parametrize("path", [CHASE, HEX], ids=lambda p: p.name)
def test_declared_reads_are_complete(path: Path) -> None:
    """A policy's declared reads are what its kept ways are keyed by: if a declaration left
    out something the choice reads, a way kept for one situation would be served in
    another and the runs would differ from runs whose ways are worked out every turn (the
    same policy declaring ``None``). Every built-in ground policy that keeps its ways, and
    the toy, play identically both ways."""
    sc = load_scenario(str(path))
    seeds = range(1, 41)
    kept = _outcomes(sc, seeds)
    unkept = sc
    for t in sc.tokens:
        if t.policy in ("pursuer", "quarry"):
            unkept = _with_policy(unkept, t.id, f"{t.policy}_unkept")
    assert _outcomes(unkept, seeds) == kept
    quarry = next(t.id for t in sc.tokens if t.policy == "quarry")
    rally = _with_policy(sc, quarry, "rally")
    assert _outcomes(rally, seeds) == _outcomes(_with_policy(sc, quarry, "rally_unkept"), seeds)


def test_the_view_is_read_only() -> None:
    """A policy gets the tokens and specs as read-only mappings."""
    sc = load_scenario(str(CHASE))
    sim = Simulation(sc, 1)
    from engine.sim.view import SimView

    view = SimView(sim, "quarry", sim.tokens["quarry"])
    with pytest.raises(TypeError):
        view.tokens["quarry"] = sim.tokens["pursuer1"]  # type: ignore[index]
    with pytest.raises(TypeError):
        view.specs["quarry"] = sim.specs["pursuer1"]  # type: ignore[index]
    cell: Cell | None = view.tokens["quarry"].state.cell
    assert cell == sim.tokens["quarry"].state.cell


def test_the_kept_way_key_follows_the_declaration() -> None:
    """What the loop keys a kept way by is what the mover's policy declares: the other
    tokens' distances for a pursuer (and its quarries' risk weights), their cells alone for
    the toy, which declares nothing."""
    sc = load_scenario(str(CHASE))
    sim = Simulation(sc, 1, record=False)
    sim.begin_turn()
    doors = sim.door_key()
    values, objects = others_read(sim, "pursuer1", doors)  # type: ignore[misc]
    assert all(len(v) == 3 for v in values)  # cell, scale, denominator
    quarry_prof = sim.profile_now("quarry")
    assert any(o is quarry_prof.penalty for o in objects)
    toy = Simulation(_with_policy(sc, "pursuer1", "rally"), 1, record=False)
    toy.begin_turn()
    values, objects = others_read(toy, "pursuer1", doors)  # type: ignore[misc]
    assert values == [(toy.tokens[t].state.cell,) for t in toy.order] and objects == []
