"""Failure reasons: one prefix per cause, classified by blame, redacted in one place.

Every reason stored in a :class:`~vocencebench.schema.SampleScore`, a
:class:`~vocencebench.pair.ClipAnalysis` or a :class:`~vocencebench.pair.PairResult` starts
with one of the prefixes below and went through :func:`redacted` (API keys and credentials
never reach run.json, scores.jsonl or a report):

===================== =========== ==================================================
prefix                blame       meaning
===================== =========== ==================================================
``synthesis: ``       system      the system raised, timed out, refused, gave no audio
``audio: ``           system      the system's audio cannot be decoded or is unusable
``synthesis-service`` instrument  a speech API failed after its retries (429/5xx/network),
                                  or the Dask cluster lost a model system's unit
``transcription: ``   instrument  the ASR engine failed
``probes: ``          instrument  a probe crashed, or a covered dimension has no result
``judge: ``           instrument  the judge failed after its retries
``canaries: ``        instrument  an instrument failed its known-answer check before the run
===================== =========== ==================================================
"""

from __future__ import annotations

from typing import Final, Literal

from ..errors import AudioError, ConfigError, VocenceError, blame_of
from ..redact import redact

SYNTHESIS: Final = "synthesis"
AUDIO: Final = "audio"
SYNTHESIS_SERVICE: Final = "synthesis-service"
TRANSCRIPTION: Final = "transcription"
PROBES: Final = "probes"
JUDGE: Final = "judge"
CANARIES: Final = "canaries"

Blame = Literal["system", "instrument"]


def redacted(text: str) -> str:
    """``text`` with every secret the process knows masked (:func:`vocencebench.redact.redact`)."""
    return str(redact(text))


def exc_text(exc: BaseException) -> str:
    """One line for ``exc``: our errors by message, anything else with its type name."""
    msg = " ".join(str(exc).split())
    if isinstance(exc, VocenceError):
        return msg or type(exc).__name__
    return f"{type(exc).__name__}: {msg}" if msg else type(exc).__name__


def reason(prefix: str, what: BaseException | str) -> str:
    """``"<prefix>: <text>"``, redacted."""
    text = what if isinstance(what, str) else exc_text(what)
    return redacted(f"{prefix}: {text}")


def synthesis_failure(exc: BaseException) -> tuple[Blame, str]:
    """(blame, reason) of an exception raised while synthesising one item.

    A :class:`~vocencebench.errors.ConfigError` is not an item's failure: callers re-raise
    it before asking. An instrument-blamed error (``ServiceError`` of a speech API after its
    retries) is ``synthesis-service``; everything else is the system's.
    """
    if isinstance(exc, ConfigError):  # pragma: no cover - callers re-raise first
        raise exc
    if blame_of(exc) == "instrument":
        return "instrument", reason(SYNTHESIS_SERVICE, exc)
    if isinstance(exc, AudioError):
        return "system", reason(AUDIO, exc)
    return "system", reason(SYNTHESIS, exc)
