"""Work bounded by what is read (issue 42, items 2, 6, 7 and 8): small files that asked for
unbounded CPU or memory, writes that left ``--out``, and tracebacks.

Each hostile file is built in ``tmp_path`` and given to the command line in a subprocess
under a 1 GB address-space limit and a wall-clock timeout, so a regression fails instead
of taking the machine; the seams that make the work cheap (numpy coverage of regions, the
region painter) are proven equal to the plain way here too.
"""

from __future__ import annotations

import json
import math
import os
import random
import resource
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import ROOT

from engine.grid import Grid
from engine.mapmodel import MapModel, MapObject
from engine.terrain import Terrain
from engine.tiled import coverage, objects
from engine.tiled.coverage import Coverage, Painter

#: Address space each command may use (numpy and the engine need about 400 MB of it).
MEMORY_LIMIT = 1 << 30
#: Wall-clock seconds each command may take (the issue's bound is 10 s on 2 cores).
TIMEOUT = 20
CHASE_TMX = ROOT / "maps" / "chase.tmx"


def _limit_memory() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT, MEMORY_LIMIT))


def cli(*args: str, cwd: Path = ROOT, timeout: int = TIMEOUT) -> tuple[int, str, str, float]:
    """``tacgrid ARGS`` in a subprocess under the memory limit: (rc, stdout, stderr, s)."""
    env = {**os.environ, "SDL_VIDEODRIVER": "dummy", "SDL_AUDIODRIVER": "dummy"}
    start = time.monotonic()
    try:
        p = subprocess.run(
            [sys.executable, "-m", "engine.cli", *args],
            cwd=cwd,
            env=env,
            capture_output=True,
            text=True,
            errors="replace",
            timeout=timeout,
            preexec_fn=_limit_memory,
        )
    except subprocess.TimeoutExpired:
        pytest.fail(f"tacgrid {' '.join(args)[:200]}: no answer within {timeout} s")
    return p.returncode, p.stdout, p.stderr, time.monotonic() - start


def one_line(rc: int, out: str, err: str, expect: str) -> str:
    assert "Traceback" not in err, err[-2000:]
    assert rc == 2, (rc, err[-2000:])
    assert out == ""
    lines = err.splitlines()
    assert len(lines) == 1, err[:2000]
    assert expect in lines[0], lines[0]
    return lines[0]


TILESET = (
    '<tileset firstgid="1" name="t" tilewidth="32" tileheight="32" tilecount="1" columns="1">'
    '<tile id="0"><properties><property name="move" value="walk"/></properties></tile>'
    "</tileset>"
)


def tmx(body: str, width: int = 64, height: int = 64) -> str:
    data = ",".join(["1"] * (width * height))
    return (
        '<?xml version="1.0"?><map version="1.10" orientation="orthogonal" '
        f'renderorder="right-down" width="{width}" height="{height}" tilewidth="32" '
        f'tileheight="32" infinite="0">{TILESET}<layer id="1" name="ground" width="{width}" '
        f'height="{height}"><data encoding="csv">{data}</data></layer>{body}</map>'
    )


# --------------------------------------------------------------------------- regions' cost


GRIDS = {
    "orthogonal": Grid("orthogonal", 40, 30, 32, 32),
    "isometric": Grid("isometric", 30, 30, 64, 32),
    "hex-y-odd": Grid("hexagonal", 30, 30, 32, 28, "y", "odd", 16),
    "hex-x-even": Grid("hexagonal", 30, 30, 28, 32, "x", "even", 14),
    "staggered": Grid("staggered", 30, 30, 64, 32, "y", "odd"),
}


def _random_object(rng: random.Random, shape: str, span: float) -> MapObject:
    pts: tuple[tuple[float, float], ...] = ()
    if shape == "polygon":
        n = rng.randint(3, 40)
        pts = tuple(
            (rng.uniform(-span / 2, span / 2), rng.uniform(-span / 2, span / 2)) for _ in range(n)
        )
    return MapObject(
        id=1,
        name="r",
        cls="",
        shape=shape,
        x=rng.uniform(0, span),
        y=rng.uniform(0, span),
        width=rng.choice([0.0, rng.uniform(1, span / 2), 64.0]),
        height=rng.choice([rng.uniform(1, span / 2), 32.0]),
        rotation=rng.choice([0.0, 0.0, 45.0, rng.uniform(-360, 360)]),
        points=pts,
        properties={},
    )


def _cover(grid: Grid, obj: MapObject, *, plain: bool) -> list[tuple[int, int]]:
    cover = Coverage("m.tmx", grid, objects._contains)
    cols, rows = cover.cells(
        obj,
        lambda x, y: objects._object_cell(grid, x, y),
        lambda cell: objects._object_space_center(grid, cell),
    )
    assert isinstance(cols, list) == plain or not len(cols)  # no box: nothing to test
    return [(int(c), int(r)) for c, r in zip(cols, rows, strict=True)]


@pytest.mark.parametrize("name", sorted(GRIDS))
def test_numpy_coverage_equals_the_plain_test(name: str, monkeypatch) -> None:
    """The numpy seam gives the cells the plain per-cell test gives, in the same order,
    on every orientation, for rotated rectangles, ellipses and self-crossing polygons."""
    grid = GRIDS[name]
    span = float(max(grid.pixel_size()))
    rng = random.Random(name)
    for _ in range(60):
        obj = _random_object(rng, rng.choice(["rectangle", "ellipse", "polygon", "text"]), span)
        monkeypatch.setattr(coverage, "SMALL_OBJECT", 1 << 30)
        plain = _cover(grid, obj, plain=True)
        monkeypatch.setattr(coverage, "SMALL_OBJECT", -1)
        monkeypatch.setattr(coverage, "BLOCK_CELLS", 97)  # several blocks
        monkeypatch.setattr(coverage, "BLOCK_PAIRS", 53)
        assert _cover(grid, obj, plain=False) == plain, obj


def test_every_candidate_box_holds_every_covered_cell() -> None:
    """The rotated bounding box misses no cell the shape covers (against all cells)."""
    grid = GRIDS["hex-y-odd"]
    rng = random.Random(7)
    for _ in range(30):
        obj = _random_object(rng, rng.choice(["rectangle", "ellipse", "polygon"]), 600.0)
        every = [
            (c, r)
            for r in range(grid.height)
            for c in range(grid.width)
            if objects._contains(obj, *objects._object_space_center(grid, (c, r)))
        ]
        assert _cover(grid, obj, plain=True) == every


def test_painter_equals_with_terrain() -> None:
    """Regions painted by the painter (lists and numpy arrays) make the same terrain ids
    and records as MapModel.with_terrain."""
    import numpy as np

    grid = Grid("orthogonal", 20, 15, 32, 32)
    rng = random.Random(3)
    regions = []
    for _ in range(40):
        cells = sorted({(rng.randrange(20), rng.randrange(15)) for _ in range(rng.randint(0, 60))})
        override = rng.choice([{"move": "swim"}, {"cost": rng.choice([2.0, 3.0])}, {"name": "x"}])
        regions.append((cells, override))
    plain = MapModel.uniform(grid, Terrain())
    painted = MapModel.uniform(grid, Terrain())
    painter = Painter(painted)
    for i, (cells, override) in enumerate(regions):
        plain.with_terrain(cells, override)
        cols, rows = [c for c, _ in cells], [r for _, r in cells]
        if i % 2:
            painter.paint(np.asarray(cols, dtype=int), np.asarray(rows, dtype=int), override)
        else:
            painter.paint(cols, rows, override)
    painter.finish()
    assert painted.terrains == plain.terrains
    assert (painted.terrain_ids == plain.terrain_ids).all()


def _ellipses(n: int) -> str:
    rng = random.Random(1)
    objs = "".join(
        f'<object id="{i + 2}" name="r{i}" x="{rng.randint(0, 8000)}" y="{rng.randint(0, 8000)}" '
        f'width="2000" height="1500" rotation="{rng.randint(1, 359)}"><properties>'
        f'<property name="cost" value="{i % 7 + 2}"/></properties><ellipse/></object>'
        for i in range(n)
    )
    return tmx(f'<objectgroup id="2" name="o">{objs}</objectgroup>', 256, 256)


def _polygon(points: int, radius: float = 3000.0) -> str:
    pts = " ".join(
        f"{4000 + radius * math.cos(k * 2 * math.pi / points):.2f},"
        f"{4000 + radius * math.sin(k * 2 * math.pi / points):.2f}"
        for k in range(points)
    )
    return tmx(
        '<objectgroup id="2" name="o"><object id="2" name="p" x="0" y="0"><properties>'
        f'<property name="move" value="swim"/></properties><polygon points="{pts}"/></object>'
        "</objectgroup>",
        256,
        256,
    )


def test_ten_thousand_rotated_ellipses_are_refused_in_one_line(tmp_path: Path) -> None:
    """1.8 MB of rotated ellipse regions: more than 60 s before; refused at the budget."""
    (tmp_path / "m.tmx").write_text(_ellipses(10_000))
    rc, out, err, _ = cli("info", str(tmp_path / "m.tmx"))
    one_line(rc, out, err, "cell tests to place")


def test_a_polygon_of_100k_points_is_placed_in_its_band(tmp_path: Path) -> None:
    """One 100 000-point polygon region (a circle of radius 3000 px on 32 px cells): more
    than 60 s before; now its cells: those whose centre lies in the disc (a centre between
    the polygon's inner and outer circle may fall either way)."""
    (tmp_path / "m.tmx").write_text(_polygon(100_000))
    rc, out, err, _ = cli("info", str(tmp_path / "m.tmx"), "--json")
    assert rc == 0, err
    swim = json.loads(out)["cells"]["swim"]
    inner = 3000 * math.cos(math.pi / 100_000) - 0.01  # the points are rounded to 0.01 px
    dists = [
        math.hypot((c + 0.5) * 32 - 4000, (r + 0.5) * 32 - 4000)
        for r in range(256)
        for c in range(256)
    ]
    assert sum(d < inner for d in dists) <= swim <= sum(d <= 3000.01 for d in dists)


def test_object_points_are_capped_before_they_are_parsed(tmp_path: Path) -> None:
    (tmp_path / "m.tmx").write_text(_polygon(objects.MAX_OBJECT_POINTS + 1, 300.0))
    rc, out, err, _ = cli("info", str(tmp_path / "m.tmx"))
    one_line(rc, out, err, f"more than {objects.MAX_OBJECT_POINTS} polygon and polyline points")


# --------------------------------------------------------------------------- world patterns


def _world(folder: Path, regexp: str) -> Path:
    doc = {
        "maps": [],
        "patterns": [
            {"regexp": regexp, "multiplierX": 1, "multiplierY": 1, "offsetX": 0, "offsetY": 0}
        ],
        "type": "world",
    }
    (folder / "w.world").write_text(json.dumps(doc))
    return folder / "w.world"


def test_a_backtracking_world_pattern_is_stopped_at_its_time_bound(tmp_path: Path) -> None:
    """(a+)+b over a name of 60 a's: 2**60 steps, stopped at the bound (the subprocess's
    wall-clock timeout fails the test should it not be)."""
    (tmp_path / ("a" * 60)).write_text("")
    rc, out, err, _ = cli("info", str(_world(tmp_path, "(a+)+b")))
    one_line(rc, out, err, "backtracks")


def test_world_patterns_still_place_their_maps(tmp_path: Path) -> None:
    from engine.tiled.world import read_world

    for name in ("m_1_2.tmx", "m_3_4.tmx", "other.txt", "\udcff_9_9.tmx"[1:]):
        (tmp_path / name).write_text("")
    maps = read_world(str(_world(tmp_path, r"m_(\d+)_(\d+)\.tmx")))
    assert sorted((m.name, m.x, m.y) for m in maps) == [("m_1_2", 1, 2), ("m_3_4", 3, 4)]


# --------------------------------------------------------------------------- scenario numbers


def _scenario(folder: Path, turns: object = 30, tokens: int = 2, extra: str = "") -> Path:
    toks = "".join(
        f"  - {{id: t{i}, side: {'quarry' if i == 0 else 'pursuer'}, "
        f"policy: {'idle' if i == 0 else 'pursuer'}{'' if i == 0 else ', target: t0'}, "
        f"cell: [{i % 40}, {i // 40 + 1}], stats: {{speed: {30 if i == 0 else 0}}}}}\n"
        for i in range(tokens)
    )
    text = (
        f"map: {CHASE_TMX}\nsystem: generic\nruns: 1\nturns: {turns}\n{extra}"
        f"goals: {{capture: 1}}\ntokens:\n{toks}"
    )
    (folder / "s.yaml").write_text(text)
    return folder / "s.yaml"


@pytest.mark.parametrize(
    ("turns", "tokens", "extra", "expect"),
    [
        ("1000000000", 2, "", "turns: 1000000000 is more than tacgrid allows"),
        ("100000000000000000000", 2, "", "turns: 100000000000000000000 is more than"),
        ("1e20", 2, "", "turns: '1e20' is not a whole number"),
        ("30", 101, "", "101 tokens; a scenario has at most 100"),
        ("30", 2, "runs: 100000000000\n", "runs: 100000000000 is more than"),
    ],
)
def test_scenario_numbers_are_bounded(
    tmp_path: Path, turns: str, tokens: int, extra: str, expect: str
) -> None:
    path = _scenario(tmp_path, turns, tokens)
    if extra:
        path.write_text(path.read_text().replace("runs: 1\n", extra))
    rc, out, err, _ = cli("run", str(path), "--out", str(tmp_path / "o"), "--quiet")
    one_line(rc, out, err, expect)
    assert not (tmp_path / "o").exists()


# --------------------------------------------------------------------------- writes in --out


def _sweep(folder: Path) -> Path:
    path = _scenario(folder, 3)
    path.write_text(path.read_text() + "sweep:\n  vary: {turns: [2, 3]}\n  runs: 2\n")
    return path


@pytest.mark.parametrize("where", ["points", "a point's folder"])
def test_a_sweep_writes_nothing_through_a_symlinked_subfolder(tmp_path: Path, where: str) -> None:
    """``DIR/points`` (or a point's folder) linked elsewhere: refused, and nothing is
    written where the link points."""
    from engine.batch.sweep import sweep_spec

    if where != "points":
        where = (
            "points/" + sweep_spec(str(_sweep(tmp_path)), None, None, None)["points"][1]["point"]
        )
    out, elsewhere = tmp_path / "out", tmp_path / "elsewhere"
    elsewhere.mkdir()
    (out / where).parent.mkdir(parents=True)
    (out / where).symlink_to(elsewhere)
    rc, o, err, _ = cli("sweep", str(_sweep(tmp_path)), "--out", str(out))
    one_line(rc, o, err, "is a symbolic link; tacgrid writes only inside --out")
    assert list(elsewhere.iterdir()) == []


def test_out_folder_makes_real_folders_only(tmp_path: Path) -> None:
    from engine.batch.control import out_folder
    from engine.errors import ArgumentError

    assert out_folder(str(tmp_path / "o"), "points", "p-1") == str(tmp_path / "o/points/p-1")
    assert (tmp_path / "o/points/p-1").is_dir()
    (tmp_path / "o/file").write_text("")
    for parts in (("file",), ("..",), ("a/b",)):
        with pytest.raises(ArgumentError):
            out_folder(str(tmp_path / "o"), *parts)


# --------------------------------------------------------------------------- tracebacks


@pytest.fixture(scope="module")
def batch_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("batch")
    rc, _, err, _ = cli(
        "run", str(_scenario(folder, 3)), "--out", str(folder / "out"), "--quiet", "--no-plots"
    )
    assert rc == 0, err
    return folder / "out"


@pytest.mark.parametrize(
    "damage",
    [
        lambda s: {"runs": 3, "outcomes": {"capture": 1}},
        lambda s: {**s, "rates": {"capture": "x"}},
        lambda s: {**s, "ci95": {k: [0] for k in s["outcomes"]}},
        lambda s: {**s, "turns": {"mean": None}},
        lambda s: {**s, "turns_by_outcome": {k: {"mean": "a"} for k in s["outcomes"]}},
        lambda s: {**s, "outcomes": {"capture": 1.5}},
        lambda s: [s],
    ],
)
def test_report_on_a_damaged_summary_is_one_line(batch_dir: Path, tmp_path: Path, damage) -> None:
    import shutil

    from engine.cli import main

    out = tmp_path / "out"
    shutil.copytree(batch_dir, out)
    summary = json.loads((out / "summary.json").read_text())
    assert main(["report", str(out), "--json"]) == 0  # whole, it reads
    (out / "summary.json").write_text(json.dumps(damage(summary)))
    for extra in ([], ["--json"]):
        rc, o, err, _ = cli("report", str(out), *extra)
        one_line(rc, o, err, "summary.json: damaged")


def test_a_summary_is_read_within_its_size_cap(batch_dir: Path, tmp_path: Path) -> None:
    """summary.json past the size cap of tacgrid's own records is damaged, in one line."""
    import shutil

    from engine.sources import MAX_META_BYTES

    out = tmp_path / "out"
    shutil.copytree(batch_dir, out)
    with (out / "summary.json").open("r+b") as fh:
        fh.truncate(MAX_META_BYTES + 1)
    rc, o, err, _ = cli("report", str(out))
    one_line(rc, o, err, "damaged")


@pytest.fixture(scope="module")
def session(tmp_path_factory: pytest.TempPathFactory) -> dict:
    os.environ.setdefault("SDL_VIDEODRIVER", "dummy")
    os.environ.setdefault("SDL_AUDIODRIVER", "dummy")
    import pygame

    from engine.viewer.app import Viewer
    from engine.viewer.launch import open_source
    from engine.viewer.session import save_session

    path = tmp_path_factory.mktemp("session") / "s.tacgrid"
    try:
        save_session(Viewer(open_source(str(ROOT / "scenarios" / "chase.yaml"))), str(path))
    finally:
        pygame.quit()
    return json.loads(path.read_text())


def _camera(c: list) -> object:
    return lambda d: d["view"].__setitem__("camera", c)


def _progress(d: dict) -> None:
    next(iter(d["present"]["tokens"].values()))["state"]["progress"] = "1/0"


@pytest.mark.parametrize(
    ("change", "expect"),
    [
        (_camera([1e308, 1e308, 1.0]), "off the map"),
        (_camera([0, 0, 0]), "zoom 0 is not above 0"),
        (_camera([0, 0, -3]), "zoom -3 is not above 0"),
        (_camera([0, 0, 1e308]), None),  # the viewer's largest zoom
        (_progress, "a fraction over zero"),
    ],
)
def test_a_damaged_session_view_is_one_line(
    session: dict, tmp_path: Path, change, expect: str | None
) -> None:
    doc = json.loads(json.dumps(session))
    change(doc)
    path = tmp_path / "s.tacgrid"
    path.write_text(json.dumps(doc))
    rc, o, err, _ = cli("view", str(path), "--frames", "2")
    if expect is None:
        assert rc == 0, err
        return
    one_line(rc, o, err, expect)


def test_exact_reads_a_fraction_over_zero_as_no_number() -> None:
    from engine.exact import exact

    with pytest.raises(ValueError, match="over zero"):
        exact("1/0")


@pytest.mark.parametrize(
    ("field", "value"),
    [("values", 5), ("values", [1, 2]), ("valuesAsFlags", "yes"), ("members", 7)],
)
def test_a_project_type_of_the_wrong_shape_is_one_line(
    tmp_path: Path, field: str, value: object
) -> None:
    mode = {"id": 1, "name": "Mode", "type": "enum", "storageType": "int", "values": ["a"]}
    terrain = {"id": 2, "name": "Terrain", "type": "class", "members": []}
    (mode if field != "members" else terrain)[field] = value
    (tmp_path / "p.tiled-project").write_text(json.dumps({"propertyTypes": [mode, terrain]}))
    prop = (
        '<property name="move" type="int" propertytype="Mode" value="0"/>'
        if field != "members"
        else '<property name="t" type="class" propertytype="Terrain"><properties/></property>'
    )
    (tmp_path / "m.tmx").write_text(
        tmx(
            f'<objectgroup id="2" name="o"><object id="1" name="r" x="0" y="0" width="64" '
            f'height="64"><properties>{prop}</properties></object></objectgroup>',
            4,
            4,
        )
    )
    rc, o, err, _ = cli("info", str(tmp_path / "m.tmx"))
    one_line(rc, o, err, f"'{field}' is not")


# --------------------------------------------------------------------------- memory


def _uvtt_wall(folder: Path, points: int, size: int = 64) -> Path:
    rng = random.Random(2)
    x = y = 1.0
    pts = []
    for _ in range(points):
        x = min(max(x + rng.uniform(-0.5, 0.5), 0), size)
        y = min(max(y + rng.uniform(-0.5, 0.5), 0), size)
        pts.append({"x": round(x, 3), "y": round(y, 3)})
    doc = {
        "format": 0.3,
        "resolution": {
            "map_origin": {"x": 0, "y": 0},
            "map_size": {"x": size, "y": size},
            "pixels_per_grid": 32,
        },
        "line_of_sight": [pts],
        "portals": [],
        "image": "",
    }
    path = folder / "w.dd2vtt"
    path.write_text(json.dumps(doc))
    return path


def test_a_long_wall_is_placed_a_block_at_a_time(tmp_path: Path) -> None:
    """A 60 000-point wandering UVTT wall: ``path`` under 1 GB (a 200 000-point one took
    2.97 GB before the candidate steps were made a block at a time; 346 MB after)."""
    rc, out, err, _ = cli(
        "path", str(_uvtt_wall(tmp_path, 60_000)), "--from", "0,0", "--to", "63,63",
        "--system", "generic", "--token", "speed=30", "--json",
    )  # fmt: skip
    assert rc in (0, 1), err  # a path, or none through the walls: either is an answer
    assert "Traceback" not in err


def test_blocked_steps_by_blocks_equal_all_at_once(monkeypatch) -> None:
    """The wall mask made a block of pairs at a time equals the one made in one block."""
    from engine import walls as wallmod
    from engine.tiled import load_map

    walled = 0
    for path in sorted((ROOT / "maps").glob("*.*")):
        model = load_map(str(path))
        walls = tuple(w for w in model.walls if w.blocks)
        if not walls:
            continue
        walled += 1
        wallmod._wall_bits.cache_clear()
        whole = wallmod._wall_bits(model.grid, walls).copy()
        monkeypatch.setattr(wallmod, "WALL_BLOCK_PAIRS", 7)
        wallmod._wall_bits.cache_clear()
        assert (wallmod._wall_bits(model.grid, walls) == whole).all()
        monkeypatch.undo()
        wallmod._wall_bits.cache_clear()
    assert walled


def test_walls_past_the_sample_budget_are_one_line(tmp_path: Path) -> None:
    rc, out, err, _ = cli("info", str(_uvtt_wall(tmp_path, 300_000, 256)))
    one_line(rc, out, err, "its walls run")


def test_a_template_shape_is_parsed_once(tmp_path: Path) -> None:
    """300 objects of one template: its polygon's points are one parsed tuple, shared."""
    from engine.tiled import load_map

    pts = " ".join(f"{30 * math.cos(k / 50):.2f},{30 * math.sin(k / 50):.2f}" for k in range(300))
    (tmp_path / "t.tx").write_text(
        '<?xml version="1.0"?><template><object name="r"><properties>'
        '<property name="move" value="swim"/></properties>'
        f'<polygon points="{pts}"/></object></template>'
    )
    objs = "".join(
        f'<object id="{i + 2}" template="t.tx" x="{(i % 15) * 64 + 32}" y="{(i // 15) * 64 + 32}"/>'
        for i in range(300)
    )
    (tmp_path / "m.tmx").write_text(
        tmx(f'<objectgroup id="2" name="o">{objs}</objectgroup>', 32, 42)
    )
    model = load_map(str(tmp_path / "m.tmx"))
    shapes = [o.points for o in model.objects]
    assert len(shapes) == 300 and all(s is shapes[0] for s in shapes)
    assert model.mode_counts()["swim"] > 0


def test_a_long_path_json_is_streamed_and_the_same(tmp_path: Path) -> None:
    """The path document printed in blocks is byte for byte the one to_json makes; a
    128 x 128 serpentine maze (2.5 MB of JSON) runs under the memory limit."""
    import tmxtext

    from engine.report import to_json

    n = 128
    tmxtext.maze(n, tmp_path / "m.tmx")
    rc, out, err, _ = cli(
        "path", str(tmp_path / "m.tmx"), "--from", "0,0", "--to", f"{n - 1},{n - 2}",
        "--system", "generic", "--token", "speed=30", "--json",
    )  # fmt: skip
    assert rc == 0, err
    doc = json.loads(out)
    assert len(doc["cells"]) > n * n // 3
    assert out == to_json(doc)


def _png(width: int, height: int, rows: list[bytes]) -> bytes:
    import struct
    import zlib

    def chunk(kind: bytes, data: bytes) -> bytes:
        crc = zlib.crc32(kind + data) & 0xFFFFFFFF
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", crc)

    co = zlib.compressobj(9)
    idat = b"".join(co.compress(b"\x00" + rows[r % len(rows)]) for r in range(height))
    head = struct.pack(">IIBBBBB", width, height, 8, 6, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", head) + chunk(b"IDAT", idat + co.flush())
        + chunk(b"IEND", b"")
    )  # fmt: skip


def test_a_half_transparent_picture_is_premultiplied_in_bands() -> None:
    """Decoding a half-transparent picture widens its channels a band at a time: a
    2048 x 2048 one's numpy peak stays a few MB (117 MB of temporaries before; an
    8192 x 8192 UVTT picture rendered in 2.68 GB, now 856 MB, the PNG byte-identical)."""
    import tracemalloc

    os.environ.setdefault("SDL_VIDEODRIVER", "dummy")
    import numpy as np
    import pygame

    from engine.mapmodel import ImageLayer
    from engine.viewer import images

    rng = random.Random(5)
    rows = [bytes(rng.randrange(256) for _ in range(4 * 64)) for _ in range(7)]
    small = ImageLayer("image", _png(64, 64, rows), (64, 64))
    pygame.init()
    try:
        for alpha in (255, 200):
            images._cache.clear()
            surf, opaque = images.decoded(small, alpha)
            assert surf is not None and not opaque
            raw = pygame.image.load(__import__("io").BytesIO(small.data), "x.png")
            raw = raw.convert(pygame.Surface((1, 1), pygame.SRCALPHA, 32))
            a = pygame.surfarray.array_alpha(raw).astype(np.uint32)
            if alpha < 255:
                a = (a * alpha + 127) // 255
            rgb = (pygame.surfarray.array3d(raw).astype(np.uint32) * a[..., None] + 127) // 255
            assert (pygame.surfarray.array3d(surf) == rgb).all()
            assert (pygame.surfarray.array_alpha(surf) == a).all()
        big = ImageLayer("image", _png(2048, 2048, [b"\x80\x40\x20\x80" * 2048]), (64, 64))
        images._cache.clear()
        tracemalloc.start()
        images.decoded(big)
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        assert peak < 32 << 20, peak
    finally:
        images._cache.clear()
        pygame.quit()


def test_a_spawn_after_a_region_reads_the_painted_terrain(tmp_path: Path) -> None:
    """Regions are painted through the painter's table; a spawn area placed after one
    reads the cells' records as painted (its first open cell)."""
    from engine.tiled import load_map

    wall = (
        '<object id="2" name="w" x="0" y="0" width="64" height="32"><properties>'
        '<property name="move" value="blocked"/></properties></object>'
    )
    spawn = '<object id="3" name="a" type="spawn" x="0" y="0" width="96" height="32"/>'
    (tmp_path / "m.tmx").write_text(
        tmx(f'<objectgroup id="2" name="o">{wall}{spawn}</objectgroup>', 8, 8)
    )
    model = load_map(str(tmp_path / "m.tmx"))
    assert [t.move for t in model.terrains] == ["walk", "blocked"]
    assert {s.id: s.cell for s in model.spawns} == {"a": (2, 0)}


def test_only_spawns_and_exits_count_as_listed_cells(tmp_path: Path, monkeypatch) -> None:
    """A region's cells (region edits, sweeps) are not held to the spawns' and exits' list
    budget; an exit past it is refused in one line."""
    from engine.errors import MapError
    from engine.tiled import load_map
    from engine.tiled.objects import region_cells

    monkeypatch.setattr(coverage, "MAX_LISTED_CELLS", 4)
    ford = (
        '<object id="2" name="ford" x="0" y="0" width="128" height="128"><properties>'
        '<property name="move" value="swim"/></properties></object>'
    )
    (tmp_path / "m.tmx").write_text(tmx(f'<objectgroup id="2" name="o">{ford}</objectgroup>', 8, 8))
    assert len(region_cells(load_map(str(tmp_path / "m.tmx")), "ford")) == 16
    exit_ = '<object id="3" name="e" type="exit" x="0" y="0" width="128" height="128"/>'
    (tmp_path / "m.tmx").write_text(
        tmx(f'<objectgroup id="2" name="o">{exit_}</objectgroup>', 8, 8)
    )
    with pytest.raises(MapError, match="spawns and exits cover more than 4 cells"):
        load_map(str(tmp_path / "m.tmx"))


# --------------------------------------------------------------------------- many tokens


def _many_tokens(folder: Path, n: int = 40, tokens: int = 30, seed: int = 3) -> Path:
    """A random ``n``-square map (rough ground, walls and water, an exit column) with one
    quarry and ``tokens - 1`` pursuers at two speeds, some hunting no one in particular."""
    import tmxtext

    rnd = random.Random(seed)
    rows = ["".join(rnd.choice("......,,#~") for _ in range(n)) for _ in range(n)]
    cells = [(x, y) for y in range(n) for x in range(n - 1) if rows[y][x] == "."]
    picked = rnd.sample(cells, tokens)
    exit_ = (
        '<objectgroup id="2" name="regions"><object id="1" name="exit_east" type="exit" '
        f'x="{(n - 1) * 32}" y="0" width="32" height="{n * 32}"/></objectgroup>'
    )
    tmxtext.write(folder / "many.tmx", rows, objects=exit_)
    toks = [
        f"  - {{id: q, side: quarry, policy: quarry, cell: {list(picked[0])}, stats: {{speed: 30}}}}"
    ]
    for i, c in enumerate(picked[1:]):
        target = ", target: q" if i % 3 else ""
        speed = rnd.choice((30, 40))
        toks.append(
            f"  - {{id: p{i}, side: pursuer, policy: pursuer{target}, cell: {list(c)}, "
            f"stats: {{speed: {speed}}}}}"
        )
    (folder / "many.yaml").write_text(
        "map: many.tmx\nsystem: generic\nruns: 4\nseed: 11\nturns: 30\n"
        "goals: {capture: 1, escape: [exit_east]}\ntokens:\n" + "\n".join(toks) + "\n"
    )
    return folder / "many.yaml"


def test_many_tokens_play_the_same_with_every_shortcut(tmp_path: Path) -> None:
    """The shortcuts that keep a run of many tokens cheap play exactly as the plain way, on a
    random many-token map and on the shipped chase: the threat map made by parts (one part
    made again when one token moved, FieldCache.threat) against one least over all, and
    fields dropped at every turn's start (the turns from where the tokens stand kept,
    FieldCache.trim) against none dropped: the same events, the same results."""
    from engine.batch import run_seeds
    from engine.scenario import load_scenario
    from engine.sim import FieldCache, Simulation

    class Plain(FieldCache):
        THREAT_PART = 1 << 30
        FIELD_BYTES = 1 << 40

    class Tight(FieldCache):
        THREAT_PART = 2
        FIELD_BYTES = 1 << 20

    for path in (_many_tokens(tmp_path), ROOT / "scenarios" / "chase.yaml"):
        sc = load_scenario(str(path))
        plain, tight = Plain(sc), Tight(sc)
        for run, seed in enumerate(run_seeds(sc.seed, 4)):
            a = Simulation(sc, seed, fields=plain, run=run)
            b = Simulation(sc, seed, fields=tight, run=run)
            a.run()
            b.run()
            assert a.events[1:] == b.events[1:], (path.name, run)
            assert a.result().to_dict() == b.result().to_dict()
        assert tight.weight.used <= Tight.FIELD_BYTES + (8 << 20)


def test_least_times_is_the_least_of_each_tokens_times(tmp_path: Path) -> None:
    """SimView.least_times (the threat map by parts) is the plain elementwise least of
    every token's turns, for any subset of the tokens, after any token moved."""
    import numpy as np

    from engine.scenario import load_scenario
    from engine.sim import FieldCache, Simulation
    from engine.sim.view import SimView, times_from

    sc = load_scenario(str(_many_tokens(tmp_path)))

    class Small(FieldCache):
        THREAT_PART = 3

    sim = Simulation(sc, 5, fields=Small(sc))
    rnd = random.Random(1)
    for _ in range(3):
        view = SimView(sim, "q", sim.tokens["q"], sim.profile_now("q"))
        for k in (0, 1, 3, 4, 7, len(sim.pursuers)):
            ids = tuple(rnd.sample(sim.pursuers, k))
            plain = np.full(view.grid.width * view.grid.height, np.inf)
            for t in ids:
                np.minimum(plain, times_from(sim, t), out=plain)
            assert np.array_equal(view.least_times(ids), plain)
        sim.play_turn()
        if sim.outcome is not None:
            break


def test_a_run_of_many_tokens_on_a_big_map_is_bounded(tmp_path: Path) -> None:
    """100 tokens on an open 512^2 map: a round of one run within the memory limit (issue
    42; the address space of two profiles' graphs, their kernel arrays and a round's
    fields: 1.8 GB of resident memory before). One round is a few seconds of CPU; the
    guard against a hang allows for a loaded machine."""
    import tmxtext

    n = 512
    tmxtext.write(tmp_path / "open.tmx", ["." * n] * n)
    rnd = random.Random(5)
    cells = {(n // 2, n // 2)}
    toks = [
        f"  - {{id: q, side: quarry, policy: quarry, cell: [{n // 2}, {n // 2}], stats: {{speed: 30}}}}"
    ]
    while len(cells) < 100:
        c = (rnd.randrange(n), rnd.randrange(n))
        if c not in cells:
            cells.add(c)
            toks.append(
                f"  - {{id: p{len(cells)}, side: pursuer, policy: pursuer, target: q, "
                f"cell: [{c[0]}, {c[1]}], stats: {{speed: {rnd.choice([30, 40])}}}}}"
            )
    (tmp_path / "s.yaml").write_text(
        "map: open.tmx\nsystem: generic\nruns: 1\nseed: 1\nturns: 1\n"
        "goals: {capture: 1}\ntokens:\n" + "\n".join(toks) + "\n"
    )
    rc, out, err, _ = cli("run", str(tmp_path / "s.yaml"), "--run-seed", "1", timeout=120)
    assert rc == 0, err[-2000:]
    assert out.startswith("run seed 1: timeout after 1 turns"), out


# --------------------------------------------------------------------------- replay's token cells


def _damaged_log(folder: Path, cell: list[int], where: str) -> Path:
    """A log of a chase run on the shipped files (its digests hold) with one token put at
    ``cell``: in the start event, or at the end of the first move's path."""
    log = folder / "run.jsonl"
    rc, _, err, _ = cli(
        "run", str(ROOT / "scenarios" / "chase.yaml"), "--run-seed", "1", "--log", str(log)
    )
    assert rc == 0, err
    events = [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines()]
    if where == "start":
        events[0]["tokens"]["quarry"]["cell"] = cell
    else:
        next(e for e in events if e["type"] == "move")["path"][-1] = cell
    log.write_text("".join(json.dumps(e) + "\n" for e in events), encoding="utf-8")
    return log


@pytest.mark.parametrize("how", ["--text", "--json"])
@pytest.mark.parametrize(
    ("cell", "where"), [([700, 18], "start"), ([5, 999], "move"), ([-1, 0], "move")]
)
def test_replay_text_and_json_refuse_tokens_off_the_map(
    tmp_path: Path, how: str, cell: list[int], where: str
) -> None:
    """Every replay path refuses a log whose tokens stand off its map in one line (the
    window did; ``--text`` and ``--json`` printed them), reading only the map's size."""
    log = _damaged_log(tmp_path, cell, where)
    rc, out, err, _ = cli("replay", str(log), how)
    line = one_line(rc, out, err, "is off the map (48 x 36)")
    assert f"at {cell[0]},{cell[1]}" in line and str(log) in line
    good = _damaged_log(tmp_path, [3, 3], where)
    rc, out, err, _ = cli("replay", str(good), how)
    assert rc == 0 and out, err


def test_log_map_size_reads_a_tmx_root_and_loads_any_other_map(tmp_path: Path) -> None:
    """The size replay --text/--json check a log against: a finite .tmx map's from its root
    element alone (the same as the loaded map's grid, on every shipped scenario), any other
    map (JSON, UVTT, infinite) by loading the scenario."""
    from engine.eventlog import log_map_size
    from engine.scenario import load_scenario

    for path in sorted((ROOT / "scenarios").glob("*.yaml")):
        grid = load_scenario(str(path)).model.grid
        assert log_map_size(str(path)) == (grid.width, grid.height), path.name
    body = tmx("")
    head, _, _ = body.partition("<tileset")
    # Only the root is read: a body the map reader would refuse does not matter here.
    (tmp_path / "m.tmx").write_text(head + "<tileset" + "x" * (1 << 17))
    (tmp_path / "s.yaml").write_text("map: m.tmx\nsystem: generic\n")
    assert log_map_size(str(tmp_path / "s.yaml")) == (64, 64)
    (tmp_path / "hex.yaml").write_text(
        f"map: {ROOT / 'maps' / 'hex_flat.tmj'}\nsystem: generic\n"
        "tokens:\n  - {id: a, side: quarry, policy: idle, cell: [1, 1], stats: {speed: 30}}\n"
    )
    grid = load_scenario(str(tmp_path / "hex.yaml")).model.grid
    assert log_map_size(str(tmp_path / "hex.yaml")) == (grid.width, grid.height)


# --------------------------------------------------------------------------- JSON maps, templates


def _tmj(folder: Path, kind: str) -> Path:
    """A Tiled JSON map of one of the shapes a big JSON map takes: ``zlib`` (8 base64+zlib
    layers of 2048^2, the cell cap), ``array`` (a 2048^2 layer as a JSON array of numbers),
    ``chunks`` (an infinite map of 100^2 chunks), ``properties`` (one object with nearly
    the cap of properties) and ``too_many`` (more JSON objects than the cap)."""
    import base64
    import zlib

    import numpy as np
    import tmxtext

    from engine.tiled.common import MAX_XML_ELEMENTS

    tiles = [
        {
            "id": i,
            "type": tmxtext.LEGEND[ch]["terrain"],
            "properties": [{"name": "move", "type": "string", "value": tmxtext.LEGEND[ch]["move"]}],
        }
        for i, ch in enumerate(tmxtext.CHARS)
    ]
    ts = {
        "firstgid": 1,
        "name": "t",
        "tilewidth": 32,
        "tileheight": 32,
        "tilecount": len(tiles),
        "columns": len(tiles),
        "tiles": tiles,
    }
    gids = np.random.default_rng(1).choice(np.array([1, 1, 1, 2, 4], np.uint32), 2048 * 2048)
    w = h = 2048
    layers: list[dict] = []
    if kind == "zlib":
        data = base64.b64encode(zlib.compress(gids.astype("<u4").tobytes())).decode()
        layers = [
            {
                "id": i + 1,
                "name": f"l{i}",
                "type": "tilelayer",
                "width": w,
                "height": h,
                "encoding": "base64",
                "compression": "zlib",
                "data": data,
            }
            for i in range(8)
        ]
    elif kind == "array":
        layers = [
            {
                "id": 1,
                "name": "l",
                "type": "tilelayer",
                "width": w,
                "height": h,
                "data": gids.tolist(),
            }
        ]
    elif kind == "chunks":
        w = h = 1600
        chunk = gids[:256].tolist()
        chunks = [
            {"x": x * 16, "y": y * 16, "width": 16, "height": 16, "data": chunk}
            for y in range(100)
            for x in range(100)
        ]
        layers = [
            {
                "id": 1,
                "name": "l",
                "type": "tilelayer",
                "width": w,
                "height": h,
                "startx": 0,
                "starty": 0,
                "chunks": chunks,
            }
        ]
    else:
        w = h = 64
        n = MAX_XML_ELEMENTS - 1000 if kind == "properties" else MAX_XML_ELEMENTS + 1000
        props = [{"name": str(j), "value": ""} for j in range(n)]
        layers = [
            {
                "id": 1,
                "name": "l",
                "type": "tilelayer",
                "width": w,
                "height": h,
                "data": gids[: w * h].tolist(),
            },
            {
                "id": 2,
                "name": "o",
                "type": "objectgroup",
                "objects": [{"id": 1, "x": 0, "y": 0, "properties": props}],
            },
        ]
    doc = {
        "type": "map",
        "orientation": "orthogonal",
        "width": w,
        "height": h,
        "tilewidth": 32,
        "tileheight": 32,
        "infinite": kind == "chunks",
        "layers": layers,
        "tilesets": [ts],
    }
    path = folder / f"{kind}.tmj"
    path.write_text(json.dumps(doc, separators=(",", ":")))
    return path


@pytest.mark.parametrize("kind", ["zlib", "array", "chunks", "properties"])
def test_a_big_json_map_loads_within_the_memory_limit(tmp_path: Path, kind: str) -> None:
    """Issue 42's "a 30 MB JSON map uses 1.5 GB", tried in every shape (15-36 MB files):
    each loads under the 1 GB address-space limit (measured: 280-640 MB peak RSS, 1-4 s)."""
    path = _tmj(tmp_path, kind)
    rc, out, err, _ = cli("info", str(path), timeout=60)
    assert rc == 0, err[-2000:]
    assert "cells by movement mode" in out


def test_a_json_map_of_too_many_objects_is_refused_before_it_is_parsed(tmp_path: Path) -> None:
    """More JSON objects than the element cap: one line, counted in the bytes before
    ``json.loads`` (a 77 MB map of 1.1 million properties took 1 GB and 7 s to be refused
    once converted; under the 1 GB limit it failed)."""
    path = _tmj(tmp_path, "too_many")
    rc, out, err, _ = cli("info", str(path), timeout=60)
    one_line(
        rc, out, err, "JSON objects (layers, objects, properties, tiles); tacgrid reads at most"
    )


def test_json_objects_are_counted_outside_strings_and_points() -> None:
    """The count before parsing: braces in strings and polygon points left out."""
    from engine.tiled.source import _json_objects

    doc = {"a": [{"x": 1, "y": -2.5e3}, {"x": 0, "y": 0}], "s": '{{"{', "o": [{}, {"k": {}}]}
    text = json.dumps(doc).encode()
    assert text.count(b"{") == 9
    assert _json_objects(text, 4) == 4  # the map, "o"'s two and "k"'s
    assert _json_objects(text, 2) == 3  # (counting stops past the cap)


def _templated(folder: Path, template: str, shape: str) -> Path:
    import tmxtext

    (folder / "t.tx").write_text(
        f'<?xml version="1.0" encoding="UTF-8"?><template>{template}</template>'
    )
    objs = "".join(
        f'<object id="{k + 1}" template="t.tx" x="{(k % 50) * 32}" y="{(k // 50) * 32 + 32}"/>'
        for k in range(300)
    )
    return tmxtext.write(
        folder / f"{shape}.tmx",
        ["." * 64] * 64,
        objects=f'<objectgroup id="2" name="o">{objs}</objectgroup>',
    )


def test_three_hundred_objects_share_one_large_template(tmp_path: Path) -> None:
    """Issue 42's "300 objects sharing one large template re-parse it each (3 GB)": a 4.9 MB
    template (an embedded tileset of 4000 tiles, 20 properties each) used by 300 objects,
    and a template naming another, read once: info and render well within the limit
    (measured 75-95 MB, under a second)."""
    tiles = "".join(
        f'<tile id="{i}"><properties>'
        + "".join(f'<property name="p{j}" value="{"v" * 30}"/>' for j in range(20))
        + "</properties></tile>"
        for i in range(4000)
    )
    big = (
        f'<tileset firstgid="1" name="big" tilewidth="32" tileheight="32" tilecount="4000" '
        f'columns="100">{tiles}</tileset><object gid="1" width="32" height="32"/>'
    )
    path = _templated(tmp_path, big, "tset")
    for args in (["info", str(path)], ["render", str(path), "--out", str(tmp_path / "t.png")]):
        rc, out, err, _ = cli(*args)
        assert rc == 0, err[-2000:]
    (tmp_path / "inner.tx").write_text((tmp_path / "t.tx").read_text())
    path = _templated(tmp_path, '<object template="inner.tx" name="c"/>', "chain")
    rc, out, err, _ = cli("info", str(path))
    assert rc == 0, err[-2000:]


def test_a_field_toward_a_node_walks_as_the_whole_field(tmp_path: Path) -> None:
    """engine.sim.toward.field_toward (an A* settled only as far as the walk from one node needs)
    gives that walk, its whole way and every step of it, as the whole field does, from
    random nodes to random cells, on a random map of walls and water, with tokens in the
    way and without; and kernel.toward_kappa's kappa never exceeds an edge's steps per
    cell of Chebyshev distance (the plain numpy sum)."""
    import numpy as np

    from engine import kernel
    from engine.scenario import load_scenario
    from engine.sim import FieldCache, Simulation
    from engine.sim.toward import field_toward, toward_bound

    if not kernel.available():
        pytest.skip(f"kernel {kernel.state()}")
    sc = load_scenario(str(_many_tokens(tmp_path, n=60)))
    sim = Simulation(sc, 1, fields=FieldCache(sc))
    rnd = random.Random(7)
    fewer = 0
    for tid in ("q", "p0", "p1"):
        prof = sim.profile_now(tid)
        prof.TOWARD_NODES = 0
        g = prof.graph
        indptr, indices, _, steps, _ = prof._kernel_of("rev")
        rows = np.repeat(np.arange(len(indptr) - 1), np.diff(indptr)) % g.n
        cols = indices % g.n
        w = g.grid.width
        cheb = np.maximum(abs(rows % w - cols % w), abs(rows // w - cols // w))
        kappa, span = toward_bound(prof, "rev")
        assert kappa == int((steps[cheb > 0] // cheb[cheb > 0]).min()) and span == steps.max()
        for _ in range(40):
            cells = tuple(
                g.grid.cell_of_index(rnd.randrange(g.n)) for _ in range(rnd.choice((1, 1, 3)))
            )
            node = rnd.randrange(g.n * g.n_states)
            whole = prof.field_to(cells)
            prof._to_cells.clear()
            prof._to.clear()
            if prof.shared is not None:
                prof.shared.to.clear()
                prof.shared.base_to.clear()
            part = field_toward(prof, cells, node)
            fewer += int(np.isfinite(part.dist).sum() < np.isfinite(whole.dist).sum())
            assert part.enters(prof, node) == whole.enters(prof, node)
            a, b = part.walk(prof, node), whole.walk(prof, node)
            assert (a.edges, a.after) == (b.edges, b.after)
            cur = node
            for _ in range(g.n * g.n_states):
                assert part.left(cur) == whole.left(cur)
                step = whole.step(prof, cur)
                assert part.step(prof, cur) == step
                if whole.left(cur) <= 0 or step is None:
                    break
                cur = step[0]
            settled = np.isfinite(part.dist)
            assert np.array_equal(part.dist[settled], whole.dist[settled])
    assert fewer > 60  # most of the 120 fields settle less than the whole field


def test_many_tokens_play_the_same_with_fields_toward_a_node(tmp_path: Path, monkeypatch) -> None:
    """A run of many tokens whose descents walk fields settled only toward the mover
    (engine.sim.toward.field_toward, on every graph) plays as with whole fields: the same events."""
    from engine import kernel
    from engine.batch import run_seeds
    from engine.scenario import load_scenario
    from engine.sim import FieldCache, Simulation
    from engine.sim.fields import Profile

    if not kernel.available():
        pytest.skip(f"kernel {kernel.state()}")
    sc = load_scenario(str(_many_tokens(tmp_path)))
    made = []
    toward = kernel.field_toward
    monkeypatch.setattr(kernel, "field_toward", lambda *a: made.append(1) or toward(*a))
    logs = []
    for nodes in (1 << 40, 0):
        old = Profile.TOWARD_NODES
        Profile.TOWARD_NODES = nodes
        try:
            fields = FieldCache(sc)
            got = []
            for run, seed in enumerate(run_seeds(sc.seed, 3)):
                sim = Simulation(sc, seed, fields=fields, run=run)
                sim.run()
                got.append((sim.events[1:], sim.result().to_dict()))
            logs.append(got)
        finally:
            Profile.TOWARD_NODES = old
    assert logs[0] == logs[1] and made


def test_a_kept_threat_map_is_the_least_of_each_tokens_turns(tmp_path: Path) -> None:
    """ThreatMap (the least turns kept as tokens move, engine/_kernel.c threat_move) is
    the plain least of each token's turns_from, bit for bit, after every move, a token
    leaving and coming back, two tokens on one cell, and all of them moving at once."""
    import numpy as np

    from engine import kernel
    from engine.scenario import load_scenario
    from engine.sim import FieldCache, Simulation
    from engine.sim.threat import ThreatMap, least_plain

    if not kernel.available():
        pytest.skip(f"kernel {kernel.state()}")
    sc = load_scenario(str(_many_tokens(tmp_path, n=50)))
    sim = Simulation(sc, 1, fields=FieldCache(sc))
    rnd = random.Random(3)
    for tid in ("p0", "p1"):
        prof = sim.profile_now(tid)
        g = prof.graph
        open_ = [
            g.grid.cell_of_index(i)
            for i in range(g.n)
            if prof.turns_from(g.grid.cell_of_index(i))[i] == 0
        ]
        kept = ThreatMap(prof)
        cells = {f"t{k}": rnd.choice(open_) for k in range(12)}
        for step in range(60):
            what = rnd.random()
            if what < 0.1 and len(cells) > 1:
                cells.pop(rnd.choice(sorted(cells)))
            elif what < 0.2:
                cells[f"t{rnd.randrange(14)}"] = rnd.choice(sorted(cells.values()))
            elif what < 0.25:
                cells = {t: rnd.choice(open_) for t in cells}
            else:
                cells[rnd.choice(sorted(cells))] = rnd.choice(open_)
            got = kept.least(cells)
            plain = least_plain([prof.turns_from(c) for c in cells.values()], g.n)
            assert np.array_equal(got, plain), (tid, step)


def test_turns_to_and_claim_turns_are_the_plain_turns(tmp_path: Path) -> None:
    """turns_to (from the field to the cell) is turns_from at the cell, bit for bit; and
    claim_turns (settled until the least of turns less another's is proven, guided by the
    last field to one cell) is exact on every cell where that least or a tie could be, inf
    only where the plain turns less the other's are above the least."""
    import numpy as np

    from engine import kernel
    from engine.scenario import load_scenario
    from engine.sim import FieldCache, Simulation
    from engine.sim.threat import claim_turns, claim_turns_on, turns_to

    if not kernel.available():
        pytest.skip(f"kernel {kernel.state()}")
    sc = load_scenario(str(_many_tokens(tmp_path, n=50)))
    fields = FieldCache(sc)
    sim = Simulation(sc, 1, fields=fields)
    rnd = random.Random(5)
    q = sim.profile_now("q")
    for tid in ("p0", "p1", "p2"):
        prof = sim.profile_now(tid)
        prof.TOWARD_NODES = 0  # a field to one cell becomes the searches' landmark
        g = prof.graph
        for _ in range(30):
            src, dst = (g.grid.cell_of_index(rnd.randrange(g.n)) for _ in range(2))
            plain = prof.turns_from(src)
            prof._turns_from.clear()
            prof.shared.turns.clear()
            assert turns_to(prof, src, dst, 0) == float(plain[g.grid.index(dst)])
            theirs = q.turns_from(dst)
            cells = np.flatnonzero(np.isfinite(theirs) & (theirs < rnd.uniform(0.5, 4)))
            got = claim_turns(prof, src, cells, theirs[cells], 0)
            assert np.array_equal(claim_turns_on(prof, src, cells, theirs[cells], 0), got[cells])
            prof._turns_from.clear()
            prof.shared.turns.clear()
            late = plain[cells] - theirs[cells]
            exact = np.isfinite(got[cells])
            assert np.array_equal(got[cells][exact], plain[cells][exact])
            assert np.isinf(np.delete(got, cells)).all()
            if len(cells):
                assert (late[~exact] > late.min()).all()
                assert exact[late == late.min()].all()


def test_many_tokens_play_the_same_with_kept_threat_maps(tmp_path: Path, monkeypatch) -> None:
    """A run of many tokens with every big-map way on every graph (the threat kept as
    pursuers move, turns to one cell from the field to it, a pursuer's turns settled only
    until its frontier cell is proven, descents toward the mover) plays as the plain way:
    the same events and results, on a random many-token map and on the shipped chase."""
    from engine import kernel
    from engine.batch import run_seeds
    from engine.scenario import load_scenario
    from engine.sim import FieldCache, Simulation
    from engine.sim.fields import Profile

    if not kernel.available():
        pytest.skip(f"kernel {kernel.state()}")
    made = []
    move = kernel.threat_move
    monkeypatch.setattr(kernel, "threat_move", lambda *a: made.append(1) or move(*a))

    class Big(FieldCache):
        THREAT_NODES = 0

    for path in (_many_tokens(tmp_path), ROOT / "scenarios" / "chase.yaml"):
        sc = load_scenario(str(path))
        logs = []
        for cache, nodes in ((FieldCache, 1 << 40), (Big, 0)):
            monkeypatch.setattr(Profile, "TOWARD_NODES", nodes)
            fields = cache(sc)
            got = []
            for run, seed in enumerate(run_seeds(sc.seed, 4)):
                sim = Simulation(sc, seed, fields=fields, run=run)
                sim.run()
                got.append((sim.events[1:], sim.result().to_dict()))
            logs.append(got)
        assert logs[0] == logs[1], path.name
    assert made


def test_a_walk_toward_reads_the_fields_toward_and_leaves_its_array_clean(tmp_path: Path) -> None:
    """engine.sim.toward.walk_toward (field_toward's search into an array kept inf between
    searches, only the settled nodes put back) gives field_toward's distances and walk, bit
    for bit, search after search on random nodes, cells and risk; its array is all inf
    after each block, after a block left by an exception, and a block within a block
    (the array in use) gets field_toward's own field."""
    import pickle

    import numpy as np

    from engine import kernel
    from engine.scenario import load_scenario
    from engine.sim import FieldCache, Simulation
    from engine.sim.toward import field_toward, walk_toward

    if not kernel.available():
        pytest.skip(f"kernel {kernel.state()}")
    sc = load_scenario(str(_many_tokens(tmp_path, n=50)))
    sim = Simulation(sc, 1, fields=FieldCache(sc))
    rnd = random.Random(11)
    partial = 0
    for tid in ("q", "p0", "p1"):
        prof = sim.profile_now(tid)
        prof.TOWARD_NODES = 0
        g = prof.graph
        size = g.n * g.n_states
        for k in range(40):
            cells = tuple(
                g.grid.cell_of_index(rnd.randrange(g.n)) for _ in range(rnd.choice((1, 1, 3)))
            )
            node, risk = rnd.randrange(size), rnd.random() < 0.3
            plain = field_toward(prof, cells, node, risk=risk)
            with walk_toward(prof, cells, node, risk=risk) as got:
                assert got.dist is not plain.dist
                assert np.array_equal(got.dist, plain.dist)
                a, b = got.walk(prof, node), plain.walk(prof, node)
                assert (a.edges, a.after) == (b.edges, b.after)
                partial += int(np.isfinite(got.dist).sum() < size)
                if k % 10 == 0:  # the array in use: a search of its own
                    with walk_toward(prof, cells, node, risk=risk) as inner:
                        assert inner.dist is not got.dist
                        assert np.array_equal(inner.dist, plain.dist)
            scratch = prof._kernel_arrays["toward scratch"][0]
            assert np.isinf(scratch.dist).all() and not scratch.busy
            if k % 7 == 0:
                with pytest.raises(RuntimeError), walk_toward(prof, cells, node, risk=risk):
                    raise RuntimeError
                assert np.isinf(scratch.dist).all() and not scratch.busy
    assert partial > 60  # most searches settle less than the whole graph
    # pickled with a field cache (its compiled arrays) as its size alone: made again, clean
    with walk_toward(prof, cells, node) as _:
        again = pickle.loads(pickle.dumps(scratch))
    assert len(pickle.dumps(scratch)) < 200 and len(again.dist) == size
    assert np.isinf(again.dist).all() and not again.busy
    # a stale kernel (built from an older engine/_kernel.c, here one without field_toward):
    # no array kept, field_toward's own field
    fresh = sim.profile_now("p2")
    fresh.TOWARD_NODES = 0
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(kernel, "_MISSING", ("field_toward",))
        assert not kernel.available()
        for prof in {fresh, *(sim.profile_now(t) for t in ("q", "p0", "p1"))}:
            prof._kernel_arrays.pop("toward scratch", None)
            with walk_toward(prof, cells, node) as got:
                assert np.array_equal(got.dist, field_toward(prof, cells, node).dist)
            assert "toward scratch" not in prof._kernel_arrays


def test_profiles_of_the_same_edges_share_one_compiled_graph(tmp_path: Path) -> None:
    """FieldCache._new_profile (a graph whose edges are those of one compiled already takes
    its CSR graph, distances and scale) gives every token, at each speed, the arrays and
    scale that compiling its own graph gives (SHARE_EDGES off, the plain way), bit for bit,
    and the runs play the same: the same events and results."""
    import numpy as np

    from engine.batch import run_seeds
    from engine.scenario import load_scenario
    from engine.sim import FieldCache, Simulation

    class Plain(FieldCache):
        SHARE_EDGES = False

    sc = load_scenario(str(_many_tokens(tmp_path, n=40)))
    fast, plain = FieldCache(sc), Plain(sc)
    for run, seed in enumerate(run_seeds(sc.seed, 3)):
        a = Simulation(sc, seed, fields=fast, run=run)
        b = Simulation(sc, seed, fields=plain, run=run)
        for tid in a.order:
            pa, pb = a.profile_now(tid), b.profile_now(tid)
            assert pa.graph.denominator == pb.graph.denominator
            assert pa.scale == pb.scale
            for x, y in ((pa.csr, pb.csr), (pa.rev, pb.rev), (pa.rev_risk, pb.rev_risk)):
                assert np.array_equal(x.indptr, y.indptr)
                assert np.array_equal(x.indices, y.indices)
                assert np.array_equal(x.data, y.data) and x.data.dtype == y.data.dtype
            assert np.array_equal(pa.penalty, pb.penalty)
        a.run()
        b.run()
        assert a.events[1:] == b.events[1:], run
        assert a.result().to_dict() == b.result().to_dict()
    # the two speeds' graphs: one compiled graph
    assert len(fast._shared) == len(plain._shared) > len(fast._by_edges) >= 1


def test_least_turns_keep_the_newest_arrays_and_give_their_bytes_back(
    tmp_path: Path, monkeypatch
) -> None:
    """ThreatMaps keeps only its newest least-turn arrays (KEPT), each dropped one's bytes
    given back to the field cache's weight: every answer is still the plain least of each
    token's turns, bit for bit, the weight is the kept maps' and arrays' bytes, and runs
    play the same as with every array kept (no drop within them)."""
    import numpy as np

    from engine.batch import run_seeds
    from engine.grid import Cell
    from engine.scenario import load_scenario
    from engine.sim import FieldCache, Simulation
    from engine.sim.fields import Profile
    from engine.sim.threat import ThreatMaps, least_plain

    class Kept(FieldCache):
        THREAT_NODES = 0  # the kept maps on this small graph too

    sc = load_scenario(str(_many_tokens(tmp_path, n=30)))
    fields = Kept(sc)
    sim = Simulation(sc, 1, fields=fields)
    rnd = random.Random(5)
    g = sim.profile_now("p0").graph
    open_ = [c for c in (g.grid.cell_of_index(i) for i in range(g.n)) if g.ticks_of(c) >= 0]
    maps = fields._maps

    def held() -> int:
        return sum(a.nbytes for a in maps._least.values()) + sum(
            m.nbytes for m in maps._maps.values()
        )

    # every profile's map and kernel arrays made first (they weigh once)
    fields.least_turns([(t, sim.profile_now(t), open_[0]) for t in sim.pursuers], g.n)
    asked: list[list[tuple[str, Profile, Cell]]] = []
    for k in range(3 * ThreatMaps.KEPT):
        ids = rnd.sample(sim.pursuers, rnd.randint(1, 6))
        tokens = [(t, sim.profile_now(t), rnd.choice(open_)) for t in ids]
        if asked and k % 4 == 0:  # asked again: the kept array, or made again the same
            tokens = asked[rnd.randrange(max(0, len(asked) - 3), len(asked))]
        asked.append(tokens)
        plain = least_plain([p.turns_from(c) for _, p, c in tokens], g.n)
        before, bytes_before = fields.weight.used, held()
        got = fields.least_turns(tokens, g.n)
        assert np.array_equal(got, plain)
        assert len(maps._least) <= ThreatMaps.KEPT
        # the weight grew by what is held now more: each dropped array given back
        assert fields.weight.used - before == held() - bytes_before
    assert len(maps._least) == ThreatMaps.KEPT
    logs = []
    for keep in (1, 1 << 20):
        monkeypatch.setattr(ThreatMaps, "KEPT", keep)
        fc = Kept(sc)
        got = []
        for run, seed in enumerate(run_seeds(sc.seed, 2)):
            s = Simulation(sc, seed, fields=fc, run=run)
            s.run()
            got.append((s.events[1:], s.result().to_dict()))
        logs.append(got)
    assert logs[0] == logs[1]
