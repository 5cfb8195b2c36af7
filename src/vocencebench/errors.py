"""The one exception tree of vocencebench.

Every error the library raises on purpose is a :class:`VocenceError`; vendor exceptions are
translated at the boundary (``raise AudioError(...) from exc``) so callers catch one family::

    VocenceError                 anything vocencebench raises on purpose
    ├── ConfigError              bad argument, unknown trait/value/system name, missing extra
    │   └── MissingDependencyError   an optional extra is not installed ("pip install ...")
    ├── CorpusError              corpus file unreadable, invalid item, hash mismatch
    ├── AudioError               undecodable, empty, silent, too short/long, NaN/Inf audio
    ├── SynthesisError           a TTS system raised, timed out or returned nothing
    ├── ProbeError               a probe could not measure a clip
    ├── TranscriptionError       the ASR engine failed
    ├── JudgeError               the judge failed after its retries
    │   ├── JudgeResponseError       the judge answered, but not with valid verdict JSON
    │   └── BudgetExceededError      the next call would cross the spend cap
    ├── ScoresError              a per-sample scores file cannot be decided (unpaired, NaN, ...)
    └── CacheError               the run cache is unreadable or from another schema

Messages say what happened and what to do next.
"""

from __future__ import annotations

__all__ = [
    "AudioError",
    "BudgetExceededError",
    "CacheError",
    "ConfigError",
    "CorpusError",
    "JudgeError",
    "JudgeResponseError",
    "MissingDependencyError",
    "ProbeError",
    "ScoresError",
    "SynthesisError",
    "TranscriptionError",
    "VocenceError",
]


class VocenceError(Exception):
    """Base class of every error vocencebench raises on purpose."""


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


class SynthesisError(VocenceError):
    """A TTS system raised, timed out, or returned no audio for an item."""


class ProbeError(VocenceError):
    """A probe could not measure a clip."""


class TranscriptionError(VocenceError):
    """The speech recogniser failed on a clip."""


class JudgeError(VocenceError):
    """The judge could not produce a verdict after its retries."""


class JudgeResponseError(JudgeError):
    """The judge answered, but not with JSON that matches the verdict schema."""


class BudgetExceededError(JudgeError):
    """The next judge call would cross the configured spend cap (USD)."""


class ScoresError(VocenceError):
    """A per-sample scores file cannot be decided: unpaired items, duplicates, NaN, ..."""


class CacheError(VocenceError):
    """The run cache cannot be read or was written by an incompatible schema."""
