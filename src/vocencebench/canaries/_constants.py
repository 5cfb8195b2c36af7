"""What the canaries know: the set's version, the edits and their known answers, the
tolerances, and the judge's thresholds."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

from ..constants import PROJECT_SEED

#: Version of the canary set, edits and thresholds; part of every cache key.
CANARY_VERSION: Final = "1"
#: Pitch edits (semitones), tempo edits (speed factors), gain edits (dB).
EDITS: Final[Mapping[str, tuple[str, float]]] = {
    "pitch+4": ("pitch", 4.0), "pitch-4": ("pitch", -4.0),
    "tempo1.25": ("tempo", 1.25), "tempo0.8": ("tempo", 0.8),
    "gain+10": ("gain", 10.0), "gain-10": ("gain", -10.0),
}  # fmt: skip
#: A directional check passes when the measured change, on its own scale (semitones, log of
#: the pace ratio, LU), is between these fractions of the known change: right direction, and
#: neither much too small nor much too large.
DIRECTION_TOLERANCE: Final = (0.5, 1.5)
#: Loudness is a pure gain: its change must be within this many LU of the edit.
LOUDNESS_TOLERANCE_LU: Final = 1.0
#: Every canary speaker is an adult: an age estimate must fall in this range (years).
ADULT_AGE_RANGE: Final = (18.0, 70.0)
#: Emotions fair to expect of calm read speech (advisory check).
READ_SPEECH_EMOTIONS: Final = ("neutral", "calm")
#: Base level of every canary before the edits (LUFS): leaves room for the +10 dB edit.
BASE_LUFS: Final = -30.0
#: Degradations for the judge's naturalness pairs.
DEGRADATIONS: Final[tuple[str, ...]] = ("band-limited to 3 kHz", "hard-clipped",
                                        "white noise at 5 dB SNR")
#: The judge must prefer the clean clip in at least this share of its answers ...
JUDGE_MIN_CLEAN_RATE: Final = 0.75
#: ... its winner may change with the presentation order in at most this share of pairs ...
JUDGE_MAX_FLIP_RATE: Final = 0.34
#: ... and at most this share of its answers may be unparsable.
JUDGE_MAX_UNPARSABLE_RATE: Final = 0.2
#: Canaries the judge hears (a real man, the neural woman): 2 voices × 3 degradations × 2
#: orders = 12 judge calls.
JUDGE_VOICES: Final[tuple[str, ...]] = ("arctic-aew", "hibari-heart")
#: Seed of the white noise in the noisy pairs.
NOISE_SEED: Final = PROJECT_SEED
#: Instruction shown to the judge with each pair.
JUDGE_INSTRUCTION: Final = "Read the sentence in a clear, natural voice."
