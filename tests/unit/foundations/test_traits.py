"""The trait registry: contents of benchmark v1, lookups, errors, and the one-place extension."""

from __future__ import annotations

import pytest

from vocencebench.constants import AGE_TOLERANCE_YEARS
from vocencebench.decide import composite, desirability
from vocencebench.errors import ConfigError
from vocencebench.metrics import confusion_matrices, control_success, win_rates
from vocencebench.traits import JUDGED_DIMENSIONS, NATURALNESS, TRAITS, Trait, TraitRegistry

EXPECTED = {
    "gender": ("objective", "categorical", ("male", "female")),
    "age": ("objective", "numeric", ("8", "13", "20", "30", "45", "60", "78")),
    "pace": ("objective", "ordinal", ("slow", "moderate", "fast")),
    "pitch": ("objective", "ordinal", ("low", "medium", "high")),
    "loudness": ("objective", "ordinal", ("quiet", "normal", "loud")),
    "emotion": (
        "objective", "categorical",
        ("neutral", "calm", "happy", "sad", "angry", "fearful", "disgust", "surprised"),
    ),
    "accent": (
        "objective", "categorical", ("American", "British", "Australian", "Indian", "Canadian"),
    ),
    "tone": (
        "holistic", "rubric",
        ("warm", "authoritative", "playful", "serious", "soothing", "cheerful", "sarcastic",
         "formal"),
    ),
}


def test_default_registry_is_the_eight_traits_and_39_values() -> None:
    assert TRAITS.names() == tuple(EXPECTED)
    assert sum(len(t.values) for t in TRAITS) == 39
    for t in TRAITS:
        kind, scoring, values = EXPECTED[t.name]
        assert (t.kind, t.scoring, t.values) == (kind, scoring, values)
        assert t.description
    assert TRAITS["age"].tolerance == AGE_TOLERANCE_YEARS == 8.0
    assert TRAITS["age"].unit == "years"
    assert [t.name for t in TRAITS.judged()] == ["tone"]
    assert JUDGED_DIMENSIONS == ("tone", NATURALNESS)
    assert TRAITS.dimensions() == (*EXPECTED, NATURALNESS)
    assert len(TRAITS.objective()) == 7


def test_unknown_trait_error_lists_every_valid_name() -> None:
    with pytest.raises(ConfigError, match="unknown trait 'timbre'") as exc:
        TRAITS.get("timbre")
    for name in EXPECTED:
        assert name in str(exc.value)
    with pytest.raises(ConfigError, match="valid: gender, age"):
        TRAITS.check_dimension("timbre")
    assert TRAITS.check_dimension(NATURALNESS) == NATURALNESS


def test_unknown_value_error_lists_the_trait_values() -> None:
    with pytest.raises(ConfigError, match="valid values: slow, moderate, fast"):
        TRAITS["pace"].check_value("brisk")
    assert TRAITS["pitch"].index("high") == 2


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"name": "Bad Name"}, "lower-case identifier"),
        ({"kind": "subjective"}, "kind"),
        ({"scoring": "fuzzy"}, "scoring"),
        ({"values": ("only",)}, "two distinct values"),
        ({"values": ("a", "a")}, "two distinct values"),
        ({"scoring": "numeric", "values": ("1", "2")}, "positive tolerance"),
        ({"scoring": "numeric", "values": ("1", "x"), "tolerance": 1.0}, "not a number"),
        ({"scoring": "rubric"}, "must be holistic"),
    ],
)
def test_trait_definition_is_validated(kwargs: dict[str, object], match: str) -> None:
    base: dict[str, object] = {
        "name": "breathiness", "kind": "objective", "scoring": "ordinal",
        "values": ("low", "high"), "description": "x",
    }
    base.update(kwargs)
    with pytest.raises(ConfigError, match=match):
        Trait(**base)  # type: ignore[arg-type]


def test_duplicates_and_reserved_names_are_refused() -> None:
    reg = TRAITS.copy()
    with pytest.raises(ConfigError, match="already registered; registered: gender"):
        reg.register(TRAITS["pace"])
    with pytest.raises(ConfigError, match="reserved"):
        reg.register(Trait(NATURALNESS, "holistic", "rubric", ("a", "b"), "x"))


def test_validate_request() -> None:
    request = {t.name: t.values[0] for t in TRAITS}
    TRAITS.validate_request(request)
    with pytest.raises(ConfigError, match="lacks traits: tone"):
        TRAITS.validate_request({k: v for k, v in request.items() if k != "tone"})
    with pytest.raises(ConfigError, match="valid values"):
        TRAITS.validate_request({**request, "gender": "robot"})


def test_ninth_trait_flows_through_scoring_and_metrics_with_no_other_change() -> None:
    """Registering one trait in a temporary registry is all it takes."""
    reg = TRAITS.copy()
    breathiness = reg.register(
        Trait("breathiness", "objective", "ordinal", ("clear", "slight", "breathy"),
              "Audible breath noise in the voice.")
    )
    assert "breathiness" not in TRAITS and len(TRAITS) == 8  # the default is untouched
    assert len(reg) == 9 and reg.dimensions()[-2:] == ("breathiness", NATURALNESS)

    # desirability reads the new trait's kind and order from the registry
    assert desirability("breathiness", "breathy", "breathy", registry=reg) == 1.0
    assert desirability("breathiness", "slight", "breathy", registry=reg) == 0.5
    assert desirability("breathiness", "clear", "breathy", registry=reg) == 0.0
    with pytest.raises(ConfigError, match="unknown trait 'breathiness'"):
        desirability("breathiness", "clear", "breathy")  # not in the default registry

    # the composite takes it as one more equal-weight dimension
    d = {name: 1.0 for name in reg.dimensions()}
    d["breathiness"] = desirability(breathiness, "slight", "clear", registry=reg)
    assert composite(d) == pytest.approx(0.5 ** (1 / 10), abs=1e-15)

    # metrics: control success, win rates and a confusion matrix appear for it
    samples = [
        {"breathiness": 1.0, "pace": 1.0},
        {"breathiness": 0.5, "pace": 1.0},
        {"breathiness": 1.0, "pace": 0.0},
    ]
    cs = control_success(samples, registry=reg)
    assert list(cs) == ["pace", "breathiness"]
    assert (cs["breathiness"].successes, cs["breathiness"].n) == (2, 3)
    wr = win_rates(samples, samples[::-1], registry=reg)
    assert wr["breathiness"].ties == 3 and wr["breathiness"].rate == 0.5
    with pytest.raises(ConfigError, match="unknown dimension 'breathiness'"):
        win_rates(samples, samples)
    cm = confusion_matrices(
        [{"breathiness": "clear"}, {"breathiness": "breathy"}],
        [{"breathiness": "slight"}, {"breathiness": "breathy"}],
        registry=reg,
    )["breathiness"]
    assert cm.rows == cm.columns == ("clear", "slight", "breathy")
    assert cm.counts == ((0, 1, 0), (0, 0, 0), (0, 0, 1))


def test_registry_copy_is_independent_and_iterable() -> None:
    reg = TraitRegistry([TRAITS["gender"], TRAITS["pace"]])
    assert reg.names() == ("gender", "pace") and "pace" in reg and "age" not in reg
    assert [t.name for t in reg.copy()] == ["gender", "pace"]
