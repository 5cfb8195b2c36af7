"""combine(): the pure fold of two clip analyses and the judge's verdicts."""

from __future__ import annotations

import math
from pathlib import Path

from vocencebench.decide import composite
from vocencebench.pair import ClipAnalysis, PairResult, combine, needs_judge
from vocencebench.schema import Item, ProbeResult, Verdict

TRAITS = {"gender": "female", "age": "30", "pace": "fast", "pitch": "high", "loudness": "loud",
          "emotion": "happy", "accent": "British", "tone": "warm"}
ITEM = Item("vb-00001", "brief", "Hello there, how are you?", TRAITS, 1)


def _pr(trait: str, d: float) -> ProbeResult:
    return ProbeResult(trait, 1.0, "x", "lab", d, "p@1")


def _an(system: str, probes: dict[str, float], gate: int | None = 1,
        failure: str | None = None) -> ClipAnalysis:
    return ClipAnalysis(ITEM.id, system, sha256=None if failure else "0" * 64,
                        failure=failure, gate=gate, wer=0.0 if gate is not None else None,
                        probes={t: _pr(t, d) for t, d in probes.items()})


def _verdict(dim: str, a: float, b: float) -> Verdict:
    return Verdict("b" if b > a else "a" if a > b else "tie", a, b, "ra", "rb", 0.8, True, dim,
                   "m", "v1")


def test_common_dimensions_and_judge_scores() -> None:
    a = _an("A", {"pitch": 1.0, "pace": 0.5, "gender": 1.0})
    b = _an("B", {"pitch": 0.5, "pace": 1.0, "gender": 1.0})
    v = {"tone": _verdict("tone", 3, 1.5), "naturalness": _verdict("naturalness", 2, 3)}
    p = combine(ITEM, a, b, v, labels=("A", "B"))
    assert list(p.a.d) == ["gender", "pace", "pitch", "tone", "naturalness"]
    assert p.a.d["tone"] == 1.0 and p.b.d["tone"] == 0.5
    assert math.isclose(p.b.d["naturalness"], 1.0)
    assert composite(list(p.a.d.values()), 1) == p.a.S
    assert p.dropped == {}


def test_a_covered_dimension_missing_on_one_side_makes_the_item_incomplete() -> None:
    a = _an("A", {"pitch": 1.0, "pace": 0.0})
    b = _an("B", {"pitch": 1.0})  # no pace result on B: an instrument failure, never an escape
    p = combine(ITEM, a, b, labels=("A", "B"))
    assert p.incomplete == "probes: B: no result for pace"
    assert p.a.S is None and p.b.S is None
    assert p.a.incomplete == p.b.incomplete == p.incomplete
    assert p.dropped == {"pace": "probes: B: no result for pace"}
    # With the run's covered dimensions given, a dimension neither side has is missing too.
    q = combine(ITEM, _an("A", {"pitch": 1.0}), _an("B", {"pitch": 0.5}), labels=("A", "B"),
                dimensions=("pitch", "pace"))
    assert q.incomplete is not None and "pace" in q.incomplete


def test_an_empty_composite_is_an_instrument_failure_never_one() -> None:
    p = combine(ITEM, _an("A", {}), _an("B", {}), labels=("A", "B"), dimensions=())
    assert p.incomplete is not None and p.incomplete.startswith("probes: ")
    assert "empty composite" in p.incomplete
    assert p.a.S is None and p.b.S is None


def test_an_instrument_failure_on_one_side_makes_the_item_incomplete() -> None:
    a = _an("A", {"pitch": 1.0})
    b = ClipAnalysis(ITEM.id, "B", sha256="1" * 64, instrument_failure="transcription: boom")
    p = combine(ITEM, a, b, labels=("A", "B"), dimensions=("pitch",))
    assert p.incomplete == "transcription: boom"
    assert p.a.S is None and p.a.d == {"pitch": 1.0}
    assert not needs_judge(a, b)


def test_gate_zero_and_failure_zero_the_sample() -> None:
    a = _an("A", {"pitch": 1.0}, gate=0)
    b = _an("B", {}, failure="synthesis: boom")
    p = combine(ITEM, a, b, labels=("A", "B"))
    assert p.a.S == 0.0 and p.a.gate == 0
    assert p.b.S == 0.0 and p.b.failure == "synthesis: boom" and p.b.d == {}
    assert not needs_judge(a, b)
    assert not needs_judge(_an("A", {}, gate=0), _an("B", {}, gate=0))
    assert needs_judge(_an("A", {}, gate=0), _an("B", {}, gate=1))


def test_judge_failure_makes_the_item_incomplete() -> None:
    a = _an("A", {"pitch": 1.0})
    b = _an("B", {"pitch": 0.5})
    p = combine(ITEM, a, b, {"naturalness": _verdict("naturalness", 2, 2)}, labels=("A", "B"),
                judge_failures={"tone": "HTTP 500"},
                dimensions=("pitch", "tone", "naturalness"))
    assert "tone" not in p.a.d
    assert p.dropped["tone"] == "judge: HTTP 500" == p.incomplete
    assert p.a.S is None


def test_a_system_failure_leaves_the_other_side_scored_on_its_probes() -> None:
    a = _an("A", {"pitch": 1.0, "pace": 0.5})
    b = _an("B", {}, failure="synthesis: boom")
    p = combine(ITEM, a, b, {}, labels=("A", "B"),
                dimensions=("pace", "pitch", "tone", "naturalness"))
    assert p.incomplete is None  # the judge had nothing to compare: its dimensions are moot
    assert p.a.d == {"pace": 0.5, "pitch": 1.0} and composite([0.5, 1.0], 1) == p.a.S
    assert p.b.S == 0.0


def test_pair_result_round_trips() -> None:
    a = _an("A", {"pitch": 1.0})
    b = _an("B", {"pitch": 0.5})
    p = combine(ITEM, a, b, {"tone": _verdict("tone", 2, 1)}, labels=("A", "B"))
    q = PairResult.from_json(p.to_json())
    assert q == p


def _scripted_judge(*, fail_on: str | None = None) -> object:
    """A deterministic judge (scores from the clips' bytes); ``fail_on`` a dimension whose
    calls raise."""
    import hashlib

    from vocencebench.judge import Judge, ScriptedBackend

    def answer(request: object) -> dict[str, object]:
        if fail_on is not None and fail_on in repr(request):
            raise RuntimeError("scripted outage")
        first, second = (a.data for a in request.audio())  # type: ignore[attr-defined]
        sa = hashlib.sha256(first + second).digest()[0] % 4
        sb = hashlib.sha256(second + first).digest()[0] % 4
        return {"analysis_a": "a", "analysis_b": "b", "score_a": sa, "score_b": sb,
                "winner": "A" if sa > sb else "B" if sb > sa else "tie", "confidence": 0.8}

    return Judge(ScriptedBackend(answer, model="scripted-pair"), validate_audio=False)


def test_score_pair_is_the_engines_per_item_path() -> None:
    """score_pair and a run over the same clips (compare_models) give the same PairResult:
    one per-item path (measure the clips, judge the pair, combine)."""
    import vocencebench as vb
    from vocencebench.adapters import EspeakSystem

    items = vb.load_benchmark("benchmark_v1")[:3]
    flat, follow = EspeakSystem("espeak-flat"), EspeakSystem("espeak-follow")
    clips_a = [flat(it.text, it.instruction) for it in items]
    clips_b = [follow(it.text, it.instruction) for it in items]
    clips_b[2] = None  # a system failure on one side: judged dimensions are moot
    probes = vb.default_probes()
    for judge in (None, _scripted_judge()):
        run = vb.compare_models(items, clips_a, clips_b, judge, probes=probes,
                                labels=("flat", "follow"), workers=1, progress=False,
                                canaries=False)
        for it, wa, wb, pair in zip(items, clips_a, clips_b, run.pairs, strict=True):
            one = vb.score_pair(it, wa, wb, probes=probes, judge=judge,
                                labels=("flat", "follow"))
            assert one == pair


def test_score_pair_records_a_failing_judge_dimension_as_the_engine_does() -> None:
    import vocencebench as vb
    from vocencebench.adapters import EspeakSystem

    it = vb.load_benchmark("benchmark_v1")[0]
    wa = EspeakSystem("espeak-flat")(it.text, it.instruction)
    wb = EspeakSystem("espeak-follow")(it.text, it.instruction)
    judge = _scripted_judge(fail_on="naturalness")
    one = vb.score_pair(it, wa, wb, probes=vb.default_probes(), judge=judge)
    run = vb.compare_models([it], [wa], [wb], judge, probes=vb.default_probes(), workers=1,
                            progress=False, canaries=False)
    assert one.incomplete is not None and one.incomplete.startswith("judge: naturalness: ")
    assert one == run.pairs[0]


def test_every_shape_combine_writes_is_read_back_by_decide(tmp_path: Path) -> None:
    """The dimension check of a scores file (both clips of an item on the same dimensions)
    must accept every row shape the pipeline writes: judged items, an item the gate vetoed on
    both sides (neither judged), one side failed (the other on its probe dimensions)."""
    from vocencebench.scores import decide_scores, write_scores

    dims = ("pitch", "pace", "tone", "naturalness")
    v = {"tone": _verdict("tone", 3, 1), "naturalness": _verdict("naturalness", 2, 3)}
    pairs = []
    for k, (a, b, verdicts) in enumerate([
        (_an("A", {"pitch": 1.0, "pace": 0.5}), _an("B", {"pitch": 0.5, "pace": 1.0}), v),
        (_an("A", {"pitch": 1.0, "pace": 0.5}, gate=0), _an("B", {"pitch": 1.0, "pace": 1.0},
                                                              gate=0), {}),
        (_an("A", {}, failure="synthesis: boom"), _an("B", {"pitch": 1.0, "pace": 1.0}), {}),
        (_an("A", {"pitch": 0.0, "pace": 0.5}, gate=0), _an("B", {"pitch": 1.0, "pace": 1.0}),
         v),
    ]):
        item = Item(f"vb-{k:05d}", ITEM.instruction, ITEM.text, TRAITS, 1)
        pairs.append(combine(item, a, b, verdicts, labels=("A", "B"), dimensions=dims))
    assert not any(p.incomplete for p in pairs)
    path = tmp_path / "scores.jsonl"
    write_scores([s for p in pairs for s in (p.a, p.b)], path)
    assert decide_scores(path).n == 4
