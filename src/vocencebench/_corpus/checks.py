"""Item and corpus checks, and the run gate.

:func:`check_item` and :func:`check_corpus` list every broken rule as a :class:`Violation`;
:func:`validate_corpus` is the gate every run goes through (the rules in
:data:`RUN_BLOCKING_KINDS`), :func:`load_corpus` reads, verifies and validates in one call, and
:func:`freeze` refuses to pin a corpus that breaks any rule.
"""

from __future__ import annotations

import math
import os
import re
import unicodedata
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from .._numbers import is_finite_number
from .._util.text import UNSAFE
from ..errors import ConfigError, CorpusError
from ..schema import Item
from ..traits import TRAITS, TraitRegistry
from .files import MAX_ITEMS, is_path, load_benchmark, read_corpus, write_corpus
from .sampler import HARD_CATEGORIES

__all__ = [
    "AUTHORING_KINDS",
    "EASY_MAX_WORDS",
    "MAX_ID_CHARS",
    "MAX_INSTRUCTION_CHARS",
    "MAX_OPENING_SHARE",
    "MAX_TEXT_CHARS",
    "NORMAL_WORDS",
    "PARALLEL_CHECK_ITEMS",
    "RUN_BLOCKING_KINDS",
    "Violation",
    "check_corpus",
    "check_item",
    "freeze",
    "load_corpus",
    "opening",
    "opening_limit",
    "script_key",
    "summarize_violations",
    "validate_corpus",
    "word_count",
]

#: Easy scripts have at most this many words.
EASY_MAX_WORDS = 8
#: Normal scripts have this many words (inclusive range).
NORMAL_WORDS = (10, 25)
#: The most common four-word instruction opening may cover at most this share of items.
MAX_OPENING_SHARE = 0.03
#: Longest script (characters) any corpus may hold, about a minute of speech; benchmark_v1's
#: longest is 168.
MAX_TEXT_CHARS = 1000
#: Longest voice instruction (characters); benchmark_v1's longest is 209.
MAX_INSTRUCTION_CHARS = 1000
#: Smallest corpus (items) whose items :func:`check_corpus` checks in worker processes when
#: asked to: below it, starting them (about a second) costs more than it saves.
PARALLEL_CHECK_ITEMS = 5000
#: Longest item id (characters): ids name files (``DirectoryAdapter``) and cache keys.
MAX_ID_CHARS = 100

#: Violation kinds that make a corpus unusable for a run: :func:`validate_corpus` (and so
#: ``vocencebench run``, :func:`vocencebench.benchmark` and :func:`load_corpus`) refuses them.
RUN_BLOCKING_KINDS = frozenset({
    "empty-corpus", "too-many-items", "pin", "id", "duplicate-id", "trait-missing",
    "trait-value", "trait-unknown", "difficulty", "category", "empty", "too-long",
    "trait-in-script", "control",
})
#: Authoring rules that only ``vocencebench corpus check`` and :func:`freeze` enforce.
AUTHORING_KINDS = frozenset({"brief", "tier", "duplicate-script", "opening-share"})


@dataclass(frozen=True)
class Violation:
    """One broken rule: the item, the field at fault, what is wrong with it, and its kind
    (one of :data:`RUN_BLOCKING_KINDS` or :data:`AUTHORING_KINDS`)."""

    item_id: str
    field: str
    problem: str
    kind: str = "other"

    @property
    def blocks_run(self) -> bool:
        """Whether this violation stops a run (not only ``corpus check``)."""
        return self.kind in RUN_BLOCKING_KINDS

    def __str__(self) -> str:
        return f"{self.item_id}\t{self.field}\t{self.problem}"


_WORD_RE = re.compile(r"\S*[A-Za-z0-9]\S*")


def word_count(text: str) -> int:
    """Whitespace-separated words that contain a letter or digit."""
    return len(_WORD_RE.findall(text))


_EDGE_PUNCT = re.compile(r"^[^\w']+|[^\w']+$")


def opening(instruction: str, n: int = 4) -> str:
    """The first ``n`` whitespace-separated words of an instruction, lower-cased, with
    surrounding punctuation stripped (a hyphenated compound like "sixty-year-old" is one
    word)."""
    words = [_EDGE_PUNCT.sub("", w) for w in instruction.lower().split()]
    return " ".join([w for w in words if w][:n])


def opening_limit(n_items: int, max_share: float) -> int:
    """How many of ``n_items`` may share one four-word opening under ``max_share`` (a
    fraction in (0, 1]): ⌊share × n⌋, at least 1. Any other share raises ConfigError."""
    if not (is_finite_number(max_share) and 0 < max_share <= 1):
        raise ConfigError(f"max_opening_share must be a number in (0, 1], got {max_share!r}")
    return max(1, math.floor(max_share * n_items))


def _is_blank(value: str) -> bool:
    """Whether ``value`` has nothing left once whitespace and invisible format characters
    (Unicode category Cf: zero-width space, BOM, word joiner, soft hyphen, ...) are removed."""
    return all(c.isspace() or unicodedata.category(c) == "Cf" for c in value)


_URLISH = re.compile(r"(?:\w[\w.-]*@\w[\w-]*\.\w+|(?:https?://|www\.)\S+|\b[\w-]+\.(?:com|org|"
                     r"net|io|ai|dev|co|uk|edu|gov|au|ca|in|app|info)\b|\b[A-Z]{1,5}[-_]?\d{2,}|"
                     r"\bv?\d+\.\d+(?:\.\d+)+\b|\b[A-Z0-9]{2,}-[A-Z0-9]{2,}\b)")
_CLAUSE = re.compile(r"\b(?:that|who|whom|whose|which|where|when|while|because|although|"
                     r"though|if|since|after|before|unless|until|once|whenever|wherever)\b",
                     re.IGNORECASE)
_ID_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]*")
_UNSAFE_CHAR = re.compile(UNSAFE)


def _tier_problems(it: Item) -> list[Violation]:
    out: list[Violation] = []
    words = word_count(it.text)

    def add(problem: str) -> None:
        out.append(Violation(it.id, "text", problem, "tier"))

    if it.difficulty == 0 and words > EASY_MAX_WORDS:
        add(f"easy script has {words} words; at most {EASY_MAX_WORDS}")
    if it.difficulty == 1 and not NORMAL_WORDS[0] <= words <= NORMAL_WORDS[1]:
        add(f"normal script has {words} words; needs {NORMAL_WORDS[0]}–{NORMAL_WORDS[1]}")
    if it.difficulty == 2:
        if it.category == "numbers" and len(re.findall(r"\d+", it.text)) < 2:
            add("numbers script needs at least two numbers written in digits")
        if it.category == "urls" and not _URLISH.search(it.text):
            add("urls script has no URL, e-mail address, code or version string")
        if it.category == "nested_clauses" and len(_CLAUSE.findall(it.text)) < 2:
            add("nested_clauses script needs two or more subordinate clauses "
                "(that/who/which/when/...)")
        if it.category == "tongue_twister" and words < 6:
            add(f"tongue-twister has only {words} words")
    return out


def _shown_id(item_id: str) -> str:
    """An id fit for one line of output (a hostile id may be megabytes long)."""
    if not item_id:
        return "?"
    shown = item_id if len(item_id) <= 40 else item_id[:37] + "..."
    return shown.encode("unicode_escape").decode("ascii") if not shown.isprintable() else shown


def check_item(it: Item, *, registry: TraitRegistry = TRAITS,
               authoring: bool = True) -> list[Violation]:
    """Every violation of one item (invariants 1–3 and the tier rules), corpus-wide rules
    (unique ids and scripts, opening variety) excluded.

    With ``authoring=False`` only the rules that block a run are checked
    (:data:`RUN_BLOCKING_KINDS`). Time is bounded: a text or instruction over its length
    limit is reported once and not analysed further.
    """
    # Imported here: the brief reader compiles its whole lexicon on import, and reading or
    # hashing a corpus never needs it.
    from ..instruction import find_contradictions, parse_instruction, trait_mentions

    out: list[Violation] = []
    iid = _shown_id(it.id)
    if len(it.id) > MAX_ID_CHARS:
        out.append(Violation(iid, "id", f"id has {len(it.id)} characters; at most "
                                        f"{MAX_ID_CHARS}", "id"))
    elif not _ID_RE.fullmatch(it.id or ""):
        out.append(Violation(iid, "id", "id must be non-empty letters, digits, ._-", "id"))
    # Invariant 1: every trait present with a registry value.
    for t in registry:
        if t.name not in it.traits:
            out.append(Violation(iid, f"traits.{t.name}", "missing", "trait-missing"))
        elif it.traits[t.name] not in t.values:
            value = str(it.traits[t.name])
            value = value if len(value) <= 40 else value[:37] + "..."
            out.append(Violation(iid, f"traits.{t.name}",
                                 f"{value!r} is not a value; valid: {', '.join(t.values)}",
                                 "trait-value"))
    for name in it.traits:
        if name not in registry:
            out.append(Violation(iid, f"traits.{_shown_id(name)}", "not a registered trait",
                                 "trait-unknown"))
    if it.difficulty not in (0, 1, 2):
        out.append(Violation(iid, "difficulty", f"{it.difficulty!r} is not 0, 1 or 2",
                             "difficulty"))
    elif it.difficulty < 2 and it.category != "everyday":
        out.append(Violation(iid, "category", f"difficulty {it.difficulty} needs category "
                                              f"'everyday', not {_shown_id(it.category)!r}",
                             "category"))
    elif it.difficulty == 2 and it.category not in HARD_CATEGORIES:
        out.append(Violation(iid, "category", f"hard items need one of "
                                              f"{', '.join(HARD_CATEGORIES)}, not "
                                              f"{_shown_id(it.category)!r}", "category"))
    instruction_ok = text_ok = True
    for name, value, limit in (("instruction", it.instruction, MAX_INSTRUCTION_CHARS),
                               ("text", it.text, MAX_TEXT_CHARS)):
        if len(value) > limit:
            out.append(Violation(iid, name, f"{len(value)} characters; at most {limit}",
                                 "too-long"))
        elif _is_blank(value):
            out.append(Violation(iid, name, "empty (nothing visible)" if value.strip()
                                 else "empty", "empty"))
        elif (bad := _UNSAFE_CHAR.search(value)) is not None:
            # An escape sequence, NUL or a right-to-left override would reach every system,
            # judge prompt and terminal as it is (an LLM-written corpus can hold them).
            out.append(Violation(iid, name, f"holds control or bidirectional character "
                                            f"U+{ord(bad.group()):04X} at position "
                                            f"{bad.start()}", "control"))
        else:
            continue
        if name == "text":
            text_ok = False
        else:
            instruction_ok = False
    # Invariant 2: the instruction states every field and contradicts none.
    if authoring and instruction_ok:
        parsed = parse_instruction(it.instruction, registry=registry)
        for t in registry:
            want = it.traits.get(t.name)
            if want is None or want not in t.values:
                continue
            got = parsed.get(t.name)
            if got is None:
                out.append(Violation(iid, "instruction", f"does not state {t.name}={want}",
                                     "brief"))
            elif got != want:
                out.append(Violation(iid, "instruction", f"reads as {t.name}={got}, field "
                                                         f"says {want}", "brief"))
        for c in find_contradictions(it.instruction, it.traits, registry=registry):
            if parsed.get(c.trait) == c.expected:  # otherwise already reported above
                out.append(Violation(iid, "instruction", f"{c.phrase!r} states {c.trait}="
                                                         f"{c.found}, field says {c.expected}",
                                     "brief"))
    if not text_ok:
        return out
    # Invariant 3: the script names no trait.
    for trait, words in trait_mentions(it.text, registry=registry):
        out.append(Violation(iid, "text", f"names {trait} with {words!r}", "trait-in-script"))
    if authoring and it.difficulty in (0, 1, 2):
        out += _tier_problems(it)
    return out


def script_key(text: str) -> str:
    """What two scripts compare by to count as the same: lower-cased letters and digits, one
    space between runs (punctuation and case ignored)."""
    return " ".join(re.findall(r"[a-z0-9]+", text.lower()))


def _check_chunk(items: Sequence[Item], registry: TraitRegistry,
                 authoring: bool) -> list[list[Violation]]:
    """:func:`check_item` of each of ``items`` (one worker's share of a large corpus)."""
    return [check_item(it, registry=registry, authoring=authoring) for it in items]


def _per_item(items: Sequence[Item], registry: TraitRegistry, authoring: bool,
              workers: int) -> list[list[Violation]]:
    """:func:`check_item` of every item, in item order: in ``workers`` processes when the
    corpus is large enough to repay starting them, else here. Items are independent, so the
    result is the same list either way."""
    if workers <= 1 or len(items) < PARALLEL_CHECK_ITEMS:
        return _check_chunk(items, registry, authoring)
    from concurrent.futures import ProcessPoolExecutor

    from .._util.mp import references_main, worker_context

    ctx = worker_context(import_main=references_main(registry))
    size = -(-len(items) // (workers * 4))  # a few chunks per worker evens out their cost
    chunks = [items[k:k + size] for k in range(0, len(items), size)]
    with ProcessPoolExecutor(max_workers=workers, mp_context=ctx) as pool:
        parts = pool.map(_check_chunk, chunks, [registry] * len(chunks),
                         [authoring] * len(chunks))
        return [vs for part in parts for vs in part]


def check_corpus(items: Sequence[Item], *, registry: TraitRegistry = TRAITS,
                 max_opening_share: float | None = None,
                 authoring: bool = True, workers: int = 1) -> list[Violation]:
    """Every violation in ``items``: :func:`check_item` for each, plus unique ids and unique
    scripts (compared case- and punctuation-insensitively). With ``max_opening_share`` (a
    fraction, e.g. :data:`MAX_OPENING_SHARE`) items whose four-word instruction opening is
    used more often than that are reported too. An empty corpus is a violation. An empty
    list means the corpus is valid. With ``authoring=False`` only the rules that block a run
    are checked (what :func:`validate_corpus` uses). ``workers`` > 1 checks the items of a
    corpus of at least :data:`PARALLEL_CHECK_ITEMS` in that many processes (the same list,
    in the same order)."""
    if authoring and max_opening_share is not None:
        opening_limit(0, max_opening_share)  # a share outside (0, 1] raises ConfigError
    if not items:
        return [Violation("-", "corpus", "no items", "empty-corpus")]
    if len(items) > MAX_ITEMS:
        return [Violation("-", "corpus", f"{len(items)} items; at most {MAX_ITEMS}",
                          "too-many-items")]
    out: list[Violation] = []
    seen_ids: set[str] = set()
    seen_text: dict[str, str] = {}
    for it, found in zip(items, _per_item(items, registry, authoring, workers), strict=True):
        out += found
        if it.id in seen_ids:
            out.append(Violation(_shown_id(it.id), "id", "duplicate id", "duplicate-id"))
        seen_ids.add(it.id)
        if not authoring or len(it.text) > MAX_TEXT_CHARS:
            continue
        key = script_key(it.text)
        if key and key in seen_text:
            out.append(Violation(_shown_id(it.id), "text", f"same script as {seen_text[key]}",
                                 "duplicate-script"))
        else:
            seen_text.setdefault(key, _shown_id(it.id))
    if authoring and max_opening_share is not None:
        limit = opening_limit(len(items), max_opening_share)
        openings = [opening(it.instruction[:MAX_INSTRUCTION_CHARS]) for it in items]
        counts = Counter(openings)
        for it, o in zip(items, openings, strict=True):
            if counts[o] > limit:
                out.append(Violation(_shown_id(it.id), "instruction",
                                     f"opening {o!r} used by {counts[o]} items; at most {limit}",
                                     "opening-share"))
    return out


def summarize_violations(problems: Sequence[Violation], *, ids: int = 3) -> list[str]:
    """One line per kind of violation: kind, how many, in how many items, the first ``ids``
    item ids and one example, in order of first appearance; run-blocking kinds are marked."""
    by_kind: dict[str, list[Violation]] = {}
    for v in problems:
        by_kind.setdefault(v.kind, []).append(v)
    lines = []
    for kind, vs in by_kind.items():
        item_ids = list(dict.fromkeys(v.item_id for v in vs))
        shown = ", ".join(item_ids[:ids]) + (", ..." if len(item_ids) > ids else "")
        example = f"{vs[0].field} {vs[0].problem}"
        example = example if len(example) <= 100 else example[:97] + "..."
        mark = " [blocks a run]" if kind in RUN_BLOCKING_KINDS else ""
        lines.append(f"{kind}{mark}: {len(vs)} in {len(item_ids)} item(s) ({shown}); "
                     f"e.g. {example}")
    return lines


def validate_corpus(items: Iterable[Item], *, registry: TraitRegistry = TRAITS,
                    source: str = "corpus") -> None:
    """The run gate: raise CorpusError unless ``items`` can be run.

    Refuses what makes a run meaningless or undecidable (:data:`RUN_BLOCKING_KINDS`): no
    items, too many, bad or duplicate ids, a trait missing, unknown or with an unknown value,
    a bad difficulty or category, an empty or over-long text or instruction, trait words in
    the script. The message has one line per kind of problem (count, first item ids, an
    example). Authoring rules (:data:`AUTHORING_KINDS`) are left to ``corpus check``.
    Bounded time: over-long fields are not analysed.
    """
    its = list(items)
    for k, it in enumerate(its):
        if not isinstance(it, Item):
            raise CorpusError(f"{source}: entry {k} is a {type(it).__name__}, not an Item; "
                              "read corpus files with vocencebench.load_corpus")
    if not its:
        raise CorpusError(f"{source} has no items; an empty corpus cannot be run")
    problems = check_corpus(its, registry=registry, authoring=False)
    if not problems:
        return
    n_items = len({v.item_id for v in problems})
    lines = summarize_violations(problems)
    raise CorpusError(
        f"{source} cannot be run: {len(problems)} problem(s) in {n_items} of {len(its)} "
        f"item(s); fix them (`vocencebench corpus check FILE` lists each one):\n  "
        + "\n  ".join(lines)
    )


def freeze(items: Sequence[Item], path: str | Path, *,
           registry: TraitRegistry = TRAITS, max_opening_share: float | None = None) -> str:
    """Validate ``items`` with :func:`check_corpus`, then :func:`write_corpus` them.

    Refuses (CorpusError listing the first violations) to freeze an invalid corpus. With
    ``max_opening_share`` the opening-variety rule of ``vocencebench corpus check`` applies
    too (see :func:`check_corpus`). Returns the SHA-256 pin (hex).
    """
    problems = check_corpus(items, registry=registry, max_opening_share=max_opening_share)
    if problems:
        head = "; ".join(str(v) for v in problems[:5])
        raise CorpusError(f"refusing to freeze: {len(problems)} violation(s), e.g. {head}. "
                          "Run `vocencebench corpus check` on the items and fix them.")
    return write_corpus(items, path)


def load_corpus(name_or_path: str | os.PathLike[str] = "benchmark_v1", *,
                registry: TraitRegistry = TRAITS) -> list[Item]:
    """The corpus gate for every entry point: read, verify the pin, validate.

    A shipped name (``benchmark_v1``) must match its pin; a file path is verified against
    ``FILE.sha256`` when that lies beside it (:func:`read_corpus`). The items must then pass
    :func:`validate_corpus`. Raises CorpusError (one summary line per kind of problem).
    """
    if is_path(name_or_path):
        items = read_corpus(name_or_path)
        source = str(name_or_path)
    else:
        items = load_benchmark(name_or_path)
        source = f"corpus {name_or_path}"
    validate_corpus(items, registry=registry, source=source)
    return items
