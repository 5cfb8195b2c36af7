"""Output directories and the file sets written into them, safe against kills and strangers.

Three rules, shared by ``run``, ``leaderboard`` and ``redteam``:

* **Ours or refused.** :func:`claim_directory` accepts a missing or empty directory, or one
  holding our marker file (:data:`MARKER`, written when a run first claims it). A non-empty
  directory without the marker belongs to someone else and is refused unless ``force=True``.
  The check and a write probe happen before any work starts.
* **Atomic files.** Every file is written to a temporary name in the same directory, flushed
  to disk and renamed over the target (:func:`atomic_write`), so a reader sees the old file or
  the new one, never a torn one.
* **Sets with a manifest.** :func:`write_set` publishes several files and then a manifest
  (``run.json``) recording the sha256 of each. Every file of the set, the manifest included,
  is first written in full under a temporary name; only then is the manifest removed, the
  files renamed into place and the manifest renamed last. So after a kill at any instant the
  directory holds either the previous complete set, or no manifest at all (nothing claims the
  files belong together), or the new complete set; and a full disk (or any other write
  error) stops the save before anything was replaced, with one line naming the directory
  (:func:`unwritable`). :func:`verify_set` checks a directory against its manifest.
* **No stale temporaries.** A save killed while writing leaves its temporary files
  (``.report.md.k3j9x0qa.tmp``); the next save of the same names in that directory removes
  those older than :data:`STALE_TEMPORARY_S` (:func:`remove_stale_temporaries`) — only that
  pattern, only for the names it writes, and never a fresh one that a concurrent save may
  still be writing.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import json
import os
import re
import tempfile
import time
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any

from .errors import ConfigError

__all__ = ["MANIFEST_KEY", "MARKER", "STALE_TEMPORARY_S", "atomic_write", "claim_directory",
           "remove_stale_temporaries", "saving", "unwritable", "verify_set",
           "write_set", "write_temporary"]

#: Marker file of a directory vocencebench created (JSON: {"kind": ..., "vocencebench": ...}).
MARKER = ".vocencebench"
#: Key of the manifest object under which the sha256 of every file of the set is recorded.
MANIFEST_KEY = "files"
#: Seconds after its last write that a temporary file of a save counts as left by a save
#: that died (a live save writes, flushes and renames it within seconds, even for a
#: 100 000-item report).
STALE_TEMPORARY_S = 600.0

# tempfile.mkstemp's names: the prefix, 8 characters of its alphabet, the suffix.
_TEMP_TAIL = r"\.[a-z0-9_]{8}\.tmp"


def _fsync_dir(directory: Path) -> None:
    with contextlib.suppress(OSError):  # not every filesystem lets a directory be opened
        fd = os.open(directory, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def unwritable(directory: str | os.PathLike[str], exc: OSError, doing: str, *,
               manifest: str | None = None, state: str | None = None) -> ConfigError:
    """The one-line error for a save into ``directory`` that failed with ``exc`` while
    ``doing`` (``"writing report.html"``): what went wrong, what to do, and what state the
    directory is in — nothing replaced, or (``manifest`` named: the save failed after
    removing it) no manifest, so nothing claims the files belong together; ``state`` words
    it for another kind of save."""
    code = exc.errno
    detail = exc.strerror or str(exc)
    if code in (errno.ENOSPC, errno.EDQUOT):
        why = "the disk is full" if code == errno.ENOSPC else "the disk quota is exceeded"
        fix = "free some space there or write somewhere else (--out)"
    elif code == errno.EROFS:
        why, fix = "the file system is read-only", "write somewhere else (--out)"
    elif code in (errno.EACCES, errno.EPERM):
        why, fix = "permission denied", "make it writable or write somewhere else (--out)"
    else:
        why, fix = "the write failed", "check the disk, or write somewhere else (--out)"
    if state is None:
        state = ("Nothing there was replaced: its files are as they were before"
                 if manifest is None
                 else f"The save stopped midway: {manifest} is missing until a save completes")
    return ConfigError(f"cannot save into {directory}: {why} ({doing}: {detail}); {fix}. "
                       f"{state}")


@contextlib.contextmanager
def saving(directory: str | os.PathLike[str], doing: str = "saving", *,
           state: str | None = None) -> Iterator[None]:
    """Within the block, an ``OSError`` becomes :func:`unwritable`'s one-line ConfigError
    (``state``: what the directory holds after a failure part-way, in words)."""
    try:
        yield
    except OSError as exc:
        raise unwritable(directory, exc, doing, state=state) from None


def write_temporary(target: str | os.PathLike[str], raw: bytes) -> str:
    """Write ``raw`` in full to a new temporary file beside ``target`` (same directory, so a
    rename publishes it), flushed to disk; return its path. Nothing is left on failure."""
    t = Path(target)
    fd, tmp = tempfile.mkstemp(prefix=f".{t.name}.", suffix=".tmp", dir=t.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(raw)
            fh.flush()
            os.fsync(fh.fileno())
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    return tmp


def remove_stale_temporaries(directory: str | os.PathLike[str], names: Iterable[str], *,
                             older_than_s: float = STALE_TEMPORARY_S) -> list[str]:
    """Remove the temporary files a killed save of ``names`` left in ``directory`` — those
    named as :func:`write_temporary` names them (``.NAME.xxxxxxxx.tmp``) and last written
    more than ``older_than_s`` seconds ago; a fresh one may belong to a save running now.
    Returns the names removed."""
    d = Path(directory)
    pattern = re.compile("|".join(rf"\.{re.escape(n)}{_TEMP_TAIL}" for n in names))
    now = time.time()
    removed = []
    try:
        entries = list(os.scandir(d))
    except OSError:
        return []
    for entry in entries:
        if not pattern.fullmatch(entry.name):
            continue
        with contextlib.suppress(OSError):
            st = entry.stat(follow_symlinks=False)
            if entry.is_file(follow_symlinks=False) and now - st.st_mtime > older_than_s:
                os.unlink(entry.path)
                removed.append(entry.name)
    return removed


def _discard(paths: Iterable[str]) -> None:
    for tmp in paths:
        with contextlib.suppress(OSError):
            os.unlink(tmp)


def atomic_write(path: str | os.PathLike[str], data: bytes | str) -> None:
    """Write ``data`` (text is UTF-8) to ``path`` through a temporary file and a rename
    (stale temporaries of the same name are removed first)."""
    target = Path(path)
    raw = data.encode("utf-8") if isinstance(data, str) else data
    remove_stale_temporaries(target.parent, [target.name])
    tmp = write_temporary(target, raw)
    try:
        os.replace(tmp, target)
    except BaseException:
        _discard([tmp])
        raise
    _fsync_dir(target.parent)


def _marker(directory: Path) -> dict[str, Any] | None:
    try:
        data = json.loads((directory / MARKER).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def claim_directory(path: str | os.PathLike[str], *, kind: str, force: bool = False) -> Path:
    """Make ``path`` ours for a ``kind`` of output (``run``, ``leaderboard``, ``redteam``).

    Raises ConfigError (one line) when the directory is another program's or another kind's,
    or cannot be written. Returns the directory.
    """
    from .constants import PACKAGE_VERSION as __version__

    out = Path(path)
    if out.exists() and not out.is_dir():
        raise ConfigError(f"--out {out} is a file, not a directory; choose another --out")
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ConfigError(f"cannot create output directory {out}: {exc.strerror or exc}; "
                          "choose another --out") from None
    mark = _marker(out)
    if not force:
        if mark is None and any(True for _ in out.iterdir()):
            raise ConfigError(
                f"output directory {out} is not empty and was not created by vocencebench "
                f"(no {MARKER} marker); choose another --out, or pass --force to write into it"
            )
        if mark is not None and mark.get("kind") != kind:
            raise ConfigError(
                f"output directory {out} holds a vocencebench {mark.get('kind')!r} output, "
                f"not a {kind!r}; choose another --out, or pass --force"
            )
    try:
        if mark is None or mark.get("kind") != kind:
            atomic_write(out / MARKER, json.dumps({"kind": kind, "vocencebench": __version__},
                                                  sort_keys=True) + "\n")
        else:  # a write probe: fail now, not after hours of work
            fd, probe = tempfile.mkstemp(prefix=".write-probe.", dir=out)
            os.close(fd)
            os.unlink(probe)
    except OSError as exc:
        raise ConfigError(f"output directory {out} is not writable: {exc.strerror or exc}; "
                          "choose another --out") from None
    return out


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def write_set(
    directory: str | os.PathLike[str],
    files: Mapping[str, bytes | str],
    *,
    manifest_name: str,
    manifest: Mapping[str, Any],
) -> Path:
    """Publish ``files`` (name → content) and then ``manifest_name`` holding ``manifest`` plus
    ``{"files": {name: sha256}}``; see the module docstring for the kill-safety argument. A
    write error (a full disk, a read-only file system) raises :func:`unwritable`'s one-line
    ConfigError before anything in the directory was replaced."""
    out = Path(directory)
    raw = {name: (c.encode("utf-8") if isinstance(c, str) else c) for name, c in files.items()}
    body = {**manifest, MANIFEST_KEY: {name: _sha256(b) for name, b in sorted(raw.items())}}
    text = json.dumps(body, indent=1, ensure_ascii=False, allow_nan=False) + "\n"
    # Everything is rendered before the first byte is written: a rendering error leaves the
    # previous set untouched.
    with saving(out, "creating the directory"):
        out.mkdir(parents=True, exist_ok=True)
    remove_stale_temporaries(out, [*raw, manifest_name])
    # 1. Every byte on disk under temporary names: the only step that needs space.
    temps: dict[str, str] = {}
    doing, removed = "writing", None
    try:
        for name, data in [*raw.items(), (manifest_name, text.encode("utf-8"))]:
            doing = f"writing {name}"
            temps[name] = write_temporary(out / name, data)
        # 2. Renames only: the manifest goes first, the files, then the new manifest.
        doing = "renaming the files into place"
        with contextlib.suppress(FileNotFoundError):
            os.unlink(out / manifest_name)
        removed = manifest_name
        _fsync_dir(out)
        for name in raw:
            os.replace(temps[name], out / name)
            del temps[name]
        _fsync_dir(out)
        os.replace(temps[manifest_name], out / manifest_name)
        del temps[manifest_name]
    except OSError as exc:
        _discard(temps.values())
        raise unwritable(out, exc, doing, manifest=removed) from None
    except BaseException:
        _discard(temps.values())
        raise
    _fsync_dir(out)
    return out


def verify_set(directory: str | os.PathLike[str], *, manifest_name: str) -> list[str]:
    """Problems of the set in ``directory`` against its manifest (empty when consistent).

    A manifest without a ``files`` record (written before sets were recorded) verifies
    nothing and gives no problem.
    """
    out = Path(directory)
    try:
        body = json.loads((out / manifest_name).read_text(encoding="utf-8"))
    except FileNotFoundError:
        return [f"{out / manifest_name} is missing (an interrupted save?)"]
    except (OSError, ValueError) as exc:
        return [f"{out / manifest_name} cannot be read: {exc}"]
    record = body.get(MANIFEST_KEY) if isinstance(body, dict) else None
    if not isinstance(record, dict):
        return []
    problems = []
    for name, digest in sorted(record.items()):
        try:
            got = _sha256((out / name).read_bytes())
        except FileNotFoundError:
            problems.append(f"{name} is missing")
            continue
        if got != digest:
            problems.append(f"{name} has sha256 {got[:12]}…, {manifest_name} records "
                            f"{str(digest)[:12]}…")
    return problems
