"""Typed, frozen result records and their JSON form.

Every record round-trips through ``to_dict()`` / ``from_dict()`` (and ``to_json()`` /
``from_json()``); anything written to disk carries ``schema_version`` so a reader can refuse a
file it does not understand. Units: desirabilities ``d`` and composites ``S`` are on [0, 1];
judge scores on the 0–3 rubric; WER is a fraction (0 = perfect, may exceed 1).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any, ClassVar, Literal, Self

from ._numbers import is_desirability, is_finite_number, is_real_number
from .constants import BOOTSTRAP_N, BOOTSTRAP_SEED, PACKAGE_VERSION, RUBRIC_MAX
from .errors import ConfigError

__all__ = [
    "INCOMPLETE",
    "OUTCOME_WORDS",
    "SCHEMA_VERSION",
    "UNMEASURABLE",
    "WINNERS",
    "Decision",
    "Item",
    "ProbeResult",
    "Record",
    "SampleScore",
    "Verdict",
    "check_schema_version",
    "dumps_canonical",
    "read_versioned_file",
]

#: Bumped whenever a record's JSON form changes incompatibly.
SCHEMA_VERSION = 1
#: ``ProbeResult.label`` of a trait a probe could not measure because of the clip (no voiced
#: frames, no speech, below the meter's gate): d = 0, the reason in ``detail["unmeasurable"]``.
UNMEASURABLE = "unmeasurable"
#: ``Decision.winner`` of a run with items that could not be scored (an instrument failed).
INCOMPLETE = "incomplete"
#: The words a Decision's winner holds besides a system label: no system may be named so.
OUTCOME_WORDS: frozenset[str] = frozenset({"tie", INCOMPLETE})

Winner = Literal["a", "b", "tie"]
#: The values of ``Verdict.winner``, a judge's or a human rater's preference: system a,
#: system b, or neither.
WINNERS: tuple[Winner, Winner, Winner] = ("a", "b", "tie")


def dumps_canonical(obj: Any) -> str:
    """Canonical JSON: sorted keys, no spaces, UTF-8 text (non-ASCII kept), floats by repr."""
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False,
                      allow_nan=False)


def check_schema_version(version: object, where: str, *, reads: int = SCHEMA_VERSION) -> None:
    """Refuse a file whose ``schema_version`` is not the one this install reads (``reads``).

    ``where`` names the file in the :class:`~vocencebench.errors.ConfigError`, which says
    which version the file has and which this install reads: a newer one means the file was
    written by a newer vocencebench (upgrade to read it); anything else is unknown.
    """
    if version == reads:
        return
    newer = is_real_number(version) and version > reads
    what = ("a newer schema_version" if newer else "an unknown schema_version")
    hint = ("; upgrade vocencebench to read it" if newer else
            "; point at a file written by vocencebench")
    raise ConfigError(f"{where} has {what} ({version!r}); this vocencebench "
                      f"{PACKAGE_VERSION} reads schema_version {reads}{hint}")


def read_versioned_file(path: Path, *, kind: str, missing: str, foreign: str,
                        reads: int = SCHEMA_VERSION, unversioned: object = None
                        ) -> dict[str, Any]:
    """The JSON object of a versioned record file (``run.json``, ``leaderboard.json``).

    ConfigError ``missing`` when there is no such file, one naming it when it is not JSON
    text, ``foreign`` when it is not an object of ``kind``, and :func:`check_schema_version`'s
    when its ``schema_version`` is not ``reads`` (a file without one has ``unversioned``)."""
    if not path.is_file():
        raise ConfigError(missing)
    try:
        data: Any = json.loads(path.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path} is not valid JSON: {exc}") from exc
    if not isinstance(data, dict) or data.get("kind") != kind:
        raise ConfigError(foreign)
    check_schema_version(data.get("schema_version", unversioned), str(path), reads=reads)
    return data


def _plain(value: Any) -> Any:
    if isinstance(value, Record):
        return value.to_dict(versioned=False)
    if isinstance(value, Mapping):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    return value


class Record:
    """Mixin: JSON round-trip for frozen dataclasses, with a schema version."""

    kind: ClassVar[str] = ""
    _tuple_fields: ClassVar[tuple[str, ...]] = ()

    def to_dict(self, *, versioned: bool = True) -> dict[str, Any]:
        """A plain JSON-ready dict; ``versioned`` adds ``schema_version`` and ``kind``."""
        out = {f.name: _plain(getattr(self, f.name)) for f in fields(self)}  # type: ignore[arg-type]
        if versioned:
            out["schema_version"] = SCHEMA_VERSION
            out["kind"] = self.kind
        return out

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Self:
        """Rebuild from :meth:`to_dict`'s output; unknown keys are ignored, missing ones fail."""
        version = data.get("schema_version", SCHEMA_VERSION)
        if version != SCHEMA_VERSION:
            raise ConfigError(
                f"{cls.__name__} written with schema_version {version}; this vocencebench "
                f"reads {SCHEMA_VERSION}. Re-run with a matching version."
            )
        kwargs: dict[str, Any] = {}
        for f in fields(cls):  # type: ignore[arg-type]
            if f.name in data:
                v = data[f.name]
                if f.name in cls._tuple_fields and isinstance(v, list):
                    v = tuple(v)
                kwargs[f.name] = v
        try:
            return cls(**kwargs)
        except TypeError as exc:
            raise ConfigError(f"cannot read {cls.__name__} from {dict(data)!r}: {exc}") from None

    def to_json(self) -> str:
        """Canonical JSON text of :meth:`to_dict`."""
        return dumps_canonical(self.to_dict())

    @classmethod
    def from_json(cls, text: str) -> Self:
        """Inverse of :meth:`to_json`."""
        return cls.from_dict(json.loads(text))


@dataclass(frozen=True)
class Item(Record):
    """One voice request of a corpus.

    ``traits`` maps every trait name to its requested value (ages are decimal strings, years);
    ``difficulty`` is 0 (easy), 1 (normal) or 2 (hard); ``category`` is ``everyday`` for
    difficulties 0–1 and one of ``tongue_twister``, ``numbers``, ``urls``, ``nested_clauses``
    for the hard tier.
    """

    kind: ClassVar[str] = "item"

    id: str
    instruction: str
    text: str
    traits: dict[str, str]
    difficulty: int
    category: str = "everyday"

    def to_corpus_dict(self) -> dict[str, Any]:
        """The corpus-file form: the six fields only (no schema keys)."""
        return self.to_dict(versioned=False)


@dataclass(frozen=True)
class ProbeResult(Record):
    """What one probe measured on one clip for one trait.

    ``value`` is the raw measurement in ``unit`` (Hz, phones/s, LUFS, years) or a class
    label; ``label`` is the bucket/category/estimate compared with the request; ``d`` the
    desirability on [0, 1]; ``probe`` is ``name@version``; ``detail`` holds diagnostics
    (e.g. class probabilities, semitone offset, "heuristic").
    """

    kind: ClassVar[str] = "probe_result"

    trait: str
    value: float | str | None
    unit: str
    label: str
    d: float
    probe: str
    detail: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Self:
        """As :meth:`Record.from_dict`, refusing a ``d`` that is not a desirability and a
        ``value`` that is neither text, None nor a finite number (an edited run.json)."""
        out = super().from_dict(data)
        if not is_desirability(out.d):
            raise ConfigError(f"probe result for {out.trait!r}: d must be a number in [0, 1], "
                              f"not {out.d!r}")
        if not (out.value is None or isinstance(out.value, str)
                or is_finite_number(out.value)):
            raise ConfigError(f"probe result for {out.trait!r}: value must be a finite number, "
                              f"text or null, not {out.value!r}")
        return out


@dataclass(frozen=True)
class Verdict(Record):
    """The judge's verdict on one pair of clips for one dimension.

    ``score_a`` / ``score_b`` are 0–3 rubric scores (mean over orders and votes), ``winner``
    is ``a``, ``b`` or ``tie``; ``confidence`` is 0–1; ``consistent`` is False when the
    order-swapped judgements disagreed. ``raw`` keeps the judge's raw answers. ``answers``
    keeps each single judgement behind the verdict, un-swapped (``a``/``b`` are the caller's
    clips): ``{"order": "ab"|"ba", "vote": k, "winner": "a"|"b"|"tie", "score_a": 0–3,
    "score_b": 0–3, "confidence": 0–1}``, in (order, vote) order; empty in records written
    before it was kept (then the judge's behaviour figures cannot be computed from them).
    """

    kind: ClassVar[str] = "verdict"
    _tuple_fields: ClassVar[tuple[str, ...]] = ("raw", "answers")

    winner: Winner
    score_a: float
    score_b: float
    reasoning_a: str
    reasoning_b: str
    confidence: float
    consistent: bool
    dimension: str
    model: str
    prompt_version: str
    raw: tuple[str, ...] = ()
    answers: tuple[dict[str, Any], ...] = ()

    def __post_init__(self) -> None:
        if self.winner not in WINNERS:
            raise ConfigError(f"verdict winner must be 'a', 'b' or 'tie', not {self.winner!r}")
        # A hand-written or edited verdicts file reaches calibrate and report through here:
        # a score of 9 or a NaN confidence would otherwise be averaged in silently.
        for name in ("score_a", "score_b"):
            x = getattr(self, name)
            if not (is_finite_number(x) and 0 <= x <= RUBRIC_MAX):
                raise ConfigError(f"verdict {name} must be a number in 0-{RUBRIC_MAX}, "
                                  f"not {x!r}")
        if not is_desirability(self.confidence):
            raise ConfigError(f"verdict confidence must be a number in 0-1, "
                              f"not {self.confidence!r}")
        if not isinstance(self.consistent, bool):
            raise ConfigError(f"verdict consistent must be true or false, "
                              f"not {self.consistent!r}")
        for name in ("reasoning_a", "reasoning_b", "dimension", "model", "prompt_version"):
            if not isinstance(getattr(self, name), str):
                raise ConfigError(f"verdict {name} must be text, not {getattr(self, name)!r}")

    def to_dict(self, *, versioned: bool = True) -> dict[str, Any]:
        """As :meth:`Record.to_dict`; ``answers`` is written only when kept, so a verdict
        without them is the same bytes as before the field existed."""
        out = super().to_dict(versioned=versioned)
        if not out.get("answers"):
            out.pop("answers", None)
        return out


@dataclass(frozen=True)
class SampleScore(Record):
    """One system's score on one item: the input row of ``vocencebench decide``.

    ``d`` maps each scored dimension to its desirability (0–1); ``gate`` is 1/0 from the
    intelligibility gate, or None when no transcriber ran (gate OFF, counted as passing);
    ``wer`` the word-error rate (fraction) or None; ``S`` the composite on [0, 1];
    ``failure`` why the system's sample was zeroed (synthesis error, undecodable audio), else
    None. ``incomplete`` is set when an *instrument* failed on the item (probe, transcriber,
    judge, a speech service after its retries): the item cannot be scored, ``S`` is None, and
    a rerun retries it. ``unjudged`` lists the judged dimensions the judge was never asked
    about because the run stopped judging once its verdict was certain
    (``stop_when_decided``): such a sample has ``S`` None, its probe dimensions in ``d`` and
    its gate, which bound ``S`` (:func:`vocencebench.early_stopping.sample_range`). ``S`` is
    None exactly when ``incomplete`` is set or ``unjudged`` is not empty.
    """

    kind: ClassVar[str] = "sample_score"

    item: str
    system: str
    S: float | None
    d: dict[str, float] = field(default_factory=dict)
    gate: int | None = None
    wer: float | None = None
    failure: str | None = None
    incomplete: str | None = None
    unjudged: tuple[str, ...] = ()

    _tuple_fields: ClassVar[tuple[str, ...]] = ("unjudged",)

    def __post_init__(self) -> None:
        if self.incomplete is not None:
            if self.S is not None:
                raise ConfigError(f"sample {self.item}/{self.system}: an incomplete sample "
                                  f"has no composite, got S={self.S!r}")
            if self.unjudged:
                raise ConfigError(f"sample {self.item}/{self.system}: a sample is either "
                                  "incomplete or unjudged, not both")
            return
        if self.unjudged:
            if self.S is not None:
                raise ConfigError(f"sample {self.item}/{self.system}: an unjudged sample has "
                                  f"no composite, got S={self.S!r}")
            both = sorted(set(self.unjudged) & set(self.d))
            if both or len(set(self.unjudged)) != len(self.unjudged):
                raise ConfigError(f"sample {self.item}/{self.system}: unjudged dimensions "
                                  f"{list(self.unjudged)} must be distinct and absent from d")
            return
        if self.S is None:
            raise ConfigError(f"sample {self.item}/{self.system}: S is None but the sample is "
                              "not marked incomplete")
        if not (is_finite_number(self.S) and 0 <= self.S <= 1):
            raise ConfigError(f"sample {self.item}/{self.system}: S={self.S!r} is not in [0, 1]")

    def to_dict(self, *, versioned: bool = True) -> dict[str, Any]:
        """As :meth:`Record.to_dict`; ``incomplete`` is written only when set, so the rows of
        complete samples are the same bytes as before the field existed."""
        out = super().to_dict(versioned=versioned)
        if out.get("incomplete") is None:
            out.pop("incomplete", None)
        if not out.get("unjudged"):
            out.pop("unjudged", None)
        return out


@dataclass(frozen=True)
class Decision(Record):
    """The verdict of a head-to-head and every number that produced it.

    ``lcb`` is the 5th-percentile bootstrap bound of mean(S_b − S_a) and ``margin`` the bar it
    had to clear, margin(S̄_a); ``lcb_reverse`` / ``margin_reverse`` are the same for a over b.
    ``winner`` is a system label, ``"tie"``, or :data:`INCOMPLETE` when items could not be
    scored (then the numbers are those of the complete items, or 0 with ``n = 0`` when there
    are none, and ``reason`` says what failed). Means and bounds are on the [0, 1] scale.
    ``n_boot`` and ``seed`` default to :data:`vocencebench.decide.BOOTSTRAP_N` and
    :data:`~vocencebench.decide.BOOTSTRAP_SEED`.

    ``early_stop`` is set when some items were never judged (``stop_when_decided``): the
    judged and unjudged counts, the interval of every number over all outcomes of the unjudged
    items (``lcb``, ``lcb_reverse``, ``margin``, ``margin_reverse``, ``mean_a``, ``mean_b``,
    ``mean_delta``: ``[low, high]``), the safety gap and ``certain`` (why the verdict cannot
    change). The scalar fields then hold the end of each interval that is worst for the
    verdict (:mod:`vocencebench.early_stopping`). It is None (and not written) otherwise.
    """

    kind: ClassVar[str] = "decision"
    _tuple_fields: ClassVar[tuple[str, ...]] = ("labels",)

    winner: str
    lcb: float
    margin: float
    mean_a: float
    mean_b: float
    n: int
    reason: str
    labels: tuple[str, str] = ("a", "b")
    lcb_reverse: float = float("nan")
    margin_reverse: float = float("nan")
    mean_delta: float = float("nan")
    n_boot: int = BOOTSTRAP_N
    seed: int = BOOTSTRAP_SEED
    early_stop: dict[str, Any] | None = None

    def to_dict(self, *, versioned: bool = True) -> dict[str, Any]:
        """As :meth:`Record.to_dict`; ``early_stop`` is written only when set, so a decision
        over fully judged items is the same bytes as before the field existed."""
        out = super().to_dict(versioned=versioned)
        if out.get("early_stop") is None:
            out.pop("early_stop", None)
        return out
