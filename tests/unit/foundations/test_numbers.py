"""The one "a number, and not a bool" test (vocencebench._numbers) and a caller that used to
let a non-integer through."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest

import vocencebench as vb
from vocencebench._numbers import (
    is_desirability,
    is_finite_number,
    is_gate_value,
    is_real_number,
    is_whole_number,
)
from vocencebench.errors import ConfigError


@pytest.mark.parametrize("v", [0, 1, -3, 2**40])
def test_whole_numbers(v: object) -> None:
    assert is_whole_number(v) and is_real_number(v) and is_finite_number(v)


@pytest.mark.parametrize("v", [True, False, 1.0, "1", None, np.int64(1), Fraction(1)])
def test_not_whole_numbers(v: object) -> None:
    assert not is_whole_number(v)


def test_a_bool_is_no_number_at_all() -> None:
    for predicate in (is_whole_number, is_real_number, is_finite_number, is_desirability,
                      is_gate_value):
        assert not predicate(True) and not predicate(False), predicate.__name__


def test_real_and_finite_numbers() -> None:
    assert is_real_number(0.5) and is_real_number(np.float64(0.5))  # a float subclass
    assert is_real_number(math.nan) and is_real_number(-math.inf)
    assert not is_finite_number(math.nan) and not is_finite_number(math.inf)
    assert not is_real_number("0.5") and not is_real_number(None)
    assert is_finite_number(10**400)  # an answer, not math.isfinite's OverflowError


@pytest.mark.parametrize(("v", "ok"), [(0, True), (1, True), (0.0, True), (1.0, True),
                                       (0.25, True), (-0.0, True), (1.0000001, False),
                                       (-0.1, False), (math.nan, False), ("0.5", False)])
def test_desirability_is_a_finite_number_on_the_unit_interval(v: object, ok: bool) -> None:
    assert is_desirability(v) is ok


@pytest.mark.parametrize(("v", "ok"), [(None, True), (0, True), (1, True), (1.0, True),
                                       (2, False), (0.5, False), ("1", False)])
def test_gate_values(v: object, ok: bool) -> None:
    assert is_gate_value(v) is ok


@pytest.mark.parametrize("limit", [True, 2.5, "3", 0])
def test_redteam_refuses_a_limit_that_is_not_a_whole_number(limit: object) -> None:
    # 2.5 used to pass (2.5 < 1 is false) and "3" to fail with a TypeError from the comparison
    items = vb.load_benchmark()[:2]
    with pytest.raises(ConfigError, match="limit must be"):
        vb.redteam(items, limit=limit)  # type: ignore[arg-type]


def test_a_bool_is_not_a_desirability_or_a_composite() -> None:
    # both passed isinstance(v, int | float): composite({"pitch": True}) was 1.0
    from vocencebench.decide import composite
    from vocencebench.schema import SampleScore

    with pytest.raises(ConfigError, match="desirability True"):
        composite({"pitch": True, "pace": 0.5})
    assert composite({"pitch": 1.0, "pace": 0.25}) == 0.5
    with pytest.raises(ConfigError, match="S=True"):
        SampleScore("item-1", "a", True, {})  # type: ignore[arg-type]


@pytest.mark.parametrize("concurrency", [2.5, True, (1, True)])
def test_benchmark_refuses_a_concurrency_that_is_not_a_whole_number(concurrency: object
                                                                   ) -> None:
    # 2.5 used to fail with a TypeError from tuple(2.5)
    def never(text: str, instruction: str) -> bytes:
        raise AssertionError("no synthesis may start")

    with pytest.raises(ConfigError, match="concurrency must be"):
        vb.benchmark(vb.load_benchmark()[:1], never, never,
                     concurrency=concurrency)  # type: ignore[arg-type]
