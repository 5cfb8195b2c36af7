"""The audio-LLM judge: rubric prompts, order swap, vote@k, backends, usage and cost.

``Judge`` (factories ``Judge.gemini``, ``Judge.local``, ``Judge.from_spec`` and
``Judge.from_form``, all configured by one :class:`BackendOptions`) turns a pair of clips into
a :class:`~vocencebench.schema.Verdict`; backends implement the one-method
:class:`JudgeBackend` protocol. See ``docs/judge.md``.

The package is a façade over one private module per job: ``_types`` (requests, replies,
usage, prices, the backend protocols), ``_options`` (:class:`BackendOptions`), ``_metering``
(usage totals and the spend cap), ``_http_backend`` (the request path the HTTP backends
share), ``_gemini``, ``_openai_chat``, ``_scripted`` (the backends), ``_clips`` (clips made
ready to send), ``_cache`` (verdict caches and their key), ``_aggregate`` (single judgements
and how they fold into a verdict), ``_judge`` (the judging loop and its factories) and
``_protocols`` (what a run asks of a judge).
"""

from __future__ import annotations

from ._aggregate import ORDERS, DimensionJudgement, SingleJudgement, aggregate, majority_winner
from ._cache import MemoryVerdictCache, TableVerdictCache, VerdictCache, verdict_cache_key
from ._gemini import DEFAULT_GEMINI_BASE_URL, GEMINI_BASE_URL_ENV, GeminiBackend
from ._judge import DEFAULT_GEMINI_MODEL, UNPARSABLE_REASON, Judge
from ._openai_chat import OpenAIChatBackend
from ._options import BackendOptions
from ._protocols import CachingJudge, PairJudge
from ._scripted import ScriptedBackend
from ._types import (
    AUDIO_TOKENS_PER_SECOND,
    PRICES,
    PRICES_AS_OF,
    AsyncJudgeBackend,
    AudioInput,
    CallUsage,
    JudgeBackend,
    JudgeReply,
    JudgeRequest,
    Price,
    UnretryableAnswerError,
    Usage,
    wav_duration_s,
)

__all__ = [
    "AUDIO_TOKENS_PER_SECOND",
    "DEFAULT_GEMINI_BASE_URL",
    "DEFAULT_GEMINI_MODEL",
    "GEMINI_BASE_URL_ENV",
    "ORDERS",
    "PRICES",
    "PRICES_AS_OF",
    "UNPARSABLE_REASON",
    "AsyncJudgeBackend",
    "AudioInput",
    "BackendOptions",
    "CachingJudge",
    "CallUsage",
    "DimensionJudgement",
    "GeminiBackend",
    "Judge",
    "JudgeBackend",
    "JudgeReply",
    "JudgeRequest",
    "MemoryVerdictCache",
    "OpenAIChatBackend",
    "PairJudge",
    "Price",
    "ScriptedBackend",
    "SingleJudgement",
    "TableVerdictCache",
    "UnretryableAnswerError",
    "Usage",
    "VerdictCache",
    "aggregate",
    "majority_winner",
    "verdict_cache_key",
    "wav_duration_s",
]
