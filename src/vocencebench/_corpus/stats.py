"""Coverage and balance of a corpus: counts per trait value, tier and category, the largest
association between two traits, and the variety of instruction openings."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field

from ..errors import CorpusError
from ..schema import Item
from ..traits import TRAITS, TraitRegistry
from .checks import opening
from .files import corpus_hash
from .sampler import CATEGORIES, cramers_v

__all__ = ["CorpusStats", "corpus_stats"]



@dataclass(frozen=True)
class CorpusStats:
    """Coverage and balance of a corpus.

    ``coverage[trait][value]`` counts items; ``difficulty`` and ``category`` count items per
    tier and category; ``max_cramers_v`` is the largest Cramér's V (0–1) over all trait pairs
    and ``max_pair`` that pair; ``top_opening`` is the most common four-word instruction
    opening and ``top_opening_share`` its share of items (0–1).
    """

    n: int
    coverage: dict[str, dict[str, int]]
    difficulty: dict[int, int]
    category: dict[str, int]
    max_cramers_v: float
    max_pair: tuple[str, str]
    top_opening: str
    top_opening_count: int
    hash: str = ""
    expected: dict[str, float] = field(default_factory=dict)

    @property
    def top_opening_share(self) -> float:
        """Share (0–1) of items that use the most common four-word opening."""
        return self.top_opening_count / self.n if self.n else 0.0

    def table(self) -> str:
        """The coverage table as Markdown: one row per trait value, with its uniform share."""
        rows = ["| trait | value | items | uniform share |", "| --- | --- | ---: | ---: |"]
        for trait, counts in self.coverage.items():
            for value, c in counts.items():
                rows.append(f"| {trait} | {value} | {c} | {self.expected[trait]:.1f} |")
        return "\n".join(rows)

    def summary(self) -> str:
        """A human-readable report: counts, coverage table, association and variety."""
        d = ", ".join(f"{k}: {v}" for k, v in sorted(self.difficulty.items()))
        c = ", ".join(f"{k}: {v}" for k, v in self.category.items())
        return "\n".join([
            f"items: {self.n}" + (f"  sha256: {self.hash}" if self.hash else ""),
            f"difficulty: {d}",
            f"category: {c}",
            f"max Cramér's V: {self.max_cramers_v:.4f} ({self.max_pair[0]} × "
            f"{self.max_pair[1]})",
            f"most common 4-word opening: {self.top_opening!r} × {self.top_opening_count} "
            f"({100 * self.top_opening_share:.1f} %)",
            "",
            self.table(),
        ])


def corpus_stats(items: Sequence[Item], *, registry: TraitRegistry = TRAITS) -> CorpusStats:
    """Coverage per trait value, tier/category counts, max Cramér's V, opening variety."""
    if not items:
        raise CorpusError("corpus_stats needs at least one item")
    n = len(items)
    coverage: dict[str, dict[str, int]] = {}
    expected: dict[str, float] = {}
    for t in registry:
        cnt = Counter(it.traits.get(t.name, "?") for it in items)
        coverage[t.name] = {v: cnt.get(v, 0) for v in t.values}
        expected[t.name] = n / len(t.values)
    best, pair = 0.0, ("", "")
    names = registry.names()
    for i, a in enumerate(names):
        for b in names[i + 1:]:
            v = cramers_v([it.traits.get(a, "?") for it in items],
                          [it.traits.get(b, "?") for it in items])
            if v > best:
                best, pair = v, (a, b)
    diff = Counter(it.difficulty for it in items)
    cat = Counter(it.category for it in items)
    opens = Counter(opening(it.instruction) for it in items)
    top, top_n = opens.most_common(1)[0]
    return CorpusStats(
        n=n, coverage=coverage, difficulty=dict(sorted(diff.items())),
        category={k: cat[k] for k in CATEGORIES if k in cat}, max_cramers_v=best,
        max_pair=pair, top_opening=top, top_opening_count=top_n, hash=corpus_hash(items),
        expected=expected,
    )
