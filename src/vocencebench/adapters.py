"""Any TTS model as a ``(text, instruction) -> wav bytes`` callable.

The extension point is :class:`TTSSystem`. A system may also implement optional hooks, each a
declared :class:`~typing.Protocol` below; the pipeline checks them once, when a run starts
(:func:`system_hooks`), and refuses an attribute that looks like a misspelt hook
(``cache_clip``, ``synthesise_many``) instead of silently ignoring it:

* :class:`IdentifiedSystem` — ``system_id: str``, a stable identity for the cache (else the
  class/function name is used);
* :class:`ItemSystem` — ``synthesize_item(item) -> bytes``, when the system needs the item
  itself (directories of clips);
* :class:`BatchedSystem` — ``synthesize_many(requests, *, workers=None) -> list[bytes |
  Exception]``: one result per ``(text, instruction)`` request, in order; an item's failure
  is its exception in its slot, never raised for the batch (the same contract as
  :func:`vocencebench.tts.synthesize_many`);
* :class:`CachePolicy` — ``cache_clips: bool``; ``False`` keeps this system's clips out of the
  run cache (they are read afresh every run);
* :class:`ConcurrentSystem` — ``concurrency: int``, requests this system may have in flight
  at once (I/O-bound systems: HTTP APIs, command lines); ``benchmark(concurrency=...)``
  overrides it;
* :class:`PlacedSystem` — ``placement: "client" | "worker"``: where a batched system runs on
  a Dask cluster (the model adapters declare ``"worker"``; a system without the hook runs
  in the client).

A system that raises or times out on an item scores S = 0 on it, with the reason kept; the
pipeline catches :class:`~vocencebench.errors.VocenceError` and any other exception alike. An
error blamed on an instrument (``ServiceError``: a speech API's 429/5xx/network after its
retries) makes the item incomplete instead, and a rerun retries it.

This module is the public face of :mod:`vocencebench.systems`, one module per engine
(``systems/base.py``: the protocols and hooks; ``espeak.py``, ``command.py``,
``directory.py``, ``openai_speech.py``, ``models.py``: the adapters). A CLI spec becomes a
system in :mod:`vocencebench.specs` (:func:`vocencebench.specs.build_system`).
"""

from __future__ import annotations

from .systems.base import (
    CLIP_MAX_BYTES,
    SYSTEM_HOOKS,
    BatchedSystem,
    CachePolicy,
    ConcurrentSystem,
    IdentifiedSystem,
    ItemSystem,
    PlacedSystem,
    Placement,
    SystemHooks,
    TTSSystem,
    check_distinct_identities,
    synthesize_item,
    system_hooks,
    system_id,
)
from .systems.command import CommandAdapter, kill_running_commands
from .systems.directory import DirectoryAdapter
from .systems.espeak import EspeakSystem
from .systems.models import ParlerTTSAdapter, Qwen3TTSAdapter
from .systems.openai_speech import OpenAISpeechAdapter

__all__ = [
    "CLIP_MAX_BYTES",
    "SYSTEM_HOOKS",
    "BatchedSystem",
    "CachePolicy",
    "CommandAdapter",
    "ConcurrentSystem",
    "DirectoryAdapter",
    "EspeakSystem",
    "IdentifiedSystem",
    "ItemSystem",
    "OpenAISpeechAdapter",
    "ParlerTTSAdapter",
    "PlacedSystem",
    "Placement",
    "Qwen3TTSAdapter",
    "SystemHooks",
    "TTSSystem",
    "check_distinct_identities",
    "kill_running_commands",
    "synthesize_item",
    "system_hooks",
    "system_id",
]
