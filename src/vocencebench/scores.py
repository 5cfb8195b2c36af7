"""Per-sample scores files: read, validate, pair and decide them.

A scores file is JSON Lines: one object per line with at least ``item`` (str), ``system``
(str) and ``S`` (the composite, a number on [0, 1]); any other keys (``wer``,
``schema_version``, ...) are allowed and ignored. A row that carries its desirabilities ``d``
(and ``gate``, and ``failure``) has its S recomputed from them by the published rule
(:func:`rule_composite`: 0 for a failed sample, else :func:`vocencebench.decide.composite`);
an S further than :data:`~vocencebench.constants.COMPOSITE_TOLERANCE` from that is refused,
naming the line, the item and both values. A row with only S (a third party's file) is taken
as given, and :attr:`ScoresTable.given` counts those rows. A row of an item that an
instrument failed on carries ``"incomplete": "<reason>"`` and ``"S": null``: such an item
cannot be decided, so :meth:`ScoresTable.pair` refuses it unless ``allow_incomplete=True``
(then both systems' rows of the item are left out, and the caller says so). :func:`write_scores`
writes :class:`~vocencebench.schema.SampleScore` rows in this format, and
``vocencebench decide`` reads it through :func:`read_scores` and :func:`decide_scores`.

A row of a sample the judge was never asked about (the run stopped judging once its verdict
was certain, ``stop_when_decided``) carries ``"S": null``, ``"unjudged": [dimensions]``, its
probe desirabilities in ``d`` and its ``gate``: they bound its composite
(:func:`vocencebench.early_stopping.range_of`), and such a file decides only when the bounds
prove the verdict for every outcome of the unjudged rows (otherwise it is refused).

The same INCOMPLETE rule decides a run's own pairs (:func:`decide_pairs`): an item is
*incomplete* when an instrument failed on it (probe, transcriber, judge, a speech service after
its retries); it has no composite and cannot be decided, so no winner is named while any item
is incomplete (``winner == "incomplete"``), unless ``allow_incomplete=True``, which decides on
the complete items only and says so (:func:`incomplete_summary` words the reasons).

Pairing order is part of the verdict: the bootstrap resamples positions of the paired
difference vector, so items are paired in the order in which each item *first appears* in
the file (whichever system's row comes first). Anyone who re-sorts the lines of a published
file can change the last digits of the LCB; publish the file as written.
"""

from __future__ import annotations

import json
import math
import os
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

from ._numbers import is_desirability, is_gate_value, is_real_number
from ._util import strict_json
from .constants import BOOTSTRAP_N, BOOTSTRAP_SEED, COMPOSITE_TOLERANCE
from .decide import composite
from .early_stopping import decide_ranges, range_of, sample_range
from .errors import ScoresError
from .schema import INCOMPLETE, OUTCOME_WORDS, Decision, SampleScore, dumps_canonical

if TYPE_CHECKING:
    from .pair import PairResult

__all__ = [
    "PairedScores",
    "ScoresTable",
    "decide_pairs",
    "decide_scores",
    "incomplete_summary",
    "read_scores",
    "reason_cause",
    "rule_composite",
    "rule_mismatch",
    "write_scores",
]

_REQUIRED = ("item", "system", "S")


# ----------------------------------------------------------------------------- the rule


def rule_composite(d: Any, gate: Any, failure: Any) -> float | None:
    """The S that a sample's own ``d``, ``gate`` and ``failure`` give by the published rule:
    0.0 for a failed sample (``failure`` set) or a vetoed one (gate 0), else
    ``composite(d, gate)``; None when there is nothing to recompute from (no ``d``: S is then
    taken as given). Raises ScoresError (message without a location; the caller adds it)
    for a gate other than 0, 1 or None, an empty ``d`` (no scored dimension: no composite,
    never S = 1), or a ``d`` that is not a mapping of numbers on [0, 1]."""
    if not is_gate_value(gate):
        raise ScoresError(f"gate={gate!r} must be 0, 1 or null")
    if failure or gate == 0:
        return 0.0
    if d is None:
        return None
    if isinstance(d, dict) and not d:
        raise ScoresError("d is empty: a sample with no scored dimension has no composite "
                          "(never S = 1); an instrument failure is a row with incomplete set")
    if not isinstance(d, dict):
        raise ScoresError(f"d must be an object of desirabilities, got {type(d).__name__}")
    for dim, v in d.items():
        if not is_desirability(v):
            raise ScoresError(f"d[{dim!r}]={v!r} is not a number in [0, 1]")
    return composite(d, gate)


def _follows(s: float, expected: float) -> bool:
    return abs(s - expected) <= COMPOSITE_TOLERANCE


def rule_mismatch(s: float, d: Any, gate: Any, failure: Any) -> float | None:
    """The rule's S (:func:`rule_composite`) when ``s`` is further than the tolerance from
    it, else None (they agree, or there is nothing to recompute from)."""
    expected = rule_composite(d, gate, failure)
    return None if expected is None or _follows(s, expected) else expected


# ----------------------------------------------------------------------------- INCOMPLETE


def reason_cause(reason: str) -> str:
    """The contract prefix of a reason (``judge``, ``probes``, ...), or ``other``."""
    head, sep, _ = reason.partition(": ")
    return head if sep and head and " " not in head else "other"


def incomplete_summary(reasons: Sequence[str]) -> str:
    """``"judge: 3, transcription: 1; first: judge: HTTP 503 …"`` for a list of reasons."""
    if not reasons:
        return "none"
    counts = Counter(reason_cause(r) for r in reasons)
    by_cause = ", ".join(f"{c}: {n}" for c, n in sorted(counts.items(), key=lambda x: -x[1]))
    first = reasons[0] if len(reasons[0]) <= 300 else reasons[0][:297] + "..."
    return f"{by_cause}; first: {first}"


def decide_pairs(
    pairs: Sequence[PairResult],
    labels: tuple[str, str],
    *,
    allow_incomplete: bool = False,
) -> Decision:
    """The decision over ``pairs`` under the INCOMPLETE rule.

    Every pair complete: :func:`vocencebench.decide.decide` on the composites (or, when some
    samples were never judged, :func:`vocencebench.early_stopping.decide_ranges` on their
    ranges: the verdict every outcome of them gives). Otherwise the
    numbers are computed over the complete pairs (0 with ``n = 0`` when there are none) and
    ``winner`` is :data:`~vocencebench.schema.INCOMPLETE`, unless ``allow_incomplete`` and at
    least one pair is complete: then the complete pairs decide and the reason opens with
    ``"decided on N of M items; K incomplete: …"``.
    """
    # One pass over the pairs, keeping only the composites and reasons (a PairList is read
    # from disk pair by pair, never held whole).
    sa: list[tuple[float, float]] = []
    sb: list[tuple[float, float]] = []
    missing: list[str] = []
    m = 0
    for p in pairs:
        m += 1
        if p.incomplete is not None:
            missing.append(p.incomplete)
        else:
            sa.append(_range(p.a))
            sb.append(_range(p.b))
    if not missing:
        return decide_ranges(sa, sb, labels=labels)
    k = len(missing)
    what = incomplete_summary(missing)
    base = decide_ranges(sa, sb, labels=labels) if sa else None
    if allow_incomplete and base is not None:
        return replace(base, reason=f"decided on {len(sa)} of {m} items; {k} incomplete: "
                                    f"{what}. {base.reason}")
    reason = (f"INCOMPLETE: {k} of {m} items could not be scored because an instrument "
              f"failed ({what}); no winner is named. Rerun the same command: it resumes and "
              f"retries only what is missing")
    if base is None:
        return Decision(winner=INCOMPLETE, lcb=0.0, margin=0.0, mean_a=0.0, mean_b=0.0, n=0,
                        reason=reason + ".", labels=labels, lcb_reverse=0.0,
                        margin_reverse=0.0, mean_delta=0.0)
    return replace(base, winner=INCOMPLETE,
                   reason=f"{reason}; or pass allow_incomplete=True (--allow-incomplete) to "
                          f"decide on the {len(sa)} complete items. On the complete items: "
                          f"{base.reason}")


def _range(sample: SampleScore) -> tuple[float, float]:
    r = sample_range(sample)
    assert r is not None  # complete pairs only
    return r


# ----------------------------------------------------------------------------- files


@dataclass(frozen=True)
class ScoresTable:
    """Every composite of a scores file, validated.

    ``systems`` and ``items`` are in order of first appearance in the file; ``scores`` maps
    system → item → S (on [0, 1]); ``lines`` maps (item, system) → 1-based line number.
    """

    source: str
    systems: tuple[str, ...]
    items: tuple[str, ...]
    scores: dict[str, dict[str, float]]
    lines: dict[tuple[str, str], int]
    incomplete: dict[tuple[str, str], str] = field(default_factory=dict)
    #: (item, system) → [lowest, highest] S of each unjudged row (early stopping).
    ranges: dict[tuple[str, str], tuple[float, float]] = field(default_factory=dict)
    #: Rows whose S was taken as given (no ``d`` to recompute it from), of ``scored`` rows
    #: with an S.
    given: int = 0
    scored: int = 0
    #: (item, system) → the row's d (dimension → desirability on [0, 1]) for each scored row
    #: that carries one.
    d: dict[tuple[str, str], dict[str, float]] = field(default_factory=dict)
    #: (item, system) → the dimensions a measured row is scored on (d's keys, plus an
    #: unjudged row's judged ones); and the rows the gate vetoed (gate 0).
    dims: dict[tuple[str, str], frozenset[str]] = field(default_factory=dict)
    vetoed: frozenset[tuple[str, str]] = frozenset()

    def pair(self, incumbent: str | None = None, challenger: str | None = None, *,
             allow_incomplete: bool = False) -> PairedScores:
        """Pair two systems item by item (file order); every item must have both.

        Defaults: the incumbent is the first system named in the file, the challenger the
        second. With more than two systems both names are required. An item with an
        incomplete row for either system is refused, or left out with ``allow_incomplete``
        (:attr:`PairedScores.incomplete` lists it, its S None).
        """
        inc, chal = self._choose(incumbent, challenger)
        gaps = [i for i in self.items
                if (i, inc) in self.incomplete or (i, chal) in self.incomplete]
        if gaps and not allow_incomplete:
            first = next(self.incomplete.get((gaps[0], s)) for s in (inc, chal)
                         if (gaps[0], s) in self.incomplete)
            raise ScoresError(
                f"{self.source}: {len(gaps)} item(s) are incomplete (an instrument failed on "
                f"them, e.g. {gaps[0]!r}: {first}); an incomplete run names no winner. "
                "Re-run the benchmark to complete them, or pass --allow-incomplete "
                "(allow_incomplete=True) to decide on the complete items only"
            )
        skip = set(gaps)
        a_rows = self._rows(inc, skip)
        b_rows = self._rows(chal, skip)
        only_a = [i for i in self.items if i in a_rows and i not in b_rows]
        only_b = [i for i in self.items if i in b_rows and i not in a_rows]
        if only_a or only_b:
            parts = []
            for have, lack, missing in ((inc, chal, only_a), (chal, inc, only_b)):
                if missing:
                    where = ", ".join(
                        f"{i!r} (line {self.lines[(i, have)]})" for i in missing[:5]
                    )
                    more = f" and {len(missing) - 5} more" if len(missing) > 5 else ""
                    parts.append(
                        f"{len(missing)} item(s) scored for {have!r} but not {lack!r}: "
                        f"{where}{more}"
                    )
            raise ScoresError(
                f"{self.source}: unpaired items — " + "; ".join(parts)
                + ". Every item needs one row per system; drop or re-score the unpaired ones."
            )
        items = tuple(i for i in self.items if i in a_rows or i in skip)
        self._check_dimensions(inc, chal, [i for i in items if i not in skip])
        # The rows' d go with the pair (for the per-trait means) only when every scored row
        # of both systems has one: a mean over the rows that happen to carry d would mislead.
        scored = [(i, sy) for i in items for sy in (inc, chal)
                  if i not in skip and i in self.scores[sy]]
        with_d = bool(scored) and all(k in self.d for k in scored)
        stopped = any(a_rows[i][0] != a_rows[i][1] or b_rows[i][0] != b_rows[i][1]
                      for i in a_rows)
        return PairedScores(
            incumbent=inc,
            challenger=chal,
            items=items,
            a=tuple(None if i in skip else self.scores[inc].get(i) for i in items),
            b=tuple(None if i in skip else self.scores[chal].get(i) for i in items),
            bounds_a=tuple(a_rows.get(i) for i in items) if stopped else (),
            bounds_b=tuple(b_rows.get(i) for i in items) if stopped else (),
            d_a=tuple(self.d.get((i, inc), {}) for i in items) if with_d else (),
            d_b=tuple(self.d.get((i, chal), {}) for i in items) if with_d else (),
            incomplete=tuple(
                (i, next(self.incomplete[(i, sy)] for sy in (inc, chal)
                         if (i, sy) in self.incomplete))
                for i in gaps),
            source=self.source,
        )

    def _rows(self, system: str, skip: set[str]) -> dict[str, tuple[float, float]]:
        """Item → S range of ``system``'s rows (file order), scored and unjudged alike."""
        rows = {i: (v, v) for i, v in self.scores[system].items() if i not in skip}
        rows.update({i: r for (i, s), r in self.ranges.items() if s == system and i not in skip})
        return {i: rows[i] for i in self.items if i in rows}

    def _choose(self, incumbent: str | None, challenger: str | None) -> tuple[str, str]:
        known = ", ".join(repr(s) for s in self.systems)
        for name in (incumbent, challenger):
            if name is not None and name not in self.scores:
                raise ScoresError(
                    f"{self.source}: no system named {name!r}; systems in the file: {known}"
                )
        if len(self.systems) < 2:
            raise ScoresError(
                f"{self.source}: a decision needs two systems, found only {known}; "
                "add the other system's rows"
            )
        if incumbent is not None and challenger is not None:
            inc, chal = incumbent, challenger
        elif len(self.systems) > 2:
            raise ScoresError(
                f"{self.source}: {len(self.systems)} systems ({known}); choose two with "
                "--incumbent NAME --challenger NAME"
            )
        elif incumbent is not None:
            inc = incumbent
            chal = next(s for s in self.systems if s != inc)
        elif challenger is not None:
            chal = challenger
            inc = next(s for s in self.systems if s != chal)
        else:
            inc, chal = self.systems[0], self.systems[1]
        if inc == chal:
            raise ScoresError(f"{self.source}: incumbent and challenger are both {inc!r}; "
                              "name two systems")
        return inc, chal

    def _check_dimensions(self, inc: str, chal: str, items: Sequence[str]) -> None:
        """Both clips of an item are scored on the same dimensions, the pair's (all it
        covers), unless the judge was not needed: one side failed (the other keeps its probe
        dimensions) or the gate vetoed both (both lack the judged ones). A row that leaves a
        dimension out escapes it, so such a file is refused, naming the row."""
        every = frozenset().union(*(self.dims[(i, s)] for i in items for s in (inc, chal)
                                    if (i, s) in self.dims))
        for i in items:
            ka, kb = self.dims.get((i, inc)), self.dims.get((i, chal))
            if ka is None or kb is None:  # a failed side, or S taken as given
                continue
            both_vetoed = (i, inc) in self.vetoed and (i, chal) in self.vetoed
            want = (ka | kb) if both_vetoed else every
            for sy, k in ((inc, ka), (chal, kb)):
                if k != want:
                    raise ScoresError(
                        f"{self.source}:{self.lines[(i, sy)]}: item {i!r} system {sy!r} is "
                        f"scored on {', '.join(sorted(k)) or 'nothing'} but its pair on "
                        f"{', '.join(sorted(want))}: both clips of an item are scored on "
                        "the same dimensions (a row that leaves one out escapes it); the "
                        "file was edited or written by another rule")


@dataclass(frozen=True)
class PairedScores:
    """Both systems' composites S ∈ [0, 1] on the same items, item by item: what a decision,
    a leaderboard cell and the robustness section read.

    ``a`` is the incumbent, ``b`` the challenger; position k is ``items[k]``, in pairing order
    (the corpus order). None marks an incomplete item (an instrument failed) or, when the
    pair stopped judging early, an unjudged one. ``incomplete`` holds ``(item, reason)`` for
    each incomplete item. ``d_a`` / ``d_b`` optionally carry each row's desirabilities
    (dimension → d on [0, 1]) for the per-trait means. A pair that stopped judging early
    (``stop_when_decided``) also has ``bounds_a`` / ``bounds_b``: every item's [lowest,
    highest] S (``(S, S)`` for a known S), None for an incomplete item.
    """

    incumbent: str
    challenger: str
    items: tuple[str, ...]
    a: tuple[float | None, ...]
    b: tuple[float | None, ...]
    incomplete: tuple[tuple[str, str], ...] = ()
    d_a: tuple[Mapping[str, float], ...] = ()
    d_b: tuple[Mapping[str, float], ...] = ()
    bounds_a: tuple[tuple[float, float] | None, ...] = ()
    bounds_b: tuple[tuple[float, float] | None, ...] = ()
    #: The file the pair was read from ("" when built in memory): its errors name it.
    source: str = ""

    def __post_init__(self) -> None:
        n = len(self.items)
        if len(self.a) != n or len(self.b) != n:
            raise ScoresError(
                f"{self.incumbent} vs {self.challenger}: {n} items but {len(self.a)} and "
                f"{len(self.b)} scores"
            )
        for dd in (self.d_a, self.d_b, self.bounds_a, self.bounds_b):
            if dd and len(dd) != n:
                raise ScoresError(f"{self.incumbent} vs {self.challenger}: rows ≠ items")
        if self.incumbent == self.challenger:
            raise ScoresError(f"a pair needs two systems, got {self.incumbent!r} twice")

    @property
    def complete(self) -> bool:
        """True when every item has both scores (or, stopped early, both ranges) and no
        instrument failure was reported."""
        return not self.incomplete and len(self.decidable_positions()) == len(self.items)

    def decidable_positions(self) -> list[int]:
        """Positions that take part in the decision: both scores present, or both ranges
        when the pair stopped judging early."""
        if self.bounds_a:
            return [k for k, (x, y) in enumerate(zip(self.bounds_a, self.bounds_b,
                                                     strict=True))
                    if x is not None and y is not None]
        return self.complete_positions()

    def complete_positions(self) -> list[int]:
        """Positions whose two scores are both present."""
        return [k for k, (x, y) in enumerate(zip(self.a, self.b, strict=True))
                if x is not None and y is not None]

    def ranges(self) -> tuple[list[tuple[float, float]], list[tuple[float, float]]]:
        """The S range of a and of b on every decidable position (``(S, S)`` where S is
        known)."""
        keep = self.decidable_positions()
        if self.bounds_a:
            return ([r for r in (self.bounds_a[k] for k in keep) if r is not None],
                    [r for r in (self.bounds_b[k] for k in keep) if r is not None])
        return ([(float(x), float(x)) for x in (self.a[k] for k in keep) if x is not None],
                [(float(y), float(y)) for y in (self.b[k] for k in keep) if y is not None])

    def decide(self, *, n_boot: int = BOOTSTRAP_N, seed: int = BOOTSTRAP_SEED) -> Decision:
        """:func:`vocencebench.decide.decide` with labels (incumbent, challenger) on the
        decidable items; when incomplete items were left out, the reason opens with how many
        were decided."""
        at = f"{self.source}: " if self.source else ""
        ra, rb = self.ranges()
        if not ra:
            raise ScoresError(f"{at}no complete paired item to decide on")
        try:
            d = decide_ranges(ra, rb, labels=(self.incumbent, self.challenger), n_boot=n_boot,
                              seed=seed)
        except ScoresError as exc:
            raise ScoresError(f"{at}{exc}") from None
        if not self.incomplete:
            return d
        # The same words as the run's own decision (decide_pairs), so a published
        # incomplete run decided with allow_incomplete reproduces its Decision exactly.
        what = incomplete_summary([reason for _, reason in self.incomplete])
        return replace(d, reason=f"decided on {len(ra)} of {len(self.items)} items; "
                                 f"{len(self.incomplete)} incomplete: {what}. {d.reason}")


def _unjudged_range(where: str, row: Mapping[str, Any]) -> tuple[float, float]:
    """The S range of an unjudged row, every field it rests on checked (one line each)."""
    item, system = row["item"], row["system"]
    who = f"{where}: item {item!r} system {system!r}"
    dims = row["unjudged"]
    if (not isinstance(dims, list) or not dims
            or not all(isinstance(x, str) and x for x in dims) or len(set(dims)) != len(dims)):
        raise ScoresError(f"{who}: unjudged must be a list of distinct dimension names, got "
                          f"{dims!r}")
    if row.get("incomplete") is not None:
        raise ScoresError(f"{who}: a row is either incomplete or unjudged, not both")
    if row["S"] is not None:
        raise ScoresError(f"{who}: an unjudged row has S null (its composite is not known), "
                          f"got S={row['S']!r}")
    d = row.get("d")
    if not isinstance(d, dict):
        raise ScoresError(f"{who}: an unjudged row needs d (its scored dimensions), got {d!r}")
    for k, v in d.items():
        if not is_desirability(v):
            raise ScoresError(f"{who}: d[{k!r}]={v!r} is not a desirability on [0, 1]")
        if k in dims:
            raise ScoresError(f"{who}: dimension {k!r} is both in d and unjudged")
    gate = row.get("gate")
    if not is_gate_value(gate):
        raise ScoresError(f"{who}: gate must be 0, 1 or null, got {gate!r}")
    return range_of({str(k): float(v) for k, v in d.items()}, dims, gate)


class _Row(NamedTuple):
    """One validated line: S (None for an incomplete or unjudged row), the incomplete
    reason, an unjudged row's S range, whether S was taken as given, the row's d, and the
    dimensions a measured row is scored on (its d's keys and its unjudged ones; None for a
    failed row or one without d)."""

    item: str
    system: str
    s: float | None
    gap: str | None
    rng: tuple[float, float] | None
    as_given: bool
    d: dict[str, float] | None
    dims: frozenset[str] | None
    vetoed: bool


def _parse_line(source: str, lineno: int, text: str) -> _Row:
    where = f"{source}:{lineno}"
    try:
        row: Any = strict_json.loads(text, unique_keys=True)
    except json.JSONDecodeError as exc:
        raise ScoresError(
            f"{where}: invalid JSON ({exc.msg} at column {exc.colno}); "
            "each line must be one JSON object"
        ) from None
    except strict_json.DuplicateKeyError as exc:
        raise ScoresError(f"{where}: not a scores row (key {exc.key!r} appears twice in one "
                          "row)") from None
    except ValueError as exc:  # a 5 000-digit number, 10⁵ nested arrays
        raise ScoresError(f"{where}: not a scores row ({' '.join(str(exc).split())[:120]})"
                          ) from None
    if not isinstance(row, dict):
        raise ScoresError(f"{where}: expected a JSON object, got {type(row).__name__}")
    missing = [k for k in _REQUIRED if k not in row]
    if missing:
        raise ScoresError(
            f"{where}: missing {', '.join(missing)}; each row needs item, system and S"
        )
    item, system, s = row["item"], row["system"], row["S"]
    for key, value in (("item", item), ("system", system)):
        if not isinstance(value, str) or not value:
            raise ScoresError(f"{where}: {key} must be a non-empty string, got {value!r}")
    if system in OUTCOME_WORDS:
        raise ScoresError(f"{where}: {system!r} cannot name a system: it is a decision "
                          "outcome, so a verdict naming it would be ambiguous; rename it")
    if "unjudged" in row:
        rng = _unjudged_range(where, row)
        return _Row(item, system, None, None, rng, False, None,
                    frozenset(row["d"]) | frozenset(row["unjudged"]), row.get("gate") == 0)
    gap = row.get("incomplete")
    if gap is not None:
        if not isinstance(gap, str) or not gap:
            raise ScoresError(f"{where}: incomplete must be the reason (a string), got {gap!r}")
        if s is not None:
            raise ScoresError(f"{where}: item {item!r} system {system!r} is incomplete but has "
                              f"S={s!r}; an incomplete row has S null")
        return _Row(item, system, None, gap, None, False, None, None, False)
    if not is_real_number(s):
        raise ScoresError(f"{where}: item {item!r} system {system!r}: S={s!r} is not a number")
    try:
        s = float(s)
    except OverflowError:  # an integer too large for a float: far outside [0, 1]
        s = math.inf
    if not math.isfinite(s):
        raise ScoresError(f"{where}: item {item!r} system {system!r}: S={s!r} is not finite")
    if not 0.0 <= s <= 1.0:
        raise ScoresError(
            f"{where}: item {item!r} system {system!r}: S={s!r} is outside [0, 1]"
        )
    try:  # a row without d is taken as given, unless its failure or gate fixes S at 0
        expected = rule_composite(row.get("d"), row.get("gate"), row.get("failure"))
    except ScoresError as exc:
        raise ScoresError(f"{where}: item {item!r} system {system!r}: {exc}") from None
    if expected is not None and not _follows(s, expected):
        raise ScoresError(
            f"{where}: item {item!r} system {system!r}: S={s!r} does not follow from its d "
            f"and gate (the published rule, vocencebench.decide.composite, gives "
            f"{expected!r}); the row was edited or written by another rule"
        )
    d = None if expected is None else {k: float(v) for k, v in (row.get("d") or {}).items()}
    measured = d is not None and not row.get("failure") and isinstance(row.get("d"), dict)
    return _Row(item, system, s, None, None, expected is None, d,
                frozenset(d) if measured and d is not None else None, row.get("gate") == 0)


def read_scores(path: str | os.PathLike[str]) -> ScoresTable:
    """Read and validate a scores file (JSON Lines; blank lines are skipped).

    Raises :class:`~vocencebench.errors.ScoresError` naming the line for invalid JSON, a
    missing/non-numeric/NaN/out-of-range ``S``, a duplicate (item, system) row, a missing or
    empty file.
    """
    p = Path(path)
    source = str(p)
    try:
        text = p.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ScoresError(f"{source}: no such scores file") from None
    except IsADirectoryError:
        raise ScoresError(f"{source}: is a directory, not a scores file") from None
    except UnicodeDecodeError as exc:
        raise ScoresError(f"{source}: not UTF-8 text ({exc.reason})") from None
    except OSError as exc:
        raise ScoresError(f"{source}: cannot read ({exc.strerror})") from None
    systems: dict[str, None] = {}
    items: dict[str, None] = {}
    scores: dict[str, dict[str, float]] = {}
    lines: dict[tuple[str, str], int] = {}
    incomplete: dict[tuple[str, str], str] = {}
    ranges: dict[tuple[str, str], tuple[float, float]] = {}
    desirability: dict[tuple[str, str], dict[str, float]] = {}
    dims: dict[tuple[str, str], frozenset[str]] = {}
    vetoed: set[tuple[str, str]] = set()
    given = scored = 0
    # JSON Lines ends a row at "\n" only: str.splitlines() would also split inside a label
    # holding U+2028, U+2029 or U+0085, which the canonical JSON writer leaves as they are.
    for lineno, raw in enumerate(text.split("\n"), start=1):
        if not raw.strip():
            continue
        row = _parse_line(source, lineno, raw)
        item, system, s, gap, rng, as_given, d = row[:7]
        if row.dims is not None:
            dims[(item, system)] = row.dims
        if row.vetoed:
            vetoed.add((item, system))
        scored += s is not None
        given += as_given
        if (item, system) in lines:
            raise ScoresError(
                f"{source}:{lineno}: duplicate row for item {item!r} system {system!r} "
                f"(first on line {lines[(item, system)]}); keep one row per item and system"
            )
        lines[(item, system)] = lineno
        systems.setdefault(system, None)
        items.setdefault(item, None)
        scores.setdefault(system, {})
        if gap is not None:
            incomplete[(item, system)] = gap
        elif rng is not None:
            ranges[(item, system)] = rng
        else:
            assert s is not None
            scores[system][item] = s
            if d is not None:
                desirability[(item, system)] = d
    if not lines:
        raise ScoresError(f"{source}: empty scores file; expected JSON lines with item, system, S")
    return ScoresTable(
        source=source, systems=tuple(systems), items=tuple(items), scores=scores, lines=lines,
        incomplete=incomplete, ranges=ranges, given=given, scored=scored, d=desirability,
        dims=dims, vetoed=frozenset(vetoed),
    )


def decide_scores(
    path: str | os.PathLike[str],
    *,
    incumbent: str | None = None,
    challenger: str | None = None,
    n_boot: int = BOOTSTRAP_N,
    seed: int = BOOTSTRAP_SEED,
    allow_incomplete: bool = False,
) -> Decision:
    """Recompute the verdict from a published scores file (what ``vocencebench decide`` does).

    The incumbent is system a, the challenger system b of the returned
    :class:`~vocencebench.schema.Decision`. A file with incomplete rows is refused unless
    ``allow_incomplete`` (then decided on the complete items, and the reason says so).
    """
    paired = read_scores(path).pair(incumbent, challenger, allow_incomplete=allow_incomplete)
    return paired.decide(n_boot=n_boot, seed=seed)


def write_scores(scores: Iterable[SampleScore], path: str | os.PathLike[str]) -> int:
    """Write ``scores`` as a scores file (one canonical JSON object per line, in the order
    given: that order is the pairing order). Returns the number of rows written."""
    count = 0
    with open(path, "w", encoding="utf-8", newline="\n") as fh:
        for row in scores:
            fh.write(dumps_canonical(row.to_dict()) + "\n")
            count += 1
    return count
