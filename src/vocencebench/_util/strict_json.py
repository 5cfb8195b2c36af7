"""JSON from outside, read so that every way it can be malformed is a ``ValueError``.

``json.loads`` raises ``RecursionError`` on input nested past the parser's depth ("[[[[…",
10⁵ deep), which escapes every ``except ValueError`` of a reader and ends a run with a
traceback; and a key given twice silently keeps its last value. :func:`loads` turns the first
into :class:`NestedTooDeepError` and, with ``unique_keys=True``, refuses the second with
:class:`DuplicateKeyError` (both ``ValueError``, as ``json.JSONDecodeError`` and the
"integer of over 4 300 digits" error already are). Callers word their own messages.
"""

from __future__ import annotations

import json
from typing import Any

__all__ = ["DuplicateKeyError", "NestedTooDeepError", "loads"]


class NestedTooDeepError(ValueError):
    """The JSON nests deeper than the parser can follow."""


class DuplicateKeyError(ValueError):
    """A JSON object gives ``key`` twice (which value counts would be a guess)."""

    def __init__(self, key: str) -> None:
        super().__init__(f"key {key!r} is given twice")
        self.key = key


def _unique(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    obj: dict[str, Any] = {}
    for key, value in pairs:
        if key in obj:
            raise DuplicateKeyError(key)
        obj[key] = value
    return obj


def loads(text: str | bytes, *, unique_keys: bool = False) -> Any:
    """``json.loads(text)``; every malformed input a ``ValueError`` (module docstring)."""
    try:
        return json.loads(text, object_pairs_hook=_unique if unique_keys else None)
    except RecursionError:
        raise NestedTooDeepError("JSON nested too deeply") from None
