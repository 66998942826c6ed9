"""A release that stands alone (issue 41): `tacgrid --version`, the version and digest in
every summary.json, `--resume` across versions, the extras and their one-line messages,
LICENSE, CHANGELOG.md and py.typed."""

from __future__ import annotations

import hashlib
import importlib.metadata
import json
import re
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

import engine
from engine import api, kernel
from engine.batch import run_batch
from engine.cli import main
from engine.errors import EXTRAS, MissingExtra
from engine.sweep import run_sweep

ROOT = Path(__file__).resolve().parent.parent
CHASE = str(ROOT / "scenarios" / "chase.yaml")
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
MOVE = "pursuer1.stats.move"

#: The modules each extra brings that the engine imports.
EXTRA_MODULES = {
    "analysis": ("pyarrow", "matplotlib", "pandas"),
    "cluster": ("dask", "distributed"),
}


def _chase_digest() -> str:
    return hashlib.sha256(Path(CHASE).read_bytes()).hexdigest()[:16]


def _one_line(err: str) -> str:
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    return lines[0]


# --------------------------------------------------------------------------- --version


def test_version_prints_the_package_version_and_the_kernel(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["--version"]) == 0
    out = capsys.readouterr().out
    assert out.startswith(f"tacgrid {importlib.metadata.version('tacgrid')} (Python ")
    assert out.count("\n") == 1
    assert ("compiled kernel active" in out) == kernel.available()


def test_version_json(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--version", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    missing = {"missing": list(kernel.missing())} if kernel.missing() else {}
    assert doc == {
        "version": importlib.metadata.version("tacgrid"),
        "python": ".".join(str(p) for p in sys.version_info[:3]),
        "kernel": kernel.state(),
        **missing,
    }


LAST = kernel.ENTRY_POINTS[-1]
SOURCE = "engine/_kernel.c"


@pytest.mark.parametrize(
    ("built", "missing", "enabled", "word", "says"),
    [
        (True, (), True, "active", "compiled kernel active"),
        (True, (), False, "off", "TACGRID_NO_KERNEL is set"),
        (
            True,
            ("field", LAST),
            True,
            "stale",
            f"kernel stale (built from an older {SOURCE}, without field, {LAST})",
        ),
        (True, (LAST,), False, "stale", f"without {LAST}): "),
        (False, (), True, "not built", "not built (no C compiler at install)"),
    ],
)
def test_version_says_the_kernels_state(
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    built: bool,
    missing: tuple[str, ...],
    enabled: bool,
    word: str,
    says: str,
) -> None:
    monkeypatch.setattr(kernel, "_BUILT", object() if built else None)
    monkeypatch.setattr(kernel, "_MISSING", missing)
    monkeypatch.setattr(kernel, "enabled", enabled)
    assert kernel.state() == word
    assert kernel.missing() == missing
    assert kernel.available() == (word == "active")
    assert main(["--version"]) == 0
    assert says in capsys.readouterr().out
    assert main(["--version", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["kernel"] == word
    assert doc.get("missing", []) == list(missing)


def test_version_takes_only_json(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--version", "--runs"]) == 2
    err = _one_line(capsys.readouterr().err)
    assert "--version" in err and "--json" in err


def test_the_version_has_one_source(monkeypatch: pytest.MonkeyPatch) -> None:
    """pyproject.toml states it; the package reads it from its metadata (no copy in the
    code), and a source tree never installed reads pyproject.toml itself."""
    stated = PYPROJECT["project"]["version"]
    assert "version" not in PYPROJECT["project"].get("dynamic", [])
    assert engine.version() == engine.__version__ == importlib.metadata.version("tacgrid")
    # An install older than pyproject.toml's version: reinstall (pip install -e .).
    assert engine.version() == stated
    for py in (ROOT / "engine").rglob("*.py"):
        text = py.read_text(encoding="utf-8")
        assert not re.search(r"__version__\s*=\s*['\"]", text), py
    engine.version.cache_clear()
    try:

        def not_installed(name: str) -> str:
            raise importlib.metadata.PackageNotFoundError(name)

        monkeypatch.setattr(importlib.metadata, "version", not_installed)
        assert engine.version() == stated
    finally:
        monkeypatch.undo()
        engine.version.cache_clear()
    assert engine.version() == importlib.metadata.version("tacgrid")


# --------------------------------------------------------------------------- summary.json


def test_a_batchs_summary_names_its_version_and_digest(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "b"
    assert main(["run", CHASE, "--runs", "20", "--out", str(out), "--no-plots", "--json"]) == 0
    printed = json.loads(capsys.readouterr().out)
    summary = json.loads((out / "summary.json").read_text())
    assert summary["version"] == printed["version"] == engine.version()
    assert summary["digest"] == printed["digest"] == _chase_digest()
    meta = json.loads((out / "batch.json").read_text())
    assert (meta["version"], meta["digest"]) == (engine.version(), _chase_digest())


def test_a_sweeps_summary_names_its_version_and_digest(tmp_path: Path) -> None:
    out = tmp_path / "s"
    doc = run_sweep(CHASE, vary=[f"{MOVE}=8,12"], runs=10, out_dir=str(out))
    summary = json.loads((out / "summary.json").read_text())
    spec = json.loads((out / "sweep.json").read_text())
    for d in (doc, summary, spec):
        assert (d["version"], d["digest"]) == (engine.version(), _chase_digest())
    for p in doc["points"]:  # and each point's batch
        point = json.loads((out / "points" / p["point"] / "summary.json").read_text())
        assert (point["version"], point["digest"]) == (engine.version(), _chase_digest())


# --------------------------------------------------------------------------- --resume


def _made_by(path: Path, version: str | None) -> None:
    doc = json.loads(path.read_text())
    if version is None:
        del doc["version"]
    else:
        doc["version"] = version
    path.write_text(json.dumps(doc))


@pytest.mark.parametrize("old", ["0.0.1", None])
def test_resume_of_another_versions_batch_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], old: str | None
) -> None:
    out = tmp_path / "b"
    args = ["run", CHASE, "--runs", "20", "--out", str(out), "--no-plots", "--quiet"]
    assert main(args) == 0
    _made_by(out / "batch.json", old)
    before = {p.name: p.read_bytes() for p in out.iterdir() if p.is_file()}
    capsys.readouterr()
    assert main([*args[:3], "30", *args[4:], "--resume"]) == 2
    err = _one_line(capsys.readouterr().err)
    assert f"not this tacgrid {engine.version()}" in err
    assert (f"made by tacgrid {old}" if old else "did not record it") in err
    assert "--force" in err and "--resume" in err and "--out" in err
    assert {p.name: p.read_bytes() for p in out.iterdir() if p.is_file()} == before
    # --force replaces it: this version plays every run.
    assert main([*args, "--force"]) == 0
    assert json.loads((out / "batch.json").read_text())["version"] == engine.version()
    # This version's own batch resumes as before (and extends).
    assert main([*args[:3], "30", *args[4:], "--resume"]) == 0
    assert json.loads((out / "summary.json").read_text())["runs"] == 30


def test_resume_and_force_together_are_still_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "b"
    args = ["run", CHASE, "--runs", "20", "--out", str(out), "--no-plots", "--quiet"]
    assert main(args) == 0
    _made_by(out / "batch.json", "0.0.1")
    assert main([*args, "--resume", "--force"]) == 2
    assert "give one" in _one_line(capsys.readouterr().err)


def test_resume_of_another_versions_sweep_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "s"
    args = ["sweep", CHASE, "--vary", f"{MOVE}=8,12", "--runs", "10", "--out", str(out)]
    args += ["--no-charts", "--quiet"]
    assert main(args) == 0
    _made_by(out / "sweep.json", "0.0.1")
    capsys.readouterr()
    assert main([*args, "--resume"]) == 2
    err = _one_line(capsys.readouterr().err)
    assert "sweep made by tacgrid 0.0.1" in err and f"tacgrid {engine.version()}" in err
    assert main([*args, "--force"]) == 0
    assert json.loads((out / "summary.json").read_text())["version"] == engine.version()


# --------------------------------------------------------------------------- extras


def _without(monkeypatch: pytest.MonkeyPatch, *names: str) -> None:
    """As if the modules were not installed: importing them raises ImportError."""
    for name in names:
        monkeypatch.setitem(sys.modules, name, None)


def _says_extra(err: str, extra: str) -> str:
    line = _one_line(err)
    assert re.search(f"(needs|need) the {extra} extra", line), line
    assert line.endswith(f"pip install 'tacgrid[{extra}]'")
    return line


@pytest.mark.parametrize("command", ["run", "sweep"])
def test_a_cluster_without_the_cluster_extra(
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    command: str,
) -> None:
    _without(monkeypatch, *EXTRA_MODULES["cluster"])
    if command == "run":  # a base install: the batch's own note on the analysis extra waits
        _without(monkeypatch, "pyarrow", "matplotlib")
    out = tmp_path / "o"
    args = [command, CHASE, "--runs", "10", "--scheduler", "tcp://127.0.0.1:9", "--out", str(out)]
    if command == "sweep":
        args += ["--vary", f"{MOVE}=8,12"]
    assert main(args) == 2
    assert _says_extra(capsys.readouterr().err, "cluster").startswith("tacgrid: --scheduler")
    assert not out.exists()  # said before anything was written
    with pytest.raises(MissingExtra) as err:
        run_batch(CHASE, runs=10, scheduler="tcp://127.0.0.1:9", out_dir=str(out))
    assert str(err.value).startswith("scheduler: needs the cluster extra")  # the API's word


def test_a_batch_without_the_analysis_extra(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """A batch runs on the base install: runs.jsonl, summary.json and the map of outcomes
    (pygame's); the Parquet table and the turns chart are left out, said in one line."""
    _without(monkeypatch, *EXTRA_MODULES["analysis"])
    out = tmp_path / "b"
    assert main(["run", CHASE, "--runs", "20", "--out", str(out), "--json"]) == 0
    captured = capsys.readouterr()
    line = _says_extra(captured.err, "analysis")
    assert line.startswith("tacgrid: runs.parquet and turns.png not written")
    summary = json.loads(captured.out)
    assert summary["runs"] == 20 and summary["plots"] == [str(out / "outcomes_map.png")]
    names = {p.name for p in out.iterdir()}
    assert {"runs.jsonl", "summary.json", "outcomes_map.png"} <= names
    assert not names & {"runs.parquet", "turns.png"}
    # --quiet: no line at all.
    assert main(["run", CHASE, "--runs", "20", "--out", str(out), "--force", "--quiet"]) == 0
    assert capsys.readouterr().err == ""
    # With the extra back, --resume writes what was left out, playing no run again.
    monkeypatch.undo()
    runs = (out / "runs.jsonl").read_bytes()
    assert main(["run", CHASE, "--out", str(out), "--resume", "--quiet"]) == 0
    assert (out / "runs.jsonl").read_bytes() == runs
    assert (out / "runs.parquet").is_file() and (out / "turns.png").is_file()


def test_only_the_turns_chart_needs_matplotlib(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    _without(monkeypatch, "matplotlib")
    out = tmp_path / "b"
    assert main(["run", CHASE, "--runs", "20", "--out", str(out)]) == 0
    line = _says_extra(capsys.readouterr().err, "analysis")
    assert line.startswith("tacgrid: turns.png not written: it needs")
    assert (out / "runs.parquet").is_file() and not (out / "turns.png").exists()
    # Without plots nothing is left out: nothing said.
    assert main(["run", CHASE, "--out", str(out), "--force", "--no-plots"]) == 0
    assert "analysis" not in capsys.readouterr().err


@pytest.mark.parametrize("module", ["pyarrow", "matplotlib"])
def test_a_sweep_without_the_analysis_extra(
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    module: str,
) -> None:
    _without(monkeypatch, module)
    out = tmp_path / "s"
    assert main(["sweep", CHASE, "--vary", f"{MOVE}=8,12", "--runs", "10", "--out", str(out)]) == 2
    assert _says_extra(capsys.readouterr().err, "analysis").startswith("tacgrid: sweep: needs")
    assert not out.exists()  # before any run
    if module == "matplotlib":  # without charts, the tables alone
        args = ["sweep", CHASE, "--vary", f"{MOVE}=8", "--runs", "10", "--out", str(out)]
        assert main([*args, "--no-charts", "--quiet"]) == 0
        assert (out / "points.parquet").is_file()
    else:
        with pytest.raises(MissingExtra, match=r"^sweep: needs the analysis extra"):
            api.sweep(CHASE, {MOVE: [8]}, runs=10, out_dir=str(out))


@pytest.fixture(scope="module")
def finished(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    base = tmp_path_factory.mktemp("finished")
    run_batch(CHASE, runs=20, out_dir=str(base / "b"))
    run_sweep(CHASE, vary=[f"{MOVE}=8,12"], runs=10, out_dir=str(base / "s"))
    return {"batch": base / "b", "sweep": base / "s"}


@pytest.mark.parametrize("kind", ["batch", "sweep"])
def test_report_charts_without_the_analysis_extra(
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    finished: dict[str, Path],
    kind: str,
) -> None:
    _without(monkeypatch, "matplotlib")
    folder = finished[kind]
    before = sorted(p.name for p in folder.iterdir())
    assert main(["report", str(folder), "--charts"]) == 2
    line = _says_extra(capsys.readouterr().err, "analysis")
    assert line.startswith("tacgrid: report --charts: needs")
    assert sorted(p.name for p in folder.iterdir()) == before
    assert main(["report", str(folder)]) == 0  # the table needs no extra


def test_the_apis_tables_and_figures_name_the_extra(
    monkeypatch: pytest.MonkeyPatch, finished: dict[str, Path]
) -> None:
    result = api.results(str(finished["sweep"]))
    assert isinstance(result, api.SweepResult)
    assert result.table().num_rows == 2
    _without(monkeypatch, *EXTRA_MODULES["analysis"])
    for call in (result.table, result.runs_table, result.figure):
        with pytest.raises(MissingExtra, match=r"needs the analysis extra"):
            call()
    batch = api.results(str(finished["batch"]))
    assert isinstance(batch, api.BatchResult)
    with pytest.raises(MissingExtra, match=r"^charts: needs the analysis extra"):
        batch.figure()
    chase_map = api.load_map(str(ROOT / "maps" / "chase.tmx"))
    with pytest.raises(MissingExtra, match=r"^a map's picture: needs the analysis extra"):
        chase_map.figure()


def test_the_engine_imports_on_the_base_install() -> None:
    """Every engine module imports with neither extra installed (the extras' modules
    blocked in a fresh interpreter): they are imported only where they are used."""
    blocked = [m for mods in EXTRA_MODULES.values() for m in mods]
    code = (
        "import importlib, pkgutil, sys\n"
        f"for name in {blocked!r}:\n"
        "    sys.modules[name] = None\n"
        "import engine\n"
        "walk = pkgutil.walk_packages(engine.__path__, 'engine.')\n"
        "names = [m.name for m in walk if not m.name.endswith('__main__')]\n"
        "for name in names:\n"
        "    importlib.import_module(name)\n"
        "print(len(names))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    assert int(done.stdout) > 100


def test_the_extras_in_pyproject() -> None:
    project = PYPROJECT["project"]
    extras = project["optional-dependencies"]

    def names(reqs: list[str]) -> set[str]:
        return {re.split(r"[\[<>=!~; ]", r, maxsplit=1)[0].lower() for r in reqs}

    base = names(project["dependencies"])
    for extra, modules in EXTRA_MODULES.items():
        assert extra in EXTRAS  # the messages name it
        assert all(any(m in r for r in extras[extra]) for m in modules), extra
        assert not set(modules) & base, f"{extra}'s modules are not in the base install"
        for module in modules:
            assert module in EXTRAS[extra]
    # [test] installs everything: both extras, and the checks CI runs.
    assert any(r.replace(" ", "") == "tacgrid[analysis,cluster]" for r in extras["test"])
    assert {"pytest", "ruff", "mypy", "import-linter", "hypothesis"} <= names(extras["test"])
    # The engine and the viewer on the base install.
    assert {"pygame-ce", "pytmx", "networkx", "numpy", "scipy", "pyyaml"} <= base
    # No upper bound held back for nothing measured.
    assert not [r for r in project["dependencies"] if "<" in r]


def test_the_readme_installs_the_test_extra() -> None:
    """The README's test command installs [test], which brings both extras: the whole
    suite runs after it. (Its two commands are not to change.)"""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert "python -m pip install -e . && tacgrid" in readme
    assert "python -m pip install -e '.[test]' && python -m pytest" in readme


# --------------------------------------------------------------------------- files


def test_license_is_mit() -> None:
    text = (ROOT / "LICENSE").read_text(encoding="utf-8")
    assert text.startswith("MIT License\n")
    assert "Copyright (c) 2026 the tacgrid authors" in text
    assert 'THE SOFTWARE IS PROVIDED "AS IS", WITHOUT WARRANTY OF ANY KIND' in text
    assert PYPROJECT["project"]["license"] == "MIT"


def test_py_typed_ships_with_the_package() -> None:
    assert (ROOT / "engine" / "py.typed").is_file()
    data = PYPROJECT["tool"]["setuptools"]["package-data"]
    assert "py.typed" in data["engine"]


def test_changelog_is_newest_first() -> None:
    text = (ROOT / "CHANGELOG.md").read_text(encoding="utf-8")
    issues = [int(n) for n in re.findall(r"^### .*?\(issue (\d+)", text, re.M)]
    assert issues[0] >= 41 and len(issues) >= 15
    assert issues == sorted(issues, reverse=True)
    sections = re.split(r"^### ", text, flags=re.M)[1:]
    assert all(re.search(r"^- ", s, re.M) for s in sections)  # each names its changes
    assert len(re.findall(r"^- ", text, re.M)) >= 80
