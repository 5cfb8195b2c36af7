"""How much trimming a clip's leading and trailing silence moves the pace probe: the eSpeak
clips of the pace calibration test (59 long and 34 short corpus scripts at 120 / 175 / 260
wpm), measured as rendered and cut to their first and last non-zero sample.

Run:  PYTHONPATH=src python benchmarks/real_speech/pace_trim.py   (about 1 min)

A system that trims its output tightly should read the pace it reads with silence around it;
padding is the opposite manipulation (tests/acceptance/test_realspeech_targets.py,
test_invariance.py).
Prints, per rate, the median and largest relative change of the pace value (trimmed / as
rendered − 1) and how many labels changed.
"""

from __future__ import annotations

import statistics
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tests"))
from test_probes_acoustic import CORPUS_EVERYDAY, CORPUS_EVERYDAY_SHORT, from_samples, make_item

from vocencebench.audio import load_audio
from vocencebench.probes.acoustic import PaceProbe
from vocencebench.tts import EspeakSettings, render_many


def main() -> None:
    scripts = CORPUS_EVERYDAY + CORPUS_EVERYDAY_SHORT
    probe = PaceProbe()
    print(f"{probe.name}@{probe.version}, {len(scripts)} scripts")
    for rate in (120, 175, 260):
        wavs = render_many([(s, EspeakSettings(rate=rate)) for s in scripts], workers=2)
        change, flips = [], 0
        for s, wav in zip(scripts, wavs, strict=True):
            audio = load_audio(wav)
            x = np.asarray(audio.samples)
            sounding = np.flatnonzero(x)
            trimmed = from_samples(x[sounding[0]:sounding[-1] + 1], audio.sample_rate)
            before = probe.measure(audio, make_item(text=s))["pace"]
            after = probe.measure(trimmed, make_item(text=s))["pace"]
            change.append(float(after.value or 0) / float(before.value or 1) - 1.0)
            flips += after.label != before.label
        print(f"{rate} wpm: median {statistics.median(change):+.1%}, largest {max(change):+.1%}, "
              f"smallest {min(change):+.1%}; labels changed {flips} / {len(scripts)}")


if __name__ == "__main__":
    main()
