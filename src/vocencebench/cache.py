"""The run cache: one SQLite file (WAL) of finished work, so a killed run resumes for free.

Four tables, each keyed by the sha256 of a canonical JSON key (content hashes plus the
version of the component that produced the value):

* ``clips``        (system id, item id, text, instruction) → wav bytes, or the failure text
* ``probes``       (audio sha256, probe@version, request) → probe results (JSON)
* ``transcripts``  (audio sha256, engine@model) → transcript (JSON)
* ``verdicts``     (both audio sha256s, dimension, order, vote, judge model, prompt version)
                   → one single judgement (JSON)

Every ``put`` commits at once, so whatever finished before a SIGKILL is on disk. Values never
contain API keys: callers store results, not requests.
"""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import threading
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from .errors import CacheError
from .schema import dumps_canonical

__all__ = ["CACHE_SCHEMA", "TABLES", "Cache", "NullCache", "cache_key"]

#: Bumped when the layout of the cache changes; an older file is refused, not misread.
CACHE_SCHEMA = 1
TABLES = ("clips", "probes", "transcripts", "verdicts")


def cache_key(parts: Mapping[str, Any]) -> str:
    """sha256 hex digest of the canonical JSON of ``parts``."""
    return hashlib.sha256(dumps_canonical(dict(parts)).encode("utf-8")).hexdigest()


class Cache:
    """A SQLite-backed store of finished units of work (thread-safe within one process)."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        self.hits = dict.fromkeys(TABLES, 0)
        self.misses = dict.fromkeys(TABLES, 0)
        try:
            self._db = sqlite3.connect(str(self.path), check_same_thread=False, timeout=30.0)
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA synchronous=NORMAL")
            self._db.execute("CREATE TABLE IF NOT EXISTS meta (k TEXT PRIMARY KEY, v TEXT)")
            row = self._db.execute("SELECT v FROM meta WHERE k='schema'").fetchone()
            if row is None:
                self._db.execute("INSERT INTO meta VALUES ('schema', ?)", (str(CACHE_SCHEMA),))
            elif row[0] != str(CACHE_SCHEMA):
                raise CacheError(
                    f"cache {self.path} has layout {row[0]}, this vocencebench uses "
                    f"{CACHE_SCHEMA}; pass another --cache PATH or delete the file"
                )
            for t in TABLES:
                self._db.execute(
                    f"CREATE TABLE IF NOT EXISTS {t} (key TEXT PRIMARY KEY, meta TEXT, "
                    "data BLOB)"
                )
            self._db.commit()
        except sqlite3.DatabaseError as exc:
            raise CacheError(
                f"cannot open cache {self.path}: {exc}; pass another --cache PATH, "
                "or --no-cache"
            ) from exc

    def _check(self, table: str) -> None:
        if table not in TABLES:
            raise CacheError(f"unknown cache table {table!r}; tables: {', '.join(TABLES)}")

    def get_bytes(self, table: str, key: str) -> tuple[bytes, dict[str, Any]] | None:
        """The stored (data, meta) for ``key``, or None."""
        self._check(table)
        with self._lock:
            row = self._db.execute(
                f"SELECT data, meta FROM {table} WHERE key=?", (key,)
            ).fetchone()
        if row is None:
            self.misses[table] += 1
            return None
        self.hits[table] += 1
        return bytes(row[0]), json.loads(row[1])

    def put_bytes(
        self, table: str, key: str, data: bytes, meta: Mapping[str, Any] | None = None
    ) -> None:
        """Store and commit at once."""
        self._check(table)
        with self._lock:
            self._db.execute(
                f"INSERT OR REPLACE INTO {table} (key, meta, data) VALUES (?, ?, ?)",
                (key, dumps_canonical(dict(meta or {})), sqlite3.Binary(data)),
            )
            self._db.commit()

    def get_json(self, table: str, key: str) -> Any:
        """The stored JSON value for ``key``, or None."""
        hit = self.get_bytes(table, key)
        return None if hit is None else json.loads(hit[0].decode("utf-8"))

    def put_json(self, table: str, key: str, value: Any) -> None:
        """Store a JSON-ready value and commit at once."""
        self.put_bytes(table, key, dumps_canonical(value).encode("utf-8"))

    def count(self, table: str) -> int:
        """Rows in ``table``."""
        self._check(table)
        with self._lock:
            return int(self._db.execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0])

    def close(self) -> None:
        with self._lock:
            self._db.close()

    def __enter__(self) -> Cache:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"Cache({str(self.path)!r})"


class NullCache(Cache):
    """A cache that stores nothing (``--no-cache``)."""

    def __init__(self) -> None:
        self.path = Path(os.devnull)
        self.hits = dict.fromkeys(TABLES, 0)
        self.misses = dict.fromkeys(TABLES, 0)

    def get_bytes(self, table: str, key: str) -> tuple[bytes, dict[str, Any]] | None:
        self._check(table)
        self.misses[table] += 1
        return None

    def put_bytes(
        self, table: str, key: str, data: bytes, meta: Mapping[str, Any] | None = None
    ) -> None:
        self._check(table)

    def count(self, table: str) -> int:
        return 0

    def close(self) -> None:
        return None

    def __repr__(self) -> str:
        return "NullCache()"
