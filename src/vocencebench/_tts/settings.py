"""The eSpeak NG settings of one rendering and the engine's identity.

:class:`EspeakSettings` holds everything besides the text that determines a rendering (voice,
words per minute, amplitude, pitch, pitch range, noise seed); :func:`validate_voice` refuses a
voice name eSpeak would silently drop or ignore. Public through :mod:`vocencebench.tts`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Final

from .._numbers import is_whole_number
from .._util.deps import installed_version
from ..constants import PROJECT_SEED
from ..errors import ConfigError

__all__ = [
    "ENGINE_VERSION",
    "ESPEAKNG_LOADER_VERSION",
    "MAPPING_VERSION",
    "NEUTRAL",
    "PERCENT_RANGE",
    "RAND_SEED",
    "RATE_RANGE",
    "SAMPLE_RATE",
    "VARIANTS",
    "VOICES",
    "VOLUME_RANGE",
    "EspeakSettings",
    "validate_voice",
]

#: Output rate of libespeak-ng, in Hz (16-bit mono PCM).
SAMPLE_RATE: Final = 22_050
#: The espeakng-loader release the sha256 pins in the tests were rendered with.
ESPEAKNG_LOADER_VERSION: Final = "0.2.4"
#: Version of the trait → parameter mapping (:mod:`vocencebench.tts`); bump it whenever a
#: rendering can change.
MAPPING_VERSION: Final = "1"
#: Identity of the engine for caches: loader release and mapping version.
ENGINE_VERSION: Final = (f"espeakng-loader-{installed_version('espeakng-loader')}"
                         f"+map{MAPPING_VERSION}")

#: English base voices of eSpeak NG that ``espeak_SetVoiceByName`` accepts, with their accent.
#: ("en" is British English; "en-gb" is *not* a voice name: the library answers "not found".)
VOICES: Final[Mapping[str, str]] = {
    "en": "British (southern England)",
    "en-us": "American",
    "en-gb-x-rp": "British (Received Pronunciation)",
    "en-gb-scotland": "Scottish",
    "en-gb-x-gbclan": "British (Lancaster)",
    "en-gb-x-gbcwmd": "British (West Midlands)",
    "en-029": "Caribbean",
    "en-us-nyc": "American (New York City)",
}
#: Voice variants (``voices/!v`` files of the pinned data) that may follow a base: ``en-us+f4``.
VARIANTS: Final[tuple[str, ...]] = (
    "m1", "m2", "m3", "m4", "m5", "m6", "m7", "m8",
    "f1", "f2", "f3", "f4", "f5",
    "klatt", "whisper", "croak",
)

# eSpeak's documented parameter ranges.
RATE_RANGE: Final = (80, 450)  # words per minute
VOLUME_RANGE: Final = (0, 200)  # amplitude, 100 = default
PERCENT_RANGE: Final = (0, 100)  # pitch and pitch range


def validate_voice(name: str) -> str:
    """Return ``name`` if it is ``BASE`` or ``BASE+VARIANT`` from :data:`VOICES` /
    :data:`VARIANTS`; otherwise raise ConfigError listing the valid names."""
    base, plus, variant = name.partition("+")
    if base not in VOICES:
        hint = " (British English is 'en')" if base.lower() in ("en-gb", "en_gb") else ""
        raise ConfigError(
            f"unknown eSpeak voice {base!r}{hint}; valid voices: {', '.join(VOICES)}"
        )
    if plus and variant not in VARIANTS:
        raise ConfigError(
            f"unknown eSpeak variant {variant!r} in {name!r} (eSpeak would drop it silently); "
            f"valid variants: {', '.join(VARIANTS)}"
        )
    return name


#: Default seed of eSpeak's noise generator (the project seed).
RAND_SEED: Final = PROJECT_SEED


@dataclass(frozen=True)
class EspeakSettings:
    """Everything that determines one eSpeak rendering besides the text.

    ``voice``: ``BASE[+VARIANT]`` (see :func:`validate_voice`). ``rate``: words per minute
    (80–450). ``volume``: amplitude, 100 = default; up to 100 it is a pure gain, above about
    150 the engine's limiter compresses (0–200). ``pitch``: base pitch, 0–100, 50 = the
    voice's own. ``range``: pitch range (intonation), 0–100, 50 = the voice's own.
    ``seed``: seed of eSpeak's noise generator.
    """

    voice: str = "en-us"
    rate: int = 165
    volume: int = 100
    pitch: int = 50
    range: int = 50
    seed: int = RAND_SEED

    def __post_init__(self) -> None:
        validate_voice(self.voice)
        for what, value, (lo, hi) in (
            ("rate", self.rate, RATE_RANGE),
            ("volume", self.volume, VOLUME_RANGE),
            ("pitch", self.pitch, PERCENT_RANGE),
            ("range", self.range, PERCENT_RANGE),
        ):
            if not is_whole_number(value) or not lo <= value <= hi:
                raise ConfigError(f"eSpeak {what} must be an integer in [{lo}, {hi}], "
                                  f"got {value!r}")
        if not is_whole_number(self.seed) or not 0 <= self.seed < 2**31:
            raise ConfigError(f"eSpeak seed must be an integer in [0, 2**31), got {self.seed!r}")


#: The fixed settings of ``espeak-flat`` (and the defaults of ``espeak-follow``).
NEUTRAL: Final = EspeakSettings()
