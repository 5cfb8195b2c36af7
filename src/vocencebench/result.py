"""The result of a duel, :class:`Head2Head`, and the decision over its pairs.

This module depends on the records (:mod:`~vocencebench.schema`, :mod:`~vocencebench.pair`)
and the decision rule only, never on the pipeline that produced them: the reports read a
:class:`Head2Head` from here, and ``vocencebench report`` / ``decide`` rebuild it from
``run.json`` (the trait registry that scored the run travels with it).

An item is *incomplete* when an instrument failed on it (probe, transcriber, judge, a speech
service after its retries): it has no composite and cannot be decided. :func:`decide_pairs`
names no winner while any item is incomplete (``winner == "incomplete"``), unless
``allow_incomplete=True``, which decides on the complete items only and says so.
"""

from __future__ import annotations

import json
import os
import tempfile
import threading
import weakref
from array import array
from collections import Counter
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, overload

from .decide import decide
from .pair import PairResult
from .schema import INCOMPLETE, Decision, SampleScore, dumps_canonical
from .traits import TRAITS, TraitRegistry

__all__ = ["Head2Head", "PairList", "decide_pairs", "incomplete_summary"]

#: ``kind`` of run.json; its ``schema_version`` is the records' (schema.SCHEMA_VERSION).
RUN_KIND = "head2head"


def _cause(reason: str) -> str:
    """The contract prefix of a reason (``judge``, ``probes``, ...), or ``other``."""
    head, sep, _ = reason.partition(": ")
    return head if sep and head and " " not in head else "other"


def incomplete_summary(reasons: Sequence[str]) -> str:
    """``"judge: 3, transcription: 1; first: judge: HTTP 503 …"`` for a list of reasons."""
    if not reasons:
        return "none"
    counts = Counter(_cause(r) for r in reasons)
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

    Every pair complete: :func:`vocencebench.decide.decide` on the composites. Otherwise the
    numbers are computed over the complete pairs (0 with ``n = 0`` when there are none) and
    ``winner`` is :data:`~vocencebench.schema.INCOMPLETE`, unless ``allow_incomplete`` and at
    least one pair is complete: then the complete pairs decide and the reason opens with
    ``"decided on N of M items; K incomplete: …"``.
    """
    # One pass over the pairs, keeping only the composites and reasons (a PairList is read
    # from disk pair by pair, never held whole).
    sa: list[float] = []
    sb: list[float] = []
    missing: list[str] = []
    m = 0
    for p in pairs:
        m += 1
        if p.incomplete is not None:
            missing.append(p.incomplete)
        else:
            sa.append(_s(p.a))
            sb.append(_s(p.b))
    if not missing:
        return decide(sa, sb, labels=labels)
    k = len(missing)
    what = incomplete_summary(missing)
    base = decide(sa, sb, labels=labels) if sa else None
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


def _s(sample: SampleScore) -> float:
    assert sample.S is not None  # complete pairs only
    return sample.S


class PairList(Sequence[PairResult]):
    """The pairs of a large run, kept on disk and read back on access.

    A run of more than :data:`vocencebench._pipeline.engine.SPILL_PAIRS` items writes each finished
    :class:`PairResult` here (canonical JSON in an anonymous temporary file, deleted with the
    object) instead of keeping it in memory, so the client's memory does not grow with the
    corpus. It behaves as a read-only sequence (indexing, slicing, iteration, ``len``,
    equality with any sequence of pairs); pickling it gives a plain tuple.
    """

    def __init__(self, size: int) -> None:
        self._file = tempfile.TemporaryFile(prefix="vocencebench-pairs-")  # noqa: SIM115
        self._pos = array("q", [-1]) * size
        self._len = array("q", [0]) * size
        self._end = 0
        self._lock = threading.Lock()
        self._closer = weakref.finalize(self, self._file.close)

    def put(self, index: int, pair: PairResult) -> None:
        """Store the pair of item ``index`` (once)."""
        data = dumps_canonical(pair.to_dict(versioned=False)).encode("utf-8")
        with self._lock:
            self._file.seek(self._end)
            self._file.write(data)
            self._pos[index], self._len[index] = self._end, len(data)
            self._end += len(data)

    def filled(self, index: int) -> bool:
        return self._pos[index] >= 0

    def _read(self, index: int) -> PairResult:
        with self._lock:
            pos, n = self._pos[index], self._len[index]
            if pos < 0:
                raise IndexError(f"pair {index} was never stored")
            self._file.seek(pos)
            raw = self._file.read(n)
        return PairResult.from_dict(json.loads(raw))

    def __len__(self) -> int:
        return len(self._pos)

    @overload
    def __getitem__(self, index: int) -> PairResult: ...

    @overload
    def __getitem__(self, index: slice) -> tuple[PairResult, ...]: ...

    def __getitem__(self, index: int | slice) -> PairResult | tuple[PairResult, ...]:
        if isinstance(index, slice):
            return tuple(self._read(i) for i in range(*index.indices(len(self))))
        if index < 0:
            index += len(self)
        if not 0 <= index < len(self):
            raise IndexError("pair index out of range")
        return self._read(index)

    def __iter__(self) -> Iterator[PairResult]:
        for i in range(len(self)):
            yield self._read(i)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Sequence) or len(other) != len(self):
            return False
        return all(a == b for a, b in zip(self, other, strict=True))

    __hash__ = None  # type: ignore[assignment]

    def __reduce__(self) -> tuple[Any, ...]:
        return (tuple, (tuple(self),))

    def __repr__(self) -> str:
        return f"PairList({len(self)} pairs on disk)"

    def close(self) -> None:
        self._closer()


@dataclass(frozen=True)
class Head2Head:
    """The outcome of a duel: every pair (corpus order), the decision, the run's metadata,
    and the trait registry that scored it.

    ``pairs`` is a tuple, or for a large run a :class:`PairList` (the same sequence, read from
    disk on access, so a 100 000-item run does not hold every pair in memory).

    ``complete`` is False when any item is incomplete (an instrument failed on it);
    ``incomplete_items`` maps those items' ids to the reason, in corpus order.
    """

    labels: tuple[str, str]
    pairs: Sequence[PairResult]
    decision: Decision
    metadata: dict[str, Any] = field(default_factory=dict)
    registry: TraitRegistry = field(default=TRAITS, compare=False)

    @property
    def samples(self) -> list[SampleScore]:
        """Per-sample scores, item by item, system a then b (the input of ``decide``)."""
        return [s for p in self.pairs for s in (p.a, p.b)]

    @property
    def complete(self) -> bool:
        """True when every item was scored (no instrument failed on any of them)."""
        return all(p.incomplete is None for p in self.pairs)

    @property
    def incomplete_items(self) -> dict[str, str]:
        """Item id → why it could not be scored, for every incomplete item (corpus order)."""
        return {p.item.id: p.incomplete for p in self.pairs if p.incomplete is not None}

    def status(self) -> list[str]:
        """The honest first lines: gate and judge state, missing components."""
        return list(self.metadata.get("status", []))

    def summary(self) -> str:
        """A plain-text summary: status, per-dimension scores, gate, decision."""
        from .report import render_summary

        return render_summary(self)

    def to_dict(self) -> dict[str, Any]:
        from .schema import SCHEMA_VERSION

        return {
            "schema_version": SCHEMA_VERSION,
            "kind": RUN_KIND,
            "labels": list(self.labels),
            "decision": self.decision.to_dict(),
            "metadata": self.metadata,
            "registry": self.registry.to_dict(),
            "pairs": [p.to_dict(versioned=False) for p in self.pairs],
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Head2Head:
        """Inverse of :meth:`to_dict`; a run.json written before the registry travelled with
        the run gets the default registry."""
        reg = data.get("registry")
        return cls(
            labels=(data["labels"][0], data["labels"][1]),
            pairs=tuple(PairResult.from_dict(p) for p in data["pairs"]),
            decision=Decision.from_dict(data["decision"]),
            metadata=dict(data.get("metadata", {})),
            registry=TraitRegistry.from_dict(reg) if reg is not None else TRAITS,
        )

    def to_json(self) -> str:
        """Everything, as canonical JSON (``run.json``)."""
        return dumps_canonical(self.to_dict())

    def save(self, directory: str | os.PathLike[str]) -> Path:
        """Write scores.jsonl, run.json, report.md and report.html into ``directory``."""
        from .report import save_run

        return save_run(self, directory)
