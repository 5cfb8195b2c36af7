"""Text normalisation for the intelligibility gate's word error rate.

The script a system was asked to read and the ASR transcript of its clip are both mapped to
one canonical form before :mod:`jiwer` counts word errors, so that writing conventions do not
count as errors ("$3.50" read as "three dollars fifty", "10:30" as "ten thirty",
"www.example.com" as "w w w dot example dot com") while a different number or word still does.

The pipeline is three stages, each a tuple of small named :class:`Rule` objects:

1. :data:`PRE_RULES` rewrite written-only forms that the Whisper normaliser mishandles
   (web addresses, clock times, leading zeros, version strings, units, bracketed text, ...);
2. whisper-normalizer's ``EnglishTextNormalizer`` (the normaliser of the Whisper paper,
   appendix C): lower case, contractions, titles, punctuation, number words → digits,
   currency, British → American spelling;
3. :data:`POST_RULES` settle the forms that can still differ afterwards (cents written
   apart, day/month order, digits spoken in groups, letters spelled one by one).

Every rule is documented in ``docs/probes.md`` (section "Intelligibility gate").
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Literal

from ._util import textnorm_tables as tables
from ._util.deps import require
from .errors import ConfigError

__all__ = [
    "POST_RULES",
    "PRE_RULES",
    "Rule",
    "WerResult",
    "WordOp",
    "align",
    "normalize",
    "wer",
    "word_errors",
]


@dataclass(frozen=True)
class Rule:
    """One named text rewrite of the normalisation pipeline."""

    name: str
    doc: str
    apply: Callable[[str], str]

    def __call__(self, text: str) -> str:
        return self.apply(text)


@dataclass(frozen=True)
class WerResult:
    """Word error counts after normalisation.

    ``wer = (substitutions + deletions + insertions) / reference_words`` (a fraction; it
    can exceed 1 when the hypothesis inserts many words). An inserted number counts one
    insertion per digit (see :func:`align`).
    """

    wer: float
    substitutions: int
    deletions: int
    insertions: int
    hits: int
    reference_words: int
    reference_norm: str
    hypothesis_norm: str


@dataclass(frozen=True)
class WordOp:
    """One step of the word alignment behind a WER: ``op`` is "equal", "substitute" (the
    reference words ``ref`` heard as ``hyp``, as many of each), "delete" (``ref`` not heard,
    ``hyp`` empty) or "insert" (``hyp`` heard, ``ref`` empty)."""

    op: Literal["equal", "substitute", "delete", "insert"]
    ref: tuple[str, ...]
    hyp: tuple[str, ...]


# --------------------------------------------------------------------------- helpers

_NUM = r"(?:\d+|" + "|".join(tables.NUMBER_WORDS) + r")"
_MONTH_RE = "|".join(tables.MONTHS)


def _sub(pattern: str, repl: str | Callable[[re.Match[str]], str], flags: int = 0) -> Callable[
    [str], str
]:
    rx = re.compile(pattern, flags)

    def run(text: str) -> str:
        return rx.sub(repl, text)

    return run


def _chain(*steps: Callable[[str], str]) -> Callable[[str], str]:
    def run(text: str) -> str:
        for step in steps:
            text = step(text)
        return text

    return run


def _drop_invisible(text: str) -> str:
    """``text`` without format characters (category Cf: U+200B, U+00AD, U+FEFF, U+200E, ...)
    and control characters other than whitespace: nobody reads them, and a script holding
    one inside a word ("c\u200bat") would veto a perfect reading."""
    return "".join(ch for ch in text if ch.isspace()
                   or unicodedata.category(ch) not in ("Cf", "Cc"))


def _ordinal(day: int) -> str:
    if 10 <= day % 100 <= 20:
        return f"{day}th"
    return f"{day}{ {1: 'st', 2: 'nd', 3: 'rd'}.get(day % 10, 'th') }"


# --------------------------------------------------------------------------- pre-rules

_EMAIL_RX = re.compile(r"[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)+")
_URL_RX = re.compile(
    r"(?:\b[a-z][a-z0-9+.-]*://)?"  # scheme
    r"\b(?:[A-Za-z0-9-]+\.)+[A-Za-z]{2,}\b"  # host with a letter TLD (not "e.g.", not "3.5")
    r"(?:/[A-Za-z0-9._~%!$&'()*+,;=:@/?#-]*[A-Za-z0-9/_~#=-])?",  # path, no trailing period
    re.IGNORECASE,
)


def _speak_address(m: re.Match[str]) -> str:
    s = m.group(0).lower()
    s = re.sub(r"^([a-z][a-z0-9+.-]*)://", r"\1 colon slash slash ", s)
    return " " + "".join(tables.URL_CHARS.get(ch, ch) for ch in s) + " "


def _speak_addresses(text: str) -> str:
    text = _EMAIL_RX.sub(_speak_address, text)
    return _URL_RX.sub(_speak_address, text)


def _clock(m: re.Match[str]) -> str:
    hour, minute = int(m.group(1)), m.group(2)
    if minute == "00":
        return f"{hour}"
    return f"{hour}{minute}"


_ROMAN = {"I": 1, "V": 5, "X": 10}


def _roman_value(numeral: str) -> int | None:
    """The value of a well-formed Roman numeral of I, V and X (2 to 39), else None."""
    total = 0
    for i, ch in enumerate(numeral):
        v = _ROMAN[ch]
        total += -v if i + 1 < len(numeral) and _ROMAN[numeral[i + 1]] > v else v
    return total if _to_roman(total) == numeral else None


def _to_roman(n: int) -> str:
    out = "X" * (n // 10)
    return out + ("", "I", "II", "III", "IV", "V", "VI", "VII", "VIII", "IX")[n % 10]


def _roman(m: re.Match[str]) -> str:
    value = _roman_value(m.group(2))
    if value is None or not 2 <= value <= 39:
        return m.group(0)
    if m.group(1) in tables.REGNAL_NAMES:
        return f"{m.group(1)} the {_ordinal(value)}"
    return f"{m.group(1)} {value}"


_OH_MARK = "ohinterjection"
# "two point oh" is a number too: the "oh" after "point" is a zero, not an interjection.
_NUM_BEFORE = re.compile(rf"\b{_NUM}(?:\s+point)?[\s-]*$", re.IGNORECASE)
_NUM_AFTER = re.compile(rf"^[\s-]*{_NUM}\b", re.IGNORECASE)


def _protect_oh(text: str) -> str:
    def repl(m: re.Match[str]) -> str:
        before, after = text[: m.start()], text[m.end() :]
        if _NUM_BEFORE.search(before) or _NUM_AFTER.match(after):
            return m.group(0)
        return _OH_MARK

    return re.sub(r"\boh\b", repl, text, flags=re.IGNORECASE)


def _leading_zero(m: re.Match[str]) -> str:
    return " " + " ".join(tables.DIGIT_WORDS[int(d)] for d in m.group(1)) + " "


def _version(m: re.Match[str]) -> str:
    return " " + " point ".join(m.group(0).split(".")) + " "


def _iso_date(m: re.Match[str]) -> str:
    year, month, day = int(m.group(1)), int(m.group(2)), int(m.group(3))
    if not (1 <= month <= 12 and 1 <= day <= 31):
        return m.group(0)
    return f"{tables.MONTHS[month - 1]} {_ordinal(day)} {year}"


_TIME_CUE = r"(?:at|by|from|until|till|before|after|around|between)"


def _dotted_times(text: str) -> str:
    def repl(m: re.Match[str]) -> str:
        word = re.match(r"\s*([^\W\d_]+|[%°])", m.string[m.end():])
        if int(m["h"]) > 23 or (word and word.group(1).lower() in tables.QUANTITY_WORDS):
            return m.group(0)
        return f"{m['pre']}{m['h']}:{m['m']}"

    tail = r"(?P<h>\d{1,2})\.(?P<m>[0-5]\d)(?![\d.]?\d)"
    text = re.sub(rf"(?P<pre>\b{_TIME_CUE}\s+){tail}", repl, text, flags=re.IGNORECASE)
    text = re.sub(rf"(?P<pre>(?<![\w.]))(?=\d{{1,2}}\.\d\d\s?[AaPp]\.?[Mm]\b){tail}", repl,
                  text)
    # the second end of a range: "from 9.30 to 5.30", "between 9.30 and 10.15"
    return re.sub(rf"(?P<pre>\d:[0-5]\d\s*(?:to|and|until|till|-)\s*){tail}", repl, text,
                  flags=re.IGNORECASE)


_AMOUNT = r"\d[\d,]*(?:\.\d+)?"
_SIGNS = "".join(tables.CURRENCY_NAMES)
_MAGNITUDE_RX = re.compile(rf"([$£€{_SIGNS}])\s?({_AMOUNT})\s?(k|m|mn|bn|b|tn)(?![.']?\w)",
                           re.IGNORECASE)


def _money_written(text: str) -> str:
    # Whisper writes "eighteen dollars and fifty cents" as "$18 and $0.50".
    text = re.sub(r"([$£€])(\d[\d,]*) and \1\s?0?\.(\d\d)(?![\d.]?\d)", r"\1\2.\3", text)
    text = _MAGNITUDE_RX.sub(lambda m: f"{m[1]}{m[2]} {tables.MAGNITUDES[m[3].lower()]}", text)
    text = re.sub(r"(?<=\d)\s?bn\b", " billion", text)
    text = re.sub(r"£\s?0?\.(\d\d)(?![\d.]?\d)", lambda m: f"{int(m[1])} pence", text)
    return re.sub(r"(?<![\w.])(\d{1,2}(?:\.\d+)?)p\b(?!\.?\s?m\b)", r"\1 pence", text)


_MAGNITUDE_WORDS = r"(?:thousand|million|billion|trillion|lakhs?|crores?)\b"
_SIGN_RX = re.compile(rf"(?:([{_SIGNS}])|\bRs\.?)\s?({_AMOUNT})((?:\s+{_MAGNITUDE_WORDS})?)")
# "4.2 rupees crore" (as a reader may say "₹4.2 crore") is "4.2 crore rupees"
_NAME_FIRST_RX = re.compile(
    rf"(?<=\d)\s+({'|'.join(sorted(set(tables.CURRENCY_NAMES.values())))})\s+({_MAGNITUDE_WORDS})",
    re.IGNORECASE)


def _currency_signs(text: str) -> str:
    text = _SIGN_RX.sub(lambda m: f" {m[2]}{m[3]} {tables.CURRENCY_NAMES[m[1] or '₹']} ", text)
    return _NAME_FIRST_RX.sub(r" \2 \1", text)


_UNIT_RX = re.compile(r"(?<=\d)\s?(" + "|".join(
    re.escape(u) for u, _ in sorted(tables.UNITS, key=lambda x: -len(x[0]))) + r")(?![A-Za-z0-9])",
    re.IGNORECASE)
_UNIT_MAP = dict(tables.UNITS)
_LETTER_UNIT_RX = [(re.compile(r"(?<=\d)" + rx), " " + name) for rx, name in tables.LETTER_UNITS]
_WEEKDAY = "|".join(sorted(tables.WEEKDAYS, key=len, reverse=True))
_WEEKDAY_ANY = rf"(?:{_WEEKDAY}|Monday|Tuesday|Wednesday|Thursday|Friday|Saturday|Sunday)\b\.?"
_LINK = r"\s*(?:to|through|thru|and|or|&|,|-)\s*"


def _weekday(m: re.Match[str]) -> str:
    abbr = m.group(1)
    if abbr in tables.AMBIGUOUS_WEEKDAYS:  # "sat", "wed", "the Sun": only where a day fits
        before, after = m.string[: m.start()], m.string[m.end() :]
        if not (re.search(rf"\b(?:{_WEEKDAY_ANY}{_LINK}|(?:on|every|next|last|this|by|until)\s+)$",
                          before) or re.match(rf"{_LINK}{_WEEKDAY_ANY}|,?\s*\d", after)):
            return m.group(0)
    return tables.WEEKDAYS[abbr]


def _abbreviations(text: str) -> str:
    for pattern, repl in tables.ABBREVIATIONS:
        text = re.sub(pattern, repl, text, flags=re.IGNORECASE)
    # "St." before a capitalised name is Saint; after a street name it is Street.
    text = re.sub(r"\bSt\.?(?=\s+[A-Z])", "Saint", text)
    text = re.sub(r"(?<=[A-Za-z] )St\b\.?", "Street", text)
    text = re.sub(r"(?<=[A-Za-z] )Rd\b\.?", "Road", text)
    # "Dr." after a capitalised street name and not before a name is Drive (Elm Dr.); the
    # Whisper normaliser reads every other "Dr" as doctor (Dr. Smith, call the Dr.).
    text = re.sub(r"\b([A-Z][a-z]+) Dr\b\.?(?!\s*[A-Z])", r"\1 Drive", text)
    # "O.K." would reach the number parser as "o k", the o a zero.
    text = re.sub(r"\bO\.\s?K\b\.?", "okay", text)
    # Abbreviated weekdays: "Mon.-Fri." → "Monday to Friday".
    text = re.sub(rf"\b({_WEEKDAY})\b\.?(?=\s*-\s*(?:{_WEEKDAY})\b)\s*-\s*", r"\1 to ", text)
    text = re.sub(rf"\b({_WEEKDAY})\b\.?", _weekday, text)
    # Dotted initialisms lose their dots (Ph.D. → PhD), so they match the letters read out.
    text = re.sub(r"\b(?:[A-Za-z]{1,2}\.){2,}(?!\w)", lambda m: m.group(0).replace(".", ""),
                  text)
    text = re.sub(r"\b(" + "|".join(tables.MONTH_ABBR) + r")\.?(?=\s+\d)",
                  lambda m: tables.MONTH_ABBR[m.group(1).lower()], text, flags=re.IGNORECASE)
    text = _UNIT_RX.sub(lambda m: " " + _UNIT_MAP[m.group(1).lower()], text)
    for rx, name in _LETTER_UNIT_RX:
        text = rx.sub(name, text)
    return text


_PLURAL_RX = re.compile(
    r"(?<![\w.])(\d+(?:\.\d+)?|" + "|".join((*tables.NUMBER_WORDS[1:-1], "thousand", "million"))
    + r")[\s-]+(" + "|".join(sorted(tables.UNIT_PLURALS, key=len, reverse=True))
    + r")\b(?!['-]\w)(?!\s+hours?\b)", re.IGNORECASE)


def _unit_plurals(text: str) -> str:
    text = _PLURAL_RX.sub(lambda m: f"{m[1]} {tables.UNIT_PLURALS[m[2].lower()]}", text)
    # "second" after any other number word is an ordinal ("twenty second" is 22nd); the
    # Whisper normaliser makes "one second" 12nd.
    return re.sub(r"(?<![\w.-])(?<!ty )(?<!ty-)(\d+(?:\.\d+)?|one)[\s-]+second\b(?!['-]\w)",
                  r"\1 seconds", text, flags=re.IGNORECASE)


def _protect_o(text: str) -> str:
    def repl(m: re.Match[str]) -> str:
        before, after = text[: m.start()], text[m.end() :]
        if (_NUM_BEFORE.search(before) or _NUM_AFTER.match(after)
                or re.search(r"(?<![\w'])[A-Za-z][\s.-]*$", before)
                or re.match(r"[\s.-]*(?![aI]\b)[A-Za-z](?![\w'])", after)):
            return m.group(0)  # a zero ("6 O 1") or a spelled letter ("S O S")
        return _OH_MARK

    return re.sub(r"(?<![\w'.-])[Oo](?![\w'.-])", repl, text)


PRE_RULES: tuple[Rule, ...] = (
    Rule(
        "unicode",
        "NFKC-fold the text; invisible format characters (zero-width space and joiners, "
        "soft hyphen, BOM, direction marks: Unicode category Cf) and other control "
        "characters are removed; curly quotes and primes become straight ones; vulgar "
        "fractions (½) become 1/2 (1½ → 1 1/2); dashes and non-breaking spaces become "
        "plain spaces, a dash between digits or weekdays (Mon–Fri) a hyphen.",
        _chain(
            _sub(r"(?<=\d)(?=[\u00bc-\u00be\u2150-\u215e])", " "),
            lambda s: unicodedata.normalize("NFKC", s),
            _drop_invisible,
            _sub("\u2044", "/"),
            _sub(r"[\u2018\u2019\u02bc\u2032`]", "'"),
            _sub(r"[\u201c\u201d]", '"'),
            _sub(r"(?<=\d)[\u2013\u2014](?=\d)", " to "),
            _sub(rf"\b({_WEEKDAY})(\.?)\s?[\u2013\u2014]\s?(?=(?:{_WEEKDAY})\b)", r"\1\2-"),
            _sub(r"[\u2013\u2014\u2212]", " "),
        ),
    ),
    Rule(
        "fillers",
        "The hesitations 'er', 'erm', 'ehm' and 'uhm' are dropped, as the Whisper normaliser "
        "drops 'um', 'uh' and 'hmm' (Whisper leaves them out of what it hears); 'ER' in "
        "capitals (the emergency room) is kept.",
        _sub(r"\b(?:[Ee]rm?|[Ee]hm|[Uu]hm)\b(?!['-]\w)", " "),
    ),
    Rule(
        "addresses",
        "E-mail and web addresses are read out: '.' → dot, '/' → slash, '@' → at, '-' → dash, "
        "'_' → underscore, 'https://' → 'https colon slash slash'.",
        _speak_addresses,
    ),
    Rule(
        "brackets",
        "Brackets become spaces, so bracketed words are kept (Whisper's normaliser would "
        "drop them as non-speech annotations, but a script's parentheses are read aloud).",
        _sub(r"[()\[\]{}<>]", " "),
    ),
    Rule(
        "iso_dates",
        "ISO dates YYYY-MM-DD are written as 'month Nth YYYY'.",
        _sub(r"\b(\d{4})-(\d{2})-(\d{2})\b", _iso_date),
    ),
    Rule(
        "oclock",
        "\"o'clock\" and \"o clock\" are dropped: a written 9:00 is read 'nine' as often as "
        "'nine o'clock', and the two readings agree.",
        _sub(r"\bo'?\s?clock\b", " ", re.IGNORECASE),
    ),
    Rule("dotted_times", "H.MM is a clock time (7.05 → 7:05) after at, by, from, until, till, "
         "before, after, around or between, before am/pm, and as a range's second end; not "
         "before a unit, % or a currency word (at 7.05 kg).", _dotted_times),
    Rule(
        "clock_times",
        "Clock times H:MM become H followed by MM as one number (10:30 → 1030, like 'ten "
        "thirty', also before a glued am/pm: 7:05am); H:00 becomes H ('nine', with or "
        "without o'clock). Seconds are dropped.",
        _sub(r"\b(\d{1,2}):([0-5]\d)(?::[0-5]\d)?(?!\d)", _clock),
    ),
    Rule(
        "roman_numerals",
        "A Roman numeral of I, V and X from II to XXXIX after a capitalised word is a number "
        "(World War II → World War 2, Chapter IV → Chapter 4); after a regnal name (Henry, "
        "Elizabeth, Louis, ...) an ordinal with 'the' (Henry VIII → Henry the 8th, as read).",
        _sub(r"\b([A-Z][a-z]+) ([IVX]{2,6})\b(?!['.]?\w)", _roman),
    ),
    Rule("money_written", "'$18 and $0.50' (Whisper's) → $18.50; $5k, £1.5m, $2bn → thousand, "
         "million, billion ('bn' after any number); £0.40 and 40p → 40 pence.", _money_written),
    Rule("currency_signs", "Signs the Whisper normaliser drops (₹ ¥ ₩ ₽ ₺ ...) and 'Rs' are read "
         "after the amount and its magnitude: ₹250 → 250 rupees, ₹4.2 crore and '4.2 rupees "
         "crore' → 4.2 crore rupees.", _currency_signs),
    Rule(
        "abbreviations",
        "Written abbreviations are expanded: e.g. → for example, i.e. → that is, etc. → "
        "et cetera, vs. → versus, No./# before a number → number, & → and, Ave./Blvd./Rd. "
        "→ avenue/boulevard/road, St. → Saint before a name and Street after one, e-mail → "
        "email, abbreviated months before a day (Jan. 5 → January 5), abbreviated weekdays "
        "(Mon. to Fri.; Wed, Sat, Sun only where a day fits: beside a weekday, before a "
        "date, after 'on', 'every', ...), and units "
        "after a number (km, kg, mph, lbs, °C, GB, min, hrs, tsp, m, L, W, 's' after a "
        "space, 'in.' with its stop, ...) → their spoken names.",
        _abbreviations,
    ),
    Rule("unit_plurals", "A singular unit or currency word after a number becomes plural "
         "('one minute', 'a 40-watt bulb' agree with '1 min', '40 W'); 'second' only after a "
         "digit or a lone 'one' ('twenty second' is 22nd).", _unit_plurals),
    Rule(
        "fractions",
        "Common fractions 1/2, 1/3, 2/3, 1/4, 3/4 are spelled out (one half, ...); a whole "
        "number and a half (1 1/2) becomes N.5, as the Whisper normaliser writes 'one and a "
        "half'.",
        _chain(
            _sub(r"(?<![\d/.,])(\d+) 1/2(?![\d/])", r"\1.5"),
            _sub(r"(?<![\d/])([123])/([234])(?![\d/])",
                 lambda m: tables.FRACTIONS.get(m.group(0), m.group(0))),
        ),
    ),
    Rule(
        "versions",
        "Version strings (two or more dots between numbers, optional 'v') are read with "
        "'point': v2.3.1 → version 2 point 3 point 1; 'dot' between numbers becomes 'point'.",
        _chain(
            _sub(r"\bv(?=\d+\.\d)", "version ", re.IGNORECASE),
            _sub(r"\b\d+(?:\.\d+){2,}\b", _version),
            _sub(rf"\b({_NUM})\s+dot\s+(?={_NUM}\b)", r"\1 point ", re.IGNORECASE),
        ),
    ),
    Rule(
        "leading_zeros",
        "Digit strings that start with 0 are spelled digit by digit (0134 → zero one three "
        "four), so the zero survives the number parser as it does when spoken.",
        _sub(r"(?<![\d.,])(0\d+)\b", _leading_zero),
    ),
    Rule(
        "interjection_oh",
        "'oh' that is not next to a number is kept as the word 'oh' (Whisper's number "
        "parser would read every 'oh' as a zero); 'oh' between digits still means zero.",
        _protect_oh,
    ),
    Rule("interjection_o", "An 'O' standing alone (Whisper's 'O great') is protected as 'oh' "
         "too; next to a number (6 O 1) or a spelled letter (S O S) it stays a zero.",
         _protect_o),
    Rule(
        "percent",
        "'per cent' becomes 'percent'; a space before % is removed.",
        _chain(_sub(r"\bper\s+cent\b", "percent", re.IGNORECASE), _sub(r"(?<=\d)\s+%", "%")),
    ),
    Rule(
        "number_signs",
        "Signs between or before numbers are read: a range of two short numbers written with "
        "a hyphen ('10-20', not a chain such as 7-19-23 or a code such as 555-1234) → "
        "'10 to 20'; a minus sign before a number ('-5') → 'minus 5'; '+' and '=' between "
        "numbers → 'plus' and 'equals'.",
        _chain(
            _sub(r"(?<![\w.-])(\d{1,3})-(\d{1,3})(?![\w-]|\.\d)", r"\1 to \2"),
            _sub(r"(?<![\w.-])-(?=\d)", "minus "),
            _sub(r"(?<=\d)\s*\+\s*(?=\d)", " plus "),
            _sub(r"(?<=\d)\s*=\s*(?=\d)", " equals "),
        ),
    ),
)


# --------------------------------------------------------------------------- post-rules


def _money(text: str) -> str:
    text = re.sub(r"£(\d+) (?:and )?(\d{1,2}) pence\b", lambda m: f"£{m[1]}.{int(m[2]):02d}",
                  text)
    text = re.sub(r"([$£€])(\d+) (\d{2})\b", r"\1\2.\3", text)
    return re.sub(r"([$£€])(\d+)\.00\b", r"\1\2", text)


def _dates(text: str) -> str:
    day = r"(\d{1,2})(?:st|nd|rd|th)?"

    def fmt(month: str, d: str) -> str:
        n = int(d)
        return f"{month} {_ordinal(n)}" if 1 <= n <= 31 else f"{month} {d}"

    text = re.sub(
        rf"\b(?:the )?{day} (?:of )?({_MONTH_RE})\b",
        lambda m: fmt(m.group(2), m.group(1)),
        text,
    )
    return re.sub(
        rf"\b({_MONTH_RE}) (?:the )?{day}\b(?!\d)",
        lambda m: fmt(m.group(1), m.group(2)),
        text,
    )


def _join_digits(text: str) -> str:
    return re.sub(r"(?<!\S)\d+(?: \d+)+(?!\S)", lambda m: m.group(0).replace(" ", ""), text)


def _letter_runs(text: str) -> str:
    return re.sub(r"(?<!\S)[a-z](?: [a-z])+(?!\S)", lambda m: m.group(0).replace(" ", ""), text)


_HAS_CONTENT = re.compile(r"[^\W_]|[$%]")


POST_RULES: tuple[Rule, ...] = (
    Rule(
        "interjection_oh_restore",
        "The protected interjection (see the pre-rule 'interjection_oh') is written 'oh' again.",
        _sub(rf"\b{_OH_MARK}\b", "oh"),
    ),
    Rule(
        "one",
        "Whisper's normaliser writes a lone 1 as 'one'; every 'one' becomes '1' so that "
        "digit groups can be joined ('one 2 3' and '123' agree).",
        _sub(r"\bone(s?)\b", r"1\1"),
    ),
    Rule(
        "money",
        "Amounts spoken with the cents apart ('three dollars fifty' → '$3 50') are joined "
        "('$3.50'), and pounds with their pence ('£12 and 40 pence' → '£12.40'); whole "
        "amounts drop '.00' ('$3.00' → '$3').",
        _money,
    ),
    Rule(
        "dates",
        "A day next to a month becomes 'month Nth' whatever the order or wording: '12 march', "
        "'the 12th of march', 'march the twelfth', 'march 12' → 'march 12th'.",
        _dates,
    ),
    Rule(
        "half",
        "'a/one half', 'a/one quarter' and 'half a/an' lose the article ('half a cup', 'a "
        "half cup' → 'half cup'); 'N and a half' after a digit → N.5.",
        _chain(
            _sub(r"(?<![\d.])(\d+) and a half\b", r"\1.5"),
            _sub(r"\b(?:a|an|1) (half|quarter)\b", r"\1"),
            _sub(r"\bhalf an?\b", "half"),
        ),
    ),
    Rule(
        "join_digits",
        "Neighbouring digit groups are joined into one number ('555 0134' → '5550134', "
        "'10 30' → '1030', '24 7' → '247'), as Whisper's normaliser already does for spoken "
        "digit sequences ('five five five ...', 'ten thirty').",
        _join_digits,
    ),
    Rule(
        "letter_runs",
        "Runs of two or more single letters are joined into one token ('w w w' → 'www', "
        "'b a 249' → 'ba 249', 'a m' → 'am'), so spelled-out letters match acronyms.",
        _letter_runs,
    ),
    Rule(
        "zero_decimals",
        "A number whose decimals are all zeros loses them ('2.0' → '2'), as the Whisper "
        "normaliser already writes a script's '2.0': 'two point zero' and 'two point oh' "
        "agree with it (a version such as '2.0.1' keeps its parts).",
        _sub(r"(?<![\d.])(\d+)\.0+(?![\d.])", r"\1"),
    ),
    Rule(
        "lone_marks",
        "A token with no letter, digit, $ or % is dropped: Whisper's normaliser leaves a lone "
        "'.' for a final '...' or '…', which counted as a word the reader never said.",
        lambda s: " ".join(w for w in s.split() if _HAS_CONTENT.search(w)),
    ),
    Rule(
        "variants",
        "A few spelling variants agree: ok → okay, cannot → can not, alright → all right, "
        "till/til → until, roubles → rubles, liras/lire → lira, a free-standing 'percent' "
        "→ %.",
        lambda s: " ".join(tables.VARIANTS.get(w, w) for w in s.split()),
    ),
)


@lru_cache(maxsize=1)
def _whisper_normalizer() -> Callable[[str], Any]:
    english = require("whisper_normalizer.english", "WER text normalisation", "probes",
                      package="whisper-normalizer")
    normalizer = english.EnglishTextNormalizer()
    numbers = normalizer.standardize_numbers
    # Its number step ends by writing every lone 1 as "one", also the 1 of "2.1", "$1" and
    # "1%", which then read as "2 one", "one" and "one": with our 'one' rule, "2.1" became
    # "21" and "$1" a bare 1, so "twenty-one" passed for "2.1". A "one" glued to a decimal
    # point, a currency sign or % can only come from that rewrite: it is a 1 again.
    normalizer.standardize_numbers = lambda text: _GLUED_ONE.sub("1", numbers(text))
    return normalizer  # type: ignore[no-any-return]


_GLUED_ONE = re.compile(r"(?<=[.$¢€£])one(?![a-z])|(?<![a-z])one(?=[.%]\d|%)")


def normalize(text: str) -> str:
    """Canonical form of ``text`` for WER: lower case, words separated by single spaces."""
    if not isinstance(text, str):
        raise ConfigError(f"normalize() needs a str, got {type(text).__name__}")
    for rule in PRE_RULES:
        text = rule(text)
    text = str(_whisper_normalizer()(text))
    for rule in POST_RULES:
        text = rule(text)
    return " ".join(text.split())


def align(reference: str, hypothesis: str) -> tuple[WerResult, tuple[WordOp, ...]]:
    """The word errors of :func:`word_errors` and the alignment they were counted on: both
    texts normalised once, one :func:`jiwer.process_words` call, its alignment as
    :class:`WordOp` steps in reference order (the counts are the alignment's, so a report that
    marks the differing words marks exactly the errors the WER counted; an inserted number
    counts one insertion per digit).

    Raises :class:`ConfigError` when the reference is empty after normalisation. An empty
    hypothesis gives WER 1.0: one "delete" step holding every reference word.
    """
    ref = normalize(reference)
    hyp = normalize(hypothesis)
    if not ref:
        raise ConfigError(
            f"reference {reference!r} has no words after normalisation; WER needs a script "
            "with at least one word"
        )
    jiwer = require("jiwer", "WER", "probes", package="jiwer")
    ref_words = tuple(ref.split())
    n_ref = len(ref_words)
    if not hyp:
        return (WerResult(1.0, 0, n_ref, 0, 0, n_ref, ref, hyp),
                (WordOp("delete", ref_words, ()),))
    out = jiwer.process_words(ref, hyp)
    hyp_words = tuple(hyp.split())
    ops = tuple(WordOp(c.type, ref_words[c.ref_start_idx:c.ref_end_idx],
                       hyp_words[c.hyp_start_idx:c.hyp_end_idx]) for c in out.alignments[0])
    # An inserted number counts one word per digit: the normaliser joins digits spoken one
    # by one into one token ("one two ... nine" → 123456789), and nine words of padding must
    # not cost one word of the allowance.
    padding = sum(len(w) - 1 for op in ops if op.op == "insert" for w in op.hyp
                  if w.isdigit())
    insertions = out.insertions + padding
    errors = out.substitutions + out.deletions + insertions
    return WerResult(
        wer=errors / n_ref,
        substitutions=out.substitutions,
        deletions=out.deletions,
        insertions=insertions,
        hits=out.hits,
        reference_words=n_ref,
        reference_norm=ref,
        hypothesis_norm=hyp,
    ), ops


def word_errors(reference: str, hypothesis: str) -> WerResult:
    """Normalise both texts and count word errors with :mod:`jiwer`.

    Raises :class:`ConfigError` when the reference is empty after normalisation (WER is
    undefined without reference words). An empty hypothesis gives WER 1.0 (all deletions).
    """
    return align(reference, hypothesis)[0]


def wer(reference: str, hypothesis: str) -> float:
    """Word error rate (fraction, ≥ 0) of ``hypothesis`` against ``reference``, normalised."""
    return word_errors(reference, hypothesis).wer
