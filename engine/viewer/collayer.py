"""The map's collision layers in the viewer (I).

A game map marks where nothing passes with a layer of its own (The Mana World's
``Collision`` layer, painted in opaque red tiles; an object layer of shapes): the reader
takes such a layer as rules (:mod:`engine.tiled.collision`, conventions ``layer`` and
``objects``), and drawn as Tiled draws it, it hides the map a GM wants to see. So by
default the viewer leaves those layers out and shows the cells they blocked with a light
hatch instead, with its entry in the panel's legend; ``I`` switches to the layers as
drawn (a collision tile layer the file hides is drawn too: the key is how a GM looks at
it) and back. ``tacgrid render`` draws every layer as Tiled does, this view aside.

A cell is hatched while the model holds it blocked by a collision layer (terrain
``collision`` with ``move = blocked``): ``--set terrain.collision.move=walk`` opens them
and the hatch goes; the brush painting over one takes it away.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pygame

from engine.cells import to_numpy
from engine.mapmodel import MapModel
from engine.tiled.collision import COLLISION_TERRAIN

#: The hatch's colour (light: it reads on the dark and the green maps alike, and is
#: neither the layer's red nor the threat view's).
BLOCKED = (236, 232, 255)
#: Under the hatch, the cells are darkened this much (alpha of black).
SHADE = 70
#: Hatch lines: their spacing and width in screen pixels (backslashes: the threat view's
#: run the other way).
HATCH_GAP = 8
HATCH_W = 2
#: The conventions whose layer is a collision layer.
_LAYER_CONVENTIONS = ("layer", "objects")


def collision_layers(model: MapModel) -> frozenset[str]:
    """The names of the layers the reader read as collision (tile or object layers)."""
    return frozenset(c.source for c in model.collision if c.convention in _LAYER_CONVENTIONS)


def blocked_mask(model: MapModel) -> np.ndarray:
    """(height, width) bools: the cells a collision layer blocks in the model now."""
    lut = np.array(
        [t.name == COLLISION_TERRAIN and t.move == "blocked" for t in model.terrains], dtype=bool
    )
    return lut[to_numpy(model.terrain_ids)]


class CollisionView:
    """Which way the collision layers show (``drawn``: as Tiled draws them), and the hatch
    over the blocked cells otherwise, kept per view while neither the view nor the cells
    change."""

    def __init__(self) -> None:
        self.drawn = False
        self._key: Any = None
        self._mask: np.ndarray | None = None
        self._layer: pygame.Surface | None = None
        self._hatch: pygame.Surface | None = None

    def names(self, model: MapModel) -> frozenset[str]:
        return collision_layers(model)

    def apply(self, chunks: Any) -> None:
        """Tell the map's chunks which layers to leave out or draw."""
        names = self.names(chunks.model)
        if self.drawn:
            chunks.show_layers(frozenset(), names)
        else:
            chunks.show_layers(names, frozenset())

    def toggle(self, v: Any) -> None:
        names = self.names(v.model)
        if not names:
            v.message = "this map has no collision layer (I)"
            return
        self.drawn = not self.drawn
        self.apply(v.map_surface)
        listed = ", ".join(sorted(names))
        v.message = (
            f"collision layer {listed} drawn as in Tiled (I: blocked cells hatched)"
            if self.drawn
            else f"collision layer {listed} hidden, its blocked cells hatched (I: as drawn)"
        )

    def legend(self, v: Any) -> list[tuple[str, Any, str]]:
        names = self.names(v.model)
        if not names:
            return []
        listed = ", ".join(sorted(names))
        if self.drawn:
            return [("layer", BLOCKED, f"layer {listed} drawn as in Tiled (I: hatch instead)")]
        n = int(np.count_nonzero(blocked_mask(v.model)))
        return [("blocked", BLOCKED, f"blocked by layer {listed}: {n} cells (I: layer as drawn)")]

    def draw(self, v: Any, view: pygame.Surface) -> None:
        """The blocked cells hatched on ``view`` (screen pixels), unless the layers show."""
        model = v.model
        if self.drawn or not self.names(model):
            return
        mask = blocked_mask(model)
        cam = v.camera
        key = (view.get_size(), cam.x, cam.y, cam.zoom, model.grid)
        if key != self._key or self._mask is None or not np.array_equal(mask, self._mask):
            self._layer = self._build(model, mask, cam, view.get_size())
            self._key, self._mask = key, mask
        if self._layer is not None:
            view.blit(self._layer, (0, 0))

    def _build(
        self, model: MapModel, mask: np.ndarray, cam: Any, size: tuple[int, int]
    ) -> pygame.Surface | None:
        if not mask.any():
            return None
        grid = model.grid
        w, h = size
        cells = pygame.Surface(size, pygame.SRCALPHA)
        cells.fill((0, 0, 0, 0))
        x0, y0 = cam.to_world(0, 0)
        x1, y1 = cam.to_world(w, h)
        if grid.orientation == "orthogonal":
            # One pixel per cell, scaled up to the cells in view: a whole big map in view
            # is one scale, not a polygon per cell.
            tw, th = grid.tile_width, grid.tile_height
            c0, r0 = max(0, int(x0 // tw)), max(0, int(y0 // th))
            c1 = min(grid.width, int(x1 // tw) + 1)
            r1 = min(grid.height, int(y1 // th) + 1)
            if c0 >= c1 or r0 >= r1:
                return None
            part = mask[r0:r1, c0:c1]
            small = pygame.Surface((c1 - c0, r1 - r0), pygame.SRCALPHA)
            small.fill((255, 255, 255, 255))
            alpha = pygame.surfarray.pixels_alpha(small)
            alpha[:] = part.T * 255
            del alpha  # release the surface lock
            sx, sy = cam.to_screen(c0 * tw, r0 * th)
            ex, ey = cam.to_screen(c1 * tw, r1 * th)
            left, top = round(sx), round(sy)
            size_up = (max(1, round(ex) - left), max(1, round(ey) - top))
            cells.blit(pygame.transform.scale(small, size_up), (left, top))
        else:
            rows, cols = np.nonzero(mask)
            for c, r in zip(cols.tolist(), rows.tolist(), strict=True):
                cx, cy = grid.cell_center((c, r))
                if not (x0 - 2 * grid.tile_width <= cx <= x1 + 2 * grid.tile_width):
                    continue
                if not (y0 - 2 * grid.tile_height <= cy <= y1 + 2 * grid.tile_height):
                    continue
                pts = [cam.to_screen(*p) for p in grid.cell_corners((c, r))]
                pygame.draw.polygon(cells, (255, 255, 255, 255), pts)
        # The hatch is fixed to the map (it moves with a pan), drawn over a light shade.
        phase_x = round(cam.x * cam.zoom) % HATCH_GAP
        phase_y = round(cam.y * cam.zoom) % HATCH_GAP
        pattern = self._hatching((w + HATCH_GAP, h + HATCH_GAP))
        out = cells.copy()
        out.blit(pattern, (0, 0), (phase_x, phase_y, w, h), special_flags=pygame.BLEND_RGBA_MULT)
        return out

    def _hatching(self, size: tuple[int, int]) -> pygame.Surface:
        if self._hatch is None or self._hatch.get_size() != size:
            w, h = size
            hatch = pygame.Surface(size, pygame.SRCALPHA)
            hatch.fill((0, 0, 0, SHADE))
            for x in range(0, w + h, HATCH_GAP):
                pygame.draw.line(hatch, (*BLOCKED, 200), (x - h, 0), (x, h), HATCH_W)
            self._hatch = hatch
        return self._hatch
