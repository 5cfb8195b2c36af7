"""Peak memory of the client against corpus size: the eSpeak duel on generated corpora.

Each size runs in a fresh subprocess (``--one N``), which builds a template corpus of N items
(``vocencebench.corpus.generate_template_corpus``), runs espeak-flat vs espeak-follow with the
acoustic probes and a cache in a temporary directory, and reports its own peak resident set
size (``getrusage(RUSAGE_SELF).ru_maxrss``: the client only, not the eSpeak or pool
processes) before and after the run. Clips go to the cache as they arrive and are read back
when needed, so the peak should not grow with N.

    .venv/bin/python benchmarks/bench_pipeline_rss.py               # sizes 496 5000
    .venv/bin/python benchmarks/bench_pipeline_rss.py --sizes 100 496
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def _rss_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def one(n: int, workers: int | None) -> dict[str, float]:
    import vocencebench as vb
    from vocencebench.adapters import EspeakSystem
    from vocencebench.corpus import generate_template_corpus

    items = generate_template_corpus(n)
    probes = vb.default_probes()
    before = _rss_mib()
    with tempfile.TemporaryDirectory() as tmp:
        t0 = time.perf_counter()
        h = vb.benchmark(items, EspeakSystem("espeak-flat"), EspeakSystem("espeak-follow"),
                         probes=probes, labels=("flat", "follow"),
                         cache=Path(tmp) / "cache.sqlite", workers=workers, progress=False)
        wall = time.perf_counter() - t0
    return {"items": n, "rss_before_mib": round(before, 1), "rss_peak_mib": round(_rss_mib(), 1),
            "wall_s": round(wall, 1), "mean_a": h.decision.mean_a, "mean_b": h.decision.mean_b}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", type=int, nargs="+", default=[496, 5000])
    ap.add_argument("--workers", type=int, default=None)
    ap.add_argument("--one", type=int, default=None, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.one is not None:
        print(json.dumps(one(args.one, args.workers)))
        return
    rows = []
    for n in args.sizes:
        cmd = [sys.executable, __file__, "--one", str(n)]
        if args.workers:
            cmd += ["--workers", str(args.workers)]
        out = subprocess.run(cmd, check=True, capture_output=True, text=True,
                             env={**os.environ}).stdout.strip().splitlines()[-1]
        rows.append(json.loads(out))
        print(json.dumps(rows[-1]), flush=True)
    print(f"\n{'items':>6} {'RSS before (MiB)':>17} {'peak RSS (MiB)':>15} {'wall (s)':>9}")
    for r in rows:
        print(f"{r['items']:>6} {r['rss_before_mib']:>17.1f} {r['rss_peak_mib']:>15.1f} "
              f"{r['wall_s']:>9.1f}")
    if len(rows) > 1:
        print(f"peak RSS ratio {rows[-1]['items']} / {rows[0]['items']} items: "
              f"{rows[-1]['rss_peak_mib'] / rows[0]['rss_peak_mib']:.3f} (target ≤ 1.2)")


if __name__ == "__main__":
    main()
