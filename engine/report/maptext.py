"""A map as text: one glyph per cell by movement mode, with marks (turns, bands) on top.

Shared by the ``path``, ``reach`` and ``fly`` text reports.
"""

from __future__ import annotations

from typing import Any

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


def draw_cells(model: Any, marks: dict[tuple[int, int], str], margin: int = 3) -> str:
    """The map as text (one glyph per cell by movement mode) with ``marks`` on top.

    Cropped to the marked cells plus a margin; hex rows/columns that Tiled shifts are
    indented by one character so neighbours line up as they do on the map.
    """
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


def band_glyphs(bands: list[str]) -> dict[str, str]:
    """One distinct letter per band (cautious c, cruising C, ...)."""
    out: dict[str, str] = {}
    for band in bands:
        for ch in (band[0], band[0].upper(), *band[1:]):
            if ch.isalpha() and ch not in out.values():
                out[band] = ch
                break
    return out
