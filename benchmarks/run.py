"""Run every benchmark in this folder; exit non-zero if any target is missed.

Each benchmark prints its time as a ratio to a reference measured in the same run (the
machines are noisy: absolute times mean little).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent


def main() -> int:
    sys.path.insert(0, str(HERE))
    from timing import run_compiled

    run_compiled(HERE.parent)
    failed = []
    for bench in sorted(HERE.glob("bench_*.py")):
        print(f"== {bench.name}", flush=True)
        if subprocess.run([sys.executable, str(bench)], check=False).returncode != 0:
            failed.append(bench.name)
    if failed:
        print(f"targets missed: {', '.join(failed)}")
        return 1
    print("all targets met")
    return 0


if __name__ == "__main__":
    sys.exit(main())
