"""Corpus tools: the balanced trait sampler, hashing, loading, the gate, held-out splits.

The shipped corpus (``datasets/benchmark_v1.jsonl``) is the artifact; these functions make
assignments, pin and verify it. Every entry point that runs a corpus goes through one gate:
:func:`load_corpus` (read, verify the pin, validate) or, for items already in memory,
:func:`validate_corpus`. ``vocencebench corpus check`` adds the authoring rules on top.
"""

from __future__ import annotations

from ._corpus.checks import (
    AUTHORING_KINDS,
    EASY_MAX_WORDS,
    MAX_ID_CHARS,
    MAX_INSTRUCTION_CHARS,
    MAX_OPENING_SHARE,
    MAX_TEXT_CHARS,
    NORMAL_WORDS,
    RUN_BLOCKING_KINDS,
    Violation,
    check_corpus,
    check_item,
    freeze,
    load_corpus,
    opening,
    opening_limit,
    script_key,
    summarize_violations,
    validate_corpus,
    word_count,
)
from ._corpus.files import (
    MAX_CORPUS_BYTES,
    MAX_ITEMS,
    check_pin,
    corpus_file,
    corpus_hash,
    corpus_lines,
    load_benchmark,
    pin_path,
    read_corpus,
    write_corpus,
)
from ._corpus.sampler import (
    CATEGORIES,
    HARD_CATEGORIES,
    Assignment,
    balanced_assignment,
    cramers_v,
    difficulty_counts,
)
from ._corpus.splits import Split, split_holdout
from ._corpus.stats import CorpusStats, corpus_stats
from ._corpus.templates import generate_template_corpus, person_noun
from .constants import CORPUS_SEED, DIFFICULTY_MIX

__all__ = [
    "AUTHORING_KINDS",
    "CATEGORIES",
    "CORPUS_SEED",
    "DIFFICULTY_MIX",
    "EASY_MAX_WORDS",
    "HARD_CATEGORIES",
    "MAX_CORPUS_BYTES",
    "MAX_ID_CHARS",
    "MAX_INSTRUCTION_CHARS",
    "MAX_ITEMS",
    "MAX_OPENING_SHARE",
    "MAX_TEXT_CHARS",
    "NORMAL_WORDS",
    "RUN_BLOCKING_KINDS",
    "Assignment",
    "CorpusStats",
    "Split",
    "Violation",
    "balanced_assignment",
    "check_corpus",
    "check_item",
    "check_pin",
    "corpus_file",
    "corpus_hash",
    "corpus_lines",
    "corpus_stats",
    "cramers_v",
    "difficulty_counts",
    "freeze",
    "generate_template_corpus",
    "load_benchmark",
    "load_corpus",
    "opening",
    "opening_limit",
    "person_noun",
    "pin_path",
    "read_corpus",
    "script_key",
    "split_holdout",
    "summarize_violations",
    "validate_corpus",
    "word_count",
    "write_corpus",
]
