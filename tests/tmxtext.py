"""Write small Tiled maps from text drawings, for tests and benchmarks.

Each character of a drawing is one cell; LEGEND maps it to the tile's properties. The
tileset is embedded (no image), so the files are self-contained.
"""

from __future__ import annotations

import base64
import gzip
import zlib
from pathlib import Path
from typing import Any

LEGEND: dict[str, dict[str, Any]] = {
    ".": {"terrain": "open", "move": "walk"},
    ",": {"terrain": "rough", "move": "walk", "cost": 2.0},
    "#": {"terrain": "wall", "move": "blocked"},
    "~": {"terrain": "water", "move": "swim", "difficulty": "easy", "fall": "water"},
    "^": {"terrain": "cliff", "move": "climb", "difficulty": "difficult", "height": 10.0},
    "H": {"terrain": "ladder", "move": "ladder"},
    "_": {"terrain": "crawlspace", "move": "crawl"},
    "O": {"terrain": "pit", "move": "gap", "height": 10.0},
    "a": {"terrain": "sky", "move": "air"},
    "+": {"terrain": "difficult", "move": "walk", "cost_add": 1.0},
}
CHARS = list(LEGEND)


def _zstd(raw: bytes) -> bytes:
    import zstandard

    return zstandard.ZstdCompressor().compress(raw)


#: base64 layer data's compressions, by Tiled's name ("" = none).
COMPRESS = {"": bytes, "zlib": zlib.compress, "gzip": gzip.compress, "zstd": _zstd}
#: Every layer encoding Tiled writes, as `tmx(encoding=...)` names them.
ENCODINGS = ["csv", "xml", "base64", "base64-zlib", "base64-gzip", "base64-zstd"]


def _prop(name: str, value: Any) -> str:
    if isinstance(value, float):
        return f'<property name="{name}" type="float" value="{value}"/>'
    if isinstance(value, int):
        return f'<property name="{name}" type="int" value="{value}"/>'
    return f'<property name="{name}" value="{value}"/>'


def tileset_xml(firstgid: int = 1) -> str:
    tiles = []
    for i, ch in enumerate(CHARS):
        props = LEGEND[ch]
        inner = "".join(_prop(k, v) for k, v in props.items() if k != "terrain")
        tiles.append(
            f'<tile id="{i}" type="{props["terrain"]}"><properties>{inner}</properties></tile>'
        )
    return (
        f'<tileset firstgid="{firstgid}" name="terrain" tilewidth="32" tileheight="32" '
        f'tilecount="{len(CHARS)}" columns="{len(CHARS)}">' + "".join(tiles) + "</tileset>"
    )


def gid_rows(rows: list[str]) -> list[list[int]]:
    """Tiled gids for a drawing (space = no tile)."""
    return [[0 if ch == " " else CHARS.index(ch) + 1 for ch in row] for row in rows]


def tmx(
    rows: list[str],
    *,
    orientation: str = "orthogonal",
    tile: tuple[int, int] = (32, 32),
    hexside: int = 0,
    stagger: tuple[str, str] = ("y", "odd"),
    encoding: str = "csv",
    properties: dict[str, Any] | None = None,
    objects: str = "",
    extra_layers: str = "",
) -> str:
    """A whole .tmx document for the drawing."""
    height = len(rows)
    width = len(rows[0])
    assert all(len(r) == width for r in rows), "ragged drawing"
    gids = gid_rows(rows)
    if encoding == "csv":
        data = (
            '<data encoding="csv">\n'
            + ",\n".join(",".join(map(str, r)) for r in gids)
            + "\n</data>"
        )
    elif encoding == "xml":  # Tiled's oldest form: one <tile> element a cell
        data = "<data>" + "".join(f'<tile gid="{g}"/>' for r in gids for g in r) + "</data>"
    else:
        flat = b"".join(g.to_bytes(4, "little") for r in gids for g in r)
        compression = encoding.removeprefix("base64").removeprefix("-")
        if compression not in COMPRESS:
            raise ValueError(f"unknown encoding {encoding!r}")
        packed = base64.b64encode(COMPRESS[compression](flat)).decode()
        attr = f' compression="{compression}"' if compression else ""
        data = f'<data encoding="base64"{attr}>{packed}</data>'
    hexattrs = ""
    if orientation in ("hexagonal", "staggered"):
        hexattrs = f' staggeraxis="{stagger[0]}" staggerindex="{stagger[1]}"'
        if orientation == "hexagonal":
            hexattrs = f' hexsidelength="{hexside}"' + hexattrs
    props = ""
    if properties:
        props = (
            "<properties>" + "".join(_prop(k, v) for k, v in properties.items()) + "</properties>"
        )
    return (
        '<?xml version="1.0" encoding="UTF-8"?>\n'
        f'<map version="1.10" tiledversion="1.10.2" orientation="{orientation}" renderorder="right-down" '
        f'width="{width}" height="{height}" tilewidth="{tile[0]}" tileheight="{tile[1]}"{hexattrs} infinite="0">'
        f"{props}{tileset_xml()}"
        f'<layer id="1" name="ground" width="{width}" height="{height}">{data}</layer>'
        f"{extra_layers}{objects}</map>\n"
    )


def exit_objects(cells: list[tuple[int, int]]) -> str:
    """An object layer of one-cell exits (``out0``, ``out1``...) on 32-px cells (col, row),
    for :func:`tmx`'s ``objects``; empty where there are none."""
    if not cells:
        return ""
    objs = "".join(
        f'<object id="{i + 1}" name="out{i}" type="exit" x="{c * 32}" y="{r * 32}" '
        'width="32" height="32"/>'
        for i, (c, r) in enumerate(cells)
    )
    return f'<objectgroup name="o">{objs}</objectgroup>'


def write(path: Path, rows: list[str], **kwargs: Any) -> Path:
    path.write_text(tmx(rows, **kwargs), encoding="utf-8")
    return path


def maze(n: int, path: Path) -> None:
    """A serpentine ``n`` x ``n`` maze (walk and blocked cells, csv): open rows joined at
    alternate ends, so a path from 0,0 to the far end passes through every row."""
    rows = []
    for r in range(n):
        row = ["1"] * n
        if r % 2:
            row = ["2"] * n
            row[n - 1 if (r // 2) % 2 == 0 else 0] = "1"
        rows.append(",".join(row))
    ts = (
        '<tileset firstgid="1" name="t" tilewidth="8" tileheight="8" tilecount="2" columns="2">'
        '<tile id="0"><properties><property name="move" value="walk"/></properties></tile>'
        '<tile id="1"><properties><property name="move" value="blocked"/></properties></tile>'
        "</tileset>"
    )
    path.write_text(
        f'<?xml version="1.0"?><map version="1.10" orientation="orthogonal" width="{n}" '
        f'height="{n}" tilewidth="8" tileheight="8" infinite="0">{ts}<layer id="1" name="g" '
        f'width="{n}" height="{n}"><data encoding="csv">{",".join(rows)}</data></layer></map>'
    )
