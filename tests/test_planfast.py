"""Learning a turn's plan cheaply gives what the plain way gives.

* A turn's checks are kept by the runs of terrain it enters (``RuleSystem.turn_checks_by_runs``,
  :func:`engine.sim.walking.terrain_runs`): D6's checks over a turn's terrains are its checks
  over them with each run given once, on random turns; and in play every turn's checks, with
  the entry each is rolled at, are those worked out the plain way from every cell entered.
* D6 keeps a movement roll by what decides it (``D6.move_check``): every kept check equals
  the one made afresh, and a round's checks (the hardest move roll, jumps in place) are
  those the plain rule picks, on random turns.
* What the start of a turn's key reads of each token serves its way's key
  (:func:`engine.sim.ways.token_read`): the key so made is the key made afresh.
"""

from __future__ import annotations

import random
from dataclasses import replace
from typing import Any

from conftest import ROOT

from engine.batch import run_seeds
from engine.scenario import load_scenario
from engine.sim import FieldCache, Simulation
from engine.sim.walking import Walker, terrain_runs
from engine.sim.ways import way_key
from engine.systems.base import CellCheck, Token

CHASE = ROOT / "scenarios" / "chase.yaml"


def _runs_of(terrains: list[Any]) -> list[Any]:
    return [t for k, t in enumerate(terrains) if k == 0 or terrains[k - 1] is not t]


def test_terrain_runs_gives_each_run_of_one_terrain_once() -> None:
    cells = ((3, 0), (3, 1), (2, 0), (2, 0), (3, 0), (5, 2), (5, 2))
    assert terrain_runs(cells) == (3, 2, 3, 5)
    assert terrain_runs(()) == ()


def test_d6_turn_checks_over_runs_are_its_checks_over_every_terrain() -> None:
    """D6 declares ``turn_checks_by_runs``: on 3 000 random turns (runs of 1-4 cells of the
    chase's terrains and of terrains with a GM's DN, gaps among them; random penalties,
    declared actions and speeds; every pace; both ``roll_per`` settings), its checks over
    the terrains entered equal its checks over them with each run given once."""
    sc = load_scenario(CHASE)
    system = sc.system
    assert system.turn_checks_by_runs
    terrains = list(sc.model.terrains)
    terrains += [replace(t, name=f"{t.name} dn", dn=dn) for t in terrains for dn in (7, 14, 23)]
    token = sc.system.token(dict(sc.tokens[0].stats), token_id="quarry")
    token = replace(token, state=system.initial_state(token))
    rng = random.Random(43)
    paces = (None, "cautious", "cruising", "high", "all_out")
    per_round = [system]
    per_run = load_scenario(CHASE, overrides={"settings.roll_per": "cell_run"}).system
    per_round.append(per_run)
    asked = 0
    for _ in range(3000):
        entered: list[Any] = []
        for _ in range(rng.randint(1, 6)):
            entered += [rng.choice(terrains)] * rng.randint(1, 4)
        st = token.state
        for name in ("penalty", "actions", "speed"):
            st = st.with_counter(name, rng.randint(0, 3))
        tok = token.with_state(st)
        pace = rng.choice(paces)
        for sys_ in per_round:
            whole = sys_.turn_checks(tok, entered, pace)
            assert whole == sys_.turn_checks(tok, _runs_of(entered), pace)
            asked += bool(whole)
    assert asked > 1000


class _CheckedWalker(Walker):
    """A walker that works out every turn's checks the plain way too (no memo: the system's
    checks over every terrain entered, each placed at the first entry whose cost asks it)."""

    seen: list[int]

    def turn_rolls(
        self,
        token: Token,
        g: Any,
        entries: list[tuple[int, float]],
        cells: tuple[Any, ...] | None = None,
    ) -> list[tuple[int, CellCheck]]:
        got = super().turn_rolls(token, g, entries, cells)
        ids = g.terrain_list()
        n, per = g.n, g.n * g.n_par
        entered = [(ids[nxt % n], nxt // per) for nxt, _ in entries]
        terrains = [g.model.terrains[t] for t, _ in entered]
        plain = []
        for check in self.system.turn_checks(token, terrains, g.pace) or []:
            at = 0
            for k, (t, layer) in enumerate(entered):
                c = g.state_costs[layer][t].check
                if c is not None and (c.what, c.target) == (check.what, check.target):
                    at = k
                    break
            plain.append((at, check))
        plain.sort(key=lambda x: x[0])
        assert got == plain
        self.seen.append(len(got))
        return got


def test_every_turns_checks_in_play_are_the_plain_ones() -> None:
    """Over 150 counted chase runs (plans learned, outcomes shared), every turn's checks
    and where each is rolled equal the plain way's; checks are asked (turns that roll) and
    the runs end as their logged runs do."""
    sc = load_scenario(CHASE)
    fields, logged_fields = FieldCache(sc), FieldCache(sc)
    seen: list[int] = []
    for run, seed in enumerate(run_seeds(sc.seed, 150)):
        sim = Simulation(sc, seed, fields=fields, run=run, record="count")
        walker = _CheckedWalker(sim.system, sim.fields, sim.dice, sim.sink, sim._stats_key)
        walker.seen = seen
        sim.walker = walker
        logged = Simulation(sc, seed, fields=logged_fields, run=run)
        assert sim.run().to_dict() == logged.run().to_dict(), f"run {run}"
    assert len(seen) > 200 and sum(map(bool, seen)) > 100


class _CheckedWays(Simulation):
    """A run that works out each way's key afresh too where the start of the turn's key
    lent it what it read of each token."""

    lent = 0

    def _ground_way(
        self,
        tid: str,
        spec: Any,
        token: Token,
        prof: Any,
        per_turn: bool,
        kept: dict[str, Any] | None = None,
    ) -> Any:
        if kept is not None:
            got = way_key(self, tid, spec, prof, per_turn, dict(kept))
            plain = way_key(self, tid, spec, prof, per_turn)
            assert (got is None) == (plain is None)
            if got is not None and plain is not None:
                assert got[0] == plain[0]
                assert len(got[1]) == len(plain[1])
                assert all(a is b for a, b in zip(got[1], plain[1], strict=True))
                _CheckedWays.lent += 1
        return super()._ground_way(tid, spec, token, prof, per_turn, kept)


def test_a_ways_key_from_what_the_starts_key_read_is_the_plain_key() -> None:
    """The start of a turn's key and its way's read the same tokens (ways.token_read, kept
    per token): over 150 counted chase runs, every way's key made so equals the key made
    afresh (plain values equal, the same objects), and the runs end as logged runs do."""
    sc = load_scenario(CHASE)
    fields, logged_fields = FieldCache(sc), FieldCache(sc)
    _CheckedWays.lent = 0
    for run, seed in enumerate(run_seeds(sc.seed, 150)):
        sim = _CheckedWays(sc, seed, fields=fields, run=run, record="count")
        logged = Simulation(sc, seed, fields=logged_fields, run=run)
        assert sim.run().to_dict() == logged.run().to_dict(), f"run {run}"
    assert _CheckedWays.lent > 200


def _fresh(system: Any) -> Any:
    """The same system, keeping nothing yet (its checks made afresh)."""
    return type(system)(system.config)


def _plain_round(system: Any, token: Token, terrains: list[Any], pace: Any) -> list[Any]:
    """D6's round of checks the plain way: every check made afresh (no kept check), the
    hardest move roll picked by ``max`` (its first of the highest DN, least likely)."""
    checks, last = [], None
    for terrain in terrains:
        key = (terrain.move, terrain.difficulty, terrain.dn)
        if key == last:
            continue
        last = key
        found = _fresh(system).move_check(token, terrain, pace)
        if found is not None:
            checks.append(found)
    moves = [c for c in checks if c.what.startswith("move ")]
    if system.config["roll_per"] == "cell_run" or len(moves) < 2:
        return checks
    hardest = max(moves, key=lambda c: (c.check.dn, -c.p_success))
    return [c for c in checks if c is hardest or not c.what.startswith("move ")]


def test_d6_kept_checks_are_the_checks_made_afresh() -> None:
    """On 2 000 random turns (the chase's terrains and terrains with a GM's DN, a terrain
    met again after others, random penalties, actions, speeds, stunts and declared
    actions), every movement roll kept equals the one made afresh, and each round's checks
    equal the plain rule's (the same checks, in the same places)."""
    sc = load_scenario(CHASE)
    system = sc.system
    terrains = list(sc.model.terrains)
    terrains += [replace(t, name=f"{t.name} dn", dn=dn) for t in terrains for dn in (7, 14, 23)]
    token = system.token(dict(sc.tokens[1].stats), token_id="pursuer1")
    token = replace(token, state=system.initial_state(token))
    rng = random.Random(4343)
    paces = (None, "cautious", "cruising", "high", "all_out")
    rounds = 0
    for _ in range(2000):
        st = token.state
        for name in ("penalty", "actions", "speed"):
            st = st.with_counter(name, rng.randint(0, 3))
        tok = token.with_state(st)
        pace = rng.choice(paces)
        terrain = rng.choice(terrains)
        maneuver, other = rng.choice((0, 0, 5)), rng.choice((None, None, 0, 2))
        kept = system.move_check(tok, terrain, pace, maneuver=maneuver, other=other)
        again = system.move_check(tok, terrain, pace, maneuver=maneuver, other=other)
        fresh = _fresh(system).move_check(tok, terrain, pace, maneuver=maneuver, other=other)
        assert kept == fresh and again is kept
        entered = [rng.choice(terrains) for _ in range(rng.randint(1, 5))]
        entered += entered[:2]  # terrains met again after others
        got = system.round_checks(tok, entered, pace)
        plain = _plain_round(system, tok, entered, pace)
        assert got == plain
        rounds += len(plain) > 1
    assert rounds > 100
