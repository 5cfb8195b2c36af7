"""The trait registry: the one place that defines what a voice request can ask for.

Probes, judge rubrics, corpus checks, desirability and aggregation all read a
:class:`TraitRegistry` (by default :data:`TRAITS`); adding a trait is one
:meth:`TraitRegistry.register` call.

Scoring kinds and their desirability d ∈ [0, 1] (see ``decide.desirability``):

* ``ordinal``      values in order; exact bucket 1.0, adjacent 0.5, else 0.0
* ``categorical``  label match 1.0, mismatch 0.0
* ``numeric``      value in ``unit`` (years for age); full credit within ``tolerance``,
                   linear to 0 at twice the tolerance
* ``rubric``       judge score 0–3, d = score / 3
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from .constants import AGE_TOLERANCE_YEARS, RUBRIC_MAX
from .errors import ConfigError

__all__ = [
    "AGE_TOLERANCE_YEARS",
    "JUDGED_DIMENSIONS",
    "NATURALNESS",
    "RUBRIC_MAX",
    "TRAITS",
    "Trait",
    "TraitRegistry",
    "default_registry",
    "unscored_words",
]

Kind = Literal["objective", "holistic"]
Scoring = Literal["ordinal", "categorical", "numeric", "rubric"]

#: The judged dimension that is not a trait: realism, expressiveness, intelligibility.
NATURALNESS = "naturalness"

_KINDS = ("objective", "holistic")
_SCORINGS = ("ordinal", "categorical", "numeric", "rubric")


@dataclass(frozen=True)
class Trait:
    """One controllable voice attribute.

    ``values`` are the reference levels a request may name (for ``ordinal`` traits in
    increasing order; for ``numeric`` traits decimal strings in ``unit``). ``judged``
    holistic traits are scored by the audio-LLM judge on the 0–3 rubric.
    """

    name: str
    kind: Kind
    scoring: Scoring
    values: tuple[str, ...]
    description: str
    unit: str = ""
    tolerance: float | None = None
    synonyms: dict[str, tuple[str, ...]] = field(default_factory=dict, compare=False, hash=False)

    def __post_init__(self) -> None:
        if not self.name or not self.name.isidentifier() or self.name != self.name.lower():
            raise ConfigError(f"trait name {self.name!r} must be a lower-case identifier")
        if self.kind not in _KINDS:
            raise ConfigError(f"trait {self.name!r}: kind {self.kind!r} is not one of {_KINDS}")
        if self.scoring not in _SCORINGS:
            raise ConfigError(
                f"trait {self.name!r}: scoring {self.scoring!r} is not one of {_SCORINGS}"
            )
        if len(self.values) < 2 or len(set(self.values)) != len(self.values):
            raise ConfigError(f"trait {self.name!r} needs at least two distinct values")
        if self.scoring == "numeric":
            if self.tolerance is None or self.tolerance <= 0:
                raise ConfigError(f"numeric trait {self.name!r} needs a positive tolerance")
            for v in self.values:
                try:
                    float(v)
                except ValueError:
                    raise ConfigError(
                        f"numeric trait {self.name!r}: value {v!r} is not a number"
                    ) from None
        if self.scoring == "rubric" and self.kind != "holistic":
            raise ConfigError(f"rubric-scored trait {self.name!r} must be holistic")

    @property
    def judged(self) -> bool:
        """True when the audio-LLM judge scores this trait (holistic, rubric 0–3)."""
        return self.scoring == "rubric"

    def check_value(self, value: str) -> str:
        """Return ``value`` if it is a reference level of this trait, else raise ConfigError."""
        if value not in self.values:
            raise ConfigError(
                f"{value!r} is not a value of trait {self.name!r}; "
                f"valid values: {', '.join(self.values)}"
            )
        return value

    def index(self, value: str) -> int:
        """Position of ``value`` in the (ordinal) value order."""
        return self.values.index(self.check_value(value))

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form (every field, synonyms included)."""
        return {
            "name": self.name, "kind": self.kind, "scoring": self.scoring,
            "values": list(self.values), "description": self.description, "unit": self.unit,
            "tolerance": self.tolerance,
            "synonyms": {k: list(v) for k, v in self.synonyms.items()},
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Trait:
        """Inverse of :meth:`to_dict` (validated as any new trait)."""
        try:
            return cls(
                name=str(data["name"]), kind=data["kind"], scoring=data["scoring"],
                values=tuple(str(v) for v in data["values"]),
                description=str(data.get("description", "")), unit=str(data.get("unit", "")),
                tolerance=None if data.get("tolerance") is None else float(data["tolerance"]),
                synonyms={str(k): tuple(v) for k, v in dict(data.get("synonyms", {})).items()},
            )
        except (KeyError, TypeError, ValueError) as exc:
            raise ConfigError(f"cannot read a trait from {dict(data)!r}: {exc}") from None


class TraitRegistry:
    """An ordered set of :class:`Trait` s, looked up by name."""

    def __init__(self, traits: Iterable[Trait] = ()) -> None:
        self._traits: dict[str, Trait] = {}
        for t in traits:
            self.register(t)

    def register(self, trait: Trait) -> Trait:
        """Add ``trait``; a duplicate name (or the reserved ``naturalness``) is an error."""
        if trait.name == NATURALNESS:
            raise ConfigError(f"{NATURALNESS!r} is a reserved judged dimension, not a trait name")
        if trait.name in self._traits:
            raise ConfigError(
                f"trait {trait.name!r} is already registered; registered: {', '.join(self._traits)}"
            )
        self._traits[trait.name] = trait
        return trait

    def get(self, name: str) -> Trait:
        """The trait called ``name``; an unknown name raises ConfigError listing valid ones."""
        try:
            return self._traits[name]
        except KeyError:
            raise ConfigError(
                f"unknown trait {name!r}; valid traits: {', '.join(self._traits)}"
            ) from None

    __getitem__ = get

    def __contains__(self, name: object) -> bool:
        return name in self._traits

    def __iter__(self) -> Iterator[Trait]:
        return iter(self._traits.values())

    def __len__(self) -> int:
        return len(self._traits)

    def names(self) -> tuple[str, ...]:
        """Trait names in registration order."""
        return tuple(self._traits)

    def objective(self) -> tuple[Trait, ...]:
        """Traits measured on the waveform by probes."""
        return tuple(t for t in self._traits.values() if t.kind == "objective")

    def judged(self) -> tuple[Trait, ...]:
        """Traits the audio-LLM judge scores on the 0–3 rubric."""
        return tuple(t for t in self._traits.values() if t.judged)

    def judged_dimensions(self) -> tuple[str, ...]:
        """Every dimension the judge scores: the judged traits, then naturalness."""
        return (*(t.name for t in self.judged()), NATURALNESS)

    def dimensions(self) -> tuple[str, ...]:
        """Every dimension of the per-sample composite: all traits, then naturalness."""
        return (*self._traits, NATURALNESS)

    def check_dimension(self, name: str) -> str:
        """Return ``name`` if it is a trait or naturalness, else raise ConfigError."""
        if name == NATURALNESS or name in self._traits:
            return name
        raise ConfigError(
            f"unknown dimension {name!r}; valid: {', '.join(self.dimensions())}"
        )

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form: the traits in registration order (run.json carries it, so a saved
        run rebuilds exactly the registry that scored it)."""
        return {"traits": [t.to_dict() for t in self._traits.values()]}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> TraitRegistry:
        """Inverse of :meth:`to_dict`."""
        traits = data.get("traits") if isinstance(data, Mapping) else None
        if not isinstance(traits, list):
            raise ConfigError(f"a trait registry needs a 'traits' list, got {data!r}")
        return cls(Trait.from_dict(t) for t in traits)

    def copy(self) -> TraitRegistry:
        """An independent registry with the same traits (for extending without side effects)."""
        return TraitRegistry(self._traits.values())

    def check_values(self, traits: Mapping[str, str]) -> None:
        """Raise ConfigError unless every trait named in ``traits`` is registered and its value
        valid (a number for numeric traits, a reference level otherwise); absent traits are
        fine (the caller fills them in)."""
        for name, value in traits.items():
            trait = self.get(name)
            if trait.scoring == "numeric":
                try:
                    if not math.isfinite(float(value)):
                        raise ValueError(value)
                except (TypeError, ValueError):
                    raise ConfigError(f"trait {name!r} needs a number, got {value!r}") from None
            else:
                trait.check_value(value)

    def validate_request(self, traits: dict[str, str]) -> None:
        """Raise ConfigError unless ``traits`` names every registered trait with a valid value."""
        missing = [n for n in self._traits if n not in traits]
        if missing:
            raise ConfigError(f"request lacks traits: {', '.join(missing)}")
        for name, value in traits.items():
            self.get(name).check_value(value)


def unscored_words(dimensions: Sequence[str]) -> str:
    """``dimensions`` that will not be scored, said in a status line: ``"tone and
    naturalness are"`` (the judged dimensions of :data:`TRAITS`), ``"a, b and c are"``,
    ``"naturalness is"``."""
    if not dimensions:
        return "no dimension is"
    *head, last = dimensions
    return f"{', '.join(head)} and {last} are" if head else f"{last} is"


def default_registry() -> TraitRegistry:
    """The eight traits and 39 reference values of benchmark v1."""
    return TraitRegistry(
        [
            Trait(
                "gender", "objective", "categorical", ("male", "female"),
                "Perceived speaker sex of the voice.",
            ),
            Trait(
                "age", "objective", "numeric", ("8", "13", "20", "30", "45", "60", "78"),
                "Perceived speaker age in years; full credit within ±8 years.",
                unit="years", tolerance=AGE_TOLERANCE_YEARS,
            ),
            Trait(
                "pace", "objective", "ordinal", ("slow", "moderate", "fast"),
                "Articulation rate: phones of the script per second of speech, pauses left "
                "out, relative to everyday speech.",
                unit="phones/s",
            ),
            Trait(
                "pitch", "objective", "ordinal", ("low", "medium", "high"),
                "Median fundamental frequency relative to the requested gender and age.",
                unit="semitones",
            ),
            Trait(
                "loudness", "objective", "ordinal", ("quiet", "normal", "loud"),
                "Integrated loudness of the delivery (ITU-R BS.1770).",
                unit="LUFS",
            ),
            Trait(
                "emotion", "objective", "categorical",
                ("neutral", "calm", "happy", "sad", "angry", "fearful", "disgust", "surprised"),
                "The speaker's emotional state as heard in the voice.",
            ),
            Trait(
                "accent", "objective", "categorical",
                ("American", "British", "Australian", "Indian", "Canadian"),
                "Regional English accent of the speaker.",
            ),
            Trait(
                "tone", "holistic", "rubric",
                ("warm", "authoritative", "playful", "serious", "soothing", "cheerful",
                 "sarcastic", "formal"),
                "Overall manner or attitude of the delivery, judged by ear (rubric 0–3).",
            ),
        ]
    )


#: The default registry used everywhere unless a caller passes its own.
TRAITS: TraitRegistry = default_registry()

#: Dimensions the judge scores under the default registry.
JUDGED_DIMENSIONS: tuple[str, ...] = TRAITS.judged_dimensions()
