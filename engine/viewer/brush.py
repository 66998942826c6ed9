"""The terrain brush: paint terrain of the palette onto cells with the mouse.

``B`` turns the brush on and off. While it is on, a left drag paints the chosen terrain onto
every cell it passes (one stroke, drawn as it goes, applied when the button is let go);
``1``-``9`` or ``[``/``]`` choose the terrain, ``Ctrl+Z``/``Ctrl+Y`` undo and redo strokes,
``Esc`` or ``B`` put the brush away. Paths, reach and moves see the painted terrain at once;
painted cells stay tinted in their terrain's colour (the map's tiles do not show it). The
strokes are saved in the session file (``paint``), and ``tacgrid export`` writes the painted
map as a Tiled map with its rules. The palette and the strokes themselves are headless
(:mod:`engine.tiled.paint`).
"""

from __future__ import annotations

from typing import Any

import pygame

from engine.grid import Cell
from engine.mapmodel import Terrain
from engine.tiled.export import terrain_colour
from engine.tiled.paint import Stroke, paint, palette, stroke_json, unpaint

#: The palette strip's text and frame colours.
_LABEL = (235, 235, 235)
_CHOSEN = (255, 220, 120)


class Brush:
    """The brush's state: on or off, the chosen terrain, the stroke being dragged and the
    strokes done (undo) and undone (redo)."""

    def __init__(self, viewer: Any) -> None:
        self.v = viewer
        self.on = False
        self.choice = 0
        self.dragging: list[Cell] | None = None
        self.done: list[Stroke] = []
        self.undone: list[Stroke] = []
        self.version = 0

    # ----------------------------------------------------------------- state

    @property
    def model(self) -> Any:
        return self.v.scenario.model

    def palette(self) -> list[Terrain]:
        return palette(self.model, self.v.scenario.system)

    def terrain(self) -> Terrain:
        pal = self.palette()
        return pal[self.choice % len(pal)]

    def toggle(self) -> None:
        self.on = not self.on
        self.dragging = None
        self.version += 1
        if self.on:
            self.v.message = (
                f"brush: {self.terrain().name} (1-9 or [ ] choose, drag to paint, "
                "Ctrl+Z undo, B puts it away)"
            )
        else:
            self.v.message = f"brush away ({len(self.done)} strokes painted)"

    def choose(self, index: int) -> None:
        pal = self.palette()
        self.choice = index % len(pal)
        self.version += 1
        self.v.message = f"brush: {self.terrain().name} ({self.terrain().move})"

    def stroke(self, cells: list[Cell]) -> Stroke | None:
        """Paint ``cells`` with the chosen terrain as one undoable stroke."""
        if not cells:
            return None
        done = paint(self.model, self.terrain(), cells)
        self.done.append(done)
        self.undone.clear()
        self._changed(f"painted {len(cells)} cells {done.terrain.name}")
        return done

    def undo(self) -> None:
        if not self.done:
            self.v.message = "brush: nothing to undo"
            return
        last = self.done.pop()
        unpaint(self.model, last)
        self.undone.append(last)
        self._changed(f"unpainted {len(last.cells)} cells {last.terrain.name}")

    def redo(self) -> None:
        if not self.undone:
            self.v.message = "brush: nothing to redo"
            return
        again = self.undone.pop()
        self.done.append(paint(self.model, again.terrain, list(again.cells)))
        self._changed(f"painted {len(again.cells)} cells {again.terrain.name} again")

    def _changed(self, message: str) -> None:
        """The map changed under the simulation: its graphs and the overlays are rebuilt."""
        from engine.sim import FieldCache

        v = self.v
        v.sim.fields = FieldCache(v.scenario)
        v._invalidate()
        self.version += 1
        v.message = message

    # ----------------------------------------------------------------- session

    def doc(self) -> dict[str, Any]:
        """The session file's ``paint``: the strokes done, in order, and those undone."""
        return {
            "strokes": [stroke_json(s) for s in self.done],
            "undone": [stroke_json(s) for s in self.undone],
        }

    def restore(self, done: list[Stroke], undone: list[Stroke]) -> None:
        """A session's strokes (already painted onto the model: ``done``), and those it
        had undone."""
        self.done, self.undone = list(done), list(undone)
        self.dragging = None
        self.version += 1

    # ----------------------------------------------------------------- input

    def handle(self, ev: Any) -> bool:  # noqa: C901
        """Take the event if it is the brush's (True: nothing else sees it)."""
        if ev.type == pygame.KEYDOWN:
            ctrl = ev.mod & pygame.KMOD_CTRL
            if ev.key == pygame.K_b and not ctrl:
                self.toggle()
                return True
            if not self.on:
                return False
            if ev.key == pygame.K_ESCAPE:
                self.toggle()
            elif ev.key == pygame.K_z and ctrl:
                self.undo()
            elif ev.key == pygame.K_y and ctrl:
                self.redo()
            elif pygame.K_1 <= ev.key <= pygame.K_9:
                self.choose(ev.key - pygame.K_1)
            elif ev.key in (pygame.K_LEFTBRACKET, pygame.K_RIGHTBRACKET):
                self.choose(self.choice + (1 if ev.key == pygame.K_RIGHTBRACKET else -1))
            else:
                return False
            return True
        if not self.on:
            return False
        if ev.type == pygame.MOUSEBUTTONDOWN and ev.button == 1:
            cell = self.v.cell_at_screen(*ev.pos)
            if cell is not None:
                self.dragging = [cell]
                self.version += 1
            return True
        if ev.type == pygame.MOUSEMOTION and self.dragging is not None:
            cell = self.v.cell_at_screen(*ev.pos)
            if cell is not None and cell != self.dragging[-1]:
                grid = self.model.grid
                # Every cell between the last one and this: a quick drag leaves no gaps.
                for c in grid.line(self.dragging[-1], cell)[1:]:
                    if grid.in_bounds(c) and c not in self.dragging:
                        self.dragging.append(c)
                self.version += 1
            self.v.hover = cell
            return True
        if ev.type == pygame.MOUSEBUTTONUP and ev.button == 1 and self.dragging is not None:
            cells, self.dragging = self.dragging, None
            self.stroke(cells)
            return True
        return False

    # ----------------------------------------------------------------- drawing

    def painted(self) -> dict[Cell, Terrain]:
        """Each painted cell's terrain now (the last stroke over it wins)."""
        out: dict[Cell, Terrain] = {}
        for s in self.done:
            for c in s.cells:
                out[c] = s.terrain
        return out

    def draw(self, view: pygame.Surface) -> None:
        """Painted cells tinted in their terrain's colour (stronger while the brush is on),
        the stroke being dragged, and the palette strip."""
        cells = self.painted()
        if self.dragging:
            t = self.terrain()
            cells.update({c: t for c in self.dragging})
        if cells:
            layer = pygame.Surface(view.get_size(), pygame.SRCALPHA)
            alpha = 170 if self.on else 110
            grid, cam = self.model.grid, self.v.camera
            vw, vh = view.get_size()
            for cell, t in cells.items():
                pts = [cam.to_screen(x, y) for x, y in grid.cell_corners(cell)]
                if max(p[0] for p in pts) < 0 or min(p[0] for p in pts) > vw:
                    continue
                if max(p[1] for p in pts) < 0 or min(p[1] for p in pts) > vh:
                    continue
                pygame.draw.polygon(layer, (*terrain_colour(t), alpha), pts)
                # A light edge: painted cells stand out from tiles of the same colour.
                pygame.draw.polygon(layer, (255, 255, 255, 150), pts, 1)
            view.blit(layer, (0, 0))
        if self.on:
            self._draw_palette(view)

    def _draw_palette(self, view: pygame.Surface) -> None:
        font = self.v.small
        pal = self.palette()
        rows = [
            (
                i,
                t,
                f"{i + 1 if i < 9 else ' '} {t.name} ({t.move}"
                + (f", x{t.cost:g}" if t.cost != 1 else "")
                + (f", +{t.cost_add:g}" if t.cost_add else "")
                + ")",
            )
            for i, t in enumerate(pal)
        ]
        w = 34 + max(font.size(text)[0] for _, _, text in rows)
        h = 26 + 18 * len(rows)
        box = pygame.Surface((w, h), pygame.SRCALPHA)
        box.fill((0, 0, 0, 200))
        box.blit(font.render("terrain brush (B)", True, _CHOSEN), (8, 6))
        for k, (i, t, text) in enumerate(rows):
            y = 24 + 18 * k
            pygame.draw.rect(box, terrain_colour(t), (8, y + 2, 14, 12))
            chosen = i == self.choice % len(pal)
            if chosen:
                pygame.draw.rect(box, _CHOSEN, (4, y, w - 8, 17), 1)
            box.blit(font.render(text, True, _CHOSEN if chosen else _LABEL), (28, y + 2))
        view.blit(box, (8, max(8, view.get_height() - h - 8)))  # bottom left
