"""Deterministic benchmark maps, written once into benchmarks/data/ (git-ignored).

A map is a random drawing in tests/tmxtext.py's legend: mostly open ground, some rough
ground (cost 2), walls, water and crawlspace, with the corners open so corner-to-corner
paths exist. The same seed always gives the same file, so the figures of two runs (or two
machines) are of the same maps.

    python benchmarks/mapgen.py 2048 alternate      # prints the path of the file
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "benchmarks" / "data"
sys.path.insert(0, str(ROOT / "tests"))

import tmxtext  # noqa: E402

#: The drawing's characters and their weights (as the older benchmarks' ".......,,#~_").
PALETTE = ".......,,#~_"
VERSION = 1  # bump when the generator changes, so stale files are not reused


def gids(n: int, seed: int = 7) -> np.ndarray:
    """The (n, n) Tiled gids of the drawing."""
    rng = np.random.default_rng(seed)
    table = np.array([tmxtext.CHARS.index(ch) + 1 for ch in PALETTE], dtype=np.int64)
    out = table[rng.integers(0, len(PALETTE), size=(n, n))]
    out[0, 0] = out[-1, -1] = tmxtext.CHARS.index(".") + 1
    return out


def _document(g: np.ndarray, orientation: str, diagonals: str) -> str:
    h, w = g.shape
    body = ",\n".join(",".join(map(str, row)) for row in g.tolist())
    extra = ""
    tile = 'tilewidth="32" tileheight="32"'
    if orientation == "hexagonal":
        extra = ' hexsidelength="16" staggeraxis="y" staggerindex="odd"'
    props = ""
    if orientation != "hexagonal":
        props = f'<properties><property name="diagonals" value="{diagonals}"/></properties>'
    return (
        '<?xml version="1.0" encoding="UTF-8"?>\n'
        f'<map version="1.10" tiledversion="1.10.2" orientation="{orientation}" '
        f'renderorder="right-down" width="{w}" height="{h}" {tile}{extra} infinite="0">'
        f"{props}{tmxtext.tileset_xml()}"
        f'<layer id="1" name="ground" width="{w}" height="{h}">'
        f'<data encoding="csv">\n{body}\n</data></layer></map>\n'
    )


def map_file(n: int, diagonals: str = "equal", orientation: str = "orthogonal") -> Path:
    """The benchmark map of side ``n`` (written on first use)."""
    kind = "hex" if orientation == "hexagonal" else diagonals
    path = DATA / f"bench-{kind}-{n}-v{VERSION}.tmx"
    if not path.exists():
        DATA.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(".part")
        tmp.write_text(_document(gids(n), orientation, diagonals), encoding="utf-8")
        tmp.replace(path)
    return path


if __name__ == "__main__":
    size = int(sys.argv[1]) if len(sys.argv) > 1 else 256
    rule = sys.argv[2] if len(sys.argv) > 2 else "equal"
    print(map_file(size, rule, "hexagonal" if rule == "hex" else "orthogonal"))
