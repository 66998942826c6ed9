"""A map as text: one glyph per cell by movement mode, with marks (turns, bands) on top.

Shared by the ``path``, ``reach`` and ``fly`` text reports.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from engine.lazy import numpy as np

#: The glyph of each movement mode.
GLYPHS = {
    "walk": ".",
    "crawl": "=",
    "swim": "~",
    "climb": "^",
    "ladder": "H",
    "gap": "O",
    "air": ":",
    "blocked": "#",
}
#: The mark of the turn a cell is entered in: 1-9, then a-z (later turns share ``z``).
TURN_MARKS = "123456789abcdefghijklmnopqrstuvwxyz"


def turn_mark(turn: int) -> str:
    """The mark of turn ``turn`` (1-based)."""
    return TURN_MARKS[min(turn, len(TURN_MARKS)) - 1]


@dataclass(frozen=True)
class CellMarks:
    """Marks of one character each held as arrays, for :func:`draw_cells`: the cells'
    row-major indices on a map ``width`` cells wide (``flat``) and each mark's ASCII code
    (``codes``, uint8), a later mark of a cell over an earlier one, as a dict's later
    assignment is. A long path's millions of marks as a dict of tuples were gigabytes."""

    flat: np.ndarray
    codes: np.ndarray
    width: int

    def __len__(self) -> int:
        return int(self.flat.size)


def draw_cells(model: Any, marks: dict[tuple[int, int], str] | CellMarks, margin: int = 3) -> str:
    """The map as text (one glyph per cell by movement mode) with ``marks`` on top.

    Cropped to the marked cells plus a margin; hex rows/columns that Tiled shifts are
    indented by one character so neighbours line up as they do on the map. ``marks``: a
    dict of each cell's mark, or :class:`CellMarks` (drawn on a numpy canvas:
    tests/test_long_path.py holds it equal to the dict of the same marks).
    """
    if isinstance(marks, CellMarks):
        return _draw_canvas(model, marks, margin)
    g = model.grid
    if marks:
        cs = [c for c, _ in marks]
        rs = [r for _, r in marks]
        c0, c1 = max(0, min(cs) - margin), min(g.width - 1, max(cs) + margin)
        r0, r1 = max(0, min(rs) - margin), min(g.height - 1, max(rs) + margin)
    else:
        c0, c1, r0, r1 = 0, g.width - 1, 0, g.height - 1
    lines = [f"   cols {c0}..{c1}, rows {r0}..{r1}"]
    for r in range(r0, r1 + 1):
        row = []
        for c in range(c0, c1 + 1):
            row.append(marks.get((c, r)) or GLYPHS[model.terrain_at((c, r)).move])
        sep = " " if g.kind == "hex" else ""
        shift = " " if g.kind == "hex" and g.stagger_axis == "y" and g.parity((0, r)) else ""
        lines.append(f"{r:>4} {shift}{sep.join(row)}")
    return "\n".join(lines)


def _draw_canvas(model: Any, marks: CellMarks, margin: int) -> str:
    """:func:`draw_cells` of :class:`CellMarks`: the box's glyphs looked up by terrain id,
    the marks written over them (each cell's last), a row's text at a time."""
    g = model.grid
    if marks.width != g.width:
        raise ValueError(f"marks of a map {marks.width} wide drawn on one {g.width} wide")
    flat = marks.flat
    rows = cols = flat
    if flat.size:
        rows, cols = np.divmod(flat, g.width)
        c0, c1 = max(0, int(cols.min()) - margin), min(g.width - 1, int(cols.max()) + margin)
        r0, r1 = max(0, int(rows.min()) - margin), min(g.height - 1, int(rows.max()) + margin)
    else:
        c0, c1, r0, r1 = 0, g.width - 1, 0, g.height - 1
    # A terrain whose mode has no glyph is 0 here: a KeyError, as the plain way, if drawn.
    lut = np.array([ord(GLYPHS.get(t.move, "\0")) for t in model.terrains], dtype=np.uint8)
    canvas = lut[model.terrain_ids[r0 : r1 + 1, c0 : c1 + 1]]
    if flat.size:
        # Each mark's place on the canvas (in the marks' own integer type: the map's cells
        # fit it), then each cell's last mark: the greatest mark number written on it (an
        # assignment through repeated indices has no promised order).
        at = rows
        at -= r0
        at *= c1 - c0 + 1
        cols -= c0
        at += cols
        del rows, cols
        kind = np.int32 if flat.size < 2**31 else np.int64
        last = np.full(canvas.size, -1, dtype=kind)
        np.maximum.at(last, at, np.arange(flat.size, dtype=kind))
        del at
        marked = np.flatnonzero(last >= 0)
        canvas.ravel()[marked] = marks.codes[last[marked]]
        del last, marked
    if not canvas.all():
        bad = model.terrains[int(model.terrain_ids[r0 : r1 + 1, c0 : c1 + 1][canvas == 0][0])]
        raise KeyError(bad.move)
    hexes = g.kind == "hex"
    if hexes:  # a space between two cells
        spaced = np.full((canvas.shape[0], 2 * canvas.shape[1] - 1), ord(" "), dtype=np.uint8)
        spaced[:, ::2] = canvas
        canvas = spaced
    lines = [f"   cols {c0}..{c1}, rows {r0}..{r1}"]
    for k, r in enumerate(range(r0, r1 + 1)):
        shift = " " if hexes and g.stagger_axis == "y" and g.parity((0, r)) else ""
        lines.append(f"{r:>4} {shift}{canvas[k].tobytes().decode('ascii')}")
    return "\n".join(lines)


def band_glyphs(bands: list[str]) -> dict[str, str]:
    """One distinct letter per band (cautious c, cruising C, ...)."""
    out: dict[str, str] = {}
    for band in bands:
        for ch in (band[0], band[0].upper(), *band[1:]):
            if ch.isalpha() and ch not in out.values():
                out[band] = ch
                break
    return out
