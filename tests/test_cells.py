"""engine.cells: per-cell arrays in the standard library until numpy is needed (issue 20).

Every step with a pure-Python branch (small maps, read without numpy) and a numpy branch
is run both ways on the same data here, and the answers compared; whole maps too: each
shipped map and corpus map reads to the same model with the pure branches as without.
"""

from __future__ import annotations

import pickle
import random
from array import array
from dataclasses import replace
from pathlib import Path
from xml.etree import ElementTree as ET

import numpy as np
import pytest

import engine.cells as cells
from engine import kernel
from engine.cells import I32, U32, Cells, held, pure, value_counts
from engine.errors import MapError
from engine.grid import Grid
from engine.mapmodel import MapModel, Terrain
from engine.tiled import load_map
from engine.tiled.layerdata import decode_layer_data
from engine.tiled.layers import _paste, split_flags
from engine.tiled.terrain import _first_unknown, layer_stacks

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT.parent / "shared" / "tiled-corpus"


def _cells(rng: random.Random, shape: tuple[int, int], top: int, code: str = U32) -> Cells:
    return Cells(array(code, [rng.randrange(top) for _ in range(shape[0] * shape[1])]), shape)


def _flat(data: Cells | np.ndarray) -> list[int]:
    return data.values.tolist() if isinstance(data, Cells) else np.asarray(data).ravel().tolist()


@pytest.fixture
def numpy_only(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every step takes its numpy branch."""
    monkeypatch.setattr(cells, "SMALL_CELLS", -1)


# --------------------------------------------------------------------------- the pieces


def test_cells_view_as_numpy_without_a_copy() -> None:
    c = Cells(array(I32, [1, 2, 3, 4, 5, 6]), (2, 3))
    view = c.numpy()
    assert (
        view.dtype == np.int32 and view.shape == (2, 3) and view.tolist() == [[1, 2, 3], [4, 5, 6]]
    )
    view[1, 2] = 9  # the same memory, both ways
    assert c.values[5] == 9
    c.values[0] = 7
    assert view[0, 0] == 7
    assert Cells.zeros((2, 2), "B").numpy().dtype == np.uint8
    assert Cells(array(U32, [0]), (1, 1)).numpy().dtype == np.uint32
    with pytest.raises(ValueError):
        Cells(array(I32, [1, 2]), (2, 2))


def test_a_numpy_field_reads_as_numpy_and_keeps_it() -> None:
    grid = Grid("orthogonal", 3, 2, 32, 32)
    ids = Cells(array(I32, [0, 1, 0, 1, 1, 1]), (2, 3))
    m = MapModel(grid=grid, terrain_ids=ids, terrains=(Terrain(), Terrain(name="x", move="swim")))
    assert held(m, "terrain_ids") is ids  # nothing made yet
    assert m.mode_counts()["swim"] == 4 and m.terrain_counts() == {"x": 4, "open": 2}
    assert held(m, "terrain_ids") is ids  # the counts made no numpy array
    m.with_terrain([(0, 0)], {"name": "y"})  # written in place, still Cells
    assert held(m, "terrain_ids") is ids and ids.values[0] == 2
    first = m.terrain_ids
    assert isinstance(first, np.ndarray) and first.tolist() == [[2, 1, 0], [1, 1, 1]]
    assert m.terrain_ids is first and held(m, "terrain_ids") is first
    assert m.terrain_counts() == {"x": 4, "open": 1, "y": 1}
    # copies and pickles carry the field as it is held
    fresh = MapModel(
        grid=grid, terrain_ids=Cells(array(I32, [0] * 6), (2, 3)), terrains=(Terrain(),)
    )
    back = pickle.loads(pickle.dumps(fresh))
    assert (
        isinstance(held(back, "terrain_ids"), Cells) and back.terrain_ids.tolist() == [[0] * 3] * 2
    )
    other = replace(fresh, path="p")
    assert isinstance(held(other, "terrain_ids"), np.ndarray)
    assert MapModel.uniform(grid, Terrain()).terrain_ids.dtype == np.int32


def test_value_counts_both_ways() -> None:
    rng = random.Random(1)
    for shape, n in [((1, 1), 1), ((7, 9), 3), ((40, 30), 13), ((64, 64), 200)]:
        data = _cells(rng, shape, n, I32)
        assert pure(data)
        assert value_counts(data, n + 2) == value_counts(data.numpy(), n + 2)
        assert sum(value_counts(data, n)) == shape[0] * shape[1]


@pytest.mark.parametrize("layers", [1, 2, 3, 5])
def test_layer_stacks_both_ways(layers: int) -> None:
    rng = random.Random(layers)
    for shape, top in [((1, 1), 2), ((5, 8), 3), ((30, 40), 14), ((20, 20), 1 << 28)]:
        data = [_cells(rng, shape, top) for _ in range(layers)]
        used, stacks, inverse = layer_stacks(list(data))
        assert isinstance(used, list) and isinstance(inverse, Cells)
        n_used, n_stacks, n_inverse = layer_stacks([d.numpy() for d in data])
        assert isinstance(n_inverse, np.ndarray)
        assert used == np.asarray(n_used).tolist()
        assert stacks == n_stacks and stacks == sorted(stacks)
        assert _flat(inverse) == _flat(n_inverse)
        assert [stacks[i] for i in _flat(inverse)] == list(
            zip(*(d.values for d in data), strict=True)
        )


def test_first_unknown_gid_both_ways() -> None:
    ranges = [(1, 5), (10, 12)]
    for used in ([0, 1, 4], [0, 5, 11, 20], [3, 12], [0]):
        want = next((g for g in used if g and not any(a <= g < b for a, b in ranges)), None)
        assert _first_unknown(used, ranges) == want
        assert _first_unknown(np.array(used, dtype=np.int64), ranges) == want


def test_split_flags_and_paste_both_ways() -> None:
    rng = random.Random(3)
    raw = Cells(
        array(U32, [rng.choice([0, 5, 0x80000007, 0xF0000001, 0x1000000A]) for _ in range(60)]),
        (6, 10),
    )
    gids, flags = split_flags(raw)
    n_gids, n_flags = split_flags(raw.numpy())
    assert isinstance(gids, Cells) and isinstance(n_gids, np.ndarray)
    assert _flat(gids) == _flat(n_gids) and _flat(flags) == _flat(n_flags)
    assert n_gids.dtype == np.uint32 and n_flags.dtype == np.uint8
    assert gids.numpy().dtype == np.uint32 and flags.numpy().dtype == np.uint8
    chunks = [(x, y, _cells(rng, (2, 3), 9)) for x, y in [(-4, -2), (2, 0), (-1, 4), (2, 0)]]
    pasted = _paste(chunks, -4, -2, (8, 9))
    assert isinstance(pasted, Cells)
    n_pasted = _paste([(x, y, a.numpy()) for x, y, a in chunks], -4, -2, (8, 9))
    assert isinstance(n_pasted, np.ndarray) and _flat(pasted) == _flat(n_pasted)


# --------------------------------------------------------------------------- csv


def _csv(text: str, shape: tuple[int, int]) -> list[int] | str:
    data = ET.fromstring('<data encoding="csv"/>')
    data.text = text
    try:
        gids, _ = decode_layer_data("m.tmx", data, "layer 'g'", shape[1], shape[0], False)
    except MapError as exc:
        return str(exc)
    assert gids is not None and gids.shape == shape
    return _flat(gids)


CSV = [
    "1,2,3,4",
    "1, 2,\n3 ,4\n",
    "\n0,0,\t0,\r\n4294967295",
    "007,2,3,4",
    "1,2,3,4294967296",
    "9999999999,1,1,1",
    "1,2,3",
    "1,2,3,4,5",
    "1,2,,4",
    "1,2,3,4,",
    "1,-2,3,4",
    "+1,2,3,4",
    "1,2,x,4",
    "1,2,3.5,4",
    "1,2,3,\u00b2",
    "1,2,3,\u0664",
    "1,2,3,\x1c4",
    "12345678901,1,1,1",
    "",
    " ",
]


@pytest.mark.filterwarnings("ignore::DeprecationWarning")
@pytest.mark.parametrize("text", CSV)
def test_csv_reads_the_same_with_and_without_numpy(
    text: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The same numbers or the same error line from the stdlib branch, the compiled
    ``csv_u32`` (a larger layer's, where it is built) and numpy's parse."""
    here = _csv(text, (2, 2))
    monkeypatch.setattr(cells, "SMALL_CELLS", -1)
    assert here == _csv(text, (2, 2))  # the compiled parse, falling back to numpy
    monkeypatch.setattr(kernel, "enabled", False)
    assert here == _csv(text, (2, 2))  # numpy alone


_SPACES = ["", " ", "\t", "\n", "\r\n", "  \n ", "\v", "\f"]


@pytest.mark.filterwarnings("ignore::DeprecationWarning")
@pytest.mark.skipif(not kernel.available(), reason="engine/_kernel.c is not built")
def test_the_compiled_csv_reads_as_numpy_does(monkeypatch: pytest.MonkeyPatch) -> None:
    """Random layers larger than the stdlib branch reads, as Tiled and hand edits write
    them (spaces and line ends round the numbers, leading zeros, the largest gids), read
    to the same gids by the compiled parse as by numpy; one wrong character anywhere in
    them gives the same error line both ways."""
    rng = random.Random(20)
    shape = (130, 131)  # 17030 cells: more than SMALL_CELLS
    assert shape[0] * shape[1] > cells.SMALL_CELLS
    for case in range(12):
        values = [
            rng.choice([0, 1, 7, 2**31, 2**32 - 1, rng.randrange(2**32)]) for _ in range(17030)
        ]
        parts = [
            rng.choice(_SPACES)
            + ("0" * rng.randrange(3) if case % 2 else "")
            + str(v)
            + rng.choice(_SPACES)
            for v in values
        ]
        text = ",".join(parts).strip()
        if case >= 8:  # one bad spot: a sign, a letter, an empty field, one number too many
            at = rng.randrange(len(parts))
            parts[at] = ["-1", "x", "", "1,2"][case - 8]
            text = ",".join(parts).strip()
        compiled = _csv(text, shape)
        monkeypatch.setattr(kernel, "enabled", False)
        assert compiled == _csv(text, shape), case
        monkeypatch.undo()
        if case < 8:
            assert compiled == values
            # Leading zeros (odd cases) make some numbers longer than the 10 digits the
            # compiled parse takes: that layer is numpy's. The others it reads itself.
            out = array(U32, [0]) * len(values)
            got = kernel.csv_u32(text, out)
            assert got == -1 if case % 2 else (got == len(values) and out.tolist() == values)
        else:
            assert isinstance(compiled, str) and "layer 'g'" in compiled


# --------------------------------------------------------------------------- whole maps


def _maps() -> list[Path]:
    found = sorted((ROOT / "maps").glob("*.tm[xj]")) + sorted((ROOT / "maps").glob("*.dd2vtt"))
    if CORPUS.is_dir():
        found += sorted(p for p in CORPUS.rglob("*") if p.suffix in (".tmx", ".tmj", ".json"))
    return found


def _read(path: Path) -> tuple | str:
    try:
        m = load_map(path)
    except MapError as exc:
        return f"MapError: {exc}"
    except Exception as exc:  # a corpus file that is not a map at all: the same either way
        return f"{type(exc).__name__}: {exc}"
    return (
        m.terrain_ids.dtype.str,
        m.terrain_ids.tolist(),
        m.terrains,
        [
            (
                lay.name,
                lay.gids.dtype.str,
                lay.gids.tolist(),
                lay.flags.dtype.str,
                lay.flags.tolist(),
            )
            for lay in m.layers
        ],
        m.spawns,
        m.exits,
        m.walls,
        m.notes,
        m.origin,
    )


@pytest.mark.filterwarnings("ignore::DeprecationWarning")
def test_every_map_reads_the_same_with_and_without_numpy(monkeypatch: pytest.MonkeyPatch) -> None:
    maps = _maps()
    assert len(maps) >= 5
    here = [_read(p) for p in maps]
    assert any(not isinstance(r, str) for r in here)
    monkeypatch.setattr(cells, "SMALL_CELLS", -1)
    for path, want in zip(maps, here, strict=True):
        assert _read(path) == want, path
    monkeypatch.setattr(kernel, "enabled", False)  # csv layers by numpy's parse
    for path, want in zip(maps, here, strict=True):
        assert _read(path) == want, path


def test_a_small_map_is_read_into_cells(tmp_path: Path) -> None:
    from tests.tmxtext import write

    path = write(tmp_path / "m.tmx", ["..~~", "#.^.", "OHa_"])
    m = load_map(path)
    assert isinstance(held(m, "terrain_ids"), Cells)
    assert isinstance(held(m.layers[0], "gids"), Cells)
    assert m.mode_counts()["walk"] == 4 and m.terrain_at((2, 0)).name == "water"
