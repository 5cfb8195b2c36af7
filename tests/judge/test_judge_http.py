"""Both judge backends against real HTTP servers on 127.0.0.1 that speak their APIs."""

from __future__ import annotations

import asyncio
import json
import logging
import threading
from typing import Any

import pytest

from judge_fakes import (
    CLIP_X,
    CLIP_Y,
    KEY,
    Call,
    FakeJudgeServer,
    Reply,
    answer,
    position_biased,
    prefers,
)
from vocencebench.errors import BudgetExceededError, JudgeError, JudgeResponseError
from vocencebench.judge import (
    GeminiBackend,
    Judge,
    MemoryVerdictCache,
    OpenAIChatBackend,
    Price,
)
from vocencebench.prompts import PROMPT_VERSION, combined_schema, verdict_schema

TEXT = "The old lighthouse stood watch over the restless grey sea."
INSTR = "a calm elderly British man, speaking slowly and warmly"
APIS = ["gemini", "openai"]
GEMINI_MODEL = "gemini-3.1-pro-preview"
LOCAL_MODEL = "Qwen/Qwen2.5-Omni-7B"


def make_backend(api: str, server: FakeJudgeServer, **kw: Any) -> Any:
    kw.setdefault("sleep", lambda s: None)
    kw.setdefault("jitter", 0.0)  # exact backoff steps (the jitter has its own test)
    if api == "gemini":
        return GeminiBackend(GEMINI_MODEL, KEY, base_url=server.url, **kw)
    return OpenAIChatBackend(server.url + "/v1", LOCAL_MODEL, KEY, **kw)


def make_judge(api: str, server: FakeJudgeServer, *, judge_kw: dict[str, Any] | None = None,
               **kw: Any) -> Judge:
    return Judge(make_backend(api, server, **kw), **(judge_kw or {}))


def compare(judge: Judge, **kw: Any) -> Any:
    args: dict[str, Any] = {"text": TEXT, "instruction": INSTR, "audio_a": CLIP_X,
                            "audio_b": CLIP_Y, "dimension": "tone"}
    args.update(kw)
    return judge.compare(**args)


def temperature(api: str, call: Call) -> float:
    body = call.body
    return float(body["generationConfig"]["temperature"] if api == "gemini"
                 else body["temperature"])


def sent_schema(api: str, call: Call) -> Any:
    if api == "gemini":
        cfg = call.body["generationConfig"]
        assert cfg["responseMimeType"] == "application/json"
        return cfg["responseJsonSchema"]
    rf = call.body["response_format"]
    assert rf["type"] == "json_schema" and rf["json_schema"]["strict"] is True
    return rf["json_schema"]["schema"]


@pytest.mark.parametrize("api", APIS)
def test_valid_answers_both_orders_and_request_shape(api: str) -> None:
    with FakeJudgeServer(api, prefers(CLIP_Y)) as srv, make_judge(api, srv) as judge:
        v = compare(judge)
    assert v.winner == "b" and v.consistent is True
    assert (v.score_a, v.score_b) == (1.0, 3.0)
    assert v.model == (GEMINI_MODEL if api == "gemini" else LOCAL_MODEL)
    assert v.prompt_version == PROMPT_VERSION and v.dimension == "tone"
    assert len(v.raw) == 2 and json.loads(v.raw[0])["winner"] == "B"
    # both orders sent, audio parts in the declared order
    assert [c.audio for c in srv.calls] == [[CLIP_X, CLIP_Y], [CLIP_Y, CLIP_X]]
    for c in srv.calls:
        assert temperature(api, c) == 0.0
        assert sent_schema(api, c) == verdict_schema()
        assert c.texts[0].rstrip().endswith("Clip A:") and c.texts[1] == "Clip B:"
        assert INSTR in c.texts[0] and TEXT in c.texts[0]
        if api == "gemini":
            assert c.path == f"/v1beta/models/{GEMINI_MODEL}:generateContent"
            assert c.headers["x-goog-api-key"] == KEY
            assert "ignore" in c.body["systemInstruction"]["parts"][0]["text"].lower()
        else:
            assert c.path == "/v1/chat/completions"
            assert c.headers["authorization"] == f"Bearer {KEY}"
            assert c.body["model"] == LOCAL_MODEL
            assert c.body["messages"][0]["role"] == "system"
        assert KEY not in c.path


@pytest.mark.parametrize("api", APIS)
def test_inconsistent_orders_give_a_tie(api: str) -> None:
    with FakeJudgeServer(api, position_biased) as srv, make_judge(api, srv) as judge:
        v = compare(judge)
        loose = compare(judge, consistent=False, swap=True)
        one_order = compare(judge, consistent=False)
    assert (v.winner, v.consistent) == ("tie", False)
    # un-swapped: order AB says a=2,b=1; order BA says b=2,a=1
    assert (v.score_a, v.score_b) == (1.5, 1.5)
    # consistent=False, swap=True: majority over all samples, one "a" and one "b" → tie
    assert (loose.winner, loose.consistent) == ("tie", False)
    # consistent=False alone: one order only, so the position bias goes unnoticed
    assert (one_order.winner, one_order.consistent) == ("a", True)
    assert len(srv.calls) == 5


@pytest.mark.parametrize("api", APIS)
def test_votes_majority_per_order(api: str) -> None:
    # order AB (calls 0-2): a, a, b ; order BA (calls 3-5): a, tie, a (un-swapped)
    script = [answer("A", 3, 1), answer("A", 2, 1), answer("B", 1, 2),
              answer("B", 1, 3), answer("tie", 2, 2), answer("B", 0, 2)]

    def respond(call: Call) -> Reply:
        return Reply(json.dumps(script[call.index]))

    with FakeJudgeServer(api, respond) as srv, make_judge(api, srv) as judge:
        v = compare(judge, votes=3)
    assert len(srv.calls) == 6
    assert [c.audio[0] for c in srv.calls] == [CLIP_X] * 3 + [CLIP_Y] * 3
    seeds = [c.body["generationConfig"]["seed"] if api == "gemini" else c.body["seed"]
             for c in srv.calls]
    assert seeds == [0, 1, 2, 0, 1, 2]
    assert (v.winner, v.consistent) == ("a", True)
    # score_a: 3,2,1 then (un-swapped) 3,2,2 → 13/6 ; score_b: 1,1,2 then 1,2,0 → 7/6
    assert v.score_a == pytest.approx(13 / 6) and v.score_b == pytest.approx(7 / 6)


@pytest.mark.parametrize("api", APIS)
def test_fenced_json_is_read(api: str) -> None:
    text = "Here is my verdict:\n```json\n" + json.dumps(answer("A", 3, 0)) + "\n```\nDone."
    with FakeJudgeServer(api, lambda c: Reply(text)) as srv, make_judge(api, srv) as judge:
        v = compare(judge, consistent=False)
    assert (v.winner, v.score_a, v.score_b) == ("a", 3.0, 0.0)


@pytest.mark.parametrize("api", APIS)
def test_broken_json_then_valid(api: str) -> None:
    replies = ['{"analysis_a": "cut off', json.dumps(answer("B", 1, 2))]
    with FakeJudgeServer(api, lambda c: Reply(replies[c.index])) as srv, \
            make_judge(api, srv) as judge:
        v = compare(judge, consistent=False)
        usage = judge.backend.usage  # type: ignore[attr-defined]
    assert v.winner == "b" and len(srv.calls) == 2
    assert (usage.calls, usage.failures) == (2, 1)


@pytest.mark.parametrize("api", APIS)
def test_always_invalid_is_a_failure_not_a_score(api: str) -> None:
    bad = json.dumps(answer("A", 1, 3))  # winner contradicts the scores
    cache = MemoryVerdictCache()
    with FakeJudgeServer(api, lambda c: Reply(bad)) as srv, \
            make_judge(api, srv, judge_kw={"max_invalid_retries": 2, "cache": cache}) as judge:
        with pytest.raises(JudgeResponseError, match="no valid verdict"):
            compare(judge)
        usage = judge.backend.usage  # type: ignore[attr-defined]
    assert len(srv.calls) == 3 and usage.failures == 3 and len(cache) == 0


def test_gemini_empty_candidate_is_retried() -> None:
    # An empty answer that stopped normally may differ next time; SAFETY/MAX_TOKENS may not
    # (test_judge_faults.py).
    empty = {"candidates": [{"finishReason": "STOP", "content": {"parts": []}}],
             "usageMetadata": {"promptTokenCount": 900, "candidatesTokenCount": 0}}
    replies = [Reply(body=empty), Reply(json.dumps(answer("A", 2, 1)))]
    with FakeJudgeServer("gemini", lambda c: replies[c.index]) as srv, \
            make_judge("gemini", srv) as judge:
        v = compare(judge, consistent=False)
        usage = judge.backend.usage  # type: ignore[attr-defined]
    assert v.winner == "a"
    assert (usage.calls, usage.failures, usage.prompt_tokens) == (2, 1, 1900)


@pytest.mark.parametrize("api", APIS)
def test_429_honours_retry_after(api: str) -> None:
    replies = [Reply(status=429, body={"error": "slow down"}, headers={"Retry-After": "7"}),
               Reply(json.dumps(answer("A", 3, 2)))]
    slept: list[float] = []
    with FakeJudgeServer(api, lambda c: replies[c.index]) as srv, \
            make_judge(api, srv, sleep=slept.append) as judge:
        v = compare(judge, consistent=False)
        usage = judge.backend.usage  # type: ignore[attr-defined]
    assert v.winner == "a" and slept == [7.0]
    assert (usage.calls, usage.retries, usage.failures) == (1, 1, 0)


@pytest.mark.parametrize("api", APIS)
def test_500s_back_off_exponentially_then_succeed(api: str) -> None:
    replies = [Reply(status=500, body={}), Reply(status=503, body={}),
               Reply(json.dumps(answer("B", 0, 3)))]
    slept: list[float] = []
    with FakeJudgeServer(api, lambda c: replies[c.index]) as srv, \
            make_judge(api, srv, sleep=slept.append, backoff_s=0.5) as judge:
        v = compare(judge, consistent=False)
    assert v.winner == "b" and slept == [0.5, 1.0]


@pytest.mark.parametrize("api", APIS)
def test_500s_forever_fail_after_max_retries(api: str) -> None:
    slept: list[float] = []
    with FakeJudgeServer(api, lambda c: Reply(status=500, body={})) as srv, \
            make_judge(api, srv, sleep=slept.append, max_retries=3, backoff_s=1.0,
                       max_backoff_s=3.0) as judge:
        with pytest.raises(JudgeError, match="HTTP 500 after 4 attempts"):
            compare(judge)
        usage = judge.backend.usage  # type: ignore[attr-defined]
    assert len(srv.calls) == 4 and slept == [1.0, 2.0, 3.0]
    assert (usage.calls, usage.failures, usage.retries) == (0, 1, 3)


@pytest.mark.parametrize("api", APIS)
def test_client_errors_are_not_retried(api: str) -> None:
    with FakeJudgeServer(api, lambda c: Reply(status=401, body={"error": "bad key"})) as srv, \
            make_judge(api, srv) as judge, pytest.raises(JudgeError, match="HTTP 401") as info:
        compare(judge)
    assert len(srv.calls) == 1 and KEY not in str(info.value)


@pytest.mark.parametrize("api", APIS)
def test_timeout_is_retried(api: str) -> None:
    replies = [Reply(json.dumps(answer("A", 3, 3)), delay_s=1.5),
               Reply(json.dumps(answer("A", 3, 2)))]
    with FakeJudgeServer(api, lambda c: replies[c.index]) as srv, \
            make_judge(api, srv, timeout_s=0.3) as judge:
        v = compare(judge, consistent=False)
        usage = judge.backend.usage  # type: ignore[attr-defined]
    assert (v.score_a, v.score_b) == (3.0, 2.0)
    assert len(srv.calls) == 2 and usage.retries == 1


def test_spend_cap_stops_before_crossing() -> None:
    # Each answered call costs (1000·2 + (100 + 200)·12) / 1e6 = $0.0056. The projection of a
    # call (~$0.027, mostly its 2048-token output ceiling) fits under $0.03 once, not twice.
    with FakeJudgeServer("gemini", prefers(CLIP_X)) as srv, \
            make_judge("gemini", srv, spend_cap_usd=0.03, max_output_tokens=2048) as judge:
        with pytest.raises(BudgetExceededError, match="spend cap"):
            compare(judge)
        assert len(srv.calls) == 1
        assert judge.backend.cost_usd() == pytest.approx(0.0056)  # type: ignore[attr-defined]
        assert judge.backend.usage.failures == 0  # type: ignore[attr-defined]
    with FakeJudgeServer("gemini", prefers(CLIP_X)) as srv, \
            make_judge("gemini", srv, spend_cap_usd=1.0, max_output_tokens=2048) as judge:
        assert compare(judge).winner == "a" and len(srv.calls) == 2


@pytest.mark.parametrize("api", APIS)
def test_usage_and_cost_totals(api: str) -> None:
    usage = {"prompt": 1100, "output": 150, "thinking": 400, "audio": 64}

    def respond(call: Call) -> Reply:
        r = prefers(CLIP_X)(call)
        r.usage = usage
        return r

    price = Price(2.0, 12.0, audio_input=1.0, as_of="2026-10-11")
    with FakeJudgeServer(api, respond) as srv:
        if api == "gemini":
            judge = make_judge(api, srv, prices={GEMINI_MODEL: price})
        else:
            judge = make_judge(api, srv, price=price)
        with judge:
            compare(judge, votes=2)
            u = judge.backend.usage  # type: ignore[attr-defined]
            cost = judge.backend.cost_usd()  # type: ignore[attr-defined]
    assert (u.calls, u.prompt_tokens, u.output_tokens, u.thinking_tokens, u.audio_tokens) == (
        4, 4400, 600, 1600, 256)
    # per call: text 1036·2 + audio 64·1 + (150 + 400)·12 = 8736 µ$ → 4 calls
    assert cost == pytest.approx(4 * 8736e-6)


def test_local_server_costs_nothing_by_default() -> None:
    with FakeJudgeServer("openai", prefers(CLIP_X)) as srv:
        judge = Judge.local(base_url=srv.url, model=LOCAL_MODEL)
        with judge:
            compare(judge)
            assert judge.backend.cost_usd() == 0.0  # type: ignore[attr-defined]
    assert "authorization" not in srv.calls[0].headers


@pytest.mark.parametrize("api", APIS)
def test_all_at_once_one_upload_per_order(api: str) -> None:
    def respond(call: Call) -> Reply:
        first_is_x = call.audio[0] == CLIP_X
        tone = answer("A", 3, 1) if first_is_x else answer("B", 1, 3)
        nat = answer("B", 1, 2) if first_is_x else answer("A", 2, 1)
        return Reply(json.dumps({"tone": tone, "naturalness": nat}))

    with FakeJudgeServer(api, respond) as srv, make_judge(api, srv) as judge:
        out = judge.compare_all(text=TEXT, instruction=INSTR, audio_a=CLIP_X, audio_b=CLIP_Y,
                                category="numbers")
    assert list(out) == ["tone", "naturalness"] and len(srv.calls) == 2
    assert (out["tone"].winner, out["naturalness"].winner) == ("a", "b")
    assert out["naturalness"].score_b == 2.0 and out["tone"].score_a == 3.0
    assert sent_schema(api, srv.calls[0]) == combined_schema(["tone", "naturalness"])
    assert "read the way a person would say it" in srv.calls[0].texts[-1]


@pytest.mark.parametrize("api", APIS)
def test_cache_prevents_repeat_calls(api: str) -> None:
    cache = MemoryVerdictCache()
    with FakeJudgeServer(api, prefers(CLIP_X)) as srv:
        with make_judge(api, srv, judge_kw={"cache": cache}) as judge:
            first = compare(judge, votes=2)
        with make_judge(api, srv, judge_kw={"cache": cache}) as judge:
            again = compare(judge, votes=2)
    assert len(srv.calls) == 4 and len(cache) == 4
    assert first == again
    for value in cache._data.values():
        assert KEY not in json.dumps(value)


@pytest.mark.parametrize("api", APIS)
def test_no_key_in_logs_repr_or_results(api: str, caplog: pytest.LogCaptureFixture) -> None:
    replies = [Reply(status=429, body={}, headers={"Retry-After": "0"}),
               Reply("not json at all"), Reply(status=502, body={})]

    def respond(call: Call) -> Reply:
        return replies[call.index] if call.index < 3 else prefers(CLIP_X)(call)

    caplog.set_level(logging.DEBUG)
    with FakeJudgeServer(api, respond) as srv, make_judge(api, srv) as judge:
        v = compare(judge)
        texts = [repr(judge), repr(judge.backend), v.to_json(), str(vars(v))]
    assert v.winner == "a"
    assert any("retrying" in r.getMessage() for r in caplog.records)
    assert caplog.records, "expected log output at DEBUG"
    for record in caplog.records:
        assert KEY not in record.getMessage() and KEY not in str(record.args)
    for t in texts:
        assert KEY not in t


def test_async_compare_is_bounded_and_retries() -> None:
    slept: list[float] = []
    # Calls 1 and 2 are held until both have arrived, so the two-at-once figure does not rest
    # on the machine being idle enough for two 0.2 s replies to overlap. Call 2 never waits on
    # call 1: the other slot holds either the 429's retry or the other coroutine's first unit.
    both_in = threading.Barrier(2, timeout=30)

    def respond(call: Call) -> Reply:
        if call.index == 0:
            return Reply(status=429, body={}, headers={"Retry-After": "3"})
        if call.index in (1, 2):
            both_in.wait()
        r = prefers(CLIP_Y)(call)
        r.delay_s = 0.2
        return r

    clips: dict[str, Any] = {"text": TEXT, "instruction": INSTR, "audio_a": CLIP_X,
                             "audio_b": CLIP_Y}

    async def three_at_once(judge: Judge) -> list[Any]:
        return await asyncio.gather(
            judge.acompare(**clips, dimension="naturalness", votes=2),
            judge.acompare(**clips, dimension="tone"),
            judge.acompare_all(**clips, dimensions=["tone"], all_at_once=False))

    with FakeJudgeServer("gemini", respond) as srv:
        # the async methods run the sync call in a worker thread: its waits use ``sleep``
        backend = make_backend("gemini", srv, sleep=slept.append)
        v, tone, both = asyncio.run(three_at_once(Judge(backend, max_concurrency=2)))
    assert v.winner == "b" and v.consistent and slept == [3.0]
    assert tone.winner == "b" and both["tone"].winner == "b"
    assert len(srv.calls) == 1 + 4 + 2 + 2  # one 429, retried; then every unit once
    assert srv.max_in_flight == 2  # three calls, two at once, each one unit at a time
