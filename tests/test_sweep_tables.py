"""A sweep's tables made from its points' runs tables, not by reading runs.jsonl again
(issue 43): each made the fast way is byte for byte the one made the plain way (from the
files), and a sweep parses no runs.jsonl at all."""

from __future__ import annotations

import json
import math
import random
from pathlib import Path
from typing import Any

import pytest
from conftest import ROOT

from engine.batch import results
from engine.batch.paired import pair_points, pair_runs, paired_block, paired_t, point_runs
from engine.batch.results import RunsTable, finish_runs_table, write_runs_table
from engine.sweep import point_dir, run_sweep, sweep_spec, write_tables

pytest.importorskip("pyarrow")

CHASE = str(ROOT / "scenarios" / "chase.yaml")
MOVE = "pursuer1.stats.move"
MEASURES = ("turns_in_water", "distance_at_end", "checks_failed")


def _measured(tmp_path: Path) -> str:
    text = (ROOT / "scenarios" / "chase.yaml").read_text()
    text = text.replace("map: ../maps/chase.tmx", f"map: {ROOT / 'maps' / 'chase.tmx'}")
    path = tmp_path / "measured.yaml"
    path.write_text(text + f"\nmeasures: [{', '.join(MEASURES)}]\n")
    return str(path)


def _record(i: int, rng: random.Random, measures: bool) -> dict[str, Any]:
    outcome = rng.choice(["capture", "escape", "timeout"])
    record: dict[str, Any] = {
        "run": i,
        "seed": rng.getrandbits(32),
        "outcome": outcome,
        "turns": rng.randrange(1, 60),
        "cell": None if outcome == "timeout" else [rng.randrange(40), rng.randrange(40)],
        "by": None if outcome != "capture" else rng.choice(["pursuer1", "pursuer2", "hawk"]),
        "events": rng.randrange(500),
    }
    if measures:
        record["measures"] = {
            "checks_failed": rng.randrange(5),
            "distance_at_end": rng.choice([0.0, 1.5, 2.25, 7.0]),
            "turns_in_water": rng.randrange(9),
        }
    return record


def _plain_and_fast(tmp_path: Path, records: list[dict[str, Any]], table: RunsTable) -> bytes:
    """The runs.parquet the plain way (from runs.jsonl) and ``table``'s, checked equal."""
    runs = tmp_path / "runs.jsonl"
    runs.write_text("".join(json.dumps(r, sort_keys=True) + "\n" for r in records))
    plain, fast = tmp_path / "plain.parquet", tmp_path / "fast.parquet"
    write_runs_table(str(runs), str(plain))
    for start in range(0, len(records), 25):  # as a batch appends them, a chunk at a time
        table.add(records[start : start + 25])
    finish_runs_table(table, str(runs), str(fast))
    assert fast.read_bytes() == plain.read_bytes()
    return fast.read_bytes()


@pytest.mark.parametrize("measures", [False, True], ids=["plain", "measures"])
@pytest.mark.parametrize("n", [1, 1024, 1500, 70_000])
def test_a_batchs_table_from_its_records_is_the_table_from_its_file(
    tmp_path: Path, n: int, measures: bool
) -> None:
    # 70 000 runs: more than one row group (TABLE_GROUP), a last record batch part-full.
    rng = random.Random(n)
    records = [_record(i, rng, measures) for i in range(n)]
    table = RunsTable()
    _plain_and_fast(tmp_path, records, table)
    assert table.whole


def test_a_table_that_gives_up_is_made_from_the_file(tmp_path: Path) -> None:
    rng = random.Random(3)
    records = [_record(i, rng, True) for i in range(300)]
    many = RunsTable(held=200)  # past what it holds: the file is read
    _plain_and_fast(tmp_path / "a", _mkdir(tmp_path / "a", records), many)
    assert not many.whole and not many.batches
    # A cell as a tuple is a list in runs.jsonl: the table does not guess, it reads the file.
    odd = [dict(r) for r in records]
    odd[7]["cell"] = tuple(odd[7]["cell"] or (1, 2))
    tupled = RunsTable()
    _plain_and_fast(tmp_path / "b", _mkdir(tmp_path / "b", odd), tupled)
    assert not tupled.whole


def _mkdir(path: Path, records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    path.mkdir()
    return records


def _no_parsing(monkeypatch: pytest.MonkeyPatch) -> None:
    def parsed(*args: Any, **kw: Any) -> Any:
        raise AssertionError("runs.jsonl parsed again")

    import engine.batch.paired
    import engine.batch.runner
    import engine.batch.sweeptables

    for module in (results, engine.batch.paired, engine.batch.runner, engine.batch.sweeptables):
        monkeypatch.setattr(module, "iter_runs", parsed)


@pytest.mark.parametrize("seeds", ["common", "per-point"])
def test_a_sweeps_tables_from_the_points_tables_equal_those_from_runs_jsonl(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, seeds: str
) -> None:
    """A sweep reads no runs.jsonl (each point's runs.parquet is made from its records, the
    sweep's tables and paired block from those); made again from the points' runs.jsonl
    alone (their runs.parquet removed), every byte is the same."""
    scenario = _measured(tmp_path)
    out = tmp_path / "s"
    vary = [f"{MOVE}=8,12,16", "settings.wild_one=complication,none"]
    _no_parsing(monkeypatch)
    doc = run_sweep(scenario, vary=vary, runs=30, seed=5, seeds=seeds, out_dir=str(out))
    monkeypatch.undo()
    spec = json.loads((out / "sweep.json").read_text())
    summaries = [json.loads((out / "points" / p["point"] / "summary.json").read_text())
                 for p in spec["points"]]  # fmt: skip
    fast = {n: (out / n).read_bytes() for n in ("runs.parquet", "points.parquet")}
    if seeds == "common":
        assert paired_block(str(out), doc) == doc["paired"]
    for previous in (False, True):
        against = "previous" if previous else "first"
        before = paired_block(str(out), doc, against)
        for p in spec["points"]:
            (out / "points" / p["point"] / "runs.parquet").unlink(missing_ok=True)
        assert paired_block(str(out), doc, against) == before
    write_tables(str(out), spec, summaries)
    for name, data in fast.items():
        assert (out / name).read_bytes() == data, name


def test_pairs_from_columns_equal_pairs_from_records(tmp_path: Path) -> None:
    """:func:`pair_runs` (columns, from runs.parquet or runs.jsonl) gives the document
    :func:`pair_points` gives from the two runs.jsonl: common seeds, points of other
    lengths (``--until-ci``), and points seeded apart (not paired)."""
    common, apart = tmp_path / "c", tmp_path / "a"
    vary = [f"{MOVE}=8,11,14"]
    run_sweep(CHASE, vary=vary, runs=25, seed=4, until_ci=0.1, out_dir=str(common))
    run_sweep(CHASE, vary=vary, runs=25, seed=4, seeds="per-point", out_dir=str(apart))
    sizes = set()
    for out in (common, apart):
        folders = [out / "points" / point_dir({MOVE: m}) for m in (8, 11, 14)]
        for ref in folders:
            for point in folders:
                plain = pair_points(str(ref / "runs.jsonl"), str(point / "runs.jsonl"))
                fast = pair_runs(point_runs(str(ref)), point_runs(str(point)))
                assert fast == plain
                sizes.add(plain["pairs"])
                for outcome in ("escape", "timeout"):
                    plain = pair_points(str(ref / "runs.jsonl"), str(point / "runs.jsonl"), outcome)
                    assert (
                        pair_runs(
                            point_runs(str(ref), outcome), point_runs(str(point), outcome), outcome
                        )
                        == plain
                    )
        for folder in folders:  # from runs.jsonl where a point has no table
            table = point_runs(str(folder))
            (folder / "runs.parquet").unlink()
            jsonl = point_runs(str(folder))
            assert pair_runs(table, table) == pair_runs(jsonl, jsonl)
    assert 0 in sizes and len(sizes) > 2  # points apart; points of several lengths


def test_the_t_quantile_is_scipy_stats_own() -> None:
    from scipy.stats import t

    for n in [2, 3, 5, 30, 31, 1000, 1501, 10**6, 10**9]:
        mean, lo, hi = paired_t(n, 3 * n, 20 * n)
        half = float(t.ppf(0.975, n - 1)) * math.sqrt((20 * n - n * 3.0 * 3.0) / (n - 1) / n)
        assert (lo, hi) == (mean - half, mean + half)


def test_a_resumed_point_makes_its_table_from_its_file(tmp_path: Path) -> None:
    """A point resumed part-way has runs in its file from before: its table is read from
    runs.jsonl, the same as an uninterrupted point's."""
    vary = [f"{MOVE}=8,12"]
    whole, cut = tmp_path / "w", tmp_path / "c"
    for out in (whole, cut):
        run_sweep(CHASE, vary=vary, runs=40, seed=4, out_dir=str(out))
    runs = cut / "points" / point_dir({MOVE: 12}) / "runs.jsonl"
    runs.write_bytes(b"".join(runs.read_bytes().splitlines(keepends=True)[:15]))
    (runs.parent / "summary.json").unlink()
    (cut / "summary.json").unlink()
    run_sweep(CHASE, vary=vary, runs=40, seed=4, out_dir=str(cut), resume=True)
    for name in ("runs.parquet", "points.parquet", f"points/{point_dir({MOVE: 12})}/runs.parquet"):
        assert (cut / name).read_bytes() == (whole / name).read_bytes(), name
    assert sweep_spec(CHASE, vary, 40, 4)["points"][1]["point"] == point_dir({MOVE: 12})


@pytest.mark.parametrize("held", [10**6, 100], ids=["held", "read-again"])
def test_points_written_in_any_order_make_the_same_tables(tmp_path: Path, held: int) -> None:
    """On a cluster points are written as their tasks finish: :class:`SweepTables` told of
    them in any order (a point before its reference, too) makes the paired block and the
    tables the sweep makes from its folders, with its rows held or read again."""
    from engine.batch.sweeptables import SweepTables

    out = tmp_path / "s"
    vary = [f"{MOVE}=8,12,16", "settings.wild_one=complication,none"]
    doc = run_sweep(CHASE, vary=vary, runs=30, seed=5, out_dir=str(out))
    spec = json.loads((out / "sweep.json").read_text())
    summaries = [json.loads((out / "points" / p["point"] / "summary.json").read_text())
                 for p in spec["points"]]  # fmt: skip
    made = {n: (out / n).read_bytes() for n in ("runs.parquet", "points.parquet")}
    for order in ([5, 3, 0, 1, 4, 2], [2, 1, 0, 5, 4, 3]):
        tables = SweepTables(spec, str(out), paired=True, held=held)
        for i in order:
            tables.point_written(i)
        assert len(tables.refruns) + len(tables.waiting) == 0  # all paired, none held
        assert tables.paired(doc) == doc["paired"] == paired_block(str(out), doc)
        for name in made:
            (out / name).unlink()
        tables.write(summaries)
        for name, data in made.items():
            assert (out / name).read_bytes() == data, name
