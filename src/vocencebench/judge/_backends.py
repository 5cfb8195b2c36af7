"""Judge backends: one request in, one text reply out, with usage, cost and retries.

A backend is anything with ``model`` and ``complete(request) -> JudgeReply``
(:class:`JudgeBackend`); ``acomplete`` (:class:`AsyncJudgeBackend`) is the optional async
twin. Shipped implementations:

* :class:`GeminiBackend`      Gemini ``generateContent`` over raw HTTP (httpx), inline audio
* :class:`OpenAIChatBackend`  any OpenAI-compatible ``/v1/chat/completions`` server with
                              ``input_audio`` parts (e.g. vLLM serving Qwen2.5-Omni)
* :class:`ScriptedBackend`    canned answers, for tests of code that uses a judge (offline)

All three keep a running :class:`Usage` (``backend.usage``) and price it with a dated,
overridable :class:`Price` table (``backend.cost_usd()``). The HTTP backends retry 429, 5xx
and connection errors/timeouts with exponential backoff (honouring ``Retry-After``), and stop
with :class:`~vocencebench.errors.BudgetExceededError` *before* a call that could cross the
spend cap. API keys are held privately: never logged, never in ``repr``, never in an error.
"""

from __future__ import annotations

import abc
import asyncio
import base64
import email.utils
import json
import logging
import math
import struct
import threading
import time
from collections.abc import Awaitable, Callable, Iterable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any, Protocol, runtime_checkable

import httpx

from ..errors import BudgetExceededError, ConfigError, JudgeError, JudgeResponseError

__all__ = [
    "AUDIO_TOKENS_PER_SECOND",
    "PRICES",
    "PRICES_AS_OF",
    "AsyncJudgeBackend",
    "AudioInput",
    "CallUsage",
    "GeminiBackend",
    "JudgeBackend",
    "JudgeReply",
    "JudgeRequest",
    "OpenAIChatBackend",
    "Price",
    "ScriptedBackend",
    "Usage",
    "wav_duration_s",
]

log = logging.getLogger("vocencebench.judge")

#: Gemini bills audio input at about this many tokens per second of audio.
AUDIO_TOKENS_PER_SECOND = 32
#: HTTP statuses that are retried (rate limit, transient server errors).
RETRY_STATUSES = frozenset({408, 429, 500, 502, 503, 504})
#: Date of the built-in price table (USD per million tokens, paid tier, ≤200k-token prompts).
PRICES_AS_OF = "2026-10-11"


# ---------------------------------------------------------------------------- data types


@dataclass(frozen=True)
class AudioInput:
    """One clip in a request: WAV bytes, its MIME type and the blind label it is shown as."""

    data: bytes = field(repr=False)
    label: str
    mime: str = "audio/wav"

    @property
    def duration_s(self) -> float | None:
        """Duration in seconds read from the WAV header, or None if it cannot be read."""
        return wav_duration_s(self.data)


@dataclass(frozen=True)
class JudgeRequest:
    """Everything a backend sends: system text, user parts in order, answer schema.

    ``parts`` interleaves text and :class:`AudioInput` in the order the judge hears them.
    ``temperature`` is the sampling temperature (0 = greedy); ``seed`` a sampling seed
    where the backend supports one (the vote index).
    """

    system: str
    parts: tuple[str | AudioInput, ...]
    schema: dict[str, Any]
    schema_name: str = "vocencebench_verdict"
    temperature: float = 0.0
    seed: int | None = None

    def audio(self) -> tuple[AudioInput, ...]:
        """The audio parts, in order."""
        return tuple(p for p in self.parts if isinstance(p, AudioInput))


@dataclass(frozen=True)
class CallUsage:
    """Tokens one call used, as the provider reported them.

    ``prompt_tokens`` includes audio; ``audio_tokens`` is the audio share where reported
    (else None); ``thinking_tokens`` are billed as output by Gemini.
    """

    prompt_tokens: int = 0
    output_tokens: int = 0
    thinking_tokens: int = 0
    audio_tokens: int | None = None


@dataclass(frozen=True)
class JudgeReply:
    """A backend's answer: the model's text, the tokens it cost, and the model that answered."""

    text: str
    usage: CallUsage
    model: str


@dataclass(frozen=True)
class Usage:
    """Running totals of a backend (tokens are counts; ``cost_usd`` in US dollars).

    ``calls`` are answered (billed) calls; ``failures`` are judgements that produced no usable
    answer (transport failure after retries, refused or invalid answer); ``retries`` counts
    re-sent HTTP requests.
    """

    prompt_tokens: int = 0
    output_tokens: int = 0
    thinking_tokens: int = 0
    audio_tokens: int = 0
    calls: int = 0
    failures: int = 0
    retries: int = 0
    cost_usd: float = 0.0


@dataclass(frozen=True)
class Price:
    """USD per million tokens for one model, as of ``as_of`` (ISO date) from ``source``.

    ``audio_input`` prices audio prompt tokens (defaults to ``input``); thinking tokens are
    billed at ``output``. Prompts above ``long_context_tokens`` use the ``*_long`` rates.
    """

    input: float
    output: float
    audio_input: float | None = None
    long_context_tokens: int | None = None
    input_long: float | None = None
    output_long: float | None = None
    as_of: str = PRICES_AS_OF
    source: str = ""

    def cost(self, usage: CallUsage) -> float:
        """Cost of one call in USD."""
        cap = self.long_context_tokens
        long = cap is not None and usage.prompt_tokens > cap
        p_in = (self.input_long or self.input) if long else self.input
        p_out = (self.output_long or self.output) if long else self.output
        p_audio = p_in if self.audio_input is None or long else self.audio_input
        audio = min(usage.audio_tokens or 0, usage.prompt_tokens)
        text = usage.prompt_tokens - audio
        out = usage.output_tokens + usage.thinking_tokens
        return (text * p_in + audio * p_audio + out * p_out) / 1e6


_GOOGLE = "ai.google.dev/gemini-api/docs/pricing"
#: Built-in prices (USD / 1M tokens, paid tier). Check the provider's page before relying on
#: them, and pass ``prices={model: Price(...)}`` to override or add a model.
PRICES: dict[str, Price] = {
    "gemini-3.1-pro-preview": Price(2.00, 12.00, long_context_tokens=200_000,
                                    input_long=4.00, output_long=18.00, source=_GOOGLE),
    "gemini-3-pro-preview": Price(2.00, 12.00, long_context_tokens=200_000,
                                  input_long=4.00, output_long=18.00, source=_GOOGLE),
    "gemini-2.5-pro": Price(1.25, 10.00, long_context_tokens=200_000,
                            input_long=2.50, output_long=15.00, source=_GOOGLE),
    "gemini-2.5-flash": Price(0.30, 2.50, audio_input=1.00, source=_GOOGLE),
}


def wav_duration_s(data: bytes) -> float | None:
    """Duration (seconds) of RIFF/WAVE bytes from the header, or None if unreadable."""
    if len(data) < 12 or data[:4] != b"RIFF" or data[8:12] != b"WAVE":
        return None
    pos, byte_rate, size = 12, 0, None
    while pos + 8 <= len(data):
        cid = data[pos : pos + 4]
        clen = int(struct.unpack("<I", data[pos + 4 : pos + 8])[0])
        body = pos + 8
        if cid == b"fmt " and clen >= 12 and body + 12 <= len(data):
            byte_rate = int(struct.unpack("<I", data[body + 8 : body + 12])[0])
        elif cid == b"data":
            size = min(clen, len(data) - body)
            break
        pos = body + clen + (clen & 1)
    if not byte_rate or size is None:
        return None
    return size / byte_rate


# ---------------------------------------------------------------------------- protocols


@runtime_checkable
class JudgeBackend(Protocol):
    """Sends one :class:`JudgeRequest` to a model and returns its :class:`JudgeReply`.

    Raise :class:`~vocencebench.errors.JudgeError` when no answer could be obtained and
    :class:`~vocencebench.errors.JudgeResponseError` when the answer carries no text.
    """

    model: str

    def complete(self, request: JudgeRequest) -> JudgeReply: ...


@runtime_checkable
class AsyncJudgeBackend(Protocol):
    """The async twin of :class:`JudgeBackend` (used by ``Judge.acompare``)."""

    model: str

    async def acomplete(self, request: JudgeRequest) -> JudgeReply: ...


# ---------------------------------------------------------------------------- metering


class _Meter:
    """Thread-safe usage totals, pricing and the spend cap of one backend."""

    def __init__(self, model: str, price: Price | None, spend_cap_usd: float | None) -> None:
        if spend_cap_usd is not None:
            if not (math.isfinite(spend_cap_usd) and spend_cap_usd > 0):
                raise ConfigError(f"spend_cap_usd must be a positive number, got {spend_cap_usd}")
            if price is None:
                raise ConfigError(
                    f"a spend cap needs a price for model {model!r}; pass "
                    "prices={model: Price(input=..., output=...)}"
                )
        self.model = model
        self.price = price
        self.spend_cap_usd = spend_cap_usd
        self._lock = threading.Lock()
        self._u = Usage()
        self._reserved = 0.0
        self._largest_call = 0.0

    def snapshot(self) -> Usage:
        with self._lock:
            return self._u

    def cost_usd(self) -> float:
        if self.price is None:
            raise ConfigError(
                f"no price for model {self.model!r} (built-in prices dated {PRICES_AS_OF}: "
                f"{', '.join(PRICES)}); pass prices={{model: Price(input=..., output=...)}}"
            )
        return self.snapshot().cost_usd

    def estimate(self, request: JudgeRequest) -> float:
        """A cautious cost projection for ``request`` (USD): never below the largest call."""
        if self.price is None:
            return 0.0
        text_chars = len(request.system) + len(json.dumps(request.schema)) + sum(
            len(p) for p in request.parts if isinstance(p, str)
        )
        audio = sum(
            math.ceil((a.duration_s or len(a.data) / 32_000) * AUDIO_TOKENS_PER_SECOND)
            for a in request.audio()
        )
        guess = CallUsage(
            prompt_tokens=text_chars // 3 + audio, output_tokens=2048, audio_tokens=audio
        )
        return max(self.price.cost(guess), self._largest_call)

    def reserve(self, amount: float) -> None:
        if self.spend_cap_usd is None:
            return
        with self._lock:
            spent = self._u.cost_usd
            if spent + self._reserved + amount > self.spend_cap_usd:
                raise BudgetExceededError(
                    f"judge spend cap ${self.spend_cap_usd:.4f} reached: spent "
                    f"${spent:.4f}, ${self._reserved:.4f} in flight, next call up to "
                    f"${amount:.4f}. Raise the cap to continue; finished verdicts are kept."
                )
            self._reserved += amount

    def release(self, amount: float) -> None:
        if self.spend_cap_usd is None:
            return
        with self._lock:
            self._reserved = max(0.0, self._reserved - amount)

    def record(self, usage: CallUsage) -> None:
        cost = self.price.cost(usage) if self.price is not None else 0.0
        with self._lock:
            u = self._u
            self._largest_call = max(self._largest_call, cost)
            self._u = Usage(
                prompt_tokens=u.prompt_tokens + usage.prompt_tokens,
                output_tokens=u.output_tokens + usage.output_tokens,
                thinking_tokens=u.thinking_tokens + usage.thinking_tokens,
                audio_tokens=u.audio_tokens + (usage.audio_tokens or 0),
                calls=u.calls + 1,
                failures=u.failures,
                retries=u.retries,
                cost_usd=u.cost_usd + cost,
            )

    def bump(self, *, failures: int = 0, retries: int = 0) -> None:
        with self._lock:
            u = self._u
            self._u = replace(u, failures=u.failures + failures, retries=u.retries + retries)


class _Metered:
    """Mixin giving a backend ``usage``, ``cost_usd()`` and ``record_failure()``."""

    _meter: _Meter

    @property
    def usage(self) -> Usage:
        """Running totals (a frozen snapshot)."""
        return self._meter.snapshot()

    def cost_usd(self) -> float:
        """Spend so far in USD, from the provider's token counts and the price table."""
        return self._meter.cost_usd()

    def record_failure(self) -> None:
        """Count a judgement that produced no usable answer (called by the judge)."""
        self._meter.bump(failures=1)


# ---------------------------------------------------------------------------- HTTP backends


def _retry_after_s(value: str | None) -> float | None:
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


class _RateLimiter:
    """Spaces the starts of HTTP requests at least ``60 / requests_per_minute`` seconds
    apart, across threads (a client-side rate limit; the server's 429s are still honoured)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._next = 0.0
        self.interval_s = 0.0

    def set(self, requests_per_minute: float | None) -> None:
        if requests_per_minute is None:
            self.interval_s = 0.0
            return
        if not (math.isfinite(requests_per_minute) and requests_per_minute > 0):
            raise ConfigError(
                f"requests_per_minute must be a positive number, got {requests_per_minute}"
            )
        self.interval_s = 60.0 / requests_per_minute

    def delay(self) -> float:
        """Seconds to wait before the next request may start (reserves its slot)."""
        if not self.interval_s:
            return 0.0
        with self._lock:
            now = time.monotonic()
            start = max(now, self._next)
            self._next = start + self.interval_s
            return start - now


class _HTTPBackend(_Metered, abc.ABC):
    """Shared request loop of the HTTP backends: timeouts, retries, budget, accounting."""

    kind = "http"

    def __init__(
        self,
        *,
        model: str,
        base_url: str,
        api_key: str | None,
        price: Price | None,
        timeout_s: float,
        max_retries: int,
        backoff_s: float,
        max_backoff_s: float,
        max_retry_after_s: float,
        spend_cap_usd: float | None,
        transport: httpx.BaseTransport | None,
        async_transport: httpx.AsyncBaseTransport | None,
        sleep: Callable[[float], None] | None,
        async_sleep: Callable[[float], Awaitable[None]] | None,
    ) -> None:
        if not model:
            raise ConfigError("a judge backend needs a model name")
        if timeout_s <= 0 or max_retries < 0 or backoff_s < 0:
            raise ConfigError("timeout_s must be > 0, max_retries and backoff_s >= 0")
        self.model = model
        self.base_url = base_url.rstrip("/")
        self._api_key = api_key
        self.timeout_s = float(timeout_s)
        self.max_retries = int(max_retries)
        self.backoff_s = float(backoff_s)
        self.max_backoff_s = float(max_backoff_s)
        self.max_retry_after_s = float(max_retry_after_s)
        self._transport = transport
        self._async_transport = async_transport
        self._sleep = sleep or time.sleep
        self._async_sleep = async_sleep or asyncio.sleep
        self._client: httpx.Client | None = None
        self._client_lock = threading.Lock()
        self._meter = _Meter(model, price, spend_cap_usd)
        self._limiter = _RateLimiter()

    def set_rate_limit(self, requests_per_minute: float | None) -> None:
        """Start at most ``requests_per_minute`` HTTP requests per minute (None: no limit)."""
        self._limiter.set(requests_per_minute)

    @property
    def requests_per_minute(self) -> float | None:
        """The client-side rate limit, or None."""
        iv = self._limiter.interval_s
        return 60.0 / iv if iv else None

    # -- subclass hooks
    @abc.abstractmethod
    def _url(self) -> str: ...

    @abc.abstractmethod
    def _headers(self) -> dict[str, str]: ...

    @abc.abstractmethod
    def _payload(self, request: JudgeRequest) -> dict[str, Any]: ...

    @abc.abstractmethod
    def _read(self, body: Any) -> tuple[CallUsage | None, str | None, str]:
        """(usage, text, why-no-text) from a 200 response body."""

    # -- plumbing
    @property
    def spend_cap_usd(self) -> float | None:
        """The spend cap in USD, or None."""
        return self._meter.spend_cap_usd

    @property
    def price(self) -> Price | None:
        """The price used for ``cost_usd()``."""
        return self._meter.price

    def __repr__(self) -> str:
        key = "set" if self._api_key else "none"
        return (f"{type(self).__name__}(model={self.model!r}, base_url={self.base_url!r}, "
                f"api_key={key})")

    def _timeout(self) -> httpx.Timeout:
        return httpx.Timeout(self.timeout_s, connect=min(10.0, self.timeout_s))

    def _sync_client(self) -> httpx.Client:
        with self._client_lock:
            if self._client is None:
                self._client = httpx.Client(timeout=self._timeout(), transport=self._transport)
            return self._client

    def close(self) -> None:
        """Close the HTTP connection pool."""
        with self._client_lock:
            if self._client is not None:
                self._client.close()
                self._client = None

    def __enter__(self) -> _HTTPBackend:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _wait_for(self, attempt: int, retry_after: str | None) -> float:
        asked = _retry_after_s(retry_after)
        if asked is not None:
            if asked > self.max_retry_after_s:
                raise JudgeError(
                    f"{self.kind} judge: the server asked to wait {asked:.0f} s (Retry-After), "
                    f"more than max_retry_after_s={self.max_retry_after_s:.0f}; try later"
                )
            return asked
        return float(min(self.max_backoff_s, self.backoff_s * 2.0**attempt))

    def _handle(self, resp: httpx.Response) -> JudgeReply:
        try:
            body = resp.json()
        except (json.JSONDecodeError, UnicodeDecodeError) as exc:
            raise JudgeResponseError(
                f"{self.kind} judge returned HTTP 200 with a body that is not JSON"
            ) from exc
        usage, text, why = self._read(body)
        if usage is not None:
            self._meter.record(usage)
        if text is None:
            raise JudgeResponseError(f"{self.kind} judge ({self.model}) gave no answer: {why}")
        return JudgeReply(text=text, usage=usage or CallUsage(), model=self.model)

    def _status_error(self, resp: httpx.Response) -> JudgeError:
        detail = resp.text[:300].replace("\n", " ")
        hint = {
            400: "the request was rejected; check the model supports audio input",
            401: "check the API key",
            403: "check the API key and that the model is enabled for it",
            404: "check the model name and base URL",
        }.get(resp.status_code, "see the server's message")
        return JudgeError(
            f"{self.kind} judge ({self.model}): HTTP {resp.status_code} from {self._url()}: "
            f"{detail} — {hint}"
        )

    def _attempt_outcome(
        self, attempt: int, resp: httpx.Response | None, error: Exception | None
    ) -> tuple[JudgeReply | None, str, float]:
        """What one POST came to: ``(reply, "", 0)`` on success, else ``(None, why, wait s)``
        for a transient failure (``resp`` is None after a transport ``error``); any other
        HTTP status is raised at once."""
        if resp is None:
            return None, type(error).__name__, self._wait_for(attempt, None)
        if resp.status_code == 200:
            return self._handle(resp), "", 0.0
        if resp.status_code not in RETRY_STATUSES:
            raise self._status_error(resp)
        return (None, f"HTTP {resp.status_code}",
                self._wait_for(attempt, resp.headers.get("retry-after")))

    def _retrying(self, attempt: int, last: str, wait: float) -> bool:
        """Whether another attempt follows this failed one (logged and counted if so)."""
        if attempt == self.max_retries:
            return False
        log.info("%s judge: %s; retrying in %.2f s", self.kind, last, wait)
        self._meter.bump(retries=1)
        return True

    def _gave_up(self, url: str, last: str) -> JudgeError:
        return JudgeError(
            f"{self.kind} judge ({self.model}): {last} after {self.max_retries + 1} "
            f"attempts to {url}; check the server, or raise max_retries/timeout_s"
        )

    def _count_failure(self, exc: JudgeError) -> None:
        if not isinstance(exc, BudgetExceededError):
            self._meter.bump(failures=1)

    def complete(self, request: JudgeRequest) -> JudgeReply:
        """Send ``request``, retrying transient failures; see the module docstring."""
        url, payload = self._url(), self._payload(request)
        estimate = self._meter.estimate(request)
        self._meter.reserve(estimate)
        try:
            client = self._sync_client()
            last = ""
            for attempt in range(self.max_retries + 1):
                log.debug("%s judge: POST %s (model %s, attempt %d)", self.kind, url,
                          self.model, attempt + 1)
                pause = self._limiter.delay()
                if pause > 0:
                    self._sleep(pause)
                resp: httpx.Response | None = None
                error: Exception | None = None
                try:
                    resp = client.post(url, json=payload, headers=self._headers())
                except httpx.TransportError as exc:
                    error = exc
                reply, last, wait = self._attempt_outcome(attempt, resp, error)
                if reply is not None:
                    return reply
                if not self._retrying(attempt, last, wait):
                    break
                self._sleep(wait)
            raise self._gave_up(url, last)
        except JudgeError as exc:
            self._count_failure(exc)
            raise
        finally:
            self._meter.release(estimate)

    async def acomplete(self, request: JudgeRequest) -> JudgeReply:
        """Async :meth:`complete` (its own short-lived connection pool per call)."""
        url, payload = self._url(), self._payload(request)
        estimate = self._meter.estimate(request)
        self._meter.reserve(estimate)
        try:
            async with httpx.AsyncClient(
                timeout=self._timeout(), transport=self._async_transport
            ) as client:
                last = ""
                for attempt in range(self.max_retries + 1):
                    log.debug("%s judge: POST %s (model %s, attempt %d)", self.kind, url,
                              self.model, attempt + 1)
                    pause = self._limiter.delay()
                    if pause > 0:
                        await self._async_sleep(pause)
                    resp: httpx.Response | None = None
                    error: Exception | None = None
                    try:
                        resp = await client.post(url, json=payload, headers=self._headers())
                    except httpx.TransportError as exc:
                        error = exc
                    reply, last, wait = self._attempt_outcome(attempt, resp, error)
                    if reply is not None:
                        return reply
                    if not self._retrying(attempt, last, wait):
                        break
                    await self._async_sleep(wait)
                raise self._gave_up(url, last)
        except JudgeError as exc:
            self._count_failure(exc)
            raise
        finally:
            self._meter.release(estimate)


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


def _without(obj: Any, key: str) -> Any:
    """A deep copy of a JSON value with every ``key`` entry removed from its objects."""
    if isinstance(obj, Mapping):
        return {k: _without(v, key) for k, v in obj.items() if k != key}
    if isinstance(obj, list):
        return [_without(v, key) for v in obj]
    return obj


def _int(value: Any) -> int:
    return int(value) if isinstance(value, int | float) and not isinstance(value, bool) else 0


class GeminiBackend(_HTTPBackend):
    """Gemini ``POST {base}/v1beta/models/{model}:generateContent`` with inline WAV audio.

    Sends ``generationConfig`` with the temperature, ``responseMimeType: application/json``
    and the answer schema under ``schema_field`` (``responseJsonSchema``, or the older
    ``responseSchema``), plus an optional thinking budget or level. Reads ``usageMetadata``.
    ``timeout_s`` is per HTTP attempt; backoff is ``backoff_s · 2^attempt`` up to
    ``max_backoff_s`` seconds unless the server sends ``Retry-After``.
    """

    kind = "gemini"

    def __init__(
        self,
        model: str,
        api_key: str,
        *,
        base_url: str = "https://generativelanguage.googleapis.com",
        schema_field: str = "responseJsonSchema",
        thinking_budget: int | None = None,
        thinking_level: str | None = None,
        max_output_tokens: int | None = None,
        prices: Mapping[str, Price] | None = None,
        timeout_s: float = 180.0,
        max_retries: int = 5,
        backoff_s: float = 2.0,
        max_backoff_s: float = 60.0,
        max_retry_after_s: float = 600.0,
        spend_cap_usd: float | None = None,
        transport: httpx.BaseTransport | None = None,
        async_transport: httpx.AsyncBaseTransport | None = None,
        sleep: Callable[[float], None] | None = None,
        async_sleep: Callable[[float], Awaitable[None]] | None = None,
    ) -> None:
        if not api_key:
            raise ConfigError("the Gemini judge needs an API key: set GEMINI_API_KEY")
        if schema_field not in ("responseJsonSchema", "responseSchema"):
            raise ConfigError("schema_field must be 'responseJsonSchema' or 'responseSchema'")
        table = {**PRICES, **(prices or {})}
        super().__init__(
            model=model, base_url=base_url, api_key=api_key, price=table.get(model),
            timeout_s=timeout_s, max_retries=max_retries, backoff_s=backoff_s,
            max_backoff_s=max_backoff_s, max_retry_after_s=max_retry_after_s,
            spend_cap_usd=spend_cap_usd, transport=transport, async_transport=async_transport,
            sleep=sleep, async_sleep=async_sleep,
        )
        self.schema_field = schema_field
        self.thinking_budget = thinking_budget
        self.thinking_level = thinking_level
        self.max_output_tokens = max_output_tokens

    def _url(self) -> str:
        return f"{self.base_url}/v1beta/models/{self.model}:generateContent"

    def _headers(self) -> dict[str, str]:
        return {"x-goog-api-key": self._api_key or "", "content-type": "application/json"}

    def _payload(self, request: JudgeRequest) -> dict[str, Any]:
        parts: list[dict[str, Any]] = []
        for p in request.parts:
            if isinstance(p, str):
                parts.append({"text": p})
            else:
                parts.append({"inline_data": {"mime_type": p.mime, "data": _b64(p.data)}})
        schema = request.schema
        if self.schema_field == "responseSchema":  # the OpenAPI subset lacks this keyword
            schema = _without(schema, "additionalProperties")
        config: dict[str, Any] = {
            "temperature": request.temperature,
            "responseMimeType": "application/json",
            self.schema_field: schema,
        }
        if request.seed is not None:
            config["seed"] = request.seed
        if self.max_output_tokens is not None:
            config["maxOutputTokens"] = self.max_output_tokens
        thinking: dict[str, Any] = {}
        if self.thinking_budget is not None:
            thinking["thinkingBudget"] = self.thinking_budget
        if self.thinking_level is not None:
            thinking["thinkingLevel"] = self.thinking_level
        if thinking:
            config["thinkingConfig"] = thinking
        return {
            "systemInstruction": {"parts": [{"text": request.system}]},
            "contents": [{"role": "user", "parts": parts}],
            "generationConfig": config,
        }

    def _read(self, body: Any) -> tuple[CallUsage | None, str | None, str]:
        if not isinstance(body, Mapping):
            return None, None, "response is not a JSON object"
        meta = body.get("usageMetadata")
        usage = None
        if isinstance(meta, Mapping):
            audio = None
            details = meta.get("promptTokensDetails")
            if isinstance(details, list):
                audio = sum(
                    _int(d.get("tokenCount")) for d in details
                    if isinstance(d, Mapping) and d.get("modality") == "AUDIO"
                )
            usage = CallUsage(
                prompt_tokens=_int(meta.get("promptTokenCount")),
                output_tokens=_int(meta.get("candidatesTokenCount")),
                thinking_tokens=_int(meta.get("thoughtsTokenCount")),
                audio_tokens=audio,
            )
        feedback = body.get("promptFeedback")
        if isinstance(feedback, Mapping) and feedback.get("blockReason"):
            return usage, None, f"prompt blocked ({feedback['blockReason']})"
        cands = body.get("candidates")
        if not isinstance(cands, list) or not cands or not isinstance(cands[0], Mapping):
            return usage, None, "no candidates in the response"
        cand = cands[0]
        content = cand.get("content")
        texts: list[str] = []
        if isinstance(content, Mapping) and isinstance(content.get("parts"), list):
            texts = [
                str(p["text"]) for p in content["parts"]
                if isinstance(p, Mapping) and "text" in p and not p.get("thought")
            ]
        if not texts:
            return usage, None, f"empty candidate (finishReason {cand.get('finishReason')})"
        return usage, "".join(texts), ""


class OpenAIChatBackend(_HTTPBackend):
    """An OpenAI-compatible ``POST {base_url}/v1/chat/completions`` server with audio input.

    The user message holds text parts and ``input_audio`` parts (base64 WAV); the answer
    schema goes in ``response_format`` (``json_schema``, strict) unless ``send_schema`` is
    False. Reads ``usage`` (``prompt_tokens``, ``completion_tokens``, reasoning and audio
    token details where present). Self-hosted models cost nothing unless ``price`` is given.
    """

    kind = "openai"

    def __init__(
        self,
        base_url: str,
        model: str,
        api_key: str | None = None,
        *,
        send_schema: bool = True,
        max_tokens: int | None = None,
        price: Price | None = None,
        timeout_s: float = 180.0,
        max_retries: int = 5,
        backoff_s: float = 2.0,
        max_backoff_s: float = 60.0,
        max_retry_after_s: float = 600.0,
        spend_cap_usd: float | None = None,
        transport: httpx.BaseTransport | None = None,
        async_transport: httpx.AsyncBaseTransport | None = None,
        sleep: Callable[[float], None] | None = None,
        async_sleep: Callable[[float], Awaitable[None]] | None = None,
    ) -> None:
        if not base_url.startswith(("http://", "https://")):
            raise ConfigError(f"base_url must start with http:// or https://, got {base_url!r}")
        base = base_url.rstrip("/")
        base = base[: -len("/v1")] if base.endswith("/v1") else base
        super().__init__(
            model=model, base_url=base, api_key=api_key,
            price=price or Price(0.0, 0.0, source="self-hosted (no charge)"),
            timeout_s=timeout_s, max_retries=max_retries, backoff_s=backoff_s,
            max_backoff_s=max_backoff_s, max_retry_after_s=max_retry_after_s,
            spend_cap_usd=spend_cap_usd, transport=transport, async_transport=async_transport,
            sleep=sleep, async_sleep=async_sleep,
        )
        self.send_schema = send_schema
        self.max_tokens = max_tokens

    def _url(self) -> str:
        return f"{self.base_url}/v1/chat/completions"

    def _headers(self) -> dict[str, str]:
        h = {"content-type": "application/json"}
        if self._api_key:
            h["authorization"] = f"Bearer {self._api_key}"
        return h

    def _payload(self, request: JudgeRequest) -> dict[str, Any]:
        content: list[dict[str, Any]] = []
        for p in request.parts:
            if isinstance(p, str):
                content.append({"type": "text", "text": p})
            else:
                fmt = p.mime.split("/", 1)[1].replace("x-", "")
                content.append(
                    {"type": "input_audio", "input_audio": {"data": _b64(p.data), "format": fmt}}
                )
        payload: dict[str, Any] = {
            "model": self.model,
            "messages": [
                {"role": "system", "content": request.system},
                {"role": "user", "content": content},
            ],
            "temperature": request.temperature,
        }
        if request.seed is not None:
            payload["seed"] = request.seed
        if self.max_tokens is not None:
            payload["max_tokens"] = self.max_tokens
        if self.send_schema:
            payload["response_format"] = {
                "type": "json_schema",
                "json_schema": {"name": request.schema_name, "schema": request.schema,
                                "strict": True},
            }
        return payload

    def _read(self, body: Any) -> tuple[CallUsage | None, str | None, str]:
        if not isinstance(body, Mapping):
            return None, None, "response is not a JSON object"
        u = body.get("usage")
        usage = None
        if isinstance(u, Mapping):
            pd = u.get("prompt_tokens_details")
            cd = u.get("completion_tokens_details")
            audio = _int(pd.get("audio_tokens")) if isinstance(pd, Mapping) and \
                pd.get("audio_tokens") is not None else None
            usage = CallUsage(
                prompt_tokens=_int(u.get("prompt_tokens")),
                output_tokens=_int(u.get("completion_tokens")),
                thinking_tokens=_int(cd.get("reasoning_tokens")) if isinstance(cd, Mapping) else 0,
                audio_tokens=audio,
            )
            # OpenAI counts reasoning inside completion_tokens; keep them apart.
            if usage.thinking_tokens and usage.output_tokens >= usage.thinking_tokens:
                usage = CallUsage(usage.prompt_tokens, usage.output_tokens - usage.thinking_tokens,
                                  usage.thinking_tokens, usage.audio_tokens)
        choices = body.get("choices")
        if not isinstance(choices, list) or not choices or not isinstance(choices[0], Mapping):
            return usage, None, "no choices in the response"
        msg = choices[0].get("message")
        text = msg.get("content") if isinstance(msg, Mapping) else None
        if not isinstance(text, str) or not text.strip():
            refusal = msg.get("refusal") if isinstance(msg, Mapping) else None
            why = f"refused: {refusal}" if refusal else (
                f"empty message (finish_reason {choices[0].get('finish_reason')})")
            return usage, None, why
        return usage, text, ""


# ---------------------------------------------------------------------------- scripted


Scripted = str | Mapping[str, Any] | BaseException | Callable[[JudgeRequest], Any]


class ScriptedBackend(_Metered):
    """A judge backend that replays canned answers — for testing code that uses a judge.

    ``responses`` is either a sequence consumed in order (each a reply text, a JSON-ready
    mapping, an exception to raise, or a callable ``request -> text | mapping``) or one
    callable used for every call. Every request is kept in ``requests``; every answered call
    is billed ``usage_per_call`` at ``price`` (free by default). Running out of answers
    raises :class:`~vocencebench.errors.JudgeError`.
    """

    def __init__(
        self,
        responses: Iterable[Scripted] | Callable[[JudgeRequest], Any],
        *,
        model: str = "scripted",
        usage_per_call: CallUsage | None = None,
        price: Price | None = None,
        spend_cap_usd: float | None = None,
    ) -> None:
        self.model = model
        self._fn = responses if callable(responses) else None
        self._queue: list[Scripted] = [] if callable(responses) else list(responses)
        self._lock = threading.Lock()
        self.requests: list[JudgeRequest] = []
        self.usage_per_call = usage_per_call or CallUsage()
        self._meter = _Meter(model, price or Price(0.0, 0.0, source="scripted"), spend_cap_usd)

    def __repr__(self) -> str:
        return f"ScriptedBackend(model={self.model!r}, remaining={len(self._queue)})"

    def complete(self, request: JudgeRequest) -> JudgeReply:
        """Answer with the next scripted response."""
        estimate = self._meter.price.cost(self.usage_per_call) if self._meter.price else 0.0
        self._meter.reserve(estimate)
        try:
            with self._lock:
                self.requests.append(request)
                if self._fn is not None:
                    item: Scripted = self._fn
                elif self._queue:
                    item = self._queue.pop(0)
                else:
                    self._meter.bump(failures=1)
                    raise JudgeError(
                        f"scripted judge {self.model!r} ran out of answers after "
                        f"{len(self.requests) - 1} calls; script more responses"
                    )
            if isinstance(item, BaseException):
                self._meter.bump(failures=1)
                raise item
            out = item(request) if callable(item) else item
            text = out if isinstance(out, str) else json.dumps(out)
            self._meter.record(self.usage_per_call)
            return JudgeReply(text=text, usage=self.usage_per_call, model=self.model)
        finally:
            self._meter.release(estimate)

    async def acomplete(self, request: JudgeRequest) -> JudgeReply:
        """Async :meth:`complete`."""
        return self.complete(request)
