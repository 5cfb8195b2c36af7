"""The report's clips: how large a run's report folder gets, how long rendering it takes, and
FLAC (what the report writes) beside Ogg Opus (the alternative) for the same clips.

    PYTHONPATH=src .venv/bin/python benchmarks/bench_report_clips.py [RUN_DIR]

RUN_DIR defaults to runs/demo (``make demo``). The run is copied (without its cache) to a
temporary folder and re-rendered there from its cache, so the run itself is not touched.
Prints: render time without and with clips (s), the report folder's size minus the cache
(MB) against the 25 MB budget, and per codec the bytes and the largest difference between
the file's duration and the source clip's (ms).
"""

from __future__ import annotations

import io
import shutil
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import soundfile as sf
import soxr

from vocencebench.cache import Cache
from vocencebench.clips import find_cache, read_clip, select_clips
from vocencebench.result import load_run, save_run

BUDGET_MB = 25.0


def folder_mb(path: Path) -> float:
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file()) / 1e6


def main() -> int:
    src = Path(sys.argv[1] if len(sys.argv) > 1 else "runs/demo")
    h = load_run(src)
    cache, note = find_cache(h.metadata, src)
    if cache is None:
        print(note)
        return 1
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "run"
        out.mkdir()
        shutil.copy2(src / "run.json", out / "run.json")
        t0 = time.perf_counter()
        save_run(h, out, clips=False)
        plain = time.perf_counter() - t0
        t0 = time.perf_counter()
        save_run(h, out, cache=cache)
        with_clips = time.perf_counter() - t0
        clips = sorted((out / "clips").iterdir())
        print(f"render without clips: {plain:.2f} s; with clips: {with_clips:.2f} s "
              f"({len(clips)} FLAC files)")
        print(f"report folder (run.json, scores, reports, clips; no cache): "
              f"{folder_mb(out):.1f} MB (budget {BUDGET_MB:g} MB); clips/: "
              f"{sum(f.stat().st_size for f in clips) / 1e6:.1f} MB")
    sel = select_clips(h.pairs, h.labels, h.registry)
    sizes = {"FLAC 16-bit (native rate)": 0, "Ogg Opus (48 kHz, libsndfile default)": 0}
    drift = dict.fromkeys(sizes, 0.0)
    wav = 0
    with Cache(cache, readonly=True) as store:
        for pick in sel.picks:
            p = h.pairs[pick.index]
            for label, an in zip(h.labels, (p.analysis_a, p.analysis_b), strict=True):
                data = read_clip(store, h.metadata["systems"][label], p.item, an.sha256)
                if isinstance(data, str):
                    continue
                wav += len(data)
                x, rate = sf.read(io.BytesIO(data), dtype="float32")
                truth = len(x) / rate
                for name, fmt, sub, r, y in (
                        ("FLAC 16-bit (native rate)", "FLAC", "PCM_16", rate, x),
                        ("Ogg Opus (48 kHz, libsndfile default)", "OGG", "OPUS", 48000,
                         soxr.resample(x, rate, 48000))):
                    buf = io.BytesIO()
                    sf.write(buf, np.asarray(y), r, format=fmt, subtype=sub)
                    sizes[name] += len(buf.getvalue())
                    info = sf.info(io.BytesIO(buf.getvalue()))
                    drift[name] = max(drift[name], abs(info.frames / info.samplerate - truth))
    print(f"the same clips as WAV: {wav / 1e6:.2f} MB")
    for name, n in sizes.items():
        print(f"{name}: {n / 1e6:.2f} MB ({100 * n / wav:.0f}% of WAV); largest duration "
              f"difference from the source (decoder's frame count): {1000 * drift[name]:.2f} ms")
    return 0


if __name__ == "__main__":
    sys.exit(main())
