"""Hardening (issue 13): every command's errors, fuzzed inputs, determinism, crash safety.

* Every command, given a bad argument of each kind, answers with exit status 2, nothing on
  stdout and one line on stderr that names the argument or file (CONTRACT.md).
* Mutated Tiled maps and scenarios either load or stop with the project's own one-line
  error; random command lines never raise out of ``main``.
* A fixed seed gives the same bytes: rolls of every system, batches of every shipped
  scenario (any worker count, any hash seed), event logs that replay to the final state.
* A dying worker is retried or reported, never dropped; summary.json is never half there.

The fuzz tests are bounded (``max_examples``, a per-example alarm); set
``TACGRID_FUZZ_EXAMPLES`` to a larger number to fuzz longer by hand.
"""

from __future__ import annotations

import contextlib
import copy
import functools
import io
import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
import tracemalloc
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import tmxtext
import yaml
from conftest import CORPUS, ROOT
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engine import systems
from engine.batch import read_runs, run_batch, run_chunk, run_seeds
from engine.cli import COMMAND_NAMES, FLAGS, build_parser, main
from engine.errors import MapError, ScenarioError
from engine.eventlog import read_log, replay_states
from engine.mapmodel import MapModel
from engine.scenario import load_scenario
from engine.tiled import MAX_CELLS, load_map

MAIN = str(ROOT / "main.py")
MAP = str(ROOT / "maps" / "chase.tmx")  # 48 x 36, names no system
HEX = str(ROOT / "maps" / "hex_pointy.tmx")
CHASE = str(ROOT / "scenarios" / "chase.yaml")
SCENARIOS = sorted((ROOT / "scenarios").glob("*.yaml"))
FUZZ_EXAMPLES = int(os.environ.get("TACGRID_FUZZ_EXAMPLES", "0"))


def _examples(n: int) -> int:
    return max(n, FUZZ_EXAMPLES)


FUZZ = functools.partial(
    settings,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


def _has_command(name: str) -> bool:
    build_parser()
    return name in COMMAND_NAMES


class Hang(BaseException):
    """An input that took longer than its alarm."""


@contextlib.contextmanager
def alarm(seconds: float) -> Iterator[None]:
    """Raise :class:`Hang` if the block runs longer than ``seconds`` (main thread only)."""

    def ring(signum: int, frame: Any) -> None:
        raise Hang(f"still running after {seconds} s")

    old = signal.signal(signal.SIGALRM, ring)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)


def call(argv: list[str]) -> tuple[int, str, str]:
    """``main(argv)`` in-process with stdout/stderr captured (usable inside hypothesis)."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(argv)
    return code, out.getvalue(), err.getvalue()


def assert_one_line_error(code: int, out: str, err: str, *expected: str) -> None:
    assert code == 2, (code, out, err)
    assert out == "", out
    assert err.endswith("\n") and err.count("\n") == 1, err
    assert "Traceback" not in err, err
    for text in expected:
        assert text in err, (text, err)


# =========================================================================== 1. errors


@pytest.fixture(scope="module")
def bad(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder of broken inputs, one per kind."""
    d = tmp_path_factory.mktemp("bad")
    (d / "garbage.tmx").write_bytes(b"\x00\xff garbage \x13")
    tmxtext.write(d / "nosys.tmx", ["......", "......", "......"])
    (d / "malformed.yaml").write_text("map: [unclosed\n")
    (d / "badpolicy.yaml").write_text(
        f"map: {MAP}\nsystem: generic\ntokens: [{{id: a, cell: [0, 0], policy: chaser}}]\n"
    )
    (d / "tok_list.yaml").write_text("- 1\n- 2\n")
    (d / "tok_binary.yaml").write_bytes(b"\xff\xfe\x00speed")
    (d / "log_list.jsonl").write_text("[1, 2]\n")
    (d / "log_number.jsonl").write_text("5\n")
    (d / "log_nokeys.jsonl").write_text('{"type": "start"}\n{"type": "move"}\n')
    (d / "log_badmove.jsonl").write_text(
        '{"type": "start", "tokens": {}}\n{"type": "move", "token": "ghost", "path": [[1, 1]]}\n'
    )
    (d / "log_binary.jsonl").write_bytes(b"\xff\xfe\x00\x01")
    (d / "log_text.jsonl").write_text("hello\n")
    (d / "adir").mkdir()
    other = d / "otherbatch"
    assert main(["run", CHASE, "--runs", "1", "--out", str(other), "--no-plots", "--json"]) == 0
    (d / "afile").write_text("not a folder\n")
    assert main(["run", CHASE, "--run-seed", "1", "--log", str(d / "good.jsonl"), "--json"]) == 0
    for name in ("badmeta", "badruns", "foreignrun"):
        argv = ["run", CHASE, "--runs", "2", "--seed", "5", "--out", str(d / name), "--no-plots"]
        assert main([*argv, "--json"]) == 0
    (d / "badmeta" / "batch.json").write_text("{not json")
    with open(d / "badruns" / "runs.jsonl", "a") as fh:
        fh.write("junk\n")
    runs = (d / "foreignrun" / "runs.jsonl").read_text().splitlines()
    first = json.loads(runs[0])
    runs[0] = json.dumps({**first, "seed": first["seed"] + 1}, sort_keys=True)
    (d / "foreignrun" / "runs.jsonl").write_text("\n".join(runs) + "\n")
    return d


# (argv, substrings the one error line must contain; {d} = the `bad` folder). Every case
# also checks that nothing is written where the command would have written (`never*`).
ERROR_CASES: dict[str, tuple[list[str], list[str]]] = {
    # no command / unknown command / unknown top-level option
    "unknown-command": (["infi", MAP], ["did you mean 'info'"]),
    "top-unknown-option": (["--bogus"], ["--bogus"]),
    # info
    "info-missing-file": (["info", "{d}/nope.tmx"], ["nope.tmx", "not found"]),
    "info-bad-file": (["info", "{d}/garbage.tmx"], ["garbage.tmx"]),
    "info-directory": (["info", "{d}/adir"], ["adir"]),
    "info-not-a-map": (["info", "{d}/malformed.yaml"], ["malformed.yaml"]),
    "info-unknown-option": (["info", MAP, "--jsn"], ["--jsn"]),
    "info-no-map": (["info"], ["map"]),
    # solve
    "solve-missing-file": (["solve", "{d}/nope.yaml"], ["nope.yaml", "not found"]),
    "solve-not-a-scenario": (["solve", "{d}/garbage.tmx"], ["garbage.tmx"]),
    "solve-bad-max-states": (["solve", CHASE, "--max-states", "lots"], ["--max-states"]),
    # export
    "export-missing-file": (
        ["export", "{d}/nope.tmx", "--out", "{d}/never.tmx"],
        ["nope.tmx", "not found"],
    ),
    "export-bad-file": (["export", "{d}/garbage.tmx", "--out", "{d}/never.tmx"], ["garbage.tmx"]),
    "export-no-out": (["export", MAP], ["--out"]),
    # systems
    "systems-unknown-option": (["systems", "--verbose"], ["--verbose"]),
    "systems-extra-argument": (["systems", "d6"], ["d6"]),
    # stats
    "stats-no-system": (["stats"], ["--system"]),
    "stats-unknown-system": (["stats", "--system", "whisperspce"], ["did you mean 'whisperspace'"]),
    "stats-unknown-stat": (
        ["stats", "--system", "whisperspace", "--token", "spede=3"],
        ["spede", "did you mean 'speed'"],
    ),
    "stats-bad-stat-value": (
        ["stats", "--system", "whisperspace", "--token", "speed=abc"],
        ["speed", "abc"],
    ),
    "stats-negative-stat": (["stats", "--system", "generic", "--token", "speed=-5"], ["speed"]),
    "stats-nan-stat": (["stats", "--system", "generic", "--token", "speed=nan"], ["speed"]),
    "stats-bad-die-code": (["stats", "--system", "d6", "--token", "running=3X"], ["running"]),
    "stats-unknown-setting": (["stats", "--system", "whisperspace", "--set", "bogus=1"], ["bogus"]),
    "stats-bad-setting-value": (
        ["stats", "--system", "d6", "--set", "wild_one=maybe"],
        ["wild_one", "maybe"],
    ),
    "stats-setting-without-value": (["stats", "--system", "d6", "--set", "wild_one"], ["--set"]),
    "stats-missing-token-file": (
        ["stats", "--system", "generic", "--token", "{d}/nope.yaml"],
        ["nope.yaml"],
    ),
    "stats-token-file-not-a-mapping": (
        ["stats", "--system", "generic", "--token", "{d}/tok_list.yaml"],
        ["tok_list.yaml"],
    ),
    "stats-token-file-binary": (
        ["stats", "--system", "generic", "--token", "{d}/tok_binary.yaml"],
        ["tok_binary.yaml"],
    ),
    "stats-token-directory": (["stats", "--system", "generic", "--token", "{d}/adir"], ["adir"]),
    "stats-bad-distance": (["stats", "--system", "d6", "--distance", "-3"], ["--distance"]),
    "stats-no-long-distance-rules": (
        ["stats", "--system", "generic", "--distance", "100"],
        ["--distance"],
    ),
    # path
    "path-missing-map": (
        ["path", "{d}/nope.tmx", "--system", "generic", "--from", "1,1", "--to", "2,2"],
        ["nope.tmx"],
    ),
    "path-bad-map": (
        ["path", "{d}/garbage.tmx", "--system", "generic", "--from", "1,1", "--to", "2,2"],
        ["garbage.tmx"],
    ),
    "path-no-system": (["path", "{d}/nosys.tmx", "--from", "0,0", "--to", "2,2"], ["--system"]),
    "path-unknown-system": (
        ["path", MAP, "--system", "generc", "--from", "1,1", "--to", "2,2"],
        ["did you mean 'generic'"],
    ),
    "path-bad-cell": (
        ["path", MAP, "--system", "generic", "--from", "1,x", "--to", "2,2"],
        ["--from", "1,x"],
    ),
    "path-three-part-cell": (
        ["path", MAP, "--system", "generic", "--from", "1,2,3", "--to", "2,2"],
        ["--from"],
    ),
    "path-cell-out-of-bounds": (
        ["path", MAP, "--system", "generic", "--from", "1,1", "--to", "99,99"],
        ["--to", "99,99"],
    ),
    "path-bad-pace": (
        ["path", MAP, "--system", "generic", "--from", "1,1", "--to", "2,2", "--pace", "warp"],
        ["--pace", "warp"],
    ),
    "path-bad-prefer": (
        ["path", MAP, "--system", "generic", "--from", "1,1", "--to", "2,2", "--prefer", "slow"],
        ["--prefer"],
    ),
    "path-no-goal": (["path", MAP, "--system", "generic", "--from", "1,1"], ["--to"]),
    "path-unknown-stat": (
        ["path", MAP, "--system", "generic", "--token", "sped=3", "--from", "1,1", "--to", "2,2"],
        ["did you mean 'speed'"],
    ),
    "path-bad-setting": (
        ["path", MAP, "--system", "d6", "--set", "dn_shift=x", "--from", "1,1", "--to", "2,2"],
        ["dn_shift"],
    ),
    # reach
    "reach-bad-turns": (
        ["reach", MAP, "--system", "generic", "--from", "1,1", "--turns", "x"],
        ["--turns"],
    ),
    "reach-zero-turns": (
        ["reach", MAP, "--system", "generic", "--from", "1,1", "--turns", "0"],
        ["--turns"],
    ),
    "reach-bad-pace": (
        ["reach", MAP, "--system", "d6", "--from", "1,1", "--pace", "warp"],
        ["--pace", "warp"],
    ),
    "reach-cell-out-of-bounds": (
        ["reach", MAP, "--system", "generic", "--from", "48,0"],
        ["--from", "48,0"],
    ),
    "reach-negative-cell": (["reach", MAP, "--system", "generic", "--from=-1,0"], ["--from"]),
    "reach-bad-stat-value": (
        ["reach", HEX, "--system", "mythmaster", "--token", "physical=lots", "--from", "1,1"],
        ["physical"],
    ),
    # odds
    "odds-unknown-system": (
        ["odds", "--system", "whisperspce", "athletics=2", "dc=6"],
        ["did you mean 'whisperspace'"],
    ),
    "odds-bad-number": (["odds", "--system", "d6", "dice=3D+1", "dn=x"], ["dn"]),
    "odds-not-key-value": (["odds", "--system", "d6", "bogus"], ["bogus"]),
    "odds-missing-field": (["odds", "--system", "d6", "dice=3D"], ["dn"]),
    "odds-unknown-key": (
        ["odds", "--system", "whisperspace", "athletcs=2", "dc=6"],
        ["did you mean 'athletics'"],
    ),
    "odds-too-many-dice": (["odds", "--system", "d6", "dice=100000D", "dn=3"], ["dice"]),
    "odds-system-without-checks": (["odds", "--system", "generic", "speed=3"], ["generic"]),
    "odds-no-check": (["odds", "--system", "d6"], ["check"]),
    # roll
    "roll-bad-seed": (["roll", "--system", "d6", "dice=3D", "dn=10", "--seed", "x"], ["--seed"]),
    "roll-negative-seed": (
        ["roll", "--system", "d6", "dice=3D", "dn=10", "--seed", "-1"],
        ["--seed"],
    ),
    "roll-bad-check": (["roll", "--system", "whisperspace", "athletics=2"], ["dc"]),
    "roll-no-system": (["roll", "dice=3D", "dn=10"], ["--system"]),
    # run (never: the --out folder must not appear)
    "run-missing-scenario": (["run", "{d}/nope.yaml", "--out", "{d}/never"], ["nope.yaml"]),
    "run-malformed-scenario": (
        ["run", "{d}/malformed.yaml", "--out", "{d}/never"],
        ["malformed.yaml", "YAML"],
    ),
    "run-bad-field": (
        ["run", "{d}/badpolicy.yaml", "--out", "{d}/never"],
        ["badpolicy.yaml", "policy"],
    ),
    "run-map-given": (["run", MAP, "--out", "{d}/never"], ["chase.tmx"]),
    "run-directory": (["run", "{d}/adir", "--out", "{d}/never"], ["adir"]),
    "run-bad-runs": (["run", CHASE, "--runs", "0", "--out", "{d}/never"], ["--runs"]),
    "run-bad-workers": (["run", CHASE, "--workers", "x", "--out", "{d}/never"], ["--workers"]),
    "run-bad-seed": (["run", CHASE, "--seed", "1.5", "--out", "{d}/never"], ["--seed"]),
    "run-bad-run-seed": (["run", CHASE, "--run-seed", "-1", "--out", "{d}/never"], ["--run-seed"]),
    "run-bad-setting": (
        ["run", CHASE, "--runs", "1", "--set", "bogus=1", "--out", "{d}/never"],
        ["bogus"],
    ),
    "run-unknown-option": (["run", CHASE, "--frobnicate", "--out", "{d}/never"], ["--frobnicate"]),
    "run-bad-scheduler": (
        ["run", CHASE, "--runs", "1", "--scheduler", "nowhere", "--out", "{d}/never"],
        ["--scheduler", "nowhere"],
    ),
    "run-bad-scheduler-scheme": (
        ["run", CHASE, "--runs", "1", "--scheduler", "xyz://a:1", "--out", "{d}/never"],
        ["--scheduler"],
    ),
    "run-resume-other-batch": (
        ["run", CHASE, "--runs", "2", "--seed", "77", "--resume", "--out", "{d}/otherbatch"],
        ["--resume"],
    ),
    "run-out-is-a-file": (["run", CHASE, "--runs", "1", "--out", "{d}/afile"], ["--out"]),
    "run-resume-damaged-meta": (
        ["run", CHASE, "--runs", "2", "--seed", "5", "--resume", "--out", "{d}/badmeta"],
        ["batch.json", "--resume"],
    ),
    "run-resume-damaged-runs": (
        ["run", CHASE, "--runs", "2", "--seed", "5", "--resume", "--out", "{d}/badruns"],
        ["runs.jsonl", "line 3"],
    ),
    "run-resume-foreign-run": (
        ["run", CHASE, "--runs", "2", "--seed", "5", "--resume", "--out", "{d}/foreignrun"],
        ["runs.jsonl", "run 0"],
    ),
    "run-log-folder-missing": (
        ["run", CHASE, "--run-seed", "1", "--log", "{d}/no/such/dir/log.jsonl"],
        ["--log"],
    ),
    "run-log-is-a-folder": (["run", CHASE, "--run-seed", "1", "--log", "{d}/adir"], ["--log"]),
    # replay
    "replay-missing-log": (["replay", "{d}/nope.jsonl", "--text"], ["nope.jsonl"]),
    "replay-not-json": (["replay", "{d}/log_text.jsonl", "--json"], ["log_text.jsonl"]),
    "replay-list-line": (["replay", "{d}/log_list.jsonl", "--text"], ["log_list.jsonl"]),
    "replay-number-line": (["replay", "{d}/log_number.jsonl", "--json"], ["log_number.jsonl"]),
    "replay-missing-keys": (["replay", "{d}/log_nokeys.jsonl", "--json"], ["log_nokeys.jsonl"]),
    "replay-unknown-token": (["replay", "{d}/log_badmove.jsonl", "--json"], ["log_badmove"]),
    "replay-binary": (["replay", "{d}/log_binary.jsonl", "--json"], ["log_binary.jsonl"]),
    "replay-directory": (["replay", "{d}/adir", "--text"], ["adir"]),
    "replay-screenshot-folder-missing": (
        ["replay", "{d}/good.jsonl", "--frames", "1", "--screenshot", "{d}/x/s.png"],
        ["--screenshot"],
    ),
    "replay-bad-frames": (["replay", "{d}/log_text.jsonl", "--frames", "x"], ["--frames"]),
    # render (never.png must not appear)
    "render-missing-source": (["render", "{d}/nope.tmx", "--out", "{d}/never.png"], ["nope.tmx"]),
    "render-bad-map": (["render", "{d}/garbage.tmx", "--out", "{d}/never.png"], ["garbage.tmx"]),
    "render-unknown-kind": (
        ["render", "{d}/log_text.jsonl", "--out", "{d}/never.png"],
        ["log_text.jsonl"],
    ),
    "render-malformed-scenario": (
        ["render", "{d}/malformed.yaml", "--out", "{d}/never.png"],
        ["malformed.yaml"],
    ),
    "render-no-out": (["render", MAP], ["--out"]),
    "render-out-folder-missing": (
        ["render", MAP, "--out", "{d}/no/such/folder/x.png"],
        ["x.png"],
    ),
    "render-bad-scale": (["render", MAP, "--out", "{d}/never.png", "--scale", "x"], ["--scale"]),
    "render-zero-scale": (["render", MAP, "--out", "{d}/never.png", "--scale", "0"], ["scale"]),
    "render-nan-scale": (["render", MAP, "--out", "{d}/never.png", "--scale", "nan"], ["scale"]),
    # view (never.png must not appear)
    "view-missing-file": (["view", "{d}/nope.tmx", "--frames", "1"], ["nope.tmx"]),
    "view-bad-file": (["view", "{d}/garbage.tmx", "--frames", "1"], ["garbage.tmx"]),
    "view-unknown-kind": (["view", "{d}/adir", "--frames", "1"], ["adir"]),
    "view-screenshot-without-frames": (
        ["view", MAP, "--screenshot", "{d}/never.png"],
        ["--screenshot"],
    ),
    "view-screenshot-folder-missing": (
        ["view", MAP, "--frames", "1", "--screenshot", "{d}/no/such/dir/s.png"],
        ["--screenshot"],
    ),
    "view-screenshot-unwritable": (
        ["view", MAP, "--frames", "1", "--screenshot", "/proc/tacgrid-test.png"],
        ["--screenshot"],
    ),
    "view-bad-frames": (["view", MAP, "--frames", "0"], ["--frames"]),
    "view-unknown-system": (
        ["view", MAP, "--system", "whisperspce", "--frames", "1"],
        ["did you mean 'whisperspace'"],
    ),
    "view-no-display": (["view", MAP], ["--frames"]),
    "view-bad-setting": (
        ["view", CHASE, "--set", "wild_one=maybe", "--frames", "1"],
        ["wild_one"],
    ),
    # sweep and report
    "sweep-missing-scenario": (
        ["sweep", "{d}/nope.yaml", "--vary", "turns=2,3", "--out", "{d}/never"],
        ["nope.yaml"],
    ),
    "sweep-nothing-to-vary": (["sweep", CHASE, "--out", "{d}/never"], ["--vary"]),
    "sweep-bad-vary": (["sweep", CHASE, "--vary", "turns", "--out", "{d}/never"], ["--vary"]),
    "sweep-unknown-token": (
        ["sweep", CHASE, "--vary", "nobody.stats.move=1,2", "--out", "{d}/never"],
        ["nobody.stats.move"],
    ),
    "sweep-bad-value": (
        ["sweep", CHASE, "--vary", "quarry.stats.move=fast", "--out", "{d}/never"],
        ["quarry", "move"],
    ),
    "sweep-bad-runs": (
        ["sweep", CHASE, "--vary", "turns=2", "--runs", "0", "--out", "{d}/never"],
        ["--runs"],
    ),
    "sweep-bad-scheduler": (
        ["sweep", CHASE, "--vary", "turns=2", "--scheduler", "nowhere", "--out", "{d}/never"],
        ["--scheduler", "nowhere"],
    ),
    "sweep-out-is-a-file": (
        ["sweep", CHASE, "--vary", "turns=2", "--runs", "1", "--out", "{d}/afile"],
        ["--out"],
    ),
    "report-missing-folder": (["report", "{d}/never"], ["{d}/never", "no such folder"]),
    "report-no-batch": (["report", "{d}/adir"], ["adir", "no batch or sweep"]),
    "report-unknown-option": (["report", "{d}/adir", "--jsn"], ["--jsn"]),
}

FLY_CASES: dict[str, tuple[list[str], list[str]]] = {
    "fly-missing-map": (
        ["fly", "{d}/nope.tmx", "--system", "generic", "--token", "speed=30,fly=true"]
        + ["--from", "1,1", "--heading", "90", "--speed", "2", "--to", "5,1"],
        ["nope.tmx"],
    ),
    "fly-bad-cell": (
        ["fly", MAP, "--system", "generic", "--token", "speed=30,fly=true"]
        + ["--from", "a,b", "--heading", "90", "--speed", "2", "--to", "5,1"],
        ["--from"],
    ),
    "fly-cell-out-of-bounds": (
        ["fly", MAP, "--system", "generic", "--token", "speed=30,fly=true"]
        + ["--from", "1,1", "--heading", "90", "--speed", "2", "--to", "500,1"],
        ["--to"],
    ),
    "fly-bad-heading": (
        ["fly", MAP, "--system", "generic", "--token", "speed=30,fly=true"]
        + ["--from", "1,1", "--heading", "north", "--speed", "2", "--to", "5,1"],
        ["--heading"],
    ),
    "fly-bad-speed": (
        ["fly", MAP, "--system", "generic", "--token", "speed=30,fly=true"]
        + ["--from", "1,1", "--heading", "90", "--speed", "fast", "--to", "5,1"],
        ["--speed"],
    ),
    "fly-unknown-system": (
        ["fly", MAP, "--system", "generc", "--token", "speed=30"]
        + ["--from", "1,1", "--heading", "90", "--speed", "2", "--to", "5,1"],
        ["did you mean 'generic'"],
    ),
}


def _expand(argv: list[str], d: Path) -> list[str]:
    return [a.replace("{d}", str(d)) for a in argv]


def _never(d: Path) -> list[Path]:
    return [d / "never", d / "never.png", d / "never.tmx"]


@pytest.mark.parametrize("case", sorted(ERROR_CASES))
def test_every_command_fails_in_one_line(case: str, bad: Path, capsys) -> None:
    argv, expected = ERROR_CASES[case]
    code = main(_expand(argv, bad))
    out, err = capsys.readouterr()
    assert_one_line_error(code, out, err, *[e.replace("{d}", str(bad)) for e in expected])
    assert not any(p.exists() for p in _never(bad)), "written half-way"


@pytest.mark.parametrize("case", sorted(FLY_CASES))
def test_fly_fails_in_one_line(case: str, bad: Path, capsys) -> None:
    if not _has_command("fly"):
        pytest.skip("no `fly` command yet")
    argv, expected = FLY_CASES[case]
    code = main(_expand(argv, bad))
    out, err = capsys.readouterr()
    assert_one_line_error(code, out, err, *expected)


def test_the_table_covers_every_command() -> None:
    build_parser()
    covered = {argv[0] for argv, _ in [*ERROR_CASES.values(), *FLY_CASES.values()]}
    assert set(COMMAND_NAMES) <= covered, set(COMMAND_NAMES) - covered


# Stat values far outside any game's range: refused when the stat is read (base.Param),
# and a graph whose exact tick counts would not fit is refused too (movement.py).
EXTREME_STATS = [
    ("generic", "speed=1e-30"),
    ("whisperspace", "speed=1e30"),
    ("d6", "move=1e400"),
    ("speedpoints", "running=1e30"),
    ("mythmaster", "adaptability=1e400"),
]


@pytest.mark.parametrize(("system", "token"), EXTREME_STATS)
def test_extreme_stat_values_fail_in_one_line(system: str, token: str, capsys) -> None:
    argv = ["path", MAP, "--system", system, "--token", token, "--from", "0,0", "--to", "5,5"]
    code = main(argv)
    out, err = capsys.readouterr()
    assert code in (0, 1) or (out == "" and err.count("\n") == 1 and token.split("=")[0] in err)


def test_a_very_slow_token_gets_a_short_plan(capsys) -> None:
    # 65 million turns to cross 5 cells: the plan lists the turns that enter cells only.
    argv = ["path", MAP, "--system", "generic", "--token", "speed=1/1000000"]
    with alarm(30):
        code = main([*argv, "--from", "0,0", "--to", "5,5", "--json"])
    rep = json.loads(capsys.readouterr().out)
    assert code == 0 and rep["turns"] == 65_000_000
    assert [t["turn"] for t in rep["plan"]][-1] == 65_000_000 and len(rep["plan"]) <= 11
    assert [c for t in rep["plan"] for c in t["cells"]] == rep["cells"][1:]


def test_nul_in_a_path_is_the_projects_error(tmp_path: Path) -> None:
    # Only the Python API can pass one (an OS argument cannot hold NUL).
    with pytest.raises(MapError):
        load_map(str(tmp_path / "a\x00.tmx"))
    with pytest.raises(ScenarioError):
        load_scenario(str(tmp_path / "a\x00.yaml"))


def test_debug_still_shows_the_traceback(bad: Path, capsys) -> None:
    code = main(["--debug", "replay", str(bad / "log_list.jsonl"), "--json"])
    _, err = capsys.readouterr()
    assert code == 2 and "Traceback" in err


# Through a real process: nothing else may leak (pygame's banner, SDL or ALSA noise).
SUBPROCESS_CASES = [
    "view-no-display",
    "view-bad-file",
    "render-zero-scale",
    "replay-list-line",
    "run-malformed-scenario",
    "run-bad-scheduler",
    "odds-unknown-system",
]


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "PYGAME_HIDE_SUPPORT_PROMPT"}
    env.update(SDL_VIDEODRIVER="dummy", SDL_AUDIODRIVER="dummy", **extra)
    return env


@pytest.mark.parametrize("case", SUBPROCESS_CASES)
def test_errors_through_main_py(case: str, bad: Path) -> None:
    argv, expected = ERROR_CASES[case]
    res = subprocess.run(
        [sys.executable, MAIN, *_expand(argv, bad)],
        capture_output=True,
        text=True,
        timeout=120,
        env=_env(),
        cwd=bad,
    )
    assert_one_line_error(res.returncode, res.stdout, res.stderr, *expected)


def test_the_viewer_makes_no_noise(tmp_path: Path) -> None:
    # No audio driver chosen and no banner suppressed: the viewer itself keeps quiet.
    env = _env()
    env.pop("SDL_AUDIODRIVER")
    shot = tmp_path / "v.png"
    res = subprocess.run(
        [sys.executable, MAIN, "view", CHASE, "--frames", "1", "--screenshot", str(shot)],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
        cwd=tmp_path,
    )
    assert (res.returncode, res.stdout, res.stderr) == (0, "", "")
    assert shot.stat().st_size > 1000


# =========================================================================== 2. fuzzing

CORPUS_TMX = sorted(CORPUS.rglob("*.tmx"))
SHIPPED_TMX = sorted((ROOT / "maps").glob("*.tmx"))
SOURCE_RE = re.compile(rb'\b(source|template)="([^"]*)"')


@functools.cache
def _map_text(path: Path) -> bytes:
    """The map's bytes with its relative file references made absolute (for a tmp copy)."""
    base = path.parent

    def absolute(m: re.Match[bytes]) -> bytes:
        ref = m.group(2).decode()
        return m.group(1) + b'="' + str((base / ref).resolve()).encode() + b'"'

    return SOURCE_RE.sub(absolute, path.read_bytes())


FUZZ_MAPS = CORPUS_TMX + SHIPPED_TMX
ATTRS = (
    "width height tilewidth tileheight orientation encoding compression firstgid gid "
    "staggeraxis staggerindex hexsidelength infinite tilecount columns x y id source "
    "template type class value offsetx offsety opacity visible rotation points name "
    "spacing margin imagewidth imageheight"
).split()
ATTR_RE = re.compile(rb"\b(" + "|".join(ATTRS).encode() + rb')="([^"]*)"')
JUNK = [
    b"",
    b"0",
    b"-1",
    b"1",
    b"2",
    b"3",
    b"7",
    b"1.5",
    b"-0",
    b"1e9",
    b"1e400",
    b"-1e400",
    b"nan",
    b"inf",
    b"-inf",
    b"abc",
    b"0x10",
    b"100000",
    b"4096",
    b"2147483648",
    b"4294967295",
    b"4294967296",
    b"268435457",
    b"csv",
    b"base64",
    b"zlib",
    b"gzip",
    b"zstd",
    b"xml",
    b"orthogonal",
    b"isometric",
    b"hexagonal",
    b"staggered",
    b"x",
    b"y",
    b"odd",
    b"even",
    b"missing.tsx",
    b"missing.png",
    b"missing.tx",
    b"missing.json",
    b"/",
    b".",
    b"\xc3\xa9",
    b"walk",
    b"blocked",
    b"spawn",
    b"exit",
    b"float",
    b"int",
    b"bool",
    b"class",
    b"color",
    b"file",
    b"object",
    b"0,0 1,1",
    b"0,0 10,0 10,10",
    b"nan,nan 1,1 2,0",
    str(CORPUS / "tiled-examples" / "desert.tsx").encode(),
    str(ROOT / "assets").encode(),
]
NUMBER_RE = re.compile(rb"-?\d+")
DATA_RE = re.compile(rb"(<data[^>]*>)(.*?)(</data>)", re.S)
TILESET_RE = re.compile(rb"<tileset\b[^>]*/>|<tileset\b.*?</tileset>", re.S)
# Mostly edits that keep the XML well-formed (they reach the reader's checks), some that
# break it (truncation, stray bytes).
EDITS = (
    ["set_attr"] * 10
    + ["drop_attr"] * 3
    + ["gid"] * 3
    + ["data"] * 2
    + ["drop_tileset", "declaration", "truncate", "insert", "flip", "cut"]
)
ATTR_TEXT = st.text(
    st.characters(min_codepoint=32, max_codepoint=0x2FF, blacklist_characters='"<&'),
    max_size=6,
).map(str.encode)
GIDS = st.one_of(
    st.integers(-5, 300),
    st.integers(-(2**70), 2**70),
    st.sampled_from([0x10000001, 0x80000001, 0xFFFFFFFF, 2**32, 2**63, 2**64]),
)


def _mutate_tmx(draw: Any, text: bytes) -> tuple[bytes, list[str]]:  # noqa: C901
    """Apply 1-3 random damaging edits; returns the text and what was done (for reports)."""
    done: list[str] = []
    for _ in range(draw(st.integers(1, 3))):
        kind = draw(st.sampled_from(EDITS))
        if kind == "truncate" and len(text) > 1:
            k = draw(st.integers(0, len(text) - 1))
            text = text[:k]
            done.append(f"truncate@{k}")
        elif kind in ("drop_attr", "set_attr"):
            body = text.find(b"?>") + 1 if text.startswith(b"<?xml") else 0
            attrs = [m for m in ATTR_RE.finditer(text) if m.start() > body]
            if not attrs:
                continue
            m = draw(st.sampled_from(attrs))
            if kind == "drop_attr":
                new = b""
            else:
                value = draw(st.one_of(st.sampled_from(JUNK), ATTR_TEXT))
                new = m.group(1) + b'="' + value + b'"'
            text = text[: m.start()] + new + text[m.end() :]
            done.append(f"{kind} {m.group(0)[:40]!r} -> {new[:40]!r}")
        elif kind == "gid":
            nums = [
                (dm.start(2) + n.start(), dm.start(2) + n.end())
                for dm in DATA_RE.finditer(text)
                if b"csv" in dm.group(1)
                for n in NUMBER_RE.finditer(dm.group(2))
            ]
            if not nums:
                continue
            a, b = draw(st.sampled_from(nums))
            g = str(draw(GIDS)).encode()
            text = text[:a] + g + text[b:]
            done.append(f"gid@{a} -> {g!r}")
        elif kind == "data":
            datas = list(DATA_RE.finditer(text))
            if not datas:
                continue
            dm = draw(st.sampled_from(datas))
            body = draw(
                st.one_of(
                    st.sampled_from([b"", b"0", b"1,2", b"!!!!", b"AAAA", b"eJw=", b"H4sI"]),
                    st.binary(max_size=40).map(lambda b: b.replace(b"<", b"").replace(b"&", b"")),
                )
            )
            text = text[: dm.start(2)] + body + text[dm.end(2) :]
            done.append(f"data -> {body[:20]!r}")
        elif kind == "insert":
            k = draw(st.integers(0, len(text)))
            junk = draw(st.binary(min_size=1, max_size=8))
            text = text[:k] + junk + text[k:]
            done.append(f"insert@{k} {junk!r}")
        elif kind == "flip" and text:
            k = draw(st.integers(0, len(text) - 1))
            b = draw(st.integers(1, 255))
            text = text[:k] + bytes([text[k] ^ b]) + text[k + 1 :]
            done.append(f"flip@{k}^{b}")
        elif kind == "cut" and len(text) > 2:
            a = draw(st.integers(0, len(text) - 2))
            b = draw(st.integers(a + 1, min(len(text), a + 200)))
            text = text[:a] + text[b:]
            done.append(f"cut {a}:{b}")
        elif kind == "declaration":
            value = draw(st.sampled_from([b"", b"nan", b"UTF-16", b"latin-1", b"ascii", b"x"]))
            text = re.sub(rb'^(<\?xml[^>]*encoding=")[^"]*"', rb"\g<1>" + value + b'"', text)
            done.append(f"declaration encoding={value!r}")
        elif kind == "drop_tileset":
            sets = list(TILESET_RE.finditer(text))
            if not sets:
                continue
            m = draw(st.sampled_from(sets))
            text = text[: m.start()] + text[m.end() :]
            done.append("drop_tileset")
    return text, done


def _assert_loads_or_map_error(path: Path) -> MapModel | None:
    try:
        with alarm(10):
            return load_map(path)
    except MapError as exc:
        msg = str(exc)
        assert "\n" not in msg and str(path) in msg, msg
        return None


@pytest.fixture(scope="module")
def fuzz_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("fuzz")


@FUZZ(max_examples=_examples(400))
@given(data=st.data())
def test_fuzzed_maps_load_or_fail_in_one_line(fuzz_dir: Path, data: st.DataObject) -> None:
    source = data.draw(st.sampled_from(FUZZ_MAPS), label="map")
    text, done = _mutate_tmx(data.draw, _map_text(source))
    data.draw(st.just(done), label="edits")
    path = fuzz_dir / "fuzzed.tmx"
    path.write_bytes(text)
    model = _assert_loads_or_map_error(path)
    if model is not None:
        # What loads is a usable grid: every cell has a terrain, and info can report it.
        assert model.terrain_ids.shape == (model.height, model.width)
        assert sum(model.mode_counts().values()) == model.width * model.height
        code, out, err = call(["info", str(path), "--json"])
        assert code == 0 and err == "" and json.loads(out)["width"] == model.width


HUGE = [100000, 65536, 4097, 10**9, 2**31, 2**32 + 1, 10**18, 10**40]


@FUZZ(max_examples=_examples(60))
@given(data=st.data())
def test_huge_sizes_are_refused_before_allocating(fuzz_dir: Path, data: st.DataObject) -> None:
    source = data.draw(st.sampled_from(FUZZ_MAPS), label="map")
    text = _map_text(source)
    w = data.draw(st.sampled_from(HUGE), label="width")
    h = data.draw(st.sampled_from(HUGE), label="height")
    where = data.draw(st.sampled_from(["map", "layers", "chunks", "all"]), label="where")
    tags = {"map": [b"map"], "layers": [b"layer"], "chunks": [b"chunk"]}.get(
        where, [b"map", b"layer", b"chunk"]
    )

    def grow(m: re.Match[bytes]) -> bytes:
        tag = m.group(0)
        tag = re.sub(rb'\bwidth="[^"]*"', b'width="%d"' % w, tag)
        return re.sub(rb'\bheight="[^"]*"', b'height="%d"' % h, tag)

    for tag in tags:
        text = re.sub(rb"<" + tag + rb"\b[^>]*>", grow, text)
    path = fuzz_dir / "huge.tmx"
    path.write_bytes(text)
    tracemalloc.start()
    try:
        model = _assert_loads_or_map_error(path)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 64 * 2**20, f"{peak / 2**20:.0f} MiB allocated for a refused map"
    if model is not None:  # e.g. chunk sizes only, on a finite map: not used
        assert model.width * model.height <= MAX_CELLS


def _scenario_data(path: Path) -> dict[str, Any]:
    data = yaml.safe_load(path.read_text())
    data["map"] = str((path.parent / data["map"]).resolve())
    return data


YAML_JUNK: list[Any] = [
    None,
    0,
    -1,
    1,
    1.5,
    True,
    "x",
    "",
    "nan",
    [],
    {},
    [1, 2],
    [[0, 0]],
    [-1, 0],
    [999, 999],
    {"a": 1},
    10**30,
    "3D+1",
    "generic",
    "d6",
    "whisperspace",
    "mythmaster",
    "speedpoints",
    "quarry",
    "pursuer",
    "waypoints",
    "idle",
    "human",
    "dash",
    "run",
    "exit_east",
    "beast",
    str(ROOT / "maps" / "hex_flat.tmx"),
    str(ROOT / "README.md"),
]


def _paths(node: Any, prefix: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    yield prefix
    if isinstance(node, dict):
        for k, v in node.items():
            yield from _paths(v, (*prefix, k))
    elif isinstance(node, list):
        for i, v in enumerate(node):
            yield from _paths(v, (*prefix, i))


def _mutate_tree(draw: Any, data: Any) -> Any:
    for _ in range(draw(st.integers(1, 3))):
        paths = [p for p in _paths(data) if p]
        if not paths:
            break
        where = draw(st.sampled_from(paths))
        parent = data
        for key in where[:-1]:
            parent = parent[key]
        key = where[-1]
        kind = draw(st.sampled_from(["set", "set", "drop", "add"]))
        if kind == "set":
            parent[key] = copy.deepcopy(draw(st.sampled_from(YAML_JUNK)))
        elif kind == "drop":
            del parent[key]
        elif isinstance(parent, dict):
            name = draw(st.sampled_from(["bogus", "speed", "cell", "pace", "fly", "target"]))
            parent[name] = copy.deepcopy(draw(st.sampled_from(YAML_JUNK)))
        else:
            parent.append(copy.deepcopy(draw(st.sampled_from(YAML_JUNK))))
    return data


@FUZZ(max_examples=_examples(200))
@given(data=st.data())
def test_fuzzed_scenarios_load_or_fail_in_one_line(fuzz_dir: Path, data: st.DataObject) -> None:
    source = data.draw(st.sampled_from(SCENARIOS), label="scenario")
    tree = _mutate_tree(data.draw, _scenario_data(source))
    text = yaml.safe_dump(tree, sort_keys=False).encode()
    if data.draw(st.booleans(), label="damage the text too"):
        text, _ = _mutate_tmx(data.draw, text)
    path = fuzz_dir / "fuzzed.yaml"
    path.write_bytes(text)
    try:
        with alarm(10):
            sc = load_scenario(path)
    except ScenarioError as exc:
        msg = str(exc)
        assert "\n" not in msg and str(path) in msg, msg
        return
    # What validates also plays: a few turns of one run, in a bounded time.
    from engine.sim import Simulation

    sc.turns = min(sc.turns, 3)
    with alarm(20):
        res = Simulation(sc, 1).run()
    assert res.outcome in ("capture", "escape", "timeout")


@FUZZ(max_examples=_examples(150))
@given(data=st.data())
def test_fuzzed_event_logs_replay_or_fail_in_one_line(argv_dir: Path, data: st.DataObject) -> None:
    events = [json.loads(line) for line in (argv_dir / "run.jsonl").read_text().splitlines()]
    events = _mutate_tree(data.draw, events)
    text = "".join(json.dumps(ev) + "\n" for ev in events)
    if data.draw(st.integers(0, 4), label="damage the text too") == 4:
        text = _mutate_tmx(data.draw, text.encode())[0].decode("utf-8", "replace")
    log = argv_dir / "fuzzed.jsonl"
    log.write_text(text)
    for mode in ("--json", "--text"):
        with alarm(10):
            code, out, err = call(["replay", str(log), mode])
        assert code in (0, 2), (code, err)
        if code == 2:
            assert_one_line_error(code, out, err, str(log))


# Random command lines: real commands, options and values, mixed with junk.
VOCAB = [
    "info",
    "systems",
    "stats",
    "path",
    "reach",
    "odds",
    "roll",
    "run",
    "replay",
    "render",
    "view",
    "fly",
    "--json",
    "--debug",
    "--system",
    "--token",
    "--set",
    "--from",
    "--to",
    "--pace",
    "--turns",
    "--seed",
    "--run-seed",
    "--runs",
    "--workers",
    "--out",
    "--frames",
    "--screenshot",
    "--scale",
    "--text",
    "--distance",
    "--prefer",
    "--heading",
    "--speed",
    "--land",
    "--no-plots",
    "--log",
    "--resume",
    "generic",
    "d6",
    "whisperspace",
    "mythmaster",
    "speedpoints",
    "whisperspce",
    MAP,
    HEX,
    CHASE,
    str(ROOT / "scenarios" / "flier.yaml"),
    str(ROOT / "README.md"),
    "/no/such/file.tmx",
    "0,0",
    "1,1",
    "3,4",
    "47,35",
    "48,36",
    "-1,0",
    "a,b",
    "1,2,3",
    "0",
    "1",
    "2",
    "-1",
    "1.5",
    "x",
    "nan",
    "99999999999999999999",
    "walk",
    "dash",
    "sprint",
    "all_out",
    "fast",
    "safe",
    "speed=30",
    "speed=-1",
    "fly=true",
    "move=12,dexterity=3D",
    "spede=3",
    "wild_one=none",
    "wild_one=maybe",
    "bogus=1",
    "=",
    "athletics=2",
    "dc=6",
    "dice=3D+1",
    "dn=13",
    "skill=15",
    "adjust=-2",
    "ability=4",
    "difficulty=5",
    "",
    " ",
    "-",
    "--",
    "--bogus",
    "é",
]


# What an operating system can pass as an argument: any text but NUL.
ARG_TEXT = st.text(st.characters(blacklist_characters="\x00"), max_size=6)


@pytest.fixture(scope="module")
def argv_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    d = tmp_path_factory.mktemp("argv")
    assert main(["run", CHASE, "--run-seed", "3", "--log", str(d / "run.jsonl"), "--json"]) == 0
    (d / "bad.jsonl").write_text('{"type": "start"}\n')
    (d / "garbage.tmx").write_bytes(b"\x00garbage")
    (d / "tok.yaml").write_text("speed: 30\nfly: true\n")
    (d / "shots").mkdir()
    return d


def _run_argv(argv_dir: Path, argv: list[str]) -> None:
    """Run one fuzzed command line cheaply, in a tmp folder; check the exit discipline."""
    if any(a in ("-h", "--help") or a.startswith("--h") for a in argv):
        return  # argparse's help exits by design
    if "--scheduler" in argv:
        return  # a real address would wait for a cluster
    cmd = next((a for a in argv if not a.startswith("-")), None)
    # Keep every run cheap and out of the repository: one run, one frame, tmp files.
    if cmd == "run":
        argv = [*argv, "--runs", "1", "--no-plots", "--out", str(argv_dir / "out")]
    elif cmd == "render":
        argv = [*argv, "--out", str(argv_dir / "r.png")]
    elif cmd in ("view", "replay"):
        argv = [*argv, "--frames", "1"]
    cwd = os.getcwd()
    os.chdir(argv_dir)
    try:
        with alarm(30):
            code, out, err = call(argv)
    finally:
        os.chdir(cwd)
    assert code in (0, 1, 2), (argv, code, err)
    if code == 2 and "--debug" not in argv:
        assert out == "" and err.count("\n") == 1 and "Traceback" not in err, (argv, err)
        assert err.strip(), argv
    elif code in (0, 1) and "--json" in argv and cmd not in ("view", "replay"):
        json.loads(out)  # a --json answer is one JSON document, even "no path"


@FUZZ(max_examples=_examples(150))
@given(
    head=st.lists(st.sampled_from(VOCAB), max_size=1),
    rest=st.lists(st.one_of(st.sampled_from(VOCAB), ARG_TEXT), max_size=8),
)
def test_random_command_lines_never_raise(argv_dir: Path, head: list[str], rest: list[str]) -> None:
    _run_argv(argv_dir, [*head, *rest])


MAPS_POOL = [MAP, HEX, str(ROOT / "maps" / "hex_flat.tmx"), str(ROOT / "maps" / "encounter.tmx")]
SCENARIO_POOL = [str(p) for p in SCENARIOS]
BAD_FILES = ["{d}/garbage.tmx", "{d}/nope.tmx", "{d}/bad.jsonl", "{d}", str(ROOT / "README.md")]
GOOD_CELLS = ["0,0", "1,1", "3,4", "10,10", "20,12", "29,23", "5,30"]
# option: (good values, bad values); a draw takes a good one three times in four.
OPTION_VALUES: dict[str, tuple[list[str], list[str]]] = {
    "--system": (systems.names(), ["whisperspce", ""]),
    "--token": (
        [
            "",
            "speed=30",
            "speed=30,fly=true",
            "speed=0",
            "move=12,dexterity=3D+1,running=4D",
            "adaptability=15,physical=12,climbing=14",
            "running=6,swimming=3,strength=4",
            "phys=3,athletics=2,bulk=4",
            "{d}/tok.yaml",
        ],
        ["speed=-1", "spede=3", "=", "{d}/nope.yaml"],
    ),
    "--set": (["wild_one=none", "dn_shift=1"], ["wild_one=maybe", "bogus=1", "x", "="]),
    "--from": (GOOD_CELLS, ["47,35", "48,36", "-1,0", "a,b", "1,2,3"]),
    "--to": (GOOD_CELLS, ["47,35", "48,36", "a,b"]),
    "--pace": (
        ["walk", "run", "sprint", "dash", "cautious", "cruising", "high", "all_out"],
        ["warp"],
    ),
    "--turns": (["1", "2"], ["0", "x"]),
    "--prefer": (["fast", "safe"], ["slow"]),
    "--distance": (["100", "10000", "1/3"], ["0", "-3", "1e30", "x"]),
    "--seed": (["0", "1", "42", "99999999999999999999"], ["-1", "x"]),
    "--run-seed": (["0", "7", "4294967296"], ["-1", "x"]),
    "--workers": (["1", "2"], ["0", "x"]),
    "--log": (["{d}/log.jsonl"], ["{d}/no/such/dir/log.jsonl", "{d}"]),
    "--screenshot": (["{d}/shots/s.png"], ["{d}/no/such/dir/s.png", "{d}/shots"]),
    "--scale": (["1", "0.5", "2"], ["0", "-1", "nan", "inf", "x", "1e9"]),
    "--heading": (["0", "90", "45", "60", "180"], ["37", "-90", "x"]),
    "--speed": (["0", "1", "2", "3"], ["-1", "x"]),
}
CHECK_WORDS = [
    "athletics=2",
    "dc=6",
    "bonus=1",
    "dice=3D+1",
    "dn=13",
    "actions=2",
    "skill=15",
    "adjust=-2",
    "ability=4",
    "difficulty=5",
    "untrained",
]
BAD_CHECK_WORDS = ["dc=x", "dice=0D", "bogus", "=", "dn=-1"]
# command: (good positionals, bad positionals, flags, required options, other options)
COMMAND_GRAMMAR: dict[str, tuple[list[str], list[str], list[str], list[str], list[str]]] = {
    "info": (MAPS_POOL, BAD_FILES, ["--json"], [], []),
    "systems": ([], [], ["--json"], [], []),
    "stats": ([], [], ["--json"], ["--system"], ["--token", "--set", "--distance"]),
    "path": (
        MAPS_POOL,
        BAD_FILES,
        ["--json"],
        ["--system", "--from", "--to"],
        ["--token", "--set", "--pace", "--prefer"],
    ),
    "reach": (
        MAPS_POOL,
        BAD_FILES,
        ["--json"],
        ["--system", "--from"],
        ["--token", "--set", "--turns", "--pace"],
    ),
    "fly": (
        MAPS_POOL,
        BAD_FILES,
        ["--json", "--land"],
        ["--system", "--token", "--from", "--to", "--heading", "--speed"],
        ["--set"],
    ),
    "odds": (CHECK_WORDS, BAD_CHECK_WORDS, ["--json"], ["--system"], []),
    "roll": (CHECK_WORDS, BAD_CHECK_WORDS, ["--json"], ["--system"], ["--seed"]),
    "run": (
        SCENARIO_POOL,
        BAD_FILES,
        ["--json", "--resume"],
        [],
        ["--seed", "--workers", "--run-seed", "--log", "--set"],
    ),
    "replay": (["{d}/run.jsonl"], BAD_FILES, ["--json", "--text"], [], ["--screenshot"]),
    "render": (MAPS_POOL + SCENARIO_POOL, BAD_FILES, ["--json"], [], ["--system", "--scale"]),
    "view": (MAPS_POOL + SCENARIO_POOL, BAD_FILES, [], [], ["--system", "--set", "--screenshot"]),
}


def _mostly_good(good: list[str], bad: list[str]) -> st.SearchStrategy[str]:
    if not bad:
        return st.sampled_from(good)
    return st.integers(0, 3).flatmap(lambda i: st.sampled_from(bad if i == 3 else good))


@st.composite
def command_lines(draw: Any, d: str) -> list[str]:
    """A command with mostly sensible arguments, some wrong, now and then junk."""
    build_parser()
    cmd = draw(st.sampled_from(sorted(c for c in COMMAND_GRAMMAR if c in COMMAND_NAMES)))
    good, bad, flags, required, options = COMMAND_GRAMMAR[cmd]
    args = [draw(_mostly_good(good, bad))] if good else []
    chosen = draw(st.lists(st.sampled_from(options), max_size=len(options))) if options else []
    for opt in [*required, *chosen]:
        args += [opt, draw(_mostly_good(*OPTION_VALUES[opt]))]
    if cmd in ("odds", "roll"):  # the system's own example check, perhaps spoilt
        name = args[args.index("--system") + 1]
        example = _check_example(name) if name in systems.names() else None
        words = (example or "x=1").split()
        if draw(st.integers(0, 3)) == 3:
            words[draw(st.integers(0, len(words) - 1))] = draw(st.sampled_from(BAD_CHECK_WORDS))
        args = [*words, *args[1:]]
    args += draw(st.lists(st.sampled_from(flags), max_size=1)) if flags else []
    if draw(st.integers(0, 9)) == 0:  # drop one, or add a stray token somewhere
        if args and draw(st.booleans()):
            del args[draw(st.integers(0, len(args) - 1))]
        else:
            args.insert(draw(st.integers(0, len(args))), draw(st.sampled_from(VOCAB)))
    return [cmd, *(a.replace("{d}", d) for a in args)]


@FUZZ(max_examples=_examples(200))
@given(data=st.data())
def test_fuzzed_commands_never_raise(argv_dir: Path, data: st.DataObject) -> None:
    _run_argv(argv_dir, data.draw(command_lines(str(argv_dir)), label="argv"))


# =========================================================================== 3. determinism


def _check_example(name: str) -> str | None:
    """An example CHECK for the system (its module's own), or None if it has no checks."""
    import importlib

    module = importlib.import_module(f"engine.systems.{name}")
    if getattr(module, "parse_check", None) is None:
        return None
    example = getattr(module, "_CHECK_EXAMPLE", None)
    assert example, f"engine/systems/{name}.py has parse_check but no _CHECK_EXAMPLE"
    return str(example)


@pytest.mark.parametrize("name", systems.names())
def test_roll_is_byte_identical_for_a_fixed_seed(name: str) -> None:
    check = _check_example(name)
    argv = ["roll", "--system", name, *(check or "x=1").split(), "--seed", "20260101", "--json"]
    first = call(argv)
    second = call(argv)
    assert first == second
    # Another process with another hash seed: set iteration order must not leak in.
    res = subprocess.run(
        [sys.executable, MAIN, *argv],
        capture_output=True,
        text=True,
        timeout=120,
        env=_env(PYTHONHASHSEED="12345"),
    )
    assert (res.returncode, res.stdout, res.stderr) == first
    if check is None:
        assert_one_line_error(*first, name)
    else:
        assert first[0] == 0 and json.loads(first[1])["seed"] == 20260101
        other = call([*argv[:-3], "--seed", "20260102", "--json"])
        assert other[0] == 0  # the same check, another seed: still a valid roll


def _strip_paths(text: str, out: Path) -> str:
    doc = json.loads(text)
    doc.pop("results", None)
    doc.pop("plots", None)
    assert str(out) not in json.dumps(doc)
    return json.dumps(doc, indent=2, sort_keys=True)


@pytest.mark.parametrize("scenario", SCENARIOS, ids=lambda p: p.name)
def test_batches_are_byte_identical(scenario: Path, tmp_path: Path) -> None:
    runs, seed = 40, 2024  # two chunks, so two workers split the batch
    a, b, c = tmp_path / "a", tmp_path / "b", tmp_path / "c"
    run_batch(str(scenario), runs=runs, seed=seed, workers=1, out_dir=str(a))
    run_batch(str(scenario), runs=runs, seed=seed, workers=1, out_dir=str(b))
    res = subprocess.run(
        [sys.executable, MAIN, "run", str(scenario), "--runs", str(runs), "--seed", str(seed)]
        + ["--workers", "2", "--out", str(c), "--no-plots", "--json"],
        capture_output=True,
        text=True,
        timeout=300,
        env=_env(PYTHONHASHSEED="777"),
    )
    assert res.returncode == 0 and res.stderr == "", res.stderr
    runs_a = (a / "runs.jsonl").read_bytes()
    assert runs_a == (b / "runs.jsonl").read_bytes() == (c / "runs.jsonl").read_bytes()
    assert len(runs_a.splitlines()) == runs
    sums = [_strip_paths((d / "summary.json").read_text(), d) for d in (a, b, c)]
    assert sums[0] == sums[1] == sums[2]
    assert _strip_paths(res.stdout, c) == sums[0]
    # Each line's seed replays that run alone.
    first = json.loads(runs_a.splitlines()[0])
    assert first["seed"] == run_seeds(seed, runs)[0]


@pytest.mark.parametrize("scenario", SCENARIOS, ids=lambda p: p.name)
def test_event_logs_replay_to_the_final_state(scenario: Path, tmp_path: Path, capsys) -> None:
    sc = load_scenario(scenario)
    for run_seed in run_seeds(sc.seed, 3):
        log = tmp_path / f"{run_seed}.jsonl"
        assert (
            main(
                ["run", str(scenario), "--run-seed", str(run_seed), "--log", str(log)] + ["--json"]
            )
            == 0
        )
        played = json.loads(capsys.readouterr().out)
        states, outcome = replay_states(read_log(str(log)))
        assert outcome == played["outcome"]
        assert {k: v.to_dict() for k, v in states.items()} == played["final"]
        # The same seed again: the same log, byte for byte.
        again = tmp_path / "again.jsonl"
        assert main(["run", str(scenario), "--run-seed", str(run_seed), "--log", str(again)]) == 0
        capsys.readouterr()
        assert again.read_bytes() == log.read_bytes()


# =========================================================================== 4. crash safety


def _die_once(marker: str, path: str, overrides: Any, items: list[tuple[int, int]]) -> Any:
    """A chunk function whose first call kills its worker process outright."""
    try:
        fd = os.open(marker, os.O_CREAT | os.O_EXCL | os.O_WRONLY)
    except FileExistsError:
        return run_chunk(path, overrides, items)
    os.close(fd)
    os._exit(9)  # as if killed: no exception, no clean-up, the pool breaks


def _die_always(path: str, overrides: Any, items: list[tuple[int, int]]) -> Any:
    os._exit(9)


def test_a_worker_that_dies_is_retried(tmp_path: Path) -> None:
    calm = run_batch(CHASE, runs=75, seed=13, workers=1, out_dir=str(tmp_path / "calm"))
    marker = tmp_path / "died"
    rough = run_batch(
        CHASE,
        runs=75,
        seed=13,
        workers=2,
        out_dir=str(tmp_path / "rough"),
        chunk_fn=functools.partial(_die_once, str(marker)),
    )
    assert marker.exists(), "the worker never died: the test tested nothing"
    assert {k: v for k, v in rough.items() if k != "results"} == {
        k: v for k, v in calm.items() if k != "results"
    }
    assert (tmp_path / "rough" / "runs.jsonl").read_bytes() == (
        tmp_path / "calm" / "runs.jsonl"
    ).read_bytes()


#: 40 KB a run: a chunk's results (1 MB) are more than a socket holds, so a worker sending
#: them waits, half-way through, for the parent to read.
PAD = "x" * 40_000


def _padded(path: str, overrides: Any, items: list[tuple[int, int]]) -> Any:
    # A string of its own per run: pickle would send one string used 25 times only once.
    return [{**r, "pad": f"{r['run']:08d}{PAD}"} for r in run_chunk(path, overrides, items)]


def _die_mid_send(folder: str, path: str, overrides: Any, items: list[tuple[int, int]]) -> Any:
    """:func:`_padded`; the first call for run 50 on also kills its worker a moment after it
    starts sending, while the parent is busy (``busy`` exists, :func:`_busy_at_25`): killed
    half-way through the message."""
    results = _padded(path, overrides, items)
    if items[0][0] < 50:
        return results
    try:
        fd = os.open(os.path.join(folder, "died"), os.O_CREAT | os.O_EXCL | os.O_WRONLY)
    except FileExistsError:
        return results
    os.close(fd)
    deadline = time.time() + 10
    while not os.path.exists(os.path.join(folder, "busy")) and time.time() < deadline:
        time.sleep(0.005)
    threading.Timer(0.1, os._exit, (9,)).start()
    return results


def _busy_at_25(folder: str) -> Any:
    """A progress function that keeps the parent from reading for 0.5 s after run 25."""

    def progress(done: int, n: int, counts: dict[str, int]) -> None:
        if done == 25:
            Path(folder, "busy").touch()
            time.sleep(0.5)

    return progress


def test_a_worker_killed_half_way_through_sending_is_retried(tmp_path: Path) -> None:
    """The parent holds no end of a worker's socket but its own: a worker killed half-way
    through sending its results ends the socket, the half message is dropped, and the chunk
    runs again elsewhere (the parent never waits for the rest of it)."""
    calm = tmp_path / "calm"
    run_batch(CHASE, runs=150, seed=13, workers=1, out_dir=str(calm), chunk_fn=_padded)
    rough = tmp_path / "rough"
    t = time.monotonic()
    run_batch(
        CHASE,
        runs=150,
        seed=13,
        workers=2,
        out_dir=str(rough),
        chunk_fn=functools.partial(_die_mid_send, str(tmp_path)),
        progress=_busy_at_25(str(tmp_path)),
    )
    assert (tmp_path / "died").exists(), "no worker died: the test tested nothing"
    assert time.monotonic() - t < 60
    assert (rough / "runs.jsonl").read_bytes() == (calm / "runs.jsonl").read_bytes()


def test_workers_that_keep_dying_are_reported(tmp_path: Path) -> None:
    out = tmp_path / "dying"
    with pytest.raises(ScenarioError) as err:
        run_batch(CHASE, runs=60, seed=1, workers=2, out_dir=str(out), chunk_fn=_die_always)
    msg = str(err.value)
    assert "\n" not in msg and "run again with resume" in msg and "3 chunks" in msg
    assert err.value.naming(FLAGS).endswith("run again with --resume")  # the command line's
    assert not (out / "summary.json").exists()
    assert read_runs(str(out / "runs.jsonl")) == []


def test_summary_is_written_whole_or_not_at_all(tmp_path: Path, monkeypatch) -> None:
    out = tmp_path / "atomic"
    first = run_batch(CHASE, runs=5, seed=1, out_dir=str(out))
    assert json.loads((out / "summary.json").read_text()) == first
    real_fsync = os.fsync

    def disk_full_on_summary(fd: int) -> None:
        if os.readlink(f"/proc/self/fd/{fd}").endswith("summary.json.tmp"):
            raise OSError(28, "No space left on device")
        real_fsync(fd)

    monkeypatch.setattr(os, "fsync", disk_full_on_summary)
    with pytest.raises(OSError):
        run_batch(CHASE, runs=5, seed=2, out_dir=str(out), force=True)
    # The write failed half-way: no summary (not the old batch's, not half the new one's),
    # no temporary file left behind; the runs themselves are complete (.lock: the folder's).
    assert sorted(p.name for p in out.iterdir()) == [".lock", "batch.json", "runs.jsonl"]
    assert len(read_runs(str(out / "runs.jsonl"))) == 5
    monkeypatch.undo()
    again = run_batch(CHASE, runs=5, seed=2, out_dir=str(out), resume=True)
    assert json.loads((out / "summary.json").read_text()) == again and again["seed"] == 2


def read_runs_no_truncate(path: Path) -> list[bytes]:
    """Complete lines of a file another process is still appending to (read only)."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return []
    return data[: data.rfind(b"\n") + 1].splitlines()


def test_killed_batch_leaves_no_stale_or_partial_summary(tmp_path: Path) -> None:
    out = tmp_path / "kill"
    run_batch(CHASE, runs=5, seed=1, out_dir=str(out))  # an old, complete batch
    proc = subprocess.Popen(
        [sys.executable, MAIN, "run", CHASE, "--runs", "2000", "--seed", "2", "--out", str(out)]
        + ["--no-plots", "--force"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env=_env(),
    )
    summary = out / "summary.json"
    seen: list[Any] = []
    deadline = time.time() + 60
    try:
        while time.time() < deadline and proc.poll() is None:
            if summary.exists():
                with contextlib.suppress(FileNotFoundError):
                    seen.append(json.loads(summary.read_text())["seed"])  # never half a file
            if len(read_runs_no_truncate(out / "runs.jsonl")) > 30:
                break
            time.sleep(0.02)
    finally:
        proc.kill()
        proc.wait()
    assert 30 < len(read_runs_no_truncate(out / "runs.jsonl")) < 2000, "not killed mid-batch"
    assert seen, "the old summary was never seen: the test tested nothing"
    # The old batch's summary went when the new batch started: no stale answer beside
    # the new batch's runs (and every read above was whole JSON).
    assert not summary.exists()
