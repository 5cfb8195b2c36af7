"""Syllable counting for the pace probe: spoken form, CMU dictionary, rule-based fallback."""

from __future__ import annotations

import random

import pytest

from vocencebench.errors import ConfigError
from vocencebench.probes.syllables import (
    cmu_dictionary,
    cmu_phones,
    count_syllables,
    rule_phones,
    rule_syllables,
    spoken_form,
)


@pytest.mark.parametrize(
    ("text", "spoken"),
    [
        ("It costs $3.50.", "it costs three dollars and fifty cents"),
        ("Only $1 left", "only one dollar left"),
        ("€0.99 each", "ninety nine cents each"),
        ("$2.5 million", "two point five million dollars"),
        ("Meet at 10:30.", "meet at ten thirty"),
        ("At 9:05 pm", "at nine oh five p m"),
        ("At 7:00", "at seven o'clock"),
        ("50% off", "fifty percent off"),
        ("She came 1st and 22nd", "she came first and twenty second"),
        ("In 1984 and 2024", "in nineteen eighty four and twenty twenty four"),
        ("In 2000 and 2005", "in two thousand and two thousand five"),
        ("1,200 people", "one thousand two hundred people"),
        ("3.5 km", "three point five kilometers"),
        ("105 cats", "one hundred five cats"),
        ("Visit www.example.com", "visit www dot example dot com"),
        ("Write to bob@test.org", "write to bob at test dot org"),
        ("On 2024-03-05", "on march fifth twenty twenty four"),
        ("Version v2.3.1", "version version two point three point one"),
        ("Room 0134", "room zero one three four"),
        ("e.g. this", "for example this"),
        ("Well, the piano's gone!", "well the piano's gone"),
    ],
)
def test_spoken_form(text: str, spoken: str) -> None:
    assert spoken_form(text) == spoken


@pytest.mark.parametrize(
    ("text", "syllables"),
    [
        ("the cat sat", 3),
        ("beautiful", 3),
        ("Well, the old piano's gone", 7),  # well the old pi-a-no's gone
        ("everyone", 3),
        ("I have 3 cats", 4),
        ("I have three cats", 4),
        ("www", 9),  # double-u ×3
        ("", 0),
    ],
)
def test_count_syllables(text: str, syllables: int) -> None:
    assert count_syllables(text).total == syllables


def test_written_and_spoken_numbers_agree() -> None:
    assert count_syllables("Meet me at 10:30 for $5.").total == \
        count_syllables("Meet me at ten thirty for five dollars.").total


def test_count_reports_words_and_unknowns() -> None:
    c = count_syllables("The zorblax sang.")
    assert c.words == ("the", "zorblax", "sang")
    assert c.unknown == ("zorblax",)
    assert c.per_word[1] == rule_syllables("zorblax") == 2
    assert c.total == sum(c.per_word)
    assert c.spoken == "the zorblax sang"


def test_possessive_of_known_word() -> None:
    c = count_syllables("the church's bells")
    assert c.unknown == ()
    assert c.per_word[1] == 2  # church + -es
    assert c.phones_per_word[1] == cmu_phones()["church"] + 2  # + IH Z
    dog = count_syllables("the dog's bone")
    assert dog.per_word[1] == 1 and dog.phones_per_word[1] == cmu_phones()["dog"] + 1  # + Z


def test_phones_of_a_script() -> None:
    c = count_syllables("The cat sat.")  # DH AH0 · K AE1 T · S AE1 T
    assert c.phones_per_word == (2, 3, 3) and c.phones == 8
    assert c.phones == sum(c.phones_per_word)
    z = count_syllables("The zorblax sang.")
    assert z.phones_per_word[1] == rule_phones("zorblax")
    # numbers are counted in their spoken form, like syllables
    assert count_syllables("at 10:30").phones == count_syllables("at ten thirty").phones


@pytest.mark.parametrize(
    ("word", "n"),
    [("make", 3), ("table", 5), ("knight", 3), ("church", 3), ("thought", 3), ("boxes", 6),
     ("queen", 4), ("phone", 3), ("little", 5), ("www", 21), ("a", 1)],
)
def test_rule_phones(word: str, n: int) -> None:
    assert rule_phones(word) == n


def test_rule_phones_agree_with_dictionary_on_most_words() -> None:
    d = cmu_phones()
    words = sorted(w for w in d if w.isalpha())
    sample = random.Random(3151662).sample(words, 3000)
    exact = sum(rule_phones(w) == d[w] for w in sample) / len(sample)
    close = sum(abs(rule_phones(w) - d[w]) <= 1 for w in sample) / len(sample)
    assert exact >= 0.7 and close >= 0.95  # measured 0.747 and 0.982 on this sample


@pytest.mark.parametrize(
    ("word", "n"),
    [("make", 1), ("table", 2), ("walked", 1), ("wanted", 2), ("radio", 3), ("nation", 2),
     ("boxes", 2), ("being", 2), ("video", 3), ("apple", 2), ("brrr", 4), ("a", 1)],
)
def test_rule_syllables(word: str, n: int) -> None:
    assert rule_syllables(word) == n


def test_rule_fallback_agrees_with_dictionary_on_most_words() -> None:
    d = cmu_dictionary()
    words = sorted(w for w in d if w.isalpha())
    sample = random.Random(3151662).sample(words, 3000)
    agree = sum(rule_syllables(w) == d[w] for w in sample) / len(sample)
    assert agree >= 0.85  # measured 0.89 on this sample; names make up much of the rest


def test_dictionary_loaded_from_pocketsphinx() -> None:
    d = cmu_dictionary()
    assert len(d) > 100_000
    assert d["syllable"] == 3 and d["don't"] == 1
    assert cmu_phones()["syllable"] == 7  # S IH1 L AH0 B AH0 L


def test_spoken_form_needs_str() -> None:
    with pytest.raises(ConfigError, match="needs a str"):
        spoken_form(b"bytes")  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("text", "phrases"),
    [("hello world", 1), ("Stop. Give it back, now!", 3), ("Wait... what?!", 2),
     ("It costs $3.50 at 10:30, okay?", 2),  # the number's point and the clock's colon stay
     ("Dr. Smith met Mr. Jones.", 1), ("The U.S. team won; the crowd roared.", 2),
     ("Visit www.example.com today.", 1), ("...", 0), ("", 0),
     ("Yes; no: maybe, fine.", 4), ("Well…\u00a0okay", 2)],
)
def test_phrases_of_a_script(text: str, phrases: int) -> None:
    assert count_syllables(text).phrases == phrases


def test_phrases_need_a_word_between_the_marks() -> None:
    assert count_syllables("Oh!!! ... Right?").phrases == 2
    assert count_syllables("Right, , , right").phrases == 2
