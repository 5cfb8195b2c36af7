"""The run cache: one SQLite file (WAL) of finished work, so a killed run resumes for free.

Four tables, each keyed by the sha256 of a canonical JSON key (content hashes plus the
version of the component that produced the value):

* ``clips``        (system id, item id, text, instruction) → wav bytes
* ``probes``       (audio sha256, probe@version, request) → probe results (JSON)
* ``transcripts``  (audio sha256, engine@model) → transcript (JSON)
* ``verdicts``     (both audio sha256s, dimension, order, vote, judge model, prompt version)
                   → one single judgement (JSON)

Every ``put`` commits at once, so whatever finished before a SIGKILL is on disk. Values never
contain API keys: callers store results, not requests.

The cache trusts nothing it reads back. Every row carries ``sha256`` (of the stored bytes: a
clip's audio, or a record's canonical JSON) and ``digest`` (sha256 over table, key, meta and
that sha256, so a row moved to another key or with edited meta fails too); both are checked
on every read. A row that fails is a miss — counted in :attr:`Cache.corrupt`, logged once per
table at WARNING, never used — and the recomputed value overwrites it. The file carries a
marker table (``vocencebench_cache``: kind and layout version); a SQLite file without it is
not ours and is refused without a byte written into it. Every SQLite failure (damaged file,
read-only file, full disk, lock held too long) becomes a one-line :class:`CacheError` naming
the file and what to do.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import os
import sqlite3
import threading
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import quote

from ._util.closing import Closing
from .errors import CacheError
from .schema import dumps_canonical

__all__ = [
    "CACHE_KIND",
    "CACHE_SCHEMA",
    "TABLES",
    "Cache",
    "CacheCheck",
    "NullCache",
    "cache_key",
    "check_cache",
    "clip_key",
    "failed_clip_key",
]

log = logging.getLogger(__name__)

#: Bumped when the layout of the cache changes; an older file is refused, not misread.
#: Layout 2 added the marker table and per-row ``sha256`` and ``digest``.
CACHE_SCHEMA = 2
#: What the marker table says a vocencebench cache is.
CACHE_KIND = "vocencebench-cache"
TABLES = ("clips", "probes", "transcripts", "verdicts")
_MARKER = "vocencebench_cache"
_SQLITE_MAGIC = b"SQLite format 3\x00"


def clip_key(system_id: str, item: Any) -> str:
    """The key of ``system_id``'s clip for ``item`` (an :class:`~vocencebench.schema.Item`):
    its id, script and instruction — a changed request is a new clip."""
    return cache_key({"system": system_id, "item": item.id, "text": item.text,
                      "instruction": item.instruction})


def failed_clip_key(system_id: str, item: Any) -> str:
    """Where a clip the run could not use (undecodable, silent, too short) is kept for the
    report's listening section: never under :func:`clip_key`, so the next run asks the system
    again instead of reusing it, and nothing but the report reads it."""
    return cache_key({"system": system_id, "item": item.id, "text": item.text,
                      "instruction": item.instruction, "failed": True})


def cache_key(parts: Mapping[str, Any]) -> str:
    """sha256 hex digest of the canonical JSON of ``parts``."""
    return hashlib.sha256(dumps_canonical(dict(parts)).encode("utf-8")).hexdigest()


def _seal(table: str, key: str, meta: str, sha: str) -> str:
    h = hashlib.sha256()
    for part in (table, key, meta, sha):
        h.update(part.encode("utf-8"))
        h.update(b"\x00")
    return h.hexdigest()


def _one_line(text: object) -> str:
    return " ".join(str(text).split())


def _explain(path: Path, doing: str, exc: BaseException) -> str:
    """One line: what failed on which file, and what to do about it."""
    name = str(getattr(exc, "sqlite_errorname", "") or "")
    why = _one_line(exc)
    if name.startswith("SQLITE_READONLY"):
        return (f"cache {path} is read-only and {doing} needs to write to it; make the file "
                "and its folder writable, pass another --cache PATH, or use --no-cache")
    if name.startswith("SQLITE_FULL") or "disk is full" in why:
        return (f"cache {path}: the disk is full ({doing}); free some space, pass a --cache "
                "PATH on another disk, or use --no-cache")
    if name.startswith(("SQLITE_BUSY", "SQLITE_LOCKED")):
        return (f"cache {path} is locked by another process ({doing}); wait for the other run "
                "that uses it to finish, or pass another --cache PATH")
    if name.startswith(("SQLITE_CORRUPT", "SQLITE_NOTADB")):
        return (f"cache {path} is damaged ({why}); delete it (its finished work is then "
                f"redone) or pass another --cache PATH; `vocencebench cache check {path}` "
                "shows the damage")
    if name.startswith(("SQLITE_CANTOPEN", "SQLITE_PERM", "SQLITE_AUTH")):
        return (f"cannot open cache {path} ({why}); check that its folder exists and can be "
                "written, or pass another --cache PATH")
    if name.startswith("SQLITE_IOERR"):
        return (f"cache {path}: I/O error while {doing} ({why}); check the disk, or pass "
                "another --cache PATH")
    return (f"cache {path}: {doing} failed ({why}); pass another --cache PATH, or use "
            "--no-cache")


class Cache(Closing):
    """A SQLite-backed store of finished units of work (thread-safe within one process).

    ``readonly`` opens the file without ever writing (``vocencebench cache check``); a
    ``put`` then raises CacheError. ``timeout`` is how long (seconds) to wait for another
    process's write lock. Counters per table: :attr:`hits`, :attr:`misses` and
    :attr:`corrupt` (rows that failed their digest check; each is also a miss).
    """

    def __init__(self, path: str | os.PathLike[str], *, readonly: bool = False,
                 timeout: float = 30.0) -> None:
        self.path = Path(path)
        self.readonly = readonly
        self._timeout = timeout
        self._lock = threading.Lock()
        self.hits = dict.fromkeys(TABLES, 0)
        self.misses = dict.fromkeys(TABLES, 0)
        self.corrupt = dict.fromkeys(TABLES, 0)
        self._warned: set[str] = set()
        self._db: sqlite3.Connection | None = None
        self._db = self._open()

    # ------------------------------------------------------------------ opening

    @contextlib.contextmanager
    def _errors(self, doing: str) -> Iterator[None]:
        try:
            yield
        except sqlite3.Error as exc:
            raise CacheError(_explain(self.path, doing, exc)) from exc

    def _connect(self, *, readonly: bool) -> sqlite3.Connection:
        if readonly:
            uri = f"file:{quote(str(self.path.absolute()))}?mode=ro"
            db = sqlite3.connect(uri, uri=True, check_same_thread=False,
                                 timeout=self._timeout)
        else:
            db = sqlite3.connect(str(self.path), check_same_thread=False,
                                 timeout=self._timeout)
            db.execute("PRAGMA synchronous=NORMAL")
        db.text_factory = _text
        return db

    def _open(self) -> sqlite3.Connection:
        try:
            with self.path.open("rb") as f:
                head = f.read(len(_SQLITE_MAGIC))
        except FileNotFoundError:
            head = b""
        except OSError as exc:
            raise CacheError(f"cannot read cache {self.path}: {exc.strerror or exc}; pass "
                             "another --cache PATH") from exc
        if head and head != _SQLITE_MAGIC:
            raise CacheError(f"{self.path} is not a SQLite database, so not a vocencebench "
                             "cache; refusing to write into it: pass another --cache PATH")
        if not head and self.readonly:
            raise CacheError(f"no cache at {self.path}")
        empty = True
        if head:  # an existing database: look (read-only) before touching anything
            with self._errors("opening"):
                probe = self._connect(readonly=True)
                try:
                    empty = not self._identify(probe)
                finally:
                    probe.close()
        if not empty:
            with self._errors("opening"):
                return self._connect(readonly=self.readonly)
        if self.readonly:
            raise CacheError(f"{self.path} is an empty database, not a vocencebench cache")
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise CacheError(f"cannot create the folder of cache {self.path}: "
                             f"{exc.strerror or exc}; pass another --cache PATH") from exc
        with self._errors("creating the cache"):
            db = self._connect(readonly=False)
            try:
                self._create(db)
            except BaseException:
                db.close()
                raise
            return db

    def _identify(self, db: sqlite3.Connection) -> bool:
        """True for a vocencebench cache of our layout, False for an empty database; refuse
        anything else."""
        tables = {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type='table'")}
        if not tables:
            return False  # nothing to lose: it becomes ours in _create
        if _MARKER not in tables:
            if "meta" in tables and set(TABLES) <= tables:
                raise CacheError(
                    f"cache {self.path} was written by an older vocencebench (layout 1); "
                    f"this one uses layout {CACHE_SCHEMA}: delete the file (its finished work "
                    "is then redone) or pass another --cache PATH")
            shown = ", ".join(sorted(tables)[:5]) + (", ..." if len(tables) > 5 else "")
            raise CacheError(
                f"{self.path} is a SQLite database that is not a vocencebench cache (tables: "
                f"{shown}); refusing to write into it: pass another --cache PATH")
        marker = dict(db.execute(f"SELECT k, v FROM {_MARKER}").fetchall())
        if marker.get("kind") != CACHE_KIND:
            raise CacheError(f"{self.path} is not a vocencebench cache (kind "
                             f"{marker.get('kind')!r}); pass another --cache PATH")
        if marker.get("schema") != str(CACHE_SCHEMA):
            raise CacheError(
                f"cache {self.path} has layout {marker.get('schema')}, this vocencebench uses "
                f"{CACHE_SCHEMA}; delete the file (its finished work is then redone) or pass "
                "another --cache PATH")
        missing = [t for t in TABLES if t not in tables]
        if missing:
            raise CacheError(f"cache {self.path} lacks table(s) {', '.join(missing)}; it is "
                             "damaged: delete it or pass another --cache PATH")
        return True

    def _create(self, db: sqlite3.Connection) -> None:
        db.execute("PRAGMA journal_mode=WAL")
        db.execute("BEGIN IMMEDIATE")
        # Another process may have created it between our look and this lock.
        tables = {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type='table'")}
        if tables:
            db.rollback()
            self._identify(db)
            return
        db.execute(f"CREATE TABLE {_MARKER} (k TEXT PRIMARY KEY, v TEXT NOT NULL)")
        from .constants import PACKAGE_VERSION as __version__

        db.executemany(f"INSERT INTO {_MARKER} VALUES (?, ?)", [
            ("kind", CACHE_KIND), ("schema", str(CACHE_SCHEMA)), ("created_by", __version__)])
        for t in TABLES:
            db.execute(f"CREATE TABLE {t} (key TEXT PRIMARY KEY, meta TEXT NOT NULL, "
                       "data BLOB NOT NULL, sha256 TEXT NOT NULL, digest TEXT NOT NULL)")
        db.commit()

    def _conn(self) -> sqlite3.Connection:
        if self._db is None:
            raise CacheError(f"cache {self.path} is closed")
        return self._db

    # ------------------------------------------------------------------ reading, writing

    def _check(self, table: str) -> None:
        if table not in TABLES:
            raise CacheError(f"unknown cache table {table!r}; tables: {', '.join(TABLES)}")

    def _bad_row(self, table: str) -> None:
        self.corrupt[table] += 1
        if table not in self._warned:
            self._warned.add(table)
            log.warning("cache %s: a stored %s entry failed its digest check; it was ignored "
                        "and is recomputed (further ones are counted, not logged); "
                        "`vocencebench cache check %s` lists them", self.path, table,
                        self.path)

    def get_bytes(self, table: str, key: str) -> tuple[bytes, dict[str, Any]] | None:
        """The stored (data, meta) for ``key``, or None (absent, or failed its digests)."""
        self._check(table)
        with self._lock, self._errors(f"reading {table}"):
            row = self._conn().execute(
                f"SELECT data, meta, sha256, digest FROM {table} WHERE key=?", (key,)
            ).fetchone()
        if row is None:
            self.misses[table] += 1
            return None
        meta = _verified(table, key, row)
        if meta is None:
            self._bad_row(table)
            self.misses[table] += 1
            return None
        self.hits[table] += 1
        return bytes(row[0]), meta

    def put_bytes(
        self, table: str, key: str, data: bytes, meta: Mapping[str, Any] | None = None
    ) -> None:
        """Store (replacing any row under ``key``, a corrupt one included) and commit."""
        self._check(table)
        if self.readonly:
            raise CacheError(f"cache {self.path} was opened read-only; storing needs a "
                             "writable cache")
        meta_text = dumps_canonical(dict(meta or {}))
        sha = hashlib.sha256(data).hexdigest()
        with self._lock, self._errors(f"storing into {table}"):
            db = self._conn()
            try:
                db.execute(
                    f"INSERT OR REPLACE INTO {table} (key, meta, data, sha256, digest) "
                    "VALUES (?, ?, ?, ?, ?)",
                    (key, meta_text, sqlite3.Binary(data), sha, _seal(table, key, meta_text,
                                                                       sha)),
                )
                db.commit()
            except BaseException:
                with contextlib.suppress(sqlite3.Error):
                    db.rollback()
                raise

    def get_json(self, table: str, key: str) -> Any:
        """The stored JSON value for ``key``, or None."""
        hit = self.get_bytes(table, key)
        return None if hit is None else json.loads(hit[0].decode("utf-8"))

    def put_json(self, table: str, key: str, value: Any) -> None:
        """Store a JSON-ready value (its canonical bytes) and commit at once."""
        self.put_bytes(table, key, dumps_canonical(value).encode("utf-8"))

    def delete(self, table: str, key: str) -> bool:
        """Remove the row under ``key``; True if there was one."""
        self._check(table)
        if self.readonly:
            raise CacheError(f"cache {self.path} was opened read-only; deleting needs a "
                             "writable cache")
        with self._lock, self._errors(f"deleting from {table}"):
            db = self._conn()
            cur = db.execute(f"DELETE FROM {table} WHERE key=?", (key,))
            db.commit()
            return cur.rowcount > 0

    def count(self, table: str) -> int:
        """Rows in ``table``."""
        self._check(table)
        with self._lock, self._errors(f"counting {table}"):
            return int(self._conn().execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0])

    def close(self) -> None:
        with self._lock:
            if self._db is not None:
                with contextlib.suppress(sqlite3.Error):
                    self._db.close()
                self._db = None

    def __repr__(self) -> str:
        return f"Cache({str(self.path)!r})"


def _text(raw: bytes) -> str:
    """A TEXT value as read: invalid UTF-8 (a damaged row, or data stored with the TEXT type)
    is replaced, so the row fails its digests and is a miss, never an error that makes the
    whole cache unreadable."""
    return raw.decode("utf-8", "replace")


def _verified(table: str, key: str, row: tuple[Any, ...]) -> dict[str, Any] | None:
    """The row's meta when its data and seal match their digests, else None."""
    data, meta_text, sha, digest = row
    if not isinstance(data, bytes | memoryview) or not isinstance(meta_text, str):
        return None
    if hashlib.sha256(bytes(data)).hexdigest() != sha:
        return None
    if not isinstance(sha, str) or _seal(table, key, meta_text, sha) != digest:
        return None
    try:
        meta = json.loads(meta_text)
    except ValueError:
        return None
    return meta if isinstance(meta, dict) else None


class NullCache(Cache):
    """A cache that stores nothing (``--no-cache``)."""

    def __init__(self) -> None:
        self.path = Path(os.devnull)
        self.readonly = False
        self.hits = dict.fromkeys(TABLES, 0)
        self.misses = dict.fromkeys(TABLES, 0)
        self.corrupt = dict.fromkeys(TABLES, 0)
        self._db = None

    def get_bytes(self, table: str, key: str) -> tuple[bytes, dict[str, Any]] | None:
        self._check(table)
        self.misses[table] += 1
        return None

    def put_bytes(
        self, table: str, key: str, data: bytes, meta: Mapping[str, Any] | None = None
    ) -> None:
        self._check(table)

    def delete(self, table: str, key: str) -> bool:
        self._check(table)
        return False

    def count(self, table: str) -> int:
        return 0

    def close(self) -> None:
        return None

    def __repr__(self) -> str:
        return "NullCache()"


# --------------------------------------------------------------------------- cache check


@dataclass(frozen=True)
class CacheCheck:
    """What ``vocencebench cache check`` found: SQLite's ``integrity_check`` lines (``("ok",)``
    when sound), rows per table, rows that failed their digests and the first of their keys."""

    path: Path
    integrity: tuple[str, ...]
    rows: dict[str, int]
    bad: dict[str, int]
    bad_keys: dict[str, tuple[str, ...]] = field(default_factory=dict)
    deleted: int = 0

    @property
    def ok(self) -> bool:
        return self.integrity == ("ok",) and not any(self.bad.values())

    def lines(self) -> list[str]:
        out = [f"cache {self.path}: {CACHE_KIND}, layout {CACHE_SCHEMA}",
               f"integrity_check: {'; '.join(self.integrity[:5])}"
               + (f" (+{len(self.integrity) - 5} more)" if len(self.integrity) > 5 else "")]
        for t in TABLES:
            line = f"{t}: {self.rows.get(t, 0)} rows, {self.bad.get(t, 0)} failed their digests"
            if self.bad_keys.get(t):
                line += " (e.g. " + ", ".join(k[:16] for k in self.bad_keys[t]) + ")"
            out.append(line)
        return out


def check_cache(path: str | os.PathLike[str], *, delete_bad: bool = False) -> CacheCheck:
    """``PRAGMA integrity_check`` plus our digest check of every row, read-only unless
    ``delete_bad`` (which removes the rows that fail). Raises CacheError when the file is
    missing, not ours, of another layout or too damaged to read."""
    cache = Cache(path, readonly=not delete_bad)
    try:
        db = cache._conn()
        with cache._errors("checking integrity"):
            integrity = tuple(_one_line(r[0]) for r in db.execute("PRAGMA integrity_check"))
        rows: dict[str, int] = {}
        bad: dict[str, int] = {}
        bad_keys: dict[str, tuple[str, ...]] = {}
        doomed: list[tuple[str, int]] = []
        for t in TABLES:
            n = nbad = 0
            keys: list[str] = []
            with cache._errors(f"reading {t}"):
                for row in db.execute(
                        f"SELECT rowid, key, data, meta, sha256, digest FROM {t}"):
                    n += 1
                    if _verified(t, str(row[1]), tuple(row[2:])) is None:
                        nbad += 1
                        doomed.append((t, int(row[0])))  # by rowid: the key may be damaged too
                        if len(keys) < 3:
                            keys.append(str(row[1]))
            rows[t], bad[t], bad_keys[t] = n, nbad, tuple(keys)
        deleted = 0
        if delete_bad and doomed:
            with cache._errors("deleting the rows that fail their digests"):
                for t, rowid in doomed:
                    deleted += db.execute(f"DELETE FROM {t} WHERE rowid=?", (rowid,)).rowcount
                db.commit()
        return CacheCheck(Path(path), integrity, rows, bad, bad_keys, deleted)
    finally:
        cache.close()
