"""Calibration of the neural built-ins: what the probes read on their own output.

Renders the corpus with ``hibari-follow`` (and, with ``--system hibari``, the plain voice),
runs the default probes (or ``--classifiers``) on every clip, and prints, per requested level,
how many clips each probe put in each bucket, plus the median measured value: the table in
docs/adapters.md ("Neural built-ins"). Re-run it whenever the probes change::

    PYTHONPATH=$PWD/src .venv/bin/python benchmarks/calibrate_hibari.py            # 496 items
    PYTHONPATH=$PWD/src .venv/bin/python benchmarks/calibrate_hibari.py --limit 60 --every 8
"""

from __future__ import annotations

import argparse
import collections
import statistics
import sys
import time

from vocencebench.audio import load_audio
from vocencebench.corpus import load_benchmark
from vocencebench.norms import age_group
from vocencebench.probes import default_probes
from vocencebench.systems.hibari import HibariSystem


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--system", default="hibari-follow", choices=("hibari", "hibari-follow"))
    ap.add_argument("--corpus", default="benchmark_v1")
    ap.add_argument("--limit", type=int, default=None, help="only the first N selected items")
    ap.add_argument("--every", type=int, default=1, help="take every k-th item")
    args = ap.parse_args(argv)

    items = list(load_benchmark(args.corpus))[:: args.every]
    if args.limit:
        items = items[: args.limit]
    system = HibariSystem(args.system)
    probes = default_probes()
    t0 = time.perf_counter()
    wavs = system.synthesize_many([(it.text, it.instruction) for it in items])
    t_synth = time.perf_counter() - t0
    audio_s = 0.0
    # (trait, requested level) -> Counter(measured label); values per (trait, level)
    counts: dict[tuple[str, str], collections.Counter[str]] = collections.defaultdict(
        collections.Counter)
    values: dict[tuple[str, str], list[float]] = collections.defaultdict(list)
    d_sum: dict[str, list[float]] = collections.defaultdict(list)
    t1 = time.perf_counter()
    for it, wav in zip(items, wavs, strict=True):
        if isinstance(wav, Exception):
            print(f"{it.id}: {wav}", file=sys.stderr)
            continue
        audio = load_audio(wav, name=it.id)
        audio_s += audio.duration
        results = probes.measure(audio, it)
        group = age_group(it.traits["age"])
        for trait, r in results.items():
            level = it.traits[trait]
            key = level
            if trait == "gender":
                key = f"{level} ({group})"
            elif trait == "pitch":
                key = f"{level} ({it.traits['gender']})"
            counts[(trait, key)][r.label] += 1
            if isinstance(r.value, int | float):
                values[(trait, key)].append(float(r.value))
            d_sum[trait].append(r.d)
    t_probe = time.perf_counter() - t1

    print(f"# {system.system_id}: {len(items)} items, {audio_s:.0f} s of audio; synthesis "
          f"{t_synth:.1f} s ({audio_s / t_synth:.0f}x real time), probes {t_probe:.1f} s\n")
    print("| trait | requested | n | measured buckets | in bucket | median value |")
    print("| --- | --- | ---: | --- | ---: | ---: |")
    for (trait, key), c in sorted(counts.items()):
        n = sum(c.values())
        want = key.split(" ")[0]
        hit = c.get(want, 0)
        vals = values.get((trait, key))
        med = f"{statistics.median(vals):.1f}" if vals else ""
        buckets = ", ".join(f"{lab} {k}" for lab, k in c.most_common())
        print(f"| {trait} | {key} | {n} | {buckets} | {100 * hit / n:.1f} % | {med} |")
    print()
    for trait, ds in sorted(d_sum.items()):
        print(f"mean d {trait}: {statistics.fmean(ds):.3f}")
    return 0




if __name__ == "__main__":
    raise SystemExit(main())
