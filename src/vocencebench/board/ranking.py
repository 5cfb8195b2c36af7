"""Pure statistics of an N-system leaderboard: pairwise verdicts, tiers, intervals, Bradley–Terry.

Data and seed in, frozen result dataclasses out; nothing here reads audio, a cache or a judge
(:mod:`vocencebench.board.run` runs the systems and feeds this module). ``docs/leaderboard.md``
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
from typing import Any

from ..constants import BOOTSTRAP_N, BOOTSTRAP_SEED
from ..errors import ConfigError
from ..metrics import bootstrap_ci
from ..scores import PairedScores
from .bradley_terry import BradleyTerry, bradley_terry
from .cells import Cell, Outcome, check_names, decide_pair, pair_order, reachability

__all__ = [
    "INTERVAL_LEVEL",
    "Record",
    "Standings",
    "SystemScore",
    "Tier",
    "anchor_tiers",
    "pairs_from_table",
    "pooled_item_scores",
    "rank",
    "system_score",
    "tiers",
    "trait_means",
]

#: Two-sided level of each system's interval: 5th to 95th percentile of the bootstrap means.
INTERVAL_LEVEL = 0.90


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
    check_names(names)
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
    reach = reachability(n, edges)
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


def anchor_tiers(systems: Sequence[str], anchor: str, beats: Iterable[tuple[str, str]]
                 ) -> tuple[Tier, ...]:
    """The tiers of an anchor-mode leaderboard, where only the anchor's pairs are decided:
    the systems that beat the anchor, then the anchor with those it could not tell apart (a
    tie, or no decided pair), then those it beats; empty tiers are left out. (The all-pairs
    layering would put a system that merely ties the anchor above it, beside the systems that
    beat it.) Within a tier, systems are listed as in :func:`tiers`."""
    names = list(systems)
    check_names(names)
    if anchor not in names:
        raise ConfigError(f"the anchor {anchor!r} is not one of {names}")
    above: set[str] = set()
    below: set[str] = set()
    for w, lo in beats:
        if w not in names or lo not in names or w == lo or anchor not in (w, lo):
            raise ConfigError(f"bad verdict edge {w!r} beats {lo!r} in anchor mode")
        (above if lo == anchor else below).add(w if lo == anchor else lo)
    wins = {s: (s in above) + (len(below) if s == anchor else 0) for s in names}
    losses = {s: (s in below) + (len(above) if s == anchor else 0) for s in names}
    groups = ([s for s in names if s in above],
              [s for s in names if s not in above and s not in below],
              [s for s in names if s in below])
    out: list[Tier] = []
    for group in groups:
        if group:
            group.sort(key=lambda s: (-wins[s], losses[s], names.index(s)))
            out.append(Tier(len(out) + 1, tuple(group), False))
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


def _decided_rows(system: str, pairs: Sequence[PairedScores], cells: Sequence[Cell]
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
    system: str, pairs: Sequence[PairedScores], cells: Sequence[Cell]
) -> tuple[tuple[str, ...], tuple[float, ...]]:
    """``system``'s per-item composite over its decided pairs, items in first-seen order.

    Without a judge a system's S on an item is the same in every pair, and that value is used;
    with a judge it depends on the opponent, and the exactly rounded mean over pairs is used.
    """
    by_item: dict[str, list[float]] = {}
    for item, v, _ in _decided_rows(system, pairs, cells):
        by_item.setdefault(item, []).append(v)
    return tuple(by_item), tuple(_pool(v) for v in by_item.values())


def trait_means(system: str, pairs: Sequence[PairedScores], cells: Sequence[Cell]
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
    pairs: Sequence[PairedScores],
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
    layers = tiers(order, beats) if anchor is None else anchor_tiers(order, anchor, beats)
    return Standings(order, anchor, cells, scores, traits, records, layers, bt,
                     allow_incomplete)


def pairs_from_table(
    table: Any,
    systems: Sequence[str] | None = None,
    *,
    anchor: str | None = None,
) -> tuple[tuple[str, ...], tuple[PairedScores, ...]]:
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
        out.append(table.pair(x, y))
    return tuple(order), tuple(out)
