"""The judging schedule of a ``stop_when_decided`` run (:class:`JudgeSchedule`).

The engine measures every item first (synthesis, gate, probes) and *parks* each pair that
needs the judge instead of judging it. Once nothing else is open, the schedule evaluates the
stopping rule over everything known (judged pairs' composites, parked pairs' ranges:
:mod:`vocencebench.early_stopping`) and either says the verdict is certain — the parked pairs
close unjudged — or releases the next :data:`~vocencebench.constants.EARLY_STOP_BATCH` parked
pairs in the seeded order (:func:`~vocencebench.early_stopping.judge_order`). The rule is
evaluated only between complete batches, so which items are judged depends on the data
alone, never on which judge call returned first: two runs judge the same items and write the
same bytes.
"""

from __future__ import annotations

from dataclasses import KW_ONLY, dataclass, field
from typing import Any

from ..constants import BOOTSTRAP_N, BOOTSTRAP_SEED, EARLY_STOP_BATCH, JUDGE_ORDER_SEED
from ..early_stopping import certain_winner, judge_order, sample_range, verdict_bounds
from ..pair import PairResult
from .records import OpenItem

__all__ = ["JudgeSchedule"]

Range = tuple[float, float]


@dataclass(eq=False)
class JudgeSchedule:
    """Which parked pairs to judge next, and when to stop (see the module docstring).

    ``n`` items, in batches of ``batch`` pairs in the order seeded by ``seed``; ``n_boot`` /
    ``boot_seed`` are the decision's bootstrap (the run decides with the defaults; tests may
    pass less).
    """

    n: int
    labels: tuple[str, str]
    _: KW_ONLY
    batch: int = EARLY_STOP_BATCH
    seed: int = JUDGE_ORDER_SEED
    n_boot: int = BOOTSTRAP_N
    boot_seed: int = BOOTSTRAP_SEED
    #: How many pairs were parked for the judge; whether the verdict is settled, which, why.
    needing_judge: int = field(default=0, init=False)
    done: bool = field(default=False, init=False)
    verdict: str | None = field(default=None, init=False)
    why: str = field(default="", init=False)
    trace: list[dict[str, Any]] = field(default_factory=list, init=False)
    #: Item index → (its open state, its pair closed unjudged, its two S ranges), while
    #: parked.
    _parked: dict[int, tuple[OpenItem, PairResult, tuple[Range, Range]]] = field(
        default_factory=dict, init=False, repr=False)
    _released: set[int] = field(default_factory=set, init=False, repr=False)
    #: Released items whose pair closed complete (the judge answered every dimension).
    _answered: set[int] = field(default_factory=set, init=False, repr=False)
    #: Item index → its two S ranges once closed (None: incomplete, decides nothing).
    _known: dict[int, tuple[Range, Range] | None] = field(
        default_factory=dict, init=False, repr=False)
    _rank: dict[int, int] = field(default_factory=dict, init=False, repr=False)

    def __post_init__(self) -> None:
        if self.batch < 1:
            raise ValueError(f"batch must be >= 1, got {self.batch}")
        self._rank = {i: k for k, i in enumerate(judge_order(self.n, seed=self.seed))}

    # -- what the engine tells the schedule
    def released(self, i: int) -> bool:
        """True when item ``i`` may go to the judge now."""
        return i in self._released

    def park(self, i: int, state: OpenItem, unjudged: PairResult) -> None:
        """Item ``i`` is measured and needs the judge: hold it (``unjudged`` is its pair
        closed without the judge, whose sample ranges bound it)."""
        self.needing_judge += 1
        self._parked[i] = (state, unjudged, (_range(unjudged, "a"), _range(unjudged, "b")))

    def closed(self, i: int, pair: PairResult) -> None:
        """Item ``i`` closed (judged, or never needing the judge)."""
        self._known[i] = None if pair.incomplete is not None else (
            _range(pair, "a"), _range(pair, "b"))
        if i in self._released and pair.incomplete is None:
            self._answered.add(i)

    def state(self, i: int) -> OpenItem | None:
        """The open state of parked item ``i`` (None when it is not parked)."""
        got = self._parked.get(i)
        return got[0] if got is not None else None

    @property
    def pending(self) -> bool:
        """True while parked pairs wait for a decision about them."""
        return not self.done and bool(self._parked)

    # -- the decision between batches
    def next_batch(self) -> list[int]:
        """Evaluate the stopping rule over what is known now and release the next batch of
        parked items (their indices, taken out of the parked set), or ``[]`` when judging is
        over (:meth:`unjudged` then gives the pairs to close as they are)."""
        if not self._parked:
            self.done = True
            return []
        ranges = self._ranges()
        judged = len(self._released)
        if ranges is not None:
            ra, rb = ranges
            b = verdict_bounds(ra, rb, labels=self.labels, n_boot=self.n_boot,
                               seed=self.boot_seed)
            winner, why = certain_winner(b, self.labels)
            self.trace.append({"judged": judged, "unjudged": len(self._parked),
                               "lcb": b.lcb.to_list(), "margin": b.margin.to_list(),
                               "lcb_reverse": b.lcb_reverse.to_list(),
                               "margin_reverse": b.margin_reverse.to_list(),
                               "certain": winner})
            if winner is not None:
                self.done, self.verdict, self.why = True, winner, why
                return []
        take = sorted(self._parked, key=self._rank.__getitem__)[: self.batch]
        self._released.update(take)
        return take

    def release(self, i: int) -> OpenItem:
        """Take released item ``i`` out of the parked set: its open state, to judge it."""
        return self._parked.pop(i)[0]

    def unjudged(self) -> list[tuple[int, PairResult]]:
        """The pairs still parked when judging stopped, closed unjudged (corpus order)."""
        out = [(i, self._parked[i][1]) for i in sorted(self._parked)]
        self._parked.clear()
        return out

    def _ranges(self) -> tuple[list[Range], list[Range]] | None:
        """Both sides' S ranges over every decidable item, in corpus order (the pairing
        order of the decision); None when there is none."""
        ra: list[Range] = []
        rb: list[Range] = []
        for i in range(self.n):
            parked = self._parked.get(i)
            got = parked[2] if parked is not None else self._known.get(i)
            if got is not None:
                ra.append(got[0])
                rb.append(got[1])
        return (ra, rb) if ra else None

    def record(self, *, halted: str | None = None) -> dict[str, Any]:
        """What run.json keeps (``metadata["early_stopping"]``). ``halted``: the fatal error
        that stopped the run before judging was over (the items still parked were never
        asked). ``judged``: items sent to the judge; ``answered``: those it answered on every
        dimension."""
        judged = len(self._released)
        rec = {
            "enabled": True, "batch": self.batch, "order_seed": self.seed,
            "order": "items sorted by (PCG64(order_seed).random_raw(n)[i], i)",
            "items": self.n, "needing_judge": self.needing_judge, "judged": judged,
            "answered": len(self._answered),
            "unjudged": self.needing_judge - judged, "stopped_early": self.verdict is not None,
            "verdict": self.verdict, "why": self.why or (
                "every item that needed the judge was judged: the verdict was not certain "
                "before the last batch"),
            "evaluations": self.trace,
        }
        if halted is not None and self.verdict is None and self._parked:
            rec["halted"] = halted
            rec["why"] = (f"judging stopped before the verdict was certain: {halted}; "
                          f"{self.needing_judge - judged} of the {self.needing_judge} items "
                          "that needed the judge were never asked")
        return rec


def _range(pair: PairResult, side: str) -> Range:
    r = sample_range(pair.a if side == "a" else pair.b)
    assert r is not None  # a complete pair
    return r
