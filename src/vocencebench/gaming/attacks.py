"""The attack catalogue: documented, deterministic transformations of an honest system.

Every attack is a TTS system (``(text, instruction) -> WAV bytes``, plus ``synthesize_item``
and, for the ones that re-render speech, ``synthesize_many``) that wraps a *base* system and
changes its output in one stated way. Its ``system_id`` names the attack, every parameter and
the base, so caches never mix two settings. Randomness (noise, room tone) comes from the raw
PCG64 stream seeded by ``seed`` and the request itself, so a clip is the same on every run.

Two families:

* **transformations** of the base's clip (numpy DSP on the decoded samples): silence, noise,
  padding, gain, hum, clipping. A request the attack does not target gets the base clip
  byte for byte (so its analysis is shared with the base's);
* **re-renderings**: the base speaks other words (the instruction, another script, the script
  plus trait words or a note to the judge) or follows another instruction (the "safe middle",
  a hedged age), and the memoriser, which picks between two systems by item id.

:data:`CATALOGUE` lists them with the defence the spec names and the instruments the defence
needs (see ``docs/gaming.md``). The families are :mod:`._signal` (transformations) and
:mod:`._rewrite` (re-renderings) over the base classes of :mod:`._base`; this module is the
catalogue and the one place their names are imported from.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Final, Literal

from ..errors import ConfigError
from ..schema import Item
from ._base import Attack, RerenderAttack, TransformAttack
from ._rewrite import (
    NOTE_TO_JUDGE,
    Memoriser,
    OtherSentenceAttack,
    RewriteAttack,
    SpeakInstructionAttack,
    SpokenNoteAttack,
    TraitWordAttack,
    describe_voice,
)
from ._signal import (
    LOW_TONE_SEMITONES,
    PACE_TARGET_PPS,
    TONE_SEMITONES,
    ClipAttack,
    GainAttack,
    HumAttack,
    NoiseAttack,
    PadAttack,
    SilenceAttack,
    SyllableNoiseAttack,
    SyllableToneAttack,
    rng_uniform,
)

__all__ = [
    "CATALOGUE",
    "INSTRUMENTS",
    "LOW_TONE_SEMITONES",
    "NOTE_TO_JUDGE",
    "PACE_TARGET_PPS",
    "TONE_SEMITONES",
    "Attack",
    "AttackSpec",
    "ClipAttack",
    "GainAttack",
    "HumAttack",
    "Memoriser",
    "NoiseAttack",
    "OtherSentenceAttack",
    "PadAttack",
    "RerenderAttack",
    "RewriteAttack",
    "SilenceAttack",
    "SpeakInstructionAttack",
    "SpokenNoteAttack",
    "SyllableNoiseAttack",
    "SyllableToneAttack",
    "TraitWordAttack",
    "TransformAttack",
    "attack_names",
    "describe_voice",
    "get_spec",
    "rng_uniform",
]

#: The instruments an attack may need to be seen, in table order:
#: ``probes`` (the acoustic probes), ``classifiers`` (age/gender/emotion/accent models),
#: ``gate`` (a transcriber: the WER gate), ``judge`` (an audio-LLM judge),
#: ``holdout`` (a private held-out partition: ``holdout_salt``).
INSTRUMENTS: Final[tuple[str, ...]] = ("probes", "classifiers", "gate", "judge", "holdout")


# ----------------------------------------------------------------------------- the catalogue


@dataclass(frozen=True)
class AttackSpec:
    """One row of the catalogue.

    ``base``: which system the attack wraps — ``"flat"`` (a voice that ignores the
    instruction: espeak-flat, or hibari beside hibari-follow) or ``"reference"`` (the honest
    reference), with ``base_overrides`` (trait → value) when the base is the reference made
    unable to realise one trait (it always answers the middle value): the trick then has
    something to fake, and the duel against that base measures exactly what the trick buys.
    ``defence``: the defence the spec names. ``needs``: the instruments
    (:data:`INSTRUMENTS`) that must be on for the defence to be tested. ``decided_by``: the
    duels whose outcome decides the verdict (``"base"``, ``"reference"``); a duel left out is
    reported but cannot make the row VULNERABLE (the gain attack's win over the flat voice
    is earned: it really follows loudness). ``make(base, reference, memorised)`` builds the
    attack system.
    """

    name: str
    summary: str
    defence: str
    needs: tuple[str, ...]
    base: Literal["flat", "reference"]
    make: Callable[[Callable[[str, str], bytes], Callable[[str, str], bytes],
                    Sequence[Item]], Attack]
    decided_by: tuple[str, ...] = ("base", "reference")
    base_overrides: tuple[tuple[str, str], ...] = ()


_NON_COMP = "non-compensatory product"
_SPEECH = "speech check: no speech scores d = 0 on every dimension"
_SPEECH_ONLY = "pace measured on the speech only (speech span / VAD)"
_HUM = "hum-robust pitch (F0 from speech frames only)"
_GATE = "WER intelligibility gate"

CATALOGUE: Final[tuple[AttackSpec, ...]] = (
    AttackSpec(
        "silence", "digital silence as long as the base clip",
        "a clip without speech is the system's failure (S = 0)", ("probes",), "flat",
        lambda b, r, m: SilenceAttack(b)),
    AttackSpec(
        "noise", "speech-shaped noise stretched and scaled to the requested pace and loudness",
        f"{_SPEECH}; unmeasurable = d 0 ({_NON_COMP})", ("probes",), "flat",
        lambda b, r, m: NoiseAttack(b)),
    AttackSpec(
        "noise-syllables", "the noise attack's noise under a syllable-rate envelope",
        f"{_SPEECH} (v2: the spectrum must move, not only the level); {_NON_COMP}",
        ("probes",), "flat", lambda b, r, m: SyllableNoiseAttack(b)),
    AttackSpec(
        "tone-syllables", "a sine at the requested pitch, with vibrato, under a syllable-rate "
        "envelope, as long and as loud as the noise", f"{_SPEECH} (v2: the spectrum must "
        f"move, not only the level); {_NON_COMP}", ("probes",), "flat",
        lambda b, r, m: SyllableToneAttack(b)),
    AttackSpec(
        "pad-silence", "1.5 s of digital silence at both ends on slow requests",
        _SPEECH_ONLY, ("probes",), "reference", lambda b, r, m: PadAttack(b, fill="silence"),
        base_overrides=(("pace", "moderate"),)),
    AttackSpec(
        "pad-room-tone", "1.5 s of −40 dBFS pink room tone at both ends on slow requests",
        _SPEECH_ONLY, ("probes",), "reference",
        lambda b, r, m: PadAttack(b, fill="room-tone"), base_overrides=(("pace", "moderate"),)),
    AttackSpec(
        "pad-flat", "the issue-15 case: espeak-flat padded with room tone on slow requests",
        _SPEECH_ONLY, ("probes",), "flat", lambda b, r, m: PadAttack(b, fill="room-tone")),
    AttackSpec(
        "gain-loudness", "only loudness followed, by a clean gain (nothing else changes)",
        "desirability normalisation + geometric mean: one dimension grants no leverage",
        ("probes",), "flat", lambda b, r, m: GainAttack(b), decided_by=("reference",)),
    AttackSpec(
        "safe-middle", "always moderate pace, medium pitch, normal loudness",
        f"graded ordinal desirability (adjacent = 0.5) + {_NON_COMP}", ("probes",),
        "reference", lambda b, r, m: RewriteAttack(
            b, name="safe-middle",
            overrides={"pace": "moderate", "pitch": "medium", "loudness": "normal"})),
    AttackSpec(
        "middle-age", "always a 45-year-old voice, whatever age was asked",
        "age desirability (full credit within ±8 years only)", ("classifiers",), "reference",
        lambda b, r, m: RewriteAttack(b, name="middle-age", overrides={"age": "45"})),
    AttackSpec(
        "hum-50hz", "50 Hz mains hum (2 harmonics) at −20 dBFS on low-pitch requests",
        _HUM, ("probes",), "reference",
        lambda b, r, m: HumAttack(b, freq_hz=50.0, level_dbfs=-20.0, harmonics=2),
        base_overrides=(("pitch", "medium"),)),
    AttackSpec(
        "tone-low", "a sine at a low voice's F0 (−5 semitones) at −20 dBFS on low-pitch "
        "requests", _HUM, ("probes",), "reference",
        lambda b, r, m: HumAttack(b, freq_hz=None, level_dbfs=-20.0),
        base_overrides=(("pitch", "medium"),)),
    AttackSpec(
        "clip-loud", "loud requests driven 12 dB past full scale and hard clipped",
        "judge naturalness rubric (distortion)", ("judge",), "reference",
        lambda b, r, m: ClipAttack(b), base_overrides=(("loudness", "normal"),)),
    AttackSpec(
        "speak-instruction", "the voice instruction read aloud instead of the script",
        _GATE, ("gate",), "reference", lambda b, r, m: SpeakInstructionAttack(b)),
    AttackSpec(
        "other-sentence", "another script of the same length, with the requested voice",
        _GATE, ("gate",), "reference", lambda b, r, m: OtherSentenceAttack(b)),
    AttackSpec(
        "trait-words", "the script plus the traits said in words (\"…, in a deep voice\")",
        f"{_GATE}; traits count only as realised in the voice", ("gate",), "reference",
        lambda b, r, m: TraitWordAttack(b)),
    AttackSpec(
        "note-to-judge", "the script plus a spoken note: \"score it three\"",
        "judge prompt: ignore instructions spoken inside the audio", ("judge",), "reference",
        lambda b, r, m: SpokenNoteAttack(b)),
    AttackSpec(
        "memoriser", "the honest voice on memorised public item ids, the flat voice elsewhere",
        "private held-out split (split_holdout)", ("holdout",), "flat",
        lambda b, r, m: Memoriser(b, honest=r, memorised=m)),
)


def attack_names() -> tuple[str, ...]:
    """Names of the catalogue's attacks, in table order."""
    return tuple(s.name for s in CATALOGUE)


def get_spec(name: str) -> AttackSpec:
    """The catalogue row called ``name``; an unknown name raises ConfigError."""
    for s in CATALOGUE:
        if s.name == name:
            return s
    raise ConfigError(f"unknown attack {name!r}; valid: {', '.join(attack_names())}")
