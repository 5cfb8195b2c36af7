"""The judge's records: what a backend is sent and answers, usage, prices, and the protocol.

A backend is anything with ``model`` and ``complete(request) -> JudgeReply``
(:class:`JudgeBackend`); ``acomplete`` (:class:`AsyncJudgeBackend`) is its async twin, which
the shipped backends provide as :meth:`AsyncInThread.acomplete` (``complete`` in a worker
thread). A :class:`Price` is in USD per million tokens; :class:`Usage` counts tokens and
totals the cost in USD.
"""

from __future__ import annotations

import asyncio
import dataclasses
from dataclasses import dataclass, field
from typing import Any, ClassVar, Protocol, runtime_checkable

from .._numbers import is_finite_number
from ..audio import wav_duration_s as audio_wav_duration_s
from ..errors import ConfigError, JudgeResponseError

__all__ = [
    "AUDIO_TOKENS_PER_SECOND",
    "PRICES",
    "PRICES_AS_OF",
    "AsyncInThread",
    "AsyncJudgeBackend",
    "AudioInput",
    "CallUsage",
    "JudgeBackend",
    "JudgeReply",
    "JudgeRequest",
    "Price",
    "UnretryableAnswerError",
    "Usage",
    "wav_duration_s",
]

#: Gemini bills audio input at about this many tokens per second of audio.
AUDIO_TOKENS_PER_SECOND = 32
#: Date of the built-in price table (USD per million tokens, paid tier, ≤200k-token prompts).
PRICES_AS_OF = "2026-10-11"


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

    ``calls`` are answered (billed) calls, counting an attempt whose answer was lost on the
    way (cut short, past the deadline, dropped) since the provider bills it; ``failures``
    are judgements that produced no usable answer (transport failure after retries, refused
    or invalid answer); ``retries`` counts re-sent HTTP requests.
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
    #: Billed calls whose reply carried no usable token counts (none, or NaN, negative,
    #: text, or no reply: lost on the way, not JSON, too large): each is metered at the
    #: cautious pre-call estimate, so the cap still holds.
    unreported: int = 0

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dict (``unreported`` only when some call had no usable counts, so a
        record of calls that all reported them is the same bytes as before it existed)."""
        out = dataclasses.asdict(self)
        if not out["unreported"]:
            del out["unreported"]
        return out

    def since(self, before: Usage) -> Usage:
        """What was used after ``before`` (an earlier snapshot of the same backend): each
        total minus its value then — one run's share of a judge that served several."""
        return Usage(**{f.name: getattr(self, f.name) - getattr(before, f.name)
                        for f in dataclasses.fields(self)})


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
            if not is_finite_number(v) or v < 0:
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
    return audio_wav_duration_s(data)


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
    """The async twin of :class:`JudgeBackend`: ``await backend.acomplete(request)``. The
    shipped backends provide it as ``complete`` run in a worker thread; the judge's own async
    methods (``Judge.acompare``...) run ``complete`` in worker threads themselves."""

    model: str

    async def acomplete(self, request: JudgeRequest) -> JudgeReply: ...


class AsyncInThread:
    """Gives a :class:`JudgeBackend` its :class:`AsyncJudgeBackend` twin: ``acomplete`` is
    ``complete`` run in a worker thread (one request path, sync and async)."""

    async def acomplete(self: JudgeBackend, request: JudgeRequest) -> JudgeReply:
        """Async :meth:`complete` (the same call, in a worker thread)."""
        return await asyncio.to_thread(self.complete, request)
