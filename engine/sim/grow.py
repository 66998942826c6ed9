"""Fields to cells settled only as far as their walks need, grown when a walk needs more
(:class:`Grow`; engine/_kernel.c ``field_upto`` and ``field_spread_upto``).

Most fields to cells serve the walks down them from a node or two (a descent's turn): a
step from a node reads the distances of its out-edges' heads, and only a head nearer the
target than the node can be the step. So a search that stops once the walk's first node
is settled (its bucket done) gives every step of that walk, and of every walk from a node
settled, as the whole field does, edge for edge, ties and all: every node at most as far
as the farthest settled one holds its final distance, every other one a greater one, so
its edge's total is above the node's own distance by more than the least tick and is
neither taken nor tied (where the least tick clears :data:`MARGIN`: ``Field._reach``).
A walk from a node not settled yet grows the search on from where it stopped; anything
that reads the distances whole (``Field.dist``) grows it to the whole field, which is the
one a whole search gives, bit for bit (tests/test_fieldfast.py).

The seam: :func:`grow_of` gives a :class:`Grow`, or None where the kernel does not serve
(or :data:`ON` is off): the field is then searched whole at once, the plain way."""

from __future__ import annotations

from typing import Any, Protocol

import numpy as np

from engine import kernel

INF = float("inf")

#: Whether fields to cells are grown as their walks need (off: searched whole at once).
ON = True

#: A partly searched field serves steps only where the least forward tick is above this
#: times its farthest settled distance (at least 1): a step's total within ``1e-9`` of a
#: node's distance counts as down (engine.sim.fields.Field.step), so a head not settled
#: (further than that distance) must stay clear of it by more than that slack. Far below
#: every real graph's ticks; else the field is searched whole.
MARGIN = 1e-6


class Grown(Protocol):
    """A field's distances searched as far as asked: ``dist`` final up to ``limit`` (the
    farthest distance settled; -1.0: nothing searched yet, inf: the whole field), above
    it greater than the final distances, or inf (:class:`Grow`, :class:`Scaled`)."""

    dist: np.ndarray
    limit: float

    def reach(self, node: int) -> None:
        """Search on until ``node`` is settled (at once where it is)."""

    def whole(self) -> None:
        """Search on to the whole field."""


class Grow:
    """A field to some nodes (``sources``) searched by buckets over one compiled graph's
    kernel arrays, as far as asked: ``dist`` final up to ``limit`` (the farthest distance
    settled; -1.0: nothing searched yet, inf: the whole field), above it greater than the
    final distances or inf. Shared by the fields of the same distances (profiles of one
    compiled graph); pickled with its arrays (the compiled graph's own, which the field
    cache ships anyway)."""

    __slots__ = ("dist", "limit", "_arrays", "_bound", "_sources")

    def __init__(self, arrays: tuple[Any, ...], bound: float, sources: np.ndarray) -> None:
        self._arrays = arrays
        self._bound = bound
        self._sources = sources
        self.dist = np.full(len(arrays[0]) - 1, INF)
        self.limit = -1.0

    def reach(self, node: int) -> None:
        """Search on until ``node`` is settled (at once where it is)."""
        if not self.dist[node] <= self.limit:
            self._search(node)

    def whole(self) -> None:
        """Search on to the whole field."""
        if self.limit != INF:
            self._search(-1)

    def _search(self, stop: int) -> None:
        indptr, indices, data, steps, step = self._arrays
        if steps is None:
            self.limit = kernel.field_spread_upto(
                indptr, indices, data, self._bound, self._sources, self.dist, step, stop, self.limit
            )
        else:
            self.limit = kernel.field_upto(
                indptr,
                indices,
                steps,
                int(self._bound),
                self._sources,
                self.dist,
                step,
                stop,
                self.limit,
            )


class Scaled:
    """A :class:`Grow`'s field at another speed (``engine.sim.fields._Distances``' base
    fields): its distances over ``over`` times ``times``, exact on whole ticks, so the
    settled ones stay settled and the others above them; grown with it."""

    __slots__ = ("dist", "limit", "_base", "_over", "_times")

    def __init__(self, base: Grow, over: float, times: float) -> None:
        self._base = base
        self._over = over
        self._times = times
        self.dist = np.empty_like(base.dist)
        self.limit = -1.0
        self._take()

    def _take(self) -> None:
        """Its distances and limit from the base field's, as far as that is searched."""
        base = self._base
        np.divide(base.dist, self._over, out=self.dist)
        if self._times != 1.0:
            np.multiply(self.dist, self._times, out=self.dist)
        self.limit = -1.0 if base.limit < 0.0 else base.limit / self._over * self._times

    def reach(self, node: int) -> None:
        """Search on until ``node`` is settled (at once where it is)."""
        if not self.dist[node] <= self.limit:
            self._base.reach(node)
            self._take()

    def whole(self) -> None:
        """Search on to the whole field."""
        if self.limit != INF:
            self._base.whole()
            self._take()


def grow_of(arrays: tuple[Any, ...], bound: float, sources: list[int]) -> Grow | None:
    """A :class:`Grow` of the field from ``sources`` over ``arrays`` (a profile's
    ``_kernel_of``, with their :func:`~engine.sim.spread.edge_bound` ``bound``), nothing
    searched yet; None where :data:`ON` is off, the kernel does not run
    (:func:`engine.kernel.available`), or the arrays take the heap (no buckets)."""
    if not (ON and kernel.available()) or (arrays[3] is None and not arrays[4] > 0.0):
        return None
    return Grow(arrays, bound, np.asarray(sources, np.int64))
