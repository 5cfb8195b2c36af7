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
  (``run.json``) recording the sha256 of each. The manifest is removed first and written last,
  so after a kill at any instant the directory holds either the previous complete set, or no
  manifest at all (nothing claims the files belong together), or the new complete set.
  :func:`verify_set` checks a directory against its manifest.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from .errors import ConfigError

__all__ = ["MANIFEST_KEY", "MARKER", "atomic_write", "claim_directory", "verify_set",
           "write_set"]

#: Marker file of a directory vocencebench created (JSON: {"kind": ..., "vocencebench": ...}).
MARKER = ".vocencebench"
#: Key of the manifest object under which the sha256 of every file of the set is recorded.
MANIFEST_KEY = "files"


def _fsync_dir(directory: Path) -> None:
    with contextlib.suppress(OSError):  # not every filesystem lets a directory be opened
        fd = os.open(directory, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def atomic_write(path: str | os.PathLike[str], data: bytes | str) -> None:
    """Write ``data`` (text is UTF-8) to ``path`` through a temporary file and a rename."""
    target = Path(path)
    raw = data.encode("utf-8") if isinstance(data, str) else data
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(raw)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
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
    ``{"files": {name: sha256}}``; see the module docstring for the kill-safety argument."""
    out = Path(directory)
    out.mkdir(parents=True, exist_ok=True)
    raw = {name: (c.encode("utf-8") if isinstance(c, str) else c) for name, c in files.items()}
    body = {**manifest, MANIFEST_KEY: {name: _sha256(b) for name, b in sorted(raw.items())}}
    text = json.dumps(body, indent=1, ensure_ascii=False, allow_nan=False) + "\n"
    # Everything is rendered before the first byte is written: a rendering error leaves the
    # previous set untouched.
    with contextlib.suppress(FileNotFoundError):
        os.unlink(out / manifest_name)
    _fsync_dir(out)
    for name, data in raw.items():
        atomic_write(out / name, data)
    atomic_write(out / manifest_name, text)
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
