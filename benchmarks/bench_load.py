"""Loading a 512x512 map into the model, as a ratio to pytmx's own parse of the same file.

Run: python benchmarks/bench_load.py   (target: ratio <= 1.5; exit status 1 if missed)
"""

from __future__ import annotations

import random
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

import tmxtext  # noqa: E402
from timing import best  # noqa: E402

from engine.tiled import _pytmx, load_map  # noqa: E402

TARGET = 1.5


def drawing(size: int, seed: int = 7) -> list[str]:
    rng = random.Random(seed)
    chars = ".......,,#~^HO_"
    return ["".join(rng.choice(chars) for _ in range(size)) for _ in range(size)]


def main() -> int:
    pytmx = _pytmx()
    failed = False
    with tempfile.TemporaryDirectory() as tmp:
        for size, encoding in ((512, "csv"), (512, "base64-zlib")):
            path = Path(tmp) / f"map{size}_{encoding}.tmx"
            tmxtext.write(path, drawing(size), encoding=encoding)
            load_map(path)  # warm imports
            ref_min, ref_med = best(lambda p=path: pytmx.TiledMap(str(p)), 5)
            our_min, our_med = best(lambda p=path: load_map(p), 5)
            ratio = our_min / ref_min
            ok = ratio <= TARGET
            failed |= not ok
            print(
                f"load {size}x{size} {encoding:<12} model {our_min * 1000:7.1f} ms "
                f"(median {our_med * 1000:.1f}) vs pytmx parse {ref_min * 1000:7.1f} ms "
                f"(median {ref_med * 1000:.1f}) -> {ratio:.2f}x (target <= {TARGET}x) "
                f"{'ok' if ok else 'MISSED'}"
            )
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
