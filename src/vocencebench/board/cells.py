"""The compared pairs of a leaderboard and their verdicts (cells).

A leaderboard has an ordered tuple of systems; :func:`pair_order` fixes which pairs are
compared and their orientation (the system named earlier is the incumbent, system a), and
:func:`decide_pair` decides one :class:`~vocencebench.scores.PairedScores` into a
:class:`Cell` with exactly :func:`vocencebench.decide.decide` (composites S on [0, 1]). See
:mod:`vocencebench.board.ranking` for the method as a whole.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

from ..constants import BOOTSTRAP_N, BOOTSTRAP_SEED
from ..decide import decide
from ..early_stopping import decide_ranges
from ..errors import ConfigError
from ..schema import OUTCOME_WORDS, Decision
from ..scores import PairedScores

__all__ = [
    "Cell",
    "Outcome",
    "check_names",
    "decide_pair",
    "item_outcomes",
    "pair_order",
    "reachability",
]

#: A cell from one system's point of view.
Outcome = Literal["win", "loss", "tie", "incomplete", "not compared"]


def pair_order(systems: Sequence[str], anchor: str | None = None) -> tuple[tuple[str, str], ...]:
    """The compared pairs, (incumbent, challenger), in the order they are run and published.

    All pairs: row by row, ``(systems[i], systems[j])`` for i < j. Anchor mode: the anchor
    (which must be ``systems[0]``) against each other system in order.
    """
    check_names(systems)
    if anchor is not None:
        if anchor != systems[0]:
            raise ConfigError(f"the anchor {anchor!r} must come first in the system order")
        return tuple((anchor, s) for s in systems[1:])
    return tuple((systems[i], systems[j]) for i in range(len(systems))
                 for j in range(i + 1, len(systems)))


def check_names(systems: Sequence[str]) -> None:
    """Refuse fewer than two systems, an empty or non-string name, a decision outcome
    (``tie``, ``incomplete``) as a name, or a name given twice."""
    if len(systems) < 2:
        raise ConfigError(f"a leaderboard needs at least two systems, got {list(systems)}")
    for s in systems:
        if not isinstance(s, str) or not s:
            raise ConfigError(f"system names must be non-empty strings, got {s!r}")
        if s in OUTCOME_WORDS:
            raise ConfigError(f"{s!r} cannot name a system: it is a decision outcome")
    dup = sorted({s for s in systems if list(systems).count(s) > 1})
    if dup:
        raise ConfigError(f"duplicate system name(s): {', '.join(dup)}; give each a name")


@dataclass(frozen=True)
class Cell:
    """The verdict of one compared pair.

    ``decision`` is :func:`vocencebench.decide.decide` on the pair (None when INCOMPLETE);
    ``incomplete`` says why the pair decides nothing; ``skipped`` counts incomplete items left
    out under ``allow_incomplete``; ``outcomes`` is (items where a's S is higher, items with
    equal S, items where b's S is higher) over the items decided on.
    """

    incumbent: str
    challenger: str
    decision: Decision | None
    incomplete: str | None = None
    skipped: int = 0
    outcomes: tuple[int, int, int] = (0, 0, 0)

    @property
    def winner(self) -> str:
        """The winning system's name, ``"tie"``, or ``"incomplete"``."""
        return self.decision.winner if self.decision is not None else "incomplete"

    @property
    def decided(self) -> bool:
        return self.decision is not None

    def outcome_for(self, system: str) -> Outcome:
        """This cell from ``system``'s point of view."""
        if system not in (self.incumbent, self.challenger):
            raise ConfigError(f"{system!r} is not in the pair {self.incumbent} vs "
                              f"{self.challenger}")
        w = self.winner
        if w == "incomplete":
            return "incomplete"
        if w == "tie":
            return "tie"
        return "win" if w == system else "loss"

    def lead_lcb(self, system: str) -> float | None:
        """LCB of ``system``'s lead over the other (5th percentile of its mean advantage)."""
        if self.decision is None:
            return None
        return self.decision.lcb_reverse if system == self.incumbent else self.decision.lcb

    def margin_for(self, system: str) -> float | None:
        """The margin ``system``'s lead had to clear: margin(the other system's mean)."""
        if self.decision is None:
            return None
        return self.decision.margin_reverse if system == self.incumbent else self.decision.margin

    def to_dict(self) -> dict[str, Any]:
        wa, ties, wb = self.outcomes
        return {
            "incumbent": self.incumbent,
            "challenger": self.challenger,
            "status": "decided" if self.decided else "incomplete",
            "winner": self.winner,
            "decision": self.decision.to_dict() if self.decision is not None else None,
            "incomplete": self.incomplete,
            "skipped_incomplete_items": self.skipped,
            "item_outcomes": {"incumbent_higher": wa, "equal": ties, "challenger_higher": wb},
        }


def item_outcomes(a: Sequence[float], b: Sequence[float]) -> tuple[int, int, int]:
    """(items with a > b, items with a == b exactly, items with b > a)."""
    wa = sum(1 for x, y in zip(a, b, strict=True) if x > y)
    wb = sum(1 for x, y in zip(a, b, strict=True) if y > x)
    return wa, len(a) - wa - wb, wb


def decide_pair(
    pair: PairedScores,
    *,
    allow_incomplete: bool = False,
    n_boot: int = BOOTSTRAP_N,
    seed: int = BOOTSTRAP_SEED,
) -> Cell:
    """Decide one pair with the exact rule of :func:`vocencebench.decide.decide`.

    Labels are (incumbent, challenger). A pair with any incomplete item is INCOMPLETE unless
    ``allow_incomplete``, when it is decided on its complete items only (``skipped`` says how
    many were left out). A pair that stopped judging early is decided on its items' ranges
    (:func:`vocencebench.early_stopping.decide_ranges`), exactly as its run decided it;
    ``outcomes`` then count its judged items only.
    """
    keep = pair.decidable_positions()
    skipped = len(pair.items) - len(keep)
    if not pair.complete and not allow_incomplete:
        why = ("; ".join(f"{item}: {reason}" for item, reason in pair.incomplete[:3])
               or f"{skipped} item(s) without a score")
        more = f" (+{len(pair.incomplete) - 3} more)" if len(pair.incomplete) > 3 else ""
        return Cell(pair.incumbent, pair.challenger, None,
                    incomplete=f"INCOMPLETE: {why}{more}", skipped=0)
    if not keep:
        return Cell(pair.incumbent, pair.challenger, None,
                    incomplete="INCOMPLETE: no item has both scores", skipped=skipped)
    if pair.bounds_a:
        ra, rb = pair.ranges()
        d = decide_ranges(ra, rb, labels=(pair.incumbent, pair.challenger), n_boot=n_boot,
                          seed=seed)
        known = pair.complete_positions()
        return Cell(pair.incumbent, pair.challenger, d, skipped=skipped,
                    outcomes=item_outcomes([float(pair.a[k]) for k in known],  # type: ignore[arg-type]
                                           [float(pair.b[k]) for k in known]))  # type: ignore[arg-type]
    a = [float(pair.a[k]) for k in keep]  # type: ignore[arg-type]
    b = [float(pair.b[k]) for k in keep]  # type: ignore[arg-type]
    d = decide(a, b, labels=(pair.incumbent, pair.challenger), n_boot=n_boot, seed=seed)
    return Cell(pair.incumbent, pair.challenger, d, skipped=skipped, outcomes=item_outcomes(a, b))


def reachability(n: int, edges: set[tuple[int, int]]) -> list[list[bool]]:
    """Transitive closure of a directed graph on nodes 0..n−1: ``r[i][j]`` is True when j is
    reachable from i through ``edges`` ((from, to) pairs); Warshall's algorithm, O(n³)."""
    r = [[(i, j) in edges for j in range(n)] for i in range(n)]
    for k in range(n):
        rk = r[k]
        for i in range(n):
            if r[i][k]:
                ri = r[i]
                for j in range(n):
                    if rk[j]:
                        ri[j] = True
    return r
