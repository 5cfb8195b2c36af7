"""Corpus tools: the balanced trait sampler, hashing, loading, the gate, held-out splits.

The shipped corpus (``datasets/benchmark_v1.jsonl``) is the artifact; these functions make
assignments, pin and verify it. Every entry point that runs a corpus goes through one gate:
:func:`load_corpus` (read, verify the pin, validate) or, for items already in memory,
:func:`validate_corpus`. ``vocencebench corpus check`` adds the authoring rules on top.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import re
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np

from .constants import BOOTSTRAP_SEED
from .errors import ConfigError, CorpusError
from .schema import Item, dumps_canonical
from .traits import TRAITS, TraitRegistry

#: Seed of benchmark v1's balanced assignment: the project's one seed (the bootstrap's).
CORPUS_SEED = BOOTSTRAP_SEED

__all__ = [
    "AUTHORING_KINDS",
    "CATEGORIES",
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
    "pin_path",
    "read_corpus",
    "split_holdout",
    "summarize_violations",
    "validate_corpus",
    "word_count",
    "write_corpus",
]

#: Share of easy / normal / hard items.
DIFFICULTY_MIX = (0.35, 0.40, 0.25)
#: Categories of the hard tier (difficulty 2); easy and normal items are ``everyday``.
HARD_CATEGORIES = ("tongue_twister", "numbers", "urls", "nested_clauses")
CATEGORIES = ("everyday", *HARD_CATEGORIES)


class _RawStream:
    """Uniform integers from PCG64's raw 64-bit stream: ``(raw · n) >> 64``, exact.

    Built on the raw stream (stable across NumPy releases), not on ``Generator`` methods.
    """

    def __init__(self, seed: int) -> None:
        self._bitgen = np.random.PCG64(seed)

    def below(self, n: int) -> int:
        raw = int(self._bitgen.random_raw())
        return (raw * n) >> 64

    def shuffle(self, xs: list[str]) -> None:
        for i in range(len(xs) - 1, 0, -1):
            j = self.below(i + 1)
            xs[i], xs[j] = xs[j], xs[i]


def difficulty_counts(n: int) -> tuple[int, int, int]:
    """Items per difficulty (easy, normal, hard) for ``n`` items: 496 → (174, 198, 124)."""
    easy = round(n * DIFFICULTY_MIX[0])
    normal = round(n * DIFFICULTY_MIX[1])
    return easy, normal, n - easy - normal


def _deck(values: Sequence[str], n: int, stream: _RawStream) -> list[str]:
    """``n`` cards, each value ⌊n/k⌋ or ⌈n/k⌉ times, shuffled."""
    k = len(values)
    base, extra = divmod(n, k)
    order = list(values)
    stream.shuffle(order)  # which values get the extra card is seeded too
    cards = [v for i, v in enumerate(order) for _ in range(base + (1 if i < extra else 0))]
    stream.shuffle(cards)
    return cards


def cramers_v(x: Sequence[str], y: Sequence[str]) -> float:
    """Cramér's V (0 = independent, 1 = determined) between two categorical columns."""
    if len(x) != len(y) or not x:
        raise ConfigError("cramers_v needs two non-empty columns of equal length")
    xs, ys = sorted(set(x)), sorted(set(y))
    if len(xs) < 2 or len(ys) < 2:
        return 0.0
    xi = {v: i for i, v in enumerate(xs)}
    yi = {v: i for i, v in enumerate(ys)}
    table = np.zeros((len(xs), len(ys)))
    for a, b in zip(x, y, strict=True):
        table[xi[a], yi[b]] += 1
    n = table.sum()
    expected = np.outer(table.sum(1), table.sum(0)) / n
    chi2 = float(((table - expected) ** 2 / expected).sum())
    return math.sqrt(chi2 / (n * (min(len(xs), len(ys)) - 1)))


@dataclass(frozen=True)
class Assignment:
    """Trait values, difficulty and category for one item slot (no text yet)."""

    id: str
    traits: dict[str, str]
    difficulty: int
    category: str


def balanced_assignment(
    n: int = 496,
    seed: int = CORPUS_SEED,
    *,
    registry: TraitRegistry = TRAITS,
    max_sweeps: int = 60,
) -> list[Assignment]:
    """A seeded balanced-deck assignment of every trait value, difficulty and category.

    Each column (every trait, and the difficulty/category column) is a deck in which every
    value appears ⌊n/k⌋ or ⌈n/k⌉ times. Decks are shuffled from PCG64's raw stream, then
    pairs of cards within one column are swapped while that lowers Σ chi²/(n·(min k − 1))
    (= Σ Cramér's V²) over all column pairs, so that no two columns are associated. Marginal
    counts never change. Deterministic for a given (n, seed, registry).
    """
    if n < 15:
        raise ConfigError(
            f"balanced_assignment needs n ≥ 15 (every hard category needs an item), got {n}"
        )
    stream = _RawStream(seed)
    easy, normal, hard = difficulty_counts(n)
    cat_values = ["easy", "normal", *HARD_CATEGORIES]
    hard_each, hard_extra = divmod(hard, len(HARD_CATEGORIES))
    cat_cards = ["easy"] * easy + ["normal"] * normal
    for i, hard_cat in enumerate(HARD_CATEGORIES):
        cat_cards += [hard_cat] * (hard_each + (1 if i < hard_extra else 0))
    stream.shuffle(cat_cards)

    names = [*registry.names(), "_slot"]
    levels = [list(registry.get(t).values) for t in registry.names()] + [cat_values]
    columns: list[list[int]] = []
    for name, vals in zip(names, levels, strict=True):
        cards = cat_cards if name == "_slot" else _deck(vals, n, stream)
        index = {v: i for i, v in enumerate(vals)}
        columns.append([index[c] for c in cards])

    ncol = len(columns)
    tables: dict[tuple[int, int], np.ndarray] = {}
    inv_e: dict[tuple[int, int], np.ndarray] = {}
    scale: dict[tuple[int, int], float] = {}
    for p in range(ncol):
        for q in range(p + 1, ncol):
            t = np.zeros((len(levels[p]), len(levels[q])))
            for a, b in zip(columns[p], columns[q], strict=True):
                t[a, b] += 1
            tables[p, q] = t
            inv_e[p, q] = n / np.outer(t.sum(1), t.sum(0))
            scale[p, q] = 1.0 / (n * (min(len(levels[p]), len(levels[q])) - 1))

    def cell_delta(p: int, q: int, changes: list[tuple[int, int, int]]) -> float:
        # Change in Σ (O − E)²/E · scale when cells (a, b) of table (p, q) move by ±1.
        key = (p, q) if p < q else (q, p)
        t, ie = tables[key], inv_e[key]
        exp = 1.0 / ie
        acc: dict[tuple[int, int], int] = {}
        for a, b, s in changes:
            cell = (a, b) if p < q else (b, a)
            acc[cell] = acc.get(cell, 0) + s
        total = 0.0
        for (a, b), s in acc.items():
            if s:
                o = t[a, b]
                e = exp[a, b]
                total += ((o + s - e) ** 2 - (o - e) ** 2) * ie[a, b]
        return total * scale[key]

    def apply(p: int, q: int, changes: list[tuple[int, int, int]]) -> None:
        key = (p, q) if p < q else (q, p)
        for a, b, s in changes:
            if p < q:
                tables[key][a, b] += s
            else:
                tables[key][b, a] += s

    for _ in range(max_sweeps):
        improved = 0
        for c in range(ncol):
            col = columns[c]
            for i in range(n):
                j = stream.below(n)
                if col[i] == col[j]:
                    continue
                x, y = col[i], col[j]
                delta = 0.0
                plans = []
                for u in range(ncol):
                    if u == c:
                        continue
                    ui, uj = columns[u][i], columns[u][j]
                    if ui == uj:
                        continue
                    ch = [(x, ui, -1), (y, ui, 1), (y, uj, -1), (x, uj, 1)]
                    plans.append((u, ch))
                    delta += cell_delta(c, u, ch)
                if delta < -1e-12:
                    for u, ch in plans:
                        apply(c, u, ch)
                    col[i], col[j] = y, x
                    improved += 1
        if improved == 0:
            break

    out: list[Assignment] = []
    for k in range(n):
        slot = cat_values[columns[-1][k]]
        difficulty = 0 if slot == "easy" else 1 if slot == "normal" else 2
        category = "everyday" if difficulty < 2 else slot
        traits = {name: levels[ci][columns[ci][k]] for ci, name in enumerate(names[:-1])}
        out.append(Assignment(f"vb-{k + 1:05d}", traits, difficulty, category))
    return out


# --------------------------------------------------------------------------- file format

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
#: Longest item id (characters): ids name files (``DirectoryAdapter``) and cache keys.
MAX_ID_CHARS = 100
#: Most items one corpus may hold.
MAX_ITEMS = 100_000
#: Largest corpus file that is read (bytes), checked before reading.
MAX_CORPUS_BYTES = 256 * 1024 * 1024

_FIELDS = ("id", "instruction", "text", "traits", "difficulty", "category")


def corpus_lines(items: Iterable[Item]) -> list[str]:
    """The canonical JSON line of every item (sorted keys, no spaces, UTF-8), no newline."""
    return [dumps_canonical(it.to_corpus_dict()) for it in items]


def corpus_hash(items: Iterable[Item]) -> str:
    """SHA-256 (hex) of the canonical corpus file: one ``\\n``-terminated line per item."""
    h = hashlib.sha256()
    for line in corpus_lines(items):
        h.update(line.encode("utf-8"))
        h.update(b"\n")
    return h.hexdigest()


def _item_from(obj: Any, where: str) -> Item:
    if not isinstance(obj, dict):
        raise CorpusError(f"{where}: expected a JSON object per line, got {type(obj).__name__}")
    missing = [f for f in _FIELDS if f not in obj]
    if missing:
        raise CorpusError(f"{where}: item lacks field(s) {', '.join(missing)}; every line needs "
                          f"{', '.join(_FIELDS)}")
    extra = sorted(set(obj) - set(_FIELDS))
    if extra:
        raise CorpusError(f"{where}: unknown field(s) {', '.join(extra)}; remove them")
    if not isinstance(obj["traits"], dict) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in obj["traits"].items()
    ):
        raise CorpusError(f"{where}: 'traits' must map trait names to string values")
    for name in ("id", "instruction", "text", "category"):
        if not isinstance(obj[name], str):
            raise CorpusError(f"{where}: {name!r} must be a string")
    if not isinstance(obj["difficulty"], int) or isinstance(obj["difficulty"], bool):
        raise CorpusError(f"{where}: 'difficulty' must be the integer 0, 1 or 2")
    return Item(id=obj["id"], instruction=obj["instruction"], text=obj["text"],
                traits=dict(obj["traits"]), difficulty=obj["difficulty"],
                category=obj["category"])


def _parse_lines(text: str, source: str) -> list[Item]:
    items: list[Item] = []
    for n, line in enumerate(text.split("\n"), start=1):
        if not line.strip():
            continue
        if len(items) >= MAX_ITEMS:
            raise CorpusError(f"{source}: more than {MAX_ITEMS} items; split the corpus into "
                              "smaller files")
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as exc:
            raise CorpusError(f"{source}:{n}: not valid JSON ({exc.msg} at column "
                              f"{exc.colno}); fix or remove the line") from None
        items.append(_item_from(obj, f"{source}:{n}"))
    return items


def _read_bytes(p: Path, what: str = "corpus file") -> bytes:
    """The file's bytes, refusing (before reading) a file over :data:`MAX_CORPUS_BYTES`."""
    try:
        with p.open("rb") as f:
            size = os.fstat(f.fileno()).st_size
            if size > MAX_CORPUS_BYTES:
                raise CorpusError(f"{what} {p} has {size} bytes, over the "
                                  f"{MAX_CORPUS_BYTES // 2**20} MiB limit; split it")
            data = f.read(MAX_CORPUS_BYTES + 1)
    except FileNotFoundError:
        raise CorpusError(f"{what} {p} does not exist") from None
    except OSError as exc:
        raise CorpusError(f"cannot read {what} {p}: {exc.strerror or exc}") from None
    if len(data) > MAX_CORPUS_BYTES:
        raise CorpusError(f"{what} {p} is over the {MAX_CORPUS_BYTES // 2**20} MiB limit; "
                          "split it")
    return data


def _decode(raw: bytes, source: str) -> str:
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise CorpusError(f"{source} is not UTF-8 text (bad byte at offset {exc.start}); save "
                          "it as UTF-8") from None


def pin_path(path: str | os.PathLike[str]) -> Path:
    """Where the pin of a corpus file lies: ``FILE.sha256`` for ``FILE.jsonl``, else
    ``FILE<suffix>.sha256``."""
    p = Path(path)
    return p.with_suffix(".sha256") if p.suffix == ".jsonl" else p.with_name(p.name + ".sha256")


_pin_path = pin_path  # older private name


def _read_pin(text: str, source: str) -> str:
    token = text.strip().split()[0] if text.strip() else ""
    if not re.fullmatch(r"[0-9a-fA-F]{64}", token):
        raise CorpusError(f"{source}: not a SHA-256 pin (expected '<64 hex>  <file>')")
    return token.lower()


def _pin_problem(items: Sequence[Item], raw: bytes, pin_text: str, source: str, pin: str,
                 fix: str) -> str | None:
    """None when the pin matches ``corpus_hash(items)`` or the file's raw sha256 (a pin made
    by ``sha256sum``); else the one-line problem."""
    want = _read_pin(pin_text, pin)
    got = corpus_hash(items)
    if want in (got, hashlib.sha256(raw).hexdigest()):
        return None
    return (f"{source} does not match its pin {pin}: corpus_hash is {got}, pinned {want}. "
            f"The file changed after it was pinned; {fix}")


def _repin_hint(p: Path) -> str:
    return (f"restore it, or if the change is intended re-pin it with "
            f"`vocencebench corpus hash {p} > {pin_path(p)}`")


def check_pin(path: str | os.PathLike[str], items: Sequence[Item] | None = None) -> str | None:
    """The pin problem of a corpus file, or None when it has no pin beside it or matches it.

    ``items`` (the file's items, if already read) saves a second parse. Used by
    ``vocencebench corpus check`` to list a mismatch among the violations.
    """
    p = Path(path)
    pin = pin_path(p)
    if not pin.is_file():
        return None
    raw = _read_bytes(p)
    its = items if items is not None else _parse_lines(_decode(raw, str(p)), str(p))
    return _pin_problem(its, raw, pin.read_text(encoding="utf-8", errors="replace"), str(p),
                        str(pin), _repin_hint(p))


def read_corpus(path: str | os.PathLike[str], *, verify: bool = True) -> list[Item]:
    """Items of a corpus JSONL file, in file order; a bad line raises CorpusError(file:line).

    When a pin (``FILE.sha256``, see :func:`pin_path`) lies beside the file, the items must
    match it (with ``verify``, the default): a mismatch raises CorpusError naming both hashes
    and how to restore or re-pin the file. A file without a pin is read unverified. Reading
    checks the file format only; :func:`validate_corpus` checks that the items can be run.
    """
    p = Path(path)
    raw = _read_bytes(p)
    items = _parse_lines(_decode(raw, str(p)), str(p))
    if verify:
        pin = pin_path(p)
        if pin.is_file():
            problem = _pin_problem(items, raw, pin.read_text(encoding="utf-8", errors="replace"),
                                   str(p), str(pin), _repin_hint(p))
            if problem:
                raise CorpusError(problem)
    return items


def write_corpus(items: Sequence[Item], path: str | Path) -> str:
    """Write ``items`` as canonical JSONL plus ``<path>.sha256``; return the hash (hex).

    The ``.sha256`` file has the ``sha256sum`` format (``<hex>  <file name>\\n``), so
    ``sha256sum -c`` run beside the file verifies it.
    """
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    body = "".join(line + "\n" for line in corpus_lines(items))
    digest = hashlib.sha256(body.encode("utf-8")).hexdigest()
    p.write_bytes(body.encode("utf-8"))
    pin_path(p).write_text(f"{digest}  {p.name}\n", encoding="utf-8")
    return digest


def freeze(items: Sequence[Item], path: str | Path, *,
           registry: TraitRegistry = TRAITS) -> str:
    """Validate ``items`` with :func:`check_corpus`, then :func:`write_corpus` them.

    Refuses (CorpusError listing the first violations) to freeze an invalid corpus.
    Returns the SHA-256 pin (hex).
    """
    problems = check_corpus(items, registry=registry)
    if problems:
        head = "; ".join(str(v) for v in problems[:5])
        raise CorpusError(f"refusing to freeze: {len(problems)} violation(s), e.g. {head}. "
                          "Run `vocencebench corpus check` on the items and fix them.")
    return write_corpus(items, path)


def _is_path(name_or_path: str | os.PathLike[str]) -> bool:
    s = str(name_or_path)
    return (not isinstance(name_or_path, str) or bool(Path(s).suffix) or "/" in s
            or "\\" in s)


def load_benchmark(name_or_path: str | os.PathLike[str] = "benchmark_v1", *,
                   verify: bool = True) -> list[Item]:
    """Load a shipped corpus by name (``datasets/<name>.jsonl``) or a JSONL file by path.

    With ``verify`` (the default) the corpus hash is recomputed and compared with the pin
    (``<name>.sha256`` beside it); a mismatch raises CorpusError naming both hashes. A file
    given by path without a ``.sha256`` beside it is loaded unverified only if
    ``verify=False``. The items are not validated; :func:`load_corpus` does both.
    """
    s = str(name_or_path)
    if _is_path(name_or_path):
        p = Path(s)
        raw = _read_bytes(p)
        source = str(p)
        pin_file = pin_path(p)
        pin_name = str(pin_file)
        pin_text = pin_file.read_text(encoding="utf-8") if pin_file.is_file() else None
        fix = _repin_hint(p)
    else:
        root = resources.files("vocencebench") / "datasets"
        data = root / f"{s}.jsonl"
        if not data.is_file():
            names = sorted(f.name[:-6] for f in root.iterdir() if f.name.endswith(".jsonl"))
            raise CorpusError(f"no shipped corpus named {s!r}; shipped: {', '.join(names) or '-'}"
                              "; or pass a path to a .jsonl file")
        source = f"vocencebench/datasets/{s}.jsonl"
        raw = data.read_bytes()
        pin = root / f"{s}.sha256"
        pin_name = f"{s}.sha256"
        pin_text = pin.read_text(encoding="utf-8") if pin.is_file() else None
        fix = ("restore it (e.g. reinstall vocencebench) rather than editing a frozen "
               "corpus.")
    items = _parse_lines(_decode(raw, source), source)
    if verify:
        if pin_text is None:
            raise CorpusError(f"{source} has no .sha256 pin beside it; freeze it with "
                              "corpus.freeze() or load with verify=False")
        problem = _pin_problem(items, raw, pin_text, source, pin_name, fix)
        if problem:
            raise CorpusError(problem)
    return items


def load_corpus(name_or_path: str | os.PathLike[str] = "benchmark_v1", *,
                registry: TraitRegistry = TRAITS) -> list[Item]:
    """The corpus gate for every entry point: read, verify the pin, validate.

    A shipped name (``benchmark_v1``) must match its pin; a file path is verified against
    ``FILE.sha256`` when that lies beside it (:func:`read_corpus`). The items must then pass
    :func:`validate_corpus`. Raises CorpusError (one summary line per kind of problem).
    """
    if _is_path(name_or_path):
        items = read_corpus(name_or_path)
        source = str(name_or_path)
    else:
        items = load_benchmark(name_or_path)
        source = f"corpus {name_or_path}"
    validate_corpus(items, registry=registry, source=source)
    return items


# --------------------------------------------------------------------------- validation

#: Violation kinds that make a corpus unusable for a run: :func:`validate_corpus` (and so
#: ``vocencebench run``, :func:`vocencebench.benchmark` and :func:`load_corpus`) refuses them.
RUN_BLOCKING_KINDS = frozenset({
    "empty-corpus", "too-many-items", "pin", "id", "duplicate-id", "trait-missing",
    "trait-value", "trait-unknown", "difficulty", "category", "empty", "too-long",
    "trait-in-script",
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


def opening(instruction: str, n: int = 4) -> str:
    """The first ``n`` whitespace-separated words of an instruction, lower-cased, with
    surrounding punctuation stripped (a hyphenated compound like "sixty-year-old" is one
    word)."""
    words = [re.sub(r"^[^\w']+|[^\w']+$", "", w) for w in instruction.lower().split()]
    return " ".join([w for w in words if w][:n])


_URLISH = re.compile(r"(?:\w[\w.-]*@\w[\w-]*\.\w+|(?:https?://|www\.)\S+|\b[\w-]+\.(?:com|org|"
                     r"net|io|ai|dev|co|uk|edu|gov|au|ca|in|app|info)\b|\b[A-Z]{1,5}[-_]?\d{2,}|"
                     r"\bv?\d+\.\d+(?:\.\d+)+\b|\b[A-Z0-9]{2,}-[A-Z0-9]{2,}\b)")
_NUMBERISH = re.compile(r"\d")
_CLAUSE = re.compile(r"\b(?:that|who|whom|whose|which|where|when|while|because|although|"
                     r"though|if|since|after|before|unless|until|once|whenever|wherever)\b",
                     re.IGNORECASE)
_ID_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]*")


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
    from .instruction import find_contradictions, parse_instruction, trait_mentions

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
        elif not value.strip():
            out.append(Violation(iid, name, "empty", "empty"))
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


def _script_key(text: str) -> str:
    return " ".join(re.findall(r"[a-z0-9]+", text.lower()))


def check_corpus(items: Sequence[Item], *, registry: TraitRegistry = TRAITS,
                 max_opening_share: float | None = None,
                 authoring: bool = True) -> list[Violation]:
    """Every violation in ``items``: :func:`check_item` for each, plus unique ids and unique
    scripts (compared case- and punctuation-insensitively). With ``max_opening_share`` (a
    fraction, e.g. :data:`MAX_OPENING_SHARE`) items whose four-word instruction opening is
    used more often than that are reported too. An empty corpus is a violation. An empty
    list means the corpus is valid. With ``authoring=False`` only the rules that block a run
    are checked (what :func:`validate_corpus` uses)."""
    if not items:
        return [Violation("-", "corpus", "no items", "empty-corpus")]
    if len(items) > MAX_ITEMS:
        return [Violation("-", "corpus", f"{len(items)} items; at most {MAX_ITEMS}",
                          "too-many-items")]
    out: list[Violation] = []
    seen_ids: set[str] = set()
    seen_text: dict[str, str] = {}
    for it in items:
        out += check_item(it, registry=registry, authoring=authoring)
        if it.id in seen_ids:
            out.append(Violation(_shown_id(it.id), "id", "duplicate id", "duplicate-id"))
        seen_ids.add(it.id)
        if not authoring or len(it.text) > MAX_TEXT_CHARS:
            continue
        key = _script_key(it.text)
        if key and key in seen_text:
            out.append(Violation(_shown_id(it.id), "text", f"same script as {seen_text[key]}",
                                 "duplicate-script"))
        else:
            seen_text.setdefault(key, _shown_id(it.id))
    if authoring and max_opening_share is not None:
        limit = max(1, math.floor(max_opening_share * len(items)))
        counts = Counter(opening(it.instruction[:MAX_INSTRUCTION_CHARS]) for it in items)
        for it in items:
            o = opening(it.instruction[:MAX_INSTRUCTION_CHARS])
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


# --------------------------------------------------------------------------- statistics


@dataclass(frozen=True)
class CorpusStats:
    """Coverage and balance of a corpus.

    ``coverage[trait][value]`` counts items; ``difficulty`` and ``category`` count items per
    tier and category; ``max_cramers_v`` is the largest Cramér's V (0–1) over all trait pairs
    and ``max_pair`` that pair; ``top_opening`` is the most common four-word instruction
    opening and ``top_opening_share`` its share of items (0–1).
    """

    n: int
    coverage: dict[str, dict[str, int]]
    difficulty: dict[int, int]
    category: dict[str, int]
    max_cramers_v: float
    max_pair: tuple[str, str]
    top_opening: str
    top_opening_count: int
    hash: str = ""
    expected: dict[str, float] = field(default_factory=dict)

    @property
    def top_opening_share(self) -> float:
        """Share (0–1) of items that use the most common four-word opening."""
        return self.top_opening_count / self.n if self.n else 0.0

    def table(self) -> str:
        """The coverage table as Markdown: one row per trait value, with its uniform share."""
        rows = ["| trait | value | items | uniform share |", "| --- | --- | ---: | ---: |"]
        for trait, counts in self.coverage.items():
            for value, c in counts.items():
                rows.append(f"| {trait} | {value} | {c} | {self.expected[trait]:.1f} |")
        return "\n".join(rows)

    def summary(self) -> str:
        """A human-readable report: counts, coverage table, association and variety."""
        d = ", ".join(f"{k}: {v}" for k, v in sorted(self.difficulty.items()))
        c = ", ".join(f"{k}: {v}" for k, v in self.category.items())
        return "\n".join([
            f"items: {self.n}" + (f"  sha256: {self.hash}" if self.hash else ""),
            f"difficulty: {d}",
            f"category: {c}",
            f"max Cramér's V: {self.max_cramers_v:.4f} ({self.max_pair[0]} × "
            f"{self.max_pair[1]})",
            f"most common 4-word opening: {self.top_opening!r} × {self.top_opening_count} "
            f"({100 * self.top_opening_share:.1f} %)",
            "",
            self.table(),
        ])


def corpus_stats(items: Sequence[Item], *, registry: TraitRegistry = TRAITS) -> CorpusStats:
    """Coverage per trait value, tier/category counts, max Cramér's V, opening variety."""
    if not items:
        raise CorpusError("corpus_stats needs at least one item")
    n = len(items)
    coverage: dict[str, dict[str, int]] = {}
    expected: dict[str, float] = {}
    for t in registry:
        cnt = Counter(it.traits.get(t.name, "?") for it in items)
        coverage[t.name] = {v: cnt.get(v, 0) for v in t.values}
        expected[t.name] = n / len(t.values)
    best, pair = 0.0, ("", "")
    names = registry.names()
    for i, a in enumerate(names):
        for b in names[i + 1:]:
            v = cramers_v([it.traits.get(a, "?") for it in items],
                          [it.traits.get(b, "?") for it in items])
            if v > best:
                best, pair = v, (a, b)
    diff = Counter(it.difficulty for it in items)
    cat = Counter(it.category for it in items)
    opens = Counter(opening(it.instruction) for it in items)
    top, top_n = opens.most_common(1)[0]
    return CorpusStats(
        n=n, coverage=coverage, difficulty=dict(sorted(diff.items())),
        category={k: cat[k] for k in CATEGORIES if k in cat}, max_cramers_v=best,
        max_pair=pair, top_opening=top, top_opening_count=top_n, hash=corpus_hash(items),
        expected=expected,
    )


# --------------------------------------------------------------------------- held-out split


@dataclass(frozen=True)
class Split:
    """A public / held-out partition; both keep the corpus's item order."""

    public: tuple[Item, ...]
    heldout: tuple[Item, ...]
    salt_digest: str


def split_holdout(items: Sequence[Item], fraction: float = 0.2, *, salt: str) -> Split:
    """Hold out the ``round(fraction · n)`` items with the smallest sha256(salt + id).

    Deterministic, independent of item order, and unknowable without the salt: keep the salt
    private and system builders cannot tell which items are held out. ``salt_digest`` is
    sha256(salt), safe to publish as proof of which salt was used.
    """
    if not salt:
        raise ConfigError("split_holdout needs a non-empty salt (keep it private)")
    if not 0.0 < fraction < 1.0:
        raise ConfigError(f"fraction must be strictly between 0 and 1, got {fraction}")
    ids = [it.id for it in items]
    if len(set(ids)) != len(ids):
        raise CorpusError("split_holdout needs unique item ids; run `vocencebench corpus check`")
    k = round(fraction * len(items))
    ranked = sorted(ids, key=lambda i: hashlib.sha256((salt + i).encode("utf-8")).hexdigest())
    held = set(ranked[:k])
    return Split(
        public=tuple(it for it in items if it.id not in held),
        heldout=tuple(it for it in items if it.id in held),
        salt_digest=hashlib.sha256(salt.encode("utf-8")).hexdigest(),
    )


# --------------------------------------------------------------------------- template corpus

_T_EMOTION = {"neutral": "emotionally neutral", "disgust": "disgusted"}
_T_PACE = {"slow": "slowly", "moderate": "at a moderate pace", "fast": "quickly"}
_T_LOUD = {"quiet": "quietly", "normal": "at a normal volume", "loud": "loudly"}
_T_PITCH = {"low": "in a low-pitched voice", "medium": "at a medium pitch",
            "high": "in a high-pitched voice"}

_EASY = (
    ("Please pass", "Can you find", "Let's paint", "I found", "Where is", "Bring me",
     "Look at", "We need", "Hand over", "Put away"),
    ("red", "blue", "green", "yellow", "purple", "orange", "pink", "brown", "silver", "golden",
     "white", "black"),
    ("cup", "kite", "chair", "book", "hat", "spoon", "bike", "lamp", "box", "coat", "ball",
     "shoe", "plate", "pen", "door", "rug", "bag", "key", "sock", "bowl"),
)
_NORMAL = (
    ("My cousin", "Our neighbour", "The plumber", "Somebody", "The delivery driver",
     "My friend", "Our coach", "The teacher"),
    ("by the back door", "on the kitchen table", "near the garden gate", "under the stairs",
     "in the hallway", "beside the shed"),
    ("bring it inside", "move it", "check on it", "hang it up", "tidy it away",
     "take a photo of it"),
    ("dinner", "the rain starts", "lunch", "the guests arrive", "we leave",
     "the shops close"),
)
_TWISTERS = (
    (("Peter", "Penny", "Paula", "Percy"), ("picked", "packed", "pinched", "poked"),
     ("plump", "purple", "prickly", "pink"), ("peppers", "pickles", "pears", "pebbles")),
    (("Sally", "Sam", "Susie", "Simon"), ("sold", "sorted", "stacked", "shook"),
     ("silky", "slippery", "silver", "shiny"), ("shells", "socks", "scarves", "sacks")),
    (("Betty", "Bob", "Bella", "Barry"), ("bought", "baked", "borrowed", "bundled"),
     ("big", "bumpy", "blue", "bitter"), ("buns", "buttons", "biscuits", "bottles")),
    (("Fred", "Freya", "Frank", "Frances"), ("fried", "froze", "fetched", "flipped"),
     ("fresh", "frilly", "frosty", "fine"), ("fish", "figs", "fritters", "flapjacks")),
)
_NESTED = (
    ("parcel", "letter", "ladder", "bicycle", "basket", "umbrella"),
    ("courier", "neighbour", "cousin", "plumber", "painter", "gardener"),
    ("lost the map last week", "moved in next door", "fixed our roof in May",
     "stayed with us over winter", "sings in the choir", "we met at the station"),
    ("by the gate", "in the porch", "on the landing", "behind the shed"),
    ("finally here", "still missing", "back in one piece", "mine after all"),
)
_MONTHS = ("January", "February", "March", "April", "May", "June", "July", "August",
           "September", "October", "November", "December")
_WORDS = ("north", "maple", "cedar", "harbour", "copper", "lantern", "orbit", "pixel", "meadow",
          "summit")


def _article(word: str) -> str:
    w = word.lower()
    if w[:1].isdigit():
        return "an" if w.startswith(("8", "11", "18")) else "a"
    return "an" if w[:1] in "aeiou" else "a"


def _template_instruction(traits: dict[str, str], frame: int, registry: TraitRegistry) -> str:
    age = traits.get("age", "30")
    try:
        young = float(age) < 18
    except ValueError:
        young = False
    g = traits.get("gender", "female")
    noun = ("boy" if young else "man") if g == "male" else ("girl" if young else "woman")
    pron = "he" if g == "male" else "she"
    emo = _T_EMOTION.get(traits.get("emotion", ""), traits.get("emotion", ""))
    acc = traits.get("accent", "")
    pace = _T_PACE.get(traits.get("pace", ""), traits.get("pace", ""))
    loud = _T_LOUD.get(traits.get("loudness", ""), traits.get("loudness", ""))
    pitch = _T_PITCH.get(traits.get("pitch", ""), traits.get("pitch", ""))
    tone = traits.get("tone", "")
    aged = f"{age}-year-old"
    if frame == 0:
        s = (f"Voice {_article(age)} {aged} {noun} with {_article(acc)} {acc} accent, sounding "
             f"{emo}. {pron.capitalize()} speaks {pace}, {loud}, {pitch}, with a {tone} tone.")
    elif frame == 1:
        s = (f"Cast {_article(acc)} {acc} {noun}, aged {age}, who is {emo}: {pron} talks {pace} "
             f"and {loud} {pitch}, keeping a {tone} tone.")
    else:
        s = (f"Record this as {_article(age)} {aged} {acc} {noun}, {emo}, speaking {pace}, "
             f"{loud} and {pitch}, in a {tone} manner.")
    builtin = {"gender", "age", "pace", "pitch", "loudness", "emotion", "accent", "tone"}
    extra = [f"{t.name.replace('_', ' ')} {traits[t.name]}" for t in registry
             if t.name not in builtin and t.name in traits]
    if extra:
        s += " Also: " + "; ".join(extra) + "."
    return s


def _template_text(category: str, difficulty: int, stream: _RawStream) -> str:
    def pick(xs: Sequence[str]) -> str:
        return xs[stream.below(len(xs))]

    if difficulty == 0:
        opener = pick(_EASY[0])
        end = "?" if opener.startswith(("Where", "Can")) else "."
        return f"{opener} the {pick(_EASY[1])} {pick(_EASY[2])}{end}"
    if difficulty == 1:
        return (f"{pick(_NORMAL[0])} left the {pick(_EASY[1])} {pick(_EASY[2])} "
                f"{pick(_NORMAL[1])}, so could you {pick(_NORMAL[2])} before "
                f"{pick(_NORMAL[3])}?")
    if category == "tongue_twister":
        names, verbs, adjs, nouns = _TWISTERS[stream.below(len(_TWISTERS))]
        return (f"{pick(names)} {pick(verbs)} {pick(adjs)} {pick(nouns)} past the "
                f"{pick(adjs)} {pick(nouns)} and {pick(verbs)} {pick(adjs)} {pick(nouns)}.")
    if category == "numbers":
        year = 1990 + stream.below(35)
        return (f"On {1 + stream.below(28)} {pick(_MONTHS)} {year} at {1 + stream.below(12)}:"
                f"{stream.below(60):02d} we paid ${1 + stream.below(9)},{stream.below(1000):03d}."
                f"{stream.below(100):02d}, which is {1 + stream.below(40)}.{stream.below(10)}% "
                f"more than in {year - 1}.")
    if category == "urls":
        a, b = chr(65 + stream.below(26)), chr(65 + stream.below(26))
        return (f"Log in at www.{pick(_WORDS)}{stream.below(100)}.io/help or write to "
                f"{pick(_WORDS)}@{pick(_WORDS)}.org, ticket {a}{b}-{1000 + stream.below(9000)}.")
    return (f"The {pick(_NESTED[0])} that the {pick(_NESTED[1])} who {pick(_NESTED[2])} left "
            f"{pick(_NESTED[3])} is {pick(_NESTED[4])}.")


def generate_template_corpus(n: int = 496, seed: int = CORPUS_SEED, *,
                             registry: TraitRegistry = TRAITS) -> list[Item]:
    """A deterministic corpus built from templates on :func:`balanced_assignment`.

    For offline tests and CI only: the phrasing is formulaic (three instruction frames) but
    every item passes :func:`check_corpus`. Same (n, seed, registry) → identical items.
    """
    stream = _RawStream(seed + 1)
    seen: set[str] = set()
    items: list[Item] = []
    for k, a in enumerate(balanced_assignment(n, seed, registry=registry)):
        for _ in range(200):
            text = _template_text(a.category, a.difficulty, stream)
            if _script_key(text) not in seen:
                break
        else:
            raise CorpusError(f"template pools exhausted at item {a.id}; use a smaller n")
        seen.add(_script_key(text))
        items.append(Item(id=a.id, instruction=_template_instruction(a.traits, k % 3, registry),
                          text=text, traits=dict(a.traits), difficulty=a.difficulty,
                          category=a.category))
    return items
