"""What a ground token's way this turn reads of the run: the tokens in its way
(:func:`occupancy_of`) and, for a policy that declares its reads, the keys its way and its
whole turn start are kept by in the field cache (:func:`way_key`, :func:`start_key`)."""

from __future__ import annotations

from typing import Any

from engine import policies
from engine.grid import Cell
from engine.occupancy import Occupancy, Other, occupancy, reach_cell
from engine.sim.fields import Profile
from engine.sim.idmemo import MISSING
from engine.sim.view import RunState, low_enough
from engine.tokenspec import TokenSpec

#: No token in the way.
NOBODY = Occupancy()


def occupancy_of(run: RunState, tid: str) -> Occupancy:
    """What the other tokens take away from ``tid`` this turn (engine.occupancy): under
    the scenario's ``tokens_block``, enemies' footprints block and allies' may be
    passed but not stopped on; a pursuer's quarries never block it (that is the catch);
    a flier in the air is over everyone's heads; a climber partway up stands where it
    climbs to, not on its foot (:func:`~engine.occupancy.reach_cell`)."""
    setting = run.scenario.tokens_block
    if setting == "none":
        return NOBODY
    mine = run.specs[tid]
    hunts = tid in run.pursuers
    specs = run.specs
    if mine.size <= 1 and all(specs[oid].size <= 1 for oid in run.order):
        # One cell each (engine.occupancy's common case), without the Other records.
        inside = run.scenario.model.grid.in_bounds
        blocked: set[Cell] = set()
        no_stop: set[Cell] = set()
        every = setting == "all"
        for oid in run.order:
            tok = run.tokens.get(oid)
            if oid == tid or tok is None:
                continue
            st = tok.state
            cell, f = st.cell if st.toward is None else reach_cell(tok), st.flight
            if cell is None or not (f is None or f.landed or f.altitude <= 0):
                continue
            if hunts and oid in run.quarries:
                continue
            if inside(cell):
                (blocked if (every or specs[oid].side != mine.side) else no_stop).add(cell)
        if not blocked and not no_stop:
            return NOBODY
        return Occupancy(frozenset(blocked), frozenset(no_stop - blocked))
    others = []
    for oid in run.order:
        tok = run.tokens.get(oid)
        at = None if tok is None else reach_cell(tok)
        if oid == tid or tok is None or at is None:
            continue
        if not low_enough(tok, 0):
            continue
        spec = run.specs[oid]
        others.append(
            Other(
                at,
                spec.size,
                enemy=spec.side != mine.side,
                quarry=hunts and oid in run.quarries,
            )
        )
    return occupancy(run.scenario.model.grid, mine.size, others, setting)


def way_key(
    run: RunState,
    tid: str,
    spec: TokenSpec,
    prof: Profile,
    per_turn: bool,
    per_token: dict[str, Any] | None = None,
) -> tuple[tuple[Any, ...], tuple[Any, ...]] | None:
    """What :meth:`_ground_way` keeps a way by: plain values, and objects compared by
    identity (:class:`IdMemo`); None where it is not kept (a flier about, a token off the
    map, a policy other than quarry or pursuer).

    A quarry's or pursuer's way is a function of: the token's profile this turn and
    whether it rolls once a turn; the doors; every token's spec; and every token's cell
    and the distances of its profile as it stands (:meth:`_others_read`), which is all
    the policies, the tokens in the way and the descent read (:meth:`_find_way`); and
    the token's own crossing under way, where it has one (``state.toward`` and its
    ``progress``: the quarry prices going on with it by what is left of it), which its
    profile does not hold. ``per_token``: as :func:`others_read` takes it."""
    if policies.get(spec.policy).reads is None:
        return None
    doors = run.door_key()
    seen = others_read(run, tid, doors, per_token=per_token)
    if seen is None:
        return None
    values, objects = seen
    kept = (prof, *objects, *map(run.specs.__getitem__, run.order))
    own = run.tokens[tid].state
    if own.toward is not None:
        values.append(("crossing", own.toward, own.progress))
    if run.scenario.solve == "auto":  # a solved move with dice depends on the round
        values.append(("round", run.turn))
    return (tid, per_turn, doors, *values), kept


def start_key(
    run: RunState, tid: str, per_token: dict[str, Any] | None = None
) -> tuple[tuple[Any, ...], tuple[Any, ...]] | None:
    """What :meth:`_turn_start` keeps a start by in ``starts_by_reads``: plain values,
    and objects compared by identity (:class:`IdMemo`); None where a token is in the air or off the map.

    The start of the turn reads the token itself; the way reads the other tokens'
    cells and their profiles' distances (:meth:`_others_read`), not the rest of their
    states (a D6 token's last collision margin, which no rule reads again, or a penalty
    die that changes its odds but not its ways, would otherwise make every later turn
    of the run new). ``per_token``: as :func:`others_read` takes it."""
    doors = run.door_key()
    seen = others_read(run, tid, doors, skip_own=True, per_token=per_token)
    if seen is None:
        return None
    values, objects = seen
    if run.scenario.solve == "auto":  # a solved move with dice depends on the round
        values.append(("round", run.turn))
    kept = (run.tokens.get(tid), *map(run.specs.__getitem__, run.order), *objects)
    return (tid, doors, *values), kept


def others_read(
    run: RunState,
    tid: str,
    doors: tuple[tuple[int, bool], ...],
    skip_own: bool = False,
    per_token: dict[str, Any] | None = None,
) -> tuple[list[Any], list[Any]] | None:
    """What ``tid``'s policy and way read of every token as it stands (the mover's own
    too, unless ``skip_own``): values, and objects a key names by identity
    (:class:`IdMemo`); None where one of those tokens is in the air or off the map.

    Of a token: its cell (the tokens in the way read it; with the cell it is reached at
    where that is another, :func:`~engine.occupancy.reach_cell`), and what the policy
    declares it reads (:attr:`Policy.reads`): of its profile (:meth:`profile_now`) only its
    distances (turns from its cell), and of a quarry the penalties its risk-weighted
    route follows. Distances are the same for every profile on the same compiled graph
    (:class:`_Distances`) at the same scale and denominator: tokens whose states differ
    in their checks' odds but not their ways (a D6 pursuer one penalty die down) are
    read alike, and a way or a start kept for one serves the others.

    ``per_token``: what was read of each token (:func:`token_read`) for this very mover, doors
    and tokens, filled here: the start of a turn's key and its way's read the same
    tokens (:meth:`Simulation._turn_start`)."""
    reads = policies.get(run.specs[tid].policy).reads or frozenset()
    values: list[Any] = []
    objects: list[Any] = []
    for oid in run.order:
        if skip_own and oid == tid:
            continue
        if per_token is None:
            got = token_read(run, oid, doors, reads)
        else:
            got = per_token.get(oid, MISSING)
            if got is MISSING:
                got = per_token[oid] = token_read(run, oid, doors, reads)
        if got is None:
            return None
        values.append(got[0])
        objects.extend(got[1])
    return values, objects


def token_read(
    run: RunState, oid: str, doors: tuple[tuple[int, bool], ...], reads: frozenset[str]
) -> tuple[Any, tuple[Any, ...]] | None:
    """What a policy that declares ``reads`` reads of token ``oid`` (:func:`others_read`):
    a value and the objects named by identity; None where it is in the air or off the
    map."""
    tok = run.tokens.get(oid)
    if tok is None or tok.state.cell is None or tok.state.flight is not None:
        return None
    cell = tok.state.cell
    # A climber partway up: reached (and in the way) where it climbs to.
    reach = cell if tok.state.toward is None else reach_cell(tok)
    at = (cell,) if reach == cell else (cell, reach)
    if policies.DISTANCES not in reads:
        return at, ()
    prof = run.profile_now(oid, doors)
    shared = prof.shared
    if shared is None:  # (not one of a field cache's: the profile itself)
        return at, (prof,)
    value = (*at, prof.scale, prof.graph.denominator)
    if policies.QUARRY_ODDS in reads and oid in run.quarries:
        return value, (shared, prof.penalty)
    return value, (shared,)
