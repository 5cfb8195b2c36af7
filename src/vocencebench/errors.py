"""The one exception tree of vocencebench.

Every error the library raises on purpose is a :class:`VocenceError`; vendor exceptions are
translated at the boundary (``raise AudioError(...) from exc``) so callers catch one family::

    VocenceError                 anything vocencebench raises on purpose
    ├── ConfigError              bad argument, unknown trait/value/system name, missing extra
    │   └── MissingDependencyError   an optional extra is not installed ("pip install ...")
    ├── CorpusError              corpus file unreadable, invalid item, hash mismatch
    ├── AudioError               undecodable, empty, silent, too short/long, NaN/Inf audio
    ├── SynthesisError           the system under test failed on an item: it raised, timed
    │                            out, refused, or returned no/bad audio (scores S = 0)
    ├── InstrumentError          a measuring instrument or a service failed; never decides
    │   │                        anything (the run ends INCOMPLETE, a rerun retries it)
    │   ├── ProbeError               a probe crashed or is missing what it needs
    │   ├── CanaryError              an instrument failed its known-answer canaries (fatal)
    │   ├── TranscriptionError       the ASR engine failed
    │   ├── JudgeError               the judge failed after its retries
    │   │   ├── JudgeResponseError       the judge answered, but not with valid verdict JSON
    │   │   └── BudgetExceededError      the next call would cross the spend cap
    │   └── ServiceError             an HTTP service (speech API, ASR or judge server) failed
    │                                after its retries: network, 429/5xx, quota, auth
    ├── ScoresError              a per-sample scores file cannot be decided (unpaired, NaN, ...)
    └── CacheError               the run cache is unreadable, not ours, or from another schema

Two attributes travel with every error (instance attributes survive pickling, so they cross
process and Dask boundaries):

* ``fatal`` (bool): retrying cannot help and further calls are pointless — a rejected API
  key, an unknown model or URL, an exhausted per-day quota, a request the server refuses as
  malformed. A run stops at the first fatal instrument error instead of repeating it per item.
* ``blame``: ``"system"`` for a failure of the system under test (S = 0 for that item),
  ``"instrument"`` for a failure of what measures it (never decides: INCOMPLETE). The class
  sets the default (``SynthesisError``/``AudioError``: system; ``InstrumentError``:
  instrument; others: ``None``); :func:`blame_of` reads it.

Messages say what happened and what to do next.
"""

from __future__ import annotations

from typing import ClassVar, Literal

__all__ = [
    "AudioError",
    "BudgetExceededError",
    "CacheError",
    "CanaryError",
    "ConfigError",
    "CorpusError",
    "InstrumentError",
    "JudgeError",
    "JudgeResponseError",
    "MissingDependencyError",
    "ProbeError",
    "ScoresError",
    "ServiceError",
    "SynthesisError",
    "TranscriptionError",
    "VocenceError",
    "blame_of",
    "is_fatal",
]

Blame = Literal["system", "instrument"]


class VocenceError(Exception):
    """Base class of every error vocencebench raises on purpose.

    ``fatal=True`` marks an error that retrying cannot fix (see the module docstring);
    ``blame`` overrides the class's default blame for this instance.
    """

    default_blame: ClassVar[Blame | None] = None

    def __init__(self, *args: object, fatal: bool = False, blame: Blame | None = None) -> None:
        super().__init__(*args)
        self.fatal = bool(fatal)
        self.blame: Blame | None = blame if blame is not None else self.default_blame


class ConfigError(VocenceError, ValueError):
    """A bad argument or name: unknown trait, value, system spec, option."""


class MissingDependencyError(ConfigError, ImportError):
    """An optional extra is needed; the message names the ``pip install`` that fixes it."""

    def __init__(self, what: str, extra: str, *, package: str | None = None) -> None:
        pkg = f" ({package})" if package else ""
        super().__init__(
            f"{what} needs the optional extra '{extra}'{pkg}: "
            f'pip install "vocencebench[{extra}]"'
        )
        self.extra = extra


class CorpusError(VocenceError):
    """A corpus file is unreadable, an item is invalid, or the pinned hash does not match."""


class AudioError(VocenceError):
    """Audio that cannot be decoded or is unusable (empty, silent, too short, NaN, ...)."""

    default_blame: ClassVar[Blame | None] = "system"


class SynthesisError(VocenceError):
    """The system under test raised, timed out, refused, or returned no audio for an item."""

    default_blame: ClassVar[Blame | None] = "system"


class InstrumentError(VocenceError):
    """A measuring instrument (probe, transcriber, judge) or a service failed: not the
    system's fault, so it never decides a verdict."""

    default_blame: ClassVar[Blame | None] = "instrument"


class ProbeError(InstrumentError):
    """A probe crashed or lacks what it needs (a clip it cannot measure is not an error:
    the probe scores it d = 0 with the reason)."""


class CanaryError(InstrumentError):
    """An instrument failed its known-answer canaries (``vocencebench.canaries``) before the
    corpus run: a classifier with swapped labels, a judge that always picks position A or
    prefers the degraded clip. Raised with ``fatal=True`` (re-running cannot fix it);
    ``report`` is the :class:`~vocencebench.canaries.CanaryReport` that failed, or None."""

    def __init__(self, *args: object, fatal: bool = True, blame: Blame | None = None,
                 report: object | None = None) -> None:
        super().__init__(*args, fatal=fatal, blame=blame)
        self.report = report


class TranscriptionError(InstrumentError):
    """The speech recogniser failed on a clip."""


class JudgeError(InstrumentError):
    """The judge could not produce a verdict after its retries."""


class JudgeResponseError(JudgeError):
    """The judge answered, but not with JSON that matches the verdict schema."""


class BudgetExceededError(JudgeError):
    """The next judge call would cross the configured spend cap (USD)."""


class ServiceError(InstrumentError):
    """An HTTP service failed after its retries (network, 429/5xx, quota, auth, deadline).

    ``status`` is the last HTTP status (None for a transport failure); ``calls`` the number
    of HTTP requests made for this unit. Raised with ``blame="instrument"`` by default; a
    speech API that answers with a refusal is the system's failure (a ``SynthesisError``).
    """

    def __init__(self, *args: object, fatal: bool = False, blame: Blame | None = None,
                 status: int | None = None, calls: int = 0) -> None:
        super().__init__(*args, fatal=fatal, blame=blame)
        self.status = status
        self.calls = calls


class ScoresError(VocenceError):
    """A per-sample scores file cannot be decided: unpaired items, duplicates, NaN, ..."""


class CacheError(VocenceError):
    """The run cache cannot be read or was written by an incompatible schema."""


def is_fatal(exc: BaseException) -> bool:
    """True when ``exc`` says retrying cannot help (a fatal :class:`VocenceError`)."""
    return bool(getattr(exc, "fatal", False))


def blame_of(exc: BaseException) -> Blame | None:
    """``"system"``, ``"instrument"`` or None (neither: a config or corpus error)."""
    blame = getattr(exc, "blame", None)
    return blame if blame in ("system", "instrument") else None
