"""How good a gate is Whisper tiny.en? The table of docs/probes.md, measured.

Transcribes, through the project's own gate (``whisper_transcriber("tiny.en")`` from the
extra ``whisper-offline``, ``textnorm.word_errors``, τ = ``constants.WER_THRESHOLD``):

* the 40 real read-speech clips of tests/data/asr_speech (published transcripts);
* the first N items of the shipped corpus (benchmark_v1, corpus order) rendered by each
  built-in system named (default: hibari-follow 40, espeak-flat 20, espeak-follow 40, as in
  issue 23), each clip synthesised with ``adapters.synthesize_item`` as a run does.

Run (1 CPU thread, int8, greedy, as the gate runs on a CPU):

    PYTHONPATH=src python benchmarks/real_speech/gate_tiny_en_table.py --threads 1 \\
        [--sets real,hibari-follow:40,espeak-flat:20,espeak-follow:40] [--json OUT]

Printed per set: clips, mean and median of the per-clip WERs (one looping transcript can
reach a WER of 9 and carry a mean of 20 clips), corpus WER (errors / reference words),
clips at or below τ, the clips above τ with their WER, and the wall time (synthesis and
recognition apart); then the Markdown table for docs/probes.md.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path
from typing import Any

from vocencebench import load_benchmark
from vocencebench.adapters import synthesize_item
from vocencebench.audio import load_audio
from vocencebench.constants import WER_THRESHOLD
from vocencebench.specs import build_system
from vocencebench.textnorm import word_errors
from vocencebench.transcribe import whisper_transcriber

ROOT = Path(__file__).resolve().parents[2]
SET = ROOT / "tests" / "data" / "asr_speech"
DEFAULT_SETS = "real,hibari-follow:40,espeak-flat:20,espeak-follow:40"


def _real() -> list[tuple[str, str, Any]]:
    rows = [json.loads(x) for x in (SET / "manifest.jsonl").read_text("utf-8").splitlines()]
    return [(r["id"], r["transcript"], load_audio(SET / r["file"])) for r in rows]


def measure(asr: Any, name: str, clips: list[tuple[str, str, Any]], synth_s: float
            ) -> dict[str, Any]:
    t0 = time.perf_counter()
    rows = []
    for item_id, script, audio in clips:
        res = word_errors(script, asr(audio).text)
        rows.append({"id": item_id, "wer": res.wer, "ref": res.reference_norm,
                     "hyp": res.hypothesis_norm,
                     "errors": res.substitutions + res.deletions + res.insertions,
                     "words": res.reference_words})
    asr_s = time.perf_counter() - t0
    wers = [r["wer"] for r in rows]
    return {"set": name, "clips": len(rows), "mean_wer": statistics.fmean(wers),
            "median_wer": statistics.median(wers),
            "corpus_wer": sum(r["errors"] for r in rows) / sum(r["words"] for r in rows),
            "within": sum(w <= WER_THRESHOLD for w in wers), "synth_s": synth_s,
            "asr_s": asr_s, "rows": rows}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--threads", type=int, default=1, help="CPU threads for Whisper (1)")
    ap.add_argument("--sets", default=DEFAULT_SETS,
                    help=f"'real' and SYSTEM:N entries, comma-separated ({DEFAULT_SETS})")
    ap.add_argument("--json", type=Path, help="write every clip's WER and texts here")
    args = ap.parse_args()

    start = time.perf_counter()
    asr = whisper_transcriber("tiny.en", device="cpu", compute_type="int8",
                              cpu_threads=args.threads)
    t0 = time.perf_counter()
    asr(load_audio(SET / "jfk-inaugural-1961.flac"))  # loads the weights, outside the timings
    print(f"engine: {asr.engine}\n{args.threads} CPU thread(s), τ = {WER_THRESHOLD:g}; model "
          f"load + first clip {time.perf_counter() - t0:.1f} s", flush=True)
    items = load_benchmark("benchmark_v1")
    results = []
    for entry in args.sets.split(","):
        name, _, n = entry.partition(":")
        if name == "real":
            results.append(measure(asr, "real read speech (tests/data/asr_speech)", _real(),
                                   0.0))
        else:
            system = build_system(name)
            t0 = time.perf_counter()
            clips = [(it.id, it.text, load_audio(synthesize_item(system, it)))
                     for it in items[: int(n)]]
            results.append(measure(asr, f"{name}, corpus items", clips,
                                   time.perf_counter() - t0))
        r = results[-1]
        print(f"\n{r['set']}: {r['clips']} clips, mean WER {r['mean_wer']:.3f} (median "
              f"{r['median_wer']:.3f}), corpus WER "
              f"{r['corpus_wer']:.3f}, {r['within']}/{r['clips']} at or below τ; synthesis "
              f"{r['synth_s']:.0f} s, recognition {r['asr_s']:.0f} s "
              f"({r['asr_s'] / r['clips']:.2f} s per clip)", flush=True)
        above = [f"{x['id']} {x['wer']:.3f}" for x in r["rows"] if x["wer"] > WER_THRESHOLD]
        if above:
            print("  above τ: " + ", ".join(above))
    total = time.perf_counter() - start
    print(f"\nwall time {total:.0f} s in all (model load included)\n")
    print(f"| audio | clips | mean WER | median WER | corpus WER | clips at or below τ = "
          f"{WER_THRESHOLD:g} |")
    print("| --- | ---: | ---: | ---: | ---: | ---: |")
    for r in results:
        print(f"| {r['set']} | {r['clips']} | {r['mean_wer']:.3f} | {r['median_wer']:.3f} | "
              f"{r['corpus_wer']:.3f} | {r['within']} |")
    if args.json:
        args.json.write_text(json.dumps({"engine": asr.engine, "threads": args.threads,
                                         "wall_s": total, "sets": results}, indent=1,
                                        ensure_ascii=False) + "\n", encoding="utf-8")


if __name__ == "__main__":
    sys.exit(main())
