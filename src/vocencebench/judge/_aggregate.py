"""Single judgements (one backend call each, un-swapped) and how they fold into a Verdict.

Per order the winner is the majority over its votes (a tied count is a ``tie``); with
``consistent=True`` the winner stands only when both orders agree. Scores (0–3) and
confidence ([0, 1]) are exact (``math.fsum``) means over every order and vote.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from ..errors import ConfigError, JudgeError
from ..prompts import Answer
from ..schema import Verdict, Winner

__all__ = ["ORDERS", "DimensionJudgement", "Order", "SingleJudgement", "Winner", "aggregate",
           "majority_winner"]

#: Presentation orders: "ab" plays the caller's audio_a first (as "A"), "ba" audio_b first.
ORDERS: tuple[str, str] = ("ab", "ba")

Order = Literal["ab", "ba"]


@dataclass(frozen=True)
class DimensionJudgement:
    """One dimension of one single judgement, un-swapped (``a``/``b`` = the caller's clips).

    Scores are integers 0–3; ``confidence`` on [0, 1].
    """

    score_a: int
    score_b: int
    winner: Winner
    analysis_a: str
    analysis_b: str
    confidence: float

    @classmethod
    def from_answer(cls, ans: Answer, order: Order) -> DimensionJudgement:
        """Un-swap an :class:`~vocencebench.prompts.Answer` given in presentation labels."""
        if order == "ab":
            win: Winner = {"A": "a", "B": "b"}.get(ans.winner, "tie")  # type: ignore[assignment]
            return cls(ans.score_a, ans.score_b, win, ans.analysis_a, ans.analysis_b,
                       ans.confidence)
        win = {"A": "b", "B": "a"}.get(ans.winner, "tie")  # type: ignore[assignment]
        return cls(ans.score_b, ans.score_a, win, ans.analysis_b, ans.analysis_a, ans.confidence)


@dataclass(frozen=True)
class SingleJudgement:
    """One backend call: one presentation ``order``, one ``vote`` index, ≥1 dimensions.

    ``judgements`` maps each dimension to its un-swapped :class:`DimensionJudgement`;
    ``raw`` is the model's reply text; ``model`` and ``prompt_version`` say who answered
    what. Round-trips through :meth:`to_dict` / :meth:`from_dict` (for caches).
    """

    order: Order
    vote: int
    model: str
    prompt_version: str
    raw: str
    judgements: Mapping[str, DimensionJudgement] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dict."""
        return {
            "order": self.order,
            "vote": self.vote,
            "model": self.model,
            "prompt_version": self.prompt_version,
            "raw": self.raw,
            "judgements": {d: vars(j).copy() for d, j in self.judgements.items()},
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> SingleJudgement:
        """Inverse of :meth:`to_dict`."""
        try:
            return cls(
                order=data["order"],
                vote=int(data["vote"]),
                model=str(data["model"]),
                prompt_version=str(data["prompt_version"]),
                raw=str(data["raw"]),
                judgements={
                    str(d): DimensionJudgement(**j) for d, j in data["judgements"].items()
                },
            )
        except (KeyError, TypeError, AttributeError) as exc:
            raise JudgeError(f"cannot read a cached judgement: {exc}; delete the cache") from exc


def majority_winner(winners: Sequence[Winner]) -> Winner:
    """The most frequent of ``winners`` (one per vote); equal top counts are a ``tie``."""
    counts = Counter(winners).most_common()
    if len(counts) > 1 and counts[0][1] == counts[1][1]:
        return "tie"
    return counts[0][0]


def aggregate(
    judgements: Sequence[SingleJudgement],
    dimension: str,
    *,
    consistent: bool = True,
) -> Verdict:
    """Fold single judgements of one pair (any orders, any votes) into one :class:`Verdict`.

    Per order the winner is the majority over its votes (equal top counts → ``tie``). With
    ``consistent=True`` and both orders present, the winner stands only if both orders agree,
    else ``tie`` and ``Verdict.consistent=False``; with ``consistent=False`` the winner is the
    majority over all samples. Scores and confidence are exact means over all samples;
    ``Verdict.answers`` keeps every single judgement (un-swapped).
    """
    if not judgements:
        raise ConfigError("aggregate() needs at least one judgement")
    rows = sorted(judgements, key=lambda j: (ORDERS.index(j.order), j.vote))
    dims = [j.judgements.get(dimension) for j in rows]
    if any(d is None for d in dims):
        raise ConfigError(f"a judgement lacks dimension {dimension!r}")
    ds: list[DimensionJudgement] = [d for d in dims if d is not None]
    by_order: dict[str, list[Winner]] = {}
    for j, d in zip(rows, ds, strict=True):
        by_order.setdefault(j.order, []).append(d.winner)
    order_winners = {o: majority_winner(w) for o, w in by_order.items()}
    agree = len(set(order_winners.values())) == 1
    if consistent:
        winner: Winner = next(iter(order_winners.values())) if agree else "tie"
    else:
        winner = majority_winner([d.winner for d in ds])
    n = len(ds)

    def reasoning(side: str) -> str:
        if n == 1:
            return ds[0].analysis_a if side == "a" else ds[0].analysis_b
        return "\n\n".join(
            f"[order {j.order.upper()}, vote {j.vote + 1}] "
            + (d.analysis_a if side == "a" else d.analysis_b)
            for j, d in zip(rows, ds, strict=True)
        )

    models = sorted({j.model for j in rows})
    versions = sorted({j.prompt_version for j in rows})
    return Verdict(
        winner=winner,
        score_a=math.fsum(d.score_a for d in ds) / n,
        score_b=math.fsum(d.score_b for d in ds) / n,
        reasoning_a=reasoning("a"),
        reasoning_b=reasoning("b"),
        confidence=math.fsum(d.confidence for d in ds) / n,
        consistent=agree,
        dimension=dimension,
        model=",".join(models),
        prompt_version=",".join(versions),
        raw=tuple(j.raw for j in rows),
        # Each single judgement, un-swapped: what the judge's behaviour figures are made of
        # (vocencebench.judge_audit: order-swap and vote disagreement, ties, confidence).
        answers=tuple({"order": j.order, "vote": j.vote, "winner": d.winner,
                       "score_a": d.score_a, "score_b": d.score_b,
                       "confidence": d.confidence} for j, d in zip(rows, ds, strict=True)),
    )
