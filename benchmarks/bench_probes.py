"""Throughput of the acoustic probes (clips per second, real-time factor) on eSpeak clips.

Run:  .venv/bin/python benchmarks/bench_probes.py [--clips 40] [--rounds 3] [--workers 2]

Times are CPU seconds of the measuring process (``time.process_time``), so the numbers hold
on a shared machine; the multi-process line also gives the wall-clock throughput.

Reports, on ~3 s clips of the built-in eSpeak system:

* the acoustic set (pitch, pace, loudness, gender heuristic) on one core and on ``--workers``
  processes (clips/s and real-time factor = CPU-seconds per second of audio);
* the pitch step alone with Praat (what the probes use: 4 kHz, 75–500 Hz, 10 ms step) and
  with ``librosa.pyin`` at the same floor/ceiling on the 16 kHz signal, and the set with pyin
  in Praat's place (set − Praat step + pyin step);
* the DNSMOS diagnostic on its own (it is not part of the default set).

librosa is needed only here (``pip install "vocencebench[dev]"``). Clips are decoded before
timing; every round measures a fresh copy of each clip (``dataclasses.replace``), so nothing
derived from the samples — the 16 kHz version, the shared pitch track — is reused between
rounds: the resampling a decoded clip needs is inside the timing.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import dataclasses
import multiprocessing
import os
import platform
import statistics
import time
from collections.abc import Callable, Sequence

import numpy as np

from vocencebench.audio import Audio, load_audio
from vocencebench.probes import acoustic as ac
from vocencebench.probes import default_probes
from vocencebench.probes.acoustic import DnsmosDiagnostic
from vocencebench.schema import Item
from vocencebench.tts import EspeakSettings, render_many

SCRIPTS = (
    "The results came back clear, thank you doctor.",
    "Could you pass me the salt and the pepper, please?",
    "We will meet at the station before the train leaves.",
    "My sister bought a new bicycle for the summer holidays.",
    "Please remember to water the plants while I am away.",
    "The library closes early on Sundays, so we should hurry.",
    "They forgot to lock the back door before leaving.",
    "Honestly, I could not have asked for a better friend.",
)
TRAITS = {"gender": "male", "age": "30", "pace": "moderate", "pitch": "medium",
          "loudness": "normal", "emotion": "neutral", "accent": "American", "tone": "warm"}


def make_clips(n: int) -> list[tuple[bytes, Item]]:
    """``n`` eSpeak clips cycling over scripts, voices, pitch, rate and level."""
    reqs: list[tuple[str, EspeakSettings]] = []
    items: list[Item] = []
    voices = ("en-us", "en-us+f4", "en", "en-us+m3")
    for i in range(n):
        text = SCRIPTS[i % len(SCRIPTS)]
        s = EspeakSettings(voice=voices[i % 4], pitch=(20, 50, 80)[i % 3],
                           rate=(150, 175, 200)[i % 3], volume=(60, 100, 150)[i % 3])
        reqs.append((text, s))
        items.append(Item(id=f"b{i}", instruction="", text=text, traits=dict(TRAITS),
                          difficulty=1))
    wavs = render_many(reqs, workers=2)
    return list(zip(wavs, items, strict=True))


def _time_set(clips: Sequence[tuple[Audio, Item]], rounds: int) -> tuple[float, float]:
    """Best-of-``rounds`` (wall, CPU) seconds to run the default set over ``clips``."""
    ps = default_probes()
    ps.measure(*clips[0])  # warm-up: CMU dictionary, Praat, pyloudnorm
    best, best_cpu = float("inf"), float("inf")
    for _ in range(rounds):
        t0, c0 = time.perf_counter(), time.process_time()
        for audio, item in clips:
            ps.measure(dataclasses.replace(audio), item)
        best = min(best, time.perf_counter() - t0)
        best_cpu = min(best_cpu, time.process_time() - c0)
    return best, best_cpu


def _worker(batch: list[tuple[bytes, Item]], rounds: int) -> tuple[float, float, float, int]:
    clips = [(load_audio(w), it) for w, it in batch]
    ps = default_probes()
    ps.measure(*clips[0])
    t0, c0 = time.time(), time.process_time()
    for _ in range(rounds):
        for audio, item in clips:
            ps.measure(dataclasses.replace(audio), item)
    return t0, time.time(), time.process_time() - c0, len(clips) * rounds


def _time_step(fn: Callable[[Audio], object], audios: Sequence[Audio], rounds: int) -> float:
    """Best-of-``rounds`` CPU seconds of ``fn`` over ``audios``."""
    fn(audios[0])
    best = float("inf")
    for _ in range(rounds):
        c0 = time.process_time()
        for a in audios:
            fn(dataclasses.replace(a))
        best = min(best, time.process_time() - c0)
    return best


def _praat_pitch(a: Audio, rate: int = ac.PITCH_RATE,
                 step: float = ac.PITCH_STEP_PERIODS / ac.PITCH_FLOOR_HZ) -> float:
    import parselmouth
    import soxr

    x = soxr.resample(np.asarray(a.at_16k(), dtype=np.float64), 16_000, rate,
                      quality="HQ")  # as the probe does
    p = parselmouth.Sound(x, sampling_frequency=rate).to_pitch_ac(
        time_step=step, pitch_floor=ac.PITCH_FLOOR_HZ, pitch_ceiling=ac.PITCH_CEILING_HZ)
    f = p.selected_array["frequency"]
    return float(np.median(f[f > 0]))


def _praat_pitch_v3(a: Audio) -> float:
    """The pitch step as pitch-praat@2/@3 ran it: 4 kHz, 30 ms step."""
    return _praat_pitch(a, ac.PITCH_RATE, 0.03)


def _loudness_ours(a: Audio) -> float | None:
    return ac.integrated_loudness(a.samples, a.sample_rate)[0]


def _loudness_pyloudnorm(a: Audio) -> float:
    import pyloudnorm

    x = np.asarray(a.samples, dtype=np.float64)
    return float(pyloudnorm.Meter(a.sample_rate).integrated_loudness(x))


def _pyin_pitch(a: Audio) -> float:
    import librosa

    x = np.asarray(a.at_16k(), dtype=np.float32)
    f0, voiced, _ = librosa.pyin(x, fmin=ac.PITCH_FLOOR_HZ, fmax=ac.PITCH_CEILING_HZ,
                                 sr=16_000, frame_length=1024, hop_length=240)
    return float(np.nanmedian(f0[voiced])) if voiced.any() else float("nan")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--clips", type=int, default=40)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--dnsmos-clips", type=int, default=8,
                    help="clips for the slow steps (DNSMOS, pyin)")
    args = ap.parse_args()

    raw = make_clips(args.clips)
    clips = [(load_audio(w), it) for w, it in raw]
    audio_s = sum(a.duration for a, _ in clips)
    print(f"# bench_probes: {len(clips)} eSpeak clips, mean {audio_s / len(clips):.2f} s; "
          f"{platform.processor() or platform.machine()}, {os.cpu_count()} CPUs; "
          f"best of {args.rounds} rounds")

    wall1, one = _time_set(clips, args.rounds)
    print(f"acoustic set, 1 process : {len(clips) / one:7.1f} clips/s per CPU-s  "
          f"RTF {one / audio_s:.4f}  ({1000 * one / len(clips):.1f} CPU-ms/clip; "
          f"wall {1000 * wall1 / len(clips):.1f} ms/clip)")

    ctx = multiprocessing.get_context("spawn")
    halves = [raw[i::args.workers] for i in range(args.workers)]
    with concurrent.futures.ProcessPoolExecutor(args.workers, mp_context=ctx) as pool:
        res = list(pool.map(_worker, halves, [args.rounds] * args.workers))
    wall = max(r[1] for r in res) - min(r[0] for r in res)
    cpu = sum(r[2] for r in res)
    n = sum(r[3] for r in res)
    print(f"acoustic set, {args.workers} processes: {n / wall:7.1f} clips/s wall  "
          f"{n / cpu:.1f} clips per CPU-s  RTF {wall / (audio_s * args.rounds):.4f} (wall)")

    audios = [a for a, _ in clips]
    praat = _time_step(_praat_pitch, audios, args.rounds)
    print(f"pitch step, Praat ac    : {1000 * praat / len(audios):7.1f} CPU-ms/clip  "
          f"({ac.PITCH_RATE} Hz, "
          f"{1000 * ac.PITCH_STEP_PERIODS / ac.PITCH_FLOOR_HZ:.0f} ms step)")
    v1 = _time_step(_praat_pitch_v3, audios, args.rounds)
    moved = [abs(12 * np.log2(_praat_pitch(a) / _praat_pitch_v3(a))) for a in audios]
    print(f"pitch step, Praat @3    : {1000 * v1 / len(audios):7.1f} CPU-ms/clip  "
          f"(4000 Hz, 30 ms step; {v1 / praat:.2f}x ours; median moved "
          f"{statistics.median(moved):.3f} st, at most {max(moved):.3f} st)")
    ours = _time_step(_loudness_ours, audios, args.rounds)
    ref = _time_step(_loudness_pyloudnorm, audios, args.rounds)
    worst = max(abs(float(_loudness_ours(a) or 0) - _loudness_pyloudnorm(a)) for a in audios)
    print(f"loudness, ours          : {1000 * ours / len(audios):7.2f} CPU-ms/clip  "
          f"pyloudnorm {1000 * ref / len(audios):.2f} ({ref / ours:.2f}x ours; "
          f"max |diff| {worst:.1e} LU)")
    try:
        few = audios[: args.dnsmos_clips]
        pyin = _time_step(_pyin_pitch, few, 1) * len(audios) / len(few)
    except ImportError:
        print("pitch step, librosa.pyin: librosa not installed (pip install librosa)")
    else:
        diffs = [abs(_praat_pitch(a) / _pyin_pitch(a) - 1) for a in audios[:8]]
        print(f"pitch step, librosa.pyin: {1000 * pyin / len(audios):7.1f} CPU-ms/clip  "
              f"(median |Praat/pyin − 1| = {100 * statistics.median(diffs):.1f} %)")
        with_pyin = one - praat + pyin
        print(f"acoustic set with pyin  : {len(clips) / with_pyin:7.1f} clips per CPU-s  "
              f"RTF {with_pyin / audio_s:.4f}  (derived: set − Praat step + pyin step)")

    dn = DnsmosDiagnostic()
    sub = audios[: args.dnsmos_clips]
    t = _time_step(dn.assess, sub, 1)
    print(f"DNSMOS diagnostic       : {len(sub) / t:7.2f} clips per CPU-s  "
          f"RTF {t / sum(a.duration for a in sub):.3f}  ({1000 * t / len(sub):.0f} CPU-ms/clip)")


if __name__ == "__main__":
    main()
