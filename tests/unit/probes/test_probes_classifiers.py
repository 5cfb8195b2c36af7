"""Classifier probes on tiny locally built models of the real architectures (random weights).

Every test runs the real loading, batching and label-mapping code; none reaches the network
(conftest sets HF_HUB_OFFLINE=1). Assertions are about shapes, label sets, probabilities,
weights and mappings — not about what random weights predict.
"""

from __future__ import annotations

import math
import pickle
import time
from pathlib import Path
from typing import Any

import numpy as np
import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

from repo_paths import DOCS  # noqa: E402
from seeding import make_rng  # noqa: E402
from vocencebench.audio import Audio, load_audio, to_wav_bytes  # noqa: E402
from vocencebench.decide import desirability  # noqa: E402
from vocencebench.errors import ConfigError, VocenceError  # noqa: E402
from vocencebench.probes import _ecapa  # noqa: E402
from vocencebench.probes._audeering import GENDER_CLASSES, age_gender_model_class  # noqa: E402
from vocencebench.probes.base import Probe, ProbeSet  # noqa: E402
from vocencebench.probes.classifiers import (  # noqa: E402
    ACCENT_SCORE_SCALE,
    CLASSIFIER_MODELS,
    AccentProbe,
    AgeGenderProbe,
    EmotionProbe,
    classifier_probes,
    measure_batch,
    resolve_device,
)
from vocencebench.schema import Item, ProbeResult  # noqa: E402
from vocencebench.traits import TRAITS  # noqa: E402

pytestmark = pytest.mark.classifiers

SR = 16_000
EMOTION_LABELS = ("angry", "calm", "disgust", "fearful", "happy", "neutral", "sad", "surprised")
ACCENT_LABELS = CLASSIFIER_MODELS["accent"].labels


# ------------------------------------------------------------------------------ fixtures

def _tiny_w2v2_config(**extra: Any) -> Any:
    return transformers.Wav2Vec2Config(
        hidden_size=32, num_hidden_layers=2, num_attention_heads=2, intermediate_size=64,
        conv_dim=(32, 32), conv_kernel=(10, 8), conv_stride=(5, 4), conv_bias=True,
        feat_extract_norm="layer", do_stable_layer_norm=True,
        num_conv_pos_embeddings=16, num_conv_pos_embedding_groups=2, **extra,
    )


def _save_extractor(path: Path) -> None:
    transformers.Wav2Vec2FeatureExtractor(
        feature_size=1, sampling_rate=SR, padding_value=0.0, do_normalize=True,
        return_attention_mask=True,
    ).save_pretrained(path)


def _state(model: Any) -> dict[str, Any]:
    return {k: v.detach().clone() for k, v in model.state_dict().items()}


@pytest.fixture(scope="module")
def age_gender_dir(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Any]]:
    path = tmp_path_factory.mktemp("age_gender")
    torch.manual_seed(1)
    model = age_gender_model_class()(_tiny_w2v2_config())
    model.save_pretrained(path)
    _save_extractor(path)
    return path, _state(model)


@pytest.fixture(scope="module")
def emotion_dir(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Any]]:
    path = tmp_path_factory.mktemp("emotion")
    torch.manual_seed(2)
    cfg = _tiny_w2v2_config(
        id2label=dict(enumerate(EMOTION_LABELS)),
        label2id={lab: i for i, lab in enumerate(EMOTION_LABELS)},
        classifier_proj_size=16,
    )
    model = transformers.Wav2Vec2ForSequenceClassification(cfg)
    model.save_pretrained(path)
    _save_extractor(path)
    return path, _state(model)


TINY_ECAPA_YAML = """\
# Same layout as the accent checkpoint's hyperparams.yaml, with tiny sizes.
pretrained_path: Jzuluaga/accent-id-commonaccent_ecapa
n_mels: 20
n_languages: 16
emb_dim: 8

compute_features: !new:speechbrain.lobes.features.Fbank
    n_mels: !ref <n_mels>

mean_var_norm: !new:speechbrain.processing.features.InputNormalization
    norm_type: sentence
    std_norm: False

embedding_model: !new:speechbrain.lobes.models.ECAPA_TDNN.ECAPA_TDNN
    input_size: !ref <n_mels>
    activation: !name:torch.nn.LeakyReLU
    channels: [16, 16, 16, 16, 48]
    kernel_sizes: [5, 3, 3, 3, 1]
    dilations: [1, 2, 3, 4, 1]
    attention_channels: 8
    res2net_scale: 4
    se_channels: 8
    lin_neurons: !ref <emb_dim>

classifier: !new:speechbrain.lobes.models.ECAPA_TDNN.Classifier
    input_size: !ref <emb_dim>
    out_neurons: !ref <n_languages>

label_encoder: !new:speechbrain.dataio.encoder.CategoricalEncoder

modules:
    compute_features: !ref <compute_features>
    mean_var_norm: !ref <mean_var_norm>
    embedding_model: !ref <embedding_model>
    classifier: !ref <classifier>

pretrainer: !new:speechbrain.utils.parameter_transfer.Pretrainer
    loadables:
        embedding_model: !ref <embedding_model>
        classifier: !ref <classifier>
        label_encoder: !ref <label_encoder>
    paths:
        embedding_model: !ref <pretrained_path>/embedding_model.ckpt
        classifier: !ref <pretrained_path>/classifier.ckpt
        label_encoder: !ref <pretrained_path>/accent_encoder.txt
"""


@pytest.fixture(scope="module")
def accent_dir(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Any]]:
    path = tmp_path_factory.mktemp("accent")
    (path / "hyperparams.yaml").write_text(TINY_ECAPA_YAML, encoding="utf-8")
    mods = _ecapa._build_modules(torch)
    torch.manual_seed(3)
    emb = mods["ECAPA_TDNN"](
        20, lin_neurons=8, act="leaky_relu", channels=[16, 16, 16, 16, 48],
        kernel_sizes=[5, 3, 3, 3, 1], dilations=[1, 2, 3, 4, 1], attention_channels=8,
        res2net_scale=4, se_channels=8, global_context=True, groups=[1] * 5,
    )
    with torch.no_grad():  # non-trivial batch-norm statistics, as in a trained model
        for m in emb.modules():
            if isinstance(m, torch.nn.BatchNorm1d):
                m.running_mean.normal_(0.0, 0.5)
                m.running_var.uniform_(0.5, 2.0)
    cls = mods["Classifier"](8, 0, 192, 16)
    torch.save(emb.state_dict(), path / "embedding_model.ckpt")
    torch.save(cls.state_dict(), path / "classifier.ckpt")
    _ecapa.write_label_encoder(path / "accent_encoder.txt", ACCENT_LABELS)
    return path, {**{f"emb.{k}": v for k, v in _state(emb).items()},
                  **{f"cls.{k}": v for k, v in _state(cls).items()}}


@pytest.fixture(scope="module")
def age_probe(age_gender_dir: tuple[Path, dict[str, Any]]) -> AgeGenderProbe:
    return AgeGenderProbe(source=age_gender_dir[0], device="cpu", batch_size=4)


@pytest.fixture(scope="module")
def emotion_probe(emotion_dir: tuple[Path, dict[str, Any]]) -> EmotionProbe:
    return EmotionProbe(source=emotion_dir[0], device="cpu", batch_size=4)


@pytest.fixture(scope="module")
def accent_probe(accent_dir: tuple[Path, dict[str, Any]]) -> AccentProbe:
    return AccentProbe(source=accent_dir[0], device="cpu", batch_size=4)


def clip(seconds: float, *, f0: float = 140.0, sr: int = SR, seed: int = 0) -> Audio:
    """A voiced-like test clip: harmonics with vibrato plus a little noise."""
    rng = make_rng(seed)
    t = np.arange(round(seconds * sr)) / sr
    phase = 2 * np.pi * np.cumsum(f0 * (1 + 0.05 * np.sin(2 * np.pi * 4 * t))) / sr
    x = sum(0.2 / k * np.sin(k * phase) for k in range(1, 6))
    x = x * (0.6 + 0.4 * np.sin(2 * np.pi * 2.5 * t) ** 2) + 0.01 * rng.standard_normal(t.size)
    return load_audio(to_wav_bytes(np.asarray(x, dtype=np.float32), sr), name=f"clip{seed}")


def item(i: int = 0, **traits: str) -> Item:
    request = {"gender": "female", "age": "30", "pace": "moderate", "pitch": "medium",
               "loudness": "normal", "emotion": "happy", "accent": "British", "tone": "warm"}
    request.update(traits)
    return Item(id=f"it-{i}", instruction="x", text="Hello there.", traits=request,
                difficulty=1)


# ------------------------------------------------------------------------------ the table

def test_model_table_is_pinned_and_maps_onto_our_vocabulary() -> None:
    assert set(CLASSIFIER_MODELS) == {"age_gender", "emotion", "accent"}
    for spec in CLASSIFIER_MODELS.values():
        assert len(spec.revision) == 40 and int(spec.revision, 16) >= 0
        assert spec.sample_rate == SR and spec.license and spec.files
        for t in spec.traits:
            assert t in TRAITS
        for trait in spec.traits:
            if TRAITS[trait].scoring == "categorical":
                values = set(TRAITS[trait].values)
                assert set(spec.label_map.values()) <= values
    # every emotion and accent value of ours is reachable from a model label
    assert set(CLASSIFIER_MODELS["emotion"].label_map.values()) == set(TRAITS["emotion"].values)
    assert set(CLASSIFIER_MODELS["accent"].label_map.values()) == set(TRAITS["accent"].values)
    assert set(CLASSIFIER_MODELS["accent"].label_map) <= set(ACCENT_LABELS)
    assert len(ACCENT_LABELS) == 16
    assert GENDER_CLASSES == ("female", "male", "child")


def test_docs_table_matches_code() -> None:
    doc = DOCS / "probes.md"
    text = doc.read_text(encoding="utf-8")
    for spec in CLASSIFIER_MODELS.values():
        assert spec.model_id in text and spec.revision in text


# ------------------------------------------------------------------------------ errors

def test_real_hub_id_offline_fails_fast_with_a_clear_error(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import huggingface_hub.constants as hfc

    monkeypatch.setattr(hfc, "HF_HUB_CACHE", str(tmp_path))
    t0 = time.perf_counter()
    with pytest.raises(ConfigError) as info:
        EmotionProbe(device="cpu")
    assert time.perf_counter() - t0 < 10
    msg = str(info.value)
    spec = CLASSIFIER_MODELS["emotion"]
    assert spec.model_id in msg and spec.revision in msg
    assert "models={'emotion': '/path/to/dir'}" in msg
    assert isinstance(info.value, VocenceError)


def test_pinned_hub_model_loads_from_the_cache_without_network(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        accent_dir: tuple[Path, dict[str, Any]]) -> None:
    import huggingface_hub.constants as hfc

    spec = CLASSIFIER_MODELS["accent"]
    snap = (tmp_path / ("models--" + spec.model_id.replace("/", "--")) / "snapshots"
            / spec.revision)
    snap.mkdir(parents=True)
    for name in (*spec.files, spec.one_of[0]):
        (snap / name).write_bytes((accent_dir[0] / name).read_bytes())
    monkeypatch.setattr(hfc, "HF_HUB_CACHE", str(tmp_path))
    probe = AccentProbe(device="cpu")
    assert probe.origin == f"{spec.model_id}@{spec.revision}"
    assert probe.version == "1+" + spec.revision[:12]
    assert probe.model_labels == ACCENT_LABELS


def test_bad_model_arguments(tmp_path: Path, accent_dir: tuple[Path, dict[str, Any]]) -> None:
    with pytest.raises(ConfigError, match="unknown classifier 'speaker'"):
        classifier_probes("cpu", models={"speaker": str(tmp_path)})
    with pytest.raises(ConfigError, match="pin a hub model"):
        classifier_probes("cpu", models={"emotion": "someone/other-model"}, include=["emotion"])
    with pytest.raises(ConfigError, match="40-hex"):
        classifier_probes("cpu", include=["emotion"], revisions={"emotion": "main"})
    with pytest.raises(ConfigError, match="no such folder"):
        AccentProbe(source=str(tmp_path / "missing" / "dir"), device="cpu")
    with pytest.raises(ConfigError, match=r"needs hyperparams\.yaml"):
        AccentProbe(source=tmp_path, device="cpu")
    with pytest.raises(ConfigError, match="batch_size"):
        AccentProbe(source=accent_dir[0], device="cpu", batch_size=0)
    with pytest.raises(ConfigError, match="twice"):
        classifier_probes("cpu", include=["accent", "accent"])


def test_resolve_device() -> None:
    assert resolve_device("auto") == ("cuda" if torch.cuda.is_available() else "cpu")
    assert resolve_device("cpu") == "cpu"
    if not torch.cuda.is_available():
        with pytest.raises(ConfigError, match="no CUDA"):
            resolve_device("cuda")


# ------------------------------------------------------------------------------ age + gender

def test_age_gender_loads_weights_unchanged(age_probe: AgeGenderProbe,
                                            age_gender_dir: tuple[Path, dict[str, Any]]) -> None:
    saved = age_gender_dir[1]
    got = age_probe._model.state_dict()
    assert set(got) == set(saved)
    for k, v in saved.items():
        assert torch.equal(got[k].cpu(), v), k
    assert isinstance(age_probe, Probe)
    assert age_probe.version.startswith("1+sha-") and len(age_probe.version) == 18


def test_age_gender_results(age_probe: AgeGenderProbe) -> None:
    res = age_probe.measure(clip(1.2), item(age="45", gender="male"))
    assert set(res) == {"age", "gender"}
    age, gender = res["age"], res["gender"]
    assert isinstance(age.value, float) and math.isfinite(age.value)
    assert age.unit == "years" and age.label == f"{age.value:.0f}"
    assert age.d == desirability("age", age.value, "45")
    assert age.detail["raw"] == pytest.approx(age.value / 100, abs=1e-4)
    assert gender.label in ("male", "female") and gender.value == gender.label
    probs = gender.detail["probabilities"]
    assert tuple(probs) == GENDER_CLASSES
    assert sum(probs.values()) == pytest.approx(1.0, abs=1e-5)
    assert gender.label == ("female" if probs["female"] >= probs["male"] else "male")
    assert gender.detail["top_class"] == max(probs, key=lambda k: probs[k])
    assert gender.d == (1.0 if gender.label == "male" else 0.0)
    assert age.probe == gender.probe == age_probe.probe_id
    for r in res.values():  # JSON round trip
        assert ProbeResult.from_json(r.to_json()) == r


def test_child_maps_to_the_more_probable_adult_class(age_probe: AgeGenderProbe) -> None:
    out = (0.09, np.array([0.30, 0.10, 0.60]))
    res = age_probe._results(out, item(age="8", gender="female"))
    g = res["gender"]
    assert g.label == "female" and g.d == 1.0
    assert g.detail["top_class"] == "child" and g.detail["child_mapped"] is True
    assert res["age"].value == 9.0 and res["age"].d == 1.0
    res = age_probe._results((0.5, np.array([0.2, 0.3, 0.5])), item(gender="female"))
    assert res["gender"].label == "male" and res["gender"].d == 0.0


@pytest.mark.slow
def test_age_gender_batch_equals_one_by_one(age_probe: AgeGenderProbe) -> None:
    clips = [clip(1.5, seed=1), clip(0.6, f0=210, seed=2), clip(1.1, f0=110, seed=3)]
    items = [item(i) for i in range(3)]
    batched = age_probe.measure_batch(clips, items)
    for c, it, b in zip(clips, items, batched, strict=True):
        one = age_probe.measure(c, it)
        assert b["age"].value == pytest.approx(one["age"].value, abs=0.011)
        for k, v in one["gender"].detail["probabilities"].items():
            assert b["gender"].detail["probabilities"][k] == pytest.approx(v, abs=2e-6)


@pytest.mark.slow
def test_age_gender_short_and_resampled_input(age_probe: AgeGenderProbe) -> None:
    for a in (clip(0.3), clip(1.0, sr=8000), clip(1.0, sr=44_100)):
        res = age_probe.measure(a, item())
        assert set(res) == {"age", "gender"}
        assert all(0.0 <= r.d <= 1.0 for r in res.values())


def test_checkpoint_without_the_heads_is_refused(tmp_path: Path) -> None:
    torch.manual_seed(6)
    transformers.Wav2Vec2Model(_tiny_w2v2_config()).save_pretrained(tmp_path)
    _save_extractor(tmp_path)
    with pytest.raises(ConfigError, match=r"missing weights \['age\."):
        AgeGenderProbe(source=tmp_path, device="cpu")


# ------------------------------------------------------------------------------ emotion

def test_emotion_labels_and_probabilities(emotion_probe: EmotionProbe,
                                          emotion_dir: tuple[Path, dict[str, Any]]) -> None:
    for k, v in emotion_dir[1].items():
        assert torch.equal(emotion_probe._model.state_dict()[k].cpu(), v), k
    assert emotion_probe.model_labels == EMOTION_LABELS
    assert emotion_probe.label_to_value == {lab: lab for lab in EMOTION_LABELS}
    res = emotion_probe.measure(clip(1.0), item(emotion="sad"))
    e = res["emotion"]
    assert set(e.detail["probabilities"]) == set(TRAITS["emotion"].values)
    assert sum(e.detail["probabilities"].values()) == pytest.approx(1.0, abs=1e-5)
    assert e.label in TRAITS["emotion"].values and e.value == e.label
    assert e.d == (1.0 if e.label == "sad" else 0.0)


def test_emotion_mapping_from_the_output(emotion_probe: EmotionProbe) -> None:
    probs = np.full(8, 0.01)
    probs[EMOTION_LABELS.index("fearful")] = 0.93
    e = emotion_probe._results(probs, item(emotion="fearful"))["emotion"]
    assert (e.label, e.d) == ("fearful", 1.0)
    e = emotion_probe._results(probs, item(emotion="calm"))["emotion"]
    assert (e.label, e.d) == ("fearful", 0.0)


@pytest.mark.slow
def test_emotion_batch_equals_one_by_one(emotion_probe: EmotionProbe) -> None:
    clips = [clip(0.9, seed=4), clip(1.6, seed=5), clip(0.4, seed=6)]
    batched = emotion_probe.measure_batch(clips, [item(i) for i in range(3)])
    for c, b in zip(clips, batched, strict=True):
        one = emotion_probe.measure(c, item())["emotion"].detail["probabilities"]
        for k, v in one.items():
            assert b["emotion"].detail["probabilities"][k] == pytest.approx(v, abs=2e-6)


def test_emotion_model_with_generic_labels_is_refused(tmp_path: Path) -> None:
    torch.manual_seed(5)
    model = transformers.Wav2Vec2ForSequenceClassification(_tiny_w2v2_config(num_labels=3))
    model.save_pretrained(tmp_path)
    _save_extractor(tmp_path)
    with pytest.raises(ConfigError, match="not an emotion classifier"):
        EmotionProbe(source=tmp_path, device="cpu")


# ------------------------------------------------------------------------------ accent

def test_accent_checkpoint_has_speechbrain_parameter_names(
        accent_dir: tuple[Path, dict[str, Any]]) -> None:
    state = torch.load(accent_dir[0] / "embedding_model.ckpt", weights_only=True)
    for key in ("blocks.0.conv.conv.weight", "blocks.0.norm.norm.running_var",
                "blocks.1.tdnn1.conv.conv.weight", "blocks.1.res2net_block.blocks.2.conv.conv.bias",
                "blocks.3.se_block.conv2.conv.weight", "mfa.conv.conv.weight",
                "asp.tdnn.norm.norm.num_batches_tracked", "asp.conv.conv.weight",
                "asp_bn.norm.running_mean", "fc.conv.weight"):
        assert key in state, key
    assert not any("shortcut" in k for k in state)  # equal channels: no shortcut conv
    assert set(torch.load(accent_dir[0] / "classifier.ckpt", weights_only=True)) == {"weight"}


def test_accent_hparams_are_read_as_data(accent_dir: tuple[Path, dict[str, Any]]) -> None:
    hp = _ecapa.read_hparams(accent_dir[0] / "hyperparams.yaml")
    s = _ecapa._settings(hp)
    assert (s["n_mels"], s["input_size"], s["lin_neurons"], s["out_neurons"]) == (20, 20, 8, 16)
    assert s["activation"] == "leaky_relu" and s["channels"] == [16, 16, 16, 16, 48]
    assert _ecapa._pretrained_files(hp)["label_encoder"] == "accent_encoder.txt"
    assert _ecapa.read_label_encoder(accent_dir[0] / "accent_encoder.txt") == ACCENT_LABELS


def test_accent_unsupported_hparams_are_refused(tmp_path: Path,
                                                accent_dir: tuple[Path, dict[str, Any]]) -> None:
    for name in ("embedding_model.ckpt", "classifier.ckpt", "accent_encoder.txt"):
        (tmp_path / name).write_bytes((accent_dir[0] / name).read_bytes())
    (tmp_path / "hyperparams.yaml").write_text(
        TINY_ECAPA_YAML.replace("norm_type: sentence", "norm_type: global"), encoding="utf-8")
    with pytest.raises(ConfigError, match="sentence"):
        AccentProbe(source=tmp_path, device="cpu")
    (tmp_path / "hyperparams.yaml").write_text(
        TINY_ECAPA_YAML.replace("lin_neurons: !ref <emb_dim>", "lin_neurons: 12"),
        encoding="utf-8")
    with pytest.raises(ConfigError, match="does not match the architecture"):
        AccentProbe(source=tmp_path, device="cpu")


def test_accent_loads_weights_and_reports_probabilities(
        accent_probe: AccentProbe, accent_dir: tuple[Path, dict[str, Any]]) -> None:
    model = accent_probe._model
    for k, v in accent_dir[1].items():
        part, name = k.split(".", 1)
        got = (model.embedding_model if part == "emb" else model.classifier).state_dict()[name]
        assert torch.equal(got.cpu(), v), k
    assert accent_probe.model_labels == ACCENT_LABELS
    a = accent_probe.measure(clip(1.3), item(accent="American"))["accent"]
    probs, cos = a.detail["probabilities"], a.detail["cosine"]
    assert tuple(probs) == ACCENT_LABELS and len(cos) == 16
    assert sum(probs.values()) == pytest.approx(1.0, abs=1e-5)
    assert all(-1.0 - 1e-6 <= c <= 1.0 + 1e-6 for c in cos.values())
    assert a.value == max(cos, key=lambda k: cos[k])
    expected = CLASSIFIER_MODELS["accent"].label_map.get(str(a.value), str(a.value))
    assert a.label == expected
    assert a.d == (1.0 if a.label == "American" else 0.0)


@pytest.mark.parametrize(
    ("model_label", "ours"),
    [("us", "American"), ("england", "British"), ("australia", "Australian"),
     ("indian", "Indian"), ("canada", "Canadian"), ("scotland", "scotland"),
     ("ireland", "ireland")],
)
def test_accent_label_mapping(accent_probe: AccentProbe, model_label: str, ours: str) -> None:
    cos = np.full(16, -0.2)
    cos[ACCENT_LABELS.index(model_label)] = 0.8
    probs = np.exp(ACCENT_SCORE_SCALE * cos) / np.exp(ACCENT_SCORE_SCALE * cos).sum()
    for requested in TRAITS["accent"].values:
        a = accent_probe._results((cos, probs), item(accent=requested))["accent"]
        assert (a.value, a.label) == (model_label, ours)
        assert a.d == (1.0 if ours == requested else 0.0)


@pytest.mark.slow
def test_accent_batches_only_equal_lengths(accent_probe: AccentProbe) -> None:
    twin_a, twin_b, short = clip(1.0, seed=7), clip(1.0, f0=180, seed=8), clip(0.7, seed=9)
    batched = accent_probe.measure_batch([twin_a, short, twin_b], [item(i) for i in range(3)])
    alone = [accent_probe.measure(c, item()) for c in (twin_a, short, twin_b)]
    # the short clip ran on its own: identical; the two equal-length clips shared a batch
    assert batched[1]["accent"].detail == alone[1]["accent"].detail
    for b, o in zip(batched, alone, strict=True):
        for k, v in o["accent"].detail["cosine"].items():
            assert b["accent"].detail["cosine"][k] == pytest.approx(v, abs=1e-5)


def test_fbank_puts_a_tone_in_the_right_mel_band() -> None:
    mods = _ecapa._build_modules(torch)
    fb = mods["Fbank"](sample_rate=SR, n_mels=40, n_fft=400, win_ms=25, hop_ms=10,
                       f_min=0, f_max=8000)
    t = torch.arange(SR) / SR
    feats = fb(0.5 * torch.sin(2 * math.pi * 1000.0 * t)[None])
    assert feats.shape == (1, 101, 40)  # 10 ms hop, centred frames
    band = int(feats[0].mean(0).argmax())
    mel = torch.linspace(0, 2595 * math.log10(1 + 8000 / 700), 42)
    centres = 700 * (10 ** (mel / 2595) - 1)
    assert abs(float(centres[band + 1]) - 1000.0) < 150.0
    assert float(feats.max() - feats.min()) <= 80.0 + 1e-4  # the 80 dB floor


# ------------------------------------------------------------------------------ as a set

def test_probe_set_batch_pickle_and_determinism(age_probe: AgeGenderProbe,
                                                emotion_probe: EmotionProbe,
                                                accent_probe: AccentProbe) -> None:
    ps = ProbeSet([age_probe, emotion_probe, accent_probe])
    assert ps.traits == ("gender", "age", "emotion", "accent")
    clips = [clip(1.0, seed=10), clip(0.8, seed=11)]
    items = [item(0), item(1, accent="Indian")]
    many = measure_batch(ps, clips, items)
    for c, it, m in zip(clips, items, many, strict=True):
        one = ps.measure(c, it)
        assert list(m) == list(one) == ["gender", "age", "emotion", "accent"]
        assert one == ps.measure(c, it)  # repeated runs are identical
    # pickling drops the weights; the copy reloads them and measures the same
    blob = pickle.dumps(accent_probe)
    assert len(blob) < 20_000
    copy = pickle.loads(blob)
    assert copy._model is None
    assert copy.measure(clips[0], items[0]) == accent_probe.measure(clips[0], items[0])


def test_with_classifiers_extends_the_acoustic_set(
        age_gender_dir: tuple[Path, dict[str, Any]], emotion_dir: tuple[Path, dict[str, Any]],
        accent_dir: tuple[Path, dict[str, Any]]) -> None:
    from vocencebench.probes import default_probes, with_classifiers

    ps = with_classifiers("cpu", models={"age_gender": age_gender_dir[0],
                                         "emotion": emotion_dir[0], "accent": accent_dir[0]})
    base = default_probes()
    assert ps.ids[:len(base.ids)] == base.ids
    assert [p.name for p in ps.probes[len(base.probes):]] == [
        "age_gender_w2v2", "emotion_w2v2", "accent_ecapa"]
    res = ps.measure(clip(1.2, seed=12), item())
    assert {"gender", "age", "emotion", "accent"} <= set(res)
    assert res["gender"].probe.startswith("age_gender_w2v2@")  # the classifier wins


# ------------------------------------------------------------------------------ parity

@pytest.mark.slow
def test_ecapa_matches_speechbrain_source(monkeypatch: pytest.MonkeyPatch) -> None:
    """Exact parity with speechbrain's own modules, when a speechbrain source tree is given.

    VOCENCE_SPEECHBRAIN_SRC names a ``speechbrain/`` package folder; ``make test`` unpacks the
    wheel pinned in tests/reference-sources.txt and sets it. torchaudio (unused by these
    modules, broken beside CPU torch) is stubbed. Measured 0.0 difference.
    """
    import importlib
    import os
    import sys
    import types

    src = os.environ.get("VOCENCE_SPEECHBRAIN_SRC")
    if not src:
        pytest.skip("set VOCENCE_SPEECHBRAIN_SRC to a speechbrain/ source folder to run "
                    "(make test does)")
    monkeypatch.setitem(sys.modules, "torchaudio", types.ModuleType("torchaudio"))
    pkg = types.ModuleType("speechbrain")
    pkg.__path__ = [src]
    monkeypatch.setitem(sys.modules, "speechbrain", pkg)
    sb = importlib.import_module("speechbrain.lobes.models.ECAPA_TDNN")
    sb_feats = importlib.import_module("speechbrain.lobes.features")
    sb_norm = importlib.import_module("speechbrain.processing.features")
    torch.manual_seed(0)
    cfg = dict(channels=[32, 32, 32, 32, 96], kernel_sizes=[5, 3, 3, 3, 1],
               dilations=[1, 2, 3, 4, 1], attention_channels=16, res2net_scale=4,
               se_channels=16, lin_neurons=24)
    emb = sb.ECAPA_TDNN(80, activation=torch.nn.LeakyReLU, **cfg).eval()
    cls = sb.Classifier(input_size=24, out_neurons=16).eval()
    with torch.no_grad():
        for m in emb.modules():
            if isinstance(m, torch.nn.BatchNorm1d):
                m.running_mean.normal_(0, 0.5)
                m.running_var.uniform_(0.5, 2.0)
    mods = _ecapa._build_modules(torch)
    mine_emb = mods["ECAPA_TDNN"](80, lin_neurons=24, act="leaky_relu", global_context=True,
                                  groups=[1] * 5, **{k: v for k, v in cfg.items()
                                                     if k != "lin_neurons"})
    mine_emb.load_state_dict(emb.state_dict(), strict=True)
    mine_cls = mods["Classifier"](24, 0, 192, 16)
    mine_cls.load_state_dict(cls.state_dict(), strict=True)
    fb = mods["Fbank"](sample_rate=SR, n_mels=80, n_fft=400, win_ms=25, hop_ms=10, f_min=0,
                       f_max=8000)
    mine = mods["EcapaClassifier"](fb, mine_emb, mine_cls).eval()
    g = torch.Generator().manual_seed(1)
    wavs = 0.1 * torch.randn(2, 3 * SR, generator=g)
    wavs[1, 2 * SR:] = 0.0
    lens = torch.tensor([1.0, 2 / 3])
    with torch.no_grad():
        feats = sb_feats.Fbank(n_mels=80)(wavs)
        assert torch.equal(feats, fb(wavs))
        norm = sb_norm.InputNormalization(norm_type="sentence", std_norm=False)
        theirs = cls(emb(norm(feats, lens), lens)).squeeze(1)
        assert torch.allclose(theirs, mine(wavs, lens), atol=1e-6, rtol=0)
