"""Redraw the README's viewer screenshot (docs/viewer.png) from the shipped hex hunt.

    python docs/make_screenshots.py

A GM's table mid-session: the scenario's two sides plus a GM-added token of a third, the
selected hero's reach bands with the legend, and a measured path (M, then a drag) across the
lake, whose checks and odds the panel lists. Runs under SDL's dummy driver (no display).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

os.environ.setdefault("SDL_VIDEODRIVER", "dummy")
os.environ.setdefault("SDL_AUDIODRIVER", "dummy")
ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import pygame  # noqa: E402

from engine.scenario import TokenSpec  # noqa: E402
from engine.viewer.app import Viewer, open_source  # noqa: E402


def main() -> None:
    v = Viewer(open_source(str(ROOT / "scenarios" / "hex_hunt.yaml")), size=(1280, 800))
    # A third side: the GM drops a guide by the lake (N in the window).
    v.table.record(
        lambda: v.sim.add_token(
            TokenSpec(
                id="guide",
                side="gm",
                stats={"adaptability": 12, "physical": 10, "swimming": 12},
                cell=(6, 14),
                policy="human",
            )
        )
    )
    v.select("hero1")
    start = v.sim.tokens["hero1"].state.cell
    assert start is not None
    v.table.measuring = True
    v.table.do_measure(start, (5, 8))  # into the deep lake: a swim check on the way
    for _ in range(30):
        v.step()
    out = ROOT / "docs" / "viewer.png"
    pygame.image.save(v.screen, str(out))
    print(f"wrote {out}")
    pygame.quit()


if __name__ == "__main__":
    main()
