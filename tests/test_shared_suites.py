"""The extra suites that read ../shared (tests/conftest.py): on a checkout with nothing beside
it they skip and the run says so in one line naming the folder; under TACGRID_REQUIRE_SHARED=1
(CI) a missing folder stops the run; where the folder is there, they run.

Each case runs pytest on a throwaway checkout: this suite's conftest.py and one test file."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import REQUIRE_SHARED

TESTS = """
import pytest
from conftest import CORPUS


@pytest.mark.corpus
def test_reads_the_corpus():
    assert (CORPUS / "map.tmx").read_text() == "a map"


@pytest.mark.corpus
@pytest.mark.parametrize("path", sorted(CORPUS.glob("*.tmx")))
def test_every_corpus_map(path):
    assert path.read_text() == "a map"


def test_needs_nothing_beside():
    assert True
"""


def _checkout(tmp_path: Path) -> Path:
    repo = tmp_path / "repo"
    (repo / "tests").mkdir(parents=True)
    shutil.copy(Path(__file__).with_name("conftest.py"), repo / "tests" / "conftest.py")
    (repo / "tests" / "test_x.py").write_text(TESTS)
    return repo


def _pytest(repo: Path, require: bool, *more: str) -> subprocess.CompletedProcess[str]:
    # Nothing of this run's own pytest reaches the throwaway one (under -n: xdist's worker
    # variables, which plugins read as "running on a worker").
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in (REQUIRE_SHARED, "PYTEST_ADDOPTS") and not k.startswith("PYTEST_XDIST")
    }
    if require:
        env[REQUIRE_SHARED] = "1"
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-rs", "-p", "no:cacheprovider", *more, "tests"],
        cwd=repo,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_a_checkout_with_nothing_beside_it_skips_the_corpus_in_one_line(tmp_path: Path) -> None:
    run = _pytest(_checkout(tmp_path), require=False)
    assert run.returncode == 0, run.stdout + run.stderr
    out = run.stdout
    assert "1 passed, 2 skipped" in out
    said = "../shared/tiled-corpus is not beside this checkout"
    assert [line for line in out.splitlines() if line.startswith("SKIPPED")] == [
        f"SKIPPED [2] tests/conftest.py:{_skip_line()}: {said} "
        f"(no folder {tmp_path / 'shared' / 'tiled-corpus'})"
    ]
    assert f"skipped 2 tests of the 'corpus' suite: {said}" in out.splitlines()
    assert "empty parameter set" not in out


def test_ci_stops_where_the_corpus_is_missing(tmp_path: Path) -> None:
    run = _pytest(_checkout(tmp_path), require=True)
    assert run.returncode == pytest.ExitCode.USAGE_ERROR, run.stdout + run.stderr
    errors = [line for line in run.stderr.splitlines() if line.strip()]
    assert errors == [
        f"ERROR: {REQUIRE_SHARED} is set but there is no {tmp_path / 'shared' / 'tiled-corpus'}: "
        f"put ../shared beside the checkout, or unset {REQUIRE_SHARED} to skip the tests that "
        "read it"
    ]
    assert "passed" not in run.stdout


@pytest.mark.parametrize("require", [False, True])
def test_the_corpus_suite_runs_where_the_corpus_is_beside(tmp_path: Path, require: bool) -> None:
    corpus = tmp_path / "shared" / "tiled-corpus"
    corpus.mkdir(parents=True)
    (corpus / "map.tmx").write_text("a map")
    repo = _checkout(tmp_path)
    run = _pytest(repo, require)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "3 passed" in run.stdout and "skipped" not in run.stdout
    # The corpus tests really run: a corpus that is not what they expect fails them.
    (corpus / "map.tmx").write_text("another map")
    run = _pytest(repo, require)
    assert run.returncode == pytest.ExitCode.TESTS_FAILED
    assert "2 failed, 1 passed" in run.stdout


def test_spread_over_workers_the_skips_are_said_in_one_line(tmp_path: Path) -> None:
    """The README's command spreads the tests over the cores (pytest-xdist's ``-n``): the
    workers skip, and the line naming the folder is still said, once."""
    run = _pytest(_checkout(tmp_path), False, "-n", "2")
    assert run.returncode == 0, run.stdout + run.stderr
    said = "../shared/tiled-corpus is not beside this checkout"
    assert "1 passed, 2 skipped" in run.stdout
    assert run.stdout.splitlines().count(f"skipped 2 tests of the 'corpus' suite: {said}") == 1


def test_spread_over_workers_ci_stops_before_any_worker_starts(tmp_path: Path) -> None:
    """Under ``-n`` CI's demand is checked before the workers collect: every missing
    folder is named (which suites the run selects is not known there)."""
    run = _pytest(_checkout(tmp_path), True, "-n", "2")
    assert run.returncode == pytest.ExitCode.USAGE_ERROR, run.stdout + run.stderr
    errors = [line for line in run.stderr.splitlines() if line.strip()]
    shared = tmp_path / "shared"
    assert errors == [
        f"ERROR: {REQUIRE_SHARED} is set but there is no {shared / 'tiled-corpus'} and "
        f"{shared / 'seeds'}: put ../shared beside the checkout, or unset {REQUIRE_SHARED} "
        "to skip the tests that read it"
    ]
    assert "passed" not in run.stdout


def _skip_line() -> int:
    """The line of tests/conftest.py that skips a test whose folder is missing."""
    lines = Path(__file__).with_name("conftest.py").read_text().splitlines()
    return next(i for i, line in enumerate(lines, 1) if "pytest.skip(reason)" in line)
