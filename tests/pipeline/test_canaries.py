"""Known-answer canaries: the default probes pass; broken instruments are caught.

Broken instruments are built on purpose: a gender probe whose labels are swapped, a tiny
locally built age/gender model that answers "female" for everyone, and scripted judges that
always pick position A, prefer the degraded clip, or answer garbage.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("parselmouth")

from repo_paths import ROOT
from vocencebench.audio import Audio
from vocencebench.cache import Cache
from vocencebench.canaries import (
    EDITS,
    CanaryReport,
    canary_clips,
    edit_clip,
    judge_pairs,
    run_canaries,
)
from vocencebench.errors import CanaryError, InstrumentError, is_fatal
from vocencebench.judge import Judge, JudgeRequest, ScriptedBackend
from vocencebench.probes import (
    GenderHeuristicProbe,
    LoudnessProbe,
    PaceProbe,
    PitchProbe,
    ProbeSet,
    default_probes,
)
from vocencebench.schema import Item, ProbeResult


def answer(winner: str) -> dict[str, Any]:
    a, b = (3, 1) if winner == "A" else (1, 3)
    return {"analysis_a": "first", "analysis_b": "second", "score_a": a, "score_b": b,
            "winner": winner, "confidence": 0.9}


CLEAN = {clean: key for key, _, clean, _ in judge_pairs()}


def honest(request: JudgeRequest) -> dict[str, Any]:
    """Prefers whichever clip is the clean one."""
    first = request.audio()[0].data
    return answer("A" if first in CLEAN else "B")


def judge_of(fn: Callable[[JudgeRequest], Any] | list[Any], **kw: Any) -> Judge:
    return Judge(ScriptedBackend(fn), **kw)


@pytest.fixture(scope="module")
def default_report() -> CanaryReport:
    return run_canaries(probes=default_probes())


# ------------------------------------------------------------------ the shipped clips


def test_manifest_clips_and_licences() -> None:
    clips = canary_clips()
    assert {c.gender for c in clips} == {"male", "female"}
    assert any(c.kind == "real recording" and c.gender == "male" for c in clips)
    size = 0
    for c in clips:
        size += len(c.read())  # checks the sha256
        assert c.licence and c.source and c.text
    assert size < 1_000_000
    root = ROOT / "src/vocencebench/datasets/canaries"
    assert (root / "ATTRIBUTION.md").read_text(encoding="utf-8").count("CMU ARCTIC") >= 1


def test_edits_are_repeatable() -> None:
    for edit in ("base", *EDITS):
        assert edit_clip.__wrapped__("arctic-aew", edit) == edit_clip("arctic-aew", edit)


# ------------------------------------------------------------------ probes


def test_default_probes_pass(default_report: CanaryReport) -> None:
    r = default_report
    assert r.passed and r.accuracy == 1.0
    assert {c.trait for c in r.checks} == {"pitch", "pace", "loudness", "gender"}
    assert len(r.checks) == 3 * 6 + 3  # six edits per clip, one gender label per clip
    assert r.judge_order_flip_rate is None and r.judge_unparsable_rate is None
    pitch_up = [c for c in r.checks if c.name.startswith("pitch +4")]
    assert all(3.0 < float(c.measured or 0) < 5.0 for c in pitch_up)
    gain = [c for c in r.checks if c.trait == "loudness"]
    assert all(abs(abs(float(c.measured or 0)) - 10.0) < 0.1 for c in gain)
    data = json.loads(json.dumps(r.to_dict()))
    assert data["kind"] == "canary_report" and data["passed"] is True
    assert "PASSED" in r.summary()


@dataclass
class SwappedGender:
    """The gender heuristic with its two labels exchanged (a label-order bug)."""

    name: str = "gender-swapped"
    version: str = "1"
    traits: tuple[str, ...] = ("gender",)

    def measure(self, audio: Audio, item: Item) -> dict[str, ProbeResult]:
        r = GenderHeuristicProbe().measure(audio, item)["gender"]
        flipped = {"male": "female", "female": "male"}[r.label]
        return {"gender": replace(r, value=flipped, label=flipped, probe="gender-swapped@1")}


def test_swapped_gender_labels_are_caught() -> None:
    probes = ProbeSet((PitchProbe(), PaceProbe(), LoudnessProbe(), SwappedGender()))
    with pytest.raises(CanaryError, match=r"labels look swapped.*id2label") as info:
        run_canaries(probes=probes)
    err = info.value
    assert is_fatal(err) and isinstance(err, InstrumentError) and err.blame == "instrument"
    assert "the male canary 'arctic-aew' read female" in str(err)
    report = err.report
    assert isinstance(report, CanaryReport)
    assert {c.trait for c in report.failures} == {"gender"}
    assert report.accuracy == pytest.approx(18 / 21)
    # strict=False hands the same report back instead of raising
    again = run_canaries(probes=probes, strict=False)
    assert not again.passed and len(again.failures) == 3


@dataclass
class Boom:
    """Same identity as a real probe; fails the test if it is ever asked to measure."""

    name: str
    version: str
    traits: tuple[str, ...]

    def measure(self, audio: Audio, item: Item) -> dict[str, ProbeResult]:
        raise AssertionError("the cache should have answered")


def test_results_are_cached(tmp_path: Path) -> None:
    with Cache(tmp_path / "c.sqlite") as cache:
        first = run_canaries(probes=default_probes(), judge=judge_of(honest), cache=cache)
        booms = ProbeSet(Boom(p.name, p.version, p.traits) for p in default_probes().probes)
        second = run_canaries(probes=booms, judge=judge_of([]), cache=cache)  # no answers
    assert not first.cached and second.cached
    strip = ("seconds", "cached")
    assert ({k: v for k, v in first.to_dict().items() if k not in strip}
            == {k: v for k, v in second.to_dict().items() if k not in strip})


# ------------------------------------------------------------------ a tiny classifier


def _tiny_age_gender(torch: Any, transformers: Any) -> tuple[Any, Any]:
    """A tiny, randomly initialised model of the audEERING age/gender architecture (seeded)
    and its feature extractor; the tests set its heads. Its encoder downsamples by 320 like
    the real one (50 frames a second): attention over a few seconds stays cheap."""
    from vocencebench.probes._audeering import age_gender_model_class

    cfg = transformers.Wav2Vec2Config(
        hidden_size=32, num_hidden_layers=2, num_attention_heads=2, intermediate_size=64,
        conv_dim=(32, 32, 32), conv_kernel=(10, 8, 8), conv_stride=(5, 8, 8), conv_bias=True,
        feat_extract_norm="layer", do_stable_layer_norm=True,
        num_conv_pos_embeddings=16, num_conv_pos_embedding_groups=2)
    torch.manual_seed(0)
    model = age_gender_model_class()(cfg).eval()
    extractor = transformers.Wav2Vec2FeatureExtractor(
        feature_size=1, sampling_rate=16_000, padding_value=0.0, do_normalize=True,
        return_attention_mask=True)
    return model, extractor


def _save(model: Any, extractor: Any, path: Path) -> Path:
    model.save_pretrained(path)
    extractor.save_pretrained(path)
    return path


@pytest.mark.slow
@pytest.mark.classifiers
def test_classifier_that_cannot_tell_voices_apart(tmp_path: Path) -> None:
    torch = pytest.importorskip("torch")
    transformers = pytest.importorskip("transformers")
    from vocencebench.probes.classifiers import AgeGenderProbe

    model, extractor = _tiny_age_gender(torch, transformers)
    with torch.no_grad():  # heads that ignore the audio: 35 years, female with p = 0.97
        for head, bias in ((model.age, [0.35]), (model.gender, [4.0, 0.5, 0.0])):
            head.out_proj.weight.zero_()
            head.out_proj.bias.copy_(torch.tensor(bias))
    probe = AgeGenderProbe(source=_save(model, extractor, tmp_path), device="cpu",
                           batch_size=8)
    probes = ProbeSet((*default_probes().probes, probe))
    with pytest.raises(CanaryError, match="answers 'female' for every canary") as info:
        run_canaries(probes=probes)
    report = info.value.report
    assert isinstance(report, CanaryReport)
    failed = {(c.trait, c.clip) for c in report.failures}
    assert failed == {("gender", "arctic-aew")}  # the women did read female
    ages = [c for c in report.checks if c.trait == "age"]
    assert len(ages) == 3 and all(c.passed and c.measured == 35.0 for c in ages)
    male = next(c for c in report.failures)
    assert "p=0.95" in male.message  # softmax(4, 0.5, 0)[0]


@pytest.mark.slow
@pytest.mark.classifiers
def test_classifier_with_swapped_labels_is_caught(tmp_path: Path) -> None:
    """A tiny model whose gender head tells the canary voices apart (fitted on its own
    features of the three clips) passes; the same model with the two labels exchanged — the
    bug of a checkpoint read with the wrong label order — is caught before any run."""
    torch = pytest.importorskip("torch")
    transformers = pytest.importorskip("transformers")
    from vocencebench.audio import load_audio
    from vocencebench.probes.classifiers import AgeGenderProbe

    model, extractor = _tiny_age_gender(torch, transformers)
    clips = canary_clips()
    with torch.no_grad():
        pooled = []
        for c in clips:  # the features the probe's head sees for each clean canary
            wave = load_audio(edit_clip(c.key, "base")).at_16k().astype("float32")
            pooled.append(model(extractor([wave], sampling_rate=16_000,
                                          return_tensors="pt")["input_values"])[0][0])
        feats = torch.tanh(torch.stack(pooled))  # dense = identity, then tanh
        male = torch.tensor([1.0 if c.gender == "male" else -1.0 for c in clips])
        centred = feats - feats.mean(0)
        w = torch.linalg.pinv(centred) @ (male - male.mean())  # w·f + b = +1 man, −1 women
        b = male.mean() - feats.mean(0) @ w
        assert torch.allclose(feats @ w + b, male, atol=1e-3)
        model.age.out_proj.weight.zero_()
        model.age.out_proj.bias.fill_(0.35)  # 35 years: the age checks pass
        head = model.gender
        head.dense.weight.copy_(torch.eye(feats.shape[1]))
        head.dense.bias.zero_()
        head.out_proj.weight.zero_()
        head.out_proj.bias.copy_(torch.tensor([0.0, 0.0, -20.0]))  # never "child"

        def orient(sign: float) -> None:  # outputs (female, male, child)
            head.out_proj.weight[0] = -6.0 * sign * w
            head.out_proj.bias[0] = -6.0 * sign * b
            head.out_proj.weight[1] = 6.0 * sign * w
            head.out_proj.bias[1] = 6.0 * sign * b

        orient(1.0)
        right = _save(model, extractor, tmp_path / "right")
        orient(-1.0)
        swapped = _save(model, extractor, tmp_path / "swapped")
    ok = run_canaries(probes=ProbeSet((AgeGenderProbe(source=right, device="cpu"),)))
    assert ok.passed and {c.trait for c in ok.checks} == {"age", "gender"}
    with pytest.raises(CanaryError, match=r"gender labels look swapped.*id2label") as info:
        run_canaries(probes=ProbeSet((AgeGenderProbe(source=swapped, device="cpu"),)))
    report = info.value.report
    assert isinstance(report, CanaryReport)
    assert {(c.trait, c.clip) for c in report.failures} == {("gender", c.key) for c in clips}
    assert "the male canary 'arctic-aew' read female" in str(info.value)


# ------------------------------------------------------------------ the judge


def test_honest_judge_passes() -> None:
    backend = ScriptedBackend(honest)
    r = run_canaries(probes=None, judge=Judge(backend))
    assert r.passed and len(backend.requests) == 12
    assert (r.judge_order_flip_rate, r.judge_unparsable_rate, r.judge_clean_rate) == (0, 0, 1)
    assert "order-flip rate 0 %" in r.summary()


def test_position_biased_judge_is_caught() -> None:
    with pytest.raises(CanaryError, match=r"position-biased.*12 of 12") as info:
        run_canaries(probes=None, judge=judge_of(lambda req: answer("A")))
    r = info.value.report
    assert isinstance(r, CanaryReport)
    assert r.judge_order_flip_rate == 1.0 and r.judge_clean_rate == 0.5
    assert is_fatal(info.value)


def test_judge_preferring_the_degraded_clip_is_caught() -> None:
    def perverse(request: JudgeRequest) -> dict[str, Any]:
        return answer("B" if request.audio()[0].data in CLEAN else "A")

    with pytest.raises(CanaryError, match="prefers the degraded clip") as info:
        run_canaries(probes=None, judge=judge_of(perverse))
    r = info.value.report
    assert isinstance(r, CanaryReport)
    assert r.judge_clean_rate == 0.0 and r.judge_order_flip_rate == 0.0


def test_order_flip_rate_is_computed_per_pair() -> None:
    """Honest on the man's pairs, always "A" on the woman's: 3 of 6 pairs flip."""
    def half(request: JudgeRequest) -> dict[str, Any]:
        first, second = (a.data for a in request.audio())
        key = CLEAN.get(first) or CLEAN.get(second)
        return honest(request) if key == "arctic-aew" else answer("A")

    r = run_canaries(probes=None, judge=judge_of(half), strict=False)
    assert r.judge_order_flip_rate == 0.5
    assert r.judge_clean_rate == 0.75
    assert [c.name for c in r.failures] == ["judge order-flip rate"]


def test_unparsable_rate_counts_every_answer() -> None:
    # one garbage answer, retried: 13 calls, 1 unparsable
    r = run_canaries(probes=None, judge=judge_of(["not json", *([honest] * 12)]))
    assert r.passed and r.judge_unparsable_rate == pytest.approx(1 / 13)
    # three garbage answers exhaust the first unit's retries: 14 calls, 3 unparsable
    with pytest.raises(CanaryError, match="3 unparsable answers in 14 calls") as info:
        run_canaries(probes=None, judge=judge_of(["?", "??", "???", *([honest] * 11)]))
    r = info.value.report
    assert isinstance(r, CanaryReport)
    assert r.judge_unparsable_rate == pytest.approx(3 / 14)
    assert r.judge_order_flip_rate == 0.0  # the unanswered pair has no order to flip


@pytest.mark.slow
def test_edits_are_the_same_bytes_in_another_process() -> None:
    """The cache keys on the edited clips' sha256, so they must not vary between runs
    (Praat's PSOLA draws random numbers; the canaries seed it)."""
    import hashlib
    import subprocess
    import sys

    code = ("import hashlib; from vocencebench.canaries import EDITS, edit_clip, judge_pairs, "
            "canary_clips; h = hashlib.sha256(); "
            "[h.update(edit_clip(c.key, e)) for c in canary_clips() for e in ('base', *EDITS)]; "
            "[h.update(p[3]) for p in judge_pairs()]; print(h.hexdigest())")
    here = hashlib.sha256()
    for c in canary_clips():
        for e in ("base", *EDITS):
            here.update(edit_clip(c.key, e))
    for p in judge_pairs():
        here.update(p[3])
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, timeout=120)
    assert out.stdout.strip() == here.hexdigest()
