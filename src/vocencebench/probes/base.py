"""The probe extension point and the :class:`ProbeSet` that runs several probes on a clip."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from ..errors import ConfigError, ProbeError
from ..schema import Item, ProbeResult
from ..traits import TRAITS, TraitRegistry

if TYPE_CHECKING:
    from ..audio import Audio
    from .acoustic import SpeechCheck

__all__ = ["BatchedProbe", "Diagnostic", "Probe", "ProbeSet", "ProbeSuite"]


@runtime_checkable
class Probe(Protocol):
    """Measures one or more traits on a decoded clip, against the item's request.

    ``name`` and ``version`` form ``name@version`` (caches key on it: bump the version
    whenever the output can change). ``traits`` lists what it can measure.
    ``measure`` returns a :class:`ProbeResult` for every trait it measures: a trait the clip
    makes unmeasurable gets label ``schema.UNMEASURABLE`` with d = 0 (never absent, never
    guessed); a crash is a ProbeError.
    """

    name: str
    version: str
    traits: tuple[str, ...]

    def measure(self, audio: Audio, item: Item) -> dict[str, ProbeResult]: ...


@runtime_checkable
class Diagnostic(Protocol):
    """Measures something reported per clip but never scored (e.g. DNSMOS quality)."""

    name: str
    version: str

    def assess(self, audio: Audio) -> dict[str, float]: ...


@runtime_checkable
class BatchedProbe(Protocol):
    """A probe that measures many clips per call (a model on a GPU): one result dict per clip,
    in order. The pipeline runs it batched, in one place (a client thread, or a Dask worker
    holding the GPU), instead of once per clip in the executor."""

    name: str
    version: str
    traits: tuple[str, ...]

    def measure_batch(self, audios: Sequence[Any], items: Sequence[Item]
                      ) -> list[dict[str, ProbeResult]]: ...


@runtime_checkable
class ProbeSuite(Protocol):
    """What a run asks of its probe set (:class:`vocencebench.ProbeSet` is the one shipped).

    ``probes``: the probes, in priority order (a later one wins a trait); the run runs the
    :class:`BatchedProbe` ones batched and the rest per clip, on a copy of the set whose
    ``probes`` it replaces. ``speech_check`` runs first when ``check_speech`` is on, and a
    clip without speech gets :meth:`unmeasurable_results` for the batched traits instead of
    a model call."""

    probes: tuple[Probe, ...]
    registry: TraitRegistry
    check_speech: bool

    @property
    def ids(self) -> tuple[str, ...]: ...

    @property
    def traits(self) -> tuple[str, ...]: ...

    def measure(self, audio: Audio, item: Item) -> dict[str, ProbeResult]: ...

    def diagnose(self, audio: Audio) -> dict[str, float]: ...

    def speech_check(self, audio: Audio) -> SpeechCheck: ...

    def unmeasurable_results(self, item: Item, reason: str,
                             traits: Iterable[str] | None = None) -> dict[str, ProbeResult]: ...


class ProbeSet:
    """An ordered set of probes; for a trait several probes measure, the later one wins
    (so a classifier listed after a heuristic replaces it).

    Before any probe runs, :meth:`speech_check` asks whether the clip holds speech at all; a
    clip without speech gets an UNMEASURABLE result (d = 0) for every trait of the set
    (``check_speech=False`` turns that off, e.g. for probes of non-speech traits).
    """

    def __init__(
        self,
        probes: Iterable[Probe],
        *,
        diagnostics: Iterable[Diagnostic] = (),
        registry: TraitRegistry = TRAITS,
        check_speech: bool = True,
    ) -> None:
        self.probes: tuple[Probe, ...] = tuple(probes)
        self.diagnostics: tuple[Diagnostic, ...] = tuple(diagnostics)
        self.registry = registry
        self.check_speech = check_speech
        seen: set[str] = set()
        for p in self.probes:
            pid = f"{p.name}@{p.version}"
            if pid in seen:
                raise ConfigError(f"probe {pid} is listed twice")
            seen.add(pid)
            for t in p.traits:
                registry.get(t)

    @property
    def ids(self) -> tuple[str, ...]:
        """``name@version`` of every probe and diagnostic, in order."""
        parts: tuple[Probe | Diagnostic, ...] = (*self.probes, *self.diagnostics)
        return tuple(f"{p.name}@{p.version}" for p in parts)

    @property
    def traits(self) -> tuple[str, ...]:
        """Traits at least one probe can measure, in registry order."""
        got = {t for p in self.probes for t in p.traits}
        return tuple(t for t in self.registry.names() if t in got)

    def speech_check(self, audio: Audio) -> SpeechCheck:
        """Whether ``audio`` holds speech (``present``), why not (``reason``), and the numbers
        (:class:`~vocencebench.probes.acoustic.SpeechCheck`). Kept with the clip."""
        from .acoustic import check_speech

        try:
            return check_speech(audio)
        except ProbeError:
            raise
        except Exception as exc:
            raise ProbeError(f"speech check failed: {type(exc).__name__}: {exc}") from exc

    def unmeasurable_results(self, item: Item, reason: str,
                             traits: Iterable[str] | None = None) -> dict[str, ProbeResult]:
        """UNMEASURABLE results (value None, d = 0, ``detail["unmeasurable"] = reason``) for
        ``traits`` (default: every trait of the set), each under the id of the probe that
        would have measured it (the latest one). A trait the item does not request is a
        ProbeError, as in :meth:`measure`; so is a trait no probe of the set measures."""
        from .acoustic import TRAIT_UNITS, unmeasurable

        wanted = self.traits if traits is None else tuple(traits)
        owner: dict[str, Probe] = {}
        for p in self.probes:
            for t in p.traits:
                owner[t] = p
        out: dict[str, ProbeResult] = {}
        for t in wanted:
            probe = owner.get(t)
            if probe is None:
                raise ProbeError(f"no probe of {self!r} measures {t!r}")
            pid = f"{probe.name}@{probe.version}"
            if t not in item.traits:
                raise ProbeError(f"{pid} needs the requested {t!r} of item {item.id}, which "
                                 "has none; corpus items must name every trait")
            units = getattr(probe, "units", None) or {}
            out[t] = unmeasurable(t, units.get(t, TRAIT_UNITS.get(t, "")), pid, reason)
        return {t: out[t] for t in self.registry.names() if t in out}

    def measure(self, audio: Audio, item: Item) -> dict[str, ProbeResult]:
        """Every trait the set can measure on ``audio``, against ``item``'s request; all of
        them UNMEASURABLE (d = 0) when the clip holds no speech."""
        if self.check_speech and self.probes:
            check = self.speech_check(audio)
            if not check.present:
                return self.unmeasurable_results(item, check.reason or "no speech")
        out: dict[str, ProbeResult] = {}
        for p in self.probes:
            try:
                out.update(p.measure(audio, item))
            except ProbeError:
                raise
            except Exception as exc:
                raise ProbeError(
                    f"probe {p.name}@{p.version} failed on {item.id}: "
                    f"{type(exc).__name__}: {exc}"
                ) from exc
        return {t: out[t] for t in self.registry.names() if t in out}

    def diagnose(self, audio: Audio) -> dict[str, float]:
        """Diagnostic numbers that are not in the composite (e.g. DNSMOS quality, 1–5)."""
        out: dict[str, float] = {}
        for dg in self.diagnostics:
            try:
                out.update(dg.assess(audio))
            except ProbeError:
                raise
            except Exception as exc:
                raise ProbeError(
                    f"diagnostic {dg.name}@{dg.version} failed: {type(exc).__name__}: {exc}"
                ) from exc
        return out

    def __repr__(self) -> str:
        return f"ProbeSet({', '.join(self.ids)})"


if TYPE_CHECKING:  # the shipped probe set satisfies the protocol (mypy checks this)

    def _conforms(probes: ProbeSet) -> ProbeSuite:
        return probes
