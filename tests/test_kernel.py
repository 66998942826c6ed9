"""engine.kernel's one availability check: :data:`engine.kernel.ENTRY_POINTS` names every
function of engine/_kernel.c that engine/kernel.py calls and every one the C module's method
table registers, and a module built from an older engine/_kernel.c (one of them missing) is
stale: not available (every user runs its twin), and its state names what it lacks."""

from __future__ import annotations

import re
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

from engine import kernel
from engine.policies import region
from engine.sim.spread import spread_field

ROOT = Path(__file__).resolve().parents[1]


def test_the_entry_points_are_what_kernel_py_calls() -> None:
    text = (ROOT / "engine" / "kernel.py").read_text()
    called = set(re.findall(r"_BUILT\.(\w+)\(", text))
    assert len(set(kernel.ENTRY_POINTS)) == len(kernel.ENTRY_POINTS)
    assert called == set(kernel.ENTRY_POINTS)


def test_the_entry_points_are_what_the_c_module_registers() -> None:
    text = (ROOT / "engine" / "_kernel.c").read_text()
    table = text[text.index("static PyMethodDef methods[]") :]
    table = table[: table.index("};")]
    registered = re.findall(r'\{"(\w+)", (\w+), METH_VARARGS, (\w+)\}', table)
    assert [name for name, _, _ in registered] == list(kernel.ENTRY_POINTS)
    # each under its own C function and doc string
    assert all(f == name and doc == f"{name}_doc" for name, f, doc in registered)


@pytest.mark.skipif(kernel.state() == "not built", reason="kernel not built")
def test_the_built_module_is_not_stale() -> None:
    assert kernel.missing() == (), (
        f"engine/_kernel.c's built module lacks {', '.join(kernel.missing())}: rebuild it"
    )


def test_a_module_without_one_entry_point_is_stale(monkeypatch: pytest.MonkeyPatch) -> None:
    older = SimpleNamespace(**{name: None for name in kernel.ENTRY_POINTS[1:]})
    assert kernel._lacks(older) == kernel.ENTRY_POINTS[:1]
    assert kernel._lacks(None) == ()
    assert kernel._lacks(SimpleNamespace()) == kernel.ENTRY_POINTS
    monkeypatch.setattr(kernel, "_BUILT", older)
    monkeypatch.setattr(kernel, "_MISSING", kernel._lacks(older))
    monkeypatch.setattr(kernel, "enabled", True)
    assert not kernel.available()
    assert kernel.state() == "stale"
    assert kernel.missing() == kernel.ENTRY_POINTS[:1]
    # its users run their twins, never the stale module's functions (None here)
    indptr = np.array([0, 1, 2, 2], dtype=np.int64)
    indices = np.array([1, 2], dtype=np.int32)
    got = region.reached_safely(indptr, indices, 3, 0, np.array([True, True, False]))
    assert got.tolist() == [True, True, False]
    dist = np.full(3, np.inf)
    spread_field(indptr, indices, np.array([1.0, 2.5]), np.array([0]), dist, 0.5, 2.5)
    assert dist.tolist() == [0.0, 1.0, 3.5]
