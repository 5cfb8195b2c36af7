"""The exact arithmetic of the robustness section, vectorised (private; see the package).

* :func:`exact_bootstrap_means`: the resample means of many δ columns at once, equal bit for
  bit to :func:`vocencebench.decide.bootstrap_means` of each column (integer limbs through a
  float64 matrix product whose every partial sum is an exact integer below 2⁵³);
* :func:`exact_row_sums`: ``math.fsum`` of every row of a matrix, vectorised and certified;
* :func:`weight_draws` / :func:`weighted_composites`: the Dirichlet(1) weightings from the raw
  PCG64 stream and the weighted geometric composite they give each distinct clip.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from ..constants import BOOTSTRAP_N, BOOTSTRAP_SEED, EPSILON
from ..decide import bootstrap_index_blocks, bootstrap_means
from ..errors import ScoresError

__all__ = ["CountBlocks", "equal_composites", "exact_bootstrap_means", "exact_means",
           "exact_row_sums", "weight_draws", "weighted_composites"]

#: Memory bound of one matrix here, in doubles (2²⁴ = 128 MiB): the limb columns of one
#: chunk, the kept resample counts. At n = 496 everything fits in one chunk.
CHUNK_FLOATS = 1 << 24
#: Smallest LSB exponent the fast means accept: far from the subnormal range, so every scaled
#: limb sum is an exact normal double.
_MIN_LSB = -1000
#: Most limbs a column of the fast means may need (4·L bits; L = 44 bits at n = 496).
_MAX_LIMBS = 4


class CountBlocks:
    """``C[b, i]``, how often resample b draws item i, in the blocks of
    :func:`~vocencebench.decide.bootstrap_index_blocks` (the rule's own indices).

    Kept in memory after the first pass when n_boot · n ≤ :data:`CHUNK_FLOATS`, regenerated
    from the raw stream on every pass otherwise.
    """

    def __init__(self, n: int, n_boot: int = BOOTSTRAP_N, seed: int = BOOTSTRAP_SEED) -> None:
        self.n, self.n_boot, self.seed = n, n_boot, seed
        self._kept: list[tuple[int, npt.NDArray[np.float64]]] | None = None

    def _generate(self) -> Iterator[tuple[int, npt.NDArray[np.float64]]]:
        n = self.n
        for b0, idx in bootstrap_index_blocks(n, self.n_boot, self.seed):
            rows = idx.shape[0]
            flat = (np.arange(rows, dtype=np.int64)[:, None] * n + idx).ravel()
            yield b0, np.bincount(flat, minlength=rows * n).reshape(rows, n).astype(np.float64)

    def __iter__(self) -> Iterator[tuple[int, npt.NDArray[np.float64]]]:
        if self._kept is not None:
            yield from self._kept
            return
        if self.n * self.n_boot > CHUNK_FLOATS:
            yield from self._generate()
            return
        kept = list(self._generate())
        self._kept = kept
        yield from kept


def _two_sum(a: npt.NDArray[np.float64], b: npt.NDArray[np.float64]
             ) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64]]:
    """Knuth's error-free TwoSum: s = fl(a + b) and e with a + b = s + e exactly."""
    s = a + b
    bb = s - a
    return s, (a - (s - bb)) + (b - bb)


def exact_row_sums(p: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
    """``[math.fsum(row) for row in p]`` for a finite (rows, k) array, vectorised.

    Two TwoSum cascades (error-free): s and errors e with Σ row = s + Σe, then c and errors
    e' with Σe = c + Σe'; s' = fl(s + c) with its TwoSum error f. So Σ row = s' + f + Σe'
    exactly. When every e' is 0, Σ row = s + c exactly and s' = fl(s + c) is its correctly
    rounded value, ties included (one IEEE addition). Otherwise, when |f| + 2·Σ|e'| is below
    half the smaller gap from s' to a neighbouring double, s' is the correctly rounded sum,
    strictly. Either way that is what ``math.fsum`` returns; every other row (a near tie,
    a zero sum) is summed by ``math.fsum`` itself.
    """
    p = np.asarray(p, dtype=np.float64)
    return _column_sums(np.ascontiguousarray(p.T))


def _column_sums(pt: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
    """:func:`exact_row_sums` of the transpose of ``pt`` (k, rows), C-contiguous: the
    cascades then read contiguous memory."""
    k, rows = pt.shape
    if rows == 0 or k == 0:
        return np.zeros(rows)
    if k == 1:  # fsum([x]) is x, except perhaps the sign of a zero: fsum says
        out1: npt.NDArray[np.float64] = pt[0].copy()
        for r in np.flatnonzero(out1 == 0.0).tolist():
            out1[r] = math.fsum([float(pt[0, r])])
        return out1
    s = pt[0].copy()
    c = np.zeros(rows)
    t = np.zeros(rows)
    for j in range(1, k):
        s, e = _two_sum(s, pt[j])
        c, e2 = _two_sum(c, e)
        t += np.abs(e2)  # Σ|e'|, rounded: 2·t bounds it (k ≤ 2⁵⁰ terms)
    s2, f = _two_sum(s, c)
    gap = np.spacing(np.abs(s2))
    frac, _ = np.frexp(s2)
    gap = np.where(np.abs(frac) == 0.5, gap / 2.0, gap)  # a power of two: the gap below is half
    ok = (s2 != 0.0) & ((t == 0.0) | (np.abs(f) + 2.0 * t + k * 2.0**-1074 < gap / 2.0))
    out = np.where(ok, s2, 0.0)
    # A row of +0.0 only sums to 0.0 (the weighted logs of a clip that met every request).
    ok |= ~(pt != 0.0).any(axis=0) & ~np.signbit(pt).any(axis=0)
    fsum = math.fsum
    for r in np.flatnonzero(~ok).tolist():
        out[r] = fsum(pt[:, r].tolist())
    return out


@dataclass(frozen=True)
class _LimbSet:
    """Columns ``cols`` of ``values`` (m, V) as ``k`` exact integer limbs each: ``limbs``
    (m, k·len(cols)), limb j of every column in block j (j = 0 the lowest, non-negative; the
    top one signed), and ``scales`` (k, len(cols)) the powers of two that turn limb j's sums
    back into values."""

    cols: npt.NDArray[np.int64]
    k: int
    limbs: npt.NDArray[np.float64]
    scales: npt.NDArray[np.float64]


@dataclass(frozen=True)
class _Limbs:
    """Every column that fits (``good``, in the order of the sets' columns) and its sets."""

    good: npt.NDArray[np.int64]
    sets: tuple[_LimbSet, ...]


def _limbs(values: npt.NDArray[np.float64], total: int, fast: bool) -> _Limbs:
    """Split the columns into exact integer limbs of L = 53 − bitlen(total) bits.

    Column v is integers times 2^E (E its smallest LSB exponent, from ``frexp``) needing
    ``bits`` bits; it gets k = ⌈bits / L⌉ ≤ :data:`_MAX_LIMBS` limbs. With count rows summing
    to at most ``total``, every partial sum of ``counts @ limbs`` is then an exact integer
    below 2⁵³, whatever order or grouping the BLAS adds in. A column needing more limbs,
    holding a −0.0 or on a near-subnormal grid is left out (its caller takes the slow path).
    """
    limb = 53 - total.bit_length()  # total · 2^limb < 2^53
    _, expo = np.frexp(values)
    expo = expo.astype(np.int64)
    nonzero = values != 0.0
    empty = ~nonzero.any(axis=0)
    lsb = np.where(empty, 0, np.where(nonzero, expo - 53, 1 << 20).min(axis=0))
    bits = np.where(empty, 0, np.where(nonzero, expo, -(1 << 20)).max(axis=0) - lsb)
    negzero = ((values == 0.0) & np.signbit(values)).any(axis=0)
    ok = ~negzero & (lsb >= _MIN_LSB) & (limb >= 1) & fast
    need = np.maximum(1, -(-bits // max(limb, 1)))
    sets = []
    for k in range(1, _MAX_LIMBS + 1):
        cols = np.flatnonzero(ok & (need == k))
        if len(cols) == 0:
            continue
        e = lsb[cols]
        # Scaling by a power of two in the normal range is exact (and faster than ldexp).
        rest = values[:, cols] * np.ldexp(1.0, -e)  # exact integers, |·| < 2^(k·limb)
        parts = []
        for _ in range(k - 1):
            q = np.floor(rest * 2.0**-limb)
            parts.append(rest - q * 2.0**limb)  # in [0, 2^limb), exact
            rest = q
        parts.append(rest)  # the signed top limb, |·| ≤ 2^limb
        scales = np.stack([np.ldexp(1.0, e + j * limb) for j in range(k)])
        sets.append(_LimbSet(cols, k, np.concatenate(parts, axis=1), scales))
    good = (np.concatenate([st.cols for st in sets]) if sets
            else np.zeros(0, dtype=np.int64))
    return _Limbs(good, tuple(sets))


def _sums(counts: npt.NDArray[np.float64], lm: _Limbs, n: int) -> npt.NDArray[np.float64]:
    """Σₚ counts[r, p] · values[p, v] correctly rounded, then ÷ n, for the columns
    ``lm.good``: the limb sums times their powers of two are exact doubles; one IEEE addition
    of two of them (or :func:`exact_row_sums` of three or more) is the correctly rounded sum,
    fsum's; then one IEEE division, as the rule's."""
    out = []
    for st in lm.sets:
        r = counts @ st.limbs
        m = len(st.cols)
        parts = [r[:, j * m:(j + 1) * m] for j in range(st.k)]
        for j, part in enumerate(parts):
            np.multiply(part, st.scales[j], out=part)  # in place: exact (a power of two)
        if st.k == 1:
            s = parts[0]
        elif st.k == 2:
            s = np.add(parts[1], parts[0], out=parts[1])
        else:
            s = exact_row_sums(np.stack(parts, axis=-1).reshape(-1, st.k)).reshape(r.shape[0], m)
        out.append(np.divide(s, n, out=s))
    return np.concatenate(out, axis=1)


def _groups(values: npt.NDArray[np.float64]) -> tuple[npt.NDArray[np.int64],
                                                       npt.NDArray[np.int64]]:
    """Rows of ``values`` (n, V) that are equal bit for bit in every column: (the first row
    of each group, the group of every row), groups in order of first appearance."""
    first: dict[bytes, int] = {}
    group = np.empty(values.shape[0], dtype=np.int64)
    for i, row in enumerate(np.ascontiguousarray(values).view(np.uint64)):
        group[i] = first.setdefault(row.tobytes(), len(first))
    reps = np.empty(len(first), dtype=np.int64)
    reps[group[::-1]] = np.arange(values.shape[0] - 1, -1, -1)
    return reps, group


def exact_bootstrap_means(
    deltas: npt.NDArray[np.float64], *, n_boot: int = BOOTSTRAP_N, seed: int = BOOTSTRAP_SEED,
    fast: bool = True, counts: CountBlocks | None = None,
) -> npt.NDArray[np.float64]:
    """The resampled means of every column of ``deltas`` (n, V): shape (V, n_boot), row v equal
    bit for bit to ``bootstrap_means(deltas[:, v], n_boot=n_boot, seed=seed)``.

    Items whose δ are equal in every column are counted together (the exact sum is the same
    number), so C[b, p] is how often resample b draws an item of group p (Σₚ C = n); then the
    limbs of :func:`_limbs` and one float64 product per block of resamples, ÷ n. A column
    that does not fit, and every column with ``fast=False``, uses
    :func:`~vocencebench.decide.bootstrap_means` itself. ``counts`` reuses the resample
    counts of earlier calls (same n, n_boot and seed).
    """
    d = np.asarray(deltas, dtype=np.float64)
    n, cols = d.shape
    out = np.empty((cols, n_boot))
    if cols == 0:
        return out
    if n < 1:
        bootstrap_means([], n_boot=n_boot, seed=seed)  # raises the rule's own error
    if not np.all(np.isfinite(d)):
        raise ScoresError("a variant's differences are not finite")
    reps, group = _groups(d)
    lm = _limbs(d[reps], n, fast)
    slow = np.setdiff1d(np.arange(cols), lm.good)
    for v in slow.tolist():
        out[v] = bootstrap_means(d[:, v], n_boot=n_boot, seed=seed)
    if len(lm.good) == 0:
        return out
    blocks = counts if counts is not None else CountBlocks(n, n_boot, seed)
    if (blocks.n, blocks.n_boot, blocks.seed) != (n, n_boot, seed):
        raise ValueError("counts were made for another n, n_boot or seed")
    # Column sums by group: the items of a group in a row, added (small exact integers).
    order = np.argsort(group, kind="stable")
    starts = np.searchsorted(group[order], np.arange(len(reps)))

    def grouped(c: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
        return np.add.reduceat(c[:, order], starts, axis=1) if len(reps) < n else c

    if n_boot * len(reps) <= CHUNK_FLOATS:
        # Resamples that draw every group equally often have the same mean: each distinct
        # count row is summed once (at small n most of the 2000 are repeats).
        rows = np.concatenate([grouped(c) for _, c in blocks], axis=0)
        first: dict[bytes, int] = {}
        which = np.array([first.setdefault(r.tobytes(), len(first)) for r in rows],
                         dtype=np.int64)
        distinct = rows[np.unique(which, return_index=True)[1]]
        out[lm.good] = _sums(distinct, lm, n)[which].T
        return out
    buf = np.empty((n_boot, len(lm.good)))
    for b0, c in blocks:
        buf[b0:b0 + c.shape[0]] = _sums(grouped(c), lm, n)
    out[lm.good] = buf.T
    return out


def exact_means(values: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
    """``[math.fsum(values[:, v]) / n for v]`` for a finite (n, V) array (decide's S̄), by the
    same limbs with one count row of ones; a column that does not fit is fsum'd."""
    x = np.asarray(values, dtype=np.float64)
    n, cols = x.shape
    if n == 0:
        return np.full(cols, np.nan)
    lm = _limbs(x, n, True)
    out = np.empty(cols)
    out[lm.good] = _sums(np.ones((1, n)), lm, n)[0]
    for v in np.setdiff1d(np.arange(cols), lm.good).tolist():
        out[v] = math.fsum(x[:, v].tolist()) / n
    return out


def _log_table(rows: Sequence[tuple[tuple[str, float], ...]], dims: Sequence[str],
               epsilon: float) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.bool_]]:
    """``math.log(max(d, ε))`` of every distinct clip and dimension (0.0 where the clip has no
    such dimension) and the mask of the dimensions it has."""
    col = {dim: j for j, dim in enumerate(dims)}
    logs = np.zeros((len(rows), len(dims)))
    mask = np.zeros((len(rows), len(dims)), dtype=bool)
    seen: dict[float, float] = {}
    for r, row in enumerate(rows):
        for dim, v in row:
            if v not in seen:
                seen[v] = math.log(max(v, epsilon))
            logs[r, col[dim]] = seen[v]
            mask[r, col[dim]] = True
    return logs, mask


def equal_composites(rows: Sequence[tuple[tuple[str, float], ...]], dims: Sequence[str], *,
                     epsilon: float, drops: Sequence[str | None] = (None,)
                     ) -> list[npt.NDArray[np.float64]]:
    """``composite(d, 1, epsilon=epsilon)`` of every distinct clip (its sorted (dimension, d)
    pairs), once with each dimension of ``drops`` left out (None: none), vectorised with the
    same operations: the log of each d floored at ε (``math.log``), their exactly rounded sum
    (:func:`exact_row_sums`; the 0.0 of an absent dimension adds nothing), ÷ the number of
    dimensions, ``math.exp``, then min(1, ·); a clip with no dimension gets 1.0, as
    ``composite`` gives it."""
    full, full_mask = _log_table(rows, dims, epsilon)
    out = []
    for drop in drops:
        logs, mask = full.copy(), full_mask.copy()
        if drop is not None and drop in dims:
            j = list(dims).index(drop)
            logs[:, j], mask[:, j] = 0.0, False
        k = mask.sum(axis=1)
        means = exact_row_sums(logs) / np.maximum(k, 1)
        vals = np.fromiter(map(math.exp, means.tolist()), dtype=np.float64, count=len(rows))
        out.append(np.where(k > 0, np.minimum(1.0, vals), 1.0))
    return out


def weight_draws(k: int, *, draws: int, seed: int) -> npt.NDArray[np.float64]:
    """Unnormalised Dirichlet(1) draws e, shape (draws, k): standard exponentials
    ``0.0 − math.log(((raw >> 11) + 1) · 2⁻⁵³)`` of ``numpy.random.PCG64(seed).random_raw``,
    row t using ``raw[t·k : (t+1)·k]``. A row divided by its ``fsum`` is a Dirichlet(1)
    weight vector (normalised exponentials); no NumPy ``Generator`` method is involved."""
    if draws < 1 or k < 1:
        return np.zeros((max(draws, 0), max(k, 0)))
    raw = np.asarray(np.random.PCG64(seed).random_raw(draws * k), dtype=np.uint64)
    u = ((raw >> np.uint64(11)) + np.uint64(1)).astype(np.float64) * 2.0**-53  # (0, 1], exact
    log = math.log
    return np.array([0.0 - log(x) for x in u.tolist()]).reshape(draws, k)


def weighted_composites(rows: Sequence[tuple[tuple[str, float], ...]], dims: Sequence[str],
                        e: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
    """``min(1, math.exp(fsum(wⱼ · math.log(max(dⱼ, ε)))))`` for every draw (row of ``e``) and
    every distinct clip (``rows``: its sorted (dimension, d) pairs): shape (draws, len(rows)).

    ``wⱼ = eⱼ / fsum(e over the clip's own dimensions)``, so a clip scored on fewer
    dimensions (the judge did not hear it) uses the draw's weights of the ones it has; ε is
    the rule's. Products are IEEE products, the sum is :func:`exact_row_sums` (= fsum).
    """
    logs, mask = _log_table(rows, dims, EPSILON)
    out = np.empty((e.shape[0], len(rows)))
    groups: dict[bytes, list[int]] = {}
    for r in range(len(rows)):
        groups.setdefault(mask[r].tobytes(), []).append(r)
    fsum = math.fsum
    for members in groups.values():
        cols = np.flatnonzero(mask[members[0]])
        if len(cols) == 0:
            out[:, members] = 1.0  # no dimension: exp(fsum([])) = 1
            continue
        sub = e[:, cols]
        denom = np.array([fsum(x) for x in sub.tolist()])
        # A draw whose every weight here is 0 (each u = 1, odds 2^-53 apiece) weighs equally.
        w = np.where(denom[:, None] > 0.0, sub / np.where(denom > 0.0, denom, 1.0)[:, None],
                     1.0 / len(cols))
        # Products laid out (dimension, draw, clip): the sums read contiguous rows.
        prods_t = w.T[:, :, None] * logs[members][:, cols].T[:, None, :]
        flat_t = prods_t.reshape(len(cols), -1)
        sums = _column_sums(flat_t)
        vals = np.fromiter(map(math.exp, sums.tolist()), dtype=np.float64, count=sums.size)
        out[:, members] = np.minimum(1.0, vals).reshape(e.shape[0], len(members))
    return out
