"""`tacgrid render` against Tiled's own tmxrasterizer, run side by side (issue 20).

Targets, as ratios to tmxrasterizer measured in the same run (never absolute times):

* time: `tacgrid render MAP --out X.png --scale S` takes <= 1.5x `tmxrasterizer -s S MAP X.png`
  at scales 1, 0.25 and 0.125, on a 403x403 map (maps/chase.tmx's terrain repeated, 32-px
  square tiles) and a 512x512 pointy hex map (the shipped hex tileset, random tiles); both
  whole commands, start-up, map reading and PNG writing included;
* memory: a 1024x1024 map at scale 1/16 (a 2048x2048 image; the map at full size would be
  32768x32768, 4 GiB) peaks at <= 200 MB resident;
* issue 42's heavy renders, time <= 1.5x as above, one run a side: 8 full base64+zlib
  layers of 2048x2048 at scale 1/8, and 300 objects each an 800-point polygon at scale 1;
  an isometric map of 600x600 cells of 33x17 painted with 32x32 tiles (half-pixel places)
  at scale 1/4, whose pixels also must equal tmxrasterizer's (at most 0.01% differing), as
  must those of a 120x120 one at scale 1 (a pixel target only).

Below scale 1 each side runs three times, interleaved, and its quickest run counts (one run
of a second or less is mostly noise). Each command's peak resident memory is its own
(``os.wait4``). The images are compared too:
the share of pixels that differ from tmxrasterizer's by more than 8 of 255 in a channel.

Run: python benchmarks/bench_render.py [--scales 1,0.25,0.125]   (exit status 1 if a target
is missed; 2 if tmxrasterizer is not installed)
"""

from __future__ import annotations

import argparse
import base64
import math
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile
import zlib
from pathlib import Path

os.environ.setdefault("SDL_VIDEODRIVER", "dummy")
os.environ.setdefault("SDL_AUDIODRIVER", "dummy")
os.environ.setdefault("PYGAME_HIDE_SUPPORT_PROMPT", "1")

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402
import pygame  # noqa: E402
from timing import run_compiled  # noqa: E402

TILESET = ROOT / "assets" / "terrain_hex_pointy.tsx"
SIZE = 100
TIME_RATIO = 1.5
MEMORY_MB = 200
#: The isometric rows' share of pixels that may differ from tmxrasterizer's.
ISO_PIXELS = 0.0001


def hex_map(path: Path, size: int, seed: int = 7) -> Path:
    """A size x size pointy hex map painted with the 14 tiles of the shipped hex tileset."""
    rng = random.Random(seed)
    rows = [",".join(str(rng.randint(1, 14)) for _ in range(size)) for _ in range(size)]
    path.write_text(
        '<?xml version="1.0" encoding="UTF-8"?>\n'
        '<map version="1.8" tiledversion="1.8.2" orientation="hexagonal" '
        f'renderorder="right-down" width="{size}" height="{size}" tilewidth="32" '
        'tileheight="36" infinite="0" hexsidelength="18" staggeraxis="y" staggerindex="odd">\n'
        f' <tileset firstgid="1" source="{TILESET.as_posix()}"/>\n'
        f' <layer id="1" name="terrain" width="{size}" height="{size}">\n'
        '  <data encoding="csv">\n' + ",\n".join(rows) + "\n</data>\n </layer>\n</map>\n",
        encoding="utf-8",
    )
    return path


def chase_map(path: Path, size: int) -> Path:
    """A size x size orthogonal map repeating maps/chase.tmx's terrain layer."""
    text = (ROOT / "maps" / "chase.tmx").read_text(encoding="utf-8")
    found = re.search(r'<data encoding="csv">(.*?)</data>', text, re.S)
    assert found is not None
    rows = [r.strip().rstrip(",").split(",") for r in found.group(1).strip().splitlines()]
    h, w = len(rows), len(rows[0])
    lines = [",".join((rows[r] * (size // w + 1))[:size]) for r in range(h)]
    tileset = (ROOT / "assets" / "terrain_square.tsx").as_posix()
    path.write_text(
        '<?xml version="1.0" encoding="UTF-8"?>\n'
        '<map version="1.8" tiledversion="1.8.2" orientation="orthogonal" '
        f'renderorder="right-down" width="{size}" height="{size}" tilewidth="32" '
        'tileheight="32" infinite="0" nextlayerid="2" nextobjectid="1">\n'
        f' <tileset firstgid="1" source="{tileset}"/>\n'
        f' <layer id="1" name="terrain" width="{size}" height="{size}">\n'
        '  <data encoding="csv">\n'
        + ",\n".join(lines[r % h] for r in range(size))
        + "\n</data>\n </layer>\n</map>\n",
        encoding="utf-8",
    )
    return path


def layered_map(path: Path, size: int, layers: int, seed: int = 1) -> Path:
    """A size x size orthogonal map of ``layers`` full tile layers (base64+zlib, as Tiled
    writes big maps), each of random tiles of the shipped square tileset: issue 42's
    8 layers of 2048^2 (15.6 CPU-s in blits before the upper layers were copied)."""
    rng = np.random.default_rng(seed)
    tileset = (ROOT / "assets" / "terrain_square.tsx").as_posix()
    parts = []
    for i in range(layers):
        gids = rng.choice(np.array([1, 2, 3, 4], np.uint32), size * size).astype("<u4")
        data = base64.b64encode(zlib.compress(gids.tobytes())).decode()
        parts.append(
            f'<layer id="{i + 1}" name="l{i}" width="{size}" height="{size}">'
            f'<data encoding="base64" compression="zlib">{data}</data></layer>'
        )
    path.write_text(
        '<?xml version="1.0" encoding="UTF-8"?>\n<map version="1.8" tiledversion="1.8.2" '
        f'orientation="orthogonal" renderorder="right-down" width="{size}" height="{size}" '
        f'tilewidth="32" tileheight="32" infinite="0" nextlayerid="{layers + 1}" '
        f'nextobjectid="1"><tileset firstgid="1" source="{tileset}"/>'
        + "".join(parts)
        + "</map>\n",
        encoding="utf-8",
    )
    return path


def odd_iso_map(path: Path, size: int, seed: int = 2) -> Path:
    """A size x size isometric map of 33x17 tiles (odd: Tiled's loop puts tiles on half
    pixels) painted with the shipped square tiles: issue 42's Tiled loop replayed per band."""
    rng = np.random.default_rng(seed)
    tileset = (ROOT / "assets" / "terrain_square.tsx").as_posix()
    gids = rng.choice(np.array([1, 2, 3, 4], np.uint32), size * size).astype("<u4")
    data = base64.b64encode(zlib.compress(gids.tobytes())).decode()
    path.write_text(
        '<?xml version="1.0" encoding="UTF-8"?>\n<map version="1.8" tiledversion="1.8.2" '
        f'orientation="isometric" renderorder="right-down" width="{size}" height="{size}" '
        'tilewidth="33" tileheight="17" infinite="0" nextlayerid="2" nextobjectid="1">'
        f'<tileset firstgid="1" source="{tileset}"/><layer id="1" name="g" width="{size}" '
        f'height="{size}"><data encoding="base64" compression="zlib">{data}</data></layer>'
        "</map>\n",
        encoding="utf-8",
    )
    return path


def polygons_map(path: Path, objects: int = 300, points: int = 800) -> Path:
    """A 64x64 square map with ``objects`` objects, each the same ``points``-point polygon
    (a ring of radius 100 pixels, every other point 7 pixels out): issue 42's objects
    sharing one large polygon template (47.8 CPU-s before coverage was measured in
    chunks). Written inline: tmxrasterizer 1.8 leaves such a template undrawn."""
    ring = " ".join(
        f"{100 * math.cos(2 * math.pi * k / points) + (7 if k % 2 else 0):.2f},"
        f"{100 * math.sin(2 * math.pi * k / points):.2f}"
        for k in range(points)
    )
    objs = "".join(
        f'<object id="{k + 1}" x="{(k % 50) * 32 + 100}" y="{(k // 50) * 32 + 132}">'
        f'<polygon points="{ring}"/></object>'
        for k in range(objects)
    )
    rows = ",\n".join(",".join(str(1 + (r * 3 + c) % 4) for c in range(64)) for r in range(64))
    tileset = (ROOT / "assets" / "terrain_square.tsx").as_posix()
    path.write_text(
        '<?xml version="1.0" encoding="UTF-8"?>\n<map version="1.8" tiledversion="1.8.2" '
        'orientation="orthogonal" renderorder="right-down" width="64" height="64" '
        'tilewidth="32" tileheight="32" infinite="0" nextlayerid="3" '
        f'nextobjectid="{objects + 1}"><tileset firstgid="1" source="{tileset}"/>'
        '<layer id="1" name="t" width="64" height="64">'
        f'<data encoding="csv">{rows}</data></layer>'
        f'<objectgroup id="2" name="zones">{objs}</objectgroup></map>\n',
        encoding="utf-8",
    )
    return path


#: Runs of each command at scales below 1 (the quickest counts).
REPEAT = 3
#: tacgrid runs as installed Python runs: bytecode cached (some shells here set
#: PYTHONDONTWRITEBYTECODE, which makes every start compile the whole engine anew).
OUR_ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


# Linux hands a forked child its parent's peak resident size, and exec keeps it: a command
# started straight from this (large) process would report this process's peak. A small
# launcher starts it instead and reports the command's own figures.
LAUNCHER = """
import os, subprocess, sys, time
t = time.perf_counter()
proc = subprocess.Popen(sys.argv[2:], stdout=None if sys.argv[1] == "show" else subprocess.DEVNULL)
_, status, usage = os.wait4(proc.pid, 0)
print("launcher:", time.perf_counter() - t, usage.ru_maxrss, status, file=sys.stderr)
"""


def run(
    argv: list[str], env: dict[str, str] | None = None, show: bool = False
) -> tuple[float, float]:
    """(wall seconds, peak resident MB) of one command, its own; it must succeed.
    ``show``: let the command print to this stdout."""
    got = subprocess.run(
        [sys.executable, "-c", LAUNCHER, "show" if show else "quiet", *argv],
        env=env,
        stdout=None if show else subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        cwd=str(ROOT),
    )
    last = got.stderr.strip().splitlines()[-1:] or [""]
    fields = last[0].split()
    if len(fields) != 4 or fields[0] != "launcher:" or int(fields[3]) != 0:
        raise SystemExit(f"{' '.join(argv)} failed: {got.stderr.strip()}")
    return float(fields[1]), int(fields[2]) / 1024


def differing(a: Path, b: Path) -> float:
    """Share of pixels of ``a`` differing from ``b`` by more than 8 in a channel."""

    def rgba(p: Path) -> np.ndarray:
        s = pygame.image.load(str(p))
        rgb = pygame.surfarray.array3d(s)
        alpha = pygame.surfarray.array_alpha(s)
        return np.concatenate([rgb, alpha[..., None]], axis=2).astype(np.int16)

    x, y = rgba(a), rgba(b)
    if x.shape != y.shape:
        return float("nan")
    clear = (x[..., 3] == 0) & (y[..., 3] == 0)
    return float(((np.abs(x - y).max(axis=2) > 8) & ~clear).mean())


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--scales", default="1,0.25,0.125")
    args = ap.parse_args()
    run_compiled(ROOT)
    scales = [float(s) for s in args.scales.split(",")]
    tmxr = shutil.which("tmxrasterizer")
    if tmxr is None:
        print("tmxrasterizer (Debian package 'tiled') is not installed: nothing to compare")
        return 2
    qt_env = {**os.environ, "QT_QPA_PLATFORM": "offscreen"}
    ok = True
    with tempfile.TemporaryDirectory() as tmp:
        d = Path(tmp)
        maps = {
            "403x403 square": chase_map(d / "chase403.tmx", 403),
            "512x512 hex": hex_map(d / "hex512.tmx", 512),
        }
        for name, path in maps.items():
            for s in scales:
                ref, ours = d / "ref.png", d / "ours.png"
                # The quick scales take a second or less, where one run is mostly noise:
                # each side runs REPEAT times, interleaved, and its quickest counts.
                pairs = [
                    (
                        run([tmxr, "-s", str(s), str(path), str(ref)], qt_env),
                        run(
                            [sys.executable, "main.py", "render", str(path), "--out", str(ours),
                             "--scale", str(s)],
                            OUR_ENV,
                        ),
                    )
                    for _ in range(1 if s >= 1 else REPEAT)
                ]  # fmt: skip
                t_ref, m_ref = min(p[0][0] for p in pairs), max(p[0][1] for p in pairs)
                t_us, m_us = min(p[1][0] for p in pairs), max(p[1][1] for p in pairs)
                ratio = t_us / t_ref
                hit = ratio <= TIME_RATIO
                ok &= hit
                print(
                    f"{name} scale {s:g}: tacgrid {t_us:.2f} s {m_us:.0f} MB, "
                    f"tmxrasterizer {t_ref:.2f} s {m_ref:.0f} MB -> {ratio:.2f}x "
                    f"(target <= {TIME_RATIO:g}x) {'ok' if hit else 'MISSED'}; "
                    f"{100 * differing(ours, ref):.3f}% pixels differ"
                )
        big = chase_map(d / "chase1024.tmx", 1024)
        t_us, m_us = run(
            [sys.executable, "main.py", "render", str(big), "--out", str(d / "big.png"),
             "--scale", "0.0625"],
            OUR_ENV,
        )  # fmt: skip
        t_ref, m_ref = run([tmxr, "-s", "0.0625", str(big), str(d / "bigref.png")], qt_env)
        hit = m_us <= MEMORY_MB
        ok &= hit
        print(
            f"1024x1024 square scale 1/16 (2048x2048 px): tacgrid {t_us:.2f} s peak {m_us:.0f} MB "
            f"(target <= {MEMORY_MB} MB) {'ok' if hit else 'MISSED'}; tmxrasterizer "
            f"{t_ref:.2f} s {m_ref:.0f} MB; "
            f"{100 * differing(d / 'big.png', d / 'bigref.png'):.3f}% pixels differ"
        )
        # Issue 42's heavy renders, one run a side (each takes seconds).
        heavy = {
            "8 layers of 2048x2048 (zlib) scale 1/8": (layered_map(d / "l8.tmx", 2048, 8), 0.125),
            "300 objects of 800-point polygons scale 1": (polygons_map(d / "poly.tmx"), 1.0),
            "isometric 600x600 of 33x17 tiles scale 1/4": (odd_iso_map(d / "iso.tmx", 600), 0.25),
        }
        for name, (path, s) in heavy.items():
            ref, ours = d / "ref.png", d / "ours.png"
            t_ref, m_ref = run([tmxr, "-s", str(s), str(path), str(ref)], qt_env)
            t_us, m_us = run(
                [sys.executable, "main.py", "render", str(path), "--out", str(ours),
                 "--scale", str(s)],
                OUR_ENV,
            )  # fmt: skip
            ratio = t_us / t_ref
            hit = ratio <= TIME_RATIO
            ok &= hit
            share = differing(ours, ref)
            pixels = ""
            if name.startswith("isometric"):
                # Tiled's loop and Qt's rounding are replayed exactly (tests/test_render_iso.py).
                same = share <= ISO_PIXELS
                ok &= same
                pixels = f" (target <= {100 * ISO_PIXELS:g}%) {'ok' if same else 'MISSED'}"
            print(
                f"{name}: tacgrid {t_us:.2f} s {m_us:.0f} MB, tmxrasterizer {t_ref:.2f} s "
                f"{m_ref:.0f} MB -> {ratio:.2f}x (target <= {TIME_RATIO:g}x) "
                f"{'ok' if hit else 'MISSED'}; {100 * share:.3f}% pixels differ{pixels}"
            )
        # The same seam at scale 1, for its pixels: a 4-megapixel picture, whose time is
        # mostly start-up and PNG writing (the rows above time the drawing).
        path, ref, ours = odd_iso_map(d / "iso1.tmx", 120), d / "ref.png", d / "ours.png"
        t_ref, _ = run([tmxr, str(path), str(ref)], qt_env)
        t_us, _ = run([sys.executable, "main.py", "render", str(path), "--out", str(ours)], OUR_ENV)
        share = differing(ours, ref)
        same = share <= ISO_PIXELS
        ok &= same
        print(
            f"isometric 120x120 of 33x17 tiles scale 1: {100 * share:.3f}% pixels differ "
            f"(target <= {100 * ISO_PIXELS:g}%) {'ok' if same else 'MISSED'}; tacgrid "
            f"{t_us:.2f} s, tmxrasterizer {t_ref:.2f} s (no time target)"
        )
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
