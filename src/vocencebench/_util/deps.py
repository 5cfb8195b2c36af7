"""Optional dependencies, imported where they are needed and only then.

Heavy packages (torch, transformers, faster-whisper, soundfile, Praat, dask...) belong to
extras. A component imports its package through :func:`require` when it is first used, so
``import vocencebench`` stays light and a missing extra is one clear
:class:`~vocencebench.errors.MissingDependencyError` naming the ``pip install`` that fixes it.
"""

from __future__ import annotations

import importlib
from importlib import metadata
from types import ModuleType

from ..errors import MissingDependencyError

__all__ = ["installed_version", "require"]


def require(module: str, what: str, extra: str, *, package: str | None = None) -> ModuleType:
    """The imported ``module`` (a dotted name), or MissingDependencyError when it cannot be
    imported: ``what`` needs the optional ``extra`` (``package``: the distribution(s) to name
    in the message)."""
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise MissingDependencyError(what, extra, package=package) from exc


def installed_version(dist: str) -> str:
    """The installed release of distribution ``dist``, or ``"missing"`` (for ``system_id``)."""
    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return "missing"
