"""One read per file per session: the viewer and `tacgrid render` draw the map that the
scenario (or bare map) already read, instead of reading the .tmx a second time."""

from __future__ import annotations

import builtins
import io
import os
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from conftest import ROOT

import engine.tiled.source
from engine.cli import main

CHASE_YAML = str(ROOT / "scenarios" / "chase.yaml")
CHASE_TMX = str(ROOT / "maps" / "chase.tmx")
#: Files a session should read once each: scenarios, maps, tilesets, templates.
READ_ONCE = (".yaml", ".yml", ".tmx", ".tsx", ".tsj", ".tx")


class Reads:
    """Counts, per real path, the files opened and the XML documents parsed."""

    def __init__(self) -> None:
        self.opened: Counter[str] = Counter()
        self.parsed: Counter[str] = Counter()

    def check_once(self, *must_read: str) -> None:
        """Each of ``must_read`` was opened once (a .tmx also parsed once), and no other
        scenario, map, tileset or template file was read more than once."""
        for path in must_read:
            assert self.opened[os.path.realpath(path)] == 1, (path, dict(self.opened))
            if path.endswith(".tmx"):
                assert self.parsed[os.path.realpath(path)] == 1, (path, dict(self.parsed))
        again = {p: n for p, n in self.opened.items() if p.endswith(READ_ONCE) and n > 1}
        assert not again, again
        assert all(n == 1 for n in self.parsed.values()), dict(self.parsed)


@pytest.fixture
def reads(monkeypatch: pytest.MonkeyPatch) -> Reads:
    counts = Reads()
    real_open = builtins.open
    real_read_xml = engine.tiled.source.read_xml

    def counting_open(file: Any, *args: Any, **kwargs: Any) -> Any:
        if isinstance(file, str | bytes | os.PathLike):
            counts.opened[os.path.realpath(os.fsdecode(file))] += 1
        return real_open(file, *args, **kwargs)

    def counting_read_xml(path: str, *args: Any, **kwargs: Any) -> Any:
        counts.parsed[os.path.realpath(path)] += 1
        return real_read_xml(path, *args, **kwargs)

    monkeypatch.setattr(builtins, "open", counting_open)
    monkeypatch.setattr(io, "open", counting_open)
    monkeypatch.setattr(engine.tiled.source, "read_xml", counting_read_xml)
    return counts


def _run(reads: Reads, argv: list[str]) -> None:
    assert main(argv) == 0
    assert reads.opened, "the counting hooks saw no file at all"


def test_view_scenario_reads_each_file_once(reads: Reads) -> None:
    _run(reads, ["view", CHASE_YAML, "--frames", "1"])
    reads.check_once(CHASE_YAML, CHASE_TMX)


def test_view_bare_map_reads_it_once(reads: Reads) -> None:
    _run(reads, ["view", CHASE_TMX, "--frames", "1"])
    reads.check_once(CHASE_TMX)


@pytest.mark.parametrize("source", [CHASE_YAML, CHASE_TMX])
def test_render_reads_each_file_once(reads: Reads, source: str, tmp_path: Path) -> None:
    _run(reads, ["render", source, "--out", str(tmp_path / "out.png")])
    reads.check_once(*{source, CHASE_TMX})


def test_replay_reads_each_file_once(tmp_path: Path, request: pytest.FixtureRequest) -> None:
    log = str(tmp_path / "run.jsonl")
    assert main(["run", CHASE_YAML, "--run-seed", "1", "--log", log]) == 0
    reads: Reads = request.getfixturevalue("reads")  # count from here on
    _run(reads, ["replay", log, "--frames", "1"])
    reads.check_once(CHASE_YAML, CHASE_TMX)


def test_counting_hooks_see_a_second_read(reads: Reads) -> None:
    """The hooks themselves: two loads of a map are two reads."""
    from engine.tiled import load_map

    load_map(CHASE_TMX)
    load_map(CHASE_TMX)
    assert reads.opened[os.path.realpath(CHASE_TMX)] == 2
    assert reads.parsed[os.path.realpath(CHASE_TMX)] == 2
