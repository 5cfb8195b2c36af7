"""Test helpers for the judge and the other HTTP services: clips and real HTTP servers on
127.0.0.1.

:class:`FakeJudgeServer` speaks the Gemini ``generateContent`` API (``api="gemini"``), the
OpenAI chat-completions API (``"openai"``) or any JSON-in API (``"raw"``: the speech and
transcription fakes), records every request (path, headers, JSON body, the audio parts in the
order they were sent, the text parts) and answers with whatever its ``respond`` callable
returns for that call: a :class:`Reply` (status, JSON body or raw bytes, headers, delay) — or
a misbehaving server: trickling the answer byte by byte, cutting the body short of its
``Content-Length``, or closing the connection without an answer.
"""

from __future__ import annotations

import base64
import io
import json
import threading
import time
import wave
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import numpy as np

from vocencebench.schema import Item, ProbeResult

KEY = "sk-test-SECRET-0123456789abcdef"


def tone_wav(freq_hz: float, *, seconds: float = 1.0, rate: int = 16_000) -> bytes:
    """A mono 16-bit WAV sine tone (amplitude 0.5)."""
    t = np.arange(int(seconds * rate)) / rate
    pcm = np.round(0.5 * np.sin(2 * np.pi * freq_hz * t) * 32767).astype("<i2")
    buf = io.BytesIO()
    with wave.open(buf, "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(2)
        w.setframerate(rate)
        w.writeframes(pcm.tobytes())
    return buf.getvalue()


CLIP_X = tone_wav(220.0)
CLIP_Y = tone_wav(330.0)


def answer(
    winner: str, score_a: int, score_b: int, confidence: float = 0.8, **extra: Any
) -> dict[str, Any]:
    """A valid one-dimension answer in presentation labels."""
    return {
        "analysis_a": f"first clip, scored {score_a}",
        "analysis_b": f"second clip, scored {score_b}",
        "score_a": score_a,
        "score_b": score_b,
        "winner": winner,
        "confidence": confidence,
        **extra,
    }


@dataclass
class Call:
    """One request the server received."""

    path: str
    headers: dict[str, str]
    body: dict[str, Any]
    audio: list[bytes]
    texts: list[str]
    index: int


@dataclass
class Reply:
    """What the server answers: ``text`` is the model's text (wrapped in the API's envelope)
    unless ``body`` (a raw JSON envelope) or ``raw`` (raw response bytes) is given.

    Misbehaviour: ``trickle_s`` sends the whole answer (status line, headers, body) one byte
    every ``trickle_s`` seconds; ``truncate_to`` declares the full ``Content-Length`` but sends
    only that many body bytes, then closes; ``reset`` closes the connection without answering.
    """

    text: str | None = None
    status: int = 200
    body: Any = None
    raw: bytes | None = None
    headers: dict[str, str] = field(default_factory=dict)
    delay_s: float = 0.0
    usage: dict[str, int] = field(default_factory=dict)
    content_type: str = "application/json"
    trickle_s: float = 0.0
    truncate_to: int | None = None
    reset: bool = False


def gemini_envelope(text: str, usage: dict[str, int]) -> dict[str, Any]:
    meta: dict[str, Any] = {
        "promptTokenCount": usage.get("prompt", 1000),
        "candidatesTokenCount": usage.get("output", 100),
        "thoughtsTokenCount": usage.get("thinking", 200),
        "totalTokenCount": 0,
    }
    if "audio" in usage:
        meta["promptTokensDetails"] = [
            {"modality": "TEXT", "tokenCount": usage.get("prompt", 1000) - usage["audio"]},
            {"modality": "AUDIO", "tokenCount": usage["audio"]},
        ]
    if "cached" in usage:
        meta["cachedContentTokenCount"] = usage["cached"]
    return {
        "candidates": [
            {
                "content": {"role": "model", "parts": [{"text": text}]},
                "finishReason": "STOP",
            }
        ],
        "usageMetadata": meta,
        "modelVersion": "fake",
    }


def openai_envelope(text: str, usage: dict[str, int]) -> dict[str, Any]:
    u: dict[str, Any] = {
        "prompt_tokens": usage.get("prompt", 1000),
        "completion_tokens": usage.get("output", 100) + usage.get("thinking", 0),
        "total_tokens": 0,
    }
    if "thinking" in usage:
        u["completion_tokens_details"] = {"reasoning_tokens": usage["thinking"]}
    if "audio" in usage or "cached" in usage:
        u["prompt_tokens_details"] = {k: usage[v] for k, v in
                                      (("audio_tokens", "audio"), ("cached_tokens", "cached"))
                                      if v in usage}
    return {
        "id": "chatcmpl-fake",
        "object": "chat.completion",
        "choices": [
            {"index": 0, "message": {"role": "assistant", "content": text},
             "finish_reason": "stop"}
        ],
        "usage": u,
    }


class FakeJudgeServer:
    """A real HTTP server on 127.0.0.1 speaking ``api`` ("gemini" or "openai")."""

    def __init__(self, api: str, respond: Callable[[Call], Reply]) -> None:
        self.api = api
        self.respond = respond
        self.calls: list[Call] = []
        self.in_flight = 0
        self.max_in_flight = 0
        self._lock = threading.Lock()
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:
                return None

            def do_POST(self) -> None:
                n = int(self.headers.get("content-length", "0"))
                data = self.rfile.read(n)
                try:
                    body = json.loads(data)
                except ValueError:  # multipart (transcription) or other non-JSON uploads
                    body = {"_raw": data}
                with server._lock:
                    call = server._record(self.path, dict(self.headers.items()), body)
                    server.in_flight += 1
                    server.max_in_flight = max(server.max_in_flight, server.in_flight)
                # A call is in flight until its reply starts to go out: the client cannot
                # hear the end of it before that, so a next call it sends (one semaphore
                # slot freed) is never counted beside the one it follows. Counting until the
                # handler thread returns raced the client, which reads content-length bytes
                # and moves on while this thread is still closing the socket.
                answered = False

                def done() -> None:
                    nonlocal answered
                    if not answered:
                        answered = True
                        with server._lock:
                            server.in_flight -= 1

                try:
                    reply = server.respond(call)
                    if reply.delay_s:
                        time.sleep(reply.delay_s)
                    done()
                    if reply.reset:
                        self.close_connection = True
                        return
                    if reply.raw is not None:
                        payload = reply.raw
                    elif reply.body is not None:
                        payload = json.dumps(reply.body).encode()
                    else:
                        env = gemini_envelope if server.api == "gemini" else openai_envelope
                        payload = json.dumps(env(reply.text or "", reply.usage)).encode()
                    head = [f"HTTP/1.1 {reply.status} X",
                            f"content-type: {reply.content_type}",
                            f"content-length: {len(payload)}", "connection: close",
                            *(f"{k}: {v}" for k, v in reply.headers.items())]
                    raw = ("\r\n".join(head) + "\r\n\r\n").encode("latin-1")
                    if reply.truncate_to is not None:
                        payload = payload[: reply.truncate_to]
                        self.close_connection = True
                    if reply.trickle_s:
                        for i in range(len(raw + payload)):
                            self.wfile.write((raw + payload)[i : i + 1])
                            self.wfile.flush()
                            time.sleep(reply.trickle_s)
                    else:
                        self.wfile.write(raw + payload)
                except (BrokenPipeError, ConnectionResetError):
                    self.close_connection = True
                finally:
                    done()

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        self._thread = threading.Thread(
            target=self.httpd.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        )

    def _record(self, path: str, headers: dict[str, str], body: dict[str, Any]) -> Call:
        audio: list[bytes] = []
        texts: list[str] = []
        if self.api == "raw":
            pass
        elif self.api == "gemini":
            for part in body["contents"][0]["parts"]:
                if "inline_data" in part:
                    assert part["inline_data"]["mime_type"] == "audio/wav"
                    audio.append(base64.b64decode(part["inline_data"]["data"]))
                else:
                    texts.append(part["text"])
        else:
            for part in body["messages"][-1]["content"]:
                if part["type"] == "input_audio":
                    assert part["input_audio"]["format"] == "wav"
                    audio.append(base64.b64decode(part["input_audio"]["data"]))
                else:
                    texts.append(part["text"])
        call = Call(path, {k.lower(): v for k, v in headers.items()}, body, audio, texts,
                    len(self.calls))
        self.calls.append(call)
        return call

    def __enter__(self) -> FakeJudgeServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
        self._thread.join(timeout=5)


def gemini_usage_reply(meta: Any) -> Reply:
    """A good Gemini answer (A wins 3 to 1) whose ``usageMetadata`` is ``meta`` (``...``:
    none at all), for the metering tests."""
    body: dict[str, Any] = {"candidates": [{"content": {"role": "model", "parts": [
        {"text": json.dumps(answer("A", 3, 1))}]}, "finishReason": "STOP"}]}
    if meta is not ...:
        body["usageMetadata"] = meta
    return Reply(body=body)


def compare_once(judge: Any) -> Any:
    """One comparison of CLIP_X and CLIP_Y in a single order (one call)."""
    return judge.compare(text="The old lighthouse stood watch over the restless grey sea.",
                         instruction="a calm elderly British man, speaking slowly and warmly",
                         audio_a=CLIP_X, audio_b=CLIP_Y, consistent=False)


def prefers(clip: bytes, high: int = 3, low: int = 1) -> Callable[[Call], Reply]:
    """A judge that always prefers ``clip``, wherever it is played."""

    def respond(call: Call) -> Reply:
        if call.audio[0] == clip:
            return Reply(json.dumps(answer("A", high, low)))
        return Reply(json.dumps(answer("B", low, high)))

    return respond


def position_biased(call: Call) -> Reply:
    """A judge that always prefers whatever it hears first."""
    return Reply(json.dumps(answer("A", 2, 1)))


# -- a system and a probe for runs that exercise the judge, not the audio

class Tone:
    """A fast system: a sine tone whose pitch depends on the item (deterministic)."""

    def __init__(self, base: float, name: str) -> None:
        self.base = base
        self.system_id = f"tone:{name}"

    def __call__(self, text: str, instruction: str) -> bytes:
        return tone_wav(self.base + 10 * (len(text) % 7), seconds=0.5 + 0.01 * (len(text) % 5))


class PitchProbe:
    """Measures "pitch" as the clip's length bucket: cheap and deterministic."""

    name, version, traits = "fake-pitch", "1", ("pitch",)

    def measure(self, audio: Any, item: Item) -> dict[str, ProbeResult]:
        label = "high" if audio.duration > 0.52 else "low"
        d = 1.0 if item.traits["pitch"] == label else 0.5
        return {"pitch": ProbeResult("pitch", audio.duration, "s", label, d, "fake-pitch@1")}
