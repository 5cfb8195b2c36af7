"""How robust is a verdict: the same duel re-decided under the rule's other plausible choices.

From the per-sample scores only (each sample's ``S``, its desirabilities ``d``, its gate and its
WER, exactly what ``scores.jsonl`` carries), :func:`robustness` re-decides the duel

* with each dimension left out in turn (``S`` recomputed from the other ``d`` with
  :func:`vocencebench.decide.composite`);
* under each ε of :data:`~vocencebench.constants.ROBUSTNESS_EPSILONS`;
* under each gate threshold τ of :data:`~vocencebench.constants.ROBUSTNESS_TAUS` and with the
  gate off (needs every clip's WER; a run without a transcriber cannot say, and says so);
* under :data:`~vocencebench.constants.ROBUSTNESS_WEIGHT_DRAWS` random dimension weightings
  (Dirichlet(1)), giving the winner-flip rate,

each with the rule's own bootstrap (the same n, the same 2000 resample indices, the same LCB,
margin and symmetric test), and sums it up in one line (:attr:`Robustness.summary`). The
headline verdict is never touched: it stays :func:`vocencebench.decide.decide` on the stored S.

Arithmetic, so that the section is as reproducible as the verdict (``docs/reproducibility.md``):

* **Resample means, exactly and fast.** A variant's δ are all integer multiples of 2^E, E the
  smallest LSB exponent among them (``math.frexp``); split the integers into two limbs of
  L = 53 − bitlen(n) bits. With ``C[b, i]`` = how often resample b draws item i (Σᵢ C = n),
  every partial sum of the float64 product ``C @ limbs`` is an exact integer below 2^53, so no
  BLAS order or grouping can change it; ``hi·2^(L+E) + lo·2^E`` is then one IEEE addition of
  two exact doubles, i.e. the correctly rounded sum, which is what ``math.fsum`` returns;
  divided by n as :func:`~vocencebench.decide.bootstrap_means` does. A column whose integers
  need more than 2L bits (or holds −0.0) takes the exact slow path,
  :func:`~vocencebench.decide.bootstrap_means` itself. The headline column is also computed by
  :func:`~vocencebench.decide.decide`; if the fast path ever disagreed with it (a BLAS that
  is not a sum of products), every column takes the slow path.
* **Weight draws.** Draw t, dimension j (names sorted): ``u = ((raw[t·K + j] >> 11) + 1) / 2^53``
  from ``numpy.random.PCG64(ROBUSTNESS_SEED).random_raw(draws · K)``, ``e = 0.0 − math.log(u)``;
  a clip scored on the dimensions D gets ``wⱼ = eⱼ / fsum(e over D)`` (IEEE division), and
  ``S_w = g · min(1, math.exp(fsum(wⱼ · math.log(max(dⱼ, ε)))))`` with the products IEEE
  products and the sum exactly rounded (``_exact.exact_row_sums`` equals ``math.fsum`` bit for
  bit). No NumPy ``Generator`` method is used: NumPy promises the raw stream only.

Everything here is a pure function of its arguments (data and seeds in, frozen records out).
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from .._numbers import is_desirability, is_finite_number, is_gate_value
from ..constants import (
    ALPHA,
    BOOTSTRAP_N,
    BOOTSTRAP_SEED,
    COMPOSITE_TOLERANCE,
    EPSILON,
    ROBUSTNESS_EPSILONS,
    ROBUSTNESS_FLIP_TOLERANCE,
    ROBUSTNESS_SEED,
    ROBUSTNESS_TAUS,
    ROBUSTNESS_WEIGHT_DRAWS,
    WER_THRESHOLD,
)
from ..decide import composite, decide, gate, lower_confidence_bound, margin
from ..errors import ScoresError
from ..schema import INCOMPLETE, Record, SampleScore
from ..scores import read_scores
from ._exact import (
    CHUNK_FLOATS,
    CountBlocks,
    equal_composites,
    exact_bootstrap_means,
    exact_means,
    exact_row_sums,
    weight_draws,
    weighted_composites,
)

if TYPE_CHECKING:
    from ..pair import PairResult

__all__ = [
    "CountBlocks",
    "Robustness",
    "Variant",
    "WeightFlips",
    "equal_composites",
    "exact_bootstrap_means",
    "exact_means",
    "exact_row_sums",
    "robustness",
    "robustness_of_file",
    "robustness_of_run",
    "unavailable",
    "weight_draws",
    "weighted_composites",
]

#: One pair of a duel: the incumbent's sample and the challenger's, of the same item.
Pair = tuple[SampleScore, SampleScore]

#: The variant groups, in report order, and how the summary line names each.
GROUPS = {"leave-out": "leave-one-out", "epsilon": "ε", "tau": "τ", "gate-off": "gate off"}


# ----------------------------------------------------------------------------- records


@dataclass(frozen=True)
class Variant(Record):
    """The verdict of one variant of the rule, or why it cannot be computed.

    ``key`` is machine-readable (``leave-out:pace``, ``epsilon:0.001``, ``tau:0.1``,
    ``gate-off``), ``label`` human (``pace left out``, ``ε = 0.001``). ``rule`` is True for
    the rule's own setting (ε = EPSILON, τ = WER_THRESHOLD). ``winner`` is a system label or
    ``tie``; ``holds`` whether it is the headline's. The numbers are the rule's: ``lcb`` =
    LCB(b − a), ``margin`` = margin(S̄_a), ``lcb_reverse`` = LCB(a − b), ``margin_reverse`` =
    margin(S̄_b), means of S, all on [0, 1]. ``note`` says what a reader must know (a caveat,
    or why it was not computed: then ``computed`` is False and the numbers are None).
    """

    kind = "robustness_variant"

    key: str
    group: str
    label: str
    computed: bool
    rule: bool = False
    winner: str | None = None
    holds: bool | None = None
    lcb: float | None = None
    margin: float | None = None
    lcb_reverse: float | None = None
    margin_reverse: float | None = None
    mean_a: float | None = None
    mean_b: float | None = None
    note: str | None = None


@dataclass(frozen=True)
class WeightFlips(Record):
    """The verdict under ``draws`` random dimension weightings (Dirichlet(1), ``seed``):
    ``by_winner`` counts the draws per winner, ``flips`` those whose winner is not the
    headline's, ``rate`` = flips / draws (a fraction); ``note`` why it was not computed."""

    kind = "robustness_weights"

    computed: bool
    draws: int
    seed: int
    flips: int = 0
    rate: float | None = None
    by_winner: dict[str, int] = field(default_factory=dict)
    note: str | None = None


@dataclass(frozen=True)
class Robustness(Record):
    """The robustness section of a duel (``run.json["robustness"]``).

    ``winner`` is the headline verdict (the rule's, never changed here); ``summary`` the one
    line; ``robust`` True/False (None when nothing could be computed); ``counts``: variants
    in all, computed, holding, flipping, not computable; ``dimensions`` the ones left out in
    turn and weighted (sorted by name); ``recomputed``: how many complete clips' S were
    recomputed from ``d`` (``clips``) and how many reproduced the stored S bit for bit.
    """

    kind = "robustness"

    labels: tuple[str, str]
    winner: str
    n: int
    summary: str
    robust: bool | None
    variants: tuple[Variant, ...] = ()
    weights: WeightFlips | None = None
    counts: dict[str, int] = field(default_factory=dict)
    dimensions: tuple[str, ...] = ()
    epsilons: tuple[float, ...] = ROBUSTNESS_EPSILONS
    taus: tuple[float, ...] = ROBUSTNESS_TAUS
    n_boot: int = BOOTSTRAP_N
    seed: int = BOOTSTRAP_SEED
    flip_tolerance: float = ROBUSTNESS_FLIP_TOLERANCE
    recomputed: dict[str, int] = field(default_factory=dict)
    notes: tuple[str, ...] = ()


def unavailable(labels: tuple[str, str], winner: str, why: str, *, n: int = 0) -> Robustness:
    """A section that says, in its summary line, why nothing could be computed."""
    return Robustness(labels=labels, winner=winner, n=n, robust=None,
                      summary=f"not computed: {why}", notes=(why,))


# ----------------------------------------------------------------------------- verdicts


@dataclass(frozen=True)
class _Numbers:
    winner: str
    lcb: float
    margin: float
    lcb_reverse: float
    margin_reverse: float
    mean_a: float
    mean_b: float


def _verdicts(a: npt.NDArray[np.float64], b: npt.NDArray[np.float64], labels: tuple[str, str],
              *, counts: CountBlocks, fast: bool) -> list[_Numbers]:
    """The rule's verdict for every row of ``a`` and ``b`` (V, n), the incumbent's and the
    challenger's composites paired by column: the arithmetic of ``decide``, row by row."""
    if a.shape[0] == 0:
        return []
    delta = b - a  # one IEEE subtraction each, as decide's y − x
    means = exact_bootstrap_means(delta.T, n_boot=counts.n_boot, seed=counts.seed, fast=fast,
                                  counts=counts)
    if fast:
        lcb, lcb_rev = _lcbs(means)
        means_a, means_b = exact_means(a.T).tolist(), exact_means(b.T).tolist()  # fsum(·)/n
    else:  # the rule's own functions, row by row
        lcb = [lower_confidence_bound(m) for m in means]
        lcb_rev = [lower_confidence_bound(-m) for m in means]
        n = a.shape[1]
        means_a = [math.fsum(r) / n for r in a.tolist()]
        means_b = [math.fsum(r) / n for r in b.tolist()]
    out = []
    for v, (mean_a, mean_b) in enumerate(zip(means_a, means_b, strict=True)):
        m_a, m_b = margin(mean_a), margin(mean_b)
        winner = labels[1] if lcb[v] > m_a else labels[0] if lcb_rev[v] > m_b else "tie"
        out.append(_Numbers(winner, lcb[v], m_a, lcb_rev[v], m_b, mean_a, mean_b))
    return out


def _lerp(lo: npt.NDArray[np.float64], hi: npt.NDArray[np.float64], t: float
          ) -> npt.NDArray[np.float64]:
    """NumPy's linear interpolation between order statistics, operation for operation."""
    diff = hi - lo
    return hi - diff * (1 - t) if t >= 0.5 else lo + diff * t


def _lcbs(means: npt.NDArray[np.float64]) -> tuple[list[float], list[float]]:
    """``lower_confidence_bound`` of every row of ``means`` and of its negation, from one
    in-place partition: the documented percentile (h = (N − 1)·α, j = ⌊h⌋, t = h − j, the
    lerp of x[j] and x[j+1]); the reverse bound's order statistics of −m are −m[N−1−k].
    ``means`` is reordered within rows."""
    n = means.shape[1]
    h = (n - 1) * ((100.0 * ALPHA) / 100)  # numpy's virtual index for percentile(·, 100·α)
    j = min(max(math.floor(h), 0), n - 1)
    t = h - j
    nxt = min(j + 1, n - 1)
    means.partition(sorted({j, nxt, n - 1 - nxt, n - 1 - j}), axis=1)
    fwd = _lerp(means[:, j], means[:, nxt], t)
    rev = _lerp(-means[:, n - 1 - j], -means[:, n - 1 - nxt], t)
    return fwd.tolist(), rev.tolist()


# ----------------------------------------------------------------------------- variants


def _fmt(x: float) -> str:
    return f"{x:.3f}" if x < 0.01 else f"{x:g}"


@dataclass(frozen=True)
class _Column:
    key: str
    group: str
    label: str
    rule: bool
    a: list[float] | None
    b: list[float] | None
    note: str | None = None


def _s(s: SampleScore) -> float:
    assert s.S is not None  # complete pairs only
    return s.S


def _rows_fit(pairs: Sequence[Pair]) -> tuple[list[str], str | None, int, int]:
    """The dimensions (sorted), the first clip whose S is not composite(d, gate) within the
    tolerance (or None), and how many complete clips were checked and reproduced exactly."""
    dims: set[str] = set()
    bad = None
    checked = exact = 0
    for pa, pb in pairs:
        for s in (pa, pb):
            if s.failure is not None:
                continue
            dims.update(s.d)
            got = composite(s.d, s.gate)
            checked += 1
            exact += got == _s(s)
            if bad is not None:
                continue
            if not s.d and s.gate != 0:
                bad = (f"item {s.item!r} ({s.system}) has no per-dimension d, so no S can be "
                       "recomputed")
            elif abs(got - _s(s)) > COMPOSITE_TOLERANCE:
                bad = (f"item {s.item!r} ({s.system}) has S = {s.S!r} but composite(d, gate) "
                       f"= {got!r}: the scores were edited")
    return sorted(dims), bad, checked, exact


Row = tuple[tuple[str, float], ...]


@dataclass(frozen=True)
class _Clips:
    """The distinct clips of the duel (``rows``: sorted (dimension, d) pairs) and, per side
    and item, which one it is: ``where[side][i]`` is its row, −1 when its S is 0 whatever the
    composite (the system failed, or the gate vetoed it)."""

    rows: tuple[Row, ...]
    where: tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]]

    @classmethod
    def of(cls, pairs: Sequence[Pair]) -> _Clips:
        rows: dict[Row, int] = {}
        where: list[list[int]] = [[], []]
        for pair in pairs:
            for side, s in enumerate(pair):
                zero = s.failure is not None or s.gate == 0
                where[side].append(-1 if zero else rows.setdefault(tuple(sorted(s.d.items())),
                                                                   len(rows)))
        return cls(tuple(rows), (np.array(where[0], dtype=np.int64),
                                 np.array(where[1], dtype=np.int64)))

    def spread(self, table: npt.NDArray[np.float64]) -> tuple[list[float], list[float]]:
        """Both sides' S from one composite per distinct clip (0.0 at −1)."""
        vals = np.append(np.asarray(table, dtype=np.float64), 0.0)
        return vals[self.where[0]].tolist(), vals[self.where[1]].tolist()


def _tables(clips: _Clips, dims: list[str], epsilons: Sequence[float]
            ) -> tuple[dict[str, npt.NDArray[np.float64]], dict[float, npt.NDArray[np.float64]]]:
    """Every distinct clip's composite with each dimension left out and under each ε, by
    :func:`equal_composites`, which the rule's :func:`~vocencebench.decide.composite` checks
    here on every clip: if they ever disagreed, ``composite`` itself computes every table."""
    rows = clips.rows
    ref = np.array([composite(dict(r), 1) for r in rows], dtype=np.float64)
    base, *loo = equal_composites(rows, dims, epsilon=EPSILON, drops=(None, *dims))
    if np.array_equal(base, ref):
        by_eps = {eps: base if eps == EPSILON else
                  equal_composites(rows, dims, epsilon=eps)[0] for eps in epsilons}
        return dict(zip(dims, loo, strict=True)), by_eps

    def table(eps: float, drop: str | None) -> npt.NDArray[np.float64]:
        return np.array([composite({k: v for k, v in r if k != drop}, 1, epsilon=eps)
                         for r in rows], dtype=np.float64)

    return ({dim: table(EPSILON, dim) for dim in dims},
            {eps: table(eps, None) for eps in epsilons})


#: One variant whose composites come from a per-clip table: key, group, label, whether it is
#: the rule's own setting, why it cannot be computed (or None), and the table.
_Spec = tuple[str, str, str, bool, "str | None", "npt.NDArray[np.float64] | None"]


def _table_columns(clips: _Clips, specs: Sequence[_Spec]) -> list[_Column]:
    """The columns of variants computed from one composite per distinct clip."""
    cols = []
    for key, group, label, rule, why, table in specs:
        if why is not None or table is None:
            cols.append(_Column(key, group, label, rule, None, None, why))
            continue
        a, b = clips.spread(table)
        cols.append(_Column(key, group, label, rule, a, b))
    return cols


def _leave_out(pairs: Sequence[Pair], dims: list[str], stale: str | None,
               tables: dict[str, npt.NDArray[np.float64]]) -> list[_Spec]:
    specs: list[_Spec] = []
    for dim in dims:
        lonely = next((s for p in pairs for s in p if s.failure is None and s.gate != 0
                       and not set(s.d) - {dim}), None)
        why = (stale or ("the run scores a single dimension" if len(dims) < 2 else None)
               or (f"item {lonely.item!r} ({lonely.system}) has no other dimension"
                   if lonely is not None else None))
        specs.append((f"leave-out:{dim}", "leave-out", f"{dim} left out", False, why,
                      tables.get(dim)))
    return specs


def _epsilons(epsilons: Sequence[float], stale: str | None,
              tables: dict[float, npt.NDArray[np.float64]]) -> list[_Spec]:
    return [(f"epsilon:{eps!r}", "epsilon", f"ε = {_fmt(eps)}", eps == EPSILON, stale,
             tables.get(eps)) for eps in epsilons]


def _gates(pairs: Sequence[Pair], dims: list[str], stale: str | None,
           taus: Sequence[float]) -> list[_Column]:
    clips = [s for p in pairs for s in p if s.failure is None]
    no_wer = [s for s in clips if s.wer is None]
    why = None
    if no_wer:
        why = ("no clip has a WER (the run had no gate: no transcriber ran), so what a gate "
               "would have done cannot be known" if len(no_wer) == len(clips) else
               f"{len(no_wer)} of {len(clips)} clips have no WER (first: item "
               f"{no_wer[0].item!r}, {no_wer[0].system})")
    full = set(dims)
    cols = []
    for tau in (*taus, None):
        key = "gate-off" if tau is None else f"tau:{tau!r}"
        label = "gate off" if tau is None else f"τ = {tau:.2f}"
        group, rule = ("gate-off" if tau is None else "tau"), tau == WER_THRESHOLD
        if why:
            cols.append(_Column(key, group, label, rule, None, None, why))
            continue

        def g_of(s: SampleScore, tau: float | None = tau) -> int:
            assert s.wer is not None
            return 1 if tau is None else gate(s.wer, threshold=tau)

        revived = [s for s in clips if s.gate == 0 and g_of(s) == 1]
        if stale and revived:
            cols.append(_Column(key, group, label, rule, None, None, stale))
            continue

        def s_of(s: SampleScore, g_of: Callable[[SampleScore], int] = g_of) -> float:
            g = g_of(s)
            if g == s.gate:
                return _s(s)  # the gate decides as in the run: the stored S, nothing recomputed
            return 0.0 if g == 0 else composite(s.d, 1)

        a = [0.0 if x.failure is not None else s_of(x) for x, _ in pairs]
        b = [0.0 if y.failure is not None else s_of(y) for _, y in pairs]
        short = [s for s in revived if set(s.d) < full]
        note = None
        if short:
            missing = ", ".join(sorted(full - set(short[0].d)))
            note = (f"{len(short)} clip(s) vetoed in the run but passing here were never scored "
                    f"on {missing} (both clips of the item were vetoed, so the judge did not "
                    "hear them): scored on their other dimensions")
        cols.append(_Column(key, group, label, rule, a, b, note))
    return cols


# ----------------------------------------------------------------------------- the line


def _and(parts: Sequence[str]) -> str:
    return parts[0] if len(parts) == 1 else ", ".join(parts[:-1]) + " and " + parts[-1]


def _summary(winner: str, variants: Sequence[Variant], weights: WeightFlips
             ) -> tuple[str, bool]:
    """The one line, and whether the verdict is robust: no computed variant flips it and at
    most ROBUSTNESS_FLIP_TOLERANCE of the random weightings do."""
    subject = "the tie" if winner == "tie" else "the winner"
    done = [v for v in variants if v.computed]
    flipped = [v for v in done if not v.holds]
    missing = [v for v in variants if not v.computed]
    rate = weights.rate if weights.computed else None
    heavy = rate is not None and rate > ROBUSTNESS_FLIP_TOLERANCE
    wpart = (f"under {weights.draws - weights.flips} of {weights.draws} random dimension "
             "weightings" if weights.computed else "")
    robust = not flipped and not heavy
    if not done and not weights.computed:
        first = missing[0].note if missing else weights.note
        return f"not computed: {first}", False
    if not flipped:
        line = f"{'robust' if robust else 'fragile'}: {subject} holds in all {len(done)} variants"
        if wpart:
            line += f" and {wpart}" if robust else f" but only {wpart}"
    else:
        where = []
        for v in flipped:
            what = (f"when {v.label.removesuffix(' left out')} is left out"
                    if v.group == "leave-out" else "with the gate off"
                    if v.group == "gate-off" else f"at {v.label}")
            where.append(f"{what} (→ {'tie' if v.winner == 'tie' else f'{v.winner} wins'})")
        verb = "breaks" if winner == "tie" else "flips"
        line = (f"fragile: {subject} {verb} {_and(where)}; it holds in "
                f"{len(done) - len(flipped)} of {len(done)} variants"
                + (f" and {wpart}" if wpart else ""))
    if heavy:
        assert rate is not None
        line += (f" ({100 * rate:.1f} % of the weightings flip it, more than "
                 f"{100 * ROBUSTNESS_FLIP_TOLERANCE:g} %)")
    if missing:
        groups = [GROUPS[g] for g in GROUPS if any(v.group == g for v in missing)]
        line += (f"; {len(missing)} variant{'s' if len(missing) > 1 else ''} cannot be "
                 f"computed ({', '.join(groups)}): {missing[0].note}")
    if not weights.computed:
        line += f"; the random weightings cannot be computed: {weights.note}"
    return line, robust


# ----------------------------------------------------------------------------- the section


def robustness(
    pairs: Sequence[Pair],
    *,
    labels: tuple[str, str],
    n_boot: int = BOOTSTRAP_N,
    seed: int = BOOTSTRAP_SEED,
    draws: int = ROBUSTNESS_WEIGHT_DRAWS,
    weight_seed: int = ROBUSTNESS_SEED,
    epsilons: Sequence[float] = ROBUSTNESS_EPSILONS,
    taus: Sequence[float] = ROBUSTNESS_TAUS,
    fast: bool = True,
) -> Robustness:
    """The robustness section of the complete ``pairs`` (incumbent's sample, challenger's).

    The headline is :func:`~vocencebench.decide.decide` on the stored S; every variant uses
    the same n, resample indices (``n_boot``, ``seed``) and rule. ``fast=False`` computes
    every resample mean by the slow path (:func:`~vocencebench.decide.bootstrap_means`):
    the same bits, slower.
    """
    if not pairs:
        return unavailable(labels, "tie", "no complete paired item")
    stored_a = [_s(a) for a, _ in pairs]
    stored_b = [_s(b) for _, b in pairs]
    head = decide(stored_a, stored_b, labels=labels, n_boot=n_boot, seed=seed)
    dims, bad, checked, exact = _rows_fit(pairs)
    stale = bad
    clips = _Clips.of(pairs)
    loo, eps_tables = _tables(clips, dims, epsilons) if not stale else ({}, {})
    cols = [*_table_columns(clips, [*_leave_out(pairs, dims, stale, loo),
                                    *_epsilons(epsilons, stale, eps_tables)]),
            *_gates(pairs, dims, stale, taus)]
    live = [c for c in cols if c.a is not None]
    counts = CountBlocks(len(pairs), n_boot, seed)
    a_mat = np.array([stored_a, *[c.a for c in live]], dtype=np.float64)
    b_mat = np.array([stored_b, *[c.b for c in live]], dtype=np.float64)
    res = _verdicts(a_mat, b_mat, labels, counts=counts, fast=fast)
    first = res[0]
    if fast and (first.lcb, first.lcb_reverse, first.mean_a, first.mean_b, first.winner) != (
            head.lcb, head.lcb_reverse, head.mean_a, head.mean_b, head.winner):
        # A BLAS that is not a sum of products, a NumPy whose percentile changed: the
        # rule's own functions for everything (slower, the same bits as decide).
        fast = False
        res = _verdicts(a_mat, b_mat, labels, counts=counts, fast=False)
    by_key = dict(zip((c.key for c in live), res[1:], strict=True))
    variants = []
    for c in cols:
        r = by_key.get(c.key)
        variants.append(
            Variant(c.key, c.group, c.label, False, c.rule, note=c.note) if r is None else
            Variant(c.key, c.group, c.label, True, c.rule, r.winner, r.winner == head.winner,
                    r.lcb, r.margin, r.lcb_reverse, r.margin_reverse, r.mean_a, r.mean_b,
                    c.note))
    why = stale or ("no clip has a scored dimension" if not dims else None)
    weights = (WeightFlips(False, draws, weight_seed, note=why) if why else
               _weight_flips(clips, dims, head.winner, labels, counts=counts, draws=draws,
                             weight_seed=weight_seed, fast=fast))
    line, robust = _summary(head.winner, variants, weights)
    nothing = line.startswith("not computed")
    done = [v for v in variants if v.computed]
    notes = []
    if exact != checked and not bad:
        notes.append(f"{checked - exact} of {checked} clips' S recompute from d within "
                     f"{COMPOSITE_TOLERANCE:g} but not bit for bit (this machine's "
                     "log/exp differ from those of the machine that scored them); the "
                     "variants use the recomputed values")
    return Robustness(
        labels=labels, winner=head.winner, n=len(pairs), summary=line,
        robust=None if nothing else robust,
        variants=tuple(variants), weights=weights,
        counts={"variants": len(variants), "computed": len(done),
                "held": sum(bool(v.holds) for v in done),
                "flipped": sum(not v.holds for v in done),
                "not_computed": len(variants) - len(done)},
        dimensions=tuple(dims), epsilons=tuple(epsilons), taus=tuple(taus), n_boot=n_boot,
        seed=seed, recomputed={"clips": checked, "exact": exact}, notes=tuple(notes))


def _weight_flips(clips: _Clips, dims: list[str], winner: str, labels: tuple[str, str], *,
                  counts: CountBlocks, draws: int, weight_seed: int, fast: bool
                  ) -> WeightFlips:
    """The verdict under each weighting: the distinct clips' weighted composites, then the
    rule on every draw's S (draws chunked so memory stays bounded for any n)."""
    e = weight_draws(len(dims), draws=draws, seed=weight_seed)
    tally: dict[str, int] = {}
    per_chunk = max(1, CHUNK_FLOATS // (8 * len(clips.where[0])))
    for t0 in range(0, draws, per_chunk):
        chunk = e[t0:t0 + per_chunk]
        vals = np.concatenate([weighted_composites(clips.rows, dims, chunk),
                               np.zeros((chunk.shape[0], 1))], axis=1)  # index −1: S = 0
        for r in _verdicts(vals[:, clips.where[0]], vals[:, clips.where[1]], labels,
                           counts=counts, fast=fast):
            tally[r.winner] = tally.get(r.winner, 0) + 1
    flips = draws - tally.get(winner, 0)
    return WeightFlips(True, draws, weight_seed, flips, flips / draws,
                       {w: tally[w] for w in (*labels, "tie") if w in tally})


# ----------------------------------------------------------------------------- entry points


def robustness_of_run(pairs: Iterable[PairResult], labels: tuple[str, str], winner: str
                      ) -> Robustness:
    """The section of a run: its complete pairs, or a line saying why there is none (an
    INCOMPLETE run names no winner, so there is no verdict to test)."""
    done: list[Pair] = []
    total = unjudged = 0
    for p in pairs:
        total += 1
        if p.incomplete is None:
            done.append((p.a, p.b))
            unjudged += bool(p.a.unjudged or p.b.unjudged)
    if winner == INCOMPLETE:
        return unavailable(labels, winner, f"the run is incomplete ({total - len(done)} of "
                           f"{total} items could not be scored) and names no winner")
    if unjudged:
        return unavailable(labels, winner, stopped_early_reason(unjudged, total))
    return robustness(done, labels=labels)


def stopped_early_reason(unjudged: int, total: int) -> str:
    """Why a run that stopped judging early has no robustness section: its variants would
    re-decide on composites that are only known as intervals."""
    return (f"the judge stopped early ({unjudged} of {total} items were never judged, so "
            "their S is known only as an interval); every variant needs each S, so rerun "
            "without --stop-when-decided for this section")


def _sample(source: str, lineno: int, row: Any) -> SampleScore:
    """One complete row of a scores file as a SampleScore, its d, gate, wer checked."""
    where = f"{source}:{lineno}"
    d = row.get("d", {})
    if not isinstance(d, dict):
        raise ScoresError(f"{where}: d must be an object of dimension → desirability")
    for k, v in d.items():
        if not is_desirability(v):
            raise ScoresError(f"{where}: d[{k!r}] = {v!r} is not a number in [0, 1]")
    g, wer, failure = row.get("gate"), row.get("wer"), row.get("failure")
    if not is_gate_value(g):
        raise ScoresError(f"{where}: gate must be 0, 1 or null, got {g!r}")
    if wer is not None and not (is_finite_number(wer) and wer >= 0):
        raise ScoresError(f"{where}: wer must be a finite fraction ≥ 0 or null, got {wer!r}")
    if failure is not None and not isinstance(failure, str):
        raise ScoresError(f"{where}: failure must be a string or null, got {failure!r}")
    if g is not None and wer is not None and gate(float(wer)) != g:
        # The variants re-gate from wer, the rule's own from gate: a row where the two
        # disagree would give the rule's τ a verdict that is not the file's.
        raise ScoresError(f"{where}: gate {g} contradicts wer {wer!r} (the gate is 1 when "
                          f"WER ≤ τ = {WER_THRESHOLD:g}, else 0)")
    return SampleScore(row["item"], row["system"], float(row["S"]),
                       {str(k): float(v) for k, v in d.items()}, gate=g,
                       wer=None if wer is None else float(wer), failure=failure)


def robustness_of_file(
    path: str | os.PathLike[str],
    *,
    incumbent: str | None = None,
    challenger: str | None = None,
    allow_incomplete: bool = False,
) -> Robustness:
    """The section recomputed from a published scores file (``decide SCORES --robustness``),
    paired as :func:`vocencebench.scores.decide_scores` pairs it, so a run's own
    ``scores.jsonl`` gives its ``run.json["robustness"]`` bit for bit."""
    table = read_scores(path)
    paired = table.pair(incumbent, challenger, allow_incomplete=allow_incomplete)
    lines = Path(path).read_text(encoding="utf-8").split("\n")  # as read_scores numbers them
    labels = (paired.incumbent, paired.challenger)
    decided = [paired.items[k] for k in paired.decidable_positions()]
    # Each row of the pairing, parsed once: (line number, its JSON object).
    raw = {(i, sysname): (table.lines[(i, sysname)],
                          json.loads(lines[table.lines[(i, sysname)] - 1]))
           for i in decided for sysname in labels}
    unjudged = sum(any(raw[(i, sysname)][1].get("unjudged") for sysname in labels)
                   for i in decided)
    if unjudged:  # the winner decide_scores gives, from the table already read
        return unavailable(labels, paired.decide().winner,
                           stopped_early_reason(unjudged, len(decided)))
    pairs = [(_sample(table.source, *raw[(i, labels[0])]),
              _sample(table.source, *raw[(i, labels[1])])) for i in decided]
    return robustness(pairs, labels=labels)
