"""Sweeps a playtester can read: common random numbers, paired differences, tied parameters,
``--until-ci`` and per-run measures (engine.batch.sweep, .point, .paired, .measures)."""

from __future__ import annotations

import json
import math
import signal
from pathlib import Path
from typing import Any

import pytest
import tmxtext
from conftest import ROOT

from engine.batch import BatchStopped, run_batch, run_chunk, wilson
from engine.batch.paired import newcombe_paired, paired_t, reference_of
from engine.batch.point import next_step
from engine.cli import FLAGS, main
from engine.errors import ArgumentError, ScenarioError
from engine.scenario import load_scenario
from engine.sweep import point_dir, run_sweep

CHASE = str(ROOT / "scenarios" / "chase.yaml")
HUNT = str(ROOT / "scenarios" / "hex_hunt.yaml")
MOVE = "pursuer1.stats.move"


def _runs(out: Path, point: dict[str, Any]) -> list[dict[str, Any]]:
    path = out / "points" / point_dir(point) / "runs.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()]


# --------------------------------------------------------------------------- common seeds


@pytest.mark.parametrize("seeds", ["common", "per-point"])
def test_two_points_with_the_same_scenario_play_the_same_runs(tmp_path: Path, seeds: str) -> None:
    # 12 and "12" are two points of the grid (two spellings) but one scenario: the stat is
    # read as the same number.
    out = tmp_path / "s"
    run_sweep(CHASE, vary={MOVE: [12, "12"]}, runs=30, seed=9, out_dir=str(out), seeds=seeds)
    a, b = _runs(out, {MOVE: 12}), _runs(out, {MOVE: "12"})
    if seeds == "common":
        assert a == b  # run for run: seed, outcome, turns, cell, events
    else:
        assert [r["seed"] for r in a] != [r["seed"] for r in b]


def test_tied_and_separate_parameters_give_the_same_runs(tmp_path: Path) -> None:
    tied, apart = tmp_path / "tied", tmp_path / "apart"
    run_sweep(CHASE, vary=["side.pursuer.stats.move=9,13"], runs=25, seed=4, out_dir=str(tied))
    run_sweep(
        CHASE,
        vary=["pursuer1.stats.move=9,13", "pursuer2.stats.move=9,13"],
        runs=25,
        seed=4,
        out_dir=str(apart),
    )
    for v in (9, 13):
        same = {"pursuer1.stats.move": v, "pursuer2.stats.move": v}
        assert _runs(tied, {"side.pursuer.stats.move": v}) == _runs(apart, same)
    # ... and the move really is every pursuer's: one pursuer faster is another scenario.
    doc = json.loads((apart / "summary.json").read_text())
    rates = {tuple(p["params"].values()): p["rates"]["capture"] for p in doc["points"]}
    assert rates[(13, 13)] >= rates[(9, 9)]


def test_resume_keeps_the_sweeps_own_seeding(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "s"
    run_sweep(CHASE, vary=[f"{MOVE}=8,12"], runs=10, seed=2, out_dir=str(out), seeds="per-point")
    before = _runs(out, {MOVE: 8})
    with pytest.raises(ArgumentError) as refused:
        run_sweep(CHASE, vary=[f"{MOVE}=8,12"], runs=20, seed=2, out_dir=str(out), resume=True,
                  seeds="common")  # fmt: skip
    text = refused.value.naming(FLAGS)
    assert "--seeds common" in text and "seeded per-point" in text and "--seeds per-point" in text
    # Left out, --seeds is the sweep's own: the points extend their own runs.
    doc = run_sweep(CHASE, vary=[f"{MOVE}=8,12"], runs=20, seed=2, out_dir=str(out), resume=True)
    assert doc["seeds"] == "per-point" and _runs(out, {MOVE: 8})[:10] == before
    assert "paired" not in doc  # per-point runs do not pair
    assert main(["report", str(out), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["paired"] is None
    assert main(["report", str(out)]) == 0
    assert "no paired differences: the points drew their own dice" in capsys.readouterr().out


def test_a_sweep_json_without_seeds_was_seeded_per_point(tmp_path: Path) -> None:
    out = tmp_path / "s"
    run_sweep(CHASE, vary=[f"{MOVE}=8,12"], runs=10, seed=2, out_dir=str(out), seeds="per-point")
    meta = json.loads((out / "sweep.json").read_text())
    del meta["seeds"]  # as a sweep made before common seeds wrote it
    (out / "sweep.json").write_text(json.dumps(meta))
    doc = run_sweep(CHASE, vary=[f"{MOVE}=8,12"], runs=15, seed=2, out_dir=str(out), resume=True)
    assert doc["seeds"] == "per-point" and all(p["runs"] == 15 for p in doc["points"])


# --------------------------------------------------------------------------- paired intervals


def test_newcombe_paired_interval_by_hand() -> None:
    # 20 pairs: 8 captured at both, 2 at the reference only, 6 at the point only, 4 at neither.
    # The point's rate 14/20 = 0.7, the reference's 10/20 = 0.5, the difference 0.2.
    # Wilson, z = 1.96: 14/20 -> (0.481027, 0.854523); 10/20 -> (0.299298, 0.700702).
    # phi = (8*4 - 2*6) / sqrt(10*10*14*6) = 20 / 91.6515 = 0.218218.
    # lower: 0.2 - sqrt(0.218973^2 - 2*0.218218*0.218973*0.200702 + 0.200702^2) = 0.2 - 0.262773
    # upper: 0.2 + sqrt(0.154523^2 - 2*0.218218*0.154523*0.200702 + 0.200702^2) = 0.2 + 0.224996
    assert wilson(14, 20) == pytest.approx((0.481027, 0.854523), abs=1e-6)
    diff, lo, hi = newcombe_paired(8, 2, 6, 4)
    assert diff == pytest.approx(0.2)
    assert lo == pytest.approx(-0.062773, abs=1e-6)
    assert hi == pytest.approx(0.424996, abs=1e-6)
    # Swapping the roles of the two points mirrors the interval.
    assert newcombe_paired(8, 6, 2, 4) == pytest.approx((-0.2, -0.424996, 0.062773), abs=1e-6)
    # Every pair alike: the difference is 0, and the interval still has its width.
    d0, lo0, hi0 = newcombe_paired(30, 0, 0, 0)
    assert d0 == 0 and lo0 < 0 < hi0 and hi0 == pytest.approx(-lo0)


def test_paired_t_interval_by_hand() -> None:
    # Differences 1, -1, 2, 0, 3: mean 1, sample sd sqrt(10/4) = 1.581139, se 0.707107,
    # t(0.975, 4) = 2.776445: half width 1.963243.
    d = [1, -1, 2, 0, 3]
    mean, lo, hi = paired_t(len(d), sum(d), sum(x * x for x in d))
    assert mean == 1 and lo == pytest.approx(1 - 1.963243, abs=1e-6)
    assert hi == pytest.approx(1 + 1.963243, abs=1e-6)
    assert paired_t(1, 3, 9) == (3, None, None)


def test_references_first_and_previous() -> None:
    params = [{"name": "a", "values": [1, 2]}, {"name": "b", "values": ["x", "y", "z"]}]
    points = [{"params": {"a": a, "b": b}} for a in (1, 2) for b in ("x", "y", "z")]
    assert reference_of(params, points, "first") == [None, 0, 0, 0, 0, 0]
    # One value back along the last parameter not at its first value.
    assert reference_of(params, points, "previous") == [None, 0, 1, 0, 3, 4]


def test_report_pairs_runs_and_counts_the_discordant_ones(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "s"
    doc = run_sweep(HUNT, vary=["hero1.stats.adaptability=10,14,18"], runs=40, seed=3,
                    out_dir=str(out))  # fmt: skip
    assert doc["seeds"] == "common"
    rows = doc["paired"]["rows"]
    assert doc["paired"]["against"] == "first" and len(rows) == 2
    first = _runs(out, doc["points"][0]["params"])
    for row, p in zip(rows, doc["points"][1:], strict=True):
        runs = _runs(out, p["params"])
        caught = [
            (a["outcome"] == "capture", b["outcome"] == "capture")
            for a, b in zip(first, runs, strict=True)
        ]
        c = row["capture"]
        assert c["only_point"] == sum(1 for a, b in caught if b and not a)
        assert c["only_ref"] == sum(1 for a, b in caught if a and not b)
        assert (
            row["pairs"] == 40 and c["both"] + c["neither"] + c["only_ref"] + c["only_point"] == 40
        )
        assert c["diff"] == pytest.approx(
            p["rates"]["capture"] - doc["points"][0]["rates"]["capture"]
        )
        assert c["lo"] <= c["diff"] <= c["hi"]
        turns = [b["turns"] - a["turns"] for a, b in zip(first, runs, strict=True)]
        assert row["turns"]["diff"] == pytest.approx(sum(turns) / 40)
    assert main(["report", str(out), "--json", "--against", "previous"]) == 0
    got = json.loads(capsys.readouterr().out)
    prev = got["paired"]["rows"]
    assert got["paired"]["against"] == "previous"
    assert [r["reference"] for r in prev] == [p["point"] for p in doc["points"][:2]]
    assert main(["report", str(out), "--charts"]) == 0
    text = capsys.readouterr().out
    assert "paired differences" in text and "Newcombe" in text
    assert (out / "paired.png").stat().st_size > 0 and (out / "paired.svg").exists()


# --------------------------------------------------------------------------- tied parameters


def test_tied_parameters_change_every_token_of_the_side() -> None:
    s = load_scenario(HUNT, overrides={"side.pursuer.stats.adaptability": 17})
    heroes = [t for t in s.tokens if t.side == "pursuer"]
    assert len(heroes) == 3 and all(t.stats["adaptability"] == 17 for t in heroes)
    plain = load_scenario(HUNT)
    assert s.token_spec("beast").stats == plain.token_spec("beast").stats
    paced = load_scenario(CHASE, overrides={"side.pursuer.pace": "cruising"})
    assert {t.id: t.pace for t in paced.tokens} == {
        "quarry": "all_out", "pursuer1": "cruising", "pursuer2": "cruising"
    }  # fmt: skip


@pytest.mark.parametrize(
    ("vary", "says"),
    [
        ("side.hunter.stats.move=8,10", "side.hunter.stats.move: no token's side is 'hunter'; "
         "sides: pursuer, quarry"),
        ("side.pursuer.stats.mvoe=8,10", "side.pursuer.stats.mvoe: no token has the stat 'mvoe'"),
    ],
)  # fmt: skip
def test_tied_parameter_errors_are_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], vary: str, says: str
) -> None:
    out = tmp_path / "s"
    assert main(["sweep", CHASE, "--vary", vary, "--out", str(out), "--no-charts"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and says in err
    assert not (out / "sweep.json").exists()
    with pytest.raises(ScenarioError, match="no token's side"):
        load_scenario(CHASE, overrides={"side.gm.pace": "walk"})


# --------------------------------------------------------------------------- --until-ci


def _width(runs: list[dict[str, Any]]) -> float:
    lo, hi = wilson(sum(r["outcome"] == "capture" for r in runs), len(runs))
    return hi - lo


def _short_hunt(tmp_path: Path) -> str:
    """hex_hunt ended at turn 6: its team of heroes catch the beast in every run of 20
    turns (a rate no interval narrows on), in about 63% of runs by turn 6."""
    text = Path(HUNT).read_text(encoding="utf-8")
    text = text.replace("map: ../maps/", f"map: {Path(HUNT).parent.parent / 'maps'}/")
    short = text.replace("\nturns: 20\n", "\nturns: 6\n")
    assert short != text
    path = tmp_path / "short_hunt.yaml"
    path.write_text(short, encoding="utf-8")
    return str(path)


def test_until_ci_stops_when_the_interval_is_narrow_enough(tmp_path: Path) -> None:
    out = tmp_path / "s"
    width = 0.2
    doc = run_sweep(_short_hunt(tmp_path), vary=["hero1.stats.adaptability=10,14"], runs=25,
                    seed=5, out_dir=str(out), until_ci=width)  # fmt: skip
    assert doc["until_ci"] == {"width": width, "max_runs": 10_000}
    for p in doc["points"]:
        runs = _runs(out, p["params"])
        assert len(runs) == p["runs"] and _width(runs) <= width
        # The steps it took: each boundary but the last still too wide.
        n, steps = 25, [25]
        while _width(runs[:n]) > width:
            k = sum(r["outcome"] == "capture" for r in runs[:n])
            n = next_step(n, k, width, 10_000)
            steps.append(n)
        assert n == p["runs"]
        assert all(_width(runs[:m]) > width for m in steps[:-1])
    assert any(p["runs"] > 25 for p in doc["points"])  # not all done in the first step


def test_until_ci_stops_at_the_cap(tmp_path: Path) -> None:
    doc = run_sweep(HUNT, vary=["hero1.stats.adaptability=10,14"], runs=25, seed=5,
                    out_dir=str(tmp_path / "s"), until_ci=0.01, max_runs=60)  # fmt: skip
    assert [p["runs"] for p in doc["points"]] == [60, 60]
    with pytest.raises(ArgumentError, match="max_runs 20: is under the first step of 25"):
        run_sweep(HUNT, vary=["hero1.stats.adaptability=10"], runs=25, until_ci=0.1,
                  max_runs=20, out_dir=str(tmp_path / "t"))  # fmt: skip


def test_next_step_is_at_least_a_chunk_at_most_double_and_capped() -> None:
    assert next_step(25, 12, 0.2, 10_000) == 50  # wants ~92: at most double
    assert next_step(100, 50, 0.19, 10_000) == 125  # wants 104: a whole chunk more
    assert next_step(100, 0, 0.05, 10_000) == 125  # a rate of 0 narrows fast
    assert next_step(400, 200, 0.01, 500) == 500
    m = next_step(200, 100, 0.12, 10_000)  # needs about 4 * 1.96^2 * 0.25 / 0.12^2 = 267
    assert m == 275


def test_until_ci_resumed_equals_uninterrupted(tmp_path: Path) -> None:
    vary = ["hero1.stats.adaptability=14"]
    whole, cut = tmp_path / "whole", tmp_path / "cut"
    hunt = _short_hunt(tmp_path)
    run_sweep(hunt, vary=vary, runs=25, seed=6, out_dir=str(whole), until_ci=0.2)
    calls = {"n": 0}

    def dies(path: str, overrides: Any, items: Any) -> Any:
        calls["n"] += 1
        if calls["n"] == 3:  # in the second step (25 runs, then 50)
            raise BatchStopped(signal.SIGTERM)
        return run_chunk(path, overrides, items)

    with pytest.raises(BatchStopped):
        run_sweep(hunt, vary=vary, runs=25, seed=6, out_dir=str(cut), until_ci=0.2, chunk_fn=dies)
    doc = run_sweep(hunt, vary=vary, runs=25, seed=6, out_dir=str(cut), resume=True)
    assert doc["until_ci"]["width"] == 0.2  # the sweep's own, kept
    point = {"hero1.stats.adaptability": 14}
    assert _runs(cut, point) == _runs(whole, point)

    def summary(out: Path) -> dict[str, Any]:
        doc = json.loads((out / "summary.json").read_text())
        for p in doc["points"]:
            del p["results"]  # the path of its runs.jsonl, in its own folder
        return doc

    assert summary(cut) == summary(whole)


def test_until_ci_argument_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    base = ["sweep", CHASE, "--vary", f"{MOVE}=8", "--out", str(tmp_path / "s"), "--no-charts"]
    assert main([*base, "--until-ci", "5"]) == 2
    assert "expected a width between 0 and 1" in capsys.readouterr().err
    assert main([*base, "--max-runs", "100"]) == 2
    err = capsys.readouterr().err
    assert "--max-runs 100: caps --until-ci; give --until-ci W too" in err
    assert not (tmp_path / "s" / "sweep.json").exists()


# --------------------------------------------------------------------------- measures


def _measured(tmp_path: Path, source: str, names: str) -> Path:
    text = Path(source).read_text(encoding="utf-8")
    text = text.replace("map: ../maps/", f"map: {ROOT / 'maps'}/")
    path = tmp_path / "measured.yaml"
    path.write_text(text + f"measures: [{names}]\n", encoding="utf-8")
    return path


def test_measures_by_hand_on_a_small_map(tmp_path: Path) -> None:
    # A quarry standing in water, a pursuer 8 cells east, both idle: 3 turns, then a timeout.
    tmxtext.write(tmp_path / "pond.tmx", ["~~~~.........."])
    scenario = tmp_path / "pond.yaml"
    scenario.write_text(
        "map: pond.tmx\nsystem: generic\nturns: 3\nruns: 4\n"
        "measures: [turns_in_water, distance_at_end, checks_failed]\n"
        "tokens:\n"
        "  - {id: q, side: quarry, policy: idle, cell: [1, 0], stats: {speed: 30}}\n"
        "  - {id: p, side: pursuer, policy: idle, cell: [9, 0], stats: {speed: 30}}\n",
        encoding="utf-8",
    )
    run_batch(str(scenario), out_dir=str(tmp_path / "b"))
    runs = [json.loads(x) for x in (tmp_path / "b" / "runs.jsonl").read_text().splitlines()]
    assert len(runs) == 4
    for r in runs:
        assert r["outcome"] == "timeout" and r["turns"] == 3
        assert r["measures"] == {"turns_in_water": 3, "distance_at_end": 8.0, "checks_failed": 0}
    import pyarrow as pa
    import pyarrow.parquet as pq

    table = pq.read_table(tmp_path / "b" / "runs.parquet")
    assert table.schema.names[-3:] == ["distance_at_end", "checks_failed", "turns_in_water"]
    assert table.schema.field("distance_at_end").type == pa.float64()
    assert table.column("turns_in_water").to_pylist() == [3, 3, 3, 3]


def test_measures_equal_the_replayed_logs(tmp_path: Path) -> None:
    path = _measured(tmp_path, CHASE, "distance_at_end, checks_failed, turns_in_water")
    plain, measured = tmp_path / "plain", tmp_path / "measured"
    run_batch(CHASE, runs=30, seed=8, out_dir=str(plain))
    run_batch(str(path), runs=30, seed=8, out_dir=str(measured))
    a = [json.loads(x) for x in (plain / "runs.jsonl").read_text().splitlines()]
    b = [json.loads(x) for x in (measured / "runs.jsonl").read_text().splitlines()]
    # The same runs, measured or not.
    assert [{k: v for k, v in r.items() if k != "measures"} for r in b] == a
    scenario = load_scenario(str(path))
    grid = scenario.model.grid
    wet_seen = failed_seen = 0
    for r in b[:12]:
        log = tmp_path / f"run{r['run']}.jsonl"
        assert main(["run", str(path), "--run-seed", str(r["seed"]), "--log", str(log),
                     "--json"]) == 0  # fmt: skip
        events = [json.loads(x) for x in log.read_text().splitlines()]
        failed = sum(1 for e in events if e["type"] == "check" and not e["success"])
        # The states the log ends with: its last state of each token, else its start.
        last = dict(events[0]["tokens"])
        wet = 0
        for i, e in enumerate(events):
            if e["type"] == "state":
                last[e["token"]] = e["state"]
            nxt = events[i + 1]["type"] if i + 1 < len(events) else None
            if (
                e["type"] != "start"
                and nxt in ("turn", "end")
                and any(e2["type"] == "turn" for e2 in events[: i + 1])
            ):
                wet += last["quarry"]["mode"] == "swim"
        dist = min(
            grid.distance(tuple(last[p]["cell"]), tuple(last["quarry"]["cell"]))
            for p in ("pursuer1", "pursuer2")
        )
        assert r["measures"] == {
            "checks_failed": failed,
            "distance_at_end": float(dist),
            "turns_in_water": wet,
        }
        wet_seen += wet
        failed_seen += failed
    assert wet_seen and failed_seen  # the runs checked have both to count
    assert not math.isnan(float(b[0]["measures"]["distance_at_end"]))


def test_sweep_runs_table_has_the_measures(tmp_path: Path) -> None:
    import pyarrow.parquet as pq

    path = _measured(tmp_path, CHASE, "checks_failed")
    out = tmp_path / "s"
    run_sweep(str(path), vary=[f"{MOVE}=8,12"], runs=10, seed=1, out_dir=str(out))
    table = pq.read_table(out / "runs.parquet")
    assert table.schema.names[-1] == "checks_failed"
    jsonl = _runs(out, {MOVE: 12})
    rows = [r for r in table.to_pylist() if r[MOVE] == 12]
    assert [r["checks_failed"] for r in rows] == [r["measures"]["checks_failed"] for r in jsonl]


def test_an_unknown_measure_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = _measured(tmp_path, CHASE, "distance")
    assert main(["run", str(path), "--runs", "1", "--out", str(tmp_path / "b")]) == 2
    err = capsys.readouterr().err.strip()
    assert err.endswith(
        "measures[0]: 'distance' is not a measure (did you mean 'distance_at_end'?); "
        "measures: distance_at_end, checks_failed, turns_in_water"
    )
    assert not (tmp_path / "b" / "runs.jsonl").exists()
