"""The result of a duel, :class:`Head2Head`, and its versioned run files.

This module depends on the records (:mod:`~vocencebench.schema`, :mod:`~vocencebench.pair`),
the decision rule (:mod:`~vocencebench.scores`) and the renderers (:mod:`~vocencebench.report`)
only, never on the pipeline that produced them: the reports read a :class:`Head2Head` from
here, and ``vocencebench report`` / ``decide`` rebuild it from ``run.json`` (the trait registry
that scored the run travels with it) through :func:`load_run`.

A saved run is a file set (:func:`save_run`): ``scores.jsonl``, ``report.md``,
``report.html`` and the manifest ``run.json`` (``kind`` :data:`RUN_KIND`, ``schema_version``
:data:`~vocencebench.schema.SCHEMA_VERSION`), which records the sha256 of the other three
(:func:`verify_run`). :func:`load_run` refuses a ``run.json`` of another schema version.

The INCOMPLETE rule (:func:`decide_pairs`, :func:`incomplete_summary`) is
:mod:`vocencebench.scores`'s; both are importable from here too.
"""

from __future__ import annotations

import dataclasses
import json
import os
import tempfile
import threading
import weakref
from array import array
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any, overload

from ._report.gate import gate_record
from ._report.judge import behaviour_record
from .clips import CLIPS_DIR, prune_clips
from .constants import COMPOSITE_TOLERANCE, REPORT_DECISIVE_CLIPS
from .errors import ConfigError, ScoresError, VocenceError
from .outputs import claim_directory, verify_set, write_set
from .pair import PairResult
from .report import render_html, render_markdown, render_summary
from .robustness import Robustness, robustness_of_run
from .schema import (
    INCOMPLETE,
    SCHEMA_VERSION,
    Decision,
    SampleScore,
    dumps_canonical,
    read_versioned_file,
)
from .scores import decide_pairs, incomplete_summary, rule_mismatch
from .traits import TRAITS, TraitRegistry

__all__ = ["RUN_FILES", "RUN_KIND", "Head2Head", "PairList", "decide_pairs",
           "incomplete_summary", "load_run", "recompute_decision", "save_run", "verify_run"]

#: ``kind`` of run.json; its ``schema_version`` is the records' (schema.SCHEMA_VERSION).
RUN_KIND = "head2head"
#: The files of a saved run, besides its manifest ``run.json``.
RUN_FILES = ("scores.jsonl", "report.md", "report.html")


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

    @cached_property
    def robustness(self) -> Robustness:
        """How much the verdict depends on the rule's frozen choices (each dimension left
        out, ε, τ, random weights), from the per-sample scores; computed once, never
        changing :attr:`decision` (:mod:`vocencebench.robustness`)."""
        return robustness_of_run(self.pairs, self.labels, self.decision.winner)

    def status(self) -> list[str]:
        """The honest first lines: gate and judge state, missing components."""
        return list(self.metadata.get("status", []))

    def summary(self) -> str:
        """A plain-text summary: status, per-dimension scores, gate, decision."""
        return render_summary(self)

    def to_dict(self) -> dict[str, Any]:
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

    def save(self, directory: str | os.PathLike[str], *, clips: bool = True) -> Path:
        """Write scores.jsonl, run.json, report.md and report.html (and, with ``clips``, the
        listening section's clips from the run's cache) into ``directory``."""
        return save_run(self, directory, clips=clips)


# ----------------------------------------------------------------------------- run files


#: What a run's folder holds besides its marker: the set, its clips, the run's cache.
_RUN_FOLDER_NAMES = frozenset({"scores.jsonl", "report.md", "report.html", "run.json",
                               CLIPS_DIR, "cache.sqlite", "cache.sqlite-wal",
                               "cache.sqlite-shm", "cache.sqlite-journal"})


def save_run(
    h: Head2Head,
    directory: str | os.PathLike[str],
    *,
    clips: bool = True,
    cache: str | os.PathLike[str] | None = None,
    k: int = REPORT_DECISIVE_CLIPS,
    labels: Sequence[str | os.PathLike[str]] = (),
) -> Path:
    """Write ``scores.jsonl``, ``report.md``, ``report.html``, the listening section's clips
    (``clips/*.flac``) and then ``run.json`` (which records the sha256 of every other file)
    into ``directory``, each atomically; return the directory.

    ``clips``: export the clips of :func:`vocencebench.clips.select_clips` (``k`` items per
    direction of δ) from the run's cache, or from ``cache`` when given; a missing cache is one
    line in the section, never an error. ``labels``: human-label CSV files whose agreement
    with the judge the reports show as a diagnostic table (they change no score, no decision
    and no byte of ``scores.jsonl`` or of the decision in ``run.json``).

    Everything is rendered before anything is written, and ``run.json`` is removed first and
    written last (:func:`vocencebench.outputs.write_set`): a kill during the save leaves the
    previous complete set, no ``run.json`` at all, or the new complete set. Clip files no
    longer used are removed after the new set is complete.
    """
    html_extra: list[str] = []
    md_extra: list[str] = []
    clip_files: dict[str, bytes] = {}
    if clips:
        from .clips import listening_section

        section, lines, clip_files = listening_section(
            h.pairs, h.labels, h.registry, h.metadata, directory, cache=cache, k=k)
        html_extra.append(section)
        md_extra += lines
    if labels:
        from ._report.labels import labels_section

        section, lines = labels_section(h, labels)
        html_extra.append(section)
        md_extra += ["", *lines]
    scores = "".join(dumps_canonical(s.to_dict()) + "\n" for s in h.samples)
    files: dict[str, str | bytes] = {
        "scores.jsonl": scores, "report.md": render_markdown(h, extra=md_extra),
        "report.html": render_html(h, extra=html_extra), **clip_files}
    # Status first, so the file's opening lines say what did not run (gate, judge, probes).
    # "gate": what the gate did; "robustness": how the verdict depends on the frozen choices
    # (both recomputed from the pairs by `vocencebench report`).
    run = {"status": h.status(), **h.to_dict(), "gate": gate_record(h),
           "robustness": h.robustness.to_dict()}
    judged = behaviour_record(h)
    if judged is not None:  # a judged run: how the judge behaved (judge_audit)
        run["judge_behaviour"] = judged
    target = Path(directory)
    if not target.exists() or (target.is_dir() and {p.name for p in target.iterdir()}
                               <= _RUN_FOLDER_NAMES):
        # A folder holding nothing but this run (its set, its cache) is a vocencebench run's,
        # as one `vocencebench run` makes: the CLI can then resume or re-render into it. A
        # user's own folder holding other files is written into as asked, and left unmarked.
        claim_directory(target, kind="run", force=True)
    if clip_files:
        (target / CLIPS_DIR).mkdir(parents=True, exist_ok=True)
    out = write_set(directory, files, manifest_name="run.json", manifest=run)
    prune_clips(out, list(clip_files))  # ours, and no longer part of the set
    return out


def _mismatched_fields(stored: Decision, again: Decision) -> list[str]:
    """``field stored≠recomputed`` for each field of two decisions that differ (numbers
    beyond :data:`~vocencebench.constants.COMPOSITE_TOLERANCE`)."""
    out = []
    for f in dataclasses.fields(Decision):
        x, y = getattr(stored, f.name), getattr(again, f.name)
        if isinstance(x, float) and isinstance(y, float):
            same = abs(x - y) <= COMPOSITE_TOLERANCE
        else:
            same = x == y
        if not same:
            shown = (f"{x!r}, recomputed {y!r}" if f.name != "reason"
                     else "a different text")
            out.append(f"{f.name} {shown}")
    return out


def recompute_decision(h: Head2Head, *, source: str = "run.json") -> Decision:
    """The decision ``h``'s per-sample scores support, by the published rule — never the one
    it carries. Each S is recomputed from its ``d``, gate and failure
    (:func:`vocencebench.scores.rule_composite`), and the decision from those S values
    (:func:`vocencebench.scores.decide_pairs`; ``allow_incomplete`` as the run had it: an
    incomplete run that named a winner was decided on its complete items).

    Raises :class:`~vocencebench.errors.ConfigError` — one line naming ``source``, the rows
    and the fields that disagree, with both values — when a stored S or the stored decision
    does not follow: the record was edited after the run, and nothing may be re-published
    from it.
    """
    bad: list[str] = []

    def by_rule(sample: SampleScore) -> SampleScore:
        if sample.S is None:
            return sample
        try:
            expected = rule_mismatch(sample.S, sample.d, sample.gate, sample.failure)
        except ScoresError as exc:  # an empty d, a gate no rule knows: edited as well
            bad.append(f"item {sample.item!r} system {sample.system!r}: {exc}")
            return sample
        if expected is None:
            return sample
        bad.append(f"item {sample.item!r} system {sample.system!r}: S={sample.S!r}, its d "
                   f"and gate give {expected!r}")
        return dataclasses.replace(sample, S=expected)

    pairs = [dataclasses.replace(p, a=by_rule(p.a), b=by_rule(p.b)) for p in h.pairs]
    stored = h.decision
    again = decide_pairs(pairs, h.labels,
                         allow_incomplete=stored.winner != INCOMPLETE and not h.complete)
    diffs = _mismatched_fields(stored, again)
    problems = []
    if bad:
        problems.append(f"S does not follow from d and gate by the published rule for "
                        f"{len(bad)} sample(s) (first: {bad[0]})")
    if diffs:
        problems.append(f"the decision does not follow from the per-sample scores: "
                        f"{'; '.join(diffs[:4])}{'; …' if len(diffs) > 4 else ''}")
    if problems:
        raise ConfigError(
            f"{source}: {'; and '.join(problems)}. The record was edited after the run, so "
            "nothing is re-published from it (`vocencebench decide` on its scores.jsonl gives "
            "the verdict the scores support)")
    return again


def verify_run(directory: str | os.PathLike[str]) -> list[str]:
    """Problems of a saved run's file set (empty when ``run.json`` and its files agree)."""
    return verify_set(directory, manifest_name="run.json")


def load_run(directory: str | os.PathLike[str]) -> Head2Head:
    """Read a saved run back from its ``run.json``.

    Raises :class:`~vocencebench.errors.ConfigError` for a missing, unreadable or foreign
    file, and for one written with a ``schema_version`` other than
    :data:`~vocencebench.schema.SCHEMA_VERSION` (the message names both versions).
    """
    path = Path(directory) / "run.json"
    # A record without a version is read as the current one, as every record is.
    data = read_versioned_file(
        path, kind=RUN_KIND, unversioned=SCHEMA_VERSION,
        missing=f"{directory} is not a run directory: {path} is missing",
        foreign=f"{path} is not a vocencebench run record (no kind 'head2head'); point at a "
                "directory written by vocencebench run")
    try:
        h = Head2Head.from_dict(data)
    except VocenceError as exc:
        raise ConfigError(f"{path} is not a readable run record: {str(exc)[:300]}") from None
    except (AttributeError, KeyError, TypeError, ValueError, IndexError) as exc:
        raise ConfigError(f"{path} is not a complete run record ({type(exc).__name__}: {exc}); "
                          "re-run the benchmark to rewrite it") from None
    problem = _mismatched_pair(h)
    if problem is not None:
        raise ConfigError(f"{path} is not a consistent run record: {problem}; the record was "
                          "edited after the run, so nothing is re-published from it")
    return h


def _mismatched_pair(h: Head2Head) -> str | None:
    """The first pair of ``h`` whose rows belong to another item or system than the pair's
    item and the run's labels (or an item that has two pairs), said in words; None when
    every pair is its own. A run writes only consistent records: this catches an edit."""
    seen: set[str] = set()
    for k, p in enumerate(h.pairs):
        ident = p.item.id
        if ident in seen:
            return f"pair {k} repeats item {ident!r}"
        seen.add(ident)
        for side, score, an, label in (("a", p.a, p.analysis_a, h.labels[0]),
                                       ("b", p.b, p.analysis_b, h.labels[1])):
            for what, row in (("score", score), ("analysis", an)):
                if row.item != ident or row.system != label:
                    return (f"pair {k} (item {ident!r}): side {side}'s {what} is for item "
                            f"{row.item!r} system {row.system!r}, not item {ident!r} system "
                            f"{label!r}")
    return None
