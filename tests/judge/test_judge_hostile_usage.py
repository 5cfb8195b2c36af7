"""A judge server whose answers are valid but whose bookkeeping is not (the third round's
judge audit): token counts that are NaN, negative, text or absurd, no usage at all, retry
delays that are negative or NaN, an HTTP date without a zone, content sent as parts, and one
judge serving two runs. Each case failed before its fix; servers run on 127.0.0.1."""

from __future__ import annotations

import json
import math
import os
import time
from collections.abc import Iterator
from typing import Any

import pytest

import vocencebench as vb
from judge_fakes import (
    CLIP_X,
    KEY,
    Call,
    FakeJudgeServer,
    Reply,
    answer,
    compare_once,
    gemini_usage_reply,
    prefers,
)
from vocencebench.errors import BudgetExceededError
from vocencebench.judge import Judge, Price

TEXT = "The old lighthouse stood watch over the restless grey sea."
INSTR = "a calm elderly British man, speaking slowly and warmly"
PRICE = Price(input=1.0, output=4.0, source="test")
NOW = 1_900_000_000.0


def _gemini(meta: Any) -> Any:
    return lambda call: gemini_usage_reply(meta)


def _judge(srv: FakeJudgeServer, **kw: Any) -> Judge:
    kw.setdefault("sleep", lambda s: None)
    return Judge.gemini("gemini-2.5-flash", KEY, base_url=srv.url, price=PRICE, **kw)


_compare = compare_once


@pytest.mark.parametrize("meta", [
    {"promptTokenCount": float("nan"), "candidatesTokenCount": 10},
    {"promptTokenCount": float("inf"), "candidatesTokenCount": 10},
    {"promptTokenCount": 10**400, "candidatesTokenCount": 10},
    {"promptTokenCount": -5000, "candidatesTokenCount": -9000},
    {"promptTokenCount": "1200", "candidatesTokenCount": 10},
    {"promptTokenCount": 1200, "candidatesTokenCount": 10,
     "promptTokensDetails": [{"modality": "AUDIO", "tokenCount": -1}]},
    ...,  # no usageMetadata at all
], ids=["nan", "inf", "huge", "negative", "text", "negative-audio", "absent"])
def test_a_valid_answer_with_unusable_counts_is_kept_and_metered_at_the_estimate(
        meta: Any) -> None:
    with FakeJudgeServer("gemini", _gemini(meta)) as srv, _judge(srv) as judge:
        v = _compare(judge)
        usage, cost = judge.backend.usage, judge.backend.cost_usd()  # type: ignore[attr-defined]
        calls = len(srv.calls)
    assert v.winner == "a" and calls == 1  # the answer was good: kept, not asked again
    assert (usage.calls, usage.unreported, usage.failures) == (1, 1, 0)
    assert cost is not None and math.isfinite(cost) and cost > 0  # never $0, never negative
    assert usage.to_dict()["unreported"] == 1


def test_well_reported_counts_leave_the_usage_record_as_it_was() -> None:
    meta = {"promptTokenCount": 1200, "candidatesTokenCount": 80}
    with FakeJudgeServer("gemini", _gemini(meta)) as srv, _judge(srv) as judge:
        _compare(judge)
        usage = judge.backend.usage  # type: ignore[attr-defined]
    assert usage.unreported == 0 and "unreported" not in usage.to_dict()
    assert (usage.prompt_tokens, usage.output_tokens) == (1200, 80)


@pytest.mark.parametrize("meta", [{"promptTokenCount": -10**6, "candidatesTokenCount": -10**6},
                                  ...], ids=["negative", "absent"])
def test_bad_counts_cannot_switch_the_spend_cap_off(meta: Any) -> None:
    """Negative counts made the cost negative and let every call through; an answer without
    usage cost $0 and was not counted."""
    sent = 0
    with FakeJudgeServer("gemini", _gemini(meta)) as srv, \
            _judge(srv, spend_cap_usd=0.02, max_output_tokens=2048) as judge:
        with pytest.raises(BudgetExceededError):
            for _ in range(20):
                _compare(judge)
                sent += 1
        cost = judge.backend.cost_usd()  # type: ignore[attr-defined]
        calls = len(srv.calls)
    assert sent < 20 and calls == sent and cost is not None and 0 < cost <= 0.02


@pytest.mark.parametrize("delay", [{"seconds": -30}, {"seconds": "nan"}],
                         ids=["negative", "nan"])
def test_a_gemini_retry_delay_no_wait_can_be_is_not_slept(delay: dict[str, Any]) -> None:
    slept: list[float] = []
    info = {"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": delay}
    busy = Reply(status=429, body={"error": {"code": 429, "status": "RESOURCE_EXHAUSTED",
                                             "message": "quota", "details": [info]}})

    def respond(call: Call) -> Reply:
        return busy if call.index == 0 else prefers(CLIP_X)(call)

    with FakeJudgeServer("gemini", respond) as srv, \
            _judge(srv, sleep=slept.append, jitter=0.0) as judge:
        v = _compare(judge)
    assert v.winner == "a" and len(srv.calls) == 2
    assert slept and all(math.isfinite(s) and s >= 0 for s in slept), slept


@pytest.fixture
def new_york() -> Iterator[None]:
    before = os.environ.get("TZ")
    os.environ["TZ"] = "America/New_York"
    time.tzset()
    try:
        yield
    finally:
        if before is None:
            os.environ.pop("TZ", None)
        else:
            os.environ["TZ"] = before
        time.tzset()


def test_an_asctime_retry_after_is_read_as_gmt(new_york: None) -> None:
    """RFC 9110's third date form carries no zone; it was read as local time (18 030 s in
    New York for a 30 s wait, then refused as too long)."""
    slept: list[float] = []
    when = time.asctime(time.gmtime(NOW + 30))
    busy = Reply(status=429, body={"error": {"message": "slow down"}},
                 headers={"Retry-After": when})

    def respond(call: Call) -> Reply:
        return busy if call.index == 0 else prefers(CLIP_X)(call)

    with FakeJudgeServer("gemini", respond) as srv, \
            _judge(srv, sleep=slept.append, jitter=0.0, wall_clock=lambda: NOW) as judge:
        v = _compare(judge)
    assert v.winner == "a" and slept == [30.0]


def test_openai_content_as_a_list_of_parts_is_read() -> None:
    def respond(call: Call) -> Reply:
        return Reply(body={"choices": [{"index": 0, "finish_reason": "stop", "message": {
            "role": "assistant", "content": [
                {"type": "text", "text": json.dumps(answer("A", 3, 1))}]}}],
            "usage": {"prompt_tokens": 900, "completion_tokens": 60, "total_tokens": 960}})

    with FakeJudgeServer("openai", respond) as srv, \
            Judge.local(srv.url + "/v1", "omni", KEY, sleep=lambda s: None) as judge:
        v = _compare(judge)
        calls = len(srv.calls)
    assert v.winner == "a" and calls == 1  # read once, not re-asked as "empty"


def test_each_run_reports_its_own_judge_usage_and_cost() -> None:
    """One judge serving two runs: the second run's run.json carried both runs' totals."""
    items = vb.load_benchmark("benchmark_v1")[:2]
    meta = {"promptTokenCount": 1000, "candidatesTokenCount": 50}
    with FakeJudgeServer("gemini", _gemini(meta)) as srv, _judge(srv) as judge:
        runs, sent = [], []
        for flat, follow in (("espeak-flat", "espeak-follow"), ("espeak-follow", "espeak-flat")):
            before = len(srv.calls)
            runs.append(vb.benchmark(items, vb.EspeakSystem(flat), vb.EspeakSystem(follow),
                                     judge, labels=("a", "b"), workers=1, progress=False,
                                     canaries=False, probes=None))
            sent.append(len(srv.calls) - before)
    for h, n in zip(runs, sent, strict=True):
        assert n > 0 and h.metadata["judge_usage"]["calls"] == n
        assert h.metadata["judge_cost_usd"] == pytest.approx(n * PRICE.cost(
            vb.judge.CallUsage(prompt_tokens=1000, output_tokens=50)))


def test_a_key_the_model_echoes_in_its_answer_is_masked_before_it_is_kept() -> None:
    def respond(call: Call) -> Reply:
        key = call.headers.get("x-goog-api-key", "")
        text = json.dumps(answer("A", 3, 1) | {"analysis_a": f"your key is {key}"})
        return Reply(text=text + f" {key}", usage={"prompt": 900, "output": 60})

    with FakeJudgeServer("gemini", respond) as srv, _judge(srv) as judge:
        v = _compare(judge)
    assert "your key is [REDACTED]" in v.reasoning_a
    assert all(KEY not in r and KEY[:10] not in r for r in (*v.raw, v.reasoning_a))
