"""The turn loop: tokens take turns through their rule system's hooks, every roll and move
is an event, and the event log replays to the identical state.

The package's rooms, innermost first (an import-linter contract holds the order):

- :mod:`~engine.sim.hookmemo`: rule hooks' results kept by what each call read of the
  token's state (a hook is a pure function of what it reads: ``systems/base.py`` says so);
- :mod:`~engine.sim.fields`: distance fields, walks and routes, and the profiles owning them;
- :mod:`~engine.sim.cache`: the per-scenario :class:`FieldCache` every run of a batch shares;
- :mod:`~engine.sim.loop`: :class:`Simulation`, one seeded run.

A :class:`Simulation` is one run of a scenario with one seed. Distance fields live in a
:class:`FieldCache` that is built once per scenario and shared by every run (in a batch, by
every run of a worker process): the map does not change between runs, so neither do the
fields, which is what makes thousands of runs cheap. What is pure is kept there too, never
what a roll decides. Results are those of a run alone, with a cold cache
(tests/test_sim.py proves the two equal).

Moving: a policy names a target field (distances *to* a target from every node); the token
steps down that field, one cell at a time, while its turn's time lasts. Entering the first
cell of a run of terrain that asks a check rolls it; a failed check applies its effect
(:meth:`RuleSystem.apply_check`) and ends the token's move before that cell.
"""

from engine.eventlog import file_digest, log_sources, read_log, replay_doors, replay_states
from engine.sim.cache import FieldCache, stats_key_of
from engine.sim.fields import Field, Profile, Route, TurnPlan, Walk
from engine.sim.hookmemo import HookMemo
from engine.sim.loop import RunResult, Simulation, Snapshot

__all__ = [
    "Field",
    "FieldCache",
    "HookMemo",
    "Profile",
    "Route",
    "RunResult",
    "Simulation",
    "Snapshot",
    "TurnPlan",
    "Walk",
    "file_digest",
    "log_sources",
    "read_log",
    "replay_doors",
    "replay_states",
    "stats_key_of",
]
