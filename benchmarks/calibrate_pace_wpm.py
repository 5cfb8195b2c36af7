"""How often eSpeak's words-per-minute settings land in each pace bucket of the pace probe,
over every script of the shipped corpus (the calibration of ``tts.WPM_BY_PACE``).

Run:  PYTHONPATH=src python benchmarks/calibrate_pace_wpm.py [--rates 110,120,165,175,260]

Each corpus script is rendered by the neutral eSpeak voice (en-us, pitch 50) at each rate
and measured by ``PaceProbe``; a rate counts as right for the bucket it is meant for
(slow < 140 wpm, fast > 220 wpm, moderate between).
"""

from __future__ import annotations

import argparse
import dataclasses

from vocencebench.audio import load_audio
from vocencebench.corpus import load_benchmark
from vocencebench.probes.acoustic import PaceProbe
from vocencebench.tts import NEUTRAL, render_many


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rates", default="110,120,165,175,260")
    args = ap.parse_args()
    items = load_benchmark()
    probe = PaceProbe()
    for rate in (int(r) for r in args.rates.split(",")):
        want = "slow" if rate < 140 else "fast" if rate > 220 else "moderate"
        settings = dataclasses.replace(NEUTRAL, rate=rate)
        wavs = render_many([(it.text, settings) for it in items], workers=2)
        labels = []
        for it, wav in zip(items, wavs, strict=True):
            req = dataclasses.replace(it, traits={**it.traits, "pace": want})
            labels.append(probe.measure(load_audio(wav), req)["pace"].label)
        right = sum(lab == want for lab in labels)
        print(f"{rate} wpm ({want}): {right}/{len(items)} = {right / len(items):.1%} "
              f"(slow {labels.count('slow')}, moderate {labels.count('moderate')}, "
              f"fast {labels.count('fast')})", flush=True)


if __name__ == "__main__":
    main()
