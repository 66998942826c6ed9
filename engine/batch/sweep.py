"""Parameter sweeps: one seeded batch per point of a grid of varied scenario values.

``tacgrid sweep chase.yaml --vary pursuer1.stats.move=8,10,12 --vary settings.wild_one=
complication,none`` runs the Cartesian grid of the values (here 6 points), each point an
ordinary batch (:func:`engine.batch.run_batch`) in its own folder ``DIR/points/p-HASH``:

* Common random numbers (``seeds="common"``, the default): every point's batch has the
  sweep's seed, so run *i* of every point rolls from the same run seed and two points
  compare run for run (engine.batch.paired: the paired differences ``report`` shows).
  ``seeds="per-point"`` (a sweep made before common seeds, or ``--seeds per-point``) derives
  each point's batch seed from the sweep's seed and the point's canonical text (its
  parameters sorted by name, values as JSON). Either way a point's seed never depends on
  its place in the grid: adding a value or listing them in another order leaves every
  existing point's runs as they were.
* ``until_ci=W`` (``--until-ci W``): each point runs in steps (engine.batch.point) until the
  95% Wilson interval of its capture rate is at most W wide, or it has ``max_runs`` runs;
  each step extends the point's batch as ``run --resume --runs N`` does, so the runs are
  written as they come and a stopped sweep resumed ends as an uninterrupted one.
* Each point folder is a batch folder, so ``--resume`` completes (or, with a larger
  ``--runs``, extends) each point exactly as ``run --resume`` does, and a sweep stopped
  half-way and resumed gives the bytes of an uninterrupted one.
* At the end the runs of every point go into ``DIR/runs.parquet`` (one row per run, every
  varied parameter a column) and the per-point summaries into ``DIR/points.parquet`` and
  ``DIR/summary.json``; ``sweep.json`` states the sweep (scenario, seed, runs, grid).

What can vary (see :func:`engine.scenario.apply_edits`): ``settings.NAME`` (a rule
setting), ``TOKEN.stats.STAT``, ``TOKEN.pace``, ``TOKEN.policy``, ``goals.capture``,
``turns`` (the turn limit), ``terrain.NAME.PROP`` (a terrain's move, difficulty, dn, cost,
cost_add, height or fall, on every cell of it) and ``region.NAME.PROP`` (the same properties
on the cells of the map's region object named NAME only, e.g. ``region.mud.cost=1,3``).
A scenario may state its sweep in a ``sweep:`` block::

    sweep:
      runs: 200                       # per point (default: --runs, else the scenario's)
      seed: 7                         # default: --seed, else the scenario's
      vary:
        pursuer1.stats.move: [8, 10, 12]
        settings.wild_one: [complication, none]
"""

from __future__ import annotations

import hashlib
import itertools
import json
import os
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from engine import version
from engine.batch.control import BatchStopped, _FolderLock, out_folder
from engine.batch.dask import (
    DaskPoints,
    PointSpec,
    _check_address,
    _close_client,
    _cluster_logs_quiet,
    _connect,
)
from engine.batch.measures import ordered
from engine.batch.point import UNTIL_MAX_RUNS, PointWork, run_point
from engine.batch.results import need_tables
from engine.batch.runner import MAX_RUNS, ProgressFn, _check_runs, _check_version

# The sweep's tables, where callers of this module (and engine.sweep) have found them.
from engine.batch.sweeptables import OUTCOMES as OUTCOMES
from engine.batch.sweeptables import POINTS_TABLE as POINTS_TABLE
from engine.batch.sweeptables import RUNS_TABLE as RUNS_TABLE
from engine.batch.sweeptables import SweepTables
from engine.batch.sweeptables import points_schema as points_schema
from engine.batch.sweeptables import runs_schema as runs_schema
from engine.batch.sweeptables import write_tables as write_tables
from engine.batch.work import ChunkFn
from engine.errors import ArgumentError, ScenarioError, Wording, literal, stop_signal
from engine.safeio import write_text
from engine.sources import read_json_file

if TYPE_CHECKING:
    from engine.scenario import MapRead

#: The most points one sweep may have (each is a batch folder).
MAX_POINTS = 10_000
#: Files of a sweep folder (its tables: engine.batch.sweeptables).
SWEEP_META = "sweep.json"
SWEEP_SUMMARY = "summary.json"

#: How a sweep's points are seeded: common random numbers, or a seed per point.
SEEDINGS = ("common", "per-point")
#: A sweep.json without ``seeds`` was made before common seeds: its points were per-point.
OLD_SEEDING = "per-point"

#: ``point_done(index, points, point, summary)`` after each point's batch.
PointFn = Callable[[int, int, dict[str, Any], dict[str, Any]], None]


# --------------------------------------------------------------------------- the grid


def canonical_name(name: str) -> str:
    """A parameter's one spelling: ``turns`` is ``scenario.turns``."""
    name = name.strip()
    return "scenario.turns" if name == "turns" else name


def _scalar(value: Any, where: str, role: str | None = None) -> Any:
    """``value`` if plain; else an error about ``where`` (or the argument ``role`` with
    ``where`` as its value)."""
    if isinstance(value, bool | int | str) or (isinstance(value, float) and value == value):
        return value
    raise _param_error(
        where,
        role,
        f"{json.dumps(value, default=str)[:80]} is not a number or a word; "
        "give plain values, e.g. {vary} pursuer1.stats.move=8,10,12",
        others=("vary",),
    )


def _param_error(
    where: str, role: str | None, problem: str, others: tuple[str, ...] = ()
) -> ArgumentError:
    """An error about ``where``: the argument ``role`` given as ``where`` where there is
    one, else a place in a file. ``problem`` is a template where ``others`` names roles."""
    if role is not None:
        return ArgumentError(role=role, given=where, problem=problem, others=others)
    if not others:
        return ArgumentError(f"{where}: {problem}")
    return ArgumentError(problem=f"{literal(where)}: {problem}", others=others)


def parse_vary(text: str) -> tuple[str, list[Any]]:
    """``NAME=V1,V2,...`` -> (name, values); each value is read as YAML (``8`` is a number,
    ``3D+1`` and ``none`` are text)."""
    import yaml

    name, eq, rest = text.partition("=")
    name = canonical_name(name)
    if not eq or not name or not rest.strip():
        raise ArgumentError(
            role="vary",
            given=text[:80],
            problem="expected NAME=V1,V2,..., e.g. {vary} pursuer1.stats.move=8,10,12",
            others=("vary",),
        )
    values = []
    for part in rest.split(","):
        part = part.strip()
        if not part:
            raise ArgumentError(
                role="vary", given=text[:80], problem="an empty value; separate values with commas"
            )
        try:
            value = yaml.safe_load(part)
        except yaml.YAMLError:
            value = part
        if value is None:
            value = part  # "none", "null", "~" stay words: a setting's value, not nothing
        values.append(_scalar(value, name, "vary"))
    return name, values


def check_params(
    params: list[tuple[str, list[Any]]], where: str = "", role: str | None = None
) -> list[tuple[str, list[Any]]]:
    """Names once each, values once each, a grid of at most MAX_POINTS points. An error
    names ``where`` (a place in a file) or the argument ``role`` (``"vary"``)."""
    seen: set[str] = set()
    size = 1
    for name, values in params:
        at = f"{where} {name}" if where else name
        if name in seen:
            raise _param_error(at, role, "varied twice; give its values once, V1,V2,...")
        seen.add(name)
        keys = [point_text({"v": v}) for v in values]
        if len(set(keys)) != len(keys):
            raise _param_error(at, role, "a value is listed twice; list each once")
        if not values:
            raise _param_error(at, role, "no values; give V1,V2,...")
        size *= len(values)
    if not params:
        raise _param_error(
            where,
            role,
            "nothing to vary; give {vary} NAME=V1,V2,... or a sweep: block in the scenario",
            others=("vary",),
        )
    if size > MAX_POINTS:
        raise _param_error(
            where, role, f"{size} points; a sweep has at most {MAX_POINTS} (split it in several)"
        )
    return params


def grid(params: list[tuple[str, list[Any]]]) -> list[dict[str, Any]]:
    """Every point of the Cartesian grid, the first parameter varying slowest."""
    names = [n for n, _ in params]
    return [
        dict(zip(names, combo, strict=True)) for combo in itertools.product(*(v for _, v in params))
    ]


def point_text(point: dict[str, Any]) -> str:
    """A point's canonical text: ``name=JSON value`` lines, sorted by name."""
    return "\n".join(f"{k}={json.dumps(point[k], sort_keys=True)}" for k in sorted(point))


def point_seed(sweep_seed: int, point: dict[str, Any]) -> int:
    """The batch seed of a point: a hash of the sweep's seed and the point's canonical text
    (63 bits), so no other point, and no order, changes it."""
    digest = hashlib.sha256(f"tacgrid-sweep\n{sweep_seed}\n{point_text(point)}".encode()).digest()
    return int.from_bytes(digest[:8], "big") >> 1


def batch_seed(seeds: str, sweep_seed: int, point: dict[str, Any]) -> int:
    """A point's batch seed: the sweep's own (``common``) or :func:`point_seed`."""
    return sweep_seed if seeds == "common" else point_seed(sweep_seed, point)


def point_dir(point: dict[str, Any]) -> str:
    """A point's folder name under ``DIR/points``: a hash of its canonical text."""
    return "p-" + hashlib.sha256(point_text(point).encode()).hexdigest()[:12]


def overrides_of(point: dict[str, Any]) -> dict[str, Any]:
    """A point as ``run_batch`` overrides (engine.scenario.apply_edits reads them)."""
    return dict(point)


# --------------------------------------------------------------------------- the spec


def sweep_spec(
    scenario_path: str,
    vary: list[str] | dict[str, list[Any]] | None,
    runs: int | None,
    seed: int | None,
    seeds: str = "common",
    same_map: MapRead | None = None,
) -> dict[str, Any]:
    """The sweep to run: the grid (``--vary`` texts or a ``{name: [values]}`` mapping, else
    the scenario's ``sweep:`` block), runs per point, the sweep seed and how the points are
    seeded (:data:`SEEDINGS`), checked; every point's scenario is validated. ``same_map``:
    the scenario's map as read already (engine.scenario.read_scenario_map), else read here."""
    from engine.scenario import load_scenario, read_scenario_map

    # The map is read once: each value below is validated on it (a value that edits the
    # map, terrain.* or region.*, reads its own).
    if same_map is None:
        same_map = read_scenario_map(scenario_path)
    scenario = load_scenario(scenario_path, same_map=same_map)
    block = scenario.raw.get("sweep")
    where = f"{scenario_path}: sweep"
    if block is not None and not isinstance(block, dict):
        raise ScenarioError(f"{where}: expected a mapping with vary:, runs:, seed:")
    block = block or {}
    for key in block:
        if key not in ("vary", "runs", "seed"):
            raise ScenarioError(f"{where}.{str(key)[:80]}: unknown key; keys: vary, runs, seed")
    if isinstance(vary, dict):
        params = check_params(
            [
                (canonical_name(str(k)), [_scalar(v, f"vary {k}") for v in values])
                for k, values in vary.items()
            ],
            "vary",
        )
    elif vary:
        params = check_params([parse_vary(v) for v in vary], role="vary")
    else:
        raw = block.get("vary")
        if not isinstance(raw, dict):
            raise ArgumentError(
                problem=f"{literal(scenario_path)}: nothing to vary; give {{vary}} NAME=V1,V2,... "
                "or a sweep: block with vary: {{NAME: [V1, V2]}} in the scenario",
                others=("vary",),
            )
        params = []
        for name, values in raw.items():
            if not isinstance(values, list):
                raise ScenarioError(f"{where}.vary.{str(name)[:80]}: expected a list of values")
            params.append(
                (canonical_name(str(name)), [_scalar(v, f"{where}.vary.{name}") for v in values])
            )
        params = check_params(params, f"{where}.vary")
    for key, value in (("runs", runs), ("seed", seed)):
        if value is None and key in block:
            got = block[key]
            if (
                isinstance(got, bool)
                or not isinstance(got, int)
                or got < (1 if key == "runs" else 0)
            ):
                raise ScenarioError(f"{where}.{key}: {got!r} is not a whole number")
    runs = runs if runs is not None else block.get("runs", scenario.runs)
    seed = seed if seed is not None else block.get("seed", scenario.seed)
    points = grid(params)
    checked: dict[tuple[str, Any], bool] = {}
    for point in points:
        for name, value in point.items():  # each value on its own: one load per value
            if (name, point_text({"v": value})) not in checked:
                load_scenario(scenario_path, overrides={name: value}, same_map=same_map)
                checked[(name, point_text({"v": value}))] = True
    return {
        "scenario": os.path.abspath(scenario_path),
        "digest": scenario.digest,
        "version": version(),
        "name": scenario.name,
        "seed": int(seed),
        "seeds": seeds,
        "measures": list(ordered(scenario.measures)),
        "runs": int(runs),
        "params": [{"name": n, "values": v} for n, v in params],
        "points": [
            {"point": point_dir(p), "params": p, "seed": batch_seed(seeds, int(seed), p)}
            for p in points
        ],
    }


def _check_seeds(seeds: str | None) -> None:
    if seeds is not None and seeds not in SEEDINGS:
        raise ArgumentError(
            role="seeds", given=str(seeds)[:80], problem=f"expected {' or '.join(SEEDINGS)}"
        )


def _reseed(spec: dict[str, Any], seeds: str) -> None:
    """``spec``'s points seeded as ``seeds`` says (a resumed sweep keeps its own way)."""
    spec["seeds"] = seeds
    for p in spec["points"]:
        p["seed"] = batch_seed(seeds, spec["seed"], p["params"])


def _check_until(until_ci: float | None, max_runs: int | None) -> dict[str, Any] | None:
    """``--until-ci W`` (0 < W < 1) and its ``--max-runs`` cap, or None."""
    if until_ci is None:
        if max_runs is not None:
            raise ArgumentError(
                role="max_runs",
                given=str(max_runs),
                problem="caps {until_ci}; give {until_ci} W too, or {runs} N alone",
                others=("until_ci", "runs"),
            )
        return None
    if not (isinstance(until_ci, int | float) and 0 < until_ci < 1):
        raise ArgumentError(
            role="until_ci",
            given=str(until_ci)[:80],
            problem="expected a width between 0 and 1 (0.05: five percentage points)",
        )
    cap = UNTIL_MAX_RUNS if max_runs is None else max_runs
    if not 1 <= cap <= MAX_RUNS:
        raise ArgumentError(
            role="max_runs", given=str(cap), problem=f"expected a whole number from 1 to {MAX_RUNS}"
        )
    return {"width": float(until_ci), "max_runs": int(cap)}


# --------------------------------------------------------------------------- the sweep


def run_sweep(
    scenario_path: str,
    *,
    vary: list[str] | dict[str, list[Any]] | None = None,
    runs: int | None = None,
    seed: int | None = None,
    workers: int = 1,
    scheduler: str | None = None,
    out_dir: str = "sweep",
    resume: bool = False,
    force: bool = False,
    progress: ProgressFn | None = None,
    point_done: PointFn | None = None,
    note: Callable[[Wording], None] | None = None,
    chunk_fn: ChunkFn | None = None,
    seeds: str | None = None,
    until_ci: float | None = None,
    max_runs: int | None = None,
) -> dict[str, Any]:
    """Run every point's batch into ``out_dir/points/``, then write the tables and the
    sweep's ``summary.json``; returns that summary (see :func:`sweep_summary`). The tables
    need pyarrow (the analysis extra): without it, one line before anything runs.

    ``seeds``: ``common`` (default; a resumed sweep keeps its own) or ``per-point``
    (:data:`SEEDINGS`). ``until_ci``: each point runs until its capture rate's 95% interval
    is at most this wide, ``max_runs`` runs at most (:data:`UNTIL_MAX_RUNS`); ``runs`` is
    then the first step."""
    need_tables("sweep")
    if runs is not None:
        _check_runs(runs)
    _check_seeds(seeds)
    until = _check_until(until_ci, max_runs)
    if workers < 1:
        raise ArgumentError(
            role="workers", given=str(workers), problem="expected a whole number >= 1"
        )
    if scheduler:
        _check_address(scheduler)
    from engine.scenario import read_scenario_map

    # Read once: every value is validated on it, and every point's batch loads from it.
    same_map = read_scenario_map(scenario_path)
    spec = sweep_spec(scenario_path, vary, runs, seed, seeds or "common", same_map)
    _check_runs(spec["runs"])
    if resume and force:
        raise ArgumentError(
            problem="{resume} and {force}: give one (complete the sweep, or replace it)",
            others=("resume", "force"),
        )
    out_folder(out_dir, "points")
    lock = _FolderLock(out_dir)
    try:
        meta_path = os.path.join(out_dir, SWEEP_META)
        old = _read_sweep_meta(meta_path)
        if old is not None and not (resume or force):
            raise ArgumentError(
                role="out",
                given=out_dir,
                problem="holds a sweep already; add {resume} to complete or extend it, {force} "
                "to replace it, or give another {out}",
                others=("resume", "force", "out"),
            )
        if old is not None and resume:
            _check_version(old.get("version"), out_dir, "sweep")
        if (
            old is not None
            and resume
            and (old.get("scenario") != spec["scenario"] or old.get("seed") != spec["seed"])
        ):
            raise ArgumentError(
                role="resume",
                problem=literal(
                    f"{out_dir} holds a sweep of another scenario or seed "
                    f"({old.get('scenario')}, seed {old.get('seed')})"
                )
                + "; use another {out} or drop {resume}",
                others=("out", "resume"),
            )
        if old is not None and resume:
            _resume_settings(old, spec, seeds, until, out_dir)
            until = spec.get("until_ci")
        elif until is not None:
            spec["until_ci"] = until
        if old is not None and resume and isinstance(old.get("runs"), int):
            if runs is None:
                spec["runs"] = old["runs"]  # as `run --resume`: the sweep's own size
            elif spec["runs"] < old["runs"]:
                raise ArgumentError(
                    role="runs",
                    given=str(spec["runs"]),
                    problem=f"{literal(out_dir)} holds a sweep of {old['runs']} runs a point; "
                    f"give {{runs}} {old['runs']} or more to extend it, or another {{out}}",
                    others=("runs", "out"),
                )
        if until is not None and until["max_runs"] < spec["runs"]:
            raise ArgumentError(
                role="max_runs",
                given=str(until["max_runs"]),
                problem=f"is under the first step of {spec['runs']} runs a point; give "
                "{max_runs} at least {runs}, or a smaller {runs}",
                others=("max_runs", "runs"),
            )
        write_text(meta_path, json.dumps(spec, indent=2) + "\n", "out")
        _remove(os.path.join(out_dir, SWEEP_SUMMARY))
        work = PointWork(
            scenario_path=scenario_path,
            out_dir=out_dir,
            runs=spec["runs"],
            until=until,
            workers=workers,
            scheduler=scheduler,
            resume=resume,
            force=force,
            progress=progress,
            note=note,
            chunk_fn=chunk_fn,
            same_map=same_map,
        )
        tables = SweepTables(spec, out_dir, paired=spec["seeds"] == "common")
        summaries = _run_points(work, spec, point_done, tables.point_written)
        doc = sweep_summary(spec, summaries)
        try:
            if spec["seeds"] == "common":
                doc["paired"] = tables.paired(doc)
            tables.write(summaries)
            write_text(
                os.path.join(out_dir, SWEEP_SUMMARY),
                json.dumps(doc, indent=2, sort_keys=True) + "\n",
                "out",
            )
        except KeyboardInterrupt as exc:
            # Every point is whole; a table written half-way is removed (engine.safeio),
            # and no summary.json says the sweep is finished: --resume writes them.
            signum, name = stop_signal(exc)
            raise BatchStopped(
                signum,
                f"stopped by {name} while the sweep's tables were "
                f"written: all {len(summaries)} points are finished",
            ) from None
        return doc
    finally:
        lock.release()


def _resume_settings(
    old: dict[str, Any],
    spec: dict[str, Any],
    seeds: str | None,
    until: dict[str, Any] | None,
    out_dir: str,
) -> None:
    """A resumed sweep keeps its own seeding (refusing another one given) and, unless given
    again, its own ``--until-ci``."""
    had = old.get("seeds", OLD_SEEDING)
    if seeds is not None and seeds != had:
        raise ArgumentError(
            role="seeds",
            given=seeds,
            problem=f"{literal(out_dir)} holds a sweep seeded {had}: its runs would not be "
            f"the same; give {{seeds}} {had} (or leave it out), or another {{out}}",
            others=("seeds", "out"),
        )
    if had != spec["seeds"]:
        _reseed(spec, had)
    if until is None and isinstance(old.get("until_ci"), dict):
        until = old["until_ci"]
    if until is not None:
        spec["until_ci"] = until


def _run_points(
    work: PointWork,
    spec: dict[str, Any],
    point_done: PointFn | None,
    written: Callable[[int], None] | None = None,
) -> list[dict[str, Any]]:
    """Every point (:func:`engine.batch.point.run_point`); each point's summary, in grid
    order. Each point is written in its folder, then ``written(index)``; ``point_done`` is
    told of the points in grid order. On a cluster, one connection serves the sweep and
    each point is one task (:class:`DaskPoints`): this process writes each point as its task
    finishes, whatever its place in the grid, while the cluster plays the next ones; a
    point's later ``--until-ci`` steps run on the same connection."""
    client = None
    points: DaskPoints | None = None
    address = _check_address(work.scheduler) if work.scheduler else None
    n = len(spec["points"])
    try:
        with _cluster_logs_quiet(address is not None):
            if address is not None and work.chunk_fn is None:
                client = _connect(address)
                points = DaskPoints(
                    client,
                    address,
                    work.scenario_path,
                    [_point_task(spec, p, work.out_dir, work.resume) for p in spec["points"]],
                )
            summaries: dict[int, dict[str, Any]] = {}
            first = told = 0  # the first point not written; the first not told of
            while first < n:
                i = points.next_point(first) if points is not None else first
                executor = points.executor(i) if points is not None else None
                summaries[i] = run_point(work, spec["points"][i], executor)
                if written:
                    written(i)
                while first < n and first in summaries:
                    first += 1
                while point_done and told < first:
                    point_done(told, n, spec["points"][told], summaries[told])
                    told += 1
            return [summaries[i] for i in range(n)]
    finally:
        if points is not None:
            points.close()
        if client is not None:
            _close_client(client)


def _point_task(
    spec: dict[str, Any], p: dict[str, Any], out_dir: str, resume: bool
) -> PointSpec | None:
    """A point's first batch as one cluster task; None where ``resume`` finds runs of it in
    its folder already (its batch completes them as any resumed batch does)."""
    folder = os.path.join(out_dir, "points", p["point"])
    if resume and os.path.exists(os.path.join(folder, "runs.jsonl")):
        return None
    overrides = overrides_of(p["params"])
    return PointSpec(tuple(sorted(overrides.items())), p["seed"], spec["runs"])


def _remove(path: str) -> None:
    try:
        os.remove(path)
    except FileNotFoundError:
        pass


def _read_sweep_meta(path: str) -> dict[str, Any] | None:
    if not os.path.exists(path):
        return None
    try:  # a regular file within the cap, finite JSON (engine.sources)
        old = read_json_file(path, "sweep", ArgumentError)
    except ArgumentError:
        old = None
    if not isinstance(old, dict) or not isinstance(old.get("points"), list):
        raise ArgumentError(
            problem=f"{literal(path)}: damaged; use another {{out}}", others=("out",)
        )
    return old


def sweep_summary(spec: dict[str, Any], summaries: list[dict[str, Any]]) -> dict[str, Any]:
    """The sweep's ``summary.json``: the spec and each point's batch summary."""
    points = []
    for p, s in zip(spec["points"], summaries, strict=True):
        points.append(
            {
                "point": p["point"],
                "params": p["params"],
                "seed": p["seed"],
                "runs": s["runs"],
                "outcomes": s["outcomes"],
                "rates": s["rates"],
                "ci95": s["ci95"],
                "turns": s["turns"],
                "results": s["results"],
            }
        )
    return {
        "kind": "sweep",
        "scenario": spec["scenario"],
        "digest": spec["digest"],
        "version": spec["version"],
        "name": spec.get("name", ""),
        "seed": spec["seed"],
        "seeds": spec.get("seeds", OLD_SEEDING),
        "runs": spec["runs"],
        **({"until_ci": spec["until_ci"]} if spec.get("until_ci") else {}),
        "params": spec["params"],
        "points": points,
    }


def read_sweep(out_dir: str) -> dict[str, Any] | None:
    """The sweep summary in ``out_dir``, or None when it holds no finished sweep."""
    path = os.path.join(out_dir, SWEEP_SUMMARY)
    if not os.path.isfile(os.path.join(out_dir, SWEEP_META)) or not os.path.isfile(path):
        return None
    try:  # a regular file within the cap, finite JSON (engine.sources)
        doc = read_json_file(path, "sweep summary", ArgumentError)
    except ArgumentError:
        return None
    return doc if isinstance(doc, dict) and doc.get("kind") == "sweep" else None
