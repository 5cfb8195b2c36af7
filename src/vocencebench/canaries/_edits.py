"""The canary clips at their base level, edited (pitch, tempo, gain) and degraded (for the
judge's pairs): the same bytes on every call and in every process."""

from __future__ import annotations

import functools
import math
from typing import Any

import numpy as np
import numpy.typing as npt

from .._util.deps import require
from .._util.stable_rng import stable_uniform
from ..errors import ConfigError
from ._clips import canary_clips
from ._constants import BASE_LUFS, DEGRADATIONS, EDITS, JUDGE_VOICES, NOISE_SEED

__all__ = ["FloatArray", "edit_clip", "judge_pairs"]

FloatArray = npt.NDArray[np.float64]


def _wav(x: FloatArray, rate: int) -> bytes:
    from ..audio import to_wav_bytes

    return to_wav_bytes(np.clip(x, -1.0, 1.0), rate)


def _lufs(x: FloatArray, rate: int) -> float:
    from ..loudness import integrated_loudness

    lufs, _ = integrated_loudness(x, rate)
    if lufs is None:
        raise ConfigError("a canary clip is below the loudness gate")
    return lufs


@functools.cache
def _base(key: str) -> tuple[bytes, int]:
    """The canary ``key`` at :data:`BASE_LUFS` (a pure gain), as WAV bytes, and its rate."""
    from ..audio import load_audio

    clip = next(c for c in canary_clips() if c.key == key)
    audio = load_audio(clip.read(), name=clip.file)
    x = np.asarray(audio.samples, dtype=np.float64)
    x = x * 10.0 ** ((BASE_LUFS - _lufs(x, audio.sample_rate)) / 20.0)
    return _wav(x, audio.sample_rate), audio.sample_rate


def _psola(x: FloatArray, rate: int, *, pitch_factor: float = 1.0,
           duration_factor: float = 1.0) -> FloatArray:
    """Praat Manipulation + overlap-add: F0 × ``pitch_factor`` (formants kept), duration ×
    ``duration_factor`` (pitch kept)."""
    pm = require("parselmouth", "the canaries", "probes", package="praat-parselmouth")
    from parselmouth.praat import call

    from .._util.praat import seeded

    with seeded(NOISE_SEED):
        return _psola_seeded(pm, call, x, rate, pitch_factor, duration_factor)


def _psola_seeded(pm: Any, call: Any, x: FloatArray, rate: int, pitch_factor: float,
                  duration_factor: float) -> FloatArray:
    snd = pm.Sound(x, sampling_frequency=rate)
    manip = call(snd, "To Manipulation", 0.01, 75.0, 600.0)
    if pitch_factor != 1.0:
        tier = call(manip, "Extract pitch tier")
        call(tier, "Multiply frequencies", snd.xmin, snd.xmax, pitch_factor)
        call([tier, manip], "Replace pitch tier")
    if duration_factor != 1.0:
        dur = call("Create DurationTier", "canary", snd.xmin, snd.xmax)
        call(dur, "Add point", snd.xmin, duration_factor)
        call([manip, dur], "Replace duration tier")
    out = call(manip, "Get resynthesis (overlap-add)")
    return np.array(out.values[0], dtype=np.float64)


@functools.cache
def edit_clip(key: str, edit: str) -> bytes:
    """Canary ``key`` (at :data:`BASE_LUFS`) with ``edit`` (a key of :data:`EDITS`, or
    ``"base"``): 16-bit WAV bytes, the same on every call."""
    from ..audio import load_audio

    wav, rate = _base(key)
    if edit == "base":
        return wav
    try:
        what, amount = EDITS[edit]
    except KeyError:
        raise ConfigError(f"unknown canary edit {edit!r}; valid: base, "
                          f"{', '.join(EDITS)}") from None
    x = np.asarray(load_audio(wav).samples, dtype=np.float64)
    if what == "pitch":
        y = _psola(x, rate, pitch_factor=2.0 ** (amount / 12.0))
    elif what == "tempo":
        y = _psola(x, rate, duration_factor=1.0 / amount)
    else:
        y = x * 10.0 ** (amount / 20.0)
    return _wav(y, rate)


def _degrade(key: str, how: str) -> bytes:
    """The base canary ``key`` degraded by ``how`` (one of :data:`DEGRADATIONS`)."""
    from scipy.signal import butter, sosfiltfilt

    from ..audio import load_audio

    wav, rate = _base(key)
    x = np.asarray(load_audio(wav).samples, dtype=np.float64)
    if how == DEGRADATIONS[0]:
        sos = butter(8, 3000.0, btype="lowpass", fs=rate, output="sos")
        y = sosfiltfilt(sos, x)
    elif how == DEGRADATIONS[1]:
        t = 0.1 * float(np.max(np.abs(x)))
        y = np.clip(x, -t, t)
    elif how == DEGRADATIONS[2]:
        # Uniform white noise of unit variance (√3 · U[-1, 1)) from the raw stream: the
        # same clip with any NumPy (Generator.standard_normal's output is not promised).
        noise = stable_uniform(np.random.PCG64(NOISE_SEED), x.shape[0]) * math.sqrt(3.0)
        power = float(np.mean(np.square(x)))
        y = x + noise * math.sqrt(power / 10.0 ** (5.0 / 10.0))
    else:
        raise ConfigError(f"unknown degradation {how!r}; valid: {', '.join(DEGRADATIONS)}")
    y = y * 10.0 ** ((BASE_LUFS - _lufs(y, rate)) / 20.0)  # same level as the clean clip
    return _wav(y, rate)


def judge_pairs() -> list[tuple[str, str, bytes, bytes]]:
    """The judge's naturalness pairs: (clip key, degradation, clean WAV, degraded WAV)."""
    return [(key, how, _base(key)[0], _degrade(key, how))
            for key in JUDGE_VOICES for how in DEGRADATIONS]
