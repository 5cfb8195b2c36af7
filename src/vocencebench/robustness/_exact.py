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

import numpy as np
import numpy.typing as npt

from ..constants import BOOTSTRAP_N, BOOTSTRAP_SEED, EPSILON
from ..decide import bootstrap_index_blocks, bootstrap_means
from ..errors import ScoresError

__all__ = ["CountBlocks", "exact_bootstrap_means", "exact_row_sums", "weight_draws",
           "weighted_composites"]

#: Memory bound of one matrix here, in doubles (2²⁴ = 128 MiB): the limb columns of one
#: chunk, the kept resample counts. At n = 496 everything fits in one chunk.
CHUNK_FLOATS = 1 << 24
#: Smallest LSB exponent the fast means accept: far from the subnormal range, so every scaled
#: limb sum is an exact normal double.
_MIN_LSB = -1000


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

    A TwoSum cascade gives s and errors e with Σ row = s + Σe exactly; s' = fl(s + fl(Σe)),
    with its own TwoSum error f, and |Σe − fl(Σe)| ≤ η (Higham's bound with a factor 2 to
    spare). Then Σ row = s' + f + (something of size ≤ η): when |f| + η is below half the
    smaller gap from s' to a neighbouring double, s' is the correctly rounded sum, strictly
    (no tie), which is what ``math.fsum`` returns. Every other row (near a tie, a zero sum) is
    summed by ``math.fsum`` itself.
    """
    p = np.asarray(p, dtype=np.float64)
    rows, k = p.shape
    if rows == 0 or k == 0:
        return np.zeros(rows)
    s = p[:, 0].copy()
    c = np.zeros(rows)
    t = np.zeros(rows)
    for j in range(1, k):
        s, e = _two_sum(s, p[:, j])
        c = c + e
        t = t + np.abs(e)
    s2, f = _two_sum(s, c)
    eta = 2.0 * k * 2.0**-53 * t + k * 2.0**-1074
    gap = np.spacing(np.abs(s2))
    frac, _ = np.frexp(s2)
    gap = np.where(np.abs(frac) == 0.5, gap / 2.0, gap)  # a power of two: the gap below is half
    ok = (s2 != 0.0) & (np.abs(f) + eta < gap / 2.0)
    out = np.where(ok, s2, 0.0)
    fsum = math.fsum
    for r in np.flatnonzero(~ok).tolist():
        out[r] = fsum(p[r].tolist())
    return out


def exact_bootstrap_means(
    deltas: npt.NDArray[np.float64], *, n_boot: int = BOOTSTRAP_N, seed: int = BOOTSTRAP_SEED,
    fast: bool = True, counts: CountBlocks | None = None,
) -> npt.NDArray[np.float64]:
    """The resampled means of every column of ``deltas`` (n, V): shape (V, n_boot), row v equal
    bit for bit to ``bootstrap_means(deltas[:, v], n_boot=n_boot, seed=seed)``.

    Column v's values are integers times 2^E (E its smallest LSB exponent); the integers,
    below 2^(2L) with L = 53 − bitlen(n), are split into a signed high and a non-negative low
    limb of L bits each. ``C @ limbs`` then has every partial sum an exact integer below 2⁵³
    (Σᵢ C[b, i] = n), whatever order or grouping the BLAS adds in, and ``hi·2^(L+E) + lo·2^E``
    is one IEEE addition of two exact doubles: the correctly rounded sum, i.e. ``fsum``; then
    ÷ n. A column that does not fit (more than 2L bits, a −0.0, a subnormal grid) and
    ``fast=False`` use :func:`~vocencebench.decide.bootstrap_means` itself. ``counts`` reuses
    the resample counts of earlier calls (same n, n_boot and seed).
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
    limb = 53 - n.bit_length()  # n · 2^limb < 2^53
    _, expo = np.frexp(d)
    expo = expo.astype(np.int64)
    nonzero = d != 0.0
    empty = ~nonzero.any(axis=0)
    lsb = np.where(empty, 0, np.where(nonzero, expo - 53, 1 << 20).min(axis=0))
    bits = np.where(empty, 0, np.where(nonzero, expo, -(1 << 20)).max(axis=0) - lsb)
    negzero = ((d == 0.0) & np.signbit(d)).any(axis=0)
    ok = (bits <= 2 * limb) & ~negzero & (lsb >= _MIN_LSB) & (limb >= 1) & fast
    for v in np.flatnonzero(~ok).tolist():
        out[v] = bootstrap_means(d[:, v], n_boot=n_boot, seed=seed)
    good = np.flatnonzero(ok)
    if len(good) == 0:
        return out
    blocks = counts if counts is not None else CountBlocks(n, n_boot, seed)
    if (blocks.n, blocks.n_boot, blocks.seed) != (n, n_boot, seed):
        raise ValueError("counts were made for another n, n_boot or seed")
    per_chunk = max(1, CHUNK_FLOATS // (2 * n))
    for start in range(0, len(good), per_chunk):
        sel = good[start:start + per_chunk]
        e = lsb[sel]
        ints = np.ldexp(d[:, sel], -e)  # exact integers, |·| < 2^(2·limb)
        hi = np.floor(np.ldexp(ints, -limb))
        lo = ints - np.ldexp(hi, limb)  # in [0, 2^limb), exact
        limbs = np.concatenate([hi, lo], axis=1)
        m = len(sel)
        for b0, c in blocks:
            r = c @ limbs
            sums = np.ldexp(r[:, :m], e + limb) + np.ldexp(r[:, m:], e)  # the one rounding
            out[sel, b0:b0 + c.shape[0]] = (sums / n).T
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
    col = {dim: j for j, dim in enumerate(dims)}
    logs = np.zeros((len(rows), len(dims)))
    mask = np.zeros((len(rows), len(dims)), dtype=bool)
    for r, row in enumerate(rows):
        for dim, v in row:
            logs[r, col[dim]] = math.log(max(v, EPSILON))
            mask[r, col[dim]] = True
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
        prods = w[:, None, :] * logs[members][:, cols][None, :, :]
        sums = exact_row_sums(prods.reshape(-1, len(cols)))
        vals = np.fromiter(map(math.exp, sums.tolist()), dtype=np.float64, count=sums.size)
        out[:, members] = np.minimum(1.0, vals).reshape(e.shape[0], len(members))
    return out
