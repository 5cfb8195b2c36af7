"""End-to-end throughput of the offline duel (espeak-flat vs espeak-follow, acoustic probes).

Compares the process pool (``--workers`` processes) with the serial executor it replaces,
and a second, fully cached run (resume) with the first. Prints seconds per stage and ratios.

    .venv/bin/python benchmarks/bench_pipeline.py --items 100 --workers 2
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import vocencebench as vb
from vocencebench.adapters import EspeakSystem


def _run(items: list[vb.Item], workers: int, cache: Path | None) -> tuple[float, dict[str, float]]:
    t0 = time.perf_counter()
    h = vb.benchmark(items, EspeakSystem("espeak-flat"), EspeakSystem("espeak-follow"),
                     probes=vb.default_probes(), labels=("flat", "follow"), workers=workers,
                     cache=cache, progress=False)
    return time.perf_counter() - t0, dict(h.metadata["timings"])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--items", type=int, default=100)
    ap.add_argument("--workers", type=int, default=2)
    args = ap.parse_args()
    items = vb.load_benchmark("benchmark_v1")[: args.items]
    clips = 2 * len(items)
    serial, ts = _run(items, 1, None)
    with tempfile.TemporaryDirectory() as tmp:
        cache = Path(tmp) / "cache.sqlite"
        pooled, tp = _run(items, args.workers, cache)
        resumed, _ = _run(items, args.workers, cache)
    print(f"{len(items)} items = {clips} clips")
    print(f"{'run':<28}{'total s':>9}{'synth s':>9}{'analyse s':>11}{'clips/s':>9}")
    for name, total, t in (("serial (1 process)", serial, ts),
                           (f"pool ({args.workers} workers)", pooled, tp)):
        print(f"{name:<28}{total:>9.2f}{t['synthesis_s']:>9.2f}{t['analyse_s']:>11.2f}"
              f"{clips / total:>9.1f}")
    print(f"{'resume (all cached)':<28}{resumed:>9.2f}")
    print(f"pool vs serial: {serial / pooled:.2f}x faster; "
          f"analysis stage {ts['analyse_s'] / tp['analyse_s']:.2f}x")
    print(f"cached re-run vs first run: {pooled / resumed:.1f}x faster")


if __name__ == "__main__":
    main()
