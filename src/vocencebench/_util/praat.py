"""Praat's random numbers, made repeatable for the calls that use them.

Some Praat commands draw random numbers — "Change gender" does (its PSOLA re-synthesis), so
the same call on the same sound gives different samples every time — from one generator per
process that Praat seeds from the clock. :func:`seeded` reseeds it (Praat's own
``random_initializeWithSeedUnsafelyButPredictably``) for the duration of a block, under a
process-wide lock so two threads cannot interleave, and then returns it to a clock seed.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator

_LOCK = threading.RLock()


@contextlib.contextmanager
def seeded(seed: int) -> Iterator[None]:
    """Run the block with Praat's random generator seeded by ``seed`` (0 ≤ seed < 2**31)."""
    from parselmouth.praat import run

    with _LOCK:
        run(f"random_initializeWithSeedUnsafelyButPredictably ({int(seed) % 2**31})")
        try:
            yield
        finally:
            run("random_initializeSafelyAndUnpredictably ()")
