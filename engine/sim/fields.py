"""Distance fields, walks and routes on a compiled movement graph, and the profiles
that own them (:class:`Profile`)."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from engine.grid import Cell
from engine.movement import MovementGraph
from engine.sim.descend import steps_down
from engine.sim.grow import MARGIN, Grow, Grown, Scaled, grow_of
from engine.sim.kernelcsr import _kernel_csr
from engine.sim.spread import edge_bound, spread_field, whole_field
from engine.sim.walkplan import Walk

# --------------------------------------------------------------------------- fields


INF = float("inf")

#: Most nodes of a field whose distances :class:`Field` also keeps as a list of floats.
_LIST_NODES = 1 << 15

#: Steps down a field kept (:meth:`Field.step`) after which its own loop takes the
#: distances as a list of floats (0: at once, the plain way): before, its walks read the
#: array, as the kernel's steps down (engine.sim.descend) always do.
LIST_AFTER_STEPS = 48


class Field:
    """Distances (ticks) from every node to a target, and the best next step per node.

    Next steps are worked out the first time a node asks and kept: fields are shared by
    every run of a batch, so tokens walking the same ground reuse them. A field given a
    :class:`~engine.sim.grow.Grow` is searched as far as its walks need (the same steps,
    engine.sim.grow), and whole where its distances are read (:attr:`dist`).
    """

    __slots__ = ("_dist", "_grow", "_hops", "_steps", "_walks", "_enters", "_routes")

    def __init__(
        self, dist: np.ndarray, like: Field | None = None, grow: Grown | None = None
    ) -> None:
        """``like``: a field of the same distances on the same compiled graph (another
        profile's, :class:`_Distances`): its next steps and search are shared, its walks
        are not. ``grow``: the search whose ``dist`` this is, not yet whole."""
        self._dist = dist
        self._grow: Grown | None = like._grow if like is not None else grow
        self._hops: dict[int, tuple[int, float] | None] = {} if like is None else like._hops
        # The distances as Python floats for the walks' lookups (several times quicker than
        # numpy's one by one), made once step()'s own loop has taken LIST_AFTER_STEPS steps
        # (most fields are walked for a turn or two: a list of every node would cost more
        # than those reads; the kernel's steps down read the array itself); on a large
        # graph the array itself (a list of floats weighs four times the array).
        self._steps: Any = like._steps if like is not None else dist
        if not LIST_AFTER_STEPS and type(self._steps) is not list:
            self._list()
        self._walks: dict[int, Walk] = {}
        self._enters: dict[int, frozenset[int]] = {}
        self._routes: dict[tuple[int, int], Route] = {}

    @property
    def dist(self) -> np.ndarray:
        """Ticks from every node to the target, the whole field (searched on to the end
        first where it is grown as its walks need)."""
        grow = self._grow
        if grow is not None:
            grow.whole()
            self._grow = None
        return self._dist

    def scaled(self, over: float, times: float) -> Field:
        """A field of its distances over ``over`` times ``times`` (the same ways at another
        speed: exact on whole ticks), grown with this one where it is grown."""
        grow = self._grow
        if grow is None or grow.limit == INF or not isinstance(grow, Grow):
            base = self.dist / over
            return Field(base * times if times != 1.0 else base)
        scaled = Scaled(grow, over, times)
        return Field(scaled.dist, grow=scaled)

    def whole(self) -> bool:
        """Whether its distances are whole (searched to the end)."""
        return self._grow is None or self._grow.limit == INF

    def nbytes(self) -> int:
        """What its distances weigh (with the list of floats it keeps or makes once walked
        enough, where the graph is small enough for one)."""
        return self._dist.nbytes * (5 if self._dist.size <= _LIST_NODES else 1)

    def _list(self) -> None:
        """Take the distances as a list of floats for the walks' lookups, where the graph
        is small enough (:data:`_LIST_NODES`) and the field whole (a list is not grown)."""
        if self._dist.size <= _LIST_NODES and self.whole():
            self._steps = self._dist.tolist()

    def _reach(self, prof: Profile, node: int) -> None:
        """Where the field is grown as its walks need: on until ``node`` is settled, and
        whole where ``prof``'s least tick does not clear the settled distances by
        :data:`~engine.sim.grow.MARGIN` (a step could then tie with a node beyond)."""
        grow = self._grow
        if grow is not None:
            grow.reach(node)
            if grow.limit != INF and not prof.least_tick() > MARGIN * max(1.0, grow.limit):
                grow.whole()

    def walk(self, prof: Profile, node: int) -> Walk:
        """One turn's way down the field from ``node`` (:func:`plan_turn`), kept."""
        got = self._walks.get(node)
        if got is None:
            self._reach(prof, node)
            plan, after = plan_turn(prof, self, node)
            got = self._walks[node] = Walk(prof, plan, after)
        return got

    def route(self, prof: Profile, node: int, limit_turns: int) -> Route:
        """:meth:`Simulation._route` from ``node``, kept."""
        key = (node, limit_turns)
        got = self._routes.get(key)
        if got is None:
            self._reach(prof, node)
            got = self._routes[key] = Route(prof, self, node, limit_turns)
        return got

    def enters(self, prof: Profile, node: int) -> frozenset[int]:
        """Every cell index the whole way down the field from ``node`` enters (every turn of
        it, the cells a jump passes too), kept."""
        got = self._enters.get(node)
        if got is None:
            self._reach(prof, node)
            g = prof.graph
            out: set[int] = set()
            cur = node
            for _ in range(g.n * g.n_states):
                if self.left(cur) <= 0:
                    break
                step = self.step(prof, cur)
                if step is None:
                    break
                nxt = step[0]
                out.add(nxt % g.n)
                jump = g.jump_at.get((cur, nxt)) if g.jump_at else None
                if jump is not None:
                    out.update(p[0] for p in jump.parts)
                cur = nxt
            got = self._enters[node] = frozenset(out)
        return got

    def at(self, node: int) -> float:
        """The ticks from ``node`` to the target (a field grown as its walks need searched
        on only as far as ``node``)."""
        grow = self._grow
        if grow is not None:
            grow.reach(node)
        return float(self._dist[node])

    def left(self, node: int) -> float:
        got = self._steps[node]
        grow = self._grow
        if grow is not None and not got <= grow.limit:  # (not settled yet)
            grow.reach(node)
            got = self._steps[node]
        return got

    def step(self, prof: Profile, node: int) -> tuple[int, float] | None:
        """The out-edge ``(node, ticks)`` that goes furthest down the field, or None."""
        hops = self._hops
        if node in hops:
            return hops[node]
        self._reach(prof, node)
        if self._steps_down(prof, node):
            return hops[node]
        lists = prof.lists()
        if lists is None:
            return self._step_arrays(prof, node)
        # The arrays' own values as Python numbers (the same float sums and comparisons as
        # numpy's on a few neighbours, without its per-call cost); ties to the first edge,
        # as argmin.
        indptr, indices, data = lists
        lo, hi = indptr[node], indptr[node + 1]
        best: tuple[int, float] | None = None
        if lo < hi:
            if type(self._steps) is not list and len(hops) >= LIST_AFTER_STEPS:
                self._list()
            # (a list's floats, or the array's own: the same sums and comparisons)
            steps = self._steps
            k = lo
            low = data[lo] + steps[indices[lo]]
            for j in range(lo + 1, hi):
                total = data[j] + steps[indices[j]]
                if total < low:
                    low, k = total, j
            here = steps[node]
            if math.isfinite(low) and low <= here + 1e-9 * max(1.0, here):
                best = (indices[k], data[k])
        hops[node] = best
        return best

    def _steps_down(self, prof: Profile, node: int) -> bool:
        """Keep the steps down from ``node`` that the kernel takes, a walk of them at once
        (engine.sim.descend: the same steps as :meth:`step`'s own); False where it does
        not serve."""
        taken = steps_down(prof, self._dist, node)
        if taken is None:
            return False
        hops = self._hops
        at = node
        for hop in taken:
            hops[at] = hop
            if hop is None:
                break
            at = hop[0]
        return True

    def _step_arrays(self, prof: Profile, node: int) -> tuple[int, float] | None:
        """:meth:`step` on the arrays (a graph too large to hold as lists)."""
        lo, hi = prof.indptr[node], prof.indptr[node + 1]
        best: tuple[int, float] | None = None
        if lo < hi:
            nbrs = prof.indices[lo:hi]
            w = prof.data[lo:hi]
            total = w + self._dist[nbrs]
            k = int(np.argmin(total))
            here = self._dist[node]
            if np.isfinite(total[k]) and total[k] <= here + 1e-9 * max(1.0, here):
                best = (int(nbrs[k]), float(w[k]))
        self._hops[node] = best
        return best


class TurnPlan:
    """A ground turn from a kept start (:meth:`Simulation._plan_of`), as a run that keeps
    no log plays it: the checks its way rolls (``(first entry asking it, CellCheck)``, in
    roll order), the cells it walks (None: it stays), and per sequence of rolled
    ``(degree, success)`` what the turn made (:meth:`Simulation._plan_outcome`)."""

    __slots__ = ("rolls", "path", "ticks", "outcomes")

    #: Outcomes kept per plan (all of them go beyond this).
    OUTCOMES = 64

    def __init__(
        self,
        rolls: tuple[tuple[int, Any], ...],
        path: tuple[Cell, ...] | None,
        ticks: tuple[float, ...] = (),
    ):
        self.rolls = rolls
        self.path = path
        #: The ticks spent by each cell of ``path`` after the first is entered.
        self.ticks = ticks
        self.outcomes: dict[tuple[tuple[str, bool], ...], Any] = {}

    def keep(self, key: tuple[tuple[str, bool], ...], outcome: Any) -> None:
        if len(self.outcomes) >= self.OUTCOMES:
            self.outcomes.clear()
        self.outcomes[key] = outcome


class Route:
    """The cells a token passes descending a field (:meth:`Simulation._route`), with arrival
    ticks; ``index`` and ``turns`` as arrays (cell index, arrival in turns) for policies."""

    __slots__ = ("cells", "index", "turns")

    def __init__(self, prof: Profile, target: Field, node: int, limit_turns: int) -> None:
        g = prof.graph
        cell = g.cell_of(node)
        spent = 0.0
        out = [(cell, 0.0)]
        limit = limit_turns * g.denominator
        while spent <= limit and target.left(node) > 0:
            step = target.step(prof, node)
            if step is None:
                break
            node, w = step
            spent += w
            out.append((g.cell_of(node), spent))
        self.cells = out
        index = g.grid.index
        self.index = np.array([index(c) for c, _ in out], dtype=np.int64)
        den = g.denominator
        self.turns = np.array([t / den for _, t in out])


class FieldBytes:
    """What the per-cell arrays kept by one field cache's profiles and policies weigh, in
    bytes, counted as they are made (:meth:`FieldCache.trim`): distance fields (each with
    its list of floats where it keeps one, four times the array), fields from cells,
    turns, threat maps, the graphs of profiles with tokens in the way, and the arrays the
    C kernel reads (those of the profiles kept for good are counted once)."""

    __slots__ = ("used",)

    def __init__(self) -> None:
        self.used = 0


#: A profile's arrays counted nowhere (a profile made outside a field cache).
_UNCOUNTED = FieldBytes()


class Profile:
    """One token profile's graph and the distance fields computed on it (cached)."""

    #: Where the bytes of the fields it keeps are counted (its field cache's).
    weight: FieldBytes = _UNCOUNTED

    def __init__(
        self, graph: MovementGraph, csr: Any = None, penalty: np.ndarray | None = None
    ) -> None:
        self.graph = graph
        if csr is None:
            csr = graph.csr()
        self.csr = csr
        self.rev = csr.T.tocsr()
        self.indptr = csr.indptr
        self.indices = csr.indices
        self.data = csr.data
        n = graph.n
        # Risk-weighted reverse graph: entering a check cell costs its expected delay
        # (1 - p) turns more, so fleeing tokens prefer the sure way when it is close.
        if penalty is None:
            penalty = np.zeros(n * graph.n_states)
            for k, cost in enumerate(graph.costs):
                if cost.check is not None:
                    cells = np.nonzero(graph.model.terrain_ids.ravel() == k)[0]
                    extra = float((1 - cost.check.p_success) * graph.denominator)
                    for s in range(graph.n_states):
                        penalty[cells + s * n] = extra
        self.penalty = penalty
        if penalty.any():
            self.rev_risk = self.rev.copy()
            self.rev_risk.data = self.rev_risk.data + np.repeat(penalty, np.diff(self.rev.indptr))
        else:  # no check anywhere: the risk-weighted graph is the reverse graph itself
            self.rev_risk = self.rev
        self._to: dict[tuple[int, ...], Field] = {}
        self._to_risk: dict[tuple[int, ...], Field] = {}
        #: The same fields by the cells as asked (a tuple or a frozenset of them).
        self._to_cells: dict[tuple[Any, bool], Field] = {}
        self._from: dict[Cell, np.ndarray] = {}
        self._turns_from: dict[Cell, np.ndarray] = {}
        self._lists: tuple[list[int], list[int], list[float]] | None = None
        #: The compiled arrays as engine/_kernel.c reads them (:meth:`_dijkstra`).
        self._kernel_arrays: dict[str, tuple[Any, ...]] = {}
        #: The same for the risk-weighted reverse graph (its own where penalties differ).
        self._kernel_risk: dict[str, tuple[Any, ...]] = {}
        #: The distances of every profile on the same compiled graph (FieldCache), or None,
        #: and this profile's ticks over those it keeps (:class:`_Distances`).
        self.shared: _Distances | None = None
        self.scale = 1.0
        #: On a big graph, the newest whole field to one cell (not risk-weighted): its
        #: exact distances bound engine.sim.toward's and claim_turns' searches.
        self.landmark: Field | None = None
        self._risk_id: tuple[_Distances, np.ndarray, int] | None = None

    def __getstate__(self) -> dict[str, Any]:
        """Pickled without the arrays as lists or for the kernel (made again on use)."""
        state = self.__dict__.copy()
        state["_lists"] = None
        state["_kernel_arrays"] = {}
        state["_kernel_risk"] = {}
        state["landmark"] = None  # (a guide only: found again on the next field to a cell)
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        """Unpickled (a field cache shipped to a Dask worker): a profile that shares its
        compiled arrays with the first of its graph (:meth:`share_compiled`; pickling keeps
        each array once) shares that profile's kernel arrays again, as they are kept with
        the graph's distances (``_Distances.compiled``), instead of each making its own."""
        self.__dict__.update(state)
        self.__dict__.setdefault("_kernel_risk", {})
        kept = getattr(self.__dict__.get("shared"), "compiled", None)  # (not yet built: None)
        first = None if kept is None else kept.get(self.scale)
        if first is not None and first[0] is self.csr:
            self._kernel_arrays = first[2]
            if first[3] is self.penalty:
                self._kernel_risk = first[5]

    def compiled(self) -> tuple[Any, ...]:
        """Its compiled arrays, as :meth:`share_compiled` takes them (no profile in it: a
        field cache keeps them without a reference cycle)."""
        return (
            self.csr,
            self.rev,
            self._kernel_arrays,
            self.penalty,
            self.rev_risk,
            self._kernel_risk,
        )

    def share_compiled(self, compiled: tuple[Any, ...]) -> None:
        """Take another profile's compiled arrays (:meth:`compiled`) for this profile's equal
        ones: the forward and reverse graphs and the arrays the C kernel reads, and the
        risk-weighted graph too where the penalties are equal. The other profile is one of
        the same compiled graph at the same scale (:meth:`FieldCache._distances` compared
        the arrays) whose token's state differs in what the graph does not show (a check's
        odds): on a big map that is tens of megabytes a profile."""
        csr, rev, kernel, penalty, rev_risk, kernel_risk = compiled
        self.csr, self.rev = csr, rev
        self.indptr, self.indices, self.data = csr.indptr, csr.indices, csr.data
        self._kernel_arrays = kernel
        if np.array_equal(self.penalty, penalty):
            self.penalty, self.rev_risk, self._kernel_risk = penalty, rev_risk, kernel_risk
        elif not self.penalty.any():
            self.rev_risk = rev

    #: Most edges of a graph :meth:`lists` gives as lists (beyond: None, numpy serves).
    LIST_EDGES = 1 << 18

    def lists(self) -> tuple[list[int], list[int], list[float]] | None:
        """The compiled arrays (``indptr``, ``indices``, ``data``) as lists, made once; None
        for a graph of more than :data:`LIST_EDGES` edges."""
        if self._lists is None:
            if len(self.data) > self.LIST_EDGES:
                return None
            self._lists = (self.indptr.tolist(), self.indices.tolist(), self.data.tolist())
        return self._lists

    def without(self, blocked: frozenset[Cell]) -> Profile:
        """The fields of this profile's token with ``blocked`` anchors taken away (tokens in
        the way), on the same graph: its edges into those anchors (and the jumps over or
        from them) are dropped from the compiled arrays, nothing is rebuilt.

        What the graph of the map with those anchors blocked (engine.occupancy.with_blocked)
        would give everywhere a token can be: the same edges between the other cells, in the
        same order and with the same weights. (That graph keeps some steps *out of* a
        blocked anchor; no way reaches one, so no distance elsewhere depends on them.)"""
        from scipy.sparse import csr_array

        g = self.graph
        n = g.n
        size = n * g.n_states
        grid = g.grid
        idx = sorted({grid.index(c) for c in blocked if grid.in_bounds(c)})
        bad = np.zeros(n, dtype=bool)
        bad[idx] = True
        csr = self.csr
        keep = ~bad[csr.indices % n]
        rows = np.repeat(np.arange(size), np.diff(csr.indptr))
        if g.jumps:
            gone = set(idx)
            for j in g.jumps:
                if j.src % n in gone or any(p[0] in gone for p in j.parts):
                    keep &= ~((rows == j.src) & (csr.indices == j.dst))
        indptr = np.zeros(size + 1, dtype=np.int64)
        np.cumsum(np.bincount(rows[keep], minlength=size), out=indptr[1:])
        indices = csr.indices[keep]
        masked = csr_array(
            (csr.data[keep], indices, indptr.astype(indices.dtype)), shape=(size, size)
        )
        made = Profile(g, masked, self.penalty)
        made.weight = self.weight
        return made

    def field_to(self, cells: tuple[Cell, ...] | frozenset[Cell], *, risk: bool = False) -> Field:
        """Ticks from every node to the nearest of ``cells`` (any parity), cached."""
        got = self._to_cells.get((cells, risk))
        if got is not None:
            return got
        g = self.graph
        idx = tuple(sorted(g.grid.index(c) for c in cells))
        cache = self._to_risk if risk else self._to
        got = cache.get(idx)
        if got is None:
            shared = self.shared
            like = None
            if shared is not None:
                skey = (self.scale, self._risk_key(shared) if risk else None, idx)
                like = shared.to.get(skey)
            if like is not None:  # another profile's on the same graph: the same distances
                got = cache[idx] = Field(like._dist, like)
            else:
                got = self._field_made(idx, risk)
                cache[idx] = got
                self.weight.used += got.nbytes()
                if shared is not None:
                    shared.keep_to(skey, got)
        if len(self._to_cells) >= 65536:
            self._to_cells.clear()
        self._to_cells[(cells, risk)] = got
        if not risk and len(idx) == 1 and g.n * g.n_states > self.TOWARD_NODES:
            self.landmark = got
        return got

    def _field_made(self, idx: tuple[int, ...], risk: bool) -> Field:
        """:meth:`field_to`'s field to the cell indexes ``idx`` that no profile of its
        compiled graph keeps at its scale: the same ways at another speed, times the scale,
        else a field of its own (grown as its walks need where it can)."""
        g = self.graph
        shared = self.shared
        kept = None if shared is None or risk else shared.base_to.get(idx)
        if kept is not None:  # the same ways at another speed: times the scale
            return kept[1].scaled(kept[0], self.scale)
        nodes = [i + s * g.n for i in idx for s in range(g.n_states)]
        got = self._field_of("rev_risk" if risk else "rev", nodes)
        if shared is not None and not risk:
            shared.keep_base_to(idx, (self.scale, got))
        return got

    def compiled_bytes(self) -> int:
        """What its compiled arrays weigh (forward, reverse and risk-weighted graphs)."""
        graphs = (self.csr, self.rev) + (() if self.rev_risk is self.rev else (self.rev_risk,))
        return int(self.penalty.nbytes) + sum(
            m.data.nbytes + m.indices.nbytes + m.indptr.nbytes for m in graphs
        )

    def forget_fields(self, keep: frozenset[Cell] = frozenset()) -> None:
        """Drop every field kept (:meth:`FieldCache.trim`) but the turns from the cells of
        ``keep``; they are made again when asked."""
        kept = {c: a for c, a in self._turns_from.items() if c in keep}
        self.landmark = None
        for memo in (self._to, self._to_risk, self._to_cells, self._from, self._turns_from):
            memo.clear()
        self._turns_from.update(kept)
        if self.shared is not None:
            self.shared.forget(keep)

    def turns_from(self, cell: Cell) -> np.ndarray:
        """:meth:`field_from` in turns (ticks / the denominator), cached (read-only).

        The same array for every profile on the same compiled graph at the same scale and
        denominator (:class:`_Distances`: equal ticks, so equal turns): the policies' memos
        kept by the arrays' ids (threat maps, safe exits) then serve all of them."""
        got = self._turns_from.get(cell)
        if got is None:
            shared = self.shared
            key = (self.scale, self.graph.denominator, cell)
            got = None if shared is None else shared.turns.get(key)
            if got is None:
                ticks = self._from.get(cell)
                if ticks is None:
                    # Where a graph's whole fields are kept (TOWARD_NODES), its ticks over
                    # the scale too, for the profiles at the other speeds on it; on a
                    # bigger graph the turns only.
                    g = self.graph
                    ticks = self._dist_from(cell, keep=g.n * g.n_states <= self.TOWARD_NODES)
                got = ticks / self.graph.denominator
                got.setflags(write=False)
                self.weight.used += got.nbytes
                if shared is not None:
                    shared.keep_turns(key, got)
            self._turns_from[cell] = got
        return got

    def _field_of(self, which: str, sources: list[int]) -> Field:
        """The field from ``sources`` over the ``which`` arrays (:meth:`_dijkstra`'s), grown
        as its walks need where engine.sim.grow serves, else searched whole."""
        from engine import kernel

        if which == "rev_risk" and self.rev_risk is self.rev:
            which = "rev"  # (one graph: one set of kernel arrays)
        if kernel.available():
            grow = grow_of(self._kernel_of(which), self._edge_bound(which), sources)
            if grow is not None:
                return Field(grow.dist, grow=grow)
        return Field(self._dijkstra(which, sources))

    def least_tick(self) -> float:
        """The least ticks of an edge of its graph (inf: none), kept with its kernel
        arrays."""
        kept = self._kernel_arrays
        got = kept.get("least")
        if got is None:
            got = kept["least"] = (float(self.data.min()) if self.data.size else INF,)
        return float(got[0])

    def _dijkstra(self, which: str, sources: list[int]) -> np.ndarray:
        """Ticks from the nearest of ``sources`` to every node over this profile's ``csr``,
        ``rev`` or ``rev_risk`` arrays (``which``): scipy's Dijkstra (``min_only``), or the
        same distances bit for bit from engine/_kernel.c where it is built, several times
        sooner (a chase makes hundreds of these fields)."""
        from engine import kernel

        if which == "rev_risk" and self.rev_risk is self.rev:
            which = "rev"  # (one graph: one set of kernel arrays)
        matrix = getattr(self, which)
        if not kernel.available():
            from scipy.sparse.csgraph import dijkstra

            return dijkstra(matrix, indices=sources, min_only=True)
        arrays = self._kernel_of(which)
        dist = np.full(matrix.shape[0], INF)
        indptr, indices, data, steps, step = arrays
        bound = self._edge_bound(which)
        src = np.asarray(sources, np.int64)
        if steps is None:  # (step: the bucket width, engine.sim.spread; 0.0: none)
            spread_field(indptr, indices, data, src, dist, step, bound)
        else:
            whole_field(indptr, indices, data, steps, float(step), src, dist, bound)
        return dist

    def _edge_bound(self, which: str) -> float:
        """:func:`~engine.sim.spread.edge_bound` of the ``which`` arrays (:meth:`_kernel_of`),
        kept with them."""
        kept = self._kernel_risk if which == "rev_risk" else self._kernel_arrays
        key = "bound " + which
        got = kept.get(key)
        if got is None:
            arrays = self._kernel_of(which)
            got = kept[key] = (edge_bound(arrays[2], arrays[3]),)
        return float(got[0])

    def _kernel_of(self, which: str) -> tuple[Any, ...]:
        """The ``csr``, ``rev`` or ``rev_risk`` arrays (``which``) as engine/_kernel.c reads
        them (:func:`_kernel_csr`), made once (shared with the profiles of the same compiled
        graph, :meth:`share_compiled`)."""
        kept = self._kernel_risk if which == "rev_risk" else self._kernel_arrays
        arrays = kept.get(which)
        if arrays is None:
            arrays = kept[which] = _kernel_csr(getattr(self, which))
            self.weight.used += sum(a.nbytes for a in arrays if isinstance(a, np.ndarray))
        return arrays

    #: Nodes of a graph beyond which a descent's field is settled only as far as its walk
    #: needs (:func:`engine.sim.toward.field_toward`); a smaller graph's whole field is made
    #: once and serves every later walk down it.
    TOWARD_NODES = 1 << 17

    def _risk_key(self, shared: _Distances) -> int:
        """``shared.risk_key`` of this profile's penalties, kept while they and ``shared``
        are the same objects (each ask would hash the whole array again)."""
        got = self._risk_id
        if got is None or got[0] is not shared or got[1] is not self.penalty:
            got = self._risk_id = (shared, self.penalty, shared.risk_key(self.penalty))
        return got[2]

    def _dist_from(self, cell: Cell, keep: bool = True) -> np.ndarray:
        """Ticks from ``cell`` (best parity), from the shared fields where they hold them;
        ``keep``: kept there for the other profiles on the same graph (:meth:`turns_from`
        keeps its turns instead: a field a token's cell, twice the bytes)."""
        shared = self.shared
        scale = self.scale
        if shared is not None:
            base = shared.from_.get(cell)
            if base is not None:  # the same ways, perhaps at another speed
                if scale == 1.0:
                    return base
                got = base * scale
                got.setflags(write=False)
                self.weight.used += got.nbytes
                return got
        g = self.graph
        dist = self._dijkstra("csr", [g.node(cell)])
        got = dist.reshape(g.n_states, g.n).min(axis=0)
        got.setflags(write=False)
        if keep:
            self.weight.used += got.nbytes
        if shared is not None and keep:
            base = got if scale == 1.0 else got / scale
            base.setflags(write=False)
            shared.keep_from(cell, base)
            if base is not got:
                self.weight.used += base.nbytes
        return got

    def field_from(self, cell: Cell) -> np.ndarray:
        """Ticks from ``cell`` (parity 0) to every cell (best parity), per cell index.

        Cached: a map that does not change gives the same field in every run, so a batch
        soon answers most of these from memory (at most one field per cell).
        """
        got = self._from.get(cell)
        if got is None:
            got = self._from[cell] = self._dist_from(cell)
        return got


class _Distances:
    """The distance fields of one compiled graph, shared by every profile on it
    (FieldCache): profiles of states whose costs agree but whose checks' odds differ (a D6
    token one penalty die down) have the same fields to cells (risk-weighted ones where
    their penalties agree too) and from cells. Dijkstra on the same arrays gives the same
    distances: sharing them changes nothing but the time.

    A graph whose ticks are whole numbers is kept by its ticks over their greatest common
    divisor (a profile's ``scale``): a token at another speed, every tick three times as
    long, has the same shortest ways, and its distances are the kept ones times its scale,
    exactly (sums of whole numbers far below 2**53 are exact in floating point, in
    Dijkstra's sums as in this product). Fields to cells are kept per scale (``to``: their
    next steps name the profile's own ticks), and by their whole-number distances over the
    scale (``base_to``: the first field made of those cells, not risk-weighted, with its
    scale, divided by it when asked, so that a field is kept once, not twice); fields from
    cells by the latter (``from_``)."""

    __slots__ = ("to", "base_to", "from_", "turns", "_risks", "compiled")

    #: Fields kept (all of them go beyond this).
    KEPT = 4096

    def __init__(self) -> None:
        self.to: dict[tuple[Any, ...], Field] = {}
        self.base_to: dict[tuple[int, ...], tuple[float, Field]] = {}
        self.from_: dict[Cell, np.ndarray] = {}
        #: Turns from cells (Profile.turns_from) by (scale, denominator, cell).
        self.turns: dict[tuple[Any, ...], np.ndarray] = {}
        self._risks: dict[bytes, tuple[np.ndarray, int]] = {}
        #: The compiled arrays of the first profile made on this graph, per scale: the
        #: others at that scale share them (:meth:`Profile.share_compiled`).
        self.compiled: dict[float, tuple[Any, ...]] = {}

    def forget(self, keep: frozenset[Cell] = frozenset()) -> None:
        """Drop every field kept (:meth:`FieldCache.trim`) but the turns from the cells of
        ``keep``."""
        self.to.clear()
        self.base_to.clear()
        self.from_.clear()
        kept = {k: a for k, a in self.turns.items() if k[2] in keep}
        self.turns.clear()
        self.turns.update(kept)

    def kept_bytes(self, keep: frozenset[Cell]) -> int:
        """What the turns from the cells of ``keep`` weigh (what :meth:`forget` keeps)."""
        return sum(a.nbytes for k, a in self.turns.items() if k[2] in keep)

    def risk_key(self, penalty: np.ndarray) -> int:
        """A small number for a profile's risk penalties (equal arrays, equal numbers)."""
        raw = penalty.tobytes()
        got = self._risks.get(raw)
        if got is None:
            got = self._risks[raw] = (penalty, len(self._risks))
        return got[1]

    def keep_to(self, key: tuple[Any, ...], got: Field) -> None:
        if len(self.to) >= self.KEPT:
            self.to.clear()
        self.to[key] = got

    def keep_base_to(self, idx: tuple[int, ...], dist: tuple[float, Field]) -> None:
        if len(self.base_to) >= self.KEPT:
            self.base_to.clear()
        self.base_to[idx] = dist

    def keep_from(self, cell: Cell, got: np.ndarray) -> None:
        if len(self.from_) >= self.KEPT:
            self.from_.clear()
        self.from_[cell] = got

    def keep_turns(self, key: tuple[Any, ...], got: np.ndarray) -> None:
        if len(self.turns) >= self.KEPT:
            self.turns.clear()
        self.turns[key] = got


def plan_turn(
    prof: Profile, target: Field, node: int
) -> tuple[list[tuple[int, int, float]], tuple[int, int, float] | None]:
    """The edges ``(node, next, ticks)`` down ``target`` that this turn's time pays for
    (before any check is rolled), and the edge after them, where the way goes on."""
    g = prof.graph
    budget = float(g.denominator)
    spent = 0.0
    plan: list[tuple[int, int, float]] = []
    while target.left(node) > 0:
        step = target.step(prof, node)
        if step is None:
            break
        nxt, w = step
        # A jump is one edge: it is made whole, in a turn that starts with it if needs be.
        if spent + w > budget + 1e-9 and not (spent == 0 and (node, nxt) in g.jump_at):
            jumps = (node, nxt) in g.jump_at
            return plan, None if jumps else (node, nxt, w)
        plan.append((node, nxt, w))
        spent += w
        node = nxt
    return plan, None


def route_meets(prof: Profile, target: Field, cell: Cell, blocked: frozenset[Cell]) -> bool:
    """Whether the whole way down ``target`` from ``cell`` (every turn of it) enters a
    blocked anchor. If not, that way is also a best one with the tokens in the way (it
    only loses edges), and the shared open field serves."""
    g = prof.graph
    index = g.grid.index
    return not target.enters(prof, g.node(cell)).isdisjoint(index(c) for c in blocked)


def trim_at(walk: Walk, stop_at: frozenset[Cell], no_stop: frozenset[Cell]) -> int:
    """How many edges of ``walk`` the trim of a plan keeps."""
    cells = walk.cells
    k = len(cells)
    if stop_at:
        k = next((i for i in range(k) if cells[i] in stop_at), k)
    while k and cells[k - 1] in no_stop:
        k -= 1
    return k
