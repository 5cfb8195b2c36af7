"""The real-speech validation set (tests/data/real_speech) and the manipulations of the
invariance suite, shared by tests/unit/probes/test_invariance.py and
benchmarks/real_speech/measure.py.

Levels "re speech" are relative to :func:`speech_rms`: the RMS over the 20 ms frames within
30 dB of the clip's loudest frame (a simple active-speech level, after the idea of ITU-T P.56).
Every manipulation is a pure function of the samples and a seed.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import math
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from seeding import make_rng
from vocencebench.audio import Audio, load_audio

DATA = Path(__file__).resolve().parent / "data" / "real_speech"
SEED = 3151662

FloatArray = npt.NDArray[np.float64]


@dataclass(frozen=True)
class RealClip:
    """One clip of the manifest (see tests/data/real_speech/README.md)."""

    id: str
    file: str
    dataset: str
    speaker: str
    sex: str
    transcript: str | None
    transcript_source: str
    meta: dict[str, Any] = field(default_factory=dict, compare=False, repr=False)

    def audio(self) -> Audio:
        return load_audio((DATA / self.file).read_bytes(), name=self.id)


def manifest() -> list[RealClip]:
    out = []
    with open(DATA / "manifest.jsonl", encoding="utf-8") as fh:
        for line in fh:
            row = json.loads(line)
            out.append(RealClip(row["id"], row["file"], row["dataset"], row["speaker"],
                                row["sex"], row["transcript"], row["transcript_source"], row))
    return out


@dataclass(frozen=True)
class StereoAudio(Audio):
    """An :class:`Audio` that also carries its channels (frames × channels), the way
    ``Audio.channel_samples`` does on builds that have it."""

    channel_samples: npt.NDArray[np.float32] | None = field(default=None, compare=False,
                                                            repr=False)


def make_audio(x: npt.ArrayLike, rate: int, name: str = "manipulated") -> Audio:
    """An Audio of float samples (not clipped: a float file may exceed full scale)."""
    y = np.ascontiguousarray(x, dtype=np.float32)
    y.setflags(write=False)
    import hashlib

    return Audio(samples=y, sample_rate=rate, sha256=hashlib.sha256(y.tobytes()).hexdigest(),
                 channels=1, mixed_down=False, format="FLOAT", name=name)


def stereo(x: npt.ArrayLike, rate: int, right: npt.ArrayLike | None = None) -> StereoAudio:
    """A two-channel clip (dual mono unless ``right`` is given); samples = the channel mean,
    as load_audio mixes down."""
    left = np.asarray(x, dtype=np.float32)
    r = left if right is None else np.asarray(right, dtype=np.float32)
    ch = np.ascontiguousarray(np.stack([left, r], axis=1))
    ch.setflags(write=False)
    mono = np.ascontiguousarray(ch.mean(axis=1), dtype=np.float32)
    mono.setflags(write=False)
    import hashlib

    return StereoAudio(samples=mono, sample_rate=rate,
                       sha256=hashlib.sha256(ch.tobytes()).hexdigest(), channels=2,
                       mixed_down=True, format="FLOAT", name="stereo", channel_samples=ch)


def speech_rms(x: npt.ArrayLike, rate: int) -> float:
    y = np.asarray(x, dtype=np.float64)
    n = max(1, round(0.02 * rate))
    k = y.shape[0] // n
    p = np.square(y[:k * n]).reshape(k, n).mean(axis=1)
    keep = p >= p.max() * 10 ** (-30 / 10)
    return math.sqrt(float(p[keep].mean()))


def _rng(seed: int, tag: str) -> np.random.Generator:
    return make_rng([seed, sum(map(ord, tag))])


def pink(n: int, rng: np.random.Generator) -> FloatArray:
    """Unit-RMS pink (1/f) noise: room tone."""
    spec = np.fft.rfft(rng.standard_normal(n))
    f = np.arange(spec.shape[0], dtype=np.float64)
    f[0] = 1.0
    y = np.fft.irfft(spec / np.sqrt(f), n=n)
    return np.asarray(y / np.sqrt(np.mean(y ** 2)), dtype=np.float64)


def resample(x: FloatArray, rate: int, target: int) -> FloatArray:
    import soxr

    return np.asarray(soxr.resample(x, rate, target, quality="HQ"), dtype=np.float64)


def gain(x: FloatArray, db: float) -> FloatArray:
    return x * 10 ** (db / 20)


def pad_silence(x: FloatArray, rate: int, seconds: float = 1.0) -> FloatArray:
    z = np.zeros(round(seconds * rate))
    return np.concatenate([z, x, z])


def pad_room_tone(x: FloatArray, rate: int, db: float = -40.0, seconds: float = 1.0,
                  seed: int = SEED) -> FloatArray:
    n = round(seconds * rate)
    level = speech_rms(x, rate) * 10 ** (db / 20)
    rng = _rng(seed, "room")
    return np.concatenate([level * pink(n, rng), x, level * pink(n, rng)])


def white_noise(x: FloatArray, rate: int, snr_db: float = 20.0, seed: int = SEED) -> FloatArray:
    level = speech_rms(x, rate) * 10 ** (-snr_db / 20)
    return x + level * _rng(seed, "white").standard_normal(x.shape[0])


def hum(x: FloatArray, rate: int, hz: float, db: float, seed: int = SEED) -> FloatArray:
    """A mains-hum sine at ``hz`` with RMS ``db`` re speech over the whole clip."""
    level = speech_rms(x, rate) * 10 ** (db / 20) * math.sqrt(2.0)
    phase = _rng(seed, f"hum{hz}").uniform(0, 2 * math.pi)
    t = np.arange(x.shape[0]) / rate
    return x + level * np.sin(2 * math.pi * hz * t + phase)


def _praat(x: FloatArray, rate: int) -> Any:
    import parselmouth

    return parselmouth.Sound(np.asarray(x, dtype=np.float64), sampling_frequency=rate)


@contextlib.contextmanager
def _praat_seeded(seed: int) -> Iterator[None]:
    """Praat's overlap-add resynthesis draws random numbers (two calls on the same samples
    differ), so its generator is seeded for the call and made unpredictable again after."""
    import parselmouth

    parselmouth.praat.run(f"random_initializeWithSeedUnsafelyButPredictably ({seed})")
    try:
        yield
    finally:
        parselmouth.praat.run("random_initializeSafelyAndUnpredictably ()")


def tempo(x: FloatArray, rate: int, factor: float, seed: int = SEED) -> FloatArray:
    """Speaking rate × ``factor`` with pitch kept (Praat "Lengthen (overlap-add)")."""
    from parselmouth.praat import call

    with _praat_seeded(seed):
        out = call(_praat(x, rate), "Lengthen (overlap-add)", 75, 600, 1.0 / factor)
    return np.asarray(out.values[0], dtype=np.float64)


def pitch_shift(x: FloatArray, rate: int, semitones: float, seed: int = SEED) -> FloatArray:
    """F0 × 2^(st/12) with formants kept (Praat "Change gender", formant ratio 1)."""
    from parselmouth.praat import call

    snd = _praat(x, rate)
    pitch = call(snd, "To Pitch", 0.0, 75, 600)
    median = call(pitch, "Get quantile", 0, 0, 0.5, "Hertz")
    if not math.isfinite(median):
        return x
    with _praat_seeded(seed):
        out = call(snd, "Change gender", 75, 600, 1.0, median * 2 ** (semitones / 12), 1.0,
                   1.0)
    return np.asarray(out.values[0], dtype=np.float64)


Manipulation = Callable[[FloatArray, int], tuple[FloatArray, int]]


def _same_rate(fn: Callable[[FloatArray, int], FloatArray]) -> Manipulation:
    return lambda x, r: (fn(x, r), r)


#: Manipulations that must NOT move a label (loudness excepted for gain, see the table).
INVARIANT: dict[str, Manipulation] = {
    "resample 8 kHz": lambda x, r: (resample(x, r, 8_000), 8_000),
    "resample 22.05 kHz": lambda x, r: (resample(x, r, 22_050), 22_050),
    "resample 48 kHz": lambda x, r: (resample(x, r, 48_000), 48_000),
    "gain +6 dB": _same_rate(lambda x, r: gain(x, 6.0)),
    "gain -6 dB": _same_rate(lambda x, r: gain(x, -6.0)),
    "1 s silence both ends": _same_rate(pad_silence),
    "1 s room tone -40 dB both ends": _same_rate(pad_room_tone),
    "white noise 20 dB SNR": _same_rate(white_noise),
    "hum 50 Hz -20 dB": _same_rate(lambda x, r: hum(x, r, 50.0, -20.0)),
    "hum 60 Hz -20 dB": _same_rate(lambda x, r: hum(x, r, 60.0, -20.0)),
}
#: Manipulations that must move one trait in a known direction: (trait, +1 up / −1 down).
DIRECTIONAL: dict[str, tuple[Manipulation, str, int]] = {
    "tempo x0.8": (_same_rate(lambda x, r: tempo(x, r, 0.8)), "pace", -1),
    "tempo x1.25": (_same_rate(lambda x, r: tempo(x, r, 1.25)), "pace", +1),
    "pitch +4 st": (_same_rate(lambda x, r: pitch_shift(x, r, 4.0)), "pitch", +1),
    "pitch -4 st": (_same_rate(lambda x, r: pitch_shift(x, r, -4.0)), "pitch", -1),
    "gain +10 dB": (_same_rate(lambda x, r: gain(x, 10.0)), "loudness", +1),
    "gain -10 dB": (_same_rate(lambda x, r: gain(x, -10.0)), "loudness", -1),
}


def replace_samples(audio: Audio, x: FloatArray, rate: int) -> Audio:
    return dataclasses.replace(make_audio(x, rate, audio.name or "clip"))
