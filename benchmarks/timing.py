"""Shared timing for the benchmarks: the machines are noisy, so report the best and median."""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any


def best(fn: Callable[[], object], repeat: int) -> tuple[float, float]:
    """(quickest, median) of ``repeat`` runs of ``fn``, in seconds."""
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return min(times), statistics.median(times)


def compiled(root: Path) -> int:
    """Write the bytecode of ``root``'s engine (``engine/``) where it is missing or older
    than the source; returns how many modules were written. (``main.py``, like the
    references' own scripts, runs as a script: Python compiles it each time.)

    An installed package runs from bytecode (pip compiles a wheel's modules as it installs
    them; an editable checkout writes each on its first import). Where
    ``PYTHONDONTWRITEBYTECODE`` is set, as on the development machines, nothing is ever
    written, and every process of a benchmark that starts ``main.py`` would compile the
    modules changed since (about 0.1 s for the turn loop's), a cost no user pays twice and
    the references (installed packages) never pay."""
    import compileall
    import importlib.util

    sources = sorted((root / "engine").rglob("*.py"))

    def stamp(src: Path) -> int:
        pyc = Path(importlib.util.cache_from_source(str(src)))
        return pyc.stat().st_mtime_ns if pyc.exists() else -1

    before = {src: stamp(src) for src in sources}
    compileall.compile_dir(str(root / "engine"), quiet=1)
    return sum(1 for src in sources if stamp(src) != before[src])


def run_compiled(root: Path) -> None:
    """:func:`compiled`, saying so where it wrote anything."""
    fresh = compiled(root)
    if fresh:
        print(
            f"(compiled {fresh} engine module{'s' if fresh != 1 else ''} of {root} first, as "
            "an install does: this machine writes no bytecode on import)",
            flush=True,
        )


def child_json(script: str, args: list[str], root: Path) -> tuple[dict[str, Any] | None, str]:
    """Run ``script`` with ``args`` in a fresh Python process (``root`` on its path) and
    take the last line of its output that is a JSON object: what a benchmark measured in a
    process of its own. (None, the tail of its stderr) where it failed or printed none."""
    got = subprocess.run(
        [sys.executable, script, *args],
        capture_output=True,
        text=True,
        check=False,
        env={**os.environ, "PYTHONPATH": str(root)},
    )
    lines = [line for line in got.stdout.splitlines() if line.startswith("{")]
    if got.returncode or not lines:
        return None, got.stderr[-2000:]
    return json.loads(lines[-1]), ""
