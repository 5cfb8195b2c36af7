"""Fixtures shared by the corpus tests."""

from __future__ import annotations

import pytest

from vocencebench.corpus import load_benchmark
from vocencebench.schema import Item


@pytest.fixture(scope="module")
def shipped() -> list[Item]:
    """The frozen benchmark_v1 corpus, as shipped."""
    return load_benchmark("benchmark_v1")
