"""The one HTTP layer of vocencebench's remote services (private).

The judge backends (Gemini, OpenAI-compatible chat), the OpenAI-compatible transcriber, the
speech adapter and the LLM corpus writer send every request through :class:`HttpClient`, so
they share one policy:

* **A total deadline per attempt** (``timeout_s``): connecting, sending, waiting for the
  headers and reading the whole body together. Each socket read and write waits at most for
  what is left of the deadline, and the body loop checks it after every chunk, so a server
  that trickles one byte every 50 ms is cut off at the deadline, not after ``timeout_s`` per
  read (:mod:`vocencebench._util.deadline`). With a caller's own ``transport`` only the chunk
  check applies.
* **Retries with jittered exponential backoff** (:mod:`vocencebench._util.retry`) on 408,
  429, 5xx (but 501/505), connection errors, timeouts and truncated bodies (fewer bytes than
  ``Content-Length``). The wait before retry *k* (0-based) is
  ``min(max_backoff_s, backoff_s · 2^k)`` scaled by a random factor in
  ``[1 − jitter, 1]``, unless the server says how long to wait: ``retry-after-ms``, then
  ``Retry-After`` (seconds or an HTTP date), then Gemini's ``google.rpc.RetryInfo``
  ``retryDelay`` (``"37s"``) in the error body. A server wait longer than
  ``max_retry_after_s`` ends the call at once (fatal: every following call would wait too).
* **Fail fast** (``fatal=True``, no further calls) on 400, 401, 403, 404 (and 405, 422), on a
  connection refused (or a connect timeout) by a service that has never answered — a wrong
  URL or port, not a blip — on a 429 whose body
  names a per-day quota (a ``google.rpc.QuotaFailure`` violation such as
  ``GenerateRequestsPerDayPerProjectPerModel-FreeTier``, or a quota of 0) or an exhausted
  account (OpenAI ``insufficient_quota``). Other 4xx answers are not retried and not fatal.
* **A body size cap** (``max_body_bytes``) enforced while reading.
* **A client-side rate limit** (:class:`~vocencebench._util.retry.RateLimiter`, requests per
  minute, across threads) whose clock and sleep are injectable.
* **No credentials in any text**: URLs are shown through :func:`~vocencebench.redact.safe_url`
  and every server text through :func:`~vocencebench.redact.redact`; the keys a client is
  given are registered as secrets.

Failures raise :class:`HTTPFailure`, a :class:`~vocencebench.errors.ServiceError` carrying
``status``, ``calls`` (HTTP requests made), ``fatal``, ``reason`` (a short machine-readable
cause) and ``body`` (the server's answer, redacted and cut). Each client translates it at its
own boundary (the judge into ``JudgeError``, the transcriber into ``TranscriptionError``, the
speech adapter into ``ServiceError``/``SynthesisError``).
"""

from __future__ import annotations

import contextlib
import logging
import random
import re
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Literal
from urllib.parse import urlsplit, urlunsplit

import httpx

from .._numbers import is_finite_number, is_whole_number
from ..errors import ConfigError, ServiceError
from ..redact import redact, register_secret, register_url_secrets, safe_url
from . import strict_json
from .deadline import DeadlineTransport, deadline_at
from .retry import (
    RateLimiter,
    RetryPolicy,
    account_exhausted,
    google_details,
    is_fatal_status,
    is_retry_status,
    retry_delay_s,
)
from .text import terminal_safe

__all__ = [
    "HTTPFailure",
    "HttpClient",
    "HttpResponse",
    "check_credentials",
    "join_url",
]

log = logging.getLogger("vocencebench.http")


class _RedactingFilter(logging.Filter):
    """httpx logs each request's full URL at INFO: a key in its query (``?api_key=…``, which
    a base URL may carry) must not reach a log line, so the message is redacted first."""

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        clean = redact(message, limit=None)
        if clean != message:
            record.msg, record.args = clean, None
        return True


# Installed when the HTTP stack is first imported: httpx logs through this one logger.
if not any(isinstance(f, _RedactingFilter) for f in logging.getLogger("httpx").filters):
    logging.getLogger("httpx").addFilter(_RedactingFilter())

_HINTS = {
    400: "the server refused the request as malformed",
    401: "check the API key",
    403: "check the API key and that it may use this model",
    404: "check the model name and the base URL",
    405: "check the base URL (this path does not take POST)",
    422: "the server refused the request's fields (model, voice, format?)",
    402: "check the account's billing",
    410: "the endpoint or model is gone: check the base URL and the model name",
    413: "the request is larger than the server takes",
    415: "the server does not take this request's media type: check the base URL",
    451: "the server refused this content",
}

#: Bytes of an error answer that are read (the rest is dropped; 300 characters are shown).
_ERROR_BODY_BYTES = 65_536

#: Why a request produced no usable answer (:attr:`HTTPFailure.reason`).
Reason = Literal["status", "transport", "unreachable", "deadline", "truncated", "too-large",
                 "quota", "wait-too-long"]



def join_url(base: str, path: str, *, strip: str = "") -> str:
    """``base`` with ``path`` appended to its path (after removing a trailing ``strip`` such
    as ``/v1``), keeping the base's query string and user info where they are."""
    parts = urlsplit(base)
    root = parts.path.rstrip("/")
    if strip and root.endswith(strip):
        root = root[: -len(strip)]
    return urlunsplit((parts.scheme, parts.netloc, root + path, parts.query, ""))



# ---------------------------------------------------------------------------- errors/results


class HTTPFailure(ServiceError):
    """A request that produced no usable answer (see the module docstring).

    ``reason`` is one of ``status`` (an HTTP error status), ``transport`` (network),
    ``deadline`` (the attempt's total deadline passed), ``truncated`` (body shorter than its
    ``Content-Length``), ``too-large`` (body over the cap), ``quota`` (per-day or exhausted
    quota), ``wait-too-long`` (the server asked to wait longer than allowed); ``body`` is the
    last answer's body, redacted and cut to 300 characters (empty when there was none).
    """

    def __init__(self, *args: object, fatal: bool = False, status: int | None = None,
                 calls: int = 0, reason: Reason = "status", body: str = "") -> None:
        super().__init__(*args, fatal=fatal, status=status, calls=calls)
        self.reason: Reason = reason
        self.body = body


@dataclass(frozen=True)
class HttpResponse:
    """A successful (2xx) answer read in full: ``status``, lower-cased ``headers``, ``content``
    (bytes), and ``calls`` — the HTTP requests it took (1 + retries)."""

    status: int
    headers: Mapping[str, str]
    content: bytes
    calls: int

    @property
    def retries(self) -> int:
        """Requests re-sent before this answer."""
        return self.calls - 1

    def json(self) -> Any:
        """The body parsed as JSON (raises ``ValueError`` when it is not, or nests deeper
        than the parser can follow)."""
        return strict_json.loads(self.content)

    @property
    def text(self) -> str:
        """The body decoded as UTF-8 (invalid bytes replaced)."""
        return self.content.decode("utf-8", "replace")


# ---------------------------------------------------------------------------- the client


class _Retry(Exception):
    """One failed attempt that may be retried (internal)."""

    def __init__(self, reason: Reason, why: str, status: int | None = None,
                 wait: float | None = None, body: str = "") -> None:
        super().__init__(why)
        self.reason: Reason = reason
        self.why = why
        self.status = status
        self.wait = wait
        self.body = body


@dataclass(frozen=True)
class _Request:
    method: str
    url: str
    json: Any = None
    content: bytes | None = None
    data: Mapping[str, str] | None = None
    files: Mapping[str, tuple[str, bytes, str]] | None = None
    headers: Mapping[str, str] | None = None


_KEY_HEADERS = ("authorization", "x-goog-api-key", "api-key", "x-api-key")


def check_credentials(url: str, *, has_key: bool) -> None:
    """Refuse a URL with ``user:password@`` for a service that also sends an API key.

    httpx turns userinfo into HTTP Basic authentication, which silently *replaces* an
    ``Authorization: Bearer`` key (every call a 401 whose cause the user cannot see) or
    competes with a key header. Called where a component is configured, so the CLI fails
    before any work, and again for every request."""
    parts = urlsplit(url)
    if has_key and (parts.username or parts.password):
        raise ConfigError(f"{safe_url(url)} carries a user name/password and the request also "
                          "sends an API key; httpx would send the password as HTTP Basic "
                          "authentication, replacing a Bearer key or competing with a key "
                          "header. Remove 'user:password@' from the URL, or the key",
                          fatal=True)


def _one_credential(url: str, headers: Mapping[str, str] | None) -> None:
    check_credentials(url, has_key=any(k.lower() in _KEY_HEADERS for k in (headers or {})))


# What no header value may hold: a control character but the tab (CR and LF would split the
# request; the HTTP library refuses them with a message that quotes the value).
_HEADER_CONTROL = re.compile(r"[\x00-\x08\x0a-\x1f\x7f]")


def _check_headers(service: str, headers: Mapping[str, str] | None) -> None:
    """Refuse a header value with a control character, naming the header, never the value
    (a key the components did not check: :func:`vocencebench.redact.check_key`)."""
    for name, value in (headers or {}).items():
        if _HEADER_CONTROL.search(value):
            raise ConfigError(f"{service}: the {name} header holds a control character (CR, "
                              "LF, NUL…); an HTTP header cannot carry it. If it holds an API "
                              "key, set the key again without it (the value is not shown)",
                              fatal=True)


class HttpClient:
    """Sends requests for one service with the shared policy of the module docstring.

    ``service`` names it in messages (``"gemini judge"``, ``"speech server"``); ``timeout_s``
    is the total deadline of one attempt; ``retry`` the :class:`RetryPolicy`;
    ``max_body_bytes`` the largest body read; ``secrets`` the credentials it sends (they are
    registered with :mod:`vocencebench.redact`). ``transport`` replaces the network (tests);
    ``sleep`` the waits between attempts; ``rand`` the jitter
    source (a callable returning [0, 1)); ``wall_clock`` the time an HTTP-date ``Retry-After``
    is measured against; ``limiter`` a shared :class:`RateLimiter`. Thread-safe.
    """

    def __init__(
        self,
        service: str,
        *,
        timeout_s: float = 180.0,
        retry: RetryPolicy | None = None,
        max_body_bytes: int = 10_000_000,
        secrets: Iterable[str | None] = (),
        transport: httpx.BaseTransport | None = None,
        sleep: Callable[[float], None] | None = None,
        rand: Callable[[], float] | None = None,
        wall_clock: Callable[[], float] = time.time,
        limiter: RateLimiter | None = None,
    ) -> None:
        if not (is_finite_number(timeout_s) and timeout_s > 0):
            raise ConfigError(f"timeout must be a positive number of seconds, got {timeout_s!r}")
        if not is_whole_number(max_body_bytes) or max_body_bytes < 1:
            raise ConfigError(f"max_body_bytes must be a positive integer, got {max_body_bytes!r}")
        self.service = service
        self.timeout_s = float(timeout_s)
        self.retry = retry or RetryPolicy()
        self.max_body_bytes = max_body_bytes
        self._secrets = tuple(s for s in secrets if s)
        for s in self._secrets:
            register_secret(s)
        self._transport = transport
        self._sleep = sleep or time.sleep
        self._rand = rand or random.random
        self._wall = wall_clock
        self.limiter = limiter or RateLimiter(sleep=self._sleep)
        self._client: httpx.Client | None = None
        self._lock = threading.Lock()
        #: Whether any answer (status line and headers) ever arrived from this service.
        self._answered = False

    def __repr__(self) -> str:
        return f"HttpClient({self.service!r}, timeout_s={self.timeout_s:g})"

    # -- plumbing
    def _timeout(self) -> httpx.Timeout:
        return httpx.Timeout(self.timeout_s, connect=min(10.0, self.timeout_s))

    def _sync_client(self) -> httpx.Client:
        with self._lock:
            if self._client is None:
                self._client = httpx.Client(
                    timeout=self._timeout(), transport=self._transport or DeadlineTransport(),
                    follow_redirects=False)
            return self._client

    def close(self) -> None:
        """Close the connection pool (a later request opens a new one)."""
        with self._lock:
            if self._client is not None:
                self._client.close()
                self._client = None

    def __getstate__(self) -> dict[str, Any]:
        state = self.__dict__.copy()
        state["_client"] = None
        state["_lock"] = None
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._lock = threading.Lock()
        for s in self._secrets:  # the registry is per process: register them here too
            register_secret(s)

    # -- one attempt: classify a complete answer
    def _outcome(self, req: _Request, status: int, headers: Mapping[str, str], body: bytes,
                 calls: int) -> HttpResponse:
        if 200 <= status < 300:
            return HttpResponse(status, dict(headers), body, calls)
        text = body.decode("utf-8", "replace")
        shown = redact(" ".join(text.split()))
        parsed: Any = None
        with contextlib.suppress(ValueError):
            parsed = strict_json.loads(text) if text.strip() else None
        where = safe_url(req.url)
        should = headers.get("x-should-retry", "").lower()
        if status == 429:
            _, exhausted = google_details(parsed)
            if exhausted:
                raise HTTPFailure(
                    f"{self.service}: HTTP 429 from {where}: quota exhausted "
                    f"({', '.join(exhausted[:3])}); waiting minutes will not help — use "
                    "another key or project, a paid tier, or run again after the quota resets",
                    fatal=True, status=status, calls=calls, reason="quota", body=shown)
            if account_exhausted(parsed):
                raise HTTPFailure(
                    f"{self.service}: HTTP 429 from {where}: the account has no quota left "
                    f"(insufficient_quota): {shown} — check the plan and billing",
                    fatal=True, status=status, calls=calls, reason="quota", body=shown)
        if (is_retry_status(status) and should != "false") or should == "true":
            wait = retry_delay_s(headers, parsed, now=self._wall)
            raise _Retry("status", f"HTTP {status}", status=status, wait=wait, body=shown)
        hint = _HINTS.get(status, "see the server's message")
        if 300 <= status < 400:
            # Requests are never redirected: a POST sent on to another URL may lose its body
            # or its key. The URL the server names is the one to configure.
            to = headers.get("location", "")
            hint = (f"the server redirects to {safe_url(to)!r}: configure that URL" if to
                    else "the server redirects: configure the final URL")
        raise HTTPFailure(
            f"{self.service}: HTTP {status} from {where}: {shown or '(empty body)'} — {hint}",
            fatal=is_fatal_status(status), status=status, calls=calls, reason="status",
            body=shown)

    def _check_length(self, headers: Mapping[str, str], downloaded: int) -> None:
        declared = headers.get("content-length")
        if declared and declared.isdigit() and int(declared) != downloaded:
            raise _Retry("truncated", f"truncated body ({downloaded} of {declared} bytes)")

    def _over_cap(self, req: _Request, status: int, size: int, calls: int) -> bool:
        """Whether to stop reading: an error body past :data:`_ERROR_BODY_BYTES` is cut
        (True); a 2xx body past ``max_body_bytes`` raises ``too-large``."""
        if not 200 <= status < 300:
            return size > _ERROR_BODY_BYTES
        if size > self.max_body_bytes:
            raise HTTPFailure(
                f"{self.service}: the answer from {safe_url(req.url)} is larger than the "
                f"{self.max_body_bytes / 1e6:g} MB cap", status=status, calls=calls,
                reason="too-large")
        return False

    def _next_wait(self, attempt: int, failure: _Retry, req: _Request, calls: int) -> float:
        """The wait before the next attempt, or the HTTPFailure that ends the call."""
        if failure.reason == "unreachable":
            raise HTTPFailure(
                f"{self.service}: {failure.why} to {safe_url(req.url)}, which has never "
                "answered; check the URL and port and that the server is up",
                fatal=True, calls=calls, reason="unreachable") from None
        if attempt == self.retry.max_retries:
            raise self._gave_up(failure, req, calls) from None
        if failure.wait is not None:
            if failure.wait > self.retry.max_retry_after_s:
                raise HTTPFailure(
                    f"{self.service}: {failure.why} from {safe_url(req.url)}; the server asks "
                    f"to wait {failure.wait:.0f} s, more than max_retry_after_s="
                    f"{self.retry.max_retry_after_s:g}; try again later",
                    fatal=True, status=failure.status, calls=calls, reason="wait-too-long",
                    body=failure.body) from None
            wait = failure.wait
        else:
            wait = self.retry.backoff(attempt, self._rand())
        self._log_retry(failure, wait, calls)
        return wait

    def _gave_up(self, failure: _Retry, req: _Request, calls: int) -> HTTPFailure:
        detail = f": {failure.body}" if failure.body else ""
        return HTTPFailure(
            f"{self.service}: {failure.why} after {calls} attempt{'' if calls == 1 else 's'} "
            f"to {safe_url(req.url)}"
            f"{detail}; check the server, or raise the retries/timeout",
            status=failure.status, calls=calls, reason=failure.reason, body=failure.body)

    def _log_retry(self, failure: _Retry, wait: float, calls: int) -> None:
        log.info("%s: %s; retrying in %.2f s (attempt %d of %d)", self.service,
                 terminal_safe(redact(failure.why)), wait, calls + 1, self.retry.max_retries + 1)

    # -- sending
    def request(self, method: str, url: str, *, json: Any = None, content: bytes | None = None,
                data: Mapping[str, str] | None = None,
                files: Mapping[str, tuple[str, bytes, str]] | None = None,
                headers: Mapping[str, str] | None = None,
                on_failed_attempt: Callable[[Reason], None] | None = None) -> HttpResponse:
        """Send one request with retries; the full 2xx answer, or :class:`HTTPFailure`.

        ``on_failed_attempt(reason)`` is called after each attempt that will be retried or
        ends the call with a retryable reason (before the wait): a metered caller counts the
        attempts a provider may bill (an answer cut short or too slow was still generated).
        It may raise to stop the retries."""
        register_url_secrets(url)
        _one_credential(url, headers)
        _check_headers(self.service, headers)
        req = _Request(method, url, json, content, data, files, headers)
        client = self._sync_client()
        for attempt in range(self.retry.max_retries + 1):
            self.limiter.acquire()
            calls = attempt + 1
            log.debug("%s: %s %s (attempt %d)", self.service, method, safe_url(url), calls)
            try:
                return self._attempt(client, req, calls)
            except _Retry as failure:
                if on_failed_attempt is not None:
                    on_failed_attempt(failure.reason)
                wait = self._next_wait(attempt, failure, req, calls)
                self._sleep(wait)
        raise AssertionError("unreachable")  # pragma: no cover

    def _attempt(self, client: httpx.Client, req: _Request, calls: int) -> HttpResponse:
        deadline = time.monotonic() + self.timeout_s
        with deadline_at(deadline):
            try:
                r = client.build_request(req.method, req.url, json=req.json,
                                         content=req.content, data=req.data, files=req.files,
                                         headers=req.headers)
                resp = client.send(r, stream=True)
                self._answered = True
                try:
                    chunks: list[bytes] = []
                    size, cut = 0, False
                    for chunk in resp.iter_bytes():
                        size += len(chunk)
                        chunks.append(chunk)
                        if time.monotonic() > deadline:
                            raise _Retry("deadline", self._deadline_why())
                        cut = self._over_cap(req, resp.status_code, size, calls)
                        if cut:
                            break
                    if not cut:
                        self._check_length(resp.headers, resp.num_bytes_downloaded)
                    body = b"".join(chunks)
                finally:
                    resp.close()
            except httpx.RequestError as exc:
                raise self._transport_failure(exc, deadline) from None
        return self._outcome(req, resp.status_code, resp.headers, body, calls)

    def _deadline_why(self) -> str:
        return f"no complete answer within the {self.timeout_s:g} s deadline"

    def _transport_failure(self, exc: Exception, deadline: float) -> _Retry:
        if isinstance(exc, httpx.ConnectError | httpx.ConnectTimeout) and not self._answered:
            return _Retry("unreachable", f"cannot connect ({type(exc).__name__}: "
                          f"{redact(exc, limit=120)})")
        if time.monotonic() >= deadline or isinstance(exc, httpx.TimeoutException):
            return _Retry("deadline", self._deadline_why())
        if isinstance(exc, httpx.RemoteProtocolError) and "incomplete" in str(exc).lower():
            return _Retry("truncated", "truncated body (the server closed the connection early)")
        return _Retry("transport", f"{type(exc).__name__}: {redact(exc, limit=120)}")
