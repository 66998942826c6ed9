"""Universal VTT files (.dd2vtt/.uvtt): a battle map exported from a map maker becomes a
square map with walls, doors and its picture (engine/tiled/uvtt.py, engine/viewer/images.py).

The files here are written by hand from the format's fields (TECH-NOTES.md): resolution
{map_origin, map_size, pixels_per_grid}, line_of_sight, objects_line_of_sight, portals
{position, bounds, rotation, closed, freestanding}, lights, environment and a base64 image.
"""

from __future__ import annotations

import base64
import json
import struct
import zlib
from pathlib import Path
from typing import Any

import pygame
import pytest
from conftest import ROOT

from engine.cli import main
from engine.errors import MapError
from engine.tiled import is_map_source, load_map, read_tiled
from engine.tiled.uvtt import MAX_IMAGE_BYTES, image_header
from engine.viewer.draw import DOOR, DOOR_SEAM, WALL

RED, BLUE = (200, 50, 50), (50, 50, 200)


def png(width: int, height: int, pixel: Any) -> bytes:
    """A PNG (8-bit RGB) written from scratch: ``pixel(x, y)`` -> (r, g, b)."""
    rows = b"".join(
        b"\x00" + b"".join(bytes(pixel(x, y)) for x in range(width)) for y in range(height)
    )

    def chunk(kind: bytes, body: bytes) -> bytes:
        crc = zlib.crc32(kind + body) & 0xFFFFFFFF
        return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", crc)

    ihdr = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", ihdr)
        + chunk(b"IDAT", zlib.compress(rows))
        + chunk(b"IEND", b"")
    )


def pt(x: float, y: float) -> dict[str, float]:
    return {"x": x, "y": y}


def uvtt(**changes: Any) -> dict[str, Any]:
    """A 4 x 3 square map of 10 px squares: a wall down x = 2 with a door in it at y 1..2
    (closed), a pillar's outline in objects_line_of_sight, and a picture whose left half is
    red and right half blue."""
    doc: dict[str, Any] = {
        "format": 0.3,
        "resolution": {"map_origin": pt(0, 0), "map_size": pt(4, 3), "pixels_per_grid": 10},
        "line_of_sight": [[pt(2, 0), pt(2, 1)], [pt(2, 2), pt(2, 3)]],
        "objects_line_of_sight": [[pt(3, 0), pt(4, 0), pt(4, 1), pt(3, 1), pt(3, 0)]],
        "portals": [
            {
                "position": pt(2, 1.5),
                "bounds": [pt(2, 1), pt(2, 2)],
                "rotation": 1.5707963,
                "closed": True,
                "freestanding": False,
            }
        ],
        "environment": {"baked_lighting": True, "ambient_light": "ffffffff"},
        "lights": [
            {"position": pt(1, 1), "range": 4, "intensity": 1, "color": "ffffffff", "shadows": True}
        ],
        "image": base64.b64encode(png(40, 30, lambda x, y: RED if x < 20 else BLUE)).decode(),
    }
    doc.update(changes)
    return doc


def write(tmp_path: Path, doc: Any, name: str = "room.dd2vtt") -> str:
    path = tmp_path / name
    path.write_text(doc if isinstance(doc, str) else json.dumps(doc), encoding="utf-8")
    return str(path)


# --------------------------------------------------------------------------- the model


def test_hand_written_uvtt_loads(tmp_path: Path) -> None:
    model = load_map(write(tmp_path, uvtt()))
    g = model.grid
    assert (g.orientation, g.width, g.height, g.tile_width, g.tile_height) == (
        "orthogonal",
        4,
        3,
        10,
        10,
    )
    assert model.mode_counts()["walk"] == 12
    assert [(w.kind, w.name) for w in model.walls] == [
        ("wall", ""),
        ("wall", ""),
        ("wall", "object"),
        ("door", "door1"),
    ]
    assert [w.id for w in model.walls] == [1, 2, 3, 4]
    # grid squares -> map pixels
    assert model.walls[0].points == ((20.0, 0.0), (20.0, 10.0))
    door = model.walls[3]
    assert door.points == ((20.0, 10.0), (20.0, 20.0))
    assert not door.open and door.blocks
    (image,) = model.images
    assert image.size == (40, 30) and image_header(image.data) == ((40, 30), True)
    assert any("1 door (0 open)" in n and "1 light not used" in n for n in model.notes)


def test_portal_closed_false_is_an_open_door(tmp_path: Path) -> None:
    doc = uvtt()
    doc["portals"][0]["closed"] = False
    door = load_map(write(tmp_path, doc, "open.uvtt")).walls[-1]
    assert door.kind == "door" and door.open and not door.blocks


def test_optional_fields_may_be_left_out(tmp_path: Path) -> None:
    doc = uvtt(resolution={"map_size": pt(2.5, 2), "pixels_per_grid": 20})
    for key in ("objects_line_of_sight", "portals", "lights", "environment", "image", "format"):
        del doc[key]
    model = load_map(write(tmp_path, doc))
    assert (model.grid.width, model.grid.height) == (3, 2)  # 2.5 squares rounded up
    assert len(model.walls) == 2 and model.images == ()
    assert any("rounded up" in n for n in model.notes)
    assert any("no map image" in n for n in model.notes)


def test_uvtt_is_a_map_source() -> None:
    assert is_map_source("x.dd2vtt") and is_map_source("X.UVTT")


def test_shipped_vtt_room() -> None:
    path = ROOT / "maps" / "vtt_room.dd2vtt"
    assert path.stat().st_size < 50_000
    model = load_map(path)
    assert (model.grid.width, model.grid.height, model.grid.tile_width) == (12, 9, 40)
    kinds = [(w.kind, w.name, w.open) for w in model.walls]
    assert kinds.count(("wall", "", False)) == 3
    assert kinds.count(("wall", "object", False)) == 1
    assert ("door", "door1", False) in kinds and ("door", "door2", True) in kinds
    assert model.images and model.images[0].size == (480, 360)


# --------------------------------------------------------------------------- commands


def test_info_on_a_uvtt(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = write(tmp_path, uvtt())
    assert main(["info", path, "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert (doc["grid"], doc["width"], doc["height"], doc["pixel_size"]) == (
        "square",
        4,
        3,
        [40, 30],
    )
    assert doc["cells"]["walk"] == 12
    assert main(["info", path]) == 0
    assert "Universal VTT" in capsys.readouterr().out


def _pixels(path: str) -> pygame.Surface:
    return pygame.image.load(path)


def test_render_draws_the_picture(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = write(tmp_path, uvtt())
    out = str(tmp_path / "room.png")
    # The picture as exported (--no-walls): its pixels exactly.
    assert main(["render", path, "--out", out, "--no-walls"]) == 0
    surf = _pixels(out)
    assert surf.get_size() == (40, 30)
    assert tuple(surf.get_at((5, 5)))[:3] == RED and tuple(surf.get_at((35, 25)))[:3] == BLUE
    assert tuple(surf.get_at((19, 15)))[:3] == RED and tuple(surf.get_at((20, 15)))[:3] == BLUE
    # By default its walls and doors are drawn over it: the shut door down x = 20 px.
    assert main(["render", path, "--out", out]) == 0
    surf = _pixels(out)
    assert tuple(surf.get_at((20, 15)))[:3] in (DOOR, DOOR_SEAM)
    assert tuple(surf.get_at((20, 5)))[:3] == WALL and tuple(surf.get_at((5, 5)))[:3] == RED
    # scaled: whole numbers repeat pixels, others blend across the seam
    assert main(["render", path, "--out", out, "--scale", "2", "--no-walls"]) == 0
    surf = _pixels(out)
    assert surf.get_size() == (80, 60)
    assert tuple(surf.get_at((39, 1)))[:3] == RED and tuple(surf.get_at((40, 1)))[:3] == BLUE
    assert main(["render", path, "--out", out, "--scale", "2.5", "--no-walls"]) == 0
    surf = _pixels(out)
    assert surf.get_size() == (100, 75)
    seam = [tuple(surf.get_at((x, 3)))[:3] for x in range(46, 54)]
    assert seam[0] == RED and seam[-1] == BLUE
    assert any(c not in (RED, BLUE) for c in seam)  # bilinear in between
    capsys.readouterr()


def test_picture_stretched_over_the_grid(tmp_path: Path) -> None:
    """A picture of another size than the grid fills the grid (20 x 15 px over 40 x 30)."""
    from engine.viewer.render import render_map

    small = base64.b64encode(png(20, 15, lambda x, y: RED if x < 10 else BLUE)).decode()
    model = load_map(write(tmp_path, uvtt(image=small)))
    assert any("stretched" in n for n in model.notes)
    surf = render_map(model, None)
    assert surf.get_size() == (40, 30)
    assert tuple(surf.get_at((2, 2)))[:3] == RED and tuple(surf.get_at((37, 27)))[:3] == BLUE


def test_areas_give_the_pixels_of_the_whole(tmp_path: Path) -> None:
    """The viewer's chunks and render's bands: any area is that part of the whole picture."""
    from engine.viewer.render import render_map

    gradient = png(40, 30, lambda x, y: (x * 6, y * 8, (x * y) % 256))
    model = load_map(write(tmp_path, uvtt(image=base64.b64encode(gradient).decode())))
    for scale in (1.0, 0.75, 1.6, 3.0):
        whole = render_map(model, None, scale=scale)
        w, h = whole.get_size()
        for area in ((0, 0, w // 2, h // 3), (w // 3, h // 2, w - w // 3, h - h // 2)):
            part = render_map(model, None, scale=scale, area=area)
            expect = whole.subsurface(area)
            assert pygame.image.tobytes(part, "RGBA") == pygame.image.tobytes(expect, "RGBA")


def test_webp_picture(tmp_path: Path) -> None:
    """Map makers also export WebP (here a lossless 2 x 1 image: red, blue)."""
    from engine.viewer.render import render_map

    webp = base64.b64decode("UklGRh4AAABXRUJQVlA4TBEAAAAvAQAAAA8Q87//8x8OMqL/AQA=")
    assert image_header(webp) == ((2, 1), True)
    doc = uvtt(resolution={"map_size": pt(2, 1), "pixels_per_grid": 8})
    doc["image"] = base64.b64encode(webp).decode()
    surf = render_map(load_map(write(tmp_path, doc)), None)
    assert tuple(surf.get_at((1, 4)))[:3] == (255, 0, 0)
    assert tuple(surf.get_at((14, 4)))[:3] == (0, 0, 255)


def test_viewer_draws_the_picture(tmp_path: Path) -> None:
    """The interactive viewer draws the map in chunks through the same renderer."""
    from engine.viewer.render import MapChunks, render_source

    tf = read_tiled(write(tmp_path, uvtt()), missing_images="skip")
    model, tmx = tf.model, tf.tmx
    assert tmx is None and render_source(model) is None
    chunk = MapChunks(model, tmx).chunk(1.0, 0, 0)
    assert tuple(chunk.get_at((5, 5)))[:3] == RED and tuple(chunk.get_at((35, 5)))[:3] == BLUE


def test_scenario_on_a_uvtt_map(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A scenario's `map:` may be a UVTT file; `render` draws the picture under its tokens."""
    from engine.scenario import load_scenario

    write(tmp_path, uvtt())
    scenario = tmp_path / "s.yaml"
    scenario.write_text(
        "name: s\nmap: room.dd2vtt\nsystem: generic\ntokens:\n  - {id: a, side: x, cell: [0, 0]}\n",
        encoding="utf-8",
    )
    assert len(load_scenario(str(scenario)).model.walls) == 4
    out = str(tmp_path / "s.png")
    assert main(["render", str(scenario), "--out", out]) == 0
    surf = _pixels(out)
    assert tuple(surf.get_at((35, 25)))[:3] == BLUE and tuple(surf.get_at((1, 29)))[:3] == RED
    capsys.readouterr()


# --------------------------------------------------------------------------- walls in paths


def _path(path: str, start: str, goal: str, capsys: pytest.CaptureFixture[str]) -> Any:
    code = main(["path", path, "--system", "generic", "--from", start, "--to", goal, "--json"])
    return code, json.loads(capsys.readouterr().out)


def test_paths_go_around_uvtt_walls_and_through_open_doors(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # the wall at x = 2 runs the whole height: closed door, no way east
    closed = write(tmp_path, uvtt(), "closed.dd2vtt")
    code, doc = _path(closed, "1,1", "2,1", capsys)
    assert code == 1 and doc["cells"] == []
    # the door open: straight through it
    doc_open = uvtt()
    doc_open["portals"][0]["closed"] = False
    code, doc = _path(write(tmp_path, doc_open, "open.dd2vtt"), "1,1", "2,1", capsys)
    assert code == 0 and doc["cells"] == [[1, 1], [2, 1]]
    # no door, a gap at y 2..3: around the wall's end
    gap = uvtt(line_of_sight=[[pt(2, 0), pt(2, 2)]], portals=[])
    code, doc = _path(write(tmp_path, gap, "gap.dd2vtt"), "1,0", "2,0", capsys)
    assert code == 0
    cells = [tuple(c) for c in doc["cells"]]
    assert cells[0] == (1, 0) and cells[-1] == (2, 0) and len(cells) > 2
    for (c0, r0), (c1, r1) in zip(cells, cells[1:], strict=False):
        if {c0, c1} == {1, 2}:  # crossing x = 2: only below the wall
            assert min(r0, r1) >= 1 and max(r0, r1) == 2, cells


def test_shipped_room_doors(capsys: pytest.CaptureFixture[str]) -> None:
    """maps/vtt_room.dd2vtt: the east room is sealed by its closed door; the west room opens
    south through the open outer door."""
    room = str(ROOT / "maps" / "vtt_room.dd2vtt")
    code, doc = _path(room, "2,2", "9,6", capsys)
    assert code == 1 and doc["cells"] == []
    # just west of the west wall: out through the south door and round, not through it
    code, doc = _path(room, "2,4", "0,4", capsys)
    assert code == 0
    cells = [tuple(c) for c in doc["cells"]]
    assert any(r == 8 for _, r in cells) and len(cells) > 5, cells


# --------------------------------------------------------------------------- hostile files


def _one_line(tmp_path: Path, doc: Any, capsys: pytest.CaptureFixture[str], *want: str) -> str:
    path = write(tmp_path, doc, "bad.dd2vtt")
    assert main(["info", path]) == 2
    cap = capsys.readouterr()
    err = cap.err.strip()
    assert cap.out == "" and "\n" not in err and err, cap
    assert path in err, err
    for w in want:
        assert w in err, err
    return err


def test_truncated_base64_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    doc = uvtt()
    doc["image"] = doc["image"][:-3]
    _one_line(tmp_path, doc, capsys, "'image'", "base64")


def test_truncated_png_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data = png(40, 30, lambda x, y: RED)
    doc = uvtt(image=base64.b64encode(data[: len(data) // 2 // 3 * 3]).decode())
    _one_line(tmp_path, doc, capsys, "'image'", "truncated")


def test_not_an_image_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    doc = uvtt(image=base64.b64encode(b"GIF89a not really").decode())
    _one_line(tmp_path, doc, capsys, "'image'", "PNG, WebP or JPEG")


def test_huge_map_size_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    doc = uvtt(resolution={"map_size": pt(100000, 100000), "pixels_per_grid": 10})
    _one_line(tmp_path, doc, capsys, "resolution.map_size", "cells")


def test_nan_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    text = json.dumps(uvtt()).replace('"pixels_per_grid": 10', '"pixels_per_grid": NaN')
    assert "NaN" in text
    _one_line(tmp_path, text, capsys, "NaN")
    text = json.dumps(uvtt()).replace('"x": 3, "y": 0', '"x": 1e999, "y": 0', 1)
    assert "1e999" in text
    _one_line(tmp_path, text, capsys, "out of range")


def test_missing_resolution_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    doc = uvtt()
    del doc["resolution"]
    _one_line(tmp_path, doc, capsys, "'resolution'", "missing")
    doc = uvtt(resolution={"map_size": pt(4, 3)})
    _one_line(tmp_path, doc, capsys, "'resolution.pixels_per_grid'", "missing")


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"resolution": {"map_size": pt(4, 3), "pixels_per_grid": 10.5}}, "pixels_per_grid"),
        ({"resolution": {"map_size": pt(4, 3), "pixels_per_grid": 0}}, "pixels_per_grid"),
        ({"resolution": {"map_size": pt(4, 3), "pixels_per_grid": True}}, "pixels_per_grid"),
        ({"resolution": {"map_size": pt(0, 3), "pixels_per_grid": 10}}, "map_size"),
        ({"resolution": {"map_size": [4, 3], "pixels_per_grid": 10}}, "map_size"),
        ({"resolution": {"map_size": pt("4", 3), "pixels_per_grid": 10}}, "map_size.x"),
        ({"line_of_sight": {"x": 1}}, "line_of_sight"),
        ({"line_of_sight": [[pt(1, 1), {"y": 2}]]}, "line_of_sight[0][1].x"),
        ({"line_of_sight": [[pt(1, 1), pt(1e9, 2)]]}, "line_of_sight[0][1]"),
        ({"portals": [{"closed": True}]}, "portals[0].bounds"),
        ({"portals": [{"bounds": [pt(1, 1)], "closed": True}]}, "portals[0].bounds"),
        ({"portals": [{"bounds": [pt(1, 1), pt(1, 2)], "closed": "yes"}]}, "portals[0].closed"),
        ({"image": 12}, "'image'"),
    ],
)
def test_bad_fields_name_the_field(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], change: dict[str, Any], field: str
) -> None:
    _one_line(tmp_path, uvtt(**change), capsys, field)


@pytest.mark.parametrize("text", ["", "[1, 2]", "{not json", '{"format": 0.3}'])
def test_not_a_uvtt_file_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], text: str
) -> None:
    _one_line(tmp_path, text, capsys)


def test_image_over_the_pixel_cap(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A 2 MB+ picture declaring 9000 x 9000 px: refused from its header, never decoded;
    `render` leaves it out (terrain colours) as it does a Tiled map's missing tile image."""
    import os

    header = png(1, 1, lambda x, y: RED)[:33]  # signature and IHDR
    body = os.urandom(2_200_000)
    big = bytearray(header + struct.pack(">I", len(body)) + b"IDAT" + body + bytes(4))
    big[16:24] = struct.pack(">II", 9000, 9000)
    big += struct.pack(">I", 0) + b"IEND" + bytes(4)
    doc = uvtt(image=base64.b64encode(bytes(big)).decode())
    err = _one_line(tmp_path, doc, capsys, "9000x9000")
    assert "pixels per grid" in err
    out = str(tmp_path / "big.png")
    assert main(["render", str(tmp_path / "bad.dd2vtt"), "--out", out]) == 0
    surf = _pixels(out)
    assert surf.get_size() == (40, 30)
    assert tuple(surf.get_at((5, 5)))[:3] not in (RED, BLUE)  # terrain colour instead
    capsys.readouterr()


def test_image_over_the_byte_cap(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Over the embedded image cap (lowered to 1 MB here; 64 MB really): refused before
    the base64 is decoded, by the command that draws it too."""
    import engine.tiled.uvtt as uvtt_module

    assert MAX_IMAGE_BYTES == 64 << 20
    monkeypatch.setattr(uvtt_module, "MAX_IMAGE_BYTES", 1 << 20)
    doc = uvtt(image=base64.b64encode(bytes(2_100_000)).decode())
    _one_line(tmp_path, doc, capsys, "'image'", "2 MB", "1 MB")
    out = str(tmp_path / "x.png")
    assert main(["render", str(tmp_path / "bad.dd2vtt"), "--out", out]) == 2
    assert "1 MB" in capsys.readouterr().err


def test_loader_errors_are_map_errors(tmp_path: Path) -> None:
    with pytest.raises(MapError, match="not a Universal VTT file"):
        load_map(write(tmp_path, "[]"))
