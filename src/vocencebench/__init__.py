"""vocencebench: a reproducible, gaming-resistant benchmark for prompt-controllable TTS.

``import vocencebench as vb`` is cheap: the scoring core is imported at once, and the audio,
probe, judge and pipeline parts (which need the ``probes``/``classifiers``/``whisper`` extras)
are imported on first use of their names.
"""

from __future__ import annotations

import importlib
from typing import Any

__version__ = "0.1.0"

# `decide` stays a module name (vocencebench.decide); its function is decide.decide.
from .decide import composite, desirability, gate, margin
from .errors import (
    AudioError,
    BudgetExceededError,
    CacheError,
    ConfigError,
    CorpusError,
    JudgeError,
    JudgeResponseError,
    MissingDependencyError,
    ProbeError,
    ScoresError,
    SynthesisError,
    TranscriptionError,
    VocenceError,
)
from .schema import Decision, Item, ProbeResult, SampleScore, Verdict
from .traits import TRAITS, Trait, TraitRegistry

# Public names served lazily: name -> module that defines it.
_LAZY: dict[str, str] = {
    # pipeline
    "benchmark": "vocencebench.compare",
    "compare_models": "vocencebench.compare",
    "Head2Head": "vocencebench.compare",
    "leaderboard": "vocencebench.board",
    "Leaderboard": "vocencebench.board",
    "score_pair": "vocencebench.pair",
    "PairResult": "vocencebench.pair",
    "load_run": "vocencebench.report",
    "Cache": "vocencebench.cache",
    # corpus
    "load_benchmark": "vocencebench.corpus",
    "read_corpus": "vocencebench.corpus",
    "corpus_hash": "vocencebench.corpus",
    "split_holdout": "vocencebench.corpus",
    "balanced_assignment": "vocencebench.corpus",
    "generate_template_corpus": "vocencebench.corpus",
    "check_corpus": "vocencebench.corpus",
    "freeze": "vocencebench.corpus",
    "corpus_stats": "vocencebench.corpus",
    "write_corpus": "vocencebench.corpus",
    "generate_llm_corpus": "vocencebench.corpus_llm",
    "parse_instruction": "vocencebench.instruction",
    "find_contradictions": "vocencebench.instruction",
    "trait_mentions": "vocencebench.instruction",
    # audio, systems, gate
    "load_audio": "vocencebench.audio",
    "Audio": "vocencebench.audio",
    "to_wav_bytes": "vocencebench.audio",
    "EspeakSystem": "vocencebench.adapters",
    "TTSSystem": "vocencebench.adapters",
    "whisper_transcriber": "vocencebench.transcribe",
    "openai_transcriber": "vocencebench.transcribe",
    "pocketsphinx_transcriber": "vocencebench.transcribe",
    "Transcriber": "vocencebench.transcribe",
    "Transcript": "vocencebench.transcribe",
    # probes
    "default_probes": "vocencebench.probes",
    "with_classifiers": "vocencebench.probes",
    "ProbeSet": "vocencebench.probes",
    "Probe": "vocencebench.probes",
    "measure_batch": "vocencebench.probes",
    # judge
    "Judge": "vocencebench.judge",
    "PROMPT_VERSION": "vocencebench.prompts",
    "calibrate_files": "vocencebench.calibration",
    # scores files and metrics
    "read_scores": "vocencebench.scores",
    "decide_scores": "vocencebench.scores",
    "write_scores": "vocencebench.scores",
    "win_rates": "vocencebench.metrics",
    "control_success": "vocencebench.metrics",
    "confusion_matrices": "vocencebench.metrics",
    "bootstrap_ci": "vocencebench.metrics",
}

__all__ = [
    "TRAITS",
    "AudioError",
    "BudgetExceededError",
    "CacheError",
    "ConfigError",
    "CorpusError",
    "Decision",
    "Item",
    "JudgeError",
    "JudgeResponseError",
    "MissingDependencyError",
    "ProbeError",
    "ProbeResult",
    "SampleScore",
    "ScoresError",
    "SynthesisError",
    "Trait",
    "TraitRegistry",
    "TranscriptionError",
    "Verdict",
    "VocenceError",
    "__version__",
    "composite",
    "desirability",
    "gate",
    "margin",
    *sorted(_LAZY),
]


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'vocencebench' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))
