"""Build the gender probe's training pool: real read speech of LibriSpeech train-clean-100
readers that are NOT in the shipped validation set (tests/data/real_speech), cut into short
excerpts like the probe's clips. Nothing this script writes is committed: neither the audio
nor any feature table. ``fit_gender.py`` reads the pool's audio (``pool.jsonl`` and the FLAC
files) and computes the probe's own features from it on every run; what the repository
keeps is only the fitted model, src/vocencebench/probes/gender_model.json. To refit or
re-measure, rebuild the pool with this script first.

Run (needs the Resemblyzer repository as a bare git mirror, e.g. from the search tool's
``fetch`` of github:resemble-ai/Resemblyzer):

    PYTHONPATH=src python benchmarks/real_speech/gender_pool.py --mirrors /work/.mirror \
        [--out DIR]   # writes DIR/*.flac + DIR/pool.jsonl (default /tmp/vocence-gender-pool)

Source: github:resemble-ai/Resemblyzer @ 15d828ed, audio_data/librispeech_train-clean-100/
(one utterance per reader, 252 readers; 84 of them are in the validation set and are left
out here), sex labels from the SPEAKERS.TXT shipped beside them. Licence CC BY 4.0
(LibriSpeech, Panayotov et al. 2014). Each utterance gives up to ``PER_SPEAKER`` excerpts of
2–3.5 s between pauses (Silero VAD, ``silero.py``), topped up with fixed 3 s windows that
are at least 60 % speech where the utterance has too few pauses; 16 kHz mono.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import soundfile as sf

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tests"))
import build_set as bs
import silero

import realspeech as rs

PER_SPEAKER = 3
EXCERPT_MIN_S, EXCERPT_MAX_S = 2.0, 3.5
#: Length (s) of the fixed windows cut where no pause-bounded excerpt fits.
FIXED_S = 3.0


def excerpts(y: np.ndarray, rate: int) -> list[tuple[float, float]]:
    """Non-overlapping (start s, end s) excerpts of 2–3.5 s bounded by pauses ≥ 0.15 s."""
    segs = silero.segments(y.astype(np.float32), min_silence_s=0.05)
    merged: list[list[float]] = []
    for a, b in segs:
        if merged and a - merged[-1][1] < bs.PAUSE_S:
            merged[-1][1] = b
        else:
            merged.append([a, b])
    dur = y.shape[0] / rate
    out: list[tuple[float, float]] = []
    i = 0
    while i < len(merged) and len(out) < PER_SPEAKER:
        taken = False
        for j in range(i, len(merged)):
            span = merged[j][1] - merged[i][0]
            if span > EXCERPT_MAX_S:
                break
            if span >= EXCERPT_MIN_S:
                lo = max(0.0, merged[i][0] - bs.MARGIN_S)
                hi = min(dur, merged[j][1] + bs.MARGIN_S)
                if i > 0:
                    lo = max(lo, (merged[i - 1][1] + merged[i][0]) / 2)
                if j + 1 < len(merged):
                    hi = min(hi, (merged[j][1] + merged[j + 1][0]) / 2)
                out.append((round(lo, 3), round(hi, 3)))
                i, taken = j + 1, True
                break
        if not taken:
            i += 1
    if len(out) < PER_SPEAKER:  # no pause where a cut fits: fixed windows inside the speech
        speech = [(a, b) for a, b in segs]
        t = speech[0][0] if speech else dur
        while len(out) < PER_SPEAKER and t + FIXED_S <= dur:
            if all(t + FIXED_S <= lo or t >= hi for lo, hi in out):
                inside = sum(max(0.0, min(b, t + FIXED_S) - max(a, t)) for a, b in speech)
                if inside >= 0.6 * FIXED_S:
                    out.append((round(t, 3), round(t + FIXED_S, 3)))
            t += FIXED_S / 2
    return sorted(out)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--mirrors", type=Path, required=True)
    ap.add_argument("--out", type=Path, default=Path("/tmp/vocence-gender-pool"))
    args = ap.parse_args()
    out: Path = args.out
    out.mkdir(parents=True, exist_ok=True)
    sexes = bs.libri_speakers(args.mirrors)
    held_out = {c.speaker for c in rs.manifest() if c.dataset.startswith("LibriSpeech")}
    ls = subprocess.run(
        ["git", f"--git-dir={args.mirrors / 'resemble-ai+Resemblyzer' / 'repo'}", "ls-tree",
         "--name-only", bs.RESEMBLYZER[1], "audio_data/librispeech_train-clean-100/"],
        check=True, capture_output=True, text=True).stdout.split()
    rows = []
    for p in sorted((p for p in ls if p.endswith(".flac")),
                    key=lambda p: int(os.path.basename(p).split("-")[0])):
        spk = os.path.basename(p).split("-")[0]
        if spk in held_out:
            continue
        y, fmt = bs.decode(bs.git_show(args.mirrors, *bs.RESEMBLYZER, p))
        for k, (lo, hi) in enumerate(excerpts(y, bs.RATE)):
            cid = f"pool-{os.path.basename(p)[:-5]}-{k}"
            seg = y[round(lo * bs.RATE):round(hi * bs.RATE)]
            sf.write(out / f"{cid}.flac", seg, bs.RATE, format="FLAC", subtype="PCM_16")
            rows.append({"id": cid, "file": f"{cid}.flac", "speaker": spk, "sex": sexes[spk],
                         "dataset": "LibriSpeech train-clean-100",
                         "source_repo": f"github:{bs.RESEMBLYZER[0]}",
                         "source_commit": bs.RESEMBLYZER[1], "source_path": p,
                         "source_format": fmt, "licence": bs.LIBRI_LICENCE,
                         "excerpt_start_s": lo, "excerpt_end_s": hi})
        print(f"{spk} {sexes[spk]}: {sum(r['speaker'] == spk for r in rows)} excerpts",
              file=sys.stderr)
    with open(out / "pool.jsonl", "w", encoding="utf-8") as fh:
        for r in rows:
            fh.write(json.dumps(r, sort_keys=True) + "\n")
    n_f = sum(r["sex"] == "female" for r in rows)
    print(f"{len(rows)} excerpts ({n_f} female) of {len({r['speaker'] for r in rows})} readers "
          f"in {out}", file=sys.stderr)


if __name__ == "__main__":
    main()
