"""Any ``/v1/audio/speech`` server with an ``instructions`` field, over the shared HTTP layer."""

from __future__ import annotations

import os
import time
from collections.abc import Callable

import httpx

from ..errors import ConfigError, SynthesisError

__all__ = ["OpenAISpeechAdapter"]


#: Words in a 400 answer that say the speech server refused the *content* (the system's
#: failure for that item), not the request's shape.
_REFUSAL_WORDS = ("policy", "refus", "safety", "moderation", "content_filter", "flagged",
                  "inappropriate", "not allowed", "violat")


class OpenAISpeechAdapter:
    """Any ``/v1/audio/speech`` server with an ``instructions`` field (e.g. gpt-4o-mini-tts).

    Requests go through the shared HTTP layer (:mod:`vocencebench._util.http`): ``timeout`` is the
    total deadline of one attempt (s); 408/429/5xx, connection resets and truncated answers
    are retried ``max_retries`` times (jittered backoff from ``backoff`` s, or the wait the
    server asks for); the answer is read up to ``max_bytes``. Safe to call from several
    threads at once. What a failure means:

    * the system's failure (:class:`~vocencebench.errors.SynthesisError`, S = 0 for the item):
      a 400 whose body says the content was refused (policy, safety, moderation), an empty
      answer, an answer over ``max_bytes``;
    * infrastructure (:class:`~vocencebench.errors.ServiceError`, ``blame="instrument"``: the
      item is incomplete, never scored): 429/5xx/network still failing after the retries —
      ``fatal=True`` when retrying cannot help (401/403/404/other 400s, a per-day quota).

    The bytes are returned as the server sent them, whatever their format (several servers
    ignore ``response_format``); :func:`vocencebench.audio.load_audio` decodes WAV, FLAC,
    OGG and MP3. The key comes from ``api_key`` or the ``api_key_env`` variable and is never in
    ``repr``, ``system_id`` or an error; neither are credentials in ``base_url``.
    """

    def __init__(
        self,
        base_url: str = "https://api.openai.com",
        model: str = "gpt-4o-mini-tts",
        voice: str = "alloy",
        *,
        api_key: str | None = None,
        api_key_env: str = "OPENAI_API_KEY",
        timeout: float = 120.0,
        max_retries: int = 4,
        backoff: float = 1.0,
        max_bytes: int | None = None,
        response_format: str = "wav",
        requests_per_minute: float | None = None,
        transport: httpx.BaseTransport | None = None,
        sleep: Callable[[float], None] | None = None,
    ) -> None:
        from .._util.http import HttpClient, check_credentials
        from .._util.retry import RateLimiter, RetryPolicy
        from ..audio import DEFAULT_MAX_BYTES
        from ..redact import check_key, register_secret, register_url_secrets, safe_url

        if not base_url.startswith(("http://", "https://")):
            raise ConfigError(f"base_url must start with http:// or https://, got "
                              f"{safe_url(base_url)!r}")
        register_url_secrets(base_url)
        self._base = base_url.rstrip("/")
        self.base_url = safe_url(self._base)
        self.model = model
        self.voice = voice
        self.response_format = response_format
        self._key = api_key if api_key is not None else os.environ.get(api_key_env)
        register_secret(self._key)
        check_key(self._key, source="api_key=" if api_key is not None
                  else f"environment variable {api_key_env}")
        check_credentials(base_url, has_key=bool(self._key))
        self.system_id = f"openai-speech:{self.base_url}#{model}#{voice}"
        self._http = HttpClient(
            "speech server", timeout_s=timeout,
            retry=RetryPolicy.doubling(max_retries, backoff),
            max_body_bytes=max_bytes or DEFAULT_MAX_BYTES, secrets=[self._key],
            transport=transport, sleep=sleep,
            limiter=RateLimiter(requests_per_minute, sleep=sleep or time.sleep))

    def _url(self) -> str:
        from .._util.http import join_url

        return join_url(self._base, "/v1/audio/speech", strip="/v1")

    def __call__(self, text: str, instruction: str) -> bytes:
        from .._util.http import HTTPFailure
        from ..errors import ServiceError
        from ..redact import redact

        headers = {"Authorization": f"Bearer {self._key}"} if self._key else {}
        body = {"model": self.model, "voice": self.voice, "input": text,
                "instructions": instruction, "response_format": self.response_format}
        try:
            r = self._http.request("POST", self._url(), json=body, headers=headers)
        except HTTPFailure as exc:
            if exc.reason == "too-large":
                raise SynthesisError(f"{self.system_id}: {redact(exc)}") from None
            if exc.status == 400 and any(w in exc.body.lower() for w in _REFUSAL_WORDS):
                raise SynthesisError(
                    f"{self.system_id}: the server refused the input (HTTP 400): {exc.body}"
                ) from None
            if exc.status in (413, 451) and exc.reason == "status":
                # This input too large for the system, or content it will not speak: the
                # system's limit, as a refusal is (another item may pass).
                raise SynthesisError(f"{self.system_id}: {redact(exc, limit=600)}") from None
            raise ServiceError(f"{self.system_id}: {redact(exc, limit=600)}",
                               fatal=exc.fatal, blame="instrument", status=exc.status,
                               calls=exc.calls) from None
        if not r.content:
            raise SynthesisError(f"{self.system_id}: HTTP {r.status} with an empty body "
                                 "(no audio)")
        ctype = r.headers.get("content-type", "")
        media = ctype.split(";", 1)[0].strip().lower()  # media types are case-insensitive
        if media.startswith("text/") or media == "application/json" or media.endswith("+json"):
            raise SynthesisError(f"{self.system_id}: HTTP {r.status} answered {ctype} instead "
                                 f"of audio: {redact(r.text, limit=200)}")
        return r.content

    def close(self) -> None:
        """Close the HTTP connection pool (a later call opens a new one)."""
        self._http.close()

    def __repr__(self) -> str:
        return f"OpenAISpeechAdapter({self.base_url!r}, model={self.model!r}, voice={self.voice!r})"
