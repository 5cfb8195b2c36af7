"""The voice analysis the acoustic probes share: one Praat pitch track and one speech span
per clip, kept with the clip (:func:`analyse`), and the speech-presence check
(:func:`check_speech`) that runs before any probe. Every formula and threshold is in
``docs/probes.md``; the probes themselves are :mod:`.acoustic`.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final

import numpy as np
import numpy.typing as npt

from .._util.deps import require
from .vad import VoiceActivity, voice_activity_of

if TYPE_CHECKING:
    from ..audio import Audio

#: The analysis settings and entry points that :mod:`.acoustic` serves too (users imported
#: them from there before the voice analysis had a module of its own).
ANALYSIS_API: Final = (
    "ANALYSIS_RATE",
    "PAUSE_MIN_S",
    "PITCH_CEILING_HZ",
    "PITCH_FLOOR_HZ",
    "PITCH_FLOOR_LOW_HZ",
    "PITCH_GUARD_HI",
    "PITCH_GUARD_LO",
    "PITCH_HIGHPASS_HZ",
    "PITCH_RATE",
    "PITCH_STEP_PERIODS",
    "SpeechCheck",
    "VoiceAnalysis",
    "analyse",
    "check_speech",
)

__all__ = [
    *ANALYSIS_API,
    "ANALYSIS_API",
    "MIN_VOICED_FRAMES",
    "SPEECH_MIN_F0_SPREAD_ST",
    "SPEECH_MIN_S",
    "SPEECH_CHECK_VERSION",
    "SPEECH_MIN_SHAPE_VAR_DB",
    "SPEECH_MIN_VOICED_S",
    "SPEECH_MIN_VOICED_SHARE",
    "median",
    "parselmouth",
    "percentile",
    "pitch_signal",
    "resample",
    "samples_for_analysis",
]

FloatArray = npt.NDArray[np.float64]

# ----------------------------------------------------------------------------- constants

#: Rate (Hz) at which the speech span, intensity and the gender front end are analysed: the
#: clip's own rate when it is at most this, else :meth:`Audio.at_16k` (shared with ASR and
#: the classifiers).
ANALYSIS_RATE: Final = 16_000
#: Rate (Hz) of the pitch analysis and of the intensity contour: F0 up to the 500 Hz ceiling
#: needs nothing above 2 kHz (eight samples per period at the ceiling; Praat interpolates the
#: autocorrelation peak), and Praat's cost per frame falls with the window's sample count.
PITCH_RATE: Final = 4_000
#: Praat pitch floor (Hz) for every clip: Praat's default for adult speech. A 50 Hz floor
#: tracked 60 Hz mains hum on real recordings (docs/probes.md, Pitch).
PITCH_FLOOR_HZ: Final = 75.0
#: The lower floor (Hz) used only where the request needs it: a man (adult or elderly) asked
#: for a low voice, whose F0 may sit below 75 Hz.
PITCH_FLOOR_LOW_HZ: Final = 50.0
#: High-pass before pitch tracking (Hz, 8th-order Butterworth): removes mains hum at 50/60 Hz
#: and rumble; the F0 of a voice above it, and its harmonics, pass.
PITCH_HIGHPASS_HZ: Final = 70.0
#: Praat pitch ceiling (Hz): above any speaking voice, children included.
PITCH_CEILING_HZ: Final = 500.0
#: Pitch analysis step (s) per pitch floor: Praat's own default, 0.75 / floor (10 ms at 75 Hz,
#: 15 ms at 50 Hz). A 30 ms step (pitch-praat@2/@3) sampled too few frames: the clip median
#: of a contour that jumps between phrase levels moved by over 1 semitone on 6 of 110 real
#: clips (docs/probes.md, Pitch).
PITCH_STEP_PERIODS: Final = 0.75
#: Octave-error guard: voiced frames outside [LO × Q1, HI × Q3] of the clip's own F0
#: quartiles are left out of the median (the F0 range rule of De Looze & Hirst 2008).
PITCH_GUARD_LO: Final = 0.75
PITCH_GUARD_HI: Final = 1.5
#: A clip with fewer voiced pitch frames than this has no measurable F0.
MIN_VOICED_FRAMES: Final = 3

#: Speech-presence check (all must hold): seconds of voice activity, seconds of voiced pitch
#: frames, voiced share of the voice activity, F0 interquartile range (semitones) and spectral
#: shape change (dB). Margins on real and synthetic speech are in docs/probes.md.
SPEECH_MIN_S: Final = 0.2
SPEECH_MIN_VOICED_S: Final = 0.15
SPEECH_MIN_VOICED_SHARE: Final = 0.15
SPEECH_MIN_F0_SPREAD_ST: Final = 0.3
SPEECH_MIN_SHAPE_VAR_DB: Final = 3.5
#: Version of the speech check (its criteria and their thresholds): part of every probe
#: cache key, so a clip checked by an older rule is checked again.
SPEECH_CHECK_VERSION: Final = "2"

#: A silent run inside the speech span lasting at least this long (s) is a pause and is left
#: out of the articulation time; shorter gaps (stop closures, word joins) stay in.
PAUSE_MIN_S: Final = 0.1

#: Key of the shared analysis kept with each clip; it names every setting the analysis reads,
#: so a change of settings can never reuse a stale analysis.
_ANALYSIS_KEY: Final = (f"probes.voice-analysis@{PITCH_RATE}/{PITCH_CEILING_HZ}/"
                       f"{PITCH_STEP_PERIODS}/{PITCH_GUARD_LO}/{PITCH_GUARD_HI}/"
                       f"{PITCH_HIGHPASS_HZ}/{PAUSE_MIN_S}")


# ----------------------------------------------------------------------------- shared analysis


@dataclass(frozen=True)
class VoiceAnalysis:
    """The Praat analysis several probes share.

    ``rate``: analysis rate (Hz). ``f0_hz``: F0 per pitch frame (0 = unvoiced), frames
    ``f0_step`` s apart starting at ``f0_t0`` (s). ``median_f0``: median F0 over the voiced
    frames inside the octave guard (Hz), or None when fewer than :data:`MIN_VOICED_FRAMES` are
    voiced. ``octave_outliers``: voiced frames the guard left out.
    ``voiced_fraction``: voiced frames / all frames. ``speech_start`` / ``speech_end``:
    first and last speech instant (s) after trimming silence. ``pause_s``: total length (s)
    of the ``pauses`` silent runs of at least :data:`PAUSE_MIN_S` between them.
    ``duration``: clip length (s). ``floor_hz``: the pitch floor of the track. ``vad``: the
    voice activity (speech frames) the span comes from.
    """

    rate: int
    f0_hz: FloatArray
    f0_t0: float
    median_f0: float | None
    voiced_fraction: float
    speech_start: float
    speech_end: float
    pause_s: float
    pauses: int
    duration: float
    floor_hz: float = PITCH_FLOOR_HZ
    vad: VoiceActivity | None = None
    f0_step: float = PITCH_STEP_PERIODS / PITCH_FLOOR_HZ
    octave_outliers: int = 0

    @property
    def speech_time(self) -> float:
        """Seconds between the first and last speech frame."""
        return self.speech_end - self.speech_start

    @property
    def articulation_time(self) -> float:
        """Speech time without its pauses (s)."""
        return self.speech_time - self.pause_s

    def voiced_mask(self, t: FloatArray) -> npt.NDArray[np.bool_]:
        """For each time in ``t`` (s): is the pitch frame nearest to it voiced?"""
        i = np.rint((t - self.f0_t0) / self.f0_step).astype(np.int64)
        inside = (i >= 0) & (i < self.f0_hz.shape[0])
        out = np.zeros(t.shape[0], dtype=bool)
        out[inside] = self.f0_hz[i[inside]] > 0
        return out


def parselmouth() -> Any:
    """The ``parselmouth`` module (Praat), or MissingDependencyError naming the extra."""
    return require("parselmouth", "the acoustic probes", "probes", package="praat-parselmouth")


def samples_for_analysis(audio: Audio) -> tuple[FloatArray, int]:
    """The analysis signal (float64, kept with the clip: span, pitch and the gender front end
    share it) and its rate (Hz)."""
    rate = min(audio.sample_rate, ANALYSIS_RATE)

    def compute() -> FloatArray:
        x = audio.samples if audio.sample_rate <= ANALYSIS_RATE else audio.at_16k()
        y = np.array(x, dtype=np.float64)
        y.setflags(write=False)
        return y

    return audio.derived("probes.analysis-signal", compute), rate


def resample(x: FloatArray, rate: int, target: int) -> FloatArray:
    """``x`` from ``rate`` to ``target`` (Hz), soxr HQ; ``x`` itself when they are equal."""
    if rate == target:
        return x
    soxr = require("soxr", "resampling for the probes", "probes", package="soxr")
    return np.asarray(soxr.resample(x, rate, target, quality="HQ"), dtype=np.float64)


def percentile(x: FloatArray, q: float) -> float:
    """``np.percentile(x, q)`` (linear method, same arithmetic) without its overhead: the
    probes take a few percentiles of short arrays per clip."""
    n = x.shape[0]
    pos = q / 100.0 * (n - 1)
    lo = min(math.floor(pos), n - 1)
    hi = min(lo + 1, n - 1)
    part = np.partition(x, (lo, hi))
    a, b, t = float(part[lo]), float(part[hi]), float(pos - lo)
    if a == b:
        return a
    return a + (b - a) * t if t < 0.5 else b - (b - a) * (1.0 - t)


def median(x: FloatArray) -> float:
    """``np.median(x)`` of a non-empty 1-D array, without its overhead."""
    n = x.shape[0]
    half = n // 2
    if n % 2:
        return float(np.partition(x, half)[half])
    part = np.partition(x, (half - 1, half))
    return (float(part[half - 1]) + float(part[half])) / 2.0


def pitch_signal(audio: Audio) -> FloatArray:
    """The analysis signal at :data:`PITCH_RATE` (kept with the clip: pitch and intensity)."""
    def compute() -> FloatArray:
        x, rate = samples_for_analysis(audio)
        y = resample(x, rate, PITCH_RATE)
        if PITCH_HIGHPASS_HZ > 0 and y.shape[0]:
            from scipy.signal import sosfiltfilt

            y = np.ascontiguousarray(sosfiltfilt(_highpass(), y))
        y.setflags(write=False)
        return y
    return audio.derived(f"probes.pitch-signal@{PITCH_RATE}/{PITCH_HIGHPASS_HZ}", compute)


@functools.cache
def _highpass() -> npt.NDArray[np.float64]:
    from scipy.signal import butter

    return np.asarray(butter(4, PITCH_HIGHPASS_HZ, btype="highpass", fs=PITCH_RATE,
                             output="sos"), dtype=np.float64)


def _analyse(audio: Audio, floor_hz: float) -> VoiceAnalysis:
    pm = parselmouth()
    snd = pm.Sound(pitch_signal(audio), sampling_frequency=PITCH_RATE)
    step = PITCH_STEP_PERIODS / floor_hz
    try:
        pitch = snd.to_pitch_ac(time_step=step, pitch_floor=floor_hz,
                                pitch_ceiling=PITCH_CEILING_HZ)
        f0 = np.array(pitch.selected_array["frequency"], dtype=np.float64)
        t0 = float(pitch.x1) if f0.shape[0] else 0.0
    except pm.PraatError:  # shorter than one analysis window (3 periods of the floor)
        f0 = np.zeros(0, dtype=np.float64)
        t0 = 0.0
    f0 = np.where(np.isfinite(f0), f0, 0.0)
    voiced = f0[f0 > 0]
    median_f0, outliers = _guarded_median(voiced)
    x, rate = samples_for_analysis(audio)
    vad = voice_activity_of(audio, x, rate)
    start, end, pause_s, pauses = vad.span(PAUSE_MIN_S)
    result = VoiceAnalysis(
        rate=rate,
        f0_hz=f0,
        f0_t0=t0,
        median_f0=median_f0,
        voiced_fraction=float(voiced.shape[0] / f0.shape[0]) if f0.shape[0] else 0.0,
        speech_start=start,
        speech_end=end,
        pause_s=pause_s,
        pauses=pauses,
        duration=audio.duration,
        floor_hz=floor_hz,
        vad=vad,
        f0_step=step,
        octave_outliers=outliers,
    )
    result.f0_hz.setflags(write=False)
    return result


def _guarded_median(voiced: FloatArray) -> tuple[float | None, int]:
    """Median of the voiced F0 values inside the octave guard [0.75 Q1, 1.5 Q3], and how many
    values the guard left out; (None, 0) below :data:`MIN_VOICED_FRAMES` values."""
    if voiced.shape[0] < MIN_VOICED_FRAMES:
        return None, 0
    lo = PITCH_GUARD_LO * percentile(voiced, 25.0)
    hi = PITCH_GUARD_HI * percentile(voiced, 75.0)
    kept = voiced[(voiced >= lo) & (voiced <= hi)]
    return median(kept), int(voiced.shape[0] - kept.shape[0])


def analyse(audio: Audio, *, floor_hz: float = PITCH_FLOOR_HZ) -> VoiceAnalysis:
    """The shared pitch track (floor ``floor_hz``) and speech span of ``audio``, computed
    once per clip and floor and kept with it (:meth:`Audio.derived`), so the probes of one set
    analyse a clip once."""
    return audio.derived(f"{_ANALYSIS_KEY}/{floor_hz}", lambda: _analyse(audio, floor_hz))


@dataclass(frozen=True)
class SpeechCheck:
    """Whether a clip holds speech at all, and the numbers that decided it.

    ``present``: every criterion holds. ``reason``: the first criterion that failed (None when
    present). ``speech_s``: seconds of voice activity (:mod:`.vad`). ``voiced_s``: seconds of
    voiced pitch frames (75–500 Hz). ``voiced_share``: voiced_s / speech_s. ``f0_spread_st``:
    interquartile range of F0 over voiced frames (semitones): a voice moves, a tone or hum
    does not. ``shape_var_db``: how much the spectral shape changes over the speech frames
    (dB): formants move, stationary noise and tones do not.
    """

    present: bool
    reason: str | None
    speech_s: float
    voiced_s: float
    voiced_share: float
    f0_spread_st: float
    shape_var_db: float

    def to_dict(self) -> dict[str, Any]:
        return {"present": self.present, "reason": self.reason, "speech_s": self.speech_s,
                "voiced_s": self.voiced_s, "voiced_share": self.voiced_share,
                "f0_spread_st": self.f0_spread_st, "shape_var_db": self.shape_var_db}


def check_speech(audio: Audio) -> SpeechCheck:
    """The speech-presence check of a clip (thresholds ``SPEECH_MIN_*``; docs/probes.md)."""
    a = analyse(audio)
    vad = a.vad
    speech_s = vad.speech_s if vad is not None else 0.0
    shape = vad.shape_var_db if vad is not None else 0.0
    voiced = a.f0_hz[a.f0_hz > 0]
    voiced_s = voiced.shape[0] * a.f0_step
    share = voiced_s / speech_s if speech_s > 0 else 0.0
    if voiced.shape[0] >= 4:
        st = 12.0 * np.log2(voiced)
        spread = percentile(st, 75.0) - percentile(st, 25.0)
    else:
        spread = 0.0
    checks = (
        (speech_s >= SPEECH_MIN_S, f"voice activity {speech_s:.2f} s < {SPEECH_MIN_S} s"),
        (voiced_s >= SPEECH_MIN_VOICED_S,
         f"voiced frames {voiced_s:.2f} s < {SPEECH_MIN_VOICED_S} s"),
        (share >= SPEECH_MIN_VOICED_SHARE,
         f"voiced share {share:.2f} < {SPEECH_MIN_VOICED_SHARE}"),
        (spread >= SPEECH_MIN_F0_SPREAD_ST,
         f"F0 spread {spread:.2f} st < {SPEECH_MIN_F0_SPREAD_ST} st (a steady tone)"),
        (shape >= SPEECH_MIN_SHAPE_VAR_DB,
         f"spectral change {shape:.2f} dB < {SPEECH_MIN_SHAPE_VAR_DB} dB (stationary sound)"),
    )
    reason = next((why for ok, why in checks if not ok), None)
    return SpeechCheck(present=reason is None, reason=None if reason is None else
                       f"no speech: {reason}", speech_s=speech_s, voiced_s=voiced_s,
                       voiced_share=share, f0_spread_st=spread, shape_var_db=shape)
