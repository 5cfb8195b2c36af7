"""The OpenAI-compatible judge backend: ``/v1/chat/completions`` with ``input_audio`` parts
(any such server, e.g. vLLM serving Qwen2.5-Omni)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .._util.http import HTTPFailure, join_url
from ..errors import ConfigError
from ..redact import redact, safe_url
from ._http_backend import HTTPBackend, b64, split_hooks, token_count
from ._options import BackendOptions, OptionView
from ._types import CallUsage, JudgeRequest, Price

__all__ = ["OPENAI_FINAL_FINISH", "OpenAIChatBackend"]

#: OpenAI ``finish_reason`` values that a retry of the same request cannot change.
OPENAI_FINAL_FINISH = frozenset({"length", "content_filter"})


class OpenAIChatBackend(HTTPBackend):
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
        **settings: Any,
    ) -> None:
        hooks = split_hooks(settings)
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
            price=price, **hooks,
        )

    send_schema = OptionView[bool]("send_schema",
                                   "Whether the answer schema is sent as ``response_format``.")
    max_tokens = OptionView[int | None](
        "max_output_tokens", "``max_tokens`` in the request (= ``max_output_tokens``).")

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
                    {"type": "input_audio", "input_audio": {"data": b64(p.data), "format": fmt}}
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

    def _read(self, body: Mapping[str, Any]) -> tuple[CallUsage | None, str | None, str, bool]:
        u = body.get("usage")
        usage = None
        if isinstance(u, Mapping):
            pd = u.get("prompt_tokens_details")
            cd = u.get("completion_tokens_details")
            pdm = pd if isinstance(pd, Mapping) else {}
            audio = token_count(pdm.get("audio_tokens"))
            thinking = token_count(cd.get("reasoning_tokens")) if isinstance(cd, Mapping) else 0
            output = token_count(u.get("completion_tokens"))
            prompt, cached = token_count(u.get("prompt_tokens")), token_count(
                pdm.get("cached_tokens"))
            # A count no count can be (NaN, negative, text), or no prompt or completion count
            # at all (``usage: {}``): metered as unreported, not as a free call.
            reported = u.get("prompt_tokens") is not None and u.get("completion_tokens") is not None
            if reported and None not in (audio, thinking, output, prompt, cached):
                assert output is not None and thinking is not None
                # OpenAI counts reasoning inside completion_tokens; keep them apart.
                if thinking and output >= thinking:
                    output -= thinking
                usage = CallUsage(
                    prompt_tokens=int(prompt or 0), output_tokens=output,
                    thinking_tokens=thinking,
                    audio_tokens=audio if pdm.get("audio_tokens") is not None else None,
                    cached_tokens=int(cached or 0),
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
        if isinstance(text, list):  # content as parts, as some compatible servers send it
            text = "".join(str(p["text"]) for p in text if isinstance(p, Mapping)
                           and p.get("type") in ("text", "output_text")
                           and isinstance(p.get("text"), str))
        if not isinstance(text, str) or not text.strip():
            return usage, None, f"empty message (finish_reason {finish or None})", False
        return usage, text, "", False
