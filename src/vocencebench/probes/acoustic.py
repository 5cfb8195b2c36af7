"""Acoustic probes: pitch, pace, loudness and an offline gender heuristic (the DNSMOS
quality diagnostic is :mod:`.dnsmos`). Every formula, threshold and source is in
``docs/probes.md``.

All four probes are pure functions of the waveform (and of the item's request and script):
the same clip gives the same bits on every run. Pitch and gender share one Praat pitch track
and pace shares the speech span, memoised per process by a digest of the samples
(:func:`~.voice.analyse`), so running the whole set costs one analysis.

Every probe answers for every trait it measures. A trait the clip makes unmeasurable (no
voiced frames for pitch and gender, no speech for pace, every block below the loudness
meter's absolute gate) gets a result with label :data:`~vocencebench.schema.UNMEASURABLE`,
value None and d = 0, its reason in ``detail["unmeasurable"]``: unmeasurable output is the
system's failure. A request the item lacks, or a script with nothing to count, is a
:class:`~vocencebench.errors.ProbeError` (the instrument's or the corpus's problem).

Each probe scores d against its ``registry`` (default :data:`~vocencebench.traits.TRAITS`);
a :class:`~.base.ProbeSet` hands its own registry to the probes it holds.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final

import numpy as np
import numpy.typing as npt

from .._util.text import terminal_safe
from ..decide import desirability
from ..errors import ProbeError
from ..loudness import integrated_loudness
from ..norms import AGE_GROUPS, REFERENCE_F0_HZ, age_group
from ..schema import UNMEASURABLE, Item, ProbeResult
from ..traits import TRAITS, TraitRegistry
from . import gender_model
from .dnsmos import DNSMOS_WINDOW_S, DnsmosDiagnostic
from .syllables import count_syllables

# The names of voice.ANALYSIS_API are served under this module's name too (see __all__).
from .voice import (  # noqa: F401
    ANALYSIS_API,
    ANALYSIS_RATE,
    MIN_VOICED_FRAMES,
    PAUSE_MIN_S,
    PITCH_CEILING_HZ,
    PITCH_FLOOR_HZ,
    PITCH_FLOOR_LOW_HZ,
    PITCH_GUARD_HI,
    PITCH_GUARD_LO,
    PITCH_HIGHPASS_HZ,
    PITCH_RATE,
    PITCH_STEP_PERIODS,
    SpeechCheck,
    VoiceAnalysis,
    analyse,
    check_speech,
    parselmouth,
    percentile,
    pitch_signal,
    samples_for_analysis,
)

if TYPE_CHECKING:
    from ..audio import Audio

__all__ = [
    *ANALYSIS_API,
    "AGE_GROUPS",
    "DNSMOS_WINDOW_S",
    "GENDER_F0_MID_HZ",
    "LOUDNESS_EDGES_LUFS",
    "PACE_DISAGREE_FACTOR",
    "PACE_EDGES_PPS",
    "PACE_MIN_SYLLABLES",
    "PACE_PHRASE_PHONES",
    "PACE_UTTERANCE_PHONES",
    "PITCH_EDGE_SEMITONES",
    "REFERENCE_F0_HZ",
    "DnsmosDiagnostic",
    "GenderHeuristicProbe",
    "LoudnessProbe",
    "PaceProbe",
    "PitchProbe",
    "age_group",
    "integrated_loudness",
    "lengthening_phones",
    "unmeasurable",
]

log = logging.getLogger("vocencebench.probes")

# ----------------------------------------------------------------------------- constants

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


@dataclass
class _AcousticProbe:
    """What the acoustic probes share: ``name@version``, the traits they measure, and the
    trait registry d is scored against (default TRAITS; a ProbeSet hands down its own)."""

    name: str
    version: str
    traits: tuple[str, ...]
    registry: TraitRegistry = field(default=TRAITS, repr=False, compare=False)

    @property
    def probe_id(self) -> str:
        """``name@version``."""
        return f"{self.name}@{self.version}"

    def _requested(self, item: Item, trait: str) -> str:
        try:
            return item.traits[trait]
        except KeyError:
            raise ProbeError(
                f"{self.probe_id} needs the requested {trait!r} of item {item.id}, which has "
                "none; corpus items must name every trait (see traits.TRAITS)"
            ) from None

    def _unmeasurable(self, trait: str, unit: str, audio: Audio, reason: str,
                      **detail: Any) -> dict[str, ProbeResult]:
        log.info("%s: %s unmeasurable on %s: %s", self.probe_id, trait,
                 terminal_safe(audio.name or audio.sha256[:12]), terminal_safe(reason))
        return {trait: unmeasurable(trait, unit, self.probe_id, reason, **detail)}

    def _result(self, trait: str, value: float | str, unit: str, label: str, requested: str,
                detail: dict[str, Any]) -> dict[str, ProbeResult]:
        """The result for ``trait``: ``label`` scored against the ``requested`` value."""
        return {trait: ProbeResult(
            trait=trait, value=value, unit=unit, label=label,
            d=desirability(trait, label, requested, registry=self.registry),
            probe=self.probe_id, detail=detail,
        )}


# ----------------------------------------------------------------------------- pitch


@dataclass
class PitchProbe(_AcousticProbe):
    """Median F0 (Hz, Praat autocorrelation after a 70 Hz high-pass, 75–500 Hz every 10 ms;
    50 Hz floor, 15 ms, for a man asked for a low voice) over the voiced frames inside the
    octave guard, bucketed by semitones from the typical F0 of the requested gender and age
    group."""

    name: str = "pitch-praat"
    version: str = "4"
    traits: tuple[str, ...] = ("pitch",)

    def measure(self, audio: Audio, item: Item) -> dict[str, ProbeResult]:
        gender = self._requested(item, "gender")
        group = age_group(self._requested(item, "age"))
        try:
            ref = REFERENCE_F0_HZ[(gender, group)]
        except KeyError:
            raise ProbeError(
                f"{self.probe_id}: no reference F0 for gender {gender!r}; valid: male, female"
            ) from None
        wanted = self._requested(item, "pitch")
        low_edge = ref * 2.0 ** (-PITCH_EDGE_SEMITONES / 12.0)
        floor = (PITCH_FLOOR_LOW_HZ if wanted == "low" and low_edge < 1.5 * PITCH_FLOOR_HZ
                 else PITCH_FLOOR_HZ)
        a = analyse(audio, floor_hz=floor)
        if a.median_f0 is None:
            return self._unmeasurable("pitch", "Hz", audio,
                                      f"fewer than {MIN_VOICED_FRAMES} voiced frames",
                                      voiced_fraction=a.voiced_fraction)
        st = 12.0 * math.log2(a.median_f0 / ref)
        label = "low" if st < -PITCH_EDGE_SEMITONES else "high" if st > PITCH_EDGE_SEMITONES \
            else "medium"
        return self._result(
            "pitch", a.median_f0, "Hz", label, wanted,
            {"semitones": st, "reference_hz": ref, "age_group": group,
             "voiced_fraction": a.voiced_fraction, "floor_hz": floor,
             "octave_outliers": a.octave_outliers},
        )


# ----------------------------------------------------------------------------- pace


def _nuclei(audio: Audio, a: VoiceAnalysis) -> int:
    """Syllable nuclei after de Jong & Wempe (2009): voiced intensity peaks inside the speech
    span, above (99th percentile − 25 dB), each rising ≥ 2 dB above the dip before it.
    The intensity contour is Praat's (minimum pitch 75 Hz) on the pitch signal (≤ 4 kHz: vowel
    energy, where the nuclei are)."""
    pm = parselmouth()
    try:
        intensity = pm.Sound(pitch_signal(audio), sampling_frequency=PITCH_RATE).to_intensity(
            minimum_pitch=PITCH_FLOOR_HZ, subtract_mean=True)
    except pm.PraatError:
        return 0
    db = np.asarray(intensity.values[0], dtype=np.float64)
    t = intensity.x1 + intensity.dx * np.arange(db.shape[0])
    keep = (t >= a.speech_start) & (t <= a.speech_end) & np.isfinite(db)
    db, t = db[keep], t[keep]
    if db.shape[0] < 3:
        return 0
    threshold = percentile(db, 99.0) - NUCLEI_SILENCE_DB
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
class PaceProbe(_AcousticProbe):
    """Articulation rate (phones/s): the phones of the script (CMU dictionary, spoken form) plus
    a phrase-final lengthening allowance (:data:`PACE_UTTERANCE_PHONES` for the first phrase,
    :data:`PACE_PHRASE_PHONES` for each further one), per second of speech (voice activity
    against the clip's noise floor, :mod:`.vad`) with its pauses (runs without speech
    ≥ 100 ms) left out; the speaking rate in syllables/s and an acoustic syllable-nucleus
    count are reported beside it."""

    name: str = "pace-phones"
    # 5: the script's spoken form follows the gate's new readings (units such as min/hr/tsp,
    # weekdays, Dr. as Drive, O.K., 1½, ¢); benchmark_v1's spoken forms are unchanged.
    version: str = "5"
    traits: tuple[str, ...] = ("pace",)

    def measure(self, audio: Audio, item: Item) -> dict[str, ProbeResult]:
        requested = self._requested(item, "pace")
        syl = count_syllables(item.text)
        if syl.total == 0:
            raise ProbeError(f"{self.probe_id}: the script of item {item.id} has no syllables "
                             f"to count ({item.text!r}); the corpus gate should refuse it")
        a = analyse(audio)
        if a.articulation_time <= 0:
            return self._unmeasurable("pace", "phones/s", audio, "no speech was found")
        lengthening = lengthening_phones(syl.phrases)
        rate = (syl.phones + lengthening) / a.articulation_time
        nuclei = _nuclei(audio, a)
        ratio = syl.total / nuclei if nuclei > 0 else math.inf
        disagree = not (1.0 / PACE_DISAGREE_FACTOR <= ratio <= PACE_DISAGREE_FACTOR)
        lo, hi = PACE_EDGES_PPS
        label = "slow" if rate < lo else "fast" if rate > hi else "moderate"
        return self._result(
            "pace", rate, "phones/s", label, requested,
            {
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
        )


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
class LoudnessProbe(_AcousticProbe):
    """Integrated loudness (LUFS, ITU-R BS.1770: channel powers summed), bucketed
    quiet/normal/loud; below the −70 LUFS absolute gate the clip is unmeasurable."""

    name: str = "loudness-bs1770"
    version: str = "3"
    traits: tuple[str, ...] = ("loudness",)

    def measure(self, audio: Audio, item: Item) -> dict[str, ProbeResult]:
        requested = self._requested(item, "loudness")
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
            return self._unmeasurable("loudness", "LUFS", audio,
                                      "every block is below the -70 LUFS absolute gate", **detail)
        lo, hi = LOUDNESS_EDGES_LUFS
        label = "quiet" if lufs < lo else "loud" if lufs > hi else "normal"
        return self._result("loudness", lufs, "LUFS", label, requested, detail)


# ----------------------------------------------------------------------------- gender


@dataclass
class GenderHeuristicProbe(_AcousticProbe):
    """Offline male/female model: octave-guarded median F0 plus the spectral envelope of the
    voiced frames (19 mel cepstra at 8 kHz scored by two Gaussian mixtures), fitted on real
    read speech (:mod:`.gender_model`). A classifier probe listed later in a ProbeSet
    replaces it."""

    name: str = "gender-f0gmm"
    version: str = "1"
    traits: tuple[str, ...] = ("gender",)

    def measure(self, audio: Audio, item: Item) -> dict[str, ProbeResult]:
        requested = self._requested(item, "gender")
        a = analyse(audio)
        if a.median_f0 is None:
            return self._unmeasurable("gender", "", audio,
                                      f"fewer than {MIN_VOICED_FRAMES} voiced frames")
        x, rate = samples_for_analysis(audio)
        cep, times = gender_model.cepstra(audio, x, rate)
        voiced = cep[a.voiced_mask(times)]
        llr = gender_model.spectral_llr(voiced)
        score = gender_model.log_odds(a.median_f0, llr)
        label = "female" if score > 0 else "male"
        return self._result(
            "gender", label, "", label, requested,
            {"heuristic": True, "score": score, "f0_hz": a.median_f0,
             "spectral_llr": llr, "voiced_frames": int(voiced.shape[0]),
             "method": "f0+spectrum" if llr is not None else "f0"},
        )
