"""The README's Python API example runs as written."""

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
