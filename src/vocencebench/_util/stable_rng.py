"""Seeded draws made only from the raw 64-bit words of PCG64, the one stream NumPy promises to
keep the same across releases (``Generator.permutation``, ``integers``, ``standard_normal``
carry no such promise). The bootstrap, the judge order and the robustness draws read that
stream directly; these helpers serve the other seeded choices — the listening test's sample,
page order and sides, the canaries' noise, the red team's signals — so that the same seed
gives the same bytes with any NumPy. Each helper consumes words from the ``bitgen`` it is
given, in call order."""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

__all__ = ["stable_coins", "stable_permutation", "stable_uniform"]


def stable_uniform(bitgen: np.random.PCG64, n: int) -> npt.NDArray[np.float64]:
    """``n`` floats uniform on [-1, 1) (53-bit resolution), from ``n`` raw words."""
    raw = np.asarray(bitgen.random_raw(n), dtype=np.uint64)
    return (raw >> np.uint64(11)).astype(np.float64) * (2.0 / 2.0**53) - 1.0


def stable_permutation(bitgen: np.random.PCG64, n: int) -> list[int]:
    """A permutation of ``range(n)``: the indices sorted by ``n`` raw words (a tie, of
    probability 2⁻⁶⁴ per pair, by index)."""
    raw = [int(x) for x in bitgen.random_raw(n)] if n else []
    return sorted(range(n), key=lambda i: (raw[i], i))


def stable_coins(bitgen: np.random.PCG64, n: int) -> list[bool]:
    """``n`` fair coin flips: the top bit of each of ``n`` raw words."""
    return [bool(int(x) >> 63) for x in bitgen.random_raw(n)] if n else []
