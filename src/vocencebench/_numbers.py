"""Type tests for numbers that come from users, files and judges.

Python's ``bool`` is an ``int``: ``True`` passes ``isinstance(v, int)`` and compares equal
to 1, so a check written with ``isinstance`` alone accepts ``workers=True`` or a gate of
``true`` in a scores file. Every such check in the package goes through these predicates,
which refuse a bool, so the trap is closed in one place (tests/unit/test_layout.py fails
on an ``isinstance(v, int ...)`` check, or an ``isinstance(v, bool)`` clause of a condition,
written anywhere else in the package). Each caller keeps its own bounds and its own error
message, which names the item and the problem.
"""

from __future__ import annotations

import math
from typing import TypeGuard

__all__ = [
    "is_desirability",
    "is_finite_number",
    "is_gate_value",
    "is_real_number",
    "is_whole_number",
]


def is_whole_number(value: object) -> TypeGuard[int]:
    """Whether ``value`` is a Python ``int`` and not a ``bool`` (no float, however whole)."""
    return isinstance(value, int) and not isinstance(value, bool)


def is_real_number(value: object) -> TypeGuard[int | float]:
    """Whether ``value`` is an ``int`` or a ``float`` and not a ``bool`` (NaN and ±inf
    included; see :func:`is_finite_number`)."""
    return isinstance(value, int | float) and not isinstance(value, bool)


def is_finite_number(value: object) -> TypeGuard[int | float]:
    """Whether ``value`` is a real number (:func:`is_real_number`) other than NaN or ±inf.
    Every int is finite: ``math.isfinite(10**400)`` would raise OverflowError, not answer."""
    return is_real_number(value) and (isinstance(value, int) or math.isfinite(value))


def is_desirability(value: object) -> TypeGuard[int | float]:
    """Whether ``value`` is a desirability: a finite number on [0, 1] (unitless)."""
    return is_finite_number(value) and 0.0 <= value <= 1.0


def is_gate_value(value: object) -> bool:
    """Whether ``value`` is what a sample's gate may hold: 0, 1 or None, not a bool (a
    number equal to 0 or 1 counts: ``1.0`` from a hand-edited scores file is a pass)."""
    return value is None or (not isinstance(value, bool) and value in (0, 1))
