"""The probe extension point and the :class:`ProbeSet` that runs several probes on a clip."""

from __future__ import annotations

import copy
import dataclasses
import hashlib
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from .._util import failures as fail
from ..errors import ConfigError, ProbeError
from ..schema import Item, ProbeResult, dumps_canonical
from ..traits import TRAITS, TraitRegistry
from .acoustic import TRAIT_UNITS, unmeasurable
from .voice import SPEECH_CHECK_VERSION, SpeechCheck, check_speech

if TYPE_CHECKING:
    from ..audio import Audio

__all__ = [
    "BatchedProbe",
    "Diagnostic",
    "Probe",
    "ProbeSet",
    "ProbeSuite",
    "measure_batched",
    "merge_results",
    "suite_identity",
]


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

    ``probes``: the probes, in priority order (a later one wins a trait,
    :func:`merge_results`); the run runs the :class:`BatchedProbe` ones batched and the rest
    per clip, on the per-clip suite :meth:`split_batched` returns. ``speech_check`` runs
    first when ``check_speech`` is on, and a clip without speech gets
    :meth:`unmeasurable_results` for the batched traits instead of a model call."""

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

    def split_batched(self) -> tuple[ProbeSuite, tuple[BatchedProbe, ...]]: ...


def merge_results(results: Iterable[Mapping[str, ProbeResult]], ids: Sequence[str],
                  order: Iterable[str]) -> dict[str, ProbeResult]:
    """The one merge of probe results: per trait, the result of the latest probe in ``ids``
    (a set's ``name@version`` ids in priority order, so a later probe wins a trait). A
    result whose ``probe`` is not in ``ids`` ranks below every probe of it; between equal
    ranks the later mapping of ``results`` wins. Traits come out in ``order`` (the
    registry's names); a trait not in it is left out."""
    rank = {pid: k for k, pid in enumerate(ids)}
    best: dict[str, ProbeResult] = {}
    for res in results:
        for trait, r in res.items():
            if trait not in best or rank.get(r.probe, -1) >= rank.get(best[trait].probe, -1):
                best[trait] = r
    return {t: best[t] for t in order if t in best}


def suite_identity(probes: ProbeSuite) -> dict[str, Any]:
    """What a probe result depends on besides the clip and the item, for cache keys: the
    probe ids, whether the speech check runs and which version of it, and the digest (sha256
    hex) of the trait registry the probes score d against — two registries with the same
    probe ids but another tolerance or scoring give other d, so they must not share cached
    results."""
    reg = getattr(probes, "registry", None)
    digest = (hashlib.sha256(dumps_canonical(reg.to_dict()).encode("utf-8")).hexdigest()
              if isinstance(reg, TraitRegistry) else None)
    checked = bool(getattr(probes, "check_speech", False))
    # True was the key of the first speech check; later versions are named.
    return {"probes": list(probes.ids), "registry": digest,
            "speech_check": f"v{SPEECH_CHECK_VERSION}" if checked else False}


def measure_batched(probes: Sequence[BatchedProbe], audios: Sequence[Any],
                    items: Sequence[Item]) -> list[dict[str, ProbeResult]]:
    """Per clip, the batched probes' results merged (:func:`merge_results`: a later probe
    wins a trait), in the order the probes first report the traits. A probe that fails
    fails the batch (ProbeError, naming the probe and the batch size), as does one that
    returns a result list of another length."""
    per_clip: list[list[dict[str, ProbeResult]]] = [[] for _ in audios]
    for p in probes:
        try:
            outs = p.measure_batch(audios, list(items))
        except (ConfigError, ProbeError):
            raise
        except Exception as exc:
            raise ProbeError(f"probe {p.name}@{p.version} failed on a batch of "
                             f"{len(audios)} clips: {fail.exc_text(exc)}") from exc
        if len(outs) != len(audios):
            raise ProbeError(f"probe {p.name}@{p.version} returned {len(outs)} results for "
                             f"{len(audios)} clips")
        for acc, got in zip(per_clip, outs, strict=True):
            acc.append(got)
    ids = [f"{p.name}@{p.version}" for p in probes]
    return [merge_results(acc, ids, _first_seen(acc)) for acc in per_clip]


def _first_seen(results: Sequence[Mapping[str, ProbeResult]]) -> list[str]:
    """Every trait of ``results``, in the order they first appear (what ``dict.update``
    over them would give)."""
    return list(dict.fromkeys(t for res in results for t in res))


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
        self.probes = tuple(_on_registry(p, registry) for p in self.probes)

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
        (:class:`~vocencebench.probes.voice.SpeechCheck`). Kept with the clip."""
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
        results: list[dict[str, ProbeResult]] = []
        for p in self.probes:
            try:
                results.append(p.measure(audio, item))
            except ProbeError:
                raise
            except Exception as exc:
                raise ProbeError(
                    f"probe {p.name}@{p.version} failed on {item.id}: "
                    f"{type(exc).__name__}: {exc}"
                ) from exc
        return merge_results(results, self.ids, self.registry.names())

    def split_batched(self) -> tuple[ProbeSet, tuple[BatchedProbe, ...]]:
        """(the per-clip part, the :class:`BatchedProbe` s) of this set, for a run that runs
        the batched probes in batches elsewhere. The per-clip part is this set itself when
        it has no batched probe, else a new set of the same class, registry, diagnostics and
        speech check holding the other probes; this set is never changed."""
        batched = tuple(p for p in self.probes if isinstance(p, BatchedProbe))
        if not batched:
            return self, ()
        per_clip = copy.copy(self)  # a new object: subclasses keep their own hooks
        per_clip.probes = tuple(p for p in self.probes if all(p is not q for q in batched))
        return per_clip, batched

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


def _on_registry(probe: Probe, registry: TraitRegistry) -> Probe:
    """``probe`` scoring against the set's ``registry``. A probe that carries a registry of
    its own (``registry=``, as every shipped probe does) is kept when that registry defines
    the probe's traits as the set's does; a dataclass probe is otherwise re-made on the
    set's registry; any other one is a ConfigError (it cannot be re-made here)."""
    own = getattr(probe, "registry", None)
    if not isinstance(own, TraitRegistry) or own is registry:
        return probe
    differ = [t for t in probe.traits if t not in own or own.get(t) != registry.get(t)]
    if not differ:
        return probe
    if dataclasses.is_dataclass(probe) and any(
            f.name == "registry" for f in dataclasses.fields(probe)):
        return dataclasses.replace(probe, registry=registry)  # type: ignore[type-var]
    raise ConfigError(
        f"probe {probe.name}@{probe.version} was built on a trait registry that defines "
        f"{', '.join(differ)} differently from the probe set's; build it with the set's "
        "registry (registry=...)")


if TYPE_CHECKING:  # the shipped probe set satisfies the protocol (mypy checks this)

    def _conforms(probes: ProbeSet) -> ProbeSuite:
        return probes
