"""The streaming run: items flow through the stages with bounded work in flight.

One coordinator (the thread that called :func:`~vocencebench.compare.benchmark`) owns every
item's state and reacts to completion events; the stages run elsewhere and report back
through one queue::

    corpus ─► admit (≤ window items open at once, corpus order)
      │
      ├─► synthesis a ─┐  per-item systems: ``concurrency`` client threads
      ├─► synthesis b ─┤  batched systems: chunks of 16, a client thread or a Dask worker
      │                ▼  each clip committed to the cache as it arrives
      │        clip ready: one Clip per side ─► analyse (executor: decode, gate, per-clip
      │                          │                       probes)
      │                          └─► batched probes (client thread / Dask GPU worker)
      │        both sides analysed ─► judge (``judge_concurrency`` client threads)
      └─────────── item closed ─► combine ─► PairResult placed by its corpus index

Nothing waits for a stage to finish the whole corpus: the judge and the gate start as soon as
an item's two clips exist. Each open item holds its side's :class:`~vocencebench.audio.Clip`
(bytes, sha256, audio decoded on first use), made once when the bytes arrive (synthesised or
read back from the cache) and shared by every stage in this process — the in-process
analysis, the batched probes, the judge — so a clip is decoded once here; an analysis unit
sent to a worker process decodes its own copy there. The clip is dropped when nothing after
it needs it (the item closes, or its analysis is done and there is no judge), so memory is
bounded by the items open, not by the corpus. Results are placed by item index: completion
order never changes the output.

Failures follow :mod:`vocencebench._util.failures`: a system's failure scores that side 0; an
instrument's makes the item incomplete and is never cached as done (a rerun retries it); a
fatal instrument error (:func:`~vocencebench.errors.is_fatal`) cancels what is queued, lets
what is running finish, and marks every unfinished item incomplete with that reason.
"""

from __future__ import annotations

import copy
import logging
import queue
import threading
import time
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from typing import Any

from .._util import failures as fail
from ..adapters import SystemHooks, synthesize_item
from ..audio import Clip
from ..cache import Cache, cache_key, clip_key
from ..errors import ConfigError, is_fatal
from ..judge import PairJudge
from ..pair import ClipAnalysis, PairResult, combine, needs_judge
from ..probes.base import BatchedProbe, ProbeSuite
from ..result import PairList
from ..schema import Item, ProbeResult, Verdict
from ..traits import TraitRegistry
from ..transcribe import Transcriber
from .stages import (
    BatchJob,
    ClipJob,
    ClipOutcome,
    Handle,
    SynthJob,
    analyse,
    handle,
    judge_pair,
    measure,
    pickle_problem,
    synthesize,
)

__all__ = ["DEFAULT_WINDOW", "SPILL_PAIRS", "Engine", "RunOptions"]

log = logging.getLogger(__name__)

#: Items open (admitted, not yet closed) at once: bounds memory and the work in flight.
DEFAULT_WINDOW = 64
#: Requests per call of a batched system (a resume redoes at most one chunk per system).
SYNTH_CHUNK = 16
#: Clips per call of the batched (model-backed) probes.
BATCH_CLIPS = 32
#: Runs of more items keep their finished pairs on disk (:class:`~vocencebench.result.
#: PairList`) instead of in memory (about 30 KB a pair), so memory does not grow with them.
SPILL_PAIRS = 1000


@dataclass(frozen=True)
class RunOptions:
    """What the caller of :func:`~vocencebench.compare.benchmark` asked for."""

    labels: tuple[str, str]
    registry: TraitRegistry
    dimensions: tuple[str, ...]
    consistent: bool = True
    votes: int = 1
    judge_concurrency: int = 4
    all_at_once: bool = False
    concurrency: tuple[int | None, int | None] = (None, None)
    window: int = DEFAULT_WINDOW
    progress: bool = False


@dataclass
class _Side:
    key: str
    sha: str | None = None
    # The one Clip of this side in the client, made when its bytes arrive and dropped when
    # the item closes: the in-process analysis, the batched probes and the judge share it,
    # so the clip is decoded once in this process (a worker process decodes its own copy).
    clip: Clip | None = None
    keys: tuple[str, str] = ("", "")  # (transcript key, probe key)
    part: dict[str, Any] | None = None
    transcript: dict[str, Any] | None = None
    analysis: ClipAnalysis | None = None


@dataclass
class _Open:
    index: int
    item: Item
    sides: tuple[_Side, _Side]
    verdicts: dict[str, Verdict] = field(default_factory=dict)
    jfail: dict[str, str] = field(default_factory=dict)
    judge_left: int = 0


class _Progress:
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
        for name, total in ((f"synth {labels[0]}", n), (f"synth {labels[1]}", n),
                            ("analyse", 2 * n), ("judge", 0), ("items", n)):
            if name != "judge" or judge:
                self._t[name] = self._p.add_task(name, total=total)
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


class _Runner:
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

    def submit(self, fn: Callable[[Any], Any], job: Any, *, gpu: bool = False) -> Future[Any]:
        if self._threads is not None:
            return self._threads.submit(fn, job)
        if self.is_dask:
            res = self._gpu if gpu else None
            fut: Future[Any] = self._exe.submit(fn, job, resources=res)
            return fut
        fut = self._exe.submit(fn, job)
        return fut

    def close(self, *, now: bool = False) -> None:
        if self._threads is not None:
            self._threads.shutdown(wait=not now, cancel_futures=True)
        abort = getattr(self._exe, "abort", None)
        if now and self.remote and callable(abort):
            abort()


class Engine:
    """One run of the stages over ``items`` (see the module docstring)."""

    def __init__(
        self,
        items: Sequence[Item],
        systems: tuple[Any, Any],
        hooks: tuple[SystemHooks, SystemHooks],
        *,
        options: RunOptions,
        probes: ProbeSuite | None,
        transcriber: Transcriber | None,
        judge: PairJudge | None,
        store: Cache,
        clip_stores: tuple[Cache, Cache],
        executor: Any,
        dask: Any = None,
        preflight: Callable[[], None] | None = None,
    ) -> None:
        self.items = list(items)
        self.systems = systems
        self.hooks = hooks
        self.opt = options
        self.probes = probes
        self.transcriber = transcriber
        self.judge = judge
        self.store = store
        self.clip_stores = clip_stores
        self.dask = dask
        self.preflight = preflight
        self._q: queue.Queue[tuple[Callable[..., None], tuple[Any, ...], Future[Any]]] = (
            queue.Queue())
        self._in_flight: set[Future[Any]] = set()
        # Small runs keep their pairs in memory; large ones spill each to disk as it closes.
        self._spill: PairList | None = (PairList(len(self.items))
                                        if len(self.items) > SPILL_PAIRS else None)
        self._results: list[PairResult | None] = (
            [] if self._spill is not None else [None] * len(self.items))
        self._open: dict[int, _Open] = {}
        self._next = 0
        self._stopped: str | None = None
        # Set by any stage thread that meets a fatal error, read by every unit before it
        # starts: queued work stops at once, without waiting for the coordinator.
        self._halt = threading.Event()
        self._error: BaseException | None = None
        self._spans: dict[str, list[float]] = {}
        self._t0 = time.perf_counter()
        self.stop_reason: str | None = None

        # -- probes: per-clip part (executor) and batched part (one model copy)
        per_clip, batched = _split_batched(probes)
        self._batched: tuple[BatchedProbe, ...] = batched
        self._batched_traits = tuple(t for p in batched for t in p.traits)
        #: Status lines about where work runs that differ from what the executor promises
        #: (the run's metadata and summary show them).
        self.notes: list[str] = []
        stuck = _unpicklable((("probe set", per_clip), ("transcriber", transcriber)))
        if dask is not None:
            _refuse_on_dask(stuck, "the per-clip analysis")
            if batched:
                _refuse_on_dask(_unpicklable((("probe set", batched),)), "the batched probes")
        elif stuck and callable(getattr(executor, "submit", None)):
            # The pool cannot take the component: the analysis runs here, in one thread —
            # said loudly, since the run would otherwise look like it used the pool.
            note = (f"ANALYSIS IN ONE CLIENT THREAD: {'; '.join(stuck)}; so the per-clip "
                    f"analysis runs in one thread of this process, not on the "
                    f"{getattr(executor, 'name', '?')} executor's "
                    f"{getattr(executor, 'workers', '?')} worker(s) — make it picklable (a "
                    "module-level class holding no lambda, open file, lock or client) to use "
                    "them")
            log.warning("%s", note)
            self.notes.append(note)
        gpu = dask.gpu_resources() if dask is not None else None
        self._runner = _Runner(executor, in_process=bool(stuck), gpu=gpu)
        remote = self._runner.remote
        self._per_clip = handle(per_clip, portable=remote) if per_clip is not None else None
        self._trans = handle(transcriber, portable=remote) if transcriber is not None else None
        self._trans_gpu = dask is not None and dask.wants_gpu(transcriber)
        self._batch_remote = bool(dask is not None and batched)
        self._batch_handle = handle(batched, portable=self._batch_remote) if batched else None
        self._batch_threads = (ThreadPoolExecutor(1, thread_name_prefix="vocencebench-batch")
                               if batched and not self._batch_remote else None)
        self._batch_pending: list[tuple[int, int, ClipAnalysis, str | None]] = []
        self._batch_in_flight = 0
        self._analysis_pending: deque[tuple[int, int, ClipJob]] = deque()
        self._analysis_in_flight = 0

        # -- synthesis, one stage per side
        self._synth_threads: list[ThreadPoolExecutor] = []
        self._synth_pending: tuple[deque[int], deque[int]] = (deque(), deque())
        self._synth_in_flight = [0, 0]
        self._synth_limit = [1, 1]
        self._synth_remote = [False, False]
        self._synth_handle: list[Handle[Any] | None] = [None, None]
        for s in (0, 1):
            hk = hooks[s]
            want = options.concurrency[s] or hk.concurrency
            if hk.batched and not hk.per_item:
                self._synth_limit[s] = want or 1
                placement = hk.placement or dask.default_placement(systems[s]) if dask else None
                self._synth_remote[s] = placement == "worker"
                if self._synth_remote[s]:
                    _refuse_on_dask(_unpicklable(((f"system {options.labels[s]!r}",
                                                   systems[s]),)),
                                    f"the synthesis of system {options.labels[s]!r} (placement "
                                    "'worker'; set its placement = 'client' to synthesise in "
                                    "this process)")
                self._synth_handle[s] = handle(systems[s], portable=self._synth_remote[s])
            else:
                self._synth_limit[s] = want or 1
            self._synth_threads.append(ThreadPoolExecutor(
                self._synth_limit[s], thread_name_prefix=f"vocencebench-synth-{'ab'[s]}"))
        self._judge_threads = (ThreadPoolExecutor(max(1, options.judge_concurrency),
                                                  thread_name_prefix="vocencebench-judge")
                               if judge is not None else None)
        self._progress = _Progress(options.progress, len(self.items), options.labels,
                                   judge=judge is not None)

    # ------------------------------------------------------------------ the event loop

    def run(self) -> Sequence[PairResult]:
        """Every item's :class:`PairResult`, in corpus order (a tuple, or a
        :class:`~vocencebench.result.PairList` for a large run)."""
        try:
            # Before any item is admitted: the known-answer canaries. An instrument that
            # fails them stops the run (every item incomplete, with that reason); a
            # ConfigError is raised.
            if self.preflight is not None:
                try:
                    self.preflight()
                except ConfigError:
                    raise
                except Exception as exc:
                    self._stop(fail.reason(fail.CANARIES, exc))
            self._admit()
            self._pump()
            while self._in_flight or self._wants_more():
                if not self._in_flight:
                    raise RuntimeError("internal error: the pipeline stalled with "
                                       f"{len(self._open)} items open")  # pragma: no cover
                fn, args, fut = self._q.get()
                self._in_flight.discard(fut)
                try:
                    fn(*args, fut)
                except ConfigError as exc:
                    self._error = exc
                    self._stop(fail.reason("config", exc))
                self._admit()
                self._pump()
            if self._error is not None:
                raise self._error
        except BaseException:  # Ctrl-C, SIGTERM, a ConfigError: stop every stage now
            self._halt.set()
            self._shutdown(now=True)
            raise
        self._shutdown()
        return self._finish()

    def _wants_more(self) -> bool:
        if self._stopped is not None:
            return False
        return bool(self._open) or self._next < len(self.items)

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
            raise _Halted
        try:
            return fn(*args, **kw)
        except BaseException as exc:
            if is_fatal(exc):
                self._halt.set()
            raise

    def _stop(self, reason: str) -> None:
        if self._stopped is not None:
            return
        self._stopped = self.stop_reason = reason
        self._halt.set()
        for fut in list(self._in_flight):
            fut.cancel()
        for d in self._synth_pending:
            d.clear()
        self._analysis_pending.clear()

    def _shutdown(self, *, now: bool = False) -> None:
        """Stop the stage threads; ``now`` (an interrupt) waits for nothing and kills the
        executor's running units (finished work is already in the cache)."""
        for f in list(self._in_flight):
            f.cancel()
        if now:  # a stage thread waiting on a command system would outlive the interrupt
            from ..adapters import kill_running_commands

            kill_running_commands()
        pools = [*self._synth_threads, self._judge_threads, self._batch_threads]
        for pool in pools:
            if pool is not None:
                pool.shutdown(wait=not now, cancel_futures=True)
        self._runner.close(now=now)
        self._progress.stop()

    def timings(self) -> dict[str, float]:
        """Seconds from the start of the run to the first and last event of each stage."""
        out = {f"{k}_s": round(v[1] - v[0], 6) for k, v in sorted(self._spans.items())}
        out["pipeline_s"] = round(time.perf_counter() - self._t0, 6)
        return out

    # ------------------------------------------------------------------------ admission

    def _admit(self) -> None:
        while (self._stopped is None and self._next < len(self.items)
               and len(self._open) < self.opt.window):
            i = self._next
            self._next += 1
            item = self.items[i]
            sides = tuple(_Side(clip_key(self.hooks[s].system_id, item)) for s in (0, 1))
            st = self._open[i] = _Open(i, item, (sides[0], sides[1]))
            for s in (0, 1):
                hit = self.clip_stores[s].get_bytes("clips", st.sides[s].key)
                if hit is not None:
                    self._progress.tick(f"synth {self.opt.labels[s]}")
                    self._clip_ready(i, s, hit[0])
                    if i not in self._open:
                        break
                else:
                    self._synth_pending[s].append(i)

    # ------------------------------------------------------------------------ synthesis

    def _pump(self) -> None:
        if self._stopped is not None:
            return
        for s in (0, 1):
            pend = self._synth_pending[s]
            hk = self.hooks[s]
            if hk.batched and not hk.per_item:
                while pend and self._synth_in_flight[s] < self._synth_limit[s]:
                    if len(pend) < SYNTH_CHUNK and self._synth_in_flight[s] > 0 \
                            and self._next < len(self.items):
                        break  # let the chunk fill while one is running
                    idxs = [pend.popleft() for _ in range(min(SYNTH_CHUNK, len(pend)))]
                    self._submit_synth_batch(s, idxs)
            else:
                while pend:
                    i = pend.popleft()
                    fut = self._synth_threads[s].submit(self._guarded, synthesize_item,
                                                        self.systems[s], self.items[i])
                    self._synth_in_flight[s] += 1
                    self._span("synthesis")
                    self._watch(fut, self._on_synth, s, [i])
        self._pump_analysis()
        self._pump_batch()

    def _submit_synth_batch(self, s: int, idxs: list[int]) -> None:
        h = self._synth_handle[s]
        assert h is not None
        job = SynthJob(h, self.hooks[s].system_id,
                       tuple((self.items[i].text, self.items[i].instruction) for i in idxs))
        if self._synth_remote[s]:
            fut: Future[Any] = self.dask.submit(synthesize, job, gpu=True)
        else:
            fut = self._synth_threads[s].submit(synthesize, job)
        self._synth_in_flight[s] += 1
        self._span("synthesis")
        self._watch(fut, self._on_synth, s, idxs)

    def _on_synth(self, s: int, idxs: list[int], fut: Future[Any]) -> None:
        self._synth_in_flight[s] -= 1
        self._span("synthesis")
        if _skipped(fut):
            return
        exc = fut.exception()
        if exc is not None:
            if isinstance(exc, ConfigError):
                raise exc
            results: list[Any] = [exc] * len(idxs)
        else:
            res = fut.result()
            results = res if isinstance(res, list) else [res]
        for i, r in zip(idxs, results, strict=True):
            if i not in self._open:
                continue
            self._progress.tick(f"synth {self.opt.labels[s]}")
            if isinstance(r, ConfigError):
                raise r
            if isinstance(r, BaseException):
                blame, why = fail.synthesis_failure(r)
                label = self.opt.labels[s]
                item = self.items[i]
                if blame == "instrument":
                    an = ClipAnalysis(item.id, label, instrument_failure=why)
                    if is_fatal(r):
                        self._stop(why)
                else:
                    an = ClipAnalysis(item.id, label, failure=why)
                self._side_done(i, s, an)
                continue
            data = bytes(r)
            st = self._open[i]
            self.clip_stores[s].put_bytes("clips", st.sides[s].key, data,
                                          {"system": self.hooks[s].system_id,
                                           "item": st.item.id})
            self._clip_ready(i, s, data)

    # ------------------------------------------------------------------------- analysis

    def _clip_ready(self, i: int, s: int, data: bytes) -> None:
        st = self._open[i]
        side = st.sides[s]
        item = st.item
        side.clip = Clip.from_bytes(data, name=f"{self.opt.labels[s]}/{item.id}")
        side.sha = side.clip.sha256
        side.keys = _analysis_keys(item, side.sha, self.probes, self.transcriber)
        tkey, pkey = side.keys
        side.part = self.store.get_json("probes", pkey)
        if self.transcriber is not None:
            side.transcript = self.store.get_json("transcripts", tkey)
        need_tr = self.transcriber is not None and side.transcript is None
        if side.part is not None and not need_tr:
            self._progress.tick("analyse")
            self._side_done(i, s, _assemble(item, self.opt.labels[s], side.part,
                                            side.transcript))
            return
        job = ClipJob(item, side.clip, self.opt.labels[s],
                      self._per_clip if side.part is None else None,
                      self._trans if need_tr else None,
                      speech_check=bool(self._batched) and side.part is None)
        self._analysis_pending.append((i, s, job))

    def _clip(self, i: int, s: int) -> Clip:
        """Side ``s`` of open item ``i``'s clip: the one made in :meth:`_clip_ready`."""
        clip = self._open[i].sides[s].clip
        if clip is None:  # pragma: no cover - only a measured side reaches the later stages
            raise RuntimeError(f"internal error: item {i} side {s} has no clip")
        return clip

    def _pump_analysis(self) -> None:
        while self._analysis_pending and self._analysis_in_flight < self._runner.limit:
            i, s, job = self._analysis_pending.popleft()
            fut = self._runner.submit(analyse, job, gpu=self._trans_gpu and
                                      job.transcriber is not None)
            self._analysis_in_flight += 1
            self._span("analyse")
            self._watch(fut, self._on_analysis, i, s)

    def _on_analysis(self, i: int, s: int, fut: Future[Any]) -> None:
        self._analysis_in_flight -= 1
        self._span("analyse")
        if fut.cancelled() or i not in self._open:
            return
        st = self._open[i]
        side = st.sides[s]
        label = self.opt.labels[s]
        exc = fut.exception()
        if exc is not None:
            if isinstance(exc, ConfigError):
                raise exc
            self._progress.tick("analyse")
            why = fail.reason(fail.PROBES, f"{label}: the analysis unit failed: "
                                           f"{fail.exc_text(exc)}")
            if is_fatal(exc):
                self._stop(why)
            self._side_done(i, s, ClipAnalysis(st.item.id, label, sha256=side.sha,
                                               instrument_failure=why))
            return
        out: ClipOutcome = fut.result()
        an = out.analysis
        if an.failure is not None:  # undecodable: the system's failure, never a cached clip
            self.clip_stores[s].delete("clips", side.key)
            side.clip = None
            self._progress.tick("analyse")
            self._side_done(i, s, an)
            return
        tkey, pkey = side.keys
        if self.transcriber is not None and side.transcript is None and an.asr_engine:
            side.transcript = {"text": an.transcript, "engine": an.asr_engine}
            self.store.put_json("transcripts", tkey, side.transcript)
        if an.instrument_failure is not None:
            self._progress.tick("analyse")
            self._side_done(i, s, an)
            return
        if side.part is None:
            if self._batched:
                self._batch_pending.append((i, s, an, out.no_speech))
                return
            side.part = _part(an)
            self.store.put_json("probes", pkey, side.part)
        self._progress.tick("analyse")
        self._side_done(i, s, _assemble(st.item, label, side.part, side.transcript))

    # -------------------------------------------------------------------- batched probes

    def _pump_batch(self) -> None:
        if not self._batch_pending or self._stopped is not None:
            return
        upstream_idle = not self._analysis_pending and self._analysis_in_flight == 0
        while self._batch_pending and (len(self._batch_pending) >= BATCH_CLIPS or (
                self._batch_in_flight == 0 and upstream_idle)):
            take = self._batch_pending[:BATCH_CLIPS]
            del self._batch_pending[:BATCH_CLIPS]
            self._submit_batch(take)

    def _submit_batch(self, take: list[tuple[int, int, ClipAnalysis, str | None]]) -> None:
        run = [(i, s, an) for i, s, an, no_speech in take if no_speech is None]
        fill = [(i, s, an, no_speech) for i, s, an, no_speech in take if no_speech is not None]
        for i, s, an, no_speech in fill:  # no speech: every batched trait is unmeasurable
            assert no_speech is not None
            assert self.probes is not None  # batched probes come from the probe set
            try:
                extra = dict(self.probes.unmeasurable_results(self.items[i], no_speech,
                                                              traits=self._batched_traits))
            except ConfigError:
                raise
            except Exception as exc:  # the probe set's own error: the instrument's
                self._progress.tick("analyse")
                self._side_done(i, s, replace(an, instrument_failure=fail.reason(
                    fail.PROBES, f"{self.opt.labels[s]}: {fail.exc_text(exc)}")))
                continue
            self._batch_done(i, s, an, extra)
        if not run:
            return
        keep = run
        assert self._batch_handle is not None
        # The sides' own clips: decoded already when the analysis ran in this process.
        job = BatchJob(self._batch_handle, tuple(self.items[i] for i, _, _ in keep),
                       tuple(self._clip(i, s) for i, s, _ in keep))
        if self._batch_remote:
            fut: Future[Any] = self.dask.submit(measure, job, gpu=True)
        else:
            assert self._batch_threads is not None
            fut = self._batch_threads.submit(measure, job)
        self._batch_in_flight += 1
        self._span("batch_probes")
        self._watch(fut, self._on_batch, keep)

    def _on_batch(self, keep: list[tuple[int, int, ClipAnalysis]], fut: Future[Any]) -> None:
        self._batch_in_flight -= 1
        self._span("batch_probes")
        if fut.cancelled():
            return
        exc = fut.exception()
        if exc is not None:
            if isinstance(exc, ConfigError):
                raise exc
            why = fail.reason(fail.PROBES, exc)
            if is_fatal(exc):
                self._stop(why)
            for i, s, an in keep:
                if i in self._open:
                    self._progress.tick("analyse")
                    self._side_done(i, s, replace(an, instrument_failure=why))
            return
        for (i, s, an), extra in zip(keep, fut.result(), strict=True):
            if i in self._open:
                self._batch_done(i, s, an, extra)

    def _batch_done(self, i: int, s: int, an: ClipAnalysis,
                    extra: Mapping[str, ProbeResult]) -> None:
        st = self._open[i]
        side = st.sides[s]
        assert self.probes is not None  # batched probes come from the probe set
        merged = replace(an, probes=_merge_results(self.probes, [an.probes, extra]))
        side.part = _part(merged)
        self.store.put_json("probes", side.keys[1], side.part)
        self._progress.tick("analyse")
        self._side_done(i, s, _assemble(st.item, self.opt.labels[s], side.part,
                                        side.transcript))

    # ---------------------------------------------------------------------------- judge

    def _side_done(self, i: int, s: int, an: ClipAnalysis) -> None:
        st = self._open[i]
        st.sides[s].analysis = an
        if self.judge is None:  # nothing after the analysis needs the clip: free it now
            st.sides[s].clip = None
        a, b = st.sides[0].analysis, st.sides[1].analysis
        if a is None or b is None:
            return
        if self.judge is None or not needs_judge(a, b):
            self._close(i)
            return
        if self._stopped is not None:  # a fatal error: nothing more is asked of the judge
            st.jfail.update(dict.fromkeys(self.opt.registry.judged_dimensions(),
                                          self._stopped))
            self._close(i)
            return
        clip_a, clip_b = self._clip(i, 0), self._clip(i, 1)
        dims = self.opt.registry.judged_dimensions()
        jobs = [tuple(dims)] if self.opt.all_at_once else [(d,) for d in dims]
        assert self._judge_threads is not None
        self._progress.grow("judge", len(jobs))
        st.judge_left = len(jobs)
        for ds in jobs:
            fut = self._judge_threads.submit(
                self._guarded, judge_pair, self.judge, st.item, clip_a, clip_b, ds,
                all_at_once=self.opt.all_at_once, consistent=self.opt.consistent,
                votes=self.opt.votes)
            self._span("judge")
            self._watch(fut, self._on_verdicts, i, ds)

    def _on_verdicts(self, i: int, ds: tuple[str, ...], fut: Future[Any]) -> None:
        self._span("judge")
        st = self._open.get(i)
        if st is None:
            return
        st.judge_left -= 1
        self._progress.tick("judge")
        if _skipped(fut):
            st.jfail.update(dict.fromkeys(ds, self._stopped or fail.reason(fail.JUDGE,
                                                                            "cancelled")))
        else:
            exc = fut.exception()
            if exc is not None:
                if isinstance(exc, ConfigError):
                    raise exc
                why = fail.reason(fail.JUDGE, f"{'+'.join(ds)}: {fail.exc_text(exc)}")
                st.jfail.update(dict.fromkeys(ds, why))
                if is_fatal(exc):
                    self._stop(why)
            else:
                got: Mapping[str, Verdict] = fut.result()
                for d in ds:
                    v = got.get(d)
                    if isinstance(v, Verdict):
                        st.verdicts[d] = v
                    else:
                        st.jfail[d] = fail.reason(fail.JUDGE,
                                                  f"{d}: the judge returned no verdict")
        if st.judge_left == 0:
            self._close(i)

    # ---------------------------------------------------------------------------- close

    def _close(self, i: int) -> None:
        st = self._open.pop(i)
        for side in st.sides:  # memory stays bounded by the items open
            side.clip = None
        a, b = st.sides[0].analysis, st.sides[1].analysis
        assert a is not None and b is not None
        self._keep(i, combine(st.item, a, b, st.verdicts, labels=self.opt.labels,
                              judge_failures=st.jfail, registry=self.opt.registry,
                              dimensions=self.opt.dimensions))
        self._progress.tick("items")

    def _keep(self, i: int, pair: PairResult) -> None:
        if self._spill is not None:
            self._spill.put(i, pair)
        else:
            self._results[i] = pair

    def _done(self, i: int) -> bool:
        if self._spill is not None:
            return self._spill.filled(i)
        return self._results[i] is not None

    def _finish(self) -> Sequence[PairResult]:
        """Results in corpus order; an item the run did not finish is incomplete, with the
        reason that stopped the run."""
        why = self._stopped or fail.reason("run", "not finished")
        for i, item in enumerate(self.items):
            if self._done(i):
                continue
            st = self._open.get(i)
            ans = []
            for s in (0, 1):
                an = st.sides[s].analysis if st is not None else None
                if an is None:
                    an = ClipAnalysis(item.id, self.opt.labels[s],
                                      sha256=st.sides[s].sha if st else None)
                ans.append(replace(an, instrument_failure=an.instrument_failure or why))
            self._keep(i, combine(item, ans[0], ans[1], st.verdicts if st else {},
                                  labels=self.opt.labels,
                                  judge_failures=st.jfail if st else {},
                                  registry=self.opt.registry, dimensions=self.opt.dimensions))
        if self._spill is not None:
            return self._spill
        return tuple(p for p in self._results if p is not None)


# ----------------------------------------------------------------------------- helpers


class _Halted(Exception):
    """A unit that did not start because the run is halting (a fatal error)."""


def _skipped(fut: Future[Any]) -> bool:
    return fut.cancelled() or isinstance(fut.exception(), _Halted)


def _unpicklable(components: Sequence[tuple[str, object]]) -> list[str]:
    """For each component that does not pickle (so cannot run in another process): what it
    is and why; for a probe set (or a tuple of probes), the probe that is the cause."""
    out = []
    for what, obj in components:
        why = None if obj is None else pickle_problem(obj)
        if why is None:
            continue
        name = f"{what} {type(obj).__qualname__}"
        if what == "probe set":
            members = obj if isinstance(obj, tuple) else (
                *getattr(obj, "probes", ()), *getattr(obj, "diagnostics", ()))
            for p in members:
                cause = pickle_problem(p)
                if cause is not None:
                    name, why = f"probe {p.name}@{p.version}", cause
                    break
        elif what == "transcriber":
            name = f"transcriber {getattr(obj, 'engine', type(obj).__qualname__)}"
        out.append(f"{name} cannot be pickled ({why})")
    return out


def _refuse_on_dask(stuck: Sequence[str], work: str) -> None:
    """A Dask run sends ``work`` to the workers; a component that cannot travel is refused,
    never run quietly in the client instead (the run would claim work it did not do)."""
    if stuck:
        raise ConfigError(
            f"the Dask executor runs {work} on its workers, but {'; '.join(stuck)}: make it "
            "picklable (a module-level class holding no lambda, open file, lock or client), "
            "or run with --executor local (executor='local')")


def _split_batched(probes: ProbeSuite | None
                   ) -> tuple[ProbeSuite | None, tuple[BatchedProbe, ...]]:
    """(probes that run per clip on the executor, probes with ``measure_batch`` that run
    batched in one place — the model-backed classifiers, one model copy)."""
    if probes is None:
        return None, ()
    batched = tuple(p for p in probes.probes if isinstance(p, BatchedProbe))
    if not batched:
        return probes, ()
    # The same set (its class, registry, diagnostics and speech check) without the batched
    # probes: a copy whose probe tuple is the per-clip ones.
    per_clip = copy.copy(probes)
    per_clip.probes = tuple(p for p in probes.probes if all(p is not q for q in batched))
    return per_clip, batched


def _merge_results(probes: ProbeSuite, results: Sequence[Mapping[str, ProbeResult]]
                   ) -> dict[str, ProbeResult]:
    """Per trait, the result of the latest probe in ``probes`` (ProbeSet priority)."""
    rank = {pid: k for k, pid in enumerate(probes.ids)}
    best: dict[str, ProbeResult] = {}
    for res in results:
        for trait, r in res.items():
            if trait not in best or rank.get(r.probe, -1) >= rank.get(best[trait].probe, -1):
                best[trait] = r
    return {t: best[t] for t in probes.registry.names() if t in best}


def _analysis_keys(item: Item, sha: str, probes: ProbeSuite | None,
                   transcriber: Transcriber | None) -> tuple[str, str]:
    tkey = cache_key({"audio": sha, "engine": getattr(transcriber, "engine", None)})
    pkey = cache_key({"audio": sha, "probes": list(probes.ids) if probes else [],
                      "request": item.traits, "text": item.text})
    return tkey, pkey


def _part(an: ClipAnalysis) -> dict[str, Any]:
    """The cached probe part of an analysis (everything but the transcript)."""
    return {"sha256": an.sha256, "duration": an.duration, "notes": list(an.notes),
            "quality": an.quality,
            "probes": {k: v.to_dict(versioned=False) for k, v in an.probes.items()}}


def _assemble(item: Item, label: str, part: Mapping[str, Any],
              transcript: Mapping[str, Any] | None) -> ClipAnalysis:
    """A clip's analysis from its cached probe part and (optional) cached transcript: the
    same record whether it was just measured or read back on resume."""
    wer = gate = None
    text = engine = None
    if transcript is not None:
        from ..transcribe import Transcript, score_transcript

        tr = Transcript(str(transcript["text"]), str(transcript["engine"]))
        res = score_transcript(item.text, tr)
        text, engine, wer, gate = tr.text, tr.engine, res.wer, res.gate
    return ClipAnalysis(
        item.id, label, sha256=part["sha256"], duration=part["duration"],
        transcript=text, asr_engine=engine, wer=wer, gate=gate,
        probes={k: ProbeResult.from_dict(v) for k, v in part["probes"].items()},
        quality=dict(part.get("quality", {})),
        notes=tuple(part.get("notes", ())),
    )

