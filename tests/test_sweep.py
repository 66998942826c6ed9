"""Sweeps (engine.sweep), their tables, `tacgrid report`, the charts and the notebook view."""

from __future__ import annotations

import json
import os
import signal
from pathlib import Path
from typing import Any

import pytest

from engine import api
from engine.batch import BatchStopped, run_chunk
from engine.cli import FLAGS, main
from engine.errors import ArgumentError, ScenarioError
from engine.sweep import point_dir, point_seed, run_sweep

ROOT = Path(__file__).resolve().parent.parent
CHASE = str(ROOT / "scenarios" / "chase.yaml")
MOVE = "pursuer1.stats.move"
WILD = "settings.wild_one"


def _point_runs(out: Path, point: dict[str, Any]) -> bytes:
    return (out / "points" / point_dir(point) / "runs.jsonl").read_bytes()


@pytest.fixture(scope="module")
def swept(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("sweep") / "s"
    run_sweep(CHASE, vary=[f"{MOVE}=8,12", f"{WILD}=complication,none"], runs=30, out_dir=str(out))
    return out


def test_point_seed_is_the_points_own() -> None:
    a = {MOVE: 8, WILD: "none"}
    assert point_seed(7, a) == point_seed(7, {WILD: "none", MOVE: 8})  # order of names
    assert point_seed(7, a) != point_seed(8, a)
    assert point_seed(7, a) != point_seed(7, {MOVE: 10, WILD: "none"})
    assert point_seed(7, {MOVE: 8}) != point_seed(7, {MOVE: "8"})  # a number is not a word
    assert 0 <= point_seed(7, a) < 2**63


@pytest.mark.parametrize("seeds", ["common", "per-point"])
def test_adding_or_reordering_points_keeps_each_points_runs(tmp_path: Path, seeds: str) -> None:
    one = tmp_path / "one"
    two = tmp_path / "two"
    run_sweep(CHASE, vary=[f"{MOVE}=8,10"], runs=20, seed=5, out_dir=str(one), seeds=seeds)
    run_sweep(CHASE, vary=[f"{MOVE}=12,10,8"], runs=20, seed=5, out_dir=str(two), seeds=seeds)
    for move in (8, 10):
        assert _point_runs(one, {MOVE: move}) == _point_runs(two, {MOVE: move})

    def seeds_of(move: int) -> list[int]:
        lines = _point_runs(one, {MOVE: move}).decode().splitlines()
        return [json.loads(line)["seed"] for line in lines]

    # Common seeds: every point replays the same run seeds; per point: each its own.
    assert (seeds_of(8) == seeds_of(10)) == (seeds == "common")
    # The stats really change the play: a faster pursuer catches more.
    doc = json.loads((two / "summary.json").read_text())
    rate = {p["params"][MOVE]: p["rates"]["capture"] for p in doc["points"]}
    assert rate[12] > rate[8]


def test_resumed_sweep_equals_an_uninterrupted_one(tmp_path: Path) -> None:
    vary = [f"{MOVE}=8,12"]
    whole, cut = tmp_path / "whole", tmp_path / "cut"
    run_sweep(CHASE, vary=vary, runs=60, seed=3, out_dir=str(whole))
    calls = {"n": 0}

    def dies(path: str, overrides: Any, items: Any) -> Any:
        calls["n"] += 1
        if calls["n"] == 5:  # in the second point's batch (3 chunks a point)
            raise BatchStopped(signal.SIGTERM)
        return run_chunk(path, overrides, items)

    with pytest.raises(BatchStopped):
        run_sweep(CHASE, vary=vary, runs=60, seed=3, out_dir=str(cut), chunk_fn=dies)
    assert not (cut / "summary.json").exists()
    with pytest.raises(ArgumentError, match="add resume to complete") as refused:
        run_sweep(CHASE, vary=vary, runs=60, seed=3, out_dir=str(cut))
    assert "add --resume to complete" in refused.value.naming(FLAGS)  # the command line's
    run_sweep(CHASE, vary=vary, runs=60, seed=3, out_dir=str(cut), resume=True)
    for move in (8, 12):
        assert _point_runs(cut, {MOVE: move}) == _point_runs(whole, {MOVE: move})
    import pyarrow.parquet as pq

    for name in ("runs.parquet", "points.parquet"):
        assert pq.read_table(cut / name).equals(pq.read_table(whole / name))
    a = json.loads((whole / "summary.json").read_text())
    b = json.loads((cut / "summary.json").read_text())
    for doc in (a, b):
        for p in doc["points"]:
            p.pop("results")
    assert a == b
    with pytest.raises(ArgumentError, match="give runs 80 or more|give runs 60 or more"):
        run_sweep(CHASE, vary=vary, runs=40, seed=3, out_dir=str(cut), resume=True)
    # Extending: more runs per point keep the first runs.
    run_sweep(CHASE, vary=vary, runs=80, seed=3, out_dir=str(cut), resume=True)
    more = _point_runs(cut, {MOVE: 8})
    assert more.startswith(_point_runs(whole, {MOVE: 8})) and more.count(b"\n") == 80


def test_parquet_schema(swept: Path) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    runs = pq.read_table(swept / "runs.parquet")
    assert runs.num_rows == 4 * 30
    assert runs.schema.names == [
        "point", MOVE, WILD, "point_seed", "run", "seed", "outcome", "turns", "by", "col",
        "row", "events",
    ]  # fmt: skip
    types = {f.name: f.type for f in runs.schema}
    assert types[MOVE] == pa.int64() and types[WILD] == pa.string()
    assert types["outcome"] == pa.string() and types["turns"] == pa.int64()
    assert types["run"] == pa.int64() and types["seed"] == pa.int64()
    rows = runs.to_pylist()
    assert {(r[MOVE], r[WILD]) for r in rows} == {
        (8, "complication"), (8, "none"), (12, "complication"), (12, "none")
    }  # fmt: skip
    first = [r for r in rows if r[MOVE] == 8 and r[WILD] == "none"]
    jsonl = (swept / "points" / first[0]["point"] / "runs.jsonl").read_text().splitlines()
    rec = json.loads(jsonl[0])
    assert (first[0]["run"], first[0]["seed"], first[0]["outcome"], first[0]["turns"]) == (
        rec["run"], rec["seed"], rec["outcome"], rec["turns"]
    )  # fmt: skip
    points = pq.read_table(swept / "points.parquet")
    assert points.num_rows == 4
    ptypes = {f.name: f.type for f in points.schema}
    for o in ("capture", "escape", "timeout"):
        assert ptypes[o] == pa.int64()
        for k in ("rate", "lo", "hi"):
            assert ptypes[f"{o}_{k}"] == pa.float64()
    for p in points.to_pylist():
        assert p["runs"] == 30 and p["capture"] + p["escape"] + p["timeout"] == 30
        assert p["capture_lo"] <= p["capture_rate"] <= p["capture_hi"]


def test_report_text_and_json(swept: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["report", str(swept)]) == 0
    text = capsys.readouterr().out
    assert MOVE in text and WILD in text and "capture 95%" in text
    doc = json.loads((swept / "summary.json").read_text())
    p = doc["points"][0]
    lo, hi = p["ci95"]["capture"]
    assert f"{100 * lo:.1f}-{100 * hi:.1f}%" in text
    points_table, paired_table = text.split("paired differences", 1)
    assert len([ln for ln in points_table.splitlines() if "complication" in ln]) == 2
    # The other three points, each against the first, with the pairs they were made of.
    assert len([ln for ln in paired_table.splitlines() if " pts " in ln]) == 3
    assert main(["report", str(swept), "--json"]) == 0
    got = json.loads(capsys.readouterr().out)
    assert got["kind"] == "sweep" and len(got["points"]) == 4 and got["runs"] == 30
    point = swept / "points" / point_dir({MOVE: 12, WILD: "none"})
    assert main(["report", str(point), "--json"]) == 0
    batch = json.loads(capsys.readouterr().out)
    assert batch["kind"] == "batch" and batch["summary"]["runs"] == 30
    assert main(["report", str(point)]) == 0
    text = capsys.readouterr().out
    assert "capture" in text and "95% interval" in text
    assert main(["report", str(swept / "nothing")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "no such folder" in err


def _check_png(path: str, min_w: int, min_h: int) -> None:
    from PIL import Image

    with Image.open(path) as im:
        assert im.format == "PNG" and im.width >= min_w and im.height >= min_h
        assert len(im.convert("L").getcolors(256) or []) > 8  # drawn, not blank


def test_charts(swept: Path) -> None:
    from engine.report import charts

    doc = json.loads((swept / "summary.json").read_text())
    fig = charts.sweep_figure(doc)
    axes = fig.get_axes()
    assert len(axes) == 2
    for ax, name in zip(axes, (MOVE, WILD), strict=True):
        assert ax.get_xlabel() == name and "capture rate" in ax.get_ylabel()
        assert ax.get_title() and ax.get_legend() is not None
        assert ax.lines or ax.containers
    heat = charts.heatmap_figure(doc)
    hax = heat.get_axes()[0]
    assert hax.get_xlabel() == WILD and hax.get_ylabel() == MOVE and hax.get_title()
    assert len(hax.texts) == 4
    files = charts.write_sweep_charts(str(swept), doc)
    assert sorted(os.path.basename(f) for f in files) == [
        "heatmap.png", "heatmap.svg", "paired.png", "paired.svg", "rates.png", "rates.svg"
    ]  # fmt: skip
    # The paired differences: a point (with its interval bars) for each of the 3 others.
    left, right = charts.paired_figure(doc).get_axes()
    assert "capture rate difference" in left.get_ylabel() and "turns" in right.get_ylabel()
    assert len(left.get_xticklabels()) == 3
    _check_png(str(swept / "paired.png"), 600, 350)
    _check_png(str(swept / "rates.png"), 800, 350)
    _check_png(str(swept / "heatmap.png"), 400, 300)
    assert (swept / "rates.svg").read_bytes().lstrip().startswith(b"<?xml")
    from engine.batch import RunsFile

    point = swept / "points" / point_dir({MOVE: 12, WILD: "none"})
    runs = RunsFile(str(point / "runs.jsonl"))
    surv = charts.survival_figure(runs, "chase")
    ax = surv.get_axes()[0]
    assert ax.get_xlabel() == "turn t" and ax.get_ylabel() == "probability"
    assert "P(captured / escaped by turn t)" in ax.get_title()
    labels = [t.get_text() for t in ax.get_legend().get_texts()]
    assert "P(captured by turn t)" in labels and "P(escaped by turn t)" in labels
    # The curve ends at the outcome's rate, within its band.
    n, by = charts.survival_counts(runs)
    last = max(t for h in by.values() for t in h)
    t, done, rate, lo, hi = charts.survival_curve(n, by["capture"], last)[-1]
    assert done == by["capture"].total() and lo <= rate <= hi
    files = charts.write_batch_charts(str(point), runs, "chase")
    _check_png(files[0], 600, 350)


def test_notebook_view(swept: Path) -> None:
    res = api.results(str(swept))
    assert isinstance(res, api.SweepResult)
    page = res._repr_html_()
    points, paired = page.split("paired differences")
    assert points.count("<tr>") == 5 and MOVE in points and "<table>" in points
    assert paired.count("<tr>") == 4 and "Newcombe" in paired  # 3 points against the first
    assert res.table().num_rows == 4
    point = api.results(str(swept / "points" / point_dir({MOVE: 8, WILD: "none"})))
    assert isinstance(point, api.BatchResult)
    assert "capture" in point._repr_html_() and len(point.runs()) == 30


def test_sweep_command_and_block(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    text = Path(CHASE).read_text()
    text = text.replace("map: ../maps/chase.tmx", f"map: {ROOT / 'maps' / 'chase.tmx'}")
    text += "sweep:\n  runs: 10\n  vary:\n    turns: [2, 30]\n"
    scen = tmp_path / "s.yaml"
    scen.write_text(text)
    out = tmp_path / "out"
    assert main(["sweep", str(scen), "--out", str(out), "--json", "--no-charts"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert [p["params"] for p in doc["points"]] == [{"scenario.turns": 2}, {"scenario.turns": 30}]
    assert all(p["runs"] == 10 for p in doc["points"])
    short = doc["points"][0]
    assert short["outcomes"]["timeout"] > 0  # two turns are too few to end the chase
    assert main(["sweep", str(scen), "--out", str(out), "--no-charts"]) == 2
    assert "--resume" in capsys.readouterr().err
    bad = main(["sweep", CHASE, "--vary", "nobody.stats.move=1,2", "--out", str(tmp_path / "b")])
    err = capsys.readouterr().err
    assert bad == 2 and err.count("\n") == 1 and "cannot be varied" in err
    assert not (tmp_path / "b").exists()
    assert main(["sweep", CHASE, "--vary", f"{MOVE}=8,8", "--out", str(tmp_path / "c")]) == 2
    assert "listed twice" in capsys.readouterr().err
    with pytest.raises(ScenarioError):
        run_sweep(CHASE, vary={MOVE: ["fast"]}, runs=5, out_dir=str(tmp_path / "d"))


def test_sweep_on_a_dask_cluster_equals_a_local_one(tmp_path: Path) -> None:
    import pyarrow.parquet as pq
    from distributed import LocalCluster

    vary = [f"{MOVE}=8,12"]
    run_sweep(CHASE, vary=vary, runs=20, seed=4, out_dir=str(tmp_path / "l"))
    with LocalCluster(
        n_workers=1,
        threads_per_worker=1,
        host="127.0.0.1",
        dashboard_address="127.0.0.1:0",
        processes=True,
    ) as cluster:
        run_sweep(
            CHASE, vary=vary, runs=20, seed=4, scheduler=cluster.scheduler_address,
            out_dir=str(tmp_path / "d"),
        )  # fmt: skip
    for move in (8, 12):
        assert _point_runs(tmp_path / "l", {MOVE: move}) == _point_runs(
            tmp_path / "d", {MOVE: move}
        )
    assert pq.read_table(tmp_path / "l" / "runs.parquet").equals(
        pq.read_table(tmp_path / "d" / "runs.parquet")
    )


def test_what_a_point_can_change() -> None:
    from engine.scenario import load_scenario

    s = load_scenario(
        CHASE,
        overrides={
            "quarry.stats.move": 8, "settings.wild_one": "none", "scenario.turns": 4,
            "terrain.forest.move": "blocked", "terrain.forest.difficulty": "heroic",
        },
    )  # fmt: skip
    assert s.token_spec("quarry").stats["move"] == 8 and s.turns == 4
    assert s.settings["wild_one"] == "none"
    forest = [t for t in s.model.terrains if t.name == "forest"]
    assert forest and all(t.move == "blocked" and t.difficulty == "heroic" for t in forest)
    plain = load_scenario(CHASE)  # the file itself is untouched
    assert plain.token_spec("quarry").stats["move"] == 10 and plain.turns == 30
    assert all(t.move != "blocked" for t in plain.model.terrains if t.name == "forest")
    with pytest.raises(ScenarioError, match="no terrain 'lava'"):
        load_scenario(CHASE, overrides={"terrain.lava.cost": 2})
    with pytest.raises(ScenarioError, match="terrain.forest.move"):
        load_scenario(CHASE, overrides={"terrain.forest.move": "teleport"})


def test_a_value_checked_on_the_map_read_once_loads_as_the_plain_way(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """sweep_spec reads the map once and checks every value on it (``same_map``): each
    scenario so loaded is the plain load's, a map edit reads its own map, and the map read
    once is left as read."""
    import pickle

    from engine.scenario import load_scenario, read_scenario_map
    from engine.sweep import sweep_spec

    once = read_scenario_map(CHASE)
    before = pickle.dumps(once.tiled.model)
    for overrides in (
        {}, {MOVE: 9}, {WILD: "none"}, {"scenario.turns": 4}, {"quarry.pace": "walk"},
        {"terrain.forest.move": "blocked"}, {"region.nowhere.move": "walk"},
    ):  # fmt: skip
        try:
            plain = pickle.dumps(load_scenario(CHASE, overrides=overrides))
        except ScenarioError as exc:
            with pytest.raises(ScenarioError) as got:
                load_scenario(CHASE, overrides=overrides, same_map=once)
            assert str(got.value) == str(exc)
            continue
        shared = load_scenario(CHASE, overrides=overrides, same_map=once)
        assert pickle.dumps(shared) == plain, overrides
        edits_map = any(k.startswith(("terrain.", "region.")) for k in overrides)
        assert (shared.model is once.tiled.model) != edits_map
    assert pickle.dumps(once.tiled.model) == before

    reads = _counted_map_reads(monkeypatch)
    spec = sweep_spec(CHASE, [f"{MOVE}=7,8,9,10", f"{WILD}=complication,none"], 10, None)
    assert len(spec["points"]) == 8 and len(reads) == 1
    sweep_spec(CHASE, [f"{MOVE}=7,8", "terrain.forest.move=walk,blocked"], 10, None)
    assert len(reads) == 1 + 1 + 2  # the map, then each map edit's own
    with pytest.raises(ScenarioError, match="terrain.forest.move"):
        sweep_spec(CHASE, [f"{MOVE}=7,8", "terrain.forest.move=walk,teleport"], 10, None)


def _counted_map_reads(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    import engine.tiled

    reads: list[str] = []
    real = engine.tiled.read_tiled

    def counted(path: Any, *args: Any, **kw: Any) -> Any:
        reads.append(str(path))
        return real(path, *args, **kw)

    monkeypatch.setattr(engine.tiled, "read_tiled", counted)
    return reads


def test_a_sweeps_points_play_on_its_map_read_once_as_separate_batches(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every point's batch loads its scenario from the map the sweep read (PointWork's
    ``same_map``), a map edit from its own: each point's folder is, byte for byte, the
    batch run_batch makes alone, reading its map itself."""
    from engine.batch import run_batch
    from engine.batch.work import WORKER_CACHE
    from engine.sweep import sweep_spec

    vary = [f"{MOVE}=8,12", f"{WILD}=complication,none"]
    edited = [f"{MOVE}=8,12", "terrain.forest.move=walk,blocked"]
    reads = _counted_map_reads(monkeypatch)
    for name, grid in (("plain", vary), ("edited", edited)):
        out = tmp_path / name
        del reads[:]
        run_sweep(CHASE, vary=grid, runs=20, seed=4, out_dir=str(out))
        map_edits = 2 + 4 if name == "edited" else 0  # each value checked, each point played
        assert len(reads) == 1 + map_edits, reads  # else once per point, as batches read it
        for p in sweep_spec(CHASE, grid, 20, 4)["points"]:
            WORKER_CACHE.clear()  # the plain way: nothing the sweep loaded
            alone = tmp_path / f"{name}-alone" / p["point"]
            run_batch(CHASE, runs=20, seed=p["seed"], out_dir=str(alone), overrides=p["params"])
            point = out / "points" / p["point"]
            for file in ("runs.jsonl", "runs.parquet", "batch.json"):
                assert (point / file).read_bytes() == (alone / file).read_bytes(), (p, file)
            a, b = (json.loads((f / "summary.json").read_text()) for f in (point, alone))
            assert a.pop("results") != b.pop("results") and a == b


# --------------------------------------------------------------------------- named regions

#: A 10 x 4 map with a river (~) down columns 4-5; objects in Tiled's pixels (32 px cells).
RIVER = ["....~~....", "....~~....", "....~~....", "....~~...."]
REGIONS = (
    '<objectgroup id="2" name="objects">'
    '<object id="1" name="a" type="spawn" x="16" y="16"><point/></object>'
    # "ford": a plain rectangle over the river's cells (4,1) and (5,1), no property at all.
    '<object id="2" name="ford" x="128" y="32" width="64" height="32"/>'
    # "bog": a region with a property (MAP-FORMAT.md), over (0,2), (1,2), (0,3), (1,3).
    '<object id="3" name="bog" x="0" y="64" width="64" height="64"><properties>'
    '<property name="cost" type="float" value="3"/></properties></object>'
    '<object id="4" name="label" x="0" y="0" width="64" height="20"><text>hi</text></object>'
    "</objectgroup>"
)


def _region_scenario(tmp_path: Path, map_text: str | None = None) -> str:
    from tmxtext import tmx

    (tmp_path / "river.tmx").write_text(map_text or tmx(RIVER, objects=REGIONS))
    scen = tmp_path / "river.yaml"
    scen.write_text(
        "map: river.tmx\nsystem: generic\nturns: 2\nruns: 2\n"
        "tokens:\n  - {id: a, policy: idle, stats: {speed: 30}}\n"
    )
    return str(scen)


def test_a_region_varies_by_its_objects_name(tmp_path: Path) -> None:
    from engine.scenario import load_scenario
    from engine.tiled.objects import region_cells, region_names

    scen = _region_scenario(tmp_path)
    plain = load_scenario(scen).model
    assert region_names(plain) == ["bog", "ford"]  # not the spawn, not the text label
    assert region_cells(plain, "ford") == [(4, 1), (5, 1)]
    # The cells a region's own properties painted are the cells it is varied on.
    assert region_cells(plain, "bog") == [
        (c, r) for r in range(4) for c in range(10) if plain.terrain_at((c, r)).cost == 3
    ]
    ford = load_scenario(scen, overrides={"region.ford.move": "walk"}).model
    whole = load_scenario(scen, overrides={"terrain.water.move": "walk"}).model
    changed = {c for c in plain.grid.cells() if ford.terrain_at(c) != plain.terrain_at(c)}
    assert changed == {(4, 1), (5, 1)}
    assert all(ford.terrain_at(c).move == "walk" for c in changed)
    assert ford.terrain_at((4, 1)).name == "water"  # only the property changes
    assert {c for c in plain.grid.cells() if whole.terrain_at(c).move != plain.terrain_at(c).move} \
        == {(c, r) for c in (4, 5) for r in range(4)}  # fmt: skip
    bog = load_scenario(scen, overrides={"region.bog.cost": 1, "region.bog.difficulty": "heroic"})
    assert {bog.model.terrain_at(c).cost for c in region_cells(plain, "bog")} == {1.0}
    assert {bog.model.terrain_at(c).difficulty for c in region_cells(plain, "bog")} == {"heroic"}


def test_a_region_on_an_infinite_map_is_its_painted_cells(tmp_path: Path) -> None:
    from tmxtext import gid_rows, tileset_xml

    from engine.scenario import load_scenario
    from engine.tiled.objects import region_cells

    rows = gid_rows(["." * 16] * 16)
    csv = ",\n".join(",".join(map(str, r)) for r in rows)
    text = (
        '<?xml version="1.0" encoding="UTF-8"?>\n<map version="1.10" orientation="orthogonal" '
        'renderorder="right-down" width="16" height="16" tilewidth="32" tileheight="32" '
        f'infinite="1">{tileset_xml()}<layer id="1" name="ground" width="16" height="16">'
        f'<data encoding="csv"><chunk x="-16" y="-16" width="16" height="16">{csv}</chunk>'
        "</data></layer>"
        '<objectgroup id="2" name="objects">'
        '<object id="1" name="a" type="spawn" x="-496" y="-496"><point/></object>'
        '<object id="2" name="bog" x="-448" y="-448" width="64" height="64"><properties>'
        '<property name="cost" type="float" value="3"/></properties></object>'
        "</objectgroup></map>\n"
    )
    scen = _region_scenario(tmp_path, text)
    model = load_scenario(scen).model
    assert model.origin == (-16, -16)
    painted = [(c, r) for r in range(16) for c in range(16) if model.terrain_at((c, r)).cost == 3]
    assert region_cells(model, "bog") == painted == [(2, 2), (3, 2), (2, 3), (3, 3)]


def test_region_edits_are_checked_in_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    scen = _region_scenario(tmp_path)
    cases = {
        "region.fjord.move=walk": ["region.fjord.move", "no region 'fjord'", "did you mean 'ford'",
                                   "regions: bog, ford"],
        "region.ford.speed=1": ["region.ford.speed", "'speed' is not a terrain property",
                                "PROP one of move, difficulty, dn, cost"],
        "region.ford.move=teleport": ["region.ford.move has move='teleport'", "use walk | crawl"],
        "region.ford.cost=0.5": ["region.ford.cost has cost='0.5'", "a number >= 1"],
        "region.ford=1": ["region.ford", "write region.NAME.PROP"],
    }  # fmt: skip
    for i, (vary, words) in enumerate(cases.items()):
        out = tmp_path / f"out{i}"
        code = main(["sweep", scen, "--vary", vary, "--out", str(out), "--no-charts"])
        err = capsys.readouterr().err
        assert code == 2 and err.count("\n") == 1, (vary, err)
        assert all(w in err for w in words), (vary, err)
        assert not out.exists()
    assert main(["run", scen, "--set", "region.ford.dn=-1", "--out", str(tmp_path / "r")]) == 2
    assert "region.ford.dn has dn='-1'" in capsys.readouterr().err


def test_a_sweep_over_a_region(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    out = tmp_path / "s"
    argv = ["sweep", CHASE, "--vary", "region.brambles.move=walk,blocked", "--runs", "20"]
    assert main([*argv, "--seed", "4", "--out", str(out), "--json", "--no-charts"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert [p["params"] for p in doc["points"]] == [
        {"region.brambles.move": "walk"}, {"region.brambles.move": "blocked"}
    ]  # fmt: skip
    runs = pq.read_table(out / "runs.parquet")
    assert runs.schema.field("region.brambles.move").type == pa.string()
    assert runs.num_rows == 40
    # The brambles really are in the way when blocked: the same seeds play otherwise.
    items = [(i, 1000 + i) for i in range(20)]
    plays = {
        move: [
            (r["outcome"], r["turns"], r["cell"])
            for r in run_chunk(CHASE, (("region.brambles.move", move),), items)
        ]
        for move in ("walk", "blocked")
    }
    assert plays["walk"] != plays["blocked"]
    assert plays["walk"] == [
        (r["outcome"], r["turns"], r["cell"]) for r in run_chunk(CHASE, (), items)
    ]  # brambles are walked already: "walk" changes nothing


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
@pytest.mark.parametrize("table", ["runs.parquet", "points.parquet", "summary.json"])
def test_a_stop_while_the_sweeps_tables_are_written(
    sig: signal.Signals, table: str, tmp_path: Path, capsys, monkeypatch
) -> None:
    """Ctrl-C or SIGTERM while the sweep's own tables are written, every point finished:
    one line that says so and how to finish, status 128 + the signal, no summary.json and
    no temporary file; ``sweep --resume`` plays no run and writes the tables an
    uninterrupted sweep writes."""
    vary = ["--vary", f"{MOVE}=8,12"]
    cut, whole = tmp_path / "cut", tmp_path / "whole"
    argv = ["sweep", CHASE, *vary, "--runs", "20", "--seed", "4", "--no-charts", "--quiet"]
    real_fsync = os.fsync

    def fsync(fd: int) -> None:
        name = os.readlink(f"/proc/self/fd/{fd}")
        if name.endswith(f"-{table}.tmp") and os.path.dirname(name) == str(cut):
            os.kill(os.getpid(), sig)  # the handler runs here, inside the write
        real_fsync(fd)

    monkeypatch.setattr(os, "fsync", fsync)
    assert main([*argv, "--out", str(cut)]) == 128 + sig
    monkeypatch.undo()
    assert capsys.readouterr().err == (
        f"tacgrid: stopped by {sig.name} while the sweep's tables were written: all 2 points "
        "are finished; the sweep's finished points stay (sweep --resume)\n"
    )
    assert not (cut / "summary.json").exists()
    assert not [p for p in cut.rglob("*") if p.name.endswith(".tmp")]
    assert main([*argv, "--out", str(whole)]) == 0

    def no_runs(*args: Any) -> Any:
        raise AssertionError("a finished point was played again")

    from engine.batch.work import WorkerCache

    monkeypatch.setattr(WorkerCache, "run_chunk", no_runs)
    assert main([*argv, "--out", str(cut), "--resume"]) == 0
    monkeypatch.undo()
    capsys.readouterr()
    import pyarrow.parquet as pq

    for name in ("runs.parquet", "points.parquet"):
        assert pq.read_table(cut / name).equals(pq.read_table(whole / name)), name
    docs = [json.loads((d / "summary.json").read_text()) for d in (cut, whole)]
    for doc in docs:
        for p in doc["points"]:
            p.pop("results")
    assert docs[0] == docs[1]
