"""What the viewer draws over the map and in its panel: token labels and stacks, tokens,
walls and doors, the overlay legend, wrapped panel text.

Kept apart from :mod:`engine.viewer.app` (events, state) so that drawing can be tested and
changed on its own.

>>> short_labels(["pursuer1", "pursuer2", "quarry"])
{'pursuer1': 'p1', 'pursuer2': 'p2', 'quarry': 'q'}
>>> short_labels(["guard", "goblin", "ogre1"])
{'guard': 'gu', 'goblin': 'go', 'ogre1': 'o1'}
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Sequence
from typing import Any

import pygame

from engine.grid import Cell
from engine.mapmodel import Wall
from engine.walls import wall_segments

Colour = tuple[int, int, int]

#: Walls, windows and doors as the viewer and ``render`` draw them (a shut door has a dark
#: seam down its middle; an open one is dashed).
WALL = (24, 24, 28)
WINDOW = (90, 160, 235)
DOOR = (150, 92, 40)
DOOR_SEAM = (70, 40, 16)
DOOR_OPEN = (235, 200, 140)

#: Reach band colours (fastest pace last), 2-/3-turn contour colours, overlay alphas.
#: Hues far apart (green, yellow, orange, magenta): at the fill's alpha each band moves a
#: cell's colour by a ΔE of 20 or more on grass, water and a dark VTT floor, and no two
#: bands land on the same colour (an orange and a red both went brown over green).
BAND_COLOURS: list[Colour] = [(30, 220, 90), (255, 230, 0), (255, 120, 0), (235, 20, 150)]
CONTOUR_COLOURS: dict[int, Colour] = {2: (120, 190, 255), 3: (190, 140, 255)}
#: A band's cells are tinted (the terrain still shows through) and outlined.
BAND_FILL_ALPHA = 110
BAND_EDGE_ALPHA = 255
LABEL_MAX = 4
#: The side panel's text: its lines, and the quieter ones (the window's and the GM table's).
TEXT: Colour = (230, 232, 236)
DIM: Colour = (150, 156, 166)


# --------------------------------------------------------------------------- walls


def draw_walls(
    surface: pygame.Surface,
    walls: Iterable[Wall],
    to_surface: Any,
    width: int,
    bounds: tuple[float, float, float, float] | None = None,
) -> None:
    """Draw ``walls`` on ``surface``; ``to_surface(x, y)`` maps map pixels to the surface's,
    ``bounds`` (x0, y0, x1, y1 in map pixels) skips pieces wholly outside it."""
    for wall in walls:
        if wall.kind == "door":
            colour = DOOR_OPEN if wall.open else DOOR
        else:
            colour = WINDOW if wall.kind == "window" else WALL
        for ax, ay, bx, by in wall_segments(wall):
            if bounds is not None:
                x0, y0, x1, y1 = bounds
                if max(ax, bx) < x0 or min(ax, bx) > x1 or max(ay, by) < y0 or min(ay, by) > y1:
                    continue
            pts = [to_surface(ax, ay), to_surface(bx, by)]
            if wall.kind == "door" and wall.open:
                dashed(surface, colour, pts, max(2, width - 1))
            else:
                pygame.draw.line(surface, colour, pts[0], pts[1], width)
                if wall.kind == "door":
                    pygame.draw.line(surface, DOOR_SEAM, pts[0], pts[1], max(1, width // 3))


def dashed(
    surf: pygame.Surface, colour: tuple[int, int, int], pts: list[tuple[float, float]], width: int
) -> None:
    """A polyline drawn in dashes (8 px on, 6 px off)."""
    on, off = 8.0, 6.0
    for (x0, y0), (x1, y1) in zip(pts, pts[1:], strict=False):
        length = math.hypot(x1 - x0, y1 - y0)
        t = 0.0
        while t < length:
            t1 = min(length, t + on)
            a = (x0 + (x1 - x0) * t / length, y0 + (y1 - y0) * t / length)
            b = (x0 + (x1 - x0) * t1 / length, y0 + (y1 - y0) * t1 / length)
            pygame.draw.line(surf, colour, a, b, width)
            t = t1 + off


def boundary(grid: Any, cells: set[Cell]) -> list[tuple[tuple[float, float], tuple[float, float]]]:
    """Edges between cells in ``cells`` and cells outside it (or off the map)."""

    def key(p: tuple[float, float]) -> tuple[float, float]:
        return (round(p[0], 3), round(p[1], 3))

    out = []
    for cell in cells:
        corners = grid.cell_corners(cell)
        inside = [
            {key(p) for p in grid.cell_corners(n)} for n in grid.neighbours(cell) if n in cells
        ]
        for a, b in zip(corners, corners[1:] + corners[:1], strict=True):
            ka, kb = key(a), key(b)
            if not any(ka in ring and kb in ring for ring in inside):
                out.append((a, b))
    return out


# --------------------------------------------------------------------------- tokens


def short_labels(ids: Sequence[str]) -> dict[str, str]:
    """Short unique labels: the name's first letter(s) plus its trailing number.

    ``pursuer1, pursuer2, quarry`` -> ``p1, p2, q``; letters are added while two labels
    collide; a label that cannot be told apart within :data:`LABEL_MAX` characters is
    numbered instead (``t1``, ``t2``...).
    """
    parts: dict[str, tuple[str, str]] = {}
    for tid in ids:
        m = re.match(r"^(.*?)(\d*)$", tid)
        letters = re.sub(r"[^0-9a-z]", "", (m.group(1) if m else tid).lower()) or "t"
        parts[tid] = (letters, m.group(2) if m else "")
    width = dict.fromkeys(ids, 1)
    for _ in range(LABEL_MAX + 1):
        labels = {t: parts[t][0][: width[t]] + parts[t][1] for t in ids}
        seen: dict[str, list[str]] = {}
        for t, lab in labels.items():
            seen.setdefault(lab, []).append(t)
        clashes = [ts for ts in seen.values() if len(ts) > 1]
        if not clashes:
            break
        for ts in clashes:
            for t in ts:
                width[t] += 1
    labels = {t: parts[t][0][: width[t]] + parts[t][1] for t in ids}
    out: dict[str, str] = {}
    used: set[str] = set()
    for n, t in enumerate(ids, start=1):
        lab = labels[t]
        if len(lab) > LABEL_MAX or list(labels.values()).count(lab) > 1 or lab in used:
            lab = f"t{n}"
            while lab in used or lab in labels.values():
                lab += "'"
        used.add(lab)
        out[t] = lab
    return out


def fan_out(
    cells: dict[str, Cell | None], radius: float, smallest: float = 10.0
) -> dict[str, tuple[float, float, float]]:
    """Tokens sharing a cell spread around its centre: id -> (dx, dy, drawn radius).

    A token alone keeps the centre at ``radius``; ``n`` tokens on one cell are drawn
    smaller (not under ``smallest``, so the label stays readable) on a circle about the
    centre (the first at the top, then clockwise) wide enough that no two discs touch,
    nor a selection ring another disc.
    """
    groups: dict[Cell, list[str]] = {}
    for tid, cell in cells.items():
        if cell is not None:
            groups.setdefault(cell, []).append(tid)
    out: dict[str, tuple[float, float, float]] = {}
    for tids in groups.values():
        n = len(tids)
        if n == 1:
            out[tids[0]] = (0.0, 0.0, float(radius))
            continue
        r = max(smallest, radius * max(0.45, min(0.75, 1.6 / n)))
        # Room for the selection ring (6 pixels outside a disc) between neighbours.
        ring = max(radius * 0.95, (r + 7) / math.sin(math.pi / n))
        for k, tid in enumerate(tids):
            a = 2 * math.pi * k / n - math.pi / 2
            out[tid] = (math.cos(a) * ring, math.sin(a) * ring, r)
    return out


def draw_token(
    view: pygame.Surface,
    font: Any,
    pos: tuple[float, float],
    radius: int,
    colour: Colour,
    label: str,
    *,
    selected: bool = False,
    heading: float | None = None,
) -> pygame.Rect:
    """One token: a disc in its side's colour with a dark edge, its label on top (a
    dark-outlined white, readable on any colour), the selection as a ring *outside* the
    disc, the facing as an arrow head beyond the ring. Returns the area drawn."""
    x, y = round(pos[0]), round(pos[1])
    pygame.draw.circle(view, (0, 0, 0), (x + 2, y + 2), radius)
    pygame.draw.circle(view, colour, (x, y), radius)
    pygame.draw.circle(view, (20, 20, 20), (x, y), radius, 2)
    outer = radius
    if selected:
        pygame.draw.circle(view, (255, 255, 255), (x, y), radius + 4, 3)
        pygame.draw.circle(view, (20, 20, 20), (x, y), radius + 6, 1)
        outer = radius + 6
    if heading is not None:
        a = math.radians(heading)
        tip = (x + math.sin(a) * (outer + 9), y - math.cos(a) * (outer + 9))
        base = outer + 1
        left = (x + math.sin(a - 0.35) * base, y - math.cos(a - 0.35) * base)
        right = (x + math.sin(a + 0.35) * base, y - math.cos(a + 0.35) * base)
        pygame.draw.polygon(view, (255, 255, 255), [tip, left, right])
        pygame.draw.polygon(view, (20, 20, 20), [tip, left, right], 1)
    text = outlined(font, label, (255, 255, 255), (0, 0, 0))
    view.blit(text, text.get_rect(center=(x, y)))
    return pygame.Rect(x - outer - 10, y - outer - 10, 2 * outer + 20, 2 * outer + 20)


def outlined(font: Any, text: str, colour: Colour, edge: Colour) -> pygame.Surface:
    """``text`` in ``colour`` with a one-pixel ``edge`` all round."""
    inner = font.render(text, True, colour)
    ring = font.render(text, True, edge)
    w, h = inner.get_size()
    out = pygame.Surface((w + 2, h + 2), pygame.SRCALPHA)
    for dx, dy in ((0, 1), (2, 1), (1, 0), (1, 2), (0, 0), (2, 2), (0, 2), (2, 0)):
        out.blit(ring, (dx, dy))
    out.blit(inner, (1, 1))
    return out


def tooltip(view: pygame.Surface, font: Any, text: str, pos: tuple[float, float]) -> pygame.Rect:
    """A label on a dark box next to ``pos``, kept inside ``view``."""
    surf = font.render(text, True, (255, 255, 255))
    box = surf.get_rect(topleft=(pos[0] + 14, pos[1] - surf.get_height() - 10)).inflate(8, 6)
    box.clamp_ip(view.get_rect())
    pygame.draw.rect(view, (10, 10, 12), box)
    pygame.draw.rect(view, (200, 200, 200), box, 1)
    view.blit(surf, surf.get_rect(center=box.center))
    return box


# --------------------------------------------------------------------------- labels


class LabelPlacer:
    """Labels on the map that never cover each other, nor a token's disc: each goes to the
    first place about its anchor (right below, right above, left below, left above, below,
    above, then the same further out) that is free and inside the view."""

    def __init__(self, bounds: pygame.Rect) -> None:
        self.bounds = bounds
        self.taken: list[pygame.Rect] = []
        #: The labels placed this frame: their text and where they went.
        self.placed: list[tuple[str, pygame.Rect]] = []

    def block(self, rect: pygame.Rect) -> None:
        """Keep labels off ``rect`` (a token's disc, a mark)."""
        self.taken.append(rect)

    def spot(self, size: tuple[int, int], anchor: tuple[float, float], gap: int = 6) -> pygame.Rect:
        w, h = size
        x, y = round(anchor[0]), round(anchor[1])
        first: pygame.Rect | None = None
        for ring in range(5):
            d = gap + ring * (h + 2)
            for left, top in (
                (x + d, y + d - 4),
                (x + d, y - h - d + 4),
                (x - w - d, y + d - 4),
                (x - w - d, y - h - d + 4),
                (x - w // 2, y + d + 4),
                (x - w // 2, y - h - d - 4),
            ):
                rect = pygame.Rect(left, top, w, h)
                if first is None:
                    first = rect
                if self.bounds.contains(rect) and rect.collidelist(self.taken) < 0:
                    return rect
        assert first is not None
        return first.clamp(self.bounds)

    def put(
        self, view: pygame.Surface, surf: pygame.Surface, anchor: tuple[float, float], text: str
    ) -> pygame.Rect:
        """Blit ``surf`` (the label ``text``) at the first free spot about ``anchor``."""
        rect = self.spot(surf.get_size(), anchor)
        view.blit(surf, rect)
        self.taken.append(rect)
        self.placed.append((text, rect))
        return rect


# --------------------------------------------------------------------------- panel


def wrap(font: Any, text: str, width: int) -> list[str]:
    """``text`` broken into lines no wider than ``width`` pixels in ``font``: at spaces,
    continuation lines indented like the first; a word wider than a line is cut."""
    indent = text[: len(text) - len(text.lstrip(" "))]
    words = text.split()
    if not words:
        return [text]
    lines: list[str] = []
    cur = indent
    for word in words:
        trial = (cur + " " + word) if cur.strip() else indent + word
        if font.size(trial)[0] <= width:
            cur = trial
            continue
        if cur.strip():
            lines.append(cur)
        cur = indent + "  " + word if lines else indent + word
        while font.size(cur)[0] > width and len(cur) > len(indent) + 3:
            cut = len(cur)
            while cut > len(indent) + 1 and font.size(cur[:cut])[0] > width:
                cut -= 1
            lines.append(cur[:cut])
            cur = indent + "  " + cur[cut:]
    if cur.strip():
        lines.append(cur)
    return lines


def legend_entries(bands: Sequence[str], contours: Iterable[int]) -> list[tuple[str, Any, str]]:
    """The overlay legend: (kind, colour, text) per band, contour and path mark."""
    out: list[tuple[str, Any, str]] = []
    for i, band in enumerate(bands):
        colour = BAND_COLOURS[min(i, len(BAND_COLOURS) - 1)]
        out.append(("band", colour, f"{band}: reach this turn"))
    for n in contours:
        out.append(("contour", CONTOUR_COLOURS[n], f"edge of {n}-turn reach"))
    out.append(("path", (255, 255, 255), "hover path (label: turns)"))
    out.append(("ring", (255, 255, 255), "end of a turn on the path"))
    out.append(("check", (255, 230, 120), "NN%: chance a check on the way succeeds"))
    return out


def _swatch(panel: pygame.Surface, font: Any, kind: str, colour: Any, sw: pygame.Rect) -> None:
    """A legend entry's swatch in ``sw``, drawn as the overlay it names is."""
    if kind == "band":
        tint = pygame.Surface(sw.size, pygame.SRCALPHA)
        tint.fill((*colour, 110))
        pygame.draw.rect(panel, (90, 140, 70), sw)  # a grass-like ground to tint
        panel.blit(tint, sw)
        pygame.draw.rect(panel, colour, sw, 2)
    elif kind == "contour":
        pygame.draw.line(panel, colour, (sw.left, sw.centery), (sw.right, sw.centery), 2)
    elif kind == "path":
        pygame.draw.line(panel, colour, (sw.left, sw.centery), (sw.right, sw.centery), 3)
        pygame.draw.line(panel, (20, 20, 20), (sw.left, sw.centery), (sw.right, sw.centery), 1)
    elif kind == "threat":  # hatched and outlined, as engine.viewer.threat draws it
        pygame.draw.rect(panel, (90, 140, 70), sw)
        clip = panel.get_clip()
        panel.set_clip(sw)
        for hx in range(sw.left - sw.height, sw.right, 5):
            pygame.draw.line(panel, colour, (hx, sw.bottom), (hx + sw.height, sw.top), 2)
        panel.set_clip(clip)
        pygame.draw.rect(panel, colour, sw, 2)
    elif kind == "blocked":  # shaded and hatched, as engine.viewer.collayer draws it
        pygame.draw.rect(panel, (60, 95, 50), sw)
        clip = panel.get_clip()
        panel.set_clip(sw)
        for hx in range(sw.left, sw.right + sw.height, 5):
            pygame.draw.line(panel, colour, (hx - sw.height, sw.top), (hx, sw.bottom), 2)
        panel.set_clip(clip)
    elif kind == "layer":  # a map layer drawn as its tiles are: an empty frame
        pygame.draw.rect(panel, colour, sw, 1)
    elif kind == "ring":
        pygame.draw.circle(panel, colour, sw.center, 6, 2)
    else:
        label = font.render("%", True, colour)
        panel.blit(label, label.get_rect(center=sw.center))


def draw_legend(
    panel: pygame.Surface,
    font: Any,
    x: int,
    y: int,
    entries: list[tuple[str, Any, str]],
    width: int,
) -> int:
    """Draw legend ``entries`` at (x, y) on the panel, text wrapped to ``width`` pixels
    from ``x``; returns the height used."""
    top = y
    for kind, colour, text in entries:
        _swatch(panel, font, kind, colour, pygame.Rect(x, y + 1, 22, 12))
        for k, part in enumerate(wrap(font, text, width - 30)):
            surf = font.render(part, True, (200, 204, 212))
            panel.blit(surf, (x + 30, y))
            y += max(15 if k == 0 else 0, surf.get_height() + 2)
    return y - top
