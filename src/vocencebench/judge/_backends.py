"""Judge backends: one request in, one text reply out, with usage, cost and retries.

A backend is anything with ``model`` and ``complete(request) -> JudgeReply``
(:class:`JudgeBackend`); ``acomplete`` (:class:`AsyncJudgeBackend`) is the optional async
twin. Shipped implementations:

* :class:`GeminiBackend`      Gemini ``generateContent`` over raw HTTP (httpx), inline audio
* :class:`OpenAIChatBackend`  any OpenAI-compatible ``/v1/chat/completions`` server with
                              ``input_audio`` parts (e.g. vLLM serving Qwen2.5-Omni)
* :class:`ScriptedBackend`    canned answers, for tests of code that uses a judge (offline)

Every option of the HTTP backends lives in one frozen :class:`BackendOptions` (model, base
URL, deadline, retries, output-token cap, thinking, prices, spend cap, rate limit, schema
handling); the factories ``Judge.gemini`` / ``Judge.local`` / ``Judge.from_spec`` and the CLI
build that one object, so no option can be forgotten on the way.

The HTTP backends send through the shared layer :mod:`vocencebench._util.http` (a total deadline
per attempt, jittered backoff on 408/429/5xx/network errors honouring ``Retry-After``,
``retry-after-ms`` and Gemini's ``RetryInfo``; fail fast on 400/401/403/404 and on a per-day
quota). A fatal failure marks the backend: every later call raises the same fatal
:class:`~vocencebench.errors.JudgeError` without touching the network. An answer that a retry
cannot change (Gemini ``finishReason`` ``MAX_TOKENS``/``SAFETY``/``RECITATION``/…,
``promptFeedback.blockReason``; OpenAI ``finish_reason`` ``length``/``content_filter`` or a
refusal) raises :class:`UnretryableAnswerError` and is not asked again.

All backends keep a running :class:`Usage` (``backend.usage``) and price it with a dated,
overridable :class:`Price` table: ``backend.cost_usd()`` is the spend in USD, or ``None``
("unknown", announced once with a WARNING) when the model has no price. A spend cap stops with
:class:`~vocencebench.errors.BudgetExceededError` *before* a call that could cross it. API keys
are held privately and registered with :mod:`vocencebench.redact`: never logged, never in
``repr``, never in an error.
"""

from __future__ import annotations

import abc
import base64
import dataclasses
import json
import logging
import math
import os
import threading
import time
from collections.abc import Awaitable, Callable, Iterable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any, ClassVar, Protocol, runtime_checkable

import httpx

from .._util.http import (
    HttpClient,
    HTTPFailure,
    HttpResponse,
    RateLimiter,
    RetryPolicy,
    check_credentials,
    join_url,
)
from ..errors import BudgetExceededError, ConfigError, JudgeError, JudgeResponseError
from ..redact import redact, register_secret, register_url_secrets, safe_url

__all__ = [
    "AUDIO_TOKENS_PER_SECOND",
    "DEFAULT_GEMINI_BASE_URL",
    "GEMINI_BASE_URL_ENV",
    "PRICES",
    "PRICES_AS_OF",
    "AsyncJudgeBackend",
    "AudioInput",
    "BackendOptions",
    "CallUsage",
    "GeminiBackend",
    "JudgeBackend",
    "JudgeReply",
    "JudgeRequest",
    "OpenAIChatBackend",
    "Price",
    "ScriptedBackend",
    "UnretryableAnswerError",
    "Usage",
    "wav_duration_s",
]

log = logging.getLogger("vocencebench.judge")

#: Gemini bills audio input at about this many tokens per second of audio.
AUDIO_TOKENS_PER_SECOND = 32
#: Date of the built-in price table (USD per million tokens, paid tier, ≤200k-token prompts).
PRICES_AS_OF = "2026-10-11"
#: Where Gemini requests go unless ``base_url`` or :data:`GEMINI_BASE_URL_ENV` says otherwise.
DEFAULT_GEMINI_BASE_URL = "https://generativelanguage.googleapis.com"
#: The environment variable the official Google Gen AI SDK reads for the Gemini base URL.
GEMINI_BASE_URL_ENV = "GOOGLE_GEMINI_BASE_URL"

#: Gemini ``finishReason`` values that a retry of the same request cannot change.
GEMINI_FINAL_FINISH = frozenset({
    "MAX_TOKENS", "SAFETY", "RECITATION", "LANGUAGE", "BLOCKLIST", "PROHIBITED_CONTENT",
    "SPII", "IMAGE_SAFETY", "IMAGE_PROHIBITED_CONTENT", "MALFORMED_FUNCTION_CALL",
})
#: OpenAI ``finish_reason`` values that a retry of the same request cannot change.
OPENAI_FINAL_FINISH = frozenset({"length", "content_filter"})
_THINKING_LEVELS = ("minimal", "low", "medium", "high")


# ---------------------------------------------------------------------------- data types


class UnretryableAnswerError(JudgeResponseError):
    """The judge answered, but with something that asking again cannot change: the output
    hit its token cap, a safety filter blocked it, the prompt was blocked, the model refused.
    The judge does not re-ask (or re-pay) it; ``retryable`` is False."""

    retryable: ClassVar[bool] = False


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

    ``prompt_tokens`` includes audio and cached tokens; ``audio_tokens`` is the audio share
    where reported (else None); ``thinking_tokens`` are billed as output by Gemini;
    ``cached_tokens`` is the share of the prompt served from the provider's context cache
    (Gemini ``cachedContentTokenCount``, OpenAI ``prompt_tokens_details.cached_tokens``).
    """

    prompt_tokens: int = 0
    output_tokens: int = 0
    thinking_tokens: int = 0
    audio_tokens: int | None = None
    cached_tokens: int = 0


@dataclass(frozen=True)
class JudgeReply:
    """A backend's answer: the model's text, the tokens it cost, and the model that answered."""

    text: str
    usage: CallUsage
    model: str


@dataclass(frozen=True)
class Usage:
    """Running totals of a backend (tokens are counts; ``cost_usd`` in US dollars, 0.0 when
    the model has no price — ``backend.cost_usd()`` then says None).

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
    cached_tokens: int = 0

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dict."""
        return dataclasses.asdict(self)


@dataclass(frozen=True)
class Price:
    """USD per million tokens for one model, as of ``as_of`` (ISO date) from ``source``.

    ``audio_input`` prices audio prompt tokens (defaults to ``input``); ``cached_input``
    prices prompt tokens served from the provider's context cache (defaults to ``input``: no
    discount assumed); thinking tokens are billed at ``output``. Prompts above
    ``long_context_tokens`` use the ``*_long`` rates.
    """

    input: float
    output: float
    audio_input: float | None = None
    long_context_tokens: int | None = None
    input_long: float | None = None
    output_long: float | None = None
    as_of: str = PRICES_AS_OF
    source: str = ""
    cached_input: float | None = None

    def __post_init__(self) -> None:
        for name in ("input", "output", "audio_input", "input_long", "output_long",
                     "cached_input"):
            v = getattr(self, name)
            if v is None and name not in ("input", "output"):
                continue
            if isinstance(v, bool) or not isinstance(v, int | float) or not math.isfinite(v) \
                    or v < 0:
                raise ConfigError(f"Price.{name} must be a finite number >= 0 (USD per 1M "
                                  f"tokens), got {v!r}")

    def cost(self, usage: CallUsage) -> float:
        """Cost of one call in USD."""
        cap = self.long_context_tokens
        long = cap is not None and usage.prompt_tokens > cap
        p_in = (self.input_long or self.input) if long else self.input
        p_out = (self.output_long or self.output) if long else self.output
        p_audio = p_in if self.audio_input is None or long else self.audio_input
        p_cached = p_in if self.cached_input is None else self.cached_input
        audio = min(usage.audio_tokens or 0, usage.prompt_tokens)
        text = usage.prompt_tokens - audio
        cached = min(max(usage.cached_tokens, 0), usage.prompt_tokens)
        cached_text = min(cached, text)  # the cache serves the (shared) text first
        cached_audio = cached - cached_text
        out = usage.output_tokens + usage.thinking_tokens
        return ((text - cached_text) * p_in + (audio - cached_audio) * p_audio
                + cached * p_cached + out * p_out) / 1e6

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dict."""
        return dataclasses.asdict(self)


_GOOGLE = "ai.google.dev/gemini-api/docs/pricing"
#: Built-in prices (USD / 1M tokens, paid tier). Cached prompt tokens are billed at 10 % of the
#: input rate (Google's discount for Gemini 2.5 and later). Check the provider's page before
#: relying on them, and pass ``prices={model: Price(...)}`` (or ``--judge-price`` on the CLI)
#: to override or add a model.
PRICES: dict[str, Price] = {
    "gemini-3.1-pro-preview": Price(2.00, 12.00, long_context_tokens=200_000,
                                    input_long=4.00, output_long=18.00, source=_GOOGLE,
                                    cached_input=0.20),
    "gemini-3-pro-preview": Price(2.00, 12.00, long_context_tokens=200_000,
                                  input_long=4.00, output_long=18.00, source=_GOOGLE,
                                  cached_input=0.20),
    "gemini-2.5-pro": Price(1.25, 10.00, long_context_tokens=200_000,
                            input_long=2.50, output_long=15.00, source=_GOOGLE,
                            cached_input=0.125),
    "gemini-2.5-flash": Price(0.30, 2.50, audio_input=1.00, source=_GOOGLE, cached_input=0.03),
}


def wav_duration_s(data: bytes) -> float | None:
    """Duration (seconds) of RIFF/WAVE bytes from the header, or None if unreadable
    (:func:`vocencebench.audio.wav_duration_s`: the one WAV chunk walker)."""
    from ..audio import wav_duration_s as duration

    return duration(data)


# ---------------------------------------------------------------------------- options


def _positive(name: str, v: Any, *, integer: bool = False, zero: bool = False) -> None:
    ok_type = isinstance(v, int) if integer else isinstance(v, int | float)
    if isinstance(v, bool) or not ok_type or not math.isfinite(v) or v < 0 or (v == 0 and not zero):
        kind = "an integer" if integer else "a number"
        bound = ">= 0" if zero else "> 0"
        raise ConfigError(f"{name} must be {kind} {bound}, got {v!r}")


@dataclass(frozen=True, repr=False)
class BackendOptions:
    """Every option of the HTTP judge backends, in one frozen object (times in seconds,
    prices in USD per million tokens).

    ``model``: the model name (None: the factory's default). ``base_url``: the server (None:
    Gemini uses ``$GOOGLE_GEMINI_BASE_URL`` or the public endpoint). ``api_key_env``: the
    environment variable holding the key (None: ``GEMINI_API_KEY``/``GOOGLE_API_KEY`` for
    Gemini, no key for a local server). ``timeout_s``: total deadline of one HTTP attempt.
    ``max_retries``, ``backoff_s``, ``max_backoff_s``, ``jitter``, ``max_retry_after_s``: the
    retry policy (:class:`vocencebench._util.http.RetryPolicy`). ``requests_per_minute``: a
    client-side rate limit. ``max_output_tokens``: cap on the answer (Gemini
    ``maxOutputTokens``, OpenAI ``max_tokens``). ``thinking_budget`` / ``thinking_level``:
    Gemini ``thinkingConfig`` (budget in tokens, -1 = dynamic, 0 = off; level one of
    minimal/low/medium/high). ``schema_field``: where Gemini gets the answer schema
    (``responseJsonSchema`` or the older ``responseSchema``). ``send_schema``: send the schema
    as an OpenAI ``response_format``. ``price``: this model's :class:`Price` (wins over the
    table); ``prices``: extra table entries by model. ``spend_cap_usd``: stop before the
    spend could cross this. ``max_body_bytes``: largest answer read.

    Build one with keywords, or change one with :meth:`replace`; an unknown option name is a
    :class:`~vocencebench.errors.ConfigError` listing the valid ones.
    """

    model: str | None = None
    base_url: str | None = None
    api_key_env: str | None = None
    timeout_s: float = 180.0
    max_retries: int = 5
    backoff_s: float = 2.0
    max_backoff_s: float = 60.0
    jitter: float = 0.5
    max_retry_after_s: float = 600.0
    requests_per_minute: float | None = None
    max_output_tokens: int | None = None
    thinking_budget: int | None = None
    thinking_level: str | None = None
    schema_field: str = "responseJsonSchema"
    send_schema: bool = True
    price: Price | None = None
    prices: Mapping[str, Price] | None = field(default=None, hash=False)
    spend_cap_usd: float | None = None
    max_body_bytes: int = 10_000_000

    def __post_init__(self) -> None:
        if self.model is not None and (not isinstance(self.model, str) or not self.model):
            raise ConfigError(f"model must be a non-empty string, got {self.model!r}")
        if self.base_url is not None and (
                not isinstance(self.base_url, str)
                or not self.base_url.startswith(("http://", "https://"))):
            raise ConfigError("base_url must start with http:// or https://, got "
                              f"{safe_url(str(self.base_url))!r}")
        if self.api_key_env is not None and (not isinstance(self.api_key_env, str)
                                             or not self.api_key_env):
            raise ConfigError(f"api_key_env must name an environment variable, got "
                              f"{self.api_key_env!r}")
        _positive("timeout_s", self.timeout_s)
        self.retry_policy()  # validates the retry fields
        if self.requests_per_minute is not None:
            _positive("requests_per_minute", self.requests_per_minute)
        if self.max_output_tokens is not None:
            _positive("max_output_tokens", self.max_output_tokens, integer=True)
        if self.thinking_budget is not None and (
                isinstance(self.thinking_budget, bool) or not isinstance(self.thinking_budget, int)
                or self.thinking_budget < -1):
            raise ConfigError(f"thinking_budget must be an integer >= -1 (tokens; -1 dynamic, "
                              f"0 off), got {self.thinking_budget!r}")
        if self.thinking_level is not None and self.thinking_level not in _THINKING_LEVELS:
            raise ConfigError(f"thinking_level must be one of {', '.join(_THINKING_LEVELS)}, "
                              f"got {self.thinking_level!r}")
        if self.schema_field not in ("responseJsonSchema", "responseSchema"):
            raise ConfigError("schema_field must be 'responseJsonSchema' or 'responseSchema'")
        if not isinstance(self.send_schema, bool):
            raise ConfigError(f"send_schema must be True or False, got {self.send_schema!r}")
        if self.price is not None and not isinstance(self.price, Price):
            raise ConfigError(f"price must be a Price, got {type(self.price).__name__}")
        if self.prices is not None:
            if not isinstance(self.prices, Mapping) or not all(
                    isinstance(k, str) and isinstance(v, Price) for k, v in self.prices.items()):
                raise ConfigError("prices must map model names to Price objects")
            object.__setattr__(self, "prices", dict(self.prices))
        if self.spend_cap_usd is not None:
            _positive("spend_cap_usd", self.spend_cap_usd)
        _positive("max_body_bytes", self.max_body_bytes, integer=True)

    def __repr__(self) -> str:  # the base URL without credentials
        changed = []
        for f in dataclasses.fields(self):
            v = getattr(self, f.name)
            if v == f.default or (f.name == "prices" and not v):
                continue
            shown = safe_url(v) if f.name == "base_url" else v
            changed.append(f"{f.name}={shown!r}")
        return f"BackendOptions({', '.join(changed)})"

    @classmethod
    def names(cls) -> tuple[str, ...]:
        """Every option name."""
        return tuple(f.name for f in dataclasses.fields(cls))

    @classmethod
    def build(cls, options: BackendOptions | None = None, /, **settings: Any) -> BackendOptions:
        """``options`` (or the defaults) with ``settings`` applied by name."""
        base = options if options is not None else cls()
        if not isinstance(base, BackendOptions):
            raise ConfigError(f"options must be a BackendOptions, got {type(base).__name__}")
        return base.replace(**settings) if settings else base

    def replace(self, **changes: Any) -> BackendOptions:
        """A copy with ``changes`` applied (unknown names: ConfigError listing the valid)."""
        unknown = sorted(set(changes) - set(self.names()))
        if unknown:
            raise ConfigError(f"unknown judge option(s) {', '.join(unknown)}; valid: "
                              f"{', '.join(self.names())}")
        return replace(self, **changes)

    def retry_policy(self) -> RetryPolicy:
        """The :class:`~vocencebench._util.http.RetryPolicy` these options describe."""
        return RetryPolicy(max_retries=self.max_retries, backoff_s=self.backoff_s,
                           max_backoff_s=self.max_backoff_s, jitter=self.jitter,
                           max_retry_after_s=self.max_retry_after_s)

    def price_for(self, model: str, table: Mapping[str, Price] | None = None) -> Price | None:
        """``price``, else ``prices[model]``, else ``table[model]``, else None."""
        if self.price is not None:
            return self.price
        if self.prices and model in self.prices:
            return self.prices[model]
        return (table or {}).get(model)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dict without credentials (the base URL through ``safe_url``)."""
        out: dict[str, Any] = {}
        for f in dataclasses.fields(self):
            v = getattr(self, f.name)
            if isinstance(v, Price):
                v = v.to_dict()
            elif f.name == "prices" and v is not None:
                v = {k: p.to_dict() for k, p in v.items()}
            elif f.name == "base_url" and v is not None:
                v = safe_url(v)
            out[f.name] = v
        return out


# ---------------------------------------------------------------------------- protocols


@runtime_checkable
class JudgeBackend(Protocol):
    """Sends one :class:`JudgeRequest` to a model and returns its :class:`JudgeReply`.

    Raise :class:`~vocencebench.errors.JudgeError` when no answer could be obtained (with
    ``fatal=True`` when further calls are pointless) and
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
                    "prices={model: Price(input=..., output=...)} or --judge-price IN,OUT"
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

    def cost_usd(self) -> float | None:
        if self.price is None:
            return None
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
            self._u = replace(
                u,
                prompt_tokens=u.prompt_tokens + usage.prompt_tokens,
                output_tokens=u.output_tokens + usage.output_tokens,
                thinking_tokens=u.thinking_tokens + usage.thinking_tokens,
                audio_tokens=u.audio_tokens + (usage.audio_tokens or 0),
                cached_tokens=u.cached_tokens + usage.cached_tokens,
                calls=u.calls + 1,
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

    def cost_usd(self) -> float | None:
        """Spend so far in USD from the provider's token counts and the price table, or None
        when the model has no price (the cost is unknown, not zero)."""
        return self._meter.cost_usd()

    def record_failure(self) -> None:
        """Count a judgement that produced no usable answer (called by the judge)."""
        self._meter.bump(failures=1)


# ---------------------------------------------------------------------------- HTTP backends


class _HTTPBackend(_Metered, abc.ABC):
    """Shared request path of the HTTP backends: options, the HTTP layer, budget, accounting."""

    kind = "http"

    def __init__(
        self,
        *,
        model: str,
        base_url: str,
        api_key: str | None,
        options: BackendOptions,
        price: Price | None,
        transport: httpx.BaseTransport | None,
        async_transport: httpx.AsyncBaseTransport | None,
        sleep: Callable[[float], None] | None,
        async_sleep: Callable[[float], Awaitable[None]] | None,
        rand: Callable[[], float] | None = None,
        wall_clock: Callable[[], float] = time.time,
    ) -> None:
        if not model:
            raise ConfigError("a judge backend needs a model name")
        register_secret(api_key)
        register_url_secrets(base_url)
        check_credentials(base_url, has_key=bool(api_key))
        self.model = model
        self.options = options.replace(model=model) if options.model != model else options
        self._base_url = base_url
        self._api_key = api_key
        self._sleep = sleep or time.sleep
        self._limiter = RateLimiter(options.requests_per_minute, sleep=self._sleep)
        self._http = HttpClient(
            f"{self.kind} judge ({model})", timeout_s=options.timeout_s,
            retry=options.retry_policy(), max_body_bytes=options.max_body_bytes,
            secrets=[api_key], transport=transport, async_transport=async_transport,
            sleep=self._sleep, async_sleep=async_sleep, rand=rand, wall_clock=wall_clock,
            limiter=self._limiter)
        self._meter = _Meter(model, price, options.spend_cap_usd)
        self._fatal: JudgeError | None = None
        if price is None:
            log.warning(
                "judge %s: no price for model %r (built-in prices dated %s cover %s); its cost "
                "will be reported as unknown — pass --judge-price IN,OUT or "
                "prices={model: Price(input=..., output=...)}",
                self.kind, model, PRICES_AS_OF, ", ".join(PRICES))

    # -- options as attributes (read-only views of self.options)
    @property
    def base_url(self) -> str:
        """The server, without credentials."""
        return safe_url(self._base_url)

    @property
    def timeout_s(self) -> float:
        """Total deadline of one HTTP attempt (s)."""
        return self.options.timeout_s

    @property
    def max_retries(self) -> int:
        """Extra HTTP attempts after the first."""
        return self.options.max_retries

    @property
    def max_output_tokens(self) -> int | None:
        """The answer's token cap, or None."""
        return self.options.max_output_tokens

    def set_rate_limit(self, requests_per_minute: float | None) -> None:
        """Start at most ``requests_per_minute`` HTTP requests per minute (None: no limit)."""
        self._limiter.set(requests_per_minute)
        self.options = self.options.replace(requests_per_minute=requests_per_minute)

    @property
    def requests_per_minute(self) -> float | None:
        """The client-side rate limit, or None."""
        return self._limiter.requests_per_minute

    @property
    def spend_cap_usd(self) -> float | None:
        """The spend cap in USD, or None."""
        return self._meter.spend_cap_usd

    @property
    def price(self) -> Price | None:
        """The price used for ``cost_usd()`` (None: unknown)."""
        return self._meter.price

    def __repr__(self) -> str:
        key = "set" if self._api_key else "none"
        return (f"{type(self).__name__}(model={self.model!r}, base_url={self.base_url!r}, "
                f"api_key={key})")

    def close(self) -> None:
        """Close the HTTP connection pool (a later call opens a new one)."""
        self._http.close()

    def __enter__(self) -> _HTTPBackend:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- subclass hooks
    @abc.abstractmethod
    def _url(self) -> str: ...

    @abc.abstractmethod
    def _headers(self) -> dict[str, str]: ...

    @abc.abstractmethod
    def _payload(self, request: JudgeRequest) -> dict[str, Any]: ...

    @abc.abstractmethod
    def _read(self, body: Any) -> tuple[CallUsage | None, str | None, str, bool]:
        """(usage, text, why-no-text, final) from a 200 response body; ``final``: a retry of
        the same request cannot change the missing answer."""

    def _hint(self, exc: HTTPFailure) -> str:
        return ""

    # -- plumbing
    def _raise_if_tripped(self) -> None:
        if self._fatal is not None:
            self._meter.bump(failures=1)
            raise JudgeError(f"{self._fatal} (an earlier call failed this way; no request sent)",
                             fatal=True)

    def _translate(self, exc: HTTPFailure) -> JudgeError:
        hint = self._hint(exc)
        err = JudgeError(redact(str(exc), limit=600) + (f" — {hint}" if hint else ""),
                         fatal=exc.fatal)
        if exc.fatal:
            self._fatal = err
        return err

    def _handle(self, resp: HttpResponse) -> JudgeReply:
        try:
            body = resp.json()
        except (ValueError, UnicodeDecodeError) as exc:
            raise JudgeResponseError(
                f"{self.kind} judge returned HTTP {resp.status} with a body that is not JSON: "
                f"{redact(resp.text, limit=120)!r}"
            ) from exc
        usage, text, why, final = self._read(body)
        if usage is not None:
            self._meter.record(usage)
        if text is None:
            msg = f"{self.kind} judge ({self.model}) gave no answer: {why}"
            if final:
                raise UnretryableAnswerError(msg + " (not asked again: a retry cannot change it)")
            raise JudgeResponseError(msg)
        return JudgeReply(text=text, usage=usage or CallUsage(), model=self.model)

    def _count_failure(self, exc: JudgeError) -> None:
        if not isinstance(exc, BudgetExceededError):
            self._meter.bump(failures=1)

    def complete(self, request: JudgeRequest) -> JudgeReply:
        """Send ``request`` through the HTTP layer; see the module docstring."""
        self._raise_if_tripped()
        url, payload = self._url(), self._payload(request)
        estimate = self._meter.estimate(request)
        self._meter.reserve(estimate)
        try:
            try:
                resp = self._http.request("POST", url, json=payload, headers=self._headers())
            except HTTPFailure as exc:
                self._meter.bump(retries=max(0, exc.calls - 1))
                raise self._translate(exc) from None
            self._meter.bump(retries=resp.retries)
            return self._handle(resp)
        except JudgeError as exc:
            self._count_failure(exc)
            raise
        finally:
            self._meter.release(estimate)

    async def acomplete(self, request: JudgeRequest) -> JudgeReply:
        """Async :meth:`complete` (its own short-lived connection pool per call)."""
        self._raise_if_tripped()
        url, payload = self._url(), self._payload(request)
        estimate = self._meter.estimate(request)
        self._meter.reserve(estimate)
        try:
            try:
                resp = await self._http.arequest("POST", url, json=payload,
                                                 headers=self._headers())
            except HTTPFailure as exc:
                self._meter.bump(retries=max(0, exc.calls - 1))
                raise self._translate(exc) from None
            self._meter.bump(retries=resp.retries)
            return self._handle(resp)
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
    ``responseSchema``), plus ``maxOutputTokens`` and ``thinkingConfig`` when set. Reads
    ``usageMetadata`` (prompt, audio, cached, output and thinking tokens). The base URL comes
    from ``options.base_url``, else ``$GOOGLE_GEMINI_BASE_URL``, else the public endpoint.
    Every :class:`BackendOptions` field can be given as a keyword (``max_output_tokens=800``)
    or in ``options``.
    """

    kind = "gemini"

    def __init__(
        self,
        model: str,
        api_key: str,
        *,
        options: BackendOptions | None = None,
        transport: httpx.BaseTransport | None = None,
        async_transport: httpx.AsyncBaseTransport | None = None,
        sleep: Callable[[float], None] | None = None,
        async_sleep: Callable[[float], Awaitable[None]] | None = None,
        rand: Callable[[], float] | None = None,
        wall_clock: Callable[[], float] = time.time,
        **settings: Any,
    ) -> None:
        if not api_key:
            raise ConfigError("the Gemini judge needs an API key: set GEMINI_API_KEY")
        opts = BackendOptions.build(options, **settings)
        base = opts.base_url or os.environ.get(GEMINI_BASE_URL_ENV) or DEFAULT_GEMINI_BASE_URL
        if not base.startswith(("http://", "https://")):
            raise ConfigError(f"{GEMINI_BASE_URL_ENV} must start with http:// or https://, "
                              f"got {safe_url(base)!r}")
        super().__init__(
            model=model, base_url=join_url(base, "", strip="/v1beta"), api_key=api_key,
            options=opts, price=opts.price_for(model, PRICES), transport=transport,
            async_transport=async_transport, sleep=sleep, async_sleep=async_sleep, rand=rand,
            wall_clock=wall_clock,
        )

    @property
    def schema_field(self) -> str:
        """Where the answer schema goes in ``generationConfig``."""
        return self.options.schema_field

    @property
    def thinking_budget(self) -> int | None:
        """``thinkingConfig.thinkingBudget`` (tokens), or None."""
        return self.options.thinking_budget

    @property
    def thinking_level(self) -> str | None:
        """``thinkingConfig.thinkingLevel``, or None."""
        return self.options.thinking_level

    def _url(self) -> str:
        return join_url(self._base_url, f"/v1beta/models/{self.model}:generateContent")

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

    def _hint(self, exc: HTTPFailure) -> str:
        if "api_key_invalid" in exc.body.lower() or "api key not valid" in exc.body.lower():
            return "check the API key (GEMINI_API_KEY or --judge-key-env)"
        return ""

    def _final_hint(self, reason: str) -> str:
        if reason == "MAX_TOKENS":
            cap = self.max_output_tokens
            now = f" (now {cap})" if cap is not None else ""
            return (f"the answer hit the output-token cap{now}; raise max_output_tokens or "
                    "lower the thinking budget")
        return "the model's safety or recitation filter stopped the answer"

    def _read(self, body: Any) -> tuple[CallUsage | None, str | None, str, bool]:
        if not isinstance(body, Mapping):
            return None, None, "response is not a JSON object", False
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
                cached_tokens=_int(meta.get("cachedContentTokenCount")),
            )
        feedback = body.get("promptFeedback")
        if isinstance(feedback, Mapping) and feedback.get("blockReason"):
            return usage, None, f"prompt blocked ({feedback['blockReason']})", True
        cands = body.get("candidates")
        if not isinstance(cands, list) or not cands or not isinstance(cands[0], Mapping):
            return usage, None, "no candidates in the response", False
        cand = cands[0]
        reason = str(cand.get("finishReason") or "")
        if reason in GEMINI_FINAL_FINISH:
            return usage, None, f"finishReason {reason}: {self._final_hint(reason)}", True
        content = cand.get("content")
        texts: list[str] = []
        if isinstance(content, Mapping) and isinstance(content.get("parts"), list):
            texts = [
                str(p["text"]) for p in content["parts"]
                if isinstance(p, Mapping) and "text" in p and not p.get("thought")
            ]
        if not texts:
            return usage, None, f"empty candidate (finishReason {reason or None})", False
        return usage, "".join(texts), "", False


class OpenAIChatBackend(_HTTPBackend):
    """An OpenAI-compatible ``POST {base_url}/v1/chat/completions`` server with audio input.

    The user message holds text parts and ``input_audio`` parts (base64 WAV); the answer
    schema goes in ``response_format`` (``json_schema``, strict) unless ``send_schema`` is
    False; ``max_output_tokens`` is sent as ``max_tokens``. Reads ``usage`` (``prompt_tokens``,
    ``completion_tokens``, reasoning, audio and cached token details where present).
    Self-hosted models cost nothing unless a price is given. Every :class:`BackendOptions`
    field can be given as a keyword or in ``options``.
    """

    kind = "openai"

    def __init__(
        self,
        base_url: str | None,
        model: str | None,
        api_key: str | None = None,
        *,
        options: BackendOptions | None = None,
        transport: httpx.BaseTransport | None = None,
        async_transport: httpx.AsyncBaseTransport | None = None,
        sleep: Callable[[float], None] | None = None,
        async_sleep: Callable[[float], Awaitable[None]] | None = None,
        rand: Callable[[], float] | None = None,
        wall_clock: Callable[[], float] = time.time,
        **settings: Any,
    ) -> None:
        if "max_tokens" in settings:  # the OpenAI name of the same option
            settings["max_output_tokens"] = settings.pop("max_tokens")
        opts = BackendOptions.build(options, **settings)
        url = base_url or opts.base_url
        name = model or opts.model
        if not url or not url.startswith(("http://", "https://")):
            raise ConfigError("base_url must start with http:// or https://, got "
                              f"{safe_url(str(url))!r}")
        if not name:
            raise ConfigError("a local judge needs a model name")
        base = join_url(url, "", strip="/v1")
        price = opts.price_for(name) or Price(0.0, 0.0, source="self-hosted (no charge)")
        super().__init__(
            model=name, base_url=base, api_key=api_key, options=opts.replace(base_url=url),
            price=price, transport=transport, async_transport=async_transport, sleep=sleep,
            async_sleep=async_sleep, rand=rand, wall_clock=wall_clock,
        )

    @property
    def send_schema(self) -> bool:
        """Whether the answer schema is sent as ``response_format``."""
        return self.options.send_schema

    @property
    def max_tokens(self) -> int | None:
        """``max_tokens`` in the request (= ``max_output_tokens``)."""
        return self.options.max_output_tokens

    def _url(self) -> str:
        return join_url(self._base_url, "/v1/chat/completions")

    def _headers(self) -> dict[str, str]:
        h = {"content-type": "application/json"}
        if self._api_key:
            h["authorization"] = f"Bearer {self._api_key}"
        return h

    def _hint(self, exc: HTTPFailure) -> str:
        body = exc.body.lower()
        if exc.status == 400 and "audio" in body and ("at most" in body or "limit" in body):
            return ("the server accepts fewer audio clips per prompt than the two the judge "
                    "sends; start vLLM with --limit-mm-per-prompt '{\"audio\": 2}'")
        return ""

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

    def _read(self, body: Any) -> tuple[CallUsage | None, str | None, str, bool]:
        if not isinstance(body, Mapping):
            return None, None, "response is not a JSON object", False
        u = body.get("usage")
        usage = None
        if isinstance(u, Mapping):
            pd = u.get("prompt_tokens_details")
            cd = u.get("completion_tokens_details")
            pdm = pd if isinstance(pd, Mapping) else {}
            audio = _int(pdm.get("audio_tokens")) if pdm.get("audio_tokens") is not None \
                else None
            thinking = _int(cd.get("reasoning_tokens")) if isinstance(cd, Mapping) else 0
            output = _int(u.get("completion_tokens"))
            # OpenAI counts reasoning inside completion_tokens; keep them apart.
            if thinking and output >= thinking:
                output -= thinking
            usage = CallUsage(
                prompt_tokens=_int(u.get("prompt_tokens")), output_tokens=output,
                thinking_tokens=thinking, audio_tokens=audio,
                cached_tokens=_int(pdm.get("cached_tokens")),
            )
        choices = body.get("choices")
        if not isinstance(choices, list) or not choices or not isinstance(choices[0], Mapping):
            return usage, None, "no choices in the response", False
        finish = str(choices[0].get("finish_reason") or "")
        msg = choices[0].get("message")
        refusal = msg.get("refusal") if isinstance(msg, Mapping) else None
        if refusal:
            return usage, None, f"refused: {redact(refusal, limit=200)}", True
        if finish in OPENAI_FINAL_FINISH:
            why = ("the answer hit max_tokens; raise max_output_tokens" if finish == "length"
                   else "the server's content filter stopped the answer")
            return usage, None, f"finish_reason {finish}: {why}", True
        text = msg.get("content") if isinstance(msg, Mapping) else None
        if not isinstance(text, str) or not text.strip():
            return usage, None, f"empty message (finish_reason {finish or None})", False
        return usage, text, "", False


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
