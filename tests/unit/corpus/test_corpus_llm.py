"""corpus_llm against a real OpenAI-compatible HTTP server on 127.0.0.1.

Waits between HTTP attempts go to an injected ``sleep`` that records them (no real waiting)."""

from __future__ import annotations

import json
import re
import socket
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from judge_fakes import Call, FakeJudgeServer, Reply
from vocencebench.corpus import (
    MAX_OPENING_SHARE,
    balanced_assignment,
    check_corpus,
    freeze,
    generate_template_corpus,
    load_benchmark,
    read_corpus,
)
from vocencebench.corpus_llm import LLMCorpusWriter, checkpoint_path, generate_llm_corpus
from vocencebench.errors import ConfigError, CorpusError

KEY = "sk-test-secret-0123456789"

_PACE = {"slow": "slowly", "moderate": "at a moderate pace", "fast": "quickly"}
_LOUD = {"quiet": "quietly", "normal": "at normal volume", "loud": "loudly"}
_PITCH = {"low": "in a low-pitched voice", "medium": "at a medium pitch",
          "high": "in a high-pitched voice"}
_TEXT = {
    0: "Can I have the {n} red cups?",
    1: "We left {n} folding chairs in the hall, so could you stack them before the meeting?",
    "tongue_twister": "Peter Piper picked {n} pecks of pickled peppers, but where are they?",
    "numbers": "On 3 May 2021 we paid ${n}.50 for 12 tickets, about 8% more than before.",
    "urls": "Write to help{n}@example.org or visit www.example.org/faq, ticket AB-4471.",
    "nested_clauses": "The parcel that the courier who lost his map left by gate {n} is here.",
}


#: A name per answer, to open each instruction differently ("Bado, voice a ..."), as a model
#: asked for a varied corpus does; the opening-variety rule is tested on its own below.
_CUE = [c + v for c in "BCDFGHJKLMNPRSTVZ" for v in ("ado", "ela", "imo", "uno", "ery")]


def _good(persona: str, k: int, *, cue: bool = True) -> dict[str, str]:
    t = dict(re.findall(r"(\w+)=([\w]+)", persona))
    young = int(t["age"]) < 18
    noun = ("boy" if young else "man") if t["gender"] == "male" else (
        "girl" if young else "woman")
    emo = "emotionally neutral" if t["emotion"] == "neutral" else (
        "disgusted" if t["emotion"] == "disgust" else t["emotion"])
    lead = f"{_CUE[k % len(_CUE)]}, voice" if cue else "Voice"
    instruction = (f"{lead} a {t['age']}-year-old {noun} with a {t['accent']} accent, {emo}, "
                   f"speaking {_PACE[t['pace']]}, {_LOUD[t['loudness']]}, "
                   f"{_PITCH[t['pitch']]}, in a {t['tone']} tone.")
    d = int(t["difficulty"])
    text = _TEXT[d if d < 2 else t["category"]].format(n=10 + k)
    return {"instruction": instruction, "text": text}


class _Server:
    """Answers each persona first with an invalid item (script names its emotion), then,
    once the validator's complaint is in the conversation, with a valid one."""

    def __init__(self) -> None:
        self.requests: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []
        self.fail_first_http = 0
        #: Answer 401 (a fatal refusal) from this request on (1-based), when set.
        self.refuse_from: int | None = None
        #: Open every valid instruction with "Voice a <age>-year-old <noun>" unless the last
        #: complaint asked for another opening.
        self.plain_openings = False
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                outer.requests.append(body)
                outer.headers.append(dict(self.headers))
                if outer.refuse_from is not None and len(outer.requests) >= outer.refuse_from:
                    self.send_response(401)
                    self.end_headers()
                    return
                if outer.fail_first_http:
                    outer.fail_first_http -= 1
                    self.send_response(503)
                    self.end_headers()
                    return
                msgs = body["messages"]
                persona = msgs[1]["content"]
                k = len(outer.requests)
                if len(msgs) == 2:
                    answer = json.dumps({"instruction": "A voice.", "text": "I am so happy!"})
                else:
                    asked_to_vary = "start the instruction with other words" in msgs[-1][
                        "content"]
                    cue = asked_to_vary or not outer.plain_openings
                    answer = "```json\n" + json.dumps(_good(persona, k, cue=cue)) + "\n```"
                out = json.dumps({"choices": [{"message": {"role": "assistant",
                                                           "content": answer}}]}).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(out)))
                self.end_headers()
                self.wfile.write(out)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"


@pytest.fixture
def server() -> Iterator[_Server]:
    s = _Server()
    t = threading.Thread(target=s.httpd.serve_forever, kwargs={"poll_interval": 0.02},
                         daemon=True)
    t.start()
    try:
        yield s
    finally:
        s.httpd.shutdown()
        s.httpd.server_close()
        t.join()


def test_generator_retries_with_the_complaint_then_freezes(server: _Server,
                                                            tmp_path: Path) -> None:
    out = tmp_path / "llm.jsonl"
    digest = generate_llm_corpus(out, 16, 5, base_url=server.url, model="m", api_key=KEY)
    items = load_benchmark(out)
    assert len(items) == 16 and (tmp_path / "llm.sha256").read_text().startswith(digest)
    assert [(it.id, it.traits) for it in items] == [
        (a.id, a.traits) for a in balanced_assignment(16, 5)]
    assert len(server.requests) == 32  # one rejected answer per item, then a valid one
    retry = server.requests[1]["messages"]
    assert retry[2]["content"] == json.dumps({"instruction": "A voice.",
                                              "text": "I am so happy!"})
    assert "names emotion with 'happy'" in retry[3]["content"]
    assert "does not state" in retry[3]["content"]
    assert all(h["Authorization"] == f"Bearer {KEY}" for h in server.headers)
    assert server.requests[0]["model"] == "m"


def test_generator_gives_up_without_leaking_the_key(server: _Server) -> None:
    writer = LLMCorpusWriter(base_url=server.url, model="m", api_key=KEY, max_attempts=1)
    with pytest.raises(CorpusError, match="no valid answer in 1 attempts") as err:
        writer.write(balanced_assignment(16, 1)[:1])
    assert KEY not in str(err.value) and KEY not in repr(writer)


def test_server_errors_are_retried(server: _Server) -> None:
    server.fail_first_http = 1
    writer = LLMCorpusWriter(base_url=server.url, model="m", api_key=None, backoff_s=2.0)
    slept: list[float] = []
    items = writer.write(balanced_assignment(16, 2)[:1], sleep=slept.append)
    assert len(items) == 1 and "Authorization" not in server.headers[0]
    # one 503, then the two answers of _Server; the wait is the shared layer's jittered backoff
    assert len(server.requests) == 3 and len(slept) == 1 and 1.0 <= slept[0] <= 2.0


# ------------------------------------------------------------ the shared HTTP layer (issue 11)


def _chat_reply(call: Call) -> Reply:
    """A valid item for the persona in the request, in an OpenAI chat envelope."""
    persona = call.body["messages"][1]["content"]
    return Reply(body={"choices": [{"index": 0, "message": {
        "role": "assistant", "content": json.dumps(_good(persona, call.index))}}]})


def _then_valid(*first: Reply) -> Any:
    def respond(call: Call) -> Reply:
        return first[call.index] if call.index < len(first) else _chat_reply(call)
    return respond


def _answer(content: str) -> Reply:
    return Reply(body={"choices": [{"index": 0, "message": {"role": "assistant",
                                                            "content": content}}]})


def test_a_huge_rejected_answer_is_quoted_back_once_and_cut() -> None:
    # Every attempt re-sent every earlier answer in full: a 1 MB answer four times made
    # requests of 1.5 KB, 1 MB, 2 MB and 3 MB for one item.
    from vocencebench.corpus_llm import REJECTED_ANSWER_CHARS

    huge = _answer(json.dumps({"instruction": "A voice.", "text": "x" * 1_000_000}))
    with FakeJudgeServer("raw", _then_valid(huge, huge, huge)) as srv:
        writer = LLMCorpusWriter(base_url=srv.url + "/v1", model="m", api_key=KEY)
        assert len(writer.write(balanced_assignment(16, 3)[:1])) == 1
    sizes = [len(json.dumps(c.body)) for c in srv.calls]
    assert len(sizes) == 4 and max(sizes) < sizes[0] + REJECTED_ANSWER_CHARS + 2000, sizes
    last = srv.calls[-1].body["messages"]
    assert len(last) == 4 and last[2]["content"].endswith("[the rest of the answer is cut]")


def test_an_answer_with_a_key_given_twice_is_rejected_not_guessed() -> None:
    # The second "text" was kept silently: here it would have smuggled past the check on
    # the first.
    persona_answer = _then_valid(_answer(
        '{"instruction": "A voice.", "text": "Speak loudly!", "text": "Hello there."}'))
    with FakeJudgeServer("raw", persona_answer) as srv:
        writer = LLMCorpusWriter(base_url=srv.url + "/v1", model="m", api_key=KEY)
        assert len(writer.write(balanced_assignment(16, 3)[:1])) == 1
    assert len(srv.calls) == 2
    assert "key 'text' is given twice" in srv.calls[1].body["messages"][-1]["content"]


@pytest.mark.parametrize("headers", [{"Retry-After": "7"}, {"retry-after-ms": "2500"}])
def test_a_rate_limit_waits_what_the_server_asks_then_succeeds(headers: dict[str, str]) -> None:
    limited = Reply(status=429, body={"error": {"message": "Rate limit reached"}},
                    headers=headers)
    slept: list[float] = []
    with FakeJudgeServer("raw", _then_valid(limited, limited)) as srv:
        writer = LLMCorpusWriter(base_url=srv.url + "/v1", model="m", api_key=KEY)
        items = writer.write(balanced_assignment(16, 3)[:1], sleep=slept.append)
    assert len(items) == 1 and len(srv.calls) == 3
    wait = 7.0 if "Retry-After" in headers else 2.5
    assert slept == [wait, wait]  # the server's wait, not the backoff (1 s, 2 s)
    assert all(c.path == "/v1/chat/completions" for c in srv.calls)
    assert srv.calls[2].headers["authorization"] == f"Bearer {KEY}"


@pytest.mark.parametrize(("reply", "says"), [
    (Reply(status=401, body={"error": {"message": "Incorrect API key provided: sk-…****cdef",
                                       "type": "invalid_request_error"}}), "check the API key"),
    (Reply(status=404, body={"error": {"message": "The model `m` does not exist"}}),
     "check the model name"),
    (Reply(status=429, body={"error": {"message": "You exceeded your current quota",
                                       "type": "insufficient_quota",
                                       "code": "insufficient_quota"}}), "no quota left"),
])
def test_a_refusal_fails_fast_after_one_call(reply: Reply, says: str) -> None:
    slept: list[float] = []
    with FakeJudgeServer("raw", lambda call: reply) as srv:
        writer = LLMCorpusWriter(base_url=srv.url + "/v1", model="m", api_key=KEY)
        with pytest.raises(CorpusError, match=says) as err:
            writer.write(balanced_assignment(16, 3)[:2], sleep=slept.append)
    assert err.value.fatal and len(srv.calls) == 1 and slept == []
    assert "****cdef" not in str(err.value) and KEY not in str(err.value)


def test_gives_up_after_its_http_retries_with_the_servers_reason() -> None:
    down = Reply(status=503, body={"error": {"message": "model is loading"}})
    slept: list[float] = []
    with FakeJudgeServer("raw", lambda call: down) as srv:
        writer = LLMCorpusWriter(base_url=srv.url + "/v1", model="m", http_retries=2)
        with pytest.raises(CorpusError, match="HTTP 503 after 3 attempts") as err:
            writer.write(balanced_assignment(16, 3)[:1], sleep=slept.append)
    assert not err.value.fatal and len(srv.calls) == 3 and len(slept) == 2
    assert "model is loading" in str(err.value)


_PW, _QKEY = "pw-LLM-SECRET-12345678", "Q-LLM-SECRET-87654321"


def _echo_401(call: Call) -> Reply:
    return Reply(status=401, body={"error": {"message": "bad key", "headers": call.headers,
                                             "path": call.path}})


def _echo_200(call: Call) -> Reply:
    return Reply(body={"unexpected": call.headers, "path": call.path})


def _null_content(call: Call) -> Reply:
    return Reply(body={"choices": [{"message": {"content": None}}],
                       "request": {"headers": call.headers, "path": call.path}})


def _dead_host() -> str:
    with socket.socket() as s:  # bound and closed: nothing listens there
        s.bind(("127.0.0.1", 0))
        return f"127.0.0.1:{s.getsockname()[1]}"


def _assert_no_credentials(err: CorpusError, writer: LLMCorpusWriter, host: str) -> None:
    for text in (str(err), repr(err), repr(writer)):
        for secret in (KEY, _PW, _QKEY):
            assert secret not in text, (secret, text)
    # The endpoint is still named, only without its credentials.
    assert f"http://{host}/v1/chat/completions?api-version=2024-06-01" in str(err)


def _url(host: str) -> str:
    return f"http://bob:{_PW}@{host}/v1?api_key={_QKEY}&api-version=2024-06-01"


@pytest.mark.parametrize("respond", [_echo_401, _echo_200, _null_content],
                         ids=["401-echo", "200-not-chat", "null-content"])
def test_credentials_in_the_url_never_reach_the_error_text(respond: Any) -> None:
    with FakeJudgeServer("raw", respond) as srv:
        host = srv.url.removeprefix("http://")
        writer = LLMCorpusWriter(base_url=_url(host), model="m")  # a password or a key: not both
        with pytest.raises(CorpusError) as err:
            writer.write(balanced_assignment(16, 3)[:1], sleep=lambda s: None)
    _assert_no_credentials(err.value, writer, host)
    # the query (the server's own key scheme) still arrives, after the path
    assert srv.calls[0].path == f"/v1/chat/completions?api_key={_QKEY}&api-version=2024-06-01"


def test_an_endpoint_that_never_answers_fails_fast_without_credentials() -> None:
    host = _dead_host()
    writer = LLMCorpusWriter(base_url=_url(host), model="m")  # a password or a key: not both
    slept: list[float] = []
    with pytest.raises(CorpusError, match="never answered") as err:
        writer.write(balanced_assignment(16, 3)[:2], sleep=slept.append)
    assert err.value.fatal and slept == []  # a wrong URL or port is not retried
    _assert_no_credentials(err.value, writer, host)


def test_bad_settings_fail_before_any_call() -> None:
    with pytest.raises(ConfigError, match="http") as err:
        LLMCorpusWriter(base_url=f"ftp://u:{_PW}@h/v1", model="m")
    assert _PW not in str(err.value)
    with pytest.raises(ConfigError, match="max_retries"):
        LLMCorpusWriter(base_url="http://127.0.0.1:9/v1", model="m", http_retries=-1)
    with pytest.raises(ConfigError, match="timeout_s"):
        LLMCorpusWriter(base_url="http://127.0.0.1:9/v1", model="m", timeout_s=0)
    for t in (float("nan"), "hot", 99, -0.5, True):  # NaN failed at the first call, unnamed
        with pytest.raises(ConfigError, match="temperature must be a number in 0-2"):
            LLMCorpusWriter(base_url="http://127.0.0.1:9/v1", model="m",
                            temperature=t)  # type: ignore[arg-type]


def test_a_key_in_the_url_never_reaches_the_http_librarys_log(
        caplog: pytest.LogCaptureFixture) -> None:
    """httpx logs each request's full URL at INFO, query key and all."""
    import logging

    caplog.set_level(logging.INFO, logger="httpx")
    with FakeJudgeServer("raw", _then_valid()) as srv:
        writer = LLMCorpusWriter(base_url=f"{srv.url}/v1?api_key={_QKEY}", model="m")
        writer.write(balanced_assignment(16, 3)[:1], sleep=lambda s: None)
    lines = [r.getMessage() for r in caplog.records if r.name == "httpx"]
    assert lines and all(_QKEY not in x for x in lines), lines
    assert any("/v1/chat/completions?api_key=[REDACTED]" in x for x in lines), lines


def test_configuration_from_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("VOCENCE_LLM_BASE_URL", "OPENAI_BASE_URL", "VOCENCE_LLM_MODEL",
                 "VOCENCE_LLM_API_KEY", "OPENAI_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    with pytest.raises(ConfigError, match="VOCENCE_LLM_BASE_URL"):
        LLMCorpusWriter.from_env()
    monkeypatch.setenv("VOCENCE_LLM_BASE_URL", "http://127.0.0.1:9/v1")
    monkeypatch.setenv("VOCENCE_LLM_MODEL", "qwen")
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    w = LLMCorpusWriter.from_env()
    assert (w.base_url, w.model, w.api_key) == ("http://127.0.0.1:9/v1", "qwen", KEY)
    assert KEY not in repr(w)


# -- checkpoint and resume: an item that was paid for is never asked for again ------------


def test_a_stopped_writer_keeps_what_it_paid_for_and_resumes(server: _Server,
                                                             tmp_path: Path) -> None:
    out = tmp_path / "llm.jsonl"
    partial = checkpoint_path(out)
    assert partial == tmp_path / "llm.partial.jsonl"
    server.refuse_from = 11  # 2 requests per item: items 1-5 are accepted, then a 401
    with pytest.raises(CorpusError, match="resume") as err:
        generate_llm_corpus(out, 16, 5, base_url=server.url, model="m", api_key=KEY)
    assert str(partial) in str(err.value) and "5 item(s)" in str(err.value)
    assert not out.exists()
    kept = read_corpus(partial, verify=False)
    slots = balanced_assignment(16, 5)
    assert [it.id for it in kept] == [a.id for a in slots[:5]]

    server.refuse_from = None
    asked = len(server.requests)
    digest = generate_llm_corpus(out, 16, 5, base_url=server.url, model="m", api_key=KEY)
    assert len(server.requests) - asked == 2 * 11  # only the 11 missing items are asked
    items = load_benchmark(out)
    assert items[:5] == kept and [it.id for it in items] == [a.id for a in slots]
    assert (tmp_path / "llm.sha256").read_text().startswith(digest)
    assert not partial.exists()


def test_a_line_cut_by_a_kill_is_dropped_and_asked_again(server: _Server,
                                                         tmp_path: Path) -> None:
    out = tmp_path / "llm.jsonl"
    server.refuse_from = 7  # items 1-3 accepted
    with pytest.raises(CorpusError):
        generate_llm_corpus(out, 16, 5, base_url=server.url, model="m", api_key=KEY)
    partial = checkpoint_path(out)
    whole = partial.read_bytes()
    partial.write_bytes(whole[:-40])  # the third line was being written when it was killed
    server.refuse_from = None
    asked = len(server.requests)
    generate_llm_corpus(out, 16, 5, base_url=server.url, model="m", api_key=KEY)
    assert len(server.requests) - asked == 2 * 14
    first_two = [json.loads(line) for line in whole.decode().splitlines()[:2]]
    assert [it.to_corpus_dict() for it in load_benchmark(out)[:2]] == first_two


def _checkpoint_of(server: _Server, tmp_path: Path) -> Path:
    out = tmp_path / "llm.jsonl"
    server.refuse_from = 21  # items 1-10 accepted
    with pytest.raises(CorpusError):
        generate_llm_corpus(out, 16, 5, base_url=server.url, model="m", api_key=KEY)
    server.refuse_from = None
    return checkpoint_path(out)


def _lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def _write_lines(path: Path, rows: list[dict[str, Any]]) -> None:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))


def _same_script_twice(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The rows with a later item given the script of an earlier one of its tier."""
    tier = [(r["difficulty"], r["category"]) for r in rows]
    j = next(j for j in range(1, len(rows)) if tier[j] in tier[:j])
    i = tier.index(tier[j])
    return [*rows[:j], {**rows[j], "text": rows[i]["text"]}, *rows[j + 1:]]


def _other_pace(row: dict[str, Any]) -> dict[str, Any]:
    pace = "fast" if row["traits"]["pace"] == "slow" else "slow"
    return {**row, "traits": {**row["traits"], "pace": pace}}


@pytest.mark.parametrize("seed, edit, says", [
    (6, lambda rows: rows, "written for another assignment"),  # resumed with another seed
    (5, lambda rows: [_other_pace(rows[0]), *rows[1:]], "written for another assignment"),
    (5, lambda rows: [*rows, rows[0]], "appears twice"),
    (5, lambda rows: [{**rows[0], "text": "I am so happy today!"}, *rows[1:]],
     "fails the checker"),
    (5, lambda rows: _same_script_twice(rows), "repeats the script"),
])
def test_a_checkpoint_that_does_not_fit_is_refused_before_any_call(
        server: _Server, tmp_path: Path, seed: int, edit: Any, says: str) -> None:
    partial = _checkpoint_of(server, tmp_path)
    _write_lines(partial, edit(_lines(partial)))
    asked = len(server.requests)
    with pytest.raises(CorpusError, match=says) as err:
        generate_llm_corpus(tmp_path / "llm.jsonl", 16, seed, base_url=server.url, model="m",
                            api_key=KEY)
    assert str(partial) in str(err.value)
    assert len(server.requests) == asked  # nothing was asked, nothing was paid
    assert partial.exists()


def test_a_corpus_freeze_refuses_keeps_the_checkpoint(server: _Server, tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    import vocencebench.corpus_llm as corpus_llm

    def refuse(items: Any, path: Any, **kw: Any) -> str:
        raise CorpusError("refusing to freeze: 1 violation(s), e.g. an example.")

    monkeypatch.setattr(corpus_llm, "freeze", refuse)
    out = tmp_path / "llm.jsonl"
    with pytest.raises(CorpusError, match="16 item\\(s\\) accepted so far are kept"):
        generate_llm_corpus(out, 16, 5, base_url=server.url, model="m", api_key=KEY)
    assert len(read_corpus(checkpoint_path(out), verify=False)) == 16


# -- the opening-variety rule of `corpus check`, applied while writing and freezing -------


def test_the_writer_asks_for_another_opening_and_freezes_what_corpus_check_passes(
        server: _Server, tmp_path: Path) -> None:
    server.plain_openings = True  # a formulaic model: "Voice a 34-year-old man ..." each time
    out = tmp_path / "llm.jsonl"
    generate_llm_corpus(out, 16, 5, base_url=server.url, model="m", api_key=KEY)
    items = load_benchmark(out)
    assert check_corpus(items, max_opening_share=MAX_OPENING_SHARE) == []
    sent_back = [m["content"] for r in server.requests for m in r["messages"]
                 if m["role"] == "user" and "four-word opening" in m["content"]]
    assert sent_back, "a repeated opening was never sent back"
    assert "already begins 1 item(s)" in sent_back[0]


def test_without_the_opening_rule_repeated_openings_are_kept(server: _Server,
                                                             tmp_path: Path) -> None:
    server.plain_openings = True
    out = tmp_path / "llm.jsonl"
    generate_llm_corpus(out, 16, 5, base_url=server.url, model="m", api_key=KEY,
                        max_opening_share=None)
    items = load_benchmark(out)
    assert check_corpus(items) == []
    assert check_corpus(items, max_opening_share=MAX_OPENING_SHARE) != []
    assert len(server.requests) == 32  # one rejected answer per item, no opening complaint


@pytest.mark.parametrize("share", [0.0, -0.1, 1.5, float("nan")])
def test_a_bad_opening_share_is_refused_before_any_call(server: _Server, tmp_path: Path,
                                                       share: float) -> None:
    with pytest.raises(ConfigError, match="max_opening_share"):
        generate_llm_corpus(tmp_path / "c.jsonl", 16, 5, base_url=server.url, model="m",
                            api_key=KEY, max_opening_share=share)
    assert server.requests == []


def test_freeze_applies_the_opening_rule_when_asked(tmp_path: Path) -> None:
    items = generate_template_corpus(40, 3)  # three instruction frames: formulaic openings
    freeze(items, tmp_path / "t.jsonl")
    with pytest.raises(CorpusError, match="opening"):
        freeze(items, tmp_path / "u.jsonl", max_opening_share=MAX_OPENING_SHARE)
    assert not (tmp_path / "u.jsonl").exists()
