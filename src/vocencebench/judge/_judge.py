"""The judge: rubric prompts → backend calls in both orders × k votes → one :class:`Verdict`.

The unit of work is one *single judgement* (:meth:`Judge.judge_once`): one call to the
backend with the clips in one order (``"ab"``: the caller's ``audio_a`` is heard first as
"A"; ``"ba"``: ``audio_b`` is heard first) for one vote index. Its answer is validated and
un-swapped so that ``a``/``b`` always mean the caller's clips. :meth:`Judge.compare` runs
both orders × ``votes`` units and aggregates them (:func:`aggregate`):

* per order, the majority winner over the votes (a tied count is a ``tie``);
* ``consistent=True``: the winner stands only when both orders agree; otherwise ``tie`` and
  ``Verdict.consistent = False``; ``consistent=False``: the majority over all samples;
* ``score_a`` / ``score_b``: exact (``math.fsum``) means over every order and vote, 0–3.

An invalid answer is re-asked up to ``max_invalid_retries`` times, then the unit fails with
:class:`~vocencebench.errors.JudgeResponseError` — no score is ever made up. An answer that a
retry cannot change (:class:`~vocencebench.judge.UnretryableAnswerError`: output-token cap,
safety block, refusal) fails the unit at once, without a second paid call. With a
:class:`VerdictCache` attached, every finished unit is stored under
:func:`verdict_cache_key` before the next starts, so no paid call is repeated on resume.

Clips are given as encoded bytes in any format :func:`vocencebench.audio.load_audio` decodes
(WAV, FLAC, OGG, MP3) or as :class:`vocencebench.audio.Clip`; the judge always sends 16-bit
PCM WAV (:meth:`Clip.judge_wav`: the original bytes when they already are, else one
conversion) and keys its cache by the sha256 of the clip as given.

The async methods (:meth:`Judge.acompare`, :meth:`Judge.acompare_all`,
:meth:`Judge.ajudge_once`) are the same calls run in a worker thread: one judging loop.
"""

from __future__ import annotations

import asyncio
import copy
import dataclasses
import functools
import logging
import math
import os
import weakref
from collections.abc import Callable, Coroutine, Sequence
from typing import Any, Concatenate, ParamSpec, TypeVar

from .._numbers import is_whole_number
from .._util.closing import Closing
from .._util.text import terminal_safe
from ..errors import ConfigError, JudgeResponseError
from ..prompts import (
    PROMPT_VERSION,
    AudioSlot,
    Prompt,
    build_combined_prompt,
    build_prompt,
    parse_answer,
    parse_combined_answer,
)
from ..redact import check_key, redact, safe_url
from ..schema import Verdict
from ..traits import TRAITS, TraitRegistry
from ._aggregate import ORDERS, DimensionJudgement, Order, SingleJudgement, aggregate
from ._cache import TableVerdictCache, VerdictCache, verdict_cache_key
from ._clips import AudioLike, SentClip, as_clip, for_judge
from ._gemini import GeminiBackend
from ._http_backend import split_hooks
from ._openai_chat import OpenAIChatBackend
from ._options import BackendOptions
from ._types import AudioInput, JudgeBackend, JudgeRequest

__all__ = ["DEFAULT_GEMINI_MODEL", "UNPARSABLE_REASON", "Judge"]

log = logging.getLogger("vocencebench.judge")

P = ParamSpec("P")
R = TypeVar("R")

#: The words of the failure of a single judgement whose every try was unparsable (after
#: ``max_invalid_retries``); :mod:`vocencebench.judge_audit` counts the reasons holding them.
UNPARSABLE_REASON = "gave no valid verdict JSON"

#: The model ``Judge.gemini()`` uses unless told otherwise.
DEFAULT_GEMINI_MODEL = "gemini-3.1-pro-preview"

#: Keywords of the factories that configure the :class:`Judge` itself (the rest configure the
#: backend: :class:`BackendOptions` fields, or the test hooks below).
_JUDGE_KEYWORDS = ("registry", "max_invalid_retries", "max_concurrency", "temperature",
                   "cache", "validate_audio")


def _key_from_env(name: str | None) -> str | None:
    if not name:
        return None
    key = os.environ.get(name)
    if not key:
        raise ConfigError(f"environment variable {name} is not set or empty")
    return check_key(key, source=f"environment variable {name}")


def _gemini_key(api_key: str | None, api_key_env: str | None) -> str | None:
    """The Gemini key: ``api_key``, else the variable ``api_key_env`` names, else
    ``GEMINI_API_KEY``, then ``GOOGLE_API_KEY`` — checked, and named by where it came from."""
    if api_key:
        return check_key(api_key, source="api_key=")
    if api_key_env:
        return _key_from_env(api_key_env)
    for name in ("GEMINI_API_KEY", "GOOGLE_API_KEY"):
        key = os.environ.get(name)
        if key:
            return check_key(key, source=f"environment variable {name}")
    return None


def _split_settings(settings: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any],
                                                       dict[str, Any]]:
    """(Judge keywords, test hooks, BackendOptions fields) from a factory's ``**settings``."""
    judge = {k: settings.pop(k) for k in _JUDGE_KEYWORDS if k in settings}
    hooks = split_hooks(settings)
    unknown = sorted(set(settings) - set(BackendOptions.names()))
    if unknown:
        raise ConfigError(
            f"unknown judge option(s) {', '.join(unknown)}; backend options: "
            f"{', '.join(BackendOptions.names())}; judge options: {', '.join(_JUDGE_KEYWORDS)}"
        )
    return judge, hooks, settings


def _async_twin(method: Callable[Concatenate[Judge, P], R]
                ) -> Callable[Concatenate[Judge, P], Coroutine[Any, Any, R]]:
    """The async twin of a :class:`Judge` method: the same call (same keywords, same units in
    the same order) in a worker thread, at most ``max_concurrency`` of them at once per event
    loop, so an async caller runs several comparisons concurrently."""

    @functools.wraps(method)
    async def twin(self: Judge, /, *args: P.args, **kwargs: P.kwargs) -> R:
        async with self._semaphore():
            return await asyncio.to_thread(method, self, *args, **kwargs)

    twin.__name__ = "a" + method.__name__
    twin.__qualname__ = f"Judge.{twin.__name__}"
    twin.__doc__ = (f"Async :meth:`{method.__name__}`: the same call in a worker thread (at "
                    "most ``max_concurrency`` calls of this judge at once per event loop).")
    return twin


class Judge(Closing):
    """An audio-LLM judge over any :class:`JudgeBackend`.

    ``max_invalid_retries``: extra asks after an invalid answer (per single judgement);
    ``max_concurrency``: calls of the async methods running at once per event loop (each
    makes its backend calls one after the other, so this bounds the calls in flight too);
    ``temperature``: sampling temperature (0 = greedy); ``cache``: a :class:`VerdictCache`
    (or a store with ``get_json``/``put_json``) keeping finished single judgements;
    ``validate_audio``: run :func:`vocencebench.audio.load_audio` on each clip first.
    """

    def __init__(
        self,
        backend: JudgeBackend,
        *,
        registry: TraitRegistry = TRAITS,
        max_invalid_retries: int = 2,
        max_concurrency: int = 4,
        temperature: float = 0.0,
        cache: VerdictCache | Any | None = None,
        validate_audio: bool = True,
    ) -> None:
        if not isinstance(backend, JudgeBackend):
            raise ConfigError(f"{backend!r} is not a judge backend (needs model and complete())")
        if max_invalid_retries < 0 or max_concurrency < 1:
            raise ConfigError("max_invalid_retries must be >= 0 and max_concurrency >= 1")
        if not (math.isfinite(temperature) and 0 <= temperature <= 2):
            raise ConfigError(f"temperature must be in [0, 2], got {temperature}")
        self.backend = backend
        self.registry = registry
        self.max_invalid_retries = int(max_invalid_retries)
        self.max_concurrency = int(max_concurrency)
        self.temperature = float(temperature)
        self.validate_audio = validate_audio
        self.cache: VerdictCache | None = None
        if cache is not None:
            self.attach_cache(cache)
        self._sems: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, asyncio.Semaphore] = (
            weakref.WeakKeyDictionary()
        )

    # -- factories
    @classmethod
    def gemini(
        cls,
        model: str | None = None,
        api_key: str | None = None,
        *,
        options: BackendOptions | None = None,
        **settings: Any,
    ) -> Judge:
        """A judge on Gemini (model default :data:`DEFAULT_GEMINI_MODEL`).

        The key comes from ``api_key``, else the variable named by ``options.api_key_env``,
        else ``GEMINI_API_KEY``, then ``GOOGLE_API_KEY``. Backend options come from
        ``options`` (a :class:`BackendOptions`) and/or keywords naming its fields
        (``max_output_tokens=800``, ``base_url=``, ``spend_cap_usd=``,
        ``requests_per_minute=``, ``price=``, ...); the keywords ``registry``,
        ``max_invalid_retries``, ``max_concurrency``, ``temperature``, ``cache`` and
        ``validate_audio`` go to :class:`Judge`. An unknown keyword is a ConfigError.
        """
        judge_kw, hooks, backend_kw = _split_settings(settings)
        opts = BackendOptions.build(options, **backend_kw)
        key = _gemini_key(api_key, opts.api_key_env)
        if not key:
            raise ConfigError(
                "no Gemini API key: set GEMINI_API_KEY (or GOOGLE_API_KEY) in the environment, "
                "pass --judge-key-env NAME, or pass api_key="
            )
        backend = GeminiBackend(model or opts.model or DEFAULT_GEMINI_MODEL, key, options=opts,
                                **hooks)
        return cls(backend, **judge_kw)

    @classmethod
    def local(
        cls,
        base_url: str | None = None,
        model: str | None = None,
        api_key: str | None = None,
        *,
        options: BackendOptions | None = None,
        **settings: Any,
    ) -> Judge:
        """A judge on an OpenAI-compatible chat-completions server with audio input
        (e.g. ``vllm serve Qwen/Qwen2.5-Omni-7B --limit-mm-per-prompt '{"audio": 2}'``).

        ``base_url`` and ``model`` may also come from ``options``; the key from ``api_key`` or
        the variable named by ``options.api_key_env`` (none by default). Other keywords as in
        :meth:`gemini`.
        """
        judge_kw, hooks, backend_kw = _split_settings(settings)
        opts = BackendOptions.build(options, **backend_kw)
        key = check_key(api_key, source="api_key=") or _key_from_env(opts.api_key_env)
        backend = OpenAIChatBackend(base_url, model, key, options=opts, **hooks)
        return cls(backend, **judge_kw)

    @classmethod
    def from_spec(cls, spec: str, *, api_key_env: str | None = None,
                  options: BackendOptions | None = None, **settings: Any) -> Judge:
        """A judge from a command-line spec: ``gemini``, ``gemini:MODEL`` or
        ``local:URL#MODEL``. ``api_key_env`` names an environment variable holding the key
        (default: GEMINI_API_KEY/GOOGLE_API_KEY for Gemini, none for a local server); other
        keywords as in :meth:`gemini`."""
        name, _, arg = spec.partition(":")
        return cls.from_form(name, arg, spec=spec, api_key_env=api_key_env, options=options,
                             **settings)

    @classmethod
    def from_form(cls, name: str, arg: str, *, spec: str | None = None,
                  api_key_env: str | None = None, options: BackendOptions | None = None,
                  **settings: Any) -> Judge:
        """The judge of one spec form: ``name`` is the word before ``:`` (``gemini`` or
        ``local``), ``arg`` the text after it ("" for none: ``gemini`` alone uses
        :data:`DEFAULT_GEMINI_MODEL`; ``local`` needs ``URL#MODEL``). ``spec``: the spec as
        error messages show it (default ``name:arg``). The one parser of judge specs: the
        spec registry (:mod:`vocencebench.specs`) and :meth:`from_spec` both build here;
        other keywords as in :meth:`from_spec`."""
        shown = spec if spec is not None else (f"{name}:{arg}" if arg else name)
        if api_key_env is not None:
            settings["api_key_env"] = api_key_env
        if name == "gemini":
            return cls.gemini(arg or None, options=options, **settings)
        if name == "local":
            url, _, model = arg.partition("#")
            if not url or not model:
                raise ConfigError(
                    f"expected local:URL#MODEL (e.g. local:http://localhost:8003#"
                    f"Qwen/Qwen2.5-Omni-7B), got {safe_url(shown)!r}"
                )
            return cls.local(url, model, options=options, **settings)
        raise ConfigError(
            f"unknown judge {safe_url(shown)!r}; use gemini, gemini:MODEL or local:URL#MODEL")

    # -- properties and plumbing
    @property
    def model(self) -> str:
        """The backend's model name."""
        return self.backend.model

    @property
    def prompt_version(self) -> str:
        """Version of the rubrics and schema (:data:`vocencebench.prompts.PROMPT_VERSION`)."""
        return PROMPT_VERSION

    def attach_cache(self, cache: VerdictCache | Any) -> None:
        """Keep finished single judgements in ``cache`` (a :class:`VerdictCache`, or a store
        with ``get_json``/``put_json`` such as :class:`vocencebench.cache.Cache`)."""
        if hasattr(cache, "get_json") and hasattr(cache, "put_json"):
            self.cache = TableVerdictCache(cache)
        elif isinstance(cache, VerdictCache):
            self.cache = cache
        else:
            raise ConfigError(f"{cache!r} is not a verdict cache (needs get/put)")

    def with_cache(self, cache: VerdictCache | Any | None) -> Judge:
        """A new judge with the same backend and settings but its own ``cache`` (a
        :class:`VerdictCache`, a store with ``get_json``/``put_json``, or None).

        The caller's judge is left as it was: a pipeline run attaches its run cache to the
        copy, so closing that cache never breaks the caller's judge. The copies share the
        backend, hence its usage totals, rate limit, spend cap and connection pool (closing
        any copy closes the pool; the next call opens a new one).
        """
        twin = copy.copy(self)
        twin.cache = None
        twin._sems = weakref.WeakKeyDictionary()
        if cache is not None:
            twin.attach_cache(cache)
        return twin

    def close(self) -> None:
        """Close the backend's connections (if it has any)."""
        closer = getattr(self.backend, "close", None)
        if callable(closer):
            closer()

    def __repr__(self) -> str:
        return f"Judge({self.backend!r}, prompt_version={PROMPT_VERSION!r})"

    # -- building one unit
    def _prompt(
        self, text: str, instruction: str, dimension: str | Sequence[str], category: str | None
    ) -> Prompt:
        if isinstance(dimension, str):
            return build_prompt(text=text, instruction=instruction, dimension=dimension,
                                category=category, registry=self.registry)
        return build_combined_prompt(text=text, instruction=instruction, dimensions=dimension,
                                     category=category, registry=self.registry)

    def _clips(self, audio_a: Any, audio_b: Any) -> tuple[SentClip, SentClip]:
        a, b = as_clip(audio_a, "audio_a"), as_clip(audio_b, "audio_b")
        return for_judge(a, self.validate_audio), for_judge(b, self.validate_audio)

    def _request(self, prompt: Prompt, a: SentClip, b: SentClip, order: str,
                 vote: int) -> JudgeRequest:
        first, second = (a.wav, b.wav) if order == "ab" else (b.wav, a.wav)
        parts: list[str | AudioInput] = []
        for p in prompt.parts:
            if isinstance(p, AudioSlot):
                parts.append(AudioInput(first if p.label == "A" else second, label=p.label))
            else:
                parts.append(p)
        return JudgeRequest(system=prompt.system, parts=tuple(parts), schema=prompt.schema,
                            schema_name=prompt.schema_name, temperature=self.temperature,
                            seed=vote)

    def _key(self, prompt: Prompt, a: SentClip, b: SentClip, order: str, vote: int) -> str:
        return verdict_cache_key(
            clip_a_sha256=a.sha256,
            clip_b_sha256=b.sha256,
            dimensions=prompt.dimensions, order=order, vote=vote, model=self.model,
            prompt_version=prompt.version, prompt_sha256=prompt.sha256,
            temperature=self.temperature,
        )

    def _parse(self, prompt: Prompt, text: str, order: Order) -> dict[str, DimensionJudgement]:
        if len(prompt.dimensions) == 1 and prompt.schema_name == "vocencebench_verdict":
            answers = {prompt.dimensions[0]: parse_answer(text)}
        else:
            answers = parse_combined_answer(text, prompt.dimensions)
        return {d: DimensionJudgement.from_answer(a, order) for d, a in answers.items()}

    def _rejected(self, exc: JudgeResponseError, attempt: int, *, from_parser: bool) -> None:
        if from_parser:
            recorder = getattr(self.backend, "record_failure", None)
            if callable(recorder):
                recorder()
        log.warning("judge %s: invalid answer (try %d of %d): %s", self.model, attempt + 1,
                    self.max_invalid_retries + 1, terminal_safe(redact(exc)))

    def _give_up(self, last: JudgeResponseError | None) -> JudgeResponseError:
        return JudgeResponseError(
            f"judge {self.model} {UNPARSABLE_REASON} in {self.max_invalid_retries + 1} "
            f"tries (last problem: {redact(last)}); no score was recorded. Retry later or raise "
            "max_invalid_retries"
        )

    @staticmethod
    def _check_unit(order: str, vote: int) -> Order:
        if order not in ORDERS:
            raise ConfigError(f"order must be 'ab' or 'ba', got {order!r}")
        if not is_whole_number(vote) or vote < 0:
            raise ConfigError(f"vote must be a non-negative integer, got {vote!r}")
        return order  # type: ignore[return-value]

    # -- one unit
    def judge_once(
        self,
        *,
        text: str,
        instruction: str,
        audio_a: AudioLike,
        audio_b: AudioLike,
        dimension: str | Sequence[str] = "tone",
        order: str = "ab",
        vote: int = 0,
        category: str | None = None,
    ) -> SingleJudgement:
        """One backend call (cached when a cache is attached): ``order`` ``"ab"`` plays
        ``audio_a`` first, ``"ba"`` plays ``audio_b`` first; ``vote`` is the sample index.
        A sequence of dimensions asks for all of them in one call."""
        a, b = self._clips(audio_a, audio_b)
        return self._once(text, instruction, a, b, dimension, order, vote, category)

    def _once(self, text: str, instruction: str, a: SentClip, b: SentClip,
              dimension: str | Sequence[str], order: str, vote: int,
              category: str | None) -> SingleJudgement:
        """The one implementation of a single judgement: the cache, the call, re-asking
        after an invalid answer."""
        o = self._check_unit(order, vote)
        prompt = self._prompt(text, instruction, dimension, category)
        key = self._key(prompt, a, b, o, vote)
        if self.cache is not None and (hit := self.cache.get(key)) is not None:
            return SingleJudgement.from_dict(hit)
        request = self._request(prompt, a, b, o, vote)
        last: JudgeResponseError | None = None
        for attempt in range(self.max_invalid_retries + 1):
            try:
                reply = self.backend.complete(request)
            except JudgeResponseError as exc:
                if not getattr(exc, "retryable", True):
                    raise  # a retry cannot change it: fail the unit without another call
                last = exc
                self._rejected(exc, attempt, from_parser=False)
                continue
            try:
                dims = self._parse(prompt, reply.text, o)
            except JudgeResponseError as exc:
                last = exc
                self._rejected(exc, attempt, from_parser=True)
                continue
            return self._finish(key, o, vote, reply.model, prompt, reply.text, dims)
        raise self._give_up(last)

    def _finish(self, key: str, order: Order, vote: int, model: str, prompt: Prompt,
                raw: str, dims: dict[str, DimensionJudgement]) -> SingleJudgement:
        # The model's text is outside text too: a key it echoes must not reach the cache,
        # run.json or a report (nothing else in it changes: redact() masks secrets only).
        dims = {d: dataclasses.replace(j, analysis_a=redact(j.analysis_a, limit=None),
                                       analysis_b=redact(j.analysis_b, limit=None))
                for d, j in dims.items()}
        sj = SingleJudgement(order=order, vote=vote, model=model or self.model,
                             prompt_version=prompt.version, raw=redact(raw, limit=None),
                             judgements=dims)
        if self.cache is not None:
            self.cache.put(key, sj.to_dict())
        return sj

    # -- comparisons: every order × vote, one unit after the other
    @staticmethod
    def _units(votes: int, swap: bool | None, consistent: bool) -> list[tuple[str, int]]:
        if not is_whole_number(votes) or votes < 1:
            raise ConfigError(f"votes must be a positive integer, got {votes!r}")
        orders = ORDERS if (consistent if swap is None else swap) else ORDERS[:1]
        return [(o, v) for o in orders for v in range(votes)]

    def _dims(self, dimensions: Sequence[str] | None) -> tuple[str, ...]:
        dims = tuple(dimensions) if dimensions is not None else self.registry.judged_dimensions()
        for d in dims:
            self.registry.check_dimension(d)
        if not dims or len(set(dims)) != len(dims):
            raise ConfigError(f"need distinct dimensions, got {list(dims)}")
        return dims

    def compare(
        self,
        *,
        text: str,
        instruction: str,
        audio_a: AudioLike,
        audio_b: AudioLike,
        dimension: str = "tone",
        consistent: bool = True,
        votes: int = 1,
        swap: bool | None = None,
        category: str | None = None,
    ) -> Verdict:
        """Judge clips A and B on one ``dimension`` (a registered trait or ``naturalness``).

        ``consistent=True`` judges both presentation orders × ``votes`` samples and keeps a
        winner only when the orders agree; ``consistent=False`` judges one order (``"ab"``)
        unless ``swap=True`` asks for both (then the majority over all samples wins). See
        :func:`aggregate`.
        ``category`` picks the naturalness rubric (``everyday``, ``numbers``, ...).
        Raises :class:`~vocencebench.errors.JudgeError` when any unit fails.
        """
        self.registry.check_dimension(dimension)
        units = self._units(votes, swap, consistent)
        a, b = self._clips(audio_a, audio_b)
        sjs = [self._once(text, instruction, a, b, dimension, o, v, category) for o, v in units]
        return aggregate(sjs, dimension, consistent=consistent)

    def compare_all(
        self,
        *,
        text: str,
        instruction: str,
        audio_a: AudioLike,
        audio_b: AudioLike,
        dimensions: Sequence[str] | None = None,
        all_at_once: bool = True,
        consistent: bool = True,
        votes: int = 1,
        swap: bool | None = None,
        category: str | None = None,
    ) -> dict[str, Verdict]:
        """Verdicts on several dimensions (default: every judged dimension of the registry).

        ``all_at_once=True`` asks for every dimension in one call per order and vote (one
        audio upload); ``False`` makes one call per dimension, as :meth:`compare`.
        """
        dims = self._dims(dimensions)
        units = self._units(votes, swap, consistent)
        a, b = self._clips(audio_a, audio_b)
        if not all_at_once:
            return {
                d: aggregate([self._once(text, instruction, a, b, d, o, v, category)
                              for o, v in units], d, consistent=consistent)
                for d in dims
            }
        sjs = [self._once(text, instruction, a, b, dims, o, v, category) for o, v in units]
        return {d: aggregate(sjs, d, consistent=consistent) for d in dims}

    # -- the async twins: the same calls in a worker thread
    def _semaphore(self) -> asyncio.Semaphore:
        loop = asyncio.get_running_loop()
        sem = self._sems.get(loop)
        if sem is None:
            sem = self._sems[loop] = asyncio.Semaphore(self.max_concurrency)
        return sem

    ajudge_once = _async_twin(judge_once)
    acompare = _async_twin(compare)
    acompare_all = _async_twin(compare_all)
