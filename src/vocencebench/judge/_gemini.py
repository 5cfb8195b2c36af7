"""The Gemini judge backend: ``generateContent`` over raw HTTP (httpx), audio inline."""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

from .._util.http import HTTPFailure, join_url
from ..errors import ConfigError
from ..redact import safe_url
from ._http_backend import HTTPBackend, b64, split_hooks, token_count
from ._options import BackendOptions, OptionView
from ._types import PRICES, CallUsage, JudgeRequest

__all__ = ["DEFAULT_GEMINI_BASE_URL", "GEMINI_BASE_URL_ENV", "GEMINI_FINAL_FINISH",
           "GeminiBackend"]

#: Where Gemini requests go unless ``base_url`` or :data:`GEMINI_BASE_URL_ENV` says otherwise.
DEFAULT_GEMINI_BASE_URL = "https://generativelanguage.googleapis.com"
#: The environment variable the official Google Gen AI SDK reads for the Gemini base URL.
GEMINI_BASE_URL_ENV = "GOOGLE_GEMINI_BASE_URL"

#: Gemini ``finishReason`` values that a retry of the same request cannot change.
GEMINI_FINAL_FINISH = frozenset({
    "MAX_TOKENS", "SAFETY", "RECITATION", "LANGUAGE", "BLOCKLIST", "PROHIBITED_CONTENT",
    "SPII", "IMAGE_SAFETY", "IMAGE_PROHIBITED_CONTENT", "MALFORMED_FUNCTION_CALL",
})


def _without(obj: Any, key: str) -> Any:
    """A deep copy of a JSON value with every ``key`` entry removed from its objects."""
    if isinstance(obj, Mapping):
        return {k: _without(v, key) for k, v in obj.items() if k != key}
    if isinstance(obj, list):
        return [_without(v, key) for v in obj]
    return obj


class GeminiBackend(HTTPBackend):
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
        **settings: Any,
    ) -> None:
        hooks = split_hooks(settings)
        if not api_key:
            raise ConfigError("the Gemini judge needs an API key: set GEMINI_API_KEY")
        opts = BackendOptions.build(options, **settings)
        base = opts.base_url or os.environ.get(GEMINI_BASE_URL_ENV) or DEFAULT_GEMINI_BASE_URL
        if not base.startswith(("http://", "https://")):
            raise ConfigError(f"{GEMINI_BASE_URL_ENV} must start with http:// or https://, "
                              f"got {safe_url(base)!r}")
        super().__init__(
            model=model, base_url=join_url(base, "", strip="/v1beta"), api_key=api_key,
            options=opts, price=opts.price_for(model, PRICES), **hooks,
        )

    schema_field = OptionView[str]("schema_field",
                                   "Where the answer schema goes in ``generationConfig``.")
    thinking_budget = OptionView[int | None](
        "thinking_budget", "``thinkingConfig.thinkingBudget`` (tokens), or None.")
    thinking_level = OptionView[str | None]("thinking_level",
                                            "``thinkingConfig.thinkingLevel``, or None.")

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
                parts.append({"inline_data": {"mime_type": p.mime, "data": b64(p.data)}})
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

    def _read(self, body: Mapping[str, Any]) -> tuple[CallUsage | None, str | None, str, bool]:
        meta = body.get("usageMetadata")
        usage = None
        if isinstance(meta, Mapping):
            details = meta.get("promptTokensDetails")
            audio = ([token_count(d.get("tokenCount")) for d in details
                      if isinstance(d, Mapping) and d.get("modality") == "AUDIO"]
                     if isinstance(details, list) else None)
            counts = [token_count(meta.get(k)) for k in (
                "promptTokenCount", "candidatesTokenCount", "thoughtsTokenCount",
                "cachedContentTokenCount")]
            # A count no count can be (NaN, negative, text), or no prompt or answer count at
            # all (``usageMetadata: {}``, a total only): metered as unreported, not as free.
            reported = (meta.get("promptTokenCount") is not None
                        and meta.get("candidatesTokenCount") is not None)
            if reported and all(c is not None for c in counts) and None not in (audio or []):
                prompt, output, thinking, cached = (int(c or 0) for c in counts)
                usage = CallUsage(prompt_tokens=prompt, output_tokens=output,
                                  thinking_tokens=thinking, cached_tokens=cached,
                                  audio_tokens=None if audio is None
                                  else sum(int(a or 0) for a in audio))
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
                p["text"] for p in content["parts"]
                if isinstance(p, Mapping) and isinstance(p.get("text"), str)
                and not p.get("thought")
            ]
        if not texts:
            return usage, None, f"empty candidate (finishReason {reason or None})", False
        return usage, "".join(texts), "", False
