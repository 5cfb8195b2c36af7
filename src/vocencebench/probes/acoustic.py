"""Acoustic probes: pitch, pace, loudness and an offline gender heuristic, plus the DNSMOS
quality diagnostic. Every formula, threshold and source is in ``docs/probes.md``.

All four probes are pure functions of the waveform (and of the item's request and script):
the same clip gives the same bits on every run. Pitch and gender share one Praat pitch track
and pace shares the speech span, memoised per process by a digest of the samples
(:func:`analyse`), so running the whole set costs one analysis.

A trait a probe cannot measure on a clip (no voiced frames for pitch and gender, a script
without syllables for pace) is left out of its answer and the reason is logged on the
``vocencebench.probes`` logger at WARNING level; nothing is guessed.
"""

from __future__ import annotations

import functools
import logging
import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final

import numpy as np
import numpy.typing as npt

from ..decide import desirability
from ..errors import ConfigError, MissingDependencyError, ProbeError
from ..schema import Item, ProbeResult
from .syllables import count_syllables

if TYPE_CHECKING:
    from ..audio import Audio

__all__ = [
    "AGE_GROUPS",
    "ANALYSIS_RATE",
    "DNSMOS_WINDOW_S",
    "GENDER_F0_MID_HZ",
    "GENDER_F3_MID_HZ",
    "LOUDNESS_EDGES_LUFS",
    "PACE_DISAGREE_FACTOR",
    "PACE_EDGES_PPS",
    "PACE_MIN_SYLLABLES",
    "PAUSE_MIN_S",
    "PITCH_CEILING_HZ",
    "PITCH_EDGE_SEMITONES",
    "PITCH_FLOOR_HZ",
    "PITCH_RATE",
    "REFERENCE_F0_HZ",
    "DnsmosDiagnostic",
    "GenderHeuristicProbe",
    "LoudnessProbe",
    "PaceProbe",
    "PitchProbe",
    "VoiceAnalysis",
    "age_group",
    "analyse",
    "integrated_loudness",
]

log = logging.getLogger("vocencebench.probes")

FloatArray = npt.NDArray[np.float64]

# ----------------------------------------------------------------------------- constants

#: Rate (Hz) at which the speech span, intensity and the formants' source are analysed: the
#: clip's own rate when it is at most this, else :meth:`Audio.at_16k` (shared with ASR and
#: the classifiers).
ANALYSIS_RATE: Final = 16_000
#: Rate (Hz) of the pitch analysis and of the intensity contour: F0 up to the 500 Hz ceiling
#: needs nothing above 2 kHz (eight samples per period at the ceiling; Praat interpolates the
#: autocorrelation peak), and Praat's cost per frame falls with the window's sample count.
PITCH_RATE: Final = 4_000
#: Praat pitch floor (Hz): 75 Hz (Praat's default) lost the lowest male voices.
PITCH_FLOOR_HZ: Final = 50.0
#: Praat pitch ceiling (Hz): above any speaking voice, children included.
PITCH_CEILING_HZ: Final = 500.0
#: Pitch analysis step (s): half a 60 ms window (Praat's default for a 50 Hz floor is 15 ms).
#: A median over a clip needs coverage, not resolution: on 135 eSpeak clips the median moved
#: by 0.2 % (median; at most 0.26 semitones) from the 8 kHz, 15 ms track, at 40 % of its cost.
PITCH_TIME_STEP_S: Final = 0.03
#: A clip with fewer voiced pitch frames than this has no measurable F0 (3 frames = 90 ms).
MIN_VOICED_FRAMES: Final = 3

#: Age groups (lower bound, years, inclusive) of a requested age: under 11 child, 11–16 teen,
#: 17–59 adult, 60 and over elderly.
AGE_GROUPS: Final[tuple[tuple[str, float], ...]] = (
    ("child", 0.0), ("teen", 11.0), ("adult", 17.0), ("elderly", 60.0),
)  # fmt: skip
#: Typical speaking F0 (Hz) by requested gender and age group, from published norms (sources
#: in docs/probes.md). Pitch buckets are semitones from this reference.
REFERENCE_F0_HZ: Final[Mapping[tuple[str, str], float]] = {
    ("male", "child"): 250.0, ("female", "child"): 250.0,
    ("male", "teen"): 170.0, ("female", "teen"): 220.0,
    ("male", "adult"): 110.0, ("female", "adult"): 200.0,
    ("male", "elderly"): 120.0, ("female", "elderly"): 185.0,
}  # fmt: skip
#: Semitones from the reference beyond which pitch is "low" (below −edge) or "high" (above).
PITCH_EDGE_SEMITONES: Final = 3.0

#: Pace buckets (phones of the script per second of articulation time): slow below the first
#: edge, fast above the second, moderate between. At 2.6 phones per syllable (the corpus's
#: average) they are 3.65 and 5.4 syllables per second of articulation.
PACE_EDGES_PPS: Final = (9.5, 14.0)
#: A silent run inside the speech span lasting at least this long (s) is a pause and is left
#: out of the articulation time; shorter gaps (stop closures, word joins) stay in.
PAUSE_MIN_S: Final = 0.1
#: Scripts with fewer syllables than this are flagged ``short_script``: phrase-final lengthening
#: weighs more in them, so they read slower at the same tempo.
PACE_MIN_SYLLABLES: Final = 10
#: Frame length and hop (s) of the energy envelope used to trim leading/trailing silence.
TRIM_FRAME_S: Final = 0.020
TRIM_HOP_S: Final = 0.010
#: A frame is speech when its RMS level is within this many dB of the loudest frame ...
TRIM_BELOW_PEAK_DB: Final = 35.0
#: ... and at least this many dB above the clip's noise floor (5th percentile frame level).
TRIM_ABOVE_FLOOR_DB: Final = 6.0
#: de Jong & Wempe syllable nuclei: intensity peaks above (99th percentile − this many dB) ...
NUCLEI_SILENCE_DB: Final = 25.0
#: ... that rise at least this many dB above the dip before them, and are voiced.
NUCLEI_MIN_DIP_DB: Final = 2.0
#: Text rate and acoustic rate disagree badly when one exceeds the other by this factor.
PACE_DISAGREE_FACTOR: Final = 1.6

#: Loudness buckets (LUFS, ITU-R BS.1770 integrated): quiet below the first edge, loud above
#: the second.
LOUDNESS_EDGES_LUFS: Final = (-23.0, -17.5)
#: BS.1770 gating block (s): a shorter clip is measured as one block (see integrated_loudness).
LOUDNESS_BLOCK_S: Final = 0.4

#: Gender heuristic: F0 (Hz) and third formant (Hz) half-way between typical adult men and
#: women, and the spans that count as one unit of evidence.
GENDER_F0_MID_HZ: Final = 165.0
GENDER_F3_MID_HZ: Final = 2750.0
GENDER_SEMITONES_PER_UNIT: Final = 3.0
GENDER_F3_HZ_PER_UNIT: Final = 200.0
#: The third formant's evidence is capped at this many units either way (F3 outside
#: 2350–3150 Hz counts as at the edge): beyond that a value is as likely a tracking error as a
#: vocal tract. So when F0 alone is further than this from the midpoint, F3 cannot change the
#: label and is not measured.
GENDER_F3_MAX_UNITS: Final = 2.0
#: Formant analysis: Burg, 5 formants below 5500 Hz (Praat's settings for adult speech) on
#: the clip resampled to 11 kHz, one frame per this step (s).
FORMANT_MAX_HZ: Final = 5500.0
FORMANT_TIME_STEP_S: Final = 0.04

#: Key of the shared analysis kept with each clip; it names every setting the analysis reads,
#: so a change of settings can never reuse a stale analysis.
_ANALYSIS_KEY: Final = (f"probes.voice-analysis@{PITCH_RATE}/{PITCH_FLOOR_HZ}/{PITCH_CEILING_HZ}/"
                       f"{PITCH_TIME_STEP_S}/{TRIM_HOP_S}/{PAUSE_MIN_S}")

#: DNSMOS analyses 9.01 s windows (shorter clips are repeated to fill one), one per second.
DNSMOS_WINDOW_S: Final = 9.01


# ----------------------------------------------------------------------------- shared analysis


@dataclass(frozen=True)
class VoiceAnalysis:
    """The Praat analysis several probes share.

    ``rate``: analysis rate (Hz). ``f0_hz``: F0 per pitch frame (0 = unvoiced), frames
    :data:`PITCH_TIME_STEP_S` apart starting at ``f0_t0`` (s). ``median_f0``: median F0 over
    voiced frames (Hz) or None when fewer than :data:`MIN_VOICED_FRAMES` are voiced.
    ``voiced_fraction``: voiced frames / all frames. ``speech_start`` / ``speech_end``:
    first and last speech instant (s) after trimming silence. ``pause_s``: total length (s)
    of the ``pauses`` silent runs of at least :data:`PAUSE_MIN_S` between them.
    ``duration``: clip length (s).
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
        i = np.rint((t - self.f0_t0) / PITCH_TIME_STEP_S).astype(np.int64)
        inside = (i >= 0) & (i < self.f0_hz.shape[0])
        out = np.zeros(t.shape[0], dtype=bool)
        out[inside] = self.f0_hz[i[inside]] > 0
        return out


def _parselmouth() -> Any:
    try:
        import parselmouth
    except ImportError as exc:
        raise MissingDependencyError(
            "the acoustic probes", "probes", package="praat-parselmouth"
        ) from exc
    return parselmouth


def _samples_for_analysis(audio: Audio) -> tuple[FloatArray, int]:
    """The analysis signal (float64, kept with the clip: span, pitch and formants share it)
    and its rate (Hz)."""
    rate = min(audio.sample_rate, ANALYSIS_RATE)

    def compute() -> FloatArray:
        x = audio.samples if audio.sample_rate <= ANALYSIS_RATE else audio.at_16k()
        y = np.array(x, dtype=np.float64)
        y.setflags(write=False)
        return y

    return audio.derived("probes.analysis-signal", compute), rate


def _resample(x: FloatArray, rate: int, target: int) -> FloatArray:
    if rate == target:
        return x
    try:
        import soxr
    except ImportError as exc:
        raise MissingDependencyError("resampling for the probes", "probes", package="soxr") \
            from exc
    return np.asarray(soxr.resample(x, rate, target, quality="HQ"), dtype=np.float64)


def _percentile(x: FloatArray, q: float) -> float:
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


def _median(x: FloatArray) -> float:
    """``np.median(x)`` of a non-empty 1-D array, without its overhead."""
    n = x.shape[0]
    half = n // 2
    if n % 2:
        return float(np.partition(x, half)[half])
    part = np.partition(x, (half - 1, half))
    return (float(part[half - 1]) + float(part[half])) / 2.0


def _pitch_signal(audio: Audio) -> FloatArray:
    """The analysis signal at :data:`PITCH_RATE` (kept with the clip: pitch and intensity)."""
    def compute() -> FloatArray:
        x, rate = _samples_for_analysis(audio)
        y = _resample(x, rate, PITCH_RATE)
        y.setflags(write=False)
        return y
    return audio.derived(f"probes.pitch-signal@{PITCH_RATE}", compute)


def _speech_span(x: FloatArray, rate: int) -> tuple[float, float, float, int]:
    """(first speech instant s, last speech instant s, pause time s, pauses) of ``x``: the
    pauses are the runs of non-speech frames between them lasting ≥ PAUSE_MIN_S."""
    hop = max(1, round(TRIM_HOP_S * rate))
    frame = 2 * hop  # TRIM_FRAME_S: two hops, so a frame's energy is the sum of two blocks
    n = x.shape[0] // hop - 1
    if n < 1:
        return 0.0, x.shape[0] / rate, 0.0, 0
    blocks = np.square(x[:(n + 1) * hop]).reshape(n + 1, hop).sum(axis=1)
    rms = np.sqrt((blocks[:-1] + blocks[1:]) / frame)
    level = 20.0 * np.log10(np.maximum(rms, 1e-10))
    threshold = max(float(level.max()) - TRIM_BELOW_PEAK_DB,
                    _percentile(level, 5.0) + TRIM_ABOVE_FLOOR_DB)
    is_speech = level >= threshold
    speech = np.flatnonzero(is_speech)
    if speech.size == 0:  # a flat envelope: every frame is equally loud
        return 0.0, x.shape[0] / rate, 0.0, 0
    first, last = int(speech[0]), int(speech[-1])
    start = first * hop / rate
    end = min(x.shape[0], last * hop + frame) / rate
    # runs of non-speech frames inside the span: +1 where one starts, -1 after it ends
    edges = np.diff(np.concatenate([[0], (~is_speech[first:last + 1]).astype(np.int8), [0]]))
    runs = np.flatnonzero(edges == -1) - np.flatnonzero(edges == 1)  # frames per run
    pauses = runs[runs >= round(PAUSE_MIN_S / TRIM_HOP_S)]
    return start, end, float(pauses.sum()) * hop / rate, int(pauses.shape[0])


def _analyse(audio: Audio) -> VoiceAnalysis:
    pm = _parselmouth()
    snd = pm.Sound(_pitch_signal(audio), sampling_frequency=PITCH_RATE)
    try:
        pitch = snd.to_pitch_ac(time_step=PITCH_TIME_STEP_S, pitch_floor=PITCH_FLOOR_HZ,
                                pitch_ceiling=PITCH_CEILING_HZ)
        f0 = np.array(pitch.selected_array["frequency"], dtype=np.float64)
        t0 = float(pitch.x1) if f0.shape[0] else 0.0
    except pm.PraatError:  # shorter than one analysis window (3 periods of the floor)
        f0 = np.zeros(0, dtype=np.float64)
        t0 = 0.0
    f0 = np.where(np.isfinite(f0), f0, 0.0)
    voiced = f0[f0 > 0]
    median = _median(voiced) if voiced.shape[0] >= MIN_VOICED_FRAMES else None
    x, rate = _samples_for_analysis(audio)
    start, end, pause_s, pauses = _speech_span(x, rate)
    result = VoiceAnalysis(
        rate=rate,
        f0_hz=f0,
        f0_t0=t0,
        median_f0=median,
        voiced_fraction=float(voiced.shape[0] / f0.shape[0]) if f0.shape[0] else 0.0,
        speech_start=start,
        speech_end=end,
        pause_s=pause_s,
        pauses=pauses,
        duration=audio.duration,
    )
    result.f0_hz.setflags(write=False)
    return result


def analyse(audio: Audio) -> VoiceAnalysis:
    """The shared pitch track and speech span of ``audio``, computed once per clip and kept
    with it (:meth:`Audio.derived`), so the probes of one set analyse a clip once."""
    return audio.derived(_ANALYSIS_KEY, lambda: _analyse(audio))


def age_group(age: str | float) -> str:
    """The age group (child, teen, adult, elderly) of a requested age in years."""
    try:
        years = float(age)
    except (TypeError, ValueError):
        raise ConfigError(f"requested age {age!r} is not a number of years") from None
    if not math.isfinite(years) or years < 0:
        raise ConfigError(f"requested age {age!r} must be a finite number of years ≥ 0")
    group = AGE_GROUPS[0][0]
    for name, lower in AGE_GROUPS:
        if years >= lower:
            group = name
    return group


def _requested(item: Item, trait: str, probe: str) -> str:
    try:
        return item.traits[trait]
    except KeyError:
        raise ProbeError(
            f"{probe} needs the requested {trait!r} of item {item.id}, which has none; "
            "corpus items must name every trait (see traits.TRAITS)"
        ) from None


def _absent(probe: str, trait: str, audio: Audio, reason: str) -> dict[str, ProbeResult]:
    log.warning("%s: %s not measured on %s: %s", probe, trait, audio.name or audio.sha256[:12],
                reason)
    return {}


# ----------------------------------------------------------------------------- pitch


@dataclass
class PitchProbe:
    """Median F0 (Hz, Praat autocorrelation, 50–500 Hz) over voiced frames, bucketed by
    semitones from the typical F0 of the requested gender and age group."""

    name: str = "pitch-praat"
    version: str = "2"
    traits: tuple[str, ...] = ("pitch",)

    def measure(self, audio: Audio, item: Item) -> dict[str, ProbeResult]:
        pid = f"{self.name}@{self.version}"
        gender = _requested(item, "gender", pid)
        group = age_group(_requested(item, "age", pid))
        try:
            ref = REFERENCE_F0_HZ[(gender, group)]
        except KeyError:
            raise ProbeError(
                f"{pid}: no reference F0 for gender {gender!r}; valid: male, female"
            ) from None
        a = analyse(audio)
        if a.median_f0 is None:
            return _absent(pid, "pitch", audio, f"fewer than {MIN_VOICED_FRAMES} voiced frames "
                           f"(voiced fraction {a.voiced_fraction:.3f})")
        st = 12.0 * math.log2(a.median_f0 / ref)
        label = "low" if st < -PITCH_EDGE_SEMITONES else "high" if st > PITCH_EDGE_SEMITONES \
            else "medium"
        return {"pitch": ProbeResult(
            trait="pitch", value=a.median_f0, unit="Hz", label=label,
            d=desirability("pitch", label, _requested(item, "pitch", pid)),
            probe=pid,
            detail={"semitones": st, "reference_hz": ref, "age_group": group,
                    "voiced_fraction": a.voiced_fraction},
        )}


# ----------------------------------------------------------------------------- pace


def _nuclei(audio: Audio, a: VoiceAnalysis) -> int:
    """Syllable nuclei after de Jong & Wempe (2009): voiced intensity peaks inside the speech
    span, above (99th percentile − 25 dB), each rising ≥ 2 dB above the dip before it.
    The intensity contour is Praat's (minimum pitch 50 Hz) on the pitch signal (≤ 4 kHz: vowel
    energy, where the nuclei are)."""
    pm = _parselmouth()
    try:
        intensity = pm.Sound(_pitch_signal(audio), sampling_frequency=PITCH_RATE).to_intensity(
            minimum_pitch=PITCH_FLOOR_HZ, subtract_mean=True)
    except pm.PraatError:
        return 0
    db = np.asarray(intensity.values[0], dtype=np.float64)
    t = intensity.x1 + intensity.dx * np.arange(db.shape[0])
    keep = (t >= a.speech_start) & (t <= a.speech_end) & np.isfinite(db)
    db, t = db[keep], t[keep]
    if db.shape[0] < 3:
        return 0
    threshold = _percentile(db, 99.0) - NUCLEI_SILENCE_DB
    mid = db[1:-1]
    peaks = np.flatnonzero((mid > db[:-2]) & (mid >= db[2:]) & (mid > threshold)) + 1
    voiced = a.voiced_mask(t[peaks]).tolist()
    count = 0
    prev: int | None = None
    for i, is_voiced in zip(peaks.tolist(), voiced, strict=True):
        dip_ok = prev is None or db[i] - float(db[prev:i + 1].min()) >= NUCLEI_MIN_DIP_DB
        if dip_ok and is_voiced:
            count += 1
        prev = i
    return count


@dataclass
class PaceProbe:
    """Articulation rate: phones of the script (CMU dictionary, spoken form) per second of
    speech with its pauses (silent runs ≥ 100 ms) left out; the speaking rate in syllables/s
    and an acoustic syllable-nucleus count are reported beside it."""

    name: str = "pace-phones"
    version: str = "1"
    traits: tuple[str, ...] = ("pace",)

    def measure(self, audio: Audio, item: Item) -> dict[str, ProbeResult]:
        pid = f"{self.name}@{self.version}"
        requested = _requested(item, "pace", pid)
        syl = count_syllables(item.text)
        if syl.total == 0:
            return _absent(pid, "pace", audio, "the script has no syllables to count")
        a = analyse(audio)
        if a.articulation_time <= 0:
            return _absent(pid, "pace", audio, "no speech span was found")
        rate = syl.phones / a.articulation_time
        nuclei = _nuclei(audio, a)
        ratio = syl.total / nuclei if nuclei > 0 else math.inf
        disagree = not (1.0 / PACE_DISAGREE_FACTOR <= ratio <= PACE_DISAGREE_FACTOR)
        lo, hi = PACE_EDGES_PPS
        label = "slow" if rate < lo else "fast" if rate > hi else "moderate"
        return {"pace": ProbeResult(
            trait="pace", value=rate, unit="phones/s", label=label,
            d=desirability("pace", label, requested), probe=pid,
            detail={
                "phones": syl.phones,
                "syllables": syl.total,
                "short_script": syl.total < PACE_MIN_SYLLABLES,
                "articulation_s": a.articulation_time,
                "pause_s": a.pause_s,
                "pauses": a.pauses,
                "speech_s": a.speech_time,
                "speech_start_s": a.speech_start,
                "speech_end_s": a.speech_end,
                "syllables_per_s": syl.total / a.speech_time,
                "words_by_rule": list(syl.unknown),
                "acoustic_nuclei": nuclei,
                "acoustic_rate": nuclei / a.speech_time,
                "text_to_acoustic": ratio if math.isfinite(ratio) else None,
                "disagreement": disagree,
            },
        )}


# ----------------------------------------------------------------------------- loudness


def _pyloudnorm() -> Any:
    try:
        import pyloudnorm
    except ImportError as exc:
        raise MissingDependencyError("the loudness probe", "probes", package="pyloudnorm") \
            from exc
    return pyloudnorm


@functools.lru_cache(maxsize=16)
def _k_weighting(sample_rate: int) -> npt.NDArray[np.float64]:
    """BS.1770 K-weighting at ``sample_rate`` Hz as second-order sections (pyloudnorm's
    coefficients: its high shelf, then its high pass)."""
    meter = _pyloudnorm().Meter(sample_rate)
    sos = [np.concatenate([f.passband_gain * np.asarray(f.b, dtype=np.float64),
                           np.asarray(f.a, dtype=np.float64)])
           for f in (meter._filters["high_shelf"], meter._filters["high_pass"])]
    return np.array(sos, dtype=np.float64)


def _bs1770(x: FloatArray, sample_rate: int) -> float:
    """pyloudnorm's ``Meter.integrated_loudness`` for one channel (same filters, same block
    bounds, same gates) with the per-block loops vectorised; agrees within 1e-9 LU."""
    from scipy.signal import sosfilt

    y = sosfilt(_k_weighting(sample_rate).copy(), x)  # scipy wants writable sections
    block, step = LOUDNESS_BLOCK_S, 0.25  # 400 ms blocks, 75 % overlap
    n_blocks = int(np.round((x.shape[0] / sample_rate - block) / (block * step))) + 1
    j = np.arange(n_blocks)
    lower = (block * (j * step) * sample_rate).astype(np.int64)
    upper = (block * (j * step + 1) * sample_rate).astype(np.int64)
    # reduceat over interleaved (lower, upper) bounds sums each block at even positions;
    # the trailing zero makes the clip's end a valid bound (pyloudnorm's slices stop there).
    bounds = np.minimum(np.stack([lower, upper], axis=1).ravel(), y.shape[0])
    energy = np.add.reduceat(np.concatenate([np.square(y), [0.0]]), bounds)[0::2]
    z = energy / (block * sample_rate)
    with np.errstate(divide="ignore"):
        level = -0.691 + 10.0 * np.log10(z)
    above_abs = level >= -70.0
    if not above_abs.any():
        return -math.inf
    relative = -0.691 + 10.0 * math.log10(float(np.mean(z[above_abs]))) - 10.0
    gated = z[(level > relative) & (level > -70.0)]
    if gated.shape[0] == 0:
        return -math.inf
    return -0.691 + 10.0 * math.log10(float(np.mean(gated)))


def integrated_loudness(samples: npt.ArrayLike, sample_rate: int) -> tuple[float | None, bool]:
    """ITU-R BS.1770-4 integrated loudness (LUFS) of mono ``samples`` at ``sample_rate`` Hz,
    and whether the clip was shorter than one 400 ms gating block.

    A short clip is zero-padded to one block and the padding's share is added back
    (+10·log10(block samples / clip samples)), which gives the K-weighted mean square of the
    clip itself as one ungated block.
    Returns ``(None, short)`` when every block is below the −70 LUFS absolute gate.
    """
    x = np.asarray(samples, dtype=np.float64)
    block = LOUDNESS_BLOCK_S * sample_rate  # samples per gating block (pyloudnorm's divisor)
    short = x.shape[0] < block
    correction = 0.0
    if short:
        if x.shape[0] == 0:
            raise ProbeError("cannot measure the loudness of an empty clip")
        correction = 10.0 * math.log10(block / x.shape[0])
        x = np.concatenate([x, np.zeros(math.ceil(block) - x.shape[0])])
    lufs = _bs1770(x, sample_rate)
    if not math.isfinite(lufs):
        return None, short
    return lufs + correction, short


@dataclass
class LoudnessProbe:
    """Integrated loudness (LUFS, ITU-R BS.1770 via pyloudnorm), bucketed quiet/normal/loud."""

    name: str = "loudness-bs1770"
    version: str = "2"
    traits: tuple[str, ...] = ("loudness",)

    def measure(self, audio: Audio, item: Item) -> dict[str, ProbeResult]:
        pid = f"{self.name}@{self.version}"
        requested = _requested(item, "loudness", pid)
        lufs, short = integrated_loudness(audio.samples, audio.sample_rate)
        lo, hi = LOUDNESS_EDGES_LUFS
        if lufs is None:
            label = "quiet"
            detail: dict[str, Any] = {"below_absolute_gate": True, "short_clip": short}
        else:
            label = "quiet" if lufs < lo else "loud" if lufs > hi else "normal"
            detail = {"below_absolute_gate": False, "short_clip": short}
        peak = float(np.max(np.abs(audio.samples)))
        detail["peak_dbfs"] = 20.0 * math.log10(peak) if peak > 0 else None
        return {"loudness": ProbeResult(
            trait="loudness", value=lufs, unit="LUFS", label=label,
            d=desirability("loudness", label, requested), probe=pid, detail=detail,
        )}


# ----------------------------------------------------------------------------- gender


def _median_f3(audio: Audio, a: VoiceAnalysis) -> float | None:
    """Median third formant (Hz) over voiced frames, or None when the clip's rate cannot hold
    it (below 11 kHz) or no voiced frame has an F3."""
    if audio.sample_rate < 2 * FORMANT_MAX_HZ:
        return None
    pm = _parselmouth()
    x, rate = _samples_for_analysis(audio)
    target = int(2 * FORMANT_MAX_HZ)
    try:
        formant = pm.Sound(_resample(x, rate, target), sampling_frequency=target) \
            .to_formant_burg(time_step=FORMANT_TIME_STEP_S, max_number_of_formants=5,
                             maximum_formant=FORMANT_MAX_HZ)
    except pm.PraatError:
        return None
    t = formant.x1 + formant.dx * np.arange(formant.nx)
    f3 = np.array([formant.get_value_at_time(3, float(tt)) for tt in t[a.voiced_mask(t)]],
                  dtype=np.float64)
    f3 = f3[np.isfinite(f3) & (f3 > 0)]
    return _median(f3) if f3.shape[0] else None


@dataclass
class GenderHeuristicProbe:
    """Offline male/female heuristic from median F0 and the third formant (a classifier
    probe listed later in a ProbeSet replaces it)."""

    name: str = "gender-f0f3"
    version: str = "2"
    traits: tuple[str, ...] = ("gender",)

    def measure(self, audio: Audio, item: Item) -> dict[str, ProbeResult]:
        pid = f"{self.name}@{self.version}"
        requested = _requested(item, "gender", pid)
        a = analyse(audio)
        if a.median_f0 is None:
            return _absent(pid, "gender", audio, f"fewer than {MIN_VOICED_FRAMES} voiced frames")
        f0_units = 12.0 * math.log2(a.median_f0 / GENDER_F0_MID_HZ) / GENDER_SEMITONES_PER_UNIT
        decisive = abs(f0_units) > GENDER_F3_MAX_UNITS
        f3 = None if decisive else _median_f3(audio, a)
        f3_units = 0.0 if f3 is None else min(GENDER_F3_MAX_UNITS, max(
            -GENDER_F3_MAX_UNITS, (f3 - GENDER_F3_MID_HZ) / GENDER_F3_HZ_PER_UNIT))
        score = f0_units + f3_units
        label = "female" if score > 0 else "male"
        method = "f0 (decisive)" if decisive else "f0+f3" if f3 is not None else "f0"
        return {"gender": ProbeResult(
            trait="gender", value=label, unit="", label=label,
            d=desirability("gender", label, requested), probe=pid,
            detail={"heuristic": True, "score": score, "f0_hz": a.median_f0, "f3_hz": f3,
                    "method": method},
        )}


# ----------------------------------------------------------------------------- DNSMOS

#: Polynomials mapping DNSMOS P.835 raw network outputs to MOS (highest power first), as
#: published with the model in Microsoft's DNS Challenge repository (non-personalised).
_DNSMOS_POLY: Final[Mapping[str, tuple[float, ...]]] = {
    "sig": (-0.08397278, 1.22083953, 0.0052439),
    "bak": (-0.13166888, 1.60915514, -0.39604546),
    "ovrl": (-0.06766283, 1.11546468, 0.04602535),
}


@functools.cache
def _dnsmos_session() -> Any:
    try:
        import onnxruntime as ort
        import speechmos
    except ImportError as exc:
        raise MissingDependencyError(
            "the DNSMOS quality diagnostic", "probes", package="speechmos, onnxruntime"
        ) from exc
    import os

    path = os.path.join(os.path.dirname(os.path.abspath(speechmos.__file__)), "dnsmos_models",
                        "sig_bak_ovr.onnx")
    if not os.path.isfile(path):
        raise ConfigError(f"the DNSMOS model is missing from the speechmos install ({path}); "
                          "reinstall it: pip install --force-reinstall speechmos")
    opts = ort.SessionOptions()
    opts.intra_op_num_threads = 1  # one thread: bit-identical results, pool-friendly
    opts.inter_op_num_threads = 1
    return ort.InferenceSession(path, sess_options=opts, providers=["CPUExecutionProvider"])


@dataclass
class DnsmosDiagnostic:
    """DNSMOS P.835 (the ONNX model speechmos ships): overall, signal and background quality,
    each a MOS on 1–5. Reported per clip, never scored."""

    name: str = "dnsmos"
    version: str = "1"

    def assess(self, audio: Audio) -> dict[str, float]:
        session = _dnsmos_session()
        x = np.clip(np.asarray(audio.at_16k(), dtype=np.float32), -1.0, 1.0)
        need = int(DNSMOS_WINDOW_S * 16_000)
        while x.shape[0] < need:  # short clips are repeated, as the reference code does
            x = np.concatenate([x, x])
        hops = int(math.floor(x.shape[0] / 16_000) - DNSMOS_WINDOW_S) + 1  # as the reference
        raw: list[npt.NDArray[np.float32]] = []
        for h in range(hops):
            seg = x[h * 16_000: h * 16_000 + need]
            if seg.shape[0] < need:
                continue
            out = session.run(None, {"input_1": seg[np.newaxis, :]})[0][0]
            raw.append(np.asarray(out, dtype=np.float32))
        if not raw:
            raise ProbeError(f"{self.name}@{self.version}: no 9 s window could be formed")
        scores: dict[str, float] = {}
        for k, name in enumerate(("sig", "bak", "ovrl")):
            poly = np.poly1d(_DNSMOS_POLY[name])
            vals = [float(poly(float(r[k]))) for r in raw]
            scores[f"dnsmos_{name}"] = math.fsum(vals) / len(vals)
        return {k: scores[k] for k in ("dnsmos_ovrl", "dnsmos_sig", "dnsmos_bak")}
