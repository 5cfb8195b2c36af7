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
    "AGREE_BOOTSTRAP_N",
    "AGREE_ITEMS",
    "AGREE_SEED",
    "EARLY_STOP_BATCH",
    "EARLY_STOP_SLACK",
    "JUDGE_ORDER_SEED",
    "JUDGE_SWAP_WARNING",
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

# -- the judge's economics and audit (docs/judge.md); none of these changes a verdict

#: Seed of the order in which ``--stop-when-decided`` judges the items: item i (corpus
#: position, 0-based) gets the key ``raw[i]`` = the i-th 64-bit output of
#: ``numpy.random.PCG64(JUDGE_ORDER_SEED).random_raw``, and items are judged in increasing
#: (key, i). Derived from the project seed (its last digit + 1) so the order is independent of
#: the bootstrap's own stream.
JUDGE_ORDER_SEED: Final = PROJECT_SEED + 1
#: Items judged per batch under ``--stop-when-decided``: the stopping rule is evaluated after
#: every complete batch of the seeded order (and once before the first), never mid-batch, so
#: the set of judged items does not depend on thread timing.
EARLY_STOP_BATCH: Final = 16
#: Safety gap on the [0, 1] scale: a verdict is called certain only when its bound clears the
#: threshold by more than this. It is about 10⁶ times the largest rounding error of the
#: arithmetic behind a bound (a few ulps of numbers ≤ 1), so rounding can never make an early
#: verdict differ from the full run's; the price is judging slightly more than strictly needed.
EARLY_STOP_SLACK: Final = 1e-9
#: A judge whose order-swap disagreement rate on a dimension exceeds this share gets a
#: WARNING line in the report (the winner changed with the presentation order).
JUDGE_SWAP_WARNING: Final = 0.35
#: ``vocencebench judge agree``: items re-judged by default, the seed that picks them (and
#: resamples them for the κ interval), and the bootstrap resamples of that interval.
AGREE_ITEMS: Final = 50
AGREE_SEED: Final = PROJECT_SEED + 2
AGREE_BOOTSTRAP_N: Final = 2000
