"""The spend cap holds against what a provider really bills (the fourth judge audit): an
answer longer than the old 2 048-token projection, a usage object that is present but empty,
and attempts whose answers were lost on the way (cut short, too slow) but billed all the
same. Each test failed before its fix; servers run on 127.0.0.1."""

from __future__ import annotations

import json
from typing import Any

import pytest

from judge_fakes import KEY, Call, FakeJudgeServer, Reply, answer, compare_once, gemini_usage_reply
from vocencebench.errors import BudgetExceededError, ConfigError
from vocencebench.judge import Judge, Price

#: Gemini 3.1 Pro's rates (USD per million tokens).
PRICE = Price(input=2.0, output=12.0, source="test")


_gemini_reply = gemini_usage_reply


def _judge(srv: FakeJudgeServer, **kw: Any) -> Judge:
    kw.setdefault("sleep", lambda s: None)
    return Judge.gemini("gemini-3.1-pro-preview", KEY, base_url=srv.url, price=PRICE, **kw)


_compare = compare_once


def _billed(calls: int, meta: dict[str, int]) -> float:
    """What the provider charges for ``calls`` answers with these counts (USD)."""
    out = meta.get("candidatesTokenCount", 0) + meta.get("thoughtsTokenCount", 0)
    return calls * (meta["promptTokenCount"] * 2.0 + out * 12.0) / 1e6


def _spend_until_refused(judge: Judge, most: int = 40) -> int:
    answered = 0
    with pytest.raises(BudgetExceededError, match="spend cap"):
        for _ in range(most):
            _compare(judge)
            answered += 1
    return answered


def test_a_spend_cap_without_an_answer_ceiling_is_refused_before_any_request() -> None:
    # Nothing bounds one answer's cost without max_output_tokens: a cap cannot be kept.
    for make in (lambda **kw: Judge.gemini("gemini-3.1-pro-preview", KEY, **kw),
                 lambda **kw: Judge.local("http://127.0.0.1:9", "omni", price=PRICE, **kw)):
        with pytest.raises(ConfigError, match=r"max_output_tokens=N \(--judge-max-output-"):
            make(spend_cap_usd=5.0)
    Judge.gemini("gemini-3.1-pro-preview", KEY, spend_cap_usd=5.0, max_output_tokens=8192)


def test_the_cap_reserves_the_whole_answer_ceiling_so_a_long_answer_cannot_cross_it() -> None:
    # A thinking model that uses 20 000 of its 32 768 output tokens: $0.2415 an answer. The
    # old projection assumed 2 048 output tokens (~$0.03) and let a call through under a
    # $0.10 cap; that one call was metered at $0.2415, 2.4 times the cap.
    meta = {"promptTokenCount": 1500, "candidatesTokenCount": 120, "thoughtsTokenCount": 20_000}
    with FakeJudgeServer("gemini", lambda c: _gemini_reply(meta)) as srv:
        with _judge(srv, spend_cap_usd=0.10, max_output_tokens=32_768) as judge:
            with pytest.raises(BudgetExceededError, match="next call up to"):
                _compare(judge)
            assert srv.calls == [] and judge.backend.cost_usd() == 0.0  # type: ignore[attr-defined]
        with _judge(srv, spend_cap_usd=1.0, max_output_tokens=32_768) as judge:
            answered = _spend_until_refused(judge)
            cost = judge.backend.cost_usd()  # type: ignore[attr-defined]
        assert answered == len(srv.calls) >= 1
        assert cost == pytest.approx(_billed(answered, meta)) and cost <= 1.0


@pytest.mark.parametrize("meta", [{}, {"totalTokenCount": 20_000},
                                  {"promptTokenCount": 1500},
                                  {"promptTokenCount": None, "candidatesTokenCount": None}],
                         ids=["empty", "total-only", "no-answer-count", "nulls"])
def test_a_usage_object_without_counts_is_metered_at_the_estimate_not_as_free(
        meta: dict[str, Any]) -> None:
    # `usageMetadata: {}` was billed $0 and never stopped a run (40 calls under a $0.20 cap).
    with FakeJudgeServer("gemini", lambda c: _gemini_reply(meta)) as srv, \
            _judge(srv, spend_cap_usd=0.20, max_output_tokens=2048) as judge:
        answered = _spend_until_refused(judge)
        usage = judge.backend.usage  # type: ignore[attr-defined]
        cost = judge.backend.cost_usd()  # type: ignore[attr-defined]
    assert answered == usage.calls == usage.unreported == len(srv.calls) < 40
    assert 0 < cost <= 0.20


def test_an_openai_usage_object_without_counts_is_metered_at_the_estimate() -> None:
    def respond(call: Call) -> Reply:
        return Reply(body={"choices": [{"index": 0, "finish_reason": "stop", "message": {
            "role": "assistant", "content": json.dumps(answer("A", 3, 1))}}], "usage": {}})

    with FakeJudgeServer("openai", respond) as srv, \
            Judge.local(srv.url, "omni", price=PRICE, spend_cap_usd=0.10,
                        max_output_tokens=2048, sleep=lambda s: None) as judge:
        answered = _spend_until_refused(judge)
        usage = judge.backend.usage  # type: ignore[attr-defined]
    assert answered == usage.unreported == len(srv.calls) < 40
    assert 0 < judge.backend.cost_usd() <= 0.10  # type: ignore[attr-defined]


def test_attempts_whose_answer_was_lost_on_the_way_are_metered_because_they_are_billed(
        ) -> None:
    # Five of every six answers are cut short of their Content-Length: the provider generated
    # (and bills) each one, but only the sixth, retried, answer was metered: 12 billed
    # requests ($0.204) were metered at $0.034 under a $0.05 cap.
    meta = {"promptTokenCount": 1500, "candidatesTokenCount": 120, "thoughtsTokenCount": 1000}
    sent = 0

    def respond(call: Call) -> Reply:
        nonlocal sent
        sent += 1
        reply = _gemini_reply(meta)
        return reply if sent % 6 == 0 else Reply(body=reply.body, truncate_to=40)

    with FakeJudgeServer("gemini", respond) as srv, \
            _judge(srv, spend_cap_usd=0.05, max_output_tokens=2048) as judge:
        with pytest.raises(BudgetExceededError, match="spend cap"):
            for _ in range(10):
                _compare(judge)
        usage = judge.backend.usage  # type: ignore[attr-defined]
        cost = judge.backend.cost_usd()  # type: ignore[attr-defined]
        requests = len(srv.calls)
    assert usage.calls == requests  # every request is metered, the lost ones included
    assert usage.unreported == requests - requests // 6  # the lost ones at the estimate
    assert cost <= 0.05
    assert cost >= _billed(requests, meta)  # at least what the provider charged


def test_a_200_whose_envelope_is_not_json_is_metered() -> None:
    with FakeJudgeServer("gemini", lambda c: Reply(raw=b"<html>gateway</html>")) as srv, \
            _judge(srv, max_output_tokens=2048, max_invalid_retries=1) as judge:
        with pytest.raises(Exception, match="not JSON"):
            _compare(judge)
        usage = judge.backend.usage  # type: ignore[attr-defined]
    assert usage.calls == usage.unreported == len(srv.calls) == 2


def test_an_envelope_nested_past_the_parser_is_an_answer_error_not_a_crash() -> None:
    deep = b"[" * 100_000 + b"]" * 100_000
    with FakeJudgeServer("gemini", lambda c: Reply(raw=deep)) as srv, \
            _judge(srv, max_output_tokens=2048, max_invalid_retries=0) as judge, \
            pytest.raises(Exception, match="not JSON") as info:
        _compare(judge)
    assert not isinstance(info.value, RecursionError)
