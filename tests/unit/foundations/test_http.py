"""The shared HTTP layer (vocencebench._util.http) against real misbehaving servers on 127.0.0.1.

Waits between attempts go to an injected ``sleep`` that records them; the only wall-clock
measurement is the per-attempt deadline against a trickling server: never before the deadline
(load only makes that later) and at most 1 s after it per attempt (see ``LATE_S``).
"""

from __future__ import annotations

import email.utils
import json
import pickle
import socket
import time
from typing import Any

import pytest

from judge_fakes import KEY, Call, FakeJudgeServer, Reply
from vocencebench._util.http import HttpClient, HTTPFailure
from vocencebench._util.retry import RetryPolicy, is_retry_status, retry_delay_s
from vocencebench.errors import ConfigError, ServiceError

OK = Reply(body={"ok": True})


def script(*replies: Reply) -> Any:
    """A respond callable answering ``replies`` in order, then OK."""
    def respond(call: Call) -> Reply:
        return replies[call.index] if call.index < len(replies) else OK
    return respond


def client(*, slept: list[float] | None = None, retries: int = 3, timeout_s: float = 10.0,
           **kw: Any) -> HttpClient:
    rec = slept if slept is not None else []
    return HttpClient("test service", timeout_s=timeout_s,
                      retry=RetryPolicy(max_retries=retries, backoff_s=1.0, jitter=0.0),
                      sleep=rec.append, secrets=[KEY], **kw)


def post(c: HttpClient, srv: FakeJudgeServer, **kw: Any) -> Any:
    return c.request("POST", srv.url + "/v1/thing", json={"x": 1},
                     headers={"authorization": f"Bearer {KEY}"}, **kw)


def google_429(*details: dict[str, Any]) -> Reply:
    return Reply(status=429, body={"error": {
        "code": 429, "status": "RESOURCE_EXHAUSTED",
        "message": "You exceeded your current quota, please check your plan and billing.",
        "details": list(details)}})


def quota(quota_id: str, value: str = "50") -> dict[str, Any]:
    return {"@type": "type.googleapis.com/google.rpc.QuotaFailure", "violations": [{
        "quotaMetric": "generativelanguage.googleapis.com/generate_content_free_tier_requests",
        "quotaId": quota_id, "quotaDimensions": {"location": "global", "model": "m"},
        "quotaValue": value}]}


def retry_info(delay: str) -> dict[str, Any]:
    return {"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": delay}


# ---------------------------------------------------------------- retry, then success


@pytest.mark.parametrize(
    ("first", "wait"),
    [
        (Reply(status=429, body={}, headers={"Retry-After": "7"}), 7.0),
        (Reply(status=429, body={}, headers={"retry-after-ms": "1500", "Retry-After": "9"}),
         1.5),
        (google_429(quota("GenerateRequestsPerMinutePerProjectPerModel-FreeTier"),
                    retry_info("37s")), 37.0),
        (google_429(retry_info("1.25s")), 1.25),
        (Reply(status=503, body={}), 1.0),  # no server wait: backoff_s · 2^0
        (Reply(status=408, body={}), 1.0),
        (Reply(status=502, raw=b"<html>bad gateway</html>"), 1.0),
        (Reply(body={"ok": True}, truncate_to=3), 1.0),  # fewer bytes than Content-Length
        (Reply(reset=True), 1.0),  # connection closed without an answer
    ],
    ids=["retry-after", "retry-after-ms", "retryinfo-37s", "retryinfo-1.25s", "503", "408",
         "502-html", "truncated", "reset"],
)
def test_transient_failure_is_retried_with_the_right_wait(first: Reply, wait: float) -> None:
    slept: list[float] = []
    with FakeJudgeServer("raw", script(first)) as srv:
        c = client(slept=slept)
        resp = post(c, srv)
        c.close()
    assert resp.json() == {"ok": True} and resp.calls == 2 and resp.retries == 1
    assert len(srv.calls) == 2 and slept == [wait]


def test_retry_after_http_date_is_measured_against_the_wall_clock() -> None:
    now = 1_900_000_000.0
    date = email.utils.formatdate(now + 30, usegmt=True)
    slept: list[float] = []
    with FakeJudgeServer("raw", script(Reply(status=503, body={},
                                             headers={"Retry-After": date}))) as srv:
        resp = post(client(slept=slept, wall_clock=lambda: now), srv)
    assert resp.calls == 2 and slept == [30.0]


def test_backoff_is_exponential_capped_and_jittered() -> None:
    slept: list[float] = []
    pol = RetryPolicy(max_retries=4, backoff_s=1.0, max_backoff_s=5.0, jitter=0.5)
    with FakeJudgeServer("raw", lambda c: Reply(status=500, body={})) as srv:
        c = HttpClient("svc", retry=pol, sleep=slept.append, rand=lambda: 0.5)
        with pytest.raises(HTTPFailure, match="HTTP 500 after 5 attempts") as err:
            post(c, srv)
    # 1, 2, 4, 8→5 seconds, each scaled by (1 − 0.5 · 0.5)
    assert slept == [0.75, 1.5, 3.0, 3.75]
    assert err.value.calls == 5 == len(srv.calls) and err.value.status == 500
    assert not err.value.fatal and err.value.blame == "instrument"
    assert isinstance(err.value, ServiceError)


# ---------------------------------------------------------------- fail fast


@pytest.mark.parametrize("status", [400, 401, 403, 404, 405, 422])
def test_client_errors_are_fatal_after_one_call(status: int) -> None:
    slept: list[float] = []
    with FakeJudgeServer("raw", lambda c: Reply(status=status, body={"error": "no"})) as srv, \
            pytest.raises(HTTPFailure, match=f"HTTP {status}") as err:
        post(client(slept=slept), srv)
    assert err.value.fatal and err.value.calls == 1 and len(srv.calls) == 1 and slept == []


@pytest.mark.parametrize(("status", "fatal"), [(409, True), (410, True), (302, True),
                                              (413, False), (451, False)])
def test_other_client_errors_are_not_retried_and_stop_the_run_unless_about_one_request(
        status: int, fatal: bool) -> None:
    # An unlisted 4xx was neither retried nor fatal: every item then failed the same way,
    # incomplete for ever (reruns included). Only a status about one request (its size, its
    # content) may let the next one pass.
    with FakeJudgeServer("raw", lambda c: Reply(status=status, body={})) as srv, \
            pytest.raises(HTTPFailure, match=f"HTTP {status}") as err:
        post(client(), srv)
    assert err.value.fatal is fatal and len(srv.calls) == 1


@pytest.mark.parametrize(
    "reply",
    [
        google_429(quota("GenerateRequestsPerDayPerProjectPerModel-FreeTier"), retry_info("37s")),
        google_429(quota("GenerateRequestsPerMinutePerProjectPerModel-FreeTier", value="0"),
                   retry_info("5s")),
        google_429({"@type": "type.googleapis.com/google.rpc.ErrorInfo",
                    "reason": "RATE_LIMIT_EXCEEDED",
                    "metadata": {"quota_limit": "Gemini25ProRequestsPerDay"}}),
        Reply(status=429, body={"error": {"message": "You exceeded your current quota",
                                          "type": "insufficient_quota",
                                          "code": "insufficient_quota"}}),
    ],
    ids=["gemini-per-day", "gemini-limit-0", "errorinfo-per-day", "openai-insufficient"],
)
def test_exhausted_quota_is_fatal_after_one_call(reply: Reply) -> None:
    slept: list[float] = []
    with FakeJudgeServer("raw", lambda c: reply) as srv, \
            pytest.raises(HTTPFailure, match="quota") as err:
        post(client(slept=slept), srv)
    assert err.value.fatal and err.value.reason == "quota" and err.value.status == 429
    assert len(srv.calls) == 1 and slept == []


def test_a_wait_longer_than_allowed_ends_the_call() -> None:
    with FakeJudgeServer("raw", lambda c: Reply(status=429, body={},
                                                headers={"Retry-After": "3600"})) as srv, \
            pytest.raises(HTTPFailure, match="asks to wait 3600 s") as err:
        post(client(), srv)
    assert err.value.fatal and err.value.reason == "wait-too-long" and len(srv.calls) == 1


def test_x_should_retry_false_is_obeyed() -> None:
    with FakeJudgeServer("raw", lambda c: Reply(status=503, body={},
                                                headers={"x-should-retry": "false"})) as srv, \
            pytest.raises(HTTPFailure, match="HTTP 503"):
        post(client(), srv)
    assert len(srv.calls) == 1


def test_nothing_listening_is_fatal_at_once() -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    slept: list[float] = []
    c = client(slept=slept)
    with pytest.raises(HTTPFailure, match="never answered") as err:
        c.request("POST", f"http://127.0.0.1:{port}/v1/x", json={})
    assert err.value.fatal and err.value.calls == 1 and slept == []


def test_a_server_that_answered_before_is_retried_after_a_refusal() -> None:
    with FakeJudgeServer("raw", script()) as srv:
        c = client()
        post(c, srv)
        url = srv.url
    slept: list[float] = []
    c._sleep = slept.append
    with pytest.raises(HTTPFailure, match="after 4 attempts") as err:  # server gone now
        c.request("POST", url + "/v1/thing", json={})
    assert not err.value.fatal and len(slept) == 3


# ---------------------------------------------------------------- deadline, body cap

#: What a deadline may be late by, per attempt: the issue's "deadline ± 1 s". Each test first
#: makes one normal request, so one-time costs (lazy imports, the TLS context, the pool) are
#: not in the measured interval; what is left per attempt is connecting, sending and unwinding
#: the timeout. Measured late by 1–20 ms, idle or at load average 8 on a 2-core machine; without
#: the warm-up a first call was up to 0.8 s late under that load. Hence 1 s per attempt, not a
#: single 1 s for a call that makes several.
LATE_S = 1.0
#: A deadline cannot fire early (the attempt starts after t0, and socket and event-loop
#: timeouts round up), so only float noise may separate the cut from ``timeout_s``; load only
#: makes it later.
EARLY_S = 0.01


def assert_cut_at_deadline(elapsed: float, timeout_s: float, *, attempts: int) -> None:
    """``elapsed`` (s, for ``attempts`` attempts whose waits went to a fake sleep) is within
    the deadline: no earlier than ``attempts · timeout_s``, no later than ``+1 s`` each."""
    assert attempts * timeout_s - EARLY_S <= elapsed <= attempts * (timeout_s + LATE_S), (
        elapsed, timeout_s, attempts)


@pytest.mark.slow
@pytest.mark.parametrize(("what", "retries"), [("body", 0), ("headers", 0), ("body", 1)])
def test_a_trickling_server_is_cut_at_the_deadline(what: str, retries: int) -> None:
    # 400 bytes at one every 50 ms would take 20 s; each attempt has 1 s, its own full second
    # (a retry does not inherit what the first attempt left).
    body = {"pad": "x" * 400}

    def respond(call: Call) -> Reply:
        if call.index == 0:  # the warm-up request
            return OK
        if what == "body":  # status and headers at once, then the body byte by byte
            return Reply(raw=json.dumps(body).encode(), trickle_s=0.05)
        return Reply(body=body, trickle_s=0.05)  # the status line already trickles

    timeout_s = 1.0
    slept: list[float] = []
    with FakeJudgeServer("raw", respond) as srv:
        c = client(retries=retries, timeout_s=timeout_s, slept=slept)
        assert post(c, srv).json() == {"ok": True}
        t0 = time.monotonic()
        with pytest.raises(HTTPFailure, match="1 s deadline") as err:
            post(c, srv)
        elapsed = time.monotonic() - t0
        c.close()
    attempts = retries + 1
    assert err.value.reason == "deadline" and not err.value.fatal
    assert err.value.calls == attempts == len(srv.calls) - 1 and len(slept) == retries
    assert_cut_at_deadline(elapsed, timeout_s, attempts=attempts)


def test_body_cap_stops_reading() -> None:
    big = Reply(raw=b"a" * 50_000, content_type="audio/wav")
    with FakeJudgeServer("raw", lambda c: big) as srv, \
            pytest.raises(HTTPFailure, match=r"larger than the 0\.01 MB cap") as err:
        post(client(max_body_bytes=10_000), srv)
    assert err.value.reason == "too-large" and len(srv.calls) == 1


# ---------------------------------------------------------------- secrets


def test_echoed_credentials_never_reach_the_error_text() -> None:
    def echo(call: Call) -> Reply:
        return Reply(status=401, body={"error": {
            "message": "Incorrect API key provided: sk-proj-****cdef",
            "echo": call.headers, "url": f"https://u:{KEY}@h/x?key={KEY}"}})

    url_secret = "pw-SECRET-99887766"
    with FakeJudgeServer("raw", echo) as srv:
        c = client()
        base = srv.url.replace("http://", f"http://bob:{url_secret}@")
        with pytest.raises(HTTPFailure) as err:
            c.request("POST", base + "/v1/x?api_key=QUERY-SECRET-123456&model=m", json={},
                      headers={"x-request-note": KEY})
    text = f"{err.value} {err.value.body} {err.value.args!r} {c!r}"
    for secret in (KEY, "****cdef", url_secret, "QUERY-SECRET-123456"):
        assert secret not in text
    assert "model=m" in text and "[REDACTED]" in text
    # the request still carried credentials (httpx turns URL userinfo into Basic auth)
    assert srv.calls[0].headers["authorization"].startswith("Basic ")
    assert srv.calls[0].headers["authorization"].split()[1] not in text


def test_a_url_password_and_an_api_key_together_are_refused_before_any_call() -> None:
    # httpx would send the URL's user:password as Basic auth *instead of* the Bearer key:
    # every call a 401 whose cause the user cannot see.
    url_secret = "pw-SECRET-11223344"
    with FakeJudgeServer("raw", lambda call: Reply(status=200, body={})) as srv:
        c = client()
        base = srv.url.replace("http://", f"http://bob:{url_secret}@")
        for header in ("Authorization", "x-goog-api-key"):
            with pytest.raises(ConfigError) as err:
                c.request("POST", base + "/v1/x", json={}, headers={header: f"Bearer {KEY}"})
            assert err.value.fatal
            assert "user:password@" in str(err.value)
            assert url_secret not in str(err.value) and KEY not in str(err.value)
        assert srv.calls == []


# ---------------------------------------------------------------- pieces


def test_retry_delay_parsing() -> None:
    assert retry_delay_s({"Retry-After": "12"}, None) == 12.0
    assert retry_delay_s({"retry-after": "-3"}, None) == 0.0
    assert retry_delay_s({"retry-after": "soon"}, None) is None
    assert retry_delay_s({}, {"error": {"details": [retry_info("0.5s")]}}) == 0.5
    assert retry_delay_s({}, [{"error": {"details": [retry_info("3s")]}}]) == 3.0
    assert retry_delay_s({}, {"error": {"details": [
        {"@type": "type.googleapis.com/google.rpc.RetryInfo",
         "retryDelay": {"seconds": 4, "nanos": 500_000_000}}]}}) == 4.5
    assert retry_delay_s({}, {"error": "plain"}) is None


@pytest.mark.parametrize(("status", "retry"), [(408, True), (429, True), (500, True),
                                               (501, False), (503, True), (505, False),
                                               (529, True), (400, False), (404, False)])
def test_retry_statuses(status: int, retry: bool) -> None:
    assert is_retry_status(status) is retry


def test_bad_settings_are_config_errors() -> None:
    with pytest.raises(ConfigError, match="max_retries"):
        RetryPolicy(max_retries=-1)
    with pytest.raises(ConfigError, match="jitter"):
        RetryPolicy(jitter=2.0)
    with pytest.raises(ConfigError, match="timeout"):
        HttpClient("svc", timeout_s=0)
    with pytest.raises(ConfigError, match="max_body_bytes"):
        HttpClient("svc", max_body_bytes=0)


def test_client_pickles_without_its_pool() -> None:
    with FakeJudgeServer("raw", script()) as srv:
        c = HttpClient("svc", secrets=[KEY])
        post(c, srv)
        back = pickle.loads(pickle.dumps(c))
        assert post(back, srv).json() == {"ok": True}
