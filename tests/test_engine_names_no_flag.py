"""The engine below the command line names no command-line flag (issue 37).

An engine error, note or stop names the argument it is about by a role (``token``,
``out``, ``resume``, ...: engine.errors); the command line names each role by its flag
(engine.cli.common.FLAGS), and a Python caller reads the role's own word. A new message
that spells ``--flag`` in the engine fails here; the files still allowed one say why.
"""

from __future__ import annotations

import ast
import pickle
import re
from pathlib import Path

import pytest

from engine import api, systems
from engine.batch import run_batch
from engine.batch.sweep import parse_vary
from engine.cli import FLAGS, main
from engine.errors import ArgumentError, ScenarioError, StatError, TacgridError, WriteError
from engine.safeio import check_target

ROOT = Path(__file__).resolve().parent.parent
CHASE = str(ROOT / "scenarios" / "chase.yaml")
#: The front ends, which name flags (and say what to type) by design.
FRONT_ENDS = ("engine/cli/", "engine/report/", "engine/viewer/")
FLAG = re.compile(r"(?<![\w-])--[a-z][a-z-]*")

#: Files below the front ends whose string literals still spell flags, each with the flags
#: it may spell and why. A flag not listed here, in any file, fails the test.
ALLOWED: dict[str, tuple[set[str], str]] = {
    "engine/eventlog.py": (
        {"--run-seed", "--log", "--force", "--text", "--json"},
        "a log's hints quote the `run`/`replay` command lines that make or read it",
    ),
    "engine/systems/d6.py": (
        {"--distance", "--terrain"},
        "describe()'s march_terrain_checks.how is the `stats` command line it documents "
        "(the `systems --json` contract)",
    ),
}


def _docstrings(tree: ast.AST) -> set[int]:
    """The ids of the docstring nodes in ``tree`` (they may show a command line)."""
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            first = node.body[0] if node.body else None
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                found.add(id(first.value))
    return found


def flags_spelled() -> dict[str, set[str]]:
    """Each engine file below the front ends -> the flags its string literals spell
    (f-strings' text included; docstrings and comments are not literals the user reads)."""
    found: dict[str, set[str]] = {}
    for path in sorted((ROOT / "engine").rglob("*.py")):
        rel = path.relative_to(ROOT).as_posix()
        if rel.startswith(FRONT_ENDS):
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        skip = _docstrings(tree)
        for node in ast.walk(tree):
            if isinstance(node, ast.Constant) and isinstance(node.value, str):
                if id(node) not in skip:
                    found.setdefault(rel, set()).update(FLAG.findall(node.value))
    return {rel: flags for rel, flags in found.items() if flags}


def test_the_engine_spells_no_flag_but_where_allowed() -> None:
    unexpected = {
        rel: sorted(flags - ALLOWED.get(rel, (set(), ""))[0])
        for rel, flags in flags_spelled().items()
        if flags - ALLOWED.get(rel, (set(), ""))[0]
    }
    assert unexpected == {}, "name the argument by a role (engine.errors), not by its flag"
    for rel, (_flags, why) in ALLOWED.items():
        assert (ROOT / rel).exists() and why, rel


def test_the_scan_sees_a_flag_in_an_f_string(tmp_path: Path) -> None:
    """The scan has teeth: a flag in an f-string's text is found, a docstring's is not."""
    code = 'def f(n):\n    """Use --runs."""\n    raise ValueError(f"--runs {n}: bad")\n'
    tree = ast.parse(code)
    skip = _docstrings(tree)
    spelled = {
        m
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in skip
        for m in FLAG.findall(node.value)
    }
    assert spelled == {"--runs"}


def _raised(call: object) -> TacgridError:
    with pytest.raises(TacgridError) as err:
        call()  # type: ignore[operator]
    return err.value


@pytest.mark.parametrize(
    ("call", "api_text", "cli_text"),
    [
        (
            lambda: api.system("d6").token("move=oops"),
            "token move='oops': expected a number",
            "--token move='oops': expected a number",
        ),
        (
            lambda: api.system("d6").token("nosuch=1"),
            "token nosuch: d6 has no stat 'nosuch'",
            "--token nosuch: d6 has no stat",
        ),
        (
            lambda: systems.create("d6", {"nosuch": 1}),
            "set nosuch: d6 has no setting",
            "--set nosuch: d6 has no setting",
        ),
        (
            lambda: systems.create("d6", {"wild_one": "bad"}),
            "set d6 wild_one='bad': expected",
            "--set d6 wild_one='bad': expected",
        ),
        (lambda: systems.create("d7"), "system d7: unknown rule system", "--system d7: unknown"),
        (
            lambda: run_batch(CHASE, runs=0, out_dir="unused"),
            "runs 0: expected a whole number >= 1",
            "--runs 0: expected a whole number >= 1",
        ),
        (
            lambda: run_batch(CHASE, runs=1, out_dir="unused", resume=True, force=True),
            "resume and force: give one",
            "--resume and --force: give one",
        ),
        (
            lambda: parse_vary("nonsense"),
            "vary nonsense: expected NAME=V1,V2,..., e.g. vary pursuer1",
            "--vary nonsense: expected NAME=V1,V2,..., e.g. --vary pursuer1",
        ),
        (
            lambda: check_target("/dev/null", "log"),
            "log /dev/null: not a regular file",
            "--log /dev/null: not a regular file",
        ),
    ],
)
def test_an_api_call_reads_no_flag(call: object, api_text: str, cli_text: str) -> None:
    err = _raised(call)
    assert "--" not in str(err) and str(err).startswith(api_text)
    assert err.naming(FLAGS).startswith(cli_text)
    kept = pickle.loads(pickle.dumps(err))  # as a batch worker's error arrives
    assert (type(kept), str(kept), kept.naming(FLAGS)) == (type(err), str(err), err.naming(FLAGS))


def test_an_existing_batch_is_refused_naming_its_remedies(tmp_path: Path) -> None:
    out = tmp_path / "b"
    run_batch(CHASE, runs=2, seed=1, out_dir=str(out))
    err = _raised(lambda: run_batch(CHASE, runs=2, seed=1, out_dir=str(out)))
    assert str(err) == (
        f"out {out}: holds a batch already; add resume to complete or extend it, force to "
        "replace it, or give another out"
    )
    assert err.naming(FLAGS) == (
        f"--out {out}: holds a batch already; add --resume to complete or extend it, --force "
        "to replace it, or give another --out"
    )


def test_user_text_with_braces_stays_as_given(tmp_path: Path) -> None:
    """A path or value with ``{}`` in it is text, never a role to fill."""
    odd = tmp_path / "{resume}"
    odd.write_text("")
    err = _raised(lambda: run_batch(CHASE, runs=1, out_dir=str(odd)))
    assert str(err) == f"out {odd}: is a file, not a folder; give a folder"
    assert err.naming(FLAGS) == f"--out {odd}: is a file, not a folder; give a folder"
    stat = _raised(lambda: api.system("d6").token({"move": "{out}"}))
    assert isinstance(stat, StatError) and "'{out}'" in stat.naming(FLAGS)


def test_a_wrapped_error_keeps_the_roles_it_names() -> None:
    inner = ArgumentError(role="set", given="x", problem="no such setting")
    outer = inner.within("chase.yaml: system/settings: ", ScenarioError)
    assert isinstance(outer, ScenarioError)
    assert str(outer) == "chase.yaml: system/settings: set x: no such setting"
    assert outer.naming(FLAGS) == "chase.yaml: system/settings: --set x: no such setting"
    assert inner.detail() == "x: no such setting"


def test_a_write_error_is_still_an_os_error_after_pickling() -> None:
    err = WriteError(role="out", given="/x", problem="cannot write (full)", errno=28, reason="full")
    kept = pickle.loads(pickle.dumps(err))
    assert isinstance(kept, OSError) and (kept.errno, kept.strerror) == (28, "full")
    assert kept.naming(FLAGS) == "--out /x: cannot write (full)"


def test_the_command_line_still_names_flags(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["stats", "--system", "d6", "--token", "move=oops"]) == 2
    assert capsys.readouterr().err.startswith("tacgrid: --token move='oops': expected")
