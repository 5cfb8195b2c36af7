"""The eSpeak pace calibration table of docs/probes.md (Pace), measured with the CURRENT pace
probe: how often eSpeak at 120 / 175 / 260 wpm (the rates of test_pace_buckets_on_espeak)
lands slow / moderate / fast, with the median articulation rate (phones/s) and the median
speaking rate (syllables/s, pauses included), per group of scripts.

Run:  PYTHONPATH=src python benchmarks/real_speech/espeak_pace_table.py [--rates 120,175,260]

Scripts: every "everyday" script of the shipped corpus (372), split at 10 syllables (the
probe's ``short_script`` flag), and the 20 hand-written sentences of
tests/unit/probes/test_probes_acoustic.py (``EVERYDAY``: plain declaratives and a few
questions, dense, few pauses). Voice: eSpeak NG ``en-us`` at its own pitch
(``EspeakSettings(rate=...)``, as the calibration test renders). It sits beside the
real-speech scripts because the voice activity that real speech forced on the pace probe
(``pace-phones@2``/``@3``) is what moved these figures from the ones first published for
``pace-phones@1``. For the rates that the eSpeak systems use (``tts.WPM_BY_PACE``) over all
496 scripts, see benchmarks/calibrate_pace_wpm.py.
"""

from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tests"))
from test_probes_acoustic import EVERYDAY

from vocencebench.audio import load_audio
from vocencebench.corpus import load_benchmark
from vocencebench.probes.acoustic import PaceProbe
from vocencebench.schema import UNMEASURABLE, Item, ProbeResult
from vocencebench.tts import EspeakSettings, render_many


def bucket_for(rate: int) -> str:
    return "slow" if rate < 140 else "fast" if rate > 220 else "moderate"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rates", default="120,175,260")
    args = ap.parse_args()
    rates = [int(r) for r in args.rates.split(",")]
    everyday = [it.text for it in load_benchmark() if it.category == "everyday"]
    scripts = [*everyday, *EVERYDAY]
    probe = PaceProbe()
    got: dict[tuple[str, int], ProbeResult] = {}
    for rate in rates:
        want = bucket_for(rate)
        wavs = render_many([(s, EspeakSettings(rate=rate)) for s in scripts], workers=2)
        for s, wav in zip(scripts, wavs, strict=True):
            it = Item(id="cal", instruction="", text=s, traits={"pace": want}, difficulty=1)
            got[(s, rate)] = res = probe.measure(load_audio(wav), it)["pace"]
            if res.label == UNMEASURABLE:
                raise SystemExit(f"{rate} wpm, {s!r}: {res.detail['unmeasurable']}")
        print(f"{rate} wpm measured ({len(scripts)} scripts)", file=sys.stderr, flush=True)
    short = [s for s in everyday if got[(s, rates[0])].detail["short_script"]]
    long_ = [s for s in everyday if not got[(s, rates[0])].detail["short_script"]]
    groups = {f"everyday, all {len(everyday)}": everyday,
              f"everyday, under 10 syllables ({len(short)})": short,
              f"everyday, 10 syllables or more ({len(long_)})": long_,
              f"hand-written sentences ({len(EVERYDAY)})": list(EVERYDAY)}
    probe_id = next(iter(got.values())).probe
    print(f"\n{probe_id}, eSpeak en-us at " + " / ".join(map(str, rates)) + " wpm\n")
    print("| scripts | right at " + " / ".join(map(str, rates))
          + " wpm | median phones/s | speaking rate, syllables/s |")
    print("| --- | --- | --- | --- |")
    for name, group in groups.items():
        right, pps, sps = [], [], []
        for rate in rates:
            res = [got[(s, rate)] for s in group]
            right.append(100 * sum(r.label == bucket_for(rate) for r in res) / len(res))
            pps.append(statistics.median(float(r.value or 0) for r in res))
            sps.append(statistics.median(float(r.detail["syllables_per_s"]) for r in res))
        print(f"| {name} | " + " / ".join(f"{v:.1f}" for v in right) + " % | "
              + " / ".join(f"{v:.2f}" for v in pps) + " | "
              + " / ".join(f"{v:.2f}" for v in sps) + " |")
    for rate in rates:
        labels = [got[(s, rate)].label for s in everyday]
        print(f"{rate} wpm, everyday: slow {labels.count('slow')}, moderate "
              f"{labels.count('moderate')}, fast {labels.count('fast')}")


if __name__ == "__main__":
    main()
