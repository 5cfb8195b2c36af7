"""What the engine keeps per open item, and the cached form of a clip's analysis.

A clip's analysis is cached in two parts, under keys that name everything they depend on
(:func:`analysis_keys`): the transcript (audio and ASR engine) and the probe part
(:func:`probe_part`: audio, probe ids, the speech check and the trait registry's digest,
request, script). :func:`assemble` rebuilds the
:class:`~vocencebench.pair.ClipAnalysis` from them, so a clip just measured and one read back
on resume give the same record.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..audio import Clip
from ..cache import cache_key
from ..pair import ClipAnalysis, PairResult
from ..probes.base import ProbeSuite, suite_identity
from ..result import PairList
from ..schema import Item, ProbeResult, Verdict
from ..transcribe import Transcriber, Transcript, score_transcript

__all__ = ["OpenItem", "Results", "Side", "analysis_keys", "assemble", "probe_identity",
           "probe_part"]


@dataclass
class Side:
    """One side of an open item: its clip, cache keys and what is known of it so far."""

    key: str
    sha: str | None = None
    # The one Clip of this side in the client, made when its bytes arrive and dropped when
    # the item closes: the in-process analysis, the batched probes and the judge share it,
    # so the clip is decoded once in this process (a worker process decodes its own copy).
    clip: Clip | None = None
    keys: tuple[str, str] = ("", "")  # (transcript key, probe key)
    part: dict[str, Any] | None = None
    transcript: dict[str, Any] | None = None
    analysis: ClipAnalysis | None = None


@dataclass
class OpenItem:
    """An item admitted and not yet closed: both sides and the judge's answers so far."""

    index: int
    item: Item
    sides: tuple[Side, Side]
    verdicts: dict[str, Verdict] = field(default_factory=dict)
    jfail: dict[str, str] = field(default_factory=dict)
    judge_left: int = 0


def probe_identity(probes: ProbeSuite | None) -> dict[str, Any]:
    """The probe set's part of every probe key (:func:`~vocencebench.probes.base.
    suite_identity`), computed once per run rather than once per clip."""
    return suite_identity(probes) if probes else {"probes": []}


def analysis_keys(item: Item, sha: str, probes: ProbeSuite | None,
                  transcriber: Transcriber | None, *,
                  identity: Mapping[str, Any] | None = None) -> tuple[str, str]:
    """The transcript and probe cache keys of one clip; ``identity``:
    :func:`probe_identity` of ``probes`` when the caller already has it."""
    ident = probe_identity(probes) if identity is None else identity
    decoding = getattr(transcriber, "decoding", None)  # a decoding rule the engine omits
    tkey = cache_key({"audio": sha, "engine": getattr(transcriber, "engine", None),
                      **({"decoding": decoding} if decoding is not None else {})})
    pkey = cache_key({"audio": sha, **ident, "request": item.traits, "text": item.text})
    return tkey, pkey


def probe_part(an: ClipAnalysis) -> dict[str, Any]:
    """The cached probe part of an analysis (everything but the transcript)."""
    return {"sha256": an.sha256, "duration": an.duration, "notes": list(an.notes),
            "quality": an.quality,
            "probes": {k: v.to_dict(versioned=False) for k, v in an.probes.items()}}


def assemble(item: Item, label: str, part: Mapping[str, Any],
              transcript: Mapping[str, Any] | None) -> ClipAnalysis:
    """A clip's analysis from its cached probe part and (optional) cached transcript: the
    same record whether it was just measured or read back on resume."""
    wer = gate = None
    text = engine = None
    if transcript is not None:
        tr = Transcript(str(transcript["text"]), str(transcript["engine"]))
        res = score_transcript(item.text, tr)
        text, engine, wer, gate = tr.text, tr.engine, res.wer, res.gate
    return ClipAnalysis(
        item.id, label, sha256=part["sha256"], duration=part["duration"],
        transcript=text, asr_engine=engine, wer=wer, gate=gate,
        probes={k: ProbeResult.from_dict(v) for k, v in part["probes"].items()},
        quality=dict(part.get("quality", {})),
        notes=tuple(part.get("notes", ())),
    )


class Results:
    """The finished pairs of a run, placed by corpus index: in memory, or (``spill``) on disk
    in a :class:`~vocencebench.result.PairList`, so a large run's memory does not grow."""

    def __init__(self, n: int, *, spill: bool) -> None:
        self._spill: PairList | None = PairList(n) if spill else None
        self._pairs: list[PairResult | None] = [] if spill else [None] * n

    def put(self, index: int, pair: PairResult) -> None:
        if self._spill is not None:
            self._spill.put(index, pair)
        else:
            self._pairs[index] = pair

    def filled(self, index: int) -> bool:
        if self._spill is not None:
            return self._spill.filled(index)
        return self._pairs[index] is not None

    def out(self) -> Sequence[PairResult]:
        """Every pair in corpus order (the PairList itself when spilled)."""
        if self._spill is not None:
            return self._spill
        return tuple(p for p in self._pairs if p is not None)
