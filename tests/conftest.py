"""Shared test set-up: no display, no audio, and the extra suites that read ../shared.

The suite passes on a clone with nothing beside it: every map it needs is in the repository
or drawn by the tests (tests/tmxtext.py). Two extra suites read folders that live beside the
checkout and are not the project's to ship:

- ``@pytest.mark.corpus``: real Tiled files made elsewhere, ``../shared/tiled-corpus``;
- ``@pytest.mark.seeds``: the seed texts the rules are quoted from, ``../shared/seeds``.

Where such a folder is absent its tests skip, and the run ends with one line naming the
folder. With ``TACGRID_REQUIRE_SHARED=1`` (CI sets it) a missing folder stops the run instead.
"""

import os
import signal
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

os.environ.setdefault("SDL_VIDEODRIVER", "dummy")
os.environ.setdefault("SDL_AUDIODRIVER", "dummy")
os.environ.setdefault("PYGAME_HIDE_SUPPORT_PROMPT", "1")

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(Path(__file__).resolve().parent))
SHARED = ROOT.parent / "shared"
CORPUS = SHARED / "tiled-corpus"
SEEDS = SHARED / "seeds"

#: The environment variable under which a missing ../shared folder is an error, not a skip.
REQUIRE_SHARED = "TACGRID_REQUIRE_SHARED"

#: marker -> (the folder its tests read, what is in it)
EXTRA_SUITES = {
    "corpus": (CORPUS, "real Tiled files made outside the project"),
    "seeds": (SEEDS, "the seed texts the rules quote"),
}


@pytest.fixture(autouse=True)
def _ctrl_c_as_at_a_terminal() -> Iterator[None]:
    """Ctrl-C reaches every test as it reaches a command run at a terminal (Python's own
    handler), also where the suite itself was started as a shell's background job, which
    starts with SIGINT ignored: the stop tests send SIGINT and expect it heard."""
    old = signal.getsignal(signal.SIGINT)
    if old is signal.default_int_handler:
        yield
        return
    signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, old)


_ABSENT = pytest.StashKey[str]()


def _shown(folder: Path) -> str:
    return f"../shared/{folder.name}"


def _missing() -> dict[str, Path]:
    return {name: folder for name, (folder, _) in EXTRA_SUITES.items() if not folder.is_dir()}


def _required(folders: list[Path]) -> pytest.UsageError:
    return pytest.UsageError(
        f"{REQUIRE_SHARED} is set but there is no {' and '.join(map(str, folders))}: put "
        f"../shared beside the checkout, or unset {REQUIRE_SHARED} to skip the tests that read it"
    )


def _distributing(config: pytest.Config) -> bool:
    """Whether this process hands the tests to pytest-xdist's workers (``-n``) and so
    collects none itself."""
    return bool(getattr(config.option, "numprocesses", None)) and not hasattr(config, "workerinput")


def pytest_configure(config: pytest.Config) -> None:
    for name, (folder, what) in EXTRA_SUITES.items():
        config.addinivalue_line(
            "markers", f"{name}: reads {_shown(folder)} ({what}); skipped where it is absent"
        )
    # Under -n the workers collect, not this process: CI's demand is checked here, before
    # any worker starts, for every extra suite (which of them the run selects is not known).
    if _distributing(config) and os.environ.get(REQUIRE_SHARED, "") not in ("", "0"):
        missing = _missing()
        if missing:
            raise _required(list(missing.values()))


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    missing = _missing()
    wanted: dict[str, int] = {}
    for item in items:
        for name, folder in missing.items():
            if item.get_closest_marker(name) is not None:
                item.stash[_ABSENT] = (
                    f"{_shown(folder)} is not beside this checkout (no folder {folder})"
                )
                wanted[name] = wanted.get(name, 0) + 1
                break
    if wanted and os.environ.get(REQUIRE_SHARED, "") not in ("", "0"):
        raise _required([missing[name] for name in wanted])


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item: pytest.Item) -> None:
    # Raised here (not as a skip mark) so that `-rs` reports every such skip on one line.
    reason = item.stash.get(_ABSENT, None)
    if reason is not None:
        pytest.skip(reason)


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    # Counted from the skip reports, which reach this process from xdist's workers too.
    counts = dict.fromkeys(EXTRA_SUITES, 0)
    for report in terminalreporter.stats.get("skipped", []):
        reason = report.longrepr[2] if isinstance(report.longrepr, tuple) else ""
        for name, (folder, _) in EXTRA_SUITES.items():
            if f"{_shown(folder)} is not beside this checkout" in reason:
                counts[name] += 1
    for name, count in counts.items():
        if count:
            terminalreporter.write_line(
                f"skipped {count} test{'s' if count != 1 else ''} of the '{name}' suite: "
                f"{_shown(EXTRA_SUITES[name][0])} is not beside this checkout"
            )
