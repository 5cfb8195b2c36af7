"""A Bradley–Terry summary of a leaderboard's per-item outcomes: a summary, NOT the verdict.

Per-item outcomes of every decided pair (S higher = a win, equal S = a tie counted as half a
win to each side), plus one virtual tied item per compared pair (keeps a sweep finite), fitted
by Hunter's minorise–maximise iteration with exact sums, a fixed tolerance and iteration cap.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..errors import ConfigError
from .cells import check_names, reachability

__all__ = ["BT_MAX_ITER", "BT_PRIOR_TIES", "BT_TOLERANCE", "BradleyTerry", "bradley_terry"]

#: Virtual tied items added to every compared pair in the Bradley–Terry fit.
BT_PRIOR_TIES = 1.0
#: The fit stops when no strength changes by more than this fraction in one iteration.
BT_TOLERANCE = 1e-12
#: ... or after this many iterations (then ``converged`` is False).
BT_MAX_ITER = 100_000


@dataclass(frozen=True)
class BradleyTerry:
    """A Bradley–Terry summary (NOT the verdict) of the per-item outcomes of decided pairs.

    ``strength`` p_i > 0 normalised to mean 1 (P(i beats j) = p_i / (p_i + p_j));
    ``log_strength`` ln p_i − mean ln p (natural log; × 400 / ln 10 for an Elo-like scale).
    ``note`` says why nothing was fitted (then both maps are empty).
    """

    systems: tuple[str, ...]
    strength: dict[str, float]
    log_strength: dict[str, float]
    iterations: int
    converged: bool
    items: int
    prior_ties: float = BT_PRIOR_TIES
    tolerance: float = BT_TOLERANCE
    note: str | None = None

    def p_beats(self, x: str, y: str) -> float:
        """Fitted probability that ``x``'s clip is preferred to ``y``'s on an item."""
        px, py = self.strength[x], self.strength[y]
        return px / (px + py)

    def order(self) -> tuple[str, ...]:
        """Systems by fitted strength, strongest first (ties by leaderboard order)."""
        return tuple(sorted(self.strength, key=lambda s: (-self.strength[s],
                                                          self.systems.index(s))))

    def to_dict(self) -> dict[str, Any]:
        return {
            "label": "Bradley–Terry summary of per-item outcomes — NOT the verdict; "
                     "the tiers and the pairwise cells are",
            "model": "ties count half a win to each side; one virtual tied item per "
                     "compared pair; MM iteration (Hunter 2004), exact sums",
            "systems": list(self.systems),
            "strength": self.strength,
            "log_strength": self.log_strength,
            "order": list(self.order()) if self.strength else [],
            "iterations": self.iterations,
            "converged": self.converged,
            "items": self.items,
            "prior_ties": self.prior_ties,
            "tolerance": self.tolerance,
            "note": self.note,
        }


def bradley_terry(
    systems: Sequence[str],
    outcomes: Mapping[tuple[str, str], tuple[int, int, int]],
    *,
    prior_ties: float = BT_PRIOR_TIES,
    tolerance: float = BT_TOLERANCE,
    max_iter: int = BT_MAX_ITER,
) -> BradleyTerry:
    """Fit Bradley–Terry strengths to per-item outcomes.

    ``outcomes[(x, y)] = (items x won, tied items, items y won)`` for each compared pair.
    Each side of a pair is credited ``wins + ties / 2 + prior_ties / 2``; the MM update
    ``p_i ← W_i / Σ_j n_ij / (p_i + p_j)`` (all systems at once, sums with ``math.fsum``, then
    rescaled to mean 1) runs until no p_i changes by more than ``tolerance`` (relative) or
    ``max_iter`` iterations. Deterministic: no randomness, a fixed evaluation order, and no
    transcendental function before the final ``log_strength``.
    """
    names = list(systems)
    check_names(names)
    if prior_ties < 0 or not math.isfinite(prior_ties):
        raise ConfigError(f"prior_ties must be a finite number ≥ 0, got {prior_ties}")
    pos = {s: k for k, s in enumerate(names)}
    n = len(names)
    w = [[0.0] * n for _ in range(n)]
    linked: set[tuple[int, int]] = set()
    total = 0
    for (x, y), (wx, t, wy) in outcomes.items():
        if x not in pos or y not in pos or x == y:
            raise ConfigError(f"bad pair ({x!r}, {y!r}) for the Bradley–Terry fit")
        if min(wx, t, wy) < 0:
            raise ConfigError(f"negative outcome counts for {x} vs {y}")
        i, j = pos[x], pos[y]
        w[i][j] += wx + t / 2 + prior_ties / 2
        w[j][i] += wy + t / 2 + prior_ties / 2
        total += wx + t + wy
        if w[i][j] + w[j][i] > 0:
            linked.add((min(i, j), max(i, j)))

    def empty(note: str) -> BradleyTerry:
        return BradleyTerry(tuple(names), {}, {}, 0, False, total, prior_ties, tolerance, note)

    # Finite strengths need every system reachable from every other through positive wins.
    both_ways = linked | {(j, i) for i, j in linked}
    if not all(reachability(n, both_ways)[0][j] for j in range(1, n)):
        return empty("not fitted: the compared pairs do not connect every system")
    positive = {(i, j) for i in range(n) for j in range(n) if i != j and w[i][j] > 0}
    reach = reachability(n, positive)
    if not all(reach[i][j] for i in range(n) for j in range(n) if i != j):
        return empty("not fitted: a group of systems never loses an item to the rest, so "
                     "its strength is infinite; use prior_ties > 0")
    nbrs = [[j for j in range(n) if j != i and w[i][j] + w[j][i] > 0] for i in range(n)]
    wins_tot = [math.fsum(w[i]) for i in range(n)]
    p = [1.0] * n
    converged = False
    it = 0
    for it in range(1, max_iter + 1):  # noqa: B007 - the count is reported
        new = [wins_tot[i] / math.fsum((w[i][j] + w[j][i]) / (p[i] + p[j]) for j in nbrs[i])
               for i in range(n)]
        scale = n / math.fsum(new)
        new = [v * scale for v in new]
        change = max(abs(v / q - 1.0) for v, q in zip(new, p, strict=True))
        p = new
        if change <= tolerance:
            converged = True
            break
    logs = [math.log(v) for v in p]
    mean_log = math.fsum(logs) / n
    return BradleyTerry(
        tuple(names), {s: p[k] for k, s in enumerate(names)},
        {s: logs[k] - mean_log for k, s in enumerate(names)},
        it, converged, total, prior_ties, tolerance, None,
    )
