"""Time and peak memory of ``decide`` against the naive NumPy bootstrap it replaces.

For n paired items (default 496, 10 000, 100 000) both implementations get the same
synthetic paired scores (uniform S_a, S_b = S_a + noise, clipped to [0, 1]):

* ``decide``  — vocencebench.decide.decide: PCG64 raw stream, exact ``(raw·n) >> 64``
  indices, ``math.fsum`` means, streamed in blocks of ≈ 4 M indices (bit-stable);
* ``naive``   — ``Generator(PCG64(seed)).integers(0, n, (2000, n))``, ``values[idx].mean(1)``,
  ``np.percentile``: fast, but its indices may change with a NumPy release and its sums
  with SIMD width. It materialises the whole (2000, n) index matrix; above
  ``--naive-max-elements`` (default 4·10⁸ indices, 3.2 GB) it is run in the same row blocks
  and reported as "naive (blocked)".

Each measurement runs in a fresh subprocess: wall time is the best of ``--repeat`` runs
(``time.perf_counter``), peak memory is the growth of the process's maximum resident set
(``resource.getrusage(RUSAGE_SELF).ru_maxrss``) over the level reached after the inputs were
built and one warm-up ``decide`` on 10 items ran.

Run:  python benchmarks/bench_decide.py [--sizes 496 10000 100000] [--repeat 5]
"""

from __future__ import annotations

import argparse
import json
import math
import platform
import resource
import subprocess
import sys
import time

import numpy as np


def _inputs(n: int) -> tuple[list[float], list[float]]:
    rng = np.random.default_rng(12345)
    a = rng.uniform(0.2, 0.9, n)
    b = np.clip(a + rng.normal(0.02, 0.1, n), 0.0, 1.0)
    return a.tolist(), b.tolist()


def _naive(a: list[float], b: list[float], *, max_elements: int) -> float:
    """LCB the usual way: Generator.integers + np.mean + np.percentile (not bit-stable)."""
    n = len(a)
    delta = np.asarray(b) - np.asarray(a)
    rng = np.random.Generator(np.random.PCG64(3151662))
    if 2000 * n <= max_elements:
        idx = rng.integers(0, n, size=(2000, n))
        means = delta[idx].mean(axis=1)
    else:
        rows = max(1, (1 << 22) // n)
        parts = []
        for start in range(0, 2000, rows):
            idx = rng.integers(0, n, size=(min(rows, 2000 - start), n))
            parts.append(delta[idx].mean(axis=1))
        means = np.concatenate(parts)
    return float(np.percentile(means, 5))


def _measure(impl: str, n: int, repeat: int, max_elements: int) -> dict[str, object]:
    from vocencebench.decide import decide

    a, b = _inputs(n)
    decide(a[:10], b[:10])  # warm-up: imports, first-call overheads
    _naive(a[:10], b[:10], max_elements=max_elements)
    base_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    best = math.inf
    lcb = math.nan
    for _ in range(repeat):
        t0 = time.perf_counter()
        lcb = decide(a, b).lcb if impl == "decide" else _naive(a, b, max_elements=max_elements)
        best = min(best, time.perf_counter() - t0)
    peak_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    blocked = impl == "naive" and 2000 * n > max_elements
    return {"impl": impl + (" (blocked)" if blocked else ""), "n": n, "seconds": best,
            "peak_mib": (peak_kib - base_kib) / 1024, "lcb": lcb}


def main() -> None:
    ap = argparse.ArgumentParser(description="benchmark vocencebench.decide.decide")
    ap.add_argument("--sizes", type=int, nargs="+", default=[496, 10_000, 100_000])
    ap.add_argument("--repeat", type=int, default=0,
                    help="timed runs per size (default: 5 for n ≤ 10 000, else 1)")
    ap.add_argument("--naive-max-elements", type=int, default=400_000_000)
    ap.add_argument("--one", nargs=2, metavar=("IMPL", "N"), help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.one:
        impl, n = args.one[0], int(args.one[1])
        print(json.dumps(_measure(impl, n, args.repeat or 1, args.naive_max_elements)))
        return

    print(f"python {platform.python_version()} · numpy {np.__version__} · "
          f"{platform.machine()} · {platform.processor() or platform.system()}")
    header = (f"{'n':>8}  {'decide s':>9}  {'peak MiB':>8}  {'naive s':>8}  {'peak MiB':>8}  "
              f"{'time ×':>6}  naive kind")
    print(header)
    print("-" * len(header))
    for n in args.sizes:
        repeat = args.repeat or (5 if n <= 10_000 else 1)
        res = {}
        for impl in ("decide", "naive"):
            out = subprocess.run(
                [sys.executable, __file__, "--one", impl, str(n), "--repeat", str(repeat),
                 "--naive-max-elements", str(args.naive_max_elements)],
                capture_output=True, text=True, check=True,
            )
            res[impl] = json.loads(out.stdout)
        d, v = res["decide"], res["naive"]
        ratio = float(d["seconds"]) / float(v["seconds"])  # type: ignore[arg-type]
        print(f"{n:>8}  {d['seconds']:>9.3f}  {d['peak_mib']:>8.1f}  {v['seconds']:>8.3f}  "
              f"{v['peak_mib']:>8.1f}  {ratio:>6.1f}  {v['impl']}")
    print("decide: bit-stable (PCG64 raw stream, exact indices, fsum means); naive: "
          "Generator.integers + np.mean (may change across NumPy releases / CPUs).")


if __name__ == "__main__":
    main()
