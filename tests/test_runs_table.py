"""A fresh batch's runs table, made as its runs come in (engine.batch.runstable), is byte
for byte the table made from its runs.jsonl alone (engine.batch.results.write_runs_table,
the plain way), on every shipped scenario, with measures, local and on worker processes."""

from __future__ import annotations

from pathlib import Path

import pytest

from engine.batch import run_batch, runner
from engine.batch.results import write_runs_table

ROOT = Path(__file__).resolve().parents[1]
SCENARIOS = sorted((ROOT / "scenarios").glob("*.yaml"))

pytest.importorskip("pyarrow")


@pytest.mark.parametrize("scenario", SCENARIOS, ids=lambda p: p.stem)
def test_the_table_made_as_runs_come_is_the_files(scenario: Path, tmp_path: Path) -> None:
    out = tmp_path / "b"
    run_batch(str(scenario), runs=40, seed=3, out_dir=str(out))
    plain = tmp_path / "plain.parquet"
    write_runs_table(str(out / "runs.jsonl"), str(plain))
    assert (out / "runs.parquet").read_bytes() == plain.read_bytes()


def test_two_workers_and_a_batch_too_big_to_hold(tmp_path: Path, monkeypatch) -> None:
    chase = str(ROOT / "scenarios" / "chase.yaml")
    run_batch(chase, runs=2100, seed=4, out_dir=str(tmp_path / "two"), workers=2)
    plain = tmp_path / "plain.parquet"
    write_runs_table(str(tmp_path / "two" / "runs.jsonl"), str(plain))
    assert (tmp_path / "two" / "runs.parquet").read_bytes() == plain.read_bytes()
    # Over the in-memory bound the table is read from the file: the same bytes.
    made: list[int] = []
    monkeypatch.setattr(runner, "IN_MEMORY_RUNS", 100)
    monkeypatch.setattr(runner, "RunsTable", lambda: made.append(1))
    run_batch(chase, runs=2100, seed=4, out_dir=str(tmp_path / "big"), workers=2)
    assert not made
    assert (tmp_path / "big" / "runs.parquet").read_bytes() == plain.read_bytes()
