"""The balanced trait sampler: benchmark v1's seeded assignment of trait values and tiers.

Every column (each trait, and the difficulty/category slot) is a balanced deck shuffled from
PCG64's raw stream, then decorrelated by swaps; :func:`cramers_v` measures what is left.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ..constants import CORPUS_SEED, CORPUS_SIZE, DIFFICULTY_MIX
from ..errors import ConfigError
from ..traits import TRAITS, TraitRegistry

__all__ = [
    "CATEGORIES",
    "HARD_CATEGORIES",
    "Assignment",
    "RawStream",
    "balanced_assignment",
    "cramers_v",
    "difficulty_counts",
]

#: Categories of the hard tier (difficulty 2); easy and normal items are ``everyday``.
HARD_CATEGORIES = ("tongue_twister", "numbers", "urls", "nested_clauses")
CATEGORIES = ("everyday", *HARD_CATEGORIES)


class RawStream:
    """Uniform integers from PCG64's raw 64-bit stream: ``(raw · n) >> 64``, exact.

    Built on the raw stream (stable across NumPy releases), not on ``Generator`` methods.
    """

    def __init__(self, seed: int) -> None:
        self._bitgen = np.random.PCG64(seed)

    def below(self, n: int) -> int:
        raw = int(self._bitgen.random_raw())
        return (raw * n) >> 64

    def shuffle(self, xs: list[str]) -> None:
        for i in range(len(xs) - 1, 0, -1):
            j = self.below(i + 1)
            xs[i], xs[j] = xs[j], xs[i]


def difficulty_counts(n: int) -> tuple[int, int, int]:
    """Items per difficulty (easy, normal, hard) for ``n`` items: 496 → (174, 198, 124)."""
    easy = round(n * DIFFICULTY_MIX[0])
    normal = round(n * DIFFICULTY_MIX[1])
    return easy, normal, n - easy - normal


def _deck(values: Sequence[str], n: int, stream: RawStream) -> list[str]:
    """``n`` cards, each value ⌊n/k⌋ or ⌈n/k⌉ times, shuffled."""
    k = len(values)
    base, extra = divmod(n, k)
    order = list(values)
    stream.shuffle(order)  # which values get the extra card is seeded too
    cards = [v for i, v in enumerate(order) for _ in range(base + (1 if i < extra else 0))]
    stream.shuffle(cards)
    return cards


def cramers_v(x: Sequence[str], y: Sequence[str]) -> float:
    """Cramér's V (0 = independent, 1 = determined) between two categorical columns."""
    if len(x) != len(y) or not x:
        raise ConfigError("cramers_v needs two non-empty columns of equal length")
    xs, ys = sorted(set(x)), sorted(set(y))
    if len(xs) < 2 or len(ys) < 2:
        return 0.0
    xi = {v: i for i, v in enumerate(xs)}
    yi = {v: i for i, v in enumerate(ys)}
    table = np.zeros((len(xs), len(ys)))
    for a, b in zip(x, y, strict=True):
        table[xi[a], yi[b]] += 1
    n = table.sum()
    expected = np.outer(table.sum(1), table.sum(0)) / n
    chi2 = float(((table - expected) ** 2 / expected).sum())
    return math.sqrt(chi2 / (n * (min(len(xs), len(ys)) - 1)))


@dataclass(frozen=True)
class Assignment:
    """Trait values, difficulty and category for one item slot (no text yet)."""

    id: str
    traits: dict[str, str]
    difficulty: int
    category: str


def balanced_assignment(
    n: int = CORPUS_SIZE,
    seed: int = CORPUS_SEED,
    *,
    registry: TraitRegistry = TRAITS,
    max_sweeps: int = 60,
) -> list[Assignment]:
    """A seeded balanced-deck assignment of every trait value, difficulty and category.

    Each column (every trait, and the difficulty/category column) is a deck in which every
    value appears ⌊n/k⌋ or ⌈n/k⌉ times. Decks are shuffled from PCG64's raw stream, then
    pairs of cards within one column are swapped while that lowers Σ chi²/(n·(min k − 1))
    (= Σ Cramér's V²) over all column pairs, so that no two columns are associated. Marginal
    counts never change. Deterministic for a given (n, seed, registry).
    """
    if n < 15:
        raise ConfigError(
            f"balanced_assignment needs n ≥ 15 (every hard category needs an item), got {n}"
        )
    stream = RawStream(seed)
    easy, normal, hard = difficulty_counts(n)
    cat_values = ["easy", "normal", *HARD_CATEGORIES]
    hard_each, hard_extra = divmod(hard, len(HARD_CATEGORIES))
    cat_cards = ["easy"] * easy + ["normal"] * normal
    for i, hard_cat in enumerate(HARD_CATEGORIES):
        cat_cards += [hard_cat] * (hard_each + (1 if i < hard_extra else 0))
    stream.shuffle(cat_cards)

    names = [*registry.names(), "_slot"]
    levels = [list(registry.get(t).values) for t in registry.names()] + [cat_values]
    columns: list[list[int]] = []
    for name, vals in zip(names, levels, strict=True):
        cards = cat_cards if name == "_slot" else _deck(vals, n, stream)
        index = {v: i for i, v in enumerate(vals)}
        columns.append([index[c] for c in cards])

    ncol = len(columns)
    tables: dict[tuple[int, int], np.ndarray] = {}
    inv_e: dict[tuple[int, int], np.ndarray] = {}
    scale: dict[tuple[int, int], float] = {}
    for p in range(ncol):
        for q in range(p + 1, ncol):
            t = np.zeros((len(levels[p]), len(levels[q])))
            for a, b in zip(columns[p], columns[q], strict=True):
                t[a, b] += 1
            tables[p, q] = t
            inv_e[p, q] = n / np.outer(t.sum(1), t.sum(0))
            scale[p, q] = 1.0 / (n * (min(len(levels[p]), len(levels[q])) - 1))

    def cell_delta(p: int, q: int, changes: list[tuple[int, int, int]]) -> float:
        # Change in Σ (O − E)²/E · scale when cells (a, b) of table (p, q) move by ±1.
        key = (p, q) if p < q else (q, p)
        t, ie = tables[key], inv_e[key]
        exp = 1.0 / ie
        acc: dict[tuple[int, int], int] = {}
        for a, b, s in changes:
            cell = (a, b) if p < q else (b, a)
            acc[cell] = acc.get(cell, 0) + s
        total = 0.0
        for (a, b), s in acc.items():
            if s:
                o = t[a, b]
                e = exp[a, b]
                total += ((o + s - e) ** 2 - (o - e) ** 2) * ie[a, b]
        return total * scale[key]

    def apply(p: int, q: int, changes: list[tuple[int, int, int]]) -> None:
        key = (p, q) if p < q else (q, p)
        for a, b, s in changes:
            if p < q:
                tables[key][a, b] += s
            else:
                tables[key][b, a] += s

    for _ in range(max_sweeps):
        improved = 0
        for c in range(ncol):
            col = columns[c]
            for i in range(n):
                j = stream.below(n)
                if col[i] == col[j]:
                    continue
                x, y = col[i], col[j]
                delta = 0.0
                plans = []
                for u in range(ncol):
                    if u == c:
                        continue
                    ui, uj = columns[u][i], columns[u][j]
                    if ui == uj:
                        continue
                    ch = [(x, ui, -1), (y, ui, 1), (y, uj, -1), (x, uj, 1)]
                    plans.append((u, ch))
                    delta += cell_delta(c, u, ch)
                if delta < -1e-12:
                    for u, ch in plans:
                        apply(c, u, ch)
                    col[i], col[j] = y, x
                    improved += 1
        if improved == 0:
            break

    out: list[Assignment] = []
    for k in range(n):
        slot = cat_values[columns[-1][k]]
        difficulty = 0 if slot == "easy" else 1 if slot == "normal" else 2
        category = "everyday" if difficulty < 2 else slot
        traits = {name: levels[ci][columns[ci][k]] for ci, name in enumerate(names[:-1])}
        out.append(Assignment(f"vb-{k + 1:05d}", traits, difficulty, category))
    return out
