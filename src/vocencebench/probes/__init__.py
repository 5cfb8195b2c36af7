"""Deterministic probes: objective traits measured on the waveform."""

from __future__ import annotations

from typing import Unpack

from ..traits import TRAITS, TraitRegistry
from .acoustic import (
    DnsmosDiagnostic,
    GenderHeuristicProbe,
    LoudnessProbe,
    PaceProbe,
    PitchProbe,
)
from .base import BatchedProbe, Diagnostic, Probe, ProbeSet, ProbeSuite
from .classifiers import (
    CLASSIFIER_MODELS,
    AccentProbe,
    AgeGenderProbe,
    ClassifierOptions,
    EmotionProbe,
    measure_batch,
)

__all__ = [
    "CLASSIFIER_MODELS",
    "AccentProbe",
    "AgeGenderProbe",
    "BatchedProbe",
    "Diagnostic",
    "DnsmosDiagnostic",
    "EmotionProbe",
    "GenderHeuristicProbe",
    "LoudnessProbe",
    "PaceProbe",
    "PitchProbe",
    "Probe",
    "ProbeSet",
    "ProbeSuite",
    "default_probes",
    "measure_batch",
    "with_classifiers",
]


def default_probes(*, quality: bool = False, registry: TraitRegistry = TRAITS) -> ProbeSet:
    """The offline acoustic probes: pitch, pace, loudness and the F0 + spectrum gender model.

    ``quality=True`` adds the DNSMOS diagnostic (reported per clip, never scored); it is off
    by default because it costs about 0.4 s of CPU per 9 s window (1.3 s for a 3 s clip), some
    60 times the four acoustic probes together (see docs/performance.md). ``registry``: the
    traits the set scores d against (a custom one, e.g. with a trait of your own; add its
    probe with ``ProbeSet([*default_probes(registry=r).probes, MyProbe()], registry=r)``).
    """
    diagnostics = (DnsmosDiagnostic(),) if quality else ()
    return ProbeSet(
        (PitchProbe(), PaceProbe(), LoudnessProbe(), GenderHeuristicProbe()),
        diagnostics=diagnostics, registry=registry,
    )


# --- classifier probes: with_classifiers(device="auto", ...) is added here by the classifier
# --- engineer (issue 5, src/vocencebench/probes/classifiers.py); it extends default_probes().


def with_classifiers(
    device: str = "auto",
    *,
    quality: bool = False,
    registry: TraitRegistry = TRAITS,
    **options: Unpack[ClassifierOptions],
) -> ProbeSet:
    """:func:`default_probes` plus the classifier probes (age + gender, emotion, accent).

    The classifiers come after the acoustic probes, so their gender replaces the F0/F3
    heuristic. ``device="auto"`` uses CUDA when torch sees a GPU. ``models`` maps
    ``age_gender`` / ``emotion`` / ``accent`` to a local folder (or another hub id, pinned with
    ``revisions``); by default the pinned checkpoints of
    :data:`~vocencebench.probes.classifiers.CLASSIFIER_MODELS` are used. Every model loads
    here: a missing download raises ConfigError now, saying what to fetch. ``batch_size`` is
    clips per forward pass in ``measure_batch``. ``registry``: the traits every probe scores
    d against (:func:`default_probes`). Needs the ``classifiers`` extra.
    """
    from .classifiers import classifier_probes

    base = default_probes(quality=quality, registry=registry)
    extra = classifier_probes(device, registry=registry, **options)
    return ProbeSet((*base.probes, *extra), diagnostics=base.diagnostics, registry=registry)
