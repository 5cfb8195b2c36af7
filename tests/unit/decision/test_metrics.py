"""Win rates, control success, confusion matrices and bootstrap CIs."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from vocencebench.decide import bootstrap_means, decide
from vocencebench.errors import ConfigError, ScoresError
from vocencebench.metrics import (
    ConfidenceInterval,
    ConfusionMatrix,
    bootstrap_ci,
    confusion_matrices,
    control_success,
    win_rates,
)
from vocencebench.traits import NATURALNESS, TRAITS

# ------------------------------------------------------------------ win rates


def test_win_rates_count_ties_as_half() -> None:
    a = [
        {"pace": 1.0, "tone": 2 / 3, NATURALNESS: 1 / 3},
        {"pace": 0.5, "tone": 1.0, NATURALNESS: 1.0},
        {"pace": 0.0, "tone": 1 / 3},
        {"pace": 1.0},
    ]
    b = [
        {"pace": 1.0, "tone": 1.0, NATURALNESS: 2 / 3},
        {"pace": 1.0, "tone": 1 / 3, NATURALNESS: 1.0},
        {"pace": 0.5, "tone": 1 / 3, NATURALNESS: 0.0},  # naturalness only for b: skipped
        {"pace": 0.0, "tone": 1.0},  # tone only for b: skipped
    ]
    wr = win_rates(a, b)
    assert list(wr) == ["pace", "tone", NATURALNESS]  # registry order
    pace = wr["pace"]
    assert (pace.wins_a, pace.wins_b, pace.ties, pace.n) == (1, 2, 1, 4)
    assert pace.rate == 2.5 / 4 and pace.rate_a == 1.5 / 4
    tone = wr["tone"]
    assert (tone.wins_a, tone.wins_b, tone.ties, tone.n) == (1, 1, 1, 3)
    assert tone.rate == 0.5
    nat = wr[NATURALNESS]
    assert (nat.wins_b, nat.ties, nat.n, nat.rate) == (1, 1, 2, 0.75)


def test_win_rates_errors() -> None:
    with pytest.raises(ScoresError, match="unpaired samples: 1 for a but 0 for b"):
        win_rates([{"pace": 1.0}], [])
    with pytest.raises(ConfigError, match="unknown dimension 'speed'; valid: gender"):
        win_rates([{"speed": 1.0}], [{"speed": 0.0}])
    with pytest.raises(ScoresError, match=r"sample 0 system b pace: desirability 1\.5"):
        win_rates([{"pace": 1.0}], [{"pace": 1.5}])
    with pytest.raises(ScoresError, match="not a number"):
        win_rates([{"pace": "1"}], [{"pace": 1.0}])  # type: ignore[dict-item]


@pytest.mark.slow
@given(st.lists(st.dictionaries(st.sampled_from(["pace", "age", NATURALNESS]),
                                st.sampled_from([0.0, 0.5, 1.0])), max_size=15), st.data())
def test_win_rates_are_antisymmetric(a: list[dict[str, float]], data: st.DataObject) -> None:
    b = [data.draw(st.dictionaries(st.sampled_from(["pace", "age", NATURALNESS]),
                                   st.sampled_from([0.0, 0.5, 1.0]))) for _ in a]
    forward, backward = win_rates(a, b), win_rates(b, a)
    assert forward.keys() == backward.keys()
    for dim, w in forward.items():
        assert 0.0 <= w.rate <= 1.0
        assert w.rate == backward[dim].rate_a
        assert w.wins_a + w.wins_b + w.ties == w.n > 0


# ------------------------------------------------------------------ control success


def test_control_success_is_share_of_exact_hits() -> None:
    samples = [
        {"pace": 1.0, "age": 1.0, "tone": 1.0, NATURALNESS: 1.0},
        {"pace": 0.5, "age": 0.999, "tone": 2 / 3},
        {"pace": 1.0, "age": 0.0},
        {"gender": 1.0},
    ]
    cs = control_success(samples)
    assert list(cs) == ["gender", "age", "pace", "tone"]  # registry order, no naturalness
    assert (cs["pace"].successes, cs["pace"].n, cs["pace"].rate) == (2, 3, 2 / 3)
    assert (cs["age"].successes, cs["age"].n) == (1, 3)  # 0.999 is not a success
    assert (cs["tone"].successes, cs["tone"].n) == (1, 2)
    assert cs["gender"].rate == 1.0
    assert control_success([]) == {}


def test_control_success_errors() -> None:
    with pytest.raises(ConfigError, match="unknown trait 'speed'; valid traits: gender"):
        control_success([{"speed": 1.0}])
    with pytest.raises(ScoresError, match="sample 0 pace: desirability nan"):
        control_success([{"pace": float("nan")}])


# ------------------------------------------------------------------ confusion


def test_confusion_matrices_cover_every_categorical_and_ordinal_trait() -> None:
    requested = [
        {"pace": "slow", "gender": "male", "emotion": "sad", "age": "30", "tone": "warm"},
        {"pace": "slow", "gender": "female", "emotion": "sad"},
        {"pace": "fast", "gender": "female", "emotion": "happy"},
        {"pace": "moderate"},
    ]
    measured = [
        {"pace": "slow", "gender": "male", "emotion": "sad", "age": "31"},
        {"pace": "moderate", "gender": "male", "emotion": "other"},
        {"pace": "fast", "gender": "female"},
        {},
    ]
    cms = confusion_matrices(requested, measured)
    expected = [t.name for t in TRAITS if t.scoring in ("categorical", "ordinal")]
    assert list(cms) == expected == ["gender", "pace", "pitch", "loudness", "emotion", "accent"]

    pace = cms["pace"]
    assert pace.rows == pace.columns == ("slow", "moderate", "fast")
    assert pace.counts == ((1, 1, 0), (0, 0, 0), (0, 0, 1))
    assert pace.missing == 1 and pace.total == 3 and pace.accuracy == 2 / 3
    assert pace.count("slow", "moderate") == 1

    emotion = cms["emotion"]
    assert emotion.rows == TRAITS["emotion"].values
    assert emotion.columns == (*TRAITS["emotion"].values, "other")  # unknown label kept
    assert emotion.count("sad", "other") == 1 and emotion.count("sad", "sad") == 1
    assert emotion.missing == 1

    gender = cms["gender"]
    assert gender.counts == ((1, 0), (1, 1))

    pitch = cms["pitch"]  # never requested: an empty matrix, not a missing one
    assert pitch.total == 0 and math.isnan(pitch.accuracy)


def test_confusion_errors() -> None:
    with pytest.raises(ConfigError, match="valid values: slow, moderate, fast"):
        confusion_matrices([{"pace": "brisk"}], [{"pace": "slow"}])
    with pytest.raises(ScoresError, match="2 requests but 1 measurements"):
        confusion_matrices([{}, {}], [{}])
    cm = ConfusionMatrix("pace", ("a", "b"), ("a", "b"), ((1, 0), (0, 1)))
    with pytest.raises(ConfigError, match="no cell"):
        cm.count("a", "zzz")


# ------------------------------------------------------------------ bootstrap CI


def test_ci_uses_the_decision_stream_and_its_lower_end_is_the_lcb(
        rng: np.random.Generator) -> None:
    a = rng.uniform(0.3, 0.9, 80).tolist()
    b = [min(1.0, v + float(e)) for v, e in zip(a, rng.normal(0.04, 0.08, 80), strict=True)]
    delta = [y - x for x, y in zip(a, b, strict=True)]
    ci = bootstrap_ci(delta, level=0.90)
    d = decide(a, b)
    assert ci.low == d.lcb  # same indices, same fsum means, same percentile
    assert ci.mean == d.mean_delta
    means = bootstrap_means(delta)
    assert ci.high == float(np.percentile(means, 95))
    assert (ci.n, ci.n_boot, ci.seed, ci.level) == (80, 2000, 3151662, 0.90)


def test_ci_default_is_95_percent_two_sided() -> None:
    values = [math.sin(i) for i in range(40)]
    ci = bootstrap_ci(values)
    means = bootstrap_means(values)
    assert isinstance(ci, ConfidenceInterval)
    assert ci.low == float(np.percentile(means, 2.5))
    assert ci.high == float(np.percentile(means, 97.5))
    assert ci.low < ci.mean < ci.high
    assert bootstrap_ci(values, seed=1).low != ci.low  # the seed is really used


@settings(max_examples=30, deadline=None)
@given(st.lists(st.floats(-1, 1, allow_nan=False), min_size=1, max_size=20))
@example([0.1, 0.1, 0.1])
def test_ci_brackets_are_ordered(values: list[float]) -> None:
    ci = bootstrap_ci(values, n_boot=200)
    # a mean of values is within their range up to the rounding of fsum(x) / n
    slack = 4 * math.ulp(1.0)
    assert min(values) - slack <= ci.low <= ci.high <= max(values) + slack


@pytest.mark.parametrize("level", [0.0, 1.0, 1.5, -0.2])
def test_ci_level_is_checked(level: float) -> None:
    with pytest.raises(ConfigError, match="strictly between 0 and 1"):
        bootstrap_ci([0.1, 0.2], level=level)


# ------------------------------------------------------------------ rater agreement (κ)


def test_kappa_by_hand_and_from_its_counts() -> None:
    from vocencebench.metrics import cohen_kappa, kappa_of_counts, label_counts

    first, second = ["a", "a", "b", "b"], ["a", "b", "b", "b"]
    counts = label_counts(first, second)
    assert counts.tolist() == [[1, 1, 0], [0, 2, 0], [0, 0, 0]]
    # p_o = 3/4, p_e = (2·1 + 2·3) / 16 = 1/2: κ = (3/4 − 1/2) / (1/2) = 1/2, exactly.
    assert cohen_kappa(first, second) == kappa_of_counts(counts) == 0.5
    assert cohen_kappa(["a", "b"], ["b", "a"]) == -1.0
    assert cohen_kappa(["a", "a"], ["a", "a"]) is None  # p_e = 1: undefined
    assert cohen_kappa([], []) is None
    assert cohen_kappa(["x", "y"], ["x", "x"], labels=("x", "y")) == 0.0


def test_kappa_refuses_what_it_cannot_count() -> None:
    from vocencebench.metrics import cohen_kappa

    with pytest.raises(ConfigError, match="got 2 and 1 labels"):
        cohen_kappa(["a", "b"], ["a"])
    with pytest.raises(ConfigError, match="label 'A' is not one of 'a', 'b', 'tie'"):
        cohen_kappa(["a", "A"], ["a", "b"])


def test_calibrate_and_judge_agree_compute_the_same_kappa_bits(rng: np.random.Generator) -> None:
    # Before they shared one κ, calibration summed rounded shares for p_e and judge_audit
    # divided integer sums once: the same labels gave other last bits in ~1 case in 5.
    from vocencebench import calibration, judge_audit, metrics

    labels = np.array(["a", "b", "tie"])
    for _ in range(500):
        n = int(rng.integers(1, 40))
        first = list(labels[rng.integers(0, 3, n)])
        second = [x if rng.random() < 0.6 else str(labels[rng.integers(0, 3)]) for x in first]
        want = metrics.cohen_kappa(first, second)
        assert calibration.cohen_kappa(first, second) == want
        assert judge_audit.cohen_kappa(first, second) == want
