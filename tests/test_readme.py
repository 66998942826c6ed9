"""The README's Python API example runs as written; the Dask exports in docs/batches.md are
settings dask has."""

import re

from conftest import ROOT


def test_readme_python_example_runs(tmp_path, monkeypatch, capsys) -> None:
    text = (ROOT / "README.md").read_text()
    blocks = re.findall(r"```python\n(.*?)```", text, re.S)
    assert blocks, "the README has a Python example"
    monkeypatch.chdir(ROOT)
    code = blocks[0].replace("/tmp/tacgrid-api-demo", str(tmp_path / "demo"))
    exec(compile(code, "README.md", "exec"), {})
    out = capsys.readouterr().out
    assert "capture" in out and out.count("\n") >= 5


def test_readme_quiet_dask_exports_are_settings_dask_has() -> None:
    """docs/batches.md's quiet-cluster exports name settings in dask's own defaults (a renamed
    key would be taken silently and change nothing), each read as the value it gives, and
    are the cluster benchmarks/bench_cluster.py starts."""
    import importlib.util

    import dask.config
    import distributed  # noqa: F401  (loads distributed's defaults into dask.config)

    text = (ROOT / "docs" / "batches.md").read_text()
    exports = dict(re.findall(r"\b(DASK_[A-Z_]+)=(\S+)", text))
    assert len(exports) == 4, exports
    read = dask.config.collect_env(exports)
    flat = {}
    for name in exports:
        path = [part.lower() for part in name[len("DASK_") :].split("__")]
        default = dask.config.get(".".join(path))  # KeyError: not a dask setting
        got = read
        for part in path:
            got = got[part]
        assert type(got) is type(default) or isinstance(default, str), (name, got, default)
        assert got != default, (name, got)
        flat[".".join(path).replace("_", "-")] = got
    spec = importlib.util.spec_from_file_location(
        "bench_cluster", ROOT / "benchmarks" / "bench_cluster.py"
    )
    assert spec is not None and spec.loader is not None
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    assert exports == bench.QUIET_ENV
    assert len(flat) == 4
