"""Hostile input, round two (issue 42): one reader for every file, every picture's size
known before it is decoded, sessions and logs that name no files on their own, and
messages that a file cannot break into lines or use to drive the terminal.

The hostile files are made here in ``tmp_path``; FIFOs run under an alarm (or in a
subprocess with a timeout) so a regression fails instead of hanging the suite.
"""

from __future__ import annotations

import base64
import contextlib
import io
import json
import os
import re
import signal
import struct
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import ROOT
from test_hostile_inputs import (
    _execute,
    csv_layer,
    deflate_bomb,
    png_header,
    tmx,
)

from engine.cli import main
from engine.errors import ArgumentError, MapError, printable
from engine.sources import (
    MAX_PICTURE_PIXELS,
    PictureProblem,
    clip,
    iter_lines,
    picture_size,
    read_json_file,
)

CHASE = ROOT / "scenarios" / "chase.yaml"
SECRET = "root:$6$SECRETHASH:19000:0:99999:7:::"
ENGINE = ROOT / "engine"

# --------------------------------------------------------------------------- helpers


@contextlib.contextmanager
def alarm(seconds: int = 20) -> Iterator[None]:
    """Fail, not hang, when a reader blocks (a FIFO opened for reading waits forever)."""

    def ring(*_: Any) -> None:
        raise AssertionError(f"no answer within {seconds} s: a reader blocked")

    old = signal.signal(signal.SIGALRM, ring)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)


def one_line(capsys: pytest.CaptureFixture[str], args: list[str], *expected: str) -> str:
    """``main(args)`` exits 2 with one error line holding each of ``expected``."""
    with alarm():
        rc = main(args)
    out, err = capsys.readouterr()
    assert rc == 2, (rc, out, err)
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    for piece in expected:
        assert piece in lines[0], lines[0]
    assert "Traceback" not in err
    return lines[0]


def write(path: Path, data: str | bytes) -> Path:
    if isinstance(data, bytes):
        path.write_bytes(data)
    else:
        path.write_text(data, encoding="utf-8")
    return path


def image_layer(source: str) -> str:
    return f'<imagelayer id="7" name="pic"><image source="{source}"/></imagelayer>'


# --------------------------------------------------------------------------- pictures


def tga(width: int, height: int, rle: bool = False) -> bytes:
    kind = 10 if rle else 2
    return bytes([0, 0, kind, 0, 0, 0, 0, 0, 0, 0, 0, 0]) + struct.pack(
        "<HHBB", width, height, 32, 8
    )


def gif(screen: tuple[int, int], frame: tuple[int, int]) -> bytes:
    head = b"GIF89a" + struct.pack("<HHBBB", *screen, 0, 0, 0)
    desc = b"\x2c" + struct.pack("<HHHHB", 0, 0, *frame, 0)
    return head + desc + b"\x02\x02\x44\x01\x00\x3b"


def webp_vp8x(width: int, height: int) -> bytes:
    body = b"VP8X" + struct.pack("<I", 10) + bytes(4)
    body += (width - 1).to_bytes(3, "little") + (height - 1).to_bytes(3, "little")
    return b"RIFF" + struct.pack("<I", 4 + len(body)) + b"WEBP" + body


def jpeg_sof_far(width: int, height: int, pad: int = 70_000) -> bytes:
    """A JPEG whose frame header comes after ``pad`` bytes of APP segments (past 64 KB)."""
    app = b""
    while len(app) < pad:
        app += b"\xff\xe1" + struct.pack(">H", 65000) + bytes(64998)
    sof = b"\xff\xc0" + struct.pack(">HBHHB", 11, 8, height, width, 1) + b"\x01\x11\x00"
    return b"\xff\xd8" + app + sof + b"\xff\xd9"


BOMBS = {
    # Each of these decoded to 1.6-3.5 GB before (21000^2 x 4 bytes for the TGA and GIF).
    "bomb.tga": tga(21000, 21000),
    "bomb-rle.tga": tga(21000, 21000, rle=True),
    "bomb.gif": gif((1, 1), (21000, 21000)),
    "bomb.webp": webp_vp8x(1 << 24, 1 << 24),
    "bomb.jpg": jpeg_sof_far(65000, 65000),
    "bomb.png": png_header(50000, 50000),
    "bomb.bmp": b"BM" + bytes(12) + struct.pack("<Iii", 40, 60000, -60000) + bytes(28),
    "bomb.svg": b'<svg xmlns="http://www.w3.org/2000/svg" width="60000" height="60000"/>',
    "bomb.xpm": b'/* XPM */\nstatic char *x[] = {"60000 60000 1 1", "a c #000"};\n',
}


@pytest.mark.parametrize("name", sorted(BOMBS))
def test_every_picture_bomb_is_refused_from_its_header(name: str) -> None:
    with pytest.raises(PictureProblem) as info:
        picture_size(BOMBS[name], name)
    text = str(info.value)
    if name.endswith((".svg", ".xpm")):
        assert "not a picture format tacgrid reads" in text
    else:
        assert f"tacgrid loads at most {MAX_PICTURE_PIXELS} pixels" in text


@pytest.mark.parametrize("ext", ["png", "bmp", "tga", "jpg"])
def test_real_pictures_are_measured_as_the_decoder_decodes_them(ext: str) -> None:
    pygame = pytest.importorskip("pygame")
    from engine.viewer.images import decode_picture

    surface = pygame.Surface((37, 21), pygame.SRCALPHA, 32)
    surface.fill((10, 200, 30, 255))
    buf = io.BytesIO()
    pygame.image.save(surface, buf, f"x.{ext}")
    data = buf.getvalue()
    kind, w, h = picture_size(data, f"x.{ext}")
    assert (w, h) == (37, 21)
    assert decode_picture(data, f"x.{ext}").get_size() == (37, 21)
    if ext == "tga":  # pygame writes TGA run-length encoded: RLE is read too
        assert data[2] == 10 and kind == "TGA"


def test_gif_is_sized_by_its_largest_frame_and_jpeg_by_a_far_frame_header() -> None:
    assert picture_size(gif((4, 3), (9, 8)))[1:] == (9, 8)
    assert picture_size(gif((40, 30), (9, 8)))[1:] == (40, 30)
    assert picture_size(jpeg_sof_far(33, 44))[1:] == (33, 44)


def test_a_picture_format_not_read_here_is_never_decoded() -> None:
    pytest.importorskip("pygame")
    from engine.viewer.images import decode_picture

    for name in ("bomb.svg", "bomb.xpm"):
        with pytest.raises(PictureProblem, match="not a picture format"):
            decode_picture(BOMBS[name], name)
    # TGA has no signature: only a .tga name makes bytes a TGA.
    with pytest.raises(PictureProblem, match="not a picture format"):
        picture_size(tga(2, 2), "x.png")


def render_args(d: Path, body: str, tileset: str | None = None) -> list[str]:
    kw = {} if tileset is None else {"tileset": tileset}
    m = write(d / "m.tmx", tmx(csv_layer() + body, **kw))
    return ["render", str(m), "--out", str(d / "out.png")]


@pytest.mark.parametrize("name", ["bomb.tga", "bomb.gif"])
def test_an_image_layer_bomb_renders_without_it_in_bounded_memory(
    tmp_path: Path, name: str
) -> None:
    write(tmp_path / name, BOMBS[name])
    res = _execute(render_args(tmp_path, image_layer(name)), tmp_path)  # 1 GB, 20 s
    assert res.rc == 0, res.stderr
    assert (tmp_path / "out.png").exists()
    # The picture left out is said once, in one note line, never a traceback.
    lines = res.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("tacgrid: note: image '" + name + "'"), lines


@pytest.mark.parametrize("name", sorted(BOMBS))
def test_no_bomb_reaches_the_decoder(
    tmp_path: Path, name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    pygame = pytest.importorskip("pygame")
    from engine.viewer import render

    decoded: list[Any] = []
    real = pygame.image.load

    def spy(*args: Any, **kw: Any) -> Any:
        decoded.append(args[0])
        return real(*args, **kw)

    monkeypatch.setattr(pygame.image, "load", spy)
    write(tmp_path / name, BOMBS[name])
    m = write(tmp_path / "m.tmx", tmx(csv_layer() + image_layer(name)))
    model, _tf = render.load_for_render(str(m))
    assert decoded == []  # the header said no before any pixel
    assert any(name in note for note in model.notes)


def test_a_map_read_for_drawing_refuses_a_bad_picture_in_one_line(tmp_path: Path) -> None:
    pytest.importorskip("pygame")
    from engine.tiled import read_tiled
    from engine.viewer.render import image_loader

    write(tmp_path / "bomb.gif", BOMBS["bomb.gif"])
    m = write(tmp_path / "m.tmx", tmx(csv_layer() + image_layer("bomb.gif")))
    with pytest.raises(MapError) as info:
        read_tiled(m, image_loader=image_loader)
    text = str(info.value)
    assert "bomb.gif" in text and "GIF picture of 21000x21000" in text
    assert "Out of memory" not in text and "\n" not in text
    # The viewer's read (missing images skipped) says so in a note.
    tf = read_tiled(m, image_loader=image_loader, missing_images="skip")
    assert any("bomb.gif" in n for n in tf.model.notes)


def test_the_pictures_of_one_map_share_a_budget(tmp_path: Path) -> None:
    pytest.importorskip("pygame")
    from engine.tiled import read_tiled
    from engine.tiled.pytmx_bridge import MAP_PICTURE_PIXELS
    from engine.viewer.render import image_loader

    side = 8192
    assert 3 * side * side > MAP_PICTURE_PIXELS >= 2 * side * side
    layers = ""
    for i in range(3):  # headers only: each would be 256 MB decoded, three 768 MB
        write(tmp_path / f"p{i}.png", png_header(side, side))
        layers += f'<imagelayer id="{10 + i}" name="p{i}"><image source="p{i}.png"/></imagelayer>'
    m = write(tmp_path / "m.tmx", tmx(csv_layer() + layers))
    seen: list[str] = []

    def counting(filename: str, colorkey: Any = None, **kw: Any) -> Any:
        seen.append(os.path.basename(filename))
        return lambda *a: None

    with pytest.raises(MapError, match="pictures past"):
        read_tiled(m, image_loader=counting)
    assert seen == ["p0.png", "p1.png"]  # the third never reached the loader
    assert image_loader  # the viewer's loader is the one wrapped in real use


# --------------------------------------------------------------------------- FIFOs


def test_fifo_pictures_and_pytmx_paths_never_block(tmp_path: Path) -> None:
    pytest.importorskip("pygame")
    from engine.tiled import read_tiled
    from engine.viewer.render import image_loader

    os.mkfifo(tmp_path / "pipe.png")
    prop_tileset = (
        '<tileset firstgid="1" name="t" tilewidth="32" tileheight="32" tilecount="1" '
        'columns="1"><tile id="0"><properties><property name="move" value="walk"/>'
        '<property name="source" value="pipe.png"/></properties></tile></tileset>'
    )
    maps = {
        "layer.tmx": tmx(csv_layer() + image_layer("pipe.png")),
        "prop.tmx": tmx(csv_layer(), tileset=prop_tileset),
    }
    for name, text in maps.items():
        m = write(tmp_path / name, text)
        with alarm(), pytest.raises(MapError, match="FIFO"):
            read_tiled(m, image_loader=image_loader)


def test_a_tileset_nested_in_an_external_tileset_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    os.mkfifo(tmp_path / "inner.tsx")
    write(
        tmp_path / "outer.tsx",
        '<tileset name="n" source="inner.tsx" tilewidth="32" tileheight="32" tilecount="1" '
        'columns="1"/>',
    )
    m = write(
        tmp_path / "m.tmx", tmx(csv_layer(), tileset='<tileset firstgid="1" source="outer.tsx"/>')
    )
    one_line(capsys, ["render", str(m), "--out", str(tmp_path / "o.png")], "inner.tsx", "m.tmx")


def test_batch_files_that_are_fifos_are_refused(tmp_path: Path) -> None:
    for name in ("sweep.json", "batch.json", "summary.json"):
        os.mkfifo(tmp_path / name)
        with alarm(), pytest.raises(ArgumentError, match="FIFO"):
            read_json_file(tmp_path / name, "batch", ArgumentError)
    os.mkfifo(tmp_path / "runs.jsonl")
    with alarm(), pytest.raises(ArgumentError, match="FIFO"):
        list(iter_lines(tmp_path / "runs.jsonl", "runs", ArgumentError))


def test_sweep_resume_on_a_fifo_sweep_json(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "sw"
    out.mkdir()
    os.mkfifo(out / "sweep.json")
    args = ["sweep", str(CHASE), "--vary", "turns=2,3", "--runs", "2", "--out", str(out)]
    one_line(capsys, [*args, "--resume", "--quiet"], "sweep.json")


def test_report_charts_on_a_fifo_runs_jsonl(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    out = tmp_path / "b"
    assert main(["run", str(CHASE), "--runs", "3", "--out", str(out), "--quiet", "--no-plots"]) == 0
    capsys.readouterr()
    (out / "runs.jsonl").unlink()
    os.mkfifo(out / "runs.jsonl")
    pytest.importorskip("matplotlib")
    one_line(capsys, ["report", str(out), "--charts"], "runs.jsonl", "FIFO")


def test_report_charts_never_cuts_a_torn_runs_jsonl(
    tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    pytest.importorskip("matplotlib")
    out = tmp_path / "b"
    assert main(["run", str(CHASE), "--runs", "3", "--out", str(out), "--quiet", "--no-plots"]) == 0
    runs = out / "runs.jsonl"
    torn = runs.read_bytes() + b'{"run": 3, "outc'
    runs.write_bytes(torn)
    assert main(["report", str(out), "--charts"]) == 0
    assert runs.read_bytes() == torn  # an input is never written to


def test_a_runs_line_is_read_only_up_to_its_cap(tmp_path: Path) -> None:
    big = write(tmp_path / "runs.jsonl", b'{"run": 0, "x": "' + b"a" * 4096 + b'"}\n')
    with pytest.raises(ArgumentError, match="line 1 is longer"):
        list(iter_lines(big, "runs", ArgumentError, line_limit=1024))


# --------------------------------------------------------------------------- sessions


@pytest.fixture
def saved_session(tmp_path: Path) -> Iterator[Path]:
    pygame = pytest.importorskip("pygame")
    from engine.viewer.launch import open_table

    v = open_table(str(CHASE), size=(640, 480))
    path = tmp_path / "game.tacgrid"
    v.table.save(str(path))
    pygame.quit()
    yield path


def edit(path: Path, change: Any) -> None:
    data = json.loads(path.read_text())
    change(data)
    path.write_text(json.dumps(data))


def test_a_sessions_dice_bomb_is_refused(
    saved_session: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bomb = base64.b64encode(deflate_bomb(2 << 30, 15)).decode("ascii")  # ~2 MB -> 2 GB

    def plant(data: dict[str, Any]) -> None:
        data["dice"][0]["unread"] = bomb

    edit(saved_session, plant)
    one_line(
        capsys,
        ["view", str(saved_session), "--frames", "1"],
        "game.tacgrid",
        "damaged",
        "inflates past",
    )


@pytest.mark.parametrize("how", ["absolute", "relative", "digest-removed", "digest-wrong"])
def test_a_session_cannot_make_view_read_and_quote_another_file(
    saved_session: Path, capsys: pytest.CaptureFixture[str], how: str
) -> None:
    secret = write(saved_session.parent.parent / f"shadow-{how}", SECRET + "\n")

    def point(data: dict[str, Any]) -> None:
        src = data["source"]
        src["path"] = str(secret)
        src.pop("relative")
        if how == "relative":
            src["relative"] = f"../{secret.name}"
        if how == "digest-removed":
            del src["digest"]
        if how == "digest-wrong":
            src["digest"] = "0123456789abcdef"

    edit(saved_session, point)
    line = one_line(capsys, ["view", str(saved_session), "--frames", "1"], "game.tacgrid")
    assert "SECRET" not in line and "root:" not in line
    assert ("no digest" in line) if how == "digest-removed" else ("digest differs" in line)


def test_a_saved_session_still_opens_with_its_digest(saved_session: Path) -> None:
    data = json.loads(saved_session.read_text())
    assert re.fullmatch("[0-9a-f]{16}", data["source"]["digest"])
    assert main(["view", str(saved_session), "--frames", "1"]) == 0


# --------------------------------------------------------------------------- event logs


def logged(tmp_path: Path) -> Path:
    log = tmp_path / "run.jsonl"
    assert main(["run", str(CHASE), "--run-seed", "3", "--log", str(log), "--json"]) == 0
    return log


def point_log(log: Path, secret: Path, digest: str | None) -> None:
    lines = log.read_text().splitlines()
    start = json.loads(lines[0])
    start["scenario"] = start["scenario_abs"] = str(secret)
    start.pop("digest", None)
    if digest is not None:
        start["digest"] = digest
    log.write_text("\n".join([json.dumps(start), *lines[1:]]) + "\n")


@pytest.mark.parametrize("force", [False, True])
def test_a_log_cannot_make_replay_read_and_quote_another_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], force: bool
) -> None:
    log = logged(tmp_path)
    capsys.readouterr()
    secret = write(tmp_path / "shadow", SECRET + "\n")
    point_log(log, secret, None)  # digest removed
    args = ["replay", str(log), "--frames", "1", *(["--force"] if force else [])]
    line = one_line(capsys, args, "run.jsonl", "no digest")
    assert "SECRET" not in line
    # The text needs no files: it replays from the events alone and reads nothing else.
    with alarm():
        assert main(["replay", str(log), "--text"]) == 0
    assert "SECRET" not in capsys.readouterr().out
    point_log(log, secret, "0123456789abcdef")  # a digest of some other file
    line = one_line(capsys, args, "run.jsonl")
    assert "SECRET" not in line and "root:" not in line


# --------------------------------------------------------------------------- messages

NASTY = "x\x1b[2J\x07y\u2028z\x85w\rv"


def test_printable_escapes_controls_and_separators() -> None:
    out = printable(NASTY + "\nq")
    assert out == "x\\x1b[2J\\x07y\\u2028z\\u0085w\\rv\\nq"
    assert len(out.splitlines()) == 1 and out.isprintable()
    assert printable("a\nb", lines=True) == "a\nb"
    assert clip(NASTY) == printable(NASTY)


def json_map(folder: Path, spawn: str) -> Path:
    """The shipped hex map as JSON, its first spawn renamed ``spawn``."""
    doc = json.loads((ROOT / "maps" / "hex_flat.tmj").read_text())
    doc["tilesets"][0]["source"] = str(ROOT / "maps" / doc["tilesets"][0]["source"])
    layer = next(lay for lay in doc["layers"] if lay["type"] == "objectgroup")
    layer["objects"][0]["name"] = spawn
    return write(folder / f"m{len(spawn)}.tmj", json.dumps(doc))


def test_info_prints_a_maps_names_on_their_own_lines(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["info", str(json_map(tmp_path, "scout1"))]) == 0
    expected = capsys.readouterr().out.splitlines()
    name = "ev\x1b]0;pwned\x07il\u2028two\x85three\nfour\rfive"
    assert main(["info", str(json_map(tmp_path, name))]) == 0
    out = capsys.readouterr().out
    assert len(out.splitlines()) == len(expected)  # the spawns line stays one line
    assert all(line.isprintable() for line in out.splitlines())
    assert "ev\\x1b]0;pwned\\x07il\\u2028two\\u0085three\\nfour\\rfive" in out


def test_an_error_quoting_a_file_stays_one_line_without_controls(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    s = write(tmp_path / "s.yaml", 'map: m.tmx\n"bad\\e[2J\\a\\L\\N\\r": 1\n')
    line = one_line(capsys, ["run", str(s), "--run-seed", "1"], "s.yaml")
    assert line.isprintable()


def test_replay_text_escapes_what_the_log_holds(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    log = logged(tmp_path)
    capsys.readouterr()
    text = log.read_text().replace('"chase.yaml', '"ch\\u001b[2Ja\\u2028se\\n.yaml')
    log.write_text(text)
    assert main(["replay", str(log), "--text"]) == 0
    out = capsys.readouterr().out
    assert all(line.isprintable() for line in out.splitlines())


def test_pytmx_logs_nothing_and_libpng_warnings_are_captured(
    capfd: pytest.CaptureFixture[str],
) -> None:
    pytest.importorskip("pygame")
    from engine.safeio import quiet_stderr
    from engine.tiled.pytmx_bridge import _quiet_pytmx

    _quiet_pytmx()  # as every parse_with_pytmx does
    import logging

    logging.getLogger("pytmx.pytmx").error("pytmx would say this")
    with quiet_stderr():
        os.write(2, b"libpng warning: iCCP: known incorrect sRGB profile\n")
    assert capfd.readouterr().err == ""


# --------------------------------------------------------------------------- one reader


#: What opens, reads or decodes a file in the engine.
READERS = re.compile(
    r"(?<![.\w])(?<!def )open\(|\.read_(?:text|bytes)\(|\bimage\.load\(|\bET\.parse\(|\bElementTree\.parse\("
    r"|\biterparse\(|\bjson\.load\(|\bnp\.(?:load|fromfile)\("
    r"|\bread_(?:table|csv|json|parquet)\(|\bos\.open\("
)
#: The one reader, the one writer, and reads of tacgrid's own files (never a user's).
ALLOWED = {
    "engine/sources.py": "the one reader",
    "engine/safeio.py": "the one writer (and /proc/self/status for the umask)",
    "engine/__init__.py": "tacgrid's own pyproject.toml (its version)",
    "engine/batch/work.py": "the engine's own .py files (its digest)",
}
#: Calls that read what engine.sources already read or opened, never a path.
FROM_THE_READER = (
    "pygame.image.load(io.BytesIO(data)",  # the decoder, on bytes read_picture read
    "pq.read_table(fh)",  # a Parquet table from sources.open_regular
)


def reader_lines(text: str) -> list[str]:
    return [
        line.strip()
        for line in text.splitlines()
        if READERS.search(line) and not line.lstrip().startswith(("#", '"', "'", ">>>"))
    ]


def test_the_grep_finds_each_kind_of_reader() -> None:
    sample = (
        "with open(path) as fh:\nraw = pygame.image.load(path)\nPath(p).read_text()\n"
        "ET.parse(p)\njson.load(fh)\npq.read_table(p)\nnp.load(p)\nos.open(p, os.O_RDONLY)\n"
    )
    assert len(reader_lines(sample)) == 8
    assert reader_lines("data = read_bytes(path, 'map', 1)\npool.open()\ndef open(self):") == []


def test_no_module_outside_the_reader_opens_a_file() -> None:
    found = {}
    for path in sorted(ENGINE.rglob("*.py")):
        rel = path.relative_to(ROOT).as_posix()
        if rel in ALLOWED:
            continue
        lines = [
            line
            for line in reader_lines(path.read_text(encoding="utf-8"))
            if not any(ok in line for ok in FROM_THE_READER)
        ]
        if lines:
            found[rel] = lines
    assert found == {}, "read files through engine.sources: " + repr(found)


# --------------------------------------------------------------------------- lesser


def test_json_output_is_json_whatever_the_numbers() -> None:
    from engine.report import to_json

    doc = {"a": float("nan"), "b": [float("inf"), -float("inf"), 1.5], "c": (2, "x")}
    assert json.loads(to_json(doc)) == {"a": None, "b": [None, None, 1.5], "c": [2, "x"]}


def test_report_json_on_a_summary_with_infinities(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "b"
    assert main(["run", str(CHASE), "--runs", "2", "--out", str(out), "--quiet", "--no-plots"]) == 0
    capsys.readouterr()
    summary = out / "summary.json"
    summary.write_text(summary.read_text().replace('"runs": 2', '"runs": 2, "x": 1e999', 1))
    one_line(capsys, ["report", str(out), "--json"], "summary.json", "damaged")


def test_a_project_file_far_above_the_map_is_not_read(tmp_path: Path) -> None:
    from engine.tiled.project import MAX_PROJECT_LEVELS, find_project

    deep = tmp_path.joinpath(*[f"d{i}" for i in range(6)])
    deep.mkdir(parents=True)
    m = write(deep / "m.tmx", "")
    write(tmp_path / "far.tiled-project", "{}")
    assert find_project(str(m)) is None
    near = deep.parents[MAX_PROJECT_LEVELS - 2]  # the farthest folder still searched
    write(near / "near.tiled-project", "{}")
    assert find_project(str(m)) == str(near / "near.tiled-project")


def test_a_session_token_off_the_map_is_one_line(
    saved_session: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    def move_off(data: dict[str, Any]) -> None:
        tid = next(iter(data["present"]["tokens"]))
        data["present"]["tokens"][tid]["state"]["cell"] = [4000, 3]

    edit(saved_session, move_off)
    one_line(capsys, ["view", str(saved_session), "--frames", "1"], "game.tacgrid", "off the map")


def test_a_folder_moved_whole_still_opens_by_its_relative_place(tmp_path: Path) -> None:
    pygame = pytest.importorskip("pygame")
    import shutil

    from engine.viewer.launch import open_table

    table = tmp_path / "table"
    for folder in ("scenarios", "maps", "assets"):
        shutil.copytree(ROOT / folder, table / folder)
    v = open_table(str(table / "scenarios" / "chase.yaml"), size=(640, 480))
    v.table.save(str(table / "game.tacgrid"))
    pygame.quit()
    moved = tmp_path / "moved"
    table.rename(moved)  # the absolute path saved is gone; the relative one holds
    data = json.loads((moved / "game.tacgrid").read_text())
    assert data["source"]["relative"] == os.path.join("scenarios", "chase.yaml")
    assert main(["view", str(moved / "game.tacgrid"), "--frames", "1"]) == 0


#: How the command line may write to the terminal: through engine.cli.common's say/tell
#: (engine.errors.printable), or a line that escapes its text itself, or a fixed text.
WRITES = re.compile(r"\bprint\(|sys\.std(?:out|err)\.write\(")


def test_every_printer_of_the_command_line_escapes() -> None:
    found = []
    for path in sorted((ENGINE / "cli").glob("*.py")):
        rel = path.relative_to(ROOT).as_posix()
        for line in path.read_text(encoding="utf-8").splitlines():
            text = line.strip()
            if not WRITES.search(text) or text.startswith("#"):
                continue
            fixed = re.fullmatch(r'sys\.std(?:out|err)\.write\("[^"{}]*"\)', text)
            if "printable(" in text or fixed or rel == "engine/cli/common.py":
                continue
            found.append(f"{rel}: {text}")
    # The two left print no file's text unescaped: the error line (its msg went through
    # printable just above it) and a signal's name.
    assert found == [
        'engine/cli/__init__.py: sys.stderr.write(f"tacgrid: {msg}\\n" if not msg.startswith('
        '"tacgrid") else f"{msg}\\n")',
        'engine/cli/__init__.py: sys.stderr.write(f"tacgrid: stopped by {name}\\n")',
    ]


def test_run_seed_with_a_fifo_batch_json_plays_the_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "b"
    out.mkdir()
    os.mkfifo(out / "batch.json")  # read for the batch's seed: refused, never waited on
    with alarm():
        rc = main(["run", str(CHASE), "--run-seed", "3", "--out", str(out), "--json"])
    assert rc == 0
    assert json.loads(capsys.readouterr().out)["outcome"]


# --------------------------------------------------------------------------- notes of a drawing


def sheet(source: str) -> str:
    """A tileset cut from the picture ``source`` (four 32 px tiles)."""
    return (
        '<tileset firstgid="1" name="t" tilewidth="32" tileheight="32" tilecount="4" '
        f'columns="2"><image source="{source}" width="64" height="64"/></tileset>'
    )


def notes_of(capsys: pytest.CaptureFixture[str], args: list[str]) -> list[str]:
    """``main(args)`` succeeds; its stderr lines (each note once, one line each)."""
    pytest.importorskip("pygame")
    with alarm(60):
        rc = main(args)
    out, err = capsys.readouterr()
    assert rc == 0, err
    lines = err.splitlines()
    assert all(line.isprintable() for line in lines), lines
    assert len(lines) == len(set(lines)), lines  # once per note
    return lines


def test_render_says_a_tile_picture_refused_from_its_header(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write(tmp_path / "bomb.tga", BOMBS["bomb.tga"])
    args = render_args(tmp_path, "", tileset=sheet("bomb.tga"))
    lines = notes_of(capsys, args)
    assert (tmp_path / "out.png").exists()
    assert len(lines) == 1, lines
    assert lines[0].startswith("tacgrid: note: tileset 't' image 'bomb.tga' is a TGA picture")
    assert "21000x21000" in lines[0] and lines[0].endswith(": drawn in terrain colours")


def test_render_and_view_say_a_picture_that_cannot_be_decoded_once(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # A PNG whose header is fine and whose pixels are not: refused by the decoder while
    # the map is drawn, where no reader's note said so before.
    write(tmp_path / "bad.png", png_header(64, 64) + b"not pixels" * 8)
    m = write(tmp_path / "m.tmx", tmx(csv_layer(), tileset=sheet("bad.png")))
    s = write(
        tmp_path / "s.yaml",
        "map: m.tmx\nsystem: generic\nruns: 1\n"
        "tokens:\n  - id: a\n    cell: [1, 1]\n    stats: {speed: 30}\n",
    )
    said = "tacgrid: note: image 'bad.png' cannot be decoded: drawn without it"
    for source in (m, s):
        out = tmp_path / f"{source.stem}.png"
        assert notes_of(capsys, ["render", str(source), "--out", str(out)]) == [said]
        assert out.exists()
        shot = tmp_path / f"view-{source.stem}.png"
        args = ["view", str(source), "--frames", "1", "--screenshot", str(shot)]
        assert notes_of(capsys, args) == [said]
        assert shot.exists()


def test_a_note_naming_a_picture_stays_one_escaped_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    name = "bad\u2028\x85x.png"  # a line separator and NEL in the file's name
    write(tmp_path / name, png_header(64, 64) + b"not pixels" * 8)
    lines = notes_of(capsys, render_args(tmp_path, "", tileset=sheet(name)))
    assert len(lines) == 1 and "cannot be decoded" in lines[0], lines
    assert "\u2028" not in lines[0] and "\x85" not in lines[0]


# --------------------------------------------------------------------------- the last guard


@pytest.mark.parametrize("error", [MemoryError, RecursionError])
@pytest.mark.parametrize("command", ["info", "replay"])
def test_out_of_memory_or_stack_names_the_file_being_read(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    error: type[BaseException],
    command: str,
) -> None:
    """Readers cap sizes and nesting first; where a machine still runs out, the line names
    the command's input (escaped) and the fix, not just "input too large"."""
    from engine.cli import info, views

    def exhausted(*_: Any, **__: Any) -> int:
        raise error

    monkeypatch.setattr(info, "cmd_info", exhausted)
    monkeypatch.setattr(views, "cmd_replay", exhausted)
    name = tmp_path / "deep\x1b[2Jfile.tmx"  # an escape in the name stays escaped
    write(name, tmx(csv_layer()))
    line = one_line(capsys, [command, str(name)], "deep", "file.tmx", error.__name__)
    assert "\x1b" not in line and line.startswith(f"tacgrid: {tmp_path}")
    assert "the file is too large or too deeply nested for this machine" in line
    assert "give a smaller or flatter file" in line


def test_out_of_memory_before_a_command_is_read_says_so_without_a_file(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    import engine.cli as cli

    def exhausted(*_: Any, **__: Any) -> Any:
        raise MemoryError

    monkeypatch.setattr(cli, "build_parser", exhausted)
    line = one_line(capsys, ["info", "x.tmx"], "the input is too large", "MemoryError")
    assert "x.tmx" not in line  # nothing was read yet


# --------------------------------------------------------------------------- tokens off the map


def damaged_log(tmp_path: Path, damage: Any) -> Path:
    """A log of a chase run (on the shipped files, so its digests hold), one event damaged
    by ``damage(events)``; the scenario's digest covers the scenario, not the log."""
    log = tmp_path / "run.jsonl"
    assert main(["run", str(CHASE), "--run-seed", "1", "--log", str(log)]) == 0
    events = [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines()]
    damage(events)
    write(log, "".join(json.dumps(e) + "\n" for e in events))
    return log


def test_a_log_token_off_the_map_is_refused_before_the_window_draws(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    pytest.importorskip("pygame")

    def start_off(events: list[dict[str, Any]]) -> None:
        events[0]["tokens"]["quarry"]["cell"] = [700, 18]

    def move_off(events: list[dict[str, Any]]) -> Any:
        n, ev = next((n, e) for n, e in enumerate(events, 1) if e["type"] == "move")
        ev["path"][-1] = [5, 999]
        return n, ev["token"]

    log = damaged_log(tmp_path, start_off)
    shot = tmp_path / "shot.png"
    args = ["replay", str(log), "--frames", "1", "--screenshot", str(shot)]
    capsys.readouterr()
    one_line(capsys, args, f"{log}: event 1: token quarry at 700,18 is off the map (48 x 36)")
    assert not shot.exists()
    said: dict[str, Any] = {}
    log = damaged_log(tmp_path, lambda events: said.update(at=move_off(events)))
    capsys.readouterr()
    n, tid = said["at"]
    one_line(capsys, args, f"{log}: event {n}: token {tid} at 5,999 is off the map (48 x 36)")
    assert not shot.exists()


def test_a_simulation_refuses_a_token_off_the_map(tmp_path: Path) -> None:
    from dataclasses import replace

    from engine.errors import ScenarioError
    from engine.scenario import load_scenario
    from engine.sim.loop import Simulation

    sc = load_scenario(CHASE)
    first = sc.tokens[0]
    off = replace(sc, tokens=(replace(first, cell=(48, 3)), *sc.tokens[1:]))
    with pytest.raises(ScenarioError) as info:
        Simulation(off, seed=1)
    text = str(info.value)
    assert f"token {first.id} at 48,3 is off the map (48 x 36)" in text
    assert text.startswith(str(sc.path)) and "\n" not in text
    # The GM's edits in play: refused, and nothing changes or is logged.
    sim = Simulation(sc, seed=1)
    before = (dict(sim.tokens), list(sim.order), len(sim.events))
    with pytest.raises(ScenarioError, match=r"token gm at -1,0 is off the map \(48 x 36\)"):
        sim.add_token(replace(first, id="gm", cell=(-1, 0)))
    with pytest.raises(ScenarioError, match=rf"token {first.id} at 3,36 is off the map"):
        sim.place_token(first.id, (3, 36))
    assert (dict(sim.tokens), list(sim.order), len(sim.events)) == before
