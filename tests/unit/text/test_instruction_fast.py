"""The brief reader's shortcuts find exactly what a scan of every rule finds (issue 25).

``vocencebench corpus check`` got fast (benchmarks/bench_corpus_check.py) by not scanning a
rule where it cannot match: a rule is tried only when the text holds one of its trigger
words, literal starts and gates, and then only at the positions where those start
(``instruction._claim``); ``normalise`` is cached and done with ``str.translate`` for ASCII.
Here the same claims are computed the old way — every rule's pattern over the whole text —
for every brief and script of the shipped corpus and for thousands of seeded random texts
made of the lexicon's own words, hyphens, apostrophes, capitals and digits, and the two must
agree exactly."""

from __future__ import annotations

import re

import pytest

from seeding import make_rng
from vocencebench import instruction as I
from vocencebench._instruction import lexicon as L
from vocencebench._instruction import words as W
from vocencebench.corpus import load_benchmark
from vocencebench.traits import TRAITS


def _reference_normalise(text: str) -> tuple[str, str]:
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


def _reference_claim(text: str, entries: list[L.Entry], *, script_only: bool = False
                     ) -> list[tuple[str, str | None, I.Mention]]:
    """The claiming algorithm with every rule scanned over the whole text."""
    low, keep = _reference_normalise(text)
    cands = []
    for ent in entries:
        if script_only and not ent.script and ent.value is not None:
            continue
        for m in ent.pattern.finditer(keep if ent.case_sensitive else low):
            if m.end() > m.start():
                cands.append((ent.priority, -(m.end() - m.start()), m.start(), ent, m))
    cands.sort(key=lambda c: (c[0], c[1], c[2]))
    taken: list[tuple[int, int]] = []
    out = []
    for _, _, _, ent, m in cands:
        a, b = m.start(), m.end()
        if any(not (b <= s or a >= t) for s, t in taken):
            continue
        taken.append((a, b))
        if ent.value is not None:
            out.append((ent.trait, ent.value,
                        I.Mention(ent.trait, ent.value, text[a:b], a, b, ent.kind)))
    out.sort(key=lambda x: x[2].start)
    return out


def _fast(text: str, entries: list[L.Entry], *, script_only: bool = False
          ) -> list[tuple[str, str | None, I.Mention]]:
    return [(e.trait, e.value, m) for e, m in I._claim(text, entries, script_only=script_only)]


def _vocabulary() -> list[str]:
    words: list[str] = []
    for table in (W.EMOTION, W.TONE, W.PACE, W.PITCH, W.LOUD, W.GENDER_NOUNS, W.ACCENT,
                  W.ACCENT_PLACES, W.TONE_WEAK):
        for ws in table.values():
            words += list(ws)
    for rx in (W.PERSON, W.PACE_NOUN, W.TONE_NOUNS):
        words += re.findall(r"[a-z]+(?: [a-z]+)?", rx)
    words += ["in", "of", "from", "a", "the", "not", "too", "neither", "nor", "and", "but",
              "voice", "pitch", "pitched", "volume", "register", "english", "accent", "tone",
              "USA", "U.S.", "U.K.", "RP", "Us", "uk", "year", "old", "aged", "78", "8",
              "forties", "mid", "late", "something", "she's", "his", "her", "o'clock",
              "slowly", "below", "follow", "x", "low-key", "high-pitched", "\u2014", ",",
              ".", ":", "'", "\"", "Voice", "SHE", "Neutral"]
    return words


def _shipped() -> list[str]:
    items = load_benchmark()
    return [it.instruction for it in items] + [it.text for it in items]


@pytest.fixture(scope="module")
def texts() -> list[str]:
    out = _shipped()
    rng = make_rng(25)
    vocab = _vocabulary()
    for _ in range(3000):
        n = int(rng.integers(1, 25))
        picks = [vocab[int(i)] for i in rng.integers(0, len(vocab), n)]
        seps = [(" ", " ", " ", ", ", "-", "  ", "'")[int(rng.integers(0, 7))] for _ in picks]
        text = "".join(w + s for w, s in zip(picks, seps, strict=True)).strip()
        if rng.random() < 0.3:
            text = text.capitalize()
        if rng.random() < 0.2:
            text = text.upper()
        out.append(text)
    return out


def test_normalise_is_the_per_character_rule() -> None:
    for t in [*_shipped(), "ΟΔΟΣ café İstanbul \u2019quoted\u2019 \u201cx\u201d a\u2014b_c"]:
        assert L.normalise(t) == _reference_normalise(t), t


def test_the_shipped_corpus_is_claimed_as_a_full_scan_claims_it() -> None:
    for entries, only in ((I._cached_entries(TRAITS), False), (I._script_entries(TRAITS), True)):
        bad = [t for t in _shipped() if _fast(t, entries, script_only=only)
               != _reference_claim(t, entries, script_only=only)]
        assert not bad, bad[:5]


@pytest.mark.slow
def test_every_brief_is_claimed_as_a_full_scan_claims_it(texts: list[str]) -> None:
    entries = I._cached_entries(TRAITS)
    bad = [t for t in texts if _fast(t, entries) != _reference_claim(t, entries)]
    assert not bad, bad[:5]


@pytest.mark.slow
def test_every_script_is_claimed_as_a_full_scan_claims_it(texts: list[str]) -> None:
    entries = I._script_entries(TRAITS)
    bad = [t for t in texts if _fast(t, entries, script_only=True)
           != _reference_claim(t, entries, script_only=True)]
    assert not bad, bad[:5]


def test_the_shortcuts_cover_almost_every_rule() -> None:
    """Not vacuous: nearly every rule is skipped where it cannot match."""
    entries = I._cached_entries(TRAITS)
    unfiltered = [e for e in entries if e.triggers is None and e.prefixes is None
                  and not e.gates]
    assert len(unfiltered) <= 2, [e.pattern.pattern[:60] for e in unfiltered]
    assert L.literal_prefixes(r"(?<![\w'])(?:speaks?|demeanou?r)\s+x") == ("demeano", "speak")
    assert L.literal_prefixes(r"(?<![\w'])(?:(?:a|b)\s+)?c") is None
    assert L.literal_gates(r"(?<![\w'])(?:in|of)\s+(?:plain\s+)?english(?![\w])") == (
        (True, ("in", "of")), (False, ("english",)))
    slow, fast = re.compile(r"(?<![\w'])(?:low|deep)\b"), L.fast_pattern(
        re.compile(r"(?<![\w'])(?:low|deep)\b"))
    assert fast.pattern != slow.pattern
    for t in ("low", "slow", "a deep low", "'low", "x-low", "below deep"):
        assert [m.span() for m in fast.finditer(t)] == [m.span() for m in slow.finditer(t)]
