"""Shared test set-up: tests never reach the network or a model hub; seeded random numbers.

Layout by area: ``unit/<stage>/`` (foundations, text, corpus, synthesis, gate, probes,
decision, reports, board, gaming), ``judge/``, ``pipeline/``, ``cli/`` and ``acceptance/``. The
shared helpers (``judge_fakes.py``, ``realspeech.py``, ``seeding.py``, ``repo_paths.py``...) and
``data/`` stay in tests/, importable from every folder (``pythonpath`` in pyproject.toml). The
test folders are not packages, so every test file's name must be unique across them. Tests
marked ``slow`` run in ``make test`` only; ``make test-fast`` is ``pytest -m "not slow"``.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator, Sequence

import numpy as np
import pytest

from seeding import TEST_SEED, make_rng

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("HF_DATASETS_OFFLINE", "1")


@pytest.fixture(autouse=True, scope="session")
def user_cache_dir(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """vocencebench's user cache (the remembered model digests of ``_asr.digest``) is a folder
    of the test session, never the home of whoever runs the tests; subprocesses inherit it."""
    old = os.environ.get("VOCENCE_CACHE_DIR")
    os.environ["VOCENCE_CACHE_DIR"] = str(tmp_path_factory.mktemp("user-cache"))
    yield
    if old is None:
        os.environ.pop("VOCENCE_CACHE_DIR", None)
    else:
        os.environ["VOCENCE_CACHE_DIR"] = old


@pytest.fixture
def rng() -> np.random.Generator:
    """A fresh NumPy generator seeded with ``seeding.TEST_SEED`` (3151662) for each test."""
    return make_rng(TEST_SEED)


@pytest.fixture
def rng_factory() -> Callable[..., np.random.Generator]:
    """``rng_factory(seed=TEST_SEED)``: a new independent generator per call, for tests that
    need several streams or whose golden values were computed with a seed of their own."""

    def make(seed: int | Sequence[int] = TEST_SEED) -> np.random.Generator:
        return make_rng(seed)

    return make
