"""Read trait values out of a natural-language voice brief, deterministically.

``parse_instruction("A 70-year-old Canadian man, quiet and low-pitched, ...")`` returns
``{"gender": "male", "age": "78", "accent": "Canadian", ...}`` for every trait it finds. The
corpus validator uses it to prove that each instruction states its fields (invariant 2), the
built-in eSpeak system uses it to turn a brief into synthesis parameters, and users may call
it on their own briefs. :func:`trait_mentions` is the other direction: it lists trait words
that leak into a *script* (invariant 3).

How it reads a brief
--------------------
The text is lower-cased, and hyphens inside words become spaces ("low-pitched" reads as
"low pitched"). Every lexicon entry is a regular expression with a priority; all matches
are collected, then claimed greedily by (priority, longer first, earlier first), and a match
that overlaps an already claimed span is dropped. So "low volume" (a phrase) claims "low"
before any pitch rule can, "neutral accent" is claimed by a blocker that yields nothing, and
"deep voice" is pitch while "deep sorrow" is not. Then, per trait:

* gender: the first person noun (woman, grandfather, lad, ...) wins; without one, the
  majority of he/him/his versus she/her/hers (a tie leaves gender unknown);
* age: an explicit age ("78-year-old", "seventy-eight", "aged 13", "a man of 45",
  "in her late seventies", "mid-forties", "in his 60s") is mapped to the nearest registry age
  (ties go to the younger); without one, a bare number word or vague word ("teenager",
  "middle-aged", "elderly") is the fallback;
* every other trait: the first value claimed in the text.

It has no notion of negation ("not loud" reads as loud). Traits outside the built-in lexicon
(a trait registered by a user) are read from the trait's own values and
:attr:`~vocencebench.traits.Trait.synonyms`.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from ._instruction.lexicon import (
    BUILTIN,
    BUILTIN_TRAITS,
    PHRASE,
    PRONOUN_RE,
    Entry,
    entries_for,
    joined_runs,
    normalise,
    run_positions,
    triggers_of,
    word_rx,
    words_re,
)
from ._instruction.words import (
    DECADE_OFFSET,
    DECADE_WORD,
    DECADES,
    GENDER_NOUNS,
    GENDER_SCRIPT,
    NUM,
    PERSON,
    TENS,
    TENS_RE,
    UNITS,
)
from .traits import TRAITS, Trait, TraitRegistry

__all__ = [
    "Contradiction",
    "Mention",
    "find_contradictions",
    "nearest_age",
    "parse_age",
    "parse_instruction",
    "trait_mentions",
    "words_to_number",
]

# --------------------------------------------------------------------------- numbers


def words_to_number(words: str) -> int | None:
    """The integer a number phrase names ("seventy eight", "78", "thirteen"), else None."""
    w = re.sub(r"[\s\-]+", " ", words.strip().lower())
    if w.isdigit():
        return int(w)
    if w == "a hundred":
        return 100
    if w in UNITS:
        return UNITS[w]
    parts = w.split(" ")
    if parts[0] in TENS and len(parts) <= 2:
        if len(parts) == 1:
            return TENS[parts[0]]
        if parts[1] in UNITS and UNITS[parts[1]] < 10:
            return TENS[parts[0]] + UNITS[parts[1]]
    return None


def nearest_age(years: float, values: Iterable[str]) -> str:
    """The registry age (decimal string) nearest to ``years``; a tie goes to the younger."""
    vals = sorted(values, key=float)
    return min(vals, key=lambda v: (abs(float(v) - years), float(v)))


# --------------------------------------------------------------------------- ages

#: "13 years of age": read in a brief and flagged in a script (the age is group 1).
_YEARS_OF_AGE = word_rx(rf"({NUM})\s+years?\s+of\s+age")
#: "forty something": read in a brief and flagged in a script (the tens word is group 1).
_AGE_SOMETHING = word_rx(rf"({TENS_RE})\s*something")
_AGE_EXPLICIT = [
    # 78-year-old, seventy eight years old, 8 yo, 45 yrs old
    word_rx(rf"({NUM})\s*(?:years?|yrs?|yr)\s+old"),
    word_rx(rf"({NUM})\s*(?:yo|y\s*o)"),
    # aged 13, age 13, of age 13, at age thirteen
    word_rx(rf"(?:aged|age|ages)\s*:?\s+({NUM})"),
    # 13 years of age
    _YEARS_OF_AGE,
    # a man of 45, a woman of sixty (person noun before "of")
    word_rx(rf"(?:{PERSON[3:-1]}|someone|somebody|one)\s*,?\s+of\s+(?:about\s+|around\s+|"
            rf"roughly\s+)?({NUM})"),
    # "a British girl, thirteen, ..."
    re.compile(rf"(?<![\w'])(?:{PERSON[3:-1]})\s*,\s*({NUM})(?=\s*(?:[,.;:)]|$))"),
    # "who is 45", "she's 60", "he is seventy"
    word_rx(rf"(?:is|she's|he's|i'm|turned|turning|just)\s+(?:about\s+|around\s+)?"
            rf"({NUM})(?!\s*(?:%|percent|minutes|seconds|words|times))"),
]
_AGE_DECADE = word_rx(rf"(?:(early|mid|middle|late)\s+)?({DECADE_WORD}|\d0s|\d0's)")
_AGE_VAGUE: tuple[tuple[re.Pattern[str], float], ...] = (
    (word_rx(r"(?:teenager|teenaged|teenage|teen|adolescent)s?"), 15.0),
    (word_rx(r"(?:child|kid|little\s+(?:boy|girl)|young\s+child|schoolchild|youngster|"
             r"(?:boy|girl)\s+of\s+primary\s+school\s+age)"), 8.0),
    (word_rx(r"(?:young\s+(?:man|woman|adult|lady|guy|fellow)|twenty\s*something)"), 22.0),
    (word_rx(r"middle\s+aged"), 45.0),
    (word_rx(r"(?:elderly|senior\s+citizen|pensioner|old\s+(?:man|woman|lady|gentleman)|"
             r"octogenarian|septuagenarian|retiree|aged\s+(?:man|woman))"), 77.0),
)
_BARE_NUMBER = re.compile(rf"(?<![\w'$£€#@])(?<!\d[.,:/])({NUM})(?![\w%]|[.,:/]\d)")


def _decade_years(prefix: str | None, decade: str) -> float:
    base = int(decade[:2].rstrip("s'")) if decade[0].isdigit() else DECADES[decade]
    if base == 10:  # teens: 13–19
        return {"early": 14.0, "mid": 16.0, "middle": 16.0, "late": 18.0}.get(prefix or "", 16.0)
    return float(base + DECADE_OFFSET[prefix or ""])


@dataclass(frozen=True)
class _AgeHit:
    years: float
    start: int
    end: int
    phrase: str
    explicit: bool


@functools.lru_cache(maxsize=64)
def _age_hits(low: str) -> tuple[_AgeHit, ...]:
    """The explicit ages in a normalised text, in text order (cached: parse_age and
    find_contradictions read the same brief)."""
    hits: list[_AgeHit] = []
    taken: list[tuple[int, int]] = []

    def free(a: int, b: int) -> bool:
        return all(b <= s or a >= t for s, t in taken)

    for rx in _AGE_EXPLICIT:
        for m in rx.finditer(low):
            n = words_to_number(m.group(1))
            if n is None or not (1 <= n <= 120) or not free(m.start(), m.end()):
                continue
            hits.append(_AgeHit(float(n), m.start(), m.end(), m.group(0), True))
            taken.append((m.start(), m.end()))
    for m in _AGE_DECADE.finditer(low):
        if not free(m.start(), m.end()):
            continue
        hits.append(_AgeHit(_decade_years(m.group(1), m.group(2)), m.start(), m.end(),
                            m.group(0), True))
        taken.append((m.start(), m.end()))
    for m in _AGE_SOMETHING.finditer(low):
        if free(m.start(), m.end()):
            hits.append(_AgeHit(TENS[m.group(1)] + 5.0, m.start(), m.end(), m.group(0), True))
            taken.append((m.start(), m.end()))
    hits.sort(key=lambda h: h.start)
    return tuple(hits)


def parse_age(text: str, *, values: Iterable[str] = TRAITS.get("age").values) -> str | None:
    """The registry age ``text`` states (see module docs), or None when it states none."""
    low, _ = normalise(text)
    vals = tuple(values)
    hits = _age_hits(low)
    if hits:
        return nearest_age(hits[0].years, vals)
    for rx, years in _AGE_VAGUE:
        if rx.search(low):
            return nearest_age(years, vals)
    for m in _BARE_NUMBER.finditer(low):
        n = words_to_number(m.group(1))
        if n is not None and 5 <= n <= 110:
            return nearest_age(float(n), vals)
    return None


# --------------------------------------------------------------------------- matching


@dataclass(frozen=True)
class Mention:
    """A trait word found in a text: ``trait`` and ``value`` it states, the ``phrase`` as
    written, and its character span ``[start, end)``."""

    trait: str
    value: str
    phrase: str
    start: int
    end: int
    kind: str = ""


def _generic_entries(trait: Trait) -> list[Entry]:
    table: dict[str, list[str]] = {}
    for v in trait.values:
        words = [v, *trait.synonyms.get(v, ())]
        table[v] = [w for w in words if w.strip()]
    return entries_for(trait.name, table)


def _entries(registry: TraitRegistry) -> list[Entry]:
    """Built-in entries for built-in traits (restricted to the registry's values, extended by
    its synonyms), generic entries for any other trait."""
    out = [x for x in BUILTIN if x.trait == ""]
    for t in registry:
        if t.name == "age" and t.scoring == "numeric":
            continue
        if t.name in BUILTIN_TRAITS:
            own = [x for x in BUILTIN if x.trait == t.name and x.value in t.values]
            out += own
            known = {x.value for x in own}
            extra = {v: t.synonyms.get(v, ()) for v in t.values}
            for v in t.values:
                if v not in known:
                    extra[v] = (v, *extra[v])
            out += entries_for(t.name, {v: ws for v, ws in extra.items() if ws})
        else:
            out += _generic_entries(t)
    return out


_Signature = tuple[tuple[str, str, tuple[str, ...], tuple[tuple[str, tuple[str, ...]], ...]], ...]
_ENTRY_CACHE: dict[_Signature, list[Entry]] = {}


# The last lexicon handed out per registry object, with the trait objects it was built
# from: traits are frozen, so the same objects in the same order give the same lexicon
# without recomputing the signature (the corpus checks ask for it several times an item).
_BY_REGISTRY: dict[int, tuple[TraitRegistry, tuple[Trait, ...], list[Entry]]] = {}


def _cached_entries(registry: TraitRegistry) -> list[Entry]:
    """The compiled lexicon for ``registry``, cached by its traits' names, values, synonyms."""
    traits = tuple(registry)
    last = _BY_REGISTRY.get(id(registry))
    if last is not None and last[0] is registry and len(last[1]) == len(traits) \
            and all(a is b for a, b in zip(last[1], traits, strict=True)):
        return last[2]
    entries = _entries_by_signature(registry)
    _BY_REGISTRY[id(registry)] = (registry, traits, entries)
    return entries


def _entries_by_signature(registry: TraitRegistry) -> list[Entry]:
    sig: _Signature = tuple(
        (t.name, t.scoring, t.values,
         tuple(sorted((k, tuple(v)) for k, v in t.synonyms.items())))
        for t in registry
    )
    entries = _ENTRY_CACHE.get(sig)
    if entries is None:
        entries = _ENTRY_CACHE[sig] = _entries(registry)
    return entries


@dataclass(frozen=True)
class _Index:
    """Which rules of one lexicon to consider for a text: those whose trigger word is one
    of the text's runs, those whose literal start begins one, and those always scanned —
    each list in lexicon order (ties between equal claims are broken by that order)."""

    by_word: dict[str, tuple[int, ...]]
    by_start: tuple[tuple[str, tuple[int, ...]], ...]  # (" " + literal start, rules)
    always: tuple[int, ...]
    #: Per rule with phrases: index word -> the runs of each alternative indexed under it.
    phrases: dict[int, dict[str, tuple[frozenset[str], ...]]]
    #: Per rule: the numbers of its gates in ``gate_defs`` (rules share gates, and a text
    #: tests each gate once).
    gates: dict[int, tuple[int, ...]]
    #: Each distinct gate: whether its strings must start a run (they are then written
    #: " word", tested against the joined runs) or only occur in the text (the case-kept
    #: text, for a case-sensitive rule's gate).
    gate_defs: tuple[tuple[bool, tuple[str, ...], bool], ...]


_INDEX: dict[int, tuple[list[Entry], _Index]] = {}


def _index(entries: list[Entry]) -> _Index:
    hit = _INDEX.get(id(entries))
    if hit is not None and hit[0] is entries:
        return hit[1]
    by_word: dict[str, list[int]] = {}
    by_start: dict[str, list[int]] = {}
    always: list[int] = []
    for k, ent in enumerate(entries):
        if ent.phrases is not None:
            # A phrase needs all its words: index it under its longest (the least common,
            # as a rule), so "at the top of their lungs" is looked at only beside "lungs".
            for w in {max(sorted(ph), key=len) for ph in ent.phrases}:
                by_word.setdefault(w, []).append(k)
        elif ent.triggers is not None:
            for w in ent.triggers:
                by_word.setdefault(w, []).append(k)
        elif ent.prefixes is not None:
            for p in ent.prefixes:
                by_start.setdefault(p, []).append(k)
        else:
            always.append(k)
    phrases: dict[int, dict[str, tuple[frozenset[str], ...]]] = {}
    gates: dict[int, tuple[int, ...]] = {}
    defs: dict[tuple[bool, tuple[str, ...], bool], int] = {}
    for k, ent in enumerate(entries):
        if ent.phrases is not None:
            groups: dict[str, list[frozenset[str]]] = {}
            for ph in ent.phrases:
                groups.setdefault(max(sorted(ph), key=len), []).append(ph)
            phrases[k] = {w: tuple(v) for w, v in groups.items()}
        if ent.gates:
            gates[k] = tuple(defs.setdefault((word, tuple(" " + w for w in words) if word
                                              else words, ent.case_sensitive), len(defs))
                             for word, words in ent.gates)
    idx = _Index({w: tuple(v) for w, v in by_word.items()},
                 tuple((" " + p, tuple(v)) for p, v in by_start.items()), tuple(always),
                 phrases, gates, tuple(defs))
    _INDEX[id(entries)] = (entries, idx)
    return idx


def _matches_at(pattern: re.Pattern[str], text: str, starts: list[int]) -> list[re.Match[str]]:
    """What ``pattern.finditer(text)`` yields, non-empty matches only, for a pattern that can
    match only at positions in ``starts`` (sorted): the first match at or after each place
    the previous match ended, tried at those positions only."""
    out = []
    end = -1
    for pos in starts:
        if pos < end:
            continue
        m = pattern.match(text, pos)
        if m is not None and m.end() > m.start():
            out.append(m)
            end = m.end()
    return out


def _claim(text: str, entries: list[Entry], *, script_only: bool = False) -> list[
        tuple[Entry, Mention]]:
    low, keep = normalise(text)
    where = run_positions(low)  # run -> where it starts
    runs = frozenset(where)
    joined = joined_runs(runs)  # " " + p in joined: p starts one of the text's runs
    # Only the rules that can match are tried (Entry.triggers, .phrases, .prefixes, .gates),
    # and only where they can match: the same claims as scanning every rule over the whole
    # text (tests/unit/text/test_instruction_fast.py), found faster.
    idx = _index(entries)
    todo = set(idx.always)
    for r in runs:
        todo.update(idx.by_word.get(r, ()))
    for spaced, rules in idx.by_start:
        if spaced in joined:
            todo.update(rules)
    passed: dict[int, bool] = {}  # gate number -> whether this text passes it
    starting: dict[str, list[int]] = {}  # literal start -> where runs so starting begin
    first: dict[str, list[tuple[str, list[int]]]] | None = None  # first letter -> runs
    cands: list[tuple[int, int, int, Entry, re.Match[str]]] = []
    for k in sorted(todo):
        ent = entries[k]
        if script_only and not ent.script and ent.value is not None:
            continue
        groups = idx.phrases.get(k)
        if groups is not None and not _has_phrase(runs, groups):
            continue
        gates = idx.gates.get(k)
        if gates is not None and not _passes_all(gates, idx.gate_defs, passed, joined, low,
                                                 keep):
            continue
        # A rule with triggers or literal starts can match only where a run it names begins
        # (its lookbehind makes every match start a run): it is tried there alone, which
        # finds what a scan of the whole text finds. Any other rule scans the text.
        if ent.triggers is not None:
            found: Iterable[re.Match[str]] = _matches_at(
                ent.pattern, low, sorted(p for w in ent.triggers & runs for p in where[w]))
        elif ent.prefixes is not None:
            if first is None:
                first = {}
                for r, ps in where.items():
                    first.setdefault(r[0], []).append((r, ps))
            at: set[int] = set()
            for pre in ent.prefixes:
                got = starting.get(pre)
                if got is None:
                    got = starting[pre] = [p for r, ps in first.get(pre[0], ())
                                           if r.startswith(pre) for p in ps]
                at.update(got)
            found = _matches_at(ent.pattern, low, sorted(at))
        else:
            assert ent.scan is not None
            found = ent.scan.finditer(keep if ent.case_sensitive else low)
        for m in found:
            if m.end() > m.start():
                cands.append((ent.priority, -(m.end() - m.start()), m.start(), ent, m))
    cands.sort(key=lambda c: (c[0], c[1], c[2]))
    taken: list[tuple[int, int]] = []
    out: list[tuple[Entry, Mention]] = []
    for _, _, _, ent, m in cands:
        a, b = m.start(), m.end()
        if any(not (b <= s or a >= t) for s, t in taken):
            continue
        taken.append((a, b))
        if ent.value is not None:
            out.append((ent, Mention(ent.trait, ent.value, text[a:b], a, b, ent.kind)))
    out.sort(key=lambda x: x[1].start)
    return out


def _has_phrase(runs: frozenset[str], groups: dict[str, tuple[frozenset[str], ...]]) -> bool:
    """Whether all the words of one of a rule's alternatives are runs of the text."""
    for w in runs & groups.keys():
        for ph in groups[w]:
            if runs >= ph:
                return True
    return False


def _passes_all(gates: tuple[int, ...], defs: tuple[tuple[bool, tuple[str, ...], bool], ...],
                passed: dict[int, bool], joined: str, low: str, keep: str) -> bool:
    """Whether the text passes every gate in ``gates`` (each tested once per text, the
    result kept in ``passed``)."""
    for g in gates:
        hit = passed.get(g)
        if hit is None:
            word, words, cased = defs[g]
            src = joined if word else keep if cased else low
            hit = False
            for w in words:
                if w in src:
                    hit = True
                    break
            passed[g] = hit
        if not hit:
            return False
    return True


# The claims of the last few texts: parse_instruction and find_contradictions read the same
# brief (the corpus checks call both), so the second reading is a lookup. Keyed by the text
# and the compiled lexicon (kept alive beside it, so its id cannot be reused).
_CLAIMS: dict[tuple[str, int], tuple[list[Entry], list[tuple[Entry, Mention]]]] = {}
_CLAIMS_MAX = 64


def _claims(text: str, entries: list[Entry]) -> list[tuple[Entry, Mention]]:
    key = (text, id(entries))
    hit = _CLAIMS.get(key)
    if hit is not None and hit[0] is entries:
        return hit[1]
    got = _claim(text, entries)
    if len(_CLAIMS) >= _CLAIMS_MAX:
        _CLAIMS.pop(next(iter(_CLAIMS)))
    _CLAIMS[key] = (entries, got)
    return got


def _all_mentions(text: str, registry: TraitRegistry) -> dict[str, list[Mention]]:
    found: dict[str, list[Mention]] = {t.name: [] for t in registry}
    for _ent, men in _claims(text, _cached_entries(registry)):
        if men.trait in found:
            found[men.trait].append(men)
    return found


_POSSESSED = re.compile(r"(?:\b(?:her|his|their|my|your|our|whose)|\w's)\s+(?:[a-z]+\s+){0,2}$")


def _gender(text: str, nouns: list[Mention], values: tuple[str, ...]) -> str | None:
    # A possessed noun ("her little brother", "his wife") is someone else, not the speaker.
    low, _ = normalise(text)
    own = [m for m in nouns if not _POSSESSED.search(low[max(0, m.start - 40):m.start])]
    if own or nouns:
        return (own or nouns)[0].value
    low, _ = normalise(text)
    counts = {g: len(rx.findall(low)) for g, rx in PRONOUN_RE.items() if g in values}
    if not counts:
        return None
    best = max(counts.values())
    winners = [g for g, c in counts.items() if c == best]
    return winners[0] if best > 0 and len(winners) == 1 else None


def parse_instruction(text: str, *, registry: TraitRegistry = TRAITS) -> dict[str, str]:
    """Every trait value that ``text`` states, as ``{trait: value}`` with registry values.

    Deterministic and offline. Traits the text does not state are absent from the result
    (never guessed). Ages come back as the nearest registry age (decimal string, years).
    """
    found = _all_mentions(text, registry)
    out: dict[str, str] = {}
    for t in registry:
        if t.name == "age" and t.scoring == "numeric":
            age = parse_age(text, values=t.values)
            if age is not None:
                out["age"] = age
            continue
        hits = found.get(t.name, [])
        if t.name == "gender" and "male" in t.values and "female" in t.values:
            g = _gender(text, hits, t.values)
            if g is not None:
                out["gender"] = g
            continue
        strong = [h for h in hits if h.kind != "weak"]
        if strong or hits:
            out[t.name] = (strong or hits)[0].value
    return out


@dataclass(frozen=True)
class Contradiction:
    """A value the instruction states for ``trait`` that differs from the ``expected`` field:
    ``found`` is the value, ``phrase`` the words that state it."""

    trait: str
    expected: str
    found: str
    phrase: str


def find_contradictions(
    text: str, traits: Mapping[str, str], *, registry: TraitRegistry = TRAITS
) -> list[Contradiction]:
    """Every value stated in ``text`` that disagrees with ``traits`` (trait → expected value).

    Gender compares the speaker's gender (first person noun, else pronoun majority); age
    compares every explicit age phrase (mapped to the nearest registry age); every other trait
    compares each claimed mention. Traits absent from ``traits`` are not checked.
    """
    out: list[Contradiction] = []
    found = _all_mentions(text, registry)
    for t in registry:
        want = traits.get(t.name)
        if want is None:
            continue
        if t.name == "age" and t.scoring == "numeric":
            low, _ = normalise(text)
            for h in _age_hits(low):
                got = nearest_age(h.years, t.values)
                if got != want:
                    out.append(Contradiction("age", want, got, text[h.start:h.end]))
            continue
        if t.name == "gender" and "male" in t.values and "female" in t.values:
            g = _gender(text, found.get("gender", []), t.values)
            if g is not None and g != want:
                hits = found.get("gender", [])
                phrase = hits[0].phrase if hits else "pronouns"
                out.append(Contradiction("gender", want, g, phrase))
            continue
        for men in found.get(t.name, []):
            if men.value != want and men.kind != "weak":
                out.append(Contradiction(t.name, want, men.value, men.phrase))
    return out


# --------------------------------------------------------------------------- scripts

_SCRIPT_EXTRA: dict[str, tuple[str, ...]] = {
    # Words that name a trait (or describe a voice) without stating a value.
    "pitch": ("pitch", "pitched", "high pitched", "low pitched", "deep voiced"),
    "loudness": ("volume", "loudness"),
    "accent": ("accent", "accents", "accented", "english", "england", "scotland", "wales",
               "nationality"),
}
_SCRIPT_AGE = [
    word_rx(rf"({NUM})\s*(?:years?|yrs?)\s+old"),
    word_rx(rf"(?:aged)\s+({NUM})"),
    _YEARS_OF_AGE,
    word_rx(rf"(?:in\s+(?:my|his|her|their|our|your)\s+)(?:(?:early|mid|late)\s+)?"
            rf"(?:{DECADE_WORD}|\d0s)"),
    word_rx(rf"(?:early|mid|late)\s+(?:{DECADE_WORD})"),
    _AGE_SOMETHING,
    word_rx(r"(?:year\s+old|years\s+old|middle\s+aged|teenager|teenagers)"),
]


_SCRIPT_CACHE: dict[int, tuple[list[Entry], list[Entry]]] = {}


def _script_entries(registry: TraitRegistry) -> list[Entry]:
    """The script lexicon for ``registry`` (cached per compiled parser lexicon)."""
    base = _cached_entries(registry)
    hit = _SCRIPT_CACHE.get(id(base))
    if hit is not None and hit[0] is base:
        return hit[1]
    ents = _build_script_entries(registry)
    _SCRIPT_CACHE[id(base)] = (base, ents)
    return ents


def _build_script_entries(registry: TraitRegistry) -> list[Entry]:
    ents = [x for x in _cached_entries(registry)
            if x.value is not None and x.script and not (x.trait == "gender" and x.kind)]
    gender = registry.get("gender") if "gender" in registry else None
    if gender is not None:
        table = {
            v: tuple(w for w in GENDER_NOUNS.get(v, ()) if w in GENDER_SCRIPT)
            for v in gender.values
        }
        ents += entries_for("gender", {v: ws for v, ws in table.items() if ws})
        ents += [x for x in _cached_entries(registry) if x.trait == "gender" and not x.kind]
    for trait, words in _SCRIPT_EXTRA.items():
        if trait in registry:
            ents.append(Entry(trait, "*", word_rx(f"(?:{words_re(words)})"), PHRASE,
                              triggers=triggers_of(words)))
    return ents


def trait_mentions(script: str, *, registry: TraitRegistry = TRAITS) -> list[tuple[str, str]]:
    """Trait words in a *script* as ``[(trait, words as written), ...]``, in text order.

    Flags every value word, synonym and inflection of every trait (emotion words, tone
    words, nationality and accent words, "loud", "slow", "high-pitched", person nouns like
    "woman" or "boy"), the words pitch/volume/accent, and explicit ages ("8 years old",
    "a 13-year-old", "aged 45", "in my forties"). Bare numbers (prices, dates, counts) are not
    ages. An empty list means the script names no trait.
    """
    low, _ = normalise(script)
    out: list[tuple[int, str, str]] = []
    for _ent, men in _claim(script, _script_entries(registry), script_only=True):
        out.append((men.start, men.trait, men.phrase))
    if "age" in registry:
        spans: list[tuple[int, int]] = []
        for rx in _SCRIPT_AGE:
            for m in rx.finditer(low):
                if any(not (m.end() <= s or m.start() >= t) for s, t in spans):
                    continue
                spans.append((m.start(), m.end()))
                out.append((m.start(), "age", script[m.start():m.end()]))
    out.sort()
    return [(t, w) for _, t, w in out]
