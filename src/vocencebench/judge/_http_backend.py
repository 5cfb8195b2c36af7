"""The shared request path of the HTTP judge backends (Gemini, OpenAI-compatible chat).

A backend sends through :class:`vocencebench._util.http.HttpClient` (a total deadline per
attempt, jittered backoff on 408/429/5xx/network errors honouring ``Retry-After``,
``retry-after-ms`` and Gemini's ``RetryInfo``; fail fast on 400/401/403/404 and on a per-day
quota). A fatal failure marks the backend: every later call raises the same fatal
:class:`~vocencebench.errors.JudgeError` without touching the network. An answer that a retry
cannot change raises :class:`~vocencebench.judge.UnretryableAnswerError` and is not asked
again. API keys are held privately and registered with :mod:`vocencebench.redact`: never
logged, never in ``repr``, never in an error.
"""

from __future__ import annotations

import abc
import base64
import logging
import time
from collections.abc import Callable, Mapping
from typing import Any, Final

import httpx

from .._numbers import is_finite_number
from .._util.closing import Closing
from .._util.http import HttpClient, HTTPFailure, HttpResponse, check_credentials
from .._util.retry import RateLimiter
from ..constants import JUDGE_MAX_CALL_TOKENS
from ..errors import BudgetExceededError, ConfigError, JudgeError, JudgeResponseError
from ..redact import check_key, redact, register_secret, register_url_secrets, safe_url
from ._metering import Meter, Metered
from ._options import BackendOptions, OptionView
from ._types import (
    PRICES,
    PRICES_AS_OF,
    AsyncInThread,
    CallUsage,
    JudgeReply,
    JudgeRequest,
    Price,
    UnretryableAnswerError,
)

__all__ = ["HOOK_KEYWORDS", "HTTPBackend", "b64", "split_hooks", "token_count"]

log = logging.getLogger("vocencebench.judge")

#: The test hooks every HTTP backend takes (keywords of :class:`HTTPBackend`, passed on by its
#: subclasses and by the :class:`~vocencebench.judge.Judge` factories).
HOOK_KEYWORDS = ("transport", "sleep", "rand", "wall_clock")


def split_hooks(settings: dict[str, Any]) -> dict[str, Any]:
    """Take the test hooks (:data:`HOOK_KEYWORDS`) out of ``settings``; the rest stays."""
    return {k: settings.pop(k) for k in HOOK_KEYWORDS if k in settings}


class HTTPBackend(Metered, AsyncInThread, Closing, abc.ABC):
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
        transport: httpx.BaseTransport | None = None,
        sleep: Callable[[float], None] | None = None,
        rand: Callable[[], float] | None = None,
        wall_clock: Callable[[], float] = time.time,
    ) -> None:
        if not model:
            raise ConfigError("a judge backend needs a model name")
        register_secret(api_key)
        check_key(api_key, source=f"the {self.kind} judge's api_key")
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
            secrets=[api_key], transport=transport, sleep=self._sleep, rand=rand,
            wall_clock=wall_clock, limiter=self._limiter)
        self._meter = Meter(model, price, options.spend_cap_usd,
                            output_ceiling=options.output_ceiling(), needs_ceiling=True)
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

    timeout_s = OptionView[float]("timeout_s", "Total deadline of one HTTP attempt (s).")
    max_retries = OptionView[int]("max_retries", "Extra HTTP attempts after the first.")
    max_output_tokens = OptionView[int | None]("max_output_tokens",
                                               "The answer's token cap, or None.")

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

    # -- subclass hooks
    @abc.abstractmethod
    def _url(self) -> str: ...

    @abc.abstractmethod
    def _headers(self) -> dict[str, str]: ...

    @abc.abstractmethod
    def _payload(self, request: JudgeRequest) -> dict[str, Any]: ...

    @abc.abstractmethod
    def _read(self, body: Mapping[str, Any]) -> tuple[CallUsage | None, str | None, str, bool]:
        """(usage, text, why-no-text, final) from a 200 response body (a JSON object);
        ``final``: a retry of the same request cannot change the missing answer."""

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

    def _handle(self, resp: HttpResponse, guess: CallUsage) -> JudgeReply:
        try:
            body = resp.json()
        except (ValueError, UnicodeDecodeError) as exc:
            self._meter.record(guess, unreported=True)  # answered, so paid: at the guess
            raise JudgeResponseError(
                f"{self.kind} judge returned HTTP {resp.status} with a body that is not JSON: "
                f"{redact(resp.text, limit=120)!r}"
            ) from exc
        usage, text, why, final = (self._read(body) if isinstance(body, Mapping)
                                   else (None, None, "response is not a JSON object", False))
        if usage is not None:
            self._meter.record(usage)
        else:  # a reply without usable counts is still a paid call: metered at the guess
            self._meter.record(guess, unreported=True)
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
        guess = self._meter.guess(request)
        estimate = self._meter.estimate(guess)
        self._meter.reserve(estimate)

        def billed(reason: str) -> None:
            # An attempt that reached the model and whose answer was lost (cut short, too
            # slow, the connection dropped mid-answer) was still generated and billed; an
            # error status (429, 5xx) is not. The next attempt must fit under the cap too.
            if reason in MAYBE_BILLED:
                self._meter.record(guess, unreported=True)
                self._meter.reserve(0.0)

        try:
            try:
                resp = self._http.request("POST", url, json=payload, headers=self._headers(),
                                          on_failed_attempt=billed)
            except HTTPFailure as exc:
                if exc.reason == "too-large":  # generated in full, then refused by us
                    self._meter.record(guess, unreported=True)
                self._meter.bump(retries=max(0, exc.calls - 1))
                raise self._translate(exc) from None
            self._meter.bump(retries=resp.retries)
            return self._handle(resp, guess)
        except JudgeError as exc:
            self._count_failure(exc)
            raise
        finally:
            self._meter.release(estimate)


#: Failed attempts a provider may still bill (see ``complete``): the request reached the model
#: and an answer was on its way.
MAYBE_BILLED: Final = frozenset({"deadline", "truncated", "transport"})


def b64(data: bytes) -> str:
    """``data`` in base64, as ASCII text (inline audio in a JSON request)."""
    return base64.b64encode(data).decode("ascii")


def token_count(value: Any) -> int | None:
    """A token count from a provider's JSON: the number (0 when the field is absent or null),
    or None when it holds what no count can be — NaN, ±inf, a negative or fractional number,
    text, more than :data:`~vocencebench.constants.JUDGE_MAX_CALL_TOKENS`. A reply with such
    a count is metered as one that reported none (``Usage.unreported``)."""
    if value is None:
        return 0
    if is_finite_number(value) and 0 <= value <= JUDGE_MAX_CALL_TOKENS and value == int(value):
        return int(value)
    return None

