"""Optional dependencies, imported where they are needed and only then.

Heavy packages (torch, transformers, faster-whisper, soundfile, Praat, dask...) belong to
extras. A component imports its package through :func:`require` when it is first used, so
``import vocencebench`` stays light and a missing extra is one clear
:class:`~vocencebench.errors.MissingDependencyError` naming the ``pip install`` that fixes it.

An import that fails because it was *interrupted* (Ctrl-C or SIGTERM landing while an
extension module initialises: Praat's module reports the ``KeyboardInterrupt`` raised in its
start-up as an ``ImportError``) is not a missing extra: :func:`require` raises
``KeyboardInterrupt`` for it, so the command line says "interrupted" (exit status 130), never
"pip install".
"""

from __future__ import annotations

import importlib
import sys
from importlib import metadata
from types import ModuleType

from ..errors import MissingDependencyError

__all__ = ["installed_version", "interrupted_import", "require"]


def require(module: str, what: str, extra: str, *, package: str | None = None) -> ModuleType:
    """The imported ``module`` (a dotted name), or MissingDependencyError when it cannot be
    imported: ``what`` needs the optional ``extra`` (``package``: the distribution(s) to name
    in the message). An import that failed because it was interrupted
    (:func:`interrupted_import`) raises ``KeyboardInterrupt`` instead."""
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        if interrupted_import(exc):
            raise KeyboardInterrupt(f"interrupted while importing {module}") from exc
        raise MissingDependencyError(what, extra, package=package) from exc


def interrupted_import(exc: BaseException) -> bool:
    """Whether the failed import ``exc`` is an interruption rather than a missing package: a
    ``KeyboardInterrupt`` in its chain (``__cause__`` / ``__context__``), an extension that
    reports one as its own error (pybind11 modules such as parselmouth: ``ImportError:
    KeyboardInterrupt: signal 15 ...``), or a command line that has received SIGINT, SIGTERM
    or SIGHUP (:func:`vocencebench.cli.interrupt_received`; that module is only asked when it
    is loaded)."""
    seen: set[int] = set()
    link: BaseException | None = exc
    while link is not None and id(link) not in seen:
        seen.add(id(link))
        if isinstance(link, KeyboardInterrupt) or (
                isinstance(link, ImportError) and str(link).startswith("KeyboardInterrupt")):
            return True
        link = link.__cause__ or link.__context__
    cli = sys.modules.get("vocencebench.cli")
    received = getattr(cli, "interrupt_received", None) if cli is not None else None
    return bool(received()) if callable(received) else False


def installed_version(dist: str) -> str:
    """The installed release of distribution ``dist``, or ``"missing"`` (for ``system_id``)."""
    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return "missing"
