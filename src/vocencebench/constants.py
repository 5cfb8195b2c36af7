"""Every frozen number of the scoring rule, defined once.

A leaf module: it imports nothing, and every other module may import it. Changing any value
here changes verdicts, so each one is part of the published method (``docs/methodology.md``)
and pinned by golden tests. Units are in each comment.
"""

from __future__ import annotations

from typing import Final

#: The names of the decision rule's numbers, which :mod:`vocencebench.decide` serves too
#: (they were published there before this module held them).
RULE_NUMBERS: Final = (
    "ALPHA",
    "BOOTSTRAP_N",
    "BOOTSTRAP_SEED",
    "EPSILON",
    "MARGIN_FLOOR",
    "MARGIN_SCALE",
    "PROJECT_SEED",
    "WER_THRESHOLD",
)

__all__ = [
    *RULE_NUMBERS,
    "AGE_TOLERANCE_YEARS",
    "COMPOSITE_TOLERANCE",
    "PACKAGE_VERSION",
    "RUBRIC_MAX",
    "RULE_NUMBERS",
]

#: The installed package's version (also ``vocencebench.__version__``); cache rows and
#: output markers record it.
PACKAGE_VERSION: Final = "0.1.0"

#: The project seed, the one seed literal: the bootstrap's stream starts from it, and so do
#: the project's other seeded draws (eSpeak's and hibari's noise, the canaries' noise, the
#: red-team attacks), whose shipped clips and golden tests depend on its value.
PROJECT_SEED: Final = 3151662
#: Fixed bootstrap seed (PCG64): the project seed.
BOOTSTRAP_SEED: Final = PROJECT_SEED
#: Bootstrap resamples.
BOOTSTRAP_N: Final = 2000
#: One-sided level: the LCB is the 100·α-th percentile of the resampled means.
ALPHA: Final = 0.05

#: Floor inside the log of the geometric mean (a zero dimension still collapses S to ~0).
EPSILON: Final = 0.01
#: Intelligibility gate: WER (a fraction) ≤ this passes (g = 1), above fails (g = 0).
WER_THRESHOLD: Final = 0.15

#: Lowest decision margin on the [0, 1] scale, just under one comparison-MOS JND (≈ 0.017).
MARGIN_FLOOR: Final = 0.015
#: The margin grows as this share of the incumbent's headroom to a perfect score.
MARGIN_SCALE: Final = 0.10

#: Full credit within ± this many years of the requested age; zero beyond twice that.
AGE_TOLERANCE_YEARS: Final = 8.0
#: Judge rubric scores run 0..RUBRIC_MAX (integers); a judged d is score / RUBRIC_MAX.
RUBRIC_MAX: Final = 3
#: How far (absolute, on the [0, 1] scale) a published S may lie from the S that its own d
#: and gate give by the rule before ``decide`` and ``report`` refuse it: room for another
#: implementation's rounding (exp, log and the sum in another language), far below any edit
#: that could move a verdict. The same bound applies to the numbers of a recomputed Decision.
COMPOSITE_TOLERANCE: Final = 1e-9
