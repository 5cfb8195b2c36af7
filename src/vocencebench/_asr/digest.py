"""The sha256 of a model file, computed once per file and remembered.

A recogniser is named by its weights' digest (so two different models in folders of the same
name never share cached transcripts), but hashing costs a full read: about 0.3 s for
tiny.en's 75 MB ``model.bin`` here, tens of seconds for a 3 GB large-v3 on a slow disk. So
:func:`file_sha256` keeps each digest under the file's identity — resolved path, size,
modification time, change time, inode and device, all from one ``stat`` — in a small JSON
file in the user's cache directory (:func:`digest_cache_path`), and hashes again only when
any of those changes. The change time (``st_ctime_ns``) cannot be
set back by a user tool, so a file rewritten in place with its old size and modification
time still gets a new digest.

The file is a convenience, never a source of truth that could be wrong silently: unreadable,
malformed or unwritable, it is ignored (the digest is computed) and rewritten when it can be.
"""

from __future__ import annotations

import json
import logging
import os
import threading
from pathlib import Path
from typing import Final

from .._util.filehash import sha256_file
from ..outputs import atomic_write

__all__ = ["CACHE_DIR_ENV", "DIGEST_CACHE_ENTRIES", "digest_cache_path", "file_sha256"]

_log = logging.getLogger(__name__)

#: Environment variable naming vocencebench's user cache directory (default:
#: ``$XDG_CACHE_HOME/vocencebench``, else ``~/.cache/vocencebench``).
CACHE_DIR_ENV: Final = "VOCENCE_CACHE_DIR"
#: File identities kept in the digest file; the oldest are dropped beyond this.
DIGEST_CACHE_ENTRIES: Final = 256
_FILE_NAME: Final = "file-digests.json"

_lock = threading.Lock()  # one writer of the digest file per process


def digest_cache_path() -> Path:
    """Where remembered digests are kept: ``$VOCENCE_CACHE_DIR/file-digests.json``."""
    root = os.environ.get(CACHE_DIR_ENV)
    if not root:
        xdg = os.environ.get("XDG_CACHE_HOME")
        root = str(Path(xdg) / "vocencebench") if xdg else str(
            Path.home() / ".cache" / "vocencebench")
    return Path(root) / _FILE_NAME


def _identity(path: Path) -> str:
    st = path.stat()
    return (f"{path.resolve()}|{st.st_size}|{st.st_mtime_ns}|{st.st_ctime_ns}|{st.st_ino}|"
            f"{st.st_dev}")


def _load(cache: Path) -> dict[str, str]:
    try:
        data = json.loads(cache.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError):
        return {}
    if not isinstance(data, dict):
        return {}
    return {k: v for k, v in data.items() if isinstance(k, str) and isinstance(v, str)
            and len(v) == 64 and all(c in "0123456789abcdef" for c in v)}


def _store(cache: Path, entries: dict[str, str]) -> None:
    try:
        cache.parent.mkdir(parents=True, exist_ok=True)
        atomic_write(cache, json.dumps(entries, indent=0, sort_keys=False))
    except OSError as exc:  # a read-only home: the digest is still right, only not kept
        _log.debug("cannot keep model digests in %s: %s", cache, exc)


def file_sha256(path: str | os.PathLike[str], *, remember: bool = True) -> str:
    """Hex sha256 of the file at ``path``, read from the digest cache when the file is
    unchanged since it was last hashed (see the module docstring), else computed (and
    remembered, unless ``remember`` is False)."""
    p = Path(path)
    key = _identity(p)
    cache = digest_cache_path()
    if remember:
        known = _load(cache).get(key)
        if known is not None:
            return known
    digest = sha256_file(p)
    if remember and _identity(p) == key:  # a file changed while read: never remember it
        with _lock:
            entries = _load(cache)  # another process may have added entries meanwhile
            entries.pop(key, None)
            entries[key] = digest
            while len(entries) > DIGEST_CACHE_ENTRIES:
                entries.pop(next(iter(entries)))
            _store(cache, entries)
    return digest
