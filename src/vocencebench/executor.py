"""Where units of work run: in this process, a local process pool, or a Dask cluster.

One small interface, :class:`Executor`: ``map_unordered(fn, items)`` yields
``(index, result)`` as units finish, whatever the order. Callers put results back in index
order, so the output never depends on the executor or its worker count. ``fn`` and the
items must be picklable for the pool and Dask executors (module-level functions).
"""

from __future__ import annotations

import multiprocessing
import os
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from typing import Any, Protocol, TypeVar, runtime_checkable

from .errors import ConfigError, MissingDependencyError

__all__ = [
    "DaskExecutor",
    "Executor",
    "LocalExecutor",
    "SerialExecutor",
    "default_workers",
    "make_executor",
]

T = TypeVar("T")
R = TypeVar("R")


def default_workers() -> int:
    """Worker processes for CPU work: the CPUs this process may use."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # pragma: no cover - not Linux
        return max(1, os.cpu_count() or 1)


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

    def map_unordered(
        self, fn: Callable[[T], R], items: Iterable[T], *, max_in_flight: int | None = None
    ) -> Iterator[tuple[int, R]]:
        for i, item in enumerate(items):
            yield i, fn(item)

    def close(self) -> None:
        return None


class LocalExecutor:
    """A local process pool (``forkserver`` start method) with bounded in-flight work."""

    name = "local"

    def __init__(self, workers: int | None = None) -> None:
        self.workers = workers or default_workers()
        if self.workers < 1:
            raise ConfigError(f"workers must be ≥ 1, not {workers}")
        self._pool: ProcessPoolExecutor | None = None

    def _get_pool(self) -> ProcessPoolExecutor:
        if self._pool is None:
            method = "forkserver" if "forkserver" in multiprocessing.get_all_start_methods() \
                else "spawn"
            self._pool = ProcessPoolExecutor(
                max_workers=self.workers, mp_context=multiprocessing.get_context(method)
            )
        return self._pool

    def map_unordered(
        self, fn: Callable[[T], R], items: Iterable[T], *, max_in_flight: int | None = None
    ) -> Iterator[tuple[int, R]]:
        pool = self._get_pool()
        limit = max_in_flight or 4 * self.workers
        pending: dict[Future[R], int] = {}
        it = iter(enumerate(items))
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

    def submit(self, fn: Callable[[T], R], item: T) -> Future[R]:
        """One unit on the pool, now (the streaming pipeline bounds what is in flight)."""
        return self._get_pool().submit(fn, item)

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=True, cancel_futures=True)
            self._pool = None


class DaskExecutor:
    """Units of work on a Dask distributed cluster.

    ``address`` is a scheduler (``tcp://host:8786``); without it a ``LocalCluster`` of
    ``workers`` processes is started on 127.0.0.1 (no dashboard). A dask-jobqueue cluster
    object (Slurm/PBS) can be passed as ``cluster``. Needs the ``dask`` extra.
    """

    name = "dask"

    def __init__(
        self,
        address: str | None = None,
        *,
        workers: int | None = None,
        cluster: Any = None,
        resources: dict[str, float] | None = None,
    ) -> None:
        try:
            import dask
            from distributed import Client, LocalCluster
        except ImportError as exc:
            raise MissingDependencyError("the Dask executor", "dask",
                                         package="dask[distributed]") from exc
        self.workers = workers or default_workers()
        self._resources = resources
        self._own_cluster = None
        if cluster is not None:
            self._client = Client(cluster)  # type: ignore[no-untyped-call]
        elif address:
            self._client = Client(address)  # type: ignore[no-untyped-call]
        else:
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

    def map_unordered(
        self, fn: Callable[[T], R], items: Iterable[T], *, max_in_flight: int | None = None
    ) -> Iterator[tuple[int, R]]:
        from distributed import as_completed

        indexed = list(enumerate(items))
        futures = [
            self._client.submit(fn, item, pure=False, resources=self._resources, key=None)
            for _, item in indexed
        ]
        index_of = {f.key: i for f, (i, _) in zip(futures, indexed, strict=True)}
        for fut in as_completed(futures):  # type: ignore[no-untyped-call]
            yield index_of[fut.key], fut.result()

    @property
    def client(self) -> Any:
        """The ``distributed.Client`` (for :mod:`vocencebench._dask`)."""
        return self._client

    def submit(self, fn: Callable[[T], R], item: T, *,
               resources: dict[str, float] | None = None) -> Future[R]:
        """One unit on the cluster as a :class:`concurrent.futures.Future`; a worker lost
        mid-unit makes Dask run it again elsewhere."""
        from ._dask import submit

        return submit(self._client, fn, item, resources=resources or self._resources)

    def close(self) -> None:
        self._client.close()  # type: ignore[no-untyped-call]
        if self._own_cluster is not None:
            self._own_cluster.close()  # type: ignore[no-untyped-call]


def make_executor(spec: str | None = None, *, workers: int | None = None) -> Executor:
    """``None``/``local`` → local process pool (serial when workers = 1);
    ``dask`` → a local Dask cluster; ``dask:tcp://host:8786`` → an existing scheduler
    (the forms live in :mod:`vocencebench.specs`)."""
    from . import specs

    exe: Executor = specs.build("executor", spec, workers=workers)
    return exe
