"""The brief reader's lexicon: normalised text, and the rules (patterns with a trait value
and a priority) compiled from :mod:`vocencebench._instruction.words`."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
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
    "normalise",
    "word_rx",
    "words_re",
]


def normalise(text: str) -> tuple[str, str]:
    """(lower-cased, case-kept) forms of ``text``, equal length, hyphens and dashes as spaces."""
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
                                 script and flag, kind))
            if multi:
                out.append(Entry(trait, value, word_rx(f"(?:{words_re(multi)})"), priority_multi,
                                 script and flag, kind))
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
        e.append(Entry("accent", value, re.compile(rf"(?<![\w.])(?:{'|'.join(pats)})(?![\w])"),
                       WORD, script=True, case_sensitive=True))
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
    return e


BUILTIN = _builtin_entries()
BUILTIN_TRAITS = ("gender", "age", "pace", "pitch", "loudness", "emotion", "accent", "tone")

# Pronouns are read separately (majority vote), never claimed.
PRONOUN_RE = {g: word_rx(f"(?:{'|'.join(ws)})") for g, ws in PRONOUNS.items()}
