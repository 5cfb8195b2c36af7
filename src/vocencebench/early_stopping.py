"""Verdict-invariant early stopping: the verdict's bounds over every outcome of the items the
judge has not answered, and the test that the verdict can no longer change.

Pure functions (data in, frozen records out); the pipeline
(:mod:`vocencebench._pipeline.stopping`) calls them after each batch of judged items, and
``vocencebench decide`` calls them again on the published rows. Why stopping cannot change a
verdict (``docs/methodology.md``, "Early stopping"):

* **LCB is monotone.** Each bootstrap mean is ``fsum(δ[idx_b]) / n``, a combination of the δᵢ
  with non-negative weights (how often resample b drew item i), so it is non-decreasing in
  every δᵢ; sorting preserves that (the k-th smallest of values that all grew did not
  shrink), and the 5th percentile is a convex combination of two neighbouring order
  statistics. So LCB(B − A) is non-decreasing in every δᵢ, and LCB(A − B), the same
  resamples negated, is non-increasing.
* **The margin is monotone.** ``margin(S̄) = max(0.015, 0.10 · (1 − S̄))`` is non-increasing in
  the incumbent's mean S̄, and S̄ is non-decreasing in every Sᵢ.
* **An unjudged item is bounded.** Its judged dimensions (tone, naturalness) will be some
  d ∈ [0, 1]; the composite ``g · exp(Σ ln max(dⱼ, ε) / k)`` is non-decreasing in each dⱼ, so
  with its probe d's and gate known, S lies in [S(judged d = 0), S(judged d = 1)]
  (:func:`range_of`; the floor ε applies exactly as in the composite). Then
  δᵢ ∈ [lo_B − hi_A, hi_B − lo_A].

Evaluating the LCB at the lowest δ vector and at the highest gives an interval that holds the
LCB of every possible outcome, and the same for the margins (:func:`verdict_bounds`). The
verdict is certain when one branch of the rule is settled for all outcomes at once
(:func:`certain_winner`): B wins if even the lowest LCB(B − A) exceeds the highest
margin(S̄_A); otherwise, when B can win in no outcome, A wins if even the lowest LCB(A − B)
exceeds the highest margin(S̄_B), and it is a tie if A can win in no outcome either. Any other
case is undecided and the judge goes on. These intervals ignore that A's and B's scores move
together (a high S_A(i) both lowers δᵢ and raises the margin): that makes them wider than the
true range, so the test may judge more than strictly needed, never less.

Floating point: the composite's ``fsum`` and the divisions are correctly rounded (rounding is
monotone), but ``exp``/``log`` and numpy's percentile interpolation are not guaranteed to be
monotone to the last bit. So a branch counts as settled only when its bound clears the
threshold by more than :data:`~vocencebench.constants.EARLY_STOP_SLACK` (10⁻⁹ on the [0, 1]
scale), about a million times the few-ulp error those steps can make on numbers ≤ 1: rounding
can widen no bound past the gap, and a verdict is never called certain on a rounding error.

The order in which items are judged is :func:`judge_order` (seeded, not the corpus order), in
batches of :data:`~vocencebench.constants.EARLY_STOP_BATCH`.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from .constants import BOOTSTRAP_N, BOOTSTRAP_SEED, EARLY_STOP_SLACK, JUDGE_ORDER_SEED
from .decide import bootstrap_means, composite, decide, lower_confidence_bound, margin
from .errors import ScoresError
from .schema import Decision, SampleScore

__all__ = [
    "Interval",
    "VerdictBounds",
    "certain_winner",
    "decide_ranges",
    "judge_order",
    "range_of",
    "sample_range",
    "verdict_bounds",
]

Range = tuple[float, float]


def judge_order(n: int, *, seed: int = JUDGE_ORDER_SEED) -> tuple[int, ...]:
    """The order in which ``stop_when_decided`` judges ``n`` items (corpus positions 0..n−1).

    Item i's key is ``raw[i]``, the i-th 64-bit output of ``numpy.random.PCG64(seed)
    .random_raw`` (NumPy promises that stream's stability); items are sorted by
    ``(raw[i], i)``. An item's key does not depend on ``n``, so the order of a ``--limit``
    slice is the full order with the later items left out.
    """
    if n < 0:
        raise ScoresError(f"judge_order needs n >= 0, got {n}")
    if n == 0:
        return ()
    raw = np.random.PCG64(seed).random_raw(n)
    keys = [int(v) for v in np.asarray(raw, dtype=np.uint64).tolist()]
    return tuple(sorted(range(n), key=lambda i: (keys[i], i)))


def range_of(d: Mapping[str, float], unjudged: Sequence[str], gate: int | None
             ) -> Range:
    """[lowest, highest] composite S of a sample whose ``unjudged`` dimensions are unknown:
    :func:`~vocencebench.decide.composite` with them at 0 (floored at ε there) and at 1,
    the known desirabilities ``d`` and the ``gate`` as they are. Both ends are on [0, 1]."""
    low = dict(d)
    high = dict(d)
    for u in unjudged:
        if u in d:
            raise ScoresError(f"dimension {u!r} is both scored and unjudged")
        low[u] = 0.0
        high[u] = 1.0
    return composite(low, gate), composite(high, gate)


def sample_range(sample: SampleScore) -> Range | None:
    """The range of a sample's composite: ``(S, S)`` when it is scored, :func:`range_of` when
    some of its judged dimensions were never asked (``sample.unjudged``), None when it is
    incomplete (an instrument failed: it decides nothing)."""
    if sample.incomplete is not None:
        return None
    if sample.unjudged:
        return range_of(sample.d, sample.unjudged, sample.gate)
    assert sample.S is not None  # a scored sample
    return float(sample.S), float(sample.S)


@dataclass(frozen=True)
class Interval:
    """A closed interval ``[lo, hi]`` of a number on the [0, 1] scale (δ-scale numbers may be
    negative)."""

    lo: float
    hi: float

    def to_list(self) -> list[float]:
        return [self.lo, self.hi]

    def __str__(self) -> str:
        return f"[{self.lo:+.4f}, {self.hi:+.4f}]"


@dataclass(frozen=True)
class VerdictBounds:
    """Every number of the decision rule as an interval over all outcomes of the unknown
    items: ``lcb`` is LCB(b − a), ``margin`` margin(S̄_a), ``lcb_reverse`` / ``margin_reverse``
    the same for a over b, means of S and of δ = S_b − S_a. ``n`` items, ``unknown`` of them
    with an unknown composite; ``n_boot`` resamples of the PCG64(``seed``) stream."""

    n: int
    unknown: int
    lcb: Interval
    lcb_reverse: Interval
    margin: Interval
    margin_reverse: Interval
    mean_a: Interval
    mean_b: Interval
    mean_delta: Interval
    n_boot: int = BOOTSTRAP_N
    seed: int = BOOTSTRAP_SEED


def _check_ranges(ranges: Sequence[Range], label: str) -> tuple[list[float], list[float]]:
    lo: list[float] = []
    hi: list[float] = []
    for i, (x, y) in enumerate(ranges):
        x, y = float(x), float(y)
        if not (math.isfinite(x) and math.isfinite(y) and 0.0 <= x <= y <= 1.0):
            raise ScoresError(f"{label}: S range [{x!r}, {y!r}] of item {i} is not an "
                              "interval on [0, 1]")
        lo.append(x)
        hi.append(y)
    return lo, hi


def verdict_bounds(
    ranges_a: Sequence[Range],
    ranges_b: Sequence[Range],
    *,
    labels: tuple[str, str] = ("a", "b"),
    n_boot: int = BOOTSTRAP_N,
    seed: int = BOOTSTRAP_SEED,
) -> VerdictBounds:
    """The decision rule's numbers as intervals over every outcome of the items whose
    composite is a range (``(lo, hi)`` per item, paired position by position, ``lo == hi`` for
    a known S). The LCB is evaluated at the lowest and the highest δ vector (it is monotone in
    every δᵢ), the margins at the highest and lowest means (module docstring)."""
    la, ha = _check_ranges(ranges_a, labels[0])
    lb, hb = _check_ranges(ranges_b, labels[1])
    if len(la) != len(lb):
        raise ScoresError(f"unpaired ranges: {len(la)} for {labels[0]!r} but {len(lb)} for "
                          f"{labels[1]!r}")
    n = len(la)
    if n == 0:
        raise ScoresError("no paired samples to decide on")
    # δ = S_b − S_a, computed the way decide() computes it (y − x), at both ends.
    d_lo = [y - x for x, y in zip(ha, lb, strict=True)]
    d_hi = [y - x for x, y in zip(la, hb, strict=True)]
    m_lo = bootstrap_means(d_lo, n_boot=n_boot, seed=seed)
    unknown = sum(1 for i in range(n) if la[i] != ha[i] or lb[i] != hb[i])
    m_hi = m_lo if unknown == 0 else bootstrap_means(d_hi, n_boot=n_boot, seed=seed)
    mean_a = Interval(math.fsum(la) / n, math.fsum(ha) / n)
    mean_b = Interval(math.fsum(lb) / n, math.fsum(hb) / n)
    return VerdictBounds(
        n=n, unknown=unknown,
        lcb=Interval(lower_confidence_bound(m_lo), lower_confidence_bound(m_hi)),
        # LCB(a − b) is the same resamples negated: lowest at the highest δ.
        lcb_reverse=Interval(lower_confidence_bound(-m_hi), lower_confidence_bound(-m_lo)),
        margin=Interval(margin(mean_a.hi), margin(mean_a.lo)),
        margin_reverse=Interval(margin(mean_b.hi), margin(mean_b.lo)),
        mean_a=mean_a, mean_b=mean_b,
        mean_delta=Interval(math.fsum(d_lo) / n, math.fsum(d_hi) / n),
        n_boot=n_boot, seed=seed,
    )


def certain_winner(b: VerdictBounds, labels: tuple[str, str] = ("a", "b"),
                   *, slack: float = EARLY_STOP_SLACK) -> tuple[str | None, str]:
    """(the verdict every outcome gives — a label or ``"tie"`` — or None when it is still
    open, and why). A branch counts as settled only with ``slack`` to spare (module
    docstring), so this may say None where exact arithmetic would already be certain, never
    the other way round."""
    la, lb = labels
    b_wins = b.lcb.lo - b.margin.hi > slack
    b_cannot = b.margin.lo - b.lcb.hi > slack
    a_wins = b.lcb_reverse.lo - b.margin_reverse.hi > slack
    a_cannot = b.margin_reverse.lo - b.lcb_reverse.hi > slack
    gap = f"by more than the safety gap {slack:g}"
    if b_wins:
        return lb, (f"{lb} wins whatever the unjudged items score: the lowest possible "
                    f"LCB({lb}−{la})={b.lcb.lo:+.4f} exceeds the highest possible "
                    f"margin({la})={b.margin.hi:.4f} {gap}")
    if b_cannot and a_wins:
        return la, (f"{la} wins whatever the unjudged items score: the highest possible "
                    f"LCB({lb}−{la})={b.lcb.hi:+.4f} stays below the lowest possible "
                    f"margin({la})={b.margin.lo:.4f}, and the lowest possible "
                    f"LCB({la}−{lb})={b.lcb_reverse.lo:+.4f} exceeds the highest possible "
                    f"margin({lb})={b.margin_reverse.hi:.4f}, each {gap}")
    if b_cannot and a_cannot:
        return "tie", (f"a tie whatever the unjudged items score: the highest possible "
                       f"LCB({lb}−{la})={b.lcb.hi:+.4f} stays below the lowest possible "
                       f"margin({la})={b.margin.lo:.4f} and the highest possible "
                       f"LCB({la}−{lb})={b.lcb_reverse.hi:+.4f} below the lowest possible "
                       f"margin({lb})={b.margin_reverse.lo:.4f}, each {gap}")
    return None, (f"not certain yet: LCB({lb}−{la}) ∈ {b.lcb}, margin({la}) ∈ "
                  f"{b.margin}; LCB({la}−{lb}) ∈ {b.lcb_reverse}, margin({lb}) ∈ "
                  f"{b.margin_reverse}")


def _record(b: VerdictBounds, certain: str, slack: float) -> dict[str, Any]:
    return {
        "items": b.n, "unjudged": b.unknown, "known": b.n - b.unknown,
        "lcb": b.lcb.to_list(), "lcb_reverse": b.lcb_reverse.to_list(),
        "margin": b.margin.to_list(), "margin_reverse": b.margin_reverse.to_list(),
        "mean_a": b.mean_a.to_list(), "mean_b": b.mean_b.to_list(),
        "mean_delta": b.mean_delta.to_list(), "slack": slack, "certain": certain,
    }


def decide_ranges(
    ranges_a: Sequence[Range],
    ranges_b: Sequence[Range],
    *,
    labels: tuple[str, str] = ("a", "b"),
    n_boot: int = BOOTSTRAP_N,
    seed: int = BOOTSTRAP_SEED,
    slack: float = EARLY_STOP_SLACK,
) -> Decision:
    """The verdict of paired composites some of which are only known as ranges.

    Every range a point: exactly :func:`vocencebench.decide.decide`. Otherwise the verdict is
    the one :func:`certain_winner` proves, with ``Decision.early_stop`` holding every interval
    and the proof; the scalar numbers are the end of each interval that is worst for that
    verdict (for a winner: its lowest lead and the highest margin it had to clear; for the side
    that does not win, and for both sides of a tie: the highest lead and the lowest margin).
    Raises :class:`~vocencebench.errors.ScoresError` when the ranges leave the verdict open:
    rows that stopped early but do not prove their verdict decide nothing.
    """
    if all(x == y for x, y in ranges_a) and all(x == y for x, y in ranges_b):
        return decide([x for x, _ in ranges_a], [x for x, _ in ranges_b], labels=labels,
                      n_boot=n_boot, seed=seed)
    if labels[0] == labels[1]:
        raise ScoresError(f"the two systems need different labels, got {labels[0]!r} twice")
    b = verdict_bounds(ranges_a, ranges_b, labels=labels, n_boot=n_boot, seed=seed)
    winner, why = certain_winner(b, labels, slack=slack)
    la, lb = labels
    if winner is None:
        raise ScoresError(
            f"{b.unknown} of {b.n} items were never judged and the verdict is not certain "
            f"without them ({why}); these rows do not support a stopped-early verdict. "
            "Judge the remaining items (rerun without --stop-when-decided)")
    if winner == lb:
        lcb, marg, mean_a = b.lcb.lo, b.margin.hi, b.mean_a.lo
        lcb_r, marg_r, mean_b = b.lcb_reverse.hi, b.margin_reverse.lo, b.mean_b.hi
        mean_delta = b.mean_delta.lo
    elif winner == la:
        lcb, marg, mean_a = b.lcb.hi, b.margin.lo, b.mean_a.hi
        lcb_r, marg_r, mean_b = b.lcb_reverse.lo, b.margin_reverse.hi, b.mean_b.lo
        mean_delta = b.mean_delta.hi
    else:
        lcb, marg, mean_a = b.lcb.hi, b.margin.lo, b.mean_a.hi
        lcb_r, marg_r, mean_b = b.lcb_reverse.hi, b.margin_reverse.lo, b.mean_b.hi
        mean_delta = (b.mean_delta.lo + b.mean_delta.hi) / 2
    reason = (
        f"stopped early: {b.n - b.unknown} of {b.n} paired items have known composites, "
        f"{b.unknown} were never judged (their judged dimensions anywhere in [0, 1]); "
        f"bootstrap {n_boot} resamples, seed {seed}, 5th percentile, over every outcome of "
        f"the unjudged items: mean S {la} ∈ [{b.mean_a.lo:.4f}, {b.mean_a.hi:.4f}], {lb} ∈ "
        f"[{b.mean_b.lo:.4f}, {b.mean_b.hi:.4f}]; LCB({lb}−{la}) ∈ {b.lcb}, margin({la}) ∈ "
        f"{b.margin}; LCB({la}−{lb}) ∈ {b.lcb_reverse}, margin({lb}) ∈ {b.margin_reverse}. "
        f"{'tie' if winner == 'tie' else winner + ' wins'}: {why}."
    )
    return Decision(
        winner=winner, lcb=lcb, margin=marg, mean_a=mean_a, mean_b=mean_b, n=b.n,
        reason=reason, labels=(la, lb), lcb_reverse=lcb_r, margin_reverse=marg_r,
        mean_delta=mean_delta, n_boot=n_boot, seed=seed,
        early_stop=_record(b, why, slack),
    )
