"""Which tokens' turns leave a state the solve must carry as part of their positions
(:mod:`.pace`), beyond the pace ramp and the once-a-round roll
(:func:`engine.solve.pace.paces_change`):

- rolls made cell by cell (D6's ``roll_per = cell_run``: one roll a run of terrain) whose
  failure stops the token and leaves something into its next turn (seed 003's Movement
  Failures: a slip's -1D next round, a fall's stop, a tumble's lost round)
  (:func:`cell_rolls_carry`);
- a turn that counts itself on the token (D6's stamina clock on the long-distance
  schedule: each round moved adds to it, a full clock is a stamina roll)
  (:func:`counts_turns`).

Both ask only the system's own hooks (:meth:`RuleSystem.apply_check`,
:meth:`RuleSystem.end_turn_outcomes`, :meth:`RuleSystem.start_turn`,
:meth:`RuleSystem.paced`); a result that lets the token on changed, or a failure whose end
of turn the system does not list, is left to the solve's other games, which refuse it in
one line (docs/solve.md).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from engine.dice import Dice
from engine.solve.chance import _lasting


def counts_turns(token: Any, pace: str, system: Any) -> bool:
    """Whether a turn moved at ``pace`` leaves ``token`` changed beyond what the turn
    before left (:meth:`RuleSystem.paced` twice over: a clock that counts the rounds)."""
    notes = frozenset(system.notes)
    once = system.paced(token, pace, True)
    twice = system.paced(once, pace, True)
    return bool(_lasting(once, twice, notes))


def cell_rolls_carry(g: Any, token: Any, system: Any) -> bool:
    """Whether a check the map's cells ask ``token`` at ``g``'s pace, rolled cell by cell
    (:meth:`RuleSystem.turn_checks` None), has a failing degree that stops the move and
    leaves the token changed as its next turn starts, beyond the system's notes."""
    if system.turn_checks(token, [], g.pace) is not None:
        return False
    notes = frozenset(system.notes)
    plain = system.start_turn(system.end_turn(token, Dice(0)), Dice(0))
    present = np.unique(g.model.terrain_ids).tolist()
    seen: set[str] = set()
    for layer in g.state_costs:
        for t in present:
            cc = layer[t].check
            if cc is None or cc.check is None or cc.what in seen:
                continue
            seen.add(cc.what)
            p_success = cc.check.p_success()
            upto = 0 * p_success
            for degree, p in cc.check.outcomes().items():
                success = upto < p_success  # the successes come first (engine.checks)
                upto += p
                if not p or success or system.goes_on(cc, degree, success):
                    continue
                ends = system.end_turn_outcomes(system.apply_check(token, cc.what, degree))
                if ends is None:
                    continue
                for ended, _ in ends:
                    if _lasting(plain, system.start_turn(ended, Dice(0)), notes):
                        return True
    return False


__all__ = ["cell_rolls_carry", "counts_turns"]
