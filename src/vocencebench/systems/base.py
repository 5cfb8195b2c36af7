"""The system protocols and hooks, and the checks every system shares.

A system is any ``(text, instruction) -> WAV bytes`` callable (:class:`TTSSystem`); its optional
hooks are declared here as :class:`~typing.Protocol` classes and read once per run by
:func:`system_hooks`. :func:`synthesize_item` calls a system on one item and turns whatever it
raises or returns wrong into a :class:`~vocencebench.errors.SynthesisError`; :func:`read_clip`
reads a clip a command or directory system hands over, refusing one over the size cap
(:data:`CLIP_MAX_BYTES`, bytes) before reading it. The public face of all this is
:mod:`vocencebench.adapters`.
"""

from __future__ import annotations

import difflib
import os
import stat
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Literal, Protocol, runtime_checkable

from .._numbers import is_whole_number
from ..errors import ConfigError, SynthesisError, VocenceError
from ..schema import Item

__all__ = [
    "CLIP_MAX_BYTES",
    "SYSTEM_HOOKS",
    "BatchedSystem",
    "CachePolicy",
    "ConcurrentSystem",
    "IdentifiedSystem",
    "ItemSystem",
    "PlacedSystem",
    "Placement",
    "SystemHooks",
    "TTSSystem",
    "check_distinct_identities",
    "check_max_bytes",
    "read_clip",
    "synthesize_item",
    "system_hooks",
    "system_id",
]

Placement = Literal["client", "worker"]


@runtime_checkable
class TTSSystem(Protocol):
    """A prompt-controllable TTS system: script + voice instruction → WAV bytes."""

    def __call__(self, text: str, instruction: str) -> bytes: ...


@runtime_checkable
class IdentifiedSystem(Protocol):
    """A system with a stable cache identity (change it when its output changes)."""

    system_id: str


@runtime_checkable
class ItemSystem(Protocol):
    """A system that serves clips by item (e.g. a directory of pre-synthesised clips)."""

    def synthesize_item(self, item: Item) -> bytes: ...


@runtime_checkable
class BatchedSystem(Protocol):
    """A system that renders many requests at once (a GPU model, the eSpeak lanes).

    One result per ``(text, instruction)`` request, in order: WAV bytes, or the exception
    that failed that item. Raising fails the whole batch (each item gets the error).
    """

    def synthesize_many(
        self, requests: Sequence[tuple[str, str]], *, workers: int | None = None
    ) -> list[bytes | Exception]: ...


@runtime_checkable
class CachePolicy(Protocol):
    """``cache_clips = False``: never keep this system's clips in the run cache."""

    cache_clips: bool


@runtime_checkable
class ConcurrentSystem(Protocol):
    """``concurrency``: how many requests the system may have in flight at once."""

    concurrency: int


@runtime_checkable
class PlacedSystem(Protocol):
    """``placement``: ``"worker"`` runs a batched system on the Dask workers, ``"client"`` in
    the process that runs the benchmark."""

    placement: Placement


#: Every optional hook: attribute name → what it must be.
SYSTEM_HOOKS: dict[str, str] = {
    "system_id": "a non-empty str",
    "synthesize_item": "a method (item) -> bytes",
    "synthesize_many": "a method (requests, *, workers=None) -> list[bytes | Exception]",
    "cache_clips": "a bool",
    "concurrency": "an int >= 1",
    "placement": "'client' or 'worker'",
}


@dataclass(frozen=True)
class SystemHooks:
    """What a system offers, read once at the start of a run (:func:`system_hooks`)."""

    system_id: str
    per_item: bool
    batched: bool
    cache_clips: bool
    concurrency: int | None
    placement: Placement | None


def _misspelt_hooks(system: object) -> list[tuple[str, str]]:
    names = [n for n in dir(system) if not n.startswith("_") and n not in SYSTEM_HOOKS]
    out = []
    for n in names:
        # A misspelling is close *and* about as long: ``cache_clip`` for ``cache_clips``, not
        # an attribute that merely starts the same (``system`` beside ``system_id``).
        close = [h for h in difflib.get_close_matches(n, SYSTEM_HOOKS, n=1, cutoff=0.85)
                 if abs(len(h) - len(n)) <= 2]
        if close:
            out.append((n, close[0]))
    return out


def system_hooks(system: Callable[[str, str], bytes], *, label: str = "system") -> SystemHooks:
    """Check ``system``'s optional hooks once; a wrong type or a name that looks like a
    misspelt hook is a :class:`~vocencebench.errors.ConfigError` naming the fix."""
    name = f"{label} {system!r}"
    for bad, hook in _misspelt_hooks(system):
        raise ConfigError(
            f"{name} has an attribute {bad!r}, which looks like the hook {hook!r} misspelt; "
            f"rename it to {hook!r} ({SYSTEM_HOOKS[hook]}) or to a name starting with '_'"
        )
    if not callable(system) and not isinstance(system, ItemSystem):
        raise ConfigError(f"{name} is not callable as (text, instruction) -> WAV bytes")
    sid = getattr(system, "system_id", None)
    if sid is not None and not (isinstance(sid, str) and sid):
        raise ConfigError(f"{name}: system_id must be {SYSTEM_HOOKS['system_id']}, "
                          f"got {sid!r}")
    for hook in ("synthesize_item", "synthesize_many"):
        if hasattr(system, hook) and not callable(getattr(system, hook)):
            raise ConfigError(f"{name}: {hook} must be {SYSTEM_HOOKS[hook]}")
    cache_clips = getattr(system, "cache_clips", True)
    if not isinstance(cache_clips, bool):
        raise ConfigError(f"{name}: cache_clips must be a bool, got {cache_clips!r}")
    conc = getattr(system, "concurrency", None)
    if conc is not None and (not is_whole_number(conc) or conc < 1):
        raise ConfigError(f"{name}: concurrency must be {SYSTEM_HOOKS['concurrency']}, "
                          f"got {conc!r}")
    placement = getattr(system, "placement", None)
    if placement not in (None, "client", "worker"):
        raise ConfigError(f"{name}: placement must be {SYSTEM_HOOKS['placement']}, "
                          f"got {placement!r}")
    return SystemHooks(
        system_id=system_id(system),
        per_item=isinstance(system, ItemSystem),
        batched=isinstance(system, BatchedSystem),
        cache_clips=cache_clips,
        concurrency=conc,
        placement=placement,
    )


def system_id(system: Callable[[str, str], bytes]) -> str:
    """A stable identity for ``system`` (cache key part): its ``system_id`` or its name."""
    sid = getattr(system, "system_id", None)
    if isinstance(sid, str) and sid:
        return sid
    mod = getattr(system, "__module__", "") or ""
    name = getattr(system, "__qualname__", None) or type(system).__qualname__
    return f"callable:{mod}.{name}"


def check_distinct_identities(systems: Mapping[str, Callable[[str, str], bytes]]) -> None:
    """Refuse two different systems that would share one identity (and so one cache row per
    item: the second would be scored on the first one's clips).

    Only fallback identities (``callable:module.qualname``, from a system without a
    ``system_id``) can collide by accident: two lambdas of one function, two instances of one
    class. Equal explicit ``system_id`` values mean the same configuration (an A/A test), and
    one object passed twice is an A/A test too."""
    seen: dict[str, tuple[str, Callable[[str, str], bytes]]] = {}
    for label, system in systems.items():
        sid = system_id(system)
        if sid in seen and seen[sid][1] is not system and not _has_own_id(system):
            raise ConfigError(
                f"systems {seen[sid][0]!r} and {label!r} are different objects with the same "
                f"identity {sid!r}, so they would share cached clips; give each a distinct "
                "system_id attribute (a string naming the model and its settings), or pass "
                "the same object twice for an A/A test")
        seen.setdefault(sid, (label, system))


def _has_own_id(system: Callable[[str, str], bytes]) -> bool:
    sid = getattr(system, "system_id", None)
    return isinstance(sid, str) and bool(sid)


def synthesize_item(system: Callable[[str, str], bytes], item: Item) -> bytes:
    """Synthesise ``item`` with ``system``.

    Our own errors pass through as they are (a ``ServiceError`` stays the instrument's, a
    ``ConfigError`` stops the run); anything else a user's system raises becomes a
    SynthesisError naming the item, and so does an empty or non-bytes result.
    """
    try:
        fn = getattr(system, "synthesize_item", None)
        wav = fn(item) if fn is not None else system(item.text, item.instruction)
    except VocenceError:
        raise
    except Exception as exc:  # a user's system may raise anything
        raise SynthesisError(
            f"{system_id(system)} failed on {item.id}: {type(exc).__name__}: {exc}"
        ) from exc
    if not isinstance(wav, bytes | bytearray):
        raise SynthesisError(f"{system_id(system)} returned {type(wav).__name__} instead of "
                             f"WAV bytes for {item.id}")
    if not wav:
        raise SynthesisError(f"{system_id(system)} returned no audio (0 bytes) instead of WAV "
                             f"bytes for {item.id}")
    return bytes(wav)


#: Largest clip a command or directory system may hand over (bytes), checked before reading
#: (the same figure as ``audio.DEFAULT_MAX_BYTES``): 50 MB is about 9 minutes of 48 kHz
#: 16-bit stereo WAV.
CLIP_MAX_BYTES = 50_000_000


def _size(n: int) -> str:
    return f"{n / 1e9:.2f} GB" if n >= 1e9 else f"{n / 1e6:.1f} MB"


def check_max_bytes(max_bytes: int) -> int:
    """``max_bytes`` when it is a whole number of bytes ≥ 1, else a ConfigError."""
    if not is_whole_number(max_bytes) or max_bytes < 1:
        raise ConfigError(f"max_bytes must be a whole number of bytes ≥ 1, got {max_bytes!r}")
    return max_bytes


def read_clip(path: str | os.PathLike[str], max_bytes: int, who: str) -> bytes | None:
    """The file's bytes, or None when it does not exist. Refuses, before reading anything, a
    file over ``max_bytes`` or one that is not a regular file (a FIFO, a device)."""
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0)
    try:
        fd = os.open(path, flags)
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise SynthesisError(f"{who}: cannot read {path}: {exc.strerror or exc}") from exc
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise SynthesisError(f"{who}: {path} is not a regular file")
        over = (f"{who}: the clip is over the {_size(max_bytes)} size cap (max_bytes="
                f"{max_bytes}); not read")
        if st.st_size > max_bytes:
            raise SynthesisError(over.replace("the clip is", f"the clip is {_size(st.st_size)},"))
        chunks: list[bytes] = []
        total = 0
        while chunk := os.read(fd, min(1 << 20, max_bytes + 1 - total)):
            total += len(chunk)
            if total > max_bytes:  # grew while we read it
                raise SynthesisError(over)
            chunks.append(chunk)
        return b"".join(chunks)
    finally:
        os.close(fd)
