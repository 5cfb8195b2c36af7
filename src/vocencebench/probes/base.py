"""The probe extension point and the :class:`ProbeSet` that runs several probes on a clip."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Protocol, runtime_checkable

from ..errors import ConfigError, ProbeError
from ..schema import Item, ProbeResult
from ..traits import TRAITS, TraitRegistry

if TYPE_CHECKING:
    from ..audio import Audio

__all__ = ["Diagnostic", "Probe", "ProbeSet"]


@runtime_checkable
class Probe(Protocol):
    """Measures one or more traits on a decoded clip, against the item's request.

    ``name`` and ``version`` form ``name@version`` (caches key on it: bump the version
    whenever the output can change). ``traits`` lists what it can measure.
    ``measure`` returns a :class:`ProbeResult` per trait it measured (a trait it cannot
    measure on this clip is absent, never guessed).
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


class ProbeSet:
    """An ordered set of probes; for a trait several probes measure, the later one wins
    (so a classifier listed after a heuristic replaces it)."""

    def __init__(
        self,
        probes: Iterable[Probe],
        *,
        diagnostics: Iterable[Diagnostic] = (),
        registry: TraitRegistry = TRAITS,
    ) -> None:
        self.probes: tuple[Probe, ...] = tuple(probes)
        self.diagnostics: tuple[Diagnostic, ...] = tuple(diagnostics)
        self.registry = registry
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

    def measure(self, audio: Audio, item: Item) -> dict[str, ProbeResult]:
        """Every trait the set can measure on ``audio``, against ``item``'s request."""
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
