"""Time of the robustness section against the naive loop of one ``decide`` per variant.

Two inputs at n = 496 paired items:

* ``demo``  — the demo's own scores.jsonl (espeak-flat vs espeak-follow, 4 probe dimensions,
  no gate): ``tests/data/demo_scores.jsonl`` unless ``--scores`` names another file;
* ``dense`` — a synthetic duel built to defeat every shortcut: 8 dimensions (five ordinal or
  categorical, a continuous age, two judged rubric means), a WER per clip, so all 14 variants
  are computed, and no two items alike (every item its own group, every resample distinct).

``section`` is :func:`vocencebench.robustness.robustness` (the headline decide, every variant
and the 1000 weightings), best of ``--repeat`` runs, wall and CPU time. ``naive`` is what the
same section costs as one :func:`vocencebench.decide.decide` per variant and per weighting
(1 + variants + 1000 of them): a few are timed (``--naive-samples``) and the mean is
multiplied out, since running all of them takes minutes.

Run:  PYTHONPATH=src python benchmarks/bench_robustness.py [--repeat 3] [--scores FILE]
      [--dense-n N]
"""

from __future__ import annotations

import argparse
import math
import platform
import time
from pathlib import Path

import numpy as np

from vocencebench.constants import ROBUSTNESS_WEIGHT_DRAWS
from vocencebench.decide import composite, decide
from vocencebench.robustness import robustness, robustness_of_file
from vocencebench.schema import SampleScore
from vocencebench.scores import read_scores

ROOT = Path(__file__).resolve().parents[1]
DEMO = ROOT / "tests" / "data" / "demo_scores.jsonl"


def _dense(n: int = 496, seed: int = 496) -> list[tuple[SampleScore, SampleScore]]:
    rng = np.random.Generator(np.random.PCG64(seed))
    pairs = []
    for i in range(n):
        row = []
        for system, skill in (("incumbent", 0.55), ("challenger", 0.7)):
            d = {t: float(rng.choice([0.0, 0.5, 1.0], p=[(1 - skill) / 2, (1 - skill) / 2,
                                                         skill]))
                 for t in ("pace", "pitch", "loudness")}
            d |= {t: float(rng.random() < skill) for t in ("gender", "emotion")}
            d["age"] = float(np.clip(1 - abs(rng.normal(0, 10)) / 16, 0, 1))
            d |= {t: float(np.clip(rng.normal(2 * skill + 0.6, 0.6), 0, 3)) / 3
                  for t in ("tone", "naturalness")}
            wer = float(rng.choice([0.0, 0.05, 0.12, 0.18, 0.25]))
            g = 1 if wer <= 0.15 else 0
            row.append(SampleScore(f"it-{i:04d}", system, composite(d, g), d, gate=g, wer=wer))
        pairs.append((row[0], row[1]))
    return pairs


def _time(fn: object, repeat: int) -> tuple[float, float]:
    best_wall = best_cpu = math.inf
    for _ in range(repeat):
        w, c = time.perf_counter(), time.process_time()
        fn()  # type: ignore[operator]
        best_wall = min(best_wall, time.perf_counter() - w)
        best_cpu = min(best_cpu, time.process_time() - c)
    return best_wall, best_cpu


def _naive_decide(pairs: list[tuple[SampleScore, SampleScore]], samples: int) -> float:
    """Mean wall time of one decide on this duel's composites (the naive loop's unit)."""
    a = [float(p[0].S or 0.0) for p in pairs]
    b = [float(p[1].S or 0.0) for p in pairs]
    decide(a, b)
    t = time.perf_counter()
    for _ in range(samples):
        decide(a, b)
    return (time.perf_counter() - t) / samples


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--scores", type=Path, default=DEMO)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--naive-samples", type=int, default=5)
    ap.add_argument("--dense-n", type=int, default=496, help="items of the dense duel")
    args = ap.parse_args()
    with open("/proc/loadavg") as fh:
        load = fh.read().split()[0]
    print(f"python {platform.python_version()}, numpy {np.__version__}, load average {load}")
    dense = _dense(args.dense_n)
    cases = {
        "demo": (lambda: robustness_of_file(args.scores), None),
        "dense": (lambda: robustness(dense, labels=("incumbent", "challenger")), dense),
    }
    print(f"{'input':<6} {'n':>4} {'variants':>8} {'section wall':>12} {'section cpu':>11} "
          f"{'decide':>8} {'naive (extrapolated)':>21} {'naive / section':>15}")
    for name, (run, pairs) in cases.items():
        section = run()
        wall, cpu = _time(run, args.repeat)
        if pairs is None:  # the file's own composites, for the naive unit
            paired = read_scores(args.scores).pair()
            pairs = [(SampleScore(i, paired.incumbent, a), SampleScore(i, paired.challenger, b))
                     for i, a, b in zip(paired.items, paired.a, paired.b, strict=True)]
        one = _naive_decide(pairs, args.naive_samples)
        computed = section.counts["computed"]
        decides = 1 + computed + (ROBUSTNESS_WEIGHT_DRAWS if section.weights
                                  and section.weights.computed else 0)
        naive = one * decides
        print(f"{name:<6} {section.n:>4} {computed:>8} {wall:>11.3f}s {cpu:>10.3f}s "
              f"{one * 1000:>6.1f}ms {f'{decides} × = {naive:.1f}s':>21} {naive / wall:>14.0f}×")
        print(f"       {section.summary}")


if __name__ == "__main__":
    main()
