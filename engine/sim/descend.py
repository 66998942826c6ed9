"""The steps down a distance field, taken a walk at a time by the kernel (engine/_kernel.c
``descend``) for :meth:`engine.sim.fields.Field.step`.

A chase's turns walk down fresh fields: each first step from a node looks at its out-edges
in Python (a few microseconds), and a walk takes a dozen of them. The kernel takes the
same steps, by the same double sums and comparisons (the least of ticks plus the head's
distance, ties to the first edge, within 1e-9 of the node's own distance), from a node
down to where the field ends, in one call; the field keeps them as it keeps its own.

The seam: :func:`steps_down` gives them, or None where the kernel is not built (or
:data:`ON` is off): :meth:`Field.step` then takes each in Python, the plain way
(tests/test_chaserate.py holds the two equal)."""

from __future__ import annotations

from typing import Any

import numpy as np

from engine import kernel

#: Whether :func:`steps_down` asks the kernel (off: every step taken by Field.step's loop).
ON = True
#: The most steps a call takes (a walk goes on by another call where it is longer).
MOST = 64


def steps_down(prof: Any, dist: np.ndarray, node: int) -> list[tuple[int, float] | None] | None:
    """The steps down ``dist`` (a field of ``prof``'s graph, float64) from ``node``: each
    ``(next node, ticks)`` as :meth:`Field.step` takes it from the node before (the first
    from ``node``), a last None where a node has none; on while the next node's distance
    is above 0, at most :data:`MOST`. None where the kernel does not serve."""
    if not (
        ON
        and kernel.available()
        and isinstance(dist, np.ndarray)
        and dist.dtype == np.float64
        and dist.flags.c_contiguous
    ):
        return None
    indptr, indices, data = prof._kernel_of("csr")[:3]
    return kernel.descend(indptr, indices, data, dist, node, MOST)
