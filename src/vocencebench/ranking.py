"""Pure statistics of an N-system leaderboard: pairwise verdicts, tiers, intervals, Bradley–Terry.

Data and seed in, frozen result dataclasses out; nothing here reads audio, a cache or a judge
(:mod:`vocencebench.board` runs the systems and feeds this module). ``docs/leaderboard.md``
states the method; in short:

* **Order and orientation.** A leaderboard has an ordered tuple of systems (the order given;
  in anchor mode the anchor first). The pair {X, Y} is decided once, with the system named
  earlier as the *incumbent* (system a of :class:`~vocencebench.schema.Decision`) and the
  later one as the *challenger* (system b). :func:`decide_pair` is exactly
  :func:`vocencebench.decide.decide` on that pair's composites in pairing order, so a cell is
  bit for bit what ``vocencebench decide --incumbent X --challenger Y`` prints for them.
  The winner does not depend on the orientation (the rule is symmetric); the numbers named
  ``lcb`` / ``lcb_reverse`` swap.
* **Incomplete pairs.** A pair with an instrument failure on any item (``S`` is None) decides
  nothing: its cell is INCOMPLETE, it adds no edge to the tiers and no outcome to the
  Bradley–Terry fit — unless ``allow_incomplete``, when it is decided on its complete items.
* **Tiers** (:func:`tiers`): the beats-graph (X → Y when the X–Y cell says X wins) is cut into
  strongly connected components (a cycle of wins A > B > C > A has no order, so its systems
  share a tier), and each component is placed one tier below the lowest-placed component that
  beats it (tier 1: nobody beats it). So no system is ever ranked above a system that beats it,
  and only a loss moves a system down — a tie never does.
* **System intervals** (:func:`system_score`): per item, the system's composite (the mean over
  its decided pairs when a judge made it depend on the opponent), then the mean over items with
  a 90 % two-sided percentile interval from :func:`vocencebench.decide.bootstrap_means` — the
  same PCG64(BOOTSTRAP_SEED) index stream as every decision, so systems scored on the same items are
  resampled on the same items (a paired bootstrap), and the lower end is at the 5th percentile
  as the decision's LCB is.
* **Bradley–Terry** (:func:`bradley_terry`): a summary, not the verdict. Per-item outcomes of
  every decided pair (S higher = a win, equal S = a tie counted as half a win to each side),
  plus one virtual tied item per compared pair (keeps a sweep finite), fitted by Hunter's
  minorise–maximise iteration with exact sums, a fixed tolerance and iteration cap.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from .constants import BOOTSTRAP_N, BOOTSTRAP_SEED
from .decide import decide
from .errors import ConfigError, ScoresError
from .metrics import bootstrap_ci
from .schema import Decision

__all__ = [
    "BT_MAX_ITER",
    "BT_PRIOR_TIES",
    "BT_TOLERANCE",
    "INTERVAL_LEVEL",
    "BradleyTerry",
    "Cell",
    "Outcome",
    "PairScores",
    "Record",
    "Standings",
    "SystemScore",
    "Tier",
    "bradley_terry",
    "decide_pair",
    "item_outcomes",
    "pair_order",
    "pairs_from_table",
    "pooled_item_scores",
    "rank",
    "system_score",
    "tiers",
]

#: Two-sided level of each system's interval: 5th to 95th percentile of the bootstrap means.
INTERVAL_LEVEL = 0.90
#: Virtual tied items added to every compared pair in the Bradley–Terry fit.
BT_PRIOR_TIES = 1.0
#: The fit stops when no strength changes by more than this fraction in one iteration.
BT_TOLERANCE = 1e-12
#: ... or after this many iterations (then ``converged`` is False).
BT_MAX_ITER = 100_000

#: A cell from one system's point of view.
Outcome = Literal["win", "loss", "tie", "incomplete", "not compared"]


# --------------------------------------------------------------------------- pairs


def pair_order(systems: Sequence[str], anchor: str | None = None) -> tuple[tuple[str, str], ...]:
    """The compared pairs, (incumbent, challenger), in the order they are run and published.

    All pairs: row by row, ``(systems[i], systems[j])`` for i < j. Anchor mode: the anchor
    (which must be ``systems[0]``) against each other system in order.
    """
    _check_names(systems)
    if anchor is not None:
        if anchor != systems[0]:
            raise ConfigError(f"the anchor {anchor!r} must come first in the system order")
        return tuple((anchor, s) for s in systems[1:])
    return tuple((systems[i], systems[j]) for i in range(len(systems))
                 for j in range(i + 1, len(systems)))


def _check_names(systems: Sequence[str]) -> None:
    if len(systems) < 2:
        raise ConfigError(f"a leaderboard needs at least two systems, got {list(systems)}")
    for s in systems:
        if not isinstance(s, str) or not s:
            raise ConfigError(f"system names must be non-empty strings, got {s!r}")
    dup = sorted({s for s in systems if list(systems).count(s) > 1})
    if dup:
        raise ConfigError(f"duplicate system name(s): {', '.join(dup)}; give each a name")


@dataclass(frozen=True)
class PairScores:
    """Both systems' composites S ∈ [0, 1] of one compared pair, item by item.

    ``a`` is the incumbent, ``b`` the challenger; position k is ``items[k]``, in pairing order
    (the corpus order). None marks an incomplete item (an instrument failed); ``incomplete``
    holds the reasons (``"item: reason"``). ``d_a`` / ``d_b`` optionally carry each row's
    desirabilities (dimension → d on [0, 1]) for the per-trait means.
    """

    incumbent: str
    challenger: str
    items: tuple[str, ...]
    a: tuple[float | None, ...]
    b: tuple[float | None, ...]
    incomplete: tuple[str, ...] = ()
    d_a: tuple[Mapping[str, float], ...] = ()
    d_b: tuple[Mapping[str, float], ...] = ()

    def __post_init__(self) -> None:
        n = len(self.items)
        if len(self.a) != n or len(self.b) != n:
            raise ScoresError(
                f"{self.incumbent} vs {self.challenger}: {n} items but {len(self.a)} and "
                f"{len(self.b)} scores"
            )
        for dd in (self.d_a, self.d_b):
            if dd and len(dd) != n:
                raise ScoresError(f"{self.incumbent} vs {self.challenger}: d rows ≠ items")
        if self.incumbent == self.challenger:
            raise ScoresError(f"a pair needs two systems, got {self.incumbent!r} twice")

    @property
    def complete(self) -> bool:
        """True when every item has both scores and no instrument failure was reported."""
        return not self.incomplete and all(
            x is not None and y is not None for x, y in zip(self.a, self.b, strict=True))

    def complete_positions(self) -> list[int]:
        """Positions whose two scores are both present."""
        return [k for k, (x, y) in enumerate(zip(self.a, self.b, strict=True))
                if x is not None and y is not None]


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
    pair: PairScores,
    *,
    allow_incomplete: bool = False,
    n_boot: int = BOOTSTRAP_N,
    seed: int = BOOTSTRAP_SEED,
) -> Cell:
    """Decide one pair with the exact rule of :func:`vocencebench.decide.decide`.

    Labels are (incumbent, challenger). A pair with any incomplete item is INCOMPLETE unless
    ``allow_incomplete``, when it is decided on its complete items only (``skipped`` says how
    many were left out).
    """
    keep = pair.complete_positions()
    skipped = len(pair.items) - len(keep)
    if not pair.complete and not allow_incomplete:
        why = "; ".join(pair.incomplete[:3]) or f"{skipped} item(s) without a score"
        more = f" (+{len(pair.incomplete) - 3} more)" if len(pair.incomplete) > 3 else ""
        return Cell(pair.incumbent, pair.challenger, None,
                    incomplete=f"INCOMPLETE: {why}{more}", skipped=0)
    if not keep:
        return Cell(pair.incumbent, pair.challenger, None,
                    incomplete="INCOMPLETE: no item has both scores", skipped=skipped)
    a = [float(pair.a[k]) for k in keep]  # type: ignore[arg-type]
    b = [float(pair.b[k]) for k in keep]  # type: ignore[arg-type]
    d = decide(a, b, labels=(pair.incumbent, pair.challenger), n_boot=n_boot, seed=seed)
    return Cell(pair.incumbent, pair.challenger, d, skipped=skipped, outcomes=item_outcomes(a, b))


# --------------------------------------------------------------------------- tiers


@dataclass(frozen=True)
class Tier:
    """One tier: ``rank`` 1 is the top. ``systems`` are listed by wins (most first), then
    losses (fewest first), then leaderboard order — a listing, not a ranking within the tier.
    ``cycle`` is True when some of them beat each other in a cycle (A > B > C > A)."""

    rank: int
    systems: tuple[str, ...]
    cycle: bool = False

    def to_dict(self) -> dict[str, Any]:
        return {"tier": self.rank, "systems": list(self.systems), "cycle": self.cycle}


def _reach(n: int, edges: set[tuple[int, int]]) -> list[list[bool]]:
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


def tiers(systems: Sequence[str], beats: Iterable[tuple[str, str]]) -> tuple[Tier, ...]:
    """Tiers that respect every verdict: ``beats`` holds (winner, loser) pairs.

    Components: X and Y share a component when each reaches the other through wins (a cycle).
    Tier of a component = 1 + the largest tier of a component holding a system that beats one
    of its members (1 when nothing beats it). Guarantees: a system that beats another is in a
    strictly higher tier unless both sit in one cycle (then the same tier); a tier k > 1 member
    is beaten by someone in tier k − 1 or belongs to a cycle that is; a tie moves nobody.
    O(N³) in the number of systems.
    """
    names = list(systems)
    _check_names(names)
    pos = {s: k for k, s in enumerate(names)}
    edges: set[tuple[int, int]] = set()
    wins = dict.fromkeys(names, 0)
    losses = dict.fromkeys(names, 0)
    for w, lo in beats:
        if w not in pos or lo not in pos or w == lo:
            raise ConfigError(f"bad verdict edge {w!r} beats {lo!r}")
        if (pos[w], pos[lo]) in edges:
            continue
        edges.add((pos[w], pos[lo]))
        wins[w] += 1
        losses[lo] += 1
    n = len(names)
    reach = _reach(n, edges)
    comp = [-1] * n
    comps: list[list[int]] = []
    for i in range(n):
        if comp[i] >= 0:
            continue
        members = [j for j in range(n) if j == i or (reach[i][j] and reach[j][i])]
        for j in members:
            comp[j] = len(comps)
        comps.append(members)
    preds: list[set[int]] = [set() for _ in comps]
    for i, j in edges:
        if comp[i] != comp[j]:
            preds[comp[j]].add(comp[i])
    level: dict[int, int] = {}

    def depth(c: int) -> int:
        # The condensation is acyclic and has at most n nodes, so recursion depth ≤ n.
        if c not in level:
            level[c] = 1 + max((depth(p) for p in preds[c]), default=0)
        return level[c]

    for c in range(len(comps)):
        depth(c)
    out: list[Tier] = []
    for rank in range(1, max(level.values()) + 1):
        members = [j for c, lv in level.items() if lv == rank for j in comps[c]]
        members.sort(key=lambda j: (-wins[names[j]], losses[names[j]], j))
        cyc = any(len(comps[c]) > 1 for c, lv in level.items() if lv == rank)
        out.append(Tier(rank, tuple(names[j] for j in members), cyc))
    return tuple(out)


# --------------------------------------------------------------------------- intervals


@dataclass(frozen=True)
class SystemScore:
    """A system's mean composite S (on [0, 1]) over ``n`` items with a two-sided ``level``
    percentile bootstrap interval [low, high] (n_boot resamples of the PCG64(seed) stream).
    ``pairs`` is the number of decided pairs its per-item scores were pooled from."""

    system: str
    mean: float
    low: float
    high: float
    n: int
    level: float = INTERVAL_LEVEL
    n_boot: int = BOOTSTRAP_N
    seed: int = BOOTSTRAP_SEED
    pairs: int = 1

    def to_dict(self) -> dict[str, Any]:
        return {"system": self.system, "mean": self.mean, "low": self.low, "high": self.high,
                "n": self.n, "level": self.level, "n_boot": self.n_boot, "seed": self.seed,
                "pairs": self.pairs}


def _pool(values: Sequence[float]) -> float:
    """One value for several equal-or-not readings: the value itself when all are equal
    (always the case without a judge), else their exactly rounded mean."""
    first = values[0]
    if all(v == first for v in values):
        return first
    return math.fsum(values) / len(values)


def _decided_rows(system: str, pairs: Sequence[PairScores], cells: Sequence[Cell]
                  ) -> list[tuple[str, float, Mapping[str, float] | None]]:
    rows: list[tuple[str, float, Mapping[str, float] | None]] = []
    for p, c in zip(pairs, cells, strict=True):
        if c.decision is None or system not in (p.incumbent, p.challenger):
            continue
        side_a = system == p.incumbent
        vals = p.a if side_a else p.b
        dims = p.d_a if side_a else p.d_b
        for k in p.complete_positions():
            v = vals[k]
            assert v is not None
            rows.append((p.items[k], float(v), dims[k] if dims else None))
    return rows


def pooled_item_scores(
    system: str, pairs: Sequence[PairScores], cells: Sequence[Cell]
) -> tuple[tuple[str, ...], tuple[float, ...]]:
    """``system``'s per-item composite over its decided pairs, items in first-seen order.

    Without a judge a system's S on an item is the same in every pair, and that value is used;
    with a judge it depends on the opponent, and the exactly rounded mean over pairs is used.
    """
    by_item: dict[str, list[float]] = {}
    for item, v, _ in _decided_rows(system, pairs, cells):
        by_item.setdefault(item, []).append(v)
    return tuple(by_item), tuple(_pool(v) for v in by_item.values())


def trait_means(system: str, pairs: Sequence[PairScores], cells: Sequence[Cell]
                ) -> dict[str, float]:
    """Mean desirability per dimension (pooled per item as :func:`pooled_item_scores`)."""
    per: dict[str, dict[str, list[float]]] = {}
    for item, _, dims in _decided_rows(system, pairs, cells):
        for dim, v in (dims or {}).items():
            per.setdefault(dim, {}).setdefault(item, []).append(float(v))
    return {dim: math.fsum(_pool(v) for v in items.values()) / len(items)
            for dim, items in per.items()}


def system_score(
    system: str,
    values: Sequence[float],
    *,
    pairs: int = 1,
    n_boot: int = BOOTSTRAP_N,
    seed: int = BOOTSTRAP_SEED,
) -> SystemScore:
    """Mean of ``values`` (fsum) and its 90 % percentile interval on the decision's stream."""
    ci = bootstrap_ci(values, level=INTERVAL_LEVEL, n_boot=n_boot, seed=seed)
    return SystemScore(system, ci.mean, ci.low, ci.high, ci.n, ci.level, ci.n_boot, ci.seed,
                       pairs)


# --------------------------------------------------------------------------- Bradley–Terry


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
    _check_names(names)
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
    if not all(_reach(n, both_ways)[0][j] for j in range(1, n)):
        return empty("not fitted: the compared pairs do not connect every system")
    positive = {(i, j) for i in range(n) for j in range(n) if i != j and w[i][j] > 0}
    reach = _reach(n, positive)
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


# --------------------------------------------------------------------------- standings


@dataclass(frozen=True)
class Record:
    """A system's cells: wins, ties, losses, incomplete and not-compared pairs."""

    wins: int = 0
    ties: int = 0
    losses: int = 0
    incomplete: int = 0
    not_compared: int = 0

    def to_dict(self) -> dict[str, int]:
        return {"wins": self.wins, "ties": self.ties, "losses": self.losses,
                "incomplete": self.incomplete, "not_compared": self.not_compared}


@dataclass(frozen=True)
class Standings:
    """Everything computed from the pairs: cells, tiers, per-system scores, BT summary.

    ``systems`` is the leaderboard order (it fixes each cell's orientation); ``cells`` follow
    :func:`pair_order`; ``scores`` is None for a system with no decided pair.
    """

    systems: tuple[str, ...]
    anchor: str | None
    cells: tuple[Cell, ...]
    scores: dict[str, SystemScore | None]
    traits: dict[str, dict[str, float]]
    records: dict[str, Record]
    tiers: tuple[Tier, ...]
    bradley_terry: BradleyTerry
    allow_incomplete: bool = False
    _index: dict[frozenset[str], Cell] = field(default_factory=dict, repr=False, compare=False)

    def __post_init__(self) -> None:
        self._index.update({frozenset((c.incumbent, c.challenger)): c for c in self.cells})

    @property
    def mode(self) -> str:
        return "anchor" if self.anchor is not None else "all-pairs"

    def cell(self, x: str, y: str) -> Cell | None:
        """The cell of the pair {x, y} (either order), or None when it was not compared."""
        return self._index.get(frozenset((x, y)))

    def outcome(self, x: str, y: str) -> Outcome:
        """The pair {x, y} from ``x``'s point of view."""
        c = self.cell(x, y)
        return "not compared" if c is None else c.outcome_for(x)

    def tier_of(self, system: str) -> int:
        return next(t.rank for t in self.tiers if system in t.systems)

    @property
    def complete(self) -> bool:
        """True when every compared pair was decided."""
        return all(c.decided for c in self.cells)

    def to_dict(self) -> dict[str, Any]:
        return {
            "systems": list(self.systems),
            "mode": self.mode,
            "anchor": self.anchor,
            "allow_incomplete": self.allow_incomplete,
            "orientation": "each pair is decided once with the system listed earlier in "
                           "`systems` as the incumbent (system a) and the later one as the "
                           "challenger (system b)",
            "pairs": [c.to_dict() for c in self.cells],
            "matrix": {
                "rows": list(self.systems),
                "note": "cells[i][j] is the pair from rows[i]'s point of view",
                "cells": [[("self" if x == y else self.outcome(x, y)) for y in self.systems]
                          for x in self.systems],
            },
            "tiers": [t.to_dict() for t in self.tiers],
            "records": {s: r.to_dict() for s, r in self.records.items()},
            "system_scores": {s: (v.to_dict() if v is not None else None)
                              for s, v in self.scores.items()},
            "traits": self.traits,
            "bradley_terry": self.bradley_terry.to_dict(),
        }


def rank(
    systems: Sequence[str],
    pairs: Sequence[PairScores],
    *,
    anchor: str | None = None,
    allow_incomplete: bool = False,
    n_boot: int = BOOTSTRAP_N,
    seed: int = BOOTSTRAP_SEED,
) -> Standings:
    """Decide every pair and derive tiers, per-system scores and the Bradley–Terry summary.

    ``pairs`` must be exactly :func:`pair_order` (``systems``, ``anchor``), in that order and
    orientation.
    """
    order = tuple(systems)
    expected = pair_order(order, anchor)
    got = tuple((p.incumbent, p.challenger) for p in pairs)
    if got != expected:
        raise ConfigError(f"pairs {got} do not follow the leaderboard order {expected}")
    cells = tuple(decide_pair(p, allow_incomplete=allow_incomplete, n_boot=n_boot, seed=seed)
                  for p in pairs)
    beats = [(c.winner, c.challenger if c.winner == c.incumbent else c.incumbent)
             for c in cells if c.decided and c.winner != "tie"]
    records: dict[str, Record] = {}
    for s in order:
        tally = {"win": 0, "tie": 0, "loss": 0, "incomplete": 0, "not compared": 0}
        for t in order:
            if t == s:
                continue
            c = next((c for c in cells if {c.incumbent, c.challenger} == {s, t}), None)
            tally["not compared" if c is None else c.outcome_for(s)] += 1
        records[s] = Record(tally["win"], tally["tie"], tally["loss"], tally["incomplete"],
                            tally["not compared"])
    scores: dict[str, SystemScore | None] = {}
    traits: dict[str, dict[str, float]] = {}
    for s in order:
        _, values = pooled_item_scores(s, pairs, cells)
        n_pairs = sum(1 for c in cells if c.decided and s in (c.incumbent, c.challenger))
        scores[s] = (system_score(s, values, pairs=n_pairs, n_boot=n_boot, seed=seed)
                     if values else None)
        traits[s] = trait_means(s, pairs, cells)
    bt = bradley_terry(order, {(c.incumbent, c.challenger): c.outcomes
                               for c in cells if c.decided})
    return Standings(order, anchor, cells, scores, traits, records, tiers(order, beats), bt,
                     allow_incomplete)


def pairs_from_table(
    table: Any,
    systems: Sequence[str] | None = None,
    *,
    anchor: str | None = None,
) -> tuple[tuple[str, ...], tuple[PairScores, ...]]:
    """Pairs of a published scores file (:class:`vocencebench.scores.ScoresTable`) in which
    each system has one row per item, paired exactly as ``vocencebench decide`` pairs them:
    items in order of first appearance in the file, every item needing both systems' rows.

    ``systems`` defaults to the file's order of first appearance; with ``anchor`` it is moved
    first. Returns (system order, pairs).
    """
    order = list(systems) if systems is not None else list(table.systems)
    if anchor is not None:
        if anchor not in order:
            raise ConfigError(f"the anchor {anchor!r} is not one of {order}")
        order = [anchor, *(s for s in order if s != anchor)]
    out = []
    for x, y in pair_order(order, anchor):
        paired = table.pair(x, y)
        out.append(PairScores(x, y, tuple(paired.items), tuple(paired.a), tuple(paired.b)))
    return tuple(order), tuple(out)
