"""A system's identity keys its cached clips: two *different* systems must never share one.

The hostile case: two lambdas of one function (or two instances of one class without a
``system_id``) get the same fallback identity ``callable:module.qualname``; without the check
the second system would be scored on the first one's cached clips, a silent tie."""

from __future__ import annotations

from pathlib import Path

import pytest

import vocencebench as vb
from judge_fakes import PitchProbe, Tone
from vocencebench.adapters import system_id
from vocencebench.errors import ConfigError
from vocencebench.schema import INCOMPLETE

ITEMS = vb.load_benchmark("benchmark_v1")[:2]


def _two_lambdas() -> tuple[object, object, list[str]]:
    calls: list[str] = []
    low, high = Tone(120.0, "low"), Tone(240.0, "high")

    def make(tone: Tone, name: str) -> object:
        return lambda text, instruction: (calls.append(name), tone(text, instruction))[1]

    return make(low, "a"), make(high, "b"), calls


def test_two_lambdas_are_refused_before_any_synthesis(tmp_path: Path) -> None:
    a, b, calls = _two_lambdas()
    assert system_id(a) == system_id(b)  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match=r"same identity.*system_id"):
        vb.benchmark(ITEMS, a, b, probes=vb.ProbeSet([PitchProbe()], check_speech=False),  # type: ignore[arg-type]
                     cache=tmp_path / "c.sqlite", workers=1, progress=False, canaries=False)
    with pytest.raises(ConfigError, match="'one' and 'two'"):
        vb.leaderboard(ITEMS, {"one": a, "two": b, "three": Tone(300.0, "c")},  # type: ignore[dict-item]
                       probes=vb.ProbeSet([PitchProbe()], check_speech=False),
                       cache=tmp_path / "c.sqlite", workers=1, progress=False, canaries=False)
    assert calls == []


def test_an_a_a_test_is_still_allowed() -> None:
    probes = vb.ProbeSet([PitchProbe()], check_speech=False)
    same = Tone(150.0, "same")
    # one object twice, and two objects with one explicit system_id: the same configuration
    for a, b in ((same, same), (Tone(150.0, "same"), Tone(150.0, "same"))):
        h = vb.benchmark(ITEMS, a, b, probes=probes, workers=1, progress=False,
                         canaries=False)
        assert h.decision.winner not in (INCOMPLETE, "a", "b")
        assert all(p.a.S == p.b.S for p in h.pairs)
