"""Fields settled only as far as one walk needs, on a big graph (:func:`field_toward`),
and the bounds their A* reads (engine/_kernel.c ``field_toward``, ``toward_kappa``)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager
from typing import Any

import numpy as np

from engine import kernel
from engine.grid import Cell
from engine.sim.fields import INF, Field, Profile


def field_toward(
    prof: Profile, cells: tuple[Cell, ...] | frozenset[Cell], node: int, *, risk: bool = False
) -> Field:
    """:meth:`Profile.field_to`'s field, settled only as far as the walk down it from ``node``
    needs: every step of that walk, its whole way, is the whole field's, edge for edge
    (engine/_kernel.c ``field_toward``, an A* toward ``node``), so :meth:`Field.walk`,
    :meth:`Field.enters` and :meth:`Field.step` from ``node`` and the nodes of its way
    answer as the whole field does; other nodes read inf. On a graph of more than
    :data:`Profile.TOWARD_NODES` nodes whose ticks are whole numbers, where the whole field is
    not kept already; else the whole field (:meth:`Profile.field_to`). Not kept: it serves
    walks from ``node``."""
    return _search(prof, cells, node, risk, None)[0]


class _Scratch:
    """:func:`walk_toward`'s arrays for one graph: the distances, inf everywhere between
    searches, and the nodes a search settled (the only ones it wrote)."""

    __slots__ = ("dist", "order", "busy")

    def __init__(self, size: int) -> None:
        self.dist = np.full(size, INF)
        self.order = np.empty(size, np.int32)
        self.busy = False

    def __reduce__(self) -> tuple[Any, ...]:
        """Pickled (with a field cache's compiled arrays) as its size only: made again."""
        return (_Scratch, (len(self.dist),))


class _Kept:
    """:func:`walk_toward`'s block on a field kept whole (a small graph's): the field itself,
    nothing to put back (no generator made and resumed for every walk)."""

    __slots__ = ("field",)

    def __init__(self, field: Field) -> None:
        self.field = field

    def __enter__(self) -> Field:
        return self.field

    def __exit__(self, *exc: object) -> None:
        return None


def walk_toward(
    prof: Profile, cells: tuple[Cell, ...] | frozenset[Cell], node: int, *, risk: bool = False
) -> AbstractContextManager[Field]:
    """:func:`field_toward`'s field, the same distances, for reads made within the block
    only: its distances are an array kept with ``prof``'s kernel arrays, inf between
    searches, the nodes the search settled put back to inf when the block ends, so a
    search costs the nodes it settles and no array of every node. The field must not
    outlive the block (its walks may: they hold no distances). Where the array is in use
    (a search within the block), :func:`field_toward`'s own; on a graph of at most
    :data:`Profile.TOWARD_NODES` nodes, the whole field, kept (:meth:`Profile.field_to`)."""
    g = prof.graph
    if g.n * g.n_states <= prof.TOWARD_NODES:  # (as _search would give it)
        return _Kept(prof.field_to(cells, risk=risk))
    return _walk_searched(prof, cells, node, risk)


@contextmanager
def _walk_searched(
    prof: Profile, cells: tuple[Cell, ...] | frozenset[Cell], node: int, risk: bool
) -> Iterator[Field]:
    """:func:`walk_toward` on a graph of more than :data:`Profile.TOWARD_NODES` nodes."""
    g = prof.graph
    size = g.n * g.n_states
    kept = prof._kernel_arrays
    held = kept.get("toward scratch")
    if held is None and size > prof.TOWARD_NODES and kernel.available():
        # (a smaller graph's field is whole, and kept)
        held = kept["toward scratch"] = (_Scratch(size),)
    if held is None or held[0].busy or len(held[0].dist) != size:
        yield field_toward(prof, cells, node, risk=risk)
        return
    scratch = held[0]
    scratch.busy = True
    try:
        try:
            field, settled = _search(prof, cells, node, risk, scratch)
        except BaseException:
            scratch.dist.fill(INF)  # (which nodes a failed search wrote is not known)
            raise
        try:
            yield field
        finally:
            scratch.dist[scratch.order[:settled]] = INF
    finally:
        scratch.busy = False


def _search(
    prof: Profile,
    cells: tuple[Cell, ...] | frozenset[Cell],
    node: int,
    risk: bool,
    scratch: _Scratch | None,
) -> tuple[Field, int]:
    """:func:`field_toward`'s field (into ``scratch``'s distances where given), and how
    many nodes the search settled into them (0: the whole field, not in ``scratch``)."""
    g = prof.graph
    size = g.n * g.n_states
    if size <= prof.TOWARD_NODES or not kernel.available() or kept_to(prof, cells, risk):
        return prof.field_to(cells, risk=risk), 0
    which = "rev_risk" if risk and prof.rev_risk is not prof.rev else "rev"
    indptr, indices, _, steps, step = prof._kernel_of(which)
    if steps is None:
        return prof.field_to(cells, risk=risk), 0
    kappa, span = toward_bound(prof, which)
    forward = prof._kernel_of("csr")[:3]
    idx = sorted({g.grid.index(c) for c in cells})
    sources = np.array([i + s * g.n for i in idx for s in range(g.n_states)], np.int64)
    dist = np.full(size, INF) if scratch is None else scratch.dist
    width = g.grid.width
    guide, goff = None, 0
    mark = prof.landmark
    if mark is not None and np.isfinite(mark.dist[node]):
        guide, goff = mark.dist, int(mark.dist[node] // step)
    settled = kernel.field_toward(
        (indptr, indices, steps),
        span,
        forward,
        sources,
        node,
        width,
        g.n,
        kappa,
        step,
        dist,
        guide,
        goff,
        None if scratch is None else scratch.order,
    )
    return Field(dist), settled


def kept_to(prof: Profile, cells: tuple[Cell, ...] | frozenset[Cell], risk: bool) -> bool:
    """Whether :meth:`Profile.field_to` of ``cells`` is kept (by this profile, or by the profiles
    of its compiled graph) and so costs no Dijkstra."""
    if (cells, risk) in prof._to_cells:
        return True
    idx = tuple(sorted(prof.graph.grid.index(c) for c in cells))
    if idx in (prof._to_risk if risk else prof._to):
        return True
    shared = prof.shared
    if shared is None:
        return False
    skey = (prof.scale, prof._risk_key(shared) if risk else None, idx)
    return skey in shared.to or (not risk and idx in shared.base_to)


def toward_bound(prof: Profile, which: str) -> tuple[int, int]:
    """For :func:`field_toward` on the ``which`` graph's kernel arrays: ``kappa``, the
    most whole steps no edge's steps fall below per cell of Chebyshev distance between
    its cells (0 where a jump outruns every step), and the most steps of an edge; kept
    with the arrays."""
    kept = prof._kernel_risk if which == "rev_risk" else prof._kernel_arrays
    key = "toward " + which
    got = kept.get(key)
    if got is None:
        indptr, indices, _, steps, _ = prof._kernel_of(which)
        kappa, span = kernel.toward_kappa(
            indptr, indices, steps, prof.graph.grid.width, prof.graph.n
        )
        got = kept[key] = (max(kappa, 0), span)
    return int(got[0]), int(got[1])
