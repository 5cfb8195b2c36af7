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
   diagram above :func:`_run`.
2. Voices with breath noise (e.g. ``+f3``) draw from a random generator seeded from the clock;
   every clip calls ``espeak_ng_SetRandSeed`` with an explicit seed (``EspeakSettings.seed``).
3. Unknown names do not fail loudly: an unknown variant is dropped silently (``en-us+zz``
   renders as ``en-us``) and an unknown base (``en-gb``) returns "not found" and keeps the
   previous voice. Voice names are therefore checked against :data:`VOICES` and
   :data:`VARIANTS` before any process starts, and a non-OK status from the library is an error.
"""

from __future__ import annotations

import contextlib
import ctypes
import functools
import math
import multiprocessing
import os
import select
import signal
import time
import unicodedata
from collections import deque
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from importlib import metadata
from multiprocessing.connection import Connection, wait
from multiprocessing.process import BaseProcess
from typing import Any, Final

import numpy as np

from .audio import to_wav_bytes
from .constants import PROJECT_SEED
from .errors import ConfigError, MissingDependencyError, SynthesisError
from .norms import AGE_GROUPS, REFERENCE_F0_HZ, age_group

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

#: Output rate of libespeak-ng, in Hz (16-bit mono PCM).
SAMPLE_RATE: Final = 22_050
#: The espeakng-loader release the sha256 pins in the tests were rendered with.
ESPEAKNG_LOADER_VERSION: Final = "0.2.4"
#: Default seed of eSpeak's noise generator (the project seed).
RAND_SEED: Final = PROJECT_SEED
#: Version of the trait → parameter mapping below; bump it whenever a rendering can change.
MAPPING_VERSION: Final = "1"


def _loader_version() -> str:
    try:
        return metadata.version("espeakng-loader")
    except metadata.PackageNotFoundError:
        return "missing"


#: Identity of the engine for caches: loader release and mapping version.
ENGINE_VERSION: Final = f"espeakng-loader-{_loader_version()}+map{MAPPING_VERSION}"

#: English base voices of eSpeak NG that ``espeak_SetVoiceByName`` accepts, with their accent.
#: ("en" is British English; "en-gb" is *not* a voice name: the library answers "not found".)
VOICES: Final[Mapping[str, str]] = {
    "en": "British (southern England)",
    "en-us": "American",
    "en-gb-x-rp": "British (Received Pronunciation)",
    "en-gb-scotland": "Scottish",
    "en-gb-x-gbclan": "British (Lancaster)",
    "en-gb-x-gbcwmd": "British (West Midlands)",
    "en-029": "Caribbean",
    "en-us-nyc": "American (New York City)",
}
#: Voice variants (``voices/!v`` files of the pinned data) that may follow a base: ``en-us+f4``.
VARIANTS: Final[tuple[str, ...]] = (
    "m1", "m2", "m3", "m4", "m5", "m6", "m7", "m8",
    "f1", "f2", "f3", "f4", "f5",
    "klatt", "whisper", "croak",
)

# eSpeak's documented parameter ranges.
_RATE_RANGE: Final = (80, 450)  # words per minute
_VOLUME_RANGE: Final = (0, 200)  # amplitude, 100 = default
_PERCENT_RANGE: Final = (0, 100)  # pitch and pitch range


def validate_voice(name: str) -> str:
    """Return ``name`` if it is ``BASE`` or ``BASE+VARIANT`` from :data:`VOICES` /
    :data:`VARIANTS`; otherwise raise ConfigError listing the valid names."""
    base, plus, variant = name.partition("+")
    if base not in VOICES:
        hint = " (British English is 'en')" if base.lower() in ("en-gb", "en_gb") else ""
        raise ConfigError(
            f"unknown eSpeak voice {base!r}{hint}; valid voices: {', '.join(VOICES)}"
        )
    if plus and variant not in VARIANTS:
        raise ConfigError(
            f"unknown eSpeak variant {variant!r} in {name!r} (eSpeak would drop it silently); "
            f"valid variants: {', '.join(VARIANTS)}"
        )
    return name


@dataclass(frozen=True)
class EspeakSettings:
    """Everything that determines one eSpeak rendering besides the text.

    ``voice``: ``BASE[+VARIANT]`` (see :func:`validate_voice`). ``rate``: words per minute
    (80–450). ``volume``: amplitude, 100 = default; up to 100 it is a pure gain, above about
    150 the engine's limiter compresses (0–200). ``pitch``: base pitch, 0–100, 50 = the
    voice's own. ``range``: pitch range (intonation), 0–100, 50 = the voice's own.
    ``seed``: seed of eSpeak's noise generator.
    """

    voice: str = "en-us"
    rate: int = 165
    volume: int = 100
    pitch: int = 50
    range: int = 50
    seed: int = RAND_SEED

    def __post_init__(self) -> None:
        validate_voice(self.voice)
        for what, value, (lo, hi) in (
            ("rate", self.rate, _RATE_RANGE),
            ("volume", self.volume, _VOLUME_RANGE),
            ("pitch", self.pitch, _PERCENT_RANGE),
            ("range", self.range, _PERCENT_RANGE),
        ):
            if isinstance(value, bool) or not isinstance(value, int) or not lo <= value <= hi:
                raise ConfigError(f"eSpeak {what} must be an integer in [{lo}, {hi}], "
                                  f"got {value!r}")
        if isinstance(self.seed, bool) or not isinstance(self.seed, int) \
                or not 0 <= self.seed < 2**31:
            raise ConfigError(f"eSpeak seed must be an integer in [0, 2**31), got {self.seed!r}")


#: The fixed settings of ``espeak-flat`` (and the defaults of ``espeak-follow``).
NEUTRAL: Final = EspeakSettings()

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
    return int(min(max(round(amp), _VOLUME_RANGE[0] + 1), _VOLUME_RANGE[1]))


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
    from .traits import TRAITS

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
        rate=min(max(rate, _RATE_RANGE[0]), _RATE_RANGE[1]),
        volume=volume,
        pitch=pitch,
        range=NEUTRAL.range,
        seed=seed,
    )
    return VoicePlan(settings, realised, approx, unreal)


def voice_settings(traits: Mapping[str, str], *, seed: int = RAND_SEED) -> EspeakSettings:
    """The eSpeak settings ``espeak-follow`` uses for ``traits`` (see :func:`plan_voice`)."""
    return plan_voice(traits, seed=seed).settings


# ------------------------------------------------------------------ the engine

_AUDIO_OUTPUT_SYNCHRONOUS: Final = 2
_POS_CHARACTER: Final = 1
_CHARS_UTF8: Final = 1
_ENDPAUSE: Final = 0x1000
_PARAM_RATE, _PARAM_VOLUME, _PARAM_PITCH, _PARAM_RANGE = 1, 2, 3, 4
_EE_STATUS: Final = {0: "OK", -1: "internal error", 1: "buffer full", 2: "not found"}
_SynthCallback = ctypes.CFUNCTYPE(
    ctypes.c_int, ctypes.POINTER(ctypes.c_short), ctypes.c_int, ctypes.c_void_p
)
#: Voice the template process selects after initialising (loads the English dictionary once).
_TEMPLATE_VOICE: Final = "en-us"


@functools.cache
def _paths() -> tuple[str, str]:
    """(library file, data directory) of the pinned wheel; resolving them loads nothing."""
    try:
        import espeakng_loader
    except ImportError as exc:
        raise MissingDependencyError(
            "the built-in eSpeak systems", "probes", package="espeakng-loader"
        ) from exc
    return str(espeakng_loader.get_library_path()), str(espeakng_loader.get_data_path())


class _Engine:
    """libespeak-ng loaded and initialised in *this* process.

    A rendering depends on what the library rendered before in the same process, so by default
    an engine renders once per process (a second call raises); ``reuse=True`` lifts that for the
    test and benchmark that demonstrate the problem.
    """

    def __init__(self, lib_path: str, data_path: str, *, reuse: bool = False) -> None:
        lib = ctypes.CDLL(lib_path)
        lib.espeak_Initialize.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.c_char_p,
                                          ctypes.c_int]
        lib.espeak_Initialize.restype = ctypes.c_int
        lib.espeak_SetVoiceByName.argtypes = [ctypes.c_char_p]
        lib.espeak_SetVoiceByName.restype = ctypes.c_int
        lib.espeak_SetParameter.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.c_int]
        lib.espeak_SetParameter.restype = ctypes.c_int
        lib.espeak_Synth.argtypes = [ctypes.c_char_p, ctypes.c_size_t, ctypes.c_uint,
                                     ctypes.c_int, ctypes.c_uint, ctypes.c_uint,
                                     ctypes.c_void_p, ctypes.c_void_p]
        lib.espeak_Synth.restype = ctypes.c_int
        lib.espeak_Synchronize.restype = ctypes.c_int
        try:
            seed_fn = lib.espeak_ng_SetRandSeed
        except AttributeError:
            raise SynthesisError(
                f"{lib_path} lacks espeak_ng_SetRandSeed, so its noise cannot be seeded and "
                f"renderings would not repeat; install espeakng-loader=={ESPEAKNG_LOADER_VERSION}"
            ) from None
        seed_fn.argtypes = [ctypes.c_long]
        seed_fn.restype = None
        rate = lib.espeak_Initialize(_AUDIO_OUTPUT_SYNCHRONOUS, 0, data_path.encode(), 0)
        if rate != SAMPLE_RATE:
            raise SynthesisError(
                f"espeak_Initialize returned {rate} (expected {SAMPLE_RATE} Hz) with data "
                f"at {data_path}; reinstall espeakng-loader=={ESPEAKNG_LOADER_VERSION}"
            )
        self._chunks: list[bytes] = []

        def collect(wav: Any, n: int, _events: Any) -> int:
            if n > 0 and wav:
                self._chunks.append(ctypes.string_at(wav, 2 * n))
            return 0

        self._callback = _SynthCallback(collect)  # keep a reference: C holds the pointer
        lib.espeak_SetSynthCallback(self._callback)
        self._lib = lib
        self._seed = seed_fn
        self._reuse = reuse
        self._rendered_in: int | None = None

    def select_voice(self, voice: str) -> None:
        """``espeak_SetVoiceByName``; a status other than OK is an error."""
        status = self._lib.espeak_SetVoiceByName(voice.encode())
        if status != 0:
            raise SynthesisError(f"eSpeak voice {voice!r}: {_EE_STATUS.get(status, status)}")

    def render(self, text: str, settings: EspeakSettings) -> bytes:
        """Native-endian 16-bit PCM samples of ``text`` at :data:`SAMPLE_RATE`."""
        if not self._reuse:
            if self._rendered_in == os.getpid():
                raise SynthesisError("internal: a second clip in one engine process would "
                                     "inherit eSpeak's hidden state")
            self._rendered_in = os.getpid()
        lib = self._lib
        self.select_voice(settings.voice)
        for param, value in ((_PARAM_RATE, settings.rate), (_PARAM_VOLUME, settings.volume),
                             (_PARAM_PITCH, settings.pitch), (_PARAM_RANGE, settings.range)):
            status = lib.espeak_SetParameter(param, value, 0)
            if status != 0:
                raise SynthesisError(f"espeak_SetParameter({param}, {value}): "
                                     f"{_EE_STATUS.get(status, status)}")
        self._seed(settings.seed)
        data = text.encode("utf-8") + b"\0"
        self._chunks.clear()
        status = lib.espeak_Synth(data, len(data), 0, _POS_CHARACTER, 0,
                                  _CHARS_UTF8 | _ENDPAUSE, None, None)
        if status != 0:
            raise SynthesisError(f"espeak_Synth: {_EE_STATUS.get(status, status)}")
        lib.espeak_Synchronize()
        return b"".join(self._chunks)


def _clean_text(text: str) -> str:
    if not isinstance(text, str):
        raise SynthesisError(f"text must be a string, got {type(text).__name__}")
    # Control characters (NUL would end the C string early) become spaces.
    cleaned = "".join(" " if unicodedata.category(c) == "Cc" else c for c in text)
    if not cleaned.strip():
        raise SynthesisError(f"nothing to say: text {text!r} is empty")
    return cleaned


def _render_wav(engine: _Engine, text: str, settings: EspeakSettings) -> bytes:
    """Render one clip with ``engine`` (in a fresh clip process) and encode it as WAV."""
    pcm = engine.render(text, settings)
    if not pcm:
        raise SynthesisError("eSpeak produced no samples")
    return to_wav_bytes(np.frombuffer(pcm, dtype=np.int16), SAMPLE_RATE)


# ------------------------------------------------------------------ processes
#
#   caller (never loads the library)
#     └── template process, one per worker lane: loads + initialises the library, selects
#         the en-us voice, never synthesises; then, for each clip it is given:
#           └── clip process (os.fork of the template): renders exactly one clip, writes
#               b"W"+wav or b"E"+message to a pipe, and exits with os._exit.
#
# Both kinds die with their parent (PR_SET_PDEATHSIG on Linux, else a poll of the parent
# pid in the template), even when the caller is SIGKILLed, and ignore SIGINT: a Ctrl-C stops
# the caller, which then kills its templates at once (see vocencebench._util.procs).
#
# Every clip process starts from the same memory image (a just-initialised library), which is
# what a brand-new process that loads the library would have, minus the cost of loading it:
# the reference renderings are the same bytes either way (tests/test_tts.py checks both).

#: Seconds one clip may take before its clip process is killed.
CLIP_TIMEOUT: Final = 120.0


def _read_all(fd: int, deadline: float) -> bytes | None:
    """Everything written to ``fd`` until EOF, or None when ``deadline`` passes first."""
    chunks: list[bytes] = []
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            return None
        ready, _, _ = select.select([fd], [], [], left)
        if not ready:
            return None
        chunk = os.read(fd, 1 << 20)
        if not chunk:
            return b"".join(chunks)
        chunks.append(chunk)


def _clip_process(engine: _Engine, text: str, settings: EspeakSettings, fd: int,
                  template_pid: int | None = None) -> None:
    """Body of a clip process. Never returns: always ends in ``os._exit``."""
    code = 0
    try:
        if template_pid is not None:
            from ._util.procs import die_with_parent

            die_with_parent(template_pid)
        try:
            msg = b"W" + _render_wav_in_clip_process(engine, text, settings)
        except BaseException as exc:  # reported through the pipe
            msg = b"E" + f"{type(exc).__name__}: {exc}".encode("utf-8", "replace")
        view = memoryview(msg)
        while view:
            view = view[os.write(fd, view):]
    except BaseException:
        code = 70
    finally:
        os._exit(code)


def _render_wav_in_clip_process(engine: _Engine, text: str, settings: EspeakSettings
                                ) -> bytes:
    # A separate name so tests can replace the clip work (the forks inherit the patch).
    return _render_wav(engine, text, settings)


def _render_one(engine: _Engine, text: str, settings: EspeakSettings, timeout: float
                ) -> tuple[bool, bytes]:
    """In the template process: fork a clip process and collect (ok, WAV bytes or message)."""
    r, w = os.pipe()
    template_pid = os.getpid()
    pid = os.fork()
    if pid == 0:  # the clip process
        os.close(r)
        _clip_process(engine, text, settings, w, template_pid)
    os.close(w)
    try:
        data = _read_all(r, time.monotonic() + timeout)
    finally:
        os.close(r)
    if data is None:
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
        return False, f"timed out after {timeout:g} s".encode()
    _, status = os.waitpid(pid, 0)
    if data[:1] == b"W" and os.waitstatus_to_exitcode(status) == 0:
        return True, data[1:]
    if data[:1] == b"E":
        return False, data[1:]
    code = os.waitstatus_to_exitcode(status)
    how = f"signal {-code}" if code < 0 else f"exit code {code}"
    return False, f"eSpeak clip process died ({how})".encode()


def _template_main(conn: Connection, timeout: float, parent_pid: int | None = None) -> None:
    """A worker lane: initialise the library once, then one clip process per request."""
    from ._util.procs import WATCH_INTERVAL_S, die_with_parent

    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the caller handles Ctrl-C
    armed = die_with_parent(parent_pid) if parent_pid is not None else True
    engine: _Engine | None = None
    try:
        ready = _Engine(*_paths())
        ready.select_voice(_TEMPLATE_VOICE)
        engine, failure = ready, b""
    except BaseException as exc:
        engine = None
        failure = f"{type(exc).__name__}: {exc}".encode("utf-8", "replace")
    while True:
        try:
            if not armed:  # no parent-death signal here: watch the parent between jobs
                while not conn.poll(WATCH_INTERVAL_S):
                    if os.getppid() != parent_pid:
                        os._exit(1)
            job = conn.recv()
        except EOFError:
            break
        if job is None:
            break
        index, text, settings = job
        if engine is None:
            conn.send((index, False, failure))
            continue
        ok, payload = _render_one(engine, text, settings, timeout)
        conn.send((index, ok, payload))
    conn.close()


def _cpus() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # pragma: no cover - not Linux
        return max(1, os.cpu_count() or 1)


def _default_workers() -> int:
    return min(_cpus(), 8)


def _short(text: str) -> str:
    return text if len(text) <= 60 else text[:57] + "..."


#: Requests sent ahead to each template, so it never waits for the caller between clips.
_PREFETCH: Final = 3


@dataclass
class _Lane:
    process: BaseProcess
    conn: Connection
    jobs: deque[tuple[int, str]] = field(default_factory=deque)  # (index, text) in flight
    deadline: float = math.inf  # when the head job is overdue


def _start_lane(ctx: Any, timeout: float) -> _Lane:
    parent_end, child_end = ctx.Pipe(duplex=True)
    proc = ctx.Process(target=_template_main, args=(child_end, timeout, os.getpid()),
                       name="vocencebench-espeak", daemon=True)
    proc.start()
    child_end.close()
    return _Lane(proc, parent_end)


def _run(jobs: Sequence[tuple[str, EspeakSettings]], workers: int | None,
         *, timeout: float = CLIP_TIMEOUT) -> list[bytes | SynthesisError]:
    """Render ``jobs`` on ``workers`` lanes, one fresh clip process per job; per-job result.

    Not ``multiprocessing.Pool(maxtasksperchild=1)``: a clip process that crashes in C or hangs
    becomes that clip's error instead of hanging the pool, and forking clip processes from an
    initialised template costs half the CPU of loading the library in each of them.
    """
    n = _default_workers() if workers is None else workers
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise ConfigError(f"workers must be a positive integer, got {workers!r}")
    n = min(n, _cpus())  # lanes are CPU-bound: more than the CPUs only costs memory
    out: list[bytes | SynthesisError | None] = [None] * len(jobs)
    todo: deque[tuple[int, str, EspeakSettings]] = deque()
    settings_of: dict[int, EspeakSettings] = {}
    for i, (text, settings) in enumerate(jobs):
        if not isinstance(settings, EspeakSettings):
            raise ConfigError(f"expected EspeakSettings, got {type(settings).__name__}")
        try:
            todo.append((i, _clean_text(text), settings))
            settings_of[i] = settings
        except SynthesisError as exc:
            out[i] = exc
    if not todo:
        return [r if r is not None else SynthesisError("internal: job not run") for r in out]
    _paths()  # resolve (and fail on a missing wheel) here, before any process starts
    ctx = multiprocessing.get_context("fork")
    lanes = [_start_lane(ctx, timeout) for _ in range(min(n, len(todo)))]
    grace = 30.0  # seconds a template may lag behind its clip's own timeout

    def lane_lost(k: int, why: str) -> None:
        """Fail the lane's current clip with ``why``; requeue the rest; start a new lane."""
        lane = lanes[k]
        i, text = lane.jobs.popleft()
        out[i] = SynthesisError(f"{why} while rendering {_short(text)!r}")
        for j, t in reversed(lane.jobs):
            todo.appendleft((j, t, settings_of[j]))
        lanes[k] = _replace_lane(lane, ctx, timeout)

    finished = False
    try:
        while True:
            for k, lane in enumerate(lanes):
                while todo and len(lane.jobs) < _PREFETCH:
                    i, text, settings = todo.popleft()
                    if not lane.jobs:
                        lane.deadline = time.monotonic() + timeout + grace
                    lane.jobs.append((i, text))
                    try:
                        lane.conn.send((i, text, settings))
                    except OSError as exc:  # the template died while idle
                        lane_lost(k, f"eSpeak worker unavailable ({exc})")
                        break
            busy = [lane for lane in lanes if lane.jobs]
            if not busy:
                break
            wait_s = max(0.0, min(lane.deadline for lane in busy) - time.monotonic())
            ready = wait([lane.conn for lane in busy], timeout=wait_s)
            for k, lane in enumerate(lanes):
                if not lane.jobs:
                    continue
                if lane.conn in ready:
                    try:
                        index, ok, payload = lane.conn.recv()
                    except (EOFError, OSError):
                        lane.process.join(timeout=5)
                        lane_lost(k, f"eSpeak worker died (exit code {lane.process.exitcode})")
                        continue
                    i, text = lane.jobs.popleft()
                    if index != i:  # pragma: no cover - the template answers in order
                        raise SynthesisError(f"internal: answer for job {index}, expected {i}")
                    out[i] = payload if ok else SynthesisError(
                        f"eSpeak failed on {_short(text)!r}: "
                        f"{payload.decode('utf-8', 'replace')}")
                    lane.deadline = time.monotonic() + timeout + grace
                elif time.monotonic() >= lane.deadline:
                    lane_lost(k, "eSpeak worker stopped answering")
        finished = True
    finally:
        for lane in lanes:
            if finished:
                _stop_lane(lane)
            else:  # interrupted (Ctrl-C, an error): stop at once, do not drain the queue
                _kill_lane(lane)
    return [r if r is not None else SynthesisError("internal: job not run") for r in out]


def _stop_lane(lane: _Lane) -> None:
    with contextlib.suppress(OSError):
        lane.conn.send(None)
    lane.conn.close()
    lane.process.join(timeout=5)
    if lane.process.is_alive():
        lane.process.kill()
        lane.process.join()


def _kill_lane(lane: _Lane) -> None:
    with contextlib.suppress(OSError, ValueError):
        lane.process.kill()
        lane.process.join()
    lane.conn.close()


def _replace_lane(lane: _Lane, ctx: Any, timeout: float) -> _Lane:
    lane.process.kill()
    lane.process.join()
    lane.conn.close()
    return _start_lane(ctx, timeout)


def synthesize(text: str, settings: EspeakSettings = NEUTRAL) -> bytes:
    """Render ``text`` with ``settings`` in a fresh process; 16-bit mono WAV at 22 050 Hz.

    Bit-identical for the same (text, settings) on every call, process and run (with the pinned
    espeakng-loader). Raises SynthesisError naming the text.
    """
    res = _run([(text, settings)], workers=1)[0]
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
    results = _run(list(requests), workers)
    for r in results:
        if isinstance(r, SynthesisError):
            raise r
    return [r for r in results if isinstance(r, bytes)]


# ------------------------------------------------------------------ the two systems


def _parse(instruction: str) -> dict[str, str]:
    try:
        from .instruction import parse_instruction
    except ImportError as exc:
        raise SynthesisError(
            f"espeak-follow needs vocencebench.instruction.parse_instruction: {exc}"
        ) from exc
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
            out[i] = SynthesisError(f"{name} could not plan {_short(instruction)!r}: {exc}")
    for i, res in zip(slots, _run(jobs, workers), strict=True):
        out[i] = res
    return [r if r is not None else SynthesisError("internal: item not run") for r in out]


#: The former name of :func:`synthesize_many` (same contract).
synthesize_requests = synthesize_many
