"""Built-in TTS systems on eSpeak NG, deterministic to the bit.

The engine is ``libespeak-ng`` from the pinned ``espeakng-loader`` wheel, driven through ctypes
in synchronous mode (16-bit mono PCM at 22 050 Hz through a synth callback). Two systems are
registered, both plain ``(text, instruction) -> WAV bytes`` callables:

* ``espeak-follow`` reads the instruction (:func:`vocencebench.instruction.parse_instruction`)
  and realises what eSpeak can: gender, pitch, pace, loudness, a rough age, some accents
  (:func:`plan_voice` says, per trait, what was realised, approximated or not realised);
* ``espeak-flat`` uses fixed neutral settings (:data:`NEUTRAL`) and ignores the instruction.

Determinism design (every point measured on espeakng-loader 0.2.4 / eSpeak NG 1.52):

1. libespeak-ng keeps hidden state between syntheses: the same text rendered twice in one
   process gives different lengths, and ``espeak_Terminate`` + ``espeak_Initialize`` does not
   reset it. So every clip is rendered in a **fresh process of its own** that exits after
   that one clip, forked from a template process in which the library has just been
   initialised (never used); the calling process never loads the library. See the process
   diagram in :mod:`vocencebench._tts.render`.
2. Voices with breath noise (e.g. ``+f3``) draw from a random generator seeded from the clock;
   every clip calls ``espeak_ng_SetRandSeed`` with an explicit seed (``EspeakSettings.seed``).
3. Unknown names do not fail loudly: an unknown variant is dropped silently (``en-us+zz``
   renders as ``en-us``) and an unknown base (``en-gb``) returns "not found" and keeps the
   previous voice. Voice names are therefore checked against :data:`VOICES` and
   :data:`VARIANTS` before any process starts, and a non-OK status from the library is an error.

This module plans a voice from a trait request and holds the two systems and the batch API;
the settings (:class:`EspeakSettings`) live in :mod:`vocencebench._tts.settings`
and the render engine, its clip processes and worker lanes in
:mod:`vocencebench._tts.render`; every public name is served from here.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Final

from ._tts.render import CLIP_TIMEOUT, render_jobs, short_text
from ._tts.settings import (
    ENGINE_VERSION,
    ESPEAKNG_LOADER_VERSION,
    MAPPING_VERSION,
    NEUTRAL,
    RAND_SEED,
    RATE_RANGE,
    SAMPLE_RATE,
    VARIANTS,
    VOICES,
    VOLUME_RANGE,
    EspeakSettings,
    validate_voice,
)
from .errors import ConfigError, SynthesisError
from .instruction import parse_instruction
from .norms import AGE_GROUPS, REFERENCE_F0_HZ, age_group
from .traits import TRAITS

__all__ = [
    "ACCENT_VOICE",
    "AGE_GROUPS",
    "AGE_RATE_FACTOR",
    "BUILTIN_SYSTEMS",
    "CLIP_TIMEOUT",
    "ENGINE_VERSION",
    "ESPEAKNG_LOADER_VERSION",
    "F0_CALIBRATION_HZ",
    "LIMITER_GAIN_DB",
    "LUFS_AT_100",
    "MAPPING_VERSION",
    "NEUTRAL",
    "PITCH_POINTS",
    "PITCH_SEMITONES",
    "RAND_SEED",
    "SAMPLE_RATE",
    "TARGET_F0_HZ",
    "TARGET_LUFS",
    "VARIANTS",
    "VARIANT_FOR",
    "VOICES",
    "WPM_BY_PACE",
    "EspeakFlat",
    "EspeakFollow",
    "EspeakSettings",
    "VoicePlan",
    "age_group",
    "amplitude_for",
    "builtin_systems",
    "get_system",
    "pitch_parameter",
    "plan_voice",
    "render_many",
    "synthesize",
    "synthesize_many",
    "synthesize_requests",
    "validate_voice",
    "voice_settings",
]

# ------------------------------------------------------------------ trait → eSpeak mapping

#: Words per minute for each pace value, checked on the pace probe (``pace-phones@4``: phones
#: of the script plus a phrase-final lengthening allowance per second of articulation, voice
#: activity against the noise floor, buckets at 11.0 / 15.7): over all 496 corpus scripts
#: 110 / 165 / 260 wpm land in the right bucket 99.8 / 95.4 / 99.2 % of the time (120 wpm:
#: 98.6 %, 175 wpm: 98.0 %; benchmarks/calibrate_pace_wpm.py). ``pace-phones@3`` read
#: 99.4 / 86.9 / 90.1 %, ``@1`` 99.8 / 94.4 / 96.8 %.
WPM_BY_PACE: Final[Mapping[str, int]] = {"slow": 110, "moderate": 165, "fast": 260}
#: Integrated loudness (LUFS, ITU-R BS.1770) aimed at for each loudness value; the loudness
#: probe's bucket edges are −23 and −17.5. With the neutral voice (en-us, pitch 50) this means
#: amplitudes 50 / 99 / 180, measured at −27.0 / −20.7 / −15.8 LUFS.
TARGET_LUFS: Final[Mapping[str, float]] = {"quiet": -27.0, "normal": -21.0, "loud": -16.0}
#: Mean integrated loudness (LUFS) at amplitude 100, per variant at each of
#: :data:`PITCH_POINTS` (three sentences). Higher voices read louder under K-weighting.
LUFS_AT_100: Final[Mapping[str, tuple[float, ...]]] = {
    "": (-22.7, -22.3, -21.9, -21.5, -20.9, -20.3, -20.0, -19.5, -19.0),
    "f3": (-21.9, -21.6, -21.2, -20.8, -20.3, -19.8, -19.4, -18.8, -18.3),
    "f4": (-21.4, -21.0, -20.4, -20.1, -19.4, -18.8, -18.4, -17.7, -17.1),
}
#: Above amplitude 100 eSpeak's limiter compresses: measured gain (dB) over amplitude 100 at
#: amplitudes 100, 125, 150, 180, 200 (en-us, pitch 50). At or below 100 it is a pure gain.
LIMITER_GAIN_DB: Final[tuple[tuple[int, float], ...]] = (
    (100, 0.0), (125, 1.9), (150, 3.5), (180, 4.9), (200, 5.6),
)  # fmt: skip
#: Semitones from the reference F0 aimed at for each pitch value (the probe's edges are ±3).
PITCH_SEMITONES: Final[Mapping[str, float]] = {"low": -5.0, "medium": 0.0, "high": 5.0}
#: Typical speaking F0 (Hz) by gender and age group that ``espeak-follow`` aims at for a medium
#: pitch: the pitch probe's own reference table (published norms, docs/probes.md).
TARGET_F0_HZ: Final[Mapping[tuple[str, str], float]] = REFERENCE_F0_HZ
#: Words-per-minute factor per age group, used only when no pace is requested.
AGE_RATE_FACTOR: Final[Mapping[str, float]] = {
    "child": 1.08, "teen": 1.04, "adult": 1.0, "elderly": 0.9,
}  # fmt: skip
#: Voice variant per (gender, age group); "" = the base voice, which is male. eSpeak has no
#: boy's voice and its male voices top out at 168 Hz, so children of both genders use f3.
VARIANT_FOR: Final[Mapping[tuple[str, str], str]] = {
    ("male", "child"): "f3", ("female", "child"): "f3",
    ("male", "teen"): "", ("female", "teen"): "f4",
    ("male", "adult"): "", ("female", "adult"): "f4",
    ("male", "elderly"): "", ("female", "elderly"): "f4",
}  # fmt: skip
#: eSpeak pitch parameter values at which :data:`F0_CALIBRATION_HZ` was measured.
PITCH_POINTS: Final[tuple[int, ...]] = (0, 10, 25, 35, 50, 65, 75, 90, 100)
#: Median F0 (Hz, Praat) of a 17-word sentence per variant at each of :data:`PITCH_POINTS`
#: (range 50, en-us). The mapping inverts these curves (linear in log F0).
F0_CALIBRATION_HZ: Final[Mapping[str, tuple[float, ...]]] = {
    "": (68.4, 70.6, 79.3, 86.4, 99.4, 115.6, 128.1, 151.9, 168.3),
    "f3": (141.8, 150.2, 168.0, 180.0, 205.8, 236.4, 260.3, 304.4, 333.7),
    "f4": (110.7, 121.1, 138.4, 151.6, 176.5, 208.5, 232.3, 276.2, 305.9),
}
#: Accent → (base voice, how well eSpeak realises it).
ACCENT_VOICE: Final[Mapping[str, tuple[str, str]]] = {
    "American": ("en-us", "realised"),
    "British": ("en", "realised"),
    "Canadian": ("en-us", "approximated: eSpeak has no Canadian voice; General American"),
    "Australian": ("en", "approximated: eSpeak has no Australian voice; non-rhotic British"),
    "Indian": ("en-us", "not realised: eSpeak has no Indian English voice; default voice"),
}


def pitch_parameter(variant: str, target_hz: float) -> tuple[int, float]:
    """The eSpeak pitch parameter (0–100) whose calibrated F0 is nearest ``target_hz`` for
    ``variant``, and the F0 (Hz) it gives; outside the curve it is clamped to 0 or 100."""
    curve = F0_CALIBRATION_HZ[variant]
    logs = [math.log(f) for f in curve]
    t = math.log(target_hz)
    if t <= logs[0]:
        return PITCH_POINTS[0], curve[0]
    if t >= logs[-1]:
        return PITCH_POINTS[-1], curve[-1]
    for k in range(1, len(logs)):
        if t <= logs[k]:
            frac = (t - logs[k - 1]) / (logs[k] - logs[k - 1])
            p0, p1 = PITCH_POINTS[k - 1], PITCH_POINTS[k]
            param = round(p0 + frac * (p1 - p0))
            return param, target_hz
    raise AssertionError("unreachable")  # pragma: no cover


def _interp(x: float, xs: Sequence[float], ys: Sequence[float]) -> float:
    """Piecewise-linear interpolation of (xs, ys) at x, clamped at both ends."""
    if x <= xs[0]:
        return ys[0]
    for k in range(1, len(xs)):
        if x <= xs[k]:
            return ys[k - 1] + (x - xs[k - 1]) / (xs[k] - xs[k - 1]) * (ys[k] - ys[k - 1])
    return ys[-1]


def amplitude_for(variant: str, pitch: int, target_lufs: float) -> int:
    """The eSpeak amplitude (0–200) that gives about ``target_lufs`` LUFS for ``variant`` at
    ``pitch``: a pure gain below amplitude 100, the measured limiter curve above it."""
    at_100 = _interp(pitch, PITCH_POINTS, LUFS_AT_100[variant])
    gain = target_lufs - at_100
    if gain <= 0:
        amp = 100 * 10 ** (gain / 20)
    else:
        amps = [float(a) for a, _ in LIMITER_GAIN_DB]
        gains = [g for _, g in LIMITER_GAIN_DB]
        amp = _interp(gain, gains, amps)
    return int(min(max(round(amp), VOLUME_RANGE[0] + 1), VOLUME_RANGE[1]))


@dataclass(frozen=True)
class VoicePlan:
    """What ``espeak-follow`` will do for a trait request.

    ``settings``: the eSpeak parameters. ``realised`` / ``approximated`` / ``unrealised``: trait
    name → a short note (a requested trait appears in exactly one of them).
    """

    settings: EspeakSettings
    realised: Mapping[str, str] = field(default_factory=dict)
    approximated: Mapping[str, str] = field(default_factory=dict)
    unrealised: Mapping[str, str] = field(default_factory=dict)


def plan_voice(traits: Mapping[str, str], *, seed: int = RAND_SEED) -> VoicePlan:
    """Map a trait request (trait name → registry value) onto eSpeak settings.

    Traits absent from ``traits`` keep the :data:`NEUTRAL` value (an absent gender is male,
    an absent age adult). An unknown trait or value raises ConfigError. Emotion (other than
    neutral) and tone cannot be realised by eSpeak and are reported in ``unrealised``.
    """
    TRAITS.check_values(traits)

    realised: dict[str, str] = {}
    approx: dict[str, str] = {}
    unreal: dict[str, str] = {}
    base = NEUTRAL.voice
    pitch = NEUTRAL.pitch
    rate = NEUTRAL.rate
    volume = NEUTRAL.volume

    if "accent" in traits:
        base, how = ACCENT_VOICE[traits["accent"]]
        note = f"voice {base}"
        if how == "realised":
            realised["accent"] = note
        elif how.startswith("approximated"):
            approx["accent"] = f"{note} ({how})"
        else:
            unreal["accent"] = f"{note} ({how})"

    gender = traits.get("gender", "male")
    group = age_group(float(traits["age"])) if "age" in traits else "adult"
    variant = VARIANT_FOR[(gender, group)]
    if "gender" in traits:
        how = f"variant +{variant}" if variant else "base (male) voice"
        if gender == "male" and variant:
            approx["gender"] = f"{how}: eSpeak has no boy's voice"
        else:
            realised["gender"] = how
    if {"pitch", "gender", "age"} & traits.keys():
        level = traits.get("pitch", "medium")
        target = TARGET_F0_HZ[(gender, group)] * 2 ** (PITCH_SEMITONES[level] / 12)
        pitch, got = pitch_parameter(variant, target)
        if "pitch" in traits:
            note = f"pitch {pitch} for {target:.0f} Hz"
            if abs(12 * math.log2(got / target)) > 0.5:
                approx["pitch"] = f"{note} (out of reach: {got:.0f} Hz)"
            else:
                realised["pitch"] = note
    if "pace" in traits:
        rate = WPM_BY_PACE[traits["pace"]]
        realised["pace"] = f"{rate} wpm"
    elif "age" in traits:
        rate = round(rate * AGE_RATE_FACTOR[group])
    if "age" in traits:
        approx["age"] = (f"{group}: F0 aimed at {TARGET_F0_HZ[(gender, group)]:.0f} Hz"
                         + ("" if "pace" in traits else f", {rate} wpm")
                         + "; eSpeak has no age-specific voices")
    if {"loudness", "pitch", "gender", "age"} & traits.keys():
        level = traits.get("loudness", "normal")
        volume = amplitude_for(variant, pitch, TARGET_LUFS[level])
        if "loudness" in traits:
            realised["loudness"] = f"amplitude {volume} for {TARGET_LUFS[level]:g} LUFS"
    if "emotion" in traits:
        if traits["emotion"] == "neutral":
            realised["emotion"] = "eSpeak's only delivery is neutral"
        else:
            unreal["emotion"] = "eSpeak has no emotional delivery"
    if "tone" in traits:
        unreal["tone"] = "eSpeak has no control of attitude or manner"

    settings = EspeakSettings(
        voice=f"{base}+{variant}" if variant else base,
        rate=min(max(rate, RATE_RANGE[0]), RATE_RANGE[1]),
        volume=volume,
        pitch=pitch,
        range=NEUTRAL.range,
        seed=seed,
    )
    return VoicePlan(settings, realised, approx, unreal)


def voice_settings(traits: Mapping[str, str], *, seed: int = RAND_SEED) -> EspeakSettings:
    """The eSpeak settings ``espeak-follow`` uses for ``traits`` (see :func:`plan_voice`)."""
    return plan_voice(traits, seed=seed).settings


def synthesize(text: str, settings: EspeakSettings = NEUTRAL) -> bytes:
    """Render ``text`` with ``settings`` in a fresh process; 16-bit mono WAV at 22 050 Hz.

    Bit-identical for the same (text, settings) on every call, process and run (with the pinned
    espeakng-loader). Raises SynthesisError naming the text.
    """
    res = render_jobs([(text, settings)], workers=1)[0]
    if isinstance(res, SynthesisError):
        raise res
    return res


def render_many(
    requests: Iterable[tuple[str, EspeakSettings]],
    *,
    workers: int | None = None,
) -> list[bytes]:
    """Render many ``(text, settings)`` pairs, ``workers`` processes at a time (default: the
    CPU count, at most 8); results in input order, each identical to :func:`synthesize`.

    Raises SynthesisError for the first failed request (after all have run). For systems
    and instructions, :func:`synthesize_many` is the batched form with per-item results.
    """
    results = render_jobs(list(requests), workers)
    for r in results:
        if isinstance(r, SynthesisError):
            raise r
    return [r for r in results if isinstance(r, bytes)]


# ------------------------------------------------------------------ the two systems


def _parse(instruction: str) -> dict[str, str]:
    return dict(parse_instruction(instruction))


class EspeakFollow:
    """``espeak-follow``: realises the traits of the instruction that eSpeak can express."""

    name: Final = "espeak-follow"
    system_id: Final = f"espeak-follow@{ENGINE_VERSION}"

    def __init__(self, *, seed: int = RAND_SEED) -> None:
        self.seed = seed

    def plan(self, instruction: str) -> VoicePlan:
        """What this system does for ``instruction`` (settings and per-trait notes)."""
        return plan_voice(_parse(instruction), seed=self.seed)

    def settings(self, instruction: str) -> EspeakSettings:
        """The eSpeak settings for ``instruction``."""
        return self.plan(instruction).settings

    def __call__(self, text: str, instruction: str) -> bytes:
        return synthesize(text, self.settings(instruction))

    def __repr__(self) -> str:
        return f"EspeakFollow(seed={self.seed})"


class EspeakFlat:
    """``espeak-flat``: the same engine with fixed :data:`NEUTRAL` settings; ignores the
    instruction (the baseline that follows nothing)."""

    name: Final = "espeak-flat"
    system_id: Final = f"espeak-flat@{ENGINE_VERSION}"

    def __init__(self, *, seed: int = RAND_SEED) -> None:
        self.seed = seed

    def plan(self, instruction: str) -> VoicePlan:
        """Always the neutral settings; every trait of the request is left unrealised."""
        return VoicePlan(EspeakSettings(seed=self.seed))

    def settings(self, instruction: str) -> EspeakSettings:
        """The fixed neutral settings (``instruction`` is ignored)."""
        return EspeakSettings(seed=self.seed)

    def __call__(self, text: str, instruction: str) -> bytes:
        return synthesize(text, self.settings(instruction))

    def __repr__(self) -> str:
        return f"EspeakFlat(seed={self.seed})"


#: Registry of the built-in systems: name → factory.
BUILTIN_SYSTEMS: Final[Mapping[str, Callable[[], EspeakFollow | EspeakFlat]]] = {
    "espeak-follow": EspeakFollow,
    "espeak-flat": EspeakFlat,
}


def builtin_systems() -> tuple[str, ...]:
    """Names of the built-in systems."""
    return tuple(BUILTIN_SYSTEMS)


def get_system(name: str) -> EspeakFollow | EspeakFlat:
    """The built-in system called ``name``; an unknown name raises ConfigError."""
    try:
        factory = BUILTIN_SYSTEMS[name]
    except KeyError:
        raise ConfigError(
            f"unknown built-in system {name!r}; valid: {', '.join(BUILTIN_SYSTEMS)}"
        ) from None
    return factory()


def synthesize_many(
    name: str,
    requests: Sequence[tuple[str, str]],
    *,
    workers: int | None = None,
) -> list[bytes | Exception]:
    """Batch form of a built-in system, with the contract of the adapter hook
    :class:`~vocencebench.adapters.BatchedSystem`: ``(text, instruction)`` pairs → one result
    per request, in order, WAV bytes or the error that failed that item (an instruction that
    cannot be planned, or a clip that fails to render, fails only its own item)."""
    system = get_system(name)
    jobs: list[tuple[str, EspeakSettings]] = []
    slots: list[int] = []
    out: list[bytes | Exception | None] = [None] * len(requests)
    for i, (text, instruction) in enumerate(requests):
        try:
            jobs.append((text, system.settings(instruction)))
            slots.append(i)
        except Exception as exc:  # the item fails, not the batch
            out[i] = SynthesisError(f"{name} could not plan {short_text(instruction)!r}: {exc}")
    for i, res in zip(slots, render_jobs(jobs, workers), strict=True):
        out[i] = res
    return [r if r is not None else SynthesisError("internal: item not run") for r in out]


#: The former name of :func:`synthesize_many` (same contract).
synthesize_requests = synthesize_many
