"""The typed units of work of a run, and the handles that ship components to workers.

A run (:mod:`vocencebench._pipeline.engine`) moves every item through four stages; the work
of each stage is one of the units below, a module-level function of one frozen, picklable
job, so the same unit runs in a thread of the client, a local worker process or a Dask
worker. A unit only unpacks its job: the work is the per-item path of
:mod:`vocencebench.pair` (:func:`~vocencebench.pair.measure_clip`, and
:func:`~vocencebench.pair.judge_pair`, which the judge stage calls as it is), the one
:func:`vocencebench.score_pair` runs too, and :func:`~vocencebench.probes.base.measure_batched`:

==================  =========================  ================================================
unit                job → result               runs
==================  =========================  ================================================
:func:`synthesize`  :class:`SynthJob` →        client threads (per-item and I/O-bound systems);
                    bytes or Exception each    a client thread or a Dask worker (batched models)
:func:`analyse`     :class:`ClipJob` →         the executor: decode once, ASR gate, per-clip
                    :class:`ClipOutcome`       probes, speech check
:func:`measure`     :class:`BatchJob` →        a client thread (one model copy) or a Dask
                    probe results per clip     worker (GPU resource): the batched probes
``judge_pair``      judge, item, two clips →   client threads (``judge_concurrency``)
                    verdicts
==================  =========================  ================================================

Components (probe sets, transcribers, model systems) travel inside jobs as a
:class:`Handle`: pickled once in the client, unpickled once per process and kept there, so a
worker loads a model once however many units it runs (worker-local state).
"""

from __future__ import annotations

import hashlib
import pickle
import threading
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any, Generic, TypeVar

from .._util import failures as fail
from ..audio import Clip
from ..errors import ConfigError, SynthesisError, blame_of
from ..pair import ClipAnalysis, measure_clip
from ..probes.base import BatchedProbe, ProbeSuite, measure_batched
from ..schema import Item, ProbeResult

__all__ = [
    "BatchJob",
    "ClipJob",
    "ClipOutcome",
    "Handle",
    "SynthJob",
    "analyse",
    "handle",
    "measure",
    "pickle_problem",
    "synthesize",
]

T = TypeVar("T")


# ------------------------------------------------------------------------------ handles

_LOCAL: dict[str, Any] = {}
_LOCAL_LOCK = threading.Lock()


class Handle(Generic[T]):
    """A component as it travels to workers.

    Built in the client from the object (``pickled=True`` pickles it once; otherwise it can
    only be used in this process). In a worker, :meth:`get` unpickles it on first use and keeps
    it in the process under its digest: later units reuse the same object (and its loaded
    model)."""

    __slots__ = ("_blob", "_obj", "token")

    def __init__(self, obj: T, *, pickled: bool) -> None:
        self._obj: T | None = obj
        self._blob = pickle.dumps(obj, protocol=pickle.HIGHEST_PROTOCOL) if pickled else None
        self.token = hashlib.sha256(self._blob).hexdigest() if self._blob else f"id:{id(obj)}"

    @property
    def portable(self) -> bool:
        """True when the handle can be sent to another process."""
        return self._blob is not None

    def get(self) -> T:
        if self._obj is not None:
            return self._obj
        if self._blob is None:  # pragma: no cover - refused in __getstate__
            raise ConfigError("a component that cannot be pickled was sent to a worker")
        with _LOCAL_LOCK:
            obj = _LOCAL.get(self.token)
            if obj is None:
                obj = _LOCAL[self.token] = pickle.loads(self._blob)
        self._obj = obj
        return obj  # type: ignore[no-any-return]

    def __getstate__(self) -> tuple[str, bytes]:
        if self._blob is None:
            raise ConfigError(f"{self._obj!r} cannot be pickled, so it cannot run in a worker")
        return self.token, self._blob

    def __setstate__(self, state: tuple[str, bytes]) -> None:
        self.token, self._blob = state
        self._obj = None

    def __repr__(self) -> str:
        return f"Handle({self.token[:12]})"


def pickle_problem(obj: object) -> str | None:
    """Why ``obj`` cannot be pickled (so cannot run in a worker process), or None if it can."""
    try:
        pickle.dumps(obj, protocol=pickle.HIGHEST_PROTOCOL)
    except Exception as exc:
        return f"{type(exc).__name__}: {exc}"
    return None


def picklable(obj: object) -> bool:
    """Whether ``obj`` survives pickling (so it can run in a worker process)."""
    return pickle_problem(obj) is None


def handle(obj: T, *, portable: bool = True) -> Handle[T]:
    """A :class:`Handle` on ``obj``; portable when asked and ``obj`` pickles."""
    return Handle(obj, pickled=portable and picklable(obj))


# ---------------------------------------------------------------------------- synthesis


@dataclass(frozen=True)
class SynthJob:
    """A batch of ``(text, instruction)`` requests for a batched system."""

    system: Handle[Any]
    sid: str
    requests: tuple[tuple[str, str], ...]


def synthesize(job: SynthJob) -> list[bytes | Exception]:
    """One result per request (bytes or that item's exception); a batch that raises as a
    whole fails each of its items; a ConfigError (missing extra, bad setting) propagates."""
    system = job.system.get()
    n = len(job.requests)
    try:
        results = list(system.synthesize_many(list(job.requests)))
    except ConfigError:
        raise
    except Exception as exc:  # the batch failed as a whole: each item gets the error
        err = exc if blame_of(exc) is not None else SynthesisError(
            f"{job.sid}: {fail.exc_text(exc)}")
        return [err] * n
    if len(results) != n:
        return [SynthesisError(f"{job.sid}.synthesize_many returned {len(results)} results "
                               f"for {n} requests")] * n
    out: list[bytes | Exception] = []
    for r in results:
        if isinstance(r, Exception):
            out.append(r)
        elif not isinstance(r, bytes | bytearray):
            out.append(SynthesisError(f"{job.sid} returned {type(r).__name__} instead of WAV "
                                      "bytes"))
        elif not r:
            out.append(SynthesisError(f"{job.sid} returned no audio (0 bytes)"))
        else:
            out.append(bytes(r))
    return out


# ----------------------------------------------------------------------------- analysis


@dataclass(frozen=True)
class ClipJob:
    """Analyse one clip: decode, gate, per-clip probes; ``speech_check`` also asks the probe
    set whether the clip holds speech (for the batched traits measured elsewhere). ``data``
    is the run's :class:`Clip` of that side: in the client its decoded audio is kept for the
    batched probes and the judge; pickled to a worker it travels as its bytes."""

    item: Item
    data: bytes | Clip
    label: str
    probes: Handle[Any] | None
    transcriber: Handle[Any] | None
    speech_check: bool = False


@dataclass(frozen=True)
class ClipOutcome:
    """What :func:`analyse` found; ``no_speech`` is the speech check's reason when the clip
    holds no speech (None when it does, or when no check ran)."""

    analysis: ClipAnalysis
    no_speech: str | None = None


def analyse(job: ClipJob) -> ClipOutcome:
    probes: ProbeSuite | None = job.probes.get() if job.probes is not None else None
    transcriber = job.transcriber.get() if job.transcriber is not None else None
    an, audio = measure_clip(job.item, job.data, system=job.label, probes=probes,
                             transcriber=transcriber)
    no_speech = None
    if job.speech_check and audio is not None and an.ok and probes is not None \
            and probes.check_speech:
        try:
            res = probes.speech_check(audio)
        except ConfigError:
            raise
        except Exception as exc:  # the check is an instrument too
            return ClipOutcome(replace(an, instrument_failure=fail.reason(
                fail.PROBES, f"{job.label}: speech check: {fail.exc_text(exc)}")))
        if not res.present:
            no_speech = str(res.reason or "no speech detected")
    return ClipOutcome(an, no_speech)


@dataclass(frozen=True)
class BatchJob:
    """Measure ``clips`` with the batched probes: the run's own :class:`Clip` objects in the
    client (already decoded when the analysis ran here, so not decoded again), or bytes /
    clips pickled to a worker, decoded there once."""

    probes: Handle[Any]
    items: tuple[Item, ...]
    clips: tuple[bytes | Clip, ...]


def measure(job: BatchJob) -> list[dict[str, ProbeResult]]:
    """Per clip, the batched probes' results merged (a later probe wins for a trait). A probe
    that fails fails the batch (ProbeError): every item of it is incomplete, and retried."""
    probes: Sequence[BatchedProbe] = job.probes.get()
    clips = [c if isinstance(c, Clip) else Clip.from_bytes(c) for c in job.clips]
    audios = [c.audio() for c in clips]  # decoded once per process (a Clip keeps it)
    return measure_batched(probes, audios, job.items)
