"""The judge's own behaviour in every judged report (vocencebench.judge_audit and the report's
judge section), and the agreement statistics of ``judge agree``."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import vocencebench as vb
from judge_fakes import PitchProbe, Tone, answer
from vocencebench.judge import UNPARSABLE_REASON, Judge, JudgeRequest, ScriptedBackend
from vocencebench.judge_audit import agreement, cohen_kappa, judge_behaviour
from vocencebench.pair import ClipAnalysis, PairResult
from vocencebench.probes import ProbeSet
from vocencebench.result import load_run
from vocencebench.schema import Item, SampleScore, Verdict

ITEMS = vb.load_benchmark("benchmark_v1")[:12]
SYS_A, SYS_B = Tone(220.0, "a"), Tone(330.0, "b")


def _duel(respond: Any, *, votes: int = 1, consistent: bool = True) -> vb.Head2Head:
    judge = Judge(ScriptedBackend(respond), validate_audio=False)
    return vb.benchmark(ITEMS, SYS_A, SYS_B, judge, probes=ProbeSet([PitchProbe()]),
                        labels=("low", "high"), progress=False, canaries=False, votes=votes,
                        consistent=consistent)


def _first_clip(request: JudgeRequest) -> dict[str, Any]:
    return answer("A", 2, 1)


@pytest.mark.slow
def test_a_judge_that_always_prefers_the_first_clip_is_warned_on_every_dimension(
        tmp_path: Path) -> None:
    h = _duel(_first_clip)
    dims = h.registry.judged_dimensions()
    summary = h.summary()
    for dim in dims:
        line = f"WARNING: judge position bias on {dim}: the winner changed with the " \
               "presentation order in 100 % of 12 pairs"
        assert line in summary
    h.save(tmp_path)
    md = (tmp_path / "report.md").read_text(encoding="utf-8")
    page = (tmp_path / "report.html").read_text(encoding="utf-8")
    run = json.loads((tmp_path / "run.json").read_text(encoding="utf-8"))
    assert all(f"position bias on {d}" in md and f"position bias on {d}" in page for d in dims)
    jb = run["judge_behaviour"]
    assert len(jb["warnings"]) == len(dims)
    for row in jb["dimensions"]:
        assert row["swap_disagreement"] == 1.0 and row["first_preferred"] == 1.0
        assert row["ties"] == 0.0 and row["confidence"] == pytest.approx(0.8)
    for row in jb["systems"]:  # every system wins exactly when it is heard first
        assert row["won_first"] == 1.0 and row["won_second"] == 0.0
    # The record survives a reload: the saved verdicts keep every single judgement.
    again = load_run(tmp_path)
    assert again.pairs[0].verdicts[dims[0]].answers == h.pairs[0].verdicts[dims[0]].answers


@pytest.mark.slow
def test_a_judge_that_hears_the_clips_gets_no_warning() -> None:
    hi = {bytes(SYS_B(it.text, it.instruction)) for it in ITEMS}

    def respond(request: JudgeRequest) -> dict[str, Any]:
        first = request.audio()[0].data in hi
        return answer("A" if first else "B", 3 if first else 1, 1 if first else 3)

    h = _duel(respond, votes=3)
    summary = h.summary()
    assert "WARNING: judge position bias" not in summary
    assert "judge behaviour (how far its verdicts can be trusted):" in summary
    from vocencebench._report.judge import behaviour

    b = behaviour(h)
    assert b is not None and not b.warnings
    for r in b.overall():
        assert r.swap_disagreement == 0.0 and r.vote_disagreement == 0.0
        assert r.vote_groups == 12 * 2 and r.answers == 12 * 2 * 3
        assert r.first_preferred == 0.5
    high = [r for r in b.per_system() if r.system == "high"]
    assert high and all(r.won_first == 1.0 and r.won_second == 1.0 for r in high)


def _verdict(dim: str, answers: list[tuple[str, int, str, float]]) -> Verdict:
    rows = tuple({"order": o, "vote": v, "winner": w, "score_a": 1, "score_b": 1,
                  "confidence": c} for o, v, w, c in answers)
    return Verdict("tie", 1.0, 1.0, "", "", 0.5, True, dim, "m", "p", answers=rows)


def _pair(k: int, verdicts: dict[str, Verdict], dropped: dict[str, str] | None = None
          ) -> PairResult:
    it = Item(f"i{k}", "x", "y", {}, 0)
    return PairResult(it, SampleScore(it.id, "a", 0.5), SampleScore(it.id, "b", 0.5),
                      ClipAnalysis(it.id, "a"), ClipAnalysis(it.id, "b"), verdicts,
                      dropped or {})


def test_behaviour_figures_from_the_recorded_answers() -> None:
    split = _verdict("tone", [("ab", 0, "a", 0.9), ("ab", 1, "b", 0.7), ("ab", 2, "a", 0.8),
                              ("ba", 0, "a", 0.6), ("ba", 1, "a", 0.6), ("ba", 2, "a", 0.6)])
    tie = _verdict("tone", [("ab", 0, "tie", 0.5), ("ab", 1, "tie", 0.5), ("ab", 2, "tie", 0.5),
                            ("ba", 0, "b", 0.5), ("ba", 1, "b", 0.5), ("ba", 2, "b", 0.5)])
    bad = f"judge: tone: judge m {UNPARSABLE_REASON} in 3 tries (last problem: ...)"
    pairs = [_pair(0, {"tone": split}), _pair(1, {"tone": tie}), _pair(2, {}, {"tone": bad})]
    b = judge_behaviour([(("a", "b"), pairs)])
    tone = next(r for r in b.overall() if r.dimension == "tone")
    assert tone.pairs == 2 and tone.answers == 12
    assert tone.swap_pairs == 2 and tone.swap_disagreement == 0.5  # tie vs b flips; a, a agree
    assert tone.vote_groups == 4 and tone.vote_disagreement == 0.25
    assert tone.ties == 3 / 12
    assert tone.asked == 3 and tone.unparsable == 1 / 3
    assert tone.confidence == pytest.approx((0.9 + 0.7 + 0.8 + 0.6 * 3 + 0.5 * 6) / 12)
    # Decided answers (9): order ab's first clip is a (2 of 3 chose it), order ba's is b
    # (0 of 3 in the first pair, 3 of 3 in the second).
    assert tone.first_preferred == pytest.approx((2 + 0 + 3) / 9)
    nat = next(r for r in b.overall() if r.dimension == "naturalness")
    assert nat.pairs == 0 and nat.swap_disagreement is None
    assert b.warnings == ("WARNING: judge position bias on tone: the winner changed with the "
                          "presentation order in 50 % of 2 pairs (more than 35 %); its tone "
                          "verdicts say more about the order the clips were played in than "
                          "about the clips",)


def test_old_verdicts_without_answers_still_give_the_swap_rate() -> None:
    v = Verdict("tie", 1.0, 2.0, "", "", 0.5, False, "tone", "m", "p")
    b = judge_behaviour([(("a", "b"), [_pair(0, {"tone": v})])])
    tone = next(r for r in b.overall() if r.dimension == "tone")
    assert tone.swap_disagreement == 1.0 and tone.ties is None and not b.recorded
    assert any("no per-order answers" in n for n in b.notes)


def test_cohen_kappa_and_its_seeded_interval(rng_factory: Callable[..., np.random.Generator]
                                            ) -> None:
    assert cohen_kappa(["a", "a", "b", "b"], ["a", "b", "b", "b"]) == pytest.approx(0.5)
    assert cohen_kappa(["a", "b", "tie"], ["a", "b", "tie"]) == pytest.approx(1.0)
    assert cohen_kappa(["a", "a"], ["a", "a"]) is None  # one label throughout: undefined
    rng = rng_factory(5)
    per_item = []
    for _ in range(60):
        old = [str(rng.choice(["a", "b"])) for _ in range(4)]
        new = [o if rng.random() < 0.8 else ("b" if o == "a" else "a") for o in old]
        per_item.append(list(zip(old, new, strict=True)))
    ag = agreement("tone", per_item, n_boot=500, seed=11)
    assert ag == agreement("tone", per_item, n_boot=500, seed=11)  # reproducible to the bit
    assert ag.n == 240 and ag.items == 60 and 0.7 < (ag.raw or 0) < 0.9
    assert ag.low is not None and ag.high is not None and ag.low < (ag.kappa or 0) < ag.high
    assert sum(map(sum, ag.confusion)) == 240


def test_the_audit_counts_votes_with_the_judges_own_majority_rule() -> None:
    from vocencebench.judge import majority_winner
    from vocencebench.judge_audit import order_winners

    assert majority_winner(["a", "b", "a"]) == "a"
    assert majority_winner(["a", "b"]) == "tie"  # equal top counts
    assert majority_winner(["tie", "b", "b"]) == "b"
    answers = [{"order": "ba", "winner": w} for w in ("b", "a", "b")] + [
        {"order": "ab", "winner": w} for w in ("a", "b")]
    assert order_winners(answers) == {"ab": "tie", "ba": "b"}
