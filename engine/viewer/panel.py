"""The window's side panel (the scenario, the selected token, its flight, the legend, the
hovered cell and path, the GM's lines, the dice log) and the help overlay's box of keys."""

from __future__ import annotations

from typing import Any

import pygame

from engine.errors import TacgridError
from engine.viewer import draw
from engine.viewer.acts import acts_text
from engine.viewer.draw import DIM, TEXT
from engine.viewer.table import HELP as GM_HELP
from engine.viewer.window import Window

PANEL_W = 330
PANEL_BG = (34, 37, 43)
HELP = [
    ("click", "select a token / move it there"),
    ("hover", "path preview: cost per step, turns, checks"),
    ("right/middle drag", "pan"),
    ("wheel, + -", "zoom about the cursor"),
    ("F", "fit the map to the window"),
    ("Tab", "next token"),
    ("Enter", "end the round"),
    ("A", "let the scenario's policies play a round"),
    ("G", "flight mode for a flier (W/S speed, [ ] turn)"),
    ("T / L, Space", "take off / land, fly the turn"),
    ("O", "show / hide the map's objects (exits, regions, spawns)"),
    ("I", "collision layer: blocked cells hatched / as Tiled draws it"),
    ("Ctrl+Z / Ctrl+Y", "undo / redo"),
    *GM_HELP,
    ("P or F12", "save a screenshot"),
    ("H or F1", "this help"),
    ("Q or Esc", "quit"),
]


#: The tallest the panel's content is drawn (a window shows part of it, scrolled).
PANEL_MAX_H = 4000
#: Pixels one wheel step scrolls the panel.
SCROLL_STEP = 48


def scroll_panel(v: Any, steps: int) -> None:
    """Scroll the viewer's panel by wheel ``steps`` (up positive, as pygame's wheel), no
    further than its last drawn content goes."""
    h = v.screen.get_height()
    top = panel_top(v.panel_scroll, v.panel_content, h)
    v.panel_scroll = max(0, min(top - steps * SCROLL_STEP, v.panel_content - h))


def panel_top(scroll: int, content: int, h: int) -> int:
    """The panel's first shown pixel: the scroll, within the content drawn."""
    return max(0, min(scroll, content - h))


def draw_panel(v: Window) -> tuple[pygame.Surface, list[tuple[str, pygame.Rect]], int]:
    """The panel for the window's height, each line of text on it with its place (panel
    pixels: lines scrolled out of view lie above or below it), and the content's height. What does not fit
    the window's height scrolls with the wheel over the panel; a bar on its edge says
    where the view is."""
    h = v.screen.get_height()
    panel = pygame.Surface((PANEL_W, PANEL_MAX_H))
    panel.fill(PANEL_BG)
    y = 10
    placed: list[tuple[str, pygame.Rect]] = []
    full = PANEL_MAX_H

    def line(text: str, colour: tuple[int, int, int] = TEXT, font: Any = None) -> None:
        """One entry, wrapped to the panel's width (continuations indented)."""
        nonlocal y
        f = font or v.font
        for part in draw.wrap(f, text, PANEL_W - 20):
            if y > full - 16:
                return
            surf = f.render(part, True, colour)
            panel.blit(surf, (10, y))
            placed.append((part, pygame.Rect(10, y, *surf.get_size())))
            y += surf.get_height() + 3

    line(v.scenario.name, font=v.big)
    line(
        f"{v.sim.system.name} - round {v.sim.turn}"
        + (f" - {v.sim.outcome}" if v.sim.outcome else ""),
        DIM,
    )
    if v.message:
        line(v.message, (255, 210, 120))
    y += 6
    if v.selected:
        tok = v.sim.tokens[v.selected]
        spec = v.sim.specs[v.selected]
        role = spec.side if spec.side == spec.policy else f"{spec.side}, {spec.policy}"
        line(f"{v.selected} ({role})")
        line(
            f"  at {tok.state.cell[0]},{tok.state.cell[1]}  pace {_pace(v, tok, spec)}"
            if tok.state.cell
            else "",
            DIM,
        )
        if spec.acts:  # actions besides moving, every turn (C)
            line(f"  acts each turn: {acts_text(spec.acts)}", (150, 230, 170))
        if tok.state.conditions:
            line("  " + ", ".join(sorted(tok.state.conditions)), (255, 220, 120))
        if tok.state.toward is not None:  # a crossing of more than a turn under way
            to = tok.state.toward
            doing = _DOING.get(tok.state.mode, "crossing")
            line(
                f"  {doing} to {to[0]},{to[1]}: {float(tok.state.progress):.0%} done",
                (255, 220, 120),
            )
        if v.selected in v.moved:
            line("  moved this round", DIM)
        tf = tok.state.flight
        if tf is not None and v.selected not in v.flying:
            line(
                ("  landed" if tf.landed else "  flying")
                + f": heading {tf.heading}, speed {tf.speed}"
                + (f", altitude {tf.altitude} m" if tf.altitude else ""),
                (120, 220, 255),
            )
        fs = v.flying.get(v.selected)
        if fs is not None:
            line(
                f"  flying: heading {fs.heading}, speed {fs.speed}"
                + (f", altitude {fs.altitude} m" if fs.altitude else ""),
                (120, 220, 255),
            )
            rules = v.flight_rules(v.selected)
            acts = ", ".join(rules.actions(v.pending)) or "none"
            line(f"  next: {acts}", (120, 220, 255), v.small)
            got = v.flight_preview()
            if got is not None:
                nxt, rec = got
                line(
                    f"  -> speed {rec.speed}, {len(rec.cells)} cells, heading {nxt.heading}"
                    + (", landed" if nxt.landed else ""),
                    (120, 220, 255),
                    v.small,
                )
                for ev in rec.events[1:4]:
                    line(f"  {ev.get('type')}", (255, 160, 120), v.small)
            elif v.preview_error:
                line(f"  {v.preview_error[:60]}", (255, 160, 120), v.small)
            sug = v.flight_suggestion()
            if sug is not None:
                first = ", ".join(sug.records[0].actions) if sug.records else ""
                line(
                    f"  planner: {sug.turns} turns, {sug.actions} actions; now: {first}",
                    (230, 120, 230),
                    v.small,
                )
    legend = v.legend()
    if legend:
        y += 6
        line("legend", font=v.font)
        y += draw.draw_legend(panel, v.small, 12, y, legend, PANEL_W - 22) + 2
    if v.hover is not None:
        t = v.model.terrain_at(v.hover)
        y += 6
        line(
            f"cell {v.hover[0]},{v.hover[1]}: {t.name} ({t.move}"
            + (f", {t.difficulty}" if t.difficulty != "none" else "")
            + ")"
        )
        rep = v.hover_path()
        if rep:
            # Where a safest path differs, the steps below are the quickest's: said so.
            which = "quickest: " if v.table.risk(compute=False) is not None else ""
            line(
                f"  {which}{float(rep.turns):.3f} turns, {rep.distance} {rep.unit}, "
                f"p(no failure) {100 * float(rep.p_no_failure):.1f}%"
            )
            for step in rep.steps[1:12]:
                check = (
                    f"  {step['check']['what']} {100 * step['check']['p_success']:.0f}%"
                    if step["check"]
                    else ""
                )
                line(
                    f"  t{step['turn']} {step['cell'][0]},{step['cell'][1]} {step['mode']} "
                    f"+{step['time']:.3f}{check}",
                    DIM,
                    v.small,
                )
    y += 6
    for text, colour in v.table.panel_lines():
        line(text, colour, v.small)
    y += 8
    line("dice log", font=v.big)
    rolls = [e for e in v.dice_events() if e["type"] in ("roll", "check")][-14:]
    for e in reversed(rolls):
        if e["type"] == "roll":
            faces = ",".join(str(f) for f in e.get("faces", []))
            line(
                f"{e['token']}: {e['expression']} [{faces}] = {e['total']} {e.get('decided', '')}",
                DIM,
                v.small,
            )
        else:
            line(f"{e['token']}: {e['what']} -> {e['degree']}", TEXT, v.small)
    line("H: help", DIM, v.small)
    out, shown = _window(v, panel, placed, y + 6, h)
    return out, shown, y + 6


def _window(
    v: Window,
    panel: pygame.Surface,
    placed: list[tuple[str, pygame.Rect]],
    content: int,
    h: int,
) -> tuple[pygame.Surface, list[tuple[str, pygame.Rect]]]:
    """The part of the drawn panel the window's height shows, at the scroll clamped to
    the content, with a scroll bar and a hint where more lies below."""
    top = panel_top(v.panel_scroll, content, h)
    out = pygame.Surface((PANEL_W, h))
    out.fill(PANEL_BG)
    out.blit(panel, (0, -top))
    if content > h:
        bar_h = max(24, h * h // content)
        bar_y = (h - bar_h) * top // max(1, content - h)
        pygame.draw.rect(out, (70, 74, 84), (PANEL_W - 6, 0, 6, h))
        pygame.draw.rect(out, (150, 156, 166), (PANEL_W - 6, bar_y, 6, bar_h))
        if top < content - h:
            hint = v.small.render("more below: wheel over the panel", True, DIM)
            strip = pygame.Rect(0, h - hint.get_height() - 6, PANEL_W - 6, hint.get_height() + 6)
            out.fill(PANEL_BG, strip)
            pygame.draw.line(out, (70, 74, 84), strip.topleft, strip.topright)
            out.blit(hint, (10, strip.top + 3))
    return out, [(text, rect.move(0, -top)) for text, rect in placed]


def draw_help(v: Window, screen: pygame.Surface) -> pygame.Rect:
    """The keys, in a box sized to its text (within the window; long lines wrap)."""
    sw, sh = screen.get_size()
    key_w = max(v.font.size(k)[0] for k, _ in HELP) + 24
    text_w = min(max(v.font.size(t)[0] for _, t in HELP), max(200, sw - key_w - 60))
    rows = [(k, draw.wrap(v.font, t, text_w)) for k, t in HELP]
    w = 16 + key_w + text_w + 16
    h = 32 + 22 * sum(len(lines) for _, lines in rows)
    box = pygame.Surface((w, h), pygame.SRCALPHA)
    box.fill((0, 0, 0, 210))
    y = 16
    for k, lines in rows:
        box.blit(v.font.render(k, True, (255, 220, 120)), (16, y))
        for part in lines:
            box.blit(v.font.render(part, True, TEXT), (16 + key_w, y))
            y += 22
    rect = pygame.Rect((sw - w) // 2, max(0, (sh - h) // 2), w, h)
    screen.blit(box, rect)
    return rect


#: A crossing of more than a turn, by its mode, in the panel's words.
_DOING = {"climb": "climbing", "ladder": "climbing", "swim": "swimming", "crawl": "crawling"}


def _pace(v: Window, tok: Any, spec: Any) -> str:
    """The pace the token moves at (:meth:`Simulation.pace_of`: its turns, reach and hover
    path all use it; V steps it)."""
    try:
        return f"{v.sim.pace_of(spec.id)} (V)"
    except TacgridError:  # acts a session file carries that the system refuses
        return str(spec.pace or v.sim.system.default_pace)
