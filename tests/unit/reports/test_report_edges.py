"""Report numbers in the cases an audit recomputed by hand: a system that fails everywhere,
a level response whose middle level strays, and a run stopped early."""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np

import vocencebench as vb
from judge_fakes import tone_wav
from vocencebench.decide import desirability
from vocencebench.probes.base import ProbeSet
from vocencebench.report import render_html, render_markdown, render_summary
from vocencebench.schema import ProbeResult

LOW, HIGH = tone_wav(220.0), tone_wav(440.0)


def _side(audio: Any) -> str:
    x = np.asarray(audio.samples)
    crossings = np.count_nonzero(np.diff(np.signbit(x))) / (2 * audio.duration)
    return "a" if crossings < 330 else "b"


class _Loudness:
    """Loudness by side and requested level (LUFS), labelled as the probe would."""

    name, version, traits = "lufs", "1", ("loudness",)

    def __init__(self, levels: dict[str, dict[str, float]]) -> None:
        self.levels = levels

    def measure(self, audio: Any, item: vb.Item) -> dict[str, ProbeResult]:
        want = item.traits["loudness"]
        v = self.levels[_side(audio)][want]
        label = "quiet" if v < -26 else "loud" if v > -20 else "normal"
        return {"loudness": ProbeResult("loudness", v, "LUFS", label,
                                        desirability("loudness", label, want), "lufs@1")}


class _Fails:
    system_id = "always-fails"

    def __call__(self, text: str, instruction: str) -> bytes:
        raise RuntimeError("out of service")


def _items(levels: list[str]) -> list[vb.Item]:
    base = vb.load_benchmark("benchmark_v1")[: len(levels)]
    return [dataclasses.replace(it, traits={**it.traits, "loudness": lv})
            for it, lv in zip(base, levels, strict=True)]


def _run(a: Any, probe: _Loudness, n: int = 6) -> vb.Head2Head:
    return vb.benchmark(_items(["quiet", "normal", "loud"] * (n // 3)), a, lambda t, i: HIGH,
                        probes=ProbeSet([probe], check_speech=False), labels=("A", "B"),
                        progress=False, canaries=False, workers=1)


STEADY = {"quiet": -30.0, "normal": -23.0, "loud": -16.0}


def test_a_system_failing_everywhere_leaves_the_other_systems_dimensions_scored() -> None:
    # Every dimension b was scored on read "not scored in this run", beside an empty table.
    h = _run(_Fails(), _Loudness({"a": STEADY, "b": STEADY}))
    assert all(p.b.d.get("loudness") == 1.0 for p in h.pairs)
    for text in (render_summary(h), render_markdown(h), render_html(h)):
        missing = next(line for line in text.splitlines() if "not scored" in line)
        assert "gender" in missing and "loudness" not in missing, missing
        assert "no item has clips of both systems that every instrument scored" in text


def test_the_level_span_is_the_highest_level_minus_the_lowest() -> None:
    # quiet and loud alike, normal 6 LU off: max − min said a 6 LU span and no FLAT.
    h = _run(lambda t, i: LOW, _Loudness({"a": {"quiet": -23.0, "normal": -17.0,
                                                "loud": -23.0}, "b": STEADY}))
    md = render_markdown(h)
    span = next(line for line in md.splitlines() if line.startswith("| span"))
    assert span == "| span (highest − lowest level) | A 0.00 LUFS — FLAT | B 14.00 LUFS |"
    assert "FLAT (measured value does not move with the requested level): A loudness" in \
        render_summary(h)
