"""tacgrid: a tactical grid movement simulator.

The engine runs headless. Only :mod:`engine.viewer` imports pygame, and nothing in the
engine imports the viewer.

``engine.__version__`` is the installed package's version (:func:`version`).
"""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING, Any


@functools.cache
def version() -> str:
    """This tacgrid's version, from its package metadata (``importlib.metadata``), which
    pyproject.toml's ``[project] version`` states: its one source. Run from a source tree
    that was never installed, pyproject.toml's own line beside this package, else
    ``"unknown"``."""
    from importlib.metadata import PackageNotFoundError
    from importlib.metadata import version as installed

    try:
        return installed("tacgrid")
    except PackageNotFoundError:
        return _source_version()


def _source_version() -> str:
    import os
    import tomllib

    path = os.path.join(
        os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "pyproject.toml"
    )
    try:
        with open(path, "rb") as fh:
            project = tomllib.load(fh).get("project", {})
    except (OSError, ValueError):
        return "unknown"
    found = project.get("version") if project.get("name") == "tacgrid" else None
    return found if isinstance(found, str) else "unknown"


if TYPE_CHECKING:
    __version__: str
else:

    def __getattr__(name: str) -> Any:
        # Worked out when first asked for: importlib.metadata is no part of a command's
        # start-up. (Hidden from type checkers, which would take any name from it.)
        if name == "__version__":
            return version()
        raise AttributeError(f"module 'engine' has no attribute {name!r}")
