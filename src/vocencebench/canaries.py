"""Known-answer canaries: check the instruments on clips whose answers are known, before a run.

A few reference clips ship in the package (``datasets/canaries/``: two real CMU ARCTIC
recordings, a man and a woman, and one hibari-tts clip of a woman; sources and licences in its
``manifest.json``). At run time each is edited with effects whose answer is known:

=================  ===================================  =====================================
edit               how                                  what an honest probe must report
=================  ===================================  =====================================
pitch +4 / −4 st   Praat PSOLA, formants kept           median F0 up / down by about 4 st
tempo ×1.25 / ×0.8 Praat PSOLA, pitch kept              pace value up / down by about ×1.25
gain +10 / −10 dB  a pure gain (base level −30 LUFS)    integrated loudness +10 / −10 LU
=================  ===================================  =====================================

and every probe of the set is run on the clips: it must move in the known direction by about
the known amount (:data:`DIRECTION_TOLERANCE`), and the classifying probes must give the known
labels — the man's clip male and the women's female, an adult age for all three (required);
read-speech emotion (neutral or calm) and the speaker's accent are reported but advisory (a good
accent or emotion model may still disagree on one short clip). With a judge, two of the
voices (:data:`JUDGE_VOICES`) are each paired with three degraded copies of themselves —
band-limited to 3 kHz, hard-clipped, white noise at 5 dB SNR — and judged on naturalness in
both orders: the clean clip must win.

:func:`run_canaries` returns a :class:`CanaryReport` (accuracy, order-flip rate,
unparsable-answer rate, every check with its numbers) and by default raises
:class:`~vocencebench.errors.CanaryError` (fatal) naming the failed checks and what to do.
Results are cached by clip sha256 and instrument version, so a rerun costs nothing.
"""

from __future__ import annotations

import functools
import json
import math
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from importlib import resources
from typing import TYPE_CHECKING, Any, Final

import numpy as np
import numpy.typing as npt

from .constants import PROJECT_SEED
from .errors import CanaryError, ConfigError, JudgeResponseError, MissingDependencyError
from .schema import SCHEMA_VERSION, Item, ProbeResult
from .traits import NATURALNESS, TRAITS, TraitRegistry

if TYPE_CHECKING:
    from .audio import Audio
    from .judge import Judge
    from .probes import ProbeSet

__all__ = [
    "ADULT_AGE_RANGE",
    "CANARY_VERSION",
    "DEGRADATIONS",
    "DIRECTION_TOLERANCE",
    "EDITS",
    "JUDGE_MAX_FLIP_RATE",
    "JUDGE_MAX_UNPARSABLE_RATE",
    "JUDGE_MIN_CLEAN_RATE",
    "JUDGE_VOICES",
    "CanaryCheck",
    "CanaryClip",
    "CanaryReport",
    "canary_clips",
    "edit_clip",
    "judge_pairs",
    "preflight",
    "run_canaries",
    "skipped_record",
    "status_line",
]

#: Version of the canary set, edits and thresholds; part of every cache key.
CANARY_VERSION: Final = "1"
#: Pitch edits (semitones), tempo edits (speed factors), gain edits (dB).
EDITS: Final[Mapping[str, tuple[str, float]]] = {
    "pitch+4": ("pitch", 4.0), "pitch-4": ("pitch", -4.0),
    "tempo1.25": ("tempo", 1.25), "tempo0.8": ("tempo", 0.8),
    "gain+10": ("gain", 10.0), "gain-10": ("gain", -10.0),
}  # fmt: skip
#: A directional check passes when the measured change, on its own scale (semitones, log of
#: the pace ratio, LU), is between these fractions of the known change: right direction, and
#: neither much too small nor much too large.
DIRECTION_TOLERANCE: Final = (0.5, 1.5)
#: Loudness is a pure gain: its change must be within this many LU of the edit.
LOUDNESS_TOLERANCE_LU: Final = 1.0
#: Every canary speaker is an adult: an age estimate must fall in this range (years).
ADULT_AGE_RANGE: Final = (18.0, 70.0)
#: Emotions fair to expect of calm read speech (advisory check).
READ_SPEECH_EMOTIONS: Final = ("neutral", "calm")
#: Base level of every canary before the edits (LUFS): leaves room for the +10 dB edit.
BASE_LUFS: Final = -30.0
#: Degradations for the judge's naturalness pairs.
DEGRADATIONS: Final[tuple[str, ...]] = ("band-limited to 3 kHz", "hard-clipped",
                                        "white noise at 5 dB SNR")
#: The judge must prefer the clean clip in at least this share of its answers ...
JUDGE_MIN_CLEAN_RATE: Final = 0.75
#: ... its winner may change with the presentation order in at most this share of pairs ...
JUDGE_MAX_FLIP_RATE: Final = 0.34
#: ... and at most this share of its answers may be unparsable.
JUDGE_MAX_UNPARSABLE_RATE: Final = 0.2
#: Canaries the judge hears (a real man, the neural woman): 2 voices × 3 degradations × 2
#: orders = 12 judge calls.
JUDGE_VOICES: Final[tuple[str, ...]] = ("arctic-aew", "hibari-heart")
#: Seed of the white noise in the noisy pairs.
NOISE_SEED: Final = PROJECT_SEED
#: Instruction shown to the judge with each pair.
JUDGE_INSTRUCTION: Final = "Read the sentence in a clear, natural voice."

FloatArray = npt.NDArray[np.float64]


# ------------------------------------------------------------------ the clips


@dataclass(frozen=True)
class CanaryClip:
    """One shipped reference clip and its known labels (from ``manifest.json``)."""

    key: str
    file: str
    sha256: str
    text: str
    kind: str
    gender: str
    age_group: str
    accent: str
    emotion: str
    speaker: str
    licence: str
    source: Mapping[str, str] = field(default_factory=dict)

    def read(self) -> bytes:
        """The clip's bytes, checked against the manifest's sha256."""
        import hashlib

        data = resources.files("vocencebench").joinpath(
            f"datasets/canaries/{self.file}").read_bytes()
        got = hashlib.sha256(data).hexdigest()
        if got != self.sha256:
            raise ConfigError(f"canary clip {self.file} has sha256 {got[:12]}…, the manifest "
                              f"says {self.sha256[:12]}…; reinstall vocencebench")
        return data


@functools.cache
def canary_clips() -> tuple[CanaryClip, ...]:
    """The shipped canary clips, in manifest order."""
    text = resources.files("vocencebench").joinpath(
        "datasets/canaries/manifest.json").read_text(encoding="utf-8")
    data = json.loads(text)
    fields = ("key", "file", "sha256", "text", "kind", "gender", "age_group", "accent",
              "emotion", "speaker", "licence")
    return tuple(CanaryClip(**{k: c[k] for k in fields}, source=dict(c.get("source", {})))
                 for c in data["clips"])


def _parselmouth() -> Any:
    try:
        import parselmouth
    except ImportError as exc:
        raise MissingDependencyError("the canaries", "probes",
                                     package="praat-parselmouth") from exc
    return parselmouth


def _wav(x: FloatArray, rate: int) -> bytes:
    from .audio import to_wav_bytes

    return to_wav_bytes(np.clip(x, -1.0, 1.0), rate)


def _lufs(x: FloatArray, rate: int) -> float:
    from .loudness import integrated_loudness

    lufs, _ = integrated_loudness(x, rate)
    if lufs is None:
        raise ConfigError("a canary clip is below the loudness gate")
    return lufs


@functools.cache
def _base(key: str) -> tuple[bytes, int]:
    """The canary ``key`` at :data:`BASE_LUFS` (a pure gain), as WAV bytes, and its rate."""
    from .audio import load_audio

    clip = next(c for c in canary_clips() if c.key == key)
    audio = load_audio(clip.read(), name=clip.file)
    x = np.asarray(audio.samples, dtype=np.float64)
    x = x * 10.0 ** ((BASE_LUFS - _lufs(x, audio.sample_rate)) / 20.0)
    return _wav(x, audio.sample_rate), audio.sample_rate


def _psola(x: FloatArray, rate: int, *, pitch_factor: float = 1.0,
           duration_factor: float = 1.0) -> FloatArray:
    """Praat Manipulation + overlap-add: F0 × ``pitch_factor`` (formants kept), duration ×
    ``duration_factor`` (pitch kept)."""
    pm = _parselmouth()
    from parselmouth.praat import call

    from ._util.praat import seeded

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
    from .audio import load_audio

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

    from .audio import load_audio

    wav, rate = _base(key)
    x = np.asarray(load_audio(wav).samples, dtype=np.float64)
    if how == DEGRADATIONS[0]:
        sos = butter(8, 3000.0, btype="lowpass", fs=rate, output="sos")
        y = sosfiltfilt(sos, x)
    elif how == DEGRADATIONS[1]:
        t = 0.1 * float(np.max(np.abs(x)))
        y = np.clip(x, -t, t)
    elif how == DEGRADATIONS[2]:
        rng = np.random.Generator(np.random.PCG64(NOISE_SEED))
        noise = rng.standard_normal(x.shape[0])
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


# ------------------------------------------------------------------ results


@dataclass(frozen=True)
class CanaryCheck:
    """One known-answer check.

    ``name``: what was checked (e.g. ``pitch +4 st on arctic-aew``). ``trait``: the trait or
    ``naturalness``. ``instrument``: the probe (``name@version``) or ``judge:MODEL``.
    ``expected``: the known answer, in words. ``measured``: the number or label found (None
    when the instrument could not measure). ``passed``; ``required`` (False: advisory, never
    fails the run); ``message``: what the result means.
    """

    name: str
    trait: str
    instrument: str
    clip: str
    expected: str
    measured: float | str | None
    passed: bool
    required: bool = True
    message: str = ""
    detail: Mapping[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "trait": self.trait, "instrument": self.instrument,
                "clip": self.clip, "expected": self.expected, "measured": self.measured,
                "passed": self.passed, "required": self.required, "message": self.message,
                "detail": dict(self.detail)}


@dataclass(frozen=True)
class CanaryReport:
    """What the canaries found.

    ``checks``: every check. ``accuracy``: share of required checks passed (None when there
    were none). ``judge_order_flip_rate``: share of judged pairs whose winner changed with the
    presentation order; ``judge_unparsable_rate``: share of the judge's answers that could not
    be parsed (each retry counts); ``judge_clean_rate``: share of its answers that chose the
    clean clip (all three None without a judge). ``instruments``: probe ids and the judge
    model. ``untested``: traits a probe measures that no canary covers. ``cached``: every
    number came from the cache. ``seconds``: wall time.
    """

    checks: tuple[CanaryCheck, ...]
    accuracy: float | None
    judge_order_flip_rate: float | None = None
    judge_unparsable_rate: float | None = None
    judge_clean_rate: float | None = None
    instruments: tuple[str, ...] = ()
    untested: tuple[str, ...] = ()
    cached: bool = False
    seconds: float = 0.0
    version: str = CANARY_VERSION

    @property
    def failures(self) -> tuple[CanaryCheck, ...]:
        """The required checks that failed."""
        return tuple(c for c in self.checks if c.required and not c.passed)

    @property
    def passed(self) -> bool:
        """True when every required check passed."""
        return not self.failures

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form (for run.json)."""
        return {
            "schema_version": SCHEMA_VERSION, "kind": "canary_report",
            "canary_version": self.version, "passed": self.passed,
            "accuracy": self.accuracy,
            "judge_order_flip_rate": self.judge_order_flip_rate,
            "judge_unparsable_rate": self.judge_unparsable_rate,
            "judge_clean_rate": self.judge_clean_rate,
            "instruments": list(self.instruments), "untested": list(self.untested),
            "cached": self.cached, "seconds": self.seconds,
            "checks": [c.to_dict() for c in self.checks],
        }

    def summary(self) -> str:
        """A few lines for the console and the report."""
        req = [c for c in self.checks if c.required]
        adv = [c for c in self.checks if not c.required]
        acc = "n/a" if self.accuracy is None else f"{100 * self.accuracy:.0f} %"
        lines = [f"canaries: {'PASSED' if self.passed else 'FAILED'} — "
                 f"{sum(c.passed for c in req)}/{len(req)} required checks ({acc})"
                 + (f", {sum(c.passed for c in adv)}/{len(adv)} advisory" if adv else "")
                 + (" (cached)" if self.cached else f" in {self.seconds:.1f} s")]
        if self.judge_order_flip_rate is not None:
            lines.append(f"  judge: clean preferred {_pct(self.judge_clean_rate)}, "
                         f"order-flip rate {_pct(self.judge_order_flip_rate)}, "
                         f"unparsable answers {_pct(self.judge_unparsable_rate)}")
        if self.untested:
            lines.append(f"  no canary for: {', '.join(self.untested)}")
        lines.extend(f"  FAILED {c.name}: {c.message}" for c in self.failures)
        return "\n".join(lines)

    def error_message(self) -> str:
        """The message of the :class:`CanaryError` this report raises."""
        fails = self.failures
        head = (f"{len(fails)} of {sum(c.required for c in self.checks)} canary checks failed "
                "before the corpus run (no synthesis or judge money was spent on it)")
        seen: list[str] = []
        for c in fails:
            if c.message not in seen:
                seen.append(c.message)
        body = "; ".join(seen[:4]) + (f"; … and {len(seen) - 4} more" if len(seen) > 4 else "")
        return (f"{head}: {body}. Fix the instrument (or pass --skip-canaries to run anyway, "
                "and the report will say so)")


def _pct(x: float | None) -> str:
    return "n/a" if x is None else f"{100 * x:.0f} %"


# ------------------------------------------------------------------ probes


def _request(clip: CanaryClip, registry: TraitRegistry) -> dict[str, str]:
    """A full trait request for a canary (only the values matter, not the desirability)."""
    wanted = {"gender": clip.gender, "pace": "moderate", "pitch": "medium",
              "loudness": "normal", "emotion": clip.emotion, "accent": clip.accent}
    out: dict[str, str] = {}
    for t in registry:
        if t.scoring == "numeric":
            out[t.name] = min(t.values, key=lambda v: abs(float(v) - 30.0))
        elif t.name in wanted and wanted[t.name] in t.values:
            out[t.name] = wanted[t.name]
        else:
            out[t.name] = t.values[len(t.values) // 2] if t.scoring == "ordinal" \
                else t.values[0]
    return out


def _item(clip: CanaryClip, edit: str, registry: TraitRegistry) -> Item:
    return Item(id=f"canary-{clip.key}-{edit}", instruction="(known-answer canary)",
                text=clip.text, traits=_request(clip, registry), difficulty=0)


def _probe_key(sha: str, probes: ProbeSet, item: Item) -> str:
    from .cache import cache_key

    return cache_key({"canary": CANARY_VERSION, "audio": sha, "probes": list(probes.ids),
                      "request": item.traits, "text": item.text})


def _measure_all(probes: ProbeSet, jobs: list[tuple[bytes, Item]], cache: Any
                 ) -> tuple[list[dict[str, ProbeResult]], bool]:
    """Probe results per job (from the cache when present); all cached?"""
    import hashlib

    from .audio import load_audio
    from .probes.classifiers import measure_batch

    keys = [_probe_key(hashlib.sha256(w).hexdigest(), probes, it) for w, it in jobs]
    out: list[dict[str, ProbeResult] | None] = [None] * len(jobs)
    todo: list[int] = []
    for i, k in enumerate(keys):
        hit = cache.get_json("probes", k) if cache is not None else None
        if isinstance(hit, Mapping):
            out[i] = {t: ProbeResult.from_dict(r) for t, r in hit.items()}
        else:
            todo.append(i)
    if todo:
        audios: list[Audio] = [load_audio(jobs[i][0], name=jobs[i][1].id) for i in todo]
        results = measure_batch(probes, audios, [jobs[i][1] for i in todo])
        for i, res in zip(todo, results, strict=True):
            out[i] = res
            if cache is not None:
                cache.put_json("probes", keys[i],
                               {t: r.to_dict(versioned=False) for t, r in res.items()})
    return [o if o is not None else {} for o in out], not todo


def _probe_of(results: Mapping[str, ProbeResult], trait: str) -> str:
    r = results.get(trait)
    return r.probe if r is not None else "?"


def _numeric(r: ProbeResult | None) -> float | None:
    if r is None or isinstance(r.value, str) or r.value is None:
        return None
    v = float(r.value)
    return v if math.isfinite(v) else None


def _why_unmeasured(r: ProbeResult | None) -> str:
    if r is None:
        return "returned no result"
    reason = r.detail.get("unmeasurable") if isinstance(r.detail, Mapping) else None
    return f"could not measure it ({reason})" if reason else "could not measure it"


def _direction_checks(clip: CanaryClip, measured: Mapping[str, Mapping[str, ProbeResult]],
                      traits: Sequence[str]) -> list[CanaryCheck]:
    base = measured["base"]
    out: list[CanaryCheck] = []
    lo, hi = DIRECTION_TOLERANCE
    for edit, (what, amount) in EDITS.items():
        trait = {"pitch": "pitch", "tempo": "pace", "gain": "loudness"}[what]
        if trait not in traits:
            continue
        r0, r1 = base.get(trait), measured[edit].get(trait)
        v0, v1 = _numeric(r0), _numeric(r1)
        pid = _probe_of(measured[edit], trait) if r1 is not None else _probe_of(base, trait)
        if what == "pitch":
            name, expected = f"pitch {amount:+g} st on {clip.key}", f"median F0 {amount:+g} st"
        elif what == "tempo":
            name, expected = (f"tempo ×{amount:g} on {clip.key}",
                              f"pace value ×{amount:g} ({'up' if amount > 1 else 'down'})")
        else:
            name, expected = f"gain {amount:+g} dB on {clip.key}", f"loudness {amount:+g} LU"
        if v0 is None or v1 is None or (what != "gain" and min(v0, v1) <= 0):
            bad = r1 if v1 is None else r0
            out.append(CanaryCheck(
                name=name, trait=trait, instrument=pid, clip=clip.key, expected=expected,
                measured=None, passed=False,
                message=(f"{pid} {_why_unmeasured(bad)} on the clean canary {clip.key!r} "
                         f"({'edited' if bad is r1 else 'base'} clip); a probe that cannot "
                         "measure a clear recording is broken or misconfigured")))
            continue
        if what == "pitch":
            change, known, unit = 12.0 * math.log2(v1 / v0), amount, "st"
            ok = lo <= change / known <= hi
        elif what == "tempo":
            change, known, unit = math.log(v1 / v0), math.log(amount), ""
            ok = lo <= change / known <= hi
        else:
            change, known, unit = v1 - v0, amount, "LU"
            ok = abs(change - known) <= LOUDNESS_TOLERANCE_LU
        shown = (f"×{v1 / v0:.3f}" if what == "tempo" else f"{change:+.2f} {unit}")
        direction_ok = change * known > 0
        if ok:
            msg = f"{pid} moved {shown} (expected {expected})"
        elif not direction_ok:
            msg = (f"{pid} moved the wrong way on {clip.key!r}: {expected} gave {shown} "
                   f"({v0:.4g} → {v1:.4g} {r0.unit if r0 else ''}); check the probe's "
                   "measurement and units")
        else:
            msg = (f"{pid} moved {shown} on {clip.key!r} where {expected} was expected "
                   f"({v0:.4g} → {v1:.4g}); the probe is too insensitive or saturates")
        out.append(CanaryCheck(
            name=name, trait=trait, instrument=pid, clip=clip.key, expected=expected,
            measured=round(change if what != "tempo" else v1 / v0, 6), passed=ok,
            message=msg, detail={"base": v0, "edited": v1}))
    return out


def _probability(r: ProbeResult) -> float | None:
    probs = r.detail.get("probabilities") if isinstance(r.detail, Mapping) else None
    if isinstance(probs, Mapping):
        p = probs.get(str(r.value)) if r.value is not None else None
        if p is None:
            p = probs.get(r.label)
        return float(p) if isinstance(p, int | float) else None
    return None


def _label_checks(clips: Sequence[CanaryClip], base: Mapping[str, Mapping[str, ProbeResult]],
                  traits: Sequence[str]) -> list[CanaryCheck]:
    out: list[CanaryCheck] = []
    if "gender" in traits:
        reads = {c.key: base[c.key].get("gender") for c in clips}
        all_swapped = all(
            (r := reads[c.key]) is not None and r.label != c.gender
            and r.label in ("male", "female") for c in clips) and len(
            {c.gender for c in clips}) > 1
        labels = {r.label for r in reads.values() if r is not None}
        for c in clips:
            r = reads[c.key]
            pid = r.probe if r is not None else "?"
            if r is None or r.value is None:
                out.append(CanaryCheck(
                    name=f"gender of {c.key}", trait="gender", instrument=pid, clip=c.key,
                    expected=c.gender, measured=None, passed=False,
                    message=f"{pid} {_why_unmeasured(r)} on the {c.gender} canary {c.key!r}"))
                continue
            p = _probability(r)
            ptxt = f" with p={p:.2f}" if p is not None else ""
            ok = r.label == c.gender
            if ok:
                msg = f"{pid} read {r.label}{ptxt}"
            elif all_swapped:
                msg = (f"{pid}: gender labels look swapped: the {c.gender} canary {c.key!r} "
                       f"read {r.label}{ptxt} (every canary read the opposite gender); "
                       "check the model's label order (id2label)")
            elif len(labels) == 1 and len(clips) > 1:
                msg = (f"{pid} answers {r.label!r} for every canary, the {c.gender} "
                       f"{c.key!r} included{ptxt}: it is not telling voices apart; check the "
                       "model files and its input (sample rate, scaling)")
            else:
                msg = f"{pid}: the {c.gender} canary {c.key!r} read {r.label}{ptxt}"
            out.append(CanaryCheck(
                name=f"gender of {c.key}", trait="gender", instrument=pid, clip=c.key,
                expected=c.gender, measured=r.label, passed=ok, message=msg,
                detail={"probability": p} if p is not None else {}))
    if "age" in traits:
        lo, hi = ADULT_AGE_RANGE
        for c in clips:
            r = base[c.key].get("age")
            pid = r.probe if r is not None else "?"
            v = _numeric(r)
            ok = v is not None and lo <= v <= hi
            msg = (f"{pid} put the adult canary {c.key!r} at {v:.0f} years" if v is not None
                   else f"{pid} {_why_unmeasured(r)} on {c.key!r}")
            if not ok and v is not None:
                msg += (f" (expected {lo:.0f}–{hi:.0f}); check the model's output scaling "
                        "(years = 100 × its output)")
            out.append(CanaryCheck(
                name=f"age of {c.key}", trait="age", instrument=pid, clip=c.key,
                expected=f"adult ({lo:.0f}–{hi:.0f} years)", measured=v, passed=ok,
                message=msg))
    if "emotion" in traits:
        for c in clips:
            r = base[c.key].get("emotion")
            pid = r.probe if r is not None else "?"
            label = r.label if r is not None else None
            ok = label in READ_SPEECH_EMOTIONS
            out.append(CanaryCheck(
                name=f"emotion of {c.key}", trait="emotion", instrument=pid, clip=c.key,
                expected=" or ".join(READ_SPEECH_EMOTIONS), measured=label, passed=ok,
                required=False,
                message=f"{pid} read {label} on calm read speech (advisory)"))
    if "accent" in traits:
        for c in clips:
            r = base[c.key].get("accent")
            pid = r.probe if r is not None else "?"
            label = r.label if r is not None else None
            out.append(CanaryCheck(
                name=f"accent of {c.key}", trait="accent", instrument=pid, clip=c.key,
                expected=c.accent, measured=label, passed=label == c.accent, required=False,
                message=f"{pid} read {label} for a speaker labelled {c.accent} (advisory)"))
    return out


# ------------------------------------------------------------------ judge


class _CountingBackend:
    """Wraps a judge backend and counts its calls (every answer, valid or not)."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.model: str = str(inner.model)
        self.calls = 0

    def complete(self, request: Any) -> Any:
        self.calls += 1
        return self.inner.complete(request)

    def __getattr__(self, name: str) -> Any:  # record_failure, usage, ... go to the backend
        return getattr(self.inner, name)


def _judge_checks(judge: Judge, cache: Any) -> tuple[list[CanaryCheck], float, float, float,
                                                     bool]:
    """Naturalness pairs in both orders: checks, flip rate, unparsable rate, clean rate,
    all cached."""
    import hashlib

    from .cache import cache_key
    from .judge import Judge as JudgeCls

    counting = _CountingBackend(judge.backend)
    probe_judge = JudgeCls(counting, registry=judge.registry,
                           max_invalid_retries=judge.max_invalid_retries,
                           temperature=judge.temperature, validate_audio=judge.validate_audio)
    model = judge.model
    inst = f"judge:{model}"
    texts = {c.key: c.text for c in canary_clips()}
    checks: list[CanaryCheck] = []
    answers = clean_wins = first_wins = degraded_wins = flips = pairs_both = 0
    calls = invalid = 0
    all_cached = True
    for key, how, clean, bad in judge_pairs():
        winners: dict[str, str | None] = {}
        for order in ("ab", "ba"):
            ukey = cache_key({
                "canary": CANARY_VERSION, "kind": "judge", "clean": hashlib.sha256(clean)
                .hexdigest(), "degraded": hashlib.sha256(bad).hexdigest(), "order": order,
                "model": model, "prompt_version": judge.prompt_version,
                "temperature": judge.temperature,
                "max_invalid_retries": judge.max_invalid_retries})
            hit = cache.get_json("verdicts", ukey) if cache is not None else None
            if isinstance(hit, Mapping):
                winners[order] = str(hit["winner"])
                calls += int(hit["calls"])
                invalid += int(hit["calls"]) - 1
                continue
            all_cached = False
            before = counting.calls
            try:
                sj = probe_judge.judge_once(
                    text=texts[key], instruction=JUDGE_INSTRUCTION, audio_a=clean,
                    audio_b=bad, dimension=NATURALNESS, order=order, vote=0,
                    category="everyday")
            except JudgeResponseError:
                used = counting.calls - before
                calls += used
                invalid += used
                winners[order] = None
                continue
            used = counting.calls - before
            calls += used
            invalid += used - 1
            winner = sj.judgements[NATURALNESS].winner
            winners[order] = winner
            if cache is not None:
                cache.put_json("verdicts", ukey, {"winner": winner, "calls": used})
        for order, w in winners.items():
            if w is None:
                continue
            answers += 1
            clean_wins += w == "a"
            degraded_wins += w == "b"
            first_wins += w == ("a" if order == "ab" else "b")
        both = [w for w in winners.values() if w is not None]
        if len(both) == 2:
            pairs_both += 1
            flips += both[0] != both[1]
        ok = all(w == "a" for w in winners.values()) and len(both) == 2
        shown = ", ".join(f"{o.upper()}: {('clean' if w == 'a' else 'degraded' if w == 'b' else w) if w else 'unparsable'}"  # noqa: E501
                          for o, w in winners.items())
        checks.append(CanaryCheck(
            name=f"naturalness: clean vs {how} ({key})", trait=NATURALNESS, instrument=inst,
            clip=key, expected="clean clip wins in both orders", measured=shown, passed=ok,
            message=f"judge {model} chose {shown} for clean vs {how} ({key})"))
    flip_rate = flips / pairs_both if pairs_both else 1.0
    unparsable = invalid / calls if calls else 0.0
    clean_rate = clean_wins / answers if answers else 0.0
    # Aggregate verdicts: these carry the diagnosis; the per-pair checks are advisory detail.
    if answers and first_wins / answers >= 0.9 and flip_rate > JUDGE_MAX_FLIP_RATE:
        why = (f"judge {model} looks position-biased: it chose the clip heard first in "
               f"{first_wins} of {answers} answers (order-flip rate {flip_rate:.2f}); use a "
               "stronger judge model, keep both orders (no --no-swap), or check the prompt")
    elif answers and degraded_wins > clean_wins:
        why = (f"judge {model} prefers the degraded clip: it chose the band-limited, clipped "
               f"or noisy version in {degraded_wins} of {answers} answers; check that the "
               "audio reaches the model and that the score scale is not inverted")
    else:
        why = (f"judge {model} chose the clean clip in {clean_wins} of {answers} answers "
               f"(needs ≥ {100 * JUDGE_MIN_CLEAN_RATE:.0f} %); it cannot hear these "
               "degradations reliably: use a stronger audio judge")
    checks = [CanaryCheck(c.name, c.trait, c.instrument, c.clip, c.expected, c.measured,
                          c.passed, False, c.message) for c in checks]
    checks.append(CanaryCheck(
        name="judge prefers the clean clip", trait=NATURALNESS, instrument=inst, clip="*",
        expected=f"≥ {100 * JUDGE_MIN_CLEAN_RATE:.0f} % of answers", measured=clean_rate,
        passed=clean_rate >= JUDGE_MIN_CLEAN_RATE and answers > 0,
        message=why if clean_rate < JUDGE_MIN_CLEAN_RATE or not answers else
        f"clean clip chosen in {clean_wins} of {answers} answers"))
    checks.append(CanaryCheck(
        name="judge order-flip rate", trait=NATURALNESS, instrument=inst, clip="*",
        expected=f"≤ {JUDGE_MAX_FLIP_RATE:.2f}", measured=flip_rate,
        passed=flip_rate <= JUDGE_MAX_FLIP_RATE,
        message=(why if first_wins / max(answers, 1) >= 0.9 else
                 f"judge {model} changed its winner with the presentation order in {flips} "
                 f"of {pairs_both} pairs (order-flip rate {flip_rate:.2f}, limit "
                 f"{JUDGE_MAX_FLIP_RATE:.2f}); its verdicts would mostly be ties")
        if flip_rate > JUDGE_MAX_FLIP_RATE else
        f"winner changed with the order in {flips} of {pairs_both} pairs"))
    checks.append(CanaryCheck(
        name="judge unparsable-answer rate", trait=NATURALNESS, instrument=inst, clip="*",
        expected=f"≤ {JUDGE_MAX_UNPARSABLE_RATE:.2f}", measured=unparsable,
        passed=unparsable <= JUDGE_MAX_UNPARSABLE_RATE,
        message=(f"judge {model} gave {invalid} unparsable answers in {calls} calls "
                 f"({unparsable:.2f}, limit {JUDGE_MAX_UNPARSABLE_RATE:.2f}); the run would "
                 "pay for retries and end incomplete: check the model supports JSON output")
        if unparsable > JUDGE_MAX_UNPARSABLE_RATE else
        f"{invalid} unparsable answers in {calls} calls"))
    return checks, flip_rate, unparsable, clean_rate, all_cached


# ------------------------------------------------------------------ entry point


def run_canaries(
    *,
    probes: ProbeSet | None,
    judge: Judge | None = None,
    cache: Any | None = None,
    registry: TraitRegistry = TRAITS,
    strict: bool = True,
    clock: Callable[[], float] = time.perf_counter,
) -> CanaryReport:
    """Check ``probes`` (a ProbeSet, or None) and ``judge`` (or None) on the known-answer
    canaries; a few seconds on CPU without a judge, 12 judge calls with one.

    ``cache``: a store with ``get_json``/``put_json`` (e.g. :class:`vocencebench.cache.Cache`):
    results are kept by clip sha256, probe ids and judge model/prompt version, so a rerun
    costs nothing (failed judge answers are not kept). ``registry``: the traits the requests
    are built from. ``strict=True`` raises :class:`~vocencebench.errors.CanaryError` (fatal,
    with the report attached) when a required check fails; ``strict=False`` returns the
    report either way. Instrument failures (a probe that crashes, a judge that cannot be
    reached) propagate as their own errors.
    """
    t0 = clock()
    clips = canary_clips()
    checks: list[CanaryCheck] = []
    instruments: list[str] = []
    untested: list[str] = []
    cached = True
    if probes is not None:
        instruments.extend(probes.ids)
        traits = probes.traits
        jobs: list[tuple[bytes, Item]] = []
        index: list[tuple[str, str]] = []
        for c in clips:
            for edit in ("base", *EDITS):
                jobs.append((edit_clip(c.key, edit), _item(c, edit, registry)))
                index.append((c.key, edit))
        results, all_hit = _measure_all(probes, jobs, cache)
        cached = cached and all_hit
        by_clip: dict[str, dict[str, dict[str, ProbeResult]]] = {}
        for (key, edit), res in zip(index, results, strict=True):
            by_clip.setdefault(key, {})[edit] = res
        for c in clips:
            checks.extend(_direction_checks(c, by_clip[c.key], traits))
        checks.extend(_label_checks(clips, {k: v["base"] for k, v in by_clip.items()}, traits))
        covered = {"pitch", "pace", "loudness", "gender", "age", "emotion", "accent"}
        untested.extend(t for t in traits if t not in covered)
    flip = unparsable = clean = None
    if judge is not None:
        instruments.append(f"judge:{judge.model}@{judge.prompt_version}")
        jchecks, flip, unparsable, clean, jc = _judge_checks(judge, cache)
        checks.extend(jchecks)
        cached = cached and jc
    if probes is None and judge is None:
        raise ConfigError("run_canaries needs probes, a judge, or both")
    required = [c for c in checks if c.required]
    accuracy = sum(c.passed for c in required) / len(required) if required else None
    report = CanaryReport(
        checks=tuple(checks), accuracy=accuracy, judge_order_flip_rate=flip,
        judge_unparsable_rate=unparsable, judge_clean_rate=clean,
        instruments=tuple(instruments), untested=tuple(untested), cached=cached,
        seconds=clock() - t0,
    )
    if strict and not report.passed:
        raise CanaryError(report.error_message(), report=report)
    return report


# ------------------------------------------------------------------ for multi-run commands


def preflight(*, probes: ProbeSet | None, judge: Judge | None, cache: Any | None,
              registry: TraitRegistry = TRAITS) -> dict[str, Any]:
    """The canaries of a command that runs many head-to-heads on the same instruments
    (``redteam``, ``leaderboard``): once, before anything is synthesised, through the
    preflight every run does (:func:`vocencebench.compare._run_canaries`), so the record is
    the one run.json keeps under ``"canaries"`` (``ran``, ``passed``, ``report``; or
    ``ran: False`` with ``unavailable`` when there is no instrument to check).

    An instrument that fails its checks, or cannot be checked (a probe that crashes on a
    canary, a judge that cannot be reached), raises :class:`~vocencebench.errors.CanaryError`
    (fatal) whose message is the stop reason a run would record: ``canaries: …``, naming the
    failed checks; its ``report`` is the failed :class:`CanaryReport` (None when the
    instrument crashed). A :class:`~vocencebench.errors.ConfigError` propagates as itself.
    """
    from ._util.failures import CANARIES, reason
    from .cache import NullCache
    from .compare import _run_canaries

    record: dict[str, Any] = {"ran": False}
    try:
        _run_canaries(probes, judge, cache if cache is not None else NullCache(), registry,
                      record)
    except ConfigError:
        raise
    except Exception as exc:  # what the engine's preflight turns into the stop reason
        raise CanaryError(reason(CANARIES, exc),
                          report=exc.report if isinstance(exc, CanaryError) else None) from exc
    return record


def skipped_record() -> dict[str, Any]:
    """The canary record of a run told to skip them (``--skip-canaries``, ``canaries=False``),
    as run.json has it."""
    return {"ran": False, "skipped": True}


def status_line(record: Mapping[str, Any]) -> str:
    """The status line of a canary record, worded as a run's (``canaries: PASSED — …``,
    ``CANARIES SKIPPED: …``, ``CANARIES NOT RUN: …``)."""
    from .compare import _canary_status

    return _canary_status(None if record.get("skipped") else record)
