"""One item, two clips → every dimension, the gate and the composite for both sides.

The data flow is one-directional: each clip is *analysed* on its own (decode, ASR gate,
probes: :func:`analyse_clip`), the pair is *judged* (tone, naturalness), and
:func:`combine` folds both into a :class:`PairResult` with one :class:`SampleScore` a side.
A dimension scored for only one side of a pair is dropped from both (a duel compares like
with like). A side whose system failed (raised, timed out, undecodable audio) scores S = 0
with the reason kept; the other side is then scored on its own dimensions.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from .decide import composite, desirability
from .errors import VocenceError
from .schema import Item, ProbeResult, Record, SampleScore, Verdict
from .traits import NATURALNESS, TRAITS, TraitRegistry

if TYPE_CHECKING:
    from .probes.base import ProbeSet
    from .transcribe import Transcriber

__all__ = ["ClipAnalysis", "PairResult", "analyse_clip", "combine", "score_pair"]


@dataclass(frozen=True)
class ClipAnalysis(Record):
    """What was measured on one clip on its own.

    ``gate`` is 1/0, or None when no transcriber ran (gate OFF); ``wer`` a fraction;
    ``duration`` seconds; ``failure`` why there is nothing to measure (no audio, bad audio).
    """

    kind = "clip_analysis"

    item: str
    system: str
    sha256: str | None = None
    duration: float | None = None
    failure: str | None = None
    transcript: str | None = None
    asr_engine: str | None = None
    wer: float | None = None
    gate: int | None = None
    probes: dict[str, ProbeResult] = field(default_factory=dict)
    quality: dict[str, float] = field(default_factory=dict)
    notes: tuple[str, ...] = ()

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> ClipAnalysis:
        d = dict(data)
        d["probes"] = {k: ProbeResult.from_dict(v) for k, v in d.get("probes", {}).items()}
        d["notes"] = tuple(d.get("notes", ()))
        return super().from_dict(d)


def analyse_clip(
    item: Item,
    wav: bytes | None,
    *,
    system: str,
    probes: ProbeSet | None = None,
    transcriber: Transcriber | None = None,
    failure: str | None = None,
) -> ClipAnalysis:
    """Decode, gate and probe one clip. Never raises for a bad clip: the failure is kept."""
    from .audio import load_audio

    if wav is None or failure is not None:
        return ClipAnalysis(item.id, system, failure=failure or "no audio")
    try:
        audio = load_audio(wav, name=f"{system}/{item.id}")
    except VocenceError as exc:
        return ClipAnalysis(item.id, system, failure=f"audio: {exc}")
    notes: list[str] = []
    if audio.mixed_down:
        notes.append(f"stereo mixed down to mono ({audio.channels} channels)")
    transcript = engine = None
    wer = gate = None
    if transcriber is not None:
        from .transcribe import score_transcript

        try:
            tr = transcriber(audio)
        except VocenceError as exc:
            return ClipAnalysis(item.id, system, sha256=audio.sha256, duration=audio.duration,
                                failure=f"transcription: {exc}")
        res = score_transcript(item.text, tr)
        transcript, engine, wer, gate = tr.text, tr.engine, res.wer, res.gate
    results: dict[str, ProbeResult] = {}
    quality: dict[str, float] = {}
    if probes is not None:
        try:
            results = probes.measure(audio, item)
        except VocenceError as exc:
            notes.append(f"probes failed: {exc}")
        try:
            quality = dict(probes.diagnose(audio))
        except VocenceError as exc:
            notes.append(f"quality diagnostics failed: {exc}")
    return ClipAnalysis(
        item.id, system, sha256=audio.sha256, duration=audio.duration,
        transcript=transcript, asr_engine=engine, wer=wer, gate=gate,
        probes=results, quality=quality, notes=tuple(notes),
    )


@dataclass(frozen=True)
class PairResult(Record):
    """Both sides of one item: scores, analyses, the judge's verdicts, what was dropped."""

    kind = "pair_result"

    item: Item
    a: SampleScore
    b: SampleScore
    analysis_a: ClipAnalysis
    analysis_b: ClipAnalysis
    verdicts: dict[str, Verdict] = field(default_factory=dict)
    dropped: dict[str, str] = field(default_factory=dict)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> PairResult:
        return cls(
            item=Item.from_dict(data["item"]),
            a=SampleScore.from_dict(data["a"]),
            b=SampleScore.from_dict(data["b"]),
            analysis_a=ClipAnalysis.from_dict(data["analysis_a"]),
            analysis_b=ClipAnalysis.from_dict(data["analysis_b"]),
            verdicts={k: Verdict.from_dict(v) for k, v in data.get("verdicts", {}).items()},
            dropped=dict(data.get("dropped", {})),
        )


def _side_dims(
    item: Item, an: ClipAnalysis, verdicts: Mapping[str, Verdict], side: str,
    registry: TraitRegistry,
) -> dict[str, float]:
    d: dict[str, float] = {}
    for trait, res in an.probes.items():
        d[trait] = float(res.d)
    for dim, v in verdicts.items():
        score = v.score_a if side == "a" else v.score_b
        name = dim if dim == NATURALNESS else registry.get(dim).name
        d[name] = desirability(registry.get(dim), score) if dim != NATURALNESS else score / 3.0
    return d


def combine(
    item: Item,
    analysis_a: ClipAnalysis,
    analysis_b: ClipAnalysis,
    verdicts: Mapping[str, Verdict] | None = None,
    *,
    labels: tuple[str, str] = ("a", "b"),
    judge_failures: Mapping[str, str] | None = None,
    registry: TraitRegistry = TRAITS,
) -> PairResult:
    """Fold two analyses and the verdicts into one :class:`PairResult` (pure)."""
    verdicts = dict(verdicts or {})
    dropped: dict[str, str] = {k: f"judge failed: {v}" for k, v in (judge_failures or {}).items()}
    da = _side_dims(item, analysis_a, verdicts, "a", registry)
    db = _side_dims(item, analysis_b, verdicts, "b", registry)
    order = registry.dimensions()
    if analysis_a.failure is None and analysis_b.failure is None:
        for dim in sorted(set(da) ^ set(db), key=lambda x: order.index(x) if x in order else 99):
            side = labels[0] if dim in da else labels[1]
            dropped[dim] = f"scored only for {side}"
        common = [x for x in order if x in da and x in db]
        da = {k: da[k] for k in common}
        db = {k: db[k] for k in common}

    def score(an: ClipAnalysis, d: dict[str, float], label: str) -> SampleScore:
        if an.failure is not None:
            return SampleScore(item.id, label, 0.0, {}, gate=None, wer=None, failure=an.failure)
        ordered = {k: d[k] for k in order if k in d}
        return SampleScore(item.id, label, composite(ordered, an.gate), ordered,
                           gate=an.gate, wer=an.wer, failure=None)

    return PairResult(
        item=item,
        a=score(analysis_a, da, labels[0]),
        b=score(analysis_b, db, labels[1]),
        analysis_a=analysis_a,
        analysis_b=analysis_b,
        verdicts=verdicts,
        dropped=dropped,
    )


def needs_judge(analysis_a: ClipAnalysis, analysis_b: ClipAnalysis) -> bool:
    """Whether judging the pair can change a score: both clips exist and one passes the gate."""
    if analysis_a.failure is not None or analysis_b.failure is not None:
        return False
    return not (analysis_a.gate == 0 and analysis_b.gate == 0)


def score_pair(
    item: Item,
    wav_a: bytes | None,
    wav_b: bytes | None,
    *,
    probes: ProbeSet | None,
    transcriber: Transcriber | None = None,
    judge: Any = None,
    labels: tuple[str, str] = ("a", "b"),
    consistent: bool = True,
    votes: int = 1,
    registry: TraitRegistry = TRAITS,
) -> PairResult:
    """Score one item's pair of clips on every dimension (no cache, in this process)."""
    an_a = analyse_clip(item, wav_a, system=labels[0], probes=probes, transcriber=transcriber)
    an_b = analyse_clip(item, wav_b, system=labels[1], probes=probes, transcriber=transcriber)
    verdicts: dict[str, Verdict] = {}
    failures: dict[str, str] = {}
    if judge is not None and wav_a is not None and wav_b is not None and needs_judge(an_a, an_b):
        from .errors import JudgeError

        for dim in registry.judged_dimensions():
            try:
                verdicts[dim] = judge.compare(
                    text=item.text, instruction=item.instruction, audio_a=wav_a, audio_b=wav_b,
                    dimension=dim, consistent=consistent, votes=votes, category=item.category,
                )
            except JudgeError as exc:
                failures[dim] = str(exc)
    return combine(item, an_a, an_b, verdicts, labels=labels, judge_failures=failures,
                   registry=registry)
