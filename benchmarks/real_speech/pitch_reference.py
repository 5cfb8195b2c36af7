"""The reference F0 of every clip of the real-speech set, written to
tests/data/real_speech/pitch_reference.json (the pitch target of docs/probes.md is measured
against it, by tests/acceptance/test_realspeech_targets.py and measure.py).

Run:  PYTHONPATH=src python benchmarks/real_speech/pitch_reference.py [--pool DIR]

The reference is Praat's ``To Pitch (ac)`` at its defaults (75–600 Hz, 10 ms step, voicing
0.45, octave cost 0.01, octave-jump 0.35, voiced/unvoiced 0.14) on the clean clip at its own
rate, with each voiced frame CONFIRMED by at least one of two independent trackers: pYIN
(Mauch & Dixon 2014, ``librosa.pyin``, 65–600 Hz, 64 ms frames, 10 ms hop) or Harvest (Morise
2017, ``pyworld.harvest``, 65–600 Hz, 10 ms). A frame counts when that tracker's value at the
same instant is voiced and within 1 semitone of Praat's; the reference is the median of
Praat's F0 over the confirmed frames. Unconfirmed frames are Praat octave jumps and spurious
high "voicing" on fricatives (e.g. ls-1723-141149-0000: 400–590 Hz frames on a 85–105 Hz
man), which move Praat's plain median by up to 3.5 semitones; pYIN and Harvest alone voice
stationary hum in pauses (ls-696-92939-0000: 120 Hz hum through every pause), which is why
Praat's voicing leads. The per-tracker medians are kept beside the reference.

``--pool DIR`` does the same for the gender training pool (gender_pool.py), a second,
speaker-disjoint check of the pitch probe's settings; it writes DIR/pitch_reference.json.
Needs librosa and pyworld: ``pip install "vocencebench[reference]"``.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import types
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tests"))
import realspeech as rs

FloatArray = npt.NDArray[np.float64]
STEP_S = 0.01
FLOOR_HZ, CEILING_HZ = 75.0, 600.0
CONFIRM_ST = 1.0


def _pyworld() -> Any:
    if "pkg_resources" not in sys.modules:  # pyworld 0.3.5 reads its version through it
        try:
            import pkg_resources  # noqa: F401
        except ImportError:
            stub = types.ModuleType("pkg_resources")
            stub.get_distribution = lambda name: types.SimpleNamespace(  # type: ignore[attr-defined]
                version="unknown")
            sys.modules["pkg_resources"] = stub
    import pyworld

    return pyworld


def _on_grid(t: FloatArray, f: FloatArray, grid: FloatArray) -> FloatArray:
    """``f`` (sampled at ``t``) at the instants ``grid``: the nearest frame within 6 ms, else 0."""
    i = np.clip(np.searchsorted(t, grid), 1, len(t) - 1)
    j = np.where(np.abs(t[i - 1] - grid) < np.abs(t[i] - grid), i - 1, i)
    return np.where(np.abs(t[j] - grid) < 0.006, f[j], 0.0)


def _median(f: FloatArray) -> float | None:
    v = f[f > 0]
    return float(np.median(v)) if v.shape[0] else None


def reference(x: FloatArray, rate: int) -> dict[str, Any]:
    """The reference F0 (Hz) of one clean clip and the trackers' own medians."""
    import librosa
    import parselmouth

    pw = _pyworld()
    p = parselmouth.Sound(x, sampling_frequency=rate).to_pitch_ac(
        time_step=STEP_S, pitch_floor=FLOOR_HZ, pitch_ceiling=CEILING_HZ)
    tp = np.asarray(p.xs(), dtype=np.float64)
    fp = np.asarray(p.selected_array["frequency"], dtype=np.float64)
    hop = round(STEP_S * rate)
    fy, voiced, _ = librosa.pyin(x.astype(np.float32), fmin=65.0, fmax=CEILING_HZ, sr=rate,
                                 frame_length=1 << (round(0.064 * rate) - 1).bit_length(),
                                 hop_length=hop)
    ty = librosa.times_like(fy, sr=rate, hop_length=hop)
    fy = np.where(voiced, fy, 0.0)
    fh, th = pw.harvest(x, rate, f0_floor=65.0, f0_ceil=CEILING_HZ, frame_period=STEP_S * 1000)
    ok = fp > 0
    confirmed = np.zeros_like(ok)
    for t, f in ((ty, fy), (th, fh)):
        g = _on_grid(np.asarray(t, dtype=np.float64), np.asarray(f, dtype=np.float64), tp)
        both = ok & (g > 0)
        dist = np.zeros_like(fp)
        dist[both] = np.abs(12.0 * np.log2(fp[both] / g[both]))
        confirmed |= both & (dist <= CONFIRM_ST)
    ref = float(np.median(fp[confirmed])) if np.count_nonzero(confirmed) >= 3 else None
    return {"reference_hz": ref, "confirmed_frames": int(np.count_nonzero(confirmed)),
            "praat_voiced_frames": int(np.count_nonzero(ok)), "praat_hz": _median(fp),
            "pyin_hz": _median(fy), "harvest_hz": _median(np.asarray(fh, dtype=np.float64))}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--pool", type=Path, help="the gender pool folder (gender_pool.py)")
    args = ap.parse_args()
    out: dict[str, Any] = {}
    if args.pool:
        import soundfile as sf

        with open(args.pool / "pool.jsonl", encoding="utf-8") as fh:
            rows = [json.loads(line) for line in fh]
        for r in rows:
            x, rate = sf.read(args.pool / r["file"], dtype="float64")
            out[r["id"]] = reference(np.asarray(x), int(rate))
            print(r["id"], out[r["id"]]["reference_hz"], file=sys.stderr)
        dest = args.pool / "pitch_reference.json"
    else:
        for c in rs.manifest():
            a = c.audio()
            out[c.id] = reference(np.asarray(a.samples, dtype=np.float64), a.sample_rate)
            print(c.id, out[c.id]["reference_hz"], file=sys.stderr)
        dest = rs.DATA / "pitch_reference.json"
    meta = {"method": "Praat To Pitch (ac) defaults (75-600 Hz, 10 ms) on the clean clip at "
                      "its own rate; median over frames confirmed within 1 semitone by pYIN "
                      "(librosa) or Harvest (pyworld)",
            "praat": _version("praat-parselmouth"), "librosa": _version("librosa"),
            "pyworld": _version("pyworld")}
    with open(dest, "w", encoding="utf-8") as out_fh:
        json.dump({"meta": meta, "clips": out}, out_fh, indent=1, sort_keys=True)
        out_fh.write("\n")
    praat_off = [k for k, v in out.items() if v["reference_hz"] and v["praat_hz"]
                 and abs(12 * math.log2(v["praat_hz"] / v["reference_hz"])) > 1]
    print(f"{len(out)} clips -> {dest}; Praat's plain median > 1 st from the reference on "
          f"{len(praat_off)}: {praat_off}", file=sys.stderr)


def _version(dist: str) -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version(dist)
    except PackageNotFoundError:
        return "unknown"


if __name__ == "__main__":
    main()
