"""When the HTTP layer tries again, and how long it waits (times in seconds).

:class:`RetryPolicy` holds the jittered exponential backoff; :func:`is_retry_status` and
:data:`FATAL_STATUSES` sort the statuses; :func:`retry_delay_s` reads the wait a server asks
for (``retry-after-ms``, ``Retry-After``, Gemini's ``google.rpc.RetryInfo``) and
:func:`google_details` / :func:`account_exhausted` spot a quota that waiting cannot bring
back. :class:`RateLimiter` spaces request starts across threads. See
:mod:`vocencebench._util.http` for the policy as a whole.
"""

from __future__ import annotations

import contextlib
import datetime
import email.utils
import math
import re
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Final

from .._numbers import is_finite_number, is_whole_number
from ..errors import ConfigError

__all__ = [
    "BACKOFF_CEILING_S",
    "FATAL_STATUSES",
    "PER_REQUEST_STATUSES",
    "RateLimiter",
    "RetryPolicy",
    "account_exhausted",
    "google_details",
    "is_fatal_status",
    "is_retry_status",
    "retry_delay_s",
]

#: HTTP statuses that stop at once: retrying cannot change them, and the next request (same
#: key, model, URL and shape) would get the same answer.
FATAL_STATUSES = frozenset({400, 401, 403, 404, 405, 422})
#: The 4xx statuses about one request alone (its size, its content, its timing): another
#: item may well pass, so they fail only the item. 408 and 429 are retried first.
PER_REQUEST_STATUSES = frozenset({408, 413, 429, 451})


def is_fatal_status(status: int) -> bool:
    """True for the statuses that stop a run: :data:`FATAL_STATUSES` and every other 3xx and
    4xx but :data:`PER_REQUEST_STATUSES` (a redirect, 402, 410, 415, …: the configuration or
    the account is wrong, and every later request would be answered the same; a run that
    went on would leave each item incomplete for ever, reruns included)."""
    return status in FATAL_STATUSES or (300 <= status < 500
                                        and status not in PER_REQUEST_STATUSES)


#: The longest wait (s) between two attempts of :meth:`RetryPolicy.doubling`.
BACKOFF_CEILING_S: Final = 30.0


def is_retry_status(status: int) -> bool:
    """True for the statuses worth another attempt: 408, 429 and 5xx except 501 and 505."""
    return status in (408, 429) or (500 <= status <= 599 and status not in (501, 505))


@dataclass(frozen=True)
class RetryPolicy:
    """How a client retries (times in seconds).

    ``max_retries``: extra attempts after the first. ``backoff_s`` / ``max_backoff_s``: the
    exponential backoff's first step and ceiling. ``jitter``: the backoff is multiplied by a
    random factor in ``[1 − jitter, 1]`` (0 = exact). ``max_retry_after_s``: the longest
    server-requested wait that is honoured; a longer one ends the call (fatal).
    """

    max_retries: int = 5
    backoff_s: float = 2.0
    max_backoff_s: float = 60.0
    jitter: float = 0.5
    max_retry_after_s: float = 600.0

    def __post_init__(self) -> None:
        if not is_whole_number(self.max_retries) or self.max_retries < 0:
            raise ConfigError(f"max_retries must be an integer >= 0, got {self.max_retries!r}")
        for name in ("backoff_s", "max_backoff_s", "max_retry_after_s"):
            v = getattr(self, name)
            if not (is_finite_number(v) and v >= 0):
                raise ConfigError(f"{name} must be a finite number >= 0, got {v!r}")
        if not (0.0 <= self.jitter <= 1.0):
            raise ConfigError(f"jitter must be in [0, 1], got {self.jitter!r}")

    @classmethod
    def doubling(cls, max_retries: int, backoff_s: float) -> RetryPolicy:
        """``max_retries`` retries, the first after ``backoff_s`` seconds, doubling up to
        :data:`BACKOFF_CEILING_S` (or ``backoff_s`` itself when that is longer), with the
        default jitter: the policy of the clients that take only a count and a first step
        (the OpenAI-compatible transcriber and speech server, the corpus writer)."""
        return cls(max_retries=max_retries, backoff_s=backoff_s,
                   max_backoff_s=max(backoff_s, BACKOFF_CEILING_S))

    def backoff(self, attempt: int, rand: float) -> float:
        """The wait (s) before retry ``attempt`` (0-based) when the server names none."""
        base = min(self.max_backoff_s, self.backoff_s * 2.0 ** attempt)
        return float(base * (1.0 - self.jitter * rand))



# ---------------------------------------------------------------------------- rate limiter


class RateLimiter:
    """Spaces request starts at least ``60 / requests_per_minute`` seconds apart, across
    threads. ``clock`` (seconds, monotonic) and ``sleep`` are injectable for tests."""

    def __init__(self, requests_per_minute: float | None = None, *,
                 clock: Callable[[], float] = time.monotonic,
                 sleep: Callable[[float], None] = time.sleep) -> None:
        self._lock = threading.Lock()
        self._next = -math.inf
        self._clock = clock
        self._sleep = sleep
        self.interval_s = 0.0
        self.set(requests_per_minute)

    def __getstate__(self) -> dict[str, Any]:
        state = self.__dict__.copy()
        del state["_lock"]
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._lock = threading.Lock()

    def set(self, requests_per_minute: float | None) -> None:
        """Change the limit (None: no limit)."""
        if requests_per_minute is None:
            self.interval_s = 0.0
            return
        if not (is_finite_number(requests_per_minute) and requests_per_minute > 0):
            raise ConfigError(
                f"requests_per_minute must be a positive number, got {requests_per_minute!r}"
            )
        self.interval_s = 60.0 / float(requests_per_minute)

    @property
    def requests_per_minute(self) -> float | None:
        """The limit, or None."""
        return 60.0 / self.interval_s if self.interval_s else None

    def reserve(self) -> float:
        """Reserve the next start slot; returns the seconds to wait before it (≥ 0)."""
        if not self.interval_s:
            return 0.0
        with self._lock:
            now = self._clock()
            start = max(now, self._next)
            self._next = start + self.interval_s
            return start - now

    def acquire(self) -> float:
        """Wait (with the injected ``sleep``) for the next slot; returns the wait in seconds."""
        wait = self.reserve()
        if wait > 0:
            self._sleep(wait)
        return wait



# ---------------------------------------------------------------------------- server waits


_DURATION = re.compile(r"^\s*(\d+(?:\.\d*)?|\.\d+)\s*s\s*$")
_PER_DAY = re.compile(r"(?i)per[\s_-]?day|daily")


def _duration_s(value: Any) -> float | None:
    """A protobuf Duration in JSON (``"37s"``, ``"1.5s"``, or ``{"seconds": .., "nanos": ..}``)."""
    if isinstance(value, str):
        m = _DURATION.match(value)
        return float(m.group(1)) if m else None
    if isinstance(value, Mapping):
        try:
            v = float(value.get("seconds", 0)) + float(value.get("nanos", 0)) / 1e9
        except (TypeError, ValueError):
            return None
        # As for Retry-After: NaN is no wait given, a negative one is "now".
        return max(0.0, v) if math.isfinite(v) else None
    return None


def _error_object(body: Any) -> Mapping[str, Any] | None:
    if isinstance(body, list) and body and isinstance(body[0], Mapping):
        body = body[0]  # some Google front ends wrap the error in a list
    if isinstance(body, Mapping):
        err = body.get("error")
        if isinstance(err, Mapping):
            return err
    return None


def google_details(body: Any) -> tuple[float | None, list[str]]:
    """(RetryInfo.retryDelay in s or None, names of per-day / zero quotas that were hit)."""
    err = _error_object(body)
    details = err.get("details") if err is not None else None
    delay: float | None = None
    exhausted: list[str] = []
    if not isinstance(details, list):
        return None, []
    for d in details:
        if not isinstance(d, Mapping):
            continue
        kind = str(d.get("@type", ""))
        if kind.endswith("google.rpc.RetryInfo"):
            delay = _duration_s(d.get("retryDelay"))
        elif kind.endswith("google.rpc.QuotaFailure"):
            for v in d.get("violations") or []:
                if not isinstance(v, Mapping):
                    continue
                name = str(v.get("quotaId") or v.get("quotaMetric") or v.get("subject") or "")
                text = " ".join(str(v.get(k, "")) for k in
                                ("quotaId", "quotaMetric", "subject", "description"))
                if _PER_DAY.search(text):
                    exhausted.append(name or "a per-day quota")
                elif str(v.get("quotaValue", "")).strip() == "0":
                    exhausted.append(f"{name or 'a quota'} (limit 0 on this tier)")
        elif kind.endswith("google.rpc.ErrorInfo"):
            meta = d.get("metadata")
            if isinstance(meta, Mapping):
                limit = str(meta.get("quota_limit", ""))
                if _PER_DAY.search(limit):
                    exhausted.append(limit)
    return delay, exhausted


def account_exhausted(body: Any) -> bool:
    """OpenAI's 429 for an account without credit (``insufficient_quota``)."""
    err = _error_object(body)
    return err is not None and "insufficient_quota" in (str(err.get("code")),
                                                        str(err.get("type")))


def retry_delay_s(headers: Mapping[str, str], body: Any, *,
                  now: Callable[[], float] = time.time) -> float | None:
    """The wait (s) a server asks for, or None: ``retry-after-ms``, then ``Retry-After``
    (seconds or an HTTP date, against the wall clock ``now``), then Gemini's
    ``google.rpc.RetryInfo.retryDelay`` in the error body."""
    h = {k.lower(): v for k, v in headers.items()}
    ms = h.get("retry-after-ms")
    if ms:
        with contextlib.suppress(ValueError):
            v = float(ms)
            if math.isfinite(v):
                return max(0.0, v / 1000.0)
    ra = h.get("retry-after")
    if ra:
        try:
            v = float(ra)
            if math.isfinite(v):
                return max(0.0, v)
        except ValueError:
            try:
                when = email.utils.parsedate_to_datetime(ra)
            except (TypeError, ValueError, IndexError):
                when = None
            if when is not None:
                if when.tzinfo is None:  # the asctime form carries no zone: it is GMT
                    when = when.replace(tzinfo=datetime.UTC)
                return max(0.0, when.timestamp() - now())
    delay, _ = google_details(body)
    return delay
