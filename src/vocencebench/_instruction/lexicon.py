"""The brief reader's lexicon: normalised text, and the rules (patterns with a trait value
and a priority) compiled from :mod:`vocencebench._instruction.words`."""

from __future__ import annotations

import dataclasses
import functools
import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass

from .words import (
    ACCENT,
    ACCENT_CASE,
    ACCENT_PLACES,
    EMOTION,
    GAP,
    GENDER_NOUNS,
    LOUD,
    PACE,
    PACE_NOUN,
    PARSER_ONLY,
    PERSON,
    PITCH,
    PRONOUNS,
    TONE,
    TONE_NOUNS,
    TONE_WEAK,
)

__all__ = [
    "BLOCK",
    "BUILTIN",
    "BUILTIN_TRAITS",
    "PHRASE",
    "PRONOUN_RE",
    "WINDOW",
    "WORD",
    "Entry",
    "entries_for",
    "fast_pattern",
    "joined_runs",
    "literal_gates",
    "literal_prefixes",
    "normalise",
    "phrases_of",
    "run_positions",
    "text_runs",
    "triggers_of",
    "word_rx",
    "words_re",
]


# What normalise maps, character by character (curly quotes, hyphens and dashes).
_MAP = str.maketrans({"\u2018": "'", "\u2019": "'", "\u02bc": "'", "\u201c": '"',
                      "\u201d": '"', **dict.fromkeys("-\u2010\u2011\u2012\u2013\u2014\u2212_",
                                                     " ")})


@functools.lru_cache(maxsize=256)
def normalise(text: str) -> tuple[str, str]:
    """(lower-cased, case-kept) forms of ``text``, equal length, hyphens and dashes as spaces.

    Cached (the reader normalises the same brief several times), and for ASCII text done with
    ``str.translate`` and ``str.lower``, which give exactly what the per-character loop below
    gives there (the loop is kept for the rest: ``str.lower`` on a whole string lowers a Greek
    capital sigma by its context, and a character whose lower case is two characters long
    stays as it is, so both forms keep the text's length)."""
    if text.isascii():
        kept = text.translate(_MAP)
        return kept.lower(), kept
    low: list[str] = []
    keep: list[str] = []
    for ch in text:
        c = ch
        if ch in "\u2018\u2019\u02bc":
            c = "'"
        elif ch in "\u201c\u201d":
            c = '"'
        elif ch in "-\u2010\u2011\u2012\u2013\u2014\u2212_":
            c = " "
        lc = c.lower()
        low.append(lc if len(lc) == 1 else c)
        keep.append(c)
    return "".join(low), "".join(keep)


@dataclass(frozen=True)
class Entry:
    """One lexicon rule: a pattern that, when claimed, states ``trait = value``.

    ``value`` None makes a blocker (claims its span, states nothing). ``priority``: lower
    claims first. ``script``: whether the words name a trait inside a script (invariant 3).
    ``kind``: for gender, ``noun`` or ``pronoun``; for age, ``explicit`` or ``vague``.
    """

    trait: str
    value: str | None
    pattern: re.Pattern[str]
    priority: int
    script: bool = True
    kind: str = ""
    case_sensitive: bool = False
    #: Words (lower case) one of which is a whole word-character run of every text this rule
    #: can match — the first word of each alternative — or None when that is not known. A
    #: text holding none of them is not scanned with the pattern at all (the result is the
    #: same: it could not match; it is only faster).
    triggers: frozenset[str] | None = None
    #: With ``triggers``, when some alternative has several word runs: every alternative's
    #: runs, all of which a text must hold for that alternative to match there.
    phrases: tuple[frozenset[str], ...] | None = None
    #: Set from the pattern when ``triggers`` is None (:func:`literal_prefixes`): strings one
    #: of which is the start of the word-character run where every match begins, so a text
    #: none of whose runs starts with one of them is not scanned.
    prefixes: tuple[str, ...] | None = None
    #: Set from the pattern (:func:`literal_gates`): for each part every match must contain,
    #: whether it starts a word and the strings one of which it starts with; a text lacking
    #: all of one part's strings (as the start of a word, for a part that starts one) is not
    #: scanned.
    gates: tuple[tuple[bool, tuple[str, ...]], ...] = ()
    #: ``pattern`` rewritten so that the regex engine can skip positions by their first
    #: character (:func:`fast_pattern`): the same matches, found faster. Set from
    #: ``pattern``.
    scan: re.Pattern[str] | None = None

    def __post_init__(self) -> None:
        if self.scan is None:
            object.__setattr__(self, "scan", fast_pattern(self.pattern))
        if self.case_sensitive:  # gates, if any, are given (tested on the case-kept text)
            return
        # A rule with triggers (a word alternation) needs nothing more: its gates would be
        # its triggers again.
        if self.triggers is None and self.prefixes is None:
            object.__setattr__(self, "prefixes", literal_prefixes(self.pattern.pattern))
        if self.triggers is None and not self.gates:
            object.__setattr__(self, "gates", literal_gates(self.pattern.pattern))


_RUN = re.compile(r"\w+")


def text_runs(low: str) -> frozenset[str]:
    """The maximal word-character runs of a normalised text (what :attr:`Entry.triggers`
    are compared with)."""
    return frozenset(_RUN.findall(low))


def run_positions(low: str) -> dict[str, list[int]]:
    """Each maximal word-character run of a normalised text -> where it starts (in text
    order): a rule with triggers or literal starts can match only there."""
    out: dict[str, list[int]] = {}
    for m in _RUN.finditer(low):
        out.setdefault(m.group(), []).append(m.start())
    return out


def joined_runs(runs: Iterable[str]) -> str:
    """The runs, each after a space: ``" " + p in joined_runs(runs)`` says whether ``p``
    (a word-character string) starts one of them (what :attr:`Entry.prefixes` and the
    word-start gates are tested with)."""
    return " " + " ".join(runs)


_WORD_START = "(?<![\\w'])"
_META = set(".^$*+?{}[]\\|()")


def _regex_tokens(pattern: str, start: int = 0) -> Iterator[tuple[int, str, int | None]]:
    """Walk the regex text ``pattern`` from ``start``: (index, token, depth) for each escape
    (``\\x``, two characters) or single character. ``depth`` is the group nesting after a
    structural character (outside a character class, not escaped); None for any other token."""
    depth, i, in_class = 0, start, False
    while i < len(pattern):
        c = pattern[i]
        if c == "\\":
            yield i, pattern[i:i + 2], None
            i += 2
            continue
        if in_class:
            in_class = c != "]"
            yield i, c, None
        else:
            if c == "[":
                in_class = True
            elif c == "(":
                depth += 1
            elif c == ")":
                depth -= 1
            yield i, c, depth
        i += 1


def _group_end(body: str, start: int) -> int:
    """The index of the ``)`` closing the group opened at ``body[start]``, or -1."""
    return next((i for i, tok, depth in _regex_tokens(body, start)
                 if tok == ")" and depth == 0), -1)


def _split_top(group: str) -> list[str]:
    """``group``'s alternatives: split at each ``|`` outside nested groups and classes."""
    out: list[str] = []
    cur: list[str] = []
    for _, tok, depth in _regex_tokens(group):
        if tok == "|" and depth == 0:
            out.append("".join(cur))
            cur = []
        else:
            cur.append(tok)
    out.append("".join(cur))
    return out


def _literal_prefix(alt: str) -> str:
    """The literal text every match of the regex ``alt`` starts with ("" when unknown)."""
    out: list[str] = []
    i = 0
    while i < len(alt):
        c = alt[i]
        if c == "\\" and i + 1 < len(alt):
            n = alt[i + 1]
            if n.isalnum():  # a class (\s, \w, \d) or an assertion (\b): not literal
                break
            out.append(n)
            i += 2
            continue
        if c in _META:
            if c in "*?{" and out:  # the last character is optional or repeated 0 times
                out.pop()
            break
        out.append(c)
        i += 1
    return "".join(out)


def literal_prefixes(pattern: str) -> tuple[str, ...] | None:
    """For a :func:`word_rx` pattern, the leading word-character run of the literal start of
    each top-level alternative of its first group (or of its body): the text's run where a
    match begins starts with one of them. None when some alternative has no such literal
    start (the rule is then always scanned)."""
    if not pattern.startswith(_WORD_START):
        return None
    body = pattern[len(_WORD_START):]
    if body.startswith("(?:"):
        end = _group_end(body, 0)
        if end < 0:
            return None
        alts = _split_top(body[3:end])
        # a quantified group ("(?:...)?") may match nothing: nothing is known then
        if end + 1 < len(body) and body[end + 1] in "*?{":
            return None
    elif body.startswith("("):
        return None
    else:
        alts = [body]
    # Every match begins at a word start (the lookbehind), with the literal start of one
    # alternative: the text's word-character run there starts with that literal's own
    # leading run.
    leads = []
    for a in alts:
        m = _RUN.match(_literal_prefix(a))
        if m is None:
            return None
        leads.append(m.group())
    return tuple(sorted(set(leads)))


def _skip_quantifier(body: str, i: int) -> tuple[int, bool]:
    """(index after the quantifier at ``body[i]``, whether it allows zero repetitions)."""
    if i >= len(body):
        return i, False
    q = body[i]
    if q in "?*+":
        optional = q != "+"
        i += 1
    elif q == "{" and "}" in body[i:]:
        close = body.index("}", i)
        optional = body[i + 1:close].split(",")[0].strip() in ("", "0")
        i = close + 1
    else:
        return i, False
    if i < len(body) and body[i] in "?+":  # lazy or possessive
        i += 1
    return i, optional


# A class matching only separators (whitespace and punctuation, never a word character).
_SEPARATOR_CLASS = re.compile(r"\[(?:\\s|[ ,:;.!?\"'])+\]")


def _gate(leads: Sequence[str], at_start: bool) -> tuple[bool, tuple[str, ...]]:
    """One gate; at a word start its strings are the leading word runs of ``leads`` (all of
    them must have one, else the gate checks the literal strings as substrings)."""
    if at_start:
        runs = [_RUN.match(x) for x in leads]
        if all(runs):
            return True, tuple(sorted({m.group() for m in runs if m is not None}))
    return False, tuple(sorted(set(leads)))


def literal_gates(pattern: str) -> tuple[tuple[bool, tuple[str, ...]], ...]:
    """For a :func:`word_rx` pattern, one gate per part of its top-level sequence that every
    match contains (a literal word, or a group not made optional): the literal starts of
    that part's alternatives, and whether the part starts a word (it comes first, after the
    lookbehind, or right after a separator: ``\\s``, ``[\\s,:]``, once or more). Every match
    contains one string of every gate — for a word-start gate, as the start of one of the
    text's word-character runs — so a text without any of one gate's strings cannot match.
    Parts whose start is not literal (a class, an escape, an alternative without a literal
    start) give no gate; a pattern of another shape gives none (``()``: always scanned)."""
    if not pattern.startswith(_WORD_START):
        return ()
    body = pattern[len(_WORD_START):]
    if len(_split_top(body)) > 1:  # a top-level alternation: not one sequence
        return ()
    gates: list[tuple[bool, tuple[str, ...]]] = []
    i = 0
    at_start = True  # the first part follows the lookbehind: it starts a word
    while i < len(body):
        c = body[i]
        if c == "(":
            end = _group_end(body, i)
            if end < 0:
                return ()
            inner = body[i + 1:end]
            i, optional = _skip_quantifier(body, end + 1)
            if inner.startswith(("?=", "?!", "?<=", "?<!")):
                continue  # an assertion consumes nothing: the next part starts where it is
            if inner.startswith("?:"):
                inner = inner[2:]
            elif inner.startswith("?"):
                return ()  # another extension: not analysed
            if not optional:
                leads = [_literal_prefix(a) for a in _split_top(inner)]
                if all(leads):
                    gates.append(_gate(leads, at_start))
            at_start = False
            continue
        if c in "[\\":
            if c == "[":
                end = body.find("]", i + 2 if body[i + 1:i + 2] in ("]", "^") else i + 1)
                if end < 0:
                    return ()
                token = body[i:end + 1]
            else:
                token = body[i:i + 2]
            i, optional = _skip_quantifier(body, i + len(token))
            # A separator matched at least once: the next part starts a word.
            at_start = not optional and (token == "\\s"
                                         or _SEPARATOR_CLASS.fullmatch(token) is not None)
            continue
        if c in _META:  # a stray quantifier or anchor: skip it
            i += 1
            at_start = False
            continue
        # A literal run: up to the next metacharacter (its last character dropped when
        # quantified, as _literal_prefix does).
        j = i
        while j < len(body) and body[j] not in _META:
            j += 1
        lit = _literal_prefix(body[i:j + 1] if j < len(body) else body[i:j])
        if lit:
            gates.append(_gate([lit], at_start))
        at_start = False
        i = j
    return tuple(gates)


# The word-start lookbehind moved after the first character: "(?<![\w'].)" right after a
# literal first character looks at the character before it, as "(?<![\w'])" did before it.
_AFTER_FIRST = "(?<![\\w'].)"


def fast_pattern(pattern: re.Pattern[str]) -> re.Pattern[str]:
    """``pattern`` with its leading word-start lookbehind moved behind the first character of
    each alternative of its first group: ``(?<![\\w'])(?:low|deep)…`` becomes
    ``(?:l(?<![\\w'].)ow|d(?<![\\w'].)eep)…``. The two match exactly the same text (the
    moved assertion tests the same character: the one before the first; ``.`` matches the
    first character, a letter), but a pattern that starts with literals lets the engine skip
    every position whose character starts no alternative. Returned unchanged when an
    alternative does not start with a plain letter or digit."""
    src = pattern.pattern
    if not src.startswith(_WORD_START):
        return pattern
    body = src[len(_WORD_START):]

    def moved(alt: str) -> str | None:
        return alt[0] + _AFTER_FIRST + alt[1:] if alt[:1].isalnum() else None

    if body.startswith("(?:"):
        end = _group_end(body, 0)
        if end < 0 or body[end + 1:end + 2] in ("?", "*", "{"):
            return pattern
        alts = [moved(a) for a in _split_top(body[3:end])]
        if not all(alts):
            return pattern
        new = "(?:" + "|".join(a for a in alts if a) + ")" + body[end + 1:]
    else:
        first = moved(body)
        if first is None or len(_split_top(body)) > 1:
            return pattern
        new = first
    return re.compile(new, pattern.flags)


def phrases_of(words: Iterable[str]) -> tuple[frozenset[str], ...] | None:
    """The :attr:`Entry.phrases` of ``word_rx(f"(?:{words_re(words)})")``: the word runs of
    each alternative (lower case, hyphens as spaces); None when every alternative is one run
    (its trigger then says all there is)."""
    out = [frozenset(_RUN.findall(w.strip().lower().replace("-", " "))) for w in words
           if w.strip()]
    return tuple(out) if any(len(x) > 1 for x in out) else None


def triggers_of(words: Iterable[str]) -> frozenset[str] | None:
    """The :attr:`Entry.triggers` of a rule matching exactly the alternation
    ``word_rx(f"(?:{words_re(words)})")``: the leading word-character run of each
    alternative as :func:`words_re` writes it (lower case, hyphens as spaces). None when an
    alternative does not start with a word character (nothing is then known)."""
    out = set()
    for w in words:
        alt = w.strip().lower().replace("-", " ")
        if not alt:
            continue
        m = _RUN.match(alt)
        if m is None:
            return None
        out.add(m.group())
    return frozenset(out)


#: Rule priorities, lower claims first: blockers, phrases, single words, trait-noun windows.
BLOCK, PHRASE, WORD, WINDOW = 0, 1, 2, 3


def words_re(words: Iterable[str]) -> str:
    """A regex alternation of ``words``, longest first; spaces and hyphens match any run of
    whitespace."""
    alts = sorted({w.strip().lower() for w in words if w.strip()}, key=len, reverse=True)
    return "|".join(r"\s+".join(re.escape(p) for p in a.replace("-", " ").split()) for a in alts)


def word_rx(body: str, *, flags: int = 0) -> re.Pattern[str]:
    """``body`` compiled to match whole words only (no letter, digit or apostrophe before it,
    no word character after it)."""
    return re.compile(rf"(?<![\w']){body}(?![\w])", flags)



def entries_for(
    trait: str,
    table: Mapping[str, Iterable[str]],
    *,
    priority_multi: int = PHRASE,
    script: bool = True,
    kind: str = "",
) -> list[Entry]:
    """The rules stating each value of ``table`` (value → its words): one-word and multi-word
    alternations, split by whether the words also count inside a script."""
    out: list[Entry] = []
    for value, words in table.items():
        for flag in (True, False):
            group = [w for w in words if (w not in PARSER_ONLY) == flag]
            single = [w for w in group if len(w.replace("-", " ").split()) == 1]
            multi = [w for w in group if len(w.replace("-", " ").split()) > 1]
            if single:
                out.append(Entry(trait, value, word_rx(f"(?:{words_re(single)})"), WORD,
                                 script and flag, kind, triggers=triggers_of(single),
                                 phrases=phrases_of(single)))
            if multi:
                out.append(Entry(trait, value, word_rx(f"(?:{words_re(multi)})"), priority_multi,
                                 script and flag, kind, triggers=triggers_of(multi),
                                 phrases=phrases_of(multi)))
    return out


def _window(trait: str, value: str, body: str, priority: int = WINDOW) -> Entry:
    return Entry(trait, value, word_rx(body), priority, script=False)


def _around_noun(trait: str, mods: Mapping[str, str], *, before: str, gap_before: int,
                 after: str, not_next: str) -> list[Entry]:
    """Two window rules per value of ``mods`` (value → modifier alternation): a modifier up
    to ``gap_before`` words before a ``before`` noun, and one up to 3 words after an ``after``
    noun unless another trait's noun (``not_next``) follows it."""
    out: list[Entry] = []
    for value, m in mods.items():
        out.append(_window(trait, value, rf"(?:{m}){GAP % gap_before}[\s,:]+{before}"))
        out.append(_window(trait, value, rf"{after}{GAP % 3}[\s,:]+(?:{m})"
                                         rf"(?!\s+(?:{not_next}))"))
    return out


def _builtin_entries() -> list[Entry]:
    e: list[Entry] = []
    # Blockers: spans that look like trait words but state nothing.
    blockers = [
        r"neutral(?=\s+(?:(?:american|british|australian|indian|canadian|english)\s+)?accent)",
        r"(?:in|speaks?|speaking|spoken|reads?|reading)\s+(?:plain\s+)?english",
        r"english\s+(?:text|words|language|sentence|lines?|script)",
        r"surprisingly", r"high\s+school", r"high\s+spirited", r"fast\s+food",
        r"low\s+key", r"dry\s+(?:cleaning|run|cleaner)",
        r"voice\s+actor", r"voice\s+actress", r"sound\s+director",
        r"tone\s+of\s+voice", r"the\s+states?\s+of",
        # a participle with an object is an action, not a manner: "reassuring a friend"
        r"(?:reassuring|comforting|soothing|teasing|mocking|consoling|calming)\s+(?:a|an|the|"
        r"her|his|their|my|your|our|someone|somebody|him|them|us|me|everyone|people)",
    ]
    e += [Entry("", None, word_rx(b), BLOCK, script=False) for b in blockers]

    e += entries_for("emotion", EMOTION)
    e += entries_for("tone", TONE)
    for value, words in TONE_WEAK.items():
        alt = words_re(words)
        e.append(Entry("tone", value, word_rx(rf"(?:{alt})\s+(?:[a-z]+\s+)?{TONE_NOUNS}"),
                       PHRASE, script=False, kind="weak"))
        e.append(Entry("tone", value, word_rx(rf"{TONE_NOUNS}\s+(?:(?:that\s+is|is|stays|"
                                              rf"remains|kept|of)\s+)?(?:[a-z]+ly\s+)?(?:{alt})"),
                       PHRASE, script=False, kind="weak"))
    e += entries_for("pace", PACE)
    e += entries_for("pitch", PITCH)
    e += entries_for("loudness", LOUD)
    e += entries_for("gender", GENDER_NOUNS, kind="noun")
    e += entries_for("accent", ACCENT)
    for value, pats in ACCENT_CASE.items():
        # Matched on the case-kept text; every match starts with one alternative's literal
        # start ("U", "USA", "RP"), which the gate looks for in that text.
        e.append(Entry("accent", value, re.compile(rf"(?<![\w.])(?:{'|'.join(pats)})(?![\w])"),
                       WORD, script=True, case_sensitive=True,
                       gates=((False, tuple(sorted({_literal_prefix(x) for x in pats}))),)))
    e.append(_window("accent", "British", rf"english(?=\s+{PERSON})", WORD))
    for value, places in ACCENT_PLACES.items():
        e.append(Entry("accent", value, word_rx(rf"(?:from|in|of)\s+(?:{words_re(places)})"),
                       PHRASE, script=False, kind="weak"))

    # Pitch: modifiers before a pitch noun, adjectives after it.
    pitch_mods = {
        "low": r"low|deep|lower|deeper|bass|low\s+ish|husky|gravelly\s+low",
        "medium": r"medium|mid|middle|moderate|average|normal|natural|neutral|regular|"
                  r"mid\s+range|midrange|middling|even",
        "high": r"high|higher|bright\s+high|squeaky|piping|shrill|light\s+high",
    }
    e += _around_noun("pitch", pitch_mods, before=r"(?:pitch|pitched|register|voice|tones|range)",
                      gap_before=2, after=r"(?:pitch|register)",
                      not_next=r"volume|loudness|pace|speed")
    e.append(_window("pitch", "low", rf"voice{GAP % 3}[\s,:]+(?:deep|low)"
                                     r"(?!\s+(?:volume|loudness|pace|speed))"))
    # Loudness: modifiers before a loudness noun, adjectives after it.
    loud_mods = {
        "quiet": r"low|soft|quiet|hushed|lowered|reduced|gentle|muted|subdued|minimal",
        "normal": r"normal|moderate|medium|average|regular|ordinary|everyday|conversational|"
                  r"natural|standard|typical|usual|even|steady|middling|comfortable|mid",
        "loud": r"high|loud|full|raised|big|maximum|booming|considerable",
    }
    e += _around_noun("loudness", loud_mods, before=r"(?:volume|loudness)", gap_before=1,
                      after=r"(?:volume|loudness)", not_next=r"pitch|pace|speed|register")
    # Pace: modifiers before a pace noun, adjectives after it.
    pace_mods = {
        "slow": r"slow|slower|leisurely|unhurried|relaxed|gentle|sluggish|crawling|measured\s+"
                r"slow|languid|lazy|easy|dragging|deliberate",
        "moderate": r"moderate|moderately|medium|average|normal|natural|steady|even|regular|"
                    r"ordinary|conversational|comfortable|middling|mid|standard|typical|usual|"
                    r"measured|balanced|unremarkable|everyday",
        "fast": r"fast|quick|quicker|faster|rapid|brisk|hurried|breakneck|speedy|swift|high|"
                r"racing|rushed|lively|snappy|clipped",
    }
    e += _around_noun("pace", pace_mods, before=PACE_NOUN, gap_before=1, after=PACE_NOUN,
                      not_next=r"pitch|volume|loudness|register")
    # "moderately" alone is pace unless it modifies another trait word.
    e.append(Entry("pace", "moderate",
                   word_rx(r"moderately(?!\s+(?:loud|loudly|quiet|quietly|high|low|pitched|"
                           r"deep|soft|softly|fast|quick|quickly|slow|slowly|brisk|briskly))"),
                   WORD, script=False))
    e.append(_window("pace", "moderate", r"(?:neither\s+(?:fast|quick|rushed)\s+nor\s+slow|"
                                         r"neither\s+slow\s+nor\s+(?:fast|quick|rushed)|"
                                         r"(?:not\s+too\s+(?:fast|quick)\s+(?:and|or|,)?\s*"
                                         r"not\s+too\s+slow)|not\s+too\s+slow\s+(?:and|or|,)?"
                                         r"\s*not\s+too\s+(?:fast|quick))", PHRASE))
    # Its alternatives start with a group, so no literal start is read from the pattern:
    # every match holds the word "neither" or "not" (Entry.triggers).
    e[-1] = dataclasses.replace(e[-1], triggers=frozenset({"neither", "not"}))
    return e


BUILTIN = _builtin_entries()
BUILTIN_TRAITS = ("gender", "age", "pace", "pitch", "loudness", "emotion", "accent", "tone")

# Pronouns are read separately (majority vote), never claimed.
PRONOUN_RE = {g: word_rx(f"(?:{'|'.join(ws)})") for g, ws in PRONOUNS.items()}
