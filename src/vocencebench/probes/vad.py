"""Voice activity for the acoustic probes: which 10 ms frames of a clip hold speech, measured
against the clip's own noise floor and its loud frames, never against padding.

Method (the measurements that chose it are in docs/probes.md, "Voice activity"):

* 25 ms Hann frames every 10 ms; power in 150 Hz – 3.8 kHz (16 mel-spaced bands, the same at
  any sample rate from 8 kHz up, so the decision does not depend on the delivery format;
  mains hum below 150 Hz is outside them);
* the noise floor is the 5th percentile of the in-band frame power over the frames that are
  not digital silence (so padding with zeros cannot lower it), never below white noise at
  :data:`ABS_FLOOR_DBFS`;
* a frame is *strong* when it is at least :data:`ON_DB` over the floor **and** within
  :data:`STRONG_DB` of the clip's loud frames (99th percentile of frame power over the
  frames that are not digital silence): faint room
  tone, noise and padding are never strong, and added noise at 20 dB SNR leaves the strong
  frames of the voice strong;
* speech = strong frames widened by :data:`HANG_S` on each side (weak consonant onsets and
  tails that a noise floor may hide). The speech span keeps the widening even where it reaches
  past the clip's first or last sample, so trimming a clip's leading or trailing silence
  cannot shorten its speech (or make its pace read faster).
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final

import numpy as np
import numpy.typing as npt

from ._spectrum import FloatArray, band_sums, bin_ranges, frame_power, hann, mel_edges_hz

if TYPE_CHECKING:
    from ..audio import Audio

__all__ = [
    "ABS_FLOOR_DBFS",
    "BANDS",
    "FLOOR_PERCENTILE",
    "HANG_S",
    "HOP_S",
    "ON_DB",
    "STRONG_DB",
    "VoiceActivity",
    "voice_activity",
]

#: Frame hop and window (s).
HOP_S: Final = 0.010
WINDOW_S: Final = 0.025
#: Band edges (Hz): 16 bands, log-spaced.
BAND_LO_HZ: Final = 150.0
BAND_HI_HZ: Final = 3800.0
BANDS: Final = 16
#: Noise floor: the in-band power of the frame at this percentile (frames ordered by power)
#: among the frames that are not digital silence.
FLOOR_PERCENTILE: Final = 5.0
#: A frame quieter than white noise at this level (dBFS, in the bands) is digital silence:
#: left out of the floor estimate; the floor is never set below it.
ABS_FLOOR_DBFS: Final = -90.0
#: A strong frame is at least this many dB over the noise floor ...
ON_DB: Final = 9.0
#: ... and within this many dB of the clip's loud frames (99th percentile of frame power).
STRONG_DB: Final = 25.0
#: Strong frames are widened by this much (s) on each side to make the speech frames.
HANG_S: Final = 0.06
#: The spectral shape change is measured over the speech frames within this many dB of the
#: clip's loud frames (the envelope's troughs left out) ...
SHAPE_FRAME_DB: Final = 15.0
#: ... on band levels floored this many dB under each frame's strongest band, so that bands
#: at the quantisation floor, which stay put while a tone's band rises and falls, add nothing.
SHAPE_RANGE_DB: Final = 40.0


@dataclass(frozen=True)
class VoiceActivity:
    """Speech frames of a clip.

    ``speech``: bool per frame (frame i covers ``[i·hop, i·hop + window)``). ``hop`` and
    ``window`` in s. ``evidence_db``: per-frame in-band power over the noise floor (dB).
    ``floor_dbfs``: the noise floor over the 16 bands as a white-noise level
    (dBFS). ``shape_var_db``: over the loud speech frames (``SHAPE_FRAME_DB``), the standard
    deviation over time of the level-normalised band spectrum floored ``SHAPE_RANGE_DB``
    under each frame's strongest band, averaged over bands (dB) — formants move, stationary
    sounds (tones, hum, noise, amplitude-modulated or not) do not. ``duration``: clip length (s).
    ``strong_first`` / ``strong_last``: the first and last strong frame (index; −1 when there
    is none). ``hang``: the widening (frames).
    """

    speech: npt.NDArray[np.bool_]
    hop: float
    window: float
    evidence_db: FloatArray
    floor_dbfs: float
    shape_var_db: float
    duration: float
    strong_first: int
    strong_last: int
    hang: int

    @property
    def speech_s(self) -> float:
        """Seconds of speech frames (hop-spaced)."""
        return float(np.count_nonzero(self.speech)) * self.hop

    def span(self, pause_min_s: float) -> tuple[float, float, float, int]:
        """(first speech instant s, last speech instant s, pause time s, pauses): pauses are
        the non-speech runs inside the span lasting at least ``pause_min_s``. The span is the
        strong frames widened by the hang-over even where that reaches past the clip's ends
        (so ``start`` may be below 0 and ``end`` above the duration)."""
        idx = np.flatnonzero(self.speech)
        if idx.size == 0 or self.strong_first < 0:
            return 0.0, 0.0, 0.0, 0
        first, last = int(idx[0]), int(idx[-1])
        start = (self.strong_first - self.hang) * self.hop
        end = (self.strong_last + self.hang) * self.hop + self.window
        inner = ~self.speech[first:last + 1]
        edges = np.diff(np.concatenate([[0], inner.astype(np.int8), [0]]))
        runs = np.flatnonzero(edges == -1) - np.flatnonzero(edges == 1)
        pauses = runs[runs >= round(pause_min_s / self.hop)]
        return start, end, float(pauses.sum()) * self.hop, int(pauses.shape[0])


@functools.lru_cache(maxsize=16)
def _layout(rate: int) -> tuple[int, int, FloatArray, FloatArray, float]:
    """(hop, n_fft, window, band matrix bins×bands, white-noise band power per unit variance)."""
    hop = max(1, round(HOP_S * rate))
    win_n = max(8, round(WINDOW_S * rate))
    n_fft = 1 << (win_n - 1).bit_length()
    window = hann(win_n)
    freqs = np.fft.rfftfreq(n_fft, 1.0 / rate)
    edges = mel_edges_hz(BAND_LO_HZ, min(BAND_HI_HZ, 0.475 * rate), BANDS + 1)
    bands = np.zeros((freqs.shape[0], BANDS), dtype=np.float64)
    for k in range(BANDS):
        bands[(freqs >= edges[k]) & (freqs < edges[k + 1]), k] = 1.0
    empty = bands.sum(axis=0) == 0  # very low rates: a band narrower than a bin
    for k in np.flatnonzero(empty).tolist():
        nearest = int(np.argmin(np.abs(freqs - math.sqrt(edges[k] * edges[k + 1]))))
        bands[nearest, k] = 1.0
    # rfft of unit-variance white noise: E|X|² = Σw² per bin
    unit = float(np.sum(window ** 2))
    bands.setflags(write=False)
    return hop, n_fft, window, bands, unit


def _band_power(x: FloatArray, rate: int) -> tuple[FloatArray, float]:
    """Band power per frame (frames × BANDS) and the band power of unit white noise (per bin)."""
    hop, n_fft, window, _, unit = _layout(rate)
    win_n = window.shape[0]
    if x.shape[0] < win_n:
        x = np.concatenate([x, np.zeros(win_n - x.shape[0])])
    return band_sums(frame_power(x, window, hop, n_fft), _ranges(rate)), unit


@functools.lru_cache(maxsize=16)
def _ranges(rate: int) -> tuple[tuple[int, int], ...]:
    """The bin range of each band of :func:`_layout`."""
    return bin_ranges(_layout(rate)[3])


def voice_activity(x: npt.ArrayLike, rate: int) -> VoiceActivity:
    """Speech frames of the mono signal ``x`` (float, full scale 1.0) at ``rate`` Hz."""
    y = np.asarray(x, dtype=np.float64)
    hop, _, window, bands, unit = _layout(rate)
    bp, unit = _band_power(y, rate)
    width = bands.sum(axis=0)  # bins per band
    abs_floor = 10.0 ** (ABS_FLOOR_DBFS / 10.0) * unit * width
    frame_total = bp.sum(axis=1)
    loud = frame_total > abs_floor.sum()
    if np.count_nonzero(loud) >= 3:
        live = np.flatnonzero(loud)
        k = min(live.shape[0] - 1, int(FLOOR_PERCENTILE / 100.0 * live.shape[0]))
        quiet = live[np.argsort(frame_total[live], kind="stable")[k]]
        floor = bp[quiet]
    else:
        floor = abs_floor.copy()
    floor = np.maximum(floor, abs_floor)
    evidence = 10.0 * np.log10(np.maximum(frame_total, 1e-30) / floor.sum())
    level = 10.0 * np.log10(np.maximum(frame_total, 1e-30))
    # the loud-frame reference leaves digital silence out too, so padding or trimming it
    # does not move the strong-frame threshold
    ref_frames = level[loud] if loud.any() else level
    ref = float(np.percentile(ref_frames, 99.0)) if ref_frames.shape[0] else 0.0
    strong = (evidence >= ON_DB) & (level >= ref - STRONG_DB)
    hang = round(HANG_S / HOP_S)
    if hang > 0 and strong.any():
        from scipy.ndimage import binary_dilation

        speech = binary_dilation(strong, np.ones(2 * hang + 1, dtype=bool))
    else:
        speech = strong
    floor_total = float(floor.sum() / (unit * width.sum()))
    floor_dbfs = 10.0 * math.log10(max(floor_total, 1e-30))
    # A tone or a noise under a syllable envelope changes its band levels only against the
    # constant floor, in the envelope's troughs: those are left out, and the floor with them.
    shaped = speech & (level >= ref - SHAPE_FRAME_DB)
    if np.count_nonzero(shaped) >= 2:
        shape = 10.0 * np.log10(np.maximum(bp[shaped], 1e-30))
        shape = np.maximum(shape, shape.max(axis=1, keepdims=True) - SHAPE_RANGE_DB)
        shape -= shape.mean(axis=1, keepdims=True)
        shape_var = float(shape.std(axis=0).mean())
    else:
        shape_var = 0.0
    strong_idx = np.flatnonzero(strong)
    return VoiceActivity(speech=speech, hop=hop / rate, window=window.shape[0] / rate,
                         evidence_db=evidence, floor_dbfs=floor_dbfs, shape_var_db=shape_var,
                         duration=y.shape[0] / rate,
                         strong_first=int(strong_idx[0]) if strong_idx.size else -1,
                         strong_last=int(strong_idx[-1]) if strong_idx.size else -1,
                         hang=hang if strong_idx.size else 0)


def voice_activity_of(audio: Audio, x: FloatArray, rate: int) -> VoiceActivity:
    """:func:`voice_activity` of an analysis signal, kept with the clip."""
    key = (f"probes.vad@{rate}/{HOP_S}/{WINDOW_S}/{BANDS}/{FLOOR_PERCENTILE}/{ON_DB}/"
           f"{STRONG_DB}/{HANG_S}/{ABS_FLOOR_DBFS}")
    return audio.derived(key, lambda: voice_activity(x, rate))
