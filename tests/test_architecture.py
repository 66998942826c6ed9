"""The engine's layering (pyproject.toml's [tool.importlinter]) holds, and has teeth.

The layers run one way: the command line on top, then the viewer, the reports, the batch,
the simulation, ... down to the grid and the errors. A lower module importing a higher one
(lazily inside a function or not) is a wrong-way arrow; import-linter's contracts reject
it, and no engine modules import each other in a circle.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import grimp

ROOT = Path(__file__).resolve().parent.parent


def _lint_imports(cwd: Path) -> subprocess.CompletedProcess[str]:
    """Run import-linter on the ``engine`` package found first from ``cwd``."""
    code = (
        "import sys; from importlinter.cli import lint_imports; "
        "sys.exit(lint_imports(config_filename='pyproject.toml', no_cache=True, no_logo=True))"
    )
    env = {**os.environ, "PYTHONPATH": str(cwd)}
    return subprocess.run(
        [sys.executable, "-c", code],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_import_contracts_are_kept() -> None:
    done = _lint_imports(ROOT)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "0 broken" in done.stdout


def _engine_copy(tmp_path: Path) -> Path:
    """The engine's sources and the contracts, copied to ``tmp_path``."""
    shutil.copytree(
        ROOT / "engine",
        tmp_path / "engine",
        ignore=shutil.ignore_patterns("__pycache__", "*.pyc"),
    )
    shutil.copy(ROOT / "pyproject.toml", tmp_path / "pyproject.toml")
    return tmp_path


def test_a_wrong_way_import_breaks_the_contracts(tmp_path: Path) -> None:
    root = _engine_copy(tmp_path)
    grid = root / "engine" / "grid.py"
    # A lazy import counts: the arrow points the wrong way whether or not it runs at import.
    grid.write_text(
        grid.read_text(encoding="utf-8")
        + "\n\ndef _wrong_way() -> None:\n    import engine.cli  # noqa: F401\n",
        encoding="utf-8",
    )
    done = _lint_imports(root)
    assert done.returncode != 0, done.stdout
    assert "BROKEN" in done.stdout
    assert "engine.grid -> engine.cli" in done.stdout


def test_pygame_outside_the_viewer_breaks_the_contracts(tmp_path: Path) -> None:
    root = _engine_copy(tmp_path)
    sim = root / "engine" / "sim" / "loop.py"
    sim.write_text(
        sim.read_text(encoding="utf-8") + "\n\nimport pygame  # noqa: E402, F401\n",
        encoding="utf-8",
    )
    done = _lint_imports(root)
    assert done.returncode != 0, done.stdout
    assert "engine.sim.loop -> pygame" in done.stdout


def import_cycles(package: str = "engine") -> list[list[str]]:  # noqa: C901
    """The strongly connected components (more than one module) of ``package``'s imports."""
    graph = grimp.build_graph(package, cache_dir=None)
    modules = sorted(graph.modules)
    edges = {m: sorted(graph.find_modules_directly_imported_by(m)) for m in modules}
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:  # Tarjan's algorithm
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in edges[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for m in modules:
        if m not in index:
            visit(m)
    return found


def test_no_import_cycles_among_engine_modules() -> None:
    cycles = import_cycles()
    described = []
    graph = grimp.build_graph("engine", cache_dir=None)
    for component in cycles:
        arrows = [
            f"{a} -> {b}"
            for a in component
            for b in sorted(graph.find_modules_directly_imported_by(a))
            if b in component
        ]
        described.append(", ".join(arrows))
    assert not cycles, "import cycles: " + "; ".join(described)


def test_the_cycle_finder_finds_a_cycle(tmp_path: Path, monkeypatch) -> None:
    pkg = tmp_path / "cyclepkg_arch"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("", encoding="utf-8")
    (pkg / "low.py").write_text("def f():\n    from cyclepkg_arch import high\n", encoding="utf-8")
    (pkg / "high.py").write_text("from cyclepkg_arch import low\n", encoding="utf-8")
    (pkg / "other.py").write_text("from cyclepkg_arch import low\n", encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    assert import_cycles("cyclepkg_arch") == [["cyclepkg_arch.high", "cyclepkg_arch.low"]]
