"""The transformations: attacks that edit the base's clip (silence, noise, padding, gain,
hum, clipping).

A request the attack does not target gets the base clip byte for byte (so its analysis is
shared with the base's). Randomness (noise, room tone) comes from the raw PCG64 stream seeded
by ``seed`` (default the project seed) and the request itself, so a clip is the same on
every run. Levels are dBFS (RMS of full scale = 0) or LUFS; durations seconds.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Callable, Mapping
from typing import Any, Final, Literal

import numpy as np

from .._util.stable_rng import stable_uniform
from ..constants import PROJECT_SEED
from ..errors import ConfigError, SynthesisError
from ..schema import Item
from ._base import FloatArray, TransformAttack

__all__ = [
    "DEFAULT_SEED",
    "LOW_TONE_SEMITONES",
    "PACE_TARGET_PPS",
    "TONE_SEMITONES",
    "ClipAttack",
    "GainAttack",
    "HumAttack",
    "NoiseAttack",
    "PadAttack",
    "SilenceAttack",
    "SyllableNoiseAttack",
    "SyllableToneAttack",
    "rng_uniform",
]

#: Default seed of every attack's noise (the project seed).
DEFAULT_SEED: Final = PROJECT_SEED

#: Pace (phones/s, as the pace probe counts them: script phones plus the phrase-final
#: lengthening allowance, per second) the noise attack aims at per pace value: the middle of
#: each bucket of the probe (edges 11.0 and 15.7; tested against the probe's constants).
PACE_TARGET_PPS: Final[Mapping[str, float]] = {"slow": 9.3, "moderate": 13.1, "fast": 18.5}


# ----------------------------------------------------------------------------- helpers


def rng_uniform(n: int, seed: int, *parts: str) -> FloatArray:
    """``n`` floats uniform on [-1, 1) from the raw PCG64 stream seeded by ``seed`` and
    ``parts`` (sha256 of both). Raw 64-bit words are stable across NumPy releases, unlike
    ``Generator`` methods, so the same arguments give the same samples everywhere."""
    digest = hashlib.sha256("\x1f".join((str(seed), *parts)).encode("utf-8")).digest()
    return stable_uniform(np.random.PCG64(int.from_bytes(digest[:16], "little")), n)


def _rms_dbfs(x: FloatArray) -> float:
    """RMS level in dBFS (full-scale sine = −3 dBFS convention not applied: RMS of 1.0 = 0)."""
    rms = math.sqrt(float(np.mean(np.square(x)))) if x.shape[0] else 0.0
    return 20.0 * math.log10(rms) if rms > 0 else -math.inf


def _lufs(x: FloatArray, rate: int) -> float | None:
    from ..loudness import integrated_loudness

    return integrated_loudness(x, rate)[0]


def _shape(white: FloatArray, magnitude: Callable[[FloatArray], FloatArray], rate: int
           ) -> FloatArray:
    """``white`` filtered in the frequency domain by ``magnitude(freqs_hz)``."""
    spec = np.fft.rfft(white)
    freqs = np.fft.rfftfreq(white.shape[0], 1.0 / rate)
    out = np.fft.irfft(spec * magnitude(np.asarray(freqs, dtype=np.float64)), n=white.shape[0])
    return np.asarray(out, dtype=np.float64)


def _pink(freqs: FloatArray) -> FloatArray:
    """1/√f amplitude (−3 dB per octave) above 20 Hz, nothing below."""
    return np.where(freqs >= 20.0, 1.0 / np.sqrt(np.maximum(freqs, 20.0)), 0.0)


def _long_term_spectrum(x: FloatArray, rate: int, frame: int = 1024
                        ) -> tuple[FloatArray, FloatArray]:
    """(frequencies Hz, mean magnitude) over Hann-windowed frames of ``x`` (Welch-style)."""
    if x.shape[0] < frame:
        x = np.concatenate([x, np.zeros(frame - x.shape[0])])
    hop = frame // 2
    n = 1 + (x.shape[0] - frame) // hop
    idx = np.arange(frame)[None, :] + hop * np.arange(n)[:, None]
    frames = x[idx] * np.hanning(frame)[None, :]
    power = np.mean(np.square(np.abs(np.fft.rfft(frames, axis=1))), axis=0)
    return (np.asarray(np.fft.rfftfreq(frame, 1.0 / rate), dtype=np.float64),
            np.asarray(np.sqrt(power), dtype=np.float64))


# ----------------------------------------------------------------------------- attacks


class SilenceAttack(TransformAttack):
    """Digital silence as long as the base clip: nothing is said at all."""

    name = "silence"

    def __init__(self, base: Callable[[str, str], bytes]) -> None:
        super().__init__(base)

    def transform(self, x: FloatArray, rate: int, item: Item) -> FloatArray:
        return np.zeros_like(x)

    def spoken_text(self, item: Item) -> str | None:
        return None


class NoiseAttack(TransformAttack):
    """Speech-shaped noise instead of speech (issue 12, finding 1).

    White noise from the seeded raw stream, filtered to the base clip's long-term spectrum,
    lasting ``(phones + lengthening) / PACE_TARGET_PPS[pace]`` seconds, the script's phones and
    phrase-final lengthening allowance as the pace probe counts them (so a pace probe that
    takes the whole clip as speech reads the requested pace), and scaled to the
    requested loudness's :data:`vocencebench.tts.TARGET_LUFS`.
    """

    name = "noise"

    def __init__(self, base: Callable[[str, str], bytes], *, seed: int = DEFAULT_SEED) -> None:
        super().__init__(base, seed=seed)
        self.seed = seed

    def duration_s(self, item: Item) -> float:
        """Seconds of noise for ``item``: the script's phones plus its lengthening allowance,
        over the requested bucket's middle."""
        from ..probes.acoustic import lengthening_phones
        from ..probes.syllables import count_syllables

        count = count_syllables(item.text)
        phones = count.phones + lengthening_phones(count.phrases)
        target = PACE_TARGET_PPS.get(item.traits.get("pace", "moderate"),
                                     PACE_TARGET_PPS["moderate"])
        return min(max(phones / target, 0.5), 55.0)

    def transform(self, x: FloatArray, rate: int, item: Item) -> FloatArray:
        from ..tts import TARGET_LUFS

        n = round(self.duration_s(item) * rate)
        noise = self.signal(x, rate, item, n)
        target = TARGET_LUFS.get(item.traits.get("loudness", "normal"), -21.0)
        lufs = _lufs(noise, rate)
        if lufs is None:
            raise SynthesisError(f"{self.name} attack: its signal is below the loudness gate")
        y: FloatArray = noise * 10.0 ** ((target - lufs) / 20.0)
        peak = float(np.max(np.abs(y)))
        return y * (0.99 / peak) if peak > 0.99 else y

    def spoken_text(self, item: Item) -> str | None:
        return None

    def signal(self, x: FloatArray, rate: int, item: Item, n: int) -> FloatArray:
        """The ``n`` samples to be scaled to the requested loudness."""
        freqs, mag = _long_term_spectrum(x, rate)
        white = rng_uniform(n, self.seed, "noise", item.text, item.instruction)
        return _shape(white, lambda f: np.interp(f, freqs, mag), rate)


def _syllable_envelope(n: int, rate: int) -> FloatArray:
    """Four syllable bumps a second with a phrase gap every 2.5 s: the level contour of
    speech, with nothing of its moving spectrum."""
    t = np.arange(n, dtype=np.float64) / rate
    bumps = np.maximum(0.0, np.sin(2.0 * np.pi * 2.0 * t)) ** 0.7
    return np.asarray(bumps * (np.sin(2.0 * np.pi * 0.4 * t) > -0.8), dtype=np.float64)


#: Semitones from the reference F0 at which the syllable tone sits per pitch request: inside
#: the pitch probe's low / medium / high buckets (edges ±3 semitones).
TONE_SEMITONES: Final[Mapping[str, float]] = {"low": -5.0, "medium": 0.0, "high": 5.0}


class SyllableNoiseAttack(NoiseAttack):
    """The noise attack's noise under a syllable-rate envelope (the 4 December 2026 audit:
    it passed the first speech check, whose spectral-shape measure followed the level
    against the constant quantisation floor)."""

    name = "noise-syllables"

    def signal(self, x: FloatArray, rate: int, item: Item, n: int) -> FloatArray:
        return super().signal(x, rate, item, n) * _syllable_envelope(n, rate)


class SyllableToneAttack(NoiseAttack):
    """A sine at the requested pitch (the pitch probe's reference F0 moved by
    :data:`TONE_SEMITONES`, with a ±0.5 semitone, 5 Hz vibrato so its F0 is not steady)
    under a syllable-rate envelope, as long and as loud as the noise attack's noise."""

    name = "tone-syllables"

    def signal(self, x: FloatArray, rate: int, item: Item, n: int) -> FloatArray:
        from ..norms import REFERENCE_F0_HZ, age_group

        ref = REFERENCE_F0_HZ.get((item.traits.get("gender", "male"),
                                   age_group(item.traits.get("age", "30"))), 110.0)
        f0 = ref * 2.0 ** (TONE_SEMITONES.get(item.traits.get("pitch", "medium"), 0.0) / 12.0)
        t = np.arange(n, dtype=np.float64) / rate
        freq = f0 * 2.0 ** (0.5 * np.sin(2.0 * np.pi * 5.0 * t) / 12.0)
        tone = np.sin(2.0 * np.pi * np.cumsum(freq) / rate)
        return np.asarray(tone * _syllable_envelope(n, rate), dtype=np.float64)


class PadAttack(TransformAttack):
    """``seconds`` of silence or room tone added at both ends, only when the request is slow.

    ``fill="silence"``: digital zeros; ``fill="room-tone"``: pink noise from the seeded raw
    stream at ``level_dbfs`` RMS (default −40 dBFS). The speech itself is unchanged.
    """

    name = "pad"

    def __init__(self, base: Callable[[str, str], bytes], *,
                 fill: Literal["silence", "room-tone"] = "room-tone", seconds: float = 1.5,
                 level_dbfs: float = -40.0, seed: int = DEFAULT_SEED) -> None:
        if fill not in ("silence", "room-tone"):
            raise ConfigError(f"pad fill must be 'silence' or 'room-tone', got {fill!r}")
        if not (math.isfinite(seconds) and seconds > 0):
            raise ConfigError(f"pad seconds must be > 0, got {seconds!r}")
        params: dict[str, Any] = {"fill": fill, "seconds": seconds}
        if fill == "room-tone":
            params.update(level_dbfs=level_dbfs, seed=seed)
        self.name = f"pad-{fill}"
        super().__init__(base, **params)
        self.fill, self.seconds, self.level_dbfs, self.seed = fill, seconds, level_dbfs, seed

    def applies(self, item: Item) -> bool:
        return item.traits.get("pace") == "slow"

    def padding(self, n: int, rate: int, item: Item, end: str) -> FloatArray:
        """The ``n`` samples added at ``end`` (``"head"`` or ``"tail"``)."""
        if self.fill == "silence":
            return np.zeros(n)
        tone = _shape(rng_uniform(n, self.seed, "room-tone", end, item.text, item.instruction),
                      _pink, rate)
        level = _rms_dbfs(tone)
        out: FloatArray = tone * 10.0 ** ((self.level_dbfs - level) / 20.0)
        return out

    def transform(self, x: FloatArray, rate: int, item: Item) -> FloatArray:
        n = round(self.seconds * rate)
        return np.concatenate([self.padding(n, rate, item, "head"), x,
                               self.padding(n, rate, item, "tail")])


class GainAttack(TransformAttack):
    """Loudness followed by a gain alone: the clip is scaled to the requested loudness's
    :data:`vocencebench.tts.TARGET_LUFS` and nothing else changes. The gain is lowered where
    it would push the peak above ``peak_limit`` (full scale = 1), so the waveform stays an
    exact multiple of the base's."""

    name = "gain-loudness"

    def __init__(self, base: Callable[[str, str], bytes], *, peak_limit: float = 0.99) -> None:
        super().__init__(base, peak_limit=peak_limit)
        self.peak_limit = peak_limit

    def gain(self, x: FloatArray, rate: int, item: Item) -> float:
        """The linear gain applied to ``x`` for ``item``."""
        from ..tts import TARGET_LUFS

        lufs = _lufs(x, rate)
        target = TARGET_LUFS.get(item.traits.get("loudness", "normal"))
        if lufs is None or target is None:
            return 1.0
        g = 10.0 ** ((target - lufs) / 20.0)
        peak = float(np.max(np.abs(x)))
        return float(min(g, self.peak_limit / peak)) if peak > 0 else float(g)

    def transform(self, x: FloatArray, rate: int, item: Item) -> FloatArray:
        return x * self.gain(x, rate, item)


#: Semitones below the typical F0 of the requested gender and age at which the ``tone-low``
#: attack puts its tone (what ``espeak-follow`` aims at for a low pitch).
LOW_TONE_SEMITONES: Final = -5.0


class HumAttack(TransformAttack):
    """A low tone mixed in when the request asks for a low pitch: a sine at ``freq_hz``
    (plus ``harmonics``, each 6 dB below the previous) at ``level_dbfs`` RMS in total —
    mains hum at 50 Hz — or, with ``freq_hz=None``, a sine at the F0 a low voice of the
    requested gender and age would have (the pitch probe's reference F0, lowered by
    :data:`LOW_TONE_SEMITONES`). The speech is unchanged."""

    name = "hum"

    def __init__(self, base: Callable[[str, str], bytes], *, freq_hz: float | None = 50.0,
                 level_dbfs: float = -20.0, harmonics: int = 0) -> None:
        if freq_hz is not None and not (math.isfinite(freq_hz) and freq_hz > 0):
            raise ConfigError(f"hum frequency must be > 0 Hz, got {freq_hz!r}")
        self.name = ("tone-low" if freq_hz is None
                     else f"hum-{freq_hz:g}hz" if harmonics else f"tone-{freq_hz:g}hz")
        super().__init__(base, freq_hz=freq_hz if freq_hz is not None else "low-f0",
                         level_dbfs=level_dbfs, harmonics=harmonics)
        self.freq_hz, self.level_dbfs, self.harmonics = freq_hz, level_dbfs, harmonics

    def applies(self, item: Item) -> bool:
        return item.traits.get("pitch") == "low"

    def frequency(self, item: Item) -> float:
        """The tone's fundamental (Hz) for ``item``."""
        if self.freq_hz is not None:
            return self.freq_hz
        from ..norms import REFERENCE_F0_HZ, age_group

        ref = REFERENCE_F0_HZ.get((item.traits.get("gender", "male"),
                                   age_group(item.traits.get("age", "30"))), 110.0)
        return float(ref * 2.0 ** (LOW_TONE_SEMITONES / 12.0))

    def tone(self, n: int, rate: int, freq_hz: float | None = None) -> FloatArray:
        """The ``n`` samples of hum added to the clip."""
        f = freq_hz if freq_hz is not None else (self.freq_hz or 50.0)
        t = np.arange(n, dtype=np.float64) / rate
        y = np.zeros(n)
        for k in range(self.harmonics + 1):
            y += 0.5**k * np.sin(2.0 * np.pi * f * (k + 1) * t)
        level = _rms_dbfs(y)
        out: FloatArray = y * 10.0 ** ((self.level_dbfs - level) / 20.0)
        return out

    def transform(self, x: FloatArray, rate: int, item: Item) -> FloatArray:
        y: FloatArray = x + self.tone(x.shape[0], rate, self.frequency(item))
        peak = float(np.max(np.abs(y)))
        return y * (0.99 / peak) if peak > 0.99 else y


class ClipAttack(TransformAttack):
    """Loudness by distortion: on loud requests the clip is amplified until its peak is
    ``drive_db`` above ``ceiling`` (full scale = 1), then hard clipped at ``ceiling``. Other
    requests are unchanged."""

    name = "clip-loud"

    def __init__(self, base: Callable[[str, str], bytes], *, drive_db: float = 12.0,
                 ceiling: float = 1.0) -> None:
        super().__init__(base, drive_db=drive_db, ceiling=ceiling)
        self.drive_db, self.ceiling = drive_db, ceiling

    def applies(self, item: Item) -> bool:
        return item.traits.get("loudness") == "loud"

    def transform(self, x: FloatArray, rate: int, item: Item) -> FloatArray:
        peak = float(np.max(np.abs(x)))
        g = 10.0 ** (self.drive_db / 20.0) * self.ceiling / peak if peak > 0 else 1.0
        out: FloatArray = np.clip(x * g, -self.ceiling, self.ceiling)
        return out
