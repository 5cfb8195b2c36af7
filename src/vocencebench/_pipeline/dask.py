"""Whole runs on a Dask cluster (``--executor dask`` / ``dask:ADDRESS``).

With a :class:`~vocencebench.executor.DaskExecutor` the run sends to the workers:

* every per-clip analysis unit (decode, ASR gate — Whisper included —, per-clip probes);
* the batched, model-backed probes (the classifiers), in batches of 32 clips;
* the synthesis of model systems (batched systems whose ``placement`` is ``"worker"``; the
  Qwen3/Parler adapters by default), in chunks of 16 requests.

Each unit carries its component as a :class:`~vocencebench._pipeline.stages.Handle`,
unpickled once per worker process and kept there, so a worker loads a model once for the
whole run. When the cluster advertises a ``GPU`` resource (``dask worker --resources
GPU=1``), model units ask for ``GPU=1`` and land only on those workers; CPU units go
anywhere. The SQLite cache, the
judge and I/O-bound synthesis (HTTP APIs, command lines) stay in the client.

A worker that dies mid-run loses only its in-flight units: the scheduler runs them again on
another worker, and since every unit is a pure function of its job, the scores are the
same bytes as a local run.

A cluster left with **no worker** that can run the pending units (every worker lost, none
started, the scheduler gone) would make Dask wait for ever; :class:`WorkerWatch` warns every
``DASK_NO_WORKERS_WARN_S`` and, after ``no_workers_timeout`` seconds, fails the waiting units
with one fatal :class:`~vocencebench.errors.ServiceError` naming the cluster, so the run
stops as INCOMPLETE with that reason. A unit the cluster cancels (the client lost its
scheduler) fails the same way, as the instrument's failure, never the system's. Finished
work is in the cache: the same command resumes.

A unit whose workers keep **dying** while they run it (Dask gives up after
``distributed.scheduler.allowed-failures`` deaths: ``KilledWorker``) is the instrument's
failure too, but not fatal (:func:`killed_worker_error`): a dying worker takes every unit it
runs with it, so the cluster cannot say whose unit killed it, and a score must not blame a
system for it. Its items stay unscored, the rest of the run goes on, and the run names no
winner, as a run whose own process dies names none.
"""

from __future__ import annotations

import contextlib
import logging
import threading
import time
from concurrent.futures import CancelledError, Future, InvalidStateError
from typing import Any, TypeVar

from .._numbers import is_whole_number
from ..constants import DASK_NO_WORKERS_WARN_S, DASK_WORKER_POLL_S
from ..errors import ServiceError
from ..redact import redact

__all__ = ["DaskPlan", "WorkerWatch", "killed_worker_error", "submit"]

log = logging.getLogger(__name__)

T = TypeVar("T")
R = TypeVar("R")

#: The worker resource that marks a GPU (``dask worker --resources GPU=1``).
GPU_RESOURCE = "GPU"


def _settle(out: Future[Any], *, result: Any = None, error: BaseException | None = None
            ) -> None:
    """Complete ``out`` unless it is already done (cancelled by the run, failed by the watch)."""
    if out.done():
        return
    with contextlib.suppress(InvalidStateError):  # completed meanwhile by the other side
        if error is not None:
            out.set_exception(error)
        else:
            out.set_result(result)


class WorkerWatch:
    """Fails the pending units of a cluster that has had no worker able to run them for
    ``timeout_s`` seconds (see the module docstring); ``timeout_s=None`` never does.

    ``where`` names the cluster in messages (a scheduler address without credentials).
    ``poll_s`` and ``warn_s`` are seconds between two looks and two warnings.
    """

    def __init__(self, client: Any, *, where: str, timeout_s: float | None,
                 poll_s: float = DASK_WORKER_POLL_S, warn_s: float = DASK_NO_WORKERS_WARN_S
                 ) -> None:
        self._client = client
        self.where = where
        self.timeout_s = timeout_s
        # Each pending unit: its Dask future and the resources it asks for.
        self._pending: dict[Future[Any], tuple[Any, dict[str, float]]] = {}
        self._lock = threading.Lock()
        self._poll_s, self._warn_s = poll_s, warn_s
        self._closed = threading.Event()
        self._thread: threading.Thread | None = None

    def track(self, out: Future[Any], dfut: Any, resources: dict[str, float] | None) -> None:
        """Watch ``out`` (the caller's future of the Dask future ``dfut``) until it is done."""
        if self.timeout_s is None:
            return
        with self._lock:
            self._pending[out] = (dfut, dict(resources or {}))
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, daemon=True,
                                                name="vocencebench-dask-watch")
                self._thread.start()
        out.add_done_callback(self._forget)

    def _forget(self, out: Future[Any]) -> None:
        with self._lock:
            self._pending.pop(out, None)

    def close(self) -> None:
        self._closed.set()
        if self._thread is not None:
            self._thread.join(timeout=10 * self._poll_s)

    def _workers(self) -> list[dict[str, float]] | None:
        """The resources of each worker the scheduler knows; None when it cannot answer."""
        try:
            info = self._client.scheduler_info(n_workers=-1)
            return [dict(w.get("resources") or {}) for w in info.get("workers", {}).values()]
        except Exception:  # the scheduler is gone or not answering: no worker can run
            return None

    def _run(self) -> None:
        since: float | None = None
        warned = 0.0
        while not self._closed.wait(self._poll_s):
            with self._lock:
                waiting = [(o, d, r) for o, (d, r) in self._pending.items() if not o.done()]
            if not waiting:
                since = None
                continue
            workers = self._workers()
            stuck = [(o, d, r) for o, d, r in waiting
                     if workers is None or not any(_fits(w, r) for w in workers)]
            now = time.monotonic()
            if not stuck:
                if since is not None:
                    log.warning("the Dask cluster %s has workers again; the run goes on",
                                self.where)
                since = None
                continue
            if since is None:
                since = warned = now
                continue
            assert self.timeout_s is not None
            if now - since >= self.timeout_s:
                self._fail(stuck)
                since = None
            elif now - warned >= self._warn_s:
                warned = now
                log.warning("the Dask cluster %s has had no worker for %d s: %d unit(s) wait; "
                            "the run stops after %g s without one", self.where,
                            int(now - since), len(stuck), self.timeout_s)

    def _fail(self, stuck: list[tuple[Future[Any], Any, dict[str, float]]]) -> None:
        wanted = sorted({f"{k}={v:g}" for _, _, r in stuck for k, v in r.items()})
        asking = f", asking for {' and '.join(wanted)}" if wanted else ""
        err = ServiceError(
            f"the Dask cluster {self.where} has had no worker that can run the run's units "
            f"for {self.timeout_s:g} s ({len(stuck)} unit(s) waiting{asking}: every worker "
            f"lost, none started, or the scheduler gone); the run stops here. Finished work is in "
            f"the cache: run the same command again once the cluster has workers and it "
            f"resumes (DaskExecutor(no_workers_timeout=) waits longer)", fatal=True)
        log.error("%s", err)
        for out, dfut, _ in stuck:
            _settle(out, error=err)
            with contextlib.suppress(Exception):  # the scheduler may be gone as well
                dfut.cancel()

    def lost(self, cause: BaseException | None = None) -> ServiceError:
        """The error of a unit the cluster cancelled without being asked to (``cause``
        None), or whose result it could not deliver (``cause``: the transport's error). The
        cause comes last: a reason is cut at 300 characters, and the advice must survive."""
        what = ("cancelled a unit the run had not cancelled (the client lost its scheduler, "
                "or the cluster was closed)" if cause is None else
                "could not deliver a unit's result")
        why = "" if cause is None else f" ({type(cause).__name__}: {redact(cause, limit=80)})"
        return ServiceError(
            f"the Dask cluster {self.where} {what}; the run stops here. Finished work is in "
            f"the cache: run the same command again to resume{why}", fatal=True)


def _is_killed_worker(exc: BaseException) -> bool:
    """Whether ``exc`` is Dask's ``KilledWorker``: the workers running the unit died."""
    try:
        from distributed import KilledWorker
    except ImportError:  # pragma: no cover - a Dask future without distributed
        return False
    return isinstance(exc, KilledWorker)


def killed_worker_error(exc: BaseException) -> ServiceError:
    """The instrument's error for a unit whose workers kept dying while they ran it.

    A worker process that dies (a segfault, ``os._exit``, the kernel's OOM killer, the
    nanny's memory limit) takes every unit it was running with it, and the scheduler cannot
    tell which of them killed it; it gives up on a unit after
    ``distributed.scheduler.allowed-failures`` deaths. So the unit is nobody's failure that a
    score could carry: the items stay unscored and the run names no winner (a process that
    dies outside Dask ends the whole run). Not fatal: the rest of the run goes on and the
    same command retries these units from the cache.
    """
    failures = getattr(exc, "allowed_failures", None)  # deaths before Dask gives up, minus 1
    what = (f"{int(failures) + 1} workers died running it" if is_whole_number(failures)
            else redact(exc, limit=80))
    return ServiceError(
        f"the Dask workers running this unit kept dying ({type(exc).__name__}: {what}): a "
        f"crash, OOM or memory limit, from this unit or another on the same worker (the "
        f"cluster cannot tell which), so no clip counts against a system; the workers' logs "
        f"say why; rerun to retry")


def _fits(worker: dict[str, float], wanted: dict[str, float]) -> bool:
    """Whether a worker with these resources can run a unit that asks for ``wanted``."""
    return all(worker.get(k, 0.0) >= v for k, v in wanted.items())


def submit(client: Any, fn: Any, item: Any, *, resources: dict[str, float] | None = None,
           watch: WorkerWatch | None = None) -> Future[Any]:
    """``client.submit(fn, item)`` as a :class:`concurrent.futures.Future` (cancelling it
    cancels the Dask task); ``watch`` fails it when the cluster has no worker for it."""
    dfut = client.submit(fn, item, pure=False, resources=resources)
    out: Future[Any] = Future()

    def done(f: Any) -> None:
        if out.done():
            return
        # "error": the unit itself raised; a unit that finished but whose result cannot be
        # fetched (the connection to its worker or the scheduler is gone) is the cluster's.
        raised = getattr(f, "status", "error") == "error"
        try:
            res = f.result()
        except CancelledError as exc:  # not by the run (it cancels ``out`` first): the cluster
            _settle(out, error=watch.lost() if watch is not None else exc)
            return
        except BaseException as exc:
            if _is_killed_worker(exc):
                exc = killed_worker_error(exc)
            elif not raised and watch is not None:
                exc = watch.lost(exc)
            _settle(out, error=exc)
            return
        _settle(out, result=res)

    def cancelled(o: Future[Any]) -> None:
        if o.cancelled():
            dfut.cancel()

    out.add_done_callback(cancelled)
    if watch is not None:
        watch.track(out, dfut, resources)
    dfut.add_done_callback(done)
    return out


class DaskPlan:
    """Where the units of one run go on a Dask cluster (see the module docstring)."""

    def __init__(self, executor: Any) -> None:
        self.executor = executor
        self.client = executor.client
        self._gpu: dict[str, float] | bool | None = False

    def gpu_resources(self) -> dict[str, float] | None:
        """``{"GPU": 1}`` when a worker of the cluster advertises a GPU, else None."""
        if self._gpu is False:
            try:
                info = self.client.scheduler_info()
                workers = info.get("workers", {}).values()
                has = any(GPU_RESOURCE in (w.get("resources") or {}) for w in workers)
            except Exception:  # pragma: no cover - a scheduler without the info
                has = False
            self._gpu = {GPU_RESOURCE: 1.0} if has else None
        return self._gpu if isinstance(self._gpu, dict) else None

    def wants_gpu(self, component: Any) -> bool:
        """Whether ``component`` (a transcriber) runs on a GPU and the cluster has one."""
        device = str(getattr(component, "device", "") or "")
        return self.gpu_resources() is not None and device.startswith(("cuda", "auto"))

    def default_placement(self, system: Any) -> str:
        """The system's ``placement`` hook when it has one (the model adapters declare
        ``worker``), else ``client`` (the eSpeak lanes fork processes, which a daemonic Dask
        worker may not)."""
        return "worker" if getattr(system, "placement", None) == "worker" else "client"

    def submit(self, fn: Any, job: Any, *, gpu: bool = False) -> Future[Any]:
        """One model unit on the cluster (on a GPU worker when there is one and ``gpu``)."""
        return submit(self.client, fn, job, resources=self.gpu_resources() if gpu else None,
                      watch=getattr(self.executor, "watch", None))
