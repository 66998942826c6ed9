"""engine/_kernel.c's module, where it was built (see setup.py), for the modules that use it:
the movement search (engine.search) and the csv layer reader (engine.tiled.layerdata).

None where the install found no C compiler or ``TACGRID_NO_KERNEL`` is set: each user then
runs its own fallback (numpy), which gives the same results, slower.
"""

from __future__ import annotations

import os
from typing import Any


def load_kernel() -> Any:
    """The compiled module, or None (not built, or ``TACGRID_NO_KERNEL`` set)."""
    if os.environ.get("TACGRID_NO_KERNEL"):
        return None
    try:
        from engine import _kernel  # type: ignore[attr-defined]
    except ImportError:
        return None
    return _kernel


#: The module (None: not built or turned off). Tests set a user's own reference to None.
KERNEL = load_kernel()
