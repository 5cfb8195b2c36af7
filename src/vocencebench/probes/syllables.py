"""Syllable and phone counting of a script, for the pace probe.

A script is first rewritten in spoken form (:func:`spoken_form`): web and e-mail addresses,
abbreviations, units, fractions, version strings and leading zeros through the named
pre-rules of :mod:`vocencebench.textnorm` (the same readings the intelligibility gate uses),
then clock times, currency, percentages, ordinals, years, decimals and plain numbers through
``num2words``. Each word is then looked up in the CMU Pronouncing Dictionary that the
``pocketsphinx`` wheel ships (``cmudict-en-us.dict``; syllables = vowel phones of the first
pronunciation; phones = all phones of it). A word the dictionary lacks is counted by
:func:`rule_syllables` (vowel groups with English spelling corrections) and
:func:`rule_phones` (letters, with common digraphs read as one sound), and a token without
vowels is spelled out letter by letter ("www" → three "double-u"s). Words counted by rule are
listed in :attr:`SyllableCount.unknown`, so nothing is estimated silently.

The script's phrases are counted on the same spoken form before its punctuation is dropped:
stretches between the marks ``. , ; : ! ?`` and ``…`` that hold at least one word
(:attr:`SyllableCount.phrases`; "Stop. Give it back, now!" has three). Numbers are read out
first, so "$3.50" or "10:30" do not split a phrase, nor does the full stop of an initial or a
title ("Dr. Smith", "U.S.").
"""

from __future__ import annotations

import functools
import os
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from .._util.deps import require
from ..errors import ConfigError

__all__ = [
    "CMUDICT_FILE",
    "PHRASE_MARKS",
    "SyllableCount",
    "cmu_dictionary",
    "cmu_phones",
    "count_syllables",
    "rule_phones",
    "rule_syllables",
    "spoken_form",
]

#: Punctuation that ends a phrase (after numbers, times and money are read out).
PHRASE_MARKS = ".,;:!?…"
#: File name of the CMU dictionary inside pocketsphinx's ``model/en-us`` folder.
CMUDICT_FILE = "cmudict-en-us.dict"

#: ARPAbet vowel phones: one per syllable.
_VOWEL_PHONES = frozenset(
    ("AA", "AE", "AH", "AO", "AW", "AY", "EH", "ER", "EY", "IH", "IY", "OW", "OY", "UH", "UW")
)
#: Syllables of each letter name when a token is spelled out ("w" = double-u = 3).
_LETTER_SYLLABLES = {ch: 1 for ch in "abcdefghijklmnopqrstuvxyz"} | {"w": 3}
#: Phones of each letter name, from the CMU dictionary's readings ("b" = B IY, "x" = EH K S,
#: "w" = D AH B AH L Y UW).
_LETTER_PHONES = {ch: 2 for ch in "abcdefghijklmnopqrstuvwxyz"} | {
    "a": 1, "e": 1, "i": 1, "o": 1, "x": 3, "q": 3, "w": 7}  # fmt: skip

#: textnorm pre-rules reused, in textnorm's order: these run before our clock-time rule
#: (textnorm's own writes 10:30 as the digit string 1030, which is right for WER only) ...
_TEXTNORM_BEFORE_CLOCK = ("unicode", "addresses", "brackets", "iso_dates")
#: ... and these after it (so "9:05" is read "nine oh five", not "nine zero five").
_TEXTNORM_AFTER_CLOCK = ("abbreviations", "fractions", "versions", "leading_zeros", "percent")


@dataclass(frozen=True)
class SyllableCount:
    """Syllables of a script.

    ``total``: syllables (count). ``words``: the spoken-form words, in order; ``per_word``:
    syllables of each. ``unknown``: words the CMU dictionary lacks (counted by rule or spelled
    out). ``spoken``: the spoken-form text the words came from. ``phones``: phones of the
    whole script (count); ``phones_per_word``: phones of each word. ``phrases``: stretches of
    the spoken form between :data:`PHRASE_MARKS` that hold a word (count; 1 for a script
    without punctuation, 0 for one without words).
    """

    total: int
    words: tuple[str, ...]
    per_word: tuple[int, ...]
    unknown: tuple[str, ...]
    spoken: str
    phones: int = 0
    phones_per_word: tuple[int, ...] = ()
    phrases: int = 0


def cmu_dictionary() -> Mapping[str, int]:
    """Lower-case word → syllables (vowel phones of its first pronunciation), read once per
    process from pocketsphinx's copy of the CMU Pronouncing Dictionary."""
    return _cmu()[0]


def cmu_phones() -> Mapping[str, int]:
    """Lower-case word → phones of its first pronunciation (same source as
    :func:`cmu_dictionary`)."""
    return _cmu()[1]


@functools.cache
def _cmu() -> tuple[Mapping[str, int], Mapping[str, int]]:
    pocketsphinx = require("pocketsphinx", "syllable counting (CMU dictionary)", "probes",
                           package="pocketsphinx")
    path = os.path.join(pocketsphinx.get_model_path(), "en-us", CMUDICT_FILE)
    try:
        with open(path, encoding="utf-8") as fh:
            lines = fh.read().splitlines()
    except OSError as exc:
        raise ConfigError(
            f"the CMU dictionary is missing from the pocketsphinx install ({path}: "
            f"{exc.strerror or exc}); reinstall it: pip install --force-reinstall pocketsphinx"
        ) from exc
    syllables: dict[str, int] = {}
    phones: dict[str, int] = {}
    for line in lines:
        parts = line.split()
        if len(parts) < 2 or "(" in parts[0] or parts[0] in syllables:  # "(2)": alternatives
            continue
        syllables[parts[0]] = sum(1 for p in parts[1:] if p.rstrip("012") in _VOWEL_PHONES)
        phones[parts[0]] = len(parts) - 1
    return syllables, phones


_RULE_SUBTRACT = (
    re.compile(r"[^aeiouy]e$"),  # silent final e: make, kite (but not "the"-like short words)
    re.compile(r"[^aeiouy]es$"),  # makes (the "-ses/-ches" case is added back below)
    re.compile(r"[^aeiouytd]ed$"),  # walked, jumped (but wanted, ended keep their syllable)
)
_RULE_ADD = (
    re.compile(r"[^aeiouy]le$"),  # table, little
    re.compile(r"(?:[sxz]|ch|sh|ge|ce)es$"),  # buses, boxes, churches, pages
    re.compile(r"i[aou]"),  # piano, radio, Julia (not "-tion"/"-sion", corrected below)
    re.compile(r"[aeiou]ing$"),  # being, going
    re.compile(r"eo"),  # video, rodeo
    re.compile(r"ua"),  # actual, usual
)
_RULE_SUBTRACT_AGAIN = (
    re.compile(r"[tsc]i[aou]"),  # nation, vision, special, precious: one syllable
    re.compile(r"(?:g|qu)i[aou]"),  # religion, quiet (kept simple)
)


def rule_syllables(word: str) -> int:
    """Syllables of an English word by spelling rules (count, at least 1 for a word with a
    vowel letter): groups of vowel letters, minus a silent final e/es/ed, plus common hiatus
    patterns (piano, video, actual, being) and consonant + le (table)."""
    w = re.sub(r"[^a-z]", "", word.lower())
    if not w:
        return 0
    if not re.search(r"[aeiouy]", w):
        return sum(_LETTER_SYLLABLES.get(ch, 1) for ch in w)
    n = len(re.findall(r"[aeiouy]+", w))
    if len(w) > 3:
        n -= sum(1 for rx in _RULE_SUBTRACT if rx.search(w))
        n += sum(1 for rx in _RULE_ADD if rx.search(w))
        n -= sum(1 for rx in _RULE_SUBTRACT_AGAIN if rx.search(w))
    return max(1, n)


#: Letter groups spelling one sound: consonant digraphs, vowel teams, r-coloured vowels (ER),
#: doubled letters (longest first, so "tch" is one sound before "ch" is considered).
_ONE_SOUND = re.compile(
    r"tch|dge|igh|ough|augh|th|sh|ch|ph|wh|gh|ck|ng|kn|wr|er|ir|ur|"
    r"ee|ea|oo|ai|ay|oa|ou|ow|oi|oy|au|aw|ie|ei|ey|ue|ew|([b-df-hj-np-tv-z])\1"
)


def rule_phones(word: str) -> int:
    """Phones of an English word by spelling (count, at least 1): letters, with common
    digraphs, vowel teams and doubled letters read as one sound, a silent final e dropped
    and "x" read as two (K S); a token with no vowel letter is spelled out."""
    w = re.sub(r"[^a-z]", "", word.lower())
    if not w:
        return 0
    if not re.search(r"[aeiouy]", w):
        return sum(_LETTER_PHONES.get(ch, 2) for ch in w)
    if len(w) > 2 and w.endswith("e") and not w.endswith(("ee", "le")):
        w = w[:-1]  # make, kite: the e is silent (table keeps its vowel sound)
    n = len(_ONE_SOUND.sub("_", w))
    return max(1, n + w.count("x"))


# ------------------------------------------------------------------------- spoken form


def _num2words() -> Callable[..., str]:
    module = require("num2words", "reading numbers for syllable counting", "probes",
                     package="num2words")
    return module.num2words  # type: ignore[no-any-return]


def _words(n: int | float, to: str = "cardinal") -> str:
    # num2words writes British "one hundred and five"; American reading drops the "and".
    spoken = _num2words()(n, lang="en", to=to).replace(",", "").replace("-", " ")
    return " " + re.sub(r"\band\b", " ", spoken) + " "


def _clock(m: re.Match[str]) -> str:
    hour, minute = int(m.group(1)), int(m.group(2))
    if hour > 24 or minute > 59:
        return m.group(0)
    suffix = m.group(3) or ""
    ampm = " a m " if suffix.lower().startswith("a") else " p m " if suffix else " "
    if minute == 0:
        spoken = _words(hour) + ("o'clock" if not suffix else "")
    elif minute < 10:
        spoken = _words(hour) + "oh" + _words(minute)
    else:
        spoken = _words(hour) + _words(minute)
    return f" {spoken}{ampm}"


_CURRENCY = {"$": ("dollar", "dollars", "cent", "cents"), "£": ("pound", "pounds", "penny",
             "pence"), "€": ("euro", "euros", "cent", "cents")}  # fmt: skip


def _money(m: re.Match[str]) -> str:
    one, many, sub_one, sub_many = _CURRENCY[m.group(1)]
    whole = int(m.group(2).replace(",", ""))
    frac = m.group(3) or ""
    scale = m.group(4)
    if scale:  # "$2.5 million" → two point five million dollars
        amount = _number_words(m.group(2).replace(",", "") + (f".{frac}" if frac else ""))
        return f" {amount} {scale} {many} "
    cents = int(frac[:2].ljust(2, "0")) if frac else 0
    out = f"{_words(whole)} {one if whole == 1 else many}" if whole or not cents else ""
    if cents:
        out += f"{' and' if out else ''} {_words(cents)} {sub_one if cents == 1 else sub_many}"
    return f" {out} "


def _number_words(text: str) -> str:
    if "." in text:
        whole, frac = text.split(".", 1)
        return f"{_words(int(whole))} point " + " ".join(_words(int(d)).strip() for d in frac)
    n = int(text)
    if len(text) == 4 and 1100 <= n <= 2099 and n % 1000 >= 10:  # 1984, 2024 (not 2000, 2005)
        return _words(n, "year")
    return _words(n)


def _number(m: re.Match[str]) -> str:
    return _number_words(m.group(0).replace(",", "")) if "," not in m.group(0) else \
        _words(int(m.group(0).split(".")[0].replace(",", "")))


_CLOCK_RX = re.compile(r"\b(\d{1,2}):(\d{2})(?::\d{2})?\s*([ap]\.?m\.?)?(?!\w)", re.IGNORECASE)
_SPOKEN_STEPS: tuple[tuple[re.Pattern[str], Callable[[re.Match[str]], str]], ...] = (
    (re.compile(r"([$£€])\s?(\d[\d,]*)(?:\.(\d+))?(?:\s(million|billion|thousand))?\b"),
     _money),
    (re.compile(r"(\d+(?:\.\d+)?)%"), lambda m: f"{m.group(1)} percent"),
    (re.compile(r"\b(\d+)(?:st|nd|rd|th)\b", re.IGNORECASE),
     lambda m: _words(int(m.group(1)), "ordinal")),
    (re.compile(r"(?<![\d.])\d{1,3}(?:,\d{3})+(?:\.\d+)?(?![\d,])|(?<![\d.])\d+(?:\.\d+)?"),
     _number),
)  # fmt: skip


@functools.cache
def _textnorm_rules() -> tuple[Callable[[str], str], ...]:
    from .. import textnorm

    by_name = {r.name: r for r in textnorm.PRE_RULES}
    missing = [n for n in (*_TEXTNORM_BEFORE_CLOCK, *_TEXTNORM_AFTER_CLOCK) if n not in by_name]
    if missing:
        raise ConfigError(
            f"vocencebench.textnorm lacks the pre-rules {missing} that syllable counting "
            "reuses; the two modules are out of step (reinstall vocencebench)"
        )
    return (
        *(by_name[n].apply for n in _TEXTNORM_BEFORE_CLOCK),
        functools.partial(_CLOCK_RX.sub, _clock),
        *(by_name[n].apply for n in _TEXTNORM_AFTER_CLOCK),
    )


_WORD_RX = re.compile(r"[a-z]+(?:'[a-z]+)*")
_PHRASE_RX = re.compile("[" + re.escape(PHRASE_MARKS) + "]+")
#: A full stop after an initial or a title abbreviation does not end a phrase ("Dr. Smith",
#: "U.S. troops").
_NOT_A_STOP_RX = re.compile(r"\b(?:[a-z]|mr|mrs|ms|dr|st|jr|sr|prof|vs|mt|ft)\.(?=\s*\w)")


def _read_out(text: str, caller: str) -> str:
    """``text`` with numbers, times, money and symbols read out, lower case, punctuation kept."""
    if not isinstance(text, str):
        raise ConfigError(f"{caller}() needs a str, got {type(text).__name__}")
    for rule in _textnorm_rules():  # textnorm's readings, with our clock rule among them
        text = rule(text)
    for rx, repl in _SPOKEN_STEPS:
        text = rx.sub(repl, text)
    return text.lower().replace("&", " and ").replace("+", " plus ").replace("=", " equals ")


def spoken_form(text: str) -> str:
    """``text`` rewritten as it is read aloud (lower case, words separated by single spaces):
    "$3.50 at 10:30" → "three dollars and fifty cents at ten thirty"."""
    return " ".join(_WORD_RX.findall(_read_out(text, "spoken_form")))


def count_syllables(text: str) -> SyllableCount:
    """Syllables of ``text`` read aloud (see the module docstring for the method)."""
    read = _read_out(text, "count_syllables")
    spoken = " ".join(_WORD_RX.findall(read))
    phrases = sum(1 for part in _PHRASE_RX.split(_NOT_A_STOP_RX.sub(" ", read))
                  if _WORD_RX.search(part))
    cmu, cmu_ph = _cmu()
    words = tuple(spoken.split())
    per_word: list[int] = []
    phones: list[int] = []
    unknown: list[str] = []
    for w in words:
        n = cmu.get(w)
        ph = cmu_ph.get(w)
        if n is None and w.endswith("'s"):
            base = cmu.get(w[:-2])
            if base is not None:
                sibilant = re.search(r"(?:[sxz]|ch|sh|ge|ce)$", w[:-2]) is not None
                n = base + (1 if sibilant else 0)  # church's: one more syllable
                ph = cmu_ph[w[:-2]] + (2 if sibilant else 1)  # + IH Z, or + Z / S
        if n is None or ph is None:
            unknown.append(w)
            n = rule_syllables(w)
            ph = rule_phones(w)
        per_word.append(n)
        phones.append(ph)
    return SyllableCount(
        total=sum(per_word),
        words=words,
        per_word=tuple(per_word),
        unknown=tuple(unknown),
        spoken=spoken,
        phones=sum(phones),
        phones_per_word=tuple(phones),
        phrases=phrases,
    )
