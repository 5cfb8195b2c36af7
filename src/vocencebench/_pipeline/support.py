"""The machinery of a run that is not a stage (:mod:`.engine` uses it): the event loop of
the coordinator, progress bars, where the analysis units run, and the checks that a
component can travel to another process."""

from __future__ import annotations

import abc
import queue
import threading
import time
import weakref
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from typing import TYPE_CHECKING, Any

from .._util import failures as fail
from .._util.mp import references_main
from ..errors import ConfigError, is_fatal
from .stages import Handle, handle, pickle_problem

if TYPE_CHECKING:
    from ..adapters import SystemHooks

__all__ = ["EventLoop", "Halted", "ProgressBars", "Runner", "analysis_placement",
           "refuse_on_dask", "skipped", "synth_lane", "unpicklable"]


class EventLoop(abc.ABC):
    """The coordinator of a run: it alone changes the run's state, reacting to completion
    events (:meth:`_watch`) that the stage threads put on one queue. A subclass says what it
    wants next (:meth:`_wants_more`, :meth:`_next_work`) and stops its own stages
    (:meth:`_stop`)."""

    def __init__(self) -> None:
        self._q: queue.Queue[tuple[Callable[..., None], tuple[Any, ...], Future[Any]]] = (
            queue.Queue())
        self._in_flight: set[Future[Any]] = set()
        self._stopped: str | None = None
        #: Why the run stopped early (a fatal error), or None.
        self.stop_reason: str | None = None
        # Set by any stage thread that meets a fatal error, read by every unit before it
        # starts: queued work stops at once, without waiting for the coordinator.
        self._halt = threading.Event()
        self._error: BaseException | None = None
        self._spans: dict[str, list[float]] = {}
        self._t0 = time.perf_counter()

    @abc.abstractmethod
    def _wants_more(self) -> bool:
        """Whether work remains that is not yet in flight."""

    @abc.abstractmethod
    def _next_work(self) -> None:
        """Start whatever work may start now (within the run's windows)."""

    @abc.abstractmethod
    def _stalled(self) -> str:
        """What is waiting, for the internal error raised when nothing is in flight."""

    def _serve(self) -> None:
        """Start the next work, then react to events until nothing is in flight and nothing
        more is wanted; a ConfigError from a reaction stops the run and is raised at the end."""
        self._next_work()
        while self._in_flight or self._wants_more():
            if not self._in_flight:
                raise RuntimeError("internal error: the pipeline stalled with "
                                   f"{self._stalled()}")  # pragma: no cover
            fn, args, fut = self._q.get()
            self._in_flight.discard(fut)
            try:
                fn(*args, fut)
            except ConfigError as exc:
                self._error = exc
                self._stop(fail.reason("config", exc))
            self._next_work()
        if self._error is not None:
            raise self._error

    def _watch(self, fut: Future[Any], fn: Callable[..., None], *args: Any) -> None:
        self._in_flight.add(fut)
        fut.add_done_callback(lambda f: self._q.put((fn, args, f)))

    def _span(self, stage: str) -> None:
        now = time.perf_counter() - self._t0
        span = self._spans.setdefault(stage, [now, now])
        span[1] = now

    def _guarded(self, fn: Callable[..., Any], *args: Any, **kw: Any) -> Any:
        """Run a unit in a stage thread unless the run is halting; a fatal error halts it."""
        if self._halt.is_set():
            raise Halted
        try:
            return fn(*args, **kw)
        except BaseException as exc:
            if is_fatal(exc):
                self._halt.set()
            raise

    def _stop(self, reason: str) -> None:
        """Stop the run for ``reason``: halt the stage threads and cancel what is in flight."""
        self._stopped = self.stop_reason = reason
        self._halt.set()
        for fut in list(self._in_flight):
            fut.cancel()

    def timings(self) -> dict[str, float]:
        """Seconds from the start of the run to the first and last event of each stage."""
        out = {f"{k}_s": round(v[1] - v[0], 6) for k, v in sorted(self._spans.items())}
        out["pipeline_s"] = round(time.perf_counter() - self._t0, 6)
        return out


class ProgressBars:
    """Rich progress bars, one per stage, updated by the coordinator only."""

    def __init__(self, enabled: bool, n: int, labels: tuple[str, str], *, judge: bool
                 ) -> None:
        self._p: Any = None
        self._t: dict[str, Any] = {}
        if not enabled or n == 0:
            return
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            Progress,
            TextColumn,
            TimeRemainingColumn,
        )

        self._p = Progress(TextColumn("{task.description:<14}"), BarColumn(),
                           MofNCompleteColumn(), TimeRemainingColumn(), transient=False)
        from rich.markup import escape

        from .._util.text import terminal_safe

        for name, total in ((f"synth {labels[0]}", n), (f"synth {labels[1]}", n),
                            ("analyse", 2 * n), ("judge", 0), ("items", n)):
            if name != "judge" or judge:
                # A label is shown, never obeyed: no control character, no Rich markup.
                self._t[name] = self._p.add_task(escape(terminal_safe(name)), total=total)
        self._p.start()

    def tick(self, name: str, n: int = 1) -> None:
        if self._p is not None and name in self._t:
            self._p.advance(self._t[name], n)

    def grow(self, name: str, n: int) -> None:
        if self._p is not None and name in self._t:
            task = self._p.tasks[self._t[name]]
            self._p.update(self._t[name], total=(task.total or 0) + n)

    def stop(self) -> None:
        if self._p is not None:
            self._p.stop()


class Runner:
    """Where analysis and batched units run: ``submit(fn, job, gpu=...) -> Future``."""

    def __init__(self, executor: Any, *, in_process: bool, gpu: dict[str, float] | None
                 ) -> None:
        self._exe = executor
        self._gpu = gpu
        self._threads: ThreadPoolExecutor | None = None
        self.remote = False
        if in_process or not callable(getattr(executor, "submit", None)):
            self._threads = ThreadPoolExecutor(1, thread_name_prefix="vocencebench-analyse")
            self.limit = 2
        else:
            self.remote = True
            self.limit = max(2, 4 * int(getattr(executor, "workers", 1) or 1))
        self.is_dask = getattr(executor, "name", "") == "dask"
        #: Units on a local process pool: an interrupt leaves them to the pool's own abort.
        self._pooled: weakref.WeakSet[Future[Any]] = weakref.WeakSet()

    def submit(self, fn: Callable[[Any], Any], job: Any, *, gpu: bool = False) -> Future[Any]:
        if self._threads is not None:
            return self._threads.submit(fn, job)
        if self.is_dask:
            res = self._gpu if gpu else None
            fut: Future[Any] = self._exe.submit(fn, job, resources=res)
            return fut
        fut = self._exe.submit(fn, job)
        if self.aborts:
            self._pooled.add(fut)
        return fut

    @property
    def aborts(self) -> bool:
        """True when :meth:`close` with ``now`` stops this runner's units itself (a local
        process pool's ``abort``): their futures are the pool's to cancel. Cancelling one beside
        the pool can kill CPython's pool manager thread, and then the interrupted run's exit
        hangs (:meth:`vocencebench.executor.LocalExecutor.abort`)."""
        return (self.remote and not self.is_dask
                and callable(getattr(self._exe, "abort", None)))

    def owns(self, fut: Future[Any]) -> bool:
        """Whether ``fut`` is a unit that :meth:`close` with ``now`` stops (see :attr:`aborts`)."""
        return fut in self._pooled

    def close(self, *, now: bool = False) -> None:
        if self._threads is not None:
            self._threads.shutdown(wait=not now, cancel_futures=True)
        abort = getattr(self._exe, "abort", None)
        if now and self.remote and callable(abort):
            abort()


class Halted(Exception):
    """A unit that did not start because the run is halting (a fatal error)."""


def skipped(fut: Future[Any]) -> bool:
    """Whether the unit of ``fut`` never ran: cancelled, or refused by a halting run."""
    return fut.cancelled() or isinstance(fut.exception(), Halted)


_IN_SCRIPT = "in_script"


def _script_problem(obj: object) -> str | None:
    """Why ``obj`` cannot run in a local worker process, or None: it does not pickle, or it
    pickles by reference to the calling script (``__main__``), which those workers do not
    import (``_util.mp``: a script without a ``__main__`` guard would run again in each)."""
    why = pickle_problem(obj)
    if why is None and references_main(obj):
        return _IN_SCRIPT
    return why


def unpicklable(components: Sequence[tuple[str, object]], *,
                local_pool: bool = False) -> list[str]:
    """For each component that does not pickle (so cannot run in another process): what it
    is and why; for a probe set (or a tuple of probes), the probe that is the cause. With
    ``local_pool``, also each one defined in the calling script (see :func:`_script_problem`;
    Dask's workers receive such classes by value)."""
    problem = _script_problem if local_pool else pickle_problem
    out = []
    for what, obj in components:
        why = None if obj is None else problem(obj)
        if why is None:
            continue
        name = f"{what} {type(obj).__qualname__}"
        if what == "probe set":
            members = obj if isinstance(obj, tuple) else (
                *getattr(obj, "probes", ()), *getattr(obj, "diagnostics", ()))
            for p in members:
                cause = problem(p)
                if cause is not None:
                    name, why = f"probe {p.name}@{p.version}", cause
                    break
        elif what == "transcriber":
            name = f"transcriber {getattr(obj, 'engine', type(obj).__qualname__)}"
        out.append(f"{name} is defined in the calling script (__main__), which the worker "
                   "processes do not import" if why == _IN_SCRIPT
                   else f"{name} cannot be pickled ({why})")
    return out


def refuse_on_dask(stuck: Sequence[str], work: str) -> None:
    """A Dask run sends ``work`` to the workers; a component that cannot travel is refused,
    never run quietly in the client instead (the run would claim work it did not do)."""
    if stuck:
        raise ConfigError(
            f"the Dask executor runs {work} on its workers, but {'; '.join(stuck)}: make it "
            "picklable (a module-level class holding no lambda, open file, lock or client), "
            "or run with --executor local (executor='local')")


def analysis_placement(per_clip: object, batched: Sequence[object], transcriber: object,
                       executor: Any, dask: Any) -> tuple[bool, str | None]:
    """(whether the per-clip analysis must run in this process, the note that says so when
    the executor has workers it will not use). A Dask run refuses what cannot travel
    (:func:`refuse_on_dask`), the per-clip analysis and the batched probes alike."""
    components = (("probe set", per_clip), ("transcriber", transcriber))
    stuck = unpicklable(components, local_pool=dask is None)
    if dask is not None:
        refuse_on_dask(stuck, "the per-clip analysis")
        if batched:
            refuse_on_dask(unpicklable((("probe set", tuple(batched)),)), "the batched probes")
        return bool(stuck), None
    if not (stuck and callable(getattr(executor, "submit", None))):
        return bool(stuck), None
    # The pool cannot take the component: the analysis runs here, in one thread — said
    # loudly, since the run would otherwise look like it used the pool.
    return True, (f"ANALYSIS IN ONE CLIENT THREAD: {'; '.join(stuck)}; so the per-clip "
                  f"analysis runs in one thread of this process, not on the "
                  f"{getattr(executor, 'name', '?')} executor's "
                  f"{getattr(executor, 'workers', '?')} worker(s) — make it picklable and "
                  "importable (a class at the top of a module of its own, holding no lambda, "
                  "open file, lock or client) to use them")


def synth_lane(system: Any, hooks: SystemHooks, label: str, concurrency: int | None, dask: Any
               ) -> tuple[int, bool, Handle[Any] | None]:
    """How one side synthesises: (requests or chunks in flight, whether a Dask worker runs
    it, the handle of a batched system). A batched system placed on a worker must pickle."""
    limit = concurrency or hooks.concurrency or 1
    if not (hooks.batched and not hooks.per_item):
        return limit, False, None
    placement = hooks.placement or dask.default_placement(system) if dask else None
    remote = placement == "worker"
    if remote:
        refuse_on_dask(unpicklable(((f"system {label!r}", system),)),
                       f"the synthesis of system {label!r} (placement 'worker'; set its "
                       "placement = 'client' to synthesise in this process)")
    return limit, remote, handle(system, portable=remote)
