"""Where units of work run: in this process, a local process pool, or a Dask cluster.

An executor is built from a spec (``local``, ``serial``, ``dask[:ADDRESS]``) by
:func:`vocencebench.specs.make_executor`, the one registry of spec kinds; this module holds
the interface and its implementations. One small interface, :class:`Executor`:
``map_unordered(fn, items)`` yields
``(index, result)`` as units finish, whatever the order. Callers put results back in index
order, so the output never depends on the executor or its worker count. ``fn`` and the
items must be picklable for the pool and Dask executors (module-level functions).

Worker counts are capped at what the machine and the work can use: the CPUs this process
may run on (``sched_getaffinity``) and, when known, the number of units. A capped executor
says so in its ``note`` attribute (also logged at INFO). ``workers < 1`` is a ConfigError,
never "all CPUs". Pool workers die with the run (see :mod:`vocencebench._util.procs`).
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from typing import Any, Protocol, TypeVar, runtime_checkable

from ._numbers import is_finite_number, is_whole_number
from ._util.deps import require
from ._util.procs import usable_cpus
from .constants import DASK_NO_WORKERS_TIMEOUT_S
from .errors import ConfigError
from .redact import MASK, redact, safe_url

__all__ = [
    "DaskExecutor",
    "Executor",
    "LocalExecutor",
    "SerialExecutor",
    "capped_workers",
    "check_dask_address",
    "check_workers",
    "default_workers",
]

T = TypeVar("T")
R = TypeVar("R")

log = logging.getLogger(__name__)


def default_workers() -> int:
    """Worker processes for CPU work: the CPUs this process may use."""
    return usable_cpus()


def check_workers(workers: object) -> int | None:
    """``workers`` if it is None or a whole number ≥ 1; else ConfigError (0 is not "all")."""
    if workers is None:
        return None
    if not is_whole_number(workers) or workers < 1:
        raise ConfigError(f"workers must be a whole number ≥ 1 (or unset for one per CPU), "
                          f"got {workers!r}")
    return workers


def capped_workers(workers: int | None, units: int | None = None) -> tuple[int, str | None]:
    """(worker processes to start, a note when the request was capped).

    At most the CPUs available (:func:`default_workers`) and, when ``units`` is known, the
    number of units (at least 1).
    """
    requested = check_workers(workers)
    cpus = default_workers()
    n = cpus if requested is None else min(requested, cpus)
    notes = []
    if requested is not None and requested > cpus:
        notes.append(f"{cpus} CPU(s) available")
    if units is not None and n > max(1, units):
        n = max(1, units)
        if requested is not None:
            notes.append(f"{units} unit(s) of work")
    note = None
    if requested is not None and n < requested:
        note = f"workers capped at {n} (asked for {requested}; {' and '.join(notes)})"
        log.info(note)
    return n, note


@runtime_checkable
class Executor(Protocol):
    """Runs ``fn`` over ``items``, yielding ``(index, result)`` as each unit finishes."""

    name: str
    workers: int

    def map_unordered(
        self, fn: Callable[[T], R], items: Iterable[T], *, max_in_flight: int | None = None
    ) -> Iterator[tuple[int, R]]: ...

    def close(self) -> None: ...


class SerialExecutor:
    """Everything in this process, in order (workers = 1)."""

    name = "serial"
    workers = 1
    note: str | None = None

    def map_unordered(
        self, fn: Callable[[T], R], items: Iterable[T], *, max_in_flight: int | None = None
    ) -> Iterator[tuple[int, R]]:
        for i, item in enumerate(items):
            yield i, fn(item)

    def close(self) -> None:
        return None


class LocalExecutor:
    """A local process pool (``forkserver`` start method) with bounded in-flight work.

    ``workers`` (default: one per CPU) is capped at the CPUs available and at ``units`` when
    given; :attr:`note` says why when it was. Processes start on demand, so a map over fewer
    units than workers starts only as many as it needs. Workers ignore SIGINT and die with
    the process that made the pool, even on SIGKILL (:func:`vocencebench._util.procs.worker_init`).
    """

    name = "local"

    def __init__(self, workers: int | None = None, *, units: int | None = None) -> None:
        self.workers, self.note = capped_workers(workers, units)
        self._pool: ProcessPoolExecutor | None = None

    def _get_pool(self, *payload: object) -> ProcessPoolExecutor:
        if self._pool is None:
            # Children re-import the caller's __main__ only when the work refers to it, so a
            # script without a __main__ guard runs (see vocencebench._util.mp).
            from ._util.mp import references_main, worker_context
            from ._util.procs import worker_init, worker_initargs

            self._pool = ProcessPoolExecutor(
                max_workers=self.workers,
                mp_context=worker_context(import_main=references_main(*payload)),
                initializer=worker_init, initargs=worker_initargs(),
            )
        return self._pool

    def map_unordered(
        self, fn: Callable[[T], R], items: Iterable[T], *, max_in_flight: int | None = None
    ) -> Iterator[tuple[int, R]]:
        try:
            yield from self._map_unordered(fn, items, max_in_flight=max_in_flight)
        except BaseException:  # Ctrl-C, an error, the caller gave up: stop the workers now
            self.abort()
            raise

    def _map_unordered(
        self, fn: Callable[[T], R], items: Iterable[T], *, max_in_flight: int | None = None
    ) -> Iterator[tuple[int, R]]:
        it = iter(enumerate(items))
        try:
            first = next(it)
        except StopIteration:
            return
        pool = self._get_pool(fn, first[1])
        limit = max_in_flight or 4 * self.workers
        pending: dict[Future[R], int] = {pool.submit(fn, first[1]): first[0]}
        exhausted = False
        while True:
            while not exhausted and len(pending) < limit:
                try:
                    i, item = next(it)
                except StopIteration:
                    exhausted = True
                    break
                pending[pool.submit(fn, item)] = i
            if not pending:
                return
            done, _ = wait(pending, return_when=FIRST_COMPLETED)
            for fut in done:
                i = pending.pop(fut)
                yield i, fut.result()

    def abort(self) -> None:
        """Stop at once: kill the workers (their running units are lost; results are only
        stored by the caller, so nothing is half-written) and drop the pool."""
        pool, self._pool = self._pool, None
        if pool is None:
            return
        procs = list((getattr(pool, "_processes", None) or {}).values())
        # The pool's feeder thread may be blocked writing a unit (a whole clip: more than a
        # pipe holds) to the workers killed below. CPython closes that pipe when it notices the
        # dead workers, unless its manager thread dies first (it raises InvalidStateError on a
        # future cancelled outside the pool); then the exit would wait for the feeder forever.
        # The queue is not joined at exit: its pending units are lost anyway.
        call_queue = getattr(pool, "_call_queue", None)
        if call_queue is not None:
            with contextlib.suppress(Exception):
                call_queue.cancel_join_thread()
        for p in procs:
            with contextlib.suppress(Exception):
                p.kill()
        pool.shutdown(wait=False, cancel_futures=True)
        for p in procs:
            with contextlib.suppress(Exception):
                p.join(timeout=5)

    def submit(self, fn: Callable[[T], R], item: T) -> Future[R]:
        """One unit on the pool, now (the streaming pipeline bounds what is in flight)."""
        return self._get_pool(fn, item).submit(fn, item)

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=True, cancel_futures=True)
            self._pool = None


def check_dask_address(address: str) -> None:
    """ConfigError for a Dask scheduler address that carries credentials (``user:pw@host``,
    with or without a scheme), the credentials masked in the message: Dask authenticates with
    TLS, and the address is printed and recorded in run.json."""
    rest = address.split("://", 1)
    authority = rest[-1].split("/", 1)[0]
    if "@" in authority:
        shown = (rest[0] + "://" if len(rest) == 2 else "") + f"{MASK}@" + (
            authority.rpartition("@")[2])
        raise ConfigError(f"a Dask scheduler address carries no credentials: {shown!r} (use "
                          "Dask's TLS security settings)")


class DaskExecutor:
    """Units of work on a Dask distributed cluster.

    ``address`` is a scheduler (``tcp://host:8786``); without it a ``LocalCluster`` of
    ``workers`` processes is started on 127.0.0.1 (no dashboard). A dask-jobqueue cluster
    object (Slurm/PBS) can be passed as ``cluster``. Needs the ``dask`` extra.

    ``no_workers_timeout`` (seconds; default ``DASK_NO_WORKERS_TIMEOUT_S``, None: wait for
    ever) bounds how long units wait while the cluster has no worker that can run them
    (every worker lost, none started yet, the scheduler gone): the run then stops with one
    error naming the cluster, and finished work stays in the cache for the rerun. A
    batch-queue cluster whose first job may queue for longer needs a larger value.
    """

    name = "dask"

    def __init__(
        self,
        address: str | None = None,
        *,
        workers: int | None = None,
        cluster: Any = None,
        resources: dict[str, float] | None = None,
        no_workers_timeout: float | None = DASK_NO_WORKERS_TIMEOUT_S,
    ) -> None:
        from ._pipeline.dask import WorkerWatch

        if no_workers_timeout is not None and not (
                is_finite_number(no_workers_timeout) and no_workers_timeout > 0):
            raise ConfigError(f"no_workers_timeout must be a number of seconds > 0 (or None "
                              f"to wait for ever), got {no_workers_timeout!r}")
        need = ("the Dask executor", "dask")
        dask = require("dask", *need, package="dask[distributed]")
        distributed = require("distributed", *need, package="dask[distributed]")
        Client, LocalCluster = distributed.Client, distributed.LocalCluster
        self.workers = check_workers(workers) or default_workers()
        self._resources = resources
        self._own_cluster = None
        if cluster is not None:
            address_of = getattr(cluster, "scheduler_address", None)
            where = type(cluster).__name__ + (f" at {safe_url(address_of)}"
                                              if isinstance(address_of, str) else "")
            self._client = Client(cluster)  # type: ignore[no-untyped-call]
        elif address:
            check_dask_address(address)
            where = safe_url(address)
            try:
                self._client = Client(address)  # type: ignore[no-untyped-call]
            except (OSError, ValueError, TimeoutError) as exc:
                raise ConfigError(f"cannot reach the Dask scheduler {safe_url(address)!r}: "
                                  f"{redact(exc)}") from None
        else:
            where = "LocalCluster on 127.0.0.1"
            # Dask's workers default to MALLOC_TRIM_THRESHOLD_=65536, which doubled task
            # time on small numpy work here; leave glibc's default.
            dask.config.set(
                {"distributed.nanny.pre-spawn-environ.MALLOC_TRIM_THRESHOLD_": None}
            )
            self._own_cluster = LocalCluster(  # type: ignore[no-untyped-call]
                n_workers=self.workers, threads_per_worker=1, processes=True,
                host="127.0.0.1", dashboard_address=None,
            )
            self._client = Client(self._own_cluster)  # type: ignore[no-untyped-call]
        self._watch = WorkerWatch(self._client, where=where,
                                  timeout_s=None if no_workers_timeout is None
                                  else float(no_workers_timeout))

    def map_unordered(
        self, fn: Callable[[T], R], items: Iterable[T], *, max_in_flight: int | None = None
    ) -> Iterator[tuple[int, R]]:
        from concurrent.futures import as_completed

        futures = {self.submit(fn, item): i for i, item in enumerate(items)}
        try:
            for fut in as_completed(futures):
                yield futures[fut], fut.result()
        finally:  # a caller that stops early (or an error) leaves nothing running
            for fut in futures:
                fut.cancel()

    @property
    def watch(self) -> Any:
        """The :class:`~vocencebench._pipeline.dask.WorkerWatch` of this cluster."""
        return self._watch

    @property
    def client(self) -> Any:
        """The ``distributed.Client`` (for :mod:`vocencebench._pipeline.dask`)."""
        return self._client

    def submit(self, fn: Callable[[T], R], item: T, *,
               resources: dict[str, float] | None = None) -> Future[R]:
        """One unit on the cluster as a :class:`concurrent.futures.Future`; a worker lost
        mid-unit makes Dask run it again elsewhere."""
        from ._pipeline.dask import submit

        return submit(self._client, fn, item, resources=resources or self._resources,
                      watch=self._watch)

    def close(self) -> None:
        self._watch.close()
        self._client.close()  # type: ignore[no-untyped-call]
        if self._own_cluster is not None:
            self._own_cluster.close()  # type: ignore[no-untyped-call]
