"""Where finished single judgements are kept, and the key each is kept under.

A :class:`VerdictCache` maps :func:`verdict_cache_key` (a sha256 hex digest) to a
:meth:`~vocencebench.judge.SingleJudgement.to_dict`; the judge stores every finished unit
before the next starts, so no paid call is repeated on resume.
"""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Mapping, Sequence
from typing import Any, Protocol, runtime_checkable

from ..errors import ConfigError
from ..schema import dumps_canonical

__all__ = ["MemoryVerdictCache", "TableVerdictCache", "VerdictCache", "verdict_cache_key"]


@runtime_checkable
class VerdictCache(Protocol):
    """Where finished single judgements are kept (JSON-ready dicts under string keys)."""

    def get(self, key: str) -> Mapping[str, Any] | None: ...

    def put(self, key: str, value: Mapping[str, Any]) -> None: ...


class MemoryVerdictCache:
    """A :class:`VerdictCache` in a dict (for tests and one-process runs)."""

    def __init__(self) -> None:
        self._data: dict[str, dict[str, Any]] = {}
        self._lock = threading.Lock()

    def get(self, key: str) -> Mapping[str, Any] | None:
        with self._lock:
            return self._data.get(key)

    def put(self, key: str, value: Mapping[str, Any]) -> None:
        with self._lock:
            self._data[key] = dict(value)

    def __len__(self) -> int:
        return len(self._data)


class TableVerdictCache:
    """Adapts a store with ``get_json(table, key)`` / ``put_json(table, key, value)``
    (e.g. :class:`vocencebench.cache.Cache`) to :class:`VerdictCache`."""

    def __init__(self, store: Any, table: str = "verdicts") -> None:
        if not (hasattr(store, "get_json") and hasattr(store, "put_json")):
            raise ConfigError(f"{store!r} has no get_json/put_json; pass a VerdictCache")
        self.store = store
        self.table = table

    def get(self, key: str) -> Mapping[str, Any] | None:
        value = self.store.get_json(self.table, key)
        return value if isinstance(value, Mapping) else None

    def put(self, key: str, value: Mapping[str, Any]) -> None:
        self.store.put_json(self.table, key, dict(value))


def verdict_cache_key(
    *,
    clip_a_sha256: str,
    clip_b_sha256: str,
    dimensions: Sequence[str],
    order: str,
    vote: int,
    model: str,
    prompt_version: str,
    prompt_sha256: str,
    temperature: float = 0.0,
) -> str:
    """sha256 hex key of one single judgement.

    Covers both clips' content hashes, the dimension(s), presentation order, vote index, judge
    model, prompt version, the fingerprint of the rendered prompt (script, instruction,
    category, rubric) and the temperature. No key, URL or request body goes into it.
    """
    parts = {
        "clip_a": clip_a_sha256,
        "clip_b": clip_b_sha256,
        "dimensions": list(dimensions),
        "order": order,
        "vote": int(vote),
        "model": model,
        "prompt_version": prompt_version,
        "prompt": prompt_sha256,
        "temperature": float(temperature),
    }
    return hashlib.sha256(dumps_canonical(parts).encode("utf-8")).hexdigest()
