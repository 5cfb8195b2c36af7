"""Desirability → geometric composite × gate → paired bootstrap LCB → margin → verdict.

Exactly this arithmetic, so that anyone can recompute a verdict in any language
(``docs/methodology.md`` and ``docs/reproducibility.md`` spell it out):

* desirability d ∈ [0, 1] per dimension (:func:`desirability`);
* composite ``S = g · exp(Σ ln max(dⱼ, ε) / k)`` with ``math.fsum`` (:func:`composite`);
* resample indices from the raw 64-bit PCG64 stream: ``idx = (raw · n) >> 64``
  (:func:`bootstrap_indices`), so they never change with a NumPy release;
* resample mean ``fsum(δ[idx]) / n``; LCB = 5th percentile (linear interpolation);
* ``margin = max(0.015, 0.10 · (1 − S̄_incumbent))``; symmetric :func:`decide`.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from ._numbers import is_desirability
from .constants import (
    ALPHA,
    BOOTSTRAP_N,
    BOOTSTRAP_SEED,
    EPSILON,
    MARGIN_FLOOR,
    MARGIN_SCALE,
    RUBRIC_MAX,
    RULE_NUMBERS,
    WER_THRESHOLD,
)
from .constants import PROJECT_SEED as PROJECT_SEED  # not used here; served (RULE_NUMBERS)
from .errors import ConfigError, ScoresError
from .schema import OUTCOME_WORDS, Decision
from .traits import TRAITS, Trait, TraitRegistry

__all__ = [
    *RULE_NUMBERS,
    "BootstrapResult",
    "bootstrap_index_blocks",
    "bootstrap_indices",
    "bootstrap_means",
    "composite",
    "decide",
    "desirability",
    "gate",
    "lower_confidence_bound",
    "margin",
]

# Index chunk: resamples generated per block, so memory stays bounded for very large n.
_CHUNK_ELEMENTS = 1 << 18


def desirability(
    trait: str | Trait,
    measured: str | float | int,
    requested: str | float | int | None = None,
    *,
    registry: TraitRegistry = TRAITS,
) -> float:
    """Desirability d ∈ [0, 1] of a measurement against a request.

    * ordinal: 1.0 same bucket, 0.5 adjacent, 0.0 otherwise;
    * categorical: 1.0 on a match, else 0.0;
    * numeric (age, years): ``max(0, 1 − max(0, |m − r| − tol) / tol)``;
    * rubric (judge, 0–3): ``score / 3`` (``requested`` is ignored).
    """
    t = registry.get(trait) if isinstance(trait, str) else trait
    if t.scoring == "rubric":
        score = float(measured)
        if not (math.isfinite(score) and 0 <= score <= RUBRIC_MAX):
            raise ConfigError(f"{t.name}: rubric score {measured!r} is outside 0–{RUBRIC_MAX}")
        return score / RUBRIC_MAX
    if requested is None:
        raise ConfigError(f"{t.name}: desirability needs the requested value")
    if t.scoring == "numeric":
        m, r = float(measured), float(requested)
        if not (math.isfinite(m) and math.isfinite(r)):
            raise ConfigError(f"{t.name}: non-finite value (measured {measured!r})")
        tol = float(t.tolerance or 0.0)
        return max(0.0, 1.0 - max(0.0, abs(m - r) - tol) / tol)
    req = t.check_value(str(requested))
    got = t.check_value(str(measured))
    if t.scoring == "categorical":
        return 1.0 if got == req else 0.0
    distance = abs(t.values.index(got) - t.values.index(req))
    return 1.0 if distance == 0 else 0.5 if distance == 1 else 0.0


def gate(wer: float, *, threshold: float = WER_THRESHOLD) -> int:
    """Intelligibility gate: 1 when ``wer <= threshold`` (fraction), else 0."""
    if not math.isfinite(wer) or wer < 0:
        raise ConfigError(f"WER {wer!r} must be a finite fraction ≥ 0")
    return 1 if wer <= threshold else 0


def composite(
    d: Mapping[str, float] | Sequence[float], g: int | None = 1, *, epsilon: float = EPSILON
) -> float:
    """Non-compensatory composite ``S = g · exp(fsum(ln max(dⱼ, ε)) / k)`` on [0, 1].

    Equal weights. ``g`` is the gate (None = gate off, counted as 1). An empty set of
    dimensions gives ``S = g``. ``epsilon`` is the rule's ε; another value is what the
    robustness section's ε variants use (:mod:`vocencebench.robustness`), never a verdict.
    """
    values = list(d.values()) if isinstance(d, Mapping) else list(d)
    for v in values:
        if not is_desirability(v):
            raise ConfigError(f"desirability {v!r} is not a number in [0, 1]")
    gv = 1 if g is None else g
    if gv not in (0, 1):
        raise ConfigError(f"gate must be 0 or 1, not {g!r}")
    if gv == 0:
        return 0.0
    if not values:
        return 1.0
    s = math.exp(math.fsum(math.log(max(v, epsilon)) for v in values) / len(values))
    return min(1.0, s)


def margin(incumbent_mean: float) -> float:
    """Decision margin ``max(0.015, 0.10 · (1 − S̄_incumbent))`` on the [0, 1] scale."""
    return max(MARGIN_FLOOR, MARGIN_SCALE * (1.0 - incumbent_mean))


def _index_block(raw: npt.NDArray[np.uint64], n: int) -> npt.NDArray[np.int64]:
    """Exact ``(raw · n) >> 64`` for uint64 ``raw`` and n < 2³², via 32-bit halves."""
    n64 = np.uint64(n)
    hi = raw >> np.uint64(32)
    lo = raw & np.uint64(0xFFFFFFFF)
    # hi·n + (lo·n >> 32) < 2⁶⁴ for n < 2³², so no step overflows.
    return ((hi * n64 + ((lo * n64) >> np.uint64(32))) >> np.uint64(32)).astype(np.int64)


def _index_blocks(
    n: int, n_boot: int, seed: int
) -> Iterator[tuple[int, npt.NDArray[np.int64]]]:
    """Yield (first resample number, indices of shape (rows, n)) in bounded-memory blocks."""
    if n < 1:
        raise ConfigError("bootstrap needs at least one paired sample")
    if n >= 1 << 32:
        raise ConfigError("bootstrap supports n < 2**32 samples")
    if n_boot < 1:
        raise ConfigError("n_boot must be ≥ 1")
    bitgen = np.random.PCG64(seed)
    rows = max(1, _CHUNK_ELEMENTS // n)
    start = 0
    while start < n_boot:
        take = min(rows, n_boot - start)
        raw = np.asarray(bitgen.random_raw(take * n), dtype=np.uint64)
        yield start, _index_block(raw, n).reshape(take, n)
        start += take


def bootstrap_index_blocks(
    n: int, n_boot: int = BOOTSTRAP_N, seed: int = BOOTSTRAP_SEED
) -> Iterator[tuple[int, npt.NDArray[np.int64]]]:
    """The rows of :func:`bootstrap_indices` in consecutive blocks of about 2¹⁸ indices:
    yields (number of the block's first resample, indices of shape (rows, n))."""
    return _index_blocks(n, n_boot, seed)


def bootstrap_indices(
    n: int, n_boot: int = BOOTSTRAP_N, seed: int = BOOTSTRAP_SEED
) -> npt.NDArray[np.int64]:
    """All resample indices, shape (n_boot, n): row b is ``(raw[b·n:(b+1)·n] · n) >> 64``.

    ``raw`` is ``numpy.random.PCG64(seed).random_raw(n_boot · n)``. Memory is n_boot·n·8 bytes;
    :func:`bootstrap_means` streams the same indices in blocks instead.
    """
    return np.concatenate([blk for _, blk in _index_blocks(n, n_boot, seed)], axis=0)


def _check_values(values: Sequence[float] | npt.NDArray[np.float64], what: str) -> list[float]:
    out = [float(v) for v in values]
    for i, v in enumerate(out):
        if not math.isfinite(v):
            raise ScoresError(f"{what}[{i}] = {v!r} is not finite")
    return out


def bootstrap_means(
    values: Sequence[float] | npt.NDArray[np.float64],
    *,
    n_boot: int = BOOTSTRAP_N,
    seed: int = BOOTSTRAP_SEED,
) -> npt.NDArray[np.float64]:
    """The n_boot resampled means ``fsum(values[idx_b]) / n`` (exactly rounded), in order."""
    vals = np.asarray(_check_values(values, "values"), dtype=np.float64)
    n = len(vals)
    out = np.empty(n_boot, dtype=np.float64)
    fsum = math.fsum
    for start, block in _index_blocks(n, n_boot, seed):
        picked = vals[block]
        for r in range(block.shape[0]):
            out[start + r] = fsum(picked[r].tolist()) / n
    return out


def lower_confidence_bound(means: npt.NDArray[np.float64], *, alpha: float = ALPHA) -> float:
    """The 100·α-th percentile of ``means``, linear interpolation (numpy's default)."""
    return float(np.percentile(means, 100.0 * alpha))


@dataclass(frozen=True)
class BootstrapResult:
    """Resampled means of δ and their one-sided lower bound (both on the δ scale)."""

    means: npt.NDArray[np.float64]
    lcb: float


def _fmt(x: float) -> str:
    return f"{x:.4f}"


def decide(
    scores_a: Sequence[float] | npt.NDArray[np.float64],
    scores_b: Sequence[float] | npt.NDArray[np.float64],
    *,
    labels: tuple[str, str] = ("a", "b"),
    n_boot: int = BOOTSTRAP_N,
    seed: int = BOOTSTRAP_SEED,
) -> Decision:
    """Symmetric head-to-head verdict from paired per-sample composites S ∈ [0, 1].

    ``scores_a[i]`` and ``scores_b[i]`` are the two systems on the same item i.
    B wins if LCB(B − A) > margin(S̄_A); A wins if LCB(A − B) > margin(S̄_B); else tie.
    Both bounds use the same resample indices.
    """
    a = _check_values(scores_a, labels[0])
    b = _check_values(scores_b, labels[1])
    if len(a) != len(b):
        raise ScoresError(
            f"unpaired scores: {len(a)} for {labels[0]!r} but {len(b)} for {labels[1]!r}"
        )
    if not a:
        raise ScoresError("no paired samples to decide on")
    if labels[0] == labels[1]:
        raise ScoresError(f"the two systems need different labels, got {labels[0]!r} twice")
    for lab in labels:
        if lab in OUTCOME_WORDS:  # a winner named "tie" would read as a tie
            raise ScoresError(f"{lab!r} cannot label a system: it is a decision outcome")
    for lab, vals in ((labels[0], a), (labels[1], b)):
        for i, v in enumerate(vals):
            if not 0.0 <= v <= 1.0:
                raise ScoresError(f"{lab}: S[{i}] = {v!r} is outside [0, 1]")
    n = len(a)
    delta = [y - x for x, y in zip(a, b, strict=True)]
    means_ba = bootstrap_means(delta, n_boot=n_boot, seed=seed)
    # LCB(A − B) is the same resamples negated: fsum(−δ) = −fsum(δ) exactly.
    means_ab = -means_ba
    lcb_ba = lower_confidence_bound(means_ba)
    lcb_ab = lower_confidence_bound(means_ab)
    mean_a = math.fsum(a) / n
    mean_b = math.fsum(b) / n
    mean_delta = math.fsum(delta) / n
    m_a = margin(mean_a)
    m_b = margin(mean_b)
    la, lb = labels
    head = (
        f"n={n} paired items; mean S: {la}={_fmt(mean_a)}, {lb}={_fmt(mean_b)}; "
        f"mean δ({lb}−{la})={mean_delta:+.4f}; bootstrap {n_boot} resamples, seed {seed}, "
        f"5th percentile. "
    )
    if lcb_ba > m_a:
        winner = lb
        rule = (
            f"{lb} wins: LCB({lb}−{la})={lcb_ba:+.4f} > margin({la})="
            f"max({MARGIN_FLOOR}, {MARGIN_SCALE:.2f}×(1−{_fmt(mean_a)}))={m_a:.4f}."
        )
    elif lcb_ab > m_b:
        winner = la
        rule = (
            f"{la} wins: LCB({la}−{lb})={lcb_ab:+.4f} > margin({lb})="
            f"max({MARGIN_FLOOR}, {MARGIN_SCALE:.2f}×(1−{_fmt(mean_b)}))={m_b:.4f}."
        )
    else:
        winner = "tie"
        rule = (
            f"tie: neither lead is both real and audible — LCB({lb}−{la})={lcb_ba:+.4f} ≤ "
            f"margin({la})={m_a:.4f} and LCB({la}−{lb})={lcb_ab:+.4f} ≤ margin({lb})={m_b:.4f}."
        )
    return Decision(
        winner=winner,
        lcb=lcb_ba,
        margin=m_a,
        mean_a=mean_a,
        mean_b=mean_b,
        n=n,
        reason=head + rule,
        labels=(la, lb),
        lcb_reverse=lcb_ab,
        margin_reverse=m_b,
        mean_delta=mean_delta,
        n_boot=n_boot,
        seed=seed,
    )
