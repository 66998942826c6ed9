"""What a token's policy is: one class that chooses, from a read-only view of the turn, where
the token makes for (on foot) or what it aims at (in the air).

A policy reads the world only through :class:`TurnView` and returns a value; it never
changes the run. Each policy declares what it reads of the *other* tokens
(:attr:`Policy.reads`): the turn loop keeps a ground token's whole turn start (its way
down the field) by exactly those reads, so a policy that reads something it did not
declare would be served a way kept for another situation. A policy whose choice depends on
something the loop cannot name (its own progress along waypoints) declares ``None``: its
ways are worked out every turn.

Adding a policy is one class in one file::

    class Homebody(Policy):
        name = "homebody"              # the scenario's ``policy:`` value
        reads = frozenset()            # nothing of the other tokens

        def goal(self, view, spec, token):
            return Goal((spec.cell,))  # back to where it started

Subclasses with a ``name`` register themselves (:func:`engine.policies.get`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import ClassVar, Protocol

import numpy as np

from engine.flight.model import FlightState
from engine.grid import Cell, Grid
from engine.systems.base import Token
from engine.tokenspec import TokenSpec

#: What a policy may declare it reads of the other tokens (:attr:`Policy.reads`).
#: ``cells``: where each stands. ``distances``: how far each gets in a turn from its cell
#: (its profile's distances). ``quarry_odds``: the quarries' risk weights (their check
#: penalties), which their predicted routes follow.
CELLS = "cells"
DISTANCES = "distances"
QUARRY_ODDS = "quarry_odds"
READS = frozenset({CELLS, DISTANCES, QUARRY_ODDS})


@dataclass(frozen=True)
class Goal:
    """Where a ground token makes for this turn: the cells (empty: it stays), whether the
    way there is weighed by the risk of its checks, and the policy's progress to keep
    (waypoints reached; None: unchanged)."""

    cells: tuple[Cell, ...] = ()
    risk: bool = False
    progress: int | None = None


#: Stay where it is.
STAY = Goal()


class Aim:
    """What a flier's policy wants this turn: to end on ``catch`` (within ``reach``), else to
    get to ``goal`` soonest; or, fleeing, to end far from ``threats``. ``hold``: fleeing,
    the pursuers' turns to every cell (one a cell index, +inf where none comes): the flier
    ends where it holds the most cells, those it gets to a whole turn before them (None:
    only far from ``threats``). ``corner``: chasing, the quarry's turns to every cell (one
    a cell index): the cells it gets to in one turn are where it may be when the flier
    moves next, and a flier that cannot end on it this turn ends where its next turn's
    moves leave the fewest of them out of reach (None: by the bound alone). ``team``:
    with ``corner``, the cells (a mask by cell index) where the other pursuers catch the
    quarry after its next move as they stand when it makes it: the flier leaves those to
    them and covers the rest (None: it hunts alone)."""

    def __init__(
        self,
        goal: Cell | None,
        catch: Cell | None = None,
        reach: int = 0,
        threats: tuple[Cell, ...] = (),
        hold: np.ndarray | None = None,
        corner: np.ndarray | None = None,
        team: np.ndarray | None = None,
    ) -> None:
        self.goal = goal
        self.catch = catch
        self.reach = reach
        self.threats = threats
        self.hold = hold
        self.corner = corner
        self.team = team


class TurnView(Protocol):
    """The run as the moving token's policy may read it, at the start of its turn: no
    method changes anything."""

    @property
    def tokens(self) -> Mapping[str, Token]:
        """Every token as it stands, by id."""
        ...

    @property
    def specs(self) -> Mapping[str, TokenSpec]:
        """Every token's scenario entry, by id."""
        ...

    @property
    def pursuers(self) -> tuple[str, ...]: ...

    @property
    def quarries(self) -> tuple[str, ...]: ...

    @property
    def order(self) -> tuple[str, ...]:
        """Every token's id in turn order (who moves between the mover and the quarry)."""
        ...

    @property
    def grid(self) -> Grid:
        """The grid the mover moves its anchor on."""
        ...

    @property
    def exits(self) -> frozenset[Cell]:
        """The cells a quarry escapes through."""
        ...

    @property
    def capture(self) -> int:
        """How near (in steps) a pursuer must end to catch."""
        ...

    @property
    def capture_altitude(self) -> int: ...

    def progress(self, tid: str) -> int:
        """How many of its waypoints ``tid`` has reached."""
        ...

    def nearest(self, cell: Cell, ids: tuple[str, ...]) -> str | None:
        """Of ``ids``, the token fewest steps from ``cell`` (ties: the lowest id)."""
        ...

    def times_from(self, tid: str) -> np.ndarray:
        """Turns from ``tid``'s cell to every cell, as it stands now."""
        ...

    def reach_times(self, tid: str) -> np.ndarray:
        """Turns from ``tid`` to every cell whether it walks or flies: a flier's a lower bound
        from its flight state (its system's planner bound), a walker's :meth:`times_from`."""
        ...

    def least_times(self, ids: tuple[str, ...]) -> np.ndarray:
        """The least of :meth:`times_from` over ``ids``, cell by cell (+inf where ``ids``
        is empty): kept between turns, so one token's move costs one part of it again."""
        ...

    def turns_to(self, tid: str, cell: Cell) -> float:
        """:meth:`times_from` of ``tid`` at ``cell`` (on a big map, without its field)."""
        ...

    def moves_to(self, cell: Cell) -> float:
        """:meth:`moves` at ``cell`` (on a big map, without the mover's field)."""
        ...

    def claim_times(self, tid: str, cells: np.ndarray, less: np.ndarray) -> np.ndarray:
        """:meth:`times_from` of ``tid``, exact on each of the cell indexes ``cells`` whose
        turns less its ``less`` (one a cell) may be the least of them or tie it; on a big
        map inf on the others and elsewhere (settled only as far as that needs)."""
        ...

    def claim_times_on(self, tid: str, cells: np.ndarray, less: np.ndarray) -> np.ndarray:
        """:meth:`claim_times` on ``cells`` alone (one a cell, in their order)."""
        ...

    def quarry_goal(self, quarry: str) -> Cell | None:
        """The exit ``quarry`` reaches soonest of those it reaches before every pursuer."""
        ...

    def intercept(self, quarry: str) -> Cell:
        """Where the mover can catch ``quarry`` soonest along its predicted route."""
        ...

    def reach(self, tid: str) -> Cell | None:
        """Where ``tid`` is reached (caught, or in the way): its cell, or for a climber
        partway up the cell it climbs to (docs/rules.md "Climbers in play")."""
        ...

    def turns_of(self, tid: str, cell: Cell) -> np.ndarray:
        """Turns from ``cell`` to every cell for ``tid`` as it stands now, at its scenario
        pace (as :meth:`times_from` reads it from its own cell)."""
        ...

    def moves(self) -> np.ndarray:
        """Turns from the mover's cell to every cell on the profile it moves on this turn
        (its pace this turn: a D6 runner one speed level short of its chosen one)."""
        ...

    def odds_turns(self, cell: Cell) -> float:
        """Turns from the mover's cell to ``cell`` on the profile it moves on this turn, by
        the way a goal of that cell walks, each check on it priced by its odds as a
        ``risk=True`` goal prices it (entering a check cell costs ``1 - p`` turns more)."""
        ...

    def flee_cell(self) -> Cell | None:
        """The cell the mover reaches this turn from which it holds the largest region
        (ties: the most turns from any pursuer), or a refuge further off."""
        ...

    def predict(self, quarry: str) -> Cell:
        """Where ``quarry`` will be after its next turn."""
        ...

    def low_enough(self, tid: str) -> bool:
        """Whether ``tid`` may catch or be caught (on foot, landed or low enough)."""
        ...

    def solved_move(self) -> Cell | None:
        """Where the mover goes in the scenario's solved game (``solve: auto``), or None
        where there is none (docs/solve.md)."""
        ...


class Policy:
    """A way of playing a token; see the module's docstring. One instance serves every
    token that names it (a policy keeps nothing between calls)."""

    #: The scenario's ``policy:`` value.
    name: ClassVar[str]
    #: What the choice reads of the other tokens (:data:`READS`); None: not declared, the
    #: turn loop works the way out every turn.
    reads: ClassVar[frozenset[str] | None] = None
    #: Whether the token is a pursuer (or a quarry) by its policy alone, whatever its side.
    hunts: ClassVar[bool] = False
    flees: ClassVar[bool] = False

    registry: ClassVar[dict[str, type[Policy]]] = {}

    def __init_subclass__(cls, **kwargs: object) -> None:
        super().__init_subclass__(**kwargs)
        name = cls.__dict__.get("name")
        if name is None:
            return
        if not isinstance(name, str) or not name.isidentifier():
            raise TypeError(f"{cls.__name__}.name must be an identifier, not {name!r}")
        reads = cls.__dict__.get("reads")
        if reads is not None and not reads <= READS:
            unknown = ", ".join(sorted(reads - READS))
            raise TypeError(f"{cls.__name__}.reads: unknown {unknown}; use {sorted(READS)}")
        known = Policy.registry.get(name)
        if known is not None and (known.__module__, known.__qualname__) != (
            cls.__module__,
            cls.__qualname__,
        ):
            raise TypeError(
                f"{cls.__qualname__}: a policy called {name!r} is registered already "
                f"({known.__module__}.{known.__qualname__}); give it another name"
            )
        Policy.registry[name] = cls

    def goal(self, view: TurnView, spec: TokenSpec, token: Token) -> Goal:
        """Where a token on the ground makes for this turn."""
        return STAY

    def aim(self, view: TurnView, spec: TokenSpec, token: Token, state: FlightState) -> Aim | None:
        """What a flier aims at this turn; None: it cruises on (or stays landed)."""
        return None

    def flown(self, view: TurnView, spec: TokenSpec, cells: tuple[Cell, ...]) -> int | None:
        """The progress to keep after a flight turn over ``cells``; None: unchanged."""
        return None
