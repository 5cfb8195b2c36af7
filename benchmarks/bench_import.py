"""What `import vocencebench` costs: cumulative import time (median of fresh interpreters,
`python -X importtime`), the modules it loads, and whether a heavy dependency came with it,
side by side with `import numpy` as the yardstick.

    PYTHONPATH=src python benchmarks/bench_import.py [--runs 9]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys

HEAVY = ("numpy", "scipy", "torch", "transformers", "httpx", "httpcore", "soundfile",
         "parselmouth", "faster_whisper", "rich")


def import_us(module: str) -> int:
    """Cumulative import time of ``module`` (µs) in a fresh interpreter."""
    err = subprocess.run([sys.executable, "-X", "importtime", "-c", f"import {module}"],
                         capture_output=True, text=True, check=True).stderr
    for line in reversed(err.splitlines()):
        parts = [p.strip() for p in line.split("|")]
        if len(parts) == 3 and parts[2] == module:
            return int(parts[1])
    raise RuntimeError(f"no importtime line for {module}")


def loaded(module: str) -> tuple[int, list[str]]:
    code = (f"import sys; before = set(sys.modules); import {module}; "
            "new = set(sys.modules) - before; "
            f"print(len(new)); print(','.join(h for h in {HEAVY!r} if h in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout.splitlines()
    return int(out[0]), [h for h in out[1].split(",") if h]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=9)
    runs = ap.parse_args().runs
    rows = []
    for module in ("vocencebench", "numpy"):
        us = statistics.median(import_us(module) for _ in range(runs))
        n, heavy = loaded(module)
        rows.append((module, us, n, heavy))
    base = rows[1][1]
    print(f"{'import':14s} {'median ms':>10s} {'× numpy':>8s} {'modules':>8s}  heavy deps loaded")
    for module, us, n, heavy in rows:
        print(f"{module:14s} {us / 1000:10.1f} {us / base:8.2f} {n:8d}  {', '.join(heavy) or '-'}")


if __name__ == "__main__":
    main()
