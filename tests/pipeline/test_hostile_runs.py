"""Hostile cases through the whole pipeline (issues 11 and 12): output that is no speech
loses, whatever buckets it lands in; audio in any container a real server sends is scored
like the same audio in a plain WAV."""

from __future__ import annotations

import io
import struct

import numpy as np
import pytest
import soundfile as sf

import vocencebench as vb
from vocencebench.adapters import EspeakSystem
from vocencebench.gaming.attacks import NoiseAttack

ITEMS = vb.load_benchmark("benchmark_v1")[:8]


@pytest.mark.slow
def test_noise_that_hits_pace_and_loudness_loses_to_both_espeak_systems() -> None:
    flat, follow = EspeakSystem("espeak-flat"), EspeakSystem("espeak-follow")
    noise = NoiseAttack(flat)  # shaped noise, stretched and scaled into the requested buckets
    for honest, label in ((flat, "espeak-flat"), (follow, "espeak-follow")):
        h = vb.benchmark(ITEMS, honest, noise, labels=(label, "noise"), workers=1,
                         progress=False)
        assert h.decision.winner == label, h.decision.reason
        for p in h.pairs:  # no speech: every trait unmeasurable, d = 0, never dropped
            assert p.b.d and all(v == 0.0 for v in p.b.d.values()), p.b.d
            assert all(r.label == vb.UNMEASURABLE for r in p.analysis_b.probes.values())
            assert set(p.b.d) == set(p.a.d)


class _Repack:
    """The eSpeak clip re-sent the way real servers send it: FLAC, OGG/Vorbis, or a WAV
    whose size fields carry a streaming placeholder."""

    def __init__(self, how: str) -> None:
        self.how = how
        self.base = EspeakSystem("espeak-follow")
        self.system_id = f"repack-{how}"

    def __call__(self, text: str, instruction: str) -> bytes:
        wav = self.base(text, instruction)
        if self.how.startswith("wav-"):
            placeholder = {"wav-7fff": 0x7FFFFFFF, "wav-2e9": 2_000_000_000}[self.how]
            out = bytearray(wav)
            out[4:8] = struct.pack("<I", placeholder)
            pos = out.index(b"data")
            out[pos + 4:pos + 8] = struct.pack("<I", placeholder)
            return bytes(out)
        x, rate = sf.read(io.BytesIO(wav), dtype="float32")
        buf = io.BytesIO()
        fmt, subtype = {"flac": ("FLAC", "PCM_16"), "ogg": ("OGG", "VORBIS")}[self.how]
        sf.write(buf, x, rate, format=fmt, subtype=subtype)
        return buf.getvalue()


@pytest.mark.slow
@pytest.mark.parametrize("how", ["flac", "ogg", "wav-7fff", "wav-2e9"])
def test_audio_from_real_servers_is_scored_like_the_wav(how: str) -> None:
    items = ITEMS[:3]
    ref = vb.benchmark(items, EspeakSystem("espeak-flat"), EspeakSystem("espeak-follow"),
                       labels=("flat", "follow"), workers=1, progress=False, canaries=False)
    got = vb.benchmark(items, EspeakSystem("espeak-flat"), _Repack(how),
                       labels=("flat", "follow"), workers=1, progress=False, canaries=False)
    assert got.complete and all(p.b.failure is None for p in got.pairs)
    for r, g in zip(ref.pairs, got.pairs, strict=True):
        assert set(g.b.d) == set(r.b.d)
        if how != "ogg":  # lossless: the same labels; Vorbis may move a value slightly
            assert g.b.d == r.b.d
            assert np.isclose(g.b.S, r.b.S)
