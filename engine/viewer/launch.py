"""The viewer's doors for the command line: `tacgrid view` (a window on a map, a scenario
or a saved session) and `tacgrid render` of a scenario (its map and tokens, no window)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pygame

from engine.tiled import is_map_source
from engine.viewer.app import Viewer, open_source
from engine.viewer.render import (
    check_output,
    check_scale,
    picture_notes,
    render_banded,
    render_source,
    save_png,
)
from engine.viewer.tokens import draw_scenario_tokens


def view(
    source: str,
    *,
    system: str | None = None,
    sets: dict[str, Any] | None = None,
    token: str | None = None,
    frames: int | None = None,
    screenshot: str | None = None,
    safe_below: float | None = None,
    note: Callable[[str], None] | None = None,
) -> int:
    """`tacgrid view`: open the window (``frames``: draw that many, save, exit) on a
    scenario, a bare map, or a saved session (:mod:`engine.viewer.session`). ``note`` is
    told once each of what the map's drawing leaves out (a picture refused or undecodable:
    :func:`engine.viewer.render.picture_notes`)."""
    viewer = open_table(source, system=system, sets=sets, token=token, safe_below=safe_below)
    if note is not None:
        for text in picture_notes(viewer.model, viewer.map_surface.tiled):
            note(text)
    if frames is not None:
        # An automated run (--frames: tests, scripts) draws and exits: no autosave file
        # left behind in the working folder, no recovery offered.
        viewer.table.autosave_to = None
        viewer.table.recovery = None
    return viewer.run(frames, screenshot)


def open_table(
    source: str,
    *,
    system: str | None = None,
    sets: dict[str, Any] | None = None,
    token: str | None = None,
    safe_below: float | None = None,
    size: tuple[int, int] = (1280, 800),
) -> Viewer:
    """A viewer on ``source``: a session file resumes where it was left (undo history
    too); a newer autosave beside it (or beside the default save) is offered."""
    from engine.viewer import session as sessions

    if sessions.is_session_path(source):
        from engine.errors import ArgumentError

        if token or system or sets:
            raise ArgumentError(
                f"{source}: a session keeps its own system, settings and tokens; give "
                "--system/--set/--token with a map or scenario, or edit tokens in the window (E)"
            )
        data, scenario = sessions.load_session(source)
        viewer = Viewer(scenario, seed=int(data["seed"]), size=size)
        sessions.checked_apply(viewer, data, scenario, source)
        viewer.table.session_path = source
        saved = source
    else:
        viewer = Viewer(open_source(source, system, sets, token, window=True), size=size)
        saved = sessions.default_session_path(viewer.scenario)
    table = viewer.table
    table.autosave_to = sessions.autosave_path(saved)
    table.recovery = sessions.recovery_for(saved)
    if safe_below is not None:
        table.safe_below = safe_below
    table.mark_saved()
    return viewer


def render_scenario(
    source: str,
    out: str,
    *,
    system: str | None = None,
    scale: float = 1.0,
    walls: bool = True,
    note: Callable[[str], None] | None = None,
) -> tuple[int, int]:
    """`tacgrid render`: the map (and a scenario's tokens) to a PNG, no window.

    The image is drawn at ``scale`` directly (tokens too), and always written as a PNG,
    whatever ``out``'s name ends in; an image over the renderer's budget is refused.
    ``note`` is told once each of what the drawing left out (a picture refused or
    undecodable: :func:`engine.viewer.render.picture_notes`).
    """
    if is_map_source(source):  # .tmx, .tmj/.json, WORLD.world#NAME
        from engine.viewer.render import render_to_file

        return render_to_file(source, out, scale=scale, walls=walls, note=note)
    scale = check_scale(scale, "--scale")
    scenario = open_source(source, system)
    pygame.font.init()
    model = scenario.model
    g = model.grid
    check_output(g, scale)
    drawn = render_source(model, scenario.tiled)
    surf = render_banded(model, drawn, scale=scale, walls=walls)
    draw_scenario_tokens(surf, scenario, scale)
    save_png(surf, out)
    if note is not None:
        for text in picture_notes(model, drawn):
            note(text)
    return surf.get_size()
