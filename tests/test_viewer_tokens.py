"""The window and `tacgrid render` colour a token alike (engine.viewer.tokens)."""

from __future__ import annotations

from dataclasses import replace

import pygame
from conftest import ROOT

from engine.viewer.app import open_source
from engine.viewer.render import render_banded, render_source
from engine.viewer.tokens import (
    OTHER_COLOUR,
    SIDE_COLOURS,
    draw_scenario_tokens,
    token_colour,
)

CHASE = str(ROOT / "scenarios" / "chase.yaml")


def test_a_side_without_a_colour_takes_its_policys_then_the_other_colour() -> None:
    scenario = open_source(CHASE)
    spec = scenario.tokens[0]
    assert token_colour(replace(spec, side="quarry")) == SIDE_COLOURS["quarry"]
    hunters = replace(spec, side="hunters", policy="pursuer")
    assert token_colour(hunters) == SIDE_COLOURS["pursuer"]
    assert token_colour(replace(spec, side="hunters", policy="idle")) == OTHER_COLOUR


def test_a_render_draws_each_token_in_the_windows_colour() -> None:
    pygame.font.init()
    scenario = open_source(CHASE)
    scenario.tokens = tuple(replace(t, side="hunters") for t in scenario.tokens)
    surf = render_banded(scenario.model, render_source(scenario.model), scale=1.0, walls=True)
    draw_scenario_tokens(surf, scenario, 1.0)
    g = scenario.model.grid
    for spec in scenario.tokens:
        if sum(1 for t in scenario.tokens if t.cell == spec.cell) > 1:
            continue  # a stack is fanned out about its cell
        x, y = g.cell_center(spec.cell)
        # Off the label in the disc's middle: a point on its left, inside the edge.
        r = max(4, int(min(g.tile_width, g.tile_height) * 0.36))
        c = surf.get_at((round(x - r + 3), round(y)))
        assert (c.r, c.g, c.b) == token_colour(spec), spec.id
