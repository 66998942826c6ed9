"""Shared tools of the fidelity suites.

The fidelity suites are written from the seed texts (../shared/seeds) and RULES.md alone, by
someone who has not read the system's module: each expected number quotes the seed line it comes
from. They talk to tacgrid only through its command line contract (CONTRACT.md), in process.
"""

from __future__ import annotations

import contextlib
import io
import json
import sys
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import tmxtext  # noqa: E402  (tests/tmxtext.py)

from engine.cli import main  # noqa: E402


def tacgrid(*args: str) -> tuple[int, str, str]:
    """Run `tacgrid ARGS` in this process: (exit status, stdout, stderr)."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        rc = main([str(a) for a in args])
    return rc, out.getvalue(), err.getvalue()


def tacgrid_json(*args: str, expect_rc: int = 0) -> Any:
    """`tacgrid ARGS --json` parsed; fails the test with stderr when the status is not expected."""
    rc, out, err = tacgrid(*args, "--json")
    assert rc == expect_rc, f"tacgrid {' '.join(map(str, args))} exited {rc}: {err.strip()}"
    return json.loads(out)


@pytest.fixture
def draw(tmp_path: Path):
    """draw(rows, **tmx_kwargs) -> path of a .tmx map drawn from text (see tests/tmxtext.py)."""
    counter = iter(range(10**6))

    def _draw(rows: list[str], **kwargs: Any) -> str:
        path = tmp_path / f"map{next(counter)}.tmx"
        tmxtext.write(path, rows, **kwargs)
        return str(path)

    return _draw
