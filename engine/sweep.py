"""Parameter sweeps: the old import path of :mod:`engine.batch.sweep`, kept so that callers
written against it keep working."""

from __future__ import annotations

from engine.batch.sweep import (
    MAX_POINTS,
    OUTCOMES,
    POINTS_TABLE,
    RUNS_TABLE,
    SWEEP_META,
    SWEEP_SUMMARY,
    PointFn,
    canonical_name,
    check_params,
    grid,
    overrides_of,
    parse_vary,
    point_dir,
    point_seed,
    point_text,
    points_schema,
    read_sweep,
    run_sweep,
    runs_schema,
    sweep_spec,
    sweep_summary,
    write_tables,
)

__all__ = [
    "MAX_POINTS",
    "OUTCOMES",
    "POINTS_TABLE",
    "RUNS_TABLE",
    "SWEEP_META",
    "SWEEP_SUMMARY",
    "PointFn",
    "canonical_name",
    "check_params",
    "grid",
    "overrides_of",
    "parse_vary",
    "point_dir",
    "point_seed",
    "point_text",
    "points_schema",
    "read_sweep",
    "run_sweep",
    "runs_schema",
    "sweep_spec",
    "sweep_summary",
    "write_tables",
]
