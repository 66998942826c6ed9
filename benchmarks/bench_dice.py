"""Time the dice fast paths against a plain ``random.randint`` loop of the same count.

Run: ``python benchmarks/bench_dice.py``. Each line prints the batch time, the time of
``random.randint`` called as many times as there are rolls, and their ratio; the script exits
with status 1 when a ratio misses its target (3x). Timings are the best of a few repeats so a
noisy machine does not fail the run.
"""

from __future__ import annotations

import random
import sys
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from timing import best  # noqa: E402

from engine.checks import Check  # noqa: E402
from engine.dice import Dice  # noqa: E402
from engine.systems import d6, whisperspace  # noqa: E402

TARGET = 3.0
REPEATS = 3


def best_time(fn: Callable[[], object], repeats: int = REPEATS) -> float:
    """The quickest of ``repeats`` runs of ``fn``, in seconds."""
    return best(fn, repeats)[0]


def randint_loop(count: int, sides: int) -> Callable[[], object]:
    """The baseline: ``count`` calls of ``random.randint(1, sides)`` on a seeded Random."""

    def run() -> object:
        randint = random.Random(1).randint
        return [randint(1, sides) for _ in range(count)]

    return run


def batch_loop(check: Check, count: int) -> Callable[[], object]:
    """``count`` rolls of ``check`` through its batch path, on a fresh seed each run."""
    seeds = iter(range(1_000))

    def run() -> object:
        # A fresh Dice per run, so each run draws its own words rather than a buffered rest.
        return check.roll_many(Dice(next(seeds)), count)

    return run


def main() -> int:
    """Run both benchmarks; return 1 if a target is missed."""
    cases = [
        ("whisperspace d12+bonus", "athletics=2 dc=8 bonus=1", whisperspace, 1_000_000, 12),
        ("d6 4D+2 wild die", "dice=4D+2 dn=15", d6, 100_000, 6),
    ]
    missed = False
    for label, text, module, count, sides in cases:
        check = module.parse_check(text)
        batch = best_time(batch_loop(check, count))
        base = best_time(randint_loop(count, sides))
        ratio = batch / base
        ok = ratio <= TARGET
        missed |= not ok
        print(
            f"{label} x{count:.0e}".replace("e+0", "e")
            + f": {batch:.3f} s vs randint {base:.3f} s -> {ratio:.2f}x "
            f"(target <= {TARGET:g}x){'' if ok else '  MISSED'}"
        )
    # For information: the one-at-a-time path (no target; it builds an event per roll).
    check = whisperspace.parse_check("athletics=2 dc=8 bonus=1")
    dice = Dice(0)
    single = best_time(lambda: [check.roll(dice) for _ in range(20_000)], 1)
    base = best_time(randint_loop(20_000, 12), 1)
    print(
        f"(info) whisperspace single rolls x2e4: {single:.3f} s vs randint {base:.3f} s "
        f"-> {single / base:.2f}x (no target)"
    )
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main())
