"""How far the judge can be trusted: its own behaviour in a run, and its agreement with
another judge.

Pure functions over what the verdicts record (``Verdict.answers``: every single judgement,
un-swapped, with its order and vote) and the reasons of the judge's failures; nothing here
calls a judge. Two parts:

* :func:`judge_behaviour` — per judged dimension, over all pairs and per system: the
  **order-swap disagreement** rate (the share of pairs judged in both orders whose winner
  changed with the presentation order: the position bias), the **vote disagreement** rate
  (the share of (pair, order) groups of several votes that were not unanimous), the share of
  answers that name a **tie**, the **unparsable** rate (pairs dropped because an answer stayed
  unparsable after the retries, over the pairs answered or dropped so: a dropped pair keeps
  no answers, so single judgements cannot be counted), the **mean confidence**, and the share of
  decided answers that prefer the clip **heard first**. Per system it adds how often the
  system's clip won when heard first and when heard second. A dimension whose swap
  disagreement exceeds :data:`~vocencebench.constants.JUDGE_SWAP_WARNING` gets a WARNING
  (:attr:`JudgeBehaviour.warnings`).
* :func:`agreement` — two judges' answers on the same single judgements (item, order, vote):
  raw agreement and Cohen's κ over the labels a/b/tie, with a percentile interval from a
  bootstrap over items on the raw PCG64 stream (:func:`vocencebench.decide.bootstrap_indices`),
  so the interval is reproducible to the bit.

None of these numbers changes a verdict; they say how much the verdict's judged dimensions
rest on a judge that behaves.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, cast

import numpy as np

from .constants import AGREE_BOOTSTRAP_N, AGREE_CI, AGREE_SEED, JUDGE_SWAP_WARNING
from .decide import bootstrap_indices
from .judge import UNPARSABLE_REASON, majority_winner
from .metrics import cohen_kappa, kappa_of_counts, label_counts
from .pair import PairResult
from .schema import WINNERS, Winner
from .traits import TRAITS, TraitRegistry

__all__ = [
    "LABELS",
    "Agreement",
    "BehaviourRow",
    "JudgeBehaviour",
    "agreement",
    "cohen_kappa",
    "judge_behaviour",
    "order_winners",
]

#: The answer labels κ is computed over (un-swapped winners): :data:`~vocencebench.schema.WINNERS`.
LABELS = WINNERS


def order_winners(answers: Sequence[Mapping[str, Any]]) -> dict[str, str]:
    """Each presentation order's winner over its votes: the judge's own rule
    (:func:`vocencebench.judge.majority_winner`; a tied count is a tie)."""
    by: dict[str, list[Winner]] = {}
    for a in answers:
        # The judge writes a, b or tie here; the rule would count any other label as is.
        by.setdefault(str(a["order"]), []).append(cast("Winner", str(a["winner"])))
    return {o: majority_winner(w) for o, w in sorted(by.items())}


@dataclass(frozen=True)
class BehaviourRow:
    """The judge on one dimension, over all pairs (``system`` None) or over the pairs one
    system took part in. Rates are shares on [0, 1], None when nothing was there to count;
    counts are pairs, answers (single judgements) and (pair, order) groups of several votes.
    ``won_first`` / ``won_second`` (system rows only): the share of answers in which that
    system's clip won while heard first / second."""

    dimension: str
    system: str | None
    pairs: int
    answers: int
    swap_pairs: int
    swap_disagreement: float | None
    vote_groups: int
    vote_disagreement: float | None
    ties: float | None
    asked: int
    unparsable: float | None
    confidence: float | None
    first_preferred: float | None
    won_first: float | None = None
    won_second: float | None = None

    def to_dict(self) -> dict[str, Any]:
        return dict(vars(self))


@dataclass(frozen=True)
class JudgeBehaviour:
    """The judge's behaviour in one run (or leaderboard): ``rows`` per dimension (overall
    first, then per system), ``warnings`` (one line per dimension whose swap disagreement
    exceeds ``threshold``), ``recorded`` False when the run's verdicts carry no per-order
    answers (written before they were kept: only the swap disagreement is known)."""

    rows: tuple[BehaviourRow, ...]
    warnings: tuple[str, ...]
    threshold: float = JUDGE_SWAP_WARNING
    recorded: bool = True
    notes: tuple[str, ...] = ()

    def overall(self) -> list[BehaviourRow]:
        return [r for r in self.rows if r.system is None]

    def per_system(self) -> list[BehaviourRow]:
        return [r for r in self.rows if r.system is not None]

    def to_dict(self) -> dict[str, Any]:
        return {"swap_warning_threshold": self.threshold, "recorded": self.recorded,
                "warnings": list(self.warnings), "notes": list(self.notes),
                "dimensions": [r.to_dict() for r in self.overall()],
                "systems": [r.to_dict() for r in self.per_system()]}


@dataclass
class _Tally:
    pairs: int = 0
    answers: int = 0
    swap_pairs: int = 0
    swaps: int = 0
    vote_groups: int = 0
    vote_splits: int = 0
    ties: int = 0
    asked: int = 0
    unparsable: int = 0
    confidence: list[float] = field(default_factory=list)
    decided: int = 0
    first: int = 0
    heard_first: int = 0
    won_first: int = 0
    heard_second: int = 0
    won_second: int = 0


def _share(k: int, n: int) -> float | None:
    return k / n if n else None


def _unparsable(pair: PairResult, dim: str) -> bool:
    why = pair.dropped.get(dim)
    return why is not None and UNPARSABLE_REASON in why


def _count(t: _Tally, pair: PairResult, dim: str, side: str | None, judged: bool) -> bool:
    """Add one pair's answers on ``dim`` to ``t`` (``side``: the system's side, for a system
    row); False when its verdict has no recorded answers."""
    v = pair.verdicts.get(dim)
    if _unparsable(pair, dim):
        t.asked += 1
        t.unparsable += 1
        return True
    if v is None:
        return True
    t.asked += 1
    t.pairs += 1
    if not v.answers:
        if judged:  # both orders were asked: consistency is the swap agreement
            t.swap_pairs += 1
            t.swaps += not v.consistent
        return False
    winners = order_winners(v.answers)
    if len(winners) == 2:
        t.swap_pairs += 1
        t.swaps += len(set(winners.values())) > 1
    by: dict[str, list[str]] = {}
    for a in v.answers:
        by.setdefault(str(a["order"]), []).append(str(a["winner"]))
    for votes in by.values():
        if len(votes) > 1:
            t.vote_groups += 1
            t.vote_splits += len(set(votes)) > 1
    for a in v.answers:
        w, order = str(a["winner"]), str(a["order"])
        t.answers += 1
        t.ties += w == "tie"
        t.confidence.append(float(a["confidence"]))
        first = "a" if order == "ab" else "b"
        if w != "tie":
            t.decided += 1
            t.first += w == first
        if side is not None:
            if side == first:
                t.heard_first += 1
                t.won_first += w == side
            else:
                t.heard_second += 1
                t.won_second += w == side
    return True


def _row(dim: str, system: str | None, t: _Tally) -> BehaviourRow:
    return BehaviourRow(
        dimension=dim, system=system, pairs=t.pairs, answers=t.answers,
        swap_pairs=t.swap_pairs, swap_disagreement=_share(t.swaps, t.swap_pairs),
        vote_groups=t.vote_groups, vote_disagreement=_share(t.vote_splits, t.vote_groups),
        ties=_share(t.ties, t.answers), asked=t.asked,
        unparsable=_share(t.unparsable, t.asked),
        confidence=math.fsum(t.confidence) / len(t.confidence) if t.confidence else None,
        first_preferred=_share(t.first, t.decided),
        won_first=_share(t.won_first, t.heard_first) if system is not None else None,
        won_second=_share(t.won_second, t.heard_second) if system is not None else None,
    )


def judge_behaviour(
    duels: Iterable[tuple[tuple[str, str], Iterable[PairResult]]],
    *,
    registry: TraitRegistry = TRAITS,
    both_orders: bool = True,
    threshold: float = JUDGE_SWAP_WARNING,
) -> JudgeBehaviour:
    """The judge's behaviour over ``duels``: (labels (a, b), that duel's pairs) — one duel
    for a run, every pair of a leaderboard. ``both_orders``: the run asked both presentation
    orders (it did unless ``--no-swap``); it matters only for verdicts without recorded
    answers, whose ``consistent`` flag then says whether the orders agreed."""
    dims = registry.judged_dimensions()
    overall = {d: _Tally() for d in dims}
    systems: dict[str, dict[str, _Tally]] = {}
    recorded = True
    seen = False
    for labels, pairs in duels:
        for s in labels:
            systems.setdefault(s, {d: _Tally() for d in dims})
        for p in pairs:
            for d in dims:
                if d not in p.verdicts and not _unparsable(p, d):
                    continue
                seen = True
                recorded &= _count(overall[d], p, d, None, both_orders)
                for side, label in zip(("a", "b"), labels, strict=True):
                    _count(systems[label][d], p, d, side, both_orders)
    rows = [_row(d, None, overall[d]) for d in dims]
    rows += [_row(d, s, t[d]) for s, t in systems.items() for d in dims]
    warnings = tuple(
        f"WARNING: judge position bias on {r.dimension}: the winner changed with the "
        f"presentation order in {100 * r.swap_disagreement:.0f} % of {r.swap_pairs} pairs "
        f"(more than {100 * threshold:.0f} %); its {r.dimension} verdicts say more about "
        "the order the clips were played in than about the clips"
        for r in rows if r.system is None and r.swap_disagreement is not None
        and r.swap_disagreement > threshold)
    notes: list[str] = []
    if not seen:
        notes.append("no judged verdict in this run")
    if not recorded:
        notes.append("the verdicts carry no per-order answers (a run written before they "
                     "were kept): only the order-swap disagreement is known")
    if not both_orders:
        notes.append("one presentation order only (--no-swap): the position bias is not "
                     "measured, and not neutralised")
    return JudgeBehaviour(tuple(rows), warnings, threshold, recorded, tuple(notes))


# --------------------------------------------------------------------------- agreement


def _matrix(pairs: Sequence[tuple[str, str]]) -> np.ndarray[Any, Any]:
    return label_counts([u for u, _ in pairs], [v for _, v in pairs], LABELS)


@dataclass(frozen=True)
class Agreement:
    """Two judges on the same single judgements of one dimension: ``n`` answers over
    ``items`` items, raw agreement (share of equal labels, [0, 1]), Cohen's κ and its
    ``level`` percentile interval [low, high] (None when undefined) from ``n_boot`` resamples
    of the items on the PCG64(``seed``) stream."""

    dimension: str
    n: int
    items: int
    raw: float | None
    kappa: float | None
    low: float | None
    high: float | None
    level: float = AGREE_CI
    n_boot: int = AGREE_BOOTSTRAP_N
    seed: int = AGREE_SEED
    confusion: tuple[tuple[int, ...], ...] = ()

    def to_dict(self) -> dict[str, Any]:
        out = dict(vars(self))
        out["confusion"] = {"rows": "run's judge", "columns": "new judge",
                            "labels": list(LABELS), "counts": [list(r) for r in self.confusion]}
        return out


def agreement(
    dimension: str,
    per_item: Sequence[Sequence[tuple[str, str]]],
    *,
    n_boot: int = AGREE_BOOTSTRAP_N,
    seed: int = AGREE_SEED,
    level: float = AGREE_CI,
) -> Agreement:
    """Agreement of two judges on ``dimension``: ``per_item[i]`` lists (old label, new label)
    for each single judgement (order, vote) of item i. κ's interval resamples items (a
    judgement's answers on one item are not independent), with the rows of
    :func:`~vocencebench.decide.bootstrap_indices` (``n_boot`` × items, ``seed``); resamples
    where κ is undefined are left out of the percentiles."""
    mats = np.stack([_matrix(list(p)) for p in per_item]) if per_item else np.zeros(
        (0, len(LABELS), len(LABELS)), dtype=np.int64)
    total = mats.sum(axis=0) if len(per_item) else np.zeros((3, 3), dtype=np.int64)
    n = int(total.sum())
    raw = float(np.trace(total)) / n if n else None
    k = kappa_of_counts(total)
    low = high = None
    if len(per_item) >= 2 and k is not None:
        idx = bootstrap_indices(len(per_item), n_boot, seed)
        ks = [kappa_of_counts(mats[row].sum(axis=0)) for row in idx]
        got = np.array([x for x in ks if x is not None], dtype=np.float64)
        if got.size:
            tail = 100.0 * (1.0 - level) / 2.0
            low = float(np.percentile(got, tail))
            high = float(np.percentile(got, 100.0 - tail))
    return Agreement(dimension, n, len(per_item), raw, k, low, high, level, n_boot, seed,
                     tuple(tuple(int(c) for c in r) for r in total.tolist()))
