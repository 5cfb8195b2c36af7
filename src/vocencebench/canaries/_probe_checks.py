"""The probes on the canaries: every clip and edit measured (cached), then the directional
checks (pitch, pace, loudness) and the label checks (gender, age; emotion and accent
advisory)."""

from __future__ import annotations

import hashlib
import math
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from .._numbers import is_real_number
from ..cache import cache_key
from ..probes.base import suite_identity
from ..schema import Item, ProbeResult
from ..traits import TraitRegistry
from ._clips import CanaryClip
from ._constants import (
    ADULT_AGE_RANGE,
    CANARY_VERSION,
    DIRECTION_TOLERANCE,
    EDITS,
    LOUDNESS_TOLERANCE_LU,
    READ_SPEECH_EMOTIONS,
)
from ._report import CanaryCheck

if TYPE_CHECKING:
    from ..audio import Audio
    from ..probes import ProbeSet

__all__ = ["canary_item", "direction_checks", "label_checks", "measure_all"]


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


def canary_item(clip: CanaryClip, edit: str, registry: TraitRegistry) -> Item:
    return Item(id=f"canary-{clip.key}-{edit}", instruction="(known-answer canary)",
                text=clip.text, traits=_request(clip, registry), difficulty=0)


def _probe_key(sha: str, probes: ProbeSet, item: Item) -> str:
    return cache_key({"canary": CANARY_VERSION, "audio": sha, **suite_identity(probes),
                      "request": item.traits, "text": item.text})


def measure_all(probes: ProbeSet, jobs: list[tuple[bytes, Item]], cache: Any
                 ) -> tuple[list[dict[str, ProbeResult]], bool]:
    """Probe results per job (from the cache when present); all cached?"""
    from ..audio import load_audio
    from ..probes.classifiers import measure_batch

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


def direction_checks(clip: CanaryClip, measured: Mapping[str, Mapping[str, ProbeResult]],
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
        return float(p) if is_real_number(p) else None
    return None


def label_checks(clips: Sequence[CanaryClip], base: Mapping[str, Mapping[str, ProbeResult]],
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
