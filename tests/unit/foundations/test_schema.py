"""Every record round-trips through JSON exactly and carries a schema version."""

from __future__ import annotations

import json

import pytest

from vocencebench.errors import ConfigError
from vocencebench.schema import (
    SCHEMA_VERSION,
    Decision,
    Item,
    ProbeResult,
    Record,
    SampleScore,
    Verdict,
    dumps_canonical,
)

RECORDS: list[Record] = [
    Item(
        id="vb-00001",
        instruction="A playful young woman with an Indian accent, loud and surprised.",
        text="Oh my gosh, you brought the puppy?",
        traits={"gender": "female", "age": "20", "accent": "Indian"},
        difficulty=1,
    ),
    Item(id="vb-00002", instruction="i", text="Call 555-0199 by 5 p.m.", traits={},
         difficulty=2, category="numbers"),
    ProbeResult(trait="pitch", value=231.7, unit="Hz", label="high", d=1.0,
                probe="f0-median@1", detail={"semitones": 3.25, "voiced": 0.71}),
    ProbeResult(trait="emotion", value="sad", unit="", label="sad", d=0.0, probe="ser@1"),
    Verdict(winner="b", score_a=1.5, score_b=2.5, reasoning_a="flat", reasoning_b="warm",
            confidence=0.8, consistent=True, dimension="tone", model="m", prompt_version="p1",
            raw=("{}", "{}")),
    SampleScore(item="vb-00001", system="sys", S=0.1 + 0.2,
                d={"pace": 0.5, "naturalness": 2 / 3}, gate=1, wer=0.0417),
    SampleScore(item="vb-00002", system="sys", S=0.0, gate=None, failure="synthesis: timeout"),
    Decision(winner="b", lcb=0.03821342833333334, margin=0.03389428583333333,
             mean_a=0.6610571416666667, mean_b=0.7307188333333333, n=120, reason="because",
             labels=("a", "b"), lcb_reverse=-0.100670795, margin_reverse=0.02692811666666667,
             mean_delta=0.06966169166666666),
]


@pytest.mark.parametrize("record", RECORDS, ids=lambda r: type(r).__name__)
def test_round_trip_is_exact(record: Record) -> None:
    text = record.to_json()
    data = json.loads(text)
    assert data["schema_version"] == SCHEMA_VERSION
    assert data["kind"] == type(record).kind and data["kind"]
    back = type(record).from_json(text)
    assert back == record
    assert back.to_json() == text  # canonical: same bytes again


def test_decision_floats_survive_bit_for_bit() -> None:
    d = RECORDS[-1]
    assert isinstance(d, Decision)
    back = Decision.from_json(d.to_json())
    for name in ("lcb", "margin", "mean_a", "mean_b", "lcb_reverse", "margin_reverse",
                 "mean_delta"):
        assert repr(getattr(back, name)) == repr(getattr(d, name))
    assert back.labels == ("a", "b") and isinstance(back.labels, tuple)


def test_other_schema_version_is_refused_with_advice() -> None:
    data = RECORDS[0].to_dict()
    data["schema_version"] = SCHEMA_VERSION + 1
    with pytest.raises(ConfigError, match=r"schema_version 2.*Re-run"):
        Item.from_dict(data)


def test_missing_field_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match="cannot read SampleScore"):
        SampleScore.from_dict({"item": "x", "S": 0.5})


@pytest.mark.parametrize("s", [-0.01, 1.01, float("nan"), float("inf")])
def test_sample_score_s_must_be_on_unit_interval(s: float) -> None:
    with pytest.raises(ConfigError, match="not in \\[0, 1\\]"):
        SampleScore(item="i", system="s", S=s)


def test_verdict_winner_is_checked() -> None:
    with pytest.raises(ConfigError, match="'a', 'b' or 'tie'"):
        Verdict(winner="c", score_a=0, score_b=0, reasoning_a="", reasoning_b="",  # type: ignore[arg-type]
                confidence=0, consistent=True, dimension="tone", model="m", prompt_version="p")


def test_canonical_json_is_sorted_compact_and_refuses_nan() -> None:
    assert dumps_canonical({"b": 1, "a": "é"}) == '{"a":"é","b":1}'
    with pytest.raises(ValueError):
        dumps_canonical({"x": float("nan")})
