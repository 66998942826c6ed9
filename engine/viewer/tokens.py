"""Tokens on the map: their colours, and the token layer of the window and of a render.

The window draws each token as :func:`engine.viewer.draw.draw_token` (a shadow, the
selection ring, the facing), labelled, fanned out where several share a cell, with its
footprint outlined when it is large; ``tacgrid render`` draws plain discs at the image's
scale. Both take a token's colour from :func:`token_colour`, its label from
:func:`engine.viewer.draw.short_labels` and its place in a stack from
:func:`engine.viewer.draw.fan_out`.
"""

from __future__ import annotations

from dataclasses import dataclass

import pygame

from engine.footprint import footprint
from engine.grid import Cell
from engine.scenario import Scenario, TokenSpec
from engine.viewer import draw
from engine.viewer.window import Window

SIDE_COLOURS = {
    "pursuer": (214, 64, 58),
    "quarry": (60, 130, 230),
    "gm": (236, 196, 64),
}
#: A side with no colour of its own (and a policy with none either).
OTHER_COLOUR = (90, 200, 120)


def token_colour(spec: TokenSpec) -> tuple[int, int, int]:
    """A token's colour: its side's, else its policy's (a pursuer or quarry policy on a side
    of another name), else :data:`OTHER_COLOUR`."""
    return SIDE_COLOURS.get(spec.side, SIDE_COLOURS.get(spec.policy, OTHER_COLOUR))


@dataclass
class TokenLayer:
    """What a frame's token layer showed: each token's short label, its disc on screen
    (centre and radius), and the hovered cell's tooltip."""

    labels: dict[str, str]
    screen: dict[str, tuple[float, float, int]]
    tooltip: str


def draw_tokens(v: Window, view: pygame.Surface) -> TokenLayer:
    """Tokens with short unique labels (full names on hover), stacked ones fanned out
    about their cell, the selection ring outside the disc, facing as an arrow head."""
    g = v.model.grid
    radius = max(11, int(min(g.tile_width, g.tile_height) * 0.38 * v.camera.zoom))
    order = list(v.sim.order)
    labels = draw.short_labels(order)
    cells = {t: v.sim.tokens[t].state.cell for t in order if not _animating(v, t)}
    fan = draw.fan_out(cells, radius)
    screen: dict[str, tuple[float, float, int]] = {}
    # The selected token last, so that nothing covers its ring.
    for tid in sorted(order, key=lambda t: t == v.selected):
        tok = v.sim.tokens[tid]
        spec = v.sim.specs[tid]
        if tok.state.cell is None:
            continue
        x, y = _token_pos(v, tid)
        dx, dy, size = fan.get(tid, (0.0, 0.0, radius))
        colour = token_colour(spec)
        if spec.size > 1:
            # A large token: its footprint outlined, the disc at the footprint's centre
            # and as wide as it (size x the one-cell disc).
            cx, cy, outlines = _footprint_screen(v, tok.state.cell, spec.size)
            x, y = x + cx, y + cy
            dx, dy, size = 0.0, 0.0, radius * spec.size * 0.9
            for corners in outlines:
                pygame.draw.polygon(view, colour, corners, 2)
        x, y = x + dx, y + dy
        r = round(size)
        flight = tok.state.flight
        heading = v.facing.get(tid)
        if flight is not None and not flight.landed:
            heading = flight.heading  # a momentum flier's heading (a replay's too)
        font = v.font if r >= 14 else v.small
        draw.draw_token(
            view,
            font,
            (x, y),
            r,
            colour,
            labels[tid],
            selected=tid == v.selected,
            heading=heading,
        )
        screen[tid] = (round(x), round(y), r)
        below = y + r + (8 if tid == v.selected else 2)
        if flight is not None and not flight.landed:
            text = f"v{flight.speed}" + (f" {flight.altitude}m" if flight.altitude else "")
            fl = v.small.render(text, True, (120, 220, 255), (0, 0, 0))
            view.blit(fl, fl.get_rect(midtop=(x, below)))
            below += fl.get_height()
        if tok.state.conditions:
            cond = v.small.render(
                ",".join(sorted(tok.state.conditions)), True, (255, 220, 120), (0, 0, 0)
            )
            view.blit(cond, cond.get_rect(midtop=(x, below)))
    tooltip = ""
    if v.hover is not None:
        names = [
            f"{tid} ({v.sim.specs[tid].side})"
            for tid in order
            if v.sim.tokens[tid].state.cell == v.hover
        ]
        tooltip = ", ".join(names)
        if names:
            x, y = v.cell_screen(v.hover)
            draw.tooltip(view, v.font, tooltip, (x, y - radius))
    return TokenLayer(labels, screen, tooltip)


def token_discs(v: Window) -> list[pygame.Rect]:
    """Where this frame's token discs (with a selection ring's room) lie on screen, before
    they are drawn: labels keep off them."""
    g = v.model.grid
    radius = max(11, int(min(g.tile_width, g.tile_height) * 0.38 * v.camera.zoom))
    out = []
    for tid in v.sim.order:
        cell = v.sim.tokens[tid].state.cell
        if cell is None:
            continue
        x, y = _token_pos(v, tid)
        r = radius * max(1.0, v.sim.specs[tid].size * 0.9) + 7
        if v.sim.specs[tid].size > 1:
            dx, dy, _ = _footprint_screen(v, cell, v.sim.specs[tid].size)
            x, y = x + dx, y + dy
        out.append(pygame.Rect(round(x - r), round(y - r), round(2 * r), round(2 * r)))
    return out


def _token_pos(v: Window, tid: str) -> tuple[float, float]:
    if v.anim and v.anim[0] == tid:
        _, path, t = v.anim
        f = t * (len(path) - 1)
        i = min(int(f), len(path) - 2)
        a, b = v.cell_screen(path[i]), v.cell_screen(path[i + 1])
        u = f - i
        return a[0] + (b[0] - a[0]) * u, a[1] + (b[1] - a[1]) * u
    cell = v.sim.tokens[tid].state.cell
    assert cell is not None
    return v.cell_screen(cell)


def _footprint_screen(
    v: Window, anchor: Cell, size: int
) -> tuple[float, float, list[list[tuple[float, float]]]]:
    """A large token's footprint: the offset from its anchor's centre to the footprint's
    centre (screen pixels), and each on-map cell's outline on screen."""
    g = v.model.grid
    cells = [c for c in footprint(g, anchor, size) if g.in_bounds(c)]
    ax, ay = v.cell_screen(anchor)
    centres = [v.cell_screen(c) for c in cells]
    cx = sum(p[0] for p in centres) / len(centres) - ax
    cy = sum(p[1] for p in centres) / len(centres) - ay
    outlines = [[v.camera.to_screen(*p) for p in g.cell_corners(c)] for c in cells]
    return cx, cy, outlines


def _animating(v: Window, tid: str) -> bool:
    return v.anim is not None and v.anim[0] == tid


def draw_scenario_tokens(surf: pygame.Surface, scenario: Scenario, scale: float) -> None:
    """A scenario's tokens on its map drawn at ``scale`` (``tacgrid render``): plain discs
    with a thin edge, labelled where they are wide enough."""
    g = scenario.model.grid
    radius = max(4, int(min(g.tile_width, g.tile_height) * 0.36))
    if scale != 1.0:
        radius = max(2, round(radius * scale))
    font = pygame.font.Font(None, max(12, radius))
    labels = draw.short_labels([spec.id for spec in scenario.tokens])
    fan = draw.fan_out({spec.id: spec.cell for spec in scenario.tokens}, radius, radius * 0.6)
    for spec in scenario.tokens:
        x, y = g.cell_center(spec.cell)
        dx, dy, size = fan[spec.id]
        x, y = x * scale + dx, y * scale + dy
        r = max(2, round(size))
        colour = token_colour(spec)
        pygame.draw.circle(surf, colour, (x, y), r)
        pygame.draw.circle(surf, (20, 20, 20), (x, y), r, 1)
        if r >= 6:
            label = draw.outlined(font, labels[spec.id], (255, 255, 255), (0, 0, 0))
            surf.blit(label, label.get_rect(center=(x, y)))
