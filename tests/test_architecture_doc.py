"""ARCHITECTURE.md names every layer the import contracts hold, in their order.

Each layers contract of pyproject.toml's [tool.importlinter] is one code block of
ARCHITECTURE.md: a line a layer, its modules first (``engine.`` left off; ``a | b`` for
siblings), then two or more spaces and what the layer is. A layer added, removed or moved in
the contracts fails here until the page says so too.
"""

from __future__ import annotations

import re
import tomllib

from conftest import ROOT

Layer = frozenset[str]


def _names(layer: str, container: str = "") -> Layer:
    names = set()
    for name in layer.split("|"):
        name = name.strip().strip("()").strip()
        if container:
            name = f"{container}.{name}"
        names.add(name.removeprefix("engine."))
    return frozenset(names)


def contract_layers() -> list[list[Layer]]:
    """Every layers contract's layers, top to bottom, one list per contract (and container)."""
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())
    found = []
    for contract in config["tool"]["importlinter"]["contracts"]:
        if contract["type"] != "layers":
            continue
        for container in contract.get("containers", [""]):
            found.append([_names(layer, container) for layer in contract["layers"]])
    return found


def doc_blocks() -> list[list[Layer]]:
    """ARCHITECTURE.md's code blocks read as layer lists (continuation lines indented)."""
    text = (ROOT / "ARCHITECTURE.md").read_text(encoding="utf-8")
    blocks = []
    for block in re.findall(r"^```\n(.*?)^```", text, re.S | re.M):
        layers = [
            _names(re.split(r"\s{2,}", line, maxsplit=1)[0])
            for line in block.splitlines()
            if line.strip() and not line[0].isspace()
        ]
        blocks.append(layers)
    return blocks


def test_every_layers_contract_is_a_block_of_the_page() -> None:
    blocks = doc_blocks()
    contracts = contract_layers()
    assert contracts, "pyproject.toml holds layers contracts"
    for layers in contracts:
        assert layers in blocks, (
            "ARCHITECTURE.md has no block naming these layers in this order: "
            + " > ".join(" | ".join(sorted(layer)) for layer in layers)
        )


def test_the_engine_block_names_each_module_once() -> None:
    main = contract_layers()[0]
    names = [name for layer in main for name in layer]
    assert len(names) == len(set(names)) and {"cli", "grid", "errors", "kernel"} <= set(names)
