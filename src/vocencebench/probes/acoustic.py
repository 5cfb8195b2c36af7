"""Acoustic probes: pitch, pace, loudness and an offline gender heuristic, plus the DNSMOS
quality diagnostic. Every formula, threshold and source is in ``docs/probes.md``.

All four probes are pure functions of the waveform (and of the item's request and script):
the same clip gives the same bits on every run. Pitch and gender share one Praat pitch track
and pace shares the speech span, memoised per process by a digest of the samples
(:func:`analyse`), so running the whole set costs one analysis.

Every probe answers for every trait it measures. A trait the clip makes unmeasurable (no
voiced frames for pitch and gender, no speech for pace, every block below the loudness
meter's absolute gate) gets a result with label :data:`~vocencebench.schema.UNMEASURABLE`,
value None and d = 0, its reason in ``detail["unmeasurable"]``: unmeasurable output is the
system's failure. A request the item lacks, or a script with nothing to count, is a
:class:`~vocencebench.errors.ProbeError` (the instrument's or the corpus's problem).
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
from ..loudness import integrated_loudness
from ..norms import AGE_GROUPS, REFERENCE_F0_HZ, age_group
from ..schema import UNMEASURABLE, Item, ProbeResult
from . import gender_model
from .syllables import count_syllables
from .vad import VoiceActivity, voice_activity_of

if TYPE_CHECKING:
    from ..audio import Audio

__all__ = [
    "AGE_GROUPS",
    "ANALYSIS_RATE",
    "DNSMOS_WINDOW_S",
    "GENDER_F0_MID_HZ",
    "LOUDNESS_EDGES_LUFS",
    "PACE_DISAGREE_FACTOR",
    "PACE_EDGES_PPS",
    "PACE_MIN_SYLLABLES",
    "PACE_PHRASE_PHONES",
    "PACE_UTTERANCE_PHONES",
    "PAUSE_MIN_S",
    "PITCH_CEILING_HZ",
    "PITCH_EDGE_SEMITONES",
    "PITCH_FLOOR_HZ",
    "PITCH_FLOOR_LOW_HZ",
    "PITCH_GUARD_HI",
    "PITCH_GUARD_LO",
    "PITCH_HIGHPASS_HZ",
    "PITCH_RATE",
    "PITCH_STEP_PERIODS",
    "REFERENCE_F0_HZ",
    "DnsmosDiagnostic",
    "GenderHeuristicProbe",
    "LoudnessProbe",
    "PaceProbe",
    "PitchProbe",
    "SpeechCheck",
    "VoiceAnalysis",
    "age_group",
    "analyse",
    "check_speech",
    "integrated_loudness",
    "lengthening_phones",
    "unmeasurable",
]

log = logging.getLogger("vocencebench.probes")

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
SPEECH_MIN_SHAPE_VAR_DB: Final = 3.0

#: Semitones from the reference beyond which pitch is "low" (below −edge) or "high" (above).
PITCH_EDGE_SEMITONES: Final = 3.0

#: Pace buckets (phones/s: the script's phones plus its lengthening allowance, per second of
#: articulation time): slow below the first edge, fast above the second, moderate between.
#: They sit within 0.15 phones/s of the geometric midpoints of eSpeak's medians at 120 / 175 /
#: 260 wpm (docs/probes.md, Pace, says how they were chosen).
PACE_EDGES_PPS: Final = (11.0, 15.7)
#: Phrase-final lengthening, in phones of the voice's own tempo: the first phrase of a script
#: is credited this many phones ...
PACE_UTTERANCE_PHONES: Final = 3.0
#: ... and each further phrase (:attr:`SyllableCount.phrases`) this many more. Fitted on
#: eSpeak and hibari-tts (docs/probes.md, Pace): without it a short script reads slow.
PACE_PHRASE_PHONES: Final = 2.0
#: A silent run inside the speech span lasting at least this long (s) is a pause and is left
#: out of the articulation time; shorter gaps (stop closures, word joins) stay in.
PAUSE_MIN_S: Final = 0.1
#: Scripts with fewer syllables than this are flagged ``short_script``: phrase-final lengthening
#: weighs more in them (the lengthening allowance corrects for it).
PACE_MIN_SYLLABLES: Final = 10
#: de Jong & Wempe syllable nuclei: intensity peaks above (99th percentile − this many dB) ...
NUCLEI_SILENCE_DB: Final = 25.0
#: ... that rise at least this many dB above the dip before them, and are voiced.
NUCLEI_MIN_DIP_DB: Final = 2.0
#: Text rate and acoustic rate disagree badly when one exceeds the other by this factor.
PACE_DISAGREE_FACTOR: Final = 1.6

#: Loudness buckets (LUFS, ITU-R BS.1770 integrated): quiet below the first edge, loud above
#: the second.
LOUDNESS_EDGES_LUFS: Final = (-23.0, -17.5)
#: Gender: semitones of the median F0 are taken re this frequency (Hz); the model itself is
#: :mod:`.gender_model` (F0 + a spectral-envelope likelihood ratio, fitted on real speech).
GENDER_F0_MID_HZ: Final = 165.0

#: Key of the shared analysis kept with each clip; it names every setting the analysis reads,
#: so a change of settings can never reuse a stale analysis.
_ANALYSIS_KEY: Final = (f"probes.voice-analysis@{PITCH_RATE}/{PITCH_CEILING_HZ}/"
                       f"{PITCH_STEP_PERIODS}/{PITCH_GUARD_LO}/{PITCH_GUARD_HI}/"
                       f"{PITCH_HIGHPASS_HZ}/{PAUSE_MIN_S}")

#: DNSMOS analyses 9.01 s windows (shorter clips are repeated to fill one), one per second.
DNSMOS_WINDOW_S: Final = 9.01


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


def _parselmouth() -> Any:
    try:
        import parselmouth
    except ImportError as exc:
        raise MissingDependencyError(
            "the acoustic probes", "probes", package="praat-parselmouth"
        ) from exc
    return parselmouth


def _samples_for_analysis(audio: Audio) -> tuple[FloatArray, int]:
    """The analysis signal (float64, kept with the clip: span, pitch and the gender front end
    share it) and its rate (Hz)."""
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
    pm = _parselmouth()
    snd = pm.Sound(_pitch_signal(audio), sampling_frequency=PITCH_RATE)
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
    median, outliers = _guarded_median(voiced)
    x, rate = _samples_for_analysis(audio)
    vad = voice_activity_of(audio, x, rate)
    start, end, pause_s, pauses = vad.span(PAUSE_MIN_S)
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
    lo = PITCH_GUARD_LO * _percentile(voiced, 25.0)
    hi = PITCH_GUARD_HI * _percentile(voiced, 75.0)
    kept = voiced[(voiced >= lo) & (voiced <= hi)]
    return _median(kept), int(voiced.shape[0] - kept.shape[0])


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
        spread = _percentile(st, 75.0) - _percentile(st, 25.0)
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


def _requested(item: Item, trait: str, probe: str) -> str:
    try:
        return item.traits[trait]
    except KeyError:
        raise ProbeError(
            f"{probe} needs the requested {trait!r} of item {item.id}, which has none; "
            "corpus items must name every trait (see traits.TRAITS)"
        ) from None


#: Unit of each trait's raw value, for unmeasurable results made without running a probe.
TRAIT_UNITS: Final[Mapping[str, str]] = {
    "pitch": "Hz", "pace": "phones/s", "loudness": "LUFS", "age": "years",
}  # fmt: skip


def unmeasurable(trait: str, unit: str, probe: str, reason: str,
                 **detail: Any) -> ProbeResult:
    """The result for a trait the clip made unmeasurable: no value, label
    :data:`~vocencebench.schema.UNMEASURABLE`, d = 0 (the system's failure, never a skip)."""
    return ProbeResult(trait=trait, value=None, unit=unit, label=UNMEASURABLE, d=0.0,
                       probe=probe, detail={"unmeasurable": reason, **detail})


def _unmeasurable(probe: str, trait: str, unit: str, audio: Audio, reason: str,
                  **detail: Any) -> dict[str, ProbeResult]:
    log.info("%s: %s unmeasurable on %s: %s", probe, trait, audio.name or audio.sha256[:12],
             reason)
    return {trait: unmeasurable(trait, unit, probe, reason, **detail)}


# ----------------------------------------------------------------------------- pitch


@dataclass
class PitchProbe:
    """Median F0 (Hz, Praat autocorrelation after a 70 Hz high-pass, 75–500 Hz every 10 ms;
    50 Hz floor, 15 ms, for a man asked for a low voice) over the voiced frames inside the
    octave guard, bucketed by semitones from the typical F0 of the requested gender and age
    group."""

    name: str = "pitch-praat"
    version: str = "4"
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
        wanted = _requested(item, "pitch", pid)
        low_edge = ref * 2.0 ** (-PITCH_EDGE_SEMITONES / 12.0)
        floor = (PITCH_FLOOR_LOW_HZ if wanted == "low" and low_edge < 1.5 * PITCH_FLOOR_HZ
                 else PITCH_FLOOR_HZ)
        a = analyse(audio, floor_hz=floor)
        if a.median_f0 is None:
            return _unmeasurable(pid, "pitch", "Hz", audio,
                                 f"fewer than {MIN_VOICED_FRAMES} voiced frames",
                                 voiced_fraction=a.voiced_fraction)
        st = 12.0 * math.log2(a.median_f0 / ref)
        label = "low" if st < -PITCH_EDGE_SEMITONES else "high" if st > PITCH_EDGE_SEMITONES \
            else "medium"
        return {"pitch": ProbeResult(
            trait="pitch", value=a.median_f0, unit="Hz", label=label,
            d=desirability("pitch", label, wanted),
            probe=pid,
            detail={"semitones": st, "reference_hz": ref, "age_group": group,
                    "voiced_fraction": a.voiced_fraction, "floor_hz": floor,
                    "octave_outliers": a.octave_outliers},
        )}


# ----------------------------------------------------------------------------- pace


def _nuclei(audio: Audio, a: VoiceAnalysis) -> int:
    """Syllable nuclei after de Jong & Wempe (2009): voiced intensity peaks inside the speech
    span, above (99th percentile − 25 dB), each rising ≥ 2 dB above the dip before it.
    The intensity contour is Praat's (minimum pitch 75 Hz) on the pitch signal (≤ 4 kHz: vowel
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


def lengthening_phones(phrases: int) -> float:
    """The pace probe's phrase-final lengthening allowance (phones) for a script of
    ``phrases`` phrases: the time a voice spends lengthening phrase ends, in phones of its own
    tempo."""
    if phrases <= 0:
        return 0.0
    return PACE_UTTERANCE_PHONES + PACE_PHRASE_PHONES * (phrases - 1)


@dataclass
class PaceProbe:
    """Articulation rate (phones/s): the phones of the script (CMU dictionary, spoken form) plus
    a phrase-final lengthening allowance (:data:`PACE_UTTERANCE_PHONES` for the first phrase,
    :data:`PACE_PHRASE_PHONES` for each further one), per second of speech (voice activity
    against the clip's noise floor, :mod:`.vad`) with its pauses (runs without speech
    ≥ 100 ms) left out; the speaking rate in syllables/s and an acoustic syllable-nucleus
    count are reported beside it."""

    name: str = "pace-phones"
    version: str = "4"
    traits: tuple[str, ...] = ("pace",)

    def measure(self, audio: Audio, item: Item) -> dict[str, ProbeResult]:
        pid = f"{self.name}@{self.version}"
        requested = _requested(item, "pace", pid)
        syl = count_syllables(item.text)
        if syl.total == 0:
            raise ProbeError(f"{pid}: the script of item {item.id} has no syllables to count "
                             f"({item.text!r}); the corpus gate should refuse it")
        a = analyse(audio)
        if a.articulation_time <= 0:
            return _unmeasurable(pid, "pace", "phones/s", audio, "no speech was found")
        lengthening = lengthening_phones(syl.phrases)
        rate = (syl.phones + lengthening) / a.articulation_time
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
                "phrases": syl.phrases,
                "lengthening_phones": lengthening,
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


def _channels(audio: Audio) -> tuple[npt.NDArray[Any], bool]:
    """The samples the meter reads, and whether they are the file's channels: ``frames ×
    channels`` from ``Audio.channel_samples`` where the decoder keeps them, else the mono
    samples (for a file that was mixed down without its channels kept, the two channels are
    taken as equal — dual mono — and the estimate is flagged)."""
    ch = getattr(audio, "channel_samples", None)
    if ch is not None:
        arr = np.asarray(ch)
        if arr.ndim == 2 and arr.shape[1] > 1:
            return arr, True
        return arr.reshape(-1), True
    return np.asarray(audio.samples), audio.channels <= 1


@dataclass
class LoudnessProbe:
    """Integrated loudness (LUFS, ITU-R BS.1770: channel powers summed), bucketed
    quiet/normal/loud; below the −70 LUFS absolute gate the clip is unmeasurable."""

    name: str = "loudness-bs1770"
    version: str = "3"
    traits: tuple[str, ...] = ("loudness",)

    def measure(self, audio: Audio, item: Item) -> dict[str, ProbeResult]:
        pid = f"{self.name}@{self.version}"
        requested = _requested(item, "loudness", pid)
        x, exact = _channels(audio)
        lufs, short = integrated_loudness(x, audio.sample_rate)
        if lufs is not None and not exact:  # mixed down, channels lost: dual-mono estimate
            lufs += 10.0 * math.log10(audio.channels)
        peak = float(np.max(np.abs(x))) if x.size else 0.0
        detail: dict[str, Any] = {
            "short_clip": short, "channels": audio.channels,
            "channels_estimated": not exact,
            "peak_dbfs": 20.0 * math.log10(peak) if peak > 0 else None,
        }
        if lufs is None:
            return _unmeasurable(pid, "loudness", "LUFS", audio,
                                 "every block is below the -70 LUFS absolute gate", **detail)
        lo, hi = LOUDNESS_EDGES_LUFS
        label = "quiet" if lufs < lo else "loud" if lufs > hi else "normal"
        return {"loudness": ProbeResult(
            trait="loudness", value=lufs, unit="LUFS", label=label,
            d=desirability("loudness", label, requested), probe=pid, detail=detail,
        )}


# ----------------------------------------------------------------------------- gender


@dataclass
class GenderHeuristicProbe:
    """Offline male/female model: octave-guarded median F0 plus the spectral envelope of the
    voiced frames (19 mel cepstra at 8 kHz scored by two Gaussian mixtures), fitted on real
    read speech (:mod:`.gender_model`). A classifier probe listed later in a ProbeSet
    replaces it."""

    name: str = "gender-f0gmm"
    version: str = "1"
    traits: tuple[str, ...] = ("gender",)

    def measure(self, audio: Audio, item: Item) -> dict[str, ProbeResult]:
        pid = f"{self.name}@{self.version}"
        requested = _requested(item, "gender", pid)
        a = analyse(audio)
        if a.median_f0 is None:
            return _unmeasurable(pid, "gender", "", audio,
                                 f"fewer than {MIN_VOICED_FRAMES} voiced frames")
        x, rate = _samples_for_analysis(audio)
        cep, times = gender_model.cepstra(audio, x, rate)
        voiced = cep[a.voiced_mask(times)]
        llr = gender_model.spectral_llr(voiced)
        score = gender_model.log_odds(a.median_f0, llr)
        label = "female" if score > 0 else "male"
        return {"gender": ProbeResult(
            trait="gender", value=label, unit="", label=label,
            d=desirability("gender", label, requested), probe=pid,
            detail={"heuristic": True, "score": score, "f0_hz": a.median_f0,
                    "spectral_llr": llr, "voiced_frames": int(voiced.shape[0]),
                    "method": "f0+spectrum" if llr is not None else "f0"},
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
