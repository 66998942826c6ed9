"""The per-scenario field cache shared by every run of a batch (:class:`FieldCache`)."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import replace
from fractions import Fraction
from typing import Any

import numpy as np

from engine.eventlog import log_sources
from engine.grid import Cell, Grid
from engine.mapmodel import MapModel
from engine.movement import MovementGraph
from engine.occupancy import Occupancy, gap_steps, token_graph, with_blocked
from engine.policies.region import reached_safely
from engine.scenario import Scenario, TokenSpec
from engine.sim.fields import (
    INF,
    FieldBytes,
    Profile,
    Route,
    TurnPlan,
    Walk,
    _Distances,
    route_meets,
    trim_at,
)
from engine.sim.flee import cell_centres, flee_choice
from engine.sim.hookmemo import HookMemo, _plain, _same_reads, _untrace, _values
from engine.sim.idmemo import MISSING, IdMemo
from engine.sim.kernelcsr import _whole_ticks
from engine.sim.threat import ThreatMaps
from engine.sim.toward import walk_toward
from engine.systems.base import Token, jsonable
from engine.walls import with_doors


def stats_key_of(stats: Any) -> tuple[Any, ...]:
    """A token's stats as a cache key (every name and value, as text)."""
    return tuple(sorted((k, str(v)) for k, v in stats.items()))


def _check_key(check: Any) -> Any:
    """A hashable identity of a cell check (its system check object where hashable)."""
    if check is None:
        return None
    inner = check.check
    try:
        hash(inner)
    except TypeError:
        inner = repr(inner)
    return (check.what, check.target, check.p_success, inner)


class FieldCache:
    """Graphs and fields per token profile, shared across the runs of one scenario."""

    def __init__(self, scenario: Scenario) -> None:
        self.scenario = scenario
        self._profiles: dict[tuple[Any, ...], Profile] = {}
        #: By the very token, pace, size and doors (tokens are frozen).
        self._profile_of: IdMemo[Profile] = IdMemo(65536)
        self._shared: dict[tuple[Any, ...], Profile] = {}
        #: The first profile of each set of edges (:meth:`_new_profile`).
        self._by_edges: dict[tuple[Any, ...], Profile] = {}
        #: Distance fields by compiled graph (:meth:`_distances`), shared by its profiles.
        self._by_csr: dict[tuple[Any, ...], list[tuple[tuple[np.ndarray, ...], _Distances]]] = {}
        #: Per (stats, pace, size, doors): the profiles built so far, each with what its
        #: graph build read of the token's state (:meth:`_profile_by_reads`).
        self._by_reads: dict[tuple[Any, ...], list[tuple[tuple[Any, ...], Profile]]] = {}
        #: The same, by the reads' shape (sorted (kind, name)) and then the values read
        #: with their types; ``_by_reads`` keeps those whose values are no key.
        self._by_shape: dict[tuple[Any, ...], dict[tuple[Any, ...], dict[Any, Profile]]] = {}
        #: Profiles with other tokens in the way, by (profile, blocked anchors): the few
        #: most recently used (tokens move, so these are rarely asked twice for long).
        self._blocked: IdMemo[Profile] = IdMemo(self.BLOCKED_KEPT, drop=1)
        #: Ground moves' ways (Simulation._ground_way), by what they read.
        self.ways: IdMemo[Any] = IdMemo(self.WAYS_KEPT)
        #: The starts of turns seen before (Simulation._turn_start): by every token and
        #: spec and the doors, and by what they read (the token itself, the other tokens'
        #: cells and profiles).
        self.starts: IdMemo[Any] = IdMemo(self.STARTS_KEPT)
        self.starts_by_reads: IdMemo[Any] = IdMemo(self.STARTS_KEPT)
        #: A turn's checks by the token, graph and cells they were asked for
        #: (Simulation._turn_rolls).
        self.rolls_same: IdMemo[Any] = IdMemo(self.STARTS_KEPT)
        #: A check's effect (Simulation._apply_check) by the token (kept by value), the
        #: check and the degree.
        self.applied: IdMemo[Token] = IdMemo(self.STARTS_KEPT)
        #: Turn plans (Simulation._plan_of) by the kept start they follow (None: a start
        #: not played from a plan).
        self.plans: IdMemo[TurnPlan | None] = IdMemo(self.STARTS_KEPT)
        #: The same plans by all that a plan and its outcomes read of its start
        #: (:meth:`plan_by_reads`), so that starts which differ only in where the other
        #: tokens stand share one plan and the outcomes kept in it.
        self.plans_by_reads: IdMemo[TurnPlan | None] = IdMemo(self.STARTS_KEPT)
        #: Ways down a field before any roll (:meth:`descent`), by profile, goal and tokens.
        self._descents: dict[tuple[Any, ...], tuple[Profile, Walk, int]] = {}
        #: Policies' pure parts, by the kept arrays they read (:meth:`threat`, ...).
        self._threats: IdMemo[np.ndarray] = IdMemo(self.POLICY_KEPT, drop=self.POLICY_KEPT // 2)
        #: Least turns kept as tokens move (:meth:`least_turns`).
        self._maps = ThreatMaps()
        self._exits: IdMemo[Cell | None] = IdMemo(self.POLICY_KEPT, drop=self.POLICY_KEPT // 2)
        self._exit_cells: tuple[list[Cell], np.ndarray] | None = None
        self._flee: IdMemo[Cell | None] = IdMemo(self.POLICY_KEPT, drop=self.POLICY_KEPT // 2)
        self._meets: IdMemo[Cell] = IdMemo(self.POLICY_KEPT, drop=self.POLICY_KEPT // 2)
        self._gaps: dict[tuple[Cell, int, Cell, int], int] = {}
        #: The cells' centres of a grid (:meth:`centres`), with the grid.
        self._centres: tuple[Grid, np.ndarray] | None = None
        self._turns_json: dict[tuple[MovementGraph, float], Any] = {}
        #: The scenario's tokens as every run starts them (:meth:`start_token`).
        self._start: IdMemo[Token] = IdMemo()
        self._stats_ids: dict[tuple[Any, ...], int] = {}
        self._stats_same: IdMemo[int] = IdMemo(self.SMALL_KEPT)
        self._sources: dict[str, Any] | None = None
        #: Rule hooks' results by what they read (:class:`HookMemo`), shared like the fields.
        self.hooks = HookMemo()
        #: The system's notes (RuleSystem.notes), and tokens less them by the token given
        #: (:meth:`less_notes`).
        self.notes: frozenset[str] = frozenset(scenario.system.notes)
        self._less_notes: IdMemo[Token] = IdMemo(self.NOTES_KEPT)
        #: The bytes of the fields and policy maps kept (:meth:`trim`).
        self.weight = FieldBytes()
        #: Fliers' flight rules by stats (engine.sim.flight), shared like the fields.
        self.flight: dict[Any, Any] = {}
        #: The scenario's solved game where it says ``solve: auto`` (engine.solve): the
        #: profiles it was solved for and the solution (None: it does not fit), made on
        #: the first policy's ask (engine.sim.view.solved_move).
        self.solved: tuple[tuple[Any, ...], Any] | None = None
        #: The map with doors opened or closed in play, by door state (``Simulation.doors``).
        self._models: dict[tuple[tuple[int, bool], ...], MapModel] = {}

    # ----------------------------------------------------------------- shipping

    def __getstate__(self) -> dict[str, Any]:
        """The whole warm cache, to ship to another process (Dask workers: engine.batch).

        Pickling keeps every object once, so what one memo shares with another stays
        shared; a memo kept by object identities (:class:`IdMemo`) keys itself again on
        arrival."""
        state = self.__dict__.copy()
        state["_blocked"] = IdMemo(self.BLOCKED_KEPT, drop=1)
        state["_maps"] = ThreatMaps()
        state["flight"] = {}
        return state

    def sources(self) -> dict[str, Any]:
        """:func:`log_sources` of the scenario, worked out for the first run (every run of
        this cache plays the map and scenario as loaded; read-only)."""
        if self._sources is None:
            self._sources = log_sources(self.scenario)
        return self._sources

    def stats_id(self, stats: Any) -> int:
        """A small number for the stats' :func:`stats_key_of` (equal stats, equal numbers):
        cache keys hash it at once."""
        same = self._stats_same.one(stats)  # the very stats object (tokens share it)
        if same is not None:
            return same
        key = stats_key_of(stats)
        got = self._stats_ids.get(key)
        if got is None:
            got = self._stats_ids[key] = len(self._stats_ids)
        self._stats_same.put_one(stats, None, got)
        return got

    def start_token(self, spec: TokenSpec, make: Any) -> Token:
        """The token ``make(spec)`` gives at the start of every run (tokens are immutable:
        validating the stats once serves every run), kept per spec of the scenario."""
        got = self._start.one(spec)
        if got is None:
            got = make(spec)
            self._start.put_one(spec, None, got)
        return got

    def model_for(self, doors: tuple[tuple[int, bool], ...] = ()) -> MapModel:
        """The scenario's map with ``doors`` ((door id, open) pairs) set; () = as drawn."""
        if not doors:
            return self.scenario.model
        got = self._models.get(doors)
        if got is None:
            got = self._models[doors] = with_doors(self.scenario.model, dict(doors))
        return got

    #: The bytes of per-cell arrays kept (:class:`FieldBytes`) beyond which :meth:`trim`
    #: drops them all: a small map's chase never comes near it, while a big map's fields
    #: (one per goal and profile) would otherwise grow without bound over a long batch.
    FIELD_BYTES = 256 << 20

    def trim(self, cells: Iterable[Cell | None] = ()) -> None:
        """Past :attr:`FIELD_BYTES` of fields and policy maps (:class:`FieldBytes`), drop
        them: every profile's fields, those shared between profiles, the policies' memos
        that hold them (threat maps, safe exits, flee cells, meeting cells) and the
        profiles with tokens in the way (each a copy of its graph's arrays). Each is a pure
        function of the map and the profile, made again when next asked: the runs are the
        same, only slower for a while (tested). The turns from ``cells`` (where
        the tokens stand: every policy asks for them again at once) stay where they weigh
        no more than the budget. Called at the start of every turn."""
        weight = self.weight
        if weight.used <= self.FIELD_BYTES:
            return
        keep, kept = frozenset(c for c in cells if c is not None), 0
        if keep:
            kept = sum(d.kept_bytes(keep) for ds in self._by_csr.values() for _, d in ds)
            if kept > self.FIELD_BYTES:
                keep, kept = frozenset(), 0
        for prof in self._shared.values():
            prof.forget_fields(keep)
        for memo in (self._threats, self._exits, self._flee, self._meets, self._blocked):
            memo.clear()
        weight.used = kept + self._maps.forget()

    def plan_by_reads(
        self, tid: str, start: tuple[Any, ...], make: Callable[[tuple[Any, ...]], Any]
    ) -> TurnPlan | None:
        """The turn plan of a kept ``start`` of ``tid``'s turn (``make``:
        Simulation._plan_of), kept in :attr:`plans` by the start itself and in
        :attr:`plans_by_reads` by what the plan and its outcomes (Simulation._plan_outcome)
        read of it: the mover (its token, kept one object per value), its pace, whether it
        rolls once a turn, its profile and its way (the profile walked, the walk and how
        many of its edges). Not the other tokens: where they stand decided the way, and a
        turn from a plan reads no more of them than its end's check of the goals, made
        every time. So two starts that differ only there share one plan, and every
        outcome learned for one serves the other."""
        token, pace, per_turn, prof, way = start
        objects = (token, prof) if way is None else (token, prof, way[0], way[1])
        plain = (tid, pace, per_turn, None if way is None else way[2])
        got = self.plans_by_reads.get(objects, plain, MISSING)
        if got is MISSING:
            got = make(start)
            self.plans_by_reads.put(objects, plain, got)
        self.plans.put_one(start, None, got)
        return got

    def forget_turns(self) -> None:
        """Drop what the runs learned of their turns, keeping the map's graphs, the
        profiles and their fields (with the walks kept on them): the turn starts, ways,
        descents, plans and their outcomes, the policies' choices, the rule hooks' results
        and the tokens kept by value. Each is a pure function of what it is kept by, made
        again when next asked: the runs after are the same (tested). What a batch's later
        runs cost once the fields are made, apart from what the fields cost
        (``benchmarks/bench_chase.py --split``)."""
        for memo in (
            self.starts,
            self.starts_by_reads,
            self.ways,
            self.plans,
            self.plans_by_reads,
            self.rolls_same,
            self.applied,
            self._threats,
            self._exits,
            self._flee,
            self._meets,
            self._less_notes,
        ):
            memo.clear()
        self._descents.clear()
        self._maps = ThreatMaps()
        self.hooks = HookMemo()

    #: How many threat maps and safe exits are kept (the oldest half goes beyond this).
    POLICY_KEPT = 4096

    #: How many turn arrays one part of a threat map takes (:meth:`threat`).
    THREAT_PART = 16

    def threat(self, times: list[np.ndarray], n: int | None = None) -> np.ndarray:
        """The elementwise least of ``times`` (turns from each pursuer), +inf where there are
        none: read-only, kept while its inputs (kept arrays: :meth:`Profile.turns_from`)
        are."""
        got = self._threats.get(times, n)
        if got is None:
            parts = times
            if len(times) > self.THREAT_PART:
                # By parts, each kept: a list that differs from one asked before in one
                # token's turns (the token that moved since) makes one part again, not all.
                k = self.THREAT_PART
                parts = [self.threat(times[i : i + k], n) for i in range(0, len(times), k)]
            if parts:
                # (np.minimum of the first two makes the new array: no copy first)
                out = parts[0].copy() if len(parts) == 1 else np.minimum(parts[0], parts[1])
                for t in parts[2:]:
                    np.minimum(out, t, out=out)
            else:
                grid = self.scenario.model.grid
                out = np.full(grid.width * grid.height if n is None else n, INF)
            out.setflags(write=False)
            self.weight.used += out.nbytes
            self._threats.put(times, n, out)
            got = out
        return got

    #: Nodes of a graph beyond which :meth:`least_turns` keeps its tokens' least turns as
    #: they move (:class:`~engine.sim.threat.ThreatMap`) instead of making each one's field.
    THREAT_NODES = 1 << 17

    def least_turns(
        self, tokens: list[tuple[str, Profile, Cell]], n: int | None = None
    ) -> np.ndarray:
        """:meth:`threat` of each token's ``prof.turns_from(cell)`` (``tokens``: id, profile,
        cell), bit for bit, read-only: on a graph of more than :data:`THREAT_NODES` nodes
        from a map kept as the tokens move (:class:`~engine.sim.threat.ThreatMaps`), no field
        made from any token's cell; else from their fields."""
        return self._maps.least(self, tokens, n)

    def safest_exit(
        self,
        mine: np.ndarray,
        threat: np.ndarray,
        prof: Profile | None = None,
        cell: Cell | None = None,
    ) -> Cell | None:
        """The exit cell reached soonest (``mine``: turns from the quarry) among those
        reached before every pursuer (``threat``), ties to the lower cell; None if none.
        With the quarry's profile ``prof`` and ``cell``, only one it reaches by a way whose
        every cell it reaches before every pursuer
        (:func:`~engine.policies.region.reached_safely`): an exit behind the pursuers is no
        way out."""
        got = self._exits.get((mine, threat), None, MISSING)
        if got is MISSING:
            exits, index = self._exit_index()
            m = mine[index].tolist()
            t = threat[index].tolist()
            ok = [True] * len(exits)
            # Only an exit it reaches first needs the safe way there searched: with none
            # (a quarry that flees), no search.
            ahead = any(mk < tk for mk, tk in zip(m, t, strict=True))
            if ahead and prof is not None and cell is not None:
                g = prof.graph
                start = g.grid.index(cell)
                inside = reached_safely(prof.indptr, prof.indices, g.n, start, mine < threat)
                ok = inside[index].tolist()
            best = None
            for k, c in enumerate(exits):
                if ok[k] and m[k] < t[k] and (best is None or (m[k], c) < best):
                    best = (m[k], c)
            got = None if best is None else best[1]
            self._exits.put((mine, threat), None, got)
        return got

    def flee_cell(
        self,
        g: MovementGraph,
        cell: Cell,
        mine: np.ndarray,
        threat: np.ndarray,
        taken: frozenset[Cell],
        crossing: tuple[Cell, Fraction] | None = None,
        prof: Profile | None = None,
    ) -> Cell | None:
        """:meth:`SimView.flee_cell`'s choice (:func:`flee_choice`) from ``mine`` (turns
        from the quarry, a kept array), ``threat`` (:meth:`threat`), the cells ``taken`` by
        other tokens, the quarry's ``crossing`` under way (its ``state.toward`` and
        ``progress``; None: none) and its profile ``prof`` (the regions it holds are
        searched on its graph: the one ``mine`` was made on, at the same scale, so ``mine``
        keys it); kept."""
        plain: Any = taken if crossing is None else (taken, crossing)
        if prof is None:
            plain = (plain, None)
        got = self._flee.get((mine, threat), plain, MISSING)
        if got is MISSING:
            centres = self.centres(g.grid)
            got = flee_choice(g, cell, mine, threat, taken, crossing, prof, centres)
            self._flee.put((mine, threat), plain, got)
        return got

    def centres(self, grid: Grid) -> np.ndarray:
        """:func:`cell_centres` of ``grid``, kept for the last grid asked (a scenario's
        profiles share its map's grid)."""
        kept = self._centres
        if kept is None or kept[0] is not grid:
            kept = self._centres = (grid, cell_centres(grid))
        return kept[1]

    #: How many capture distances and move times are kept (all go beyond this).
    SMALL_KEPT = 65536

    def gap(self, a: Cell, size_a: int, b: Cell, size_b: int) -> int:
        """:func:`engine.occupancy.gap_steps` on the scenario's grid, kept."""
        key = (a, size_a, b, size_b)
        got = self._gaps.get(key)
        if got is None:
            got = gap_steps(self.scenario.model.grid, a, size_a, b, size_b)
            if len(self._gaps) >= self.SMALL_KEPT:
                self._gaps.clear()
            self._gaps[key] = got
        return got

    def turns_json(self, g: MovementGraph, spent: float) -> Any:
        """A move event's ``turns``: ``spent`` ticks on ``g`` as exact turns, for JSON
        (an int or an ``"a/b"`` string), kept."""
        key = (g, spent)
        got = self._turns_json.get(key)
        if got is None:
            got = jsonable(g.turns(spent) if not g.euclid else Fraction(spent / g.denominator))
            if len(self._turns_json) >= self.SMALL_KEPT:
                self._turns_json.clear()
            self._turns_json[key] = got
        return got

    def meet(self, mine: np.ndarray, route: Route) -> Cell:
        """:meth:`SimView.intercept`'s cell: the first of ``route`` (the quarry's, kept
        in its field) that ``mine`` (turns from the pursuer, a kept array) reaches no later
        than the quarry, else its last; kept."""
        got = self._meets.get((mine, route))
        if got is None:
            first = np.flatnonzero(mine[route.index] <= route.turns)
            got = route.cells[int(first[0]) if len(first) else -1][0]
            self._meets.put((mine, route), None, got)
        return got

    def _exit_index(self) -> tuple[list[Cell], np.ndarray]:
        if self._exit_cells is None:
            grid = self.scenario.model.grid
            cells = list(self.scenario.exit_cells)
            self._exit_cells = (cells, np.array([grid.index(c) for c in cells], dtype=np.int64))
        return self._exit_cells

    #: How many profiles with tokens in the way are kept.
    BLOCKED_KEPT = 64

    def profile(
        self,
        token: Token,
        pace: str,
        size: int = 1,
        doors: tuple[tuple[int, bool], ...] = (),
        stats_key: int | None = None,
    ) -> Profile:
        """The graph and fields of a size-``size`` token (engine.occupancy: its anchors), on
        the map with ``doors`` set (:meth:`model_for`). ``stats_key``: :meth:`stats_id` of
        the token's stats, where the caller keeps it."""
        # Everything a rule hook may read, except where the token stands: rates and
        # checks can depend on conditions, encumbrance and counters (last round's speed).
        same = (pace, size, doors)
        got = self._profile_of.one(token, same)
        if got is not None:
            return got
        st = token.state
        skey = self.stats_id(token.stats) if stats_key is None else stats_key
        key = (skey, pace, st.mode, st.conditions, st.encumbrance, st.counters, size, doors)
        prof = self._profiles.get(key)
        if prof is None:
            if len(self._profiles) >= self.SMALL_KEPT:
                self._profiles.clear()  # a memo of _profile_by_reads: made again as asked
            prof = self._profiles[key] = self._profile_by_reads(token, skey, pace, size, doors)
        self._profile_of.put_one(token, same, prof)
        return prof

    def _profile_by_reads(
        self,
        token: Token,
        skey: int,
        pace: str,
        size: int,
        doors: tuple[tuple[int, bool], ...],
    ) -> Profile:
        """The profile of a state not seen before: the one of a state whose graph build read
        the same values (:class:`_Traced`: the same graph, so the same profile), else a new
        graph. Tokens whose states differ but whose terrain costs and checks come out the
        same share one graph and its fields (the costly part is the fields)."""
        where = (skey, pace, size, doors)
        st = token.state
        shapes = self._by_shape.setdefault(where, {})
        for shape, kept in shapes.items():
            values = _values(st, shape)
            try:
                got = kept.get((values, tuple(map(type, values))))
            except TypeError:  # a value that is no key: the reads kept below
                continue
            if got is not None:
                return got
        entries = self._by_reads.setdefault(where, [])
        for reads, prof in entries:
            if _same_reads(st, reads):
                return prof
        model = self.model_for(doors)
        system = self.scenario.system
        (graph, _), trace = self.hooks._traced_call(
            token, lambda tok: token_graph(model, system, tok, pace, size=size)
        )
        graph.token = _untrace(graph.token)
        graph.search = replace(graph.search, tokens=tuple(_untrace(t) for t in graph.search.tokens))
        signature = (
            graph.signature(),
            tuple(_check_key(c.check) for cs in graph.state_costs for c in cs),
        )
        shared = self._shared.get(signature)
        if shared is None:
            shared = self._shared[signature] = self._new_profile(graph)
        shape = tuple(sorted(trace.reads))
        values = tuple(trace.reads[r] for r in shape)
        try:
            shapes.setdefault(shape, {})[(values, tuple(map(type, values)))] = shared
        except TypeError:  # kept by its reads, compared one by one
            entries.append((tuple((k, n, v) for (k, n), v in trace.reads.items()), shared))
        return shared

    #: Ground moves' ways kept (:attr:`ways`; all of them go beyond this).
    WAYS_KEPT = 16384

    #: Turn starts kept (:attr:`starts`, :attr:`starts_by_reads`; all of them go beyond
    #: this).
    STARTS_KEPT = 65536

    #: Tokens kept less their notes (:meth:`less_notes`; all of them go beyond this).
    NOTES_KEPT = 65536

    def less_notes(self, token: Token) -> Token:
        """``token`` less the system's notes (:attr:`notes`: its note counters and note
        conditions), kept one object per value (:meth:`HookMemo.canon`); the token itself
        where it has none."""
        got = self._less_notes.one(token)
        if got is not None:
            return got
        names = self.notes
        st = token.state
        if any(c[0] in names for c in st.counters) or not names.isdisjoint(st.conditions):
            st = _plain(st)
            less = self.hooks.canon(
                token.with_state(
                    replace(
                        st,
                        counters=tuple(c for c in st.counters if c[0] not in names),
                        conditions=st.conditions - names,
                    )
                )
            )
        else:
            less = token
        self._less_notes.put_one(token, None, less)
        return less

    #: How many descents are kept (:meth:`descent`; all of them go beyond this).
    DESCENTS_KEPT = 65536

    def descent(
        self,
        prof: Profile,
        cells: tuple[Cell, ...],
        risk: bool,
        cell: Cell,
        occ: Occupancy,
    ) -> tuple[Profile, Walk, int]:
        """:func:`_descent_made`, kept by its arguments where the way needs no field
        with tokens taken away (those profiles are large and rarely asked twice: made
        every time, as :meth:`blocked_fields` keeps them)."""
        key = (prof, cells, risk, cell, occ.blocked, occ.no_stop)
        got = self._descents.get(key)
        if got is None:
            got = _descent_made(self, prof, cells, risk, cell, occ)
            if got[0] is prof:
                if len(self._descents) >= self.DESCENTS_KEPT:
                    self._descents.clear()
                self._descents[key] = got
        return got

    #: Whether a graph whose edges are those of one made already takes its compiled graph
    #: (:meth:`_new_profile`; off: each compiled and compared anew, the plain way).
    SHARE_EDGES = True

    def _new_profile(self, graph: MovementGraph) -> Profile:
        """``Profile(graph)`` with its distances (:meth:`_distances`), sharing the compiled
        arrays of the first profile of its compiled graph and scale. A graph whose
        signature less the denominator (its edges' ticks, not their turns: tokens at other
        speeds over the same costs), parity and diagonal rule (the map's grid is the
        scenario's) are those of a profile made already has that profile's CSR graph,
        distances and scale, as compiling and comparing it would give them, without the
        compiling (two full map passes and a digest of the arrays on a big map)."""
        key = (graph.signature()[1:], graph.n, graph.n_states, graph.parity_state, graph.euclid)
        kept = self._by_edges.get(key) if self.SHARE_EDGES else None
        prof = Profile(graph, csr=None if kept is None else kept.csr)
        prof.weight = self.weight
        if kept is None:
            shared, prof.scale = self._distances(prof)
            self._by_edges.setdefault(key, prof)
        else:
            assert kept.shared is not None
            shared, prof.scale = kept.shared, kept.scale
        prof.shared = shared
        first = shared.compiled.get(prof.scale)
        if first is None:
            shared.compiled[prof.scale] = prof.compiled()
        else:
            prof.share_compiled(first)
        return prof

    def _distances(self, prof: Profile) -> tuple[_Distances, float]:
        """The :class:`_Distances` of ``prof``'s compiled graph and its scale: one per
        distinct set of CSR arrays (compared whole, not only by digest), whole-number ticks
        taken over their greatest common divisor (the scale; else 1)."""
        import hashlib

        csr = prof.csr
        data, scale = csr.data, 1.0
        whole = _whole_ticks(data, csr.shape[0])
        if whole is not None and whole[1] > 1:
            data, scale = (whole[0] // whole[1]).astype(np.float64), float(whole[1])
        arrays = (csr.indptr, csr.indices, data)
        digest = hashlib.blake2b(digest_size=16)
        for a in arrays:
            digest.update(str((a.dtype, a.shape)).encode())
            digest.update(np.ascontiguousarray(a).data)  # (its bytes, not copied)
        key = (csr.shape, digest.digest())
        for kept, got in self._by_csr.get(key, ()):
            if all(
                np.array_equal(a, b) and a.dtype == b.dtype
                for a, b in zip(arrays, kept, strict=True)
            ):
                return got, scale
        got = _Distances()
        self._by_csr.setdefault(key, []).append((arrays, got))
        return got, scale

    def blocked_fields(self, prof: Profile, blocked: frozenset[Cell]) -> Profile:
        """``prof`` with ``blocked`` anchors taken away, on ``prof``'s own graph
        (:meth:`Profile.without`): for walking down fields (the few most recent kept)."""
        key = (blocked, "fields")
        got = self._blocked.take_one(prof, key)
        if got is None:
            got = prof.without(blocked)
            self.weight.used += got.compiled_bytes()
        self._blocked.put_one(prof, key, got)  # the newest
        return got

    def blocked_profile(self, prof: Profile, blocked: frozenset[Cell]) -> Profile:
        """``prof``'s token with ``blocked`` anchors taken away (tokens in the way)."""
        got = self._blocked.take_one(prof, blocked)
        if got is None:
            g = prof.graph
            got = Profile(MovementGraph(with_blocked(g.model, blocked), g.system, g.token, g.pace))
            got.weight = self.weight
            self.weight.used += got.compiled_bytes()
        self._blocked.put_one(prof, blocked, got)  # the newest
        return got


def _descent_made(
    fields: FieldCache,
    prof: Profile,
    cells: tuple[Cell, ...],
    risk: bool,
    cell: Cell,
    occ: Occupancy,
) -> tuple[Profile, Walk, int]:
    """:meth:`_descend`'s way before anything is rolled: the profile walked (``prof``,
    or it with the blocking tokens taken away), the turn's walk down the field to
    ``cells`` from ``cell``, and how many of its edges are walked (cut before a token
    in the way and back off an ally's cell). A pure function of its arguments."""
    # Settled only as far as this walk needs on a big graph (the same walk, edge for edge;
    # the field read within the block only).
    with walk_toward(prof, cells, prof.graph.node(cell), risk=risk) as target:
        blocked = occ.blocked - {cell}
        stop_at: frozenset[Cell] = frozenset()
        meets = bool(blocked) and route_meets(prof, target, cell, blocked)
        if not meets:
            walk = target.walk(prof, prof.graph.node(cell))
    if meets:
        stop_at = blocked & frozenset(cells)
        prof = fields.blocked_fields(prof, blocked - stop_at)
        walk = prof.field_to(cells, risk=risk).walk(prof, prof.graph.node(cell))
    k = len(walk.edges)
    if stop_at or occ.no_stop:
        k = trim_at(walk, stop_at, occ.no_stop)
    return prof, walk, k
