"""`tacgrid info` per CONTRACT.md, and the command line's error discipline."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import tmxtext
from conftest import CORPUS, ROOT

from engine.cli import main

INFO_KEYS = {
    "orientation",
    "grid",
    "stagger_axis",
    "stagger_index",
    "width",
    "height",
    "cell_size",
    "cell_unit",
    "cells",
    "spawns",
    "exits",
}


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_info_json_shape(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    p = tmxtext.write(
        tmp_path / "m.tmx", ["..#", "~.."], properties={"cell_size": 2.0, "cell_unit": "m"}
    )
    code, out, err = run(capsys, "info", str(p), "--json")
    assert code == 0 and err == ""
    doc = json.loads(out)
    assert INFO_KEYS <= set(doc)
    assert doc["grid"] == "square" and doc["orientation"] == "orthogonal"
    assert (doc["width"], doc["height"], doc["cell_size"], doc["cell_unit"]) == (3, 2, 2.0, "m")
    assert doc["cells"]["walk"] == 4 and doc["cells"]["blocked"] == 1 and doc["cells"]["swim"] == 1


@pytest.mark.parametrize(
    ("kwargs", "grid", "axis", "index"),
    [
        ({"orientation": "hexagonal", "tile": (14, 12), "hexside": 6}, "hex", "y", "odd"),
        (
            {"orientation": "hexagonal", "tile": (60, 60), "hexside": 30, "stagger": ("x", "odd")},
            "hex",
            "x",
            "odd",
        ),
        ({"orientation": "staggered", "tile": (64, 32)}, "staggered", "y", "odd"),
        ({"orientation": "isometric", "tile": (64, 32)}, "square", None, None),
    ],
    ids=["hex-y", "hex-x", "staggered", "isometric"],
)
def test_info_on_every_orientation(capsys, tmp_path: Path, kwargs, grid, axis, index) -> None:
    p = tmxtext.write(tmp_path / "m.tmx", ["..#.", "~..."], **kwargs)
    code, out, _ = run(capsys, "info", str(p), "--json")
    doc = json.loads(out)
    assert code == 0 and doc["grid"] == grid and doc["orientation"] == kwargs["orientation"]
    assert (doc["stagger_axis"], doc["stagger_index"]) == (axis, index)
    assert (doc["width"], doc["height"], doc["cells"]["walk"]) == (4, 2, 6)


@pytest.mark.corpus
@pytest.mark.parametrize(
    ("rel", "grid", "axis", "index"),
    [
        ("tiled-examples/hexagonal-mini.tmx", "hex", "y", "odd"),
        ("tiled-examples/test_hexagonal_tile_60x60x30.tmx", "hex", "x", "odd"),
        ("tiled-examples/isometric_staggered_grass_and_water.tmx", "staggered", "y", "odd"),
        ("tiled-examples/isometric_grass_and_water.tmx", "square", None, None),
    ],
)
def test_info_on_maps_made_elsewhere(capsys, rel, grid, axis, index) -> None:
    code, out, _ = run(capsys, "info", str(CORPUS / rel), "--json")
    doc = json.loads(out)
    assert code == 0 and doc["grid"] == grid
    assert (doc["stagger_axis"], doc["stagger_index"]) == (axis, index)


def test_info_plain_text_of_a_drawn_hex_map(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    p = tmxtext.write(
        tmp_path / "h.tmx", ["." * 20] * 20, orientation="hexagonal", tile=(14, 12), hexside=6
    )
    code, out, _ = run(capsys, "info", str(p))
    assert code == 0 and "pointy-top" in out and "20 x 20 cells" in out and "walk" in out


@pytest.mark.corpus
def test_info_plain_text(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "info", str(CORPUS / "tiled-examples/hexagonal-mini.tmx"))
    assert code == 0 and "pointy-top" in out and "20 x 20 cells" in out and "walk" in out


#: Files the error cases below read, written into the test's folder: (name, content).
BROKEN_FILES = {
    "garbage": ("invalid_format.garbage", "this is not a map at all\n"),
    "no tileset": (
        "tileset_not_found.tmx",
        tmxtext.tmx(["..."]).replace(
            '<tileset firstgid="1"', '<tileset firstgid="1" source="nowhere/terrain.tsx"', 1
        ),
    ),
}


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        (["info", "/no/such/map.tmx"], "map file not found"),
        (["info"], "the following arguments are required: map"),
        (["infi", "x.tmx"], "did you mean 'info'"),
        (["info", "{garbage}"], "invalid_format.garbage: "),
        (["info", "{no tileset}"], "tileset 'nowhere/terrain.tsx' not found"),
    ],
)
def test_errors_are_one_line_exit_2(capsys, tmp_path: Path, argv, expected) -> None:
    files = {}
    for key, (name, content) in BROKEN_FILES.items():
        files[key] = tmp_path / name
        files[key].write_text(content)
    argv = [str(files[a[1:-1]]) if a.startswith("{") else a for a in argv]
    code, out, err = run(capsys, *argv)
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and expected in err and "Traceback" not in err
    assert "file not found" not in err or "/no/such" in argv[-1]


@pytest.mark.corpus
@pytest.mark.parametrize(
    ("rel", "expected"),
    [
        ("pytiled-parser/invalid_format.garbage", "invalid_format.garbage"),
        ("tiled-tests/errors/tileset_not_found.tmx", "tileset_not_found.tmx"),
    ],
)
def test_corpus_errors_are_one_line_exit_2(capsys, rel: str, expected: str) -> None:
    code, out, err = run(capsys, "info", str(CORPUS / rel))
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and expected in err and "Traceback" not in err
    assert "map file not found" not in err


def test_debug_shows_the_traceback(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(capsys, "--debug", "info", "/no/such/map.tmx")
    assert code == 2 and "Traceback" in err


def test_main_py_is_the_same_program(tmp_path: Path) -> None:
    p = tmxtext.write(tmp_path / "m.tmx", ["..."])
    res = subprocess.run(
        [sys.executable, str(ROOT / "main.py"), "info", str(p), "--json"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert res.returncode == 0, res.stderr
    assert json.loads(res.stdout)["width"] == 3
    assert res.stderr == ""
