"""corpus_llm against a real OpenAI-compatible HTTP server on 127.0.0.1."""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from vocencebench.corpus import balanced_assignment, load_benchmark
from vocencebench.corpus_llm import LLMCorpusWriter, generate_llm_corpus
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


def _good(persona: str, k: int) -> dict[str, str]:
    t = dict(re.findall(r"(\w+)=([\w]+)", persona))
    young = int(t["age"]) < 18
    noun = ("boy" if young else "man") if t["gender"] == "male" else (
        "girl" if young else "woman")
    emo = "emotionally neutral" if t["emotion"] == "neutral" else (
        "disgusted" if t["emotion"] == "disgust" else t["emotion"])
    instruction = (f"Voice a {t['age']}-year-old {noun} with a {t['accent']} accent, {emo}, "
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
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                outer.requests.append(body)
                outer.headers.append(dict(self.headers))
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
                    answer = "```json\n" + json.dumps(_good(persona, k)) + "\n```"
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
    t = threading.Thread(target=s.httpd.serve_forever, daemon=True)
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
    writer = LLMCorpusWriter(base_url=server.url, model="m", api_key=None)
    items = writer.write(balanced_assignment(16, 2)[:1])
    assert len(items) == 1 and "Authorization" not in server.headers[0]


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
