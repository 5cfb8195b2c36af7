"""vocencebench: a reproducible, gaming-resistant benchmark for prompt-controllable TTS.

``import vocencebench as vb`` imports nothing: every public name — the records and errors as
much as the audio, probe, judge and pipeline parts (which need the
``probes``/``classifiers``/``whisper`` extras) — is imported on first use. The public names
are exactly ``__all__``, listed and explained in ``docs/api.md`` (a test keeps the two
equal); everything else is imported from its module.
"""

# No ``from __future__ import annotations``, no import at all and no module-level helper
# names besides ``_LAZY``: every name is served on first use by ``__getattr__``, so importing
# the package runs no import (the CLI's entry point, ``vocencebench.cli``, is imported through
# it and must be able to install its signal handlers before any import work: see cli.py).
# Every name this module holds besides the dunders is public (``dir(vocencebench)`` is
# ``__all__``).

# Public names served lazily: name -> module that defines it.
_LAZY: dict[str, str] = {
    # the records, the registry and the errors (cheap, but still imports)
    **dict.fromkeys(("INCOMPLETE", "UNMEASURABLE", "Decision", "Item", "ProbeResult",
                     "SampleScore", "Verdict"), "vocencebench.schema"),
    **dict.fromkeys(("TRAITS", "Trait", "TraitRegistry"), "vocencebench.traits"),
    **dict.fromkeys(("AudioError", "BudgetExceededError", "CacheError", "ConfigError",
                     "CorpusError", "InstrumentError", "JudgeError", "JudgeResponseError",
                     "MissingDependencyError", "ProbeError", "ScoresError", "ServiceError",
                     "SynthesisError", "TranscriptionError", "VocenceError", "blame_of",
                     "is_fatal"), "vocencebench.errors"),
    # running a duel
    "benchmark": "vocencebench.compare",
    "compare_models": "vocencebench.compare",
    "score_pair": "vocencebench.pair",
    "load_benchmark": "vocencebench.corpus",
    "load_run": "vocencebench.result",
    "Judge": "vocencebench.judge",
    "default_probes": "vocencebench.probes",
    "with_classifiers": "vocencebench.probes",
    "whisper_transcriber": "vocencebench.transcribe",
    "openai_transcriber": "vocencebench.transcribe",
    "pocketsphinx_transcriber": "vocencebench.transcribe",
    "EspeakSystem": "vocencebench.adapters",
    "Cache": "vocencebench.cache",
    # more than two systems, and the red team
    "leaderboard": "vocencebench.board",
    "Leaderboard": "vocencebench.board",
    "redteam": "vocencebench.gaming",
    "RedteamResult": "vocencebench.gaming",
    # results
    "Head2Head": "vocencebench.result",
    "PairResult": "vocencebench.pair",
    "ClipAnalysis": "vocencebench.pair",
    "Transcript": "vocencebench.transcribe",
    # extension protocols
    "TTSSystem": "vocencebench.adapters",
    "BatchedSystem": "vocencebench.adapters",
    "ItemSystem": "vocencebench.adapters",
    "Probe": "vocencebench.probes",
    "BatchedProbe": "vocencebench.probes",
    "Diagnostic": "vocencebench.probes",
    "ProbeSet": "vocencebench.probes",
    "Transcriber": "vocencebench.transcribe",
    "JudgeBackend": "vocencebench.judge",
    "Executor": "vocencebench.executor",
    # audio
    "load_audio": "vocencebench.audio",
    "Audio": "vocencebench.audio",
    "Clip": "vocencebench.audio",
    "to_wav_bytes": "vocencebench.audio",
    # corpus, scores and metrics
    "load_corpus": "vocencebench.corpus",
    "validate_corpus": "vocencebench.corpus",
    "read_corpus": "vocencebench.corpus",
    "check_corpus": "vocencebench.corpus",
    "corpus_hash": "vocencebench.corpus",
    "split_holdout": "vocencebench.corpus",
    "read_scores": "vocencebench.scores",
    "decide_scores": "vocencebench.scores",
    "write_scores": "vocencebench.scores",
    "win_rates": "vocencebench.metrics",
    "control_success": "vocencebench.metrics",
    "confusion_matrices": "vocencebench.metrics",
    "bootstrap_ci": "vocencebench.metrics",
    "calibrate_files": "vocencebench.calibration",
    # scoring (`decide` stays a module name, vocencebench.decide; its function is decide.decide)
    "composite": "vocencebench.decide",
    "desirability": "vocencebench.decide",
    "gate": "vocencebench.decide",
    "margin": "vocencebench.decide",
    "PROMPT_VERSION": "vocencebench.prompts",
}

# The documented order (docs/api.md); tests/acceptance/test_api.py checks it name by name.
__all__ = [  # noqa: RUF022  (grouped as in docs/api.md, not sorted)
    # running a duel
    "benchmark", "compare_models", "score_pair", "load_benchmark", "load_run", "Judge",
    "default_probes", "with_classifiers", "whisper_transcriber", "openai_transcriber",
    "pocketsphinx_transcriber", "EspeakSystem", "Cache",
    # more than two systems, and the red team
    "leaderboard", "Leaderboard", "redteam", "RedteamResult",
    # results
    "Head2Head", "PairResult", "ClipAnalysis", "SampleScore", "Decision", "Verdict",
    "ProbeResult", "Item", "Transcript", "INCOMPLETE", "UNMEASURABLE",
    # extension protocols
    "TTSSystem", "BatchedSystem", "ItemSystem", "Probe", "BatchedProbe", "Diagnostic",
    "ProbeSet", "Transcriber", "JudgeBackend", "Executor",
    # audio
    "load_audio", "Audio", "Clip", "to_wav_bytes",
    # corpus, scores and metrics
    "load_corpus", "validate_corpus", "read_corpus", "check_corpus", "corpus_hash",
    "split_holdout", "read_scores", "decide_scores", "write_scores", "win_rates",
    "control_success", "confusion_matrices", "bootstrap_ci", "calibrate_files",
    # scoring
    "composite", "desirability", "gate", "margin", "PROMPT_VERSION",
    # traits
    "TRAITS", "Trait", "TraitRegistry",
    # errors
    "VocenceError", "ConfigError", "MissingDependencyError", "CorpusError", "AudioError",
    "SynthesisError", "InstrumentError", "ProbeError", "TranscriptionError", "JudgeError",
    "JudgeResponseError", "BudgetExceededError", "ServiceError", "ScoresError", "CacheError",
    "blame_of", "is_fatal",
    # version
    "__version__",
]


def __getattr__(name: str) -> object:
    import importlib

    if name == "__version__":
        value: object = importlib.import_module("vocencebench.constants").PACKAGE_VERSION
    else:
        module = _LAZY.get(name)
        if module is None:
            raise AttributeError(f"module 'vocencebench' has no attribute {name!r}")
        value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    # The public names only: not the submodules an import binds here (errors, schema, ...).
    return sorted(__all__)
