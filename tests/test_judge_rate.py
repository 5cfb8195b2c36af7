"""The client-side rate limit of the HTTP judge backends."""

from __future__ import annotations

import itertools
import json
import time
from concurrent.futures import ThreadPoolExecutor

import pytest

from judge_fakes import CLIP_X, CLIP_Y, Call, FakeJudgeServer, Reply, answer
from vocencebench.errors import ConfigError
from vocencebench.judge import Judge
from vocencebench.judge._backends import _RateLimiter


def test_limiter_reserves_consecutive_slots() -> None:
    lim = _RateLimiter()
    assert lim.delay() == 0.0  # no limit set
    lim.set(60.0)  # one request a second
    delays = [lim.delay() for _ in range(3)]
    assert delays[0] == pytest.approx(0.0, abs=0.05)
    assert delays[1] == pytest.approx(1.0, abs=0.05)
    assert delays[2] == pytest.approx(2.0, abs=0.05)
    with pytest.raises(ConfigError, match="requests_per_minute"):
        lim.set(0)


def test_requests_are_spaced_across_threads() -> None:
    starts: list[float] = []

    def respond(call: Call) -> Reply:
        starts.append(time.monotonic())
        return Reply(json.dumps(answer("A", 3, 1)))

    with FakeJudgeServer("openai", respond) as srv:
        judge = Judge.local(base_url=srv.url, model="m", requests_per_minute=600)  # 0.1 s
        assert judge.backend.requests_per_minute == pytest.approx(600)
        with ThreadPoolExecutor(4) as pool:
            list(pool.map(lambda _: judge.compare(
                text="t", instruction="i", audio_a=CLIP_X, audio_b=CLIP_Y, dimension="tone"),
                range(3)))
        judge.close()
    starts.sort()
    assert len(starts) == 6  # three comparisons, two orders each
    gaps = [b - a for a, b in itertools.pairwise(starts)]
    assert min(gaps) >= 0.08
