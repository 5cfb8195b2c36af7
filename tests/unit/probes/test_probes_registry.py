"""The acoustic probes score d against the trait registry they are given, and a ProbeSet hands
its own registry to its probes, through to a benchmark run's scores."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

import vocencebench as vb
from vocencebench.audio import Audio, load_audio
from vocencebench.decide import desirability
from vocencebench.errors import ConfigError
from vocencebench.probes.acoustic import GenderHeuristicProbe, LoudnessProbe, PaceProbe, PitchProbe
from vocencebench.schema import Item, ProbeResult
from vocencebench.traits import TRAITS, Trait, TraitRegistry
from vocencebench.tts import EspeakSettings, render_many

TEXT = "Everyone stay right behind me, the water's rising but we'll reach the bridge in time."
REQUEST = {"gender": "male", "age": "30", "pace": "moderate", "pitch": "medium",
           "loudness": "normal", "emotion": "neutral", "accent": "American", "tone": "calm"}
ORDINAL = ("pitch", "pace", "loudness")


def _item(**traits: str) -> Item:
    return Item(id="r-1", instruction="test", text=TEXT, traits={**REQUEST, **traits},
                difficulty=1)


def _with(trait: Trait) -> TraitRegistry:
    """TRAITS with ``trait`` in place of the trait of that name."""
    return TraitRegistry(trait if t.name == trait.name else t for t in TRAITS)


def _categorical(name: str) -> TraitRegistry:
    """TRAITS whose ordinal ``name`` is categorical: an adjacent bucket scores 0, not 0.5."""
    return _with(dataclasses.replace(TRAITS.get(name), scoring="categorical"))


def _adjacent(name: str, label: str) -> str:
    values = TRAITS.get(name).values
    k = values.index(label)
    return values[k + 1] if k + 1 < len(values) else values[k - 1]


@pytest.fixture(scope="module")
def clip() -> Audio:
    (wav,) = render_many([(TEXT, EspeakSettings())], workers=1)
    return load_audio(wav, name="espeak")


@pytest.mark.parametrize(("probe_cls", "name"), [(PitchProbe, "pitch"), (PaceProbe, "pace"),
                                                 (LoudnessProbe, "loudness")])
def test_an_acoustic_probe_scores_against_the_registry_it_is_given(
        clip: Audio, probe_cls: Any, name: str) -> None:
    label = probe_cls().measure(clip, _item())[name].label
    item = _item(**{name: _adjacent(name, label)})  # one bucket away from what it measured
    default = probe_cls().measure(clip, item)[name]
    custom = probe_cls(registry=_categorical(name)).measure(clip, item)[name]
    assert default.label == custom.label == label
    assert default.d == 0.5 == desirability(name, label, item.traits[name])
    assert custom.d == 0.0  # the same measurement, scored by the registry given
    assert custom.value == default.value and custom.detail == default.detail
    assert repr(probe_cls(registry=_categorical(name))) == repr(probe_cls())  # same probe id


def test_the_gender_heuristic_reads_its_registry_values(clip: Audio) -> None:
    renamed = _with(dataclasses.replace(TRAITS.get("gender"), values=("man", "woman")))
    assert GenderHeuristicProbe().measure(clip, _item())["gender"].d in (0.0, 1.0)
    with pytest.raises(ConfigError, match="is not a value of trait 'gender'"):
        GenderHeuristicProbe(registry=renamed).measure(clip, _item(gender="man"))


def test_a_probe_set_hands_its_registry_to_its_probes(clip: Audio) -> None:
    reg = _categorical("pitch")
    pitch = PitchProbe()
    ps = vb.ProbeSet([pitch, PaceProbe()], registry=reg)
    assert ps.probes[0] is not pitch and ps.probes[0].registry is reg  # type: ignore[attr-defined]
    assert pitch.registry is TRAITS  # the caller's probe is never changed
    assert ps.probes[1].registry is TRAITS  # type: ignore[attr-defined]  # pace is the same
    label = pitch.measure(clip, _item())["pitch"].label
    item = _item(pitch=_adjacent("pitch", label))
    assert ps.measure(clip, item)["pitch"].d == 0.0
    assert vb.ProbeSet([pitch]).measure(clip, item)["pitch"].d == 0.5
    # A registry that defines the probe's traits as TRAITS does keeps the probe as it is.
    extended = TRAITS.copy()
    extended.register(Trait("breathiness", "objective", "ordinal", ("clear", "breathy"), "x"))
    assert vb.ProbeSet([pitch], registry=extended).probes[0] is pitch


def test_a_probe_that_cannot_be_remade_on_the_sets_registry_is_refused() -> None:
    class Loaded:  # like a classifier: built (and loaded) on a registry of its own
        name, version, traits = "loaded", "1", ("pitch",)
        registry = TRAITS

        def measure(self, audio: Any, item: Item) -> dict[str, ProbeResult]:
            raise AssertionError

    with pytest.raises(ConfigError, match="loaded@1 was built on a trait registry that "
                                          "defines pitch differently"):
        vb.ProbeSet([Loaded()], registry=_categorical("pitch"))
    assert vb.ProbeSet([Loaded()], registry=TRAITS.copy()).probes  # same definitions: kept


def test_a_run_scores_the_acoustic_probes_against_the_run_registry() -> None:
    reg = _categorical("pitch")
    items = vb.load_benchmark("benchmark_v1")[4:7]  # the last: flat reads medium for high
    h = vb.benchmark(items, vb.EspeakSystem("espeak-flat"), vb.EspeakSystem("espeak-follow"),
                     probes=vb.ProbeSet([PitchProbe()], registry=reg), labels=("flat", "follow"),
                     workers=1, progress=False, canaries=False)
    assert h.registry is reg
    adjacent = 0
    for p in h.pairs:
        for an, score in ((p.analysis_a, p.a), (p.analysis_b, p.b)):
            r = an.probes["pitch"]
            assert score.d["pitch"] == r.d == desirability(
                "pitch", r.label, p.item.traits["pitch"], registry=reg)
            adjacent += desirability("pitch", r.label, p.item.traits["pitch"]) == 0.5
    assert adjacent >= 1  # a side TRAITS would score 0.5 scored 0 against the run's registry


def test_a_shared_cache_never_hands_one_registrys_d_to_another(tmp_path: Any) -> None:
    """The probe part of the cache is keyed on the registry's definitions too: the same probe
    ids scored against another registry are measured again, not read back."""
    reg = _categorical("pitch")
    items = vb.load_benchmark("benchmark_v1")[4:7]
    cache = vb.Cache(tmp_path / "cache.sqlite")
    runs = {}
    for name, registry in (("default", TRAITS), ("categorical", reg), ("again", TRAITS)):
        runs[name] = vb.benchmark(items, vb.EspeakSystem("espeak-flat"),
                                  vb.EspeakSystem("espeak-follow"),
                                  probes=vb.ProbeSet([PitchProbe()], registry=registry),
                                  labels=("flat", "follow"), workers=1, progress=False,
                                  canaries=False, cache=cache)
    for p in runs["categorical"].pairs:
        for an in (p.analysis_a, p.analysis_b):
            r = an.probes["pitch"]
            assert r.d == desirability("pitch", r.label, p.item.traits["pitch"], registry=reg)
    d = {k: [(p.a.d["pitch"], p.b.d["pitch"]) for p in h.pairs] for k, h in runs.items()}
    assert d["default"] == d["again"] != d["categorical"]
