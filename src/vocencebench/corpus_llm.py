"""Write corpus items with a language model through an OpenAI-compatible chat endpoint.

For each slot of a balanced assignment the model is asked for one JSON object
``{"instruction": ..., "text": ...}``. Every answer is validated with the same checker as a
frozen corpus (:func:`vocencebench.corpus.check_item`, plus unique scripts); a rejected answer
is retried with the checker's complaints quoted in the prompt, at most ``max_attempts`` times.
The result is written with :func:`vocencebench.corpus.freeze`. Each accepted item is first
saved to a checkpoint (:func:`checkpoint_path`), so a stopped call resumes without asking for
(and paying for) an item twice.

Because LLM wording is stochastic, the frozen file, not this generator, is the artifact.

Configuration comes from arguments, else the environment: ``VOCENCE_LLM_BASE_URL`` (or
``OPENAI_BASE_URL``), ``VOCENCE_LLM_MODEL``, and the key from ``VOCENCE_LLM_API_KEY`` or
``OPENAI_API_KEY``. The key is sent only in the ``Authorization`` header; it never appears in
an error message, a log line or a ``repr``.

Requests go through the shared HTTP layer (:mod:`vocencebench._util.http`), like the judge's and the
transcriber's: ``timeout_s`` is the total deadline of one attempt; 408, 429, 5xx, network
errors and truncated answers are retried ``http_retries`` times with jittered backoff from
``backoff_s`` seconds, waiting what the server asks for (``Retry-After``, ``retry-after-ms``)
instead; 400/401/403/404, a per-day or exhausted quota and a server that never answered stop at
once with a fatal :class:`~vocencebench.errors.CorpusError` after one call. The endpoint is
shown only without credentials (no ``user:password@``, no ``?key=``), and every server text is
redacted.
"""

from __future__ import annotations

import logging
import os
import re
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import httpx

from ._numbers import is_finite_number, is_whole_number
from ._util import strict_json
from ._util.http import HttpClient, HTTPFailure, check_credentials, join_url
from ._util.retry import RetryPolicy
from .constants import CORPUS_SEED, CORPUS_SIZE
from .corpus import (
    MAX_OPENING_SHARE,
    Assignment,
    balanced_assignment,
    check_item,
    corpus_lines,
    freeze,
    opening,
    opening_limit,
    read_corpus,
    script_key,
)
from .errors import ConfigError, CorpusError
from .redact import check_key, redact, register_secret, register_url_secrets, safe_url
from .schema import Item
from .traits import TRAITS, TraitRegistry

__all__ = ["LLMCorpusWriter", "checkpoint_path", "generate_llm_corpus"]

log = logging.getLogger(__name__)

#: Most characters of a rejected answer quoted back to the model with the complaints (a
#: valid item is a few hundred characters; the rest of a longer answer is cut).
REJECTED_ANSWER_CHARS = 4000

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


def _env_key(*names: str) -> str | None:
    """The first of ``names`` that is set, as :func:`_env`, checked as an API key (the error
    names the variable)."""
    for n in names:
        v = os.environ.get(n)
        if v:
            register_secret(v)
            return check_key(v, source=f"environment variable {n}")
    return None


@dataclass(frozen=True)
class LLMCorpusWriter:
    """Client for one OpenAI-compatible ``/chat/completions`` endpoint.

    ``base_url`` is the API root (``.../v1``); ``timeout_s`` the total deadline of one HTTP
    attempt in seconds; ``http_retries`` the extra HTTP attempts after a retryable failure
    (408/429/5xx, network, deadline), ``backoff_s`` the first backoff step (doubling, capped at
    30 s, unless the server names a wait); ``max_attempts`` how many answers one item may take
    before it fails validation; ``temperature`` the sampling temperature (0–2). The API key and
    any credentials in ``base_url`` are hidden from ``repr`` and from every error.
    """

    base_url: str
    model: str
    api_key: str | None = field(default=None, repr=False)
    timeout_s: float = 60.0
    max_attempts: int = 4
    temperature: float = 0.8
    http_retries: int = 3
    backoff_s: float = 1.0

    def __post_init__(self) -> None:
        register_secret(self.api_key)
        check_key(self.api_key, source="api_key=")
        register_url_secrets(self.base_url)
        parts = urlsplit(self.base_url)
        if parts.scheme not in ("http", "https") or not parts.netloc:
            raise ConfigError(f"the LLM endpoint must be an http(s) URL such as "
                              f"http://host:8000/v1, got {safe_url(self.base_url)!r}")
        check_credentials(self.base_url, has_key=bool(self.api_key))
        if not self.model:
            raise ConfigError("no LLM model: pass model= or set VOCENCE_LLM_MODEL")
        if not is_whole_number(self.max_attempts) or self.max_attempts < 1:
            raise ConfigError(f"max_attempts must be an integer >= 1, got {self.max_attempts!r}")
        if not (is_finite_number(self.timeout_s) and self.timeout_s > 0):
            raise ConfigError(f"timeout_s must be a positive number of seconds, got "
                              f"{self.timeout_s!r}")
        if not (is_finite_number(self.temperature) and 0 <= self.temperature <= 2):
            raise ConfigError(f"temperature must be a number in 0-2, got {self.temperature!r}")
        self._retry_policy()  # validates http_retries and backoff_s now, not at the first call

    def __repr__(self) -> str:
        return (f"LLMCorpusWriter(base_url={safe_url(self.base_url)!r}, model={self.model!r}, "
                f"timeout_s={self.timeout_s!r}, max_attempts={self.max_attempts!r}, "
                f"temperature={self.temperature!r}, http_retries={self.http_retries!r}, "
                f"backoff_s={self.backoff_s!r})")

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
        key = api_key or _env_key("VOCENCE_LLM_API_KEY", "OPENAI_API_KEY")
        return cls(base_url=url, model=name, api_key=key, **options)

    # -- HTTP --------------------------------------------------------------------------

    def _retry_policy(self) -> RetryPolicy:
        return RetryPolicy.doubling(self.http_retries, self.backoff_s)

    def http_client(self, *, transport: httpx.BaseTransport | None = None,
                    sleep: Callable[[float], None] | None = None) -> HttpClient:
        """The shared-layer client this writer sends through (close it when done).
        ``transport`` replaces the network and ``sleep`` the waits between attempts (tests)."""
        return HttpClient("corpus LLM", timeout_s=self.timeout_s, retry=self._retry_policy(),
                          max_body_bytes=5_000_000, secrets=[self.api_key],
                          transport=transport, sleep=sleep)

    def _chat(self, http: HttpClient, messages: list[dict[str, str]]) -> str:
        headers = {"Content-Type": "application/json"}
        if self.api_key:
            headers["Authorization"] = f"Bearer {self.api_key}"
        body = {"model": self.model, "messages": messages, "temperature": self.temperature}
        # join_url keeps a query string (Azure's ?api-version=) after the path, not inside it.
        url = join_url(self.base_url, "/chat/completions")
        try:
            resp = http.request("POST", url, json=body, headers=headers)
        except HTTPFailure as exc:
            # The layer's text already names the cleaned URL, the redacted answer and a hint.
            raise CorpusError(redact(exc, limit=None), fatal=exc.fatal) from None
        try:
            content = resp.json()["choices"][0]["message"]["content"]
        except (ValueError, KeyError, IndexError, TypeError):
            raise CorpusError(
                f"corpus LLM: {safe_url(url)} answered HTTP {resp.status} without an "
                f"OpenAI-style choices[0].message.content: {redact(resp.text, limit=200)!r}; "
                "is it a chat-completions endpoint?") from None
        if not isinstance(content, str):
            # null content: a refusal, a tool call, or reasoning that used every token. Asking
            # again with the same prompt would be billed for the same outcome.
            raise CorpusError(
                f"corpus LLM: {safe_url(url)} answered without text content "
                f"({redact(resp.text, limit=200)!r}); check the model (a reasoning model may "
                "need a larger output budget on the server)")
        return content

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
        # A ValueError for any malformed answer, a key given twice included (which of two
        # "text" fields was meant is not ours to guess).
        obj = strict_json.loads(s[start:end + 1], unique_keys=True)
        if not isinstance(obj, dict) or not isinstance(obj.get("instruction"), str) or \
                not isinstance(obj.get("text"), str):
            raise ValueError('the object needs string fields "instruction" and "text"')
        return obj

    def write_item(self, http: HttpClient, a: Assignment, *, seen: set[str],
                   registry: TraitRegistry = TRAITS, openings: Counter[str] | None = None,
                   max_openings: int | None = None) -> Item:
        """One validated item for slot ``a`` (sent through ``http``, see
        :meth:`http_client`); ``seen`` holds script keys already used. With ``openings``
        (how many accepted items begin with each four-word opening, see
        :func:`vocencebench.corpus.opening`) and ``max_openings``, an instruction whose
        opening already begins that many items is rejected like any other rule; both are
        updated with the accepted item."""
        first = [{"role": "system", "content": _SYSTEM},
                 {"role": "user", "content": self._persona(a)}]
        messages = first
        complaints: list[str] = []
        for _ in range(self.max_attempts):
            answer = self._chat(http, messages)
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
                if script_key(item.text) in seen:
                    complaints.append("text: this script is already used; write a new one")
                start = opening(item.instruction)
                if openings is not None and max_openings is not None and \
                        openings[start] >= max_openings:
                    complaints.append(
                        f"instruction: the opening {start!r} already begins "
                        f"{openings[start]} item(s), the most one four-word opening may begin "
                        "in this corpus; start the instruction with other words")
                if not complaints:
                    seen.add(script_key(item.text))
                    if openings is not None:
                        openings[start] += 1
                    return item
            # Only the last rejected answer goes back, cut to REJECTED_ANSWER_CHARS: each
            # attempt re-sent every earlier answer in full, so a huge answer multiplied the
            # upload (and the billed input) with every attempt.
            shown = (answer if len(answer) <= REJECTED_ANSWER_CHARS
                     else answer[:REJECTED_ANSWER_CHARS] + " … [the rest of the answer is cut]")
            messages = [*first, {"role": "assistant", "content": shown},
                        {"role": "user", "content": "The validator rejected that item:\n- "
                         + "\n- ".join(complaints) + "\nFix every point and answer with the "
                         "corrected JSON object only."}]
        raise CorpusError(f"item {a.id}: no valid answer in {self.max_attempts} attempts; last "
                          f"complaints: {'; '.join(complaints)}")

    def write(self, assignments: Sequence[Assignment], *,
              registry: TraitRegistry = TRAITS,
              checkpoint: str | Path | None = None,
              max_opening_share: float | None = MAX_OPENING_SHARE,
              transport: httpx.BaseTransport | None = None,
              sleep: Callable[[float], None] | None = None) -> list[Item]:
        """Validated items for every slot of ``assignments``, in order (``transport`` and
        ``sleep`` as in :meth:`http_client`).

        ``max_opening_share`` (a fraction; None for no limit) is the opening-variety rule of
        ``vocencebench corpus check``: at most ⌊share × n⌋ items (at least 1) may begin with
        one four-word opening, so an answer that would pass the limit is sent back with that
        complaint, and the corpus can be frozen under the same rule.

        With ``checkpoint`` (a JSONL file in the corpus format) each item is appended there,
        flushed to disk, as soon as it is accepted, and the items already in that file are
        taken as they are instead of being asked for again: a writer stopped by an error, a
        quota or a kill resumes where it stopped. An item in the file must fit its slot of
        ``assignments`` (same id, traits, difficulty and category) and pass the checker;
        anything else is a CorpusError naming the file and the item."""
        path = Path(checkpoint) if checkpoint is not None else None
        done = _read_checkpoint(path, assignments, registry) if path is not None else {}
        if done:
            log.info("resuming from %s: %d of %d items were already written", path, len(done),
                     len(assignments))
        if max_opening_share is not None and not (
                is_finite_number(max_opening_share) and 0 < max_opening_share <= 1):
            raise ConfigError(f"max_opening_share must be a fraction in (0, 1] or None, got "
                              f"{max_opening_share!r}")
        seen = {script_key(it.text) for it in done.values()}
        openings = Counter(opening(it.instruction) for it in done.values())
        cap = (None if max_opening_share is None
               else opening_limit(len(assignments), max_opening_share))
        items: list[Item] = []
        http = self.http_client(transport=transport, sleep=sleep)
        try:
            for a in assignments:
                item = done.get(a.id)
                if item is None:
                    try:
                        item = self.write_item(http, a, seen=seen, registry=registry,
                                               openings=openings, max_openings=cap)
                    except CorpusError as exc:
                        if path is None:
                            raise
                        raise CorpusError(f"{exc}. {_kept(path, len(items))}") from None
                    if path is not None:
                        _append_item(path, item)
                items.append(item)
            return items
        finally:
            http.close()


def checkpoint_path(path: str | Path) -> Path:
    """Where :func:`generate_llm_corpus` keeps the items written so far for the corpus file
    ``path``: ``FILE.partial.jsonl`` beside ``FILE.jsonl``."""
    p = Path(path)
    stem = p.stem if p.suffix == ".jsonl" else p.name
    return p.with_name(stem + ".partial.jsonl")


def _kept(path: Path, n: int) -> str:
    return (f"The {n} item(s) accepted so far are kept in {path}: run the same call again "
            "to resume (delete that file to start over)")


def _append_item(path: Path, item: Item) -> None:
    # One flushed, fsynced line per paid answer: a kill loses at most the item being asked.
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a", encoding="utf-8", newline="\n") as f:
        f.write(corpus_lines([item])[0] + "\n")
        f.flush()
        os.fsync(f.fileno())


def _read_checkpoint(path: Path, assignments: Sequence[Assignment],
                     registry: TraitRegistry) -> dict[str, Item]:
    """The items of a checkpoint file by id (empty when there is none), each checked
    against its slot, the checker and the other scripts."""
    if not path.exists():
        return {}
    raw = path.read_bytes()
    if raw and not raw.endswith(b"\n"):
        # The writer was stopped in the middle of a line: that item was never complete.
        with path.open("r+b") as f:
            f.truncate(raw.rfind(b"\n") + 1)
        log.warning("%s: dropped an unfinished last line (the writer was stopped while "
                    "saving an item)", path)
    slots = {a.id: a for a in assignments}
    done: dict[str, Item] = {}
    seen: set[str] = set()
    for item in read_corpus(path, verify=False):
        where = f"{path}: item {item.id!r}"
        slot = slots.get(item.id)
        if slot is None or (item.traits, item.difficulty, item.category) != (
                dict(slot.traits), slot.difficulty, slot.category):
            raise CorpusError(f"{where} was written for another assignment (its id, traits, "
                              "difficulty or category differ from this call's slot): rerun "
                              "with the n, seed and registry that wrote it, or delete the "
                              "file to start over")
        if item.id in done:
            raise CorpusError(f"{where} appears twice; remove one of the lines")
        problems = check_item(item, registry=registry)
        if problems:
            raise CorpusError(f"{where} fails the checker ({problems[0].field}: "
                              f"{problems[0].problem}); remove the line and it is asked again")
        key = script_key(item.text)
        if key in seen:
            raise CorpusError(f"{where} repeats the script of an earlier item; remove the "
                              "line and it is asked again")
        seen.add(key)
        done[item.id] = item
    return done


def generate_llm_corpus(
    path: str | Path,
    n: int = CORPUS_SIZE,
    seed: int = CORPUS_SEED,
    *,
    base_url: str | None = None,
    model: str | None = None,
    api_key: str | None = None,
    registry: TraitRegistry = TRAITS,
    max_attempts: int = 4,
    temperature: float = 0.8,
    timeout_s: float = 60.0,
    max_opening_share: float | None = MAX_OPENING_SHARE,
) -> str:
    """Write ``n`` items for ``balanced_assignment(n, seed)`` with an LLM and freeze them at
    ``path`` (canonical JSONL + ``.sha256``). Returns the SHA-256 pin (hex).

    The items are asked for and frozen under ``vocencebench corpus check``'s rules, the
    opening variety (``max_opening_share``, see :meth:`LLMCorpusWriter.write`) included, so
    the frozen file passes that check.

    Every accepted item is saved at once in :func:`checkpoint_path` (``FILE.partial.jsonl``);
    a call that stops (an error, a spent quota, Ctrl-C, a kill) loses at most the item it was
    asking for, and the same call again asks only for the rest. The checkpoint is deleted once
    the corpus is frozen; it is kept when freezing refuses the items."""
    writer = LLMCorpusWriter.from_env(base_url=base_url, model=model, api_key=api_key,
                                      max_attempts=max_attempts, temperature=temperature,
                                      timeout_s=timeout_s)
    partial = checkpoint_path(path)
    items = writer.write(balanced_assignment(n, seed, registry=registry), registry=registry,
                         checkpoint=partial, max_opening_share=max_opening_share)
    try:
        digest = freeze(items, path, registry=registry, max_opening_share=max_opening_share)
    except CorpusError as exc:
        raise CorpusError(f"{exc} {_kept(partial, len(items))}") from None
    partial.unlink(missing_ok=True)
    return digest
