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

import logging
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, replace
from typing import Any

from .._util import failures as fail
from ..adapters import SystemHooks, kill_running_commands, synthesize_item
from ..audio import Clip
from ..cache import Cache, clip_key, failed_clip_key
from ..errors import ConfigError, is_fatal
from ..judge import PairJudge
from ..pair import (
    ClipAnalysis,
    PairResult,
    combine,
    judge_failure,
    judge_jobs,
    judge_pair,
    needs_judge,
    read_verdicts,
)
from ..probes.base import BatchedProbe, ProbeSuite, merge_results
from ..schema import Item, ProbeResult
from ..traits import TraitRegistry
from ..transcribe import Transcriber
from .records import OpenItem, Results, Side, analysis_keys, assemble, probe_identity, probe_part
from .stages import (
    BatchJob,
    ClipJob,
    ClipOutcome,
    Handle,
    SynthJob,
    analyse,
    handle,
    measure,
    synthesize,
)
from .stopping import JudgeSchedule
from .support import (
    EventLoop,
    ProgressBars,
    Runner,
    analysis_placement,
    skipped,
    synth_lane,
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
    stop_when_decided: bool = False


class Engine(EventLoop):
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
        self._probe_identity = probe_identity(probes)
        self.transcriber = transcriber
        self.judge = judge
        self.store = store
        self.clip_stores = clip_stores
        self.dask = dask
        self.preflight = preflight
        super().__init__()
        # Small runs keep their pairs in memory; large ones spill each to disk as it closes.
        self._results = Results(len(self.items), spill=len(self.items) > SPILL_PAIRS)
        self._open: dict[int, OpenItem] = {}
        self._next = 0

        # -- probes: per-clip part (executor) and batched part (one model copy)
        per_clip, batched = probes.split_batched() if probes is not None else (None, ())
        self._batched: tuple[BatchedProbe, ...] = batched
        self._batched_traits = tuple(t for p in batched for t in p.traits)
        #: Status lines about where work runs that differ from what the executor promises
        #: (the run's metadata and summary show them).
        self.notes: list[str] = []
        in_process, note = analysis_placement(per_clip, batched, transcriber, executor, dask)
        if note is not None:
            log.warning("%s", note)
            self.notes.append(note)
        gpu = dask.gpu_resources() if dask is not None else None
        self._runner = Runner(executor, in_process=in_process, gpu=gpu)
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
            self._synth_limit[s], self._synth_remote[s], self._synth_handle[s] = synth_lane(
                systems[s], hooks[s], options.labels[s], options.concurrency[s], dask)
            self._synth_threads.append(ThreadPoolExecutor(
                self._synth_limit[s], thread_name_prefix=f"vocencebench-synth-{'ab'[s]}"))
        self._judge_threads = (ThreadPoolExecutor(max(1, options.judge_concurrency),
                                                  thread_name_prefix="vocencebench-judge")
                               if judge is not None else None)
        self._progress = ProgressBars(options.progress, len(self.items), options.labels,
                                       judge=judge is not None)
        # stop_when_decided: every pair is measured first and parked; the schedule releases
        # them to the judge batch by batch until the verdict is certain (stopping.py).
        self._schedule = (JudgeSchedule(len(self.items), options.labels)
                          if options.stop_when_decided and judge is not None else None)

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
            self._serve()
        except BaseException:  # Ctrl-C, SIGTERM, a ConfigError: stop every stage now
            self._halt.set()
            self._shutdown(now=True)
            raise
        self._shutdown()
        return self._finish()

    def _wants_more(self) -> bool:
        if self._stopped is not None:
            return False
        return (bool(self._open) or self._next < len(self.items)
                or (self._schedule is not None and self._schedule.pending))

    def _next_work(self) -> None:
        self._admit()
        self._pump()
        self._release()

    def early_stopping(self) -> dict[str, Any] | None:
        """The record of a ``stop_when_decided`` run (None for any other run)."""
        if self._schedule is None:
            return None
        return self._schedule.record(halted=self._stopped)

    def _stalled(self) -> str:  # pragma: no cover - an internal error
        return f"{len(self._open)} items open"

    def _stop(self, reason: str) -> None:
        if self._stopped is not None:
            return
        super()._stop(reason)
        for d in self._synth_pending:
            d.clear()
        self._analysis_pending.clear()

    def _shutdown(self, *, now: bool = False) -> None:
        """Stop the stage threads; ``now`` (an interrupt) waits for nothing and kills the
        executor's running units (finished work is already in the cache)."""
        for f in list(self._in_flight):
            if not (now and self._runner.owns(f)):  # those the runner's abort stops below
                f.cancel()
        if now:  # a stage thread waiting on a command system would outlive the interrupt
            kill_running_commands()
        pools = [*self._synth_threads, self._judge_threads, self._batch_threads]
        for pool in pools:
            if pool is not None:
                pool.shutdown(wait=not now, cancel_futures=True)
        self._runner.close(now=now)
        self._progress.stop()

    # ------------------------------------------------------------------------ admission

    def _admit(self) -> None:
        while (self._stopped is None and self._next < len(self.items)
               and len(self._open) < self.opt.window):
            i = self._next
            self._next += 1
            item = self.items[i]
            sides = tuple(Side(clip_key(self.hooks[s].system_id, item)) for s in (0, 1))
            st = self._open[i] = OpenItem(i, item, (sides[0], sides[1]))
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
        if skipped(fut):
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
        side.keys = analysis_keys(item, side.sha, self.probes, self.transcriber,
                                  identity=self._probe_identity)
        tkey, pkey = side.keys
        side.part = self.store.get_json("probes", pkey)
        if self.transcriber is not None:
            side.transcript = self.store.get_json("transcripts", tkey)
        need_tr = self.transcriber is not None and side.transcript is None
        if side.part is not None and not need_tr:
            self._progress.tick("analyse")
            self._side_done(i, s, assemble(item, self.opt.labels[s], side.part,
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
        if an.failure is not None:  # unusable audio: the system's failure, never a cached clip
            store = self.clip_stores[s]
            if side.clip is not None:  # kept aside for the report's ears only
                store.put_bytes("clips", failed_clip_key(self.hooks[s].system_id, st.item),
                                side.clip.data, {"system": self.hooks[s].system_id,
                                                 "item": st.item.id, "failed": True})
            store.delete("clips", side.key)
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
            side.part = probe_part(an)
            self.store.put_json("probes", pkey, side.part)
        self._progress.tick("analyse")
        self._side_done(i, s, assemble(st.item, label, side.part, side.transcript))

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
        merged = replace(an, probes=merge_results([an.probes, extra], self.probes.ids,
                                                  self.probes.registry.names()))
        side.part = probe_part(merged)
        self.store.put_json("probes", side.keys[1], side.part)
        self._progress.tick("analyse")
        self._side_done(i, s, assemble(st.item, self.opt.labels[s], side.part,
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
        if self._schedule is not None and not self._schedule.released(i):
            self._park(i, st, a, b)
            return
        self._judge(i, st)

    def _park(self, i: int, st: OpenItem, a: ClipAnalysis, b: ClipAnalysis) -> None:
        """Hold a measured pair for the judge schedule: out of the window (its clips are
        dropped and read back from the clip store when it is released)."""
        assert self._schedule is not None
        pair = self._combine(st.item, a, b, st, unjudged=True)
        del self._open[i]
        for side in st.sides:
            side.clip = None
        if pair.incomplete is not None:  # no verdict could complete it: close it as it is
            self._put(i, pair)
            return
        self._schedule.park(i, st, pair)

    def _release(self) -> None:
        """Between batches (nothing open, every item admitted): the next batch to the judge,
        or, once the verdict is certain, every parked pair closed unjudged."""
        sch = self._schedule
        if (sch is None or not sch.pending or self._stopped is not None or self._open
                or self._next < len(self.items)):
            return
        batch = sch.next_batch()
        for i in batch:
            st = self._open[i] = sch.release(i)
            for s in (0, 1):
                hit = self.clip_stores[s].get_bytes("clips", st.sides[s].key)
                if hit is None:  # the clip store lost it: the judge cannot hear it
                    st.jfail.update(dict.fromkeys(self.opt.registry.judged_dimensions(),
                                                  fail.reason(fail.JUDGE, "the clip is no "
                                                              "longer in the clip store")))
                    break
                st.sides[s].clip = Clip.from_bytes(hit[0], name=f"{self.opt.labels[s]}/"
                                                                f"{st.item.id}")
            if st.jfail:
                self._close(i)
            else:
                self._judge(i, st)
        if not batch:
            for i, pair in sch.unjudged():
                self._results.put(i, pair)
                self._progress.tick("items")

    def _judge(self, i: int, st: OpenItem) -> None:
        clip_a, clip_b = self._clip(i, 0), self._clip(i, 1)
        jobs = judge_jobs(self.opt.registry, all_at_once=self.opt.all_at_once)
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
        if skipped(fut):
            st.jfail.update(dict.fromkeys(ds, self._stopped or fail.reason(fail.JUDGE,
                                                                            "cancelled")))
        else:
            exc = fut.exception()
            if exc is not None:
                if isinstance(exc, ConfigError):
                    raise exc
                why = judge_failure(ds, exc)
                st.jfail.update(dict.fromkeys(ds, why))
                if is_fatal(exc):
                    self._stop(why)
            else:
                verdicts, missing = read_verdicts(ds, fut.result())
                st.verdicts.update(verdicts)
                st.jfail.update(missing)
        if st.judge_left == 0:
            self._close(i)

    # ---------------------------------------------------------------------------- close

    def _close(self, i: int) -> None:
        st = self._open.pop(i)
        for side in st.sides:  # memory stays bounded by the items open
            side.clip = None
        a, b = st.sides[0].analysis, st.sides[1].analysis
        assert a is not None and b is not None
        self._put(i, self._combine(st.item, a, b, st))

    def _put(self, i: int, pair: PairResult) -> None:
        self._results.put(i, pair)
        if self._schedule is not None:
            self._schedule.closed(i, pair)
        self._progress.tick("items")

    def _combine(self, item: Item, a: ClipAnalysis, b: ClipAnalysis, st: OpenItem | None,
                 *, unjudged: bool = False) -> PairResult:
        return combine(item, a, b, st.verdicts if st else {}, labels=self.opt.labels,
                       judge_failures=st.jfail if st else {}, registry=self.opt.registry,
                       dimensions=self.opt.dimensions, unjudged=unjudged)

    def _finish(self) -> Sequence[PairResult]:
        """Results in corpus order; an item the run did not finish is incomplete, with the
        reason that stopped the run."""
        why = self._stopped or fail.reason("run", "not finished")
        for i, item in enumerate(self.items):
            if self._results.filled(i):
                continue
            st = self._open.get(i)
            if st is None and self._schedule is not None:  # parked when the run stopped
                st = self._schedule.state(i)
            ans = []
            for s in (0, 1):
                an = st.sides[s].analysis if st is not None else None
                if an is None:
                    an = ClipAnalysis(item.id, self.opt.labels[s],
                                      sha256=st.sides[s].sha if st else None)
                ans.append(replace(an, instrument_failure=an.instrument_failure or why))
            self._results.put(i, self._combine(item, ans[0], ans[1], st))
        return self._results.out()
