"""Reference norms that both the built-in systems and the probes read.

The probes score a clip against these tables (a pitch bucket is semitones from the typical F0
of the requested gender and age group), and the built-in systems aim at the same tables, so
the two can never drift apart. Sources are in ``docs/probes.md`` (Pitch). A leaf module: it
imports only the exception tree.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Final

from .errors import ConfigError

__all__ = ["AGE_GROUPS", "REFERENCE_F0_HZ", "age_group"]

#: Age groups (lower bound, years, inclusive) of a requested age: under 11 child, 11–16 teen,
#: 17–59 adult, 60 and over elderly.
AGE_GROUPS: Final[tuple[tuple[str, float], ...]] = (
    ("child", 0.0), ("teen", 11.0), ("adult", 17.0), ("elderly", 60.0),
)  # fmt: skip
#: Typical speaking F0 (Hz) by requested gender and age group, from published norms (sources
#: in docs/probes.md). Pitch buckets are semitones from this reference.
REFERENCE_F0_HZ: Final[Mapping[tuple[str, str], float]] = {
    ("male", "child"): 250.0, ("female", "child"): 250.0,
    ("male", "teen"): 170.0, ("female", "teen"): 220.0,
    ("male", "adult"): 110.0, ("female", "adult"): 200.0,
    ("male", "elderly"): 120.0, ("female", "elderly"): 185.0,
}  # fmt: skip


def age_group(age: str | float) -> str:
    """The age group (child, teen, adult, elderly) of a requested age in years."""
    try:
        years = float(age)
    except (TypeError, ValueError):
        raise ConfigError(f"requested age {age!r} is not a number of years") from None
    if not math.isfinite(years) or years < 0:
        raise ConfigError(f"requested age {age!r} must be a finite number of years ≥ 0")
    group = AGE_GROUPS[0][0]
    for name, lower in AGE_GROUPS:
        if years >= lower:
            group = name
    return group
