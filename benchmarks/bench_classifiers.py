"""Throughput of the classifier probes at their real sizes (random weights, no download).

The three networks are built at the published sizes — wav2vec 2.0 large (24 layers, 1024
wide; 315 M parameters) with the age/gender heads, the same with an 8-class head for emotion,
and ECAPA-TDNN with 1024 channels / 80 mels / 16 classes for accent — with random weights, so
the numbers are speed only. The accent checkpoint goes through the real loader; the two
wav2vec 2.0 models are put in place of tiny ones after loading (saving 2 × 1.2 GB would
dominate the run). Each probe then runs ``measure_batch`` on ``--clips`` synthetic clips of
``--seconds`` seconds (distinct lengths ±5 %, as TTS output is), after one warm-up batch.

Reported per probe: clips per second and real-time factor (processing time / audio time).

Run:  python benchmarks/bench_classifiers.py [--device auto] [--clips 8] [--seconds 3]
"""

from __future__ import annotations

import argparse
import json
import platform
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np
import torch
import transformers

from vocencebench.audio import Audio, load_audio, to_wav_bytes
from vocencebench.probes import _ecapa
from vocencebench.probes._audeering import age_gender_model_class
from vocencebench.probes.classifiers import (
    CLASSIFIER_MODELS,
    AccentProbe,
    AgeGenderProbe,
    EmotionProbe,
    resolve_device,
)
from vocencebench.schema import Item

SR = 16_000
LABELS = ("angry", "calm", "disgust", "fearful", "happy", "neutral", "sad", "surprised")
ECAPA_YAML = """\
n_mels: 80
compute_features: !new:speechbrain.lobes.features.Fbank
    n_mels: !ref <n_mels>
mean_var_norm: !new:speechbrain.processing.features.InputNormalization
    norm_type: sentence
    std_norm: False
embedding_model: !new:speechbrain.lobes.models.ECAPA_TDNN.ECAPA_TDNN
    input_size: !ref <n_mels>
    activation: !name:torch.nn.LeakyReLU
    channels: [1024, 1024, 1024, 1024, 3072]
    kernel_sizes: [5, 3, 3, 3, 1]
    dilations: [1, 2, 3, 4, 1]
    attention_channels: 128
    lin_neurons: 192
classifier: !new:speechbrain.lobes.models.ECAPA_TDNN.Classifier
    input_size: 192
    out_neurons: 16
"""


def _w2v2(large: bool, **extra: Any) -> Any:
    size = (dict(hidden_size=1024, num_hidden_layers=24, num_attention_heads=16,
                 intermediate_size=4096) if large else
            dict(hidden_size=32, num_hidden_layers=1, num_attention_heads=2, intermediate_size=64,
                 conv_dim=(32, 32), conv_kernel=(10, 8), conv_stride=(5, 4),
                 num_conv_pos_embeddings=16, num_conv_pos_embedding_groups=2))
    return transformers.Wav2Vec2Config(feat_extract_norm="layer", do_stable_layer_norm=True,
                                       conv_bias=True, **size, **extra)


def _extractor(path: Path) -> None:
    transformers.Wav2Vec2FeatureExtractor(  # type: ignore[no-untyped-call]
        feature_size=1, sampling_rate=SR, padding_value=0.0,
        do_normalize=True, return_attention_mask=True).save_pretrained(path)


def _clips(n: int, seconds: float) -> list[Audio]:
    rng = np.random.default_rng(0)
    out = []
    for i in range(n):
        dur = seconds * (0.95 + 0.1 * i / max(1, n - 1))
        t = np.arange(round(dur * SR)) / SR
        f0 = 100 + 15 * i
        x = sum(0.2 / k * np.sin(2 * np.pi * k * f0 * t) for k in range(1, 6))
        x = x + 0.01 * rng.standard_normal(t.size)
        out.append(load_audio(to_wav_bytes(np.asarray(x, dtype=np.float32), SR)))
    return out


def _item(i: int) -> Item:
    traits = {"gender": "female", "age": "30", "pace": "moderate", "pitch": "medium",
              "loudness": "normal", "emotion": "happy", "accent": "British", "tone": "warm"}
    return Item(id=f"b{i}", instruction="x", text="x", traits=traits, difficulty=1)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--device", default="auto")
    ap.add_argument("--clips", type=int, default=8)
    ap.add_argument("--seconds", type=float, default=3.0)
    ap.add_argument("--batch-size", type=int, default=8)
    args = ap.parse_args()
    device = resolve_device(args.device)
    torch.manual_seed(0)
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        (root / "ag").mkdir()
        age_gender_model_class()(_w2v2(False)).save_pretrained(root / "ag")
        _extractor(root / "ag")
        (root / "emo").mkdir()
        cfg = dict(id2label=dict(enumerate(LABELS)), label2id={k: i for i, k in enumerate(LABELS)})
        transformers.Wav2Vec2ForSequenceClassification(_w2v2(False, **cfg)).save_pretrained(
            root / "emo")
        _extractor(root / "emo")
        acc = root / "acc"
        acc.mkdir()
        (acc / "hyperparams.yaml").write_text(ECAPA_YAML, encoding="utf-8")
        mods = _ecapa._build_modules(torch)
        s = _ecapa._settings(_ecapa.read_hparams(acc / "hyperparams.yaml"))
        emb = mods["ECAPA_TDNN"](80, lin_neurons=192, act="leaky_relu", channels=s["channels"],
                                 kernel_sizes=s["kernel_sizes"], dilations=s["dilations"],
                                 attention_channels=128, res2net_scale=8, se_channels=128,
                                 global_context=True, groups=[1] * 5)
        torch.save(emb.state_dict(), acc / "embedding_model.ckpt")
        torch.save(mods["Classifier"](192, 0, 192, 16).state_dict(), acc / "classifier.ckpt")
        _ecapa.write_label_encoder(acc / "label_encoder.txt",
                                   CLASSIFIER_MODELS["accent"].labels)

        kw = dict(device=device, batch_size=args.batch_size)
        ag = AgeGenderProbe(source=root / "ag", **kw)
        ag._model = age_gender_model_class()(_w2v2(True)).to(device).eval()
        emo = EmotionProbe(source=root / "emo", **kw)
        big: Any = transformers.Wav2Vec2ForSequenceClassification(_w2v2(True, **cfg))
        emo._model = big.to(device).eval()
        accent = AccentProbe(source=acc, **kw)

        clips = _clips(args.clips, args.seconds)
        items = [_item(i) for i in range(len(clips))]
        audio_s = sum(c.duration for c in clips)
        rows = []
        for probe in (ag, emo, accent):
            probe.measure_batch(clips[:1], items[:1])  # warm-up
            if device.startswith("cuda"):
                torch.cuda.synchronize()
            t0 = time.perf_counter()
            probe.measure_batch(clips, items)
            if device.startswith("cuda"):
                torch.cuda.synchronize()
            dt = time.perf_counter() - t0
            rows.append({"probe": probe.name, "clips_per_s": round(len(clips) / dt, 3),
                         "rtf": round(dt / audio_s, 4), "seconds": round(dt, 3)})
    print(json.dumps({"device": device, "torch_threads": torch.get_num_threads(),
                      "cpu": platform.processor() or platform.machine(),
                      "clips": len(clips), "clip_seconds": args.seconds,
                      "batch_size": args.batch_size, "results": rows}, indent=2))


if __name__ == "__main__":
    main()
