"""A sweep on a Dask cluster: each point one task, its runs back as one Parquet fragment
(engine.batch.dask.DaskPoints), the same folders as a sweep on one local worker."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from engine.batch.results import RUN_KEYS, fragment_records, runs_fragment
from engine.batch.work import WorkerCache, play_point, run_seed
from engine.sweep import point_dir, run_sweep

ROOT = Path(__file__).resolve().parent.parent
SCENARIOS = sorted((ROOT / "scenarios").glob("*.yaml"))
CHASE = str(ROOT / "scenarios" / "chase.yaml")
MOVE = "pursuer1.stats.move"

pytest.importorskip("pyarrow")


@pytest.mark.parametrize("path", SCENARIOS, ids=lambda p: p.stem)
def test_a_fragment_gives_back_the_very_records(path: Path) -> None:
    cache = WorkerCache()
    records = cache.run_chunk(str(path), (), [(i, run_seed(3, i)) for i in range(12)])
    assert records and all(r.keys() == RUN_KEYS for r in records)
    back = fragment_records(runs_fragment(records))
    assert back == records
    # As runs.jsonl writes them: byte for byte.
    dumped = [json.dumps(r, sort_keys=True) for r in records]
    assert [json.dumps(r, sort_keys=True) for r in back] == dumped


def test_a_fragment_refuses_a_record_it_could_not_give_back() -> None:
    record = {"run": 0, "seed": 1, "outcome": "capture", "turns": 2, "cell": [1, 2], "by": "a",
              "events": 3, "note": "x"}  # fmt: skip
    with pytest.raises(ValueError, match="other keys"):
        runs_fragment([record])


def test_a_timeout_without_a_cell_or_a_capturer_comes_back_as_it_went() -> None:
    record = {"run": 4, "seed": 9, "outcome": "timeout", "turns": 30, "cell": None, "by": None,
              "events": 120}  # fmt: skip
    assert fragment_records(runs_fragment([record])) == [record]


def test_a_point_played_whole_is_its_batch_of_chunks() -> None:
    records = fragment_records(play_point(CHASE, ((MOVE, 9),), 11, 60))
    chunked = WorkerCache().run_chunk(
        CHASE, ((MOVE, 9),), [(i, run_seed(11, i)) for i in range(60)]
    )
    assert records == chunked
    # A point's runs are small on the wire: about 20 bytes a run.
    assert len(play_point(CHASE, ((MOVE, 9),), 11, 1500)) < 64 * 1024


def test_a_workers_points_of_one_seed_make_their_run_seeds_once() -> None:
    from engine.batch import work

    work._point_items.cache_clear()
    first = fragment_records(play_point(CHASE, ((MOVE, 9),), 11, 60))
    second = fragment_records(play_point(CHASE, ((MOVE, 10),), 11, 60))
    assert work._point_items.cache_info().hits == 1
    seeds = [(i, run_seed(11, i)) for i in range(60)]
    assert list(work._point_items(11, 60)) == work._items(11, 60) == seeds
    assert [(r["run"], r["seed"]) for r in first] == [(r["run"], r["seed"]) for r in second]
    assert second == WorkerCache().run_chunk(CHASE, ((MOVE, 10),), seeds)


@pytest.fixture(scope="module")
def cluster() -> Iterator[Any]:
    from distributed import LocalCluster

    with LocalCluster(
        n_workers=1, threads_per_worker=1, host="127.0.0.1", dashboard_address="127.0.0.1:0",
        processes=True,
    ) as c:  # fmt: skip
        yield c


def _runs(out: Path, move: int) -> bytes:
    return (out / "points" / point_dir({MOVE: move}) / "runs.jsonl").read_bytes()


def _summary(out: Path) -> str:
    """The sweep's summary.json less the folder it names."""
    return (out / "summary.json").read_text().replace(str(out), "OUT")


def test_more_points_than_the_cluster_holds_at_once(tmp_path: Path, cluster: Any) -> None:
    """Six points on one worker (two held at once): every point one task, each point's
    folder and the sweep's tables as a local sweep writes them."""
    from distributed import Client, get_task_stream

    moves = [6, 7, 8, 9, 10, 11]
    vary = [f"{MOVE}=" + ",".join(map(str, moves))]
    run_sweep(CHASE, vary=vary, runs=40, seed=4, out_dir=str(tmp_path / "l"))
    with Client(cluster.scheduler_address, set_as_default=False) as client:
        with get_task_stream(client=client) as ts:
            run_sweep(
                CHASE, vary=vary, runs=40, seed=4, scheduler=cluster.scheduler_address,
                out_dir=str(tmp_path / "d"),
            )  # fmt: skip
    played = [t for t in ts.data if t["key"].startswith("play_point")]
    assert len(played) == len(moves), [t["key"] for t in ts.data]
    for move in moves:
        assert _runs(tmp_path / "l", move) == _runs(tmp_path / "d", move)
    assert _summary(tmp_path / "l") == _summary(tmp_path / "d")
    import pyarrow.parquet as pq

    assert pq.read_table(tmp_path / "l" / "runs.parquet").equals(
        pq.read_table(tmp_path / "d" / "runs.parquet")
    )


def test_a_point_resumed_part_way_completes_on_the_cluster(tmp_path: Path, cluster: Any) -> None:
    vary = [f"{MOVE}=8,12"]
    run_sweep(CHASE, vary=vary, runs=30, seed=4, out_dir=str(tmp_path / "l"))
    run_sweep(CHASE, vary=vary, runs=30, seed=4, out_dir=str(tmp_path / "d"))
    # Point 8 cut to its first 10 runs, and the sweep's summary gone: --resume.
    runs = tmp_path / "d" / "points" / point_dir({MOVE: 8}) / "runs.jsonl"
    runs.write_bytes(b"".join(runs.read_bytes().splitlines(keepends=True)[:10]))
    (runs.parent / "summary.json").unlink()
    (tmp_path / "d" / "summary.json").unlink()
    run_sweep(
        CHASE, vary=vary, runs=30, seed=4, scheduler=cluster.scheduler_address,
        out_dir=str(tmp_path / "d"), resume=True,
    )  # fmt: skip
    for move in (8, 12):
        assert _runs(tmp_path / "l", move) == _runs(tmp_path / "d", move)
    assert _summary(tmp_path / "l") == _summary(tmp_path / "d")


def test_a_fragment_keeps_a_scenarios_measures(tmp_path: Path) -> None:
    text = (ROOT / "scenarios" / "chase.yaml").read_text()
    text = text.replace("map: ../maps/chase.tmx", f"map: {ROOT / 'maps' / 'chase.tmx'}")
    scenario = tmp_path / "measured.yaml"
    scenario.write_text(text + "\nmeasures: [distance_at_end, checks_failed, turns_in_water]\n")
    records = WorkerCache().run_chunk(str(scenario), (), [(i, run_seed(3, i)) for i in range(12)])
    assert all(set(r["measures"]) == {"distance_at_end", "checks_failed", "turns_in_water"}
               for r in records)  # fmt: skip
    back = fragment_records(runs_fragment(records))
    dumped = [json.dumps(r, sort_keys=True) for r in records]
    assert [json.dumps(r, sort_keys=True) for r in back] == dumped
    with pytest.raises(ValueError, match="other keys"):
        runs_fragment([records[0], {**records[1], "measures": {"checks_failed": 1}}])


def test_until_ci_steps_on_the_cluster_equal_a_local_sweeps(tmp_path: Path, cluster: Any) -> None:
    """A point's first step is its task; the steps after extend it on the same connection."""
    vary = [f"{MOVE}=8,11"]
    kw: dict[str, Any] = {"vary": vary, "runs": 25, "seed": 4, "until_ci": 0.1}
    run_sweep(CHASE, out_dir=str(tmp_path / "l"), **kw)
    run_sweep(CHASE, out_dir=str(tmp_path / "d"), scheduler=cluster.scheduler_address, **kw)
    for move in (8, 11):
        assert _runs(tmp_path / "l", move) == _runs(tmp_path / "d", move)
    assert _summary(tmp_path / "l") == _summary(tmp_path / "d")


def test_points_are_written_as_they_finish(tmp_path: Path, monkeypatch: Any) -> None:
    """Two workers, the first point a long one: the sweep writes the short points as their
    tasks finish, before the first, and tells of them in grid order; every file is a local
    sweep's."""
    from distributed import LocalCluster

    from engine.batch.sweeptables import SweepTables

    # The first point's runs last (about 1.4 s of play), the others' end after a turn or
    # two (about 0.1 and 0.3 s): the second ends while the first plays, on the other worker.
    vary = ["turns=1000,1,2"]
    kw: dict[str, Any] = {"vary": vary, "runs": 200, "seed": 4}
    run_sweep(CHASE, out_dir=str(tmp_path / "l"), **kw)
    order: list[int] = []
    real = SweepTables.point_written

    def written(self: SweepTables, i: int) -> None:
        order.append(i)
        real(self, i)

    monkeypatch.setattr(SweepTables, "point_written", written)
    told: list[int] = []
    with LocalCluster(
        n_workers=2, threads_per_worker=1, host="127.0.0.1", dashboard_address="127.0.0.1:0",
        processes=True,
    ) as c:  # fmt: skip
        from distributed import Client

        with Client(c.scheduler_address, set_as_default=False) as client:
            client.run(_import_engine)  # the workers started, as a cluster's are
        run_sweep(
            CHASE, out_dir=str(tmp_path / "d"), scheduler=c.scheduler_address,
            point_done=lambda i, n, p, s: told.append(i), **kw,
        )  # fmt: skip
    assert sorted(order) == told == list(range(3))
    assert order[0] != 0, order  # a short point was written while the long one played
    for p in json.loads((tmp_path / "l" / "sweep.json").read_text())["points"]:
        for name in ("runs.jsonl", "runs.parquet", "summary.json"):
            path = Path("points") / p["point"] / name
            local, dask = ((tmp_path / d / path).read_bytes() for d in "ld")
            assert local.replace(b"/l/", b"/d/") == dask, path
    assert _summary(tmp_path / "l") == _summary(tmp_path / "d")
    for name in ("runs.parquet", "points.parquet"):
        assert (tmp_path / "l" / name).read_bytes() == (tmp_path / "d" / name).read_bytes()


def _import_engine() -> None:
    import engine.batch.work  # noqa: F401
    import engine.sim  # noqa: F401


def test_a_fragments_columns_are_pyarrows_own() -> None:
    """The columns a fragment is made of (engine.batch.results.arrow_column) equal
    pa.array's, nulls, text and edge values included; what it does not take exactly goes
    through pa.array."""
    import random

    import pyarrow as pa

    from engine.batch.results import arrow_column

    rng = random.Random(5)
    words = ["capture", "", "pursuer1", "héron", "鷹", None]
    cases: list[tuple[list[Any], Any]] = [
        ([rng.choice(words) for _ in range(300)], pa.string()),
        ([rng.choice([None, 0, -1, 2**63 - 1, -(2**63), rng.getrandbits(40)]) for _ in range(300)],
         pa.int64()),
        ([rng.choice([None, 0.0, -2.5, 1e300, 7, 2**53, 0.1]) for _ in range(300)], pa.float64()),
        ([], pa.int64()), ([], pa.string()), ([None, None], pa.string()), ([3], pa.float64()),
        ([1, 2.5], pa.float64()), ([2**53 + 1, 1.0], pa.float64()), ([True, 2], pa.int64()),
    ]  # fmt: skip
    for values, kind in cases:
        try:
            want = pa.array(values, type=kind)
        except (pa.ArrowException, TypeError, ValueError) as exc:
            with pytest.raises(type(exc)):
                arrow_column(values, kind)
            continue
        got = arrow_column(values, kind)
        assert got.equals(want), (values[:5], kind)
        assert got.null_count == want.null_count


def test_a_fragment_is_made_without_pandas() -> None:
    """A new worker's first point imports no pandas (pyarrow's list conversion would)."""
    import subprocess
    import sys

    code = (
        "import sys; from engine.batch.work import play_point; "
        f"play_point({CHASE!r}, (), 3, 30); print('pandas' in sys.modules)"
    )
    got = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True
    )
    assert got.stdout.strip() == "False"
