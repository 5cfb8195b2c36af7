"""The one place the tests make seeded random generators.

Tests take the ``rng`` fixture (tests/conftest.py): a fresh generator seeded with
:data:`TEST_SEED`, so a test's random input never depends on which tests ran before it. A
test that needs several independent streams, or whose golden numbers were computed with
another seed, takes ``rng_factory`` and passes that seed (``rng_factory(7)``). Helpers that
cannot take a fixture (realspeech.py, synthetic_run.py, per-seed clip builders) call
:func:`make_rng` with their own seed argument.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

import numpy as np

#: The tests' default seed: the project's seed (vocencebench.constants.PROJECT_SEED), written
#: out so that a change there cannot move any test's input.
TEST_SEED: Final = 3151662


def make_rng(seed: int | Sequence[int] = TEST_SEED) -> np.random.Generator:
    """A NumPy PCG64 generator seeded with ``seed`` (an int or a sequence of ints)."""
    return np.random.default_rng(seed)
