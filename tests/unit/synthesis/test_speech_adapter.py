"""OpenAISpeechAdapter against a local /v1/audio/speech server that fails like real ones.

A rate limit, a 5xx or a dropped connection is retried; what is left after the retries is
infrastructure (ServiceError, blame "instrument": never scored 0); a refused input or an
empty/oversized answer is the system's own failure (SynthesisError).
"""

from __future__ import annotations

import contextlib
import io
import pickle
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import numpy as np
import pytest
import soundfile as sf

from judge_fakes import KEY, Call, FakeJudgeServer, Reply, tone_wav
from vocencebench.adapters import OpenAISpeechAdapter
from vocencebench.audio import load_audio
from vocencebench.errors import ServiceError, SynthesisError, blame_of, is_fatal

WAV = tone_wav(220.0)


def audio_reply(data: bytes = WAV, ctype: str = "audio/wav") -> Reply:
    return Reply(raw=data, content_type=ctype)


def script(*replies: Reply) -> Any:
    def respond(call: Call) -> Reply:
        return replies[call.index] if call.index < len(replies) else audio_reply()
    return respond


def adapter(srv: FakeJudgeServer, slept: list[float] | None = None, **kw: Any
            ) -> OpenAISpeechAdapter:
    kw.setdefault("max_retries", 3)
    return OpenAISpeechAdapter(srv.url, "gpt-4o-mini-tts", "alloy", api_key=KEY,
                               sleep=(slept if slept is not None else []).append, **kw)


@pytest.mark.parametrize(
    ("first", "wait"),
    [
        (Reply(status=429, body={"error": {"message": "Rate limit reached"}},
               headers={"retry-after-ms": "800"}), 0.8),
        (Reply(status=429, body={}, headers={"Retry-After": "2"}), 2.0),
        (Reply(status=503, raw=b"upstream overloaded", content_type="text/plain"), None),
        (Reply(status=500, body={"error": "boom"}), None),
        (Reply(reset=True), None),
        (Reply(raw=WAV, content_type="audio/wav", truncate_to=1000), None),
    ],
    ids=["429-ms", "429-seconds", "503", "500", "reset", "truncated"],
)
def test_transient_failures_are_retried_then_succeed(first: Reply, wait: float | None) -> None:
    slept: list[float] = []
    with FakeJudgeServer("raw", script(first)) as srv:
        ad = adapter(srv, slept)
        out = ad("Hello there.", "a calm voice")
        ad.close()
    assert out == WAV and len(srv.calls) == 2 and len(slept) == 1
    if wait is not None:
        assert slept == [wait]


def test_5xx_then_429_then_success_counts_calls() -> None:
    slept: list[float] = []
    replies = (Reply(status=502, body={}), Reply(status=429, body={},
                                                 headers={"Retry-After": "1"}))
    with FakeJudgeServer("raw", script(*replies)) as srv:
        assert adapter(srv, slept)("Hi.", "x") == WAV
    assert len(srv.calls) == 3 and slept[1] == 1.0


def test_retries_exhausted_is_infrastructure_not_the_systems_failure() -> None:
    with FakeJudgeServer("raw", lambda c: Reply(status=503, body={})) as srv, \
            pytest.raises(ServiceError, match="HTTP 503 after 4 attempts") as err:
        adapter(srv)("Hi.", "x")
    e = err.value
    assert not isinstance(e, SynthesisError)
    assert blame_of(e) == "instrument" and not is_fatal(e)
    assert e.status == 503 and e.calls == 4 == len(srv.calls)


@pytest.mark.parametrize("status", [401, 403, 404])
def test_auth_and_not_found_are_fatal_after_one_call(status: int) -> None:
    with FakeJudgeServer("raw", lambda c: Reply(status=status, body={"error": "no"})) as srv, \
            pytest.raises(ServiceError, match=f"HTTP {status}") as err:
        adapter(srv)("Hi.", "x")
    assert is_fatal(err.value) and blame_of(err.value) == "instrument"
    assert len(srv.calls) == 1


@pytest.mark.parametrize(("status", "hint"), [
    (302, r"the server redirects to 'http://elsewhere\.example/v1/audio/speech': configure "
          r"that URL"),
    (402, "check the account's billing"),
    (410, "the endpoint or model is gone"),
    (415, "does not take this request's media type"),
    (418, "see the server's message"),
])
def test_every_other_client_status_stops_the_run_after_one_call(status: int, hint: str) -> None:
    # Each answers every request the same: going on left every item incomplete for ever,
    # and the rerun the message advised got the same answer.
    reply = Reply(status=status, body={"error": "no"},
                  headers={"Location": "http://elsewhere.example/v1/audio/speech"})
    with FakeJudgeServer("raw", lambda c: reply) as srv, \
            pytest.raises(ServiceError, match=f"HTTP {status} .*{hint}") as err:
        adapter(srv)("Hi.", "x")
    assert is_fatal(err.value) and blame_of(err.value) == "instrument"
    assert len(srv.calls) == 1


@pytest.mark.parametrize(("status", "hint"), [
    (413, "the request is larger than the server takes"),
    (451, "the server refused this content"),
])
def test_a_status_about_this_input_alone_is_the_systems_failure(status: int, hint: str) -> None:
    # Too long for this system, or content it will not speak: S = 0, as a refusal, and the
    # other items go on.
    reply = Reply(status=status, body={"error": {"message": "input too long for this voice"}})
    with FakeJudgeServer("raw", lambda c: reply) as srv, \
            pytest.raises(SynthesisError, match=f"HTTP {status} .*{hint}") as err:
        adapter(srv)("Hi.", "x")
    assert not isinstance(err.value, ServiceError) and blame_of(err.value) == "system"
    assert len(srv.calls) == 1


def test_a_refused_input_is_the_systems_failure() -> None:
    body = {"error": {"message": "Your request was rejected as a result of our safety system.",
                      "type": "invalid_request_error", "code": "content_policy_violation"}}
    with FakeJudgeServer("raw", lambda c: Reply(status=400, body=body)) as srv, \
            pytest.raises(SynthesisError, match="refused the input") as err:
        adapter(srv)("Hi.", "x")
    assert blame_of(err.value) == "system" and not is_fatal(err.value) and len(srv.calls) == 1


def test_a_malformed_request_is_fatal() -> None:
    body = {"error": {"message": "Invalid value for 'voice': 'nobody'."}}
    with FakeJudgeServer("raw", lambda c: Reply(status=400, body=body)) as srv, \
            pytest.raises(ServiceError, match="HTTP 400") as err:
        adapter(srv)("Hi.", "x")
    assert is_fatal(err.value) and not isinstance(err.value, SynthesisError)


@pytest.mark.parametrize(
    ("reply", "match"),
    [
        (audio_reply(b""), "empty body"),
        (Reply(body={"error": "quota"}), "instead of audio"),
        (Reply(raw=b'{"error": "quota"}', content_type="Application/JSON"),
         "answered Application/JSON instead of audio: .*quota"),
        (Reply(raw=b'{"title": "overloaded"}', content_type="application/problem+json"),
         "answered application/problem\\+json instead of audio: .*overloaded"),
        (audio_reply(b"\x00" * 20_000), "larger than"),
    ],
    ids=["empty", "json-200", "json-200-capitalised", "problem-json-200", "over-cap"],
)
def test_no_audio_is_the_systems_failure(reply: Reply, match: str) -> None:
    with FakeJudgeServer("raw", lambda c: reply) as srv, \
            pytest.raises(SynthesisError, match=match) as err:
        adapter(srv, max_bytes=10_000)("Hi.", "x")
    assert blame_of(err.value) == "system" and len(srv.calls) == 1


@pytest.mark.parametrize(("fmt", "subtype", "ctype"),
                         [("FLAC", "PCM_16", "audio/flac"), ("OGG", "VORBIS", "audio/ogg"),
                          ("MP3", "MPEG_LAYER_III", "audio/mpeg")])
def test_any_audio_format_is_returned_as_sent(fmt: str, subtype: str, ctype: str) -> None:
    x = (0.3 * np.sin(np.arange(24_000) / 10.0)).astype(np.float32)
    buf = io.BytesIO()
    sf.write(buf, x, 24_000, format=fmt, subtype=subtype)
    data = buf.getvalue()
    with FakeJudgeServer("raw", lambda c: audio_reply(data, ctype)) as srv:
        out = adapter(srv)("Hi.", "x")  # the server ignored response_format=wav
    assert out == data and load_audio(out).format.startswith(fmt)
    assert srv.calls[0].body["response_format"] == "wav"


@pytest.mark.slow
def test_concurrent_calls_share_one_adapter() -> None:
    # The 2nd and 3rd requests to arrive are answered only once both are open, so two are in
    # flight together however loaded the machine is; an adapter that sent one request at a
    # time would leave the first waiting alone until the barrier gives up.
    both_open = threading.Barrier(2, timeout=30)
    met: list[bool] = []

    def respond(call: Call) -> Reply:
        if call.index % 3 == 0:
            return Reply(status=429, body={}, headers={"retry-after-ms": "1"})
        if call.index in (1, 2):
            with contextlib.suppress(threading.BrokenBarrierError):
                both_open.wait()
                met.append(True)
        return audio_reply()

    with FakeJudgeServer("raw", respond) as srv:
        ad = adapter(srv, max_retries=5)
        with ThreadPoolExecutor(8) as pool:
            outs = list(pool.map(lambda i: ad(f"item {i}", "x"), range(24)))
        ad.close()
    assert all(o == WAV for o in outs)
    assert sorted(c.body["input"] for c in srv.calls if c.index % 3)  # every item was asked
    assert met == [True, True] and srv.max_in_flight > 1


@pytest.mark.slow
def test_a_trickling_server_is_cut_at_the_deadline() -> None:
    # 400 bytes at one every 50 ms would take 20 s with a per-read timer.
    def respond(call: Call) -> Reply:
        if call.index == 0:  # the warm-up call: one-time costs stay out of the measurement
            return audio_reply()
        return Reply(raw=WAV[:400], content_type="audio/wav", trickle_s=0.05)

    timeout, retries = 1.0, 0
    with FakeJudgeServer("raw", respond) as srv:
        ad = adapter(srv, max_retries=retries, timeout=timeout)
        assert ad("Hello.", "x") == WAV
        t0 = time.monotonic()
        with pytest.raises(ServiceError, match="1 s deadline") as err:
            ad("Hi.", "x")
        elapsed = time.monotonic() - t0
        ad.close()
    assert blame_of(err.value) == "instrument"
    attempts = retries + 1
    assert len(srv.calls) == 1 + attempts
    # Never before the deadline (it cannot fire early; load only makes it later), at most 1 s
    # after it per attempt: each attempt pays its own connect and unwinding, which a loaded
    # 2-core machine stretches (see LATE_S in tests/unit/foundations/test_http.py for the
    # measurements).
    assert attempts * timeout - 0.01 <= elapsed <= attempts * (timeout + 1.0), elapsed


def test_credentials_never_reach_ids_or_errors() -> None:
    def echo(call: Call) -> Reply:
        return Reply(status=401, body={"error": {
            "message": "Incorrect API key provided: sk-proj-****cdef", "headers": call.headers}})

    with FakeJudgeServer("raw", echo) as srv:
        url = srv.url.replace("http://", "http://me:pw-SPEECH-12345678@") + "/v1?key=Q-SP-87654321"
        ad = OpenAISpeechAdapter(url, "m", "v")  # URL password or a key, never both
        with pytest.raises(ServiceError) as err:
            ad("Hi.", "x")
    texts = [str(err.value), repr(ad), ad.system_id, ad.base_url]
    for t in texts:
        for secret in (KEY, "****cdef", "pw-SPEECH-12345678", "Q-SP-87654321"):
            assert secret not in t, (secret, t)
    assert ad.system_id == f"openai-speech:{srv.url}/v1#m#v"
    assert srv.calls[0].path == "/v1/audio/speech?key=Q-SP-87654321"


def test_request_shape_and_pickling() -> None:
    with FakeJudgeServer("raw", script()) as srv:
        ad = adapter(srv)
        back = pickle.loads(pickle.dumps(ad))
        assert back("Hello there.", "a calm elderly voice") == WAV
    (call,) = srv.calls
    assert call.path == "/v1/audio/speech"
    assert call.body == {"model": "gpt-4o-mini-tts", "voice": "alloy", "input": "Hello there.",
                         "instructions": "a calm elderly voice", "response_format": "wav"}
    assert call.headers["authorization"] == f"Bearer {KEY}"
