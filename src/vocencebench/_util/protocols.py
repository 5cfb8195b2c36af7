"""Checking a component against the protocol it is used through, before any work.

A run calls its instruments (probe set, transcriber, judge) through small protocols; a
missing or misspelt method would otherwise fail mid-run. :func:`check_component` checks one
component once, up front, with a :class:`~vocencebench.errors.ConfigError` that names every
member it lacks.
"""

from __future__ import annotations

from ..errors import ConfigError

__all__ = ["check_component", "missing_members"]


def missing_members(obj: object, proto: type) -> list[str]:
    """The members of protocol ``proto`` that ``obj`` lacks (for an error that names them)."""
    names = [*getattr(proto, "__annotations__", {}),
             *(n for n in vars(proto) if not n.startswith("_") or n == "__call__")]
    return [n for n in dict.fromkeys(names) if not hasattr(obj, n)]


def check_component(obj: object, proto: type, what: str, hint: str) -> None:
    """ConfigError unless ``obj`` (the run's ``what``) has every member of ``proto``; checked
    once, before a run starts, so a misspelt hook fails there and not mid-run."""
    if isinstance(obj, proto):
        return
    missing = missing_members(obj, proto)
    raise ConfigError(f"{what} {type(obj).__name__} is missing {', '.join(missing) or '?'}; "
                      f"{hint}")
