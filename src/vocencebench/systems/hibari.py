"""Neural built-in voices on hibari-tts: ``hibari`` and ``hibari-follow``.

hibari-tts (PyPI, Apache-2.0) is a distillation of Kokoro-82M whose default voice (``heart``,
an American woman) ships inside the wheel as an int8 ONNX model: 24 kHz float32 audio, a
``speed=`` control (0.5–2.0) and a ``seed=`` for the noise branch of its vocoder. The other
voices download from a model hub on first use, so neither system uses them.

* ``hibari`` is the default voice as it comes: speed 1.0, its own level (about −26 LUFS),
  the instruction ignored.
* ``hibari-follow`` is the same voice steered by what signal processing can honestly do,
  planned from the instruction by :func:`vocencebench.instruction.parse_instruction` (as
  ``espeak-follow`` is): the model's own ``speed`` for pace; Praat's "Change gender" (PSOLA
  re-synthesis through parselmouth) for the pitch median, the formants of the requested gender
  and age, and the pitch range of the requested emotion; a BS.1770 gain to a target loudness
  per level, with a look-ahead peak limiter at −1 dBFS so that a loud request is never
  clipped; and hibari's British spelling-to-sound rules for a British or Australian accent.
  :func:`plan_hibari` says, per trait, what was realised, approximated or not realised.

Both are deterministic: the same (text, instruction, seed) gives the same WAV bytes on every
call, in every process and run with the pinned packages. onnxruntime runs on one thread (its
kernels then reduce in a fixed order), the vocoder's noise comes from ``seed``, Praat's
"Change gender" (which draws random numbers of its own: two calls on the same sound differ)
runs with Praat's generator reseeded from ``seed`` for every clip, the limiter has no random
parts, and the output is 16-bit PCM WAV (rounded half to even
by :func:`vocencebench.audio.to_wav_bytes`). ``system_id`` names the hibari-tts and
parselmouth releases and :data:`STEERING_VERSION`, so a cache never mixes renderings.

Needs the ``neural`` extra: ``pip install "vocencebench[neural]"``.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

import numpy as np
import numpy.typing as npt

from .._numbers import is_whole_number
from .._util.deps import installed_version, require
from .._util.praat import seeded
from ..audio import to_wav_bytes
from ..constants import PROJECT_SEED
from ..errors import ConfigError, MissingDependencyError, SynthesisError
from ..instruction import parse_instruction
from ..loudness import integrated_loudness
from ..norms import REFERENCE_F0_HZ, age_group
from ..traits import TRAITS

__all__ = [
    "AGE_SPEED_FACTOR",
    "EMOTION_RANGE",
    "FORMANT_RATIO",
    "HIBARI_TTS_VERSION",
    "LIMITER_CEILING",
    "NEURAL_SYSTEMS",
    "PITCH_SEMITONES",
    "RAND_SEED",
    "SAMPLE_RATE",
    "SPEED_BY_PACE",
    "STEERING_VERSION",
    "TARGET_LUFS",
    "HibariPlan",
    "HibariSystem",
    "hibari_available",
    "plan_hibari",
]

#: Output rate of hibari-tts (Hz); the WAV files are 16-bit mono at this rate.
SAMPLE_RATE: Final = 24_000
#: The hibari-tts release the calibration below was measured on (``pip install
#: "vocencebench[neural]"`` pins it).
HIBARI_TTS_VERSION: Final = "0.2.1"
#: Default seed of the vocoder's noise branch (the project seed).
RAND_SEED: Final = PROJECT_SEED
#: Version of the steering below; bump it whenever a rendering can change.
STEERING_VERSION: Final = "1"
#: The built-in neural systems, by name.
NEURAL_SYSTEMS: Final[tuple[str, ...]] = ("hibari", "hibari-follow")

#: (hibari ``speed``, PSOLA duration factor) per pace value. The model's response to
#: ``speed`` is stepwise (each phone lasts a whole number of 12.5 ms frames, so at 1.34 every
#: two-frame phone drops to one): on corpus scripts 0.65 gives 0.63× the speaking rate of
#: 1.0, 0.88 gives 0.93×, 1.33 gives 1.2× and 1.34 jumps to 1.45×. Its own rate at 1.0 is
#: brisk (tuned under ``pace-phones@1``: median 13.2 phones/s, fast edge 14), so *fast* is
#: speed 1.33 plus a gentle PSOLA time compression to 92 % of the duration (about 1.3× in
#: all). Under ``pace-phones@4`` the three land in their buckets 97.6 / 96.4 / 97.6 % of the
#: time over the corpus: see the calibration table in docs/adapters.md.
SPEED_BY_PACE: Final[Mapping[str, tuple[float, float]]] = {
    "slow": (0.65, 1.0), "moderate": (0.88, 1.0), "fast": (1.33, 0.92),
}  # fmt: skip
#: Speed factor per age group, used only when no pace is requested.
AGE_SPEED_FACTOR: Final[Mapping[str, float]] = {
    "child": 1.0, "teen": 1.0, "adult": 1.0, "elderly": 0.92,
}  # fmt: skip
#: Integrated loudness (LUFS, ITU-R BS.1770) aimed at per loudness value; the loudness probe's
#: edges are −23 and −17.5. An absent loudness gets the normal level.
TARGET_LUFS: Final[Mapping[str, float]] = {"quiet": -27.0, "normal": -20.5, "loud": -15.5}
#: Semitones from the typical F0 of the requested gender and age group (the pitch probe's
#: reference table) per pitch value; the probe's bucket edges are ±3 semitones.
#: *low* is 4.5 rather than 5 below: a woman's voice much under 150 Hz reads male to the
#: F0/F3 gender heuristic.
PITCH_SEMITONES: Final[Mapping[str, float]] = {"low": -4.5, "medium": 0.0, "high": 5.0}
#: Praat "Change gender" formant shift ratio per (gender, age group): the default voice is an
#: adult woman (1.0). Adult men's formants sit some 15 % lower (a longer vocal tract), a
#: 13-year-old boy's between; children's are higher than a woman's. Measured: at 1.1 and
#: above, Praat's formant tracker with adult settings (5 formants below 5.5 kHz, what the
#: gender heuristic uses) starts to lose the child's third formant and reads a low-pitched
#: girl as male, so children get a modest 1.06 / 1.04.
FORMANT_RATIO: Final[Mapping[tuple[str, str], float]] = {
    ("female", "child"): 1.06, ("male", "child"): 1.04,
    ("female", "teen"): 1.03, ("male", "teen"): 0.88,
    ("female", "adult"): 1.0, ("male", "adult"): 0.85,
    ("female", "elderly"): 1.0, ("male", "elderly"): 0.84,
}  # fmt: skip
#: Praat "Change gender" pitch range factor per emotion (1.0 keeps the contour's range): a
#: livelier melody for aroused emotions, a flatter one for low-arousal ones. It leaves the
#: median F0 (the pitch request) where it is.
EMOTION_RANGE: Final[Mapping[str, float]] = {
    "neutral": 1.0, "calm": 0.8, "sad": 0.7, "happy": 1.3, "surprised": 1.4,
    "angry": 1.25, "fearful": 1.15, "disgust": 0.9,
}  # fmt: skip
#: Sample peak the loudness gain may reach (−1 dBFS); above it the look-ahead limiter takes
#: over (never a hard clip).
LIMITER_CEILING: Final = 10.0 ** (-1.0 / 20.0)
#: Limiter look-ahead = release radius (s): the gain falls over 20 ms before a peak and
#: recovers over 20 ms after it.
LIMITER_RADIUS_S: Final = 0.020
#: Praat "Change gender" pitch analysis range (Hz) for the default voice.
_PRAAT_FLOOR_HZ: Final = 75.0
_PRAAT_CEILING_HZ: Final = 600.0
#: Accent → (British spelling-to-sound rules?, status note).
ACCENT_G2P: Final[Mapping[str, tuple[bool, str]]] = {
    "American": (False, "realised"),
    "British": (True, "realised: hibari's British G2P (non-rhotic, British vowels)"),
    "Australian": (True, "approximated: no Australian voice; hibari's British G2P"),
    "Canadian": (False, "approximated: no Canadian voice; General American"),
    "Indian": (False, "not realised: no Indian English voice; General American"),
}


def hibari_available() -> bool:
    """True when hibari-tts (and parselmouth, for ``hibari-follow``) can be imported."""
    try:
        import hibari  # noqa: F401
        import parselmouth  # noqa: F401
    except ImportError:
        return False
    return True


# ------------------------------------------------------------------ planning


@dataclass(frozen=True)
class HibariPlan:
    """What ``hibari-follow`` (or ``hibari``) does for one request.

    ``speed``: hibari's speed (1.0 = the voice's own pace). ``duration_factor``: PSOLA time
    scaling after synthesis (1.0 = none; 0.92 = 8 % shorter). ``f0_hz``: pitch median aimed at
    (Hz) or None to keep the voice's own. ``formant_ratio``: Praat formant shift ratio (1.0 =
    unchanged). ``range_factor``: pitch range factor (1.0 = unchanged). ``target_lufs``:
    integrated loudness aimed at (LUFS) or None to keep the voice's own level. ``british``:
    British spelling-to-sound rules. ``realised`` / ``approximated`` / ``unrealised``: trait
    name → a short note (each requested trait appears in exactly one).
    """

    speed: float = 1.0
    duration_factor: float = 1.0
    f0_hz: float | None = None
    formant_ratio: float = 1.0
    range_factor: float = 1.0
    target_lufs: float | None = None
    british: bool = False
    realised: Mapping[str, str] = field(default_factory=dict)
    approximated: Mapping[str, str] = field(default_factory=dict)
    unrealised: Mapping[str, str] = field(default_factory=dict)

    @property
    def praat(self) -> bool:
        """Whether the clip goes through Praat's PSOLA ("Change gender")."""
        return (self.f0_hz is not None or self.formant_ratio != 1.0
                or self.range_factor != 1.0 or self.duration_factor != 1.0)


def plan_hibari(traits: Mapping[str, str]) -> HibariPlan:
    """Map a trait request (trait name → registry value) onto hibari-follow's steering.

    Absent traits keep the voice's own: an absent gender is female, an absent age adult, an
    absent pitch the typical F0 of the requested gender and age (when either is requested),
    an absent loudness the normal level. An unknown trait or value raises ConfigError.
    """
    TRAITS.check_values(traits)

    realised: dict[str, str] = {}
    approx: dict[str, str] = {}
    unreal: dict[str, str] = {}

    gender = traits.get("gender", "female")
    group = age_group(float(traits["age"])) if "age" in traits else "adult"
    formant = FORMANT_RATIO[(gender, group)] if {"gender", "age"} & traits.keys() else 1.0
    if "gender" in traits:
        how = f"formants ×{formant:g}"
        if gender == "male" and group == "child":
            approx["gender"] = f"{how}: a boy's and a girl's voice differ little before puberty"
        else:
            realised["gender"] = how
    f0: float | None = None
    if {"pitch", "gender", "age"} & traits.keys():
        level = traits.get("pitch", "medium")
        f0 = REFERENCE_F0_HZ[(gender, group)] * 2.0 ** (PITCH_SEMITONES[level] / 12.0)
        if "pitch" in traits:
            realised["pitch"] = f"PSOLA to a {f0:.0f} Hz median"
    duration = 1.0
    if "pace" in traits:
        speed, duration = SPEED_BY_PACE[traits["pace"]]
        realised["pace"] = f"speed {speed:g}" + (
            f", PSOLA duration ×{duration:g}" if duration != 1.0 else "")
    else:
        speed = AGE_SPEED_FACTOR[group] if "age" in traits else 1.0
    if "age" in traits:
        approx["age"] = (f"{group}: F0 {REFERENCE_F0_HZ[(gender, group)]:.0f} Hz, formants "
                         f"×{formant:g}" + ("" if "pace" in traits else f", speed {speed:g}")
                         + "; one voice, no age-specific timbre")
    level_l = traits.get("loudness", "normal")
    lufs = TARGET_LUFS[level_l]
    if "loudness" in traits:
        realised["loudness"] = f"gain to {lufs:g} LUFS (peak limit −1 dBFS)"
    range_factor = 1.0
    if "emotion" in traits:
        emotion = traits["emotion"]
        range_factor = EMOTION_RANGE.get(emotion, 1.0)
        if emotion == "neutral":
            realised["emotion"] = "the voice's own neutral delivery"
        else:
            approx["emotion"] = (f"pitch range ×{range_factor:g} only; no emotional voice "
                                 "quality")
    british = False
    if "accent" in traits:
        british, how = ACCENT_G2P.get(traits["accent"], (False, "not realised"))
        if how.startswith("realised"):
            realised["accent"] = how
        elif how.startswith("approximated"):
            approx["accent"] = how
        else:
            unreal["accent"] = how
    if "tone" in traits:
        unreal["tone"] = "no control of attitude or manner"
    return HibariPlan(speed=speed, duration_factor=duration, f0_hz=f0, formant_ratio=formant,
                      range_factor=range_factor, target_lufs=lufs, british=british,
                      realised=realised, approximated=approx, unrealised=unreal)


def _parse(instruction: str) -> dict[str, str]:
    return dict(parse_instruction(instruction))


# ------------------------------------------------------------------ the engine

_ENGINES: dict[bool, Any] = {}
_ENGINE_LOCK = threading.Lock()


def _hibari_module() -> Any:
    return require("hibari", "the neural built-in voices (hibari, hibari-follow)", "neural",
                   package="hibari-tts")


def _engine(british: bool) -> Any:
    """The process's hibari engine for the default voice (US or British G2P), loaded once.

    One onnxruntime thread: kernels then reduce in a fixed order (bit-identical output), and
    the pipeline's own workers share the cores.
    """
    with _ENGINE_LOCK:
        eng = _ENGINES.get(british)
        if eng is None:
            hibari = _hibari_module()
            g2p = None
            if british:
                from hibari.g2p import G2P

                g2p = G2P(british=True)
            eng = hibari.Hibari(threads=1, g2p=g2p)
            _ENGINES[british] = eng
        return eng


def _parselmouth() -> Any:
    return require("parselmouth", "hibari-follow's pitch and formant steering", "neural",
                   package="praat-parselmouth")


FloatArray = npt.NDArray[np.float64]


def _change_gender(x: FloatArray, plan: HibariPlan, seed: int) -> FloatArray:
    """Praat "Change gender": formants ×ratio, pitch median → plan.f0_hz (0 = keep), range
    ×factor, duration ×factor. The command draws random numbers, so Praat's generator is
    seeded with ``seed`` for the call (:func:`vocencebench._util.praat.seeded`)."""
    pm = _parselmouth()
    from parselmouth.praat import call

    snd = pm.Sound(x, sampling_frequency=SAMPLE_RATE)
    try:
        with seeded(seed):
            out = call(snd, "Change gender", _PRAAT_FLOOR_HZ, _PRAAT_CEILING_HZ,
                       float(plan.formant_ratio), float(plan.f0_hz or 0.0),
                       float(plan.range_factor), float(plan.duration_factor))
    except pm.PraatError as exc:
        raise SynthesisError(f"Praat Change gender failed: {exc}") from exc
    y = np.array(out.values[0], dtype=np.float64)
    if round(float(out.sampling_frequency)) != SAMPLE_RATE:
        raise SynthesisError(f"Praat returned {out.sampling_frequency} Hz audio")
    return y


def _limit(x: FloatArray, ceiling: float = LIMITER_CEILING) -> FloatArray:
    """Look-ahead peak limiter: |output| ≤ ceiling, the gain changing smoothly.

    The gain each sample needs (ceiling/|x|, at most 1) goes through a minimum filter of
    radius R and then a Hann window of half-width R. Every smoothed value averages minima
    taken over windows that contain its own sample, so it never exceeds what that sample
    needs: the ceiling holds exactly, with no clipping.
    """
    peak = float(np.max(np.abs(x))) if x.shape[0] else 0.0
    if peak <= ceiling:
        return x
    from scipy.ndimage import minimum_filter1d
    from scipy.signal import oaconvolve

    radius = max(1, round(LIMITER_RADIUS_S * SAMPLE_RATE))
    need = np.minimum(1.0, ceiling / np.maximum(np.abs(x), 1e-12))
    floor = minimum_filter1d(need, size=2 * radius + 1, mode="nearest")
    win = np.hanning(2 * radius + 1)
    win /= win.sum()
    padded = np.concatenate([np.full(radius, floor[0]), floor, np.full(radius, floor[-1])])
    gain = oaconvolve(padded, win, mode="valid")  # FFT overlap-add: ~50x np.convolve here
    # Where no gain reduction is in reach of the window the gain is exactly 1 (the FFT
    # would leave 1 ± 1e-16 there); elsewhere the minimum guards against FFT rounding.
    idle = minimum_filter1d(floor, size=2 * radius + 1, mode="nearest") >= 1.0
    gain[idle] = 1.0
    y = x * np.minimum(gain, need)
    return np.asarray(y, dtype=np.float64)


def _loudness(x: FloatArray) -> float | None:
    lufs, _ = integrated_loudness(x, SAMPLE_RATE)
    return lufs


def _to_level(x: FloatArray, target_lufs: float) -> FloatArray:
    """Gain to ``target_lufs`` (BS.1770), limited at :data:`LIMITER_CEILING`; the gain is
    re-measured after limiting (limiting lowers the level) for up to four rounds."""
    lufs = _loudness(x)
    if lufs is None:
        return x
    gain_db = target_lufs - lufs
    y = x
    for _ in range(4):
        y = _limit(x * 10.0 ** (gain_db / 20.0))
        got = _loudness(y)
        if got is None or abs(got - target_lufs) < 0.05:
            break
        gain_db += target_lufs - got
    return y


def render(text: str, plan: HibariPlan, *, seed: int = RAND_SEED) -> bytes:
    """Render ``text`` with ``plan``: 16-bit mono WAV bytes at 24 kHz (deterministic)."""
    if not isinstance(text, str):
        raise SynthesisError(f"text must be a string, got {type(text).__name__}")
    if not text.strip():
        raise SynthesisError(f"nothing to say: text {text!r} is empty")
    if not 0.5 <= plan.speed <= 2.0:
        raise ConfigError(f"hibari speed must be in [0.5, 2.0], got {plan.speed}")
    eng = _engine(plan.british)
    try:
        raw = eng(text, speed=float(plan.speed), seed=int(seed))
    except Exception as exc:  # the engine may raise anything on odd text
        raise SynthesisError(f"hibari failed on {text[:60]!r}: {type(exc).__name__}: {exc}") \
            from exc
    x = np.asarray(raw, dtype=np.float64)
    if x.shape[0] == 0 or not np.isfinite(x).all():
        raise SynthesisError(f"hibari produced no usable samples for {text[:60]!r}")
    if plan.praat:
        x = _change_gender(x, plan, seed)
    if plan.target_lufs is not None:
        x = _to_level(x, plan.target_lufs)
    return to_wav_bytes(np.clip(x, -1.0, 1.0), SAMPLE_RATE)


# ------------------------------------------------------------------ the systems


class HibariSystem:
    """A neural built-in system: ``HibariSystem("hibari")`` or ``HibariSystem("hibari-follow")``.

    Callable as ``system(text, instruction) -> WAV bytes`` (16-bit mono, 24 kHz), with
    ``synthesize_many`` for batches, ``plan(instruction)`` for what it will do, and a stable
    ``system_id``. Raises MissingDependencyError (extra ``neural``) when hibari-tts is
    missing — at construction, so a run stops before any work.
    """

    def __init__(self, name: str = "hibari-follow", *, seed: int = RAND_SEED) -> None:
        if name not in NEURAL_SYSTEMS:
            raise ConfigError(f"unknown neural system {name!r}; valid: "
                              f"{', '.join(NEURAL_SYSTEMS)}")
        if not is_whole_number(seed) or not 0 <= seed < 2**32:
            raise ConfigError(f"hibari seed must be an integer in [0, 2**32), got {seed!r}")
        _hibari_module()
        if name == "hibari-follow":
            _parselmouth()
        self.name = name
        self.seed = seed
        engine = f"hibari-tts-{installed_version('hibari-tts')}"
        if name == "hibari-follow":
            engine += f"+parselmouth-{installed_version('praat-parselmouth')}"
        self.system_id = f"{name}@{engine}+steer{STEERING_VERSION}"
        if seed != RAND_SEED:
            self.system_id += f"+seed{seed}"

    def plan(self, instruction: str) -> HibariPlan:
        """What this system does for ``instruction``; ``hibari`` ignores it."""
        if self.name == "hibari":
            traits = _parse(instruction)
            return HibariPlan(unrealised={t: "hibari ignores the instruction" for t in traits})
        return plan_hibari(_parse(instruction))

    def __call__(self, text: str, instruction: str) -> bytes:
        plan = HibariPlan() if self.name == "hibari" else self.plan(instruction)
        return render(text, plan, seed=self.seed)

    def synthesize_many(
        self, requests: Sequence[tuple[str, str]], *, workers: int | None = None
    ) -> list[bytes | Exception]:
        """Render ``(text, instruction)`` pairs in order in this process (the model runs at
        about 60× real time on one core); a failed item is its error, the rest complete.
        ``workers`` is accepted for the batch protocol and ignored."""
        out: list[bytes | Exception] = []
        for text, instruction in requests:
            try:
                out.append(self(text, instruction))
            except MissingDependencyError:
                raise
            except Exception as exc:  # the item fails, not the batch
                if isinstance(exc, SynthesisError):
                    out.append(exc)
                else:
                    out.append(SynthesisError(f"{self.name}: {type(exc).__name__}: {exc}"))
        return out

    def __repr__(self) -> str:
        return f"HibariSystem({self.name!r}, seed={self.seed})"
