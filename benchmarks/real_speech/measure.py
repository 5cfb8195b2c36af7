"""The probes on the FULL real-speech set: every figure of docs/probes.md's real-speech section.

Run:  PYTHONPATH=src python benchmarks/real_speech/measure.py [--quick]

Requests: each clip is requested as its speaker's sex, age 30, pace/pitch "moderate"/"medium",
loudness "normal" (labels, not d, are compared). References:
* pace — tests/data/real_speech/pace_reference.json (pace_reference.py: script phones over
  *sounding time* from the Silero VAD on the clean clip, speech segments with gaps ≥ 100 ms
  removed), an independent neural segmentation;
* pitch — tests/data/real_speech/pitch_reference.json (pitch_reference.py: Praat's ``To Pitch``
  defaults on the clean clip at its own rate, frames confirmed by pYIN or Harvest); Praat's
  plain default median and pYIN's and Harvest's own medians (same file) are reported beside it;
* loudness — pyloudnorm's ``Meter.integrated_loudness`` (stereo as frames × 2).
"""

from __future__ import annotations

import argparse
import math
import sys
from collections import Counter
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tests"))
sys.path.insert(0, str(Path(__file__).resolve().parent))
from pace_reference import script

import realspeech as rs
from vocencebench.probes import default_probes
from vocencebench.schema import Item

TRAITS = ("pace", "pitch", "loudness", "gender")


def item(c: rs.RealClip) -> Item:
    return Item(id=c.id, instruction="", text=script(c),
                traits={"gender": c.sex, "age": "30", "pace": "moderate", "pitch": "medium",
                        "loudness": "normal", "emotion": "neutral", "accent": "American",
                        "tone": "warm"}, difficulty=1)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true", help="every fourth clip")
    args = ap.parse_args()
    import parselmouth
    import pyloudnorm
    from scipy.stats import spearmanr

    clips = rs.manifest()[:: 4 if args.quick else 1]
    ps = default_probes()
    moved: dict[str, Counter[str]] = {}
    checked: Counter[str] = Counter()
    wrong_dir: dict[str, int] = {}
    ref_rate, our_rate, ds_ref, ds_our = [], [], [], []
    pitch_ok = pitch_n = praat_ok = 0
    tracker_ok: Counter[str] = Counter()
    import json

    with open(rs.DATA / "pitch_reference.json", encoding="utf-8") as fh:
        pitch_ref = json.load(fh)["clips"]
    with open(rs.DATA / "pace_reference.json", encoding="utf-8") as fh:
        pace_ref = json.load(fh)["clips"]
    gender_ok: Counter[str] = Counter()
    gender_n: Counter[str] = Counter()
    stereo_err: list[float] = []
    mono_err: list[float] = []
    margins: list[tuple[str, float, float, float, float, float]] = []
    hum15: Counter[str] = Counter()
    for c in clips:
        a = c.audio()
        x = np.asarray(a.samples, dtype=np.float64)
        r = a.sample_rate
        it = item(c)
        base = ps.measure(a, it)
        sc = ps.speech_check(a)
        margins.append((c.id, sc.speech_s, sc.voiced_s, sc.voiced_share, sc.f0_spread_st,
                        sc.shape_var_db))
        # pace against Silero sounding time (the same phone count divides both)
        pr = pace_ref[c.id]
        if base["pace"].detail.get("phones") != pr["phones"]:
            raise SystemExit(f"{c.id}: phone count changed; rerun pace_reference.py")
        if base["pace"].value is not None:
            ref_rate.append(pr["phones_per_s"])
            our_rate.append(float(base["pace"].value))
            if c.transcript_source == "dataset":
                ds_ref.append(pr["phones_per_s"])
                ds_our.append(float(base["pace"].value))
        # pitch against the confirmed-Praat reference (and Praat's plain defaults)
        ref = parselmouth.Sound(x, sampling_frequency=r).to_pitch()
        f0 = ref.selected_array["frequency"]
        f0 = f0[f0 > 0]
        if f0.shape[0] and base["pitch"].value is not None:
            ours = float(base["pitch"].value)
            pitch_n += 1
            pitch_ok += abs(12 * math.log2(ours / pitch_ref[c.id]["reference_hz"])) <= 1.0
            praat_ok += abs(12 * math.log2(ours / np.median(f0))) <= 1.0
            for tracker in ("pyin", "harvest"):
                hz = pitch_ref[c.id][f"{tracker}_hz"]
                tracker_ok[tracker] += hz is not None and abs(12 * math.log2(ours / hz)) <= 1.0
        gender_n[c.sex] += 1
        gender_ok[c.sex] += base["gender"].label == c.sex
        # loudness: mono vs pyloudnorm, stereo (dual mono and decorrelated) vs pyloudnorm
        mono_ref = pyloudnorm.Meter(r).integrated_loudness(x)
        mono_err.append(abs(float(base["loudness"].value or 0) - mono_ref))
        other = rs.white_noise(x, r, 30.0)
        for right in (x, other):
            st = rs.stereo(x, r, right)
            ours = ps.measure(st, it)["loudness"].value
            theirs = pyloudnorm.Meter(r).integrated_loudness(np.stack([x, right], axis=1))
            stereo_err.append(abs(float(ours or 0) - theirs))
        # hum at −15 dB re speech
        for hz in (50.0, 60.0):
            h = ps.measure(rs.make_audio(rs.hum(x, r, hz, -15.0), r), it)
            checked[f"hum {hz:.0f} Hz -15 dB"] += 1
            for t in TRAITS:
                if h[t].label != base[t].label:
                    hum15[f"{hz:.0f}/{t}"] += 1
        # the invariance table
        for name, fn in rs.INVARIANT.items():
            y, ry = fn(x, r)
            got = ps.measure(rs.make_audio(y, ry), it)
            checked[name] += 1
            for t in TRAITS:
                if got[t].label != base[t].label:
                    moved.setdefault(name, Counter())[t] += 1
        st = ps.measure(rs.stereo(x, r), it)
        checked["mono → stereo (dual mono)"] += 1
        for t in TRAITS:
            if st[t].label != base[t].label:
                moved.setdefault("mono → stereo (dual mono)", Counter())[t] += 1
        for name, (fn, trait, sign) in rs.DIRECTIONAL.items():
            y, ry = fn(x, r)
            got = ps.measure(rs.make_audio(y, ry), it)
            checked[name] += 1
            for t in TRAITS:
                if got[t].label != base[t].label:
                    moved.setdefault(name, Counter())[t] += 1
            v0, v1 = base[trait].value, got[trait].value
            if v0 is None or v1 is None or (float(v1) - float(v0)) * sign <= 0:
                wrong_dir[name] = wrong_dir.get(name, 0) + 1
    n = len(clips)
    print(f"clips: {n}")
    print(f"pace: Spearman vs Silero sounding-time rate {spearmanr(ref_rate, our_rate)[0]:.3f}"
          f" (n={len(ref_rate)}); dataset transcripts only "
          f"{spearmanr(ds_ref, ds_our)[0]:.3f} (n={len(ds_ref)})")
    print(f"pitch: within 1 st of the reference on {pitch_ok}/{pitch_n} "
          f"({pitch_ok / max(pitch_n, 1):.1%}); of Praat's plain defaults on {praat_ok}/{pitch_n}"
          f"; of pYIN's own median on {tracker_ok['pyin']}/{pitch_n}, of Harvest's on "
          f"{tracker_ok['harvest']}/{pitch_n}")
    print("pitch/gender buckets moved by hum at -15 dB re speech: "
          + ", ".join(f"{k}: {v}" for k, v in sorted(hum15.items())))
    tot = sum(gender_ok.values()) / sum(gender_n.values())
    print(f"gender (held out: no speaker of this set is in the model's training data): "
          f"{tot:.1%} (women {gender_ok['female'] / gender_n['female']:.1%}, "
          f"men {gender_ok['male'] / gender_n['male']:.1%})")
    print(f"loudness: |ours - pyloudnorm| mono max {max(mono_err):.2e} LU, stereo max "
          f"{max(stereo_err):.2e} LU")
    m = np.array([row[1:] for row in margins])
    print("speech check on real clips, min (speech_s, voiced_s, voiced_share, f0_spread_st, "
          f"shape_var_db): {np.round(m.min(axis=0), 3).tolist()}; rejected "
          f"{sum(1 for c in clips if not ps.speech_check(c.audio()).present)}")
    print("\n| manipulation | n | pace | pitch | loudness | gender | wrong direction |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: |")
    for name in [*rs.INVARIANT, "mono → stereo (dual mono)", *rs.DIRECTIONAL]:
        cnt = moved.get(name, Counter())
        wd = wrong_dir.get(name, "") if name in rs.DIRECTIONAL else ""
        print(f"| {name} | {checked[name]} | " + " | ".join(
            str(cnt[t]) for t in TRAITS) + f" | {wd} |")


if __name__ == "__main__":
    main()
