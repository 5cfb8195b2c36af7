"""The reference speaking rate of every clip of the real-speech set, written to
tests/data/real_speech/pace_reference.json (the pace target of docs/probes.md is measured
against it, by tests/acceptance/test_realspeech_targets.py and measure.py).

Run:  PYTHONPATH=src python benchmarks/real_speech/pace_reference.py

The reference is the script's phones (and syllables) over the clip's *sounding time*: the
summed speech segments of the Silero VAD (silero.py: the ONNX network of the ``silero-vad``
wheel, threshold 0.5, leave speech below 0.35 for ≥ 100 ms, drop segments under 60 ms) on the
clean clip. Silero is a neural VAD that shares nothing with the pace probe's own voice
activity (``probes/vad.py``), so the rank correlation between the two rates tests the probe's
timing against an independent segmentation. The counts come from the same script and the
same counter the probe uses (``syllables.count_syllables`` of the manifest transcript), so
only the timing differs; the test checks that the stored phone count still equals the
probe's. Stored so that no test needs Silero: ``pip install "vocencebench[reference]"``
(silero-vad, onnxruntime) is needed only to rebuild this file.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tests"))
sys.path.insert(0, str(Path(__file__).resolve().parent))
import silero
from pitch_reference import _version

import realspeech as rs
from vocencebench.probes.syllables import count_syllables

DEST = rs.DATA / "pace_reference.json"
#: Silero's segmentation settings (silero.segments); 100 ms is the probe's own pause threshold.
THRESHOLD = 0.5
MIN_SILENCE_S = 0.1
MIN_SPEECH_S = 0.06


def script(c: rs.RealClip) -> str:
    """The script the probe is given for this clip (measure.py and the tests use the same)."""
    return c.transcript or "hello"


def reference(c: rs.RealClip) -> dict[str, Any]:
    a = c.audio()
    if a.sample_rate != silero.RATE:
        raise SystemExit(f"{c.id}: Silero runs at 16 kHz, the clip is {a.sample_rate} Hz")
    segs = silero.segments(np.asarray(a.samples, dtype=np.float32), threshold=THRESHOLD,
                           min_silence_s=MIN_SILENCE_S, min_speech_s=MIN_SPEECH_S)
    sounding = sum(e - s for s, e in segs)
    if sounding <= 0:
        raise SystemExit(f"{c.id}: Silero found no speech; the clip does not belong in the set")
    n = count_syllables(script(c))
    return {"phones": n.phones, "syllables": n.total, "sounding_s": round(sounding, 4),
            "segments": [[round(s, 4), round(e, 4)] for s, e in segs],
            "phones_per_s": n.phones / sounding, "syllables_per_s": n.total / sounding}


def main() -> None:
    out = {}
    for c in rs.manifest():
        out[c.id] = reference(c)
        print(c.id, round(out[c.id]["phones_per_s"], 2), file=sys.stderr)
    meta = {"method": "script phones and syllables (syllables.count_syllables of the manifest "
                      "transcript) over the summed speech segments of the Silero VAD on the "
                      f"clean clip (threshold {THRESHOLD}, exit below {THRESHOLD - 0.15} for "
                      f">= {MIN_SILENCE_S} s, segments >= {MIN_SPEECH_S} s)",
            "silero-vad": _version("silero-vad"), "onnxruntime": _version("onnxruntime")}
    with open(DEST, "w", encoding="utf-8") as fh:
        json.dump({"meta": meta, "clips": out}, fh, indent=1, sort_keys=True)
        fh.write("\n")
    print(f"{len(out)} clips -> {DEST}", file=sys.stderr)


if __name__ == "__main__":
    main()
