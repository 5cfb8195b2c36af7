"""metrics.level_response: raw measured value per requested level."""

from __future__ import annotations

import pytest

from vocencebench.metrics import level_response
from vocencebench.schema import UNMEASURABLE, ProbeResult


def lufs(v: float | None) -> ProbeResult:
    if v is None:
        return ProbeResult("loudness", None, "LUFS", UNMEASURABLE, 0.0, "l@1",
                           {"unmeasurable": "below gate"})
    return ProbeResult("loudness", v, "LUFS", "quiet", 1.0, "l@1")


def test_flat_system_is_visibly_flat_and_unmeasurable_is_counted() -> None:
    pairs = [({"loudness": lvl}, {"loudness": lufs(-26.0 + 0.1 * k)})
             for k, lvl in enumerate(["quiet", "normal", "loud"] * 3)]
    pairs.append(({"loudness": "loud"}, {"loudness": lufs(None)}))
    out = level_response(pairs)
    r = out["loudness"]
    assert r.unit == "LUFS"
    assert [s.level for s in r.levels] == ["quiet", "normal", "loud"]  # registry order
    loud = r.get("loud")
    assert loud.n == 3 and loud.unmeasurable == 1
    assert loud.mean == pytest.approx(-26.0 + 0.1 * (2 + 5 + 8) / 3)
    spread = max(s.mean or 0 for s in r.levels) - min(s.mean or 0 for s in r.levels)
    assert spread < 0.5  # flat: every request near −26 LUFS


def test_pitch_semitones_and_stats() -> None:
    def f0(v: float, st: float) -> ProbeResult:
        return ProbeResult("pitch", v, "Hz", "medium", 1.0, "p@1", {"semitones": st})

    pairs = [({"pitch": "low"}, {"pitch": f0(90.0, -3.5)}),
             ({"pitch": "low"}, {"pitch": f0(100.0, -1.6)}),
             ({"pitch": "high"}, {"pitch": f0(150.0, 5.4)})]
    r = level_response(pairs, traits=("pitch",))["pitch"]
    low = r.get("low")
    assert (low.n, low.mean, low.median, low.min, low.max) == (2, 95.0, 95.0, 90.0, 100.0)
    assert low.sd == pytest.approx(7.0710678)
    assert low.mean_st == pytest.approx(-2.55)
    high = r.get("high")
    assert high.sd == 0.0 and high.mean_st == pytest.approx(5.4)
    with pytest.raises(KeyError):
        r.get("medium")


def test_only_unmeasurable_and_absent_traits() -> None:
    out = level_response([({"loudness": "quiet"}, {"loudness": lufs(None)}),
                          ({"loudness": "quiet"}, {})])
    s = out["loudness"].get("quiet")
    assert s.n == 0 and s.unmeasurable == 1 and s.mean is None and s.sd is None
    assert "pitch" not in out
