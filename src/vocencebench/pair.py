"""One item, two clips → every dimension, the gate and the composite for both sides.

The data flow is one-directional: each clip is *analysed* on its own (decode, ASR gate,
probes: :func:`measure_clip`), the pair is *judged* (tone, naturalness: :func:`judge_pair`,
one call per job of :func:`judge_jobs`, read by :func:`read_verdicts`), and :func:`combine`
folds both into a :class:`PairResult` with one :class:`SampleScore` a side. These are the
per-item units of every run: the streaming pipeline (:mod:`vocencebench._pipeline`) runs them
in its stages, :func:`score_pair` runs them one after the other for one item.

Failure semantics (docs/methodology.md):

* a side whose *system* failed (raised, timed out, no audio, undecodable audio) scores
  S = 0 with the reason kept; the other side is scored on its own;
* when an *instrument* failed (a probe crashed, the transcriber or the judge failed, a speech
  service failed after its retries), or a dimension the run covers has no result on a side
  that produced audio, the item is *incomplete*: ``PairResult.incomplete`` says why, both
  samples have ``S = None``, and nothing about the item is decided;
* a sample with no scored dimension at all is an instrument failure, never S = 1.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Required, TypedDict, Unpack

from ._numbers import is_finite_number, is_gate_value
from ._util import failures as fail
from .audio import Clip
from .constants import RUBRIC_MAX
from .decide import composite, desirability
from .errors import ConfigError, VocenceError
from .schema import Item, ProbeResult, Record, SampleScore, Verdict
from .traits import NATURALNESS, TRAITS, TraitRegistry

if TYPE_CHECKING:
    from .audio import Audio
    from .judge import PairJudge
    from .probes.base import ProbeSet, ProbeSuite
    from .transcribe import Transcriber

__all__ = [
    "ClipAnalysis",
    "PairResult",
    "analyse_clip",
    "combine",
    "covered_dimensions",
    "judge_failure",
    "judge_jobs",
    "judge_pair",
    "measure_clip",
    "needs_judge",
    "read_verdicts",
    "score_pair",
]


@dataclass(frozen=True)
class ClipAnalysis(Record):
    """What was measured on one clip on its own.

    ``gate`` is 1/0, or None when no transcriber ran (gate OFF); ``wer`` a fraction;
    ``duration`` seconds; ``failure`` the *system's* failure (no audio, bad audio: S = 0);
    ``instrument_failure`` why an instrument could not measure the clip (transcriber or probe
    failed: the item is incomplete and a rerun retries it).
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
    instrument_failure: str | None = None

    @property
    def ok(self) -> bool:
        """True when the clip was measured: neither the system nor an instrument failed."""
        return self.failure is None and self.instrument_failure is None

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> ClipAnalysis:
        d = dict(data)
        d["probes"] = {k: ProbeResult.from_dict(v) for k, v in d.get("probes", {}).items()}
        d["notes"] = tuple(d.get("notes", ()))
        out = super().from_dict(d)
        # An edited run.json: the numbers the gate report and the summary show are checked.
        where = f"clip analysis {out.item!r}/{out.system!r}"
        if out.wer is not None and not (is_finite_number(out.wer) and out.wer >= 0):
            raise ConfigError(f"{where}: wer must be a number ≥ 0 or null, not {out.wer!r}")
        if out.duration is not None and not (is_finite_number(out.duration)
                                             and out.duration > 0):
            raise ConfigError(f"{where}: duration must be seconds > 0 or null, "
                              f"not {out.duration!r}")
        if not is_gate_value(out.gate):
            raise ConfigError(f"{where}: gate must be 0, 1 or null, not {out.gate!r}")
        return out


class ClipOptions(TypedDict, total=False):
    """The keyword arguments of :func:`analyse_clip`: those of :func:`measure_clip` (whose
    signature holds their defaults), to which it passes them on."""

    system: Required[str]
    probes: ProbeSuite | None
    transcriber: Transcriber | None
    failure: str | None


def analyse_clip(item: Item, wav: bytes | Clip | None, **options: Unpack[ClipOptions]
                 ) -> ClipAnalysis:
    """Decode (once), gate and probe one clip. Never raises for a bad clip or a failing
    instrument: the system's failure goes to ``failure``, an instrument's to
    ``instrument_failure``. Only a :class:`~vocencebench.errors.ConfigError` (a missing extra,
    a bad setting) propagates."""
    return measure_clip(item, wav, **options)[0]


def measure_clip(
    item: Item,
    wav: bytes | Clip | None,
    *,
    system: str,
    probes: ProbeSuite | None = None,
    transcriber: Transcriber | None = None,
    failure: str | None = None,
) -> tuple[ClipAnalysis, Audio | None]:
    """:func:`analyse_clip`, and the decoded audio when the clip decoded (for the stages that
    need its samples next in the same process)."""
    if wav is None or failure is not None:
        return ClipAnalysis(item.id, system,
                            failure=failure or fail.reason(fail.SYNTHESIS, "no audio")), None
    clip = wav if isinstance(wav, Clip) else Clip.from_bytes(bytes(wav),
                                                             name=f"{system}/{item.id}")
    try:
        audio = clip.audio()
    except ConfigError:
        raise
    except VocenceError as exc:
        return ClipAnalysis(item.id, system, sha256=clip.sha256,
                            failure=fail.reason(fail.AUDIO, exc)), None
    notes: list[str] = []
    if audio.mixed_down:
        notes.append(f"stereo mixed down to mono ({audio.channels} channels)")
    sha, duration = clip.sha256, audio.duration
    transcript = engine = None
    wer = gate = None
    if transcriber is not None:
        from .transcribe import score_transcript

        try:
            tr = transcriber(audio)
        except ConfigError:
            raise
        except Exception as exc:  # any crash of the ASR engine is the instrument's
            return ClipAnalysis(item.id, system, sha256=sha, duration=duration,
                                notes=tuple(notes),
                                instrument_failure=fail.reason(
                                    fail.TRANSCRIPTION, f"{system}: {fail.exc_text(exc)}")
                                ), audio
        res = score_transcript(item.text, tr)
        transcript, engine, wer, gate = tr.text, tr.engine, res.wer, res.gate
    results: dict[str, ProbeResult] = {}
    quality: dict[str, float] = {}
    if probes is not None:
        try:
            results = probes.measure(audio, item)
        except ConfigError:
            raise
        except Exception as exc:  # a probe crash is the instrument's, never the clip's
            return ClipAnalysis(item.id, system, sha256=sha, duration=duration,
                                transcript=transcript,
                                asr_engine=engine, wer=wer, gate=gate, notes=tuple(notes),
                                instrument_failure=fail.reason(
                                    fail.PROBES, f"{system}: {fail.exc_text(exc)}")), audio
        try:
            quality = dict(probes.diagnose(audio))
        except ConfigError:
            raise
        except Exception as exc:  # diagnostics are reported, never scored
            notes.append(fail.reason("quality diagnostics failed", exc))
    return ClipAnalysis(
        item.id, system, sha256=sha, duration=duration, transcript=transcript,
        asr_engine=engine, wer=wer,
        gate=gate, probes=results, quality=quality, notes=tuple(notes),
    ), audio


@dataclass(frozen=True)
class PairResult(Record):
    """Both sides of one item: scores, analyses, the judge's verdicts, and why dimensions
    were not scored (``dropped``). ``incomplete`` is why the item cannot be decided (an
    instrument failed), else None."""

    kind = "pair_result"

    item: Item
    a: SampleScore
    b: SampleScore
    analysis_a: ClipAnalysis
    analysis_b: ClipAnalysis
    verdicts: dict[str, Verdict] = field(default_factory=dict)
    dropped: dict[str, str] = field(default_factory=dict)
    incomplete: str | None = None

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
            incomplete=data.get("incomplete"),
        )


def covered_dimensions(
    probe_traits: Sequence[str], judged: bool, registry: TraitRegistry = TRAITS
) -> tuple[str, ...]:
    """The dimensions a run scores: the probe set's traits, plus the judged dimensions when
    a judge runs, in registry order (traits, then naturalness)."""
    want = set(probe_traits) | (set(registry.judged_dimensions()) if judged else set())
    return tuple(d for d in registry.dimensions() if d in want)


def _judged_d(dim: str, score: float, registry: TraitRegistry) -> float:
    return desirability(registry.get(dim), score) if dim != NATURALNESS else score / RUBRIC_MAX


def combine(
    item: Item,
    analysis_a: ClipAnalysis,
    analysis_b: ClipAnalysis,
    verdicts: Mapping[str, Verdict] | None = None,
    *,
    labels: tuple[str, str] = ("a", "b"),
    judge_failures: Mapping[str, str] | None = None,
    registry: TraitRegistry = TRAITS,
    dimensions: Sequence[str] | None = None,
    unjudged: bool = False,
) -> PairResult:
    """Fold two analyses and the verdicts into one :class:`PairResult` (pure).

    ``dimensions`` are the dimensions the run covers (:func:`covered_dimensions`); without
    it, every dimension measured or judged on either side, or whose judging failed. Judged
    dimensions are required only of a pair the judge had to see (:func:`needs_judge`): when
    one side has no clip the other is scored on its probe dimensions. ``judge_failures``
    maps a dimension to why the judge gave no verdict (prefixed ``judge: `` if it is not).
    ``unjudged``: the judge was never asked about this pair (the run stopped judging once its
    verdict was certain): each side that produced audio lists the judged dimensions it
    requires in ``SampleScore.unjudged`` and has no composite.
    """
    verdicts = dict(verdicts or {})
    jfail = {k: (v if v.startswith(f"{fail.JUDGE}: ") else fail.reason(fail.JUDGE, v))
             for k, v in (judge_failures or {}).items()}
    order = registry.dimensions()
    judged_dims = set(registry.judged_dimensions())
    if dimensions is None:
        seen = (set(analysis_a.probes) | set(analysis_b.probes) | set(verdicts) | set(jfail))
        dimensions = [d for d in order if d in seen]
    judged = needs_judge(analysis_a, analysis_b)
    required = [d for d in order if d in set(dimensions) and (judged or d not in judged_dims)]
    dropped: dict[str, str] = {}
    problems: list[str] = []
    for an in (analysis_a, analysis_b):
        if an.instrument_failure is not None:
            problems.append(an.instrument_failure)

    pending: dict[str, list[str]] = {"a": [], "b": []}

    def side_d(an: ClipAnalysis, side: str, label: str) -> dict[str, float]:
        d: dict[str, float] = {}
        if an.failure is not None:
            return d
        for dim in required:
            if dim in judged_dims and unjudged:
                pending[side].append(dim)
                continue
            if dim in judged_dims:
                v = verdicts.get(dim)
                if v is not None:
                    d[dim] = _judged_d(dim, v.score_a if side == "a" else v.score_b, registry)
                    continue
                why = jfail.get(dim) or fail.reason(fail.JUDGE, f"no verdict for {dim}")
            else:
                r = an.probes.get(dim)
                if r is not None:
                    d[dim] = float(r.d)
                    continue
                if an.instrument_failure is not None:
                    continue  # already the item's reason
                why = fail.reason(fail.PROBES, f"{label}: no result for {dim}")
            dropped.setdefault(dim, why)
            problems.append(why)
        if (not d and not pending[side] and an.instrument_failure is None and an.gate != 0
                and not any(dim in dropped for dim in required)):
            problems.append(fail.reason(
                fail.PROBES, f"{label}: no dimension was scored (no probe measured anything "
                "and no judge ran); an empty composite is not a score"))
        return d

    da = side_d(analysis_a, "a", labels[0])
    db = side_d(analysis_b, "b", labels[1])
    incomplete = problems[0] if problems else None

    def score(an: ClipAnalysis, d: dict[str, float], label: str, side: str) -> SampleScore:
        if incomplete is not None:
            return SampleScore(item.id, label, None, d, gate=an.gate, wer=an.wer,
                               failure=an.failure, incomplete=incomplete)
        if an.failure is not None:
            return SampleScore(item.id, label, 0.0, {}, gate=None, wer=None, failure=an.failure)
        if pending[side]:  # never judged: S is bounded by its known d's and gate, not known
            return SampleScore(item.id, label, None, d, gate=an.gate, wer=an.wer,
                               unjudged=tuple(pending[side]))
        return SampleScore(item.id, label, composite(d, an.gate), d,
                           gate=an.gate, wer=an.wer, failure=None)

    return PairResult(
        item=item,
        a=score(analysis_a, da, labels[0], "a"),
        b=score(analysis_b, db, labels[1], "b"),
        analysis_a=analysis_a,
        analysis_b=analysis_b,
        verdicts=verdicts,
        dropped=dropped,
        incomplete=incomplete,
    )


def needs_judge(analysis_a: ClipAnalysis, analysis_b: ClipAnalysis) -> bool:
    """Whether judging the pair can change a score: both clips were measured (no system or
    instrument failure on either) and at least one passes the gate."""
    if not (analysis_a.ok and analysis_b.ok):
        return False
    return not (analysis_a.gate == 0 and analysis_b.gate == 0)


def judge_jobs(registry: TraitRegistry, *, all_at_once: bool) -> list[tuple[str, ...]]:
    """The judge calls one pair needs: one per judged dimension of ``registry``, or one for
    all of them (``all_at_once``); each is the tuple of dimensions it scores."""
    dims = registry.judged_dimensions()
    return [tuple(dims)] if all_at_once else [(d,) for d in dims]


def judge_pair(
    judge: PairJudge,
    item: Item,
    clip_a: Clip,
    clip_b: Clip,
    dimensions: tuple[str, ...],
    *,
    all_at_once: bool,
    consistent: bool,
    votes: int,
) -> Mapping[str, Verdict]:
    """The judge's verdicts on one pair: one dimension (:meth:`Judge.compare`) or every
    judged dimension in one upload (``all_at_once``: :meth:`Judge.compare_all`)."""
    kw: dict[str, Any] = dict(text=item.text, instruction=item.instruction, audio_a=clip_a,
                              audio_b=clip_b, consistent=consistent, votes=votes,
                              category=item.category)
    if all_at_once:
        out: Mapping[str, Verdict] = judge.compare_all(dimensions=list(dimensions),
                                                       all_at_once=True, **kw)
        return out
    return {dimensions[0]: judge.compare(dimension=dimensions[0], **kw)}


def read_verdicts(dimensions: Sequence[str], got: Mapping[str, Any]
                  ) -> tuple[dict[str, Verdict], dict[str, str]]:
    """(the verdicts, why the others are missing) of one :func:`judge_pair` answer for the
    ``dimensions`` it was asked: anything but a :class:`Verdict` is the judge's failure."""
    verdicts: dict[str, Verdict] = {}
    failures: dict[str, str] = {}
    for d in dimensions:
        v = got.get(d)
        if isinstance(v, Verdict):
            verdicts[d] = v
        else:
            failures[d] = fail.reason(fail.JUDGE, f"{d}: the judge returned no verdict")
    return verdicts, failures


def judge_failure(dimensions: Sequence[str], exc: BaseException) -> str:
    """Why a :func:`judge_pair` call for ``dimensions`` gave no verdicts (it raised ``exc``)."""
    return fail.reason(fail.JUDGE, f"{'+'.join(dimensions)}: {fail.exc_text(exc)}")


def score_pair(
    item: Item,
    wav_a: bytes | Clip | None,
    wav_b: bytes | Clip | None,
    *,
    probes: ProbeSet | None,
    transcriber: Transcriber | None = None,
    judge: Any = None,
    labels: tuple[str, str] = ("a", "b"),
    consistent: bool = True,
    votes: int = 1,
    registry: TraitRegistry = TRAITS,
) -> PairResult:
    """Score one item's pair of clips on every dimension (no cache, in this process): the
    units of a run (:func:`measure_clip`, :func:`judge_pair`, :func:`combine`) one after the
    other, the judge asked one dimension per call."""
    clip_a = wav_a if wav_a is None or isinstance(wav_a, Clip) else Clip.from_bytes(wav_a)
    clip_b = wav_b if wav_b is None or isinstance(wav_b, Clip) else Clip.from_bytes(wav_b)
    an_a = measure_clip(item, clip_a, system=labels[0], probes=probes,
                        transcriber=transcriber)[0]
    an_b = measure_clip(item, clip_b, system=labels[1], probes=probes,
                        transcriber=transcriber)[0]
    verdicts: dict[str, Verdict] = {}
    failures: dict[str, str] = {}
    if judge is not None and clip_a is not None and clip_b is not None \
            and needs_judge(an_a, an_b):
        for dims in judge_jobs(registry, all_at_once=False):
            try:
                got = judge_pair(judge, item, clip_a, clip_b, dims, all_at_once=False,
                                 consistent=consistent, votes=votes)
            except ConfigError:
                raise
            except Exception as exc:  # the judge's failure, never the systems'
                failures.update(dict.fromkeys(dims, judge_failure(dims, exc)))
                continue
            ok, missing = read_verdicts(dims, got)
            verdicts.update(ok)
            failures.update(missing)
    dims_run = covered_dimensions(probes.traits if probes is not None else (),
                                  judge is not None, registry)
    return combine(item, an_a, an_b, verdicts, labels=labels, judge_failures=failures,
                   registry=registry, dimensions=dims_run)
