"""The client-side rate limit of the HTTP layer, tested against an injected clock.

Nothing here measures wall-clock gaps: the limiter's clock and sleep are injected, so the
tests assert the slots it reserves, not how fast the machine happened to be.
"""

from __future__ import annotations

import json
import threading
from concurrent.futures import ThreadPoolExecutor

import pytest

from judge_fakes import CLIP_X, CLIP_Y, Call, FakeJudgeServer, Reply, answer
from vocencebench._util.retry import RateLimiter
from vocencebench.errors import ConfigError
from vocencebench.judge import Judge


class FakeClock:
    """A monotonic clock that moves only when the code under test sleeps."""

    def __init__(self, start: float = 100.0) -> None:
        self.now = start
        self.slept: list[float] = []
        self._lock = threading.Lock()

    def __call__(self) -> float:
        with self._lock:
            return self.now

    def sleep(self, seconds: float) -> None:
        with self._lock:
            self.slept.append(seconds)


def test_limiter_reserves_consecutive_slots() -> None:
    clock = FakeClock()
    lim = RateLimiter(clock=clock, sleep=clock.sleep)
    assert lim.reserve() == 0.0 and lim.requests_per_minute is None  # no limit set
    lim.set(60.0)  # one request a second
    assert [lim.reserve() for _ in range(3)] == [0.0, 1.0, 2.0]
    clock.now += 10.0  # idle for a while: the next request may start at once
    assert lim.reserve() == 0.0 and lim.reserve() == 1.0
    for bad in (0, -5, float("nan"), float("inf"), True):
        with pytest.raises(ConfigError, match="requests_per_minute"):
            lim.set(bad)  # type: ignore[arg-type]


def test_acquire_sleeps_with_the_injected_sleep() -> None:
    clock = FakeClock()
    lim = RateLimiter(120.0, clock=clock, sleep=clock.sleep)  # every 0.5 s
    waits = [lim.acquire() for _ in range(4)]
    assert waits == [0.0, 0.5, 1.0, 1.5]
    assert clock.slept == [0.5, 1.0, 1.5]  # no sleep for the first slot


def test_slots_are_distinct_across_threads() -> None:
    clock = FakeClock()
    lim = RateLimiter(600.0, clock=clock, sleep=clock.sleep)  # every 0.1 s
    with ThreadPoolExecutor(8) as pool:
        waits = sorted(pool.map(lambda _: lim.acquire(), range(40)))
    # 40 threads racing for slots on a frozen clock: each got its own, 0.1 s apart
    assert waits == pytest.approx([k * 0.1 for k in range(40)])


def test_requests_are_spaced_across_threads() -> None:
    """The judge's HTTP requests go through the limiter: 6 requests from 4 threads reserve
    6 distinct slots 0.1 s apart (the slots are read from the injected clock)."""
    clock = FakeClock()

    def respond(call: Call) -> Reply:
        return Reply(json.dumps(answer("A", 3, 1)))

    with FakeJudgeServer("openai", respond) as srv:
        judge = Judge.local(base_url=srv.url, model="m", requests_per_minute=600,
                            sleep=clock.sleep)
        backend = judge.backend
        assert backend.requests_per_minute == pytest.approx(600)  # type: ignore[attr-defined]
        backend._limiter._clock = clock  # type: ignore[attr-defined]
        with ThreadPoolExecutor(4) as pool:
            list(pool.map(lambda _: judge.compare(
                text="t", instruction="i", audio_a=CLIP_X, audio_b=CLIP_Y, dimension="tone"),
                range(3)))
        judge.close()
    assert len(srv.calls) == 6  # three comparisons, two orders each
    assert sorted(clock.slept) == pytest.approx([0.1, 0.2, 0.3, 0.4, 0.5])


def test_rate_limit_comes_from_the_options() -> None:
    judge = Judge.local("http://127.0.0.1:9", "m", requests_per_minute=30)
    assert judge.backend.requests_per_minute == 30  # type: ignore[attr-defined]
    judge.backend.set_rate_limit(None)  # type: ignore[attr-defined]
    assert judge.backend.requests_per_minute is None  # type: ignore[attr-defined]
    with pytest.raises(ConfigError, match="requests_per_minute"):
        Judge.local("http://127.0.0.1:9", "m", requests_per_minute=0)
