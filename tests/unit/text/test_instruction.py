"""parse_instruction, find_contradictions and trait_mentions: tables and held-out accuracy."""

from __future__ import annotations

import json
from collections import Counter

import pytest

from repo_paths import DATA
from vocencebench.instruction import (
    find_contradictions,
    nearest_age,
    parse_instruction,
    trait_mentions,
    words_to_number,
)
from vocencebench.traits import TRAITS, Trait, TraitRegistry

HELDOUT = DATA / "heldout_instructions.jsonl"


def _heldout() -> list[dict[str, object]]:
    return [json.loads(line) for line in HELDOUT.read_text(encoding="utf-8").splitlines()
            if line.strip()]


def test_heldout_accuracy_per_trait_at_least_95_percent() -> None:
    rows = _heldout()
    assert len(rows) >= 60
    right: Counter[str] = Counter()
    for row in rows:
        want = row["traits"]
        assert isinstance(want, dict) and set(want) == set(TRAITS.names())
        got = parse_instruction(str(row["instruction"]))
        for trait, value in want.items():
            right[trait] += got.get(trait) == value
    accuracy = {t: right[t] / len(rows) for t in TRAITS.names()}
    assert min(accuracy.values()) >= 0.95, accuracy


def test_heldout_instructions_are_not_in_the_corpus() -> None:
    from vocencebench.corpus import load_benchmark

    shipped = {it.instruction for it in load_benchmark()}
    assert not shipped & {str(r["instruction"]) for r in _heldout()}


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("speak at a low volume", {"loudness": "quiet"}),
        ("a low-pitched voice", {"pitch": "low"}),
        ("a deep voice, at high volume", {"pitch": "low", "loudness": "loud"}),
        ("at a moderate pace", {"pace": "moderate"}),
        ("with a moderate pitch", {"pitch": "medium"}),
        ("moderate volume", {"loudness": "normal"}),
        ("Pace: fast. Pitch: high. Volume: low.", {"pace": "fast", "pitch": "high",
                                                    "loudness": "quiet"}),
        ("slow and steady", {"pace": "slow"}),
        ("pitched low, speaking moderately", {"pitch": "low", "pace": "moderate"}),
        ("moderately loud", {"loudness": "normal"}),
        ("a neutral American accent", {"accent": "American"}),
        ("an Indian English accent", {"accent": "Indian"}),
        ("an English gentleman", {"accent": "British", "gender": "male"}),
        ("calm, with a soothing tone", {"emotion": "calm", "tone": "soothing"}),
        ("sad yet forcing a cheerful tone", {"emotion": "sad", "tone": "cheerful"}),
        ("keeping her delivery scrupulously proper", {"tone": "formal", "gender": "female"}),
        ("reassuring a friend with a warm delivery", {"tone": "warm"}),
        ("a mother talking to her son", {"gender": "female"}),
        ("lost with her little brother, the girl", {"gender": "female"}),
        ("make him sound happy", {"gender": "male", "emotion": "happy"}),
        ("neither high nor low in pitch", {"pitch": "medium"}),
        ("at the top of her lungs", {"loudness": "loud", "gender": "female"}),
        ("a man from Toronto", {"accent": "Canadian", "gender": "male"}),
        ("a man from Toronto with a British accent", {"accent": "British", "gender": "male"}),
        ("Deliver this U.S. style", {"accent": "American"}),
        ("tell us about it", {}),
    ],
)
def test_context_rules(text: str, expected: dict[str, str]) -> None:
    got = parse_instruction(text)
    assert got == expected


@pytest.mark.parametrize(
    ("text", "age"),
    [
        ("an 8-year-old boy", "8"),
        ("a thirteen-year-old girl", "13"),
        ("seventy-eight years old", "78"),
        ("aged 13", "13"),
        ("a man of 45", "45"),
        ("a woman, sixty, ...", "60"),
        ("in his late seventies", "78"),
        ("a woman in her mid-forties", "45"),
        ("in her sixties", "60"),
        ("in his early thirties", "30"),
        ("late teens", "20"),
        ("in his 70s", "78"),
        ("a teenager", "13"),
        ("a middle-aged man", "45"),
        ("a 25-year-old", "20"),  # a tie goes to the younger
        ("At seventy-eight, this man", "78"),
        ("forty-something", "45"),
    ],
)
def test_ages(text: str, age: str) -> None:
    assert parse_instruction(text).get("age") == age


def test_numbers_and_nearest_age() -> None:
    assert words_to_number("seventy eight") == 78
    assert words_to_number("thirteen") == 13
    assert words_to_number("forty-five") == 45
    assert words_to_number("78") == 78
    assert words_to_number("purple") is None
    assert nearest_age(70, TRAITS.get("age").values) == "78"
    assert nearest_age(52, TRAITS.get("age").values) == "45"


def test_contradictions() -> None:
    traits = {"loudness": "quiet", "pitch": "low", "age": "78", "gender": "female"}
    assert find_contradictions("a quiet, low-pitched woman of 78", traits) == []
    found = find_contradictions("a loud, low-pitched woman of 60, speaking quietly", traits)
    assert {(c.trait, c.found) for c in found} == {("loudness", "loud"), ("age", "60")}
    assert find_contradictions("a man", traits)[0].found == "male"


@pytest.mark.parametrize(
    ("script", "traits"),
    [
        ("I am 8 years old today!", ["age"]),
        ("When I was a thirteen-year-old, I ran.", ["age"]),
        ("Now that I'm in my forties, I rest.", ["age"]),
        ("Happy birthday, Sam!", ["emotion"]),
        ("Speak up, the volume is too low.", ["loudness"]),
        ("That was loud.", ["loudness"]),
        ("Go slow near the school.", ["pace"]),
        ("What a high-pitched squeal.", ["pitch"]),
        ("We flew to India in June.", ["accent"]),
        ("The woman at the desk waved.", ["gender"]),
        ("I'm so scared.", ["emotion"]),
        ("Keep it warm for me.", ["tone"]),
    ],
)
def test_trait_mentions_flags(script: str, traits: list[str]) -> None:
    assert [t for t, _ in trait_mentions(script)] == traits


@pytest.mark.parametrize(
    "script",
    [
        "On 14 March 2024 at 9:45 we paid $3,482.50, 12.5% more than in 2023.",
        "Six slick sheep slid swiftly past Sally's shiny shed.",
        "Visiting hours end at eight, so sign out at the front desk.",
        "My mum said he can come with us, and she will drive.",
        "Leave a voice message after the beep.",
        "The thirty-three thieves thought that they thrilled the throne.",
    ],
)
def test_trait_mentions_allows(script: str) -> None:
    assert trait_mentions(script) == []


def test_user_trait_and_values_are_read_from_the_registry() -> None:
    reg = TRAITS.copy()
    reg.register(Trait("breathiness", "holistic", "rubric", ("breathy", "clear"),
                       "How much air is in the voice.", synonyms={"breathy": ("airy",)}))
    got = parse_instruction("An airy, quiet voice", registry=reg)
    assert got["breathiness"] == "breathy" and got["loudness"] == "quiet"
    assert parse_instruction("a clear voice", registry=reg)["breathiness"] == "clear"
    assert ("breathiness", "airy") in trait_mentions("So airy in here.", registry=reg)

    accents = TraitRegistry([
        Trait("accent", "objective", "categorical", ("American", "Irish"), "Accent.",
              synonyms={"Irish": ("Dubliner",)}),
    ])
    assert parse_instruction("an Irish accent", registry=accents) == {"accent": "Irish"}
    assert parse_instruction("a Dubliner", registry=accents) == {"accent": "Irish"}
    assert parse_instruction("a British accent", registry=accents) == {}


def test_spec_style_briefs() -> None:
    got = parse_instruction(
        "I need a voice for a 70-year-old Canadian man who is speaking in a quiet, low-pitched "
        "rumble. He should sound undeniably sad and speak quite slowly, yet maintain a "
        "remarkably warm tone despite his heartache."
    )
    assert got == {"gender": "male", "age": "78", "pace": "slow", "pitch": "low",
                   "loudness": "quiet", "emotion": "sad", "accent": "Canadian", "tone": "warm"}
    got = parse_instruction(
        "Generate a voice for a playful twenty-year-old woman with an Indian accent who is "
        "loudly expressing her surprise. Her voice should have a high pitch and maintain a "
        "steady, moderate pacing."
    )
    assert got == {"gender": "female", "age": "20", "pace": "moderate", "pitch": "high",
                   "loudness": "loud", "emotion": "surprised", "accent": "Indian",
                   "tone": "playful"}
