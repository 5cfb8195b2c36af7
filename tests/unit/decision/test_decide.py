"""The decision arithmetic: desirability, composite, gate, bootstrap, margin, decide.

Golden values are checked against an independent recomputation in plain Python (integers for
the indices, ``math.fsum`` in a loop for the means, the documented interpolation formula for
the percentile), and then pinned bit-for-bit.
"""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from repo_paths import DATA
from vocencebench import decide as D
from vocencebench.errors import ConfigError, ScoresError
from vocencebench.schema import Decision
from vocencebench.scores import read_scores
from vocencebench.traits import TRAITS

GOLDEN_FIRST_10_N496 = [145, 33, 337, 434, 361, 235, 283, 216, 34, 25]


# ------------------------------------------------------------------ independent reference


def ref_indices(n: int, n_boot: int, seed: int = 3151662) -> list[int]:
    raw = np.random.PCG64(seed).random_raw(n_boot * n).tolist()
    return [(int(r) * n) >> 64 for r in raw]  # Python ints: the exact 128-bit product


def ref_means(delta: list[float], n_boot: int = 2000) -> list[float]:
    n = len(delta)
    idx = ref_indices(n, n_boot)
    out = []
    for b in range(n_boot):
        picked = []
        for j in range(n):
            picked.append(delta[idx[b * n + j]])
        out.append(math.fsum(picked) / n)
    return out


def ref_percentile(xs: list[float], q: float) -> float:
    """NumPy's default 'linear' method, written out (see docs/reproducibility.md)."""
    s = sorted(xs)
    h = (len(s) - 1) * (q / 100)
    lo = math.floor(h)
    hi = min(lo + 1, len(s) - 1)
    t = h - lo
    a, b = s[lo], s[hi]
    return b - (b - a) * (1 - t) if t >= 0.5 else a + (b - a) * t


# ------------------------------------------------------------------ desirability


@pytest.mark.parametrize(
    ("trait", "measured", "requested", "expected"),
    [
        ("pace", "slow", "slow", 1.0),
        ("pace", "moderate", "slow", 0.5),
        ("pace", "fast", "slow", 0.0),
        ("pitch", "medium", "high", 0.5),
        ("loudness", "quiet", "loud", 0.0),
        ("gender", "female", "female", 1.0),
        ("gender", "male", "female", 0.0),
        ("emotion", "calm", "neutral", 0.0),
        ("accent", "Indian", "Indian", 1.0),
        ("age", 30.0, "30", 1.0),
        ("age", 38.0, "30", 1.0),  # |m − r| = 8: still full credit
        ("age", 22.0, "30", 1.0),
        ("age", 42.0, "30", 0.5),  # 12 years off: half way down the ramp
        ("age", 46.0, "30", 0.0),  # 16 years: zero
        ("age", 70.0, "30", 0.0),
        ("age", 8.0, 12, 1.0),
        ("tone", 3, None, 1.0),
        ("tone", 2, "warm", 2 / 3),
        ("tone", 1.5, None, 0.5),
        ("tone", 0, None, 0.0),
    ],
)
def test_desirability_table(trait: str, measured: str | float, requested: str | None,
                            expected: float) -> None:
    assert D.desirability(trait, measured, requested) == expected


def test_desirability_accepts_a_trait_object_and_checks_inputs() -> None:
    assert D.desirability(TRAITS["pace"], "fast", "moderate") == 0.5
    with pytest.raises(ConfigError, match="valid values: slow, moderate, fast"):
        D.desirability("pace", "brisk", "slow")
    with pytest.raises(ConfigError, match="needs the requested value"):
        D.desirability("pace", "slow")
    with pytest.raises(ConfigError, match="outside 0–3"):
        D.desirability("tone", 4)
    with pytest.raises(ConfigError, match="non-finite"):
        D.desirability("age", float("nan"), "30")
    with pytest.raises(ConfigError, match="valid traits: gender"):
        D.desirability("timbre", "x", "y")


# ------------------------------------------------------------------ composite and gate


def test_worked_example_arithmetic_vs_geometric() -> None:
    d = [1.0] * 8 + [0.05]
    assert round(math.fsum(d) / 9, 3) == 0.894
    s = D.composite(d)
    assert round(s, 3) == 0.717
    assert s == pytest.approx(0.05 ** (1 / 9), rel=1e-15)


def test_composite_details() -> None:
    assert D.composite({"pace": 0.0, "pitch": 1.0}) == pytest.approx(math.sqrt(D.EPSILON))
    assert D.composite([0.3, 0.3, 0.3]) == pytest.approx(0.3)
    assert D.composite([1.0] * 9) == 1.0
    assert D.composite([0.5], g=None) == 0.5  # gate off counts as passing
    assert D.composite([], g=1) == 1.0 and D.composite([], g=0) == 0.0
    for bad in (1.5, -0.1, float("nan")):
        with pytest.raises(ConfigError, match="not a number in \\[0, 1\\]"):
            D.composite([bad])
    with pytest.raises(ConfigError, match="gate must be 0 or 1"):
        D.composite([0.5], g=2)


def test_gate_threshold() -> None:
    assert D.WER_THRESHOLD == 0.15
    assert D.gate(0.0) == 1 and D.gate(0.15) == 1
    assert D.gate(0.1500001) == 0 and D.gate(1.7) == 0
    for bad in (float("nan"), -0.1):
        with pytest.raises(ConfigError, match="finite fraction"):
            D.gate(bad)


unit = st.floats(min_value=0.0, max_value=1.0, allow_nan=False)


@given(st.lists(unit, min_size=0, max_size=12), st.sampled_from([0, 1, None]))
def test_composite_is_on_unit_interval(d: list[float], g: int | None) -> None:
    s = D.composite(d, g)
    assert 0.0 <= s <= 1.0
    if g == 0:
        assert s == 0.0


@given(st.lists(unit, min_size=1, max_size=12), st.data())
def test_composite_is_monotone_in_every_dimension(d: list[float], data: st.DataObject) -> None:
    j = data.draw(st.integers(0, len(d) - 1))
    higher = data.draw(st.floats(min_value=d[j], max_value=1.0, allow_nan=False))
    raised = [*d[:j], higher, *d[j + 1:]]
    assert D.composite(raised) >= D.composite(d)
    assert D.composite(raised, 0) == D.composite(d, 0) == 0.0


# ------------------------------------------------------------------ margin


@pytest.mark.parametrize(
    ("incumbent", "expected"),
    [(0.0, 0.1), (0.5, 0.05), (0.8, 0.1 * (1 - 0.8)), (0.85, 0.015), (0.95, 0.015), (1.0, 0.015)],
)
def test_margin(incumbent: float, expected: float) -> None:
    assert D.margin(incumbent) == pytest.approx(expected, abs=1e-15)
    assert D.margin(incumbent) >= D.MARGIN_FLOOR


def test_constants_are_the_frozen_ones() -> None:
    assert (D.EPSILON, D.BOOTSTRAP_N, D.BOOTSTRAP_SEED, D.ALPHA) == (0.01, 2000, 3151662, 0.05)
    assert (D.MARGIN_FLOOR, D.MARGIN_SCALE) == (0.015, 0.10)


# ------------------------------------------------------------------ bootstrap


def test_golden_first_ten_indices_n496() -> None:
    idx = D.bootstrap_indices(496)
    assert idx.shape == (2000, 496) and idx.dtype == np.int64
    assert idx.ravel()[:10].tolist() == GOLDEN_FIRST_10_N496
    assert ref_indices(496, 1)[:10] == GOLDEN_FIRST_10_N496


@pytest.mark.parametrize("n", [1, 2, 3, 7, 496, 1000, (1 << 31) + 11])
def test_indices_equal_exact_integer_arithmetic(n: int) -> None:
    raw = np.random.PCG64(99).random_raw(4096)
    got = D._index_block(raw, n).tolist()
    assert got == [(int(r) * n) >> 64 for r in raw.tolist()]
    assert all(0 <= i < n for i in got)
    extremes = np.array([0, 1, (1 << 64) - 1, 1 << 63, (1 << 32) - 1, 1 << 32], dtype=np.uint64)
    assert D._index_block(extremes, n).tolist() == [(int(r) * n) >> 64 for r in extremes.tolist()]


def test_all_indices_match_reference_and_chunking_is_invisible(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    n = 37
    whole = D.bootstrap_indices(n)
    assert whole.ravel().tolist() == ref_indices(n, 2000)
    values = [math.sin(i) / 3 for i in range(n)]
    means = D.bootstrap_means(values)
    monkeypatch.setattr(D, "_CHUNK_ELEMENTS", 100)  # 2 resamples per block
    assert np.array_equal(D.bootstrap_indices(n), whole)
    assert np.array_equal(D.bootstrap_means(values), means)
    monkeypatch.setattr(D, "_CHUNK_ELEMENTS", 1)  # smaller than one resample
    assert np.array_equal(D.bootstrap_means(values), means)


def test_bootstrap_means_are_exactly_rounded_fsum() -> None:
    # values whose naive sum depends on order: fsum gets the exact answer every time
    values = [1e16, 1.0, -1e16, 0.1, 0.2, -0.3, 3.0]
    means = D.bootstrap_means(values, n_boot=300)
    assert means.tolist() == ref_means(values, n_boot=300)


def test_bootstrap_rejects_bad_input() -> None:
    with pytest.raises(ConfigError, match="at least one"):
        D.bootstrap_indices(0)
    with pytest.raises(ConfigError, match="n_boot"):
        D.bootstrap_indices(5, n_boot=0)
    with pytest.raises(ScoresError, match="not finite"):
        D.bootstrap_means([0.1, float("inf")])


def test_lower_confidence_bound_is_the_documented_interpolation() -> None:
    means = D.bootstrap_means([math.cos(i * 0.7) for i in range(50)])
    assert D.lower_confidence_bound(means) == ref_percentile(means.tolist(), 5.0)


# ------------------------------------------------------------------ decide


def _golden_pairs() -> tuple[list[float], list[float]]:
    paired = read_scores(DATA / "golden_scores.jsonl").pair()
    return list(paired.a), list(paired.b)


def test_golden_decision_recomputed_independently() -> None:
    a, b = _golden_pairs()
    n = len(a)
    delta = [y - x for x, y in zip(a, b, strict=True)]
    means = ref_means(delta)
    lcb = ref_percentile(means, 5.0)
    lcb_rev = ref_percentile([-m for m in means], 5.0)
    mean_a, mean_b = math.fsum(a) / n, math.fsum(b) / n
    d = D.decide(a, b, labels=("incumbent", "challenger"))
    assert repr(d.lcb) == repr(lcb)
    assert repr(d.lcb_reverse) == repr(lcb_rev)
    assert repr(d.mean_a) == repr(mean_a) and repr(d.mean_b) == repr(mean_b)
    assert repr(d.margin) == repr(max(0.015, 0.10 * (1 - mean_a)))
    assert repr(d.margin_reverse) == repr(max(0.015, 0.10 * (1 - mean_b)))
    assert d.winner == ("challenger" if lcb > d.margin else "tie")


def test_golden_decision_bit_for_bit() -> None:
    a, b = _golden_pairs()
    d = D.decide(a, b, labels=("incumbent", "challenger"))
    golden = json.loads((DATA / "golden_decision.json").read_text(encoding="utf-8"))
    got = d.to_dict()
    assert set(got) == set(golden)
    for key, value in golden.items():
        if isinstance(value, float):
            assert repr(got[key]) == repr(value), key
        else:
            assert got[key] == value, key
    assert d == Decision.from_dict(golden)
    assert d.winner == "challenger"  # a narrow but real, audible win: 0.0382 > 0.0339


def test_reason_is_a_complete_audit_trail() -> None:
    a, b = _golden_pairs()
    reason = D.decide(a, b, labels=("incumbent", "challenger")).reason
    for part in ("n=120", "incumbent=0.6611", "challenger=0.7307", "+0.0697", "2000 resamples",
                 "seed 3151662", "LCB(challenger−incumbent)=+0.0382",
                 "margin(incumbent)=max(0.015, 0.10×(1−0.6611))=0.0339", "challenger wins"):
        assert part in reason


def test_decide_input_errors() -> None:
    with pytest.raises(ScoresError, match="unpaired scores: 2 for 'a' but 1 for 'b'"):
        D.decide([0.1, 0.2], [0.3])
    with pytest.raises(ScoresError, match="no paired samples"):
        D.decide([], [])
    with pytest.raises(ScoresError, match=r"b\[1\] = nan is not finite"):
        D.decide([0.1, 0.2], [0.3, float("nan")])
    with pytest.raises(ScoresError, match=r"a: S\[0\] = 1.2 is outside"):
        D.decide([1.2], [0.3])
    with pytest.raises(ScoresError, match="different labels"):
        D.decide([0.1], [0.3], labels=("x", "x"))


def test_a_can_win_and_the_reverse_bound_decides_it() -> None:
    a, b = _golden_pairs()
    d = D.decide(b, a, labels=("challenger", "incumbent"))
    assert d.winner == "challenger"
    assert "challenger wins: LCB(challenger−incumbent)=+0.0382" in d.reason
    assert "margin(incumbent)=max(0.015, 0.10×(1−0.6611))=0.0339" in d.reason
    # the roles of the two bounds swap exactly
    assert repr(d.lcb_reverse) == "0.03821342833333334" and repr(d.lcb) == "-0.100670795"


paired_lists = st.integers(min_value=1, max_value=25).flatmap(
    lambda n: st.tuples(
        st.lists(unit, min_size=n, max_size=n),
        st.lists(unit, min_size=n, max_size=n),
        st.sampled_from([0.0, 0.2, 0.5]),
    )
)


@settings(max_examples=40, deadline=None)
@given(paired_lists)
def test_swapping_systems_swaps_the_winner(case: tuple[list[float], list[float], float]) -> None:
    a, b, shift = case
    b = [min(1.0, v + shift) for v in b]  # so that some cases have a real winner
    forward = D.decide(a, b, labels=("x", "y"), n_boot=300)
    backward = D.decide(b, a, labels=("y", "x"), n_boot=300)
    assert forward.winner == backward.winner
    assert forward.lcb == backward.lcb_reverse and forward.lcb_reverse == backward.lcb


@settings(max_examples=40, deadline=None)
@given(st.lists(unit, min_size=1, max_size=30))
def test_identical_systems_tie(a: list[float]) -> None:
    d = D.decide(a, list(a), n_boot=300)
    assert d.winner == "tie" and d.lcb == 0.0 and d.lcb_reverse == 0.0 and d.mean_delta == 0.0
