"""The window's camera: map pixels <-> window pixels, zoom snapped to whole steps."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass
class Camera:
    """Map pixels <-> window pixels: ``screen = (world - origin) * zoom``."""

    x: float = 0.0
    y: float = 0.0
    zoom: float = 1.0

    def to_screen(self, wx: float, wy: float) -> tuple[float, float]:
        return (wx - self.x) * self.zoom, (wy - self.y) * self.zoom

    def to_world(self, sx: float, sy: float) -> tuple[float, float]:
        return sx / self.zoom + self.x, sy / self.zoom + self.y

    def zoom_at(self, sx: float, sy: float, factor: float) -> None:
        wx, wy = self.to_world(sx, sy)
        old = self.zoom
        self.zoom = snap_zoom(self.zoom * factor)
        if self.zoom == old and factor != 1:  # a step too small to reach the next 1/32
            self.zoom = snap_zoom(old + (1 if factor > 1 else -1) / ZOOM_STEPS)
        self.x, self.y = wx - sx / self.zoom, wy - sy / self.zoom


#: Zooms are whole multiples of 1/ZOOM_STEPS: the renderer places tiles exactly at such
#: scales, while an arbitrary one (a fit of 0.6034...) left hairline seams between tiles.
ZOOM_STEPS = 32


def snap_zoom(zoom: float) -> float:
    """``zoom`` rounded down to a multiple of 1/ZOOM_STEPS, within 1/ZOOM_STEPS .. 8."""
    zoom = min(max(zoom, 0.0), 8.0)  # first: 1e308 steps would overflow an int's float
    steps = max(1, min(8 * ZOOM_STEPS, int(zoom * ZOOM_STEPS + 1e-9)))
    return steps / ZOOM_STEPS
