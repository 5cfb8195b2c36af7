"""Write corpus items with a language model through an OpenAI-compatible chat endpoint.

For each slot of a balanced assignment the model is asked for one JSON object
``{"instruction": ..., "text": ...}``. Every answer is validated with the same checker as a
frozen corpus (:func:`vocencebench.corpus.check_item`, plus unique scripts); a rejected answer
is retried with the checker's complaints quoted in the prompt, at most ``max_attempts`` times.
The result is written with :func:`vocencebench.corpus.freeze`.

Because LLM wording is stochastic, the frozen file, not this generator, is the artifact.

Configuration comes from arguments, else the environment: ``VOCENCE_LLM_BASE_URL`` (or
``OPENAI_BASE_URL``), ``VOCENCE_LLM_MODEL``, and the key from ``VOCENCE_LLM_API_KEY`` or
``OPENAI_API_KEY``. The key is sent only in the ``Authorization`` header; it never appears in
an error message, a log line or a ``repr``.
"""

from __future__ import annotations

import json
import os
import re
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

from .corpus import (
    CORPUS_SEED,
    Assignment,
    _script_key,
    balanced_assignment,
    check_item,
    freeze,
)
from .errors import ConfigError, CorpusError
from .schema import Item
from .traits import TRAITS, TraitRegistry

__all__ = ["LLMCorpusWriter", "generate_llm_corpus"]

_SYSTEM = """You write items for a benchmark of prompt-controllable text-to-speech.
For the persona you are given, answer with ONE JSON object and nothing else:
{"instruction": "...", "text": "..."}
- instruction: one or two natural sentences, a voice brief a sound director would write,
  stating EVERY trait value you are given (gender, age as a number, pace, pitch, loudness,
  emotion, accent, tone). Say pitch with the word pitch/pitched/register ("low-pitched"),
  loudness with quiet/loud or "<word> volume", tone with a tone/manner/delivery word.
- text: the words the speaker says. It suits the persona but NEVER names a trait: no emotion
  or tone words, no nationality or accent words, no man/woman/boy/girl, no ages, no words like
  loud, quiet, slow, fast, pitch, volume, accent.
- Tier rules: difficulty 0 = at most 8 short common words; difficulty 1 = 10 to 25 words of
  everyday speech; difficulty 2 = the named category: tongue_twister (a real tongue-twister),
  numbers (dense numbers, dates, times, currency, percentages in digits), urls (URLs, e-mail
  addresses, codes, version strings), nested_clauses (one sentence with two or more nested
  clauses)."""


def _env(*names: str) -> str | None:
    for n in names:
        v = os.environ.get(n)
        if v:
            return v
    return None


@dataclass(frozen=True)
class LLMCorpusWriter:
    """Client for one OpenAI-compatible ``/chat/completions`` endpoint.

    ``base_url`` is the API root (``.../v1``); ``timeout_s`` the per-request timeout in
    seconds; ``max_attempts`` how many answers one item may take before it fails;
    ``temperature`` the sampling temperature (0–2). The API key is hidden from ``repr``.
    """

    base_url: str
    model: str
    api_key: str | None = field(default=None, repr=False)
    timeout_s: float = 60.0
    max_attempts: int = 4
    temperature: float = 0.8
    http_retries: int = 3

    @classmethod
    def from_env(cls, *, base_url: str | None = None, model: str | None = None,
                 api_key: str | None = None, **options: Any) -> LLMCorpusWriter:
        """A writer configured from arguments, falling back on the environment variables."""
        url = base_url or _env("VOCENCE_LLM_BASE_URL", "OPENAI_BASE_URL")
        name = model or _env("VOCENCE_LLM_MODEL")
        if not url:
            raise ConfigError("no LLM endpoint: pass base_url= or set VOCENCE_LLM_BASE_URL "
                              "(an OpenAI-compatible API root such as http://host:8000/v1)")
        if not name:
            raise ConfigError("no LLM model: pass model= or set VOCENCE_LLM_MODEL")
        key = api_key or _env("VOCENCE_LLM_API_KEY", "OPENAI_API_KEY")
        return cls(base_url=url, model=name, api_key=key, **options)

    # -- HTTP --------------------------------------------------------------------------

    def _chat(self, client: httpx.Client, messages: list[dict[str, str]]) -> str:
        headers = {"Content-Type": "application/json"}
        if self.api_key:
            headers["Authorization"] = f"Bearer {self.api_key}"
        body = {"model": self.model, "messages": messages, "temperature": self.temperature}
        url = self.base_url.rstrip("/") + "/chat/completions"
        last = ""
        for attempt in range(self.http_retries + 1):
            try:
                r = client.post(url, json=body, headers=headers, timeout=self.timeout_s)
            except httpx.HTTPError as exc:
                last = f"{type(exc).__name__}"
            else:
                if r.status_code == 200:
                    try:
                        return str(r.json()["choices"][0]["message"]["content"])
                    except (ValueError, KeyError, IndexError, TypeError):
                        raise CorpusError(f"{url} answered 200 without an OpenAI-style "
                                          "choices[0].message.content") from None
                if r.status_code not in (408, 429) and r.status_code < 500:
                    raise CorpusError(f"{url} refused the request: HTTP {r.status_code}; check "
                                      "the model name and the API key")
                last = f"HTTP {r.status_code}"
            if attempt < self.http_retries:
                time.sleep(min(8.0, 0.5 * 2**attempt))
        raise CorpusError(f"{url} failed {self.http_retries + 1} times (last: {last}); is the "
                          "server up?")

    # -- items -------------------------------------------------------------------------

    @staticmethod
    def _persona(a: Assignment) -> str:
        traits = ", ".join(f"{k}={v}" for k, v in a.traits.items())
        return (f"Persona: {traits}. difficulty={a.difficulty}, category={a.category}. "
                "Answer with the JSON object only.")

    @staticmethod
    def _parse(answer: str) -> dict[str, Any]:
        s = answer.strip()
        fence = re.search(r"```(?:json)?\s*(.*?)```", s, re.DOTALL)
        if fence:
            s = fence.group(1).strip()
        start, end = s.find("{"), s.rfind("}")
        if start < 0 or end < start:
            raise ValueError("no JSON object in the answer")
        obj = json.loads(s[start:end + 1])
        if not isinstance(obj, dict) or not isinstance(obj.get("instruction"), str) or \
                not isinstance(obj.get("text"), str):
            raise ValueError('the object needs string fields "instruction" and "text"')
        return obj

    def write_item(self, client: httpx.Client, a: Assignment, *, seen: set[str],
                   registry: TraitRegistry = TRAITS) -> Item:
        """One validated item for slot ``a``; ``seen`` holds script keys already used."""
        messages = [{"role": "system", "content": _SYSTEM},
                    {"role": "user", "content": self._persona(a)}]
        complaints: list[str] = []
        for _ in range(self.max_attempts):
            answer = self._chat(client, messages)
            try:
                obj = self._parse(answer)
            except ValueError as exc:
                complaints = [f"your answer was not usable JSON: {exc}"]
            else:
                item = Item(id=a.id, instruction=obj["instruction"].strip(),
                            text=obj["text"].strip(), traits=dict(a.traits),
                            difficulty=a.difficulty, category=a.category)
                complaints = [f"{v.field}: {v.problem}"
                              for v in check_item(item, registry=registry)]
                if _script_key(item.text) in seen:
                    complaints.append("text: this script is already used; write a new one")
                if not complaints:
                    seen.add(_script_key(item.text))
                    return item
            messages = [*messages, {"role": "assistant", "content": answer},
                        {"role": "user", "content": "The validator rejected that item:\n- "
                         + "\n- ".join(complaints) + "\nFix every point and answer with the "
                         "corrected JSON object only."}]
        raise CorpusError(f"item {a.id}: no valid answer in {self.max_attempts} attempts; last "
                          f"complaints: {'; '.join(complaints)}")

    def write(self, assignments: Sequence[Assignment], *,
              registry: TraitRegistry = TRAITS,
              transport: httpx.BaseTransport | None = None) -> list[Item]:
        """Validated items for every slot of ``assignments``, in order."""
        seen: set[str] = set()
        with httpx.Client(transport=transport) as client:
            return [self.write_item(client, a, seen=seen, registry=registry)
                    for a in assignments]


def generate_llm_corpus(
    path: str | Path,
    n: int = 496,
    seed: int = CORPUS_SEED,
    *,
    base_url: str | None = None,
    model: str | None = None,
    api_key: str | None = None,
    registry: TraitRegistry = TRAITS,
    max_attempts: int = 4,
    temperature: float = 0.8,
    timeout_s: float = 60.0,
) -> str:
    """Write ``n`` items for ``balanced_assignment(n, seed)`` with an LLM and freeze them at
    ``path`` (canonical JSONL + ``.sha256``). Returns the SHA-256 pin (hex)."""
    writer = LLMCorpusWriter.from_env(base_url=base_url, model=model, api_key=api_key,
                                      max_attempts=max_attempts, temperature=temperature,
                                      timeout_s=timeout_s)
    items = writer.write(balanced_assignment(n, seed, registry=registry), registry=registry)
    return freeze(items, path, registry=registry)
