"""No hairline seams between tiles at any of the viewer's zooms, on any tile size: each
scaled tile covers exactly the output pixels between its rounded corners, so two tiles
side by side abut (70-pixel tiles left a one-pixel gap at zooms such as 5/32)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pygame
import pytest

from engine.viewer.camera import ZOOM_STEPS
from engine.viewer.render import MapChunks, load_for_render

RED, BLUE = (200, 60, 60), (60, 60, 200)


def _map(tmp: Path, t: int, n: int = 9) -> Path:
    pygame.display.init()
    img = pygame.Surface((2 * t, t), pygame.SRCALPHA)
    img.fill((*RED, 255), (0, 0, t, t))
    img.fill((*BLUE, 255), (t, 0, t, t))
    pygame.image.save(img, str(tmp / "tiles.png"))
    rows = ",\n".join(",".join(str(1 + (r + c) % 2) for c in range(n)) for r in range(n))
    path = tmp / "m.tmx"
    path.write_text(
        f'<?xml version="1.0" encoding="UTF-8"?>\n<map version="1.10" orientation="orthogonal" '
        f'renderorder="right-down" width="{n}" height="{n}" tilewidth="{t}" tileheight="{t}" '
        f'infinite="0" nextlayerid="2" nextobjectid="1">\n'
        f'<tileset firstgid="1" name="t" tilewidth="{t}" tileheight="{t}" tilecount="2" '
        f'columns="2"><image source="tiles.png" width="{2 * t}" height="{t}"/></tileset>\n'
        f'<layer id="1" name="g" width="{n}" height="{n}"><data encoding="csv">\n{rows}\n'
        "</data></layer>\n</map>\n",
        encoding="utf-8",
    )
    return path


def _whole(chunks: MapChunks, zoom: float) -> pygame.Surface:
    w, h = chunks.size_at(zoom)
    out = pygame.Surface((w, h), pygame.SRCALPHA)
    out.fill((0, 0, 0, 0))
    c = MapChunks.CHUNK
    for j in range(-(-h // c)):
        for i in range(-(-w // c)):
            out.blit(chunks.chunk(zoom, i, j), (i * c, j * c))
    return out


@pytest.mark.parametrize("tile", [70, 48, 33])
def test_no_seams_at_the_viewers_zooms(tmp_path: Path, tile: int) -> None:
    model, tiled = load_for_render(_map(tmp_path, tile))
    seamed = []
    # every 1/32 step to 1, then a few above (5/32 and 9/32 seamed with 70-pixel tiles)
    for k in [*range(1, ZOOM_STEPS + 1), 37, 45, 53, 71]:
        zoom = k / ZOOM_STEPS
        surf = _whole(MapChunks(model, tiled), zoom)
        rgb = pygame.surfarray.array3d(surf).astype(np.int64)
        alpha = pygame.surfarray.array_alpha(surf)
        tile_colour = (rgb == RED).all(-1) | (rgb == BLUE).all(-1)
        bad = int((~tile_colour | (alpha < 255)).sum())
        if bad:
            seamed.append((k, bad))
    assert seamed == []
